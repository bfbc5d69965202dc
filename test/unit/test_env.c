/* The settings the core and the transports read from the environment
 * (udapl/env.h): what is taken, what is refused, and that a refusal is
 * said in one line naming the setting. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "env.h"

#define KNOB "DAT_TEST_ENV_KNOB"

/* dapl_env_number(KNOB, def, lo, hi) with KNOB=value (NULL: unset); what
 * it logged, at most len - 1 bytes, in said. */
static int64_t number_with(const char *value, int64_t def, int64_t lo,
			   int64_t hi, char *said, size_t len)
{
	FILE *log = tmpfile();
	int saved = dup(2);
	int64_t n;
	size_t got;

	ck_assert_ptr_nonnull(log);
	ck_assert_int_ge(saved, 0);
	if (value)
		ck_assert_int_eq(setenv(KNOB, value, 1), 0);
	else
		ck_assert_int_eq(unsetenv(KNOB), 0);
	fflush(stderr);
	ck_assert_int_ge(dup2(fileno(log), 2), 0);
	n = dapl_env_number(KNOB, def, lo, hi);
	fflush(stderr);
	ck_assert_int_ge(dup2(saved, 2), 0);
	close(saved);
	rewind(log);
	got = fread(said, 1, len - 1, log);
	said[got] = '\0';
	fclose(log);
	return n;
}

START_TEST(numbers_taken)
{
	char said[512];

	ck_assert_int_eq(number_with(NULL, 7, 0, 100, said, sizeof(said)), 7);
	ck_assert_str_eq(said, "");
	ck_assert_int_eq(number_with("", 7, 0, 100, said, sizeof(said)), 7);
	ck_assert_str_eq(said, "");
	ck_assert_int_eq(number_with("0", 7, 0, 100, said, sizeof(said)), 0);
	ck_assert_int_eq(number_with("42", 7, 0, 100, said, sizeof(said)), 42);
	ck_assert_int_eq(number_with("0042", 7, 0, 100, said, sizeof(said)), 42);
	ck_assert_int_eq(number_with("100", 7, 0, 100, said, sizeof(said)), 100);
	ck_assert_int_eq(number_with("3600000", 1, 1, 3600000, said,
				     sizeof(said)), 3600000);
	ck_assert_str_eq(said, "");
	/* a default outside the range is a "not set" marker */
	ck_assert_int_eq(number_with(NULL, -1, 0, 2, said, sizeof(said)), -1);
}
END_TEST

/* Each refused value leaves the default and says so, naming it. */
START_TEST(numbers_refused)
{
	static const char *const bad[] = {
		"50us", "-1", "+5", " 5", "5 ", "0x10", "1e3", "101", "12.5",
		"99999999999999999999999999999999999999",
	};
	char said[512], want[128];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(number_with(bad[i], 7, 0, 100, said,
					     sizeof(said)), 7);
		snprintf(want, sizeof(want), KNOB "=%s ignored", bad[i]);
		ck_assert_msg(strstr(said, want) != NULL,
			      "%s: the log said \"%s\"", bad[i], said);
		ck_assert_msg(strstr(said, "from 0 to 100") != NULL,
			      "%s: the range is not in \"%s\"", bad[i], said);
		ck_assert_msg(strchr(said, '\n') == strrchr(said, '\n'),
			      "%s: more than one line: \"%s\"", bad[i], said);
	}
	/* below lo */
	ck_assert_int_eq(number_with("0", 300, 1, 3600000, said, sizeof(said)),
			 300);
	ck_assert_ptr_nonnull(strstr(said, KNOB "=0 ignored"));
}
END_TEST

/* The value is the user's but the log line stays one line of text. */
START_TEST(refused_value_shown_safely)
{
	char said[512], value[200];

	ck_assert_int_eq(number_with("4\n2", 7, 0, 100, said, sizeof(said)), 7);
	ck_assert_ptr_nonnull(strstr(said, KNOB "=4?2 ignored"));
	memset(value, 'x', sizeof(value) - 1);
	value[sizeof(value) - 1] = '\0';
	ck_assert_int_eq(number_with(value, 7, 0, 100, said, sizeof(said)), 7);
	ck_assert_msg(strlen(said) < 150, "a 199-byte value logged whole: %s",
		      said);
}
END_TEST

START_TEST(switches)
{
	ck_assert_int_eq(unsetenv(KNOB), 0);
	ck_assert(!dapl_env_switch(KNOB));
	setenv(KNOB, "", 1);
	ck_assert(!dapl_env_switch(KNOB));
	setenv(KNOB, "0", 1);
	ck_assert(!dapl_env_switch(KNOB));
	setenv(KNOB, "1", 1);
	ck_assert(dapl_env_switch(KNOB));
	setenv(KNOB, "yes", 1);
	ck_assert(dapl_env_switch(KNOB));
	setenv(KNOB, "00", 1);
	ck_assert(dapl_env_switch(KNOB));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("env");
	TCase *tc = tcase_create("settings");
	SRunner *sr;
	int failed;

	/* the core's log: errors on, to stderr, whatever the caller's shell
	 * has set */
	unsetenv("DAT_DBG_TYPE");
	unsetenv("DAT_DBG_DEST");
	tcase_add_test(tc, numbers_taken);
	tcase_add_test(tc, numbers_refused);
	tcase_add_test(tc, refused_value_shown_safely);
	tcase_add_test(tc, switches);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
