/* dat_bench: the raw libfabric stack, set up the way libdat's ofi
 * provider sets up its own (providers/ofi/ofi_dev.c), so that the two are
 * compared like with like:
 *
 *  - fi_getinfo hints FI_EP_MSG, caps MSG|RMA|READ|WRITE|REMOTE_READ|
 *    REMOTE_WRITE, mr_mode FI_MR_BASIC (virtual addresses, provider keys),
 *    FI_THREAD_SAFE, tx/rx size 1024;
 *  - a send CQ and a receive CQ (libdat: the request EVD and the receive
 *    EVD), FI_CQ_FORMAT_MSG, FI_WAIT_FD;
 *  - fi_recvmsg with FI_COMPLETION, and fi_sendmsg / fi_writemsg with
 *    FI_COMPLETION | FI_DELIVERY_COMPLETE (unless the run asks for
 *    transmit completion, -W tx, as libdat with DAPL_OFI_COMPLETION=transmit);
 *  - busy-poll = fi_cq_read in a loop, blocking = fi_cq_sread.
 *
 * tcp in libfabric 1.17 has no progress thread: data moves only inside
 * fi_cq_read / fi_cq_sread.  For the memory-polling waits
 * (mem_wait_begin/end) a helper thread sits in fi_cq_sread on the send CQ
 * and so keeps the endpoint progressing, like libdat's progress thread;
 * it counts the send completions it reads, and reap_tx hands those out.
 *
 * Connection setup (setup) is what libdat's provider does per EP
 * (providers/ofi/ofi_ep.c): fi_endpoint on the IA's domain, bound to the
 * EQ and the CQs, fi_enable, fi_connect / fi_accept with the private data,
 * FI_CONNECTED; the client then fi_shutdown and fi_close (libdat reports
 * its own DISCONNECTED right there), the server closes on FI_SHUTDOWN. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "bench.h"

#define RAW_FI_VERSION FI_VERSION(1, 17)
#define RAW_QUEUE 1024
#define RAW_BATCH 16
#define RAW_CM_BUF (sizeof(struct fi_eq_cm_entry) + 256)

struct raw_listener {
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_eq *eq;
	struct fid_pep *pep;
};

struct raw_conn {
	struct fi_info *info;           /* owned: client's, or the CONNREQ's */
	struct fid_fabric *fabric;
	int own_fabric;
	struct fid_domain *domain;
	int own_domain;
	struct fid_eq *eq;
	int own_eq;
	struct fid_pep *pep;            /* server: the listener, for setup */
	struct fi_info *pep_info;
	/* setup: the next CONNREQ, when it came before this one's FI_SHUTDOWN */
	_Alignas(8) uint8_t connreq[RAW_CM_BUF];
	size_t connreq_len;
	struct fid_ep *ep;
	struct fid_ep **idle;           /* -e: idle connections' endpoints */
	struct fi_info **idle_info;     /* server: their CONNREQs' */
	int nidle;
	struct fid_cq *txcq, *rxcq;
	struct fid_cq *setup_rxcq;      /* setup with a first message: the
					 * receives of its endpoints */
	struct fid_mr *mr;
	void *desc;
	void *buf;
	size_t buflen;
	struct bench_remote peer;
	uint64_t tx_flags;
	/* memory-wait helper */
	pthread_t helper;
	int helper_on;
	int helper_stop;                /* __atomic */
	uint64_t helper_done;           /* __atomic: completions it read */
	uint64_t helper_taken;          /* of those, handed out by reap_tx */
};

static void fail(const char *what, ssize_t ret)
{
	bench_die(BENCH_EXIT_FAIL, "raw: %s: %s (%zd)", what,
		  fi_strerror((int)-ret), ret);
}

#define FI_CHECK(call) \
	do { \
		ssize_t r_ = (call); \
		if (r_ < 0) \
			fail(#call, r_); \
	} while (0)

static struct raw_conn *rc_of(struct bench_conn *c)
{
	return c->priv;
}

const char *raw_version(void)
{
	static char v[32];
	uint32_t ver = fi_version();

	snprintf(v, sizeof(v), "%u.%u", FI_MAJOR(ver), FI_MINOR(ver));
	return v;
}

static struct fi_info *hints_make(const char *prov)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	h->fabric_attr->prov_name = strdup(prov);
	if (!h->fabric_attr->prov_name)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	h->addr_format = FI_SOCKADDR_IN;
	h->ep_attr->type = FI_EP_MSG;
	h->caps = FI_MSG | FI_RMA | FI_READ | FI_WRITE | FI_REMOTE_READ |
		  FI_REMOTE_WRITE;
	h->domain_attr->mr_mode = FI_MR_BASIC;
	h->domain_attr->threading = FI_THREAD_SAFE;
	h->tx_attr->size = RAW_QUEUE;
	h->rx_attr->size = RAW_QUEUE;
	return h;
}

/* Reads the next CM event (20 s at most); returns its type. */
static uint32_t eq_next(struct fid_eq *eq, void *buf, size_t *len)
{
	uint32_t event = 0;
	ssize_t n;

	n = fi_eq_sread(eq, &event, buf, RAW_CM_BUF, BENCH_WAIT_MS, 0);
	if (n == -FI_EAVAIL) {
		struct fi_eq_err_entry err;

		memset(&err, 0, sizeof(err));
		fi_eq_readerr(eq, &err, 0);
		bench_die(BENCH_EXIT_FAIL, "raw: connection event error: %s",
			  fi_strerror(err.err));
	}
	if (n == -FI_EAGAIN)
		bench_die(BENCH_EXIT_FAIL, "raw: no connection event in %d s",
			  BENCH_WAIT_MS / 1000);
	if (n < 0)
		fail("fi_eq_sread", n);
	if (len)
		*len = (size_t)n;
	return event;
}

/* Reads one CM event of type want (20 s at most). */
static void eq_expect(struct fid_eq *eq, uint32_t want, void *buf,
		      size_t *len)
{
	uint32_t event = eq_next(eq, buf, len);

	if (event != want)
		bench_die(BENCH_EXIT_FAIL, "raw: connection event %u, expected %u",
			  event, want);
}

struct raw_listener *raw_listen(const char *prov, uint16_t *port)
{
	struct raw_listener *l = calloc(1, sizeof(*l));
	/* an fd: the setup pattern's server sleeps on it and a CQ's */
	struct fi_eq_attr eqa = { .size = 16, .wait_obj = FI_WAIT_FD };
	struct fi_info *h = hints_make(prov);
	struct sockaddr_in sin;
	size_t len = sizeof(sin);

	if (!l)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	FI_CHECK(fi_getinfo(RAW_FI_VERSION, "127.0.0.1", "0", FI_SOURCE, h,
			    &l->info));
	fi_freeinfo(h);
	FI_CHECK(fi_fabric(l->info->fabric_attr, &l->fabric, NULL));
	FI_CHECK(fi_eq_open(l->fabric, &eqa, &l->eq, NULL));
	FI_CHECK(fi_passive_ep(l->fabric, l->info, &l->pep, NULL));
	FI_CHECK(fi_pep_bind(l->pep, &l->eq->fid, 0));
	FI_CHECK(fi_listen(l->pep));
	FI_CHECK(fi_getname(&l->pep->fid, &sin, &len));
	*port = ntohs(sin.sin_port);
	return l;
}

static const struct bench_ops raw_ops;

/* Domain (unless r has one: raw_connect_more), memory, CQs and endpoint
 * for info; receives posted. */
static void conn_setup(struct raw_conn *r, struct bench_conn *c,
		       size_t max_size, int delivery_complete)
{
	struct fi_cq_attr cqa = {
		.size = RAW_QUEUE, .format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_FD,
	};
	int i;

	r->buf = bench_alloc(max_size, &r->buflen);
	r->tx_flags = FI_COMPLETION |
			 (delivery_complete ? FI_DELIVERY_COMPLETE : 0);
	if (!r->domain) {
		FI_CHECK(fi_domain(r->fabric, r->info, &r->domain, NULL));
		r->own_domain = 1;
	}
	FI_CHECK(fi_mr_reg(r->domain, r->buf, r->buflen,
			   FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			   FI_REMOTE_READ | FI_REMOTE_WRITE,
			   0, 0, 0, &r->mr, NULL));
	r->desc = fi_mr_desc(r->mr);
	FI_CHECK(fi_cq_open(r->domain, &cqa, &r->txcq, NULL));
	FI_CHECK(fi_cq_open(r->domain, &cqa, &r->rxcq, NULL));
	FI_CHECK(fi_endpoint(r->domain, r->info, &r->ep, NULL));
	FI_CHECK(fi_ep_bind(r->ep, &r->eq->fid, 0));
	FI_CHECK(fi_ep_bind(r->ep, &r->txcq->fid, FI_TRANSMIT));
	FI_CHECK(fi_ep_bind(r->ep, &r->rxcq->fid, FI_RECV));
	FI_CHECK(fi_enable(r->ep));

	memset(c, 0, sizeof(*c));
	c->name = "raw";
	c->ops = &raw_ops;
	c->priv = r;
	bench_layout(c, r->buf, max_size);
	for (i = 0; i < BENCH_NRECV; i++)
		raw_ops.post_recv(c, i);
}

static void own_remote(struct raw_conn *r, const struct bench_conn *c,
		       struct bench_remote *me)
{
	me->addr = (uint64_t)(uintptr_t)c->rx;
	me->key = fi_mr_key(r->mr);
	me->len = BENCH_RING * c->max_size;
}

void raw_accept(struct raw_listener *l, struct bench_conn *c,
		size_t max_size, int delivery_complete)
{
	struct raw_conn *r = calloc(1, sizeof(*r));
	_Alignas(8) uint8_t buf[RAW_CM_BUF];
	struct fi_eq_cm_entry *ent = (struct fi_eq_cm_entry *)buf;
	struct bench_remote me;
	size_t n;

	if (!r)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	eq_expect(l->eq, FI_CONNREQ, buf, &n);
	if (n < sizeof(*ent) + sizeof(r->peer))
		bench_die(BENCH_EXIT_FAIL, "raw: connect request without the peer's buffer");
	memcpy(&r->peer, ent->data, sizeof(r->peer));
	r->info = ent->info;
	r->fabric = l->fabric;
	r->eq = l->eq;
	conn_setup(r, c, max_size, delivery_complete);
	own_remote(r, c, &me);
	FI_CHECK(fi_accept(r->ep, &me, sizeof(me)));
	eq_expect(r->eq, FI_CONNECTED, buf, NULL);
	/* the listener stays for the setup pattern's connections */
	r->pep = l->pep;
	r->pep_info = l->info;
	r->own_fabric = 1;
	r->own_eq = 1;
	free(l);
}

void raw_connect(const char *prov, uint16_t port, struct bench_conn *c,
		 size_t max_size, int delivery_complete)
{
	struct raw_conn *r = calloc(1, sizeof(*r));
	/* an fd: the setup pattern's server sleeps on it and a CQ's */
	struct fi_eq_attr eqa = { .size = 16, .wait_obj = FI_WAIT_FD };
	_Alignas(8) uint8_t buf[RAW_CM_BUF];
	struct fi_eq_cm_entry *ent = (struct fi_eq_cm_entry *)buf;
	struct fi_info *h = hints_make(prov);
	struct bench_remote me;
	char service[16];
	size_t n;

	if (!r)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	snprintf(service, sizeof(service), "%u", (unsigned)port);
	FI_CHECK(fi_getinfo(RAW_FI_VERSION, "127.0.0.1", service, 0, h,
			    &r->info));
	fi_freeinfo(h);
	FI_CHECK(fi_fabric(r->info->fabric_attr, &r->fabric, NULL));
	FI_CHECK(fi_eq_open(r->fabric, &eqa, &r->eq, NULL));
	r->own_fabric = 1;
	r->own_eq = 1;
	conn_setup(r, c, max_size, delivery_complete);
	own_remote(r, c, &me);
	FI_CHECK(fi_connect(r->ep, r->info->dest_addr, &me, sizeof(me)));
	eq_expect(r->eq, FI_CONNECTED, buf, &n);
	if (n < sizeof(*ent) + sizeof(r->peer))
		bench_die(BENCH_EXIT_FAIL, "raw: accept without the peer's buffer");
	memcpy(&r->peer, ent->data, sizeof(r->peer));
}

/* One more connection between the same two sides, made the way libdat
 * makes one more on the same IA and PZ (dat_bench -T): an endpoint on
 * base's domain (libdat: the PZ's), bound to base's EQ (the IA's), with
 * a send and a receive CQ of its own (each EP its own request and receive
 * EVD, and each EVD is a libfabric CQ of its own in libdat) and its own
 * registered buffer.  The domain is FI_THREAD_SAFE, so one thread per
 * connection may drive it while others drive theirs.  The server takes
 * the request from base's listener, the client connects to the same port
 * as base; the two sides make them in the same order, one at a time.
 * raw_close leaves base's domain, EQ and fabric alone. */
void raw_connect_more(struct bench_conn *base, struct bench_conn *c,
		      int client, size_t max_size, int delivery_complete)
{
	struct raw_conn *b = rc_of(base), *r = calloc(1, sizeof(*r));
	_Alignas(8) uint8_t buf[RAW_CM_BUF];
	struct fi_eq_cm_entry *ent = (struct fi_eq_cm_entry *)buf;
	struct bench_remote me;
	size_t n;

	if (!r)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	r->fabric = b->fabric;
	r->domain = b->domain;
	r->eq = b->eq;
	if (client) {
		r->info = fi_dupinfo(b->info);
		if (!r->info)
			bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	} else {
		/* the setup pattern may have kept a request for later: none
		 * here, -T runs no other pattern */
		eq_expect(r->eq, FI_CONNREQ, buf, &n);
		if (n < sizeof(*ent) + sizeof(r->peer))
			bench_die(BENCH_EXIT_FAIL,
				  "raw: connect request without the peer's buffer");
		memcpy(&r->peer, ent->data, sizeof(r->peer));
		r->info = ent->info;
	}
	conn_setup(r, c, max_size, delivery_complete);
	own_remote(r, c, &me);
	if (client) {
		FI_CHECK(fi_connect(r->ep, r->info->dest_addr, &me, sizeof(me)));
		eq_expect(r->eq, FI_CONNECTED, buf, &n);
		if (n < sizeof(*ent) + sizeof(r->peer))
			bench_die(BENCH_EXIT_FAIL, "raw: accept without the peer's buffer");
		memcpy(&r->peer, ent->data, sizeof(r->peer));
	} else {
		FI_CHECK(fi_accept(r->ep, &me, sizeof(me)));
		eq_expect(r->eq, FI_CONNECTED, buf, NULL);
	}
}

/* ---- the primitives --------------------------------------------------------- */

/* A send of len bytes of tx on ep (the connection's, or a setup one). */
static void send_on(struct raw_conn *r, struct fid_ep *ep, struct bench_conn *c,
		    size_t len)
{
	struct iovec iov = { .iov_base = (void *)c->tx, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &r->desc, .iov_count = 1,
	};

	FI_CHECK(fi_sendmsg(ep, &msg, r->tx_flags));
	c->tx_out++;
}

static void raw_post_send(struct bench_conn *c, size_t len)
{
	send_on(rc_of(c), rc_of(c)->ep, c, len);
}

/* An RDMA Write from tx to offset off of the peer's rx area, or an RDMA
 * Read of its first len bytes into our rx area (a read completes once its
 * data is here: no delivery flag). */
static void raw_rma(struct bench_conn *c, int read, size_t off, size_t len)
{
	struct raw_conn *r = rc_of(c);
	struct iovec iov = {
		.iov_base = (void *)(read ? c->rx : c->tx), .iov_len = len,
	};
	struct fi_rma_iov rma = {
		.addr = r->peer.addr + off, .len = len, .key = r->peer.key,
	};
	struct fi_msg_rma msg = {
		.msg_iov = &iov, .desc = &r->desc, .iov_count = 1,
		.rma_iov = &rma, .rma_iov_count = 1,
	};

	if (read)
		FI_CHECK(fi_readmsg(r->ep, &msg, FI_COMPLETION));
	else
		FI_CHECK(fi_writemsg(r->ep, &msg, r->tx_flags));
	c->tx_out++;
}

static void raw_post_write(struct bench_conn *c, size_t off, size_t len)
{
	raw_rma(c, 0, off, len);
}

static void raw_post_read(struct bench_conn *c, size_t len)
{
	raw_rma(c, 1, 0, len);
}

static void raw_post_recv(struct bench_conn *c, int slot)
{
	struct raw_conn *r = rc_of(c);
	struct iovec iov;
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &r->desc, .iov_count = 1,
		.context = (void *)(uintptr_t)(slot + 1),
	};

	iov.iov_base = bench_slot(c, slot, &iov.iov_len);
	FI_CHECK(fi_recvmsg(r->ep, &msg, FI_COMPLETION));
}

static void cq_error(struct fid_cq *cq, const char *which)
{
	struct fi_cq_err_entry err;

	memset(&err, 0, sizeof(err));
	fi_cq_readerr(cq, &err, 0);
	bench_die(BENCH_EXIT_FAIL, "raw: %s completion error: %s (prov_errno %d)",
		  which, fi_strerror(err.err), err.prov_errno);
}

/* One read of a CQ: fi_cq_read, or fi_cq_sread up to BENCH_WAIT_MS. */
static ssize_t cq_get(struct fid_cq *cq, struct fi_cq_msg_entry *ent,
		      size_t max, enum bench_wait w, const char *which)
{
	ssize_t n;

	if (w == BENCH_POLL)
		n = fi_cq_read(cq, ent, max);
	else
		n = fi_cq_sread(cq, ent, max, NULL, BENCH_WAIT_MS);
	if (n == -FI_EAGAIN) {
		if (w == BENCH_BLOCK)
			bench_die(BENCH_EXIT_FAIL,
				  "raw: no %s completion in %d s", which,
				  BENCH_WAIT_MS / 1000);
		return 0;
	}
	if (n == -FI_EAVAIL)
		cq_error(cq, which);
	if (n < 0)
		fail(w == BENCH_POLL ? "fi_cq_read" : "fi_cq_sread", n);
	return n;
}

static int raw_reap_tx(struct bench_conn *c, int max, enum bench_wait w)
{
	struct raw_conn *r = rc_of(c);
	struct fi_cq_msg_entry ent[RAW_BATCH];
	ssize_t n;

	if (max > RAW_BATCH)
		max = RAW_BATCH;
	if (max <= 0)
		return 0;
	if (r->helper_on) {
		/* the helper thread reads the CQ: take what it counted */
		uint64_t avail;

		for (;;) {
			avail = __atomic_load_n(&r->helper_done,
						__ATOMIC_ACQUIRE) -
				r->helper_taken;
			if (avail > 0 || w == BENCH_POLL)
				break;
			sched_yield();
		}
		if (avail > (uint64_t)max)
			avail = (uint64_t)max;
		r->helper_taken += avail;
		c->tx_out -= (int)avail;
		return (int)avail;
	}
	n = cq_get(r->txcq, ent, (size_t)max, w, "send");
	c->tx_out -= (int)n;
	return (int)n;
}

static int raw_get_rx(struct bench_conn *c, size_t expect, int *slot,
		      size_t *len, enum bench_wait w)
{
	struct raw_conn *r = rc_of(c);
	struct fi_cq_msg_entry ent;

	(void)expect;   /* messages have their own length */
	if (cq_get(r->rxcq, &ent, 1, w, "receive") == 0)
		return 0;
	*slot = (int)((uintptr_t)ent.op_context - 1);
	*len = ent.len;
	return 1;
}

static void *helper_main(void *arg)
{
	struct raw_conn *r = arg;
	struct fi_cq_msg_entry ent[RAW_BATCH];
	ssize_t n;

	while (!__atomic_load_n(&r->helper_stop, __ATOMIC_ACQUIRE)) {
		/* a short timeout: fi_cq_signal may come before we sleep */
		n = fi_cq_sread(r->txcq, ent, RAW_BATCH, NULL, 50);
		if (n == -FI_EAGAIN)
			continue;
		if (n == -FI_EAVAIL)
			cq_error(r->txcq, "send");
		if (n < 0)
			fail("fi_cq_sread (helper)", n);
		__atomic_add_fetch(&r->helper_done, (uint64_t)n,
				   __ATOMIC_RELEASE);
	}
	return NULL;
}

static void raw_mem_wait_begin(struct bench_conn *c)
{
	struct raw_conn *r = rc_of(c);
	int err;

	r->helper_stop = 0;
	r->helper_done = r->helper_taken = 0;
	err = pthread_create(&r->helper, NULL, helper_main, r);
	if (err)
		bench_die(BENCH_EXIT_FAIL, "raw: pthread_create: %s",
			  strerror(err));
	r->helper_on = 1;
}

static void raw_mem_wait_end(struct bench_conn *c)
{
	struct raw_conn *r = rc_of(c);

	__atomic_store_n(&r->helper_stop, 1, __ATOMIC_RELEASE);
	fi_cq_signal(r->txcq);
	pthread_join(r->helper, NULL);
	r->helper_on = 0;
	if (r->helper_done != r->helper_taken)
		bench_die(BENCH_EXIT_FAIL, "raw: %llu send completions left over",
			  (unsigned long long)(r->helper_done - r->helper_taken));
}

#define SETUP_MSG UINT32_MAX    /* setup_event: the first message came */

/* The server's next setup event.  It sleeps on the EQ and on the send
 * CQ, and reads that CQ when woken: tcp 1.17 notices the client's
 * disconnect in CQ progress, and only then queues FI_SHUTDOWN.  (libdat's
 * progress thread does the same with its epoll set and its 2 ms timer.)
 * The send CQ, because it is empty here, while the receive CQ may already
 * hold the fence that follows the last connection.  *msg > 0: the first
 * message is awaited on setup_rxcq too, before any connection event;
 * when it is there, *msg becomes 0 and the event is SETUP_MSG. */
static uint32_t setup_event(struct raw_conn *r, void *buf, size_t *len, size_t *msg)
{
	struct fid *fids[3] = { &r->eq->fid, &r->txcq->fid, NULL };
	struct fi_cq_msg_entry ent;
	struct pollfd pfd[3];
	nfds_t nfd = *msg ? 3 : 2;
	uint32_t event;
	ssize_t n;

	FI_CHECK(fi_control(&r->eq->fid, FI_GETWAIT, &pfd[0].fd));
	FI_CHECK(fi_control(&r->txcq->fid, FI_GETWAIT, &pfd[1].fd));
	if (*msg) {
		fids[2] = &r->setup_rxcq->fid;
		FI_CHECK(fi_control(&r->setup_rxcq->fid, FI_GETWAIT, &pfd[2].fd));
	}
	for (;;) {
		if (*msg && cq_get(r->setup_rxcq, &ent, 1, BENCH_POLL, "first message")) {
			if (ent.len != *msg)
				bench_die(BENCH_EXIT_FAIL, "raw: setup: a first message of "
					  "%zu bytes, expected %zu", ent.len, *msg);
			*msg = 0;
			return SETUP_MSG;
		}
		n = fi_eq_read(r->eq, &event, buf, RAW_CM_BUF, 0);
		if (n >= 0) {
			*len = (size_t)n;
			return event;
		}
		if (n != -FI_EAGAIN)
			return eq_next(r->eq, buf, len);        /* it reports the error */
		n = fi_cq_read(r->txcq, &ent, 1);
		if (n != -FI_EAGAIN)
			bench_die(BENCH_EXIT_FAIL, "raw: setup: send CQ read: %zd", n);
		if (fi_trywait(r->fabric, fids, (int)nfd) != FI_SUCCESS)
			continue;
		pfd[0].events = pfd[1].events = pfd[2].events = POLLIN;
		if (poll(pfd, nfd, BENCH_WAIT_MS) == 0)
			bench_die(BENCH_EXIT_FAIL, "raw: no connection event in %d s",
				  BENCH_WAIT_MS / 1000);
	}
}

/* An endpoint on the connection's domain, EQ and send CQ, receives on
 * rxcq, enabled.  (tcp 1.17 progresses a domain's connections through the
 * first EQ one of its endpoints was bound to: a second EQ would never see
 * an event.) */
static struct fid_ep *setup_ep(struct raw_conn *r, struct fi_info *info,
			       struct fid_cq *rxcq)
{
	struct fid_ep *ep;

	FI_CHECK(fi_endpoint(r->domain, info, &ep, NULL));
	FI_CHECK(fi_ep_bind(ep, &r->eq->fid, 0));
	FI_CHECK(fi_ep_bind(ep, &r->txcq->fid, FI_TRANSMIT));
	FI_CHECK(fi_ep_bind(ep, &rxcq->fid, FI_RECV));
	FI_CHECK(fi_enable(ep));
	return ep;
}

/* msg: the client's first message goes out once connected, from tx, and
 * it shuts down once that completed; the server receives it into the
 * first small slot on setup_rxcq (the pattern's receive CQ may hold the
 * fence that follows the last connection). */
static void raw_setup(struct bench_conn *c, int client, size_t pdata, size_t msg)
{
	struct raw_conn *r = rc_of(c);
	_Alignas(8) uint8_t buf[RAW_CM_BUF];
	struct fi_eq_cm_entry *ent = (struct fi_eq_cm_entry *)buf;
	struct fi_cq_attr cqa = {
		.size = 16, .format = FI_CQ_FORMAT_MSG, .wait_obj = FI_WAIT_FD,
	};
	struct fi_info *info;
	struct fid_ep *ep;
	size_t n;

	if (pdata > RAW_CM_BUF - sizeof(*ent))
		bench_die(BENCH_EXIT_FAIL, "raw: %zu bytes of private data (at most %zu)",
			  pdata, RAW_CM_BUF - sizeof(*ent));
	if (msg > BENCH_SMALL)
		bench_die(BENCH_EXIT_FAIL, "raw: a first message of %zu bytes (at most %d)",
			  msg, BENCH_SMALL);
	if (msg && !r->setup_rxcq)
		FI_CHECK(fi_cq_open(r->domain, &cqa, &r->setup_rxcq, NULL));
	/* The pattern's connection is idle: every event on the EQ is about
	 * the setup's endpoints.  The client has one at a time. */
	if (client) {
		ep = setup_ep(r, r->info, r->rxcq);
		FI_CHECK(fi_connect(ep, r->info->dest_addr, (void *)c->tx, pdata));
		eq_expect(r->eq, FI_CONNECTED, buf, &n);
		if (n < sizeof(*ent) + pdata)
			bench_die(BENCH_EXIT_FAIL, "raw: setup: the accept carries %zu bytes",
				  n - sizeof(*ent));
		if (msg) {
			send_on(r, ep, c, msg);
			raw_reap_tx(c, 1, BENCH_BLOCK);
		}
		fi_shutdown(ep, 0);
		fi_close(&ep->fid);
		return;
	}
	/* The server.  The client, done once it saw FI_CONNECTED, may ask
	 * for the next connection before our FI_SHUTDOWN is there: that
	 * CONNREQ waits for the next call. */
	if (r->connreq_len) {
		n = r->connreq_len;
		memcpy(buf, r->connreq, n);
		r->connreq_len = 0;
	} else {
		eq_expect(r->eq, FI_CONNREQ, buf, &n);
	}
	if (n < sizeof(*ent) + pdata)
		bench_die(BENCH_EXIT_FAIL, "raw: setup: the request carries %zu bytes",
			  n - sizeof(*ent));
	info = ent->info;
	ep = setup_ep(r, info, msg ? r->setup_rxcq : r->rxcq);
	if (msg) {
		struct iovec iov = { .iov_base = c->small, .iov_len = BENCH_SMALL };
		struct fi_msg m = { .msg_iov = &iov, .desc = &r->desc, .iov_count = 1 };

		FI_CHECK(fi_recvmsg(ep, &m, FI_COMPLETION));
	}
	FI_CHECK(fi_accept(ep, (void *)c->tx, pdata));
	for (;;) {
		uint32_t ev = setup_event(r, buf, &n, &msg);

		if (ev == SETUP_MSG)
			continue;
		if (ev == FI_CONNREQ && !r->connreq_len) {
			memcpy(r->connreq, buf, n);
			r->connreq_len = n;
			continue;
		}
		if (ev == FI_CONNECTED && ent->fid == &ep->fid)
			continue;
		if (ev == FI_SHUTDOWN && ent->fid == &ep->fid && msg)
			bench_die(BENCH_EXIT_FAIL, "raw: setup: FI_SHUTDOWN before the first "
				  "message");
		if (ev == FI_SHUTDOWN && ent->fid == &ep->fid)
			break;
		bench_die(BENCH_EXIT_FAIL, "raw: setup: unexpected connection event %u", ev);
	}
	fi_close(&ep->fid);
	fi_freeinfo(info);
}

/* n more connections on the same domain, EQ and CQs, idle: the client
 * starts all n connects, then waits for them; the server accepts each
 * request as it comes, its CONNECTED events mixed in with them.  (The
 * setup pattern's server takes every CONNREQ on this EQ as its own: none
 * may be left.) */
static void raw_idle(struct bench_conn *c, int client, int n)
{
	struct raw_conn *r = rc_of(c);
	_Alignas(8) uint8_t buf[RAW_CM_BUF];
	struct fi_eq_cm_entry *ent = (struct fi_eq_cm_entry *)buf;
	size_t len;
	int i, connected = 0;
	uint32_t event;

	r->idle = calloc((size_t)n, sizeof(r->idle[0]));
	r->idle_info = calloc((size_t)n, sizeof(r->idle_info[0]));
	if (!r->idle || !r->idle_info)
		bench_die(BENCH_EXIT_FAIL, "raw: out of memory");
	if (client) {
		for (i = 0; i < n; i++) {
			r->idle[i] = setup_ep(r, r->info, r->rxcq);
			r->nidle++;
			FI_CHECK(fi_connect(r->idle[i], r->info->dest_addr, NULL, 0));
		}
		for (i = 0; i < n; i++)
			eq_expect(r->eq, FI_CONNECTED, buf, &len);
		return;
	}
	while (r->nidle < n || connected < n) {
		event = eq_next(r->eq, buf, &len);
		if (event == FI_CONNECTED) {
			connected++;
		} else if (event == FI_CONNREQ && r->nidle < n) {
			i = r->nidle;
			r->idle_info[i] = ent->info;
			r->idle[i] = setup_ep(r, ent->info, r->rxcq);
			r->nidle++;
			FI_CHECK(fi_accept(r->idle[i], NULL, 0));
		} else {
			bench_die(BENCH_EXIT_FAIL, "raw: idle connections: event %u",
				  event);
		}
		if (connected > r->nidle)
			bench_die(BENCH_EXIT_FAIL, "raw: more connected than accepted");
	}
}

static int raw_close(struct bench_conn *c, int client)
{
	struct raw_conn *r = rc_of(c);
	int i;

	(void)client;
	for (i = 0; i < r->nidle; i++) {
		fi_shutdown(r->idle[i], 0);
		fi_close(&r->idle[i]->fid);
		if (r->idle_info[i])
			fi_freeinfo(r->idle_info[i]);
	}
	free(r->idle);
	free(r->idle_info);
	/* Both sides finished with a send/recv exchange: nothing is in
	 * flight.  Outstanding receives are simply dropped with the EP. */
	fi_shutdown(r->ep, 0);
	fi_close(&r->ep->fid);
	fi_close(&r->rxcq->fid);
	fi_close(&r->txcq->fid);
	if (r->setup_rxcq)
		fi_close(&r->setup_rxcq->fid);
	fi_close(&r->mr->fid);
	if (r->own_domain)
		fi_close(&r->domain->fid);
	if (r->pep) {
		fi_close(&r->pep->fid);
		fi_freeinfo(r->pep_info);
	}

	if (r->own_eq)
		fi_close(&r->eq->fid);
	if (r->own_fabric)
		fi_close(&r->fabric->fid);
	fi_freeinfo(r->info);
	free(r->buf);
	free(r);
	c->priv = NULL;
	return 0;
}

static const struct bench_ops raw_ops = {
	.post_send = raw_post_send,
	.post_write = raw_post_write,
	.post_read = raw_post_read,
	.post_recv = raw_post_recv,
	.reap_tx = raw_reap_tx,
	.get_rx = raw_get_rx,
	.mem_wait_begin = raw_mem_wait_begin,
	.mem_wait_end = raw_mem_wait_end,
	.setup = raw_setup,
	.idle = raw_idle,
	.close = raw_close,
	.spin_calls = 1,
};
