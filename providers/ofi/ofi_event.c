/* cm_get_event: the progress thread's one call.
 *
 * Each call first reads the CQs whose fds fired (every CQ when the tick
 * did): tcp 1.17 moves data (RMA target side included) and notices a
 * peer's disconnect only inside fi_cq_read, and what it reads goes to
 * the CQ's ready list for cq_poll.  (None when the call before handed
 * out an event: the core calls again at once, and what came since makes
 * fds fire, which try_wait sees.  An endpoint's end reads its own CQs.)
 * Then it returns a synthesised event (SRQ limit, local disconnect), then
 * a connection request the listener thread queued (ofi_listen.c), then an
 * event of the endpoints' EQ.  When nothing is left it decides which CQs
 * the consumer drives (ofi_dev.c) and calls fi_trywait on the EQ and
 * every other CQ before returning -EAGAIN, so the progress fd (an epoll
 * set holding their wait fds and our eventfds) fires for anything that
 * happens later and stays quiet otherwise. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#include "ofi.h"

#define OFI_MAX_ROUNDS 64

/* Reads cq; whether a consumer polls it or waits on it (then what was
 * read would have been read anyway). */
static bool pump_cq(struct dapl_tcq *cq)
{
	bool polled;

	pthread_mutex_lock(&cq->lock);
	polled = cq->armed || dapl_now_ns() - cq->polled_ns < OFI_ACTIVE_NS;
	ofi_cq_drain(cq);
	ofi_cq_sweep(cq);
	ofi_cq_kick(cq);
	pthread_mutex_unlock(&cq->lock);
	return polled;
}

/* Every CQ, even one a consumer drives: tcp 1.17 moves data and RMA
 * target work only inside fi_cq_read. */
static void pump_cqs(struct dapl_tdev *dev)
{
	int i;

	for (i = 0; i < dev->ncqs; i++)
		pump_cq(dev->cqs[i]);
}

/* Round 0 of a call: the CQs whose fds fired (tcp 1.17's CQ fd watches
 * its endpoints' sockets), or every CQ when the tick fired (it is what
 * brings back a CQ whose consumer stopped: quiet fds never fire) or more
 * fds are ready than looked at.  A wake-up for one endpoint's data read
 * all of an IA's CQs before, each read an epoll_wait in libfabric. */
#define OFI_FIRED_MAX 16

static void pump_fired_cqs(struct dapl_tdev *dev, bool tick)
{
	struct epoll_event evs[OFI_FIRED_MAX];
	struct ofi_subcq *sub;
	int n, i, j;

	n = tick ? -1 : epoll_wait(dev->epfd, evs, OFI_FIRED_MAX, 0);
	if (n < 0 || n == OFI_FIRED_MAX) {
		pump_cqs(dev);
		return;
	}
	for (i = 0; i < n; i++) {
		for (j = 0; j < dev->ncqs; j++) {
			struct dapl_tcq *cq = dev->cqs[j];

			if (cq->fcq_fd == evs[i].data.fd)
				cq->fired = true;
			for (sub = cq->subs; sub; sub = sub->next)
				if (sub->fd == evs[i].data.fd)
					cq->fired = true;
		}
	}
	/* what woke us: a consumer's CQ (it moves that data itself), or
	 * one nobody polls (the thread was needed: ofi_progress_data) */
	for (j = 0; j < dev->ncqs; j++) {
		if (dev->cqs[j]->fired) {
			dev->cqs[j]->fired = false;
			dev->tpd |= pump_cq(dev->cqs[j]) ? DAPL_TPD_IDLE :
							   DAPL_TPD_PLACED;
		}
	}
}

/* Before ep's end is told from its FI_SHUTDOWN or EQ error: what its
 * CQs hold.  A DTO error libfabric wrote before the shutdown must be
 * taken first (it sets faulted), or the end is DISCONNECTED where it
 * must be BROKEN (test_dto's recv_too_small_local_length). */
static void take_ep_completions(struct dapl_tep *ep)
{
	pump_cq(ep->scq);
	if (ep->rcq != ep->scq)
		pump_cq(ep->rcq);
}

/* fi_trywait on the EQ and every CQ in the progress set.  It may move
 * data, which only one thread may do at a time (progress_lock, as in
 * drain_fcq): a consumer's cq_poll drains meanwhile, and two movers can
 * complete a Send whose receive is not yet in the peer's CQ while a
 * later Send's, on another EP, is (test_order). */
static int try_wait(struct dapl_tdev *dev)
{
	struct ofi_subcq *sub;
	int ret, i, n = 0;

	/* the EQ and the CQs whose fds listen: a quiet one is the
	 * consumer's to move, and waking for it is what quiet avoids */
	pthread_mutex_lock(&dev->quiet_lock);
	if (!dev->fatal)
		dev->wait_fids[n++] = &dev->eq->fid;
	for (i = 0; i < dev->ncqs; i++) {
		struct dapl_tcq *cq = dev->cqs[i];

		if (!cq->fds_on)
			continue;
		dev->wait_fids[n++] = &cq->fcq->fid;
		for (sub = cq->subs; sub; sub = sub->next)
			dev->wait_fids[n++] = &sub->fcq->fid;
	}
	pthread_mutex_unlock(&dev->quiet_lock);
	if (!n)
		return 0;
	pthread_mutex_lock(&dev->progress_lock);
	ret = fi_trywait(dev->fabric, dev->wait_fids, n);
	pthread_mutex_unlock(&dev->progress_lock);
	return ret;
}

/* The tep behind an EQ entry's fid, if it is the live fid_ep of one.
 * A closed fid_ep's events are purged by fi_close, so fid is open here. */
static struct dapl_tep *ep_of(struct dapl_tdev *dev, fid_t fid)
{
	struct dapl_tep *ep;

	if (!fid)
		return NULL;
	ep = fid->context;
	if (!ep || !ep->fep || &ep->fep->fid != fid || ep->dev != dev)
		return NULL;
	return ep;
}

static void set_pdata(struct dapl_tdev *dev, struct dapl_tcm_event *ev,
		      const void *data, size_t len)
{
	if (len > sizeof(dev->pdata))
		len = sizeof(dev->pdata);
	if (len)
		memcpy(dev->pdata, data, len);
	ev->pdata = dev->pdata;
	ev->pdata_len = len;
}

static int on_event(struct dapl_tdev *dev, uint32_t event, size_t len,
		    struct dapl_tcm_event *ev)
{
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)dev->eq_buf;
	size_t datalen = len > sizeof(*e) ? len - sizeof(*e) : 0;
	struct dapl_tep *ep;

	if (event == FI_CONNREQ && len >= sizeof(*e)) {
		/* cannot happen: listeners have an EQ of their own */
		fi_freeinfo(e->info);
		return 0;
	}
	if (len < sizeof(*e))
		return 0;
	ep = ep_of(dev, e->fid);
	if (!ep)
		return 0;
	switch (event) {
	case FI_CONNECTED:
		if (ep->state != OFI_EP_CONNECTING)
			return 0;
		ofi_ep_established(ep);
		ev->type = DAPL_TCM_ESTABLISHED;
		ev->ep = ep;
		/* the passive side's FI_CONNECTED carries nothing of the peer */
		set_pdata(dev, ev, e->data, ep->active ? datalen : 0);
		return 1;
	case FI_SHUTDOWN:
		take_ep_completions(ep);
		ev->type = ep->state == OFI_EP_CONNECTED && !ep->faulted ?
			   DAPL_TCM_DISCONNECTED : DAPL_TCM_CONN_ERROR;
		ev->status = ep->state == OFI_EP_CONNECTED ? 0 : -ECONNRESET;
		ev->ep = ep;
		ofi_ep_teardown(ep);
		return 1;
	default:
		return 0;
	}
}

static int on_error(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	struct fi_eq_err_entry err;
	struct dapl_tep *ep;
	ssize_t n;

	memset(&err, 0, sizeof(err));
	err.err_data = dev->err_buf;
	err.err_data_size = sizeof(dev->err_buf);
	n = fi_eq_readerr(dev->eq, &err, 0);
	if (n < 0)
		return n == -FI_EAGAIN ? 0 : ofi_err(n);
	ep = ep_of(dev, err.fid);
	if (!ep)
		return 0;
	ev->ep = ep;
	ev->status = -(err.err ? err.err : EIO);
	if (ep->state == OFI_EP_CONNECTED) {
		take_ep_completions(ep);
		ev->type = ep->faulted ? DAPL_TCM_CONN_ERROR : DAPL_TCM_DISCONNECTED;
	} else if (err.err == FI_ECONNREFUSED) {
		/* peer reject (data in err_data) or no listener (none) */
		ev->type = DAPL_TCM_REJECTED;
		set_pdata(dev, ev, err.err_data,
			  err.err_data ? err.err_data_size : 0);
	} else if (err.err == FI_ENETUNREACH || err.err == FI_EHOSTUNREACH ||
		   err.err == FI_EADDRNOTAVAIL || err.err == FI_ETIMEDOUT) {
		/* no route to the peer, or it never answered at all */
		ev->type = DAPL_TCM_UNREACHABLE;
	} else {
		ev->type = DAPL_TCM_CONN_ERROR;
	}
	ofi_ep_teardown(ep);
	return 1;
}

/* 1: ev is filled; 0: something was consumed, look again; -EAGAIN: the EQ
 * is empty; other negative: the EQ is broken. */
static int read_eq(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	uint32_t event;
	ssize_t n;

	/* tcp 1.17 reads a connect response with recv() and, on a short
	 * read, takes errno as the reason: at EOF (the listening process
	 * died) a stale EAGAIN makes it ignore the socket forever, which
	 * stays readable and spins us.  With errno 0 it reports FI_EIO. */
	errno = 0;
	n = fi_eq_read(dev->eq, &event, dev->eq_buf, sizeof(dev->eq_buf), 0);
	if (n == -FI_EAGAIN)
		return -EAGAIN;
	if (n == -FI_EAVAIL)
		return on_error(dev, ev);
	if (n < 0)
		return ofi_err(n) ? ofi_err(n) : -EIO;
	return on_event(dev, event, (size_t)n, ev);
}

int ofi_progress_data(struct dapl_tdev *dev, bool will_drain)
{
	int found;

	(void)will_drain;       /* its pumps run in cm_get_event */
	pthread_mutex_lock(&dev->lock);
	found = dev->tpd;
	dev->tpd = 0;
	pthread_mutex_unlock(&dev->lock);
	return found;
}

int ofi_cm_get_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	struct dapl_tconn *conn;
	int rounds, ret = -EAGAIN;
	bool tick;
	uint64_t v;

	memset(ev, 0, sizeof(*ev));
	pthread_mutex_lock(&dev->lock);
	for (rounds = 0; rounds < OFI_MAX_ROUNDS; rounds++) {
		/* Clear our own wakeup first: whatever is flagged after this
		 * (an SRQ limit, from a CQ lock) writes it again. */
		while (read(dev->notify_fd, &v, sizeof(v)) > 0)
			;
		tick = ofi_dev_tick(dev);
		/* Straight after an event, the CQs were read a moment ago:
		 * what came since makes their fds fire, and try_wait says so.
		 * After try_wait said something came, every CQ: it may be a
		 * completion libfabric holds, which no fd shows. */
		if (rounds > 0)
			pump_cqs(dev);
		else if (!dev->handed_out || tick)
			pump_fired_cqs(dev, tick);

		ev->srq = ofi_srq_take_limit(dev);
		if (ev->srq) {
			ev->type = DAPL_TCM_SRQ_LIMIT;
			ret = 0;
			goto out;
		}
		if (dapl_conn_events_pop(&dev->connq, ev)) {
			ret = 0;
			goto out;
		}
		conn = ofi_reqq_pop(dev);
		if (conn) {
			ev->type = DAPL_TCM_CONNECT_REQUEST;
			ev->listener = conn->listener;
			ev->conn = conn;
			set_pdata(dev, ev, conn->pdata, conn->pdata_len);
			ev->peer = conn->peer;
			ret = 0;
			goto out;
		}
		ret = dev->fatal ? -EAGAIN : read_eq(dev, ev);
		if (ret == 1) {
			ret = 0;
			goto out;
		}
		if (ret == 0)
			continue;
		if (ret != -EAGAIN) {
			/* The EQ is broken: say so once, then leave it out. */
			dev->fatal = true;
			epoll_ctl(dev->epfd, EPOLL_CTL_DEL, dev->eq_fd, NULL);
			ofi_dev_sync_waits(dev);
			memset(ev, 0, sizeof(*ev));
			ev->type = DAPL_TCM_DEVICE_FATAL;
			ev->status = ret;
			ret = 0;
			goto out;
		}
		/* Nothing pending: quiet the CQs the consumer drives, then
		 * let libfabric say whether sleeping on its fds is safe (it
		 * re-arms them). */
		ofi_dev_update_busy(dev);
		if (try_wait(dev) == -FI_EAGAIN)
			continue;       /* something came meanwhile */
		ret = -EAGAIN;
		goto out;
	}
	/* Still busy after many rounds: come back rather than hog the lock. */
	ofi_dev_notify(dev);
	ret = -EAGAIN;
out:
	dev->handed_out = ret == 0;
	pthread_mutex_unlock(&dev->lock);
	return ret;
}
