/* Shared receive queues: posted receives in a ring, taken oldest first
 * by whichever endpoint a Send arrives on; the receive then completes on
 * that endpoint's receive CQ with its owner. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tcp.h"

int tcp_srq_create(struct dapl_tpd *pd, uint32_t max_wr, uint32_t max_sge,
		   struct dapl_tsrq **out)
{
	struct dapl_tsrq *srq;

	if (!max_wr || max_wr > TCP_QUEUE_MAX || max_sge > TCP_MAX_SGE)
		return -EINVAL;
	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return -ENOMEM;
	srq->q.wr = calloc(max_wr, sizeof(*srq->q.wr));
	if (!srq->q.wr) {
		free(srq);
		return -ENOMEM;
	}
	srq->q.depth = max_wr;
	srq->dev = pd->dev;
	srq->pd = pd;
	srq->max_sge = max_sge;
	pthread_mutex_init(&srq->lock, NULL);
	*out = srq;
	return 0;
}

int tcp_srq_destroy(struct dapl_tsrq *srq,
		    void (*discarded)(uint64_t context, void *arg), void *arg)
{
	struct dapl_tdev *dev = srq->dev;
	struct dapl_tsrq **p;

	pthread_mutex_lock(&dev->lock);
	if (srq->users) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	for (p = &dev->srq_pend_head; *p; p = &(*p)->pend_next)
		if (*p == srq) {
			*p = srq->pend_next;
			break;
		}
	pthread_mutex_unlock(&dev->lock);
	while (srq->q.head != srq->q.tail) {
		if (discarded)
			discarded(srq->q.wr[srq->q.head % srq->q.depth].context,
				  arg);
		srq->q.head++;
	}
	pthread_mutex_destroy(&srq->lock);
	free(srq->q.wr);
	free(srq);
	return 0;
}

int tcp_srq_resize(struct dapl_tsrq *srq, uint32_t max_wr)
{
	struct tcp_wr *wr;
	uint32_t n, i;
	int err = 0;

	if (!max_wr || max_wr > TCP_QUEUE_MAX)
		return -EINVAL;
	pthread_mutex_lock(&srq->lock);
	n = srq->q.tail - srq->q.head;
	if (max_wr < n) {
		err = -EINVAL;
		goto out;
	}
	wr = calloc(max_wr, sizeof(*wr));
	if (!wr) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++)
		wr[i] = srq->q.wr[(srq->q.head + i) % srq->q.depth];
	free(srq->q.wr);
	srq->q.wr = wr;
	srq->q.depth = max_wr;
	srq->q.head = 0;
	srq->q.tail = n;
out:
	pthread_mutex_unlock(&srq->lock);
	return err;
}

/* SRQ_LIMIT once per arming, from cm_get_event. */
static void limit_fire(struct dapl_tsrq *srq)
{
	struct dapl_tdev *dev = srq->dev;

	pthread_mutex_lock(&dev->lock);
	if (!srq->pending) {
		srq->pending = true;
		srq->pend_next = dev->srq_pend_head;
		dev->srq_pend_head = srq;
	}
	pthread_mutex_unlock(&dev->lock);
	tcp_dev_notify(dev);
}

/* srq->lock held: true when an armed limit is crossed (and disarms it). */
static bool limit_crossed(struct dapl_tsrq *srq)
{
	if (!srq->limit || srq->q.tail - srq->q.head >= srq->limit)
		return false;
	srq->limit = 0;
	return true;
}

int tcp_srq_set_limit(struct dapl_tsrq *srq, uint32_t limit)
{
	bool hit;

	pthread_mutex_lock(&srq->lock);
	if (limit > srq->q.depth) {
		pthread_mutex_unlock(&srq->lock);
		return -EINVAL;
	}
	srq->limit = limit;
	hit = limit_crossed(srq);
	pthread_mutex_unlock(&srq->lock);
	if (hit)
		limit_fire(srq);
	return 0;
}

int tcp_srq_post_recv(struct dapl_tsrq *srq, const struct dapl_tsge *sge,
		      int nsge, uint64_t context)
{
	struct tcp_wr *wr;
	uint64_t len = 0;
	int i;

	if (nsge < 0 || (uint32_t)nsge > srq->max_sge || nsge > TCP_MAX_SGE)
		return -EINVAL;
	for (i = 0; i < nsge; i++)
		len += sge[i].length;
	if (len > UINT32_MAX)
		return -EINVAL;
	pthread_mutex_lock(&srq->lock);
	if (srq->q.tail - srq->q.head >= srq->q.depth) {
		pthread_mutex_unlock(&srq->lock);
		return -ENOSPC;
	}
	wr = &srq->q.wr[srq->q.tail % srq->q.depth];
	memset(wr, 0, offsetof(struct tcp_wr, sge));
	wr->context = context;
	wr->opcode = DAPL_TWC_RECV;
	wr->nsge = (uint8_t)nsge;
	wr->len = (uint32_t)len;
	wr->signaled = true;
	memcpy(wr->sge, sge, (size_t)nsge * sizeof(*sge));
	srq->q.tail++;
	pthread_mutex_unlock(&srq->lock);
	/* an endpoint may hold a Send waiting for a receive */
	tcp_dev_notify(srq->dev);
	return 0;
}

bool tcp_srq_take(struct dapl_tsrq *srq, struct tcp_wr *out)
{
	bool hit;

	pthread_mutex_lock(&srq->lock);
	if (srq->q.head == srq->q.tail) {
		pthread_mutex_unlock(&srq->lock);
		return false;
	}
	*out = srq->q.wr[srq->q.head % srq->q.depth];
	srq->q.head++;
	hit = limit_crossed(srq);
	pthread_mutex_unlock(&srq->lock);
	if (hit)
		limit_fire(srq);
	return true;
}
