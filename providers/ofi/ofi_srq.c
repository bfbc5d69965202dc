/* Shared receive queues over fi_srx_context (tcp 1.17 has it for MSG
 * endpoints).
 *
 * A slot is claimed under srq->lock, completes on the CQ of the ep that
 * received (under that CQ's lock) and is freed by that CQ's cq_poll, so
 * slot states and counters are atomics.  Receives complete in arrival
 * order, no reordering is needed.  The low-watermark event cannot be
 * queued under a CQ lock (dev->lock comes first), so a completion only
 * flags it and pokes the progress fd; cm_get_event reports it. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>

#include "ofi.h"

#define LOAD(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define STORE(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define ADD(p, v) __atomic_add_fetch((p), (v), __ATOMIC_ACQ_REL)
#define SUB(p, v) __atomic_sub_fetch((p), (v), __ATOMIC_ACQ_REL)
#define XCHG(p, v) __atomic_exchange_n((p), (v), __ATOMIC_ACQ_REL)

static void limit_fire(struct dapl_tsrq *srq)
{
	STORE(&srq->limit_hit, true);
	ofi_dev_notify(srq->dev);
}

/* After avail dropped to now: fires an armed limit once. */
static void limit_check(struct dapl_tsrq *srq, uint32_t now)
{
	uint32_t lim = LOAD(&srq->limit);

	if (lim && now < lim && XCHG(&srq->limit, 0) != 0)
		limit_fire(srq);
}

int ofi_srq_create(struct dapl_tpd *pd, uint32_t max_wr, uint32_t max_sge,
		   struct dapl_tsrq **srqp)
{
	struct dapl_tdev *dev = pd->dev;
	uint32_t cap = (uint32_t)dev->info->rx_attr->size;
	struct fi_rx_attr attr;
	struct dapl_tsrq *srq;
	uint32_t i;
	int ret;

	if (max_wr == 0 || max_wr > cap || max_sge > OFI_MAX_SGE)
		return -EINVAL;
	srq = calloc(1, sizeof(*srq) + (size_t)cap * sizeof(srq->slots[0]));
	if (!srq)
		return -ENOMEM;
	srq->dev = dev;
	srq->pd = pd;
	srq->cap = cap;
	srq->max_wr = max_wr;
	srq->max_sge = max_sge;
	for (i = 0; i < cap; i++)
		srq->slots[i].srq = srq;
	pthread_mutex_init(&srq->lock, NULL);
	attr = *dev->info->rx_attr;
	attr.size = cap;        /* resize only moves our own limit */
	ret = ofi_err(fi_srx_context(pd->domain, &attr, &srq->srx, srq));
	if (ret) {
		pthread_mutex_destroy(&srq->lock);
		free(srq);
		return ret;
	}
	pthread_mutex_lock(&dev->lock);
	srq->next = dev->srqs;
	dev->srqs = srq;
	pthread_mutex_unlock(&dev->lock);
	*srqp = srq;
	return 0;
}

static void srq_unlink_free(struct dapl_tsrq *srq)
{
	struct dapl_tsrq **pp;

	for (pp = &srq->dev->srqs; *pp; pp = &(*pp)->next) {
		if (*pp == srq) {
			*pp = srq->next;
			break;
		}
	}
	pthread_mutex_destroy(&srq->lock);
	free(srq);
}

int ofi_srq_destroy(struct dapl_tsrq *srq,
		    void (*discarded)(uint64_t context, void *arg), void *arg)
{
	struct dapl_tdev *dev = srq->dev;
	uint32_t i;

	pthread_mutex_lock(&dev->lock);
	if (srq->users) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	/* No ep uses it, so no completion for it is in flight: closing the
	 * context drops what is still posted (tcp reports nothing). */
	fi_close(&srq->srx->fid);
	srq->srx = NULL;
	for (i = 0; i < srq->cap; i++) {
		struct ofi_slot *s = &srq->slots[i];

		if (LOAD(&s->state) == OFI_SLOT_POSTED) {
			STORE(&s->state, OFI_SLOT_FREE);
			SUB(&srq->inuse, 1);
			if (discarded)
				discarded(s->context, arg);
		}
	}
	STORE(&srq->limit, 0);
	if (LOAD(&srq->inuse) == 0)
		srq_unlink_free(srq);
	else
		srq->dead = true;       /* freed once its CQs hand the rest out */
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int ofi_srq_resize(struct dapl_tsrq *srq, uint32_t max_wr)
{
	int ret = 0;

	pthread_mutex_lock(&srq->lock);
	if (max_wr == 0 || max_wr > srq->cap || max_wr < LOAD(&srq->inuse))
		ret = -EINVAL;
	else
		srq->max_wr = max_wr;
	pthread_mutex_unlock(&srq->lock);
	return ret;
}

int ofi_srq_set_limit(struct dapl_tsrq *srq, uint32_t limit)
{
	if (limit > srq->cap)
		return -EINVAL;
	STORE(&srq->limit, limit);
	if (limit)
		limit_check(srq, LOAD(&srq->avail));
	return 0;
}

int ofi_srq_post_recv(struct dapl_tsrq *srq, const struct dapl_tsge *sge,
		      int nsge, uint64_t context)
{
	struct ofi_slot *s = NULL;
	struct ofi_sgl sgl;
	int64_t total;
	uint32_t i;
	int ret;

	total = ofi_sge_total(sge, nsge, srq->max_sge);
	if (total < 0)
		return (int)total;
	pthread_mutex_lock(&srq->lock);
	if (LOAD(&srq->inuse) >= srq->max_wr) {
		ret = -ENOSPC;
		goto out;
	}
	for (i = 0; i < srq->cap; i++) {
		struct ofi_slot *c = &srq->slots[(srq->cursor + i) % srq->cap];

		if (LOAD(&c->state) == OFI_SLOT_FREE) {
			s = c;
			srq->cursor = (srq->cursor + i + 1) % srq->cap;
			break;
		}
	}
	if (!s) {
		ret = -ENOSPC;
		goto out;
	}
	s->context = context;
	s->opcode = DAPL_TWC_RECV;
	s->signaled = true;
	s->fence = false;
	s->status = DAPL_TWC_SUCCESS;
	s->vendor_err = 0;
	s->byte_len = 0;
	s->niov = (uint8_t)nsge;
	ofi_sge_fill(&sgl, sge, nsge);
	STORE(&s->state, OFI_SLOT_POSTED);
	ADD(&srq->inuse, 1);
	ADD(&srq->avail, 1);
	{
		struct fi_msg msg = {
			.msg_iov = sgl.iov, .desc = sgl.desc,
			.iov_count = s->niov, .context = s,
		};

		ret = ofi_err(fi_recvmsg(srq->srx, &msg, FI_COMPLETION));
	}
	if (ret) {
		STORE(&s->state, OFI_SLOT_FREE);
		SUB(&srq->inuse, 1);
		SUB(&srq->avail, 1);
		if (ret == -EAGAIN)
			ret = -ENOSPC;
	}
out:
	pthread_mutex_unlock(&srq->lock);
	return ret;
}

void ofi_srq_slot_complete(struct dapl_tcq *cq, struct ofi_slot *s,
			   enum dapl_twc_status status, uint32_t byte_len,
			   int vendor_err, uint64_t owner)
{
	struct dapl_tsrq *srq = s->srq;

	if (LOAD(&s->state) != OFI_SLOT_POSTED)
		return;
	s->status = (uint8_t)status;
	s->byte_len = status == DAPL_TWC_SUCCESS ? byte_len : 0;
	s->vendor_err = vendor_err;
	s->owner = owner;
	STORE(&s->state, OFI_SLOT_READY);
	ofi_cq_push_ready(cq, s);
	limit_check(srq, SUB(&srq->avail, 1));
}

void ofi_srq_slot_release(struct ofi_slot *s)
{
	struct dapl_tsrq *srq = s->srq;

	STORE(&s->state, OFI_SLOT_FREE);
	SUB(&srq->inuse, 1);
}

struct dapl_tsrq *ofi_srq_take_limit(struct dapl_tdev *dev)
{
	struct dapl_tsrq *srq, *next;

	for (srq = dev->srqs; srq; srq = next) {
		next = srq->next;
		if (srq->dead) {
			if (LOAD(&srq->inuse) == 0)
				srq_unlink_free(srq);
			continue;
		}
		if (LOAD(&srq->limit_hit) && XCHG(&srq->limit_hit, false))
			return srq;
	}
	return NULL;
}

void ofi_srq_free_all(struct dapl_tdev *dev)
{
	while (dev->srqs) {
		struct dapl_tsrq *srq = dev->srqs;

		if (srq->srx)
			fi_close(&srq->srx->fid);
		srq_unlink_free(srq);
	}
}
