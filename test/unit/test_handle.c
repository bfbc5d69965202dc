/* The core's handles: typed magics, dead objects that stay readable, and a
 * bounded quarantine. */
#include <check.h>
#include <stdlib.h>

#include "handle.h"

static DAT_PROVIDER table;

struct fake_ep {
	struct dapl_header hdr;
	int payload;
};

START_TEST(live_objects_check_by_type)
{
	struct fake_ep *ep = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP,
					       sizeof(*ep), NULL);

	ck_assert_ptr_nonnull(ep);
	ck_assert_ptr_eq(*(DAT_PROVIDER **)ep, &table); /* libdat's first word */
	ck_assert_ptr_eq(ep->hdr.ia, ep);
	ck_assert_ptr_eq(dapl_handle_get(ep, DAT_HANDLE_TYPE_EP), &ep->hdr);
	ck_assert_ptr_null(dapl_handle_get(ep, DAT_HANDLE_TYPE_PZ));
	ck_assert_ptr_null(dapl_handle_get(NULL, DAT_HANDLE_TYPE_EP));
	dapl_handle_free(ep);
	dapl_handle_release_all();
}
END_TEST

START_TEST(magics_are_distinct)
{
	int a, b;

	for (a = DAT_HANDLE_TYPE_CR; a <= DAT_HANDLE_TYPE_SRQ; a++) {
		ck_assert_uint_ne(dapl_magic((DAT_HANDLE_TYPE)a), DAPL_MAGIC_DEAD);
		for (b = a + 1; b <= DAT_HANDLE_TYPE_SRQ; b++)
			ck_assert_uint_ne(dapl_magic((DAT_HANDLE_TYPE)a),
					  dapl_magic((DAT_HANDLE_TYPE)b));
	}
}
END_TEST

START_TEST(freed_objects_stay_readable_and_dead)
{
	struct fake_ep *ep = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP,
					       sizeof(*ep), NULL);

	dapl_handle_free(ep);
	/* under ASan/valgrind this read would be reported if memory went back */
	ck_assert_ptr_eq(*(DAT_PROVIDER **)ep, &table);
	ck_assert_ptr_null(dapl_handle_get(ep, DAT_HANDLE_TYPE_EP));
	ck_assert_uint_eq(dapl_handle_quarantined(), 1);
	dapl_handle_release_all();
	ck_assert_uint_eq(dapl_handle_quarantined(), 0);
}
END_TEST

START_TEST(quarantine_is_bounded_and_fifo)
{
	void *first, *obj;
	int i;

	first = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_PZ, 64, NULL);
	dapl_handle_free(first);
	for (i = 1; i < DAPL_QUARANTINE; i++)
		dapl_handle_free(dapl_handle_alloc(&table, DAT_HANDLE_TYPE_PZ,
						   64, NULL));
	ck_assert_uint_eq(dapl_handle_quarantined(), DAPL_QUARANTINE);
	/* the oldest is still readable while the quarantine is not over */
	ck_assert_ptr_null(dapl_handle_get(first, DAT_HANDLE_TYPE_PZ));
	for (i = 0; i < 100; i++) {
		obj = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_PZ, 64, NULL);
		dapl_handle_free(obj);
		ck_assert_uint_eq(dapl_handle_quarantined(), DAPL_QUARANTINE);
	}
	dapl_handle_release_all();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("handles");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, live_objects_check_by_type);
	tcase_add_test(tc, magics_are_distinct);
	tcase_add_test(tc, freed_objects_stay_readable_and_dead);
	tcase_add_test(tc, quarantine_is_bounded_and_fifo);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
