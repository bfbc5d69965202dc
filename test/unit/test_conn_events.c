/* The queue of synthesised connection events (udapl/conn_events.h): order
 * across endpoints, one terminal event per attempt, a terminal event
 * behind a queued ESTABLISHED, drop, private data, and the eventfd that
 * tells the progress thread something waits (but for what a thread that
 * collects its own events queued while the queue was quiet for it). */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "conn_events.h"

/* A transport's endpoint, as far as the queue is concerned. */
struct dapl_tep {
	int id;
	struct dapl_conn_event_slot cev;
};

static struct dapl_conn_events q;
static struct dapl_tep eps[3];

static void setup(void)
{
	int i;

	ck_assert_int_eq(dapl_conn_events_init(&q), 0);
	ck_assert_int_ge(dapl_conn_events_fd(&q), 0);
	for (i = 0; i < 3; i++) {
		eps[i].id = i;
		dapl_conn_event_slot_init(&eps[i].cev, &eps[i]);
	}
}

static void teardown(void)
{
	dapl_conn_events_destroy(&q);
	ck_assert_int_eq(dapl_conn_events_fd(&q), -1);
}

static bool readable(void)
{
	struct pollfd p = { .fd = dapl_conn_events_fd(&q), .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Pops one event and checks its endpoint, type and status. */
static struct dapl_tcm_event pop_is(struct dapl_tep *ep,
				    enum dapl_tcm_event_type type, int status)
{
	struct dapl_tcm_event ev;

	memset(&ev, 0, sizeof(ev));
	ck_assert_msg(dapl_conn_events_pop(&q, &ev), "queue empty, expected ep %d",
		      ep->id);
	ck_assert_ptr_eq(ev.ep, ep);
	ck_assert_int_eq(ev.type, type);
	ck_assert_int_eq(ev.status, status);
	ck_assert_ptr_nonnull(ev.pdata);
	return ev;
}

static void empty(void)
{
	struct dapl_tcm_event ev;

	ck_assert(!dapl_conn_events_pop(&q, &ev));
	ck_assert(!readable());
}

START_TEST(fifo_across_endpoints)
{
	empty();
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_UNREACHABLE,
			       -EHOSTUNREACH, NULL, 0);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[2].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	ck_assert(dapl_conn_event_slot_queued(&eps[0].cev));
	pop_is(&eps[1], DAPL_TCM_UNREACHABLE, -EHOSTUNREACH);
	ck_assert(!dapl_conn_event_slot_queued(&eps[1].cev));
	/* one queued later goes behind those already there */
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_CONN_ERROR, -EIO,
			       NULL, 0);
	/* its attempt has had its end: ignored */
	ck_assert(!dapl_conn_event_slot_queued(&eps[1].cev));
	dapl_conn_events_drop(&q, &eps[1].cev);          /* a new attempt */
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_CONN_ERROR, -EIO,
			       NULL, 0);
	pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	pop_is(&eps[2], DAPL_TCM_ESTABLISHED, 0);
	pop_is(&eps[1], DAPL_TCM_CONN_ERROR, -EIO);
	empty();
}
END_TEST

START_TEST(one_terminal_event_per_attempt)
{
	/* a second terminal event while the first is queued */
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_REJECTED,
			       -ECONNREFUSED, NULL, 0);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	pop_is(&eps[0], DAPL_TCM_REJECTED, -ECONNREFUSED);
	empty();
	/* and after it was handed out: the attempt is over */
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_CONN_ERROR, -EIO,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	empty();
	/* a new attempt has its own */
	dapl_conn_events_drop(&q, &eps[0].cev);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_CONN_ERROR, -EIO,
			       NULL, 0);
	pop_is(&eps[0], DAPL_TCM_CONN_ERROR, -EIO);
	empty();
}
END_TEST

START_TEST(terminal_waits_behind_established)
{
	static const char acc[] = "accepted";
	struct dapl_tcm_event ev;

	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_ESTABLISHED, 0, acc,
			       sizeof(acc));
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	/* only one end, however many come */
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_CONN_ERROR, -EIO,
			       NULL, 0);
	/* a second ESTABLISHED is no event */
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	ev = pop_is(&eps[0], DAPL_TCM_ESTABLISHED, 0);
	ck_assert_uint_eq(ev.pdata_len, sizeof(acc));
	ck_assert_mem_eq(ev.pdata, acc, sizeof(acc));
	ck_assert(dapl_conn_event_slot_queued(&eps[0].cev));
	ck_assert(readable());
	pop_is(&eps[1], DAPL_TCM_ESTABLISHED, 0);
	ev = pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	ck_assert_uint_eq(ev.pdata_len, 0);
	empty();

	/* also when ESTABLISHED is the only thing queued */
	dapl_conn_events_drop(&q, &eps[0].cev);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_CONN_ERROR,
			       -ECONNRESET, NULL, 0);
	pop_is(&eps[0], DAPL_TCM_ESTABLISHED, 0);
	ck_assert(readable());
	pop_is(&eps[0], DAPL_TCM_CONN_ERROR, -ECONNRESET);
	empty();
}
END_TEST

START_TEST(drop_removes_an_endpoints_events)
{
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[2].cev, DAPL_TCM_UNREACHABLE,
			       -ETIMEDOUT, NULL, 0);
	/* from the middle, with the end that waited behind it */
	dapl_conn_events_drop(&q, &eps[1].cev);
	ck_assert(!dapl_conn_event_slot_queued(&eps[1].cev));
	pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	pop_is(&eps[2], DAPL_TCM_UNREACHABLE, -ETIMEDOUT);
	empty();

	/* the tail, then something queued behind the new tail */
	dapl_conn_events_drop(&q, &eps[0].cev);
	dapl_conn_events_drop(&q, &eps[2].cev);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	dapl_conn_events_queue(&q, &eps[2].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	dapl_conn_events_drop(&q, &eps[2].cev);
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_CONN_ERROR, -EIO,
			       NULL, 0);
	pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	pop_is(&eps[1], DAPL_TCM_CONN_ERROR, -EIO);
	empty();

	/* the only one: the fd goes quiet */
	dapl_conn_events_drop(&q, &eps[0].cev);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	ck_assert(readable());
	dapl_conn_events_drop(&q, &eps[0].cev);
	empty();
	/* dropping what has nothing queued changes nothing */
	dapl_conn_events_drop(&q, &eps[2].cev);
	empty();
}
END_TEST

START_TEST(pdata_copied_and_cut)
{
	uint8_t big[DAPL_CONN_EVENT_PDATA_MAX + 100], copy[sizeof(big)];
	struct dapl_tcm_event ev;
	size_t i;

	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)(i * 7 + 1);
	memcpy(copy, big, sizeof(big));
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_REJECTED, 0, big,
			       sizeof(big));
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_REJECTED, 0, big, 3);
	/* the caller's buffer is its own again at once */
	memset(big, 0, sizeof(big));
	ev = pop_is(&eps[0], DAPL_TCM_REJECTED, 0);
	ck_assert_uint_eq(ev.pdata_len, DAPL_CONN_EVENT_PDATA_MAX);
	ck_assert_mem_eq(ev.pdata, copy, DAPL_CONN_EVENT_PDATA_MAX);
	ev = pop_is(&eps[1], DAPL_TCM_REJECTED, 0);
	ck_assert_uint_eq(ev.pdata_len, 3);
	ck_assert_mem_eq(ev.pdata, copy, 3);
	/* none */
	dapl_conn_events_drop(&q, &eps[0].cev);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_REJECTED, 0, NULL, 0);
	ev = pop_is(&eps[0], DAPL_TCM_REJECTED, 0);
	ck_assert_uint_eq(ev.pdata_len, 0);
	empty();
}
END_TEST

START_TEST(fd_readable_while_queued)
{
	int i;

	ck_assert(!readable());
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	ck_assert(readable());
	dapl_conn_events_queue(&q, &eps[1].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	ck_assert(readable());
	pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	ck_assert(readable());          /* one left */
	pop_is(&eps[1], DAPL_TCM_DISCONNECTED, 0);
	empty();
	/* many rounds: it never sticks, never goes quiet too early */
	for (i = 0; i < 1000; i++) {
		dapl_conn_events_drop(&q, &eps[i % 3].cev);
		dapl_conn_events_queue(&q, &eps[i % 3].cev,
				       DAPL_TCM_CONN_ERROR, -EIO, NULL, 0);
		ck_assert(readable());
		if (i % 3 == 2) {
			pop_is(&eps[0], DAPL_TCM_CONN_ERROR, -EIO);
			pop_is(&eps[1], DAPL_TCM_CONN_ERROR, -EIO);
			ck_assert(readable());
			pop_is(&eps[2], DAPL_TCM_CONN_ERROR, -EIO);
			empty();
		}
	}
}
END_TEST

static void *queue_from_another_thread(void *arg)
{
	dapl_conn_events_queue(&q, &((struct dapl_tep *)arg)->cev,
			       DAPL_TCM_DISCONNECTED, 0, NULL, 0);
	return NULL;
}

START_TEST(quiet_for_its_thread_only)
{
	pthread_t t;

	/* what the quiet thread queues wakes nobody: it pops it itself */
	dapl_conn_events_quiet(&q, true);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_ESTABLISHED, 0,
			       NULL, 0);
	ck_assert(!readable());
	pop_is(&eps[0], DAPL_TCM_ESTABLISHED, 0);
	empty();
	/* another thread's event, queued meanwhile, behind one of ours
	 * or alone, still makes it readable, until all is popped */
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	ck_assert(!readable());
	ck_assert_int_eq(pthread_create(&t, NULL, queue_from_another_thread,
					&eps[1]), 0);
	ck_assert_int_eq(pthread_join(t, NULL), 0);
	ck_assert(readable());
	dapl_conn_events_queue(&q, &eps[2].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	ck_assert(readable());
	pop_is(&eps[1], DAPL_TCM_DISCONNECTED, 0);
	pop_is(&eps[2], DAPL_TCM_DISCONNECTED, 0);
	empty();
	/* off again: ours make it readable too */
	dapl_conn_events_quiet(&q, false);
	dapl_conn_events_drop(&q, &eps[0].cev);
	dapl_conn_events_queue(&q, &eps[0].cev, DAPL_TCM_DISCONNECTED, 0,
			       NULL, 0);
	ck_assert(readable());
	pop_is(&eps[0], DAPL_TCM_DISCONNECTED, 0);
	empty();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("conn_events");
	TCase *tc = tcase_create("queue");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, fifo_across_endpoints);
	tcase_add_test(tc, one_terminal_event_per_attempt);
	tcase_add_test(tc, terminal_waits_behind_established);
	tcase_add_test(tc, drop_removes_an_endpoints_events);
	tcase_add_test(tc, pdata_copied_and_cut);
	tcase_add_test(tc, fd_readable_while_queued);
	tcase_add_test(tc, quiet_for_its_thread_only);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
