/* Consumer notification objects: the dat_cno_* entry points and the
 * trigger the EVDs pull (see core.h for the objects and the lock order).
 *
 * A CNO is triggered by an event queued on an enabled EVD attached to it
 * that nobody waits on directly (dapl_evd_post), and, while a thread is in
 * dat_cno_wait, by completions reaching the CQ of such an EVD: the waiter
 * looks at every attached CQ (arm, then poll) before it sleeps in ppoll()
 * on the CNO's eventfd and on those CQs' wait fds.
 *
 * Each trigger queues its EVD on the CNO (once, oldest first).  A wait
 * names the oldest queued EVD that has an event right then, so the EVD
 * named is the one whose event woke the waiter and a dat_evd_dequeue on it
 * finds the event; the other queued EVDs are named by the next waits.
 *
 * Teardown with a sleeper works as for EVDs: dapl_cno_destroy (abrupt IA
 * close) marks the handle dead and wakes the waiter, which returns
 * DAT_SUCCESS with a NULL EVD (dat_ia_close(3)) and releases the CNO. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* ppoll */
#endif
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core.h"

#define ERR_HANDLE_CNO DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_CNO)
#define ERR_CNO_IN_USE \
	DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_CNO_IN_USE)

static struct dapl_cno *cno_get(DAT_CNO_HANDLE h)
{
	return (struct dapl_cno *)dapl_handle_get(h, DAT_HANDLE_TYPE_CNO);
}

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static bool cno_dead(const struct dapl_cno *cno)
{
	return cno->h.magic != dapl_magic(DAT_HANDLE_TYPE_CNO);
}

static void fd_signal(int fd)
{
	uint64_t one = 1;

	if (write(fd, &one, sizeof(one)) < 0)
		return;   /* counter at its maximum: still readable */
}

static void fd_drain(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) < 0)
		return;   /* already drained */
}

/* The agent to call for this trigger, taken off the CNO: dat_cno_create(3)
 * says that once invoked it is no longer associated with the CNO (the
 * consumer re-arms it with dat_cno_modify_agent).  cno->lock held. */
static DAT_OS_WAIT_PROXY_AGENT take_agent(struct dapl_cno *cno)
{
	DAT_OS_WAIT_PROXY_AGENT agent = cno->agent;

	if (agent.proxy_agent_func)
		cno->agent = DAT_OS_WAIT_PROXY_AGENT_NULL;
	return agent;
}

/* Agents run in the provider's context, possibly on the progress thread
 * with IA and EVD locks held: like any OS wait proxy they may signal, but
 * not call DAT on the same IA. */
static void call_agent(DAT_OS_WAIT_PROXY_AGENT agent, struct dapl_evd *evd)
{
	if (agent.proxy_agent_func)
		agent.proxy_agent_func(agent.instance_data,
				       (DAT_EVD_HANDLE)evd);
}

/* The queue of EVDs that fired (cno->lock held).  An EVD is on it at most
 * once, oldest trigger first, so a wait names the EVD whose event came
 * first and the next wait the next one: none is lost to a later trigger. */
static void fired_push(struct dapl_cno *cno, struct dapl_evd *evd)
{
	if (evd->cno_queued)
		return;
	evd->cno_queued = true;
	evd->cno_next = NULL;
	if (cno->fired_tail)
		cno->fired_tail->cno_next = evd;
	else
		cno->fired_head = evd;
	cno->fired_tail = evd;
}

static struct dapl_evd *fired_pop(struct dapl_cno *cno)
{
	struct dapl_evd *evd = cno->fired_head;

	if (!evd)
		return NULL;
	cno->fired_head = evd->cno_next;
	if (!cno->fired_head)
		cno->fired_tail = NULL;
	evd->cno_next = NULL;
	evd->cno_queued = false;
	return evd;
}

static void fired_remove(struct dapl_cno *cno, struct dapl_evd *evd)
{
	struct dapl_evd **pp, *prev = NULL;

	if (!evd->cno_queued)
		return;
	for (pp = &cno->fired_head; *pp; prev = *pp, pp = &(*pp)->cno_next) {
		if (*pp == evd) {
			*pp = evd->cno_next;
			if (cno->fired_tail == evd)
				cno->fired_tail = prev;
			break;
		}
	}
	evd->cno_next = NULL;
	evd->cno_queued = false;
}

void dapl_cno_trigger(struct dapl_cno *cno, struct dapl_evd *evd)
{
	DAT_OS_WAIT_PROXY_AGENT agent;

	pthread_mutex_lock(&cno->lock);
	fired_push(cno, evd);
	if (cno->waiting)
		fd_signal(cno->event_fd);
	agent = take_agent(cno);
	pthread_mutex_unlock(&cno->lock);
	call_agent(agent, evd);
}

void dapl_cno_attach(struct dapl_cno *cno)
{
	pthread_mutex_lock(&cno->lock);
	cno->users++;
	pthread_mutex_unlock(&cno->lock);
}

void dapl_cno_detach(struct dapl_cno *cno, struct dapl_evd *evd, bool freed)
{
	DAT_OS_WAIT_PROXY_AGENT agent = DAT_OS_WAIT_PROXY_AGENT_NULL;

	pthread_mutex_lock(&cno->lock);
	cno->users--;
	/* never hand out an EVD that left the CNO (or was freed) */
	fired_remove(cno, evd);
	/* dat_cno_wait(3): when every EVD of the CNO has been freed, its
	 * waiters and its agent are unblocked with a NULL EVD. */
	if (freed && cno->users == 0) {
		if (cno->waiting)
			fd_signal(cno->event_fd);
		agent = take_agent(cno);
	}
	pthread_mutex_unlock(&cno->lock);
	call_agent(agent, NULL);
}

/* ---- create / free ------------------------------------------------------- */

static void cno_release(struct dapl_cno *cno)
{
	if (cno->event_fd >= 0)
		close(cno->event_fd);
	pthread_mutex_destroy(&cno->lock);
	dapl_handle_free(cno);
}

static void cno_unlink(struct dapl_cno *cno)
{
	struct dapl_cno **pp;

	for (pp = &cno->ia->cnos; *pp; pp = &(*pp)->next) {
		if (*pp == cno) {
			*pp = cno->next;
			break;
		}
	}
	cno->next = NULL;
}

DAT_RETURN dapl_cno_create(DAT_IA_HANDLE ia_handle,
			   DAT_OS_WAIT_PROXY_AGENT agent,
			   DAT_CNO_HANDLE *cno_handle)
{
	struct dapl_ia *ia = dapl_ia_get(ia_handle);
	struct dapl_cno *cno;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (!cno_handle)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	cno = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_CNO,
				sizeof(*cno), ia);
	if (!cno)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	cno->ia = ia;
	cno->agent = agent;
	pthread_mutex_init(&cno->lock, NULL);
	cno->event_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (cno->event_fd < 0) {
		cno_release(cno);
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	}
	pthread_mutex_lock(&ia->lock);
	cno->next = ia->cnos;
	ia->cnos = cno;
	pthread_mutex_unlock(&ia->lock);
	*cno_handle = (DAT_CNO_HANDLE)cno;
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cno_free(DAT_CNO_HANDLE cno_handle)
{
	struct dapl_cno *cno = cno_get(cno_handle);
	struct dapl_ia *ia;
	DAT_RETURN ret = DAT_SUCCESS;

	if (!cno)
		return ERR_HANDLE_CNO;
	ia = cno->ia;
	pthread_mutex_lock(&ia->lock);
	pthread_mutex_lock(&cno->lock);
	if (cno_dead(cno))
		ret = ERR_HANDLE_CNO;         /* another thread freed it */
	else if (cno->users > 0 || cno->waiting)
		ret = ERR_CNO_IN_USE;
	else
		cno_unlink(cno);
	pthread_mutex_unlock(&cno->lock);
	pthread_mutex_unlock(&ia->lock);
	if (ret == DAT_SUCCESS)
		cno_release(cno);
	return ret;
}

void dapl_cno_destroy(struct dapl_cno *cno)
{
	DAT_OS_WAIT_PROXY_AGENT agent;
	struct dapl_evd *evd;
	bool sleeper;

	/* EVDs still attached (any order of teardown) forget it. */
	for (evd = cno->ia->evds; evd; evd = evd->next) {
		pthread_mutex_lock(&evd->lock);
		if (evd->cno == cno)
			evd->cno = NULL;
		pthread_mutex_unlock(&evd->lock);
	}
	cno_unlink(cno);
	pthread_mutex_lock(&cno->lock);
	cno->users = 0;
	while (fired_pop(cno))
		;
	agent = take_agent(cno);
	sleeper = cno->waiting;
	if (sleeper) {
		/* stale from now on; the waiter releases the memory */
		cno->h.magic = DAPL_MAGIC_DEAD;
		fd_signal(cno->event_fd);
	}
	pthread_mutex_unlock(&cno->lock);
	/* dat_ia_close(3): the agent too is unblocked with a NULL EVD. */
	call_agent(agent, NULL);
	if (!sleeper)
		cno_release(cno);
}

/* ---- parameters ---------------------------------------------------------- */

DAT_RETURN dapl_cno_modify_agent(DAT_CNO_HANDLE cno_handle,
				 DAT_OS_WAIT_PROXY_AGENT agent)
{
	struct dapl_cno *cno = cno_get(cno_handle);

	if (!cno)
		return ERR_HANDLE_CNO;
	pthread_mutex_lock(&cno->lock);
	cno->agent = agent;
	pthread_mutex_unlock(&cno->lock);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cno_query(DAT_CNO_HANDLE cno_handle, DAT_CNO_PARAM_MASK mask,
			  DAT_CNO_PARAM *param)
{
	struct dapl_cno *cno = cno_get(cno_handle);

	if (!cno)
		return ERR_HANDLE_CNO;
#if DAT_GEN == 2
	/* 2.0's values: PROXY (0x3) is IA_HANDLE | PROXY_TYPE, and ALL
	 * (0x4) is a bit of its own that means every field. */
	if (mask & ~(DAT_CNO_FIELD_PROXY | DAT_CNO_FIELD_ALL))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (mask & DAT_CNO_FIELD_ALL)
		mask = DAT_CNO_FIELD_PROXY;
#else
	if (mask & ~DAT_CNO_FIELD_ALL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
#endif
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&cno->lock);
	if (mask & DAT_CNO_FIELD_IA_HANDLE)
		param->ia_handle = (DAT_IA_HANDLE)cno->ia;
#if DAT_GEN == 2
	/* only dat_cno_create's agent: cno_fd_create is not implemented */
	if (mask & DAT_CNO_FIELD_PROXY_TYPE) {
		param->proxy_type = cno->agent.proxy_agent_func ?
			DAT_PROXY_TYPE_AGENT : DAT_PROXY_TYPE_NONE;
		param->proxy.agent = cno->agent;
	}
#else
	if (mask & DAT_CNO_FIELD_AGENT)
		param->agent = cno->agent;
#endif
	pthread_mutex_unlock(&cno->lock);
	return DAT_SUCCESS;
}

/* ---- waiting ------------------------------------------------------------- */

/* The oldest EVD that fired and still has an event for dat_evd_dequeue,
 * taken off the queue; EVDs found without one (a consumer took it
 * meanwhile, or the EVD was disabled or is waited on directly) leave the
 * queue too.  ia->lock held, so no EVD on the queue goes away. */
static struct dapl_evd *take_ready(struct dapl_cno *cno)
{
	struct dapl_evd *evd;

	for (;;) {
		pthread_mutex_lock(&cno->lock);
		evd = fired_pop(cno);
		pthread_mutex_unlock(&cno->lock);
		if (!evd || dapl_evd_cno_ready(evd, cno))
			return evd;
	}
}

/* Arms the CQs of every EVD that feeds cno (completions already there
 * trigger it) and puts their wait fds in *pfdp after the CNO's own
 * eventfd, growing it as needed (an EVD shared with other IAs has a CQ
 * per IA); returns how many fds, or -1 without memory.  ia->lock held. */
static int arm_all(struct dapl_ia *ia, struct dapl_cno *cno,
		   struct pollfd **pfdp, int *cap)
{
	struct dapl_evd *evd;
	struct pollfd *pfd;
	int n, k;

	for (;;) {
		if (*cap < 2) {
			pfd = realloc(*pfdp, 8 * sizeof(*pfd));
			if (!pfd)
				return -1;
			*pfdp = pfd;
			*cap = 8;
		}
		pfd = *pfdp;
		pfd[0] = (struct pollfd){ .fd = cno->event_fd, .events = POLLIN };
		n = 1;
		for (evd = ia->evds; evd; evd = evd->next) {
			k = n < *cap ?
				dapl_evd_cno_arm(evd, cno, pfd + n, *cap - n) :
				dapl_evd_cno_arm(evd, cno, pfd, 0);
			n += k;
		}
		if (n <= *cap)
			return n;
		/* some fds did not fit: grow and arm again (harmless) */
		pfd = realloc(*pfdp, (size_t)n * 2 * sizeof(*pfd));
		if (!pfd)
			return -1;
		*pfdp = pfd;
		*cap = n * 2;
	}
}

/* Each round: arm every CQ of the CNO and look at the EVDs that fired,
 * under ia->lock; the EVD returned has an event at that moment, so a
 * consumer that dequeues from it finds one (unless another thread takes
 * it first).  Then sleep without ia->lock until a trigger, a completion
 * in a CQ, the deadline or the teardown, and go round again.  The IA is
 * pinned across the sleeps: an abrupt dat_ia_close frees it only once
 * this thread has let go. */
DAT_RETURN dapl_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout,
			 DAT_EVD_HANDLE *evd_handle)
{
	struct dapl_cno *cno = cno_get(cno_handle);
	bool forever = timeout == DAT_TIMEOUT_INFINITE;
	struct dapl_evd *ready;
	struct pollfd *pfd = NULL;
	struct dapl_ia *ia;
	struct timespec ts;
	uint64_t deadline = 0, now, left;
	DAT_RETURN ret;
	bool dead = false;
	int n, cap = 0, rc, err;

	if (!cno)
		return ERR_HANDLE_CNO;
	if (!evd_handle)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ia = cno->ia;
	if (!forever)
		deadline = mono_ns() + (uint64_t)timeout * 1000u;

	pthread_mutex_lock(&ia->lock);
	pthread_mutex_lock(&cno->lock);
	if (cno->waiting) {
		pthread_mutex_unlock(&cno->lock);
		pthread_mutex_unlock(&ia->lock);
		return ERR_CNO_IN_USE;
	}
	cno->waiting = true;
	pthread_mutex_unlock(&cno->lock);
	dapl_ia_pin(ia);

	*evd_handle = DAT_HANDLE_NULL;
	for (;;) {
		/* ia->lock held, the CNO alive */
		n = arm_all(ia, cno, &pfd, &cap);
		ready = take_ready(cno);
		pthread_mutex_unlock(&ia->lock);
		if (ready) {
			*evd_handle = (DAT_EVD_HANDLE)ready;
			ret = DAT_SUCCESS;
			break;
		}
		if (n < 0) {
			ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
					DAT_RESOURCE_MEMORY);
			break;
		}
		if (!forever) {
			now = mono_ns();
			if (now >= deadline) {
				/* dat_cno_wait(3) names DAT_QUEUE_EMPTY for
				 * "timed out without a notification". */
				ret = DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
				break;
			}
			left = deadline - now;
			ts.tv_sec = (time_t)(left / 1000000000u);
			ts.tv_nsec = (long)(left % 1000000000u);
		}
		rc = ppoll(pfd, (nfds_t)n, forever ? NULL : &ts, NULL);
		err = rc < 0 ? errno : 0;

		pthread_mutex_lock(&cno->lock);
		dead = cno_dead(cno);
		if (!dead && (pfd[0].revents & POLLIN)) {
			fd_drain(cno->event_fd);
			if (cno->users == 0) {
				/* every EVD of the CNO was freed */
				pthread_mutex_unlock(&cno->lock);
				ret = DAT_SUCCESS;
				break;
			}
		}
		pthread_mutex_unlock(&cno->lock);
		if (dead) {
			/* its IA was closed while we slept: SUCCESS with a
			 * NULL EVD (dat_ia_close(3)), below */
			ret = DAT_SUCCESS;
			break;
		}
		if (rc < 0 && err == EINTR) {
			ret = DAT_ERROR(DAT_INTERRUPTED_CALL, DAT_NO_SUBTYPE);
			break;
		}
		if (rc < 0) {
			ret = DAT_ERROR(DAT_INTERNAL_ERROR, DAT_NO_SUBTYPE);
			break;
		}
		/* The IA is pinned: its lock is still there even if a close
		 * got in first, which the CNO's magic then says. */
		pthread_mutex_lock(&ia->lock);
		if (cno_dead(cno)) {
			pthread_mutex_unlock(&ia->lock);
			ret = DAT_SUCCESS;
			break;
		}
	}
	free(pfd);
	/* A close may have come between the last look and here: then the
	 * CNO is ours to release, and the wait ends as the close says. */
	pthread_mutex_lock(&cno->lock);
	dead = cno_dead(cno);
	if (!dead)
		cno->waiting = false;
	pthread_mutex_unlock(&cno->lock);
	if (dead) {
		cno_release(cno);
		*evd_handle = DAT_HANDLE_NULL;
		ret = DAT_SUCCESS;
	}
	dapl_ia_unpin(ia);
	return ret;
}

#if DAT_GEN == 2
DAT_RETURN dapl_cno_fd_create(DAT_IA_HANDLE ia, DAT_FD *fd,
			      DAT_CNO_HANDLE *cno)
{
	(void)ia; (void)fd; (void)cno;
	return dapl_not_implemented("dat_cno_fd_create",
				    "CNOs wake through dat_cno_wait or an agent, not a file descriptor");
}

DAT_RETURN dapl_cno_fd_trigger(DAT_CNO_HANDLE cno, DAT_EVD_HANDLE *evd)
{
	(void)cno; (void)evd;
	return dapl_not_implemented("dat_cno_trigger",
				    "only for CNOs of dat_cno_fd_create");
}
#endif
