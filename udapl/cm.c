/* The connection state machine and the progress thread.
 *
 * One progress thread per IA sleeps in an epoll set of its own on the
 * transport's progress fds (unless a connection-EVD waiter serves them
 * meanwhile), its wake eventfd and its timerfd, reads connection events with
 * ia->lock held, moves EPs through their states, and queues the DAT
 * events.  It also owns connect timeouts: transports have none we can
 * trust (libfabric tcp waits forever), so each connecting EP carries a
 * deadline, and the timerfd is set for the earliest (a connect sets it
 * without waking the thread).
 *
 * Every connect and accept carries the wire header (wire.h) that lets the
 * two sides negotiate RDMA Read limits and report exact private-data
 * sizes; every reject carries one too, so "the peer refused" can be told
 * from "nobody listens". */
#define _GNU_SOURCE     /* pthread_setname_np */
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stddef.h>
#include <sys/epoll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "core.h"
#include "env.h"

#define CM_MAX_FDS DAPL_CM_MAX_FDS
#define CM_BUF_LEN 512

static uint16_t sockaddr_port(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ntohs(((const struct sockaddr_in *)ss)->sin_port);
	if (ss->ss_family == AF_INET6)
		return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
	return 0;
}

static void copy_sockaddr(struct sockaddr_storage *dst,
			  const struct sockaddr *src)
{
	size_t len = src->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
						: sizeof(struct sockaddr_in);

	memset(dst, 0, sizeof(*dst));
	memcpy(dst, src, len);
}

static struct dapl_ep *ep_of_tep(struct dapl_ia *ia, struct dapl_tep *tep)
{
	struct dapl_ep *ep;

	for (ep = ia->eps; ep; ep = ep->next)
		if (ep->tep == tep)
			return ep;
	return NULL;
}

static struct dapl_sp *sp_of_listener(struct dapl_ia *ia,
				      struct dapl_tlisten *l)
{
	struct dapl_sp *sp;

	for (sp = ia->sps; sp; sp = sp->next)
		if (sp->listener == l)
			return sp;
	return NULL;
}

static void ep_own_limits(const struct dapl_ep *ep, struct dapl_read_limits *l)
{
	l->ird = (uint16_t)ep->param.ep_attr.max_rdma_read_in;
	l->ord = (uint16_t)ep->param.ep_attr.max_rdma_read_out;
}

static void dev_limits(const struct dapl_ia *ia, struct dapl_read_limits *l)
{
	l->ird = ia->dev_attr.max_ird;
	l->ord = ia->dev_attr.max_ord;
}

/* Ends an EP's connection attempt or connection with event num on its
 * connect EVD.  ia->lock held. */
static void ep_fail_pdata(struct dapl_ep *ep, DAT_EVENT_NUMBER num, bool drop,
			  DAT_COUNT pdata_size, DAT_PVOID pdata)
{
#if DAT_GEN == 2
	bool was_connected = ep->param.ep_state == DAT_EP_STATE_CONNECTED ||
		ep->param.ep_state == DAT_EP_STATE_DISCONNECT_PENDING;
#endif

	if (drop)
		dapl_ep_drop_tep(ep);
	ep->deadline_ns = 0;
	ep->param.ep_state = DAT_EP_STATE_DISCONNECTED;
	if (ep->connect_evd)
		dapl_evd_post_connection(ep->connect_evd, num, ep, pdata_size,
					 pdata);
#if DAT_GEN == 2
	/* An SRQ's EP whose connection ended also reports
	 * DAT_ASYNC_ERROR_EP_BROKEN on the IA's async EVD, as dapl 2.x does
	 * (IB's "last WQE reached" of a QP on an SRQ): DAT 2.0 programs
	 * (dtestsrq) wait for it before they free the EP. */
	if (was_connected && ep->srq)
		dapl_evd_post_async(ep->ia, DAT_ASYNC_ERROR_EP_BROKEN,
				    (DAT_HANDLE)ep);
#endif
}

static void ep_fail(struct dapl_ep *ep, DAT_EVENT_NUMBER num, bool drop)
{
	ep_fail_pdata(ep, num, drop, 0, NULL);
}

/* Fills in the addresses and ports the transport knows once connected. */
static void ep_learn_addrs(struct dapl_ep *ep)
{
	struct sockaddr_storage local, peer;

	if (ep->ia->ops->ep_addrs(ep->tep, &local, &peer) == 0) {
		ep->local_addr = local;
		ep->param.local_port_qual = sockaddr_port(&local);
		if (!ep->connected_actively) {
			ep->remote_addr = peer;
			ep->param.remote_port_qual = sockaddr_port(&peer);
		}
	}
}

/* A provider reject carrying reason; conn is consumed. */
static void provider_reject(struct dapl_ia *ia, struct dapl_tconn *conn,
			    unsigned reason)
{
	uint8_t buf[DAPL_WIRE_HDR_LEN + 1];
	size_t len = dapl_wire_encode_reject(buf, sizeof(buf), reason);

	ia->ops->reject(conn, buf, len);
}

static void on_connect_request(struct dapl_ia *ia,
			       const struct dapl_tcm_event *ev)
{
	struct dapl_sp *sp = sp_of_listener(ia, ev->listener);
	struct dapl_wire_hdr hdr;
	const void *consumer;
	size_t consumer_len;
	enum dapl_wire_status st;
	struct dapl_cr *cr;
	struct dapl_ep *ep = NULL;

	if (!sp) {
		provider_reject(ia, ev->conn, DAPL_WIRE_REJECT_NO_LISTENER);
		return;
	}
	st = dapl_wire_decode(ev->pdata, ev->pdata_len, &hdr, &consumer,
			      &consumer_len);
	if (st != DAPL_WIRE_OK && st != DAPL_WIRE_LEGACY) {
		/* Anyone can send these: the first few are told in full,
		 * then one line at each power of two, so a stranger cannot
		 * flood the consumer's log. */
		unsigned long n = ++ia->refused_requests;

		if (n <= 8 || (n & (n - 1)) == 0)
			dapl_log("%s: refused a connection request on %llu: %s"
				 " (%lu refused so far%s)",
				 ia->prov->info.ia_name,
				 (unsigned long long)sp->conn_qual,
				 dapl_wire_status_str(st), n,
				 n >= 8 ? "; from now on only every power of two is told" : "");
		provider_reject(ia, ev->conn, st == DAPL_WIRE_BAD_VERSION ?
				DAPL_WIRE_REJECT_BAD_VERSION :
				DAPL_WIRE_REJECT_BAD_HEADER);
		return;
	}
	if (consumer_len > sizeof(cr->pdata))
		consumer_len = sizeof(cr->pdata);

	if (sp->h.type == DAT_HANDLE_TYPE_RSP) {
		ep = sp->ep;
		if (!ep || ep->param.ep_state != DAT_EP_STATE_RESERVED) {
			provider_reject(ia, ev->conn, DAPL_WIRE_REJECT_NO_LISTENER);
			return;
		}
	}
	cr = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_CR,
			       sizeof(*cr), ia);
	if (!cr) {
		provider_reject(ia, ev->conn, DAPL_WIRE_REJECT_NO_RESOURCES);
		return;
	}
	if (sp->h.type == DAT_HANDLE_TYPE_PSP &&
	    (sp->psp_flags & DAT_PSP_PROVIDER_FLAG)) {
		ep = dapl_ep_create_for_psp(ia);
		if (!ep) {
			dapl_handle_free(cr);
			provider_reject(ia, ev->conn, DAPL_WIRE_REJECT_NO_RESOURCES);
			return;
		}
	}
	cr->ia = ia;
	cr->sp = sp;
	cr->conn = ev->conn;
	cr->remote_addr = ev->peer;
	cr->peer_limits = hdr.limits;
	memcpy(cr->pdata, consumer, consumer_len);
	cr->pdata_len = consumer_len;
	cr->param.remote_ia_address_ptr = (DAT_IA_ADDRESS_PTR)&cr->remote_addr;
	cr->param.remote_port_qual = sockaddr_port(&cr->remote_addr);
	cr->param.private_data_size = (DAT_COUNT)consumer_len;
	cr->param.private_data = cr->pdata;
	cr->ep = ep;
	cr->param.local_ep_handle = ep;
	if (ep) {
		ep->cr = cr;
		if (sp->h.type == DAT_HANDLE_TYPE_RSP) {
			ep->param.ep_state = DAT_EP_STATE_PASSIVE_CONNECTION_PENDING;
			/* One request per RSP: later ones find no listener. */
			ia->ops->unlisten(sp->listener);
			sp->listener = NULL;
		}
	}
	cr->next = ia->crs;
	ia->crs = cr;
	if (dapl_evd_post_cr(sp->evd, sp, cr) != DAT_SUCCESS) {
		/* The consumer cannot hear of it; refuse rather than leave the
		 * peer waiting. */
		dapl_cr_destroy(cr);
	}
}

static void on_established(struct dapl_ia *ia, struct dapl_ep *ep,
			   const struct dapl_tcm_event *ev)
{
	struct dapl_read_limits own, dev;
	struct dapl_wire_hdr hdr;
	const void *consumer;
	size_t consumer_len;
	enum dapl_wire_status st;

	switch (ep->param.ep_state) {
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
		st = dapl_wire_decode(ev->pdata, ev->pdata_len, &hdr, &consumer,
				      &consumer_len);
		if (st != DAPL_WIRE_OK && st != DAPL_WIRE_LEGACY) {
			dapl_log("%s: the peer's accept is unusable (%s); connection dropped",
				 ia->prov->info.ia_name, dapl_wire_status_str(st));
			ia->ops->disconnect(ep->tep);
			ep_fail(ep, DAT_CONNECTION_EVENT_BROKEN, true);
			return;
		}
		ep_own_limits(ep, &own);
		dev_limits(ia, &dev);
		dapl_read_limits_negotiate(&own, &hdr.limits, &dev,
					   &ep->negotiated);
		if (consumer_len > sizeof(ep->pdata))
			consumer_len = sizeof(ep->pdata);
		memcpy(ep->pdata, consumer, consumer_len);
		ep->pdata_len = consumer_len;
		ep->deadline_ns = 0;
		ep->param.ep_state = DAT_EP_STATE_CONNECTED;
		ep_learn_addrs(ep);
		dapl_evd_post_connection(ep->connect_evd,
					 DAT_CONNECTION_EVENT_ESTABLISHED, ep,
					 (DAT_COUNT)ep->pdata_len,
					 ep->pdata_len ? ep->pdata : NULL);
		break;
	case DAT_EP_STATE_COMPLETION_PENDING:
		ep->param.ep_state = DAT_EP_STATE_CONNECTED;
		ep_learn_addrs(ep);
		dapl_evd_post_connection(ep->connect_evd,
					 DAT_CONNECTION_EVENT_ESTABLISHED, ep,
					 0, NULL);
		break;
	default:
		break;  /* cancelled meanwhile */
	}
}

static void on_rejected(struct dapl_ia *ia, struct dapl_ep *ep,
			const struct dapl_tcm_event *ev)
{
	struct dapl_wire_hdr hdr;
	const void *consumer;
	size_t consumer_len;
	enum dapl_wire_status st;
	DAT_EVENT_NUMBER num = DAT_CONNECTION_EVENT_NON_PEER_REJECTED;

	if (ep->param.ep_state != DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)
		return;
	if (ev->pdata_len > 0) {
		st = dapl_wire_decode(ev->pdata, ev->pdata_len, &hdr, &consumer,
				      &consumer_len);
		if (st == DAPL_WIRE_OK &&
		    (hdr.flags & DAPL_WIRE_F_PROVIDER_REJECT)) {
			dapl_log("%s: the peer's provider refused the connection: %s",
				 ia->prov->info.ia_name,
				 dapl_wire_reject_str(consumer_len ?
					*(const uint8_t *)consumer : 0));
		} else if (st == DAPL_WIRE_OK || st == DAPL_WIRE_LEGACY) {
			/* the peer consumer's reject data (dat_cr_reject of
			 * DAT 2.0) rides on the event, as an accept's does */
			if (consumer_len > sizeof(ep->pdata))
				consumer_len = sizeof(ep->pdata);
			memcpy(ep->pdata, consumer, consumer_len);
			ep->pdata_len = consumer_len;
			num = DAT_CONNECTION_EVENT_PEER_REJECTED;
		}
	}
	if (num == DAT_CONNECTION_EVENT_PEER_REJECTED && ep->pdata_len)
		ep_fail_pdata(ep, num, false, (DAT_COUNT)ep->pdata_len,
			      ep->pdata);
	else
		ep_fail(ep, num, false);
}

static void on_disconnected(struct dapl_ep *ep)
{
	switch (ep->param.ep_state) {
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
		ep_fail(ep, DAT_CONNECTION_EVENT_DISCONNECTED, false);
		break;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_COMPLETION_PENDING:
		ep_fail(ep, DAT_CONNECTION_EVENT_BROKEN, false);
		break;
	default:
		break;  /* already reported */
	}
}

static void on_conn_error(struct dapl_ep *ep)
{
	switch (ep->param.ep_state) {
	case DAT_EP_STATE_CONNECTED:
	case DAT_EP_STATE_DISCONNECT_PENDING:
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_COMPLETION_PENDING:
		ep_fail(ep, DAT_CONNECTION_EVENT_BROKEN, false);
		break;
	default:
		break;
	}
}

static void handle_event(struct dapl_ia *ia, const struct dapl_tcm_event *ev)
{
	struct dapl_ep *ep;

	if (ev->type == DAPL_TCM_CONNECT_REQUEST) {
		on_connect_request(ia, ev);
		return;
	}
	if (ev->type == DAPL_TCM_SRQ_LIMIT) {
		struct dapl_srq *srq = dapl_srq_of_tsrq(ia, ev->srq);

		/* DAT 1.2 has a reason for it but no event number */
		if (srq)
			dapl_evd_post_async_reason(ia,
				DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR, srq,
				DAT_SRQ_LOW_WATERMARK_EVENT);
		return;
	}
	if (ev->type == DAPL_TCM_DEVICE_FATAL) {
		dapl_log("%s: the device failed", ia->prov->info.ia_name);
		dapl_evd_post_async(ia, DAT_ASYNC_ERROR_IA_CATASTROPHIC, ia);
		return;
	}
	ep = ep_of_tep(ia, ev->ep);
	if (!ep)
		return;  /* its EP went away */
	switch (ev->type) {
	case DAPL_TCM_ESTABLISHED:
		on_established(ia, ep, ev);
		break;
	case DAPL_TCM_REJECTED:
		on_rejected(ia, ep, ev);
		break;
	case DAPL_TCM_UNREACHABLE:
		if (ep->param.ep_state == DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)
			ep_fail(ep, DAT_CONNECTION_EVENT_UNREACHABLE, false);
		break;
	case DAPL_TCM_DISCONNECTED:
		on_disconnected(ep);
		break;
	case DAPL_TCM_CONN_ERROR:
		on_conn_error(ep);
		break;
	default:
		break;
	}
}

/* ia->lock held: the timer goes off at ns (CLOCK_MONOTONIC) or before.
 * It is never stopped: going off for a deadline that is gone costs one
 * wakeup, stopping and starting it costs a syscall per connection.
 * Setting it wakes nobody: the progress thread sleeps on the timer too. */
static void arm_timer(struct dapl_ia *ia, uint64_t ns, uint64_t now)
{
	struct itimerspec its;

	if (ia->timer_fd < 0 || !ns ||
	    (ia->timer_ns > now && ia->timer_ns <= ns))
		return;
	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(ns / 1000000000u);
	its.it_value.tv_nsec = (long)(ns % 1000000000u);
	if (timerfd_settime(ia->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) == 0)
		ia->timer_ns = ns;
}

/* Fires expired connect timeouts and sets the timer for the next one.
 * ia->lock held.  Only once the timer is due: the walk is over every EP
 * of the IA (512 idle connections made it microseconds of each progress
 * pass), and every deadline set arms the timer (arm_timer). */
static void run_timers(struct dapl_ia *ia)
{
	uint64_t now = dapl_now_ns(), next = 0;
	struct dapl_ep *ep;

	if (!ia->timer_ns || ia->timer_ns > now)
		return;

	for (ep = ia->eps; ep; ep = ep->next) {
		if (!ep->deadline_ns)
			continue;
		if (ep->deadline_ns <= now) {
			if (ep->param.ep_state ==
			    DAT_EP_STATE_ACTIVE_CONNECTION_PENDING)
				ep_fail(ep, DAT_CONNECTION_EVENT_TIMED_OUT, true);
			ep->deadline_ns = 0;
		} else if (!next || ep->deadline_ns < next) {
			next = ep->deadline_ns;
		}
	}
	/* nothing left: the next deadline set arms it again */
	ia->timer_ns = 0;
	arm_timer(ia, next, now);
}

static bool has_progress_data(const struct udapl_transport_ops *ops)
{
	return ops->size >= offsetof(struct udapl_transport_ops, progress_data) +
			    sizeof(ops->progress_data) && ops->progress_data;
}

/* The transport's drives of what cm_get_event noted (transport.h),
 * without ia->lock: its DAPL_TPD_* bits, 0 for a transport without. */
static int progress_data(struct dapl_ia *ia, bool will_drain)
{
	if (has_progress_data(ia->ops))
		return ia->ops->progress_data(ia->dev, will_drain);
	return 0;
}

/* The progress thread's scheduling.
 *
 * Awake, it runs SCHED_FIFO (priority DAT_PROGRESS_RT, 1 by default) where
 * the system allows it (root, CAP_SYS_NICE or RLIMIT_RTPRIO) and the
 * transport reports what its passes found (progress_data: tcp, ofi),
 * else SCHED_OTHER.  Data for a program that spins on memory, on a CPU it has
 * to itself, can only be placed by preempting that program, and a woken
 * SCHED_OTHER thread often is not let in before the scheduler's tick
 * (Linux's EEVDF runs the current task to parity): 1 to 3 rounds in 100
 * of a polled ring took over a millisecond so (bench/README.md,
 * "Millisecond steps").  SCHED_FIFO goes in at once.
 *
 * It yields to the program's threads (SCHED_BATCH: a woken thread does
 * not preempt the one running) while what wakes it keeps turning out done
 * by a consumer that drives those endpoints itself (DAPL_TPD_IDLE), and
 * is awake again from the first pass that placed something nobody else
 * would have, or brought a connection event.  Woken once per arrival on
 * endpoints a consumer busy-polls, the thread would otherwise take that
 * consumer's CPU on every message; batched, it runs when the consumer
 * yields or at the scheduler's tick, finds the work done, and sleeps.
 *
 * A realtime thread must not keep a CPU from the program: awake for
 * RT_BUDGET_NS without sleeping (a peer that floods, a stream it places),
 * it goes SCHED_OTHER until it next sleeps.  The policy is left alone
 * when the program runs us under another (a realtime one, say). */
#define RT_BUDGET_NS 2000000u
/* an epoll_wait() that kept the thread this long slept in it */
#define SLEPT_NS 20000u

struct progress_policy {
	bool ours;                      /* started SCHED_OTHER: ours to set */
	int rt_prio;                    /* SCHED_FIFO's priority awake; 0 none */
	int now;                        /* the policy set */
	uint64_t awake_since;           /* the end of the last sleep */
};

static void policy_set(struct progress_policy *pp, int policy)
{
	struct sched_param sp = { .sched_priority = 0 };

	if (!pp->ours || pp->now == policy)
		return;
	if (policy == SCHED_FIFO)
		sp.sched_priority = pp->rt_prio;
	if (sched_setscheduler(0, policy, &sp) == 0) {
		pp->now = policy;
	} else if (policy == SCHED_FIFO) {
		pp->rt_prio = 0;        /* not allowed here: awake is OTHER */
		policy_set(pp, SCHED_OTHER);
	} else {
		pp->ours = false;
	}
}

/* As progress_start made the thread: SCHED_FIFO when ia->rt_prio (its
 * creator ran SCHED_OTHER then), else its creator's policy, ours to
 * change only if that is SCHED_OTHER. */
static void policy_init(struct progress_policy *pp, const struct dapl_ia *ia)
{
	pp->ours = ia->rt_prio || sched_getscheduler(0) == SCHED_OTHER;
	pp->rt_prio = ia->rt_prio;
	pp->now = ia->rt_prio ? SCHED_FIFO : SCHED_OTHER;
	pp->awake_since = dapl_now_ns();
}

/* After a pass that found work, or found it done by others (idle):
 * batched while idle; awake otherwise, realtime while it has been awake
 * for less than the budget (a pass that found nothing changes nothing). */
static void policy_after_pass(struct progress_policy *pp, bool idle)
{
	if (idle)
		policy_set(pp, SCHED_BATCH);
	else if (pp->rt_prio &&
		 dapl_now_ns() - pp->awake_since < RT_BUDGET_NS)
		policy_set(pp, SCHED_FIFO);
	else
		policy_set(pp, SCHED_OTHER);
}

/* DAT_PROGRESS_RT (libdat(7)): the thread's SCHED_FIFO priority awake,
 * 1 to 99; 0 never realtime. */
#define RT_DEFAULT_PRIO 1

static int rt_prio_from_env(void)
{
	return (int)dapl_env_number("DAT_PROGRESS_RT", RT_DEFAULT_PRIO, 0, 99);
}

/* DAT_PROGRESS_SPIN_US (libdat(7)): up to a second, 0 off; anything else
 * is the default, said in one line at each IA open (env.h).  The default
 * is about what one wake-up of the thread costs the CPU it wakes on
 * (~10 us here), so spinning costs a target no more than sleeping would
 * when nothing follows, and a peer's next Read or Write, 7-8 us behind
 * the answer to its last, finds the thread still polling. */
#define SPIN_DEFAULT_US 10

static uint64_t spin_ns_from_env(void)
{
	return (uint64_t)dapl_env_number("DAT_PROGRESS_SPIN_US", SPIN_DEFAULT_US,
					 0, 1000000) * 1000u;
}

/* With DAT_PROGRESS_SPIN_US, how long the consumer must have posted
 * nothing before the thread spins: one that posts answers what arrives
 * (a reply, a receive posted again) and needs the CPU the thread would
 * spin on. */
#define SPIN_QUIET_NS 1000000u

/* The thread sleeps in epoll_wait() on the transport's fds, its wake
 * eventfd and its timerfd.  With DAT_PROGRESS_SPIN_US it first polls without
 * sleeping for that long after it last served something that was ready
 * (counted from the end of the pass, not from the arrival: an ofi-tcp
 * pass that answers a Read took 17 us on average, a tcp one 6, so from
 * the arrival the window had closed before the peer's next Read came;
 * bench/README.md, "The spin counts from the answer"): waking
 * a thread onto a CPU that a consumer spins on costs tens of microseconds
 * (bench/README.md, "Spinning progress thread"), so a target whose peer's
 * next Read or Write follows within the window is served without that
 * wake-up, at the price of the CPU the thread spins on: by default no
 * more than a wake-up costs it (SPIN_DEFAULT_US). */

/* Tags of the progress thread's epoll set: its two fds, and the
 * transport's (a pass serves them all). */
#define PROG_WAKE 0u
#define PROG_TIMER 1u
#define PROG_TRANSPORT 2u

/* ia->lock held.  Makes the transport fds the progress thread sleeps on
 * fds[0..n) (none while a consumer waiting on a connection or CR EVD
 * sleeps on them and serves them itself: the thread would only be woken
 * with it, and take its events from it, which then reach it through the
 * EVD's eventfd one wake-up later).  False if one could not be added:
 * the thread then looks again within a millisecond. */
static bool watch_fds(struct dapl_ia *ia, const int *fds, int n)
{
	struct epoll_event ev;
	int i, k = 0;

	if (n < 0)
		n = 0;
	if (n == ia->prog_nfds && ia->prog_watch_ok &&
	    (n == 0 || memcmp(fds, ia->prog_fds, (size_t)n * sizeof(*fds)) == 0))
		return true;
	for (i = 0; i < ia->prog_nfds; i++)
		(void)epoll_ctl(ia->prog_epfd, EPOLL_CTL_DEL, ia->prog_fds[i], NULL);
	ia->prog_watch_ok = true;
	for (i = 0; i < n && i < CM_MAX_FDS; i++) {
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.u32 = PROG_TRANSPORT;
		if (epoll_ctl(ia->prog_epfd, EPOLL_CTL_ADD, fds[i], &ev) == 0 ||
		    errno == EEXIST)
			ia->prog_fds[k++] = fds[i];
		else
			ia->prog_watch_ok = false;
	}
	ia->prog_nfds = k;
	return ia->prog_watch_ok;
}

static void *progress_main(void *arg)
{
	struct dapl_ia *ia = arg;
	struct epoll_event evs[CM_MAX_FDS + 2];
	struct dapl_tcm_event ev;
	int fds[CM_MAX_FDS];
	int n, i, ready, events;
	uint64_t drain, last_ready = 0;
	uint64_t posts_changed = 0;
	bool spin, spin_ok = false, served = false, watched = true;
	struct progress_policy policy;
	int pd;

	policy_init(&policy, ia);
	for (;;) {
		pthread_mutex_lock(&ia->lock);
		if (ia->stopping) {
			pthread_mutex_unlock(&ia->lock);
			break;
		}
		events = 0;
		while (ia->ops->cm_get_event(ia->dev, &ev) == 0) {
			handle_event(ia, &ev);
			events++;
		}
		run_timers(ia);
		if (!ia->pump_waiters) {
			n = ia->ops->progress_fds(ia->dev, fds, CM_MAX_FDS);
			watched = watch_fds(ia, fds, n);
		}
		pthread_mutex_unlock(&ia->lock);
		pd = progress_data(ia, true);
		if (events || (pd & DAPL_TPD_PLACED))
			policy_after_pass(&policy, false);
		else if (pd & DAPL_TPD_IDLE) {
			policy_after_pass(&policy, true);
			/* arrivals keep coming: let the consumer they are for
			 * run before we take the next (a batched thread that
			 * never sleeps would keep it off its CPU) */
			sched_yield();
		}
		/* connection events its drives queued: hand them out first */
		if (pd & DAPL_TPD_EVENTS)
			continue;
		/* the spin's window opens when what woke us is served */
		if (served) {
			last_ready = dapl_now_ns();
			served = false;
		}

		/* nor after connection events: their consumer has work too */
		spin = spin_ok && !events && dapl_now_ns() - last_ready < ia->spin_ns;
		if (spin) {
			ready = epoll_wait(ia->prog_epfd, evs, CM_MAX_FDS + 2, 0);
		} else {
			uint64_t t0 = dapl_now_ns(), t1;

			ready = epoll_wait(ia->prog_epfd, evs, CM_MAX_FDS + 2,
					   watched ? -1 : 1);
			t1 = dapl_now_ns();
			if (t1 - t0 >= SLEPT_NS)
				policy.awake_since = t1;
		}
		if (ready > 0 && ia->spin_ns) {
			uint64_t now = dapl_now_ns();

			if (atomic_load_explicit(&ia->posted, memory_order_relaxed)) {
				atomic_store_explicit(&ia->posted, false,
						      memory_order_relaxed);
				posts_changed = now;
			}
			spin_ok = now - posts_changed > SPIN_QUIET_NS;
			served = true;
		}
		for (i = 0; i < ready; i++) {
			if (evs[i].data.u32 == PROG_WAKE &&
			    read(ia->wake_fd, &drain, sizeof(drain)) < 0)
				drain = 0;
			if (evs[i].data.u32 == PROG_TIMER &&
			    read(ia->timer_fd, &drain, sizeof(drain)) < 0)
				drain = 0;
		}
	}
	return NULL;
}

/* Starts the progress thread, realtime from its first instruction where
 * the system allows it (a thread created so, rather than one that
 * switches, runs nothing under another policy), else as its creator.
 * ia->rt_prio stays what the thread got: 0 when it is not realtime. */
static int progress_start(struct dapl_ia *ia)
{
	struct sched_param sp = { .sched_priority = ia->rt_prio };
	pthread_attr_t a;
	int err = -1;

	/* only where the transport tells its own work from a consumer's
	 * (DAPL_TPD_IDLE, DAPL_TPD_PLACED): a realtime thread that cannot
	 * would take every CQ from its busy poller (ofi-tcp's window of 64
	 * Sends ran at less than half its rate so, before ofi said) */
	if (!has_progress_data(ia->ops))
		ia->rt_prio = 0;
	if (sched_getscheduler(0) != SCHED_OTHER)
		ia->rt_prio = 0;        /* the program's policy stays */
	if (ia->rt_prio && pthread_attr_init(&a) == 0) {
		if (pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED) == 0 &&
		    pthread_attr_setschedpolicy(&a, SCHED_FIFO) == 0 &&
		    pthread_attr_setschedparam(&a, &sp) == 0)
			err = pthread_create(&ia->progress, &a, progress_main, ia);
		pthread_attr_destroy(&a);
		if (err == 0)
			return 0;
	}
	/* not allowed here (EPERM: no CAP_SYS_NICE, RLIMIT_RTPRIO 0, or a
	 * cgroup without realtime time), or not wanted */
	ia->rt_prio = 0;
	return pthread_create(&ia->progress, NULL, progress_main, ia);
}

int dapl_cm_start(struct dapl_ia *ia)
{
	int err;

	ia->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (ia->wake_fd < 0)
		return -errno;
	ia->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	ia->timer_ns = 0;
	ia->spin_ns = spin_ns_from_env();
	ia->rt_prio = rt_prio_from_env();
	ia->prog_nfds = 0;
	ia->prog_watch_ok = false;
	ia->pump_waiters = 0;
	ia->prog_epfd = epoll_create1(EPOLL_CLOEXEC);
	err = ia->timer_fd < 0 || ia->prog_epfd < 0 ? errno : 0;
	if (!err) {
		struct epoll_event ev = { .events = EPOLLIN };

		ev.data.u32 = PROG_WAKE;
		if (epoll_ctl(ia->prog_epfd, EPOLL_CTL_ADD, ia->wake_fd, &ev) < 0)
			err = errno;
		ev.data.u32 = PROG_TIMER;
		if (!err &&
		    epoll_ctl(ia->prog_epfd, EPOLL_CTL_ADD, ia->timer_fd, &ev) < 0)
			err = errno;
	}
	if (!err)
		err = progress_start(ia);
	if (err) {
		close(ia->wake_fd);
		if (ia->timer_fd >= 0)
			close(ia->timer_fd);
		if (ia->prog_epfd >= 0)
			close(ia->prog_epfd);
		ia->wake_fd = ia->timer_fd = ia->prog_epfd = -1;
		return -err;
	}
	/* so that ps, top and perf tell it from the program's threads */
	(void)pthread_setname_np(ia->progress, "dat-progress");
	ia->progress_running = true;
	return 0;
}

void dapl_cm_kick(struct dapl_ia *ia)
{
	uint64_t one = 1;

	if (ia->wake_fd >= 0 && write(ia->wake_fd, &one, sizeof(one)) < 0)
		return;  /* the counter is saturated: it is readable anyway */
}

/* A consumer about to sleep on a connection or CR EVD sleeps on the
 * progress fds too and serves them itself (evd.c): the progress thread
 * leaves them (watch_fds) until the last such waiter is done, so that it
 * neither wakes with the waiter nor takes the waiter's event from it. */
int dapl_cm_waiter_fds(struct dapl_ia *ia, int *fds, int max)
{
	int n = 0;

	pthread_mutex_lock(&ia->lock);
	if (ia->progress_running && !ia->stopping)
		n = ia->ops->progress_fds(ia->dev, fds, max);
	if (n > 0 && ia->pump_waiters++ == 0)
		(void)watch_fds(ia, NULL, 0);
	pthread_mutex_unlock(&ia->lock);
	return n < 0 ? 0 : n;
}

void dapl_cm_waiter_done(struct dapl_ia *ia)
{
	int fds[CM_MAX_FDS], n;

	pthread_mutex_lock(&ia->lock);
	if (ia->pump_waiters > 0 && --ia->pump_waiters == 0 &&
	    ia->progress_running && !ia->stopping) {
		/* what became ready meanwhile wakes the thread at once */
		n = ia->ops->progress_fds(ia->dev, fds, CM_MAX_FDS);
		if (!watch_fds(ia, fds, n))
			dapl_cm_kick(ia);       /* it retries within 1 ms */
	}
	pthread_mutex_unlock(&ia->lock);
}

int dapl_cm_waiter_pump(struct dapl_ia *ia)
{
	struct dapl_tcm_event ev;
	bool again, live;
	int events = 0;

	do {
		/* the thread is not watching: wait for whoever runs a pass
		 * now (a tick of the thread, another waiter), then look */
		pthread_mutex_lock(&ia->lock);
		live = !ia->stopping;
		if (live)
			while (ia->ops->cm_get_event(ia->dev, &ev) == 0) {
				handle_event(ia, &ev);
				events++;
			}
		pthread_mutex_unlock(&ia->lock);
		/* the drives may bring the event this waiter waits for (an
		 * MPA reply: ESTABLISHED); none once the IA closes */
		again = live && (progress_data(ia, false) & DAPL_TPD_EVENTS);
	} while (again);
	return events;
}

void dapl_cm_stop(struct dapl_ia *ia)
{
	if (!ia->progress_running)
		return;
	pthread_mutex_lock(&ia->lock);
	ia->stopping = true;
	pthread_mutex_unlock(&ia->lock);
	dapl_cm_kick(ia);
	pthread_join(ia->progress, NULL);
	ia->progress_running = false;
	close(ia->wake_fd);
	close(ia->timer_fd);
	close(ia->prog_epfd);
	ia->wake_fd = ia->timer_fd = ia->prog_epfd = -1;
	ia->prog_nfds = 0;
}

/* Hands the consumer what the transport has for it now, as the progress
 * thread would a moment later: a transport that connects an accepted EP
 * or ends a connection at once (tcp) has queued the event already, and
 * the consumer waiting for it need not wait for the progress thread too.
 * ia->lock held, as in the progress thread. */
static void self_pump(struct dapl_ia *ia, bool on)
{
	const struct udapl_transport_ops *ops = ia->ops;

	if (ops->size >= offsetof(struct udapl_transport_ops, cm_self_pump) +
			 sizeof(ops->cm_self_pump) && ops->cm_self_pump)
		ops->cm_self_pump(ia->dev, on);
}

static void pump_events(struct dapl_ia *ia)
{
	struct dapl_tcm_event ev;

	while (ia->ops->cm_get_event(ia->dev, &ev) == 0)
		handle_event(ia, &ev);
	self_pump(ia, false);
}

/* What comes before a call that pump_events follows: the transport need
 * not wake the progress thread for the events that call queues. */
static void will_pump(struct dapl_ia *ia)
{
	self_pump(ia, true);
}

/* ---- consumer calls (ia->lock held, arguments checked) ---------------------- */

DAT_RETURN dapl_cm_connect(struct dapl_ep *ep, const struct sockaddr *addr,
			   DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
			   DAT_COUNT size, const void *pdata)
{
	struct dapl_ia *ia = ep->ia;
	uint64_t now;
	uint8_t buf[CM_BUF_LEN];
	struct dapl_read_limits own;
	size_t len;
	DAT_RETURN rc;
	int err;

	rc = dapl_ep_ensure_tep(ep);
	if (rc != DAT_SUCCESS)
		return rc;
	ep_own_limits(ep, &own);
	len = dapl_wire_encode_connect(buf, sizeof(buf),
				       ia->dev_attr.max_pdata_connect, &own,
				       pdata, (size_t)size);
	if (!len && size > 0) {
		dapl_log("dat_ep_connect: %d bytes of private data do not fit "
			 "behind our header, and beginning with 0x%04x they "
			 "cannot go without it", (int)size, DAPL_WIRE_MAGIC);
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	}
	if (!len)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);

	copy_sockaddr(&ep->remote_addr, addr);
	ep->param.remote_port_qual = qual;
	ep->connected_actively = true;
	ep->pdata_len = 0;
	ep->param.ep_state = DAT_EP_STATE_ACTIVE_CONNECTION_PENDING;
	/* the same port the listening side computed for qual */
	err = ia->ops->connect(ep->tep, addr, dapl_qual_port(qual), buf, len,
			       own.ird, own.ord);
	switch (err) {
	case 0:
		break;
	case -ECONNREFUSED:
		ep_fail(ep, DAT_CONNECTION_EVENT_NON_PEER_REJECTED, true);
		return DAT_SUCCESS;
	case -ENETUNREACH:
	case -EHOSTUNREACH:
	case -EADDRNOTAVAIL:
	case -ENETDOWN:
	case -ETIMEDOUT:
		ep_fail(ep, DAT_CONNECTION_EVENT_UNREACHABLE, true);
		return DAT_SUCCESS;
	default:
		/* Nothing was sent: the EP is as it was. */
		dapl_ep_drop_tep(ep);
		ep->param.ep_state = DAT_EP_STATE_UNCONNECTED;
		ep->connected_actively = false;
		return dapl_errno_to_dat(err);
	}
	if (timeout != DAT_TIMEOUT_INFINITE) {
		/* the progress thread's timer, set without waking it */
		now = dapl_now_ns();
		ep->deadline_ns = now + (uint64_t)timeout * 1000u;
		arm_timer(ia, ep->deadline_ns, now);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cm_accept(struct dapl_cr *cr, struct dapl_ep *ep,
			  DAT_COUNT size, const void *pdata)
{
	struct dapl_ia *ia = cr->ia;
	struct dapl_read_limits own, dev;
	uint8_t buf[CM_BUF_LEN];
	size_t len;
	DAT_RETURN rc;
	int err;

	rc = dapl_ep_ensure_tep(ep);
	if (rc != DAT_SUCCESS)
		return rc;
	ep_own_limits(ep, &own);
	dev_limits(ia, &dev);
	dapl_read_limits_negotiate(&own, &cr->peer_limits, &dev,
				   &ep->negotiated);
	len = dapl_wire_encode(buf, sizeof(buf), 0, &ep->negotiated, pdata,
			       (size_t)size);
	if (!len || len > ia->dev_attr.max_pdata_accept)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);

	will_pump(ia);
	err = ia->ops->accept(cr->conn, ep->tep, buf, len, ep->negotiated.ird,
			      ep->negotiated.ord);
	cr->conn = NULL;  /* consumed either way */
	ep->remote_addr = cr->remote_addr;
	ep->param.remote_port_qual = cr->param.remote_port_qual;
	ep->connected_actively = false;
	ep->pdata_len = 0;
	if (ep->cr == cr)
		ep->cr = NULL;
	cr->ep = NULL;
	dapl_cr_destroy(cr);
	if (err) {
		dapl_ep_drop_tep(ep);
		ep->param.ep_state = DAT_EP_STATE_DISCONNECTED;
		pump_events(ia);
		return dapl_errno_to_dat(err);
	}
	ep->param.ep_state = DAT_EP_STATE_COMPLETION_PENDING;
	/* a transport connected at once (tcp with a libdat peer) has
	 * queued ESTABLISHED already */
	pump_events(ia);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cm_reject(struct dapl_cr *cr, DAT_COUNT size,
			   const void *pdata)
{
	struct dapl_ia *ia = cr->ia;
	uint8_t buf[CM_BUF_LEN];
	size_t len;

	/* A consumer reject still carries our header: its presence is what
	 * tells the peer "your peer refused" from "nobody listens". */
	len = dapl_wire_encode(buf, sizeof(buf), 0, NULL, pdata, (size_t)size);
	if (!len)	/* (dapl_cr_reject checked the size) */
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ia->ops->reject(cr->conn, buf, len);
	cr->conn = NULL;
	dapl_cr_destroy(cr);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cm_disconnect(struct dapl_ep *ep, DAT_CLOSE_FLAGS flags)
{
	struct dapl_ia *ia = ep->ia;

	switch (ep->param.ep_state) {
	case DAT_EP_STATE_CONNECTED:
		will_pump(ia);
		ia->ops->disconnect(ep->tep);
		if (flags == DAT_CLOSE_ABRUPT_FLAG)
			ep_fail(ep, DAT_CONNECTION_EVENT_DISCONNECTED, false);
		else
			ep->param.ep_state = DAT_EP_STATE_DISCONNECT_PENDING;
		pump_events(ia);
		return DAT_SUCCESS;
	case DAT_EP_STATE_DISCONNECT_PENDING:
		if (flags == DAT_CLOSE_ABRUPT_FLAG)
			ep_fail(ep, DAT_CONNECTION_EVENT_DISCONNECTED, false);
		return DAT_SUCCESS;
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING:
	case DAT_EP_STATE_COMPLETION_PENDING:
		ep_fail(ep, DAT_CONNECTION_EVENT_DISCONNECTED, true);
		return DAT_SUCCESS;
	case DAT_EP_STATE_DISCONNECTED:
		return DAT_SUCCESS;
	default:
		return dapl_ep_state_error(ep->param.ep_state);
	}
}
