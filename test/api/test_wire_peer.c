/* The core against a peer that does not play by the wire header's rules.
 *
 * The DAT side is opened as a consumer would (dat_ia_open of the IA under
 * test, a CR EVD, a PSP from dat_psp_create_any).  The misbehaving peer is
 * the libfabric transport itself (providers/ofi, through dapl_ofi_ops) in
 * the same process, so it can put any bytes it likes into a connect
 * request and see exactly the bytes the core answers with:
 *
 *  - a header with our magic but an unknown major version, a truncated
 *    header, or a consumer length longer than what came: the provider
 *    refuses it with a provider reject naming the reason, and the consumer
 *    never hears of it;
 *  - private data without our magic (a legacy, header-less peer): all of
 *    it is the consumer's data, and the peer's read limits never constrain;
 *  - a valid header: the read limits are negotiated as wire.h says and the
 *    accept carries the result.
 *
 * A pump thread plays the raw peer's progress thread: it polls the fd that
 * progress_fds gives and calls cm_get_event until -EAGAIN, holding the
 * raw side's lock, and the test calls the raw side's CM ops under the same
 * lock.  Every wait is bounded (10 s) and only fails a test that would
 * otherwise hang; nothing sleeps to synchronise. */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
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

#include <dat/udat.h>

#include "transport.h"
#include "ofi.h"
#include "wire.h"

static const struct udapl_transport_ops *const T = &dapl_ofi_ops;

/* Every wait, DAT side or raw side. */
#define WAIT_MS 10000
#define WAIT_US ((DAT_TIMEOUT)WAIT_MS * 1000u)
#define MAXEV 32
#define PDATA_MAX 512

/* ---- the raw peer's progress thread ------------------------------------- */

struct rawev {
	struct dapl_tcm_event ev;
	uint8_t pdata[PDATA_MAX];
};

static struct {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;           /* the raw side's "IA lock" */
	pthread_cond_t cond;            /* CLOCK_MONOTONIC */
	pthread_t thr;
	bool running;
	int stop_fd;
	struct rawev evs[MAXEV];
	int nev;
	int overflow;                   /* events that did not fit */
	int pump_error;                 /* what went wrong in the pump, if anything */
} raw = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void *pump(void *arg)
{
	struct pollfd p[2];
	int n;

	(void)arg;
	p[1].fd = raw.stop_fd;
	p[1].events = POLLIN;
	pthread_mutex_lock(&raw.lock);
	n = T->progress_fds(raw.dev, &p[0].fd, 1);
	if (n != 1) {
		raw.pump_error = n < 0 ? n : -EINVAL;
		pthread_cond_broadcast(&raw.cond);
		pthread_mutex_unlock(&raw.lock);
		return NULL;
	}
	pthread_mutex_unlock(&raw.lock);
	p[0].events = POLLIN;
	for (;;) {
		struct dapl_tcm_event ev;
		int ret;

		/* Read first: an event may be pending before the first poll. */
		pthread_mutex_lock(&raw.lock);
		while ((ret = T->cm_get_event(raw.dev, &ev)) == 0) {
			struct rawev *c;

			if (raw.nev == MAXEV || ev.pdata_len > PDATA_MAX) {
				raw.overflow++;
				continue;
			}
			c = &raw.evs[raw.nev++];
			c->ev = ev;
			if (ev.pdata_len)
				memcpy(c->pdata, ev.pdata, ev.pdata_len);
			c->ev.pdata = c->pdata;
		}
		if (ret != -EAGAIN && !raw.pump_error)
			raw.pump_error = ret;
		pthread_cond_broadcast(&raw.cond);
		pthread_mutex_unlock(&raw.lock);

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
	}
	return NULL;
}

static void raw_start(void)
{
	pthread_condattr_t ca;
	char why[256] = "";
	int ret;

	ck_assert_int_eq(pthread_condattr_init(&ca), 0);
	ck_assert_int_eq(pthread_condattr_setclock(&ca, CLOCK_MONOTONIC), 0);
	ck_assert_int_eq(pthread_cond_init(&raw.cond, &ca), 0);
	pthread_condattr_destroy(&ca);
	ret = T->dev_open("tcp 127.0.0.1", &raw.dev, why, sizeof(why));
	ck_assert_msg(ret == 0, "raw peer: dev_open(tcp 127.0.0.1): %d %s", ret,
		      why);
	raw.nev = 0;
	raw.overflow = 0;
	raw.pump_error = 0;
	raw.stop_fd = eventfd(0, EFD_CLOEXEC);
	ck_assert_int_ge(raw.stop_fd, 0);
	ck_assert_int_eq(pthread_create(&raw.thr, NULL, pump, NULL), 0);
	raw.running = true;
}

static void raw_stop(void)
{
	uint64_t one = 1;

	if (raw.running) {
		ck_assert_int_eq(write(raw.stop_fd, &one, sizeof(one)),
				 sizeof(one));
		pthread_join(raw.thr, NULL);
		close(raw.stop_fd);
		raw.running = false;
	}
	ck_assert_int_eq(raw.overflow, 0);
	ck_assert_int_eq(raw.pump_error, 0);
	T->dev_close(raw.dev);
	raw.dev = NULL;
	pthread_cond_destroy(&raw.cond);
}

static void deadline_in(struct timespec *ts, int ms)
{
	clock_gettime(CLOCK_MONOTONIC, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts->tv_nsec >= 1000000000L) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000L;
	}
}

static const char *tcm_str(enum dapl_tcm_event_type t)
{
	switch (t) {
	case DAPL_TCM_CONNECT_REQUEST: return "CONNECT_REQUEST";
	case DAPL_TCM_ESTABLISHED: return "ESTABLISHED";
	case DAPL_TCM_REJECTED: return "REJECTED";
	case DAPL_TCM_UNREACHABLE: return "UNREACHABLE";
	case DAPL_TCM_DISCONNECTED: return "DISCONNECTED";
	case DAPL_TCM_CONN_ERROR: return "CONN_ERROR";
	case DAPL_TCM_DEVICE_FATAL: return "DEVICE_FATAL";
	case DAPL_TCM_SRQ_LIMIT: return "SRQ_LIMIT";
	}
	return "?";
}

/* Waits (10 s at most) for the next event of the raw ep; false if none
 * came. */
static bool raw_wait(const struct dapl_tep *ep, struct rawev *out)
{
	struct timespec ts;
	int i, err;

	deadline_in(&ts, WAIT_MS);
	pthread_mutex_lock(&raw.lock);
	for (;;) {
		for (i = 0; i < raw.nev; i++)
			if (raw.evs[i].ev.ep == ep)
				break;
		if (i < raw.nev)
			break;
		if (raw.pump_error ||
		    pthread_cond_timedwait(&raw.cond, &raw.lock, &ts) ==
		    ETIMEDOUT) {
			err = raw.pump_error;
			pthread_mutex_unlock(&raw.lock);
			ck_assert_msg(err == 0, "raw peer: cm_get_event: %d", err);
			return false;
		}
	}
	*out = raw.evs[i];
	memmove(&raw.evs[i], &raw.evs[i + 1],
		(size_t)(raw.nev - i - 1) * sizeof(raw.evs[0]));
	raw.nev--;
	pthread_mutex_unlock(&raw.lock);
	out->ev.pdata = out->pdata;
	return true;
}

static void raw_check_type(const struct rawev *c, enum dapl_tcm_event_type want)
{
	ck_assert_msg(c->ev.type == want,
		      "raw peer: event %s (status %d, %zu bytes), wanted %s",
		      tcm_str(c->ev.type), c->ev.status, c->ev.pdata_len,
		      tcm_str(want));
}

/* Takes the next event of the raw ep (10 s at most) and checks its type. */
static struct rawev raw_take(const struct dapl_tep *ep,
			     enum dapl_tcm_event_type want)
{
	struct rawev out;

	if (!raw_wait(ep, &out))
		ck_abort_msg("raw peer: no event in %d ms (wanted %s)", WAIT_MS,
			     tcm_str(want));
	raw_check_type(&out, want);
	return out;
}

/* ---- the raw peer's endpoint --------------------------------------------- */

struct rawside {
	struct dapl_tpd *pd;
	struct dapl_tcq *cq;
	struct dapl_tep *ep;
};

static void rawside_make(struct rawside *r)
{
	struct dapl_tep_attr a = {
		.max_send_wr = 4, .max_recv_wr = 4,
		.max_send_sge = 1, .max_recv_sge = 1,
	};

	ck_assert_int_eq(T->pd_alloc(raw.dev, &r->pd), 0);
	ck_assert_int_eq(T->cq_create(raw.dev, 16, &r->cq), 0);
	pthread_mutex_lock(&raw.lock);
	ck_assert_int_eq(T->ep_create(r->pd, r->cq, r->cq, NULL, &a, &r->ep), 0);
	pthread_mutex_unlock(&raw.lock);
}

static void rawside_free(struct rawside *r)
{
	struct dapl_twc wc;
	int ret;

	pthread_mutex_lock(&raw.lock);
	ret = T->ep_destroy(r->ep);
	pthread_mutex_unlock(&raw.lock);
	ck_assert_int_eq(ret, 0);
	r->ep = NULL;
	/* nothing was posted, but hand out whatever a destroy flushed */
	while (T->cq_poll(r->cq, &wc, 1) > 0)
		;
	ck_assert_int_eq(T->cq_destroy(r->cq), 0);
	ck_assert_int_eq(T->pd_free(r->pd), 0);
}

static void raw_connect(struct rawside *r, DAT_CONN_QUAL qual,
			const void *pdata, size_t len)
{
	struct sockaddr_in sin;
	int ret;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	pthread_mutex_lock(&raw.lock);
	ret = T->connect(r->ep, (const struct sockaddr *)&sin, (uint16_t)qual,
			 pdata, len, 0, 0);
	pthread_mutex_unlock(&raw.lock);
	ck_assert_msg(ret == 0, "raw peer: connect: %d", ret);
}

static void raw_disconnect(struct rawside *r)
{
	int ret;

	pthread_mutex_lock(&raw.lock);
	ret = T->disconnect(r->ep);
	pthread_mutex_unlock(&raw.lock);
	ck_assert_int_eq(ret, 0);
}

/* A header written by hand, big-endian as wire.h lays it out. */
static void put16(uint8_t *p, unsigned v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put_hdr(uint8_t *buf, unsigned version, unsigned flags,
		    unsigned consumer_len, unsigned ird, unsigned ord)
{
	put16(buf, DAPL_WIRE_MAGIC);
	buf[2] = (uint8_t)version;
	buf[3] = (uint8_t)flags;
	put16(buf + 4, consumer_len);
	put16(buf + 6, ird);
	put16(buf + 8, ord);
}

/* ---- the DAT side --------------------------------------------------------- */

struct datside {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE dto;
	DAT_EVD_HANDLE cr_evd;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
};

struct datep {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE conn;
};

static const char *ia_name(void)
{
	const char *ia = getenv("DAT_TEST_IA");

	return ia && *ia ? ia : "ofi-tcp";
}

#define DAT_OK(expr) \
	do { \
		DAT_RETURN rc_ = (expr); \
		ck_assert_msg(rc_ == DAT_SUCCESS, "%s returned 0x%08x", #expr, \
			      (unsigned)rc_); \
	} while (0)

static void datside_open(struct datside *d)
{
	memset(d, 0, sizeof(*d));
	d->async = DAT_HANDLE_NULL;
	DAT_OK(dat_ia_open((DAT_NAME_PTR)ia_name(), 8, &d->async, &d->ia));
	DAT_OK(dat_pz_create(d->ia, &d->pz));
	DAT_OK(dat_evd_create(d->ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			      &d->dto));
	DAT_OK(dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
			      &d->cr_evd));
	DAT_OK(dat_psp_create_any(d->ia, &d->qual, d->cr_evd,
				  DAT_PSP_CONSUMER_FLAG, &d->psp));
	ck_assert_msg(d->qual >= 1 && d->qual <= 65535,
		      "dat_psp_create_any gave qual %llu",
		      (unsigned long long)d->qual);
}

static void datside_close(struct datside *d)
{
	DAT_OK(dat_psp_free(d->psp));
	DAT_OK(dat_evd_free(d->cr_evd));
	DAT_OK(dat_evd_free(d->dto));
	DAT_OK(dat_pz_free(d->pz));
	DAT_OK(dat_ia_close(d->ia, DAT_CLOSE_GRACEFUL_FLAG));
	memset(d, 0, sizeof(*d));
}

/* An EP with its own connect EVD and the given read limits, the other
 * attributes the provider's defaults. */
static void datep_make(struct datside *d, struct datep *e, int rd_in,
		       int rd_out)
{
	DAT_EP_HANDLE probe;
	DAT_EP_PARAM param;
	DAT_EP_ATTR attr;

	memset(e, 0, sizeof(*e));
	DAT_OK(dat_evd_create(d->ia, 8, DAT_HANDLE_NULL,
			      DAT_EVD_CONNECTION_FLAG, &e->conn));
	DAT_OK(dat_ep_create(d->ia, d->pz, d->dto, d->dto, e->conn, NULL,
			     &probe));
	memset(&param, 0, sizeof(param));
	DAT_OK(dat_ep_query(probe, DAT_EP_FIELD_EP_ATTR_ALL, &param));
	DAT_OK(dat_ep_free(probe));
	attr = param.ep_attr;
	attr.max_rdma_read_in = rd_in;
	attr.max_rdma_read_out = rd_out;
	DAT_OK(dat_ep_create(d->ia, d->pz, d->dto, d->dto, e->conn, &attr,
			     &e->ep));
}

static void datep_free(struct datep *e)
{
	DAT_OK(dat_ep_free(e->ep));
	DAT_OK(dat_evd_free(e->conn));
	memset(e, 0, sizeof(*e));
}

static void dat_wait(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev)
{
	DAT_COUNT nmore = 0;
	DAT_RETURN rc;

	memset(ev, 0, sizeof(*ev));
	rc = dat_evd_wait(evd, WAIT_US, 1, ev, &nmore);
	ck_assert_msg(rc == DAT_SUCCESS,
		      "dat_evd_wait(%d ms) returned 0x%08x, wanted event 0x%x",
		      WAIT_MS, (unsigned)rc, (unsigned)want);
	ck_assert_msg(ev->event_number == want, "DAT event 0x%x, wanted 0x%x",
		      (unsigned)ev->event_number, (unsigned)want);
	ck_assert_ptr_eq(ev->evd_handle, evd);
}

static void dat_expect_empty(DAT_EVD_HANDLE evd, const char *what)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	memset(&ev, 0, sizeof(ev));
	rc = dat_evd_dequeue(evd, &ev);
	ck_assert_msg(DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY && rc != DAT_SUCCESS,
		      "%s: dat_evd_dequeue returned 0x%08x (event 0x%x), expected DAT_QUEUE_EMPTY",
		      what, (unsigned)rc,
		      rc == DAT_SUCCESS ? (unsigned)ev.event_number : 0u);
}

/* Waits for the connection request; returns its CR after checking the
 * private data the consumer sees. */
static DAT_CR_HANDLE dat_take_cr(struct datside *d, const void *pdata,
				 int len)
{
	DAT_CR_ARRIVAL_EVENT_DATA *a;
	DAT_CR_PARAM param;
	DAT_EVENT ev;

	dat_wait(d->cr_evd, DAT_CONNECTION_REQUEST_EVENT, &ev);
	a = &ev.event_data.cr_arrival_event_data;
	ck_assert_ptr_eq(a->sp_handle.psp_handle, d->psp);
	ck_assert_uint_eq(a->conn_qual, d->qual);
	ck_assert_ptr_nonnull(a->cr_handle);
	memset(&param, 0, sizeof(param));
	DAT_OK(dat_cr_query(a->cr_handle, DAT_CR_FIELD_ALL, &param));
	ck_assert_msg(param.private_data_size == len,
		      "dat_cr_query: private_data_size %d, wanted %d",
		      (int)param.private_data_size, len);
	if (len) {
		ck_assert_ptr_nonnull(param.private_data);
		ck_assert_mem_eq(param.private_data, pdata, (size_t)len);
	}
	return a->cr_handle;
}

static void dat_limits(DAT_EP_HANDLE ep, int *in, int *out)
{
	DAT_EP_PARAM param;

	memset(&param, 0, sizeof(param));
	DAT_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN |
			    DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, &param));
	*in = param.ep_attr.max_rdma_read_in;
	*out = param.ep_attr.max_rdma_read_out;
}

static DAT_EP_STATE dat_state(DAT_EP_HANDLE ep)
{
	DAT_EP_PARAM param;

	memset(&param, 0, sizeof(param));
	DAT_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_STATE, &param));
	return param.ep_state;
}

/* ---- fixture ----------------------------------------------------------------- */

static void setup(void)
{
	const char *conf = getenv("DAT_TEST_CONF");

	ck_assert_msg(conf && *conf, "DAT_TEST_CONF is not set");
	ck_assert_int_eq(setenv("DAT_OVERRIDE", conf, 1), 0);
}

/* ---- cases 1-3: requests the provider must refuse on its own --------------- */

/* The raw peer sends pdata; the provider rejects it with reason, and the
 * consumer's CR EVD stays empty. */
static void expect_provider_reject(const void *pdata, size_t len,
				   unsigned reason)
{
	struct datside d;
	struct rawside r;
	struct rawev c;
	struct dapl_wire_hdr hdr;
	const void *consumer = NULL;
	size_t consumer_len = 0;
	enum dapl_wire_status st;

	datside_open(&d);
	raw_start();
	rawside_make(&r);

	raw_connect(&r, d.qual, pdata, len);
	if (!raw_wait(r.ep, &c)) {
		DAT_EVENT ev;

		/* Say why nothing came back: a consumer holding the request
		 * is the likeliest. */
		memset(&ev, 0, sizeof(ev));
		ck_assert_msg(dat_evd_dequeue(d.cr_evd, &ev) != DAT_SUCCESS,
			      "no reject in %d ms: the consumer got the request instead (event 0x%x)",
			      WAIT_MS, (unsigned)ev.event_number);
		ck_abort_msg("no reject in %d ms, and no CR either", WAIT_MS);
	}
	raw_check_type(&c, DAPL_TCM_REJECTED);
	ck_assert_msg(c.ev.pdata_len > 0,
		      "the reject carries no private data: not a provider reject (nobody listening?)");
	st = dapl_wire_decode(c.pdata, c.ev.pdata_len, &hdr, &consumer,
			      &consumer_len);
	ck_assert_msg(st == DAPL_WIRE_OK, "the reject's header: %s (%zu bytes)",
		      dapl_wire_status_str(st), c.ev.pdata_len);
	ck_assert_uint_eq(hdr.version, DAPL_WIRE_VERSION);
	ck_assert_msg(hdr.flags & DAPL_WIRE_F_PROVIDER_REJECT,
		      "the reject is not marked as the provider's (flags 0x%x)",
		      hdr.flags);
	ck_assert_uint_eq(consumer_len, 1);
	ck_assert_msg(((const uint8_t *)consumer)[0] == reason,
		      "reject reason %u (%s), wanted %u (%s)",
		      ((const uint8_t *)consumer)[0],
		      dapl_wire_reject_str(((const uint8_t *)consumer)[0]),
		      reason, dapl_wire_reject_str(reason));
	ck_assert_uint_eq(hdr.limits.ird, 0);
	ck_assert_uint_eq(hdr.limits.ord, 0);

	/* The core rejects from the handler that would have queued the CR,
	 * so with the reject here, a CR would be queued by now. */
	dat_expect_empty(d.cr_evd, "the consumer heard of a refused request");

	rawside_free(&r);
	raw_stop();
	datside_close(&d);
}

START_TEST(unknown_major_version_is_refused)
{
	uint8_t pd[DAPL_WIRE_HDR_LEN + 4];

	put_hdr(pd, 0x20, 0, 4, 4, 4);
	memcpy(pd + DAPL_WIRE_HDR_LEN, "vers", 4);
	expect_provider_reject(pd, sizeof(pd), DAPL_WIRE_REJECT_BAD_VERSION);
}
END_TEST

START_TEST(truncated_header_is_refused)
{
	uint8_t pd[DAPL_WIRE_HDR_LEN];

	put_hdr(pd, DAPL_WIRE_VERSION, 0, 0, 4, 4);
	/* the magic and three bytes of the rest */
	expect_provider_reject(pd, 5, DAPL_WIRE_REJECT_BAD_HEADER);
}
END_TEST

START_TEST(consumer_length_past_the_data_is_refused)
{
	uint8_t pd[DAPL_WIRE_HDR_LEN + 4];

	/* says 20 consumer bytes, sends 4 */
	put_hdr(pd, DAPL_WIRE_VERSION, 0, 20, 4, 4);
	memcpy(pd + DAPL_WIRE_HDR_LEN, "shrt", 4);
	expect_provider_reject(pd, sizeof(pd), DAPL_WIRE_REJECT_BAD_HEADER);
}
END_TEST

/* ---- cases 4-5: requests the consumer gets -------------------------------------- */

/* Checks the accept the raw peer got: a valid header, not a reject, with
 * exactly the consumer bytes and the given limits. */
static void check_accept(const struct rawev *c, const void *pdata, size_t len,
			 unsigned ird, unsigned ord)
{
	struct dapl_wire_hdr hdr;
	const void *consumer = NULL;
	size_t consumer_len = 0;
	enum dapl_wire_status st;

	st = dapl_wire_decode(c->pdata, c->ev.pdata_len, &hdr, &consumer,
			      &consumer_len);
	ck_assert_msg(st == DAPL_WIRE_OK, "the accept's header: %s (%zu bytes)",
		      dapl_wire_status_str(st), c->ev.pdata_len);
	ck_assert_uint_eq(hdr.version, DAPL_WIRE_VERSION);
	ck_assert_uint_eq(hdr.flags, 0);
	ck_assert_uint_eq(consumer_len, len);
	ck_assert_uint_eq(hdr.consumer_len, len);
	if (len)
		ck_assert_mem_eq(consumer, pdata, len);
	ck_assert_msg(hdr.limits.ird == ird && hdr.limits.ord == ord,
		      "the accept's limits: ird %u ord %u, wanted ird %u ord %u",
		      hdr.limits.ird, hdr.limits.ord, ird, ord);
}

START_TEST(legacy_peer_is_accepted)
{
	static const uint8_t req[5] = { 0x4c, 0x45, 0x47, 0x41, 0x43 };
	uint8_t rep[7] = { 0xDA, 0x7C, 0x10, 0x00, 0x07, 0x00, 0x03 };
	struct datside d;
	struct rawside r;
	struct datep e;
	struct rawev c;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	int in, out;

	datside_open(&d);
	raw_start();
	rawside_make(&r);
	datep_make(&d, &e, 3, 5);

	/* 5 bytes without the magic: all of them are the consumer's */
	raw_connect(&r, d.qual, req, sizeof(req));
	cr = dat_take_cr(&d, req, (int)sizeof(req));
	/* the accept's consumer bytes look like a header on purpose: they
	 * must come back as data, not be read as one */
	DAT_OK(dat_cr_accept(cr, e.ep, (DAT_COUNT)sizeof(rep), rep));

	c = raw_take(r.ep, DAPL_TCM_ESTABLISHED);
	/* a legacy peer's limits are unknown and never constrain */
	check_accept(&c, rep, sizeof(rep), 3, 5);
	dat_wait(e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.ep_handle, e.ep);
	ck_assert_int_eq(dat_state(e.ep), DAT_EP_STATE_CONNECTED);
	dat_limits(e.ep, &in, &out);
	ck_assert_int_eq(in, 3);
	ck_assert_int_eq(out, 5);

	/* the DAT side ends it */
	DAT_OK(dat_ep_disconnect(e.ep, DAT_CLOSE_GRACEFUL_FLAG));
	dat_wait(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.ep_handle, e.ep);
	raw_take(r.ep, DAPL_TCM_DISCONNECTED);
	ck_assert_int_eq(dat_state(e.ep), DAT_EP_STATE_DISCONNECTED);

	dat_expect_empty(d.cr_evd, "CR EVD after the connection");
	dat_expect_empty(e.conn, "connect EVD after DISCONNECTED");
	datep_free(&e);
	rawside_free(&r);
	raw_stop();
	datside_close(&d);
}
END_TEST

START_TEST(peer_limits_are_negotiated)
{
	static const uint8_t data[3] = { 'a', 'b', 'c' };
	uint8_t req[DAPL_WIRE_HDR_LEN + sizeof(data)];
	struct datside d;
	struct rawside r;
	struct datep e;
	struct rawev c;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	int in, out;

	datside_open(&d);
	raw_start();
	rawside_make(&r);
	datep_make(&d, &e, 8, 4);

	/* the raw peer takes 2 reads in flight and wants 6 */
	put_hdr(req, DAPL_WIRE_VERSION, 0, sizeof(data), 2, 6);
	memcpy(req + DAPL_WIRE_HDR_LEN, data, sizeof(data));
	raw_connect(&r, d.qual, req, sizeof(req));
	cr = dat_take_cr(&d, data, (int)sizeof(data));
	DAT_OK(dat_cr_accept(cr, e.ep, 0, NULL));

	/* in = min(8, peer's ord 6), out = min(4, peer's ird 2) */
	c = raw_take(r.ep, DAPL_TCM_ESTABLISHED);
	check_accept(&c, NULL, 0, 6, 2);
	dat_wait(e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.ep_handle, e.ep);
	ck_assert_int_eq(dat_state(e.ep), DAT_EP_STATE_CONNECTED);
	dat_limits(e.ep, &in, &out);
	ck_assert_msg(in == 6 && out == 2,
		      "dat_ep_query once connected: read in %d out %d, wanted 6 and 2",
		      in, out);

	/* the raw peer ends it */
	raw_disconnect(&r);
	raw_take(r.ep, DAPL_TCM_DISCONNECTED);
	dat_wait(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.ep_handle, e.ep);
	ck_assert_int_eq(dat_state(e.ep), DAT_EP_STATE_DISCONNECTED);

	dat_expect_empty(d.cr_evd, "CR EVD after the connection");
	dat_expect_empty(e.conn, "connect EVD after DISCONNECTED");
	datep_free(&e);
	rawside_free(&r);
	raw_stop();
	datside_close(&d);
}
END_TEST

static Suite *wire_peer_suite(void)
{
	Suite *s = suite_create("wire_peer");
	TCase *tc = tcase_create("refused");

	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, unknown_major_version_is_refused);
	tcase_add_test(tc, truncated_header_is_refused);
	tcase_add_test(tc, consumer_length_past_the_data_is_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("accepted");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, legacy_peer_is_accepted);
	tcase_add_test(tc, peer_limits_are_negotiated);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	const char *conf = getenv("DAT_TEST_CONF");
	SRunner *sr;
	int failed;

	if (!conf || !*conf) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	sr = srunner_create(wire_peer_suite());
	/* One process per test: libdat reads dat.conf once per process. */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
