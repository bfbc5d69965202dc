/*
 * dapltest -T F -f pz: protection zones.  Cases 0-2 are OpenFabrics'
 * list; 3 and 4 are ours.
 */
#include <stdlib.h>
#include <string.h>

#include "dt_lf_fft.h"

#define PZ_IN_USE DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE)

static void create_free(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_PZ_HANDLE pz;
	DAT_PZ_PARAM param;

	if (!dt_kit_open(ctx, &kit, 0))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_pz_create", dat_pz_create(kit.ia, &pz),
			 DAT_SUCCESS))
		goto out;
	if (DT_CHECK_RC(ctx, "dat_pz_query",
			dat_pz_query(pz, DAT_PZ_FIELD_ALL, &param),
			DAT_SUCCESS))
		DT_CHECK(ctx, param.ia_handle == kit.ia,
			 "dat_pz_query names our IA");
	DT_CHECK_RC(ctx, "dat_pz_free", dat_pz_free(pz), DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

static void free_with_ep(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP))
		goto out;
	DT_CHECK_RC(ctx, "dat_pz_free (EP on it)", dat_pz_free(kit.pz),
		    PZ_IN_USE);
	/* after the EP, the PZ goes (the correct order) */
	if (DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(kit.ep), DAT_SUCCESS))
		kit.ep = DAT_HANDLE_NULL;
out:
	dt_kit_close(ctx, &kit);
}

static void free_with_lmr(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr;
	void *buf = malloc(DT_BUFSZ);

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ) ||
	    !DT_CHECK(ctx, buf != NULL, "malloc(%d)", DT_BUFSZ))
		goto out;
	memset(&region, 0, sizeof(region));
	region.for_va = buf;
	if (!DT_CHECK_RC(ctx, "dat_lmr_create",
			 dat_lmr_create(kit.ia, DAT_MEM_TYPE_VIRTUAL, region,
					DT_BUFSZ, kit.pz, DAT_MEM_PRIV_ALL_FLAG,
					&lmr, NULL, NULL, NULL, NULL),
			 DAT_SUCCESS))
		goto out;
	DT_CHECK_RC(ctx, "dat_pz_free (LMR on it)", dat_pz_free(kit.pz),
		    PZ_IN_USE);
	DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr), DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
	free(buf);
}

static void free_with_rmr(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_RMR_HANDLE rmr;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_rmr_create", dat_rmr_create(kit.pz, &rmr),
			 DAT_SUCCESS))
		goto out;
	DT_CHECK_RC(ctx, "dat_pz_free (RMR on it)", dat_pz_free(kit.pz),
		    PZ_IN_USE);
	DT_CHECK_RC(ctx, "dat_rmr_free", dat_rmr_free(rmr), DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

static void bad_handles(struct dt_fft_ctx *ctx)
{
	static const DAT_RETURN bad_pz =
		DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	struct dt_kit kit;
	DAT_PZ_HANDLE pz;

	DT_CHECK_RC(ctx, "dat_pz_free(NULL)", dat_pz_free(DAT_HANDLE_NULL),
		    bad_pz);
	if (!dt_kit_open(ctx, &kit, DT_KIT_EVDS))
		goto out;
	DT_CHECK_RC(ctx, "dat_pz_create(ia, NULL)",
		    dat_pz_create(kit.ia, NULL),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
	DT_CHECK_RC(ctx, "dat_pz_free(an EVD)", dat_pz_free(kit.recv_evd),
		    bad_pz);
	if (!DT_CHECK_RC(ctx, "dat_pz_create", dat_pz_create(kit.ia, &pz),
			 DAT_SUCCESS))
		goto out;
	DT_CHECK_RC(ctx, "dat_pz_free", dat_pz_free(pz), DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_pz_free (again)", dat_pz_free(pz), bad_pz);
out:
	dt_kit_close(ctx, &kit);
}

static const struct dt_fft_case cases[] = {
	{ "Test if we can normally create pz and destroy it",
	  create_free },
	{ "try to destroy pz with vi still associated with it",
	  free_with_ep },
	{ "try to destroy pz with registered memory still associated with "
	  "it", free_with_lmr },
	{ "try to destroy pz with a memory window (RMR) still associated "
	  "with it", free_with_rmr },
	{ "try to create and destroy pz with bad handles and pointers",
	  bad_handles },
};

const struct dt_fft_feature dt_fft_pz = {
	.name = "pz",
	.title = "Protection Zone management",
	.cases = cases,
	.ncases = sizeof(cases) / sizeof(cases[0]),
};
