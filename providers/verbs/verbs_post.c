/* Posting: one CQ lock, no allocation. */
#include "config.h"

#include <errno.h>
#include <string.h>
#include <arpa/inet.h>

#include "verbs.h"

int64_t verbs_sge_fill(struct ibv_sge *out, const struct dapl_tsge *sge,
		       int nsge, uint32_t max)
{
	int64_t total = 0;
	int i;

	if (nsge < 0 || (uint32_t)nsge > max || (nsge && !sge))
		return -EINVAL;
	for (i = 0; i < nsge; i++) {
		out[i].addr = sge[i].addr;
		out[i].length = sge[i].length;
		out[i].lkey = sge[i].lkey;
		total += sge[i].length;
	}
	if (total > UINT32_MAX)
		return -EINVAL;
	return total;
}

int verbs_post_err(int ret)
{
	/* libsiw returns negative errno values, the other providers
	 * positive ones; a full queue is ENOSPC to the seam */
	int e = ret < 0 ? -ret : ret;

	return e == ENOMEM ? -ENOSPC : -e;
}

void verbs_recv_list(struct ibv_recv_wr *wr, struct ibv_sge *list, int nsge,
		     bool iwarp)
{
	wr->sg_list = nsge ? list : NULL;
	wr->num_sge = nsge;
	/* libsiw refuses a receive without segments: one of no bytes
	 * (whose key the device does not look at) takes the same message */
	if (!nsge && iwarp) {
		memset(list, 0, sizeof(*list));
		wr->sg_list = list;
		wr->num_sge = 1;
	}
}

struct verbs_slot *verbs_send_claim(struct dapl_tep *ep,
				    enum dapl_twc_opcode op, uint64_t context,
				    unsigned flags, uint32_t len, int *err)
{
	struct verbs_slot *s;

	*err = 0;
	if (ep->state == VERBS_EP_IDLE || ep->state == VERBS_EP_CONNECTING) {
		*err = -ENOTCONN;
		return NULL;
	}
	s = verbs_queue_claim(ep->sq);
	if (!s) {
		*err = -ENOSPC;
		return NULL;
	}
	s->context = context;
	s->opcode = (uint8_t)op;
	s->byte_len = len;
	s->signaled = (flags & DAPL_TPOST_SIGNALED) != 0;
	if (ep->state == VERBS_EP_DOWN) {
		/* the connection is over: flushed without the device */
		verbs_slot_done_now(ep->sq, s, DAPL_TWC_FLUSHED);
		verbs_cq_kick(ep->scq);
		return NULL;
	}
	return s;
}

unsigned verbs_send_flags(unsigned flags)
{
	unsigned f = 0;

	if (flags & DAPL_TPOST_SIGNALED)
		f |= IBV_SEND_SIGNALED;
	if (flags & DAPL_TPOST_SOLICITED)
		f |= IBV_SEND_SOLICITED;
	if (flags & DAPL_TPOST_FENCE)
		f |= IBV_SEND_FENCE;
	return f;
}

/* scq->lock held. */
static int post_locked(struct dapl_tep *ep, struct ibv_send_wr *wr,
		       enum dapl_twc_opcode op, uint64_t context,
		       unsigned flags, uint32_t len)
{
	struct ibv_send_wr *bad;
	struct verbs_slot *s;
	int err;

	s = verbs_send_claim(ep, op, context, flags, len, &err);
	if (!s)
		return err;
	wr->wr_id = (uint64_t)(uintptr_t)s;
	wr->next = NULL;
	wr->send_flags |= verbs_send_flags(flags);
	err = ibv_post_send(ep->qp, wr, &bad);
	if (err) {
		verbs_queue_unclaim(ep->sq);
		return verbs_post_err(err);
	}
	return 0;
}

static int post_request(struct dapl_tep *ep, enum ibv_wr_opcode wop,
			enum dapl_twc_opcode op, const struct dapl_tsge *sge,
			int nsge, uint64_t raddr, uint32_t rkey, uint32_t imm,
			uint64_t context, unsigned flags)
{
	struct ibv_sge list[VERBS_MAX_SGE];
	struct ibv_send_wr wr;
	int64_t total;
	int err;

	total = verbs_sge_fill(list, sge, nsge, ep->max_send_sge);
	if (total < 0)
		return (int)total;
	memset(&wr, 0, sizeof(wr));
	wr.opcode = wop;
	wr.sg_list = nsge ? list : NULL;
	wr.num_sge = nsge;
	if (wop != IBV_WR_SEND) {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	if (wop == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(imm);       /* verbs carries it in network order */
	/* small sends and writes go inline: no DMA read of the buffer */
	if (wop != IBV_WR_RDMA_READ && total > 0 &&
	    (uint64_t)total <= ep->max_inline)
		wr.send_flags = IBV_SEND_INLINE;
	/* iWARP completes a Send or Write once sent, a Read only when its
	 * response is in: fenced behind earlier Reads (free when none is
	 * out), they complete in the order they were posted, as the seam
	 * promises */
	if (wop != IBV_WR_RDMA_READ && ep->dev->iwarp)
		wr.send_flags |= IBV_SEND_FENCE;
	pthread_mutex_lock(&ep->scq->lock);
	err = post_locked(ep, &wr, op, context, flags, (uint32_t)total);
	pthread_mutex_unlock(&ep->scq->lock);
	return err;
}

int verbs_post_send(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		    uint64_t context, unsigned flags)
{
	return post_request(ep, IBV_WR_SEND, DAPL_TWC_SEND, sge, nsge, 0, 0, 0,
			    context, flags);
}

int verbs_post_rdma_write(struct dapl_tep *ep, const struct dapl_tsge *sge,
			  int nsge, uint64_t remote_addr, uint32_t rkey,
			  uint64_t context, unsigned flags)
{
	return post_request(ep, IBV_WR_RDMA_WRITE, DAPL_TWC_RDMA_WRITE, sge,
			    nsge, remote_addr, rkey, 0, context, flags);
}

int verbs_post_rdma_read(struct dapl_tep *ep, const struct dapl_tsge *sge,
			 int nsge, uint64_t remote_addr, uint32_t rkey,
			 uint64_t context, unsigned flags)
{
	return post_request(ep, IBV_WR_RDMA_READ, DAPL_TWC_RDMA_READ, sge,
			    nsge, remote_addr, rkey, 0, context, flags);
}

/* ---- the DAT 2.0 IB extensions ------------------------------------------------ */

unsigned verbs_ep_extensions(struct dapl_tep *ep)
{
	unsigned ext;

	if (!ep)
		return 0;
	pthread_mutex_lock(&ep->scq->lock);
	ext = ep->state == VERBS_EP_CONNECTED ? ep->dev->ext : 0;
	pthread_mutex_unlock(&ep->scq->lock);
	return ext;
}

int verbs_post_rdma_write_imm(struct dapl_tep *ep, const struct dapl_tsge *sge,
			      int nsge, uint64_t remote_addr, uint32_t rkey,
			      uint32_t imm, uint64_t context, unsigned flags)
{
	if (!(ep->dev->ext & DAPL_TDEV_WRITE_IMM))
		return -EOPNOTSUPP;
	return post_request(ep, IBV_WR_RDMA_WRITE_WITH_IMM,
			    DAPL_TWC_RDMA_WRITE_IMM, sge, nsge, remote_addr,
			    rkey, imm, context, flags);
}

int verbs_post_atomic(struct dapl_tep *ep, enum dapl_tatomic_op op,
		      const struct dapl_tsge *result, uint64_t remote_addr,
		      uint32_t rkey, uint64_t add_or_compare, uint64_t swap,
		      uint64_t context, unsigned flags)
{
	struct ibv_sge list[1];
	struct ibv_send_wr wr;
	enum dapl_twc_opcode top;
	int err;

	if (!(ep->dev->ext & DAPL_TDEV_ATOMICS))
		return -EOPNOTSUPP;
	/* one 8-byte result buffer, an 8-byte aligned target: what verbs
	 * atomics are defined on (the device would fail the request later,
	 * and end the connection with it) */
	if (!result || result->length != sizeof(uint64_t) ||
	    (remote_addr & (sizeof(uint64_t) - 1)))
		return -EINVAL;
	memset(&wr, 0, sizeof(wr));
	switch (op) {
	case DAPL_TATOMIC_FETCH_ADD:
		wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		top = DAPL_TWC_FETCH_ADD;
		break;
	case DAPL_TATOMIC_CMP_SWAP:
		wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		wr.wr.atomic.swap = swap;
		top = DAPL_TWC_CMP_SWAP;
		break;
	default:
		return -EINVAL;
	}
	list[0].addr = result->addr;
	list[0].length = result->length;
	list[0].lkey = result->lkey;
	wr.sg_list = list;
	wr.num_sge = 1;
	wr.wr.atomic.remote_addr = remote_addr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = add_or_compare;
	pthread_mutex_lock(&ep->scq->lock);
	err = post_locked(ep, &wr, top, context, flags, result->length);
	pthread_mutex_unlock(&ep->scq->lock);
	return err;
}

int verbs_post_recv(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		    uint64_t context)
{
	struct ibv_sge list[VERBS_MAX_SGE];
	struct ibv_recv_wr wr, *bad;
	struct verbs_queue *q = ep->rq;
	struct verbs_slot *s;
	int64_t total;
	int err = 0;

	if (!q)
		return -EINVAL;         /* its receives come from the SRQ */
	total = verbs_sge_fill(list, sge, nsge, ep->max_recv_sge);
	if (total < 0)
		return (int)total;
	memset(&wr, 0, sizeof(wr));
	verbs_recv_list(&wr, list, nsge, ep->dev->iwarp);
	pthread_mutex_lock(&q->cq->lock);
	s = verbs_queue_claim(q);
	if (!s) {
		err = -ENOSPC;
		goto out;
	}
	s->context = context;
	s->opcode = DAPL_TWC_RECV;
	if (ep->state == VERBS_EP_DOWN) {
		verbs_slot_done_now(q, s, DAPL_TWC_FLUSHED);
		verbs_cq_kick(q->cq);
		goto out;
	}
	wr.wr_id = (uint64_t)(uintptr_t)s;
	err = ibv_post_recv(ep->qp, &wr, &bad);
	if (err) {
		verbs_queue_unclaim(q);
		err = verbs_post_err(err);
	}
out:
	pthread_mutex_unlock(&q->cq->lock);
	return err;
}
