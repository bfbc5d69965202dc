/* Data transfer operations.  Part 2 of the core (LMRs, RMRs, DTOs, SRQs)
 * fills this file in; until then these calls check their handle and say
 * they are not there yet. */
#include "config.h"

#include "core.h"
#include "entry.h"

#define PENDING DAT_ERROR(DAT_NOT_IMPLEMENTED, 0)

bool dapl_dto_wc_to_event(struct dapl_evd *evd, const struct dapl_twc *wc,
			  DAT_EVENT *ev)
{
	(void)evd; (void)wc; (void)ev;
	return false;  /* nothing is posted yet, so nothing completes */
}

static bool ep_ok(DAT_EP_HANDLE h)
{
	return dapl_handle_get(h, DAT_HANDLE_TYPE_EP) != NULL;
}

#define EP_CHECK(h) \
	if (!ep_ok(h)) \
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP)

DAT_RETURN dapl_ep_post_send(DAT_EP_HANDLE ep, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			     DAT_COMPLETION_FLAGS flags)
{
	(void)n; (void)iov; (void)cookie; (void)flags;
	EP_CHECK(ep);
	return PENDING;
}

DAT_RETURN dapl_ep_post_recv(DAT_EP_HANDLE ep, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			     DAT_COMPLETION_FLAGS flags)
{
	(void)n; (void)iov; (void)cookie; (void)flags;
	EP_CHECK(ep);
	return PENDING;
}

DAT_RETURN dapl_ep_post_rdma_read(DAT_EP_HANDLE ep, DAT_COUNT n,
				  DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				  const DAT_RMR_TRIPLET *remote,
				  DAT_COMPLETION_FLAGS flags)
{
	(void)n; (void)iov; (void)cookie; (void)remote; (void)flags;
	EP_CHECK(ep);
	return PENDING;
}

DAT_RETURN dapl_ep_post_rdma_write(DAT_EP_HANDLE ep, DAT_COUNT n,
				   DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				   const DAT_RMR_TRIPLET *remote,
				   DAT_COMPLETION_FLAGS flags)
{
	(void)n; (void)iov; (void)cookie; (void)remote; (void)flags;
	EP_CHECK(ep);
	return PENDING;
}

DAT_RETURN dapl_lmr_create(DAT_IA_HANDLE ia, DAT_MEM_TYPE type,
			   DAT_REGION_DESCRIPTION desc, DAT_VLEN len,
			   DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv,
			   DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lmr_context,
			   DAT_RMR_CONTEXT *rmr_context, DAT_VLEN *reg_len,
			   DAT_VADDR *reg_addr)
{
	(void)type; (void)desc; (void)len; (void)pz; (void)priv; (void)lmr;
	(void)lmr_context; (void)rmr_context; (void)reg_len; (void)reg_addr;
	if (!dapl_ia_get(ia))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	return PENDING;
}

DAT_RETURN dapl_lmr_query(DAT_LMR_HANDLE lmr, DAT_LMR_PARAM_MASK mask,
			  DAT_LMR_PARAM *param)
{
	(void)lmr; (void)mask; (void)param;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
}

DAT_RETURN dapl_lmr_free(DAT_LMR_HANDLE lmr)
{
	(void)lmr;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
}

DAT_RETURN dapl_lmr_sync_rdma_read(DAT_IA_HANDLE ia, const DAT_LMR_TRIPLET *iov,
				   DAT_VLEN n)
{
	(void)iov; (void)n;
	if (!dapl_ia_get(ia))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	return PENDING;
}

DAT_RETURN dapl_lmr_sync_rdma_write(DAT_IA_HANDLE ia, const DAT_LMR_TRIPLET *iov,
				    DAT_VLEN n)
{
	(void)iov; (void)n;
	if (!dapl_ia_get(ia))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	return PENDING;
}

DAT_RETURN dapl_rmr_create(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *rmr)
{
	(void)rmr;
	if (!dapl_handle_get(pz, DAT_HANDLE_TYPE_PZ))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	return PENDING;
}

DAT_RETURN dapl_rmr_query(DAT_RMR_HANDLE rmr, DAT_RMR_PARAM_MASK mask,
			  DAT_RMR_PARAM *param)
{
	(void)rmr; (void)mask; (void)param;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
}

DAT_RETURN dapl_rmr_bind(DAT_RMR_HANDLE rmr, const DAT_LMR_TRIPLET *iov,
			 DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep,
			 DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
			 DAT_RMR_CONTEXT *rmr_context)
{
	(void)rmr; (void)iov; (void)priv; (void)ep; (void)cookie; (void)flags;
	(void)rmr_context;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
}

DAT_RETURN dapl_rmr_free(DAT_RMR_HANDLE rmr)
{
	(void)rmr;
	return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR);
}

DAT_RETURN dapl_srq_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
			   DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *srq)
{
	(void)pz; (void)attr; (void)srq;
	if (!dapl_ia_get(ia))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	return PENDING;
}

#define NO_SRQ DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ)

DAT_RETURN dapl_srq_free(DAT_SRQ_HANDLE srq)
{
	(void)srq;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_post_recv(DAT_SRQ_HANDLE srq, DAT_COUNT n,
			      DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie)
{
	(void)srq; (void)n; (void)iov; (void)cookie;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_query(DAT_SRQ_HANDLE srq, DAT_SRQ_PARAM_MASK mask,
			  DAT_SRQ_PARAM *param)
{
	(void)srq; (void)mask; (void)param;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_resize(DAT_SRQ_HANDLE srq, DAT_COUNT qlen)
{
	(void)srq; (void)qlen;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_set_lw(DAT_SRQ_HANDLE srq, DAT_COUNT lw)
{
	(void)srq; (void)lw;
	return NO_SRQ;
}
