/* Endpoints: creation, attributes, the calls that move an EP through its
 * states.  The state machine itself (what each connection event does) is
 * in cm.c; this file checks the consumer's arguments and states. */
#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "entry.h"

#define EP_DEFAULT_DTOS 16
#define EP_DEFAULT_IOV 4
#define EP_DEFAULT_RDMA_READS 8
#define EP_DEFAULT_MAX_SIZE (UINT64_C(1) << 31)

#define BAD_EP DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP)

static struct dapl_ep *ep_get(DAT_EP_HANDLE h)
{
	return (struct dapl_ep *)dapl_handle_get(h, DAT_HANDLE_TYPE_EP);
}

/* DAT_INVALID_STATE with the subtype that names the EP's state. */
DAT_RETURN dapl_ep_state_error(DAT_EP_STATE state)
{
	static const DAT_RETURN_SUBTYPE by_state[] = {
		[DAT_EP_STATE_UNCONNECTED] = DAT_INVALID_STATE_EP_UNCONNECTED,
		[DAT_EP_STATE_UNCONFIGURED_UNCONNECTED] = DAT_INVALID_STATE_EP_UNCONFIGURED,
		[DAT_EP_STATE_RESERVED] = DAT_INVALID_STATE_EP_RESERVED,
		[DAT_EP_STATE_UNCONFIGURED_RESERVED] = DAT_INVALID_STATE_EP_UNCONFRESERVED,
		[DAT_EP_STATE_PASSIVE_CONNECTION_PENDING] = DAT_INVALID_STATE_EP_PASSCONNPENDING,
		[DAT_EP_STATE_UNCONFIGURED_PASSIVE] = DAT_INVALID_STATE_EP_UNCONFPASSIVE,
		[DAT_EP_STATE_ACTIVE_CONNECTION_PENDING] = DAT_INVALID_STATE_EP_ACTCONNPENDING,
		[DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING] = DAT_INVALID_STATE_EP_TENTCONNPENDING,
		[DAT_EP_STATE_UNCONFIGURED_TENTATIVE] = DAT_INVALID_STATE_EP_UNCONFTENTATIVE,
		[DAT_EP_STATE_CONNECTED] = DAT_INVALID_STATE_EP_CONNECTED,
		[DAT_EP_STATE_DISCONNECT_PENDING] = DAT_INVALID_STATE_EP_DISCPENDING,
		[DAT_EP_STATE_DISCONNECTED] = DAT_INVALID_STATE_EP_DISCONNECTED,
		[DAT_EP_STATE_COMPLETION_PENDING] = DAT_INVALID_STATE_EP_COMPLPENDING,
	};
	DAT_RETURN_SUBTYPE sub = DAT_INVALID_STATE_EP_NOTREADY;

	if ((unsigned)state < sizeof(by_state) / sizeof(by_state[0]))
		sub = by_state[state];
	return DAT_ERROR(DAT_INVALID_STATE, sub);
}

/* RDMA Reads scatter into no more local segments than the device allows
 * (dapl_tdev_attr.max_sge_rd): a larger max_rdma_read_iov asked for is
 * given as the device's, which dat_ep_query shows, and a Read posted with
 * more segments is refused (dat_ep_post_rdma_read(3)). */
static void clamp_read_iov(const struct dapl_ia *ia, DAT_EP_ATTR *a)
{
	uint32_t rd = ia->dev_attr.max_sge_rd;

	if (rd && a->max_rdma_read_iov > 0 && (uint32_t)a->max_rdma_read_iov > rd)
		a->max_rdma_read_iov = (DAT_COUNT)rd;
}

static void default_attr(const struct dapl_ia *ia, DAT_EP_ATTR *a)
{
	const struct dapl_tdev_attr *d = &ia->dev_attr;

	memset(a, 0, sizeof(*a));
	a->service_type = DAT_SERVICE_TYPE_RC;
	a->max_message_size = EP_DEFAULT_MAX_SIZE;
	a->max_rdma_size = EP_DEFAULT_MAX_SIZE;
	if (d->max_msg_size && d->max_msg_size < a->max_message_size)
		a->max_message_size = d->max_msg_size;
	if (d->max_rdma_size && d->max_rdma_size < a->max_rdma_size)
		a->max_rdma_size = d->max_rdma_size;
	a->qos = DAT_QOS_BEST_EFFORT;
	a->recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	a->max_recv_dtos = EP_DEFAULT_DTOS;
	a->max_request_dtos = EP_DEFAULT_DTOS;
	a->max_recv_iov = EP_DEFAULT_IOV;
	a->max_request_iov = EP_DEFAULT_IOV;
	if (d->max_sge && (uint32_t)a->max_recv_iov > d->max_sge)
		a->max_recv_iov = a->max_request_iov = (DAT_COUNT)d->max_sge;
	a->max_rdma_read_in = EP_DEFAULT_RDMA_READS;
	a->max_rdma_read_out = EP_DEFAULT_RDMA_READS;
	if (a->max_rdma_read_in > d->max_ird)
		a->max_rdma_read_in = d->max_ird;
	if (a->max_rdma_read_out > d->max_ord)
		a->max_rdma_read_out = d->max_ord;
	a->max_rdma_read_iov = a->max_request_iov;
	a->max_rdma_write_iov = a->max_request_iov;
	clamp_read_iov(ia, a);
}

/* Whether the device can give an EP these attributes. */
static bool attr_ok(const struct dapl_ia *ia, const DAT_EP_ATTR *a)
{
	const struct dapl_tdev_attr *d = &ia->dev_attr;

	if (a->service_type != DAT_SERVICE_TYPE_RC)
		return false;
	if (a->qos != DAT_QOS_BEST_EFFORT)
		return false;
	if (a->max_recv_dtos < 0 || a->max_request_dtos < 0 ||
	    a->max_recv_iov < 0 || a->max_request_iov < 0 ||
	    a->max_rdma_read_in < 0 || a->max_rdma_read_out < 0 ||
	    a->max_rdma_read_iov < 0 || a->max_rdma_write_iov < 0)
		return false;
	if (d->max_qp_wr && ((uint32_t)a->max_recv_dtos > d->max_qp_wr ||
			     (uint32_t)a->max_request_dtos > d->max_qp_wr))
		return false;
	if (d->max_sge && ((uint32_t)a->max_recv_iov > d->max_sge ||
			   (uint32_t)a->max_request_iov > d->max_sge))
		return false;
	if (a->max_rdma_read_in > d->max_ird || a->max_rdma_read_out > d->max_ord)
		return false;
	return true;
}

/* ---- EVDs of other IAs of the provider (libdat(7)) ----------------------- */

static void ep_sync_param(struct dapl_ep *ep);

/* The IA locks an EP call holds: the EP's, and those of the other IAs
 * whose EVDs it was given (taken under the share lock, which ep_create
 * and ep_modify always hold first). */
struct ia_locks {
	struct dapl_ia *ia[4];
	int n;
};

/* Adds the IA of the EVD behind h when it is another open IA of ia's
 * provider.  Share lock held: that IA stays open; the EVD itself is
 * checked again under its IA's lock. */
static void note_foreign(struct ia_locks *l, struct dapl_ia *ia,
			 DAT_EVD_HANDLE h)
{
	struct dapl_evd *evd;
	struct dapl_ia *other;
	int i;

	if (h == DAT_HANDLE_NULL)
		return;
	evd = (struct dapl_evd *)dapl_handle_get(h, DAT_HANDLE_TYPE_EVD);
	if (!evd)
		return;
	other = evd->ia;
	if (other == ia || !dapl_share_is_open(other) || other->prov != ia->prov)
		return;
	for (i = 0; i < l->n; i++)
		if (l->ia[i] == other)
			return;
	l->ia[l->n++] = other;
}

/* Takes the share lock, then ia's lock and those of the other IAs whose
 * EVDs the handles name. */
static void lock_for_evds(struct ia_locks *l, struct dapl_ia *ia,
			  DAT_EVD_HANDLE a, DAT_EVD_HANDLE b, DAT_EVD_HANDLE c)
{
	int i;

	dapl_share_lock();
	l->n = 0;
	l->ia[l->n++] = ia;
	note_foreign(l, ia, a);
	note_foreign(l, ia, b);
	note_foreign(l, ia, c);
	for (i = 0; i < l->n; i++)
		pthread_mutex_lock(&l->ia[i]->lock);
}

static void unlock_for_evds(struct ia_locks *l)
{
	int i;

	for (i = l->n - 1; i >= 0; i--)
		pthread_mutex_unlock(&l->ia[i]->lock);
	dapl_share_unlock();
}

static bool holds(const struct ia_locks *l, const struct dapl_ia *ia)
{
	int i;

	for (i = 0; i < l->n; i++)
		if (l->ia[i] == ia)
			return true;
	return false;
}

/* The EVD behind h for one of an EP's roles, with the flag that role
 * needs; NULL h is allowed (*out NULL).  An EVD of another IA of the same
 * provider will do, unless DAT_STRICT is set; its IA's lock is among l.
 * Returns DAT_SUCCESS or the invalid-handle code of that role. */
static DAT_RETURN evd_for_role(const struct ia_locks *l, struct dapl_ia *ia,
			       DAT_EVD_HANDLE h, DAT_EVD_FLAGS need,
			       DAT_RETURN_SUBTYPE sub, struct dapl_evd **out)
{
	struct dapl_evd *evd;

	*out = NULL;
	if (h == DAT_HANDLE_NULL)
		return DAT_SUCCESS;
	evd = (struct dapl_evd *)dapl_handle_get(h, DAT_HANDLE_TYPE_EVD);
	if (!evd || !(evd->flags & need))
		return DAT_ERROR(DAT_INVALID_HANDLE, sub);
	if (evd->ia != ia &&
	    (evd->ia->prov != ia->prov || !holds(l, evd->ia) ||
	     !dapl_compat_allow(DAPL_COMPAT_SHARED_EVD)))
		return DAT_ERROR(DAT_INVALID_HANDLE, sub);
	*out = evd;
	return DAT_SUCCESS;
}

/* The IA whose EVDs these are is closing abruptly: EPs of other IAs that
 * use one of them lose it.  Their transport endpoint goes (what they had
 * posted is flushed into the EVD's CQ on their device, which the EVD's
 * teardown drains); a connection, or an attempt at one, ends with
 * DAT_CONNECTION_EVENT_BROKEN on a connect EVD of their own; dat_ep_query
 * shows the EVD as NULL.  Share lock held, no IA lock. */
void dapl_ep_detach_evds_of(struct dapl_ia *ia)
{
	struct dapl_ia *other;
	struct dapl_ep *ep;
	DAT_EP_STATE st;

	for (other = dapl_share_first(); other; other = dapl_share_next(other)) {
		if (other == ia || other->prov != ia->prov)
			continue;
		pthread_mutex_lock(&other->lock);
		for (ep = other->eps; ep; ep = ep->next) {
			bool recv = ep->recv_evd && ep->recv_evd->ia == ia;
			bool req = ep->request_evd && ep->request_evd->ia == ia;
			bool conn = ep->connect_evd && ep->connect_evd->ia == ia;

			if (!recv && !req && !conn)
				continue;
			st = ep->param.ep_state;
			if (ep->tep && st == DAT_EP_STATE_CONNECTED)
				other->ops->disconnect(ep->tep);
			if (ep->tep)
				dapl_ep_drop_tep(ep);
			if (recv) {
				ep->recv_evd->users--;
				ep->recv_evd = NULL;
			}
			if (req) {
				ep->request_evd->users--;
				ep->request_evd = NULL;
			}
			if (conn) {
				ep->connect_evd->users--;
				ep->connect_evd = NULL;
			}
			ep_sync_param(ep);
			if (st == DAT_EP_STATE_CONNECTED ||
			    st == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING ||
			    st == DAT_EP_STATE_COMPLETION_PENDING ||
			    st == DAT_EP_STATE_DISCONNECT_PENDING) {
				ep->param.ep_state = DAT_EP_STATE_DISCONNECTED;
				if (ep->connect_evd)
					dapl_evd_post_connection(ep->connect_evd,
						DAT_CONNECTION_EVENT_BROKEN,
						ep, 0, NULL);
			}
		}
		pthread_mutex_unlock(&other->lock);
	}
}

static void link_users(struct dapl_ep *ep, int delta)
{
	if (ep->pz)
		ep->pz->users += delta;
	if (ep->srq)
		ep->srq->users += delta;
	if (ep->recv_evd)
		ep->recv_evd->users += delta;
	if (ep->request_evd)
		ep->request_evd->users += delta;
	if (ep->connect_evd)
		ep->connect_evd->users += delta;
}

static void ep_sync_param(struct dapl_ep *ep)
{
	ep->param.pz_handle = ep->pz;
	ep->param.recv_evd_handle = ep->recv_evd;
	ep->param.request_evd_handle = ep->request_evd;
	ep->param.connect_evd_handle = ep->connect_evd;
	ep->param.srq_handle = ep->srq;
}

static struct dapl_ep *ep_alloc(struct dapl_ia *ia)
{
	struct dapl_ep *ep;

	ep = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_EP,
			       sizeof(*ep), ia);
	if (!ep)
		return NULL;
	ep->ia = ia;
	ep->param.ia_handle = ia;
	ep->param.ep_state = DAT_EP_STATE_UNCONNECTED;
	ep->local_addr = ia->local_addr;
	ep->param.local_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->local_addr;
	ep->param.remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ep->remote_addr;
	default_attr(ia, &ep->param.ep_attr);
	return ep;
}

/* dat_ep_create and dat_ep_create_with_srq (srq_h non-NULL; the
 * argument positions differ by one from there on: shift). */
static DAT_RETURN ep_create(DAT_IA_HANDLE ia_h, DAT_PZ_HANDLE pz_h,
			    DAT_EVD_HANDLE recv_h, DAT_EVD_HANDLE request_h,
			    DAT_EVD_HANDLE connect_h, DAT_SRQ_HANDLE srq_h,
			    const DAT_EP_ATTR *attr, DAT_EP_HANDLE *out)
{
	struct dapl_ia *ia = dapl_ia_get(ia_h);
	struct dapl_evd *recv, *request, *connect;
	struct dapl_pz *pz = NULL;
	struct dapl_srq *srq = NULL;
	struct ia_locks locks;
	struct dapl_ep *ep;
	int shift = srq_h != DAT_HANDLE_NULL;
	DAT_RETURN rc;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7 + shift);
	if (attr && !attr_ok(ia, attr))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6 + shift);

	lock_for_evds(&locks, ia, recv_h, request_h, connect_h);
	if (pz_h != DAT_HANDLE_NULL) {
		pz = (struct dapl_pz *)dapl_handle_get(pz_h, DAT_HANDLE_TYPE_PZ);
		if (!pz || pz->ia != ia) {
			rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
			goto out;
		}
	}
	if (srq_h != DAT_HANDLE_NULL) {
		srq = (struct dapl_srq *)dapl_handle_get(srq_h, DAT_HANDLE_TYPE_SRQ);
		if (!srq || srq->ia != ia) {
			rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
			goto out;
		}
		/* the transport takes receives for the EP's PD from it */
		if (srq->pz != pz) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
			goto out;
		}
	}
	rc = evd_for_role(&locks, ia, recv_h, DAT_EVD_DTO_FLAG,
			  DAT_INVALID_HANDLE_EVD_RECV, &recv);
	if (rc == DAT_SUCCESS)
		rc = evd_for_role(&locks, ia, request_h,
				  DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
				  DAT_INVALID_HANDLE_EVD_REQUEST, &request);
	if (rc == DAT_SUCCESS)
		rc = evd_for_role(&locks, ia, connect_h, DAT_EVD_CONNECTION_FLAG,
				  DAT_INVALID_HANDLE_EVD_CONN, &connect);
	if (rc != DAT_SUCCESS)
		goto out;

	ep = ep_alloc(ia);
	if (!ep) {
		rc = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
		goto out;
	}
	if (attr) {
		ep->param.ep_attr = *attr;
		clamp_read_iov(ia, &ep->param.ep_attr);
	}
	ep->pz = pz;
	ep->srq = srq;
	ep->recv_evd = recv;
	ep->request_evd = request;
	ep->connect_evd = connect;
	ep_sync_param(ep);
	link_users(ep, +1);
	ep->next = ia->eps;
	ia->eps = ep;
	*out = ep;
out:
	unlock_for_evds(&locks);
	return rc;
}

DAT_RETURN dapl_ep_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
			  DAT_EVD_HANDLE recv_evd, DAT_EVD_HANDLE request_evd,
			  DAT_EVD_HANDLE connect_evd, const DAT_EP_ATTR *attr,
			  DAT_EP_HANDLE *ep)
{
	return ep_create(ia, pz, recv_evd, request_evd, connect_evd,
			 DAT_HANDLE_NULL, attr, ep);
}

DAT_RETURN dapl_ep_create_with_srq(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
				   DAT_EVD_HANDLE recv_evd,
				   DAT_EVD_HANDLE request_evd,
				   DAT_EVD_HANDLE connect_evd,
				   DAT_SRQ_HANDLE srq, const DAT_EP_ATTR *attr,
				   DAT_EP_HANDLE *ep)
{
	if (srq == DAT_HANDLE_NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ);
	return ep_create(ia, pz, recv_evd, request_evd, connect_evd, srq,
			 attr, ep);
}

struct dapl_ep *dapl_ep_create_for_psp(struct dapl_ia *ia)
{
	struct dapl_ep *ep = ep_alloc(ia);

	if (!ep)
		return NULL;
	ep->param.ep_state = DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING;
	ep->provider_created = true;
	ep->next = ia->eps;
	ia->eps = ep;
	return ep;
}

/* A CQ for EPs that have no EVD for one direction: the transport needs
 * one, and nothing is ever posted that would complete on it. */
static struct dapl_tcq *spare_cq(struct dapl_ia *ia)
{
	if (!ia->spare_cq && ia->ops->cq_create(ia->dev, 1, &ia->spare_cq))
		ia->spare_cq = NULL;
	return ia->spare_cq;
}

static void drop_slots(struct dapl_ep *ep, bool ep_gone)
{
	dapl_dto_slots_put(ep->req_slots, ep_gone);
	dapl_dto_slots_put(ep->recv_slots, ep_gone);
	ep->req_slots = ep->recv_slots = NULL;
}

DAT_RETURN dapl_ep_ensure_tep(struct dapl_ep *ep)
{
	struct dapl_ia *ia = ep->ia;
	const DAT_EP_ATTR *a = &ep->param.ep_attr;
	struct dapl_tep_attr ta;
	struct dapl_tcq *scq, *rcq;
	int err;

	if (ep->tep)
		return DAT_SUCCESS;
	if (!ep->pz)
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_PZ);
	/* an EVD of another IA gives a CQ on this IA's device */
	scq = ep->request_evd ? dapl_evd_cq_for(ep->request_evd, ia) :
				spare_cq(ia);
	rcq = ep->recv_evd ? dapl_evd_cq_for(ep->recv_evd, ia) :
			     spare_cq(ia);
	if (!scq || !rcq)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEVD);
	memset(&ta, 0, sizeof(ta));
	ta.max_send_wr = (uint32_t)a->max_request_dtos;
	ta.max_recv_wr = (uint32_t)a->max_recv_dtos;
	ta.max_send_sge = (uint32_t)(a->max_request_iov ? a->max_request_iov : 1);
	ta.max_recv_sge = (uint32_t)(a->max_recv_iov ? a->max_recv_iov : 1);
	ta.owner = (uint64_t)(uintptr_t)ep;
	if (ep->srq)
		ta.max_recv_wr = 0;
	ep->req_slots = dapl_dto_slots_new(ep, ta.max_send_wr);
	if (!ep->srq)
		ep->recv_slots = dapl_dto_slots_new(ep, ta.max_recv_wr);
	if (!ep->req_slots || (!ep->srq && !ep->recv_slots)) {
		drop_slots(ep, false);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	}
	err = ia->ops->ep_create(ep->pz->tpd, scq, rcq,
				 ep->srq ? ep->srq->tsrq : NULL, &ta, &ep->tep);
	if (err) {
		ep->tep = NULL;
		drop_slots(ep, false);
		return DAT_ERROR(dapl_errno_to_dat(err), DAT_RESOURCE_TEP);
	}
	return DAT_SUCCESS;
}

/* The transport endpoint goes; its flushed requests are still in the CQs
 * and deliver events (for a freed EP, ep_gone: they are dropped). */
static void drop_tep(struct dapl_ep *ep, bool ep_gone)
{
	if (ep->tep) {
		ep->ia->ops->ep_destroy(ep->tep);
		ep->tep = NULL;
	}
	drop_slots(ep, ep_gone);
	ep->deadline_ns = 0;
}

void dapl_ep_drop_tep(struct dapl_ep *ep)
{
	drop_tep(ep, false);
}

/* Unlinks and frees ep whatever its state; the peer of a live connection
 * sees it end.  ia->lock held. */
void dapl_ep_destroy(struct dapl_ep *ep)
{
	struct dapl_ia *ia = ep->ia;
	struct dapl_ep **pp;

	if (ep->param.ep_state == DAT_EP_STATE_CONNECTED && ep->tep)
		ia->ops->disconnect(ep->tep);
	drop_tep(ep, true);
	if (ep->cr) {
		ep->cr->ep = NULL;
		ep->cr->param.local_ep_handle = DAT_HANDLE_NULL;
	}
	if (ep->rsp)
		ep->rsp->ep = NULL;
	link_users(ep, -1);
	for (pp = &ia->eps; *pp; pp = &(*pp)->next)
		if (*pp == ep) {
			*pp = ep->next;
			break;
		}
	dapl_handle_free(ep);
}

DAT_RETURN dapl_ep_free(DAT_EP_HANDLE h)
{
	struct dapl_ep *ep = ep_get(h);
	struct dapl_ia *ia;

	if (!ep)
		return BAD_EP;
	ia = ep->ia;
	pthread_mutex_lock(&ia->lock);
	if (!ep_get(h)) {
		pthread_mutex_unlock(&ia->lock);
		return BAD_EP;
	}
	/* DAT 1.2: an EP that a service point or a pending request holds is
	 * freed through them (dat_rsp_free, dat_cr_reject), not directly. */
	switch (ep->param.ep_state) {
	case DAT_EP_STATE_RESERVED:
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING: {
		DAT_RETURN rc = dapl_ep_state_error(ep->param.ep_state);

		pthread_mutex_unlock(&ia->lock);
		return rc;
	}
	default:
		break;
	}
	dapl_ep_destroy(ep);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_ep_query(DAT_EP_HANDLE h, DAT_EP_PARAM_MASK mask,
			 DAT_EP_PARAM *param)
{
	struct dapl_ep *ep = ep_get(h);

	(void)mask;
	if (!ep)
		return BAD_EP;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&ep->ia->lock);
	*param = ep->param;
	/* While connected the read limits are the negotiated ones. */
	if (ep->param.ep_state == DAT_EP_STATE_CONNECTED ||
	    ep->param.ep_state == DAT_EP_STATE_DISCONNECT_PENDING) {
		param->ep_attr.max_rdma_read_in = ep->negotiated.ird;
		param->ep_attr.max_rdma_read_out = ep->negotiated.ord;
	}
#if DAT_GEN == 2
	/* what this connection can do of the IB extensions (negotiated
	 * with the peer where the transport negotiates them) */
	if (ep->param.ep_state == DAT_EP_STATE_CONNECTED &&
	    dapl_ext_offered(ep->ia)) {
		dapl_ext_attrs(dapl_ext_of_ep(ep), ep->ext_attr);
		param->ep_attr.ep_provider_specific_count = DAPL_EXT_NATTR;
		param->ep_attr.ep_provider_specific = ep->ext_attr;
	}
#endif
	pthread_mutex_unlock(&ep->ia->lock);
	return DAT_SUCCESS;
}

static bool state_allows_modify(DAT_EP_STATE s)
{
	return s == DAT_EP_STATE_UNCONNECTED || s == DAT_EP_STATE_RESERVED ||
	       s == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING ||
	       s == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING;
}

#define EP_MODIFIABLE (DAT_EP_FIELD_PZ_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE | \
		       DAT_EP_FIELD_REQUEST_EVD_HANDLE | \
		       DAT_EP_FIELD_CONNECT_EVD_HANDLE | DAT_EP_FIELD_EP_ATTR_ALL)

DAT_RETURN dapl_ep_modify(DAT_EP_HANDLE h, DAT_EP_PARAM_MASK mask,
			  const DAT_EP_PARAM *param)
{
	struct dapl_ep *ep = ep_get(h);
	struct dapl_evd *recv, *request, *connect;
	struct dapl_pz *pz;
	struct dapl_ia *ia;
	struct ia_locks locks;
	DAT_EP_ATTR attr;
	DAT_RETURN rc = DAT_SUCCESS;

	if (!ep)
		return BAD_EP;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (mask & ~(DAT_EP_PARAM_MASK)EP_MODIFIABLE)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ia = ep->ia;
	lock_for_evds(&locks, ia,
		      (mask & DAT_EP_FIELD_RECV_EVD_HANDLE) ?
		      param->recv_evd_handle : DAT_HANDLE_NULL,
		      (mask & DAT_EP_FIELD_REQUEST_EVD_HANDLE) ?
		      param->request_evd_handle : DAT_HANDLE_NULL,
		      (mask & DAT_EP_FIELD_CONNECT_EVD_HANDLE) ?
		      param->connect_evd_handle : DAT_HANDLE_NULL);
	if (!ep_get(h)) {
		rc = BAD_EP;
		goto out;
	}
	if (!state_allows_modify(ep->param.ep_state)) {
		rc = dapl_ep_state_error(ep->param.ep_state);
		goto out;
	}
	/* The transport endpoint was made with the old queues and limits. */
	if (ep->tep) {
		rc = DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
		goto out;
	}
	pz = ep->pz;
	recv = ep->recv_evd;
	request = ep->request_evd;
	connect = ep->connect_evd;
	if (mask & DAT_EP_FIELD_PZ_HANDLE) {
		pz = NULL;
		if (param->pz_handle != DAT_HANDLE_NULL) {
			pz = (struct dapl_pz *)dapl_handle_get(param->pz_handle,
							       DAT_HANDLE_TYPE_PZ);
			if (!pz || pz->ia != ia) {
				rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
				goto out;
			}
		}
	}
	if (mask & DAT_EP_FIELD_RECV_EVD_HANDLE)
		rc = evd_for_role(&locks, ia, param->recv_evd_handle,
				  DAT_EVD_DTO_FLAG,
				  DAT_INVALID_HANDLE_EVD_RECV, &recv);
	if (rc == DAT_SUCCESS && (mask & DAT_EP_FIELD_REQUEST_EVD_HANDLE))
		rc = evd_for_role(&locks, ia, param->request_evd_handle,
				  DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
				  DAT_INVALID_HANDLE_EVD_REQUEST, &request);
	if (rc == DAT_SUCCESS && (mask & DAT_EP_FIELD_CONNECT_EVD_HANDLE))
		rc = evd_for_role(&locks, ia, param->connect_evd_handle,
				  DAT_EVD_CONNECTION_FLAG,
				  DAT_INVALID_HANDLE_EVD_CONN, &connect);
	if (rc != DAT_SUCCESS)
		goto out;
	attr = ep->param.ep_attr;
	if (mask & DAT_EP_FIELD_EP_ATTR_ALL) {
		const DAT_EP_ATTR *n = &param->ep_attr;

		if (mask & DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE) attr.service_type = n->service_type;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE) attr.max_message_size = n->max_message_size;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE) attr.max_rdma_size = n->max_rdma_size;
		if (mask & DAT_EP_FIELD_EP_ATTR_QOS) attr.qos = n->qos;
		if (mask & DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS) attr.recv_completion_flags = n->recv_completion_flags;
		if (mask & DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS) attr.request_completion_flags = n->request_completion_flags;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS) attr.max_recv_dtos = n->max_recv_dtos;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS) attr.max_request_dtos = n->max_request_dtos;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV) attr.max_recv_iov = n->max_recv_iov;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV) attr.max_request_iov = n->max_request_iov;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN) attr.max_rdma_read_in = n->max_rdma_read_in;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT) attr.max_rdma_read_out = n->max_rdma_read_out;
		if (mask & DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW) attr.srq_soft_hw = n->srq_soft_hw;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV) attr.max_rdma_read_iov = n->max_rdma_read_iov;
		if (mask & DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV) attr.max_rdma_write_iov = n->max_rdma_write_iov;
		if (!attr_ok(ia, &attr)) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
			goto out;
		}
	}
	if (ep->srq && pz != ep->srq->pz) {
		/* an SRQ EP stays in its SRQ's PZ */
		rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
		goto out;
	}
	link_users(ep, -1);
	ep->pz = pz;
	ep->recv_evd = recv;
	ep->request_evd = request;
	ep->connect_evd = connect;
	ep->param.ep_attr = attr;
	clamp_read_iov(ia, &ep->param.ep_attr);
	ep_sync_param(ep);
	link_users(ep, +1);
out:
	unlock_for_evds(&locks);
	return rc;
}

/* Checks shared by connect and dup_connect; arg numbers differ. */
static DAT_RETURN check_connect_args(struct dapl_ep *ep, DAT_TIMEOUT timeout,
				     DAT_COUNT size, const void *pdata,
				     DAT_QOS qos, int timeout_arg)
{
	if (timeout == 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + timeout_arg - 1);
	if (size < 0 || size > dapl_ia_max_pdata(ep->ia)) {
		dapl_log("dat_ep_connect: %d bytes of private data; this provider carries at most %d",
			 (int)size, (int)dapl_ia_max_pdata(ep->ia));
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + timeout_arg);
	}
	if (size > 0 && !pdata)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + timeout_arg + 1);
	if (qos != DAT_QOS_BEST_EFFORT)
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	return DAT_SUCCESS;
}

/* Whether ep has what a connection needs.  ia->lock held. */
static DAT_RETURN ep_ready(struct dapl_ep *ep)
{
	if (ep->param.ep_state != DAT_EP_STATE_UNCONNECTED)
		return dapl_ep_state_error(ep->param.ep_state);
	if (!ep->pz || !ep->connect_evd)
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_ep_connect(DAT_EP_HANDLE h, DAT_IA_ADDRESS_PTR addr,
			   DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
			   DAT_COUNT size, const DAT_PVOID pdata, DAT_QOS qos,
			   DAT_CONNECT_FLAGS flags)
{
	struct dapl_ep *ep = ep_get(h);
	DAT_RETURN rc;

	if (!ep)
		return BAD_EP;
	if (!addr || (addr->sa_family != AF_INET && addr->sa_family != AF_INET6))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (!dapl_qual_ok(qual))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	rc = check_connect_args(ep, timeout, size, pdata, qos, 4);
	if (rc != DAT_SUCCESS)
		return rc;
	if (flags != DAT_CONNECT_DEFAULT_FLAG)
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	pthread_mutex_lock(&ep->ia->lock);
	if (!ep_get(h))
		rc = BAD_EP;
	else
		rc = ep_ready(ep);
	if (rc == DAT_SUCCESS)
		rc = dapl_cm_connect(ep, (const struct sockaddr *)addr, qual,
				     timeout, size, pdata);
	pthread_mutex_unlock(&ep->ia->lock);
	return rc;
}

DAT_RETURN dapl_ep_dup_connect(DAT_EP_HANDLE h, DAT_EP_HANDLE dup_h,
			       DAT_TIMEOUT timeout, DAT_COUNT size,
			       const DAT_PVOID pdata, DAT_QOS qos)
{
	struct dapl_ep *ep = ep_get(h), *dup = ep_get(dup_h);
	struct sockaddr_storage addr;
	DAT_CONN_QUAL qual;
	DAT_RETURN rc;

	if (!ep)
		return BAD_EP;
	if (!dup)
		return BAD_EP;
	rc = check_connect_args(ep, timeout, size, pdata, qos, 3);
	if (rc != DAT_SUCCESS)
		return rc;
	pthread_mutex_lock(&ep->ia->lock);
	if (dup->param.ep_state != DAT_EP_STATE_CONNECTED) {
		rc = dapl_ep_state_error(dup->param.ep_state);
	} else if (!dup->connected_actively) {
		/* The far end of a passively accepted connection is the peer's
		 * source port, where nothing listens: connecting there could
		 * only time out. */
		dapl_log("dat_ep_dup_connect: the duplicated EP was connected passively; its peer has no listener to connect to");
		rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	} else {
		addr = dup->remote_addr;
		qual = dup->param.remote_port_qual;
		rc = ep_ready(ep);
		if (rc == DAT_SUCCESS)
			rc = dapl_cm_connect(ep, (const struct sockaddr *)&addr,
					     qual, timeout, size, pdata);
	}
	pthread_mutex_unlock(&ep->ia->lock);
	return rc;
}

DAT_RETURN dapl_ep_disconnect(DAT_EP_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	struct dapl_ep *ep = ep_get(h);
	DAT_RETURN rc;

	if (!ep)
		return BAD_EP;
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	pthread_mutex_lock(&ep->ia->lock);
	rc = ep_get(h) ? dapl_cm_disconnect(ep, flags) : BAD_EP;
	pthread_mutex_unlock(&ep->ia->lock);
	return rc;
}

DAT_RETURN dapl_ep_get_status(DAT_EP_HANDLE h, DAT_EP_STATE *state,
			      DAT_BOOLEAN *recv_idle, DAT_BOOLEAN *request_idle)
{
	struct dapl_ep *ep = ep_get(h);

	if (!ep)
		return BAD_EP;
	pthread_mutex_lock(&ep->ia->lock);
	if (state)
		*state = ep->param.ep_state;
	if (recv_idle)
		*recv_idle = dapl_dto_idle(ep->recv_slots) ? DAT_TRUE : DAT_FALSE;
	if (request_idle)
		*request_idle = dapl_dto_idle(ep->req_slots) ? DAT_TRUE : DAT_FALSE;
	pthread_mutex_unlock(&ep->ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_ep_reset(DAT_EP_HANDLE h)
{
	struct dapl_ep *ep = ep_get(h);
	DAT_RETURN rc = DAT_SUCCESS;

	if (!ep)
		return BAD_EP;
	pthread_mutex_lock(&ep->ia->lock);
	switch (ep->param.ep_state) {
	case DAT_EP_STATE_UNCONNECTED:
		break;
	case DAT_EP_STATE_DISCONNECTED:
		/* A new transport endpoint for the next connection; what was
		 * still posted is flushed. */
		dapl_ep_drop_tep(ep);
		ep->param.ep_state = DAT_EP_STATE_UNCONNECTED;
		ep->connected_actively = false;
		ep->param.remote_port_qual = 0;
		memset(&ep->remote_addr, 0, sizeof(ep->remote_addr));
		ep->pdata_len = 0;
		break;
	default:
		rc = dapl_ep_state_error(ep->param.ep_state);
	}
	pthread_mutex_unlock(&ep->ia->lock);
	return rc;
}

DAT_RETURN dapl_ep_recv_query(DAT_EP_HANDLE h, DAT_COUNT *nbufs,
			      DAT_COUNT *span)
{
	struct dapl_ep *ep = ep_get(h);

	if (!ep)
		return BAD_EP;
	pthread_mutex_lock(&ep->ia->lock);
	dapl_dto_recv_query(ep->recv_slots, nbufs, span);
	pthread_mutex_unlock(&ep->ia->lock);
	return DAT_SUCCESS;
}

/* EP high watermarks belong with shared receive queues, which libdat
 * does not offer yet; DAT 1.2 allows this answer. */
DAT_RETURN dapl_ep_set_watermark(DAT_EP_HANDLE h, DAT_COUNT soft,
				 DAT_COUNT hard)
{
	(void)soft; (void)hard;
	if (!ep_get(h))
		return BAD_EP;
	return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
}

#if DAT_GEN == 2
DAT_RETURN dapl_ep_common_connect(DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
				  DAT_TIMEOUT timeout, DAT_COUNT pdata_size,
				  const DAT_PVOID pdata)
{
	(void)ep; (void)addr; (void)timeout; (void)pdata_size; (void)pdata;
	return dapl_not_implemented("dat_ep_common_connect",
				    "no common (CSP) connection model yet; use dat_ep_connect");
}
#endif
