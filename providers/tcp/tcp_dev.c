/* The device: its address, the progress epoll and its timer (tick), and
 * the connection events cm_get_event hands the core.  The listeners and
 * the connections they accept are tcp_listen.c's, the MPA requests of
 * those tcp_mpa.c's; the event pump here calls them.
 *
 * The progress fd is one epoll set holding: an eventfd (an event was
 * queued from a data path thread), a timerfd (endpoints left out of the
 * set are looked at again, handshake deadlines), the listening sockets,
 * the sockets of passive handshakes whose request has not come in full
 * (one that comes with its connection is read at accept time), and the
 * sockets of endpoints nobody else is driving.  epoll data carries a tag and a
 * pointer; a pointer is only used after it is found in the device's
 * lists under dev->lock, so an event for an object freed meanwhile is
 * harmless. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* accept4 */
#endif
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "env.h"
#include "ia_params.h"
#include "tcp.h"


int tcp_trace;

void tcp_trace_line(const struct dapl_tep *ep, const char *fmt, ...)
{
	char buf[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	{
		uint64_t us = dapl_now_ns() / 1000;

		/* microseconds and the thread: who did what when */
		fprintf(stderr, "%llu.%06llu tcp[%d/%d] ep %p fd %d: %s\n",
			(unsigned long long)(us / 1000000),
			(unsigned long long)(us % 1000000), (int)getpid(),
			(int)syscall(SYS_gettid), (const void *)ep,
			ep ? ep->fd : -1, buf);
	}
}

uint64_t tcp_tagged(const void *p, unsigned tag)
{
	return (uint64_t)(uintptr_t)p | tag;
}

int tcp_epoll_set(int epfd, int op, int fd, uint32_t events, uint64_t data)
{
	struct epoll_event e = { .events = events };

	e.data.u64 = data;
	return epoll_ctl(epfd, op, fd, &e) ? -errno : 0;
}

static socklen_t ss_len(const struct sockaddr_storage *ss)
{
	return ss->ss_family == AF_INET6 ? sizeof(struct sockaddr_in6)
					 : sizeof(struct sockaddr_in);
}

int tcp_dev_open(const char *ia_params, struct dapl_tdev **out, char *why,
		 size_t whylen)
{
	struct dapl_tdev *dev;
	struct dapl_ia_params p;
	char host[INET6_ADDRSTRLEN] = "?";
	int err;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return -ENOMEM;
	tcp_trace = dapl_env_switch("DAPL_TCP_TRACE");
	/* 0: leave it to the kernel (about 15 minutes) */
	dev->peer_timeout_ms = (unsigned)dapl_env_number("DAPL_TCP_PEER_TIMEOUT_MS",
							  TCP_PEER_TIMEOUT_MS, 0, 3600000);
	/* debug: only arrivals and consumers move anything, so a test can
	 * show that nothing waits for the timer */
	dev->no_timer = dapl_env_switch("DAPL_TCP_NO_TIMER");
	dev->handshake_ms = (unsigned)dapl_env_number("DAPL_TCP_HANDSHAKE_MS",
						       TCP_HANDSHAKE_MS, 1, 3600000);
	dev->epfd = dev->notify_fd = dev->timer_fd = -1;
	dev->connq.fd = -1;
	/* a peer should not pick addresses that share a hash chain */
	if (getrandom(&dev->src_key, sizeof(dev->src_key), GRND_NONBLOCK) !=
	    (ssize_t)sizeof(dev->src_key))
		dev->src_key = (uint32_t)tcp_now_ms() ^ (uint32_t)(uintptr_t)dev;
	err = dapl_ia_params_parse(ia_params, &dapl_tcp_ia_form, &p, why, whylen);
	if (err)
		goto fail;
	dev->addr = p.addr;
	pthread_mutex_init(&dev->lock, NULL);
	pthread_rwlock_init(&dev->stag_lock, NULL);
	dev->epfd = epoll_create1(EPOLL_CLOEXEC);
	dev->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	dev->timer_fd = timerfd_create(CLOCK_MONOTONIC,
				       TFD_NONBLOCK | TFD_CLOEXEC);
	if (dev->epfd < 0 || dev->notify_fd < 0 || dev->timer_fd < 0) {
		err = -errno;
		dapl_why(why, whylen, "cannot make the progress fds: %s",
		    strerror(errno));
		goto fail_fds;
	}
	err = dapl_conn_events_init(&dev->connq);
	if (err) {
		dapl_why(why, whylen, "cannot make the progress fds: %s",
		    strerror(-err));
		goto fail_fds;
	}
	if (tcp_epoll_set(dev->epfd, EPOLL_CTL_ADD, dev->notify_fd, EPOLLIN,
		      TAG_NOTIFY) ||
	    tcp_epoll_set(dev->epfd, EPOLL_CTL_ADD, dev->timer_fd, EPOLLIN,
		      TAG_TIMER) ||
	    tcp_epoll_set(dev->epfd, EPOLL_CTL_ADD, dapl_conn_events_fd(&dev->connq),
		      EPOLLIN, TAG_CONNQ)) {
		err = -EMFILE;
		goto fail_fds;
	}
	getnameinfo((struct sockaddr *)&dev->addr, ss_len(&dev->addr), host,
		    sizeof(host), NULL, 0, NI_NUMERICHOST);
	snprintf(dev->name, sizeof(dev->name), "tcp %s", host);
	*out = dev;
	return 0;

fail_fds:
	if (dev->epfd >= 0)
		close(dev->epfd);
	if (dev->notify_fd >= 0)
		close(dev->notify_fd);
	if (dev->timer_fd >= 0)
		close(dev->timer_fd);
	dapl_conn_events_destroy(&dev->connq);
	pthread_rwlock_destroy(&dev->stag_lock);
	pthread_mutex_destroy(&dev->lock);
fail:
	free(dev);
	return err;
}

int tcp_dev_query(struct dapl_tdev *dev, struct dapl_tdev_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", dev->name);
	snprintf(a->vendor, sizeof(a->vendor), "libdat iWARP over TCP");
	a->addr = dev->addr;
	a->max_qp = 65536;
	a->max_qp_wr = TCP_QUEUE_MAX;
	a->max_cq = 65536;
	a->max_cqe = 1u << 20;
	a->max_sge = TCP_MAX_SGE;
	a->max_sge_rd = TCP_MAX_SGE;
	a->max_srq = 65536;
	a->max_srq_wr = TCP_QUEUE_MAX;
	a->max_mr = 1u << 24;
	a->max_mw = 1u << 24;
	a->max_pd = 65536;
	a->max_inline = 0;
	a->max_mr_size = UINT64_MAX;
	a->max_msg_size = UINT32_MAX;
	a->max_rdma_size = UINT32_MAX;
	a->max_ird = TCP_READS_MAX;
	a->max_ord = TCP_READS_MAX;
	/* MPA carries 500 bytes after RFC 6581's 4 and our 8; the core
	 * keeps 256 (as much as ofi and InfiniBand's REP carry) */
	a->max_pdata_connect = TCP_PDATA_MAX;
	a->max_pdata_accept = TCP_PDATA_MAX;
	a->max_pdata_reject = TCP_PDATA_MAX;
	/* the extensions: offered to every peer, done with a libdat one
	 * (RFC 7306, negotiated in the MPA exchange; ep_extensions) */
	a->flags = DAPL_TDEV_REMOTE_ACCESS_ERRORS | DAPL_TDEV_FENCE |
		   DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS;
	a->specific[0].name = "rma_target_range_check";
	a->specific[0].value = "libdat's own, without overflow: a range "
		"outside the STag's region is a remote access error";
	a->specific[1].name = "protection_zones";
	a->specific[1].value = "enforced for incoming RDMA: an STag of "
		"another PZ is a remote access error";
	a->specific[2].name = "rfc7306_extensions";
	a->specific[2].value = "write with immediate and 64-bit atomics "
		"with a libdat peer only (negotiated per connection, never "
		"offered to another iWARP peer)";
	a->nspecific = 3;
	return 0;
}

/* As tcp_ep_drop_socket: out of the epoll set and shut down before the
 * close, so the FIN does not wait for a poller's reference. */
void tcp_conn_free(struct dapl_tconn *c)
{
	if (c->fd >= 0) {
		if (c->watched)
			(void)epoll_ctl(c->dev->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		(void)shutdown(c->fd, SHUT_RDWR);
		close(c->fd);
	}
	free(c);
}

void tcp_dev_close(struct dapl_tdev *dev)
{
	struct dapl_tconn *c;
	struct dapl_tlisten *l;
	unsigned i;

	while ((c = dev->conns)) {
		dev->conns = c->next;
		tcp_conn_free(c);
	}
	for (i = 0; i < TCP_SRC_BUCKETS; i++)
		while (dev->srcs[i]) {
			struct tcp_src *s = dev->srcs[i];

			dev->srcs[i] = s->next;
			free(s);
		}
	while ((l = dev->listeners)) {
		dev->listeners = l->next;
		if (l->fd >= 0)
			close(l->fd);
		free(l);
	}
	for (i = 0; i < TCP_STAG_BUCKETS; i++)
		while (dev->stags[i]) {
			struct dapl_tmr *m = dev->stags[i];

			dev->stags[i] = m->hnext;
			free(m);
		}
	close(dev->epfd);
	close(dev->notify_fd);
	close(dev->timer_fd);
	dapl_conn_events_destroy(&dev->connq);
	pthread_rwlock_destroy(&dev->stag_lock);
	pthread_mutex_destroy(&dev->lock);
	free(dev);
}

int tcp_progress_fds(struct dapl_tdev *dev, int *fds, int max)
{
	if (max < 1)
		return 0;
	fds[0] = dev->epfd;
	return 1;
}

void tcp_dev_notify(struct dapl_tdev *dev)
{
	uint64_t one = 1;

	if (write(dev->notify_fd, &one, sizeof(one)) < 0)
		one = 0;
}

/* dev->lock held. */
void tcp_timer_set(struct dapl_tdev *dev, bool on)
{
	struct itimerspec its;

	if (atomic_load(&dev->timer_on) == on || (on && dev->no_timer))
		return;
	memset(&its, 0, sizeof(its));
	if (on) {
		its.it_value.tv_nsec = TCP_TICK_NS;
		its.it_interval.tv_nsec = TCP_TICK_NS;
	}
	timerfd_settime(dev->timer_fd, 0, &its, NULL);
	atomic_store(&dev->timer_on, on);
}

void tcp_dev_need_tick(struct dapl_tdev *dev)
{
	/* pairs with the fence in tick(): either it sees what our caller
	 * just set, or we see the timer it just stopped */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load(&dev->timer_on))
		return;
	pthread_mutex_lock(&dev->lock);
	tcp_timer_set(dev, true);
	pthread_mutex_unlock(&dev->lock);
}

void tcp_dev_watch(struct dapl_tep *ep)
{
	struct dapl_tdev *dev = ep->dev;
	uint32_t ev = EPOLLIN | EPOLLRDHUP;

	if (ep->fd < 0)
		return;
	if (ep->state == TCP_EP_CONNECTING || ep->want_out)
		ev |= EPOLLOUT;
	if (ep->excluded && ep->state == TCP_EP_CONNECTED)
		ev |= EPOLLET;
	if (ep->dev_ev == ev)
		return;
	if (tcp_epoll_set(dev->epfd, ep->dev_ev ? EPOLL_CTL_MOD : EPOLL_CTL_ADD,
		      ep->fd, ev, tcp_tagged(ep, TAG_EP)) == 0)
		ep->dev_ev = ev;
}

void tcp_dev_unwatch(struct dapl_tep *ep)
{
	if (ep->fd >= 0 && ep->dev_ev)
		(void)epoll_ctl(ep->dev->epfd, EPOLL_CTL_DEL, ep->fd, NULL);
	ep->dev_ev = 0;
}

/* ---- sockets -------------------------------------------------------------- */

enum dapl_tcm_event_type tcp_sock_error_event(int err)
{
	switch (err) {
	case EFAULT:            /* memory under a request went away */
	case ETIMEDOUT:         /* the peer timeout, or TCP's own */
	case EHOSTUNREACH:
	case ENETUNREACH:
	case EHOSTDOWN:
	case ENETDOWN:
		return DAPL_TCM_CONN_ERROR;
	default:                /* ECONNRESET, EPIPE: the peer's end closed */
		return DAPL_TCM_DISCONNECTED;
	}
}

/* ---- the event pump ------------------------------------------------------- */

static bool listener_known(struct dapl_tdev *dev, struct dapl_tlisten *l)
{
	struct dapl_tlisten *x;

	for (x = dev->listeners; x; x = x->next)
		if (x == l)
			return true;
	return false;
}

static bool conn_known(struct dapl_tdev *dev, struct dapl_tconn *c)
{
	struct dapl_tconn *x;

	for (x = dev->conns; x; x = x->next)
		if (x == c)
			return true;
	return false;
}

/* dev->lock held: takes a reference on ep if it is still on the device.
 * The endpoint found moves to the front of the list: the endpoints that
 * wake the thread are few and the idle ones many (512 idle connections
 * behind one busy one made every wakeup a walk of them all). */
static bool ep_get(struct dapl_tdev *dev, struct dapl_tep *ep)
{
	struct dapl_tep **at;

	for (at = &dev->eps; *at; at = &(*at)->next)
		if (*at == ep) {
			*at = ep->next;
			ep->next = dev->eps;
			dev->eps = ep;
			atomic_fetch_add(&ep->refs, 1);
			return true;
		}
	return false;
}

/* ep->lock held: bytes, an end or an error (a reset) wait in ep's
 * socket, for a drive to read. */
static bool socket_unread(const struct dapl_tep *ep)
{
	char c;

	if (ep->fd < 0 || ep->stalled || ep->state != TCP_EP_CONNECTED)
		return false;
	if (recv(ep->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT) >= 0)
		return true;
	return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
}

/* Whether a consumer polled one of ep's CQs in the last TCP_GONE_NS. */
static bool cqs_polled(const struct dapl_tep *ep)
{
	uint64_t now = dapl_now_ns();
	uint64_t s = atomic_load_explicit(&ep->scq->polled_ns,
					  memory_order_relaxed);
	uint64_t r = atomic_load_explicit(&ep->rcq->polled_ns,
					  memory_order_relaxed);

	return s + TCP_GONE_NS > now || r + TCP_GONE_NS > now;
}

/* Drives ep from the progress thread (the reference is dropped).  It
 * waits for the lock: a socket whose consumer holds the lock would
 * otherwise wake the thread again and again until the consumer has read
 * it, each time taking the CPU from that consumer.  (No lock of ours is
 * held here, and nobody holding ep->lock waits for the core.)
 *
 * An endpoint a consumer drives (woken for nothing: the consumer got
 * there first; or many drives since we looked) is "excluded": it stays
 * in the progress epoll edge-triggered, so an arrival wakes the thread
 * once, not again and again until the consumer reads it, and the thread
 * tells the core it found nothing to do (DAPL_TPD_IDLE: the core makes
 * such wake-ups yield to the consumer, bench/README.md "Excluded
 * endpoints stay armed").  An arrival nobody read by the time the thread
 * runs means the consumer stopped driving it (polls memory, sleeps
 * elsewhere): the thread reads it through, sends the placement report,
 * and watches it level-triggered again.  No timer is involved. */
static int ep_service(struct dapl_tep *ep)
{
	uint64_t before;
	unsigned d;
	int found;

	pthread_mutex_lock(&ep->lock);
	before = ep->rx_bytes;
	/* edge-triggered: read until the socket is empty, or the next
	 * arrival is the only thing that would bring us back.  A short
	 * read ends a drive, and a FIN that came with the last data brought
	 * no edge of its own: look once more (dapltest's regress runs lost
	 * DISCONNECTED events so). */
	while (tcp_ep_drive(ep) && ep->excluded &&
	       (ep->rx_more || socket_unread(ep)))
		;
	d = tcp_ep_drives(ep);
	if (ep->state == TCP_EP_CONNECTED && !ep->excluded &&
	    d != ep->drives_seen &&
	    (ep->rx_bytes == before || d - ep->drives_seen >= TCP_BUSY_DRIVES)) {
		TCP_TRACE(ep, "excluded (a consumer drives it)");
		ep->excluded = true;
		tcp_dev_watch(ep);
	} else if (ep->state == TCP_EP_CONNECTED && ep->excluded &&
		   ep->rx_bytes != before && !cqs_polled(ep)) {
		/* the consumer left it to us: its data waited for us, and
		 * nobody polls its CQs (no drive since our last look would
		 * not do: on a CPU the two share, a thread that runs twice in
		 * a row gives the consumer no chance to drive) */
		TCP_TRACE(ep, "watched again (ack owed %d)", ep->ack_owed);
		ep->excluded = false;
		tcp_dev_watch(ep);
	}
	ep->drives_seen = d;
	/* the thread was needed: it read what nobody else would have */
	found = ep->rx_bytes != before && !ep->excluded ? DAPL_TPD_PLACED :
							  DAPL_TPD_IDLE;
	/* Nobody else may carry what it owes: a consumer that left an ack
	 * owed to ride on its reply may have stopped calling (this arrival's
	 * edge is what brought us; a reply, had it come, would have taken
	 * the ack along). */
	if (ep->state == TCP_EP_CONNECTED && ep->ack_owed) {
		ep->force_ack = true;
		tcp_ep_flush(ep);
	}
	pthread_mutex_unlock(&ep->lock);
	atomic_fetch_sub(&ep->refs, 1);
	return found;
}

/* The timer: deadlines, listeners to retry, acks nobody carried. */
static void tick(struct dapl_tdev *dev)
{
	struct dapl_tep *eps[64], *ep;
	struct dapl_tconn *c, *next;
	struct dapl_tlisten *l;
	uint64_t now = tcp_now_ms(), v;
	bool need = false;
	int n = 0, i;

	if (read(dev->timer_fd, &v, sizeof(v)) < 0)
		v = 0;
	atomic_fetch_add(&dev->ticks, 1);
	pthread_mutex_lock(&dev->lock);
	/* listeners out of fds or memory try again; before the conns,
	 * whose deadlines keep the timer going, as one may come of it */
	for (l = dev->listeners; l; l = l->next)
		if (l->paused && l->fd >= 0) {
			tcp_accept_new(dev, l);
			need |= l->paused;
		}
	for (c = dev->conns; c; c = next) {
		next = c->next;
		if (!c->reported && c->deadline_ms <= now) {
			/* half-open: the peer never finished its request */
			tcp_conn_unlink(dev, c);
			tcp_conn_free(c);
		} else if (!c->reported) {
			need = true;
		}
	}
	for (ep = dev->eps; ep; ep = ep->next) {
		/* (ack_owed is read unlocked: a hint, rechecked under ep->lock) */
		if (ep->state == TCP_EP_ACCEPTING ||
		    ep->state == TCP_EP_MPA_REQ || ep->state == TCP_EP_CONNECTING ||
		    ep->ack_owed)
			need = true;
		if ((ep->state == TCP_EP_ACCEPTING || ep->ack_owed) && n < 64) {
			atomic_fetch_add(&ep->refs, 1);
			eps[n++] = ep;
		}
	}
	tcp_timer_set(dev, need);
	if (!need) {
		/* an ack made owed while we looked: it found the timer still
		 * on and did not start it (tcp_dev_need_tick) */
		atomic_thread_fence(memory_order_seq_cst);
		for (ep = dev->eps; ep; ep = ep->next)
			if (ep->ack_owed)
				need = true;
		if (need)
			tcp_timer_set(dev, true);
	}
	pthread_mutex_unlock(&dev->lock);

	for (i = 0; i < n; i++) {
		ep = eps[i];
		if (pthread_mutex_trylock(&ep->lock) == 0) {
			if (ep->state == TCP_EP_ACCEPTING && ep->deadline_ms &&
			    ep->deadline_ms <= now)
				tcp_ep_fail(ep, DAPL_TCM_CONN_ERROR, -ETIMEDOUT);
			/* an ack owed for a whole tick: nobody is replying */
			if (ep->state == TCP_EP_CONNECTED && ep->ack_owed) {
				if (ep->ack_ticked) {
					ep->force_ack = true;
					tcp_ep_flush(ep);
				} else {
					ep->ack_ticked = true;
				}
			}
			pthread_mutex_unlock(&ep->lock);
		}
		atomic_fetch_sub(&ep->refs, 1);
	}
}

/* dev->lock held: notes ep for tcp_progress_data (once; a full stash
 * leaves it to its socket's next report: level-triggered, it comes
 * again while unread). */
static void stash_add(struct dapl_tdev *dev, struct dapl_tep *ep)
{
	int i;

	for (i = 0; i < dev->nstash; i++)
		if (dev->stash[i] == ep)
			return;
	if (dev->nstash < TCP_STASH_MAX)
		dev->stash[dev->nstash++] = ep;
}

/* dev->lock held.  A posted SRQ receive or an event: endpoints holding
 * Sends for receives get another look. */
static void kick_waiting(struct dapl_tdev *dev)
{
	struct dapl_tep *ep;

	for (ep = dev->eps; ep; ep = ep->next)
		if (ep->unexp_head && ep->srq)
			stash_add(dev, ep);
}

static bool next_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	struct dapl_tsrq *srq;
	struct dapl_tconn *c;

	memset(ev, 0, sizeof(*ev));
	if (dapl_conn_events_pop(&dev->connq, ev))
		return true;
	if ((srq = dev->srq_pend_head)) {
		dev->srq_pend_head = srq->pend_next;
		srq->pending = false;
		ev->type = DAPL_TCM_SRQ_LIMIT;
		ev->srq = srq;
		return true;
	}
	for (c = dev->conns; c; c = c->next) {
		uint32_t start, len;

		if (c->reported || c->have < MPA_HDR_LEN ||
		    c->have < MPA_HDR_LEN + c->pd_len || !c->listener)
			continue;
		tcp_ho_remove(dev, c);      /* (its request is in: it is not) */
		c->reported = true;
		c->listener->unanswered++;
		if (c->watched)
			(void)epoll_ctl(dev->epfd, EPOLL_CTL_DEL, c->fd, NULL);
		c->watched = false;
		start = c->v2 ? MPA_V2_LEN : 0;
		len = c->pd_len - start;
		if (c->ext_acks)
			len -= TCP_EXT_LEN;
		memcpy(dev->ev_buf, c->buf + MPA_HDR_LEN + start, len);
		ev->type = DAPL_TCM_CONNECT_REQUEST;
		ev->listener = c->listener;
		ev->conn = c;
		ev->pdata = dev->ev_buf;
		ev->pdata_len = len;
		ev->peer = c->peer;
		return true;
	}
	return false;
}

/* The calling thread will call cm_get_event until -EAGAIN before the
 * progress thread needs to know (transport.h). */
void tcp_cm_self_pump(struct dapl_tdev *dev, bool on)
{
	pthread_mutex_lock(&dev->lock);
	dev->self_pump = on;
	dev->self_pumper = pthread_self();
	/* what that thread queues meanwhile wakes nobody: it takes it */
	dapl_conn_events_quiet(&dev->connq, on);
	pthread_mutex_unlock(&dev->lock);
}

int tcp_cm_get_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev)
{
	struct epoll_event evs[32];
	int n, i;
	bool kick = false, ticked = false, quiet;

	pthread_mutex_lock(&dev->lock);
	if (next_event(dev, ev)) {
		pthread_mutex_unlock(&dev->lock);
		return 0;
	}
	/* A thread collecting what its own call queued (cm_self_pump)
	 * leaves the fds to the progress thread; and right after a pass
	 * over the epoll set that emptied it, the caller polls before
	 * calling again (transport.h), which shows anything new. */
	if ((dev->self_pump && pthread_equal(dev->self_pumper, pthread_self())) ||
	    dev->polled) {
		dev->polled = false;
		pthread_mutex_unlock(&dev->lock);
		return -EAGAIN;
	}
	n = epoll_wait(dev->epfd, evs, 32, 0);
	for (i = 0; i < n; i++) {
		uint64_t d = evs[i].data.u64;
		void *p = (void *)(uintptr_t)(d & ~(uint64_t)TAG_MASK);

		switch (d & TAG_MASK) {
		case TAG_NOTIFY:
			if (d == TAG_NOTIFY) {
				uint64_t v;

				if (read(dev->notify_fd, &v, sizeof(v)) < 0)
					v = 0;
				kick = true;
			}
			break;
		case TAG_TIMER:
			ticked = true;
			break;
		case TAG_CONNQ:
			break;  /* next_event takes it */
		case TAG_LISTEN:
			if (listener_known(dev, p) &&
			    ((struct dapl_tlisten *)p)->fd >= 0)
				tcp_accept_new(dev, p);
			break;
		case TAG_CONN:
			if (conn_known(dev, p)) {
				struct dapl_tconn *c = p;
				int r = c->reported ? 0 : tcp_conn_read(c);

				if (r < 0) {
					tcp_conn_unlink(dev, c);
					tcp_conn_free(c);
				} else if (r > 0) {
					/* its request is in: next_event
					 * reports it, nothing evicts it */
					tcp_ho_remove(dev, c);
				}
			}
			break;
		case TAG_EP:
			/* driven by tcp_progress_data, without the IA lock */
			stash_add(dev, p);
			break;
		}
	}
	if (kick)
		kick_waiting(dev);
	/* What the tick's drives queue, we hand out ourselves: the caller
	 * calls until -EAGAIN (transport.h), so it wakes nobody (the queue's
	 * eventfd written and read away by this one thread, and a consumer
	 * or the progress thread asleep on our epoll set woken for it). */
	quiet = !dev->self_pump;
	if (quiet)
		dapl_conn_events_quiet(&dev->connq, true);
	pthread_mutex_unlock(&dev->lock);

	if (ticked)
		tick(dev);

	pthread_mutex_lock(&dev->lock);
	if (quiet)
		dapl_conn_events_quiet(&dev->connq, false);
	i = next_event(dev, ev);
	dev->polled = i && n < 32;
	pthread_mutex_unlock(&dev->lock);
	return i ? 0 : -EAGAIN;
}

/* The endpoints cm_get_event noted, driven without the IA lock
 * (transport.h): ep_service waits for a lock a poster may hold, and reads
 * and places what arrived.  An endpoint freed meanwhile is no longer in
 * the device's list and is skipped. */
int tcp_progress_data(struct dapl_tdev *dev, bool will_drain)
{
	struct dapl_tep *ready[TCP_STASH_MAX];
	int n = 0, i, queued, res = 0;

	pthread_mutex_lock(&dev->lock);
	for (i = 0; i < dev->nstash; i++)
		if (ep_get(dev, dev->stash[i]))
			ready[n++] = dev->stash[i];
	dev->nstash = 0;
	if (n && will_drain)
		dapl_conn_events_quiet(&dev->connq, true);
	pthread_mutex_unlock(&dev->lock);
	if (!n)
		return 0;
	for (i = 0; i < n; i++)
		res |= ep_service(ready[i]);
	if (res & DAPL_TPD_PLACED)
		res &= ~DAPL_TPD_IDLE;
	pthread_mutex_lock(&dev->lock);
	if (will_drain)
		dapl_conn_events_quiet(&dev->connq, false);
	queued = dev->connq.head != NULL;
	pthread_mutex_unlock(&dev->lock);
	return res | (queued ? DAPL_TPD_EVENTS : 0);
}
