/* dat_bench: libdat over ofi-tcp against raw libfabric tcp, in one run;
 * optionally more DAT IAs (libdat's own tcp provider) and plain kernel TCP
 * sockets (sock_bench.c) in the same run.
 *
 * Patterns, each for every message size (-s, default 8 and 64 KiB, or the
 * one given as pattern@size) and two ways of waiting:
 *
 *   sendrecv   send/recv ping-pong: half round trip, microseconds
 *   write      RDMA Write ping-pong, each side polling the last byte of its
 *              buffer for the peer's write (ib_write_lat): half round trip
 *   send_bw    Send streaming, client to server, with credits (a Send that
 *              finds no receive posted ends an iWARP connection), then an
 *              exchange as a fence: GB/s
 *   write_bw   RDMA Write streaming, client to server, a window (-w) of
 *              writes outstanding, then a send/recv exchange as a fence:
 *              GB/s (10^9 bytes per second)
 *   connect    connection setup and teardown on a fresh endpoint, the size
 *              being the private data each way (default 24, what a
 *              DAT_RMR_TRIPLET takes): microseconds per connection, always
 *              with blocking waits
 *
 * and what legacy MPIs over uDAPL do, always busy-polling (connection
 * setup: blocking):
 *
 *   write_poll RDMA Write ping-pong into rings both sides poll in memory,
 *              making no DAT call until the data is there: half round trip
 *              per round, with p99 and the rounds over 1 ms
 *   read_evd, read_mem, write_evd, write_mem
 *              8 B RDMA Read / Write, the initiator waiting for each
 *              completion, while the target spins on an EVD nothing comes
 *              to (_evd) or on memory (_mem): per operation, p99, > 1 ms
 *   window     8 B Sends, -w of them outstanding, the receiver reposting
 *              its receives and giving credits back: millions of messages/s
 *   cycle      connect, accept, a first message of the size (default 8),
 *              disconnect: microseconds per connection
 *
 *   The round patterns (write_poll and the one-sided ones) run, on
 *   sockets, the send/recv ping-pong of the same size and are compared
 *   with it plus one thread hand-off (an eventfd ping-pong between two
 *   threads of the client, measured in the same run): a transport in user
 *   space cannot place data without a thread that reads the socket.
 *   Each run is N rounds (-n, at least 10,000) or 1 s, whichever is less.
 *
 *   poll       busy-poll: dat_evd_dequeue in a loop, raw fi_cq_read
 *   block      dat_evd_wait, raw fi_cq_sread.  For the write ping-pong the
 *              waiting side spins on memory without calling the library
 *              at all: libdat's progress thread moves the data, and on raw
 *              a helper thread sleeping in fi_cq_sread does (tcp 1.17 has
 *              no progress of its own).  In poll mode the spinning side
 *              calls dat_evd_dequeue / fi_cq_read on its send queue.
 *
 * The server and the client are two processes forked from this one, over
 * 127.0.0.1; the client learns the server's ports through a pipe.  Each
 * side holds one connection per stack (each DAT IA, raw libfabric, sockets)
 * for the whole run, and every measurement runs on all stacks back to back
 * (the first one rotating between repetitions), so all see the same
 * machine.  Each value is the median over -r repetitions of the per-run
 * value: for latency the median (p50) of the per-iteration half round
 * trips, for bandwidth bytes over time.
 *
 * Send and RDMA Write completions mean "placed at the target" on both
 * sides: libdat's ofi provider posts them with FI_DELIVERY_COMPLETE and so
 * does the raw side.  -W tx makes raw use transmit completion instead;
 * with DAPL_OFI_COMPLETION=transmit in the environment libdat does too
 * (bench/delivery-cost.sh compares the two).
 *
 * -T n replaces the patterns by one: the 8-byte Send ping-pong, busy-polled,
 * run by 1 thread and then by n threads on each side at once, each thread
 * on a connection of its own (DAT: its own EP and EVDs on the stack's one
 * IA and PZ; raw: its own endpoint and CQs on one domain and EQ; sockets:
 * its own socket), a fixed number of round trips each: how each stack
 * degrades when more threads poll than there are CPUs.  Nothing is
 * pinned then.
 *
 * Exit status: 0; 1 on any failure; 3 when libdat answered
 * DAT_NOT_IMPLEMENTED (its LMR or DTO calls are not there yet); -R
 * measures raw libfabric only. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* sched_setaffinity, CPU_SET */
#endif
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dat_gen.h"	/* <dat/udat.h>; <dat2/udat.h> for bench/dat_bench2 */

#include "bench.h"

/* bench/dat_bench2 is this file built for DAT 2.0 (DAT_GEN=2, libdat2.so.2)
 * to set the 2.0 data path beside 1.2's: its RMR triplet names the
 * address as the LMR's does, and dat_lmr_create takes a VA type. */
#if DAT_GEN == 2
#define RMR_ADDR virtual_address
#define VA_TYPE_ARG DAT_VA_TYPE_VA,
#else
#define RMR_ADDR target_address
#define VA_TYPE_ARG
#endif

#define MAX_SIZES 8
#define MAX_REPS 21
#define MAX_IDLE 4096           /* -e */
#define MAX_THREADS 64          /* -T */
#define MT_ITERS_DIV 50         /* -T: round trips per thread = iters / this, */
#define MT_ITERS_MIN 10         /* at least this */
#define MAX_IAS 3
#define MAX_STACKS (MAX_IAS + 2)
#define STUCK_S 30              /* one measurement longer than this is a hang */
#define CONNECT_PDATA 24        /* sizeof(DAT_RMR_TRIPLET), what this bench sends */
#define CONNECT_PDATA_MAX 256   /* libdat's ofi provider takes no more */
#define CM_HDR 32               /* MPA frame 20 + RFC 6581 4 + libdat trailer 8
				 * (providers/tcp/tcp_wire.h) */
/* credits of the Send stream: the server returns them in batches */
#define CREDIT_GRANT (BENCH_NRECV / 2)

enum {
	P_SENDRECV, P_WRITE, P_SEND_BW, P_WRITE_BW, P_CONNECT,
	/* what legacy MPIs over uDAPL do */
	P_WRITE_POLL, P_READ_EVD, P_READ_MEM, P_WRITE_EVD, P_WRITE_MEM, P_WINDOW, P_CYCLE,
	NPAT
};
enum stack_kind { K_DAT, K_RAW, K_SOCK, NKIND };

static const char *const pat_name[NPAT] = {
	"sendrecv", "write", "send_bw", "write_bw", "connect",
	"write_poll", "read_evd", "read_mem", "write_evd", "write_mem", "window", "cycle",
};
static const char *const wait_name[2] = { "poll", "block" };
static const char *const kind_name[NKIND] = { "dat", "raw", "sock" };

/* One stack, in the order of its connections and of its columns. */
struct stack {
	enum stack_kind kind;
	const char *ia;         /* K_DAT */
	char key[16];           /* in the bench: lines: dat, dat2, dat3, raw, sock */
	char label[40];         /* column header and messages */
};

static struct stack stacks[MAX_STACKS];
static int nstacks;

static struct {
	const char *ias[MAX_IAS];
	int nias;
	const char *prov;
	long iters;
	size_t base[MAX_SIZES]; /* -s */
	int nbase;
	size_t at[NPAT][MAX_SIZES];     /* pattern@size */
	int nat[NPAT];
	size_t sizes[MAX_SIZES];        /* all sizes, as the table lists them */
	int nsizes;
	int size_on[NPAT][MAX_SIZES];
	int reps;
	int window;
	int cpu[2];             /* server, client; -1 = not pinned */
	int pats[NPAT];
	int waits[2];
	int kinds[NKIND];
	size_t cm_hdr;
	int raw_dc;
	int idle;               /* -e */
	int threads;            /* -T; 0: the patterns instead */
	long mt_iters;          /* -T: round trips per thread */
	int ncpus;              /* CPUs this process may run on */
	int verbose;
	int quiet;
} opt = {
	.ias = { "ofi-tcp" },
	.nias = 1,
	.prov = "tcp",
	.iters = 5000,
	.base = { 8, 65536 },
	.nbase = 2,
	.reps = 5,
	.window = 64,
	.cpu = { -1, -1 },
	.pats = { 1, 1, 0, 1, 0 },
	.waits = { 1, 1 },
	.kinds = { 1, 1, 0 },
	.cm_hdr = CM_HDR,
	.raw_dc = 1,
	.quiet = 1,
};

/* The window pattern's extra receives (the small slots), posted while it
 * runs: twice the window, as many as there are. */
static int win_small(void)
{
	if (!opt.pats[P_WINDOW])
		return 0;
	return 2 * opt.window < BENCH_NSMALL ? 2 * opt.window : BENCH_NSMALL;
}

const char *bench_role = "main";
static const char *current_test = "setup";
static char stage[64];          /* current_test while a stack is set up */

static void stage_of(const char *what, int k);

/* ---- common helpers --------------------------------------------------------- */

void bench_die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	/* with the stack and measurement: several DAT IAs say "DAT" alike */
	fprintf(stderr, "dat_bench: %s: [%s] ", bench_role, current_test);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(NULL);
	/* _exit: libfabric's destructor can deadlock against a thread that
	 * is inside libfabric (libdat's progress thread, our raw helper) */
	_exit(status);
}

void bench_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "dat_bench: %s: warning: ", bench_role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
}

void *bench_alloc(size_t max_size, size_t *len)
{
	void *p = NULL;

	*len = (1 + BENCH_RING + BENCH_NRECV) * max_size + BENCH_NSMALL * BENCH_SMALL;
	*len = (*len + 4095) & ~(size_t)4095;
	if (posix_memalign(&p, 4096, *len))
		bench_die(BENCH_EXIT_FAIL, "out of memory (%zu bytes)", *len);
	memset(p, 0, *len);
	return p;
}

void bench_layout(struct bench_conn *c, void *buf, size_t max_size)
{
	uint8_t *b = buf;

	c->max_size = max_size;
	c->tx = b;
	c->rx = b + max_size;
	c->ring = b + (1 + BENCH_RING) * max_size;
	c->small = c->ring + BENCH_NRECV * max_size;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void on_alarm(int sig)
{
	char msg[160];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg), "dat_bench: %s: %s made no progress for %d s; giving up\n",
		     bench_role, current_test, STUCK_S);
	if (n > 0 && write(2, msg, (size_t)n) < 0) {
		/* nothing more we can do */
	}
	_exit(BENCH_EXIT_FAIL);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* ---- the DAT stack ------------------------------------------------------------ */

struct dat_conn {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, conn_evd, cr_evd, req_evd, rcv_evd;
	DAT_EVD_HANDLE setup_evd;       /* connection events of the setup EPs */
	DAT_EVD_HANDLE setup_rcv_evd;   /* their receives (a first message) */
	DAT_EVD_HANDLE spin_evd;        /* bound to nothing: read_evd's target
					 * spins on it */
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_EP_HANDLE ep;
	DAT_EP_HANDLE *idle;            /* -e: idle connections' EPs */
	int nidle;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_ctx;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_RMR_TRIPLET peer;
	struct sockaddr_in srv_addr;    /* client: where the server's PSP is */
	DAT_CONN_QUAL qual;
	void *buf;
	size_t buflen;
	int borrowed;                   /* -T: ia, pz, cr_evd are another
					 * connection's (dat_open_more) */
};

/* what: a call as DCHECK quotes it; only the function name is printed. */
static void dat_fail(const char *what, DAT_RETURN rc)
{
	const char *major = "?", *minor = "";
	int len = (int)strcspn(what, "(");

	dat_strerror(rc, &major, &minor);
	if (DAT_GET_TYPE(rc) == (DAT_UINT32)DAT_NOT_IMPLEMENTED)
		bench_die(BENCH_EXIT_NOTIMPL, "DAT: %.*s: DAT_NOT_IMPLEMENTED", len, what);
	bench_die(BENCH_EXIT_FAIL, "DAT: %.*s failed: %s%s%s (0x%08x)", len, what, major,
		  minor && *minor ? " " : "", minor ? minor : "", (unsigned)rc);
}

#define DCHECK(call) \
	do { \
		DAT_RETURN rc_ = (call); \
		if (rc_ != DAT_SUCCESS) \
			dat_fail(#call, rc_); \
	} while (0)

static struct dat_conn *dc_of(struct bench_conn *c)
{
	return c->priv;
}

static void dat_wait_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want,
			   DAT_EVENT *ev, const char *what)
{
	DAT_COUNT nmore;
	DAT_RETURN rc;

	memset(ev, 0, sizeof(*ev));
	rc = dat_evd_wait(evd, (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u, 1, ev, &nmore);
	if (rc != DAT_SUCCESS)
		dat_fail(what, rc);
	if (ev->event_number != want)
		bench_die(BENCH_EXIT_FAIL, "DAT: %s: event 0x%x, expected 0x%x",
			  what, (unsigned)ev->event_number, (unsigned)want);
}

static const char *dto_status_name(DAT_DTO_COMPLETION_STATUS st)
{
	static const char *const names[] = {
		"SUCCESS", "ERR_FLUSHED (the connection ended)", "ERR_LOCAL_LENGTH",
		"ERR_LOCAL_EP", "ERR_LOCAL_PROTECTION", "ERR_BAD_RESPONSE",
		"ERR_REMOTE_ACCESS", "ERR_REMOTE_RESPONDER", "ERR_TRANSPORT",
		"ERR_RECEIVER_NOT_READY", "ERR_PARTIAL_PACKET",
	};

	if ((unsigned)st < sizeof(names) / sizeof(names[0]))
		return names[st];
	return "unknown";
}

static void dto_check(const DAT_EVENT *ev, const char *which)
{
	if (ev->event_number != DAT_DTO_COMPLETION_EVENT)
		bench_die(BENCH_EXIT_FAIL, "DAT: %s queue: event 0x%x, expected a DTO completion",
			  which, (unsigned)ev->event_number);
	if (ev->event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
		bench_die(BENCH_EXIT_FAIL, "DAT: %s completion status %d, DAT_DTO_%s", which,
			  (int)ev->event_data.dto_completion_event_data.status,
			  dto_status_name(ev->event_data.dto_completion_event_data.status));
}

static void dat_post_send(struct bench_conn *c, size_t len)
{
	struct dat_conn *d = dc_of(c);
	DAT_LMR_TRIPLET iov = {
		.lmr_context = d->lmr_ctx,
		.virtual_address = (DAT_VADDR)(uintptr_t)c->tx,
		.segment_length = len,
	};
	DAT_DTO_COOKIE cookie = { .as_64 = 0 };

	DCHECK(dat_ep_post_send(d->ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG));
	c->tx_out++;
}

/* An RDMA Write from tx to offset off of the peer's rx area, or an RDMA
 * Read of its first len bytes into our rx area. */
static void dat_rdma(struct bench_conn *c, int read, size_t off, size_t len)
{
	struct dat_conn *d = dc_of(c);
	DAT_LMR_TRIPLET iov = {
		.lmr_context = d->lmr_ctx,
		.virtual_address = (DAT_VADDR)(uintptr_t)(read ? c->rx : c->tx),
		.segment_length = len,
	};
	DAT_RMR_TRIPLET remote = d->peer;
	DAT_DTO_COOKIE cookie = { .as_64 = 1 };

	remote.RMR_ADDR += off;
	remote.segment_length = len;
	if (read)
		DCHECK(dat_ep_post_rdma_read(d->ep, 1, &iov, cookie, &remote,
					     DAT_COMPLETION_DEFAULT_FLAG));
	else
		DCHECK(dat_ep_post_rdma_write(d->ep, 1, &iov, cookie, &remote,
					      DAT_COMPLETION_DEFAULT_FLAG));
	c->tx_out++;
}

static void dat_post_write(struct bench_conn *c, size_t off, size_t len)
{
	dat_rdma(c, 0, off, len);
}

static void dat_post_read(struct bench_conn *c, size_t len)
{
	dat_rdma(c, 1, 0, len);
}

static void dat_post_recv(struct bench_conn *c, int slot)
{
	struct dat_conn *d = dc_of(c);
	size_t len;
	uint8_t *buf = bench_slot(c, slot, &len);
	DAT_LMR_TRIPLET iov = {
		.lmr_context = d->lmr_ctx,
		.virtual_address = (DAT_VADDR)(uintptr_t)buf,
		.segment_length = len,
	};
	DAT_DTO_COOKIE cookie = { .as_64 = (DAT_UINT64)slot };

	DCHECK(dat_ep_post_recv(d->ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG));
}

/* One event from a DTO EVD: dat_evd_dequeue (0 if empty) or dat_evd_wait. */
static int dat_get(DAT_EVD_HANDLE evd, DAT_EVENT *ev, enum bench_wait w,
		   DAT_COUNT *nmore, const char *which)
{
	DAT_RETURN rc;

	*nmore = 0;
	if (w == BENCH_POLL) {
		rc = dat_evd_dequeue(evd, ev);
		if (DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY)
			return 0;
		if (rc != DAT_SUCCESS)
			dat_fail("dat_evd_dequeue", rc);
	} else {
		rc = dat_evd_wait(evd, (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u, 1, ev,
				  nmore);
		if (DAT_GET_TYPE(rc) == DAT_TIMEOUT_EXPIRED)
			bench_die(BENCH_EXIT_FAIL, "DAT: no %s completion in %d s",
				  which, BENCH_WAIT_MS / 1000);
		if (rc != DAT_SUCCESS)
			dat_fail("dat_evd_wait", rc);
	}
	dto_check(ev, which);
	return 1;
}

static int dat_reap_tx(struct bench_conn *c, int max, enum bench_wait w)
{
	struct dat_conn *d = dc_of(c);
	DAT_COUNT nmore;
	DAT_EVENT ev;
	int n = 0;

	if (max <= 0)
		return 0;
	if (!dat_get(d->req_evd, &ev, w, &nmore, "request"))
		return 0;
	n = 1;
	/* what dat_evd_wait left queued (or a dequeue finds) comes without
	 * sleeping, as fi_cq_sread returns up to count entries */
	while (n < max && dat_get(d->req_evd, &ev, BENCH_POLL, &nmore, "request"))
		n++;
	c->tx_out -= n;
	return n;
}

static int dat_get_rx(struct bench_conn *c, size_t expect, int *slot,
		      size_t *len, enum bench_wait w)
{
	struct dat_conn *d = dc_of(c);
	DAT_COUNT nmore;
	DAT_EVENT ev;

	(void)expect;   /* messages have their own length */
	if (!dat_get(d->rcv_evd, &ev, w, &nmore, "receive"))
		return 0;
	*slot = (int)ev.event_data.dto_completion_event_data.user_cookie.as_64;
	*len = (size_t)ev.event_data.dto_completion_event_data.transfered_length;
	return 1;
}

static void dat_mem_wait_nop(struct bench_conn *c)
{
	(void)c;        /* libdat's progress thread is always there */
}

/* One connection on a new EP with the provider's default attributes,
 * sharing the request EVD and taking its connection events on setup_evd.
 * A consumer reads the private data it is sent, so the server queries the
 * request.  msg: the client sends a first message of msg bytes once
 * established and disconnects once it completed; the server has a receive
 * posted on the EP before it accepts (its completion to setup_rcv_evd: the
 * pattern's receive EVD may hold the fence that follows the last
 * connection) and waits for it. */
static void dat_setup(struct bench_conn *c, int client, size_t pdata, size_t msg)
{
	struct dat_conn *d = dc_of(c);
	DAT_EP_HANDLE ep;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_COUNT nmore;
	DAT_EVENT ev;

	if (msg > BENCH_SMALL)
		bench_die(BENCH_EXIT_FAIL, "DAT: a first message of %zu bytes (at most %d)",
			  msg, BENCH_SMALL);
	DCHECK(dat_ep_create(d->ia, d->pz, d->setup_rcv_evd, d->req_evd, d->setup_evd,
			     NULL, &ep));
	if (!client && msg) {
		DAT_LMR_TRIPLET iov = {
			.lmr_context = d->lmr_ctx,
			.virtual_address = (DAT_VADDR)(uintptr_t)c->small,
			.segment_length = BENCH_SMALL,
		};
		DAT_DTO_COOKIE cookie = { .as_64 = 0 };

		DCHECK(dat_ep_post_recv(ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG));
	}
	if (client) {
		DCHECK(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&d->srv_addr, d->qual,
				      (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u,
				      (DAT_COUNT)pdata, (void *)c->tx,
				      DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
		dat_wait_event(d->setup_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
			       "setup: waiting for ESTABLISHED");
		if (ev.event_data.connect_event_data.private_data_size != (DAT_COUNT)pdata)
			bench_die(BENCH_EXIT_FAIL, "DAT: setup: the accept carries %d bytes",
				  (int)ev.event_data.connect_event_data.private_data_size);
		if (msg) {
			DAT_LMR_TRIPLET iov = {
				.lmr_context = d->lmr_ctx,
				.virtual_address = (DAT_VADDR)(uintptr_t)c->tx,
				.segment_length = msg,
			};
			DAT_DTO_COOKIE cookie = { .as_64 = 0 };

			DCHECK(dat_ep_post_send(ep, 1, &iov, cookie,
						DAT_COMPLETION_DEFAULT_FLAG));
			dat_get(d->req_evd, &ev, BENCH_BLOCK, &nmore, "first message's send");
		}
		DCHECK(dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG));
	} else {
		dat_wait_event(d->cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev,
			       "setup: waiting for the connection request");
		cr = ev.event_data.cr_arrival_event_data.cr_handle;
		memset(&crp, 0, sizeof(crp));
		DCHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
		if (crp.private_data_size != (DAT_COUNT)pdata)
			bench_die(BENCH_EXIT_FAIL, "DAT: setup: the request carries %d bytes",
				  (int)crp.private_data_size);
		DCHECK(dat_cr_accept(cr, ep, (DAT_COUNT)pdata, (void *)c->tx));
		dat_wait_event(d->setup_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
			       "setup: waiting for ESTABLISHED");
		if (msg) {
			dat_get(d->setup_rcv_evd, &ev, BENCH_BLOCK, &nmore, "first message");
			if (ev.event_data.dto_completion_event_data.transfered_length != msg)
				bench_die(BENCH_EXIT_FAIL, "DAT: setup: a first message of %llu "
					  "bytes, expected %zu", (unsigned long long)
					  ev.event_data.dto_completion_event_data.transfered_length,
					  msg);
		}
	}
	dat_wait_event(d->setup_evd, DAT_CONNECTION_EVENT_DISCONNECTED, &ev,
		       "setup: waiting for DISCONNECTED");
	DCHECK(dat_ep_free(ep));
}

static void dat_idle(struct bench_conn *c, int client, int n)
{
	struct dat_conn *d = dc_of(c);
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	int i;

	d->idle = calloc((size_t)n, sizeof(d->idle[0]));
	if (!d->idle)
		bench_die(BENCH_EXIT_FAIL, "out of memory");
	/* all requests out (or accepted as they come), then the n ends */
	for (i = 0; i < n; i++) {
		DCHECK(dat_ep_create(d->ia, d->pz, d->rcv_evd, d->req_evd,
				     d->setup_evd, NULL, &d->idle[i]));
		d->nidle++;
		if (client) {
			DCHECK(dat_ep_connect(d->idle[i],
					      (DAT_IA_ADDRESS_PTR)&d->srv_addr, d->qual,
					      (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u, 0, NULL,
					      DAT_QOS_BEST_EFFORT,
					      DAT_CONNECT_DEFAULT_FLAG));
		} else {
			dat_wait_event(d->cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev,
				       "idle EPs: waiting for a connection request");
			cr = ev.event_data.cr_arrival_event_data.cr_handle;
			DCHECK(dat_cr_accept(cr, d->idle[i], 0, NULL));
		}
	}
	for (i = 0; i < n; i++)
		dat_wait_event(d->setup_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
			       "idle EPs: waiting for ESTABLISHED");
}

/* The client ends the idle connections; both sides see them end. */
static int dat_idle_close(struct dat_conn *d, int client)
{
	DAT_EVENT ev;
	DAT_COUNT nmore;
	int i, bad = 0;

	if (client)
		for (i = 0; i < d->nidle; i++)
			if (dat_ep_disconnect(d->idle[i], DAT_CLOSE_GRACEFUL_FLAG) !=
			    DAT_SUCCESS)
				bad = 1;
	for (i = 0; i < d->nidle && !bad; i++) {
		memset(&ev, 0, sizeof(ev));
		if (dat_evd_wait(d->setup_evd, (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u, 1,
				 &ev, &nmore) != DAT_SUCCESS ||
		    ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
			bad = 1;
	}
	for (i = 0; i < d->nidle; i++)
		if (dat_ep_free(d->idle[i]) != DAT_SUCCESS)
			bad = 1;
	if (bad)
		bench_warn("DAT teardown: the idle connections did not all end");
	free(d->idle);
	d->idle = NULL;
	d->nidle = 0;
	return bad;
}

static int dat_close(struct bench_conn *c, int client)
{
	struct dat_conn *d = dc_of(c);
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_RETURN rc;
	int bad = 0;

#define SOFT(call) \
	do { \
		rc = (call); \
		if (rc != DAT_SUCCESS) { \
			const char *ma_ = "?", *mi_ = ""; \
			dat_strerror(rc, &ma_, &mi_); \
			bench_warn("DAT teardown: %s: %s %s", #call, ma_, mi_ ? mi_ : ""); \
			bad = 1; \
		} \
	} while (0)

	if (d->nidle && dat_idle_close(d, client))
		bad = 1;
	if (client)
		SOFT(dat_ep_disconnect(d->ep, DAT_CLOSE_GRACEFUL_FLAG));
	memset(&ev, 0, sizeof(ev));
	rc = dat_evd_wait(d->conn_evd, (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u, 1, &ev, &nmore);
	if (rc != DAT_SUCCESS || ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED) {
		bench_warn("DAT teardown: no DISCONNECTED event (rc 0x%x, event 0x%x)",
			   (unsigned)rc, (unsigned)ev.event_number);
		bad = 1;
	}
	SOFT(dat_ep_free(d->ep));
	/* the receives still posted were flushed onto the receive EVD */
	while (dat_evd_dequeue(d->rcv_evd, &ev) == DAT_SUCCESS)
		;
	while (dat_evd_dequeue(d->req_evd, &ev) == DAT_SUCCESS)
		;
	SOFT(dat_lmr_free(d->lmr));
	if (d->psp)
		SOFT(dat_psp_free(d->psp));
	SOFT(dat_evd_free(d->rcv_evd));
	SOFT(dat_evd_free(d->req_evd));
	if (!d->borrowed) {
		SOFT(dat_evd_free(d->cr_evd));
		SOFT(dat_evd_free(d->setup_evd));
		SOFT(dat_evd_free(d->setup_rcv_evd));
		SOFT(dat_evd_free(d->spin_evd));
	}
	SOFT(dat_evd_free(d->conn_evd));
	if (!d->borrowed) {
		SOFT(dat_pz_free(d->pz));
		SOFT(dat_ia_close(d->ia, bad ? DAT_CLOSE_ABRUPT_FLAG :
				  DAT_CLOSE_GRACEFUL_FLAG));
	}
#undef SOFT
	free(d->buf);
	free(d);
	c->priv = NULL;
	return bad ? -1 : 0;
}

/* read_evd/write_evd's target: one dequeue on an EVD nothing comes to. */
static void dat_spin_other(struct bench_conn *c)
{
	DAT_EVENT ev;
	DAT_RETURN rc = dat_evd_dequeue(dc_of(c)->spin_evd, &ev);

	if (DAT_GET_TYPE(rc) != DAT_QUEUE_EMPTY)
		dat_fail("dat_evd_dequeue (an EVD nothing comes to)", rc);
}

static const struct bench_ops dat_ops = {
	.post_send = dat_post_send,
	.post_write = dat_post_write,
	.post_read = dat_post_read,
	.spin_other = dat_spin_other,
	.post_recv = dat_post_recv,
	.reap_tx = dat_reap_tx,
	.get_rx = dat_get_rx,
	.mem_wait_begin = dat_mem_wait_nop,
	.mem_wait_end = dat_mem_wait_nop,
	.setup = dat_setup,
	.idle = dat_idle,
	.close = dat_close,
};

/* The request and receive EVDs, the registered buffer and the EP (its
 * connection events to d->conn_evd), receives posted. */
static void dat_ep_open(struct dat_conn *d, struct bench_conn *c,
			size_t max_size, const struct stack *st)
{
	DAT_REGION_DESCRIPTION region;
	DAT_VLEN reg_len = 0;
	DAT_VADDR reg_addr = 0;
	DAT_EP_PARAM p;
	DAT_COUNT qlen = opt.window + 16;
	int i;

	DCHECK(dat_evd_create(d->ia, qlen, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			      &d->req_evd));
	DCHECK(dat_evd_create(d->ia, BENCH_NRECV + win_small() + 8, DAT_HANDLE_NULL,
			      DAT_EVD_DTO_FLAG, &d->rcv_evd));

	d->buf = bench_alloc(max_size, &d->buflen);
	region.for_va = d->buf;
	DCHECK(dat_lmr_create(d->ia, DAT_MEM_TYPE_VIRTUAL, region, d->buflen, d->pz,
			      DAT_MEM_PRIV_ALL_FLAG, VA_TYPE_ARG &d->lmr, &d->lmr_ctx,
			      &d->rmr_ctx, &reg_len, &reg_addr));
	if (reg_addr != (DAT_VADDR)(uintptr_t)d->buf || reg_len < d->buflen)
		bench_die(BENCH_EXIT_FAIL,
			  "DAT: dat_lmr_create registered [0x%llx, +%llu), asked [%p, +%zu)",
			  (unsigned long long)reg_addr, (unsigned long long)reg_len,
			  d->buf, d->buflen);

	/* the provider's defaults, with room for the write window */
	DCHECK(dat_ep_create(d->ia, d->pz, d->rcv_evd, d->req_evd, d->conn_evd,
			     NULL, &d->ep));
	memset(&p, 0, sizeof(p));
	DCHECK(dat_ep_query(d->ep, DAT_EP_FIELD_EP_ATTR_ALL, &p));
	DCHECK(dat_ep_free(d->ep));
	if (p.ep_attr.max_request_dtos < opt.window + 8)
		p.ep_attr.max_request_dtos = opt.window + 8;
	if (p.ep_attr.max_recv_dtos < BENCH_NRECV + win_small())
		p.ep_attr.max_recv_dtos = BENCH_NRECV + win_small();
	if (p.ep_attr.max_message_size < max_size)
		p.ep_attr.max_message_size = max_size;
	if (p.ep_attr.max_rdma_size < max_size)
		p.ep_attr.max_rdma_size = max_size;
	DCHECK(dat_ep_create(d->ia, d->pz, d->rcv_evd, d->req_evd, d->conn_evd,
			     &p.ep_attr, &d->ep));

	memset(c, 0, sizeof(*c));
	c->name = st->label;
	c->ops = &dat_ops;
	c->priv = d;
	bench_layout(c, d->buf, max_size);
	for (i = 0; i < BENCH_NRECV; i++)
		dat_post_recv(c, i);
}

/* IA, PZ, EVDs, the registered buffer and the EP, receives posted. */
static struct dat_conn *dat_open(struct bench_conn *c, size_t max_size,
				 const struct stack *st)
{
	struct dat_conn *d = calloc(1, sizeof(*d));

	if (!d)
		bench_die(BENCH_EXIT_FAIL, "out of memory");
	d->async = DAT_HANDLE_NULL;
	DCHECK(dat_ia_open((DAT_NAME_PTR)st->ia, 8, &d->async, &d->ia));
	DCHECK(dat_pz_create(d->ia, &d->pz));
	DCHECK(dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			      &d->conn_evd));
	/* -e: the idle connections are made and end all at once: their
	 * events and requests all fit (a request that finds the CR EVD full
	 * is refused); -T: its connections are requested one at a time */
	DCHECK(dat_evd_create(d->ia, 8 + opt.idle, DAT_HANDLE_NULL,
			      DAT_EVD_CONNECTION_FLAG, &d->setup_evd));
	DCHECK(dat_evd_create(d->ia, 8 + opt.idle, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
			      &d->cr_evd));
	DCHECK(dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			      &d->setup_rcv_evd));
	DCHECK(dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			      &d->spin_evd));
	dat_ep_open(d, c, max_size, st);
	return d;
}

static void own_triplet(const struct dat_conn *d, const struct bench_conn *c,
			DAT_RMR_TRIPLET *t)
{
	memset(t, 0, sizeof(*t));
	t->rmr_context = d->rmr_ctx;
	t->RMR_ADDR = (DAT_VADDR)(uintptr_t)c->rx;
	t->segment_length = BENCH_RING * c->max_size;
}

static void peer_triplet(struct dat_conn *d, DAT_COUNT size, const void *data,
			 const char *from)
{
	if (size != (DAT_COUNT)sizeof(d->peer) || !data)
		bench_die(BENCH_EXIT_FAIL, "DAT: %s carries %d bytes of private data, expected %zu",
			  from, (int)size, sizeof(d->peer));
	memcpy(&d->peer, data, sizeof(d->peer));
}

static void dat_server_accept(struct bench_conn *c)
{
	struct dat_conn *d = dc_of(c);
	DAT_RMR_TRIPLET me;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EVENT ev;

	dat_wait_event(d->cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev,
		       "waiting for the connection request");
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	memset(&crp, 0, sizeof(crp));
	DCHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	peer_triplet(d, crp.private_data_size, crp.private_data, "the connection request");
	own_triplet(d, c, &me);
	DCHECK(dat_cr_accept(cr, d->ep, (DAT_COUNT)sizeof(me), &me));
	dat_wait_event(d->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
		       "waiting for ESTABLISHED");
}

static void dat_client_connect(struct bench_conn *c, DAT_CONN_QUAL qual)
{
	struct dat_conn *d = dc_of(c);
	struct sockaddr_in sa;
	DAT_RMR_TRIPLET me;
	DAT_EVENT ev;

	DAT_IA_ATTR ia_attr;

	/* the server is this host: connect to the IA's own address
	 * (127.0.0.1 for ofi-tcp, the RDMA netdev's for verbs) */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&ia_attr, 0, sizeof(ia_attr));
	if (dat_ia_query(d->ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &ia_attr, 0,
			 NULL) == DAT_SUCCESS && ia_attr.ia_address_ptr &&
	    ia_attr.ia_address_ptr->sa_family == AF_INET)
		memcpy(&sa, ia_attr.ia_address_ptr, sizeof(sa));
	sa.sin_port = 0;
	d->srv_addr = sa;
	d->qual = qual;
	own_triplet(d, c, &me);
	DCHECK(dat_ep_connect(d->ep, (DAT_IA_ADDRESS_PTR)&sa, qual,
			      (DAT_TIMEOUT)BENCH_WAIT_MS * 1000u, (DAT_COUNT)sizeof(me),
			      &me, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	dat_wait_event(d->conn_evd, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
		       "waiting for ESTABLISHED");
	peer_triplet(d, ev.event_data.connect_event_data.private_data_size,
		     ev.event_data.connect_event_data.private_data, "the accept");
}

/* -T: one more connection on base's IA and PZ, with EVDs of its own
 * (connection, request, receive) and its own registered buffer, so that a
 * thread driving it touches no EVD another thread drives.  The server
 * takes its request from base's PSP; the client connects to the same
 * PSP; both make them in the same order, one at a time. */
static void dat_open_more(struct bench_conn *base, struct bench_conn *c,
			  size_t max_size, const struct stack *st, int client)
{
	struct dat_conn *b = dc_of(base), *d = calloc(1, sizeof(*d));

	if (!d)
		bench_die(BENCH_EXIT_FAIL, "out of memory");
	d->borrowed = 1;
	d->ia = b->ia;
	d->pz = b->pz;
	d->cr_evd = b->cr_evd;
	d->async = b->async;
	DCHECK(dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			      &d->conn_evd));
	dat_ep_open(d, c, max_size, st);
	if (client)
		dat_client_connect(c, b->qual);
	else
		dat_server_accept(c);
}

/* ---- the patterns (one copy for both stacks) ------------------------------------ */

/* The next receive, of expect bytes: a shorter or longer one is an error. */
static void wait_rx(struct bench_conn *c, size_t expect, enum bench_wait w, int *slot)
{
	size_t got;

	while (!c->ops->get_rx(c, expect, slot, &got, w))
		;
	if (got != expect)
		bench_die(BENCH_EXIT_FAIL, "%s: received %zu bytes, expected %zu",
			  c->name, got, expect);
}

/* Reaps until at most keep sends/writes are outstanding. */
static void drain_tx(struct bench_conn *c, int keep, enum bench_wait w)
{
	while (c->tx_out > keep)
		c->ops->reap_tx(c, c->tx_out - keep, w);
}

/* A send/recv exchange, client first; it also checks the message size. */
static void exchange(struct bench_conn *c, int client, size_t len, enum bench_wait w)
{
	int slot;

	if (client)
		c->ops->post_send(c, len);
	wait_rx(c, len, w, &slot);
	if (!client)
		c->ops->post_send(c, len);
	c->ops->post_recv(c, slot);
	drain_tx(c, 0, w);
}

/* Start of every measurement: buffers clean, both sides here.  The server
 * sleeps meanwhile (it waits blocking), so the client's quiet_wait sees
 * only what else runs on the machine. */
static void sync_peers(struct bench_conn *c, int client)
{
	memset((void *)c->rx, 0, BENCH_RING * c->max_size);
	memset((void *)c->tx, 0, c->max_size);
	exchange(c, client, 8, BENCH_BLOCK);
}

static long lat_iters(enum bench_wait w)
{
	long n = w == BENCH_POLL ? opt.iters : opt.iters / 4;

	return n < 20 ? 20 : n;
}

static long warmup_iters(long n)
{
	long wu = n / 10;

	return wu < 10 ? 10 : wu;
}

static double *samples;

/* Half round trips from the iteration timestamps t[0..n]. */
static double lat_result(const uint64_t *t, long warm, long n)
{
	long i;

	for (i = 0; i < n; i++)
		samples[i] = (double)(t[warm + i + 1] - t[warm + i]) / 2000.0;
	return median(samples, (int)n);
}

static uint64_t *stamps;

static double run_sendrecv(struct bench_conn *c, int client, size_t size,
			   enum bench_wait w)
{
	long n = lat_iters(w), warm = warmup_iters(n), total = warm + n, i;
	const struct bench_ops *o = c->ops;
	int slot;

	for (i = 0; i < total; i++) {
		if (client) {
			stamps[i] = now_ns();
			o->post_send(c, size);
		}
		wait_rx(c, size, w, &slot);
		if (!client)
			o->post_send(c, size);
		o->post_recv(c, slot);
		/* the send before the receive has surely completed by now */
		drain_tx(c, 0, w);
	}
	if (!client)
		return 0;
	stamps[total] = now_ns();
	return lat_result(stamps, warm, n);
}

/* Spins until the last byte of rx is v.  poll: calls the send queue
 * (dat_evd_dequeue / fi_cq_read), which drives the stack; block: no call
 * into the stack, just yield the CPU to its progress thread. */
static void wait_mem(struct bench_conn *c, size_t size, uint8_t v, enum bench_wait w)
{
	volatile uint8_t *last = c->rx + size - 1;

	while (__atomic_load_n(last, __ATOMIC_ACQUIRE) != v) {
		if (w == BENCH_POLL) {
			if (c->tx_out > 0)
				c->ops->reap_tx(c, c->tx_out, BENCH_POLL);
			else
				c->ops->reap_tx(c, 1, BENCH_POLL);
		} else {
			sched_yield();
		}
	}
}

static double run_write(struct bench_conn *c, int client, size_t size,
			enum bench_wait w)
{
	long n = lat_iters(w), warm = warmup_iters(n), total = warm + n, i;
	const struct bench_ops *o = c->ops;

	if (w == BENCH_BLOCK)
		o->mem_wait_begin(c);
	for (i = 0; i < total; i++) {
		uint8_t v = (uint8_t)(i % 255 + 1);

		if (client) {
			stamps[i] = now_ns();
			c->tx[size - 1] = v;
			o->post_write(c, 0, size);
			wait_mem(c, size, v, w);
			/* our write was placed before the peer wrote back */
			drain_tx(c, 0, w);
		} else {
			wait_mem(c, size, v, w);
			drain_tx(c, 0, w);
			c->tx[size - 1] = v;
			o->post_write(c, 0, size);
		}
	}
	drain_tx(c, 0, w);
	if (w == BENCH_BLOCK)
		o->mem_wait_end(c);
	if (!client)
		return 0;
	stamps[total] = now_ns();
	return lat_result(stamps, warm, n);
}

static long bw_count(size_t size)
{
	/* about 256 MiB per run, between n and 3 n writes */
	long m = (long)((256u << 20) / size);

	if (m < opt.iters)
		m = opt.iters;
	if (m > 3 * opt.iters)
		m = 3 * opt.iters;
	return m;
}

static void stream(struct bench_conn *c, size_t size, long m, enum bench_wait w)
{
	long posted = 0, done = 0;

	while (done < m) {
		while (posted < m && posted - done < opt.window) {
			c->ops->post_write(c, 0, size);
			posted++;
		}
		done += c->ops->reap_tx(c, opt.window, w);
	}
}

static double run_write_bw(struct bench_conn *c, int client, size_t size,
			   enum bench_wait w)
{
	long m = bw_count(size), warm = opt.window * 4;
	uint64_t t0, t1;

	if (client) {
		stream(c, size, warm, w);
		t0 = now_ns();
		stream(c, size, m, w);
	}
	exchange(c, client, 8, w);      /* the fence: all writes are in */
	if (!client)
		return 0;
	t1 = now_ns();
	return (double)m * (double)size / (double)(t1 - t0);  /* bytes/ns = GB/s */
}

/* Credit batches the Send stream's server returns for msgs messages: the
 * client starts with BENCH_NRECV (the receives posted) and waits for a
 * batch only when it has none left, so it takes every one sent and none is
 * left over to be mistaken for the fence's answer. */
static long grants_needed(long msgs)
{
	if (msgs <= BENCH_NRECV)
		return 0;
	return (msgs - BENCH_NRECV + CREDIT_GRANT - 1) / CREDIT_GRANT;
}

/* Send streaming: warm-up, m timed messages, then an 8-byte fence that the
 * server answers once everything before it arrived.  On iWARP a Send that
 * finds no receive posted ends the connection, so on DAT and raw the
 * client holds credits: the server reposts each receive at once and sends
 * CREDIT_GRANT back, 8 bytes, after every CREDIT_GRANT messages.  A socket
 * is a byte stream with TCP's flow control: no credits.  At most -w Sends
 * are outstanding, as for RDMA Writes. */
static double run_send_bw(struct bench_conn *c, int client, size_t size,
			  enum bench_wait w)
{
	const struct bench_ops *o = c->ops;
	long m = bw_count(size), warm = opt.window * 4, total = warm + m, i;
	long grants = o->stream ? 0 : grants_needed(total + 1), sent = 0;
	long credits = o->stream ? total + 1 : BENCH_NRECV;
	uint64_t t0 = 0, t1;
	int slot;

	if (!client) {
		/* total messages, then the fence */
		for (i = 0; i <= total; i++) {
			wait_rx(c, i < total ? size : 8, w, &slot);
			o->post_recv(c, slot);
			if (sent < grants && (i + 1) % CREDIT_GRANT == 0) {
				o->post_send(c, 8);
				sent++;
			}
			if (c->tx_out > 0)
				o->reap_tx(c, c->tx_out, BENCH_POLL);
		}
		o->post_send(c, 8);
		drain_tx(c, 0, w);
		return 0;
	}
	for (i = 0; i <= total; i++) {
		if (i == warm)
			t0 = now_ns();
		while (credits == 0) {
			wait_rx(c, 8, w, &slot);
			o->post_recv(c, slot);
			credits += CREDIT_GRANT;
		}
		o->post_send(c, i < total ? size : 8);
		credits--;
		while (c->tx_out >= opt.window)
			o->reap_tx(c, c->tx_out, w);
	}
	wait_rx(c, 8, w, &slot);        /* the fence's answer */
	t1 = now_ns();
	o->post_recv(c, slot);
	drain_tx(c, 0, w);
	return (double)m * (double)size / (double)(t1 - t0);  /* bytes/ns = GB/s */
}

/* Connection setup: warm-up, then n connections one after the other,
 * each set up and torn down on a fresh endpoint (ops->setup), then an
 * exchange on the pattern's connection as a fence: the server has finished
 * the last one.  Microseconds per connection, server work included (a
 * client that runs ahead waits in the listener's backlog).  msg > 0 (the
 * cycle pattern): each connection carries a first message of msg bytes,
 * client to server, before the client disconnects. */
static double run_connect(struct bench_conn *c, int client, size_t pdata, size_t msg)
{
	long n = lat_iters(BENCH_BLOCK), warm = warmup_iters(n), i;
	uint64_t t0 = 0, t1;

	for (i = 0; i < warm + n; i++) {
		if (i == warm)
			t0 = now_ns();
		c->ops->setup(c, client, pdata, msg);
	}
	exchange(c, client, 8, BENCH_BLOCK);
	if (!client)
		return 0;
	t1 = now_ns();
	return (double)(t1 - t0) / 1000.0 / (double)n;
}

/* ---- rounds: write_poll and the one-sided patterns --------------------------------- */

#define ROUNDS_MIN 10000        /* timed rounds per run (or -n, when more) ... */
#define ROUND_CAP_NS 1000000000ull      /* ... unless they take longer than this */
#define WARM_CAP_NS 100000000ull        /* warm-up: a tenth of that, at most this long */
#define ROUNDS_LEAST 20         /* timed rounds, whatever the time */
#define SLOW_NS 1000000u        /* a round longer than this had a millisecond step */
#define MARK_STOP 255           /* the byte that ends a run; rounds mark 1 .. 254 */

/* The client's clock for a run of rounds: round i starts at stamps[i],
 * which is also when round i-1 ended. */
struct rounds {
	long i;                 /* the round about to start */
	long warm;              /* the first timed round; -1 while warming up */
	uint64_t t0;            /* when the warm-up, then the timed rounds, began */
};

/* What the last run of rounds measured besides its median (client). */
static struct {
	double p99;
	long slow, n;           /* rounds over SLOW_NS, of n */
} rstat;

static long rounds_max(void)
{
	return opt.iters > ROUNDS_MIN ? opt.iters : ROUNDS_MIN;
}

/* Client: stamps the start of round r->i and says whether to run it.  A
 * tenth of rounds_max() (at most WARM_CAP_NS) warms up, then rounds_max()
 * are timed, or as many as ROUND_CAP_NS allows (at least ROUNDS_LEAST):
 * a stack that takes 2 ms a round runs 500 of them, not 10,000. */
static int round_next(struct rounds *r)
{
	uint64_t t = now_ns();

	stamps[r->i] = t;
	if (r->i == 0)
		r->t0 = t;
	if (r->warm < 0 && (r->i >= warmup_iters(rounds_max()) || t - r->t0 > WARM_CAP_NS)) {
		r->warm = r->i;
		r->t0 = t;
	}
	return r->warm < 0 || (r->i - r->warm < rounds_max() &&
			       (r->i - r->warm < ROUNDS_LEAST || t - r->t0 < ROUND_CAP_NS));
}

/* The timed rounds' median in microseconds (returned) and p99, each
 * round's time times scale (0.5: the half round trip of a ping-pong), and
 * how many whole rounds took over SLOW_NS (rstat). */
static double round_result(const struct rounds *r, double scale)
{
	long n = r->i - r->warm, k, slow = 0;
	double med;

	for (k = 0; k < n; k++) {
		uint64_t d = stamps[r->warm + k + 1] - stamps[r->warm + k];

		samples[k] = (double)d * scale / 1000.0;
		slow += d > SLOW_NS;
	}
	med = median(samples, (int)n);  /* sorts them */
	rstat.p99 = samples[(99 * n + 99) / 100 - 1];  /* ceil(0.99 n) - 1 */
	rstat.slow = slow;
	rstat.n = n;
	return med;
}

/* Spins until the byte at p is v or MARK_STOP, and returns it.  No call
 * into the stack, unless it moves data only inside its calls (spin_calls:
 * raw libfabric then calls fi_cq_read, through reap_tx); other: one poll
 * of a queue nothing comes to each turn (spin_other: DAT's
 * dat_evd_dequeue on an EVD of its own). */
static uint8_t spin_mem(struct bench_conn *c, volatile uint8_t *p, uint8_t v, int other)
{
	const struct bench_ops *o = c->ops;
	uint8_t x;

	while ((x = __atomic_load_n(p, __ATOMIC_ACQUIRE)) != v && x != MARK_STOP) {
		if (other && o->spin_other)
			o->spin_other(c);
		if (o->spin_calls)
			o->reap_tx(c, c->tx_out > 0 ? c->tx_out : 1, BENCH_POLL);
	}
	return x;
}

/* The baseline of the round patterns on a stack without RDMA (sockets):
 * the busy-polled send/recv ping-pong of size bytes, in rounds.  The
 * client's last message starts with MARK_STOP and has no answer. */
static void pingpong_rounds(struct bench_conn *c, int client, size_t size,
			    struct rounds *r)
{
	const struct bench_ops *o = c->ops;
	size_t room;
	int slot, more = 1;

	for (;;) {
		if (client) {
			more = round_next(r);
			c->tx[0] = more ? 0 : MARK_STOP;
			o->post_send(c, size);
			if (!more)
				break;
			r->i++;
		}
		wait_rx(c, size, BENCH_POLL, &slot);
		more = bench_slot(c, slot, &room)[0] != MARK_STOP;
		o->post_recv(c, slot);
		if (!client && !more)
			break;
		if (!client)
			o->post_send(c, size);
		drain_tx(c, 0, BENCH_POLL);
	}
	drain_tx(c, 0, BENCH_POLL);
}

/* write_poll: an RDMA Write ping-pong into rings that both sides poll in
 * memory, as an MPI's eager RDMA channel: round i writes size bytes to
 * slot i % BENCH_RING of the peer's rx area, its last byte a mark that
 * changes every round; the target spins on that byte and makes no call
 * into the stack until it is there (but for spin_calls), then reaps its
 * own last write and answers the same way into the initiator's ring.
 * Half round trip per round, with p99 and the rounds over 1 ms.  Sockets:
 * the send/recv ping-pong of the same size. */
static double run_write_poll(struct bench_conn *c, int client, size_t size)
{
	const struct bench_ops *o = c->ops;
	struct rounds r = { .warm = -1 };

	if (!o->post_write) {
		pingpong_rounds(c, client, size, &r);
		return client ? round_result(&r, 0.5) : 0;
	}
	for (;; r.i++) {
		size_t off = (size_t)(r.i % BENCH_RING) * size;
		uint8_t v = (uint8_t)(r.i % (MARK_STOP - 1) + 1);
		volatile uint8_t *mark = c->rx + off + size - 1;

		if (client) {
			int more = round_next(&r);

			c->tx[size - 1] = more ? v : MARK_STOP;
			o->post_write(c, off, size);
			if (!more)
				break;
			spin_mem(c, mark, v, 0);
			drain_tx(c, 0, BENCH_POLL);
		} else {
			if (spin_mem(c, mark, v, 0) == MARK_STOP)
				break;
			drain_tx(c, 0, BENCH_POLL);
			c->tx[size - 1] = v;
			o->post_write(c, off, size);
		}
	}
	drain_tx(c, 0, BENCH_POLL);
	return client ? round_result(&r, 1.0 / 2) : 0;
}

/* read_evd, read_mem, write_evd, write_mem: the client RDMA-Reads (or
 * -Writes) size bytes of the server's rx area and busy-polls its request
 * EVD for the completion before the next.  The server posts nothing and
 * spins on the last byte of its rx area until the client's final 1-byte
 * RDMA Write puts MARK_STOP there; the _evd variants call spin_other on
 * each turn (a dat_evd_dequeue on an EVD nothing comes to), the _mem ones
 * nothing.  Microseconds per operation, a whole round trip on the wire.
 * Sockets: the whole round trip of the send/recv ping-pong. */
static double run_one_sided(struct bench_conn *c, int client, size_t size, int read,
			    int other)
{
	const struct bench_ops *o = c->ops;
	size_t stop_off = BENCH_RING * c->max_size - 1;
	struct rounds r = { .warm = -1 };

	if (read ? !o->post_read : !o->post_write) {
		pingpong_rounds(c, client, size, &r);
		return client ? round_result(&r, 1.0) : 0;
	}
	if (!client) {
		spin_mem(c, c->rx + stop_off, MARK_STOP, other);
		return 0;
	}
	for (; round_next(&r); r.i++) {
		if (read)
			o->post_read(c, size);
		else
			o->post_write(c, 0, size);
		drain_tx(c, 0, BENCH_POLL);
	}
	c->tx[0] = MARK_STOP;
	o->post_write(c, stop_off, 1);
	drain_tx(c, 0, BENCH_POLL);
	return round_result(&r, 1.0);
}

/* ---- the window of Sends ------------------------------------------------------------ */

#define GRANT_FINAL (UINT64_C(1) << 63)

/* An 8-byte Send of value v, as credits.  Only once the last one
 * completed is tx written, unless v is what it holds already. */
static void send_grant(struct bench_conn *c, uint64_t v)
{
	uint64_t old;

	memcpy(&old, (const void *)c->tx, sizeof(old));
	if (old != v) {
		drain_tx(c, 0, BENCH_POLL);
		memcpy((void *)c->tx, &v, sizeof(v));
	}
	c->ops->post_send(c, sizeof(v));
}

/* The value of the Send that came into slot, which is posted again. */
static uint64_t take_grant(struct bench_conn *c, int slot)
{
	size_t room;
	uint64_t v;

	memcpy(&v, bench_slot(c, slot, &room), sizeof(v));
	c->ops->post_recv(c, slot);
	return v;
}

/* window: Sends of size bytes, client to server, opt.window of them
 * outstanding: the client posts while fewer are and it holds credits,
 * and reaps completions busy-polling (dat_evd_dequeue) when it cannot.
 * The server keeps BENCH_NRECV + S receives posted (S = win_small(), the
 * small slots, posted when the pattern starts), reposts each as it is
 * consumed, and gives the credits back with an 8-byte Send of their number
 * every G reposts, G a quarter of the receives (so that at most 6 credit
 * Sends are ever on their way to the client's BENCH_NRECV receives); a
 * Send that found no receive would end an iWARP connection.  The client
 * takes credits when it holds fewer than a window.  After the warm-up and
 * m timed Sends, the server answers with the credits it has not yet
 * returned, marked GRANT_FINAL: the clock stops there, messages per
 * second.  Then the client sends exactly as many Sends as there are
 * receives posted, which the server takes without reposting, and the
 * server posts the BENCH_NRECV receives of the other patterns again and
 * answers.  Sockets run the same credits over the byte stream (one send()
 * and one recv() of size bytes per message): a socket completes a send
 * once the kernel took it, so there the credits (receives not yet read),
 * not the window, bound what is in flight. */
static double run_window(struct bench_conn *c, int client, size_t size)
{
	const struct bench_ops *o = c->ops;
	long m = 20 * opt.iters, warm = 4L * opt.window, total = warm + m, i, k;
	long nrecv = BENCH_NRECV + win_small(), grant = (nrecv + 3) / 4, credits;
	uint64_t t0 = 0, ns = 0, v;
	size_t got;
	int slot, final = 0;

	if (size > BENCH_SMALL)
		bench_die(BENCH_EXIT_FAIL, "window: %zu-byte Sends (at most %d)", size,
			  BENCH_SMALL);
	if (!client) {
		for (k = 0; k < win_small(); k++)
			o->post_recv(c, BENCH_NRECV + (int)k);
		send_grant(c, (uint64_t)win_small());
		for (i = 0, k = 0; i < total; i++) {
			wait_rx(c, size, BENCH_POLL, &slot);
			o->post_recv(c, slot);
			if (++k == grant) {
				send_grant(c, (uint64_t)k);
				k = 0;
			}
			if (c->tx_out > 0)
				o->reap_tx(c, c->tx_out, BENCH_POLL);
		}
		send_grant(c, (uint64_t)k | GRANT_FINAL);
		for (i = 0; i < nrecv; i++)
			wait_rx(c, size, BENCH_POLL, &slot);
		for (k = 0; k < BENCH_NRECV; k++)
			o->post_recv(c, (int)k);
		o->post_send(c, 8);
		drain_tx(c, 0, BENCH_POLL);
		return 0;
	}
	credits = BENCH_NRECV;
	for (i = 0; i < total + nrecv; ) {
		if (i == warm && !t0)
			t0 = now_ns();
		if (i == total && !final) {
			/* all timed Sends out: the server's answer to the last */
			while (!final) {
				wait_rx(c, 8, BENCH_POLL, &slot);
				v = take_grant(c, slot);
				credits += (long)(v & ~GRANT_FINAL);
				final = (v & GRANT_FINAL) != 0;
			}
			ns = now_ns() - t0;
			if (credits != nrecv)
				bench_die(BENCH_EXIT_FAIL, "%s: window: %ld credits at the end, "
					  "%ld receives posted", c->name, credits, nrecv);
		}
		if (credits < opt.window && i < total &&
		    o->get_rx(c, 8, &slot, &got, BENCH_POLL)) {
			v = take_grant(c, slot);
			if (v & GRANT_FINAL)
				bench_die(BENCH_EXIT_FAIL, "%s: window: the final credits came early",
					  c->name);
			credits += (long)v;
		}
		if (credits > 0 && c->tx_out < opt.window) {
			o->post_send(c, size);
			credits--;
			i++;
		} else {
			o->reap_tx(c, c->tx_out, BENCH_POLL);
		}
	}
	wait_rx(c, 8, BENCH_POLL, &slot);       /* the receives are back */
	o->post_recv(c, slot);
	drain_tx(c, 0, BENCH_POLL);
	return (double)m * 1e3 / (double)ns;    /* per ns * 1e3 = millions per s */
}

/* ---- the hand-off baseline ------------------------------------------------------------ */

#define HANDOFF_STOP 2          /* the eventfd value that ends the partner */

struct handoff {
	int to, back;           /* eventfds: to the partner, back from it */
	int cpu;                /* the partner's CPU, -1: the caller's pinning */
};

static void *handoff_partner(void *p)
{
	struct handoff *h = p;
	uint64_t v = 0;

	if (h->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(h->cpu, &set);
		if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
			bench_die(BENCH_EXIT_FAIL, "hand-off: cannot pin to CPU %d", h->cpu);
	}
	for (;;) {
		if (read(h->to, &v, sizeof(v)) != (ssize_t)sizeof(v))
			bench_die(BENCH_EXIT_FAIL, "hand-off: read: %s", strerror(errno));
		if (v == HANDOFF_STOP)
			return NULL;
		if (write(h->back, &v, sizeof(v)) != (ssize_t)sizeof(v))
			bench_die(BENCH_EXIT_FAIL, "hand-off: write: %s", strerror(errno));
	}
}

/* One thread wakes another through an eventfd, blocking in read, and is
 * woken back the same way: what a transport in user space costs at the
 * least to hand data from the thread that reads the socket to the one that
 * waits for it.  Rounds as for write_poll, in this (the client) process,
 * with its pinning; the half round trip: microseconds per hand-off.
 * partner_cpu >= 0: the partner runs on that CPU (the server's), so each
 * wakeup crosses CPUs, as the wakeup of a target's progress thread by data
 * the peer's CPU processed does (loopback TCP is processed in the
 * sender's context). */
static double handoff_run(int partner_cpu)
{
	struct handoff h = { eventfd(0, 0), eventfd(0, 0), partner_cpu };
	struct rounds r = { .warm = -1 };
	uint64_t v = 1;
	pthread_t tid;
	int err;

	if (h.to < 0 || h.back < 0)
		bench_die(BENCH_EXIT_FAIL, "eventfd: %s", strerror(errno));
	err = pthread_create(&tid, NULL, handoff_partner, &h);
	if (err)
		bench_die(BENCH_EXIT_FAIL, "pthread_create: %s", strerror(err));
	for (; round_next(&r); r.i++)
		if (write(h.to, &v, sizeof(v)) != (ssize_t)sizeof(v) ||
		    read(h.back, &v, sizeof(v)) != (ssize_t)sizeof(v))
			bench_die(BENCH_EXIT_FAIL, "hand-off: %s", strerror(errno));
	v = HANDOFF_STOP;
	if (write(h.to, &v, sizeof(v)) != (ssize_t)sizeof(v))
		bench_die(BENCH_EXIT_FAIL, "hand-off: write: %s", strerror(errno));
	pthread_join(tid, NULL);
	close(h.to);
	close(h.back);
	return round_result(&r, 0.5);
}

/* Whether pattern pat is measured in rounds (median, p99, rounds over
 * 1 ms), against sockets plus a hand-off; the one-sided ones count a whole
 * round trip per operation. */
static int is_round(int pat)
{
	return pat >= P_WRITE_POLL && pat <= P_WRITE_MEM;
}


/* Whether stack c can run pattern pat: sockets have no RDMA Write (the
 * round patterns run their socket baseline there). */
static int supports(const struct bench_conn *c, int pat)
{
	switch (pat) {
	case P_WRITE:
	case P_WRITE_BW:
		return c->ops->post_write != NULL;
	case P_CONNECT:
	case P_CYCLE:
		return c->ops->setup != NULL;
	default:
		return 1;
	}
}

static int is_bw(int pat)
{
	return pat == P_SEND_BW || pat == P_WRITE_BW;
}

/* A pattern's unit: "us" (latency), "gbps" or "mmps" (millions of
 * messages per second, the window). */
static const char *unit_of(int pat)
{
	return is_bw(pat) ? "gbps" : pat == P_WINDOW ? "mmps" : "us";
}

static double run_test(struct bench_conn *c, int client, int pat, size_t size,
		       enum bench_wait w)
{
	static char label[96];
	double v = 0;

	snprintf(label, sizeof(label), "%s %s %s size %zu", c->name, pat_name[pat],
		 wait_name[w], size);
	current_test = label;
	alarm(STUCK_S);
	sync_peers(c, client);
	switch (pat) {
	case P_SENDRECV:
		v = run_sendrecv(c, client, size, w);
		break;
	case P_WRITE:
		v = run_write(c, client, size, w);
		break;
	case P_SEND_BW:
		v = run_send_bw(c, client, size, w);
		break;
	case P_WRITE_BW:
		v = run_write_bw(c, client, size, w);
		break;
	case P_CONNECT:
		v = run_connect(c, client, size, 0);
		break;
	case P_WRITE_POLL:
		v = run_write_poll(c, client, size);
		break;
	case P_READ_EVD:
	case P_READ_MEM:
	case P_WRITE_EVD:
	case P_WRITE_MEM:
		v = run_one_sided(c, client, size, pat <= P_READ_MEM,
				  pat == P_READ_EVD || pat == P_WRITE_EVD);
		break;
	case P_WINDOW:
		v = run_window(c, client, size);
		break;
	case P_CYCLE:
		v = run_connect(c, client, CONNECT_PDATA, size);
		break;
	}
	alarm(0);
	if (c->tx_out != 0)
		bench_die(BENCH_EXIT_FAIL, "%s: %d sends/writes never completed", label,
			  c->tx_out);
	if (client && opt.verbose)
		fprintf(stderr, "dat_bench: %-40s %10.4g %s\n", label, v,
			is_bw(pat) ? "GB/s" : pat == P_WINDOW ? "M msgs/s" : "us");
	return v;
}

/* ---- the two processes ------------------------------------------------------------ */

static double results[NPAT][2][MAX_SIZES][MAX_STACKS][MAX_REPS];
/* the round patterns' p99 and rounds over 1 ms, of how many (rstat) */
static double res_p99[NPAT][MAX_SIZES][MAX_STACKS][MAX_REPS];
static long res_slow[NPAT][MAX_SIZES][MAX_STACKS][MAX_REPS];
static long res_n[NPAT][MAX_SIZES][MAX_STACKS][MAX_REPS];
/* the hand-off baseline, once per repetition: median and p99, us; and
 * the same across CPUs (partner on the server's CPU; only when pinned) */
static double handoff_us[MAX_REPS], handoff_p99[MAX_REPS];
static double xhandoff_us[MAX_REPS], xhandoff_p99[MAX_REPS];

/* CPU time used on the whole machine, from /proc/stat: busy and total
 * jiffies.  Returns 0 when it cannot tell. */
static int cpu_times(unsigned long long *busy, unsigned long long *total)
{
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	int n, i;

	if (!f)
		return 0;
	n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1],
		   &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n < 5)
		return 0;
	*total = 0;
	for (i = 0; i < 8; i++)
		*total += v[i];
	*busy = *total - v[3] - v[4];   /* all but idle and iowait */
	return 1;
}

static int quiet_busy, quiet_count;
static double quiet_spent;

/* Waits (within a budget) until the machine is nearly idle over 50 ms:
 * while this runs the server sleeps, so what is busy is someone else.
 * Other work on a 2-CPU box skews whichever stack it lands on; DAT and
 * raw run back to back after this, so both see the same conditions. */
static void quiet_wait(void)
{
	const double budget_s = 6.0, max_s = 0.5, limit = 0.15;
	unsigned long long b0, t0, b1, t1;
	struct timespec ts = { 0, 50 * 1000 * 1000 };
	uint64_t start = now_ns();
	double busy = 0;

	quiet_count++;
	for (;;) {
		if (!cpu_times(&b0, &t0))
			return;
		nanosleep(&ts, NULL);
		if (!cpu_times(&b1, &t1) || t1 == t0)
			return;
		busy = (double)(b1 - b0) / (double)(t1 - t0);
		if (busy < limit)
			break;
		if ((double)(now_ns() - start) / 1e9 >= max_s ||
		    quiet_spent + (double)(now_ns() - start) / 1e9 >= budget_s) {
			quiet_busy++;
			break;
		}
	}
	quiet_spent += (double)(now_ns() - start) / 1e9;
}

/* Whether pattern pat runs with wait w: connection setup always blocks;
 * the patterns of legacy MPIs always poll (their waiting sides spin). */
static int pat_wait(int pat, int w)
{
	if (pat == P_CONNECT || pat == P_CYCLE)
		return w == BENCH_BLOCK;
	if (pat >= P_WRITE_POLL)
		return w == BENCH_POLL;
	return opt.waits[w];
}

/* The first round pattern asked for, or -1. */
static int first_round(void)
{
	int pat;

	for (pat = 0; pat < NPAT; pat++)
		if (opt.pats[pat] && is_round(pat))
			return pat;
	return -1;
}

static void run_all(struct bench_conn *conns[MAX_STACKS], int client)
{
	int rep, pat, w, si, k, first;

	for (rep = 0; rep < opt.reps; rep++)
		for (pat = 0; pat < NPAT; pat++) {
			if (!opt.pats[pat])
				continue;
			/* the round patterns' baseline, in the client alone,
			 * while the server sleeps in the next sync_peers */
			if (client && is_round(pat) && pat == first_round()) {
				if (opt.quiet)
					quiet_wait();
				current_test = "hand-off";
				alarm(STUCK_S);
				handoff_us[rep] = handoff_run(-1);
				handoff_p99[rep] = rstat.p99;
				if (opt.cpu[0] >= 0 && opt.cpu[0] != opt.cpu[1]) {
					xhandoff_us[rep] = handoff_run(opt.cpu[0]);
					xhandoff_p99[rep] = rstat.p99;
				}
				alarm(0);
			}
			for (w = 0; w < 2; w++) {
				if (!pat_wait(pat, w))
					continue;
				for (si = 0; si < opt.nsizes; si++) {
					if (!opt.size_on[pat][si])
						continue;
					first = 1;
					for (k = 0; k < nstacks; k++) {
						/* the first stack rotates with the repetition */
						int st = (rep + k) % nstacks;

						if (!supports(conns[st], pat))
							continue;
						if (client && first && opt.quiet)
							quiet_wait();
						first = 0;
						results[pat][w][si][st][rep] =
							run_test(conns[st], client, pat,
								 opt.sizes[si],
								 (enum bench_wait)w);
						if (client && is_round(pat)) {
							res_p99[pat][si][st][rep] = rstat.p99;
							res_slow[pat][si][st][rep] = rstat.slow;
							res_n[pat][si][st][rep] = rstat.n;
						}
					}
				}
			}
		}
}

/* ---- -T: threads polling at once, more of them than CPUs --------------------------- */

#define MT_SIZE 8               /* the ping-pong's message */

/* Each stack's -T connections, opt.threads of them (the 1-thread run uses
 * the first), and the client's values: [0] 1 thread, [1] opt.threads. */
static struct bench_conn *tconn[MAX_STACKS];
static double mt_us[2][MAX_STACKS][MAX_REPS];

struct mt_arg {
	struct bench_conn *c;
	int client;
	long warm, n;
	pthread_barrier_t *bar; /* client: all warm before the clock starts */
	uint64_t t0, t1;
};

/* n round trips of MT_SIZE bytes on c, busy-polled: the sendrecv
 * pattern's loop without its per-iteration clock. */
static void mt_pingpong(struct bench_conn *c, int client, long n)
{
	const struct bench_ops *o = c->ops;
	long i;
	int slot;

	for (i = 0; i < n; i++) {
		if (client)
			o->post_send(c, MT_SIZE);
		wait_rx(c, MT_SIZE, BENCH_POLL, &slot);
		if (!client)
			o->post_send(c, MT_SIZE);
		o->post_recv(c, slot);
		drain_tx(c, 0, BENCH_POLL);
	}
}

static void *mt_main(void *p)
{
	struct mt_arg *a = p;

	mt_pingpong(a->c, a->client, a->warm);
	if (a->bar)
		pthread_barrier_wait(a->bar);
	a->t0 = now_ns();
	mt_pingpong(a->c, a->client, a->n);
	a->t1 = now_ns();
	return NULL;
}

/* Warm-up round trips per thread: a tenth, at least 2 (with many threads
 * spinning, each one costs as much as a timed one). */
static long mt_warmup(long n)
{
	return n / 10 < 2 ? 2 : n / 10;
}

/* One run: nthreads threads, each on its own connection of stack st,
 * both sides; the client's value is the wall time from the first thread
 * leaving the barrier to the last one done, over the round trips one
 * thread made: microseconds per round trip. */
static double mt_run(struct bench_conn *main_conn, int st, int nthreads, int client)
{
	static char label[96];
	struct mt_arg arg[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	pthread_barrier_t bar;
	struct rusage ru0, ru1;
	uint64_t t0 = UINT64_MAX, t1 = 0;
	long n = opt.mt_iters, rts;
	int i, err;

	snprintf(label, sizeof(label), "%s sendrecv poll size %d, %d thread%s",
		 main_conn->name, MT_SIZE, nthreads, nthreads > 1 ? "s" : "");
	current_test = label;
	alarm(STUCK_S);
	sync_peers(main_conn, client);
	if (client && pthread_barrier_init(&bar, NULL, (unsigned)nthreads))
		bench_die(BENCH_EXIT_FAIL, "pthread_barrier_init failed");
	getrusage(RUSAGE_SELF, &ru0);
	for (i = 0; i < nthreads; i++) {
		arg[i] = (struct mt_arg){
			.c = &tconn[st][i], .client = client,
			.warm = mt_warmup(n), .n = n, .bar = client ? &bar : NULL,
		};
		err = pthread_create(&tid[i], NULL, mt_main, &arg[i]);
		if (err)
			bench_die(BENCH_EXIT_FAIL, "pthread_create: %s", strerror(err));
	}
	for (i = 0; i < nthreads; i++) {
		pthread_join(tid[i], NULL);
		if (arg[i].t0 < t0)
			t0 = arg[i].t0;
		if (arg[i].t1 > t1)
			t1 = arg[i].t1;
		if (tconn[st][i].tx_out != 0)
			bench_die(BENCH_EXIT_FAIL, "%s: %d sends never completed", label,
				  tconn[st][i].tx_out);
	}
	alarm(0);
	getrusage(RUSAGE_SELF, &ru1);
	if (client)
		pthread_barrier_destroy(&bar);
	if (!client)
		return 0;
	/* -v: the client's context switches per round trip, warm-up
	 * included: sleeps (voluntary: a futex, a blocking wait) and
	 * preemptions or yields (involuntary) */
	rts = (long)nthreads * (n + mt_warmup(n));
	if (opt.verbose)
		fprintf(stderr, "dat_bench: %-40s %10.4g us per round trip; client context "
			"switches per round trip: %.2f voluntary, %.2f involuntary\n", label,
			(double)(t1 - t0) / 1000.0 / (double)n,
			(double)(ru1.ru_nvcsw - ru0.ru_nvcsw) / (double)rts,
			(double)(ru1.ru_nivcsw - ru0.ru_nivcsw) / (double)rts);
	return (double)(t1 - t0) / 1000.0 / (double)n;
}

/* -T: 1 thread, then opt.threads, every stack back to back, the first
 * rotating with the repetition, as run_all does. */
static void run_threads(struct bench_conn *conns[MAX_STACKS], int client)
{
	int rep, ti, k, st;

	for (rep = 0; rep < opt.reps; rep++)
		for (ti = 0; ti < 2; ti++) {
			if (client && opt.quiet)
				quiet_wait();
			for (k = 0; k < nstacks; k++) {
				st = (rep + k) % nstacks;
				mt_us[ti][st][rep] = mt_run(conns[st], st,
							    ti ? opt.threads : 1, client);
			}
		}
}

/* -T: opt.threads more connections per stack, made one at a time by both
 * sides in the same order, before anything is timed. */
static void connect_threads(struct bench_conn *conns[MAX_STACKS], int client)
{
	int k, i;

	for (k = 0; k < nstacks; k++) {
		stage_of("connecting -T connections", k);
		tconn[k] = calloc((size_t)opt.threads, sizeof(tconn[k][0]));
		if (!tconn[k])
			bench_die(BENCH_EXIT_FAIL, "out of memory");
		for (i = 0; i < opt.threads; i++)
			switch (stacks[k].kind) {
			case K_DAT:
				dat_open_more(conns[k], &tconn[k][i], MT_SIZE, &stacks[k],
					      client);
				break;
			case K_RAW:
				raw_connect_more(conns[k], &tconn[k][i], client, MT_SIZE,
						 opt.raw_dc);
				break;
			case K_SOCK:
				sock_connect_more(conns[k], &tconn[k][i], client, MT_SIZE);
				break;
			default:
				break;
			}
	}
}

/* Before the stacks' own connections: their IAs, domains, listeners. */
static int close_threads(int client)
{
	int k, i, bad = 0;

	for (k = 0; k < nstacks; k++) {
		if (!tconn[k])
			continue;
		stage_of("closing -T connections", k);
		for (i = 0; i < opt.threads; i++)
			if (tconn[k][i].ops->close(&tconn[k][i], client))
				bad = 1;
		free(tconn[k]);
		tconn[k] = NULL;
	}
	return bad;
}

static void pin(int cpu)
{
	cpu_set_t set;

	if (cpu < 0)
		return;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bench_die(BENCH_EXIT_FAIL, "cannot pin to CPU %d: %s", cpu, strerror(errno));
}

static size_t max_size(void)
{
	size_t m = 8;
	int i;

	for (i = 0; i < opt.nsizes; i++)
		if (opt.sizes[i] > m)
			m = opt.sizes[i];
	return m;
}

static void write_all(int fd, const char *s)
{
	size_t len = strlen(s);

	if (write(fd, s, len) != (ssize_t)len)
		bench_die(BENCH_EXIT_FAIL, "pipe write: %s", strerror(errno));
}

static void alloc_arrays(void)
{
	long n = rounds_max();          /* more than -n's, and at least 20 */

	samples = calloc((size_t)n, sizeof(*samples));
	stamps = calloc((size_t)(n + warmup_iters(n) + 1), sizeof(*stamps));
	if (!samples || !stamps)
		bench_die(BENCH_EXIT_FAIL, "out of memory");
}

static int server_main(int pipe_fd)
{
	struct bench_conn conn[MAX_STACKS], *conns[MAX_STACKS];
	struct raw_listener *rl = NULL;
	struct sock_listener *sl = NULL;
	char line[32 * MAX_STACKS];
	size_t off = 0;
	int bad = 0, k;

	bench_role = "server";
	if (!opt.threads)
		pin(opt.cpu[0]);        /* -T: the threads float over every CPU */
	alloc_arrays();
	/* every stack's listener first, their ports to the client in one line */
	for (k = 0; k < nstacks; k++) {
		unsigned long long num = 0;
		uint16_t port = 0;

		stage_of("opening", k);
		switch (stacks[k].kind) {
		case K_DAT: {
			struct dat_conn *d = dat_open(&conn[k], max_size(), &stacks[k]);
			DAT_CONN_QUAL qual = 0;

			DCHECK(dat_psp_create_any(d->ia, &qual, d->cr_evd,
						  DAT_PSP_CONSUMER_FLAG, &d->psp));
			num = qual;
			break;
		}
		case K_RAW:
			rl = raw_listen(opt.prov, &port);
			num = port;
			break;
		case K_SOCK:
			sl = sock_listen(&port);
			num = port;
			break;
		default:
			break;
		}
		off += (size_t)snprintf(line + off, sizeof(line) - off, "%llu ", num);
	}
	snprintf(line + off, sizeof(line) - off, "\n");
	write_all(pipe_fd, line);
	close(pipe_fd);

	alarm(STUCK_S);
	for (k = 0; k < nstacks; k++) {
		stage_of("connecting", k);
		switch (stacks[k].kind) {
		case K_DAT:
			dat_server_accept(&conn[k]);
			break;
		case K_RAW:
			raw_accept(rl, &conn[k], max_size(), opt.raw_dc);
			break;
		case K_SOCK:
			sock_accept(sl, &conn[k], max_size(), opt.cm_hdr);
			break;
		default:
			break;
		}
		conns[k] = &conn[k];
		if (opt.idle && conns[k]->ops->idle)
			conns[k]->ops->idle(conns[k], 0, opt.idle);
	}
	if (opt.threads)
		connect_threads(conns, 0);
	alarm(0);

	if (opt.threads)
		run_threads(conns, 0);
	else
		run_all(conns, 0);

	alarm(STUCK_S);
	if (close_threads(0))
		bad = 1;
	for (k = 0; k < nstacks; k++) {
		stage_of("closing", k);
		exchange(conns[k], 0, 8, BENCH_POLL);   /* "done" */
		if (conns[k]->ops->close(conns[k], 0))
			bad = 1;
	}
	return bad ? BENCH_EXIT_FAIL : 0;
}

static void stage_of(const char *what, int k)
{
	if (stacks[k].kind == K_DAT)
		snprintf(stage, sizeof(stage), "%s DAT %s", what, stacks[k].ia);
	else
		snprintf(stage, sizeof(stage), "%s %s", what, stacks[k].label);
	current_test = stage;
}

static void fmt_val(char *buf, size_t len, double v, const char *unit)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (strcmp(unit, "gbps") == 0)
		snprintf(buf, len, v < 0.1 ? "%.3g GB/s" : "%.3f GB/s", v);
	else if (strcmp(unit, "mmps") == 0)
		snprintf(buf, len, "%.4f M/s", v);
	else
		snprintf(buf, len, "%.2f us", v);
}

/* Ratio columns: the first DAT IA against raw libfabric (DAT's own cost),
 * every other IA against the first, every IA (or raw) against sockets. */
struct ratio {
	int num, den;
	char label[96];         /* two stack labels and a slash */
};

static struct ratio ratios[2 * MAX_IAS + 1];
static int nratios;

static void add_ratio(int num, int den, int single)
{
	struct ratio *r = &ratios[nratios++];
	const char *a = stacks[num].kind == K_DAT && !single ? stacks[num].ia :
							      stacks[num].label;
	const char *b = stacks[den].kind == K_DAT && !single ? stacks[den].ia :
							      stacks[den].label;

	r->num = num;
	r->den = den;
	snprintf(r->label, sizeof(r->label), "%s/%s", a, b);
}

static void build_ratios(void)
{
	int k, dat0 = -1, raw = -1, sock = -1, single = opt.nias == 1;

	for (k = 0; k < nstacks; k++) {
		if (stacks[k].kind == K_DAT && dat0 < 0)
			dat0 = k;
		if (stacks[k].kind == K_RAW)
			raw = k;
		if (stacks[k].kind == K_SOCK)
			sock = k;
	}
	if (dat0 >= 0 && raw >= 0)
		add_ratio(dat0, raw, single);
	for (k = 0; k < nstacks; k++)
		if (stacks[k].kind == K_DAT && k != dat0)
			add_ratio(k, dat0, single);
	if (sock < 0)
		return;
	for (k = 0; k < nstacks; k++)
		if (stacks[k].kind == K_DAT)
			add_ratio(k, sock, single);
	if (dat0 < 0 && raw >= 0)
		add_ratio(raw, sock, single);
}

/* The medians of one row, NAN for a stack that did not run it. */
static void row_medians(struct bench_conn *conns[MAX_STACKS], int pat, int w, int si,
			double med[MAX_STACKS])
{
	double tmp[MAX_REPS];
	int st, rep;

	for (st = 0; st < nstacks; st++) {
		med[st] = NAN;
		if (!supports(conns[st], pat))
			continue;
		for (rep = 0; rep < opt.reps; rep++)
			tmp[rep] = results[pat][w][si][st][rep];
		med[st] = median(tmp, opt.reps);
	}
}

/* One "bench:" value: key_unit=v, or - when it was not measured. */
static void print_kv(const char *key, const char *unit, double v)
{
	if (isnan(v))
		printf(" %s_%s=-", key, unit);
	else
		printf(" %s_%s=%.4g", key, unit, v);
}

/* -e: the client's connection rate and memory for the idle connections */
static double idle_us[MAX_STACKS];
static long idle_kib[MAX_STACKS];

/* The resident set, KiB (/proc/self/statm's second field, in pages). */
static long rss_kib(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	long size, pages = -1;

	if (f) {
		if (fscanf(f, "%ld %ld", &size, &pages) != 2)
			pages = -1;
		fclose(f);
	}
	return pages < 0 ? 0 : pages * (sysconf(_SC_PAGESIZE) / 1024);
}

/* The idle connections' set-up, per stack that has them: the time to
 * connect all -e at once (the client starts every connect, then waits for
 * them all) and the client's resident memory they took, per endpoint.
 * One value per run (no repetitions): read them as ratios. */
static void report_idle(struct bench_conn *conns[MAX_STACKS])
{
	int k, raw = -1;

	for (k = 0; k < nstacks; k++)
		if (stacks[k].kind == K_RAW && conns[k]->ops->idle)
			raw = k;
	printf("\n%d connections at once (client side, one run):\n", opt.idle);
	printf("%-16s %12s %12s %14s %8s %8s\n", "stack", "all ms", "per conn us",
	       "KiB per EP", "time/raw", "mem/raw");
	for (k = 0; k < nstacks; k++) {
		double per_us, kib;
		char tr[16] = "-", mr[16] = "-";

		if (!conns[k]->ops->idle)
			continue;
		per_us = idle_us[k] / opt.idle;
		kib = (double)idle_kib[k] / opt.idle;
		if (raw >= 0 && k != raw && idle_us[raw] > 0)
			snprintf(tr, sizeof(tr), "%.2f", idle_us[k] / idle_us[raw]);
		if (raw >= 0 && k != raw && idle_kib[raw] > 0)
			snprintf(mr, sizeof(mr), "%.2f",
				 (double)idle_kib[k] / (double)idle_kib[raw]);
		printf("%-16s %12.1f %12.1f %14.1f %8s %8s\n", stacks[k].label,
		       idle_us[k] / 1000.0, per_us, kib, tr, mr);
	}
	for (k = 0; k < nstacks; k++)
		if (conns[k]->ops->idle)
			printf("bench: pattern=connect_all stack=%s n=%d us_per_conn=%.2f "
			       "kib_per_ep=%.2f\n", stacks[k].key, opt.idle,
			       idle_us[k] / opt.idle, (double)idle_kib[k] / opt.idle);
}

/* -T: per stack, us per round trip with 1 and with opt.threads threads,
 * the aggregate round trips per second, and how much the time per round
 * trip grew (time(N)/time(1)); the usual ratio columns on each row. */
static void report_threads(void)
{
	double med[3][MAX_STACKS], tmp[MAX_REPS], v, ratio;
	char a[32], name[3][40];
	int ti, st, rep, k, row, raw = -1, sock = -1, dat0 = -1, width[2 * MAX_IAS + 1];

	for (st = nstacks - 1; st >= 0; st--) {
		if (stacks[st].kind == K_DAT)
			dat0 = st;
		if (stacks[st].kind == K_RAW)
			raw = st;
		if (stacks[st].kind == K_SOCK)
			sock = st;
	}
	for (ti = 0; ti < 2; ti++)
		for (st = 0; st < nstacks; st++) {
			for (rep = 0; rep < opt.reps; rep++)
				tmp[rep] = mt_us[ti][st][rep];
			med[ti][st] = median(tmp, opt.reps);
		}
	for (st = 0; st < nstacks; st++)
		med[2][st] = med[1][st] / med[0][st];
	for (k = 0; k < nratios; k++) {
		width[k] = (int)strlen(ratios[k].label);
		if (width[k] < 8)
			width[k] = 8;
	}
	snprintf(name[0], sizeof(name[0]), "us per round trip");
	snprintf(name[1], sizeof(name[1]), "round trips/s, all");
	snprintf(name[2], sizeof(name[2]), "time(%d)/time(1)", opt.threads);
	printf("\n%-8s %-20s", "threads", "value");
	for (st = 0; st < nstacks; st++)
		printf(" %14s", stacks[st].label);
	for (k = 0; k < nratios; k++)
		printf(" %*s", width[k], ratios[k].label);
	printf("\n");
	/* rows: us at 1 and N, rate at 1 and N, degradation */
	for (row = 0; row < 5; row++) {
		int nth = row == 1 || row == 3 ? opt.threads : 1;

		if (row < 4)
			printf("%-8d %-20s", nth, name[row / 2]);
		else
			printf("%-8s %-20s", "", name[2]);
		for (st = 0; st < nstacks; st++) {
			if (row < 2)
				snprintf(a, sizeof(a), "%.2f us", med[row][st]);
			else if (row < 4)
				snprintf(a, sizeof(a), "%.0f", nth * 1e6 / med[row - 2][st]);
			else
				snprintf(a, sizeof(a), "%.2f", med[2][st]);
			printf(" %14s", a);
		}
		for (k = 0; k < nratios; k++) {
			int m = row < 2 ? row : row < 4 ? row - 2 : 2;

			ratio = med[m][ratios[k].num] / med[m][ratios[k].den];
			if (row == 2 || row == 3)
				ratio = 1 / ratio;      /* rates */
			/* spinning stacks can be 1000 times apart */
			snprintf(a, sizeof(a), ratio < 0.095 ? "%.2g" : "%.2f", ratio);
			printf(" %*s", width[k], a);
		}
		printf("\n");
	}
	printf("\n");
	for (ti = 0; ti < 2; ti++) {
		int nth = ti ? opt.threads : 1;

		printf("bench: pattern=sendrecv_mt wait=poll size=%d threads=%d cpus=%d",
		       MT_SIZE, nth, opt.ncpus);
		print_kv("dat", "us", dat0 >= 0 ? med[ti][dat0] : NAN);
		for (st = 0; st < nstacks; st++)
			if (stacks[st].kind == K_DAT && st != dat0)
				print_kv(stacks[st].key, "us", med[ti][st]);
		print_kv("raw", "us", raw >= 0 ? med[ti][raw] : NAN);
		if (sock >= 0)
			print_kv("sock", "us", med[ti][sock]);
		/* the aggregate rate, every stack in the same order */
		v = dat0 >= 0 ? med[ti][dat0] : NAN;
		print_kv("dat", "rtps", nth * 1e6 / v);
		for (st = 0; st < nstacks; st++)
			if (stacks[st].kind == K_DAT && st != dat0)
				print_kv(stacks[st].key, "rtps", nth * 1e6 / med[ti][st]);
		print_kv("raw", "rtps", raw >= 0 ? nth * 1e6 / med[ti][raw] : NAN);
		if (sock >= 0)
			print_kv("sock", "rtps", nth * 1e6 / med[ti][sock]);
		ratio = dat0 >= 0 && raw >= 0 ? med[ti][dat0] / med[ti][raw] : NAN;
		if (isnan(ratio))
			printf(" ratio=-\n");
		else
			printf(" ratio=%.3f\n", ratio);
	}
	fflush(stdout);
}

/* A round pattern's row, stack st: the median of the p99s, and the
 * rounds over 1 ms and the rounds, summed over the repetitions. */
static void round_row(int pat, int si, int st, double *p99, long *slow, long *n)
{
	double tmp[MAX_REPS];
	int rep;

	*slow = *n = 0;
	for (rep = 0; rep < opt.reps; rep++) {
		tmp[rep] = res_p99[pat][si][st][rep];
		*slow += res_slow[pat][si][st][rep];
		*n += res_n[pat][si][st][rep];
	}
	*p99 = median(tmp, opt.reps);
}

/* The round patterns' baseline for the socket figure s of a row: the
 * socket ping-pong (measured as the pattern measures: its half round trip
 * for write_poll, its whole round trip for the one-sided ones) plus one
 * hand-off. */
static double round_base(double s)
{
	double tmp[MAX_REPS];
	int rep;

	for (rep = 0; rep < opt.reps; rep++)
		tmp[rep] = handoff_us[rep];
	return s + median(tmp, opt.reps);
}

/* The round patterns' fields of a bench: line: per stack KEY_p99,
 * KEY_slow and KEY_n, then the hand-off and the baseline
 * (handoff_us, base_us: sockets plus hand-off). */
static void print_rounds_kv(struct bench_conn *conns[MAX_STACKS], int pat, int si,
			    const double med[MAX_STACKS])
{
	double p99, tmp[MAX_REPS];
	long slow, n;
	int st, rep, sock = -1;

	for (st = 0; st < nstacks; st++) {
		if (!supports(conns[st], pat))
			continue;
		if (stacks[st].kind == K_SOCK)
			sock = st;
		round_row(pat, si, st, &p99, &slow, &n);
		printf(" %s_p99=%.4g %s_slow=%ld %s_n=%ld", stacks[st].key, p99,
		       stacks[st].key, slow, stacks[st].key, n);
	}
	for (rep = 0; rep < opt.reps; rep++)
		tmp[rep] = handoff_us[rep];
	printf(" handoff_us=%.4g", median(tmp, opt.reps));
	if (opt.cpu[0] >= 0 && opt.cpu[0] != opt.cpu[1]) {
		for (rep = 0; rep < opt.reps; rep++)
			tmp[rep] = xhandoff_us[rep];
		printf(" xhandoff_us=%.4g", median(tmp, opt.reps));
	}
	if (sock >= 0)
		printf(" base_us=%.4g", round_base(med[sock]));
}

/* The round patterns, one line per stack: median, p99, rounds over 1 ms
 * of all rounds (every repetition), whether that is fewer than 1 in
 * 10,000 ("no millisecond steps"), and the ratio to sockets plus a
 * hand-off. */
static void report_rounds(struct bench_conn *conns[MAX_STACKS])
{
	double med[MAX_STACKS], tmp[MAX_REPS], p99, base = NAN, xbase = NAN, xhand = NAN;
	char a[32], b[32], c[40], d[16];
	int pat, si, st, rep, sock = -1;
	int cross = opt.cpu[0] >= 0 && opt.cpu[0] != opt.cpu[1];
	long slow, n;

	for (st = 0; st < nstacks; st++)
		if (stacks[st].kind == K_SOCK)
			sock = st;
	for (rep = 0; rep < opt.reps; rep++)
		tmp[rep] = handoff_us[rep];
	p99 = median(tmp, opt.reps);
	for (rep = 0; rep < opt.reps; rep++)
		tmp[rep] = handoff_p99[rep];
	printf("\nhand-off (two threads of the client, eventfd, blocking read): "
	       "%.2f us median, %.2f us p99 (half round trip)\n", p99, median(tmp, opt.reps));
	if (cross) {
		for (rep = 0; rep < opt.reps; rep++)
			tmp[rep] = xhandoff_us[rep];
		p99 = median(tmp, opt.reps);
		xhand = p99;
		for (rep = 0; rep < opt.reps; rep++)
			tmp[rep] = xhandoff_p99[rep];
		printf("hand-off across CPUs (the same, the partner on the server's CPU %d): "
		       "%.2f us median, %.2f us p99 -- what waking a target's thread costs when "
		       "the peer's data is processed on the peer's CPU (loopback)\n",
		       opt.cpu[0], p99, median(tmp, opt.reps));
	}
	printf("write_poll: half round trip; read_*, write_*: per operation (a whole round "
	       "trip); >1ms: rounds whose whole round trip took over 1 ms\n");
	printf("base: sockets (the send/recv ping-pong, the same measure) + one hand-off; "
	       "steps: \"none\" when fewer than 1 round in 10,000 took over 1 ms\n");
	if (cross)
		printf("xbase: sockets + one hand-off across CPUs\n");
	printf("\n%-10s %8s %-16s %11s %11s %16s %6s %9s%s\n", "pattern", "size", "stack",
	       "median", "p99", ">1ms/rounds", "steps", "/base", cross ? "    /xbase" : "");
	for (pat = 0; pat < NPAT; pat++) {
		if (!opt.pats[pat] || !is_round(pat))
			continue;
		for (si = 0; si < opt.nsizes; si++) {
			if (!opt.size_on[pat][si])
				continue;
			row_medians(conns, pat, BENCH_POLL, si, med);
			if (sock >= 0) {
				base = round_base(med[sock]);
				xbase = med[sock] + xhand;
			}
			for (st = 0; st < nstacks; st++) {
				char e[16];

				if (!supports(conns[st], pat))
					continue;
				round_row(pat, si, st, &p99, &slow, &n);
				fmt_val(a, sizeof(a), med[st], "us");
				fmt_val(b, sizeof(b), p99, "us");
				snprintf(c, sizeof(c), "%ld/%ld", slow, n);
				snprintf(d, sizeof(d), "%.2f", med[st] / base);
				snprintf(e, sizeof(e), "%.2f", med[st] / xbase);
				printf("%-10s %8zu %-16s %11s %11s %16s %6s %9s", pat_name[pat],
				       opt.sizes[si], stacks[st].label, a, b, c,
				       slow * 10000 < n ? "none" : "yes",
				       isnan(base) || st == sock ? "-" : d);
				if (cross)
					printf(" %9s", isnan(xbase) || st == sock ? "-" : e);
				printf("\n");
			}
			if (sock >= 0) {
				fmt_val(a, sizeof(a), base, "us");
				printf("%-10s %8zu %-16s %11s", pat_name[pat], opt.sizes[si],
				       "base", a);
				if (cross) {
					fmt_val(a, sizeof(a), xbase, "us");
					printf(" %11s (xbase)", a);
				}
				printf("\n");
			}
		}
	}
}

static void report(struct bench_conn *conns[MAX_STACKS])
{
	double med[MAX_STACKS], ratio;
	char a[32];
	int pat, w, si, pass, k, width[2 * MAX_IAS + 1], dat0 = -1, raw = -1, sock = -1;

	for (k = 0; k < nratios; k++) {
		width[k] = (int)strlen(ratios[k].label);
		if (width[k] < 8)
			width[k] = 8;
	}
	for (k = nstacks - 1; k >= 0; k--) {
		if (stacks[k].kind == K_DAT)
			dat0 = k;
		if (stacks[k].kind == K_RAW)
			raw = k;
		if (stacks[k].kind == K_SOCK)
			sock = k;
	}
	/* pass 0: the table; pass 1: one machine-readable line per row */
	for (pass = 0; pass < 2; pass++) {
		if (pass == 0) {
			printf("\n%-10s %-6s %8s ", "pattern", "wait", "size");
			for (k = 0; k < nstacks; k++)
				printf(" %14s", stacks[k].label);
			for (k = 0; k < nratios; k++)
				printf(" %*s", width[k], ratios[k].label);
			printf("\n");
		} else {
			printf("\n");
		}
		for (pat = 0; pat < NPAT; pat++) {
			if (!opt.pats[pat])
				continue;
			for (w = 0; w < 2; w++) {
				if (!pat_wait(pat, w))
					continue;
				for (si = 0; si < opt.nsizes; si++) {
					const char *unit = unit_of(pat);

					if (!opt.size_on[pat][si])
						continue;
					row_medians(conns, pat, w, si, med);
					if (pass == 0) {
						printf("%-10s %-6s %8zu ", pat_name[pat], wait_name[w],
						       opt.sizes[si]);
						for (k = 0; k < nstacks; k++) {
							fmt_val(a, sizeof(a), med[k], unit);
							printf(" %14s", a);
						}
						for (k = 0; k < nratios; k++) {
							/* NAN if either is */
							ratio = med[ratios[k].num] / med[ratios[k].den];
							if (isnan(ratio))
								snprintf(a, sizeof(a), "-");
							else
								snprintf(a, sizeof(a), "%.2f", ratio);
							printf(" %*s", width[k], a);
						}
						printf("\n");
						continue;
					}
					printf("bench: pattern=%s wait=%s size=%zu", pat_name[pat],
					       wait_name[w], opt.sizes[si]);
					if (opt.idle)
						printf(" idle=%d", opt.idle);
					/* dat_ and raw_ always, as before there were more */
					print_kv("dat", unit, dat0 >= 0 ? med[dat0] : NAN);
					for (k = 0; k < nstacks; k++)
						if (stacks[k].kind == K_DAT && k != dat0)
							print_kv(stacks[k].key, unit, med[k]);
					print_kv("raw", unit, raw >= 0 ? med[raw] : NAN);
					if (sock >= 0)
						print_kv("sock", unit, med[sock]);
					if (is_round(pat))
						print_rounds_kv(conns, pat, si, med);
					ratio = dat0 >= 0 && raw >= 0 ? med[dat0] / med[raw] : NAN;
					if (isnan(ratio))
						printf(" ratio=-\n");
					else
						printf(" ratio=%.3f\n", ratio);
				}
			}
		}
	}
	fflush(stdout);
}

static int client_main(int pipe_fd)
{
	struct bench_conn conn[MAX_STACKS], *conns[MAX_STACKS];
	unsigned long long num[MAX_STACKS];
	char line[32 * MAX_STACKS], *p, *end;
	ssize_t n;
	size_t got = 0;
	int bad = 0, k;

	bench_role = "client";
	if (!opt.threads)
		pin(opt.cpu[1]);
	alloc_arrays();
	/* open the DAT side first: a libdat without LMRs says so here */
	for (k = 0; k < nstacks; k++)
		if (stacks[k].kind == K_DAT) {
			stage_of("opening", k);
			dat_open(&conn[k], max_size(), &stacks[k]);
		}
	while (got < sizeof(line) - 1 &&
	       (n = read(pipe_fd, line + got, sizeof(line) - 1 - got)) > 0) {
		got += (size_t)n;
		if (memchr(line, '\n', got))
			break;
	}
	line[got] = '\0';
	close(pipe_fd);
	p = line;
	for (k = 0; k < nstacks; k++) {
		errno = 0;
		num[k] = strtoull(p, &end, 10);
		if (errno || end == p)
			bench_die(BENCH_EXIT_FAIL, "the server did not report its ports");
		p = end;
	}

	alarm(STUCK_S);
	for (k = 0; k < nstacks; k++) {
		stage_of("connecting", k);
		switch (stacks[k].kind) {
		case K_DAT:
			dat_client_connect(&conn[k], (DAT_CONN_QUAL)num[k]);
			break;
		case K_RAW:
			raw_connect(opt.prov, (uint16_t)num[k], &conn[k], max_size(),
				    opt.raw_dc);
			break;
		case K_SOCK:
			sock_connect((uint16_t)num[k], &conn[k], max_size(), opt.cm_hdr);
			break;
		default:
			break;
		}
		conns[k] = &conn[k];
		if (opt.idle && conns[k]->ops->idle) {
			long kib0 = rss_kib();
			uint64_t t0 = now_ns();

			conns[k]->ops->idle(conns[k], 1, opt.idle);
			idle_us[k] = (double)(now_ns() - t0) / 1000.0;
			idle_kib[k] = rss_kib() - kib0;
		}
	}
	if (opt.threads)
		connect_threads(conns, 1);
	alarm(0);

	if (opt.threads) {
		run_threads(conns, 1);
		report_threads();
	} else {
		run_all(conns, 1);
		report(conns);
		if (first_round() >= 0)
			report_rounds(conns);
	}
	if (opt.idle)
		report_idle(conns);
	if (quiet_busy)
		printf("dat_bench: note: %d of %d measurement groups started while other "
		       "work kept the machine >15%% busy; their values are less reliable\n",
		       quiet_busy, quiet_count);

	alarm(STUCK_S);
	if (close_threads(1))
		bad = 1;
	for (k = 0; k < nstacks; k++) {
		stage_of("closing", k);
		exchange(conns[k], 1, 8, BENCH_POLL);
		if (conns[k]->ops->close(conns[k], 1))
			bad = 1;
	}
	return bad ? BENCH_EXIT_FAIL : 0;
}

/* ---- options and the parent ------------------------------------------------------------ */

static void usage(int status)
{
	fprintf(status ? stderr : stdout,
		"usage: dat_bench [-n iters] [-s sizes] [-r reps] [-w window] [-c srvcpu,clicpu]\n"
		"                 [-p patterns] [-m waits] [-i ia[,ia...]] [-t stacks] [-H bytes]\n"
		"                 [-W dc|tx] [-e n] [-T threads] [-R|-D] [-Q] [-v]\n"
		"  -n iters     latency iterations per run with busy-polling (default %ld;\n"
		"               blocking runs and connection setup do iters/4; streaming\n"
		"               sends ~256 MiB, between iters and 3*iters messages)\n"
		"  -s sizes     message sizes, comma-separated, k/m suffixes (default 8,64k)\n"
		"  -r reps      repetitions; the median is reported (default %d, odd, max %d)\n"
		"  -w window    Sends/RDMA Writes outstanding when streaming (default %d)\n"
		"  -c S,C       pin the server to CPU S and the client to CPU C\n"
		"  -p list      patterns: sendrecv,write,send_bw,write_bw,connect (default\n"
		"               sendrecv,write,write_bw); pattern@size runs that pattern at\n"
		"               that size only (for connect: the private data, default %d)\n"
		"               and, as legacy MPIs do (always polling; cycle blocks):\n"
		"               write_poll (RDMA Write into rings polled in memory),\n"
		"               read_evd,read_mem,write_evd,write_mem (8 B RDMA Read/Write\n"
		"               against a target spinning on another EVD / on memory),\n"
		"               window (8 B Sends, -w outstanding; M msgs/s), cycle\n"
		"               (connect, accept, an 8 B first message, disconnect)\n"
		"  -m list      waits: poll,block (default both; connect always blocks)\n"
		"  -i ia,...    DAT interface adapters, at most %d (default ofi-tcp; dat.conf\n"
		"               from DAT_OVERRIDE); ratios: the first against raw, the others\n"
		"               against the first\n"
		"  -t list      stacks: dat,raw,sock (default dat,raw); sock = plain kernel\n"
		"               TCP sockets, no RDMA Write patterns\n"
		"  -A addr      sockets listen and connect at addr, an address of this host\n"
		"               (default 127.0.0.1)\n"
		"  -H bytes     sockets' connection setup: bytes each way besides the private\n"
		"               data, for an MPA request/reply (default %d)\n"
		"  -W dc|tx     raw Send/RDMA Write completion: dc = placed at the target\n"
		"               (FI_DELIVERY_COMPLETE, as libdat; default), tx = handed to\n"
		"               the kernel (like libdat with DAPL_OFI_COMPLETION=transmit)\n"
		"  -e n         n more connections per stack, idle, on the same EVDs/CQs\n"
		"               as the measured one (DAT and raw; default 0, max %d), made\n"
		"               all at once: the client's time and memory for them are\n"
		"               reported too\n"
		"  -T n         instead of the patterns: an 8 B Send ping-pong, busy-polled,\n"
		"               by 1 thread and by n threads per side at once (2 .. %d), each\n"
		"               on a connection of its own with its own EVDs/CQs (DAT: on the\n"
		"               stack's one IA and PZ; raw: on its one domain and EQ), iters/%d\n"
		"               round trips per thread (at least %d); processes and threads\n"
		"               are not pinned (-c is ignored); us per round trip = wall time\n"
		"               / round trips per thread, and time(n)/time(1)\n"
		"  -R           raw libfabric only (-t raw)\n"
		"  -D           DAT only (-t dat; for profiling libdat)\n"
		"  -Q           do not wait for a quiet machine before each measurement\n"
		"               (by default up to 0.5 s each, 6 s in all, for < 15%% CPU busy)\n"
		"  -v           print every run's value on stderr\n",
		opt.iters, opt.reps, MAX_REPS, opt.window, CONNECT_PDATA, MAX_IAS, CM_HDR,
		MAX_IDLE, MAX_THREADS, MT_ITERS_DIV, MT_ITERS_MIN);
	exit(status);
}

static size_t parse_size(const char *s)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return 0;
	if (*end == 'k' || *end == 'K')
		v <<= 10, end++;
	else if (*end == 'm' || *end == 'M')
		v <<= 20, end++;
	if (*end || v == 0 || v > (64u << 20))
		return 0;
	return (size_t)v;
}

static void parse_list(char *arg, const char *const *names, int nnames, int *on,
		       const char *what)
{
	char *tok, *save = NULL;
	int i;

	for (i = 0; i < nnames; i++)
		on[i] = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < nnames; i++)
			if (strcmp(tok, names[i]) == 0)
				break;
		if (i == nnames) {
			fprintf(stderr, "dat_bench: unknown %s '%s'\n", what, tok);
			usage(2);
		}
		on[i] = 1;
	}
}

/* -p: names, each with an optional @size. */
static void parse_pats(char *arg)
{
	char *tok, *save = NULL, *at;
	int i;

	for (i = 0; i < NPAT; i++)
		opt.pats[i] = opt.nat[i] = 0;
	for (tok = strtok_r(arg, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		at = strchr(tok, '@');
		if (at)
			*at++ = '\0';
		for (i = 0; i < NPAT; i++)
			if (strcmp(tok, pat_name[i]) == 0)
				break;
		if (i == NPAT) {
			fprintf(stderr, "dat_bench: unknown pattern '%s'\n", tok);
			usage(2);
		}
		opt.pats[i] = 1;
		if (!at)
			continue;
		if (opt.nat[i] == MAX_SIZES)
			usage(2);
		opt.at[i][opt.nat[i]] = parse_size(at);
		if (!opt.at[i][opt.nat[i]]) {
			fprintf(stderr, "dat_bench: bad size '%s' (1 .. 64m)\n", at);
			usage(2);
		}
		opt.nat[i]++;
	}
}

/* The table's sizes, and which pattern runs at which: pattern@size, else
 * -s (connect: its private data, CONNECT_PDATA unless given). */
static void resolve_sizes(void)
{
	static const size_t pdata_default[1] = { CONNECT_PDATA }, eight[1] = { 8 };
	const size_t *list;
	int pat, n, i, j;

	opt.nsizes = 0;
	for (pat = 0; pat < NPAT; pat++) {
		if (!opt.pats[pat])
			continue;
		if (opt.nat[pat]) {
			list = opt.at[pat];
			n = opt.nat[pat];
		} else if (pat == P_CONNECT) {
			list = pdata_default;
			n = 1;
		} else if (pat > P_WRITE_POLL) {
			list = eight;   /* one-sided, window, cycle: 8 B */
			n = 1;
		} else {
			list = opt.base;
			n = opt.nbase;
		}
		for (i = 0; i < n; i++) {
			if (pat == P_CONNECT && list[i] > CONNECT_PDATA_MAX) {
				fprintf(stderr, "dat_bench: connect@%zu: at most %d bytes of "
					"private data\n", list[i], CONNECT_PDATA_MAX);
				usage(2);
			}
			if ((pat == P_WINDOW || pat == P_CYCLE) && list[i] > BENCH_SMALL) {
				fprintf(stderr, "dat_bench: %s@%zu: at most %d bytes\n",
					pat_name[pat], list[i], BENCH_SMALL);
				usage(2);
			}
			for (j = 0; j < opt.nsizes; j++)
				if (opt.sizes[j] == list[i])
					break;
			if (j == opt.nsizes) {
				if (opt.nsizes == MAX_SIZES) {
					fprintf(stderr, "dat_bench: more than %d sizes\n", MAX_SIZES);
					usage(2);
				}
				opt.sizes[opt.nsizes++] = list[i];
			}
			opt.size_on[pat][j] = 1;
		}
	}
}

static void build_stacks(void)
{
	int i;

	nstacks = 0;
	if (opt.kinds[K_DAT])
		for (i = 0; i < opt.nias; i++) {
			struct stack *st = &stacks[nstacks++];

			st->kind = K_DAT;
			st->ia = opt.ias[i];
			if (i == 0)
				snprintf(st->key, sizeof(st->key), "dat");
			else
				snprintf(st->key, sizeof(st->key), "dat%d", i + 1);
			if (opt.nias == 1)
				snprintf(st->label, sizeof(st->label), "DAT");
			else
				snprintf(st->label, sizeof(st->label), "DAT %s", opt.ias[i]);
		}
	for (i = K_RAW; i < NKIND; i++)
		if (opt.kinds[i]) {
			struct stack *st = &stacks[nstacks++];

			st->kind = (enum stack_kind)i;
			snprintf(st->key, sizeof(st->key), "%s", kind_name[i]);
			snprintf(st->label, sizeof(st->label), "%s", kind_name[i]);
		}
	build_ratios();
}

static void parse_opts(int argc, char **argv)
{
	char *tok, *save = NULL, *end;
	int c, raw_only = 0, dat_only = 0;
	long v;

	while ((c = getopt(argc, argv, "n:s:r:w:c:p:m:i:t:A:H:W:e:T:RDQvh")) != -1) {
		switch (c) {
		case 'n':
			opt.iters = strtol(optarg, &end, 10);
			if (*end || opt.iters < 20 || opt.iters > 10000000)
				usage(2);
			break;
		case 's':
			opt.nbase = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (opt.nbase == MAX_SIZES)
					usage(2);
				opt.base[opt.nbase] = parse_size(tok);
				if (!opt.base[opt.nbase]) {
					fprintf(stderr, "dat_bench: bad size '%s' (1 .. 64m)\n", tok);
					usage(2);
				}
				opt.nbase++;
			}
			if (!opt.nbase)
				usage(2);
			break;
		case 'r':
			opt.reps = (int)strtol(optarg, &end, 10);
			if (*end || opt.reps < 1 || opt.reps > MAX_REPS)
				usage(2);
			break;
		case 'w':
			opt.window = (int)strtol(optarg, &end, 10);
			if (*end || opt.window < 1 || opt.window > 512)
				usage(2);
			break;
		case 'e':
			opt.idle = (int)strtol(optarg, &end, 10);
			if (*end || opt.idle < 0 || opt.idle > MAX_IDLE)
				usage(2);
			break;
		case 'T':
			opt.threads = (int)strtol(optarg, &end, 10);
			if (*end || opt.threads < 2 || opt.threads > MAX_THREADS)
				usage(2);
			break;
		case 'c':
			if (sscanf(optarg, "%d,%d", &opt.cpu[0], &opt.cpu[1]) != 2 ||
			    opt.cpu[0] < 0 || opt.cpu[1] < 0)
				usage(2);
			break;
		case 'p':
			parse_pats(optarg);
			break;
		case 'm':
			parse_list(optarg, wait_name, 2, opt.waits, "wait");
			break;
		case 'i':
			opt.nias = 0;
			for (tok = strtok_r(optarg, ",", &save); tok;
			     tok = strtok_r(NULL, ",", &save)) {
				if (opt.nias == MAX_IAS)
					usage(2);
				opt.ias[opt.nias++] = tok;
			}
			if (!opt.nias)
				usage(2);
			break;
		case 't':
			parse_list(optarg, kind_name, NKIND, opt.kinds, "stack");
			break;
		case 'A':
			if (inet_pton(AF_INET, optarg, &sock_bench_addr) != 1 ||
			    !sock_bench_addr.s_addr)
				usage(2);
			break;
		case 'H':
			v = strtol(optarg, &end, 10);
			if (*end || v < 0 || v > 1024)
				usage(2);
			opt.cm_hdr = (size_t)v;
			break;
		case 'W':
			if (strcmp(optarg, "dc") == 0)
				opt.raw_dc = 1;
			else if (strcmp(optarg, "tx") == 0)
				opt.raw_dc = 0;
			else
				usage(2);
			break;
		case 'R':
			raw_only = 1;
			opt.kinds[K_DAT] = opt.kinds[K_SOCK] = 0;
			opt.kinds[K_RAW] = 1;
			break;
		case 'D':
			dat_only = 1;
			opt.kinds[K_RAW] = opt.kinds[K_SOCK] = 0;
			opt.kinds[K_DAT] = 1;
			break;
		case 'v':
			opt.verbose = 1;
			break;
		case 'Q':
			opt.quiet = 0;
			break;
		case 'h':
			usage(0);
			break;
		default:
			usage(2);
		}
	}
	if (optind != argc || (raw_only && dat_only) || (opt.threads && opt.idle))
		usage(2);
	/* -T: N threads spinning on fewer CPUs make a round trip wait for the
	 * scheduler, some 40-60 ms each with 8 threads per side on 2 CPUs */
	opt.mt_iters = opt.iters / MT_ITERS_DIV;
	if (opt.mt_iters < MT_ITERS_MIN)
		opt.mt_iters = MT_ITERS_MIN;
	if (!opt.kinds[K_DAT] && !opt.kinds[K_RAW] && !opt.kinds[K_SOCK])
		usage(2);
	resolve_sizes();
	build_stacks();
}

static const char *describe(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exit status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "signal %d (%s)", WTERMSIG(status),
			 strsignal(WTERMSIG(status)));
	else
		snprintf(buf, len, "status 0x%x", (unsigned)status);
	return buf;
}

int main(int argc, char **argv)
{
	pid_t pid[2], p;
	int fds[2], status[2] = { -1, -1 }, killed[2] = { 0, 0 }, done = 0, i;
	int notimpl = 0, failed = 0, k;
	char buf[64], who[256];
	size_t off = 0;
	const char *ov = getenv("DAT_OVERRIDE"), *dat_tx;

	parse_opts(argc, argv);
	signal(SIGALRM, on_alarm);
	{
		cpu_set_t set;

		CPU_ZERO(&set);
		opt.ncpus = sched_getaffinity(0, sizeof(set), &set) == 0 ?
			    CPU_COUNT(&set) : (int)sysconf(_SC_NPROCESSORS_ONLN);
	}

	if (opt.threads)
		snprintf(buf, sizeof(buf), "not pinned (-T: every thread may run on any "
			 "of the %d CPUs)", opt.ncpus);
	else if (opt.cpu[0] < 0)
		snprintf(buf, sizeof(buf), "not pinned");
	else
		snprintf(buf, sizeof(buf), "server on CPU %d, client on CPU %d",
			 opt.cpu[0], opt.cpu[1]);
	who[0] = '\0';
	for (k = 0; k < nstacks && off < sizeof(who); k++) {
		const char *sep = k ? " vs " : "";

		if (stacks[k].kind == K_DAT)
			off += (size_t)snprintf(who + off, sizeof(who) - off, "%sDAT %s", sep,
						stacks[k].ia);
		else if (stacks[k].kind == K_RAW)
			off += (size_t)snprintf(who + off, sizeof(who) - off,
						"%sraw libfabric %s %s", sep, raw_version(),
						opt.prov);
		else
			off += (size_t)snprintf(who + off, sizeof(who) - off,
						"%skernel TCP sockets", sep);
	}
	{
		char sa[INET_ADDRSTRLEN] = "127.0.0.1";

		if (sock_bench_addr.s_addr)
			inet_ntop(AF_INET, &sock_bench_addr, sa, sizeof(sa));
		printf("dat_bench: %s, %s, %s\n", who, sa, buf);
	}
	dat_tx = getenv("DAPL_OFI_COMPLETION");
	dat_tx = dat_tx && strcmp(dat_tx, "transmit") == 0 ? "transmit" : "delivery";
	if (opt.threads) {
		printf("dat_bench: -T %d: %d B Send ping-pong, busy-polled, by 1 and by %d threads"
		       " per side at once, each thread on a connection (and EVDs/CQs) of its"
		       " own; %ld round trips per thread; median of %d repetitions;"
		       " Send completion: DAT %s, raw %s\n", opt.threads, MT_SIZE,
		       opt.threads, opt.mt_iters, opt.reps, dat_tx,
		       opt.raw_dc ? "delivery" : "transmit");
		printf("dat_bench: us per round trip = wall time until the last thread is done"
		       " / round trips per thread (lower is better)\n");
	} else {
		printf("dat_bench: median of %d repetitions; latency %ld iterations polling, %ld"
		       " blocking; write window %d, Send/RDMA Write completion: DAT %s, raw %s\n",
		       opt.reps, lat_iters(BENCH_POLL), lat_iters(BENCH_BLOCK), opt.window,
		       dat_tx, opt.raw_dc ? "delivery" : "transmit");
		printf("dat_bench: latency = half round trip (lower is better), bandwidth in"
		       " GB/s = 1e9 B/s (higher is better)\n");
	}
	if (opt.pats[P_CONNECT] && !opt.threads)
		printf("dat_bench: connect = us per connection set up and torn down (%ld per run;"
		       " size = private data each way%s)\n", lat_iters(BENCH_BLOCK),
		       opt.kinds[K_SOCK] ? "; sockets send that plus -H bytes" : "");
	if (opt.kinds[K_DAT] && !ov)
		printf("dat_bench: note: DAT_OVERRIDE is not set; the installed dat.conf is used\n");
	if (opt.idle) {
		/* every idle connection is a socket or two on each side, for
		 * each stack: more than the usual soft limit of 1024 fds */
		struct rlimit rl;

		if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
			rl.rlim_cur = rl.rlim_max;
			setrlimit(RLIMIT_NOFILE, &rl);
		}
		printf("dat_bench: %d more connections per stack, idle, on the same "
		       "EVDs/CQs as the measured one\n", opt.idle);
	}
	fflush(stdout);

	if (pipe(fds))
		bench_die(BENCH_EXIT_FAIL, "pipe: %s", strerror(errno));
	for (i = 0; i < 2; i++) {
		pid[i] = fork();
		if (pid[i] < 0)
			bench_die(BENCH_EXIT_FAIL, "fork: %s", strerror(errno));
		if (pid[i] == 0) {
			close(fds[i == 0 ? 0 : 1]);
			exit(i == 0 ? server_main(fds[1]) : client_main(fds[0]));
		}
	}
	close(fds[0]);
	close(fds[1]);

	/* The first to fail takes the other down: it would wait for ever.
	 * SIGKILL, not SIGTERM: libfabric loads psm, whose SIGTERM handler
	 * calls exit(), and exit() inside fi_getinfo deadlocks in libfabric's
	 * destructor. */
	while (done < 2) {
		int st;

		p = waitpid(-1, &st, 0);
		if (p < 0) {
			if (errno == EINTR)
				continue;
			bench_die(BENCH_EXIT_FAIL, "waitpid: %s", strerror(errno));
		}
		for (i = 0; i < 2; i++) {
			if (p != pid[i])
				continue;
			status[i] = st;
			done++;
			if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
				if (WIFEXITED(st) && WEXITSTATUS(st) == BENCH_EXIT_NOTIMPL)
					notimpl = 1;
				else
					failed = 1;
				if (status[1 - i] == -1 && !killed[1 - i]) {
					kill(pid[1 - i], SIGKILL);
					killed[1 - i] = 1;
				}
			}
		}
	}
	if (notimpl) {
		fprintf(stderr, "dat_bench: the DAT side cannot run: this libdat answers "
				"DAT_NOT_IMPLEMENTED (see above); run with -R (or -t raw,sock) to "
				"measure without DAT\n");
		return BENCH_EXIT_NOTIMPL;
	}
	if (failed) {
		for (i = 0; i < 2; i++)
			if (killed[i])
				fprintf(stderr, "dat_bench: %s stopped: the other side failed\n",
					i == 0 ? "server" : "client");
			else if (!WIFEXITED(status[i]) || WEXITSTATUS(status[i]) != 0)
				fprintf(stderr, "dat_bench: %s ended with %s\n",
					i == 0 ? "server" : "client",
					describe(status[i], buf, sizeof(buf)));
		return BENCH_EXIT_FAIL;
	}
	return 0;
}
