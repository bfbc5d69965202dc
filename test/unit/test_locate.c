/* Which dat.conf libdat reads: DAT_OVERRIDE, then $(sysconfdir)/dat.conf,
 * then /etc/dat.conf; an unreadable DAT_OVERRIDE is reported, not skipped. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "registry.h"

static char dir[256], first[300], second[300], override[300];

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fclose(f);
}

static void setup(void)
{
	strcpy(dir, "/tmp/datlocate.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(first, sizeof(first), "%s/sysconf.conf", dir);
	snprintf(second, sizeof(second), "%s/etc.conf", dir);
	snprintf(override, sizeof(override), "%s/override.conf", dir);
}

static void teardown(void)
{
	unlink(first);
	unlink(second);
	unlink(override);
	rmdir(dir);
}

static FILE *locate(const char *ovr, const char **chosen, char *why)
{
	const char *cands[2] = { first, second };

	return dat_conf_locate(ovr, cands, 2, chosen, why, 512);
}

START_TEST(override_wins)
{
	const char *chosen;
	char why[512];
	FILE *f;

	touch(first);
	touch(second);
	touch(override);
	f = locate(override, &chosen, why);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(chosen, override);
	fclose(f);
}
END_TEST

START_TEST(missing_override_is_an_error_not_a_fallback)
{
	const char *chosen;
	char why[512];

	touch(first);
	ck_assert_ptr_null(locate(override, &chosen, why));
	ck_assert_str_eq(chosen, override);
	ck_assert_ptr_nonnull(strstr(why, "DAT_OVERRIDE="));
	ck_assert_ptr_nonnull(strstr(why, override));
	ck_assert_ptr_nonnull(strstr(why, "No such file or directory"));
}
END_TEST

START_TEST(sysconfdir_before_etc)
{
	const char *chosen;
	char why[512];
	FILE *f;

	touch(first);
	touch(second);
	f = locate(NULL, &chosen, why);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(chosen, first);
	fclose(f);
}
END_TEST

START_TEST(etc_when_no_sysconfdir_file)
{
	const char *chosen;
	char why[512];
	FILE *f;

	touch(second);
	f = locate(NULL, &chosen, why);
	ck_assert_ptr_nonnull(f);
	ck_assert_str_eq(chosen, second);
	fclose(f);
}
END_TEST

START_TEST(none_found_names_both)
{
	const char *chosen;
	char why[512];

	ck_assert_ptr_null(locate(NULL, &chosen, why));
	ck_assert_ptr_null(chosen);
	ck_assert_ptr_nonnull(strstr(why, first));
	ck_assert_ptr_nonnull(strstr(why, second));
	ck_assert_ptr_nonnull(strstr(why, "DAT_OVERRIDE"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dat.conf lookup");
	TCase *tc = tcase_create("order");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, override_wins);
	tcase_add_test(tc, missing_override_is_an_error_not_a_fallback);
	tcase_add_test(tc, sysconfdir_before_etc);
	tcase_add_test(tc, etc_when_no_sysconfdir_file);
	tcase_add_test(tc, none_found_names_both);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
