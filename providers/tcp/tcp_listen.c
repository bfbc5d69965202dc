/* Listeners and the connections they accept, up to the consumer's
 * accept or reject: the listening sockets, accept4 (paused while the
 * process is out of fds or memory), and the half-open handshakes (the MPA
 * request not in yet, tcp_mpa.c reads it), bounded per device and per
 * source address.
 *
 * Everything here but tcp_listen, tcp_unlisten and tcp_conn_take runs
 * with dev->lock held, from the progress thread (tcp_dev.c's event pump
 * and tick). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* accept4 */
#endif
#include "config.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "tcp.h"


/* Half-open handshakes (accepted, the MPA request not in yet) held per
 * device, and per source address: past either bound a newcomer evicts the
 * oldest (its source's own when the source is over its share), so a peer
 * that opens sockets and says nothing cannot shut the listener for
 * everybody else. */
#define MAX_HALF_OPEN 256
#define MAX_HALF_OPEN_PER_SRC (MAX_HALF_OPEN / 8)
#define ACCEPT_RETRIES 8        /* accept4 errors of one connection in a row */

/* ---- listening ------------------------------------------------------------ */

int tcp_listen(struct dapl_tdev *dev, uint16_t *port, struct dapl_tlisten **out)
{
	struct sockaddr_storage a = dev->addr;
	socklen_t alen = sizeof(a);
	struct dapl_tlisten *l;
	int fd, one = 1, err;

	if (a.ss_family == AF_INET)
		((struct sockaddr_in *)&a)->sin_port = htons(*port);
	else
		((struct sockaddr_in6 *)&a)->sin6_port = htons(*port);
	fd = socket(a.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	/* SO_REUSEADDR: connections a listener accepted (or their
	 * TIME_WAIT) must not keep its port from a new listener; two
	 * listening sockets on one port still collide (EADDRINUSE) */
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	/* the sockets it accepts inherit these: one call, not one each */
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	dapl_sock_peer_timeout(fd, dev->peer_timeout_ms);
	if (bind(fd, (struct sockaddr *)&a, a.ss_family == AF_INET6 ?
		 sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in)) || listen(fd, 1024)) {
		err = -errno;
		close(fd);
		return err;
	}
	getsockname(fd, (struct sockaddr *)&a, &alen);
	l = calloc(1, sizeof(*l));
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	l->dev = dev;
	l->fd = fd;
	l->port = ntohs(a.ss_family == AF_INET ?
			((struct sockaddr_in *)&a)->sin_port :
			((struct sockaddr_in6 *)&a)->sin6_port);
	pthread_mutex_lock(&dev->lock);
	err = tcp_epoll_set(dev->epfd, EPOLL_CTL_ADD, fd, EPOLLIN, tcp_tagged(l, TAG_LISTEN));
	if (err) {
		pthread_mutex_unlock(&dev->lock);
		close(fd);
		free(l);
		return err;
	}
	l->next = dev->listeners;
	dev->listeners = l;
	pthread_mutex_unlock(&dev->lock);
	*port = l->port;
	*out = l;
	return 0;
}

/* dev->lock held. */
static void listener_unlink(struct dapl_tdev *dev, struct dapl_tlisten *l)
{
	struct dapl_tlisten **p;

	for (p = &dev->listeners; *p; p = &(*p)->next)
		if (*p == l) {
			*p = l->next;
			break;
		}
	free(l);
}

/* ---- half-open handshakes: the device's and each source's, oldest first -- */

/* The address a peer's handshakes count against: without the port, an
 * IPv4-mapped IPv6 address as the IPv4 one. */
static void src_addr(const struct sockaddr_storage *ss, uint8_t a[16],
		     uint8_t *len)
{
	const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;

	memset(a, 0, 16);
	if (ss->ss_family == AF_INET6 && !IN6_IS_ADDR_V4MAPPED(&s6->sin6_addr)) {
		memcpy(a, &s6->sin6_addr, 16);
		*len = 16;
	} else if (ss->ss_family == AF_INET6) {
		memcpy(a, &s6->sin6_addr.s6_addr[12], 4);
		*len = 4;
	} else {
		memcpy(a, &((const struct sockaddr_in *)ss)->sin_addr, 4);
		*len = 4;
	}
}

static unsigned src_bucket(const struct dapl_tdev *dev, const uint8_t a[16],
			   uint8_t len)
{
	uint32_t h = dev->src_key ^ len;
	unsigned i;

	/* keyed, so chains stay short; at worst one holds every source of
	 * a half-open conn, MAX_HALF_OPEN */
	for (i = 0; i < len; i++) {
		h = (h ^ a[i]) * 0x01000193u;
		h ^= h >> 15;
	}
	h ^= dev->src_key >> 7;
	h *= 0x2c1b3c6du;
	h ^= h >> 16;
	return h % TCP_SRC_BUCKETS;
}

/* dev->lock held: the record of source a, NULL if it has no half-open
 * conn; with make, one is made (NULL: out of memory). */
static struct tcp_src *src_find(struct dapl_tdev *dev, const uint8_t a[16],
				uint8_t len, bool make)
{
	unsigned b = src_bucket(dev, a, len);
	struct tcp_src *s;

	for (s = dev->srcs[b]; s; s = s->next)
		if (s->len == len && !memcmp(s->addr, a, len))
			return s;
	if (!make || !(s = calloc(1, sizeof(*s))))
		return NULL;
	memcpy(s->addr, a, 16);
	s->len = len;
	s->next = dev->srcs[b];
	dev->srcs[b] = s;
	return s;
}

/* dev->lock held: c, just accepted, waits for its request (s: its source). */
static void ho_add(struct dapl_tdev *dev, struct dapl_tconn *c,
		   struct tcp_src *s)
{
	c->half_open = true;
	c->src = s;
	c->ho_prev = dev->ho_newest;
	c->ho_next = NULL;
	if (dev->ho_newest)
		dev->ho_newest->ho_next = c;
	else
		dev->ho_oldest = c;
	dev->ho_newest = c;
	dev->half_open++;
	c->src_prev = s->newest;
	c->src_next = NULL;
	if (s->newest)
		s->newest->src_next = c;
	else
		s->oldest = c;
	s->newest = c;
	s->count++;
}

/* dev->lock held: c is half-open no more (its request is in, or it goes). */
void tcp_ho_remove(struct dapl_tdev *dev, struct dapl_tconn *c)
{
	struct tcp_src *s = c->src, **p;

	if (!c->half_open)
		return;
	c->half_open = false;
	c->src = NULL;
	if (c->ho_prev)
		c->ho_prev->ho_next = c->ho_next;
	else
		dev->ho_oldest = c->ho_next;
	if (c->ho_next)
		c->ho_next->ho_prev = c->ho_prev;
	else
		dev->ho_newest = c->ho_prev;
	dev->half_open--;
	if (c->src_prev)
		c->src_prev->src_next = c->src_next;
	else
		s->oldest = c->src_next;
	if (c->src_next)
		c->src_next->src_prev = c->src_prev;
	else
		s->newest = c->src_prev;
	c->ho_prev = c->ho_next = c->src_prev = c->src_next = NULL;
	if (--s->count)
		return;
	for (p = &dev->srcs[src_bucket(dev, s->addr, s->len)]; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	free(s);
}

/* dev->lock held: a conn leaves the list (accepted, rejected, dropped). */
void tcp_conn_unlink(struct dapl_tdev *dev, struct dapl_tconn *c)
{
	struct dapl_tconn **p;

	tcp_ho_remove(dev, c);

	for (p = &dev->conns; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	if (c->reported && c->listener) {
		c->listener->unanswered--;
		if (c->listener->dead && !c->listener->unanswered)
			listener_unlink(dev, c->listener);
	}
	c->listener = NULL;
}

void tcp_unlisten(struct dapl_tlisten *l)
{
	struct dapl_tdev *dev = l->dev;
	struct dapl_tconn *c, *next;

	pthread_mutex_lock(&dev->lock);
	/* later connects are refused by the kernel: out of the set and
	 * shut down first, or a poller's reference (tcp_ep_drop_socket)
	 * could keep it listening after the close */
	(void)epoll_ctl(dev->epfd, EPOLL_CTL_DEL, l->fd, NULL);
	(void)shutdown(l->fd, SHUT_RDWR);
	close(l->fd);
	l->fd = -1;
	l->dead = true;
	l->paused = false;
	/* requests still in their handshake were never reported: drop them */
	for (c = dev->conns; c; c = next) {
		next = c->next;
		if (c->listener == l && !c->reported) {
			tcp_conn_unlink(dev, c);
			tcp_conn_free(c);
		}
	}
	if (!l->unanswered)
		listener_unlink(dev, l);
	pthread_mutex_unlock(&dev->lock);
}

/* Detaches conn for accept/reject; false if it is not (or no more) ours. */
bool tcp_conn_take(struct dapl_tdev *dev, struct dapl_tconn *conn)
{
	struct dapl_tconn *c;

	pthread_mutex_lock(&dev->lock);
	for (c = dev->conns; c && c != conn; c = c->next)
		;
	if (c)
		tcp_conn_unlink(dev, c);
	pthread_mutex_unlock(&dev->lock);
	return c != NULL;
}

/* dev->lock held: accept4 failed for want of fds (EMFILE, ENFILE) or
 * memory (ENOBUFS, ENOMEM), or for a reason we do not know.  The listener,
 * level-triggered, would wake the progress thread for nothing until that
 * passes: it leaves the epoll set and tick() tries it again (one accept4 a
 * tick).  Connections meanwhile wait in the kernel's backlog rather than
 * being closed: the condition usually passes before a connect times out. */
static void listener_pause(struct dapl_tdev *dev, struct dapl_tlisten *l,
			   int err)
{
	static atomic_bool said;

	if (!l->paused) {
		(void)epoll_ctl(dev->epfd, EPOLL_CTL_DEL, l->fd, NULL);
		l->paused = true;
	}
	tcp_timer_set(dev, true);
	if (!atomic_exchange(&said, true))
		dapl_dbg(1, "%s: cannot accept on port %u (%s): new connections "
			 "wait in the listen backlog, tried again every %d ms "
			 "(said once per process)", dev->name, l->port,
			 strerror(err), TCP_TICK_NS / 1000000);
}

/* dev->lock held: accept4 works again (or has nothing to take). */
static void listener_resume(struct dapl_tdev *dev, struct dapl_tlisten *l)
{
	/* failing, it stays paused: the next tick tries again */
	if (l->paused && !tcp_epoll_set(dev->epfd, EPOLL_CTL_ADD, l->fd, EPOLLIN,
				    tcp_tagged(l, TAG_LISTEN)))
		l->paused = false;
}

/* dev->lock held: a half-open conn goes to make room for a newcomer from
 * addr: its source's oldest when that source holds its share already,
 * else the device's oldest when the device holds MAX_HALF_OPEN.  (A conn
 * reported to the consumer is never half-open.) */
static void ho_make_room(struct dapl_tdev *dev, const uint8_t a[16],
			 uint8_t len)
{
	struct tcp_src *s = src_find(dev, a, len, false);
	struct dapl_tconn *victim = NULL;

	if (s && s->count >= MAX_HALF_OPEN_PER_SRC)
		victim = s->oldest;
	else if (dev->half_open >= MAX_HALF_OPEN)
		victim = dev->ho_oldest;
	if (victim) {
		tcp_conn_unlink(dev, victim);
		tcp_conn_free(victim);
	}
}

/* dev->lock held. */
void tcp_accept_new(struct dapl_tdev *dev, struct dapl_tlisten *l)
{
	struct dapl_tconn *c;
	struct tcp_src *s;
	struct sockaddr_storage peer;
	socklen_t plen;
	uint8_t a[16], alen;
	int fd, r, errs = 0;

	for (;;) {
		plen = sizeof(peer);
		atomic_fetch_add(&dev->accept_calls, 1);
		fd = accept4(l->fd, (struct sockaddr *)&peer, &plen,
			     SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			switch (errno) {
			case EAGAIN:
				listener_resume(dev, l);
				return;
			case EINTR:
			case ECONNABORTED:
			/* a connection's own error, passed on by accept4
			 * (accept(2)): the next one may be fine */
			case EPROTO: case EPERM: case ENETDOWN: case ENOPROTOOPT:
			case EHOSTDOWN: case ENONET: case EHOSTUNREACH:
			case EOPNOTSUPP: case ENETUNREACH:
				if (++errs < ACCEPT_RETRIES)
					continue;
				return;   /* level-triggered: back next pass */
			default:  /* EMFILE, ENFILE, ENOBUFS, ENOMEM, ... */
				listener_pause(dev, l, errno);
				return;
			}
		}
		listener_resume(dev, l);
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		/* TCP_NODELAY and the peer timeout it has from the listener */
		c->fd = fd;
		c->dev = dev;
		c->listener = l;
		c->peer = peer;
		c->local = dev->addr;
		if (c->local.ss_family == AF_INET)
			((struct sockaddr_in *)&c->local)->sin_port = htons(l->port);
		else
			((struct sockaddr_in6 *)&c->local)->sin6_port = htons(l->port);
		c->deadline_ms = tcp_now_ms() + dev->handshake_ms;
		/* the request has often come with the connection: read it
		 * now; only a request still to come makes it half-open, with
		 * a place in the epoll set, the bounds and the timer */
		r = tcp_conn_read(c);
		if (r < 0) {
			tcp_conn_free(c);
			continue;
		}
		if (r == 0) {
			src_addr(&peer, a, &alen);
			ho_make_room(dev, a, alen);
			if (tcp_epoll_set(dev->epfd, EPOLL_CTL_ADD, fd,
				      EPOLLIN | EPOLLRDHUP, tcp_tagged(c, TAG_CONN))) {
				tcp_conn_free(c);
				continue;
			}
			c->watched = true;
			if (!(s = src_find(dev, a, alen, true))) {
				tcp_conn_free(c);
				continue;
			}
			ho_add(dev, c, s);
			tcp_timer_set(dev, true);
		}
		c->next = dev->conns;
		dev->conns = c;
		/* one per pass: the listener, level-triggered, brings the
		 * next, and the common case saves an accept4 that fails */
		return;
	}
}
