/* Completion queues: a ring of completions in the order they happened,
 * and the endpoints whose sockets a poll drives.
 *
 * The ring holds, at any time, at most the requests of the queues that
 * complete here (each request holds its place in the core until its
 * completion is handed out), plus what destroyed endpoints left behind;
 * tcp_cq_attach grows it before a queue can post, so a push always finds
 * room.  The wait fd is an epoll set of an eventfd (a completion made by
 * another thread while armed) and the sockets of the endpoints: a waiter
 * wakes when its data arrives and places it itself.
 *
 * A poll of a CQ with a few endpoints drives each (a recv() that finds
 * nothing is cheaper than asking epoll); with more, it asks the epoll set
 * which sockets have something, and drives those: a program with 512
 * connections does not pay 512 recv()s for every empty poll. */
#include "config.h"

#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "tcp.h"

int tcp_cq_create(struct dapl_tdev *dev, uint32_t depth, struct dapl_tcq **out)
{
	struct dapl_tcq *cq = calloc(1, sizeof(*cq));
	struct epoll_event e = { .events = EPOLLIN };

	(void)depth;    /* the ring follows the queues, not the EVD */
	if (!cq)
		return -ENOMEM;
	cq->dev = dev;
	pthread_mutex_init(&cq->lock, NULL);
	cq->epfd = epoll_create1(EPOLL_CLOEXEC);
	cq->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cq->epfd < 0 || cq->event_fd < 0)
		goto fail;
	e.data.ptr = NULL;      /* the endpoints' sockets carry their ep */
	if (epoll_ctl(cq->epfd, EPOLL_CTL_ADD, cq->event_fd, &e))
		goto fail;
	*out = cq;
	return 0;
fail:
	if (cq->epfd >= 0)
		close(cq->epfd);
	if (cq->event_fd >= 0)
		close(cq->event_fd);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	return -EMFILE;
}

int tcp_cq_destroy(struct dapl_tcq *cq)
{
	if (cq->neps)
		return -EBUSY;
	close(cq->epfd);
	close(cq->event_fd);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq->ring_cnt);
	free(cq->eps);
	free(cq);
	return 0;
}

int tcp_cq_wait_fd(struct dapl_tcq *cq)
{
	return cq->epfd;
}

/* Takes a reference on up to max endpoints of the CQ from *at on. */
static int snapshot_locked(struct dapl_tcq *cq, struct dapl_tep **eps, int max,
			   int *at)
{
	int n = 0;

	while (*at < cq->neps && n < max) {
		eps[n] = cq->eps[(*at)++];
		atomic_fetch_add(&eps[n]->refs, 1);
		n++;
	}
	return n;
}

static int snapshot(struct dapl_tcq *cq, struct dapl_tep **eps, int max, int *at)
{
	int n;

	pthread_mutex_lock(&cq->lock);
	n = snapshot_locked(cq, eps, max, at);
	pthread_mutex_unlock(&cq->lock);
	return n;
}

/* ep->lock held: the events the socket is watched for in cq's epoll set
 * (slot 0 the send CQ's, 1 the receive CQ's when it is another one), or
 * 0 when it should not be there. */
static uint32_t cq_events(const struct dapl_tep *ep, int slot)
{
	if (ep->fd < 0 || ep->state != TCP_EP_CONNECTED)
		return 0;
	return EPOLLIN | (slot == 0 && ep->want_out ? EPOLLOUT : 0);
}

static int cq_slot(const struct dapl_tep *ep, const struct dapl_tcq *cq)
{
	return cq == ep->scq ? 0 : 1;
}

/* ep->lock held: puts the socket in cq's set, or changes its events
 * there. */
static void cq_sync(struct dapl_tcq *cq, struct dapl_tep *ep, int slot)
{
	struct epoll_event e = { .events = cq_events(ep, slot) };

	if (!e.events || e.events == ep->cq_ev[slot])
		return;
	/* safe to hand back from epoll_wait under cq->lock: the socket
	 * leaves the set (drop_socket) before the ep leaves the CQ
	 * (tcp_cq_detach, cq->lock), and the ep is freed after that */
	e.data.ptr = ep;
	if (epoll_ctl(cq->epfd, ep->cq_ev[slot] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
		      ep->fd, &e) == 0)
		ep->cq_ev[slot] = e.events;
}

/* The consumer is about to sleep on the wait fd: the sockets of the
 * CQ's endpoints go into its epoll set (once per connection: a CQ nobody
 * sleeps on never has them, which saves the epoll calls on every
 * connection and disconnection), and it will not post the reply that
 * would have carried the acks its endpoints owe, so they go now.  An
 * endpoint connected while the consumer sleeps is the progress thread's
 * until the next arm. */
int tcp_cq_arm(struct dapl_tcq *cq, int solicited_only)
{
	struct dapl_tep *eps[64];
	int n, i, at = 0;

	(void)solicited_only;
	pthread_mutex_lock(&cq->lock);
	cq->armed = true;
	pthread_mutex_unlock(&cq->lock);
	while ((n = snapshot(cq, eps, 64, &at)) > 0) {
		for (i = 0; i < n; i++) {
			struct dapl_tep *ep = eps[i];
			int slot = cq_slot(ep, cq);

			atomic_fetch_add_explicit(&ep->drives, 1,
						  memory_order_relaxed);
			/* (read unlocked: hints, rechecked under ep->lock) */
			if (ep->ack_owed || (ep->state == TCP_EP_CONNECTED &&
					     !ep->cq_ev[slot])) {
				pthread_mutex_lock(&ep->lock);
				cq_sync(cq, ep, slot);
				if (ep->ack_owed && ep->state == TCP_EP_CONNECTED) {
					ep->force_ack = true;
					tcp_ep_flush(ep);
				}
				pthread_mutex_unlock(&ep->lock);
			}
			atomic_fetch_sub(&ep->refs, 1);
		}
	}
	return 0;
}

void tcp_cq_ack(struct dapl_tcq *cq)
{
	uint64_t v;

	if (read(cq->event_fd, &v, sizeof(v)) < 0)
		v = 0;
	pthread_mutex_lock(&cq->lock);
	cq->notified = false;
	pthread_mutex_unlock(&cq->lock);
}

/* Grows the ring to n entries, keeping what it holds in order. */
static int ring_grow(struct dapl_tcq *cq, uint32_t n)
{
	struct dapl_twc *r;
	atomic_uint **c;
	uint32_t i;

	if (n <= cq->cap)
		return 0;
	r = malloc((size_t)n * sizeof(*r));
	c = malloc((size_t)n * sizeof(*c));
	if (!r || !c) {
		free(r);
		free(c);
		return -ENOMEM;
	}
	for (i = 0; i < cq->count; i++) {
		r[i] = cq->ring[(cq->head + i) % cq->cap];
		c[i] = cq->ring_cnt[(cq->head + i) % cq->cap];
	}
	free(cq->ring);
	free(cq->ring_cnt);
	cq->ring = r;
	cq->ring_cnt = c;
	cq->cap = n;
	cq->head = 0;
	return 0;
}

int tcp_cq_attach(struct dapl_tcq *cq, struct dapl_tep *ep, uint32_t depth)
{
	struct dapl_tep **e;
	uint64_t need;
	int err = 0;

	pthread_mutex_lock(&cq->lock);
	need = (uint64_t)cq->reserved + depth + cq->count + 1;
	if (need > UINT32_MAX / 2) {
		err = -ENOMEM;
		goto out;
	}
	/* grow by half again, so a run of endpoints costs few copies */
	if (need > cq->cap)
		err = ring_grow(cq, (uint32_t)(need + need / 2));
	if (err)
		goto out;
	if (cq->neps == cq->eps_cap) {
		int cap = cq->eps_cap ? cq->eps_cap * 2 : 4;

		e = realloc(cq->eps, (size_t)cap * sizeof(*e));
		if (!e) {
			err = -ENOMEM;
			goto out;
		}
		cq->eps = e;
		cq->eps_cap = cap;
	}
	cq->eps[cq->neps++] = ep;
	cq->reserved += depth;
out:
	pthread_mutex_unlock(&cq->lock);
	return err;
}

void tcp_cq_detach(struct dapl_tcq *cq, struct dapl_tep *ep, uint32_t depth)
{
	int i;

	pthread_mutex_lock(&cq->lock);
	for (i = 0; i < cq->neps; i++)
		if (cq->eps[i] == ep) {
			cq->eps[i] = cq->eps[--cq->neps];
			cq->reserved -= depth;
			break;
		}
	pthread_mutex_unlock(&cq->lock);
}

void tcp_cq_push(struct dapl_tcq *cq, const struct dapl_twc *wc,
		 atomic_uint *unreaped)
{
	bool wake = false;

	pthread_mutex_lock(&cq->lock);
	if (cq->count == cq->cap) {
		/* cannot happen (attach reserved room); never overwrite */
		if (ring_grow(cq, cq->cap ? cq->cap * 2 : 16)) {
			pthread_mutex_unlock(&cq->lock);
			return;
		}
	}
	cq->ring[(cq->head + cq->count) % cq->cap] = *wc;
	cq->ring_cnt[(cq->head + cq->count) % cq->cap] = unreaped;
	if (unreaped)
		atomic_fetch_add(unreaped, 1);
	cq->count++;
	if (cq->armed && !cq->notified) {
		cq->notified = true;
		cq->armed = false;
		wake = true;
	}
	pthread_mutex_unlock(&cq->lock);
	if (wake) {
		uint64_t one = 1;

		if (write(cq->event_fd, &one, sizeof(one)) < 0)
			one = 0;
	}
}

void tcp_cq_forget_ep(struct dapl_tcq *cq, struct dapl_tep *ep)
{
	uint32_t i;

	pthread_mutex_lock(&cq->lock);
	for (i = 0; i < cq->count; i++) {
		uint32_t k = (cq->head + i) % cq->cap;

		if (ep->srq && cq->ring[k].owner == ep->owner)
			cq->ring[k].owner = 0;
		if (cq->ring_cnt[k] == &ep->sq_unreaped ||
		    cq->ring_cnt[k] == &ep->rq_unreaped)
			cq->ring_cnt[k] = NULL;
	}
	pthread_mutex_unlock(&cq->lock);
}

void tcp_cq_unwatch(struct dapl_tep *ep)
{
	if (ep->fd >= 0 && ep->cq_ev[0])
		(void)epoll_ctl(ep->scq->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
	if (ep->fd >= 0 && ep->cq_ev[1])
		(void)epoll_ctl(ep->rcq->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
	ep->cq_ev[0] = ep->cq_ev[1] = 0;
}

void tcp_cq_watch(struct dapl_tep *ep)
{
	/* only where it is already: the others take it when armed */
	if (ep->cq_ev[0])
		cq_sync(ep->scq, ep, 0);
	if (ep->cq_ev[1])
		cq_sync(ep->rcq, ep, 1);
}

unsigned tcp_ep_drives(const struct dapl_tep *ep)
{
	/* (posts: under ep->lock, which our callers hold) */
	unsigned d = atomic_load_explicit(&ep->drives, memory_order_relaxed) +
		     ep->posts;

	d += atomic_load_explicit(&ep->scq->polls, memory_order_relaxed);
	if (ep->rcq != ep->scq)
		d += atomic_load_explicit(&ep->rcq->polls, memory_order_relaxed);
	return d;
}

void tcp_cq_connected(struct dapl_tep *ep)
{
	atomic_fetch_add(&ep->scq->changes, 1);
	if (ep->rcq != ep->scq)
		atomic_fetch_add(&ep->rcq->changes, 1);
}

/* Many endpoints: every connected one's socket into the epoll set, once
 * after each new connection. */
static void sync_all(struct dapl_tcq *cq)
{
	struct dapl_tep *eps[64];
	unsigned now = atomic_load(&cq->changes);
	int n, i, at = 0;

	pthread_mutex_lock(&cq->lock);
	if (cq->synced == now) {
		pthread_mutex_unlock(&cq->lock);
		return;
	}
	cq->synced = now;       /* a connection made from here on counts again */
	n = snapshot_locked(cq, eps, 64, &at);
	pthread_mutex_unlock(&cq->lock);
	for (; n > 0; n = n == 64 ? snapshot(cq, eps, 64, &at) : 0) {
		for (i = 0; i < n; i++) {
			struct dapl_tep *ep = eps[i];
			int slot = cq_slot(ep, cq);

			if (ep->state == TCP_EP_CONNECTED && !ep->cq_ev[slot]) {
				pthread_mutex_lock(&ep->lock);
				cq_sync(cq, ep, slot);
				pthread_mutex_unlock(&ep->lock);
			}
			atomic_fetch_sub(&ep->refs, 1);
		}
	}
}

/* Many endpoints: those whose sockets have something (or room for what
 * they hold), with a reference each. */
static int ready_eps(struct dapl_tcq *cq, struct dapl_tep **eps, int max)
{
	struct epoll_event ev[64];
	int n, i, k = 0;

	if (max > 64)
		max = 64;
	pthread_mutex_lock(&cq->lock);
	n = epoll_wait(cq->epfd, ev, max, 0);
	for (i = 0; i < n; i++) {
		struct dapl_tep *ep = ev[i].data.ptr;

		if (!ep)
			continue;       /* the eventfd */
		atomic_fetch_add(&ep->refs, 1);
		eps[k++] = ep;
	}
	pthread_mutex_unlock(&cq->lock);
	return k;
}

/* busy: the consumer polled a moment ago too (TCP_BUSY_NS) and will
 * again; an ack its drive leaves owed rides on its reply or goes at its
 * next poll.  A consumer that polls once -- after a wait, between rounds
 * of polling memory -- may not call again for a long time: what it was
 * delivered is reported placed now, not at the next tick. */
static void drive_eps(struct dapl_tep **eps, int n, bool busy)
{
	int i;

	for (i = 0; i < n; i++) {
		struct dapl_tep *ep = eps[i];

		atomic_fetch_add_explicit(&ep->drives, 1, memory_order_relaxed);
		/* someone else driving it is as good */
		if (pthread_mutex_trylock(&ep->lock) == 0) {
			tcp_ep_drive(ep);
			if (!busy && ep->ack_owed && ep->state == TCP_EP_CONNECTED) {
				ep->force_ack = true;
				tcp_ep_flush(ep);
			}
			pthread_mutex_unlock(&ep->lock);
		}
		atomic_fetch_sub(&ep->refs, 1);
	}
}

/* Drives the CQ's endpoints, unless completions are waiting already:
 * those are handed out first, and the next poll drives (a consumer
 * reaping what it knows is done does not pay a recv() for it). */
int tcp_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max)
{
	struct dapl_tep *eps[64];
	int n, i, got = 0, at = 0;
	uint64_t now = dapl_now_ns();
	bool drive, many, busy;

	busy = now - atomic_exchange_explicit(&cq->polled_ns, now,
					      memory_order_relaxed) < TCP_BUSY_NS;
	/* the first 64 endpoints are taken with the look at the ring */
	pthread_mutex_lock(&cq->lock);
	drive = cq->count == 0;
	many = cq->neps > TCP_CQ_DRIVE_ALL;
	if (many) {
		/* a drive of every endpoint, as the progress thread counts */
		atomic_fetch_add_explicit(&cq->polls, 1, memory_order_relaxed);
		n = 0;
	} else if (!drive) {    /* still a consumer at work, for the progress thread */
		for (i = 0; i < cq->neps; i++)
			atomic_fetch_add_explicit(&cq->eps[i]->drives, 1,
						  memory_order_relaxed);
		n = 0;
	} else {
		n = snapshot_locked(cq, eps, 64, &at);
	}
	pthread_mutex_unlock(&cq->lock);
	if (many && drive) {
		sync_all(cq);
		drive_eps(eps, ready_eps(cq, eps, 64), busy);
	}
	for (; n > 0; n = n == 64 ? snapshot(cq, eps, 64, &at) : 0)
		drive_eps(eps, n, busy);

	pthread_mutex_lock(&cq->lock);
	while (got < max && cq->count) {
		if (cq->ring_cnt[cq->head])
			atomic_fetch_sub(cq->ring_cnt[cq->head], 1);
		wc[got++] = cq->ring[cq->head];
		cq->head = (cq->head + 1) % cq->cap;
		cq->count--;
	}
	pthread_mutex_unlock(&cq->lock);
	return got;
}
