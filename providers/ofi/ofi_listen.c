/* Listeners, the thread that reads their connection requests, and the
 * watchdog that keeps a stranger from holding that thread.
 *
 * libfabric 1.17 tcp reads a connection request's private data with a
 * blocking recv(), inside whatever call makes the listener's EQ progress
 * (fi_eq_read, fi_trywait).  A raw client that sends the 32-byte header,
 * announces private data and then sends nothing kept that call, and with
 * it the IA's progress thread and every lock that thread held, for as
 * long as the socket stayed open: no DAT call on the IA returned (issue
 * 12, item 8).  So:
 *
 *  - Listeners (fid_peps) report to an EQ of their own, dev->leq, read by
 *    a thread of their own that holds no lock of ours while it is inside
 *    libfabric.  Endpoints keep dev->eq, which the progress thread reads.
 *    Measured on libfabric 1.17: while the listeners' EQ is stuck in that
 *    recv(), data moves, fi_eq_read of the other EQ returns, and
 *    fi_shutdown and fi_close of endpoints bound to it do not wait.
 *  - A watchdog thread ends a handshake that keeps the listener thread in
 *    one libfabric call for longer than DAPL_OFI_HANDSHAKE_MS: it reads
 *    the call the thread is blocked in from /proc/self/task/<tid>/syscall,
 *    checks that its descriptor is a connection accepted on one of our
 *    listening ports, and shuts that socket down.  libfabric's recv() then
 *    returns, it drops the request and serves the next one.
 *
 * A request becomes a dapl_tconn under dev->lock and waits on dev->reqq
 * until cm_get_event reports it (the progress fd is poked). */
#define _GNU_SOURCE     /* pthread_setname_np */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "ofi.h"

/* ---- the watchdog ---------------------------------------------------------------- */

static bool port_listed(const struct dapl_tdev *dev, uint16_t port)
{
	return dev->lports && (dev->lports[port / 8] & (1u << (port % 8)));
}

static void port_mark(struct dapl_tdev *dev, uint16_t port, bool on)
{
	pthread_mutex_lock(&dev->watch_lock);
	if (dev->lports) {
		if (on)
			dev->lports[port / 8] |= (uint8_t)(1u << (port % 8));
		else
			dev->lports[port / 8] &= (uint8_t)~(1u << (port % 8));
	}
	pthread_mutex_unlock(&dev->watch_lock);
}

/* The descriptor thread tid is blocked reading from, or -1. */
static int blocked_read_fd(int tid)
{
	char path[64], line[256];
	long nr;
	unsigned long fd;
	FILE *f;
	int ret = -1;

	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) &&
	    sscanf(line, "%ld %lx", &nr, &fd) == 2 && fd < 65536 &&
	    (nr == SYS_recvfrom || nr == SYS_recvmsg || nr == SYS_read))
		ret = (int)fd;
	fclose(f);
	return ret;
}

/* fd is a connection accepted on one of our listening ports. */
static bool accepted_here(const struct dapl_tdev *dev, int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int v = 0;
	socklen_t vlen = sizeof(v);

	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &vlen) || v)
		return false;   /* not a socket, or the listening one */
	if (getsockname(fd, (struct sockaddr *)&ss, &len) ||
	    ss.ss_family != dev->addr.ss_family ||
	    len < ofi_sa_len(ss.ss_family))
		return false;
	if (ss.ss_family == AF_INET6) {
		if (memcmp(&((struct sockaddr_in6 *)&ss)->sin6_addr,
			   &((const struct sockaddr_in6 *)&dev->addr)->sin6_addr,
			   sizeof(struct in6_addr)))
			return false;
	} else if (((struct sockaddr_in *)&ss)->sin_addr.s_addr !=
		   ((const struct sockaddr_in *)&dev->addr)->sin_addr.s_addr) {
		return false;
	}
	return port_listed(dev, ofi_sa_port(&ss));
}

static void watch_arm(struct dapl_tdev *dev, uint64_t ns)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(ns / 1000000000u);
	its.it_value.tv_nsec = (long)(ns % 1000000000u);
	if (ns == 0)
		its.it_value.tv_nsec = 1;       /* 0 would disarm */
	timerfd_settime(dev->watch_fd, 0, &its, NULL);
}

/* watch_lock held.  When the listener thread has been inside one
 * libfabric call for the whole deadline (or at once, with force), cuts
 * the connection it is reading from; otherwise looks again later. */
static void watch_check(struct dapl_tdev *dev, bool force)
{
	uint64_t spent;
	int fd;

	if (!dev->lin_call)
		return;
	spent = dapl_now_ns() - dev->lcall_ns;
	if (!force && spent < dev->handshake_ns) {
		watch_arm(dev, dev->handshake_ns - spent);
		return;
	}
	fd = blocked_read_fd(dev->ltid);
	/* Read twice around the checks: the thread must still be in the same
	 * read, so the descriptor is still that connection. */
	if (fd >= 0 && accepted_here(dev, fd) && blocked_read_fd(dev->ltid) == fd &&
	    shutdown(fd, SHUT_RDWR) == 0)
		dev->cut++;
	if (!force)
		watch_arm(dev, dev->handshake_ns);   /* in case it stays */
}

static void *watch_main(void *arg)
{
	struct dapl_tdev *dev = arg;
	struct pollfd p[2] = {
		{ .fd = dev->watch_fd, .events = POLLIN },
		{ .fd = dev->lstop_fd, .events = POLLIN },
	};
	uint64_t v;

	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!p[0].revents)
			continue;
		while (read(dev->watch_fd, &v, sizeof(v)) > 0)
			;
		pthread_mutex_lock(&dev->watch_lock);
		watch_check(dev, false);
		pthread_mutex_unlock(&dev->watch_lock);
	}
	return NULL;
}

/* The listener thread around each libfabric call. */
static void call_begin(struct dapl_tdev *dev)
{
	pthread_mutex_lock(&dev->watch_lock);
	dev->lin_call = true;
	dev->lcall_ns = dapl_now_ns();
	watch_arm(dev, dev->handshake_ns);
	pthread_mutex_unlock(&dev->watch_lock);
}

static void call_end(struct dapl_tdev *dev)
{
	pthread_mutex_lock(&dev->watch_lock);
	dev->lin_call = false;
	pthread_mutex_unlock(&dev->watch_lock);
	/* the timer may still fire: watch_check then finds no call */
}

/* ---- the listener thread ----------------------------------------------------------- */

static struct dapl_tlisten *listener_of(struct dapl_tdev *dev, fid_t fid)
{
	struct dapl_tlisten *l;

	for (l = dev->listeners; l; l = l->next)
		if (&l->pep->fid == fid)
			return l;
	return NULL;
}

/* A request arrived on the listeners' EQ: it waits on dev->reqq. */
static void take_request(struct dapl_tdev *dev, struct fi_eq_cm_entry *e,
			 size_t datalen)
{
	struct dapl_tlisten *l;
	struct dapl_tconn *conn;

	pthread_mutex_lock(&dev->lock);
	l = listener_of(dev, e->fid);
	if (!l) {
		/* its pep was closed after libfabric handed this out */
		fi_freeinfo(e->info);
		goto out;
	}
	conn = l->dead ? NULL : calloc(1, sizeof(*conn));
	if (!conn) {
		/* unlistened (or out of memory): as if nobody listened */
		fi_reject(l->pep, e->info->handle, NULL, 0);
		fi_freeinfo(e->info);
		goto out;
	}
	conn->listener = l;
	conn->info = e->info;
	if (datalen > sizeof(conn->pdata))
		datalen = sizeof(conn->pdata);
	memcpy(conn->pdata, e->data, datalen);
	conn->pdata_len = datalen;
	/* who asks: a whole IPv4 or IPv6 address, else none (zeros) */
	ofi_sa_copy(&conn->peer, e->info->dest_addr, e->info->dest_addrlen);
	conn->next = l->conns;
	l->conns = conn;
	if (dev->reqq_tail)
		dev->reqq_tail->qnext = conn;
	else
		dev->reqq_head = conn;
	dev->reqq_tail = conn;
	ofi_dev_notify(dev);
out:
	pthread_mutex_unlock(&dev->lock);
}

static void *listen_main(void *arg)
{
	struct dapl_tdev *dev = arg;
	_Alignas(struct fi_eq_cm_entry)
	uint8_t buf[sizeof(struct fi_eq_cm_entry) + 2 * OFI_CM_DATA_MAX];
	struct fi_eq_cm_entry *e = (struct fi_eq_cm_entry *)buf;
	struct pollfd p[2] = {
		{ .fd = dev->leq_fd, .events = POLLIN },
		{ .fd = dev->lstop_fd, .events = POLLIN },
	};
	struct fid *leq = &dev->leq->fid;
	uint32_t event;
	ssize_t n;
	int ret;

	pthread_mutex_lock(&dev->watch_lock);
	dev->ltid = (int)syscall(SYS_gettid);
	pthread_mutex_unlock(&dev->watch_lock);
	for (;;) {
		p[1].revents = 0;
		if (poll(&p[1], 1, 0) > 0)
			break;          /* told to stop */
		call_begin(dev);
		errno = 0;      /* see read_eq in ofi_event.c */
		n = fi_eq_read(dev->leq, &event, buf, sizeof(buf), 0);
		call_end(dev);
		if (n >= (ssize_t)sizeof(*e) && event == FI_CONNREQ) {
			take_request(dev, e, (size_t)n - sizeof(*e));
			continue;
		}
		if (n == -FI_EAVAIL) {
			struct fi_eq_err_entry err;

			/* a listener's own error: nothing to report it to */
			memset(&err, 0, sizeof(err));
			fi_eq_readerr(dev->leq, &err, 0);
			continue;
		}
		if (n >= 0)
			continue;       /* nothing else is bound to this EQ */
		if (n != -FI_EAGAIN)
			break;          /* broken: listeners hear nothing more */
		call_begin(dev);
		ret = fi_trywait(dev->fabric, &leq, 1);
		call_end(dev);
		if (ret == -FI_EAGAIN)
			continue;
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
	}
	pthread_mutex_lock(&dev->watch_lock);
	dev->lended = true;
	pthread_cond_broadcast(&dev->watch_cond);
	pthread_mutex_unlock(&dev->watch_lock);
	return NULL;
}

/* dev->lock held: starts both threads at the first listen. */
static int threads_start(struct dapl_tdev *dev)
{
	int ret;

	if (dev->lthreads)
		return 0;
	dev->lports = calloc(65536 / 8, 1);
	if (!dev->lports)
		return -ENOMEM;
	ret = -pthread_create(&dev->wthread, NULL, watch_main, dev);
	if (ret)
		goto err;
	ret = -pthread_create(&dev->lthread, NULL, listen_main, dev);
	if (ret) {
		uint64_t one = 1;

		if (write(dev->lstop_fd, &one, sizeof(one)) < 0) {
			/* an eventfd write fails only when saturated */
		}
		pthread_join(dev->wthread, NULL);
		goto err;
	}
	/* so that ps, top and perf tell them from the program's threads
	 * and from the IA's dat-progress */
	(void)pthread_setname_np(dev->wthread, "dat-ofi-watch");
	(void)pthread_setname_np(dev->lthread, "dat-ofi-listen");
	dev->lthreads = true;
	return 0;
err:
	free(dev->lports);
	dev->lports = NULL;
	return ret;
}

/* ---- listeners ------------------------------------------------------------------- */

int ofi_listen_init(struct dapl_tdev *dev)
{
	struct fi_eq_attr eqa;
	int ret;

	dev->handshake_ns = (uint64_t)dapl_env_number("DAPL_OFI_HANDSHAKE_MS",
						      OFI_HANDSHAKE_MS, 1,
						      3600000) * 1000000u;
	pthread_mutex_init(&dev->watch_lock, NULL);
	pthread_cond_init(&dev->watch_cond, NULL);
	dev->linit = true;
	dev->lstop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	dev->watch_fd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	if (dev->lstop_fd < 0 || dev->watch_fd < 0)
		return -errno;
	memset(&eqa, 0, sizeof(eqa));
	eqa.size = 1024;
	eqa.wait_obj = FI_WAIT_FD;
	ret = ofi_err(fi_eq_open(dev->fabric, &eqa, &dev->leq, NULL));
	if (!ret)
		ret = ofi_err(fi_control(&dev->leq->fid, FI_GETWAIT,
					 &dev->leq_fd));
	return ret;
}

/* Frees l, its pep closed; dev->lock held (or no other thread left). */
static void listener_free(struct dapl_tlisten *l)
{
	struct dapl_tdev *dev = l->dev;
	struct dapl_tlisten **pp;

	for (pp = &dev->listeners; *pp; pp = &(*pp)->next) {
		if (*pp == l) {
			*pp = l->next;
			break;
		}
	}
	port_mark(dev, l->port, false);
	fi_close(&l->pep->fid);
	free(l);
}

void ofi_listen_fini(struct dapl_tdev *dev)
{
	uint64_t one = 1;

	if (!dev->linit)
		return;         /* dev_open failed before it got here */
	if (dev->lthreads) {
		if (write(dev->lstop_fd, &one, sizeof(one)) < 0) {
			/* saturated: readable already */
		}
		/* The listener thread may be stuck in a stranger's recv():
		 * cut it now rather than after the deadline. */
		pthread_mutex_lock(&dev->watch_lock);
		while (!dev->lended) {
			struct timespec ts;

			watch_check(dev, true);
			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 10000000;
			if (ts.tv_nsec >= 1000000000) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000;
			}
			pthread_cond_timedwait(&dev->watch_cond,
					       &dev->watch_lock, &ts);
		}
		pthread_mutex_unlock(&dev->watch_lock);
		pthread_join(dev->lthread, NULL);
		pthread_join(dev->wthread, NULL);
		dev->lthreads = false;
	}
	/* whatever the core left: unanswered requests are refused */
	dev->reqq_head = dev->reqq_tail = NULL;
	while (dev->listeners) {
		struct dapl_tlisten *l = dev->listeners;
		struct dapl_tconn *c;

		while ((c = l->conns)) {
			l->conns = c->next;
			fi_reject(l->pep, c->info->handle, NULL, 0);
			ofi_conn_free(c);
		}
		listener_free(l);
	}
	if (dev->leq)
		fi_close(&dev->leq->fid);
	dev->leq = NULL;
	if (dev->lstop_fd >= 0)
		close(dev->lstop_fd);
	if (dev->watch_fd >= 0)
		close(dev->watch_fd);
	dev->lstop_fd = dev->watch_fd = -1;
	free(dev->lports);
	dev->lports = NULL;
	pthread_cond_destroy(&dev->watch_cond);
	pthread_mutex_destroy(&dev->watch_lock);
	dev->linit = false;
}

int ofi_listen(struct dapl_tdev *dev, uint16_t *port, struct dapl_tlisten **lp)
{
	struct sockaddr_storage ss = dev->addr, got;
	struct dapl_tlisten *l;
	size_t len;
	int ret;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->dev = dev;
	ofi_sa_set_port(&ss, *port);

	pthread_mutex_lock(&dev->lock);
	ret = threads_start(dev);
	if (ret)
		goto err;
	ret = ofi_err(fi_passive_ep(dev->fabric, dev->info, &l->pep, l));
	if (ret)
		goto err;
	ret = ofi_err(fi_pep_bind(l->pep, &dev->leq->fid, 0));
	if (!ret)       /* the bind: -EADDRINUSE when the port is taken */
		ret = ofi_err(fi_setname(&l->pep->fid, &ss,
					 ofi_sa_len(ss.ss_family)));
	len = sizeof(ss);
	if (!ret)
		ret = ofi_err(fi_getname(&l->pep->fid, &ss, &len));
	/* the port it was given, from a whole address of our family */
	if (!ret && (len > sizeof(ss) || !ofi_sa_copy(&got, &ss, len) ||
		     got.ss_family != dev->addr.ss_family ||
		     ofi_sa_port(&got) == 0))
		ret = -EIO;
	if (ret)
		goto err_pep;
	/* known to the watchdog before the first connection can arrive */
	l->port = ofi_sa_port(&got);
	port_mark(dev, l->port, true);
	ret = ofi_err(fi_listen(l->pep));
	if (ret) {
		port_mark(dev, l->port, false);
		goto err_pep;
	}
	l->next = dev->listeners;
	dev->listeners = l;
	pthread_mutex_unlock(&dev->lock);
	*port = l->port;
	*lp = l;
	return 0;

err_pep:
	fi_close(&l->pep->fid);
err:
	pthread_mutex_unlock(&dev->lock);
	free(l);
	return ret;
}

void ofi_listener_put(struct dapl_tlisten *l)
{
	if (l->dead && !l->conns)
		listener_free(l);
}

void ofi_unlisten(struct dapl_tlisten *l)
{
	struct dapl_tdev *dev = l->dev;

	pthread_mutex_lock(&dev->lock);
	/* Requests already reported stay valid until answered; those still
	 * queued are refused when their turn comes (ofi_reqq_pop). */
	l->dead = true;
	ofi_listener_put(l);
	pthread_mutex_unlock(&dev->lock);
}

/* ---- requests ---------------------------------------------------------------------- */

void ofi_conn_unlink(struct dapl_tconn *conn)
{
	struct dapl_tconn **pp;

	for (pp = &conn->listener->conns; *pp; pp = &(*pp)->next) {
		if (*pp == conn) {
			*pp = conn->next;
			break;
		}
	}
}

void ofi_conn_free(struct dapl_tconn *conn)
{
	fi_freeinfo(conn->info);
	free(conn);
}

struct dapl_tconn *ofi_reqq_pop(struct dapl_tdev *dev)
{
	struct dapl_tconn *conn;

	while ((conn = dev->reqq_head)) {
		struct dapl_tlisten *l = conn->listener;

		dev->reqq_head = conn->qnext;
		if (!dev->reqq_head)
			dev->reqq_tail = NULL;
		conn->qnext = NULL;
		if (!l->dead)
			return conn;
		ofi_conn_unlink(conn);
		fi_reject(l->pep, conn->info->handle, NULL, 0);
		ofi_conn_free(conn);
		ofi_listener_put(l);
	}
	return NULL;
}
