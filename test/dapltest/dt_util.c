/*
 * dapltest: messages, event helpers, the IA and memory set-up, and the
 * control channel (one EP with a send buffer and a ring of receives).
 */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "dt_common.h"

/* ------------------------------------------------------------------ */
/* Messages                                                            */
/* ------------------------------------------------------------------ */

void dtc_log(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
}

void dtc_err(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	/* one fputs per line, so lines of several threads do not mix */
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, "dapltest: %s\n", line);
}

void dtc_dbg(int level, const char *fmt, ...)
{
	char line[512];
	va_list ap;

	if (dtc_debug < level)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	printf("DT debug: %s\n", line);
	fflush(stdout);
}

void dtc_dat_errstr(char *buf, size_t len, const char *where, const char *call,
		   DAT_RETURN rc)
{
	const char *type = NULL, *sub = NULL;

	if (dat_strerror(rc, &type, &sub) != DAT_SUCCESS || !type)
		type = "unknown status";
	snprintf(buf, len, "%s: %s failed: %s%s%s (0x%08x)", where, call, type,
		 sub && *sub ? " " : "", sub ? sub : "", (unsigned)rc);
}

void dtc_dat_err(const char *where, const char *call, DAT_RETURN rc)
{
	char buf[400];

	dtc_dat_errstr(buf, sizeof(buf), where, call, rc);
	dtc_err("%s", buf);
}

const char *dtc_event_name(DAT_EVENT_NUMBER n)
{
	switch (n) {
	case DAT_DTO_COMPLETION_EVENT: return "DAT_DTO_COMPLETION_EVENT";
	case DAT_RMR_BIND_COMPLETION_EVENT: return "DAT_RMR_BIND_COMPLETION_EVENT";
	case DAT_CONNECTION_REQUEST_EVENT: return "DAT_CONNECTION_REQUEST_EVENT";
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "DAT_CONNECTION_EVENT_ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "DAT_CONNECTION_EVENT_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "DAT_CONNECTION_EVENT_NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DAT_CONNECTION_EVENT_DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "DAT_CONNECTION_EVENT_BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "DAT_CONNECTION_EVENT_TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "DAT_CONNECTION_EVENT_UNREACHABLE";
	case DAT_ASYNC_ERROR_EVD_OVERFLOW: return "DAT_ASYNC_ERROR_EVD_OVERFLOW";
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC: return "DAT_ASYNC_ERROR_IA_CATASTROPHIC";
	case DAT_ASYNC_ERROR_EP_BROKEN: return "DAT_ASYNC_ERROR_EP_BROKEN";
	case DAT_ASYNC_ERROR_TIMED_OUT: return "DAT_ASYNC_ERROR_TIMED_OUT";
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR: return "DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR";
	case DAT_SOFTWARE_EVENT: return "DAT_SOFTWARE_EVENT";
	}
	return "unknown event";
}

const char *dtc_dto_status_name(DAT_DTO_COMPLETION_STATUS s)
{
	static const char *const names[] = {
		"DAT_DTO_SUCCESS", "DAT_DTO_ERR_FLUSHED", "DAT_DTO_ERR_LOCAL_LENGTH",
		"DAT_DTO_ERR_LOCAL_EP", "DAT_DTO_ERR_LOCAL_PROTECTION",
		"DAT_DTO_ERR_BAD_RESPONSE", "DAT_DTO_ERR_REMOTE_ACCESS",
		"DAT_DTO_ERR_REMOTE_RESPONDER", "DAT_DTO_ERR_TRANSPORT",
		"DAT_DTO_ERR_RECEIVER_NOT_READY", "DAT_DTO_ERR_PARTIAL_PACKET",
		"DAT_RMR_OPERATION_FAILED",
	};

	if ((unsigned)s < sizeof(names) / sizeof(names[0]))
		return names[s];
	return "unknown DTO status";
}

bool dtc_is_timeout(DAT_RETURN rc)
{
	return DAT_GET_TYPE(rc) == DAT_TIMEOUT_EXPIRED;
}

double dtc_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void dtc_addr_str(const struct sockaddr *sa, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?";

	if (!sa) {
		snprintf(buf, len, "?");
		return;
	}
	if (sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)(const void *)sa)->sin_addr,
			  host, sizeof(host));
	else if (sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)(const void *)sa)->sin6_addr,
			  host, sizeof(host));
	snprintf(buf, len, "%s", host);
}

/* A host name or address; IPv4 first, as our providers listen on IPv4. */
int dtc_resolve(const char *host, struct sockaddr_storage *ss, char *err,
	       size_t errlen)
{
	struct addrinfo hints, *res = NULL;
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_INET;
	hints.ai_socktype = SOCK_STREAM;
	rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc) {
		hints.ai_family = AF_UNSPEC;
		rc = getaddrinfo(host, NULL, &hints, &res);
	}
	if (rc || !res) {
		snprintf(err, errlen, "cannot resolve server '%s': %s", host,
			 rc ? gai_strerror(rc) : "no address");
		return -1;
	}
	memset(ss, 0, sizeof(*ss));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

/* ------------------------------------------------------------------ */
/* Events                                                              */
/* ------------------------------------------------------------------ */

DAT_RETURN dtc_evd_next(DAT_EVD_HANDLE evd, bool poll, DAT_TIMEOUT timeout,
		       DAT_EVENT *ev)
{
	DAT_COUNT nmore;
	DAT_RETURN rc;
	double deadline;
	unsigned spins = 0;

	if (!poll)
		return dat_evd_wait(evd, timeout, 1, ev, &nmore);

	deadline = timeout == DAT_TIMEOUT_INFINITE ? 0 :
		   dtc_now() + (double)timeout * 1e-6;
	for (;;) {
		rc = dat_evd_dequeue(evd, ev);
		if (DAT_GET_TYPE(rc) != DAT_QUEUE_EMPTY)
			return rc;
		/* Let the provider's progress thread and the other test
		 * threads run: this machine may have fewer cores than
		 * pollers.  Look at the clock now and then only. */
		sched_yield();
		if (++spins % 256 == 0 && deadline && dtc_now() > deadline)
			return DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
	}
}

/* ------------------------------------------------------------------ */
/* Patterns                                                            */
/* ------------------------------------------------------------------ */

static inline uint8_t pattern_byte(size_t k, uint32_t iter, uint32_t op)
{
	/* consecutive iterations (x37) and OPs (x101) differ in every byte */
	return (uint8_t)(k + (k >> 8) * 3 + iter * 37u + op * 101u + 11u);
}

void dtc_pattern_fill(uint8_t *p, size_t len, uint32_t iter, uint32_t op)
{
	for (size_t k = 0; k < len; k++)
		p[k] = pattern_byte(k, iter, op);
}

size_t dtc_pattern_check(const uint8_t *p, size_t len, uint32_t iter,
			uint32_t op, uint8_t *want, uint8_t *got)
{
	for (size_t k = 0; k < len; k++)
		if (p[k] != pattern_byte(k, iter, op)) {
			*want = pattern_byte(k, iter, op);
			*got = p[k];
			return k;
		}
	return len;
}

/* ------------------------------------------------------------------ */
/* IA and memory                                                       */
/* ------------------------------------------------------------------ */

int dtc_ia_open(struct dt_ia *d, const char *name)
{
	DAT_IA_ATTR ia_attr;
	DAT_RETURN rc;

	memset(d, 0, sizeof(*d));
	d->name = name;
	d->async_evd = DAT_HANDLE_NULL;
	rc = dat_ia_open((const DAT_NAME_PTR)name, 8, &d->async_evd, &d->ia);
	if (rc != DAT_SUCCESS) {
		char where[300];

		snprintf(where, sizeof(where), "cannot open IA '%s'", name);
		dtc_dat_err(where, "dat_ia_open", rc);
		if (DAT_GET_TYPE(rc) == DAT_PROVIDER_NOT_FOUND)
			dtc_err("(no such entry in the dat.conf in use: "
			       "$DAT_OVERRIDE or the system's)");
		return -1;
	}
	rc = dat_ia_query(d->ia, NULL, DAT_IA_FIELD_ALL, &ia_attr,
			  DAT_PROVIDER_FIELD_NONE, NULL);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(name, "dat_ia_query", rc);
		dat_ia_close(d->ia, DAT_CLOSE_ABRUPT_FLAG);
		return -1;
	}
	d->max_iov = ia_attr.max_iov_segments_per_dto;
	d->max_rdma_read_out = ia_attr.max_rdma_read_per_ep_out;
	d->max_rdma_read_in = ia_attr.max_rdma_read_per_ep_in;
	d->max_dtos = ia_attr.max_dto_per_ep;
	d->max_evd_qlen = ia_attr.max_evd_qlen;
	rc = dat_pz_create(d->ia, &d->pz);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(name, "dat_pz_create", rc);
		dat_ia_close(d->ia, DAT_CLOSE_ABRUPT_FLAG);
		return -1;
	}
	dtc_dbg(1, "IA %s open: max iov %d, RDMA Read in %d out %d, DTOs %d",
	       name, d->max_iov, d->max_rdma_read_in, d->max_rdma_read_out,
	       d->max_dtos);
	return 0;
}

int dtc_ia_close(struct dt_ia *d)
{
	DAT_RETURN rc;
	int ret = 0;

	rc = dat_pz_free(d->pz);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(d->name, "dat_pz_free", rc);
		ret = -1;
	}
	/* Graceful: it fails if anything of ours is left, which is a bug. */
	rc = dat_ia_close(d->ia, DAT_CLOSE_GRACEFUL_FLAG);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(d->name, "dat_ia_close(graceful)", rc);
		rc = dat_ia_close(d->ia, DAT_CLOSE_ABRUPT_FLAG);
		if (rc != DAT_SUCCESS)
			dtc_dat_err(d->name, "dat_ia_close(abrupt)", rc);
		ret = -1;
	}
	return ret;
}

int dtc_mem_create(struct dt_mem *m, const struct dt_ia *d, size_t len,
		  char *err, size_t errlen)
{
	DAT_REGION_DESCRIPTION region;
	DAT_RMR_CONTEXT rmr_ctx;
	DAT_VLEN reg_len;
	DAT_VADDR reg_addr;
	DAT_RETURN rc;
	void *p = NULL;

	memset(m, 0, sizeof(*m));
	if (posix_memalign(&p, 4096, len) || !p) {
		snprintf(err, errlen, "cannot allocate %zu bytes", len);
		return -1;
	}
	memset(p, 0, len);
	region.for_va = p;
	rc = dat_lmr_create(d->ia, DAT_MEM_TYPE_VIRTUAL, region, len, d->pz,
			    DAT_MEM_PRIV_ALL_FLAG, &m->lmr, &m->lmr_ctx,
			    &rmr_ctx, &reg_len, &reg_addr);
	if (rc != DAT_SUCCESS) {
		dtc_dat_errstr(err, errlen, "buffers", "dat_lmr_create", rc);
		free(p);
		return -1;
	}
	m->base = p;
	m->len = len;
	return 0;
}

int dtc_mem_free(struct dt_mem *m, char *err, size_t errlen)
{
	DAT_RETURN rc;

	if (!m->base)
		return 0;
	rc = dat_lmr_free(m->lmr);
	if (rc != DAT_SUCCESS) {
		dtc_dat_errstr(err, errlen, "buffers", "dat_lmr_free", rc);
		/* the memory stays registered: do not free it under the LMR */
		return -1;
	}
	free(m->base);
	m->base = NULL;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Control channel                                                     */
/* ------------------------------------------------------------------ */

#define CHAN_SEND_COOKIE	0x5e4dULL

static DAT_LMR_TRIPLET chan_iov(struct dt_chan *c, unsigned slot, size_t len)
{
	DAT_LMR_TRIPLET iov;

	iov.lmr_context = c->mem.lmr_ctx;
	iov.pad = 0;
	iov.virtual_address = (DAT_VADDR)(uintptr_t)(c->mem.base +
						     (size_t)slot * DT_MSG_MAX);
	iov.segment_length = len;
	return iov;
}

static int chan_post_recv(struct dt_chan *c, unsigned slot)
{
	DAT_LMR_TRIPLET iov = chan_iov(c, slot + 1, DT_MSG_MAX);
	DAT_DTO_COOKIE cookie;
	DAT_RETURN rc;

	cookie.as_64 = slot;
	rc = dat_ep_post_recv(c->ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("control connection", "dat_ep_post_recv", rc);
		return -1;
	}
	return 0;
}

int dtc_chan_create(struct dt_chan *c, const struct dt_ia *d)
{
	char err[400];
	DAT_RETURN rc;

	memset(c, 0, sizeof(*c));
	c->d = d;
	snprintf(c->peer, sizeof(c->peer), "?");
	rc = dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->recv_evd);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("control connection", "dat_evd_create(recv)", rc);
		goto fail;
	}
	rc = dat_evd_create(d->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->req_evd);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("control connection", "dat_evd_create(request)", rc);
		goto fail;
	}
	rc = dat_evd_create(d->ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			    &c->conn_evd);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("control connection", "dat_evd_create(connect)", rc);
		goto fail;
	}
	rc = dat_ep_create(d->ia, d->pz, c->recv_evd, c->req_evd, c->conn_evd,
			   NULL, &c->ep);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("control connection", "dat_ep_create", rc);
		goto fail;
	}
	if (dtc_mem_create(&c->mem, d, (size_t)(DT_CHAN_RECVS + 1) * DT_MSG_MAX,
			  err, sizeof(err))) {
		dtc_err("control connection: %s", err);
		goto fail;
	}
	/* receives are posted before the connection exists, so nothing the
	 * peer sends can arrive without one */
	for (unsigned i = 0; i < DT_CHAN_RECVS; i++)
		if (chan_post_recv(c, i))
			goto fail;
	return 0;
fail:
	dtc_chan_destroy(c);
	return -1;
}

uint8_t *dtc_chan_sendbuf(struct dt_chan *c)
{
	return c->mem.base;
}

static const char *connect_failure_reason(DAT_EVENT_NUMBER n)
{
	switch (n) {
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED:
		return "nothing listens on that port, or the provider refused";
	case DAT_CONNECTION_EVENT_PEER_REJECTED:
		return "the server rejected the connection";
	case DAT_CONNECTION_EVENT_TIMED_OUT:
		return "no answer";
	case DAT_CONNECTION_EVENT_UNREACHABLE:
		return "the address cannot be reached";
	case DAT_CONNECTION_EVENT_BROKEN:
		return "the connection broke while it was set up";
	default:
		return "unexpected event";
	}
}

int dtc_chan_connect(struct dt_chan *c, struct sockaddr *addr,
		    DAT_CONN_QUAL qual, DAT_QOS qos, char *err, size_t errlen)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	dtc_addr_str(addr, c->peer, sizeof(c->peer));
	rc = dat_ep_connect(c->ep, addr, qual, DT_CONNECT_TIMEOUT, 0, NULL, qos,
			    DAT_CONNECT_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS) {
		const char *type = NULL, *sub = NULL;

		if (dat_strerror(rc, &type, &sub) != DAT_SUCCESS || !type)
			type = "unknown status";
		/* e.g. ofi-tcp bound to 127.0.0.1 cannot reach another
		 * network: the kernel refuses the connect (EINVAL) */
		snprintf(err, errlen, "dat_ep_connect failed: %s%s%s (0x%08x)%s%s",
			 type, sub && *sub ? " " : "", sub ? sub : "", (unsigned)rc,
			 DAT_GET_TYPE(rc) == DAT_INVALID_PARAMETER ?
			 "; this IA cannot reach that address" : "",
			 DAT_GET_TYPE(rc) == DAT_MODEL_NOT_SUPPORTED &&
			 qos != DAT_QOS_BEST_EFFORT ?
			 "; the provider does not offer that -R QoS" : "");
		return -1;
	}
	/* the provider times the connect out itself; the margin only guards
	 * against a provider that never answers */
	rc = dat_evd_wait(c->conn_evd, DT_CONNECT_TIMEOUT + 5 * DT_SEC, 1, &ev,
			  &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS) {
		if (dtc_is_timeout(rc))
			snprintf(err, errlen, "no connection event within %u s",
				 (DT_CONNECT_TIMEOUT + 5 * DT_SEC) / DT_SEC);
		else
			dtc_dat_errstr(err, errlen, "connect", "dat_evd_wait", rc);
		/* cancel the attempt; its DISCONNECTED event is not needed */
		dat_ep_disconnect(c->ep, DAT_CLOSE_ABRUPT_FLAG);
		return -1;
	}
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED) {
		if (ev.event_number == DAT_CONNECTION_EVENT_TIMED_OUT)
			snprintf(err, errlen, "%s (no answer within %u s)",
				 dtc_event_name(ev.event_number),
				 DT_CONNECT_TIMEOUT / DT_SEC);
		else
			snprintf(err, errlen, "%s (%s)",
				 dtc_event_name(ev.event_number),
				 connect_failure_reason(ev.event_number));
		return -1;
	}
	c->connected = true;
	return 0;
}

int dtc_chan_accept(struct dt_chan *c, DAT_CR_HANDLE cr)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	rc = dat_cr_accept(cr, c->ep, 0, NULL);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(c->peer, "dat_cr_accept", rc);
		dat_cr_reject(cr);
		return -1;
	}
	rc = dat_evd_wait(c->conn_evd, DT_HANDSHAKE_TIMEOUT, 1, &ev,
			  &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(c->peer, "dat_evd_wait(connect)", rc);
		dat_ep_disconnect(c->ep, DAT_CLOSE_ABRUPT_FLAG);
		return -1;
	}
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED) {
		dtc_err("%s: control connection: %s instead of ESTABLISHED",
		       c->peer, dtc_event_name(ev.event_number));
		return -1;
	}
	c->connected = true;
	return 0;
}

int dtc_chan_send(struct dt_chan *c, size_t len, bool may_flush)
{
	DAT_LMR_TRIPLET iov = chan_iov(c, 0, len);
	DAT_DTO_COOKIE cookie;
	DAT_EVENT ev;
	DAT_RETURN rc;

	if (!len) {
		dtc_err("%s: internal error: message too long", c->peer);
		return -1;
	}
	cookie.as_64 = CHAN_SEND_COOKIE;
	rc = dat_ep_post_send(c->ep, 1, &iov, cookie, DAT_COMPLETION_DEFAULT_FLAG);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(c->peer, "dat_ep_post_send", rc);
		return -1;
	}
	rc = dat_evd_wait(c->req_evd, DT_DTO_TIMEOUT, 1, &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(c->peer, "dat_evd_wait(send)", rc);
		return -1;
	}
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
	    ev.event_data.dto_completion_event_data.user_cookie.as_64 != CHAN_SEND_COOKIE) {
		dtc_err("%s: control connection: unexpected %s", c->peer,
		       dtc_event_name(ev.event_number));
		return -1;
	}
	switch (ev.event_data.dto_completion_event_data.status) {
	case DAT_DTO_SUCCESS:
		return 0;
	case DAT_DTO_ERR_FLUSHED:
		if (may_flush)
			return 0;
		/* fall through */
	default:
		dtc_err("%s: control connection: send completed with %s", c->peer,
		       dtc_dto_status_name(ev.event_data.dto_completion_event_data.status));
		return -1;
	}
}

int dtc_chan_recv(struct dt_chan *c, DAT_TIMEOUT timeout, struct dt_msg *m,
		 char *err, size_t errlen)
{
	DAT_DTO_COMPLETION_EVENT_DATA *dto;
	unsigned slot = c->next_recv;
	DAT_EVENT ev;
	DAT_RETURN rc;
	int ret;

	rc = dat_evd_wait(c->recv_evd, timeout, 1, &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS) {
		if (dtc_is_timeout(rc))
			snprintf(err, errlen, "no message from %s within %u s",
				 c->peer, timeout / DT_SEC);
		else
			dtc_dat_errstr(err, errlen, c->peer, "dat_evd_wait(recv)", rc);
		return -1;
	}
	dto = &ev.event_data.dto_completion_event_data;
	if (ev.event_number != DAT_DTO_COMPLETION_EVENT) {
		snprintf(err, errlen, "%s: unexpected %s on the receive EVD",
			 c->peer, dtc_event_name(ev.event_number));
		return -1;
	}
	if (dto->status != DAT_DTO_SUCCESS) {
		if (dto->status == DAT_DTO_ERR_FLUSHED)
			snprintf(err, errlen, "%s closed the connection", c->peer);
		else
			snprintf(err, errlen, "%s: receive completed with %s",
				 c->peer, dtc_dto_status_name(dto->status));
		return -1;
	}
	if (dto->user_cookie.as_64 != slot) {
		snprintf(err, errlen, "%s: receive %llu completed, expected %u",
			 c->peer, (unsigned long long)dto->user_cookie.as_64, slot);
		return -1;
	}
	ret = dtc_decode(c->mem.base + (size_t)(slot + 1) * DT_MSG_MAX,
			(size_t)dto->transfered_length, m, err, errlen);
	c->next_recv = (slot + 1) % DT_CHAN_RECVS;
	if (chan_post_recv(c, slot))
		return -1;
	return ret;
}

int dtc_chan_disconnect(struct dt_chan *c, bool initiate, DAT_TIMEOUT timeout)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	if (!c->connected)
		return 0;
	if (initiate) {
		rc = dat_ep_disconnect(c->ep, DAT_CLOSE_GRACEFUL_FLAG);
		if (rc != DAT_SUCCESS) {
			dtc_dat_err(c->peer, "dat_ep_disconnect", rc);
			return -1;
		}
	}
	rc = dat_evd_wait(c->conn_evd, timeout, 1, &ev, &(DAT_COUNT){ 0 });
	if (rc != DAT_SUCCESS) {
		dtc_dat_err(c->peer, "dat_evd_wait(disconnect)", rc);
		return -1;
	}
	c->connected = false;
	if (ev.event_number != DAT_CONNECTION_EVENT_DISCONNECTED) {
		dtc_err("%s: control connection: %s instead of DISCONNECTED",
		       c->peer, dtc_event_name(ev.event_number));
		return -1;
	}
	return 0;
}

int dtc_chan_destroy(struct dt_chan *c)
{
	char err[400];
	DAT_RETURN rc;
	int ret = 0;

	if (c->ep) {
		/* frees a connected EP too (an abrupt disconnect) */
		rc = dat_ep_free(c->ep);
		if (rc != DAT_SUCCESS) {
			dtc_dat_err("control connection", "dat_ep_free", rc);
			ret = -1;
		}
		c->ep = DAT_HANDLE_NULL;
	}
	if (dtc_mem_free(&c->mem, err, sizeof(err))) {
		dtc_err("control connection: %s", err);
		ret = -1;
	}
	DAT_EVD_HANDLE *evds[] = { &c->recv_evd, &c->req_evd, &c->conn_evd };
	for (size_t i = 0; i < sizeof(evds) / sizeof(evds[0]); i++) {
		if (!*evds[i])
			continue;
		rc = dat_evd_free(*evds[i]);
		if (rc != DAT_SUCCESS) {
			dtc_dat_err("control connection", "dat_evd_free", rc);
			ret = -1;
		}
		*evds[i] = DAT_HANDLE_NULL;
	}
	return ret;
}
