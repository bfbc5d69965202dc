/* Transmit: posting, framing FPDUs onto the socket, and the acks,
 * Read Responses and Terminates we send.
 *
 * Every function here runs with ep->lock held (the post_* entry points
 * take it).  Requests are framed in posting order (reads wait for ORD
 * and fenced requests for earlier reads), gathered with their headers
 * (tcp_wire.h) and the Read Responses we owe into one sendmsg of up to
 * TCP_TX_BATCH FPDUs; what the socket does not take waits for EPOLLOUT.
 * An ack (tcp_wire.h: the placed count in the CRC field) rides on every
 * FPDU, or goes alone in an empty Write when nothing else is going. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"

/* ---- helpers ------------------------------------------------------------- */

static int64_t sge_total(const struct dapl_tsge *sge, int nsge)
{
	int64_t t = 0;
	int i;

	if (nsge < 0 || nsge > TCP_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < nsge; i++)
		t += sge[i].length;
	if (t > UINT32_MAX)
		return -EINVAL;
	return t;
}

/* ---- transmit ------------------------------------------------------------- */

struct batch {
	int fpdus;
};

/* Appends one FPDU: hdr (already written, hlen bytes, starting with the
 * MPA length), payload iovs, pad and the CRC field. */
static bool batch_room(const struct dapl_tep *ep, int fpdus, int niov)
{
	return fpdus < TCP_TX_BATCH &&
	       ep->iov_n + niov + 2 <= (int)(sizeof(ep->iov) / sizeof(ep->iov[0]));
}

static void batch_add(struct dapl_tep *ep, int slot, size_t hlen,
		      const struct iovec *data, int ndata, uint32_t dlen,
		      uint32_t ulpdu_len)
{
	unsigned pad = fpdu_pad(ulpdu_len);
	uint8_t *t = ep->trailers[slot];
	int i;

	ep->iov[ep->iov_n].iov_base = ep->hdrs[slot];
	ep->iov[ep->iov_n].iov_len = hlen;
	ep->iov_n++;
	for (i = 0; i < ndata; i++)
		ep->iov[ep->iov_n++] = data[i];
	memset(t, 0, 4);
	/* the CRC field: our placed count for a libdat peer, else zero */
	put32(t + pad, ep->ext_acks ? ep->rx_placed : 0);
	ep->iov[ep->iov_n].iov_base = t;
	ep->iov[ep->iov_n].iov_len = pad + 4;
	ep->iov_n++;
	ep->tx_queued += hlen + dlen + pad + 4;
	TCP_TRACE(ep, "tx ctrl %04x len %u placed %u", get16(ep->hdrs[slot] + 2),
		  dlen, ep->rx_placed);
	if (ep->ext_acks) {
		ep->told_placed = ep->rx_placed;
		ep->rx_unacked = 0;
		ep->ack_owed = false;
		ep->force_ack = ep->nudge = false;
		ep->ack_age = 0;
		ep->ack_ticked = false;
	}
}

static bool frame_term(struct dapl_tep *ep, int *fpdus)
{
	if (!ep->term_queued || ep->term_sent || !batch_room(ep, *fpdus, 0))
		return false;
	memcpy(ep->hdrs[*fpdus], ep->term_buf, ep->term_len);
	batch_add(ep, *fpdus, ep->term_len, NULL, 0, 0,
		  ep->term_len - 2);
	ep->term_sent = true;
	(*fpdus)++;
	return true;
}

/* A zero-length RDMA Write: the RTR, or a bare acknowledgement. */
static void frame_empty_write(struct dapl_tep *ep, int *fpdus, uint32_t stag)
{
	uint8_t *h = ep->hdrs[*fpdus];
	size_t hl = fpdu_put_tagged(h, DDP_TAGGED_LEN, true, RDMAP_WRITE, stag, 0);

	batch_add(ep, *fpdus, hl, NULL, 0, 0, DDP_TAGGED_LEN);
	(*fpdus)++;
}

static void frame_read_req(struct dapl_tep *ep, int *fpdus, uint32_t sink,
			   uint32_t len, uint32_t src_stag, uint64_t src_to)
{
	uint8_t *h = ep->hdrs[*fpdus];
	uint32_t ul = DDP_UNTAGGED_LEN + RDMAP_READ_REQ_LEN;
	size_t hl = fpdu_put_untagged(h, ul, true, RDMAP_READ_REQ, DDP_QN_READ,
				      ++ep->msn_read, 0);

	put32(h + hl, sink);
	put64(h + hl + 4, 0);
	put32(h + hl + 12, len);
	put32(h + hl + 16, src_stag);
	put64(h + hl + 20, src_to);
	batch_add(ep, *fpdus, hl + RDMAP_READ_REQ_LEN, NULL, 0, 0, ul);
	(*fpdus)++;
}

/* Frames the next piece of the read response at the head. */
static bool frame_resp(struct dapl_tep *ep, int *fpdus)
{
	struct tcp_read_resp *r;
	struct iovec iov;
	uint32_t n;
	bool last;

	if (ep->resp_head == ep->resp_tail || !batch_room(ep, *fpdus, 1))
		return false;
	r = &ep->resp[ep->resp_head % ep->resp_cap];
	if (r->atomic) {
		uint8_t *h = ep->hdrs[*fpdus];
		uint32_t ul = DDP_UNTAGGED_LEN + RDMAP_ATOMIC_RESP_LEN;
		size_t hl = fpdu_put_untagged(h, ul, true, RDMAP_ATOMIC_RESP,
					      DDP_QN_ATOMIC_RESP,
					      ++ep->msn_aresp, 0);

		put32(h + hl, r->req_id);
		put64(h + hl + 4, r->orig);
		batch_add(ep, *fpdus, hl + RDMAP_ATOMIC_RESP_LEN, NULL, 0, 0, ul);
		ep->resp_head++;
		(*fpdus)++;
		return true;
	}
	n = r->len - r->done < TCP_FPDU_DATA ? r->len - r->done : TCP_FPDU_DATA;
	last = r->done + n == r->len;
	fpdu_put_tagged(ep->hdrs[*fpdus], DDP_TAGGED_LEN + n, last,
			RDMAP_READ_RESP, r->sink, r->sink_to + r->done);
	iov.iov_base = (void *)(uintptr_t)(r->src + r->done);
	iov.iov_len = n;
	/* checked again right before each sendmsg that carries it */
	if (n) {
		struct tcp_resp_chk *k = &ep->resp_chk[ep->nresp_chk++];

		k->stag = r->stag;
		k->addr = r->src + r->done;
		k->len = n;
	}
	batch_add(ep, *fpdus, 2 + DDP_TAGGED_LEN, &iov, n ? 1 : 0, n,
		  DDP_TAGGED_LEN + n);
	r->done += n;
	if (last)
		ep->resp_head++;
	(*fpdus)++;
	return true;
}

/* Frames the next piece of the oldest send-queue request not yet on the
 * wire; false when nothing (more) can go now. */
static bool frame_request(struct dapl_tep *ep, int *fpdus)
{
	struct tcp_queue *q = &ep->sq;
	struct iovec iov[TCP_MAX_SGE];
	struct tcp_wr *wr;
	uint32_t n, hl;
	int k;
	bool last;

	if (q->frame == q->tail || ep->hold_tx)
		return false;
	wr = qwr(q, q->frame);
	if (wr->fence && ep->reads_out)
		return false;
	if (!batch_room(ep, *fpdus, TCP_MAX_SGE))
		return false;
	switch (wr->opcode) {
	case DAPL_TWC_FETCH_ADD:
	case DAPL_TWC_CMP_SWAP: {
		/* atomics share the Read Request queue and its ORD */
		uint8_t *h = ep->hdrs[*fpdus];
		uint32_t ul = DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN;
		bool add = wr->opcode == DAPL_TWC_FETCH_ADD;
		size_t off;

		if (ep->reads_out >= (ep->ord ? ep->ord : 1))
			return false;
		wr->sink = q->frame;     /* the Request Identifier */
		off = fpdu_put_untagged(h, ul, true, RDMAP_ATOMIC_REQ,
					DDP_QN_READ, ++ep->msn_read, 0);
		put32(h + off, add ? RDMAP_AOP_FETCH_ADD : RDMAP_AOP_CMP_SWAP);
		put32(h + off + 4, wr->sink);
		put32(h + off + 8, wr->rkey);
		put64(h + off + 12, wr->raddr);
		/* no masks: a plain 64-bit add (no carry boundaries), a
		 * whole-word compare and swap */
		put64(h + off + 20, add ? wr->add_or_cmp : wr->swap);
		put64(h + off + 28, add ? 0 : UINT64_MAX);
		put64(h + off + 36, add ? 0 : wr->add_or_cmp);
		put64(h + off + 44, add ? 0 : UINT64_MAX);
		batch_add(ep, *fpdus, off + RDMAP_ATOMIC_REQ_LEN, NULL, 0, 0, ul);
		(*fpdus)++;
		wr->state = TCP_WR_SENT;
		ep->reads_out++;
		q->frame++;
		return true;
	}
	case DAPL_TWC_RDMA_WRITE_IMM:
		if (wr->done == wr->len) {
			/* the write is out (or had no data): its immediate,
			 * which takes a receive like a Send */
			uint8_t *h = ep->hdrs[*fpdus];
			uint32_t ul = DDP_UNTAGGED_LEN + RDMAP_IMM_LEN;
			size_t off = fpdu_put_untagged(h, ul, true,
				wr->solicited ? RDMAP_IMM_SE : RDMAP_IMM,
				DDP_QN_SEND, ++ep->msn_send, 0);

			put64(h + off, wr->imm);
			batch_add(ep, *fpdus, off + RDMAP_IMM_LEN, NULL, 0, 0, ul);
			(*fpdus)++;
			wr->imm_framed = true;
			wr->seq = ++ep->tx_seq;
			wr->tx_end = ep->tx_queued;
			wr->state = TCP_WR_SENT;
			q->frame++;
			return true;
		}
		n = wr->len - wr->done < TCP_FPDU_DATA ? wr->len - wr->done
						      : TCP_FPDU_DATA;
		last = wr->done + n == wr->len;
		hl = (uint32_t)fpdu_put_tagged(ep->hdrs[*fpdus],
			DDP_TAGGED_LEN + n, last, RDMAP_WRITE, wr->rkey,
			wr->raddr + wr->done);
		k = tcp_sge_iov(wr, wr->done, n, iov);
		batch_add(ep, *fpdus, hl, iov, k, n, hl - 2 + n);
		wr->done += n;
		(*fpdus)++;
		if (last)
			ep->tx_seq++;   /* the Write is a message of its own */
		return true;
	case DAPL_TWC_RDMA_READ:
		if (ep->reads_out >= (ep->ord ? ep->ord : 1))
			return false;
		wr->sink = (q->frame * 2654435761u) ^ ep->sink_salt;
		frame_read_req(ep, fpdus, wr->sink, wr->len, wr->rkey, wr->raddr);
		wr->state = TCP_WR_SENT;
		ep->reads_out++;
		q->frame++;
		return true;
	case DAPL_TWC_SEND:
		n = wr->len - wr->done < TCP_FPDU_DATA ? wr->len - wr->done
						      : TCP_FPDU_DATA;
		last = wr->done + n == wr->len;
		if (wr->done == 0)
			wr->msn = ++ep->msn_send;
		hl = (uint32_t)fpdu_put_untagged(ep->hdrs[*fpdus],
			DDP_UNTAGGED_LEN + n, last,
			wr->solicited ? RDMAP_SEND_SE : RDMAP_SEND,
			DDP_QN_SEND, wr->msn, wr->done);
		break;
	default: /* RDMA Write */
		n = wr->len - wr->done < TCP_FPDU_DATA ? wr->len - wr->done
						      : TCP_FPDU_DATA;
		last = wr->done + n == wr->len;
		/* STag 0 with no data is our bare ack, never a Write */
		hl = (uint32_t)fpdu_put_tagged(ep->hdrs[*fpdus],
			DDP_TAGGED_LEN + n, last, RDMAP_WRITE,
			wr->len || wr->rkey ? wr->rkey : 1,
			wr->raddr + wr->done);
		break;
	}
	k = tcp_sge_iov(wr, wr->done, n, iov);
	batch_add(ep, *fpdus, hl, iov, k, n, hl - 2 + n);
	wr->done += n;
	(*fpdus)++;
	if (last) {
		wr->seq = ++ep->tx_seq;
		wr->tx_end = ep->tx_queued;
		wr->state = TCP_WR_SENT;
		q->frame++;
	}
	return true;
}

static void update_out(struct dapl_tep *ep, bool want)
{
	if (ep->want_out == want)
		return;
	ep->want_out = want;
	tcp_dev_watch(ep);
	tcp_cq_watch(ep);
}

/* Builds the next batch; false if there is nothing to send. */
static bool build_batch(struct dapl_tep *ep)
{
	int fpdus = 0;

	ep->iov_at = ep->iov_n = 0;
	ep->nresp_chk = 0;
	if (frame_term(ep, &fpdus))
		return true;
	if (ep->term_queued)
		return false;   /* nothing after a Terminate */
	if (ep->rtr_write) {
		ep->rtr_write = false;
		frame_empty_write(ep, &fpdus, 0);
	}
	while (frame_resp(ep, &fpdus))
		;
	while (frame_request(ep, &fpdus))
		;
	if (!fpdus && ep->ext_acks && !ep->hold_tx &&
	    ((ep->force_ack && ep->rx_placed != ep->told_placed) || ep->nudge))
		frame_empty_write(ep, &fpdus, 0);
	ep->force_ack = ep->nudge = false;
	return fpdus > 0;
}

void tcp_ep_flush(struct dapl_tep *ep)
{
	if (ep->fd < 0 || (ep->state != TCP_EP_CONNECTED &&
			   !(ep->state == TCP_EP_ACCEPTING && ep->term_queued)))
		return;
	for (;;) {
		ssize_t n;
		struct msghdr m;
		int cnt;

		if (ep->iov_at == ep->iov_n && !build_batch(ep))
			break;
		memset(&m, 0, sizeof(m));
		cnt = ep->iov_n - ep->iov_at;
		m.msg_iov = &ep->iov[ep->iov_at];
		m.msg_iovlen = (size_t)(cnt > 1024 ? 1024 : cnt);
		if (ep->nresp_chk) {
			/* Read Response data: its registration may have gone
			 * since the request was checked; the write lock of
			 * mr_dereg waits for this send */
			int i, bad = 0;

			pthread_rwlock_rdlock(&ep->dev->stag_lock);
			for (i = 0; i < ep->nresp_chk && !bad; i++)
				bad = tcp_stag_check(ep->dev, ep->resp_chk[i].stag,
						     ep->pd, ep->resp_chk[i].addr,
						     ep->resp_chk[i].len,
						     DAPL_TACCESS_REMOTE_READ);
			n = bad ? -1 : sendmsg(ep->fd, &m,
					       MSG_DONTWAIT | MSG_NOSIGNAL);
			pthread_rwlock_unlock(&ep->dev->stag_lock);
			if (bad) {
				/* the frame is promised and cannot be sent */
				TCP_TRACE(ep, "read source deregistered");
				tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -EFAULT);
				return;
			}
		} else {
			n = sendmsg(ep->fd, &m, MSG_DONTWAIT | MSG_NOSIGNAL);
		}
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				update_out(ep, true);
				break;
			}
			/* EFAULT: memory under a request or a read response
			 * went away; anything else: the connection did */
			tcp_ep_fail(ep, tcp_sock_error_event(errno), -errno);
			return;
		}
		ep->tx_pos += (uint64_t)n;
		while (n > 0 && ep->iov_at < ep->iov_n) {
			struct iovec *v = &ep->iov[ep->iov_at];

			if ((size_t)n >= v->iov_len) {
				n -= (ssize_t)v->iov_len;
				ep->iov_at++;
			} else {
				v->iov_base = (uint8_t *)v->iov_base + n;
				v->iov_len -= (size_t)n;
				n = 0;
			}
		}
	}
	if (ep->iov_at == ep->iov_n)
		update_out(ep, false);
	if (ep->term_sent && ep->iov_at == ep->iov_n) {
		tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -ECONNABORTED);
		return;
	}
	tcp_complete_sends(ep);
}

void tcp_ep_terminate(struct dapl_tep *ep, unsigned layer, unsigned etype,
		      unsigned code, const uint8_t *hdr, size_t hdr_len)
{
	uint8_t *p = ep->term_buf;
	uint32_t ul, hdrct = 0;
	size_t off;

	if (ep->term_queued || ep->fd < 0)
		return;
	if (hdr_len > TERM_PAYLOAD_MAX - 4)
		hdr_len = TERM_PAYLOAD_MAX - 4;
	if (hdr_len)
		hdrct = TERM_HDRCT_M | TERM_HDRCT_D |
			(hdr_len > 2 + DDP_UNTAGGED_LEN ? TERM_HDRCT_R : 0);
	ul = (uint32_t)(DDP_UNTAGGED_LEN + 4 + hdr_len);
	off = fpdu_put_untagged(p, ul, true, RDMAP_TERMINATE, DDP_QN_TERM,
				++ep->msn_term, 0);
	put32(p + off, (layer & 15) << 28 | (etype & 15) << 24 |
		       (code & 255) << 16 | hdrct);
	off += 4;
	if (hdr_len)
		memcpy(p + off, hdr, hdr_len);
	ep->term_len = (uint32_t)(off + hdr_len);
	ep->term_queued = true;
	ep->hold_tx = false;
	if (ep->state == TCP_EP_CONNECTED || ep->state == TCP_EP_ACCEPTING)
		tcp_ep_flush(ep);
	/* a socket that will not take it: the connection ends anyway */
	if (ep->state != TCP_EP_DOWN && ep->state != TCP_EP_IDLE)
		tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -ECONNABORTED);
}

/* ---- posting -------------------------------------------------------------- */

/* ext: the RFC 7306 operands (immediate; atomic add/compare, swap) */
struct post_ext {
	uint32_t imm;
	uint64_t add_or_cmp, swap;
};

static int post_ex(struct dapl_tep *ep, struct tcp_queue *q,
		   enum dapl_twc_opcode op, const struct dapl_tsge *sge,
		   int nsge, uint64_t raddr, uint32_t rkey, uint64_t context,
		   unsigned flags, const struct post_ext *ext)
{
	struct tcp_wr *wr;
	int64_t total = sge_total(sge, nsge);
	bool is_send = q == &ep->sq;

	if (total < 0)
		return (int)total;
	if ((uint32_t)nsge > (is_send ? ep->max_send_sge : ep->max_recv_sge))
		return -EINVAL;
	if (op != DAPL_TWC_RECV && op != DAPL_TWC_SEND && total &&
	    raddr + (uint64_t)total < raddr)
		return -EINVAL;     /* a remote range that wraps */
	pthread_mutex_lock(&ep->lock);
	if (is_send && ep->state != TCP_EP_CONNECTED &&
	    ep->state != TCP_EP_DOWN) {
		pthread_mutex_unlock(&ep->lock);
		return -ENOTCONN;
	}
	/* the extensions only with a peer that announced them: another
	 * never sees their frames */
	if (ext && !ep->ext_7306) {
		pthread_mutex_unlock(&ep->lock);
		return -EOPNOTSUPP;
	}
	/* a request holds its place until its completion is handed out */
	if ((uint64_t)(q->tail - q->head) +
	    atomic_load(is_send ? &ep->sq_unreaped : &ep->rq_unreaped) >=
	    q->depth) {
		pthread_mutex_unlock(&ep->lock);
		return -ENOSPC;
	}
	wr = qwr(q, q->tail);
	wr->context = context;
	wr->opcode = (uint8_t)op;
	wr->state = TCP_WR_QUEUED;
	wr->status = DAPL_TWC_SUCCESS;
	wr->nsge = (uint8_t)nsge;
	wr->signaled = op == DAPL_TWC_RECV || (flags & DAPL_TPOST_SIGNALED);
	wr->fence = (flags & DAPL_TPOST_FENCE) != 0;
	wr->solicited = (flags & DAPL_TPOST_SOLICITED) != 0;
	wr->len = (uint32_t)total;
	wr->done = 0;
	wr->rkey = rkey;
	wr->raddr = raddr;
	wr->imm = ext ? ext->imm : 0;
	wr->imm_framed = false;
	wr->add_or_cmp = ext ? ext->add_or_cmp : 0;
	wr->swap = ext ? ext->swap : 0;
	if (nsge)   /* (a write with immediate may have no data, sge NULL) */
		memcpy(wr->sge, sge, (size_t)nsge * sizeof(*sge));
	q->tail++;
	ep->posts++;
	if (ep->state == TCP_EP_DOWN) {
		/* like a queue pair in the error state: it flushes */
		if (is_send) {
			tcp_complete_sends(ep);
			tcp_ep_flush_all(ep);
		} else {
			tcp_ep_flush_all(ep);
		}
	} else if (is_send) {
		tcp_ep_flush(ep);
	} else if (ep->unexp_head || ep->phase == RX_DATA) {
		/* a Send may be waiting for exactly this receive */
		tcp_ep_drive(ep);
	}
	pthread_mutex_unlock(&ep->lock);
	return 0;
}

static int post(struct dapl_tep *ep, struct tcp_queue *q,
		enum dapl_twc_opcode op, const struct dapl_tsge *sge, int nsge,
		uint64_t raddr, uint32_t rkey, uint64_t context, unsigned flags)
{
	return post_ex(ep, q, op, sge, nsge, raddr, rkey, context, flags, NULL);
}

int tcp_post_send(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context, unsigned flags)
{
	return post(ep, &ep->sq, DAPL_TWC_SEND, sge, nsge, 0, 0, context, flags);
}

int tcp_post_recv(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context)
{
	if (ep->srq)
		return -EINVAL;
	return post(ep, &ep->rq, DAPL_TWC_RECV, sge, nsge, 0, 0, context,
		    DAPL_TPOST_SIGNALED);
}

int tcp_post_rdma_write(struct dapl_tep *ep, const struct dapl_tsge *sge,
			int nsge, uint64_t raddr, uint32_t rkey,
			uint64_t context, unsigned flags)
{
	return post(ep, &ep->sq, DAPL_TWC_RDMA_WRITE, sge, nsge, raddr, rkey,
		    context, flags);
}

int tcp_post_rdma_read(struct dapl_tep *ep, const struct dapl_tsge *sge,
		       int nsge, uint64_t raddr, uint32_t rkey,
		       uint64_t context, unsigned flags)
{
	return post(ep, &ep->sq, DAPL_TWC_RDMA_READ, sge, nsge, raddr, rkey,
		    context, flags);
}

unsigned tcp_ep_extensions(struct dapl_tep *ep)
{
	unsigned x = 0;

	pthread_mutex_lock(&ep->lock);
	if (ep->state == TCP_EP_CONNECTED && ep->ext_7306)
		x = DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS;
	pthread_mutex_unlock(&ep->lock);
	return x;
}

int tcp_post_rdma_write_imm(struct dapl_tep *ep, const struct dapl_tsge *sge,
			    int nsge, uint64_t raddr, uint32_t rkey,
			    uint32_t imm, uint64_t context, unsigned flags)
{
	struct post_ext x = { .imm = imm };

	return post_ex(ep, &ep->sq, DAPL_TWC_RDMA_WRITE_IMM, sge, nsge, raddr,
		       rkey, context, flags, &x);
}

int tcp_post_atomic(struct dapl_tep *ep, enum dapl_tatomic_op op,
		    const struct dapl_tsge *result, uint64_t raddr,
		    uint32_t rkey, uint64_t add_or_compare, uint64_t swap,
		    uint64_t context, unsigned flags)
{
	struct post_ext x = { .add_or_cmp = add_or_compare, .swap = swap };

	/* the original value lands in one 8-byte segment; the target
	 * word is 8-byte aligned (the target refuses others too) */
	if (!result || result->length != 8 || (raddr & 7) ||
	    (op != DAPL_TATOMIC_FETCH_ADD && op != DAPL_TATOMIC_CMP_SWAP))
		return -EINVAL;
	return post_ex(ep, &ep->sq, op == DAPL_TATOMIC_FETCH_ADD ?
		       DAPL_TWC_FETCH_ADD : DAPL_TWC_CMP_SWAP, result, 1,
		       raddr, rkey, context, flags, &x);
}

/* Something for tcp_ep_flush to frame or push. */
bool tcp_tx_pending(const struct dapl_tep *ep)
{
	return ep->iov_at != ep->iov_n || ep->force_ack || ep->nudge ||
	       ep->rtr_write ||
	       ep->sq.frame != ep->sq.tail || ep->resp_head != ep->resp_tail ||
	       (ep->term_queued && !ep->term_sent);
}
