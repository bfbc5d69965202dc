/* dtest: the DAT objects (created and freed under the clock, for the
 * setup-cost lines of the report) and the one place that waits for events,
 * in the three ways the options choose: dat_evd_wait, polling with
 * dat_evd_dequeue (-p), or sleeping in dat_cno_wait (-c). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L      /* posix_memalign */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dtest.h"

const char *dt_event_name(DAT_EVENT_NUMBER ev)
{
	switch (ev) {
	case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
	case DAT_RMR_BIND_COMPLETION_EVENT: return "RMR_BIND_COMPLETION";
	case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR:
		return "ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	case DAT_ASYNC_ERROR_EVD_OVERFLOW: return "ASYNC_ERROR_EVD_OVERFLOW";
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC: return "ASYNC_ERROR_IA_CATASTROPHIC";
	case DAT_ASYNC_ERROR_EP_BROKEN: return "ASYNC_ERROR_EP_BROKEN";
	case DAT_ASYNC_ERROR_TIMED_OUT: return "ASYNC_ERROR_TIMED_OUT";
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR:
		return "ASYNC_ERROR_PROVIDER_INTERNAL_ERROR";
	case DAT_SOFTWARE_EVENT: return "SOFTWARE";
	default: return "an unknown event";
	}
}

const char *dt_dto_status_name(DAT_DTO_COMPLETION_STATUS s)
{
	switch (s) {
	case DAT_DTO_SUCCESS: return "SUCCESS";
	case DAT_DTO_ERR_FLUSHED: return "ERR_FLUSHED";
	case DAT_DTO_ERR_LOCAL_LENGTH: return "ERR_LOCAL_LENGTH";
	case DAT_DTO_ERR_LOCAL_EP: return "ERR_LOCAL_EP";
	case DAT_DTO_ERR_LOCAL_PROTECTION: return "ERR_LOCAL_PROTECTION";
	case DAT_DTO_ERR_BAD_RESPONSE: return "ERR_BAD_RESPONSE";
	case DAT_DTO_ERR_REMOTE_ACCESS: return "ERR_REMOTE_ACCESS";
	case DAT_DTO_ERR_REMOTE_RESPONDER: return "ERR_REMOTE_RESPONDER";
	case DAT_DTO_ERR_TRANSPORT: return "ERR_TRANSPORT";
	case DAT_DTO_ERR_RECEIVER_NOT_READY: return "ERR_RECEIVER_NOT_READY";
	case DAT_DTO_ERR_PARTIAL_PACKET: return "ERR_PARTIAL_PACKET";
	case DAT_RMR_OPERATION_FAILED: return "RMR_OPERATION_FAILED";
	default: return "an unknown status";
	}
}

/* ---- waiting for events ------------------------------------------------- */

static DAT_RETURN timed_out(void)
{
	return DAT_ERROR(DAT_TIMEOUT_EXPIRED, 0);
}

static DAT_TIMEOUT remaining_us(double deadline)
{
	double left = deadline - dt_now_us();

	return left <= 0 ? 0 : (DAT_TIMEOUT)left;
}

/* Spin on dat_evd_dequeue, counting the polls that found nothing. */
static DAT_RETURN poll_event(struct dt *t, DAT_EVD_HANDLE evd, double deadline,
			     DAT_EVENT *ev, unsigned long *polls)
{
	unsigned long empty = 0;
	DAT_RETURN rc;

	for (;;) {
		rc = dat_evd_dequeue(evd, ev);
		if (DAT_GET_TYPE(rc) != DAT_QUEUE_EMPTY)
			break;
		empty++;
		/* The clock is cheap, but not free: look at it now and then. */
		if ((empty & 255) == 0 && dt_now_us() >= deadline) {
			rc = timed_out();
			break;
		}
	}
	if (polls)
		*polls += empty;
	if (rc != DAT_SUCCESS && DAT_GET_TYPE(rc) != DAT_TIMEOUT_EXPIRED)
		dt_fail_dat(t, "dat_evd_dequeue", rc);
	return rc;
}

/* Take what is queued; only when the EVD is empty sleep in dat_cno_wait.
 * A wake-up for another EVD of the CNO (or a trigger left from an event
 * already taken) just means looking again. */
static DAT_RETURN cno_event(struct dt *t, DAT_EVD_HANDLE evd, double deadline,
			    DAT_EVENT *ev, unsigned long *polls)
{
	DAT_EVD_HANDLE which;
	DAT_RETURN rc;

	for (;;) {
		rc = dat_evd_dequeue(evd, ev);
		if (rc == DAT_SUCCESS)
			return rc;
		if (DAT_GET_TYPE(rc) != DAT_QUEUE_EMPTY) {
			dt_fail_dat(t, "dat_evd_dequeue", rc);
			return rc;
		}
		if (polls)
			(*polls)++;
		if (dt_now_us() >= deadline)
			return timed_out();
		which = DAT_HANDLE_NULL;
		rc = dat_cno_wait(t->cno, remaining_us(deadline), &which);
		if (DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY)
			continue;       /* timed out: one last look above */
		if (rc != DAT_SUCCESS) {
			dt_fail_dat(t, "dat_cno_wait", rc);
			return rc;
		}
		if (which == DAT_HANDLE_NULL) {
			dt_fail(t, "dat_cno_wait returned no EVD: the CNO lost its EVDs");
			return DAT_ERROR(DAT_INTERNAL_ERROR, 0);
		}
	}
}

/* The next event on evd within timeout_us.  may_poll: this EVD takes DTO
 * completions, which -p polls for; connection events are always waited
 * for.  With -c every EVD but the server's connection-request EVD is on
 * the CNO.  Returns DAT_SUCCESS, DAT_TIMEOUT_EXPIRED (for the caller to
 * report, it knows what was awaited) or the code of a call that failed,
 * reported here. */
DAT_RETURN dt_next_event(struct dt *t, DAT_EVD_HANDLE evd, bool may_poll,
			 DAT_TIMEOUT timeout_us, DAT_EVENT *ev,
			 unsigned long *polls)
{
	double deadline = dt_now_us() + (double)timeout_us;
	DAT_COUNT nmore;
	DAT_RETURN rc;

	memset(ev, 0, sizeof(*ev));
	if (may_poll && t->o->poll)
		return poll_event(t, evd, deadline, ev, polls);
	if (t->cno && evd != t->cr_evd)
		return cno_event(t, evd, deadline, ev, polls);
	rc = dat_evd_wait(evd, timeout_us, 1, ev, &nmore);
	if (rc != DAT_SUCCESS && DAT_GET_TYPE(rc) != DAT_TIMEOUT_EXPIRED)
		dt_fail_dat(t, "dat_evd_wait", rc);
	return rc;
}

/* After a failed transfer: if the connection EVD says the connection has
 * ended, say so (the usual reason is the peer going away). */
void dt_explain_connection(struct dt *t)
{
	DAT_EVENT ev;

	if (!t->conn_evd)
		return;
	memset(&ev, 0, sizeof(ev));
	while (dat_evd_dequeue(t->conn_evd, &ev) == DAT_SUCCESS)
		dt_fail(t, "the connection reported %s%s", dt_event_name(ev.event_number),
			ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
			ev.event_number == DAT_CONNECTION_EVENT_BROKEN ?
			" (did the peer exit?)" : "");
}

/* ---- setup -------------------------------------------------------------- */

/* A zeroed, page-aligned buffer registered as an LMR (local access only:
 * the peer reaches the RDMA buffers through RMRs). */
static int region_create(struct dt *t, struct dt_region *r, size_t len,
			 const char *name)
{
	DAT_REGION_DESCRIPTION region;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;
	void *p;
	double t0;
	DAT_RETURN rc;

	if (posix_memalign(&p, 4096, len)) {
		dt_fail(t, "no memory for the %s buffer (%zu bytes)", name, len);
		return -1;
	}
	memset(p, 0, len);
	r->buf = p;
	r->len = len;
	memset(&region, 0, sizeof(region));
	region.for_va = p;
	t0 = dt_now_us();
	rc = dat_lmr_create(t->ia, DAT_MEM_TYPE_VIRTUAL, region, len, t->pz,
			    DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
			    &r->lmr, &r->lmr_ctx, &rmr_ctx, &reg_len, &reg_addr);
	t->cost[DT_COST_LMR_CREATE] += dt_now_us() - t0;
	if (rc != DAT_SUCCESS) {
		r->lmr = DAT_HANDLE_NULL;
		dt_fail_dat(t, "dat_lmr_create", rc);
		return -1;
	}
	dt_verbose(t, "LMR for the %s buffer: %zu bytes at %p, lmr_context 0x%x",
		   name, len, p, (unsigned)r->lmr_ctx);
	return 0;
}

static int evd_create(struct dt *t, DAT_COUNT qlen, DAT_CNO_HANDLE cno,
		      DAT_EVD_FLAGS flags, DAT_EVD_HANDLE *evd, const char *name)
{
	double t0 = dt_now_us();
	DAT_RETURN rc = dat_evd_create(t->ia, qlen, cno, flags, evd);

	t->cost[DT_COST_EVD_CREATE] += dt_now_us() - t0;
	if (rc != DAT_SUCCESS) {
		*evd = DAT_HANDLE_NULL;
		dt_fail_dat(t, "dat_evd_create", rc);
		return -1;
	}
	dt_verbose(t, "%s EVD created (qlen %d%s)", name, (int)qlen,
		   cno ? ", on the CNO" : "");
	return 0;
}

static int min_int(int a, int b)
{
	return a < b ? a : b;
}

int dt_setup(struct dt *t)
{
	const struct dt_opts *o = t->o;
	size_t burst_bytes = o->buf_len * (size_t)o->burst;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR prov_attr;
	DAT_EVD_HANDLE async;
	DAT_EP_ATTR attr;
	DAT_RETURN rc;
	double t0;
	int reads;

	t->async_evd = DAT_HANDLE_NULL;
	t0 = dt_now_us();
	rc = dat_ia_open((DAT_NAME_PTR)o->provider, 8, &t->async_evd, &t->ia);
	t->cost[DT_COST_OPEN] = dt_now_us() - t0;
	if (rc != DAT_SUCCESS) {
		t->ia = DAT_HANDLE_NULL;
		dt_fail_dat(t, "dat_ia_open", rc);
		dt_fail(t, "could not open the IA \"%s\" (is it in dat.conf? DAT_OVERRIDE names the file)",
			o->provider);
		return -1;
	}
	dt_verbose(t, "IA %s opened", o->provider);

	memset(&ia_attr, 0, sizeof(ia_attr));
	memset(&prov_attr, 0, sizeof(prov_attr));
	rc = dat_ia_query(t->ia, &async, DAT_IA_FIELD_ALL, &ia_attr, 0, &prov_attr);
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_ia_query", rc);
		return -1;
	}
	if (ia_attr.max_dto_per_ep > 0 && o->burst + 4 > ia_attr.max_dto_per_ep) {
		dt_fail(t, "-B %d is too many for this IA: it queues at most %d operations per endpoint",
			o->burst, (int)ia_attr.max_dto_per_ep);
		return -1;
	}

	t0 = dt_now_us();
	rc = dat_pz_create(t->ia, &t->pz);
	t->cost[DT_COST_PZ_CREATE] = dt_now_us() - t0;
	if (rc != DAT_SUCCESS) {
		t->pz = DAT_HANDLE_NULL;
		dt_fail_dat(t, "dat_pz_create", rc);
		return -1;
	}

	t->msg_len = o->buf_len > DT_CTL_LEN ? o->buf_len : DT_CTL_LEN;
	if (region_create(t, &t->wr_target, burst_bytes, "RDMA write target") ||
	    region_create(t, &t->rd_source, burst_bytes, "RDMA read source") ||
	    region_create(t, &t->wr_source, burst_bytes, "RDMA write source") ||
	    region_create(t, &t->rd_target, burst_bytes, "RDMA read target") ||
	    region_create(t, &t->msg_send, t->msg_len, "send") ||
	    region_create(t, &t->msg_recv, t->msg_len * DT_RECV_POOL, "receive"))
		return -1;

	t0 = dt_now_us();
	rc = dat_rmr_create(t->pz, &t->rmr_wr);
	if (rc == DAT_SUCCESS)
		rc = dat_rmr_create(t->pz, &t->rmr_rd);
	t->cost[DT_COST_RMR_CREATE] = dt_now_us() - t0;
	if (rc != DAT_SUCCESS) {
		dt_fail_dat(t, "dat_rmr_create", rc);
		return -1;
	}

	if (o->use_cno) {
		t0 = dt_now_us();
		rc = dat_cno_create(t->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &t->cno);
		t->cost[DT_COST_CNO_CREATE] = dt_now_us() - t0;
		if (rc != DAT_SUCCESS) {
			t->cno = DAT_HANDLE_NULL;
			dt_fail_dat(t, "dat_cno_create", rc);
			return -1;
		}
		dt_verbose(t, "CNO created");
	}

	/* Request EVD: a burst, the control sends and the two RMR binds. */
	if (evd_create(t, o->burst + 8, t->cno,
		       DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG, &t->req_evd,
		       "request") ||
	    evd_create(t, DT_RECV_POOL + 4, t->cno, DAT_EVD_DTO_FLAG,
		       &t->recv_evd, "receive") ||
	    evd_create(t, 8, t->cno, DAT_EVD_CONNECTION_FLAG, &t->conn_evd,
		       "connection") ||
	    (o->server && evd_create(t, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
				     &t->cr_evd, "connection request")))
		return -1;

	/* Up to a burst of RDMA Reads in flight, if the device allows. */
	reads = o->burst;
	if (ia_attr.max_rdma_read_per_ep_in > 0)
		reads = min_int(reads, (int)ia_attr.max_rdma_read_per_ep_in);
	if (ia_attr.max_rdma_read_per_ep_out > 0)
		reads = min_int(reads, (int)ia_attr.max_rdma_read_per_ep_out);
	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = t->msg_len;
	attr.max_rdma_size = o->buf_len;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.max_recv_dtos = DT_RECV_POOL;
	attr.max_request_dtos = o->burst + 4;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	attr.max_rdma_read_in = reads;
	attr.max_rdma_read_out = reads;
	attr.srq_soft_hw = DAT_HW_DEFAULT;
	attr.max_rdma_read_iov = 1;
	attr.max_rdma_write_iov = 1;
	t0 = dt_now_us();
	rc = dat_ep_create(t->ia, t->pz, t->recv_evd, t->req_evd, t->conn_evd,
			   &attr, &t->ep);
	t->cost[DT_COST_EP_CREATE] = dt_now_us() - t0;
	if (rc != DAT_SUCCESS) {
		t->ep = DAT_HANDLE_NULL;
		dt_fail_dat(t, "dat_ep_create", rc);
		return -1;
	}
	dt_verbose(t, "EP created (%d requests, %d receives, %d RDMA reads in flight)",
		   (int)attr.max_request_dtos, (int)attr.max_recv_dtos, reads);
	return 0;
}

/* ---- teardown ----------------------------------------------------------- */

static DAT_RETURN region_free(struct dt *t, struct dt_region *r)
{
	DAT_RETURN rc = DAT_SUCCESS;
	double t0;

	if (r->lmr != DAT_HANDLE_NULL) {
		t0 = dt_now_us();
		rc = dat_lmr_free(r->lmr);
		t->cost[DT_COST_LMR_FREE] += dt_now_us() - t0;
		if (rc != DAT_SUCCESS)
			return rc;      /* keep the memory: the LMR still names it */
		r->lmr = DAT_HANDLE_NULL;
	}
	free(r->buf);
	r->buf = NULL;
	return rc;
}

/* Free *h with free_fn, timed into cost (if not NULL); on success *h
 * becomes NULL.  Returns 0, or -1 after reporting the failure. */
#define FREE_TIMED(h, call, cost_index) \
	do { \
		if ((h) != DAT_HANDLE_NULL) { \
			double t0_ = dt_now_us(); \
			DAT_RETURN rc_ = call(h); \
			t->cost[cost_index] += dt_now_us() - t0_; \
			if (rc_ != DAT_SUCCESS) { \
				dt_fail_dat(t, #call, rc_); \
				return -1; \
			} \
			(h) = DAT_HANDLE_NULL; \
		} \
	} while (0)

int dt_teardown(struct dt *t)
{
	struct dt_region *regions[] = {
		&t->wr_target, &t->rd_source, &t->wr_source, &t->rd_target,
		&t->msg_send, &t->msg_recv,
	};
	DAT_RETURN rc;
	double t0;
	size_t i;

	if (t->psp != DAT_HANDLE_NULL) {
		rc = dat_psp_free(t->psp);
		if (rc != DAT_SUCCESS) {
			dt_fail_dat(t, "dat_psp_free", rc);
			return -1;
		}
		t->psp = DAT_HANDLE_NULL;
	}
	/* The RMRs first: a bound RMR keeps its LMR in use. */
	FREE_TIMED(t->rmr_wr, dat_rmr_free, DT_COST_RMR_FREE);
	FREE_TIMED(t->rmr_rd, dat_rmr_free, DT_COST_RMR_FREE);
	FREE_TIMED(t->ep, dat_ep_free, DT_COST_EP_FREE);
	for (i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		rc = region_free(t, regions[i]);
		if (rc != DAT_SUCCESS) {
			dt_fail_dat(t, "dat_lmr_free", rc);
			return -1;
		}
	}
	FREE_TIMED(t->req_evd, dat_evd_free, DT_COST_EVD_FREE);
	FREE_TIMED(t->recv_evd, dat_evd_free, DT_COST_EVD_FREE);
	FREE_TIMED(t->conn_evd, dat_evd_free, DT_COST_EVD_FREE);
	FREE_TIMED(t->cr_evd, dat_evd_free, DT_COST_EVD_FREE);
	FREE_TIMED(t->cno, dat_cno_free, DT_COST_CNO_FREE);
	FREE_TIMED(t->pz, dat_pz_free, DT_COST_PZ_FREE);
	if (t->ia != DAT_HANDLE_NULL) {
		t0 = dt_now_us();
		rc = dat_ia_close(t->ia, DAT_CLOSE_GRACEFUL_FLAG);
		t->cost[DT_COST_CLOSE] = dt_now_us() - t0;
		if (rc != DAT_SUCCESS) {
			dt_fail_dat(t, "dat_ia_close", rc);
			return -1;
		}
		t->ia = DAT_HANDLE_NULL;
	}
	dt_verbose(t, "all objects freed, IA closed");
	return 0;
}

/* After a failure: free what is left without stopping at errors, then an
 * abrupt close, which frees whatever the graceful calls could not; only
 * then the memory, which a live LMR might still name. */
void dt_teardown_after_error(struct dt *t)
{
	struct dt_region *regions[] = {
		&t->wr_target, &t->rd_source, &t->wr_source, &t->rd_target,
		&t->msg_send, &t->msg_recv,
	};
	size_t i;

	if (t->psp)
		dat_psp_free(t->psp);
	if (t->rmr_wr)
		dat_rmr_free(t->rmr_wr);
	if (t->rmr_rd)
		dat_rmr_free(t->rmr_rd);
	if (t->ep)
		dat_ep_free(t->ep);
	for (i = 0; i < sizeof(regions) / sizeof(regions[0]); i++)
		if (regions[i]->lmr)
			dat_lmr_free(regions[i]->lmr);
	if (t->req_evd)
		dat_evd_free(t->req_evd);
	if (t->recv_evd)
		dat_evd_free(t->recv_evd);
	if (t->conn_evd)
		dat_evd_free(t->conn_evd);
	if (t->cr_evd)
		dat_evd_free(t->cr_evd);
	if (t->cno)
		dat_cno_free(t->cno);
	if (t->pz)
		dat_pz_free(t->pz);
	if (t->ia)
		dat_ia_close(t->ia, DAT_CLOSE_ABRUPT_FLAG);
	for (i = 0; i < sizeof(regions) / sizeof(regions[0]); i++) {
		free(regions[i]->buf);
		regions[i]->buf = NULL;
		regions[i]->lmr = DAT_HANDLE_NULL;
	}
	t->psp = t->rmr_wr = t->rmr_rd = t->ep = DAT_HANDLE_NULL;
	t->req_evd = t->recv_evd = t->conn_evd = t->cr_evd = DAT_HANDLE_NULL;
	t->cno = t->pz = t->ia = DAT_HANDLE_NULL;
}
