/*
 * test_abi2.c - the DAT 2.0 ABI as <dat2/udat.h> declares it, held to
 * OpenFabrics dapl 2.1.10's headers (Debian 12's libdapl-dev) on LP64.
 *
 * The expected values are not written here: they are the table
 * test/abi2/dat2-2.1.10.abi, which test/abi2/abi-probe.c printed when
 * compiled against the 2.1.10 headers themselves.  Every item of
 * test/abi2/abi-items.h (each struct's size, each member's offset and
 * size, each enum and scalar type's size and signedness, each enumerator
 * and macro a binary bakes in) is formatted here from our headers exactly
 * as the probe formats it, and must equal the table's line.  (check-abi2.sh
 * compares with the 2.1.10 headers directly when it can fetch them.)
 *
 * A few headline facts follow, spelled out, so that a failure reads as
 * what changed between DAT 1.2 and 2.0.
 */

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <check.h>
#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>

#ifndef ABI2_TABLE
#error "ABI2_TABLE must name test/abi2/dat2-2.1.10.abi"
#endif

#define EQ(a, b)	ck_assert_uint_eq((unsigned long long)(a), \
					  (unsigned long long)(b))

/* ------------------------------------------------------------------ */
/* Our headers, formatted as abi-probe.c prints them                  */
/* ------------------------------------------------------------------ */

#define LINE_MAX_LEN	256

static char (*ours)[LINE_MAX_LEN];	/* one line per item */
static size_t n_ours;

static void add(const char *line)
{
	ck_assert_msg(strlen(line) < LINE_MAX_LEN, "line too long: %s", line);
	strcpy(ours[n_ours++], line);
}

#define FMT(...) \
	do { \
		char l_[LINE_MAX_LEN]; \
		snprintf(l_, sizeof(l_), __VA_ARGS__); \
		add(l_); \
	} while (0);

/* Every item of abi-items.h, formatted from our headers. */
static void build_ours(void)
{
	size_t n_items = 0;

	/* One slot per item: count them first. */
#define ABI_SIZE(T)		n_items++;
#define ABI_MEMBER(T, m)	n_items++;
#define ABI_SCALAR(T)		n_items++;
#define ABI_VALUE(N)		n_items++;
#define ABI_POINTER(N)		n_items++;
#define ABI_STRING(N)		n_items++;
#include "abi-items.h"
#undef ABI_SIZE
#undef ABI_MEMBER
#undef ABI_SCALAR
#undef ABI_VALUE
#undef ABI_POINTER
#undef ABI_STRING

	ours = calloc(n_items, sizeof(*ours));
	ck_assert_ptr_nonnull(ours);
	n_ours = 0;

	/* The same formats as abi-probe.c, without the newline. */
#define ABI_SIZE(T) \
	FMT("size %s %lu", #T, (unsigned long)sizeof(T))
#define ABI_MEMBER(T, m) \
	FMT("member %s.%s %lu %lu", #T, #m, \
	    (unsigned long)offsetof(T, m), \
	    (unsigned long)sizeof(((T *)0)->m))
#define ABI_SCALAR(T) \
	FMT("scalar %s %lu %s", #T, (unsigned long)sizeof(T), \
	    (T)-1 < (T)1 ? "signed" : "unsigned")
#define ABI_VALUE(N) \
	FMT("value %s %lld %lu", #N, (long long)(N), \
	    (unsigned long)sizeof(N))
#define ABI_POINTER(N) \
	FMT("pointer %s %lu", #N, (unsigned long)(N))
#define ABI_STRING(N) \
	FMT("string %s \"%s\"", #N, N)
#include "abi-items.h"
#undef ABI_SIZE
#undef ABI_MEMBER
#undef ABI_SCALAR
#undef ABI_VALUE
#undef ABI_POINTER
#undef ABI_STRING

	ck_assert_uint_eq(n_ours, n_items);
}

/* ------------------------------------------------------------------ */
/* The committed table from the 2.1.10 headers                        */
/* ------------------------------------------------------------------ */

static char (*theirs)[LINE_MAX_LEN];
static size_t n_theirs;

static void load_table(void)
{
	FILE *f = fopen(ABI2_TABLE, "r");
	char line[LINE_MAX_LEN + 2];
	size_t cap = 0;

	ck_assert_msg(f != NULL, "cannot open %s", ABI2_TABLE);
	n_theirs = 0;
	while (fgets(line, sizeof(line), f) != NULL) {
		size_t len = strcspn(line, "\n");

		line[len] = '\0';
		if (line[0] == '#' || line[0] == '\0')
			continue;		/* provenance comments */
		ck_assert_msg(len < LINE_MAX_LEN, "table line too long");
		if (n_theirs == cap) {
			cap = cap ? 2 * cap : 1024;
			theirs = realloc(theirs, cap * sizeof(*theirs));
			ck_assert_ptr_nonnull(theirs);
		}
		strcpy(theirs[n_theirs++], line);
	}
	fclose(f);
}

static void setup(void)
{
	build_ours();
	load_table();
}

static void teardown(void)
{
	free(ours);
	free(theirs);
	ours = NULL;
	theirs = NULL;
}

/*
 * Compare the lines of one kind ("size", "member", ...).  Both lists are
 * in abi-items.h order; every mismatch is printed, then the test fails
 * with the count.
 */
static void compare_kind(const char *kind)
{
	size_t klen = strlen(kind), i, n = 0, bad = 0;

	ck_assert_uint_eq(n_ours, n_theirs);
	for (i = 0; i < n_ours; i++) {
		if (strncmp(theirs[i], kind, klen) != 0 ||
		    theirs[i][klen] != ' ')
			continue;
		n++;
		if (strcmp(ours[i], theirs[i]) != 0) {
			fprintf(stderr, "2.1.10: %s\nours:   %s\n",
				theirs[i], ours[i]);
			bad++;
		}
	}
	ck_assert_msg(n > 0, "no '%s' lines in the table", kind);
	ck_assert_msg(bad == 0, "%lu of %lu '%s' items differ from 2.1.10",
		      (unsigned long)bad, (unsigned long)n, kind);
}

START_TEST(table_matches_items)
{
	size_t i;

	/* Same items in the same order: the first word and name agree. */
	ck_assert_uint_eq(n_ours, n_theirs);
	for (i = 0; i < n_ours; i++) {
		size_t a = strcspn(ours[i], " "), b;

		a += 1 + strcspn(ours[i] + a + 1, " ");
		b = strcspn(theirs[i], " ");
		b += 1 + strcspn(theirs[i] + b + 1, " ");
		ck_assert_msg(a == b && strncmp(ours[i], theirs[i], a) == 0,
			      "item %lu: '%s' vs table '%s'",
			      (unsigned long)i, ours[i], theirs[i]);
	}
}
END_TEST

START_TEST(struct_sizes)	{ compare_kind("size"); }	END_TEST
START_TEST(member_layouts)	{ compare_kind("member"); }	END_TEST
START_TEST(scalar_types)	{ compare_kind("scalar"); }	END_TEST
START_TEST(values)		{ compare_kind("value"); }	END_TEST
START_TEST(handle_macros)	{ compare_kind("pointer"); }	END_TEST
START_TEST(string_macros)	{ compare_kind("string"); }	END_TEST

/* ------------------------------------------------------------------ */
/* Headline changes from DAT 1.2                                      */
/* ------------------------------------------------------------------ */

START_TEST(what_changed_from_1_2)
{
	EQ(DAT_VERSION_MAJOR, 2);
	EQ(DAT_VERSION_MINOR, 0);

	/* Triplets: address first, 32-bit length, 16 bytes (1.2: 24). */
	EQ(sizeof(DAT_LMR_TRIPLET), 16);
	EQ(offsetof(DAT_LMR_TRIPLET, virtual_address), 0);
	EQ(offsetof(DAT_LMR_TRIPLET, segment_length), 8);
	EQ(offsetof(DAT_LMR_TRIPLET, lmr_context), 12);
	EQ(sizeof(DAT_RMR_TRIPLET), 16);
	EQ(offsetof(DAT_RMR_TRIPLET, rmr_context), 12);

	/* Events: 120 bytes (1.2: 48), 64 of them extension data. */
	EQ(sizeof(DAT_EVENT), 120);
	EQ(offsetof(DAT_EVENT, event_extension_data), 56);
	EQ(sizeof(DAT_IB_EXTENSION_EVENT_DATA), 64);

	/* Subtypes from 0x1A on moved: CSP handle, then SRQ shutdown. */
	EQ(DAT_INVALID_HANDLE_CSP, 0x1A);
	EQ(DAT_INVALID_HANDLE1, 0x1B);
	EQ(DAT_INVALID_STATE_SRQ_SHUTDOWN, 88);
	EQ(DAT_THREAD_SAFETY_NOT_FOUND, 103);
	EQ(DAT_NOT_IMPLEMENTED, 0x3FFF0000);

	/* The provider table: 2 words + 79 calls = 81 slots (1.2: 70). */
	EQ(sizeof(DAT_PROVIDER), 81 * sizeof(void *));
	EQ(offsetof(DAT_PROVIDER, srq_set_lw_func), 69 * sizeof(void *));
	EQ(offsetof(DAT_PROVIDER, csp_create_func), 70 * sizeof(void *));
	EQ(offsetof(DAT_PROVIDER, handle_extendedop_func),
	   80 * sizeof(void *));
}
END_TEST

static Suite *abi2_suite(void)
{
	Suite *s = suite_create("abi2");
	TCase *tc;

#if __SIZEOF_POINTER__ == 8 && defined(__x86_64__)
	tc = tcase_create("against_2.1.10_lp64");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, table_matches_items);
	tcase_add_test(tc, struct_sizes);
	tcase_add_test(tc, member_layouts);
	tcase_add_test(tc, scalar_types);
	tcase_add_test(tc, values);
	tcase_add_test(tc, handle_macros);
	tcase_add_test(tc, string_macros);
	suite_add_tcase(s, tc);

	tc = tcase_create("headline_lp64");
	tcase_add_test(tc, what_changed_from_1_2);
	suite_add_tcase(s, tc);
#else
	/* The table was taken on x86_64; elsewhere only build the file. */
	(void)tc;
#endif
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(abi2_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? 0 : 1;
}
