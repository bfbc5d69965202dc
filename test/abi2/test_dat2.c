/* libdat2.so.2 and the u2.0 tcp provider through the DAT 2.0 API: what
 * differs from DAT 1.2 (issue 26).  DAT_OVERRIDE: $DAT_TEST_CONF, the
 * build tree's dat.conf with its "tcp u2.0" line.  Exit 0 when every
 * check holds; each failure is printed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat2/udat.h>

/* (the 2.0 headers leave it to the program) */
#define ERR(type, sub) ((DAT_RETURN)(DAT_CLASS_ERROR | (type) | (sub)))

static int failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

static int names_are(DAT_RETURN rc, const char *type, const char *sub)
{
	const char *a = NULL, *b = NULL;

	dat_strerror(rc, &a, &b);
	return a && b && !strcmp(a, type) && !strcmp(b, sub);
}

int main(void)
{
	const char *conf = getenv("DAT_TEST_CONF");
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
	DAT_RMR_PARAM rparam;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_VLEN rlen;
	DAT_VADDR raddr;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pattr;
	DAT_LMR_PARAM lparam;
	DAT_CNO_PARAM cparam;
	DAT_OS_WAIT_PROXY_AGENT no_agent = { NULL, NULL };
	static char buf[4096];
	DAT_RETURN rc;

	if (conf)
		setenv("DAT_OVERRIDE", conf, 1);

	/* the 2.0 types and subtypes by name */
	CHECK(names_are(ERR(DAT_COMM_NOT_SUPPORTED, DAT_INVALID_HANDLE_CSP),
			"DAT_COMM_NOT_SUPPORTED", "DAT_INVALID_HANDLE_CSP"));
	CHECK(names_are(ERR(DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_SHUTDOWN),
			"DAT_INVALID_STATE", "DAT_INVALID_STATE_SRQ_SHUTDOWN"));
	CHECK(names_are(ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE),
			"DAT_NOT_IMPLEMENTED", "DAT_NO_SUBTYPE"));

	/* a u1.2 key is never opened through libdat2 */
	rc = dat_ia_openv("tcp", 8, &evd, &ia, 1, 2, DAT_FALSE);
	CHECK(rc == ERR(DAT_PROVIDER_NOT_FOUND, DAT_MAJOR_NOT_FOUND));
	/* no owner: refused before any provider */
	CHECK(DAT_GET_TYPE(dat_extension_op(DAT_HANDLE_NULL, 0)) ==
	      DAT_INVALID_HANDLE);

	rc = dat_ia_open("tcp", 8, &evd, &ia);	/* asks for 2.0 */
	if (rc != DAT_SUCCESS) {
		printf("FAIL: dat_ia_open(\"tcp\") u2.0: 0x%x\n", (unsigned)rc);
		return 1;
	}
	rc = dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
			  DAT_PROVIDER_FIELD_ALL, &pattr);
	CHECK(rc == DAT_SUCCESS);
	CHECK(pattr.dapl_version_major == 2 && pattr.dapl_version_minor == 0);
	/* the IB extensions where tcp offers them (dat_extension_op(3)) */
	CHECK(ia_attr.extension_supported == DAT_EXTENSION_NONE ||
	      (ia_attr.extension_supported == DAT_EXTENSION_IB &&
	       ia_attr.extension_version == 209));
	CHECK(ia_attr.zb_supported == DAT_FALSE);
	CHECK(ia_attr.max_message_size > 0);
	CHECK(pattr.ha_supported == DAT_FALSE);
	CHECK(pattr.rmr_scope_supported == DAT_RMR_SCOPE_PZ);

	/* extensions: the IA's provider answers; an operation on an EP
	 * (0: fetch-and-add) refuses another handle, counters (4) are not
	 * offered (test/api/test_ext.c has the rest) */
	CHECK(DAT_GET_TYPE(dat_extension_op(ia, 0)) == DAT_INVALID_HANDLE);
	CHECK(DAT_GET_TYPE(dat_extension_op(ia, 4, 0, NULL, 0)) ==
	      DAT_NOT_IMPLEMENTED);

	CHECK(dat_pz_create(ia, &pz) == DAT_SUCCESS);
	region.for_va = buf;
	rc = dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, sizeof(buf), pz,
			    DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_ZB, &lmr, &lctx,
			    &rctx, &rlen, &raddr);
	CHECK(rc == ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7));
	rc = dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, sizeof(buf), pz,
			    DAT_MEM_PRIV_ALL_FLAG, DAT_VA_TYPE_VA, &lmr, &lctx,
			    &rctx, &rlen, &raddr);
	CHECK(rc == DAT_SUCCESS);
	if (rc == DAT_SUCCESS) {
		memset(&lparam, 0xff, sizeof(lparam));
		CHECK(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &lparam) == DAT_SUCCESS);
		CHECK(lparam.va_type == DAT_VA_TYPE_VA);
		CHECK(lparam.ia_handle == ia);
		CHECK(dat_lmr_free(lmr) == DAT_SUCCESS);
	}

	/* an RMR says the scope the provider attributes give */
	CHECK(dat_rmr_create(pz, &rmr) == DAT_SUCCESS);
	memset(&rparam, 0xff, sizeof(rparam));
	CHECK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rparam) == DAT_SUCCESS);
	CHECK(rparam.rmr_scope == DAT_RMR_SCOPE_PZ);
	CHECK(rparam.va_type == DAT_VA_TYPE_VA);
	CHECK(dat_rmr_free(rmr) == DAT_SUCCESS);

	/* 2.0's CNO masks: ALL (0x4) is a bit of its own */
	CHECK(dat_cno_create(ia, no_agent, &cno) == DAT_SUCCESS);
	memset(&cparam, 0xff, sizeof(cparam));
	CHECK(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cparam) == DAT_SUCCESS);
	CHECK(cparam.ia_handle == ia);
	CHECK(cparam.proxy_type == DAT_PROXY_TYPE_NONE);
	CHECK(dat_cno_query(cno, (DAT_CNO_PARAM_MASK)0x8, &cparam) ==
	      ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
	CHECK(dat_cno_free(cno) == DAT_SUCCESS);

	CHECK(dat_pz_free(pz) == DAT_SUCCESS);
	CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) == DAT_SUCCESS);
	if (!failures)
		printf("PASS: libdat2 and tcp u2.0: strerror, version key, "
		       "query, extension_op, lmr va_type, cno masks\n");
	return failures ? 1 : 0;
}
