/* Connections between two processes over the IA under test (ofi-tcp on
 * 127.0.0.1), through the public API only.
 *
 * The test process is the client.  The server is a forked child that runs
 * the commands the test sends it over a pipe (listen, wait for a request,
 * accept, reject, disconnect, ...) and answers with what it saw; its own
 * assertions end it with a message the test reports.  Every event a test
 * names is produced for real: a reject by the server, a qual nobody
 * listens on, a request nobody answers, a killed process.
 *
 * DAT_CONNECTION_EVENT_UNREACHABLE needs an address with no route; it is
 * produced in test_objects.c inside a network namespace of its own. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "dat_gen.h"	/* <dat/udat.h>, or <dat2/udat.h> with DAT_GEN=2 */

#include "conn_harness.h"

/* Seeds of the private data patterns. */
#define SEED_CONNECT 11u
#define SEED_ACCEPT 22u
#define SEED_DUP 33u

/* ---- the server process ----------------------------------------------- */

enum {
	/* test -> server */
	C_LISTEN = 1,   /* v0 flags, v1 slot -> REP_QUAL {qual} */
	C_UNLISTEN,     /* v0 slot -> REP_OK */
	C_RSP,          /* -> REP_QUAL {qual, state of the RSP's EP} */
	C_WAIT_CR,      /* -> REP_CR */
	C_ACCEPT,       /* v0 size, v1 rd_in, v2 rd_out, v3 mode -> REP_EST */
	C_ACCEPT_RC,    /* v0 size -> REP_RC {rc}: an accept expected to fail */
	C_REJECT,       /* -> REP_RC {cr_query rc after, ep_query rc of the CR's EP after} */
	C_HANDOFF,      /* v0 qual -> REP_RC {rc} */
	C_WAIT_EVENT,   /* v0 ep index -> REP_EV {event, state} */
	C_DISCONNECT,   /* v0 ep index, v1 flags -> REP_EV {event, state after call, state after event} */
	C_DUP_PASSIVE,  /* v0 ep index -> REP_RC {rc, state of the new EP after} */
	C_SOCKETS,      /* v0 ms -> REP_RC {connected TCP sockets, those with the peer timeout ms} */
	C_QUIT,         /* v0 abrupt: the server cleans up and exits 0 */

	/* server -> test */
	REP_OK = 50,
	REP_QUAL,
	REP_CR,
	REP_EST,
	REP_RC,
	REP_EV,
};

/* C_ACCEPT modes */
enum { A_NEW_EP, A_CR_EP, A_PROVIDER_EP };

#define SLOT_RSP 2
#define MAX_EPS 4

struct server {
	struct hx_peer *peer;
	struct hx_ia x;
	DAT_PSP_HANDLE psp[2];
	DAT_CONN_QUAL qual[2];
	DAT_RSP_HANDLE rsp;
	DAT_CONN_QUAL rsp_qual;
	struct hx_ep rsp_ep;
	DAT_CR_HANDLE cr;                /* the request being handled */
	DAT_EP_HANDLE cr_ep;             /* its local_ep_handle */
	struct hx_ep eps[MAX_EPS];       /* accepted EPs */
	int neps;
};

static void reply(struct server *s, int tag, int64_t a, int64_t b, int64_t c,
		  int64_t d, int64_t e, int64_t f, const void *data, int len)
{
	int64_t v[6] = { a, b, c, d, e, f };

	hx_send(s->peer, tag, v, 6, data, len);
}

static void srv_do_listen(struct server *s, const struct hx_msg *m)
{
	int slot = (int)m->v[1];

	HX_CHECK(slot == 0 || slot == 1, "bad slot %d", slot);
	HX_CHECK(s->psp[slot] == DAT_HANDLE_NULL, "slot %d already listens", slot);
	s->psp[slot] = hx_psp_any(&s->x, (DAT_PSP_FLAGS)m->v[0], &s->qual[slot]);
	reply(s, REP_QUAL, (int64_t)s->qual[slot], 0, 0, 0, 0, 0, NULL, 0);
}

static void srv_do_unlisten(struct server *s, const struct hx_msg *m)
{
	int slot = (int)m->v[0];

	HX_OK(dat_psp_free(s->psp[slot]));
	s->psp[slot] = DAT_HANDLE_NULL;
	reply(s, REP_OK, 0, 0, 0, 0, 0, 0, NULL, 0);
}

static void srv_do_rsp(struct server *s)
{
	DAT_RETURN rc = DAT_SUCCESS;
	int tries;

	hx_ep_create(&s->x, &s->rsp_ep, -1, -1);
	/* RSPs have no create_any: take a qual a PSP just gave back; another
	 * process may grab it in between, hence the retries. */
	for (tries = 0; tries < 20; tries++) {
		s->rsp_qual = hx_free_qual(&s->x);
		rc = dat_rsp_create(s->x.ia, s->rsp_qual, s->rsp_ep.ep, s->x.cr, &s->rsp);
		if (DAT_GET_TYPE(rc) != DAT_CONN_QUAL_IN_USE)
			break;
	}
	HX_OK(rc);
	reply(s, REP_QUAL, (int64_t)s->rsp_qual, hx_state(s->rsp_ep.ep), 0, 0, 0, 0, NULL, 0);
}

static void srv_do_wait_cr(struct server *s)
{
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	DAT_CR_PARAM param;
	int slot = -1, state = -1;

	s->cr = hx_wait_cr(s->x.cr, &arr);
	HX_CHECK(hx_is_own_addr(arr.local_ia_address_ptr),
		 "the request's local_ia_address_ptr is not the IA's address");
	if (arr.sp_handle.psp_handle != DAT_HANDLE_NULL &&
	    arr.sp_handle.psp_handle == s->psp[0])
		slot = 0;
	else if (arr.sp_handle.psp_handle != DAT_HANDLE_NULL &&
		 arr.sp_handle.psp_handle == s->psp[1])
		slot = 1;
	else if (s->rsp && (arr.sp_handle.rsp_handle == s->rsp ||
			    arr.sp_handle.rsp_handle == DAT_HANDLE_NULL))
		slot = SLOT_RSP;
	HX_CHECK(slot >= 0, "the request names service point %p, none of ours",
		 arr.sp_handle.psp_handle);
	HX_CHECK(arr.conn_qual == (slot == SLOT_RSP ? s->rsp_qual : s->qual[slot]),
		 "the request's conn_qual is %llu, the service point's %llu",
		 (unsigned long long)arr.conn_qual,
		 (unsigned long long)(slot == SLOT_RSP ? s->rsp_qual : s->qual[slot]));

	memset(&param, 0, sizeof(param));
	HX_OK(dat_cr_query(s->cr, DAT_CR_FIELD_ALL, &param));
	HX_CHECK(hx_is_peer_addr(param.remote_ia_address_ptr),
		 "dat_cr_query: the remote address is not the client's");
	HX_CHECK(param.private_data_size >= 0 && param.private_data_size <= s->x.max_pdata,
		 "dat_cr_query: private_data_size %d", (int)param.private_data_size);
	HX_CHECK(param.private_data_size == 0 || param.private_data != NULL,
		 "dat_cr_query: %d bytes of private data at NULL",
		 (int)param.private_data_size);
	s->cr_ep = param.local_ep_handle;
	if (slot == SLOT_RSP) {
		HX_CHECK(s->cr_ep == s->rsp_ep.ep,
			 "an RSP's request names EP %p, not the RSP's %p", s->cr_ep,
			 s->rsp_ep.ep);
	} else if (s->psp[slot] != DAT_HANDLE_NULL) {
		DAT_PSP_PARAM pp;

		HX_OK(dat_psp_query(s->psp[slot], DAT_PSP_FIELD_PSP_FLAGS, &pp));
		if (pp.psp_flags == DAT_PSP_CONSUMER_FLAG)
			HX_CHECK(s->cr_ep == DAT_HANDLE_NULL,
				 "a consumer PSP's request names EP %p", s->cr_ep);
		else
			HX_CHECK(s->cr_ep != DAT_HANDLE_NULL,
				 "a PSP_PROVIDER_FLAG request has no EP");
	}
	if (s->cr_ep)
		state = hx_state(s->cr_ep);
	reply(s, REP_CR, param.private_data_size, (int64_t)param.remote_port_qual, state,
	      slot, 0, 0, param.private_data, param.private_data_size);
}

static struct hx_ep *srv_new_slot(struct server *s)
{
	HX_CHECK(s->neps < MAX_EPS, "too many EPs");
	return &s->eps[s->neps++];
}

static void srv_do_accept(struct server *s, const struct hx_msg *m)
{
	unsigned char pdata[256];
	int size = (int)m->v[0], mode = (int)m->v[3], in, out;
	int after_accept;
	DAT_EP_HANDLE accept_ep;
	struct hx_ep *e;
	DAT_EVENT ev;
	DAT_EP_PARAM param;

	HX_CHECK(s->cr != DAT_HANDLE_NULL, "no request to accept");
	hx_pattern(pdata, size, SEED_ACCEPT);
	if (mode == A_NEW_EP) {
		e = srv_new_slot(s);
		hx_ep_create(&s->x, e, (int)m->v[1], (int)m->v[2]);
		accept_ep = e->ep;
	} else if (mode == A_CR_EP) {
		/* the RSP's EP, accepted with NULL */
		HX_CHECK(s->cr_ep == s->rsp_ep.ep, "the request is not the RSP's");
		e = srv_new_slot(s);
		*e = s->rsp_ep;
		memset(&s->rsp_ep, 0, sizeof(s->rsp_ep));
		accept_ep = DAT_HANDLE_NULL;
	} else {
		/* a provider-created EP: give it a PZ and EVDs, accept with NULL */
		HX_CHECK(s->cr_ep != DAT_HANDLE_NULL, "the request has no EP");
		e = srv_new_slot(s);
		e->ep = s->cr_ep;
		HX_OK(dat_evd_create(s->x.ia, 8, DAT_HANDLE_NULL,
				     DAT_EVD_CONNECTION_FLAG, &e->conn));
		memset(&param, 0, sizeof(param));
		param.pz_handle = s->x.pz;
		param.recv_evd_handle = s->x.dto;
		param.request_evd_handle = s->x.dto;
		param.connect_evd_handle = e->conn;
		HX_OK(dat_ep_modify(e->ep, DAT_EP_FIELD_PZ_HANDLE |
				    DAT_EP_FIELD_RECV_EVD_HANDLE |
				    DAT_EP_FIELD_REQUEST_EVD_HANDLE |
				    DAT_EP_FIELD_CONNECT_EVD_HANDLE, &param));
		memset(&param, 0, sizeof(param));
		HX_OK(dat_ep_query(e->ep, DAT_EP_FIELD_PZ_HANDLE |
				   DAT_EP_FIELD_CONNECT_EVD_HANDLE, &param));
		HX_CHECK(param.pz_handle == s->x.pz && param.connect_evd_handle == e->conn,
			 "dat_ep_modify did not set the PZ and connect EVD");
		HX_EXPECT_STATE(e->ep, DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
		accept_ep = DAT_HANDLE_NULL;
	}
	HX_OK(dat_cr_accept(s->cr, accept_ep, size, size ? pdata : NULL));
	s->cr = DAT_HANDLE_NULL;
	s->cr_ep = DAT_HANDLE_NULL;
	after_accept = (int)hx_state(e->ep);
	hx_expect_event(e->conn, DAT_CONNECTION_EVENT_ESTABLISHED, e->ep, &ev);
	HX_EXPECT_STATE(e->ep, DAT_EP_STATE_CONNECTED);
	memset(&param, 0, sizeof(param));
	HX_OK(dat_ep_query(e->ep, DAT_EP_FIELD_ALL, &param));
	HX_CHECK(hx_is_peer_addr(param.remote_ia_address_ptr),
		 "passive EP: remote_ia_address_ptr is not the client's address");
	HX_CHECK(hx_is_own_addr(param.local_ia_address_ptr),
		 "passive EP: local_ia_address_ptr is not the IA's address");
	hx_limits(e->ep, &in, &out);
	reply(s, REP_EST, in, out, after_accept,
	      ev.event_data.connect_event_data.private_data_size,
	      (int64_t)param.remote_port_qual, (int64_t)param.local_port_qual, NULL, 0);
}

static void srv_do_accept_rc(struct server *s, const struct hx_msg *m)
{
	unsigned char pdata[512];
	struct hx_ep e;
	DAT_RETURN rc;
	int size = (int)m->v[0];

	HX_CHECK(size <= (int)sizeof(pdata), "size %d", size);
	hx_pattern(pdata, size, SEED_ACCEPT);
	hx_ep_create(&s->x, &e, -1, -1);
	rc = dat_cr_accept(s->cr, e.ep, size, pdata);
	/* a failed accept leaves the EP as it was */
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_ep_free(&e);
	reply(s, REP_RC, rc, 0, 0, 0, 0, 0, NULL, 0);
}

static void srv_do_reject(struct server *s)
{
	DAT_CR_PARAM param;
	DAT_EP_PARAM ep_param;
	DAT_RETURN cr_rc, ep_rc = DAT_SUCCESS;

	HX_OK(dat_cr_reject(s->cr));
	cr_rc = dat_cr_query(s->cr, DAT_CR_FIELD_ALL, &param);
	if (s->cr_ep)
		ep_rc = dat_ep_query(s->cr_ep, DAT_EP_FIELD_EP_STATE, &ep_param);
	if (s->rsp && s->cr_ep == s->rsp_ep.ep)
		ep_rc = DAT_SUCCESS;    /* the RSP's EP is the consumer's */
	s->cr = DAT_HANDLE_NULL;
	s->cr_ep = DAT_HANDLE_NULL;
	reply(s, REP_RC, cr_rc, ep_rc, 0, 0, 0, 0, NULL, 0);
}

static void srv_do_handoff(struct server *s, const struct hx_msg *m)
{
	DAT_RETURN rc = dat_cr_handoff(s->cr, (DAT_CONN_QUAL)m->v[0]);
	DAT_CR_HANDLE old = s->cr;
	DAT_RETURN query_rc = DAT_SUCCESS;
	DAT_CR_PARAM param;

	if (rc == DAT_SUCCESS) {
		s->cr = DAT_HANDLE_NULL;
		query_rc = dat_cr_query(old, DAT_CR_FIELD_ALL, &param);
	}
	reply(s, REP_RC, rc, query_rc, 0, 0, 0, 0, NULL, 0);
}

static struct hx_ep *srv_ep(struct server *s, const struct hx_msg *m)
{
	int i = (int)m->v[0];

	HX_CHECK(i >= 0 && i < s->neps, "no EP %d", i);
	return &s->eps[i];
}

static void srv_do_wait_event(struct server *s, const struct hx_msg *m)
{
	struct hx_ep *e = srv_ep(s, m);
	DAT_EVENT ev;

	hx_wait(e->conn, &ev);
	HX_CHECK(ev.event_data.connect_event_data.ep_handle == e->ep,
		 "%s event names EP %p, not %p", hx_event_str(ev.event_number),
		 ev.event_data.connect_event_data.ep_handle, e->ep);
	reply(s, REP_EV, ev.event_number, hx_state(e->ep), 0, 0, 0, 0, NULL, 0);
}

static void srv_do_disconnect(struct server *s, const struct hx_msg *m)
{
	struct hx_ep *e = srv_ep(s, m);
	int after_call;
	DAT_EVENT ev;

	HX_OK(dat_ep_disconnect(e->ep, (DAT_CLOSE_FLAGS)m->v[1]));
	after_call = (int)hx_state(e->ep);
	hx_wait(e->conn, &ev);
	HX_CHECK(ev.event_data.connect_event_data.ep_handle == e->ep,
		 "%s event names EP %p, not %p", hx_event_str(ev.event_number),
		 ev.event_data.connect_event_data.ep_handle, e->ep);
	reply(s, REP_EV, ev.event_number, after_call, hx_state(e->ep), 0, 0, 0, NULL, 0);
}

/* This process's connected TCP sockets (*all), and how many of them carry
 * the peer timeout (*tuned): keepalive on and TCP_USER_TIMEOUT ms. */
static void tcp_sockets(unsigned ms, int *all, int *tuned)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;

	*all = *tuned = 0;
	HX_CHECK(d != NULL, "cannot list /proc/self/fd");
	while ((e = readdir(d))) {
		struct sockaddr_storage ss;
		socklen_t len = sizeof(ss);
		int fd = atoi(e->d_name), v = 0, type = 0;
		unsigned uto = 0;

		if (e->d_name[0] == '.' || fd == dirfd(d))
			continue;
		len = sizeof(type);
		if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 ||
		    type != SOCK_STREAM)
			continue;
		len = sizeof(ss);
		if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0 ||
		    (ss.ss_family != AF_INET && ss.ss_family != AF_INET6))
			continue;
		(*all)++;
		len = sizeof(v);
		if (getsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &v, &len) < 0 || !v)
			continue;
		len = sizeof(uto);
		if (getsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &uto, &len) == 0 &&
		    uto == ms)
			(*tuned)++;
	}
	closedir(d);
}

static void srv_do_sockets(struct server *s, const struct hx_msg *m)
{
	int all, tuned;

	tcp_sockets((unsigned)m->v[0], &all, &tuned);
	reply(s, REP_RC, all, tuned, 0, 0, 0, 0, NULL, 0);
}

static void srv_do_dup_passive(struct server *s, const struct hx_msg *m)
{
	struct hx_ep *dup = srv_ep(s, m);
	struct hx_ep e;
	DAT_RETURN rc;
	int state;

	hx_ep_create(&s->x, &e, -1, -1);
	rc = dat_ep_dup_connect(e.ep, dup->ep, HX_CONNECT_US, 0, NULL, DAT_QOS_BEST_EFFORT);
	state = (int)hx_state(e.ep);
	hx_ep_free(&e);
	reply(s, REP_RC, rc, state, 0, 0, 0, 0, NULL, 0);
}

static void srv_cleanup(struct server *s, int abrupt)
{
	int i;

	if (abrupt) {
		HX_OK(dat_ia_close(s->x.ia, DAT_CLOSE_ABRUPT_FLAG));
		return;
	}
	HX_CHECK(s->cr == DAT_HANDLE_NULL, "a request is still pending");
	for (i = 0; i < s->neps; i++)
		hx_ep_free(&s->eps[i]);
	for (i = 0; i < 2; i++)
		if (s->psp[i])
			HX_OK(dat_psp_free(s->psp[i]));
	if (s->rsp)
		HX_OK(dat_rsp_free(s->rsp));
	if (s->rsp_ep.ep)
		hx_ep_free(&s->rsp_ep);
	hx_ia_close(&s->x);
}

static void server_main(struct hx_peer *self, void *arg)
{
	struct server s;
	struct hx_msg m;

	(void)arg;
	memset(&s, 0, sizeof(s));
	s.peer = self;
	hx_ia_open(&s.x);
	for (;;) {
		hx_recv(self, &m);
		switch (m.tag) {
		case C_LISTEN: srv_do_listen(&s, &m); break;
		case C_UNLISTEN: srv_do_unlisten(&s, &m); break;
		case C_RSP: srv_do_rsp(&s); break;
		case C_WAIT_CR: srv_do_wait_cr(&s); break;
		case C_ACCEPT: srv_do_accept(&s, &m); break;
		case C_ACCEPT_RC: srv_do_accept_rc(&s, &m); break;
		case C_REJECT: srv_do_reject(&s); break;
		case C_HANDOFF: srv_do_handoff(&s, &m); break;
		case C_WAIT_EVENT: srv_do_wait_event(&s, &m); break;
		case C_DISCONNECT: srv_do_disconnect(&s, &m); break;
		case C_DUP_PASSIVE: srv_do_dup_passive(&s, &m); break;
		case C_SOCKETS: srv_do_sockets(&s, &m); break;
		case C_QUIT:
			srv_cleanup(&s, (int)m.v[0]);
			return;
		default:
			HX_CHECK(0, "unknown command %d", (int)m.tag);
		}
	}
}

/* ---- the test process's side ------------------------------------------ */

static struct hx_peer srv;
static struct hx_ia cli;

/* The server process first: nothing of libdat may exist before fork. */
static void start(void)
{
	hx_spawn(&srv, "server", server_main, NULL);
	hx_ia_open(&cli);
}

static void cmd(int tag, int64_t a, int64_t b, int64_t c, int64_t d)
{
	int64_t v[4] = { a, b, c, d };

	hx_send(&srv, tag, v, 4, NULL, 0);
}

static DAT_CONN_QUAL srv_listen(DAT_PSP_FLAGS flags, int slot)
{
	struct hx_msg m;

	cmd(C_LISTEN, flags, slot, 0, 0);
	hx_expect_msg(&srv, REP_QUAL, &m);
	return (DAT_CONN_QUAL)m.v[0];
}

static void srv_unlisten(int slot)
{
	struct hx_msg m;

	cmd(C_UNLISTEN, slot, 0, 0, 0);
	hx_expect_msg(&srv, REP_OK, &m);
}

struct srv_cr {
	int size;
	unsigned char data[HX_MSG_DATA];
	DAT_PORT_QUAL remote_port;
	int ep_state;       /* of the request's local EP, -1 without one */
	int slot;
};

static void srv_wait_cr(struct srv_cr *c)
{
	struct hx_msg m;

	cmd(C_WAIT_CR, 0, 0, 0, 0);
	hx_expect_msg(&srv, REP_CR, &m);
	c->size = (int)m.v[0];
	memcpy(c->data, m.data, sizeof(c->data));
	c->remote_port = (DAT_PORT_QUAL)m.v[1];
	c->ep_state = (int)m.v[2];
	c->slot = (int)m.v[3];
}

struct srv_est {
	int in, out;
	int after_accept;   /* state right after dat_cr_accept returned */
	int pdata_size;     /* of the passive side's ESTABLISHED event */
	DAT_PORT_QUAL remote_port, local_port;
};

static void srv_accept(int size, int rd_in, int rd_out, int mode, struct srv_est *e)
{
	struct hx_msg m;

	cmd(C_ACCEPT, size, rd_in, rd_out, mode);
	hx_expect_msg(&srv, REP_EST, &m);
	e->in = (int)m.v[0];
	e->out = (int)m.v[1];
	e->after_accept = (int)m.v[2];
	e->pdata_size = (int)m.v[3];
	e->remote_port = (DAT_PORT_QUAL)m.v[4];
	e->local_port = (DAT_PORT_QUAL)m.v[5];
	ck_assert_msg(e->after_accept == DAT_EP_STATE_COMPLETION_PENDING ||
		      e->after_accept == DAT_EP_STATE_CONNECTED,
		      "server EP after dat_cr_accept: %s, expected COMPLETION_PENDING "
		      "(or CONNECTED if the handshake was already over)",
		      hx_state_str((DAT_EP_STATE)e->after_accept));
	ck_assert_msg(e->pdata_size == 0,
		      "the passive side's ESTABLISHED event has private_data_size %d, "
		      "expected 0", e->pdata_size);
}

static int64_t srv_rc(int tag, int64_t a, int64_t b, int64_t *second)
{
	struct hx_msg m;

	cmd(tag, a, b, 0, 0);
	hx_expect_msg(&srv, REP_RC, &m);
	if (second)
		*second = m.v[1];
	return m.v[0];
}

static DAT_EVENT_NUMBER srv_wait_event(int idx, int *state)
{
	struct hx_msg m;

	cmd(C_WAIT_EVENT, idx, 0, 0, 0);
	hx_expect_msg(&srv, REP_EV, &m);
	*state = (int)m.v[1];
	return (DAT_EVENT_NUMBER)m.v[0];
}

static void srv_quit(int abrupt)
{
	cmd(C_QUIT, abrupt, 0, 0, 0);
	hx_reap(&srv);
}

static void finish(int abrupt_server)
{
	srv_quit(abrupt_server);
	hx_ia_close(&cli);
}

/* Client EP connects with csize bytes (SEED_CONNECT), the server checks
 * them and accepts with ssize bytes (SEED_ACCEPT) on a new EP with the
 * given limits; the client checks its ESTABLISHED event. */
static void connect_pair(struct hx_ep *e, DAT_CONN_QUAL qual, int csize, int ssize,
			 int srv_in, int srv_out, struct srv_est *est)
{
	unsigned char pdata[256];
	struct srv_cr c;
	DAT_EVENT ev;
	DAT_CONNECTION_EVENT_DATA *cd = &ev.event_data.connect_event_data;

	hx_pattern(pdata, csize, SEED_CONNECT);
	hx_connect(e, qual, csize, csize ? pdata : NULL);
	HX_EXPECT_STATE(e->ep, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	srv_wait_cr(&c);
	ck_assert_msg(c.size == csize, "server: dat_cr_query private_data_size %d, sent %d",
		      c.size, csize);
	ck_assert_msg(hx_pattern_ok(c.data, c.size, SEED_CONNECT),
		      "server: the request's private data differs from what was sent");
	srv_accept(ssize, srv_in, srv_out, A_NEW_EP, est);
	hx_expect_event(e->conn, DAT_CONNECTION_EVENT_ESTABLISHED, e->ep, &ev);
	ck_assert_msg(cd->private_data_size == ssize,
		      "ESTABLISHED private_data_size %d, the server accepted with %d",
		      (int)cd->private_data_size, ssize);
	ck_assert_msg(ssize == 0 || cd->private_data != NULL,
		      "ESTABLISHED: %d bytes of private data at NULL", ssize);
	ck_assert_msg(hx_pattern_ok(cd->private_data, ssize, SEED_ACCEPT),
		      "ESTABLISHED: the private data differs from what the server sent");
	HX_EXPECT_STATE(e->ep, DAT_EP_STATE_CONNECTED);
}

/* ---- private data ------------------------------------------------------- */

/* Every pairing of 0, 1 and max bytes, connect x accept. */
START_TEST(private_data_sizes)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int sizes[3], csize, ssize;

	start();
	sizes[0] = 0;
	sizes[1] = 1;
	sizes[2] = cli.max_pdata;
	if (hx_is_ofi_tcp())
		ck_assert_int_eq(cli.max_pdata, 246);
	csize = sizes[_i / 3];
	ssize = sizes[_i % 3];
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, csize, ssize, -1, -1, &est);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* max + 1 bytes: connect fails with ARG5 and the EP stays UNCONNECTED;
 * accept fails with ARG3 and the request can still be accepted. */
START_TEST(private_data_max_plus_one)
{
	unsigned char pdata[300];
	struct sockaddr_in sa;
	struct hx_ep e;
	struct srv_cr c;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	int max;

	start();
	max = cli.max_pdata;
	hx_pattern(pdata, max + 1, SEED_CONNECT);
	hx_loopback(&sa);
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	HX_RC(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, max + 1,
			     pdata, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG), HX_ARG(5));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_expect_empty(e.conn);

	hx_connect(&e, qual, max, pdata);
	srv_wait_cr(&c);
	ck_assert_int_eq(c.size, max);
	ck_assert(hx_pattern_ok(c.data, max, SEED_CONNECT));
	HX_RC((DAT_RETURN)srv_rc(C_ACCEPT_RC, max + 1, 0, NULL), HX_ARG(3));
	srv_accept(max, -1, -1, A_NEW_EP, &est);
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e.ep, &ev);
	ck_assert_int_eq(ev.event_data.connect_event_data.private_data_size, max);
	ck_assert(hx_pattern_ok(ev.event_data.connect_event_data.private_data, max,
				SEED_ACCEPT));
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* ---- RDMA read limits --------------------------------------------------- */

/* Client in 8 / out 4, server in 2 / out 16: client out 2 in 8, server
 * out 8 in 2 (ORD = min(own out, peer in), IRD = min(own in, peer out)). */
START_TEST(read_limits_asymmetric)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int in, out;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, 8, 4);
	hx_limits(e.ep, &in, &out);
	ck_assert_msg(in == 8 && out == 4, "before connecting: in %d out %d, offered 8/4",
		      in, out);
	connect_pair(&e, qual, 0, 0, 2, 16, &est);
	hx_limits(e.ep, &in, &out);
	ck_assert_msg(in == 8 && out == 2, "client negotiated in %d out %d, expected in 8 out 2",
		      in, out);
	ck_assert_msg(est.in == 2 && est.out == 8,
		      "server negotiated in %d out %d, expected in 2 out 8", est.in, est.out);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* A peer that offers no reads: (client in 0 / out 4, server in 2 / out 16)
 * and (client in 8 / out 4, server in 0 / out 0). */
START_TEST(read_limits_peer_offers_zero)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int in, out;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);

	hx_ep_create(&cli, &e, 0, 4);
	connect_pair(&e, qual, 0, 0, 2, 16, &est);
	hx_limits(e.ep, &in, &out);
	ck_assert_msg(in == 0 && out == 2, "client (0/4) negotiated in %d out %d, "
		      "expected in 0 out 2", in, out);
	ck_assert_msg(est.in == 2 && est.out == 0, "server (2/16) negotiated in %d out %d, "
		      "expected in 2 out 0", est.in, est.out);
	hx_ep_free(&e);

	hx_ep_create(&cli, &e, 8, 4);
	connect_pair(&e, qual, 0, 0, 0, 0, &est);
	hx_limits(e.ep, &in, &out);
	ck_assert_msg(in == 0 && out == 0, "client (8/4) negotiated in %d out %d, "
		      "expected in 0 out 0", in, out);
	ck_assert_msg(est.in == 0 && est.out == 0, "server (0/0) negotiated in %d out %d, "
		      "expected in 0 out 0", est.in, est.out);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* ---- queries and states ----------------------------------------------- */

/* Addresses and port quals on both sides, and the state after each step
 * of a connection's life, ending with a reset and a second connection. */
START_TEST(query_and_states)
{
	struct sockaddr_in sa;
	struct hx_ep e;
	struct srv_cr c;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	DAT_EP_PARAM p;
	DAT_EVENT ev;
	int state;

	start();
	hx_loopback(&sa);
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);

	hx_connect(&e, qual, 0, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	HX_RC(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_ACTCONNPENDING));
	srv_wait_cr(&c);
	ck_assert_int_eq(c.ep_state, -1);   /* a consumer PSP's request has no EP */
	srv_accept(0, -1, -1, A_NEW_EP, &est);
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e.ep, &ev);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_CONNECTED);

	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(e.ep, DAT_EP_FIELD_ALL, &p));
	ck_assert_msg(hx_is_peer_addr(p.remote_ia_address_ptr),
		      "remote_ia_address_ptr is not the server's address");
	ck_assert_msg(hx_is_own_addr(p.local_ia_address_ptr),
		      "local_ia_address_ptr is not the IA's address");
	ck_assert_msg(p.remote_port_qual == qual, "remote_port_qual %llu, connected to %llu",
		      (unsigned long long)p.remote_port_qual, (unsigned long long)qual);
	ck_assert_msg(p.local_port_qual >= 1 && p.local_port_qual <= 65535,
		      "local_port_qual %llu", (unsigned long long)p.local_port_qual);
	ck_assert_msg(c.remote_port == p.local_port_qual,
		      "the server's dat_cr_query remote_port_qual %llu, the client's "
		      "local_port_qual %llu", (unsigned long long)c.remote_port,
		      (unsigned long long)p.local_port_qual);
	ck_assert_msg(est.remote_port == p.local_port_qual,
		      "the server EP's remote_port_qual %llu, the client's local_port_qual %llu",
		      (unsigned long long)est.remote_port,
		      (unsigned long long)p.local_port_qual);
	ck_assert_msg(est.local_port == qual, "the server EP's local_port_qual %llu, qual %llu",
		      (unsigned long long)est.local_port, (unsigned long long)qual);
	ck_assert(p.ia_handle == cli.ia);
	ck_assert(p.pz_handle == cli.pz);
	ck_assert(p.connect_evd_handle == e.conn);
	ck_assert(p.recv_evd_handle == cli.dto && p.request_evd_handle == cli.dto);

	/* connected: connect, modify and reset are refused */
	HX_RC(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_CONNECTED));
	HX_RC(dat_ep_reset(e.ep), HX_STATE(DAT_INVALID_STATE_EP_CONNECTED));
	memset(&p, 0, sizeof(p));
	p.ep_attr.max_rdma_read_in = 1;
	HX_RC(dat_ep_modify(e.ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN, &p),
	      HX_STATE(DAT_INVALID_STATE_EP_CONNECTED));

	HX_OK(dat_ep_disconnect(e.ep, DAT_CLOSE_GRACEFUL_FLAG));
	state = (int)hx_state(e.ep);
	ck_assert_msg(state == DAT_EP_STATE_DISCONNECT_PENDING ||
		      state == DAT_EP_STATE_DISCONNECTED,
		      "after a graceful disconnect: %s", hx_state_str((DAT_EP_STATE)state));
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	ck_assert_msg(srv_wait_event(0, &state) == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "the server did not see DISCONNECTED");
	ck_assert_int_eq(state, DAT_EP_STATE_DISCONNECTED);

	/* disconnected: connect needs a reset first */
	HX_RC(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_DISCONNECTED));
	HX_OK(dat_ep_reset(e.ep));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	HX_OK(dat_ep_reset(e.ep));   /* UNCONNECTED: a no-op */
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);

	/* and the same EP connects again */
	connect_pair(&e, qual, 1, 1, -1, -1, &est);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* ---- failed connections ------------------------------------------------- */

/* A peer that vanishes while nothing of ours is unacknowledged (an idle
 * connection, a Send waiting for the peer's delivery report) is noticed
 * within the provider's peer timeout only if the connection's socket
 * has keepalive and a user timeout: on both sides, for the native tcp
 * provider's sockets and for libfabric's (dapl_ofi(3), dapl_tcp(7)).
 * Providers without sockets (verbs) have nothing to show. */
START_TEST(sockets_carry_the_peer_timeout)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int all, tuned;
	int64_t srv_tuned, srv_all;

	ck_assert_int_eq(setenv("DAPL_TCP_PEER_TIMEOUT_MS", "4321", 1), 0);
	ck_assert_int_eq(setenv("DAPL_OFI_PEER_TIMEOUT_MS", "4321", 1), 0);
	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	if (hx_is_ofi_tcp() || hx_is_native_tcp()) {
		tcp_sockets(4321, &all, &tuned);
		ck_assert_msg(all >= 1, "no connected TCP socket in the client");
		ck_assert_msg(tuned == all, "client: %d of %d connected sockets "
			      "have keepalive and a 4321 ms user timeout", tuned, all);
		srv_all = srv_rc(C_SOCKETS, 4321, 0, &srv_tuned);
		ck_assert_msg(srv_all >= 1, "no connected TCP socket in the server");
		ck_assert_msg(srv_tuned == srv_all, "server: %d of %d connected "
			      "sockets have keepalive and a 4321 ms user timeout",
			      (int)srv_tuned, (int)srv_all);
	}
	HX_OK(dat_ep_disconnect(e.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
	hx_ep_free(&e);
	finish(1);
	unsetenv("DAPL_TCP_PEER_TIMEOUT_MS");
	unsetenv("DAPL_OFI_PEER_TIMEOUT_MS");
}
END_TEST

START_TEST(peer_rejected_then_reset_and_reconnect)
{
	struct sockaddr_in sa;
	struct hx_ep e;
	struct srv_cr c;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int64_t ep_rc;

	start();
	hx_loopback(&sa);
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	hx_connect(&e, qual, 0, NULL);
	srv_wait_cr(&c);
	/* the rejected CR's handle is dead */
	HX_RC((DAT_RETURN)srv_rc(C_REJECT, 0, 0, &ep_rc), HX_BADH(DAT_INVALID_HANDLE_CR));
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_PEER_REJECTED, e.ep, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	HX_RC(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
	      HX_STATE(DAT_INVALID_STATE_EP_DISCONNECTED));
	HX_OK(dat_ep_reset(e.ep));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* Nobody listens on a qual whose PSP was freed. */
START_TEST(non_peer_rejected_without_listener)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	srv_unlisten(0);
	hx_ep_create(&cli, &e, -1, -1);
	hx_connect(&e, qual, 0, NULL);
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, e.ep, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	HX_OK(dat_ep_reset(e.ep));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* The server has a PSP and never answers: TIMED_OUT after 200 ms. */
START_TEST(timed_out_when_never_answered)
{
	struct sockaddr_in sa;
	struct hx_ep e;
	DAT_CONN_QUAL qual;

	start();
	hx_loopback(&sa);
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	HX_OK(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, 200000, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_TIMED_OUT, e.ep, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	HX_OK(dat_ep_reset(e.ep));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_ep_free(&e);
	/* the server may hold the unanswered request: close abruptly */
	finish(1);
}
END_TEST

/* The listening process dies after it received the request and before it
 * answered: BROKEN. */
START_TEST(broken_when_listener_dies_during_request)
{
	struct hx_ep e;
	struct srv_cr c;
	DAT_CONN_QUAL qual;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	hx_connect(&e, qual, 0, NULL);
	srv_wait_cr(&c);
	hx_kill(&srv);
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_BROKEN, e.ep, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	HX_OK(dat_ep_reset(e.ep));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_ep_free(&e);
	hx_ia_close(&cli);
}
END_TEST

/* ---- disconnects -------------------------------------------------------- */

/* _i: 0 client graceful, 1 client abrupt, 2 server graceful, 3 server abrupt */
START_TEST(disconnect_each_side)
{
	int by_server = _i >= 2;
	DAT_CLOSE_FLAGS flags = (_i % 2) ? DAT_CLOSE_ABRUPT_FLAG : DAT_CLOSE_GRACEFUL_FLAG;
	struct hx_ep e;
	struct srv_est est;
	struct hx_msg m;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	int state;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);

	if (!by_server) {
		HX_OK(dat_ep_disconnect(e.ep, flags));
		if (flags == DAT_CLOSE_ABRUPT_FLAG) {
			/* disconnected at once, the event already queued */
			HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
			memset(&ev, 0, sizeof(ev));
			HX_OK(dat_evd_dequeue(e.conn, &ev));
			ck_assert_msg(ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED,
				      "after an abrupt disconnect: %s",
				      hx_event_str(ev.event_number));
		} else {
			state = (int)hx_state(e.ep);
			ck_assert_msg(state == DAT_EP_STATE_DISCONNECT_PENDING ||
				      state == DAT_EP_STATE_DISCONNECTED,
				      "after a graceful disconnect: %s",
				      hx_state_str((DAT_EP_STATE)state));
			hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
		}
		HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
		ck_assert_msg(srv_wait_event(0, &state) == DAT_CONNECTION_EVENT_DISCONNECTED,
			      "the server did not see DISCONNECTED");
		ck_assert_int_eq(state, DAT_EP_STATE_DISCONNECTED);
	} else {
		cmd(C_DISCONNECT, 0, flags, 0, 0);
		hx_expect_msg(&srv, REP_EV, &m);
		ck_assert_msg(m.v[0] == DAT_CONNECTION_EVENT_DISCONNECTED,
			      "server's own event after dat_ep_disconnect: %s",
			      hx_event_str((DAT_EVENT_NUMBER)m.v[0]));
		if (flags == DAT_CLOSE_ABRUPT_FLAG)
			ck_assert_msg(m.v[1] == DAT_EP_STATE_DISCONNECTED,
				      "server EP after an abrupt disconnect: %s",
				      hx_state_str((DAT_EP_STATE)m.v[1]));
		else
			ck_assert_msg(m.v[1] == DAT_EP_STATE_DISCONNECT_PENDING ||
				      m.v[1] == DAT_EP_STATE_DISCONNECTED,
				      "server EP after a graceful disconnect: %s",
				      hx_state_str((DAT_EP_STATE)m.v[1]));
		ck_assert_int_eq(m.v[2], DAT_EP_STATE_DISCONNECTED);
		hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
		HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	}
	/* disconnecting a disconnected EP does nothing */
	HX_OK(dat_ep_disconnect(e.ep, DAT_CLOSE_GRACEFUL_FLAG));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	hx_expect_empty(e.conn);
	HX_OK(dat_ep_reset(e.ep));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* The server process is killed while connected: DISCONNECTED or BROKEN
 * (TCP cannot tell a dead process from a disconnect). */
START_TEST(peer_process_killed_while_connected)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	hx_kill(&srv);
	hx_wait(e.conn, &ev);
	ck_assert_msg(ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
		      ev.event_number == DAT_CONNECTION_EVENT_BROKEN,
		      "after the peer was killed: %s, expected DISCONNECTED or BROKEN",
		      hx_event_str(ev.event_number));
	ck_assert(ev.event_data.connect_event_data.ep_handle == e.ep);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	hx_ep_free(&e);
	hx_ia_close(&cli);
}
END_TEST

/* dat_ep_free of a connected EP: the peer sees DISCONNECTED, the freed
 * EP's connect EVD gets nothing. */
START_TEST(free_connected_ep)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int state;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	HX_OK(dat_ep_free(e.ep));
	e.ep = DAT_HANDLE_NULL;
	ck_assert_msg(srv_wait_event(0, &state) == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "the server did not see DISCONNECTED");
	ck_assert_int_eq(state, DAT_EP_STATE_DISCONNECTED);
	hx_expect_empty(e.conn);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* Closing the client's IA abruptly while connected frees everything and
 * disconnects: the server sees DISCONNECTED. */
START_TEST(abrupt_ia_close_disconnects_peer)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int state;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	HX_OK(dat_ia_close(cli.ia, DAT_CLOSE_ABRUPT_FLAG));
	ck_assert_msg(srv_wait_event(0, &state) == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "the server did not see DISCONNECTED");
	ck_assert_int_eq(state, DAT_EP_STATE_DISCONNECTED);
	srv_quit(0);
}
END_TEST

/* ---- dat_ep_dup_connect ------------------------------------------------- */

START_TEST(dup_connect_reaches_the_same_psp)
{
	unsigned char pdata[8];
	struct hx_ep e1, e2;
	struct srv_cr c;
	struct srv_est est1, est2;
	DAT_CONN_QUAL qual;
	DAT_EP_PARAM p;
	DAT_EVENT ev;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e1, -1, -1);
	hx_ep_create(&cli, &e2, -1, -1);
	connect_pair(&e1, qual, 4, 0, -1, -1, &est1);

	hx_pattern(pdata, 5, SEED_DUP);
	HX_OK(dat_ep_dup_connect(e2.ep, e1.ep, HX_CONNECT_US, 5, pdata, DAT_QOS_BEST_EFFORT));
	HX_EXPECT_STATE(e2.ep, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	srv_wait_cr(&c);
	ck_assert_int_eq(c.slot, 0);
	ck_assert_msg(c.size == 5 && hx_pattern_ok(c.data, 5, SEED_DUP),
		      "the second request carries %d bytes, not the dup's 5", c.size);
	srv_accept(3, -1, -1, A_NEW_EP, &est2);
	hx_expect_event(e2.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e2.ep, &ev);
	ck_assert_int_eq(ev.event_data.connect_event_data.private_data_size, 3);
	ck_assert(hx_pattern_ok(ev.event_data.connect_event_data.private_data, 3, SEED_ACCEPT));
	HX_EXPECT_STATE(e2.ep, DAT_EP_STATE_CONNECTED);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(e2.ep, DAT_EP_FIELD_ALL, &p));
	ck_assert(hx_is_peer_addr(p.remote_ia_address_ptr));
	ck_assert_msg(p.remote_port_qual == qual, "dup EP remote_port_qual %llu, qual %llu",
		      (unsigned long long)p.remote_port_qual, (unsigned long long)qual);
	ck_assert_msg(c.remote_port == p.local_port_qual,
		      "the second request came from port %llu, the dup EP has %llu",
		      (unsigned long long)c.remote_port,
		      (unsigned long long)p.local_port_qual);
	HX_EXPECT_STATE(e1.ep, DAT_EP_STATE_CONNECTED);
	hx_ep_free(&e2);
	hx_ep_free(&e1);
	finish(0);
}
END_TEST

/* dup_ep must be CONNECTED: else DAT_INVALID_STATE with its state; ep must
 * be UNCONNECTED; qos, timeout and size are checked as for connect. */
START_TEST(dup_connect_argument_and_state_checks)
{
	unsigned char pdata[300];
	struct hx_ep e, dup;
	struct srv_cr c;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;

	start();
	hx_pattern(pdata, sizeof(pdata), SEED_DUP);
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	hx_ep_create(&cli, &dup, -1, -1);

	HX_RC(dat_ep_dup_connect(e.ep, dup.ep, HX_CONNECT_US, 0, NULL, DAT_QOS_BEST_EFFORT),
	      HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	hx_connect(&dup, qual, 0, NULL);
	HX_RC(dat_ep_dup_connect(e.ep, dup.ep, HX_CONNECT_US, 0, NULL, DAT_QOS_BEST_EFFORT),
	      HX_STATE(DAT_INVALID_STATE_EP_ACTCONNPENDING));
	srv_wait_cr(&c);
	srv_accept(0, -1, -1, A_NEW_EP, &est);
	hx_expect_event(dup.conn, DAT_CONNECTION_EVENT_ESTABLISHED, dup.ep, &ev);

	HX_RC_TYPE(dat_ep_dup_connect(e.ep, dup.ep, HX_CONNECT_US, 0, NULL,
				 DAT_QOS_HIGH_THROUGHPUT), DAT_MODEL_NOT_SUPPORTED);
	HX_RC(dat_ep_dup_connect(e.ep, dup.ep, 0, 0, NULL, DAT_QOS_BEST_EFFORT), HX_ARG(3));
	HX_RC(dat_ep_dup_connect(e.ep, dup.ep, HX_CONNECT_US, cli.max_pdata + 1, pdata,
				 DAT_QOS_BEST_EFFORT), HX_ARG(4));
	/* a connected ep cannot be connected again */
	HX_RC(dat_ep_dup_connect(dup.ep, dup.ep, HX_CONNECT_US, 0, NULL, DAT_QOS_BEST_EFFORT),
	      HX_STATE(DAT_INVALID_STATE_EP_CONNECTED));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_expect_empty(e.conn);

	HX_OK(dat_ep_disconnect(dup.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(dup.conn, DAT_CONNECTION_EVENT_DISCONNECTED, dup.ep, NULL);
	HX_RC(dat_ep_dup_connect(e.ep, dup.ep, HX_CONNECT_US, 0, NULL, DAT_QOS_BEST_EFFORT),
	      HX_STATE(DAT_INVALID_STATE_EP_DISCONNECTED));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_ep_free(&dup);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* The server duplicates its passively connected EP: its remote qual is the
 * client's source port, where nobody listens: ARG2 at once. */
START_TEST(dup_connect_of_passive_ep_is_refused)
{
	struct hx_ep e;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	int64_t state;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	hx_ep_create(&cli, &e, -1, -1);
	connect_pair(&e, qual, 0, 0, -1, -1, &est);
	HX_RC((DAT_RETURN)srv_rc(C_DUP_PASSIVE, 0, 0, &state), HX_ARG(2));
	ck_assert_msg(state == DAT_EP_STATE_UNCONNECTED,
		      "the server's new EP after the refused dup_connect: %s",
		      hx_state_str((DAT_EP_STATE)state));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_CONNECTED);
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* ---- service points ------------------------------------------------------- */

/* An RSP takes one request (its EP goes RESERVED -> PASSIVE_CONNECTION_
 * PENDING), is accepted with a NULL EP, and then stops listening. */
START_TEST(rsp_is_one_shot)
{
	unsigned char pdata[3];
	struct hx_ep e1, e2;
	struct srv_cr c;
	struct srv_est est;
	struct hx_msg m;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;

	start();
	cmd(C_RSP, 0, 0, 0, 0);
	hx_expect_msg(&srv, REP_QUAL, &m);
	qual = (DAT_CONN_QUAL)m.v[0];
	ck_assert_msg(m.v[1] == DAT_EP_STATE_RESERVED, "the RSP's EP is %s, expected RESERVED",
		      hx_state_str((DAT_EP_STATE)m.v[1]));

	hx_ep_create(&cli, &e1, -1, -1);
	hx_pattern(pdata, 3, SEED_CONNECT);
	hx_connect(&e1, qual, 3, pdata);
	srv_wait_cr(&c);
	ck_assert_int_eq(c.slot, SLOT_RSP);
	ck_assert_msg(c.ep_state == DAT_EP_STATE_PASSIVE_CONNECTION_PENDING,
		      "the RSP's EP with a request: %s, expected PASSIVE_CONNECTION_PENDING",
		      hx_state_str((DAT_EP_STATE)c.ep_state));
	ck_assert(c.size == 3 && hx_pattern_ok(c.data, 3, SEED_CONNECT));
	srv_accept(2, -1, -1, A_CR_EP, &est);
	hx_expect_event(e1.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e1.ep, &ev);
	ck_assert_int_eq(ev.event_data.connect_event_data.private_data_size, 2);

	hx_ep_create(&cli, &e2, -1, -1);
	hx_connect(&e2, qual, 0, NULL);
	hx_expect_event(e2.conn, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, e2.ep, NULL);
	HX_EXPECT_STATE(e2.ep, DAT_EP_STATE_DISCONNECTED);
	HX_EXPECT_STATE(e1.ep, DAT_EP_STATE_CONNECTED);
	hx_ep_free(&e2);
	hx_ep_free(&e1);
	finish(0);
}
END_TEST

/* DAT_PSP_PROVIDER_FLAG: the request comes with an EP in TENTATIVE_
 * CONNECTION_PENDING; dat_ep_modify gives it a PZ and EVDs and
 * dat_cr_accept(NULL) connects it.  Rejecting such a request frees its EP. */
START_TEST(psp_provider_flag)
{
	struct hx_ep e1, e2;
	struct srv_cr c;
	struct srv_est est;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	int64_t ep_rc;

	start();
	qual = srv_listen(DAT_PSP_PROVIDER_FLAG, 0);
	hx_ep_create(&cli, &e1, 8, 4);
	hx_connect(&e1, qual, 0, NULL);
	srv_wait_cr(&c);
	ck_assert_msg(c.ep_state == DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING,
		      "the provider's EP: %s, expected TENTATIVE_CONNECTION_PENDING",
		      c.ep_state < 0 ? "none" : hx_state_str((DAT_EP_STATE)c.ep_state));
	srv_accept(7, -1, -1, A_PROVIDER_EP, &est);
	hx_expect_event(e1.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e1.ep, &ev);
	ck_assert_int_eq(ev.event_data.connect_event_data.private_data_size, 7);
	ck_assert(hx_pattern_ok(ev.event_data.connect_event_data.private_data, 7, SEED_ACCEPT));
	HX_EXPECT_STATE(e1.ep, DAT_EP_STATE_CONNECTED);

	hx_ep_create(&cli, &e2, -1, -1);
	hx_connect(&e2, qual, 0, NULL);
	srv_wait_cr(&c);
	ck_assert_int_eq(c.ep_state, DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING);
	HX_RC((DAT_RETURN)srv_rc(C_REJECT, 0, 0, &ep_rc), HX_BADH(DAT_INVALID_HANDLE_CR));
	HX_RC((DAT_RETURN)ep_rc, HX_BADH(DAT_INVALID_HANDLE_EP));
	hx_expect_event(e2.conn, DAT_CONNECTION_EVENT_PEER_REJECTED, e2.ep, NULL);
	hx_ep_free(&e2);
	hx_ep_free(&e1);
	finish(0);
}
END_TEST

/* dat_cr_handoff: to a qual this IA does not listen on (the test process
 * listens there) -> DAT_INVALID_PARAMETER|ARG2 and the CR stays; to the
 * server's second PSP -> a new request there, the old handle dead. */
START_TEST(cr_handoff_to_second_psp)
{
	unsigned char pdata[9];
	struct hx_ep e;
	struct srv_cr c;
	struct srv_est est;
	DAT_CONN_QUAL q0, q1, mine;
	DAT_PSP_HANDLE my_psp;
	DAT_EVENT ev;
	int64_t old_rc;

	start();
	q0 = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	q1 = srv_listen(DAT_PSP_CONSUMER_FLAG, 1);
	ck_assert(q0 != q1);
	my_psp = hx_psp_any(&cli, DAT_PSP_CONSUMER_FLAG, &mine);
	hx_ep_create(&cli, &e, -1, -1);
	hx_pattern(pdata, 9, SEED_CONNECT);
	hx_connect(&e, q0, 9, pdata);
	srv_wait_cr(&c);
	ck_assert_int_eq(c.slot, 0);

	HX_RC((DAT_RETURN)srv_rc(C_HANDOFF, (int64_t)mine, 0, NULL),
	      DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2));
	HX_RC((DAT_RETURN)srv_rc(C_HANDOFF, (int64_t)q1, 0, &old_rc), DAT_SUCCESS);
	HX_RC((DAT_RETURN)old_rc, HX_BADH(DAT_INVALID_HANDLE_CR));
	srv_wait_cr(&c);
	ck_assert_msg(c.slot == 1, "the handed-off request arrived at slot %d, not 1", c.slot);
	ck_assert(c.size == 9 && hx_pattern_ok(c.data, 9, SEED_CONNECT));
	srv_accept(1, -1, -1, A_NEW_EP, &est);
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e.ep, &ev);
	ck_assert_int_eq(ev.event_data.connect_event_data.private_data_size, 1);
	/* nothing ever reached the test process's own PSP */
	hx_expect_empty(cli.cr);
	HX_OK(dat_psp_free(my_psp));
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* A qual another process listens on cannot be taken, by a PSP or an RSP. */
START_TEST(conn_qual_in_use_by_other_process)
{
	struct hx_ep e;
	DAT_CONN_QUAL qual, q2;
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL, mine;
	DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;

	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	if (hx_two_hosts()) {
		/* a qual is a port of one host: the other's is free here */
		HX_OK(dat_psp_create(cli.ia, qual, cli.cr, DAT_PSP_CONSUMER_FLAG, &psp));
		HX_OK(dat_psp_free(psp));
		psp = DAT_HANDLE_NULL;
		finish(0);
		return;
	}
	HX_RC_TYPE(dat_psp_create(cli.ia, qual, cli.cr, DAT_PSP_CONSUMER_FLAG, &psp),
	      DAT_CONN_QUAL_IN_USE);
	hx_ep_create(&cli, &e, -1, -1);
	HX_RC_TYPE(dat_rsp_create(cli.ia, qual, e.ep, cli.cr, &rsp), DAT_CONN_QUAL_IN_USE);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	/* and one this process listens on */
	mine = hx_psp_any(&cli, DAT_PSP_CONSUMER_FLAG, &q2);
	HX_RC_TYPE(dat_psp_create(cli.ia, q2, cli.cr, DAT_PSP_CONSUMER_FLAG, &psp),
	      DAT_CONN_QUAL_IN_USE);
	HX_OK(dat_psp_free(mine));
	hx_ep_free(&e);
	finish(0);
}
END_TEST

/* A raw TCP client opens a connection to the server's PSP, sends the start
 * of a connection request (libfabric's 32-byte header announcing private
 * data on ofi-tcp, the MPA request frame's key and header on tcp) and then
 * nothing, and keeps its socket open (issue 12, item 8).  The server's IA
 * must go on serving: it disconnects the connection it has and accepts a
 * new one meanwhile, and the stranger's connection is cut once the
 * provider's handshake deadline (DAPL_OFI_HANDSHAKE_MS,
 * DAPL_TCP_HANDSHAKE_MS: 300 ms here) has passed.  On ofi-tcp the server
 * process used to hang in its next DAT call, its progress thread stuck in
 * libfabric's recv() with the IA's lock held. */
START_TEST(half_open_stranger_holds_nothing)
{
	static const char mpa_req_key[16] = "MPA ID Req Frame";
	struct hx_ep e1, e2;
	struct srv_est est;
	struct hx_msg m;
	struct sockaddr_in sin;
	unsigned char start_of_request[32];
	DAT_CONN_QUAL qual;
	struct pollfd p;
	char c;
	ssize_t n;
	int fd;

	if (!hx_is_ofi_tcp() && !hx_is_native_tcp()) {
		fprintf(stderr, "half_open_stranger_holds_nothing: %s has no TCP "
			"listener of its own; not run\n", hx_ia_name());
		return;
	}
	setenv("DAPL_OFI_HANDSHAKE_MS", "300", 1);
	setenv("DAPL_TCP_HANDSHAKE_MS", "300", 1);
	start();
	qual = srv_listen(DAT_PSP_CONSUMER_FLAG, 0);
	ck_assert_msg(qual > 0 && qual <= 65535, "qual %llu is not a port",
		      (unsigned long long)qual);
	hx_ep_create(&cli, &e1, -1, -1);
	connect_pair(&e1, qual, 0, 0, -1, -1, &est);

	memset(start_of_request, 0, sizeof(start_of_request));
	if (hx_is_ofi_tcp()) {
		start_of_request[0] = 3;        /* version */
		start_of_request[1] = 0;        /* connection request */
		start_of_request[3] = 10;       /* 10 bytes of private data follow */
		start_of_request[24] = 1;
	} else {
		memcpy(start_of_request, mpa_req_key, 16);
		start_of_request[16] = 0x40;    /* CRC, revision 1, 100 bytes */
		start_of_request[17] = 1;
		start_of_request[19] = 100;
	}
	hx_loopback(&sin);
	sin.sin_port = htons((uint16_t)qual);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0,
		      "the stranger cannot connect: %s", strerror(errno));
	ck_assert_int_eq(write(fd, start_of_request, hx_is_ofi_tcp() ? 32 : 20),
			 hx_is_ofi_tcp() ? 32 : 20);

	/* the server's IA still answers calls and the peer */
	cmd(C_DISCONNECT, 0, DAT_CLOSE_GRACEFUL_FLAG, 0, 0);
	hx_expect_msg(&srv, REP_EV, &m);
	ck_assert_msg(m.v[0] == DAT_CONNECTION_EVENT_DISCONNECTED,
		      "server's own event after dat_ep_disconnect: %s",
		      hx_event_str((DAT_EVENT_NUMBER)m.v[0]));
	hx_expect_event(e1.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e1.ep, NULL);
	/* and takes a new connection */
	hx_ep_create(&cli, &e2, -1, -1);
	connect_pair(&e2, qual, 0, 0, -1, -1, &est);

	/* the stranger's connection ends (bounded by the harness's wait) */
	p.fd = fd;
	p.events = POLLIN;
	ck_assert_msg(poll(&p, 1, (int)(HX_WAIT_US / 1000)) == 1,
		      "the stranger's half-open connection is still open");
	n = read(fd, &c, 1);
	ck_assert_msg(n == 0 || (n < 0 && errno == ECONNRESET),
		      "the stranger read %zd (%s), expected the end of the stream",
		      n, n < 0 ? strerror(errno) : "");
	close(fd);
	hx_ep_free(&e1);
	hx_ep_free(&e2);
	finish(0);
	unsetenv("DAPL_OFI_HANDSHAKE_MS");
	unsetenv("DAPL_TCP_HANDSHAKE_MS");
}
END_TEST

static Suite *conn_suite(void)
{
	Suite *s = suite_create("conn");
	TCase *tc;

	tc = tcase_create("private data");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_loop_test(tc, private_data_sizes, 0, 9);
	tcase_add_test(tc, private_data_max_plus_one);
	suite_add_tcase(s, tc);

	tc = tcase_create("read limits");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, read_limits_asymmetric);
	tcase_add_test(tc, read_limits_peer_offers_zero);
	suite_add_tcase(s, tc);

	tc = tcase_create("states");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, query_and_states);
	suite_add_tcase(s, tc);

	tc = tcase_create("failures");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, peer_rejected_then_reset_and_reconnect);
	tcase_add_test(tc, sockets_carry_the_peer_timeout);
	tcase_add_test(tc, non_peer_rejected_without_listener);
	tcase_add_test(tc, timed_out_when_never_answered);
	tcase_add_test(tc, broken_when_listener_dies_during_request);
	tcase_add_test(tc, half_open_stranger_holds_nothing);
	suite_add_tcase(s, tc);

	tc = tcase_create("disconnect");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_loop_test(tc, disconnect_each_side, 0, 4);
	tcase_add_test(tc, peer_process_killed_while_connected);
	tcase_add_test(tc, free_connected_ep);
	tcase_add_test(tc, abrupt_ia_close_disconnects_peer);
	suite_add_tcase(s, tc);

	tc = tcase_create("dup_connect");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, dup_connect_reaches_the_same_psp);
	tcase_add_test(tc, dup_connect_argument_and_state_checks);
	tcase_add_test(tc, dup_connect_of_passive_ep_is_refused);
	suite_add_tcase(s, tc);

	tc = tcase_create("service points");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, rsp_is_one_shot);
	tcase_add_test(tc, psp_provider_flag);
	tcase_add_test(tc, cr_handoff_to_second_psp);
	tcase_add_test(tc, conn_qual_in_use_by_other_process);
	suite_add_tcase(s, tc);

	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!hx_env_ok()) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	sr = srunner_create(conn_suite());
	/* One process per test: libdat and the provider start fresh, and a
	 * test's server process is its own child. */
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
