/*
 * dapltest -T F -f stress: what OpenFabrics announced ("stress", never
 * implemented), done in one process: -t threads each repeat -i times a
 * round of creating and freeing objects, -v endpoints (VIs) or memory
 * regions per round.  Every call must succeed every time, and every IA
 * must close gracefully at the end (nothing lost on the way).
 *
 * The connmgt_client feature is here too: OpenFabrics' never written
 * client side of connection management, against a dapltest server
 * (-s host, -n port).
 */
#include <netdb.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dt_lf_fft.h"

struct worker {
	struct dt_fft_ctx *ctx;
	unsigned long index;
	pthread_t thread;
	void (*body)(struct worker *w);
	struct dt_kit *shared;	/* case 1 */
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;

	w->body(w);
	return NULL;
}

/* Runs body in ctx->threads threads and waits for them all. */
static void run_workers(struct dt_fft_ctx *ctx, void (*body)(struct worker *),
			struct dt_kit *shared)
{
	struct worker *ws = calloc(ctx->threads, sizeof(*ws));
	unsigned long i, started = 0;

	if (!DT_CHECK(ctx, ws != NULL, "calloc(%lu workers)", ctx->threads))
		return;
	for (i = 0; i < ctx->threads; i++) {
		ws[i].ctx = ctx;
		ws[i].index = i;
		ws[i].body = body;
		ws[i].shared = shared;
		if (!DT_CHECK(ctx, pthread_create(&ws[i].thread, NULL,
						  worker_main, &ws[i]) == 0,
			      "pthread_create (worker %lu)", i))
			break;
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(ws[i].thread, NULL);
	free(ws);
	if (ctx->common.debug)
		dt_note("%lu threads x %lu iterations x %lu", started,
			ctx->iters, ctx->vis);
}

static void ep_churn_body(struct worker *w)
{
	struct dt_fft_ctx *ctx = w->ctx;
	struct dt_kit kit;
	DAT_EP_HANDLE *eps = calloc(ctx->vis, sizeof(*eps));
	unsigned long it, n, made;
	bool ok = true;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS) ||
	    !DT_CHECK(ctx, eps != NULL, "calloc(%lu EPs)", ctx->vis))
		goto out;
	for (it = 0; it < ctx->iters && ok; it++) {
		for (made = 0; made < ctx->vis; made++)
			if (!(ok = DT_CHECK_RC(ctx, "dat_ep_create",
					       dat_ep_create(kit.ia, kit.pz,
							     kit.recv_evd,
							     kit.req_evd,
							     kit.conn_evd, NULL,
							     &eps[made]),
					       DAT_SUCCESS)))
				break;
		for (n = made; n-- > 0;)
			if (!DT_CHECK_RC(ctx, "dat_ep_free",
					 dat_ep_free(eps[n]), DAT_SUCCESS))
				ok = false;
	}
out:
	dt_kit_close(ctx, &kit);
	free(eps);
}

static void ep_churn(struct dt_fft_ctx *ctx)
{
	run_workers(ctx, ep_churn_body, NULL);
}

static void lmr_churn_body(struct worker *w)
{
	struct dt_fft_ctx *ctx = w->ctx;
	char *bufs = malloc(ctx->vis * 4096);
	DAT_LMR_HANDLE *lmrs = calloc(ctx->vis, sizeof(*lmrs));
	DAT_REGION_DESCRIPTION region;
	unsigned long it, n, made;
	bool ok = true;

	if (!DT_CHECK(ctx, bufs && lmrs, "memory for %lu LMRs", ctx->vis))
		goto out;
	memset(&region, 0, sizeof(region));
	for (it = 0; it < ctx->iters && ok; it++) {
		for (made = 0; made < ctx->vis; made++) {
			region.for_va = bufs + made * 4096;
			if (!(ok = DT_CHECK_RC(ctx, "dat_lmr_create",
					       dat_lmr_create(w->shared->ia,
							DAT_MEM_TYPE_VIRTUAL,
							region, 4096,
							w->shared->pz,
							DAT_MEM_PRIV_ALL_FLAG,
							&lmrs[made], NULL, NULL,
							NULL, NULL),
					       DAT_SUCCESS)))
				break;
		}
		for (n = made; n-- > 0;)
			if (!DT_CHECK_RC(ctx, "dat_lmr_free",
					 dat_lmr_free(lmrs[n]), DAT_SUCCESS))
				ok = false;
	}
out:
	free(lmrs);
	free(bufs);
}

/* All threads on one IA and PZ: the library's locking is what is
 * stressed here. */
static void lmr_churn(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;

	if (dt_kit_open(ctx, &kit, DT_KIT_PZ))
		run_workers(ctx, lmr_churn_body, &kit);
	dt_kit_close(ctx, &kit);
}

static void ia_churn_body(struct worker *w)
{
	struct dt_fft_ctx *ctx = w->ctx;
	struct dt_kit kit;
	unsigned long it;

	for (it = 0; it < ctx->iters; it++) {
		bool ok = dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS |
				      DT_KIT_EP);

		dt_kit_close(ctx, &kit);
		if (!ok)
			break;
	}
}

static void ia_churn(struct dt_fft_ctx *ctx)
{
	run_workers(ctx, ia_churn_body, NULL);
}

static void conn_churn_body(struct worker *w)
{
	struct dt_fft_ctx *ctx = w->ctx;
	struct dt_pair pair;
	DAT_EVENT ev;
	unsigned long it;

	if (!dt_pair_open(ctx, &pair) || !dt_pair_qos_usable(ctx, &pair))
		goto out;
	for (it = 0; it < ctx->iters; it++) {
		if (!dt_pair_connect(ctx, &pair) ||
		    !DT_CHECK_RC(ctx, "dat_ep_disconnect",
				 dat_ep_disconnect(pair.cli.ep,
						   DAT_CLOSE_GRACEFUL_FLAG),
				 DAT_SUCCESS) ||
		    !dt_wait_event(ctx, pair.cli.conn_evd,
				   DAT_CONNECTION_EVENT_DISCONNECTED, &ev) ||
		    !dt_wait_event(ctx, pair.srv.conn_evd,
				   DAT_CONNECTION_EVENT_DISCONNECTED, &ev) ||
		    !DT_CHECK_RC(ctx, "dat_ep_reset (client)",
				 dat_ep_reset(pair.cli.ep), DAT_SUCCESS) ||
		    !DT_CHECK_RC(ctx, "dat_ep_reset (server)",
				 dat_ep_reset(pair.srv.ep), DAT_SUCCESS))
			break;
	}
out:
	dt_pair_close(ctx, &pair);
}

static void conn_churn(struct dt_fft_ctx *ctx)
{
	run_workers(ctx, conn_churn_body, NULL);
}

static const struct dt_fft_case stress_cases[] = {
	{ "-t threads, each with its own IA, create and free -v EPs, -i "
	  "times", ep_churn },
	{ "-t threads on one IA and PZ register and free -v LMRs, -i times",
	  lmr_churn },
	{ "-t threads open an IA with a PZ, EVDs and an EP and close it "
	  "again, -i times", ia_churn },
	{ "-t threads, each with a loopback pair, connect and disconnect "
	  "-i times", conn_churn },
};

const struct dt_fft_feature dt_fft_stress = {
	.name = "stress",
	.title = "Stress",
	.cases = stress_cases,
	.ncases = sizeof(stress_cases) / sizeof(stress_cases[0]),
};

/* ------------------------------------------------------------------ */
/* connmgt_client                                                     */
/* ------------------------------------------------------------------ */

/* The server's address (first IPv4 or IPv6 answer for -s). */
static bool server_address(struct dt_fft_ctx *ctx,
			   struct sockaddr_storage *addr)
{
	struct addrinfo hints, *res = NULL;
	int err;

	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	err = getaddrinfo(ctx->server, NULL, &hints, &res);
	if (!DT_CHECK(ctx, err == 0 && res, "getaddrinfo(\"%s\"): %s",
		      ctx->server, err ? gai_strerror(err) : "ok"))
		return false;
	memset(addr, 0, sizeof(*addr));
	memcpy(addr, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return true;
}

/* Connects to the dapltest server's port with `size` bytes of private
 * data; the server accepts every connection it gets (and, as nothing
 * follows, must cope with the client leaving at once). */
static void client_connect(struct dt_fft_ctx *ctx, DAT_COUNT size)
{
	struct dt_kit kit;
	struct sockaddr_storage addr;
	DAT_CONN_QUAL port = ctx->common.port ? ctx->common.port :
			     DT_SERVER_PORT;
	DAT_PROVIDER_ATTR pattr;
	DAT_EVD_HANDLE async;
	DAT_EVENT ev;
	char *pdata = NULL;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP) ||
	    !server_address(ctx, &addr) ||
	    !dt_qos_usable(ctx, kit.ia, kit.ep, (DAT_IA_ADDRESS_PTR)&addr,
			   port))
		goto out;
	if (size < 0) {
		/* as much as the provider carries */
		if (!DT_CHECK_RC(ctx, "dat_ia_query (provider)",
				 dat_ia_query(kit.ia, &async, 0, NULL,
					DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE,
					&pattr), DAT_SUCCESS))
			goto out;
		size = pattr.max_private_data_size;
	}
	pdata = malloc(size > 0 ? (size_t)size : 1);
	if (!DT_CHECK(ctx, pdata != NULL, "malloc(%d)", (int)size))
		goto out;
	memset(pdata, 'c', size > 0 ? (size_t)size : 1);
	if (!DT_CHECK_RC(ctx, "dat_ep_connect (to the server)",
			 dat_ep_connect(kit.ep, (DAT_IA_ADDRESS_PTR)&addr,
					port, DT_EVENT_WAIT_US, size, pdata,
					ctx->common.qos,
					DAT_CONNECT_DEFAULT_FLAG),
			 DAT_SUCCESS))
		goto out;
	if (!dt_wait_event(ctx, kit.conn_evd,
			   DAT_CONNECTION_EVENT_ESTABLISHED, &ev))
		goto out;
	if (DT_CHECK_RC(ctx, "dat_ep_disconnect (graceful)",
			dat_ep_disconnect(kit.ep, DAT_CLOSE_GRACEFUL_FLAG),
			DAT_SUCCESS))
		dt_wait_event(ctx, kit.conn_evd,
			      DAT_CONNECTION_EVENT_DISCONNECTED, &ev);
out:
	dt_kit_close(ctx, &kit);
	free(pdata);
}

static void client_plain(struct dt_fft_ctx *ctx)
{
	client_connect(ctx, 0);
}

static void client_max_pdata(struct dt_fft_ctx *ctx)
{
	client_connect(ctx, -1);
}

static const struct dt_fft_case client_cases[] = {
	{ "Connect to the server (-s, port -n), then disconnect "
	  "gracefully", client_plain },
	{ "Connect to the server with the largest private data the "
	  "provider carries, then disconnect", client_max_pdata },
};

const struct dt_fft_feature dt_fft_connmgt_client = {
	.name = "connmgt_client",
	.title = "Connect Management (Client side)",
	.cases = client_cases,
	.ncases = sizeof(client_cases) / sizeof(client_cases[0]),
	.needs_server = true,
};
