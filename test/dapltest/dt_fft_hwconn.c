/*
 * dapltest -T F -f hwconn: opening and closing the IA ("hardware
 * connection").  Cases 0-3 are OpenFabrics' list; 4 and 5 are ours.
 */
#include <string.h>

#include "dt_lf_fft.h"

#define NOT_REGISTERED \
	DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED)

static void open_close(struct dt_fft_ctx *ctx)
{
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;

	if (!DT_CHECK_RC(ctx, "dat_ia_open", dat_ia_open(ctx->common.ia_name,
			 DT_QLEN, &async, &ia), DAT_SUCCESS))
		return;
	DT_CHECK(ctx, async != DAT_HANDLE_NULL,
		 "dat_ia_open created the asynchronous EVD");
	DT_CHECK_RC(ctx, "dat_ia_close (abrupt)",
		    dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), DAT_SUCCESS);

	/* and once more, closing gracefully: nothing but the async EVD */
	async = DAT_HANDLE_NULL;
	if (!DT_CHECK_RC(ctx, "dat_ia_open (again)",
			 dat_ia_open(ctx->common.ia_name, DT_QLEN, &async,
				     &ia), DAT_SUCCESS))
		return;
	DT_CHECK_RC(ctx, "dat_ia_close (graceful)",
		    dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
}

static void bad_names(struct dt_fft_ctx *ctx)
{
	/* OpenFabrics' names: a number, a letter, letters, letter+number,
	 * number+letter; then the IA's own name with a character more */
	static const char *const names[] = { "40", "x", "xsdf", "x34", "34df" };
	char longer[DAT_NAME_MAX_LENGTH + 8];
	char too_long[DAT_NAME_MAX_LENGTH + 1];
	DAT_EVD_HANDLE async;
	DAT_IA_HANDLE ia;
	char call[DAT_NAME_MAX_LENGTH + 32];
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(call, sizeof(call), "dat_ia_open(\"%s\")", names[i]);
		async = DAT_HANDLE_NULL;
		DT_CHECK_RC(ctx, call, dat_ia_open((DAT_NAME_PTR)names[i],
			    DT_QLEN, &async, &ia), NOT_REGISTERED);
	}
	snprintf(longer, sizeof(longer), "%sX", ctx->common.ia_name);
	async = DAT_HANDLE_NULL;
	DT_CHECK_RC(ctx, "dat_ia_open(<IA name>\"X\")",
		    dat_ia_open(longer, DT_QLEN, &async, &ia),
		    NOT_REGISTERED);

	/* names the registry cannot hold at all */
	async = DAT_HANDLE_NULL;
	DT_CHECK_RC(ctx, "dat_ia_open(\"\")",
		    dat_ia_open((DAT_NAME_PTR)"", DT_QLEN, &async, &ia),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1));
	async = DAT_HANDLE_NULL;
	DT_CHECK_RC(ctx, "dat_ia_open(NULL)",
		    dat_ia_open(NULL, DT_QLEN, &async, &ia),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1));
	memset(too_long, 'x', sizeof(too_long) - 1);
	too_long[sizeof(too_long) - 1] = '\0';
	async = DAT_HANDLE_NULL;
	DT_CHECK_RC(ctx, "dat_ia_open(<256 characters>)",
		    dat_ia_open(too_long, DT_QLEN, &async, &ia),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1));
}

static void close_bad_handle(struct dt_fft_ctx *ctx)
{
	static const DAT_RETURN bad_ia =
		DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;

	DT_CHECK_RC(ctx, "dat_ia_close(NULL, abrupt)",
		    dat_ia_close(DAT_HANDLE_NULL, DAT_CLOSE_ABRUPT_FLAG),
		    bad_ia);
	DT_CHECK_RC(ctx, "dat_ia_close(NULL, graceful)",
		    dat_ia_close(DAT_HANDLE_NULL, DAT_CLOSE_GRACEFUL_FLAG),
		    bad_ia);

	if (!DT_CHECK_RC(ctx, "dat_ia_open", dat_ia_open(ctx->common.ia_name,
			 DT_QLEN, &async, &ia), DAT_SUCCESS))
		return;
	/* a flag that is neither: refused, and the IA stays open */
	DT_CHECK_RC(ctx, "dat_ia_close(ia, 7)",
		    dat_ia_close(ia, (DAT_CLOSE_FLAGS)7),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
	DT_CHECK_RC(ctx, "dat_ia_close (graceful)",
		    dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
	/* nothing was opened since, so the number is still dead */
	DT_CHECK_RC(ctx, "dat_ia_close (already closed)",
		    dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), bad_ia);
}

static void close_with_ep(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_EVD_HANDLE async;
	DAT_IA_ATTR attr;
	DAT_EP_PARAM ep_param;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP)) {
		dt_kit_close(ctx, &kit);
		return;
	}
	DT_CHECK_RC(ctx, "dat_ia_close (graceful, EP left)",
		    dat_ia_close(kit.ia, DAT_CLOSE_GRACEFUL_FLAG),
		    DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE));
	/* refused, so everything is still there */
	DT_CHECK_RC(ctx, "dat_ia_query (after the refusal)",
		    dat_ia_query(kit.ia, &async, DAT_IA_FIELD_IA_MAX_EPS,
				 &attr, DAT_PROVIDER_FIELD_NONE, NULL),
		    DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_ep_query (after the refusal)",
		    dat_ep_query(kit.ep, DAT_EP_FIELD_EP_STATE, &ep_param),
		    DAT_SUCCESS);
	/* abrupt takes everything with it (OpenFabrics leaked the EP here;
	 * the close must not) */
	if (DT_CHECK_RC(ctx, "dat_ia_close (abrupt, EP left)",
			dat_ia_close(kit.ia, DAT_CLOSE_ABRUPT_FLAG),
			DAT_SUCCESS))
		DT_CHECK_RC(ctx, "dat_ia_query (closed IA)",
			    dat_ia_query(kit.ia, &async,
					 DAT_IA_FIELD_IA_MAX_EPS, &attr,
					 DAT_PROVIDER_FIELD_NONE, NULL),
			    DAT_ERROR(DAT_INVALID_HANDLE,
				      DAT_INVALID_HANDLE_IA));
}

static void open_twice(struct dt_fft_ctx *ctx)
{
	DAT_EVD_HANDLE async1 = DAT_HANDLE_NULL, async2 = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia1, ia2;
	DAT_PZ_HANDLE pz;

	if (!DT_CHECK_RC(ctx, "dat_ia_open #1", dat_ia_open(
			 ctx->common.ia_name, DT_QLEN, &async1, &ia1),
			 DAT_SUCCESS))
		return;
	if (!DT_CHECK_RC(ctx, "dat_ia_open #2", dat_ia_open(
			 ctx->common.ia_name, DT_QLEN, &async2, &ia2),
			 DAT_SUCCESS)) {
		DT_CHECK_RC(ctx, "dat_ia_close #1",
			    dat_ia_close(ia1, DAT_CLOSE_GRACEFUL_FLAG),
			    DAT_SUCCESS);
		return;
	}
	DT_CHECK(ctx, ia1 != ia2 && async1 != async2,
		 "two opens give two IAs with their own async EVDs");
	/* closing one leaves the other working */
	DT_CHECK_RC(ctx, "dat_ia_close #1",
		    dat_ia_close(ia1, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
	if (DT_CHECK_RC(ctx, "dat_pz_create on #2",
			dat_pz_create(ia2, &pz), DAT_SUCCESS))
		DT_CHECK_RC(ctx, "dat_pz_free", dat_pz_free(pz), DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_ia_close #2",
		    dat_ia_close(ia2, DAT_CLOSE_GRACEFUL_FLAG), DAT_SUCCESS);
}

static void open_null_outputs(struct dt_fft_ctx *ctx)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;

	DT_CHECK_RC(ctx, "dat_ia_open(async_evd_handle NULL)",
		    dat_ia_open(ctx->common.ia_name, DT_QLEN, NULL, &ia),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
	DT_CHECK_RC(ctx, "dat_ia_open(ia_handle NULL)",
		    dat_ia_open(ctx->common.ia_name, DT_QLEN, &async, NULL),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4));
}

static const struct dt_fft_case cases[] = {
	{ "Test if we can normally Open NIC and then close it "
	  "(abruptly, then gracefully)", open_close },
	{ "try to open NIC with incorrect device name (just num, one "
	  "letter, multiple letter, num_letter, letter_num, a longer name) "
	  "and with names no registry can hold (empty, NULL, 256 "
	  "characters)", bad_names },
	{ "Try to close nic with Nic handle is null (NIC not open), with "
	  "a bad flag, and twice", close_bad_handle },
	{ "Test if we can close NIC when the created endpoint has not been "
	  "destroyed: graceful refuses, abrupt frees it all", close_with_ep },
	{ "Open the same NIC twice: two independent IAs", open_twice },
	{ "Open NIC with NULL output pointers", open_null_outputs },
};

const struct dt_fft_feature dt_fft_hwconn = {
	.name = "hwconn",
	.title = "Hardware connection",
	.cases = cases,
	.ncases = sizeof(cases) / sizeof(cases[0]),
};
