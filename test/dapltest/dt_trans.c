/*
 * dapltest -T T: the transaction test, both sides.
 *
 * Each side runs `threads` threads of `eps_per_thread` EPs; client thread k
 * and its EPs talk to server thread k.  Per EP and iteration the OP list
 * runs in order: a SR OP is a SEND by its side and a RECV by the other, a
 * RR/RW OP is an RDMA Read/Write by its side into the other side's buffer,
 * reached through an RMR the owner bound and announced (RMRINFO message).
 * A thread drives its EPs in lock-step: it posts one OP on every EP, then
 * reaps the completions of every EP.
 *
 * Receives: each side keeps the receives of the current and of the next
 * iteration posted (one buffer per OP and iteration parity).  That is
 * enough because an iteration has a SEND in each direction (the rules
 * demand one client SR and one server SR), so the peer can never be more
 * than one iteration ahead.
 *
 * -V adds three SR OPs at the end of the list (server, client, server,
 * see dtc_trans_expand) and checks every byte against a pattern of the
 * iteration and the OP:
 *  - SEND data: the receiver checks each message;
 *  - RDMA Read data: the reader checks what it read, right away;
 *  - RDMA Write data: the owner of the target checks it after the sync SEND
 *    that follows the writer's RDMA OPs (the client after the first sync OP,
 *    the server after the second; the RC order guarantees the data landed);
 *  - the owner of an RDMA Read source refills it for the next iteration at
 *    that same point: the peer's reads of this iteration are done then,
 *    and its reads of the next iteration come after the sync SEND the
 *    owner sends next.
 *
 * End of a test EP: the client sends FIN once it reaped all its DTOs; the
 * server, with its own DTOs reaped and FIN received, disconnects.  Each
 * side then expects exactly one DISCONNECTED event per EP (a second one,
 * or one missing, fails the test).
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_common.h"

#define CTL_SIZE	4096	/* RMRINFO of DT_MAX_OPS fits (2.5 KB) */

/* DTO cookies: kind, OP and iteration parity. */
enum { K_SEND = 1, K_RECV, K_RDMA, K_BIND, K_CTL_SEND, K_CTL_RECV };
#define COOKIE(kind, op, par) \
	(((uint64_t)(kind) << 32) | ((uint64_t)(op) << 8) | (uint64_t)(par))
#define COOKIE_KIND(c)	((unsigned)((c) >> 32))
#define COOKIE_OP(c)	((unsigned)(((c) >> 8) & 0xffffff))

/* Statistics, by what the client sees. */
enum { ST_SEND, ST_RECV, ST_RR, ST_RW, ST_N };

/* Where the buffers of one test EP are; the same for all EPs of a side. */
struct layout {
	size_t		send_off[DT_MAX_OPS];	/* SR OPs this side sends */
	size_t		recv_off[DT_MAX_OPS][2];	/* SR OPs it receives, per parity */
	size_t		rdma_off[DT_MAX_OPS];	/* RR/RW: local or target buffer */
	size_t		ctl_send, ctl_recv[2];	/* RMRINFO / FIN */
	size_t		total;
	unsigned	recvs_per_iter;
};

struct tep {
	unsigned	index;
	DAT_EP_HANDLE	ep;
	DAT_EVD_HANDLE	recv_evd, req_evd;
	DAT_PSP_HANDLE	psp;
	DAT_RSP_HANDLE	rsp;
	DAT_CONN_QUAL	qual;
	struct dt_mem	mem;
	DAT_RMR_HANDLE	rmr[DT_MAX_OPS];
	DAT_RMR_TRIPLET	peer[DT_MAX_OPS];	/* the peer's targets */
	unsigned	deferred;		/* -f SENDs not yet reaped */
	bool		connected;
	bool		disconnected;
};

struct tthread {
	const struct dt_ia		*d;
	const struct dt_trans_args	*t;
	const struct layout		*lay;
	enum dt_who			me;
	unsigned			index;
	/* client */
	const struct sockaddr		*server;
	const uint32_t			*quals;
	DAT_QOS				qos;

	DAT_EVD_HANDLE			conn_evd;
	DAT_EVD_HANDLE			cr_evd;		/* server */
	struct tep			*eps;
	unsigned			neps;

	bool				failed;
	char				err[448];
	double				elapsed;
	uint64_t			count[ST_N], bytes[ST_N];
	pthread_t			tid;
	bool				started;
};

static size_t op_bytes(const struct dt_op *op)
{
	return (size_t)op->seg_size * op->num_segs;
}

static size_t take(size_t *off, size_t n)
{
	size_t at = (*off + 63) & ~(size_t)63;

	*off = at + n;
	return at;
}

static void make_layout(const struct dt_trans_args *t, enum dt_who me,
			struct layout *L)
{
	size_t off = 0;

	memset(L, 0, sizeof(*L));
	L->ctl_send = take(&off, CTL_SIZE);
	L->ctl_recv[0] = take(&off, CTL_SIZE);
	L->ctl_recv[1] = take(&off, CTL_SIZE);
	for (uint32_t o = 0; o < t->nops; o++) {
		const struct dt_op *op = &t->ops[o];
		size_t n = op_bytes(op);

		if (op->xfer == DT_SR) {
			if (op->who == me) {
				L->send_off[o] = take(&off, n);
			} else {
				L->recv_off[o][0] = take(&off, n);
				L->recv_off[o][1] = take(&off, n);
				L->recvs_per_iter++;
			}
		} else {
			L->rdma_off[o] = take(&off, n);
		}
	}
	L->total = (off + 4095) & ~(size_t)4095;
}

/* Records the thread's first failure and prints every one. */
static int fail(struct tthread *th, const char *fmt, ...) DT_PRINTF(2, 3);
static int fail(struct tthread *th, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dtc_err("%s thread %u: %s", th->me == DT_CLIENT ? "client" : "server",
	       th->index, msg);
	if (!th->failed)
		snprintf(th->err, sizeof(th->err), "thread %u: %s", th->index, msg);
	th->failed = true;
	return -1;
}

static int fail_dat(struct tthread *th, unsigned ep, const char *call,
		    DAT_RETURN rc)
{
	char where[32], msg[400];

	snprintf(where, sizeof(where), "EP %u", ep);
	dtc_dat_errstr(msg, sizeof(msg), where, call, rc);
	return fail(th, "%s", msg);
}

static uint8_t *at(struct tep *e, size_t off)
{
	return e->mem.base + off;
}

/* The segments of one OP's local buffer. */
static DAT_COUNT make_iov(struct tep *e, size_t off, const struct dt_op *op,
			  DAT_LMR_TRIPLET *iov)
{
	for (uint32_t s = 0; s < op->num_segs; s++) {
		iov[s].lmr_context = e->mem.lmr_ctx;
		iov[s].pad = 0;
		iov[s].virtual_address =
			(DAT_VADDR)(uintptr_t)at(e, off + (size_t)s * op->seg_size);
		iov[s].segment_length = op->seg_size;
	}
	return (DAT_COUNT)op->num_segs;
}

static DAT_LMR_TRIPLET ctl_iov(struct tep *e, size_t off, size_t len)
{
	DAT_LMR_TRIPLET iov;

	iov.lmr_context = e->mem.lmr_ctx;
	iov.pad = 0;
	iov.virtual_address = (DAT_VADDR)(uintptr_t)at(e, off);
	iov.segment_length = len;
	return iov;
}

/* ------------------------------------------------------------------ */
/* Completions                                                         */
/* ------------------------------------------------------------------ */

static const char *kind_name(unsigned kind)
{
	switch (kind) {
	case K_SEND: return "SEND";
	case K_RECV: return "RECV";
	case K_RDMA: return "RDMA";
	case K_BIND: return "RMR bind";
	case K_CTL_SEND: return "control SEND";
	case K_CTL_RECV: return "control RECV";
	default: return "?";
	}
}

/* Next completion on the request EVD: a DTO or an RMR bind. */
static int next_request(struct tthread *th, struct tep *e, uint64_t *cookie,
			DAT_DTO_COMPLETION_STATUS *status)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	rc = dtc_evd_next(e->req_evd, th->t->poll, DT_DTO_TIMEOUT, &ev);
	if (rc != DAT_SUCCESS) {
		if (dtc_is_timeout(rc))
			return fail(th, "EP %u: no request completion within %u s",
				    e->index, DT_DTO_TIMEOUT / DT_SEC);
		return fail_dat(th, e->index, "dat_evd_wait(request)", rc);
	}
	if (ev.event_number == DAT_DTO_COMPLETION_EVENT) {
		*cookie = ev.event_data.dto_completion_event_data.user_cookie.as_64;
		*status = ev.event_data.dto_completion_event_data.status;
	} else if (ev.event_number == DAT_RMR_BIND_COMPLETION_EVENT) {
		*cookie = ev.event_data.rmr_completion_event_data.user_cookie.as_64;
		*status = ev.event_data.rmr_completion_event_data.status;
	} else {
		return fail(th, "EP %u: unexpected %s on the request EVD",
			    e->index, dtc_event_name(ev.event_number));
	}
	return 0;
}

/*
 * Reaps request completions up to the one with cookie `want`.  Completions
 * of -f SENDs may come first (they were posted earlier): they are counted
 * off.  may_flush: FLUSHED is fine for `want` (see the FIN exchange).
 */
static int wait_request(struct tthread *th, struct tep *e, uint64_t want,
			bool may_flush)
{
	uint64_t cookie;
	DAT_DTO_COMPLETION_STATUS status;

	for (;;) {
		if (next_request(th, e, &cookie, &status))
			return -1;
		if (status != DAT_DTO_SUCCESS &&
		    !(may_flush && cookie == want && status == DAT_DTO_ERR_FLUSHED))
			return fail(th, "EP %u: OP %u %s completed with %s%s",
				    e->index, COOKIE_OP(cookie) + 1,
				    kind_name(COOKIE_KIND(cookie)),
				    dtc_dto_status_name(status),
				    status == DAT_DTO_ERR_FLUSHED ?
				    " (the connection is gone)" : "");
		if (cookie == want)
			return 0;
		if (COOKIE_KIND(cookie) == K_SEND && e->deferred > 0) {
			e->deferred--;
			continue;
		}
		return fail(th, "EP %u: %s of OP %u completed, expected %s of OP %u",
			    e->index, kind_name(COOKIE_KIND(cookie)),
			    COOKIE_OP(cookie) + 1, kind_name(COOKIE_KIND(want)),
			    COOKIE_OP(want) + 1);
	}
}

/* -f: the SENDs whose completions were left for after a receive. */
static int reap_deferred(struct tthread *th, struct tep *e)
{
	uint64_t cookie;
	DAT_DTO_COMPLETION_STATUS status;

	while (e->deferred > 0) {
		if (next_request(th, e, &cookie, &status))
			return -1;
		if (COOKIE_KIND(cookie) != K_SEND)
			return fail(th, "EP %u: %s of OP %u completed, expected a SEND",
				    e->index, kind_name(COOKIE_KIND(cookie)),
				    COOKIE_OP(cookie) + 1);
		if (status != DAT_DTO_SUCCESS)
			return fail(th, "EP %u: SEND of OP %u completed with %s",
				    e->index, COOKIE_OP(cookie) + 1,
				    dtc_dto_status_name(status));
		e->deferred--;
	}
	return 0;
}

/* The next receive must be `want`, complete and `len` bytes long. */
static int wait_recv(struct tthread *th, struct tep *e, uint64_t want,
		     size_t len)
{
	DAT_DTO_COMPLETION_EVENT_DATA *dto;
	DAT_EVENT ev;
	DAT_RETURN rc;

	rc = dtc_evd_next(e->recv_evd, th->t->poll, DT_DTO_TIMEOUT, &ev);
	if (rc != DAT_SUCCESS) {
		if (dtc_is_timeout(rc))
			return fail(th, "EP %u: no %s of OP %u within %u s", e->index,
				    kind_name(COOKIE_KIND(want)), COOKIE_OP(want) + 1,
				    DT_DTO_TIMEOUT / DT_SEC);
		return fail_dat(th, e->index, "dat_evd_wait(recv)", rc);
	}
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT)
		return fail(th, "EP %u: unexpected %s on the receive EVD",
			    e->index, dtc_event_name(ev.event_number));
	dto = &ev.event_data.dto_completion_event_data;
	if (dto->status != DAT_DTO_SUCCESS)
		return fail(th, "EP %u: %s of OP %u completed with %s%s", e->index,
			    kind_name(COOKIE_KIND(want)), COOKIE_OP(want) + 1,
			    dtc_dto_status_name(dto->status),
			    dto->status == DAT_DTO_ERR_FLUSHED ?
			    " (the connection is gone)" : "");
	if (dto->user_cookie.as_64 != want)
		return fail(th, "EP %u: receive %#" PRIx64 " completed, expected %#" PRIx64,
			    e->index, dto->user_cookie.as_64, want);
	if (len != (size_t)-1 && dto->transfered_length != len)
		return fail(th, "EP %u: OP %u received %llu bytes, expected %zu",
			    e->index, COOKIE_OP(want) + 1,
			    (unsigned long long)dto->transfered_length, len);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Posting                                                             */
/* ------------------------------------------------------------------ */

/* The receives of iteration j (and the server's FIN after the last). */
static int post_recvs(struct tthread *th, struct tep *e, uint32_t j)
{
	const struct dt_trans_args *t = th->t;
	DAT_LMR_TRIPLET iov[DT_MAX_SEGS];
	DAT_DTO_COOKIE cookie;
	DAT_RETURN rc;

	for (uint32_t o = 0; o < t->nops; o++) {
		const struct dt_op *op = &t->ops[o];
		DAT_COUNT n;

		if (op->xfer != DT_SR || op->who == th->me)
			continue;
		n = make_iov(e, th->lay->recv_off[o][j % 2], op, iov);
		cookie.as_64 = COOKIE(K_RECV, o, j % 2);
		rc = dat_ep_post_recv(e->ep, n, iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, e->index, "dat_ep_post_recv", rc);
	}
	if (th->me == DT_SERVER && j == t->iters - 1) {
		DAT_LMR_TRIPLET c = ctl_iov(e, th->lay->ctl_recv[1], CTL_SIZE);

		cookie.as_64 = COOKIE(K_CTL_RECV, 1, 0);
		rc = dat_ep_post_recv(e->ep, 1, &c, cookie, DAT_COMPLETION_DEFAULT_FLAG);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, e->index, "dat_ep_post_recv(FIN)", rc);
	}
	return 0;
}

static int post_send(struct tthread *th, struct tep *e, uint32_t o)
{
	const struct dt_op *op = &th->t->ops[o];
	DAT_LMR_TRIPLET iov[DT_MAX_SEGS];
	DAT_DTO_COOKIE cookie;
	DAT_COUNT n = make_iov(e, th->lay->send_off[o], op, iov);
	DAT_RETURN rc;

	cookie.as_64 = COOKIE(K_SEND, o, 0);
	rc = dat_ep_post_send(e->ep, n, iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, "dat_ep_post_send", rc);
	return 0;
}

static int post_rdma(struct tthread *th, struct tep *e, uint32_t o)
{
	const struct dt_op *op = &th->t->ops[o];
	DAT_LMR_TRIPLET iov[DT_MAX_SEGS];
	DAT_DTO_COOKIE cookie;
	DAT_COUNT n = make_iov(e, th->lay->rdma_off[o], op, iov);
	DAT_RETURN rc;

	cookie.as_64 = COOKIE(K_RDMA, o, 0);
	if (op->xfer == DT_RR)
		rc = dat_ep_post_rdma_read(e->ep, n, iov, cookie, &e->peer[o],
					   DAT_COMPLETION_DEFAULT_FLAG);
	else
		rc = dat_ep_post_rdma_write(e->ep, n, iov, cookie, &e->peer[o],
					    DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, op->xfer == DT_RR ?
				"dat_ep_post_rdma_read" : "dat_ep_post_rdma_write", rc);
	return 0;
}

/* ------------------------------------------------------------------ */
/* -V patterns                                                         */
/* ------------------------------------------------------------------ */

static int check_buffer(struct tthread *th, struct tep *e, size_t off,
			uint32_t o, uint32_t iter, const char *what)
{
	size_t len = op_bytes(&th->t->ops[o]);
	uint8_t want = 0, got = 0;
	size_t bad = dtc_pattern_check(at(e, off), len, iter, o, &want, &got);

	if (bad == len)
		return 0;
	return fail(th, "EP %u: OP %u (%s %s) iteration %u: %s data wrong at "
		    "byte %zu: 0x%02x, expected 0x%02x", e->index, o + 1,
		    th->t->ops[o].who == DT_CLIENT ? "client" : "server",
		    dtc_xfer_name(th->t->ops[o].xfer), iter, what, bad, got, want);
}

/* What this side sends or writes in iteration i. */
static void fill_sources(struct tthread *th, uint32_t i)
{
	const struct dt_trans_args *t = th->t;

	for (unsigned k = 0; k < th->neps; k++)
		for (uint32_t o = 0; o < t->nops; o++) {
			const struct dt_op *op = &t->ops[o];

			if (op->who != th->me || op->xfer == DT_RR)
				continue;
			dtc_pattern_fill(at(&th->eps[k], op->xfer == DT_SR ?
					   th->lay->send_off[o] : th->lay->rdma_off[o]),
					op_bytes(op), i, o);
		}
}

/* What the peer reads from this side in iteration i. */
static void fill_read_sources(struct tthread *th, struct tep *e, uint32_t i)
{
	for (uint32_t o = 0; o < th->t->nops; o++) {
		const struct dt_op *op = &th->t->ops[o];

		if (op->who != th->me && op->xfer == DT_RR)
			dtc_pattern_fill(at(e, th->lay->rdma_off[o]), op_bytes(op), i, o);
	}
}

/* After the sync SEND that follows the peer's RDMA OPs of iteration i. */
static int sync_point(struct tthread *th, struct tep *e, uint32_t i)
{
	for (uint32_t o = 0; o < th->t->nops; o++) {
		const struct dt_op *op = &th->t->ops[o];

		if (op->who != th->me && op->xfer == DT_RW &&
		    check_buffer(th, e, th->lay->rdma_off[o], o, i, "RDMA Write"))
			return -1;
	}
	if (i + 1 < th->t->iters)
		fill_read_sources(th, e, i + 1);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Set-up and teardown                                                 */
/* ------------------------------------------------------------------ */

static int setup_thread(struct tthread *th)
{
	DAT_COUNT qlen = 2 * (DAT_COUNT)th->neps + 4;
	DAT_RETURN rc;

	rc = dat_evd_create(th->d->ia, qlen, DAT_HANDLE_NULL,
			    DAT_EVD_CONNECTION_FLAG, &th->conn_evd);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, 0, "dat_evd_create(connect)", rc);
	if (th->me == DT_SERVER) {
		rc = dat_evd_create(th->d->ia, qlen, DAT_HANDLE_NULL,
				    DAT_EVD_CR_FLAG, &th->cr_evd);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, 0, "dat_evd_create(CR)", rc);
	}
	return 0;
}

/* An EP, its EVDs and buffers, its first receives. */
static int setup_ep(struct tthread *th, struct tep *e)
{
	const struct dt_trans_args *t = th->t;
	const struct layout *L = th->lay;
	DAT_EP_ATTR attr;
	DAT_COUNT iov = 1, recvs, requests;
	DAT_LMR_TRIPLET c;
	DAT_DTO_COOKIE cookie;
	char err[400];
	DAT_RETURN rc;

	for (uint32_t o = 0; o < t->nops; o++) {
		if ((DAT_COUNT)t->ops[o].num_segs > th->d->max_iov)
			return fail(th, "OP %u has %u segments; %s allows %d", o + 1,
				    t->ops[o].num_segs, th->d->name, th->d->max_iov);
		if ((DAT_COUNT)t->ops[o].num_segs > iov)
			iov = (DAT_COUNT)t->ops[o].num_segs;
	}
	recvs = 2 * (DAT_COUNT)L->recvs_per_iter + 2;
	requests = (DAT_COUNT)t->nops + 4;

	rc = dat_evd_create(th->d->ia, recvs + 2, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			    &e->recv_evd);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, "dat_evd_create(recv)", rc);
	rc = dat_evd_create(th->d->ia, requests + (DAT_COUNT)t->nops + 2,
			    DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
			    &e->req_evd);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, "dat_evd_create(request)", rc);

	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = DT_MAX_OP_BYTES;
	attr.max_rdma_size = DT_MAX_OP_BYTES;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.max_recv_dtos = recvs;
	attr.max_request_dtos = requests;
	attr.max_recv_iov = iov;
	attr.max_request_iov = iov;
	/* one RDMA Read at a time per EP */
	attr.max_rdma_read_in = th->d->max_rdma_read_in < 4 ? th->d->max_rdma_read_in : 4;
	attr.max_rdma_read_out = th->d->max_rdma_read_out < 4 ? th->d->max_rdma_read_out : 4;
	attr.srq_soft_hw = DAT_HW_DEFAULT;
	attr.max_rdma_read_iov = iov;
	attr.max_rdma_write_iov = iov;
	rc = dat_ep_create(th->d->ia, th->d->pz, e->recv_evd, e->req_evd,
			   th->conn_evd, &attr, &e->ep);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, "dat_ep_create", rc);

	if (dtc_mem_create(&e->mem, th->d, L->total, err, sizeof(err)))
		return fail(th, "EP %u: %s", e->index, err);
	if (t->validate)
		fill_read_sources(th, e, 0);

	/* receives go up before the connection: RMRINFO first, then the
	 * first two iterations */
	c = ctl_iov(e, L->ctl_recv[0], CTL_SIZE);
	cookie.as_64 = COOKIE(K_CTL_RECV, 0, 0);
	rc = dat_ep_post_recv(e->ep, 1, &c, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, "dat_ep_post_recv(RMRINFO)", rc);
	if (post_recvs(th, e, 0))
		return -1;
	if (t->iters > 1 && post_recvs(th, e, 1))
		return -1;
	return 0;
}

/* Server: a PSP (or with -r an RSP) on a free qualifier for this EP. */
static int listen_ep(struct tthread *th, struct tep *e)
{
	DAT_RETURN rc;

	if (!th->t->use_rsp) {
		rc = dat_psp_create_any(th->d->ia, &e->qual, th->cr_evd,
					DAT_PSP_CONSUMER_FLAG, &e->psp);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, e->index, "dat_psp_create_any", rc);
		return 0;
	}
	/* There is no dat_rsp_create_any: let a PSP pick a free qualifier,
	 * then put the RSP there; another process may take it in between,
	 * so try again on DAT_CONN_QUAL_IN_USE. */
	for (int attempt = 0; attempt < 20; attempt++) {
		DAT_PSP_HANDLE probe;

		rc = dat_psp_create_any(th->d->ia, &e->qual, th->cr_evd,
					DAT_PSP_CONSUMER_FLAG, &probe);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, e->index, "dat_psp_create_any", rc);
		rc = dat_psp_free(probe);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, e->index, "dat_psp_free", rc);
		rc = dat_rsp_create(th->d->ia, e->qual, e->ep, th->cr_evd, &e->rsp);
		if (rc == DAT_SUCCESS)
			return 0;
		if (DAT_GET_TYPE(rc) != DAT_CONN_QUAL_IN_USE)
			return fail_dat(th, e->index, "dat_rsp_create", rc);
	}
	return fail(th, "EP %u: no free qualifier for an RSP", e->index);
}

static void teardown_thread(struct tthread *th)
{
	char err[400];
	DAT_RETURN rc;

	for (unsigned k = 0; k < th->neps; k++) {
		struct tep *e = &th->eps[k];

		if (e->rsp) {
			rc = dat_rsp_free(e->rsp);
			if (rc != DAT_SUCCESS)
				fail_dat(th, k, "dat_rsp_free", rc);
		}
		if (e->psp) {
			rc = dat_psp_free(e->psp);
			if (rc != DAT_SUCCESS)
				fail_dat(th, k, "dat_psp_free", rc);
		}
		/* a failed test leaves EPs connected: cut them, so the peer
		 * stops at once instead of timing out */
		if (e->connected && !e->disconnected) {
			rc = dat_ep_disconnect(e->ep, DAT_CLOSE_ABRUPT_FLAG);
			if (rc != DAT_SUCCESS)
				fail_dat(th, k, "dat_ep_disconnect(abrupt)", rc);
		}
		for (uint32_t o = 0; o < DT_MAX_OPS; o++)
			if (e->rmr[o]) {
				rc = dat_rmr_free(e->rmr[o]);
				if (rc != DAT_SUCCESS)
					fail_dat(th, k, "dat_rmr_free", rc);
			}
		if (e->ep) {
			rc = dat_ep_free(e->ep);
			if (rc != DAT_SUCCESS)
				fail_dat(th, k, "dat_ep_free", rc);
		}
		if (dtc_mem_free(&e->mem, err, sizeof(err)))
			fail(th, "EP %u: %s", k, err);
		if (e->recv_evd && (rc = dat_evd_free(e->recv_evd)) != DAT_SUCCESS)
			fail_dat(th, k, "dat_evd_free(recv)", rc);
		if (e->req_evd && (rc = dat_evd_free(e->req_evd)) != DAT_SUCCESS)
			fail_dat(th, k, "dat_evd_free(request)", rc);
	}
	if (th->cr_evd && (rc = dat_evd_free(th->cr_evd)) != DAT_SUCCESS)
		fail_dat(th, 0, "dat_evd_free(CR)", rc);
	if (th->conn_evd && (rc = dat_evd_free(th->conn_evd)) != DAT_SUCCESS)
		fail_dat(th, 0, "dat_evd_free(connect)", rc);
	free(th->eps);
	th->eps = NULL;
}

/* ------------------------------------------------------------------ */
/* Connections                                                         */
/* ------------------------------------------------------------------ */

static struct tep *ep_of(struct tthread *th, DAT_EP_HANDLE h)
{
	for (unsigned k = 0; k < th->neps; k++)
		if (th->eps[k].ep == h)
			return &th->eps[k];
	return NULL;
}

static int wait_established(struct tthread *th, struct tep *e)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	rc = dat_evd_wait(th->conn_evd, DT_TEST_CONNECT_TIMEOUT + 5 * DT_SEC, 1,
			  &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS)
		return fail_dat(th, e->index, "dat_evd_wait(connect)", rc);
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED ||
	    ev.event_data.connect_event_data.ep_handle != e->ep)
		return fail(th, "EP %u: %s instead of ESTABLISHED", e->index,
			    dtc_event_name(ev.event_number));
	e->connected = true;
	return 0;
}

static int client_connect(struct tthread *th)
{
	for (unsigned k = 0; k < th->neps; k++) {
		struct tep *e = &th->eps[k];
		DAT_RETURN rc;

		rc = dat_ep_connect(e->ep, (DAT_IA_ADDRESS_PTR)th->server,
				    th->quals[k], DT_TEST_CONNECT_TIMEOUT,
				    DT_PDATA_LEN, (DAT_PVOID)DT_PDATA, th->qos,
				    DAT_CONNECT_DEFAULT_FLAG);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, k, "dat_ep_connect", rc);
		if (wait_established(th, e))
			return -1;
		dtc_dbg(2, "client thread %u EP %u connected to qualifier %u",
		       th->index, k, th->quals[k]);
	}
	return 0;
}

static int server_accept(struct tthread *th)
{
	for (unsigned n = 0; n < th->neps; n++) {
		DAT_CR_ARRIVAL_EVENT_DATA *cra;
		DAT_CR_PARAM param;
		struct tep *e = NULL;
		DAT_EVENT ev;
		DAT_RETURN rc;

		rc = dat_evd_wait(th->cr_evd, DT_SETUP_TIMEOUT, 1, &ev,
				  &(DAT_COUNT){ 0 });
		if (rc != DAT_SUCCESS) {
			if (dtc_is_timeout(rc))
				return fail(th, "%u of %u connection requests "
					    "did not come within %u s", th->neps - n,
					    th->neps, DT_SETUP_TIMEOUT / DT_SEC);
			return fail_dat(th, 0, "dat_evd_wait(CR)", rc);
		}
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			return fail(th, "unexpected %s on the CR EVD",
				    dtc_event_name(ev.event_number));
		cra = &ev.event_data.cr_arrival_event_data;
		for (unsigned k = 0; k < th->neps; k++)
			if (th->eps[k].qual == cra->conn_qual && !th->eps[k].connected)
				e = &th->eps[k];
		if (!e) {
			dat_cr_reject(cra->cr_handle);
			return fail(th, "connection request for qualifier %llu, "
				    "which no waiting EP has",
				    (unsigned long long)cra->conn_qual);
		}
		rc = dat_cr_query(cra->cr_handle, DAT_CR_FIELD_ALL, &param);
		if (rc != DAT_SUCCESS) {
			dat_cr_reject(cra->cr_handle);
			return fail_dat(th, e->index, "dat_cr_query", rc);
		}
		/* the transaction test's private data, compared as OFA does
		 * (the first 30 bytes) */
		if (param.private_data_size < DT_PDATA_LEN || !param.private_data ||
		    memcmp(param.private_data, DT_PDATA, DT_PDATA_LEN)) {
			char got[DT_PDATA_LEN + 1];
			DAT_COUNT n2 = param.private_data_size;

			if (n2 > DT_PDATA_LEN)
				n2 = DT_PDATA_LEN;
			for (DAT_COUNT i = 0; i < n2; i++) {
				char ch = param.private_data ? ((char *)param.private_data)[i] : '?';

				got[i] = (ch >= 32 && ch < 127) ? ch : '.';
			}
			got[n2 > 0 ? n2 : 0] = '\0';
			dat_cr_reject(cra->cr_handle);
			return fail(th, "EP %u: connection private data mismatch: "
				    "%d bytes \"%s\", expected \"%s\"", e->index,
				    param.private_data_size, got, DT_PDATA);
		}
		if (th->t->use_rsp && param.local_ep_handle != e->ep) {
			dat_cr_reject(cra->cr_handle);
			return fail(th, "EP %u: the RSP's request names another EP",
				    e->index);
		}
		rc = dat_cr_accept(cra->cr_handle, e->ep, 0, NULL);
		if (rc != DAT_SUCCESS) {
			dat_cr_reject(cra->cr_handle);
			return fail_dat(th, e->index, "dat_cr_accept", rc);
		}
		if (wait_established(th, e))
			return -1;
		dtc_dbg(2, "server thread %u EP %u accepted on qualifier %llu",
		       th->index, e->index, (unsigned long long)e->qual);
	}
	return 0;
}

/* EP k: binds an RMR over every buffer the peer reaches and sends them
 * (RMRINFO). */
static int send_rmrinfo(struct tthread *th, unsigned k)
{
	const struct dt_trans_args *t = th->t;
	struct tep *e = &th->eps[k];
	DAT_RMR_TRIPLET mine[DT_MAX_OPS];
	DAT_LMR_TRIPLET c;
	DAT_DTO_COOKIE cookie;
	size_t len;
	DAT_RETURN rc;

	memset(mine, 0, sizeof(mine));
	for (uint32_t o = 0; o < t->nops; o++) {
		const struct dt_op *op = &t->ops[o];
		DAT_LMR_TRIPLET lt;
		DAT_RMR_COOKIE rck;
		DAT_RMR_CONTEXT ctx;

		if (op->xfer == DT_SR || op->who == th->me)
			continue;
		rc = dat_rmr_create(th->d->pz, &e->rmr[o]);
		if (rc != DAT_SUCCESS) {
			e->rmr[o] = DAT_HANDLE_NULL;
			return fail_dat(th, k, "dat_rmr_create", rc);
		}
		lt = ctl_iov(e, th->lay->rdma_off[o], op_bytes(op));
		rck.as_64 = COOKIE(K_BIND, o, 0);
		rc = dat_rmr_bind(e->rmr[o], &lt, op->xfer == DT_RR ?
				  DAT_MEM_PRIV_REMOTE_READ_FLAG :
				  DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
				  e->ep, rck, DAT_COMPLETION_DEFAULT_FLAG, &ctx);
		if (rc != DAT_SUCCESS)
			return fail_dat(th, k, "dat_rmr_bind", rc);
		if (wait_request(th, e, rck.as_64, false))
			return -1;
		mine[o].rmr_context = ctx;
		mine[o].target_address = lt.virtual_address;
		mine[o].segment_length = lt.segment_length;
	}
	len = dtc_encode_rmrinfo(at(e, th->lay->ctl_send), CTL_SIZE, mine, t->nops);
	if (!len)
		return fail(th, "EP %u: RMRINFO does not fit", k);
	c = ctl_iov(e, th->lay->ctl_send, len);
	cookie.as_64 = COOKIE(K_CTL_SEND, 0, 0);
	rc = dat_ep_post_send(e->ep, 1, &c, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return fail_dat(th, k, "dat_ep_post_send(RMRINFO)", rc);
	if (wait_request(th, e, cookie.as_64, false))
		return -1;
	return 0;
}

/* EP k: the peer's RMRINFO. */
static int recv_rmrinfo(struct tthread *th, unsigned k)
{
	const struct dt_trans_args *t = th->t;
	struct tep *e = &th->eps[k];
	struct dt_msg *m = malloc(sizeof(*m));
	char err[200];
	DAT_DTO_COMPLETION_EVENT_DATA dto;
	DAT_EVENT ev;
	DAT_RETURN rc;

	if (!m)
		return fail(th, "out of memory");
	rc = dtc_evd_next(e->recv_evd, t->poll, DT_SETUP_TIMEOUT, &ev);
	if (rc != DAT_SUCCESS) {
		free(m);
		return fail_dat(th, k, "dat_evd_wait(RMRINFO)", rc);
	}
	dto = ev.event_data.dto_completion_event_data;
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    dto.status != DAT_DTO_SUCCESS ||
	    dto.user_cookie.as_64 != COOKIE(K_CTL_RECV, 0, 0)) {
		free(m);
		return fail(th, "EP %u: RMRINFO receive failed (%s, %s)", k,
			    dtc_event_name(ev.event_number),
			    dtc_dto_status_name(dto.status));
	}
	if (dtc_decode(at(e, th->lay->ctl_recv[0]), (size_t)dto.transfered_length,
		      m, err, sizeof(err)) || m->type != DT_MSG_RMRINFO ||
	    m->u.rmrinfo.count != t->nops) {
		free(m);
		return fail(th, "EP %u: bad RMRINFO from the peer", k);
	}
	for (uint32_t o = 0; o < t->nops; o++) {
		const struct dt_op *op = &t->ops[o];

		e->peer[o] = m->u.rmrinfo.t[o];
		if (op->xfer != DT_SR && op->who == th->me &&
		    e->peer[o].segment_length != op_bytes(op)) {
			free(m);
			return fail(th, "EP %u: the peer's RMR for OP %u "
				    "covers %llu bytes, not %zu", k, o + 1,
				    (unsigned long long)e->peer[o].segment_length,
				    op_bytes(op));
		}
	}
	free(m);
	return 0;
}

/* Swaps RMRINFO on every EP.  The side that accepted sends on an EP only
 * once the side that connected has: iWARP's MPA (RFC 5044) lets a
 * responder send no FPDU before the initiator's first, and a device
 * without the peer-to-peer start (RFC 6581), such as Linux 6.1's siw,
 * leaves that to the ULP: a message sent at once can reach the
 * connecting side with the MPA reply, and its connect then fails
 * (dapl_verbs(7)). */
static int exchange_rmrs(struct tthread *th)
{
	if (th->me == DT_SERVER) {
		for (unsigned k = 0; k < th->neps; k++)
			if (recv_rmrinfo(th, k) || send_rmrinfo(th, k))
				return -1;
		return 0;
	}
	for (unsigned k = 0; k < th->neps; k++)
		if (send_rmrinfo(th, k))
			return -1;
	for (unsigned k = 0; k < th->neps; k++)
		if (recv_rmrinfo(th, k))
			return -1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* The iterations                                                      */
/* ------------------------------------------------------------------ */

static unsigned stat_of(const struct dt_op *op)
{
	if (op->xfer == DT_SR)
		return op->who == DT_CLIENT ? ST_SEND : ST_RECV;
	return op->xfer == DT_RR ? ST_RR : ST_RW;
}

static int run_op(struct tthread *th, uint32_t o, uint32_t i)
{
	const struct dt_trans_args *t = th->t;
	const struct dt_op *op = &t->ops[o];
	uint32_t my_sync = t->user_nops + (th->me == DT_CLIENT ? 0 : 1);
	bool mine = op->who == th->me;

	if (op->xfer == DT_SR && mine) {
		for (unsigned k = 0; k < th->neps; k++)
			if (post_send(th, &th->eps[k], o))
				return -1;
		for (unsigned k = 0; k < th->neps; k++) {
			if (op->reap_on_recv)
				th->eps[k].deferred++;
			else if (wait_request(th, &th->eps[k], COOKIE(K_SEND, o, 0), false))
				return -1;
		}
	} else if (op->xfer == DT_SR) {
		for (unsigned k = 0; k < th->neps; k++) {
			struct tep *e = &th->eps[k];

			if (wait_recv(th, e, COOKIE(K_RECV, o, i % 2), op_bytes(op)))
				return -1;
			if (t->validate &&
			    check_buffer(th, e, th->lay->recv_off[o][i % 2], o, i, "SEND"))
				return -1;
			if (reap_deferred(th, e))
				return -1;
			if (t->validate && o == my_sync && sync_point(th, e, i))
				return -1;
		}
	} else if (mine) {
		for (unsigned k = 0; k < th->neps; k++)
			if (post_rdma(th, &th->eps[k], o))
				return -1;
		for (unsigned k = 0; k < th->neps; k++) {
			struct tep *e = &th->eps[k];

			if (wait_request(th, e, COOKIE(K_RDMA, o, 0), false))
				return -1;
			if (t->validate && op->xfer == DT_RR &&
			    check_buffer(th, e, th->lay->rdma_off[o], o, i, "RDMA Read"))
				return -1;
		}
	}
	th->count[stat_of(op)] += th->neps;
	th->bytes[stat_of(op)] += (uint64_t)th->neps * op_bytes(op);
	return 0;
}

static int run_iterations(struct tthread *th)
{
	const struct dt_trans_args *t = th->t;
	double t0 = dtc_now();

	for (uint32_t i = 0; i < t->iters; i++) {
		if (t->validate)
			fill_sources(th, i);
		for (uint32_t o = 0; o < t->nops; o++)
			if (run_op(th, o, i))
				return -1;
		for (unsigned k = 0; k < th->neps; k++) {
			if (reap_deferred(th, &th->eps[k]))
				return -1;
			if (i + 2 < t->iters && post_recvs(th, &th->eps[k], i + 2))
				return -1;
		}
	}
	th->elapsed = dtc_now() - t0;
	return 0;
}

/* Exactly one DISCONNECTED per EP, and nothing else. */
static int collect_disconnects(struct tthread *th)
{
	unsigned pending = 0;
	DAT_EVENT ev;
	DAT_RETURN rc;

	for (unsigned k = 0; k < th->neps; k++)
		if (th->eps[k].connected && !th->eps[k].disconnected)
			pending++;
	while (pending) {
		struct tep *e;

		rc = dat_evd_wait(th->conn_evd, DT_SETUP_TIMEOUT, 1, &ev,
				  &(DAT_COUNT){ 0 });
		if (rc != DAT_SUCCESS) {
			for (unsigned k = 0; k < th->neps; k++)
				if (th->eps[k].connected && !th->eps[k].disconnected)
					return fail(th, "EP %u: DISCONNECTED event missing (%s)",
						    k, dtc_is_timeout(rc) ? "timed out" :
						    "wait failed");
			return fail_dat(th, 0, "dat_evd_wait(disconnect)", rc);
		}
		e = ep_of(th, ev.event_data.connect_event_data.ep_handle);
		if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED || !e)
			return fail(th, "%s for EP %d while disconnecting",
				    dtc_event_name(ev.event_number),
				    e ? (int)e->index : -1);
		if (e->disconnected)
			return fail(th, "EP %u: duplicate DISCONNECTED event", e->index);
		e->disconnected = true;
		pending--;
	}
	/* a late duplicate would be queued by now: the peer's disconnect
	 * and ours have both been processed */
	rc = dat_evd_dequeue(th->conn_evd, &ev);
	if (rc == DAT_SUCCESS) {
		struct tep *e = ep_of(th, ev.event_data.connect_event_data.ep_handle);

		return fail(th, "extra %s for EP %d after the disconnects%s",
			    dtc_event_name(ev.event_number), e ? (int)e->index : -1,
			    ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ?
			    " (duplicate)" : "");
	}
	return 0;
}

static int finish(struct tthread *th)
{
	if (th->me == DT_CLIENT) {
		for (unsigned k = 0; k < th->neps; k++) {
			struct tep *e = &th->eps[k];
			size_t len = dtc_encode_fin(at(e, th->lay->ctl_send), CTL_SIZE);
			DAT_LMR_TRIPLET c = ctl_iov(e, th->lay->ctl_send, len);
			DAT_DTO_COOKIE cookie;
			DAT_RETURN rc;

			cookie.as_64 = COOKIE(K_CTL_SEND, 1, 0);
			rc = dat_ep_post_send(e->ep, 1, &c, cookie,
					      DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS)
				return fail_dat(th, k, "dat_ep_post_send(FIN)", rc);
			/* the server disconnects once it has FIN: this
			 * completion may be reported as FLUSHED */
			if (wait_request(th, e, cookie.as_64, true))
				return -1;
		}
	} else {
		for (unsigned k = 0; k < th->neps; k++) {
			struct tep *e = &th->eps[k];
			struct dt_msg m;
			char err[200];

			if (wait_recv(th, e, COOKIE(K_CTL_RECV, 1, 0), (size_t)-1))
				return -1;
			if (dtc_decode(at(e, th->lay->ctl_recv[1]), DT_MSG_HDR_LEN,
				      &m, err, sizeof(err)) || m.type != DT_MSG_FIN)
				return fail(th, "EP %u: bad FIN: %s", k, err);
		}
		for (unsigned k = 0; k < th->neps; k++) {
			DAT_RETURN rc = dat_ep_disconnect(th->eps[k].ep,
							  DAT_CLOSE_GRACEFUL_FLAG);

			if (rc != DAT_SUCCESS)
				return fail_dat(th, k, "dat_ep_disconnect", rc);
		}
	}
	return collect_disconnects(th);
}

/* Everything a thread does once its EPs exist (and listen). */
static void run_thread(struct tthread *th)
{
	if (th->me == DT_CLIENT ? client_connect(th) : server_accept(th))
		return;
	if (exchange_rmrs(th))
		return;
	if (run_iterations(th))
		return;
	finish(th);
}

static void *client_thread(void *arg)
{
	struct tthread *th = arg;
	bool ok = setup_thread(th) == 0;

	for (unsigned k = 0; ok && k < th->neps; k++)
		ok = setup_ep(th, &th->eps[k]) == 0;
	if (ok)
		run_thread(th);
	teardown_thread(th);
	return NULL;
}

static void *server_thread(void *arg)
{
	struct tthread *th = arg;

	run_thread(th);
	teardown_thread(th);
	return NULL;
}

static struct tthread *alloc_threads(const struct dt_ia *d,
				     const struct dt_trans_args *t,
				     const struct layout *lay, enum dt_who me)
{
	struct tthread *ths = calloc(t->threads, sizeof(*ths));

	if (!ths)
		return NULL;
	for (unsigned n = 0; n < t->threads; n++) {
		struct tthread *th = &ths[n];

		th->d = d;
		th->t = t;
		th->lay = lay;
		th->me = me;
		th->index = n;
		th->neps = t->eps_per_thread;
		th->eps = calloc(th->neps, sizeof(*th->eps));
		if (!th->eps) {
			for (unsigned k = 0; k < n; k++)
				free(ths[k].eps);
			free(ths);
			return NULL;
		}
		for (unsigned k = 0; k < th->neps; k++)
			th->eps[k].index = k;
	}
	return ths;
}

/* Starts every thread (fn), then waits for all; 0 when all passed. */
static int run_threads(struct tthread *ths, unsigned n, void *(*fn)(void *))
{
	int ret = 0;

	for (unsigned k = 0; k < n; k++) {
		if (pthread_create(&ths[k].tid, NULL, fn, &ths[k])) {
			fail(&ths[k], "cannot start a thread");
			if (fn == server_thread)
				teardown_thread(&ths[k]);
			else
				free(ths[k].eps);
			continue;
		}
		ths[k].started = true;
	}
	for (unsigned k = 0; k < n; k++) {
		if (ths[k].started)
			pthread_join(ths[k].tid, NULL);
		if (ths[k].failed)
			ret = -1;
	}
	return ret;
}

/* ------------------------------------------------------------------ */
/* Server side                                                         */
/* ------------------------------------------------------------------ */

int dtc_trans_server(const struct dt_ia *d, struct dt_chan *ctl,
		    const struct dt_request *req, char *text, size_t textlen)
{
	const struct dt_trans_args *t = &req->trans;
	struct layout *lay = malloc(sizeof(*lay));
	struct tthread *ths = NULL;
	uint32_t *quals = NULL;
	unsigned nq = 0;
	int ret = -1;
	size_t len;

	if (lay)
		make_layout(t, DT_SERVER, lay);
	if (lay)
		ths = alloc_threads(d, t, lay, DT_SERVER);
	quals = calloc(DT_MAX_TEST_EPS, sizeof(*quals));
	if (!lay || !ths || !quals) {
		snprintf(text, textlen, "server: out of memory");
		goto refuse;
	}
	/* Every EP exists and listens before the client hears where. */
	for (unsigned n = 0; n < t->threads; n++) {
		struct tthread *th = &ths[n];

		if (setup_thread(th))
			goto setup_failed;
		for (unsigned k = 0; k < th->neps; k++) {
			if (setup_ep(th, &th->eps[k]) || listen_ep(th, &th->eps[k]))
				goto setup_failed;
			quals[nq++] = (uint32_t)th->eps[k].qual;
		}
	}
	len = dtc_encode_reply(dtc_chan_sendbuf(ctl), DT_MSG_MAX, 0, quals, nq, "ready");
	if (dtc_chan_send(ctl, len, false)) {
		snprintf(text, textlen, "server: cannot send the REPLY");
		for (unsigned n = 0; n < t->threads; n++)
			teardown_thread(&ths[n]);
		goto out;
	}
	ret = run_threads(ths, t->threads, server_thread);
	if (ret) {
		for (unsigned n = 0; n < t->threads; n++)
			if (ths[n].failed) {
				snprintf(text, textlen, "server %s", ths[n].err);
				break;
			}
	} else {
		snprintf(text, textlen, "server: %u threads x %u EPs passed",
			 t->threads, t->eps_per_thread);
	}
	goto out;

setup_failed:
	for (unsigned n = 0; n < t->threads; n++)
		if (ths[n].failed) {
			snprintf(text, textlen, "server set-up: %s", ths[n].err);
			break;
		}
	for (unsigned n = 0; n < t->threads; n++)
		teardown_thread(&ths[n]);
refuse:
	len = dtc_encode_reply(dtc_chan_sendbuf(ctl), DT_MSG_MAX, 1, NULL, 0, text);
	dtc_chan_send(ctl, len, true);
out:
	free(quals);
	free(ths);
	free(lay);
	return ret;
}

/* ------------------------------------------------------------------ */
/* Client side                                                         */
/* ------------------------------------------------------------------ */

static void print_stats(const struct dt_trans_args *t, const struct tthread *ths)
{
	static const char *const names[ST_N] = {
		"Total Send      ", "Total Recv      ",
		"Total RDMA Read ", "Total RDMA Write",
	};
	uint64_t count[ST_N] = { 0 }, bytes[ST_N] = { 0 }, total = 0;
	double secs = 0;

	for (unsigned n = 0; n < t->threads; n++) {
		for (unsigned s = 0; s < ST_N; s++) {
			count[s] += ths[n].count[s];
			bytes[s] += ths[n].bytes[s];
		}
		if (ths[n].elapsed > secs)
			secs = ths[n].elapsed;
	}
	for (unsigned s = 0; s < ST_N; s++)
		total += count[s];
	if (secs <= 0)
		secs = 1e-9;
	dtc_log("----- Stats ---- : %u threads, %u EPs, %u iterations\n",
	       t->threads, t->threads * t->eps_per_thread, t->iters);
	dtc_log("Total WQE        : %12.2f WQE/Sec (%" PRIu64 " WQE)\n",
	       (double)total / secs, total);
	dtc_log("Total Time       : %12.2f sec\n", secs);
	for (unsigned s = 0; s < ST_N; s++)
		dtc_log("%s : %12.2f MB - %10.2f MB/Sec - %12.2f WQE/Sec\n",
		       names[s], (double)bytes[s] / (1024.0 * 1024.0),
		       (double)bytes[s] / (1024.0 * 1024.0) / secs,
		       (double)count[s] / secs);
}

int dtc_trans_client(const struct dt_ia *d, const struct dt_params *p,
		    const struct sockaddr *server, const uint32_t *quals)
{
	const struct dt_trans_args *t = &p->trans;
	struct layout *lay = malloc(sizeof(*lay));
	struct tthread *ths;
	int ret;

	if (!lay) {
		dtc_err("out of memory");
		return -1;
	}
	make_layout(t, DT_CLIENT, lay);
	ths = alloc_threads(d, t, lay, DT_CLIENT);
	if (!ths) {
		free(lay);
		dtc_err("out of memory");
		return -1;
	}
	for (unsigned n = 0; n < t->threads; n++) {
		ths[n].server = server;
		ths[n].quals = quals + (size_t)n * t->eps_per_thread;
		ths[n].qos = p->qos;
	}
	ret = run_threads(ths, t->threads, client_thread);
	if (!ret)
		print_stats(t, ths);
	free(ths);
	free(lay);
	return ret;
}
