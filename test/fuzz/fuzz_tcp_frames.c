/*
 * A live tcp (iWARP) endpoint against strangers' frames.
 *
 * Each input is one connection to a listener of the native TCP transport
 * (providers/tcp, driven through its ops table dapl_tcp_ops, both ends in
 * this process over 127.0.0.1).  The peer is a raw TCP socket: it sends a
 * valid MPA request (revision 2 with the enhanced bit and RFC 6581
 * IRD/ORD, peer-to-peer with a zero-length Write as RTR; now and then a
 * zero-length Read as RTR, no RTR, revision 1; with or without the libdat
 * trailer that turns the placement acks on), the endpoint accepts it with
 * receives posted, the peer sends the RTR and then a sequence of FPDUs
 * from a pseudo-random generator:
 *  - valid ones: Sends (one or more FPDUs), RDMA Writes, Read Requests,
 *    Read Responses to a Read the endpoint posted, bare acks, Terminates;
 *  - ones aimed at the checks: STags of other PDs, of registrations
 *    without the right, deregistered, random and zero; offsets just
 *    outside a registration, wrapping ranges, huge lengths; wrong QN, MSN
 *    and MO, opcodes that may not come, Read Requests with data;
 *  - mutated ones: bit flips in headers, bad DDP/RDMAP versions, T and L
 *    flipped, ULPDU_Length larger than what follows or smaller than the
 *    header, truncated frames, garbage in pad and CRC (with the acks on,
 *    the CRC field is the peer's placed count); raw garbage;
 *  - RFC 7306 frames: in a quarter of the inputs the request's libdat
 *    trailer also offers TCP_EXT_F_RFC7306, and most of those carry
 *    Immediate Data (with and without SE, often right behind a Write of
 *    its own, in one or two FPDUs: a write with immediate) and Atomic
 *    Requests (FetchAdd, CmpSwap with matching and other compare values
 *    and masks, on a few words of a small remote-atomic registration);
 *    hostile ones: STags of the other PD, without the remote-atomic
 *    right, deregistered, local, random and zero; misaligned words,
 *    words before, after, across the end of the registration and
 *    wrapping; Swap and unknown AOpCodes, a FetchAdd with a mask;
 *    wrong QN, MSN and MO, not last, data after the header, truncated;
 *    Immediate Data inside a Send; Atomic Responses nobody asked for.
 *    With RFC 7306 the endpoint now and then posts an atomic of its own
 *    behind its Read, which the peer answers (after the Read's response,
 *    or too early; with the wrong id, QN, MSN, length); without it,
 *    post_atomic must return -EOPNOTSUPP.
 *    About one input in seven that did not offer it carries them too.
 * Frames are cut at random points with the endpoint driven in between
 * (cq_poll and cm_get_event, as the core would), receives are posted and
 * the CQ armed while data flows; at the end the peer closes, half-closes,
 * or the endpoint disconnects or is destroyed as it is.
 *
 * What must hold, besides "no crash, no sanitizer report":
 *  - nothing outside what a valid Write may reach changes: guard bytes on
 *    both sides of every buffer; registrations of the other PD, without
 *    remote write, deregistered, and unregistered memory; a byte of a
 *    writable registration changes only to what a Write whose whole
 *    declared range lies inside it carried for that byte;
 *  - a Read Response comes only for a Read Request the endpoint had to
 *    take (STag of its PD with remote read, range inside), with the bytes
 *    of that memory, in order, and nothing follows a Terminate;
 *  - every posted receive completes exactly once (SUCCESS, LOCAL_LENGTH
 *    or FLUSHED) by the time the endpoint is destroyed, in posting order,
 *    a SUCCESS one with the bytes of the Send of its MSN; the endpoint's
 *    own Send and Read complete exactly once; no completion of anything
 *    else, no event for an endpoint destroyed;
 *  - an endpoint whose peer went away ends (one terminal event) within a
 *    bound; every wait is bounded (poll timeouts, never sleeps) and the
 *    whole run is under alarm();
 *  - no fd is left behind by an input (/proc/self/fd);
 *  - RFC 7306: the reply's trailer has TCP_EXT_F_RFC7306 exactly when
 *    the request offered it.  Where it was not negotiated nothing from
 *    the peer's first RFC 7306 frame on may act (the oracles above read
 *    the stream only up to it): no atomic, no immediate, no Atomic
 *    Response; a clean sequence read to its end got a Terminate.  Where
 *    it was: every Atomic Response answers the next Atomic Request (by
 *    its id) after the last request answered, Reads and atomics in
 *    order, none inside a Read Response, QN 3 and MSNs 1, 2, ...; that
 *    request had to be taken (STag of the endpoint's PD with the
 *    remote-atomic right, an 8-byte aligned word inside it, FetchAdd
 *    without a mask or CmpSwap, exactly 52 bytes, last) and the response
 *    carries the word's value as the requests answered before left it
 *    (the fuzzer runs them too); at the end the atomic registration holds
 *    that, or that and the next requests that had to be taken (answers
 *    cut off by the end); no other memory changes.  A receive that
 *    completes as RECV_RDMA_IMM (WITH_IMM, nothing written into it) is
 *    the Immediate Data of its MSN (the Send queue's), one the endpoint
 *    had to take, with its immediate and the length of the RDMA Write
 *    message before it (0 while that Write is not finished); every other
 *    receive completion is RECV without the flag, and no RECV is an
 *    Immediate Data's.  The endpoint's own atomic goes out as posted,
 *    after its Read, completes once, after the Read, and its 8-byte
 *    result holds the value of a valid Atomic Response to it or nothing.
 * Every FUZZ_TCP_CHECK inputs (and first and last) one fully valid
 * exchange must place a Send into its receive, Writes into the region
 * (one read straight into place), serve Read Requests, take the Read
 * Response to the endpoint's Read, and, with the acks on, report all of
 * it placed (one in two of those also negotiates RFC 7306: a write with
 * immediate into a receive, a FetchAdd and a matching CmpSwap): proof
 * that the inputs reach the placement paths.
 *
 * Strangers also connect to the listener with garbage MPA requests (wrong
 * key, PD_Length over 512, truncated, markers or CRC asked for, the
 * reject bit in a request, revisions 0 and over 2, random bytes): none may
 * be reported as CONNECT_REQUEST, a refusal is a reply with the reject
 * bit, and the listener keeps serving the next input.
 *
 * One input in about 33 carries a long run of tiny messages (thousands of
 * repetitions of a few empty or 1-3 byte Sends, bare acks and Writes):
 * the Sends held for receives must stay within TCP_UNEXPECTED_MSGS and
 * TCP_UNEXPECTED_MAX at every drive, and a default run must have seen the
 * Terminate for one Send too many.
 *
 * Three directed cases follow the inputs: Sends held for receives not yet
 * posted stay within the bound the transport promises
 * (TCP_UNEXPECTED_MAX); a Read Response backed up in the socket stops
 * carrying memory once its registration is freed; a Terminate that names
 * the endpoint's Read fails that Read, not the Send posted before it.
 *
 * FUZZ_TCP_RUNS inputs (default 15000; 200 under valgrind), FUZZ_TCP_SEED,
 * FUZZ_TCP_CHECK (default 100; 25 under valgrind), FUZZ_TCP_ONLY=N replays
 * input N alone (the directed cases: N = RUNS, RUNS + 1, RUNS + 2),
 * FUZZ_TCP_VERBOSE=1 prints one line per input.  A failure prints the
 * input's number and seed and the bytes the peer sent; the run goes on and
 * prints each kind of failure once, then exits 1.
 */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"
#include "../common/netns.h"

static const struct udapl_transport_ops *ops = &dapl_tcp_ops;

/* ---- failures ----------------------------------------------------------- */

#define DIE(...)                                                           \
	do {                                                               \
		fprintf(stderr, "fuzz_tcp_frames: " __VA_ARGS__);          \
		fputc('\n', stderr);                                       \
		exit(1);                                                   \
	} while (0)

static long cur_input = -1;
static uint64_t cur_seed;
static const char *phase = "setup";
static unsigned long nfail;
static const char *fail_kinds[64];
static int nfail_kinds;
static bool verbose;

static void dump_stream(void);

static void failure(const char *kind, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void failure(const char *kind, const char *fmt, ...)
{
	va_list ap;
	int i;

	nfail++;
	for (i = 0; i < nfail_kinds; i++)
		if (strcmp(fail_kinds[i], kind) == 0)
			return;     /* told once per kind */
	if (nfail_kinds < 64)
		fail_kinds[nfail_kinds++] = kind;
	fprintf(stderr, "\nfuzz_tcp_frames: FAIL [%s] input %ld (seed 0x%016llx, "
		"replay: FUZZ_TCP_ONLY=%ld), phase %s:\n  ", kind, cur_input,
		(unsigned long long)cur_seed, cur_input, phase);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	dump_stream();
}

/* The whole run is bounded: which input hung, and where (signal-safe). */
static void on_alarm(int sig)
{
	static const char m[] = "\nfuzz_tcp_frames: FAIL [hang] the run took too long; "
				"replay: FUZZ_TCP_ONLY=";
	char num[24], *p = num + sizeof(num);
	unsigned long v = cur_input < 0 ? 0 : (unsigned long)cur_input;

	(void)sig;
	*--p = '\0';
	do
		*--p = (char)('0' + v % 10);
	while ((v /= 10) && p > num);
	if (write(2, m, sizeof(m) - 1) < 0 || write(2, p, strlen(p)) < 0 ||
	    write(2, ", phase ", 8) < 0 || write(2, phase, strlen(phase)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(3);
	_exit(2);
}

/* ---- the pseudo-random sequence --------------------------------------------- */

static uint64_t rng;

static uint32_t rnd(void)
{
	/* xorshift64* */
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return (uint32_t)((rng * 0x2545f4914f6cdd1dull) >> 32);
}

static uint32_t rndn(uint32_t n)
{
	return n ? rnd() % n : 0;
}

static bool chance(unsigned pct)
{
	return rndn(100) < pct;
}

static uint64_t mix64(uint64_t x)
{
	/* splitmix64 */
	x += 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* ---- memory: registrations, guards, receives ------------------------------ */

#define GUARD 256
#define ATOMIC_WORDS 32
#define GUARD_BYTE(i) ((uint8_t)(0xa5 ^ ((i) & 0x3f)))

enum {
	RG_RW,          /* remote write + read: the target */
	RG_RO,          /* remote read only */
	RG_WO,          /* remote write only */
	RG_OTHER_PD,    /* remote write + read, but of the second PD */
	RG_STALE,       /* registered, then deregistered */
	RG_LOCAL,       /* local rights only */
	RG_ATOMIC,      /* remote atomic only: the atomics' target */
	RG_UNREG,       /* never registered */
	NREG
};

struct region {
	const char *name;
	size_t len;
	unsigned access;
	uint8_t *arena;         /* GUARD | len | GUARD */
	struct dapl_tmr *mr;
	uint32_t stag;
	bool live, pd_a;
};

static struct region reg[NREG] = {
	[RG_RW] = { "the target region", 16384,
		    DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE |
		    DAPL_TACCESS_REMOTE_READ | DAPL_TACCESS_REMOTE_WRITE, NULL, NULL, 0, 0, 0 },
	[RG_RO] = { "a read-only registration", 4096,
		    DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_REMOTE_READ, NULL, NULL, 0, 0, 0 },
	[RG_WO] = { "a write-only registration", 2048,
		    DAPL_TACCESS_LOCAL_WRITE | DAPL_TACCESS_REMOTE_WRITE, NULL, NULL, 0, 0, 0 },
	[RG_OTHER_PD] = { "the other PD's registration", 4096,
			  DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE |
			  DAPL_TACCESS_REMOTE_READ | DAPL_TACCESS_REMOTE_WRITE |
			  DAPL_TACCESS_REMOTE_ATOMIC, NULL, NULL, 0, 0, 0 },
	[RG_STALE] = { "a deregistered buffer", 4096,
		       DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE |
		       DAPL_TACCESS_REMOTE_READ | DAPL_TACCESS_REMOTE_WRITE |
		       DAPL_TACCESS_REMOTE_ATOMIC, NULL, NULL, 0, 0, 0 },
	[RG_LOCAL] = { "a local-only registration", 4096,
		       DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE, NULL, NULL, 0, 0, 0 },
	[RG_ATOMIC] = { "the atomic target", ATOMIC_WORDS * 8,
			DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE |
			DAPL_TACCESS_REMOTE_ATOMIC, NULL, NULL, 0, 0, 0 },
	[RG_UNREG] = { "unregistered memory", 4096, 0, NULL, NULL, 0, 0, 0 },
};

static uint8_t *rdata(int r)
{
	return reg[r].arena + GUARD;
}

static uint64_t raddr(int r)
{
	return (uint64_t)(uintptr_t)rdata(r);
}

static uint8_t fill_salt;

static uint8_t fill_byte(int r, size_t i)
{
	return (uint8_t)((i * 131u) ^ (i >> 7) ^ (unsigned)(r * 37) ^ fill_salt);
}

/* Receives: up to NRECV, each of up to 3 segments in slots of one arena,
 * a guard between slots. */
#define NRECV 8
#define RSLOT 9216
#define RGUARD 64
#define NSLOT (NRECV * 3)
#define RECV_FILL 0x5a
static uint8_t *recv_arena;

static uint8_t *slot_addr(int s)
{
	return recv_arena + RGUARD + (size_t)s * (RSLOT + RGUARD);
}

/* The endpoint's own Read lands in sink segments; its Send comes from
 * send_src. */
#define SINK_SEG 2048
#define SINK_FILL 0x3c
/* GUARD | seg | GUARD | seg | GUARD | atomic result seg | GUARD */
static uint8_t *sink_arena;
static uint8_t send_src[1024];
static struct dapl_tmr *local_mr;    /* sink_arena + send_src: local rights */
static uint32_t local_lkey;

static uint8_t *sink_seg(int i)
{
	return sink_arena + GUARD + (size_t)i * (SINK_SEG + GUARD);
}

/* ---- the device ------------------------------------------------------------- */

static struct dapl_tdev *dev;
static struct dapl_tlisten *lst;
static uint16_t port;
static struct dapl_tpd *pd_a, *pd_b;
static struct dapl_tcq *cq1, *cq2;
static int dev_fd;

/* ---- per input -------------------------------------------------------------- */

enum hmode { H_WRITE_RTR, H_READ_RTR, H_NO_RTR, H_V1, H_REV2_PLAIN };
enum ext_kind { X_NONE, X_ON, X_BAD_MAGIC, X_NO_FLAG };

struct recv {
	int nsge;
	uint8_t *seg[3];
	uint32_t seglen[3];
	uint32_t len;
	int completions;
	enum dapl_twc_status st;
	uint32_t byte_len;
	int order;              /* its place among receive completions */
	bool with_imm;          /* completed as RECV_RDMA_IMM */
	uint32_t imm;
	bool discarded;         /* left in the SRQ at srq_destroy */
};

#define CTX_RECV 0x7100u
#define CTX_SEND 0x7200u
#define CTX_READ 0x7201u
#define CTX_ATOMIC 0x7202u
#define OUT_MAX (1u << 20)
#define IN_MAX (512u * 1024u)
#define MAX_CUTS 256
#define MAX_GARB 6

enum cut_act { CUT_PAUSE, CUT_POST_RECV, CUT_ARM };

struct cut {
	size_t at;
	enum cut_act act;
};

enum garb_kind {
	G_KEY, G_PDLEN, G_TRUNC_HDR, G_TRUNC_PD, G_MARKERS, G_CRC, G_REJECT,
	G_REV, G_RANDOM, NGARB
};

static const char *const garb_name[NGARB] = {
	"wrong key", "PD_Length over 512", "truncated header",
	"truncated private data", "markers asked for", "CRC asked for",
	"reject bit in a request", "revision 0 or over 2", "random bytes",
};

struct garb {
	int fd;
	enum garb_kind kind;
	uint16_t port;
	uint8_t bytes[600];
	size_t len;
	bool hold;              /* stays open, silent, until the input ends */
	bool replied, reply_ok;
};

static struct {
	/* the peer */
	int raw;
	uint16_t raw_port;
	bool raw_dead, raw_eof, shut_wr;
	enum hmode mode;
	enum ext_kind xk;
	bool ext;               /* the acks are on */
	bool x7306;             /* ... and RFC 7306 offered (so taken) */
	/* the oracles read the peer's FPDUs up to here: without RFC 7306,
	 * its first frame (an unexpected opcode) ends the connection */
	size_t oracle_end;
	/* atomics: the words as the answered ones left them, the frame
	 * after the last request answered (Read or atomic), the MSN of the
	 * next Atomic Response */
	uint64_t aw[ATOMIC_WORDS];
	size_t answered_to;
	uint32_t aresp_msn;
	bool v2;
	uint8_t req_pdata[512];
	size_t req_pdata_len;
	uint8_t acc_pdata[TCP_PDATA_MAX];
	size_t acc_pdata_len;
	/* the endpoint */
	struct dapl_tep *ep;
	struct dapl_tep *gone;  /* destroyed: no event may name it */
	struct dapl_tsrq *srq;
	struct dapl_tcq *scq, *rcq;
	uint64_t owner;
	struct dapl_tconn *conn;
	bool got_request;
	int established, terminal, events_after;
	int terminal_type, terminal_status;
	/* what the peer sent; FPDUs from fpdu_start on */
	uint8_t *out;
	size_t out_len, fpdu_start, sent;
	struct cut cuts[MAX_CUTS];
	int ncuts, next_cut;
	uint32_t frames;
	/* what the endpoint sent */
	uint8_t *in;
	size_t in_len;
	bool reply_done, term_seen;
	bool own_reader;        /* a directed case reads the socket itself */
	uint32_t term_ctrl;
	uint32_t ep_placed;     /* the last count in its CRC fields */
	/* its Read Responses, per sink */
	struct { uint32_t sink, done; bool last; } resp[64];
	int nresp;
	uint32_t resp_bytes;
	/* receives */
	struct recv rv[NRECV];
	int nrecv, recv_order;
	/* the endpoint's Send and Read */
	bool ep_send, ep_read;
	uint32_t ep_send_len;
	int ep_send_completions, ep_read_completions;
	enum dapl_twc_status ep_send_st, ep_read_st;
	uint32_t ep_send_got, ep_send_msgs;
	uint8_t ep_send_data[1024];
	int ep_read_nsge;
	uint32_t ep_read_seglen[2], ep_read_len;
	uint64_t ep_read_raddr;
	uint32_t ep_read_rkey;
	bool ep_read_seen;
	uint32_t ep_read_sink;
	/* the endpoint's atomic, behind its Read (with RFC 7306) */
	bool ep_atomic, ep_atomic_seen;
	uint32_t ep_atomic_aop, ep_atomic_rkey, ep_atomic_id;
	uint64_t ep_atomic_raddr, ep_atomic_a, ep_atomic_b;
	int ep_atomic_completions;
	enum dapl_twc_status ep_atomic_st;
	/* our Read RTR */
	uint32_t rtr_sink;
	/* garbage requests to the listener */
	struct garb g[MAX_GARB];
	int ng;
} S;

/* summary */
static struct {
	unsigned long inputs, frames, mutated, bytes;
	unsigned long recv_success, recv_length, recv_flushed, recv_discarded;
	unsigned long write_bytes_placed, read_responses, read_resp_bytes;
	unsigned long ep_reads_done, ep_sends_done, valid;
	unsigned long terminal[8], ep_terms;
	unsigned long garb[NGARB], garb_refused;
	unsigned long placed_direct, read_bursts, eager;
	unsigned long floods, flood_frames;
	struct { uint32_t key; unsigned long n; } terms[48];
	unsigned long x7306_inputs, ext_frames, atomics_done, atomics_unanswered;
	unsigned long imm_delivered, ext_unneg_terms, ep_atomics_done;
	int nterms;
} st;

static const char *ev_name(int t)
{
	static const char *const n[] = { "CONNECT_REQUEST", "ESTABLISHED", "REJECTED",
					 "UNREACHABLE", "DISCONNECTED", "CONN_ERROR",
					 "DEVICE_FATAL", "SRQ_LIMIT" };

	return t >= 0 && t < 8 ? n[t] : "?";
}

static void dump_bytes(const char *what, const uint8_t *p, size_t n, size_t mark)
{
	size_t i, shown = n > 4096 ? 4096 : n;

	fprintf(stderr, "  %s (%zu bytes%s):\n", what, n, n > shown ? ", first 4096" : "");
	for (i = 0; i < shown; i++) {
		if (i % 32 == 0)
			fprintf(stderr, "%s    %06zx:", i ? "\n" : "", i);
		fprintf(stderr, "%s%02x", i == mark ? "|" : " ", p[i]);
	}
	fputc('\n', stderr);
}

static void dump_stream(void)
{
	int i;

	if (S.out && S.out_len) {
		fprintf(stderr, "  the peer's MPA request is bytes [0, 0x%zx), FPDUs follow "
			"('|'); 0x%zx bytes had gone out\n", S.fpdu_start, S.sent);
		dump_bytes("the peer's stream", S.out, S.out_len, S.fpdu_start);
	}
	for (i = 0; i < S.ng; i++)
		dump_bytes(garb_name[S.g[i].kind], S.g[i].bytes, S.g[i].len, (size_t)-1);
}

/* ---- bytes ------------------------------------------------------------------ */

static void out_put(const void *p, size_t n)
{
	if (S.out_len + n > OUT_MAX)
		DIE("the generator made more than %u bytes", OUT_MAX);
	memcpy(S.out + S.out_len, p, n);
	S.out_len += n;
}

static void add_cut(size_t at, enum cut_act act)
{
	if (S.ncuts < MAX_CUTS && at > S.fpdu_start &&
	    (!S.ncuts || at >= S.cuts[S.ncuts - 1].at)) {
		S.cuts[S.ncuts].at = at;
		S.cuts[S.ncuts].act = act;
		S.ncuts++;
	}
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* ---- the oracle: the peer's FPDUs as the endpoint frames them ------------------ */

/* One FPDU of the peer's stream: its ULPDU (ul bytes declared, avail of
 * them present). */
struct ofr {
	const uint8_t *u;
	uint32_t ul;
	size_t avail;
};

static bool next_frame(size_t *pos, struct ofr *f)
{
	size_t p = *pos, left;
	uint32_t ul;

	if (p + 2 > S.out_len || p >= S.oracle_end)
		return false;
	ul = get16(S.out + p);
	left = S.out_len - p - 2;
	f->u = S.out + p + 2;
	f->ul = ul;
	f->avail = left < ul ? left : ul;
	*pos = p + 2 + ul + fpdu_pad(ul) + 4;
	return true;
}

static bool range_in(uint64_t to, uint64_t len, uint64_t base, uint64_t blen)
{
	return to + len >= to && to >= base && to + len <= base + blen;
}

/* Which registration an STag names (-1: none live). */
static int stag_region(uint32_t stag)
{
	int r;

	for (r = 0; r < NREG; r++)
		if (reg[r].live && reg[r].stag == stag)
			return r;
	return -1;
}

/* May a tagged Write of this STag, TO and length be placed? */
static bool write_valid(uint32_t stag, uint64_t to, uint64_t len)
{
	int r = stag_region(stag);

	return r >= 0 && reg[r].pd_a &&
	       (reg[r].access & DAPL_TACCESS_REMOTE_WRITE) &&
	       range_in(to, len, raddr(r), reg[r].len);
}

/* Must a Read Request of this source be served? */
static bool read_valid(uint32_t stag, uint64_t to, uint64_t len)
{
	int r;

	if (len == 0)
		return true;
	r = stag_region(stag);
	return r >= 0 && reg[r].pd_a && (reg[r].access & DAPL_TACCESS_REMOTE_READ) &&
	       range_in(to, len, raddr(r), reg[r].len);
}

/* A changed byte at addr may only hold what a placeable Write carried. */
static bool write_explains(uint64_t addr, uint8_t v)
{
	size_t pos = S.fpdu_start;
	struct ofr f;

	while (next_frame(&pos, &f)) {
		uint32_t ctrl;
		uint64_t to;

		if (f.avail < DDP_TAGGED_LEN)
			continue;
		ctrl = get16(f.u);
		if (!(ctrl & DDP_T) || (ctrl & RDMAP_OP_MASK) != RDMAP_WRITE ||
		    f.ul < DDP_TAGGED_LEN)
			continue;
		to = get64(f.u + 6);
		if (addr < to || addr - to >= f.avail - DDP_TAGGED_LEN)
			continue;
		if (!write_valid(get32(f.u + 2), to, f.ul - DDP_TAGGED_LEN))
			continue;
		if (f.u[DDP_TAGGED_LEN + (addr - to)] == v)
			return true;
	}
	return false;
}

static bool any_write_to(int r)
{
	size_t pos = S.fpdu_start;
	struct ofr f;

	while (next_frame(&pos, &f))
		if (f.avail >= DDP_TAGGED_LEN && (get16(f.u) & DDP_T) &&
		    get32(f.u + 2) == reg[r].stag)
			return true;
	return false;
}

/* Byte off of the Send with MSN msn may be v. */
static bool send_explains(uint32_t msn, uint32_t off, uint8_t v)
{
	size_t pos = S.fpdu_start;
	struct ofr f;

	while (next_frame(&pos, &f)) {
		uint32_t ctrl, op, mo;

		if (f.avail < DDP_UNTAGGED_LEN)
			continue;
		ctrl = get16(f.u);
		op = ctrl & RDMAP_OP_MASK;
		if ((ctrl & DDP_T) || op < RDMAP_SEND || op > RDMAP_SEND_SE_INV ||
		    get32(f.u + 6) != DDP_QN_SEND || get32(f.u + 10) != msn)
			continue;
		mo = get32(f.u + 14);
		if (off < mo || off - mo >= f.avail - DDP_UNTAGGED_LEN)
			continue;
		if (f.u[DDP_UNTAGGED_LEN + (off - mo)] == v)
			return true;
	}
	return false;
}

/* Byte off of the endpoint's Read (sink STag sink) may be v. */
static bool resp_explains(uint32_t sink, uint32_t off, uint8_t v)
{
	size_t pos = S.fpdu_start;
	struct ofr f;

	while (next_frame(&pos, &f)) {
		uint32_t ctrl;
		uint64_t to;

		if (f.avail < DDP_TAGGED_LEN)
			continue;
		ctrl = get16(f.u);
		if (!(ctrl & DDP_T) || (ctrl & RDMAP_OP_MASK) != RDMAP_READ_RESP ||
		    get32(f.u + 2) != sink)
			continue;
		to = get64(f.u + 6);
		if (off < to || off - to >= f.avail - DDP_TAGGED_LEN)
			continue;
		if (f.u[DDP_TAGGED_LEN + (off - to)] == v)
			return true;
	}
	return false;
}

/* The peer's Read Request with this sink STag at or after frame position
 * *at: 1 found (fields filled, *at the position after it), 0 none. */
static int find_read_req(uint32_t sink, uint64_t *sink_to, uint32_t *len,
			 uint32_t *src, uint64_t *src_to, size_t *at)
{
	size_t pos = *at < S.fpdu_start ? S.fpdu_start : *at;
	struct ofr f;

	while (next_frame(&pos, &f)) {
		const uint8_t *r = f.u + DDP_UNTAGGED_LEN;
		uint32_t ctrl;

		if (f.avail < DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN)
			continue;
		ctrl = get16(f.u);
		if ((ctrl & DDP_T) || (ctrl & RDMAP_OP_MASK) != RDMAP_READ_REQ ||
		    get32(r) != sink)
			continue;
		*sink_to = get64(r + 4);
		*len = get32(r + 12);
		*src = get32(r + 16);
		*src_to = get64(r + 20);
		*at = pos;
		return 1;
	}
	return 0;
}

/* ---- the oracle for RFC 7306 ------------------------------------------------------ */

struct areq {
	uint32_t aop, id, stag;
	uint64_t to, data, dmask, cmp, cmask;
};

/* Is f an Atomic Request (by its opcode)?  Its fields into *a. */
static bool atomic_req_frame(const struct ofr *f, struct areq *a)
{
	const uint8_t *r = f->u + DDP_UNTAGGED_LEN;

	if (f->avail < 2 || (get16(f->u) & DDP_T) ||
	    (get16(f->u) & RDMAP_OP_MASK) != RDMAP_ATOMIC_REQ)
		return false;
	memset(a, 0, sizeof(*a));
	if (f->avail < DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN)
		return true;
	a->aop = get32(r) & RDMAP_AOP_MASK;
	a->id = get32(r + 4);
	a->stag = get32(r + 8);
	a->to = get64(r + 12);
	a->data = get64(r + 20);
	a->dmask = get64(r + 28);
	a->cmp = get64(r + 36);
	a->cmask = get64(r + 44);
	return true;
}

/* May the endpoint run this Atomic Request (queue and MSN aside, which
 * the endpoint's state decides)?  The word: its index in RG_ATOMIC. */
static bool atomic_takeable(const struct ofr *f, const struct areq *a, int *word)
{
	uint32_t ctrl = get16(f->u);
	int r = stag_region(a->stag);

	if (f->ul != DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN || f->avail != f->ul ||
	    !(ctrl & DDP_L) || get32(f->u + 6) != DDP_QN_READ || get32(f->u + 14) ||
	    (ctrl & DDP_VERSION_MASK) != DDP_VERSION_BITS ||
	    (ctrl & RDMAP_VERSION_MASK) != RDMAP_VERSION_BITS)
		return false;
	if (!(a->aop == RDMAP_AOP_FETCH_ADD && a->dmask == 0) &&
	    a->aop != RDMAP_AOP_CMP_SWAP)
		return false;
	if (r < 0 || !reg[r].pd_a || !(reg[r].access & DAPL_TACCESS_REMOTE_ATOMIC) ||
	    (a->to & 7) || !range_in(a->to, 8, raddr(r), reg[r].len))
		return false;
	if (r != RG_ATOMIC)
		DIE("an atomic target outside RG_ATOMIC");
	*word = (int)((a->to - raddr(r)) / 8);
	return true;
}

static uint64_t atomic_apply(uint64_t *w, const struct areq *a)
{
	uint64_t old = *w;

	if (a->aop == RDMAP_AOP_FETCH_ADD)
		*w = old + a->data;
	else if (!((old ^ a->cmp) & a->cmask))
		*w = (old & ~a->dmask) | (a->data & a->dmask);
	return old;
}

/* An Atomic Response from the endpoint: the next Atomic Request after the
 * last request answered that carries its id, one it had to take, with
 * the word's value before it. */
static void ep_atomic_response(uint32_t id, uint64_t old)
{
	size_t pos = S.answered_to < S.fpdu_start ? S.fpdu_start : S.answered_to;
	struct ofr f;
	struct areq a;
	uint64_t want;
	bool found = false;
	int j, w;

	if (!S.x7306) {
		failure("Atomic Response without RFC 7306", "the endpoint sent an "
			"Atomic Response (id 0x%08x) on a connection that did not "
			"negotiate RFC 7306", id);
		return;
	}
	for (j = 0; j < S.nresp; j++)
		if (!S.resp[j].last) {
			failure("responses out of order", "an Atomic Response inside the "
				"Read Response to sink 0x%08x", S.resp[j].sink);
			return;
		}
	while (!found && next_frame(&pos, &f))
		found = atomic_req_frame(&f, &a) && a.id == id;
	if (!found) {
		failure("Atomic Response without a request", "an Atomic Response with "
			"id 0x%08x, which no Atomic Request after the last request "
			"answered carried", id);
		return;
	}
	S.answered_to = pos;
	if (!atomic_takeable(&f, &a, &w)) {
		int r = stag_region(a.stag);

		failure("Atomic Response for a refused request", "an Atomic Response "
			"to request 0x%08x: AOpCode %u, STag 0x%08x (%s) TO 0x%llx, "
			"mask 0x%llx, ULPDU_Length %u: the request had to be refused",
			id, a.aop, a.stag, r >= 0 ? reg[r].name : "unknown",
			(unsigned long long)a.to, (unsigned long long)a.dmask, f.ul);
		return;
	}
	want = atomic_apply(&S.aw[w], &a);
	if (want != old)
		failure("wrong Atomic Response value", "request 0x%08x (AOpCode %u) on "
			"word %d: the response says it held 0x%016llx, the requests "
			"answered before it leave 0x%016llx", id, a.aop, w,
			(unsigned long long)old, (unsigned long long)want);
	st.atomics_done++;
}

/* The endpoint's atomic result res: the value of a valid Atomic Response
 * to it (queue 3, MSN 1, its id, 12 bytes, last) in the peer's stream. */
static bool aresp_explains(const uint8_t *res)
{
	size_t pos = S.fpdu_start;
	struct ofr f;
	uint64_t v;

	memcpy(&v, res, 8);
	while (next_frame(&pos, &f)) {
		uint32_t ctrl;

		if (f.avail != f.ul || f.ul != DDP_UNTAGGED_LEN + RDMAP_ATOMIC_RESP_LEN)
			continue;
		ctrl = get16(f.u);
		if ((ctrl & DDP_T) || !(ctrl & DDP_L) ||
		    (ctrl & RDMAP_OP_MASK) != RDMAP_ATOMIC_RESP ||
		    get32(f.u + 6) != DDP_QN_ATOMIC_RESP || get32(f.u + 10) != 1 ||
		    get32(f.u + 14) || get32(f.u + DDP_UNTAGGED_LEN) != S.ep_atomic_id)
			continue;
		if (get64(f.u + DDP_UNTAGGED_LEN + 4) == v)
			return true;
	}
	return false;
}

/* ---- what the endpoint sends ------------------------------------------------- */

static void check_reply(const uint8_t *p, uint32_t pd_len)
{
	uint32_t bits = get16(p + 16);
	const uint8_t *pd = p + MPA_HDR_LEN;
	uint32_t start = 0, want_pd;

	if (memcmp(p, MPA_KEY_REP, MPA_KEY_LEN) != 0) {
		failure("bad MPA reply", "the reply's key is not \"%s\"", MPA_KEY_REP);
		return;
	}
	if (bits & (MPA_FLAG_REJECT | MPA_FLAG_MARKERS | MPA_FLAG_CRC)) {
		failure("bad MPA reply", "the reply to a valid request has bits 0x%04x", bits);
		return;
	}
	if (S.v2) {
		uint32_t ird, ord;

		if ((bits & MPA_REV_MASK) != 2 || !(bits & MPA_FLAG_ENHANCED) ||
		    pd_len < MPA_V2_LEN) {
			failure("bad MPA reply", "a revision 2 request got bits 0x%04x, "
				"PD_Length %u", bits, pd_len);
			return;
		}
		ird = get16(pd);
		ord = get16(pd + 2);
		start = MPA_V2_LEN;
		switch (S.mode) {
		case H_WRITE_RTR:
			if (!(ird & MPA_V2_P2P) || !(ord & MPA_V2_WRITE_RTR) ||
			    (ord & MPA_V2_READ_RTR))
				failure("bad MPA reply", "asked for a Write RTR, the reply "
					"says IRD 0x%04x ORD 0x%04x", ird, ord);
			break;
		case H_READ_RTR:
			if (!(ird & MPA_V2_P2P) || !(ord & MPA_V2_READ_RTR) ||
			    (ord & MPA_V2_WRITE_RTR))
				failure("bad MPA reply", "asked for a Read RTR, the reply "
					"says IRD 0x%04x ORD 0x%04x", ird, ord);
			break;
		default:
			if ((ird & MPA_V2_P2P) || (ord & (MPA_V2_WRITE_RTR | MPA_V2_READ_RTR)))
				failure("bad MPA reply", "asked for no RTR, the reply "
					"says IRD 0x%04x ORD 0x%04x", ird, ord);
			break;
		}
	} else if ((bits & MPA_REV_MASK) != 1) {
		failure("bad MPA reply", "a request without RFC 6581 parameters got "
			"revision %u", bits & MPA_REV_MASK);
		return;
	}
	want_pd = start + (uint32_t)S.acc_pdata_len + (S.ext ? TCP_EXT_LEN : 0);
	if (pd_len != want_pd) {
		failure("bad MPA reply", "PD_Length %u, expected %u (acks %s)", pd_len,
			want_pd, S.ext ? "on" : "off");
		return;
	}
	if (memcmp(pd + start, S.acc_pdata, S.acc_pdata_len) != 0)
		failure("bad MPA reply", "the accept's private data changed on the way");
	if (S.ext) {
		const uint8_t *t = pd + pd_len - TCP_EXT_LEN;

		if (get32(t) != TCP_EXT_MAGIC || !(get16(t + 6) & TCP_EXT_F_ACKS))
			failure("bad MPA reply", "no libdat trailer in the reply to one");
		else if (!(get16(t + 6) & TCP_EXT_F_RFC7306) != !S.x7306)
			failure("bad MPA reply", "the reply's trailer %s TCP_EXT_F_RFC7306, "
				"the request %s", (get16(t + 6) & TCP_EXT_F_RFC7306) ?
				"has" : "lacks", S.x7306 ? "offered it" : "did not");
	}
}

/* Bytes of memory a Read Response may carry: reg r from its address a. */
static void check_resp_data(uint32_t src, uint64_t at, const uint8_t *d, uint32_t n)
{
	int r = stag_region(src);
	uint32_t i;

	if (r < 0 || (r != RG_RO && (r != RG_RW || any_write_to(RG_RW))))
		return;     /* (the target may have changed since: not compared) */
	for (i = 0; i < n; i++)
		if (d[i] != rdata(r)[at - raddr(r) + i]) {
			failure("wrong Read Response data", "byte %u of a Read Response "
				"from %s is 0x%02x, the memory holds 0x%02x", i,
				reg[r].name, d[i], rdata(r)[at - raddr(r) + i]);
			return;
		}
}

static void ep_read_response(uint32_t sink, uint64_t to, const uint8_t *d,
			     uint32_t n, bool last)
{
	uint64_t sink_to, src_to;
	uint32_t len, src;
	int i;

	st.read_responses++;
	st.read_resp_bytes += n;
	for (i = 0; i < S.nresp && S.resp[i].sink != sink; i++)
		;
	if (i == S.nresp) {
		/* a new response: after every one before it, for a request
		 * after the last one answered (Reads and atomics in order) */
		size_t at = S.answered_to;
		int j;

		for (j = 0; j < S.nresp; j++)
			if (!S.resp[j].last) {
				failure("responses out of order", "a Read Response to sink "
					"0x%08x began inside the one to 0x%08x", sink,
					S.resp[j].sink);
				return;
			}
		if (!find_read_req(sink, &sink_to, &len, &src, &src_to, &at)) {
			failure("Read Response without a request", "a Read Response to sink "
				"STag 0x%08x, which no Read Request of the peer after the "
				"last one answered named", sink);
			return;
		}
		S.answered_to = at;
	} else {
		size_t at = S.fpdu_start;

		if (!find_read_req(sink, &sink_to, &len, &src, &src_to, &at))
			return;     /* (told when it began) */
	}
	if (!read_valid(src, src_to, len)) {
		int r = stag_region(src);

		failure("Read Response for a refused source", "a Read Response for "
			"STag 0x%08x (%s) TO 0x%llx length %u: the request had to be "
			"refused", src, r >= 0 ? reg[r].name : "unknown",
			(unsigned long long)src_to, len);
		return;
	}
	if (i == S.nresp) {
		if (S.nresp == 64)
			return;
		S.resp[S.nresp].sink = sink;
		S.resp[S.nresp].done = 0;
		S.resp[S.nresp].last = false;
		S.nresp++;
	}
	if (S.resp[i].last || to != sink_to + S.resp[i].done ||
	    (uint64_t)S.resp[i].done + n > len ||
	    last != (S.resp[i].done + n == len)) {
		failure("bad Read Response", "a Read Response piece at TO 0x%llx, %u "
			"bytes%s, after %u of %u (sink TO 0x%llx)",
			(unsigned long long)to, n, last ? " (last)" : "", S.resp[i].done,
			len, (unsigned long long)sink_to);
		return;
	}
	check_resp_data(src, src_to + S.resp[i].done, d, n);
	S.resp[i].done += n;
	S.resp[i].last = last;
	S.resp_bytes += n;
}

static void ep_fpdu(const uint8_t *u, uint32_t ul, uint32_t crc)
{
	uint32_t ctrl, op;

	if (S.term_seen) {
		failure("FPDU after a Terminate", "the endpoint sent an FPDU after its "
			"Terminate (control 0x%08x)", S.term_ctrl);
		return;
	}
	if (ul < 2) {
		failure("bad FPDU from the endpoint", "ULPDU_Length %u", ul);
		return;
	}
	ctrl = get16(u);
	op = ctrl & RDMAP_OP_MASK;
	if ((ctrl & DDP_VERSION_MASK) != DDP_VERSION_BITS ||
	    (ctrl & RDMAP_VERSION_MASK) != RDMAP_VERSION_BITS) {
		failure("bad FPDU from the endpoint", "control 0x%04x", ctrl);
		return;
	}
	if (S.ext) {
		/* its placed count: forward only, never past what we sent */
		if ((int32_t)(crc - S.ep_placed) < 0 || crc > S.frames)
			failure("bad placed count", "the endpoint reports %u placed after "
				"%u (the peer sent %u FPDUs)", crc, S.ep_placed, S.frames);
		S.ep_placed = crc;
	} else if (crc) {
		failure("bad CRC field", "CRC field 0x%08x with the acks off and CRC "
			"not negotiated", crc);
	}
	if (ctrl & DDP_T) {
		uint32_t stag;
		uint64_t to;

		if (ul < DDP_TAGGED_LEN) {
			failure("bad FPDU from the endpoint", "tagged, ULPDU_Length %u", ul);
			return;
		}
		stag = get32(u + 2);
		to = get64(u + 6);
		if (op == RDMAP_WRITE && stag == 0 && ul == DDP_TAGGED_LEN &&
		    (ctrl & DDP_L) && S.ext)
			return;     /* a bare ack */
		if (op == RDMAP_READ_RESP) {
			ep_read_response(stag, to, u + DDP_TAGGED_LEN,
					 ul - DDP_TAGGED_LEN, (ctrl & DDP_L) != 0);
			return;
		}
		failure("unexpected FPDU from the endpoint", "tagged op %u STag 0x%08x "
			"length %u", op, stag, ul - DDP_TAGGED_LEN);
		return;
	}
	if (ul < DDP_UNTAGGED_LEN) {
		failure("bad FPDU from the endpoint", "untagged, ULPDU_Length %u", ul);
		return;
	}
	{
		uint32_t qn = get32(u + 6), msn = get32(u + 10), mo = get32(u + 14);
		uint32_t dl = ul - DDP_UNTAGGED_LEN;

		switch (op) {
		case RDMAP_SEND:
		case RDMAP_SEND_SE:
			if (!S.ep_send || qn != DDP_QN_SEND || msn != 1 ||
			    mo != S.ep_send_got || S.ep_send_got + dl > S.ep_send_len ||
			    S.ep_send_msgs) {
				failure("unexpected FPDU from the endpoint", "a Send: QN %u "
					"MSN %u MO %u, %u bytes", qn, msn, mo, dl);
				return;
			}
			memcpy(S.ep_send_data + S.ep_send_got, u + DDP_UNTAGGED_LEN, dl);
			S.ep_send_got += dl;
			if (ctrl & DDP_L) {
				if (S.ep_send_got != S.ep_send_len ||
				    memcmp(S.ep_send_data, send_src, S.ep_send_len))
					failure("wrong Send data", "the endpoint's Send "
						"arrived with %u bytes, not the %u posted",
						S.ep_send_got, S.ep_send_len);
				S.ep_send_msgs = 1;
			}
			return;
		case RDMAP_READ_REQ: {
			const uint8_t *r = u + DDP_UNTAGGED_LEN;

			if (!S.ep_read || S.ep_read_seen || qn != DDP_QN_READ ||
			    msn != 1 || ul != DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN ||
			    get32(r + 12) != S.ep_read_len ||
			    get32(r + 16) != S.ep_read_rkey ||
			    get64(r + 20) != S.ep_read_raddr || get64(r + 4) != 0) {
				failure("unexpected FPDU from the endpoint", "a Read Request "
					"QN %u MSN %u length %u", qn, msn, ul);
				return;
			}
			S.ep_read_seen = true;
			S.ep_read_sink = get32(r);
			return;
		}
		case RDMAP_ATOMIC_REQ: {
			const uint8_t *r = u + DDP_UNTAGGED_LEN;
			bool add = S.ep_atomic_aop == RDMAP_AOP_FETCH_ADD;

			if (!S.ep_atomic || S.ep_atomic_seen || !S.x7306 ||
			    qn != DDP_QN_READ || msn != (S.ep_read ? 2u : 1u) || mo ||
			    !(ctrl & DDP_L) || dl != RDMAP_ATOMIC_REQ_LEN ||
			    (S.ep_read && !S.ep_read_seen) ||
			    get32(r) != S.ep_atomic_aop || get32(r + 8) != S.ep_atomic_rkey ||
			    get64(r + 12) != S.ep_atomic_raddr ||
			    get64(r + 20) != (add ? S.ep_atomic_a : S.ep_atomic_b) ||
			    get64(r + 36) != (add ? 0 : S.ep_atomic_a)) {
				failure("unexpected FPDU from the endpoint", "an Atomic "
					"Request QN %u MSN %u, %u bytes (posted %d, RFC 7306 "
					"%d)", qn, msn, dl, S.ep_atomic, S.x7306);
				return;
			}
			S.ep_atomic_seen = true;
			S.ep_atomic_id = get32(r + 4);
			return;
		}
		case RDMAP_ATOMIC_RESP:
			if (qn != DDP_QN_ATOMIC_RESP || msn != ++S.aresp_msn || mo ||
			    !(ctrl & DDP_L) || dl != RDMAP_ATOMIC_RESP_LEN) {
				failure("bad Atomic Response", "QN %u MSN %u (expected %u) "
					"MO %u, %u bytes", qn, msn, S.aresp_msn, mo, dl);
				return;
			}
			ep_atomic_response(get32(u + DDP_UNTAGGED_LEN),
					   get64(u + DDP_UNTAGGED_LEN + 4));
			return;
		case RDMAP_TERMINATE:
			if (qn != DDP_QN_TERM || ul < DDP_UNTAGGED_LEN + 4) {
				failure("bad Terminate from the endpoint", "QN %u length %u",
					qn, ul);
				return;
			}
			S.term_seen = true;
			S.term_ctrl = get32(u + DDP_UNTAGGED_LEN);
			st.ep_terms++;
			if (!S.x7306 && S.oracle_end < S.out_len)
				st.ext_unneg_terms++;
			{
				uint32_t key = S.term_ctrl >> 16;
				int t;

				for (t = 0; t < st.nterms && st.terms[t].key != key; t++)
					;
				if (t == st.nterms && t < 48)
					st.terms[st.nterms++].key = key;
				if (t < 48)
					st.terms[t].n++;
			}
			return;
		default:
			failure("unexpected FPDU from the endpoint", "untagged op %u", op);
			return;
		}
	}
}

/* Reads and checks what the endpoint sent to the peer. */
static void read_raw(void)
{
	size_t used = 0;

	if (S.raw < 0 || S.own_reader)
		return;
	while (!S.raw_eof && S.in_len < IN_MAX) {
		ssize_t n = recv(S.raw, S.in + S.in_len, IN_MAX - S.in_len, MSG_DONTWAIT);

		if (n > 0) {
			S.in_len += (size_t)n;
			continue;
		}
		if (n == 0 || (errno != EAGAIN && errno != EINTR))
			S.raw_eof = true;
		if (n < 0 && errno == EINTR)
			continue;
		break;
	}
	for (;;) {
		size_t left = S.in_len - used;
		const uint8_t *p = S.in + used;

		if (!S.reply_done) {
			uint32_t pd;

			if (left < MPA_HDR_LEN)
				break;
			pd = get16(p + 18);
			if (pd > MPA_PD_MAX) {
				failure("bad MPA reply", "PD_Length %u", pd);
				S.raw_eof = true;
				break;
			}
			if (left < MPA_HDR_LEN + pd)
				break;
			check_reply(p, pd);
			used += MPA_HDR_LEN + pd;
			S.reply_done = true;
			continue;
		}
		if (left < 2)
			break;
		{
			uint32_t ul = get16(p);
			size_t total = 2 + ul + fpdu_pad(ul) + 4;

			if (left < total)
				break;
			ep_fpdu(p + 2, ul, get32(p + total - 4));
			used += total;
		}
	}
	if (used) {
		memmove(S.in, S.in + used, S.in_len - used);
		S.in_len -= used;
	}
}

/* ---- driving the endpoint ------------------------------------------------------- */

static void on_event(const struct dapl_tcm_event *ev);
static void on_completion(const struct dapl_twc *wc);
static void garb_read(void);

static void drive(void)
{
	struct dapl_twc wc[16];
	struct dapl_tcm_event ev;
	int n, i;

	for (;;) {
		n = ops->cq_poll(cq1, wc, 16);
		if (n < 0)
			failure("cq_poll failed", "cq_poll: %d", n);
		for (i = 0; i < n; i++)
			on_completion(&wc[i]);
		if (n < 16)
			break;
	}
	for (;;) {
		n = ops->cq_poll(cq2, wc, 16);
		for (i = 0; i < n; i++)
			on_completion(&wc[i]);
		if (n < 16)
			break;
	}
	/* as the core does (transport.h): each pass, then its drives */
	for (i = 0; i < 64 && ops->cm_get_event(dev, &ev) == 0; i++)
		on_event(&ev);
	if (ops->progress_data(dev, true))
		for (i = 0; i < 64 && ops->cm_get_event(dev, &ev) == 0; i++)
			on_event(&ev);
	read_raw();
	garb_read();
	if (S.ep) {
		uint32_t held, bytes;

		/* the Sends held for receives stay within both bounds */
		pthread_mutex_lock(&S.ep->lock);
		held = S.ep->unexp_count;
		bytes = S.ep->unexp_bytes;
		pthread_mutex_unlock(&S.ep->lock);
		if (held > TCP_UNEXPECTED_MSGS || bytes > TCP_UNEXPECTED_MAX)
			failure("too many Sends held", "%u Sends (%u bytes) held for "
				"receives (bounds %u, %u)", held, bytes,
				TCP_UNEXPECTED_MSGS, TCP_UNEXPECTED_MAX);
	}
}

/* Drives until cond() or ms pass; sleeps only in poll() on the fds that
 * tell of progress. */
static bool wait_for(bool (*cond)(void), unsigned ms)
{
	uint64_t end = now_ms() + ms;

	for (;;) {
		struct pollfd p[4];
		int n = 0;
		uint64_t t;

		drive();
		if (cond())
			return true;
		t = now_ms();
		if (t >= end)
			return false;
		p[n].fd = dev_fd;
		p[n++].events = POLLIN;
		p[n].fd = ops->cq_wait_fd(cq1);
		p[n++].events = POLLIN;
		p[n].fd = ops->cq_wait_fd(cq2);
		p[n++].events = POLLIN;
		if (S.raw >= 0 && !S.raw_eof) {
			p[n].fd = S.raw;
			p[n++].events = POLLIN;
		}
		(void)poll(p, (nfds_t)n, (int)(end - t < 5 ? end - t : 5));
	}
}

/* ---- events and completions --------------------------------------------------- */

static uint16_t sa_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

static void on_event(const struct dapl_tcm_event *ev)
{
	int i;

	switch (ev->type) {
	case DAPL_TCM_CONNECT_REQUEST: {
		uint16_t p = sa_port(&ev->peer);

		if (ev->listener != lst)
			failure("request on an unknown listener", "CONNECT_REQUEST on %p",
				(void *)ev->listener);
		for (i = 0; i < S.ng; i++)
			if (S.g[i].port == p) {
				failure(S.g[i].kind == G_REJECT ?
					"request with the reject bit reported" :
					"garbage request reported",
					"a stranger's request (%s) was reported as "
					"CONNECT_REQUEST with %zu bytes of private data",
					garb_name[S.g[i].kind], ev->pdata_len);
				ops->reject(ev->conn, NULL, 0);
				return;
			}
		if (S.raw < 0 || p != S.raw_port || S.got_request) {
			failure("unexpected CONNECT_REQUEST", "a request from port %u", p);
			ops->reject(ev->conn, NULL, 0);
			return;
		}
		S.got_request = true;
		S.conn = ev->conn;
		if (ev->pdata_len != S.req_pdata_len ||
		    (S.req_pdata_len && memcmp(ev->pdata, S.req_pdata, S.req_pdata_len)))
			failure("request private data changed", "CONNECT_REQUEST with %zu "
				"bytes of private data, the peer sent %zu", ev->pdata_len,
				S.req_pdata_len);
		return;
	}
	case DAPL_TCM_ESTABLISHED:
	case DAPL_TCM_REJECTED:
	case DAPL_TCM_UNREACHABLE:
	case DAPL_TCM_DISCONNECTED:
	case DAPL_TCM_CONN_ERROR:
		if (S.gone && ev->ep == S.gone) {
			failure("event for a destroyed endpoint", "%s for the endpoint "
				"just destroyed", ev_name(ev->type));
			return;
		}
		if (!S.ep || ev->ep != S.ep) {
			failure("event for a gone endpoint", "%s for ep %p, which is not "
				"(or no longer) there", ev_name(ev->type), (void *)ev->ep);
			return;
		}
		if (S.terminal) {
			S.events_after++;
			failure("event after the end", "%s after %s", ev_name(ev->type),
				ev_name(S.terminal_type));
			return;
		}
		if (ev->type == DAPL_TCM_ESTABLISHED) {
			if (S.established++)
				failure("ESTABLISHED twice", "a second ESTABLISHED");
			return;
		}
		if (ev->type != DAPL_TCM_DISCONNECTED && ev->type != DAPL_TCM_CONN_ERROR)
			failure("unexpected event", "%s (status %d) on an accepted endpoint",
				ev_name(ev->type), ev->status);
		S.terminal = 1;
		S.terminal_type = ev->type;
		S.terminal_status = ev->status;
		st.terminal[ev->type & 7]++;
		return;
	default:
		failure("unexpected event", "%s", ev_name(ev->type));
		return;
	}
}

static bool recv_status_ok(enum dapl_twc_status s)
{
	return s == DAPL_TWC_SUCCESS || s == DAPL_TWC_FLUSHED ||
	       s == DAPL_TWC_LOCAL_LENGTH;
}

static void on_completion(const struct dapl_twc *wc)
{
	if (wc->owner != S.owner && wc->owner != 0)
		failure("completion with a wrong owner", "owner 0x%llx, context 0x%llx",
			(unsigned long long)wc->owner, (unsigned long long)wc->context);
	if (wc->context >= CTX_RECV && wc->context < CTX_RECV + NRECV) {
		struct recv *r = &S.rv[wc->context - CTX_RECV];

		if ((int)(wc->context - CTX_RECV) >= S.nrecv) {
			failure("completion of nothing posted", "receive context 0x%llx",
				(unsigned long long)wc->context);
			return;
		}
		if (r->completions++) {
			failure("receive completed twice", "receive %d completed again "
				"(status %d, before %d)", (int)(wc->context - CTX_RECV),
				wc->status, r->st);
			return;
		}
		if ((wc->opcode != DAPL_TWC_RECV &&
		     !(wc->opcode == DAPL_TWC_RECV_RDMA_IMM && S.x7306 &&
		       wc->status == DAPL_TWC_SUCCESS)) || !recv_status_ok(wc->status))
			failure("bad receive completion", "receive %d: opcode %d status %d "
				"(RFC 7306 %s)", (int)(wc->context - CTX_RECV), wc->opcode,
				wc->status, S.x7306 ? "on" : "off");
		r->with_imm = wc->opcode == DAPL_TWC_RECV_RDMA_IMM;
		r->imm = wc->imm;
		if (!(wc->flags & DAPL_TWC_WITH_IMM) != !r->with_imm ||
		    (!r->with_imm && wc->imm))
			failure("bad receive completion", "receive %d: opcode %d with "
				"flags 0x%x, immediate 0x%08x", (int)(wc->context - CTX_RECV),
				wc->opcode, wc->flags, wc->imm);
		if ((int)(wc->context - CTX_RECV) != S.recv_order)
			failure("receives out of order", "receive %d completed, %d was next",
				(int)(wc->context - CTX_RECV), S.recv_order);
		r->order = S.recv_order++;
		r->st = wc->status;
		r->byte_len = wc->byte_len;
		if (wc->status == DAPL_TWC_SUCCESS && wc->byte_len > r->len &&
		    !r->with_imm)   /* (an immediate's is the Write's length) */
			failure("receive overrun", "receive of %u bytes reports %u",
				r->len, wc->byte_len);
		return;
	}
	if (wc->context == CTX_ATOMIC) {
		if (!S.ep_atomic) {
			failure("completion of nothing posted", "context 0x%llx",
				(unsigned long long)wc->context);
			return;
		}
		if (S.ep_atomic_completions++) {
			failure("request completed twice", "the endpoint's atomic "
				"completed again");
			return;
		}
		if (wc->opcode != (S.ep_atomic_aop == RDMAP_AOP_FETCH_ADD ?
				   DAPL_TWC_FETCH_ADD : DAPL_TWC_CMP_SWAP) ||
		    (wc->status != DAPL_TWC_SUCCESS && wc->status != DAPL_TWC_FLUSHED &&
		     wc->status != DAPL_TWC_REMOTE_ACCESS &&
		     wc->status != DAPL_TWC_REMOTE_OP))
			failure("bad send-queue completion", "atomic: opcode %d status %d",
				wc->opcode, wc->status);
		if ((S.ep_read && !S.ep_read_completions) ||
		    (S.ep_send && !S.ep_send_completions))
			failure("send queue out of order", "the atomic completed before "
				"the Send or Read posted ahead of it");
		S.ep_atomic_st = wc->status;
		if (wc->status == DAPL_TWC_SUCCESS)
			st.ep_atomics_done++;
		return;
	}
	if (wc->context == CTX_SEND || wc->context == CTX_READ) {
		bool is_send = wc->context == CTX_SEND;
		int *cnt = is_send ? &S.ep_send_completions : &S.ep_read_completions;

		if (!(is_send ? S.ep_send : S.ep_read)) {
			failure("completion of nothing posted", "context 0x%llx",
				(unsigned long long)wc->context);
			return;
		}
		if ((*cnt)++) {
			failure("request completed twice", "the endpoint's %s completed again",
				is_send ? "Send" : "Read");
			return;
		}
		if (wc->opcode != (is_send ? DAPL_TWC_SEND : DAPL_TWC_RDMA_READ) ||
		    (wc->status != DAPL_TWC_SUCCESS && wc->status != DAPL_TWC_FLUSHED &&
		     wc->status != DAPL_TWC_REMOTE_ACCESS &&
		     wc->status != DAPL_TWC_REMOTE_OP))
			failure("bad send-queue completion", "%s: opcode %d status %d",
				is_send ? "Send" : "Read", wc->opcode, wc->status);
		/* the Send was posted first */
		if (!is_send && S.ep_send && !S.ep_send_completions)
			failure("send queue out of order", "the Read completed before the "
				"Send posted ahead of it");
		if (is_send)
			S.ep_send_st = wc->status;
		else
			S.ep_read_st = wc->status;
		return;
	}
	failure("completion of nothing posted", "context 0x%llx opcode %d status %d",
		(unsigned long long)wc->context, wc->opcode, wc->status);
}

/* ---- the stranger requests ------------------------------------------------------ */

static int raw_connect_buf(uint16_t *local_port, int rcvbuf)
{
	struct sockaddr_in sa;
	socklen_t sl = sizeof(sa);
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		DIE("socket: %s", strerror(errno));
	if (rcvbuf)
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sa.sin_port = htons(port);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		DIE("connect to the listener: %s", strerror(errno));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	if (getsockname(fd, (struct sockaddr *)&sa, &sl) != 0)
		DIE("getsockname: %s", strerror(errno));
	*local_port = ntohs(sa.sin_port);
	return fd;
}

static int raw_connect(uint16_t *local_port)
{
	return raw_connect_buf(local_port, 0);
}

static size_t valid_request(uint8_t *b, uint32_t pd_len)
{
	mpa_put_hdr(b, true, MPA_FLAG_ENHANCED | 2, pd_len);
	put16(b + MPA_HDR_LEN, 8 | MPA_V2_P2P);
	put16(b + MPA_HDR_LEN + 2, 8 | MPA_V2_WRITE_RTR);
	rnd_bytes(b + MPA_HDR_LEN + MPA_V2_LEN, pd_len - MPA_V2_LEN);
	return MPA_HDR_LEN + pd_len;
}

static void garb_open(enum garb_kind k)
{
	struct garb *g;
	uint8_t *b;
	size_t n;

	if (S.ng == MAX_GARB)
		return;
	g = &S.g[S.ng++];
	memset(g, 0, sizeof(*g));
	g->kind = k;
	g->fd = raw_connect(&g->port);
	b = g->bytes;
	n = valid_request(b, MPA_V2_LEN + rndn(40));
	switch (k) {
	case G_KEY:
		if (chance(30))
			memcpy(b, MPA_KEY_REP, MPA_KEY_LEN);
		else
			b[rndn(MPA_KEY_LEN)] ^= (uint8_t)(1u << rndn(8));
		break;
	case G_PDLEN:
		put16(b + 18, MPA_PD_MAX + 1 + rndn(65535 - MPA_PD_MAX));
		break;
	case G_TRUNC_HDR:
		n = 1 + rndn(MPA_HDR_LEN - 1);
		g->hold = chance(50);
		break;
	case G_TRUNC_PD:
		n = MPA_HDR_LEN + rndn((uint32_t)(n - MPA_HDR_LEN));
		g->hold = chance(50);
		break;
	case G_MARKERS:
		put16(b + 16, get16(b + 16) | MPA_FLAG_MARKERS);
		break;
	case G_CRC:
		put16(b + 16, get16(b + 16) | MPA_FLAG_CRC);
		break;
	case G_REJECT:
		put16(b + 16, get16(b + 16) | MPA_FLAG_REJECT);
		break;
	case G_REV:
		put16(b + 16, (get16(b + 16) & ~MPA_REV_MASK) |
		      (chance(30) ? 0 : 3 + rndn(253)));
		break;
	default:
		n = 1 + rndn(sizeof(g->bytes) - 1);
		rnd_bytes(b, n);
		break;
	}
	g->len = n;
	st.garb[k]++;
	(void)!send(g->fd, b, n, MSG_NOSIGNAL);
	if (!g->hold && chance(50)) {
		/* some close at once, some half-close and wait for an answer */
		if (chance(50)) {
			close(g->fd);
			g->fd = -1;
		} else {
			shutdown(g->fd, SHUT_WR);
		}
	}
}

/* Reads what the listener answered the strangers. */
static void garb_read(void)
{
	int i;

	for (i = 0; i < S.ng; i++) {
		struct garb *g = &S.g[i];
		uint8_t b[64];
		ssize_t n;

		if (g->fd < 0)
			continue;
		n = recv(g->fd, b, sizeof(b), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
			close(g->fd);
			g->fd = -1;
			continue;
		}
		if (n <= 0)
			continue;
		if (g->replied)
			continue;
		g->replied = true;
		g->reply_ok = n >= MPA_HDR_LEN && !memcmp(b, MPA_KEY_REP, MPA_KEY_LEN) &&
			      (get16(b + 16) & MPA_FLAG_REJECT);
		if (!g->reply_ok)
			failure("stranger answered without the reject bit", "%zd bytes "
				"answered a request with %s", n, garb_name[g->kind]);
		else
			st.garb_refused++;
	}
}

static bool garb_settled(void)
{
	int i;

	for (i = 0; i < S.ng; i++)
		if ((S.g[i].kind == G_MARKERS || S.g[i].kind == G_CRC) &&
		    S.g[i].fd >= 0 && !S.g[i].replied)
			return false;
	return true;
}

static void garb_close_all(void)
{
	int i;

	for (i = 0; i < S.ng; i++)
		if (S.g[i].fd >= 0) {
			close(S.g[i].fd);
			S.g[i].fd = -1;
		}
}

/* ---- sending the peer's stream -------------------------------------------------- */

static bool cond_writable(void)
{
	struct pollfd p = { .fd = S.raw, .events = POLLOUT };

	return S.raw_eof || poll(&p, 1, 0) > 0;
}

static void post_one_recv(void);

/* Sends the stream up to upto, acting at the cuts on the way. */
static void send_upto(size_t upto)
{
	while (S.sent < upto && !S.raw_dead) {
		size_t stop = upto;
		ssize_t n;

		while (S.next_cut < S.ncuts && S.cuts[S.next_cut].at <= S.sent) {
			switch (S.cuts[S.next_cut].act) {
			case CUT_POST_RECV:
				post_one_recv();
				break;
			case CUT_ARM:
				ops->cq_arm(S.rcq, 0);
				ops->cq_ack(S.rcq);
				break;
			default:
				break;
			}
			S.next_cut++;
			drive();
		}
		if (S.next_cut < S.ncuts && S.cuts[S.next_cut].at < stop)
			stop = S.cuts[S.next_cut].at;
		n = send(S.raw, S.out + S.sent, stop - S.sent, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0) {
			S.sent += (size_t)n;
			st.bytes += (unsigned long)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN) {
			/* the endpoint has not read yet (or stalls): drive it */
			if (!wait_for(cond_writable, 2000)) {
				S.raw_dead = true;     /* it stopped reading: fine */
				break;
			}
			continue;
		}
		S.raw_dead = true;      /* the endpoint closed: the rest is moot */
	}
	drive();
}

/* ---- building FPDUs --------------------------------------------------------------- */

#define FRAME_MAX (2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN + 16384 + 8)

static struct gen {
	uint32_t msn_send, msn_read, msn_term;
	uint32_t mo;            /* offset in the Send message in progress */
	bool in_msg;
	uint32_t resp_done;     /* bytes of the endpoint's Read answered */
	bool resp_over;
	uint32_t sinks;
	unsigned ext_pct;       /* RFC 7306 frames: this percentage of them */
	bool aresp_sent;        /* answered the endpoint's atomic */
	uint32_t areq_id;
	uint64_t pred[ATOMIC_WORDS];    /* the words, if every atomic ran */
} G;

static uint32_t crc_field(void)
{
	/* what we placed of the endpoint's messages, with the acks on */
	return S.ext ? S.ep_send_msgs : 0;
}

/* Finishes a frame whose ULPDU is f[2 .. 2 + ul): length, pad, CRC. */
static size_t frame_end(uint8_t *f, uint32_t ul)
{
	uint32_t pad = fpdu_pad(ul);

	put16(f, ul);
	memset(f + 2 + ul, 0, pad);
	put32(f + 2 + ul + pad, crc_field());
	return 2 + ul + pad + 4;
}

static size_t b_send(uint8_t *f, uint32_t dl, bool last, unsigned op)
{
	if (!G.in_msg) {
		G.in_msg = true;
		G.mo = 0;
	}
	fpdu_put_untagged(f, 0, last, op, DDP_QN_SEND, G.msn_send, G.mo);
	rnd_bytes(f + 2 + DDP_UNTAGGED_LEN, dl);
	G.mo += dl;
	if (last) {
		G.in_msg = false;
		G.msn_send++;
	}
	return frame_end(f, DDP_UNTAGGED_LEN + dl);
}

static size_t b_write(uint8_t *f, uint32_t stag, uint64_t to, uint32_t dl, bool last)
{
	fpdu_put_tagged(f, 0, last, RDMAP_WRITE, stag, to);
	rnd_bytes(f + 2 + DDP_TAGGED_LEN, dl);
	return frame_end(f, DDP_TAGGED_LEN + dl);
}

static size_t b_read_req(uint8_t *f, uint32_t sink, uint64_t sink_to, uint32_t len,
			 uint32_t src, uint64_t src_to)
{
	uint8_t *r = f + 2 + DDP_UNTAGGED_LEN;

	fpdu_put_untagged(f, 0, true, RDMAP_READ_REQ, DDP_QN_READ, G.msn_read++, 0);
	put32(r, sink);
	put64(r + 4, sink_to);
	put32(r + 12, len);
	put32(r + 16, src);
	put64(r + 20, src_to);
	return frame_end(f, DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN);
}

static size_t b_term(uint8_t *f)
{
	uint32_t hl = rndn(TERM_PAYLOAD_MAX - 4 + 1);
	uint8_t *p = f + 2 + DDP_UNTAGGED_LEN;

	fpdu_put_untagged(f, 0, true, RDMAP_TERMINATE, DDP_QN_TERM, G.msn_term++, 0);
	put32(p, rnd() & 0x3fffe000u);
	if (chance(50)) {
		/* naming a Send, Write or Read of the endpoint's */
		put32(p, (get32(p) & ~0xffffu) | TERM_HDRCT_M | TERM_HDRCT_D);
		hl = hl < 2 + DDP_TAGGED_LEN ? 2 + DDP_TAGGED_LEN : hl;
	}
	rnd_bytes(p + 4, hl);
	if (hl >= 4)
		put16(p + 4 + 2, ddp_ctrl(rndn(2), true, rndn(8)));
	return frame_end(f, DDP_UNTAGGED_LEN + 4 + hl);
}

static uint32_t data_len(uint32_t max);

static size_t b_imm(uint8_t *f, bool se, uint64_t v)
{
	fpdu_put_untagged(f, 0, true, se ? RDMAP_IMM_SE : RDMAP_IMM, DDP_QN_SEND,
			  G.msn_send++, 0);
	put64(f + 2 + DDP_UNTAGGED_LEN, v);
	return frame_end(f, DDP_UNTAGGED_LEN + RDMAP_IMM_LEN);
}

static size_t b_atomic(uint8_t *f, const struct areq *a, uint32_t rsvd)
{
	uint8_t *r = f + 2 + DDP_UNTAGGED_LEN;

	fpdu_put_untagged(f, 0, true, RDMAP_ATOMIC_REQ, DDP_QN_READ, G.msn_read++, 0);
	put32(r, (rsvd & ~RDMAP_AOP_MASK) | a->aop);
	put32(r + 4, a->id);
	put32(r + 8, a->stag);
	put64(r + 12, a->to);
	put64(r + 20, a->data);
	put64(r + 28, a->dmask);
	put64(r + 36, a->cmp);
	put64(r + 44, a->cmask);
	return frame_end(f, DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN);
}

static uint64_t rnd64(void)
{
	return (uint64_t)rnd() << 32 | rnd();
}

/* An operand: small, near the carry, or anything. */
static uint64_t operand(void)
{
	switch (rndn(4)) {
	case 0: return 1 + rndn(16);
	case 1: return (uint64_t)0 - 1 - rndn(16);
	case 2: return (uint64_t)1 << rndn(64);
	default: return rnd64();
	}
}

/* An RFC 7306 frame: Immediate Data (often right behind a Write of its
 * own: a write with immediate), an Atomic Request, or an Atomic Response
 * nobody asked for; valid ones (so far as the generator knows) or aimed
 * at a check.  *bad: certainly refused. */
static size_t gen_ext(uint8_t *f, bool clean, bool *bad)
{
	uint32_t r = rndn(clean ? 90 : 100);
	size_t n;

	*bad = false;
	st.ext_frames++;
	if (S.ep_atomic_seen && !G.aresp_sent && (!S.ep_read || G.resp_over) &&
	    chance(40)) {
		/* the answer to the endpoint's atomic (after its Read's) */
		G.aresp_sent = true;
		fpdu_put_untagged(f, 0, true, RDMAP_ATOMIC_RESP, DDP_QN_ATOMIC_RESP, 1, 0);
		put32(f + 2 + DDP_UNTAGGED_LEN, S.ep_atomic_id);
		put64(f + 2 + DDP_UNTAGGED_LEN + 4, rnd64());
		n = frame_end(f, DDP_UNTAGGED_LEN + RDMAP_ATOMIC_RESP_LEN);
		if (!clean && chance(30)) {
			*bad = true;
			switch (rndn(6)) {
			case 0: put32(f + 2 + DDP_UNTAGGED_LEN, S.ep_atomic_id ^
				      (1u << rndn(32))); break;                   /* id */
			case 1: put32(f + 2 + 6, rndn(3)); break;                  /* QN */
			case 2: put32(f + 2 + 10, 2 + rndn(3)); break;             /* MSN */
			case 3: put16(f + 2, get16(f + 2) & ~DDP_L); break;
			case 4:
				rnd_bytes(f + n - 4, 8);
				n = frame_end(f, get16(f) + 8);
				break;
			default:
				n = frame_end(f, DDP_UNTAGGED_LEN + rndn(RDMAP_ATOMIC_RESP_LEN));
				break;
			}
		}
		return n;
	}
	if (r < 40 && !(clean && G.in_msg)) {               /* Immediate Data */
		if (!G.in_msg && chance(60)) {
			/* the Write of a write with immediate, maybe in two FPDUs */
			uint32_t len = data_len(2000), off = rndn(4096);
			bool two = len > 1 && chance(25);
			uint32_t first = two ? 1 + rndn(len - 1) : len;

			n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + off, first, !two);
			out_put(f, n);
			S.frames++;
			st.frames++;
			if (two) {
				n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + off + first,
					    len - first, true);
				out_put(f, n);
				S.frames++;
				st.frames++;
			}
		}
		n = b_imm(f, chance(50), rnd64());
		if (G.in_msg)
			*bad = true;    /* inside a Send */
		if (!clean && chance(25)) {
			*bad = true;
			switch (rndn(6)) {
			case 0: put32(f + 2 + 6, 1 + rndn(4)); break;              /* QN */
			case 1: put32(f + 2 + 10, get32(f + 2 + 10) +
				      (chance(50) ? 1 : (uint32_t)-1)); break;       /* MSN */
			case 2: put32(f + 2 + 14, 1 + rndn(64)); break;            /* MO */
			case 3: put16(f + 2, get16(f + 2) & ~DDP_L); break;        /* not last */
			case 4:                                                 /* data after it */
				rnd_bytes(f + n - 4, 8);
				n = frame_end(f, get16(f) + 4 + 4 * rndn(2));
				break;
			default:                                                /* truncated */
				put16(f, DDP_UNTAGGED_LEN + rndn(RDMAP_IMM_LEN));
				n = frame_end(f, get16(f));
				break;
			}
		}
		return n;
	}
	if (r < 90) {                                       /* Atomic Request */
		struct areq a;
		int w = (int)rndn(chance(60) ? 4 : ATOMIC_WORDS);
		uint32_t rsvd = chance(10) ? rnd() : 0;

		memset(&a, 0, sizeof(a));
		a.id = 0xa7000000u + G.areq_id++;
		a.stag = reg[RG_ATOMIC].stag;
		a.to = raddr(RG_ATOMIC) + 8u * (uint32_t)w;
		a.aop = chance(50) ? RDMAP_AOP_FETCH_ADD : RDMAP_AOP_CMP_SWAP;
		a.data = operand();
		if (a.aop == RDMAP_AOP_CMP_SWAP) {
			a.cmp = chance(60) ? G.pred[w] : operand();
			a.cmask = chance(80) ? ~(uint64_t)0 : rnd64();
			a.dmask = chance(80) ? ~(uint64_t)0 : rnd64();
		}
		if (!clean && chance(40)) {
			*bad = true;
			switch (rndn(16)) {
			case 0: a.stag = reg[RG_OTHER_PD].stag;
				a.to = raddr(RG_OTHER_PD) + 8 * rndn(64); break;
			case 1: a.stag = reg[RG_RW].stag;           /* no atomic right */
				a.to = raddr(RG_RW) + 8 * rndn(64); break;
			case 2: a.stag = reg[RG_STALE].stag;
				a.to = raddr(RG_STALE) + 8 * rndn(64); break;
			case 3: a.stag = chance(50) ? reg[RG_LOCAL].stag : rnd();
				a.to = raddr(RG_LOCAL); break;
			case 4: a.to += 1 + rndn(7); break;         /* misaligned */
			case 5: a.to = raddr(RG_ATOMIC) - 8 * (1 + rndn(4)); break;
			case 6: a.to = raddr(RG_ATOMIC) + reg[RG_ATOMIC].len +
				       (chance(50) ? 0 : 8 * rndn(8)); break;
			case 7: a.to = raddr(RG_ATOMIC) + reg[RG_ATOMIC].len - 1 - rndn(7);
				break;                              /* across the end */
			case 8: a.to = (uint64_t)0 - 8 * (1 + rndn(2)); break;   /* wraps */
			case 9: a.aop = RDMAP_AOP_SWAP + (chance(50) ? 0 : 2 + rndn(13));
				break;
			case 10: a.aop = RDMAP_AOP_FETCH_ADD; a.dmask = 1 + rnd64(); break;
			case 11: a.stag = 0; break;
			default: *bad = false; break;   /* framing, below */
			}
			n = b_atomic(f, &a, rsvd);
			if (!*bad) {
				*bad = true;
				switch (rndn(5)) {
				case 0: put32(f + 2 + 6, chance(50) ? 0 : 2 + rndn(4)); break;
				case 1: put32(f + 2 + 10, get32(f + 2 + 10) +
					      (chance(50) ? 1 : (uint32_t)-1)); break;
				case 2: put32(f + 2 + 14, 8); break;
				case 3: put16(f + 2, get16(f + 2) & ~DDP_L); break;
				default:        /* data after it, or truncated */
					if (chance(50)) {
						rnd_bytes(f + n - 4, 8);
						n = frame_end(f, get16(f) + 8);
					} else {
						n = frame_end(f, DDP_UNTAGGED_LEN +
							      rndn(RDMAP_ATOMIC_REQ_LEN));
					}
					break;
				}
			}
			return n;
		}
		/* what the generator expects, for CmpSwaps that match */
		atomic_apply(&G.pred[w], &a);
		return b_atomic(f, &a, rsvd);
	}
	/* an Atomic Response: the endpoint asked for none */
	*bad = true;
	fpdu_put_untagged(f, 0, true, RDMAP_ATOMIC_RESP, chance(80) ? DDP_QN_ATOMIC_RESP :
			  rndn(4), chance(80) ? 1 : rnd(), 0);
	put32(f + 2 + DDP_UNTAGGED_LEN, chance(50) ? S.ep_read_sink : rnd());
	put64(f + 2 + DDP_UNTAGGED_LEN + 4, rnd64());
	return frame_end(f, DDP_UNTAGGED_LEN + RDMAP_ATOMIC_RESP_LEN);
}

static uint32_t data_len(uint32_t max)
{
	uint32_t r = rndn(100);

	if (r < 15)
		return 0;
	if (r < 70)
		return 1 + rndn(max < 64 ? max : 64);
	if (r < 95)
		return rndn(max < 1024 ? max + 1 : 1025);
	return rndn(max + 1);
}

/* An STag and TO for a tagged target: mostly valid, often not. */
static void pick_target(bool write, uint32_t *stag, uint64_t *to, uint32_t *len)
{
	int r = write ? (chance(80) ? RG_RW : RG_WO) : (chance(60) ? RG_RW : RG_RO);
	uint32_t rl = (uint32_t)reg[r].len, off;

	*len = data_len(write ? (rl < 9000 ? rl : 9000) : rl);
	off = rndn(rl - *len + 1);
	*stag = reg[r].stag;
	*to = raddr(r) + off;
	if (chance(65))
		return;
	switch (rndn(14)) {
	case 0: *stag = reg[write ? RG_RO : RG_WO].stag; break;
	case 1: *stag = reg[RG_OTHER_PD].stag; *to = raddr(RG_OTHER_PD) + rndn(256); break;
	case 2: *stag = reg[RG_STALE].stag; *to = raddr(RG_STALE) + rndn(256); break;
	case 3: *stag = reg[RG_LOCAL].stag; *to = raddr(RG_LOCAL) + rndn(256); break;
	case 4: *stag = rnd(); break;
	case 5: *stag = 0; break;
	case 6: *stag ^= 1u << rndn(32); break;
	case 7: *to = raddr(r) - 1 - rndn(64); if (!*len) *len = 1 + rndn(64); break;
	case 8: /* across the end */
		if (!*len)
			*len = 2 + rndn(64);
		*to = raddr(r) + rl - *len + 1 + rndn(*len - 1);
		break;
	case 9: *to = raddr(r) + rl; if (!*len) *len = 1; break;
	case 10: *to = UINT64_MAX - rndn(*len + 16); if (!*len) *len = 8; break;
	case 11: *to = 0; break;
	case 12: *to += (uint64_t)1 << (32 + rndn(32)); break;
	default: *to = raddr(r) + rl - rndn(16); *len = 0xffffff00u + rndn(256); break;
	}
}

/* Structural mutations of a built frame; returns its new size. */
static size_t mutate(uint8_t *f, size_t n, size_t cap)
{
	int k = 1 + (int)rndn(chance(80) ? 1 : 3);

	while (k--) {
		uint32_t ul = get16(f);
		bool tagged = n >= 4 && (get16(f + 2) & DDP_T);
		size_t hl = 2 + (tagged ? DDP_TAGGED_LEN : DDP_UNTAGGED_LEN);

		switch (rndn(16)) {
		case 0: case 1:         /* a bit in the header */
			f[rndn((uint32_t)(hl < n ? hl : n))] ^= (uint8_t)(1u << rndn(8));
			break;
		case 2:                 /* a byte in the header */
			f[2 + rndn((uint32_t)(hl - 2 < n - 2 ? hl - 2 : n - 2))] = (uint8_t)rnd();
			break;
		case 3:                 /* ULPDU_Length: more than follows */
			put16(f, ul + 1 + rndn(65535 - ul));
			break;
		case 4:                 /* ULPDU_Length: less, even below the header */
			put16(f, rndn(ul + 1));
			break;
		case 5:                 /* ULPDU_Length: extremes */
			put16(f, chance(50) ? 0xffff : rndn(4));
			break;
		case 6:                 /* DDP version */
			put16(f + 2, (get16(f + 2) & ~DDP_VERSION_MASK) | (rndn(4) << 8));
			break;
		case 7:                 /* RDMAP version */
			put16(f + 2, (get16(f + 2) & ~RDMAP_VERSION_MASK) | (rndn(4) << 6));
			break;
		case 8:                 /* opcode, T, L */
			put16(f + 2, get16(f + 2) ^ (chance(30) ? DDP_T : chance(50) ? DDP_L :
						 rndn(16)));
			break;
		case 9:                 /* reserved DDP bits */
			put16(f + 2, get16(f + 2) | ((1 + rndn(15)) << 10));
			break;
		case 10:                /* QN, MSN or MO (untagged), TO (tagged) */
			if (tagged)
				put64(f + 8, get64(f + 8) + (chance(50) ? 1 : -(uint64_t)1 -
							   rndn(64)));
			else
				put32(f + 8 + 4 * rndn(3), chance(50) ? rnd() :
				      get32(f + 8) + (chance(50) ? 1 : (uint32_t)-1));
			break;
		case 11:                /* truncate (nothing after it) */
			n = 1 + rndn((uint32_t)n - 1);
			k = 0;
			break;
		case 12:                /* pad and CRC garbage */
			rnd_bytes(f + n - 4 - fpdu_pad(ul), 4 + fpdu_pad(ul));
			break;
		case 13:                /* junk after it */
			{
				size_t j = 1 + rndn(32);

				if (n + j <= cap) {
					rnd_bytes(f + n, j);
					n += j;
				}
			}
			break;
		case 14:                /* a CRC field that is an ack count */
			put32(f + n - 4, chance(50) ? rnd() : S.ep_send_msgs + 1 + rndn(3));
			break;
		default:                /* the STag, or the Read Request's fields */
			if (tagged)
				put32(f + 4, rnd());
			else if (n >= hl + RDMAP_READ_REQ_LEN)
				f[hl + rndn(RDMAP_READ_REQ_LEN)] ^= (uint8_t)(1u << rndn(8));
			else
				put32(f + 4, rnd());   /* reserved / Inv STag */
			break;
		}
	}
	return n;
}

/* One frame of the generated sequence into f; *kind says what it is. */
enum fkind { F_SEND, F_WRITE, F_READ, F_RESP, F_ACK, F_TERM, F_OP, F_RAW };

static size_t gen_frame(uint8_t *f, bool clean, bool *bad)
{
	uint32_t r = rndn(100), stag, len;
	uint64_t to;
	size_t n;
	bool last;

	*bad = false;
	if (G.ext_pct && rndn(100) < G.ext_pct)
		return gen_ext(f, clean, bad);
	if (r < 30 || (G.in_msg && chance(60))) {          /* Send */
		last = chance(G.in_msg ? 60 : 70);
		n = b_send(f, data_len(chance(5) ? 9000 : 1500), last,
			   RDMAP_SEND + rndn(4));
		if (!clean && chance(6)) {
			/* wrong QN, MSN or MO */
			put32(f + 2 + 6 + 4 * rndn(3), chance(50) ? rnd() :
			      get32(f + 2 + 10) + (chance(50) ? 1 : (uint32_t)-1));
			*bad = true;
		}
		return n;
	}
	if (r < 55) {                                       /* Write */
		pick_target(true, &stag, &to, &len);
		if (clean && !write_valid(stag, to, len)) {
			stag = reg[RG_RW].stag;
			to = raddr(RG_RW);
			len = len > 9000 ? 9000 : len;
		}
		if (len > 9000)
			len = 9000;   /* declared longer by a mutation, if at all */
		last = chance(80);
		return b_write(f, stag, to, len, last);
	}
	if (r < 68) {                                       /* Read Request */
		pick_target(false, &stag, &to, &len);
		if (clean && !read_valid(stag, to, len)) {
			stag = reg[RG_RO].stag;
			to = raddr(RG_RO);
			len = 100;
		}
		n = b_read_req(f, 0x51000000u + G.sinks++ * 7919u + rndn(7), rnd(),
			       len, stag, to);
		if (!clean && chance(8)) {
			/* with data, not last, or with a bad QN / MO */
			switch (rndn(3)) {
			case 0:         /* 4 bytes of data (the old CRC field) */
				put16(f, get16(f) + 4);
				memmove(f + n, f + n - 4, 4);
				n += 4;
				break;
			case 1:
				put16(f + 2, get16(f + 2) & ~DDP_L);
				break;
			default:
				put32(f + 2 + 6 + 4 * (rndn(2) ? 0 : 2), 1 + rndn(5));
				break;
			}
			*bad = true;
		}
		return n;
	}
	if (r < 78 && S.ep_read_seen && !G.resp_over) {     /* Read Response */
		uint32_t left = S.ep_read_len - G.resp_done, dl;

		dl = left ? 1 + rndn(left) : 0;
		if (chance(70))
			dl = left;
		last = G.resp_done + dl == S.ep_read_len;
		fpdu_put_tagged(f, 0, last, RDMAP_READ_RESP, S.ep_read_sink, G.resp_done);
		rnd_bytes(f + 2 + DDP_TAGGED_LEN, dl);
		G.resp_done += dl;
		G.resp_over = last;
		n = frame_end(f, DDP_TAGGED_LEN + dl);
		if (!clean && chance(10)) {
			/* wrong sink, TO, too long, early L */
			switch (rndn(4)) {
			case 0: put32(f + 4, get32(f + 4) ^ (1u << rndn(32))); break;
			case 1: put64(f + 8, get64(f + 8) + 1 + rndn(8)); break;
			case 2: put16(f + 2, get16(f + 2) ^ DDP_L); break;
			default:
				if (n + 8 <= FRAME_MAX) {
					rnd_bytes(f + n - 4, 8);
					n = frame_end(f, get16(f) + 8);
				}
				break;
			}
			*bad = true;
		}
		return n;
	}
	if (r < 82) {                                       /* bare ack */
		fpdu_put_tagged(f, 0, true, RDMAP_WRITE, 0, 0);
		return frame_end(f, DDP_TAGGED_LEN);
	}
	if (clean)
		return b_write(f, reg[RG_RW].stag, raddr(RG_RW) + rndn(4096), rndn(200),
			       true);
	if (r < 87) {                                       /* Terminate */
		*bad = true;
		n = b_term(f);
		if (chance(15)) {
			/* wrong QN, or longer than any Terminate may be */
			if (chance(50))
				put32(f + 2 + 6, 1 + rndn(8));
			else
				put16(f, DDP_UNTAGGED_LEN + TERM_PAYLOAD_MAX + 1 + rndn(64));
		}
		return n;
	}
	if (r < 93) {                                       /* an opcode that may not come */
		*bad = true;
		switch (rndn(5)) {
		case 0:         /* tagged: a Send, Read Request, Terminate... */
			n = b_write(f, reg[RG_RW].stag, raddr(RG_RW), rndn(32), true);
			put16(f + 2, ddp_ctrl(true, true, RDMAP_READ_REQ + rndn(7)));
			return n;
		case 1:         /* an untagged Write or Read Response */
			fpdu_put_untagged(f, 0, true, chance(50) ? RDMAP_WRITE : RDMAP_READ_RESP,
					  DDP_QN_SEND, G.msn_send, 0);
			rnd_bytes(f + 2 + DDP_UNTAGGED_LEN, 16);
			return frame_end(f, DDP_UNTAGGED_LEN + 16);
		case 2:         /* opcodes 8..15 */
			fpdu_put_untagged(f, 0, true, 8 + rndn(8), rndn(3), 1, 0);
			n = rndn(8);
			rnd_bytes(f + 2 + DDP_UNTAGGED_LEN, n);
			return frame_end(f, DDP_UNTAGGED_LEN + (uint32_t)n);
		case 3:         /* a Read Response nobody asked for */
			fpdu_put_tagged(f, 0, true, RDMAP_READ_RESP, rnd(), 0);
			rnd_bytes(f + 2 + DDP_TAGGED_LEN, 24);
			return frame_end(f, DDP_TAGGED_LEN + 24);
		default:        /* an RTR again, with data */
			return b_write(f, 0, 0, 1 + rndn(16), true);
		}
	}
	/* raw garbage */
	*bad = true;
	n = 1 + rndn(chance(80) ? 64 : 600);
	rnd_bytes(f, n);
	return n;
}

/* ---- the endpoint's side: create, post, accept, tear down ------------------------- */

static void post_one_recv(void)
{
	struct recv *r;
	struct dapl_tsge sge[3];
	int i, err;
	uint32_t big = chance(8) ? RSLOT : 700;

	if (S.nrecv == NRECV || !S.ep)
		return;
	r = &S.rv[S.nrecv];
	memset(r, 0, sizeof(*r));
	r->nsge = chance(70) ? 1 : 2 + (int)rndn(2);
	r->order = -1;
	for (i = 0; i < r->nsge; i++) {
		r->seg[i] = slot_addr(S.nrecv * 3 + i);
		r->seglen[i] = chance(5) ? 0 : rndn(big + 1);
		r->len += r->seglen[i];
		sge[i].addr = (uint64_t)(uintptr_t)r->seg[i];
		sge[i].length = r->seglen[i];
		sge[i].lkey = 0;
		sge[i].mr = NULL;
	}
	err = S.srq ? ops->srq_post_recv(S.srq, sge, r->nsge, CTX_RECV + S.nrecv)
		    : ops->post_recv(S.ep, sge, r->nsge, CTX_RECV + S.nrecv);
	if (err)
		failure("post_recv failed", "post_recv: %d", err);
	else
		S.nrecv++;
}

static void make_ep(void)
{
	struct dapl_tep_attr a;
	int err, i, n;

	memset(&a, 0, sizeof(a));
	a.max_send_wr = 4;
	a.max_recv_wr = NRECV;
	a.max_send_sge = 2;
	a.max_recv_sge = 3;
	a.owner = S.owner = 0xe9000000ull + (uint64_t)cur_input;
	S.scq = cq1;
	S.rcq = chance(30) ? cq2 : cq1;
	S.srq = NULL;
	if (chance(20)) {
		err = ops->srq_create(pd_a, NRECV, 3, &S.srq);
		if (err)
			DIE("srq_create: %d", err);
	}
	err = ops->ep_create(pd_a, S.scq, S.rcq, S.srq, &a, &S.ep);
	if (err)
		DIE("ep_create: %d", err);
	n = (int)rndn(NRECV + 1);
	if (n < 2 && chance(50))
		n += 2;
	for (i = 0; i < n; i++)
		post_one_recv();
}

static void srq_discarded(uint64_t ctx, void *arg)
{
	(void)arg;
	if (ctx >= CTX_RECV && ctx < CTX_RECV + NRECV && (int)(ctx - CTX_RECV) < S.nrecv) {
		struct recv *r = &S.rv[ctx - CTX_RECV];

		if (r->completions || r->discarded)
			failure("receive completed and discarded", "receive %d",
				(int)(ctx - CTX_RECV));
		r->discarded = true;
		st.recv_discarded++;
	} else {
		failure("discarded nothing posted", "context 0x%llx",
			(unsigned long long)ctx);
	}
}

/* ---- checks after an input ------------------------------------------------------ */

static void check_guard(const uint8_t *p, size_t n, const char *what)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (p[i] != GUARD_BYTE(i)) {
			failure("write outside the registration", "guard byte %zu %s was "
				"written (0x%02x)", i, what, p[i]);
			return;
		}
}

/* The atomic target holds what the atomics answered left, or that and
 * the next few requests taken (in order) whose answers the end of the
 * connection cut off; without RFC 7306 it never changes. */
static void check_atomic_memory(void)
{
	uint64_t now[ATOMIC_WORDS], sim[ATOMIC_WORDS];
	size_t pos = S.answered_to < S.fpdu_start ? S.fpdu_start : S.answered_to;
	unsigned long extra = 0;
	struct ofr f;
	struct areq a;
	int w;

	memcpy(now, rdata(RG_ATOMIC), sizeof(now));
	memcpy(sim, S.aw, sizeof(sim));
	for (;;) {
		bool found = false;

		if (!memcmp(now, sim, sizeof(now))) {
			st.atomics_unanswered += extra;
			return;
		}
		if (!S.x7306)
			break;
		while (!found && next_frame(&pos, &f))
			found = atomic_req_frame(&f, &a);
		if (!found || !atomic_takeable(&f, &a, &w))
			break;
		atomic_apply(&sim[w], &a);
		extra++;
	}
	for (w = 0; w < ATOMIC_WORDS && now[w] == S.aw[w]; w++)
		;
	failure("atomic target changed wrongly", "word %d of the atomic target holds "
		"0x%016llx; the atomics answered (%u) leave 0x%016llx, and no run of "
		"the Atomic Requests after them that had to be taken explains it "
		"(RFC 7306 %s)", w, (unsigned long long)now[w], S.aresp_msn,
		(unsigned long long)S.aw[w], S.x7306 ? "on" : "off");
}

static void check_regions(void)
{
	int r;

	for (r = 0; r < NREG; r++) {
		const uint8_t *d = rdata(r);
		char what[96];
		size_t i;

		snprintf(what, sizeof(what), "before %s", reg[r].name);
		check_guard(reg[r].arena, GUARD, what);
		snprintf(what, sizeof(what), "after %s", reg[r].name);
		check_guard(d + reg[r].len, GUARD, what);
		if (r == RG_ATOMIC) {
			check_atomic_memory();
			continue;
		}
		for (i = 0; i < reg[r].len; i++) {
			if (d[i] == fill_byte(r, i))
				continue;
			if (r == RG_RW || r == RG_WO) {
				if (write_explains(raddr(r) + i, d[i])) {
					st.write_bytes_placed++;
					continue;
				}
				failure("write not carried by a valid Write", "byte %zu of %s "
					"became 0x%02x, which no Write whose whole range lies "
					"inside it carried", i, reg[r].name, d[i]);
			} else {
				failure(r == RG_OTHER_PD ? "other PD's memory written" :
					"memory without remote write written",
					"byte %zu of %s changed (0x%02x -> 0x%02x)", i,
					reg[r].name, fill_byte(r, i), d[i]);
			}
			break;
		}
	}
}

/* The Immediate Data message with this MSN, if the peer sent one: NULL
 * when the receive completion (immediate imm, byte_len len) is what it
 * must be, else why not.  byte_len is the length of the RDMA Write
 * message before it (since the last Immediate Data; 0 while a Write's
 * last FPDU has not come), as dapl_tcp(7) says. */
static const char *imm_check(uint32_t msn, uint32_t imm, uint32_t len, bool *found)
{
	static char why[160];
	size_t pos = S.fpdu_start;
	uint32_t wlen = 0;
	bool open = false;
	struct ofr f;

	*found = false;
	while (next_frame(&pos, &f)) {
		uint32_t ctrl, op;

		if (f.avail < 2)
			continue;
		ctrl = get16(f.u);
		op = ctrl & RDMAP_OP_MASK;
		if ((ctrl & DDP_T) && op == RDMAP_WRITE && f.ul >= DDP_TAGGED_LEN &&
		    f.avail >= DDP_TAGGED_LEN) {
			uint32_t dl = f.ul - DDP_TAGGED_LEN, had = open ? wlen : 0;

			if (get32(f.u + 2) || dl) {
				wlen = dl > UINT32_MAX - had ? UINT32_MAX : had + dl;
				open = !(ctrl & DDP_L);
			}
			continue;
		}
		if ((ctrl & DDP_T) || (op != RDMAP_IMM && op != RDMAP_IMM_SE) ||
		    f.avail < DDP_UNTAGGED_LEN || get32(f.u + 6) != DDP_QN_SEND)
			continue;
		if (get32(f.u + 10) != msn) {
			wlen = 0;
			continue;
		}
		*found = true;
		if (f.ul != DDP_UNTAGGED_LEN + RDMAP_IMM_LEN || f.avail != f.ul ||
		    get32(f.u + 14) || !(ctrl & DDP_L))
			snprintf(why, sizeof(why), "its Immediate Data had to be refused "
				 "(ULPDU_Length %u, MO %u, L %d)", f.ul, get32(f.u + 14),
				 !!(ctrl & DDP_L));
		else if ((uint32_t)get64(f.u + DDP_UNTAGGED_LEN) != imm)
			snprintf(why, sizeof(why), "it carried immediate 0x%08x",
				 (uint32_t)get64(f.u + DDP_UNTAGGED_LEN));
		else if (len != (open ? 0 : wlen))
			snprintf(why, sizeof(why), "the Write before it was %u bytes",
				 open ? 0 : wlen);
		else
			return NULL;
		return why;
	}
	return "no Immediate Data has that MSN";
}

/* Is there a Send (any FPDU of it) with this MSN? */
static bool send_with_msn(uint32_t msn)
{
	size_t pos = S.fpdu_start;
	struct ofr f;

	while (next_frame(&pos, &f)) {
		uint32_t ctrl, op;

		if (f.avail < DDP_UNTAGGED_LEN)
			continue;
		ctrl = get16(f.u);
		op = ctrl & RDMAP_OP_MASK;
		if (!(ctrl & DDP_T) && op >= RDMAP_SEND && op <= RDMAP_SEND_SE_INV &&
		    get32(f.u + 6) == DDP_QN_SEND && get32(f.u + 10) == msn)
			return true;
	}
	return false;
}

static void check_recv_memory(void)
{
	int i, s, j;
	bool first_flushed = true;
	uint32_t placed_msgs = 0;

	/* guards around every slot */
	for (s = 0; s <= NSLOT; s++) {
		const uint8_t *gd = recv_arena + (size_t)s * (RSLOT + RGUARD);

		for (j = 0; j < RGUARD; j++)
			if (gd[j] != GUARD_BYTE(j)) {
				failure("write outside a receive", "guard %d of the receive "
					"arena was written", s);
				s = NSLOT + 1;
				break;
			}
	}
	/* slots of receives never posted, and beyond each segment */
	for (s = S.nrecv * 3; s < NSLOT; s++)
		for (j = 0; j < RSLOT; j++)
			if (slot_addr(s)[j] != RECV_FILL) {
				failure("write outside a receive", "slot %d, of no receive, "
					"was written", s);
				s = NSLOT;
				break;
			}
	/* receives in completion order: SUCCESS and LOCAL_LENGTH took MSN
	 * 1, 2, ...; the first flushed one may hold part of the next */
	for (j = 0; j < S.nrecv; j++) {
		struct recv *r = NULL;
		uint32_t msn, off = 0, limit;
		int k;

		for (i = 0; i < S.nrecv; i++)
			if (S.rv[i].order == j)
				r = &S.rv[i];
		if (!r)
			continue;
		msn = placed_msgs + 1;
		if (r->st == DAPL_TWC_SUCCESS || r->st == DAPL_TWC_LOCAL_LENGTH)
			placed_msgs++;
		limit = r->st == DAPL_TWC_SUCCESS ? r->byte_len : r->len;
		if (r->st == DAPL_TWC_FLUSHED && !first_flushed)
			limit = 0;
		if (r->st == DAPL_TWC_SUCCESS) {
			bool found;
			const char *why = imm_check(msn, r->imm, r->byte_len, &found);

			if (r->with_imm && why)
				failure("bad Immediate Data completion", "receive %d "
					"completed as RECV_RDMA_IMM (immediate 0x%08x, %u "
					"bytes) for message MSN %u: %s", (int)(r - S.rv),
					r->imm, r->byte_len, msn, why);
			else if (!r->with_imm && found && !send_with_msn(msn))
				failure("Immediate Data as a Send", "receive %d completed "
					"as RECV for message MSN %u, an Immediate Data",
					(int)(r - S.rv), msn);
			if (r->with_imm) {
				limit = 0;      /* it writes nothing */
				st.imm_delivered++;
			}
		}
		for (k = 0; k < r->nsge; k++) {
			uint32_t b;

			for (b = 0; b < r->seglen[k]; b++, off++) {
				uint8_t v = r->seg[k][b];
				bool ok;

				if (off >= limit)
					ok = v == RECV_FILL;
				else if (r->st == DAPL_TWC_SUCCESS)
					ok = send_explains(msn, off, v);
				else
					ok = v == RECV_FILL || send_explains(msn, off, v);
				if (!ok) {
					failure("receive holds bytes no Send carried", "receive "
						"%d (status %d, %u of %u bytes), byte %u is 0x%02x; "
						"its Send is MSN %u", (int)(r - S.rv), r->st,
						r->byte_len, r->len, off, v, msn);
					k = r->nsge;
					break;
				}
			}
		}
		if (r->st == DAPL_TWC_FLUSHED)
			first_flushed = false;
	}
	/* receives never taken (left in an SRQ) are untouched */
	for (i = 0; i < S.nrecv; i++) {
		struct recv *r = &S.rv[i];

		if (!r->discarded)
			continue;
		for (j = 0; j < r->nsge; j++)
			for (s = 0; s < (int)r->seglen[j]; s++)
				if (r->seg[j][s] != RECV_FILL) {
					failure("receive written but never completed", "receive %d "
						"was discarded from the SRQ with bytes written", i);
					return;
				}
	}
}

static void check_sink_memory(void)
{
	uint32_t off = 0;
	int i;

	check_guard(sink_arena, GUARD, "before the Read sink");
	check_guard(sink_seg(0) + SINK_SEG, GUARD, "between the Read sink segments");
	check_guard(sink_seg(1) + SINK_SEG, GUARD, "after the Read sink");
	check_guard(sink_seg(2) + SINK_SEG, GUARD, "after the atomic result");
	{
		/* the endpoint's atomic: its result holds what a valid Atomic
		 * Response to it carried, only then, and only 8 bytes */
		const uint8_t *res = sink_seg(2);
		bool ok = true;

		for (i = 8; i < SINK_SEG && ok; i++)
			ok = res[i] == SINK_FILL;
		if (ok && S.ep_atomic && S.ep_atomic_completions &&
		    S.ep_atomic_st == DAPL_TWC_SUCCESS)
			ok = S.ep_atomic_seen && aresp_explains(res);
		else if (ok)
			for (i = 0; i < 8 && ok; i++)
				ok = res[i] == SINK_FILL ||
				     (S.ep_atomic_seen && aresp_explains(res));
		if (!ok)
			failure("atomic result no Atomic Response carried", "the "
				"endpoint's atomic (status %d, %d completions) has result "
				"bytes %02x %02x %02x %02x %02x %02x %02x %02x",
				S.ep_atomic_st, S.ep_atomic_completions, res[0], res[1],
				res[2], res[3], res[4], res[5], res[6], res[7]);
	}
	for (i = 0; i < 2; i++) {
		uint32_t b, used = S.ep_read && i < S.ep_read_nsge ? S.ep_read_seglen[i] : 0;

		for (b = 0; b < SINK_SEG; b++) {
			uint8_t v = sink_seg(i)[b];
			bool ok;

			if (b >= used)
				ok = v == SINK_FILL;
			else if (S.ep_read_st == DAPL_TWC_SUCCESS && S.ep_read_completions)
				ok = S.ep_read_seen && resp_explains(S.ep_read_sink, off + b, v);
			else
				ok = v == SINK_FILL ||
				     (S.ep_read_seen && resp_explains(S.ep_read_sink, off + b, v));
			if (!ok) {
				failure("Read sink holds bytes no Read Response carried",
					"sink segment %d byte %u is 0x%02x", i, b, v);
				return;
			}
		}
		off += used;
	}
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static int base_fds;

static bool cond_fds(void)
{
	return count_fds() == base_fds;
}

static bool cond_terminal(void)
{
	return S.terminal != 0;
}

/* Destroys the endpoint and checks everything. */
static void teardown(void)
{
	int i;

	phase = "destroying the endpoint";
	if (S.ep) {
		int err;

		S.gone = S.ep;
		S.ep = NULL;
		err = ops->ep_destroy(S.gone);
		if (err)
			failure("ep_destroy failed", "ep_destroy: %d", err);
		/* its flushed completions are there; its events are gone */
		drive();
		drive();
	}
	if (S.srq) {
		int err = ops->srq_destroy(S.srq, srq_discarded, NULL);

		if (err)
			failure("srq_destroy failed", "srq_destroy: %d", err);
		S.srq = NULL;
	}
	if (S.conn) {
		/* a request that reached us but was never answered */
		ops->reject(S.conn, NULL, 0);
		S.conn = NULL;
	}
	phase = "checking";
	for (i = 0; i < S.nrecv; i++) {
		struct recv *r = &S.rv[i];

		if (r->completions + (r->discarded ? 1 : 0) != 1)
			failure("receive not completed exactly once", "receive %d of %d: %d "
				"completions%s", i, S.nrecv, r->completions,
				r->discarded ? ", discarded" : "");
		else if (r->completions) {
			if (r->st == DAPL_TWC_SUCCESS)
				st.recv_success++;
			else if (r->st == DAPL_TWC_LOCAL_LENGTH)
				st.recv_length++;
			else
				st.recv_flushed++;
		}
	}
	if (S.ep_send && S.ep_send_completions != 1)
		failure("send not completed exactly once", "the endpoint's Send: %d "
			"completions", S.ep_send_completions);
	if (S.ep_atomic && S.ep_atomic_completions != 1)
		failure("atomic not completed exactly once", "the endpoint's atomic: %d "
			"completions", S.ep_atomic_completions);
	if (S.ep_read && S.ep_read_completions != 1)
		failure("read not completed exactly once", "the endpoint's Read: %d "
			"completions", S.ep_read_completions);
	if (S.ep_send && S.ep_send_completions && S.ep_send_st == DAPL_TWC_SUCCESS)
		st.ep_sends_done++;
	if (S.ep_read && S.ep_read_completions && S.ep_read_st == DAPL_TWC_SUCCESS) {
		st.ep_reads_done++;
		if (!S.ep_read_seen || G.resp_done < S.ep_read_len)
			failure("read completed without its response", "the endpoint's "
				"Read of %u bytes succeeded after %u bytes of response",
				S.ep_read_len, G.resp_done);
	}
	check_regions();
	check_recv_memory();
	check_sink_memory();
	if (S.raw >= 0) {
		close(S.raw);
		S.raw = -1;
	}
	garb_close_all();
	/* the listener closes its side of the strangers as it reads them */
	phase = "counting fds";
	if (!wait_for(cond_fds, 2000)) {
		failure("fd leak", "%d fds open after the input, %d before it",
			count_fds(), base_fds);
		base_fds = count_fds();     /* told once; the run goes on */
	}
}

/* ---- one input ------------------------------------------------------------------- */

static void input_reset(uint64_t seed)
{
	int r, i;

	cur_seed = seed;
	rng = seed ? seed : 1;
	fill_salt = (uint8_t)rnd();
	{
		uint8_t *o = S.out, *in = S.in;

		memset(&S, 0, sizeof(S));
		S.out = o;
		S.in = in;
	}
	S.raw = -1;
	memset(&G, 0, sizeof(G));
	G.msn_send = G.msn_read = G.msn_term = 1;
	for (r = 0; r < NREG; r++) {
		for (i = 0; i < GUARD; i++) {
			reg[r].arena[i] = GUARD_BYTE(i);
			rdata(r)[reg[r].len + (size_t)i] = GUARD_BYTE(i);
		}
		for (i = 0; i < (int)reg[r].len; i++)
			rdata(r)[i] = fill_byte(r, (size_t)i);
	}
	memcpy(S.aw, rdata(RG_ATOMIC), sizeof(S.aw));
	memcpy(G.pred, S.aw, sizeof(G.pred));
	S.oracle_end = SIZE_MAX;
	for (i = 0; i <= NSLOT; i++) {
		uint8_t *gd = recv_arena + (size_t)i * (RSLOT + RGUARD);
		int j;

		for (j = 0; j < RGUARD; j++)
			gd[j] = GUARD_BYTE(j);
		if (i < NSLOT)
			memset(gd + RGUARD, RECV_FILL, RSLOT);
	}
	for (i = 0; i < 4; i++) {
		uint8_t *gd = sink_arena + (size_t)i * (SINK_SEG + GUARD);
		int j;

		for (j = 0; j < GUARD; j++)
			gd[j] = GUARD_BYTE(j);
		if (i < 3)
			memset(gd + GUARD, SINK_FILL, SINK_SEG);
	}
	rnd_bytes(send_src, sizeof(send_src));
}

static bool cond_request(void)
{
	return S.got_request;
}

static bool cond_reply(void)
{
	return S.reply_done || S.raw_eof;
}

static bool cond_established(void)
{
	return S.established || S.terminal;
}

static bool cond_ep_posts(void)
{
	return S.terminal || S.raw_eof ||
	       ((!S.ep_read || S.ep_read_seen) && (!S.ep_send || S.ep_send_msgs) &&
		(!S.ep_atomic || S.ep_atomic_seen || S.ep_read_seen));
	/* (with ORD 1 the atomic waits for the Read's response) */
}

/* The MPA request into the stream. */
static void build_request(enum hmode mode, enum ext_kind xk, size_t pdlen)
{
	uint8_t b[MPA_HDR_LEN + MPA_PD_MAX];
	size_t off = MPA_HDR_LEN;
	uint32_t bits;
	uint32_t ird = rndn(MPA_V2_LIMIT_MASK + 1), ord = rndn(MPA_V2_LIMIT_MASK + 1);

	S.mode = mode;
	S.xk = xk;
	S.ext = xk == X_ON;
	S.v2 = mode != H_V1 && mode != H_REV2_PLAIN;
	bits = mode == H_V1 ? 1 : mode == H_REV2_PLAIN ? 2 : (MPA_FLAG_ENHANCED | 2);
	if (S.v2) {
		switch (mode) {
		case H_WRITE_RTR:
			ird |= MPA_V2_P2P | (chance(20) ? MPA_V2_SEND_RTR : 0);
			ord |= MPA_V2_WRITE_RTR | (chance(30) ? MPA_V2_READ_RTR : 0);
			break;
		case H_READ_RTR:
			ird |= MPA_V2_P2P;
			ord |= MPA_V2_READ_RTR;
			break;
		default:
			/* peer-to-peer without an RTR we could agree on */
			ird |= chance(50) ? MPA_V2_P2P | MPA_V2_SEND_RTR : 0;
			break;
		}
		put16(b + off, ird);
		put16(b + off + 2, ord);
		off += MPA_V2_LEN;
	}
	S.req_pdata_len = pdlen;
	rnd_bytes(b + off, pdlen);
	memcpy(S.req_pdata, b + off, pdlen);
	off += pdlen;
	if (xk != X_NONE) {
		put32(b + off, xk == X_BAD_MAGIC ? TCP_EXT_MAGIC ^ (1u << rndn(32))
						 : TCP_EXT_MAGIC);
		put16(b + off + 4, TCP_EXT_VERSION);
		put16(b + off + 6, xk == X_NO_FLAG ? 0xfffe & rnd() :
				   TCP_EXT_F_ACKS | (S.x7306 ? TCP_EXT_F_RFC7306 : 0));
		off += TCP_EXT_LEN;
		if (xk != X_ON) {
			/* then it is the consumer's private data */
			memcpy(S.req_pdata + pdlen, b + off - TCP_EXT_LEN, TCP_EXT_LEN);
			S.req_pdata_len += TCP_EXT_LEN;
		}
	}
	mpa_put_hdr(b, true, bits, (uint32_t)(off - MPA_HDR_LEN));
	out_put(b, off);
	S.fpdu_start = S.out_len;
}

/* The RTR (or, when bad_rtr, something else first). */
static void build_rtr(bool bad_rtr)
{
	uint8_t f[FRAME_MAX];
	size_t n = 0;
	bool bad;

	if (bad_rtr) {
		do
			n = gen_frame(f, false, &bad);
		while (n >= 4 && !(get16(f + 2) & DDP_T) &&
		       (get16(f + 2) & RDMAP_OP_MASK) == RDMAP_READ_REQ);
		out_put(f, n);
		S.frames++;
		return;
	}
	if (S.mode == H_WRITE_RTR) {
		fpdu_put_tagged(f, 0, true, RDMAP_WRITE, 0, 0);
		n = frame_end(f, DDP_TAGGED_LEN);
	} else if (S.mode == H_READ_RTR) {
		S.rtr_sink = 0x52000000u | rndn(1u << 20);
		n = b_read_req(f, S.rtr_sink, 0, 0, 0, 0);
	}
	if (n) {
		out_put(f, n);
		S.frames++;
	}
}

/* Posts the endpoint's own Send (before), Read and atomic, once it is
 * connected; without RFC 7306 the atomic must be refused. */
static void ep_posts(bool want_send, bool want_read, bool want_atomic)
{
	struct dapl_tsge sge[2];
	int err;

	if (want_send) {
		S.ep_send_len = rndn(sizeof(send_src) + 1);
		sge[0].addr = (uint64_t)(uintptr_t)send_src;
		sge[0].length = S.ep_send_len;
		sge[0].lkey = local_lkey;
		sge[0].mr = local_mr;
		err = ops->post_send(S.ep, sge, 1, CTX_SEND, DAPL_TPOST_SIGNALED);
		if (err == 0)
			S.ep_send = true;
		else if (!S.terminal)
			failure("post_send failed", "post_send on a connected ep: %d", err);
	}
	if (want_read) {
		int i;

		S.ep_read_nsge = 1 + (int)rndn(2);
		S.ep_read_len = 0;
		for (i = 0; i < S.ep_read_nsge; i++) {
			S.ep_read_seglen[i] = rndn(SINK_SEG + 1);
			S.ep_read_len += S.ep_read_seglen[i];
			sge[i].addr = (uint64_t)(uintptr_t)sink_seg(i);
			sge[i].length = S.ep_read_seglen[i];
			sge[i].lkey = local_lkey;
			sge[i].mr = local_mr;
		}
		S.ep_read_rkey = rnd();
		S.ep_read_raddr = (uint64_t)rnd() << 20;
		err = ops->post_rdma_read(S.ep, sge, S.ep_read_nsge, S.ep_read_raddr,
					  S.ep_read_rkey, CTX_READ, DAPL_TPOST_SIGNALED);
		if (err == 0)
			S.ep_read = true;
		else if (!S.terminal)
			failure("post_rdma_read failed", "post_rdma_read on a connected ep: %d",
				err);
	}
	if (want_atomic) {
		bool add = chance(50);

		sge[0].addr = (uint64_t)(uintptr_t)sink_seg(2);
		sge[0].length = 8;
		sge[0].lkey = local_lkey;
		sge[0].mr = local_mr;
		S.ep_atomic_aop = add ? RDMAP_AOP_FETCH_ADD : RDMAP_AOP_CMP_SWAP;
		S.ep_atomic_rkey = rnd();
		S.ep_atomic_raddr = (uint64_t)rnd() << 20 | 8 * rndn(64);
		S.ep_atomic_a = operand();
		S.ep_atomic_b = operand();
		err = ops->post_atomic(S.ep, add ? DAPL_TATOMIC_FETCH_ADD :
				       DAPL_TATOMIC_CMP_SWAP, sge, S.ep_atomic_raddr,
				       S.ep_atomic_rkey, S.ep_atomic_a, S.ep_atomic_b,
				       CTX_ATOMIC, DAPL_TPOST_SIGNALED);
		if (err == 0 && S.x7306)
			S.ep_atomic = true;
		else if (err == 0)
			failure("atomic posted without RFC 7306", "post_atomic on a "
				"connection that did not negotiate RFC 7306 returned 0");
		else if (S.x7306 && !S.terminal)
			failure("post_atomic failed", "post_atomic on a connected ep "
				"with RFC 7306: %d", err);
		else if (!S.x7306 && err != -EOPNOTSUPP)
			failure("post_atomic without RFC 7306", "post_atomic returned %d, "
				"not -EOPNOTSUPP", err);
	}
}

/* Connects, accepts, and gets the RTR through.  false: the handshake did
 * not come through (a failure was reported). */
static void gen_sequence(bool clean);

static bool handshake(enum hmode mode, enum ext_kind xk, bool bad_rtr,
		      bool want_send, bool want_read, bool eager, bool clean)
{
	int err;
	size_t cut;

	phase = "connecting";
	S.raw = raw_connect(&S.raw_port);
	build_request(mode, xk, chance(10) ? rndn(MPA_PD_MAX - MPA_V2_LEN - TCP_EXT_LEN + 1)
					   : rndn(64));
	cut = chance(30) ? 1 + rndn((uint32_t)S.out_len - 1) : S.out_len;
	if (eager) {
		st.eager++;
		build_rtr(bad_rtr);
		gen_sequence(clean);
	}
	/* the request, maybe in two pieces (and what is eager behind it) */
	while (S.sent < S.out_len) {
		size_t stop = S.sent < cut ? cut : S.out_len;
		ssize_t n = send(S.raw, S.out + S.sent, stop - S.sent, MSG_NOSIGNAL);

		if (n <= 0 && S.sent >= S.fpdu_start)
			break;      /* the socket is full of eager FPDUs */
		if (n <= 0)
			DIE("sending the request: %s", strerror(errno));
		S.sent += (size_t)n;
		drive();
	}
	phase = "waiting for CONNECT_REQUEST";
	if (!wait_for(cond_request, 3000)) {
		failure("valid request not reported", "no CONNECT_REQUEST for a valid "
			"request (mode %d, acks %d) in 3 s", mode, xk);
		return false;
	}
	make_ep();
	S.acc_pdata_len = rndn(chance(10) ? TCP_PDATA_MAX + 1 : 32);
	rnd_bytes(S.acc_pdata, S.acc_pdata_len);
	phase = "accepting";
	err = ops->accept(S.conn, S.ep, S.acc_pdata, S.acc_pdata_len, 1 + rndn(8),
			  1 + rndn(8));
	S.conn = NULL;
	if (err) {
		failure("accept failed", "accept: %d", err);
		return false;
	}
	phase = "waiting for the MPA reply";
	if (!wait_for(cond_reply, 3000) || !S.reply_done) {
		failure("no MPA reply", "the accepted request got no reply (eof %d)",
			S.raw_eof);
		return false;
	}
	if (eager)
		return true;
	build_rtr(bad_rtr);
	if (S.out_len > S.fpdu_start) {
		phase = "sending the RTR";
		send_upto(S.out_len);
	}
	if (bad_rtr)
		return true;
	phase = "waiting for ESTABLISHED";
	if (!wait_for(cond_established, 3000) || !S.established) {
		failure("no ESTABLISHED", "after the RTR: established %d, terminal %s "
			"(status %d)", S.established,
			S.terminal ? ev_name(S.terminal_type) : "none", S.terminal_status);
		return false;
	}
	if (S.terminal)
		return true;
	ep_posts(want_send, want_read, chance(S.x7306 ? 50 : 10));
	if (mode == H_WRITE_RTR || mode == H_READ_RTR) {
		phase = "waiting for the endpoint's Send and Read";
		if (!wait_for(cond_ep_posts, 3000))
			failure("endpoint's requests not sent", "the endpoint's Send (%d) and "
				"Read (%d) did not reach the peer in 3 s", S.ep_send,
				S.ep_read);
	}
	return true;
}

/* The peer's FPDUs after the RTR: the generated sequence, with cuts. */
/* A long run of tiny messages on one connection, which no other input
 * makes: a pattern of 1 to 4 small frames (empty or 1-3 byte Sends, bare
 * acks, 1-3 byte Writes to fixed places of the writable region) repeated
 * from ten to tens of thousands of times, one repetition now and then
 * mutated, receives posted along the way.  A quarter of the runs end
 * within a few Sends of TCP_UNEXPECTED_MSGS (the Sends the endpoint holds
 * for receives at most: past it, a Terminate), a quarter fill the input. */
static void gen_flood(bool clean)
{
	enum { PAT_MAX = 4, TINY_MAX = 2 + DDP_UNTAGGED_LEN + 3 + 3 + 4 };
	static uint8_t f[FRAME_MAX];
	uint8_t kind[PAT_MAX], len[PAT_MAX];
	uint16_t at[PAT_MAX];
	uint32_t npat = 1 + rndn(PAT_MAX), sends = 0, reps, fit, r, i, bad_at;
	uint32_t want;

	for (i = 0; i < npat; i++) {
		uint32_t k = rndn(100);

		kind[i] = k < 70 ? F_SEND : k < 85 ? F_ACK : F_WRITE;
		len[i] = (uint8_t)(chance(50) ? 0 : rndn(4));
		at[i] = (uint16_t)rndn(4096);
		sends += kind[i] == F_SEND;
	}
	if (!sends) {
		kind[0] = F_SEND;
		sends = 1;
	}
	fit = (uint32_t)((OUT_MAX - S.out_len - 2 * FRAME_MAX) / (npat * TINY_MAX));
	switch (rndn(4)) {
	case 0: reps = 10 + rndn(2000); break;
	case 1: reps = 2000 + rndn(20000); break;
	case 2:
		want = TCP_UNEXPECTED_MSGS - 8 + rndn(17);
		reps = (want + sends - 1) / sends;
		break;
	default: reps = fit; break;
	}
	if (reps > fit)
		reps = fit;
	bad_at = !clean && chance(20) ? rndn(reps + 1) : UINT32_MAX;
	st.floods++;
	for (r = 0; r < reps; r++) {
		for (i = 0; i < npat; i++) {
			size_t n, start = S.out_len;

			if (kind[i] == F_SEND) {
				n = b_send(f, len[i], true, RDMAP_SEND + rndn(4));
			} else if (kind[i] == F_ACK) {
				fpdu_put_tagged(f, 0, true, RDMAP_WRITE, 0, 0);
				n = frame_end(f, DDP_TAGGED_LEN);
			} else {
				n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + at[i],
					    len[i], true);
			}
			if (r == bad_at && i == 0) {
				n = mutate(f, n, sizeof(f));
				st.mutated++;
			}
			out_put(f, n);
			S.frames++;
			st.frames++;
			st.flood_frames++;
			/* about 3 of each along the run */
			if (rndn(reps * npat) < 3)
				add_cut(start + 1 + rndn((uint32_t)n), CUT_PAUSE);
			if (rndn(reps * npat) < 3)
				add_cut(S.out_len, CUT_POST_RECV);
		}
	}
}

static void gen_sequence(bool clean)
{
	uint8_t f[FRAME_MAX];
	int i, nframes, flood_at;

	memset(f, 0, sizeof(f));
	phase = "generating";
	nframes = 1 + (int)rndn(chance(20) ? 60 : 14);
	flood_at = chance(3) ? (int)rndn((uint32_t)nframes) : -1;
	for (i = 0; i < nframes && S.out_len + FRAME_MAX < OUT_MAX; i++) {
		bool bad;
		size_t n, start = S.out_len;

		if (i == flood_at) {
			gen_flood(clean);
			continue;
		}

		if (!clean && chance(1)) {
			/* a burst of Read Requests in one piece: more than the
			 * endpoint can have in flight (IRD) */
			int k, burst = 100 + (int)rndn(100);

			st.read_bursts++;
			for (k = 0; k < burst; k++) {
				n = b_read_req(f, 0x53000000u + G.sinks++, 0, rndn(64),
					       reg[RG_RO].stag, raddr(RG_RO) + rndn(1024));
				out_put(f, n);
				S.frames++;
			}
			continue;
		}
		n = gen_frame(f, clean, &bad);
		if (!clean && !bad && chance(12)) {
			n = mutate(f, n, sizeof(f));
			bad = true;
			st.mutated++;
		}
		out_put(f, n);
		S.frames++;
		st.frames++;
		if (chance(10))
			add_cut(start + 1 + rndn((uint32_t)n), CUT_PAUSE);
		if (n > 48 + TCP_DIRECT_MIN + 8 && chance(60)) {
			/* header first: the data is read straight into place */
			add_cut(start + 2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN, CUT_PAUSE);
			st.placed_direct++;
		}
		if (chance(25))
			add_cut(S.out_len, CUT_PAUSE);
		if (chance(5))
			add_cut(S.out_len, CUT_POST_RECV);
		if (chance(3))
			add_cut(S.out_len, CUT_ARM);
	}
	if (!S.x7306) {
		/* the oracles stop at the first RFC 7306 opcode: it ends the
		 * connection, and neither it nor anything after it may act */
		size_t pos = S.fpdu_start, at = pos;
		struct ofr fr;

		while (next_frame(&pos, &fr)) {
			uint32_t op;

			if (fr.avail >= 2 && !(get16(fr.u) & DDP_T)) {
				op = get16(fr.u) & RDMAP_OP_MASK;
				if (op >= RDMAP_IMM && op <= RDMAP_ATOMIC_RESP) {
					S.oracle_end = at;
					break;
				}
			}
			at = pos;
		}
	}
}

/* How an input ends. */
enum end_kind { E_CLOSE, E_SHUT, E_DISCONNECT, E_DESTROY, E_DISCONNECT_DESTROY };

static void finish(enum end_kind e)
{
	phase = "ending";
	switch (e) {
	case E_CLOSE:
		close(S.raw);
		S.raw = -1;
		break;
	case E_SHUT:
		shutdown(S.raw, SHUT_WR);
		S.shut_wr = true;
		break;
	case E_DISCONNECT_DESTROY:
		/* its DISCONNECTED is queued, and must go with it */
		(void)ops->disconnect(S.ep);
		return;
	case E_DISCONNECT:
		if (!S.terminal) {
			int err = ops->disconnect(S.ep);

			if (err && err != -ENOTCONN)
				failure("disconnect failed", "disconnect: %d", err);
		}
		break;
	default:
		return;
	}
	/* the endpoint must notice the end, unless it waits for a receive
	 * with the peer's data still in its socket (as RDMA would) */
	if (!wait_for(cond_terminal, 3000) && !S.ep->stalled)
		failure("hang: no end after the peer left", "no terminal event 3 s "
			"after the end (%d), ESTABLISHED %d", e, S.established);
	if (S.terminal && e == E_DISCONNECT && S.terminal_type != DAPL_TCM_DISCONNECTED &&
	    S.terminal_type != DAPL_TCM_CONN_ERROR)
		failure("bad terminal event", "%s after disconnect",
			ev_name(S.terminal_type));
	drive();
}

static void fuzz_input(long idx, uint64_t seed)
{
	enum hmode mode;
	enum ext_kind xk;
	bool clean, bad_rtr, eager;
	int i, ngarb;

	input_reset(seed);
	st.inputs++;
	/* strangers before the real request, and during it */
	ngarb = chance(35) ? 1 + (int)rndn(3) : 0;
	for (i = 0; i < ngarb; i++)
		garb_open((enum garb_kind)rndn(NGARB));
	drive();
	{
		uint32_t m = rndn(100);

		mode = m < 70 ? H_WRITE_RTR : m < 80 ? H_READ_RTR : m < 88 ? H_NO_RTR :
		       m < 95 ? H_V1 : H_REV2_PLAIN;
	}
	{
		uint32_t x = rndn(100);

		xk = x < 55 ? X_ON : x < 85 ? X_NONE : x < 93 ? X_BAD_MAGIC : X_NO_FLAG;
	}
	/* RFC 7306 offered in some inputs (then its frames are often made);
	 * its frames now and then where it was not (they end the connection) */
	S.x7306 = xk == X_ON && chance(50);
	st.x7306_inputs += S.x7306;
	if (S.x7306)
		G.ext_pct = chance(80) ? 10 + rndn(40) : 0;
	else
		G.ext_pct = chance(15) ? 1 + rndn(10) : 0;
	clean = chance(20);
	bad_rtr = !clean && (mode == H_WRITE_RTR || mode == H_READ_RTR) && chance(5);
	/* now and then the RTR and the FPDUs come right behind the request,
	 * before the reply (the endpoint finds them in its socket) */
	eager = chance(4);
	if (!handshake(mode, xk, bad_rtr, chance(40), chance(50), eager, clean))
		goto out;
	if (chance(20))
		garb_open((enum garb_kind)rndn(NGARB));

	if (!eager)
		gen_sequence(clean);
	phase = "sending the sequence";
	send_upto(S.out_len);
	/* Sends held until receives come */
	if (chance(15))
		for (i = 0; i < 3; i++) {
			post_one_recv();
			drive();
		}
	phase = "waiting for the strangers' answers";
	wait_for(garb_settled, 1000);
	{
		uint32_t e = rndn(100);
		enum end_kind ek = e < 40 ? E_CLOSE : e < 65 ? E_SHUT : e < 80 ?
				   E_DISCONNECT : e < 90 ? E_DESTROY : E_DISCONNECT_DESTROY;

		finish(ek);
		/* a clean sequence with an RFC 7306 frame the endpoint did not
		 * agree to, read to its end: that frame got a Terminate */
		if (clean && !S.x7306 && S.oracle_end < S.out_len && ek == E_SHUT &&
		    !S.raw_dead && S.ep && !S.ep->stalled && !S.term_seen)
			failure("RFC 7306 frame taken without RFC 7306", "a clean sequence "
				"with an RFC 7306 opcode at 0x%zx, on a connection that did "
				"not negotiate it, read to its end without a Terminate",
				S.oracle_end);
	}
out:
	teardown();
	if (verbose)
		printf("input %ld seed 0x%016llx: mode %d acks %d%s, %u frames, %zu bytes, "
		       "%s%s\n", idx, (unsigned long long)seed, mode, xk,
		       S.x7306 ? " RFC 7306" : "", S.frames, S.out_len,
		       S.terminal ? ev_name(S.terminal_type) : "open",
		       S.term_seen ? " after a Terminate" : "");
}

/* ---- the fully valid exchange ------------------------------------------------------ */

static bool cond_valid_done(void)
{
	int i;

	if (S.terminal || S.raw_eof)
		return true;
	if (S.rv[0].completions != 1 || S.rv[1].completions != 1)
		return false;
	if (S.ep_send_completions != 1 || S.ep_read_completions != 1)
		return false;
	if (S.ext && S.ep_placed != (S.x7306 ? 6u : 4u))
		return false;
	if (S.x7306 && (S.rv[2].completions != 1 || S.aresp_msn != 2))
		return false;
	for (i = 0; i < 2; i++) {
		int j;

		for (j = 0; j < S.nresp; j++)
			if (S.resp[j].sink == 0x5a5a0001u + (uint32_t)i)
				break;
		if (j == S.nresp || !S.resp[j].last)
			return false;
	}
	return true;
}

static void valid_exchange(long idx, uint64_t seed, bool ext, bool x7306)
{
	uint8_t f[FRAME_MAX], want[16384];
	struct dapl_tsge sge[3];
	size_t n;
	uint32_t i;
	int err;

	input_reset(seed);
	st.valid++;
	S.x7306 = ext && x7306;
	phase = "valid exchange: connecting";
	S.raw = raw_connect(&S.raw_port);
	build_request(H_WRITE_RTR, ext ? X_ON : X_NONE, 12);
	if (send(S.raw, S.out, S.out_len, MSG_NOSIGNAL) != (ssize_t)S.out_len)
		DIE("sending a request: %s", strerror(errno));
	S.sent = S.out_len;
	if (!wait_for(cond_request, 3000)) {
		failure("valid request not reported", "valid exchange: no CONNECT_REQUEST");
		goto out;
	}
	{
		struct dapl_tep_attr a;

		memset(&a, 0, sizeof(a));
		a.max_send_wr = 4;
		a.max_recv_wr = NRECV;
		a.max_send_sge = 2;
		a.max_recv_sge = 3;
		a.owner = S.owner = 0xe8000000ull + (uint64_t)idx;
		S.scq = S.rcq = cq1;
		err = ops->ep_create(pd_a, cq1, cq1, NULL, &a, &S.ep);
		if (err)
			DIE("ep_create: %d", err);
	}
	/* receive 0: 150 bytes in two segments; 1: 8000; 2: never used, but
	 * by the write with immediate with RFC 7306 */
	{
		static const uint32_t seglen[3][2] = { { 100, 50 }, { 8000, 0 }, { 64, 0 } };
		int k;

		for (k = 0; k < 3; k++) {
			struct recv *r = &S.rv[k];

			r->nsge = seglen[k][1] ? 2 : 1;
			r->order = -1;
			for (i = 0; i < (uint32_t)r->nsge; i++) {
				r->seg[i] = slot_addr(k * 3 + (int)i);
				r->seglen[i] = seglen[k][i];
				r->len += seglen[k][i];
				sge[i].addr = (uint64_t)(uintptr_t)r->seg[i];
				sge[i].length = seglen[k][i];
				sge[i].lkey = 0;
				sge[i].mr = NULL;
			}
			if (ops->post_recv(S.ep, sge, r->nsge, CTX_RECV + (uint64_t)k))
				DIE("post_recv");
			S.nrecv++;
		}
	}
	S.acc_pdata_len = 5;
	memcpy(S.acc_pdata, "valid", 5);
	phase = "valid exchange: accepting";
	err = ops->accept(S.conn, S.ep, S.acc_pdata, S.acc_pdata_len, 4, 4);
	S.conn = NULL;
	if (err || !wait_for(cond_reply, 3000) || !S.reply_done) {
		failure("valid exchange failed", "accept %d, reply %d", err, S.reply_done);
		goto out;
	}
	build_rtr(false);
	send_upto(S.out_len);
	phase = "valid exchange: waiting for ESTABLISHED";
	if (!wait_for(cond_established, 3000) || !S.established || S.terminal) {
		failure("valid exchange failed", "no ESTABLISHED after the RTR");
		goto out;
	}
	/* the endpoint's Send of 200 bytes and Read of 700 in two segments */
	S.ep_send_len = 200;
	sge[0].addr = (uint64_t)(uintptr_t)send_src;
	sge[0].length = 200;
	sge[0].lkey = local_lkey;
	sge[0].mr = local_mr;
	S.ep_send = ops->post_send(S.ep, sge, 1, CTX_SEND, DAPL_TPOST_SIGNALED) == 0;
	S.ep_read_nsge = 2;
	S.ep_read_seglen[0] = 500;
	S.ep_read_seglen[1] = 200;
	S.ep_read_len = 700;
	for (i = 0; i < 2; i++) {
		sge[i].addr = (uint64_t)(uintptr_t)sink_seg((int)i);
		sge[i].length = S.ep_read_seglen[i];
		sge[i].lkey = local_lkey;
		sge[i].mr = local_mr;
	}
	S.ep_read_rkey = 0x12345678;
	S.ep_read_raddr = 0x100000;
	S.ep_read = ops->post_rdma_read(S.ep, sge, 2, S.ep_read_raddr, S.ep_read_rkey,
					CTX_READ, DAPL_TPOST_SIGNALED) == 0;
	if (!S.ep_send || !S.ep_read || !wait_for(cond_ep_posts, 3000) ||
	    !S.ep_read_seen || !S.ep_send_msgs) {
		failure("valid exchange failed", "the endpoint's Send and Read did not "
			"come (posted %d %d)", S.ep_send, S.ep_read);
		goto out;
	}

	/* what R must hold at the end */
	for (i = 0; i < reg[RG_RW].len; i++)
		want[i] = fill_byte(RG_RW, i);
	/* a Send of 120 bytes in two FPDUs into receive 0 */
	n = b_send(f, 60, false, RDMAP_SEND);
	out_put(f, n);
	add_cut(S.out_len, CUT_PAUSE);
	n = b_send(f, 60, true, RDMAP_SEND_SE);
	out_put(f, n);
	/* a Write of 500 bytes at 100 in two FPDUs */
	n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + 100, 300, false);
	memcpy(want + 100, f + 2 + DDP_TAGGED_LEN, 300);
	out_put(f, n);
	n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + 400, 200, true);
	memcpy(want + 400, f + 2 + DDP_TAGGED_LEN, 200);
	out_put(f, n);
	/* a Read of the read-only registration */
	n = b_read_req(f, 0x5a5a0001u, 0x777, 1000, reg[RG_RO].stag, raddr(RG_RO) + 10);
	out_put(f, n);
	/* a Write of 8000 at 4096 read straight into place */
	n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + 4096, 8000, true);
	memcpy(want + 4096, f + 2 + DDP_TAGGED_LEN, 8000);
	out_put(f, n);
	add_cut(S.out_len - n + 2 + DDP_TAGGED_LEN, CUT_PAUSE);
	/* a Send of 6000 bytes into receive 1, read straight into place */
	n = b_send(f, 6000, true, RDMAP_SEND);
	out_put(f, n);
	add_cut(S.out_len - n + 2 + DDP_UNTAGGED_LEN, CUT_PAUSE);
	/* the response to the endpoint's Read, in two pieces */
	fpdu_put_tagged(f, 0, false, RDMAP_READ_RESP, S.ep_read_sink, 0);
	rnd_bytes(f + 2 + DDP_TAGGED_LEN, 400);
	out_put(f, frame_end(f, DDP_TAGGED_LEN + 400));
	fpdu_put_tagged(f, 0, true, RDMAP_READ_RESP, S.ep_read_sink, 400);
	rnd_bytes(f + 2 + DDP_TAGGED_LEN, 300);
	out_put(f, frame_end(f, DDP_TAGGED_LEN + 300));
	G.resp_done = 700;
	/* a Read of the target after the Writes */
	n = b_read_req(f, 0x5a5a0002u, 0, 600, reg[RG_RW].stag, raddr(RG_RW) + 50);
	out_put(f, n);
	if (S.x7306) {
		/* a write with immediate (300 bytes at 9000) into receive 2,
		 * then a FetchAdd of 5 and a CmpSwap that matches on word 0 */
		struct areq a = { RDMAP_AOP_FETCH_ADD, 0xa7a70001u, reg[RG_ATOMIC].stag,
				  raddr(RG_ATOMIC), 5, 0, 0, 0 };

		n = b_write(f, reg[RG_RW].stag, raddr(RG_RW) + 9000, 300, true);
		memcpy(want + 9000, f + 2 + DDP_TAGGED_LEN, 300);
		out_put(f, n);
		out_put(f, b_imm(f, false, 0x5555aaaafeedc0deull));
		out_put(f, b_atomic(f, &a, 0));
		a.aop = RDMAP_AOP_CMP_SWAP;
		a.id++;
		a.cmp = S.aw[0] + 5;
		a.data = 0x1122334455667788ull;
		a.dmask = a.cmask = ~(uint64_t)0;
		out_put(f, b_atomic(f, &a, 0));
	}
	if (ext) {
		fpdu_put_tagged(f, 0, true, RDMAP_WRITE, 0, 0);
		out_put(f, frame_end(f, DDP_TAGGED_LEN));
	}
	S.frames = S.x7306 ? 16 : 12;
	phase = "valid exchange: sending";
	send_upto(S.out_len);
	phase = "valid exchange: waiting for it all";
	if (!wait_for(cond_valid_done, 5000) || S.terminal || S.raw_eof) {
		failure("valid exchange failed", "receives %d/%d (status %d %d), Send %d, "
			"Read %d (status %d), placed count %u of 4, responses %d, terminal %s, "
			"Terminate 0x%08x", S.rv[0].completions, S.rv[1].completions,
			S.rv[0].st, S.rv[1].st, S.ep_send_completions, S.ep_read_completions,
			S.ep_read_st, S.ep_placed, S.nresp,
			S.terminal ? ev_name(S.terminal_type) : "none",
			S.term_seen ? S.term_ctrl : 0);
		goto out;
	}
	if (S.rv[0].st != DAPL_TWC_SUCCESS || S.rv[0].byte_len != 120 ||
	    S.rv[1].st != DAPL_TWC_SUCCESS || S.rv[1].byte_len != 6000 ||
	    S.ep_send_st != DAPL_TWC_SUCCESS || S.ep_read_st != DAPL_TWC_SUCCESS)
		failure("valid exchange failed", "receives %d (%u bytes) and %d (%u bytes), "
			"Send %d, Read %d", S.rv[0].st, S.rv[0].byte_len, S.rv[1].st,
			S.rv[1].byte_len, S.ep_send_st, S.ep_read_st);
	if (memcmp(rdata(RG_RW), want, reg[RG_RW].len) != 0)
		failure("valid exchange failed", "the Writes did not place exactly their "
			"bytes in the target region");
	if (S.resp_bytes != 1600)
		failure("valid exchange failed", "%u bytes of Read Responses, not 1600",
			S.resp_bytes);
	if (S.x7306) {
		uint64_t w0, w1;

		memcpy(&w0, rdata(RG_ATOMIC), 8);
		memcpy(&w1, rdata(RG_ATOMIC) + 8, 8);
		if (!S.rv[2].with_imm || S.rv[2].st != DAPL_TWC_SUCCESS ||
		    S.rv[2].imm != 0xfeedc0deu || S.rv[2].byte_len != 300)
			failure("valid exchange failed", "the write with immediate "
				"completed receive 2 with opcode %s, status %d, immediate "
				"0x%08x, %u bytes (expected RECV_RDMA_IMM, 0xfeedc0de, 300)",
				S.rv[2].with_imm ? "RECV_RDMA_IMM" : "RECV", S.rv[2].st,
				S.rv[2].imm, S.rv[2].byte_len);
		if (w0 != 0x1122334455667788ull || w1 != S.aw[1] ||
		    S.aw[0] != 0x1122334455667788ull)
			failure("valid exchange failed", "after a FetchAdd and a matching "
				"CmpSwap word 0 holds 0x%016llx, not 0x1122334455667788",
				(unsigned long long)w0);
	}
	phase = "valid exchange: closing";
	finish(E_SHUT);
	if (S.terminal_type != DAPL_TCM_DISCONNECTED || S.terminal_status != 0 ||
	    S.term_seen)
		failure("valid exchange failed", "the peer's clean close ended in %s "
			"(status %d)%s", ev_name(S.terminal_type), S.terminal_status,
			S.term_seen ? " with a Terminate" : "");
out:
	teardown();
	if (!S.x7306 && S.nrecv == 3 && S.rv[2].completions == 1 &&
	    S.rv[2].st != DAPL_TWC_FLUSHED)
		failure("valid exchange failed", "the unused receive completed %d",
			S.rv[2].st);
}

/* ---- directed: Sends held for receives not posted stay bounded -------------------- */

static bool over_bound(void)
{
	return S.ep->unexp_bytes > TCP_UNEXPECTED_MAX + 2u * TCP_FPDU_DATA;
}

static bool cond_stalled_or_writable(void)
{
	struct pollfd p = { .fd = S.raw, .events = POLLOUT };

	return S.terminal || S.ep->stalled || poll(&p, 1, 0) > 0;
}

/* With no receive posted and one small Send held, a second Send keeps
 * coming in FPDUs that never end it: what the endpoint holds must stop
 * near TCP_UNEXPECTED_MAX (it stops reading and waits for a receive). */
static void unexpected_bound(long idx, uint64_t seed)
{
	uint8_t *f = malloc(2 + DDP_UNTAGGED_LEN + TCP_FPDU_DATA + 8);
	uint64_t pushed = 0, limit = TCP_UNEXPECTED_MAX + (2u << 20);
	struct dapl_tep_attr a;
	size_t n, off = 0;

	if (!f)
		DIE("malloc");
	input_reset(seed);
	cur_input = idx;
	phase = "unexpected bound: connecting";
	S.raw = raw_connect(&S.raw_port);
	build_request(H_WRITE_RTR, X_NONE, 0);
	if (send(S.raw, S.out, S.out_len, MSG_NOSIGNAL) != (ssize_t)S.out_len)
		DIE("sending a request: %s", strerror(errno));
	S.sent = S.out_len;
	if (!wait_for(cond_request, 3000))
		DIE("no CONNECT_REQUEST");
	memset(&a, 0, sizeof(a));
	a.max_send_wr = 4;
	a.max_recv_wr = 4;
	a.max_send_sge = 1;
	a.max_recv_sge = 1;
	a.owner = S.owner = 0xe7000000ull;
	if (ops->ep_create(pd_a, cq1, cq1, NULL, &a, &S.ep))
		DIE("ep_create");
	S.scq = S.rcq = cq1;
	if (ops->accept(S.conn, S.ep, NULL, 0, 4, 4))   /* no receive posted */
		DIE("accept");
	S.conn = NULL;
	if (!wait_for(cond_reply, 3000) || !S.reply_done)
		DIE("no reply");
	build_rtr(false);
	/* one small Send, held */
	out_put(f, b_send(f, 100, true, RDMAP_SEND));
	send_upto(S.out_len);
	if (!wait_for(cond_established, 3000) || !S.established || S.terminal)
		DIE("no ESTABLISHED");
	/* then FPDUs of one Send that never ends (not kept in S.out: MiBs) */
	phase = "unexpected bound: sending";
	n = b_send(f, TCP_FPDU_DATA, false, RDMAP_SEND);
	while (pushed < limit && !S.terminal && !S.ep->stalled) {
		ssize_t k = send(S.raw, f + off, n - off, MSG_NOSIGNAL | MSG_DONTWAIT);

		if (k > 0) {
			off += (size_t)k;
			pushed += (uint64_t)k;
			if (off == n) {
				off = 0;
				n = b_send(f, TCP_FPDU_DATA, false, RDMAP_SEND);
			}
			drive();
			continue;
		}
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0 && errno == EAGAIN) {
			if (!wait_for(cond_stalled_or_writable, 2000))
				break;
			continue;
		}
		break;
	}
	drive();
	if (over_bound())
		failure("unbounded buffer for early Sends", "with no receive posted and "
			"one small Send held, the FPDUs of a second Send that does not end "
			"are held without bound: %u bytes held (TCP_UNEXPECTED_MAX %u) "
			"after %llu bytes sent", S.ep->unexp_bytes, TCP_UNEXPECTED_MAX,
			(unsigned long long)pushed);
	else if (!S.ep->stalled)
		failure("early Sends not held", "after %llu bytes of Sends with no "
			"receive posted the endpoint holds %u bytes and is not waiting "
			"(terminal %s)", (unsigned long long)pushed, S.ep->unexp_bytes,
			S.terminal ? ev_name(S.terminal_type) : "none");
	close(S.raw);
	S.raw = -1;
	teardown();
	free(f);
}

/* ---- directed: a Read Response never carries memory deregistered ------------------ */

static bool cond_resp_waits(void)
{
	/* its response is framed and waits for room in the socket */
	return S.terminal || (S.ep->resp_head != S.ep->resp_tail && S.ep->want_out);
}

/* A Read Request for a large registration is served while the peer does
 * not read; the registration goes (and its memory is reused) with most of
 * the response still to send.  What goes out after that must not be the
 * memory's new contents: the STag is checked again for each piece, as
 * for Writes (tcp_rx.c's place), or the connection ends. */
static void read_after_dereg(long idx, uint64_t seed)
{
	const size_t len = 2u << 20;
	uint8_t *mem = malloc(len), f[FRAME_MAX], buf[65536], hdr[2 + DDP_UNTAGGED_LEN];
	struct dapl_tmr *mr;
	struct dapl_tep_attr a;
	uint32_t lkey, rkey, hhave = 0, hneed = 4, data_left = 0, trail_left = 0;
	uint64_t to = 0, got = 0, reused = 0, wrong = 0, end;
	bool in_resp = false;
	size_t i;

	if (!mem)
		DIE("malloc");
	input_reset(seed);
	cur_input = idx;
	for (i = 0; i < len; i++)
		mem[i] = (uint8_t)(i % 200);     /* never 0xee */
	if (ops->mr_reg(pd_a, mem, len, DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_REMOTE_READ,
			&mr, &lkey, &rkey))
		DIE("mr_reg");
	phase = "read after deregistration: connecting";
	S.raw = raw_connect_buf(&S.raw_port, 16384);
	build_request(H_WRITE_RTR, X_NONE, 0);
	if (send(S.raw, S.out, S.out_len, MSG_NOSIGNAL) != (ssize_t)S.out_len)
		DIE("sending a request: %s", strerror(errno));
	S.sent = S.out_len;
	if (!wait_for(cond_request, 3000))
		DIE("no CONNECT_REQUEST");
	memset(&a, 0, sizeof(a));
	a.max_send_wr = a.max_recv_wr = 4;
	a.max_send_sge = a.max_recv_sge = 1;
	a.owner = S.owner = 0xe6000000ull;
	if (ops->ep_create(pd_a, cq1, cq1, NULL, &a, &S.ep))
		DIE("ep_create");
	S.scq = S.rcq = cq1;
	if (ops->accept(S.conn, S.ep, NULL, 0, 4, 4))
		DIE("accept");
	S.conn = NULL;
	{
		/* small socket buffers on both ends, whatever the host's
		 * autotuning: the response backs up after some 200 KiB */
		int sz = 65536;

		setsockopt(S.ep->fd, SOL_SOCKET, SO_SNDBUF, &sz, sizeof(sz));
	}
	if (!wait_for(cond_reply, 3000) || !S.reply_done)
		DIE("no reply");
	build_rtr(false);
	out_put(f, b_read_req(f, 0x5e000001u, 0, (uint32_t)len, rkey,
			      (uint64_t)(uintptr_t)mem));
	/* the peer does not read: the endpoint's socket fills */
	S.own_reader = true;
	send_upto(S.out_len);
	if (!wait_for(cond_established, 3000) || !S.established || S.terminal)
		DIE("no ESTABLISHED");
	phase = "read after deregistration: filling";
	if (!wait_for(cond_resp_waits, 3000) || S.terminal) {
		failure("read after deregistration: setup", "the response did not back up "
			"(terminal %d)", S.terminal);
		goto out;
	}
	/* the registration goes, the memory is used for something else */
	ops->mr_dereg(mr);
	mr = NULL;
	memset(mem, 0xee, len);
	phase = "read after deregistration: reading";
	end = now_ms() + 5000;
	while (now_ms() < end && got < len) {
		ssize_t n;
		size_t p = 0;

		drive();
		n = recv(S.raw, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR))
			break;
		if (n < 0) {
			struct pollfd pf = { .fd = S.raw, .events = POLLIN };

			(void)poll(&pf, 1, 5);
			continue;
		}
		/* FPDUs: the Read Response's data against the old contents */
		while (p < (size_t)n) {
			if (data_left) {
				uint32_t k = data_left < n - p ? data_left : (uint32_t)(n - p), j;

				for (j = 0; in_resp && j < k; j++, to++) {
					if (buf[p + j] == 0xee)
						reused++;
					else if (buf[p + j] != (uint8_t)(to % 200))
						wrong++;
				}
				got += in_resp ? k : 0;
				data_left -= k;
				p += k;
			} else if (trail_left) {
				uint32_t k = trail_left < n - p ? trail_left : (uint32_t)(n - p);

				trail_left -= k;
				p += k;
			} else {
				hdr[hhave++] = buf[p++];
				if (hhave == 4)
					hneed = 2 + ((get16(hdr + 2) & DDP_T) ? DDP_TAGGED_LEN
									   : DDP_UNTAGGED_LEN);
				if (hhave < hneed)
					continue;
				{
					uint32_t ul = get16(hdr), hl = hneed - 2;

					in_resp = (get16(hdr + 2) & DDP_T) &&
						  (get16(hdr + 2) & RDMAP_OP_MASK) == RDMAP_READ_RESP;
					if (in_resp)
						to = get64(hdr + 8);
					data_left = ul > hl ? ul - hl : 0;
					trail_left = fpdu_pad(ul) + 4;
					hhave = 0;
					hneed = 4;
				}
			}
		}
	}
	if (reused)
		failure("Read Response after deregistration", "a Read Request of a %zu-byte "
			"registration was taken; the registration was freed (and its "
			"memory overwritten with 0xee) with the response backed up in the "
			"socket: %llu of the %llu response bytes the peer then read were "
			"the new contents (%llu other wrong bytes); the STag is checked "
			"only when the request comes, not for each piece as for Writes",
			len, (unsigned long long)reused, (unsigned long long)got,
			(unsigned long long)wrong);
	else if (wrong)
		failure("wrong Read Response data", "%llu wrong bytes in a large response",
			(unsigned long long)wrong);
out:
	S.own_reader = false;
	S.out_len = S.fpdu_start;
	close(S.raw);
	S.raw = -1;
	teardown();
	if (mr)
		ops->mr_dereg(mr);
	free(mem);
}

/* ---- directed: a Terminate fails the request it names ------------------------------- */

static bool cond_both_seen(void)
{
	return S.terminal || (S.ep_read_seen && S.ep_send_msgs);
}

/* The endpoint has a Send (not yet acknowledged: the acks are on) and then
 * a Read outstanding; the peer's Terminate names the Read (its DDP and
 * RDMAP headers, hdrct M|D|R).  The Read must complete with the remote
 * error, the Send only FLUSHED (tcp_rx.c's on_terminate means to pick
 * the request by the terminated header's opcode). */
static void terminate_names_read(long idx, uint64_t seed)
{
	uint8_t f[FRAME_MAX], *p;
	struct dapl_tep_attr a;
	size_t n;

	input_reset(seed);
	cur_input = idx;
	phase = "Terminate naming a Read: connecting";
	S.raw = raw_connect(&S.raw_port);
	build_request(H_WRITE_RTR, X_ON, 0);
	if (send(S.raw, S.out, S.out_len, MSG_NOSIGNAL) != (ssize_t)S.out_len)
		DIE("sending a request: %s", strerror(errno));
	S.sent = S.out_len;
	if (!wait_for(cond_request, 3000))
		DIE("no CONNECT_REQUEST");
	memset(&a, 0, sizeof(a));
	a.max_send_wr = a.max_recv_wr = 4;
	a.max_send_sge = a.max_recv_sge = 1;
	a.owner = S.owner = 0xe5000000ull;
	if (ops->ep_create(pd_a, cq1, cq1, NULL, &a, &S.ep))
		DIE("ep_create");
	S.scq = S.rcq = cq1;
	if (ops->accept(S.conn, S.ep, NULL, 0, 4, 4))
		DIE("accept");
	S.conn = NULL;
	if (!wait_for(cond_reply, 3000) || !S.reply_done)
		DIE("no reply");
	build_rtr(false);
	send_upto(S.out_len);
	if (!wait_for(cond_established, 3000) || !S.established || S.terminal)
		DIE("no ESTABLISHED");
	phase = "Terminate naming a Read: posting";
	{
		struct dapl_tsge sge = { (uint64_t)(uintptr_t)send_src, 100, local_lkey,
					 local_mr };

		S.ep_send_len = 100;
		S.ep_send = ops->post_send(S.ep, &sge, 1, CTX_SEND, DAPL_TPOST_SIGNALED) == 0;
		S.ep_read_nsge = 1;
		S.ep_read_seglen[0] = S.ep_read_len = 100;
		S.ep_read_rkey = 0x1234;
		S.ep_read_raddr = 0x10000;
		sge.addr = (uint64_t)(uintptr_t)sink_seg(0);
		S.ep_read = ops->post_rdma_read(S.ep, &sge, 1, S.ep_read_raddr,
						S.ep_read_rkey, CTX_READ,
						DAPL_TPOST_SIGNALED) == 0;
	}
	if (!S.ep_send || !S.ep_read || !wait_for(cond_both_seen, 3000) || S.terminal)
		DIE("the endpoint's Send and Read did not come");
	/* the Terminate: RDMAP, remote protection, invalid STag, with the
	 * Read Request's MPA length, DDP header and RDMAP header */
	phase = "Terminate naming a Read: terminating";
	fpdu_put_untagged(f, 0, true, RDMAP_TERMINATE, DDP_QN_TERM, 1, 0);
	p = f + 2 + DDP_UNTAGGED_LEN;
	put32(p, (uint32_t)TERM_RDMAP << 28 | TERM_RDMAP_PROT << 24 |
		 TERM_CODE_INVALID_STAG << 16 | TERM_HDRCT_M | TERM_HDRCT_D | TERM_HDRCT_R);
	fpdu_put_untagged(p + 4, DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN, true,
			  RDMAP_READ_REQ, DDP_QN_READ, 1, 0);
	put32(p + 4 + 2 + DDP_UNTAGGED_LEN, S.ep_read_sink);
	memset(p + 4 + 2 + DDP_UNTAGGED_LEN + 4, 0, RDMAP_READ_REQ_LEN - 4);
	n = frame_end(f, DDP_UNTAGGED_LEN + TERM_PAYLOAD_MAX);
	put32(f + n - 4, 0);        /* the Send stays unacknowledged */
	out_put(f, n);
	send_upto(S.out_len);
	if (!wait_for(cond_terminal, 3000))
		failure("hang: no end after a Terminate", "no terminal event");
	teardown();
	phase = "Terminate naming a Read: checking";
	if (S.ep_read_completions == 1 && S.ep_send_completions == 1 &&
	    (S.ep_read_st != DAPL_TWC_REMOTE_ACCESS || S.ep_send_st != DAPL_TWC_FLUSHED))
		failure("Terminate fails the wrong request", "a Terminate naming the "
			"Read (terminated header: Read Request) completed the Read with "
			"status %d and the Send posted before it with status %d; expected "
			"REMOTE_ACCESS (%d) and FLUSHED (%d)", S.ep_read_st, S.ep_send_st,
			DAPL_TWC_REMOTE_ACCESS, DAPL_TWC_FLUSHED);
}

/* ---- setup ------------------------------------------------------------------------ */

/* A network namespace of our own with only loopback, when we may make one
 * (root): the TIME_WAIT of thousands of connections stays in it. */
static void own_netns(void)
{
	if (test_netns_with_loopback() < 0)
		DIE("bringing lo up in our network namespace: %s", strerror(errno));
}

static void setup(void)
{
	char why[256] = "";
	int err, r, fds[4];
	uint32_t lkey, rkey;

	err = ops->dev_open("127.0.0.1 0", &dev, why, sizeof(why));
	if (err)
		DIE("dev_open: %d (%s)", err, why);
	if (ops->progress_fds(dev, fds, 4) != 1)
		DIE("progress_fds");
	dev_fd = fds[0];
	port = 0;
	if ((err = ops->listen(dev, &port, &lst)))
		DIE("listen: %d", err);
	if (ops->pd_alloc(dev, &pd_a) || ops->pd_alloc(dev, &pd_b))
		DIE("pd_alloc");
	if (ops->cq_create(dev, 64, &cq1) || ops->cq_create(dev, 64, &cq2))
		DIE("cq_create");
	for (r = 0; r < NREG; r++) {
		reg[r].arena = malloc(reg[r].len + 2 * GUARD);
		if (!reg[r].arena)
			DIE("malloc");
		reg[r].pd_a = r != RG_OTHER_PD;
		if (r == RG_UNREG)
			continue;
		err = ops->mr_reg(r == RG_OTHER_PD ? pd_b : pd_a, rdata(r), reg[r].len,
				  reg[r].access, &reg[r].mr, &lkey, &rkey);
		if (err)
			DIE("mr_reg: %d", err);
		reg[r].stag = rkey;
		reg[r].live = true;
	}
	/* the stale STag: its registration is gone, the memory is not */
	ops->mr_dereg(reg[RG_STALE].mr);
	reg[RG_STALE].mr = NULL;
	reg[RG_STALE].live = false;
	recv_arena = malloc((size_t)NSLOT * (RSLOT + RGUARD) + RGUARD);
	sink_arena = malloc(3 * SINK_SEG + 4 * GUARD);
	S.out = malloc(OUT_MAX);
	S.in = malloc(IN_MAX);
	if (!recv_arena || !sink_arena || !S.out || !S.in)
		DIE("malloc");
	err = ops->mr_reg(pd_a, sink_arena, 3 * SINK_SEG + 4 * GUARD,
			  DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE, &local_mr,
			  &local_lkey, &rkey);
	if (err)
		DIE("mr_reg: %d", err);
}

static void teardown_all(void)
{
	int r;

	ops->mr_dereg(local_mr);
	for (r = 0; r < NREG; r++) {
		if (reg[r].mr)
			ops->mr_dereg(reg[r].mr);
		free(reg[r].arena);
	}
	if (ops->cq_destroy(cq1) || ops->cq_destroy(cq2))
		failure("cq_destroy failed", "a CQ is still busy after every input");
	ops->pd_free(pd_a);
	ops->pd_free(pd_b);
	ops->unlisten(lst);
	ops->dev_close(dev);
	free(recv_arena);
	free(sink_arena);
	free(S.out);
	free(S.in);
}

/* Input n of a run of runs: a fully valid exchange every so often, the
 * three directed cases after the last. */
static void run_one(long n, long runs, long every, uint64_t master)
{
	uint64_t seed = mix64(mix64(master) ^ (uint64_t)n);

	cur_input = n;
	if (n == runs)
		unexpected_bound(n, seed);
	else if (n == runs + 1)
		read_after_dereg(n, seed);
	else if (n == runs + 2)
		terminate_names_read(n, seed);
	else if (n % every == 0 || n == runs - 1)
		valid_exchange(n, seed, (n / every) & 1, ((n / every) & 3) == 3);
	else
		fuzz_input(n, seed);
}

/* Terminates of this kind the endpoint sent. */
static unsigned long term_count(unsigned layer, unsigned etype, unsigned code)
{
	int i;

	for (i = 0; i < st.nterms; i++)
		if (st.terms[i].key == (layer << 12 | etype << 8 | code))
			return st.terms[i].n;
	return 0;
}

/* valgrind preloads its own libraries into the program it runs. */
static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

int main(void)
{
	const char *r = getenv("FUZZ_TCP_RUNS"), *s = getenv("FUZZ_TCP_SEED");
	const char *c = getenv("FUZZ_TCP_CHECK"), *o = getenv("FUZZ_TCP_ONLY");
	const char *v = getenv("FUZZ_TCP_VERBOSE");
	bool vg = under_valgrind();
	long runs = r && *r ? strtol(r, NULL, 10) : vg ? 200 : 15000;
	long every = c && *c ? strtol(c, NULL, 10) : vg ? 25 : 100;
	long only = o && *o ? strtol(o, NULL, 10) : -1;
	uint64_t master = s && *s ? strtoull(s, NULL, 0) : 0x7463702d66757a7aull;
	uint64_t t0 = now_ms();
	long n;
	int i, codes = 0;

	verbose = v && *v && *v != '0';
	if (every < 1)
		every = 1;
	signal(SIGPIPE, SIG_IGN);
	signal(SIGALRM, on_alarm);
	alarm(vg ? 900 : 300);
	own_netns();
	setup();
	/* the first input's fds are the baseline (the listener's, the CQs') */
	base_fds = count_fds();

	if (only >= 0)
		run_one(only, runs, every, master);
	else
		for (n = 0; n < runs + 3; n++)
			run_one(n, runs, every, master);
	cur_input = -1;
	phase = "closing";
	teardown_all();

	codes = st.nterms;
	printf("fuzz_tcp_frames: %lu inputs (%lu fully valid exchanges) in %.1f s, "
	       "seed 0x%llx: %lu FPDUs (%lu mutated), %lu bytes; receives: %lu "
	       "placed, %lu too short, %lu flushed, %lu left in an SRQ; %lu bytes "
	       "written by Writes; %lu Read Responses (%lu bytes); the endpoint's Reads "
	       "%lu and Sends %lu done; %lu Terminates from it (%d kinds); ends: %lu "
	       "DISCONNECTED, %lu CONN_ERROR; %lu frames cut before their data\n",
	       st.inputs + st.valid, st.valid, (double)(now_ms() - t0) / 1000.0,
	       (unsigned long long)master, st.frames, st.mutated, st.bytes,
	       st.recv_success, st.recv_length, st.recv_flushed, st.recv_discarded,
	       st.write_bytes_placed, st.read_responses, st.read_resp_bytes,
	       st.ep_reads_done, st.ep_sends_done, st.ep_terms, codes,
	       st.terminal[DAPL_TCM_DISCONNECTED], st.terminal[DAPL_TCM_CONN_ERROR],
	       st.placed_direct);
	printf("fuzz_tcp_frames: %lu Read Request bursts, %lu inputs with FPDUs before "
	       "the reply, %lu runs of tiny messages (%lu FPDUs); Terminates "
	       "(layer/etype/code: count):", st.read_bursts, st.eager, st.floods,
	       st.flood_frames);
	for (i = 0; i < st.nterms; i++)
		printf(" %u/%u/0x%02x: %lu", st.terms[i].key >> 12, (st.terms[i].key >> 8) & 15,
		       st.terms[i].key & 0xff, st.terms[i].n);
	printf("\n");
	printf("fuzz_tcp_frames: RFC 7306: %lu inputs negotiated it, %lu of its frames "
	       "made; %lu atomics answered and checked (%lu more run, answers cut "
	       "off), %lu immediates delivered, the endpoint's own atomics %lu done; "
	       "%lu Terminates for its frames where it was not negotiated\n",
	       st.x7306_inputs, st.ext_frames, st.atomics_done, st.atomics_unanswered,
	       st.imm_delivered, st.ep_atomics_done, st.ext_unneg_terms);
	printf("fuzz_tcp_frames: strangers:");
	for (i = 0; i < NGARB; i++)
		printf(" %s %lu%s", garb_name[i], st.garb[i], i < NGARB - 1 ? "," : ";");
	printf(" %lu refusals read\n", st.garb_refused);
	/* a default run must have reached every path it is for */
	if (only < 0 && runs >= 1000 &&
	    (!st.recv_success || !st.recv_length || !st.write_bytes_placed ||
	     !st.read_responses || !st.ep_reads_done || codes < 8 || !st.garb_refused ||
	     !st.floods || !term_count(TERM_DDP, TERM_DDP_UNTAGGED, TERM_CODE_NO_BUFFER) ||
	     !st.atomics_done || !st.imm_delivered || !st.ext_unneg_terms ||
	     !st.ep_atomics_done ||
	     !term_count(TERM_RDMAP, TERM_RDMAP_OP, TERM_CODE_UNSPECIFIED)))
		failure("coverage", "the run did not reach every path (see the counts)");
	if (nfail) {
		printf("fuzz_tcp_frames: %lu failures of %d kinds (each told once above)\n",
		       nfail, nfail_kinds);
		return 1;
	}
	printf("fuzz_tcp_frames: no failure\n");
	return 0;
}
