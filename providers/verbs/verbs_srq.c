/* Shared receive queues: ibv_srq plus slots of their own. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

static void free_push(struct dapl_tsrq *srq, struct verbs_slot *s)
{
	struct verbs_slot *top = atomic_load_explicit(&srq->free_top,
						      memory_order_relaxed);

	do {
		s->next = top;
	} while (!atomic_compare_exchange_weak_explicit(&srq->free_top, &top, s,
							memory_order_release,
							memory_order_relaxed));
}

/* srq->lock held: the only popper, so the stack has no ABA problem. */
static struct verbs_slot *free_pop(struct dapl_tsrq *srq)
{
	struct verbs_slot *top = atomic_load_explicit(&srq->free_top,
						      memory_order_acquire);

	while (top && !atomic_compare_exchange_weak_explicit(&srq->free_top,
							     &top, top->next,
							     memory_order_acquire,
							     memory_order_acquire))
		;
	return top;
}

/* srq->lock held (or not yet shared): n more slots. */
static int add_slots(struct dapl_tsrq *srq, uint32_t n)
{
	struct verbs_srq_chunk *c;
	uint32_t i;

	c = calloc(1, sizeof(*c) + (size_t)n * sizeof(c->slots[0]));
	if (!c)
		return -ENOMEM;
	c->n = n;
	c->next = srq->chunks;
	srq->chunks = c;
	for (i = 0; i < n; i++) {
		c->slots[i].srq = srq;
		c->slots[i].opcode = DAPL_TWC_RECV;
		c->slots[i].signaled = true;
		atomic_init(&c->slots[i].state, VERBS_SLOT_FREE);
		free_push(srq, &c->slots[i]);
	}
	srq->cap += n;
	return 0;
}

static void srq_free(struct dapl_tsrq *srq)
{
	struct verbs_srq_chunk *c;

	while ((c = srq->chunks)) {
		srq->chunks = c->next;
		free(c);
	}
	pthread_mutex_destroy(&srq->lock);
	free(srq);
}

static void srq_unref(struct dapl_tsrq *srq)
{
	if (atomic_fetch_sub_explicit(&srq->refs, 1, memory_order_acq_rel) == 1)
		srq_free(srq);
}

int verbs_srq_create(struct dapl_tpd *pd, uint32_t max_wr, uint32_t max_sge,
		     struct dapl_tsrq **out)
{
	struct dapl_tdev *dev;
	struct ibv_srq_init_attr ia;
	struct dapl_tsrq *srq;
	int err;

	if (!pd || !out || max_wr == 0)
		return -EINVAL;
	dev = pd->dev;
	if (dev->attr.max_srq == 0)
		return -EOPNOTSUPP;
	if (max_sge == 0)
		max_sge = 1;
	if (max_wr > (uint32_t)dev->attr.max_srq_wr ||
	    max_sge > (uint32_t)dev->attr.max_srq_sge || max_sge > VERBS_MAX_SGE)
		return -EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq->dev = dev;
	srq->pd = pd;
	srq->max_wr = max_wr;
	srq->max_sge = max_sge;
	pthread_mutex_init(&srq->lock, NULL);
	atomic_init(&srq->free_top, NULL);
	atomic_init(&srq->refs, 1);
	err = add_slots(srq, max_wr);
	if (err) {
		srq_free(srq);
		return err;
	}
	memset(&ia, 0, sizeof(ia));
	ia.srq_context = srq;
	ia.attr.max_wr = max_wr;
	/* A device that cannot resize an SRQ (siw) gets room to grow up
	 * front, so dat_srq_resize works up to VERBS_SRQ_FIXED_ROOM. */
	if (!(dev->attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE) &&
	    max_wr < VERBS_SRQ_FIXED_ROOM)
		ia.attr.max_wr = VERBS_SRQ_FIXED_ROOM <
				 (uint32_t)dev->attr.max_srq_wr ?
				 VERBS_SRQ_FIXED_ROOM :
				 (uint32_t)dev->attr.max_srq_wr;
	ia.attr.max_sge = max_sge;
	srq->srq = ibv_create_srq(pd->pd, &ia);
	if (!srq->srq) {
		err = errno ? errno : ENOMEM;
		srq_free(srq);
		return -err;
	}
	srq->hw_max_wr = ia.attr.max_wr;
	*out = srq;
	return 0;
}

int verbs_srq_destroy(struct dapl_tsrq *srq,
		      void (*discarded)(uint64_t context, void *arg), void *arg)
{
	struct dapl_tdev *dev;
	struct verbs_srq_chunk *c;
	uint32_t i;

	if (!srq)
		return -EINVAL;
	dev = srq->dev;
	/* dev->lock: async events name the SRQ while they are handled */
	pthread_mutex_lock(&dev->lock);
	if (srq->users > 0) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	if (srq->limit_queued) {
		struct dapl_tsrq **pp;

		for (pp = &dev->limit_head; *pp; pp = &(*pp)->limit_next) {
			if (*pp == srq) {
				*pp = srq->limit_next;
				break;
			}
		}
		srq->limit_queued = false;
	}
	ibv_destroy_srq(srq->srq);
	srq->srq = NULL;
	pthread_mutex_unlock(&dev->lock);

	/* No endpoint is left, and each one's CQs were read dry when it went:
	 * a slot still POSTED will never complete. */
	pthread_mutex_lock(&srq->lock);
	for (c = srq->chunks; c; c = c->next) {
		for (i = 0; i < c->n; i++) {
			struct verbs_slot *s = &c->slots[i];

			if (atomic_load_explicit(&s->state, memory_order_relaxed) !=
			    VERBS_SLOT_POSTED)
				continue;
			atomic_store_explicit(&s->state, VERBS_SLOT_FREE,
					      memory_order_relaxed);
			if (discarded)
				discarded(s->context, arg);
			atomic_fetch_sub_explicit(&srq->refs, 1,
						  memory_order_relaxed);
		}
	}
	pthread_mutex_unlock(&srq->lock);
	/* slots still on CQ ready lists keep it alive until handed out */
	srq_unref(srq);
	return 0;
}

int verbs_srq_resize(struct dapl_tsrq *srq, uint32_t max_wr)
{
	struct ibv_srq_attr a;
	uint32_t posted;
	int err = 0;

	if (!srq || max_wr == 0 || max_wr > (uint32_t)srq->dev->attr.max_srq_wr)
		return -EINVAL;
	pthread_mutex_lock(&srq->lock);
	posted = atomic_load(&srq->refs) - 1;
	if (max_wr < posted) {
		err = -EINVAL;
		goto out;
	}
	/* The device queue only grows; a smaller depth is ours to keep. */
	if (max_wr > srq->hw_max_wr &&
	    !(srq->dev->attr.device_cap_flags & IBV_DEVICE_SRQ_RESIZE)) {
		err = -ENOMEM;          /* beyond the room it was made with */
		goto out;
	}
	if (max_wr > srq->hw_max_wr) {
		memset(&a, 0, sizeof(a));
		a.max_wr = max_wr;
		err = -ibv_modify_srq(srq->srq, &a, IBV_SRQ_MAX_WR);
		if (err)
			goto out;
		srq->hw_max_wr = max_wr;
	}
	if (max_wr > srq->cap) {
		err = add_slots(srq, max_wr - srq->cap);
		if (err)
			goto out;
	}
	srq->max_wr = max_wr;
out:
	pthread_mutex_unlock(&srq->lock);
	return err;
}

/* The device fires only when the count drops below the limit after it was
 * armed; the seam (like DAT) wants the event at once when fewer are
 * posted already, so then the device is left disarmed and the event is
 * made here. */
int verbs_srq_set_limit(struct dapl_tsrq *srq, uint32_t limit)
{
	struct verbs_srq_chunk *c;
	struct ibv_srq_attr a;
	uint32_t posted = 0, i;
	struct dapl_tdev *dev;

	if (!srq || limit > srq->max_wr)
		return -EINVAL;
	dev = srq->dev;
	if (limit) {
		pthread_mutex_lock(&srq->lock);
		for (c = srq->chunks; c; c = c->next)
			for (i = 0; i < c->n; i++)
				if (atomic_load_explicit(&c->slots[i].state,
							 memory_order_relaxed) ==
				    VERBS_SLOT_POSTED)
					posted++;
		pthread_mutex_unlock(&srq->lock);
	}
	memset(&a, 0, sizeof(a));
	a.srq_limit = limit && posted >= limit ? limit : 0;
	i = (uint32_t)ibv_modify_srq(srq->srq, &a, IBV_SRQ_LIMIT);
	if (i)
		return -(int)i;         /* it returns the errno value */
	if (limit && posted < limit) {
		pthread_mutex_lock(&dev->lock);
		if (!srq->limit_queued) {
			srq->limit_queued = true;
			srq->limit_next = dev->limit_head;
			dev->limit_head = srq;
		}
		pthread_mutex_unlock(&dev->lock);
		verbs_dev_notify(dev);
	}
	return 0;
}

int verbs_srq_post_recv(struct dapl_tsrq *srq, const struct dapl_tsge *sge,
			int nsge, uint64_t context)
{
	struct ibv_sge list[VERBS_MAX_SGE];
	struct ibv_recv_wr wr, *bad;
	struct verbs_slot *s;
	int64_t total;
	int err = 0;

	if (!srq)
		return -EINVAL;
	total = verbs_sge_fill(list, sge, nsge, srq->max_sge);
	if (total < 0)
		return (int)total;
	memset(&wr, 0, sizeof(wr));
	verbs_recv_list(&wr, list, nsge, srq->dev->iwarp);
	pthread_mutex_lock(&srq->lock);
	if (atomic_load(&srq->refs) - 1 >= srq->max_wr ||
	    !(s = free_pop(srq))) {
		err = -ENOSPC;
		goto out;
	}
	atomic_fetch_add_explicit(&srq->refs, 1, memory_order_relaxed);
	s->context = context;
	s->taker = NULL;
	s->opcode = DAPL_TWC_RECV;      /* a Write with immediate changes it */
	s->byte_len = 0;
	s->vendor_err = 0;
	s->imm = 0;
	s->flags = 0;
	atomic_store_explicit(&s->state, VERBS_SLOT_POSTED, memory_order_relaxed);
	wr.wr_id = (uint64_t)(uintptr_t)s;
	err = ibv_post_srq_recv(srq->srq, &wr, &bad);
	if (err) {
		atomic_store_explicit(&s->state, VERBS_SLOT_FREE,
				      memory_order_relaxed);
		free_push(srq, s);
		atomic_fetch_sub_explicit(&srq->refs, 1, memory_order_relaxed);
		err = verbs_post_err(err);
	}
out:
	pthread_mutex_unlock(&srq->lock);
	return err;
}

void verbs_srq_slot_release(struct verbs_slot *s)
{
	struct dapl_tsrq *srq = s->srq;

	atomic_store_explicit(&s->state, VERBS_SLOT_FREE, memory_order_relaxed);
	s->taker = NULL;
	free_push(srq, s);
	srq_unref(srq);
}
