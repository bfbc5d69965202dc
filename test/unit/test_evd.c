/* Event dispatchers and CNOs without a network: a fake IA by hand, a fake
 * transport whose CQs are in-memory queues with an eventfd as wait fd,
 * and stubs for the core functions evd.c / cno.c call in other files. */
#include <check.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "core.h"

#define ERR(t, s) DAT_ERROR(t, s)
#define E_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)
#define E_H1 DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1)
#define E_HCNO DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO)
#define E_HIA DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA)
#define E_EMPTY DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE)
/* dat_evd_dequeue's "empty" carries no class bit unless DAT_STRICT is set
 * (libdat(7)) */
#define E_DQ_EMPTY ((DAT_RETURN)DAT_QUEUE_EMPTY)
#define E_FULL DAT_ERROR(DAT_QUEUE_FULL, DAT_NO_SUBTYPE)
#define E_TIMEOUT DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE)
#define E_WAITER DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_WAITER)
#define E_UNWAITABLE \
	DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_UNWAITABLE)

/* ---- the fake transport -------------------------------------------------- */

#define FAKE_CQ_DEPTH 64

struct dapl_tcq {
	struct dapl_tdev *dev;       /* the device it was made on */
	pthread_mutex_t lock;
	int fd;                      /* readable once armed and fed */
	bool armed;
	struct dapl_twc q[FAKE_CQ_DEPTH];
	int head, count;
};

static int cq_created, cq_destroyed, cq_create_error;
static struct dapl_tcq *last_cq;
static uint64_t push_on_arm;   /* a completion that lands just before arming */
static int cq_disarms;         /* cq_disarm calls */

static int fake_cq_create(struct dapl_tdev *dev, uint32_t depth,
			  struct dapl_tcq **out)
{
	struct dapl_tcq *cq;

	(void)depth;
	if (cq_create_error)
		return cq_create_error;
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return -ENOMEM;
	cq->dev = dev;
	pthread_mutex_init(&cq->lock, NULL);
	cq->fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	cq_created++;
	last_cq = cq;
	*out = cq;
	return 0;
}

static int fake_cq_destroy(struct dapl_tcq *cq)
{
	close(cq->fd);
	pthread_mutex_destroy(&cq->lock);
	free(cq);
	cq_destroyed++;
	return 0;
}

static int fake_cq_wait_fd(struct dapl_tcq *cq)
{
	return cq->fd;
}

static int fake_cq_arm(struct dapl_tcq *cq, int solicited_only)
{
	(void)solicited_only;
	pthread_mutex_lock(&cq->lock);
	if (push_on_arm) {
		/* it never makes the fd readable: only the poll after
		 * arming can find it */
		cq->q[(cq->head + cq->count) % FAKE_CQ_DEPTH] =
			(struct dapl_twc){ .context = push_on_arm };
		cq->count++;
		push_on_arm = 0;
	}
	cq->armed = true;
	pthread_mutex_unlock(&cq->lock);
	return 0;
}

static void fake_cq_disarm(struct dapl_tcq *cq)
{
	pthread_mutex_lock(&cq->lock);
	cq->armed = false;
	cq_disarms++;
	pthread_mutex_unlock(&cq->lock);
}

static void fake_cq_ack(struct dapl_tcq *cq)
{
	uint64_t v;

	ck_assert_int_eq(read(cq->fd, &v, sizeof(v)), (int)sizeof(v));
}

static int fake_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max)
{
	int n = 0;

	pthread_mutex_lock(&cq->lock);
	while (n < max && cq->count > 0) {
		wc[n++] = cq->q[cq->head];
		cq->head = (cq->head + 1) % FAKE_CQ_DEPTH;
		cq->count--;
	}
	pthread_mutex_unlock(&cq->lock);
	return n;
}

/* A completion arrives; context 0 is an internal one (no event). */
static void cq_push(struct dapl_tcq *cq, uint64_t context, uint32_t len)
{
	uint64_t one = 1;

	pthread_mutex_lock(&cq->lock);
	ck_assert_int_lt(cq->count, FAKE_CQ_DEPTH);
	cq->q[(cq->head + cq->count) % FAKE_CQ_DEPTH] = (struct dapl_twc){
		.context = context, .status = DAPL_TWC_SUCCESS,
		.opcode = DAPL_TWC_RECV, .byte_len = len };
	cq->count++;
	if (cq->armed) {
		cq->armed = false;
		ck_assert_int_eq(write(cq->fd, &one, sizeof(one)),
				 (int)sizeof(one));
	}
	pthread_mutex_unlock(&cq->lock);
}

static bool cq_armed(struct dapl_tcq *cq)
{
	bool armed;

	pthread_mutex_lock(&cq->lock);
	armed = cq->armed;
	pthread_mutex_unlock(&cq->lock);
	return armed;
}

static const struct udapl_transport_ops fake_ops = {
	.size = sizeof(struct udapl_transport_ops),
	.name = "fake",
	.cq_create = fake_cq_create,
	.cq_destroy = fake_cq_destroy,
	.cq_wait_fd = fake_cq_wait_fd,
	.cq_arm = fake_cq_arm,
	.cq_ack = fake_cq_ack,
	.cq_poll = fake_cq_poll,
	.cq_disarm = fake_cq_disarm,
};

/* ---- the fake IA and the stubs of other core files ----------------------- */

static struct dapl_provider fake_prov;
/* In the arena like a real one: the core refuses, unread, any handle that
 * lies outside its arenas (issue 24). */
static struct dapl_ia *fake_ia_obj;
#define fake_ia (*fake_ia_obj)
static char fake_dev;
static int log_count;

struct dapl_ia *dapl_ia_get(DAT_IA_HANDLE h)
{
	if (h == (DAT_IA_HANDLE)&fake_ia &&
	    dapl_handle_get(h, DAT_HANDLE_TYPE_IA))
		return &fake_ia;
	return NULL;
}

/* Contexts with HELD_BIT stand for SRQ receives: their event holds the
 * context until it is dequeued (or the EVD goes); the stub counts what is
 * given back. */
#define HELD_BIT 0x10000u
static uint64_t released_sum;
static int released_n;

void dapl_dto_hold_release(struct dapl_dto_slot *sl)
{
	released_sum += (uint64_t)(uintptr_t)sl;
	released_n++;
}

bool dapl_dto_wc_to_event(struct dapl_evd *evd, const struct dapl_twc *wc,
			  DAT_EVENT *ev, struct dapl_dto_slot **hold)
{
	(void)evd;
	if (hold)
		*hold = NULL;
	if (wc->context == 0)
		return false;
	if (wc->context & HELD_BIT) {
		if (!hold) {    /* dropped: given back at once */
			dapl_dto_hold_release((struct dapl_dto_slot *)
					      (uintptr_t)wc->context);
			return false;
		}
		*hold = (struct dapl_dto_slot *)(uintptr_t)wc->context;
	}
	ev->event_number = DAT_DTO_COMPLETION_EVENT;
	ev->event_data.dto_completion_event_data.user_cookie.as_64 =
		wc->context;
	ev->event_data.dto_completion_event_data.status = DAT_DTO_SUCCESS;
	ev->event_data.dto_completion_event_data.transfered_length =
		wc->byte_len;
	return true;
}

DAT_RETURN dapl_errno_to_dat(int err)
{
	if (err == -ENOMEM)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEVD);
	return DAT_ERROR(DAT_INTERNAL_ERROR, 0);
}

/* dat_cno_wait pins the IA across its sleeps; the fake IA never goes. */
void dapl_ia_pin(struct dapl_ia *ia)
{
	(void)ia;
}

void dapl_ia_unpin(struct dapl_ia *ia)
{
	(void)ia;
}

/* The IA's progress fds as a connection-EVD waiter sees them: cm_fd when
 * a test sets it (else none), and the pass such a waiter runs when it
 * fires: it reads cm_fd and posts ESTABLISHED for cm_ep on cm_evd, as
 * the progress thread would. */
static int cm_fd = -1;
static DAT_EVD_HANDLE cm_evd;
static struct dapl_ep cm_ep;
static int cm_pumps;
static bool cm_noisy;    /* the pass finds no connection event, fd left readable */
static int cm_dones;     /* waiter_done calls: one per waiter_fds that gave fds */

int dapl_cm_waiter_fds(struct dapl_ia *ia, int *fds, int max)
{
	(void)ia;
	if (cm_fd < 0 || max < 1)
		return 0;
	fds[0] = cm_fd;
	return 1;
}

int dapl_cm_waiter_pump(struct dapl_ia *ia)
{
	uint64_t v;

	(void)ia;
	cm_pumps++;
	if (cm_noisy)
		return 0;       /* the fd stays readable: data for others */
	if (cm_fd >= 0 && read(cm_fd, &v, sizeof(v)) == sizeof(v) && cm_evd) {
		dapl_evd_post_connection(cm_evd, DAT_CONNECTION_EVENT_ESTABLISHED,
					 &cm_ep, 0, NULL);
		return 1;
	}
	return 0;
}

void dapl_cm_waiter_done(struct dapl_ia *ia)
{
	(void)ia;
	cm_dones++;
}

/* A fake progress fd for evd, readable (one write); cm_close undoes it. */
static void cm_open(DAT_EVD_HANDLE evd)
{
	uint64_t one = 1;

	cm_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(cm_fd, 0);
	cm_evd = evd;
	cm_pumps = cm_dones = 0;
	ck_assert_int_eq((int)write(cm_fd, &one, sizeof(one)), (int)sizeof(one));
}

static void cm_close(void)
{
	close(cm_fd);
	cm_fd = -1;
	cm_evd = NULL;
	cm_noisy = false;
}

static bool fd_readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 0) == 1;
}

void dapl_log(const char *fmt, ...)
{
	(void)fmt;
	log_count++;
}

static void setup(void)
{
	DAT_EVD_HANDLE async;

	memset(&fake_prov, 0, sizeof(fake_prov));
	if (!fake_ia_obj)
		fake_ia_obj = dapl_handle_alloc(&fake_prov.table, DAT_HANDLE_TYPE_IA,
						sizeof(struct dapl_ia), NULL);
	ck_assert_ptr_nonnull(fake_ia_obj);
	memset(&fake_ia, 0, sizeof(fake_ia));
	fake_ia.h.provider = &fake_prov.table;
	fake_ia.h.magic = dapl_magic(DAT_HANDLE_TYPE_IA);
	fake_ia.h.type = DAT_HANDLE_TYPE_IA;
	fake_ia.h.ia = &fake_ia;
	fake_ia.prov = &fake_prov;
	fake_ia.ops = &fake_ops;
	fake_ia.dev = (struct dapl_tdev *)&fake_dev;
	pthread_mutex_init(&fake_ia.lock, NULL);
	cq_created = cq_destroyed = cq_create_error = 0;
	push_on_arm = 0;
	cq_disarms = 0;
	log_count = 0;
	last_cq = NULL;
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, DAT_HANDLE_NULL,
					  DAT_EVD_ASYNC_FLAG, &async),
			  DAT_SUCCESS);
	fake_ia.async_evd = async;
	fake_ia.async_evd_ours = true;
}

static void teardown(void)
{
	pthread_mutex_lock(&fake_ia.lock);
	while (fake_ia.evds)
		dapl_evd_destroy(fake_ia.evds);
	while (fake_ia.cnos)
		dapl_cno_destroy(fake_ia.cnos);
	pthread_mutex_unlock(&fake_ia.lock);
	pthread_mutex_destroy(&fake_ia.lock);
	ck_assert_int_eq(cq_created, cq_destroyed);
	dapl_handle_release_all();
}

/* ---- helpers ------------------------------------------------------------- */

static DAT_EVD_HANDLE make_evd(DAT_COUNT qlen, DAT_CNO_HANDLE cno,
			       DAT_EVD_FLAGS flags)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL;

	ck_assert_uint_eq(dapl_evd_create(&fake_ia, qlen, cno, flags, &evd),
			  DAT_SUCCESS);
	ck_assert_ptr_nonnull(evd);
	return evd;
}

static DAT_CNO_HANDLE make_cno(DAT_OS_WAIT_PROXY_AGENT agent)
{
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;

	ck_assert_uint_eq(dapl_cno_create(&fake_ia, agent, &cno), DAT_SUCCESS);
	return cno;
}

static DAT_RETURN post_sw(DAT_EVD_HANDLE evd, uintptr_t tag)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.event_data.software_event_data.pointer = (DAT_PVOID)tag;
	return dapl_evd_post_se(evd, &ev);
}

static uintptr_t tag_of(const DAT_EVENT *ev)
{
	ck_assert_int_eq(ev->event_number, DAT_SOFTWARE_EVENT);
	return (uintptr_t)ev->event_data.software_event_data.pointer;
}

static int count_evds(void)
{
	struct dapl_evd *e;
	int n = 0;

	for (e = fake_ia.evds; e; e = e->next)
		n++;
	return n;
}

/* A thread in dat_evd_wait or dat_cno_wait. */
struct waiter {
	pthread_t thread;
	DAT_HANDLE h;
	DAT_TIMEOUT timeout;
	DAT_COUNT threshold;
	DAT_RETURN ret;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_EVD_HANDLE hint;
};

static void *evd_waiter(void *arg)
{
	struct waiter *w = arg;

	w->ret = dapl_evd_wait(w->h, w->timeout, w->threshold, &w->ev,
			       &w->nmore);
	return NULL;
}

static void *cno_waiter(void *arg)
{
	struct waiter *w = arg;

	w->hint = (DAT_EVD_HANDLE)0x1;
	w->ret = dapl_cno_wait(w->h, w->timeout, &w->hint);
	return NULL;
}

static void start(struct waiter *w, void *(*fn)(void *), DAT_HANDLE h,
		  DAT_COUNT threshold)
{
	memset(w, 0, sizeof(*w));
	w->h = h;
	w->timeout = DAT_TIMEOUT_INFINITE;
	w->threshold = threshold;
	ck_assert_int_eq(pthread_create(&w->thread, NULL, fn, w), 0);
}

static void finish(struct waiter *w)
{
	ck_assert_int_eq(pthread_join(w->thread, NULL), 0);
}

/* Until the thread has registered as the waiter (it may not sleep yet:
 * whatever happens from here on must wake it). */
static void until_evd_waiting(DAT_EVD_HANDLE h)
{
	struct dapl_evd *evd = h;
	bool w;

	for (;;) {
		pthread_mutex_lock(&evd->lock);
		w = evd->waiting;
		pthread_mutex_unlock(&evd->lock);
		if (w)
			return;
		sched_yield();
	}
}

static void until_cno_waiting(DAT_CNO_HANDLE h)
{
	struct dapl_cno *cno = h;
	bool w;

	for (;;) {
		pthread_mutex_lock(&cno->lock);
		w = cno->waiting;
		pthread_mutex_unlock(&cno->lock);
		if (w)
			return;
		sched_yield();
	}
}

/* ---- create / query / free ----------------------------------------------- */

START_TEST(create_query_free)
{
	DAT_EVD_HANDLE evd;
	DAT_EVD_PARAM p;

	evd = make_evd(8, DAT_HANDLE_NULL,
		       DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);
	ck_assert_int_eq(cq_created, 1);
	ck_assert_ptr_eq(fake_ia.evds, evd);
	memset(&p, 0xa5, sizeof(p));
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_ALL, &p),
			  DAT_SUCCESS);
	ck_assert_ptr_eq(p.ia_handle, &fake_ia);
	ck_assert_int_eq(p.evd_qlen, 8);
	ck_assert_int_eq(p.evd_state,
			 DAT_EVD_STATE_ENABLED | DAT_EVD_STATE_WAITABLE);
	ck_assert_ptr_null(p.cno_handle);
	ck_assert_int_eq(p.evd_flags,
			 DAT_EVD_DTO_FLAG | DAT_EVD_CONNECTION_FLAG);

	/* only what the mask asks for */
	memset(&p, 0, sizeof(p));
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p),
			  DAT_SUCCESS);
	ck_assert_int_eq(p.evd_qlen, 8);
	ck_assert_ptr_null(p.ia_handle);
	ck_assert_uint_eq(dapl_evd_query(evd, 0x20, &p), E_ARG(2));
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_ALL, NULL),
			  E_ARG(3));

	ck_assert_uint_eq(dapl_evd_disable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_set_unwaitable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p),
			  DAT_SUCCESS);
	ck_assert_int_eq(p.evd_state,
			 DAT_EVD_STATE_DISABLED | DAT_EVD_STATE_UNWAITABLE);
	ck_assert_uint_eq(dapl_evd_enable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_clear_unwaitable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_EVD_STATE, &p),
			  DAT_SUCCESS);
	ck_assert_int_eq(p.evd_state,
			 DAT_EVD_STATE_ENABLED | DAT_EVD_STATE_WAITABLE);

	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
	ck_assert_int_eq(cq_destroyed, 1);
	ck_assert_int_eq(count_evds(), 1);   /* the async EVD */
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_ALL, &p), E_H1);
}
END_TEST

START_TEST(create_bad_arguments)
{
	DAT_EVD_HANDLE evd = DAT_HANDLE_NULL, other;
	DAT_CNO_HANDLE cno;
	struct dapl_ia not_open;

	memset(&not_open, 0, sizeof(not_open));
	other = make_evd(2, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG);
	ck_assert_uint_eq(dapl_evd_create(NULL, 4, NULL, DAT_EVD_DTO_FLAG,
					  &evd), E_HIA);
	ck_assert_uint_eq(dapl_evd_create(&not_open, 4, NULL,
					  DAT_EVD_DTO_FLAG, &evd), E_HIA);
	ck_assert_uint_eq(dapl_evd_create(other, 4, NULL, DAT_EVD_DTO_FLAG,
					  &evd), E_HIA);
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 0, NULL, DAT_EVD_DTO_FLAG,
					  &evd), E_ARG(2));
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, -3, NULL,
					  DAT_EVD_DTO_FLAG, &evd), E_ARG(2));
	fake_ia.dev_attr.max_cqe = 16;
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 17, NULL,
					  DAT_EVD_DTO_FLAG, &evd), E_ARG(2));
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, other,
					  DAT_EVD_DTO_FLAG, &evd), E_HCNO);
	cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	ck_assert_uint_eq(dapl_cno_free(cno), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, cno,
					  DAT_EVD_DTO_FLAG, &evd), E_HCNO);
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, NULL, 0, &evd),
			  E_ARG(4));
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, NULL, 0x2, &evd),
			  E_ARG(4));
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, NULL,
					  DAT_EVD_DEFAULT_FLAG | 0x1000, &evd),
			  E_ARG(4));
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, NULL,
					  DAT_EVD_DTO_FLAG, NULL), E_ARG(5));
	ck_assert_ptr_null(evd);
	ck_assert_int_eq(count_evds(), 2);
	ck_assert_int_eq(cq_created, 0);

	/* the device cannot make the CQ */
	cq_create_error = -ENOMEM;
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, NULL,
					  DAT_EVD_DTO_FLAG, &evd),
			  DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				    DAT_RESOURCE_TEVD));
	ck_assert_ptr_null(evd);
	ck_assert_int_eq(count_evds(), 2);

	/* the longest queue the device allows is fine */
	cq_create_error = 0;
	evd = make_evd(16, DAT_HANDLE_NULL, DAT_EVD_DEFAULT_FLAG |
		       DAT_EVD_SOFTWARE_FLAG);
	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
}
END_TEST

/* ---- dequeue and software events ----------------------------------------- */

START_TEST(dequeue_empty)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;

	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_DQ_EMPTY);
	ck_assert_uint_eq(DAT_GET_TYPE(dapl_evd_dequeue(evd, &ev)),
			  DAT_QUEUE_EMPTY);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, NULL), E_ARG(2));
	ck_assert_uint_eq(dapl_evd_dequeue(NULL, &ev), E_H1);
	ck_assert_uint_eq(dapl_evd_dequeue(&fake_ia, &ev), E_H1);
}
END_TEST

START_TEST(post_se_then_dequeue)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE dto = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	DAT_EVENT in, out;
	int payload;

	memset(&in, 0, sizeof(in));
	in.event_number = DAT_SOFTWARE_EVENT;
	in.evd_handle = (DAT_EVD_HANDLE)0x1234;   /* the provider sets it */
	in.event_data.software_event_data.pointer = &payload;
	ck_assert_uint_eq(dapl_evd_post_se(evd, &in), DAT_SUCCESS);
	memset(&out, 0xee, sizeof(out));
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &out), DAT_SUCCESS);
	ck_assert_int_eq(out.event_number, DAT_SOFTWARE_EVENT);
	ck_assert_ptr_eq(out.evd_handle, evd);
	ck_assert_ptr_eq(out.event_data.software_event_data.pointer, &payload);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &out), E_DQ_EMPTY);

	ck_assert_uint_eq(dapl_evd_post_se(evd, NULL), E_ARG(2));
	in.event_number = DAT_CONNECTION_EVENT_ESTABLISHED;
	ck_assert_uint_eq(dapl_evd_post_se(evd, &in), E_ARG(2));
	ck_assert_uint_eq(post_sw(dto, 1), E_ARG(1));
	ck_assert_uint_eq(post_sw(NULL, 1), E_H1);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &out), E_DQ_EMPTY);
}
END_TEST

/* ---- waiting ------------------------------------------------------------- */

START_TEST(wait_threshold_and_nmore)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVENT ev;
	DAT_COUNT nmore = -1;

	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 2), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 3), DAT_SUCCESS);

	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, &ev, &nmore), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 1);
	ck_assert_int_eq(nmore, 2);

	/* two queued, three wanted: nothing taken, nmore says two */
	nmore = -1;
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 3, &ev, &nmore), E_TIMEOUT);
	ck_assert_int_eq(nmore, 2);
	ck_assert_uint_eq(post_sw(evd, 4), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 3, &ev, &nmore), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 2);
	ck_assert_int_eq(nmore, 2);
	ck_assert_uint_eq(dapl_evd_wait(evd, DAT_TIMEOUT_INFINITE, 2, &ev,
					&nmore), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 3);
	ck_assert_int_eq(nmore, 1);
	ck_assert_uint_eq(dapl_evd_wait(evd, 1000, 1, &ev, &nmore),
			  DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 4);
	ck_assert_int_eq(nmore, 0);

	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 0, &ev, &nmore), E_ARG(3));
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, -1, &ev, &nmore), E_ARG(3));
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 5, &ev, &nmore), E_ARG(3));
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, NULL, &nmore), E_ARG(4));
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, &ev, NULL), E_ARG(5));
	ck_assert_uint_eq(dapl_evd_wait(NULL, 0, 1, &ev, &nmore), E_H1);
}
END_TEST

START_TEST(wait_threshold_from_another_thread)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	struct waiter w;

	start(&w, evd_waiter, evd, 3);
	until_evd_waiting(evd);
	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 2), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 3), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&w.ev), 1);
	ck_assert_int_eq(w.nmore, 2);
}
END_TEST

START_TEST(wait_timeout_expires)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE dto = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	DAT_EVENT ev;
	DAT_COUNT nmore = -1;

	ck_assert_uint_eq(dapl_evd_wait(evd, 10000, 1, &ev, &nmore),
			  E_TIMEOUT);
	ck_assert_int_eq(nmore, 0);
	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_wait(evd, 10000, 2, &ev, &nmore),
			  E_TIMEOUT);
	ck_assert_int_eq(nmore, 1);
	/* a CQ-backed EVD too, and the EVD stays usable afterwards */
	ck_assert_uint_eq(dapl_evd_wait(dto, 10000, 1, &ev, &nmore),
			  E_TIMEOUT);
	ck_assert_int_eq(nmore, 0);
	ck_assert_uint_eq(dapl_evd_wait(dto, 0, 1, &ev, &nmore), E_TIMEOUT);
	cq_push(last_cq, 7, 70);
	ck_assert_uint_eq(dapl_evd_wait(dto, 10000, 1, &ev, &nmore),
			  DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 7);
}
END_TEST

/* A thread asleep on a connection EVD serves the IA's progress fds
 * itself: what arrives there reaches it without the progress thread (the
 * fake has none: only the waiter's own pass can post the event).  A DTO
 * EVD's waiter leaves them alone. */
START_TEST(connection_waiter_serves_progress_fds)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE conn = make_evd(4, cno, DAT_EVD_CONNECTION_FLAG);
	DAT_EVD_HANDLE dto = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	uint64_t one = 1;
	DAT_EVENT ev;
	DAT_COUNT nmore = -1;

	cm_open(conn);
	/* 20 s: far beyond any machine's delay, and the fail if unserved */
	ck_assert_uint_eq(dapl_evd_wait(conn, 20000000, 1, &ev, &nmore),
			  DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.ep_handle, &cm_ep);
	ck_assert_int_eq(cm_pumps, 1);
	/* and gave the fds back to the progress thread as it left */
	ck_assert_int_eq(cm_dones, 1);
	/* it posted to its own EVD while it waited there: the EVD's fd was
	 * not written, or the next wait would wake at once for nothing */
	ck_assert(!fd_readable(((struct dapl_evd *)conn)->event_fd));
	/* and the event was the waiter's, not its CNO's */
	ck_assert_ptr_null(((struct dapl_cno *)cno)->fired_head);
	/* the fd readable again: a DTO EVD's waiter does not run the pass */
	ck_assert_int_eq((int)write(cm_fd, &one, sizeof(one)), (int)sizeof(one));
	ck_assert_uint_eq(dapl_evd_wait(dto, 10000, 1, &ev, &nmore), E_TIMEOUT);
	ck_assert_int_eq(cm_pumps, 1);
	ck_assert_int_eq(cm_dones, 1);
	cm_close();
}
END_TEST

/* A connection EVD's waiter whose passes keep finding no connection event
 * (the fds fire for other endpoints' data) leaves them to the progress
 * thread after EVD_CM_IDLE_PUMPS (4) such passes, and sleeps on its EVD
 * alone: it does not serve them once more, nor give them back twice. */
START_TEST(connection_waiter_leaves_data_to_the_thread)
{
	DAT_EVD_HANDLE conn = make_evd(4, NULL, DAT_EVD_CONNECTION_FLAG);
	DAT_EVENT ev;
	DAT_COUNT nmore = -1;

	cm_open(conn);
	cm_noisy = true;
	ck_assert_uint_eq(dapl_evd_wait(conn, 20000, 1, &ev, &nmore), E_TIMEOUT);
	ck_assert_int_eq(cm_pumps, 4);
	ck_assert_int_eq(cm_dones, 1);
	cm_close();
}
END_TEST

START_TEST(unwaitable_wakes_waiter)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	struct waiter w;
	DAT_EVENT ev;
	DAT_COUNT nmore;

	start(&w, evd_waiter, evd, 1);
	until_evd_waiting(evd);
	ck_assert_uint_eq(dapl_evd_set_unwaitable(evd), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, E_UNWAITABLE);

	/* refused at once while unwaitable; events still go in and out */
	ck_assert_uint_eq(dapl_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev,
					&nmore), E_UNWAITABLE);
	ck_assert_uint_eq(post_sw(evd, 5), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 5);
	ck_assert_uint_eq(dapl_evd_clear_unwaitable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, &ev, &nmore), E_TIMEOUT);
}
END_TEST

START_TEST(one_waiter_at_a_time)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	struct waiter w;
	DAT_EVENT ev;
	DAT_COUNT nmore;

	start(&w, evd_waiter, evd, 1);
	until_evd_waiting(evd);
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, &ev, &nmore), E_WAITER);
	ck_assert_uint_eq(dapl_evd_wait(evd, 10000, 1, &ev, &nmore),
			  E_WAITER);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_WAITER);
	ck_assert_uint_eq(post_sw(evd, 9), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&w.ev), 9);
	ck_assert_int_eq(w.nmore, 0);
	/* the EVD is free again */
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_DQ_EMPTY);
}
END_TEST

/* ---- CQ-backed EVDs ------------------------------------------------------ */

START_TEST(cq_events_dequeue_after_software_events)
{
	DAT_EVD_HANDLE evd = make_evd(8, NULL, DAT_EVD_DTO_FLAG |
				      DAT_EVD_SOFTWARE_FLAG);
	struct dapl_tcq *cq = last_cq;
	DAT_EVENT ev;

	cq_push(cq, 11, 100);
	cq_push(cq, 0, 0);                 /* internal: no event */
	cq_push(cq, 12, 200);
	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 1);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT);
	ck_assert_ptr_eq(ev.evd_handle, evd);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 11);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .transfered_length, 100);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 12);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_DQ_EMPTY);
}
END_TEST

START_TEST(cq_completions_beyond_the_ring_wait_in_the_cq)
{
	DAT_EVD_HANDLE evd = make_evd(2, NULL, DAT_EVD_DTO_FLAG);
	struct dapl_tcq *cq = last_cq;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	uint64_t i;

	for (i = 1; i <= 5; i++)
		cq_push(cq, i, 0);
	for (i = 1; i <= 5; i++) {
		ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, &ev, &nmore),
				  DAT_SUCCESS);
		ck_assert_uint_eq(ev.event_data.dto_completion_event_data
				  .user_cookie.as_64, i);
	}
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_DQ_EMPTY);
	/* nothing overflowed */
	ck_assert_uint_eq(dapl_evd_dequeue(fake_ia.async_evd, &ev), E_DQ_EMPTY);
}
END_TEST

START_TEST(cq_wait_wakes_on_completion)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	struct dapl_tcq *cq = last_cq;
	struct waiter w;

	start(&w, evd_waiter, evd, 1);
	until_evd_waiting(evd);
	cq_push(cq, 0, 0);             /* internal completions do not count */
	cq_push(cq, 42, 4096);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_int_eq(w.ev.event_number, DAT_DTO_COMPLETION_EVENT);
	ck_assert_uint_eq(w.ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 42);
	ck_assert_int_eq(w.nmore, 0);

	/* threshold 2: wakes only with the second */
	start(&w, evd_waiter, evd, 2);
	until_evd_waiting(evd);
	cq_push(cq, 43, 0);
	while (!cq_armed(cq))          /* it sees the first and sleeps again */
		sched_yield();
	cq_push(cq, 44, 0);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_uint_eq(w.ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 43);
	ck_assert_int_eq(w.nmore, 1);
}
END_TEST

/* The transport's order: arm, poll once more, then sleep.  A completion
 * that lands between the last poll and the arm is found by the poll after
 * it.  (With the order broken the EVD wait hangs until Check's timeout;
 * a finite one would not tell, since the wait polls again on expiry.) */
START_TEST(completion_racing_the_arm_is_not_lost)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(4, cno, DAT_EVD_DTO_FLAG);
	DAT_EVD_HANDLE hint = DAT_HANDLE_NULL;
	DAT_EVENT ev;
	DAT_COUNT nmore;

	push_on_arm = 21;
	ck_assert_uint_eq(dapl_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev,
					&nmore),
			  DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 21);
	push_on_arm = 22;
	ck_assert_uint_eq(dapl_cno_wait(cno, 5000000, &hint), DAT_SUCCESS);
	ck_assert_ptr_eq(hint, evd);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 22);
}
END_TEST

/* A waiter that armed its CQ disarms it when it leaves, however it woke:
 * here the poll after arming finds the completion, so no wakeup cleared
 * the arm (ofi then kept the CQ in its progress set, and a consumer
 * polling it afterwards paid for a progress thread woken by every
 * completion).  A wait that never armed disarms nothing. */
START_TEST(waiter_disarms_its_cq_when_it_leaves)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	struct dapl_tcq *cq = last_cq;
	DAT_EVENT ev;
	DAT_COUNT nmore;

	push_on_arm = 31;
	ck_assert_uint_eq(dapl_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev,
					&nmore),
			  DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 31);
	ck_assert_msg(!cq_armed(cq), "the CQ is still armed after the wait");
	ck_assert_int_eq(cq_disarms, 1);

	/* timed out: armed, slept, left */
	ck_assert_uint_eq(DAT_GET_TYPE(dapl_evd_wait(evd, 1000, 1, &ev, &nmore)),
			  DAT_TIMEOUT_EXPIRED);
	ck_assert_msg(!cq_armed(cq), "the CQ is still armed after a timeout");
	ck_assert_int_eq(cq_disarms, 2);

	/* an event already there: no arm, no disarm */
	cq_push(cq, 32, 0);
	ck_assert_uint_eq(dapl_evd_wait(evd, DAT_TIMEOUT_INFINITE, 1, &ev,
					&nmore),
			  DAT_SUCCESS);
	ck_assert_int_eq(cq_disarms, 2);
}
END_TEST

/* ---- overflow ------------------------------------------------------------ */

START_TEST(overflow_reported_once_on_async_evd)
{
	DAT_EVD_HANDLE evd = make_evd(2, NULL, DAT_EVD_CONNECTION_FLAG);
	DAT_EVD_HANDLE async = fake_ia.async_evd;
	static struct dapl_ep ep;
	DAT_EVENT ev;

	ck_assert_uint_eq(dapl_evd_post_connection(evd,
			  DAT_CONNECTION_EVENT_ESTABLISHED, &ep, 0, NULL),
			  DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_post_connection(evd,
			  DAT_CONNECTION_EVENT_DISCONNECTED, &ep, 0, NULL),
			  DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_post_connection(evd,
			  DAT_CONNECTION_EVENT_BROKEN, &ep, 0, NULL), E_FULL);
	ck_assert_uint_eq(dapl_evd_post_connection(evd,
			  DAT_CONNECTION_EVENT_BROKEN, &ep, 0, NULL), E_FULL);
	ck_assert_int_eq(log_count, 1);

	ck_assert_uint_eq(dapl_evd_dequeue(async, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_ASYNC_ERROR_EVD_OVERFLOW);
	ck_assert_ptr_eq(ev.evd_handle, async);
	ck_assert_ptr_eq(ev.event_data.asynch_error_event_data.dat_handle, evd);
	ck_assert_int_eq(ev.event_data.asynch_error_event_data.reason,
			 DAT_EVD_OVERFLOW_ERROR);
	ck_assert_uint_eq(dapl_evd_dequeue(async, &ev), E_DQ_EMPTY);

	/* the queue kept the first two, in order */
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	/* after a dequeue, the next overflow is reported again */
	ck_assert_uint_eq(dapl_evd_post_connection(evd,
			  DAT_CONNECTION_EVENT_BROKEN, &ep, 0, NULL),
			  DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_post_connection(evd,
			  DAT_CONNECTION_EVENT_BROKEN, &ep, 0, NULL), E_FULL);
	ck_assert_uint_eq(dapl_evd_dequeue(async, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_ASYNC_ERROR_EVD_OVERFLOW);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_CONNECTION_EVENT_DISCONNECTED);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_CONNECTION_EVENT_BROKEN);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_DQ_EMPTY);
}
END_TEST

START_TEST(software_overflow_is_queue_full_only)
{
	DAT_EVD_HANDLE evd = make_evd(1, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE async = fake_ia.async_evd;
	DAT_EVENT ev;
	int i;

	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 2), E_FULL);
	ck_assert_uint_eq(dapl_evd_dequeue(async, &ev), E_DQ_EMPTY);
	ck_assert_int_eq(log_count, 0);
	/* the async EVD itself overflows quietly */
	for (i = 0; i < 4; i++)
		ck_assert_uint_eq(dapl_evd_post_async(&fake_ia,
				  DAT_ASYNC_ERROR_EP_BROKEN, evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_post_async(&fake_ia,
			  DAT_ASYNC_ERROR_EP_BROKEN, evd), E_FULL);
	ck_assert_uint_eq(dapl_evd_dequeue(async, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_ASYNC_ERROR_EP_BROKEN);
	ck_assert_ptr_eq(ev.event_data.asynch_error_event_data.dat_handle, evd);
}
END_TEST

/* ---- resize -------------------------------------------------------------- */

START_TEST(resize_keeps_order)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_PARAM p;
	DAT_EVENT ev;
	uintptr_t i;

	/* wrap the ring: 3, 4, 5 with the head in the middle */
	for (i = 1; i <= 4; i++)
		ck_assert_uint_eq(post_sw(evd, i), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 5), DAT_SUCCESS);

	ck_assert_uint_eq(dapl_evd_resize(evd, 2),
			  DAT_ERROR(DAT_INVALID_STATE, DAT_NO_SUBTYPE));
	ck_assert_uint_eq(dapl_evd_resize(evd, 0), E_ARG(2));
	ck_assert_uint_eq(dapl_evd_resize(NULL, 4), E_H1);
	ck_assert_uint_eq(dapl_evd_resize(evd, 8), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_EVD_QLEN, &p),
			  DAT_SUCCESS);
	ck_assert_int_eq(p.evd_qlen, 8);
	for (i = 6; i <= 10; i++)
		ck_assert_uint_eq(post_sw(evd, i), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 11), E_FULL);
	for (i = 3; i <= 10; i++) {
		ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
		ck_assert_uint_eq(tag_of(&ev), i);
	}
	/* shrink to exactly what is queued */
	ck_assert_uint_eq(post_sw(evd, 12), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 13), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_resize(evd, 2), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 14), E_FULL);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 12);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&ev), 13);
}
END_TEST

/* An SRQ receive's event holds its slot: given back when the event is
 * dequeued, carried along by a resize, given back when the EVD is freed
 * with the event still queued. */
START_TEST(held_completions_released_on_dequeue_and_free)
{
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	struct dapl_tcq *cq = last_cq;
	DAT_EVENT ev;

	released_sum = 0;
	released_n = 0;
	cq_push(cq, HELD_BIT | 1, 8);
	cq_push(cq, 7, 8);               /* an ordinary one in between */
	cq_push(cq, HELD_BIT | 2, 8);
	cq_push(cq, HELD_BIT | 3, 8);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64,
			  HELD_BIT | 1);
	/* the ring took all four; only the dequeued one is given back */
	ck_assert_int_eq(released_n, 1);
	ck_assert_uint_eq(released_sum, HELD_BIT | 1);
	ck_assert_uint_eq(dapl_evd_resize(evd, 8), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_int_eq(released_n, 1);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_int_eq(released_n, 2);
	ck_assert_uint_eq(released_sum, (HELD_BIT | 1) + (HELD_BIT | 2));
	/* one still queued, one more in the CQ: both given back at free */
	cq_push(cq, HELD_BIT | 4, 8);
	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
	ck_assert_int_eq(released_n, 4);
	ck_assert_uint_eq(released_sum, 4 * HELD_BIT + 1 + 2 + 3 + 4);
}
END_TEST

/* ---- CNOs ---------------------------------------------------------------- */

START_TEST(cno_create_query_free)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { (DAT_PVOID)0x77, NULL };
	DAT_CNO_HANDLE cno = DAT_HANDLE_NULL;
	DAT_CNO_PARAM p;

	ck_assert_uint_eq(dapl_cno_create(NULL, agent, &cno), E_HIA);
	ck_assert_uint_eq(dapl_cno_create(&fake_ia, agent, NULL), E_ARG(3));
	ck_assert_ptr_null(cno);
	cno = make_cno(agent);
	ck_assert_ptr_eq(fake_ia.cnos, cno);
	memset(&p, 0, sizeof(p));
	ck_assert_uint_eq(dapl_cno_query(cno, DAT_CNO_FIELD_ALL, &p),
			  DAT_SUCCESS);
	ck_assert_ptr_eq(p.ia_handle, &fake_ia);
	ck_assert_ptr_eq(p.agent.instance_data, (DAT_PVOID)0x77);
	ck_assert_uint_eq(dapl_cno_query(cno, 0x4, &p), E_ARG(2));
	ck_assert_uint_eq(dapl_cno_query(cno, DAT_CNO_FIELD_ALL, NULL),
			  E_ARG(3));
	ck_assert_uint_eq(dapl_cno_modify_agent(cno,
			  DAT_OS_WAIT_PROXY_AGENT_NULL), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_query(cno, DAT_CNO_FIELD_AGENT, &p),
			  DAT_SUCCESS);
	ck_assert_ptr_null(p.agent.instance_data);
	ck_assert_ptr_null(p.agent.proxy_agent_func);
	ck_assert_uint_eq(dapl_cno_free(cno), DAT_SUCCESS);
	ck_assert_ptr_null(fake_ia.cnos);
}
END_TEST

START_TEST(cno_wait_returns_triggering_evd)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE a = make_evd(4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE b = make_evd(4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE hint = (DAT_EVD_HANDLE)0x1;
	struct waiter w;
	DAT_EVD_PARAM p;

	ck_assert_uint_eq(dapl_evd_query(a, DAT_EVD_FIELD_CNO, &p),
			  DAT_SUCCESS);
	ck_assert_ptr_eq(p.cno_handle, cno);

	/* a trigger from before the wait is kept for it */
	ck_assert_uint_eq(post_sw(b, 1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), DAT_SUCCESS);
	ck_assert_ptr_eq(hint, b);
	/* taken: the next wait times out with a NULL EVD */
	hint = (DAT_EVD_HANDLE)0x1;
	ck_assert_uint_eq(dapl_cno_wait(cno, 10000, &hint), E_EMPTY);
	ck_assert_ptr_null(hint);

	start(&w, cno_waiter, cno, 0);
	until_cno_waiting(cno);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint),
			  DAT_ERROR(DAT_INVALID_STATE,
				    DAT_INVALID_STATE_CNO_IN_USE));
	ck_assert_uint_eq(dapl_cno_free(cno),
			  DAT_ERROR(DAT_INVALID_STATE,
				    DAT_INVALID_STATE_CNO_IN_USE));
	ck_assert_uint_eq(post_sw(a, 2), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_ptr_eq(w.hint, a);

	ck_assert_uint_eq(dapl_cno_wait(NULL, 0, &hint), E_HCNO);
	ck_assert_uint_eq(dapl_cno_wait(a, 0, &hint), E_HCNO);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, NULL), E_ARG(3));
}
END_TEST

START_TEST(cno_not_triggered_when_disabled_or_waited)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE hint;
	struct waiter w;
	DAT_EVENT ev;

	ck_assert_uint_eq(dapl_evd_disable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), E_EMPTY);
	ck_assert_uint_eq(dapl_evd_enable(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), E_EMPTY);

	/* a direct waiter preempts the CNO */
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	start(&w, evd_waiter, evd, 1);
	until_evd_waiting(evd);
	ck_assert_uint_eq(post_sw(evd, 2), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_uint_eq(tag_of(&w.ev), 2);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), E_EMPTY);

	/* detached: no trigger either */
	ck_assert_uint_eq(dapl_evd_modify_cno(evd, DAT_HANDLE_NULL),
			  DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 3), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), E_EMPTY);
	ck_assert_uint_eq(dapl_evd_modify_cno(evd, cno), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 4), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), DAT_SUCCESS);
	ck_assert_ptr_eq(hint, evd);
}
END_TEST

START_TEST(cno_wait_sees_cq_completions)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE sw = make_evd(4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE dto = make_evd(4, cno, DAT_EVD_DTO_FLAG);
	struct dapl_tcq *cq = last_cq;
	DAT_EVD_HANDLE hint;
	struct waiter w;
	DAT_EVENT ev;

	(void)sw;
	/* a completion already in the CQ */
	cq_push(cq, 5, 0);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &hint), DAT_SUCCESS);
	ck_assert_ptr_eq(hint, dto);
	ck_assert_uint_eq(dapl_evd_dequeue(dto, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 5);

	/* one that arrives during the wait */
	start(&w, cno_waiter, cno, 0);
	until_cno_waiting(cno);
	while (!cq_armed(cq))
		sched_yield();
	cq_push(cq, 6, 0);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_ptr_eq(w.hint, dto);
	ck_assert_uint_eq(dapl_evd_dequeue(dto, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 6);
	ck_assert_uint_eq(dapl_evd_dequeue(dto, &ev), E_DQ_EMPTY);
	/* its notification was left for the next arm: no stale wakeup */
	ck_assert_uint_eq(dapl_cno_wait(cno, 10000, &hint), E_EMPTY);
	ck_assert_ptr_null(hint);
}
END_TEST

static int agent_calls;
static DAT_EVD_HANDLE agent_evd;
static DAT_PVOID agent_data;

static void agent_fn(DAT_PVOID data, DAT_EVD_HANDLE evd)
{
	agent_calls++;
	agent_data = data;
	agent_evd = evd;
}

START_TEST(cno_agent_called)
{
	DAT_OS_WAIT_PROXY_AGENT agent = { (DAT_PVOID)0x55, agent_fn };
	DAT_CNO_HANDLE cno = make_cno(agent);
	DAT_EVD_HANDLE evd = make_evd(4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_CNO_PARAM p;

	agent_calls = 0;
	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_int_eq(agent_calls, 1);
	ck_assert_ptr_eq(agent_evd, evd);
	ck_assert_ptr_eq(agent_data, (DAT_PVOID)0x55);
	/* once invoked it is no longer associated (dat_cno_create(3)) */
	ck_assert_uint_eq(dapl_cno_query(cno, DAT_CNO_FIELD_AGENT, &p),
			  DAT_SUCCESS);
	ck_assert_ptr_null(p.agent.proxy_agent_func);
	ck_assert_uint_eq(post_sw(evd, 2), DAT_SUCCESS);
	ck_assert_int_eq(agent_calls, 1);
	ck_assert_uint_eq(dapl_cno_modify_agent(cno, agent), DAT_SUCCESS);
	ck_assert_uint_eq(post_sw(evd, 3), DAT_SUCCESS);
	ck_assert_int_eq(agent_calls, 2);
	/* freeing its last EVD unblocks the agent with a NULL EVD */
	ck_assert_uint_eq(dapl_cno_modify_agent(cno, agent), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
	ck_assert_int_eq(agent_calls, 3);
	ck_assert_ptr_null(agent_evd);
	ck_assert_uint_eq(dapl_cno_modify_agent(NULL, agent), E_HCNO);
}
END_TEST

START_TEST(cno_waiter_unblocked_when_its_evds_are_freed)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE a = make_evd(4, cno, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE b = make_evd(4, cno, DAT_EVD_DTO_FLAG);
	struct waiter w;

	start(&w, cno_waiter, cno, 0);
	until_cno_waiting(cno);
	ck_assert_uint_eq(dapl_evd_free(a), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_free(b), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_ptr_null(w.hint);
	ck_assert_uint_eq(dapl_cno_free(cno), DAT_SUCCESS);
}
END_TEST

/* ---- free and stale handles ---------------------------------------------- */

START_TEST(free_in_use)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(4, cno, DAT_EVD_CR_FLAG);
	struct dapl_evd *e = evd;

	e->users = 1;                          /* a PSP names it */
	ck_assert_uint_eq(dapl_evd_free(evd),
			  DAT_ERROR(DAT_INVALID_STATE,
				    DAT_INVALID_STATE_EVD_IN_USE));
	ck_assert_uint_eq(dapl_cno_free(cno),
			  DAT_ERROR(DAT_INVALID_STATE,
				    DAT_INVALID_STATE_CNO_IN_USE));
	ck_assert_uint_eq(dapl_evd_free(fake_ia.async_evd),
			  DAT_ERROR(DAT_INVALID_STATE,
				    DAT_INVALID_STATE_EVD_ASYNC));
	e->users = 0;
	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_free(cno), DAT_SUCCESS);
}
END_TEST

START_TEST(freed_handles_are_invalid)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG |
				      DAT_EVD_DTO_FLAG);
	DAT_EVD_HANDLE live = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE out;
	DAT_EVD_PARAM ep;
	DAT_CNO_PARAM cp;
	DAT_EVENT ev;
	DAT_COUNT n;

	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_free(cno), DAT_SUCCESS);

	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_ALL, &ep), E_H1);
	ck_assert_uint_eq(dapl_evd_modify_cno(evd, NULL), E_H1);
	ck_assert_uint_eq(dapl_evd_enable(evd), E_H1);
	ck_assert_uint_eq(dapl_evd_disable(evd), E_H1);
	ck_assert_uint_eq(dapl_evd_wait(evd, 0, 1, &ev, &n), E_H1);
	ck_assert_uint_eq(dapl_evd_resize(evd, 8), E_H1);
	ck_assert_uint_eq(post_sw(evd, 2), E_H1);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_H1);
	ck_assert_uint_eq(dapl_evd_set_unwaitable(evd), E_H1);
	ck_assert_uint_eq(dapl_evd_clear_unwaitable(evd), E_H1);
	ck_assert_uint_eq(dapl_evd_free(evd), E_H1);

	ck_assert_uint_eq(dapl_cno_query(cno, DAT_CNO_FIELD_ALL, &cp), E_HCNO);
	ck_assert_uint_eq(dapl_cno_modify_agent(cno,
			  DAT_OS_WAIT_PROXY_AGENT_NULL), E_HCNO);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &out), E_HCNO);
	ck_assert_uint_eq(dapl_cno_free(cno), E_HCNO);
	ck_assert_uint_eq(dapl_evd_modify_cno(live, cno), E_HCNO);
	ck_assert_uint_eq(dapl_evd_create(&fake_ia, 4, cno,
					  DAT_EVD_SOFTWARE_FLAG, &out), E_HCNO);
	/* a live EVD is not a CNO and a CNO is not an EVD */
	ck_assert_uint_eq(dapl_evd_modify_cno(live, live), E_HCNO);
	ck_assert_uint_eq(dapl_cno_free(live), E_HCNO);
}
END_TEST

START_TEST(modify_cno_moves_users)
{
	DAT_CNO_HANDLE c1 = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_CNO_HANDLE c2 = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(4, c1, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE hint;

	ck_assert_int_eq(((struct dapl_cno *)c1)->users, 1);
	ck_assert_uint_eq(dapl_evd_modify_cno(evd, c2), DAT_SUCCESS);
	ck_assert_int_eq(((struct dapl_cno *)c1)->users, 0);
	ck_assert_int_eq(((struct dapl_cno *)c2)->users, 1);
	ck_assert_uint_eq(post_sw(evd, 1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_wait(c1, 0, &hint), E_EMPTY);
	ck_assert_uint_eq(dapl_cno_wait(c2, 0, &hint), DAT_SUCCESS);
	ck_assert_ptr_eq(hint, evd);
	ck_assert_uint_eq(dapl_cno_free(c1), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_cno_free(c2),
			  DAT_ERROR(DAT_INVALID_STATE,
				    DAT_INVALID_STATE_CNO_IN_USE));
}
END_TEST

/* ---- an EVD shared with another IA of the provider ------------------------ */

/* An EP of another IA completes into a CQ the EVD has on that IA's device
 * (libdat(7)): made once, not the EVD's own; dequeue, a direct waiter and
 * the EVD's CNO all see its completions; when that IA goes, the CQ goes
 * and the EVD keeps its own. */
START_TEST(evd_polls_its_cq_on_another_ia)
{
	static struct dapl_ia ia2;
	static char dev2;
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(8, cno, DAT_EVD_DTO_FLAG);
	struct dapl_tcq *own = last_cq, *x;
	struct waiter w;
	DAT_EVENT ev;

	memset(&ia2, 0, sizeof(ia2));
	ia2.prov = &fake_prov;
	ia2.ops = &fake_ops;
	ia2.dev = (struct dapl_tdev *)&dev2;
	pthread_mutex_init(&ia2.lock, NULL);

	pthread_mutex_lock(&ia2.lock);
	x = dapl_evd_cq_for(evd, &ia2);
	ck_assert_ptr_eq(dapl_evd_cq_for(evd, &ia2), x);
	pthread_mutex_unlock(&ia2.lock);
	ck_assert_ptr_nonnull(x);
	ck_assert_ptr_ne(x, own);
	ck_assert_ptr_eq(x->dev, (struct dapl_tdev *)&dev2);
	ck_assert_ptr_eq(own->dev, fake_ia.dev);
	ck_assert_ptr_eq(dapl_evd_cq_for(evd, &fake_ia), own);

	/* dequeue polls it */
	cq_push(x, 7, 10);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 7);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), E_DQ_EMPTY);

	/* a waiter sleeps on it too */
	start(&w, evd_waiter, evd, 1);
	until_evd_waiting(evd);
	while (!cq_armed(x))
		sched_yield();
	cq_push(x, 8, 0);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_uint_eq(w.ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 8);

	/* and so does the EVD's CNO */
	start(&w, cno_waiter, cno, 0);
	until_cno_waiting(cno);
	while (!cq_armed(x))
		sched_yield();
	cq_push(x, 9, 0);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_ptr_eq(w.hint, evd);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 9);

	/* ia2 goes: the CQ on its device goes, the EVD's own stays */
	dapl_share_lock();
	dapl_share_add(&fake_ia);
	dapl_share_add(&ia2);
	dapl_share_remove(&ia2);
	ck_assert_int_eq(cq_destroyed, 0);
	dapl_evd_drop_xcqs_of(&ia2);
	ck_assert_int_eq(cq_destroyed, 1);
	dapl_share_remove(&fake_ia);
	dapl_share_unlock();
	ck_assert_ptr_null(((struct dapl_evd *)evd)->xcqs);
	cq_push(own, 10, 0);
	ck_assert_uint_eq(dapl_evd_dequeue(evd, &ev), DAT_SUCCESS);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data
			  .user_cookie.as_64, 10);
	pthread_mutex_destroy(&ia2.lock);
}
END_TEST

/* ---- teardown with sleepers ---------------------------------------------- */

START_TEST(free_or_close_wakes_evd_waiter_with_abort)
{
	DAT_EVD_HANDLE a = make_evd(4, NULL, DAT_EVD_SOFTWARE_FLAG);
	DAT_EVD_HANDLE b = make_evd(4, NULL, DAT_EVD_DTO_FLAG);
	struct waiter w;
	DAT_EVENT ev;

	start(&w, evd_waiter, a, 1);
	until_evd_waiting(a);
	ck_assert_uint_eq(dapl_evd_free(a), DAT_SUCCESS);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_ERROR(DAT_ABORT, DAT_NO_SUBTYPE));
	ck_assert_uint_eq(dapl_evd_dequeue(a, &ev), E_H1);

	/* abrupt IA close: teardown under ia->lock */
	start(&w, evd_waiter, b, 1);
	until_evd_waiting(b);
	pthread_mutex_lock(&fake_ia.lock);
	dapl_evd_destroy(b);
	pthread_mutex_unlock(&fake_ia.lock);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_ERROR(DAT_ABORT, DAT_NO_SUBTYPE));
	ck_assert_uint_eq(dapl_evd_dequeue(b, &ev), E_H1);
}
END_TEST

START_TEST(close_wakes_cno_waiter_with_null)
{
	DAT_CNO_HANDLE cno = make_cno(DAT_OS_WAIT_PROXY_AGENT_NULL);
	DAT_EVD_HANDLE evd = make_evd(4, cno, DAT_EVD_DTO_FLAG);
	struct waiter w;
	DAT_EVD_PARAM p;

	start(&w, cno_waiter, cno, 0);
	until_cno_waiting(cno);
	pthread_mutex_lock(&fake_ia.lock);
	dapl_cno_destroy(cno);           /* before its EVD: it forgets it */
	pthread_mutex_unlock(&fake_ia.lock);
	finish(&w);
	ck_assert_uint_eq(w.ret, DAT_SUCCESS);
	ck_assert_ptr_null(w.hint);
	ck_assert_uint_eq(dapl_evd_query(evd, DAT_EVD_FIELD_CNO, &p),
			  DAT_SUCCESS);
	ck_assert_ptr_null(p.cno_handle);
	ck_assert_uint_eq(dapl_cno_wait(cno, 0, &w.hint), E_HCNO);
	ck_assert_uint_eq(dapl_evd_free(evd), DAT_SUCCESS);
}
END_TEST

/* ---- event builders ------------------------------------------------------ */

START_TEST(connection_cr_and_async_events)
{
	DAT_EVD_HANDLE conn = make_evd(4, NULL, DAT_EVD_CONNECTION_FLAG |
				       DAT_EVD_CR_FLAG);
	static struct dapl_ep ep;
	static struct dapl_cr cr;
	static struct dapl_sp sp;
	char pdata[8] = "hello";
	DAT_EVENT ev;

	ck_assert_uint_eq(dapl_evd_post_connection(conn,
			  DAT_CONNECTION_EVENT_ESTABLISHED, &ep, 5, pdata),
			  DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(conn, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_CONNECTION_EVENT_ESTABLISHED);
	ck_assert_ptr_eq(ev.evd_handle, conn);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.ep_handle, &ep);
	ck_assert_int_eq(ev.event_data.connect_event_data.private_data_size, 5);
	ck_assert_ptr_eq(ev.event_data.connect_event_data.private_data, pdata);

	sp.ia = &fake_ia;
	sp.conn_qual = 4791;
	ck_assert_uint_eq(dapl_evd_post_cr(conn, &sp, &cr), DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(conn, &ev), DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_CONNECTION_REQUEST_EVENT);
	ck_assert_ptr_eq(ev.evd_handle, conn);
	ck_assert_ptr_eq(ev.event_data.cr_arrival_event_data.sp_handle
			 .psp_handle, &sp);
	ck_assert_ptr_eq(ev.event_data.cr_arrival_event_data
			 .local_ia_address_ptr, &fake_ia.local_addr);
	ck_assert_uint_eq(ev.event_data.cr_arrival_event_data.conn_qual, 4791);
	ck_assert_ptr_eq(ev.event_data.cr_arrival_event_data.cr_handle, &cr);

	ck_assert_uint_eq(dapl_evd_post_async(&fake_ia,
			  DAT_ASYNC_ERROR_IA_CATASTROPHIC, &fake_ia),
			  DAT_SUCCESS);
	ck_assert_uint_eq(dapl_evd_dequeue(fake_ia.async_evd, &ev),
			  DAT_SUCCESS);
	ck_assert_int_eq(ev.event_number, DAT_ASYNC_ERROR_IA_CATASTROPHIC);
	ck_assert_ptr_eq(ev.evd_handle, fake_ia.async_evd);
	ck_assert_ptr_eq(ev.event_data.asynch_error_event_data.dat_handle,
			 &fake_ia);
	ck_assert_int_eq(ev.event_data.asynch_error_event_data.reason,
			 DAT_IA_CATASTROPHIC_ERROR);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("evd");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, create_query_free);
	tcase_add_test(tc, create_bad_arguments);
	tcase_add_test(tc, dequeue_empty);
	tcase_add_test(tc, post_se_then_dequeue);
	tcase_add_test(tc, wait_threshold_and_nmore);
	tcase_add_test(tc, wait_threshold_from_another_thread);
	tcase_add_test(tc, wait_timeout_expires);
	tcase_add_test(tc, connection_waiter_serves_progress_fds);
	tcase_add_test(tc, connection_waiter_leaves_data_to_the_thread);
	tcase_add_test(tc, unwaitable_wakes_waiter);
	tcase_add_test(tc, one_waiter_at_a_time);
	tcase_add_test(tc, cq_events_dequeue_after_software_events);
	tcase_add_test(tc, cq_completions_beyond_the_ring_wait_in_the_cq);
	tcase_add_test(tc, cq_wait_wakes_on_completion);
	tcase_add_test(tc, completion_racing_the_arm_is_not_lost);
	tcase_add_test(tc, waiter_disarms_its_cq_when_it_leaves);
	tcase_add_test(tc, overflow_reported_once_on_async_evd);
	tcase_add_test(tc, software_overflow_is_queue_full_only);
	tcase_add_test(tc, resize_keeps_order);
	tcase_add_test(tc, held_completions_released_on_dequeue_and_free);
	tcase_add_test(tc, cno_create_query_free);
	tcase_add_test(tc, cno_wait_returns_triggering_evd);
	tcase_add_test(tc, cno_not_triggered_when_disabled_or_waited);
	tcase_add_test(tc, cno_wait_sees_cq_completions);
	tcase_add_test(tc, cno_agent_called);
	tcase_add_test(tc, cno_waiter_unblocked_when_its_evds_are_freed);
	tcase_add_test(tc, free_in_use);
	tcase_add_test(tc, freed_handles_are_invalid);
	tcase_add_test(tc, modify_cno_moves_users);
	tcase_add_test(tc, evd_polls_its_cq_on_another_ia);
	tcase_add_test(tc, free_or_close_wakes_evd_waiter_with_abort);
	tcase_add_test(tc, close_wakes_cno_waiter_with_null);
	tcase_add_test(tc, connection_cr_and_async_events);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
