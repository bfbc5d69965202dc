/*
 * compile_all2.c - call every DAT 2.0 entry point and IB extension macro
 * once, against <dat2/udat.h> and <dat2/dat_ib_extensions.h>.
 *
 * Compile check only (libdat2.so.2 does not exist yet): this file must
 * compile warning-free as gnu89, C99, C11 and C++11, which proves the
 * DAT 2.0 headers declare the 72 DAT 1.2 calls with their 2.0 prototypes
 * plus dat_extension_op, that the IB extension macros expand to valid
 * dat_extension_op() calls, and that each prototype matches the provider
 * table's function type.  Nothing here is linked or run.
 */

#include <string.h>
#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>
#include <dat2/dat_registry.h>

/*
 * Each call's prototype against the provider table's type for it: taking
 * the address inside sizeof references no symbol, and comparing pointers
 * of different types is an error in C++ and a warning (so, with -Werror,
 * an error) in C.
 */
#define SAME_TYPE(fn, FUNC_TYPE) \
	((void)sizeof((FUNC_TYPE)0 == &fn))

/* The calls DAT 2.0 declares but libdat2.so.2 (like OpenFabrics') does
 * not export: only their types are checked. */
static void check_unexported_types(void)
{
	SAME_TYPE(dat_ep_common_connect, DAT_EP_COMMON_CONNECT_FUNC);
	SAME_TYPE(dat_ep_post_send_with_invalidate,
		  DAT_EP_POST_SEND_WITH_INVALIDATE_FUNC);
	SAME_TYPE(dat_ep_post_rdma_read_to_rmr,
		  DAT_EP_POST_RDMA_READ_TO_RMR_FUNC);
	SAME_TYPE(dat_rmr_create_for_ep, DAT_RMR_CREATE_FOR_EP_FUNC);
	SAME_TYPE(dat_csp_create, DAT_CSP_CREATE_FUNC);
	SAME_TYPE(dat_csp_query, DAT_CSP_QUERY_FUNC);
	SAME_TYPE(dat_csp_free, DAT_CSP_FREE_FUNC);
	SAME_TYPE(dat_cno_fd_create, DAT_CNO_FD_CREATE_FUNC);
	SAME_TYPE(dat_cno_trigger, DAT_CNO_TRIGGER_FUNC);
	(void)sizeof(&dat_registry_providers_related);
}

static void check_exported_types(void)
{
	SAME_TYPE(dat_ia_openv, DAT_IA_OPENV_FUNC);
	SAME_TYPE(dat_ia_query, DAT_IA_QUERY_FUNC);
	SAME_TYPE(dat_ia_close, DAT_IA_CLOSE_FUNC);
	SAME_TYPE(dat_set_consumer_context, DAT_SET_CONSUMER_CONTEXT_FUNC);
	SAME_TYPE(dat_get_consumer_context, DAT_GET_CONSUMER_CONTEXT_FUNC);
	SAME_TYPE(dat_get_handle_type, DAT_GET_HANDLE_TYPE_FUNC);
	SAME_TYPE(dat_cno_create, DAT_CNO_CREATE_FUNC);
	SAME_TYPE(dat_cno_modify_agent, DAT_CNO_MODIFY_AGENT_FUNC);
	SAME_TYPE(dat_cno_query, DAT_CNO_QUERY_FUNC);
	SAME_TYPE(dat_cno_free, DAT_CNO_FREE_FUNC);
	SAME_TYPE(dat_cno_wait, DAT_CNO_WAIT_FUNC);
	SAME_TYPE(dat_cr_query, DAT_CR_QUERY_FUNC);
	SAME_TYPE(dat_cr_accept, DAT_CR_ACCEPT_FUNC);
	SAME_TYPE(dat_cr_reject, DAT_CR_REJECT_FUNC);
	SAME_TYPE(dat_cr_handoff, DAT_CR_HANDOFF_FUNC);
	SAME_TYPE(dat_evd_create, DAT_EVD_CREATE_FUNC);
	SAME_TYPE(dat_evd_query, DAT_EVD_QUERY_FUNC);
	SAME_TYPE(dat_evd_modify_cno, DAT_EVD_MODIFY_CNO_FUNC);
	SAME_TYPE(dat_evd_enable, DAT_EVD_ENABLE_FUNC);
	SAME_TYPE(dat_evd_disable, DAT_EVD_DISABLE_FUNC);
	SAME_TYPE(dat_evd_wait, DAT_EVD_WAIT_FUNC);
	SAME_TYPE(dat_evd_resize, DAT_EVD_RESIZE_FUNC);
	SAME_TYPE(dat_evd_post_se, DAT_EVD_POST_SE_FUNC);
	SAME_TYPE(dat_evd_dequeue, DAT_EVD_DEQUEUE_FUNC);
	SAME_TYPE(dat_evd_free, DAT_EVD_FREE_FUNC);
	SAME_TYPE(dat_evd_set_unwaitable, DAT_EVD_SET_UNWAITABLE_FUNC);
	SAME_TYPE(dat_evd_clear_unwaitable, DAT_EVD_CLEAR_UNWAITABLE_FUNC);
	SAME_TYPE(dat_ep_create, DAT_EP_CREATE_FUNC);
	SAME_TYPE(dat_ep_create_with_srq, DAT_EP_CREATE_WITH_SRQ_FUNC);
	SAME_TYPE(dat_ep_query, DAT_EP_QUERY_FUNC);
	SAME_TYPE(dat_ep_modify, DAT_EP_MODIFY_FUNC);
	SAME_TYPE(dat_ep_connect, DAT_EP_CONNECT_FUNC);
	SAME_TYPE(dat_ep_dup_connect, DAT_EP_DUP_CONNECT_FUNC);
	SAME_TYPE(dat_ep_disconnect, DAT_EP_DISCONNECT_FUNC);
	SAME_TYPE(dat_ep_post_send, DAT_EP_POST_SEND_FUNC);
	SAME_TYPE(dat_ep_post_recv, DAT_EP_POST_RECV_FUNC);
	SAME_TYPE(dat_ep_post_rdma_read, DAT_EP_POST_RDMA_READ_FUNC);
	SAME_TYPE(dat_ep_post_rdma_write, DAT_EP_POST_RDMA_WRITE_FUNC);
	SAME_TYPE(dat_ep_get_status, DAT_EP_GET_STATUS_FUNC);
	SAME_TYPE(dat_ep_free, DAT_EP_FREE_FUNC);
	SAME_TYPE(dat_ep_reset, DAT_EP_RESET_FUNC);
	SAME_TYPE(dat_ep_recv_query, DAT_EP_RECV_QUERY_FUNC);
	SAME_TYPE(dat_ep_set_watermark, DAT_EP_SET_WATERMARK_FUNC);
	SAME_TYPE(dat_lmr_create, DAT_LMR_CREATE_FUNC);
	SAME_TYPE(dat_lmr_query, DAT_LMR_QUERY_FUNC);
	SAME_TYPE(dat_lmr_free, DAT_LMR_FREE_FUNC);
	SAME_TYPE(dat_lmr_sync_rdma_read, DAT_LMR_SYNC_RDMA_READ_FUNC);
	SAME_TYPE(dat_lmr_sync_rdma_write, DAT_LMR_SYNC_RDMA_WRITE_FUNC);
	SAME_TYPE(dat_rmr_create, DAT_RMR_CREATE_FUNC);
	SAME_TYPE(dat_rmr_query, DAT_RMR_QUERY_FUNC);
	SAME_TYPE(dat_rmr_bind, DAT_RMR_BIND_FUNC);
	SAME_TYPE(dat_rmr_free, DAT_RMR_FREE_FUNC);
	SAME_TYPE(dat_psp_create, DAT_PSP_CREATE_FUNC);
	SAME_TYPE(dat_psp_create_any, DAT_PSP_CREATE_ANY_FUNC);
	SAME_TYPE(dat_psp_query, DAT_PSP_QUERY_FUNC);
	SAME_TYPE(dat_psp_free, DAT_PSP_FREE_FUNC);
	SAME_TYPE(dat_rsp_create, DAT_RSP_CREATE_FUNC);
	SAME_TYPE(dat_rsp_query, DAT_RSP_QUERY_FUNC);
	SAME_TYPE(dat_rsp_free, DAT_RSP_FREE_FUNC);
	SAME_TYPE(dat_pz_create, DAT_PZ_CREATE_FUNC);
	SAME_TYPE(dat_pz_query, DAT_PZ_QUERY_FUNC);
	SAME_TYPE(dat_pz_free, DAT_PZ_FREE_FUNC);
	SAME_TYPE(dat_srq_create, DAT_SRQ_CREATE_FUNC);
	SAME_TYPE(dat_srq_free, DAT_SRQ_FREE_FUNC);
	SAME_TYPE(dat_srq_post_recv, DAT_SRQ_POST_RECV_FUNC);
	SAME_TYPE(dat_srq_query, DAT_SRQ_QUERY_FUNC);
	SAME_TYPE(dat_srq_resize, DAT_SRQ_RESIZE_FUNC);
	SAME_TYPE(dat_srq_set_lw, DAT_SRQ_SET_LW_FUNC);
}

/* Every exported call (73: the 72 of DAT 1.2 with their 2.0 prototypes,
 * and dat_extension_op), then every IB extension macro. */
DAT_COUNT compile_all2(void);
DAT_COUNT compile_all2(void)
{
	char ia_name[] = "compile-all2-no-such-ia";
	unsigned char pdata[16];
	DAT_COUNT n_failed = 0;

	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE triggered = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz = DAT_HANDLE_NULL;
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
	DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
	DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;
	DAT_CR_HANDLE cr = DAT_HANDLE_NULL;
	DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;

	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR provider_attr;
	DAT_PROVIDER_INFO info;
	DAT_PROVIDER_INFO *info_list[1];
	DAT_COUNT n_entries = 0;
	const DAT_PROVIDER *no_provider = (const DAT_PROVIDER *)0;

	DAT_CONTEXT context;
	DAT_HANDLE_TYPE handle_type;
	DAT_PZ_PARAM pz_param;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_CONTEXT lmr_context = 0;
	DAT_RMR_CONTEXT rmr_context = 0;
	DAT_VLEN registered_length = 0;
	DAT_VADDR registered_address = 0;
	DAT_LMR_PARAM lmr_param;
	DAT_LMR_TRIPLET local_iov;
	DAT_RMR_TRIPLET remote_iov;
	DAT_RMR_PARAM rmr_param;
	DAT_RMR_COOKIE rmr_cookie;
	DAT_DTO_COOKIE dto_cookie;
	DAT_EVD_PARAM evd_param;
	DAT_EVENT event;
	DAT_COUNT n_more = 0;
	DAT_OS_WAIT_PROXY_AGENT agent = DAT_OS_WAIT_PROXY_AGENT_NULL;
	DAT_CNO_PARAM cno_param;
	DAT_EP_ATTR ep_attr;
	DAT_EP_PARAM ep_param;
	DAT_EP_STATE ep_state;
	DAT_BOOLEAN recv_idle, request_idle;
	DAT_COUNT n_bufs = 0, buf_span = 0;
	struct sockaddr remote_addr;
	DAT_CONN_QUAL conn_qual = 0xB0DE;
	DAT_PSP_PARAM psp_param;
	DAT_RSP_PARAM rsp_param;
	DAT_CR_PARAM cr_param;
	DAT_SRQ_ATTR srq_attr;
	DAT_SRQ_PARAM srq_param;
	const char *major = NULL, *minor = NULL;

	/* IB extension arguments. */
	DAT_IB_ADDR_HANDLE remote_ah;
	DAT_UINT64 counters[DCNT_IA_ALL_COUNTERS];
	DAT_UINT64 clock_value = 0;
	DAT_IB_COLLECTIVE_MEMBER member = NULL;
	DAT_IB_COLLECTIVE_MEMBER members[2];
	DAT_UINT32 member_size = 0;
	DAT_IB_COLLECTIVE_GROUP group;
	DAT_IB_COLLECTIVE_HANDLE coll = DAT_HANDLE_NULL;
	DAT_IA_HANDLE query_ia = DAT_HANDLE_NULL;
	DAT_COUNT sizes[2] = { 8, 8 }, displs[2] = { 0, 8 };
	char sendbuf[16], recvbuf[16];
	const DAT_IB_EXTENSION_EVENT_DATA *ext;
	const char *text = NULL;

	check_exported_types();
	check_unexported_types();

	memset(pdata, 0x5a, sizeof(pdata));
	memset(&ia_attr, 0, sizeof(ia_attr));
	memset(&provider_attr, 0, sizeof(provider_attr));
	memset(&info, 0, sizeof(info));
	memset(&pz_param, 0, sizeof(pz_param));
	memset(&region, 0, sizeof(region));
	memset(&lmr_param, 0, sizeof(lmr_param));
	memset(&rmr_param, 0, sizeof(rmr_param));
	memset(&evd_param, 0, sizeof(evd_param));
	memset(&event, 0, sizeof(event));
	memset(&cno_param, 0, sizeof(cno_param));
	memset(&ep_attr, 0, sizeof(ep_attr));
	memset(&ep_param, 0, sizeof(ep_param));
	memset(&remote_addr, 0, sizeof(remote_addr));
	memset(&psp_param, 0, sizeof(psp_param));
	memset(&rsp_param, 0, sizeof(rsp_param));
	memset(&cr_param, 0, sizeof(cr_param));
	memset(&srq_param, 0, sizeof(srq_param));
	memset(&remote_ah, 0, sizeof(remote_ah));
	memset(counters, 0, sizeof(counters));
	memset(&group, 0, sizeof(group));
	memset(members, 0, sizeof(members));
	memset(sendbuf, 0, sizeof(sendbuf));
	memset(recvbuf, 0, sizeof(recvbuf));

	context.as_64 = 0;
	dto_cookie.as_64 = 1;
	rmr_cookie.as_64 = 2;
	local_iov.virtual_address = (DAT_VADDR)(unsigned long)pdata;
	local_iov.segment_length = (DAT_SEG_LENGTH)sizeof(pdata);
	local_iov.lmr_context = 0;
	remote_iov.virtual_address = 0;
	remote_iov.segment_length = 8;
	remote_iov.rmr_context = 0;
	srq_attr.max_recv_dtos = 1;
	srq_attr.max_recv_iov = 1;
	srq_attr.low_watermark = DAT_SRQ_LW_DEFAULT;
	region.for_va = pdata;
	info_list[0] = &info;

#define CALL(expr)	do { if ((expr) != DAT_SUCCESS) n_failed++; } while (0)

	/* IA, consumer context, handle type. */
	CALL(dat_ia_open(ia_name, 8, &async_evd, &ia));
	CALL(dat_ia_openv(ia_name, 8, &async_evd, &ia, DAT_VERSION_MAJOR,
			  DAT_VERSION_MINOR, DAT_THREADSAFE));
	CALL(dat_ia_query(ia, &async_evd, DAT_IA_FIELD_ALL, &ia_attr,
			  DAT_PROVIDER_FIELD_ALL, &provider_attr));
	CALL(dat_set_consumer_context(ia, context));
	CALL(dat_get_consumer_context(ia, &context));
	CALL(dat_get_handle_type(ia, &handle_type));

	/* CNO and EVD. */
	CALL(dat_cno_create(ia, agent, &cno));
	CALL(dat_cno_modify_agent(cno, agent));
	CALL(dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cno_param));
	CALL(dat_cno_wait(cno, DAT_TIMEOUT_INFINITE, &triggered));
	CALL(dat_cno_free(cno));
	CALL(dat_evd_create(ia, 8, cno, (DAT_EVD_FLAGS)(DAT_EVD_DEFAULT_FLAG |
			    DAT_IB_EVD_EXTENSION_FLAG), &evd));
	CALL(dat_evd_query(evd, DAT_EVD_FIELD_ALL, &evd_param));
	CALL(dat_evd_modify_cno(evd, cno));
	CALL(dat_evd_enable(evd));
	CALL(dat_evd_disable(evd));
	CALL(dat_evd_wait(evd, 0, 1, &event, &n_more));
	CALL(dat_evd_resize(evd, 16));
	CALL(dat_evd_post_se(evd, &event));
	CALL(dat_evd_dequeue(evd, &event));
	CALL(dat_evd_set_unwaitable(evd));
	CALL(dat_evd_clear_unwaitable(evd));
	CALL(dat_evd_free(evd));

	/* PZ, LMR, RMR. */
	CALL(dat_pz_create(ia, &pz));
	CALL(dat_pz_query(pz, DAT_PZ_FIELD_ALL, &pz_param));
	CALL(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region, sizeof(pdata),
			    pz, (DAT_MEM_PRIV_FLAGS)(DAT_MEM_PRIV_ALL_FLAG |
				DAT_IB_MEM_PRIV_REMOTE_ATOMIC),
			    DAT_VA_TYPE_VA, &lmr, &lmr_context, &rmr_context,
			    &registered_length, &registered_address));
	CALL(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &lmr_param));
	CALL(dat_lmr_sync_rdma_read(ia, &local_iov, 1));
	CALL(dat_lmr_sync_rdma_write(ia, &local_iov, 1));
	CALL(dat_rmr_create(pz, &rmr));
	CALL(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rmr_param));
	CALL(dat_rmr_bind(rmr, lmr, &local_iov, DAT_MEM_PRIV_REMOTE_READ_FLAG,
			  DAT_VA_TYPE_ZB, ep, rmr_cookie,
			  DAT_COMPLETION_DEFAULT_FLAG, &rmr_context));
	CALL(dat_rmr_free(rmr));

	/* EP and DTOs. */
	CALL(dat_ep_create(ia, pz, evd, evd, evd, &ep_attr, &ep));
	CALL(dat_ep_create_with_srq(ia, pz, evd, evd, evd, srq, &ep_attr, &ep));
	CALL(dat_ep_query(ep, DAT_EP_FIELD_ALL, &ep_param));
	CALL(dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS, &ep_param));
	CALL(dat_ep_connect(ep, &remote_addr, conn_qual, DAT_TIMEOUT_INFINITE,
			    (DAT_COUNT)sizeof(pdata), pdata,
			    DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	CALL(dat_ep_dup_connect(ep, ep, 1000, 0, NULL, DAT_QOS_BEST_EFFORT));
	CALL(dat_ep_post_send(ep, 1, &local_iov, dto_cookie,
			      DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ep_post_recv(ep, 1, &local_iov, dto_cookie,
			      DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ep_post_rdma_read(ep, 1, &local_iov, dto_cookie, &remote_iov,
				   DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ep_post_rdma_write(ep, 1, &local_iov, dto_cookie, &remote_iov,
				    DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ep_get_status(ep, &ep_state, &recv_idle, &request_idle));
	CALL(dat_ep_recv_query(ep, &n_bufs, &buf_span));
	CALL(dat_ep_set_watermark(ep, DAT_HW_DEFAULT, DAT_HW_DEFAULT));
	CALL(dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG));
	CALL(dat_ep_reset(ep));

	/* Service points and connection requests. */
	CALL(dat_psp_create(ia, conn_qual, evd, DAT_PSP_CONSUMER_FLAG, &psp));
	CALL(dat_psp_create_any(ia, &conn_qual, evd, DAT_PSP_PROVIDER_FLAG,
				&psp));
	CALL(dat_psp_query(psp, DAT_PSP_FIELD_ALL, &psp_param));
	CALL(dat_psp_free(psp));
	CALL(dat_rsp_create(ia, conn_qual, ep, evd, &rsp));
	CALL(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &rsp_param));
	CALL(dat_rsp_free(rsp));
	CALL(dat_cr_query(cr, DAT_CR_FIELD_ALL, &cr_param));
	CALL(dat_cr_accept(cr, ep, 0, NULL));
	CALL(dat_cr_reject(cr, (DAT_COUNT)sizeof(pdata), pdata));
	CALL(dat_cr_handoff(cr, conn_qual));

	/* SRQ. */
	CALL(dat_srq_create(ia, pz, &srq_attr, &srq));
	CALL(dat_srq_post_recv(srq, 1, &local_iov, dto_cookie));
	CALL(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &srq_param));
	CALL(dat_srq_resize(srq, 4));
	CALL(dat_srq_set_lw(srq, 1));
	CALL(dat_srq_free(srq));

	CALL(dat_ep_free(ep));
	CALL(dat_lmr_free(lmr));
	CALL(dat_pz_free(pz));

	/* Registry, status text, extension entry point. */
	CALL(dat_registry_list_providers(1, &n_entries, info_list));
	CALL(dat_registry_add_provider(no_provider, &info));
	CALL(dat_registry_remove_provider(no_provider, &info));
	CALL(dat_strerror((DAT_RETURN)(DAT_CLASS_ERROR | DAT_INVALID_HANDLE | DAT_INVALID_HANDLE_CSP), &major, &minor));
	CALL(dat_extension_op(ia, DAT_IB_PRINT_COUNTERS_OP,
			      DCNT_IA_ALL_COUNTERS, 0));

	/* The IB extension (version DAT_IB_EXTENSION_VERSION). */
	CALL(dat_ib_post_fetch_and_add(ep, 1, &local_iov, dto_cookie,
				       &remote_iov, DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_post_cmp_and_swap(ep, 0, 1, &local_iov, dto_cookie,
				      &remote_iov, DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_post_rdma_write_immed(ep, 1, &local_iov, dto_cookie,
					  &remote_iov, 0x1234,
					  DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_post_send_ud(ep, 1, &local_iov, &remote_ah, dto_cookie,
				 DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_post_recv_ud(ep, 1, &local_iov, dto_cookie,
				 DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_ud_cm_free(ep, context));
	CALL(dat_ib_ud_ah_free(ep, &remote_ah));
	CALL(dat_ib_query_counters(ia, DCNT_IA_ALL_COUNTERS, counters, 0));
	CALL(dat_ib_print_counters(ep, DCNT_EP_ALL_COUNTERS, 1));
	CALL(dat_query_counters(evd, DCNT_EVD_ALL_COUNTERS, counters, 0));
	CALL(dat_print_counters(evd, DCNT_EVD_ALL_COUNTERS, 0));
	CALL(dat_ib_start_counter(ia, DCNT_IA_CM));
	CALL(dat_ib_stop_counter(ia, DCNT_IA_LNK));
	CALL(dat_ib_open_query(ia_name, &query_ia, DAT_IA_FIELD_ALL, &ia_attr,
			       DAT_PROVIDER_FIELD_ALL, &provider_attr));
	CALL(dat_ib_close_query(query_ia));
	CALL(dat_ib_collective_create_member(ia, NULL, &member, &member_size));
	CALL(dat_ib_collective_free_member(ia, member));
	CALL(dat_ib_collective_create_group(members, 2, 0, 7, &group, evd, pz,
					    context));
	CALL(dat_ib_collective_free_group(coll));
	CALL(dat_ib_collective_set_clock(coll, 0, context));
	CALL(dat_ib_collective_read_clock(coll, &clock_value));
	CALL(dat_ib_collective_scatter(coll, sendbuf, 8, recvbuf, 8, 0,
				       context, DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_scatterv(coll, sendbuf, sizes, displs, recvbuf,
					8, 0, context,
					DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_gather(coll, sendbuf, 8, recvbuf, 8, 0, context,
				      DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_gatherv(coll, sendbuf, 8, recvbuf, sizes,
				       displs, 0, context,
				       DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_allgather(coll, sendbuf, 8, recvbuf, 8, context,
					 DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_allgatherv(coll, sendbuf, 8, recvbuf, sizes,
					  displs, context,
					  DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_alltoall(coll, sendbuf, 8, recvbuf, 8, context,
					DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_alltoallv(coll, sendbuf, sizes, displs, recvbuf,
					 sizes, displs, context,
					 DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_reduce(coll, sendbuf, 8, recvbuf, 8,
				      DAT_IB_COLLECTIVE_REDUCE_OP_SUM,
				      DAT_IB_COLLECTIVE_TYPE_UINT64, 0, context,
				      DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_allreduce(coll, sendbuf, 8, recvbuf, 8,
					 DAT_IB_COLLECTIVE_REDUCE_OP_MAX,
					 DAT_IB_COLLECTIVE_TYPE_INT32, context,
					 DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_reduce_scatter(coll, sendbuf, 8, recvbuf, sizes,
					      DAT_IB_COLLECTIVE_REDUCE_OP_MIN,
					      DAT_IB_COLLECTIVE_TYPE_DOUBLE,
					      context,
					      DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_scan(coll, sendbuf, 8, recvbuf, 8,
				    DAT_IB_COLLECTIVE_REDUCE_OP_PROD,
				    DAT_IB_COLLECTIVE_TYPE_FLOAT, context,
				    DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_broadcast(coll, sendbuf, 8, 0, context,
					 DAT_COMPLETION_DEFAULT_FLAG));
	CALL(dat_ib_collective_barrier(coll, context,
				       DAT_COMPLETION_DEFAULT_FLAG));

	/* An extended event as a program reads it. */
	ext = (const DAT_IB_EXTENSION_EVENT_DATA *)event.event_extension_data;
	if (event.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT &&
	    ext->type == DAT_IB_RDMA_WRITE_IMMED_DATA &&
	    ext->val.immed.data == 0x1234 && ext->remote_ah.qpn == 0 &&
	    ext->coll.handle == DAT_HANDLE_NULL)
		n_failed++;
	CALL(dat_strerror_ext_status(ext->status, &text));
	CALL(dat_strerror_extension(DAT_IB_ERR, &text));

	CALL(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
#undef CALL
	return n_failed;
}
