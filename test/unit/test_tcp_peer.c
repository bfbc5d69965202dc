/* The tcp transport (providers/tcp) against an adversarial peer.
 *
 * Our side is the transport driven directly through dapl_tcp_ops, with a
 * pump thread playing the core's progress thread (progress_fds +
 * cm_get_event, under an "IA lock", h.lock).  The peer is a raw TCP socket
 * in the same process speaking hand-built MPA / DDP / RDMAP frames
 * (tcp_wire.h), or, where a well-behaved peer is wanted, a second tcp
 * endpoint.  As root the suite runs in a network namespace of its own with
 * only loopback (fixture_tcp.c does the same).
 *
 * Every case asserts the exact answer the provider gives: the Terminate's
 * layer / error type / code (RFC 5040 section 7.2, RFC 5041 section 7.2,
 * as tcp_rx.c, tcp_tx.c and tcp_mem.c choose them), the header it quotes, the one
 * terminal event our endpoint gets, every posted request completing exactly
 * once, and that no byte of registered memory moved.
 *
 * Waits are bounded by poll() / condition timeouts (WAIT_MS) and only fail
 * a test that would otherwise hang; nothing sleeps to synchronise.  The
 * only timing asserted is a lower bound (a handshake is not dropped before
 * its deadline), which load cannot break.
 *
 * TCP_PEER_GUESSES=n sets how many guessed STags the guessed_keys case
 * tries (10000 by default, 500 under valgrind); TCP_PEER_SLOW=1 adds
 * stags_not_recoverable (2^32 steps); TCP_PEER_ONLY=name[,name...] runs
 * only those cases. */
#define _GNU_SOURCE
#include "config.h"

#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"
#include "../common/netns.h"

#define WAIT_MS 20000
#define MAXEV 512
#define HANDSHAKE_MS 200        /* DAPL_TCP_HANDSHAKE_MS for the half-open cases */
#define HALF_OPEN_MAX 256       /* tcp_listen.c's MAX_HALF_OPEN */
#define HALF_OPEN_SRC 32        /* tcp_listen.c's MAX_HALF_OPEN_PER_SRC */
#define FLOOD 300               /* half-open handshakes in the flood cases */
#define LONG_HANDSHAKE "DAPL_TCP_HANDSHAKE_MS=600000"  /* none expires */
#define NKEYS 64                /* registrations whose STags are looked at */

static const struct udapl_transport_ops *T = &dapl_tcp_ops;
static struct sockaddr_in g_lo;         /* 127.0.0.1, port 0 */

#define ALL_ACCESS (DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE | \
		    DAPL_TACCESS_REMOTE_READ | DAPL_TACCESS_REMOTE_WRITE)

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int left_ms(int64_t end)
{
	int64_t l = end - now_ms();

	return l < 0 ? 0 : (int)l;
}

/* ---- the pump: the core's progress thread ------------------------------------ */

struct evc {
	struct dapl_tcm_event ev;
	uint8_t pdata[MPA_PD_MAX];
};

static struct {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;           /* the "IA lock": CM ops and cm_get_event */
	pthread_cond_t cond;
	pthread_t thr;
	int stop_fd;
	bool overflow;
	bool idle;                      /* between passes: harvests nothing */
	unsigned passes;                /* the pump's wakeups */
	struct evc evs[MAXEV];
	int nev;
} h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *pump(void *arg)
{
	struct pollfd p[2];
	int fd = -1;

	(void)arg;
	if (T->progress_fds(h.dev, &fd, 1) != 1)
		return NULL;
	p[0].fd = fd;
	p[0].events = POLLIN;
	p[1].fd = h.stop_fd;
	p[1].events = POLLIN;
	for (;;) {
		struct dapl_tcm_event ev;
		bool again;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
		pthread_mutex_lock(&h.lock);
		h.passes++;
		h.idle = false;
		do {
			while (T->cm_get_event(h.dev, &ev) == 0) {
				struct evc *c;

				if (h.nev == MAXEV || ev.pdata_len > MPA_PD_MAX) {
					h.overflow = true;
					continue;
				}
				c = &h.evs[h.nev++];
				c->ev = ev;
				if (ev.pdata_len)
					memcpy(c->pdata, ev.pdata, ev.pdata_len);
				c->ev.pdata = c->pdata;
			}
			pthread_cond_broadcast(&h.cond);
			pthread_mutex_unlock(&h.lock);
			/* as the core does (transport.h): the drives, unlocked */
			again = T->progress_data(h.dev, true) & DAPL_TPD_EVENTS;
			pthread_mutex_lock(&h.lock);
		} while (again);
		/* a holder of h.lock that saw this keeps the pump out of
		 * the device until it lets go */
		h.idle = true;
		pthread_cond_broadcast(&h.cond);
		pthread_mutex_unlock(&h.lock);
	}
	return NULL;
}

/* Opens the device on ia_params (env: NAME=VALUE while it opens, or NULL)
 * and starts the pump. */
static void dev_start_at(const char *params, const char *env)
{
	char why[256] = "", name[64];
	const char *eq = env ? strchr(env, '=') : NULL;
	int ret;

	if (eq) {
		snprintf(name, sizeof(name), "%.*s", (int)(eq - env), env);
		setenv(name, eq + 1, 1);
	}
	ret = T->dev_open(params, &h.dev, why, sizeof(why));
	if (eq)
		unsetenv(name);
	ck_assert_msg(ret == 0, "dev_open: %d %s", ret, why);
	h.nev = 0;
	h.overflow = false;
	h.idle = true;
	h.stop_fd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(h.stop_fd, 0);
	ck_assert_int_eq(pthread_create(&h.thr, NULL, pump, NULL), 0);
}

/* ... on 127.0.0.1. */
static void dev_start(const char *env)
{
	dev_start_at("127.0.0.1 0", env);
}

static void dev_stop(void)
{
	uint64_t one = 1;

	ck_assert_int_eq(write(h.stop_fd, &one, sizeof(one)), sizeof(one));
	pthread_join(h.thr, NULL);
	close(h.stop_fd);
	ck_assert_msg(!h.overflow, "the pump dropped events");
	T->dev_close(h.dev);
	h.dev = NULL;
}

static bool ev_is_for(const struct evc *c, const void *obj)
{
	return (const void *)c->ev.ep == obj ||
	       (const void *)c->ev.listener == obj;
}

/* The next event about obj (an ep or a listener) within ms; h.lock held. */
static bool take_within(const void *obj, int ms, struct evc *out)
{
	struct timespec ts;
	int i;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	for (;;) {
		for (i = 0; i < h.nev; i++) {
			if (!ev_is_for(&h.evs[i], obj))
				continue;
			*out = h.evs[i];
			out->ev.pdata = out->pdata;
			memmove(&h.evs[i], &h.evs[i + 1],
				(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
			h.nev--;
			return true;
		}
		if (pthread_cond_timedwait(&h.cond, &h.lock, &ts) == ETIMEDOUT)
			return false;
	}
}

static struct evc take_at(const void *obj, enum dapl_tcm_event_type type,
			  int line)
{
	struct evc c;
	bool got;

	pthread_mutex_lock(&h.lock);
	got = take_within(obj, WAIT_MS, &c);
	pthread_mutex_unlock(&h.lock);
	ck_assert_msg(got, "line %d: no event for %p", line, obj);
	ck_assert_msg(c.ev.type == type, "line %d: event %d (status %d) for %p, "
		      "wanted %d", line, c.ev.type, c.ev.status, obj, type);
	return c;
}

#define take(obj, type) take_at(obj, type, __LINE__)

/* Events queued about obj right now. */
static int pending_for(const void *obj)
{
	int i, n = 0;

	pthread_mutex_lock(&h.lock);
	for (i = 0; i < h.nev; i++)
		n += ev_is_for(&h.evs[i], obj);
	pthread_mutex_unlock(&h.lock);
	return n;
}

/* ---- our side ---------------------------------------------------------------------- */

struct side {
	struct dapl_tpd *pd;
	struct dapl_tcq *scq, *rcq;
	struct dapl_tep *ep;
};

static void side_make(struct side *s, uint32_t sdepth, uint32_t rdepth)
{
	struct dapl_tep_attr a = {
		.max_send_wr = sdepth, .max_recv_wr = rdepth,
		.max_send_sge = 2, .max_recv_sge = 2, .owner = 0x0e9,
	};

	ck_assert_int_eq(T->pd_alloc(h.dev, &s->pd), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 64, &s->scq), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 64, &s->rcq), 0);
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_create(s->pd, s->scq, s->rcq, NULL, &a, &s->ep), 0);
	pthread_mutex_unlock(&h.lock);
}

static void side_free(struct side *s)
{
	struct dapl_twc wc;
	int i = 0;

	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_destroy(s->ep), 0);
	while (i < h.nev) {
		if (ev_is_for(&h.evs[i], s->ep)) {
			memmove(&h.evs[i], &h.evs[i + 1],
				(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
			h.nev--;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&h.lock);
	s->ep = NULL;
	while (T->cq_poll(s->scq, &wc, 1) > 0)
		;
	while (T->cq_poll(s->rcq, &wc, 1) > 0)
		;
	ck_assert_int_eq(T->cq_destroy(s->scq), 0);
	ck_assert_int_eq(T->cq_destroy(s->rcq), 0);
	ck_assert_int_eq(T->pd_free(s->pd), 0);
}

/* Any in-progress drive of ep (which holds its lock from reading an FPDU
 * to completing what that FPDU made complete) has finished. */
static void ep_sync(struct dapl_tep *ep)
{
	struct sockaddr_storage l, r;

	ck_assert_int_eq(T->ep_addrs(ep, &l, &r), 0);
}

struct buf {
	uint8_t *p;
	size_t len;
	struct dapl_tmr *mr;
	uint32_t lkey, rkey;
	unsigned seed;
};

static void pattern(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 13u + seed);
}

static void buf_make(struct buf *b, struct dapl_tpd *pd, size_t len,
		     unsigned seed)
{
	b->len = len;
	b->seed = seed;
	b->p = malloc(len);
	ck_assert_ptr_nonnull(b->p);
	pattern(b->p, len, seed);
	ck_assert_int_eq(T->mr_reg(pd, b->p, len, ALL_ACCESS, &b->mr, &b->lkey,
				   &b->rkey), 0);
}

static void buf_free(struct buf *b)
{
	ck_assert_int_eq(T->mr_dereg(b->mr), 0);
	free(b->p);
}

static uint64_t buf_addr(const struct buf *b)
{
	return (uint64_t)(uintptr_t)b->p;
}

/* No byte of b moved since buf_make. */
#define expect_untouched(b) expect_untouched_at(b, __LINE__)
static void expect_untouched_at(const struct buf *b, int line)
{
	size_t i;

	for (i = 0; i < b->len; i++)
		ck_assert_msg(b->p[i] == (uint8_t)(i * 13u + b->seed),
			      "line %d: byte %zu of a buffer was written", line, i);
}

static struct dapl_tsge sge_of(struct buf *b, size_t off, size_t len)
{
	struct dapl_tsge s = {
		.addr = buf_addr(b) + off, .length = (uint32_t)len,
		.lkey = b->lkey, .mr = b->mr,
	};
	return s;
}

static void post_recv(struct side *s, struct buf *b, size_t off, size_t len,
		      uint64_t ctx)
{
	struct dapl_tsge sge = sge_of(b, off, len);

	ck_assert_int_eq(T->post_recv(s->ep, &sge, 1, ctx), 0);
}

/* A completion within WAIT_MS, waiting the way the core does. */
static struct dapl_twc wait_wc(struct dapl_tcq *cq)
{
	int64_t end = now_ms() + WAIT_MS;
	struct dapl_twc wc;
	struct pollfd p;

	p.fd = T->cq_wait_fd(cq);
	p.events = POLLIN;
	for (;;) {
		int n = T->cq_poll(cq, &wc, 1);

		ck_assert_int_ge(n, 0);
		if (n)
			return wc;
		ck_assert_int_eq(T->cq_arm(cq, 0), 0);
		if (T->cq_poll(cq, &wc, 1) == 1)
			return wc;
		ck_assert_msg(left_ms(end) > 0, "no completion");
		poll(&p, 1, left_ms(end));
		T->cq_ack(cq);
	}
}

#define expect_wc(cq, ctx, op, st, len) expect_wc_at(cq, ctx, op, st, len, __LINE__)
static void expect_wc_at(struct dapl_tcq *cq, uint64_t ctx,
			 enum dapl_twc_opcode op, enum dapl_twc_status st,
			 uint32_t len, int line)
{
	struct dapl_twc wc = wait_wc(cq);

	ck_assert_msg(wc.context == ctx && wc.opcode == op && wc.status == st,
		      "line %d: completion ctx %#llx op %d status %d, wanted "
		      "ctx %#llx op %d status %d", line,
		      (unsigned long long)wc.context, wc.opcode, wc.status,
		      (unsigned long long)ctx, op, st);
	if (st == DAPL_TWC_SUCCESS && op == DAPL_TWC_RECV)
		ck_assert_uint_eq(wc.byte_len, len);
}

#define expect_cq_empty(cq) expect_cq_empty_at(cq, __LINE__)
static void expect_cq_empty_at(struct dapl_tcq *cq, int line)
{
	struct dapl_twc wc;
	int n = T->cq_poll(cq, &wc, 1);

	ck_assert_msg(n == 0, "line %d: unexpected completion ctx %#llx op %d "
		      "status %d", line, (unsigned long long)wc.context,
		      wc.opcode, wc.status);
}

/* The n requests ctx[] complete FLUSHED, each exactly once (in any order),
 * and nothing else comes. */
static void expect_flushed_once(struct dapl_tcq *cq, const uint64_t *ctx,
				int n, enum dapl_twc_opcode op)
{
	bool seen[64] = { false };
	int i, k;

	ck_assert_int_le(n, 64);
	for (i = 0; i < n; i++) {
		struct dapl_twc wc = wait_wc(cq);

		for (k = 0; k < n && ctx[k] != wc.context; k++)
			;
		ck_assert_msg(k < n, "completion of unknown ctx %#llx",
			      (unsigned long long)wc.context);
		ck_assert_msg(!seen[k], "ctx %#llx completed twice",
			      (unsigned long long)wc.context);
		seen[k] = true;
		ck_assert_int_eq(wc.opcode, op);
		ck_assert_msg(wc.status == DAPL_TWC_FLUSHED, "ctx %#llx: status "
			      "%d, wanted FLUSHED", (unsigned long long)wc.context,
			      wc.status);
	}
	expect_cq_empty(cq);
}

static struct dapl_tlisten *do_listen(uint16_t *port)
{
	struct dapl_tlisten *l;

	*port = 0;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->listen(h.dev, port, &l), 0);
	pthread_mutex_unlock(&h.lock);
	return l;
}

static void do_unlisten(struct dapl_tlisten *l)
{
	pthread_mutex_lock(&h.lock);
	T->unlisten(l);
	pthread_mutex_unlock(&h.lock);
}

static void do_accept(struct dapl_tconn *c, struct dapl_tep *ep)
{
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->accept(c, ep, NULL, 0, 4, 4), 0);
	pthread_mutex_unlock(&h.lock);
}

static void do_connect(struct dapl_tep *ep, uint16_t port)
{
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->connect(ep, (const struct sockaddr *)&g_lo, port,
				    "hi", 2, 4, 4), 0);
	pthread_mutex_unlock(&h.lock);
}

static void do_disconnect(struct dapl_tep *ep)
{
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->disconnect(ep), 0);
	pthread_mutex_unlock(&h.lock);
}

static void do_reset(struct dapl_tep *ep)
{
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_reset(ep), 0);
	pthread_mutex_unlock(&h.lock);
}

/* ---- the peer: a raw socket ------------------------------------------------------- */

/* Connects fd (a fresh TCP socket, or -1 for a new one) to port on
 * 127.0.0.1 from 127.0.0.<src> (any 127/8 address is loopback; 0: the
 * kernel's choice). */
static int raw_connect_fd(int fd, uint16_t port, unsigned src)
{
	struct sockaddr_in a = g_lo;
	int one = 1, err = 0;
	socklen_t el = sizeof(err);

	a.sin_port = htons(port);
	if (fd < 0)
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (src) {
		struct sockaddr_in b = { .sin_family = AF_INET };

		b.sin_addr.s_addr = htonl(0x7f000000u | src);
		ck_assert_msg(bind(fd, (struct sockaddr *)&b, sizeof(b)) == 0,
			      "bind 127.0.0.%u: %s", src, strerror(errno));
	}
	if (connect(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		ck_assert_msg(errno == EINPROGRESS, "connect: %s", strerror(errno));
		ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "connect: no answer");
		ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el), 0);
		ck_assert_msg(err == 0, "connect: %s", strerror(err));
	}
	return fd;
}

static int raw_connect(uint16_t port)
{
	return raw_connect_fd(-1, port, 0);
}

static int raw_connect_from(uint16_t port, unsigned src)
{
	return raw_connect_fd(-1, port, src);
}

static void send_all(int fd, const void *buf, size_t len)
{
	const uint8_t *b = buf;
	int64_t end = now_ms() + WAIT_MS;

	while (len) {
		ssize_t n = send(fd, b, len, MSG_DONTWAIT | MSG_NOSIGNAL);
		struct pollfd p = { .fd = fd, .events = POLLOUT };

		if (n > 0) {
			b += n;
			len -= (size_t)n;
			continue;
		}
		ck_assert_msg(n < 0 && (errno == EAGAIN || errno == EINTR),
			      "peer send: %s", strerror(errno));
		ck_assert_msg(left_ms(end) > 0, "peer send: our side reads nothing");
		poll(&p, 1, left_ms(end));
	}
}

/* Reads exactly len bytes: 1; 0 at a clean EOF before the first byte. */
static int read_exact(int fd, void *buf, size_t len)
{
	uint8_t *b = buf;
	size_t got = 0;
	int64_t end = now_ms() + WAIT_MS;

	while (got < len) {
		ssize_t n = recv(fd, b + got, len - got, MSG_DONTWAIT);
		struct pollfd p = { .fd = fd, .events = POLLIN };

		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0) {
			ck_assert_msg(got == 0, "EOF inside a frame (%zu of %zu)",
				      got, len);
			return 0;
		}
		ck_assert_msg(errno == EAGAIN || errno == EINTR, "peer recv: %s",
			      strerror(errno));
		ck_assert_msg(left_ms(end) > 0, "peer recv: nothing came");
		poll(&p, 1, left_ms(end));
	}
	return 1;
}

/* The next thing on fd is the end of the stream: 0 for EOF, else -errno
 * (ECONNRESET).  Fails if data comes first. */
static int stream_end(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	uint8_t c;
	ssize_t n;

	ck_assert_msg(poll(&p, 1, WAIT_MS) == 1, "the connection stays open");
	n = recv(fd, &c, 1, MSG_DONTWAIT);
	ck_assert_msg(n <= 0, "a byte (%#x) where the stream should end", c);
	return n == 0 ? 0 : -errno;
}

#define expect_eof(fd) ck_assert_int_eq(stream_end(fd), 0)

/* The peer's view of one connection. */
struct peer {
	int fd;
	bool ext;               /* both announced the libdat ack extension */
	bool early;             /* ... and we take FPDUs right behind the reply */
	bool x7306;             /* ... and RFC 7306 */
	uint32_t count;         /* what goes in our CRC fields */
};

enum { PEER_EXT = 1u << 0, PEER_EARLY = 1u << 1, PEER_7306 = 1u << 2 };

/* An MPA request: revision 2, RFC 6581 IRD/ORD 4 with peer-to-peer and a
 * zero-length Write as RTR, the libdat trailer with PEER_EXT (and
 * TCP_EXT_F_EARLY with PEER_EARLY). */
static void peer_request(struct peer *p, unsigned flags)
{
	uint8_t f[MPA_HDR_LEN + MPA_V2_LEN + TCP_EXT_LEN];
	size_t pd = MPA_V2_LEN + ((flags & PEER_EXT) ? TCP_EXT_LEN : 0);

	mpa_put_hdr(f, true, MPA_FLAG_ENHANCED | 2, (uint32_t)pd);
	put16(f + MPA_HDR_LEN, 4 | MPA_V2_P2P);
	put16(f + MPA_HDR_LEN + 2, 4 | MPA_V2_WRITE_RTR);
	if (flags & PEER_EXT) {
		put32(f + MPA_HDR_LEN + 4, TCP_EXT_MAGIC);
		put16(f + MPA_HDR_LEN + 8, TCP_EXT_VERSION);
		put16(f + MPA_HDR_LEN + 10, TCP_EXT_F_ACKS |
		      ((flags & PEER_EARLY) ? TCP_EXT_F_EARLY : 0) |
		      ((flags & PEER_7306) ? TCP_EXT_F_RFC7306 : 0));
	}
	p->ext = (flags & PEER_EXT) != 0;
	p->early = p->ext && (flags & PEER_EARLY);
	p->x7306 = p->ext && (flags & PEER_7306);
	p->count = 0;
	send_all(p->fd, f, MPA_HDR_LEN + pd);
}

/* Reads our accept (no private data of the consumer's) and checks it. */
static void peer_reply(struct peer *p)
{
	uint8_t f[MPA_HDR_LEN + MPA_PD_MAX];
	uint32_t bits = 0, pd_len = 0;

	ck_assert_int_eq(read_exact(p->fd, f, MPA_HDR_LEN), 1);
	ck_assert_msg(mpa_get_hdr(f, false, &bits, &pd_len), "not an MPA reply");
	ck_assert_uint_eq(bits, MPA_FLAG_ENHANCED | 2);
	ck_assert_uint_eq(pd_len, MPA_V2_LEN + (p->ext ? TCP_EXT_LEN : 0));
	ck_assert_int_eq(read_exact(p->fd, f + MPA_HDR_LEN, pd_len), 1);
	/* an initiator that takes FPDUs at once is asked for no RTR */
	ck_assert_uint_eq(get16(f + MPA_HDR_LEN), p->early ? 4 : 4 | MPA_V2_P2P);
	ck_assert_uint_eq(get16(f + MPA_HDR_LEN + 2),
			  p->early ? 4 : 4 | MPA_V2_WRITE_RTR);
	if (p->ext) {
		ck_assert_uint_eq(get32(f + MPA_HDR_LEN + 4), TCP_EXT_MAGIC);
		/* RFC 7306 echoed to a peer that offered it, never
		 * announced to one that did not */
		ck_assert_uint_eq(get16(f + MPA_HDR_LEN + 10),
				  TCP_EXT_F_ACKS | (p->early ? TCP_EXT_F_EARLY : 0) |
				  (p->x7306 ? TCP_EXT_F_RFC7306 : 0));
	}
}

/* The rest of an FPDU after its header (hlen bytes from out, written by
 * fpdu_put_*, ULPDU_Length first): data, pad, the CRC field.  Returns the
 * whole FPDU's length. */
static size_t fpdu_finish(uint8_t *out, size_t hlen, const void *data,
			  uint32_t dlen, uint32_t crc)
{
	unsigned pad = fpdu_pad(get16(out));

	if (dlen)
		memcpy(out + hlen, data, dlen);
	memset(out + hlen + dlen, 0, pad);
	put32(out + hlen + dlen + pad, crc);
	return hlen + dlen + pad + 4;
}

static size_t mk_write(uint8_t *out, uint32_t stag, uint64_t to,
		       const void *d, uint32_t n, uint32_t crc)
{
	size_t hl = fpdu_put_tagged(out, DDP_TAGGED_LEN + n, true, RDMAP_WRITE,
				    stag, to);

	return fpdu_finish(out, hl, d, n, crc);
}

static size_t mk_send(uint8_t *out, uint32_t msn, const void *d, uint32_t n,
		      uint32_t crc)
{
	size_t hl = fpdu_put_untagged(out, DDP_UNTAGGED_LEN + n, true,
				      RDMAP_SEND, DDP_QN_SEND, msn, 0);

	return fpdu_finish(out, hl, d, n, crc);
}

static size_t mk_read_req(uint8_t *out, uint32_t msn, uint32_t sink,
			  uint64_t sink_to, uint32_t len, uint32_t src,
			  uint64_t src_to, uint32_t crc)
{
	size_t hl = fpdu_put_untagged(out, DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN,
				      true, RDMAP_READ_REQ, DDP_QN_READ, msn, 0);

	put32(out + hl, sink);
	put64(out + hl + 4, sink_to);
	put32(out + hl + 12, len);
	put32(out + hl + 16, src);
	put64(out + hl + 20, src_to);
	return fpdu_finish(out, hl + RDMAP_READ_REQ_LEN, NULL, 0, crc);
}

static size_t mk_read_resp(uint8_t *out, uint32_t sink, uint64_t to,
			   const void *d, uint32_t n, bool last, uint32_t crc)
{
	size_t hl = fpdu_put_tagged(out, DDP_TAGGED_LEN + n, last,
				    RDMAP_READ_RESP, sink, to);

	return fpdu_finish(out, hl, d, n, crc);
}

/* RFC 7306 frames (tcp_wire.h). */
static size_t mk_imm(uint8_t *out, uint32_t msn, uint64_t imm, uint32_t crc)
{
	size_t hl = fpdu_put_untagged(out, DDP_UNTAGGED_LEN + RDMAP_IMM_LEN,
				      true, RDMAP_IMM, DDP_QN_SEND, msn, 0);

	put64(out + hl, imm);
	return fpdu_finish(out, hl + RDMAP_IMM_LEN, NULL, 0, crc);
}

struct atomic_req {
	uint32_t qn, msn, aop, id, stag;
	uint64_t to, data, dmask, cmp, cmask;
	uint32_t extra;         /* data bytes behind the header (malformed) */
	bool not_last;
};

static size_t mk_atomic_req(uint8_t *out, const struct atomic_req *a)
{
	size_t hl = fpdu_put_untagged(out, DDP_UNTAGGED_LEN +
				      RDMAP_ATOMIC_REQ_LEN + a->extra,
				      !a->not_last, RDMAP_ATOMIC_REQ, a->qn,
				      a->msn, 0);
	uint8_t pad[64] = { 0 };

	put32(out + hl, a->aop);
	put32(out + hl + 4, a->id);
	put32(out + hl + 8, a->stag);
	put64(out + hl + 12, a->to);
	put64(out + hl + 20, a->data);
	put64(out + hl + 28, a->dmask);
	put64(out + hl + 36, a->cmp);
	put64(out + hl + 44, a->cmask);
	return fpdu_finish(out, hl + RDMAP_ATOMIC_REQ_LEN, pad, a->extra, 0);
}

static size_t mk_atomic_resp(uint8_t *out, uint32_t qn, uint32_t msn,
			     uint32_t id, uint64_t orig)
{
	size_t hl = fpdu_put_untagged(out, DDP_UNTAGGED_LEN +
				      RDMAP_ATOMIC_RESP_LEN, true,
				      RDMAP_ATOMIC_RESP, qn, msn, 0);

	put32(out + hl, id);
	put64(out + hl + 4, orig);
	return fpdu_finish(out, hl + RDMAP_ATOMIC_RESP_LEN, NULL, 0, 0);
}

/* The ready-to-receive we offered: a zero-length RDMA Write. */
static size_t mk_rtr(uint8_t *out)
{
	size_t hl = fpdu_put_tagged(out, DDP_TAGGED_LEN, true, RDMAP_WRITE, 0, 0);

	return fpdu_finish(out, hl, NULL, 0, 0);
}

/* One FPDU from our side, decoded. */
struct fpdu {
	uint8_t b[2 + 65535 + 8];
	uint32_t ul, crc, ctrl, op;
	bool tagged, last;
	uint32_t stag;                  /* tagged */
	uint64_t to;
	uint32_t qn, msn, mo;           /* untagged */
	const uint8_t *data;            /* after the DDP (+ RDMAP) header */
	uint32_t dlen;
};

static struct fpdu rx;              /* big: not on the stack */

/* Reads one FPDU; false at a clean EOF. */
static bool read_fpdu(int fd, struct fpdu *f)
{
	uint32_t hl, rest;

	if (!read_exact(fd, f->b, 2))
		return false;
	f->ul = get16(f->b);
	rest = f->ul + fpdu_pad(f->ul) + 4;
	ck_assert_int_eq(read_exact(fd, f->b + 2, rest), 1);
	f->crc = get32(f->b + 2 + f->ul + fpdu_pad(f->ul));
	ck_assert_uint_ge(f->ul, 2);
	f->ctrl = get16(f->b + 2);
	f->op = f->ctrl & RDMAP_OP_MASK;
	f->tagged = (f->ctrl & DDP_T) != 0;
	f->last = (f->ctrl & DDP_L) != 0;
	ck_assert_uint_eq(f->ctrl & DDP_VERSION_MASK, DDP_VERSION_BITS);
	ck_assert_uint_eq(f->ctrl & RDMAP_VERSION_MASK, RDMAP_VERSION_BITS);
	if (f->tagged) {
		ck_assert_uint_ge(f->ul, DDP_TAGGED_LEN);
		f->stag = get32(f->b + 4);
		f->to = get64(f->b + 8);
		hl = DDP_TAGGED_LEN;
	} else {
		ck_assert_uint_ge(f->ul, DDP_UNTAGGED_LEN);
		f->qn = get32(f->b + 8);
		f->msn = get32(f->b + 12);
		f->mo = get32(f->b + 16);
		hl = DDP_UNTAGGED_LEN;
		if (f->op == RDMAP_READ_REQ)
			hl += RDMAP_READ_REQ_LEN;
	}
	ck_assert_uint_ge(f->ul, hl);
	f->data = f->b + 2 + hl;
	f->dlen = f->ul - hl;
	return true;
}

/* The next FPDU that is not a bare placement ack (a zero-length Write to
 * STag 0, which a libdat peer sends when it owes one); false at EOF. */
static bool next_fpdu(struct peer *p, struct fpdu *f)
{
	for (;;) {
		if (!read_fpdu(p->fd, f))
			return false;
		if (p->ext && f->tagged && f->op == RDMAP_WRITE && f->stag == 0 &&
		    f->dlen == 0)
			continue;
		return true;
	}
}

/* The next FPDU is a Terminate with this layer / error type / code,
 * quoting the first hlen bytes of the frame it refuses (sent), and the
 * stream ends after it. */
#define expect_terminate(p, layer, etype, code, sent, hlen) \
	expect_terminate_at(p, layer, etype, code, sent, hlen, __LINE__)
static void expect_terminate_at(struct peer *p, unsigned layer, unsigned etype,
				unsigned code, const uint8_t *sent, size_t hlen,
				int line)
{
	uint32_t ctl, hdrct;

	ck_assert_msg(next_fpdu(p, &rx), "line %d: EOF, no Terminate", line);
	ck_assert_msg(!rx.tagged && rx.op == RDMAP_TERMINATE, "line %d: %s FPDU "
		      "op %u where a Terminate was due", line,
		      rx.tagged ? "tagged" : "untagged", rx.op);
	ck_assert(rx.last);
	ck_assert_uint_eq(rx.qn, DDP_QN_TERM);
	ck_assert_uint_eq(rx.msn, 1);
	ck_assert_uint_eq(rx.mo, 0);
	ck_assert_uint_ge(rx.dlen, 4);
	ctl = get32(rx.data);
	ck_assert_msg(ctl >> 28 == layer && ((ctl >> 24) & 15) == etype &&
		      ((ctl >> 16) & 255) == code,
		      "line %d: Terminate layer %u etype %u code %#x, wanted "
		      "layer %u etype %u code %#x", line, ctl >> 28,
		      (ctl >> 24) & 15, (ctl >> 16) & 255, layer, etype, code);
	hdrct = ctl & 0xffff;
	ck_assert_uint_eq(hdrct, TERM_HDRCT_M | TERM_HDRCT_D |
			  (hlen > 2 + DDP_UNTAGGED_LEN ? TERM_HDRCT_R : 0));
	ck_assert_msg(rx.dlen == 4 + hlen, "line %d: Terminate quotes %u bytes, "
		      "wanted %zu", line, rx.dlen - 4, hlen);
	ck_assert_msg(memcmp(rx.data + 4, sent, hlen) == 0,
		      "line %d: the quoted header is not the one sent", line);
	expect_eof(p->fd);
}

/* Our side ended the connection after a Terminate: its one event. */
#define expect_aborted(ep) expect_aborted_at(ep, __LINE__)
static void expect_aborted_at(struct dapl_tep *ep, int line)
{
	struct evc c = take_at(ep, DAPL_TCM_CONN_ERROR, line);

	ck_assert_int_eq(c.ev.status, -ECONNABORTED);
}

/* The peer connects through l and our ep accepts; ESTABLISHED follows the
 * peer's RTR. */
static void peer_connect(struct peer *p, struct dapl_tlisten *l, uint16_t port,
			 struct dapl_tep *ep, unsigned flags)
{
	uint8_t f[64];
	struct evc c;

	p->fd = raw_connect(port);
	peer_request(p, flags);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_uint_eq(c.ev.pdata_len, 0);
	do_accept(c.ev.conn, ep);
	peer_reply(p);
	send_all(p->fd, f, mk_rtr(f));
	take(ep, DAPL_TCM_ESTABLISHED);
}

static void peer_close(struct peer *p)
{
	close(p->fd);
	p->fd = -1;
}

/* A connected test bed: our side (accepting) and a raw peer. */
struct bed {
	struct dapl_tlisten *l;
	uint16_t port;
	struct side s;
	struct peer p;
};

/* The device (env as dev_start's), a listener and our side; the peer
 * connects later (after what must be posted first). */
static void bed_up_env(struct bed *b, uint32_t sdepth, uint32_t rdepth,
		       const char *env)
{
	dev_start(env);
	b->l = do_listen(&b->port);
	side_make(&b->s, sdepth, rdepth);
	b->p.fd = -1;
}

static void bed_up(struct bed *b, uint32_t sdepth, uint32_t rdepth)
{
	bed_up_env(b, sdepth, rdepth, NULL);
}

static void bed_down(struct bed *b)
{
	if (b->p.fd >= 0)
		peer_close(&b->p);
	side_free(&b->s);
	do_unlisten(b->l);
	dev_stop();
}

/* ---- 1. a tagged range that wraps 2^64, or overruns its registration --------- */

/* _i: 0 RDMA Write wrapping, 1 Read Request wrapping, 2 RDMA Write past the
 * end of the registration, 3 Read Request past the end. */
START_TEST(wrapped_range)
{
	struct bed b;
	struct buf a;
	uint8_t f[512], d[64];
	size_t n, hlen;
	bool wrap = _i < 2, read = _i & 1;
	uint64_t to;
	unsigned code = wrap ? TERM_CODE_TO_WRAP : TERM_CODE_BOUNDS;

	bed_up(&b, 4, 4);
	buf_make(&a, b.s.pd, 4096, 1);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	memset(d, 0xee, sizeof(d));
	/* wrapping: the last 32 bytes of 2^64 and 32 past it; overrunning:
	 * the registration's last 32 bytes and 32 after them */
	to = wrap ? UINT64_MAX - 31 : buf_addr(&a) + a.len - 32;
	if (read) {
		n = mk_read_req(f, 1, 0x5151, 0, sizeof(d), a.rkey, to, 0);
		hlen = 2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN;
	} else {
		n = mk_write(f, a.rkey, to, d, sizeof(d), 0);
		hlen = 2 + DDP_TAGGED_LEN;
	}
	send_all(b.p.fd, f, n);
	/* the first FPDU back is the Terminate (no Read Response), RDMAP
	 * layer, remote protection error */
	expect_terminate(&b.p, TERM_RDMAP, TERM_RDMAP_PROT, code, f, hlen);
	expect_aborted(b.s.ep);
	expect_untouched(&a);
	buf_free(&a);
	bed_down(&b);
}
END_TEST

/* ---- 2. a valid STag of another protection domain ----------------------------- */

/* _i: 0 RDMA Write, 1 Read Request. */
START_TEST(other_pz_key)
{
	struct bed b;
	struct dapl_tpd *pd2;
	struct buf mine, other, rbuf;
	uint8_t f[512], d[64];
	size_t n, hlen;

	bed_up(&b, 4, 4);
	ck_assert_int_eq(T->pd_alloc(h.dev, &pd2), 0);
	buf_make(&mine, b.s.pd, 4096, 2);
	buf_make(&other, pd2, 4096, 3);
	buf_make(&rbuf, b.s.pd, 256, 4);
	post_recv(&b.s, &rbuf, 0, 256, 0x71);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	memset(d, 0xab, sizeof(d));

	/* the same request at our endpoint's own PZ works (a Send behind
	 * the Write tells when it is placed) */
	n = mk_write(f, mine.rkey, buf_addr(&mine) + 64, d, sizeof(d), 0);
	n += mk_send(f + n, 1, "x", 1, 0);
	send_all(b.p.fd, f, n);
	expect_wc(b.s.rcq, 0x71, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 1);
	ck_assert_int_eq(memcmp(mine.p + 64, d, sizeof(d)), 0);

	if (_i) {
		n = mk_read_req(f, 1, 0x7272, 0, sizeof(d), other.rkey,
				buf_addr(&other), 0);
		hlen = 2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN;
	} else {
		n = mk_write(f, other.rkey, buf_addr(&other), d, sizeof(d), 0);
		hlen = 2 + DDP_TAGGED_LEN;
	}
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, TERM_RDMAP, TERM_RDMAP_PROT,
			 TERM_CODE_STAG_STREAM, f, hlen);
	expect_aborted(b.s.ep);
	expect_untouched(&other);
	buf_free(&mine);
	buf_free(&other);
	buf_free(&rbuf);
	ck_assert_int_eq(T->pd_free(pd2), 0);
	bed_down(&b);
}
END_TEST

/* ---- 3. guessed keys ------------------------------------------------------------ */

static uint64_t rng_state;

static uint32_t rng32(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	rng_state = x;
	return (uint32_t)(x >> 16);
}

static void rng_seed(void)
{
	if (getrandom(&rng_state, sizeof(rng_state), 0) != sizeof(rng_state))
		rng_state = (uint64_t)now_ms() * 0x9e3779b97f4a7c15ull;
	rng_state |= 1;
}

static uint32_t dist32(uint32_t a, uint32_t b)
{
	uint32_t d = a - b;

	return d < b - a ? d : b - a;
}

/* STags of NKEYS registrations in a row look unpredictable: all distinct
 * and non-zero, not an arithmetic progression, at most one consecutive
 * pair within 2^16 of each other (a uniform generator puts one there with
 * probability 0.2%, two with 2e-6: "none" would be a flaky test), and
 * every bit set in some and clear in others. */
START_TEST(stags_unpredictable)
{
	struct dapl_tpd *pd;
	struct buf bufs[NKEYS];
	uint32_t s[NKEYS], ones[32] = { 0 };
	int i, k, close_pairs = 0;
	bool progression = true;

	dev_start(NULL);
	ck_assert_int_eq(T->pd_alloc(h.dev, &pd), 0);
	for (i = 0; i < NKEYS; i++) {
		buf_make(&bufs[i], pd, 64, (unsigned)i);
		s[i] = bufs[i].rkey;
		ck_assert_uint_ne(s[i], 0);
		for (k = 0; k < i; k++)
			ck_assert_msg(s[k] != s[i], "STag %#x handed out twice", s[i]);
		for (k = 0; k < 32; k++)
			ones[k] += (s[i] >> k) & 1;
	}
	for (i = 1; i < NKEYS; i++) {
		if (dist32(s[i], s[i - 1]) < 0x10000)
			close_pairs++;
		if (i >= 2 && s[i] - s[i - 1] != s[i - 1] - s[i - 2])
			progression = false;
	}
	ck_assert_msg(!progression, "STags step by %#x", s[1] - s[0]);
	ck_assert_msg(close_pairs <= 1, "%d of %d STags follow the one before "
		      "within 2^16 (%#x %#x %#x %#x ...)", close_pairs, NKEYS - 1,
		      s[0], s[1], s[2], s[3]);
	/* a bit that is the same in all 64 is a bit a guesser need not guess */
	for (k = 0; k < 32; k++)
		ck_assert_msg(ones[k] > 0 && ones[k] < NKEYS,
			      "bit %d of every STag is %d", k, ones[k] ? 1 : 0);
	for (i = 0; i < NKEYS; i++)
		buf_free(&bufs[i]);
	ck_assert_int_eq(T->pd_free(pd), 0);
	dev_stop();
}
END_TEST

#define XS_MUL 0x2545f4914f6cdd1dull

static uint64_t xs_step(uint64_t x)
{
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	return x;
}

/* The inverse of an odd number modulo 2^64 (Newton's iteration). */
static uint64_t inv64(uint64_t a)
{
	uint64_t x = a;
	int i;

	for (i = 0; i < 6; i++)
		x *= 2 - a * x;
	return x;
}

/* A peer handed two consecutive STags cannot work out the ones that
 * follow (another consumer's, in the same PZ: the PZ check does not stand
 * in the way).  Against an xorshift64* generator whose output's high half
 * is the STag (tcp_mem.c's, today), trying the 2^32 low halves of the
 * first output recovers the state and every later STag until a reseed.
 * Opt-in (TCP_PEER_SLOW=1): 2^32 steps, some seconds; never under
 * valgrind. */
START_TEST(stags_not_recoverable)
{
	struct dapl_tpd *pd;
	struct buf bufs[NKEYS];
	uint32_t s[NKEYS];
	uint64_t lo, minv = inv64(XS_MUL), cand[8];
	int i, k, ncand = 0, best = 0;

	dev_start(NULL);
	ck_assert_int_eq(T->pd_alloc(h.dev, &pd), 0);
	for (i = 0; i < NKEYS; i++) {
		buf_make(&bufs[i], pd, 64, (unsigned)i);
		s[i] = bufs[i].rkey;
	}
	for (lo = 0; lo < (1ull << 32); lo++) {
		uint64_t x = (((uint64_t)s[0] << 32) | lo) * minv;

		if ((uint32_t)((xs_step(x) * XS_MUL) >> 32) == s[1] && ncand < 8)
			cand[ncand++] = xs_step(x);
	}
	for (k = 0; k < ncand; k++) {
		uint64_t x = cand[k];
		int hits = 0;

		for (i = 2; i < NKEYS; i++) {
			x = xs_step(x);
			hits += (uint32_t)((x * XS_MUL) >> 32) == s[i];
		}
		if (hits > best)
			best = hits;
	}
	ck_assert_msg(best < 2, "from STags %#x %#x, %d of the next %d were "
		      "predicted (the xorshift64* state was recovered)", s[0],
		      s[1], best, NKEYS - 2);
	for (i = 0; i < NKEYS; i++)
		buf_free(&bufs[i]);
	ck_assert_int_eq(T->pd_free(pd), 0);
	dev_stop();
}
END_TEST

static bool under_valgrind(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload");
}

/* Random STags never hit: each guess (an RDMA Write, or a Read Request,
 * aimed at the address of a real registration) ends its connection with a
 * Terminate "invalid STag", and no registration changes. */
START_TEST(guessed_keys)
{
	struct bed b;
	struct buf bufs[NKEYS];
	const char *env = getenv("TCP_PEER_GUESSES");
	int tries = env ? atoi(env) : under_valgrind() ? 500 : 10000, t, i;
	uint8_t f[512], d[32];
	uint64_t seed;

	rng_seed();
	seed = rng_state;
	bed_up(&b, 4, 4);
	for (i = 0; i < NKEYS; i++)
		buf_make(&bufs[i], b.s.pd, 256, (unsigned)i + 7);
	memset(d, 0x5a, sizeof(d));
	for (t = 0; t < tries; t++) {
		struct buf *aim = &bufs[t % NKEYS];
		uint32_t guess;
		size_t n, r, hlen;
		bool known;

		do {
			guess = rng32();
			for (known = false, i = 0; i < NKEYS; i++)
				known |= guess == bufs[i].rkey;
		} while (known);   /* a key we were given is not a guess */

		b.p.fd = raw_connect(b.port);
		peer_request(&b.p, 0);
		{
			struct evc c = take(b.l, DAPL_TCM_CONNECT_REQUEST);

			do_accept(c.ev.conn, b.s.ep);
		}
		peer_reply(&b.p);
		r = mk_rtr(f);
		if (t & 1) {
			n = mk_read_req(f + r, 1, 0x1111, 0, 16, guess,
					buf_addr(aim) + 16, 0);
			hlen = 2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN;
		} else {
			n = mk_write(f + r, guess, buf_addr(aim) + 16, d,
				     sizeof(d), 0);
			hlen = 2 + DDP_TAGGED_LEN;
		}
		send_all(b.p.fd, f, r + n);
		ck_assert_msg(next_fpdu(&b.p, &rx), "try %d (seed %#llx): no "
			      "Terminate", t, (unsigned long long)seed);
		ck_assert_msg(!rx.tagged && rx.op == RDMAP_TERMINATE &&
			      get32(rx.data) >> 16 ==
			      (TERM_RDMAP << 12 | TERM_RDMAP_PROT << 8 |
			       TERM_CODE_INVALID_STAG),
			      "try %d (seed %#llx): STag %#x: op %u control %#x",
			      t, (unsigned long long)seed, guess, rx.op,
			      rx.tagged ? 0 : get32(rx.data));
		ck_assert_int_eq(memcmp(rx.data + 4, f + r, hlen), 0);
		expect_eof(b.p.fd);
		peer_close(&b.p);
		take(b.s.ep, DAPL_TCM_ESTABLISHED);
		expect_aborted(b.s.ep);
		do_reset(b.s.ep);
	}
	for (i = 0; i < NKEYS; i++) {
		expect_untouched(&bufs[i]);
		buf_free(&bufs[i]);
	}
	bed_down(&b);
}
END_TEST

/* ---- 4. half-open handshakes ---------------------------------------------------- */

/* A real connection: our second endpoint (active) to the listener, our
 * first (passive) accepting, and a Send across. */
static void real_connect(struct dapl_tlisten *l, uint16_t port,
			 struct side *act, struct side *pas, struct buf *rb,
			 uint64_t ctx)
{
	struct evc c;
	struct dapl_tsge sge = sge_of(rb, 0, 8);

	do_connect(act->ep, port);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_uint_eq(c.ev.pdata_len, 2);
	ck_assert_int_eq(memcmp(c.pdata, "hi", 2), 0);
	do_accept(c.ev.conn, pas->ep);
	take(act->ep, DAPL_TCM_ESTABLISHED);
	take(pas->ep, DAPL_TCM_ESTABLISHED);
	post_recv(pas, rb, 64, 64, ctx);
	ck_assert_int_eq(T->post_send(act->ep, &sge, 1, ctx, DAPL_TPOST_SIGNALED), 0);
	expect_wc(pas->rcq, ctx, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 8);
	expect_wc(act->scq, ctx, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 8);
}

/* What half-open sockets send before they stop. */
enum { HO_NOTHING, HO_PART_KEY, HO_HEADER_ONLY, HO_PART_PDATA, HO_KINDS };

/* Connections that send nothing, or part of an MPA request, are dropped
 * (EOF) once DAPL_TCP_HANDSHAKE_MS has passed, not before, and never
 * reported; a real connection through the same listener meanwhile works,
 * and keeps working after they are gone. */
START_TEST(half_open_dropped)
{
	enum { PER_KIND = 3, N = HO_KINDS * PER_KIND };
	struct dapl_tlisten *l;
	struct side act, pas;
	struct buf rb;
	int fds[N], i;
	int64_t t[N], first;
	uint16_t port;
	uint8_t req[MPA_HDR_LEN + 40];
	struct dapl_tsge sge;

	dev_start("DAPL_TCP_HANDSHAKE_MS=200");
	l = do_listen(&port);
	side_make(&act, 4, 4);
	side_make(&pas, 4, 4);
	buf_make(&rb, pas.pd, 256, 9);
	mpa_put_hdr(req, true, MPA_FLAG_ENHANCED | 2, 40);
	memset(req + MPA_HDR_LEN, 0, 40);
	first = now_ms();
	for (i = 0; i < N; i++) {
		t[i] = now_ms();
		fds[i] = raw_connect(port);
		switch (i % HO_KINDS) {
		case HO_PART_KEY:
			send_all(fds[i], req, 10);
			break;
		case HO_HEADER_ONLY:
			send_all(fds[i], req, MPA_HDR_LEN);
			break;
		case HO_PART_PDATA:
			send_all(fds[i], req, MPA_HDR_LEN + 10);
			break;
		}
	}
	real_connect(l, port, &act, &pas, &rb, 0x41);
	if (now_ms() - first < HANDSHAKE_MS - 10) {
		/* (only where this machine was quick enough to tell) */
		for (i = 0; i < N; i++) {
			struct pollfd p = { .fd = fds[i], .events = POLLIN };

			ck_assert_msg(poll(&p, 1, 0) == 0, "half-open %d gone "
				      "before its deadline", i);
		}
	} else {
		fprintf(stderr, "half_open_dropped: too slow here to see the "
			"half-open ones still held during the real connect\n");
	}
	for (i = 0; i < N; i++) {
		expect_eof(fds[i]);
		ck_assert_msg(now_ms() - t[i] >= HANDSHAKE_MS - 5, "half-open %d "
			      "dropped after %lld ms, before its deadline", i,
			      (long long)(now_ms() - t[i]));
		close(fds[i]);
	}
	/* none of them was reported, the real connection still carries */
	ck_assert_int_eq(pending_for(l), 0);
	sge = sge_of(&rb, 0, 8);
	post_recv(&pas, &rb, 64, 64, 0x42);
	ck_assert_int_eq(T->post_send(act.ep, &sge, 1, 0x42, DAPL_TPOST_SIGNALED), 0);
	expect_wc(pas.rcq, 0x42, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 8);
	expect_wc(act.scq, 0x42, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 8);
	buf_free(&rb);
	side_free(&act);
	side_free(&pas);
	do_unlisten(l);
	dev_stop();
}
END_TEST

/* An initiator that asked for an RTR and never sends it: the accepted
 * endpoint ends with CONN_ERROR -ETIMEDOUT after the deadline, its
 * receives flush, and the peer sees the reply then EOF. */
START_TEST(rtr_never_comes)
{
	struct bed b;
	struct buf rb;
	struct evc c;
	int64_t t0;
	uint64_t ctx[2] = { 0x61, 0x62 };

	dev_start("DAPL_TCP_HANDSHAKE_MS=200");
	b.l = do_listen(&b.port);
	side_make(&b.s, 4, 4);
	buf_make(&rb, b.s.pd, 256, 5);
	t0 = now_ms();
	b.p.fd = raw_connect(b.port);
	peer_request(&b.p, 0);
	c = take(b.l, DAPL_TCM_CONNECT_REQUEST);
	do_accept(c.ev.conn, b.s.ep);
	post_recv(&b.s, &rb, 0, 128, ctx[0]);
	post_recv(&b.s, &rb, 128, 128, ctx[1]);
	peer_reply(&b.p);
	c = take(b.s.ep, DAPL_TCM_CONN_ERROR);
	ck_assert_int_eq(c.ev.status, -ETIMEDOUT);
	ck_assert_int_ge(now_ms() - t0, HANDSHAKE_MS - 5);
	expect_eof(b.p.fd);
	expect_flushed_once(b.s.rcq, ctx, 2, DAPL_TWC_RECV);
	expect_untouched(&rb);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* The next thing on fd is its end: we closed it (EOF, or a reset). */
static void expect_closed_at(int fd, int i, int line)
{
	int r = stream_end(fd);

	ck_assert_msg(r == 0 || r == -ECONNRESET, "line %d: half-open %d: %s, "
		      "wanted it closed", line, i, strerror(-r));
}

/* Nothing has come on fd, not even its end: still held. */
static void expect_held_at(int fd, int i, int line)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	ck_assert_msg(poll(&p, 1, 0) == 0, "line %d: half-open %d was closed "
		      "(revents %#x), wanted it held", line, i, p.revents);
}

#define expect_closed(fd, i) expect_closed_at(fd, i, __LINE__)
#define expect_held(fd, i) expect_held_at(fd, i, __LINE__)

/* One source (127.0.0.2) opens FLOOD half-open handshakes, more than the
 * device holds, some sending a byte of a request, all at once (the pump
 * is held while they connect); a quiet source (127.0.0.3) holds a few.
 * The flooding source keeps its HALF_OPEN_SRC newest: each one beyond
 * evicts its oldest, which its peer sees closed; the quiet source loses
 * none; a real connection from 127.0.0.1 coming after them all is
 * accepted and carries a Send.  No handshake expires here (the deadline
 * is far away): every close is an eviction.  The accept queue is FIFO,
 * so once the real connection is reported every flood socket has been
 * accepted and every eviction made. */
START_TEST(half_open_flood)
{
	enum { QUIET = 8 };
	struct dapl_tlisten *l;
	struct side act, pas;
	struct buf rb;
	static int fds[FLOOD];
	int quiet[QUIET], i;
	uint16_t port;

	dev_start(LONG_HANDSHAKE);
	l = do_listen(&port);
	side_make(&act, 4, 4);
	side_make(&pas, 4, 4);
	buf_make(&rb, pas.pd, 256, 11);
	for (i = 0; i < QUIET; i++)
		quiet[i] = raw_connect_from(port, 3);

	pthread_mutex_lock(&h.lock);            /* the pump waits */
	for (i = 0; i < FLOOD; i++) {
		fds[i] = raw_connect_from(port, 2);
		if (i % 2)
			send_all(fds[i], "M", 1);
	}
	pthread_mutex_unlock(&h.lock);

	real_connect(l, port, &act, &pas, &rb, 0x43);
	for (i = 0; i < FLOOD - HALF_OPEN_SRC; i++)
		expect_closed(fds[i], i);
	for (i = FLOOD - HALF_OPEN_SRC; i < FLOOD; i++)
		expect_held(fds[i], i);
	for (i = 0; i < QUIET; i++)
		expect_held(quiet[i], i);
	for (i = 0; i < FLOOD; i++)
		close(fds[i]);
	for (i = 0; i < QUIET; i++)
		close(quiet[i]);
	ck_assert_int_eq(pending_for(l), 0);
	buf_free(&rb);
	side_free(&act);
	side_free(&pas);
	do_unlisten(l);
	dev_stop();
}
END_TEST

/* Nine sources (127.0.0.2 to .10), each within its share, open
 * HALF_OPEN_MAX + HALF_OPEN_SRC half-open handshakes in turn: past
 * HALF_OPEN_MAX each newcomer evicts the device's oldest, so exactly the
 * first HALF_OPEN_SRC are closed, whatever their source, and every later
 * one is held; a real connection from 127.0.0.1 still gets in.  (The
 * last eviction, of the socket HALF_OPEN_SRC - 1, comes with the accept
 * of the last one: seen, every one has been accepted.) */
START_TEST(half_open_oldest_evicted)
{
	enum { NSRC = 9, N = HALF_OPEN_MAX + HALF_OPEN_SRC };
	struct dapl_tlisten *l;
	struct side act, pas;
	struct buf rb;
	static int fds[N];
	int i;
	uint16_t port;

	ck_assert_int_le(N, NSRC * HALF_OPEN_SRC);
	dev_start(LONG_HANDSHAKE);
	l = do_listen(&port);
	side_make(&act, 4, 4);
	side_make(&pas, 4, 4);
	buf_make(&rb, pas.pd, 256, 12);
	for (i = 0; i < N; i++)
		fds[i] = raw_connect_from(port, 2 + (unsigned)(i % NSRC));
	for (i = 0; i < HALF_OPEN_SRC; i++)
		expect_closed(fds[i], i);
	for (i = HALF_OPEN_SRC; i < N; i++)
		expect_held(fds[i], i);
	real_connect(l, port, &act, &pas, &rb, 0x44);
	for (i = 0; i < N; i++)
		close(fds[i]);
	ck_assert_int_eq(pending_for(l), 0);
	buf_free(&rb);
	side_free(&act);
	side_free(&pas);
	do_unlisten(l);
	dev_stop();
}
END_TEST

/* The same over IPv6 (::1): one source's FLOOD half-open handshakes keep
 * only its HALF_OPEN_SRC newest (an IPv6 address counts whole, without
 * its port). */
START_TEST(half_open_flood_ipv6)
{
	struct sockaddr_in6 a = { .sin6_family = AF_INET6 };
	struct dapl_tlisten *l;
	static int fds[FLOOD];
	int i, probe;
	uint16_t port;

	a.sin6_addr = in6addr_loopback;
	probe = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (probe < 0 || bind(probe, (struct sockaddr *)&a, sizeof(a))) {
		fprintf(stderr, "half_open_flood_ipv6: no ::1 here (%s), not "
			"run\n", strerror(errno));
		if (probe >= 0)
			close(probe);
		return;
	}
	close(probe);
	dev_start_at("::1 0", LONG_HANDSHAKE);
	l = do_listen(&port);
	a.sin6_port = htons(port);
	for (i = 0; i < FLOOD; i++) {
		struct pollfd p;
		int err = 0;
		socklen_t el = sizeof(err);

		fds[i] = socket(AF_INET6, SOCK_STREAM | SOCK_NONBLOCK |
				SOCK_CLOEXEC, 0);
		ck_assert_int_ge(fds[i], 0);
		if (connect(fds[i], (struct sockaddr *)&a, sizeof(a))) {
			ck_assert_msg(errno == EINPROGRESS, "connect: %s",
				      strerror(errno));
			p.fd = fds[i];
			p.events = POLLOUT;
			ck_assert_int_eq(poll(&p, 1, WAIT_MS), 1);
			ck_assert_int_eq(getsockopt(fds[i], SOL_SOCKET,
						    SO_ERROR, &err, &el), 0);
			ck_assert_msg(err == 0, "connect: %s", strerror(err));
		}
	}
	/* the last eviction comes with the last accept */
	for (i = 0; i < FLOOD - HALF_OPEN_SRC; i++)
		expect_closed(fds[i], i);
	for (i = FLOOD - HALF_OPEN_SRC; i < FLOOD; i++)
		expect_held(fds[i], i);
	for (i = 0; i < FLOOD; i++)
		close(fds[i]);
	ck_assert_int_eq(pending_for(l), 0);
	do_unlisten(l);
	dev_stop();
}
END_TEST

/* A connection request already reported to the consumer is not half-open:
 * no flood evicts it.  A peer from 127.0.0.2 sends its request and our
 * side sees it; then nine sources (its own among them) open more half-open
 * handshakes than the device holds.  Exactly the first HALF_OPEN_SRC of
 * those are evicted (so the reported one counted nowhere), and the
 * consumer's accept of the reported request still establishes. */
START_TEST(half_open_spares_reported)
{
	enum { NSRC = 9, N = HALF_OPEN_MAX + HALF_OPEN_SRC };
	struct bed b;
	struct evc c;
	static int fds[N];
	uint8_t f[64];
	int i;

	dev_start(LONG_HANDSHAKE);
	b.l = do_listen(&b.port);
	side_make(&b.s, 4, 4);
	b.p.fd = raw_connect_from(b.port, 2);
	peer_request(&b.p, 0);
	c = take(b.l, DAPL_TCM_CONNECT_REQUEST);
	for (i = 0; i < N; i++)
		fds[i] = raw_connect_from(b.port, 2 + (unsigned)(i % NSRC));
	for (i = 0; i < HALF_OPEN_SRC; i++)
		expect_closed(fds[i], i);
	for (i = HALF_OPEN_SRC; i < N; i++)
		expect_held(fds[i], i);
	do_accept(c.ev.conn, b.s.ep);
	peer_reply(&b.p);
	send_all(b.p.fd, f, mk_rtr(f));
	take(b.s.ep, DAPL_TCM_ESTABLISHED);
	for (i = 0; i < N; i++)
		close(fds[i]);
	bed_down(&b);
}
END_TEST

/* ---- 4b. a listener out of file descriptors ----------------------------------- */

#define FD_LIMIT 512            /* RLIMIT_NOFILE while the fds run out */
#define SPIN_TICKS 25           /* ticks the listener is watched for */
#define SPIN_CALLS 2000         /* accept4 calls that make a spin */

/* h.lock held: waits for the pump's passes until cond or WAIT_MS. */
#define pump_until(pred) do { \
	int64_t end_ = now_ms() + WAIT_MS; \
	while (!(pred) && left_ms(end_) > 0) { \
		struct timespec ts_; \
		clock_gettime(CLOCK_REALTIME, &ts_); \
		ts_.tv_sec += 1; \
		pthread_cond_timedwait(&h.cond, &h.lock, &ts_); \
	} \
} while (0)

/* The process runs out of fds (RLIMIT_NOFILE lowered, every fd below it
 * taken) and a client connects, its request sent.  The listener's accept4
 * fails with EMFILE: the progress thread must not spin on it.  Measured by
 * counters, not time: over SPIN_TICKS ticks of the device's timer it makes
 * about one accept4 call a tick (today's listener makes thousands and
 * the timer does not even run), and the pump wakes about once a tick.
 * (Not under valgrind: see suite().)
 * Then the fds come back: the waiting client's request is reported
 * without anything done to the listener, accepted and established, and a
 * new connection works too. */
START_TEST(listener_out_of_fds)
{
	struct dapl_tlisten *l;
	struct side act, pas, pas2;
	struct buf rb;
	struct peer p;
	struct rlimit old, low;
	struct evc c;
	static int fill[FD_LIMIT];
	int nfill = 0, i;
	uint16_t port;
	unsigned a0, t0, p0, a1, t1, p1;
	uint8_t f[64];

	dev_start(NULL);
	l = do_listen(&port);
	side_make(&act, 4, 4);
	side_make(&pas, 4, 4);
	side_make(&pas2, 4, 4);
	buf_make(&rb, pas2.pd, 256, 14);
	/* the client's socket, made while there are fds */
	p.fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(p.fd, 0);

	ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &old), 0);
	low = old;
	if (low.rlim_cur > FD_LIMIT)
		low.rlim_cur = FD_LIMIT;
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &low), 0);
	for (;;) {
		int fd = dup(p.fd);

		if (fd < 0) {
			ck_assert_msg(errno == EMFILE, "dup: %s", strerror(errno));
			break;
		}
		ck_assert_msg(nfill < FD_LIMIT, "dup keeps giving fds past "
			      "RLIMIT_NOFILE %d", FD_LIMIT);
		fill[nfill++] = fd;
	}

	pthread_mutex_lock(&h.lock);
	a0 = atomic_load(&h.dev->accept_calls);
	pthread_mutex_unlock(&h.lock);
	raw_connect_fd(p.fd, port, 0);
	peer_request(&p, 0);
	pthread_mutex_lock(&h.lock);
	/* the listener has met the client, and failed */
	pump_until(atomic_load(&h.dev->accept_calls) != a0);
	a0 = atomic_load(&h.dev->accept_calls);
	t0 = atomic_load(&h.dev->ticks);
	p0 = h.passes;
	pump_until(atomic_load(&h.dev->ticks) - t0 >= SPIN_TICKS ||
		   atomic_load(&h.dev->accept_calls) - a0 >= SPIN_CALLS);
	a1 = atomic_load(&h.dev->accept_calls) - a0;
	t1 = atomic_load(&h.dev->ticks) - t0;
	p1 = h.passes - p0;
	pthread_mutex_unlock(&h.lock);
	ck_assert_int_eq(pending_for(l), 0);

	for (i = 0; i < nfill; i++)
		close(fill[i]);
	ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &old), 0);
	ck_assert_msg(a1 <= t1 + 2, "the listener spins: %u accept4 calls in "
		      "%u ticks", a1, t1);
	ck_assert_msg(p1 <= 2 * t1 + 4, "the progress thread woke %u times in "
		      "%u ticks", p1, t1);
	ck_assert_msg(t1 >= SPIN_TICKS, "the timer stopped (%u ticks): who "
		      "tries the listener again?", t1);

	/* fds are back: the client waiting in the backlog gets through */
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_uint_eq(c.ev.pdata_len, 0);
	do_accept(c.ev.conn, pas.ep);
	peer_reply(&p);
	send_all(p.fd, f, mk_rtr(f));
	take(pas.ep, DAPL_TCM_ESTABLISHED);
	/* and so does a new one */
	real_connect(l, port, &act, &pas2, &rb, 0x45);
	peer_close(&p);
	buf_free(&rb);
	side_free(&act);
	side_free(&pas);
	side_free(&pas2);
	do_unlisten(l);
	dev_stop();
}
END_TEST

/* ---- 5. garbage after a valid handshake ------------------------------------------- */

/* _i: 0 random bytes, 1 a Send with a bad DDP version, 2 an untagged FPDU
 * with a reserved RDMAP opcode, 3 a Send replaying the MSN of the one
 * before, 4 a ULPDU_Length shorter than the DDP header, 5 the second FPDU
 * of a Send at the wrong message offset (its receive half filled).  Each
 * gets its Terminate, our endpoint CONN_ERROR, and the receives still
 * posted complete FLUSHED exactly once. */
START_TEST(garbage_after_handshake)
{
	struct bed b;
	struct buf rb;
	uint8_t f[512];
	size_t n = 0, hlen = 4, skip = 0;
	uint64_t ctx[3] = { 0x81, 0x82, 0x83 };
	unsigned layer = TERM_DDP, etype = TERM_DDP_UNTAGGED,
		 code = TERM_CODE_BAD_VERSION;
	int i;

	bed_up(&b, 4, 4);
	buf_make(&rb, b.s.pd, 3 * 64, 6);
	for (i = 0; i < 3; i++)
		post_recv(&b.s, &rb, (size_t)i * 64, 64, ctx[i]);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	switch (_i) {
	case 0:
		rng_seed();
		do {
			for (i = 0; i < 256; i++)
				f[i] = (uint8_t)rng32();
			/* (1 in 16 would carry valid DDP and RDMAP versions) */
		} while ((get16(f + 2) & DDP_VERSION_MASK) == DDP_VERSION_BITS &&
			 (get16(f + 2) & RDMAP_VERSION_MASK) == RDMAP_VERSION_BITS);
		n = 256;
		break;
	case 1:
		n = mk_send(f, 1, "hello", 5, 0);
		put16(f + 2, (get16(f + 2) & ~DDP_VERSION_MASK) | 0x0200);
		break;
	case 2:
		n = mk_send(f, 1, "hello", 5, 0);
		put16(f + 2, (get16(f + 2) & ~RDMAP_OP_MASK) | 0xc);
		layer = TERM_RDMAP;
		etype = TERM_RDMAP_OP;
		code = TERM_CODE_UNEXPECTED_OP;
		hlen = 2 + DDP_UNTAGGED_LEN;
		break;
	case 3:
		skip = mk_send(f, 1, "first", 5, 0);
		n = skip + mk_send(f + skip, 1, "again", 5, 0);
		code = TERM_CODE_BAD_MSN;
		hlen = 2 + DDP_UNTAGGED_LEN;
		break;
	case 4:
		n = mk_send(f, 1, "hello", 5, 0);
		put16(f, DDP_UNTAGGED_LEN - 8);
		break;
	case 5:
		/* 8 bytes at MO 0, not last; then MO 4 instead of 8 */
		skip = mk_send(f, 1, "01234567", 8, 0);
		put16(f + 2, get16(f + 2) & ~DDP_L);
		n = skip + mk_send(f + skip, 1, "89ab", 4, 0);
		put32(f + skip + 16, 4);
		code = TERM_CODE_BAD_MO;
		hlen = 2 + DDP_UNTAGGED_LEN;
		break;
	}
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, layer, etype, code, f + skip, hlen);
	expect_aborted(b.s.ep);
	if (_i == 3) {
		expect_wc(b.s.rcq, ctx[0], DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 5);
		ck_assert_int_eq(memcmp(rb.p, "first", 5), 0);
		expect_flushed_once(b.s.rcq, ctx + 1, 2, DAPL_TWC_RECV);
	} else {
		expect_flushed_once(b.s.rcq, ctx, 3, DAPL_TWC_RECV);
		if (_i != 5)    /* (a flushed receive's buffer says nothing) */
			expect_untouched(&rb);
	}
	expect_cq_empty(b.s.scq);
	/* nothing more when the endpoint goes */
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_reset(b.s.ep), 0);
	pthread_mutex_unlock(&h.lock);
	expect_cq_empty(b.s.rcq);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* ---- 6. a peer that stops reading ------------------------------------------------ */

/* 1 MiB Sends to a libdat peer that never reads and so never acks: posts
 * take the queue to its depth and then say -ENOSPC, none blocks, none
 * completes; a disconnect completes every one FLUSHED exactly once. */
START_TEST(peer_stops_reading)
{
	enum { DEPTH = 8, MIB = 1 << 20 };
	struct bed b;
	struct buf sb, rb;
	uint64_t sctx[DEPTH], rctx[2] = { 0x91, 0x92 };
	struct dapl_tsge sge;
	int i, posted = 0, ret;

	bed_up(&b, DEPTH, 4);
	buf_make(&sb, b.s.pd, MIB, 12);
	buf_make(&rb, b.s.pd, 256, 13);
	post_recv(&b.s, &rb, 0, 128, rctx[0]);
	post_recv(&b.s, &rb, 128, 128, rctx[1]);
	peer_connect(&b.p, b.l, b.port, b.s.ep, PEER_EXT);
	sge = sge_of(&sb, 0, MIB);
	for (;;) {
		ret = T->post_send(b.s.ep, &sge, 1, 0x9000 + (uint64_t)posted,
				   DAPL_TPOST_SIGNALED);
		if (ret)
			break;
		ck_assert_int_lt(posted, DEPTH);
		sctx[posted] = 0x9000 + (uint64_t)posted;
		posted++;
		/* our side drives (and tries to send) on every poll */
		expect_cq_empty(b.s.scq);
	}
	ck_assert_int_eq(ret, -ENOSPC);
	ck_assert_int_eq(posted, DEPTH);
	/* they went out (and sit unread at the peer): sent, not acked */
	{
		struct pollfd p = { .fd = b.p.fd, .events = POLLIN };
		int queued = 0;

		ck_assert_int_eq(poll(&p, 1, WAIT_MS), 1);
		ck_assert_int_eq(ioctl(b.p.fd, FIONREAD, &queued), 0);
		ck_assert_int_gt(queued, 0);
	}
	for (i = 0; i < 4; i++) {
		expect_cq_empty(b.s.scq);
		expect_cq_empty(b.s.rcq);
		ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x9999,
					      DAPL_TPOST_SIGNALED), -ENOSPC);
	}
	do_disconnect(b.s.ep);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	expect_flushed_once(b.s.scq, sctx, DEPTH, DAPL_TWC_SEND);
	expect_flushed_once(b.s.rcq, rctx, 2, DAPL_TWC_RECV);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	buf_free(&sb);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* ---- 7. a peer that lies about acks ---------------------------------------------- */

/* The peer sends s (a Send, MSN msn) carrying placed count cnt; our side
 * completes receive rctx with it, and everything the FPDU made complete
 * is in the CQ once the drive that placed it has let go of the ep. */
static void peer_send_count(struct bed *b, uint32_t msn, uint32_t cnt,
			    uint64_t rctx)
{
	uint8_t f[64];

	send_all(b->p.fd, f, mk_send(f, msn, "ack", 3, cnt));
	expect_wc(b->s.rcq, rctx, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 3);
	ep_sync(b->s.ep);
}

/* The peer reads our next FPDU: a Send (MSN msn) or a Read Request. */
static void peer_sees_send(struct bed *b, uint32_t msn, uint32_t len)
{
	ck_assert(next_fpdu(&b->p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_SEND && rx.last);
	ck_assert_uint_eq(rx.qn, DDP_QN_SEND);
	ck_assert_uint_eq(rx.msn, msn);
	ck_assert_uint_eq(rx.dlen, len);
}

/* With the ack extension, a Send completes only once the peer's placed
 * count covers it.  A count beyond what we sent is ignored (nothing
 * completes early, not even what is sent after it), and a count going
 * backwards is ignored (Sends held behind an RDMA Read still complete by
 * the highest count once the Read does). */
START_TEST(lying_acks)
{
	struct bed b;
	struct buf sb, rb, lb;
	struct dapl_tsge sge;
	uint32_t sink;
	uint8_t f[256], d[64];
	struct dapl_twc wc;
	int i;

	bed_up(&b, 8, 8);
	buf_make(&sb, b.s.pd, 256, 14);
	buf_make(&rb, b.s.pd, 8 * 16, 15);
	buf_make(&lb, b.s.pd, 64, 16);
	for (i = 0; i < 8; i++)
		post_recv(&b.s, &rb, (size_t)i * 16, 16, 0xa0 + (uint64_t)i);
	peer_connect(&b.p, b.l, b.port, b.s.ep, PEER_EXT);

	/* S1 out (seq 1); the peer claims 5 placed */
	sge = sge_of(&sb, 0, 100);
	ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x51, DAPL_TPOST_SIGNALED), 0);
	peer_sees_send(&b, 1, 100);
	peer_send_count(&b, 1, 5, 0xa0);
	expect_cq_empty(b.s.scq);
	/* S2 out (seq 2); 3, one past it, is still a lie */
	ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x52, DAPL_TPOST_SIGNALED), 0);
	peer_sees_send(&b, 2, 100);
	expect_cq_empty(b.s.scq);
	peer_send_count(&b, 2, 3, 0xa1);
	expect_cq_empty(b.s.scq);
	/* the truth, one at a time */
	peer_send_count(&b, 3, 1, 0xa2);
	expect_wc(b.s.scq, 0x51, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 0);
	expect_cq_empty(b.s.scq);
	peer_send_count(&b, 4, 2, 0xa3);
	expect_wc(b.s.scq, 0x52, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 0);
	expect_cq_empty(b.s.scq);

	/* a Read, then S3 (seq 3) and S4 (seq 4): the Sends complete after
	 * the Read, by the count */
	sge = sge_of(&lb, 0, 64);
	ck_assert_int_eq(T->post_rdma_read(b.s.ep, &sge, 1, 0x1000, 0xabcd0001,
					   0x5d, DAPL_TPOST_SIGNALED), 0);
	sge = sge_of(&sb, 0, 100);
	ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x53, DAPL_TPOST_SIGNALED), 0);
	ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x54, DAPL_TPOST_SIGNALED), 0);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_READ_REQ);
	ck_assert_uint_eq(rx.qn, DDP_QN_READ);
	ck_assert_uint_eq(rx.msn, 1);
	sink = get32(rx.data - RDMAP_READ_REQ_LEN);
	ck_assert_uint_eq(get64(rx.data - RDMAP_READ_REQ_LEN + 4), 0);
	ck_assert_uint_eq(get32(rx.data - RDMAP_READ_REQ_LEN + 12), 64);
	ck_assert_uint_eq(get32(rx.data - RDMAP_READ_REQ_LEN + 16), 0xabcd0001);
	ck_assert_uint_eq(get64(rx.data - RDMAP_READ_REQ_LEN + 20), 0x1000);
	peer_sees_send(&b, 3, 100);
	peer_sees_send(&b, 4, 100);
	peer_send_count(&b, 5, 4, 0xa4);        /* both placed */
	expect_cq_empty(b.s.scq);               /* (behind the Read) */
	peer_send_count(&b, 6, 3, 0xa5);        /* backwards */
	expect_cq_empty(b.s.scq);
	/* the Read Response, carrying the backwards count again */
	pattern(d, sizeof(d), 99);
	send_all(b.p.fd, f, mk_read_resp(f, sink, 0, d, sizeof(d), true, 3));
	expect_wc(b.s.scq, 0x5d, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 0);
	ep_sync(b.s.ep);
	ck_assert_int_eq(memcmp(lb.p, d, sizeof(d)), 0);
	/* completed by the same drive as the Read, in order */
	ck_assert_msg(T->cq_poll(b.s.scq, &wc, 1) == 1, "S3 did not complete "
		      "with the Read");
	ck_assert_msg(wc.context == 0x53 && wc.status == DAPL_TWC_SUCCESS,
		      "ctx %#llx status %d, wanted S3 SUCCESS",
		      (unsigned long long)wc.context, wc.status);
	ck_assert_msg(T->cq_poll(b.s.scq, &wc, 1) == 1, "S4 did not complete "
		      "with the Read: a backwards count was taken");
	ck_assert_msg(wc.context == 0x54 && wc.status == DAPL_TWC_SUCCESS,
		      "ctx %#llx status %d, wanted S4 SUCCESS (a backwards "
		      "count was taken)", (unsigned long long)wc.context,
		      wc.status);
	expect_cq_empty(b.s.scq);

	do_disconnect(b.s.ep);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	{
		uint64_t rest[2] = { 0xa6, 0xa7 };

		expect_flushed_once(b.s.rcq, rest, 2, DAPL_TWC_RECV);
	}
	expect_cq_empty(b.s.scq);
	buf_free(&sb);
	buf_free(&rb);
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

/* A libdat initiator that takes FPDUs right behind the reply
 * (TCP_EXT_F_EARLY): the reply asks for no RTR, the accepted endpoint is
 * ESTABLISHED before the peer sends another byte, and it may send first
 * (its Send follows the reply on the wire).  _i 1: the EARLY bit without
 * the ACKS bit is no libdat trailer: those 8 bytes are the consumer's
 * private data and the RTR is still awaited. */
START_TEST(early_initiator)
{
	struct bed b;
	struct buf sb, rb;
	struct dapl_tsge sge;
	struct evc c;
	uint8_t f[MPA_HDR_LEN + MPA_PD_MAX];
	uint32_t bits = 0, pd_len = 0;

	bed_up(&b, 4, 4);
	buf_make(&sb, b.s.pd, 256, 21);
	buf_make(&rb, b.s.pd, 64, 22);
	post_recv(&b.s, &rb, 0, 64, 0xe0);
	b.p.fd = raw_connect(b.port);
	if (_i == 0) {
		peer_request(&b.p, PEER_EXT | PEER_EARLY);
		c = take(b.l, DAPL_TCM_CONNECT_REQUEST);
		ck_assert_uint_eq(c.ev.pdata_len, 0);
		do_accept(c.ev.conn, b.s.ep);
		/* connected with nothing more from the peer */
		take(b.s.ep, DAPL_TCM_ESTABLISHED);
		sge = sge_of(&sb, 0, 100);
		ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x61,
					      DAPL_TPOST_SIGNALED), 0);
		peer_reply(&b.p);
		peer_sees_send(&b, 1, 100);
		expect_cq_empty(b.s.scq);
		peer_send_count(&b, 1, 1, 0xe0);
		expect_wc(b.s.scq, 0x61, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 0);
	} else {
		mpa_put_hdr(f, true, MPA_FLAG_ENHANCED | 2,
			    MPA_V2_LEN + TCP_EXT_LEN);
		put16(f + MPA_HDR_LEN, 4 | MPA_V2_P2P);
		put16(f + MPA_HDR_LEN + 2, 4 | MPA_V2_WRITE_RTR);
		put32(f + MPA_HDR_LEN + 4, TCP_EXT_MAGIC);
		put16(f + MPA_HDR_LEN + 8, TCP_EXT_VERSION);
		put16(f + MPA_HDR_LEN + 10, TCP_EXT_F_EARLY);
		send_all(b.p.fd, f, MPA_HDR_LEN + MPA_V2_LEN + TCP_EXT_LEN);
		c = take(b.l, DAPL_TCM_CONNECT_REQUEST);
		ck_assert_uint_eq(c.ev.pdata_len, TCP_EXT_LEN);
		do_accept(c.ev.conn, b.s.ep);
		ck_assert_int_eq(read_exact(b.p.fd, f, MPA_HDR_LEN), 1);
		ck_assert(mpa_get_hdr(f, false, &bits, &pd_len));
		ck_assert_uint_eq(pd_len, MPA_V2_LEN);
		ck_assert_int_eq(read_exact(b.p.fd, f + MPA_HDR_LEN, pd_len), 1);
		ck_assert_uint_eq(get16(f + MPA_HDR_LEN), 4 | MPA_V2_P2P);
		ck_assert_uint_eq(get16(f + MPA_HDR_LEN + 2), 4 | MPA_V2_WRITE_RTR);
		/* not ESTABLISHED, nothing sent, until the RTR */
		sge = sge_of(&sb, 0, 100);
		ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x61,
					      DAPL_TPOST_SIGNALED), -ENOTCONN);
		send_all(b.p.fd, f, mk_rtr(f));
		take(b.s.ep, DAPL_TCM_ESTABLISHED);
		ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0x61,
					      DAPL_TPOST_SIGNALED), 0);
		b.p.ext = false;
		peer_sees_send(&b, 1, 100);
		/* without acks a Send completes once the socket took it */
		expect_wc(b.s.scq, 0x61, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 0);
	}
	do_disconnect(b.s.ep);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	if (_i == 1) {
		uint64_t rest = 0xe0;

		expect_flushed_once(b.s.rcq, &rest, 1, DAPL_TWC_RECV);
	}
	expect_cq_empty(b.s.scq);
	expect_cq_empty(b.s.rcq);
	buf_free(&sb);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* An initiator that sends its first FPDUs in the same segment as its
 * request, without waiting for the reply (_i 0: with the EARLY flag, a
 * Send; 1: the RTR and a Send): read with the request, they are kept and
 * placed once the accept is made, though the socket has nothing more to
 * wake anyone for them. */
START_TEST(request_with_data)
{
	struct bed b;
	struct buf rb;
	uint8_t f[256];
	size_t n;

	bed_up(&b, 4, 4);
	buf_make(&rb, b.s.pd, 64, 24);
	post_recv(&b.s, &rb, 0, 64, 0xf0);
	b.p.fd = raw_connect(b.port);
	mpa_put_hdr(f, true, MPA_FLAG_ENHANCED | 2, MPA_V2_LEN + TCP_EXT_LEN);
	put16(f + MPA_HDR_LEN, 4 | MPA_V2_P2P);
	put16(f + MPA_HDR_LEN + 2, 4 | MPA_V2_WRITE_RTR);
	put32(f + MPA_HDR_LEN + 4, TCP_EXT_MAGIC);
	put16(f + MPA_HDR_LEN + 8, TCP_EXT_VERSION);
	put16(f + MPA_HDR_LEN + 10,
	      TCP_EXT_F_ACKS | (_i == 0 ? TCP_EXT_F_EARLY : 0));
	n = MPA_HDR_LEN + MPA_V2_LEN + TCP_EXT_LEN;
	if (_i == 1)
		n += mk_rtr(f + n);
	n += mk_send(f + n, 1, "early", 5, 0);
	send_all(b.p.fd, f, n);
	b.p.ext = true;
	b.p.early = _i == 0;
	b.p.x7306 = false;
	b.p.count = 0;
	{
		struct evc c = take(b.l, DAPL_TCM_CONNECT_REQUEST);

		ck_assert_uint_eq(c.ev.pdata_len, 0);
		do_accept(c.ev.conn, b.s.ep);
	}
	take(b.s.ep, DAPL_TCM_ESTABLISHED);
	expect_wc(b.s.rcq, 0xf0, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 5);
	ep_sync(b.s.ep);
	ck_assert_int_eq(memcmp(rb.p, "early", 5), 0);
	peer_reply(&b.p);
	do_disconnect(b.s.ep);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	expect_cq_empty(b.s.rcq);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* Our side initiates; the peer is a raw listener.  Our request offers
 * peer-to-peer with a zero-length Write as RTR and announces ACKS|EARLY;
 * the peer replies as a libdat responder does (no RTR asked) with a Send
 * in the same segment: our endpoint is ESTABLISHED with the reply's
 * private data, sends no RTR, and places the Send though the socket has
 * nothing more to wake anyone for it. */
START_TEST(early_responder)
{
	struct sockaddr_in a = g_lo;
	socklen_t al = sizeof(a);
	struct side s;
	struct buf rb;
	struct peer p = { .fd = -1 };
	uint8_t f[512];
	uint32_t bits = 0, pd_len = 0;
	int lfd;
	size_t n;
	struct evc c;

	dev_start(NULL);
	side_make(&s, 4, 4);
	buf_make(&rb, s.pd, 64, 25);
	post_recv(&s, &rb, 0, 64, 0xd0);
	lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(lfd, 0);
	ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(listen(lfd, 1), 0);
	ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &al), 0);
	do_connect(s.ep, ntohs(a.sin_port));
	p.fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	ck_assert_int_ge(p.fd, 0);
	/* our request: RTR offered, ACKS|EARLY|RFC7306 announced, "hi" */
	ck_assert_int_eq(read_exact(p.fd, f, MPA_HDR_LEN), 1);
	ck_assert(mpa_get_hdr(f, true, &bits, &pd_len));
	ck_assert_uint_eq(bits, MPA_FLAG_ENHANCED | 2);
	ck_assert_uint_eq(pd_len, MPA_V2_LEN + 2 + TCP_EXT_LEN);
	ck_assert_int_eq(read_exact(p.fd, f + MPA_HDR_LEN, pd_len), 1);
	ck_assert_uint_eq(get16(f + MPA_HDR_LEN), 4 | MPA_V2_P2P);
	ck_assert_uint_eq(get16(f + MPA_HDR_LEN + 2), 4 | MPA_V2_WRITE_RTR);
	ck_assert_int_eq(memcmp(f + MPA_HDR_LEN + MPA_V2_LEN, "hi", 2), 0);
	ck_assert_uint_eq(get32(f + MPA_HDR_LEN + 6), TCP_EXT_MAGIC);
	ck_assert_uint_eq(get16(f + MPA_HDR_LEN + 12),
			  TCP_EXT_F_ACKS | TCP_EXT_F_EARLY | TCP_EXT_F_RFC7306);
	/* the reply, "yo", then a Send in the same segment */
	mpa_put_hdr(f, false, MPA_FLAG_ENHANCED | 2, MPA_V2_LEN + 2 + TCP_EXT_LEN);
	put16(f + MPA_HDR_LEN, 4);
	put16(f + MPA_HDR_LEN + 2, 4);
	memcpy(f + MPA_HDR_LEN + MPA_V2_LEN, "yo", 2);
	put32(f + MPA_HDR_LEN + 6, TCP_EXT_MAGIC);
	put16(f + MPA_HDR_LEN + 10, TCP_EXT_VERSION);
	put16(f + MPA_HDR_LEN + 12, TCP_EXT_F_ACKS | TCP_EXT_F_EARLY);
	n = MPA_HDR_LEN + MPA_V2_LEN + 2 + TCP_EXT_LEN;
	n += mk_send(f + n, 1, "first", 5, 0);
	send_all(p.fd, f, n);
	c = take(s.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_uint_eq(c.ev.pdata_len, 2);
	ck_assert_int_eq(memcmp(c.pdata, "yo", 2), 0);
	/* a responder that did not echo RFC 7306: none of it */
	ck_assert_uint_eq(T->ep_extensions(s.ep), 0);
	expect_wc(s.rcq, 0xd0, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 5);
	ep_sync(s.ep);
	ck_assert_int_eq(memcmp(rb.p, "first", 5), 0);
	/* no RTR: what comes from us is the ack of that Send, bare */
	p.ext = true;
	ck_assert(read_fpdu(p.fd, &rx));
	ck_assert_msg(rx.tagged && rx.op == RDMAP_WRITE && rx.stag == 0 &&
		      rx.dlen == 0 && rx.crc == 1, "an RTR or something else "
		      "(stag %#x len %u count %u)", rx.stag, rx.dlen, rx.crc);
	do_disconnect(s.ep);
	take(s.ep, DAPL_TCM_DISCONNECTED);
	close(p.fd);
	close(lfd);
	buf_free(&rb);
	side_free(&s);
	dev_stop();
}
END_TEST

/* A burst of RDMA Writes read in one drive: the placed count goes back
 * while the drive goes on, at least every TCP_ACK_MSGS (16) messages, not
 * once at its end (a sender with a short queue would wait for it). */
#define BURST 40
START_TEST(acks_keep_up)
{
	struct bed b;
	struct buf t;
	uint8_t f[BURST * 64], d[BURST][16];
	uint32_t last = 0;
	size_t n = 0;
	int i;

	bed_up(&b, 4, 4);
	buf_make(&t, b.s.pd, sizeof(d), 23);
	peer_connect(&b.p, b.l, b.port, b.s.ep, PEER_EXT);
	for (i = 0; i < BURST; i++) {
		pattern(d[i], sizeof(d[i]), 100 + (unsigned)i);
		n += mk_write(f + n, t.rkey, buf_addr(&t) + (uint64_t)i * 16,
			      d[i], 16, 0);
	}
	send_all(b.p.fd, f, n);
	while (last < BURST) {
		ck_assert_msg(read_fpdu(b.p.fd, &rx), "no ack after %u", last);
		ck_assert_msg(rx.tagged && rx.op == RDMAP_WRITE && rx.stag == 0 &&
			      rx.dlen == 0 && rx.last, "not a bare ack");
		ck_assert_msg(rx.crc > last && rx.crc - last <= 16 &&
			      rx.crc <= BURST, "placed count %u after %u",
			      rx.crc, last);
		last = rx.crc;
	}
	ep_sync(b.s.ep);
	ck_assert_int_eq(memcmp(t.p, d, sizeof(d)), 0);
	do_disconnect(b.s.ep);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	buf_free(&t);
	bed_down(&b);
}
END_TEST

/* ---- 8. Read Responses nobody asked for ------------------------------------------ */

/* _i: 0 a Read Response with no Read outstanding, aimed like an RDMA Write
 * at a registration of ours (its STag and address); with a Read
 * outstanding: 1 to another STag (a real registration's) at the right
 * offset, 2 to the sink STag at the wrong offset, 3 to the sink with more
 * than was asked (not the last FPDU), 4 a second Response after the Read
 * was answered, 5 a last FPDU that ends short of what was asked.  Each:
 * Terminate (DDP layer, tagged buffer error: invalid STag, or base/bounds
 * for the sink's own STag), nothing placed, the Read FLUSHED. */
START_TEST(unasked_read_response)
{
	struct bed b;
	struct buf target, lb;
	struct dapl_tsge sge;
	uint8_t f[512], d[128], first[64];
	uint32_t sink = 0, stag;
	uint64_t to = 0;
	uint32_t len = 64;
	bool last = true;
	unsigned code = TERM_CODE_INVALID_STAG;
	size_t n;

	bed_up(&b, 4, 4);
	buf_make(&target, b.s.pd, 4096, 17);
	buf_make(&lb, b.s.pd, 64, 18);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	pattern(d, sizeof(d), 77);
	if (_i > 0) {
		sge = sge_of(&lb, 0, 64);
		ck_assert_int_eq(T->post_rdma_read(b.s.ep, &sge, 1, 0x2000, 0x1234,
						   0xbd, DAPL_TPOST_SIGNALED), 0);
		ck_assert(next_fpdu(&b.p, &rx));
		ck_assert(!rx.tagged && rx.op == RDMAP_READ_REQ);
		sink = get32(rx.data - RDMAP_READ_REQ_LEN);
		ck_assert_uint_eq(get32(rx.data - RDMAP_READ_REQ_LEN + 12), 64);
	}
	stag = sink;
	switch (_i) {
	case 0:
		/* like an RDMA Write: a registration's STag and address */
		stag = target.rkey;
		to = buf_addr(&target);
		break;
	case 1:
		/* right offset and length, another (real) STag: only the
		 * sink STag check stands in the way */
		stag = target.rkey;
		if (stag == sink)   /* (1 in 2^32) */
			stag = sink ^ 1;
		break;
	case 2:
		to = 8;
		code = TERM_CODE_BOUNDS;
		break;
	case 3:
		/* not the last FPDU: only the length check stands between
		 * these 128 bytes and the 64-byte sink */
		len = 128;
		last = false;
		code = TERM_CODE_BOUNDS;
		break;
	case 5:
		/* the last FPDU, short of what was asked */
		len = 32;
		code = TERM_CODE_BOUNDS;
		break;
	case 4:
		send_all(b.p.fd, f, mk_read_resp(f, sink, 0, d, 64, true, 0));
		expect_wc(b.s.scq, 0xbd, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 0);
		ep_sync(b.s.ep);
		ck_assert_int_eq(memcmp(lb.p, d, 64), 0);
		memcpy(first, lb.p, 64);
		pattern(d, sizeof(d), 88);
		break;
	}
	n = mk_read_resp(f, stag, to, d, len, last, 0);
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, TERM_DDP, TERM_DDP_TAGGED, code, f,
			 2 + DDP_TAGGED_LEN);
	expect_aborted(b.s.ep);
	if (_i > 0 && _i != 4)
		expect_wc(b.s.scq, 0xbd, DAPL_TWC_RDMA_READ, DAPL_TWC_FLUSHED, 0);
	expect_cq_empty(b.s.scq);
	expect_untouched(&target);
	if (_i == 4)
		ck_assert_int_eq(memcmp(lb.p, first, 64), 0);
	else
		expect_untouched(&lb);
	buf_free(&target);
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

/* The peer refuses our RDMA Read with a Terminate (RDMAP layer, remote
 * protection error, invalid STag) quoting the Read Request: the Read
 * completes REMOTE_ACCESS, once, and the connection ends.  _i 1: the same
 * Terminate as siw (Linux 6.1) lays it out, little-endian bitfields with
 * Layer and EType nibbles swapped and the M/D/R bits at the low end. */
START_TEST(peer_terminates_read)
{
	struct bed b;
	struct buf lb;
	struct dapl_tsge sge;
	uint8_t f[256], req[2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN];
	uint8_t tc[4 + sizeof(req)];
	size_t hl, n;

	bed_up(&b, 4, 4);
	buf_make(&lb, b.s.pd, 64, 19);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	sge = sge_of(&lb, 0, 64);
	ck_assert_int_eq(T->post_rdma_read(b.s.ep, &sge, 1, 0x2000, 0x1234,
					   0xbe, DAPL_TPOST_SIGNALED), 0);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_READ_REQ);
	/* the Read Request as it came: MPA length, DDP and RDMAP headers */
	memcpy(req, rx.b, sizeof(req));
	if (_i == 0) {
		tc[0] = (uint8_t)(TERM_RDMAP << 4 | TERM_RDMAP_PROT);
		tc[1] = TERM_CODE_INVALID_STAG;
		put16(tc + 2, TERM_HDRCT_M | TERM_HDRCT_D | TERM_HDRCT_R);
	} else {
		tc[0] = (uint8_t)(TERM_RDMAP_PROT << 4 | TERM_RDMAP);
		tc[1] = TERM_CODE_INVALID_STAG;
		tc[2] = 0x07;           /* M, D, R as bits 0, 1, 2 */
		tc[3] = 0;
	}
	memcpy(tc + 4, req, sizeof(req));
	hl = fpdu_put_untagged(f, DDP_UNTAGGED_LEN + sizeof(tc), true,
			       RDMAP_TERMINATE, DDP_QN_TERM, 1, 0);
	n = fpdu_finish(f, hl, tc, sizeof(tc), 0);
	send_all(b.p.fd, f, n);
	expect_wc(b.s.scq, 0xbe, DAPL_TWC_RDMA_READ, DAPL_TWC_REMOTE_ACCESS, 0);
	expect_aborted(b.s.ep);
	expect_cq_empty(b.s.scq);
	expect_untouched(&lb);
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

/* ---- the FIN goes whoever else holds the socket ---------------------------- */

/* Linux 6.10 and later: a thread scanning an epoll ready list holds a
 * reference to each socket for a moment, and a close() that loses that
 * race leaves the release (and the FIN) to whenever that thread wakes.
 * A dup() stands in for that reference here: the peer must see the end
 * of the stream at once anyway.  _i: 0 a disconnect, 1 a reject of the
 * peer's request (the listening side's socket). */
START_TEST(fin_while_socket_held)
{
	struct bed b;
	struct evc c;
	int held;

	bed_up(&b, 4, 4);
	if (_i == 0) {
		peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
		held = dup(b.s.ep->fd);
		ck_assert_int_ge(held, 0);
		do_disconnect(b.s.ep);
		take(b.s.ep, DAPL_TCM_DISCONNECTED);
	} else {
		b.p.fd = raw_connect(b.port);
		peer_request(&b.p, 0);
		c = take(b.l, DAPL_TCM_CONNECT_REQUEST);
		held = dup(c.ev.conn->fd);
		ck_assert_int_ge(held, 0);
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->reject(c.ev.conn, NULL, 0), 0);
		pthread_mutex_unlock(&h.lock);
		/* the MPA reply with the reject bit, then the end */
		{
			uint8_t r[MPA_HDR_LEN + MPA_V2_LEN];
			uint32_t bits = 0, pd_len = 0;

			ck_assert_int_eq(read_exact(b.p.fd, r, sizeof(r)), 1);
			ck_assert(mpa_get_hdr(r, false, &bits, &pd_len));
			ck_assert(bits & MPA_FLAG_REJECT);
			ck_assert_uint_eq(pd_len, MPA_V2_LEN);
		}
	}
	expect_eof(b.p.fd);
	close(held);
	bed_down(&b);
}
END_TEST

/* The same for a listener: once unlistened, a connect is refused, though
 * another reference holds the listening socket. */
START_TEST(refused_after_unlisten_while_held)
{
	struct dapl_tlisten *l;
	struct sockaddr_in a = g_lo;
	uint16_t port;
	int held, fd, r;

	dev_start(NULL);
	l = do_listen(&port);
	held = dup(l->fd);
	ck_assert_int_ge(held, 0);
	do_unlisten(l);
	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	r = connect(fd, (struct sockaddr *)&a, sizeof(a));
	ck_assert_msg(r != 0 && errno == ECONNREFUSED,
		      "connect after unlisten: %s", r ? strerror(errno) : "accepted");
	close(fd);
	close(held);
	dev_stop();
}
END_TEST

/* ---- a reset behind the last data, on an endpoint its consumer drove ------------- */

#define DRIVE_ROUNDS 20000      /* Sends busy-polled, at most, until excluded */

/* Whether the progress thread has left ep to its consumer (tcp_dev.c's
 * ep_service: "excluded", watched edge-triggered). */
static bool ep_excluded(struct dapl_tep *ep)
{
	bool ex;

	pthread_mutex_lock(&ep->lock);
	ex = ep->excluded;
	pthread_mutex_unlock(&ep->lock);
	return ex;
}

/* Our socket has reached TCP state `state` (TCP_CLOSE: the peer's reset
 * came; TCP_CLOSE_WAIT: its FIN): everything the peer sent before is in
 * our receive queue. */
static void wait_tcp_state(int fd, int state, const char *what)
{
	int64_t end = now_ms() + WAIT_MS;
	struct tcp_info ti;
	socklen_t len;

	for (;;) {
		len = sizeof(ti);
		ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti,
					    &len), 0);
		if (ti.tcpi_state == state)
			return;
		ck_assert_msg(left_ms(end) > 0, "the %s never arrived", what);
		sched_yield();
	}
}

/* A consumer busy-polls its receive CQ until the progress thread leaves
 * the endpoint to it, then stops calling.  The peer's last Send and a
 * reset right behind it both reach our socket before the thread looks:
 * one edge for the two.  With no timer (DAPL_TCP_NO_TIMER) and no call
 * of the consumer's, that one wake-up must place the Send and end the
 * connection (DISCONNECTED); the receive left over is FLUSHED.  Before
 * f76d900 the thread read the data, took the reset for "nothing unread"
 * and went back to sleep for good. */
START_TEST(reset_behind_last_data)
{
	struct bed b;
	struct buf rb;
	struct dapl_twc wc;
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };
	uint8_t f[64];
	uint64_t far;
	uint32_t msn = 0;
	int64_t end;
	int i, n;

	bed_up_env(&b, 4, 4, "DAPL_TCP_NO_TIMER=1");
	buf_make(&rb, b.s.pd, 64, 61);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	for (i = 0; i < DRIVE_ROUNDS && !ep_excluded(b.s.ep); i++) {
		post_recv(&b.s, &rb, 0, 16, 0x100);
		send_all(b.p.fd, f, mk_send(f, ++msn, "ping", 4, 0));
		end = now_ms() + WAIT_MS;
		while ((n = T->cq_poll(b.s.rcq, &wc, 1)) == 0)
			ck_assert_msg(left_ms(end) > 0, "Send %u never came",
				      msn);
		ck_assert_int_eq(n, 1);
		ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
	}
	ck_assert_msg(ep_excluded(b.s.ep), "the progress thread kept the "
		      "endpoint through %d busy-polled Sends", i);
	post_recv(&b.s, &rb, 16, 16, 0x200);
	post_recv(&b.s, &rb, 32, 16, 0x300);
	/* The thread leaves an excluded endpoint to a consumer that polled
	 * its CQs within TCP_GONE_NS of looking, as one that has just
	 * stopped has.  This test's own steps take longer than that: say
	 * the consumer polled now, until long after the test. */
	far = dapl_now_ns() + 3600ull * 1000000000ull;
	atomic_store(&b.s.scq->polled_ns, far);
	atomic_store(&b.s.rcq->polled_ns, far);
	/* the pump between passes, held there while both arrive */
	pthread_mutex_lock(&h.lock);
	end = now_ms() + WAIT_MS;
	while (!h.idle) {
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_sec++;
		pthread_cond_timedwait(&h.cond, &h.lock, &ts);
		ck_assert_msg(left_ms(end) > 0, "the pump never went idle");
	}
	send_all(b.p.fd, f, mk_send(f, ++msn, "last", 4, 0));
	ck_assert_int_eq(setsockopt(b.p.fd, SOL_SOCKET, SO_LINGER, &lg,
				    sizeof(lg)), 0);
	peer_close(&b.p);
	wait_tcp_state(b.s.ep->fd, TCP_CLOSE, "reset");
	pthread_mutex_unlock(&h.lock);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	expect_wc(b.s.rcq, 0x200, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 4);
	ck_assert_int_eq(memcmp(rb.p + 16, "last", 4), 0);
	expect_wc(b.s.rcq, 0x300, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
	expect_cq_empty(b.s.rcq);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* A consumer busy-polls a Send in: its placement report stays owed, to
 * ride on the consumer's reply.  The peer then ends the connection
 * instead of waiting for one.  An endpoint that ended owes the peer
 * nothing: the report must not stay owed, or the device's timer, which
 * sends owed reports nobody carried, keeps waking the progress thread
 * every 2 ms for as long as the endpoint exists (it did, until the
 * endpoint was freed). */
START_TEST(nothing_owed_after_end)
{
	struct bed b;
	struct buf rb;
	struct dapl_twc wc;
	uint8_t f[64];
	uint32_t msn = 0;
	unsigned t0;
	int64_t end;
	bool owed = false;
	int i, n;

	bed_up(&b, 4, 4);
	buf_make(&rb, b.s.pd, 64, 29);
	peer_connect(&b.p, b.l, b.port, b.s.ep, PEER_EXT);
	/* the pump between passes, held there: only the consumer drives */
	pthread_mutex_lock(&h.lock);
	pump_until(h.idle);
	ck_assert_msg(h.idle, "the pump never went idle");
	for (i = 0; i < 100 && !owed; i++) {
		post_recv(&b.s, &rb, 0, 16, 0x100 + (uint64_t)i);
		send_all(b.p.fd, f, mk_send(f, ++msn, "ping", 4, 0));
		/* a poll a moment after the last one: a busy loop's, whose
		 * drive leaves the report for its reply (the Send is in our
		 * socket already, so that poll is the one that places it; a
		 * hiccup between the two makes the report go at once: then
		 * another Send) */
		end = now_ms() + WAIT_MS;
		atomic_store(&b.s.rcq->polled_ns, dapl_now_ns());
		while ((n = T->cq_poll(b.s.rcq, &wc, 1)) == 0)
			ck_assert_msg(left_ms(end) > 0, "Send %u never came",
				      msn);
		ck_assert_int_eq(n, 1);
		ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
		pthread_mutex_lock(&b.s.ep->lock);
		owed = b.s.ep->ack_owed;
		pthread_mutex_unlock(&b.s.ep->lock);
	}
	ck_assert_msg(owed, "no busy poll left a report owed in %d Sends", i);
	ck_assert_int_eq(shutdown(b.p.fd, SHUT_WR), 0);
	wait_tcp_state(b.s.ep->fd, TCP_CLOSE_WAIT, "FIN");
	pthread_mutex_unlock(&h.lock);
	take(b.s.ep, DAPL_TCM_DISCONNECTED);
	pthread_mutex_lock(&b.s.ep->lock);
	owed = b.s.ep->ack_owed;
	pthread_mutex_unlock(&b.s.ep->lock);
	ck_assert_msg(!owed, "an ended endpoint still owes a report");
	/* the timer's next tick finds nothing to do and stops */
	pthread_mutex_lock(&h.lock);
	t0 = atomic_load(&h.dev->ticks);
	pump_until(!atomic_load(&h.dev->timer_on) ||
		   atomic_load(&h.dev->ticks) - t0 >= 3);
	pthread_mutex_unlock(&h.lock);
	ck_assert_msg(!atomic_load(&h.dev->timer_on), "the timer still runs "
		      "after %u ticks", atomic_load(&h.dev->ticks) - t0);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* ---- 9. a flood of tiny Sends no receive is posted for --------------------------- */

/* count Sends from MSN first on: even MSNs empty, odd ones one byte (the
 * MSN's low byte).  *at (if not NULL): where the last one starts. */
static uint8_t *tiny_sends(uint32_t first, uint32_t count, size_t *len,
			   size_t *at)
{
	uint8_t *f = malloc((size_t)count * 32), *p = f;
	uint32_t i;

	ck_assert_ptr_nonnull(f);
	for (i = 0; i < count; i++) {
		uint32_t msn = first + i;
		uint8_t d = (uint8_t)msn;

		if (at)
			*at = (size_t)(p - f);
		p += mk_send(p, msn, &d, msn & 1, 0);
	}
	*len = (size_t)(p - f);
	return f;
}

/* What our side holds, read under its lock. */
static uint32_t held_count(struct dapl_tep *ep, uint64_t *visits)
{
	uint32_t n;

	pthread_mutex_lock(&ep->lock);
	n = ep->unexp_count;
	if (visits)
		*visits = ep->unexp_visits;
	ck_assert_uint_le(ep->unexp_bytes, TCP_UNEXPECTED_MAX);
	pthread_mutex_unlock(&ep->lock);
	return n;
}

/* Two Sends fill the receives posted, then more than TCP_UNEXPECTED_MSGS
 * empty and 1-byte Sends come with none posted: the one past the bound
 * gets a Terminate (DDP layer, untagged buffer error, "no buffer
 * available", quoting its header), after our own Send; our endpoint gets
 * one CONN_ERROR; the two receives and the Send complete once each, and
 * nothing else comes. */
START_TEST(tiny_sends_past_bound)
{
	struct bed b;
	struct buf rb, sb;
	uint8_t *f;
	size_t n, at;
	struct dapl_tsge sge;

	bed_up(&b, 4, 4);
	buf_make(&rb, b.s.pd, 128, 31);
	buf_make(&sb, b.s.pd, 16, 32);
	post_recv(&b.s, &rb, 0, 64, 0xa1);
	post_recv(&b.s, &rb, 64, 64, 0xa2);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	sge = sge_of(&sb, 0, 16);
	ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 0xa3, DAPL_TPOST_SIGNALED), 0);
	f = tiny_sends(1, 2 + TCP_UNEXPECTED_MSGS + 1, &n, &at);
	send_all(b.p.fd, f, n);
	peer_sees_send(&b, 1, 16);
	expect_terminate(&b.p, TERM_DDP, TERM_DDP_UNTAGGED, TERM_CODE_NO_BUFFER,
			 f + at, 2 + DDP_UNTAGGED_LEN);
	expect_aborted(b.s.ep);
	expect_wc(b.s.rcq, 0xa1, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 1);
	expect_wc(b.s.rcq, 0xa2, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 0);
	ck_assert_uint_eq(rb.p[0], 1);
	expect_wc(b.s.scq, 0xa3, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 16);
	expect_cq_empty(b.s.rcq);
	expect_cq_empty(b.s.scq);
	ck_assert_uint_eq(held_count(b.s.ep, NULL), 0);
	do_reset(b.s.ep);
	expect_cq_empty(b.s.rcq);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	free(f);
	buf_free(&rb);
	buf_free(&sb);
	bed_down(&b);
}
END_TEST

/* TCP_UNEXPECTED_MSGS empty and 1-byte Sends with no receive posted are
 * all held (no event); receives posted then take them in order, byte for
 * byte, and holding and matching them looked at O(1) held Sends each
 * (the list is never walked).  The connection still works after. */
START_TEST(tiny_sends_held)
{
	enum { DEPTH = 64, N = TCP_UNEXPECTED_MSGS };
	struct bed b;
	struct buf rb;
	uint8_t *f;
	size_t n;
	uint64_t visits = 0;
	int64_t end;
	uint32_t i, k;

	bed_up(&b, 4, DEPTH);
	buf_make(&rb, b.s.pd, DEPTH * 2, 33);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	f = tiny_sends(1, N, &n, NULL);
	send_all(b.p.fd, f, n);
	/* (each poll drives our side; bounded, never a sleep) */
	end = now_ms() + WAIT_MS;
	while (held_count(b.s.ep, NULL) < N) {
		ck_assert_msg(left_ms(end) > 0, "only %u of %u Sends held",
			      held_count(b.s.ep, NULL), N);
		expect_cq_empty(b.s.rcq);
		sched_yield();
	}
	ck_assert_uint_eq(held_count(b.s.ep, &visits), N);
	ck_assert_msg(visits <= 2u * N, "holding %u Sends looked at %llu",
		      N, (unsigned long long)visits);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	for (i = 0; i < N; i += DEPTH) {
		for (k = 0; k < DEPTH; k++) {
			rb.p[2 * k] = 0xee;
			post_recv(&b.s, &rb, 2 * k, 2, i + k);
		}
		for (k = 0; k < DEPTH; k++) {
			uint32_t msn = i + k + 1;

			expect_wc(b.s.rcq, i + k, DAPL_TWC_RECV, DAPL_TWC_SUCCESS,
				  msn & 1);
			ck_assert_uint_eq(rb.p[2 * k], msn & 1 ? (uint8_t)msn : 0xee);
		}
	}
	ck_assert_uint_eq(held_count(b.s.ep, &visits), 0);
	ck_assert_msg(visits <= 3u * N, "holding and matching %u Sends looked "
		      "at %llu", N, (unsigned long long)visits);
	/* and one more, straight into its receive */
	post_recv(&b.s, &rb, 0, 2, 0xb0);
	free(f);
	f = tiny_sends(N + 1, 1, &n, NULL);
	send_all(b.p.fd, f, n);
	expect_wc(b.s.rcq, 0xb0, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, (N + 1) & 1);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	free(f);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* While a raw peer floods one connection with tiny Sends past the bound,
 * a well-behaved connection through the same listener (both ends ours)
 * comes up and carries a Send each way; the flooded one ends with its
 * Terminate and one event. */
START_TEST(tiny_sends_other_connection)
{
	struct bed b;
	struct side act, pas;
	struct buf ab, pb;
	uint8_t *f;
	size_t n, at, sent = 0;
	int64_t end = now_ms() + WAIT_MS;
	bool requested = false, up_a = false, up_p = false, posted = false;
	struct dapl_tcq *cqs[4];
	bool done[4] = { false };
	struct evc c;
	int i;

	bed_up(&b, 4, 4);
	side_make(&act, 4, 4);
	side_make(&pas, 4, 4);
	buf_make(&ab, act.pd, 64, 34);
	buf_make(&pb, pas.pd, 64, 35);
	peer_connect(&b.p, b.l, b.port, b.s.ep, 0);
	f = tiny_sends(1, TCP_UNEXPECTED_MSGS + 1, &n, &at);
	do_connect(act.ep, b.port);
	cqs[0] = act.scq;
	cqs[1] = act.rcq;
	cqs[2] = pas.scq;
	cqs[3] = pas.rcq;
	/* the flood goes out in pieces; between them the other connection
	 * takes its next step */
	while (sent < n) {
		struct dapl_twc wc;
		ssize_t k = send(b.p.fd, f + sent, n - sent < 16384 ? n - sent : 16384,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		ck_assert_msg(left_ms(end) > 0, "flood: %zu of %zu sent", sent, n);
		if (k > 0) {
			sent += (size_t)k;
		} else {
			struct pollfd p = { .fd = b.p.fd, .events = POLLOUT };

			ck_assert_msg(errno == EAGAIN || errno == EINTR,
				      "flood: %s", strerror(errno));
			poll(&p, 1, 50);
		}
		pthread_mutex_lock(&h.lock);
		if (!requested && take_within(b.l, 0, &c)) {
			ck_assert_int_eq(c.ev.type, DAPL_TCM_CONNECT_REQUEST);
			ck_assert_int_eq(T->accept(c.ev.conn, pas.ep, NULL, 0, 4, 4), 0);
			requested = true;
		}
		if (!up_a && take_within(act.ep, 0, &c)) {
			ck_assert_int_eq(c.ev.type, DAPL_TCM_ESTABLISHED);
			up_a = true;
		}
		if (!up_p && take_within(pas.ep, 0, &c)) {
			ck_assert_int_eq(c.ev.type, DAPL_TCM_ESTABLISHED);
			up_p = true;
		}
		pthread_mutex_unlock(&h.lock);
		if (up_a && up_p && !posted) {
			struct dapl_tsge sa = sge_of(&ab, 0, 8), sp = sge_of(&pb, 0, 8);

			post_recv(&act, &ab, 32, 32, 0xc1);
			post_recv(&pas, &pb, 32, 32, 0xc2);
			ck_assert_int_eq(T->post_send(act.ep, &sa, 1, 0xc3,
						      DAPL_TPOST_SIGNALED), 0);
			ck_assert_int_eq(T->post_send(pas.ep, &sp, 1, 0xc4,
						      DAPL_TPOST_SIGNALED), 0);
			posted = true;
		}
		for (i = 0; posted && i < 4; i++)
			if (!done[i] && T->cq_poll(cqs[i], &wc, 1) == 1) {
				ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
				done[i] = true;
			}
	}
	/* the flood is out: the other connection's remaining steps */
	if (!requested) {
		c = take(b.l, DAPL_TCM_CONNECT_REQUEST);
		do_accept(c.ev.conn, pas.ep);
	}
	if (!up_a)
		take(act.ep, DAPL_TCM_ESTABLISHED);
	if (!up_p)
		take(pas.ep, DAPL_TCM_ESTABLISHED);
	if (!posted) {
		struct dapl_tsge sa = sge_of(&ab, 0, 8), sp = sge_of(&pb, 0, 8);

		post_recv(&act, &ab, 32, 32, 0xc1);
		post_recv(&pas, &pb, 32, 32, 0xc2);
		ck_assert_int_eq(T->post_send(act.ep, &sa, 1, 0xc3,
					      DAPL_TPOST_SIGNALED), 0);
		ck_assert_int_eq(T->post_send(pas.ep, &sp, 1, 0xc4,
					      DAPL_TPOST_SIGNALED), 0);
	}
	for (i = 0; i < 4; i++)
		if (!done[i])
			ck_assert_int_eq(wait_wc(cqs[i]).status, DAPL_TWC_SUCCESS);
	ck_assert_int_eq(memcmp(ab.p + 32, pb.p, 8), 0);
	ck_assert_int_eq(memcmp(pb.p + 32, ab.p, 8), 0);
	expect_terminate(&b.p, TERM_DDP, TERM_DDP_UNTAGGED, TERM_CODE_NO_BUFFER,
			 f + at, 2 + DDP_UNTAGGED_LEN);
	expect_aborted(b.s.ep);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	ck_assert_int_eq(pending_for(act.ep), 0);
	ck_assert_int_eq(pending_for(pas.ep), 0);
	free(f);
	buf_free(&ab);
	buf_free(&pb);
	side_free(&act);
	side_free(&pas);
	bed_down(&b);
}
END_TEST

/* ---- main ---------------------------------------------------------------------------- */

/* A network namespace of our own with only loopback, when we may make one. */
/* ---- RFC 7306: Immediate Data and Atomics ---------------------------------------- */

#define X7306 (PEER_EXT | PEER_7306)
#define ATOMIC_HLEN (2 + DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN)  /* what a
				   Terminate quotes of an Atomic Request */

/* A buffer with remote-atomic access (pattern as buf_make). */
static void abuf_make(struct buf *b, struct dapl_tpd *pd, size_t len,
		      unsigned seed)
{
	b->len = len;
	b->seed = seed;
	b->p = aligned_alloc(64, len);
	ck_assert_ptr_nonnull(b->p);
	pattern(b->p, len, seed);
	ck_assert_int_eq(T->mr_reg(pd, b->p, len, ALL_ACCESS |
				   DAPL_TACCESS_REMOTE_ATOMIC, &b->mr, &b->lkey,
				   &b->rkey), 0);
}

static uint64_t word_at(const struct buf *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b->p + off, 8);
	return v;
}

/* A peer that did not announce RFC 7306 (_i 0: a libdat-style peer
 * without the flag, 1: one without our trailer at all, like siw): the
 * connection says it cannot, the posts are refused, nothing of RFC 7306
 * reaches the wire, and such a frame from the peer is an unexpected
 * opcode. */
START_TEST(ext_not_negotiated)
{
	struct bed b;
	struct buf lb, t;
	struct dapl_tsge sge;
	struct atomic_req a = { .qn = DDP_QN_READ, .msn = 1 };
	uint8_t f[256];
	size_t n;

	bed_up(&b, 4, 4);
	buf_make(&lb, b.s.pd, 64, 31);
	abuf_make(&t, b.s.pd, 64, 32);
	peer_connect(&b.p, b.l, b.port, b.s.ep, _i ? 0 : PEER_EXT);
	ck_assert_uint_eq(T->ep_extensions(b.s.ep), 0);
	sge = sge_of(&lb, 0, 8);
	ck_assert_int_eq(T->post_rdma_write_imm(b.s.ep, &sge, 1, 0x1000, 0x77,
						5, 1, DAPL_TPOST_SIGNALED),
			 -EOPNOTSUPP);
	ck_assert_int_eq(T->post_atomic(b.s.ep, DAPL_TATOMIC_FETCH_ADD, &sge,
					0x1000, 0x77, 1, 0, 2,
					DAPL_TPOST_SIGNALED), -EOPNOTSUPP);
	/* the next thing on the wire is the Send posted after them */
	ck_assert_int_eq(T->post_send(b.s.ep, &sge, 1, 3, DAPL_TPOST_SIGNALED), 0);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_SEND);
	ck_assert_uint_eq(rx.msn, 1);
	/* an Atomic Request all the same: refused by its DDP header alone */
	a.stag = t.rkey;
	a.to = buf_addr(&t);
	a.data = 1;
	n = mk_atomic_req(f, &a);
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, TERM_RDMAP, TERM_RDMAP_OP,
			 TERM_CODE_UNEXPECTED_OP, f, 2 + DDP_UNTAGGED_LEN);
	expect_aborted(b.s.ep);
	expect_untouched(&t);
	buf_free(&lb);
	buf_free(&t);
	bed_down(&b);
}
END_TEST

/* Between two that announced it: the peer's Read, FetchAdd and CmpSwap
 * are answered in order (the Read Response first, the Atomic Responses
 * on queue 3 with their own MSNs); ours go out as RFC 7306 frames. */
START_TEST(atomics_on_the_wire)
{
	struct bed b;
	struct buf t, lb;
	struct dapl_tsge sge;
	struct atomic_req a = { .qn = DDP_QN_READ };
	uint8_t f[512];
	const uint8_t *r;
	uint64_t v = 10, got;
	size_t n;

	bed_up(&b, 8, 8);
	abuf_make(&t, b.s.pd, 256, 41);
	buf_make(&lb, b.s.pd, 256, 42);
	memcpy(t.p + 64, &v, 8);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306 | PEER_EARLY);
	ck_assert_uint_eq(T->ep_extensions(b.s.ep),
			  DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS);

	n = mk_read_req(f, 1, 0x5151, 0, 16, t.rkey, buf_addr(&t), 0);
	a.msn = 2;
	a.aop = RDMAP_AOP_FETCH_ADD;
	a.id = 0xabc;
	a.stag = t.rkey;
	a.to = buf_addr(&t) + 64;
	a.data = 5;
	n += mk_atomic_req(f + n, &a);
	a.msn = 3;
	a.aop = RDMAP_AOP_CMP_SWAP;
	a.id = 0xabd;
	a.data = 99;
	a.dmask = UINT64_MAX;
	a.cmp = 15;
	a.cmask = UINT64_MAX;
	n += mk_atomic_req(f + n, &a);
	send_all(b.p.fd, f, n);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(rx.tagged && rx.op == RDMAP_READ_RESP && rx.stag == 0x5151);
	ck_assert_uint_eq(rx.dlen, 16);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_ATOMIC_RESP && rx.last);
	ck_assert_uint_eq(rx.qn, DDP_QN_ATOMIC_RESP);
	ck_assert_uint_eq(rx.msn, 1);
	ck_assert_uint_eq(rx.dlen, RDMAP_ATOMIC_RESP_LEN);
	ck_assert_uint_eq(get32(rx.data), 0xabc);
	ck_assert_uint_eq(get64(rx.data + 4), 10);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_ATOMIC_RESP);
	ck_assert_uint_eq(rx.msn, 2);
	ck_assert_uint_eq(get32(rx.data), 0xabd);
	ck_assert_uint_eq(get64(rx.data + 4), 15);
	ck_assert_uint_eq(word_at(&t, 64), 99);

	/* ours: a CmpSwap as an Atomic Request on queue 1 */
	sge = sge_of(&lb, 8, 8);
	ck_assert_int_eq(T->post_atomic(b.s.ep, DAPL_TATOMIC_CMP_SWAP, &sge,
					0x7000, 0x1234, 3, 4, 0xa1,
					DAPL_TPOST_SIGNALED), 0);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_ATOMIC_REQ && rx.last);
	ck_assert_uint_eq(rx.qn, DDP_QN_READ);
	ck_assert_uint_eq(rx.msn, 1);
	ck_assert_uint_eq(rx.dlen, RDMAP_ATOMIC_REQ_LEN);
	r = rx.data;
	ck_assert_uint_eq(get32(r), RDMAP_AOP_CMP_SWAP);
	ck_assert_uint_eq(get32(r + 8), 0x1234);
	ck_assert_uint_eq(get64(r + 12), 0x7000);
	ck_assert_uint_eq(get64(r + 20), 4);            /* swap */
	ck_assert_uint_eq(get64(r + 28), UINT64_MAX);
	ck_assert_uint_eq(get64(r + 36), 3);            /* compare */
	ck_assert_uint_eq(get64(r + 44), UINT64_MAX);
	send_all(b.p.fd, f, mk_atomic_resp(f, DDP_QN_ATOMIC_RESP, 1, get32(r + 4),
					   0x0102030405060708ull));
	expect_wc(b.s.scq, 0xa1, DAPL_TWC_CMP_SWAP, DAPL_TWC_SUCCESS, 8);
	memcpy(&got, lb.p + 8, 8);
	ck_assert_uint_eq(got, 0x0102030405060708ull);

	/* ours: a write with immediate is the Write, then Immediate Data
	 * on the Send queue */
	sge = sge_of(&lb, 0, 100);
	ck_assert_int_eq(T->post_rdma_write_imm(b.s.ep, &sge, 1, 0x9000, 0x4321,
						0xcafe, 0xa2, 0), 0);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(rx.tagged && rx.op == RDMAP_WRITE && rx.last);
	ck_assert_uint_eq(rx.stag, 0x4321);
	ck_assert_uint_eq(rx.to, 0x9000);
	ck_assert_uint_eq(rx.dlen, 100);
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_IMM && rx.last);
	ck_assert_uint_eq(rx.qn, DDP_QN_SEND);
	ck_assert_uint_eq(rx.msn, 1);
	ck_assert_uint_eq(rx.dlen, RDMAP_IMM_LEN);
	ck_assert_uint_eq(get64(rx.data), 0xcafe);

	buf_free(&t);
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

/* A malformed Atomic Request: _i 0 on the Send queue, 1 out of MSN
 * order, 2 with data behind its header, 3 not the last segment, 4 an
 * AOpCode we do not do (Swap), 5 a FetchAdd with carry boundaries. */
START_TEST(atomic_malformed)
{
	struct bed b;
	struct buf t;
	struct atomic_req a = { .qn = DDP_QN_READ, .msn = 1,
				.aop = RDMAP_AOP_FETCH_ADD, .data = 1 };
	uint8_t f[512];
	unsigned layer = TERM_DDP, etype = TERM_DDP_UNTAGGED, code = 0;
	size_t n;

	bed_up(&b, 4, 4);
	abuf_make(&t, b.s.pd, 256, 43);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306);
	a.stag = t.rkey;
	a.to = buf_addr(&t) + 8;
	switch (_i) {
	case 0: a.qn = DDP_QN_SEND; code = TERM_CODE_BAD_QN; break;
	case 1: a.msn = 2; code = TERM_CODE_BAD_MSN; break;
	case 2: a.extra = 8; code = TERM_CODE_TOO_LONG; break;
	case 3: a.not_last = true; code = TERM_CODE_TOO_LONG; break;
	case 4:
		a.aop = RDMAP_AOP_SWAP;
		layer = TERM_RDMAP;
		etype = TERM_RDMAP_OP;
		code = TERM_CODE_UNEXPECTED_OP;
		break;
	case 5:
		a.dmask = 1ull << 31;
		layer = TERM_RDMAP;
		etype = TERM_RDMAP_OP;
		code = TERM_CODE_UNEXPECTED_OP;
		break;
	}
	n = mk_atomic_req(f, &a);
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, layer, etype, code, f, ATOMIC_HLEN);
	expect_aborted(b.s.ep);
	expect_untouched(&t);
	buf_free(&t);
	bed_down(&b);
}
END_TEST

/* An Atomic Request the target refuses before touching memory: _i 0 a
 * word not 8-byte aligned, 1 a registration without remote-atomic
 * access, 2 an unknown STag, 3 past the registration's end, 4 a range
 * that wraps 2^64, 5 an STag of another PZ. */
START_TEST(atomic_refused)
{
	struct bed b;
	struct buf t, plain, other;
	struct dapl_tpd *pd2;
	struct atomic_req a = { .qn = DDP_QN_READ, .msn = 1,
				.aop = RDMAP_AOP_CMP_SWAP, .data = 7,
				.dmask = UINT64_MAX, .cmask = 0 };
	uint8_t f[512];
	unsigned etype = TERM_RDMAP_PROT, code = 0;
	size_t n;

	bed_up(&b, 4, 4);
	ck_assert_int_eq(T->pd_alloc(h.dev, &pd2), 0);
	abuf_make(&t, b.s.pd, 256, 44);
	buf_make(&plain, b.s.pd, 256, 45);
	abuf_make(&other, pd2, 256, 46);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306);
	a.stag = t.rkey;
	a.to = buf_addr(&t) + 16;
	switch (_i) {
	case 0:
		a.to += 4;
		etype = TERM_RDMAP_OP;
		code = TERM_CODE_UNSPECIFIED;
		break;
	case 1:
		a.stag = plain.rkey;
		a.to = buf_addr(&plain);
		code = TERM_CODE_ACCESS;
		break;
	case 2:
		a.stag = t.rkey ^ plain.rkey ^ other.rkey;
		if (a.stag == t.rkey || a.stag == plain.rkey ||
		    a.stag == other.rkey)
			a.stag = t.rkey + plain.rkey + other.rkey + 1;
		code = TERM_CODE_INVALID_STAG;
		break;
	case 3:
		a.to = buf_addr(&t) + t.len;
		code = TERM_CODE_BOUNDS;
		break;
	case 4:
		a.to = UINT64_MAX - 7;
		code = TERM_CODE_TO_WRAP;
		break;
	case 5:
		a.stag = other.rkey;
		a.to = buf_addr(&other);
		code = TERM_CODE_STAG_STREAM;
		break;
	}
	n = mk_atomic_req(f, &a);
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, TERM_RDMAP, etype, code, f, ATOMIC_HLEN);
	expect_aborted(b.s.ep);
	expect_untouched(&t);
	expect_untouched(&plain);
	expect_untouched(&other);
	buf_free(&t);
	buf_free(&plain);
	buf_free(&other);
	ck_assert_int_eq(T->pd_free(pd2), 0);
	bed_down(&b);
}
END_TEST

/* An Atomic Response we did not ask for: _i 0 nothing in flight, 1 our
 * atomic in flight but another Request Identifier, 2 our Read in flight
 * (its Read Response comes first), 3 on the Read queue's number.  A
 * Terminate, and what we posted completes FLUSHED, once. */
START_TEST(atomic_response_unasked)
{
	struct bed b;
	struct buf lb;
	struct dapl_tsge sge;
	uint8_t f[256];
	uint32_t id = 1, qn = DDP_QN_ATOMIC_RESP;
	unsigned etype = TERM_RDMAP_OP, layer = TERM_RDMAP;
	unsigned code = TERM_CODE_UNEXPECTED_OP;
	uint64_t ctx = 0xc1;
	size_t n;

	bed_up(&b, 4, 4);
	buf_make(&lb, b.s.pd, 64, 47);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306);
	sge = sge_of(&lb, 0, 8);
	if (_i == 1 || _i == 3) {
		ck_assert_int_eq(T->post_atomic(b.s.ep, DAPL_TATOMIC_FETCH_ADD,
						&sge, 0x8000, 0x99, 1, 0, ctx,
						DAPL_TPOST_SIGNALED), 0);
		ck_assert(next_fpdu(&b.p, &rx));
		ck_assert(!rx.tagged && rx.op == RDMAP_ATOMIC_REQ);
		id = get32(rx.data + 4) + (_i == 1 ? 1 : 0);
	} else if (_i == 2) {
		ck_assert_int_eq(T->post_rdma_read(b.s.ep, &sge, 1, 0x8000, 0x99,
						   ctx, DAPL_TPOST_SIGNALED), 0);
		ck_assert(next_fpdu(&b.p, &rx));
		ck_assert(!rx.tagged && rx.op == RDMAP_READ_REQ);
		/* the identifier our side would give it (its sink STag):
		 * only the kind of request in flight is wrong */
		id = get32(rx.data - RDMAP_READ_REQ_LEN);
	}
	if (_i == 3) {
		qn = DDP_QN_READ;
		layer = TERM_DDP;
		etype = TERM_DDP_UNTAGGED;
		code = TERM_CODE_BAD_QN;
	}
	n = mk_atomic_resp(f, qn, 1, id, 0x5555);
	send_all(b.p.fd, f, n);
	expect_terminate(&b.p, layer, etype, code, f,
			 2 + DDP_UNTAGGED_LEN + RDMAP_ATOMIC_RESP_LEN);
	expect_aborted(b.s.ep);
	if (_i)
		expect_wc(b.s.scq, ctx, _i == 2 ? DAPL_TWC_RDMA_READ :
			  DAPL_TWC_FETCH_ADD, DAPL_TWC_FLUSHED, 0);
	expect_cq_empty(b.s.scq);
	expect_untouched(&lb);
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

/* Immediate Data with no receive posted is held like a Send (in order
 * with the Sends behind it) and completes the receive posted later with
 * the length of the Write before it (_i 0); one that arrives inside a
 * Send's segments is out of order (_i 1). */
START_TEST(immediate_without_receive)
{
	struct bed b;
	struct buf t, rb;
	uint8_t f[1024], d[200];
	struct dapl_twc wc;
	size_t n;
	int64_t end;

	bed_up(&b, 4, 4);
	buf_make(&t, b.s.pd, 4096, 48);
	buf_make(&rb, b.s.pd, 256, 49);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306);
	pattern(d, sizeof(d), 50);
	if (_i == 1) {
		size_t hl = fpdu_put_untagged(f, DDP_UNTAGGED_LEN + 10, false,
					      RDMAP_SEND, DDP_QN_SEND, 1, 0);

		n = fpdu_finish(f, hl, d, 10, 0);
		n += mk_imm(f + n, 1, 9, 0);
		send_all(b.p.fd, f, n);
		expect_terminate(&b.p, TERM_DDP, TERM_DDP_UNTAGGED,
				 TERM_CODE_BAD_MSN, f + (n - 32),
				 2 + DDP_UNTAGGED_LEN + RDMAP_IMM_LEN);
		expect_aborted(b.s.ep);
		expect_untouched(&t);
		buf_free(&t);
		buf_free(&rb);
		bed_down(&b);
		return;
	}
	n = mk_write(f, t.rkey, buf_addr(&t) + 100, d, 150, 0);
	n += mk_imm(f + n, 1, 0x1234567890abcdefull, 0);
	n += mk_send(f + n, 2, d, 5, 0);
	send_all(b.p.fd, f, n);
	/* the write placed, the immediate and the Send held (each poll
	 * drives the endpoint), and nothing ends the connection */
	end = now_ms() + WAIT_MS;
	while (held_count(b.s.ep, NULL) < 2) {
		ck_assert_int_eq(T->cq_poll(b.s.rcq, &wc, 1), 0);
		ck_assert_msg(left_ms(end) > 0, "the immediate never arrived");
	}
	ck_assert_int_eq(memcmp(t.p + 100, d, 150), 0);
	ck_assert_int_eq(T->cq_poll(b.s.rcq, &wc, 1), 0);
	ck_assert_int_eq(pending_for(b.s.ep), 0);
	post_recv(&b.s, &rb, 0, 64, 0x61);
	post_recv(&b.s, &rb, 64, 64, 0x62);
	wc = wait_wc(b.s.rcq);
	ck_assert_uint_eq(wc.context, 0x61);
	ck_assert_int_eq(wc.opcode, DAPL_TWC_RECV_RDMA_IMM);
	ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
	ck_assert_uint_eq(wc.byte_len, 150);
	ck_assert_uint_eq(wc.imm, 0x90abcdefu);
	ck_assert_uint_eq(wc.flags, DAPL_TWC_WITH_IMM);
	wc = wait_wc(b.s.rcq);
	ck_assert_uint_eq(wc.context, 0x62);
	ck_assert_int_eq(wc.opcode, DAPL_TWC_RECV);
	ck_assert_uint_eq(wc.byte_len, 5);
	ck_assert_uint_eq(wc.imm, 0);
	ck_assert_uint_eq(wc.flags, 0);
	/* no data of the immediate's lands in its receive */
	for (n = 0; n < 64; n++)
		ck_assert_uint_eq(rb.p[n], (uint8_t)(n * 13u + 49));
	buf_free(&t);
	buf_free(&rb);
	bed_down(&b);
}
END_TEST

/* Atomics count against ORD with the RDMA Reads (we accepted with ORD
 * 4): of two Reads and three atomics posted at once, four go out; the
 * fifth once the oldest is answered, and the answers complete them in
 * order. */
START_TEST(atomics_count_against_ord)
{
	struct bed b;
	struct buf lb;
	struct dapl_tsge sge;
	uint8_t f[512], d[16];
	uint32_t sink[2] = { 0, 0 }, id[3] = { 0, 0, 0 };
	char c;
	int i;

	bed_up(&b, 8, 8);
	buf_make(&lb, b.s.pd, 256, 51);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306 | PEER_EARLY);
	for (i = 0; i < 5; i++) {
		sge = sge_of(&lb, (size_t)i * 16, i < 2 ? 16 : 8);
		if (i < 2)
			ck_assert_int_eq(T->post_rdma_read(b.s.ep, &sge, 1, 0x1000,
							   0x42, 0x100 + (uint64_t)i,
							   DAPL_TPOST_SIGNALED), 0);
		else
			ck_assert_int_eq(T->post_atomic(b.s.ep,
							DAPL_TATOMIC_FETCH_ADD,
							&sge, 0x2000, 0x43, 1, 0,
							0x100 + (uint64_t)i,
							DAPL_TPOST_SIGNALED), 0);
	}
	for (i = 0; i < 4; i++) {
		ck_assert(next_fpdu(&b.p, &rx));
		ck_assert(!rx.tagged);
		ck_assert_uint_eq(rx.op, i < 2 ? RDMAP_READ_REQ : RDMAP_ATOMIC_REQ);
		ck_assert_uint_eq(rx.qn, DDP_QN_READ);
		ck_assert_uint_eq(rx.msn, (uint32_t)i + 1);
		if (i < 2)
			sink[i] = get32(rx.data - RDMAP_READ_REQ_LEN);
		else
			id[i - 2] = get32(rx.data + 4);
	}
	/* what a post sends it sends before returning, and loopback has
	 * it at our end by then: the fifth is not there */
	ep_sync(b.s.ep);
	ck_assert_int_eq(recv(b.p.fd, &c, 1, MSG_DONTWAIT | MSG_PEEK), -1);
	ck_assert_int_eq(errno, EAGAIN);
	pattern(d, sizeof(d), 52);
	send_all(b.p.fd, f, mk_read_resp(f, sink[0], 0, d, 16, true, 0));
	ck_assert(next_fpdu(&b.p, &rx));
	ck_assert(!rx.tagged && rx.op == RDMAP_ATOMIC_REQ);
	ck_assert_uint_eq(rx.msn, 5);
	id[2] = get32(rx.data + 4);
	expect_wc(b.s.scq, 0x100, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 16);
	/* the rest, answered in order */
	send_all(b.p.fd, f, mk_read_resp(f, sink[1], 0, d, 16, true, 0));
	for (i = 0; i < 3; i++)
		send_all(b.p.fd, f, mk_atomic_resp(f, DDP_QN_ATOMIC_RESP,
						   (uint32_t)i + 1, id[i],
						   1000 + (uint64_t)i));
	expect_wc(b.s.scq, 0x101, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 16);
	for (i = 0; i < 3; i++) {
		uint64_t v;

		expect_wc(b.s.scq, 0x102 + (uint64_t)i, DAPL_TWC_FETCH_ADD,
			  DAPL_TWC_SUCCESS, 8);
		memcpy(&v, lb.p + (size_t)(i + 2) * 16, 8);
		ck_assert_uint_eq(v, 1000 + (uint64_t)i);
	}
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

/* Atomic Requests count against IRD with the Read Requests (we accepted
 * with IRD 4): four 64 MiB Reads the peer does not read the answers of
 * (the first cannot leave: the socket takes less) and an atomic behind
 * them is one request too many.  The connection ends (a Terminate, if
 * the socket takes it), and the atomic is not run. */
START_TEST(atomics_count_against_ird)
{
	struct bed b;
	struct buf big, t;
	struct atomic_req a = { .qn = DDP_QN_READ, .msn = 5,
				.aop = RDMAP_AOP_FETCH_ADD, .data = 1 };
	uint8_t f[1024];
	const uint32_t len = 64u << 20;
	size_t n = 0;
	int i;

	bed_up(&b, 4, 4);
	buf_make(&big, b.s.pd, len, 53);
	abuf_make(&t, b.s.pd, 64, 54);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306);
	for (i = 0; i < 4; i++)
		n += mk_read_req(f + n, (uint32_t)i + 1, 0x600 + (uint32_t)i, 0,
				 len, big.rkey, buf_addr(&big), 0);
	a.stag = t.rkey;
	a.to = buf_addr(&t) + 8;
	n += mk_atomic_req(f + n, &a);
	send_all(b.p.fd, f, n);
	expect_aborted(b.s.ep);
	expect_untouched(&t);
	buf_free(&big);
	buf_free(&t);
	bed_down(&b);
}
END_TEST

/* Writes with immediate the peer never reports placed and atomics it
 * never answers complete FLUSHED, once each, when the connection ends
 * (_i 0: we disconnect, 1: the peer closes), in posting order; posted
 * after the end they flush too. */
START_TEST(extension_requests_flushed)
{
	struct bed b;
	struct buf lb;
	struct dapl_tsge sge;
	struct dapl_twc wc;
	int i;

	bed_up(&b, 8, 8);
	buf_make(&lb, b.s.pd, 256, 55);
	peer_connect(&b.p, b.l, b.port, b.s.ep, X7306 | PEER_EARLY);
	for (i = 0; i < 4; i++) {
		sge = sge_of(&lb, (size_t)i * 16, 8);
		if (i & 1)
			ck_assert_int_eq(T->post_atomic(b.s.ep,
					 DAPL_TATOMIC_CMP_SWAP, &sge, 0x2000,
					 0x43, 1, 2, 0x700 + (uint64_t)i, 0), 0);
		else
			ck_assert_int_eq(T->post_rdma_write_imm(b.s.ep, &sge, 1,
					 0x3000, 0x44, 9, 0x700 + (uint64_t)i, 0),
					 0);
	}
	/* all four are on the wire */
	for (i = 0; i < 6; i++)
		ck_assert(next_fpdu(&b.p, &rx));
	if (_i) {
		peer_close(&b.p);
		take(b.s.ep, DAPL_TCM_DISCONNECTED);
	} else {
		do_disconnect(b.s.ep);
		take(b.s.ep, DAPL_TCM_DISCONNECTED);
	}
	/* nothing once the connection is over */
	ck_assert_uint_eq(T->ep_extensions(b.s.ep), 0);
	for (i = 0; i < 4; i++) {
		wc = wait_wc(b.s.scq);
		ck_assert_uint_eq(wc.context, 0x700 + (uint64_t)i);
		ck_assert_int_eq(wc.opcode, (i & 1) ? DAPL_TWC_CMP_SWAP :
						      DAPL_TWC_RDMA_WRITE_IMM);
		ck_assert_int_eq(wc.status, DAPL_TWC_FLUSHED);
		ck_assert_uint_eq(wc.imm, 0);
		ck_assert_uint_eq(wc.flags, 0);
	}
	expect_cq_empty(b.s.scq);
	sge = sge_of(&lb, 0, 8);
	ck_assert_int_eq(T->post_atomic(b.s.ep, DAPL_TATOMIC_FETCH_ADD, &sge,
					0x2000, 0x43, 1, 0, 0x7ff, 0), 0);
	expect_wc(b.s.scq, 0x7ff, DAPL_TWC_FETCH_ADD, DAPL_TWC_FLUSHED, 0);
	expect_cq_empty(b.s.scq);
	expect_untouched(&lb);
	buf_free(&lb);
	bed_down(&b);
}
END_TEST

static int private_net(void)
{
	int r = test_netns_with_loopback();

	if (r == 0)
		fprintf(stderr, "test_tcp_peer: no network namespace of its own "
			"(not root?): running on this host's loopback\n");
	return r < 0 ? -1 : 0;
}

/* TCP_PEER_ONLY=name[,name...] runs only those cases. */
static bool wanted(const char *name)
{
	const char *only = getenv("TCP_PEER_ONLY");
	size_t n = strlen(name);
	const char *p;

	if (!only || !*only)
		return true;
	for (p = only; (p = strstr(p, name)); p += n)
		if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return true;
	return false;
}

#define ADD(tc, fn) do { if (wanted(#fn)) tcase_add_test(tc, fn); } while (0)
#define ADD_LOOP(tc, fn, n) \
	do { if (wanted(#fn)) tcase_add_loop_test(tc, fn, 0, n); } while (0)

static Suite *suite(void)
{
	Suite *s = suite_create("tcp transport, adversarial peer");
	TCase *tc = tcase_create("peer");

	tcase_set_timeout(tc, 300);
	ADD_LOOP(tc, wrapped_range, 4);
	ADD_LOOP(tc, other_pz_key, 2);
	ADD(tc, stags_unpredictable);
	ADD(tc, guessed_keys);
	if (getenv("TCP_PEER_SLOW") && !under_valgrind())
		ADD(tc, stags_not_recoverable);
	ADD(tc, half_open_dropped);
	ADD(tc, rtr_never_comes);
	ADD_LOOP(tc, early_initiator, 2);
	ADD(tc, half_open_flood);
	ADD(tc, half_open_flood_ipv6);
	ADD(tc, half_open_oldest_evicted);
	ADD(tc, half_open_spares_reported);
	/* valgrind only pretends to lower RLIMIT_NOFILE: the kernel's
	 * accept4 succeeds, and valgrind closes the fd and says EMFILE, so
	 * the waiting client is lost */
	if (!under_valgrind())
		ADD(tc, listener_out_of_fds);
	ADD_LOOP(tc, garbage_after_handshake, 6);
	ADD(tc, peer_stops_reading);
	ADD(tc, lying_acks);
	ADD(tc, acks_keep_up);
	ADD_LOOP(tc, request_with_data, 2);
	ADD(tc, early_responder);
	ADD_LOOP(tc, unasked_read_response, 6);
	ADD_LOOP(tc, peer_terminates_read, 2);
	ADD_LOOP(tc, fin_while_socket_held, 2);
	ADD(tc, refused_after_unlisten_while_held);
	ADD(tc, reset_behind_last_data);
	ADD(tc, nothing_owed_after_end);
	ADD(tc, tiny_sends_past_bound);
	ADD(tc, tiny_sends_held);
	ADD(tc, tiny_sends_other_connection);
	ADD_LOOP(tc, ext_not_negotiated, 2);
	ADD(tc, atomics_on_the_wire);
	ADD_LOOP(tc, atomic_malformed, 6);
	ADD_LOOP(tc, atomic_refused, 6);
	ADD_LOOP(tc, atomic_response_unasked, 4);
	ADD_LOOP(tc, immediate_without_receive, 2);
	ADD(tc, atomics_count_against_ord);
	ADD(tc, atomics_count_against_ird);
	ADD_LOOP(tc, extension_requests_flushed, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (private_net() != 0) {
		fprintf(stderr, "test_tcp_peer: cannot bring loopback up\n");
		return EXIT_FAILURE;
	}
	g_lo.sin_family = AF_INET;
	g_lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
