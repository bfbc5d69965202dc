/*
 * dapltest -T F -f mem: registering and deregistering memory (LMRs).
 * Cases 0-4 are OpenFabrics' list; 5-7 are ours.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "dt_lf_fft.h"

#define BAD_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)

static DAT_RETURN reg(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, void *va,
		      DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv,
		      DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lmr_context,
		      DAT_RMR_CONTEXT *rmr_context, DAT_VLEN *reg_len,
		      DAT_VADDR *reg_addr)
{
	DAT_REGION_DESCRIPTION region;

	memset(&region, 0, sizeof(region));
	region.for_va = va;
	return dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, len, pz, priv,
			      lmr, lmr_context, rmr_context, reg_len,
			      reg_addr);
}

/* Registers [va, +len) and checks what comes back, then frees it. */
static void reg_check_free(struct dt_fft_ctx *ctx, struct dt_kit *kit,
			   void *va, DAT_VLEN len, const char *what)
{
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_CONTEXT rmr_context;
	DAT_VLEN reg_len = 0;
	DAT_VADDR reg_addr = 0;
	DAT_LMR_PARAM param;
	char call[128];

	snprintf(call, sizeof(call), "dat_lmr_create (%s)", what);
	if (!DT_CHECK_RC(ctx, call, reg(kit->ia, kit->pz, va, len,
			 DAT_MEM_PRIV_ALL_FLAG, &lmr, &lmr_context,
			 &rmr_context, &reg_len, &reg_addr), DAT_SUCCESS))
		return;
	DT_CHECK(ctx, reg_addr == (DAT_VADDR)(uintptr_t)va && reg_len == len,
		 "%s: registered exactly [%p, +%llu) (got [0x%llx, +%llu))",
		 what, va, (unsigned long long)len,
		 (unsigned long long)reg_addr, (unsigned long long)reg_len);
	if (DT_CHECK_RC(ctx, "dat_lmr_query",
			dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &param),
			DAT_SUCCESS))
		DT_CHECK(ctx, param.ia_handle == kit->ia &&
			 param.pz_handle == kit->pz &&
			 param.mem_type == DAT_MEM_TYPE_VIRTUAL &&
			 param.region_desc.for_va == va &&
			 param.length == len &&
			 param.mem_priv == DAT_MEM_PRIV_ALL_FLAG &&
			 param.lmr_context == lmr_context &&
			 param.rmr_context == rmr_context &&
			 param.registered_size == reg_len &&
			 param.registered_address == reg_addr,
			 "%s: dat_lmr_query gives back what was registered",
			 what);
	DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr), DAT_SUCCESS);
}

static void typical(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	void *buf = malloc(DT_BUFSZ);

	if (dt_kit_open(ctx, &kit, DT_KIT_PZ) &&
	    DT_CHECK(ctx, buf != NULL, "malloc(%d)", DT_BUFSZ))
		reg_check_free(ctx, &kit, buf, DT_BUFSZ, "1024 bytes");
	dt_kit_close(ctx, &kit);
	free(buf);
}

static void again(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	void *buf = malloc(DT_BUFSZ);

	if (dt_kit_open(ctx, &kit, DT_KIT_PZ) &&
	    DT_CHECK(ctx, buf != NULL, "malloc(%d)", DT_BUFSZ)) {
		reg_check_free(ctx, &kit, buf, DT_BUFSZ, "first time");
		reg_check_free(ctx, &kit, buf, DT_BUFSZ, "second time");
	}
	dt_kit_close(ctx, &kit);
	free(buf);
}

/* DAT_STRICT as libdat reads it: set, not empty and not "0". */
static int strict_env(void)
{
	const char *v = getenv("DAT_STRICT");

	return v && *v && strcmp(v, "0") != 0;
}

static void size_zero(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_LMR_HANDLE lmr;
	DAT_RETURN rc;
	char byte;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ))
		goto out;
	/* DAT_LENGTH_ERROR, as OpenFabrics' dapltest expects; DAT 1.2's
	 * invalid 4th argument under DAT_STRICT=1 (libdat(7)) */
	rc = reg(kit.ia, kit.pz, &byte, 0, DAT_MEM_PRIV_ALL_FLAG, &lmr, NULL,
		 NULL, NULL, NULL);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (length 0)", rc,
			 strict_env() ? BAD_ARG(4) : DAT_ERROR(DAT_LENGTH_ERROR, 0)) &&
	    rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

static void null_pz(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_LMR_HANDLE lmr;
	DAT_RETURN rc;
	char buf[64];

	if (!dt_kit_open(ctx, &kit, DT_KIT_EVDS))
		goto out;
	rc = reg(kit.ia, DAT_HANDLE_NULL, buf, sizeof(buf),
		 DAT_MEM_PRIV_ALL_FLAG, &lmr, NULL, NULL, NULL, NULL);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (pz NULL)", rc,
			 DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ))
	    && rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
	/* an EVD where the PZ belongs */
	rc = reg(kit.ia, kit.recv_evd, buf, sizeof(buf),
		 DAT_MEM_PRIV_ALL_FLAG, &lmr, NULL, NULL, NULL, NULL);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (pz is an EVD)", rc,
			 DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ))
	    && rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

static void free_null(struct dt_fft_ctx *ctx)
{
	static const DAT_RETURN bad_lmr =
		DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
	struct dt_kit kit;
	DAT_LMR_HANDLE lmr;
	char buf[64];

	/* OpenFabrics printed this case but never made the call */
	DT_CHECK_RC(ctx, "dat_lmr_free(NULL)", dat_lmr_free(DAT_HANDLE_NULL),
		    bad_lmr);
	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ))
		goto out;
	DT_CHECK_RC(ctx, "dat_lmr_free(a PZ)", dat_lmr_free(kit.pz),
		    bad_lmr);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create",
			 reg(kit.ia, kit.pz, buf, sizeof(buf),
			     DAT_MEM_PRIV_ALL_FLAG, &lmr, NULL, NULL, NULL,
			     NULL), DAT_SUCCESS))
		goto out;
	DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr), DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_lmr_free (again)", dat_lmr_free(lmr), bad_lmr);
out:
	dt_kit_close(ctx, &kit);
}

static void bad_arguments(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr;
	DAT_RETURN rc;
	char buf[64];

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ))
		goto out;
	rc = reg(kit.ia, kit.pz, NULL, sizeof(buf), DAT_MEM_PRIV_ALL_FLAG,
		 &lmr, NULL, NULL, NULL, NULL);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (address NULL)", rc,
			 BAD_ARG(3)) && rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
	rc = reg(kit.ia, kit.pz, buf, sizeof(buf),
		 (DAT_MEM_PRIV_FLAGS)0x100, &lmr, NULL, NULL, NULL, NULL);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (privileges 0x100)", rc,
			 BAD_ARG(6)) && rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_lmr_create (lmr_handle NULL)",
		    reg(kit.ia, kit.pz, buf, sizeof(buf),
			DAT_MEM_PRIV_ALL_FLAG, NULL, NULL, NULL, NULL, NULL),
		    BAD_ARG(7));
	memset(&region, 0, sizeof(region));
	region.for_shared_memory.virtual_address = buf;
	rc = dat_lmr_create(kit.ia, DAT_MEM_TYPE_SHARED_VIRTUAL, region,
			    sizeof(buf), kit.pz, DAT_MEM_PRIV_ALL_FLAG, &lmr,
			    NULL, NULL, NULL, NULL);
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (DAT_MEM_TYPE_SHARED_VIRTUAL)",
			 rc, DAT_ERROR(DAT_MODEL_NOT_SUPPORTED,
				       DAT_NO_SUBTYPE)) && rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

static void sizes(struct dt_fft_ctx *ctx)
{
	static const DAT_VLEN lengths[] = {
		1, 4095, 4096, 4097, 1 << 20, 64 << 20
	};
	struct dt_kit kit;
	size_t i;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ))
		goto out;
	for (i = 0; i < sizeof(lengths) / sizeof(lengths[0]); i++) {
		/* mapped, not touched: the larger sizes cost nothing */
		size_t map_len = (size_t)lengths[i] + 4096;
		char *map = mmap(NULL, map_len, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);
		char what[64];

		if (!DT_CHECK(ctx, map != MAP_FAILED, "mmap(%zu)", map_len))
			continue;
		/* an odd start too: registrations need no alignment */
		snprintf(what, sizeof(what), "%llu bytes at page offset 0",
			 (unsigned long long)lengths[i]);
		reg_check_free(ctx, &kit, map, lengths[i], what);
		snprintf(what, sizeof(what), "%llu bytes at page offset 7",
			 (unsigned long long)lengths[i]);
		reg_check_free(ctx, &kit, map + 7, lengths[i], what);
		munmap(map, map_len);
	}
out:
	dt_kit_close(ctx, &kit);
}

static void lmr_of_lmr(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr1 = DAT_HANDLE_NULL, lmr2 = DAT_HANDLE_NULL;
	DAT_LMR_CONTEXT ctx1, ctx2;
	DAT_RMR_CONTEXT rctx1, rctx2;
	DAT_VLEN len2 = 0;
	DAT_VADDR addr2 = 0;
	void *buf = malloc(DT_BUFSZ);

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ) ||
	    !DT_CHECK(ctx, buf != NULL, "malloc(%d)", DT_BUFSZ))
		goto out;
	/* local access only: no RMR context (DAT 1.2) */
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (local only)",
			 reg(kit.ia, kit.pz, buf, DT_BUFSZ,
			     DAT_MEM_PRIV_LOCAL_READ_FLAG |
			     DAT_MEM_PRIV_LOCAL_WRITE_FLAG, &lmr1, &ctx1,
			     &rctx1, NULL, NULL), DAT_SUCCESS)) {
		lmr1 = DAT_HANDLE_NULL;
		goto out;
	}
	DT_CHECK(ctx, rctx1 == 0, "an LMR without remote access has "
		 "rmr_context 0 (got 0x%x)", (unsigned)rctx1);
	/* the same memory once more, through the LMR, with remote access */
	memset(&region, 0, sizeof(region));
	region.for_lmr_handle = lmr1;
	if (!DT_CHECK_RC(ctx, "dat_lmr_create (DAT_MEM_TYPE_LMR)",
			 dat_lmr_create(kit.ia, DAT_MEM_TYPE_LMR, region,
					DT_BUFSZ, kit.pz, DAT_MEM_PRIV_ALL_FLAG,
					&lmr2, &ctx2, &rctx2, &len2, &addr2),
			 DAT_SUCCESS)) {
		lmr2 = DAT_HANDLE_NULL;
		goto out;
	}
	DT_CHECK(ctx, ctx2 != ctx1 && addr2 == (DAT_VADDR)(uintptr_t)buf &&
		 len2 == DT_BUFSZ,
		 "the second LMR covers the same memory with its own context");
	/* either can go first */
	if (DT_CHECK_RC(ctx, "dat_lmr_free (first)", dat_lmr_free(lmr1),
			DAT_SUCCESS))
		lmr1 = DAT_HANDLE_NULL;
out:
	if (lmr2)
		DT_CHECK_RC(ctx, "dat_lmr_free (second)", dat_lmr_free(lmr2),
			    DAT_SUCCESS);
	if (lmr1)
		DT_CHECK_RC(ctx, "dat_lmr_free (first)", dat_lmr_free(lmr1),
			    DAT_SUCCESS);
	dt_kit_close(ctx, &kit);
	free(buf);
}

static const struct dt_fft_case cases[] = {
	{ "Test if we can register typical size of memory then deregister "
	  "it", typical },
	{ "Test if we can register typical size of memory deregister, then "
	  "register it again", again },
	{ "Try to register memory with memory size 0", size_zero },
	{ "Try to register memory with null pz", null_pz },
	{ "Try to deregister memory with null lmr_handle (and twice)",
	  free_null },
	{ "Try to register memory with a NULL address, unknown privileges, "
	  "no handle pointer, an unsupported memory type", bad_arguments },
	{ "Register sizes from 1 byte to 64 MiB, aligned and not",
	  sizes },
	{ "Register memory again through its LMR (DAT_MEM_TYPE_LMR)",
	  lmr_of_lmr },
};

const struct dt_fft_feature dt_fft_mem = {
	.name = "mem",
	.title = "Memory register/deregister",
	.cases = cases,
	.ncases = sizeof(cases) / sizeof(cases[0]),
};
