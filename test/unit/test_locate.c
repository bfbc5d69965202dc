/* Which dat.conf files libdat reads: DAT_OVERRIDE alone; otherwise libdat's
 * own $(sysconfdir)/dat.conf and then /etc/dat.conf, the first file's
 * entry winning over the same key in the second.  This program is built
 * with both default paths under test/locate/ of the build tree, and every
 * test runs in a process of its own (the registry reads once). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dat/udat.h>

#include "confpath.h"

static char dir[4096], logpath[4200];

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	fclose(f);
}

static void setup(void)
{
	char *slash;

	snprintf(dir, sizeof(dir), "%s", DAT_SYSCONF_PATH);
	slash = strrchr(dir, '/');
	ck_assert_ptr_nonnull(slash);
	*slash = '\0';
	mkdir(dir, 0755);
	unlink(DAT_SYSCONF_PATH);
	unlink(DAT_ETC_PATH);
	snprintf(logpath, sizeof(logpath), "%s/log.%d", dir, (int)getpid());
	unsetenv("DAT_OVERRIDE");
	/* errors and the static registry's notes, to a file we read back */
	setenv("DAT_DBG_TYPE", "5", 1);
	setenv("DAT_DBG_DEST", "1", 1);
	ck_assert(freopen(logpath, "w", stderr) != NULL);
}

static void teardown(void)
{
	unlink(logpath);
}

static char *read_log(void)
{
	static char text[16384];
	size_t n;
	FILE *f;

	fflush(stderr);
	f = fopen(logpath, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(text, 1, sizeof(text) - 1, f);
	text[n] = '\0';
	fclose(f);
	return text;
}

/* The registered entries as "name uM.m" strings, in order, joined by ' '. */
static const char *listed(void)
{
	static char out[4096];
	DAT_PROVIDER_INFO infos[16], *ptrs[16];
	DAT_COUNT n = 0, i;
	size_t used = 0;

	for (i = 0; i < 16; i++)
		ptrs[i] = &infos[i];
	ck_assert_int_eq(dat_registry_list_providers(16, &n, ptrs), DAT_SUCCESS);
	out[0] = '\0';
	for (i = 0; i < n; i++)
		used += (size_t)snprintf(out + used, sizeof(out) - used,
					 "%s%s u%u.%u", i ? " " : "",
					 infos[i].ia_name,
					 infos[i].dapl_version_major,
					 infos[i].dapl_version_minor);
	return out;
}

#define LINE(name, ver, lib) \
	name " " ver " nonthreadsafe default " lib " dapl.1.2 \"x\" \"\"\n"

START_TEST(sources_override_alone)
{
	static const char *const defaults[] = { "/own", "/etc" };
	struct dat_conf_source src[4];

	ck_assert_uint_eq(dat_conf_sources_from("/ovr", defaults, 2, src, 4), 1);
	ck_assert_str_eq(src[0].path, "/ovr");
	ck_assert_ptr_nonnull(strstr(src[0].why, "DAT_OVERRIDE"));
	ck_assert_uint_eq(dat_conf_sources_from(NULL, defaults, 2, src, 4), 2);
	ck_assert_str_eq(src[0].path, "/own");
	ck_assert_str_eq(src[1].path, "/etc");
	ck_assert_uint_eq(dat_conf_sources_from(NULL, defaults, 2, src, 1), 1);
}
END_TEST

START_TEST(own_file_then_etc_first_wins)
{
	char *log;

	write_file(DAT_SYSCONF_PATH,
		   LINE("mine", "u1.2", "libmine.so") LINE("both", "u1.2", "libown.so"));
	write_file(DAT_ETC_PATH,
		   LINE("theirs", "u2.0", "libdaplofa.so.2")
		   LINE("both", "u1.2", "libetc.so")
		   LINE("site", "u1.2", "libsite.so"));
	ck_assert_str_eq(listed(), "mine u1.2 both u1.2 theirs u2.0 site u1.2");
	log = read_log();
	ck_assert_msg(strstr(log, "etc.conf:2: both is already defined at ") &&
		      strstr(log, "own.conf:2; not used"), "log: %s", log);
}
END_TEST

START_TEST(etc_alone_when_no_own_file)
{
	write_file(DAT_ETC_PATH, LINE("site", "u1.2", "libsite.so"));
	ck_assert_str_eq(listed(), "site u1.2");
}
END_TEST

START_TEST(override_reads_nothing_else)
{
	char path[4200];

	snprintf(path, sizeof(path), "%s/override.conf", dir);
	write_file(path, LINE("ovr", "u1.2", "libovr.so"));
	write_file(DAT_SYSCONF_PATH, LINE("mine", "u1.2", "libmine.so"));
	write_file(DAT_ETC_PATH, LINE("site", "u1.2", "libsite.so"));
	setenv("DAT_OVERRIDE", path, 1);
	ck_assert_str_eq(listed(), "ovr u1.2");
	unlink(path);
}
END_TEST

/* An override that cannot be read is an error, never a fall back. */
START_TEST(missing_override_is_an_error_not_a_fallback)
{
	char path[4200];
	char *log;

	snprintf(path, sizeof(path), "%s/no-such.conf", dir);
	write_file(DAT_SYSCONF_PATH, LINE("mine", "u1.2", "libmine.so"));
	setenv("DAT_OVERRIDE", path, 1);
	ck_assert_str_eq(listed(), "");
	log = read_log();
	ck_assert_msg(strstr(log, "DAT_OVERRIDE=") && strstr(log, path) &&
		      strstr(log, "No such file or directory"), "log: %s", log);
}
END_TEST

/* fopen() accepts a directory; libdat must say it cannot be read. */
START_TEST(override_naming_a_directory_says_so)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;
	int err = 0;
	char *log;

	ck_assert_ptr_null(dat_conf_open(dir, &err));
	ck_assert_int_eq(err, EISDIR);
	setenv("DAT_OVERRIDE", dir, 1);
	ck_assert_str_eq(listed(), "");
	ck_assert_int_ne(dat_ia_open("anything", 4, &evd, &ia), DAT_SUCCESS);
	log = read_log();
	ck_assert_msg(strstr(log, "Is a directory") &&
		      !strstr(log, "no entry"), "log: %s", log);
}
END_TEST

START_TEST(none_found_names_both)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;
	char *log;

	setenv("DAT_DBG_TYPE", "1", 1);
	ck_assert_str_eq(listed(), "");
	ck_assert_int_ne(dat_ia_open("anything", 4, &evd, &ia), DAT_SUCCESS);
	log = read_log();
	ck_assert_msg(strstr(log, "no dat.conf found") &&
		      strstr(log, DAT_SYSCONF_PATH) && strstr(log, DAT_ETC_PATH) &&
		      strstr(log, "DAT_OVERRIDE"), "log: %s", log);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dat.conf lookup");
	TCase *tc = tcase_create("order");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, sources_override_alone);
	tcase_add_test(tc, own_file_then_etc_first_wins);
	tcase_add_test(tc, etc_alone_when_no_own_file);
	tcase_add_test(tc, override_reads_nothing_else);
	tcase_add_test(tc, missing_override_is_an_error_not_a_fallback);
	tcase_add_test(tc, override_naming_a_directory_says_so);
	tcase_add_test(tc, none_found_names_both);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
