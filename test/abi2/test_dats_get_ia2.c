/* dats_get_ia_handle, the libdat2.so.2 call OpenFabrics dapl 2.x's own
 * providers import (it is in no DAT header): a consumer's open IA handle
 * gives the provider's IA handle, anything else DAT_INVALID_HANDLE |
 * DAT_INVALID_HANDLE_IA.  Over the tcp u2.0 line of $DAT_TEST_CONF. */
#include <stdio.h>
#include <stdlib.h>

#include <dat2/udat.h>

#define ERR(type, sub) ((DAT_RETURN)(DAT_CLASS_ERROR | (type) | (sub)))
#define BAD_IA ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA)

/* dapl 2.1.10's prototype (its private dat_init.h) */
extern DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE handle,
				     DAT_IA_HANDLE *ia_handle_p);

static int failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("FAIL: %s:%d: %s\n", __FILE__, __LINE__, #cond); \
		failures++; \
	} \
} while (0)

int main(void)
{
	const char *conf = getenv("DAT_TEST_CONF");
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, async2 = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia, ia2, pia = DAT_HANDLE_NULL, pia2 = DAT_HANDLE_NULL;
	DAT_IA_HANDLE out;
	DAT_PZ_HANDLE pz;

	if (!conf) {
		printf("SKIP: no DAT_TEST_CONF\n");
		return 77;
	}
	setenv("DAT_OVERRIDE", conf, 1);
	CHECK(dats_get_ia_handle(DAT_HANDLE_NULL, &out) == BAD_IA);
	CHECK(dats_get_ia_handle((DAT_IA_HANDLE)(size_t)1, &out) == BAD_IA);
	if (dat_ia_open("tcp", 8, &async, &ia) != DAT_SUCCESS ||
	    dat_ia_open("tcp", 8, &async2, &ia2) != DAT_SUCCESS) {
		printf("FAIL: dat_ia_open(\"tcp\") u2.0\n");
		return 1;
	}
	CHECK(dats_get_ia_handle(ia, &pia) == DAT_SUCCESS);
	CHECK(dats_get_ia_handle(ia2, &pia2) == DAT_SUCCESS);
	/* the provider's own IA: an object, not the consumer's number */
	CHECK(pia != DAT_HANDLE_NULL && pia != ia && pia2 != pia);
	CHECK(dats_get_ia_handle(ia, NULL) == BAD_IA);
	/* an object handle is not an IA handle */
	CHECK(dat_pz_create(ia, &pz) == DAT_SUCCESS);
	CHECK(dats_get_ia_handle((DAT_IA_HANDLE)pz, &out) == BAD_IA);
	CHECK(dat_pz_free(pz) == DAT_SUCCESS);
	CHECK(dat_ia_close(ia2, DAT_CLOSE_GRACEFUL_FLAG) == DAT_SUCCESS);
	/* closed: gone */
	CHECK(dats_get_ia_handle(ia2, &out) == BAD_IA);
	CHECK(dats_get_ia_handle(ia, &out) == DAT_SUCCESS && out == pia);
	CHECK(dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) == DAT_SUCCESS);
	if (!failures)
		printf("PASS: dats_get_ia_handle: open IAs give the provider's "
		       "IA, others DAT_INVALID_HANDLE_IA\n");
	return failures ? 1 : 0;
}
