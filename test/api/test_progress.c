/* Progress without the consumer (dapl_tcp(7), "Progress" and
 * "Completion"): a consumer that takes a Send in dat_evd_wait and then
 * makes no DAT call still lets the peer's Send complete -- the placement
 * report goes when the Send was placed, not with a reply that never comes
 * or at the provider's next tick.
 *
 * The test process takes the Send; the sender is a peer process with an
 * IA of its own (hx_spawn).  DAPL_TCP_NO_TIMER=1 switches the tcp
 * provider's periodic timer off, so nothing that depends on a tick can
 * carry the test.  Other providers ignore the variable and run the same
 * sequence.
 *
 * Nothing is timed; every wait is bounded by HX_WAIT_US only so that a
 * provider that never reports fails the test instead of hanging it. */
#define _GNU_SOURCE
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <dat/udat.h>

#include "conn_harness.h"

enum {
	MSG_QUAL = 50,        /* test -> peer: the qualifier to connect to */
	MSG_SENT = 52,        /* peer -> test: its Send completed */
	MSG_POSTED = 54,      /* peer -> test: it is posted */
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

/* One side's endpoint, its EVDs and a registered buffer. */
struct side {
	struct hx_ep e;              /* the endpoint and its connect EVD */
	DAT_EVD_HANDLE req, rcv;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	unsigned char *buf;
	size_t len;
};

#define SRC 0                                   /* what a Send sends */
#define DST 64                                  /* where it lands */
#define SIDE_LEN 4096                           /* a page: aligned_alloc */

static void side_create(struct hx_ia *ia, struct side *s)
{
	DAT_REGION_DESCRIPTION r;

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
	HX_OK(dat_evd_create(ia->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->req));
	HX_OK(dat_evd_create(ia->ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s->rcv));
	HX_OK(dat_ep_create(ia->ia, ia->pz, s->rcv, s->req, s->e.conn, NULL, &s->e.ep));
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

/* The test process's side: a peer spawned to run fn, an endpoint that
 * accepts its connection with one receive of recv_len posted (cookie
 * 1000) before it does. */
static void target_accept(struct hx_peer *peer, const char *name,
			  hx_peer_fn fn, struct side *s, DAT_VLEN recv_len,
			  DAT_PSP_HANDLE *psp)
{
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	DAT_CONN_QUAL qual;
	DAT_LMR_TRIPLET t;
	DAT_CR_HANDLE cr;
	int64_t v;

	hx_spawn(peer, name, fn, NULL);
	hx_ia_open(&x);
	side_create(&x, s);
	*psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);
	v = (int64_t)qual;
	hx_send(peer, MSG_QUAL, &v, 1, NULL, 0);
	cr = hx_wait_cr(x.cr, &arr);
	t = trip(s->lctx, s->buf + DST, recv_len);
	HX_OK(dat_ep_post_recv(s->e.ep, 1, &t, cookie(1000), DAT_COMPLETION_DEFAULT_FLAG));
	HX_OK(dat_cr_accept(cr, s->e.ep, 0, NULL));
	hx_expect_event(s->e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s->e.ep, NULL);
}

/* ... and its end: it disconnects, the peer is reaped. */
static void target_close(struct hx_peer *peer, struct side *s, DAT_PSP_HANDLE psp)
{
	HX_OK(dat_ep_disconnect(s->e.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(s->e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s->e.ep, NULL);
	hx_reap(peer);
	side_free(s);
	HX_OK(dat_psp_free(psp));
	hx_ia_close(&x);
}

/* A consumer that takes one Send in dat_evd_wait and makes no DAT call
 * afterwards: the peer's Send still completes -- the placement report
 * goes when the Send was placed, not with a reply that never comes or at
 * the next tick of the provider's timer. */
static void ack_case(void)
{
	DAT_PSP_HANDLE psp;
	struct hx_peer peer;
	struct hx_msg m;
	struct side s;

	target_accept(&peer, "sender", sender, &s, 64, &psp);
	hx_expect_msg(&peer, MSG_POSTED, &m);
	wait_dto(s.rcv, 1000);
	/* no DAT call until the sender's Send completed */
	hx_expect_msg(&peer, MSG_SENT, &m);
	target_close(&peer, &s, psp);
}

/* With the progress thread as it comes: spinning DAT_PROGRESS_SPIN_US's
 * default after each arrival (libdat(7)). */
START_TEST(ack_waits_for_no_tick)
{
	ack_case();
}
END_TEST

/* The same with a thread that sleeps as soon as nothing is ready. */
START_TEST(ack_waits_for_no_tick_not_spinning)
{
	ck_assert_int_eq(setenv("DAT_PROGRESS_SPIN_US", "0", 1), 0);
	ack_case();
}
END_TEST

/* The same with both progress threads spinning between arrivals
 * (DAT_PROGRESS_SPIN_US, libdat(7)): polling without sleeping must lose
 * no arrival and no event. */
START_TEST(ack_waits_for_no_tick_spinning)
{
	ck_assert_int_eq(setenv("DAT_PROGRESS_SPIN_US", "200", 1), 0);
	ack_case();
}
END_TEST

/* ---- a target that drove its endpoint, then polls memory -------------- */

enum {
	MSG_WHERE = 56,       /* test -> peer: buf address, rmr context */
	MSG_POLLING = 58,     /* test -> peer: from now on no DAT call */
	MSG_CHECKED = 60,     /* peer -> test: Write and Read completed, Read data right */
};

#define DRIVE_ROUNDS 200        /* Send ping-pongs the target busy-polls */
#define MARK_AT 128             /* where the peer's RDMA Write lands */
#define READ_AT 256             /* what the peer's RDMA Read takes */
#define READ_LEN 64

static uint64_t mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Busy-polls evd (dat_evd_dequeue, no wait) for one successful DTO
 * completion with this cookie, as MPIs poll their CQs. */
static void poll_dto(DAT_EVD_HANDLE evd, uint64_t ck)
{
	uint64_t until = mono_us() + HX_WAIT_US;
	DAT_EVENT ev;
	DAT_RETURN rc;

	while ((rc = dat_evd_dequeue(evd, &ev)) != DAT_SUCCESS) {
		HX_CHECK(DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY, "dequeue: %s",
			 hx_rc_str(rc));
		HX_CHECK(mono_us() < until, "no completion %#" PRIx64, ck);
	}
	HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT &&
		 ev.event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS &&
		 ev.event_data.dto_completion_event_data.user_cookie.as_64 == ck,
		 "got %s status %d cookie %#" PRIx64 ", expected %#" PRIx64,
		 hx_event_str(ev.event_number),
		 (int)ev.event_data.dto_completion_event_data.status,
		 ev.event_data.dto_completion_event_data.user_cookie.as_64, ck);
}

/* The initiator: Send ping-pongs while the target busy-polls, then,
 * once the target polls only memory, one RDMA Write into it and one RDMA
 * Read from it, each waited for. */
static void initiator(struct hx_peer *self, void *arg)
{
	struct hx_ia y;
	struct side s;
	struct hx_msg m, where;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET r;
	int i;

	(void)arg;
	hx_expect_msg(self, MSG_QUAL, &m);
	hx_ia_open(&y);
	side_create(&y, &s);
	t = trip(s.lctx, s.buf + DST, 8);
	HX_OK(dat_ep_post_recv(s.e.ep, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	hx_connect(&s.e, (DAT_CONN_QUAL)m.v[0], 0, NULL);
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s.e.ep, NULL);
	hx_expect_msg(self, MSG_WHERE, &where);
	for (i = 0; i < DRIVE_ROUNDS; i++) {
		t = trip(s.lctx, s.buf + SRC, 8);
		HX_OK(dat_ep_post_send(s.e.ep, 1, &t, cookie(100 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		poll_dto(s.rcv, 1 + (uint64_t)i);
		t = trip(s.lctx, s.buf + DST, 8);
		HX_OK(dat_ep_post_recv(s.e.ep, 1, &t, cookie(2 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		poll_dto(s.req, 100 + (uint64_t)i);
	}
	hx_expect_msg(self, MSG_POLLING, &m);

	memset(&r, 0, sizeof(r));
	/* the mark: the target sees it in memory, its placement report
	 * completes the Write here */
	memset(s.buf + SRC, 0x5a, 8);
	t = trip(s.lctx, s.buf + SRC, 8);
	r.rmr_context = (DAT_RMR_CONTEXT)where.v[1];
	r.target_address = (DAT_VADDR)where.v[0] + MARK_AT;
	r.segment_length = 8;
	HX_OK(dat_ep_post_rdma_write(s.e.ep, 1, &t, cookie(7000), &r,
				     DAT_COMPLETION_DEFAULT_FLAG));
	wait_dto(s.req, 7000);
	/* what the target wrote before it stopped calling DAT */
	t = trip(s.lctx, s.buf + DST, READ_LEN);
	r.target_address = (DAT_VADDR)where.v[0] + READ_AT;
	r.segment_length = READ_LEN;
	HX_OK(dat_ep_post_rdma_read(s.e.ep, 1, &t, cookie(7001), &r,
				    DAT_COMPLETION_DEFAULT_FLAG));
	wait_dto(s.req, 7001);
	HX_CHECK(hx_pattern_ok(s.buf + DST, READ_LEN, 77),
		 "the RDMA Read brought other bytes than the target's");
	hx_send(self, MSG_CHECKED, NULL, 0, NULL, 0);
	/* the target disconnects: nothing of ours to read */
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.e.ep, NULL);
	side_free(&s);
	hx_ia_close(&y);
}

/* A target that busy-polled its endpoint's EVDs (so the provider leaves
 * the endpoint's socket to it) and then makes no DAT call, spinning on
 * the memory its peer writes: the peer's RDMA Write is still placed and
 * its RDMA Read answered, and the peer's completions arrive, with the
 * provider's periodic timer off (DAPL_TCP_NO_TIMER, setup) -- what wakes
 * a thread to read the socket must be the arrival itself (dapl_tcp(7),
 * "Progress").  Nothing is timed; the spin gives up after HX_WAIT_US only
 * so that a lost arrival fails the test instead of hanging it. */
static void placement_case(void)
{
	DAT_PSP_HANDLE psp;
	struct hx_peer peer;
	struct hx_msg m;
	struct side s;
	DAT_LMR_TRIPLET t;
	volatile unsigned char *mark;
	int64_t v[2];
	uint64_t until;
	int i;

	target_accept(&peer, "initiator", initiator, &s, 8, &psp);
	hx_pattern(s.buf + READ_AT, READ_LEN, 77);
	v[0] = (int64_t)(uintptr_t)s.buf;
	v[1] = (int64_t)s.rctx;
	hx_send(&peer, MSG_WHERE, v, 2, NULL, 0);
	for (i = 0; i < DRIVE_ROUNDS; i++) {
		poll_dto(s.rcv, 1000 + (uint64_t)i);
		t = trip(s.lctx, s.buf + DST, 8);
		HX_OK(dat_ep_post_recv(s.e.ep, 1, &t, cookie(1001 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		t = trip(s.lctx, s.buf + SRC, 8);
		HX_OK(dat_ep_post_send(s.e.ep, 1, &t, cookie(5000 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		poll_dto(s.req, 5000 + (uint64_t)i);
	}
	/* from here no DAT call until the peer says both completed */
	hx_send(&peer, MSG_POLLING, NULL, 0, NULL, 0);
	mark = s.buf + MARK_AT;
	until = mono_us() + HX_WAIT_US;
	while (mark[7] != 0x5a && mono_us() < until)
		;
	HX_CHECK(mark[7] == 0x5a, "the peer's RDMA Write was not placed");
	hx_expect_msg(&peer, MSG_CHECKED, &m);
	target_close(&peer, &s, psp);
}

START_TEST(placement_after_driving)
{
	placement_case();
}
END_TEST

/* The same with a thread that sleeps as soon as nothing is ready. */
START_TEST(placement_after_driving_not_spinning)
{
	ck_assert_int_eq(setenv("DAT_PROGRESS_SPIN_US", "0", 1), 0);
	placement_case();
}
END_TEST

/* How many threads of ours are named name; *tid (when not NULL) one of
 * them, -1 if none. */
static int threads_named_tid(const char *name, pid_t *tid)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (tid)
		*tid = -1;
	ck_assert_ptr_nonnull(d);
	while ((e = readdir(d))) {
		char path[300], comm[64] = "";
		FILE *f;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;       /* a thread that ended meanwhile */
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = 0;
		fclose(f);
		if (strcmp(comm, name) == 0) {
			n++;
			if (tid)
				*tid = (pid_t)atoi(e->d_name);
		}
	}
	closedir(d);
	return n;
}

/* The IA's progress thread is named, so that ps, top and perf tell it
 * from the program's threads (dapl_tcp(7), "Progress"). */
static int threads_named(const char *name)
{
	return threads_named_tid(name, NULL);
}

START_TEST(progress_thread_is_named)
{
	ck_assert_int_eq(threads_named("dat-progress"), 0);
	hx_ia_open(&x);
	ck_assert_int_eq(threads_named("dat-progress"), 1);
	hx_ia_close(&x);
}
END_TEST

/* ofi-tcp's own threads, started at the first listen (ofi_listen.c),
 * carry names too: one each per IA, gone with the IA. */
START_TEST(ofi_threads_are_named)
{
	DAT_PSP_HANDLE psp;

	if (!hx_is_ofi_tcp())
		return;
	ck_assert_int_eq(threads_named("dat-ofi-listen"), 0);
	hx_ia_open(&x);
	HX_OK(dat_psp_create_any(x.ia, &(DAT_CONN_QUAL){0}, x.cr,
				 DAT_PSP_CONSUMER_FLAG, &psp));
	ck_assert_int_eq(threads_named("dat-ofi-listen"), 1);
	ck_assert_int_eq(threads_named("dat-ofi-watch"), 1);
	HX_OK(dat_psp_free(psp));
	hx_ia_close(&x);
	ck_assert_int_eq(threads_named("dat-ofi-listen"), 0);
	ck_assert_int_eq(threads_named("dat-ofi-watch"), 0);
}
END_TEST

static void *nothing(void *arg)
{
	return arg;
}

/* Whether this process may start a SCHED_FIFO thread (root,
 * CAP_SYS_NICE or RLIMIT_RTPRIO; a cgroup may still refuse). */
static bool fifo_allowed(void)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t a;
	pthread_t t;
	int err;

	ck_assert_int_eq(pthread_attr_init(&a), 0);
	ck_assert_int_eq(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
	ck_assert_int_eq(pthread_attr_setschedpolicy(&a, SCHED_FIFO), 0);
	ck_assert_int_eq(pthread_attr_setschedparam(&a, &sp), 0);
	err = pthread_create(&t, &a, nothing, NULL);
	pthread_attr_destroy(&a);
	if (err == 0)
		pthread_join(t, NULL);
	else
		ck_assert_int_eq(err, EPERM);
	return err == 0;
}

/* The policy of the IA's progress thread, just opened with
 * DAT_PROGRESS_RT=rt (NULL: unset), its priority, and whether the IA's
 * provider reports what its thread's passes found (libdat's tcp and ofi;
 * not verbs). */
static int progress_policy_with(const char *rt, int *prio, bool *reports)
{
	DAT_PROVIDER_ATTR pa;
	struct sched_param sp;
	pid_t tid;
	int policy;

	if (rt)
		ck_assert_int_eq(setenv("DAT_PROGRESS_RT", rt, 1), 0);
	else
		ck_assert_int_eq(unsetenv("DAT_PROGRESS_RT"), 0);
	hx_ia_open(&x);
	ck_assert_int_eq(threads_named_tid("dat-progress", &tid), 1);
	ck_assert_int_gt(tid, 0);
	policy = sched_getscheduler(tid);
	ck_assert_int_ge(policy, 0);
	ck_assert_int_eq(sched_getparam(tid, &sp), 0);
	*prio = sp.sched_priority;
	memset(&pa, 0, sizeof(pa));
	HX_OK(dat_ia_query(x.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_ALL, &pa));
	*reports = strcmp(pa.provider_name, "libdat tcp") == 0 ||
		   strcmp(pa.provider_name, "libdat ofi") == 0;
	hx_ia_close(&x);
	return policy;
}

/* Where the system allows it, the progress thread runs SCHED_FIFO from
 * its start (priority 1, or DAT_PROGRESS_RT's): woken SCHED_OTHER, it
 * may wait for the scheduler's tick before it preempts a program
 * spinning on memory (libdat(7), DAT_PROGRESS_RT).  Where it does not,
 * with DAT_PROGRESS_RT=0, and on a provider whose passes do not say when
 * a busy poller did their work (verbs), the thread runs as its creator,
 * SCHED_OTHER. */
START_TEST(progress_thread_realtime)
{
	bool allowed = fifo_allowed(), reports;
	int prio, policy;

	ck_assert_int_eq(sched_getscheduler(0), SCHED_OTHER);
	policy = progress_policy_with(NULL, &prio, &reports);
	allowed = allowed && reports;
	ck_assert_int_eq(policy, allowed ? SCHED_FIFO : SCHED_OTHER);
	ck_assert_int_eq(prio, allowed ? 1 : 0);
	ck_assert_int_eq(progress_policy_with("7", &prio, &reports),
			 allowed ? SCHED_FIFO : SCHED_OTHER);
	ck_assert_int_eq(prio, allowed ? 7 : 0);
	ck_assert_int_eq(progress_policy_with("0", &prio, &reports),
			 SCHED_OTHER);
	ck_assert_int_eq(prio, 0);
}
END_TEST

/* A setting that is not a number of microseconds is refused with a line
 * naming it, and the IA opens and runs as without it. */
START_TEST(spin_setting_not_a_number)
{
	FILE *log = tmpfile();
	char said[1024] = "";
	size_t n;
	int saved = dup(2);

	ck_assert_ptr_nonnull(log);
	ck_assert_int_ge(saved, 0);
	ck_assert_int_eq(setenv("DAT_PROGRESS_SPIN_US", "50us", 1), 0);
	ck_assert_int_ge(dup2(fileno(log), 2), 0);
	hx_ia_open(&x);
	ck_assert_int_ge(dup2(saved, 2), 0);
	close(saved);
	ck_assert_int_eq(threads_named("dat-progress"), 1);
	hx_ia_close(&x);
	rewind(log);
	n = fread(said, 1, sizeof(said) - 1, log);
	said[n] = 0;
	fclose(log);
	ck_assert_msg(strstr(said, "DAT_PROGRESS_SPIN_US=50us") != NULL,
		      "no line about the bad setting; stderr said: %s", said);
}
END_TEST

static void setup(void)
{
	/* the tcp provider's periodic timer off: only arrivals may move
	 * the data (dapl_tcp(7)); the sender inherits it */
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
	tcase_add_test(tc, ack_waits_for_no_tick);
	tcase_add_test(tc, ack_waits_for_no_tick_not_spinning);
	tcase_add_test(tc, ack_waits_for_no_tick_spinning);
	tcase_add_test(tc, placement_after_driving);
	tcase_add_test(tc, placement_after_driving_not_spinning);
	tcase_add_test(tc, progress_thread_is_named);
	tcase_add_test(tc, progress_thread_realtime);
	tcase_add_test(tc, ofi_threads_are_named);
	tcase_add_test(tc, spin_setting_not_a_number);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
