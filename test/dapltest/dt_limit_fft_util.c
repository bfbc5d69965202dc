/*
 * Helpers shared by dapltest's limit (-T L) and feature (-T F) tests;
 * see dt_lf_util.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_lf_util.h"

void dt_common_opts_init(struct dt_common_opts *o)
{
	static char default_ia[] = DT_DEFAULT_IA;

	o->ia_name = default_ia;
	o->debug = 0;
	o->qos = DAT_QOS_BEST_EFFORT;
	o->qos_name = "BE";
	o->port = 0;
}

void dt_opt_begin(struct dt_opt_scan *s, int argc, char **argv)
{
	s->argc = argc;
	s->argv = argv;
	s->ind = 1;
	s->pos = 0;
	s->arg = NULL;
}

int dt_opt_next(struct dt_opt_scan *s, const char *optstring)
{
	char *word, letter;
	const char *spec;

	s->arg = NULL;
	if (s->pos == 0) {		/* at the start of a word */
		if (s->ind >= s->argc)
			return -1;
		word = s->argv[s->ind];
		if (word[0] != '-' || word[1] == '\0')
			return -1;	/* first operand */
		if (strcmp(word, "--") == 0) {
			s->ind++;
			return -1;
		}
		s->pos = 1;
	}
	word = s->argv[s->ind];
	letter = word[s->pos];
	spec = letter != ':' ? strchr(optstring, letter) : NULL;
	if (!spec) {
		fprintf(stderr, "dapltest: unknown option '-%c' in '%s'\n",
			letter, word);
		return '?';
	}
	if (spec[1] != ':') {		/* a flag: -d, or grouped, -dd */
		if (word[++s->pos] == '\0') {
			s->pos = 0;
			s->ind++;
		}
		return letter;
	}
	/* an option with a value: first in its word (-w 8, -w8), never
	 * after grouped flags */
	if (s->pos != 1) {
		fprintf(stderr, "dapltest: option -%c cannot follow other "
			"options in '%s'\n", letter, word);
		return '?';
	}
	s->pos = 0;
	s->ind++;
	if (word[2] != '\0') {
		s->arg = word + 2;
		return letter;
	}
	if (s->ind >= s->argc) {
		fprintf(stderr, "dapltest: option -%c needs a value\n",
			letter);
		return '?';
	}
	s->arg = s->argv[s->ind++];
	return letter;
}

bool dt_parse_ulong(const char *text, unsigned long min, unsigned long max,
		    unsigned long *value)
{
	unsigned long v;
	char *end;

	if (!text || text[0] < '0' || text[0] > '9')
		return false;	/* no sign, no blanks, no empty string */
	errno = 0;
	v = strtoul(text, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return false;
	*value = v;
	return true;
}

bool dt_parse_qos(const char *text, DAT_QOS *qos)
{
	static const struct {
		const char *name;
		DAT_QOS qos;
	} names[] = {
		{ "BE", DAT_QOS_BEST_EFFORT },
		{ "HT", DAT_QOS_HIGH_THROUGHPUT },
		{ "LL", DAT_QOS_LOW_LATENCY },
		{ "EC", DAT_QOS_ECONOMY },
		{ "PM", DAT_QOS_PREMIUM },
	};
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(text, names[i].name) == 0) {
			*qos = names[i].qos;
			return true;
		}
	}
	return false;
}

int dt_common_opt(struct dt_common_opts *o, int letter, char *arg)
{
	switch (letter) {
	case 'D':
		/* dat_ia_open takes names below DAT_NAME_MAX_LENGTH bytes. */
		if (arg[0] == '\0' || strlen(arg) >= DAT_NAME_MAX_LENGTH) {
			fprintf(stderr, "dapltest: -D needs an IA name of 1 "
				"to %d characters\n", DAT_NAME_MAX_LENGTH - 1);
			return -1;
		}
		o->ia_name = arg;
		return 1;
	case 'd':
		o->debug++;
		return 1;
	case 'R':
		if (!dt_parse_qos(arg, &o->qos)) {
			fprintf(stderr, "dapltest: -R takes BE, HT, LL, EC or "
				"PM, not '%s'\n", arg);
			return -1;
		}
		o->qos_name = arg;
		return 1;
	case 'n':
		if (!dt_parse_ulong(arg, 1, 65535, &o->port)) {
			fprintf(stderr, "dapltest: -n takes a port number "
				"1..65535, not '%s'\n", arg);
			return -1;
		}
		return 1;
	default:
		return 0;
	}
}

const char *dt_rc_text(DAT_RETURN rc, char buf[DT_RC_TEXT_MAX])
{
	const char *type, *sub;

	if (dat_strerror(rc, &type, &sub) != DAT_SUCCESS)
		snprintf(buf, DT_RC_TEXT_MAX, "0x%08x (not a DAT 1.2 status)",
			 (unsigned)rc);
	else if (rc == DAT_SUCCESS)
		snprintf(buf, DT_RC_TEXT_MAX, "DAT_SUCCESS");
	else
		snprintf(buf, DT_RC_TEXT_MAX, "%s (%s) [0x%08x]", type, sub,
			 (unsigned)rc);
	return buf;
}

bool dt_rc_is_named_error(DAT_RETURN rc)
{
	const char *type, *sub;

	return (rc & DAT_CLASS_ERROR) &&
	       dat_strerror(rc, &type, &sub) == DAT_SUCCESS;
}

const char *dt_event_name(DAT_EVENT_NUMBER number)
{
	switch (number) {
	case DAT_DTO_COMPLETION_EVENT:
		return "DAT_DTO_COMPLETION_EVENT";
	case DAT_RMR_BIND_COMPLETION_EVENT:
		return "DAT_RMR_BIND_COMPLETION_EVENT";
	case DAT_CONNECTION_REQUEST_EVENT:
		return "DAT_CONNECTION_REQUEST_EVENT";
	case DAT_CONNECTION_EVENT_ESTABLISHED:
		return "DAT_CONNECTION_EVENT_ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED:
		return "DAT_CONNECTION_EVENT_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
		return "DAT_CONNECTION_EVENT_NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
		return "DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED:
		return "DAT_CONNECTION_EVENT_DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN:
		return "DAT_CONNECTION_EVENT_BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT:
		return "DAT_CONNECTION_EVENT_TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE:
		return "DAT_CONNECTION_EVENT_UNREACHABLE";
	case DAT_ASYNC_ERROR_EVD_OVERFLOW:
		return "DAT_ASYNC_ERROR_EVD_OVERFLOW";
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC:
		return "DAT_ASYNC_ERROR_IA_CATASTROPHIC";
	case DAT_ASYNC_ERROR_EP_BROKEN:
		return "DAT_ASYNC_ERROR_EP_BROKEN";
	case DAT_ASYNC_ERROR_TIMED_OUT:
		return "DAT_ASYNC_ERROR_TIMED_OUT";
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR:
		return "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR";
	case DAT_SOFTWARE_EVENT:
		return "DAT_SOFTWARE_EVENT";
	}
	return "(unknown event number)";
}

unsigned long long dt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (unsigned long long)ts.tv_sec * 1000000ull +
	       (unsigned long long)ts.tv_nsec / 1000ull;
}
