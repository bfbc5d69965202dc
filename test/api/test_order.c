/* Completion means delivery (dat_ep_post_send(3), dat_ep_post_rdma_write(3)):
 * a successful Send or RDMA Write completion at the initiator means the
 * peer has placed the data, as on an InfiniBand RC connection.
 *
 * Programs written for OpenFabrics' providers rely on what follows from
 * it, across endpoints: a thread sends on EP1, waits for the completion,
 * then sends on EP2, and the peer, reaping both on one EVD, sees EP1's
 * receive first; a thread that writes with RDMA, waits for the write's
 * completion and then tells the peer on another endpoint, finds its data
 * in the peer's memory.
 *
 * Here THREADS client threads in the test process each drive WIDTH
 * connected endpoints round robin.  The server, a process of its own,
 * reaps every receive of every endpoint from one EVD and checks that each
 * thread's messages arrive in the order their sends completed, and that a
 * message announcing a completed RDMA Write finds the written value.
 * ORDER_ITERATIONS (environment) sets the messages per thread. */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dat_gen.h"	/* <dat/udat.h>, or <dat2/udat.h> with DAT_GEN=2 */

#include "conn_harness.h"

#define MAX_WIDTH 8
#define THREADS 2
#define MAX_EPS (MAX_WIDTH * THREADS)
#define RECV_DEPTH 4              /* receives kept posted per server EP */
#define DEFAULT_ITERATIONS 2000

/* One message: which thread, its sequence number, and the value the
 * thread wrote with a completed RDMA Write just before (0: none). */
struct order_msg {
	uint64_t thread;
	uint64_t seq;
	uint64_t written;
	uint64_t pad;
};

enum {
	/* test -> server */
	O_START = 1,     /* v0 eps v1 messages in all -> R_READY */
	O_QUIT,
	/* server -> test */
	R_READY = 50,    /* v0 qual v1 target address v2 rmr_context */
	R_DONE,          /* v0 messages reaped */
};

static int iterations(void)
{
	const char *v = getenv("ORDER_ITERATIONS");
	long n = v && *v ? strtol(v, NULL, 10) : DEFAULT_ITERATIONS;

	return n > 0 && n < 10000000 ? (int)n : DEFAULT_ITERATIONS;
}

static DAT_LMR_HANDLE region(struct hx_ia *x, void *buf, DAT_VLEN len,
			     DAT_MEM_PRIV_FLAGS priv, DAT_LMR_CONTEXT *lctx,
			     DAT_RMR_CONTEXT *rctx)
{
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_HANDLE lmr;
	DAT_VLEN rlen;
	DAT_VADDR raddr;

	r.for_va = buf;
	HX_OK(dat_lmr_create(x->ia, DAT_MEM_TYPE_VIRTUAL, r, len, x->pz, priv, &lmr,
			     lctx, rctx, &rlen, &raddr));
	return lmr;
}

/* ---- the server: every receive on one EVD ------------------------------ */

static void post_slot(DAT_EP_HANDLE ep, DAT_LMR_CONTEXT lctx, struct order_msg *slot,
		      uint64_t cookie)
{
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE c;

	t.lmr_context = lctx;
	HX_CLEAR_PAD(t);
	t.virtual_address = (DAT_VADDR)(uintptr_t)slot;
	t.segment_length = sizeof(*slot);
	c.as_64 = cookie;
	HX_OK(dat_ep_post_recv(ep, 1, &t, c, DAT_COMPLETION_DEFAULT_FLAG));
}

static void server(struct hx_peer *self, void *arg)
{
	static struct order_msg slots[MAX_EPS][RECV_DEPTH];
	static volatile uint64_t target[THREADS];
	DAT_EP_HANDLE ep[MAX_EPS];
	DAT_EVD_HANDLE conn[MAX_EPS], req[MAX_EPS], rcv;
	uint64_t next[THREADS] = { 0 };
	DAT_LMR_HANDLE slots_lmr, target_lmr;
	DAT_LMR_CONTEXT slots_ctx, target_ctx;
	DAT_RMR_CONTEXT target_rctx;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	struct hx_msg m;
	struct hx_ia x;
	int64_t v[3];
	int neps, total, got, i, k;

	(void)arg;
	hx_expect_msg(self, O_START, &m);
	neps = (int)m.v[0];
	total = (int)m.v[1];
	HX_CHECK(neps > 0 && neps <= MAX_EPS, "bad EP count %d", neps);

	hx_ia_open(&x);
	HX_OK(dat_evd_create(x.ia, neps * RECV_DEPTH + 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG,
			     &rcv));
	slots_lmr = region(&x, slots, sizeof(slots), DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
			   DAT_MEM_PRIV_LOCAL_READ_FLAG, &slots_ctx, NULL);
	target_lmr = region(&x, (void *)target, sizeof(target),
			    DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
			    DAT_MEM_PRIV_REMOTE_WRITE_FLAG, &target_ctx, &target_rctx);
	psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);

	/* Every server EP delivers its receives to rcv; its receives are
	 * posted before it is connected. */
	for (i = 0; i < neps; i++) {
		DAT_CR_HANDLE cr;

		HX_OK(dat_evd_create(x.ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
				     &conn[i]));
		HX_OK(dat_evd_create(x.ia, 4, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &req[i]));
		HX_OK(dat_ep_create(x.ia, x.pz, rcv, req[i], conn[i], NULL, &ep[i]));
		for (k = 0; k < RECV_DEPTH; k++)
			post_slot(ep[i], slots_ctx, &slots[i][k],
				  (uint64_t)i << 32 | (uint64_t)k);
		if (i == 0) {
			v[0] = (int64_t)qual;
			v[1] = (int64_t)(uintptr_t)target;
			v[2] = (int64_t)target_rctx;
			hx_send(self, R_READY, v, 3, NULL, 0);
		}
		cr = hx_wait_cr(x.cr, NULL);
		HX_OK(dat_cr_accept(cr, ep[i], 0, NULL));
		hx_expect_event(conn[i], DAT_CONNECTION_EVENT_ESTABLISHED, ep[i], NULL);
	}

	for (got = 0; got < total; got++) {
		DAT_DTO_COMPLETION_EVENT_DATA *d;
		struct order_msg *msg;
		DAT_EVENT ev;
		int e, s;

		hx_wait(rcv, &ev);
		HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT, "got %s on the receive EVD",
			 hx_event_str(ev.event_number));
		d = &ev.event_data.dto_completion_event_data;
		HX_CHECK(d->status == DAT_DTO_SUCCESS, "receive %d completed with status %d", got,
			 (int)d->status);
		e = (int)(d->user_cookie.as_64 >> 32);
		s = (int)(d->user_cookie.as_64 & 0xffffffffu);
		HX_CHECK(e >= 0 && e < neps && s >= 0 && s < RECV_DEPTH && d->ep_handle == ep[e],
			 "receive %d: cookie %#" PRIx64 " names no receive of its EP", got,
			 d->user_cookie.as_64);
		HX_CHECK(d->transfered_length == sizeof(*msg), "receive %d: %llu bytes", got,
			 (unsigned long long)d->transfered_length);
		msg = &slots[e][s];
		HX_CHECK(msg->thread < THREADS, "receive %d: thread %" PRIu64, got, msg->thread);
		/* The peer's sends completed in this order, one after the other,
		 * on a round robin of endpoints. */
		HX_CHECK(msg->seq == next[msg->thread],
			 "thread %" PRIu64 ": message %" PRIu64 " (on server EP %d) was received "
			 "when message %" PRIu64 " was due: a completed Send was not yet "
			 "delivered when the next one was posted on another EP",
			 msg->thread, msg->seq, e, next[msg->thread]);
		next[msg->thread]++;
		/* The thread's writes carry rising values, and it may have
		 * written again since: the memory must hold this value or a
		 * later one, never an older one. */
		if (msg->written)
			HX_CHECK(target[msg->thread] >= msg->written,
				 "thread %" PRIu64 ": message %" PRIu64 " announces a completed RDMA "
				 "Write of %" PRIu64 ", memory still holds %" PRIu64, msg->thread,
				 msg->seq, msg->written, target[msg->thread]);
		post_slot(ep[e], slots_ctx, msg, d->user_cookie.as_64);
	}
	v[0] = got;
	hx_send(self, R_DONE, v, 1, NULL, 0);
	hx_expect_msg(self, O_QUIT, &m);

	for (i = 0; i < neps; i++) {
		HX_OK(dat_ep_disconnect(ep[i], DAT_CLOSE_ABRUPT_FLAG));
		hx_expect_event(conn[i], DAT_CONNECTION_EVENT_DISCONNECTED, ep[i], NULL);
		HX_OK(dat_ep_free(ep[i]));
		HX_OK(dat_evd_free(conn[i]));
		HX_OK(dat_evd_free(req[i]));
	}
	HX_OK(dat_psp_free(psp));
	HX_OK(dat_lmr_free(target_lmr));
	HX_OK(dat_lmr_free(slots_lmr));
	HX_OK(dat_evd_free(rcv));
	hx_ia_close(&x);
}

/* ---- the client threads ------------------------------------------------ */

struct client {
	struct hx_ia *x;
	int index, width, iters;
	DAT_EP_HANDLE ep[MAX_WIDTH];
	DAT_EVD_HANDLE conn[MAX_WIDTH];
	DAT_EVD_HANDLE req;                /* every request of the thread's EPs */
	struct order_msg msg;
	uint64_t value;                    /* the RDMA Write source */
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_VADDR target;                  /* the server's word for this thread */
	DAT_RMR_CONTEXT target_rctx;
	char failed[160];                  /* the first failed completion */
};

/* Waits for the completion of the request with this cookie on c->req. */
static bool completed(struct client *c, uint64_t cookie, const char *what)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d;
	DAT_EVENT ev;

	hx_wait(c->req, &ev);
	HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT, "thread %d: got %s", c->index,
		 hx_event_str(ev.event_number));
	d = &ev.event_data.dto_completion_event_data;
	HX_CHECK(d->user_cookie.as_64 == cookie, "thread %d: %s %" PRIu64 " completed as %"
		 PRIu64, c->index, what, cookie, d->user_cookie.as_64);
	if (d->status != DAT_DTO_SUCCESS && !c->failed[0]) {
		/* most likely the server failed and closed; the test
		 * reports the server's reason first */
		snprintf(c->failed, sizeof(c->failed), "thread %d: %s %" PRIu64
			 " completed with status %d", c->index, what, cookie, (int)d->status);
		return false;
	}
	return d->status == DAT_DTO_SUCCESS;
}

static void *client_thread(void *arg)
{
	struct client *c = arg;
	DAT_LMR_TRIPLET t;
	DAT_DTO_COOKIE ck;
	int i;

	t.lmr_context = c->lctx;
	HX_CLEAR_PAD(t);
	for (i = 0; i < c->iters; i++) {
		DAT_EP_HANDLE send_ep = c->ep[i % c->width];

		c->msg.thread = (uint64_t)c->index;
		c->msg.seq = (uint64_t)i;
		c->msg.written = 0;
		if (i % 3 == 2) {
			/* an RDMA Write on the next EP, completed before the
			 * message that announces it is sent */
			DAT_RMR_TRIPLET r;

			c->value = (uint64_t)i << 8 | 0x5a;
			t.virtual_address = (DAT_VADDR)(uintptr_t)&c->value;
			t.segment_length = sizeof(c->value);
			r.rmr_context = c->target_rctx;
			HX_CLEAR_PAD(r);
			r.HX_RMR_ADDR = c->target;
			r.segment_length = sizeof(c->value);
			ck.as_64 = (uint64_t)i << 1 | 1;
			HX_OK(dat_ep_post_rdma_write(c->ep[(i + 1) % c->width], 1, &t, ck, &r,
						     DAT_COMPLETION_DEFAULT_FLAG));
			if (!completed(c, ck.as_64, "RDMA Write"))
				return NULL;
			c->msg.written = c->value;
		}
		t.virtual_address = (DAT_VADDR)(uintptr_t)&c->msg;
		t.segment_length = sizeof(c->msg);
		ck.as_64 = (uint64_t)i << 1;
		HX_OK(dat_ep_post_send(send_ep, 1, &t, ck, DAT_COMPLETION_DEFAULT_FLAG));
		if (!completed(c, ck.as_64, "Send"))
			return NULL;
	}
	return NULL;
}

static void run_order(int width)
{
	static struct client cl[THREADS];
	pthread_t tid[THREADS];
	struct hx_peer srv;
	struct hx_msg m;
	struct hx_ia x;
	int64_t v[2];
	int iters = iterations(), t, i;

	hx_spawn(&srv, "order server", server, NULL);
	v[0] = width * THREADS;
	v[1] = (int64_t)iters * THREADS;
	hx_send(&srv, O_START, v, 2, NULL, 0);
	hx_expect_msg(&srv, R_READY, &m);

	hx_ia_open(&x);
	memset(cl, 0, sizeof(cl));
	for (t = 0; t < THREADS; t++) {
		struct client *c = &cl[t];

		c->x = &x;
		c->index = t;
		c->width = width;
		c->iters = iters;
		c->target = (DAT_VADDR)m.v[1] + (DAT_VADDR)(t * sizeof(uint64_t));
		c->target_rctx = (DAT_RMR_CONTEXT)m.v[2];
		c->lmr = region(&x, c, sizeof(*c), DAT_MEM_PRIV_LOCAL_READ_FLAG |
				DAT_MEM_PRIV_LOCAL_WRITE_FLAG, &c->lctx, NULL);
		HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &c->req));
		for (i = 0; i < width; i++) {
			struct hx_ep e;

			HX_OK(dat_evd_create(x.ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
					     &c->conn[i]));
			HX_OK(dat_ep_create(x.ia, x.pz, x.dto, c->req, c->conn[i], NULL,
					    &c->ep[i]));
			e.ep = c->ep[i];
			e.conn = c->conn[i];
			hx_connect(&e, (DAT_CONN_QUAL)m.v[0], 0, NULL);
			hx_expect_event(c->conn[i], DAT_CONNECTION_EVENT_ESTABLISHED, c->ep[i],
					NULL);
		}
	}
	for (t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_create(&tid[t], NULL, client_thread, &cl[t]), 0);
	for (t = 0; t < THREADS; t++)
		ck_assert_int_eq(pthread_join(tid[t], NULL), 0);

	/* the server's verdict first: a client's failed completion is most
	 * likely the server's failure seen from here */
	hx_expect_msg(&srv, R_DONE, &m);
	for (t = 0; t < THREADS; t++)
		HX_CHECK(!cl[t].failed[0], "%s", cl[t].failed);
	ck_assert_int_eq((int)m.v[0], iters * THREADS);
	hx_send(&srv, O_QUIT, NULL, 0, NULL, 0);
	hx_reap(&srv);

	for (t = 0; t < THREADS; t++) {
		struct client *c = &cl[t];

		for (i = 0; i < width; i++) {
			DAT_RETURN rc = dat_ep_disconnect(c->ep[i], DAT_CLOSE_ABRUPT_FLAG);

			/* the server may have ended the connection first */
			HX_CHECK(rc == DAT_SUCCESS || DAT_GET_TYPE(rc) == DAT_INVALID_STATE,
				 "dat_ep_disconnect: %s", hx_rc_str(rc));
			HX_OK(dat_ep_free(c->ep[i]));
			HX_OK(dat_evd_free(c->conn[i]));
		}
		HX_OK(dat_evd_free(c->req));
		HX_OK(dat_lmr_free(c->lmr));
	}
	hx_ia_close(&x);
}

START_TEST(two_eps_per_thread)
{
	run_order(2);
}
END_TEST

START_TEST(four_eps_per_thread)
{
	run_order(4);
}
END_TEST

START_TEST(eight_eps_per_thread)
{
	run_order(8);
}
END_TEST

int main(void)
{
	Suite *s;
	TCase *tc;
	SRunner *sr;
	int failed;

	if (!hx_env_ok()) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	s = suite_create("order");
	tc = tcase_create("delivery");
	tcase_add_checked_fixture(tc, hx_setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, two_eps_per_thread);
	tcase_add_test(tc, four_eps_per_thread);
	tcase_add_test(tc, eight_eps_per_thread);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
