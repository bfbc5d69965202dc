/*
 * dat.conf parser.
 *
 * One entry per line, eight blank-separated fields:
 *
 *   <ia_name> <api_version> <threadsafety> <default> <lib_path>
 *   <provider_version> <ia_params> <platform_params>
 *
 * The input is split into lines first.  A quoted token can never span a
 * newline, so every error is confined to its own line and "skip the rest of
 * the line" is simply "go on with the next one".  Each line is then cut into
 * tokens by next_token() and each token is checked by the validator of its
 * field (the fields[] table).  The first problem on a line is reported and
 * the line is dropped; nothing else is ever reported for it.
 *
 * Nothing here touches global state, so concurrent calls are safe.
 */
#include "conf.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/*
 * Upper bound on the decoded length of one token.  Real lines are a few
 * dozen bytes; the bound only exists so that a hostile file cannot make us
 * keep arbitrarily large strings, and it also bounds the scratch buffer.
 */
#define TOKEN_MAX 65536

#define NFIELDS 8

enum tok_status {
	TOK_OK,
	TOK_NONE,		/* end of line or start of a comment */
	TOK_UNTERMINATED,	/* line ended inside a quoted token */
	TOK_AFTER_QUOTE,	/* closing quote not followed by a blank */
	TOK_TOO_LONG,		/* more than TOKEN_MAX bytes */
};

/* The part of the current line that has not been tokenized yet. */
struct cursor {
	const char *p;
	const char *end;	/* excludes the '\n' (and a '\r' before it) */
};

/* Where next_token() puts the decoded token. */
struct scratch {
	char *buf;		/* cap + 1 bytes, NUL-terminated after use */
	size_t cap;
	size_t len;
};

struct parser {
	struct scratch tok;
	struct dat_conf_entry *v;
	size_t count;
	size_t cap;
	dat_conf_error_fn err;
	void *arg;
};

enum check_result {
	CHECK_NOMEM = -1,
	CHECK_OK = 0,
	CHECK_BAD = 1,		/* *reason says why */
};

/* tok is NUL-terminated and NUL-free; n == strlen(tok). */
typedef enum check_result (*check_fn)(struct dat_conf_entry *e,
				      const char *tok, size_t n,
				      const char **reason);

static int is_blank(char c)
{
	/* '\r' is a blank too, so stray carriage returns do no harm. */
	return c == ' ' || c == '\t' || c == '\r';
}

/*
 * Decodes the next token of the line into s.  A token starting with '"'
 * runs to the next unescaped '"'; otherwise it runs to the next blank.  In
 * both kinds a backslash takes the next byte literally ("\ " is a space).
 * A '#' starts a comment only where a token would start, so "lib#1.so" is
 * one token.  A backslash that is the last byte of an unquoted token at the
 * end of the line has nothing to escape and is kept as is.
 */
static enum tok_status next_token(struct cursor *c, struct scratch *s)
{
	size_t n = 0;
	int quoted;

	while (c->p < c->end && is_blank(*c->p))
		c->p++;
	if (c->p == c->end || *c->p == '#')
		return TOK_NONE;

	quoted = *c->p == '"';
	if (quoted)
		c->p++;

	for (;;) {
		char ch;

		if (c->p == c->end) {
			if (quoted)
				return TOK_UNTERMINATED;
			break;
		}
		ch = *c->p;
		if (quoted && ch == '"') {
			c->p++;
			/*
			 * "ab"cd is neither one token nor clearly two: refuse
			 * it rather than guess.
			 */
			if (c->p < c->end && !is_blank(*c->p))
				return TOK_AFTER_QUOTE;
			break;
		}
		if (!quoted && is_blank(ch))
			break;
		c->p++;
		if (ch == '\\' && c->p < c->end)
			ch = *c->p++;
		/*
		 * A token never decodes to more bytes than the input holds,
		 * and cap is min(input length, TOKEN_MAX), so running out of
		 * room means the token is over TOKEN_MAX.
		 */
		if (n >= s->cap)
			return TOK_TOO_LONG;
		s->buf[n++] = ch;
	}
	s->buf[n] = '\0';
	s->len = n;
	return TOK_OK;
}

static const char *tok_reason(enum tok_status st)
{
	switch (st) {
	case TOK_UNTERMINATED:
		return "unterminated quote";
	case TOK_AFTER_QUOTE:
		return "unexpected text after closing quote";
	case TOK_TOO_LONG:
		return "too long";
	case TOK_NONE:
	case TOK_OK:
		break;
	}
	return "missing";
}

static char *copy_string(const char *s, size_t n)
{
	char *d = malloc(n + 1);

	if (d) {
		memcpy(d, s, n);
		d[n] = '\0';
	}
	return d;
}

enum num_result { NUM_OK, NUM_BAD, NUM_OVERFLOW };

/* Non-empty run of decimal digits (no sign, no blanks) that fits unsigned. */
static enum num_result parse_unsigned(const char *s, size_t n, unsigned *out)
{
	unsigned v = 0;
	size_t i;

	if (n == 0)
		return NUM_BAD;
	for (i = 0; i < n; i++)
		if (s[i] < '0' || s[i] > '9')
			return NUM_BAD;
	for (i = 0; i < n; i++) {
		unsigned d = (unsigned)(s[i] - '0');

		if (v > (UINT_MAX - d) / 10)
			return NUM_OVERFLOW;
		v = v * 10 + d;
	}
	*out = v;
	return NUM_OK;
}

/*
 * Parses "<major>.<minor>" given as the two ranges around a dot.  Format
 * errors win over overflow so that "1x.99999999999" says "expected ...".
 */
static enum check_result parse_pair(const char *maj, size_t nmaj,
				    const char *min, size_t nmin,
				    unsigned *major, unsigned *minor,
				    const char *format, const char **reason)
{
	enum num_result a = parse_unsigned(maj, nmaj, major);
	enum num_result b = parse_unsigned(min, nmin, minor);

	if (a == NUM_BAD || b == NUM_BAD) {
		*reason = format;
		return CHECK_BAD;
	}
	if (a == NUM_OVERFLOW || b == NUM_OVERFLOW) {
		*reason = "version number too large";
		return CHECK_BAD;
	}
	return CHECK_OK;
}

static enum check_result check_ia_name(struct dat_conf_entry *e,
				       const char *tok, size_t n,
				       const char **reason)
{
	if (n == 0) {
		*reason = "empty";
		return CHECK_BAD;
	}
	/* The name must fit in DAT_NAME_MAX_LENGTH with its NUL. */
	if (n >= DAT_CONF_NAME_MAX) {
		*reason = "name too long (max 255)";
		return CHECK_BAD;
	}
	memcpy(e->ia_name, tok, n + 1);
	return CHECK_OK;
}

static enum check_result check_api_version(struct dat_conf_entry *e,
					   const char *tok, size_t n,
					   const char **reason)
{
	static const char format[] =
		"expected u<major>.<minor> or k<major>.<minor>";
	const char *dot;

	if (n < 1 || (tok[0] != 'u' && tok[0] != 'k')) {
		*reason = format;
		return CHECK_BAD;
	}
	dot = strchr(tok + 1, '.');
	if (!dot) {
		*reason = format;
		return CHECK_BAD;
	}
	e->api_type = tok[0];
	return parse_pair(tok + 1, (size_t)(dot - tok - 1), dot + 1,
			  (size_t)(tok + n - dot - 1), &e->api_major,
			  &e->api_minor, format, reason);
}

static enum check_result check_thread_safety(struct dat_conf_entry *e,
					     const char *tok, size_t n,
					     const char **reason)
{
	(void)n;
	if (strcmp(tok, "threadsafe") == 0) {
		e->thread_safe = 1;
	} else if (strcmp(tok, "nonthreadsafe") == 0) {
		e->thread_safe = 0;
	} else {
		*reason = "expected threadsafe or nonthreadsafe";
		return CHECK_BAD;
	}
	return CHECK_OK;
}

static enum check_result check_default(struct dat_conf_entry *e,
				       const char *tok, size_t n,
				       const char **reason)
{
	(void)n;
	if (strcmp(tok, "default") == 0) {
		e->is_default = 1;
	} else if (strcmp(tok, "nondefault") == 0) {
		e->is_default = 0;
	} else {
		*reason = "expected default or nondefault";
		return CHECK_BAD;
	}
	return CHECK_OK;
}

static enum check_result check_lib_path(struct dat_conf_entry *e,
					const char *tok, size_t n,
					const char **reason)
{
	if (n == 0) {
		*reason = "empty";
		return CHECK_BAD;
	}
	e->lib_path = copy_string(tok, n);
	return e->lib_path ? CHECK_OK : CHECK_NOMEM;
}

/*
 * "<id>.<major>.<minor>": the id may contain dots itself ("mv.dapl.1.2"),
 * so the version is the last two dot-separated parts.
 */
static enum check_result check_provider_version(struct dat_conf_entry *e,
						const char *tok, size_t n,
						const char **reason)
{
	static const char format[] = "expected <id>.<major>.<minor>";
	const char *last = strrchr(tok, '.');
	const char *prev = NULL;
	const char *q;
	enum check_result r;

	if (last)
		for (q = tok; q < last; q++)
			if (*q == '.')
				prev = q;
	if (!prev || prev == tok) {
		*reason = format;
		return CHECK_BAD;
	}
	r = parse_pair(prev + 1, (size_t)(last - prev - 1), last + 1,
		       (size_t)(tok + n - last - 1), &e->provider_major,
		       &e->provider_minor, format, reason);
	if (r != CHECK_OK)
		return r;
	e->provider_id = copy_string(tok, (size_t)(prev - tok));
	return e->provider_id ? CHECK_OK : CHECK_NOMEM;
}

static enum check_result check_ia_params(struct dat_conf_entry *e,
					 const char *tok, size_t n,
					 const char **reason)
{
	(void)reason;
	e->ia_params = copy_string(tok, n);
	return e->ia_params ? CHECK_OK : CHECK_NOMEM;
}

static enum check_result check_platform_params(struct dat_conf_entry *e,
					       const char *tok, size_t n,
					       const char **reason)
{
	(void)reason;
	e->platform_params = copy_string(tok, n);
	return e->platform_params ? CHECK_OK : CHECK_NOMEM;
}

/* In line order; the names are the ones the error callback reports. */
static const struct {
	const char *name;
	check_fn check;
} fields[NFIELDS] = {
	{ "ia_name", check_ia_name },
	{ "api_version", check_api_version },
	{ "thread_safety", check_thread_safety },
	{ "default", check_default },
	{ "lib_path", check_lib_path },
	{ "provider_version", check_provider_version },
	{ "ia_params", check_ia_params },
	{ "platform_params", check_platform_params },
};

static void free_entry(struct dat_conf_entry *e)
{
	free(e->lib_path);
	free(e->provider_id);
	free(e->ia_params);
	free(e->platform_params);
}

static int push_entry(struct parser *ps, const struct dat_conf_entry *e)
{
	if (ps->count == ps->cap) {
		size_t cap = ps->cap ? ps->cap * 2 : 8;
		struct dat_conf_entry *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return -1;
		v = realloc(ps->v, cap * sizeof(*v));
		if (!v)
			return -1;
		ps->v = v;
		ps->cap = cap;
	}
	ps->v[ps->count++] = *e;
	return 0;
}

/* Returns -1 on allocation failure, else 0 (whether or not the line was ok). */
static int parse_line(struct parser *ps, struct cursor *c, unsigned line)
{
	struct dat_conf_entry e;
	const char *field = NULL;
	const char *reason = NULL;
	enum tok_status st;
	size_t i;

	memset(&e, 0, sizeof(e));
	e.line = line;

	for (i = 0; i < NFIELDS; i++) {
		st = next_token(c, &ps->tok);
		if (st == TOK_NONE && i == 0)
			return 0;	/* blank or comment-only line */
		if (st != TOK_OK) {
			reason = tok_reason(st);
		} else if (memchr(ps->tok.buf, '\0', ps->tok.len)) {
			/* Would silently truncate the C string: refuse. */
			reason = "contains a NUL byte";
		} else if (fields[i].check(&e, ps->tok.buf, ps->tok.len,
					   &reason) == CHECK_NOMEM) {
			free_entry(&e);
			return -1;
		}
		if (reason) {
			field = fields[i].name;
			goto bad;
		}
	}

	/* Anything but end of line or a comment is an error. */
	if (next_token(c, &ps->tok) != TOK_NONE) {
		field = "end of line";
		reason = "unexpected text after the 8th field";
		goto bad;
	}

	if (push_entry(ps, &e) < 0) {
		free_entry(&e);
		return -1;
	}
	return 0;

bad:
	free_entry(&e);
	if (ps->err)
		ps->err(ps->arg, line, field, reason);
	return 0;
}

int dat_conf_parse(const char *text, size_t len, struct dat_conf_entry **entries,
		   size_t *count, dat_conf_error_fn err, void *arg)
{
	struct parser ps;
	const char *p = text;
	const char *end;
	unsigned line = 0;

	*entries = NULL;
	*count = 0;
	if (!text || len == 0)
		return 0;
	end = text + len;

	memset(&ps, 0, sizeof(ps));
	ps.err = err;
	ps.arg = arg;
	ps.tok.cap = len < TOKEN_MAX ? len : TOKEN_MAX;
	ps.tok.buf = malloc(ps.tok.cap + 1);
	if (!ps.tok.buf)
		return -1;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		struct cursor c = { p, nl ? nl : end };

		/* A CRLF line ends exactly like an LF line. */
		if (c.end > c.p && c.end[-1] == '\r')
			c.end--;
		/* Saturate rather than wrap on absurdly long inputs. */
		if (line < UINT_MAX)
			line++;
		if (parse_line(&ps, &c, line) < 0)
			goto nomem;
		p = nl ? nl + 1 : end;
	}

	free(ps.tok.buf);
	*entries = ps.v;
	*count = ps.count;
	return 0;

nomem:
	free(ps.tok.buf);
	dat_conf_free(ps.v, ps.count);
	return -1;
}

void dat_conf_free(struct dat_conf_entry *entries, size_t count)
{
	size_t i;

	if (!entries)
		return;
	for (i = 0; i < count; i++)
		free_entry(&entries[i]);
	free(entries);
}
