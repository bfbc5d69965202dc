/* dat_bench: plain kernel TCP sockets, the floor under any transport that
 * runs over them (libfabric tcp, libdat's own tcp provider).  The same
 * patterns as for DAT and raw libfabric, done the way a program that owns
 * the socket would do them:
 *
 *  - one TCP connection over 127.0.0.1 (or dat_bench -A's address),
 *    TCP_NODELAY, default buffers;
 *  - a Send of n bytes is one send() of those n bytes, no framing: both
 *    sides know the length (get_rx's expect), so a receive reads exactly
 *    that many bytes of the stream into the oldest posted slot;
 *  - busy-poll = recv/send with MSG_DONTWAIT in a loop, blocking = plain
 *    blocking recv/send;
 *  - a Send completes once the kernel has taken all of it: sockets say
 *    nothing about the peer, and TCP's flow control stands in for credits.
 *
 * There is no RDMA Write (post_write is NULL): the RDMA Write patterns
 * skip this stack.  Connection setup is socket, connect, a request and a
 * reply of cm_hdr + pdata bytes, close; the server accepts, answers and
 * closes on the client's EOF. */
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "bench.h"

#define SOCK_QUEUE 1024         /* sends posted and not yet taken by the kernel */
#define SOCK_CM_MAX 2048        /* cm_hdr + pdata */

struct sock_listener {
	int fd;
};

struct sock_conn {
	int fd;
	int lfd;                        /* server: the listener, for setup */
	uint16_t port;                  /* client: the server's port */
	size_t cm_hdr;
	void *buf;                      /* tx, rx and the receive slots */
	/* sends not yet all in the kernel, in order; all from c->tx */
	size_t pend[SOCK_QUEUE];
	unsigned pend_head, pend_n;
	size_t pend_off;                /* bytes of the head already sent */
	int done;                       /* completed, not yet reaped */
	/* posted receive slots, in order */
	int slot[BENCH_NRECV + BENCH_NSMALL];
	unsigned slot_head, slot_n;
	size_t rx_off;                  /* bytes of the head already read */
};

static struct sock_conn *sc_of(struct bench_conn *c)
{
	return c->priv;
}

__attribute__((noreturn))
static void sock_fail(const char *what)
{
	bench_die(BENCH_EXIT_FAIL, "sock: %s: %s", what, strerror(errno));
}

static void nodelay(int fd)
{
	int one = 1;

	if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		sock_fail("setsockopt(TCP_NODELAY)");
}

/* Where the socket stack listens and connects: 127.0.0.1 unless dat_bench
 * -A names another address of this host (an RDMA netdev's, in the guest). */
struct in_addr sock_bench_addr = { 0 };

static void loopback(struct sockaddr_in *sa, uint16_t port)
{
	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = sock_bench_addr.s_addr ? sock_bench_addr.s_addr
						     : htonl(INADDR_LOOPBACK);
	sa->sin_port = htons(port);
}

/* Blocking, all of it; the setup handshake only. */
static void write_full(int fd, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			sock_fail("send");
		p += n;
		len -= (size_t)n;
	}
}

static void read_full(int fd, void *buf, size_t len)
{
	uint8_t *p = buf;
	ssize_t n;

	while (len > 0) {
		n = recv(fd, p, len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			sock_fail("recv");
		if (n == 0)
			bench_die(BENCH_EXIT_FAIL, "sock: the peer closed the connection");
		p += n;
		len -= (size_t)n;
	}
}

struct sock_listener *sock_listen(uint16_t *port)
{
	struct sock_listener *l = calloc(1, sizeof(*l));
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);

	if (!l)
		bench_die(BENCH_EXIT_FAIL, "sock: out of memory");
	l->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (l->fd < 0)
		sock_fail("socket");
	loopback(&sa, 0);
	if (bind(l->fd, (struct sockaddr *)&sa, sizeof(sa)))
		sock_fail("bind");
	/* the setup pattern's client may run ahead of our accepts */
	if (listen(l->fd, 128))
		sock_fail("listen");
	if (getsockname(l->fd, (struct sockaddr *)&sa, &len))
		sock_fail("getsockname");
	*port = ntohs(sa.sin_port);
	return l;
}

static const struct bench_ops sock_ops;

static struct sock_conn *conn_init(struct bench_conn *c, size_t max_size,
				   size_t cm_hdr)
{
	struct sock_conn *s = calloc(1, sizeof(*s));
	size_t buflen;
	int i;

	if (!s)
		bench_die(BENCH_EXIT_FAIL, "sock: out of memory");
	s->fd = s->lfd = -1;
	s->cm_hdr = cm_hdr;
	s->buf = bench_alloc(max_size, &buflen);
	memset(c, 0, sizeof(*c));
	c->name = "sock";
	c->ops = &sock_ops;
	c->priv = s;
	bench_layout(c, s->buf, max_size);
	for (i = 0; i < BENCH_NRECV; i++)
		sock_ops.post_recv(c, i);
	return s;
}

void sock_accept(struct sock_listener *l, struct bench_conn *c,
		 size_t max_size, size_t cm_hdr)
{
	struct sock_conn *s = conn_init(c, max_size, cm_hdr);

	s->fd = accept(l->fd, NULL, NULL);
	if (s->fd < 0)
		sock_fail("accept");
	nodelay(s->fd);
	s->lfd = l->fd;
	free(l);
}

void sock_connect(uint16_t port, struct bench_conn *c, size_t max_size,
		  size_t cm_hdr)
{
	struct sock_conn *s = conn_init(c, max_size, cm_hdr);
	struct sockaddr_in sa;

	s->port = port;
	s->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (s->fd < 0)
		sock_fail("socket");
	nodelay(s->fd);
	loopback(&sa, port);
	if (connect(s->fd, (struct sockaddr *)&sa, sizeof(sa)))
		sock_fail("connect");
}

void sock_connect_more(struct bench_conn *base, struct bench_conn *c,
		       int client, size_t max_size)
{
	struct sock_conn *b = sc_of(base), *s;

	if (client) {
		sock_connect(b->port, c, max_size, b->cm_hdr);
		return;
	}
	s = conn_init(c, max_size, b->cm_hdr);
	s->fd = accept(b->lfd, NULL, NULL);
	if (s->fd < 0)
		sock_fail("accept");
	nodelay(s->fd);
}

/* ---- the primitives --------------------------------------------------------- */

/* Hands queued sends to the kernel.  may_block: the head may sleep until
 * the kernel took all of it; otherwise stop at the first EAGAIN. */
static void tx_progress(struct bench_conn *c, int may_block)
{
	struct sock_conn *s = sc_of(c);
	ssize_t n;

	while (s->pend_n > 0) {
		size_t len = s->pend[s->pend_head];

		n = send(s->fd, (const uint8_t *)c->tx + s->pend_off,
			 len - s->pend_off,
			 MSG_NOSIGNAL | (may_block ? 0 : MSG_DONTWAIT));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			sock_fail("send");
		}
		s->pend_off += (size_t)n;
		if (s->pend_off < len)
			continue;
		s->pend_off = 0;
		s->pend_head = (s->pend_head + 1) % SOCK_QUEUE;
		s->pend_n--;
		s->done++;
	}
}

static void sock_post_send(struct bench_conn *c, size_t len)
{
	struct sock_conn *s = sc_of(c);

	if (s->pend_n == SOCK_QUEUE)
		bench_die(BENCH_EXIT_FAIL, "sock: more than %d sends posted", SOCK_QUEUE);
	s->pend[(s->pend_head + s->pend_n) % SOCK_QUEUE] = len;
	s->pend_n++;
	c->tx_out++;
	/* one try now, as a post does: a small send leaves at once */
	tx_progress(c, 0);
}

static void sock_post_recv(struct bench_conn *c, int slot)
{
	struct sock_conn *s = sc_of(c);

	if (s->slot_n == BENCH_NRECV + BENCH_NSMALL)
		bench_die(BENCH_EXIT_FAIL, "sock: more than %d receives posted",
			  BENCH_NRECV + BENCH_NSMALL);
	s->slot[(s->slot_head + s->slot_n) % (BENCH_NRECV + BENCH_NSMALL)] = slot;
	s->slot_n++;
}

static int sock_reap_tx(struct bench_conn *c, int max, enum bench_wait w)
{
	struct sock_conn *s = sc_of(c);
	int n;

	if (max <= 0)
		return 0;
	/* BENCH_BLOCK sleeps only when nothing has completed yet */
	tx_progress(c, w == BENCH_BLOCK && s->done == 0);
	n = s->done < max ? s->done : max;
	s->done -= n;
	c->tx_out -= n;
	return n;
}

static int sock_get_rx(struct bench_conn *c, size_t expect, int *slot,
		       size_t *len, enum bench_wait w)
{
	struct sock_conn *s = sc_of(c);
	uint8_t *dst;
	size_t room;
	ssize_t n;

	if (s->slot_n == 0)
		bench_die(BENCH_EXIT_FAIL, "sock: a receive with no buffer posted");
	dst = bench_slot(c, s->slot[s->slot_head], &room);
	if (expect > room)
		bench_die(BENCH_EXIT_FAIL, "sock: a %zu-byte receive, the buffer holds %zu",
			  expect, room);
	/* our own message first: the peer answers only once it has all of
	 * it (a ping-pong of large messages) */
	if (s->pend_n > 0)
		tx_progress(c, w == BENCH_BLOCK);
	while (s->rx_off < expect) {
		n = recv(s->fd, dst + s->rx_off, expect - s->rx_off,
			 w == BENCH_POLL ? MSG_DONTWAIT : 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			sock_fail("recv");
		}
		if (n == 0)
			bench_die(BENCH_EXIT_FAIL, "sock: the peer closed the connection");
		s->rx_off += (size_t)n;
	}
	*slot = s->slot[s->slot_head];
	*len = expect;
	s->rx_off = 0;
	s->slot_head = (s->slot_head + 1) % (BENCH_NRECV + BENCH_NSMALL);
	s->slot_n--;
	return 1;
}

/* first: the client's first message, sent after the reply; the server
 * reads it before it waits for the EOF. */
static void sock_setup(struct bench_conn *c, int client, size_t pdata, size_t first)
{
	struct sock_conn *s = sc_of(c);
	uint8_t msg[SOCK_CM_MAX];
	size_t len = s->cm_hdr + pdata;
	struct sockaddr_in sa;
	ssize_t n;
	int fd;

	if (len > sizeof(msg) || first > sizeof(msg))
		bench_die(BENCH_EXIT_FAIL, "sock: a %zu-byte handshake (at most %zu)", len,
			  sizeof(msg));
	memset(msg, 0x5a, len);
	if (client) {
		fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			sock_fail("socket");
		nodelay(fd);
		loopback(&sa, s->port);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
			sock_fail("connect");
		write_full(fd, msg, len);
		read_full(fd, msg, len);
		if (first)
			write_full(fd, msg, first);
		/* close(), as a program would: a FIN, the server closes on it */
		close(fd);
		return;
	}
	fd = accept(s->lfd, NULL, NULL);
	if (fd < 0)
		sock_fail("accept");
	nodelay(fd);
	read_full(fd, msg, len);
	write_full(fd, msg, len);
	if (first)
		read_full(fd, msg, first);
	do
		n = recv(fd, msg, sizeof(msg), 0);
	while (n < 0 && errno == EINTR);
	if (n != 0)
		bench_die(BENCH_EXIT_FAIL, "sock: setup: %s after the reply",
			  n < 0 ? strerror(errno) : "data instead of EOF");
	close(fd);
}

static int sock_close(struct bench_conn *c, int client)
{
	struct sock_conn *s = sc_of(c);
	int bad = 0;

	(void)client;
	/* the last exchange completed: nothing is queued */
	if (s->pend_n > 0 || s->done > 0) {
		bench_warn("sock teardown: %u sends still queued", s->pend_n);
		bad = 1;
	}
	close(s->fd);
	if (s->lfd >= 0)
		close(s->lfd);
	free(s->buf);
	free(s);
	c->priv = NULL;
	return bad ? -1 : 0;
}

static const struct bench_ops sock_ops = {
	.post_send = sock_post_send,
	.post_write = NULL,             /* no RDMA Write on a socket */
	.post_recv = sock_post_recv,
	.reap_tx = sock_reap_tx,
	.get_rx = sock_get_rx,
	.setup = sock_setup,
	.close = sock_close,
	.stream = 1,
};
