/* Work requests: their scatter/gather lists, and their completions in
 * posting order, what transmit (tcp_tx.c), receive (tcp_rx.c) and the
 * end of a connection (tcp_ep.c) share.
 *
 * Everything here runs with ep->lock held.  A completion goes into its
 * CQ's ring (tcp_cq.c), which always has room for it. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp.h"

/* ---- segments ------------------------------------------------------------- */


/* Copies len bytes between buf and the request's segments at offset off
 * (to_sge: into them).  The caller checked off + len <= wr->len. */
void tcp_sge_copy(struct tcp_wr *wr, uint32_t off, uint8_t *buf,
		  uint32_t len, bool to_sge)
{
	int i;

	for (i = 0; i < wr->nsge && len; i++) {
		uint32_t sl = wr->sge[i].length, n;
		uint8_t *p;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		n = sl - off < len ? sl - off : len;
		p = (uint8_t *)(uintptr_t)wr->sge[i].addr + off;
		if (to_sge)
			memcpy(p, buf, n);
		else
			memcpy(buf, p, n);
		buf += n;
		len -= n;
		off = 0;
	}
}

/* Fills iov with the request's segments from off for len bytes; returns
 * the count. */
int tcp_sge_iov(const struct tcp_wr *wr, uint32_t off, uint32_t len,
		struct iovec *iov)
{
	int i, k = 0;

	for (i = 0; i < wr->nsge && len; i++) {
		uint32_t sl = wr->sge[i].length, n;

		if (off >= sl) {
			off -= sl;
			continue;
		}
		n = sl - off < len ? sl - off : len;
		iov[k].iov_base = (uint8_t *)(uintptr_t)wr->sge[i].addr + off;
		iov[k].iov_len = n;
		k++;
		len -= n;
		off = 0;
	}
	return k;
}

/* A completion; a receive that an Immediate Data consumed completes as
 * RECV_RDMA_IMM (with_imm), every other one with imm and flags zero. */
void tcp_complete_imm(struct dapl_tep *ep, struct dapl_tcq *cq,
		      struct tcp_wr *wr, enum dapl_twc_status st,
		      uint32_t byte_len, bool with_imm, uint32_t imm)
{
	struct dapl_twc wc;

	if (st == DAPL_TWC_SUCCESS && !wr->signaled)
		return;
	wc.context = wr->context;
	wc.owner = ep->owner;
	wc.status = st;
	wc.opcode = with_imm ? DAPL_TWC_RECV_RDMA_IMM
			     : (enum dapl_twc_opcode)wr->opcode;
	wc.byte_len = byte_len;
	wc.vendor_err = 0;
	wc.imm = with_imm ? imm : 0;
	wc.flags = with_imm ? DAPL_TWC_WITH_IMM : 0;
	/* an SRQ receive holds no place in a queue of the ep */
	tcp_cq_push(cq, &wc, wr == &ep->srq_wr ? NULL :
		    wr->opcode == DAPL_TWC_RECV ? &ep->rq_unreaped
						: &ep->sq_unreaped);
}

void tcp_complete(struct dapl_tep *ep, struct dapl_tcq *cq,
		  struct tcp_wr *wr, enum dapl_twc_status st,
		  uint32_t byte_len)
{
	tcp_complete_imm(ep, cq, wr, st, byte_len, false, 0);
}

/* ---- completing the send queue ------------------------------------------- */

/* Completes, in posting order, what is done. */
void tcp_complete_sends(struct dapl_tep *ep)
{
	struct tcp_queue *q = &ep->sq;

	while (q->head != q->frame) {
		struct tcp_wr *wr = qwr(q, q->head);

		if (wr->state != TCP_WR_DONE) {
			if (wants_response(wr->opcode))
				break;
			if (wr->state != TCP_WR_SENT || ep->tx_pos < wr->tx_end)
				break;
			if (ep->ext_acks && !seq_reached(ep->peer_placed, wr->seq))
				break;
			wr->status = DAPL_TWC_SUCCESS;
		}
		tcp_complete(ep, ep->scq, wr, (enum dapl_twc_status)wr->status,
			     wr->len);
		q->head++;
	}
	if (ep->read_head - q->head > q->tail - q->head)
		ep->read_head = q->head;
}

void tcp_ep_flush_all(struct dapl_tep *ep)
{
	struct tcp_queue *q = &ep->sq;

	/* what was done before the end still completes as it was */
	while (q->head != q->tail) {
		struct tcp_wr *wr = qwr(q, q->head);
		enum dapl_twc_status st = DAPL_TWC_FLUSHED;

		if (wr->state == TCP_WR_DONE)
			st = (enum dapl_twc_status)wr->status;
		else if (wr->state == TCP_WR_SENT &&
			 !wants_response(wr->opcode) &&
			 ep->tx_pos >= wr->tx_end &&
			 (!ep->ext_acks || seq_reached(ep->peer_placed, wr->seq)))
			st = DAPL_TWC_SUCCESS;
		if (st == DAPL_TWC_SUCCESS && !wr->signaled) {
			q->head++;
			continue;
		}
		wr->signaled = true;
		tcp_complete(ep, ep->scq, wr, st, wr->len);
		q->head++;
	}
	q->frame = q->head;
	ep->read_head = q->head;
	ep->reads_out = 0;
	q = &ep->rq;
	while (q->head != q->tail) {
		tcp_complete(ep, ep->rcq, qwr(q, q->head), DAPL_TWC_FLUSHED, 0);
		q->head++;
	}
	if (ep->srq_wr_busy) {
		tcp_complete(ep, ep->rcq, &ep->srq_wr, DAPL_TWC_FLUSHED, 0);
		ep->srq_wr_busy = false;
	}
	tcp_ep_drop_unexpected(ep);
	ep->resp_head = ep->resp_tail = 0;
	ep->iov_at = ep->iov_n = 0;
	ep->dst = DST_NONE;
	ep->in_send = false;
}
