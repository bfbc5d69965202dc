/* Event dispatchers: the dat_evd_* entry points and the core's posting of
 * events (see core.h for the objects and the lock order).
 *
 * An EVD is a ring of qlen DAT_EVENTs that the core fills (connection
 * events, connection requests, asynchronous errors, software events) plus,
 * for DTO / RMR-bind EVDs, a transport CQ that dequeue and wait poll
 * directly.  Completions are moved from the CQ into the ring only as far
 * as the ring has room, so they never overflow it: what does not fit stays
 * in the CQ.
 *
 * Waking: dapl_evd_post writes the EVD's eventfd only while a thread is in
 * dat_evd_wait (waiting, under evd->lock); that thread sleeps in ppoll() on
 * the eventfd and on the CQ's wait fd, armed by the transport's protocol
 * (ack what the fd still holds, arm, poll once more, then sleep).
 *
 * Teardown with a sleeper: freeing an EVD (dat_evd_free, abrupt IA close)
 * while a thread sleeps in dat_evd_wait marks the handle dead, destroys
 * the CQ and wakes the sleeper, which returns DAT_ABORT and gives the
 * memory back itself ("the last one out frees"), so the thread that frees
 * never waits for it and never holds ia->lock across a sleep. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* ppoll */
#endif
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#if DAT_GEN == 2
#include <dat2/dat_ib_extensions.h>
#endif

#if DAT_GEN == 2
/* An EVD for extended events.  The extended DTO events (DAT_IB_DTO_EVENT)
 * are DTO completions and reach any DTO EVD; the flag alone makes a DTO
 * EVD. */
#define EVD_EXT_FLAG DAT_IB_EVD_EXTENSION_FLAG
#else
#define EVD_EXT_FLAG 0
#endif
#define EVD_FLAGS_ALL (DAT_EVD_SOFTWARE_FLAG | DAT_EVD_CR_FLAG | \
		       DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG | \
		       DAT_EVD_RMR_BIND_FLAG | DAT_EVD_ASYNC_FLAG | EVD_EXT_FLAG)
#define EVD_CQ_FLAGS (DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG | EVD_EXT_FLAG)
#define EVD_POLL_BATCH 16
#define EVD_CM_FDS 8       /* progress fds a connection-EVD waiter sleeps on */
#define EVD_CM_IDLE_PUMPS 4 /* its passes in a row that bring no connection
			     * event before it leaves them to the thread */
#define EVD_FDS_PER_CQ 4   /* cq_wait_fd and up to 3 more (cq_wait_more_fds) */

#define ERR_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)
#define ERR_HANDLE1 DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1)
#define ERR_STATE(s) DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_##s)

static struct dapl_evd *evd_get(DAT_EVD_HANDLE h)
{
	return (struct dapl_evd *)dapl_handle_get(h, DAT_HANDLE_TYPE_EVD);
}

/* The EVD was torn down while we slept (evd->lock held). */
static bool evd_dead(const struct dapl_evd *evd)
{
	return evd->h.magic != dapl_magic(DAT_HANDLE_TYPE_EVD);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void fd_signal(int fd)
{
	uint64_t one = 1;

	/* Fails only when the counter is at its maximum: still readable. */
	if (write(fd, &one, sizeof(one)) < 0)
		return;
}

static void fd_drain(int fd)
{
	uint64_t v;

	/* Non-blocking: EAGAIN when already drained, which is fine. */
	if (read(fd, &v, sizeof(v)) < 0)
		return;
}

/* ---- the ring (evd->lock held) ------------------------------------------- */

static void ring_push_hold(struct dapl_evd *evd, const DAT_EVENT *ev,
			   struct dapl_dto_slot *hold)
{
	DAT_COUNT at = (evd->head + evd->count) % evd->qlen;
	DAT_EVENT *slot = &evd->ring[at];

	*slot = *ev;
	slot->evd_handle = (DAT_EVD_HANDLE)evd;
	evd->ring_hold[at] = hold;
	evd->count++;
}

static void ring_push(struct dapl_evd *evd, const DAT_EVENT *ev)
{
	ring_push_hold(evd, ev, NULL);
}

static void ring_pop(struct dapl_evd *evd, DAT_EVENT *ev)
{
	*ev = evd->ring[evd->head];
	if (evd->ring_hold[evd->head]) {
		/* the SRQ receive stops being outstanding now */
		dapl_dto_hold_release(evd->ring_hold[evd->head]);
		evd->ring_hold[evd->head] = NULL;
	}
	evd->head = (evd->head + 1) % evd->qlen;
	evd->count--;
	evd->overflowed = false;   /* the consumer dequeues again */
}

/* Moves completions from the CQ into the ring while it has room; returns
 * how many events that added.  evd->lock held. */
static int fill_from(struct dapl_evd *evd, struct dapl_tcq *cq)
{
	struct dapl_twc wc[EVD_POLL_BATCH];
	struct dapl_dto_slot *hold;
	DAT_EVENT ev;
	int added = 0, room, n, i;

	while ((room = evd->qlen - evd->count) > 0) {
		if (room > EVD_POLL_BATCH)
			room = EVD_POLL_BATCH;
		/* A transport error reads as empty; it shows up again on the
		 * next poll and on the EP's connection. */
		n = evd->ia->ops->cq_poll(cq, wc, room);
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			memset(&ev, 0, sizeof(ev));
			if (dapl_dto_wc_to_event(evd, &wc[i], &ev, &hold)) {
				ring_push_hold(evd, &ev, hold);
				added++;
			}
		}
		if (n < room)
			break;
	}
	return added;
}

/* The EVD's own CQ first, then the ones on other IAs' devices (all of one
 * provider, so of one transport: evd->ia->ops drives them all). */
static int evd_fill(struct dapl_evd *evd)
{
	struct dapl_xcq *x;
	int added = 0;

	if (evd->cq)
		added += fill_from(evd, evd->cq);
	for (x = evd->xcqs; x; x = x->next)
		added += fill_from(evd, x->cq);
	return added;
}

/* First half of the transport's no-lost-wakeup protocol: ack a
 * notification the wait fd still holds, then arm.  The caller polls once
 * more before it sleeps.  evd->lock held. */
static void arm_cq(struct dapl_evd *evd, struct dapl_tcq *cq)
{
	const struct udapl_transport_ops *ops = evd->ia->ops;
	struct pollfd p = { .fd = ops->cq_wait_fd(cq), .events = POLLIN };

	if (poll(&p, 1, 0) > 0 && (p.revents & POLLIN))
		ops->cq_ack(cq);
	ops->cq_arm(cq, 0);
}

/* Whether the transport offers cq_disarm (transport.h). */
static bool has_disarm(const struct udapl_transport_ops *ops)
{
	return ops->size >= offsetof(struct udapl_transport_ops, cq_disarm) +
			    sizeof(ops->cq_disarm) && ops->cq_disarm;
}

/* The waiter leaves: every CQ of the EVD is no longer slept on.
 * evd->lock held. */
static void evd_disarm(struct dapl_evd *evd)
{
	const struct udapl_transport_ops *ops = evd->ia->ops;
	struct dapl_xcq *x;

	if (!has_disarm(ops))
		return;
	if (evd->cq)
		ops->cq_disarm(evd->cq);
	for (x = evd->xcqs; x; x = x->next)
		ops->cq_disarm(x->cq);
}

/* Whether the transport offers cq_wait_more_fds (transport.h). */
static bool has_more_fds(const struct udapl_transport_ops *ops)
{
	return ops->size >= offsetof(struct udapl_transport_ops, cq_wait_more_fds) +
			    sizeof(ops->cq_wait_more_fds) && ops->cq_wait_more_fds;
}

/* cq's wait fds from pfd[n] on, room slots in all: cq_wait_fd's, then any
 * more the transport offers.  Returns the new n, counting the fds that
 * did not fit too. */
static int cq_fds(const struct udapl_transport_ops *ops, struct dapl_tcq *cq,
		  struct pollfd *pfd, int n, int room)
{
	int more[EVD_FDS_PER_CQ - 1], k, i;

	if (n < room)
		pfd[n] = (struct pollfd){ .fd = ops->cq_wait_fd(cq), .events = POLLIN };
	n++;
	if (!has_more_fds(ops))
		return n;
	k = ops->cq_wait_more_fds(cq, more, EVD_FDS_PER_CQ - 1);
	for (i = 0; i < k; i++, n++)
		if (n < room)
			pfd[n] = (struct pollfd){ .fd = more[i], .events = POLLIN };
	return n;
}

/* Arms every CQ of the EVD and puts their wait fds in pfd (at most room,
 * EVD_FDS_PER_CQ per CQ at most); returns how many fds they have, which
 * may be more than room.  evd->lock held. */
static int evd_arm(struct dapl_evd *evd, struct pollfd *pfd, int room)
{
	const struct udapl_transport_ops *ops = evd->ia->ops;
	struct dapl_xcq *x;
	int n = 0;

	if (evd->cq) {
		arm_cq(evd, evd->cq);
		n = cq_fds(ops, evd->cq, pfd, n, room);
	}
	for (x = evd->xcqs; x; x = x->next) {
		arm_cq(evd, x->cq);
		n = cq_fds(ops, x->cq, pfd, n, room);
	}
	return n;
}

/* How many CQs the EVD has.  evd->lock held. */
static int evd_ncq(const struct dapl_evd *evd)
{
	const struct dapl_xcq *x;
	int n = evd->cq ? 1 : 0;

	for (x = evd->xcqs; x; x = x->next)
		n++;
	return n;
}

/* ---- posting ------------------------------------------------------------- */

static DAT_RETURN evd_enqueue(struct dapl_evd *evd, const DAT_EVENT *ev,
			      bool report_overflow)
{
	struct dapl_evd *async;
	DAT_EVENT ov;
	bool report, wake;

	pthread_mutex_lock(&evd->lock);
	if (evd->count >= evd->qlen) {
		/* ia->async_evd changes only under ia->lock, which our caller
		 * may hold, so it is read without it. */
		async = evd->ia->async_evd;
		report = report_overflow && !evd->overflowed && async &&
			 async != evd;
		evd->overflowed = true;
		pthread_mutex_unlock(&evd->lock);
		if (report) {
			dapl_log("EVD %p overflowed (queue length %d): "
				 "event 0x%x dropped", (void *)evd,
				 (int)evd->qlen, (unsigned)ev->event_number);
			memset(&ov, 0, sizeof(ov));
			ov.event_number = DAT_ASYNC_ERROR_EVD_OVERFLOW;
			ov.event_data.asynch_error_event_data.dat_handle =
				(DAT_HANDLE)evd;
			ov.event_data.asynch_error_event_data.reason =
				DAT_EVD_OVERFLOW_ERROR;
			evd_enqueue(async, &ov, false);
		}
		return DAT_ERROR(DAT_QUEUE_FULL, DAT_NO_SUBTYPE);
	}
	ring_push(evd, ev);
	/* the waiter itself posting (serving itself the progress pass,
	 * dapl_cm_waiter_pump) looks at the ring before it sleeps again:
	 * the fd, written, would only wake its next wait for nothing */
	wake = evd->waiting && !pthread_equal(evd->waiter, pthread_self());
	/* with a waiter (itself posting or not) the event is the waiter's,
	 * not the CNO's */
	if (!evd->waiting && evd->enabled && evd->cno)
		dapl_cno_trigger(evd->cno, evd);
	pthread_mutex_unlock(&evd->lock);
	/* The waiter is woken once the lock is free: woken under it, it
	 * would only sleep again on the lock.  The fd outlives this: the
	 * EVD is freed under ia->lock, which posters of connection events
	 * hold, and not while EPs use it (completions flushed at post). */
	if (wake)
		fd_signal(evd->event_fd);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_evd_post(struct dapl_evd *evd, const DAT_EVENT *ev)
{
	return evd_enqueue(evd, ev, true);
}

DAT_RETURN dapl_evd_post_connection(struct dapl_evd *evd,
				    DAT_EVENT_NUMBER num,
				    struct dapl_ep *ep, DAT_COUNT pdata_size,
				    DAT_PVOID pdata)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = num;
	ev.event_data.connect_event_data.ep_handle = (DAT_EP_HANDLE)ep;
	ev.event_data.connect_event_data.private_data_size = pdata_size;
	ev.event_data.connect_event_data.private_data = pdata;
	return dapl_evd_post(evd, &ev);
}

DAT_RETURN dapl_evd_post_cr(struct dapl_evd *evd, struct dapl_sp *sp,
			    struct dapl_cr *cr)
{
	DAT_CR_ARRIVAL_EVENT_DATA *d;
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_CONNECTION_REQUEST_EVENT;
	d = &ev.event_data.cr_arrival_event_data;
	d->sp_handle.psp_handle = (DAT_HANDLE)sp;  /* same member for an RSP */
	d->local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&sp->ia->local_addr;
	d->conn_qual = sp->conn_qual;
	d->cr_handle = (DAT_CR_HANDLE)cr;
	return dapl_evd_post(evd, &ev);
}

/* The reason code the DAT headers define for each asynchronous event. */
static DAT_COUNT async_reason(DAT_EVENT_NUMBER num)
{
	switch (num) {
	case DAT_ASYNC_ERROR_EVD_OVERFLOW:
		return DAT_EVD_OVERFLOW_ERROR;
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC:
		return DAT_IA_CATASTROPHIC_ERROR;
	case DAT_ASYNC_ERROR_TIMED_OUT:
		return DAT_EP_TRANSFER_TO_ERROR;
	case DAT_ASYNC_ERROR_EP_BROKEN:
		return DAT_EP_OTHER_ERROR;
	default:
		return DAT_IA_OTHER_ERROR;
	}
}

DAT_RETURN dapl_evd_post_async(struct dapl_ia *ia, DAT_EVENT_NUMBER num,
			       DAT_HANDLE about)
{
	return dapl_evd_post_async_reason(ia, num, about, async_reason(num));
}

DAT_RETURN dapl_evd_post_async_reason(struct dapl_ia *ia, DAT_EVENT_NUMBER num,
				      DAT_HANDLE about, DAT_COUNT reason)
{
	struct dapl_evd *evd = ia->async_evd;
	DAT_EVENT ev;

	if (!evd)
		return ERR_STATE(ASYNC);
	memset(&ev, 0, sizeof(ev));
	ev.event_number = num;
	ev.event_data.asynch_error_event_data.dat_handle = about;
	ev.event_data.asynch_error_event_data.reason = reason;
	/* The async EVD has nowhere to report its own overflow. */
	return evd_enqueue(evd, &ev, false);
}

/* ---- create / free ------------------------------------------------------- */

/* Gives back what an EVD holds once nobody can reach it. */
/* Completions still in the CQ (flushes of EPs already gone) are
 * converted and dropped, so what they hold is given back. */
static void cq_drain(struct dapl_evd *evd, struct dapl_tcq *cq)
{
	struct dapl_twc wc[EVD_POLL_BATCH];
	DAT_EVENT ev;
	int n, i;

	while ((n = evd->ia->ops->cq_poll(cq, wc, EVD_POLL_BATCH)) > 0)
		for (i = 0; i < n; i++)
			dapl_dto_wc_to_event(evd, &wc[i], &ev, NULL);
}

/* Drops the CQ *pp points at (what it still holds is given back).
 * evd->lock held. */
static void xcq_destroy(struct dapl_evd *evd, struct dapl_xcq **pp)
{
	struct dapl_xcq *x = *pp;

	*pp = x->next;
	cq_drain(evd, x->cq);
	evd->ia->ops->cq_destroy(x->cq);
	free(x);
}

struct dapl_tcq *dapl_evd_cq_for(struct dapl_evd *evd, struct dapl_ia *ia)
{
	struct dapl_tcq *cq = NULL;
	struct dapl_xcq *x;

	if (evd->ia == ia)
		return evd->cq;
	/* An EP of another IA of the provider: its transport endpoint can
	 * only complete into a CQ of its own device, so the EVD gets one
	 * there and polls it with its own. */
	pthread_mutex_lock(&evd->lock);
	for (x = evd->xcqs; x; x = x->next)
		if (x->ia == ia)
			break;
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (x && ia->ops->cq_create(ia->dev, (uint32_t)evd->qlen,
					    &x->cq) == 0) {
			x->ia = ia;
			x->next = evd->xcqs;
			evd->xcqs = x;
			/* a waiter sleeps on the old set of CQs */
			if (evd->waiting)
				fd_signal(evd->event_fd);
		} else {
			free(x);
			x = NULL;
		}
	}
	if (x)
		cq = x->cq;
	pthread_mutex_unlock(&evd->lock);
	return cq;
}

void dapl_evd_drop_xcqs_of(struct dapl_ia *ia)
{
	struct dapl_xcq **pp;
	struct dapl_evd *evd;
	struct dapl_ia *other;

	for (other = dapl_share_first(); other; other = dapl_share_next(other)) {
		if (other == ia || other->prov != ia->prov)
			continue;
		pthread_mutex_lock(&other->lock);
		for (evd = other->evds; evd; evd = evd->next) {
			pthread_mutex_lock(&evd->lock);
			for (pp = &evd->xcqs; *pp;) {
				if ((*pp)->ia == ia) {
					xcq_destroy(evd, pp);
					/* a waiter sleeps on the old set */
					if (evd->waiting)
						fd_signal(evd->event_fd);
				} else {
					pp = &(*pp)->next;
				}
			}
			pthread_mutex_unlock(&evd->lock);
		}
		pthread_mutex_unlock(&other->lock);
	}
}

static void evd_release(struct dapl_evd *evd)
{
	DAT_COUNT i;

	for (i = 0; evd->ring_hold && i < evd->qlen; i++)
		if (evd->ring_hold[i])
			dapl_dto_hold_release(evd->ring_hold[i]);
	free(evd->ring_hold);
	free(evd->ring);
	if (evd->event_fd >= 0)
		close(evd->event_fd);
	pthread_mutex_destroy(&evd->lock);
	dapl_handle_free(evd);
}

/* Takes evd off its IA and its CNO and destroys its CQ.  ia->lock and
 * evd->lock held.  True when a thread sleeps in dat_evd_wait on it: that
 * thread has been woken and releases the EVD itself. */
static bool evd_teardown(struct dapl_evd *evd)
{
	struct dapl_ia *ia = evd->ia;
	struct dapl_evd **pp;

	for (pp = &ia->evds; *pp; pp = &(*pp)->next) {
		if (*pp == evd) {
			*pp = evd->next;
			break;
		}
	}
	evd->next = NULL;
	if (ia->async_evd == evd)
		ia->async_evd = NULL;
	if (evd->cno) {
		dapl_cno_detach(evd->cno, evd, true);
		evd->cno = NULL;
	}
	if (evd->cq) {
		cq_drain(evd, evd->cq);
		ia->ops->cq_destroy(evd->cq);
		evd->cq = NULL;
	}
	/* Every EP of another IA has let go (users 0, or its IA's close
	 * detached them first), so their CQs go too. */
	while (evd->xcqs)
		xcq_destroy(evd, &evd->xcqs);
	if (!evd->waiting)
		return false;
	/* Stale from now on; the memory stays until the sleeper leaves. */
	evd->h.magic = DAPL_MAGIC_DEAD;
	fd_signal(evd->event_fd);
	return true;
}

DAT_RETURN dapl_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT min_qlen,
			   DAT_CNO_HANDLE cno_handle, DAT_EVD_FLAGS flags,
			   DAT_EVD_HANDLE *evd_handle)
{
	struct dapl_ia *ia = dapl_ia_get(ia_handle);
	struct dapl_cno *cno = NULL;
	struct dapl_evd *evd;
	DAT_RETURN ret;
	int err;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (min_qlen <= 0 || (ia->dev_attr.max_cqe &&
			      (uint32_t)min_qlen > ia->dev_attr.max_cqe))
		return ERR_ARG(2);
	if (cno_handle != DAT_HANDLE_NULL) {
		cno = (struct dapl_cno *)dapl_handle_get(cno_handle,
							 DAT_HANDLE_TYPE_CNO);
		/* A CNO gathers EVDs of one IA (dat_cno_wait(3)). */
		if (!cno || cno->ia != ia)
			return DAT_ERROR(DAT_INVALID_HANDLE,
					 DAT_INVALID_HANDLE_CNO);
	}
	if (!flags || (flags & ~EVD_FLAGS_ALL))
		return ERR_ARG(4);
	if (!evd_handle)
		return ERR_ARG(5);

	evd = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_EVD,
				sizeof(*evd), ia);
	if (!evd)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	evd->ia = ia;
	evd->flags = flags;
	if (flags & EVD_EXT_FLAG)
		evd->flags |= DAT_EVD_DTO_FLAG;
	evd->qlen = min_qlen;
	evd->enabled = true;
	evd->waitable = true;
	pthread_mutex_init(&evd->lock, NULL);
	evd->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	evd->ring = calloc((size_t)evd->qlen, sizeof(DAT_EVENT));
	evd->ring_hold = calloc((size_t)evd->qlen, sizeof(*evd->ring_hold));
	if (evd->event_fd < 0 || !evd->ring || !evd->ring_hold) {
		ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				DAT_RESOURCE_MEMORY);
		goto fail;
	}
	if (flags & EVD_CQ_FLAGS) {
		err = ia->ops->cq_create(ia->dev, (uint32_t)evd->qlen,
					 &evd->cq);
		if (err) {
			evd->cq = NULL;
			ret = dapl_errno_to_dat(err);
			goto fail;
		}
	}

	pthread_mutex_lock(&ia->lock);
	if (cno && !dapl_handle_get(cno, DAT_HANDLE_TYPE_CNO)) {
		/* freed by another thread meanwhile */
		pthread_mutex_unlock(&ia->lock);
		ret = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO);
		goto fail;
	}
	if (cno) {
		dapl_cno_attach(cno);
		evd->cno = cno;
	}
	evd->next = ia->evds;
	ia->evds = evd;
	pthread_mutex_unlock(&ia->lock);
	*evd_handle = (DAT_EVD_HANDLE)evd;
	return DAT_SUCCESS;

fail:
	if (evd->cq)
		ia->ops->cq_destroy(evd->cq);
	evd_release(evd);
	return ret;
}

DAT_RETURN dapl_evd_free(DAT_EVD_HANDLE evd_handle)
{
	struct dapl_evd *evd = evd_get(evd_handle);
	struct dapl_ia *ia;
	DAT_RETURN ret = DAT_SUCCESS;
	bool sleeper = false;

	if (!evd)
		return ERR_HANDLE1;
	ia = evd->ia;
	pthread_mutex_lock(&ia->lock);
	pthread_mutex_lock(&evd->lock);
	if (evd_dead(evd))
		ret = ERR_HANDLE1;           /* another thread freed it */
	else if (evd->users > 0)
		ret = ERR_STATE(IN_USE);     /* EPs, PSPs or RSPs use it */
	else if (ia->async_evd == evd)
		ret = ERR_STATE(ASYNC);      /* dat_ia_close frees it */
	else
		sleeper = evd_teardown(evd); /* a waiter gets DAT_ABORT */
	pthread_mutex_unlock(&evd->lock);
	pthread_mutex_unlock(&ia->lock);
	if (ret == DAT_SUCCESS && !sleeper)
		evd_release(evd);
	return ret;
}

void dapl_evd_destroy(struct dapl_evd *evd)
{
	bool sleeper;

	pthread_mutex_lock(&evd->lock);
	sleeper = evd_teardown(evd);
	pthread_mutex_unlock(&evd->lock);
	if (!sleeper)
		evd_release(evd);
}

/* ---- parameters and state ------------------------------------------------ */

DAT_RETURN dapl_evd_query(DAT_EVD_HANDLE evd_handle, DAT_EVD_PARAM_MASK mask,
			  DAT_EVD_PARAM *param)
{
	struct dapl_evd *evd = evd_get(evd_handle);

	if (!evd)
		return ERR_HANDLE1;
	if (mask & ~DAT_EVD_FIELD_ALL)
		return ERR_ARG(2);
	if (!param)
		return ERR_ARG(3);
	pthread_mutex_lock(&evd->lock);
	if (mask & DAT_EVD_FIELD_IA_HANDLE)
		param->ia_handle = (DAT_IA_HANDLE)evd->ia;
	if (mask & DAT_EVD_FIELD_EVD_QLEN)
		param->evd_qlen = evd->qlen;
	if (mask & DAT_EVD_FIELD_EVD_STATE)
		param->evd_state = (DAT_EVD_STATE)
			((evd->enabled ? DAT_EVD_STATE_ENABLED :
					 DAT_EVD_STATE_DISABLED) |
			 (evd->waitable ? DAT_EVD_STATE_WAITABLE :
					  DAT_EVD_STATE_UNWAITABLE));
	if (mask & DAT_EVD_FIELD_CNO)
		param->cno_handle = (DAT_CNO_HANDLE)evd->cno;
	if (mask & DAT_EVD_FIELD_EVD_FLAGS)
		param->evd_flags = evd->flags;
	pthread_mutex_unlock(&evd->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_evd_modify_cno(DAT_EVD_HANDLE evd_handle,
			       DAT_CNO_HANDLE cno_handle)
{
	struct dapl_evd *evd = evd_get(evd_handle);
	struct dapl_cno *cno = NULL, *old;
	struct dapl_ia *ia;

	if (!evd)
		return ERR_HANDLE1;
	ia = evd->ia;
	/* Under ia->lock, like every attach and detach, so that a CNO's
	 * users count is stable while dat_cno_wait looks at its EVDs. */
	pthread_mutex_lock(&ia->lock);
	if (cno_handle != DAT_HANDLE_NULL) {
		cno = (struct dapl_cno *)dapl_handle_get(cno_handle,
							 DAT_HANDLE_TYPE_CNO);
		if (!cno || cno->ia != ia) {
			pthread_mutex_unlock(&ia->lock);
			return DAT_ERROR(DAT_INVALID_HANDLE,
					 DAT_INVALID_HANDLE_CNO);
		}
	}
	pthread_mutex_lock(&evd->lock);
	old = evd->cno;
	if (old != cno) {
		if (cno)
			dapl_cno_attach(cno);
		evd->cno = cno;
		if (old)
			dapl_cno_detach(old, evd, false);
	}
	pthread_mutex_unlock(&evd->lock);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

static DAT_RETURN evd_set_flag(DAT_EVD_HANDLE evd_handle, bool waitable,
			       bool value)
{
	struct dapl_evd *evd = evd_get(evd_handle);

	if (!evd)
		return ERR_HANDLE1;
	pthread_mutex_lock(&evd->lock);
	if (waitable) {
		evd->waitable = value;
		if (!value && evd->waiting)
			fd_signal(evd->event_fd); /* -> INVALID_STATE */
	} else {
		evd->enabled = value;
	}
	pthread_mutex_unlock(&evd->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_evd_enable(DAT_EVD_HANDLE evd_handle)
{
	return evd_set_flag(evd_handle, false, true);
}

DAT_RETURN dapl_evd_disable(DAT_EVD_HANDLE evd_handle)
{
	return evd_set_flag(evd_handle, false, false);
}

DAT_RETURN dapl_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	return evd_set_flag(evd_handle, true, false);
}

DAT_RETURN dapl_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	return evd_set_flag(evd_handle, true, true);
}

DAT_RETURN dapl_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT qlen)
{
	struct dapl_evd *evd = evd_get(evd_handle);
	DAT_EVENT *ring, *old;
	struct dapl_dto_slot **hold, **old_hold;
	DAT_COUNT i;

	if (!evd)
		return ERR_HANDLE1;
	if (qlen <= 0 || (evd->ia->dev_attr.max_cqe &&
			  (uint32_t)qlen > evd->ia->dev_attr.max_cqe))
		return ERR_ARG(2);
	ring = calloc((size_t)qlen, sizeof(DAT_EVENT));
	hold = calloc((size_t)qlen, sizeof(*hold));
	if (!ring || !hold) {
		free(ring);
		free(hold);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	}
	pthread_mutex_lock(&evd->lock);
	if (evd->count > qlen) {
		pthread_mutex_unlock(&evd->lock);
		free(ring);
		free(hold);
		return DAT_ERROR(DAT_INVALID_STATE, DAT_NO_SUBTYPE);
	}
	for (i = 0; i < evd->count; i++) {
		ring[i] = evd->ring[(evd->head + i) % evd->qlen];
		hold[i] = evd->ring_hold[(evd->head + i) % evd->qlen];
	}
	old = evd->ring;
	old_hold = evd->ring_hold;
	evd->ring = ring;
	evd->ring_hold = hold;
	evd->head = 0;
	/* The CQ keeps the depth it was created with (transports offer no
	 * resize); completions beyond the ring wait in it as before. */
	evd->qlen = qlen;
	pthread_mutex_unlock(&evd->lock);
	free(old);
	free(old_hold);
	return DAT_SUCCESS;
}

/* ---- taking events ------------------------------------------------------- */

DAT_RETURN dapl_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT *event)
{
	struct dapl_evd *evd = evd_get(evd_handle);

	if (!evd)
		return ERR_HANDLE1;
	/* dat_evd_post_se(3) does not say; an EVD created without the
	 * software stream does not take software events. */
	if (!(evd->flags & DAT_EVD_SOFTWARE_FLAG))
		return ERR_ARG(1);
	if (!event || event->event_number != DAT_SOFTWARE_EVENT)
		return ERR_ARG(2);
	/* Full: DAT_QUEUE_FULL and no overflow event (dat_evd_post_se(3)). */
	return evd_enqueue(evd, event, false);
}

/* "Nothing queued" from dat_evd_dequeue: OpenFabrics-era programs compare
 * the result with DAT_QUEUE_EMPTY itself, so that is what they get; strict
 * mode sets the error class bit like every other failure (libdat(7)).
 * Nothing is let through here, so nothing is logged: polling programs
 * meet this all the time. */
static DAT_RETURN queue_empty(void)
{
	if (!dapl_strict())
		return DAT_QUEUE_EMPTY;
	return DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
}

/* A poller that keeps finding an EVD empty gives up the CPU every this
 * many empty dequeues.  Programs busy-poll with more threads than cores;
 * a spinner that never yields holds a core for its whole time slice while
 * the thread whose peer's message or completion it waits for cannot run
 * (dat_evd_dequeue(3)).  One sched_yield per 16 polls costs nothing
 * measurable when the poller is alone on its core.  (Counted per EVD, not
 * per thread: thread-local storage in a provider that is dlclose()d
 * trips LeakSanitizer.) */
#define EMPTY_POLLS_PER_YIELD 16

DAT_RETURN dapl_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT *event)
{
	struct dapl_evd *evd = evd_get(evd_handle);
	DAT_RETURN ret = DAT_SUCCESS;
	bool yield = false;

	if (!evd)
		return ERR_HANDLE1;
	if (!event)
		return ERR_ARG(2);
	pthread_mutex_lock(&evd->lock);
	if (evd->waiting) {
		ret = ERR_STATE(WAITER);      /* a waiter owns the EVD */
	} else {
		if (evd->count == 0)
			evd_fill(evd);
		if (evd->count == 0) {
			ret = queue_empty();
			yield = ++evd->empty_polls % EMPTY_POLLS_PER_YIELD == 0;
		} else {
			ring_pop(evd, event);
			evd->empty_polls = 0;
		}
	}
	pthread_mutex_unlock(&evd->lock);
	/* outside the lock: whoever runs instead may need it */
	if (yield)
		sched_yield();
	return ret;
}

DAT_RETURN dapl_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout,
			 DAT_COUNT threshold, DAT_EVENT *event,
			 DAT_COUNT *nmore)
{
	struct dapl_evd *evd = evd_get(evd_handle);
	bool forever = timeout == DAT_TIMEOUT_INFINITE;
	uint64_t deadline = 0, now = 0, left;
	struct pollfd pfd_few[1 + 2 * EVD_FDS_PER_CQ + EVD_CM_FDS], *pfd = pfd_few, *more;
	int cap = 1 + 2 * EVD_FDS_PER_CQ;   /* event_fd and the CQs' fds */
	int need;
	struct timespec ts;
	DAT_RETURN ret;
	int nfds, ncq, rc, err, i;
	/* a connection or CR EVD: the progress fds this waiter sleeps on
	 * and serves itself (dapl_cm_waiter_pump); -1 = not looked up yet */
	int cm_fds[EVD_CM_FDS], ncm = -1, cm_at = 0, cm_idle = 0;
	bool pinned = false, armed = false;
	struct dapl_ia *ia;

	if (!evd)
		return ERR_HANDLE1;
	ia = evd->ia;           /* for the EVD's life; pinned for the CM fds */
	if (!event)
		return ERR_ARG(4);
	if (!nmore)
		return ERR_ARG(5);
	if (!forever)
		deadline = mono_ns() + (uint64_t)timeout * 1000u;

	pthread_mutex_lock(&evd->lock);
	if (threshold < 1 || threshold > evd->qlen) {
		pthread_mutex_unlock(&evd->lock);
		return ERR_ARG(3);
	}
	if (!evd->waitable) {
		pthread_mutex_unlock(&evd->lock);
		return ERR_STATE(UNWAITABLE);
	}
	if (evd->waiting) {
		pthread_mutex_unlock(&evd->lock);
		return ERR_STATE(WAITER);
	}
	evd->waiting = true;   /* from here on, posts wake us, not the CNO */
	evd->waiter = pthread_self();
	for (;;) {
		evd_fill(evd);
		if (evd->count >= threshold) {
			ring_pop(evd, event);
			*nmore = evd->count;
			ret = DAT_SUCCESS;
			break;
		}
		if (!forever &&
		    (timeout == 0 || (now = mono_ns()) >= deadline)) {
			*nmore = evd->count;
			ret = DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
			break;
		}
		if (ncm < 0) {
			ncm = 0;
			if (evd->flags & (DAT_EVD_CONNECTION_FLAG | DAT_EVD_CR_FLAG)) {
				/* the IA outlives this wait (it is alive while
				 * its EVD is); ia->lock comes before evd->lock */
				dapl_ia_pin(ia);
				pinned = true;
				pthread_mutex_unlock(&evd->lock);
				ncm = dapl_cm_waiter_fds(ia, cm_fds, EVD_CM_FDS);
				pthread_mutex_lock(&evd->lock);
				continue;       /* look again: it was unlocked */
			}
		}
		ncq = evd_ncq(evd);
		need = 1 + ncq * EVD_FDS_PER_CQ;
		if (need > cap) {
			/* an EVD shared with other IAs has one CQ per IA */
			more = malloc((size_t)(need + EVD_CM_FDS) * sizeof(*more));
			if (!more) {
				*nmore = evd->count;
				ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
						DAT_RESOURCE_MEMORY);
				break;
			}
			if (pfd != pfd_few)
				free(pfd);
			pfd = more;
			cap = need;
		}
		pfd[0] = (struct pollfd){ .fd = evd->event_fd,
					  .events = POLLIN };
		nfds = 1;
		if (ncq) {
			/* at most EVD_FDS_PER_CQ each: they fit */
			nfds += evd_arm(evd, pfd + 1, cap - 1);
			armed = true;
			if (evd_fill(evd) > 0 && evd->count >= threshold)
				continue;
		}
		/* the progress fds, which the progress thread leaves to us
		 * meanwhile (dapl_cm_waiter_fds) */
		cm_at = nfds;
		for (i = 0; i < ncm; i++)
			pfd[nfds++] = (struct pollfd){ .fd = cm_fds[i],
						       .events = POLLIN };
		if (!forever) {
			left = deadline - now;
			ts.tv_sec = (time_t)(left / 1000000000u);
			ts.tv_nsec = (long)(left % 1000000000u);
		}
		pthread_mutex_unlock(&evd->lock);
		rc = ppoll(pfd, (nfds_t)nfds, forever ? NULL : &ts, NULL);
		err = rc < 0 ? errno : 0;
		for (i = cm_at; rc > 0 && i < nfds; i++)
			if (pfd[i].revents & POLLIN) {
				/* woken again and again for other endpoints'
				 * data (a program that waits on its CR EVD
				 * while it moves data): that is the progress
				 * thread's, which spins after it */
				if (dapl_cm_waiter_pump(ia) > 0) {
					cm_idle = 0;
				} else if (++cm_idle >= EVD_CM_IDLE_PUMPS) {
					dapl_cm_waiter_done(ia);
					ncm = 0;
				}
				break;
			}
		pthread_mutex_lock(&evd->lock);
		if (evd_dead(evd)) {
			/* freed or its IA closed while we slept */
			pthread_mutex_unlock(&evd->lock);
			evd_release(evd);
			if (pfd != pfd_few)
				free(pfd);
			if (ncm > 0)
				dapl_cm_waiter_done(ia);
			if (pinned)
				dapl_ia_unpin(ia);
			return DAT_ERROR(DAT_ABORT, DAT_NO_SUBTYPE);
		}
		if (pfd[0].revents & POLLIN)
			fd_drain(evd->event_fd);
		/* CQ notifications are acked by evd_arm on the next round. */
		if (!evd->waitable) {
			*nmore = evd->count;
			ret = ERR_STATE(UNWAITABLE);
			break;
		}
		if (rc < 0 && err == EINTR) {
			evd_fill(evd);
			*nmore = evd->count;
			ret = DAT_ERROR(DAT_INTERRUPTED_CALL, DAT_NO_SUBTYPE);
			break;
		}
		if (rc < 0) {
			ret = DAT_ERROR(DAT_INTERNAL_ERROR, DAT_NO_SUBTYPE);
			break;
		}
	}
	/* the CQs are not slept on any more (a CNO arms its own) */
	if (armed)
		evd_disarm(evd);
	evd->waiting = false;
	pthread_mutex_unlock(&evd->lock);
	if (pfd != pfd_few)
		free(pfd);
	if (ncm > 0)
		dapl_cm_waiter_done(ia);
	if (pinned)
		dapl_ia_unpin(ia);
	return ret;
}

/* ---- for cno.c ----------------------------------------------------------- */

bool dapl_evd_cno_ready(struct dapl_evd *evd, struct dapl_cno *cno)
{
	bool ready;

	pthread_mutex_lock(&evd->lock);
	ready = evd->cno == cno && evd->enabled && !evd->waiting;
	if (ready && evd->count == 0)
		evd_fill(evd);
	ready = ready && evd->count > 0;
	pthread_mutex_unlock(&evd->lock);
	return ready;
}

int dapl_evd_cno_arm(struct dapl_evd *evd, struct dapl_cno *cno,
		     struct pollfd *pfd, int room)
{
	int n = 0;

	pthread_mutex_lock(&evd->lock);
	/* A disabled EVD, or one a thread waits on directly, does not
	 * notify its CNO (dat_cno_wait(3), dat_evd_enable(3)). */
	if (evd->cno == cno && evd->enabled && !evd->waiting) {
		n = evd_arm(evd, pfd, room);
		if (n && evd_fill(evd) > 0)
			dapl_cno_trigger(cno, evd);
	}
	pthread_mutex_unlock(&evd->lock);
	return n;
}
