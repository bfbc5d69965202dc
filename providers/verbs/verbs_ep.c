/* Endpoints: their QP, connection setup through rdma_cm, teardown. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

static uint32_t at_least_1(uint32_t v)
{
	return v ? v : 1;
}

/* dev->lock held. */
static void set_state(struct dapl_tep *ep, enum verbs_ep_state st)
{
	enum verbs_ep_state old;

	verbs_ep_lock_cqs(ep);
	old = ep->state;
	ep->state = st;
	verbs_ep_unlock_cqs(ep);
	verbs_dev_track(ep->dev, old, st);
}

/* ---- QP state transitions -------------------------------------------------- */

/* INIT with the attributes rdma_cm gives for id (port, P_Key index; the
 * device's, taken at open, without one) and the access a DAT endpoint
 * needs; valid from RESET and from INIT. */
static int qp_init(struct dapl_tdev *dev, struct ibv_qp *qp,
		   struct rdma_cm_id *id)
{
	struct ibv_qp_attr a;
	int mask = 0;

	if (id) {
		memset(&a, 0, sizeof(a));
		a.qp_state = IBV_QPS_INIT;
		if (rdma_init_qp_attr(id, &a, &mask))
			return -errno;
	} else {
		a = dev->qp_init_attr;
		mask = dev->qp_init_mask;
	}
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ;
	/* a peer's atomics (dat_ib_post_fetch_and_add / cmp_and_swap) */
	if (dev->ext & DAPL_TDEV_ATOMICS)
		a.qp_access_flags |= IBV_ACCESS_REMOTE_ATOMIC;
	mask |= IBV_QP_ACCESS_FLAGS;
	return -ibv_modify_qp(qp, &a, mask);
}

static int qp_rtr(struct dapl_tep *ep, struct rdma_cm_id *id)
{
	struct ibv_qp_attr a;
	int mask = 0;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	if (rdma_init_qp_attr(id, &a, &mask))
		return -errno;
	/* RDMA Reads this side answers: the passive side's agreed value; the
	 * active side's comes from the reply, within the device */
	if (!ep->active)
		a.max_dest_rd_atomic = (uint8_t)ep->ird;
	else if (a.max_dest_rd_atomic > ep->dev->attr.max_qp_rd_atom)
		a.max_dest_rd_atomic = (uint8_t)ep->dev->attr.max_qp_rd_atom;
	/* The wait a sender is told to make when this side has no receive
	 * posted.  The kernel's CM asks for the longest one there is (code
	 * 0, 655 ms); a Send completes only once it is received here, so a
	 * program that posts its receives a moment late would stall on it
	 * (DAPL_VERBS_RNR_TIMER, dapl_verbs(7)). */
	if (mask & IBV_QP_MIN_RNR_TIMER)
		a.min_rnr_timer = ep->dev->rnr_timer;
	return -ibv_modify_qp(ep->qp, &a, mask);
}

static int qp_rts(struct dapl_tep *ep, struct rdma_cm_id *id)
{
	struct ibv_qp_attr a;
	int mask = 0;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	if (rdma_init_qp_attr(id, &a, &mask))
		return -errno;
	if (!ep->active)
		a.max_rd_atomic = (uint8_t)ep->ord;
	else if (a.max_rd_atomic > ep->dev->attr.max_qp_init_rd_atom)
		a.max_rd_atomic = (uint8_t)ep->dev->attr.max_qp_init_rd_atom;
	/* How long an unacknowledged request waits before it is sent again:
	 * with the retries, the bound on noticing a dead link or peer.  The
	 * CM's value on RoCE encodes about 2 s a try (DAPL_VERBS_ACK_TIMEOUT,
	 * dapl_verbs(7)). */
	if ((mask & IBV_QP_TIMEOUT) && ep->dev->ack_timeout)
		a.timeout = ep->dev->ack_timeout;
	return -ibv_modify_qp(ep->qp, &a, mask);
}

/* dev->lock held, ep has no QP: makes one in INIT, state IDLE. */
static int qp_make(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	struct ibv_qp_init_attr ia;
	struct ibv_qp *qp;
	uint32_t inl = ep->inline_asked;
	int err;

	if (!inl)
		inl = dev->default_inline;
	if (inl > dev->max_inline)
		inl = dev->max_inline;
	memset(&ia, 0, sizeof(ia));
	ia.qp_context = ep;
	ia.send_cq = ep->scq->cq;
	ia.recv_cq = ep->rcq->cq;
	ia.srq = ep->srq ? ep->srq->srq : NULL;
	ia.cap.max_send_wr = at_least_1(ep->sq->depth);
	ia.cap.max_send_sge = at_least_1(ep->max_send_sge);
	if (ep->rq) {
		ia.cap.max_recv_wr = at_least_1(ep->rq->depth);
		ia.cap.max_recv_sge = at_least_1(ep->max_recv_sge);
	}
	ia.cap.max_inline_data = inl;
	ia.qp_type = IBV_QPT_RC;
	qp = ibv_create_qp(ep->pd->pd, &ia);
	if (!qp && inl) {
		/* inline data is an optimisation; do without it */
		ia.cap.max_inline_data = 0;
		inl = 0;
		qp = ibv_create_qp(ep->pd->pd, &ia);
	}
	if (!qp)
		return -(errno ? errno : ENOMEM);
	err = qp_init(dev, qp, NULL);
	if (err) {
		ibv_destroy_qp(qp);
		return err;
	}
	verbs_ep_lock_cqs(ep);
	if (ep->srq)
		err = verbs_cq_add_taker(ep->rcq, qp->qp_num, ep);
	if (!err) {
		ep->qp = qp;
		/* what was asked, not what the device made of it: rxe
		 * reports at least max_send_sge x 16 bytes even when asked
		 * for none, and DAPL_VERBS_INLINE=0 must turn inline off */
		ep->max_inline = ia.cap.max_inline_data < inl ?
				 ia.cap.max_inline_data : inl;
		ep->state = VERBS_EP_IDLE;
	}
	verbs_ep_unlock_cqs(ep);
	if (err)
		ibv_destroy_qp(qp);
	return err;
}

static socklen_t sa_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

void verbs_ep_save_addrs(struct dapl_tep *ep)
{
	struct sockaddr *l, *p;

	if (!ep->id)
		return;
	l = rdma_get_local_addr(ep->id);
	p = rdma_get_peer_addr(ep->id);
	memset(&ep->local, 0, sizeof(ep->local));
	memset(&ep->peer, 0, sizeof(ep->peer));
	memcpy(&ep->local, l, sa_len(l));
	memcpy(&ep->peer, p, sa_len(p));
	ep->have_addrs = true;
}

/* ---- teardown ------------------------------------------------------------------- */

void verbs_ep_teardown(struct dapl_tep *ep)
{
	enum verbs_ep_state old = ep->state;

	if (ep->id) {
		/* The peer hears a DREQ (or a REJ, while connecting) */
		if (ep->state == VERBS_EP_CONNECTED)
			rdma_disconnect(ep->id);
		rdma_destroy_id(ep->id);
		ep->id = NULL;
	}
	verbs_ep_lock_cqs(ep);
	if (ep->qp) {
		/* Once the QP is gone nothing more of it can reach the CQs:
		 * what is there now is all the device will ever say. */
		ibv_destroy_qp(ep->qp);
		ep->qp = NULL;
		verbs_cq_drain(ep->scq);
		if (ep->rcq != ep->scq)
			verbs_cq_drain(ep->rcq);
		if (ep->srq)
			verbs_cq_remove_taker(ep->rcq, ep);
	}
	verbs_queue_flush(ep->sq);
	verbs_queue_flush(ep->rq);
	ep->state = VERBS_EP_DOWN;
	atomic_store(&ep->faulted, false);
	verbs_cq_kick(ep->scq);
	if (ep->rcq != ep->scq)
		verbs_cq_kick(ep->rcq);
	verbs_ep_unlock_cqs(ep);
	verbs_dev_track(ep->dev, old, VERBS_EP_DOWN);
}

bool verbs_ep_dto_failed(struct dapl_tep *ep)
{
	verbs_ep_lock_cqs(ep);
	verbs_cq_drain(ep->scq);
	if (ep->rcq != ep->scq)
		verbs_cq_drain(ep->rcq);
	verbs_ep_unlock_cqs(ep);
	return atomic_exchange(&ep->faulted, false);
}

/* ---- create / destroy / reset ------------------------------------------------------ */

int verbs_ep_create(struct dapl_tpd *pd, struct dapl_tcq *scq,
		    struct dapl_tcq *rcq, struct dapl_tsrq *srq,
		    const struct dapl_tep_attr *attr, struct dapl_tep **out)
{
	struct dapl_tdev *dev;
	struct dapl_tep *ep;
	uint32_t max_sge;
	int err;

	if (!pd || !scq || !rcq || !attr || !out)
		return -EINVAL;
	dev = pd->dev;
	max_sge = (uint32_t)dev->attr.max_sge;
	if (max_sge > VERBS_MAX_SGE)
		max_sge = VERBS_MAX_SGE;
	if (attr->max_send_sge > max_sge || attr->max_recv_sge > max_sge ||
	    attr->max_send_wr > (uint32_t)dev->attr.max_qp_wr ||
	    (!srq && attr->max_recv_wr > (uint32_t)dev->attr.max_qp_wr))
		return -EINVAL;
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return -ENOMEM;
	ep->kind = VERBS_KIND_EP;
	dapl_conn_event_slot_init(&ep->cev, ep);
	ep->dev = dev;
	ep->pd = pd;
	ep->scq = scq;
	ep->rcq = rcq;
	ep->srq = srq;
	ep->owner = attr->owner;
	ep->max_send_sge = at_least_1(attr->max_send_sge);
	ep->max_recv_sge = at_least_1(attr->max_recv_sge);
	ep->inline_asked = attr->max_inline;
	ep->state = VERBS_EP_DOWN;
	atomic_init(&ep->faulted, false);
	ep->sq = verbs_queue_alloc(scq, ep, true, attr->max_send_wr,
				   ep->max_send_sge);
	if (!srq)
		ep->rq = verbs_queue_alloc(rcq, ep, false, attr->max_recv_wr,
					   ep->max_recv_sge);
	if (!ep->sq || (!srq && !ep->rq)) {
		free(ep->sq);
		free(ep->rq);
		free(ep);
		return -ENOMEM;
	}

	pthread_mutex_lock(&dev->lock);
	verbs_ep_lock_cqs(ep);
	verbs_cq_reserve(scq, attr->max_send_wr);
	verbs_cq_reserve(rcq, srq ? srq->max_wr : attr->max_recv_wr);
	scq->users++;
	rcq->users++;
	verbs_ep_unlock_cqs(ep);
	err = qp_make(ep);
	if (err) {
		verbs_ep_lock_cqs(ep);
		scq->users--;
		rcq->users--;
		scq->needed -= attr->max_send_wr;
		rcq->needed -= srq ? srq->max_wr : attr->max_recv_wr;
		verbs_ep_unlock_cqs(ep);
		pthread_mutex_unlock(&dev->lock);
		free(ep->sq);
		free(ep->rq);
		free(ep);
		return err;
	}
	if (srq)
		srq->users++;
	ep->next = dev->eps;
	if (dev->eps)
		dev->eps->prev = ep;
	dev->eps = ep;
	pthread_mutex_unlock(&dev->lock);
	*out = ep;
	return 0;
}

int verbs_ep_destroy(struct dapl_tep *ep)
{
	struct dapl_tdev *dev;
	uint32_t rneed;

	if (!ep)
		return -EINVAL;
	dev = ep->dev;
	pthread_mutex_lock(&dev->lock);
	if (ep->qp || ep->id)
		verbs_ep_teardown(ep);
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	if (ep->prev)
		ep->prev->next = ep->next;
	else
		dev->eps = ep->next;
	if (ep->next)
		ep->next->prev = ep->prev;
	rneed = ep->srq ? ep->srq->max_wr : ep->rq->depth;
	verbs_ep_lock_cqs(ep);
	if (ep->srq)
		verbs_cq_forget_taker(ep->rcq, ep);
	ep->scq->needed -= ep->sq->depth;
	ep->rcq->needed -= rneed;
	ep->scq->users--;
	ep->rcq->users--;
	verbs_queue_release(ep->sq);
	verbs_queue_release(ep->rq);
	verbs_ep_unlock_cqs(ep);
	if (ep->srq)
		ep->srq->users--;
	pthread_mutex_unlock(&dev->lock);
	free(ep);
	return 0;
}

int verbs_ep_reset(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	int err;

	pthread_mutex_lock(&dev->lock);
	if (ep->qp || ep->id)
		verbs_ep_teardown(ep);
	dapl_conn_events_drop(&dev->connq, &ep->cev);
	ep->have_addrs = false;
	err = qp_make(ep);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

/* ---- connecting -------------------------------------------------------------------- */

static uint16_t clamp16(uint16_t v, uint32_t max)
{
	if (max > 255)
		max = 255;      /* rdma_conn_param's fields are 8 bits */
	return v > max ? (uint16_t)max : v;
}

int verbs_connect(struct dapl_tep *ep, const struct sockaddr *addr,
		  uint16_t port, const void *pdata, size_t len, uint16_t ird,
		  uint16_t ord)
{
	struct dapl_tdev *dev = ep->dev;
	struct sockaddr_storage dst;
	struct rdma_cm_id *id;
	int err = 0;

	if (!addr || len > dev->max_pdata_connect || (len && !pdata))
		return -EINVAL;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	memset(&dst, 0, sizeof(dst));
	memcpy(&dst, addr, sa_len(addr));
	if (dst.ss_family == AF_INET)
		((struct sockaddr_in *)&dst)->sin_port = htons(port);
	else
		((struct sockaddr_in6 *)&dst)->sin6_port = htons(port);

	pthread_mutex_lock(&dev->lock);
	if (ep->state == VERBS_EP_CONNECTING || ep->state == VERBS_EP_CONNECTED) {
		err = -EISCONN;
		goto out;
	}
	if (ep->state == VERBS_EP_DOWN || !ep->qp) {
		dapl_conn_events_drop(&dev->connq, &ep->cev);
		err = qp_make(ep);
		if (err)
			goto out;
	}
	if (rdma_create_id(dev->ch, &id, ep, RDMA_PS_TCP)) {
		err = -errno;
		goto out;
	}
	/* No source address: the routing table picks the device, so an
	 * address without a route fails at once (with the IA's address as
	 * the source, rdma_cm waits for its ARP timeout instead);
	 * ROUTE_RESOLVED checks the route leaves by this IA's device. */
	if (rdma_resolve_addr(id, NULL, (struct sockaddr *)&dst,
			      dev->addr_timeout_ms)) {
		err = -errno;
		rdma_destroy_id(id);
		goto out;
	}
	if (len)
		memcpy(ep->pdata, pdata, len);
	ep->pdata_len = (uint8_t)len;
	ep->ird = clamp16(ird, dev->attr.max_qp_rd_atom);
	ep->ord = clamp16(ord, dev->attr.max_qp_init_rd_atom);
	ep->active = true;
	ep->have_addrs = false;
	ep->id = id;
	set_state(ep, VERBS_EP_CONNECTING);
out:
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int verbs_ep_send_request(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	struct rdma_conn_param p;

	if (!ep->id->verbs || ep->id->verbs->device != dev->ctx->device)
		return -ENETUNREACH;    /* the route leaves by another device */
	memset(&p, 0, sizeof(p));
	p.private_data = ep->pdata_len ? ep->pdata : NULL;
	p.private_data_len = ep->pdata_len;
	p.responder_resources = (uint8_t)ep->ird;
	p.initiator_depth = (uint8_t)ep->ord;
	p.flow_control = 1;
	p.retry_count = dev->retry;
	p.rnr_retry_count = dev->rnr_retry;
	p.srq = ep->srq ? 1 : 0;
	p.qp_num = ep->qp->qp_num;
	if (rdma_connect(ep->id, &p))
		return -errno;
	return 0;
}

int verbs_ep_connect_response(struct dapl_tep *ep)
{
	int err;

	err = qp_init(ep->dev, ep->qp, ep->id);
	if (!err)
		err = qp_rtr(ep, ep->id);
	if (!err)
		err = qp_rts(ep, ep->id);
	if (!err && rdma_establish(ep->id))
		err = -errno;
	if (err)
		return err;
	verbs_ep_save_addrs(ep);
	set_state(ep, VERBS_EP_CONNECTED);
	return 0;
}

int verbs_ep_established(struct dapl_tep *ep)
{
	/* iWARP's CM moves the QP itself; on IB and RoCE the passive side
	 * is in RTS since its accept */
	verbs_ep_save_addrs(ep);
	set_state(ep, VERBS_EP_CONNECTED);
	return 0;
}

int verbs_accept(struct dapl_tconn *conn, struct dapl_tep *ep,
		 const void *pdata, size_t len, uint16_t ird, uint16_t ord)
{
	struct dapl_tdev *dev;
	struct rdma_conn_param p;
	struct rdma_cm_id *id;
	bool moved = false;
	int err = 0;

	if (!conn)
		return -EINVAL;
	dev = conn->dev;
	pthread_mutex_lock(&dev->lock);
	id = conn->id;
	if (!ep || len > dev->max_pdata_accept || (len && !pdata)) {
		err = -EINVAL;
		goto refuse;
	}
	if (ep->state == VERBS_EP_CONNECTING || ep->state == VERBS_EP_CONNECTED) {
		err = -EISCONN;
		goto refuse;
	}
	if (ep->state == VERBS_EP_DOWN || !ep->qp) {
		dapl_conn_events_drop(&ep->dev->connq, &ep->cev);
		err = qp_make(ep);
		if (err)
			goto refuse;
	}
	/* Never more than the request allows (REP's responder resources
	 * must not exceed the REQ's initiator depth, and back). */
	ep->ird = clamp16(ird, dev->attr.max_qp_rd_atom);
	if (ep->ird > conn->responder_resources)
		ep->ird = conn->responder_resources;
	ep->ord = clamp16(ord, dev->attr.max_qp_init_rd_atom);
	if (ep->ord > conn->initiator_depth)
		ep->ord = conn->initiator_depth;
	ep->active = false;
	ep->have_addrs = false;
	/* On IB and RoCE the QP goes to RTS before the reply leaves, as the
	 * CM allows: once the handshake is over, the peer may disconnect at
	 * once, and the CM then refuses RTS's attributes (EINVAL) to a
	 * progress thread that takes ESTABLISHED after the DREQ arrived.
	 * Nothing is posted before ESTABLISHED (the core refuses it). */
	if (!dev->iwarp) {
		moved = true;
		err = qp_init(ep->dev, ep->qp, id);
		if (!err)
			err = qp_rtr(ep, id);
		if (!err)
			err = qp_rts(ep, id);
		if (err)
			goto refuse;
	}
	memset(&p, 0, sizeof(p));
	p.private_data = len ? pdata : NULL;
	p.private_data_len = (uint8_t)len;
	p.responder_resources = (uint8_t)ep->ird;
	p.initiator_depth = (uint8_t)ep->ord;
	p.flow_control = 1;
	p.retry_count = dev->retry;
	p.rnr_retry_count = dev->rnr_retry;
	p.srq = ep->srq ? 1 : 0;
	p.qp_num = ep->qp->qp_num;
	id->context = ep;
	if (rdma_accept(id, &p)) {
		err = -errno;
		id->context = conn;
		goto refuse;
	}
	/* the cm_id is the ep's from here on */
	conn->id = NULL;
	verbs_conn_free(conn);
	ep->id = id;
	set_state(ep, VERBS_EP_CONNECTING);
	pthread_mutex_unlock(&dev->lock);
	return 0;
refuse:
	/* accept consumes conn whatever happens */
	rdma_reject(id, NULL, 0);
	verbs_conn_free(conn);
	if (moved) {
		/* a QP moved towards this peer cannot serve another */
		verbs_ep_teardown(ep);
		qp_make(ep);
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int verbs_reject(struct dapl_tconn *conn, const void *pdata, size_t len)
{
	struct dapl_tdev *dev;
	int err = 0;

	if (!conn)
		return -EINVAL;
	dev = conn->dev;
	pthread_mutex_lock(&dev->lock);
	if (len > dev->max_pdata_reject || (len && !pdata)) {
		rdma_reject(conn->id, NULL, 0);
		err = -EINVAL;
	} else if (rdma_reject(conn->id, len ? pdata : NULL, (uint8_t)len)) {
		err = -errno;
	}
	verbs_conn_free(conn);
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int verbs_disconnect(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	if (ep->state == VERBS_EP_CONNECTED || ep->state == VERBS_EP_CONNECTING) {
		verbs_ep_teardown(ep);
		dapl_conn_events_queue(&dev->connq, &ep->cev,
				       DAPL_TCM_DISCONNECTED, 0, NULL, 0);
	} else {
		err = -ENOTCONN;
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}

int verbs_ep_addrs(struct dapl_tep *ep, struct sockaddr_storage *local,
		   struct sockaddr_storage *peer)
{
	struct dapl_tdev *dev = ep->dev;
	int err = 0;

	pthread_mutex_lock(&dev->lock);
	if (!ep->have_addrs) {
		err = -ENOTCONN;
	} else {
		if (local)
			*local = ep->local;
		if (peer)
			*peer = ep->peer;
	}
	pthread_mutex_unlock(&dev->lock);
	return err;
}
