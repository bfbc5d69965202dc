/* The dispatching DAT calls.  Each one checks its handle, then jumps through
 * the table of the provider that owns it: an object handle points to an
 * object whose first word is its DAT_PROVIDER *; an IA handle is one of our
 * small integers, translated to the provider's IA.  IAs in query results and
 * async events are translated back, so a consumer never sees a provider
 * pointer for an IA.  The registry calls themselves live in registry.c. */
#include "config.h"

#include <stdarg.h>
#include <stdint.h>

#include "dat_gen.h"

#include "object_memory.h"
#include "registry.h"

#define BAD_HANDLE(subtype) DAT_ERROR(DAT_INVALID_HANDLE, subtype)

/* A handle's first word.  Only called inside announced object memory (or
 * in the fallback): readable, but a forged value there may point into a
 * freed object whose body AddressSanitizer poisons, and reading it is the
 * point of the check, not a bug. */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address))
#endif
static inline DAT_PROVIDER *first_word(const void *h)
{
	return *(DAT_PROVIDER *const *)h;
}

/* The provider owning an object handle, or NULL when h is NULL, an IA
 * handle value, a value outside every provider's announced object memory
 * (refused unread: see object_memory.h for the fallback kept for
 * providers that announce none), or an object of no registered provider.
 * Reading the first word of a freed object is safe by contract: providers
 * keep it readable and answer DAT_INVALID_HANDLE themselves
 * (dat_provider_init(3)). */
static inline DAT_PROVIDER *owner_of(const void *h)
{
	DAT_PROVIDER *p;

	if (!dat_handle_readable(h) || !dat_object_memory_may_hold(h))
		return NULL;
	p = first_word(h);
	return dat_provider_is_known(p) ? p : NULL;
}

/* Like owner_of, for calls that accept any handle including an IA's. */
static DAT_PROVIDER *any_owner(DAT_HANDLE *h)
{
	DAT_IA_HANDLE provider_ia;
	DAT_PROVIDER *p;

	if (dat_is_ia_handle_value(*h)) {
		if (!dat_ia_resolve(*h, &provider_ia, &p))
			return NULL;
		*h = provider_ia;
		return p;
	}
	return owner_of(*h);
}

/* Async events name the IA they are about. */
static void event_to_consumer(DAT_RETURN rc, DAT_EVENT *event)
{
	if (rc != DAT_SUCCESS || !event)
		return;
	switch (event->event_number) {
	case DAT_ASYNC_ERROR_EVD_OVERFLOW:
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC:
	case DAT_ASYNC_ERROR_EP_BROKEN:
	case DAT_ASYNC_ERROR_TIMED_OUT:
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR:
		event->event_data.asynch_error_event_data.dat_handle =
			dat_ia_to_consumer(
				event->event_data.asynch_error_event_data.dat_handle);
		break;
	default:
		break;
	}
}

/* ------------------------------------------------------------------------
 * IA and generic handles */

DAT_RETURN dat_ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE *async_evd,
			DAT_IA_ATTR_MASK ia_attr_mask, DAT_IA_ATTR *ia_attr,
			DAT_PROVIDER_ATTR_MASK provider_attr_mask,
			DAT_PROVIDER_ATTR *provider_attr)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->ia_query_func(ia, async_evd, ia_attr_mask, ia_attr,
				provider_attr_mask, provider_attr);
}

#if DAT_GEN == 2
/* OpenFabrics dapl 2.x's providers (Debian's libdaplofa.so.2, libdaploscm,
 * libdaploucm) import this from libdat2.so.2 to turn a consumer's IA handle
 * into their own; it is in no DAT header.  Exported so that those
 * providers load under our libdat2 (their dlopen would fail without it). */
DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE handle, DAT_IA_HANDLE *ia_handle_p);
DAT_RETURN dats_get_ia_handle(DAT_IA_HANDLE handle, DAT_IA_HANDLE *ia_handle_p)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!ia_handle_p || !dat_ia_resolve(handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	*ia_handle_p = ia;
	return DAT_SUCCESS;
}
#endif

DAT_RETURN dat_set_consumer_context(DAT_HANDLE handle, DAT_CONTEXT context)
{
	DAT_PROVIDER *p = any_owner(&handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->set_consumer_context_func(handle, context);
}

DAT_RETURN dat_get_consumer_context(DAT_HANDLE handle, DAT_CONTEXT *context)
{
	DAT_PROVIDER *p = any_owner(&handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->get_consumer_context_func(handle, context);
}

DAT_RETURN dat_get_handle_type(DAT_HANDLE handle, DAT_HANDLE_TYPE *type)
{
	DAT_PROVIDER *p = any_owner(&handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->get_handle_type_func(handle, type);
}

#if DAT_GEN == 2
/* DAT 2.0 extensions: the operation and its arguments go to the provider
 * owning handle (any handle, an IA's too) as a va_list, slot 80.  A
 * provider of ours registers a u2.0 table, so the slot is there. */
DAT_RETURN dat_extension_op(DAT_HANDLE handle, DAT_EXTENDED_OP op, ...)
{
	DAT_PROVIDER *p = any_owner(&handle);
	DAT_RETURN rc;
	va_list args;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	if (!p->handle_extendedop_func)
		return DAT_ERROR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE);
	va_start(args, op);
	rc = p->handle_extendedop_func(handle, op, args);
	va_end(args);
	return rc;
}
#endif

/* ------------------------------------------------------------------------
 * CNO */

DAT_RETURN dat_cno_create(DAT_IA_HANDLE ia_handle, DAT_OS_WAIT_PROXY_AGENT agent,
			  DAT_CNO_HANDLE *cno_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->cno_create_func(ia, agent, cno_handle);
}

DAT_RETURN dat_cno_modify_agent(DAT_CNO_HANDLE cno_handle,
				DAT_OS_WAIT_PROXY_AGENT agent)
{
	DAT_PROVIDER *p = owner_of(cno_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
	return p->cno_modify_agent_func(cno_handle, agent);
}

DAT_RETURN dat_cno_query(DAT_CNO_HANDLE cno_handle, DAT_CNO_PARAM_MASK mask,
			 DAT_CNO_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(cno_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
	rc = p->cno_query_func(cno_handle, mask, param);
#if DAT_GEN == 2
	/* 2.0's DAT_CNO_FIELD_ALL (0x4) does not contain IA_HANDLE (0x1) */
	if (mask & DAT_CNO_FIELD_ALL)
		mask |= DAT_CNO_FIELD_IA_HANDLE;
#endif
	if (rc == DAT_SUCCESS && param && (mask & DAT_CNO_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_cno_free(DAT_CNO_HANDLE cno_handle)
{
	DAT_PROVIDER *p = owner_of(cno_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
	return p->cno_free_func(cno_handle);
}

DAT_RETURN dat_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout,
			DAT_EVD_HANDLE *evd_handle)
{
	DAT_PROVIDER *p = owner_of(cno_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CNO);
	return p->cno_wait_func(cno_handle, timeout, evd_handle);
}

/* ------------------------------------------------------------------------
 * CR */

DAT_RETURN dat_cr_query(DAT_CR_HANDLE cr_handle, DAT_CR_PARAM_MASK mask,
			DAT_CR_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(cr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	return p->cr_query_func(cr_handle, mask, param);
}

DAT_RETURN dat_cr_accept(DAT_CR_HANDLE cr_handle, DAT_EP_HANDLE ep_handle,
			 DAT_COUNT private_data_size,
			 const DAT_PVOID private_data)
{
	DAT_PROVIDER *p = owner_of(cr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	return p->cr_accept_func(cr_handle, ep_handle, private_data_size,
				 private_data);
}

#if DAT_GEN == 2
/* DAT 2.0: a reject may carry private data. */
DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle, DAT_COUNT private_data_size,
			 const DAT_PVOID private_data)
{
	DAT_PROVIDER *p = owner_of(cr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	return p->cr_reject_func(cr_handle, private_data_size, private_data);
}
#else
DAT_RETURN dat_cr_reject(DAT_CR_HANDLE cr_handle)
{
	DAT_PROVIDER *p = owner_of(cr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	return p->cr_reject_func(cr_handle);
}
#endif

DAT_RETURN dat_cr_handoff(DAT_CR_HANDLE cr_handle, DAT_CONN_QUAL handoff)
{
	DAT_PROVIDER *p = owner_of(cr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_CR);
	return p->cr_handoff_func(cr_handle, handoff);
}

/* ------------------------------------------------------------------------
 * EVD */

DAT_RETURN dat_evd_create(DAT_IA_HANDLE ia_handle, DAT_COUNT min_qlen,
			  DAT_CNO_HANDLE cno_handle, DAT_EVD_FLAGS flags,
			  DAT_EVD_HANDLE *evd_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->evd_create_func(ia, min_qlen, cno_handle, flags, evd_handle);
}

DAT_RETURN dat_evd_query(DAT_EVD_HANDLE evd_handle, DAT_EVD_PARAM_MASK mask,
			 DAT_EVD_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(evd_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	rc = p->evd_query_func(evd_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_EVD_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_evd_modify_cno(DAT_EVD_HANDLE evd_handle,
			      DAT_CNO_HANDLE cno_handle)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_modify_cno_func(evd_handle, cno_handle);
}

DAT_RETURN dat_evd_enable(DAT_EVD_HANDLE evd_handle)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_enable_func(evd_handle);
}

DAT_RETURN dat_evd_disable(DAT_EVD_HANDLE evd_handle)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_disable_func(evd_handle);
}

DAT_RETURN dat_evd_wait(DAT_EVD_HANDLE evd_handle, DAT_TIMEOUT timeout,
			DAT_COUNT threshold, DAT_EVENT *event, DAT_COUNT *nmore)
{
	DAT_PROVIDER *p = owner_of(evd_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	rc = p->evd_wait_func(evd_handle, timeout, threshold, event, nmore);
	event_to_consumer(rc, event);
	return rc;
}

DAT_RETURN dat_evd_resize(DAT_EVD_HANDLE evd_handle, DAT_COUNT qlen)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_resize_func(evd_handle, qlen);
}

DAT_RETURN dat_evd_post_se(DAT_EVD_HANDLE evd_handle, const DAT_EVENT *event)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_post_se_func(evd_handle, event);
}

DAT_RETURN dat_evd_dequeue(DAT_EVD_HANDLE evd_handle, DAT_EVENT *event)
{
	DAT_PROVIDER *p = owner_of(evd_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	rc = p->evd_dequeue_func(evd_handle, event);
	event_to_consumer(rc, event);
	return rc;
}

DAT_RETURN dat_evd_free(DAT_EVD_HANDLE evd_handle)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_free_func(evd_handle);
}

DAT_RETURN dat_evd_set_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_set_unwaitable_func(evd_handle);
}

DAT_RETURN dat_evd_clear_unwaitable(DAT_EVD_HANDLE evd_handle)
{
	DAT_PROVIDER *p = owner_of(evd_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE1);
	return p->evd_clear_unwaitable_func(evd_handle);
}

/* ------------------------------------------------------------------------
 * EP */

DAT_RETURN dat_ep_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			 DAT_EVD_HANDLE recv_evd_handle,
			 DAT_EVD_HANDLE request_evd_handle,
			 DAT_EVD_HANDLE connect_evd_handle,
			 const DAT_EP_ATTR *ep_attributes,
			 DAT_EP_HANDLE *ep_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->ep_create_func(ia, pz_handle, recv_evd_handle,
				 request_evd_handle, connect_evd_handle,
				 ep_attributes, ep_handle);
}

DAT_RETURN dat_ep_create_with_srq(DAT_IA_HANDLE ia_handle,
				  DAT_PZ_HANDLE pz_handle,
				  DAT_EVD_HANDLE recv_evd_handle,
				  DAT_EVD_HANDLE request_evd_handle,
				  DAT_EVD_HANDLE connect_evd_handle,
				  DAT_SRQ_HANDLE srq_handle,
				  const DAT_EP_ATTR *ep_attributes,
				  DAT_EP_HANDLE *ep_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->ep_create_with_srq_func(ia, pz_handle, recv_evd_handle,
					  request_evd_handle,
					  connect_evd_handle, srq_handle,
					  ep_attributes, ep_handle);
}

DAT_RETURN dat_ep_query(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK mask,
			DAT_EP_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(ep_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	rc = p->ep_query_func(ep_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_EP_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_ep_modify(DAT_EP_HANDLE ep_handle, DAT_EP_PARAM_MASK mask,
			 const DAT_EP_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_modify_func(ep_handle, mask, param);
}

DAT_RETURN dat_ep_connect(DAT_EP_HANDLE ep_handle,
			  DAT_IA_ADDRESS_PTR remote_ia_address,
			  DAT_CONN_QUAL remote_conn_qual, DAT_TIMEOUT timeout,
			  DAT_COUNT private_data_size,
			  const DAT_PVOID private_data, DAT_QOS qos,
			  DAT_CONNECT_FLAGS connect_flags)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_connect_func(ep_handle, remote_ia_address,
				  remote_conn_qual, timeout, private_data_size,
				  private_data, qos, connect_flags);
}

DAT_RETURN dat_ep_dup_connect(DAT_EP_HANDLE ep_handle,
			      DAT_EP_HANDLE ep_dup_handle, DAT_TIMEOUT timeout,
			      DAT_COUNT private_data_size,
			      const DAT_PVOID private_data, DAT_QOS qos)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_dup_connect_func(ep_handle, ep_dup_handle, timeout,
				      private_data_size, private_data, qos);
}

DAT_RETURN dat_ep_disconnect(DAT_EP_HANDLE ep_handle,
			     DAT_CLOSE_FLAGS close_flags)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_disconnect_func(ep_handle, close_flags);
}

DAT_RETURN dat_ep_post_send(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
			    DAT_LMR_TRIPLET *local_iov,
			    DAT_DTO_COOKIE user_cookie,
			    DAT_COMPLETION_FLAGS completion_flags)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_post_send_func(ep_handle, num_segments, local_iov,
				    user_cookie, completion_flags);
}

DAT_RETURN dat_ep_post_recv(DAT_EP_HANDLE ep_handle, DAT_COUNT num_segments,
			    DAT_LMR_TRIPLET *local_iov,
			    DAT_DTO_COOKIE user_cookie,
			    DAT_COMPLETION_FLAGS completion_flags)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_post_recv_func(ep_handle, num_segments, local_iov,
				    user_cookie, completion_flags);
}

DAT_RETURN dat_ep_post_rdma_read(DAT_EP_HANDLE ep_handle,
				 DAT_COUNT num_segments,
				 DAT_LMR_TRIPLET *local_iov,
				 DAT_DTO_COOKIE user_cookie,
				 const DAT_RMR_TRIPLET *remote_iov,
				 DAT_COMPLETION_FLAGS completion_flags)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_post_rdma_read_func(ep_handle, num_segments, local_iov,
					 user_cookie, remote_iov,
					 completion_flags);
}

DAT_RETURN dat_ep_post_rdma_write(DAT_EP_HANDLE ep_handle,
				  DAT_COUNT num_segments,
				  DAT_LMR_TRIPLET *local_iov,
				  DAT_DTO_COOKIE user_cookie,
				  const DAT_RMR_TRIPLET *remote_iov,
				  DAT_COMPLETION_FLAGS completion_flags)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_post_rdma_write_func(ep_handle, num_segments, local_iov,
					  user_cookie, remote_iov,
					  completion_flags);
}

DAT_RETURN dat_ep_get_status(DAT_EP_HANDLE ep_handle, DAT_EP_STATE *ep_state,
			     DAT_BOOLEAN *recv_idle, DAT_BOOLEAN *request_idle)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_get_status_func(ep_handle, ep_state, recv_idle,
				     request_idle);
}

DAT_RETURN dat_ep_free(DAT_EP_HANDLE ep_handle)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_free_func(ep_handle);
}

DAT_RETURN dat_ep_reset(DAT_EP_HANDLE ep_handle)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_reset_func(ep_handle);
}

DAT_RETURN dat_ep_recv_query(DAT_EP_HANDLE ep_handle,
			     DAT_COUNT *nbufs_allocated,
			     DAT_COUNT *bufs_alloc_span)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_recv_query_func(ep_handle, nbufs_allocated,
				     bufs_alloc_span);
}

DAT_RETURN dat_ep_set_watermark(DAT_EP_HANDLE ep_handle,
				DAT_COUNT soft_high_watermark,
				DAT_COUNT hard_high_watermark)
{
	DAT_PROVIDER *p = owner_of(ep_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_EP);
	return p->ep_set_watermark_func(ep_handle, soft_high_watermark,
					hard_high_watermark);
}

/* ------------------------------------------------------------------------
 * LMR */

DAT_RETURN dat_lmr_create(DAT_IA_HANDLE ia_handle, DAT_MEM_TYPE mem_type,
			  DAT_REGION_DESCRIPTION region_description,
			  DAT_VLEN length, DAT_PZ_HANDLE pz_handle,
			  DAT_MEM_PRIV_FLAGS privileges,
#if DAT_GEN == 2
			  DAT_VA_TYPE va_type,
#endif
			  DAT_LMR_HANDLE *lmr_handle,
			  DAT_LMR_CONTEXT *lmr_context,
			  DAT_RMR_CONTEXT *rmr_context,
			  DAT_VLEN *registered_length,
			  DAT_VADDR *registered_address)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->lmr_create_func(ia, mem_type, region_description, length,
				  pz_handle, privileges,
#if DAT_GEN == 2
				  va_type,
#endif
				  lmr_handle, lmr_context, rmr_context,
				  registered_length, registered_address);
}

DAT_RETURN dat_lmr_query(DAT_LMR_HANDLE lmr_handle, DAT_LMR_PARAM_MASK mask,
			 DAT_LMR_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(lmr_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_LMR);
	rc = p->lmr_query_func(lmr_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_LMR_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_lmr_free(DAT_LMR_HANDLE lmr_handle)
{
	DAT_PROVIDER *p = owner_of(lmr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_LMR);
	return p->lmr_free_func(lmr_handle);
}

DAT_RETURN dat_lmr_sync_rdma_read(DAT_IA_HANDLE ia_handle,
				  const DAT_LMR_TRIPLET *local_segments,
				  DAT_VLEN num_segments)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->lmr_sync_rdma_read_func(ia, local_segments, num_segments);
}

DAT_RETURN dat_lmr_sync_rdma_write(DAT_IA_HANDLE ia_handle,
				   const DAT_LMR_TRIPLET *local_segments,
				   DAT_VLEN num_segments)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->lmr_sync_rdma_write_func(ia, local_segments, num_segments);
}

/* ------------------------------------------------------------------------
 * RMR */

DAT_RETURN dat_rmr_create(DAT_PZ_HANDLE pz_handle, DAT_RMR_HANDLE *rmr_handle)
{
	DAT_PROVIDER *p = owner_of(pz_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	return p->rmr_create_func(pz_handle, rmr_handle);
}

DAT_RETURN dat_rmr_query(DAT_RMR_HANDLE rmr_handle, DAT_RMR_PARAM_MASK mask,
			 DAT_RMR_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(rmr_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
	rc = p->rmr_query_func(rmr_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_RMR_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

#if DAT_GEN == 2
/* DAT 2.0: the LMR and the address type are named too. */
DAT_RETURN dat_rmr_bind(DAT_RMR_HANDLE rmr_handle, DAT_LMR_HANDLE lmr_handle,
			const DAT_LMR_TRIPLET *lmr_triplet,
			DAT_MEM_PRIV_FLAGS mem_privileges, DAT_VA_TYPE va_type,
			DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie,
			DAT_COMPLETION_FLAGS completion_flags,
			DAT_RMR_CONTEXT *rmr_context)
{
	DAT_PROVIDER *p = owner_of(rmr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
	return p->rmr_bind_func(rmr_handle, lmr_handle, lmr_triplet,
				mem_privileges, va_type, ep_handle,
				user_cookie, completion_flags, rmr_context);
}
#else
DAT_RETURN dat_rmr_bind(DAT_RMR_HANDLE rmr_handle,
			const DAT_LMR_TRIPLET *lmr_triplet,
			DAT_MEM_PRIV_FLAGS mem_privileges,
			DAT_EP_HANDLE ep_handle, DAT_RMR_COOKIE user_cookie,
			DAT_COMPLETION_FLAGS completion_flags,
			DAT_RMR_CONTEXT *rmr_context)
{
	DAT_PROVIDER *p = owner_of(rmr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
	return p->rmr_bind_func(rmr_handle, lmr_triplet, mem_privileges,
				ep_handle, user_cookie, completion_flags,
				rmr_context);
}
#endif

DAT_RETURN dat_rmr_free(DAT_RMR_HANDLE rmr_handle)
{
	DAT_PROVIDER *p = owner_of(rmr_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_RMR);
	return p->rmr_free_func(rmr_handle);
}

/* ------------------------------------------------------------------------
 * PSP, RSP */

DAT_RETURN dat_psp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			  DAT_EVD_HANDLE evd_handle, DAT_PSP_FLAGS psp_flags,
			  DAT_PSP_HANDLE *psp_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->psp_create_func(ia, conn_qual, evd_handle, psp_flags,
				  psp_handle);
}

DAT_RETURN dat_psp_create_any(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL *conn_qual,
			      DAT_EVD_HANDLE evd_handle,
			      DAT_PSP_FLAGS psp_flags,
			      DAT_PSP_HANDLE *psp_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->psp_create_any_func(ia, conn_qual, evd_handle, psp_flags,
				      psp_handle);
}

DAT_RETURN dat_psp_query(DAT_PSP_HANDLE psp_handle, DAT_PSP_PARAM_MASK mask,
			 DAT_PSP_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(psp_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_PSP);
	rc = p->psp_query_func(psp_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_PSP_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_psp_free(DAT_PSP_HANDLE psp_handle)
{
	DAT_PROVIDER *p = owner_of(psp_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_PSP);
	return p->psp_free_func(psp_handle);
}

DAT_RETURN dat_rsp_create(DAT_IA_HANDLE ia_handle, DAT_CONN_QUAL conn_qual,
			  DAT_EP_HANDLE ep_handle, DAT_EVD_HANDLE evd_handle,
			  DAT_RSP_HANDLE *rsp_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->rsp_create_func(ia, conn_qual, ep_handle, evd_handle,
				  rsp_handle);
}

DAT_RETURN dat_rsp_query(DAT_RSP_HANDLE rsp_handle, DAT_RSP_PARAM_MASK mask,
			 DAT_RSP_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(rsp_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_RSP);
	rc = p->rsp_query_func(rsp_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_RSP_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_rsp_free(DAT_RSP_HANDLE rsp_handle)
{
	DAT_PROVIDER *p = owner_of(rsp_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_RSP);
	return p->rsp_free_func(rsp_handle);
}

/* ------------------------------------------------------------------------
 * PZ */

DAT_RETURN dat_pz_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE *pz_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->pz_create_func(ia, pz_handle);
}

DAT_RETURN dat_pz_query(DAT_PZ_HANDLE pz_handle, DAT_PZ_PARAM_MASK mask,
			DAT_PZ_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(pz_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	rc = p->pz_query_func(pz_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_PZ_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_pz_free(DAT_PZ_HANDLE pz_handle)
{
	DAT_PROVIDER *p = owner_of(pz_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_PZ);
	return p->pz_free_func(pz_handle);
}

/* ------------------------------------------------------------------------
 * SRQ */

DAT_RETURN dat_srq_create(DAT_IA_HANDLE ia_handle, DAT_PZ_HANDLE pz_handle,
			  DAT_SRQ_ATTR *srq_attr, DAT_SRQ_HANDLE *srq_handle)
{
	DAT_IA_HANDLE ia;
	DAT_PROVIDER *p;

	if (!dat_ia_resolve(ia_handle, &ia, &p))
		return BAD_HANDLE(DAT_INVALID_HANDLE_IA);
	return p->srq_create_func(ia, pz_handle, srq_attr, srq_handle);
}

DAT_RETURN dat_srq_free(DAT_SRQ_HANDLE srq_handle)
{
	DAT_PROVIDER *p = owner_of(srq_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	return p->srq_free_func(srq_handle);
}

DAT_RETURN dat_srq_post_recv(DAT_SRQ_HANDLE srq_handle, DAT_COUNT num_segments,
			     DAT_LMR_TRIPLET *local_iov,
			     DAT_DTO_COOKIE user_cookie)
{
	DAT_PROVIDER *p = owner_of(srq_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	return p->srq_post_recv_func(srq_handle, num_segments, local_iov,
				     user_cookie);
}

DAT_RETURN dat_srq_query(DAT_SRQ_HANDLE srq_handle, DAT_SRQ_PARAM_MASK mask,
			 DAT_SRQ_PARAM *param)
{
	DAT_PROVIDER *p = owner_of(srq_handle);
	DAT_RETURN rc;

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	rc = p->srq_query_func(srq_handle, mask, param);
	if (rc == DAT_SUCCESS && param && (mask & DAT_SRQ_FIELD_IA_HANDLE))
		param->ia_handle = dat_ia_to_consumer(param->ia_handle);
	return rc;
}

DAT_RETURN dat_srq_resize(DAT_SRQ_HANDLE srq_handle, DAT_COUNT srq_max_recv_dto)
{
	DAT_PROVIDER *p = owner_of(srq_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	return p->srq_resize_func(srq_handle, srq_max_recv_dto);
}

DAT_RETURN dat_srq_set_lw(DAT_SRQ_HANDLE srq_handle, DAT_COUNT low_watermark)
{
	DAT_PROVIDER *p = owner_of(srq_handle);

	if (!p)
		return BAD_HANDLE(DAT_INVALID_HANDLE_SRQ);
	return p->srq_set_lw_func(srq_handle, low_watermark);
}
