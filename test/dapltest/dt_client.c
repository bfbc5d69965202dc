/*
 * dapltest -T T / P / Q: the client.  It connects to the server's port,
 * swaps VERSION, sends the REQUEST and, for T and P, gets a REPLY with the
 * qualifiers of the server's per-test endpoints, runs its side of the test
 * and reads the server's RESULT.  The exit status says whether both sides
 * passed (OFA 1.2's dapltest always exited 0).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt_common.h"

static void describe(const struct dt_params *p)
{
	if (p->test == 'T') {
		const struct dt_trans_args *t = &p->trans;

		dtc_log("Dapltest: Transaction test to %s port %u over %s: %u threads "
		       "x %u EPs, %u iterations, %u OPs%s, %s, %s\n", p->server,
		       p->port, p->ia_name, t->threads, t->eps_per_thread, t->iters,
		       t->user_nops, t->validate ? " (+3 sync, validating)" : "",
		       t->poll ? "polling" : "waiting",
		       t->use_rsp ? "RSP" : "PSP");
		for (uint32_t o = 0; o < t->user_nops; o++)
			dtc_log("Dapltest:   OP %u: %s %s %u x %u%s\n", o + 1,
			       t->ops[o].who == DT_CLIENT ? "client" : "server",
			       dtc_xfer_name(t->ops[o].xfer), t->ops[o].num_segs,
			       t->ops[o].seg_size, t->ops[o].reap_on_recv ? " -f" : "");
	} else if (p->test == 'P') {
		dtc_log("Dapltest: Performance test to %s port %u over %s\n",
		       p->server, p->port, p->ia_name);
	}
}

static int run(const struct dt_params *p, const struct dt_ia *d,
	       struct dt_chan *c, struct sockaddr *server)
{
	struct dt_request req;
	struct dt_msg *m = malloc(sizeof(*m));
	char err[400];
	int local = 0, ret = -1;
	size_t len;

	if (!m) {
		dtc_err("out of memory");
		return -1;
	}
	if (dtc_chan_connect(c, server, p->port, p->qos, err, sizeof(err))) {
		dtc_err("cannot connect to server %s port %u: %s", p->server,
		       p->port, err);
		goto out;
	}
	len = dtc_encode_version(dtc_chan_sendbuf(c), DT_MSG_MAX);
	if (dtc_chan_send(c, len, false))
		goto out;
	if (dtc_chan_recv(c, DT_HANDSHAKE_TIMEOUT, m, err, sizeof(err))) {
		dtc_err("server %s: %s", p->server, err);
		goto out;
	}
	if (m->type != DT_MSG_VERSION || m->u.version != DT_PROTO_VERSION) {
		dtc_err("server %s speaks dapltest protocol version %u, this client %u",
		       p->server, m->type == DT_MSG_VERSION ? m->u.version : 0,
		       DT_PROTO_VERSION);
		goto out;
	}

	memset(&req, 0, sizeof(req));
	req.test = p->test;
	req.debug = (uint8_t)(dtc_debug > 255 ? 255 : dtc_debug);
	req.trans = p->trans;
	req.perf = p->perf;
	len = dtc_encode_request(dtc_chan_sendbuf(c), DT_MSG_MAX, &req);
	if (dtc_chan_send(c, len, false))
		goto out;
	describe(p);

	if (p->test != 'Q') {
		uint32_t want = p->test == 'T' ?
			p->trans.threads * p->trans.eps_per_thread : 1;

		if (dtc_chan_recv(c, DT_SETUP_TIMEOUT + 10 * DT_SEC, m, err, sizeof(err))) {
			dtc_err("server %s: %s", p->server, err);
			goto out;
		}
		if (m->type == DT_MSG_RESULT) {
			dtc_err("server %s refused the test: %s", p->server,
			       m->u.result.text);
			goto out;
		}
		if (m->type != DT_MSG_REPLY) {
			dtc_err("server %s: message type %u instead of REPLY",
			       p->server, m->type);
			goto out;
		}
		if (m->u.reply.status) {
			dtc_err("server %s refused the test: %s", p->server,
			       m->u.reply.text);
			local = -1;	/* its RESULT follows */
		} else if (m->u.reply.nquals != want) {
			dtc_err("server %s gave %u qualifiers for %u EPs", p->server,
			       m->u.reply.nquals, want);
			goto out;
		} else if (p->test == 'T') {
			local = dtc_trans_client(d, p, server, m->u.reply.quals);
		} else {
			local = dtc_perf_client(d, p, server, m->u.reply.quals[0]);
		}
	}

	if (dtc_chan_recv(c, p->test == 'Q' ? DT_QUIT_TIMEOUT : DT_RESULT_TIMEOUT,
			 m, err, sizeof(err))) {
		dtc_err("server %s: no result: %s", p->server, err);
		goto out;
	}
	if (m->type != DT_MSG_RESULT) {
		dtc_err("server %s: message type %u instead of RESULT", p->server, m->type);
		goto out;
	}
	if (m->u.result.status)
		dtc_log("Server result: FAIL: %s\n", m->u.result.text);
	else
		dtc_log("Server result: PASS: %s\n", m->u.result.text);
	/* the server disconnects after its RESULT */
	if (dtc_chan_disconnect(c, false, DT_HANDSHAKE_TIMEOUT))
		goto out;
	if (!local && !m->u.result.status)
		ret = 0;
out:
	free(m);
	return ret;
}

int dtc_client_main(const struct dt_params *p)
{
	struct sockaddr_storage ss;
	struct dt_chan c;
	struct dt_ia d;
	char err[300];
	int ret;

	if (dtc_resolve(p->server, &ss, err, sizeof(err))) {
		dtc_err("%s", err);
		dtc_log("Result: FAIL\n");
		return DT_EXIT_FAIL;
	}
	if (dtc_ia_open(&d, p->ia_name)) {
		dtc_log("Result: FAIL\n");
		return DT_EXIT_FAIL;
	}
	if (dtc_chan_create(&c, &d)) {
		dtc_ia_close(&d);
		dtc_log("Result: FAIL\n");
		return DT_EXIT_FAIL;
	}
	ret = run(p, &d, &c, (struct sockaddr *)&ss);
	if (dtc_chan_destroy(&c))
		ret = -1;
	if (dtc_ia_close(&d))
		ret = -1;
	if (p->test == 'Q' && !ret)
		dtc_log("Dapltest: the server at %s finished its tests and exits\n",
		       p->server);
	dtc_log("Result: %s\n", ret ? "FAIL" : "PASS");
	return ret ? DT_EXIT_FAIL : DT_EXIT_PASS;
}
