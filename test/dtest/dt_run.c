/* dtest: the connection and the tests.
 *
 * Both sides run the same sequence once connected, so both report times:
 *   1. bind two RMRs over the RDMA buffers (one the peer may write, one it
 *      may read) and send their contexts to the peer in an INFO message;
 *   2. RDMA Write a burst into the peer's write window, then say WDONE;
 *      on the peer's WDONE check what it wrote into ours;
 *   3. RDMA Read a burst from the peer's read window and check it;
 *   4. ping-pong: the client leads `burst` round trips and times them, then
 *      the server leads as many;
 *   5. the server sends DONE, the client disconnects.
 * Every buffer is filled with a pattern that names its writer, the test
 * and the slot, and every byte is checked where it lands; targets start
 * as the pattern's complement, so a transfer that did not happen cannot
 * pass.  The exchange is lock-step: each side knows which message comes
 * next, and receives complete in the order they were posted. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L      /* getaddrinfo, nanosleep */
#endif
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "dtest.h"

/* Pattern owners and tests. */
enum { SIDE_SERVER = 1, SIDE_CLIENT = 2 };
enum { TEST_WRITE = 'W', TEST_READ = 'R', TEST_PING = 'P' };

/* Control messages. */
#define CTL_MAGIC 0x44545354u   /* "DTST" */
enum { CTL_INFO = 1, CTL_WRITES_DONE = 2, CTL_DONE = 3 };

/* DTO cookies: a range per kind, so a stray completion is recognised. */
#define COOKIE_RECV 0x100u      /* + pool slot */
#define COOKIE_SEND 0x200u
#define COOKIE_BIND 0x300u      /* + 0 write window, + 1 read window */
#define COOKIE_WRITE 0x10000u   /* + slot */
#define COOKIE_READ 0x20000u    /* + slot */

static int my_side(const struct dt *t)
{
	return t->o->server ? SIDE_SERVER : SIDE_CLIENT;
}

static int peer_side(const struct dt *t)
{
	return t->o->server ? SIDE_CLIENT : SIDE_SERVER;
}

/* ---- patterns ----------------------------------------------------------- */

static unsigned char pattern_byte(int side, int test, int slot, size_t k)
{
	uint32_t x = (uint32_t)side * 0x9E3779B1u ^ (uint32_t)test * 0x85EBCA77u ^
		     (uint32_t)(slot + 1) * 0xC2B2AE3Du ^ (uint32_t)k * 0x27D4EB2Fu;

	x ^= x >> 15;
	x *= 0x2C1B3C6Du;
	x ^= x >> 12;
	return (unsigned char)x;
}

static void fill(unsigned char *p, size_t len, int side, int test, int slot,
		 bool complement)
{
	size_t k;

	for (k = 0; k < len; k++)
		p[k] = (unsigned char)(pattern_byte(side, test, slot, k) ^
				       (complement ? 0xFF : 0));
}

static void fill_slots(const struct dt *t, struct dt_region *r, int side,
		       int test, bool complement)
{
	int i;

	for (i = 0; i < t->o->burst; i++)
		fill(r->buf + (size_t)i * t->o->buf_len, t->o->buf_len, side,
		     test, i, complement);
}

/* 0 when p holds the pattern, else -1 after saying where it differs. */
static int check(const struct dt *t, const unsigned char *p, size_t len,
		 int side, int test, int slot, const char *what)
{
	size_t k;

	for (k = 0; k < len; k++) {
		unsigned char want = pattern_byte(side, test, slot, k);

		if (p[k] != want) {
			dt_fail(t, "%s: data check failed in transfer %d, byte %zu: "
				"0x%02x, expected 0x%02x%s", what, slot, k, p[k], want,
				p[k] == (unsigned char)~want ? " (never written)" : "");
			return -1;
		}
	}
	return 0;
}

static int check_slots(const struct dt *t, const struct dt_region *r,
		       int side, int test, const char *what)
{
	int i;

	for (i = 0; i < t->o->burst; i++)
		if (check(t, r->buf + (size_t)i * t->o->buf_len, t->o->buf_len,
			  side, test, i, what))
			return -1;
	dt_verbose(t, "%s: %d x %zu bytes arrived intact", what, t->o->burst,
		   t->o->buf_len);
	return 0;
}

/* ---- control message encoding (big-endian) ------------------------------ */

static void put32(unsigned char **p, uint32_t v)
{
	int i;

	for (i = 3; i >= 0; i--)
		*(*p)++ = (unsigned char)(v >> (8 * i));
}

static void put64(unsigned char **p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p, (uint32_t)v);
}

static uint32_t get32(const unsigned char **p)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < 4; i++)
		v = v << 8 | *(*p)++;
	return v;
}

static uint64_t get64(const unsigned char **p)
{
	uint64_t hi = get32(p);

	return hi << 32 | get32(p);
}

/* ---- posting and completions -------------------------------------------- */

static DAT_LMR_TRIPLET triplet(const struct dt_region *r, size_t off, size_t len)
{
	DAT_LMR_TRIPLET l;

	memset(&l, 0, sizeof(l));
	l.lmr_context = r->lmr_ctx;
	l.virtual_address = (DAT_VADDR)(uintptr_t)(r->buf + off);
	l.segment_length = len;
	return l;
}

static DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

static int post_recv(struct dt *t, int slot)
{
	DAT_LMR_TRIPLET l = triplet(&t->msg_recv, (size_t)slot * t->msg_len,
				    t->msg_len);
	DAT_RETURN rc = dat_ep_post_recv(t->ep, 1, &l, cookie(COOKIE_RECV + slot),
					 DAT_COMPLETION_DEFAULT_FLAG);

	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_ep_post_recv", rc);
		return -1;
	}
	return 0;
}

static int post_send(struct dt *t, size_t len)
{
	DAT_LMR_TRIPLET l = triplet(&t->msg_send, 0, len);
	DAT_RETURN rc = dat_ep_post_send(t->ep, 1, &l, cookie(COOKIE_SEND),
					 DAT_COMPLETION_DEFAULT_FLAG);

	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_ep_post_send", rc);
		return -1;
	}
	return 0;
}

static int no_event(struct dt *t, DAT_RETURN rc, const char *what)
{
	if (DAT_GET_TYPE(rc) == DAT_TIMEOUT_EXPIRED)
		dt_fail(t, "%s: nothing happened within %u s", what,
			DT_EVENT_TIMEOUT_US / 1000000u);
	dt_explain_connection(t);
	return -1;
}

/* The event must complete the DTO `want` of length len. */
static int check_dto(struct dt *t, const DAT_EVENT *ev, const char *what,
		     uint64_t want, DAT_VLEN len)
{
	const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev->event_data.dto_completion_event_data;

	if (ev->event_number != DAT_DTO_COMPLETION_EVENT) {
		dt_fail(t, "%s: got a %s event, expected a DTO completion", what,
			dt_event_name(ev->event_number));
		return -1;
	}
	if (d->status != DAT_DTO_SUCCESS) {
		dt_fail(t, "%s: completed with status %s", what,
			dt_dto_status_name(d->status));
		dt_explain_connection(t);
		return -1;
	}
	if (d->ep_handle != t->ep || d->user_cookie.as_64 != want) {
		dt_fail(t, "%s: completion for EP %p cookie 0x%llx, expected EP %p cookie 0x%llx",
			what, (void *)d->ep_handle,
			(unsigned long long)d->user_cookie.as_64, (void *)t->ep,
			(unsigned long long)want);
		return -1;
	}
	if (d->transfered_length != len) {
		dt_fail(t, "%s: %llu bytes transferred, expected %llu", what,
			(unsigned long long)d->transfered_length,
			(unsigned long long)len);
		return -1;
	}
	return 0;
}

/* The next completion on the request EVD must be `want`. */
static int reap_request(struct dt *t, const char *what, uint64_t want,
			DAT_VLEN len, unsigned long *polls)
{
	DAT_EVENT ev;
	DAT_RETURN rc = dt_next_event(t, t->req_evd, true, DT_EVENT_TIMEOUT_US,
				      &ev, polls);

	if (rc != DAT_SUCCESS)
		return no_event(t, rc, what);
	return check_dto(t, &ev, what, want, len);
}

/* The next message, of length len: its buffer in *msg.  The caller looks
 * at it, then calls recv_done to post the buffer again. */
static int recv_msg(struct dt *t, const char *what, DAT_VLEN len,
		    const unsigned char **msg, unsigned long *polls)
{
	int slot = t->next_recv;
	DAT_EVENT ev;
	DAT_RETURN rc = dt_next_event(t, t->recv_evd, true, DT_EVENT_TIMEOUT_US,
				      &ev, polls);

	if (rc != DAT_SUCCESS)
		return no_event(t, rc, what);
	if (check_dto(t, &ev, what, COOKIE_RECV + (unsigned)slot, len))
		return -1;
	*msg = t->msg_recv.buf + (size_t)slot * t->msg_len;
	return 0;
}

static int recv_done(struct dt *t)
{
	int slot = t->next_recv;

	t->next_recv = (slot + 1) % DT_RECV_POOL;
	return post_recv(t, slot);
}

/* A control message without payload: post, then take the peer's one. */
static int exchange_ctl(struct dt *t, uint32_t type, const char *what)
{
	unsigned char *p = t->msg_send.buf;
	const unsigned char *msg;
	uint32_t magic, got;

	memset(p, 0, DT_CTL_LEN);
	put32(&p, CTL_MAGIC);
	put32(&p, type);
	if (post_send(t, DT_CTL_LEN) ||
	    recv_msg(t, what, DT_CTL_LEN, &msg, NULL))
		return -1;
	magic = get32(&msg);
	got = get32(&msg);
	if (magic != CTL_MAGIC || got != type) {
		dt_fail(t, "%s: unexpected message (magic 0x%08x type %u): both sides must run this dtest",
			what, magic, got);
		return -1;
	}
	return recv_done(t) || reap_request(t, what, COOKIE_SEND, DT_CTL_LEN, NULL);
}

/* ---- connecting ----------------------------------------------------------- */

static const char *connect_hint(DAT_EVENT_NUMBER ev)
{
	switch (ev) {
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
		return " (is a dtest server listening there?)";
	case DAT_CONNECTION_EVENT_PEER_REJECTED:
		return " (the server refused the connection)";
	case DAT_CONNECTION_EVENT_TIMED_OUT:
		return " (no answer in time)";
	case DAT_CONNECTION_EVENT_UNREACHABLE:
		return " (the address cannot be reached)";
	default:
		return "";
	}
}

/* Wait for ESTABLISHED on the connection EVD. */
static int wait_established(struct dt *t, DAT_TIMEOUT timeout_us,
			    const char *peer)
{
	DAT_EVENT ev;
	DAT_RETURN rc = dt_next_event(t, t->conn_evd, false, timeout_us, &ev, NULL);

	if (DAT_GET_TYPE(rc) == DAT_TIMEOUT_EXPIRED) {
		dt_fail(t, "no connection with %s within %u s", peer,
			timeout_us / 1000000u);
		return -1;
	}
	if (rc != DAT_SUCCESS)
		return -1;
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED) {
		dt_fail(t, "could not connect with %s: %s%s", peer,
			dt_event_name(ev.event_number), connect_hint(ev.event_number));
		return -1;
	}
	return 0;
}

static void delay_seconds(unsigned s)
{
	struct timespec ts = { (time_t)s, 0 };

	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static int server_connect(struct dt *t)
{
	const struct dt_opts *o = t->o;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EVENT ev;
	DAT_RETURN rc;
	char who[64] = "the client";

	rc = dat_psp_create(t->ia, o->port, t->cr_evd, DAT_PSP_CONSUMER_FLAG, &t->psp);
	if (rc != DAT_SUCCESS) {
		t->psp = DAT_HANDLE_NULL;
		dt_fail_dat(t, "dat_psp_create", rc);
		if (DAT_GET_TYPE(rc) == DAT_CONN_QUAL_IN_USE)
			dt_fail(t, "port %u is in use: pick another with -n", o->port);
		return -1;
	}
	/* The line scripts wait for: from here a client can connect. */
	printf("dtest server: waiting for a connection on port %u\n", o->port);

	rc = dt_next_event(t, t->cr_evd, false, DAT_TIMEOUT_INFINITE, &ev, NULL);
	if (rc != DAT_SUCCESS)
		return -1;
	if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT) {
		dt_fail(t, "got a %s event, expected a connection request",
			dt_event_name(ev.event_number));
		return -1;
	}
	cr = ev.event_data.cr_arrival_event_data.cr_handle;

	memset(&crp, 0, sizeof(crp));
	rc = dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp);
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_cr_query", rc);
		return -1;
	}
	if (crp.remote_ia_address_ptr &&
	    crp.remote_ia_address_ptr->sa_family == AF_INET) {
		const struct sockaddr_in *sin =
			(const struct sockaddr_in *)(void *)crp.remote_ia_address_ptr;
		char addr[INET_ADDRSTRLEN];

		if (inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr)))
			snprintf(who, sizeof(who), "%s", addr);
	}
	dt_verbose(t, "connection request from %s (port %llu, %d bytes of private data)",
		   who, (unsigned long long)crp.remote_port_qual,
		   (int)crp.private_data_size);

	if (o->delay_s) {
		dt_verbose(t, "waiting %u s before accepting (-d)", o->delay_s);
		delay_seconds(o->delay_s);
	}
	rc = dat_cr_accept(cr, t->ep, 0, NULL);
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_cr_accept", rc);
		return -1;
	}
	if (wait_established(t, DT_EVENT_TIMEOUT_US, who))
		return -1;

	/* One client per run: stop listening. */
	rc = dat_psp_free(t->psp);
	t->psp = DAT_HANDLE_NULL;
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_psp_free", rc);
		return -1;
	}
	printf("dtest server: connected to %s\n", who);
	return 0;
}

static int client_connect(struct dt *t)
{
	const struct dt_opts *o = t->o;
	struct addrinfo hints, *res = NULL;
	struct sockaddr_in sin;
	char who[300];
	DAT_RETURN rc;
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;      /* the providers take IPv4 addresses */
	hints.ai_socktype = SOCK_STREAM;
	err = getaddrinfo(o->host, NULL, &hints, &res);
	if (err != 0 || !res) {
		dt_fail(t, "cannot resolve %s: %s", o->host,
			err ? gai_strerror(err) : "no address");
		if (res)
			freeaddrinfo(res);
		return -1;
	}
	memcpy(&sin, res->ai_addr, sizeof(sin));
	freeaddrinfo(res);
	snprintf(who, sizeof(who), "%s port %u", o->host, o->port);

	rc = dat_ep_connect(t->ep, (DAT_IA_ADDRESS_PTR)(void *)&sin, o->port,
			    DT_CONNECT_TIMEOUT_US, 0, NULL, DAT_QOS_BEST_EFFORT,
			    DAT_CONNECT_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_ep_connect", rc);
		return -1;
	}
	/* The provider times the attempt out; the margin only guards
	 * against it not doing so. */
	if (wait_established(t, DT_CONNECT_TIMEOUT_US + 2000000u, who))
		return -1;
	printf("dtest client: connected to %s\n", who);
	return 0;
}

int dt_connect(struct dt *t)
{
	DAT_EP_PARAM p;
	DAT_RETURN rc;
	int i;

	/* Receives posted now serve the first messages once connected. */
	for (i = 0; i < DT_RECV_POOL; i++)
		if (post_recv(t, i))
			return -1;
	if (t->o->server ? server_connect(t) : client_connect(t))
		return -1;
	t->connected = true;

	memset(&p, 0, sizeof(p));
	rc = dat_ep_query(t->ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, &p);
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_ep_query", rc);
		return -1;
	}
	t->ord = (int)p.ep_attr.max_rdma_read_out;
	if (t->ord < 1) {
		dt_fail(t, "the connection allows no RDMA Reads (max_rdma_read_out %d)",
			t->ord);
		return -1;
	}
	dt_verbose(t, "up to %d RDMA Reads in flight", t->ord);
	return 0;
}

/* ---- the tests ------------------------------------------------------------ */

static int bind_rmr(struct dt *t, DAT_RMR_HANDLE rmr, struct dt_region *r,
		    DAT_MEM_PRIV_FLAGS priv, unsigned which, DAT_RMR_TRIPLET *out,
		    const char *what)
{
	DAT_LMR_TRIPLET l = triplet(r, 0, r->len);
	const DAT_RMR_BIND_COMPLETION_EVENT_DATA *d;
	DAT_RMR_CONTEXT ctx;
	DAT_EVENT ev;
	DAT_RETURN rc;

	rc = dat_rmr_bind(rmr, &l, priv, t->ep, cookie(COOKIE_BIND + which),
			  DAT_COMPLETION_DEFAULT_FLAG, &ctx);
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_rmr_bind", rc);
		return -1;
	}
	rc = dt_next_event(t, t->req_evd, true, DT_EVENT_TIMEOUT_US, &ev, NULL);
	if (rc != DAT_SUCCESS)
		return no_event(t, rc, what);
	d = &ev.event_data.rmr_completion_event_data;
	if (ev.event_number != DAT_RMR_BIND_COMPLETION_EVENT || d->rmr_handle != rmr ||
	    d->user_cookie.as_64 != COOKIE_BIND + which ||
	    d->status != DAT_RMR_BIND_SUCCESS) {
		dt_fail(t, "%s: got %s (status %s, cookie 0x%llx), expected a successful RMR bind completion",
			what, dt_event_name(ev.event_number),
			dt_dto_status_name(d->status),
			(unsigned long long)d->user_cookie.as_64);
		return -1;
	}
	memset(out, 0, sizeof(*out));
	out->rmr_context = ctx;
	out->target_address = l.virtual_address;
	out->segment_length = l.segment_length;
	dt_verbose(t, "%s bound: rmr_context 0x%x, %llu bytes", what,
		   (unsigned)ctx, (unsigned long long)l.segment_length);
	return 0;
}

/* Bind our windows, tell the peer about them, learn about its windows. */
static int exchange_rmrs(struct dt *t)
{
	const struct dt_opts *o = t->o;
	uint64_t burst_bytes = (uint64_t)o->buf_len * (uint64_t)o->burst;
	DAT_RMR_TRIPLET wr, rd;
	unsigned char *p = t->msg_send.buf;
	const unsigned char *msg;
	uint32_t magic, type, burst;
	uint64_t buf_len;

	/* What the peer will read, and the complement of what it will
	 * write; our read target starts as the complement too. */
	fill_slots(t, &t->rd_source, my_side(t), TEST_READ, false);
	fill_slots(t, &t->wr_target, peer_side(t), TEST_WRITE, true);
	fill_slots(t, &t->rd_target, peer_side(t), TEST_READ, true);

	if (bind_rmr(t, t->rmr_wr, &t->wr_target, DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
		     0, &wr, "RMR bind (write window)") ||
	    bind_rmr(t, t->rmr_rd, &t->rd_source, DAT_MEM_PRIV_REMOTE_READ_FLAG,
		     1, &rd, "RMR bind (read window)"))
		return -1;

	memset(p, 0, DT_CTL_LEN);
	put32(&p, CTL_MAGIC);
	put32(&p, CTL_INFO);
	put64(&p, o->buf_len);
	put32(&p, (uint32_t)o->burst);
	put32(&p, (uint32_t)wr.rmr_context);
	put64(&p, wr.target_address);
	put64(&p, wr.segment_length);
	put32(&p, (uint32_t)rd.rmr_context);
	put64(&p, rd.target_address);
	put64(&p, rd.segment_length);
	if (post_send(t, DT_CTL_LEN) ||
	    recv_msg(t, "RMR info exchange", DT_CTL_LEN, &msg, NULL))
		return -1;

	magic = get32(&msg);
	type = get32(&msg);
	buf_len = get64(&msg);
	burst = get32(&msg);
	memset(&t->peer_wr, 0, sizeof(t->peer_wr));
	memset(&t->peer_rd, 0, sizeof(t->peer_rd));
	t->peer_wr.rmr_context = get32(&msg);
	t->peer_wr.target_address = get64(&msg);
	t->peer_wr.segment_length = get64(&msg);
	t->peer_rd.rmr_context = get32(&msg);
	t->peer_rd.target_address = get64(&msg);
	t->peer_rd.segment_length = get64(&msg);
	if (magic != CTL_MAGIC || type != CTL_INFO) {
		dt_fail(t, "RMR info exchange: unexpected message (magic 0x%08x type %u): is the peer a dtest?",
			magic, type);
		return -1;
	}
	if (buf_len != o->buf_len || burst != (uint32_t)o->burst) {
		dt_fail(t, "the peer runs with -b %llu -B %u, this side with -b %zu -B %d: both sides need the same -b and -B",
			(unsigned long long)buf_len, burst, o->buf_len, o->burst);
		return -1;
	}
	if (t->peer_wr.segment_length != burst_bytes ||
	    t->peer_rd.segment_length != burst_bytes) {
		dt_fail(t, "the peer's windows are %llu and %llu bytes, expected %llu",
			(unsigned long long)t->peer_wr.segment_length,
			(unsigned long long)t->peer_rd.segment_length,
			(unsigned long long)burst_bytes);
		return -1;
	}
	dt_verbose(t, "peer's windows: write 0x%x at 0x%llx, read 0x%x at 0x%llx",
		   (unsigned)t->peer_wr.rmr_context,
		   (unsigned long long)t->peer_wr.target_address,
		   (unsigned)t->peer_rd.rmr_context,
		   (unsigned long long)t->peer_rd.target_address);
	return recv_done(t) ||
	       reap_request(t, "RMR info send", COOKIE_SEND, DT_CTL_LEN, NULL);
}

/* A burst of RDMA Writes into the peer's window, timed from the first post
 * to the last completion; then WDONE both ways and the check of what the
 * peer wrote into ours. */
static int test_rdma_write(struct dt *t)
{
	const struct dt_opts *o = t->o;
	double t0;
	int i;

	fill_slots(t, &t->wr_source, my_side(t), TEST_WRITE, false);
	t0 = dt_now_us();
	for (i = 0; i < o->burst; i++) {
		size_t off = (size_t)i * o->buf_len;
		DAT_LMR_TRIPLET l = triplet(&t->wr_source, off, o->buf_len);
		DAT_RMR_TRIPLET r = t->peer_wr;
		DAT_RETURN rc;

		r.target_address += off;
		r.segment_length = o->buf_len;
		rc = dat_ep_post_rdma_write(t->ep, 1, &l, cookie(COOKIE_WRITE + (unsigned)i),
					    &r, DAT_COMPLETION_DEFAULT_FLAG);
		if (rc != DAT_SUCCESS) {
			dt_fail_dat(t, "dat_ep_post_rdma_write", rc);
			return -1;
		}
	}
	for (i = 0; i < o->burst; i++)
		if (reap_request(t, "RDMA write", COOKIE_WRITE + (unsigned)i,
				 o->buf_len, &t->wr.polls))
			return -1;
	t->wr.total_us = dt_now_us() - t0;
	t->wr.ops = o->burst;

	if (exchange_ctl(t, CTL_WRITES_DONE, "RDMA write handshake"))
		return -1;
	return check_slots(t, &t->wr_target, peer_side(t), TEST_WRITE,
			   "RDMA write (the peer's, into this side)");
}

/* A burst of RDMA Reads from the peer's window, at most ord in flight. */
static int test_rdma_read(struct dt *t)
{
	const struct dt_opts *o = t->o;
	int posted = 0, done = 0;
	double t0 = dt_now_us();

	while (done < o->burst) {
		while (posted < o->burst && posted - done < t->ord) {
			size_t off = (size_t)posted * o->buf_len;
			DAT_LMR_TRIPLET l = triplet(&t->rd_target, off, o->buf_len);
			DAT_RMR_TRIPLET r = t->peer_rd;
			DAT_RETURN rc;

			r.target_address += off;
			r.segment_length = o->buf_len;
			rc = dat_ep_post_rdma_read(t->ep, 1, &l,
						   cookie(COOKIE_READ + (unsigned)posted),
						   &r, DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS) {
				dt_fail_dat(t, "dat_ep_post_rdma_read", rc);
				return -1;
			}
			posted++;
		}
		if (reap_request(t, "RDMA read", COOKIE_READ + (unsigned)done,
				 o->buf_len, &t->rd.polls))
			return -1;
		done++;
	}
	t->rd.total_us = dt_now_us() - t0;
	t->rd.ops = o->burst;
	return check_slots(t, &t->rd_target, peer_side(t), TEST_READ,
			   "RDMA read (the peer's data)");
}

/* burst round trips of buf_len-byte messages; the leading side times them
 * (from posting its send to the reply's completion).  The answering side
 * has its reply ready before the message comes and checks the message
 * after replying, so the check is not part of the round trip. */
static int ping_pong(struct dt *t, bool lead)
{
	const struct dt_opts *o = t->o;
	const unsigned char *msg;
	unsigned long *polls = lead ? &t->rtt.polls : NULL;
	double t0 = 0;
	int i;

	for (i = 0; i < o->burst; i++) {
		fill(t->msg_send.buf, o->buf_len, my_side(t), TEST_PING, i, false);
		if (lead) {
			t0 = dt_now_us();
			if (post_send(t, o->buf_len))
				return -1;
		}
		if (recv_msg(t, "ping-pong receive", o->buf_len, &msg, polls))
			return -1;
		if (lead) {
			t->rtt.total_us += dt_now_us() - t0;
			t->rtt.ops++;
		} else if (post_send(t, o->buf_len)) {
			return -1;
		}
		if (check(t, msg, o->buf_len, peer_side(t), TEST_PING, i,
			  "ping-pong") || recv_done(t) ||
		    reap_request(t, "ping-pong send", COOKIE_SEND, o->buf_len, polls))
			return -1;
	}
	dt_verbose(t, "ping-pong (%s): %d round trips of %zu bytes checked",
		   lead ? "leading" : "answering", o->burst, o->buf_len);
	return 0;
}

int dt_run_tests(struct dt *t)
{
	bool server = t->o->server;

	if (exchange_rmrs(t) || test_rdma_write(t) || test_rdma_read(t))
		return -1;
	/* The client leads first; the server's first message cannot come
	 * before it has finished reading, so the windows stay put. */
	if (ping_pong(t, !server) || ping_pong(t, server))
		return -1;
	return 0;
}

/* The server says DONE; the client, having heard it, disconnects.  Then the
 * receives still posted must come back flushed, each once. */
int dt_disconnect(struct dt *t)
{
	bool seen[DT_RECV_POOL] = { false };
	int outstanding = DT_RECV_POOL;
	const unsigned char *msg;
	DAT_EVENT ev;
	DAT_RETURN rc;
	int i;

	if (t->o->server) {
		unsigned char *p = t->msg_send.buf;

		memset(p, 0, DT_CTL_LEN);
		put32(&p, CTL_MAGIC);
		put32(&p, CTL_DONE);
		if (post_send(t, DT_CTL_LEN) ||
		    reap_request(t, "DONE send", COOKIE_SEND, DT_CTL_LEN, NULL))
			return -1;
	} else {
		uint32_t magic, type;

		if (recv_msg(t, "DONE receive", DT_CTL_LEN, &msg, NULL))
			return -1;
		magic = get32(&msg);
		type = get32(&msg);
		if (magic != CTL_MAGIC || type != CTL_DONE) {
			dt_fail(t, "expected DONE, got magic 0x%08x type %u", magic, type);
			return -1;
		}
		/* Not posted again: the connection ends here. */
		seen[t->next_recv] = true;
		outstanding--;
		rc = dat_ep_disconnect(t->ep, DAT_CLOSE_GRACEFUL_FLAG);
		if (rc != DAT_SUCCESS) {
			dt_fail_dat(t, "dat_ep_disconnect", rc);
			return -1;
		}
	}
	rc = dt_next_event(t, t->conn_evd, false, DT_EVENT_TIMEOUT_US, &ev, NULL);
	if (rc != DAT_SUCCESS)
		return no_event(t, rc, "disconnect");
	if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED) {
		dt_fail(t, "disconnect: got %s, expected DISCONNECTED",
			dt_event_name(ev.event_number));
		return -1;
	}
	t->connected = false;

	for (i = 0; i < outstanding; i++) {
		const DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
		uint64_t c;

		rc = dt_next_event(t, t->recv_evd, true, DT_EVENT_TIMEOUT_US, &ev, NULL);
		if (rc != DAT_SUCCESS)
			return no_event(t, rc, "flush of the posted receives");
		c = d->user_cookie.as_64 - COOKIE_RECV;
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    d->status != DAT_DTO_ERR_FLUSHED || c >= DT_RECV_POOL ||
		    seen[c]) {
			dt_fail(t, "after the disconnect: %s (status %s, cookie 0x%llx), expected each posted receive flushed once",
				dt_event_name(ev.event_number),
				dt_dto_status_name(d->status),
				(unsigned long long)d->user_cookie.as_64);
			return -1;
		}
		seen[c] = true;
	}
	dt_verbose(t, "disconnected; the posted receives came back flushed");
	return 0;
}
