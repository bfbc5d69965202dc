/*
 * compile_all.c - call every DAT 1.2 consumer entry point once.
 *
 * Build check: this file must compile warning-free as C99, C11 and C++11
 * against <dat/udat.h> and link against libdat.so.1, which proves that
 * the headers declare, and the library exports, all 72 dat_* functions
 * (plus the dat_ia_open macro).
 *
 * Run check: it is safe to run without any provider.  dat_ia_open() on a
 * name no dat.conf lists fails with DAT_PROVIDER_NOT_FOUND; every other
 * call gets NULL handles (or, for the registry calls, arguments the spec
 * says are rejected) and must come back with an error rather than crash.
 * dat_strerror() must succeed on a known code.  Exit status 0 when all
 * of that holds.
 */

#include <stdio.h>
#include <string.h>
#include <dat/udat.h>

static int n_calls;
static int n_bad;

static void describe(DAT_RETURN rc, const char **major, const char **minor)
{
	*major = "?";
	*minor = "?";
	(void)dat_strerror(rc, major, minor);
}

/* A call that must fail. */
static void expect_error(const char *what, DAT_RETURN rc)
{
	const char *major, *minor;

	n_calls++;
	describe(rc, &major, &minor);
	if (DAT_GET_TYPE(rc) == DAT_SUCCESS) {
		printf("FAIL %-28s 0x%08x succeeded, expected an error\n",
		       what, (unsigned)rc);
		n_bad++;
	} else {
		printf("ok   %-28s 0x%08x %s %s\n", what, (unsigned)rc,
		       major, minor);
	}
}

/* A call that must fail with a given type. */
static void expect_type(const char *what, DAT_RETURN rc, DAT_UINT32 type)
{
	if (DAT_GET_TYPE(rc) != type) {
		n_calls++;
		printf("FAIL %-28s 0x%08x, expected type 0x%08x\n", what,
		       (unsigned)rc, (unsigned)type);
		n_bad++;
		return;
	}
	expect_error(what, rc);
}

int main(void)
{
	char ia_name[] = "compile-all-no-such-ia";
	char buffer[256];
	unsigned char pdata[16];

	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;
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
	DAT_RETURN rc;

	memset(buffer, 0, sizeof(buffer));
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

	strcpy(info.ia_name, ia_name);
	info.dapl_version_major = DAT_VERSION_MAJOR;
	info.dapl_version_minor = DAT_VERSION_MINOR;
	info.is_thread_safe = DAT_THREADSAFE;
	info_list[0] = &info;

	context.as_64 = 0x1234;
	dto_cookie.as_64 = 1;
	rmr_cookie.as_64 = 2;
	region.for_va = buffer;
	local_iov.lmr_context = 0;
	local_iov.pad = 0;
	local_iov.virtual_address = (DAT_VADDR)(size_t)buffer;
	local_iov.segment_length = sizeof(buffer);
	remote_iov.rmr_context = 0;
	remote_iov.pad = 0;
	remote_iov.target_address = 0;
	remote_iov.segment_length = sizeof(buffer);
	remote_addr.sa_family = AF_INET;
	ep_attr.service_type = DAT_SERVICE_TYPE_RC;
	ep_attr.max_message_size = 4096;
	ep_attr.max_rdma_size = 4096;
	ep_attr.qos = DAT_QOS_BEST_EFFORT;
	ep_attr.max_recv_dtos = 16;
	ep_attr.max_request_dtos = 16;
	ep_attr.max_recv_iov = 1;
	ep_attr.max_request_iov = 1;
	ep_param.ep_attr = ep_attr;
	srq_attr.max_recv_dtos = 16;
	srq_attr.max_recv_iov = 1;
	srq_attr.low_watermark = DAT_SRQ_LW_DEFAULT;
	event.event_number = DAT_SOFTWARE_EVENT;
	event.event_data.software_event_data.pointer = buffer;

	/* Registry and IA (10 functions and the dat_ia_open macro). */
	expect_type("dat_ia_open",
		    dat_ia_open(ia_name, 8, &async_evd, &ia),
		    DAT_PROVIDER_NOT_FOUND);
	ia = DAT_HANDLE_NULL;
	expect_type("dat_ia_openv",
		    dat_ia_openv(ia_name, 8, &async_evd, &ia, 1, 2, DAT_FALSE),
		    DAT_PROVIDER_NOT_FOUND);
	ia = DAT_HANDLE_NULL;
	async_evd = DAT_HANDLE_NULL;
	expect_error("dat_ia_query",
		     dat_ia_query(ia, &async_evd, DAT_IA_FIELD_ALL, &ia_attr,
				  DAT_PROVIDER_FIELD_ALL, &provider_attr));
	expect_error("dat_ia_close", dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG));
	/* max_to_return 0 is always answered with INVALID_PARAMETER|ARG1. */
	expect_error("dat_registry_list_providers",
		     dat_registry_list_providers(0, &n_entries, info_list));
	expect_error("dat_registry_add_provider",
		     dat_registry_add_provider(no_provider, &info));
	expect_error("dat_registry_remove_provider",
		     dat_registry_remove_provider(no_provider, &info));
	rc = dat_strerror(DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP),
			  &major, &minor);
	n_calls++;
	if (rc != DAT_SUCCESS || major == NULL || minor == NULL ||
	    strcmp(major, "DAT_INVALID_HANDLE") != 0 ||
	    strcmp(minor, "DAT_INVALID_HANDLE_EP") != 0) {
		printf("FAIL %-28s 0x%08x\n", "dat_strerror", (unsigned)rc);
		n_bad++;
	} else {
		printf("ok   %-28s %s %s\n", "dat_strerror", major, minor);
	}
	expect_error("dat_set_consumer_context",
		     dat_set_consumer_context(DAT_HANDLE_NULL, context));
	expect_error("dat_get_consumer_context",
		     dat_get_consumer_context(DAT_HANDLE_NULL, &context));
	expect_error("dat_get_handle_type",
		     dat_get_handle_type(DAT_HANDLE_NULL, &handle_type));

	/* PZ (3). */
	expect_error("dat_pz_create", dat_pz_create(ia, &pz));
	expect_error("dat_pz_query",
		     dat_pz_query(pz, DAT_PZ_FIELD_ALL, &pz_param));
	expect_error("dat_pz_free", dat_pz_free(pz));

	/* LMR (5). */
	expect_error("dat_lmr_create",
		     dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, region,
				    sizeof(buffer), pz, DAT_MEM_PRIV_ALL_FLAG,
				    &lmr, &lmr_context, &rmr_context,
				    &registered_length, &registered_address));
	expect_error("dat_lmr_query",
		     dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &lmr_param));
	expect_error("dat_lmr_free", dat_lmr_free(lmr));
	expect_error("dat_lmr_sync_rdma_read",
		     dat_lmr_sync_rdma_read(ia, &local_iov, 1));
	expect_error("dat_lmr_sync_rdma_write",
		     dat_lmr_sync_rdma_write(ia, &local_iov, 1));

	/* RMR (4). */
	expect_error("dat_rmr_create", dat_rmr_create(pz, &rmr));
	expect_error("dat_rmr_query",
		     dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &rmr_param));
	expect_error("dat_rmr_bind",
		     dat_rmr_bind(rmr, &local_iov,
				  DAT_MEM_PRIV_REMOTE_READ_FLAG, ep,
				  rmr_cookie, DAT_COMPLETION_DEFAULT_FLAG,
				  &rmr_context));
	expect_error("dat_rmr_free", dat_rmr_free(rmr));

	/* EVD (12). */
	expect_error("dat_evd_create",
		     dat_evd_create(ia, 16, cno, DAT_EVD_DEFAULT_FLAG, &evd));
	expect_error("dat_evd_query",
		     dat_evd_query(evd, DAT_EVD_FIELD_ALL, &evd_param));
	expect_error("dat_evd_modify_cno", dat_evd_modify_cno(evd, cno));
	expect_error("dat_evd_enable", dat_evd_enable(evd));
	expect_error("dat_evd_disable", dat_evd_disable(evd));
	expect_error("dat_evd_wait",
		     dat_evd_wait(evd, 1000, 1, &event, &n_more));
	expect_error("dat_evd_resize", dat_evd_resize(evd, 32));
	expect_error("dat_evd_post_se", dat_evd_post_se(evd, &event));
	expect_error("dat_evd_dequeue", dat_evd_dequeue(evd, &event));
	expect_error("dat_evd_free", dat_evd_free(evd));
	expect_error("dat_evd_set_unwaitable", dat_evd_set_unwaitable(evd));
	expect_error("dat_evd_clear_unwaitable",
		     dat_evd_clear_unwaitable(evd));

	/* CNO (5). */
	expect_error("dat_cno_create", dat_cno_create(ia, agent, &cno));
	expect_error("dat_cno_modify_agent", dat_cno_modify_agent(cno, agent));
	expect_error("dat_cno_query",
		     dat_cno_query(cno, DAT_CNO_FIELD_ALL, &cno_param));
	expect_error("dat_cno_free", dat_cno_free(cno));
	expect_error("dat_cno_wait", dat_cno_wait(cno, 1000, &evd));

	/* EP (16). */
	expect_error("dat_ep_create",
		     dat_ep_create(ia, pz, evd, evd, evd, &ep_attr, &ep));
	expect_error("dat_ep_create_with_srq",
		     dat_ep_create_with_srq(ia, pz, evd, evd, evd, srq,
					    &ep_attr, &ep));
	expect_error("dat_ep_query",
		     dat_ep_query(ep, DAT_EP_FIELD_ALL, &ep_param));
	expect_error("dat_ep_modify",
		     dat_ep_modify(ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS,
				   &ep_param));
	expect_error("dat_ep_connect",
		     dat_ep_connect(ep, &remote_addr, conn_qual, 1000000,
				    (DAT_COUNT)sizeof(pdata), pdata,
				    DAT_QOS_BEST_EFFORT,
				    DAT_CONNECT_DEFAULT_FLAG));
	expect_error("dat_ep_dup_connect",
		     dat_ep_dup_connect(ep, ep, 1000000, 0, NULL,
					DAT_QOS_BEST_EFFORT));
	expect_error("dat_ep_disconnect",
		     dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG));
	expect_error("dat_ep_post_send",
		     dat_ep_post_send(ep, 1, &local_iov, dto_cookie,
				      DAT_COMPLETION_DEFAULT_FLAG));
	expect_error("dat_ep_post_recv",
		     dat_ep_post_recv(ep, 1, &local_iov, dto_cookie,
				      DAT_COMPLETION_DEFAULT_FLAG));
	expect_error("dat_ep_post_rdma_read",
		     dat_ep_post_rdma_read(ep, 1, &local_iov, dto_cookie,
					   &remote_iov,
					   DAT_COMPLETION_DEFAULT_FLAG));
	expect_error("dat_ep_post_rdma_write",
		     dat_ep_post_rdma_write(ep, 1, &local_iov, dto_cookie,
					    &remote_iov,
					    DAT_COMPLETION_DEFAULT_FLAG));
	expect_error("dat_ep_get_status",
		     dat_ep_get_status(ep, &ep_state, &recv_idle,
				       &request_idle));
	expect_error("dat_ep_free", dat_ep_free(ep));
	expect_error("dat_ep_reset", dat_ep_reset(ep));
	expect_error("dat_ep_recv_query",
		     dat_ep_recv_query(ep, &n_bufs, &buf_span));
	expect_error("dat_ep_set_watermark",
		     dat_ep_set_watermark(ep, DAT_HW_DEFAULT, DAT_HW_DEFAULT));

	/* PSP (4). */
	expect_error("dat_psp_create",
		     dat_psp_create(ia, conn_qual, evd, DAT_PSP_CONSUMER_FLAG,
				    &psp));
	expect_error("dat_psp_create_any",
		     dat_psp_create_any(ia, &conn_qual, evd,
					DAT_PSP_PROVIDER_FLAG, &psp));
	expect_error("dat_psp_query",
		     dat_psp_query(psp, DAT_PSP_FIELD_ALL, &psp_param));
	expect_error("dat_psp_free", dat_psp_free(psp));

	/* RSP (3). */
	expect_error("dat_rsp_create",
		     dat_rsp_create(ia, conn_qual + 1, ep, evd, &rsp));
	expect_error("dat_rsp_query",
		     dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &rsp_param));
	expect_error("dat_rsp_free", dat_rsp_free(rsp));

	/* CR (4). */
	expect_error("dat_cr_query",
		     dat_cr_query(cr, DAT_CR_FIELD_ALL, &cr_param));
	expect_error("dat_cr_accept",
		     dat_cr_accept(cr, ep, (DAT_COUNT)sizeof(pdata), pdata));
	expect_error("dat_cr_reject", dat_cr_reject(cr));
	expect_error("dat_cr_handoff", dat_cr_handoff(cr, conn_qual + 2));

	/* SRQ (6). */
	expect_error("dat_srq_create", dat_srq_create(ia, pz, &srq_attr, &srq));
	expect_error("dat_srq_free", dat_srq_free(srq));
	expect_error("dat_srq_post_recv",
		     dat_srq_post_recv(srq, 1, &local_iov, dto_cookie));
	expect_error("dat_srq_query",
		     dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &srq_param));
	expect_error("dat_srq_resize", dat_srq_resize(srq, 32));
	expect_error("dat_srq_set_lw", dat_srq_set_lw(srq, 4));

	/* 72 functions plus the dat_ia_open macro. */
	if (n_calls != 73) {
		printf("FAIL made %d calls, expected 73\n", n_calls);
		n_bad++;
	}
	printf("%d calls, %d unexpected results\n", n_calls, n_bad);
	return n_bad == 0 ? 0 : 1;
}
