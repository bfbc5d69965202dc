/* Reserved service points: one connection request, for one EP. */
#include "config.h"

#include "core.h"
#include "entry.h"

#define BAD_RSP DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RSP)

DAT_RETURN dapl_rsp_create(DAT_IA_HANDLE ia_h, DAT_CONN_QUAL qual,
			   DAT_EP_HANDLE ep_h, DAT_EVD_HANDLE evd_h,
			   DAT_RSP_HANDLE *out)
{
	struct dapl_ia *ia = dapl_ia_get(ia_h);
	struct dapl_evd *evd;
	struct dapl_ep *ep;
	struct dapl_sp *sp;
	DAT_RETURN rc;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (!dapl_qual_ok(qual))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	pthread_mutex_lock(&ia->lock);
	ep = (struct dapl_ep *)dapl_handle_get(ep_h, DAT_HANDLE_TYPE_EP);
	evd = dapl_sp_evd(ia, evd_h);
	if (!ep || ep->ia != ia)
		rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
	else if (!evd)
		rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_CR);
	else if (ep->param.ep_state != DAT_EP_STATE_UNCONNECTED)
		rc = dapl_ep_state_error(ep->param.ep_state);
	else
		rc = dapl_sp_listen(ia, DAT_HANDLE_TYPE_RSP, &qual, evd, &sp);
	if (rc == DAT_SUCCESS) {
		sp->ep = ep;
		ep->rsp = sp;
		ep->param.ep_state = DAT_EP_STATE_RESERVED;
		*out = sp;
	}
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

DAT_RETURN dapl_rsp_query(DAT_RSP_HANDLE h, DAT_RSP_PARAM_MASK mask,
			  DAT_RSP_PARAM *param)
{
	struct dapl_sp *sp = (struct dapl_sp *)dapl_handle_get(h, DAT_HANDLE_TYPE_RSP);

	(void)mask;
	if (!sp)
		return BAD_RSP;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&sp->ia->lock);
	param->ia_handle = sp->ia;
	param->conn_qual = sp->conn_qual;
	param->evd_handle = sp->evd;
	param->ep_handle = sp->ep;
	pthread_mutex_unlock(&sp->ia->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_rsp_free(DAT_RSP_HANDLE h)
{
	struct dapl_sp *sp = (struct dapl_sp *)dapl_handle_get(h, DAT_HANDLE_TYPE_RSP);
	struct dapl_ia *ia;

	if (!sp)
		return BAD_RSP;
	ia = sp->ia;
	pthread_mutex_lock(&ia->lock);
	if (dapl_handle_get(h, DAT_HANDLE_TYPE_RSP))
		dapl_sp_destroy(sp);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}
