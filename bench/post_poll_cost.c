/* post_poll_cost: the instructions one 8-byte Send costs the thread that
 * posts and polls it, DAT against raw libfabric, counted by valgrind's
 * callgrind (bench/instr-cost.sh runs it and reads the counts).
 *
 * One process, one thread of ours.  It opens one stack:
 *
 *   -t dat   libdat, IA -i (default ofi-tcp; tcp is libdat's own provider):
 *            one IA, PZ and LMR, two EPs on it, each with its own request
 *            and receive EVD; EP A connects to a PSP of the same IA
 *            (dat_psp_create_any), EP B is accepted on it
 *   -t raw   raw libfabric tcp, set up the way bench/raw_ofi_bench.c sets
 *            it up: the same fi_getinfo hints, FI_MR_BASIC, one domain,
 *            one EQ (for the listener and both endpoints: tcp 1.17
 *            progresses a domain's connections through one EQ), a send CQ
 *            and a receive CQ per endpoint, FI_CQ_FORMAT_MSG, FI_WAIT_FD;
 *            endpoint A connects to a passive endpoint on port 0, B is
 *            accepted from it
 *
 * over 127.0.0.1, with one registered buffer.  Sends complete on delivery
 * on both sides: libdat's ofi provider asks for FI_DELIVERY_COMPLETE, and
 * the raw side posts with FI_COMPLETION | FI_DELIVERY_COMPLETE, as
 * dat_bench does.  Then, after a warm-up (-w cycles):
 *
 *   region "cycle"    -n cycles (default 2000) of: post a receive on B,
 *                     post a signalled Send of -s bytes (default 8) on A,
 *                     poll B's receive queue until its completion is
 *                     there, poll A's send queue until its completion is
 *                     there.  The polls that found nothing are counted,
 *                     per queue.
 *   region "idle_rx"  -k polls (default 2000) of B's receive queue, idle
 *                     (nothing posted, nothing in flight): all empty
 *   region "idle_tx"  -k polls of A's send queue, idle: all empty
 *
 * so that instr-cost.sh can take the empty polls out of the cycle:
 * (Ir(cycle) - empty_rx * Ir(idle_rx)/k - empty_tx * Ir(idle_tx)/k) / n.
 *
 * Around each region: CALLGRIND_DUMP_STATS_AT("before-<region>") (so what
 * came before is not in the region's dump), CALLGRIND_TOGGLE_COLLECT, the
 * region, CALLGRIND_TOGGLE_COLLECT, CALLGRIND_DUMP_STATS_AT("<region>").
 * Collection state is per thread in callgrind: under
 * --collect-atstart=no the toggles make the region's dump hold this
 * (the measuring) thread's instructions only; libdat's progress thread
 * and any thread of libfabric's never collect.  With -A the toggles are
 * left out: run under --collect-atstart=yes (and the default
 * --separate-threads=no), every thread collects all the time, and the
 * region's dump holds every thread's instructions between the two dumps,
 * so the other threads' share shows.  (With --separate-threads=yes a
 * client request dumps the calling thread only: the others' costs would
 * all land in the dump at exit.)
 *
 * Without valgrind the client requests do nothing; the program still runs
 * and prints the wall-clock time per cycle.
 *
 * Output: one line "post_poll_cost: key=value ...", see report().
 * Exit status: 0; 1 on a failure (said on stderr); 2 on a usage error;
 * 3 when libdat answered DAT_NOT_IMPLEMENTED. */
#include "config.h"

#include <arpa/inet.h>
#include <getopt.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <valgrind/callgrind.h>

#include <dat/udat.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>

#define EXIT_NOTIMPL 3
#define WAIT_MS 60000           /* a connection event this late is a hang
				 * (valgrind slows everything down) */
#define MAX_EMPTY 50000000L     /* empty polls in a row: nothing will come */
#define RAW_FI_VERSION FI_VERSION(1, 17)
#define RAW_QUEUE 1024
#define RAW_CM_BUF (sizeof(struct fi_eq_cm_entry) + 64)
#define BUF_LEN 8192            /* A's send area, then B's receive area */

static struct {
	const char *stack;
	const char *ia;
	const char *prov;
	long n, k, warm;
	size_t size;
	int all_threads;
} opt = {
	.stack = "dat",
	.ia = "ofi-tcp",
	.prov = "tcp",
	.n = 2000,
	.k = 2000,
	.warm = 200,
	.size = 8,
};

__attribute__((noreturn, format(printf, 2, 3)))
static void die(int status, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "post_poll_cost: %s: ", opt.stack);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	/* _exit: libfabric's destructor can deadlock against a thread that
	 * is still inside libfabric (libdat's progress thread) */
	_exit(status);
}

/* What the loop drives: one stack's two endpoints.  Each poll returns 1
 * when it took a completion (checked: success, the right length), 0 when
 * the queue was empty. */
struct stack_ops {
	void (*post_recv_b)(void *s);
	void (*post_send_a)(void *s, size_t len);
	int (*poll_rx_b)(void *s);
	int (*poll_tx_a)(void *s);
	void (*close)(void *s);
};

static uint8_t *buf_alloc(void)
{
	void *p = NULL;

	if (posix_memalign(&p, 4096, BUF_LEN))
		die(1, "out of memory");
	memset(p, 0, BUF_LEN);
	return p;
}

/* ---- DAT ----------------------------------------------------------------------- */

struct dat_side {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, cr_evd, conn_a, conn_b;
	DAT_EVD_HANDLE req_a, rcv_a, req_b, rcv_b;
	DAT_PZ_HANDLE pz;
	DAT_PSP_HANDLE psp;
	DAT_EP_HANDLE a, b;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_ctx;
	uint8_t *buf;
	size_t expect;          /* the length of the Send in flight */
};

static void dat_fail(const char *what, DAT_RETURN rc)
{
	const char *major = "?", *minor = "";
	int len = (int)strcspn(what, "(");

	dat_strerror(rc, &major, &minor);
	if (DAT_GET_TYPE(rc) == (DAT_UINT32)DAT_NOT_IMPLEMENTED)
		die(EXIT_NOTIMPL, "%.*s: DAT_NOT_IMPLEMENTED", len, what);
	die(1, "%.*s failed: %s%s%s (0x%08x)", len, what, major,
	    minor && *minor ? " " : "", minor ? minor : "", (unsigned)rc);
}

#define DCHECK(call) \
	do { \
		DAT_RETURN rc_ = (call); \
		if (rc_ != DAT_SUCCESS) \
			dat_fail(#call, rc_); \
	} while (0)

static void dat_expect_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want,
			     DAT_EVENT *ev, const char *what)
{
	DAT_COUNT nmore;

	memset(ev, 0, sizeof(*ev));
	DCHECK(dat_evd_wait(evd, (DAT_TIMEOUT)WAIT_MS * 1000u, 1, ev, &nmore));
	if (ev->event_number != want)
		die(1, "%s: event 0x%x, expected 0x%x", what,
		    (unsigned)ev->event_number, (unsigned)want);
}

static void dat_post_recv_b(void *s)
{
	struct dat_side *d = s;
	DAT_LMR_TRIPLET iov = {
		.lmr_context = d->lmr_ctx,
		.virtual_address = (DAT_VADDR)(uintptr_t)(d->buf + BUF_LEN / 2),
		.segment_length = BUF_LEN / 2,
	};
	DAT_DTO_COOKIE cookie = { .as_64 = 2 };

	DCHECK(dat_ep_post_recv(d->b, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG));
}

static void dat_post_send_a(void *s, size_t len)
{
	struct dat_side *d = s;
	DAT_LMR_TRIPLET iov = {
		.lmr_context = d->lmr_ctx,
		.virtual_address = (DAT_VADDR)(uintptr_t)d->buf,
		.segment_length = len,
	};
	DAT_DTO_COOKIE cookie = { .as_64 = 1 };

	d->expect = len;
	DCHECK(dat_ep_post_send(d->a, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG));
}

/* One dat_evd_dequeue: 0 when empty, else the completion checked (its
 * length too when check_len: DAT 1.2 leaves a Send's transfered_length
 * to the provider). */
static int dat_poll(DAT_EVD_HANDLE evd, uint64_t cookie, size_t len,
		    int check_len, const char *which)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *dto;
	DAT_EVENT ev;
	DAT_RETURN rc;

	rc = dat_evd_dequeue(evd, &ev);
	if (DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY)
		return 0;
	if (rc != DAT_SUCCESS)
		dat_fail("dat_evd_dequeue", rc);
	dto = &ev.event_data.dto_completion_event_data;
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    dto->status != DAT_DTO_SUCCESS || dto->user_cookie.as_64 != cookie ||
	    (check_len && dto->transfered_length != len))
		die(1, "%s queue: event 0x%x status %d cookie %llu length %llu",
		    which, (unsigned)ev.event_number, (int)dto->status,
		    (unsigned long long)dto->user_cookie.as_64,
		    (unsigned long long)dto->transfered_length);
	return 1;
}

static int dat_poll_rx_b(void *s)
{
	struct dat_side *d = s;

	return dat_poll(d->rcv_b, 2, d->expect, 1, "B's receive");
}

static int dat_poll_tx_a(void *s)
{
	struct dat_side *d = s;

	return dat_poll(d->req_a, 1, 0, 0, "A's send");
}

static void dat_close(void *s)
{
	struct dat_side *d = s;
	DAT_EVENT ev;

	DCHECK(dat_ep_disconnect(d->a, DAT_CLOSE_GRACEFUL_FLAG));
	dat_expect_event(d->conn_a, DAT_CONNECTION_EVENT_DISCONNECTED, &ev,
			 "A: waiting for DISCONNECTED");
	dat_expect_event(d->conn_b, DAT_CONNECTION_EVENT_DISCONNECTED, &ev,
			 "B: waiting for DISCONNECTED");
	DCHECK(dat_ep_free(d->a));
	DCHECK(dat_ep_free(d->b));
	DCHECK(dat_psp_free(d->psp));
	DCHECK(dat_lmr_free(d->lmr));
	DCHECK(dat_evd_free(d->req_a));
	DCHECK(dat_evd_free(d->rcv_a));
	DCHECK(dat_evd_free(d->req_b));
	DCHECK(dat_evd_free(d->rcv_b));
	DCHECK(dat_evd_free(d->conn_a));
	DCHECK(dat_evd_free(d->conn_b));
	DCHECK(dat_evd_free(d->cr_evd));
	DCHECK(dat_pz_free(d->pz));
	DCHECK(dat_ia_close(d->ia, DAT_CLOSE_GRACEFUL_FLAG));
	free(d->buf);
	free(d);
}

static const struct stack_ops dat_ops = {
	.post_recv_b = dat_post_recv_b,
	.post_send_a = dat_post_send_a,
	.poll_rx_b = dat_poll_rx_b,
	.poll_tx_a = dat_poll_tx_a,
	.close = dat_close,
};

static void *dat_open(void)
{
	struct dat_side *d = calloc(1, sizeof(*d));
	DAT_REGION_DESCRIPTION region;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_VLEN reg_len = 0;
	DAT_VADDR reg_addr = 0;
	DAT_CONN_QUAL qual = 0;
	DAT_IA_ATTR ia_attr;
	struct sockaddr_in sa;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;

	if (!d)
		die(1, "out of memory");
	d->async = DAT_HANDLE_NULL;
	DCHECK(dat_ia_open((DAT_NAME_PTR)opt.ia, 8, &d->async, &d->ia));
	DCHECK(dat_pz_create(d->ia, &d->pz));
	DCHECK(dat_evd_create(d->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &d->cr_evd));
	DCHECK(dat_evd_create(d->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			      &d->conn_a));
	DCHECK(dat_evd_create(d->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			      &d->conn_b));
	DCHECK(dat_evd_create(d->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->req_a));
	DCHECK(dat_evd_create(d->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->rcv_a));
	DCHECK(dat_evd_create(d->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->req_b));
	DCHECK(dat_evd_create(d->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->rcv_b));

	d->buf = buf_alloc();
	region.for_va = d->buf;
	DCHECK(dat_lmr_create(d->ia, DAT_MEM_TYPE_VIRTUAL, region, BUF_LEN, d->pz,
			      DAT_MEM_PRIV_ALL_FLAG, &d->lmr, &d->lmr_ctx,
			      &rmr_ctx, &reg_len, &reg_addr));
	if (reg_addr != (DAT_VADDR)(uintptr_t)d->buf || reg_len < BUF_LEN)
		die(1, "dat_lmr_create registered [0x%llx, +%llu), asked [%p, +%d)",
		    (unsigned long long)reg_addr, (unsigned long long)reg_len,
		    (void *)d->buf, BUF_LEN);

	/* the provider's default EP attributes: one 8-byte message at a time */
	DCHECK(dat_ep_create(d->ia, d->pz, d->rcv_a, d->req_a, d->conn_a, NULL, &d->a));
	DCHECK(dat_ep_create(d->ia, d->pz, d->rcv_b, d->req_b, d->conn_b, NULL, &d->b));
	DCHECK(dat_psp_create_any(d->ia, &qual, d->cr_evd, DAT_PSP_CONSUMER_FLAG,
				  &d->psp));

	/* the PSP is on this IA: connect to the IA's own address
	 * (127.0.0.1 for ofi-tcp and tcp) */
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	memset(&ia_attr, 0, sizeof(ia_attr));
	if (dat_ia_query(d->ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &ia_attr, 0,
			 NULL) == DAT_SUCCESS && ia_attr.ia_address_ptr &&
	    ia_attr.ia_address_ptr->sa_family == AF_INET)
		memcpy(&sa, ia_attr.ia_address_ptr, sizeof(sa));
	sa.sin_port = 0;
	DCHECK(dat_ep_connect(d->a, (DAT_IA_ADDRESS_PTR)&sa, qual,
			      (DAT_TIMEOUT)WAIT_MS * 1000u, 0, NULL,
			      DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	dat_expect_event(d->cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev,
			 "waiting for the connection request");
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	DCHECK(dat_cr_accept(cr, d->b, 0, NULL));
	dat_expect_event(d->conn_b, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
			 "B: waiting for ESTABLISHED");
	dat_expect_event(d->conn_a, DAT_CONNECTION_EVENT_ESTABLISHED, &ev,
			 "A: waiting for ESTABLISHED");
	return d;
}

/* ---- raw libfabric ------------------------------------------------------------- */

struct raw_side {
	struct fi_info *linfo, *cinfo, *binfo;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	struct fid_pep *pep;
	struct fid_ep *a, *b;
	struct fid_cq *tx_a, *rx_a, *tx_b, *rx_b;
	struct fid_mr *mr;
	void *desc;
	uint8_t *buf;
	uint64_t tx_flags;
	size_t expect;
};

static void raw_fail(const char *what, ssize_t ret)
{
	die(1, "%s: %s (%zd)", what, fi_strerror((int)-ret), ret);
}

#define FI_CHECK(call) \
	do { \
		ssize_t r_ = (call); \
		if (r_ < 0) \
			raw_fail(#call, r_); \
	} while (0)

static struct fi_info *raw_hints(void)
{
	struct fi_info *h = fi_allocinfo();

	if (!h)
		die(1, "out of memory");
	h->fabric_attr->prov_name = strdup(opt.prov);
	if (!h->fabric_attr->prov_name)
		die(1, "out of memory");
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

/* The next connection event (WAIT_MS at most); its type. */
static uint32_t raw_eq_next(struct raw_side *r, void *cm, size_t *len)
{
	uint32_t event = 0;
	ssize_t n;

	n = fi_eq_sread(r->eq, &event, cm, RAW_CM_BUF, WAIT_MS, 0);
	if (n == -FI_EAVAIL) {
		struct fi_eq_err_entry err;

		memset(&err, 0, sizeof(err));
		fi_eq_readerr(r->eq, &err, 0);
		die(1, "connection event error: %s", fi_strerror(err.err));
	}
	if (n == -FI_EAGAIN)
		die(1, "no connection event in %d s", WAIT_MS / 1000);
	if (n < 0)
		raw_fail("fi_eq_sread", n);
	if (len)
		*len = (size_t)n;
	return event;
}

static struct fid_ep *raw_ep(struct raw_side *r, struct fi_info *info,
			     struct fid_cq *tx, struct fid_cq *rx)
{
	struct fid_ep *ep;

	FI_CHECK(fi_endpoint(r->domain, info, &ep, NULL));
	FI_CHECK(fi_ep_bind(ep, &r->eq->fid, 0));
	FI_CHECK(fi_ep_bind(ep, &tx->fid, FI_TRANSMIT));
	FI_CHECK(fi_ep_bind(ep, &rx->fid, FI_RECV));
	FI_CHECK(fi_enable(ep));
	return ep;
}

static void raw_post_recv_b(void *s)
{
	struct raw_side *r = s;
	struct iovec iov = {
		.iov_base = r->buf + BUF_LEN / 2, .iov_len = BUF_LEN / 2,
	};
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &r->desc, .iov_count = 1,
		.context = (void *)(uintptr_t)2,
	};

	FI_CHECK(fi_recvmsg(r->b, &msg, FI_COMPLETION));
}

static void raw_post_send_a(void *s, size_t len)
{
	struct raw_side *r = s;
	struct iovec iov = { .iov_base = r->buf, .iov_len = len };
	struct fi_msg msg = {
		.msg_iov = &iov, .desc = &r->desc, .iov_count = 1,
		.context = (void *)(uintptr_t)1,
	};

	r->expect = len;
	FI_CHECK(fi_sendmsg(r->a, &msg, r->tx_flags));
}

/* One fi_cq_read: 0 when empty, else the completion checked. */
static int raw_poll(struct fid_cq *cq, uintptr_t ctx, size_t len, int check_len,
		    const char *which)
{
	struct fi_cq_msg_entry ent;
	ssize_t n;

	n = fi_cq_read(cq, &ent, 1);
	if (n == -FI_EAGAIN)
		return 0;
	if (n == -FI_EAVAIL) {
		struct fi_cq_err_entry err;

		memset(&err, 0, sizeof(err));
		fi_cq_readerr(cq, &err, 0);
		die(1, "%s completion error: %s (prov_errno %d)", which,
		    fi_strerror(err.err), err.prov_errno);
	}
	if (n < 0)
		raw_fail("fi_cq_read", n);
	if ((uintptr_t)ent.op_context != ctx || (check_len && ent.len != len))
		die(1, "%s queue: context %p length %zu", which, ent.op_context,
		    ent.len);
	return 1;
}

static int raw_poll_rx_b(void *s)
{
	struct raw_side *r = s;

	return raw_poll(r->rx_b, 2, r->expect, 1, "B's receive");
}

static int raw_poll_tx_a(void *s)
{
	struct raw_side *r = s;

	return raw_poll(r->tx_a, 1, 0, 0, "A's send");
}

static void raw_close(void *s)
{
	struct raw_side *r = s;

	fi_shutdown(r->a, 0);
	fi_close(&r->a->fid);
	fi_close(&r->b->fid);
	fi_close(&r->pep->fid);
	fi_close(&r->tx_a->fid);
	fi_close(&r->rx_a->fid);
	fi_close(&r->tx_b->fid);
	fi_close(&r->rx_b->fid);
	fi_close(&r->mr->fid);
	fi_close(&r->domain->fid);
	fi_close(&r->eq->fid);
	fi_close(&r->fabric->fid);
	fi_freeinfo(r->binfo);
	fi_freeinfo(r->cinfo);
	fi_freeinfo(r->linfo);
	free(r->buf);
	free(r);
}

static const struct stack_ops raw_ops = {
	.post_recv_b = raw_post_recv_b,
	.post_send_a = raw_post_send_a,
	.poll_rx_b = raw_poll_rx_b,
	.poll_tx_a = raw_poll_tx_a,
	.close = raw_close,
};

static void *raw_open(void)
{
	struct raw_side *r = calloc(1, sizeof(*r));
	struct fi_eq_attr eqa = { .size = 16, .wait_obj = FI_WAIT_FD };
	struct fi_cq_attr cqa = {
		.size = RAW_QUEUE, .format = FI_CQ_FORMAT_MSG,
		.wait_obj = FI_WAIT_FD,
	};
	_Alignas(8) uint8_t cm[RAW_CM_BUF];
	struct fi_eq_cm_entry *ent = (struct fi_eq_cm_entry *)cm;
	struct fi_info *h;
	struct sockaddr_in sin;
	size_t len = sizeof(sin);
	char service[16];
	int connected_a = 0, connected_b = 0;

	if (!r)
		die(1, "out of memory");
	r->tx_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE;
	h = raw_hints();
	FI_CHECK(fi_getinfo(RAW_FI_VERSION, "127.0.0.1", "0", FI_SOURCE, h,
			    &r->linfo));
	FI_CHECK(fi_fabric(r->linfo->fabric_attr, &r->fabric, NULL));
	FI_CHECK(fi_eq_open(r->fabric, &eqa, &r->eq, NULL));
	FI_CHECK(fi_passive_ep(r->fabric, r->linfo, &r->pep, NULL));
	FI_CHECK(fi_pep_bind(r->pep, &r->eq->fid, 0));
	FI_CHECK(fi_listen(r->pep));
	FI_CHECK(fi_getname(&r->pep->fid, &sin, &len));
	snprintf(service, sizeof(service), "%u", (unsigned)ntohs(sin.sin_port));
	FI_CHECK(fi_getinfo(RAW_FI_VERSION, "127.0.0.1", service, 0, h, &r->cinfo));
	fi_freeinfo(h);

	FI_CHECK(fi_domain(r->fabric, r->cinfo, &r->domain, NULL));
	r->buf = buf_alloc();
	FI_CHECK(fi_mr_reg(r->domain, r->buf, BUF_LEN,
			   FI_SEND | FI_RECV | FI_READ | FI_WRITE |
			   FI_REMOTE_READ | FI_REMOTE_WRITE,
			   0, 0, 0, &r->mr, NULL));
	r->desc = fi_mr_desc(r->mr);
	FI_CHECK(fi_cq_open(r->domain, &cqa, &r->tx_a, NULL));
	FI_CHECK(fi_cq_open(r->domain, &cqa, &r->rx_a, NULL));
	FI_CHECK(fi_cq_open(r->domain, &cqa, &r->tx_b, NULL));
	FI_CHECK(fi_cq_open(r->domain, &cqa, &r->rx_b, NULL));

	r->a = raw_ep(r, r->cinfo, r->tx_a, r->rx_a);
	FI_CHECK(fi_connect(r->a, r->cinfo->dest_addr, NULL, 0));
	if (raw_eq_next(r, cm, NULL) != FI_CONNREQ)
		die(1, "the first connection event is not FI_CONNREQ");
	r->binfo = ent->info;
	r->b = raw_ep(r, r->binfo, r->tx_b, r->rx_b);
	FI_CHECK(fi_accept(r->b, NULL, 0));
	while (!connected_a || !connected_b) {
		uint32_t event = raw_eq_next(r, cm, NULL);

		if (event != FI_CONNECTED)
			die(1, "connection event %u, expected FI_CONNECTED", event);
		if (ent->fid == &r->a->fid)
			connected_a = 1;
		else if (ent->fid == &r->b->fid)
			connected_b = 1;
		else
			die(1, "FI_CONNECTED for an endpoint of nobody's");
	}
	return r;
}

/* ---- the measurement ----------------------------------------------------------- */

struct counts {
	long empty_rx, empty_tx;
};

static void cycles(const struct stack_ops *o, void *s, long n, struct counts *c)
{
	long i, e;

	for (i = 0; i < n; i++) {
		o->post_recv_b(s);
		o->post_send_a(s, opt.size);
		for (e = 0; !o->poll_rx_b(s); e++)
			if (e == MAX_EMPTY)
				die(1, "B's receive did not complete in %ld polls", e);
		c->empty_rx += e;
		for (e = 0; !o->poll_tx_a(s); e++)
			if (e == MAX_EMPTY)
				die(1, "A's send did not complete in %ld polls", e);
		c->empty_tx += e;
	}
}

/* k polls that must all find nothing; returns how many did not */
static long idle_polls(int (*poll)(void *), void *s, long k)
{
	long i, got = 0;

	for (i = 0; i < k; i++)
		got += poll(s);
	return got;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static char dump_name[64];

/* The region's first and last statement.  The dump before it ends what
 * came before (setup, warm-up) in a dump of its own. */
static uint64_t region_begin(const char *name)
{
	snprintf(dump_name, sizeof(dump_name), "before-%s", name);
	CALLGRIND_DUMP_STATS_AT(dump_name);
	if (!opt.all_threads)
		CALLGRIND_TOGGLE_COLLECT;
	return now_ns();
}

static uint64_t region_end(const char *name)
{
	uint64_t t;

	if (!opt.all_threads)
		CALLGRIND_TOGGLE_COLLECT;
	t = now_ns();
	snprintf(dump_name, sizeof(dump_name), "%s", name);
	CALLGRIND_DUMP_STATS_AT(dump_name);
	return t;
}

static long parse_count(const char *s, const char *what, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*s == '\0' || *end != '\0' || v < min) {
		fprintf(stderr, "post_poll_cost: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: post_poll_cost [-t dat|raw] [-i ia] [-p prov] [-n cycles]\n"
		"                      [-k empty polls] [-w warm-up] [-s size] [-A]\n"
		"  -t   the stack: dat (libdat, default) or raw (raw libfabric)\n"
		"  -i   the DAT IA (default ofi-tcp)\n"
		"  -p   raw: the libfabric provider (default tcp)\n"
		"  -n   measured Send post+poll cycles (default 2000)\n"
		"  -k   measured empty polls of each idle queue (default 2000)\n"
		"  -w   warm-up cycles (default 200)\n"
		"  -s   Send size in bytes, 1 .. %d (default 8)\n"
		"  -A   do not toggle callgrind's collection: every thread collects\n"
		"       (run under --collect-atstart=yes, threads not separated)\n",
		BUF_LEN / 2);
	exit(2);
}

int main(int argc, char **argv)
{
	const struct stack_ops *o;
	struct counts cw = { 0, 0 }, c = { 0, 0 };
	uint64_t t0, t1;
	long left_rx, left_tx;
	void *s;
	int ch;

	while ((ch = getopt(argc, argv, "t:i:p:n:k:w:s:Ah")) != -1) {
		switch (ch) {
		case 't': opt.stack = optarg; break;
		case 'i': opt.ia = optarg; break;
		case 'p': opt.prov = optarg; break;
		case 'n': opt.n = parse_count(optarg, "-n", 1); break;
		case 'k': opt.k = parse_count(optarg, "-k", 1); break;
		case 'w': opt.warm = parse_count(optarg, "-w", 0); break;
		case 's':
			opt.size = (size_t)parse_count(optarg, "-s", 1);
			if (opt.size > BUF_LEN / 2)
				usage();
			break;
		case 'A': opt.all_threads = 1; break;
		default: usage();
		}
	}
	if (optind != argc)
		usage();
	if (strcmp(opt.stack, "dat") == 0) {
		o = &dat_ops;
		s = dat_open();
	} else if (strcmp(opt.stack, "raw") == 0) {
		o = &raw_ops;
		s = raw_open();
	} else {
		usage();
	}

	cycles(o, s, opt.warm, &cw);
	/* the idle queues' polls warm up too, outside their regions */
	if (idle_polls(o->poll_rx_b, s, opt.warm / 2 + 1) ||
	    idle_polls(o->poll_tx_a, s, opt.warm / 2 + 1))
		die(1, "a completion after the warm-up");

	t0 = region_begin("cycle");
	cycles(o, s, opt.n, &c);
	t1 = region_end("cycle");

	region_begin("idle_rx");
	left_rx = idle_polls(o->poll_rx_b, s, opt.k);
	region_end("idle_rx");
	region_begin("idle_tx");
	left_tx = idle_polls(o->poll_tx_a, s, opt.k);
	region_end("idle_tx");
	if (left_rx || left_tx)
		die(1, "an idle queue gave %ld completions", left_rx + left_tx);

	printf("post_poll_cost: stack=%s ia=%s size=%zu n=%ld k=%ld warm=%ld "
	       "empty_rx=%ld empty_tx=%ld threads=%s valgrind=%d ns_per_cycle=%.0f\n",
	       opt.stack, strcmp(opt.stack, "dat") == 0 ? opt.ia : opt.prov,
	       opt.size, opt.n, opt.k, opt.warm, c.empty_rx, c.empty_tx,
	       opt.all_threads ? "all" : "measuring", (int)RUNNING_ON_VALGRIND,
	       (double)(t1 - t0) / (double)opt.n);
	fflush(stdout);
	o->close(s);
	return 0;
}
