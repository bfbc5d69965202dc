/* The libfabric transport (providers/ofi) through its ops table, with both
 * ends of every connection in this process over 127.0.0.1.
 *
 * A pump thread plays the core's progress thread: it polls the fds that
 * progress_fds gives and calls cm_get_event until -EAGAIN, holding the
 * "IA lock" (h.lock) as the core does; the test calls CM ops under the
 * same lock.  Waits are bounded by a deadline and only ever fail a test
 * that would otherwise hang; nothing sleeps to synchronise. */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "transport.h"
#include "ofi.h"

static const struct udapl_transport_ops *const T = &dapl_ofi_ops;

#define DEADLINE_MS 20000
#define MAXEV 64

/* ---- the pump (the core's progress thread) --------------------------------- */

struct evc {
	struct dapl_tcm_event ev;
	uint8_t pdata[256];
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
	unsigned long idle_wakeups;     /* wakeups that found nothing */
} h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *pump(void *arg)
{
	struct pollfd p[2];
	int n;

	(void)arg;
	n = T->progress_fds(h.dev, &p[0].fd, 1);
	ck_assert_int_eq(n, 1);
	p[0].events = POLLIN;
	p[1].fd = h.stop_fd;
	p[1].events = POLLIN;
	for (;;) {
		struct dapl_tcm_event ev;
		int got = 0;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
		pthread_mutex_lock(&h.lock);
		while (T->cm_get_event(h.dev, &ev) == 0) {
			struct evc *c;

			ck_assert_int_lt(h.nev, MAXEV);
			c = &h.evs[h.nev++];
			c->ev = ev;
			ck_assert_uint_le(ev.pdata_len, sizeof(c->pdata));
			if (ev.pdata_len)
				memcpy(c->pdata, ev.pdata, ev.pdata_len);
			c->ev.pdata = c->pdata;
			got++;
		}
		if (!got)
			h.idle_wakeups++;
		pthread_cond_broadcast(&h.cond);
		pthread_mutex_unlock(&h.lock);
	}
	return NULL;
}

static void start_dev(const char *params)
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
	return c->ev.ep == obj || (void *)c->ev.listener == obj ||
	       (void *)c->ev.srq == obj;
}

/* Takes the next event about obj (an ep or listener), h.lock held. */
static struct evc take_locked(const void *obj)
{
	struct timespec ts;
	struct evc out;
	int i;

	deadline_of(&ts, DEADLINE_MS);
	for (;;) {
		for (i = 0; i < h.nev; i++) {
			if (!ev_is_for(&h.evs[i], obj))
				continue;
			out = h.evs[i];
			out.ev.pdata = NULL;
			memmove(&h.evs[i], &h.evs[i + 1],
				(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
			h.nev--;
			return out;
		}
		ck_assert_msg(pthread_cond_timedwait(&h.cond, &h.lock, &ts) !=
			      ETIMEDOUT, "no event for %p", obj);
	}
}

static struct evc take(const void *obj, enum dapl_tcm_event_type type)
{
	struct evc c;

	pthread_mutex_lock(&h.lock);
	c = take_locked(obj);
	pthread_mutex_unlock(&h.lock);
	ck_assert_msg(c.ev.type == type, "event %d for %p, wanted %d (status %d)",
		      c.ev.type, obj, type, c.ev.status);
	return c;
}

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

	ck_assert_msg(wc.context == ctx, "context %llx, wanted %llx",
		      (unsigned long long)wc.context, (unsigned long long)ctx);
	ck_assert_int_eq(wc.opcode, op);
	ck_assert_msg(wc.status == st, "status %d (vendor %d), wanted %d",
		      wc.status, wc.vendor_err, st);
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

static void side_make(struct side *s, uint32_t sdepth, uint32_t rdepth,
		      bool split_cqs)
{
	struct dapl_tep_attr a = {
		.max_send_wr = sdepth, .max_recv_wr = rdepth,
		.max_send_sge = 4, .max_recv_sge = 4,
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

static void side_free(struct side *s)
{
	if (s->ep) {
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_destroy(s->ep), 0);
		pthread_mutex_unlock(&h.lock);
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

static struct sockaddr_in loopback(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	return sin;
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

static int do_connect(struct dapl_tep *ep, uint16_t port, const void *pd,
		      size_t len)
{
	struct sockaddr_in sin = loopback();
	int ret;

	pthread_mutex_lock(&h.lock);
	ret = T->connect(ep, (struct sockaddr *)&sin, port, pd, len, 4, 4);
	pthread_mutex_unlock(&h.lock);
	return ret;
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

/* Connects a (active) to b (passive) through l. */
static void connect_pair(struct dapl_tlisten *l, uint16_t port,
			 struct side *a, struct side *b)
{
	struct evc c;

	ck_assert_int_eq(do_connect(a->ep, port, "req", 3), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_accept(c.ev.conn, b->ep, "rep", 3), 0);
	c = take(a->ep, DAPL_TCM_ESTABLISHED);
	ck_assert_uint_eq(c.ev.pdata_len, 3);
	ck_assert_int_eq(memcmp(c.pdata, "rep", 3), 0);
	take(b->ep, DAPL_TCM_ESTABLISHED);
}

static void fill(uint8_t *p, size_t n, unsigned seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(i * 31u + seed);
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

/* ---- device -------------------------------------------------------------------------- */

/* An interface of this host without an IPv4 address, if there is one. */
static bool netdev_without_ipv4(char *name, size_t len)
{
	struct if_nameindex *ni = if_nameindex(), *i;
	struct ifaddrs *ifs, *a;
	bool found = false;

	if (!ni || getifaddrs(&ifs)) {
		if (ni)
			if_freenameindex(ni);
		return false;
	}
	for (i = ni; i->if_index && !found; i++) {
		bool v4 = false;

		for (a = ifs; a; a = a->ifa_next)
			if (!strcmp(a->ifa_name, i->if_name) && a->ifa_addr &&
			    a->ifa_addr->sa_family == AF_INET)
				v4 = true;
		if (!v4) {
			snprintf(name, len, "%s", i->if_name);
			found = true;
		}
	}
	freeifaddrs(ifs);
	if_freenameindex(ni);
	return found;
}

static void open_fails(const char *params, int err, const char *needle)
{
	struct dapl_tdev *dev = NULL;
	char why[256] = "";
	int ret = T->dev_open(params, &dev, why, sizeof(why));

	ck_assert_msg(ret < 0, "dev_open(%s) succeeded", params ? params : "NULL");
	if (err)
		ck_assert_int_eq(ret, err);
	ck_assert_msg(strstr(why, needle), "why for \"%s\": \"%s\" lacks \"%s\"",
		      params ? params : "NULL", why, needle);
}

START_TEST(dev_open_params)
{
	struct dapl_tdev_attr attr;
	struct dapl_tdev *dev;
	struct sockaddr_in *sin;
	char why[256] = "", name[IF_NAMESIZE + 8], params[64];

	ck_assert_int_eq(T->size, sizeof(struct udapl_transport_ops));
	ck_assert_str_eq(T->name, "ofi");
	ck_assert_int_eq(T->dev_open("tcp 127.0.0.1", &dev, why, sizeof(why)), 0);
	ck_assert_int_eq(T->dev_query(dev, &attr), 0);
	sin = (struct sockaddr_in *)&attr.addr;
	ck_assert_int_eq(sin->sin_family, AF_INET);
	ck_assert_uint_eq(ntohl(sin->sin_addr.s_addr), INADDR_LOOPBACK);
	ck_assert_str_eq(attr.name, "ofi tcp 127.0.0.1");
	ck_assert_msg(!strncmp(attr.vendor, "libfabric 1.", 12), "%s", attr.vendor);
	ck_assert_uint_eq(attr.max_pdata_connect, 256);
	ck_assert_uint_eq(attr.max_pdata_accept, 256);
	ck_assert_uint_eq(attr.max_pdata_reject, 256);
	ck_assert_uint_eq(attr.max_ird, 128);
	ck_assert_uint_eq(attr.max_ord, 128);
	ck_assert_uint_eq(attr.max_sge, 4);
	ck_assert_uint_ge(attr.max_qp_wr, 256);
	ck_assert_uint_gt(attr.max_msg_size, 1u << 20);
	ck_assert_uint_eq(attr.flags & (DAPL_TDEV_MEMORY_WINDOWS |
					DAPL_TDEV_REMOTE_ACCESS_ERRORS |
					DAPL_TDEV_SOLICITED_EVENTS), 0);
	T->dev_close(dev);

	/* a netdev name works like its address */
	ck_assert_int_eq(T->dev_open("tcp lo", &dev, why, sizeof(why)), 0);
	ck_assert_int_eq(T->dev_query(dev, &attr), 0);
	ck_assert_str_eq(attr.name, "ofi tcp 127.0.0.1");
	T->dev_close(dev);

	open_fails("nosuchprov 127.0.0.1", 0, "no provider \"nosuchprov\"");
	open_fails("tcp nosuchif0", -ENODEV, "neither an IPv4 address nor");
	/* a documentation address (TEST-NET-2), not this host's */
	open_fails("tcp 198.51.100.77", -EADDRNOTAVAIL, "not an address of this host");
	open_fails("tcp", -EINVAL, "must be \"<libfabric provider>");
	open_fails("", -EINVAL, "must be");
	open_fails(NULL, -EINVAL, "must be");
	open_fails("tcp 127.0.0.1 extra", -EINVAL, "must be");
	if (netdev_without_ipv4(name, sizeof(name))) {
		snprintf(params, sizeof(params), "tcp %s", name);
		open_fails(params, -ENODEV, "has no IPv4 address");
	}
}
END_TEST

/* ---- listening -------------------------------------------------------------------------- */

START_TEST(listen_ports)
{
	struct dapl_tlisten *l, *l2;
	uint16_t port, again;

	start_dev("tcp 127.0.0.1");
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
	static const size_t sizes[] = { 0, 1, 246, 256 };
	struct side a;
	struct dapl_tlisten *l;
	uint8_t pd[300];
	uint16_t port;
	size_t i;

	start_dev("tcp 127.0.0.1");
	l = do_listen(&port);
	side_make(&a, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, pd, 257), -EINVAL);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct sockaddr_in *peer;
		struct evc c;

		fill(pd, sizeof(pd), (unsigned)i + 7);
		ck_assert_int_eq(do_connect(a.ep, port, pd, sizes[i]), 0);
		c = take(l, DAPL_TCM_CONNECT_REQUEST);
		ck_assert_ptr_eq(c.ev.listener, l);
		ck_assert_ptr_nonnull(c.ev.conn);
		ck_assert_uint_eq(c.ev.pdata_len, sizes[i]);
		ck_assert_int_eq(memcmp(c.pdata, pd, sizes[i]), 0);
		peer = (struct sockaddr_in *)&c.ev.peer;
		ck_assert_int_eq(peer->sin_family, AF_INET);
		ck_assert_uint_eq(ntohl(peer->sin_addr.s_addr), INADDR_LOOPBACK);
		ck_assert_int_eq(do_reject(c.ev.conn, "no", 2), 0);
		c = take(a.ep, DAPL_TCM_REJECTED);
		ck_assert_uint_eq(c.ev.pdata_len, 2);
		ck_assert_int_eq(memcmp(c.pdata, "no", 2), 0);
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
	uint8_t pd[257];
	uint16_t port;
	struct evc c;

	start_dev("tcp 127.0.0.1");
	l = do_listen(&port);
	side_make(&a, 8, 8, false);
	side_make(&b, 8, 8, false);
	fill(pd, sizeof(pd), 99);

	/* accept with 256 bytes: the active side gets exactly them */
	ck_assert_int_eq(do_connect(a.ep, port, "hello", 5), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_accept(c.ev.conn, b.ep, pd, 256), 0);
	c = take(a.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_uint_eq(c.ev.pdata_len, 256);
	ck_assert_int_eq(memcmp(c.pdata, pd, 256), 0);
	c = take(b.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_uint_eq(c.ev.pdata_len, 0);

	ck_assert_int_eq(T->ep_addrs(a.ep, &al, &ap), 0);
	ck_assert_int_eq(T->ep_addrs(b.ep, &bl, &bp), 0);
	ck_assert_int_eq(memcmp(&al, &bp, sizeof(struct sockaddr_in)), 0);
	ck_assert_int_eq(memcmp(&ap, &bl, sizeof(struct sockaddr_in)), 0);
	ck_assert_uint_eq(ntohs(((struct sockaddr_in *)&ap)->sin_port), port);

	/* reject with data; 257 bytes is refused but still ends the request */
	side_free(&a);
	side_make(&a, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, NULL, 0), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_reject(c.ev.conn, pd, 256), 0);
	c = take(a.ep, DAPL_TCM_REJECTED);
	ck_assert_uint_eq(c.ev.pdata_len, 256);
	ck_assert_int_eq(memcmp(c.pdata, pd, 256), 0);

	ck_assert_int_eq(do_connect(a.ep, port, NULL, 0), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_reject(c.ev.conn, pd, 257), -EINVAL);
	c = take(a.ep, DAPL_TCM_REJECTED);
	ck_assert_uint_eq(c.ev.pdata_len, 0);

	/* accept with 257 bytes: refused, the request rejected */
	side_free(&b);
	side_make(&b, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, NULL, 0), 0);
	c = take(l, DAPL_TCM_CONNECT_REQUEST);
	ck_assert_int_eq(do_accept(c.ev.conn, b.ep, pd, 257), -EINVAL);
	c = take(a.ep, DAPL_TCM_REJECTED);
	ck_assert_uint_eq(c.ev.pdata_len, 0);

	side_free(&a);
	side_free(&b);
	do_unlisten(l);
	stop_dev();
}
END_TEST

START_TEST(no_listener_is_rejected_without_data)
{
	struct dapl_tlisten *l;
	struct side a;
	uint16_t port;
	struct evc c;

	start_dev("tcp 127.0.0.1");
	l = do_listen(&port);
	do_unlisten(l);         /* a port nobody listens on */
	side_make(&a, 8, 8, false);
	ck_assert_int_eq(do_connect(a.ep, port, "x", 1), 0);
	c = take(a.ep, DAPL_TCM_REJECTED);
	ck_assert_uint_eq(c.ev.pdata_len, 0);
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

	start_dev("tcp 127.0.0.1");
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
	ck_assert_uint_eq(ev.ev.pdata_len, 4);
	ck_assert_int_eq(memcmp(ev.pdata, "busy", 4), 0);
	ck_assert_int_eq(do_accept(ca, b.ep, "ok", 2), 0);
	ev = take(a.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_uint_eq(ev.ev.pdata_len, 2);
	take(b.ep, DAPL_TCM_ESTABLISHED);
	ck_assert_int_eq(pending_for(l), 0);

	/* all answered: the port is free again */
	again = port;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->listen(h.dev, &again, &l2), 0);
	pthread_mutex_unlock(&h.lock);
	ck_assert_uint_eq(again, port);
	side_free(&d);
	side_make(&d, 8, 8, false);
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

/* Both sides see DISCONNECTED exactly once, whoever ends it; recvs still
 * posted are flushed on both sides. */
START_TEST(disconnect_either_side)
{
	int who;

	start_dev("tcp 127.0.0.1");
	for (who = 0; who < 2; who++) {
		struct dapl_tlisten *l;
		struct side a, b, *x, *y;
		struct buf ba, bb;
		struct dapl_tsge s;
		uint16_t port;

		l = do_listen(&port);
		side_make(&a, 8, 8, true);
		side_make(&b, 8, 8, true);
		buf_make(&ba, a.pd, 64, ALL_ACCESS);
		buf_make(&bb, b.pd, 64, ALL_ACCESS);
		connect_pair(l, port, &a, &b);
		s = sge_of(&ba, 0, 64);
		ck_assert_int_eq(T->post_recv(a.ep, &s, 1, 0xa1), 0);
		s = sge_of(&bb, 0, 64);
		ck_assert_int_eq(T->post_recv(b.ep, &s, 1, 0xb1), 0);

		x = who ? &b : &a;
		y = who ? &a : &b;
		ck_assert_int_eq(do_disconnect(x->ep), 0);
		take(x->ep, DAPL_TCM_DISCONNECTED);
		take(y->ep, DAPL_TCM_DISCONNECTED);
		expect_wc(a.rcq, 0xa1, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		expect_wc(b.rcq, 0xb1, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		/* nothing more for either, now or after a second disconnect */
		ck_assert_int_eq(do_disconnect(x->ep), -ENOTCONN);
		ck_assert_int_eq(do_disconnect(y->ep), -ENOTCONN);
		ck_assert_int_eq(pending_for(a.ep), 0);
		ck_assert_int_eq(pending_for(b.ep), 0);
		expect_cq_empty(a.rcq);
		expect_cq_empty(b.rcq);
		/* a receive posted now flushes at once */
		s = sge_of(&ba, 0, 64);
		ck_assert_int_eq(T->post_recv(a.ep, &s, 1, 0xa2), 0);
		expect_wc(a.rcq, 0xa2, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
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

struct pair {
	struct dapl_tlisten *l;
	uint16_t port;
	struct side a, b;
};

static void pair_up(struct pair *p, uint32_t depth, bool split)
{
	start_dev("tcp 127.0.0.1");
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

START_TEST(send_recv_sizes)
{
	static const size_t sizes[] = { 0, 1, 100, 4096, 65536, 1u << 20 };
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
		int nsge = 1;

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
	buf_free(&src);
	buf_free(&dst);
	pair_down(&p);
}
END_TEST

START_TEST(rdma_write_read)
{
	struct pair p;
	struct buf la, rb;
	struct dapl_tsge s[2];
	const size_t n = 3u << 20;

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
	expect_cq_empty(p.b.scq);

	buf_free(&la);
	buf_free(&rb);
	pair_down(&p);
}
END_TEST

START_TEST(depth_is_enforced)
{
	struct pair p;
	struct buf b, rb;
	struct dapl_tsge s, r;
	int i;

	pair_up(&p, 3, true);
	buf_make(&b, p.a.pd, 4096, ALL_ACCESS);
	s = sge_of(&b, 0, 64);
	for (i = 0; i < 3; i++)
		ck_assert_int_eq(T->post_recv(p.a.ep, &s, 1, (uint64_t)i), 0);
	ck_assert_int_eq(T->post_recv(p.a.ep, &s, 1, 3), -ENOSPC);
	/* a send completes once the peer has placed it in a posted
	 * receive, and its slot is free again only once that completion
	 * has been polled */
	buf_make(&rb, p.b.pd, 4096, ALL_ACCESS);
	r = sge_of(&rb, 0, 64);
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
	/* too many segments */
	{
		struct dapl_tsge five[5] = { s, s, s, s, s };

		ck_assert_int_eq(T->post_send(p.a.ep, five, 5, 15, 0), -EINVAL);
	}
	expect_wc(p.a.scq, 11, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.a.scq, 12, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
	expect_wc(p.a.scq, 13, DAPL_TWC_SEND, DAPL_TWC_SUCCESS, 64);
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
	bool seen[5] = { false };
	int i, n, got = 0;

	pair_up(&p, 8, true);
	buf_make(&b, p.a.pd, 4096, ALL_ACCESS);
	s = sge_of(&b, 0, 64);
	for (i = 0; i < 5; i++)
		ck_assert_int_eq(T->post_recv(p.a.ep, &s, 1, (uint64_t)i), 0);
	gone = p.a.ep;
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_destroy(p.a.ep), 0);
	pthread_mutex_unlock(&h.lock);
	p.a.ep = NULL;
	/* all five are on the CQ when destroy returns, each once, in order */
	n = T->cq_poll(p.a.rcq, wc, 16);
	ck_assert_int_eq(n, 5);
	for (i = 0; i < n; i++) {
		ck_assert_int_eq(wc[i].status, DAPL_TWC_FLUSHED);
		ck_assert_int_eq(wc[i].opcode, DAPL_TWC_RECV);
		ck_assert_uint_eq(wc[i].context, (uint64_t)i);
		ck_assert(!seen[wc[i].context]);
		seen[wc[i].context] = true;
		got++;
	}
	ck_assert_int_eq(got, 5);
	expect_cq_empty(p.a.rcq);
	/* the peer hears of it; the destroyed ep is never named */
	take(p.b.ep, DAPL_TCM_DISCONNECTED);
	ck_assert_int_eq(pending_for(gone), 0);

	/* receives held by an ep never connected flush too */
	{
		struct side c;

		side_make(&c, 4, 4, false);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 76), 0);
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_reset(c.ep), 0);
		pthread_mutex_unlock(&h.lock);
		expect_wc(c.rcq, 76, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 77), 0);
		ck_assert_int_eq(T->post_send(c.ep, &s, 1, 78, 0), -ENOTCONN);
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_destroy(c.ep), 0);
		pthread_mutex_unlock(&h.lock);
		c.ep = NULL;
		expect_wc(c.rcq, 77, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		expect_cq_empty(c.rcq);
		side_free(&c);
	}
	/* a destroyed ep whose flushes are not polled yet: the CQ still
	 * hands them out (valid contexts) after more traffic */
	{
		struct side c;

		side_make(&c, 4, 4, false);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 91), 0);
		ck_assert_int_eq(T->post_recv(c.ep, &s, 1, 92), 0);
		pthread_mutex_lock(&h.lock);
		ck_assert_int_eq(T->ep_destroy(c.ep), 0);
		pthread_mutex_unlock(&h.lock);
		c.ep = NULL;
		expect_wc(c.rcq, 91, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		expect_wc(c.rcq, 92, DAPL_TWC_RECV, DAPL_TWC_FLUSHED, 0);
		side_free(&c);
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
		ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 4, 0), 0);
		expect_wc(p.b.rcq, 3, DAPL_TWC_RECV, DAPL_TWC_SUCCESS, 64);
	}
	buf_free(&ba);
	buf_free(&bb);
	pair_down(&p);
}
END_TEST

/* tcp completes a read after later sends; the transport must not. */
START_TEST(send_side_order)
{
	struct pair p;
	struct buf big, rbig, small, rsmall;
	struct dapl_tsge s;
	const size_t n = 16u << 20;
	int round;

	pair_up(&p, 16, true);
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

START_TEST(memory_window_emulation)
{
	struct pair p;
	struct buf la, rb;
	struct dapl_tmw *mw;
	struct dapl_tsge s;
	uint32_t rkey = 0, old;

	pair_up(&p, 8, false);
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
	/* unbind, unsignalled: no completion */
	old = rkey;
	ck_assert_int_eq(T->mw_bind(p.b.ep, mw, rb.mr, 0, 0, 0, 8, 0, &rkey), 0);
	expect_cq_empty(p.b.scq);
	/* the old key is dead: tcp reports no access error, it breaks the
	 * connection (no DAPL_TDEV_REMOTE_ACCESS_ERRORS) */
	ck_assert_int_eq(T->post_rdma_write(p.a.ep, &s, 1,
					    (uint64_t)(uintptr_t)rb.p + 4096,
					    old, 9, 0), 0);
	expect_wc(p.a.scq, 9, DAPL_TWC_RDMA_WRITE, DAPL_TWC_FLUSHED, 0);
	take(p.a.ep, DAPL_TCM_DISCONNECTED);
	take(p.b.ep, DAPL_TCM_DISCONNECTED);
	ck_assert_int_eq(T->mw_free(mw), 0);
	buf_free(&la);
	buf_free(&rb);
	pair_down(&p);
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

		ck_assert_int_eq(T->post_recv(pg->me->ep, &rs, 1, 1000 + i), 0);
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
	pthread_t ta, tb;

	pair_up(&p, 8, true);
	buf_make(&pa.b, p.a.pd, 16, ALL_ACCESS);
	buf_make(&pb.b, p.b.pd, 16, ALL_ACCESS);
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

/* One SRQ feeding two passive eps: each message completes on the CQ of
 * the ep that received it; depth, resize and the limit event. */
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

	start_dev("tcp 127.0.0.1");
	l = do_listen(&port);
	side_make(&a1, 4, 4, false);
	side_make(&a2, 4, 4, false);
	ck_assert_int_eq(T->pd_alloc(h.dev, &b1.pd), 0);
	b2.pd = NULL;
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

	ck_assert_int_eq(T->srq_destroy(srq, NULL, NULL), -EBUSY);
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->ep_destroy(b1.ep), 0);
	ck_assert_int_eq(T->ep_destroy(b2.ep), 0);
	pthread_mutex_unlock(&h.lock);
	/* an SRQ's receives are not the ep's: nothing flushes */
	expect_cq_empty(b1.rcq);
	expect_cq_empty(b2.rcq);
	/* the 2 left from the first round and the 6 of the second */
	ck_assert_int_eq(T->srq_destroy(srq, count_discard, &discarded), 0);
	ck_assert_int_eq(discarded.n, 8);
	ck_assert_uint_eq(discarded.sum, 3 + 4 + 20 + 21 + 22 + 23 + 24 + 25);
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

/* The progress fd is quiet when nothing is pending, and fires again for
 * what comes later (no busy loop, no lost wakeup). */
START_TEST(progress_fd_is_quiet_when_idle)
{
	struct pair p;
	struct dapl_tcm_event ev;
	struct pollfd pfd;
	struct buf b;
	struct dapl_tsge s;
	int n;

	pair_up(&p, 8, false);
	stop_pump();            /* pump by hand from here */
	ck_assert_int_eq(T->progress_fds(h.dev, &pfd.fd, 1), 1);
	pfd.events = POLLIN;
	while (T->cm_get_event(h.dev, &ev) == 0)
		ck_abort_msg("unexpected event %d", ev.type);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);

	/* a message arrives: the fd fires; after the pump it is quiet */
	buf_make(&b, p.a.pd, 64, ALL_ACCESS);
	s = sge_of(&b, 0, 64);
	ck_assert_int_eq(T->post_recv(p.b.ep, &s, 1, 1), 0);
	ck_assert_int_eq(T->post_send(p.a.ep, &s, 1, 2, 0), 0);
	n = poll(&pfd, 1, DEADLINE_MS);
	ck_assert_int_eq(n, 1);
	while (T->cm_get_event(h.dev, &ev) == 0)
		ck_abort_msg("unexpected event %d", ev.type);
	{
		struct dapl_twc wc;
		int tries;

		/* the recv may need one more round of progress */
		for (tries = 0; tries < 100; tries++) {
			if (T->cq_poll(p.b.rcq, &wc, 1) == 1)
				break;
			ck_assert_int_eq(poll(&pfd, 1, DEADLINE_MS), 1);
			while (T->cm_get_event(h.dev, &ev) == 0)
				ck_abort_msg("unexpected event %d", ev.type);
		}
		ck_assert_uint_eq(wc.context, 1);
	}
	while (T->cm_get_event(h.dev, &ev) == 0)
		ck_abort_msg("unexpected event %d", ev.type);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);

	/* the peer disconnects: the fd fires and DISCONNECTED comes */
	pthread_mutex_lock(&h.lock);
	ck_assert_int_eq(T->disconnect(p.a.ep), 0);
	pthread_mutex_unlock(&h.lock);
	n = 0;
	while (n < 2) {
		ck_assert_int_eq(poll(&pfd, 1, DEADLINE_MS), 1);
		while (T->cm_get_event(h.dev, &ev) == 0) {
			ck_assert_int_eq(ev.type, DAPL_TCM_DISCONNECTED);
			n++;
		}
	}
	ck_assert_int_eq(n, 2);
	ck_assert_int_eq(poll(&pfd, 1, 0), 0);
	buf_free(&b);
	pair_down(&p);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ofi transport");
	TCase *tc = tcase_create("tcp");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, dev_open_params);
	tcase_add_test(tc, listen_ports);
	tcase_add_test(tc, connect_pdata_sizes);
	tcase_add_test(tc, accept_and_reject_pdata);
	tcase_add_test(tc, no_listener_is_rejected_without_data);
	tcase_add_test(tc, unlisten_keeps_reported_requests);
	tcase_add_test(tc, disconnect_either_side);
	tcase_add_test(tc, send_recv_sizes);
	tcase_add_test(tc, rdma_write_read);
	tcase_add_test(tc, depth_is_enforced);
	tcase_add_test(tc, destroy_flushes_once);
	tcase_add_test(tc, reset_and_reconnect);
	tcase_add_test(tc, send_side_order);
	tcase_add_test(tc, memory_window_emulation);
	tcase_add_test(tc, concurrent_ping_pong);
	tcase_add_test(tc, shared_receive_queue);
	tcase_add_test(tc, progress_fd_is_quiet_when_idle);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
