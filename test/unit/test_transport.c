/* The transport conformance suite: one transport (the fixture,
 * test_transport.h) through its ops table, with both ends of every
 * connection in this process, at the fixture's address.  Built once per
 * transport: test_transport_ofi (make check), test_transport_verbs
 * (scripts/check-verbs.sh, in datvm's guest; exits 77 without an RDMA
 * device).
 *
 * A pump thread plays the core's progress thread: it polls the fds that
 * progress_fds gives and calls cm_get_event until -EAGAIN, holding the
 * "IA lock" (h.lock) as the core does; the test calls CM ops under the
 * same lock.  Waits are bounded by a deadline and only ever fail a test
 * that would otherwise hang; nothing sleeps to synchronise.
 *
 * TRANSPORT_TEST_ONLY=name[,name...] runs only those cases.
 * TRANSPORT_TEST_ADDR=A (and TRANSPORT_TEST_NETDEV=N) puts a fixture at
 * 127.0.0.1 (and lo) at A (and N) instead: make check-net runs it at an
 * address whose own connections cross a veth link. */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "test_transport.h"

#define DEADLINE_MS 20000
#define MAXEV 64
#define MAXFDS 8
#define PDATA_MAX 1024          /* more than any transport's CM message */

static const struct transport_fixture *F = &fixture;
static const struct udapl_transport_ops *T;

/* The fixture's device as main found it: its address and its attributes. */
static struct sockaddr_in g_addr;
static struct dapl_tdev_attr g_attr;

static bool behaves(unsigned tf)
{
	return (F->behaviour & tf) != 0;
}

/* NAME=VALUE into the environment, or NAME out of it. */
static void env_set(const char *setting, bool on)
{
	char name[64];
	const char *eq;

	if (!setting)
		return;
	eq = strchr(setting, '=');
	ck_assert_ptr_nonnull(eq);
	ck_assert_uint_lt((size_t)(eq - setting), sizeof(name));
	memcpy(name, setting, (size_t)(eq - setting));
	name[eq - setting] = '\0';
	if (on)
		setenv(name, eq + 1, 1);
	else
		unsetenv(name);
}

/* ---- the pump (the core's progress thread) --------------------------------- */

struct evc {
	struct dapl_tcm_event ev;
	uint8_t pdata[PDATA_MAX];
};

static struct {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;           /* the "IA lock" */
	pthread_cond_t cond;
	pthread_t thr;
	bool running;
	int stop_fd;
	struct evc evs[MAXEV];
	int nev;
} h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

/* What the core does after each pass (transport.h): the drives a
 * transport leaves to progress_data, without the "IA lock"; true when
 * they queued connection events for another pass. */
static bool drive_data(bool will_drain)
{
	return T->size >= offsetof(struct udapl_transport_ops, progress_data) +
			  sizeof(T->progress_data) && T->progress_data &&
	       (T->progress_data(h.dev, will_drain) & DAPL_TPD_EVENTS);
}

static void *pump(void *arg)
{
	struct pollfd p[MAXFDS + 1];
	int fds[MAXFDS], n, i;

	(void)arg;
	n = T->progress_fds(h.dev, fds, MAXFDS);
	ck_assert_int_ge(n, 1);
	for (i = 0; i < n; i++) {
		p[i].fd = fds[i];
		p[i].events = POLLIN;
	}
	p[n].fd = h.stop_fd;
	p[n].events = POLLIN;
	for (;;) {
		struct dapl_tcm_event ev;
		bool again;

		if (poll(p, (nfds_t)n + 1, -1) < 0)
			continue;
		if (p[n].revents)
			break;
		pthread_mutex_lock(&h.lock);
		do {
			while (T->cm_get_event(h.dev, &ev) == 0) {
				struct evc *c;

				ck_assert_int_lt(h.nev, MAXEV);
				c = &h.evs[h.nev++];
				c->ev = ev;
				ck_assert_uint_le(ev.pdata_len, sizeof(c->pdata));
				if (ev.pdata_len)
					memcpy(c->pdata, ev.pdata, ev.pdata_len);
				c->ev.pdata = c->pdata;
			}
			pthread_cond_broadcast(&h.cond);
			pthread_mutex_unlock(&h.lock);
			again = drive_data(true);
			pthread_mutex_lock(&h.lock);
		} while (again);
		pthread_mutex_unlock(&h.lock);
	}
	return NULL;
}

static void start_dev_on(const char *params)
{
	char why[256] = "";
	int ret;

	ret = T->dev_open(params, &h.dev, why, sizeof(why));
	ck_assert_msg(ret == 0, "dev_open(%s): %d %s", params, ret, why);
	h.nev = 0;
	h.stop_fd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(h.stop_fd, 0);
	ck_assert_int_eq(pthread_create(&h.thr, NULL, pump, NULL), 0);
	h.running = true;
}

static void start_dev(void)
{
	start_dev_on(F->params);
}

static void stop_pump(void)
{
	uint64_t one = 1;

	if (!h.running)
		return;
	ck_assert_int_eq(write(h.stop_fd, &one, sizeof(one)), sizeof(one));
	pthread_join(h.thr, NULL);
	close(h.stop_fd);
	h.running = false;
}

static void stop_dev(void)
{
	stop_pump();
	T->dev_close(h.dev);
	h.dev = NULL;
}

static void deadline_of(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static bool ev_is_for(const struct evc *c, const void *obj)
{
	return (const void *)c->ev.ep == obj ||
	       (const void *)c->ev.listener == obj ||
	       (const void *)c->ev.srq == obj;
}

/* Takes the next event about obj (an ep, listener or srq) within ms,
 * h.lock held; false when none came. */
static bool take_within(const void *obj, int ms, struct evc *out)
{
	struct timespec ts;
	int i;

	deadline_of(&ts, ms);
	for (;;) {
		for (i = 0; i < h.nev; i++) {
			if (!ev_is_for(&h.evs[i], obj))
				continue;
			*out = h.evs[i];
			out->ev.pdata = NULL;
			memmove(&h.evs[i], &h.evs[i + 1],
				(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
			h.nev--;
			return true;
		}
		if (pthread_cond_timedwait(&h.cond, &h.lock, &ts) == ETIMEDOUT)
			return false;
	}
}

/* The next event about obj, whichever it is. */
static struct evc take_any_at(const void *obj, int line)
{
	struct evc c;
	bool got;

	pthread_mutex_lock(&h.lock);
	got = take_within(obj, DEADLINE_MS, &c);
	pthread_mutex_unlock(&h.lock);
	ck_assert_msg(got, "line %d: no event for %p", line, obj);
	return c;
}

static struct evc take_at(const void *obj, enum dapl_tcm_event_type type,
			  int line)
{
	struct evc c = take_any_at(obj, line);

	ck_assert_msg(c.ev.type == type, "line %d: event %d for %p, wanted %d "
		      "(status %d)", line, c.ev.type, obj, type, c.ev.status);
	return c;
}

#define take(obj, type) take_at(obj, type, __LINE__)

/* Number of queued events about obj right now. */
static int pending_for(const void *obj)
{
	int i, n = 0;

	pthread_mutex_lock(&h.lock);
	for (i = 0; i < h.nev; i++)
		n += ev_is_for(&h.evs[i], obj);
	pthread_mutex_unlock(&h.lock);
	return n;
}

/* ---- CQ waiting, the way the core waits ------------------------------------- */

static long ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (end->tv_sec - now.tv_sec) * 1000 +
	       (end->tv_nsec - now.tv_nsec) / 1000000;
}

static struct dapl_twc wait_wc(struct dapl_tcq *cq)
{
	struct timespec end;
	struct dapl_twc wc;
	struct pollfd p;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += DEADLINE_MS / 1000;
	p.fd = T->cq_wait_fd(cq);
	p.events = POLLIN;
	for (;;) {
		int n = T->cq_poll(cq, &wc, 1);

		ck_assert_int_ge(n, 0);
		if (n)
			return wc;
		ck_assert_int_eq(T->cq_arm(cq, 0), 0);
		n = T->cq_poll(cq, &wc, 1);
		if (n)
			return wc;
		ck_assert_msg(ms_left(&end) > 0, "no completion");
		poll(&p, 1, (int)ms_left(&end));
		T->cq_ack(cq);
	}
}

static void expect_wc(struct dapl_tcq *cq, uint64_t ctx,
		      enum dapl_twc_opcode op, enum dapl_twc_status st,
		      uint32_t len)
{
	struct dapl_twc wc = wait_wc(cq);

	ck_assert_msg(wc.context == ctx, "context %llx, wanted %llx (status %d)",
		      (unsigned long long)wc.context, (unsigned long long)ctx,
		      wc.status);
	ck_assert_int_eq(wc.opcode, op);
	ck_assert_msg(wc.status == st, "context %llx: status %d (vendor %d), "
		      "wanted %d", (unsigned long long)ctx, wc.status,
		      wc.vendor_err, st);
	if (st == DAPL_TWC_SUCCESS)
		ck_assert_uint_eq(wc.byte_len, len);
}

/* A receive taken from an SRQ: it names the ep that took it. */
static void expect_srq_wc(struct dapl_tcq *cq, uint64_t ctx, uint64_t owner,
			  uint32_t len)
{
	struct dapl_twc wc = wait_wc(cq);

	ck_assert_msg(wc.context == ctx, "context %llx, wanted %llx",
		      (unsigned long long)wc.context, (unsigned long long)ctx);
	ck_assert_int_eq(wc.opcode, DAPL_TWC_RECV);
	ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
	ck_assert_uint_eq(wc.byte_len, len);
	ck_assert_msg(wc.owner == owner, "owner %llx, wanted %llx",
		      (unsigned long long)wc.owner, (unsigned long long)owner);
}

static void expect_cq_empty(struct dapl_tcq *cq)
{
	struct dapl_twc wc;

	ck_assert_int_eq(T->cq_poll(cq, &wc, 1), 0);
}

/* ---- objects --------------------------------------------------------------------- */

struct side {
	struct dapl_tpd *pd;
	struct dapl_tcq *scq, *rcq;
	struct dapl_tep *ep;
};

static void side_make_owner(struct side *s, uint32_t sdepth, uint32_t rdepth,
			    bool split_cqs, uint64_t owner)
{
	struct dapl_tep_attr a = {
		.max_send_wr = sdepth, .max_recv_wr = rdepth,
		.max_send_sge = 4, .max_recv_sge = 4, .owner = owner,
	};

	ck_assert_int_eq(T->pd_alloc(h.dev, &s->pd), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 64, &s->scq), 0);
	if (split_cqs)
		ck_assert_int_eq(T->cq_create(h.dev, 64, &s->rcq), 0);
	else
		s->rcq = s->scq;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_create(s->pd, s->scq, s->rcq, NULL, &a, &s->ep),
			 0);
	pthread_mutex_unlock(&h.lock);
}

static void side_make(struct side *s, uint32_t sdepth, uint32_t rdepth,
		      bool split_cqs)
{
	side_make_owner(s, sdepth, rdepth, split_cqs, 0);
}

static void ep_gone(struct dapl_tep *ep)
{
	int i = 0;

	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_destroy(ep), 0);
	/* events already collected for it die with it: a new ep may get its
	 * address (the core, too, drops events of a freed EP) */
	while (i < h.nev) {
		if (ev_is_for(&h.evs[i], ep)) {
			memmove(&h.evs[i], &h.evs[i + 1],
				(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
			h.nev--;
		} else {
			i++;
		}
	}
	pthread_mutex_unlock(&h.lock);
}

static void side_free(struct side *s)
{
	if (s->ep) {
		ep_gone(s->ep);
		s->ep = NULL;
	}
	/* the flushes of a destroyed ep are handed out, then the CQ goes */
	while (T->cq_poll(s->scq, &(struct dapl_twc){ 0 }, 1) > 0)
		;
	if (s->rcq != s->scq) {
		while (T->cq_poll(s->rcq, &(struct dapl_twc){ 0 }, 1) > 0)
			;
		ck_assert_int_eq(T->cq_destroy(s->rcq), 0);
	}
	ck_assert_int_eq(T->cq_destroy(s->scq), 0);
	ck_assert_int_eq(T->pd_free(s->pd), 0);
}

static struct dapl_tlisten *do_listen(uint16_t *port)
{
	struct dapl_tlisten *l;

	*port = 0;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->listen(h.dev, port, &l), 0);
	pthread_mutex_unlock(&h.lock);
	ck_assert_uint_ne(*port, 0);
	return l;
}

static void do_unlisten(struct dapl_tlisten *l)
{
	pthread_mutex_lock(&h.lock);
	T->unlisten(l);
	pthread_mutex_unlock(&h.lock);
}

static int connect_to(struct dapl_tep *ep, const struct sockaddr *sa,
		      uint16_t port, const void *pd, size_t len)
{
	int ret;

	pthread_mutex_lock(&h.lock);
	ret = T->connect(ep, sa, port, pd, len, 4, 4);
	pthread_mutex_unlock(&h.lock);
	return ret;
}

static int do_connect(struct dapl_tep *ep, uint16_t port, const void *pd,
		      size_t len)
{
	return connect_to(ep, (const struct sockaddr *)&g_addr, port, pd, len);
}

static int do_accept(struct dapl_tconn *c, struct dapl_tep *ep,
		     const void *pd, size_t len)
{
	int ret;

	pthread_mutex_lock(&h.lock);
	ret = T->accept(c, ep, pd, len, 4, 4);
	pthread_mutex_unlock(&h.lock);
	return ret;
}

static int do_reject(struct dapl_tconn *c, const void *pd, size_t len)
{
	int ret;

	pthread_mutex_lock(&h.lock);
	ret = T->reject(c, pd, len);
	pthread_mutex_unlock(&h.lock);
	return ret;
}

static int do_disconnect(struct dapl_tep *ep)
{
	int ret;

	pthread_mutex_lock(&h.lock);
	ret = T->disconnect(ep);
	pthread_mutex_unlock(&h.lock);
	return ret;
}

static void do_destroy(struct side *s)
{
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_destroy(s->ep), 0);
	pthread_mutex_unlock(&h.lock);
	s->ep = NULL;
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31u + seed);
}

/* The private data of an event: the n bytes sent, exactly, or (where the
 * transport pads, TF_PDATA_PADDED) those bytes and zeros up to padded. */
static void expect_pdata(const struct evc *c, const void *want, size_t n,
			 size_t padded)
{
	size_t i;

	if (n == 0) {
		ck_assert_uint_eq(c->ev.pdata_len, 0);
		return;
	}
	ck_assert_msg(c->ev.pdata_len == (behaves(TF_PDATA_PADDED) ? padded : n),
		      "pdata_len %zu for %zu bytes sent", c->ev.pdata_len, n);
	ck_assert_int_eq(memcmp(c->pdata, want, n), 0);
	for (i = n; i < c->ev.pdata_len; i++)
		ck_assert_uint_eq(c->pdata[i], 0);
}

/* Connects a (active) to b (passive) through l. */
static void connect_pair(struct dapl_tlisten *l, uint16_t port,
			 struct side *a, struct side *b)
{
	struct evc c;

	ck_assert_int_eq(do_connect(a->ep, port, "req", 3), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_accept(c.ev.conn, b->ep, "rep", 3), 0);
	c = take(a->ep, DAPL_TCM_ESTABLISHED);
	expect_pdata(&c, "rep", 3, g_attr.max_pdata_accept);
	take(b->ep, DAPL_TCM_ESTABLISHED);
}

/* A registered buffer. */
struct buf {
	uint8_t *p;
	size_t len;
	struct dapl_tmr *mr;
	uint32_t lkey, rkey;
};

static void buf_make(struct buf *b, struct dapl_tpd *pd, size_t len,
		     unsigned access)
{
	b->len = len;
	b->p = calloc(1, len);
	ck_assert_ptr_nonnull(b->p);
	ck_assert_int_eq(T->mr_reg(pd, b->p, len, access, &b->mr, &b->lkey,
				   &b->rkey), 0);
}

static void buf_free(struct buf *b)
{
	ck_assert_int_eq(T->mr_dereg(b->mr), 0);
	free(b->p);
}

static struct dapl_tsge sge_of(struct buf *b, size_t off, size_t len)
{
	struct dapl_tsge s = {
		.addr = (uint64_t)(uintptr_t)(b->p + off),
		.length = (uint32_t)len, .lkey = b->lkey, .mr = b->mr,
	};
	return s;
}

#define ALL_ACCESS (DAPL_TACCESS_LOCAL_READ | DAPL_TACCESS_LOCAL_WRITE | \
		    DAPL_TACCESS_REMOTE_READ | DAPL_TACCESS_REMOTE_WRITE)

/* A connected pair of sides on a fresh device. */
struct pair {
	struct dapl_tlisten *l;
	uint16_t port;
	struct side a, b;
};

static void pair_up(struct pair *p, uint32_t depth, bool split)
{
	start_dev();
	p->l = do_listen(&p->port);
	side_make(&p->a, depth, depth, split);
	side_make(&p->b, depth, depth, split);
	connect_pair(p->l, p->port, &p->a, &p->b);
}

static void pair_down(struct pair *p)
{
	side_free(&p->a);
	side_free(&p->b);
	do_unlisten(p->l);
	stop_dev();
}

/* Both ends of a connection whose data path failed lose it: the side
 * that saw the error with CONN_ERROR, the other with DISCONNECTED (or
 * CONN_ERROR, when its QP saw the error too). */
#define expect_broken(ep) expect_broken_at(ep, __LINE__)
static void expect_broken_at(struct dapl_tep *ep, int line)
{
	struct evc c = take_any_at(ep, line);

	ck_assert_msg(c.ev.type == DAPL_TCM_CONN_ERROR ||
		      c.ev.type == DAPL_TCM_DISCONNECTED,
		      "line %d: event %d (status %d), wanted the connection to end",
		      line, c.ev.type, c.ev.status);
}

/* An RDMA request of p->a (context ctx) met a bad key, range or right at
 * p->b.  Where the transport reports that (DAPL_TDEV_REMOTE_ACCESS_ERRORS)
 * it completes REMOTE_ACCESS and a's connection breaks; elsewhere
 * (libfabric tcp) the connection just ends on both sides and the request
 * is flushed, and where completions are local (iWARP) a write may even
 * have completed with success first. */
#define expect_access_error(p, ctx, op) \
	expect_access_error_at(p, ctx, op, __LINE__)
static void expect_access_error_at(struct pair *p, uint64_t ctx,
				   enum dapl_twc_opcode op, int line)
{
	if (g_attr.flags & DAPL_TDEV_REMOTE_ACCESS_ERRORS) {
		expect_wc(p->a.scq, ctx, op, DAPL_TWC_REMOTE_ACCESS, 0);
		take_at(p->a.ep, DAPL_TCM_CONN_ERROR, line);
		expect_broken_at(p->b.ep, line);
	} else if (behaves(TF_LOCAL_COMPLETION)) {
		/* the write may have completed before the peer refused it;
		 * the refusal ends the connection on both sides */
		struct dapl_twc wc = wait_wc(p->a.scq);

		ck_assert_uint_eq(wc.context, ctx);
		ck_assert_int_eq(wc.opcode, op);
		ck_assert_msg(wc.status == DAPL_TWC_FLUSHED ||
			      (op != DAPL_TWC_RDMA_READ &&
			       wc.status == DAPL_TWC_SUCCESS),
			      "line %d: a refused request completed with %d",
			      line, wc.status);
		expect_broken_at(p->a.ep, line);
		expect_broken_at(p->b.ep, line);
	} else {
		expect_wc(p->a.scq, ctx, op, DAPL_TWC_FLUSHED, 0);
		take_at(p->a.ep, DAPL_TCM_DISCONNECTED, line);
		take_at(p->b.ep, DAPL_TCM_DISCONNECTED, line);
	}
}

/* ---- DAT 2.0 extensions (transports that offer them) ------------------------------ */

static bool has_ext_ops(void)
{
	return T->size >= offsetof(struct udapl_transport_ops, post_atomic) +
			  sizeof(T->post_atomic) &&
	       T->ep_extensions && T->post_rdma_write_imm && T->post_atomic;
}

/* The next completion, read into a wc filled with garbage first: imm
 * and flags must be written for every completion, not only those that
 * carry an immediate. */
static struct dapl_twc wait_wc_poisoned(struct dapl_tcq *cq)
{
	struct timespec end;
	struct dapl_twc wc;
	struct pollfd pf;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += DEADLINE_MS / 1000;
	pf.fd = T->cq_wait_fd(cq);
	pf.events = POLLIN;
	for (;;) {
		int n;

		memset(&wc, 0xa5, sizeof(wc));
		n = T->cq_poll(cq, &wc, 1);
		ck_assert_int_ge(n, 0);
		if (n)
			return wc;
		ck_assert_int_eq(T->cq_arm(cq, 0), 0);
		memset(&wc, 0xa5, sizeof(wc));
		if (T->cq_poll(cq, &wc, 1))
			return wc;
		ck_assert_msg(ms_left(&end) > 0, "no completion");
		poll(&pf, 1, (int)ms_left(&end));
		T->cq_ack(cq);
	}
}

#define expect_xwc(cq, ctx, op, len, imm, flags) \
	expect_xwc_at(cq, ctx, op, len, imm, flags, __LINE__)
static void expect_xwc_at(struct dapl_tcq *cq, uint64_t ctx,
			  enum dapl_twc_opcode op, uint32_t len, uint32_t imm,
			  uint32_t flags, int line)
{
	struct dapl_twc wc = wait_wc_poisoned(cq);

	ck_assert_msg(wc.context == ctx && wc.opcode == op &&
		      wc.status == DAPL_TWC_SUCCESS,
		      "line %d: context %llx opcode %d status %d, wanted %llx %d "
		      "success", line, (unsigned long long)wc.context, wc.opcode,
		      wc.status, (unsigned long long)ctx, op);
	ck_assert_msg(wc.byte_len == len, "line %d: byte_len %u, wanted %u",
		      line, wc.byte_len, len);
	ck_assert_msg(wc.imm == imm && wc.flags == flags,
		      "line %d: imm %#x flags %#x, wanted %#x %#x", line, wc.imm,
		      wc.flags, imm, flags);
}

#define ATOMIC_ACCESS (ALL_ACCESS | DAPL_TACCESS_REMOTE_ATOMIC)

/* Write with immediate: the data is placed, then the immediate consumes
 * the next receive (in order with Sends), which completes with the
 * write's length and the immediate; ordinary completions carry neither. */
START_TEST(write_with_immediate)
{
	struct pair p;
	struct buf la, rb, rr;
	struct dapl_tsge s, r;
	const size_t n = 300000;
	int i;

	if (!has_ext_ops() || !(g_attr.flags & DAPL_TDEV_WRITE_IMM))
		return;
	pair_up(&p, 16, true);
	ck_assert_uint_eq(T->ep_extensions(p.a.ep) & DAPL_TDEV_WRITE_IMM,
			  DAPL_TDEV_WRITE_IMM);
	ck_assert_uint_eq(T->ep_extensions(p.b.ep) & DAPL_TDEV_WRITE_IMM,
			  DAPL_TDEV_WRITE_IMM);
	buf_make(&la, p.a.pd, n, ALL_ACCESS);
	buf_make(&rb, p.b.pd, n + 64, ALL_ACCESS);
	buf_make(&rr, p.b.pd, 256, ALL_ACCESS);

	/* a receive, a Send, a write with immediate, a Send: three
	 * receives taken in that order, the write's data in place when its
	 * receive completes */
	for (i = 0; i < 3; i++) {
		r = sge_of(&rr, (size_t)i * 64, 64);
		ck_assert_int_eq(T->post_recv(p.b.ep, &r, 1, 10 + (uint64_t)i), 0);
	}
	fill(la.p, n, 5);
	s = sge_of(&la, 0, 7);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 1, DAPL_TPOST_SIGNALED), 0);
	s = sge_of(&la, 0, n);
	ck_assert_int_eq(T->post_rdma_write_imm(p.a.ep, &s, 1,
						(uint64_t)(uintptr_t)(rb.p + 64),
						rb.rkey, 0xfeedf00du, 2,
						DAPL_TPOST_SIGNALED), 0);
	s = sge_of(&la, 0, 9);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 3, DAPL_TPOST_SIGNALED), 0);
	expect_xwc(p.a.scq, 1, DAPL_TWC_SEND, 7, 0, 0);
	expect_xwc(p.a.scq, 2, DAPL_TWC_RDMA_WRITE_IMM, (uint32_t)n, 0, 0);
	expect_xwc(p.a.scq, 3, DAPL_TWC_SEND, 9, 0, 0);
	expect_xwc(p.b.rcq, 10, DAPL_TWC_RECV, 7, 0, 0);
	expect_xwc(p.b.rcq, 11, DAPL_TWC_RECV_RDMA_IMM, (uint32_t)n,
		   0xfeedf00du, DAPL_TWC_WITH_IMM);
	ck_assert_int_eq(memcmp(rb.p + 64, la.p, n), 0);
	expect_xwc(p.b.rcq, 12, DAPL_TWC_RECV, 9, 0, 0);

	/* posted before its receive: it waits for one; with no data it
	 * reports 0 bytes, and nothing lands in the receive's buffer */
	memset(rr.p, 0x33, rr.len);
	ck_assert_int_eq(T->post_rdma_write_imm(p.a.ep, NULL, 0,
						(uint64_t)(uintptr_t)rb.p, rb.rkey,
						7u, 4, DAPL_TPOST_SIGNALED), 0);
	r = sge_of(&rr, 0, 64);
	ck_assert_int_eq(T->post_recv(p.b.ep, &r, 1, 13), 0);
	expect_xwc(p.b.rcq, 13, DAPL_TWC_RECV_RDMA_IMM, 0, 7u, DAPL_TWC_WITH_IMM);
	expect_xwc(p.a.scq, 4, DAPL_TWC_RDMA_WRITE_IMM, 0, 0, 0);
	for (i = 0; i < 64; i++)
		ck_assert_uint_eq(rr.p[i], 0x33);
	expect_cq_empty(p.a.scq);
	expect_cq_empty(p.b.rcq);

	buf_free(&la);
	buf_free(&rb);
	buf_free(&rr);
	pair_down(&p);
}
END_TEST

/* A write with immediate into an endpoint on a shared receive queue
 * takes a receive of the SRQ, which names the endpoint. */
START_TEST(write_with_immediate_srq)
{
	struct dapl_tep_attr attr = {
		.max_send_wr = 4, .max_recv_wr = 0,
		.max_send_sge = 1, .max_recv_sge = 1, .owner = 0xB7,
	};
	struct dapl_tlisten *l;
	struct dapl_tsrq *srq;
	struct side a, b;
	struct buf rb, tb, sb;
	struct dapl_tsge s;
	uint16_t port;

	if (!has_ext_ops() || !(g_attr.flags & DAPL_TDEV_WRITE_IMM) ||
	    !T->srq_create)
		return;
	start_dev();
	l = do_listen(&port);
	side_make(&a, 4, 4, false);
	ck_assert_int_eq(T->pd_alloc(h.dev, &b.pd), 0);
	ck_assert_int_eq(T->srq_create(b.pd, 4, 1, &srq), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 16, &b.scq), 0);
	b.rcq = b.scq;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_create(b.pd, b.scq, b.rcq, srq, &attr, &b.ep), 0);
	pthread_mutex_unlock(&h.lock);
	connect_pair(l, port, &a, &b);
	buf_make(&rb, b.pd, 64, ALL_ACCESS);
	buf_make(&tb, b.pd, 4096, ALL_ACCESS);
	buf_make(&sb, a.pd, 4096, ALL_ACCESS);
	s = sge_of(&rb, 0, 64);
	ck_assert_int_eq(T->srq_post_recv(srq, &s, 1, 0x51), 0);
	fill(sb.p, 4096, 21);
	s = sge_of(&sb, 0, 3000);
	ck_assert_int_eq(T->post_rdma_write_imm(a.ep, &s, 1,
						(uint64_t)(uintptr_t)tb.p, tb.rkey,
						0x5157u, 1, DAPL_TPOST_SIGNALED), 0);
	expect_xwc(a.scq, 1, DAPL_TWC_RDMA_WRITE_IMM, 3000, 0, 0);
	{
		struct dapl_twc wc = wait_wc_poisoned(b.rcq);

		ck_assert_uint_eq(wc.context, 0x51);
		ck_assert_uint_eq(wc.owner, 0xB7);
		ck_assert_int_eq(wc.opcode, DAPL_TWC_RECV_RDMA_IMM);
		ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
		ck_assert_uint_eq(wc.byte_len, 3000);
		ck_assert_uint_eq(wc.imm, 0x5157u);
		ck_assert_uint_eq(wc.flags, DAPL_TWC_WITH_IMM);
	}
	ck_assert_int_eq(memcmp(tb.p, sb.p, 3000), 0);
	buf_free(&rb);
	buf_free(&tb);
	buf_free(&sb);
	side_free(&a);
	ep_gone(b.ep);
	ck_assert_int_eq(T->srq_destroy(srq, NULL, NULL), 0);
	ck_assert_int_eq(T->cq_destroy(b.scq), 0);
	ck_assert_int_eq(T->pd_free(b.pd), 0);
	do_unlisten(l);
	stop_dev();
}
END_TEST

/* Fetch-and-add and compare-and-swap return the original word, change
 * it as they say, and keep their place among the other requests. */
START_TEST(atomics)
{
	struct pair p;
	struct buf la, rb;
	struct dapl_tsge s, res;
	uint64_t *w, *got, v;

	if (!has_ext_ops() || !(g_attr.flags & DAPL_TDEV_ATOMICS))
		return;
	pair_up(&p, 16, false);
	ck_assert_uint_eq(T->ep_extensions(p.a.ep) & DAPL_TDEV_ATOMICS,
			  DAPL_TDEV_ATOMICS);
	buf_make(&la, p.a.pd, 4096, ALL_ACCESS);
	buf_make(&rb, p.b.pd, 4096, ATOMIC_ACCESS);
	w = (uint64_t *)(void *)(rb.p + 64);
	got = (uint64_t *)(void *)la.p;
	*w = 100;
	res = sge_of(&la, 0, 8);

	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_FETCH_ADD, &res,
					(uint64_t)(uintptr_t)w, rb.rkey, 5, 0,
					1, DAPL_TPOST_SIGNALED), 0);
	expect_xwc(p.a.scq, 1, DAPL_TWC_FETCH_ADD, 8, 0, 0);
	ck_assert_uint_eq(*got, 100);
	ck_assert_uint_eq(*w, 105);

	/* compare-and-swap that matches, then one that does not */
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_CMP_SWAP, &res,
					(uint64_t)(uintptr_t)w, rb.rkey, 105,
					0x1122334455667788ull, 2,
					DAPL_TPOST_SIGNALED), 0);
	expect_xwc(p.a.scq, 2, DAPL_TWC_CMP_SWAP, 8, 0, 0);
	ck_assert_uint_eq(*got, 105);
	ck_assert_uint_eq(*w, 0x1122334455667788ull);
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_CMP_SWAP, &res,
					(uint64_t)(uintptr_t)w, rb.rkey, 105, 1,
					3, DAPL_TPOST_SIGNALED), 0);
	expect_xwc(p.a.scq, 3, DAPL_TWC_CMP_SWAP, 8, 0, 0);
	ck_assert_uint_eq(*got, 0x1122334455667788ull);
	ck_assert_uint_eq(*w, 0x1122334455667788ull);

	/* 64 bits with the carry: adding 2^64 - 1 subtracts one */
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_FETCH_ADD, &res,
					(uint64_t)(uintptr_t)w, rb.rkey,
					UINT64_MAX, 0, 4, DAPL_TPOST_SIGNALED), 0);
	expect_xwc(p.a.scq, 4, DAPL_TWC_FETCH_ADD, 8, 0, 0);
	ck_assert_uint_eq(*w, 0x1122334455667787ull);

	/* order: a write of the word, an add on it (sees the write), a read
	 * of it (sees the add), all posted at once.  With the IRD of 4 the
	 * test connects with, the Read's response slot is one an atomic
	 * used before (tcp answered it with an Atomic Response once). */
	v = 1000;
	memcpy(la.p + 64, &v, 8);
	s = sge_of(&la, 64, 8);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
					    (uint64_t)(uintptr_t)w, rb.rkey, 5,
					    0), 0);
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_FETCH_ADD, &res,
					(uint64_t)(uintptr_t)w, rb.rkey, 1, 0,
					6, DAPL_TPOST_SIGNALED), 0);
	s = sge_of(&la, 128, 8);
	ck_assert_int_eq(T->post_rdma_read(p.a.ep, &s, 1,
					   (uint64_t)(uintptr_t)w, rb.rkey, 7,
					   DAPL_TPOST_SIGNALED), 0);
	expect_xwc(p.a.scq, 6, DAPL_TWC_FETCH_ADD, 8, 0, 0);
	expect_xwc(p.a.scq, 7, DAPL_TWC_RDMA_READ, 8, 0, 0);
	ck_assert_uint_eq(*got, 1000);
	memcpy(&v, la.p + 128, 8);
	ck_assert_uint_eq(v, 1001);

	/* a word that is not 8-byte aligned, a result that is not 8 bytes */
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_FETCH_ADD, &res,
					(uint64_t)(uintptr_t)w + 4, rb.rkey, 1,
					0, 8, DAPL_TPOST_SIGNALED), -EINVAL);
	s = sge_of(&la, 0, 4);
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_FETCH_ADD, &s,
					(uint64_t)(uintptr_t)w, rb.rkey, 1,
					0, 8, DAPL_TPOST_SIGNALED), -EINVAL);
	expect_cq_empty(p.a.scq);
	ck_assert_uint_eq(*w, 1001);

	buf_free(&la);
	buf_free(&rb);
	pair_down(&p);
}
END_TEST

/* An atomic on memory registered without remote-atomic access is a
 * remote access error, and the word stays as it was. */
START_TEST(atomic_needs_privilege)
{
	struct pair p;
	struct buf la, rb;
	struct dapl_tsge res;
	uint64_t *w;

	if (!has_ext_ops() || !(g_attr.flags & DAPL_TDEV_ATOMICS))
		return;
	pair_up(&p, 8, true);
	buf_make(&la, p.a.pd, 4096, ALL_ACCESS);
	buf_make(&rb, p.b.pd, 4096, ALL_ACCESS);    /* no REMOTE_ATOMIC */
	w = (uint64_t *)(void *)rb.p;
	*w = 42;
	res = sge_of(&la, 0, 8);
	ck_assert_int_eq(T->post_atomic(p.a.ep, DAPL_TATOMIC_CMP_SWAP, &res,
					(uint64_t)(uintptr_t)w, rb.rkey, 42, 7,
					1, DAPL_TPOST_SIGNALED), 0);
	expect_access_error(&p, 1, DAPL_TWC_CMP_SWAP);
	ck_assert_uint_eq(*w, 42);
	buf_free(&la);
	buf_free(&rb);
	pair_down(&p);
}
END_TEST

/* Many connections add to one word at once, each driven by a thread of
 * its own (its target side too: polling a CQ drives its endpoints), so
 * the targets' adds race: none is lost. */
enum { ADD_CONNS = 4, ADDS = 2000, ADDS_VALGRIND = 100 };

/* valgrind runs one thread at a time: fewer rounds there */
static int adds_wanted(void)
{
	const char *p = getenv("LD_PRELOAD");

	return p && strstr(p, "vgpreload") ? ADDS_VALGRIND : ADDS;
}

struct adder {
	struct side a, b;
	struct buf la;
	struct dapl_tmr *mr;
	uint32_t lkey, rkey;
	uint64_t *w;
	int adds, done;
};

static void *adder_main(void *arg)
{
	struct adder *x = arg;
	int k;

	for (k = 0; k < x->adds; k++) {
		struct dapl_tsge res = sge_of(&x->la, 0, 8);
		struct dapl_twc wc;
		int n = 0;

		if (T->post_atomic(x->a.ep, DAPL_TATOMIC_FETCH_ADD, &res,
				   (uint64_t)(uintptr_t)x->w, x->rkey, 1, 0,
				   (uint64_t)k, DAPL_TPOST_SIGNALED))
			break;
		while (n == 0) {
			struct dapl_twc other;

			n = T->cq_poll(x->a.scq, &wc, 1);
			if (T->cq_poll(x->b.scq, &other, 1) != 0)
				return NULL;    /* nothing completes there */
		}
		if (n < 0 || wc.status != DAPL_TWC_SUCCESS ||
		    wc.opcode != DAPL_TWC_FETCH_ADD)
			break;
		x->done++;
	}
	return NULL;
}

/* The process's own thread adds to the word too, with the CPU's atomic
 * add, until told to stop: an add of a peer's that is not atomic (a load
 * and a store) can lose some of these, or they some of its.  (A race
 * test: a window of a few instructions is seldom hit; one that yields
 * in it always is.) */
struct hammer {
	uint64_t *w;
	uint64_t count;
	int stop;
	bool yield;     /* under valgrind, which runs one thread at a time */
};

static void *hammer_main(void *arg)
{
	struct hammer *m = arg;

	while (!__atomic_load_n(&m->stop, __ATOMIC_ACQUIRE)) {
		__atomic_fetch_add(m->w, 1, __ATOMIC_SEQ_CST);
		m->count++;
		/* a spinner holding valgrind's one running thread starves
		 * the adders until the test's timeout (CI, stop 28) */
		if (m->yield)
			sched_yield();
	}
	return NULL;
}

START_TEST(atomics_across_connections)
{
	struct hammer m;
	pthread_t ht;
	struct dapl_tlisten *l;
	uint16_t port;
	struct adder x[ADD_CONNS];
	pthread_t t[ADD_CONNS];
	uint64_t *w;
	int i;

	if (!has_ext_ops() || !(g_attr.flags & DAPL_TDEV_ATOMICS))
		return;
	start_dev();
	l = do_listen(&port);
	w = aligned_alloc(64, 64);
	ck_assert_ptr_nonnull(w);
	*w = 0;
	for (i = 0; i < ADD_CONNS; i++) {
		side_make(&x[i].a, 4, 4, false);
		side_make(&x[i].b, 4, 4, false);
		/* nothing before there is a connection */
		ck_assert_uint_eq(T->ep_extensions(x[i].a.ep), 0);
		connect_pair(l, port, &x[i].a, &x[i].b);
		ck_assert_uint_eq(T->ep_extensions(x[i].a.ep),
				  DAPL_TDEV_ATOMICS |
				  (g_attr.flags & DAPL_TDEV_WRITE_IMM));
		buf_make(&x[i].la, x[i].a.pd, 64, ALL_ACCESS);
		/* the one word, registered in each target's PZ */
		ck_assert_int_eq(T->mr_reg(x[i].b.pd, w, 64, ATOMIC_ACCESS,
					   &x[i].mr, &x[i].lkey, &x[i].rkey), 0);
		x[i].w = w;
		x[i].adds = adds_wanted();
		x[i].done = 0;
	}
	m.w = w;
	m.count = 0;
	m.yield = adds_wanted() == ADDS_VALGRIND;
	/* The process's own adds race the peers' only where libdat runs the
	 * peers' atomics with the CPU's (tcp): a device's atomics are
	 * atomic among the device's own (rxe: IBV_ATOMIC_HCA), and a CPU
	 * add racing them may be lost (seen on rxe: 61 of 5.5 M). */
	m.stop = strcmp(T->name, "tcp") != 0;
	ck_assert_int_eq(pthread_create(&ht, NULL, hammer_main, &m), 0);
	for (i = 0; i < ADD_CONNS; i++)
		ck_assert_int_eq(pthread_create(&t[i], NULL, adder_main, &x[i]), 0);
	for (i = 0; i < ADD_CONNS; i++)
		pthread_join(t[i], NULL);
	__atomic_store_n(&m.stop, 1, __ATOMIC_RELEASE);
	pthread_join(ht, NULL);
	for (i = 0; i < ADD_CONNS; i++)
		ck_assert_int_eq(x[i].done, x[i].adds);
	ck_assert_uint_eq(*w, (uint64_t)ADD_CONNS * x[0].adds + m.count);
	for (i = 0; i < ADD_CONNS; i++) {
		ck_assert_int_eq(T->mr_dereg(x[i].mr), 0);
		buf_free(&x[i].la);
		side_free(&x[i].a);
		side_free(&x[i].b);
	}
	free(w);
	do_unlisten(l);
	stop_dev();
}
END_TEST

/* ---- device ---------------------------------------------------------------------- */

void open_fails(const char *params, int err, const char *needle,
		const char *needle2)
{
	struct dapl_tdev *dev = NULL;
	char why[256] = "";
	int ret = T->dev_open(params, &dev, why, sizeof(why));

	ck_assert_msg(ret < 0, "dev_open(%s) succeeded", params ? params : "NULL");
	if (err)
		ck_assert_msg(ret == err, "dev_open(%s): %d, wanted %d (%s)",
			      params ? params : "NULL", ret, err, why);
	ck_assert_msg(strstr(why, needle) || (needle2 && strstr(why, needle2)),
		      "why for \"%s\": \"%s\" lacks \"%s\"",
		      params ? params : "NULL", why, needle);
}

/* What every device says of itself, then the transport's own checks. */
static void check_attr(const struct dapl_tdev_attr *attr)
{
	const struct sockaddr_in *sin = (const struct sockaddr_in *)&attr->addr;

	ck_assert_int_eq(sin->sin_family, AF_INET);
	ck_assert_uint_eq(sin->sin_addr.s_addr, g_addr.sin_addr.s_addr);
	ck_assert_uint_eq(sin->sin_port, 0);
	ck_assert_msg(attr->name[0], "no device name");
	ck_assert_uint_ge(attr->max_ird, 1);
	ck_assert_uint_ge(attr->max_ord, 1);
	ck_assert_uint_ge(attr->max_sge, 4);
	ck_assert_uint_le(attr->max_sge_rd, attr->max_sge);
	ck_assert_uint_ge(attr->max_qp_wr, 256);
	ck_assert_uint_ge(attr->max_msg_size, 1u << 20);
	ck_assert_uint_lt(attr->max_pdata_connect, PDATA_MAX);
	ck_assert_uint_lt(attr->max_pdata_accept, PDATA_MAX);
	ck_assert_uint_lt(attr->max_pdata_reject, PDATA_MAX);
	ck_assert_msg((attr->flags & ~F->caps_vary) == (F->caps & ~F->caps_vary),
		      "flags %#x, wanted %#x (apart from %#x)", attr->flags,
		      F->caps, F->caps_vary);
	if (F->check_attr)
		F->check_attr(attr);
}

START_TEST(dev_open_params)
{
	struct dapl_tdev_attr attr;
	struct dapl_tdev *dev;
	char why[256] = "";

	ck_assert_int_eq(T->size, sizeof(struct udapl_transport_ops));
	ck_assert_str_eq(T->name, F->name);
	ck_assert_int_eq(T->dev_open(F->params, &dev, why, sizeof(why)), 0);
	ck_assert_int_eq(T->dev_query(dev, &attr), 0);
	check_attr(&attr);
	T->dev_close(dev);

	/* a netdev name opens like its address */
	if (F->netdev_params[0]) {
		ck_assert_msg(T->dev_open(F->netdev_params, &dev, why,
					  sizeof(why)) == 0,
			      "%s: %s", F->netdev_params, why);
		ck_assert_int_eq(T->dev_query(dev, &attr), 0);
		check_attr(&attr);
		T->dev_close(dev);
	}

	open_fails("", -EINVAL, "must be", NULL);
	open_fails(NULL, -EINVAL, "must be", NULL);
	if (F->open_cases)
		F->open_cases();
}
END_TEST

/* ---- listening -------------------------------------------------------------------------- */

START_TEST(listen_ports)
{
	struct dapl_tlisten *l, *l2;
	uint16_t port, again;

	start_dev();
	l = do_listen(&port);
	again = port;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->listen(h.dev, &again, &l2), -EADDRINUSE);
	pthread_mutex_unlock(&h.lock);
	do_unlisten(l);
	/* free again: the same port can be had */
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->listen(h.dev, &again, &l2), 0);
	pthread_mutex_unlock(&h.lock);
	ck_assert_uint_eq(again, port);
	do_unlisten(l2);
	stop_dev();
}
END_TEST

/* ---- connection management ------------------------------------------------------------- */

START_TEST(connect_pdata_sizes)
{
	size_t sizes[] = { 0, 1, 10, 0, 0 };
	struct side a;
	struct dapl_tlisten *l;
	uint8_t pd[PDATA_MAX];
	uint16_t port;
	size_t i, max;

	start_dev();
	max = g_attr.max_pdata_connect;
	sizes[3] = max - 10;
	sizes[4] = max;
	l = do_listen(&port);
	side_make(&a, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, pd, max + 1), -EINVAL);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct sockaddr_in *peer;
		struct evc c;

		fill(pd, sizeof(pd), (unsigned)i + 7);
		pd[0] |= 1;     /* not all zeros */
		ck_assert_int_eq(do_connect(a.ep, port, pd, sizes[i]), 0);
		c = take(l, DAPL_TCM_CONNECT_REQUEST);
		ck_assert_ptr_eq(c.ev.listener, l);
		ck_assert_ptr_nonnull(c.ev.conn);
		expect_pdata(&c, pd, sizes[i], max);
		peer = (struct sockaddr_in *)&c.ev.peer;
		ck_assert_int_eq(peer->sin_family, AF_INET);
		ck_assert_uint_eq(peer->sin_addr.s_addr, g_addr.sin_addr.s_addr);
		ck_assert_int_eq(do_reject(c.ev.conn, "no", 2), 0);
		c = take(a.ep, DAPL_TCM_REJECTED);
		expect_pdata(&c, "no", 2, g_attr.max_pdata_reject);
		/* a refused attempt leaves the ep ready for the next one */
	}
	side_free(&a);
	do_unlisten(l);
	stop_dev();
}
END_TEST

START_TEST(accept_and_reject_pdata)
{
	struct side a, b;
	struct dapl_tlisten *l;
	struct sockaddr_storage al, ap, bl, bp;
	uint8_t pd[PDATA_MAX + 1];
	size_t acc = g_attr.max_pdata_accept, rej = g_attr.max_pdata_reject;
	/* what the active side hears when the answer was refused */
	enum dapl_tcm_event_type refused = behaves(TF_FAILED_ANSWER_BREAKS) ?
		DAPL_TCM_CONN_ERROR : DAPL_TCM_REJECTED;
	uint16_t port;
	struct evc c;

	start_dev();
	l = do_listen(&port);
	side_make(&a, 8, 8, false);
	side_make(&b, 8, 8, false);
	fill(pd, sizeof(pd), 99);

	/* accept with the most the transport carries: exactly those bytes */
	ck_assert_int_eq(do_connect(a.ep, port, "hello", 5), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	expect_pdata(&c, "hello", 5, g_attr.max_pdata_connect);
	ck_assert_int_eq(do_accept(c.ev.conn, b.ep, pd, acc), 0);
	c = take(a.ep, DAPL_TCM_ESTABLISHED);
	expect_pdata(&c, pd, acc, acc);
	c = take(b.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_uint_eq(c.ev.pdata_len, 0);

	ck_assert_int_eq(T->ep_addrs(a.ep, &al, &ap), 0);
	ck_assert_int_eq(T->ep_addrs(b.ep, &bl, &bp), 0);
	ck_assert_int_eq(memcmp(&al, &bp, sizeof(struct sockaddr_in)), 0);
	ck_assert_int_eq(memcmp(&ap, &bl, sizeof(struct sockaddr_in)), 0);
	ck_assert_uint_eq(ntohs(((struct sockaddr_in *)&ap)->sin_port), port);

	/* reject with the most data */
	side_free(&a);
	side_make(&a, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, NULL, 0), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_uint_eq(c.ev.pdata_len, 0);
	ck_assert_int_eq(do_reject(c.ev.conn, pd, rej), 0);
	c = take(a.ep, DAPL_TCM_REJECTED);
	expect_pdata(&c, pd, rej, rej);

	/* one byte too many is refused but still ends the request, and the
	 * active side hears no data (the core always sends its header, so
	 * no data means not the consumer's answer) */
	ck_assert_int_eq(do_connect(a.ep, port, NULL, 0), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_reject(c.ev.conn, pd, rej + 1), -EINVAL);
	c = take(a.ep, refused);
	ck_assert_uint_eq(c.ev.pdata_len, 0);

	/* accept with one byte too many: refused, the request ended */
	side_free(&b);
	side_make(&b, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, NULL, 0), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_accept(c.ev.conn, b.ep, pd, acc + 1), -EINVAL);
	c = take(a.ep, refused);
	ck_assert_uint_eq(c.ev.pdata_len, 0);

	/* and the same eps connect afterwards */
	connect_pair(l, port, &a, &b);

	side_free(&a);
	side_free(&b);
	do_unlisten(l);
	stop_dev();
}
END_TEST

/* Nobody listens: refused by the peer's CM, not its consumer, so no
 * data (the core reports NON_PEER_REJECTED). */
START_TEST(no_listener_is_rejected_without_data)
{
	struct dapl_tlisten *l;
	struct side a;
	uint16_t port;
	struct evc c;

	start_dev();
	l = do_listen(&port);
	do_unlisten(l);         /* a port nobody listens on */
	side_make(&a, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, "x", 1), 0);
	c = take(a.ep, DAPL_TCM_REJECTED);
	ck_assert_uint_eq(c.ev.pdata_len, 0);
	ck_assert_int_eq(c.ev.status, -ECONNREFUSED);
	side_free(&a);
	stop_dev();
}
END_TEST

/* An address nothing answers at: refused at once with an errno the core
 * reports as UNREACHABLE, or UNREACHABLE as an event.  Where the route
 * resolves anyway (datvm's netdev answers no ARP, so any address of its
 * subnet "resolves"; a TCP connect just waits for its SYN's answer), the
 * request goes unanswered; the core's connect timeout then ends the
 * attempt with disconnect, which reports DISCONNECTED, the attempt's one
 * terminal event. */
static void unreachable_round(struct side *a, const struct sockaddr *far)
{
	struct evc c;
	bool got;
	int ret;

	ret = connect_to(a->ep, far, 4711, "x", 1);
	if (ret) {
		ck_assert_msg(ret == -ENETUNREACH || ret == -EHOSTUNREACH ||
			      ret == -EADDRNOTAVAIL || ret == -ENETDOWN ||
			      ret == -ETIMEDOUT || ret == -EAFNOSUPPORT ||
			      ret == -EINVAL,
			      "connect to an unreachable address: %d", ret);
		return;
	}
	pthread_mutex_lock(&h.lock);
	got = take_within(a->ep, 3000, &c);
	if (!got)
		ck_assert_int_eq(T->disconnect(a->ep), 0);
	pthread_mutex_unlock(&h.lock);
	if (got) {
		ck_assert_msg(c.ev.type == DAPL_TCM_UNREACHABLE,
			      "event %d (status %d), wanted UNREACHABLE",
			      c.ev.type, c.ev.status);
		ck_assert_int_lt(c.ev.status, 0);
	} else {
		take(a->ep, DAPL_TCM_DISCONNECTED);
		ck_assert_int_eq(pending_for(a->ep), 0);
		ck_assert_int_eq(do_disconnect(a->ep), -ENOTCONN);
	}
}

START_TEST(unreachable_address)
{
	struct sockaddr_in far = { .sin_family = AF_INET };
	struct sockaddr_in6 far6 = { .sin6_family = AF_INET6 };
	struct dapl_tlisten *l;
	struct side a, b;
	uint16_t port;

	env_set(F->unreachable_env, true);
	start_dev();
	env_set(F->unreachable_env, false);
	side_make(&a, 8, 8, false);
	/* TEST-NET-2, and an IPv6 documentation address */
	inet_pton(AF_INET, "198.51.100.1", &far.sin_addr);
	unreachable_round(&a, (struct sockaddr *)&far);
	inet_pton(AF_INET6, "2001:db8::1", &far6.sin6_addr);
	unreachable_round(&a, (struct sockaddr *)&far6);
	/* an address routed through a netdev without a device: it resolves,
	 * then there is no device (an event, not an error of connect) */
	if (F->unreachable_peer[0]) {
		struct evc c;

		ck_assert_int_eq(inet_pton(AF_INET, F->unreachable_peer,
					   &far.sin_addr), 1);
		ck_assert_int_eq(connect_to(a.ep, (struct sockaddr *)&far, 4711,
					    "x", 1), 0);
		c = take(a.ep, DAPL_TCM_UNREACHABLE);
		ck_assert_int_lt(c.ev.status, 0);
	}
	/* the ep connects elsewhere afterwards */
	l = do_listen(&port);
	side_make(&b, 8, 8, false);
	connect_pair(l, port, &a, &b);
	side_free(&b);
	do_unlisten(l);
	side_free(&a);
	stop_dev();
}
END_TEST

/* Requests already reported outlive unlisten (the core answers them
 * later: a freed PSP's CRs stay valid, an RSP unlistens at its first
 * request); new ones are refused as if nobody listened, and the port is
 * free again once the last request is answered. */
START_TEST(unlisten_keeps_reported_requests)
{
	struct dapl_tlisten *l, *l2;
	struct dapl_tconn *ca, *cc;
	struct side a, b, c, d;
	uint16_t port, again;
	struct evc ev;

	start_dev();
	l = do_listen(&port);
	side_make(&a, 8, 8, false);
	side_make(&b, 8, 8, false);
	side_make(&c, 8, 8, false);
	side_make(&d, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, "a", 1), 0);
	ca = take(l, DAPL_TCM_CONNECT_REQUEST).ev.conn;
	ck_assert_int_eq(do_connect(c.ep, port, "c", 1), 0);
	cc = take(l, DAPL_TCM_CONNECT_REQUEST).ev.conn;
	do_unlisten(l);

	/* a new request: refused like "nobody listens", never reported */
	ck_assert_int_eq(do_connect(d.ep, port, "d", 1), 0);
	ev = take(d.ep, DAPL_TCM_REJECTED);
	ck_assert_uint_eq(ev.ev.pdata_len, 0);

	/* the reported ones can still be answered */
	ck_assert_int_eq(do_reject(cc, "busy", 4), 0);
	ev = take(c.ep, DAPL_TCM_REJECTED);
	expect_pdata(&ev, "busy", 4, g_attr.max_pdata_reject);
	ck_assert_int_eq(do_accept(ca, b.ep, "ok", 2), 0);
	ev = take(a.ep, DAPL_TCM_ESTABLISHED);
	expect_pdata(&ev, "ok", 2, g_attr.max_pdata_accept);
	take(b.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_int_eq(pending_for(l), 0);

	/* all answered: the port is free again, and d, refused, tries again */
	again = port;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->listen(h.dev, &again, &l2), 0);
	pthread_mutex_unlock(&h.lock);
	ck_assert_uint_eq(again, port);
	ck_assert_int_eq(do_connect(d.ep, port, "d", 1), 0);
	ev = take(l2, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(ev.pdata[0], 'd');
	/* left unanswered: dev_close refuses it */

	side_free(&a);
	side_free(&b);
	side_free(&c);
	side_free(&d);
	do_unlisten(l2);
	stop_dev();
}
END_TEST

/* Both sides see DISCONNECTED exactly once, whoever ends it; every
 * receive still posted is flushed once on both sides. */
START_TEST(disconnect_either_side)
{
	int who;

	start_dev();
	for (who = 0; who < 2; who++) {
		struct dapl_tlisten *l;
		struct side a, b, *x, *y;
		struct buf ba, bb;
		struct dapl_tsge s;
		uint16_t port;
		int i;

		l = do_listen(&port);
		side_make(&a, 8, 8, true);
		side_make(&b, 8, 8, true);
		buf_make(&ba, a.pd, 64, ALL_ACCESS);
		buf_make(&bb, b.pd, 64, ALL_ACCESS);
		connect_pair(l, port, &a, &b);
		for (i = 0; i < 5; i++) {
			s = sge_of(&ba, 0, 64);
			ck_assert_int_eq(T->post_recv(a.ep, &s, 1, 0xa0 + (uint64_t)i), 0);
			s = sge_of(&bb, 0, 64);
			ck_assert_int_eq(T->post_recv(b.ep, &s, 1, 0xb0 + (uint64_t)i), 0);
		}

		x = who ? &b : &a;
		y = who ? &a : &b;
		ck_assert_int_eq(do_disconnect(x->ep), 0);
		take(x->ep, DAPL_TCM_DISCONNECTED);
		take(y->ep, DAPL_TCM_DISCONNECTED);
		for (i = 0; i < 5; i++) {
			expect_wc(a.rcq, 0xa0 + (uint64_t)i, DAPL_TWC_RECV,
				  DAPL_TWC_FLUSHED, 0);
			expect_wc(b.rcq, 0xb0 + (uint64_t)i, DAPL_TWC_RECV,
				  DAPL_TWC_FLUSHED, 0);
		}
		/* nothing more for either, now or after a second disconnect */
		ck_assert_int_eq(do_disconnect(x->ep), -ENOTCONN);
		ck_assert_int_eq(do_disconnect(y->ep), -ENOTCONN);
		ck_assert_int_eq(pending_for(a.ep), 0);
		ck_assert_int_eq(pending_for(b.ep), 0);
		expect_cq_empty(a.rcq);
		expect_cq_empty(b.rcq);
		expect_cq_empty(a.scq);
		/* requests posted now flush at once */
		s = sge_of(&ba, 0, 64);
		ck_assert_int_eq(T->post_recv(a.ep, &s, 1, 0xaa), 0);
		expect_wc(a.rcq, 0xaa, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		ck_assert_int_eq(T->post_send(a.ep, &s, 1, 0xab, 0), 0);
		expect_wc(a.scq, 0xab, DAPL_TWC_SEND, DAPL_TWC_FLUSHED, 0);
		buf_free(&ba);
		buf_free(&bb);
		side_free(&a);
		side_free(&b);
		do_unlisten(l);
		ck_assert_int_eq(h.nev, 0);
	}
	stop_dev();
}
END_TEST

/* ---- data ---------------------------------------------------------------------------- */

START_TEST(send_recv_sizes)
{
	static const size_t sizes[] = { 0, 1, 60, 100, 4096, 65536, 1u << 20 };
	struct pair p;
	struct buf src, dst;
	size_t i;

	pair_up(&p, 16, true);
	buf_make(&src, p.a.pd, 1u << 20, ALL_ACCESS);
	buf_make(&dst, p.b.pd, (1u << 20) + 64, ALL_ACCESS);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		size_t n = sizes[i];
		struct dapl_tsge rs = sge_of(&dst, 0, dst.len);
		struct dapl_tsge ss[3];
		int nsge;

		fill(src.p, n, (unsigned)i);
		memset(dst.p, 0xee, dst.len);
		ck_assert_int_eq(T->post_recv(p.b.ep, &rs, 1, 100 + i), 0);
		if (n >= 100) {         /* a gather list of three pieces */
			ss[0] = sge_of(&src, 0, n / 4);
			ss[1] = sge_of(&src, n / 4, n / 2);
			ss[2] = sge_of(&src, n / 4 + n / 2, n - n / 4 - n / 2);
			nsge = 3;
		} else {
			ss[0] = sge_of(&src, 0, n);
			nsge = n ? 1 : 0;
		}
		ck_assert_int_eq(T->post_send(p.a.ep, ss, nsge, 200 + i,
					      DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.a.scq, 200 + i, DAPL_TWC_SEND, DAPL_TWC_SUCCESS,
			  (uint32_t)n);
		expect_wc(p.b.rcq, 100 + i, DAPL_TWC_RECV, DAPL_TWC_SUCCESS,
			  (uint32_t)n);
		ck_assert_int_eq(memcmp(dst.p, src.p, n), 0);
		ck_assert_uint_eq(dst.p[n], 0xee);
	}
	/* a scatter list on the receive side, and unsignalled sends */
	{
		struct dapl_tsge rs[2] = { sge_of(&dst, 0, 10),
					   sge_of(&dst, 1000, 90) };
		struct dapl_tsge ss = sge_of(&src, 0, 100);

		fill(src.p, 100, 5);
		ck_assert_int_eq(T->post_recv(p.b.ep, rs, 2, 7), 0);
		ck_assert_int_eq(T->post_send(p.a.ep, &ss, 1, 8, 0), 0);
		expect_wc(p.b.rcq, 7, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 100);
		ck_assert_int_eq(memcmp(dst.p, src.p, 10), 0);
		ck_assert_int_eq(memcmp(dst.p + 1000, src.p + 10, 90), 0);
		/* a signalled send after the unsignalled one: only it shows */
		ck_assert_int_eq(T->post_recv(p.b.ep, rs, 2, 9), 0);
		ck_assert_int_eq(T->post_send(p.a.ep, &ss, 1, 10,
					      DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.a.scq, 10, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 100);
		expect_wc(p.b.rcq, 9, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 100);
		expect_cq_empty(p.a.scq);
	}
	/* small sends go inline: the device never reads the buffer, so an
	 * lkey of nothing registered does not matter */
	if (F->ep_max_inline && F->ep_max_inline(p.a.ep) >= 16) {
		uint8_t stack[16];
		struct dapl_tsge rs = sge_of(&dst, 0, 64);
		struct dapl_tsge ss = { .addr = (uint64_t)(uintptr_t)stack,
					.length = 16, .lkey = 0xdeadbeef };

		fill(stack, 16, 77);
		ck_assert_int_eq(T->post_recv(p.b.ep, &rs, 1, 11), 0);
		ck_assert_int_eq(T->post_send(p.a.ep, &ss, 1, 12,
					      DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.a.scq, 12, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 16);
		expect_wc(p.b.rcq, 11, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 16);
		ck_assert_int_eq(memcmp(dst.p, stack, 16), 0);
	}
	buf_free(&src);
	buf_free(&dst);
	pair_down(&p);
}
END_TEST

START_TEST(rdma_write_read)
{
	struct pair p;
	struct buf la, rb;
	struct dapl_tsge s[3];
	const size_t n = 3u << 20;
	int i, nrd;

	pair_up(&p, 16, false);
	buf_make(&la, p.a.pd, n, ALL_ACCESS);
	buf_make(&rb, p.b.pd, n, ALL_ACCESS);

	/* write 3 MiB from two pieces into b */
	fill(la.p, n, 3);
	s[0] = sge_of(&la, 0, 4096);
	s[1] = sge_of(&la, 4096, n - 4096);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, s, 2,
					    (uint64_t)(uintptr_t)rb.p, rb.rkey,
					    1, DAPL_TPOST_SIGNALED), 0);
	expect_wc(p.a.scq, 1, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, (uint32_t)n);
	/* delivery complete: the data is in place when the write completes */
	ck_assert_int_eq(memcmp(la.p, rb.p, n), 0);

	/* read 1 MiB back from an offset */
	fill(rb.p, n, 11);
	memset(la.p, 0, n);
	s[0] = sge_of(&la, 0, 1u << 20);
	ck_assert_int_eq(T->post_rdma_read(p.a.ep, s, 1,
					   (uint64_t)(uintptr_t)(rb.p + 12345),
					   rb.rkey, 2, DAPL_TPOST_SIGNALED), 0);
	expect_wc(p.a.scq, 2, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 1u << 20);
	ck_assert_int_eq(memcmp(la.p, rb.p + 12345, 1u << 20), 0);

	/* a read scattered into as many pieces as the device allows (up to
	 * three): each piece gets its part */
	nrd = (int)(g_attr.max_sge_rd ? g_attr.max_sge_rd : g_attr.max_sge);
	if (nrd > 3)
		nrd = 3;
	memset(la.p, 0, 3 * 8192);
	for (i = 0; i < nrd; i++)
		s[i] = sge_of(&la, (size_t)i * 8192, 1000);
	ck_assert_int_eq(T->post_rdma_read(p.a.ep, s, nrd,
					   (uint64_t)(uintptr_t)(rb.p + 777),
					   rb.rkey, 4, DAPL_TPOST_SIGNALED), 0);
	expect_wc(p.a.scq, 4, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS,
		  (uint32_t)nrd * 1000);
	for (i = 0; i < nrd; i++) {
		ck_assert_int_eq(memcmp(la.p + (size_t)i * 8192,
					rb.p + 777 + (size_t)i * 1000, 1000), 0);
		ck_assert_uint_eq(la.p[(size_t)i * 8192 + 1000], 0);
	}

	/* a small write (inline where the transport has that) */
	fill(la.p, 32, 9);
	s[0] = sge_of(&la, 0, 32);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, s, 1,
					    (uint64_t)(uintptr_t)rb.p + 7, rb.rkey,
					    3, DAPL_TPOST_SIGNALED), 0);
	expect_wc(p.a.scq, 3, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 32);
	ck_assert_int_eq(memcmp(la.p, rb.p + 7, 32), 0);
	expect_cq_empty(p.b.scq);

	buf_free(&la);
	buf_free(&rb);
	pair_down(&p);
}
END_TEST

/* A bad RDMA target ends the connection on both sides, reported as such
 * where the transport can (expect_access_error). */
START_TEST(remote_access_error)
{
	int is_read;

	for (is_read = 0; is_read < 2; is_read++) {
		struct pair p;
		struct buf la, rb;
		struct dapl_tsge s;

		pair_up(&p, 8, true);
		buf_make(&la, p.a.pd, 4096, ALL_ACCESS);
		buf_make(&rb, p.b.pd, 4096, ALL_ACCESS);
		s = sge_of(&la, 0, 64);
		if (is_read)
			ck_assert_int_eq(T->post_rdma_read(p.a.ep, &s, 1,
							   (uint64_t)(uintptr_t)rb.p,
							   rb.rkey ^ 0x5a5a00u, 1,
							   DAPL_TPOST_SIGNALED), 0);
		else
			ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
							    (uint64_t)(uintptr_t)rb.p,
							    rb.rkey ^ 0x5a5a00u, 1,
							    DAPL_TPOST_SIGNALED), 0);
		expect_access_error(&p, 1, is_read ? DAPL_TWC_RDMA_READ :
				    DAPL_TWC_RDMA_WRITE);
		/* anything posted now flushes */
		ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 2, 0), 0);
		expect_wc(p.a.scq, 2, DAPL_TWC_SEND, DAPL_TWC_FLUSHED, 0);
		buf_free(&la);
		buf_free(&rb);
		pair_down(&p);
	}
}
END_TEST

/* A message longer than the receive: LOCAL_LENGTH for the receiver, an
 * error for the sender, and both connections end. */
START_TEST(local_length_error)
{
	struct pair p;
	struct buf sa, rb;
	struct dapl_tsge s;
	struct dapl_twc wc;

	pair_up(&p, 8, true);
	buf_make(&sa, p.a.pd, 4096, ALL_ACCESS);
	buf_make(&rb, p.b.pd, 4096, ALL_ACCESS);
	s = sge_of(&rb, 0, 100);
	ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 1), 0);
	s = sge_of(&rb, 1000, 100);
	ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 2), 0);
	s = sge_of(&sa, 0, 200);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 3, DAPL_TPOST_SIGNALED), 0);
	wc = wait_wc(p.b.rcq);
	ck_assert_uint_eq(wc.context, 1);
	ck_assert_msg(wc.status == DAPL_TWC_LOCAL_LENGTH ||
		      (F->short_recv_also != DAPL_TWC_SUCCESS &&
		       wc.status == F->short_recv_also),
		      "a too small receive completed with %d", wc.status);
	expect_broken(p.b.ep);
	expect_wc(p.b.rcq, 2, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
	wc = wait_wc(p.a.scq);
	ck_assert_uint_eq(wc.context, 3);
	/* iWARP completed it when TCP took it */
	ck_assert_msg(wc.status != DAPL_TWC_SUCCESS || behaves(TF_LOCAL_COMPLETION),
		      "the oversized send succeeded");
	expect_broken(p.a.ep);
	expect_cq_empty(p.a.scq);
	expect_cq_empty(p.b.rcq);
	buf_free(&sa);
	buf_free(&rb);
	pair_down(&p);
}
END_TEST

/* Queues hold what they were created for; a slot is free again only
 * once its completion was handed out. */
START_TEST(depth_is_enforced)
{
	struct pair p;
	struct buf b, rb;
	struct dapl_tsge s, r, five[5];
	int i;

	pair_up(&p, 3, true);
	buf_make(&b, p.a.pd, 4096, ALL_ACCESS);
	buf_make(&rb, p.b.pd, 4096, ALL_ACCESS);
	s = sge_of(&b, 0, 64);
	r = sge_of(&rb, 0, 64);
	for (i = 0; i < 5; i++)
		five[i] = r;
	/* too many segments */
	ck_assert_int_eq(T->post_recv(p.b.ep, five, 5, 15), -EINVAL);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(T->post_recv(p.a.ep, &s, 1, (uint64_t)i), 0);
	ck_assert_int_eq(T->post_recv(p.a.ep, &s, 1, 3), -ENOSPC);

	/* sends: one completes once the peer has placed it in a posted
	 * receive, and its slot is free once that completion was polled */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(T->post_recv(p.b.ep, &r, 1, 100 + (uint64_t)i), 0);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 10 + (uint64_t)i,
					      DAPL_TPOST_SIGNALED), 0);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 13, DAPL_TPOST_SIGNALED),
			 -ENOSPC);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1, 0, 0, 14,
					    DAPL_TPOST_SIGNALED), -ENOSPC);
	expect_wc(p.a.scq, 10, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.b.rcq, 100, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 64);
	ck_assert_int_eq(T->post_recv(p.b.ep, &r, 1, 103), 0);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 13, DAPL_TPOST_SIGNALED), 0);
	/* too many segments, on a full queue: refused for the segments */
	for (i = 0; i < 5; i++)
		five[i] = s;
	ck_assert_int_eq(T->post_send(p.a.ep, five, 5, 15, 0), -EINVAL);
	expect_wc(p.a.scq, 11, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.a.scq, 12, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.a.scq, 13, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);

	/* the same with writes, which need nothing posted at the peer */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
						    (uint64_t)(uintptr_t)rb.p,
						    rb.rkey, 20 + (uint64_t)i,
						    DAPL_TPOST_SIGNALED), 0);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 23, DAPL_TPOST_SIGNALED),
			 -ENOSPC);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1, 0, 0, 24,
					    DAPL_TPOST_SIGNALED), -ENOSPC);
	expect_wc(p.a.scq, 20, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 64);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
					    (uint64_t)(uintptr_t)rb.p, rb.rkey,
					    23, DAPL_TPOST_SIGNALED), 0);
	ck_assert_int_eq(T->post_send(p.a.ep, five, 5, 25, 0), -EINVAL);
	expect_wc(p.a.scq, 21, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.a.scq, 22, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.a.scq, 23, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 64);

	/* unsignalled writes hold their slot until a later one completes
	 * (where their own completion is never seen) */
	if (behaves(TF_UNSIGNALLED_HELD)) {
		for (i = 0; i < 2; i++)
			ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
							    (uint64_t)(uintptr_t)rb.p,
							    rb.rkey, 30 + (uint64_t)i,
							    0), 0);
		ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
						    (uint64_t)(uintptr_t)rb.p,
						    rb.rkey, 32,
						    DAPL_TPOST_SIGNALED), 0);
		ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
						    (uint64_t)(uintptr_t)rb.p,
						    rb.rkey, 33,
						    DAPL_TPOST_SIGNALED), -ENOSPC);
		expect_wc(p.a.scq, 32, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 64);
		expect_cq_empty(p.a.scq);
	}
	/* and then the whole queue is free */
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
						    (uint64_t)(uintptr_t)rb.p,
						    rb.rkey, 40 + (uint64_t)i,
						    DAPL_TPOST_SIGNALED), 0);
	for (i = 0; i < 3; i++)
		expect_wc(p.a.scq, 40 + (uint64_t)i, DAPL_TWC_RDMA_WRITE,
			  DAPL_TWC_SUCCESS, 64);
	expect_cq_empty(p.a.scq);
	buf_free(&b);
	buf_free(&rb);
	pair_down(&p);
}
END_TEST

START_TEST(destroy_flushes_once)
{
	struct pair p;
	struct buf b;
	struct dapl_tsge s;
	struct dapl_tep *gone;
	struct dapl_twc wc[16];
	int i, n;

	pair_up(&p, 8, true);
	buf_make(&b, p.a.pd, 4096, ALL_ACCESS);
	s = sge_of(&b, 0, 64);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(T->post_recv(p.a.ep, &s, 1, (uint64_t)i), 0);
	gone = p.a.ep;
	do_destroy(&p.a);
	/* all five are on the CQ when destroy returns, each once, in order */
	n = T->cq_poll(p.a.rcq, wc, 16);
	ck_assert_int_eq(n, 5);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, DAPL_TWC_FLUSHED);
		ck_assert_int_eq(wc[i].opcode, DAPL_TWC_RECV);
		ck_assert_uint_eq(wc[i].context, (uint64_t)i);
		ck_assert_uint_eq(wc[i].owner, 0);
	}
	expect_cq_empty(p.a.rcq);
	/* the peer hears of it; the destroyed ep is never named */
	take(p.b.ep, DAPL_TCM_DISCONNECTED);
	ck_assert_int_eq(pending_for(gone), 0);

	/* receives held by an ep never connected flush on reset and destroy */
	{
		struct side c;
		struct dapl_twc w;

		side_make_owner(&c, 4, 4, false, 0xC);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 76), 0);
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_reset(c.ep), 0);
		pthread_mutex_unlock(&h.lock);
		w = wait_wc(c.rcq);
		ck_assert_uint_eq(w.context, 76);
		ck_assert_int_eq(w.opcode, DAPL_TWC_RECV);
		ck_assert_int_eq(w.status, DAPL_TWC_FLUSHED);
		ck_assert_uint_eq(w.owner, 0xC);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 77), 0);
		ck_assert_int_eq(T->post_send(c.ep, &s, 1, 78, 0), -ENOTCONN);
		do_destroy(&c);
		expect_wc(c.rcq, 77, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		expect_cq_empty(c.rcq);
		side_free(&c);
	}
	/* a destroyed ep whose flushes are not polled yet: the CQ still
	 * hands them out later */
	{
		struct side c;

		side_make(&c, 4, 4, false);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 91), 0);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 92), 0);
		do_destroy(&c);
		expect_wc(c.rcq, 91, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		expect_wc(c.rcq, 92, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		side_free(&c);
	}
	/* ... or drops them with the CQ */
	{
		struct side c;

		side_make(&c, 4, 4, false);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 93), 0);
		do_destroy(&c);
		ck_assert_int_eq(T->cq_destroy(c.scq), 0);
		ck_assert_int_eq(T->pd_free(c.pd), 0);
	}
	buf_free(&b);
	pair_down(&p);
}
END_TEST

START_TEST(reset_and_reconnect)
{
	struct pair p;
	struct buf ba, bb;
	struct dapl_tsge s;
	int round;

	pair_up(&p, 8, false);
	buf_make(&ba, p.a.pd, 4096, ALL_ACCESS);
	buf_make(&bb, p.b.pd, 4096, ALL_ACCESS);
	for (round = 0; round < 3; round++) {
		/* a message each way */
		memset(bb.p, 0, 64);
		fill(ba.p, 64, (unsigned)round);
		s = sge_of(&bb, 0, 64);
		ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 1), 0);
		s = sge_of(&ba, 0, 64);
		ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 2,
					      DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.b.rcq, 1, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 64);
		expect_wc(p.a.scq, 2, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
		ck_assert_int_eq(memcmp(ba.p, bb.p, 64), 0);

		ck_assert_int_eq(do_disconnect(p.b.ep), 0);
		take(p.a.ep, DAPL_TCM_DISCONNECTED);
		take(p.b.ep, DAPL_TCM_DISCONNECTED);
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_reset(p.b.ep), 0);
		if (round != 1)         /* round 1: connect again without reset */
			ck_assert_int_eq(T->ep_reset(p.a.ep), 0);
		pthread_mutex_unlock(&h.lock);
		/* a receive posted before the new connection waits for it */
		s = sge_of(&bb, 0, 64);
		ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 3), 0);
		connect_pair(p.l, p.port, &p.a, &p.b);
		s = sge_of(&ba, 0, 64);
		ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 4, 0), 0);
		expect_wc(p.b.rcq, 3, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 64);
	}
	buf_free(&ba);
	buf_free(&bb);
	pair_down(&p);
}
END_TEST

/* Send-side completions come back in posting order, a fenced send after
 * a read included (libfabric tcp completes a big read after later sends;
 * the transport must not). */
START_TEST(send_side_order)
{
	struct pair p;
	struct buf big, rbig, small, rsmall;
	struct dapl_tsge s;
	size_t n = 16u << 20;
	int round;

	pair_up(&p, 16, true);
	if (g_attr.max_rdma_size && n > g_attr.max_rdma_size)
		n = (size_t)g_attr.max_rdma_size;
	buf_make(&big, p.a.pd, n, ALL_ACCESS);
	buf_make(&rbig, p.b.pd, n, ALL_ACCESS);
	buf_make(&small, p.a.pd, 64, ALL_ACCESS);
	buf_make(&rsmall, p.b.pd, 64, ALL_ACCESS);
	fill(rbig.p, n, 42);
	for (round = 0; round < 2; round++) {
		unsigned fence = round ? DAPL_TPOST_FENCE : 0;

		memset(big.p, 0, n);
		s = sge_of(&rsmall, 0, 64);
		ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 50), 0);
		s = sge_of(&big, 0, n);
		ck_assert_int_eq(T->post_rdma_read(p.a.ep, &s, 1,
						   (uint64_t)(uintptr_t)rbig.p,
						   rbig.rkey, 1,
						   DAPL_TPOST_SIGNALED), 0);
		s = sge_of(&small, 0, 8);
		/* round 1: the send is fenced behind the read */
		ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 2,
					      DAPL_TPOST_SIGNALED | fence), 0);
		/* an unsignalled write behind them; a signalled one last */
		ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
						    (uint64_t)(uintptr_t)rsmall.p + 8,
						    rsmall.rkey, 3, 0), 0);
		ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
						    (uint64_t)(uintptr_t)rsmall.p + 16,
						    rsmall.rkey, 4,
						    DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.a.scq, 1, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS,
			  (uint32_t)n);
		ck_assert_int_eq(memcmp(big.p, rbig.p, n), 0);
		expect_wc(p.a.scq, 2, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 8);
		expect_wc(p.a.scq, 4, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 8);
		expect_wc(p.b.rcq, 50, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 8);
		expect_cq_empty(p.a.scq);
	}
	buf_free(&big);
	buf_free(&rbig);
	buf_free(&small);
	buf_free(&rsmall);
	pair_down(&p);
}
END_TEST

/* Memory windows, real or emulated by registrations, once per mode the
 * fixture lists: the same behaviour each time. */
static void window_round(const struct window_mode *mode)
{
	struct pair p;
	struct buf la, rb;
	struct dapl_tmw *mw;
	struct dapl_tsge s;
	struct dapl_tdev_attr attr;
	uint32_t rkey = 0, old;
	int dead_read;

	env_set(mode->env, true);
	pair_up(&p, 8, false);
	env_set(mode->env, false);
	ck_assert_int_eq(T->dev_query(h.dev, &attr), 0);
	if (mode->flags & WINDOW_EMULATED)
		ck_assert_uint_eq(attr.flags & DAPL_TDEV_MEMORY_WINDOWS, 0);
	buf_make(&la, p.a.pd, 4096, ALL_ACCESS);
	buf_make(&rb, p.b.pd, 8192, DAPL_TACCESS_LOCAL_READ |
		 DAPL_TACCESS_LOCAL_WRITE);
	ck_assert_int_eq(T->mw_alloc(p.b.pd, &mw), 0);
	/* out of the registration's range */
	ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr,
				    (uint64_t)(uintptr_t)rb.p + 4096, 8192,
				    DAPL_TACCESS_REMOTE_WRITE, 5,
				    DAPL_TPOST_SIGNALED, &rkey), -EINVAL);
	ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr,
				    (uint64_t)(uintptr_t)rb.p + 4096, 4096,
				    DAPL_TACCESS_REMOTE_WRITE, 6,
				    DAPL_TPOST_SIGNALED, &rkey), 0);
	expect_wc(p.b.scq, 6, DAPL_TWC_BIND_MW, DAPL_TWC_SUCCESS, 0);
	fill(la.p, 4096, 9);
	s = sge_of(&la, 0, 4096);
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
					    (uint64_t)(uintptr_t)rb.p + 4096,
					    rkey, 7, DAPL_TPOST_SIGNALED), 0);
	expect_wc(p.a.scq, 7, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 4096);
	ck_assert_int_eq(memcmp(rb.p + 4096, la.p, 4096), 0);
	/* a rebind gives a new key; the window is now read-only, so a write
	 * through it is refused.  (Outside the window but inside the
	 * registration is not tested: rxe checks only the registration.) */
	old = rkey;
	ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr,
				    (uint64_t)(uintptr_t)rb.p, 4096,
				    DAPL_TACCESS_REMOTE_READ, 8,
				    DAPL_TPOST_SIGNALED, &rkey), 0);
	expect_wc(p.b.scq, 8, DAPL_TWC_BIND_MW, DAPL_TWC_SUCCESS, 0);
	ck_assert_uint_ne(rkey, old);
	fill(rb.p, 64, 21);
	s = sge_of(&la, 0, 64);
	ck_assert_int_eq(T->post_rdma_read(p.a.ep, &s, 1,
					   (uint64_t)(uintptr_t)rb.p, rkey, 9,
					   DAPL_TPOST_SIGNALED), 0);
	expect_wc(p.a.scq, 9, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 64);
	ck_assert_int_eq(memcmp(la.p, rb.p, 64), 0);
	if (mode->flags & WINDOW_HOLDS_EP) {
		/* rxe's QP cannot be destroyed while a type 2 window is bound
		 * through it (the window holds it): unbind first; the write
		 * below then meets a dead key instead */
		ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr, 0, 0, 0, 16,
					    DAPL_TPOST_SIGNALED, &rkey), 0);
		expect_wc(p.b.scq, 16, DAPL_TWC_BIND_MW, DAPL_TWC_SUCCESS, 0);
		ck_assert_uint_eq(rkey, 0);
	}
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
					    (uint64_t)(uintptr_t)rb.p,
					    rkey ? rkey : old, 15,
					    DAPL_TPOST_SIGNALED), 0);
	expect_access_error(&p, 15, DAPL_TWC_RDMA_WRITE);
	ck_assert_int_eq(T->mw_free(mw), 0);
	buf_free(&la);
	buf_free(&rb);

	/* fresh pairs: unbind, unsignalled, reports nothing; then the key is
	 * dead, to a read and to a write */
	for (dead_read = 1; dead_read >= 0; dead_read--) {
		side_free(&p.a);
		side_free(&p.b);
		side_make(&p.a, 8, 8, false);
		side_make(&p.b, 8, 8, false);
		connect_pair(p.l, p.port, &p.a, &p.b);
		buf_make(&la, p.a.pd, 4096, ALL_ACCESS);
		buf_make(&rb, p.b.pd, 8192, DAPL_TACCESS_LOCAL_READ |
			 DAPL_TACCESS_LOCAL_WRITE);
		ck_assert_int_eq(T->mw_alloc(p.b.pd, &mw), 0);
		ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr,
					    (uint64_t)(uintptr_t)rb.p, 4096,
					    DAPL_TACCESS_REMOTE_READ |
					    DAPL_TACCESS_REMOTE_WRITE, 10,
					    DAPL_TPOST_SIGNALED, &rkey), 0);
		expect_wc(p.b.scq, 10, DAPL_TWC_BIND_MW, DAPL_TWC_SUCCESS, 0);
		fill(rb.p, 64, 3);
		s = sge_of(&la, 0, 64);
		ck_assert_int_eq(T->post_rdma_read(p.a.ep, &s, 1,
						   (uint64_t)(uintptr_t)rb.p, rkey,
						   11, DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.a.scq, 11, DAPL_TWC_RDMA_READ, DAPL_TWC_SUCCESS, 64);
		ck_assert_int_eq(memcmp(la.p, rb.p, 64), 0);
		/* unbind, unsignalled: nothing is reported; a signalled write
		 * behind it completes, and the unbind with it */
		old = rkey;
		ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr, 0, 0, 0, 12, 0,
					    &rkey), 0);
		ck_assert_uint_eq(rkey, 0);
		s = sge_of(&rb, 4096, 8);
		ck_assert_int_eq(T->post_rdma_write(p.b.ep, &s, 1,
						    (uint64_t)(uintptr_t)la.p + 128,
						    la.rkey, 13,
						    DAPL_TPOST_SIGNALED), 0);
		expect_wc(p.b.scq, 13, DAPL_TWC_RDMA_WRITE, DAPL_TWC_SUCCESS, 8);
		expect_cq_empty(p.b.scq);
		/* the old key is dead */
		s = sge_of(&la, 0, 64);
		if (dead_read) {
			ck_assert_int_eq(T->post_rdma_read(p.a.ep, &s, 1,
							   (uint64_t)(uintptr_t)rb.p,
							   old, 14,
							   DAPL_TPOST_SIGNALED), 0);
			expect_access_error(&p, 14, DAPL_TWC_RDMA_READ);
		} else {
			ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
							    (uint64_t)(uintptr_t)rb.p,
							    old, 14,
							    DAPL_TPOST_SIGNALED), 0);
			expect_access_error(&p, 14, DAPL_TWC_RDMA_WRITE);
		}
		ck_assert_int_eq(T->mw_free(mw), 0);
		buf_free(&la);
		buf_free(&rb);
	}
	pair_down(&p);
}

static const struct window_mode default_window = { NULL, 0 };

START_TEST(memory_windows)
{
	window_round(F->nwindows ? &F->windows[_i] : &default_window);
}
END_TEST

/* Ping-pong between two consumer threads that sleep on their CQ wait fds
 * while the pump thread drives progress: no lost wakeup, no lost or
 * duplicated completion. */
struct pinger {
	struct side *me;
	struct buf b;
	int rounds;
	bool starts;
};

static void *ping_main(void *arg)
{
	struct pinger *pg = arg;
	struct dapl_tsge rs = sge_of(&pg->b, 0, 8), ss = sge_of(&pg->b, 8, 8);
	uint32_t i;

	for (i = 0; i < (uint32_t)pg->rounds; i++) {
		struct dapl_twc wc;

		/* the first receive is posted before the threads start: a
		 * Send that finds none ends an iWARP connection */
		if (i > 0)
			ck_assert_int_eq(T->post_recv(pg->me->ep, &rs, 1,
						      1000 + i), 0);
		if (pg->starts || i > 0) {
			memcpy(pg->b.p + 8, &i, sizeof(i));
			ck_assert_int_eq(T->post_send(pg->me->ep, &ss, 1, i,
						      i % 3 ? 0 :
						      DAPL_TPOST_SIGNALED), 0);
			if (i % 3 == 0) {
				wc = wait_wc(pg->me->scq);
				ck_assert_uint_eq(wc.context, i);
			}
		}
		wc = wait_wc(pg->me->rcq);
		ck_assert_uint_eq(wc.context, 1000 + i);
		ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
	}
	if (!pg->starts) {      /* the last answer */
		ck_assert_int_eq(T->post_send(pg->me->ep, &ss, 1, i,
					      DAPL_TPOST_SIGNALED), 0);
		ck_assert_uint_eq(wait_wc(pg->me->scq).context, i);
	}
	return NULL;
}

START_TEST(concurrent_ping_pong)
{
	struct pair p;
	struct pinger pa = { .me = &p.a, .rounds = 2000, .starts = true };
	struct pinger pb = { .me = &p.b, .rounds = 2000, .starts = false };
	struct dapl_tsge first;
	pthread_t ta, tb;

	pair_up(&p, 8, true);
	buf_make(&pa.b, p.a.pd, 16, ALL_ACCESS);
	buf_make(&pb.b, p.b.pd, 16, ALL_ACCESS);
	first = sge_of(&pa.b, 0, 8);
	ck_assert_int_eq(T->post_recv(p.a.ep, &first, 1, 1000), 0);
	first = sge_of(&pb.b, 0, 8);
	ck_assert_int_eq(T->post_recv(p.b.ep, &first, 1, 1000), 0);
	ck_assert_int_eq(pthread_create(&ta, NULL, ping_main, &pa), 0);
	ck_assert_int_eq(pthread_create(&tb, NULL, ping_main, &pb), 0);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	expect_cq_empty(p.a.scq);
	expect_cq_empty(p.b.rcq);
	buf_free(&pa.b);
	buf_free(&pb.b);
	pair_down(&p);
}
END_TEST

/* Many connections completing on one CQ per side (more than a poll of
 * the tcp transport drives one by one): a Send each way on every one
 * completes once, on the right CQ, with its own bytes. */
#define MANY_EPS 12

/* Takes n completions of opcode op from cq; each context base + i once,
 * each i bytes long (i + 1: never 0). */
static void expect_each_once(struct dapl_tcq *cq, enum dapl_twc_opcode op,
			     uint64_t base, int n)
{
	bool seen[MANY_EPS] = { false };
	int k;

	for (k = 0; k < n; k++) {
		struct dapl_twc wc = wait_wc(cq);
		uint64_t i = wc.context - base;

		ck_assert_msg(wc.status == DAPL_TWC_SUCCESS, "context %llx: status %d",
			      (unsigned long long)wc.context, wc.status);
		ck_assert_int_eq(wc.opcode, op);
		ck_assert_msg(i < (uint64_t)n && !seen[i], "context %llx",
			      (unsigned long long)wc.context);
		seen[i] = true;
		if (op == DAPL_TWC_RECV)
			ck_assert_uint_eq(wc.byte_len, i + 1);
	}
	expect_cq_empty(cq);
}

START_TEST(many_endpoints_one_cq)
{
	struct dapl_tep_attr attr = {
		.max_send_wr = 4, .max_recv_wr = 4,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct side a[MANY_EPS], b[MANY_EPS];
	struct dapl_tpd *pda, *pdb;
	struct dapl_tcq *cqa, *cqb;
	struct dapl_tlisten *l;
	struct buf ba, bb;
	struct dapl_tsge sg;
	uint16_t port;
	int i, dir;

	start_dev();
	l = do_listen(&port);
	ck_assert_int_eq(T->pd_alloc(h.dev, &pda), 0);
	ck_assert_int_eq(T->pd_alloc(h.dev, &pdb), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 4 * MANY_EPS, &cqa), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 4 * MANY_EPS, &cqb), 0);
	for (i = 0; i < MANY_EPS; i++) {
		a[i] = (struct side){ .pd = pda, .scq = cqa, .rcq = cqa };
		b[i] = (struct side){ .pd = pdb, .scq = cqb, .rcq = cqb };
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_create(pda, cqa, cqa, NULL, &attr, &a[i].ep), 0);
		ck_assert_int_eq(T->ep_create(pdb, cqb, cqb, NULL, &attr, &b[i].ep), 0);
		pthread_mutex_unlock(&h.lock);
		connect_pair(l, port, &a[i], &b[i]);
	}
	buf_make(&ba, pda, 2 * 64 * MANY_EPS, ALL_ACCESS);
	buf_make(&bb, pdb, 2 * 64 * MANY_EPS, ALL_ACCESS);
	for (dir = 0; dir < 2; dir++) {
		struct side *from = dir ? b : a, *to = dir ? a : b;
		struct buf *fb = dir ? &bb : &ba, *tb = dir ? &ba : &bb;

		for (i = 0; i < MANY_EPS; i++) {
			sg = sge_of(tb, 64 * (size_t)i, 64);
			ck_assert_int_eq(T->post_recv(to[i].ep, &sg, 1, 100 + i), 0);
		}
		/* backwards: the last connection made speaks first */
		for (i = MANY_EPS - 1; i >= 0; i--) {
			memset(fb->p + 64 * MANY_EPS + 64 * i, 'a' + i, 64);
			sg = sge_of(fb, 64 * MANY_EPS + 64 * (size_t)i, (size_t)i + 1);
			ck_assert_int_eq(T->post_send(from[i].ep, &sg, 1, 200 + i,
						      DAPL_TPOST_SIGNALED), 0);
		}
		expect_each_once(to[0].rcq, DAPL_TWC_RECV, 100, MANY_EPS);
		expect_each_once(from[0].scq, DAPL_TWC_SEND, 200, MANY_EPS);
		for (i = 0; i < MANY_EPS; i++)
			ck_assert_int_eq(tb->p[64 * i + i], 'a' + i);
	}
	for (i = 0; i < MANY_EPS; i++) {
		ep_gone(a[i].ep);
		ep_gone(b[i].ep);
	}
	buf_free(&ba);
	buf_free(&bb);
	while (T->cq_poll(cqa, &(struct dapl_twc){ 0 }, 1) > 0)
		;
	while (T->cq_poll(cqb, &(struct dapl_twc){ 0 }, 1) > 0)
		;
	ck_assert_int_eq(T->cq_destroy(cqa), 0);
	ck_assert_int_eq(T->cq_destroy(cqb), 0);
	ck_assert_int_eq(T->pd_free(pda), 0);
	ck_assert_int_eq(T->pd_free(pdb), 0);
	do_unlisten(l);
	stop_dev();
}
END_TEST

/* One SRQ feeding two passive eps whose receives complete on one CQ: the
 * owner tells them apart; depth, resize, the limit event, destroy. */
struct discards {
	int n;
	uint64_t sum;
};

static void count_discard(uint64_t context, void *arg)
{
	struct discards *d = arg;

	d->n++;
	d->sum += context;
}

START_TEST(shared_receive_queue)
{
	struct discards discarded = { 0, 0 };
	struct dapl_tep_attr attr = {
		.max_send_wr = 4, .max_recv_wr = 0,
		.max_send_sge = 1, .max_recv_sge = 1,
	};
	struct dapl_tlisten *l;
	struct dapl_tsrq *srq;
	struct side a1, a2, b1, b2;
	struct buf rb, sb;
	struct dapl_tsge s;
	uint16_t port;
	int i;

	start_dev();
	l = do_listen(&port);
	side_make(&a1, 4, 4, false);
	side_make(&a2, 4, 4, false);
	ck_assert_int_eq(T->pd_alloc(h.dev, &b1.pd), 0);
	ck_assert_int_eq(T->srq_create(b1.pd, 4, 2, &srq), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 16, &b1.scq), 0);
	ck_assert_int_eq(T->cq_create(h.dev, 16, &b2.scq), 0);
	/* both eps receive on one CQ: only the owner tells them apart */
	b1.rcq = b1.scq;
	b2.rcq = b1.scq;
	pthread_mutex_lock(&h.lock);
	attr.owner = 0xB1;
	ck_assert_int_eq(T->ep_create(b1.pd, b1.scq, b1.rcq, srq, &attr,
				      &b1.ep), 0);
	attr.owner = 0xB2;
	ck_assert_int_eq(T->ep_create(b1.pd, b2.scq, b2.rcq, srq, &attr,
				      &b2.ep), 0);
	pthread_mutex_unlock(&h.lock);
	connect_pair(l, port, &a1, &b1);
	connect_pair(l, port, &a2, &b2);

	buf_make(&rb, b1.pd, 4 * 64, ALL_ACCESS);
	buf_make(&sb, a1.pd, 64, ALL_ACCESS);
	s = sge_of(&rb, 0, 64);
	ck_assert_int_eq(T->post_recv(b1.ep, &s, 1, 99), -EINVAL);
	for (i = 0; i < 4; i++) {
		s = sge_of(&rb, (size_t)i * 64, 64);
		ck_assert_int_eq(T->srq_post_recv(srq, &s, 1, 1 + (uint64_t)i), 0);
	}
	ck_assert_int_eq(T->srq_post_recv(srq, &s, 1, 5), -ENOSPC);
	ck_assert_int_eq(T->srq_set_limit(srq, 3), 0);

	memcpy(sb.p, "one", 4);
	s = sge_of(&sb, 0, 4);
	ck_assert_int_eq(T->post_send(a1.ep, &s, 1, 10, 0), 0);
	expect_srq_wc(b1.rcq, 1, 0xB1, 4);
	ck_assert_str_eq((char *)rb.p, "one");
	memcpy(sb.p, "two", 4);
	ck_assert_int_eq(T->post_send(a2.ep, &s, 1, 11, 0), 0);
	expect_srq_wc(b2.rcq, 2, 0xB2, 4);
	ck_assert_str_eq((char *)rb.p + 64, "two");
	expect_cq_empty(b1.rcq);
	/* 2 left < 3: the limit fires, once */
	take(srq, DAPL_TCM_SRQ_LIMIT);
	ck_assert_int_eq(pending_for(srq), 0);

	/* two still posted: cannot shrink below them */
	ck_assert_int_eq(T->srq_resize(srq, 1), -EINVAL);
	ck_assert_int_eq(T->srq_resize(srq, 8), 0);
	for (i = 0; i < 6; i++) {
		s = sge_of(&rb, (size_t)(i % 4) * 64, 64);
		ck_assert_int_eq(T->srq_post_recv(srq, &s, 1, 20 + (uint64_t)i),
				 0);
	}
	ck_assert_int_eq(T->srq_post_recv(srq, &s, 1, 30), -ENOSPC);

	/* a receive b2 took, not handed out before b2 is destroyed, names
	 * nobody */
	memcpy(sb.p, "six", 4);
	s = sge_of(&sb, 0, 4);
	ck_assert_int_eq(T->post_send(a2.ep, &s, 1, 12, DAPL_TPOST_SIGNALED), 0);
	expect_wc(a2.scq, 12, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 4);

	ck_assert_int_eq(T->srq_destroy(srq, NULL, NULL), -EBUSY);
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_destroy(b1.ep), 0);
	ck_assert_int_eq(T->ep_destroy(b2.ep), 0);
	pthread_mutex_unlock(&h.lock);
	{
		struct dapl_twc wc = wait_wc(b1.rcq);

		ck_assert_uint_eq(wc.context, 3);
		ck_assert_int_eq(wc.opcode, DAPL_TWC_RECV);
		ck_assert_int_eq(wc.status, DAPL_TWC_SUCCESS);
		ck_assert_uint_eq(wc.byte_len, 4);
		ck_assert_uint_eq(wc.owner, 0);
	}
	/* an SRQ's receives are not the ep's: nothing flushes */
	expect_cq_empty(b1.rcq);
	expect_cq_empty(b2.rcq);
	/* the one left from the first round and the 6 of the second */
	ck_assert_int_eq(T->srq_destroy(srq, count_discard, &discarded), 0);
	ck_assert_int_eq(discarded.n, 7);
	ck_assert_uint_eq(discarded.sum, 4 + 20 + 21 + 22 + 23 + 24 + 25);
	buf_free(&rb);
	buf_free(&sb);
	ck_assert_int_eq(T->cq_destroy(b1.scq), 0);
	ck_assert_int_eq(T->cq_destroy(b2.scq), 0);
	ck_assert_int_eq(T->pd_free(b1.pd), 0);
	side_free(&a1);
	side_free(&a2);
	do_unlisten(l);
	stop_dev();
}
END_TEST

/* Runs cm_get_event until -EAGAIN, and the drives it left, failing on
 * any event. */
static void expect_no_events(void)
{
	struct dapl_tcm_event ev;

	do {
		while (T->cm_get_event(h.dev, &ev) == 0)
			ck_abort_msg("unexpected event %d", ev.type);
	} while (drive_data(true));
}

/* Nothing pending: the progress fds are quiet.  A transport's timer armed
 * for what just happened (tcp: a placement report) may fire once more:
 * served, it brings no event and stops.  An fd still readable after it
 * was served is a busy loop. */
static void expect_quiet(struct pollfd *pfd, int n)
{
	int i;

	for (i = 0; i < 3 && poll(pfd, (nfds_t)n, 0) > 0; i++)
		expect_no_events();
	ck_assert_int_eq(poll(pfd, (nfds_t)n, 0), 0);
}

/* The progress fds are quiet when nothing is pending, and fire again for
 * what comes later (no busy loop, no lost wakeup). */
START_TEST(progress_fd_is_quiet_when_idle)
{
	struct pair p;
	struct dapl_tcm_event ev;
	struct pollfd pfd[MAXFDS];
	struct buf ba, bb;
	struct dapl_tsge s;
	struct dapl_twc wc;
	int fds[MAXFDS], n, i, got;

	pair_up(&p, 8, false);
	stop_pump();            /* pump by hand from here */
	n = T->progress_fds(h.dev, fds, MAXFDS);
	ck_assert_int_eq(n, F->progress_fds);
	for (i = 0; i < n; i++) {
		pfd[i].fd = fds[i];
		pfd[i].events = POLLIN;
	}
	expect_no_events();
	expect_quiet(pfd, n);

	/* a message arrives; after it the fds are quiet again */
	buf_make(&ba, p.a.pd, 64, ALL_ACCESS);
	buf_make(&bb, p.b.pd, 64, ALL_ACCESS);
	s = sge_of(&bb, 0, 64);
	ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 1), 0);
	s = sge_of(&ba, 0, 64);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 2, 0), 0);
	if (behaves(TF_PROGRESS_SEES_DATA)) {
		/* the fd fires; the recv may need more rounds of progress */
		ck_assert_int_ge(poll(pfd, (nfds_t)n, DEADLINE_MS), 1);
		expect_no_events();
		for (i = 0; i < 100; i++) {
			if (T->cq_poll(p.b.rcq, &wc, 1) == 1)
				break;
			ck_assert_int_ge(poll(pfd, (nfds_t)n, DEADLINE_MS), 1);
			expect_no_events();
		}
	} else {
		wc = wait_wc(p.b.rcq);
	}
	ck_assert_uint_eq(wc.context, 1);
	expect_no_events();
	expect_quiet(pfd, n);

	/* the peer disconnects: the fds fire and DISCONNECTED comes */
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->disconnect(p.a.ep), 0);
	pthread_mutex_unlock(&h.lock);
	got = 0;
	while (got < 2) {
		ck_assert_int_ge(poll(pfd, (nfds_t)n, DEADLINE_MS), 1);
		do {
			while (T->cm_get_event(h.dev, &ev) == 0) {
				ck_assert_int_eq(ev.type, DAPL_TCM_DISCONNECTED);
				got++;
			}
		} while (drive_data(true));
	}
	ck_assert_int_eq(got, 2);
	/* what is left: nothing, or (rdma_cm's TIMEWAIT_EXIT of destroyed
	 * ids) wakeups without events */
	if (behaves(TF_LATE_CM_WAKEUPS))
		while (poll(pfd, (nfds_t)n, 200) > 0)
			expect_no_events();
	else
		expect_quiet(pfd, n);
	buf_free(&ba);
	buf_free(&bb);
	pair_down(&p);
}
END_TEST

/* ---- IPv6 -------------------------------------------------------------------------- */

static void expect_in6(const struct sockaddr_storage *ss,
		       const struct in6_addr *want, const char *what)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
	char text[INET6_ADDRSTRLEN] = "?";

	inet_ntop(AF_INET6, &s6->sin6_addr, text, sizeof(text));
	ck_assert_msg(s6->sin6_family == AF_INET6 &&
		      !memcmp(&s6->sin6_addr, want, sizeof(*want)),
		      "%s: family %d address %s, wanted IPv6 %s", what,
		      s6->sin6_family, text, F->addr6);
}

/* An address of the family the device has not: UNREACHABLE, refused
 * at once (the core then reports it) or as the attempt's event; never
 * REJECTED by whatever listens or not there. */
static void other_family_unreachable(struct side *a, const struct sockaddr *to,
				     uint16_t port)
{
	struct evc c;
	int ret = connect_to(a->ep, to, port, "x", 1);

	if (ret) {
		ck_assert_msg(ret == -ENETUNREACH, "connect to another family: "
			      "%d, wanted -ENETUNREACH (UNREACHABLE)", ret);
		return;
	}
	c = take(a->ep, DAPL_TCM_UNREACHABLE);
	ck_assert_int_lt(c.ev.status, 0);
}

/* A device on the fixture's IPv6 address: dev_query, the request's
 * peer, ep_addrs and data, all in IPv6; with TF_ONE_FAMILY an IPv4
 * address is unreachable from it, and the other way round. */
START_TEST(ipv6_connection)
{
	struct sockaddr_in6 to6 = { .sin6_family = AF_INET6 };
	struct sockaddr_storage al, ap, bl, bp, req;
	struct dapl_tdev_attr attr;
	struct dapl_tlisten *l;
	struct side a, b;
	struct buf sa, rb;
	struct dapl_tsge s;
	uint16_t port;
	struct evc c;

	ck_assert_int_eq(inet_pton(AF_INET6, F->addr6, &to6.sin6_addr), 1);
	start_dev_on(F->params6);
	ck_assert_int_eq(T->dev_query(h.dev, &attr), 0);
	expect_in6(&attr.addr, &to6.sin6_addr, "dev_query");
	ck_assert_uint_eq(((struct sockaddr_in6 *)&attr.addr)->sin6_port, 0);

	l = do_listen(&port);
	side_make(&a, 8, 8, false);
	side_make(&b, 8, 8, false);
	ck_assert_int_eq(connect_to(a.ep, (struct sockaddr *)&to6, port,
				    "six", 3), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	expect_pdata(&c, "six", 3, g_attr.max_pdata_connect);
	req = c.ev.peer;
	expect_in6(&req, &to6.sin6_addr, "the request's peer");
	ck_assert_int_eq(do_accept(c.ev.conn, b.ep, "ok", 2), 0);
	c = take(a.ep, DAPL_TCM_ESTABLISHED);
	expect_pdata(&c, "ok", 2, g_attr.max_pdata_accept);
	take(b.ep, DAPL_TCM_ESTABLISHED);

	ck_assert_int_eq(T->ep_addrs(a.ep, &al, &ap), 0);
	ck_assert_int_eq(T->ep_addrs(b.ep, &bl, &bp), 0);
	expect_in6(&al, &to6.sin6_addr, "the active side's own");
	expect_in6(&ap, &to6.sin6_addr, "the active side's peer");
	expect_in6(&bl, &to6.sin6_addr, "the passive side's own");
	expect_in6(&bp, &to6.sin6_addr, "the passive side's peer");
	ck_assert_uint_eq(ntohs(((struct sockaddr_in6 *)&ap)->sin6_port), port);
	ck_assert_uint_eq(ntohs(((struct sockaddr_in6 *)&bl)->sin6_port), port);
	ck_assert_uint_eq(((struct sockaddr_in6 *)&al)->sin6_port,
			  ((struct sockaddr_in6 *)&bp)->sin6_port);
	ck_assert_uint_eq(((struct sockaddr_in6 *)&req)->sin6_port,
			  ((struct sockaddr_in6 *)&al)->sin6_port);

	/* data moves */
	buf_make(&sa, a.pd, 64, ALL_ACCESS);
	buf_make(&rb, b.pd, 64, ALL_ACCESS);
	fill(sa.p, 64, 6);
	s = sge_of(&rb, 0, 64);
	ck_assert_int_eq(T->post_recv(b.ep, &s, 1, 61), 0);
	s = sge_of(&sa, 0, 64);
	ck_assert_int_eq(T->post_send(a.ep, &s, 1, 62, DAPL_TPOST_SIGNALED), 0);
	expect_wc(a.scq, 62, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
	expect_wc(b.rcq, 61, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 64);
	ck_assert_int_eq(memcmp(sa.p, rb.p, 64), 0);
	buf_free(&sa);
	buf_free(&rb);

	ck_assert_int_eq(do_disconnect(a.ep), 0);
	take(a.ep, DAPL_TCM_DISCONNECTED);
	take(b.ep, DAPL_TCM_DISCONNECTED);

	if (behaves(TF_ONE_FAMILY)) {
		/* nothing listens at the IPv4 address: a socket of the other
		 * family would be refused there, this one cannot get there */
		struct sockaddr_in to4 = g_addr;

		other_family_unreachable(&a, (struct sockaddr *)&to4, port);
		/* and it connects over IPv6 afterwards */
		side_free(&b);
		side_make(&b, 8, 8, false);
		ck_assert_int_eq(connect_to(a.ep, (struct sockaddr *)&to6,
					    port, "again", 5), 0);
		c = take(l, DAPL_TCM_CONNECT_REQUEST);
		ck_assert_int_eq(do_accept(c.ev.conn, b.ep, NULL, 0), 0);
		take(a.ep, DAPL_TCM_ESTABLISHED);
		take(b.ep, DAPL_TCM_ESTABLISHED);
	}
	side_free(&a);
	side_free(&b);
	do_unlisten(l);
	stop_dev();

	if (behaves(TF_ONE_FAMILY)) {
		/* an IPv4 device cannot reach the IPv6 address either, where
		 * nothing listens now */
		start_dev();
		side_make(&a, 8, 8, false);
		other_family_unreachable(&a, (struct sockaddr *)&to6, port);
		side_free(&a);
		stop_dev();
	}
}
END_TEST

/* ---- main ------------------------------------------------------------------------ */

/* Replaces the first "from" in buf (of size len) by "to"; false when
 * there is none or the result would not fit. */
static bool replace_in(char *buf, size_t len, const char *from, const char *to)
{
	char out[256];
	char *at = strstr(buf, from);
	int n;

	if (!at)
		return false;
	n = snprintf(out, sizeof(out), "%.*s%s%s", (int)(at - buf), buf, to,
		     at + strlen(from));
	if (n < 0 || (size_t)n >= sizeof(out) || (size_t)n >= len)
		return false;
	memcpy(buf, out, (size_t)n + 1);
	return true;
}

/* TRANSPORT_TEST_ADDR / TRANSPORT_TEST_NETDEV: 0, or the exit status. */
static int move_fixture(struct transport_fixture *f)
{
	const char *addr = getenv("TRANSPORT_TEST_ADDR");
	const char *netdev = getenv("TRANSPORT_TEST_NETDEV");

	if (!addr || !*addr)
		return 0;
	if (!replace_in(f->params, sizeof(f->params), "127.0.0.1", addr) ||
	    !replace_in(f->addr, sizeof(f->addr), "127.0.0.1", addr)) {
		fprintf(stderr, "test_transport: TRANSPORT_TEST_ADDR: the %s "
			"fixture is not at 127.0.0.1 (or %s is too long)\n",
			f->name, addr);
		return EXIT_FAILURE;
	}
	if (f->netdev_params[0] &&
	    (!netdev || !*netdev ||
	     !replace_in(f->netdev_params, sizeof(f->netdev_params), "lo",
			 netdev))) {
		fprintf(stderr, "test_transport: TRANSPORT_TEST_ADDR needs "
			"TRANSPORT_TEST_NETDEV, the interface with that address\n");
		return EXIT_FAILURE;
	}
	fprintf(stderr, "test_transport: %s at %s (%s)\n", f->name, f->params,
		f->netdev_params);
	return 0;
}

/* TRANSPORT_TEST_ONLY=name[,name...] runs only those tests. */
static bool wanted(const char *name)
{
	const char *only = getenv("TRANSPORT_TEST_ONLY");
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

static Suite *suite(void)
{
	static char name[64];
	Suite *s;
	TCase *tc;

	snprintf(name, sizeof(name), "%s transport", F->name);
	s = suite_create(name);
	tc = tcase_create(F->name);
	tcase_set_timeout(tc, 120);
	ADD(tc, dev_open_params);
	ADD(tc, listen_ports);
	ADD(tc, connect_pdata_sizes);
	ADD(tc, accept_and_reject_pdata);
	ADD(tc, no_listener_is_rejected_without_data);
	ADD(tc, unreachable_address);
	ADD(tc, unlisten_keeps_reported_requests);
	ADD(tc, disconnect_either_side);
	ADD(tc, send_recv_sizes);
	ADD(tc, rdma_write_read);
	ADD(tc, remote_access_error);
	ADD(tc, local_length_error);
	ADD(tc, depth_is_enforced);
	ADD(tc, destroy_flushes_once);
	ADD(tc, reset_and_reconnect);
	ADD(tc, send_side_order);
	if (wanted("memory_windows"))
		tcase_add_loop_test(tc, memory_windows, 0,
				    F->nwindows ? F->nwindows : 1);
	ADD(tc, concurrent_ping_pong);
	ADD(tc, many_endpoints_one_cq);
	ADD(tc, shared_receive_queue);
	ADD(tc, progress_fd_is_quiet_when_idle);
	ADD(tc, write_with_immediate);
	ADD(tc, write_with_immediate_srq);
	ADD(tc, atomics);
	ADD(tc, atomic_needs_privilege);
	ADD(tc, atomics_across_connections);
	if (F->params6[0])
		ADD(tc, ipv6_connection);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	struct dapl_tdev *dev;
	char why[256] = "";
	SRunner *sr;
	int failed, ret;

	T = F->ops;
	if ((ret = move_fixture(&fixture)) != 0)
		return ret;
	if (F->setup && (ret = F->setup(&fixture)) != 0)
		return ret;
	if (inet_pton(AF_INET, F->addr, &g_addr.sin_addr) != 1) {
		fprintf(stderr, "test_transport: %s: not an IPv4 address\n",
			F->addr);
		return EXIT_FAILURE;
	}
	g_addr.sin_family = AF_INET;
	/* the cases take the device's limits from here */
	ret = T->dev_open(F->params, &dev, why, sizeof(why));
	if (ret) {
		fprintf(stderr, "test_transport: dev_open(%s): %d %s\n",
			F->params, ret, why);
		return EXIT_FAILURE;
	}
	ret = T->dev_query(dev, &g_attr);
	T->dev_close(dev);
	if (ret) {
		fprintf(stderr, "test_transport: dev_query: %d\n", ret);
		return EXIT_FAILURE;
	}
	sr = srunner_create(suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
