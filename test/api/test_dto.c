/* Data transfer between two processes over the IA under test (ofi-tcp on
 * 127.0.0.1), through the public API only: sends and receives, RDMA Write
 * and RDMA Read, RMRs and a shared receive queue.
 *
 * The test process is the client.  The server is a forked child that runs
 * the commands the test sends it over a pipe (listen, accept, post a
 * receive, advertise memory, check its memory, ...) and answers with what
 * it saw.  Every transfer carries a byte pattern that the other side checks
 * byte by byte, and the bytes around every segment (the gaps between
 * segments and a guard area behind every registration) must keep the
 * sentinel they were filled with.  Memory the peer may target is advertised
 * the way a consumer would: the server sends its DAT_RMR_TRIPLET in a
 * message over the connection.
 *
 * Every error status a test names is produced for real: a receive buffer
 * too small, RDMA to a wrong rmr_context, outside the bound range or
 * without the privilege, a disconnect with DTOs outstanding.  Waits are
 * bounded (HX_WAIT_US) and the server lives under alarm(). */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "dat_gen.h"	/* <dat/udat.h>, or <dat2/udat.h> with DAT_GEN=2 */

#include "conn_harness.h"

/* ---- memory, patterns and layouts (both processes) -------------------- */

#define MAXSEG 8
#define GAP 61                       /* untouched bytes between segments */
#define SENTINEL 0xA5
#define BIG ((DAT_VLEN)4 << 20)      /* the largest transfer */
/* A data region: registered REGION bytes, then GUARD bytes never registered. */
#define REGION (BIG + (DAT_VLEN)MAXSEG * GAP + 4096)
#define GUARD 4096
/* The control region: triplets sent and received, small messages. */
#define CTL_REGION ((DAT_VLEN)256 << 10)
#define CTL_SEND_OFF 4096            /* where the server's small sends come from */

#define CK(v) ((uint64_t)0xC0DE000000000000ULL | (uint64_t)(v))

/* The byte at stream position i of the message with this seed. */
static unsigned char pat(unsigned seed, uint64_t i)
{
	uint32_t x = (uint32_t)(i + 1) * 2654435761u + seed * 0x9E3779B9u;

	return (unsigned char)(x >> 24);
}

struct layout {
	int n;
	DAT_VLEN total;
	DAT_VLEN off[MAXSEG], len[MAXSEG];
};

/* total bytes in n segments (sizes differ by at most 1) from base on, GAP
 * bytes apart. */
static void make_layout(struct layout *l, int n, DAT_VLEN total, DAT_VLEN base)
{
	DAT_VLEN cur = base;
	int k;

	memset(l, 0, sizeof(*l));
	l->n = n;
	l->total = total;
	for (k = 0; k < n; k++) {
		l->len[k] = total / (DAT_VLEN)n + ((DAT_VLEN)k < total % (DAT_VLEN)n ? 1 : 0);
		l->off[k] = cur;
		cur += l->len[k] + GAP;
	}
}

static void fill_layout(unsigned char *buf, const struct layout *l, unsigned seed)
{
	uint64_t s = 0;
	int k;

	for (k = 0; k < l->n; k++) {
		DAT_VLEN j;

		for (j = 0; j < l->len[k]; j++)
			buf[l->off[k] + j] = pat(seed, s++);
	}
}

/* The first offset in [from, to) that is not the sentinel, else -1. */
static int64_t sentinel_bad(const unsigned char *buf, DAT_VLEN from, DAT_VLEN to)
{
	DAT_VLEN i;

	for (i = from; i < to; i++)
		if (buf[i] != SENTINEL)
			return (int64_t)i;
	return -1;
}

/* The first offset in buf[0, len) that differs from "the layout holds
 * seed's stream (from stream position 0), the sentinel everywhere else";
 * -1 when every byte is right. */
static int64_t layout_bad(const unsigned char *buf, DAT_VLEN len,
			  const struct layout *l, unsigned seed)
{
	DAT_VLEN pos = 0;
	uint64_t s = 0;
	int64_t bad;
	int k;

	for (k = 0; k < l->n; k++) {
		DAT_VLEN j;

		bad = sentinel_bad(buf, pos, l->off[k]);
		if (bad >= 0)
			return bad;
		for (j = 0; j < l->len[k]; j++)
			if (buf[l->off[k] + j] != pat(seed, s++))
				return (int64_t)(l->off[k] + j);
		pos = l->off[k] + l->len[k];
	}
	return sentinel_bad(buf, pos, len);
}

/* Up to two ranges holding patterns, the sentinel everywhere else. */
struct range {
	DAT_VLEN off, len;
	unsigned seed;
};

static int64_t ranges_bad(const unsigned char *buf, DAT_VLEN len,
			  const struct range *r, int n)
{
	struct range sorted[2];
	int64_t bad;
	DAT_VLEN pos = 0, j;
	int k;

	memcpy(sorted, r, sizeof(sorted[0]) * (size_t)n);
	if (n == 2 && sorted[1].off < sorted[0].off) {
		struct range t = sorted[0];

		sorted[0] = sorted[1];
		sorted[1] = t;
	}
	for (k = 0; k < n; k++) {
		if (sorted[k].len == 0 || sorted[k].seed == 0)
			continue;
		bad = sentinel_bad(buf, pos, sorted[k].off);
		if (bad >= 0)
			return bad;
		for (j = 0; j < sorted[k].len; j++)
			if (buf[sorted[k].off + j] != pat(sorted[k].seed, j))
				return (int64_t)(sorted[k].off + j);
		pos = sorted[k].off + sorted[k].len;
	}
	return sentinel_bad(buf, pos, len);
}

/* A registered buffer: reg bytes registered, GUARD more allocated behind. */
struct mem {
	unsigned char *buf;
	DAT_VLEN reg;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static void mem_create(struct hx_ia *x, struct mem *m, DAT_VLEN reg, DAT_MEM_PRIV_FLAGS priv)
{
	DAT_REGION_DESCRIPTION r;
	DAT_VLEN rlen = 0;
	DAT_VADDR raddr = 0;

	memset(m, 0, sizeof(*m));
	m->reg = reg;
	m->buf = malloc((size_t)(reg + GUARD));
	HX_CHECK(m->buf != NULL, "malloc(%llu) failed", (unsigned long long)(reg + GUARD));
	memset(m->buf, SENTINEL, (size_t)(reg + GUARD));
	r.for_va = m->buf;
	HX_OK(dat_lmr_create(x->ia, DAT_MEM_TYPE_VIRTUAL, r, reg, x->pz, priv, &m->lmr,
			     &m->lctx, &m->rctx, &rlen, &raddr));
	HX_CHECK(rlen == reg && raddr == (DAT_VADDR)(uintptr_t)m->buf,
		 "dat_lmr_create registered %llu bytes at %#llx, asked for %llu at %p",
		 (unsigned long long)rlen, (unsigned long long)raddr,
		 (unsigned long long)reg, (void *)m->buf);
}

static void mem_free(struct mem *m)
{
	if (m->lmr)
		HX_OK(dat_lmr_free(m->lmr));
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

static void mem_reset(struct mem *m)
{
	memset(m->buf, SENTINEL, (size_t)(m->reg + GUARD));
}

static DAT_VADDR va(const void *p)
{
	return (DAT_VADDR)(uintptr_t)p;
}

/* The triplets of layout l in m. */
static void make_iov(DAT_LMR_TRIPLET *iov, const struct layout *l, const struct mem *m)
{
	int k;

	for (k = 0; k < l->n; k++) {
		memset(&iov[k], 0, sizeof(iov[k]));
		iov[k].lmr_context = m->lctx;
		iov[k].virtual_address = va(m->buf + l->off[k]);
		iov[k].segment_length = l->len[k];
	}
}

static DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

static const char *status_str(DAT_DTO_COMPLETION_STATUS st)
{
	static __thread char b[4][24];
	static __thread unsigned next;
	char *s;

	switch (st) {
	case DAT_DTO_SUCCESS: return "SUCCESS";
	case DAT_DTO_ERR_FLUSHED: return "ERR_FLUSHED";
	case DAT_DTO_ERR_LOCAL_LENGTH: return "ERR_LOCAL_LENGTH";
	case DAT_DTO_ERR_LOCAL_EP: return "ERR_LOCAL_EP";
	case DAT_DTO_ERR_LOCAL_PROTECTION: return "ERR_LOCAL_PROTECTION";
	case DAT_DTO_ERR_BAD_RESPONSE: return "ERR_BAD_RESPONSE";
	case DAT_DTO_ERR_REMOTE_ACCESS: return "ERR_REMOTE_ACCESS";
	case DAT_DTO_ERR_REMOTE_RESPONDER: return "ERR_REMOTE_RESPONDER";
	case DAT_DTO_ERR_TRANSPORT: return "ERR_TRANSPORT";
	case DAT_DTO_ERR_RECEIVER_NOT_READY: return "ERR_RECEIVER_NOT_READY";
	case DAT_DTO_ERR_PARTIAL_PACKET: return "ERR_PARTIAL_PACKET";
	case DAT_RMR_OPERATION_FAILED: return "RMR_OPERATION_FAILED";
#if DAT_GEN == 2
	case DAT_DTO_ERR_LOCAL_MM_ERROR: return "ERR_LOCAL_MM_ERROR";
#endif
	}
	s = b[next++ % 4];
	snprintf(s, sizeof(b[0]), "status %d", (int)st);
	return s;
}

/* ---- endpoints with an EVD per stream --------------------------------- */

struct dep {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE conn, req, rcv;
};

/* The provider's default EP attributes. */
static void default_attr(struct hx_ia *x, DAT_EP_ATTR *attr)
{
	DAT_EP_HANDLE probe;
	DAT_EP_PARAM p;

	HX_OK(dat_ep_create(x->ia, x->pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL,
			    NULL, &probe));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(probe, DAT_EP_FIELD_EP_ATTR_ALL, &p));
	HX_OK(dat_ep_free(probe));
	*attr = p.ep_attr;
}

/* recv_dtos / req_dtos <= 0: the defaults.  srq: dat_ep_create_with_srq. */
static void dep_create(struct hx_ia *x, struct dep *d, int recv_dtos, int req_dtos,
		       DAT_COMPLETION_FLAGS req_flags, DAT_SRQ_HANDLE srq)
{
	DAT_EP_ATTR attr;

	memset(d, 0, sizeof(*d));
	default_attr(x, &attr);
	if (recv_dtos > 0)
		attr.max_recv_dtos = recv_dtos;
	if (req_dtos > 0)
		attr.max_request_dtos = req_dtos;
	attr.request_completion_flags = req_flags;
	HX_OK(dat_evd_create(x->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &d->conn));
	HX_OK(dat_evd_create(x->ia, attr.max_request_dtos + 16, DAT_HANDLE_NULL,
			     DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG, &d->req));
	HX_OK(dat_evd_create(x->ia, (srq ? 64 : attr.max_recv_dtos) + 16, DAT_HANDLE_NULL,
			     DAT_EVD_DTO_FLAG, &d->rcv));
	if (srq)
		HX_OK(dat_ep_create_with_srq(x->ia, x->pz, d->rcv, d->req, d->conn, srq, &attr,
					     &d->ep));
	else
		HX_OK(dat_ep_create(x->ia, x->pz, d->rcv, d->req, d->conn, &attr, &d->ep));
}

static void dep_free(struct dep *d)
{
	if (d->ep)
		HX_OK(dat_ep_free(d->ep));
	if (d->conn)
		HX_OK(dat_evd_free(d->conn));
	if (d->req)
		HX_OK(dat_evd_free(d->req));
	if (d->rcv)
		HX_OK(dat_evd_free(d->rcv));
	memset(d, 0, sizeof(*d));
}

/* The next event on evd must be a DTO completion of ep; returns its data. */
static void next_dto(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep, DAT_DTO_COMPLETION_EVENT_DATA *d)
{
	DAT_EVENT ev;

	hx_wait(evd, &ev);
	HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT,
		 "got %s, expected a DTO completion", hx_event_str(ev.event_number));
	*d = ev.event_data.dto_completion_event_data;
	HX_CHECK(d->ep_handle == ep, "DTO completion (cookie %#" PRIx64 ") names EP %p, not %p",
		 d->user_cookie.as_64, d->ep_handle, ep);
}

/* The next event on evd: ep's DTO with this cookie, status and (on
 * success) transfered_length. */
static void expect_dto(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep, uint64_t ck,
		       DAT_DTO_COMPLETION_STATUS st, DAT_VLEN len)
{
	DAT_DTO_COMPLETION_EVENT_DATA d;

	next_dto(evd, ep, &d);
	HX_CHECK(d.user_cookie.as_64 == ck,
		 "DTO completion with cookie %#" PRIx64 ", expected %#" PRIx64
		 " (status %s)", d.user_cookie.as_64, ck, status_str(d.status));
	HX_CHECK(d.status == st, "DTO %#" PRIx64 " completed with %s, expected %s",
		 ck, status_str(d.status), status_str(st));
	if (st == DAT_DTO_SUCCESS)
		HX_CHECK(d.transfered_length == len,
			 "DTO %#" PRIx64 ": transfered_length %llu, expected %llu", ck,
			 (unsigned long long)d.transfered_length, (unsigned long long)len);
}

static int max_iov(DAT_EP_HANDLE ep, int *recv_iov)
{
	DAT_EP_PARAM p;

	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV |
			   DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV, &p));
	if (recv_iov)
		*recv_iov = p.ep_attr.max_recv_iov;
	return p.ep_attr.max_request_iov;
}

/* ---- the server process ------------------------------------------------ */

enum {
	/* test -> server */
	S_LISTEN = 1,    /* -> R_VAL {qual} */
	S_ACCEPT,        /* v0 recv_dtos v1 req_dtos v2 req_flags -> R_VAL {ep} */
	S_POST_RECV,     /* v0 ep v1 nseg v2 capacity v3 cookie v4 count v5 reset v6 offset -> R_VAL {rc} */
	S_RECV_WAIT,     /* v0 ep v1 seed (0: no data check) -> R_DTO */
	S_SEND,          /* v0 ep v1 nseg v2 size v3 seed v4 cookie v5 flags -> R_DTO */
	S_EXPOSE,        /* v0 ep v1 mode v2 priv v3 off v4 len v5 fill seed v6 bind flags v7 cookie -> R_EXPOSE */
	S_CHECK,         /* v0 ep v1 done cookie (0: none) v2 off1 v3 len1 v4 seed1 v5 off2 v6 len2 v7 seed2 -> R_VAL {bad} */
	S_WAIT_CONN,     /* v0 ep -> R_VAL {event, state} */
	S_DRAIN,         /* v0 ep v1 count v2 cookie base v3 which (0 recv, 1 request) -> R_VAL {flushed, other, dup, stray, extra} */
	S_DISCONNECT,    /* v0 ep v1 flags -> R_VAL {event, state} */
	S_SRQ_CREATE,    /* v0 max v1 npost v2 size -> R_VAL {rc} */
	S_SRQ_ACCEPT,    /* -> R_VAL {ep, post_recv rc, recv_query rc, nbufs, span, srq_handle ok} */
	S_SRQ_EXPECT,    /* v0 ep v1 size v2 seed -> R_VAL {cookie, status, len, bad, available, outstanding, query rc} */
	S_SRQ_POST,      /* v0 n v1 size -> R_VAL {rc} */
	S_SRQ_LW,        /* v0 lw -> R_VAL {rc} */
	S_SRQ_ASYNC,     /* v0 wait -> R_VAL {got, event, handle is srq, reason} */
	S_SRQ_RESIZE,    /* v0 n -> R_VAL {rc, max_recv_dtos after} */
	S_SRQ_QUERY,     /* -> R_VAL {rc, state, max, iov, lw, available, outstanding, ia+pz ok} */
	S_SRQ_FREE_TRY,  /* -> R_VAL {rc} */
	S_QUIT,

	/* server -> test */
	R_VAL = 50,
	R_DTO,           /* {cookie, status, len, bad, evd ok} */
	R_EXPOSE,        /* {ctx, addr, len, bind status, advert cookie ok} */
};

/* S_EXPOSE modes */
enum { E_DATA, E_NEW_LMR, E_RMR, E_REBIND, E_UNBIND,
       E_OTHER_PZ };    /* a new LMR, in a PZ no EP of the server uses */

#define SRV_EPS 6
#define SRQ_SLOTS 96
#define SRQ_SLOT_SIZE 4096

struct server {
	struct hx_peer *peer;
	struct hx_ia x;
	struct mem data, ctl;
	DAT_PSP_HANDLE psp;
	struct dep eps[SRV_EPS];
	int neps;
	struct layout rl;             /* the last receive posted by S_POST_RECV */
	DAT_LMR_HANDLE extra[8];
	int nextra;
	DAT_PZ_HANDLE pz2;            /* E_OTHER_PZ's */
	DAT_RMR_HANDLE rmr;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_SRQ_HANDLE srq;
	struct mem srqmem;
	int srq_next;                 /* next slot to post */
	int srq_seen[SRQ_SLOTS];
};

static void reply(struct server *s, int tag, int64_t a, int64_t b, int64_t c, int64_t d,
		  int64_t e, int64_t f, int64_t g, int64_t h)
{
	int64_t v[8] = { a, b, c, d, e, f, g, h };

	hx_send(s->peer, tag, v, 8, NULL, 0);
}

static struct dep *srv_ep(struct server *s, int64_t i)
{
	HX_CHECK(i >= 0 && i < s->neps, "server has no EP %d", (int)i);
	return &s->eps[i];
}

static void do_listen(struct server *s)
{
	DAT_CONN_QUAL qual;

	HX_CHECK(s->psp == DAT_HANDLE_NULL, "already listening");
	s->psp = hx_psp_any(&s->x, DAT_PSP_CONSUMER_FLAG, &qual);
	reply(s, R_VAL, (int64_t)qual, 0, 0, 0, 0, 0, 0, 0);
}

static int srv_accept_into(struct server *s, int recv_dtos, int req_dtos,
			   DAT_COMPLETION_FLAGS req_flags, DAT_SRQ_HANDLE srq)
{
	DAT_CR_HANDLE cr = hx_wait_cr(s->x.cr, NULL);
	struct dep *d;

	HX_CHECK(s->neps < SRV_EPS, "too many server EPs");
	d = &s->eps[s->neps];
	dep_create(&s->x, d, recv_dtos, req_dtos, req_flags, srq);
	HX_OK(dat_cr_accept(cr, d->ep, 0, NULL));
	hx_expect_event(d->conn, DAT_CONNECTION_EVENT_ESTABLISHED, d->ep, NULL);
	return s->neps++;
}

static void do_accept(struct server *s, const struct hx_msg *m)
{
	int i = srv_accept_into(s, (int)m->v[0], (int)m->v[1], (DAT_COMPLETION_FLAGS)m->v[2],
				DAT_HANDLE_NULL);

	reply(s, R_VAL, i, 0, 0, 0, 0, 0, 0, 0);
}

static void do_post_recv(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	DAT_LMR_TRIPLET iov[MAXSEG];
	DAT_RETURN rc = DAT_SUCCESS;
	int n = (int)m->v[1], j;

	HX_CHECK(n >= 0 && n <= MAXSEG, "nseg %d", n);
	if (m->v[5])
		mem_reset(&s->data);
	HX_CHECK((DAT_VLEN)m->v[6] + (DAT_VLEN)m->v[2] + MAXSEG * GAP <= s->data.reg,
		 "receive beyond the data region");
	make_layout(&s->rl, n, (DAT_VLEN)m->v[2], (DAT_VLEN)m->v[6]);
	make_iov(iov, &s->rl, &s->data);
	for (j = 0; j < (int)m->v[4] && rc == DAT_SUCCESS; j++)
		rc = dat_ep_post_recv(d->ep, n, n ? iov : NULL,
				      cookie((uint64_t)m->v[3] + (uint64_t)j),
				      DAT_COMPLETION_DEFAULT_FLAG);
	reply(s, R_VAL, rc, j, 0, 0, 0, 0, 0, 0);
}

static void do_recv_wait(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	DAT_DTO_COMPLETION_EVENT_DATA e;
	int64_t bad = -1;

	next_dto(d->rcv, d->ep, &e);
	if (m->v[1] && e.status == DAT_DTO_SUCCESS)
		bad = layout_bad(s->data.buf, s->data.reg + GUARD, &s->rl, (unsigned)m->v[1]);
	reply(s, R_DTO, (int64_t)e.user_cookie.as_64, e.status, (int64_t)e.transfered_length,
	      bad, 0, 0, 0, 0);
}

static void do_send(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	DAT_LMR_TRIPLET iov[MAXSEG];
	DAT_DTO_COMPLETION_EVENT_DATA e;
	struct layout l;
	int n = (int)m->v[1];

	HX_CHECK(n >= 0 && n <= MAXSEG && (DAT_VLEN)m->v[2] <= CTL_REGION / 2, "send %d/%d",
		 n, (int)m->v[2]);
	make_layout(&l, n, (DAT_VLEN)m->v[2], CTL_SEND_OFF);
	fill_layout(s->ctl.buf, &l, (unsigned)m->v[3]);
	make_iov(iov, &l, &s->ctl);
	HX_OK(dat_ep_post_send(d->ep, n, n ? iov : NULL, cookie((uint64_t)m->v[4]),
			       (DAT_COMPLETION_FLAGS)m->v[5]));
	memset(&e, 0, sizeof(e));
	if (!((DAT_COMPLETION_FLAGS)m->v[5] & DAT_COMPLETION_SUPPRESS_FLAG))
		next_dto(d->req, d->ep, &e);
	reply(s, R_DTO, (int64_t)e.user_cookie.as_64, e.status, (int64_t)e.transfered_length,
	      -1, 0, 0, 0, 0);
}

/* Advertises [off, off + len) of the data region: the DAT_RMR_TRIPLET goes
 * to the client in a message over the connection. */
static void do_expose(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	int mode = (int)m->v[1];
	DAT_MEM_PRIV_FLAGS priv = (DAT_MEM_PRIV_FLAGS)m->v[2];
	DAT_VLEN off = (DAT_VLEN)m->v[3], len = (DAT_VLEN)m->v[4];
	unsigned seed = (unsigned)m->v[5];
	DAT_COMPLETION_FLAGS bflags = (DAT_COMPLETION_FLAGS)m->v[6];
	DAT_RMR_COOKIE bcookie;
	DAT_RMR_TRIPLET *adv = (DAT_RMR_TRIPLET *)s->ctl.buf;
	DAT_LMR_TRIPLET t;
	DAT_RMR_CONTEXT ctx = 0;
	DAT_EVENT ev;
	int64_t bind_status = -1;

	HX_CHECK(off + len <= s->data.reg, "expose beyond the data region");
	bcookie.as_64 = (uint64_t)m->v[7];
	if (mode != E_REBIND && mode != E_UNBIND) {
		DAT_VLEN j;

		mem_reset(&s->data);
		if (seed)
			for (j = 0; j < len; j++)
				s->data.buf[off + j] = pat(seed, j);
	}
	switch (mode) {
	case E_DATA:
		ctx = s->data.rctx;
		break;
	case E_NEW_LMR:
	case E_OTHER_PZ: {
		DAT_REGION_DESCRIPTION r;

		HX_CHECK(s->nextra < 8, "too many LMRs");
		if (mode == E_OTHER_PZ && !s->pz2)
			HX_OK(dat_pz_create(s->x.ia, &s->pz2));
		r.for_va = s->data.buf + off;
		HX_OK(dat_lmr_create(s->x.ia, DAT_MEM_TYPE_VIRTUAL, r, len,
				     mode == E_OTHER_PZ ? s->pz2 : s->x.pz, priv,
				     &s->extra[s->nextra++], NULL, &ctx, NULL, NULL));
		break;
	}
	case E_RMR:
	case E_REBIND:
	case E_UNBIND: {
		DAT_RMR_PARAM rp;
		DAT_RMR_CONTEXT old = s->rmr_ctx;
		DAT_RETURN qrc;

		if (mode == E_RMR) {
			HX_CHECK(s->rmr == DAT_HANDLE_NULL, "RMR exists already");
			HX_OK(dat_rmr_create(s->x.pz, &s->rmr));
		} else {
			HX_CHECK(s->rmr != DAT_HANDLE_NULL, "no RMR to rebind");
		}
		memset(&t, 0, sizeof(t));
		t.lmr_context = s->data.lctx;
		t.virtual_address = va(s->data.buf + off);
		t.segment_length = mode == E_UNBIND ? 0 : len;
		HX_OK(dat_rmr_bind(s->rmr, &t, priv, d->ep, bcookie, bflags, &ctx));
		if (!(bflags & DAT_COMPLETION_SUPPRESS_FLAG)) {
			hx_wait(d->req, &ev);
			HX_CHECK(ev.event_number == DAT_RMR_BIND_COMPLETION_EVENT,
				 "after dat_rmr_bind: %s on the request EVD, expected "
				 "RMR_BIND_COMPLETION", hx_event_str(ev.event_number));
			HX_CHECK(ev.event_data.rmr_completion_event_data.rmr_handle == s->rmr,
				 "bind completion names RMR %p, not %p",
				 ev.event_data.rmr_completion_event_data.rmr_handle, s->rmr);
			HX_CHECK(ev.event_data.rmr_completion_event_data.user_cookie.as_64 ==
				 bcookie.as_64, "bind completion cookie %#" PRIx64
				 ", expected %#" PRIx64,
				 ev.event_data.rmr_completion_event_data.user_cookie.as_64,
				 bcookie.as_64);
			bind_status = ev.event_data.rmr_completion_event_data.status;
			HX_CHECK(bind_status == DAT_DTO_SUCCESS, "bind completed with %s",
				 status_str((DAT_DTO_COMPLETION_STATUS)bind_status));
		}
		memset(&rp, 0, sizeof(rp));
		qrc = dat_rmr_query(s->rmr, DAT_RMR_FIELD_ALL, &rp);
		HX_OK(qrc);
		HX_CHECK(rp.ia_handle == s->x.ia && rp.pz_handle == s->x.pz,
			 "dat_rmr_query: IA %p PZ %p, expected %p %p", rp.ia_handle,
			 rp.pz_handle, s->x.ia, s->x.pz);
		if (mode != E_UNBIND) {
			HX_CHECK(rp.lmr_triplet.lmr_context == t.lmr_context &&
				 rp.lmr_triplet.virtual_address == t.virtual_address &&
				 rp.lmr_triplet.segment_length == t.segment_length,
				 "dat_rmr_query: bound triplet {%u, %#llx, %llu}, bound {%u, %#llx, %llu}",
				 rp.lmr_triplet.lmr_context,
				 (unsigned long long)rp.lmr_triplet.virtual_address,
				 (unsigned long long)rp.lmr_triplet.segment_length, t.lmr_context,
				 (unsigned long long)t.virtual_address,
				 (unsigned long long)t.segment_length);
			HX_CHECK(rp.mem_priv == priv, "dat_rmr_query: mem_priv %#x, bound with %#x",
				 (unsigned)rp.mem_priv, (unsigned)priv);
			HX_CHECK(rp.rmr_context == ctx, "dat_rmr_query: rmr_context %#x, bind gave %#x",
				 rp.rmr_context, ctx);
			if (mode == E_REBIND)
				HX_CHECK(ctx != old, "a rebind kept rmr_context %#x", ctx);
		}
		s->rmr_ctx = ctx;
		break;
	}
	default:
		HX_CHECK(0, "bad expose mode %d", mode);
	}
	if (mode != E_UNBIND) {
		DAT_LMR_TRIPLET iov;
		DAT_DTO_COMPLETION_EVENT_DATA e;

		memset(adv, 0, sizeof(*adv));
		adv->rmr_context = ctx;
		adv->HX_RMR_ADDR = va(s->data.buf + off);
		adv->segment_length = len;
		memset(&iov, 0, sizeof(iov));
		iov.lmr_context = s->ctl.lctx;
		iov.virtual_address = va(adv);
		iov.segment_length = sizeof(*adv);
		HX_OK(dat_ep_post_send(d->ep, 1, &iov, cookie(CK(0xAD)), DAT_COMPLETION_DEFAULT_FLAG));
		/* A suppressed bind leaves no event: the first one is the send's. */
		next_dto(d->req, d->ep, &e);
		HX_CHECK(e.user_cookie.as_64 == CK(0xAD) && e.status == DAT_DTO_SUCCESS,
			 "sending the triplet: cookie %#" PRIx64 " %s", e.user_cookie.as_64,
			 status_str(e.status));
	}
	reply(s, R_EXPOSE, ctx, (int64_t)va(s->data.buf + off), (int64_t)len, bind_status, 0, 0,
	      0, 0);
}

static void do_check(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	struct range r[2];

	if (m->v[1]) {
		DAT_DTO_COMPLETION_EVENT_DATA e;

		next_dto(d->rcv, d->ep, &e);
		HX_CHECK(e.user_cookie.as_64 == (uint64_t)m->v[1] && e.status == DAT_DTO_SUCCESS,
			 "waiting for the 'done' message: cookie %#" PRIx64 " %s, expected %#"
			 PRIx64 " SUCCESS", e.user_cookie.as_64, status_str(e.status),
			 (uint64_t)m->v[1]);
	}
	r[0].off = (DAT_VLEN)m->v[2];
	r[0].len = (DAT_VLEN)m->v[3];
	r[0].seed = (unsigned)m->v[4];
	r[1].off = (DAT_VLEN)m->v[5];
	r[1].len = (DAT_VLEN)m->v[6];
	r[1].seed = (unsigned)m->v[7];
	reply(s, R_VAL, ranges_bad(s->data.buf, s->data.reg + GUARD, r, 2), 0, 0, 0, 0, 0, 0, 0);
}

static void do_wait_conn(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	DAT_EVENT ev;

	hx_wait(d->conn, &ev);
	HX_CHECK(ev.event_data.connect_event_data.ep_handle == d->ep,
		 "%s names EP %p, not %p", hx_event_str(ev.event_number),
		 ev.event_data.connect_event_data.ep_handle, d->ep);
	reply(s, R_VAL, ev.event_number, hx_state(d->ep), 0, 0, 0, 0, 0, 0);
}

/* Dequeues count completions from an EVD; cookies base .. base+count-1 must
 * each come exactly once. */
struct tally {
	int flushed, other, dup, stray, extra;
	int succeeded;          /* of other: DAT_DTO_SUCCESS */
	uint64_t first_other;
	DAT_DTO_COMPLETION_STATUS other_status;
};

static void drain(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep, int count, uint64_t base,
		  struct tally *t)
{
	unsigned char *seen = calloc((size_t)count + 1, 1);
	DAT_EVENT ev;
	int i;

	HX_CHECK(seen != NULL, "calloc");
	memset(t, 0, sizeof(*t));
	for (i = 0; i < count; i++) {
		DAT_DTO_COMPLETION_EVENT_DATA e;
		uint64_t c;

		next_dto(evd, ep, &e);
		c = e.user_cookie.as_64;
		if (c < base || c >= base + (uint64_t)count) {
			t->stray++;
			continue;
		}
		if (seen[c - base]++)
			t->dup++;
		if (e.status == DAT_DTO_ERR_FLUSHED) {
			t->flushed++;
		} else {
			if (!t->other) {
				t->first_other = c;
				t->other_status = e.status;
			}
			t->other++;
			if (e.status == DAT_DTO_SUCCESS)
				t->succeeded++;
		}
	}
	free(seen);
	while (dat_evd_dequeue(evd, &ev) == DAT_SUCCESS)
		t->extra++;
}

static void do_drain(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	struct tally t;

	drain(m->v[3] ? d->req : d->rcv, d->ep, (int)m->v[1], (uint64_t)m->v[2], &t);
	reply(s, R_VAL, t.flushed, t.other, t.dup, t.stray, t.extra, t.other_status, 0, 0);
}

static void do_disconnect(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	DAT_EVENT ev;

	HX_OK(dat_ep_disconnect(d->ep, (DAT_CLOSE_FLAGS)m->v[1]));
	hx_wait(d->conn, &ev);
	reply(s, R_VAL, ev.event_number, hx_state(d->ep), 0, 0, 0, 0, 0, 0);
}

/* ---- the server's SRQ --------------------------------------------------- */

static DAT_RETURN srq_post(struct server *s, int n, DAT_VLEN size)
{
	DAT_RETURN rc = DAT_SUCCESS;
	int i;

	for (i = 0; i < n && rc == DAT_SUCCESS; i++) {
		DAT_LMR_TRIPLET iov;
		int slot = s->srq_next;

		HX_CHECK(slot < SRQ_SLOTS && size <= SRQ_SLOT_SIZE, "SRQ slot %d", slot);
		memset(&iov, 0, sizeof(iov));
		iov.lmr_context = s->srqmem.lctx;
		iov.virtual_address = va(s->srqmem.buf + (size_t)slot * SRQ_SLOT_SIZE);
		iov.segment_length = size;
		rc = dat_srq_post_recv(s->srq, 1, &iov, cookie(CK(slot)));
		if (rc == DAT_SUCCESS)
			s->srq_next++;
	}
	return rc;
}

static void do_srq_create(struct server *s, const struct hx_msg *m)
{
	DAT_SRQ_ATTR a;
	DAT_RETURN rc;

	mem_create(&s->x, &s->srqmem, (DAT_VLEN)SRQ_SLOTS * SRQ_SLOT_SIZE,
		   DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	memset(&a, 0, sizeof(a));
	a.max_recv_dtos = (DAT_COUNT)m->v[0];
	a.max_recv_iov = 1;
	a.low_watermark = DAT_SRQ_LW_DEFAULT;
	rc = dat_srq_create(s->x.ia, s->x.pz, &a, &s->srq);
	if (rc != DAT_SUCCESS) {
		s->srq = DAT_HANDLE_NULL;
		reply(s, R_VAL, rc, 0, 0, 0, 0, 0, 0, 0);
		return;
	}
	rc = srq_post(s, (int)m->v[1], (DAT_VLEN)m->v[2]);
	reply(s, R_VAL, rc, 0, 0, 0, 0, 0, 0, 0);
}

static void do_srq_accept(struct server *s)
{
	DAT_LMR_TRIPLET iov;
	DAT_EP_PARAM p;
	DAT_COUNT nbufs = -1, span = -1;
	DAT_RETURN prc, qrc;
	struct dep *d;
	int i;

	HX_CHECK(s->srq != DAT_HANDLE_NULL, "no SRQ");
	i = srv_accept_into(s, 0, 0, DAT_COMPLETION_DEFAULT_FLAG, s->srq);
	d = &s->eps[i];
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(d->ep, DAT_EP_FIELD_SRQ_HANDLE, &p));
	memset(&iov, 0, sizeof(iov));
	iov.lmr_context = s->srqmem.lctx;
	iov.virtual_address = va(s->srqmem.buf);
	iov.segment_length = 16;
	prc = dat_ep_post_recv(d->ep, 1, &iov, cookie(CK(0xBAD)), DAT_COMPLETION_DEFAULT_FLAG);
	qrc = dat_ep_recv_query(d->ep, &nbufs, &span);
	reply(s, R_VAL, i, prc, qrc, nbufs, span, p.srq_handle == s->srq, 0, 0);
}

static void srq_counts(struct server *s, DAT_RETURN *rc, DAT_SRQ_PARAM *p)
{
	memset(p, 0, sizeof(*p));
	*rc = dat_srq_query(s->srq, DAT_SRQ_FIELD_ALL, p);
}

static void do_srq_expect(struct server *s, const struct hx_msg *m)
{
	struct dep *d = srv_ep(s, m->v[0]);
	DAT_DTO_COMPLETION_EVENT_DATA e;
	DAT_SRQ_PARAM p;
	DAT_RETURN qrc;
	int64_t bad = -1;
	uint64_t slot;

	next_dto(d->rcv, d->ep, &e);
	slot = e.user_cookie.as_64 - CK(0);
	if (e.status == DAT_DTO_SUCCESS && slot < SRQ_SLOTS) {
		const unsigned char *b = s->srqmem.buf + slot * SRQ_SLOT_SIZE;
		DAT_VLEN j;

		HX_CHECK(!s->srq_seen[slot], "SRQ receive %d completed twice", (int)slot);
		s->srq_seen[slot] = 1;
		for (j = 0; j < (DAT_VLEN)m->v[1] && bad < 0; j++)
			if (b[j] != pat((unsigned)m->v[2], j))
				bad = (int64_t)j;
	}
	srq_counts(s, &qrc, &p);
	reply(s, R_VAL, (int64_t)e.user_cookie.as_64, e.status, (int64_t)e.transfered_length,
	      bad, p.available_dto_count, p.outstanding_dto_count, qrc, 0);
}

static void do_srq_async(struct server *s, const struct hx_msg *m)
{
	DAT_EVENT ev;
	DAT_RETURN rc;
	DAT_COUNT nmore;

	memset(&ev, 0, sizeof(ev));
	if (m->v[0])
		rc = dat_evd_wait(s->x.async, HX_WAIT_US, 1, &ev, &nmore);
	else
		rc = dat_evd_dequeue(s->x.async, &ev);
	if (rc != DAT_SUCCESS) {
		reply(s, R_VAL, 0, rc, 0, 0, 0, 0, 0, 0);
		return;
	}
	reply(s, R_VAL, 1, ev.event_number,
	      ev.event_data.asynch_error_event_data.dat_handle == s->srq,
	      ev.event_data.asynch_error_event_data.reason, 0, 0, 0, 0);
}

static void do_srq_query(struct server *s)
{
	DAT_SRQ_PARAM p;
	DAT_RETURN rc;

	srq_counts(s, &rc, &p);
	reply(s, R_VAL, rc, p.srq_state, p.max_recv_dtos, p.max_recv_iov, p.low_watermark,
	      p.available_dto_count, p.outstanding_dto_count,
	      p.ia_handle == s->x.ia && p.pz_handle == s->x.pz);
}

static void srv_cleanup(struct server *s)
{
	int i;

	for (i = 0; i < s->neps; i++)
		dep_free(&s->eps[i]);
	if (s->rmr)
		HX_OK(dat_rmr_free(s->rmr));
	for (i = 0; i < s->nextra; i++)
		HX_OK(dat_lmr_free(s->extra[i]));
	if (s->pz2)
		HX_OK(dat_pz_free(s->pz2));
	if (s->srq)
		HX_OK(dat_srq_free(s->srq));
	if (s->srqmem.buf)
		mem_free(&s->srqmem);
	mem_free(&s->data);
	mem_free(&s->ctl);
	if (s->psp)
		HX_OK(dat_psp_free(s->psp));
	hx_ia_close(&s->x);
}

static void server_main(struct hx_peer *self, void *arg)
{
	struct server *s = calloc(1, sizeof(*s));
	struct hx_msg m;
	DAT_RETURN rc;

	(void)arg;
	HX_CHECK(s != NULL, "calloc");
	s->peer = self;
	hx_ia_open(&s->x);
	mem_create(&s->x, &s->data, REGION, DAT_MEM_PRIV_ALL_FLAG);
	mem_create(&s->x, &s->ctl, CTL_REGION, DAT_MEM_PRIV_ALL_FLAG);
	for (;;) {
		hx_recv(self, &m);
		switch (m.tag) {
		case S_LISTEN: do_listen(s); break;
		case S_ACCEPT: do_accept(s, &m); break;
		case S_POST_RECV: do_post_recv(s, &m); break;
		case S_RECV_WAIT: do_recv_wait(s, &m); break;
		case S_SEND: do_send(s, &m); break;
		case S_EXPOSE: do_expose(s, &m); break;
		case S_CHECK: do_check(s, &m); break;
		case S_WAIT_CONN: do_wait_conn(s, &m); break;
		case S_DRAIN: do_drain(s, &m); break;
		case S_DISCONNECT: do_disconnect(s, &m); break;
		case S_SRQ_CREATE: do_srq_create(s, &m); break;
		case S_SRQ_ACCEPT: do_srq_accept(s); break;
		case S_SRQ_EXPECT: do_srq_expect(s, &m); break;
		case S_SRQ_POST:
			rc = srq_post(s, (int)m.v[0], (DAT_VLEN)m.v[1]);
			reply(s, R_VAL, rc, 0, 0, 0, 0, 0, 0, 0);
			break;
		case S_SRQ_LW:
			rc = dat_srq_set_lw(s->srq, (DAT_COUNT)m.v[0]);
			reply(s, R_VAL, rc, 0, 0, 0, 0, 0, 0, 0);
			break;
		case S_SRQ_ASYNC: do_srq_async(s, &m); break;
		case S_SRQ_RESIZE: {
			DAT_SRQ_PARAM p;
			DAT_RETURN qrc;

			rc = dat_srq_resize(s->srq, (DAT_COUNT)m.v[0]);
			srq_counts(s, &qrc, &p);
			HX_OK(qrc);
			reply(s, R_VAL, rc, p.max_recv_dtos, 0, 0, 0, 0, 0, 0);
			break;
		}
		case S_SRQ_QUERY: do_srq_query(s); break;
		case S_SRQ_FREE_TRY:
			rc = dat_srq_free(s->srq);
			if (rc == DAT_SUCCESS)
				s->srq = DAT_HANDLE_NULL;
			reply(s, R_VAL, rc, 0, 0, 0, 0, 0, 0, 0);
			break;
		case S_QUIT:
			srv_cleanup(s);
			free(s);
			return;
		default:
			HX_CHECK(0, "unknown command %d", (int)m.tag);
		}
	}
}

/* ---- the test process's side -------------------------------------------- */

static struct hx_peer srv;
static struct hx_ia cli;

/* Whether the client IA's adapter name starts with prefix (a device's
 * documented quirk, not a provider's behaviour). */
static int adapter_is(const char *prefix)
{
	DAT_IA_ATTR ia;

	memset(&ia, 0, sizeof(ia));
	HX_OK(dat_ia_query(cli.ia, NULL, DAT_IA_FIELD_IA_ADAPTER_NAME, &ia, 0, NULL));
	return strncmp(ia.adapter_name, prefix, strlen(prefix)) == 0;
}

/* Whether the client IA's provider does RDMA in the peer's process (ofi's
 * tcp: a stopped peer answers no RDMA Read), rather than in the device. */
static int rdma_needs_peer_process(void)
{
	return hx_is_ofi_tcp();
}
static struct mem cdata, cctl;

/* The server process first: nothing of libdat may exist before fork. */
static void start(void)
{
	hx_spawn(&srv, "server", server_main, NULL);
	hx_ia_open(&cli);
	mem_create(&cli, &cdata, REGION, DAT_MEM_PRIV_ALL_FLAG);
	mem_create(&cli, &cctl, CTL_REGION, DAT_MEM_PRIV_ALL_FLAG);
}

static void finish(void)
{
	hx_send(&srv, S_QUIT, NULL, 0, NULL, 0);
	hx_reap(&srv);
	mem_free(&cdata);
	mem_free(&cctl);
	hx_ia_close(&cli);
}

static void cmd(int tag, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e, int64_t f,
		int64_t g, int64_t h)
{
	int64_t v[8] = { a, b, c, d, e, f, g, h };

	hx_send(&srv, tag, v, 8, NULL, 0);
}

static void answer(int tag, struct hx_msg *m)
{
	hx_expect_msg(&srv, tag, m);
}

/* The server listens; the client's EP e connects and the server accepts
 * on an EP with these limits.  Returns the server's EP index. */
static DAT_CONN_QUAL qual;

static void srv_listen_once(void)
{
	struct hx_msg m;

	if (qual)
		return;
	cmd(S_LISTEN, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	qual = (DAT_CONN_QUAL)m.v[0];
}

static int connect_to_server(struct dep *e, int srv_recv_dtos, int srv_req_dtos)
{
	struct hx_msg m;
	struct sockaddr_in sa;

	srv_listen_once();
	hx_loopback(&sa);
	HX_OK(dat_ep_connect(e->ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	cmd(S_ACCEPT, srv_recv_dtos, srv_req_dtos, DAT_COMPLETION_DEFAULT_FLAG, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	hx_expect_event(e->conn, DAT_CONNECTION_EVENT_ESTABLISHED, e->ep, NULL);
	return (int)m.v[0];
}

static void srv_post_recv_at(int ep, int nseg, DAT_VLEN cap, uint64_t ck, int count, int reset,
			     DAT_VLEN off)
{
	struct hx_msg m;

	cmd(S_POST_RECV, ep, nseg, (int64_t)cap, (int64_t)ck, count, reset, (int64_t)off, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], DAT_SUCCESS);
}

static void srv_post_recv_n(int ep, int nseg, DAT_VLEN cap, uint64_t ck, int count, int reset)
{
	srv_post_recv_at(ep, nseg, cap, ck, count, reset, 0);
}

struct rdto {
	uint64_t cookie;
	DAT_DTO_COMPLETION_STATUS status;
	DAT_VLEN len;
	int64_t bad;
};

static void srv_recv_wait(int ep, unsigned seed, struct rdto *r)
{
	struct hx_msg m;

	cmd(S_RECV_WAIT, ep, seed, 0, 0, 0, 0, 0, 0);
	answer(R_DTO, &m);
	r->cookie = (uint64_t)m.v[0];
	r->status = (DAT_DTO_COMPLETION_STATUS)m.v[1];
	r->len = (DAT_VLEN)m.v[2];
	r->bad = m.v[3];
}

/* The server's receive completed with this cookie, status and length and
 * (seed != 0) the data is right. */
static void srv_expect_recv(int ep, uint64_t ck, DAT_DTO_COMPLETION_STATUS st, DAT_VLEN len,
			    unsigned seed, const char *what)
{
	struct rdto r;

	srv_recv_wait(ep, seed, &r);
	ck_assert_msg(r.cookie == ck, "%s: the server's receive completed with cookie %#"
		      PRIx64 ", expected %#" PRIx64, what, r.cookie, ck);
	ck_assert_msg(r.status == st, "%s: the server's receive completed with %s, expected %s",
		      what, status_str(r.status), status_str(st));
	if (st == DAT_DTO_SUCCESS)
		ck_assert_msg(r.len == len, "%s: the server received %llu bytes, expected %llu",
			      what, (unsigned long long)r.len, (unsigned long long)len);
	if (seed)
		ck_assert_msg(r.bad < 0, "%s: the server's receive buffer is wrong at offset %"
			      PRId64 " (data or the untouched bytes around it)", what, r.bad);
}

/* Client: receives the triplet the server advertises (mode etc. as
 * S_EXPOSE); checks it matches what the server says over the pipe. */
struct adv {
	DAT_RMR_TRIPLET t;
	int64_t bind_status;
};

static void srv_expose(struct dep *e, int sep, int mode, DAT_MEM_PRIV_FLAGS priv,
		       DAT_VLEN off, DAT_VLEN len, unsigned seed, DAT_COMPLETION_FLAGS bflags,
		       uint64_t bcookie, struct adv *a)
{
	DAT_RMR_TRIPLET *got = (DAT_RMR_TRIPLET *)cctl.buf;
	DAT_LMR_TRIPLET iov;
	struct hx_msg m;

	memset(a, 0, sizeof(*a));
	if (mode != E_UNBIND) {
		memset(got, 0, sizeof(*got));
		memset(&iov, 0, sizeof(iov));
		iov.lmr_context = cctl.lctx;
		iov.virtual_address = va(got);
		iov.segment_length = sizeof(*got);
		HX_OK(dat_ep_post_recv(e->ep, 1, &iov, cookie(CK(0xAD1)),
				       DAT_COMPLETION_DEFAULT_FLAG));
	}
	cmd(S_EXPOSE, sep, mode, priv, (int64_t)off, (int64_t)len, seed, bflags, (int64_t)bcookie);
	answer(R_EXPOSE, &m);
	a->bind_status = m.v[3];
	if (mode == E_UNBIND)
		return;
	expect_dto(e->rcv, e->ep, CK(0xAD1), DAT_DTO_SUCCESS, sizeof(*got));
	ck_assert_msg(got->rmr_context == (DAT_RMR_CONTEXT)m.v[0] &&
		      got->HX_RMR_ADDR == (DAT_VADDR)m.v[1] &&
		      got->segment_length == (DAT_VLEN)m.v[2],
		      "the advertised triplet {%#x, %#llx, %llu} differs from the server's "
		      "{%#x, %#llx, %llu}", got->rmr_context,
		      (unsigned long long)got->HX_RMR_ADDR,
		      (unsigned long long)got->segment_length, (unsigned)m.v[0],
		      (unsigned long long)m.v[1], (unsigned long long)m.v[2]);
	a->t = *got;
}

/* The server checks its data region: the ranges hold their patterns, every
 * other byte (guard included) the sentinel.  done: first wait for the
 * client's 'done' message with that cookie. */
static int64_t srv_check(int sep, uint64_t done, DAT_VLEN off1, DAT_VLEN len1, unsigned seed1,
			 DAT_VLEN off2, DAT_VLEN len2, unsigned seed2)
{
	struct hx_msg m;

	cmd(S_CHECK, sep, (int64_t)done, (int64_t)off1, (int64_t)len1, seed1, (int64_t)off2,
	    (int64_t)len2, seed2);
	answer(R_VAL, &m);
	return m.v[0];
}

static DAT_EVENT_NUMBER srv_wait_conn(int sep, int *state)
{
	struct hx_msg m;

	cmd(S_WAIT_CONN, sep, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	if (state)
		*state = (int)m.v[1];
	return (DAT_EVENT_NUMBER)m.v[0];
}

/* A 0-byte 'done' message after RDMA Writes (it arrives after them). */
#define DONE_COOKIE CK(0xD0E)

static void post_done_recv(int sep)
{
	srv_post_recv_n(sep, 0, 0, DONE_COOKIE, 1, 0);
}

static void send_done(struct dep *e, uint64_t ck)
{
	HX_OK(dat_ep_post_send(e->ep, 0, NULL, cookie(ck), DAT_COMPLETION_DEFAULT_FLAG));
}

/* The client EP: default attributes unless given. */
static void client_ep(struct dep *e, int recv_dtos, int req_dtos, DAT_COMPLETION_FLAGS flags)
{
	dep_create(&cli, e, recv_dtos, req_dtos, flags, DAT_HANDLE_NULL);
}

/* The connection of e ended: the event it got (naming e), after which e
 * is DISCONNECTED.  Tests check which event it was last, so a wrong kind
 * of end does not hide their other findings. */
static DAT_EVENT_NUMBER conn_end(struct dep *e)
{
	DAT_EVENT ev;

	hx_wait(e->conn, &ev);
	ck_assert_msg(ev.event_data.connect_event_data.ep_handle == e->ep,
		      "%s names EP %p, not %p", hx_event_str(ev.event_number),
		      ev.event_data.connect_event_data.ep_handle, e->ep);
	HX_EXPECT_STATE(e->ep, DAT_EP_STATE_DISCONNECTED);
	return ev.event_number;
}

/* Sizes of the integrity tests and the segment counts used with each. */
static const DAT_VLEN sizes[] = { 0, 1, 4095, 64 * 1024, BIG };

static int segs_for(int size_idx, int n, int nmax)
{
	/* 4 MiB transfers: one segment and the maximum only. */
	if (sizes[size_idx] == BIG)
		return n == 1 || n == nmax;
	return 1;
}

/* ---- send / receive, RDMA Write, RDMA Read: data integrity -------------- */

/* _i: the size.  For 1..N segments on the client: the server receives in
 * N + 1 - n segments of exactly the message's size. */
START_TEST(send_recv_integrity)
{
	DAT_LMR_TRIPLET iov[MAXSEG];
	struct layout l;
	struct dep e;
	DAT_VLEN size = sizes[_i];
	int sep, n, nmax, rmax;

	start();
	client_ep(&e, 0, 0, 0);
	nmax = max_iov(e.ep, &rmax);
	if (hx_is_ofi_tcp())
		ck_assert_msg(nmax == 4 && rmax == 4, "max_request_iov %d max_recv_iov %d, "
			      "ofi-tcp has 4", nmax, rmax);
	if (rmax < nmax)
		nmax = rmax;
	ck_assert_int_le(nmax, MAXSEG);
	sep = connect_to_server(&e, 0, 0);
	for (n = 1; n <= nmax; n++) {
		unsigned seed = 100u + (unsigned)_i * 10u + (unsigned)n;
		char what[64];

		if (!segs_for(_i, n, nmax))
			continue;
		snprintf(what, sizeof(what), "send of %llu bytes in %d segments",
			 (unsigned long long)size, n);
		srv_post_recv_n(sep, nmax + 1 - n, size, CK(0x5000 + n), 1, 1);
		mem_reset(&cdata);
		make_layout(&l, n, size, 8);
		fill_layout(cdata.buf, &l, seed);
		make_iov(iov, &l, &cdata);
		HX_OK(dat_ep_post_send(e.ep, n, iov, cookie(CK(0xC000 + n)),
				       DAT_COMPLETION_DEFAULT_FLAG));
		expect_dto(e.req, e.ep, CK(0xC000 + n), DAT_DTO_SUCCESS, size);
		srv_expect_recv(sep, CK(0x5000 + n), DAT_DTO_SUCCESS, size, seed, what);
		/* the send's source is unchanged */
		ck_assert_msg(layout_bad(cdata.buf, cdata.reg + GUARD, &l, seed) < 0,
			      "%s: the source buffer changed", what);
	}
	hx_expect_empty(e.rcv);
	hx_expect_empty(e.req);
	dep_free(&e);
	finish();
}
END_TEST

/* Zero segments (NULL iov) on both sides: a 0-byte message. */
START_TEST(send_recv_zero_segments)
{
	struct dep e;
	int sep;

	start();
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	srv_post_recv_n(sep, 0, 0, CK(0x51), 1, 1);
	HX_OK(dat_ep_post_send(e.ep, 0, NULL, cookie(CK(0xC1)), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(e.req, e.ep, CK(0xC1), DAT_DTO_SUCCESS, 0);
	srv_expect_recv(sep, CK(0x51), DAT_DTO_SUCCESS, 0, 0, "0-segment send");
	dep_free(&e);
	finish();
}
END_TEST

/* _i: the size.  The client writes n segments into the range the server
 * advertised (its data LMR's rmr_context), then sends 'done'; the server
 * checks the range and that nothing around it changed. */
START_TEST(rdma_write_integrity)
{
	DAT_LMR_TRIPLET iov[MAXSEG];
	struct layout l;
	struct dep e;
	struct adv a;
	DAT_VLEN size = sizes[_i], off = 128;
	int sep, n, nmax;

	start();
	client_ep(&e, 0, 0, 0);
	nmax = max_iov(e.ep, NULL);
	ck_assert_int_le(nmax, MAXSEG);
	sep = connect_to_server(&e, 0, 0);
	for (n = 1; n <= nmax; n++) {
		unsigned seed = 200u + (unsigned)_i * 10u + (unsigned)n;
		int64_t bad;

		if (!segs_for(_i, n, nmax))
			continue;
		srv_expose(&e, sep, E_DATA, 0, off, size, 0, 0, 0, &a);
		post_done_recv(sep);
		mem_reset(&cdata);
		make_layout(&l, n, size, 8);
		fill_layout(cdata.buf, &l, seed);
		make_iov(iov, &l, &cdata);
		HX_OK(dat_ep_post_rdma_write(e.ep, n, iov, cookie(CK(0xE000 + n)), &a.t,
					     DAT_COMPLETION_DEFAULT_FLAG));
		send_done(&e, CK(0xD000 + n));
		expect_dto(e.req, e.ep, CK(0xE000 + n), DAT_DTO_SUCCESS, size);
		expect_dto(e.req, e.ep, CK(0xD000 + n), DAT_DTO_SUCCESS, 0);
		bad = srv_check(sep, DONE_COOKIE, off, size, seed, 0, 0, 0);
		ck_assert_msg(bad < 0, "RDMA Write of %llu bytes from %d segments: the server's "
			      "memory is wrong at offset %" PRId64 " (the range starts at %llu)",
			      (unsigned long long)size, n, bad, (unsigned long long)off);
	}
	hx_expect_empty(e.rcv);
	hx_expect_empty(e.req);
	dep_free(&e);
	finish();
}
END_TEST

/* _i: the size.  The client reads the pattern the server put in the range
 * it advertised into n segments. */
START_TEST(rdma_read_integrity)
{
	DAT_LMR_TRIPLET iov[MAXSEG];
	struct layout l;
	struct dep e;
	struct adv a;
	DAT_VLEN size = sizes[_i], off = 256;
	int sep, n, nmax;

	start();
	client_ep(&e, 0, 0, 0);
	nmax = max_iov(e.ep, NULL);
	ck_assert_int_le(nmax, MAXSEG);
	sep = connect_to_server(&e, 0, 0);
	/* a Read scatters into at most max_rdma_read_iov segments (iWARP
	 * devices often allow one); one more is refused, never truncated */
	{
		DAT_EP_PARAM p;

		memset(&p, 0, sizeof(p));
		HX_OK(dat_ep_query(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV, &p));
		ck_assert_int_ge(p.ep_attr.max_rdma_read_iov, 1);
		if (p.ep_attr.max_rdma_read_iov < nmax) {
			srv_expose(&e, sep, E_DATA, 0, off, size, 1, 0, 0, &a);
			make_layout(&l, p.ep_attr.max_rdma_read_iov + 1, size, 8);
			make_iov(iov, &l, &cdata);
			HX_RC(dat_ep_post_rdma_read(e.ep, p.ep_attr.max_rdma_read_iov + 1, iov,
						    cookie(CK(0xF000)), &a.t,
						    DAT_COMPLETION_DEFAULT_FLAG), HX_ARG(2));
			nmax = p.ep_attr.max_rdma_read_iov;
		}
	}
	for (n = 1; n <= nmax; n++) {
		unsigned seed = 300u + (unsigned)_i * 10u + (unsigned)n;
		int64_t bad;

		if (!segs_for(_i, n, nmax))
			continue;
		srv_expose(&e, sep, E_DATA, 0, off, size, seed, 0, 0, &a);
		mem_reset(&cdata);
		make_layout(&l, n, size, 8);
		make_iov(iov, &l, &cdata);
		HX_OK(dat_ep_post_rdma_read(e.ep, n, iov, cookie(CK(0xF000 + n)), &a.t,
					    DAT_COMPLETION_DEFAULT_FLAG));
		expect_dto(e.req, e.ep, CK(0xF000 + n), DAT_DTO_SUCCESS, size);
		bad = layout_bad(cdata.buf, cdata.reg + GUARD, &l, seed);
		ck_assert_msg(bad < 0, "RDMA Read of %llu bytes into %d segments: the local "
			      "buffer is wrong at offset %" PRId64, (unsigned long long)size, n,
			      bad);
		/* the source is unchanged */
		ck_assert_int_lt(srv_check(sep, 0, off, size, seed, 0, 0, 0), 0);
	}
	hx_expect_empty(e.rcv);
	hx_expect_empty(e.req);
	dep_free(&e);
	finish();
}
END_TEST

/* ---- errors produced for real ------------------------------------------- */

/* A 200-byte message into a 100-byte receive: DAT_DTO_ERR_LOCAL_LENGTH on
 * the server with its cookie; the connection breaks on both sides; the
 * server's other receives and the client's receives (posted before, never
 * matched) are flushed, each once. */
START_TEST(recv_too_small_local_length)
{
	DAT_LMR_TRIPLET iov;
	struct layout l;
	struct dep e;
	struct hx_msg m;
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_EVENT_NUMBER sev, cev;
	int sep, state, i;

	start();
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	/* two receives on the client that nothing will match */
	for (i = 0; i < 2; i++) {
		memset(&iov, 0, sizeof(iov));
		iov.lmr_context = cctl.lctx;
		iov.virtual_address = va(cctl.buf + 1024 * i);
		iov.segment_length = 512;
		HX_OK(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x700 + i)),
				       DAT_COMPLETION_DEFAULT_FLAG));
	}
	srv_post_recv_n(sep, 1, 100, CK(0x600), 1, 1);     /* too small */
	srv_post_recv_n(sep, 1, 4096, CK(0x601), 2, 0);    /* two more, never used */
	make_layout(&l, 1, 200, 0);
	fill_layout(cdata.buf, &l, 7);
	make_iov(&iov, &l, &cdata);
	HX_OK(dat_ep_post_send(e.ep, 1, &iov, cookie(CK(0x800)), DAT_COMPLETION_DEFAULT_FLAG));

	{
		struct rdto r;

		srv_recv_wait(sep, 0, &r);
		ck_assert_msg(r.cookie == CK(0x600), "200 bytes into a 100-byte receive: "
			      "the server's receive completed with cookie %#" PRIx64, r.cookie);
		/* Soft-RoCE reports a "local QP operation error" where the IB
		 * spec and hardware report a local length error */
		ck_assert_msg(r.status == DAT_DTO_ERR_LOCAL_LENGTH ||
			      (adapter_is("rxe") && r.status == DAT_DTO_ERR_LOCAL_EP),
			      "200 bytes into a 100-byte receive: the server's receive "
			      "completed with %s, expected ERR_LOCAL_LENGTH", status_str(r.status));
	}
	sev = srv_wait_conn(sep, &state);
	ck_assert_msg(state == DAT_EP_STATE_DISCONNECTED, "receiver EP state %s after %s",
		      hx_state_str((DAT_EP_STATE)state), hx_event_str(sev));
	cmd(S_DRAIN, sep, 2, (int64_t)CK(0x601), 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == 2 && m.v[1] == 0 && m.v[2] == 0 && m.v[3] == 0 && m.v[4] == 0,
		      "the receiver's other receives: %d flushed, %d other (%s), %d twice, "
		      "%d unknown cookies, %d extra events; expected 2 flushed once each",
		      (int)m.v[0], (int)m.v[1], status_str((DAT_DTO_COMPLETION_STATUS)m.v[5]),
		      (int)m.v[2], (int)m.v[3], (int)m.v[4]);

	cev = conn_end(&e);
	/* the sender's send: its data left, so success or flushed, once */
	next_dto(e.req, e.ep, &d);
	ck_assert_msg(d.user_cookie.as_64 == CK(0x800), "send completion cookie %#" PRIx64,
		      d.user_cookie.as_64);
	/* or the receiver's refusal, where the transport reports it (verbs);
	 * soft-iWARP reports a send whose socket write failed because the
	 * peer's Terminate closed the stream first as a "local QP operation
	 * error" (siw_qp_tx.c), which is ERR_LOCAL_EP */
	ck_assert_msg(d.status == DAT_DTO_SUCCESS || d.status == DAT_DTO_ERR_FLUSHED ||
		      d.status == DAT_DTO_ERR_REMOTE_RESPONDER ||
		      (adapter_is("siw") && d.status == DAT_DTO_ERR_LOCAL_EP),
		      "the oversized send completed with %s, expected SUCCESS, ERR_FLUSHED "
		      "or ERR_REMOTE_RESPONDER", status_str(d.status));
	{
		struct tally t;

		drain(e.rcv, e.ep, 2, CK(0x700), &t);
		ck_assert_msg(t.flushed == 2 && t.dup == 0 && t.stray == 0 && t.extra == 0,
			      "the sender's receives: %d flushed, %d other (%s), %d twice, %d "
			      "unknown, %d extra; expected 2 flushed once each", t.flushed,
			      t.other, status_str(t.other_status), t.dup, t.stray, t.extra);
	}
	hx_expect_empty(e.req);
	/* The receiver saw the error, so its connection is BROKEN.  The
	 * sender only sees the TCP connection close: on ofi-tcp that looks
	 * exactly like the peer disconnecting (dapl_ofi(3)). */
	ck_assert_msg(sev == DAT_CONNECTION_EVENT_BROKEN &&
		      (cev == DAT_CONNECTION_EVENT_BROKEN ||
		       cev == DAT_CONNECTION_EVENT_DISCONNECTED),
		      "after LOCAL_LENGTH the receiver's connection ended with %s and the "
		      "sender's with %s; expected BROKEN for the receiver", hx_event_str(sev),
		      hx_event_str(cev));
	dep_free(&e);
	finish();
}
END_TEST

/* _i: op (write, read) x fault (wrong rmr_context, outside the bound range,
 * without the privilege).  The server's memory stays as it was, the
 * initiator's connection breaks, a Read never completes with success and
 * a Write completes with success (it may have left locally) or flushed. */
enum { F_CONTEXT, F_RANGE, F_PRIV, F_OTHER_PZ, F_KINDS };

START_TEST(rdma_remote_faults)
{
	static const char *const fname[] = { "a wrong rmr_context", "outside the bound range",
					     "without the privilege",
					     "to an LMR of another PZ" };
	int is_read = _i / F_KINDS, fault = _i % F_KINDS;
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET target;
	DAT_DTO_COMPLETION_EVENT_DATA d;
	struct layout l;
	struct dep e;
	struct adv a;
	DAT_VLEN off = 4096, len = 4096;
	unsigned seed = is_read ? 77u : 0u;
	int sep, state;
	DAT_EVENT_NUMBER sev, cev;
	int64_t bad;
	char what[96];

	snprintf(what, sizeof(what), "RDMA %s %s", is_read ? "Read" : "Write", fname[fault]);
	start();
	if (fault == F_RANGE && adapter_is("rxe")) {
		/* Soft-RoCE checks an access through a window against the
		 * registration under it only, not against the window */
		fprintf(stderr, "rdma_remote_faults: %s: rxe does not bound memory windows; "
			"not run\n", what);
		finish();
		return;
	}
	if (fault == F_PRIV && is_read && adapter_is("siw")) {
		/* soft-iWARP (Linux 6.1) does not check a registration's
		 * remote-read right for an inbound Read (dapl_verbs(7)) */
		fprintf(stderr, "rdma_remote_faults: %s: siw does not check the "
			"remote-read right; not run\n", what);
		finish();
		return;
	}
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	switch (fault) {
	case F_CONTEXT:
		srv_expose(&e, sep, E_DATA, 0, off, len, seed, 0, 0, &a);
		target = a.t;
		/* a context no registration of the server has */
		target.rmr_context = ~a.t.rmr_context ^ 0x5a5a0000u;
		break;
	case F_RANGE:
		/* an RMR bound to [off, off + len) of the data LMR; the access
		 * straddles its end */
		srv_expose(&e, sep, E_RMR,
			   DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
			   off, len, seed, 0, CK(0xB1), &a);
		target = a.t;
		target.HX_RMR_ADDR = a.t.HX_RMR_ADDR + len - 16;
		target.segment_length = 64;
		break;
	case F_OTHER_PZ:
		/* a valid rmr_context with every right, of an LMR in a PZ
		 * the target's EP is not in (dat_pz_create(3)) */
		srv_expose(&e, sep, E_OTHER_PZ,
			   DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
			   DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
			   off, len, seed, 0, 0, &a);
		target = a.t;
		target.segment_length = 64;
		break;
	default:
		/* an LMR over the range with only the other remote privilege */
		srv_expose(&e, sep, E_NEW_LMR,
			   DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
			   (is_read ? DAT_MEM_PRIV_REMOTE_WRITE_FLAG : DAT_MEM_PRIV_REMOTE_READ_FLAG),
			   off, len, seed, 0, 0, &a);
		target = a.t;
		target.segment_length = 64;
		break;
	}
	make_layout(&l, 1, target.segment_length, 0);
	mem_reset(&cdata);
	fill_layout(cdata.buf, &l, 99);
	make_iov(&iov, &l, &cdata);
	if (is_read)
		HX_OK(dat_ep_post_rdma_read(e.ep, 1, &iov, cookie(CK(0xBAD)), &target,
					    DAT_COMPLETION_DEFAULT_FLAG));
	else
		HX_OK(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(CK(0xBAD)), &target,
					     DAT_COMPLETION_DEFAULT_FLAG));

	cev = conn_end(&e);
	next_dto(e.req, e.ep, &d);
	ck_assert_msg(d.user_cookie.as_64 == CK(0xBAD), "%s: completion cookie %#" PRIx64, what,
		      d.user_cookie.as_64);
	/* A provider that reports remote access errors (verbs on IB and
	 * RoCE, tcp) says REMOTE_ACCESS; one that cannot (ofi-tcp, verbs on
	 * iWARP: DAT_TEST_LOCAL_COMPLETION) lets a Write leave or flushes it */
	if (!hx_is_ofi_tcp() && !hx_local_completion())
		ck_assert_msg(d.status == DAT_DTO_ERR_REMOTE_ACCESS,
			      "%s completed with %s, expected ERR_REMOTE_ACCESS", what,
			      status_str(d.status));
	else if (is_read)
		ck_assert_msg(d.status != DAT_DTO_SUCCESS, "%s completed with SUCCESS", what);
	else
		/* soft-iWARP completes a request it still counts as being
		 * sent when the target's Terminate ends the stream as a
		 * "local QP operation error" (ERR_LOCAL_EP), as the send of
		 * recv_too_small_local_length: whether the Write's completion
		 * came first is a race on siw's side (2 of 20 runs) */
		ck_assert_msg(d.status == DAT_DTO_SUCCESS || d.status == DAT_DTO_ERR_FLUSHED ||
			      d.status == DAT_DTO_ERR_REMOTE_ACCESS ||
			      (adapter_is("siw") && d.status == DAT_DTO_ERR_LOCAL_EP),
			      "%s completed with %s, expected SUCCESS, ERR_FLUSHED or "
			      "ERR_REMOTE_ACCESS", what, status_str(d.status));
	hx_expect_empty(e.req);

	/* the target: its connection ends too, and its memory is as it was */
	sev = srv_wait_conn(sep, &state);
	ck_assert_msg(sev == DAT_CONNECTION_EVENT_BROKEN || sev == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "%s: the target's connection event is %s", what, hx_event_str(sev));
	bad = srv_check(sep, 0, off, len, seed, 0, 0, 0);
	ck_assert_msg(bad < 0, "%s: the target's memory changed at offset %" PRId64, what, bad);
	/* libfabric tcp 1.17 refuses a bad RDMA target by closing the
	 * connection, with no status: neither side can tell that from a
	 * disconnect, and both say DISCONNECTED (dapl_ofi(3)); tcp's
	 * Terminate says why, and both say BROKEN (dapl_tcp(7)); verbs
	 * ends it as the device reports it. */
	if (hx_is_ofi_tcp() || hx_is_native_tcp()) {
		DAT_EVENT_NUMBER want = hx_is_ofi_tcp() ? DAT_CONNECTION_EVENT_DISCONNECTED :
							  DAT_CONNECTION_EVENT_BROKEN;

		ck_assert_msg(sev == want && cev == want, "%s: the connection ended with %s at "
			      "the target and %s at the initiator, expected %s at both", what,
			      hx_event_str(sev), hx_event_str(cev), hx_event_str(want));
	}
	ck_assert_msg(cev == DAT_CONNECTION_EVENT_BROKEN ||
		      cev == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "%s: the initiator's connection ended with %s, expected it to end",
		      what, hx_event_str(cev));
	dep_free(&e);
	finish();
}
END_TEST

/* More outstanding than max_recv_dtos / max_request_dtos (an outstanding
 * DTO is one whose completion is not dequeued yet): DAT_INSUFFICIENT_RESOURCES
 * and nothing posted. */
START_TEST(queue_full_insufficient_resources)
{
	DAT_LMR_TRIPLET iov;
	struct dep e;
	struct rdto r;
	int sep, i;

	start();
	client_ep(&e, 4, 4, 0);
	sep = connect_to_server(&e, 32, 0);
	memset(&iov, 0, sizeof(iov));
	iov.lmr_context = cctl.lctx;
	iov.virtual_address = va(cctl.buf);
	iov.segment_length = 64;

	/* receives */
	for (i = 0; i < 4; i++)
		HX_OK(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x100 + i)),
				       DAT_COMPLETION_DEFAULT_FLAG));
	HX_RC_TYPE(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x1FF)), DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);
	{
		struct hx_msg m;

		cmd(S_SEND, sep, 1, 16, 5, (int64_t)CK(0x900), 0, 0, 0);
		answer(R_DTO, &m);
		ck_assert_msg(m.v[1] == DAT_DTO_SUCCESS, "the server's send: %s",
			      status_str((DAT_DTO_COMPLETION_STATUS)m.v[1]));
	}
	/* completed but not dequeued: still outstanding */
	HX_RC_TYPE(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x1FF)), DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);
	expect_dto(e.rcv, e.ep, CK(0x100), DAT_DTO_SUCCESS, 16);
	HX_OK(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x104)), DAT_COMPLETION_DEFAULT_FLAG));
	HX_RC_TYPE(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x1FF)), DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);

	/* requests: sends into receives the server posted */
	srv_post_recv_n(sep, 1, 64, CK(0x300), 8, 1);
	for (i = 0; i < 4; i++)
		HX_OK(dat_ep_post_send(e.ep, 1, &iov, cookie(CK(0x200 + i)),
				       DAT_COMPLETION_DEFAULT_FLAG));
	HX_RC_TYPE(dat_ep_post_send(e.ep, 1, &iov, cookie(CK(0x2FF)), DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);
	HX_RC_TYPE(dat_ep_post_rdma_write(e.ep, 0, NULL, cookie(CK(0x2FF)),
					  &(DAT_RMR_TRIPLET){ 0 }, DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_INSUFFICIENT_RESOURCES);
	for (i = 0; i < 4; i++)
		srv_expect_recv(sep, CK(0x300 + i), DAT_DTO_SUCCESS, 64, 0, "send on a full queue");
	/* Dequeuing moves the other completions into the EVD too, which
	 * gives their places back: one more send fits. */
	expect_dto(e.req, e.ep, CK(0x200), DAT_DTO_SUCCESS, 64);
	HX_OK(dat_ep_post_send(e.ep, 1, &iov, cookie(CK(0x204)), DAT_COMPLETION_DEFAULT_FLAG));
	for (i = 1; i <= 4; i++)
		expect_dto(e.req, e.ep, CK(0x200 + i), DAT_DTO_SUCCESS, 64);
	/* exactly five sends arrived: the refused ones were not posted */
	srv_recv_wait(sep, 0, &r);
	ck_assert_msg(r.cookie == CK(0x304) && r.status == DAT_DTO_SUCCESS,
		      "fifth receive: cookie %#" PRIx64 " %s", r.cookie, status_str(r.status));
	hx_expect_empty(e.req);
	hx_expect_empty(e.rcv);
	dep_free(&e);
	finish();
}
END_TEST

/* Send, RDMA Read and Write on an EP that is not connected yet:
 * DAT_INVALID_STATE; a receive posted then is allowed and takes the first
 * message once connected. */
START_TEST(unconnected_posts)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rt;
	struct dep e;
	struct hx_msg m;
	int sep;

	start();
	client_ep(&e, 0, 0, 0);
	memset(&iov, 0, sizeof(iov));
	iov.lmr_context = cdata.lctx;
	iov.virtual_address = va(cdata.buf);
	iov.segment_length = 64;
	memset(&rt, 0, sizeof(rt));
	rt.rmr_context = cdata.rctx;
	rt.HX_RMR_ADDR = va(cdata.buf + 4096);
	rt.segment_length = 64;
	HX_RC(dat_ep_post_send(e.ep, 1, &iov, cookie(1), DAT_COMPLETION_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	HX_RC(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(2), &rt, DAT_COMPLETION_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	HX_RC(dat_ep_post_rdma_read(e.ep, 1, &iov, cookie(3), &rt, DAT_COMPLETION_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	mem_reset(&cdata);
	HX_OK(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0xEA)), DAT_COMPLETION_DEFAULT_FLAG));
	hx_expect_empty(e.req);
	hx_expect_empty(e.rcv);

	sep = connect_to_server(&e, 0, 0);
	cmd(S_SEND, sep, 2, 50, 31, (int64_t)CK(0x5E), 0, 0, 0);
	answer(R_DTO, &m);
	ck_assert_msg((uint64_t)m.v[0] == CK(0x5E) && m.v[1] == DAT_DTO_SUCCESS &&
		      m.v[2] == 50, "the server's send: cookie %#" PRIx64 " %s %d bytes",
		      (uint64_t)m.v[0], status_str((DAT_DTO_COMPLETION_STATUS)m.v[1]),
		      (int)m.v[2]);
	expect_dto(e.rcv, e.ep, CK(0xEA), DAT_DTO_SUCCESS, 50);
	{
		struct layout l;

		make_layout(&l, 1, 50, 0);
		ck_assert_msg(layout_bad(cdata.buf, 4096, &l, 31) < 0,
			      "the early receive got the wrong bytes");
	}
	hx_expect_empty(e.req);
	dep_free(&e);
	finish();
}
END_TEST

/* ---- flush ------------------------------------------------------------- */

#define NFLUSH 100
#define NREADS 20

/* _i = 0: the client disconnects (abruptly, with the server process stopped
 * so its 20 RDMA Reads cannot be answered); _i = 1: the server disconnects.
 * 100 receives on each side, and the client's reads, complete exactly
 * once each with DAT_DTO_ERR_FLUSHED.  Then DTOs posted on the
 * DISCONNECTED EP complete at once, flushed. */
START_TEST(flush_on_disconnect)
{
	DAT_LMR_TRIPLET iov;
	struct dep e;
	struct adv a;
	struct hx_msg m;
	struct tally t;
	DAT_EVENT_NUMBER sev;
	int sep, i, status = 0;
	int client_side = _i == 0;

	start();
	client_ep(&e, 128, 64, 0);
	sep = connect_to_server(&e, 128, 0);
	if (client_side)
		srv_expose(&e, sep, E_DATA, 0, 0, 4096, 3, 0, 0, &a);
	srv_post_recv_n(sep, 1, 64, CK(0x10000), NFLUSH, 0);
	memset(&iov, 0, sizeof(iov));
	iov.lmr_context = cctl.lctx;
	iov.virtual_address = va(cctl.buf + 8192);
	iov.segment_length = 64;
	for (i = 0; i < NFLUSH; i++)
		HX_OK(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x20000 + i)),
				       DAT_COMPLETION_DEFAULT_FLAG));

	if (client_side) {
		/* stop the server: nothing answers the reads */
		ck_assert_int_eq(kill(srv.pid, SIGSTOP), 0);
		ck_assert_int_eq(waitpid(srv.pid, &status, WUNTRACED), srv.pid);
		ck_assert_msg(WIFSTOPPED(status), "the server did not stop");
		for (i = 0; i < NREADS; i++) {
			DAT_LMR_TRIPLET r;

			memset(&r, 0, sizeof(r));
			r.lmr_context = cdata.lctx;
			r.virtual_address = va(cdata.buf + 128 * i);
			r.segment_length = 64;
			HX_OK(dat_ep_post_rdma_read(e.ep, 1, &r, cookie(CK(0x30000 + i)), &a.t,
						    DAT_COMPLETION_DEFAULT_FLAG));
		}
		HX_OK(dat_ep_disconnect(e.ep, DAT_CLOSE_ABRUPT_FLAG));
		hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
		drain(e.req, e.ep, NREADS, CK(0x30000), &t);
		/* where the device answers Reads itself (verbs), a stopped
		 * server does not hold them up: each completes once, some
		 * maybe before the disconnect */
		if (!rdma_needs_peer_process() && t.other == t.succeeded) {
			t.flushed += t.succeeded;
			t.other = 0;
		}
		ck_assert_msg(t.flushed == NREADS && t.dup == 0 && t.stray == 0 && t.extra == 0,
			      "the client's %d RDMA Reads: %d flushed, %d other (%s), %d twice, "
			      "%d unknown, %d extra", NREADS, t.flushed, t.other,
			      status_str(t.other_status), t.dup, t.stray, t.extra);
		ck_assert_int_eq(kill(srv.pid, SIGCONT), 0);
		sev = srv_wait_conn(sep, NULL);
		ck_assert_msg(sev == DAT_CONNECTION_EVENT_DISCONNECTED,
			      "the server's connection event after the client's disconnect: %s",
			      hx_event_str(sev));
	} else {
		cmd(S_DISCONNECT, sep, DAT_CLOSE_GRACEFUL_FLAG, 0, 0, 0, 0, 0, 0);
		answer(R_VAL, &m);
		ck_assert_msg(m.v[0] == DAT_CONNECTION_EVENT_DISCONNECTED,
			      "the server's event after its disconnect: %s",
			      hx_event_str((DAT_EVENT_NUMBER)m.v[0]));
		hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
	}
	drain(e.rcv, e.ep, NFLUSH, CK(0x20000), &t);
	ck_assert_msg(t.flushed == NFLUSH && t.dup == 0 && t.stray == 0 && t.extra == 0,
		      "the client's %d receives: %d flushed, %d other (%s), %d twice, "
		      "%d unknown, %d extra", NFLUSH, t.flushed, t.other,
		      status_str(t.other_status), t.dup, t.stray, t.extra);
	cmd(S_DRAIN, sep, NFLUSH, (int64_t)CK(0x10000), 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == NFLUSH && m.v[2] == 0 && m.v[3] == 0 && m.v[4] == 0,
		      "the server's %d receives: %d flushed, %d other (%s), %d twice, "
		      "%d unknown, %d extra", NFLUSH, (int)m.v[0], (int)m.v[1],
		      status_str((DAT_DTO_COMPLETION_STATUS)m.v[5]), (int)m.v[2], (int)m.v[3],
		      (int)m.v[4]);
	hx_expect_empty(e.req);

	/* the EP is DISCONNECTED now: a DTO posted on it is accepted and
	 * completes at once with DAT_DTO_ERR_FLUSHED (DAT 1.2) */
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	{
		DAT_RMR_TRIPLET rt;

		memset(&rt, 0, sizeof(rt));
		rt.rmr_context = cdata.rctx;
		rt.HX_RMR_ADDR = va(cdata.buf);
		rt.segment_length = 64;
		HX_OK(dat_ep_post_send(e.ep, 1, &iov, cookie(CK(0x40001)), DAT_COMPLETION_DEFAULT_FLAG));
		HX_OK(dat_ep_post_rdma_read(e.ep, 1, &iov, cookie(CK(0x40002)), &rt,
					    DAT_COMPLETION_DEFAULT_FLAG));
		HX_OK(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(CK(0x40003)), &rt,
					     DAT_COMPLETION_DEFAULT_FLAG));
		HX_OK(dat_ep_post_recv(e.ep, 1, &iov, cookie(CK(0x40004)), DAT_COMPLETION_DEFAULT_FLAG));
		expect_dto(e.req, e.ep, CK(0x40001), DAT_DTO_ERR_FLUSHED, 0);
		expect_dto(e.req, e.ep, CK(0x40002), DAT_DTO_ERR_FLUSHED, 0);
		expect_dto(e.req, e.ep, CK(0x40003), DAT_DTO_ERR_FLUSHED, 0);
		expect_dto(e.rcv, e.ep, CK(0x40004), DAT_DTO_ERR_FLUSHED, 0);
		hx_expect_empty(e.req);
		hx_expect_empty(e.rcv);
	}
	dep_free(&e);
	finish();
}
END_TEST

/* ---- completion flags and ordering --------------------------------------- */

/* SUPPRESS: no event for a send or an RDMA Write that succeeds; the data
 * still arrives. */
START_TEST(suppress_flag)
{
	DAT_LMR_TRIPLET iov;
	struct layout l;
	struct dep e;
	struct adv a;
	int sep;

	start();
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	srv_expose(&e, sep, E_DATA, 0, 0, 256, 0, 0, 0, &a);
	srv_post_recv_n(sep, 1, 32, CK(0x41), 1, 0);
	make_layout(&l, 1, 32, 0);
	fill_layout(cdata.buf, &l, 41);
	make_iov(&iov, &l, &cdata);
	HX_OK(dat_ep_post_send(e.ep, 1, &iov, cookie(CK(0xA1)), DAT_COMPLETION_SUPPRESS_FLAG));
	srv_expect_recv(sep, CK(0x41), DAT_DTO_SUCCESS, 32, 41, "suppressed send");
	post_done_recv(sep);
	make_layout(&l, 1, 256, 1024);
	fill_layout(cdata.buf, &l, 42);
	make_iov(&iov, &l, &cdata);
	HX_OK(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(CK(0xA2)), &a.t,
				     DAT_COMPLETION_SUPPRESS_FLAG));
	send_done(&e, CK(0xA3));
	/* the first (and only) event is the unsuppressed 'done' send's */
	expect_dto(e.req, e.ep, CK(0xA3), DAT_DTO_SUCCESS, 0);
	ck_assert_int_lt(srv_check(sep, DONE_COOKIE, 0, 256, 42, 0, 0, 0), 0);
	hx_expect_empty(e.req);
	hx_expect_empty(e.rcv);
	dep_free(&e);
	finish();
}
END_TEST

/* UNSIGNALLED is refused (the flags argument) unless the EP's
 * request_completion_flags allow it; unknown flag bits likewise.  With an
 * EP that allows it, an unsignalled send has no event. */
START_TEST(unsignalled_flag)
{
	DAT_LMR_TRIPLET iov;
	DAT_RMR_TRIPLET rt;
	DAT_EP_PARAM p;
	struct layout l;
	struct dep e, u;
	struct adv a;
	int sep, usep;

	start();
	client_ep(&e, 0, 0, 0);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(e.ep, DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS |
			   DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS, &p));
	ck_assert_msg(!(p.ep_attr.request_completion_flags & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
		      !(p.ep_attr.recv_completion_flags & DAT_COMPLETION_UNSIGNALLED_FLAG),
		      "the default EP allows UNSIGNALLED");
	sep = connect_to_server(&e, 0, 0);
	srv_expose(&e, sep, E_DATA, 0, 0, 64, 0, 0, 0, &a);
	rt = a.t;
	make_layout(&l, 1, 16, 0);
	make_iov(&iov, &l, &cdata);
	HX_RC(dat_ep_post_send(e.ep, 1, &iov, cookie(1), DAT_COMPLETION_UNSIGNALLED_FLAG),
	      HX_ARG(5));
	HX_RC(dat_ep_post_recv(e.ep, 1, &iov, cookie(2), DAT_COMPLETION_UNSIGNALLED_FLAG),
	      HX_ARG(5));
	HX_RC(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(3), &rt,
				     DAT_COMPLETION_UNSIGNALLED_FLAG), HX_ARG(6));
	HX_RC(dat_ep_post_rdma_read(e.ep, 1, &iov, cookie(4), &rt,
				    DAT_COMPLETION_UNSIGNALLED_FLAG), HX_ARG(6));
	/* a bit DAT does not define */
	HX_RC(dat_ep_post_send(e.ep, 1, &iov, cookie(5), (DAT_COMPLETION_FLAGS)0x100), HX_ARG(5));
	HX_RC(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(6), &rt, (DAT_COMPLETION_FLAGS)0x100),
	      HX_ARG(6));
	HX_RC(dat_ep_post_rdma_read(e.ep, 1, &iov, cookie(7), &rt, (DAT_COMPLETION_FLAGS)0x100),
	      HX_ARG(6));
	/* nothing of that was posted */
	hx_expect_empty(e.req);
	hx_expect_empty(e.rcv);

	/* an EP whose requests may be unsignalled */
	client_ep(&u, 0, 0, DAT_COMPLETION_UNSIGNALLED_FLAG);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(u.ep, DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS, &p));
	ck_assert_msg(p.ep_attr.request_completion_flags & DAT_COMPLETION_UNSIGNALLED_FLAG,
		      "request_completion_flags %#x lost UNSIGNALLED",
		      (unsigned)p.ep_attr.request_completion_flags);
	usep = connect_to_server(&u, 0, 0);
	srv_post_recv_n(usep, 1, 16, CK(0x61), 2, 1);
	fill_layout(cdata.buf, &l, 61);
	HX_OK(dat_ep_post_send(u.ep, 1, &iov, cookie(CK(0xB1)), DAT_COMPLETION_UNSIGNALLED_FLAG));
	HX_OK(dat_ep_post_send(u.ep, 1, &iov, cookie(CK(0xB2)), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(u.req, u.ep, CK(0xB2), DAT_DTO_SUCCESS, 16);
	srv_expect_recv(usep, CK(0x61), DAT_DTO_SUCCESS, 16, 61, "unsignalled send");
	srv_expect_recv(usep, CK(0x62), DAT_DTO_SUCCESS, 16, 61, "send after it");
	hx_expect_empty(u.req);
	dep_free(&u);
	dep_free(&e);
	finish();
}
END_TEST

/* BARRIER_FENCE and SOLICITED_WAIT are accepted and the operations
 * complete in posting order: a 1 MiB RDMA Read, a fenced send, a solicited
 * send, a plain send. */
START_TEST(fence_solicited_and_order)
{
	DAT_LMR_TRIPLET iov[3], riov;
	struct layout l, rl;
	struct dep e;
	struct adv a;
	DAT_VLEN big = (DAT_VLEN)1 << 20;
	int sep, i;
	static const DAT_COMPLETION_FLAGS fl[3] = {
		DAT_COMPLETION_BARRIER_FENCE_FLAG, DAT_COMPLETION_SOLICITED_WAIT_FLAG,
		DAT_COMPLETION_DEFAULT_FLAG
	};

	start();
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	srv_expose(&e, sep, E_DATA, 0, 0, big, 55, 0, 0, &a);
	/* the receives land away from what is read */
	srv_post_recv_at(sep, 1, 100, CK(0x71), 3, 0, 2 * big);
	mem_reset(&cdata);
	make_layout(&rl, 1, big, 0);
	make_iov(&riov, &rl, &cdata);
	HX_OK(dat_ep_post_rdma_read(e.ep, 1, &riov, cookie(CK(0xF0)), &a.t,
				    DAT_COMPLETION_DEFAULT_FLAG));
	for (i = 0; i < 3; i++) {
		make_layout(&l, 1, 100, 0);
		memset(&iov[i], 0, sizeof(iov[i]));
		iov[i].lmr_context = cctl.lctx;
		iov[i].virtual_address = va(cctl.buf + 512 * i);
		iov[i].segment_length = 100;
		fill_layout(cctl.buf + 512 * i, &l, 60u + (unsigned)i);
		HX_OK(dat_ep_post_send(e.ep, 1, &iov[i], cookie(CK(0xF1 + i)), fl[i]));
	}
	expect_dto(e.req, e.ep, CK(0xF0), DAT_DTO_SUCCESS, big);
	for (i = 0; i < 3; i++)
		expect_dto(e.req, e.ep, CK(0xF1 + i), DAT_DTO_SUCCESS, 100);
	ck_assert_msg(layout_bad(cdata.buf, cdata.reg + GUARD, &rl, 55) < 0,
		      "the 1 MiB RDMA Read brought wrong data");
	for (i = 0; i < 3; i++)
		srv_expect_recv(sep, CK(0x71 + i), DAT_DTO_SUCCESS, 100, 0, "ordered sends");
	hx_expect_empty(e.req);
	dep_free(&e);
	finish();
}
END_TEST

/* ---- RMRs ------------------------------------------------------------- */

/* The server binds an RMR (completion event with its cookie), the client
 * writes through its context; a rebind to another range gives a new
 * context that works; the old context then breaks the connection and
 * changes nothing. */
START_TEST(rmr_bind_rebind)
{
	DAT_LMR_TRIPLET iov;
	struct layout l;
	struct dep e;
	struct adv a1, a2;
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_VLEN offA = 8192, offB = 65536, len = 16384;
	DAT_EVENT_NUMBER sev, cev;
	int sep;
	int64_t bad;

	start();
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	srv_expose(&e, sep, E_RMR, DAT_MEM_PRIV_REMOTE_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG,
		   offA, len, 0, DAT_COMPLETION_DEFAULT_FLAG, CK(0xB1D), &a1);
	ck_assert_int_eq(a1.bind_status, DAT_DTO_SUCCESS);

	make_layout(&l, 1, len, 0);
	fill_layout(cdata.buf, &l, 11);
	make_iov(&iov, &l, &cdata);
	post_done_recv(sep);
	HX_OK(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(CK(1)), &a1.t,
				     DAT_COMPLETION_DEFAULT_FLAG));
	send_done(&e, CK(2));
	expect_dto(e.req, e.ep, CK(1), DAT_DTO_SUCCESS, len);
	expect_dto(e.req, e.ep, CK(2), DAT_DTO_SUCCESS, 0);
	bad = srv_check(sep, DONE_COOKIE, offA, len, 11, 0, 0, 0);
	ck_assert_msg(bad < 0, "write through the RMR: server memory wrong at %" PRId64, bad);

	srv_expose(&e, sep, E_REBIND, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, offB, len, 0,
		   DAT_COMPLETION_DEFAULT_FLAG, CK(0xB2D), &a2);
	ck_assert_msg(a2.t.rmr_context != a1.t.rmr_context, "the rebind kept the context");
	ck_assert(a2.t.HX_RMR_ADDR == a1.t.HX_RMR_ADDR - offA + offB);
	fill_layout(cdata.buf, &l, 12);
	post_done_recv(sep);
	HX_OK(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(CK(3)), &a2.t,
				     DAT_COMPLETION_DEFAULT_FLAG));
	send_done(&e, CK(4));
	expect_dto(e.req, e.ep, CK(3), DAT_DTO_SUCCESS, len);
	expect_dto(e.req, e.ep, CK(4), DAT_DTO_SUCCESS, 0);
	bad = srv_check(sep, DONE_COOKIE, offA, len, 11, offB, len, 12);
	ck_assert_msg(bad < 0, "write through the rebound RMR: server memory wrong at %" PRId64,
		      bad);

	/* the old context is dead */
	fill_layout(cdata.buf, &l, 13);
	HX_OK(dat_ep_post_rdma_write(e.ep, 1, &iov, cookie(CK(5)), &a1.t,
				     DAT_COMPLETION_DEFAULT_FLAG));
	cev = conn_end(&e);
	next_dto(e.req, e.ep, &d);
	ck_assert_msg(d.user_cookie.as_64 == CK(5) &&
		      (d.status == DAT_DTO_SUCCESS || d.status == DAT_DTO_ERR_FLUSHED ||
		       d.status == DAT_DTO_ERR_REMOTE_ACCESS),
		      "write through the old context: cookie %#" PRIx64 " %s", d.user_cookie.as_64,
		      status_str(d.status));
	sev = srv_wait_conn(sep, NULL);
	ck_assert_msg(sev == DAT_CONNECTION_EVENT_BROKEN || sev == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "the server's connection event: %s", hx_event_str(sev));
	bad = srv_check(sep, 0, offA, len, 11, offB, len, 12);
	ck_assert_msg(bad < 0, "a write through the old context changed offset %" PRId64, bad);
	ck_assert_msg(cev == DAT_CONNECTION_EVENT_BROKEN ||
		      cev == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "the write through the old context ended the connection with %s, "
		      "expected it to end (BROKEN, or DISCONNECTED on ofi-tcp)", hx_event_str(cev));
	dep_free(&e);
	finish();
}
END_TEST

/* A bind with SUPPRESS has no completion event; the client reads through
 * it; a length-0 bind unbinds (completion event with its cookie) and a Read
 * through the old context then never succeeds and breaks the connection.
 * The server frees the RMR at the end. */
START_TEST(rmr_suppressed_bind_read_unbind)
{
	DAT_LMR_TRIPLET iov;
	struct layout l;
	struct dep e;
	struct adv a, u;
	DAT_DTO_COMPLETION_EVENT_DATA d;
	DAT_VLEN off = 4096, len = 8192;
	DAT_EVENT_NUMBER cev;
	int sep;

	start();
	client_ep(&e, 0, 0, 0);
	sep = connect_to_server(&e, 0, 0);
	srv_expose(&e, sep, E_RMR, DAT_MEM_PRIV_REMOTE_READ_FLAG, off, len, 21,
		   DAT_COMPLETION_SUPPRESS_FLAG, CK(0xB3D), &a);
	mem_reset(&cdata);
	{
		DAT_LMR_TRIPLET two[2];
		DAT_EP_PARAM p;
		int n;

		/* two segments where the device scatters a Read into two */
		memset(&p, 0, sizeof(p));
		HX_OK(dat_ep_query(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV, &p));
		n = p.ep_attr.max_rdma_read_iov >= 2 ? 2 : 1;
		make_layout(&l, n, len, 0);
		make_iov(two, &l, &cdata);
		HX_OK(dat_ep_post_rdma_read(e.ep, n, two, cookie(CK(1)), &a.t,
					    DAT_COMPLETION_DEFAULT_FLAG));
	}
	expect_dto(e.req, e.ep, CK(1), DAT_DTO_SUCCESS, len);
	ck_assert_msg(layout_bad(cdata.buf, cdata.reg + GUARD, &l, 21) < 0,
		      "read through the RMR brought wrong data");

	srv_expose(&e, sep, E_UNBIND, 0, 0, 0, 0, DAT_COMPLETION_DEFAULT_FLAG, CK(0xB4D), &u);
	ck_assert_int_eq(u.bind_status, DAT_DTO_SUCCESS);
	make_layout(&l, 1, 64, 0);
	make_iov(&iov, &l, &cdata);
	HX_OK(dat_ep_post_rdma_read(e.ep, 1, &iov, cookie(CK(2)), &a.t,
				    DAT_COMPLETION_DEFAULT_FLAG));
	cev = conn_end(&e);
	next_dto(e.req, e.ep, &d);
	ck_assert_msg(d.user_cookie.as_64 == CK(2) && d.status != DAT_DTO_SUCCESS,
		      "read through an unbound context: cookie %#" PRIx64 " %s",
		      d.user_cookie.as_64, status_str(d.status));
	ck_assert_int_lt(srv_check(sep, 0, off, len, 21, 0, 0, 0), 0);
	ck_assert_msg(cev == DAT_CONNECTION_EVENT_BROKEN ||
		      cev == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "the read through the unbound context ended the connection with %s, "
		      "expected it to end (BROKEN, or DISCONNECTED on ofi-tcp)", hx_event_str(cev));
	dep_free(&e);
	finish();
}
END_TEST

/* ---- SRQ ---------------------------------------------------------------- */

#define SRQ_EPS 4

static void srq_start(int max, int npost, struct dep *e)
{
	struct hx_msg m;
	struct sockaddr_in sa;
	int i;

	start();
	cmd(S_SRQ_CREATE, max, npost, SRQ_SLOT_SIZE, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == DAT_SUCCESS, "the server's dat_srq_create (or posting %d receives "
		      "to it) returned %s", npost, hx_rc_str((DAT_RETURN)m.v[0]));
	srv_listen_once();
	hx_loopback(&sa);
	for (i = 0; i < SRQ_EPS; i++) {
		client_ep(&e[i], 0, 0, 0);
		HX_OK(dat_ep_connect(e[i].ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
				     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
		cmd(S_SRQ_ACCEPT, 0, 0, 0, 0, 0, 0, 0, 0);
		answer(R_VAL, &m);
		ck_assert_int_eq(m.v[0], i);
		ck_assert_msg(m.v[5] == 1, "dat_ep_query of an SRQ EP does not name the SRQ");
		HX_RC_TYPE((DAT_RETURN)m.v[1], DAT_MODEL_NOT_SUPPORTED);
		HX_RC((DAT_RETURN)m.v[2], DAT_SUCCESS);
		ck_assert_msg(m.v[3] == 0 && m.v[4] == 0,
			      "dat_ep_recv_query of an idle SRQ EP: %d buffers, %d bytes",
			      (int)m.v[3], (int)m.v[4]);
		hx_expect_event(e[i].conn, DAT_CONNECTION_EVENT_ESTABLISHED, e[i].ep, NULL);
	}
}

static void srq_finish(struct dep *e)
{
	int i;

	for (i = 0; i < SRQ_EPS; i++)
		dep_free(&e[i]);
	finish();
}

static unsigned srq_seed(int ep, int k)
{
	return 500u + (unsigned)ep * 16u + (unsigned)k;
}

/* The client sends message k (size 100 + 7k + ep) on EP ep. */
static void srq_send(struct dep *e, int ep, int k)
{
	DAT_LMR_TRIPLET iov;
	struct layout l;
	DAT_VLEN size = 100u + 7u * (unsigned)k + (unsigned)ep;
	unsigned char *b = cctl.buf + 4096 * (1 + ep);

	make_layout(&l, 1, size, 0);
	fill_layout(b, &l, srq_seed(ep, k));
	memset(&iov, 0, sizeof(iov));
	iov.lmr_context = cctl.lctx;
	iov.virtual_address = va(b);
	iov.segment_length = size;
	HX_OK(dat_ep_post_send(e[ep].ep, 1, &iov, cookie(CK(0x5E00 + ep * 16 + k)),
			       DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(e[ep].req, e[ep].ep, CK(0x5E00 + ep * 16 + k), DAT_DTO_SUCCESS, size);
}

struct srq_got {
	uint64_t cookie;
	int64_t available, outstanding;
};

/* The server's EP ep completed message k from the SRQ, on its own recv EVD
 * naming that EP, with the right bytes. */
static void srq_expect(int ep, int k, struct srq_got *g)
{
	struct hx_msg m;
	DAT_VLEN size = 100u + 7u * (unsigned)k + (unsigned)ep;

	cmd(S_SRQ_EXPECT, ep, (int64_t)size, srq_seed(ep, k), 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[1] == DAT_DTO_SUCCESS && (DAT_VLEN)m.v[2] == size,
		      "SRQ EP %d message %d: %s, %d bytes (expected %d)", ep, k,
		      status_str((DAT_DTO_COMPLETION_STATUS)m.v[1]), (int)m.v[2], (int)size);
	ck_assert_msg((uint64_t)m.v[0] >= CK(0) && (uint64_t)m.v[0] < CK(SRQ_SLOTS),
		      "SRQ EP %d message %d: cookie %#" PRIx64 " is none of the SRQ's", ep, k,
		      (uint64_t)m.v[0]);
	ck_assert_msg(m.v[3] < 0, "SRQ EP %d message %d: wrong byte at offset %d", ep, k,
		      (int)m.v[3]);
	HX_RC((DAT_RETURN)m.v[6], DAT_SUCCESS);
	g->cookie = (uint64_t)m.v[0];
	g->available = m.v[4];
	g->outstanding = m.v[5];
}

/* One SRQ with 16 receives shared by 4 EPs: two messages on each EP use
 * SRQ receives; each completes on its EP's recv EVD naming its EP; the
 * query counts follow (available: posted and not taken, outstanding: not
 * yet dequeued). */
START_TEST(srq_shared_by_four_eps)
{
	struct dep e[SRQ_EPS];
	struct srq_got g;
	struct hx_msg m;
	uint64_t used[2 * SRQ_EPS];
	int i, k, j, n = 0;

	srq_start(32, 16, e);
	cmd(S_SRQ_QUERY, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], DAT_SUCCESS);
	ck_assert_msg(m.v[1] == DAT_SRQ_STATE_OPERATIONAL && m.v[2] == 32 && m.v[4] == 0 &&
		      m.v[5] == 16 && m.v[6] == 16 && m.v[7] == 1,
		      "dat_srq_query: state %d max_recv_dtos %d lw %d available %d outstanding %d "
		      "ia/pz %s; expected OPERATIONAL 32 0 16 16 right", (int)m.v[1], (int)m.v[2],
		      (int)m.v[4], (int)m.v[5], (int)m.v[6], m.v[7] ? "right" : "wrong");
	ck_assert_msg(m.v[3] >= 1, "dat_srq_query: max_recv_iov %d", (int)m.v[3]);

	for (k = 0; k < 2; k++)
		for (i = 0; i < SRQ_EPS; i++)
			srq_send(e, i, k);
	for (k = 0; k < 2; k++) {
		for (i = 0; i < SRQ_EPS; i++) {
			srq_expect(i, k, &g);
			for (j = 0; j < n; j++)
				ck_assert_msg(used[j] != g.cookie, "SRQ receive %#" PRIx64
					      " completed twice", g.cookie);
			used[n++] = g.cookie;
			ck_assert_msg(g.outstanding == 16 - n,
				      "after %d completions dequeued: outstanding_dto_count %d, "
				      "expected %d", n, (int)g.outstanding, 16 - n);
			ck_assert_msg(g.available >= 8 && g.available <= 16 - n,
				      "after %d completions dequeued: available_dto_count %d",
				      n, (int)g.available);
		}
	}
	ck_assert_msg(g.available == 8, "all 8 messages in: available_dto_count %d, expected 8",
		      (int)g.available);
	/* nothing more on the server's recv EVDs */
	for (i = 0; i < SRQ_EPS; i++) {
		cmd(S_DRAIN, i, 0, 0, 0, 0, 0, 0, 0);
		answer(R_VAL, &m);
		ck_assert_msg(m.v[4] == 0, "%d more events on the recv EVD of SRQ EP %d",
			      (int)m.v[4], i);
	}
	/* the SRQ cannot go while EPs use it */
	cmd(S_SRQ_FREE_TRY, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC_TYPE((DAT_RETURN)m.v[0], DAT_INVALID_STATE);
	srq_finish(e);
}
END_TEST

/* dat_srq_set_lw: above max_recv_dtos is refused; set at 6 with 8 posted
 * it fires once when fewer than 6 remain (the async EVD gets
 * ASYNC_ERROR_PROVIDER_INTERNAL_ERROR naming the SRQ with reason
 * DAT_SRQ_LOW_WATERMARK_EVENT), not again; set above what remains it fires
 * at once.  dat_srq_resize below what is outstanding is refused; growing
 * works and more receives fit. */
START_TEST(srq_low_watermark_and_resize)
{
	struct dep e[SRQ_EPS];
	struct srq_got g;
	struct hx_msg m;

	srq_start(32, 8, e);
	cmd(S_SRQ_LW, 33, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], HX_ARG(2));
	cmd(S_SRQ_LW, 6, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], DAT_SUCCESS);
	cmd(S_SRQ_QUERY, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[4] == 6, "dat_srq_query: low_watermark %d after set_lw(6)", (int)m.v[4]);
	cmd(S_SRQ_ASYNC, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == 0, "an async event (%s) with 8 receives and watermark 6",
		      hx_event_str((DAT_EVENT_NUMBER)m.v[1]));

	/* 8 -> 6: not below */
	srq_send(e, 0, 0);
	srq_expect(0, 0, &g);
	srq_send(e, 1, 0);
	srq_expect(1, 0, &g);
	ck_assert_int_eq(g.available, 6);
	cmd(S_SRQ_ASYNC, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == 0, "an async event (%s) with 6 receives left and watermark 6",
		      hx_event_str((DAT_EVENT_NUMBER)m.v[1]));
	/* 6 -> 5: fires */
	srq_send(e, 2, 0);
	srq_expect(2, 0, &g);
	cmd(S_SRQ_ASYNC, 1, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == 1, "no async event with 5 receives left and watermark 6 (%s)",
		      hx_rc_str((DAT_RETURN)m.v[1]));
	ck_assert_msg(m.v[1] == DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR && m.v[2] == 1 &&
		      m.v[3] == DAT_SRQ_LOW_WATERMARK_EVENT,
		      "low watermark event: %s, handle %s, reason %d; expected "
		      "ASYNC_ERROR_PROVIDER_INTERNAL_ERROR, the SRQ, DAT_SRQ_LOW_WATERMARK_EVENT",
		      hx_event_str((DAT_EVENT_NUMBER)m.v[1]), m.v[2] ? "the SRQ" : "not the SRQ",
		      (int)m.v[3]);
	/* 5 -> 4: once per set_lw */
	srq_send(e, 3, 0);
	srq_expect(3, 0, &g);
	ck_assert_int_eq(g.available, 4);
	cmd(S_SRQ_ASYNC, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == 0, "a second low watermark event (%s) without a new set_lw",
		      hx_event_str((DAT_EVENT_NUMBER)m.v[1]));
	/* already below: at once */
	cmd(S_SRQ_LW, 5, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], DAT_SUCCESS);
	cmd(S_SRQ_ASYNC, 1, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[0] == 1 && m.v[3] == DAT_SRQ_LOW_WATERMARK_EVENT && m.v[2] == 1,
		      "set_lw(5) with 4 receives left: no low watermark event");

	/* resize: 4 outstanding */
	cmd(S_SRQ_RESIZE, 3, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC_TYPE((DAT_RETURN)m.v[0], DAT_INVALID_STATE);
	ck_assert_msg(m.v[1] == 32, "a refused resize changed max_recv_dtos to %d", (int)m.v[1]);
	cmd(S_SRQ_RESIZE, 64, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], DAT_SUCCESS);
	ck_assert_msg(m.v[1] == 64, "after resize(64): max_recv_dtos %d", (int)m.v[1]);
	cmd(S_SRQ_POST, 40, 256, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	HX_RC((DAT_RETURN)m.v[0], DAT_SUCCESS);
	cmd(S_SRQ_QUERY, 0, 0, 0, 0, 0, 0, 0, 0);
	answer(R_VAL, &m);
	ck_assert_msg(m.v[2] == 64 && m.v[5] == 44 && m.v[6] == 44,
		      "after growing and posting 40: max %d available %d outstanding %d, "
		      "expected 64 44 44", (int)m.v[2], (int)m.v[5], (int)m.v[6]);
	/* the new receives work */
	srq_send(e, 0, 1);
	srq_expect(0, 1, &g);
	srq_finish(e);
}
END_TEST

static Suite *dto_suite(void)
{
	Suite *s = suite_create("dto");
	TCase *tc;

	tc = tcase_create("integrity");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_loop_test(tc, send_recv_integrity, 0, 5);
	tcase_add_test(tc, send_recv_zero_segments);
	tcase_add_loop_test(tc, rdma_write_integrity, 0, 5);
	tcase_add_loop_test(tc, rdma_read_integrity, 0, 5);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, recv_too_small_local_length);
	tcase_add_loop_test(tc, rdma_remote_faults, 0, 2 * F_KINDS);
	tcase_add_test(tc, queue_full_insufficient_resources);
	tcase_add_test(tc, unconnected_posts);
	suite_add_tcase(s, tc);

	tc = tcase_create("flush");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_loop_test(tc, flush_on_disconnect, 0, 2);
	suite_add_tcase(s, tc);

	tc = tcase_create("flags");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, suppress_flag);
	tcase_add_test(tc, unsignalled_flag);
	tcase_add_test(tc, fence_solicited_and_order);
	suite_add_tcase(s, tc);

	tc = tcase_create("rmr");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, rmr_bind_rebind);
	tcase_add_test(tc, rmr_suppressed_bind_read_unbind);
	suite_add_tcase(s, tc);

	tc = tcase_create("srq");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, srq_shared_by_four_eps);
	tcase_add_test(tc, srq_low_watermark_and_resize);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!hx_env_ok()) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	sr = srunner_create(dto_suite());
	/* One process per test: libdat and the provider start fresh, and a
	 * test's server process is its own child. */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
