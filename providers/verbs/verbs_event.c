/* Connection events: rdma_cm's, the device's async events, and the ones
 * the transport makes itself, as the seam's small vocabulary. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs.h"

/* IB CM reject reasons (IBA 12.6.7.2): "consumer defined" is
 * rdma_reject's (and the kernel's, for an unanswered request of a process
 * that died); "timeout" a CM's that gave up on a request; "invalid
 * service ID" (8, nobody listens) and the rest are a CM refusing. */
#define VERBS_REJ_TIMEOUT 1
#define VERBS_REJ_CONSUMER 28

size_t verbs_pdata_len(const void *p, size_t len)
{
	const uint8_t *b = p;
	size_t i;

	if (!p)
		return 0;
	for (i = 0; i < len; i++)
		if (b[i])
			return len;
	return 0;
}

static void copy_addr(struct sockaddr_storage *dst, const struct sockaddr *sa)
{
	memset(dst, 0, sizeof(*dst));
	if (sa->sa_family == AF_INET6)
		memcpy(dst, sa, sizeof(struct sockaddr_in6));
	else if (sa->sa_family == AF_INET)
		memcpy(dst, sa, sizeof(struct sockaddr_in));
}

/* Ends ep's attempt and reports type about it. */
static int ep_ends(struct dapl_tep *ep, enum dapl_tcm_event_type type,
		   int status, struct dapl_tcm_event *ev)
{
	verbs_ep_teardown(ep);
	ev->type = type;
	ev->ep = ep;
	ev->status = status;
	return 1;
}

/* dev->lock held: endpoints whose data path saw an error lose their
 * connection (the QP is in the error state; nothing more can pass). */
static void take_faults(struct dapl_tdev *dev)
{
	struct dapl_tep *ep;

	if (!atomic_exchange(&dev->faults, false))
		return;
	for (ep = dev->eps; ep; ep = ep->next) {
		if (!atomic_exchange(&ep->faulted, false))
			continue;
		if (ep->state != VERBS_EP_CONNECTED)
			continue;
		dapl_dbg(DAPL_DBG_CM, "verbs: ep %p: a DTO failed -> connection "
			 "event %d", (void *)ep, (int)DAPL_TCM_CONN_ERROR);
		verbs_ep_teardown(ep);
		dapl_conn_events_queue(&dev->connq, &ep->cev,
				       DAPL_TCM_CONN_ERROR, -EIO, NULL, 0);
	}
}

/* One async event of the device: 1 with ev filled, 0 handled silently,
 * -1 none left. */
static int take_async(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	struct ibv_async_event ae;
	enum ibv_event_type type;
	struct ibv_qp *qp = NULL;
	struct ibv_srq *srq = NULL;
	struct dapl_tep *ep = NULL;

	if (ibv_get_async_event(dev->ctx, &ae))
		return -1;
	type = ae.event_type;
	switch (type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		qp = ae.element.qp;
		break;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
	case IBV_EVENT_SRQ_ERR:
		srq = ae.element.srq;
		break;
	default:
		break;
	}
	/* Acked before it is acted on: destroying the QP waits for the ack.
	 * The QP itself cannot go meanwhile, dev->lock is held. */
	ibv_ack_async_event(&ae);
	if (qp) {
		ep = qp->qp_context;
		if (!ep || ep->qp != qp)
			return 0;
	}
	switch (type) {
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_PATH_MIG_ERR:
		if (ep->state != VERBS_EP_CONNECTED &&
		    ep->state != VERBS_EP_CONNECTING)
			return 0;
		dapl_dbg(DAPL_DBG_CM, "verbs: ep %p: async %s -> connection "
			 "event %d", (void *)ep, ibv_event_type_str(type),
			 (int)DAPL_TCM_CONN_ERROR);
		return ep_ends(ep, DAPL_TCM_CONN_ERROR, -EIO, ev);
	case IBV_EVENT_COMM_EST:
		/* data came before the handshake's last message: tell the CM */
		if (ep->state == VERBS_EP_CONNECTING && ep->id)
			rdma_notify(ep->id, IBV_EVENT_COMM_EST);
		return 0;
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		ev->type = DAPL_TCM_SRQ_LIMIT;
		ev->srq = srq->srq_context;
		return 1;
	case IBV_EVENT_DEVICE_FATAL:
		dev->fatal = true;
		return 0;
	default:
		return 0;
	}
}

static int on_connect_request(struct dapl_tdev *dev, struct rdma_cm_id *lid,
			      struct rdma_cm_id *id, uint8_t resp_res,
			      uint8_t init_depth, size_t plen,
			      struct dapl_tcm_event *ev)
{
	struct dapl_tlisten *l = lid ? lid->context : NULL;
	struct dapl_tconn *conn;

	if (!l || l->kind != VERBS_KIND_LISTENER || !id->verbs ||
	    id->verbs->device != dev->ctx->device ||
	    !(conn = calloc(1, sizeof(*conn)))) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return 0;
	}
	conn->kind = VERBS_KIND_CONN;
	conn->dev = dev;
	conn->listener = l;
	conn->id = id;
	/* this side's view: reads the peer will issue, reads it accepts */
	conn->responder_resources = resp_res;
	conn->initiator_depth = init_depth;
	id->context = conn;
	conn->next = dev->conns;
	dev->conns = conn;
	ev->type = DAPL_TCM_CONNECT_REQUEST;
	ev->listener = l;
	ev->conn = conn;
	ev->pdata = dev->pdata;
	ev->pdata_len = plen;
	copy_addr(&ev->peer, rdma_get_peer_addr(id));
	return 1;
}

/* An event about an endpoint's attempt. */
static int on_ep_event(struct dapl_tdev *dev, struct dapl_tep *ep,
		       enum rdma_cm_event_type type, int status, size_t plen,
		       struct dapl_tcm_event *ev)
{
	bool connecting = ep->state == VERBS_EP_CONNECTING;
	int err;

	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (!connecting)
			return 0;
		if (rdma_resolve_route(ep->id, dev->route_timeout_ms))
			return ep_ends(ep, DAPL_TCM_UNREACHABLE, -errno, ev);
		return 0;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if (!connecting)
			return 0;
		err = verbs_ep_send_request(ep);
		/* iWARP connects TCP inside rdma_connect: a refused TCP
		 * connect is the peer's host saying nobody listens there,
		 * a rejection without data, as the IB CM reports it */
		if (err == -ECONNREFUSED && dev->iwarp)
			return ep_ends(ep, DAPL_TCM_REJECTED, err, ev);
		if (err)
			return ep_ends(ep, DAPL_TCM_UNREACHABLE, err, ev);
		return 0;
	case RDMA_CM_EVENT_ADDR_ERROR:
	case RDMA_CM_EVENT_ROUTE_ERROR:
		if (!connecting)
			return 0;
		return ep_ends(ep, DAPL_TCM_UNREACHABLE,
			       status < 0 ? status : -EHOSTUNREACH, ev);
	case RDMA_CM_EVENT_UNREACHABLE:
		/* the request (or the reply) went unanswered */
		if (!connecting)
			return 0;
		return ep_ends(ep, ep->active ? DAPL_TCM_UNREACHABLE :
			       DAPL_TCM_CONN_ERROR, -ETIMEDOUT, ev);
	case RDMA_CM_EVENT_CONNECT_RESPONSE:
		if (!connecting || !ep->active)
			return 0;
		err = verbs_ep_connect_response(ep);
		if (err)
			return ep_ends(ep, DAPL_TCM_CONN_ERROR, err, ev);
		ev->type = DAPL_TCM_ESTABLISHED;
		ev->ep = ep;
		ev->pdata = dev->pdata;
		ev->pdata_len = plen;
		return 1;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (!connecting)
			return 0;
		err = verbs_ep_established(ep);
		if (err)
			return ep_ends(ep, DAPL_TCM_CONN_ERROR, err, ev);
		ev->type = DAPL_TCM_ESTABLISHED;
		ev->ep = ep;
		/* iWARP's active side learns the accept's data here */
		if (ep->active) {
			ev->pdata = dev->pdata;
			ev->pdata_len = plen;
		}
		return 1;
	case RDMA_CM_EVENT_REJECTED:
		if (!connecting)
			return 0;
		if (!ep->active)        /* the active side refused our reply */
			return ep_ends(ep, DAPL_TCM_CONN_ERROR, -ECONNRESET, ev);
		/* The peer's consumer refused: the core's header in the data
		 * tells a consumer from a provider reject.  A consumer reject
		 * without any data is not the core's: the peer's kernel
		 * refuses so for a process that died holding the request (as
		 * it does with "timeout"), so the handshake broke.  Any other
		 * reason, such as nobody listening, is a refusal by the peer's
		 * CM, reported without data.  (siw reports an MPA reject, with
		 * the consumer's data, as ECONNRESET.) */
		if ((status == VERBS_REJ_CONSUMER && plen) ||
		    (dev->iwarp && (status == -ECONNREFUSED ||
				    status == -ECONNRESET) && plen)) {
			ev->pdata = dev->pdata;
			ev->pdata_len = plen;
		} else if (status == VERBS_REJ_CONSUMER ||
			   status == VERBS_REJ_TIMEOUT ||
			   (dev->iwarp && status == -ECONNRESET)) {
			return ep_ends(ep, DAPL_TCM_CONN_ERROR, -ECONNRESET, ev);
		}
		return ep_ends(ep, DAPL_TCM_REJECTED, -ECONNREFUSED, ev);
	case RDMA_CM_EVENT_CONNECT_ERROR:
		if (!connecting && ep->state != VERBS_EP_CONNECTED)
			return 0;
		return ep_ends(ep, DAPL_TCM_CONN_ERROR,
			       status < 0 ? status : -ECONNABORTED, ev);
	case RDMA_CM_EVENT_DISCONNECTED:
		if (!connecting && ep->state != VERBS_EP_CONNECTED)
			return 0;
		/* A DTO of ours that failed ends the connection too: siw,
		 * whose receive found its buffer too small, sends a
		 * Terminate and closes the stream itself, and rdma_cm can
		 * report that close before anyone read the failed
		 * completion.  The error is why it ended (BROKEN), whoever
		 * looks first. */
		if (!connecting && verbs_ep_dto_failed(ep))
			return ep_ends(ep, DAPL_TCM_CONN_ERROR, -EIO, ev);
		return ep_ends(ep, DAPL_TCM_DISCONNECTED, 0, ev);
	case RDMA_CM_EVENT_DEVICE_REMOVAL:
		dev->fatal = true;
		if (!connecting && ep->state != VERBS_EP_CONNECTED)
			return 0;
		return ep_ends(ep, DAPL_TCM_CONN_ERROR, -ENODEV, ev);
	default:
		return 0;       /* TIMEWAIT_EXIT, ADDR_CHANGE, ... */
	}
}

/* One rdma_cm event: 1 with ev filled, 0 handled silently, -1 none left. */
static int take_cm(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	struct rdma_cm_event *e;
	enum rdma_cm_event_type type;
	struct rdma_cm_id *id, *lid;
	uint8_t resp_res, init_depth, kind;
	size_t plen = 0;
	void *ctx;
	int status, r;

	if (rdma_get_cm_event(dev->ch, &e))
		return -1;
	/* Everything is copied and the event acked at once: its data goes
	 * with the ack, and destroying an id waits for the acks of its
	 * events. */
	type = e->event;
	status = e->status;
	id = e->id;
	lid = e->listen_id;
	resp_res = e->param.conn.responder_resources;
	init_depth = e->param.conn.initiator_depth;
	if (e->param.conn.private_data && e->param.conn.private_data_len) {
		plen = e->param.conn.private_data_len;
		if (plen > sizeof(dev->pdata))
			plen = sizeof(dev->pdata);
		memcpy(dev->pdata, e->param.conn.private_data, plen);
		plen = verbs_pdata_len(dev->pdata, plen);
	}
	rdma_ack_cm_event(e);

	if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
		return on_connect_request(dev, lid, id, resp_res, init_depth,
					  plen, ev);
	if (type == RDMA_CM_EVENT_DEVICE_REMOVAL)
		dev->fatal = true;
	ctx = id ? id->context : NULL;
	if (!ctx)
		return 0;
	kind = *(uint8_t *)ctx;
	if (kind != VERBS_KIND_EP)
		return 0;       /* a listener, or a request not answered yet */
	r = on_ep_event(dev, ctx, type, status, plen, ev);
	/* DAT_DBG_TYPE bit 3: why an attempt or a connection ended, in
	 * rdma_cm's words */
	if (r == 1 && ev->type != DAPL_TCM_ESTABLISHED)
		dapl_dbg(DAPL_DBG_CM, "verbs: ep %p: rdma_cm %s (status %d, %zu "
			 "bytes of private data) -> connection event %d (%s)",
			 (void *)ctx, rdma_event_str(type), status, plen,
			 (int)ev->type, strerror(ev->status < 0 ? -ev->status
							  : ev->status));
	return r;
}

int verbs_cm_get_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	uint64_t v;
	int r;

	memset(ev, 0, sizeof(*ev));
	pthread_mutex_lock(&dev->lock);
	if (read(dev->notify_fd, &v, sizeof(v)) < 0)
		v = 0;
	verbs_dev_sweep(dev);
	take_faults(dev);
	for (;;) {
		if (dev->fatal && !dev->fatal_reported) {
			dev->fatal_reported = true;
			ev->type = DAPL_TCM_DEVICE_FATAL;
			r = 1;
			break;
		}
		if (dev->limit_head) {
			struct dapl_tsrq *srq = dev->limit_head;

			dev->limit_head = srq->limit_next;
			srq->limit_queued = false;
			ev->type = DAPL_TCM_SRQ_LIMIT;
			ev->srq = srq;
			r = 1;
			break;
		}
		if (dapl_conn_events_pop(&dev->connq, ev)) {
			r = 1;
			break;
		}
		/* rdma_cm's word on a connection before the device's on its
		 * QP: when the peer closes while its RDMA Reads are still
		 * being answered, siw also raises QP_REQ_ERR here, and with
		 * both already queued the close is what happened
		 * (DISCONNECTED, not BROKEN) */
		r = take_cm(dev, ev);
		if (r == 1)
			break;
		if (r == 0)
			continue;
		r = take_async(dev, ev);
		if (r == 1)
			break;
		if (r == 0)
			continue;
		r = -EAGAIN;
		break;
	}
	pthread_mutex_unlock(&dev->lock);
	return r == 1 ? 0 : r;
}
