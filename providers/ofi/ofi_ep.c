/* Endpoints and the connection calls.
 *
 * A dapl_tep outlives its fid_eps: one is made per connection attempt (tcp
 * cannot reconnect a fid_ep) and closed as soon as the attempt is over,
 * which flushes everything it still had posted.  All of this runs under
 * dev->lock (the core also serialises these calls under its IA lock). */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sock.h"
#include "ofi.h"

/* ---- fid_ep life ---------------------------------------------------------------- */

static void set_state(struct dapl_tep *ep, struct fid_ep *fep,
		      enum ofi_ep_state state)
{
	ofi_ep_lock_cqs(ep);
	ep->fep = fep;
	ep->state = state;
	if (fep) {
		/* receives posted before the fid_ep existed */
		if (ep->rq)
			ofi_queue_submit(ep->rq);
		ofi_queue_submit(ep->sq);
	}
	ofi_cq_kick(ep->scq);
	ofi_cq_kick(ep->rcq);
	ofi_ep_unlock_cqs(ep);
}

/* Makes and enables a fid_ep for one attempt.  *made says whether
 * fi_endpoint succeeded (it then owns a CONNREQ's connection handle). */
static int open_fid(struct dapl_tep *ep, struct fi_info *info,
		    struct fid_ep **fepp, bool *made)
{
	struct dapl_tdev *dev = ep->dev;
	struct fid_ep *fep;
	int ret;

	*made = false;
	ret = ofi_err(fi_endpoint(ep->pd->domain, info, &fep, ep));
	if (ret)
		return ret;
	*made = true;
	ret = ofi_err(fi_ep_bind(fep, &dev->eq->fid, 0));
	if (!ret && ep->srq)
		ret = ofi_err(fi_ep_bind(fep, &ep->srq->srx->fid, 0));
	if (ret)
		goto err;
	/* Sends complete only when asked (every post asks; an unsignalled
	 * success is dropped here).  Receives always complete: an SRQ's
	 * receives ignore the per-post flag on tcp. */
	if (!ret)
		ret = ofi_err(fi_ep_bind(fep, ep->ssub ? &ep->ssub->fcq->fid :
					 &ep->scq->fcq->fid,
					 FI_TRANSMIT | FI_SELECTIVE_COMPLETION));
	if (!ret)
		ret = ofi_err(fi_ep_bind(fep, ep->sub ? &ep->sub->fcq->fid :
					 ep->rsub ? &ep->rsub->fcq->fid :
					 &ep->rcq->fcq->fid, FI_RECV));
	if (ret)
		goto err;
	ret = ofi_err(fi_enable(fep));
	if (ret)
		goto err;
	*fepp = fep;
	return 0;
err:
	fi_close(&fep->fid);
	return ret;
}

/* Closes the fid_ep (tcp writes a flush entry for everything it still had
 * posted), reads those entries, and flushes whatever is left.  The CQ
 * locks are held throughout, so no post can touch the fid_ep and every
 * entry for it is consumed before the lock is dropped. */
static void close_and_flush(struct dapl_tep *ep)
{
	struct fid_ep *fep = ep->fep;

	ep->fep = NULL;
	if (fep)
		fi_close(&fep->fid);
	ofi_cq_drain(ep->scq);
	if (ep->rcq != ep->scq)
		ofi_cq_drain(ep->rcq);
	ofi_queue_flush(ep->sq);
	if (ep->rq)
		ofi_queue_flush(ep->rq);
	ofi_cq_kick(ep->scq);
	ofi_cq_kick(ep->rcq);
}

void ofi_ep_teardown(struct dapl_tep *ep)
{
	ofi_ep_lock_cqs(ep);
	close_and_flush(ep);
	ep->state = OFI_EP_DOWN;
	ofi_ep_unlock_cqs(ep);
}

/* fi_getname or fi_getpeer of fep into *out: a whole address of the
 * IA's family, or zeros. */
static void ep_name(struct dapl_tep *ep, struct fid_ep *fep, bool peer,
		    struct sockaddr_storage *out)
{
	struct sockaddr_storage buf;
	size_t len = sizeof(buf);
	int ret;

	memset(&buf, 0, sizeof(buf));
	ret = peer ? fi_getpeer(fep, &buf, &len) :
		     fi_getname(&fep->fid, &buf, &len);
	if (ret || len > sizeof(buf) || !ofi_sa_copy(out, &buf, len) ||
	    out->ss_family != ep->dev->addr.ss_family)
		memset(out, 0, sizeof(*out));
}

void ofi_ep_established(struct dapl_tep *ep)
{
	ofi_ep_lock_cqs(ep);
	ep->state = OFI_EP_CONNECTED;
	ofi_ep_unlock_cqs(ep);

	ep_name(ep, ep->fep, false, &ep->local);
	ep_name(ep, ep->fep, true, &ep->peer);
	ep->have_addrs = true;
	/* libfabric's socket has neither keepalive nor a user timeout: a
	 * peer that vanished while nothing of ours was unacknowledged (a
	 * Send waiting for the peer's delivery ack, an idle connection)
	 * would never be noticed.  Only this thread (cm_get_event, under
	 * the IA lock) uses sock_hint. */
	if (ep->dev->peer_timeout_ms) {
		int fd = dapl_sock_find(&ep->local, &ep->peer,
					&ep->dev->sock_hint);

		if (fd >= 0)
			dapl_sock_peer_timeout(fd, ep->dev->peer_timeout_ms);
	}
}

/* ---- the ops ------------------------------------------------------------------------ */

/* dev->lock held: opens a libfabric CQ in domain that cq reads along with
 * its own (ofi.h): an SRQ ep's private one (ep set) or a domain's. */
static int subcq_new(struct dapl_tdev *dev, struct dapl_tcq *cq,
		     struct fid_domain *domain, struct dapl_tep *ep,
		     struct ofi_subcq **subp)
{
	struct fi_cq_attr attr;
	struct ofi_subcq *sub;
	int ret;

	sub = calloc(1, sizeof(*sub));
	if (!sub)
		return -ENOMEM;
	sub->ep = ep;
	sub->domain = domain;
	sub->refs = 1;
	memset(&attr, 0, sizeof(attr));
	/* a hint: tcp's CQ spills to a list */
	attr.size = ep || cq->depth < 64 ? 64 : cq->depth;
	attr.format = FI_CQ_FORMAT_MSG;
	attr.wait_obj = FI_WAIT_FD;
	ret = ofi_err(fi_cq_open(domain, &attr, &sub->fcq, sub));
	if (ret) {
		free(sub);
		return ret;
	}
	ret = ofi_err(fi_control(&sub->fcq->fid, FI_GETWAIT, &sub->fd));
	if (!ret) {
		pthread_mutex_lock(&cq->lock);
		ret = ofi_dev_add_subcq(dev, cq, sub);
		pthread_mutex_unlock(&cq->lock);
	}
	if (ret) {
		fi_close(&sub->fcq->fid);
		free(sub);
		return ret;
	}
	*subp = sub;
	return 0;
}

/* dev->lock and cq->lock held: cq stops reading sub, which closes. */
static void subcq_free(struct dapl_tdev *dev, struct dapl_tcq *cq,
		       struct ofi_subcq *sub)
{
	ofi_dev_remove_subcq(dev, cq, sub);
	fi_close(&sub->fcq->fid);
	free(sub);
}

/* dev->lock held: where an ep of domain completes on cq: NULL for the
 * CQ's own (the device's domain), else that domain's sub-CQ on cq, made
 * by the first ep that needs it. */
static int domain_cq_get(struct dapl_tdev *dev, struct dapl_tcq *cq,
			 struct fid_domain *domain, struct ofi_subcq **subp)
{
	struct ofi_subcq *sub;

	*subp = NULL;
	if (domain == dev->domain)
		return 0;
	for (sub = cq->subs; sub; sub = sub->next) {
		if (!sub->ep && sub->domain == domain) {
			sub->refs++;
			*subp = sub;
			return 0;
		}
	}
	return subcq_new(dev, cq, domain, NULL, subp);
}

/* dev->lock and cq->lock held: an ep no longer completes through sub. */
static void domain_cq_put(struct dapl_tdev *dev, struct dapl_tcq *cq,
			  struct ofi_subcq *sub)
{
	if (sub && --sub->refs == 0)
		subcq_free(dev, cq, sub);
}

/* dev->lock and the ep's CQ locks held, its fid_ep closed and drained:
 * receives it took from its SRQ that are still on the ready list lose
 * their owner, its private CQ goes, and it lets go of its domain's. */
static void subcqs_release(struct dapl_tep *ep)
{
	struct ofi_subcq *sub = ep->sub;
	struct ofi_slot *s;

	if (sub) {
		for (s = ep->rcq->ready_head; s; s = s->next)
			if (!s->q && s->owner == ep->owner)
				s->owner = 0;
		subcq_free(ep->dev, ep->rcq, sub);
		ep->sub = NULL;
	}
	domain_cq_put(ep->dev, ep->scq, ep->ssub);
	domain_cq_put(ep->dev, ep->rcq, ep->rsub);
	ep->ssub = ep->rsub = NULL;
}

int ofi_ep_create(struct dapl_tpd *pd, struct dapl_tcq *send_cq,
		  struct dapl_tcq *recv_cq, struct dapl_tsrq *srq,
		  const struct dapl_tep_attr *attr, struct dapl_tep **epp)
{
	struct dapl_tdev *dev = pd->dev;
	struct dapl_tep *ep;
	int ret;

	if (!send_cq || !recv_cq || !attr)
		return -EINVAL;
	if (attr->max_send_wr > dev->info->tx_attr->size ||
	    attr->max_recv_wr > dev->info->rx_attr->size ||
	    attr->max_send_sge > OFI_MAX_SGE ||
	    attr->max_recv_sge > OFI_MAX_SGE)
		return -EINVAL;

	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->dev = dev;
	ep->pd = pd;
	dapl_conn_event_slot_init(&ep->cev, ep);
	ep->scq = send_cq;
	ep->rcq = recv_cq;
	ep->state = OFI_EP_IDLE;
	ep->srq = srq;
	ep->owner = attr->owner;
	ep->sq = ofi_queue_alloc(send_cq, ep, true, attr->max_send_wr,
				 attr->max_send_sge);
	if (!srq)
		ep->rq = ofi_queue_alloc(recv_cq, ep, false, attr->max_recv_wr,
					 attr->max_recv_sge);
	if (!ep->sq || (!srq && !ep->rq)) {
		ofi_queue_free(ep->sq);
		ofi_queue_free(ep->rq);
		free(ep);
		return -ENOMEM;
	}
	pthread_mutex_lock(&dev->lock);
	ret = domain_cq_get(dev, send_cq, pd->domain, &ep->ssub);
	if (!ret && !srq)
		ret = domain_cq_get(dev, recv_cq, pd->domain, &ep->rsub);
	/* an SRQ's receives arrive in its PD's domain only */
	if (!ret && srq)
		ret = srq->dead || srq->pd != pd ? -EINVAL :
		      subcq_new(dev, recv_cq, pd->domain, ep, &ep->sub);
	if (!ret)
		ret = ofi_dev_link_ep(dev, send_cq, recv_cq, 1);
	if (ret) {
		ofi_ep_lock_cqs(ep);
		subcqs_release(ep);
		ofi_ep_unlock_cqs(ep);
		pthread_mutex_unlock(&dev->lock);
		ofi_queue_free(ep->sq);
		ofi_queue_free(ep->rq);
		free(ep);
		return ret;
	}
	send_cq->users++;
	recv_cq->users++;
	if (srq)
		srq->users++;
	pthread_mutex_unlock(&dev->lock);
	*epp = ep;
	return 0;
}

int ofi_ep_destroy(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;

	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	ofi_ep_lock_cqs(ep);
	close_and_flush(ep);
	ep->state = OFI_EP_DOWN;
	/* Ready slots stay with their CQ until polled. */
	ofi_queue_release(ep->sq);
	if (ep->rq)
		ofi_queue_release(ep->rq);
	subcqs_release(ep);
	ofi_ep_unlock_cqs(ep);
	ofi_dev_link_ep(dev, ep->scq, ep->rcq, -1);
	ep->scq->users--;
	ep->rcq->users--;
	if (ep->srq)
		ep->srq->users--;
	pthread_mutex_unlock(&dev->lock);
	free(ep);
	return 0;
}

int ofi_ep_reset(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;

	pthread_mutex_lock(&dev->lock);
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	ofi_ep_lock_cqs(ep);
	close_and_flush(ep);    /* held receives included */
	ep->state = OFI_EP_IDLE;
	ofi_ep_unlock_cqs(ep);
	pthread_mutex_unlock(&dev->lock);
	return 0;
}

int ofi_connect(struct dapl_tep *ep, const struct sockaddr *addr,
		uint16_t port, const void *pdata, size_t len, uint16_t ird,
		uint16_t ord)
{
	struct dapl_tdev *dev = ep->dev;
	struct sockaddr_storage to;
	struct fid_ep *fep;
	bool made;
	int ret;

	(void)ird;      /* negotiated by the core's private-data header */
	(void)ord;
	if (len > OFI_CM_DATA_MAX || (len && !pdata))
		return -EINVAL;
	if (!addr || !ofi_sa_len(addr->sa_family))
		return -EAFNOSUPPORT;
	/* Every fid_ep is bound to the IA's address (dev->info's src_addr):
	 * an IPv4 IA has no way to an IPv6 peer, nor an IPv6 IA to an IPv4
	 * one.  The core reports it as the attempt's UNREACHABLE. */
	if (addr->sa_family != dev->addr.ss_family)
		return -ENETUNREACH;
	memset(&to, 0, sizeof(to));
	memcpy(&to, addr, ofi_sa_len(addr->sa_family));
	ofi_sa_set_port(&to, port);

	pthread_mutex_lock(&dev->lock);
	if (ep->state == OFI_EP_CONNECTING || ep->state == OFI_EP_CONNECTED) {
		ret = -EISCONN;
		goto out;
	}
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	ret = open_fid(ep, ep->srq ? dev->info_srx : dev->info, &fep, &made);
	if (ret)
		goto out;
	ret = ofi_err(fi_connect(fep, &to, pdata, len));
	if (ret) {
		fi_close(&fep->fid);
		goto out;
	}
	ep->active = true;
	ep->faulted = false;
	ep->have_addrs = false;
	set_state(ep, fep, OFI_EP_CONNECTING);
out:
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

int ofi_accept(struct dapl_tconn *conn, struct dapl_tep *ep,
	       const void *pdata, size_t len, uint16_t ird, uint16_t ord)
{
	struct dapl_tlisten *l = conn->listener;
	struct dapl_tdev *dev = l->dev;
	struct fid_ep *fep;
	bool made;
	int ret;

	(void)ird;
	(void)ord;
	pthread_mutex_lock(&dev->lock);
	ofi_conn_unlink(conn);
	if (len > OFI_CM_DATA_MAX || (len && !pdata) || ep->dev != dev) {
		ret = -EINVAL;
		goto refuse;
	}
	if (ep->state == OFI_EP_CONNECTING || ep->state == OFI_EP_CONNECTED) {
		ret = -EISCONN;
		goto refuse;
	}
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	if (ep->srq)
		conn->info->ep_attr->rx_ctx_cnt = FI_SHARED_CONTEXT;
	ret = open_fid(ep, conn->info, &fep, &made);
	if (ret && made)
		goto out;       /* closing the fid_ep ended the connection */
	if (ret)
		goto refuse;
	ret = ofi_err(fi_accept(fep, pdata, len));
	if (ret) {
		/* the fid_ep owns the connection now: closing it ends it */
		fi_close(&fep->fid);
		goto out;
	}
	ep->active = false;
	ep->faulted = false;
	ep->have_addrs = false;
	set_state(ep, fep, OFI_EP_CONNECTING);
	goto out;
refuse:
	fi_reject(l->pep, conn->info->handle, NULL, 0);
out:
	ofi_conn_free(conn);
	ofi_listener_put(l);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

int ofi_reject(struct dapl_tconn *conn, const void *pdata, size_t len)
{
	struct dapl_tlisten *l = conn->listener;
	struct dapl_tdev *dev = l->dev;
	int ret;

	pthread_mutex_lock(&dev->lock);
	ofi_conn_unlink(conn);
	if (len > OFI_CM_DATA_MAX || (len && !pdata)) {
		/* never hand tcp 1.17 more than 256 bytes: it overflows */
		fi_reject(l->pep, conn->info->handle, NULL, 0);
		ret = -EINVAL;
	} else {
		ret = ofi_err(fi_reject(l->pep, conn->info->handle, pdata,
					len));
	}
	ofi_conn_free(conn);
	ofi_listener_put(l);
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

int ofi_disconnect(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (ep->state == OFI_EP_CONNECTING || ep->state == OFI_EP_CONNECTED) {
		fi_shutdown(ep->fep, 0);
		/* Closing the fid_ep now purges tcp's own FI_SHUTDOWN (and a
		 * remote one not yet read), so exactly one DISCONNECTED is
		 * reported: ours. */
		ofi_ep_teardown(ep);
		dapl_conn_events_queue(&dev->connq, &ep->cev,
				       DAPL_TCM_DISCONNECTED, 0, NULL, 0);
	} else if (!dapl_conn_event_slot_queued(&ep->cev)) {
		ret = -ENOTCONN;
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}

int ofi_ep_addrs(struct dapl_tep *ep, struct sockaddr_storage *local,
		 struct sockaddr_storage *peer)
{
	struct dapl_tdev *dev = ep->dev;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (!ep->have_addrs) {
		ret = -ENOTCONN;
	} else {
		if (local)
			*local = ep->local;
		if (peer)
			*peer = ep->peer;
	}
	pthread_mutex_unlock(&dev->lock);
	return ret;
}
