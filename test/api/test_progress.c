/* Progress without the consumer (dapl_tcp(7), "Progress"): a target that
 * polls its CQ between rounds -- many dat_evd_dequeue calls, as an MPI
 * progress engine reaping completions does -- and otherwise makes no DAT
 * call, spinning on its own memory, still has the peer's RDMA Writes
 * placed and its RDMA Reads answered, and the initiator's completions
 * arrive.  The progress thread must not take those polls for a consumer
 * that reads the socket itself: it polled, but it polls no more.
 *
 * The test process is the target; the initiator is a peer process with an
 * IA of its own (hx_spawn).  DAPL_TCP_NO_TIMER=1 switches the tcp
 * provider's periodic timer off, so nothing that depends on a tick can
 * carry the test: only the arrival of the data may.  Other providers
 * ignore the variable and run the same sequence.
 *
 * Each round: the initiator RDMA-Writes the round's number into the
 * target's ring, the target sees it in memory, polls its CQ 16 times,
 * stores the number in a word of its own and RDMA-Writes an answer into
 * the initiator's ring (a post, not a poll); the initiator sees the
 * answer in memory and RDMA-Reads the target's word until it holds the
 * round's number.  Neither side reaps a completion before the end, so
 * neither polls while it waits for the other.
 *
 * Nothing is timed.  The spins on memory are bounded by HX_WAIT_US only
 * so that a provider that never places the data fails the test instead
 * of hanging it. */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dat/udat.h>

#include "conn_harness.h"

enum {
	ROUNDS = 64,          /* write, answer, read per round */
	POLLS = 16,           /* CQ polls of the target per round */
	SLOT = 64,            /* bytes of a ring per round */
	MSG_QUAL = 50,        /* test -> peer: the qualifier to connect to */
	MSG_DONE = 51,        /* peer -> test: every round completed (v[0]: rounds) */
	MSG_SENT = 52,        /* peer -> test: its last Send completed */
	MSG_POSTED = 54,      /* peer -> test: it is posted */
	MSG_ADVERT = 55,      /* either way: v[0] RMR context, v[1] address */
};

#define ALL_PRIV (DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG | \
		  DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)

static struct hx_ia x;

static DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

static DAT_LMR_TRIPLET trip(DAT_LMR_CONTEXT ctx, const void *p, DAT_VLEN len)
{
	DAT_LMR_TRIPLET t;

	memset(&t, 0, sizeof(t));
	t.lmr_context = ctx;
	t.virtual_address = (DAT_VADDR)(uintptr_t)p;
	t.segment_length = len;
	return t;
}

/* One side's endpoint, its EVDs and a registered buffer: a ring of
 * ROUNDS slots the peer writes, a word the peer reads, room to send and
 * receive the advert. */
struct side {
	struct hx_ep e;              /* the endpoint and its connect EVD */
	DAT_EVD_HANDLE req, rcv;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	unsigned char *buf;
	size_t len;
};

#define RING 0
#define WORD ((size_t)ROUNDS * SLOT)           /* 8 bytes the peer reads */
#define SINK (WORD + 64)                        /* where a Read lands */
#define SRC (SINK + 64)                         /* what a Write sends */
#define ADVERT (SRC + 64)                       /* the advert sent / received */
#define SIDE_LEN (3 * 4096)                      /* whole pages: aligned_alloc */
_Static_assert(ADVERT + 128 <= SIDE_LEN, "the side's buffer holds its parts");

static void side_create(struct hx_ia *ia, struct side *s)
{
	DAT_REGION_DESCRIPTION r;
	DAT_EP_ATTR attr;
	DAT_EP_PARAM p;
	DAT_EP_HANDLE probe;

	/* the provider's defaults, with room for every request of the
	 * rounds: none is reaped before the end */
	HX_OK(dat_ep_create(ia->ia, ia->pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL,
			    DAT_HANDLE_NULL, NULL, &probe));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(probe, DAT_EP_FIELD_EP_ATTR_ALL, &p));
	HX_OK(dat_ep_free(probe));
	attr = p.ep_attr;
	attr.max_request_dtos = 2 * ROUNDS + 8;
	memset(s, 0, sizeof(*s));
	s->len = SIDE_LEN;
	s->buf = aligned_alloc(4096, SIDE_LEN);
	ck_assert_ptr_nonnull(s->buf);
	memset(s->buf, 0, SIDE_LEN);
	memset(&r, 0, sizeof(r));
	r.for_va = s->buf;
	HX_OK(dat_lmr_create(ia->ia, DAT_MEM_TYPE_VIRTUAL, r, SIDE_LEN, ia->pz, ALL_PRIV,
			     &s->lmr, &s->lctx, &s->rctx, NULL, NULL));
	HX_OK(dat_evd_create(ia->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &s->e.conn));
	/* every completion of the rounds waits here until the end */
	HX_OK(dat_evd_create(ia->ia, 4 * ROUNDS, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req));
	HX_OK(dat_evd_create(ia->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rcv));
	HX_OK(dat_ep_create(ia->ia, ia->pz, s->rcv, s->req, s->e.conn, &attr, &s->e.ep));
}

static void side_free(struct side *s)
{
	HX_OK(dat_ep_free(s->e.ep));
	HX_OK(dat_evd_free(s->e.conn));
	HX_OK(dat_evd_free(s->req));
	HX_OK(dat_evd_free(s->rcv));
	HX_OK(dat_lmr_free(s->lmr));
	free(s->buf);
}

/* Waits (dat_evd_wait) for one successful DTO completion with this
 * cookie. */
static void wait_dto(DAT_EVD_HANDLE evd, uint64_t ck)
{
	DAT_EVENT ev;
	DAT_COUNT n;

	HX_OK(dat_evd_wait(evd, HX_WAIT_US, 1, &ev, &n));
	HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT, "got %s",
		 hx_event_str(ev.event_number));
	HX_CHECK(ev.event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS &&
		 ev.event_data.dto_completion_event_data.user_cookie.as_64 == ck,
		 "completion status %d cookie %#" PRIx64 ", expected success %#" PRIx64,
		 (int)ev.event_data.dto_completion_event_data.status,
		 ev.event_data.dto_completion_event_data.user_cookie.as_64, ck);
}

/* Spins (no DAT call) until the 8-byte word at p holds v. */
static void spin_for(const unsigned char *p, uint64_t v, const char *who, int round)
{
	const volatile uint64_t *w = (const volatile uint64_t *)p;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (*w != v) {
		clock_gettime(CLOCK_MONOTONIC, &t);
		HX_CHECK((uint64_t)(t.tv_sec - t0.tv_sec) * 1000000u <= HX_WAIT_US,
			 "round %d: %s never landed in memory polled without a DAT call "
			 "(holds %" PRIu64 ", expected %" PRIu64 ")", round, who, (uint64_t)*w, v);
		sched_yield();
	}
	atomic_thread_fence(memory_order_acquire);
}

/* What a side tells the other of its memory (a Send). */
struct advert {
	DAT_RMR_CONTEXT rctx;
	DAT_VADDR addr;
};

/* Over the harness's pipe, not a DAT Send: no completion is polled for
 * before the rounds, so nothing the progress thread sees of the consumer
 * comes from before them. */
static void send_advert(struct hx_peer *p, const struct side *s)
{
	int64_t v[2];

	v[0] = (int64_t)s->rctx;
	v[1] = (int64_t)(uintptr_t)s->buf;
	hx_send(p, MSG_ADVERT, v, 2, NULL, 0);
}

static void expect_advert(struct hx_peer *p, struct advert *a)
{
	struct hx_msg m;

	hx_expect_msg(p, MSG_ADVERT, &m);
	a->rctx = (DAT_RMR_CONTEXT)m.v[0];
	a->addr = (DAT_VADDR)m.v[1];
}

static DAT_RMR_TRIPLET remote(const struct advert *a, size_t off, DAT_VLEN len)
{
	DAT_RMR_TRIPLET r;

	memset(&r, 0, sizeof(r));
	r.rmr_context = a->rctx;
	r.target_address = a->addr + (DAT_VADDR)off;
	r.segment_length = len;
	return r;
}

/* The initiator: ROUNDS of an RDMA Write into the target's ring, the
 * target's answer awaited in memory, RDMA Reads of the target's word until
 * it holds the round's number; every completion reaped at the end. */
static void initiator(struct hx_peer *self, void *arg)
{
	struct hx_ia y;
	struct side s;
	struct hx_msg m;
	struct advert adv;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET r;
	DAT_EVENT ev;
	uint64_t ck = 100;
	int i, n;
	int64_t v;

	(void)arg;
	hx_expect_msg(self, MSG_QUAL, &m);
	hx_ia_open(&y);
	side_create(&y, &s);
	hx_connect(&s.e, (DAT_CONN_QUAL)m.v[0], 0, NULL);
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s.e.ep, NULL);
	expect_advert(self, &adv);
	send_advert(self, &s);

	for (i = 0; i < ROUNDS; i++) {
		uint64_t seq = (uint64_t)i + 1;

		memcpy(s.buf + SRC, &seq, sizeof(seq));
		t = trip(s.lctx, s.buf + SRC, 8);
		r = remote(&adv, RING + (size_t)i * SLOT, 8);
		HX_OK(dat_ep_post_rdma_write(s.e.ep, 1, &t, cookie(ck++), &r,
					     DAT_COMPLETION_DEFAULT_FLAG));
		spin_for(s.buf + RING + (size_t)i * SLOT, seq, "the target's answer", i);
		/* the target stored seq in its word before it answered */
		memset(s.buf + SINK, 0, 8);
		t = trip(s.lctx, s.buf + SINK, 8);
		r = remote(&adv, WORD, 8);
		HX_OK(dat_ep_post_rdma_read(s.e.ep, 1, &t, cookie(ck++), &r,
					    DAT_COMPLETION_DEFAULT_FLAG));
		spin_for(s.buf + SINK, seq, "the RDMA Read of the target's word", i);
	}
	/* every Write and Read completed, in order and successfully */
	for (n = 0; n < (int)(ck - 100); n++) {
		DAT_COUNT got;

		HX_OK(dat_evd_wait(s.req, HX_WAIT_US, 1, &ev, &got));
		HX_CHECK(ev.event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS &&
			 ev.event_data.dto_completion_event_data.user_cookie.as_64 ==
			 100 + (uint64_t)n,
			 "completion %d: status %d cookie %" PRIu64, n,
			 (int)ev.event_data.dto_completion_event_data.status,
			 ev.event_data.dto_completion_event_data.user_cookie.as_64);
	}
	v = ROUNDS;
	hx_send(self, MSG_DONE, &v, 1, NULL, 0);
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.e.ep, NULL);
	side_free(&s);
	hx_ia_close(&y);
}

START_TEST(rdma_lands_while_the_target_polls_memory)
{
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_CR_HANDLE cr;
	struct hx_peer peer;
	struct hx_msg m;
	struct side s;
	struct advert adv;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET r;
	DAT_EVENT ev;
	uint64_t ck = 100;
	int64_t v;
	int i, k;

	/* the peer first: it is forked before our first DAT call */
	hx_spawn(&peer, "initiator", initiator, NULL);
	hx_ia_open(&x);
	side_create(&x, &s);
	psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);
	v = (int64_t)qual;
	hx_send(&peer, MSG_QUAL, &v, 1, NULL, 0);
	cr = hx_wait_cr(x.cr, &arr);
	HX_OK(dat_cr_accept(cr, s.e.ep, 0, NULL));
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s.e.ep, NULL);
	send_advert(&peer, &s);
	expect_advert(&peer, &adv);

	for (i = 0; i < ROUNDS; i++) {
		uint64_t seq = (uint64_t)i + 1;

		/* the peer's Write, seen in memory without a DAT call */
		spin_for(s.buf + RING + (size_t)i * SLOT, seq, "the peer's RDMA Write", i);
		/* a consumer that polls its CQ between rounds (nothing is
		 * there: every completion waits for the end) */
		for (k = 0; k < POLLS; k++)
			HX_CHECK(DAT_GET_TYPE(dat_evd_dequeue(s.rcv, &ev)) == DAT_QUEUE_EMPTY,
				 "round %d: an event on the receive EVD", i);
		memcpy(s.buf + WORD, &seq, sizeof(seq));
		memcpy(s.buf + SRC, &seq, sizeof(seq));
		t = trip(s.lctx, s.buf + SRC, 8);
		r = remote(&adv, RING + (size_t)i * SLOT, 8);
		HX_OK(dat_ep_post_rdma_write(s.e.ep, 1, &t, cookie(ck++), &r,
					     DAT_COMPLETION_DEFAULT_FLAG));
	}
	hx_expect_msg(&peer, MSG_DONE, &m);
	ck_assert_int_eq((int)m.v[0], ROUNDS);
	/* the answers completed too */
	for (i = 0; i < ROUNDS; i++)
		wait_dto(s.req, 100 + (uint64_t)i);
	HX_OK(dat_ep_disconnect(s.e.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.e.ep, NULL);
	hx_reap(&peer);
	side_free(&s);
	HX_OK(dat_psp_free(psp));
	hx_ia_close(&x);
}
END_TEST

/* The sender of ack_waits_for_no_tick: one Send, its completion waited
 * for; then it disconnects itself (its own call: nothing of the peer's to
 * read). */
static void sender(struct hx_peer *self, void *arg)
{
	struct hx_ia y;
	struct side s;
	struct hx_msg m;
	DAT_LMR_TRIPLET t;

	(void)arg;
	hx_expect_msg(self, MSG_QUAL, &m);
	hx_ia_open(&y);
	side_create(&y, &s);
	hx_connect(&s.e, (DAT_CONN_QUAL)m.v[0], 0, NULL);
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s.e.ep, NULL);
	t = trip(s.lctx, s.buf + SRC, 8);
	HX_OK(dat_ep_post_send(s.e.ep, 1, &t, cookie(3000), DAT_COMPLETION_DEFAULT_FLAG));
	hx_send(self, MSG_POSTED, NULL, 0, NULL, 0);
	/* complete once the test has it placed, which only the placement
	 * report says: the test makes no DAT call after it took the Send */
	wait_dto(s.req, 3000);
	HX_OK(dat_ep_disconnect(s.e.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.e.ep, NULL);
	hx_send(self, MSG_SENT, NULL, 0, NULL, 0);
	side_free(&s);
	hx_ia_close(&y);
}

/* A consumer that takes one Send in dat_evd_wait and makes no DAT call
 * afterwards: the peer's Send still completes -- the placement report
 * goes when the Send was placed, not with a reply that never comes or at
 * the next tick of the provider's timer. */
START_TEST(ack_waits_for_no_tick)
{
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_CR_HANDLE cr;
	struct hx_peer peer;
	struct hx_msg m;
	struct side s;
	DAT_LMR_TRIPLET t;
	int64_t v;

	hx_spawn(&peer, "sender", sender, NULL);
	hx_ia_open(&x);
	side_create(&x, &s);
	psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);
	v = (int64_t)qual;
	hx_send(&peer, MSG_QUAL, &v, 1, NULL, 0);
	cr = hx_wait_cr(x.cr, &arr);
	t = trip(s.lctx, s.buf + ADVERT, 64);
	HX_OK(dat_ep_post_recv(s.e.ep, 1, &t, cookie(1000), DAT_COMPLETION_DEFAULT_FLAG));
	HX_OK(dat_cr_accept(cr, s.e.ep, 0, NULL));
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s.e.ep, NULL);
	hx_expect_msg(&peer, MSG_POSTED, &m);
	wait_dto(s.rcv, 1000);
	/* no DAT call until the sender's Send completed */
	hx_expect_msg(&peer, MSG_SENT, &m);
	HX_OK(dat_ep_disconnect(s.e.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.e.ep, NULL);
	hx_reap(&peer);
	side_free(&s);
	HX_OK(dat_psp_free(psp));
	hx_ia_close(&x);
}
END_TEST

static void setup(void)
{
	/* the tcp provider's periodic timer off: only arrivals may move
	 * the data (dapl_tcp(7)); the initiator inherits it */
	ck_assert_int_eq(setenv("DAPL_TCP_NO_TIMER", "1", 1), 0);
	hx_setup();
}

int main(void)
{
	Suite *s = suite_create("progress");
	TCase *tc = tcase_create("idle target");
	SRunner *sr;
	int failed;

	if (!hx_env_ok()) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, rdma_lands_while_the_target_polls_memory);
	tcase_add_test(tc, ack_waits_for_no_tick);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
