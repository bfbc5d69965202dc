/* The provider entry points of the core that DAT_PROVIDER points at, one
 * group per file (EVD and CNO entry points are in core.h). */
#ifndef UDAPL_ENTRY_H
#define UDAPL_ENTRY_H

#include <stdarg.h>

#include "dat_gen.h"

/* provider.c: the provider library's two exported symbols */
void dat_provider_init(const DAT_PROVIDER_INFO *info, const char *ia_params);
void dat_provider_fini(const DAT_PROVIDER_INFO *info);

/* ia.c */
DAT_RETURN dapl_ia_open(const DAT_NAME_PTR name, DAT_COUNT async_qlen,
			DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia);
DAT_RETURN dapl_ia_query(DAT_IA_HANDLE ia, DAT_EVD_HANDLE *async_evd,
			 DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
			 DAT_PROVIDER_ATTR_MASK prov_mask,
			 DAT_PROVIDER_ATTR *prov_attr);
DAT_RETURN dapl_ia_close(DAT_IA_HANDLE ia, DAT_CLOSE_FLAGS flags);
DAT_RETURN dapl_set_consumer_context(DAT_HANDLE h, DAT_CONTEXT context);
DAT_RETURN dapl_get_consumer_context(DAT_HANDLE h, DAT_CONTEXT *context);
DAT_RETURN dapl_get_handle_type(DAT_HANDLE h, DAT_HANDLE_TYPE *type);

/* pz.c */
DAT_RETURN dapl_pz_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE *pz);
DAT_RETURN dapl_pz_query(DAT_PZ_HANDLE pz, DAT_PZ_PARAM_MASK mask,
			 DAT_PZ_PARAM *param);
DAT_RETURN dapl_pz_free(DAT_PZ_HANDLE pz);

/* ep.c */
DAT_RETURN dapl_ep_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
			  DAT_EVD_HANDLE recv_evd, DAT_EVD_HANDLE request_evd,
			  DAT_EVD_HANDLE connect_evd, const DAT_EP_ATTR *attr,
			  DAT_EP_HANDLE *ep);
DAT_RETURN dapl_ep_create_with_srq(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
				   DAT_EVD_HANDLE recv_evd,
				   DAT_EVD_HANDLE request_evd,
				   DAT_EVD_HANDLE connect_evd,
				   DAT_SRQ_HANDLE srq, const DAT_EP_ATTR *attr,
				   DAT_EP_HANDLE *ep);
DAT_RETURN dapl_ep_query(DAT_EP_HANDLE ep, DAT_EP_PARAM_MASK mask,
			 DAT_EP_PARAM *param);
DAT_RETURN dapl_ep_modify(DAT_EP_HANDLE ep, DAT_EP_PARAM_MASK mask,
			  const DAT_EP_PARAM *param);
DAT_RETURN dapl_ep_connect(DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
			   DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
			   DAT_COUNT pdata_size, const DAT_PVOID pdata,
			   DAT_QOS qos, DAT_CONNECT_FLAGS flags);
DAT_RETURN dapl_ep_dup_connect(DAT_EP_HANDLE ep, DAT_EP_HANDLE dup_ep,
			       DAT_TIMEOUT timeout, DAT_COUNT pdata_size,
			       const DAT_PVOID pdata, DAT_QOS qos);
DAT_RETURN dapl_ep_disconnect(DAT_EP_HANDLE ep, DAT_CLOSE_FLAGS flags);
DAT_RETURN dapl_ep_get_status(DAT_EP_HANDLE ep, DAT_EP_STATE *state,
			      DAT_BOOLEAN *recv_idle,
			      DAT_BOOLEAN *request_idle);
DAT_RETURN dapl_ep_free(DAT_EP_HANDLE ep);
DAT_RETURN dapl_ep_reset(DAT_EP_HANDLE ep);
DAT_RETURN dapl_ep_recv_query(DAT_EP_HANDLE ep, DAT_COUNT *nbufs,
			      DAT_COUNT *span);
DAT_RETURN dapl_ep_set_watermark(DAT_EP_HANDLE ep, DAT_COUNT soft,
				 DAT_COUNT hard);

/* dto.c: data transfer (part 2) */
DAT_RETURN dapl_ep_post_send(DAT_EP_HANDLE ep, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			     DAT_COMPLETION_FLAGS flags);
DAT_RETURN dapl_ep_post_recv(DAT_EP_HANDLE ep, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			     DAT_COMPLETION_FLAGS flags);
DAT_RETURN dapl_ep_post_rdma_read(DAT_EP_HANDLE ep, DAT_COUNT n,
				  DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				  const DAT_RMR_TRIPLET *remote,
				  DAT_COMPLETION_FLAGS flags);
DAT_RETURN dapl_ep_post_rdma_write(DAT_EP_HANDLE ep, DAT_COUNT n,
				   DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				   const DAT_RMR_TRIPLET *remote,
				   DAT_COMPLETION_FLAGS flags);

/* lmr.c / rmr.c / srq.c (part 2) */
DAT_RETURN dapl_lmr_create(DAT_IA_HANDLE ia, DAT_MEM_TYPE type,
			   DAT_REGION_DESCRIPTION desc, DAT_VLEN len,
			   DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv,
#if DAT_GEN == 2
			   DAT_VA_TYPE va_type,
#endif
			   DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lmr_context,
			   DAT_RMR_CONTEXT *rmr_context, DAT_VLEN *reg_len,
			   DAT_VADDR *reg_addr);
DAT_RETURN dapl_lmr_query(DAT_LMR_HANDLE lmr, DAT_LMR_PARAM_MASK mask,
			  DAT_LMR_PARAM *param);
DAT_RETURN dapl_lmr_free(DAT_LMR_HANDLE lmr);
DAT_RETURN dapl_lmr_sync_rdma_read(DAT_IA_HANDLE ia,
				   const DAT_LMR_TRIPLET *iov, DAT_VLEN n);
DAT_RETURN dapl_lmr_sync_rdma_write(DAT_IA_HANDLE ia,
				    const DAT_LMR_TRIPLET *iov, DAT_VLEN n);
DAT_RETURN dapl_rmr_create(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *rmr);
DAT_RETURN dapl_rmr_query(DAT_RMR_HANDLE rmr, DAT_RMR_PARAM_MASK mask,
			  DAT_RMR_PARAM *param);
#if DAT_GEN == 2
DAT_RETURN dapl_rmr_bind(DAT_RMR_HANDLE rmr, DAT_LMR_HANDLE lmr,
			 const DAT_LMR_TRIPLET *iov, DAT_MEM_PRIV_FLAGS priv,
			 DAT_VA_TYPE va_type, DAT_EP_HANDLE ep,
			 DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
			 DAT_RMR_CONTEXT *rmr_context);
#else
DAT_RETURN dapl_rmr_bind(DAT_RMR_HANDLE rmr, const DAT_LMR_TRIPLET *iov,
			 DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep,
			 DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
			 DAT_RMR_CONTEXT *rmr_context);
#endif
DAT_RETURN dapl_rmr_free(DAT_RMR_HANDLE rmr);
DAT_RETURN dapl_srq_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
			   DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *srq);
DAT_RETURN dapl_srq_free(DAT_SRQ_HANDLE srq);
DAT_RETURN dapl_srq_post_recv(DAT_SRQ_HANDLE srq, DAT_COUNT n,
			      DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie);
DAT_RETURN dapl_srq_query(DAT_SRQ_HANDLE srq, DAT_SRQ_PARAM_MASK mask,
			  DAT_SRQ_PARAM *param);
DAT_RETURN dapl_srq_resize(DAT_SRQ_HANDLE srq, DAT_COUNT qlen);
DAT_RETURN dapl_srq_set_lw(DAT_SRQ_HANDLE srq, DAT_COUNT lw);

/* psp.c / rsp.c */
DAT_RETURN dapl_psp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
			   DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
			   DAT_PSP_HANDLE *psp);
DAT_RETURN dapl_psp_create_any(DAT_IA_HANDLE ia, DAT_CONN_QUAL *qual,
			       DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
			       DAT_PSP_HANDLE *psp);
DAT_RETURN dapl_psp_query(DAT_PSP_HANDLE psp, DAT_PSP_PARAM_MASK mask,
			  DAT_PSP_PARAM *param);
DAT_RETURN dapl_psp_free(DAT_PSP_HANDLE psp);
DAT_RETURN dapl_rsp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
			   DAT_EP_HANDLE ep, DAT_EVD_HANDLE evd,
			   DAT_RSP_HANDLE *rsp);
DAT_RETURN dapl_rsp_query(DAT_RSP_HANDLE rsp, DAT_RSP_PARAM_MASK mask,
			  DAT_RSP_PARAM *param);
DAT_RETURN dapl_rsp_free(DAT_RSP_HANDLE rsp);

/* cr.c */
DAT_RETURN dapl_cr_query(DAT_CR_HANDLE cr, DAT_CR_PARAM_MASK mask,
			 DAT_CR_PARAM *param);
DAT_RETURN dapl_cr_accept(DAT_CR_HANDLE cr, DAT_EP_HANDLE ep,
			  DAT_COUNT pdata_size, const DAT_PVOID pdata);
#if DAT_GEN == 2
DAT_RETURN dapl_cr_reject(DAT_CR_HANDLE cr, DAT_COUNT pdata_size,
			  const DAT_PVOID pdata);
#else
DAT_RETURN dapl_cr_reject(DAT_CR_HANDLE cr);
#endif
DAT_RETURN dapl_cr_handoff(DAT_CR_HANDLE cr, DAT_CONN_QUAL qual);

#if DAT_GEN == 2
/* The DAT 2.0 slots 70-80, each in its object's file; those not offered
 * yet return DAT_NOT_IMPLEMENTED (dapl_not_implemented). */
/* csp.c */
DAT_RETURN dapl_csp_create(DAT_IA_HANDLE ia, DAT_COMM *comm,
			   DAT_IA_ADDRESS_PTR addr, DAT_EVD_HANDLE evd,
			   DAT_CSP_HANDLE *csp);
DAT_RETURN dapl_csp_query(DAT_CSP_HANDLE csp, DAT_CSP_PARAM_MASK mask,
			  DAT_CSP_PARAM *param);
DAT_RETURN dapl_csp_free(DAT_CSP_HANDLE csp);
/* ep.c */
DAT_RETURN dapl_ep_common_connect(DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
				  DAT_TIMEOUT timeout, DAT_COUNT pdata_size,
				  const DAT_PVOID pdata);
/* rmr.c */
DAT_RETURN dapl_rmr_create_for_ep(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *rmr);
/* dto.c */
DAT_RETURN dapl_ep_post_send_with_invalidate(DAT_EP_HANDLE ep, DAT_COUNT n,
					     DAT_LMR_TRIPLET *iov,
					     DAT_DTO_COOKIE cookie,
					     DAT_COMPLETION_FLAGS flags,
					     DAT_BOOLEAN invalidate,
					     DAT_RMR_CONTEXT rmr_context);
DAT_RETURN dapl_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE ep,
					 const DAT_RMR_TRIPLET *local,
					 DAT_DTO_COOKIE cookie,
					 const DAT_RMR_TRIPLET *remote,
					 DAT_COMPLETION_FLAGS flags);
/* cno.c: in core.h */
/* ia.c */
DAT_RETURN dapl_ia_ha_related(DAT_IA_HANDLE ia, const DAT_NAME_PTR name,
			      DAT_BOOLEAN *related);
/* provider.c */
DAT_RETURN dapl_handle_extendedop(DAT_HANDLE h, DAT_EXTENDED_OP op,
				  va_list args);
#endif

#endif
