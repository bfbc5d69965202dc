/* Completion queues and the per-endpoint request queues behind them.
 *
 * A libfabric completion names its slot (op_context); the slot is marked
 * done and slots retire in posting order.  What a consumer must see goes on
 * the CQ's ready list; cq_poll hands it out and only then frees the slot,
 * so the ready list can never hold more entries than there are slots and
 * nothing is allocated on the way. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "ofi.h"

#define CQ_BATCH 16

static inline struct ofi_slot *slot_at(struct ofi_queue *q, uint32_t idx)
{
	return &q->slots[idx % q->depth];
}

/* ---- queues -------------------------------------------------------------------- */

struct ofi_queue *ofi_queue_alloc(struct dapl_tcq *cq, struct dapl_tep *ep,
				  bool is_send, uint32_t depth,
				  uint32_t max_sge)
{
	struct ofi_queue *q;
	uint32_t i;

	q = calloc(1, sizeof(*q) + (size_t)depth * sizeof(q->slots[0]));
	if (!q)
		return NULL;
	q->cq = cq;
	q->ep = ep;
	q->is_send = is_send;
	q->depth = depth;
	q->max_sge = max_sge;
	for (i = 0; i < depth; i++)
		q->slots[i].q = q;
	return q;
}

void ofi_queue_free(struct ofi_queue *q)
{
	if (!q)
		return;
	free(q->held);
	free(q);
}

int ofi_slot_hold(struct ofi_queue *q, struct ofi_slot *s,
		  const struct ofi_sgl *sgl)
{
	if (!q->held) {
		/* a claimed slot exists, so depth > 0 */
		q->held = calloc(q->depth, sizeof(*q->held));
		if (!q->held)
			return -ENOMEM;
	}
	q->held[s - q->slots] = *sgl;
	return 0;
}

void ofi_queue_release(struct ofi_queue *q)
{
	struct dapl_tcq *cq = q->cq;

	q->ep = NULL;
	if (q->nready == 0) {
		ofi_queue_free(q);
		return;
	}
	q->zombie_next = cq->zombies;
	cq->zombies = q;
}

void ofi_cq_sweep(struct dapl_tcq *cq)
{
	struct ofi_queue **pp = &cq->zombies;

	while (*pp) {
		struct ofi_queue *q = *pp;

		if (q->nready == 0) {
			*pp = q->zombie_next;
			ofi_queue_free(q);
		} else {
			pp = &q->zombie_next;
		}
	}
}

struct ofi_slot *ofi_queue_claim(struct ofi_queue *q)
{
	struct ofi_slot *s;

	if (q->depth == 0 || q->tail - q->head >= q->depth)
		return NULL;
	s = slot_at(q, q->tail++);
	s->state = OFI_SLOT_HELD;
	s->next = NULL;
	s->status = DAPL_TWC_SUCCESS;
	s->vendor_err = 0;
	s->fence = false;
	s->niov = 0;
	return s;
}

/* Frees slots at the head that are free. */
static void queue_reclaim(struct ofi_queue *q)
{
	while (q->head != q->retire && slot_at(q, q->head)->state == OFI_SLOT_FREE)
		q->head++;
}

void ofi_cq_push_ready(struct dapl_tcq *cq, struct ofi_slot *s)
{
	s->next = NULL;
	if (cq->ready_tail)
		cq->ready_tail->next = s;
	else
		cq->ready_head = s;
	cq->ready_tail = s;
	if (s->q) {
		s->state = OFI_SLOT_READY;
		s->q->nready++;
	}
}

/* Retires done slots in posting order. */
static void queue_advance(struct ofi_queue *q)
{
	while (q->retire != q->tail) {
		struct ofi_slot *s = slot_at(q, q->retire);

		if (s->state != OFI_SLOT_DONE)
			break;
		if (s->signaled || s->status != DAPL_TWC_SUCCESS)
			ofi_cq_push_ready(q->cq, s);
		else
			s->state = OFI_SLOT_FREE;
		q->retire++;
	}
	queue_reclaim(q);
}

void ofi_slot_complete(struct ofi_slot *s, enum dapl_twc_status status,
		       uint32_t byte_len, int vendor_err)
{
	struct ofi_queue *q = s->q;

	if (s->state != OFI_SLOT_POSTED)
		return;         /* cannot happen: each slot completes once */
	if (s->opcode == DAPL_TWC_RDMA_READ && q->reads > 0)
		q->reads--;
	s->state = OFI_SLOT_DONE;
	s->status = (uint8_t)status;
	/* An error other than a flush broke the connection: its end is
	 * reported as CONN_ERROR (BROKEN), not as a disconnect. */
	if (status != DAPL_TWC_SUCCESS && status != DAPL_TWC_FLUSHED && q->ep)
		q->ep->faulted = true;
	s->byte_len = status == DAPL_TWC_SUCCESS ? byte_len : 0;
	s->vendor_err = vendor_err;
	if (q->is_send && q->reads == 0 && q->submit != q->tail && q->ep &&
	    q->ep->fep)
		ofi_queue_submit(q);
	queue_advance(q);
}

void ofi_queue_flush(struct ofi_queue *q)
{
	uint32_t i;

	for (i = q->retire; i != q->tail; i++) {
		struct ofi_slot *s = slot_at(q, i);

		if (s->state == OFI_SLOT_POSTED || s->state == OFI_SLOT_HELD) {
			s->state = OFI_SLOT_DONE;
			s->status = DAPL_TWC_FLUSHED;
			s->byte_len = 0;
		}
	}
	q->submit = q->tail;
	q->reads = 0;
	queue_advance(q);
}

/* What a successful Send or RDMA Write completion means
 * (DAPL_OFI_COMPLETION, dapl_ofi(3)): by default that the peer has placed
 * the data, as on InfiniBand RC; "transmit" gives tcp's own meaning, the
 * bytes are in the kernel, for programs that need no more. */
static pthread_once_t completion_once = PTHREAD_ONCE_INIT;
static uint64_t tx_flags = FI_COMPLETION | FI_DELIVERY_COMPLETE;

static void completion_read(void)
{
	const char *v = getenv("DAPL_OFI_COMPLETION");

	if (v && strcmp(v, "transmit") == 0)
		tx_flags = FI_COMPLETION;
}

static uint64_t completion_flags(void)
{
	pthread_once(&completion_once, completion_read);
	return tx_flags;
}

int ofi_slot_post(struct fid_ep *fep, struct ofi_slot *s, struct ofi_sgl *sgl)
{
	ssize_t ret;

	switch (s->opcode) {
	case DAPL_TWC_SEND: {
		struct fi_msg msg = {
			.msg_iov = sgl->iov, .desc = sgl->desc, .iov_count = s->niov,
			.context = s,
		};

		/* A completed Send means the peer placed it in a posted
		 * receive (dat_ep_post_send(3)); tcp by itself completes
		 * once the socket has the bytes. */
		ret = fi_sendmsg(fep, &msg, completion_flags());
		break;
	}
	case DAPL_TWC_RECV: {
		struct fi_msg msg = {
			.msg_iov = sgl->iov, .desc = sgl->desc, .iov_count = s->niov,
			.context = s,
		};

		ret = fi_recvmsg(fep, &msg, FI_COMPLETION);
		break;
	}
	case DAPL_TWC_RDMA_WRITE:
	case DAPL_TWC_RDMA_READ: {
		struct fi_rma_iov rma = {
			.addr = s->raddr, .len = s->byte_len, .key = s->rkey,
		};
		struct fi_msg_rma msg = {
			.msg_iov = sgl->iov, .desc = sgl->desc, .iov_count = s->niov,
			.rma_iov = &rma, .rma_iov_count = 1, .context = s,
		};

		/* tcp ignores tx op_flags in fi_write: ask explicitly for the
		 * completion to mean "placed at the target". */
		if (s->opcode == DAPL_TWC_RDMA_WRITE)
			ret = fi_writemsg(fep, &msg, completion_flags());
		else
			ret = fi_readmsg(fep, &msg, FI_COMPLETION);
		break;
	}
	default:
		return -EINVAL;
	}
	return ofi_err(ret);
}

void ofi_queue_submit(struct ofi_queue *q)
{
	struct fid_ep *fep = q->ep ? q->ep->fep : NULL;

	if (!fep)
		return;
	while (q->submit != q->tail) {
		struct ofi_slot *s = slot_at(q, q->submit);
		int ret;

		if (s->state != OFI_SLOT_HELD) {        /* flushed meanwhile */
			q->submit++;
			continue;
		}
		if (s->fence && q->reads > 0)
			break;
		s->state = OFI_SLOT_POSTED;
		q->submit++;
		ret = ofi_slot_post(fep, s, &q->held[s - q->slots]);
		if (ret) {
			/* Late failure: the request completes with the error. */
			s->state = OFI_SLOT_DONE;
			s->status = DAPL_TWC_LOCAL_EP;
			s->byte_len = 0;
			s->vendor_err = -ret;
			continue;
		}
		if (s->opcode == DAPL_TWC_RDMA_READ)
			q->reads++;
	}
	queue_advance(q);
}

/* ---- libfabric completions ------------------------------------------------------ */

static enum dapl_twc_status map_cq_err(int err)
{
	switch (err) {
	case FI_ECANCELED:
	case FI_ENOTCONN:
	case FI_ECONNRESET:
	case FI_ECONNABORTED:
	case EPIPE:             /* no FI_EPIPE */
	case FI_ESHUTDOWN:
		return DAPL_TWC_FLUSHED;   /* the connection is gone */
	case FI_ETRUNC:
	case FI_EMSGSIZE:
		return DAPL_TWC_LOCAL_LENGTH;
	case FI_EACCES:
	case FI_EPERM:
	case FI_ENOKEY:
	case FI_EKEYREJECTED:
		return DAPL_TWC_REMOTE_ACCESS;
	case FI_EFAULT:
		return DAPL_TWC_LOCAL_PROTECTION;
	case FI_ETIMEDOUT:
	case FI_EHOSTUNREACH:
	case FI_ENETUNREACH:
		return DAPL_TWC_RETRY_EXCEEDED;
	case FI_EREMOTEIO:
		return DAPL_TWC_REMOTE_OP;
	default:
		return DAPL_TWC_GENERAL;
	}
}

/* owner: the ep whose private CQ (ofi_subcq) this came from, else 0. */
static void cq_complete_entry(struct dapl_tcq *cq, struct fi_cq_msg_entry *e,
			      uint64_t owner)
{
	struct ofi_slot *s = e->op_context;

	if (!s)
		return;         /* not ours: we never post without a context */
	if (s->srq) {
		ofi_srq_slot_complete(cq, s, DAPL_TWC_SUCCESS,
				      (uint32_t)e->len, 0, owner);
		return;
	}
	ofi_slot_complete(s, DAPL_TWC_SUCCESS,
			  s->opcode == DAPL_TWC_RECV ? (uint32_t)e->len :
			  s->byte_len, 0);
}

/* Takes the error entry at the head of fcq, if there is one: false when
 * there is none.  fi_cq_readerr only looks at the queue (no progress
 * pass). */
static bool take_error(struct dapl_tcq *cq, struct fid_cq *fcq, uint64_t owner)
{
	struct fi_cq_err_entry err;
	struct ofi_slot *s;

	memset(&err, 0, sizeof(err));
	if (fi_cq_readerr(fcq, &err, 0) < 1)
		return false;
	s = err.op_context;
	if (s && s->srq)
		ofi_srq_slot_complete(cq, s, map_cq_err(err.err), 0, err.err,
				      owner);
	else if (s)
		ofi_slot_complete(s, map_cq_err(err.err), 0, err.err);
	return true;
}

/* Reads what fcq holds into cq's slots.  Each fi_cq_read is a progress
 * pass in tcp 1.17 (an epoll_wait and a sweep of every endpoint on the
 * CQ), so a short batch ends the drain: the read stopped because the
 * queue held no more successes, and what arrives later makes the CQ's fd
 * readable for the progress thread.  An error entry can be left at the
 * head (a read stops in front of one): the next read of anyone, which
 * comes before a consumer sleeps (the core polls after arming), returns
 * -FI_EAVAIL for it and take_error takes it.  Not looking for it after
 * every short batch saves an fi_cq_readerr per dequeue.
 *
 * One thread at a time per device: tcp 1.17 sends a delivery-complete
 * acknowledgement before it writes the receive's completion, both under
 * the endpoint's own lock, so a second thread progressing another
 * endpoint meanwhile could complete a later message first, and the peer,
 * told by the acknowledgement, could send that later message on another
 * endpoint before this one is reported (test_order).  cq->lock held; the
 * progress lock is taken after it. */
static void drain_fcq(struct dapl_tcq *cq, struct fid_cq *fcq, uint64_t owner)
{
	struct fi_cq_msg_entry ent[CQ_BATCH];

	pthread_mutex_lock(&cq->dev->progress_lock);
	for (;;) {
		ssize_t n = fi_cq_read(fcq, ent, CQ_BATCH);
		ssize_t i;

		if (n > 0) {
			for (i = 0; i < n; i++)
				cq_complete_entry(cq, &ent[i], owner);
			if (n == CQ_BATCH)
				continue;       /* there may be more */
			break;
		}
		if (n == -FI_EAVAIL && take_error(cq, fcq, owner))
			continue;
		break;          /* -FI_EAGAIN, or an error we cannot act on */
	}
	pthread_mutex_unlock(&cq->dev->progress_lock);
}

void ofi_cq_drain(struct dapl_tcq *cq)
{
	struct ofi_subcq *sub;

	drain_fcq(cq, cq->fcq, 0);
	for (sub = cq->subs; sub; sub = sub->next)
		drain_fcq(cq, sub->fcq, sub->ep ? sub->ep->owner : 0);
}

void ofi_cq_kick(struct dapl_tcq *cq)
{
	uint64_t one = 1;

	if (cq->armed && cq->ready_head) {
		cq->armed = false;
		if (write(cq->event_fd, &one, sizeof(one)) < 0) {
			/* an eventfd write fails only when the counter is
			 * saturated, i.e. it is readable already */
		}
	}
}

/* ---- the ops ---------------------------------------------------------------------- */

int ofi_cq_create(struct dapl_tdev *dev, uint32_t depth, struct dapl_tcq **cqp)
{
	struct fi_cq_attr attr;
	struct dapl_tcq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->dev = dev;
	cq->depth = depth;
	cq->fcq_fd = -1;
	pthread_mutex_init(&cq->lock, NULL);
	cq->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->event_fd < 0) {
		ret = -errno;
		goto err_free;
	}
	memset(&attr, 0, sizeof(attr));
	/* tcp's CQ never overflows (it spills to a list); the size is a hint */
	attr.size = depth < 64 ? 64 : depth;
	attr.format = FI_CQ_FORMAT_MSG;
	attr.wait_obj = FI_WAIT_FD;
	ret = ofi_err(fi_cq_open(dev->domain, &attr, &cq->fcq, cq));
	if (ret)
		goto err_efd;
	ret = ofi_err(fi_control(&cq->fcq->fid, FI_GETWAIT, &cq->fcq_fd));
	if (ret)
		goto err_fcq;
	pthread_mutex_lock(&dev->lock);
	ret = ofi_dev_add_cq(dev, cq);
	pthread_mutex_unlock(&dev->lock);
	if (ret)
		goto err_fcq;
	*cqp = cq;
	return 0;

err_fcq:
	fi_close(&cq->fcq->fid);
err_efd:
	close(cq->event_fd);
err_free:
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return ret;
}

int ofi_cq_destroy(struct dapl_tcq *cq)
{
	struct dapl_tdev *dev = cq->dev;
	struct ofi_queue *q;

	pthread_mutex_lock(&dev->lock);
	if (cq->users) {
		pthread_mutex_unlock(&dev->lock);
		return -EBUSY;
	}
	ofi_dev_remove_cq(dev, cq);
	pthread_mutex_unlock(&dev->lock);

	fi_close(&cq->fcq->fid);
	while ((q = cq->zombies)) {
		cq->zombies = q->zombie_next;
		ofi_queue_free(q);
	}
	close(cq->event_fd);
	pthread_mutex_destroy(&cq->lock);
	free(cq->links);
	free(cq);
	return 0;
}

int ofi_cq_wait_fd(struct dapl_tcq *cq)
{
	return cq->event_fd;
}

/* libfabric's own wait fds: a consumer asleep on the CQ wakes on the
 * arrival itself and reads it (cq_poll drains libfabric), one thread hop
 * fewer than waiting for the progress thread's event_fd.  Only polled
 * while it sleeps: kept in an epoll set of ours instead, every socket
 * event would cost the kernel more (a 1 MiB RDMA Write stream ran at
 * 0.7-0.8x). */
int ofi_cq_wait_more_fds(struct dapl_tcq *cq, int *fds, int max)
{
	struct ofi_subcq *sub;
	int n = 0;

	pthread_mutex_lock(&cq->lock);
	if (n < max)
		fds[n++] = cq->fcq_fd;
	for (sub = cq->subs; sub && n < max; sub = sub->next)
		fds[n++] = sub->fd;
	pthread_mutex_unlock(&cq->lock);
	return n;
}

int ofi_cq_arm(struct dapl_tcq *cq, int solicited_only)
{
	struct ofi_subcq *sub;
	struct fid *f;

	(void)solicited_only;   /* no solicited events: every completion wakes */
	pthread_mutex_lock(&cq->lock);
	/* The consumer sleeps on libfabric's fds too (wait_more_fds): let
	 * libfabric re-arm them, or a wakeup one already gave keeps it
	 * readable.  What it says is moot: the core polls once more.
	 * fi_trywait may move data, which only one thread may do at a time
	 * (progress_lock, as in drain_fcq): two would complete a Send whose
	 * receive is not yet in the CQ while a later one on another EP is. */
	pthread_mutex_lock(&cq->dev->progress_lock);
	f = &cq->fcq->fid;
	(void)fi_trywait(cq->dev->fabric, &f, 1);
	for (sub = cq->subs; sub; sub = sub->next) {
		f = &sub->fcq->fid;
		(void)fi_trywait(cq->dev->fabric, &f, 1);
	}
	pthread_mutex_unlock(&cq->dev->progress_lock);
	cq->armed = true;
	/* the consumer sleeps now: the thread must listen for it again */
	cq->empty_seen = cq->empty_polls;
	ofi_cq_drive(cq, false);
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

/* The waiter left (it may have read its completion itself, so no kick
 * cleared armed): while armed, the CQ stays in the progress thread's set
 * and a consumer that goes on polling it is never taken for a busy
 * poller, so the thread woke for, and fought over, every completion (a
 * 1 MiB RDMA Write stream polled after a blocking wait ran at 0.7x). */
void ofi_cq_disarm(struct dapl_tcq *cq)
{
	pthread_mutex_lock(&cq->lock);
	cq->armed = false;
	pthread_mutex_unlock(&cq->lock);
}

void ofi_cq_ack(struct dapl_tcq *cq)
{
	uint64_t v;

	while (read(cq->event_fd, &v, sizeof(v)) > 0)
		;
}

int ofi_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max)
{
	int n = 0;
	bool drained = false;

	if (max <= 0)
		return max < 0 ? -EINVAL : 0;
	pthread_mutex_lock(&cq->lock);
	cq->polled_ns = dapl_now_ns();
	for (;;) {
		while (n < max && cq->ready_head) {
			struct ofi_slot *s = cq->ready_head;
			struct ofi_queue *q = s->q;

			cq->ready_head = s->next;
			if (!cq->ready_head)
				cq->ready_tail = NULL;
			wc[n].context = s->context;
			wc[n].owner = q ? (q->ep ? q->ep->owner : 0) : s->owner;
			wc[n].status = (enum dapl_twc_status)s->status;
			wc[n].opcode = (enum dapl_twc_opcode)s->opcode;
			wc[n].byte_len = s->byte_len;
			wc[n].vendor_err = s->vendor_err;
			/* no immediate data on libfabric tcp (dapl_ofi(3)) */
			wc[n].imm = 0;
			wc[n].flags = 0;
			n++;
			s->next = NULL;
			if (!q) {
				ofi_srq_slot_release(s);
				continue;
			}
			s->state = OFI_SLOT_FREE;
			q->nready--;
			queue_reclaim(q);
		}
		if (n == max || drained)
			break;
		/* Read libfabric directly too: a busy-polling consumer need not
		 * wait for the progress thread (and this drives tcp). */
		ofi_cq_drain(cq);
		drained = true;
	}
	if (n == 0) {
		cq->empty_polls++;
		cq->poller = pthread_self();
	}
	ofi_cq_kick(cq);
	pthread_mutex_unlock(&cq->lock);
	return n;
}

/* ---- ep CQ locks -------------------------------------------------------------------- */

void ofi_ep_lock_cqs(struct dapl_tep *ep)
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

void ofi_ep_unlock_cqs(struct dapl_tep *ep)
{
	pthread_mutex_unlock(&ep->scq->lock);
	if (ep->rcq != ep->scq)
		pthread_mutex_unlock(&ep->rcq->lock);
}
