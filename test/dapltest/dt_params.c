/*
 * dapltest: command line and script file parsing, the usage text, and the
 * rules a test request must follow (checked again by the server on what
 * arrives over the wire).
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "dt_common.h"

int dtc_debug;

const char *dtc_xfer_name(uint8_t xfer)
{
	switch (xfer) {
	case DT_SR: return "SR";
	case DT_RR: return "RR";
	case DT_RW: return "RW";
	default: return "??";
	}
}

const char *dtc_qos_name(DAT_QOS qos)
{
	switch (qos) {
	case DAT_QOS_BEST_EFFORT: return "BE";
	case DAT_QOS_HIGH_THROUGHPUT: return "HT";
	case DAT_QOS_LOW_LATENCY: return "LL";
	case DAT_QOS_ECONOMY: return "EC";
	case DAT_QOS_PREMIUM: return "PM";
	default: return "??";
	}
}

/* ------------------------------------------------------------------ */
/* Usage                                                               */
/* ------------------------------------------------------------------ */

static void usage_main(FILE *f)
{
	fprintf(f,
"Usage: dapltest -T <test> [-D ia_name] [-n port] [-d] [-R qos] [test args]\n"
"       dapltest -f <script_file>     (the arguments, read from a file)\n"
"       dapltest                      (a server with the defaults)\n"
"  <test>: S server, Q quit, T transaction, P performance, L limit, F feature\n"
"  -D ia_name  interface adapter: a dat.conf name {default " DT_DEFAULT_IA "}\n"
"              (OpenFabrics' dapltest 1.2 defaulted to OpenIB-cma)\n"
"  -n port     the server's connection qualifier {default %d}\n"
"  -d          more debug output (may be repeated)\n"
"  -R qos      BE (best effort, default), HT, LL, EC or PM\n"
"  Exit status: 0 pass, 1 a test failed, 2 bad usage, 3 server port in use.\n",
		DT_DEFAULT_PORT);
}

static void usage_server(FILE *f)
{
	fprintf(f,
"\nServer:  dapltest -T S [-D ia_name] [-n port] [-d] [-R qos]\n"
"  Runs the server side of the clients' tests until a client sends -T Q.\n"
"  Prints 'Dapltest: Service Point Ready - <ia_name>' once it listens.\n");
}

static void usage_trans(FILE *f)
{
	fprintf(f,
"\nTransaction test:  dapltest -T T -s server [-D ia_name] [-n port] [-d]\n"
"      [-i iterations (1000)] [-t threads (1)] [-w EPs_per_thread (1)]\n"
"      [-V] [-P] [-r] [-R qos]  OP [OP ...]\n"
"  -V  validate the data (adds three SR sync OPs)\n"
"  -P  poll for DTO completions instead of waiting\n"
"  -r  connect through RSPs instead of PSPs\n"
"  OP: client|server SR|RR|RW [seg_size (4096) [num_segs (1)]] [-f]\n"
"      client/server: the side that posts it; SR send/receive, RR RDMA\n"
"      Read, RW RDMA Write; -f: reap the SEND after the next receive.\n"
"  Rules: -f only on SR OPs and in pairs (one client, one server); at\n"
"  least one client SR and one server SR OP.\n");
}

static void usage_quit(FILE *f)
{
	fprintf(f,
"\nQuit:  dapltest -T Q -s server [-D ia_name] [-n port] [-d] [-R qos]\n"
"  The server finishes the tests it runs, frees everything and exits.\n");
}

static void usage_perf(FILE *f)
{
	fprintf(f,
"\nPerformance test:  dapltest -T P -s server [-D ia_name] [-n port] [-d]\n"
"      [-m b|p] [-i iterations (1000)] [-p pipeline (%d)] [-R qos]\n"
"      RR|RW [seg_size (4096) [num_segs (1)]]\n"
"  -m b waits for completions (default), -m p polls.\n",
		DT_DEFAULT_PIPELINE);
}

static void usage_other(FILE *f)
{
	fprintf(f,
"\nLimit test:    dapltest -T L [-D ia_name] [-d] [-w width] [-m max] [limit_*...]\n"
"Feature test:  dapltest -T F [-D ia_name] -f hwconn|endpoint|pz|mem|connmgt|queryinfo ...\n"
"  (run 'dapltest -T L -h' or 'dapltest -T F -h' for their options)\n");
}

void dtc_usage(char test, int to_stderr)
{
	FILE *f = to_stderr ? stderr : stdout;

	usage_main(f);
	switch (test) {
	case 'S': usage_server(f); break;
	case 'T': usage_trans(f); break;
	case 'Q': usage_quit(f); break;
	case 'P': usage_perf(f); break;
	default:
		usage_server(f);
		usage_trans(f);
		usage_quit(f);
		usage_perf(f);
		usage_other(f);
		break;
	}
}

/* One usage error: the reason, then the usage of that test type. */
static int usage_error(char test, const char *fmt, ...) DT_PRINTF(2, 3);
static int usage_error(char test, const char *fmt, ...)
{
	va_list ap;

	fputs("dapltest: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dtc_usage(test, 1);
	return DT_EXIT_USAGE;
}

/* ------------------------------------------------------------------ */
/* Numbers and words                                                   */
/* ------------------------------------------------------------------ */

/* A decimal number in [min, max]; nothing else in the word. */
static bool parse_u32(const char *s, uint32_t min, uint32_t max, uint32_t *out)
{
	unsigned long long v;
	char *end;

	if (!s || !isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || *end || v < min || v > max)
		return false;
	*out = (uint32_t)v;
	return true;
}

static bool is_number(const char *s)
{
	if (!s || !*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

static int parse_xfer(const char *s)
{
	if (!s)
		return 0;
	if (!strcasecmp(s, "SR"))
		return DT_SR;
	if (!strcasecmp(s, "RR"))
		return DT_RR;
	if (!strcasecmp(s, "RW"))
		return DT_RW;
	return 0;
}

static bool parse_qos(const char *s, DAT_QOS *q)
{
	static const struct { const char *name; DAT_QOS qos; } tab[] = {
		{ "BE", DAT_QOS_BEST_EFFORT }, { "HT", DAT_QOS_HIGH_THROUGHPUT },
		{ "LL", DAT_QOS_LOW_LATENCY }, { "EC", DAT_QOS_ECONOMY },
		{ "PM", DAT_QOS_PREMIUM },
	};

	for (size_t i = 0; s && i < sizeof(tab) / sizeof(tab[0]); i++)
		if (!strcasecmp(s, tab[i].name)) {
			*q = tab[i].qos;
			return true;
		}
	return false;
}

/* ------------------------------------------------------------------ */
/* Request rules                                                       */
/* ------------------------------------------------------------------ */

static int check_err(char *err, size_t errlen, const char *fmt, ...)
	DT_PRINTF(3, 4);
static int check_err(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int check_segs(uint32_t seg_size, uint32_t num_segs, char *err,
		      size_t errlen)
{
	if (seg_size < 1)
		return check_err(err, errlen, "seg_size must be at least 1");
	if (num_segs < 1 || num_segs > DT_MAX_SEGS)
		return check_err(err, errlen, "num_segs must be 1..%d",
				 DT_MAX_SEGS);
	if ((uint64_t)seg_size * num_segs > DT_MAX_OP_BYTES)
		return check_err(err, errlen,
				 "seg_size x num_segs must be at most %u bytes",
				 DT_MAX_OP_BYTES);
	return 0;
}

int dtc_trans_check(const struct dt_trans_args *t, char *err, size_t errlen)
{
	unsigned client_sr = 0, server_sr = 0, client_f = 0, server_f = 0;
	uint64_t per_ep = 0;

	if (t->iters < 1 || t->iters > DT_MAX_ITERS)
		return check_err(err, errlen, "iterations must be 1..%u",
				 DT_MAX_ITERS);
	if (t->threads < 1 || t->threads > DT_MAX_THREADS)
		return check_err(err, errlen, "threads must be 1..%d",
				 DT_MAX_THREADS);
	if (t->eps_per_thread < 1 || t->eps_per_thread > DT_MAX_EPS_PER_THREAD)
		return check_err(err, errlen, "EPs per thread must be 1..%d",
				 DT_MAX_EPS_PER_THREAD);
	if (t->threads * t->eps_per_thread > DT_MAX_TEST_EPS)
		return check_err(err, errlen,
				 "threads x EPs per thread must be at most %d",
				 DT_MAX_TEST_EPS);
	if (t->user_nops < 1)
		return check_err(err, errlen, "no OP given");
	if (t->user_nops > DT_MAX_USER_OPS)
		return check_err(err, errlen, "at most %d OPs", DT_MAX_USER_OPS);
	for (uint32_t i = 0; i < t->user_nops; i++) {
		const struct dt_op *op = &t->ops[i];
		uint64_t n;

		if (op->who != DT_CLIENT && op->who != DT_SERVER)
			return check_err(err, errlen, "OP %u: bad side", i + 1);
		if (op->xfer != DT_SR && op->xfer != DT_RR && op->xfer != DT_RW)
			return check_err(err, errlen, "OP %u: bad transfer type",
					 i + 1);
		if (check_segs(op->seg_size, op->num_segs, err, errlen))
			return -1;
		if (op->reap_on_recv && op->xfer != DT_SR)
			return check_err(err, errlen,
					 "OP %u: -f is only allowed on SR OPs",
					 i + 1);
		if (op->xfer == DT_SR) {
			*(op->who == DT_CLIENT ? &client_sr : &server_sr) += 1;
			if (op->reap_on_recv)
				*(op->who == DT_CLIENT ? &client_f : &server_f) += 1;
		}
		/* a SEND buffer on one side, two receive buffers on the
		 * other; an RDMA buffer on each side */
		n = (uint64_t)op->seg_size * op->num_segs;
		per_ep += op->xfer == DT_SR ? 3 * n : 2 * n;
	}
	if (client_f != server_f)
		return check_err(err, errlen,
				 "-f must appear in pairs (one client SR, one server SR)");
	if (!client_sr || !server_sr)
		return check_err(err, errlen,
				 "at least one client SR and one server SR OP are required");
	if (per_ep * t->threads * t->eps_per_thread > DT_MAX_TEST_MEMORY)
		return check_err(err, errlen,
				 "the test needs more than %llu MB of buffers",
				 (unsigned long long)(DT_MAX_TEST_MEMORY >> 20));
	return 0;
}

/* -V: the three SEND/RECV OPs that order buffer checks and refills
 * (server, client, server; see dt_trans.c). */
void dtc_trans_expand(struct dt_trans_args *t)
{
	static const uint8_t who[DT_SYNC_OPS] = { DT_SERVER, DT_CLIENT, DT_SERVER };

	t->nops = t->user_nops;
	if (!t->validate)
		return;
	for (unsigned i = 0; i < DT_SYNC_OPS; i++) {
		struct dt_op *op = &t->ops[t->nops++];

		op->who = who[i];
		op->xfer = DT_SR;
		op->reap_on_recv = false;
		op->seg_size = DT_SYNC_OP_SIZE;
		op->num_segs = 1;
	}
}

int dtc_perf_check(const struct dt_perf_args *pa, char *err, size_t errlen)
{
	if (pa->xfer != DT_RR && pa->xfer != DT_RW)
		return check_err(err, errlen, "the OP must be RR or RW");
	if (pa->iters < 1 || pa->iters > DT_MAX_ITERS)
		return check_err(err, errlen, "iterations must be 1..%u",
				 DT_MAX_ITERS);
	if (pa->pipeline < 1 || pa->pipeline > DT_MAX_PIPELINE)
		return check_err(err, errlen, "pipeline must be 1..%d",
				 DT_MAX_PIPELINE);
	return check_segs(pa->seg_size, pa->num_segs, err, errlen);
}

/* ------------------------------------------------------------------ */
/* Command line                                                        */
/* ------------------------------------------------------------------ */

/* The value of "-x value" or "-xvalue"; advances *i past it. */
static const char *opt_value(int argc, char **argv, int *i)
{
	const char *a = argv[*i];

	if (a[2])
		return a + 2;
	if (*i + 1 >= argc)
		return NULL;
	return argv[++*i];
}

static void defaults(struct dt_params *p, char test)
{
	memset(p, 0, sizeof(*p));
	p->test = test;
	p->ia_name = DT_DEFAULT_IA;
	p->port = DT_DEFAULT_PORT;
	p->qos = DAT_QOS_BEST_EFFORT;
	p->trans.iters = DT_DEFAULT_ITERS;
	p->trans.threads = 1;
	p->trans.eps_per_thread = 1;
	p->perf.iters = DT_DEFAULT_ITERS;
	p->perf.pipeline = DT_DEFAULT_PIPELINE;
	p->perf.seg_size = DT_DEFAULT_SEG_SIZE;
	p->perf.num_segs = 1;
}

/* "client|server SR|RR|RW [seg_size [num_segs]] [-f]" at argv[*i]. */
static int parse_trans_op(int argc, char **argv, int *i, struct dt_params *p)
{
	struct dt_trans_args *t = &p->trans;
	struct dt_op *op;
	int x;

	if (t->user_nops >= DT_MAX_USER_OPS)
		return usage_error('T', "at most %d OPs", DT_MAX_USER_OPS);
	op = &t->ops[t->user_nops];
	memset(op, 0, sizeof(*op));
	op->who = strcasecmp(argv[*i], "server") ? DT_CLIENT : DT_SERVER;
	op->seg_size = DT_DEFAULT_SEG_SIZE;
	op->num_segs = 1;
	x = parse_xfer(*i + 1 < argc ? argv[*i + 1] : NULL);
	if (!x)
		return usage_error('T', "'%s' must be followed by SR, RR or RW",
				   argv[*i]);
	op->xfer = (uint8_t)x;
	*i += 2;
	if (*i < argc && is_number(argv[*i])) {
		if (!parse_u32(argv[*i], 1, DT_MAX_OP_BYTES, &op->seg_size))
			return usage_error('T', "bad seg_size '%s' (1..%u)",
					   argv[*i], DT_MAX_OP_BYTES);
		(*i)++;
		if (*i < argc && is_number(argv[*i])) {
			if (!parse_u32(argv[*i], 1, DT_MAX_SEGS, &op->num_segs))
				return usage_error('T', "bad num_segs '%s' (1..%d)",
						   argv[*i], DT_MAX_SEGS);
			(*i)++;
		}
	}
	if (*i < argc && !strcmp(argv[*i], "-f")) {
		op->reap_on_recv = true;
		(*i)++;
	}
	t->user_nops++;
	return 0;
}

/* "RR|RW [seg_size [num_segs]]" at argv[*i]. */
static int parse_perf_op(int argc, char **argv, int *i, struct dt_params *p,
			 bool *have_op)
{
	int x = parse_xfer(argv[*i]);

	if (*have_op)
		return usage_error('P', "unexpected argument '%s' (one OP only)",
				   argv[*i]);
	if (x != DT_RR && x != DT_RW)
		return usage_error('P', "the OP must be RR or RW, not '%s'",
				   argv[*i]);
	p->perf.xfer = (uint8_t)x;
	(*i)++;
	if (*i < argc && is_number(argv[*i])) {
		if (!parse_u32(argv[*i], 1, DT_MAX_OP_BYTES, &p->perf.seg_size))
			return usage_error('P', "bad seg_size '%s' (1..%u)",
					   argv[*i], DT_MAX_OP_BYTES);
		(*i)++;
		if (*i < argc && is_number(argv[*i])) {
			if (!parse_u32(argv[*i], 1, DT_MAX_SEGS, &p->perf.num_segs))
				return usage_error('P', "bad num_segs '%s' (1..%d)",
						   argv[*i], DT_MAX_SEGS);
			(*i)++;
		}
	}
	*have_op = true;
	return 0;
}

/*
 * argv[1] is "-T x" / "-Tx" or absent (a server).  -T must come first,
 * as in OFA's dapltest; test types L and F never get here.
 */
int dtc_parse_args(int argc, char **argv, struct dt_params *p)
{
	char test = 'S';
	int i = 1;
	bool have_perf_op = false;
	char err[160];

	if (argc > 1 && !strncmp(argv[1], "-T", 2)) {
		const char *v = opt_value(argc, argv, &i);

		if (!v || strlen(v) != 1 || !strchr("SQTP", toupper((unsigned char)v[0])))
			return usage_error(0, "-T needs S, Q, T, P, L or F");
		test = (char)toupper((unsigned char)v[0]);
		i++;
	}
	defaults(p, test);

	while (i < argc) {
		const char *a = argv[i];
		const char *v;
		uint32_t n;

		if (test == 'T' && (!strcasecmp(a, "client") || !strcasecmp(a, "server"))) {
			if (parse_trans_op(argc, argv, &i, p))
				return DT_EXIT_USAGE;
			continue;
		}
		if (test == 'P' && a[0] != '-') {
			if (parse_perf_op(argc, argv, &i, p, &have_perf_op))
				return DT_EXIT_USAGE;
			continue;
		}
		if (a[0] != '-' || !a[1])
			return usage_error(test, "unexpected argument '%s'", a);

		switch (a[1]) {
		case 'T':
			return usage_error(test, "-T must be the first option");
		case 'D':
			if (!(v = opt_value(argc, argv, &i)) || !*v)
				return usage_error(test, "-D needs an IA name");
			p->ia_name = v;
			break;
		case 'n':
			if (!(v = opt_value(argc, argv, &i)) || !parse_u32(v, 1, 65535, &n))
				return usage_error(test, "-n needs a port number 1..65535");
			p->port = (uint16_t)n;
			break;
		case 'd':
			/* -d, -dd, ... */
			if (strspn(a + 1, "d") != strlen(a + 1))
				return usage_error(test, "unknown option '%s'", a);
			dtc_debug += (int)strlen(a + 1);
			break;
		case 'R':
			if (!(v = opt_value(argc, argv, &i)) || !parse_qos(v, &p->qos))
				return usage_error(test, "-R needs BE, HT, LL, EC or PM");
			break;
		case 's':
			if (test == 'S')
				return usage_error(test, "-s is for clients (-T Q, T or P)");
			if (!(v = opt_value(argc, argv, &i)) || !*v)
				return usage_error(test, "-s needs the server's name or address");
			p->server = v;
			break;
		case 'i':
			if (test != 'T' && test != 'P')
				return usage_error(test, "-i is for -T T and -T P");
			if (!(v = opt_value(argc, argv, &i)) ||
			    !parse_u32(v, 1, DT_MAX_ITERS, &n))
				return usage_error(test, "-i needs a number 1..%u",
						   DT_MAX_ITERS);
			p->trans.iters = p->perf.iters = n;
			break;
		case 't':
			if (test != 'T')
				return usage_error(test, "-t is for -T T");
			if (!(v = opt_value(argc, argv, &i)) ||
			    !parse_u32(v, 1, DT_MAX_THREADS, &p->trans.threads))
				return usage_error(test, "-t needs a number 1..%d",
						   DT_MAX_THREADS);
			break;
		case 'w':
			if (test != 'T')
				return usage_error(test, "-w is for -T T");
			if (!(v = opt_value(argc, argv, &i)) ||
			    !parse_u32(v, 1, DT_MAX_EPS_PER_THREAD,
				       &p->trans.eps_per_thread))
				return usage_error(test, "-w needs a number 1..%d",
						   DT_MAX_EPS_PER_THREAD);
			break;
		case 'V':
		case 'P':
		case 'r':
			if (test != 'T' || a[2])
				return usage_error(test, "unknown option '%s'", a);
			if (a[1] == 'V')
				p->trans.validate = true;
			else if (a[1] == 'P')
				p->trans.poll = true;
			else
				p->trans.use_rsp = true;
			break;
		case 'p':
			if (test != 'P')
				return usage_error(test, "-p is for -T P");
			if (!(v = opt_value(argc, argv, &i)) ||
			    !parse_u32(v, 1, DT_MAX_PIPELINE, &p->perf.pipeline))
				return usage_error(test, "-p needs a number 1..%d",
						   DT_MAX_PIPELINE);
			break;
		case 'm':
			if (test != 'P')
				return usage_error(test, "-m is for -T P");
			v = opt_value(argc, argv, &i);
			if (v && !strcmp(v, "b"))
				p->perf.poll = false;
			else if (v && !strcmp(v, "p"))
				p->perf.poll = true;
			else
				return usage_error(test, "-m needs b (blocking) or p (polling)");
			break;
		case 'f':
			if (test == 'T')
				return usage_error(test, "-f must follow an SR OP");
			return usage_error(test, "-f <script_file> must be the only option");
		default:
			return usage_error(test, "unknown option '%s'", a);
		}
		i++;
	}

	if (test == 'S')
		return 0;
	if (!p->server)
		return usage_error(test, "-s <server> is required");
	if (test == 'T') {
		if (dtc_trans_check(&p->trans, err, sizeof(err)))
			return usage_error(test, "%s", err);
		dtc_trans_expand(&p->trans);
	} else if (test == 'P') {
		if (!have_perf_op)
			return usage_error(test, "the OP (RR or RW) is missing");
		if (dtc_perf_check(&p->perf, err, sizeof(err)))
			return usage_error(test, "%s", err);
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* Script files                                                        */
/* ------------------------------------------------------------------ */

#define DT_SCRIPT_MAX	(1 << 20)

/*
 * Reads the arguments of "dapltest -f file": words separated by white
 * space, '#' to the end of the line is a comment.  argv[0] is "dapltest";
 * the words point into *storage_out (free both when done).
 */
int dtc_read_script(const char *path, int *argc_out, char ***argv_out,
		   char **storage_out)
{
	FILE *f = fopen(path, "r");
	char *text, **argv;
	size_t len, cap = 8;
	int argc = 1;

	if (!f) {
		dtc_err("cannot open script file %s: %s", path, strerror(errno));
		return DT_EXIT_USAGE;
	}
	text = malloc(DT_SCRIPT_MAX + 1);
	argv = malloc(cap * sizeof(*argv));
	if (!text || !argv) {
		fclose(f);
		free(text);
		free(argv);
		dtc_err("out of memory");
		return DT_EXIT_FAIL;
	}
	len = fread(text, 1, DT_SCRIPT_MAX + 1, f);
	if (ferror(f) || len > DT_SCRIPT_MAX) {
		dtc_err("cannot read script file %s%s", path,
		       len > DT_SCRIPT_MAX ? ": larger than 1 MB" : "");
		fclose(f);
		free(text);
		free(argv);
		return DT_EXIT_USAGE;
	}
	fclose(f);
	text[len] = '\0';
	argv[0] = (char *)"dapltest";

	for (char *s = text; *s;) {
		if (*s == '#') {
			while (*s && *s != '\n')
				s++;
			continue;
		}
		if (isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if ((size_t)argc + 1 >= cap) {
			char **bigger = realloc(argv, 2 * cap * sizeof(*argv));

			if (!bigger) {
				free(text);
				free(argv);
				dtc_err("out of memory");
				return DT_EXIT_FAIL;
			}
			argv = bigger;
			cap *= 2;
		}
		argv[argc++] = s;
		while (*s && !isspace((unsigned char)*s) && *s != '#')
			s++;
		if (*s == '#') {
			/* a comment right after a word: end the word here */
			*s = '\0';
			s++;
			while (*s && *s != '\n')
				s++;
		} else if (*s) {
			*s++ = '\0';
		}
	}
	argv[argc] = NULL;
	*argc_out = argc;
	*argv_out = argv;
	*storage_out = text;
	return 0;
}
