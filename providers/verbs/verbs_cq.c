/* Completion queues and endpoint queues: slots, the ready list, polling
 * and waking. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "verbs.h"

static uint8_t slot_state(struct verbs_slot *s)
{
	return atomic_load_explicit(&s->state, memory_order_relaxed);
}

static void slot_set(struct verbs_slot *s, enum verbs_slot_state st)
{
	atomic_store_explicit(&s->state, (uint8_t)st, memory_order_relaxed);
}

enum dapl_twc_status verbs_wc_status(enum ibv_wc_status st)
{
	switch (st) {
	case IBV_WC_SUCCESS: return DAPL_TWC_SUCCESS;
	case IBV_WC_WR_FLUSH_ERR: return DAPL_TWC_FLUSHED;
	case IBV_WC_LOC_LEN_ERR: return DAPL_TWC_LOCAL_LENGTH;
	case IBV_WC_LOC_QP_OP_ERR:
	case IBV_WC_LOC_EEC_OP_ERR: return DAPL_TWC_LOCAL_EP;
	case IBV_WC_LOC_PROT_ERR:
	case IBV_WC_LOC_ACCESS_ERR:
	case IBV_WC_MW_BIND_ERR: return DAPL_TWC_LOCAL_PROTECTION;
	case IBV_WC_REM_ACCESS_ERR: return DAPL_TWC_REMOTE_ACCESS;
	case IBV_WC_REM_INV_REQ_ERR:
	case IBV_WC_REM_OP_ERR:
	case IBV_WC_REM_INV_RD_REQ_ERR:
	case IBV_WC_REM_ABORT_ERR: return DAPL_TWC_REMOTE_OP;
	case IBV_WC_BAD_RESP_ERR: return DAPL_TWC_BAD_RESPONSE;
	case IBV_WC_RETRY_EXC_ERR: return DAPL_TWC_RETRY_EXCEEDED;
	case IBV_WC_RNR_RETRY_EXC_ERR: return DAPL_TWC_RNR;
	default: return DAPL_TWC_GENERAL;
	}
}

/* ---- the ready list and waking -------------------------------------------- */

void verbs_cq_push_ready(struct dapl_tcq *cq, struct verbs_slot *s)
{
	slot_set(s, VERBS_SLOT_READY);
	s->next = NULL;
	if (cq->ready_tail)
		cq->ready_tail->next = s;
	else
		cq->ready_head = s;
	cq->ready_tail = s;
	if (s->q)
		s->q->nready++;
}

static struct verbs_slot *pop_ready(struct dapl_tcq *cq)
{
	struct verbs_slot *s = cq->ready_head;

	if (s) {
		cq->ready_head = s->next;
		if (!cq->ready_head)
			cq->ready_tail = NULL;
		s->next = NULL;
	}
	return s;
}

void verbs_cq_kick(struct dapl_tcq *cq)
{
	uint64_t one = 1;

	if (cq->armed && cq->ready_head &&
	    write(cq->event_fd, &one, sizeof(one)) < 0)
		return;         /* the counter is saturated: readable anyway */
}

/* ---- endpoint queues -------------------------------------------------------- */

struct verbs_queue *verbs_queue_alloc(struct dapl_tcq *cq, struct dapl_tep *ep,
				      bool is_send, uint32_t depth,
				      uint32_t max_sge)
{
	struct verbs_queue *q;
	uint32_t i;

	q = calloc(1, sizeof(*q) + (size_t)(depth ? depth : 1) *
		   sizeof(q->slots[0]));
	if (!q)
		return NULL;
	q->cq = cq;
	q->ep = ep;
	q->owner = ep->owner;
	q->is_send = is_send;
	q->depth = depth;
	q->max_sge = max_sge;
	for (i = 0; i < (depth ? depth : 1); i++) {
		q->slots[i].q = q;
		atomic_init(&q->slots[i].state, VERBS_SLOT_FREE);
	}
	return q;
}

static void zombie_unlink(struct verbs_queue *q)
{
	struct verbs_queue **pp;

	for (pp = &q->cq->zombies; *pp; pp = &(*pp)->zombie_next)
		if (*pp == q) {
			*pp = q->zombie_next;
			return;
		}
}

void verbs_queue_release(struct verbs_queue *q)
{
	if (!q)
		return;
	q->ep = NULL;
	q->owner = 0;
	if (q->nready == 0) {
		free(q);
		return;
	}
	q->zombie_next = q->cq->zombies;
	q->cq->zombies = q;
}

struct verbs_slot *verbs_queue_claim(struct verbs_queue *q)
{
	struct verbs_slot *s;

	if (q->tail - q->head >= q->depth)
		return NULL;
	s = &q->slots[q->tail % q->depth];
	q->tail++;
	s->next = NULL;
	s->byte_len = 0;
	s->vendor_err = 0;
	s->imm = 0;
	s->flags = 0;
	s->status = DAPL_TWC_SUCCESS;
	s->signaled = true;
	slot_set(s, VERBS_SLOT_POSTED);
	return s;
}

void verbs_queue_unclaim(struct verbs_queue *q)
{
	q->tail--;
	slot_set(&q->slots[q->tail % q->depth], VERBS_SLOT_FREE);
}

/* Advances head over free slots. */
static void queue_advance(struct verbs_queue *q)
{
	while (q->head != q->retire &&
	       slot_state(&q->slots[q->head % q->depth]) == VERBS_SLOT_FREE)
		q->head++;
}

void verbs_slot_done_now(struct verbs_queue *q, struct verbs_slot *s,
			 enum dapl_twc_status status)
{
	/* Only when the device has nothing older of this queue may retire
	 * move past s; otherwise the older requests' completions do. */
	if (q->retire + 1 == q->tail)
		q->retire = q->tail;
	s->status = (uint8_t)status;
	if (status != DAPL_TWC_SUCCESS)
		s->byte_len = 0;
	if (s->signaled || status != DAPL_TWC_SUCCESS)
		verbs_cq_push_ready(q->cq, s);
	else
		slot_set(s, VERBS_SLOT_FREE);
	queue_advance(q);
}

void verbs_queue_flush(struct verbs_queue *q)
{
	struct verbs_slot *s;

	if (!q)
		return;
	for (; q->retire != q->tail; q->retire++) {
		s = &q->slots[q->retire % q->depth];
		if (slot_state(s) != VERBS_SLOT_POSTED)
			continue;
		s->status = DAPL_TWC_FLUSHED;
		s->byte_len = 0;
		verbs_cq_push_ready(q->cq, s);
	}
	queue_advance(q);
}

/* A completion with a real error (not a flush) on a connected ep: the QP
 * is in the error state, so the progress thread ends the connection
 * (take_faults: BROKEN).  DAT_DBG_TYPE bit 3 says which one did it. */
static void note_fault(struct dapl_tep *ep, const struct verbs_slot *s,
		       const struct ibv_wc *wc, const char *what)
{
	if (s->status == DAPL_TWC_SUCCESS || s->status == DAPL_TWC_FLUSHED ||
	    !ep || ep->state != VERBS_EP_CONNECTED ||
	    atomic_exchange(&ep->faulted, true))
		return;
	dapl_dbg(DAPL_DBG_CM, "verbs: ep %p: a %s failed: %s (vendor error %#x)",
		 (void *)ep, what, ibv_wc_status_str(wc->status),
		 (unsigned)wc->vendor_err);
	atomic_store(&ep->dev->faults, true);
	verbs_dev_notify(ep->dev);
}

/* A receive's completion: the bytes that arrived and, when the peer sent
 * an immediate, which kind of message consumed it.  A failed completion's
 * opcode and flags mean nothing (verbs leaves them undefined). */
static void recv_done(struct verbs_slot *s, const struct ibv_wc *wc)
{
	s->byte_len = 0;
	if (wc->status != IBV_WC_SUCCESS)
		return;
	s->byte_len = wc->byte_len;
	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM) {
		/* a Write with immediate: its data went to the peer's
		 * target, byte_len counts it; the receive's buffer is
		 * untouched */
		s->opcode = DAPL_TWC_RECV_RDMA_IMM;
		s->imm = ntohl(wc->imm_data);
		s->flags = DAPL_TWC_WITH_IMM;
	} else if (wc->wc_flags & IBV_WC_WITH_IMM) {
		s->imm = ntohl(wc->imm_data);
		s->flags = DAPL_TWC_WITH_IMM;
	}
}

/* The device completed s: earlier requests of the queue are done too (an
 * unsignalled send that succeeded has no completion of its own). */
static void queue_complete(struct verbs_queue *q, struct verbs_slot *s,
			   const struct ibv_wc *wc)
{
	struct dapl_tep *ep = q->ep;

	if (slot_state(s) != VERBS_SLOT_POSTED)
		return;         /* cannot happen: the QP is gone before a flush */
	while (q->retire != q->tail &&
	       &q->slots[q->retire % q->depth] != s) {
		struct verbs_slot *e = &q->slots[q->retire % q->depth];

		if (slot_state(e) == VERBS_SLOT_POSTED)
			slot_set(e, VERBS_SLOT_FREE);
		q->retire++;
	}
	if (q->retire != q->tail)
		q->retire++;
	s->status = (uint8_t)verbs_wc_status(wc->status);
	s->vendor_err = (int)wc->vendor_err;
	if (!q->is_send)
		recv_done(s, wc);
	verbs_cq_push_ready(q->cq, s);
	queue_advance(q);
	note_fault(ep, s, wc, q->is_send ? "request" : "receive");
}

static struct dapl_tep *taker_of(struct dapl_tcq *cq, uint32_t qp_num)
{
	int i;

	for (i = 0; i < cq->ntakers; i++)
		if (cq->takers[i].qp_num == qp_num)
			return cq->takers[i].ep;
	return NULL;
}

static void cq_take(struct dapl_tcq *cq, const struct ibv_wc *wc)
{
	struct verbs_slot *s = (struct verbs_slot *)(uintptr_t)wc->wr_id;
	struct dapl_tep *ep;

	if (!s)
		return;
	if (s->q) {
		queue_complete(s->q, s, wc);
		return;
	}
	/* a receive taken from an SRQ */
	ep = taker_of(cq, wc->qp_num);
	s->taker = ep;
	s->status = (uint8_t)verbs_wc_status(wc->status);
	s->vendor_err = (int)wc->vendor_err;
	recv_done(s, wc);
	verbs_cq_push_ready(cq, s);
	note_fault(ep, s, wc, "SRQ receive");
}

/* Reads up to max completions from the device; returns how many. */
static int cq_read(struct dapl_tcq *cq, int max)
{
	struct ibv_wc wc[VERBS_POLL_BATCH];
	int n, i;

	if (max > VERBS_POLL_BATCH)
		max = VERBS_POLL_BATCH;
	n = ibv_poll_cq(cq->cq, max, wc);
	for (i = 0; i < n; i++)
		cq_take(cq, &wc[i]);
	return n;
}

void verbs_cq_drain(struct dapl_tcq *cq)
{
	while (cq_read(cq, VERBS_POLL_BATCH) == VERBS_POLL_BATCH)
		;
}

/* cq->lock held: s was handed out; its slot is free again. */
static void slot_release(struct verbs_slot *s)
{
	struct verbs_queue *q = s->q;

	if (!q) {
		verbs_srq_slot_release(s);
		return;
	}
	slot_set(s, VERBS_SLOT_FREE);
	q->nready--;
	queue_advance(q);
	if (!q->ep && q->nready == 0) {
		zombie_unlink(q);
		free(q);
	}
}

int verbs_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max)
{
	struct verbs_slot *s;
	int out = 0, n;

	if (max <= 0)
		return 0;
	pthread_mutex_lock(&cq->lock);
	cq->polls++;
	for (;;) {
		while (out < max && (s = pop_ready(cq))) {
			struct dapl_twc *w = &wc[out++];

			w->context = s->context;
			if (s->q)
				w->owner = s->q->ep ? s->q->owner : 0;
			else
				w->owner = s->taker ? s->taker->owner : 0;
			w->status = (enum dapl_twc_status)s->status;
			w->opcode = (enum dapl_twc_opcode)s->opcode;
			w->byte_len = s->byte_len;
			w->vendor_err = s->vendor_err;
			w->imm = s->imm;
			w->flags = s->flags;
			slot_release(s);
		}
		if (out == max)
			break;
		n = cq_read(cq, max - out);
		if (n <= 0) {
			if (n < 0 && out == 0)
				out = -EIO;
			break;
		}
	}
	pthread_mutex_unlock(&cq->lock);
	return out;
}

/* ---- CQ objects ------------------------------------------------------------ */

int verbs_cq_create(struct dapl_tdev *dev, uint32_t depth, struct dapl_tcq **out)
{
	struct dapl_tcq *cq;
	struct epoll_event ee = { .events = EPOLLIN };
	int err, flags;

	if (depth == 0)
		depth = 1;
	if (dev->attr.max_cqe > 0 && depth > (uint32_t)dev->attr.max_cqe)
		return -EINVAL;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->dev = dev;
	cq->epfd = cq->event_fd = -1;
	cq->asked = depth;
	pthread_mutex_init(&cq->lock, NULL);
	cq->ch = ibv_create_comp_channel(dev->ctx);
	if (!cq->ch) {
		err = -(errno ? errno : ENOMEM);
		goto fail;
	}
	flags = fcntl(cq->ch->fd, F_GETFL);
	if (flags < 0 || fcntl(cq->ch->fd, F_SETFL, flags | O_NONBLOCK) < 0) {
		err = -errno;
		goto fail;
	}
	cq->cq = ibv_create_cq(dev->ctx, (int)depth, cq, cq->ch, 0);
	if (!cq->cq) {
		err = -(errno ? errno : ENOMEM);
		goto fail;
	}
	cq->cqe = (uint32_t)cq->cq->cqe;
	cq->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cq->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (cq->event_fd < 0 || cq->epfd < 0) {
		err = -errno;
		goto fail;
	}
	ee.data.fd = cq->ch->fd;
	if (epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->ch->fd, &ee)) {
		err = -errno;
		goto fail;
	}
	ee.data.fd = cq->event_fd;
	if (epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->event_fd, &ee)) {
		err = -errno;
		goto fail;
	}
	pthread_mutex_lock(&dev->lock);
	err = verbs_dev_add_cq(dev, cq);
	pthread_mutex_unlock(&dev->lock);
	if (err)
		goto fail;
	*out = cq;
	return 0;
fail:
	if (cq->epfd >= 0)
		close(cq->epfd);
	if (cq->event_fd >= 0)
		close(cq->event_fd);
	if (cq->cq)
		ibv_destroy_cq(cq->cq);
	if (cq->ch)
		ibv_destroy_comp_channel(cq->ch);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return err;
}

/* Reads the completion channel and the eventfd dry. */
static void cq_consume_events(struct dapl_tcq *cq)
{
	struct ibv_cq *ecq;
	void *ectx;
	unsigned n = 0;
	uint64_t v;

	while (ibv_get_cq_event(cq->ch, &ecq, &ectx) == 0)
		n++;
	if (n)
		ibv_ack_cq_events(cq->cq, n);
	if (read(cq->event_fd, &v, sizeof(v)) < 0)
		v = 0;
}

int verbs_cq_destroy(struct dapl_tcq *cq)
{
	struct verbs_slot *s;
	struct verbs_queue *q;

	if (!cq)
		return -EINVAL;
	pthread_mutex_lock(&cq->dev->lock);
	pthread_mutex_lock(&cq->lock);
	if (cq->users > 0) {
		pthread_mutex_unlock(&cq->lock);
		pthread_mutex_unlock(&cq->dev->lock);
		return -EBUSY;
	}
	verbs_dev_remove_cq(cq->dev, cq);
	/* Nothing completes here any more; what waits is dropped. */
	verbs_cq_drain(cq);
	while ((s = pop_ready(cq)))
		slot_release(s);
	while ((q = cq->zombies)) {
		cq->zombies = q->zombie_next;
		free(q);
	}
	cq_consume_events(cq);
	pthread_mutex_unlock(&cq->lock);
	pthread_mutex_unlock(&cq->dev->lock);
	ibv_destroy_cq(cq->cq);
	ibv_destroy_comp_channel(cq->ch);
	close(cq->epfd);
	close(cq->event_fd);
	free(cq->takers);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return 0;
}

int verbs_cq_wait_fd(struct dapl_tcq *cq)
{
	return cq->epfd;
}

int verbs_cq_arm(struct dapl_tcq *cq, int solicited_only)
{
	int err;

	pthread_mutex_lock(&cq->lock);
	err = ibv_req_notify_cq(cq->cq, solicited_only);
	if (!err) {
		cq->armed = true;
		verbs_cq_kick(cq);
	}
	pthread_mutex_unlock(&cq->lock);
	return err ? -err : 0;
}

void verbs_cq_ack(struct dapl_tcq *cq)
{
	pthread_mutex_lock(&cq->lock);
	cq_consume_events(cq);
	cq->armed = false;
	pthread_mutex_unlock(&cq->lock);
}

int verbs_cq_reserve(struct dapl_tcq *cq, uint32_t more)
{
	uint32_t want = cq->needed + more;

	/* The device CQ must hold every completion its queues can have
	 * outstanding, or it overruns; the core sizes CQs by EVD queue
	 * length, which knows nothing of queue depths. */
	if (want > cq->cqe && cq->dev->attr.max_cqe > 0) {
		uint32_t n = want;

		if (n > (uint32_t)cq->dev->attr.max_cqe)
			n = (uint32_t)cq->dev->attr.max_cqe;
		if (n > cq->cqe && ibv_resize_cq(cq->cq, (int)n) == 0)
			cq->cqe = (uint32_t)cq->cq->cqe;
	}
	cq->needed = want;
	return 0;
}

int verbs_cq_add_taker(struct dapl_tcq *cq, uint32_t qp_num, struct dapl_tep *ep)
{
	if (cq->ntakers == cq->takers_cap) {
		int cap = cq->takers_cap ? 2 * cq->takers_cap : 4;
		struct verbs_srq_taker *t = realloc(cq->takers,
						    (size_t)cap * sizeof(*t));

		if (!t)
			return -ENOMEM;
		cq->takers = t;
		cq->takers_cap = cap;
	}
	cq->takers[cq->ntakers].qp_num = qp_num;
	cq->takers[cq->ntakers].ep = ep;
	cq->ntakers++;
	return 0;
}

void verbs_cq_remove_taker(struct dapl_tcq *cq, struct dapl_tep *ep)
{
	int i;

	for (i = 0; i < cq->ntakers; i++)
		if (cq->takers[i].ep == ep) {
			cq->takers[i] = cq->takers[--cq->ntakers];
			return;
		}
}

void verbs_cq_forget_taker(struct dapl_tcq *cq, struct dapl_tep *ep)
{
	struct verbs_slot *s;

	for (s = cq->ready_head; s; s = s->next)
		if (!s->q && s->taker == ep)
			s->taker = NULL;
}

/* ---- locking both CQs of an endpoint ------------------------------------------ */

void verbs_ep_lock_cqs(struct dapl_tep *ep)
{
	struct dapl_tcq *a = ep->scq, *b = ep->rcq;

	if (a == b) {
		pthread_mutex_lock(&a->lock);
		return;
	}
	if ((uintptr_t)a > (uintptr_t)b) {
		struct dapl_tcq *t = a;

		a = b;
		b = t;
	}
	pthread_mutex_lock(&a->lock);
	pthread_mutex_lock(&b->lock);
}

void verbs_ep_unlock_cqs(struct dapl_tep *ep)
{
	if (ep->scq != ep->rcq)
		pthread_mutex_unlock(&ep->rcq->lock);
	pthread_mutex_unlock(&ep->scq->lock);
}
