/* tcp_flood: what a flood of zero-length Sends from a raw iWARP peer costs
 * the target (the tcp transport, providers/tcp), in CPU time, and whether
 * another client is served meanwhile.
 *
 *   tcp_flood held N       the peer sends N Sends, no receive is posted:
 *                          ends when the connection ends (the count bound
 *                          on held Sends) or all N are held
 *   tcp_flood consumed N   the peer keeps at most W Sends unplaced (the
 *                          libdat placement acks, as a libdat peer with a
 *                          send queue W deep); the target lets W pile up
 *                          held, then posts a receive per completion, so
 *                          every Send after the first W is held behind W
 *                          others and then matched
 *
 * The target (device, listener, progress thread, consumer) is this
 * process; the peer is a child process, so getrusage(RUSAGE_SELF) is the
 * target's CPU alone.  While the flood runs, a second client (a tcp
 * endpoint of the same device) connects and exchanges Sends; its connect
 * and exchange times are printed.  Nothing here is a test: it prints
 * figures (bench/README.md).  TCP_FLOOD_WINDOW sets W (default 8192). */
#define _GNU_SOURCE
#include "config.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tcp.h"

#define WAIT_MS 60000
#define RQ_DEPTH 1024
#define BATCH 1024          /* Sends the peer hands to one send() */
#define XCHG 200            /* Sends each way of the second client */

static const struct udapl_transport_ops *T = &dapl_tcp_ops;
static struct sockaddr_in lo;

#define DIE(...) do { fprintf(stderr, "tcp_flood: " __VA_ARGS__); \
		      fputc('\n', stderr); exit(2); } while (0)

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
	       (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* ---- the progress thread, and the events it collects ---------------------- */

static struct {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thr;
	int stop_fd;
	struct dapl_tcm_event evs[64];
	int nev;
} h = { .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER };

static void *pump(void *arg)
{
	struct pollfd p[2];
	int fd = -1;

	(void)arg;
	if (T->progress_fds(h.dev, &fd, 1) != 1)
		return NULL;
	p[0].fd = fd;
	p[0].events = POLLIN;
	p[1].fd = h.stop_fd;
	p[1].events = POLLIN;
	for (;;) {
		struct dapl_tcm_event ev;
		bool again;

		if (poll(p, 2, -1) < 0)
			continue;
		if (p[1].revents)
			break;
		pthread_mutex_lock(&h.lock);
		do {
			while (T->cm_get_event(h.dev, &ev) == 0) {
				if (h.nev < 64) {
					ev.pdata = NULL;
					ev.pdata_len = 0;
					h.evs[h.nev++] = ev;
				}
			}
			pthread_cond_broadcast(&h.cond);
			pthread_mutex_unlock(&h.lock);
			/* as the core does (transport.h): the drives, unlocked */
			again = T->progress_data(h.dev, true) > 0;
			pthread_mutex_lock(&h.lock);
		} while (again);
		pthread_mutex_unlock(&h.lock);
	}
	return NULL;
}

/* The next event about obj (an ep or a listener), or type -1 after ms. */
static struct dapl_tcm_event take(const void *obj, int ms)
{
	struct dapl_tcm_event ev = { .type = -1 };
	double end = now_s() + ms / 1e3;
	int i;

	pthread_mutex_lock(&h.lock);
	for (;;) {
		struct timespec ts;
		double t;

		for (i = 0; i < h.nev; i++)
			if ((const void *)h.evs[i].ep == obj ||
			    (const void *)h.evs[i].listener == obj) {
				ev = h.evs[i];
				memmove(&h.evs[i], &h.evs[i + 1],
					(size_t)(h.nev - i - 1) * sizeof(ev));
				h.nev--;
				pthread_mutex_unlock(&h.lock);
				return ev;
			}
		if (now_s() >= end)
			break;
		clock_gettime(CLOCK_REALTIME, &ts);
		t = (double)ts.tv_nsec / 1e9 + 0.05;
		ts.tv_sec += (time_t)t;
		ts.tv_nsec = (long)((t - (double)(time_t)t) * 1e9);
		pthread_cond_timedwait(&h.cond, &h.lock, &ts);
	}
	pthread_mutex_unlock(&h.lock);
	return ev;
}

/* ---- endpoints ------------------------------------------------------------ */

struct side {
	struct dapl_tpd *pd;
	struct dapl_tcq *cq;
	struct dapl_tep *ep;
	uint8_t *buf;
	struct dapl_tmr *mr;
	uint32_t lkey, rkey;
};

static void side_make(struct side *s, uint32_t depth)
{
	struct dapl_tep_attr a = {
		.max_send_wr = depth, .max_recv_wr = depth,
		.max_send_sge = 1, .max_recv_sge = 1, .owner = 1,
	};

	if (T->pd_alloc(h.dev, &s->pd) || T->cq_create(h.dev, 2 * depth, &s->cq))
		DIE("pd/cq");
	pthread_mutex_lock(&h.lock);
	if (T->ep_create(s->pd, s->cq, s->cq, NULL, &a, &s->ep))
		DIE("ep_create");
	pthread_mutex_unlock(&h.lock);
	s->buf = calloc(1, 64 * (size_t)depth);
	if (!s->buf || T->mr_reg(s->pd, s->buf, 64 * (size_t)depth,
				 DAPL_TACCESS_LOCAL_WRITE, &s->mr, &s->lkey,
				 &s->rkey))
		DIE("mr_reg");
}

static int post_recv(struct side *s, uint32_t slot, uint64_t ctx)
{
	struct dapl_tsge g = {
		.addr = (uint64_t)(uintptr_t)(s->buf + 64 * (size_t)slot),
		.length = 64, .lkey = s->lkey, .mr = s->mr,
	};

	return T->post_recv(s->ep, &g, 1, ctx);
}

/* One completion within ms, or -1. */
static int wait_wc(struct dapl_tcq *cq, struct dapl_twc *wc, int ms)
{
	double end = now_s() + ms / 1e3;
	struct pollfd p = { .fd = T->cq_wait_fd(cq), .events = POLLIN };

	for (;;) {
		if (T->cq_poll(cq, wc, 1) == 1)
			return 0;
		T->cq_arm(cq, 0);
		if (T->cq_poll(cq, wc, 1) == 1)
			return 0;
		if (now_s() >= end)
			return -1;
		poll(&p, 1, 50);
		T->cq_ack(cq);
	}
}

/* ---- the second client ------------------------------------------------------ */

static struct dapl_tlisten *lst;
static uint16_t port;
static struct dapl_tconn *second_conn;  /* its request, for main to accept */
static pthread_mutex_t second_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t second_cond = PTHREAD_COND_INITIALIZER;
static struct side acc;                 /* main's end of it */
static bool acc_ready;
static double second_connect_s = -1, second_xchg_s = -1;
static bool second_ok;
static atomic_bool second_done;

/* A well-behaved client: connects, then XCHG Sends each way, one at a
 * time (the accepting side echoes them). */
static void *second_client_run(void);

static void *second_client(void *arg)
{
	(void)arg;
	second_client_run();
	atomic_store(&second_done, true);
	return NULL;
}

static void *second_client_run(void)
{
	struct side c;
	struct dapl_tcm_event ev;
	struct dapl_twc wc;
	double t0 = now_s();
	int i;

	side_make(&c, 4);
	pthread_mutex_lock(&h.lock);
	if (T->connect(c.ep, (const struct sockaddr *)&lo, port, NULL, 0, 4, 4))
		DIE("connect");
	pthread_mutex_unlock(&h.lock);
	ev = take(c.ep, WAIT_MS);
	if ((int)ev.type != DAPL_TCM_ESTABLISHED) {
		fprintf(stderr, "tcp_flood: second client: event %d\n", ev.type);
		return NULL;
	}
	second_connect_s = now_s() - t0;
	pthread_mutex_lock(&second_lock);
	while (!acc_ready)
		pthread_cond_wait(&second_cond, &second_lock);
	pthread_mutex_unlock(&second_lock);
	t0 = now_s();
	for (i = 0; i < XCHG; i++) {
		struct dapl_tsge g = {
			.addr = (uint64_t)(uintptr_t)c.buf, .length = 8,
			.lkey = c.lkey, .mr = c.mr,
		};
		bool sent = false, got = false;

		if (post_recv(&c, 1, 0x2000 + (uint64_t)i))
			DIE("second: post_recv");
		memcpy(c.buf, &i, sizeof(i));
		if (T->post_send(c.ep, &g, 1, 0x1000 + (uint64_t)i,
				 DAPL_TPOST_SIGNALED))
			DIE("second: post_send");
		while (!sent || !got) {
			if (wait_wc(c.cq, &wc, WAIT_MS) || wc.status != DAPL_TWC_SUCCESS)
				return NULL;
			if (wc.opcode == DAPL_TWC_SEND)
				sent = true;
			else if (wc.byte_len == 8 &&
				 memcmp(c.buf + 64, &i, sizeof(i)) == 0)
				got = true;
			else
				return NULL;
		}
	}
	second_xchg_s = now_s() - t0;
	second_ok = true;
	return NULL;
}

/* The accepting side of the second client: echoes what comes. */
static void *second_server(void *arg)
{
	struct dapl_twc wc;
	int i;

	(void)arg;
	for (i = 0; i < XCHG; i++) {
		struct dapl_tsge g;

		if (wait_wc(acc.cq, &wc, WAIT_MS))
			return NULL;
		if (wc.opcode != DAPL_TWC_RECV || wc.status != DAPL_TWC_SUCCESS)
			return NULL;
		/* (the client sends the next only after this one's echo
		 * came: slot 2 is free again) */
		memcpy(acc.buf + 128, acc.buf + 64 * (size_t)(i & 1), 8);
		g.addr = (uint64_t)(uintptr_t)(acc.buf + 128);
		g.length = wc.byte_len;
		g.lkey = acc.lkey;
		g.mr = acc.mr;
		if (post_recv(&acc, (uint32_t)(i & 1), 0x3000 + (uint64_t)i) ||
		    T->post_send(acc.ep, &g, 1, 0x4000, 0))
			return NULL;
	}
	return NULL;
}

/* ---- the raw peer (child process) ---------------------------------------------- */

static void send_all(int fd, const uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = send(fd, b, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);     /* the target ended the connection */
		b += n;
		len -= (size_t)n;
	}
}

static void read_exact(int fd, uint8_t *b, size_t len)
{
	while (len) {
		ssize_t n = recv(fd, b, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		b += n;
		len -= (size_t)n;
	}
}

/* Reads one FPDU of the target's; returns the placed count in its CRC
 * field (the libdat ack extension). */
static uint32_t read_ack(int fd)
{
	static uint8_t f[2 + 65535 + 8];
	uint32_t ul;

	read_exact(fd, f, 2);
	ul = get16(f);
	read_exact(fd, f + 2, ul + fpdu_pad(ul) + 4);
	return get32(f + 2 + ul + fpdu_pad(ul));
}

static void peer(uint64_t n, bool windowed, uint32_t window)
{
	uint8_t req[MPA_HDR_LEN + MPA_V2_LEN + TCP_EXT_LEN], rep[MPA_HDR_LEN + MPA_PD_MAX];
	static uint8_t out[BATCH * 32];
	struct sockaddr_in a = lo;
	uint32_t bits, pd_len, placed = 0, msn = 1;
	uint64_t sent = 0;
	size_t len;
	int fd, one = 1;

	a.sin_port = htons(port);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		_exit(1);
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	mpa_put_hdr(req, true, MPA_FLAG_ENHANCED | 2, MPA_V2_LEN + TCP_EXT_LEN);
	put16(req + MPA_HDR_LEN, 4 | MPA_V2_P2P);
	put16(req + MPA_HDR_LEN + 2, 4 | MPA_V2_WRITE_RTR);
	put32(req + MPA_HDR_LEN + 4, TCP_EXT_MAGIC);
	put16(req + MPA_HDR_LEN + 8, TCP_EXT_VERSION);
	put16(req + MPA_HDR_LEN + 10, TCP_EXT_F_ACKS);
	send_all(fd, req, sizeof(req));
	read_exact(fd, rep, MPA_HDR_LEN);
	if (!mpa_get_hdr(rep, false, &bits, &pd_len) || pd_len > MPA_PD_MAX)
		_exit(1);
	read_exact(fd, rep + MPA_HDR_LEN, pd_len);
	/* the RTR: a zero-length Write */
	len = fpdu_put_tagged(out, DDP_TAGGED_LEN, true, RDMAP_WRITE, 0, 0);
	put32(out + len, 0);
	send_all(fd, out, len + 4);
	while (sent < n) {
		uint64_t k = n - sent, i;
		uint8_t *p = out;

		if (k > BATCH)
			k = BATCH;
		if (windowed) {
			uint32_t room = window - (uint32_t)(sent - placed);

			while (room == 0) {
				uint32_t c = read_ack(fd);

				if ((int32_t)(c - placed) > 0)
					placed = c;
				room = window - (uint32_t)(sent - placed);
			}
			if (k > room)
				k = room;
		}
		for (i = 0; i < k; i++) {
			size_t hl = fpdu_put_untagged(p, DDP_UNTAGGED_LEN, true,
						      RDMAP_SEND, DDP_QN_SEND, msn++, 0);

			put32(p + hl, 0);
			p += hl + 4;
		}
		send_all(fd, out, (size_t)(p - out));
		sent += k;
	}
	/* wait for the target to close (it ends the test) */
	for (;;)
		(void)read_ack(fd);
}

/* Accepts the second client's request, and starts the echo once its
 * connection is up. */
static void serve_second(pthread_t *srv)
{
	int i;

	pthread_mutex_lock(&h.lock);
	for (i = 0; i < h.nev; i++)
		if (h.evs[i].listener == lst)
			break;
	if (i < h.nev && !second_conn) {
		second_conn = h.evs[i].conn;
		memmove(&h.evs[i], &h.evs[i + 1],
			(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
		h.nev--;
		for (i = 0; i < 2; i++)
			post_recv(&acc, (uint32_t)i, 0x3000);
		if (T->accept(second_conn, acc.ep, NULL, 0, 4, 4))
			DIE("accept 2");
	}
	for (i = 0; i < h.nev; i++)
		if (h.evs[i].ep == acc.ep && !acc_ready &&
		    h.evs[i].type == DAPL_TCM_ESTABLISHED) {
			memmove(&h.evs[i], &h.evs[i + 1],
				(size_t)(h.nev - i - 1) * sizeof(h.evs[0]));
			h.nev--;
			pthread_mutex_lock(&second_lock);
			acc_ready = true;
			pthread_cond_broadcast(&second_cond);
			pthread_mutex_unlock(&second_lock);
			if (pthread_create(srv, NULL, second_server, NULL))
				DIE("thread");
		}
	pthread_mutex_unlock(&h.lock);
}

/* ---- main --------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	struct side s;
	struct dapl_tcm_event ev;
	struct dapl_twc wc;
	pthread_t cli, srv;
	bool consumed;
	uint64_t n, got = 0;
	uint32_t window = 8192, seen;
	double cpu0, t0, cpu, wall;
	char why[256];
	pid_t child;
	int status, i, ended = -1;
	bool posted = false;
	const char *w = getenv("TCP_FLOOD_WINDOW");

	if (argc != 3 || (strcmp(argv[1], "held") && strcmp(argv[1], "consumed"))) {
		fprintf(stderr, "usage: tcp_flood held|consumed N\n");
		return 2;
	}
	consumed = strcmp(argv[1], "consumed") == 0;
	n = strtoull(argv[2], NULL, 10);
	if (w)
		window = (uint32_t)strtoul(w, NULL, 10);
	if (!n || !window || (consumed && n < window))
		DIE("N >= W > 0, please");
	lo.sin_family = AF_INET;
	lo.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	signal(SIGPIPE, SIG_IGN);
	if (T->dev_open("127.0.0.1 0", &h.dev, why, sizeof(why)))
		DIE("dev_open: %s", why);
	h.stop_fd = eventfd(0, EFD_CLOEXEC);
	if (h.stop_fd < 0 || pthread_create(&h.thr, NULL, pump, NULL))
		DIE("pump");
	port = 0;
	pthread_mutex_lock(&h.lock);
	if (T->listen(h.dev, &port, &lst))
		DIE("listen");
	pthread_mutex_unlock(&h.lock);
	side_make(&s, RQ_DEPTH);
	side_make(&acc, 4);

	child = fork();
	if (child < 0)
		DIE("fork");
	if (child == 0)
		peer(n, consumed, window);      /* never returns */
	ev = take(lst, WAIT_MS);
	if ((int)ev.type != DAPL_TCM_CONNECT_REQUEST)
		DIE("no request from the peer");
	pthread_mutex_lock(&h.lock);
	if (T->accept(ev.conn, s.ep, NULL, 0, 4, 4))
		DIE("accept");
	pthread_mutex_unlock(&h.lock);
	ev = take(s.ep, WAIT_MS);
	if ((int)ev.type != DAPL_TCM_ESTABLISHED)
		DIE("peer: event %d", ev.type);
	cpu0 = cpu_s();
	t0 = now_s();
	if (pthread_create(&cli, NULL, second_client, NULL))
		DIE("thread");

	/* the second client's request is answered as it comes (the main
	 * loop below looks for it between completions) */
	for (;;) {
		serve_second(&srv);
		pthread_mutex_lock(&h.lock);
		for (i = 0; i < h.nev; i++)
			if (h.evs[i].ep == s.ep)
				ended = (int)h.evs[i].type;
		pthread_mutex_unlock(&h.lock);
		if (ended >= 0)
			break;
		pthread_mutex_lock(&s.ep->lock);
		seen = s.ep->rx_seq;
		pthread_mutex_unlock(&s.ep->lock);
		if (!consumed) {
			if (seen >= n)
				break;       /* all held */
			T->cq_poll(s.cq, &wc, 1);    /* (drives it) */
			continue;
		}
		if (!posted && seen >= window) {
			/* W held: from now on a receive per completion */
			posted = true;
			for (i = 0; i < RQ_DEPTH; i++)
				if (post_recv(&s, (uint32_t)i, (uint64_t)i))
					DIE("post_recv");
		}
		if (!posted) {
			T->cq_poll(s.cq, &wc, 1);
			continue;
		}
		if (wait_wc(s.cq, &wc, WAIT_MS))
			DIE("no completion after %llu", (unsigned long long)got);
		if (wc.status != DAPL_TWC_SUCCESS || wc.byte_len != 0)
			DIE("completion status %d len %u", wc.status, wc.byte_len);
		if (++got == n)
			break;
		if (got + RQ_DEPTH <= n &&
		    post_recv(&s, (uint32_t)wc.context, wc.context))
			DIE("repost");
	}
	cpu = cpu_s() - cpu0;
	wall = now_s() - t0;
	pthread_mutex_lock(&s.ep->lock);
	seen = s.ep->rx_seq;
	pthread_mutex_unlock(&s.ep->lock);
	printf("%s %llu: target CPU %.3f s, wall %.3f s; Sends seen %u, "
	       "received %llu, connection %s\n", argv[1], (unsigned long long)n,
	       cpu, wall, seen, (unsigned long long)got,
	       ended == (int)DAPL_TCM_CONN_ERROR ? "ended (CONN_ERROR)" :
	       ended >= 0 ? "ended" : "open");
	/* (the client may still be connecting: its request is answered) */
	t0 = now_s();
	while (!second_done && now_s() < t0 + WAIT_MS / 1e3) {
		serve_second(&srv);
		poll(NULL, 0, 1);
	}
	pthread_join(cli, NULL);
	if (acc_ready)
		pthread_join(srv, NULL);
	printf("second client: %s, connect %.3f s, %d Sends each way %.3f s\n",
	       second_ok ? "ok" : "FAILED", second_connect_s, XCHG, second_xchg_s);
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	fflush(stdout);
	/* (no teardown: the process ends) */
	_exit(second_ok ? 0 : 1);
}
