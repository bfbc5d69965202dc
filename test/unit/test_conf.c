/*
 * Unit tests for the dat.conf parser (dat/conf.c).
 *
 * Every test checks both what comes out (the entries) and what was
 * reported (the error callback's line and field), exactly.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"

#define MAX_RECORDED 64

struct err_rec {
	unsigned line;
	char field[32];
	char reason[96];
};

struct result {
	int rc;
	struct dat_conf_entry *e;
	size_t n;
	size_t nerr;		/* all callbacks, even unrecorded ones */
	struct err_rec err[MAX_RECORDED];
};

static void record(void *arg, unsigned line, const char *field,
		   const char *reason)
{
	struct result *r = arg;

	ck_assert_ptr_nonnull(field);
	ck_assert_ptr_nonnull(reason);
	if (r->nerr < MAX_RECORDED) {
		struct err_rec *x = &r->err[r->nerr];

		x->line = line;
		snprintf(x->field, sizeof(x->field), "%s", field);
		snprintf(x->reason, sizeof(x->reason), "%s", reason);
	}
	r->nerr++;
}

static void parse_n(struct result *r, const char *text, size_t len)
{
	memset(r, 0, sizeof(*r));
	r->rc = dat_conf_parse(text, len, &r->e, &r->n, record, r);
	ck_assert_int_eq(r->rc, 0);
	if (r->n == 0)
		ck_assert_ptr_null(r->e);
	else
		ck_assert_ptr_nonnull(r->e);
}

static void parse(struct result *r, const char *text)
{
	parse_n(r, text, strlen(text));
}

static void done(struct result *r)
{
	dat_conf_free(r->e, r->n);
	r->e = NULL;
	r->n = 0;
}

static void expect_err(const struct result *r, size_t i, unsigned line,
		       const char *field)
{
	ck_assert_uint_lt(i, r->nerr);
	ck_assert_uint_eq(r->err[i].line, line);
	ck_assert_str_eq(r->err[i].field, field);
}

static void expect_err_reason(const struct result *r, size_t i, unsigned line,
			      const char *field, const char *reason)
{
	expect_err(r, i, line, field);
	ck_assert_str_eq(r->err[i].reason, reason);
}

/* Parses a one-line file and expects exactly one error: (1, field, reason). */
static void expect_bad_line(const char *text, const char *field,
			    const char *reason)
{
	struct result r;

	parse(&r, text);
	ck_assert_msg(r.n == 0, "accepted: %s", text);
	ck_assert_msg(r.nerr == 1, "%zu errors for: %s", r.nerr, text);
	expect_err(&r, 0, 1, field);
	if (reason)
		ck_assert_str_eq(r.err[0].reason, reason);
	done(&r);
}

static void expect_entry(const struct dat_conf_entry *e, const char *name,
			 char type, unsigned maj, unsigned min, int ts, int def,
			 const char *lib, const char *id, unsigned pmaj,
			 unsigned pmin, const char *iap, const char *pp,
			 unsigned line)
{
	ck_assert_str_eq(e->ia_name, name);
	ck_assert_int_eq(e->api_type, type);
	ck_assert_uint_eq(e->api_major, maj);
	ck_assert_uint_eq(e->api_minor, min);
	ck_assert_int_eq(e->thread_safe, ts);
	ck_assert_int_eq(e->is_default, def);
	ck_assert_str_eq(e->lib_path, lib);
	ck_assert_str_eq(e->provider_id, id);
	ck_assert_uint_eq(e->provider_major, pmaj);
	ck_assert_uint_eq(e->provider_minor, pmin);
	ck_assert_str_eq(e->ia_params, iap);
	ck_assert_str_eq(e->platform_params, pp);
	ck_assert_uint_eq(e->line, line);
}

/* What every returned entry must satisfy, whatever the input was. */
static void check_invariants(const struct result *r)
{
	size_t i;

	for (i = 0; i < r->n; i++) {
		const struct dat_conf_entry *e = &r->e[i];
		const char *z = memchr(e->ia_name, '\0', DAT_CONF_NAME_MAX);

		ck_assert_ptr_nonnull(z);	/* NUL-terminated, < 256 */
		ck_assert(z != e->ia_name);	/* non-empty */
		ck_assert(e->api_type == 'u' || e->api_type == 'k');
		ck_assert(e->thread_safe == 0 || e->thread_safe == 1);
		ck_assert(e->is_default == 0 || e->is_default == 1);
		ck_assert_ptr_nonnull(e->lib_path);
		ck_assert_uint_gt(strlen(e->lib_path), 0);
		ck_assert_ptr_nonnull(e->provider_id);
		ck_assert_uint_gt(strlen(e->provider_id), 0);
		ck_assert_ptr_nonnull(e->ia_params);
		ck_assert_ptr_nonnull(e->platform_params);
		ck_assert_uint_ge(e->line, 1);
		if (i > 0)
			ck_assert_uint_gt(e->line, r->e[i - 1].line);
	}
}

#define API_FORMAT "expected u<major>.<minor> or k<major>.<minor>"

#define GOOD_CMA "OpenIB-cma u1.2 nonthreadsafe default libdaplcma.so.1 " \
		 "dapl.1.2 \"ib0 0\" \"\""

START_TEST(test_good_line)
{
	struct result r;

	parse(&r, GOOD_CMA "\n");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 0);
	expect_entry(&r.e[0], "OpenIB-cma", 'u', 1, 2, 0, 1, "libdaplcma.so.1",
		     "dapl", 1, 2, "ib0 0", "", 1);
	done(&r);
}
END_TEST

START_TEST(test_multiple_lines)
{
	struct result r;

	parse(&r,
	      GOOD_CMA "\n"
	      "OpenIB-mlx4_0-1\tu1.2\tthreadsafe\tdefault\tlibdaplscm.so.1\t"
	      "dapl.1.2\t\"mlx4_0 1\"\t\"\"\n"
	      "ofa-v2-ib0   u2.0  nonthreadsafe  default  libdaplofa.so.2  "
	      "dapl.2.0  \"ib0 0\"  \"\"\n");
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(r.nerr, 0);
	expect_entry(&r.e[0], "OpenIB-cma", 'u', 1, 2, 0, 1, "libdaplcma.so.1",
		     "dapl", 1, 2, "ib0 0", "", 1);
	expect_entry(&r.e[1], "OpenIB-mlx4_0-1", 'u', 1, 2, 1, 1,
		     "libdaplscm.so.1", "dapl", 1, 2, "mlx4_0 1", "", 2);
	expect_entry(&r.e[2], "ofa-v2-ib0", 'u', 2, 0, 0, 1, "libdaplofa.so.2",
		     "dapl", 2, 0, "ib0 0", "", 3);
	done(&r);
}
END_TEST

START_TEST(test_comments_and_blank_lines)
{
	struct result r;

	parse(&r,
	      "# dat.conf\n"
	      "\n"
	      "   \t  \n"
	      "    # indented comment with \"an unterminated quote\n"
	      "a u1.2 threadsafe default lib#1.so x#y.1.2 p#q r # trailing\n"
	      "#a u1.2 threadsafe default lib.so dapl.1.2 \"\" \"\"\n"
	      "b u1.2 threadsafe default lib.so dapl.1.2 \"\" \"\"#no-comment\n"
	      "c u1.2 threadsafe default lib.so dapl.1.2 \"\" \"\" #\n");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.nerr, 1);
	/* '#' inside a token is an ordinary character */
	expect_entry(&r.e[0], "a", 'u', 1, 2, 1, 1, "lib#1.so", "x#y", 1, 2,
		     "p#q", "r", 5);
	/* '#' right after a closing quote does not start a comment */
	expect_err(&r, 0, 7, "platform_params");
	expect_entry(&r.e[1], "c", 'u', 1, 2, 1, 1, "lib.so", "dapl", 1, 2,
		     "", "", 8);
	done(&r);
}
END_TEST

START_TEST(test_quoting_with_blanks)
{
	struct result r;

	parse(&r, "\"my ia\" u1.2 threadsafe default \"/opt/my lib/l.so\" "
		  "dapl.1.2 \"a # b\tc\" \" \"\n");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 0);
	expect_entry(&r.e[0], "my ia", 'u', 1, 2, 1, 1, "/opt/my lib/l.so",
		     "dapl", 1, 2, "a # b\tc", " ", 1);
	done(&r);
}
END_TEST

START_TEST(test_escapes)
{
	struct result r;

	parse(&r,
	      "\"q\\\"n\" u1.2 threadsafe default \"c:\\\\dat\\\\x.so\" "
	      "dapl.1.2 \"\\a\\#\" \"\\\\\"\n"
	      "my\\ ia u1.2 threadsafe default \\#lib\\\"x dapl.1.2 a\\\\b "
	      "trail\\\n");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.nerr, 0);
	/* \" and \\ inside quotes; any other \x gives x */
	expect_entry(&r.e[0], "q\"n", 'u', 1, 2, 1, 1, "c:\\dat\\x.so",
		     "dapl", 1, 2, "a#", "\\", 1);
	/*
	 * Unquoted: "\ " is a space, "\#" does not start a comment, "\""
	 * does not start a quote; a backslash ending the line is literal.
	 */
	expect_entry(&r.e[1], "my ia", 'u', 1, 2, 1, 1, "#lib\"x", "dapl",
		     1, 2, "a\\b", "trail\\", 2);
	done(&r);
}
END_TEST

START_TEST(test_empty_fields)
{
	struct result r;

	parse(&r,
	      "a u1.2 threadsafe default l.so dapl.1.2 \"\" \"\"\n"
	      "\"\" u1.2 threadsafe default l.so dapl.1.2 \"\" \"\"\n"
	      "c u1.2 threadsafe default \"\" dapl.1.2 \"\" \"\"\n");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 2);
	expect_entry(&r.e[0], "a", 'u', 1, 2, 1, 1, "l.so", "dapl", 1, 2,
		     "", "", 1);
	expect_err_reason(&r, 0, 2, "ia_name", "empty");
	expect_err_reason(&r, 1, 3, "lib_path", "empty");
	done(&r);
}
END_TEST

START_TEST(test_missing_each_field)
{
	static const char *const tokens[] = {
		"a", "u1.2", "threadsafe", "default", "l.so", "dapl.1.2",
		"\"\"", "\"\"",
	};
	static const char *const names[] = {
		"ia_name", "api_version", "thread_safety", "default",
		"lib_path", "provider_version", "ia_params", "platform_params",
	};
	char line[256];
	size_t k, i;

	/* k good tokens, then the line ends (or a comment starts) */
	for (k = 1; k < 8; k++) {
		line[0] = '\0';
		for (i = 0; i < k; i++) {
			strcat(line, tokens[i]);
			strcat(line, " ");
		}
		strcat(line, (k & 1) ? "\n" : "# comment\n");
		expect_bad_line(line, names[k], "missing");
	}
}
END_TEST

START_TEST(test_bad_ia_name)
{
	expect_bad_line("\"\" u1.2 threadsafe default l.so dapl.1.2 \"\" \"\"",
			"ia_name", "empty");
	expect_bad_line("\"a u1.2 threadsafe default l.so dapl.1.2 x y",
			"ia_name", "unterminated quote");
}
END_TEST

START_TEST(test_bad_api_version)
{
	static const char *const bad[] = {
		"v1.2", "u", "u1", "u1.", "u.2", "U1.2", "u+1.2", "u-1.2",
		"u1.-2", "u1.2.3", "u1,2", "u 1.2", "u1.2x", "k0x1.2", "\"\"",
	};
	char line[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "a %s threadsafe default l.so dapl.1.2 \"\" \"\"\n",
			 bad[i]);
		expect_bad_line(line, "api_version", API_FORMAT);
	}
}
END_TEST

START_TEST(test_bad_thread_safety)
{
	static const char *const bad[] = {
		"threadsafeX", "thread", "ThreadSafe", "non", "\"\"",
		"nonthreadsafe-",
	};
	char line[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "a u1.2 %s default l.so dapl.1.2 \"\" \"\"\n", bad[i]);
		expect_bad_line(line, "thread_safety",
				"expected threadsafe or nonthreadsafe");
	}
}
END_TEST

START_TEST(test_bad_default)
{
	static const char *const bad[] = {
		"Default", "defaults", "non", "nondefaultx", "\"\"",
	};
	char line[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "a u1.2 threadsafe %s l.so dapl.1.2 \"\" \"\"\n",
			 bad[i]);
		expect_bad_line(line, "default",
				"expected default or nondefault");
	}
}
END_TEST

START_TEST(test_bad_lib_path)
{
	expect_bad_line("a u1.2 threadsafe default \"\" dapl.1.2 \"\" \"\"\n",
			"lib_path", "empty");
	expect_bad_line("a u1.2 threadsafe default \"l.so dapl.1.2 \"\" \"\"\n",
			"lib_path", "unexpected text after closing quote");
	expect_bad_line("a u1.2 threadsafe default \"l.so\n",
			"lib_path", "unterminated quote");
}
END_TEST

START_TEST(test_bad_provider_version)
{
	static const char *const bad[] = {
		"dapl", "dapl.1", "1.2", ".1.2", "dapl..2", "dapl.1.",
		"dapl.1.x", "dapl.+1.2", "dapl.1.2.", "dapl.1.2a", "\"\"",
		"...",
	};
	char line[256];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(line, sizeof(line),
			 "a u1.2 threadsafe default l.so %s \"\" \"\"\n",
			 bad[i]);
		expect_bad_line(line, "provider_version",
				"expected <id>.<major>.<minor>");
	}
}
END_TEST

START_TEST(test_provider_id_with_dots)
{
	struct result r;

	parse(&r, "a u1.2 threadsafe default l.so mv.dapl.1.2 \"\" \"\"\n"
		  "b u1.2 threadsafe default l.so SUNW.1.0 \"\" \"\"\n");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.nerr, 0);
	expect_entry(&r.e[0], "a", 'u', 1, 2, 1, 1, "l.so", "mv.dapl", 1, 2,
		     "", "", 1);
	expect_entry(&r.e[1], "b", 'u', 1, 2, 1, 1, "l.so", "SUNW", 1, 0,
		     "", "", 2);
	done(&r);
}
END_TEST

START_TEST(test_bad_ia_params)
{
	/* Any token is a valid ia_params: only quoting can break it. */
	expect_bad_line("a u1.2 threadsafe default l.so dapl.1.2 \"ib0 0\n",
			"ia_params", "unterminated quote");
	expect_bad_line("a u1.2 threadsafe default l.so dapl.1.2 \"ib0\"0 x\n",
			"ia_params", "unexpected text after closing quote");
}
END_TEST

START_TEST(test_bad_platform_params)
{
	expect_bad_line("a u1.2 threadsafe default l.so dapl.1.2 \"\" \"x\n",
			"platform_params", "unterminated quote");
	expect_bad_line("a u1.2 threadsafe default l.so dapl.1.2 \"\" \"\"x\n",
			"platform_params",
			"unexpected text after closing quote");
}
END_TEST

START_TEST(test_extra_text)
{
	struct result r;

	expect_bad_line(GOOD_CMA " extra\n", "end of line",
			"unexpected text after the 8th field");
	expect_bad_line(GOOD_CMA " \"extra\n", "end of line",
			"unexpected text after the 8th field");

	parse(&r, GOOD_CMA " # a comment is fine\n" GOOD_CMA "\t#\n");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.nerr, 0);
	done(&r);
}
END_TEST

START_TEST(test_unterminated_quote_then_good_line)
{
	struct result r;

	parse(&r, "a u1.2 threadsafe default l.so dapl.1.2 \"ib0 0\" \"\n"
		  GOOD_CMA "\n");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 1);
	/* "ib0 0" closes, then "<LF> is an unterminated platform_params */
	expect_err_reason(&r, 0, 1, "platform_params", "unterminated quote");
	expect_entry(&r.e[0], "OpenIB-cma", 'u', 1, 2, 0, 1, "libdaplcma.so.1",
		     "dapl", 1, 2, "ib0 0", "", 2);
	done(&r);

	/* a quote ending in a backslash does not close */
	parse(&r, "\"a\\\" u1.2\n" GOOD_CMA);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 1);
	expect_err_reason(&r, 0, 1, "ia_name", "unterminated quote");
	ck_assert_uint_eq(r.e[0].line, 2);
	done(&r);
}
END_TEST

START_TEST(test_crlf)
{
	struct result r;

	parse(&r, "# comment\r\n"
		  "\r\n"
		  GOOD_CMA "\r\n"
		  "b\ru1.2 threadsafe default l\\ so dapl.1.2 x y\r\n"
		  "c u1.2 threadsafe default l.so dapl.1.2 x \"y\r\n"
		  "d u1.2 threadsafe default l.so dapl.1.2 x y\\\r");
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(r.nerr, 1);
	expect_entry(&r.e[0], "OpenIB-cma", 'u', 1, 2, 0, 1, "libdaplcma.so.1",
		     "dapl", 1, 2, "ib0 0", "", 3);
	/* mid-line CR is a blank; a backslash before the last CR is literal */
	expect_entry(&r.e[1], "b", 'u', 1, 2, 1, 1, "l so", "dapl", 1, 2,
		     "x", "y", 4);
	expect_err_reason(&r, 0, 5, "platform_params", "unterminated quote");
	expect_entry(&r.e[2], "d", 'u', 1, 2, 1, 1, "l.so", "dapl", 1, 2,
		     "x", "y\\", 6);
	done(&r);
}
END_TEST

START_TEST(test_no_trailing_newline)
{
	struct result r;

	parse(&r, "# x\n" GOOD_CMA);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 0);
	expect_entry(&r.e[0], "OpenIB-cma", 'u', 1, 2, 0, 1, "libdaplcma.so.1",
		     "dapl", 1, 2, "ib0 0", "", 2);
	done(&r);

	/* the last line can also be broken without a newline */
	parse(&r, GOOD_CMA "\na u1.2");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 1);
	expect_err(&r, 0, 2, "thread_safety");
	done(&r);
}
END_TEST

START_TEST(test_empty_file)
{
	struct result r;

	parse_n(&r, "", 0);
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.nerr, 0);
	done(&r);

	/* len 0 means nothing is read, whatever the pointer */
	parse_n(&r, GOOD_CMA, 0);
	ck_assert_uint_eq(r.n, 0);
	done(&r);

	parse_n(&r, NULL, 0);
	ck_assert_uint_eq(r.n, 0);
	done(&r);
}
END_TEST

START_TEST(test_whitespace_only_file)
{
	struct result r;

	parse(&r, " \t\r\n\n\r\n   \t\t \n\r \t");
	ck_assert_uint_eq(r.n, 0);
	ck_assert_uint_eq(r.nerr, 0);
	done(&r);
}
END_TEST

START_TEST(test_name_length)
{
	char text[1024];
	struct result r;
	char name[257];

	memset(name, 'n', 255);
	name[255] = '\0';
	snprintf(text, sizeof(text),
		 "%s u1.2 threadsafe default l.so dapl.1.2 x y\n"
		 "%sN u1.2 threadsafe default l.so dapl.1.2 x y\n", name, name);
	parse(&r, text);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 1);
	expect_entry(&r.e[0], name, 'u', 1, 2, 1, 1, "l.so", "dapl", 1, 2,
		     "x", "y", 1);
	expect_err_reason(&r, 0, 2, "ia_name", "name too long (max 255)");
	done(&r);
}
END_TEST

START_TEST(test_token_length_limit)
{
	const size_t max = 64 * 1024;
	const char *head = "a u1.2 threadsafe default ";
	const char *tail = " dapl.1.2 x y\n";
	size_t hl = strlen(head), tl = strlen(tail);
	char *text = malloc(2 * (hl + max + 1 + tl));
	size_t pos = 0;
	struct result r;

	ck_assert_ptr_nonnull(text);
	/* line 1: 64 KiB lib_path, accepted; line 2: one byte more */
	memcpy(text + pos, head, hl);
	pos += hl;
	memset(text + pos, 'L', max);
	pos += max;
	memcpy(text + pos, tail, tl);
	pos += tl;
	memcpy(text + pos, head, hl);
	pos += hl;
	memset(text + pos, 'L', max + 1);
	pos += max + 1;
	memcpy(text + pos, tail, tl);
	pos += tl;

	parse_n(&r, text, pos);
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 1);
	ck_assert_uint_eq(strlen(r.e[0].lib_path), max);
	ck_assert_uint_eq(r.e[0].line, 1);
	expect_err_reason(&r, 0, 2, "lib_path", "too long");
	done(&r);
	free(text);
}
END_TEST

START_TEST(test_kdat_and_nondefault_returned)
{
	struct result r;

	parse(&r, "kia k1.2 threadsafe default libk.so dapl.1.2 \"\" \"\"\n"
		  "nd u1.2 nonthreadsafe nondefault libn.so dapl.1.2 a b\n");
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.nerr, 0);
	expect_entry(&r.e[0], "kia", 'k', 1, 2, 1, 1, "libk.so", "dapl", 1, 2,
		     "", "", 1);
	expect_entry(&r.e[1], "nd", 'u', 1, 2, 0, 0, "libn.so", "dapl", 1, 2,
		     "a", "b", 2);
	done(&r);
}
END_TEST

START_TEST(test_version_overflow)
{
	struct result r;

	parse(&r,
	      "a u4294967295.0004294967295 threadsafe default l "
	      "dapl.4294967295.0 x y\n"
	      "b u4294967296.0 threadsafe default l dapl.1.2 x y\n"
	      "c u1.99999999999999999999 threadsafe default l dapl.1.2 x y\n"
	      "d u1.2 threadsafe default l dapl.4294967296.2 x y\n"
	      "e u1.2 threadsafe default l dapl.1.42949672950 x y\n"
	      "f u1x.99999999999 threadsafe default l dapl.1.2 x y\n");
	ck_assert_uint_eq(r.n, 1);
	ck_assert_uint_eq(r.nerr, 5);
	expect_entry(&r.e[0], "a", 'u', 4294967295u, 4294967295u, 1, 1, "l",
		     "dapl", 4294967295u, 0, "x", "y", 1);
	expect_err_reason(&r, 0, 2, "api_version", "version number too large");
	expect_err_reason(&r, 1, 3, "api_version", "version number too large");
	expect_err_reason(&r, 2, 4, "provider_version",
			  "version number too large");
	expect_err_reason(&r, 3, 5, "provider_version",
			  "version number too large");
	/* a malformed number is a format error even if it is also huge */
	expect_err_reason(&r, 4, 6, "api_version", API_FORMAT);
	done(&r);
}
END_TEST

START_TEST(test_nul_byte)
{
	static const char text[] =
		"a u1.2 threadsafe default l\0b.so dapl.1.2 x y\n"
		"\0 u1.2 threadsafe default l.so dapl.1.2 x y\n"
		"c u1.2 threadsafe default l.so dapl.1.2 \"\0\" y\n"
		"d u1.2 threadsafe default l.so dapl.1.2 x y # \0 in comment\n"
		"e u1.2 threadsafe default l.so dapl.1.2 x y \0\n"
		GOOD_CMA "\n";
	struct result r;

	parse_n(&r, text, sizeof(text) - 1);
	ck_assert_uint_eq(r.n, 2);
	ck_assert_uint_eq(r.nerr, 4);
	expect_err_reason(&r, 0, 1, "lib_path", "contains a NUL byte");
	expect_err_reason(&r, 1, 2, "ia_name", "contains a NUL byte");
	expect_err_reason(&r, 2, 3, "ia_params", "contains a NUL byte");
	expect_err_reason(&r, 3, 5, "end of line",
			  "unexpected text after the 8th field");
	expect_entry(&r.e[0], "d", 'u', 1, 2, 1, 1, "l.so", "dapl", 1, 2,
		     "x", "y", 4);
	expect_entry(&r.e[1], "OpenIB-cma", 'u', 1, 2, 0, 1, "libdaplcma.so.1",
		     "dapl", 1, 2, "ib0 0", "", 6);
	done(&r);
}
END_TEST

START_TEST(test_three_good_three_bad)
{
	struct result r;

	parse(&r,
	      GOOD_CMA "\n"
	      "bad1 u1.2 threadsafe maybe l.so dapl.1.2 x y\n"
	      "g2 u1.2 threadsafe default l2.so dapl.1.2 x y\n"
	      "bad2 u1.2 threadsafe default l.so dapl.1.2\n"
	      "# comment\n"
	      "bad3 x1.2 threadsafe default l.so dapl.1.2 x y\n"
	      "g3 k2.0 nonthreadsafe nondefault l3.so dapl.2.0 x y\n");
	ck_assert_uint_eq(r.n, 3);
	ck_assert_uint_eq(r.nerr, 3);
	ck_assert_str_eq(r.e[0].ia_name, "OpenIB-cma");
	ck_assert_uint_eq(r.e[0].line, 1);
	expect_entry(&r.e[1], "g2", 'u', 1, 2, 1, 1, "l2.so", "dapl", 1, 2,
		     "x", "y", 3);
	expect_entry(&r.e[2], "g3", 'k', 2, 0, 0, 0, "l3.so", "dapl", 2, 0,
		     "x", "y", 7);
	expect_err(&r, 0, 2, "default");
	expect_err(&r, 1, 4, "ia_params");
	expect_err(&r, 2, 6, "api_version");
	done(&r);
}
END_TEST

START_TEST(test_first_error_only)
{
	/* every field is wrong; only the first is reported */
	expect_bad_line("\"\" x threadsafeX defaultX \"\" dapl \"a \"b\n",
			"ia_name", "empty");
	expect_bad_line("a x threadsafeX defaultX \"\" dapl \"a \"b extra\n",
			"api_version", NULL);
}
END_TEST

START_TEST(test_null_callback)
{
	struct dat_conf_entry *e;
	size_t n;

	ck_assert_int_eq(dat_conf_parse("x\n" GOOD_CMA "\n\"\n",
					strlen("x\n" GOOD_CMA "\n\"\n"), &e,
					&n, NULL, NULL), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(e[0].line, 2);
	dat_conf_free(e, n);
	dat_conf_free(NULL, 0);
}
END_TEST

/* xorshift32: deterministic, so a failure is reproducible */
static uint32_t next_rand(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

START_TEST(test_random_garbage)
{
	/* pieces that make the garbage look like dat.conf now and then */
	static const char *const pieces[] = {
		" ", "\t", "\n", "\r\n", "\"", "\\", "#", "\0", "u1.2", "k1.2",
		"threadsafe", "nonthreadsafe", "default", "nondefault",
		"l.so", "dapl.1.2", "\"\"", "a", ".", "99999999999",
	};
	uint32_t seed = 0x2545f491u;
	char buf[2048];
	int iter;

	for (iter = 0; iter < 200; iter++) {
		size_t len = next_rand(&seed) % sizeof(buf);
		size_t pos = 0;
		struct result r;

		while (pos < len) {
			uint32_t v = next_rand(&seed);

			if (iter % 2 == 0 || v % 3 == 0) {
				buf[pos++] = (char)(v >> 8);
			} else {
				const char *p = pieces[(v >> 8) %
					(sizeof(pieces) / sizeof(pieces[0]))];
				size_t pl = *p ? strlen(p) : 1;

				if (pl > len - pos)
					pl = len - pos;
				memcpy(buf + pos, p, pl);
				pos += pl;
			}
		}
		parse_n(&r, buf, len);
		check_invariants(&r);
		done(&r);
	}
}
END_TEST

static Suite *conf_suite(void)
{
	Suite *s = suite_create("conf");
	TCase *tc = tcase_create("parse");

	tcase_add_test(tc, test_good_line);
	tcase_add_test(tc, test_multiple_lines);
	tcase_add_test(tc, test_comments_and_blank_lines);
	tcase_add_test(tc, test_quoting_with_blanks);
	tcase_add_test(tc, test_escapes);
	tcase_add_test(tc, test_empty_fields);
	tcase_add_test(tc, test_missing_each_field);
	tcase_add_test(tc, test_bad_ia_name);
	tcase_add_test(tc, test_bad_api_version);
	tcase_add_test(tc, test_bad_thread_safety);
	tcase_add_test(tc, test_bad_default);
	tcase_add_test(tc, test_bad_lib_path);
	tcase_add_test(tc, test_bad_provider_version);
	tcase_add_test(tc, test_provider_id_with_dots);
	tcase_add_test(tc, test_bad_ia_params);
	tcase_add_test(tc, test_bad_platform_params);
	tcase_add_test(tc, test_extra_text);
	tcase_add_test(tc, test_unterminated_quote_then_good_line);
	tcase_add_test(tc, test_crlf);
	tcase_add_test(tc, test_no_trailing_newline);
	tcase_add_test(tc, test_empty_file);
	tcase_add_test(tc, test_whitespace_only_file);
	tcase_add_test(tc, test_name_length);
	tcase_add_test(tc, test_token_length_limit);
	tcase_add_test(tc, test_kdat_and_nondefault_returned);
	tcase_add_test(tc, test_version_overflow);
	tcase_add_test(tc, test_nul_byte);
	tcase_add_test(tc, test_three_good_three_bad);
	tcase_add_test(tc, test_first_error_only);
	tcase_add_test(tc, test_null_callback);
	tcase_add_test(tc, test_random_garbage);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(conf_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
