/* Receive: reading, checking and placing what the peer sends, and what
 * that completes.
 *
 * Every function here runs with ep->lock held.  Nothing allocates except
 * a Send that arrives before its receive is posted (held in a bounded
 * buffer: TCP_UNEXPECTED_MAX bytes, TCP_UNEXPECTED_MSGS messages).
 *
 * Bytes come into a staging buffer with one recv(); headers are parsed
 * from it (tcp_wire.h), and the payload found there is copied to its
 * place.  The rest of a payload is read straight into its place, with
 * the trailer and the next header behind it in the same recvmsg (after a
 * large FPDU a header is read alone), so a stream's data is copied once,
 * by the kernel.  Every field of every header is checked before a byte
 * moves: lengths against the FPDU, MSN and MO against the stream,
 * STag/PZ/rights/range against the STag table (again for each piece, so
 * a registration freed meanwhile is never written).  A violation sends a
 * Terminate and ends the connection.
 *
 * What arrives drives the other direction too: a Read Request (or an
 * RFC 7306 Atomic Request, run here) queues the response tcp_tx.c
 * sends, the ack in each FPDU's CRC field completes our Sends and
 * Writes, and placed messages owe the peer an ack. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

/* ---- held Sends ---------------------------------------------------------- */

void tcp_ep_drop_unexpected(struct dapl_tep *ep)
{
	struct tcp_unexpected *u;

	while ((u = ep->unexp_head)) {
		ep->unexp_head = u->next;
		free(u);
	}
	ep->unexp_tail = NULL;
	ep->unexp_link = &ep->unexp_head;
	ep->unexp_bytes = 0;
	ep->unexp_count = 0;
}

/* ---- receive -------------------------------------------------------------- */

/* Inbound Sends/Writes placed, in order: up to the first one still held
 * for a receive. */
static void update_placed(struct dapl_tep *ep)
{
	uint32_t placed = ep->unexp_head ? ep->unexp_head->seq - 1 : ep->rx_seq;

	if (placed != ep->rx_placed) {
		ep->rx_placed = placed;
		ep->ack_owed = true;
		ep->ack_age = 0;
		ep->ack_ticked = false;
		/* the timer sends it if no reply and no drive does */
		tcp_dev_need_tick(ep->dev);
	}
}

/* The next receive a Send fills: the oldest posted, or one from the SRQ. */
static struct tcp_wr *next_recv(struct dapl_tep *ep)
{
	if (ep->srq) {
		if (!ep->srq_wr_busy && tcp_srq_take(ep->srq, &ep->srq_wr))
			ep->srq_wr_busy = true;
		return ep->srq_wr_busy ? &ep->srq_wr : NULL;
	}
	if (ep->rq.head == ep->rq.tail)
		return NULL;
	return qwr(&ep->rq, ep->rq.head);
}

static void recv_done_imm(struct dapl_tep *ep, enum dapl_twc_status st,
			  uint32_t len, bool with_imm, uint32_t imm)
{
	if (ep->srq) {
		tcp_complete_imm(ep, ep->rcq, &ep->srq_wr, st, len, with_imm, imm);
		ep->srq_wr_busy = false;
	} else {
		tcp_complete_imm(ep, ep->rcq, qwr(&ep->rq, ep->rq.head), st, len,
				 with_imm, imm);
		ep->rq.head++;
	}
}

static void recv_done(struct dapl_tep *ep, enum dapl_twc_status st,
		      uint32_t len)
{
	recv_done_imm(ep, st, len, false, 0);
}

/* The oldest held Send leaves the list (and is freed). */
static void unlink_head(struct dapl_tep *ep)
{
	struct tcp_unexpected *u = ep->unexp_head;

	ep->unexp_head = u->next;
	if (ep->unexp_link == &u->next)
		ep->unexp_link = &ep->unexp_head;  /* the tail is the head now */
	if (!ep->unexp_head) {
		ep->unexp_tail = NULL;
		ep->unexp_link = &ep->unexp_head;
	}
	ep->unexp_bytes -= u->len + TCP_UNEXPECTED_COST;
	ep->unexp_count--;
	free(u);
}

/* Sends held for receives: place those whose receive is now posted (each
 * one a step: the head of the list). */
static void match_unexpected(struct dapl_tep *ep)
{
	struct tcp_unexpected *u;
	struct tcp_wr *wr;

	while ((u = ep->unexp_head) && u->complete && (wr = next_recv(ep))) {
		ep->unexp_visits++;
		if (u->is_imm) {
			/* no data of its own: any receive takes it */
			recv_done_imm(ep, DAPL_TWC_SUCCESS, u->imm_len, true,
				      u->imm);
			unlink_head(ep);
			update_placed(ep);
			continue;
		}
		if (u->len > wr->len) {
			recv_done(ep, DAPL_TWC_LOCAL_LENGTH, 0);
			tcp_ep_terminate(ep, TERM_DDP, TERM_DDP_UNTAGGED,
					 TERM_CODE_TOO_LONG, NULL, 0);
			return;
		}
		tcp_sge_copy(wr, 0, u->data, u->len, true);
		recv_done(ep, DAPL_TWC_SUCCESS, u->len);
		unlink_head(ep);
		update_placed(ep);
	}
}

/* The Terminate a bad FPDU gets: the offending header goes with it. */
static void reject_fpdu(struct dapl_tep *ep, unsigned layer, unsigned etype,
			unsigned code)
{
	tcp_ep_terminate(ep, layer, etype, code, ep->hdr, ep->hdr_need);
}

static bool term_is_access(uint32_t layer, uint32_t etype)
{
	return (layer == TERM_RDMAP && etype == TERM_RDMAP_PROT) ||
	       (layer == TERM_DDP && etype == TERM_DDP_TAGGED);
}

/* A Terminate from the peer: the oldest request it can concern fails. */
static void on_terminate(struct dapl_tep *ep)
{
	const uint8_t *p = ep->hdr + 2 + DDP_UNTAGGED_LEN;
	uint32_t ctrl = get32(p), layer = ctrl >> 28, etype = (ctrl >> 24) & 15;
	enum dapl_twc_status st = DAPL_TWC_REMOTE_OP;
	struct tcp_queue *q = &ep->sq;
	int want = -1, want2 = -1;
	uint32_t i;

	/* siw (Linux 6.1) lays its Terminate Control out as little-endian
	 * bitfields: Layer and EType swap nibbles and the M/D/R bits sit
	 * at the low end of their byte.  A protection error in either
	 * order is an access error (the connection ends either way). */
	if (term_is_access(layer, etype) || term_is_access(etype, layer))
		st = DAPL_TWC_REMOTE_ACCESS;
	if ((ctrl & (TERM_HDRCT_D | TERM_HDRCT_D_SIW)) &&
	    ep->ulpdu_len >= DDP_UNTAGGED_LEN + 4 + 2 + 2) {
		/* the terminated DDP header, behind its MPA length */
		uint32_t c = get16(p + 4 + 2);

		switch (c & RDMAP_OP_MASK) {
		case RDMAP_WRITE:
			want = DAPL_TWC_RDMA_WRITE;
			want2 = DAPL_TWC_RDMA_WRITE_IMM;
			break;
		case RDMAP_IMM: case RDMAP_IMM_SE:
			want = DAPL_TWC_RDMA_WRITE_IMM;
			break;
		case RDMAP_ATOMIC_REQ:
			want = DAPL_TWC_FETCH_ADD;
			want2 = DAPL_TWC_CMP_SWAP;
			break;
		case RDMAP_READ_REQ: want = DAPL_TWC_RDMA_READ; break;
		case RDMAP_SEND: case RDMAP_SEND_SE:
		case RDMAP_SEND_INV: case RDMAP_SEND_SE_INV:
			want = DAPL_TWC_SEND; break;
		default: break;
		}
	}
	tcp_complete_sends(ep);
	for (i = q->head; i != q->frame; i++) {
		struct tcp_wr *wr = qwr(q, i);

		if (wr->state == TCP_WR_DONE)
			continue;
		if (want >= 0 && wr->opcode != want && wr->opcode != want2)
			continue;
		wr->state = TCP_WR_DONE;
		wr->status = st;
		wr->signaled = true;
		break;
	}
	ep->remote_error = true;
	tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -ECONNABORTED);
}

/* ---- RFC 7306: Immediate Data and Atomics (only with ep->ext_7306) ---------- */

/* The untagged header of a message that is all header (ulpdu_len is
 * exactly what header_need asked for): its queue, MSN and offset. */
static bool check_untagged(struct dapl_tep *ep, uint32_t qn, uint32_t want_qn,
			   uint32_t msn, uint32_t want_msn, uint32_t mo,
			   bool last)
{
	if (qn != want_qn || msn != want_msn || mo != 0 || !last ||
	    ep->data_len != 0) {
		reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
			    qn != want_qn ? TERM_CODE_BAD_QN :
			    msn != want_msn ? TERM_CODE_BAD_MSN :
			    mo != 0 ? TERM_CODE_BAD_MO : TERM_CODE_TOO_LONG);
		return false;
	}
	return true;
}

/* Immediate Data: the next message of the Send queue, into the next
 * receive (held like a Send while none is posted), which completes with
 * the length of the RDMA Write before it. */
static bool begin_imm(struct dapl_tep *ep, uint32_t qn, uint32_t msn,
		      uint32_t mo, bool last)
{
	uint32_t imm = (uint32_t)get64(ep->hdr + 2 + DDP_UNTAGGED_LEN);
	uint32_t wlen = ep->rx_write_open ? 0 : ep->rx_write_len;

	/* a Send still arriving owns the current MSN: nothing else may
	 * come on its queue before its last FPDU */
	if (ep->in_send && qn == DDP_QN_SEND) {
		reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED, TERM_CODE_BAD_MSN);
		return false;
	}
	if (!check_untagged(ep, qn, DDP_QN_SEND, msn, ep->rx_msn_send, mo,
			    last))
		return false;
	ep->dst = DST_NONE;
	ep->msg_counts = false;   /* counted here */
	ep->cur_msg_seq = ep->rx_seq + 1;
	if (ep->unexp_head || !next_recv(ep)) {
		struct tcp_unexpected *u;

		if (ep->unexp_count >= TCP_UNEXPECTED_MSGS) {
			reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
				    TERM_CODE_NO_BUFFER);
			return false;
		}
		if (ep->unexp_bytes + TCP_UNEXPECTED_COST > TCP_UNEXPECTED_MAX) {
			/* wait, with the rest in the socket, for a receive */
			ep->stalled = true;
			return true;
		}
		u = calloc(1, sizeof(*u));
		if (!u) {
			tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -ENOMEM);
			return false;
		}
		u->seq = ep->cur_msg_seq;
		u->complete = true;
		u->is_imm = true;
		u->imm = imm;
		u->imm_len = wlen;
		ep->unexp_link = ep->unexp_tail ? &ep->unexp_tail->next
						: &ep->unexp_head;
		*ep->unexp_link = u;
		ep->unexp_tail = u;
		ep->unexp_bytes += TCP_UNEXPECTED_COST;
		ep->unexp_count++;
		ep->unexp_visits++;
	} else {
		recv_done_imm(ep, DAPL_TWC_SUCCESS, wlen, true, imm);
	}
	ep->rx_write_len = 0;
	ep->rx_msn_send++;
	ep->rx_seq++;
	return true;
}

/* An Atomic Request: checked (IRD, STag, PZ, privilege, range, 8-byte
 * alignment) before the word is touched, executed now with the
 * compiler's atomics (so against any other connection's too), answered
 * in order with the Read Responses we owe. */
static bool begin_atomic_req(struct dapl_tep *ep, uint32_t qn, uint32_t msn,
			     uint32_t mo, bool last)
{
	const uint8_t *r = ep->hdr + 2 + DDP_UNTAGGED_LEN;
	uint32_t aop = get32(r) & RDMAP_AOP_MASK, stag = get32(r + 8);
	uint64_t to = get64(r + 12), data = get64(r + 20);
	uint64_t dmask = get64(r + 28), cmp = get64(r + 36);
	uint64_t cmask = get64(r + 44), orig = 0;
	struct tcp_read_resp *rr;
	int bad;

	if (!check_untagged(ep, qn, DDP_QN_READ, msn, ep->rx_msn_read, mo, last))
		return false;
	if (ep->resp_tail - ep->resp_head >= ep->resp_cap ||
	    ep->resp_tail - ep->resp_head >= ep->ird) {
		/* with the Reads in flight, more than we allowed (IRD) */
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP,
			    TERM_CODE_STREAM_FATAL);
		return false;
	}
	/* FetchAdd without carry boundaries and (masked) CmpSwap only */
	if (!(aop == RDMAP_AOP_FETCH_ADD && dmask == 0) &&
	    aop != RDMAP_AOP_CMP_SWAP) {
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP,
			    TERM_CODE_UNEXPECTED_OP);
		return false;
	}
	pthread_rwlock_rdlock(&ep->dev->stag_lock);
	bad = tcp_stag_check(ep->dev, stag, ep->pd, to, 8,
			     DAPL_TACCESS_REMOTE_ATOMIC);
	if (!bad && (to & 7))
		bad = -1;
	if (!bad) {
		uint64_t *w = (uint64_t *)(uintptr_t)to;

		if (aop == RDMAP_AOP_FETCH_ADD) {
			orig = __atomic_fetch_add(w, data, __ATOMIC_SEQ_CST);
		} else {
			orig = __atomic_load_n(w, __ATOMIC_SEQ_CST);
			while (!((orig ^ cmp) & cmask) &&
			       !__atomic_compare_exchange_n(w, &orig,
					(orig & ~dmask) | (data & dmask), false,
					__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
				;
		}
	}
	pthread_rwlock_unlock(&ep->dev->stag_lock);
	if (bad < 0) {
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP, TERM_CODE_UNSPECIFIED);
		return false;
	}
	if (bad) {
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_PROT, (unsigned)bad & 0xff);
		return false;
	}
	ep->rx_msn_read++;
	rr = &ep->resp[ep->resp_tail % ep->resp_cap];
	memset(rr, 0, sizeof(*rr));
	rr->atomic = true;
	rr->req_id = get32(r + 4);
	rr->orig = orig;
	ep->resp_tail++;
	ep->dst = DST_NONE;
	ep->msg_counts = false;
	return true;
}

/* An Atomic Response: for the oldest of our Reads and atomics in flight,
 * which must be the atomic it names. */
static bool begin_atomic_resp(struct dapl_tep *ep, uint32_t qn, uint32_t msn,
			      uint32_t mo, bool last)
{
	const uint8_t *r = ep->hdr + 2 + DDP_UNTAGGED_LEN;
	struct tcp_queue *q = &ep->sq;
	struct tcp_wr *wr = NULL;
	uint64_t orig = get64(r + 4);
	uint32_t i;

	if (!check_untagged(ep, qn, DDP_QN_ATOMIC_RESP, msn, ep->rx_msn_aresp,
			    mo, last))
		return false;
	for (i = ep->read_head; i != q->frame; i++) {
		struct tcp_wr *w = qwr(q, i);

		if (wants_response(w->opcode) && w->state == TCP_WR_SENT) {
			wr = w;
			break;
		}
	}
	ep->read_head = i;
	if (!wr || wr->opcode == DAPL_TWC_RDMA_READ || wr->sink != get32(r)) {
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP,
			    TERM_CODE_UNEXPECTED_OP);
		return false;
	}
	ep->rx_msn_aresp++;
	tcp_sge_copy(wr, 0, (uint8_t *)&orig, sizeof(orig), true);
	wr->state = TCP_WR_DONE;
	wr->status = DAPL_TWC_SUCCESS;
	ep->reads_out--;
	ep->dst = DST_NONE;
	ep->msg_counts = false;
	return true;
}

/* The header of an FPDU is in: check it and decide where its data goes.
 * false when the connection ended. */
static bool begin_fpdu(struct dapl_tep *ep)
{
	const uint8_t *h = ep->hdr;
	uint32_t ctrl = get16(h + 2), op = ctrl & RDMAP_OP_MASK;
	bool tagged = ctrl & DDP_T, last = ctrl & DDP_L;
	uint32_t hl = ep->hdr_need - 2;   /* DDP + RDMAP header bytes */

	ep->data_len = ep->ulpdu_len - hl;
	ep->data_done = 0;
	ep->dst = DST_NONE;
	TCP_TRACE(ep, "rx %s op %u%s len %u state %d stag/qn %08x", tagged ? "T" : "U",
		  op, last ? " L" : "", ep->data_len, ep->state, get32(h + 4 + (tagged ? 0 : 4)));

	if (ep->state == TCP_EP_ACCEPTING) {
		/* the first FPDU must be the RTR we agreed on */
		if (!(tagged && op == RDMAP_WRITE && ep->data_len == 0 && last) &&
		    !(!tagged && op == RDMAP_READ_REQ)) {
			reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP,
				    TERM_CODE_UNEXPECTED_OP);
			return false;
		}
		ep->rtr_pending = false;
		tcp_ep_become_connected(ep);
	}
	if (!ep->got_fpdu) {
		ep->got_fpdu = true;
		ep->hold_tx = false;
	}

	if (tagged) {
		uint32_t stag = get32(h + 4);
		uint64_t to = get64(h + 8);

		if (op == RDMAP_WRITE) {
			int bad;

			if (stag != 0 || ep->data_len) {
				/* what an Immediate Data behind it reports */
				uint32_t had = ep->rx_write_open ? ep->rx_write_len : 0;

				ep->rx_write_len = ep->data_len > UINT32_MAX - had ?
						   UINT32_MAX : had + ep->data_len;
				ep->rx_write_open = !last;
			}
			if (ep->data_len == 0) {
				ep->dst = DST_NONE;
				ep->msg_counts = stag != 0 && last;
				return true;
			}
			pthread_rwlock_rdlock(&ep->dev->stag_lock);
			bad = tcp_stag_check(ep->dev, stag, ep->pd, to,
					     ep->data_len,
					     DAPL_TACCESS_REMOTE_WRITE);
			pthread_rwlock_unlock(&ep->dev->stag_lock);
			if (bad) {
				reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_PROT,
					    (unsigned)bad & 0xff);
				return false;
			}
			ep->dst = DST_MEM;
			ep->dst_stag = stag;
			ep->dst_to = to;
			ep->msg_counts = last;
			return true;
		}
		if (op == RDMAP_READ_RESP) {
			struct tcp_queue *q = &ep->sq;
			struct tcp_wr *wr = NULL;
			uint32_t i;

			for (i = ep->read_head; i != q->frame; i++) {
				struct tcp_wr *w = qwr(q, i);

				if (wants_response(w->opcode) &&
				    w->state == TCP_WR_SENT) {
					wr = w;
					break;
				}
			}
			ep->read_head = i;
			/* responses come in the order of their requests */
			if (wr && wr->opcode != DAPL_TWC_RDMA_READ)
				wr = NULL;
			if (!wr || stag != wr->sink || to != wr->done ||
			    ep->data_len > wr->len - wr->done ||
			    (last && wr->done + ep->data_len != wr->len)) {
				reject_fpdu(ep, TERM_DDP, TERM_DDP_TAGGED,
					    wr && stag == wr->sink ?
					    TERM_CODE_BOUNDS : TERM_CODE_INVALID_STAG);
				return false;
			}
			ep->dst = DST_READ;
			ep->dst_wr = wr;
			ep->msg_counts = false;
			ep->read_last = last;
			return true;
		}
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP, TERM_CODE_UNEXPECTED_OP);
		return false;
	}

	/* untagged */
	{
		uint32_t qn = get32(h + 8), msn = get32(h + 12), mo = get32(h + 16);

		switch (op) {
		case RDMAP_SEND: case RDMAP_SEND_SE:
		case RDMAP_SEND_INV: case RDMAP_SEND_SE_INV:
			if (qn != DDP_QN_SEND) {
				reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
					    TERM_CODE_BAD_QN);
				return false;
			}
			if (msn != ep->rx_msn_send) {
				reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
					    TERM_CODE_BAD_MSN);
				return false;
			}
			if (mo != (ep->in_send ? ep->dst_off : 0)) {
				reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
					    TERM_CODE_BAD_MO);
				return false;
			}
			if (!ep->in_send) {
				/* a new message: its receive, or the holding
				 * buffer when none is posted (or others wait) */
				ep->in_send = true;
				ep->dst_off = 0;
				ep->cur_msg_seq = ep->rx_seq + 1;
				ep->send_to_unexp = ep->unexp_head != NULL ||
						    !next_recv(ep);
				if (ep->send_to_unexp) {
					struct tcp_unexpected *u;

					if (ep->unexp_count >= TCP_UNEXPECTED_MSGS) {
						/* more Sends than receives any
						 * queue of ours could take: a
						 * peer that ignores them */
						reject_fpdu(ep, TERM_DDP,
							    TERM_DDP_UNTAGGED,
							    TERM_CODE_NO_BUFFER);
						return false;
					}
					if (ep->unexp_bytes + TCP_UNEXPECTED_COST >
					    TCP_UNEXPECTED_MAX) {
						/* wait, with the data in the
						 * socket, for a receive */
						ep->in_send = false;
						ep->stalled = true;
						return true;
					}
					u = calloc(1, sizeof(*u));
					if (!u) {
						tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR,
							    -ENOMEM);
						return false;
					}
					u->seq = ep->cur_msg_seq;
					/* the old tail's next is the link to
					 * the new one */
					ep->unexp_link = ep->unexp_tail ?
							 &ep->unexp_tail->next :
							 &ep->unexp_head;
					*ep->unexp_link = u;
					ep->unexp_tail = u;
					ep->unexp_bytes += TCP_UNEXPECTED_COST;
					ep->unexp_count++;
					ep->unexp_visits++;
				}
			}
			if (ep->send_to_unexp) {
				struct tcp_unexpected *u = ep->unexp_tail, *nu;
				uint64_t nl = (uint64_t)u->len + ep->data_len;

				if (nl > UINT32_MAX) {
					reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
						    TERM_CODE_TOO_LONG);
					return false;
				}
				/* (unexp_bytes has u->len in it already) */
				if ((uint64_t)ep->unexp_bytes + ep->data_len >
				    TCP_UNEXPECTED_MAX) {
					/* the buffer is full: wait, with the
					 * data in the socket, for a receive */
					ep->stalled = true;
					return true;
				}
				nu = realloc(u, sizeof(*u) + (size_t)nl);
				if (!nu) {
					tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -ENOMEM);
					return false;
				}
				*ep->unexp_link = nu;
				ep->unexp_tail = nu;
				ep->unexp_visits++;
				ep->dst = DST_UNEXP;
			} else {
				struct tcp_wr *wr = next_recv(ep);

				if (!wr ||
				    ep->data_len > wr->len - ep->dst_off) {
					if (wr)
						recv_done(ep, DAPL_TWC_LOCAL_LENGTH, 0);
					reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
						    TERM_CODE_TOO_LONG);
					return false;
				}
				ep->dst = DST_RECV;
				ep->dst_wr = wr;
			}
			ep->msg_counts = last;
			ep->read_last = last;
			return true;
		case RDMAP_READ_REQ: {
			const uint8_t *r = h + 2 + DDP_UNTAGGED_LEN;
			struct tcp_read_resp *rr;
			uint32_t len = get32(r + 12), src = get32(r + 16);
			uint64_t sto = get64(r + 20);

			if (qn != DDP_QN_READ || msn != ep->rx_msn_read ||
			    mo != 0 || !last || ep->data_len != 0) {
				reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
					    qn != DDP_QN_READ ? TERM_CODE_BAD_QN :
					    msn != ep->rx_msn_read ?
					    TERM_CODE_BAD_MSN : TERM_CODE_BAD_MO);
				return false;
			}
			if (ep->resp_tail - ep->resp_head >= ep->resp_cap ||
			    ep->resp_tail - ep->resp_head >= ep->ird) {
				/* more reads in flight than we allowed (IRD) */
				reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP,
					    TERM_CODE_STREAM_FATAL);
				return false;
			}
			if (len) {
				int bad;

				pthread_rwlock_rdlock(&ep->dev->stag_lock);
				bad = tcp_stag_check(ep->dev, src, ep->pd, sto,
						     len, DAPL_TACCESS_REMOTE_READ);
				pthread_rwlock_unlock(&ep->dev->stag_lock);
				if (bad) {
					reject_fpdu(ep, TERM_RDMAP,
						    TERM_RDMAP_PROT, (unsigned)bad & 0xff);
					return false;
				}
			}
			ep->rx_msn_read++;
			/* the whole slot: an Atomic Response may have used it,
			 * and a stale "atomic" answered this Read with one */
			rr = &ep->resp[ep->resp_tail % ep->resp_cap];
			*rr = (struct tcp_read_resp){
				.stag = src,
				.sink = get32(r),
				.sink_to = get64(r + 4),
				.src = sto,
				.len = len,
			};
			ep->resp_tail++;
			ep->dst = DST_NONE;
			ep->msg_counts = false;
			return true;
		}
		case RDMAP_IMM: case RDMAP_IMM_SE:
			if (!ep->ext_7306)
				break;
			return begin_imm(ep, qn, msn, mo, last);
		case RDMAP_ATOMIC_REQ:
			if (!ep->ext_7306)
				break;
			return begin_atomic_req(ep, qn, msn, mo, last);
		case RDMAP_ATOMIC_RESP:
			if (!ep->ext_7306)
				break;
			return begin_atomic_resp(ep, qn, msn, mo, last);
		case RDMAP_TERMINATE:
			if (qn != DDP_QN_TERM) {
				reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
					    TERM_CODE_BAD_QN);
				return false;
			}
			ep->dst = DST_NONE;
			ep->msg_counts = false;
			ep->is_term = true;
			return true;
		default:
			break;
		}
		/* (the RFC 7306 opcodes from a peer that did not announce
		 * them too) */
		reject_fpdu(ep, TERM_RDMAP, TERM_RDMAP_OP,
			    TERM_CODE_UNEXPECTED_OP);
		return false;
	}
}

/* Places n bytes of the current FPDU's data from src.  false when the
 * connection ended. */
static bool place(struct dapl_tep *ep, const uint8_t *src, uint32_t n)
{
	switch (ep->dst) {
	case DST_MEM: {
		uint64_t to = ep->dst_to + ep->data_done;
		int bad;

		pthread_rwlock_rdlock(&ep->dev->stag_lock);
		bad = tcp_stag_check(ep->dev, ep->dst_stag, ep->pd, to, n,
				     DAPL_TACCESS_REMOTE_WRITE);
		if (!bad)
			memcpy((void *)(uintptr_t)to, src, n);
		pthread_rwlock_unlock(&ep->dev->stag_lock);
		if (bad) {
			/* deregistered while its data was arriving */
			tcp_ep_terminate(ep, TERM_RDMAP, TERM_RDMAP_PROT,
					 (unsigned)bad & 0xff, NULL, 0);
			return false;
		}
		break;
	}
	case DST_RECV:
		tcp_sge_copy(ep->dst_wr, ep->dst_off + ep->data_done, (uint8_t *)src,
			     n, true);
		break;
	case DST_READ:
		tcp_sge_copy(ep->dst_wr, ep->dst_wr->done + ep->data_done,
			     (uint8_t *)src, n, true);
		break;
	case DST_UNEXP: {
		struct tcp_unexpected *u = ep->unexp_tail;

		memcpy(u->data + u->len + ep->data_done, src, n);
		break;
	}
	default:
		break;
	}
	ep->data_done += n;
	return true;
}

/* Reads the rest of the current payload straight into its place, and
 * behind it, in the same recvmsg, what follows in the stream into the
 * staging buffer: the trailer and the next header (RX_PEEK), so that a
 * stream of large FPDUs costs one recvmsg each and its data one copy, the
 * kernel's.  Returns payload bytes read, 0 for none now, -1 when the
 * connection ended; *drained when the socket gave less than asked. */
#define RX_PEEK (FPDU_TRAILER_MAX + 2 + DDP_UNTAGGED_LEN)
static ssize_t place_direct(struct dapl_tep *ep, bool *drained)
{
	uint32_t want = ep->data_len - ep->data_done;
	struct iovec iov[TCP_MAX_SGE + 1];
	struct msghdr m;
	ssize_t n;
	int k = 0;

	switch (ep->dst) {
	case DST_MEM:
		iov[0].iov_base = (void *)(uintptr_t)(ep->dst_to + ep->data_done);
		iov[0].iov_len = want;
		k = 1;
		break;
	case DST_RECV:
		k = tcp_sge_iov(ep->dst_wr, ep->dst_off + ep->data_done, want, iov);
		break;
	case DST_READ:
		k = tcp_sge_iov(ep->dst_wr, ep->dst_wr->done + ep->data_done, want,
				iov);
		break;
	case DST_UNEXP:
		iov[0].iov_base = ep->unexp_tail->data + ep->unexp_tail->len +
				  ep->data_done;
		iov[0].iov_len = want;
		k = 1;
		break;
	default:
		return 0;
	}
	/* the staging buffer is empty here (the caller checked) */
	ep->rbuf_rd = ep->rbuf_wr = 0;
	iov[k].iov_base = ep->rbuf;
	iov[k].iov_len = ep->trailer_len + RX_PEEK;
	memset(&m, 0, sizeof(m));
	m.msg_iov = iov;
	m.msg_iovlen = (size_t)k + 1;
	if (ep->dst == DST_MEM) {
		/* the range is checked again under the lock that keeps the
		 * registration from going while the kernel writes into it */
		int bad;

		pthread_rwlock_rdlock(&ep->dev->stag_lock);
		bad = tcp_stag_check(ep->dev, ep->dst_stag, ep->pd,
				     ep->dst_to + ep->data_done, want,
				     DAPL_TACCESS_REMOTE_WRITE);
		n = bad ? -2 : recvmsg(ep->fd, &m, MSG_DONTWAIT);
		pthread_rwlock_unlock(&ep->dev->stag_lock);
		if (bad) {
			tcp_ep_terminate(ep, TERM_RDMAP, TERM_RDMAP_PROT,
					 (unsigned)bad & 0xff, NULL, 0);
			return -1;
		}
	} else {
		n = recvmsg(ep->fd, &m, MSG_DONTWAIT);
	}
	if (n == 0) {
		ep->rx_eof = true;
		tcp_ep_fail(ep, DAPL_TCM_DISCONNECTED, 0);
		return -1;
	}
	if (n < 0) {
		if (errno == EAGAIN || errno == EINTR)
			return 0;
		tcp_ep_fail(ep, tcp_sock_error_event(errno), -errno);
		return -1;
	}
	ep->rx_bytes += (uint64_t)n;
	*drained = (uint64_t)n < (uint64_t)want + iov[k].iov_len;
	if ((uint64_t)n > want) {
		ep->rbuf_wr = (uint32_t)((uint64_t)n - want);
		n = (ssize_t)want;
	}
	ep->data_done += (uint32_t)n;
	return n;
}

/* The FPDU is complete (trailer read). */
static bool end_fpdu(struct dapl_tep *ep)
{
	if (ep->dst != DST_READ)
		ep->rx_unacked += ep->data_len;
	if (ep->ext_acks) {
		uint32_t placed = get32(ep->trailer + ep->trailer_len - 4);

		/* a count may only move forward, and never past what we sent */
		if (seq_reached(placed, ep->peer_placed) &&
		    seq_reached(ep->tx_seq, placed))
			ep->peer_placed = placed;
	}
	if (ep->is_term) {
		ep->is_term = false;
		on_terminate(ep);
		return false;
	}
	switch (ep->dst) {
	case DST_RECV:
		ep->dst_off += ep->data_len;
		if (ep->read_last) {
			recv_done(ep, DAPL_TWC_SUCCESS, ep->dst_off);
			ep->in_send = false;
			ep->rx_msn_send++;
			ep->rx_seq++;
		}
		break;
	case DST_UNEXP:
		ep->unexp_tail->len += ep->data_len;
		ep->unexp_bytes += ep->data_len;
		ep->dst_off += ep->data_len;
		if (ep->read_last) {
			ep->unexp_tail->complete = true;
			ep->in_send = false;
			ep->rx_msn_send++;
			ep->rx_seq++;
		}
		break;
	case DST_READ:
		ep->dst_wr->done += ep->data_len;
		if (ep->read_last) {
			ep->dst_wr->state = TCP_WR_DONE;
			ep->dst_wr->status = DAPL_TWC_SUCCESS;
			ep->reads_out--;
		}
		break;
	default:
		if (ep->msg_counts)   /* the last piece of an RDMA Write */
			ep->rx_seq++;
		break;
	}
	ep->dst = DST_NONE;
	update_placed(ep);
	match_unexpected(ep);
	return ep->state == TCP_EP_CONNECTED;
}

/* How many header bytes an FPDU needs once its first 4 are known; 0 if
 * it cannot be an FPDU we take. */
static uint32_t header_need(struct dapl_tep *ep)
{
	uint32_t ul = get16(ep->hdr), ctrl = get16(ep->hdr + 2);
	uint32_t op = ctrl & RDMAP_OP_MASK, need;

	if ((ctrl & DDP_VERSION_MASK) != DDP_VERSION_BITS ||
	    (ctrl & RDMAP_VERSION_MASK) != RDMAP_VERSION_BITS)
		return 0;
	if (ctrl & DDP_T)
		need = DDP_TAGGED_LEN;
	else if (op == RDMAP_READ_REQ)
		need = DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN;
	else if (ep->ext_7306 && (op == RDMAP_IMM || op == RDMAP_IMM_SE))
		need = DDP_UNTAGGED_LEN + RDMAP_IMM_LEN;
	else if (ep->ext_7306 && op == RDMAP_ATOMIC_REQ)
		need = DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN;
	else if (ep->ext_7306 && op == RDMAP_ATOMIC_RESP)
		need = DDP_UNTAGGED_LEN + RDMAP_ATOMIC_RESP_LEN;
	else if (op == RDMAP_TERMINATE) {
		/* the whole Terminate is header: bounded */
		if (ul < DDP_UNTAGGED_LEN + 4 ||
		    ul > DDP_UNTAGGED_LEN + TERM_PAYLOAD_MAX)
			return 0;
		need = ul;
	} else
		need = DDP_UNTAGGED_LEN;
	if (ul < need)
		return 0;
	return need + 2;
}

/* A Send held in part (bigger than the holding buffer) moves into the
 * receive just posted for it, and the rest of it goes there directly. */
static void adopt_partial(struct dapl_tep *ep)
{
	struct tcp_unexpected *u = ep->unexp_head;
	struct tcp_wr *wr;

	if (!u || u != ep->unexp_tail || u->complete || !ep->in_send ||
	    !(wr = next_recv(ep)))
		return;
	if (u->len > wr->len) {
		recv_done(ep, DAPL_TWC_LOCAL_LENGTH, 0);
		tcp_ep_terminate(ep, TERM_DDP, TERM_DDP_UNTAGGED,
				 TERM_CODE_TOO_LONG, NULL, 0);
		return;
	}
	tcp_sge_copy(wr, 0, u->data, u->len, true);
	unlink_head(ep);
	ep->send_to_unexp = false;
}

/* Reads and places what arrived.  false when the connection ended.  It
 * stops, without asking the socket again, once a read came back short:
 * the socket was empty then, and what came since keeps it readable for
 * the next driver (every wait is on level-triggered readiness).  It also
 * stops, with the staging buffer used up, after TCP_DRIVE_FPDUS FPDUs: a
 * peer that floods must not keep the lock (and the thread that drives,
 * maybe the progress thread every connection needs) to itself; the
 * socket, still readable, brings a driver back. */
bool tcp_rx_drive(struct dapl_tep *ep)
{
	bool drained = false;
	unsigned fpdus = 0;

	ep->rx_more = false;
	/* receives posted since: Sends held for them are placed first */
	if (ep->unexp_head && !ep->stalled) {
		match_unexpected(ep);
		if (ep->state != TCP_EP_CONNECTED)
			return false;
	}
	if (ep->stalled) {
		match_unexpected(ep);
		adopt_partial(ep);
		if (ep->state != TCP_EP_CONNECTED)
			return false;
		if (ep->unexp_bytes + TCP_UNEXPECTED_COST > TCP_UNEXPECTED_MAX &&
		    !next_recv(ep))
			return true;
		ep->stalled = false;
		if (!begin_fpdu(ep))
			return false;
		if (ep->stalled)
			return true;
		ep->rx_big = ep->data_len >= TCP_DIRECT_MIN;
		ep->phase = RX_DATA;
		ep->trailer_len = fpdu_pad(ep->ulpdu_len) + 4;
		ep->trailer_have = 0;
	}
	for (;;) {
		uint32_t avail = ep->rbuf_wr - ep->rbuf_rd, n;
		uint8_t *src = ep->rbuf + ep->rbuf_rd;

		if (avail == 0 && (drained || fpdus >= TCP_DRIVE_FPDUS)) {
			ep->rx_more = !drained;
			return true;
		}
		if (ep->phase == RX_DATA && ep->dst != DST_NONE &&
		    avail == 0 && ep->data_done < ep->data_len) {
			ssize_t r = place_direct(ep, &drained);

			if (r < 0)
				return false;
			if (r == 0)
				return true;
			if (ep->data_done == ep->data_len)
				ep->phase = RX_TRAILER;
			continue;
		}
		if (avail == 0) {
			/* between large FPDUs, no more than the next header:
			 * its data is then read straight to its place */
			size_t want = ep->rx_big ? RX_PEEK : TCP_RX_BUF;
			ssize_t r;

			ep->rbuf_rd = ep->rbuf_wr = 0;
			r = recv(ep->fd, ep->rbuf, want, MSG_DONTWAIT);
			if (r == 0) {
				ep->rx_eof = true;
				tcp_ep_fail(ep, DAPL_TCM_DISCONNECTED, 0);
				return false;
			}
			if (r < 0) {
				if (errno == EAGAIN || errno == EINTR)
					return true;
				tcp_ep_fail(ep, tcp_sock_error_event(errno),
					    -errno);
				return false;
			}
			ep->rbuf_wr = (uint32_t)r;
			ep->rx_bytes += (uint64_t)r;
			drained = (size_t)r < want;
			continue;
		}
		switch (ep->phase) {
		case RX_HDR: {
			uint32_t need = ep->hdr_have < 4 ? 4 : ep->hdr_need;

			n = need - ep->hdr_have < avail ? need - ep->hdr_have : avail;
			memcpy(ep->hdr + ep->hdr_have, src, n);
			ep->hdr_have += n;
			ep->rbuf_rd += n;
			if (ep->hdr_have == 4 && need == 4) {
				ep->hdr_need = header_need(ep);
				if (!ep->hdr_need) {
					ep->hdr_need = 4;
					reject_fpdu(ep, TERM_DDP, TERM_DDP_UNTAGGED,
						    TERM_CODE_BAD_VERSION);
					return false;
				}
				ep->ulpdu_len = get16(ep->hdr);
				if (ep->state != TCP_EP_CONNECTED &&
				    ep->state != TCP_EP_ACCEPTING)
					return false;
			}
			if (ep->hdr_have < 4 || ep->hdr_have < ep->hdr_need)
				break;
			if (!begin_fpdu(ep))
				return false;
			if (ep->state != TCP_EP_CONNECTED)
				return false;
			if (ep->stalled)
				return true;
			ep->rx_big = ep->data_len >= TCP_DIRECT_MIN;
			ep->phase = RX_DATA;
			ep->trailer_len = fpdu_pad(ep->ulpdu_len) + 4;
			ep->trailer_have = 0;
			break;
		}
		case RX_DATA:
			n = ep->data_len - ep->data_done;
			if (n > avail)
				n = avail;
			if (n && !place(ep, src, n))
				return false;
			ep->rbuf_rd += n;
			if (ep->data_done == ep->data_len)
				ep->phase = RX_TRAILER;
			break;
		case RX_TRAILER:
			n = ep->trailer_len - ep->trailer_have;
			if (n > avail)
				n = avail;
			memcpy(ep->trailer + ep->trailer_have, src, n);
			ep->trailer_have += n;
			ep->rbuf_rd += n;
			if (ep->trailer_have < ep->trailer_len)
				break;
			ep->phase = RX_HDR;
			ep->hdr_have = 0;
			fpdus++;
			if (!end_fpdu(ep))
				return false;
			/* a long stream in one drive: the sender may be
			 * waiting for these to complete, tell it now */
			if (ep->ext_acks && ep->ack_owed &&
			    (ep->rx_placed - ep->told_placed >= TCP_ACK_MSGS ||
			     ep->rx_unacked >= TCP_ACK_BYTES)) {
				ep->force_ack = true;
				tcp_ep_flush(ep);
				if (ep->state != TCP_EP_CONNECTED)
					return false;
			}
			break;
		}
	}
}
