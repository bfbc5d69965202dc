/*
 * dapltest -T P: the performance test.  One EP; the client times `iters`
 * RDMA Reads or Writes of num_segs x seg_size bytes into the server's RMR,
 * keeping up to `pipeline` of them outstanding, and reaps completions with
 * dat_evd_wait (-m b) or a dat_evd_dequeue loop (-m p).  The client opens
 * with an empty RMRINFO; the server then binds the RMR, announces it
 * (RMRINFO) and waits for the client's FIN.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>

#include "dt_common.h"

#define CTL_SIZE	512

enum { PK_RDMA = 1, PK_BIND, PK_CTL_SEND, PK_CTL_RECV };

struct pep {
	const struct dt_ia	*d;
	const struct dt_perf_args *pa;
	const char		*side;
	DAT_EVD_HANDLE		conn_evd, cr_evd, recv_evd, req_evd;
	DAT_EP_HANDLE		ep;
	DAT_PSP_HANDLE		psp;
	DAT_RMR_HANDLE		rmr;
	struct dt_mem		mem;	/* data, then CTL send and CTL receive */
	size_t			data_len;
	DAT_CONN_QUAL		qual;
	bool			connected, disconnected;
	DAT_COUNT		requests;	/* the EP's max_request_dtos */
	char			err[400];
	bool			failed;
};

static int pfail(struct pep *p, const char *fmt, ...) DT_PRINTF(2, 3);
static int pfail(struct pep *p, const char *fmt, ...)
{
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	dtc_err("%s: %s", p->side, msg);
	if (!p->failed)
		snprintf(p->err, sizeof(p->err), "%s", msg);
	p->failed = true;
	return -1;
}

static int pfail_dat(struct pep *p, const char *call, DAT_RETURN rc)
{
	char msg[400];

	dtc_dat_errstr(msg, sizeof(msg), "performance test", call, rc);
	return pfail(p, "%s", msg);
}

static DAT_LMR_TRIPLET piov(struct pep *p, size_t off, size_t len)
{
	DAT_LMR_TRIPLET t;

	t.lmr_context = p->mem.lmr_ctx;
	t.pad = 0;
	t.virtual_address = (DAT_VADDR)(uintptr_t)(p->mem.base + off);
	t.segment_length = len;
	return t;
}

static size_t ctl_send_off(const struct pep *p)
{
	return (p->data_len + 63) & ~(size_t)63;
}

static size_t ctl_recv_off(const struct pep *p)
{
	return ctl_send_off(p) + CTL_SIZE;
}

/* The control receive: the peer's next message. */
static int perf_post_recv(struct pep *p)
{
	DAT_LMR_TRIPLET c = piov(p, ctl_recv_off(p), CTL_SIZE);
	DAT_DTO_COOKIE cookie;
	DAT_RETURN rc;

	cookie.as_64 = PK_CTL_RECV;
	rc = dat_ep_post_recv(p->ep, 1, &c, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_ep_post_recv", rc);
	return 0;
}

/* EVDs, the EP and its memory; the control receive posted (the server's:
 * the client's opening RMRINFO; the client's: the server's RMRINFO). */
static int perf_setup(struct pep *p, bool server)
{
	const struct dt_perf_args *pa = p->pa;
	DAT_COUNT reads, requests;
	DAT_EP_ATTR attr;
	DAT_RETURN rc;
	char err[400];

	if ((DAT_COUNT)pa->num_segs > p->d->max_iov)
		return pfail(p, "%u segments; %s allows %d", pa->num_segs,
			     p->d->name, p->d->max_iov);
	/* client: the pipeline and its FIN, as far as the device goes (the
	 * pipeline is cut to fit, see perf_client_run); server: the RMR
	 * bind and RMRINFO */
	requests = server ? 4 : (DAT_COUNT)pa->pipeline + 2;
	if (p->d->max_dtos > 0 && requests > p->d->max_dtos)
		requests = p->d->max_dtos;
	p->requests = requests;
	rc = dat_evd_create(p->d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			    &p->conn_evd);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_create(connect)", rc);
	if (server) {
		rc = dat_evd_create(p->d->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
				    &p->cr_evd);
		if (rc != DAT_SUCCESS)
			return pfail_dat(p, "dat_evd_create(CR)", rc);
	}
	rc = dat_evd_create(p->d->ia, 4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			    &p->recv_evd);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_create(recv)", rc);
	rc = dat_evd_create(p->d->ia, requests + 4, DAT_HANDLE_NULL,
			    DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG, &p->req_evd);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_create(request)", rc);

	/* the reads the client keeps outstanding; the device may allow
	 * fewer (the negotiated value is read back after the connect) */
	reads = (DAT_COUNT)pa->pipeline;
	if (reads > (server ? p->d->max_rdma_read_in : p->d->max_rdma_read_out))
		reads = server ? p->d->max_rdma_read_in : p->d->max_rdma_read_out;
	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = DT_MAX_OP_BYTES;
	attr.max_rdma_size = DT_MAX_OP_BYTES;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.max_recv_dtos = 2;
	attr.max_request_dtos = requests;
	attr.max_recv_iov = (DAT_COUNT)pa->num_segs;
	attr.max_request_iov = (DAT_COUNT)pa->num_segs;
	attr.max_rdma_read_in = server ? reads : 0;
	attr.max_rdma_read_out = server ? 0 : reads;
	attr.srq_soft_hw = DAT_HW_DEFAULT;
	attr.max_rdma_read_iov = (DAT_COUNT)pa->num_segs;
	attr.max_rdma_write_iov = (DAT_COUNT)pa->num_segs;
	rc = dat_ep_create(p->d->ia, p->d->pz, p->recv_evd, p->req_evd,
			   p->conn_evd, &attr, &p->ep);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_ep_create", rc);

	p->data_len = (size_t)pa->seg_size * pa->num_segs;
	if (dtc_mem_create(&p->mem, p->d, ctl_recv_off(p) + CTL_SIZE, err, sizeof(err)))
		return pfail(p, "%s", err);
	if (server && pa->xfer == DT_RR)
		dtc_pattern_fill(p->mem.base, p->data_len, 0, 0);

	return perf_post_recv(p);
}

static void perf_teardown(struct pep *p)
{
	char err[400];
	DAT_RETURN rc;

	if (p->psp && (rc = dat_psp_free(p->psp)) != DAT_SUCCESS)
		pfail_dat(p, "dat_psp_free", rc);
	if (p->connected && !p->disconnected &&
	    (rc = dat_ep_disconnect(p->ep, DAT_CLOSE_ABRUPT_FLAG)) != DAT_SUCCESS)
		pfail_dat(p, "dat_ep_disconnect(abrupt)", rc);
	if (p->rmr && (rc = dat_rmr_free(p->rmr)) != DAT_SUCCESS)
		pfail_dat(p, "dat_rmr_free", rc);
	if (p->ep && (rc = dat_ep_free(p->ep)) != DAT_SUCCESS)
		pfail_dat(p, "dat_ep_free", rc);
	if (dtc_mem_free(&p->mem, err, sizeof(err)))
		pfail(p, "%s", err);
	DAT_EVD_HANDLE evds[] = { p->req_evd, p->recv_evd, p->cr_evd, p->conn_evd };
	for (size_t i = 0; i < sizeof(evds) / sizeof(evds[0]); i++)
		if (evds[i] && (rc = dat_evd_free(evds[i])) != DAT_SUCCESS)
			pfail_dat(p, "dat_evd_free", rc);
}

/* One request completion with this cookie, successful. */
static int perf_wait_request(struct pep *p, uint64_t want, bool poll,
			     DAT_TIMEOUT timeout)
{
	DAT_EVENT ev;
	DAT_RETURN rc = dtc_evd_next(p->req_evd, poll, timeout, &ev);
	uint64_t cookie;
	DAT_DTO_COMPLETION_STATUS status;

	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_wait(request)", rc);
	if (ev.event_number == DAT_DTO_COMPLETION_EVENT) {
		cookie = ev.event_data.dto_completion_event_data.user_cookie.as_64;
		status = ev.event_data.dto_completion_event_data.status;
	} else if (ev.event_number == DAT_RMR_BIND_COMPLETION_EVENT) {
		cookie = ev.event_data.rmr_completion_event_data.user_cookie.as_64;
		status = ev.event_data.rmr_completion_event_data.status;
	} else {
		return pfail(p, "unexpected %s on the request EVD",
			     dtc_event_name(ev.event_number));
	}
	if (cookie != want)
		return pfail(p, "completion %" PRIu64 ", expected %" PRIu64, cookie, want);
	if (status != DAT_DTO_SUCCESS)
		return pfail(p, "completion %" PRIu64 " with %s", cookie,
			     dtc_dto_status_name(status));
	return 0;
}

/* The one message the peer sends; must decode to `type`. */
static int perf_wait_message(struct pep *p, DAT_TIMEOUT timeout, uint16_t type,
			     struct dt_msg *m)
{
	DAT_DTO_COMPLETION_EVENT_DATA dto;
	char err[200];
	DAT_EVENT ev;
	DAT_RETURN rc = dat_evd_wait(p->recv_evd, timeout, 1, &ev, &(DAT_COUNT){ 0 });

	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_wait(recv)", rc);
	dto = ev.event_data.dto_completion_event_data;
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT || dto.status != DAT_DTO_SUCCESS)
		return pfail(p, "receive failed: %s, %s%s", dtc_event_name(ev.event_number),
			     dtc_dto_status_name(dto.status),
			     dto.status == DAT_DTO_ERR_FLUSHED ?
			     " (the peer closed the connection)" : "");
	if (dtc_decode(p->mem.base + ctl_recv_off(p), (size_t)dto.transfered_length,
		      m, err, sizeof(err)))
		return pfail(p, "bad message: %s", err);
	if (m->type != type)
		return pfail(p, "message type %u, expected %u", m->type, type);
	return 0;
}

static int perf_send(struct pep *p, size_t len, bool may_flush)
{
	DAT_LMR_TRIPLET c = piov(p, ctl_send_off(p), len);
	DAT_DTO_COOKIE cookie;
	DAT_EVENT ev;
	DAT_RETURN rc;

	cookie.as_64 = PK_CTL_SEND;
	rc = dat_ep_post_send(p->ep, 1, &c, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_ep_post_send", rc);
	rc = dat_evd_wait(p->req_evd, DT_DTO_TIMEOUT, 1, &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_wait(send)", rc);
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    ev.event_data.dto_completion_event_data.user_cookie.as_64 != PK_CTL_SEND)
		return pfail(p, "unexpected %s", dtc_event_name(ev.event_number));
	if (ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS &&
	    !(may_flush && ev.event_data.dto_completion_event_data.status ==
	      DAT_DTO_ERR_FLUSHED))
		return pfail(p, "send completed with %s", dtc_dto_status_name(
				     ev.event_data.dto_completion_event_data.status));
	return 0;
}

/* One DISCONNECTED, then nothing else on the connect EVD. */
static int perf_wait_disconnect(struct pep *p)
{
	DAT_EVENT ev;
	DAT_RETURN rc = dat_evd_wait(p->conn_evd, DT_SETUP_TIMEOUT, 1, &ev,
				     &(DAT_COUNT){ 0 });

	if (rc != DAT_SUCCESS)
		return pfail(p, "DISCONNECTED event missing (%s)",
			     dtc_is_timeout(rc) ? "timed out" : "wait failed");
	if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
		return pfail(p, "%s instead of DISCONNECTED", dtc_event_name(ev.event_number));
	p->disconnected = true;
	if (dat_evd_dequeue(p->conn_evd, &ev) == DAT_SUCCESS)
		return pfail(p, "extra %s after DISCONNECTED%s",
			     dtc_event_name(ev.event_number),
			     ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ?
			     " (duplicate)" : "");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Server                                                              */
/* ------------------------------------------------------------------ */

static int perf_server_run(struct pep *p, struct dt_chan *ctl)
{
	DAT_CR_ARRIVAL_EVENT_DATA *cra;
	DAT_RMR_TRIPLET mine;
	DAT_LMR_TRIPLET lt;
	DAT_RMR_COOKIE rck;
	DAT_RMR_CONTEXT ctx;
	struct dt_msg *m;
	uint32_t qual;
	DAT_EVENT ev;
	DAT_RETURN rc;
	size_t len;
	int ret = -1;

	rc = dat_psp_create_any(p->d->ia, &p->qual, p->cr_evd,
				DAT_PSP_CONSUMER_FLAG, &p->psp);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_psp_create_any", rc);
	qual = (uint32_t)p->qual;
	len = dtc_encode_reply(dtc_chan_sendbuf(ctl), DT_MSG_MAX, 0, &qual, 1, "ready");
	if (dtc_chan_send(ctl, len, false))
		return pfail(p, "cannot send the REPLY");

	rc = dat_evd_wait(p->cr_evd, DT_SETUP_TIMEOUT, 1, &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_wait(CR)", rc);
	if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
		return pfail(p, "unexpected %s on the CR EVD", dtc_event_name(ev.event_number));
	cra = &ev.event_data.cr_arrival_event_data;
	rc = dat_cr_accept(cra->cr_handle, p->ep, 0, NULL);
	if (rc != DAT_SUCCESS) {
		dat_cr_reject(cra->cr_handle);
		return pfail_dat(p, "dat_cr_accept", rc);
	}
	rc = dat_evd_wait(p->conn_evd, DT_SETUP_TIMEOUT, 1, &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_wait(connect)", rc);
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		return pfail(p, "%s instead of ESTABLISHED", dtc_event_name(ev.event_number));
	p->connected = true;

	/* The connecting side speaks first (iWARP's MPA, RFC 5044; see
	 * exchange_rmrs in dt_trans.c): its RMRINFO, which names nothing */
	m = malloc(sizeof(*m));
	if (!m)
		return pfail(p, "out of memory");
	if (perf_wait_message(p, DT_SETUP_TIMEOUT, DT_MSG_RMRINFO, m) ||
	    perf_post_recv(p))
		goto out;
	if (m->u.rmrinfo.count != 0) {
		pfail(p, "the client's RMRINFO names %u RMRs, not none",
		      m->u.rmrinfo.count);
		goto out;
	}

	rc = dat_rmr_create(p->d->pz, &p->rmr);
	if (rc != DAT_SUCCESS) {
		p->rmr = DAT_HANDLE_NULL;
		pfail_dat(p, "dat_rmr_create", rc);
		goto out;
	}
	lt = piov(p, 0, p->data_len);
	rck.as_64 = PK_BIND;
	rc = dat_rmr_bind(p->rmr, &lt, p->pa->xfer == DT_RR ?
			  DAT_MEM_PRIV_REMOTE_READ_FLAG : DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
			  p->ep, rck, DAT_COMPLETION_DEFAULT_FLAG, &ctx);
	if (rc != DAT_SUCCESS) {
		pfail_dat(p, "dat_rmr_bind", rc);
		goto out;
	}
	if (perf_wait_request(p, PK_BIND, false, DT_DTO_TIMEOUT))
		goto out;
	mine.rmr_context = ctx;
	mine.pad = 0;
	mine.target_address = lt.virtual_address;
	mine.segment_length = lt.segment_length;
	len = dtc_encode_rmrinfo(p->mem.base + ctl_send_off(p), CTL_SIZE, &mine, 1);
	if (perf_send(p, len, false))
		goto out;

	/* the client's FIN ends the run; then it disconnects */
	if (!perf_wait_message(p, DT_PERF_DONE_TIMEOUT, DT_MSG_FIN, m) &&
	    !perf_wait_disconnect(p))
		ret = 0;
out:
	free(m);
	return ret;
}

int dtc_perf_server(const struct dt_ia *d, struct dt_chan *ctl,
		   const struct dt_request *req, char *text, size_t textlen)
{
	struct pep p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.d = d;
	p.pa = &req->perf;
	p.side = "server";
	if (perf_setup(&p, true)) {
		size_t len = dtc_encode_reply(dtc_chan_sendbuf(ctl), DT_MSG_MAX, 1,
					     NULL, 0, p.err);

		dtc_chan_send(ctl, len, true);
		perf_teardown(&p);
		snprintf(text, textlen, "server set-up: %s", p.err);
		return -1;
	}
	ret = perf_server_run(&p, ctl);
	perf_teardown(&p);
	if (ret || p.failed) {
		snprintf(text, textlen, "server: %s", p.err);
		return -1;
	}
	snprintf(text, textlen, "server: performance test passed");
	return 0;
}

/* ------------------------------------------------------------------ */
/* Client                                                              */
/* ------------------------------------------------------------------ */

struct perf_result {
	uint32_t	pipeline;
	double		secs, cpu_secs, post_secs, reap_secs;
	uint64_t	posts, reaps;
	long		vcsw, ivcsw;
};

static double tv_secs(const struct timeval *tv)
{
	return (double)tv->tv_sec + (double)tv->tv_usec * 1e-6;
}

/* The timed loop: keep `pipeline` operations in flight until all done. */
static int perf_loop(struct pep *p, const DAT_RMR_TRIPLET *remote,
		     struct perf_result *r)
{
	const struct dt_perf_args *pa = p->pa;
	DAT_LMR_TRIPLET iov[DT_MAX_SEGS];
	struct rusage ru0, ru1;
	uint64_t posted = 0, done = 0;
	double t0, t1;

	for (uint32_t s = 0; s < pa->num_segs; s++)
		iov[s] = piov(p, (size_t)s * pa->seg_size, pa->seg_size);
	getrusage(RUSAGE_SELF, &ru0);
	t0 = dtc_now();
	while (done < pa->iters) {
		while (posted < pa->iters && posted - done < r->pipeline) {
			DAT_DTO_COOKIE cookie;
			double tp = dtc_now();
			DAT_RETURN rc;

			cookie.as_64 = PK_RDMA;
			if (pa->xfer == DT_RR)
				rc = dat_ep_post_rdma_read(p->ep, (DAT_COUNT)pa->num_segs,
							   iov, cookie, remote,
							   DAT_COMPLETION_DEFAULT_FLAG);
			else
				rc = dat_ep_post_rdma_write(p->ep, (DAT_COUNT)pa->num_segs,
							    iov, cookie, remote,
							    DAT_COMPLETION_DEFAULT_FLAG);
			r->post_secs += dtc_now() - tp;
			if (rc != DAT_SUCCESS)
				return pfail_dat(p, pa->xfer == DT_RR ?
						 "dat_ep_post_rdma_read" :
						 "dat_ep_post_rdma_write", rc);
			posted++;
			r->posts++;
		}
		/* one completion (waiting or polling), then whatever else
		 * is already there */
		double tr = dtc_now();

		if (perf_wait_request(p, PK_RDMA, pa->poll, DT_DTO_TIMEOUT))
			return -1;
		done++;
		while (done < posted) {
			DAT_EVENT ev;
			DAT_RETURN rc = dat_evd_dequeue(p->req_evd, &ev);

			if (DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY)
				break;
			if (rc != DAT_SUCCESS)
				return pfail_dat(p, "dat_evd_dequeue", rc);
			if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
			    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS)
				return pfail(p, "RDMA completion: %s, %s",
					     dtc_event_name(ev.event_number),
					     dtc_dto_status_name(ev.event_data.
						dto_completion_event_data.status));
			done++;
		}
		r->reap_secs += dtc_now() - tr;
		r->reaps++;
	}
	t1 = dtc_now();
	getrusage(RUSAGE_SELF, &ru1);
	r->secs = t1 - t0;
	r->cpu_secs = tv_secs(&ru1.ru_utime) - tv_secs(&ru0.ru_utime) +
		      tv_secs(&ru1.ru_stime) - tv_secs(&ru0.ru_stime);
	r->vcsw = ru1.ru_nvcsw - ru0.ru_nvcsw;
	r->ivcsw = ru1.ru_nivcsw - ru0.ru_nivcsw;
	return 0;
}

static void perf_print(const struct dt_perf_args *pa, const struct perf_result *r)
{
	double secs = r->secs > 0 ? r->secs : 1e-9;
	double mb = (double)pa->iters * pa->seg_size * pa->num_segs / (1024.0 * 1024.0);
	double cpu = 100.0 * r->cpu_secs / secs;
	double ops = (double)pa->iters / secs;
	double lat = 1e6 * secs / pa->iters;
	double post = r->posts ? 1e6 * r->post_secs / (double)r->posts : 0;
	double reap = r->reaps ? 1e6 * r->reap_secs / (double)r->reaps : 0;

	dtc_log("Mode                 : %s\n", pa->poll ? "Polling" : "Blocking");
	dtc_log("Operation Type       : %s\n", pa->xfer == DT_RR ? "RDMA Read" : "RDMA Write");
	dtc_log("Number of Operations : %u\n", pa->iters);
	dtc_log("Segment Size         : %u\n", pa->seg_size);
	dtc_log("Number of Segments   : %u\n", pa->num_segs);
	dtc_log("Pipeline Length      : %u\n", r->pipeline);
	dtc_log("Total Time           : %.4f sec\n", secs);
	dtc_log("Total Data Exchanged : %.2f MB\n", mb);
	dtc_log("CPU Utilization      : %.2f %% (this process)\n", cpu);
	dtc_log("Operation Throughput : %.2f ops/sec\n", ops);
	dtc_log("Bandwidth            : %.2f MB/sec\n", mb / secs);
	dtc_log("Latency              : %.3f us per operation\n", lat);
	dtc_log("Time Per Post        : %.3f us (%" PRIu64 " posts)\n", post, r->posts);
	dtc_log("Time Per Reap        : %.3f us (%" PRIu64 " reaps)\n", reap, r->reaps);
	dtc_log("Context Switches     : %ld voluntary, %ld involuntary\n",
	       r->vcsw, r->ivcsw);
	/* raw: op,mode,ops,seg_size,num_segs,pipeline,secs,MB,cpu%,ops/s,MB/s,
	 *      us/op,us/post,us/reap,posts,reaps,vcsw,ivcsw */
	dtc_log("raw: %s,%s,%u,%u,%u,%u,%.6f,%.3f,%.2f,%.2f,%.3f,%.3f,%.3f,%.3f,"
	       "%" PRIu64 ",%" PRIu64 ",%ld,%ld\n",
	       pa->xfer == DT_RR ? "RR" : "RW", pa->poll ? "p" : "b", pa->iters,
	       pa->seg_size, pa->num_segs, r->pipeline, secs, mb, cpu, ops,
	       mb / secs, lat, post, reap, r->posts, r->reaps, r->vcsw, r->ivcsw);
}

static int perf_client_run(struct pep *p, const struct dt_params *prm,
			   const struct sockaddr *server, uint32_t qual)
{
	const struct dt_perf_args *pa = p->pa;
	struct perf_result r;
	DAT_RMR_TRIPLET remote;
	struct dt_msg *m;
	DAT_EVENT ev;
	DAT_RETURN rc;
	size_t len;

	rc = dat_ep_connect(p->ep, (DAT_IA_ADDRESS_PTR)server, qual,
			    DT_TEST_CONNECT_TIMEOUT, DT_PDATA_LEN, (DAT_PVOID)DT_PDATA,
			    prm->qos, DAT_CONNECT_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_ep_connect", rc);
	rc = dat_evd_wait(p->conn_evd, DT_TEST_CONNECT_TIMEOUT + 5 * DT_SEC, 1, &ev,
			  &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_evd_wait(connect)", rc);
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		return pfail(p, "%s instead of ESTABLISHED", dtc_event_name(ev.event_number));
	p->connected = true;

	/* this side connected: it speaks first (perf_server_run) */
	len = dtc_encode_rmrinfo(p->mem.base + ctl_send_off(p), CTL_SIZE, NULL, 0);
	if (perf_send(p, len, false))
		return -1;
	m = malloc(sizeof(*m));
	if (!m)
		return pfail(p, "out of memory");
	if (perf_wait_message(p, DT_SETUP_TIMEOUT, DT_MSG_RMRINFO, m)) {
		free(m);
		return -1;
	}
	if (m->u.rmrinfo.count != 1 ||
	    m->u.rmrinfo.t[0].segment_length != p->data_len) {
		free(m);
		return pfail(p, "the server's RMR does not cover %zu bytes", p->data_len);
	}
	remote = m->u.rmrinfo.t[0];
	free(m);

	memset(&r, 0, sizeof(r));
	r.pipeline = pa->pipeline;
	if (r.pipeline > (uint32_t)p->requests - 1) {
		/* one request slot stays free for the FIN */
		r.pipeline = (uint32_t)p->requests - 1;
		dtc_log("Dapltest: pipeline lowered to %u, the requests an EP "
			"of %s may have outstanding\n", r.pipeline, p->d->name);
	}
	if (pa->xfer == DT_RR) {
		DAT_EP_PARAM param;

		rc = dat_ep_query(p->ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, &param);
		if (rc != DAT_SUCCESS)
			return pfail_dat(p, "dat_ep_query", rc);
		if (param.ep_attr.max_rdma_read_out < 1)
			return pfail(p, "the connection allows no RDMA Read");
		if ((uint32_t)param.ep_attr.max_rdma_read_out < r.pipeline) {
			r.pipeline = (uint32_t)param.ep_attr.max_rdma_read_out;
			dtc_log("Dapltest: pipeline lowered to %u, the RDMA Reads "
			       "the connection allows\n", r.pipeline);
		}
	}
	if (perf_loop(p, &remote, &r))
		return -1;
	if (pa->xfer == DT_RR) {
		uint8_t want, got;
		size_t bad = dtc_pattern_check(p->mem.base, p->data_len, 0, 0, &want, &got);

		if (bad != p->data_len)
			return pfail(p, "RDMA Read data wrong at byte %zu: 0x%02x, "
				     "expected 0x%02x", bad, got, want);
	}
	len = dtc_encode_fin(p->mem.base + ctl_send_off(p), CTL_SIZE);
	if (perf_send(p, len, false))
		return -1;
	rc = dat_ep_disconnect(p->ep, DAT_CLOSE_GRACEFUL_FLAG);
	if (rc != DAT_SUCCESS)
		return pfail_dat(p, "dat_ep_disconnect", rc);
	if (perf_wait_disconnect(p))
		return -1;
	perf_print(pa, &r);
	return 0;
}

int dtc_perf_client(const struct dt_ia *d, const struct dt_params *prm,
		   const struct sockaddr *server, uint32_t qual)
{
	struct pep p;
	int ret;

	memset(&p, 0, sizeof(p));
	p.d = d;
	p.pa = &prm->perf;
	p.side = "client";
	ret = perf_setup(&p, false);
	if (!ret)
		ret = perf_client_run(&p, prm, server, qual);
	perf_teardown(&p);
	return ret || p.failed ? -1 : 0;
}
