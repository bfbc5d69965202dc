/*
 * Helpers shared by dapltest's -T L (limit) and -T F (feature) tests:
 * the common options (-D -d -R -n), a small option scanner that leaves
 * getopt's global state alone (dapltest's main has used it already),
 * strict number parsing and DAT_RETURN formatting.
 */
#ifndef DAPLTEST_DT_LF_UTIL_H
#define DAPLTEST_DT_LF_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <dat/udat.h>

/* IA used when -D is not given. */
#define DT_DEFAULT_IA "ofi-tcp"

/* Longest text dt_rc_text() writes, terminator included. */
#define DT_RC_TEXT_MAX 128

/* Options every test type takes. */
struct dt_common_opts {
	char *ia_name;		/* -D (DAT_NAME_PTR is not const) */
	int debug;		/* -d, repeatable */
	DAT_QOS qos;		/* -R */
	const char *qos_name;
	unsigned long port;	/* -n (0: not given) */
};

void dt_common_opts_init(struct dt_common_opts *o);

/*
 * One pass over argv[1..] in POSIX style: options first, then operands.
 * dt_opt_next() returns the option letter (its argument, if any, in
 * ->arg), -1 at the first operand or after "--" (->ind is then the first
 * operand), or '?' after printing why the option is wrong to stderr.
 */
struct dt_opt_scan {
	int argc;
	char **argv;
	int ind;
	int pos;	/* inside a word of grouped flags (-dd) */
	char *arg;
};

void dt_opt_begin(struct dt_opt_scan *s, int argc, char **argv);
int dt_opt_next(struct dt_opt_scan *s, const char *optstring);

/*
 * Handles -D, -d, -R and -n for any test type.  Returns 1 when the
 * option was one of those, 0 when it is not, -1 when its value is bad
 * (the reason is printed to stderr).
 */
int dt_common_opt(struct dt_common_opts *o, int letter, char *arg);

/* Decimal number in [min, max], nothing else around it. */
bool dt_parse_ulong(const char *text, unsigned long min, unsigned long max,
		    unsigned long *value);

/* BE, HT, LL, EC or PM (as dapltest's -R). */
bool dt_parse_qos(const char *text, DAT_QOS *qos);

/*
 * "DAT_TYPE (DAT_SUBTYPE) [0x...]" for a DAT_RETURN (the number shows
 * the class bits), "DAT_SUCCESS", or "0x... (not a DAT 1.2 status)" when
 * dat_strerror() cannot name it.  Returns buf.
 */
const char *dt_rc_text(DAT_RETURN rc, char buf[DT_RC_TEXT_MAX]);

/* An error status that dat_strerror() can name (class bit set). */
bool dt_rc_is_named_error(DAT_RETURN rc);

/* Name of a DAT_EVENT_NUMBER ("DAT_CONNECTION_EVENT_ESTABLISHED"). */
const char *dt_event_name(DAT_EVENT_NUMBER number);

/* Monotonic clock in microseconds. */
unsigned long long dt_now_us(void);

#endif
