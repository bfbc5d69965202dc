/* The core's handles: typed magics, and freed objects that stay readable
 * and dead and whose memory never comes back as another object. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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
	/* values no object can have: refused unread */
	ck_assert_ptr_null(dapl_handle_get((void *)(uintptr_t)1, DAT_HANDLE_TYPE_EP));
	ck_assert_ptr_null(dapl_handle_get((char *)ep + 4, DAT_HANDLE_TYPE_EP));
	ck_assert_uint_eq(dapl_handle_live(), 1);
	dapl_handle_free(ep);
	ck_assert_uint_eq(dapl_handle_live(), 0);
}
END_TEST

/* Values that were never handles (issue 24) are refused without being
 * read: copies of a live object (header, magic and all) on the stack and
 * the heap, unmapped addresses, and the arena's reservation beyond the part
 * opened for objects (PROT_NONE: reading it faults). */
START_TEST(values_outside_the_arenas_are_refused_unread)
{
	struct fake_ep *ep = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP,
					       sizeof(*ep), NULL);
	unsigned char on_stack[128] __attribute__((aligned(64)));
	unsigned char *on_heap = aligned_alloc(64, 128);

	ck_assert_ptr_nonnull(ep);
	ck_assert_ptr_nonnull(on_heap);
	memcpy(on_stack, ep, sizeof(*ep));
	memcpy(on_heap, ep, sizeof(*ep));
	ck_assert_ptr_null(dapl_handle_get(on_stack, DAT_HANDLE_TYPE_EP));
	ck_assert_ptr_null(dapl_handle_get(on_heap, DAT_HANDLE_TYPE_EP));
	ck_assert_ptr_null(dapl_handle_get_any(on_heap));
	ck_assert_ptr_null(dapl_handle_get((void *)(uintptr_t)0xdeadbeef000ULL,
					   DAT_HANDLE_TYPE_EP));
	ck_assert_ptr_null(dapl_handle_get((void *)(uintptr_t)0x7ffff0000000ULL,
					   DAT_HANDLE_TYPE_EP));
	ck_assert_ptr_null(dapl_handle_get((char *)ep + ((size_t)64 << 20),
					   DAT_HANDLE_TYPE_EP));
	/* inside the opened part, but no object there: read, and refused */
	ck_assert_ptr_null(dapl_handle_get((char *)ep + 4096, DAT_HANDLE_TYPE_EP));
	ck_assert_ptr_eq(dapl_handle_get(ep, DAT_HANDLE_TYPE_EP), &ep->hdr);
	free(on_heap);
	dapl_handle_free(ep);
}
END_TEST

START_TEST(magics_are_distinct)
{
	int a, b;

	for (a = DAT_HANDLE_TYPE_CR; a <= DAT_HANDLE_TYPE_SRQ; a++) {
		ck_assert_uint_ne(dapl_magic((DAT_HANDLE_TYPE)a), DAPL_MAGIC_DEAD);
		ck_assert_uint_ne(dapl_magic((DAT_HANDLE_TYPE)a), 0);
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
	ck_assert_uint_eq(ep->hdr.magic, DAPL_MAGIC_DEAD);
	ck_assert_ptr_null(dapl_handle_get(ep, DAT_HANDLE_TYPE_EP));
}
END_TEST

/* The quarantine this replaced gave memory back after 1024 further frees,
 * and a stale handle then read freed heap or a new object.  However many
 * objects come and go, a freed address is never handed out again and the
 * old handle stays dead. */
START_TEST(no_address_comes_back)
{
	enum { N = 200000 };
	struct fake_ep *first, *obj;
	int i;

	first = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP, sizeof(*first), NULL);
	dapl_handle_free(first);
	for (i = 0; i < N; i++) {
		obj = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP, sizeof(*obj), NULL);
		ck_assert_ptr_nonnull(obj);
		ck_assert_ptr_ne(obj, first);
		dapl_handle_free(obj);
		if (i % 10000 == 0)
			ck_assert_ptr_null(dapl_handle_get(first, DAT_HANDLE_TYPE_EP));
	}
	ck_assert_ptr_null(dapl_handle_get(first, DAT_HANDLE_TYPE_EP));
	ck_assert_uint_eq(dapl_handle_live(), 0);
}
END_TEST

/* Memory of dead objects goes back to the kernel once the allocation point
 * has moved on, so churn does not grow the process; what is left there
 * reads as zeros, which is no live magic either.  A chunk with one live
 * object stays. */
START_TEST(dead_memory_goes_back)
{
	enum { N = 4096 };                /* 64 B objects: 4 chunks of 64 KiB */
	static struct fake_ep *objs[N];
	struct fake_ep *keep, *probe;
	int i;

	keep = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_PZ, sizeof(*keep), NULL);
	for (i = 0; i < N; i++)
		objs[i] = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP, sizeof(*objs[i]), NULL);
	for (i = 0; i < N; i++)
		dapl_handle_free(objs[i]);
	/* move the allocation point past them */
	probe = dapl_handle_alloc(&table, DAT_HANDLE_TYPE_EP, sizeof(*probe), NULL);
	ck_assert_ptr_nonnull(probe);
	ck_assert(!dapl_handle_page_resident(objs[N / 2]));
	ck_assert_ptr_null(dapl_handle_get(objs[N / 2], DAT_HANDLE_TYPE_EP));
	ck_assert_uint_eq(objs[N / 2]->hdr.magic, 0);
	/* the live one kept its chunk */
	ck_assert(dapl_handle_page_resident(keep));
	ck_assert_ptr_eq(dapl_handle_get(keep, DAT_HANDLE_TYPE_PZ), &keep->hdr);
	dapl_handle_free(probe);
	dapl_handle_free(keep);
	dapl_handle_release_all();
	ck_assert_uint_eq(dapl_handle_live(), 0);
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
	tcase_add_test(tc, values_outside_the_arenas_are_refused_unread);
	tcase_add_test(tc, freed_objects_stay_readable_and_dead);
	tcase_add_test(tc, no_address_comes_back);
	tcase_add_test(tc, dead_memory_goes_back);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
