/* Posting: one lock (the CQ the queue completes to), no allocation.
 *
 * A request is given to libfabric at once unless it must wait: receives
 * posted before the fid_ep exists, and anything posted behind a FENCE
 * request that waits for earlier RDMA Reads (tcp ignores FI_FENCE).  Only
 * those keep their segments (the queue's held array, made the first time
 * one is held: the one allocation there can be). */
#include "config.h"

#include <errno.h>

#include "ofi.h"

int64_t ofi_sge_total(const struct dapl_tsge *sge, int nsge, uint32_t max)
{
	uint64_t total = 0;
	int i;

	if (nsge < 0 || (uint32_t)nsge > max || (nsge > 0 && !sge))
		return -EINVAL;
	for (i = 0; i < nsge; i++)
		total += sge[i].length;
	if (total > UINT32_MAX)
		return -EINVAL;
	return (int64_t)total;
}

void ofi_sge_fill(struct ofi_sgl *sgl, const struct dapl_tsge *sge, int nsge)
{
	int i;

	for (i = 0; i < nsge; i++) {
		sgl->iov[i].iov_base = (void *)(uintptr_t)sge[i].addr;
		sgl->iov[i].iov_len = sge[i].length;
		sgl->desc[i] = sge[i].mr && sge[i].mr->fmr ?
			       fi_mr_desc(sge[i].mr->fmr) : NULL;
	}
}

static int post(struct dapl_tep *ep, struct ofi_queue *q,
		enum dapl_twc_opcode op, const struct dapl_tsge *sge,
		int nsge, uint64_t raddr, uint32_t rkey, uint64_t context,
		unsigned flags)
{
	struct dapl_tcq *cq = q->cq;
	struct ofi_slot *s;
	struct ofi_sgl sgl;
	int64_t total;
	int ret = 0;

	total = ofi_sge_total(sge, nsge, q->max_sge);
	if (total < 0)
		return (int)total;

	pthread_mutex_lock(&cq->lock);
	if (q->is_send && ep->state != OFI_EP_CONNECTED &&
	    ep->state != OFI_EP_DOWN) {
		ret = -ENOTCONN;
		goto out;
	}
	s = ofi_queue_claim(q);
	if (!s) {
		ret = -ENOSPC;
		goto out;
	}
	s->context = context;
	s->opcode = (uint8_t)op;
	s->signaled = op == DAPL_TWC_RECV || (flags & DAPL_TPOST_SIGNALED);
	s->fence = q->is_send && (flags & DAPL_TPOST_FENCE);
	s->byte_len = (uint32_t)total;
	s->raddr = raddr;
	s->rkey = rkey;
	s->niov = (uint8_t)nsge;
	ofi_sge_fill(&sgl, sge, nsge);

	if (ep->state == OFI_EP_DOWN) {
		/* The connection is over (maybe not yet reported): like a
		 * queue pair in the error state, the request flushes. */
		ofi_queue_flush(q);
		ofi_cq_kick(cq);
		goto out;
	}
	/* A receive before connect/accept, or a request behind a fence
	 * (submitted when the reads are in): held */
	if (!ep->fep || q->submit + 1 != q->tail ||
	    (s->fence && q->reads > 0)) {
		ret = ofi_slot_hold(q, s, &sgl);
		if (ret) {
			s->state = OFI_SLOT_FREE;
			q->tail--;
		}
		goto out;
	}

	s->state = OFI_SLOT_POSTED;
	ret = ofi_slot_post(ep->fep, s, &sgl);
	if (ret) {
		s->state = OFI_SLOT_FREE;
		q->tail--;
		if (ret == -EAGAIN)
			ret = -ENOSPC;
		goto out;
	}
	q->submit++;
	if (op == DAPL_TWC_RDMA_READ)
		q->reads++;
out:
	pthread_mutex_unlock(&cq->lock);
	return ret;
}

int ofi_post_send(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context, unsigned flags)
{
	return post(ep, ep->sq, DAPL_TWC_SEND, sge, nsge, 0, 0, context, flags);
}

int ofi_post_recv(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context)
{
	if (!ep->rq)
		return -EINVAL;         /* its receives go to the SRQ */
	return post(ep, ep->rq, DAPL_TWC_RECV, sge, nsge, 0, 0, context,
		    DAPL_TPOST_SIGNALED);
}

int ofi_post_rdma_write(struct dapl_tep *ep, const struct dapl_tsge *sge,
			int nsge, uint64_t remote_addr, uint32_t rkey,
			uint64_t context, unsigned flags)
{
	return post(ep, ep->sq, DAPL_TWC_RDMA_WRITE, sge, nsge, remote_addr,
		    rkey, context, flags);
}

int ofi_post_rdma_read(struct dapl_tep *ep, const struct dapl_tsge *sge,
		       int nsge, uint64_t remote_addr, uint32_t rkey,
		       uint64_t context, unsigned flags)
{
	return post(ep, ep->sq, DAPL_TWC_RDMA_READ, sge, nsge, remote_addr,
		    rkey, context, flags);
}
