/* Consumer notification objects: the dat_cno_* entry points and the
 * trigger the EVDs pull (see core.h for the objects and the lock order).
 *
 * A CNO is triggered by an event queued on an enabled EVD attached to it
 * that nobody waits on directly (dapl_evd_post), and, while a thread is in
 * dat_cno_wait, by completions reaching the CQ of such an EVD: the waiter
 * looks at every attached CQ once (arm, then poll) before it sleeps in
 * ppoll() on the CNO's eventfd and on those CQs' wait fds.
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

void dapl_cno_trigger(struct dapl_cno *cno, struct dapl_evd *evd)
{
	DAT_OS_WAIT_PROXY_AGENT agent;

	pthread_mutex_lock(&cno->lock);
	cno->triggered = evd;          /* the latest is as good a hint as any */
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
	if (freed && cno->triggered == evd)
		cno->triggered = NULL;   /* never hand out a freed EVD */
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
	cno->triggered = NULL;
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
	if (mask & ~DAT_CNO_FIELD_ALL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&cno->lock);
	if (mask & DAT_CNO_FIELD_IA_HANDLE)
		param->ia_handle = (DAT_IA_HANDLE)cno->ia;
	if (mask & DAT_CNO_FIELD_AGENT)
		param->agent = cno->agent;
	pthread_mutex_unlock(&cno->lock);
	return DAT_SUCCESS;
}

/* ---- waiting ------------------------------------------------------------- */

/* The trigger as the wait's result; cno->lock held. */
static DAT_RETURN take_trigger(struct dapl_cno *cno, DAT_EVD_HANDLE *out)
{
	*out = (DAT_EVD_HANDLE)cno->triggered;
	cno->triggered = NULL;
	fd_drain(cno->event_fd);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_cno_wait(DAT_CNO_HANDLE cno_handle, DAT_TIMEOUT timeout,
			 DAT_EVD_HANDLE *evd_handle)
{
	struct dapl_cno *cno = cno_get(cno_handle);
	bool forever = timeout == DAT_TIMEOUT_INFINITE;
	DAT_OS_WAIT_PROXY_AGENT agent = DAT_OS_WAIT_PROXY_AGENT_NULL;
	struct dapl_evd **evds = NULL, *evd, *hint = NULL;
	struct pollfd *pfd = NULL;
	struct dapl_ia *ia;
	struct timespec ts;
	DAT_RETURN ret;
	int n = 0, i, rc, err, fd;

	if (!cno)
		return ERR_HANDLE_CNO;
	if (!evd_handle)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	ia = cno->ia;

	pthread_mutex_lock(&ia->lock);
	pthread_mutex_lock(&cno->lock);
	if (cno->waiting) {
		pthread_mutex_unlock(&cno->lock);
		pthread_mutex_unlock(&ia->lock);
		return ERR_CNO_IN_USE;
	}
	cno->waiting = true;
	/* users is stable: attaching and detaching take ia->lock */
	pfd = calloc((size_t)cno->users + 1, sizeof(*pfd));
	evds = calloc((size_t)cno->users + 1, sizeof(*evds));
	pthread_mutex_unlock(&cno->lock);
	if (!pfd || !evds) {
		pthread_mutex_unlock(&ia->lock);
		ret = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				DAT_RESOURCE_MEMORY);
		pthread_mutex_lock(&cno->lock);
		goto out;
	}
	pfd[n++] = (struct pollfd){ .fd = cno->event_fd, .events = POLLIN };
	/* Completions already in the attached CQs trigger the CNO here;
	 * later ones wake the ppoll below. */
	for (evd = ia->evds; evd && n <= cno->users; evd = evd->next) {
		fd = dapl_evd_cno_arm(evd, cno);
		if (fd >= 0) {
			evds[n] = evd;
			pfd[n++] = (struct pollfd){ .fd = fd,
						    .events = POLLIN };
		}
	}
	pthread_mutex_unlock(&ia->lock);

	pthread_mutex_lock(&cno->lock);
	if (cno->triggered) {
		ret = take_trigger(cno, evd_handle);
		goto out;
	}
	pthread_mutex_unlock(&cno->lock);

	if (!forever) {
		ts.tv_sec = (time_t)(timeout / 1000000u);
		ts.tv_nsec = (long)(timeout % 1000000u) * 1000;
	}
	rc = ppoll(pfd, (nfds_t)n, forever ? NULL : &ts, NULL);
	err = rc < 0 ? errno : 0;

	pthread_mutex_lock(&cno->lock);
	if (cno_dead(cno)) {
		/* its IA was closed while we slept */
		pthread_mutex_unlock(&cno->lock);
		cno_release(cno);
		free(pfd);
		free(evds);
		*evd_handle = DAT_HANDLE_NULL;
		return DAT_SUCCESS;
	}
	for (i = 1; i < n && !hint; i++)
		if (pfd[i].revents & (POLLIN | POLLERR | POLLHUP))
			hint = evds[i];
	if (cno->triggered) {
		ret = take_trigger(cno, evd_handle);
	} else if (pfd[0].revents & POLLIN) {
		/* woken without a trigger: every EVD of the CNO was freed */
		fd_drain(cno->event_fd);
		*evd_handle = DAT_HANDLE_NULL;
		ret = DAT_SUCCESS;
	} else if (hint) {
		/* A DTO completion arrived.  Its CQ's notification is acked
		 * by whoever arms that CQ next. */
		*evd_handle = (DAT_EVD_HANDLE)hint;
		agent = take_agent(cno);      /* called once we let go */
		ret = DAT_SUCCESS;
	} else if (rc == 0) {
		/* dat_cno_wait(3) names DAT_QUEUE_EMPTY for "timed out
		 * without a notification". */
		*evd_handle = DAT_HANDLE_NULL;
		ret = DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	} else if (err == EINTR) {
		*evd_handle = DAT_HANDLE_NULL;
		ret = DAT_ERROR(DAT_INTERRUPTED_CALL, DAT_NO_SUBTYPE);
	} else {
		*evd_handle = DAT_HANDLE_NULL;
		ret = DAT_ERROR(DAT_INTERNAL_ERROR, DAT_NO_SUBTYPE);
	}
out:
	cno->waiting = false;
	pthread_mutex_unlock(&cno->lock);
	free(pfd);
	free(evds);
	call_agent(agent, hint);
	return ret;
}
