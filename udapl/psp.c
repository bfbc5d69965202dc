/* Public service points: listeners that turn each connection request into
 * a CR on their EVD. */
#include "config.h"

#include <errno.h>

#include "core.h"
#include "entry.h"

#define BAD_PSP DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PSP)

/* The CR EVD behind h, or NULL. */
struct dapl_evd *dapl_sp_evd(struct dapl_ia *ia, DAT_EVD_HANDLE h)
{
	struct dapl_evd *evd = (struct dapl_evd *)dapl_handle_get(h, DAT_HANDLE_TYPE_EVD);

	if (!evd || evd->ia != ia || !(evd->flags & DAT_EVD_CR_FLAG))
		return NULL;
	return evd;
}

/* Whether qual may name a service point or a connect's target: nonzero,
 * and 16 bits unless wide qualifiers are allowed (libdat(7)). */
bool dapl_qual_ok(DAT_CONN_QUAL qual)
{
	if (qual == 0)
		return false;
	return qual <= 0xFFFF || dapl_compat_allow(DAPL_COMPAT_WIDE_QUAL);
}

/* Starts listening on *qual (0 = any) and links a new service point.
 * The service point keeps the consumer's qualifier; the transport listens
 * on its port (dapl_qual_port).  ia->lock held. */
DAT_RETURN dapl_sp_listen(struct dapl_ia *ia, DAT_HANDLE_TYPE type,
			  DAT_CONN_QUAL *qual, struct dapl_evd *evd,
			  struct dapl_sp **out)
{
	uint16_t port = dapl_qual_port(*qual);
	struct dapl_sp *sp;
	int err;

	sp = dapl_handle_alloc(&ia->prov->table, type, sizeof(*sp), ia);
	if (!sp)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	err = ia->ops->listen(ia->dev, &port, &sp->listener);
	if (err) {
		dapl_handle_free(sp);
		if (err == -EADDRINUSE)
			return DAT_ERROR(DAT_CONN_QUAL_IN_USE, 0);
		return dapl_errno_to_dat(err);
	}
	sp->ia = ia;
	/* "any" gives a port, which is its own qualifier */
	sp->conn_qual = *qual ? *qual : port;
	sp->evd = evd;
	evd->users++;
	sp->next = ia->sps;
	ia->sps = sp;
	*qual = sp->conn_qual;
	*out = sp;
	return DAT_SUCCESS;
}

/* Stops listening and frees sp; its pending CRs stay valid.
 * ia->lock held. */
void dapl_sp_destroy(struct dapl_sp *sp)
{
	struct dapl_ia *ia = sp->ia;
	struct dapl_sp **pp;
	struct dapl_cr *cr;

	if (sp->listener)
		ia->ops->unlisten(sp->listener);
	for (cr = ia->crs; cr; cr = cr->next)
		if (cr->sp == sp)
			cr->sp = NULL;
	if (sp->ep) {
		if (sp->ep->param.ep_state == DAT_EP_STATE_RESERVED)
			sp->ep->param.ep_state = DAT_EP_STATE_UNCONNECTED;
		sp->ep->rsp = NULL;
	}
	if (sp->evd)
		sp->evd->users--;
	for (pp = &ia->sps; *pp; pp = &(*pp)->next)
		if (*pp == sp) {
			*pp = sp->next;
			break;
		}
	dapl_handle_free(sp);
}

static DAT_RETURN psp_create(DAT_IA_HANDLE ia_h, DAT_CONN_QUAL *qual,
			     DAT_EVD_HANDLE evd_h, DAT_PSP_FLAGS flags,
			     DAT_PSP_HANDLE *out)
{
	struct dapl_ia *ia = dapl_ia_get(ia_h);
	struct dapl_evd *evd;
	struct dapl_sp *sp;
	DAT_RETURN rc;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (flags != DAT_PSP_CONSUMER_FLAG && flags != DAT_PSP_PROVIDER_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	pthread_mutex_lock(&ia->lock);
	evd = dapl_sp_evd(ia, evd_h);
	if (!evd) {
		rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	} else {
		rc = dapl_sp_listen(ia, DAT_HANDLE_TYPE_PSP, qual, evd, &sp);
		if (rc == DAT_SUCCESS) {
			sp->psp_flags = flags;
			*out = sp;
		}
	}
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

DAT_RETURN dapl_psp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
			   DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
			   DAT_PSP_HANDLE *psp)
{
	/* Connection qualifiers are transport ports; wider ones are
	 * folded onto the port space unless DAT_STRICT is set. */
	if (!dapl_qual_ok(qual))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	return psp_create(ia, &qual, evd, flags, psp);
}

DAT_RETURN dapl_psp_create_any(DAT_IA_HANDLE ia, DAT_CONN_QUAL *qual,
			       DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
			       DAT_PSP_HANDLE *psp)
{
	DAT_CONN_QUAL any = 0;
	DAT_RETURN rc;

	if (!qual)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	rc = psp_create(ia, &any, evd, flags, psp);
	if (rc == DAT_SUCCESS)
		*qual = any;
	return rc;
}

DAT_RETURN dapl_psp_query(DAT_PSP_HANDLE h, DAT_PSP_PARAM_MASK mask,
			  DAT_PSP_PARAM *param)
{
	struct dapl_sp *sp = (struct dapl_sp *)dapl_handle_get(h, DAT_HANDLE_TYPE_PSP);

	(void)mask;
	if (!sp)
		return BAD_PSP;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	param->ia_handle = sp->ia;
	param->conn_qual = sp->conn_qual;
	param->evd_handle = sp->evd;
	param->psp_flags = sp->psp_flags;
	return DAT_SUCCESS;
}

DAT_RETURN dapl_psp_free(DAT_PSP_HANDLE h)
{
	struct dapl_sp *sp = (struct dapl_sp *)dapl_handle_get(h, DAT_HANDLE_TYPE_PSP);
	struct dapl_ia *ia;

	if (!sp)
		return BAD_PSP;
	ia = sp->ia;
	pthread_mutex_lock(&ia->lock);
	if (dapl_handle_get(h, DAT_HANDLE_TYPE_PSP))
		dapl_sp_destroy(sp);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}
