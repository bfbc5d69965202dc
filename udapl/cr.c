/* Connection requests: what a listener hands the consumer, until it is
 * accepted, rejected or handed off. */
#include "config.h"

#include <string.h>

#include "core.h"
#include "entry.h"

#define BAD_CR DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR)

static struct dapl_cr *cr_get(DAT_CR_HANDLE h)
{
	return (struct dapl_cr *)dapl_handle_get(h, DAT_HANDLE_TYPE_CR);
}

/* Unlinks and frees cr; a request still unanswered is refused, and a
 * provider-created EP nobody accepted with goes too.  ia->lock held. */
void dapl_cr_destroy(struct dapl_cr *cr)
{
	struct dapl_ia *ia = cr->ia;
	struct dapl_cr **pp;

	if (cr->conn) {
		uint8_t buf[DAPL_WIRE_HDR_LEN + 1];
		size_t len = dapl_wire_encode_reject(buf, sizeof(buf),
						     DAPL_WIRE_REJECT_NO_RESOURCES);

		ia->ops->reject(cr->conn, buf, len);
		cr->conn = NULL;
	}
	if (cr->ep) {
		struct dapl_ep *ep = cr->ep;

		ep->cr = NULL;
		cr->ep = NULL;
		if (ep->provider_created &&
		    ep->param.ep_state == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING)
			dapl_ep_destroy(ep);
		else if (ep->param.ep_state == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING)
			ep->param.ep_state = DAT_EP_STATE_UNCONNECTED;
	}
	for (pp = &ia->crs; *pp; pp = &(*pp)->next)
		if (*pp == cr) {
			*pp = cr->next;
			break;
		}
	dapl_handle_free(cr);
}

DAT_RETURN dapl_cr_query(DAT_CR_HANDLE h, DAT_CR_PARAM_MASK mask,
			 DAT_CR_PARAM *param)
{
	struct dapl_cr *cr = cr_get(h);

	(void)mask;
	if (!cr)
		return BAD_CR;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&cr->ia->lock);
	*param = cr->param;
	pthread_mutex_unlock(&cr->ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cr_accept(DAT_CR_HANDLE h, DAT_EP_HANDLE ep_h,
			  DAT_COUNT size, const DAT_PVOID pdata)
{
	struct dapl_cr *cr = cr_get(h);
	struct dapl_ep *ep;
	struct dapl_ia *ia;
	DAT_RETURN rc;

	if (!cr)
		return BAD_CR;
	ia = cr->ia;
	if (size < 0 || size > dapl_ia_max_pdata(ia)) {
		dapl_log("dat_cr_accept: %d bytes of private data; this provider carries at most %d",
			 (int)size, (int)dapl_ia_max_pdata(ia));
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	}
	if (size > 0 && !pdata)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);

	pthread_mutex_lock(&ia->lock);
	if (!cr_get(h)) {
		rc = BAD_CR;
		goto out;
	}
	if (ep_h == DAT_HANDLE_NULL) {
		ep = cr->ep;
		if (!ep) {
			rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
			goto out;
		}
	} else {
		ep = (struct dapl_ep *)dapl_handle_get(ep_h, DAT_HANDLE_TYPE_EP);
		if (!ep || ep->ia != ia) {
			rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
			goto out;
		}
	}
	if (ep != cr->ep) {
		/* An RSP's request belongs to the RSP's EP. */
		if (cr->ep && !cr->ep->provider_created) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
			goto out;
		}
		if (ep->param.ep_state != DAT_EP_STATE_UNCONNECTED) {
			rc = dapl_ep_state_error(ep->param.ep_state);
			goto out;
		}
	} else if (ep->param.ep_state != DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING &&
		   ep->param.ep_state != DAT_EP_STATE_PASSIVE_CONNECTION_PENDING) {
		rc = dapl_ep_state_error(ep->param.ep_state);
		goto out;
	}
	if (!ep->pz || !ep->connect_evd) {
		rc = DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
		goto out;
	}
	if (ep != cr->ep && cr->ep) {
		/* The consumer chose its own EP over the provider's. */
		struct dapl_ep *unused = cr->ep;

		unused->cr = NULL;
		cr->ep = NULL;
		dapl_ep_destroy(unused);
	}
	rc = dapl_cm_accept(cr, ep, size, pdata);
out:
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

#if DAT_GEN == 2
DAT_RETURN dapl_cr_reject(DAT_CR_HANDLE h, DAT_COUNT size,
			  const DAT_PVOID pdata)
#else
DAT_RETURN dapl_cr_reject(DAT_CR_HANDLE h)
#endif
{
	struct dapl_cr *cr = cr_get(h);
	struct dapl_ia *ia;
	DAT_RETURN rc;
#if DAT_GEN == 1
	const DAT_COUNT size = 0;
	const void *const pdata = NULL;
#endif

	if (!cr)
		return BAD_CR;
	/* the reject frees the CR: its IA is read first */
	ia = cr->ia;
	if (size < 0 ||
	    (size_t)size > dapl_wire_max_consumer(ia->dev_attr.max_pdata_reject)) {
		dapl_log("dat_cr_reject: %d bytes of private data; this provider carries at most %d",
			 (int)size,
			 (int)dapl_wire_max_consumer(ia->dev_attr.max_pdata_reject));
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	if (size > 0 && !pdata)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&ia->lock);
	rc = cr_get(h) ? dapl_cm_reject(cr, size, pdata) : BAD_CR;
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

DAT_RETURN dapl_cr_handoff(DAT_CR_HANDLE h, DAT_CONN_QUAL qual)
{
	struct dapl_cr *cr = cr_get(h), *moved;
	struct dapl_ia *ia;
	struct dapl_sp *sp;
	DAT_RETURN rc = DAT_SUCCESS;

	if (!cr)
		return BAD_CR;
	ia = cr->ia;
	pthread_mutex_lock(&ia->lock);
	if (!cr_get(h)) {
		rc = BAD_CR;
		goto out;
	}
	for (sp = ia->sps; sp; sp = sp->next)
		if (sp->conn_qual == qual && sp->listener && sp != cr->sp &&
		    sp->h.type == DAT_HANDLE_TYPE_PSP)
			break;
	if (!sp) {
		rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
		goto out;
	}
	/* A provider-created or RSP EP belongs to the old service point. */
	if (cr->ep) {
		rc = DAT_ERROR(DAT_INVALID_STATE, 0);
		goto out;
	}
	/* The old handle dies and a new request appears on the new PSP. */
	moved = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_CR,
				  sizeof(*moved), ia);
	if (!moved) {
		rc = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
		goto out;
	}
	memcpy((char *)moved + sizeof(moved->h), (char *)cr + sizeof(cr->h),
	       sizeof(*cr) - sizeof(cr->h));
	moved->sp = sp;
	moved->param.remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&moved->remote_addr;
	moved->param.private_data = moved->pdata;
	moved->next = ia->crs;
	ia->crs = moved;
	cr->conn = NULL;
	dapl_cr_destroy(cr);
	if (dapl_evd_post_cr(sp->evd, sp, moved) != DAT_SUCCESS)
		dapl_cr_destroy(moved);
out:
	pthread_mutex_unlock(&ia->lock);
	return rc;
}
