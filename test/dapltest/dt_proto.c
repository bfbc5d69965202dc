/*
 * dapltest: the messages client and server exchange.  Our own layout (OFA's
 * dapltest sends C structs), every field in network byte order:
 *
 *   header   u32 magic "DAPT" (0x44415054), u16 type, u16 0, u32 body length
 *
 *   VERSION  u32 version (DT_PROTO_VERSION)
 *   REQUEST  u8 test ('T', 'P', 'Q'), u8 debug, u16 0, then
 *            T: u32 iterations, u16 threads, u16 EPs per thread,
 *               u8 flags (1 -V, 2 -P, 4 -r), u8 0, u16 OP count, and per
 *               OP: u8 side (0 client, 1 server), u8 type (1 SR, 2 RR,
 *               3 RW), u8 flags (1 -f), u8 0, u32 seg_size, u32 num_segs
 *               (the command line's OPs; both sides add the -V sync OPs)
 *            P: u8 type (2 RR, 3 RW), u8 mode (0 blocking, 1 polling),
 *               u16 0, u32 iterations, u32 pipeline, u32 seg_size,
 *               u32 num_segs
 *            Q: nothing
 *   REPLY    u32 status (0 ready), u16 qualifier count, u16 text length,
 *            u32 qualifiers (one per test EP: thread-major), text
 *   RESULT   u32 status (0 pass), u16 text length, text
 *   RMRINFO  u16 count, u16 0, count x { u32 rmr_context, u32 0,
 *            u64 target_address, u64 segment_length } (one per OP; length 0
 *            where the peer has nothing to reach)
 *   FIN      nothing
 *
 * The control connection carries VERSION (both ways), REQUEST, REPLY and
 * RESULT; each per-test connection carries RMRINFO (both ways, the
 * connecting side's first: -T P's client sends one that names nothing)
 * and FIN.  Version 2: the connecting side speaks first.
 * The decoder checks every length and value: a bad message is refused,
 * never trusted.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dt_common.h"

/* ------------------------------------------------------------------ */
/* Writing                                                             */
/* ------------------------------------------------------------------ */

struct wr {
	uint8_t	*p;
	size_t	cap, len;
	bool	overflow;
};

static void put(struct wr *w, uint64_t v, unsigned bytes)
{
	if (w->len + bytes > w->cap) {
		w->overflow = true;
		return;
	}
	for (unsigned i = 0; i < bytes; i++)
		w->p[w->len + i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
	w->len += bytes;
}

static void put_bytes(struct wr *w, const void *src, size_t n)
{
	if (w->len + n > w->cap) {
		w->overflow = true;
		return;
	}
	memcpy(w->p + w->len, src, n);
	w->len += n;
}

static void begin(struct wr *w, uint8_t *buf, size_t cap, uint16_t type)
{
	w->p = buf;
	w->cap = cap;
	w->len = 0;
	w->overflow = false;
	put(w, DT_PROTO_MAGIC, 4);
	put(w, type, 2);
	put(w, 0, 2);
	put(w, 0, 4);		/* body length, set by finish() */
}

static size_t finish(struct wr *w)
{
	size_t body = w->len - DT_MSG_HDR_LEN;

	if (w->overflow)
		return 0;
	for (unsigned i = 0; i < 4; i++)
		w->p[8 + i] = (uint8_t)(body >> (8 * (3 - i)));
	return w->len;
}

static void put_text(struct wr *w, const char *text)
{
	size_t n = text ? strlen(text) : 0;

	if (n > DT_TEXT_MAX)
		n = DT_TEXT_MAX;
	put(w, n, 2);
	put_bytes(w, text, n);
}

size_t dtc_encode_version(uint8_t *buf, size_t cap)
{
	struct wr w;

	begin(&w, buf, cap, DT_MSG_VERSION);
	put(&w, DT_PROTO_VERSION, 4);
	return finish(&w);
}

size_t dtc_encode_request(uint8_t *buf, size_t cap, const struct dt_request *r)
{
	struct wr w;

	begin(&w, buf, cap, DT_MSG_REQUEST);
	put(&w, (uint8_t)r->test, 1);
	put(&w, r->debug, 1);
	put(&w, 0, 2);
	if (r->test == 'T') {
		const struct dt_trans_args *t = &r->trans;

		put(&w, t->iters, 4);
		put(&w, t->threads, 2);
		put(&w, t->eps_per_thread, 2);
		put(&w, (t->validate ? 1u : 0u) | (t->poll ? 2u : 0u) |
			(t->use_rsp ? 4u : 0u), 1);
		put(&w, 0, 1);
		put(&w, t->user_nops, 2);
		for (uint32_t i = 0; i < t->user_nops; i++) {
			const struct dt_op *op = &t->ops[i];

			put(&w, op->who, 1);
			put(&w, op->xfer, 1);
			put(&w, op->reap_on_recv ? 1 : 0, 1);
			put(&w, 0, 1);
			put(&w, op->seg_size, 4);
			put(&w, op->num_segs, 4);
		}
	} else if (r->test == 'P') {
		const struct dt_perf_args *pa = &r->perf;

		put(&w, pa->xfer, 1);
		put(&w, pa->poll ? 1 : 0, 1);
		put(&w, 0, 2);
		put(&w, pa->iters, 4);
		put(&w, pa->pipeline, 4);
		put(&w, pa->seg_size, 4);
		put(&w, pa->num_segs, 4);
	}
	return finish(&w);
}

size_t dtc_encode_reply(uint8_t *buf, size_t cap, uint32_t status,
		       const uint32_t *quals, uint32_t nquals, const char *text)
{
	size_t n = text ? strlen(text) : 0;
	struct wr w;

	if (n > DT_TEXT_MAX)
		n = DT_TEXT_MAX;
	begin(&w, buf, cap, DT_MSG_REPLY);
	put(&w, status, 4);
	put(&w, nquals, 2);
	put(&w, n, 2);
	for (uint32_t i = 0; i < nquals; i++)
		put(&w, quals[i], 4);
	put_bytes(&w, text, n);
	return finish(&w);
}

size_t dtc_encode_result(uint8_t *buf, size_t cap, uint32_t status,
			const char *text)
{
	struct wr w;

	begin(&w, buf, cap, DT_MSG_RESULT);
	put(&w, status, 4);
	put_text(&w, text);
	return finish(&w);
}

size_t dtc_rmrinfo_size(uint32_t count)
{
	return DT_MSG_HDR_LEN + 4 + 24 * (size_t)count;
}

size_t dtc_encode_rmrinfo(uint8_t *buf, size_t cap, const DAT_RMR_TRIPLET *t,
			 uint32_t count)
{
	struct wr w;

	begin(&w, buf, cap, DT_MSG_RMRINFO);
	put(&w, count, 2);
	put(&w, 0, 2);
	for (uint32_t i = 0; i < count; i++) {
		put(&w, t[i].rmr_context, 4);
		put(&w, 0, 4);
		put(&w, t[i].target_address, 8);
		put(&w, t[i].segment_length, 8);
	}
	return finish(&w);
}

size_t dtc_encode_fin(uint8_t *buf, size_t cap)
{
	struct wr w;

	begin(&w, buf, cap, DT_MSG_FIN);
	return finish(&w);
}

/* ------------------------------------------------------------------ */
/* Reading                                                             */
/* ------------------------------------------------------------------ */

struct rd {
	const uint8_t	*p;
	size_t		len, off;
	bool		short_read;
};

static uint64_t get(struct rd *r, unsigned bytes)
{
	uint64_t v = 0;

	if (r->off + bytes > r->len) {
		r->short_read = true;
		return 0;
	}
	for (unsigned i = 0; i < bytes; i++)
		v = (v << 8) | r->p[r->off + i];
	r->off += bytes;
	return v;
}

static void get_text(struct rd *r, size_t n, char *out)
{
	if (n > DT_TEXT_MAX || r->off + n > r->len) {
		r->short_read = true;
		out[0] = '\0';
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char c = (char)r->p[r->off + i];

		/* the text is printed: keep it printable */
		out[i] = (c >= 32 && c < 127) ? c : '?';
	}
	out[n] = '\0';
	r->off += n;
}

static int bad(char *err, size_t errlen, const char *fmt, ...) DT_PRINTF(3, 4);
static int bad(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	return -1;
}

static int decode_request(struct rd *r, struct dt_request *q, char *err,
			  size_t errlen)
{
	memset(q, 0, sizeof(*q));
	q->test = (char)get(r, 1);
	q->debug = (uint8_t)get(r, 1);
	get(r, 2);
	if (q->test == 'T') {
		struct dt_trans_args *t = &q->trans;
		unsigned flags;

		t->iters = (uint32_t)get(r, 4);
		t->threads = (uint32_t)get(r, 2);
		t->eps_per_thread = (uint32_t)get(r, 2);
		flags = (unsigned)get(r, 1);
		get(r, 1);
		t->user_nops = (uint32_t)get(r, 2);
		if (flags & ~7u)
			return bad(err, errlen, "unknown request flags 0x%x", flags);
		t->validate = flags & 1;
		t->poll = flags & 2;
		t->use_rsp = flags & 4;
		if (t->user_nops > DT_MAX_USER_OPS)
			return bad(err, errlen, "%u OPs (at most %d)",
				   t->user_nops, DT_MAX_USER_OPS);
		for (uint32_t i = 0; i < t->user_nops; i++) {
			struct dt_op *op = &t->ops[i];
			unsigned opflags;

			op->who = (uint8_t)get(r, 1);
			op->xfer = (uint8_t)get(r, 1);
			opflags = (unsigned)get(r, 1);
			get(r, 1);
			op->seg_size = (uint32_t)get(r, 4);
			op->num_segs = (uint32_t)get(r, 4);
			if (opflags & ~1u)
				return bad(err, errlen, "OP %u: unknown flags", i + 1);
			op->reap_on_recv = opflags & 1;
		}
		if (r->short_read)
			return bad(err, errlen, "truncated transaction request");
		if (dtc_trans_check(t, err, errlen))
			return -1;
		dtc_trans_expand(t);
	} else if (q->test == 'P') {
		struct dt_perf_args *pa = &q->perf;
		unsigned mode;

		pa->xfer = (uint8_t)get(r, 1);
		mode = (unsigned)get(r, 1);
		get(r, 2);
		pa->iters = (uint32_t)get(r, 4);
		pa->pipeline = (uint32_t)get(r, 4);
		pa->seg_size = (uint32_t)get(r, 4);
		pa->num_segs = (uint32_t)get(r, 4);
		if (r->short_read)
			return bad(err, errlen, "truncated performance request");
		if (mode > 1)
			return bad(err, errlen, "unknown mode %u", mode);
		pa->poll = mode == 1;
		if (dtc_perf_check(pa, err, errlen))
			return -1;
	} else if (q->test != 'Q') {
		return bad(err, errlen, "unknown test type 0x%02x",
			   (unsigned char)q->test);
	}
	return 0;
}

int dtc_decode(const uint8_t *buf, size_t len, struct dt_msg *m, char *err,
	      size_t errlen)
{
	struct rd r = { buf, len, 0, false };
	uint32_t magic, body;

	magic = (uint32_t)get(&r, 4);
	m->type = (uint16_t)get(&r, 2);
	get(&r, 2);
	body = (uint32_t)get(&r, 4);
	if (r.short_read)
		return bad(err, errlen, "message of %zu bytes is too short", len);
	if (magic != DT_PROTO_MAGIC)
		return bad(err, errlen, "not a dapltest message (magic 0x%08x)",
			   magic);
	if (body != len - DT_MSG_HDR_LEN)
		return bad(err, errlen, "message length %u does not match %zu",
			   body, len - DT_MSG_HDR_LEN);

	switch (m->type) {
	case DT_MSG_VERSION:
		m->u.version = (uint32_t)get(&r, 4);
		break;
	case DT_MSG_REQUEST:
		if (decode_request(&r, &m->u.request, err, errlen))
			return -1;
		break;
	case DT_MSG_REPLY: {
		struct dt_reply *p = &m->u.reply;
		size_t n;

		p->status = (uint32_t)get(&r, 4);
		p->nquals = (uint32_t)get(&r, 2);
		n = (size_t)get(&r, 2);
		if (p->nquals > DT_MAX_TEST_EPS)
			return bad(err, errlen, "%u qualifiers (at most %d)",
				   p->nquals, DT_MAX_TEST_EPS);
		for (uint32_t i = 0; i < p->nquals; i++) {
			p->quals[i] = (uint32_t)get(&r, 4);
			if (!r.short_read && (p->quals[i] < 1 || p->quals[i] > 65535))
				return bad(err, errlen, "bad qualifier %u",
					   p->quals[i]);
		}
		get_text(&r, n, p->text);
		break;
	}
	case DT_MSG_RESULT: {
		size_t n;

		m->u.result.status = (uint32_t)get(&r, 4);
		n = (size_t)get(&r, 2);
		get_text(&r, n, m->u.result.text);
		break;
	}
	case DT_MSG_RMRINFO: {
		struct dt_rmrinfo *ri = &m->u.rmrinfo;

		ri->count = (uint32_t)get(&r, 2);
		get(&r, 2);
		if (ri->count > DT_MAX_OPS)
			return bad(err, errlen, "%u RMR triplets (at most %d)",
				   ri->count, DT_MAX_OPS);
		for (uint32_t i = 0; i < ri->count; i++) {
			ri->t[i].rmr_context = (DAT_RMR_CONTEXT)get(&r, 4);
			ri->t[i].pad = 0;
			get(&r, 4);
			ri->t[i].target_address = get(&r, 8);
			ri->t[i].segment_length = get(&r, 8);
		}
		break;
	}
	case DT_MSG_FIN:
		break;
	default:
		return bad(err, errlen, "unknown message type %u", m->type);
	}
	if (r.short_read)
		return bad(err, errlen, "truncated message (type %u)", m->type);
	if (r.off != len)
		return bad(err, errlen, "%zu extra bytes after message type %u",
			   len - r.off, m->type);
	return 0;
}
