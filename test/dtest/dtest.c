/* dtest: a DAT client and server that check one connection end to end and
 * time it: object setup costs, RDMA Write and Read bursts, and a send/recv
 * ping-pong.  The options and the report follow OpenFabrics' dtest 1.2
 * (-P -b -B -v -c -p -d -s -h); -n is ours.  See dtest(1).
 *
 * Exit status: 0 all passed, 1 a test or DAT call failed, 2 bad usage. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L      /* getopt, clock_gettime */
#endif
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dtest.h"

static const char usage_text[] =
	"usage: dtest [-P provider] [-b buf_len] [-B burst] [-n port] [-v] [-c] [-p]\n"
	"             [-d delay] -s | -h host\n"
	"  -s          server: serve one client, then exit (the default without -h)\n"
	"  -h host     client: connect to host (name or IPv4 address)\n"
	"  -P provider IA name in dat.conf (default " DT_DEFAULT_PROVIDER ")\n"
	"  -b buf_len  bytes per message and per RDMA operation (default 64)\n"
	"  -B burst    RDMA writes, RDMA reads and round trips per test (default 10)\n"
	"  -n port     connection qualifier (default 45248)\n"
	"  -v          verbose: print each step\n"
	"  -c          wait for DTO and connection events through a CNO\n"
	"  -p          poll DTO completions instead of waiting\n"
	"  -d delay    server: seconds to wait before accepting the connection\n"
	"Both sides must use the same -b and -B.\n";

static void usage(const char *why, const char *arg)
{
	if (why)
		fprintf(stderr, "dtest: %s%s%s\n", why, arg ? ": " : "",
			arg ? arg : "");
	fputs(usage_text, stderr);
	exit(2);
}

/* A whole decimal number in [min, max]; anything else is a usage error. */
static unsigned long parse_number(const char *arg, unsigned long min,
				  unsigned long max, const char *what)
{
	char *end;
	unsigned long v;

	errno = 0;
	if (arg[0] < '0' || arg[0] > '9')   /* strtoul would take "-1", " 1" */
		goto bad;
	v = strtoul(arg, &end, 10);
	if (errno || *end || v < min || v > max)
		goto bad;
	return v;
bad:
	fprintf(stderr, "dtest: %s must be a number from %lu to %lu: %s\n",
		what, min, max, arg);
	usage(NULL, NULL);
	return 0;
}

static void parse_options(int argc, char **argv, struct dt_opts *o)
{
	int c;

	memset(o, 0, sizeof(*o));
	o->provider = DT_DEFAULT_PROVIDER;
	o->buf_len = DT_DEFAULT_BUF_LEN;
	o->burst = DT_DEFAULT_BURST;
	o->port = DT_DEFAULT_PORT;

	opterr = 1;
	while ((c = getopt(argc, argv, "scvpb:d:B:h:P:n:")) != -1) {
		switch (c) {
		case 's': o->server = true; break;
		case 'c': o->use_cno = true; break;
		case 'v': o->verbose = true; break;
		case 'p': o->poll = true; break;
		case 'b':
			o->buf_len = parse_number(optarg, 1, DT_MAX_BUF_LEN, "-b buf_len");
			break;
		case 'B':
			o->burst = (int)parse_number(optarg, 1, DT_MAX_BURST, "-B burst");
			break;
		case 'd':
			o->delay_s = (unsigned)parse_number(optarg, 0, DT_MAX_DELAY_S,
							    "-d delay");
			break;
		case 'n':
			o->port = (unsigned)parse_number(optarg, 1, 65535, "-n port");
			break;
		case 'h':
			if (!*optarg)
				usage("-h needs a host name or address", NULL);
			o->host = optarg;
			break;
		case 'P':
			if (!*optarg || strlen(optarg) >= DAT_NAME_MAX_LENGTH)
				usage("-P needs a provider name of 1 to 255 characters", NULL);
			o->provider = optarg;
			break;
		default:            /* getopt has said what was wrong */
			usage(NULL, NULL);
		}
	}
	if (optind < argc)
		usage("unexpected argument", argv[optind]);
	if (o->server && o->host)
		usage("-s and -h exclude each other", NULL);
	if (!o->host)
		o->server = true;
	if (o->buf_len * (size_t)o->burst > DT_MAX_BURST_BYTES)
		usage("buf_len times burst must not exceed 32 MiB", NULL);
}

double dt_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

void dt_fail(const struct dt *t, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "dtest %s: ", t->role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void dt_fail_dat(const struct dt *t, const char *call, DAT_RETURN rc)
{
	const char *major = "?", *minor = "";

	dat_strerror(rc, &major, &minor);
	dt_fail(t, "%s failed: %s%s%s (0x%08x)", call, major ? major : "?",
		minor && *minor ? " " : "", minor ? minor : "", (unsigned)rc);
}

void dt_verbose(const struct dt *t, const char *fmt, ...)
{
	va_list ap;

	if (!t->o->verbose)
		return;
	printf("dtest %s: ", t->role);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void print_op(const char *name, const struct dt_op_stats *s)
{
	printf(" %-12s Total=%12.2f usec, %4d bursts, itime=%10.2f usec, pc=%lu\n",
	       name, s->total_us, s->ops, s->ops ? s->total_us / s->ops : 0.0,
	       s->polls);
}

static void print_report(const struct dt *t)
{
	static const struct {
		enum dt_cost cost;
		const char *label;
		bool cno_only;
	} lines[] = {
		{ DT_COST_OPEN, "open:", false },
		{ DT_COST_CLOSE, "close:", false },
		{ DT_COST_PZ_CREATE, "PZ create:", false },
		{ DT_COST_PZ_FREE, "PZ free:", false },
		{ DT_COST_LMR_CREATE, "LMR create:", false },
		{ DT_COST_LMR_FREE, "LMR free:", false },
		{ DT_COST_RMR_CREATE, "RMR create:", false },
		{ DT_COST_RMR_FREE, "RMR free:", false },
		{ DT_COST_EVD_CREATE, "EVD create:", false },
		{ DT_COST_EVD_FREE, "EVD free:", false },
		{ DT_COST_CNO_CREATE, "CNO create:", true },
		{ DT_COST_CNO_FREE, "CNO free:", true },
		{ DT_COST_EP_CREATE, "EP create:", false },
		{ DT_COST_EP_FREE, "EP free:", false },
	};
	double total = 0;
	size_t i;

	printf("\n DAT Test Complete (%s).\n\n", t->role);
	print_op("Message RTT:", &t->rtt);
	print_op("RDMA write:", &t->wr);
	print_op("RDMA read:", &t->rd);
	putchar('\n');
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		if (lines[i].cno_only && !t->o->use_cno)
			continue;
		printf(" %-12s %12.2f usec\n", lines[i].label, t->cost[lines[i].cost]);
		total += t->cost[lines[i].cost];
	}
	printf(" %-12s %12.2f usec\n\n", "TOTAL:", total);
}

int main(int argc, char **argv)
{
	struct dt_opts opts;
	struct dt t;

	parse_options(argc, argv, &opts);

	/* Line-buffered, so a script reading through a pipe sees the
	 * server's "waiting" line as soon as it is printed. */
	setvbuf(stdout, NULL, _IOLBF, 0);

	memset(&t, 0, sizeof(t));
	t.o = &opts;
	t.role = opts.server ? "server" : "client";

	printf("dtest %s: provider %s, buf_len %zu, burst %d, DTO completions by %s\n",
	       t.role, opts.provider, opts.buf_len, opts.burst,
	       opts.poll ? (opts.use_cno ? "polling (other events: CNO)" : "polling") :
	       opts.use_cno ? "CNO" : "dat_evd_wait");

	if (dt_setup(&t) || dt_connect(&t) || dt_run_tests(&t) ||
	    dt_disconnect(&t)) {
		if (t.connected)
			dt_explain_connection(&t);
		dt_teardown_after_error(&t);
		fprintf(stderr, "dtest %s: FAILED\n", t.role);
		return 1;
	}
	if (dt_teardown(&t)) {
		dt_teardown_after_error(&t);
		fprintf(stderr, "dtest %s: FAILED\n", t.role);
		return 1;
	}
	print_report(&t);
	printf("dtest %s: PASSED\n", t.role);
	return 0;
}
