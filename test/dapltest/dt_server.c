/*
 * dapltest -T S: the server loop.
 *
 * The main thread listens on the server port (a PSP on -n's qualifier).
 * For each client it accepts a control connection, swaps VERSION, reads
 * the REQUEST and hands the connection to a session thread, which runs
 * the server side of that test (setting up its own per-test PSPs/RSPs on
 * free qualifiers) and answers with a RESULT.  So any number of clients
 * can run tests at once.  A quit request (-T Q) makes the main thread wait
 * for every session, acknowledge, free everything and exit.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_common.h"

struct session {
	struct session		*next;
	const struct dt_ia	*d;
	unsigned		id;
	struct dt_chan		chan;
	struct dt_msg		msg;	/* the REQUEST */
	pthread_t		tid;
	atomic_int		done;
	bool			failed;
};

static const char *test_name(char test)
{
	switch (test) {
	case 'T': return "Transaction";
	case 'P': return "Performance";
	case 'Q': return "Quit";
	default: return "Unknown";
	}
}

static void *session_main(void *arg)
{
	struct session *s = arg;
	const struct dt_request *req = &s->msg.u.request;
	char text[DT_TEXT_MAX + 1] = "";
	size_t len;
	int rc;

	if (req->test == 'T')
		rc = dtc_trans_server(s->d, &s->chan, req, text, sizeof(text));
	else
		rc = dtc_perf_server(s->d, &s->chan, req, text, sizeof(text));
	s->failed = rc != 0;
	dtc_log("Dapltest: %s test #%u from %s: %s%s%s\n", test_name(req->test),
	       s->id, s->chan.peer, rc ? "FAIL" : "PASS", rc ? ": " : "",
	       rc ? text : "");

	/* RESULT is the last message: the client waits for our disconnect.
	 * FLUSHED only means a failed client is gone already. */
	len = dtc_encode_result(dtc_chan_sendbuf(&s->chan), DT_MSG_MAX,
			       rc ? 1 : 0, text);
	if (!dtc_chan_send(&s->chan, len, rc != 0))
		dtc_chan_disconnect(&s->chan, true, DT_HANDSHAKE_TIMEOUT);
	dtc_chan_destroy(&s->chan);
	atomic_store(&s->done, 1);
	return NULL;
}

/* Joins the sessions that are done (all of them with `all`); returns
 * how many of those failed. */
static unsigned reap_sessions(struct session **list, bool all)
{
	unsigned failed = 0;

	for (struct session **pp = list; *pp;) {
		struct session *s = *pp;

		if (!all && !atomic_load(&s->done)) {
			pp = &s->next;
			continue;
		}
		pthread_join(s->tid, NULL);
		if (s->failed)
			failed++;
		*pp = s->next;
		free(s);
	}
	return failed;
}

/*
 * Accepts one client and reads its request.  Returns the session (its
 * control connection up, its REQUEST in s->msg), or NULL when the client
 * was turned away.
 */
static struct session *accept_client(const struct dt_ia *d, DAT_CR_HANDLE cr,
				     unsigned id)
{
	struct session *s = calloc(1, sizeof(*s));
	char err[300];
	DAT_CR_PARAM param;
	DAT_RETURN rc;
	size_t len;

	if (!s) {
		dtc_err("out of memory");
		dat_cr_reject(cr);
		return NULL;
	}
	s->d = d;
	s->id = id;
	if (dtc_chan_create(&s->chan, d)) {
		dat_cr_reject(cr);
		free(s);
		return NULL;
	}
	rc = dat_cr_query(cr, DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR, &param);
	if (rc == DAT_SUCCESS)
		dtc_addr_str(param.remote_ia_address_ptr, s->chan.peer,
			    sizeof(s->chan.peer));
	else
		dtc_dat_err("server", "dat_cr_query", rc);
	if (dtc_chan_accept(&s->chan, cr))
		goto drop;

	if (dtc_chan_recv(&s->chan, DT_HANDSHAKE_TIMEOUT, &s->msg, err, sizeof(err))) {
		dtc_err("client %s: %s", s->chan.peer, err);
		goto drop;
	}
	if (s->msg.type != DT_MSG_VERSION) {
		dtc_err("client %s: message type %u instead of VERSION",
		       s->chan.peer, s->msg.type);
		goto drop;
	}
	/* our version goes back in any case, so the client can say why */
	len = dtc_encode_version(dtc_chan_sendbuf(&s->chan), DT_MSG_MAX);
	if (dtc_chan_send(&s->chan, len, true))
		goto drop;
	if (s->msg.u.version != DT_PROTO_VERSION) {
		dtc_err("client %s speaks dapltest protocol version %u, this "
		       "server %u", s->chan.peer, s->msg.u.version, DT_PROTO_VERSION);
		goto drop;
	}
	err[0] = '\0';
	if (dtc_chan_recv(&s->chan, DT_HANDSHAKE_TIMEOUT, &s->msg, err, sizeof(err)) ||
	    s->msg.type != DT_MSG_REQUEST) {
		if (s->msg.type != DT_MSG_REQUEST && !err[0])
			snprintf(err, sizeof(err), "message type %u instead of REQUEST",
				 s->msg.type);
		dtc_err("client %s: bad request: %s", s->chan.peer, err);
		len = dtc_encode_result(dtc_chan_sendbuf(&s->chan), DT_MSG_MAX, 1, err);
		if (!dtc_chan_send(&s->chan, len, true))
			dtc_chan_disconnect(&s->chan, true, DT_HANDSHAKE_TIMEOUT);
		goto drop;
	}
	return s;
drop:
	dtc_chan_destroy(&s->chan);
	free(s);
	return NULL;
}

static void describe(const struct session *s)
{
	const struct dt_request *r = &s->msg.u.request;

	if (r->test == 'T')
		dtc_log("Dapltest: Transaction test #%u from %s: %u threads x %u EPs, "
		       "%u iterations, %u OPs%s%s%s\n", s->id, s->chan.peer,
		       r->trans.threads, r->trans.eps_per_thread, r->trans.iters,
		       r->trans.user_nops, r->trans.validate ? ", validate" : "",
		       r->trans.poll ? ", poll" : "", r->trans.use_rsp ? ", RSP" : "");
	else if (r->test == 'P')
		dtc_log("Dapltest: Performance test #%u from %s: %s, %u x %u bytes, "
		       "%u operations, pipeline %u, %s\n", s->id, s->chan.peer,
		       r->perf.xfer == DT_RR ? "RDMA Read" : "RDMA Write",
		       r->perf.num_segs, r->perf.seg_size, r->perf.iters,
		       r->perf.pipeline, r->perf.poll ? "polling" : "blocking");
}

int dtc_server_main(const struct dt_params *p)
{
	struct session *sessions = NULL, *quit = NULL;
	unsigned next_id = 1, failed = 0;
	DAT_EVD_HANDLE cr_evd;
	DAT_PSP_HANDLE psp;
	struct dt_ia d;
	DAT_RETURN rc;
	int ret = DT_EXIT_PASS;

	if (dtc_ia_open(&d, p->ia_name))
		return DT_EXIT_FAIL;
	rc = dat_evd_create(d.ia, 64, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("server", "dat_evd_create(CR)", rc);
		dtc_ia_close(&d);
		return DT_EXIT_FAIL;
	}
	rc = dat_psp_create(d.ia, p->port, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp);
	if (rc != DAT_SUCCESS) {
		if (DAT_GET_TYPE(rc) == DAT_CONN_QUAL_IN_USE) {
			dtc_err("server port %u is in use (dat_psp_create: "
			       "DAT_CONN_QUAL_IN_USE); choose another with -n",
			       p->port);
			ret = DT_EXIT_PORT_IN_USE;
		} else {
			dtc_dat_err("server", "dat_psp_create", rc);
			ret = DT_EXIT_FAIL;
		}
		dat_evd_free(cr_evd);
		dtc_ia_close(&d);
		return ret;
	}
	dtc_log("Dapltest: Server on %s, port %u\n", p->ia_name, p->port);

	while (!quit) {
		struct session *s;
		DAT_EVENT ev;

		/* scripts wait for this line before they start clients */
		dtc_log("Dapltest: Service Point Ready - %s\n", p->ia_name);
		rc = dat_evd_wait(cr_evd, DAT_TIMEOUT_INFINITE, 1, &ev,
				  &(DAT_COUNT){ 0 });
		failed += reap_sessions(&sessions, false);
		if (rc != DAT_SUCCESS) {
			dtc_dat_err("server", "dat_evd_wait(CR)", rc);
			ret = DT_EXIT_FAIL;
			break;
		}
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT) {
			dtc_err("server: unexpected %s", dtc_event_name(ev.event_number));
			continue;
		}
		s = accept_client(&d, ev.event_data.cr_arrival_event_data.cr_handle,
				  next_id);
		if (!s)
			continue;
		next_id++;
		if (s->msg.u.request.test == 'Q') {
			dtc_log("Dapltest: Quit request from %s: finishing the running "
			       "tests\n", s->chan.peer);
			quit = s;
			break;
		}
		describe(s);
		if (pthread_create(&s->tid, NULL, session_main, s)) {
			dtc_err("server: cannot start a session thread");
			dtc_chan_destroy(&s->chan);
			free(s);
			continue;
		}
		s->next = sessions;
		sessions = s;
	}

	failed += reap_sessions(&sessions, true);
	if (quit) {
		char text[DT_TEXT_MAX + 1];
		size_t len;

		snprintf(text, sizeof(text), "server exiting; %u tests failed", failed);
		len = dtc_encode_result(dtc_chan_sendbuf(&quit->chan), DT_MSG_MAX, 0, text);
		if (!dtc_chan_send(&quit->chan, len, false))
			dtc_chan_disconnect(&quit->chan, true, DT_HANDSHAKE_TIMEOUT);
		if (dtc_chan_destroy(&quit->chan))
			ret = DT_EXIT_FAIL;
		free(quit);
	}
	rc = dat_psp_free(psp);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("server", "dat_psp_free", rc);
		ret = DT_EXIT_FAIL;
	}
	rc = dat_evd_free(cr_evd);
	if (rc != DAT_SUCCESS) {
		dtc_dat_err("server", "dat_evd_free(CR)", rc);
		ret = DT_EXIT_FAIL;
	}
	if (dtc_ia_close(&d))
		ret = DT_EXIT_FAIL;
	if (failed && ret == DT_EXIT_PASS)
		ret = DT_EXIT_FAIL;
	dtc_log("Dapltest: Server Exiting: %u tests, %u failed\n", next_id - 1 -
	       (quit ? 1 : 0), failed);
	return ret;
}
