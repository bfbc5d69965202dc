/*
 * dapltest -T F -f connmgt: connection management.  Cases 0 and 1 are
 * OpenFabrics' (dat_evd_wait timeouts on a listening PSP's EVD).  The
 * others are ours: the connection cases OpenFabrics left to its never
 * written connmgt_client, done inside one process, a listening IA and a
 * connecting IA over the IA's own address (127.0.0.1 on ofi-tcp).  The
 * qualifiers are always ones the provider picked free.
 */
#include <string.h>

#include "dt_lf_fft.h"

#define TIMEOUT_EXPIRED DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE)
#define BAD_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)

/* dapltest's transaction test sends these 30 bytes with its connect. */
static const char client_pdata[] = "DAPL and RDMA rule! Test 4321.";
#define CLIENT_PDATA_SIZE ((DAT_COUNT)(sizeof(client_pdata) - 1))
static const char server_pdata[] = "accepted by dapltest -T F";
#define SERVER_PDATA_SIZE ((DAT_COUNT)(sizeof(server_pdata) - 1))

/* The EP's state must be `want`. */
static void check_state(struct dt_fft_ctx *ctx, DAT_EP_HANDLE ep,
			DAT_EP_STATE want, const char *who)
{
	DAT_EP_STATE state = (DAT_EP_STATE)-1;
	DAT_BOOLEAN recv_idle, req_idle;
	char call[96];

	snprintf(call, sizeof(call), "dat_ep_get_status (%s)", who);
	if (DT_CHECK_RC(ctx, call, dat_ep_get_status(ep, &state, &recv_idle,
			&req_idle), DAT_SUCCESS))
		DT_CHECK(ctx, state == want, "%s EP state %d, want %d", who,
			 (int)state, (int)want);
}

/* A listening kit as OpenFabrics' server side has it: a PSP on the CR
 * EVD.  The wait on that EVD must time out, and not before its time. */
static void wait_timeout(struct dt_fft_ctx *ctx, DAT_TIMEOUT timeout)
{
	struct dt_kit kit;
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;
	DAT_CONN_QUAL qual;
	DAT_EVENT ev;
	DAT_COUNT nmore = -1;
	unsigned long long start, elapsed;
	DAT_RETURN rc;

	if (!dt_kit_open(ctx, &kit, DT_KIT_CR_EVD))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_psp_create_any",
			 dat_psp_create_any(kit.ia, &qual, kit.cr_evd,
					    DAT_PSP_CONSUMER_FLAG, &psp),
			 DAT_SUCCESS)) {
		psp = DAT_HANDLE_NULL;
		goto out;
	}
	start = dt_now_us();
	rc = dat_evd_wait(kit.cr_evd, timeout, 1, &ev, &nmore);
	elapsed = dt_now_us() - start;
	DT_CHECK_RC(ctx, "dat_evd_wait (nobody connects)", rc,
		    TIMEOUT_EXPIRED);
	DT_CHECK(ctx, nmore == 0, "nmore is 0 after the timeout (got %d)",
		 (int)nmore);
	/* only a lower bound: a busy machine may wake us late */
	DT_CHECK(ctx, elapsed >= timeout,
		 "the wait took at least the timeout: %llu us for %u us",
		 elapsed, (unsigned)timeout);
	if (ctx->common.debug)
		dt_note("waited %llu us for a timeout of %u us", elapsed,
			(unsigned)timeout);
out:
	if (psp)
		DT_CHECK_RC(ctx, "dat_psp_free", dat_psp_free(psp),
			    DAT_SUCCESS);
	dt_kit_close(ctx, &kit);
}

static void timeout_10ms(struct dt_fft_ctx *ctx)
{
	wait_timeout(ctx, 10000);
}

static void timeout_0(struct dt_fft_ctx *ctx)
{
	wait_timeout(ctx, 0);
}

/* Request with private data, accept with private data, both sides
 * ESTABLISHED with exactly the other side's bytes, then a graceful
 * disconnect from the client that both sides see. */
static void connect_disconnect(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	struct sockaddr_storage cli_addr;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EP_PARAM epp;
	DAT_EVENT ev;
	const DAT_CONNECTION_EVENT_DATA *cd = &ev.event_data.connect_event_data;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair) ||
	    !dt_ia_address(ctx, pair.cli.ia, &cli_addr))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_ep_connect",
			 dat_ep_connect(pair.cli.ep,
					(DAT_IA_ADDRESS_PTR)&pair.srv_addr,
					pair.qual, DT_EVENT_WAIT_US,
					CLIENT_PDATA_SIZE,
					(const DAT_PVOID)client_pdata,
					ctx->common.qos,
					DAT_CONNECT_DEFAULT_FLAG),
			 DAT_SUCCESS) ||
	    !dt_wait_event(ctx, pair.srv.cr_evd, DAT_CONNECTION_REQUEST_EVENT,
			   &ev))
		goto out;
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	if (DT_CHECK_RC(ctx, "dat_cr_query",
			dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), DAT_SUCCESS)) {
		DT_CHECK(ctx, crp.private_data_size == CLIENT_PDATA_SIZE &&
			 crp.private_data &&
			 memcmp(crp.private_data, client_pdata,
				CLIENT_PDATA_SIZE) == 0,
			 "the request carries exactly the client's %d bytes "
			 "(got %d)", (int)CLIENT_PDATA_SIZE,
			 (int)crp.private_data_size);
		DT_CHECK(ctx, crp.local_ep_handle == DAT_HANDLE_NULL,
			 "a consumer PSP's request has no EP of its own");
		DT_CHECK(ctx, crp.remote_ia_address_ptr &&
			 crp.remote_ia_address_ptr->sa_family ==
			 cli_addr.ss_family,
			 "the request names the client's address family");
	}
	check_state(ctx, pair.cli.ep, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING,
		    "client (request pending)");
	if (!DT_CHECK_RC(ctx, "dat_cr_accept",
			 dat_cr_accept(cr, pair.srv.ep, SERVER_PDATA_SIZE,
				       (const DAT_PVOID)server_pdata),
			 DAT_SUCCESS))
		goto out;
	DT_CHECK_RC(ctx, "dat_cr_query (consumed request)",
		    dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp),
		    DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR));
	if (dt_wait_event(ctx, pair.srv.conn_evd,
			  DAT_CONNECTION_EVENT_ESTABLISHED, &ev))
		DT_CHECK(ctx, cd->ep_handle == pair.srv.ep &&
			 cd->private_data_size == 0,
			 "server ESTABLISHED names its EP, no private data "
			 "(got %d bytes)", (int)cd->private_data_size);
	if (!dt_wait_event(ctx, pair.cli.conn_evd,
			   DAT_CONNECTION_EVENT_ESTABLISHED, &ev))
		goto out;
	DT_CHECK(ctx, cd->ep_handle == pair.cli.ep &&
		 cd->private_data_size == SERVER_PDATA_SIZE &&
		 cd->private_data &&
		 memcmp(cd->private_data, server_pdata,
			SERVER_PDATA_SIZE) == 0,
		 "client ESTABLISHED carries exactly the server's %d bytes "
		 "(got %d)", (int)SERVER_PDATA_SIZE,
		 (int)cd->private_data_size);
	check_state(ctx, pair.cli.ep, DAT_EP_STATE_CONNECTED, "client");
	check_state(ctx, pair.srv.ep, DAT_EP_STATE_CONNECTED, "server");
	if (DT_CHECK_RC(ctx, "dat_ep_query (client)",
			dat_ep_query(pair.cli.ep, DAT_EP_FIELD_ALL, &epp),
			DAT_SUCCESS))
		DT_CHECK(ctx, epp.remote_port_qual == pair.qual,
			 "the client's remote_port_qual is the PSP's "
			 "qualifier %llu (got %llu)",
			 (unsigned long long)pair.qual,
			 (unsigned long long)epp.remote_port_qual);

	if (!DT_CHECK_RC(ctx, "dat_ep_disconnect (client, graceful)",
			 dat_ep_disconnect(pair.cli.ep,
					   DAT_CLOSE_GRACEFUL_FLAG),
			 DAT_SUCCESS))
		goto out;
	if (dt_wait_event(ctx, pair.cli.conn_evd,
			  DAT_CONNECTION_EVENT_DISCONNECTED, &ev))
		check_state(ctx, pair.cli.ep, DAT_EP_STATE_DISCONNECTED,
			    "client");
	if (dt_wait_event(ctx, pair.srv.conn_evd,
			  DAT_CONNECTION_EVENT_DISCONNECTED, &ev))
		check_state(ctx, pair.srv.ep, DAT_EP_STATE_DISCONNECTED,
			    "server");
	DT_CHECK_RC(ctx, "dat_ep_disconnect (already disconnected)",
		    dat_ep_disconnect(pair.cli.ep, DAT_CLOSE_GRACEFUL_FLAG),
		    DAT_SUCCESS);
	/* ready for another connection */
	DT_CHECK_RC(ctx, "dat_ep_reset (client)", dat_ep_reset(pair.cli.ep),
		    DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_ep_reset (server)", dat_ep_reset(pair.srv.ep),
		    DAT_SUCCESS);
	check_state(ctx, pair.cli.ep, DAT_EP_STATE_UNCONNECTED, "client");
out:
	dt_pair_close(ctx, &pair);
}

/* A qualifier nobody listens on: the PSP's, after the PSP is freed. */
static void nobody_listens(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_RETURN rc;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_psp_free", dat_psp_free(pair.psp),
			 DAT_SUCCESS))
		goto out;
	pair.psp = DAT_HANDLE_NULL;
	if (!DT_CHECK_RC(ctx, "dat_ep_connect (nobody listens)",
			 dat_ep_connect(pair.cli.ep,
					(DAT_IA_ADDRESS_PTR)&pair.srv_addr,
					pair.qual, DT_EVENT_WAIT_US, 0, NULL,
					ctx->common.qos,
					DAT_CONNECT_DEFAULT_FLAG),
			 DAT_SUCCESS))
		goto out;
	rc = dat_evd_wait(pair.cli.conn_evd, DT_EVENT_WAIT_US, 1, &ev,
			  &nmore);
	if (!DT_CHECK_RC(ctx, "dat_evd_wait", rc, DAT_SUCCESS))
		goto out;
	/* no listener: the provider's own refusal; a provider that cannot
	 * tell may call the address unreachable */
	DT_CHECK(ctx, ev.event_number ==
		 DAT_CONNECTION_EVENT_NON_PEER_REJECTED ||
		 ev.event_number == DAT_CONNECTION_EVENT_UNREACHABLE,
		 "event %s, want DAT_CONNECTION_EVENT_NON_PEER_REJECTED (or "
		 "_UNREACHABLE)", dt_event_name(ev.event_number));
	check_state(ctx, pair.cli.ep, DAT_EP_STATE_DISCONNECTED, "client");
	DT_CHECK_RC(ctx, "dat_ep_connect (again, before a reset)",
		    dat_ep_connect(pair.cli.ep,
				   (DAT_IA_ADDRESS_PTR)&pair.srv_addr,
				   pair.qual, DT_EVENT_WAIT_US, 0, NULL,
				   ctx->common.qos, DAT_CONNECT_DEFAULT_FLAG),
		    DAT_ERROR(DAT_INVALID_STATE,
			      DAT_INVALID_STATE_EP_DISCONNECTED));
	DT_CHECK_RC(ctx, "dat_ep_reset", dat_ep_reset(pair.cli.ep),
		    DAT_SUCCESS);
out:
	dt_pair_close(ctx, &pair);
}

static void peer_rejects(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EVENT ev;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair) ||
	    !dt_pair_request(ctx, &pair, NULL, 0, &cr))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_cr_reject", dat_cr_reject(cr),
			 DAT_SUCCESS))
		goto out;
	DT_CHECK_RC(ctx, "dat_cr_query (rejected request)",
		    dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp),
		    DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR));
	DT_CHECK_RC(ctx, "dat_cr_reject (again)", dat_cr_reject(cr),
		    DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CR));
	if (dt_wait_event(ctx, pair.cli.conn_evd,
			  DAT_CONNECTION_EVENT_PEER_REJECTED, &ev))
		check_state(ctx, pair.cli.ep, DAT_EP_STATE_DISCONNECTED,
			    "client");
	/* the server EP was never involved */
	check_state(ctx, pair.srv.ep, DAT_EP_STATE_UNCONNECTED, "server");
out:
	dt_pair_close(ctx, &pair);
}

static void server_disconnects(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	DAT_EVENT ev;
	DAT_EVENT_NUMBER number;
	DAT_COUNT nmore;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair) ||
	    !dt_pair_connect(ctx, &pair))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_ep_disconnect (server, abrupt)",
			 dat_ep_disconnect(pair.srv.ep, DAT_CLOSE_ABRUPT_FLAG),
			 DAT_SUCCESS))
		goto out;
	/* abrupt: done when the call returns, the event already queued */
	check_state(ctx, pair.srv.ep, DAT_EP_STATE_DISCONNECTED,
		    "server (right after the abrupt disconnect)");
	if (DT_CHECK_RC(ctx, "dat_evd_dequeue (server)",
			dat_evd_dequeue(pair.srv.conn_evd, &ev), DAT_SUCCESS))
		DT_CHECK(ctx, ev.event_number ==
			 DAT_CONNECTION_EVENT_DISCONNECTED,
			 "server event %s, want "
			 "DAT_CONNECTION_EVENT_DISCONNECTED",
			 dt_event_name(ev.event_number));
	if (DT_CHECK_RC(ctx, "dat_evd_wait (client)",
			dat_evd_wait(pair.cli.conn_evd, DT_EVENT_WAIT_US, 1,
				     &ev, &nmore), DAT_SUCCESS)) {
		number = ev.event_number;
		/* the peer cannot tell abrupt from graceful (dat_ep_disconnect
		 * NOTES) */
		DT_CHECK(ctx, number == DAT_CONNECTION_EVENT_DISCONNECTED,
			 "client event %s, want "
			 "DAT_CONNECTION_EVENT_DISCONNECTED",
			 dt_event_name(number));
		check_state(ctx, pair.cli.ep, DAT_EP_STATE_DISCONNECTED,
			    "client");
	}
out:
	dt_pair_close(ctx, &pair);
}

/* The server lets the request wait: the client's connect times out. */
static void no_answer(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	DAT_EVENT ev;
	DAT_CR_HANDLE cr = DAT_HANDLE_NULL;
	DAT_RETURN rc;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_ep_connect (100 ms timeout)",
			 dat_ep_connect(pair.cli.ep,
					(DAT_IA_ADDRESS_PTR)&pair.srv_addr,
					pair.qual, 100000, 0, NULL,
					ctx->common.qos,
					DAT_CONNECT_DEFAULT_FLAG),
			 DAT_SUCCESS))
		goto out;
	if (dt_wait_event(ctx, pair.srv.cr_evd, DAT_CONNECTION_REQUEST_EVENT,
			  &ev))
		cr = ev.event_data.cr_arrival_event_data.cr_handle;
	if (dt_wait_event(ctx, pair.cli.conn_evd,
			  DAT_CONNECTION_EVENT_TIMED_OUT, &ev))
		check_state(ctx, pair.cli.ep, DAT_EP_STATE_DISCONNECTED,
			    "client");
	if (cr) {
		/* the request the client gave up on is still the server's
		 * to answer; rejecting it now is allowed */
		rc = dat_cr_reject(cr);
		DT_CHECK_RC(ctx, "dat_cr_reject (after the client's timeout)",
			    rc, DAT_SUCCESS);
	}
out:
	dt_pair_close(ctx, &pair);
}

static void connect_bad_arguments(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	DAT_EP_HANDLE bare = DAT_HANDLE_NULL;
	DAT_IA_ADDRESS_PTR addr;
	DAT_PROVIDER_ATTR pattr;
	DAT_EVD_HANDLE async;
	char pdata[300];

	memset(pdata, 'p', sizeof(pdata));
	if (!dt_pair_open(ctx, &pair))
		goto out;
	addr = (DAT_IA_ADDRESS_PTR)&pair.srv_addr;
	DT_CHECK_RC(ctx, "dat_ep_connect (address NULL)",
		    dat_ep_connect(pair.cli.ep, NULL, pair.qual,
				   DT_EVENT_WAIT_US, 0, NULL,
				   DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_DEFAULT_FLAG), BAD_ARG(2));
	DT_CHECK_RC(ctx, "dat_ep_connect (qualifier 0)",
		    dat_ep_connect(pair.cli.ep, addr, 0, DT_EVENT_WAIT_US, 0,
				   NULL, DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_DEFAULT_FLAG), BAD_ARG(3));
	/* Qualifiers above 65535 are folded onto the port space unless
	 * DAT_STRICT=1 refuses them (libdat(7)); test/api/test_compat.c
	 * covers both, so none is tried here. */
	DT_CHECK_RC(ctx, "dat_ep_connect (timeout 0)",
		    dat_ep_connect(pair.cli.ep, addr, pair.qual, 0, 0, NULL,
				   DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_DEFAULT_FLAG), BAD_ARG(4));
	DT_CHECK_RC(ctx, "dat_ep_connect (private data 300 bytes)",
		    dat_ep_connect(pair.cli.ep, addr, pair.qual,
				   DT_EVENT_WAIT_US, (DAT_COUNT)sizeof(pdata),
				   pdata, DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_DEFAULT_FLAG), BAD_ARG(5));
	DT_CHECK_RC(ctx, "dat_ep_connect (private data NULL, size 1)",
		    dat_ep_connect(pair.cli.ep, addr, pair.qual,
				   DT_EVENT_WAIT_US, 1, NULL,
				   DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_DEFAULT_FLAG), BAD_ARG(6));
	DT_CHECK_RC(ctx, "dat_ep_connect (multipath)",
		    dat_ep_connect(pair.cli.ep, addr, pair.qual,
				   DT_EVENT_WAIT_US, 0, NULL,
				   DAT_QOS_BEST_EFFORT,
				   DAT_CONNECT_MULTIPATH_FLAG),
		    DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, DAT_NO_SUBTYPE));
	if (DT_CHECK_RC(ctx, "dat_ia_query (provider)",
			dat_ia_query(pair.cli.ia, &async, 0, NULL,
				     DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED,
				     &pattr), DAT_SUCCESS) &&
	    !(pattr.dat_qos_supported & DAT_QOS_PREMIUM))
		DT_CHECK_RC(ctx, "dat_ep_connect (QoS PM, not offered)",
			    dat_ep_connect(pair.cli.ep, addr, pair.qual,
					   DT_EVENT_WAIT_US, 0, NULL,
					   DAT_QOS_PREMIUM,
					   DAT_CONNECT_DEFAULT_FLAG),
			    DAT_ERROR(DAT_MODEL_NOT_SUPPORTED,
				      DAT_NO_SUBTYPE));
	/* none of that started anything */
	check_state(ctx, pair.cli.ep, DAT_EP_STATE_UNCONNECTED, "client");
	/* an EP without PZ and EVDs cannot connect */
	if (DT_CHECK_RC(ctx, "dat_ep_create (no PZ, no EVDs)",
			dat_ep_create(pair.cli.ia, DAT_HANDLE_NULL,
				      DAT_HANDLE_NULL, DAT_HANDLE_NULL,
				      DAT_HANDLE_NULL, NULL, &bare),
			DAT_SUCCESS)) {
		DT_CHECK_RC(ctx, "dat_ep_connect (EP not ready)",
			    dat_ep_connect(bare, addr, pair.qual,
					   DT_EVENT_WAIT_US, 0, NULL,
					   DAT_QOS_BEST_EFFORT,
					   DAT_CONNECT_DEFAULT_FLAG),
			    DAT_ERROR(DAT_INVALID_STATE,
				      DAT_INVALID_STATE_EP_NOTREADY));
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(bare),
			    DAT_SUCCESS);
	}
out:
	dt_pair_close(ctx, &pair);
}

static void qual_in_use(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	DAT_PSP_HANDLE psp;
	DAT_RSP_HANDLE rsp;
	DAT_RETURN rc;

	if (!dt_pair_open(ctx, &pair))
		goto out;
	rc = dat_psp_create(pair.srv.ia, pair.qual, pair.srv.cr_evd,
			    DAT_PSP_CONSUMER_FLAG, &psp);
	if (!DT_CHECK_RC(ctx, "dat_psp_create (qualifier of a live PSP)", rc,
			 DAT_ERROR(DAT_CONN_QUAL_IN_USE, DAT_NO_SUBTYPE)) &&
	    rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_psp_free", dat_psp_free(psp),
			    DAT_SUCCESS);
	rc = dat_rsp_create(pair.srv.ia, pair.qual, pair.srv.ep,
			    pair.srv.cr_evd, &rsp);
	if (!DT_CHECK_RC(ctx, "dat_rsp_create (qualifier of a live PSP)", rc,
			 DAT_ERROR(DAT_CONN_QUAL_IN_USE, DAT_NO_SUBTYPE)) &&
	    rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_rsp_free", dat_rsp_free(rsp),
			    DAT_SUCCESS);
	/* and the EP was not left reserved by the refusal */
	check_state(ctx, pair.srv.ep, DAT_EP_STATE_UNCONNECTED, "server");
out:
	dt_pair_close(ctx, &pair);
}

/* An RSP reserves its EP; one request uses it up. */
static void rsp_one_shot(struct dt_fft_ctx *ctx)
{
	struct dt_pair pair;
	struct dt_kit third;
	DAT_RSP_HANDLE rsp = DAT_HANDLE_NULL;
	DAT_CR_PARAM crp;
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;
	bool third_open = false;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair))
		goto out;
	/* the PSP's qualifier, once the PSP is gone, for the RSP */
	if (!DT_CHECK_RC(ctx, "dat_psp_free", dat_psp_free(pair.psp),
			 DAT_SUCCESS))
		goto out;
	pair.psp = DAT_HANDLE_NULL;
	if (!DT_CHECK_RC(ctx, "dat_rsp_create",
			 dat_rsp_create(pair.srv.ia, pair.qual, pair.srv.ep,
					pair.srv.cr_evd, &rsp), DAT_SUCCESS)) {
		rsp = DAT_HANDLE_NULL;
		goto out;
	}
	check_state(ctx, pair.srv.ep, DAT_EP_STATE_RESERVED, "server");
	if (!DT_CHECK_RC(ctx, "dat_ep_connect",
			 dat_ep_connect(pair.cli.ep,
					(DAT_IA_ADDRESS_PTR)&pair.srv_addr,
					pair.qual, DT_EVENT_WAIT_US, 0, NULL,
					ctx->common.qos,
					DAT_CONNECT_DEFAULT_FLAG),
			 DAT_SUCCESS) ||
	    !dt_wait_event(ctx, pair.srv.cr_evd, DAT_CONNECTION_REQUEST_EVENT,
			   &ev))
		goto out;
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	if (DT_CHECK_RC(ctx, "dat_cr_query",
			dat_cr_query(cr, DAT_CR_FIELD_LOCAL_EP_HANDLE, &crp),
			DAT_SUCCESS))
		DT_CHECK(ctx, crp.local_ep_handle == pair.srv.ep,
			 "the request comes with the RSP's EP");
	check_state(ctx, pair.srv.ep, DAT_EP_STATE_PASSIVE_CONNECTION_PENDING,
		    "server");
	DT_CHECK_RC(ctx, "dat_ep_free (EP of a pending request)",
		    dat_ep_free(pair.srv.ep),
		    DAT_ERROR(DAT_INVALID_STATE,
			      DAT_INVALID_STATE_EP_PASSCONNPENDING));
	/* NULL: the request's own EP */
	if (!DT_CHECK_RC(ctx, "dat_cr_accept (NULL: the RSP's EP)",
			 dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL),
			 DAT_SUCCESS) ||
	    !dt_wait_event(ctx, pair.srv.conn_evd,
			   DAT_CONNECTION_EVENT_ESTABLISHED, &ev) ||
	    !dt_wait_event(ctx, pair.cli.conn_evd,
			   DAT_CONNECTION_EVENT_ESTABLISHED, &ev))
		goto out;

	/* a second client finds nobody listening there any more */
	third_open = dt_kit_open(ctx, &third, DT_KIT_PZ | DT_KIT_EVDS |
				 DT_KIT_EP);
	if (!third_open)
		goto out;
	if (DT_CHECK_RC(ctx, "dat_ep_connect (second client)",
			dat_ep_connect(third.ep,
				       (DAT_IA_ADDRESS_PTR)&pair.srv_addr,
				       pair.qual, DT_EVENT_WAIT_US, 0, NULL,
				       ctx->common.qos,
				       DAT_CONNECT_DEFAULT_FLAG),
			DAT_SUCCESS))
		dt_wait_event(ctx, third.conn_evd,
			      DAT_CONNECTION_EVENT_NON_PEER_REJECTED, &ev);
out:
	if (third_open)
		dt_kit_close(ctx, &third);
	if (rsp)
		DT_CHECK_RC(ctx, "dat_rsp_free", dat_rsp_free(rsp),
			    DAT_SUCCESS);
	dt_pair_close(ctx, &pair);
}

static const struct dt_fft_case cases[] = {
	{ "Ensure time in dat_evd_wait works correctly (a 10 ms timeout "
	  "on a listening PSP's EVD takes at least 10 ms)", timeout_10ms },
	{ "Attempt to use timeout of 0 in dat_evd_wait", timeout_0 },
	{ "Connect over loopback with private data both ways, then a "
	  "graceful disconnect both sides see", connect_disconnect },
	{ "Connect to a qualifier nobody listens on", nobody_listens },
	{ "The server rejects the request", peer_rejects },
	{ "The server disconnects abruptly", server_disconnects },
	{ "The server never answers: the connect times out", no_answer },
	{ "Connect with bad arguments, a QoS the IA does not offer, and "
	  "with an EP that is not ready", connect_bad_arguments },
	{ "Listen on a qualifier that is in use", qual_in_use },
	{ "An RSP takes one request and reserves its EP",
	  rsp_one_shot },
};

const struct dt_fft_feature dt_fft_connmgt = {
	.name = "connmgt",
	.title = "Connect Management",
	.cases = cases,
	.ncases = sizeof(cases) / sizeof(cases[0]),
};
