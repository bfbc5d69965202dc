/* Helpers shared by the connection and object tests; see conn_harness.h. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "conn_harness.h"

/* ---- environment ---------------------------------------------------- */

int hx_env_ok(void)
{
	const char *conf = getenv("DAT_TEST_CONF");

	return conf && *conf;
}

void hx_setup(void)
{
	const char *conf = getenv("DAT_TEST_CONF");

	ck_assert_msg(conf && *conf, "DAT_TEST_CONF is not set");
	ck_assert_int_eq(setenv("DAT_OVERRIDE", conf, 1), 0);
}

/* Set in a peer process: failures go to the test process over the pipe. */
static struct hx_peer *self_peer;

const char *hx_ia_name(void)
{
	const char *ia = getenv("DAT_TEST_IA");
	const char *srv = getenv("DAT_TEST_SERVER_IA");

	/* two hosts: the peer process (the server) opens its own IA */
	if (self_peer && srv && *srv)
		return srv;
	return ia && *ia ? ia : "ofi-tcp";
}

/* The IA's name is kind, or kind and a host's one-letter suffix (two
 * hosts: "tcp-a", "ofi-tcp-b"). */
static int ia_kind_is(const char *kind)
{
	const char *name = hx_ia_name();
	size_t n = strlen(kind);

	if (strncmp(name, kind, n) != 0)
		return 0;
	return name[n] == '\0' ||
	       (name[n] == '-' && name[n + 1] != '\0' && name[n + 2] == '\0');
}

int hx_is_ofi_tcp(void)
{
	return ia_kind_is("ofi-tcp");
}

int hx_is_native_tcp(void)
{
	return ia_kind_is("tcp");
}

int hx_local_completion(void)
{
	const char *v = getenv("DAT_TEST_LOCAL_COMPLETION");

	return v && !strcmp(v, "1");
}

/* ---- failures ------------------------------------------------------- */

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

void hx_fail(const char *file, int line, const char *fmt, ...)
{
	char text[HX_MSG_DATA];
	int n;
	va_list ap;

	n = snprintf(text, sizeof(text), "%s:%d: ", file, line);
	if (n < 0 || n >= (int)sizeof(text))
		n = 0;
	va_start(ap, fmt);
	vsnprintf(text + n, sizeof(text) - (size_t)n, fmt, ap);
	va_end(ap);

	if (self_peer) {
		struct hx_msg m;

		memset(&m, 0, sizeof(m));
		m.tag = HX_MSG_FAIL;
		m.len = (int32_t)strlen(text) + 1;
		memcpy(m.data, text, (size_t)m.len);
		fprintf(stderr, "%s (pid %d): %s\n", self_peer->name, (int)getpid(), text);
		write_all(self_peer->wfd, &m, sizeof(m));
		_exit(1);
	}
	ck_abort_msg("%s", text);
	abort(); /* not reached: Check runs every test in its own process */
}

const char *hx_rc_str(DAT_RETURN rc)
{
	static __thread char bufs[4][160];
	static __thread unsigned next;
	const char *major = NULL, *minor = NULL;
	char *b = bufs[next++ % 4];

	if (dat_strerror(rc, &major, &minor) != DAT_SUCCESS)
		major = minor = NULL;
	snprintf(b, sizeof(bufs[0]), "0x%08x (%s%s%s)", (unsigned)rc,
		 major ? major : "?", minor && *minor ? " " : "",
		 minor ? minor : "");
	return b;
}

const char *hx_event_str(DAT_EVENT_NUMBER ev)
{
	static __thread char buf[4][32];
	static __thread unsigned next;
	char *b;

	switch (ev) {
	case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
	case DAT_RMR_BIND_COMPLETION_EVENT: return "RMR_BIND_COMPLETION";
	case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	case DAT_ASYNC_ERROR_EVD_OVERFLOW: return "ASYNC_ERROR_EVD_OVERFLOW";
	case DAT_ASYNC_ERROR_IA_CATASTROPHIC: return "ASYNC_ERROR_IA_CATASTROPHIC";
	case DAT_ASYNC_ERROR_EP_BROKEN: return "ASYNC_ERROR_EP_BROKEN";
	case DAT_ASYNC_ERROR_TIMED_OUT: return "ASYNC_ERROR_TIMED_OUT";
	case DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR: return "ASYNC_ERROR_PROVIDER_INTERNAL_ERROR";
	case DAT_SOFTWARE_EVENT: return "SOFTWARE";
#if DAT_GEN == 2
	case DAT_HA_DOWN_TO_1: return "HA_DOWN_TO_1";
	case DAT_HA_UP_TO_MULTI_PATH: return "HA_UP_TO_MULTI_PATH";
	case DAT_EXTENSION_EVENT: return "EXTENSION";
	case DAT_IB_EXTENSION_RANGE_BASE: return "IB_EXTENSION_RANGE_BASE";
	case DAT_IW_EXTENSION_RANGE_BASE: return "IW_EXTENSION_RANGE_BASE";
#endif
	}
	b = buf[next++ % 4];
	snprintf(b, sizeof(buf[0]), "event 0x%x", (unsigned)ev);
	return b;
}

const char *hx_state_str(DAT_EP_STATE st)
{
	static __thread char buf[4][32];
	static __thread unsigned next;
	char *b;

	switch (st) {
	case DAT_EP_STATE_UNCONNECTED: return "UNCONNECTED";
	case DAT_EP_STATE_UNCONFIGURED_UNCONNECTED: return "UNCONFIGURED_UNCONNECTED";
	case DAT_EP_STATE_RESERVED: return "RESERVED";
	case DAT_EP_STATE_UNCONFIGURED_RESERVED: return "UNCONFIGURED_RESERVED";
	case DAT_EP_STATE_PASSIVE_CONNECTION_PENDING: return "PASSIVE_CONNECTION_PENDING";
	case DAT_EP_STATE_UNCONFIGURED_PASSIVE: return "UNCONFIGURED_PASSIVE";
	case DAT_EP_STATE_ACTIVE_CONNECTION_PENDING: return "ACTIVE_CONNECTION_PENDING";
	case DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING: return "TENTATIVE_CONNECTION_PENDING";
	case DAT_EP_STATE_UNCONFIGURED_TENTATIVE: return "UNCONFIGURED_TENTATIVE";
	case DAT_EP_STATE_CONNECTED: return "CONNECTED";
	case DAT_EP_STATE_DISCONNECT_PENDING: return "DISCONNECT_PENDING";
	case DAT_EP_STATE_DISCONNECTED: return "DISCONNECTED";
	case DAT_EP_STATE_COMPLETION_PENDING: return "COMPLETION_PENDING";
#if DAT_GEN == 2
	case DAT_EP_STATE_CONNECTED_SINGLE_PATH: return "CONNECTED_SINGLE_PATH";
	case DAT_EP_STATE_CONNECTED_MULTI_PATH: return "CONNECTED_MULTI_PATH";
#endif
	}
	b = buf[next++ % 4];
	snprintf(b, sizeof(buf[0]), "state %d", (int)st);
	return b;
}

#if DAT_GEN == 2
/* ---- the DAT 2.0 forms of the 1.2 calls ----------------------------- */

/* LMRs the test created, newest first in a ring, for hx_lmr_of. */
static struct {
	DAT_LMR_CONTEXT ctx;
	DAT_LMR_HANDLE lmr;
} hx_lmrs[256];
static unsigned hx_nlmrs;

DAT_RETURN hx_lmr_noted(DAT_RETURN rc, const DAT_LMR_HANDLE *lmr,
			const DAT_LMR_CONTEXT *ctx)
{
	if (rc == DAT_SUCCESS && lmr && ctx) {
		unsigned i = hx_nlmrs++ % (sizeof(hx_lmrs) / sizeof(hx_lmrs[0]));

		hx_lmrs[i].ctx = *ctx;
		hx_lmrs[i].lmr = *lmr;
	}
	return rc;
}

DAT_LMR_HANDLE hx_lmr_of(const DAT_LMR_TRIPLET *iov)
{
	unsigned n = sizeof(hx_lmrs) / sizeof(hx_lmrs[0]);
	unsigned k = hx_nlmrs < n ? hx_nlmrs : n;

	if (!iov)
		return DAT_HANDLE_NULL;
	for (unsigned j = 1; j <= k; j++) {
		unsigned i = (hx_nlmrs - j) % n;

		if (hx_lmrs[i].ctx == iov->lmr_context)
			return hx_lmrs[i].lmr;
	}
	return DAT_HANDLE_NULL;
}
#endif

/* ---- addresses and private data ------------------------------------- */

void hx_loopback(struct sockaddr_in *sa)
{
	const char *addr = getenv("DAT_TEST_ADDR");

	memset(sa, 0, sizeof(*sa));
	sa->sin_family = AF_INET;
	sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* an IA on an RDMA device listens on that device's address */
	if (addr && *addr)
		HX_CHECK(inet_pton(AF_INET, addr, &sa->sin_addr) == 1,
			 "DAT_TEST_ADDR \"%s\" is not an IPv4 address", addr);
}

int hx_is_loopback(const struct sockaddr *sa)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
	struct sockaddr_in want;

	hx_loopback(&want);
	return sa && sa->sa_family == AF_INET &&
	       in->sin_addr.s_addr == want.sin_addr.s_addr;
}

/* DAT_TEST_CLIENT_ADDR (two hosts: the test process's IA), else
 * hx_loopback's. */
static void client_addr(struct sockaddr_in *sa)
{
	const char *addr = getenv("DAT_TEST_CLIENT_ADDR");

	hx_loopback(sa);
	if (addr && *addr)
		HX_CHECK(inet_pton(AF_INET, addr, &sa->sin_addr) == 1,
			 "DAT_TEST_CLIENT_ADDR \"%s\" is not an IPv4 address", addr);
}

static int addr_is(const struct sockaddr *sa, const struct sockaddr_in *want)
{
	const struct sockaddr_in *in = (const struct sockaddr_in *)sa;

	return sa && sa->sa_family == AF_INET &&
	       in->sin_addr.s_addr == want->sin_addr.s_addr;
}

int hx_two_hosts(void)
{
	struct sockaddr_in server, client;

	hx_loopback(&server);
	client_addr(&client);
	return server.sin_addr.s_addr != client.sin_addr.s_addr;
}

int hx_on_loopback(void)
{
	struct sockaddr_in sa;

	hx_loopback(&sa);
	return (ntohl(sa.sin_addr.s_addr) >> 24) == 127;
}

int hx_is_own_addr(const struct sockaddr *sa)
{
	struct sockaddr_in want;

	if (self_peer)
		hx_loopback(&want);
	else
		client_addr(&want);
	return addr_is(sa, &want);
}

int hx_is_peer_addr(const struct sockaddr *sa)
{
	struct sockaddr_in want;

	if (self_peer)
		client_addr(&want);
	else
		hx_loopback(&want);
	return addr_is(sa, &want);
}

void hx_pattern(unsigned char *buf, int n, unsigned seed)
{
	int i;

	for (i = 0; i < n; i++)
		buf[i] = (unsigned char)(seed * 31u + (unsigned)i * 7u + 1u);
}

int hx_pattern_ok(const void *buf, int n, unsigned seed)
{
	unsigned char want[512];

	if (n < 0 || n > (int)sizeof(want))
		return 0;
	if (n == 0)
		return 1;
	if (!buf)
		return 0;
	hx_pattern(want, n, seed);
	return memcmp(buf, want, (size_t)n) == 0;
}

/* ---- IA, EP and events ---------------------------------------------- */

void hx_ia_open(struct hx_ia *x)
{
	DAT_PROVIDER_ATTR pattr;

	memset(x, 0, sizeof(*x));
	x->async = DAT_HANDLE_NULL;
	HX_OK(dat_ia_open((DAT_NAME_PTR)hx_ia_name(), 8, &x->async, &x->ia));
	HX_CHECK(x->async != DAT_HANDLE_NULL, "dat_ia_open gave no async EVD");
	memset(&pattr, 0, sizeof(pattr));
	HX_OK(dat_ia_query(x->ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE,
			   &pattr));
	x->max_pdata = pattr.max_private_data_size;
	HX_CHECK(x->max_pdata > 0 && x->max_pdata <= 256,
		 "max_private_data_size %d", (int)x->max_pdata);
	HX_OK(dat_pz_create(x->ia, &x->pz));
	HX_OK(dat_evd_create(x->ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &x->dto));
	HX_OK(dat_evd_create(x->ia, 16, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &x->cr));
}

void hx_ia_close(struct hx_ia *x)
{
	HX_OK(dat_evd_free(x->cr));
	HX_OK(dat_evd_free(x->dto));
	HX_OK(dat_pz_free(x->pz));
	HX_OK(dat_ia_close(x->ia, DAT_CLOSE_GRACEFUL_FLAG));
	memset(x, 0, sizeof(*x));
}

void hx_ep_create(struct hx_ia *x, struct hx_ep *e, int rd_in, int rd_out)
{
	DAT_EP_ATTR attr;
	const DAT_EP_ATTR *pattr = NULL;

	memset(e, 0, sizeof(*e));
	HX_OK(dat_evd_create(x->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &e->conn));
	if (rd_in >= 0 || rd_out >= 0) {
		/* Start from the defaults, as a consumer would. */
		DAT_EP_HANDLE probe;
		DAT_EP_PARAM param;

		HX_OK(dat_ep_create(x->ia, x->pz, x->dto, x->dto, e->conn, NULL, &probe));
		HX_OK(dat_ep_query(probe, DAT_EP_FIELD_EP_ATTR_ALL, &param));
		HX_OK(dat_ep_free(probe));
		attr = param.ep_attr;
		if (rd_in >= 0)
			attr.max_rdma_read_in = rd_in;
		if (rd_out >= 0)
			attr.max_rdma_read_out = rd_out;
		pattr = &attr;
	}
	HX_OK(dat_ep_create(x->ia, x->pz, x->dto, x->dto, e->conn, pattr, &e->ep));
}

void hx_ep_free(struct hx_ep *e)
{
	if (e->ep)
		HX_OK(dat_ep_free(e->ep));
	if (e->conn)
		HX_OK(dat_evd_free(e->conn));
	memset(e, 0, sizeof(*e));
}

DAT_EP_STATE hx_state(DAT_EP_HANDLE ep)
{
	DAT_EP_PARAM param;
	DAT_EP_STATE st = (DAT_EP_STATE)-1, st2 = (DAT_EP_STATE)-1;
	DAT_BOOLEAN recv_idle, req_idle;

	memset(&param, 0, sizeof(param));
	HX_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_STATE, &param));
	st = param.ep_state;
	HX_OK(dat_ep_get_status(ep, &st2, &recv_idle, &req_idle));
	/* The two calls may straddle a transition made by the progress
	 * thread; ask again before calling that a disagreement. */
	if (st != st2) {
		HX_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_STATE, &param));
		st = param.ep_state;
		HX_CHECK(st == st2, "dat_ep_get_status says %s, dat_ep_query %s",
			 hx_state_str(st2), hx_state_str(st));
	}
	return st;
}

void hx_limits(DAT_EP_HANDLE ep, int *in, int *out)
{
	DAT_EP_PARAM param;

	memset(&param, 0, sizeof(param));
	HX_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN |
			   DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, &param));
	*in = param.ep_attr.max_rdma_read_in;
	*out = param.ep_attr.max_rdma_read_out;
}

void hx_connect(struct hx_ep *e, DAT_CONN_QUAL qual, int size, const void *pdata)
{
	struct sockaddr_in sa;

	hx_loopback(&sa);
	HX_OK(dat_ep_connect(e->ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US,
			     size, (DAT_PVOID)pdata, DAT_QOS_BEST_EFFORT,
			     DAT_CONNECT_DEFAULT_FLAG));
}

void hx_wait(DAT_EVD_HANDLE evd, DAT_EVENT *ev)
{
	DAT_COUNT nmore = 0;
	DAT_RETURN rc;

	memset(ev, 0, sizeof(*ev));
	rc = dat_evd_wait(evd, HX_WAIT_US, 1, ev, &nmore);
	HX_CHECK(rc == DAT_SUCCESS, "dat_evd_wait(%u us) returned %s (no event)",
		 HX_WAIT_US, hx_rc_str(rc));
	HX_CHECK(ev->evd_handle == evd, "event %s names EVD %p, not %p",
		 hx_event_str(ev->event_number), ev->evd_handle, evd);
}

void hx_expect_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want,
		     DAT_EP_HANDLE ep, DAT_EVENT *out)
{
	DAT_EVENT ev;

	hx_wait(evd, &ev);
	HX_CHECK(ev.event_number == want, "got event %s, expected %s",
		 hx_event_str(ev.event_number), hx_event_str(want));
	if (ep && (want & 0xff000) == 0x04000)
		HX_CHECK(ev.event_data.connect_event_data.ep_handle == ep,
			 "%s event names EP %p, expected %p", hx_event_str(want),
			 ev.event_data.connect_event_data.ep_handle, ep);
	if (out)
		*out = ev;
}

void hx_expect_empty(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	memset(&ev, 0, sizeof(ev));
	rc = dat_evd_dequeue(evd, &ev);
	HX_CHECK(DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY,
		 "expected an empty EVD, dat_evd_dequeue returned %s%s%s",
		 hx_rc_str(rc), rc == DAT_SUCCESS ? " with " : "",
		 rc == DAT_SUCCESS ? hx_event_str(ev.event_number) : "");
}

DAT_PSP_HANDLE hx_psp_any(struct hx_ia *x, DAT_PSP_FLAGS flags, DAT_CONN_QUAL *qual)
{
	DAT_PSP_HANDLE psp = DAT_HANDLE_NULL;

	*qual = 0;
	HX_OK(dat_psp_create_any(x->ia, qual, x->cr, flags, &psp));
	HX_CHECK(*qual >= 1 && *qual <= 65535, "dat_psp_create_any gave qual %llu",
		 (unsigned long long)*qual);
	return psp;
}

DAT_CONN_QUAL hx_free_qual(struct hx_ia *x)
{
	DAT_CONN_QUAL qual;
	DAT_PSP_HANDLE psp = hx_psp_any(x, DAT_PSP_CONSUMER_FLAG, &qual);

	HX_OK(dat_psp_free(psp));
	return qual;
}

DAT_CR_HANDLE hx_wait_cr(DAT_EVD_HANDLE evd, DAT_CR_ARRIVAL_EVENT_DATA *data)
{
	DAT_EVENT ev;

	hx_expect_event(evd, DAT_CONNECTION_REQUEST_EVENT, NULL, &ev);
	HX_CHECK(ev.event_data.cr_arrival_event_data.cr_handle != DAT_HANDLE_NULL,
		 "connection request without a CR handle");
	if (data)
		*data = ev.event_data.cr_arrival_event_data;
	return ev.event_data.cr_arrival_event_data.cr_handle;
}

/* ---- peer processes ------------------------------------------------- */

/* Peers not reaped yet, killed when a failing test process exits. */
#define MAX_PEERS 8
static struct hx_peer *live[MAX_PEERS];
static pid_t owner_pid;
static int atexit_done;

static void kill_leftover_peers(void)
{
	int i;

	if (getpid() != owner_pid)
		return;
	for (i = 0; i < MAX_PEERS; i++) {
		if (live[i] && live[i]->pid > 0) {
			kill(live[i]->pid, SIGKILL);
			while (waitpid(live[i]->pid, NULL, 0) < 0 && errno == EINTR)
				;
			live[i]->pid = 0;
		}
		live[i] = NULL;
	}
}

static void forget_peer(struct hx_peer *p)
{
	int i;

	for (i = 0; i < MAX_PEERS; i++)
		if (live[i] == p)
			live[i] = NULL;
	if (p->rfd >= 0)
		close(p->rfd);
	if (p->wfd >= 0)
		close(p->wfd);
	p->rfd = p->wfd = -1;
}

/* Two hosts: a peer runs in the network namespace DAT_TEST_SERVER_NETNS
 * names (ip netns's /run/netns/NAME), the test process in its own. */
static void enter_server_netns(void)
{
	const char *ns = getenv("DAT_TEST_SERVER_NETNS");
	char path[256];
	int fd;

	if (!ns || !*ns)
		return;
	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	HX_CHECK(fd >= 0, "cannot open %s: %s", path, strerror(errno));
	HX_CHECK(setns(fd, CLONE_NEWNET) == 0, "setns %s: %s", path, strerror(errno));
	close(fd);
}

void hx_spawn(struct hx_peer *p, const char *name, hx_peer_fn fn, void *arg)
{
	int to_child[2], to_parent[2], i;
	pid_t pid;

	ck_assert_msg(self_peer == NULL, "peers cannot spawn peers");
	ck_assert_int_eq(pipe(to_child), 0);
	ck_assert_int_eq(pipe(to_parent), 0);
	fflush(NULL);
	pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* The peer: bounded, reports over the pipe. */
		alarm(HX_CHILD_ALARM_S);
		close(to_child[1]);
		close(to_parent[0]);
		p->pid = 0;
		p->rfd = to_child[0];
		p->wfd = to_parent[1];
		p->name = name;
		for (i = 0; i < MAX_PEERS; i++)
			live[i] = NULL;
		self_peer = p;
		enter_server_netns();
		fn(p, arg);
		close(p->wfd);
		close(p->rfd);
		/* exit, not _exit: leak checkers run at exit. */
		exit(0);
	}
	close(to_child[0]);
	close(to_parent[1]);
	p->pid = pid;
	p->rfd = to_parent[0];
	p->wfd = to_child[1];
	p->name = name;
	owner_pid = getpid();
	if (!atexit_done) {
		atexit(kill_leftover_peers);
		atexit_done = 1;
	}
	for (i = 0; i < MAX_PEERS; i++) {
		if (!live[i]) {
			live[i] = p;
			break;
		}
	}
	/* A peer that dies must not kill the test process with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
}

void hx_send(struct hx_peer *p, int tag, const int64_t *v, int nv,
	     const void *data, int len)
{
	struct hx_msg m;
	const char *b = (const char *)&m;
	size_t left = sizeof(m);

	memset(&m, 0, sizeof(m));
	m.tag = tag;
	if (nv > 8)
		nv = 8;
	if (v && nv > 0)
		memcpy(m.v, v, sizeof(m.v[0]) * (size_t)nv);
	if (len > HX_MSG_DATA)
		len = HX_MSG_DATA;
	if (data && len > 0) {
		memcpy(m.data, data, (size_t)len);
		m.len = len;
	}
	while (left) {
		ssize_t n = write(p->wfd, b, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (self_peer)
				_exit(3);   /* the test process is gone */
			hx_fail(__FILE__, __LINE__, "writing to %s: %s", p->name,
				strerror(errno));
		}
		b += n;
		left -= (size_t)n;
	}
}

/* How a reaped peer ended, as text. */
static void describe_status(int status, char *buf, size_t len)
{
	if (WIFEXITED(status))
		snprintf(buf, len, "exited with status %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d (%s)%s", WTERMSIG(status),
			 strsignal(WTERMSIG(status)),
			 WTERMSIG(status) == SIGALRM ? ": it ran out of time" : "");
	else
		snprintf(buf, len, "ended with status 0x%x", status);
}

static int reap_status(struct hx_peer *p)
{
	int status = 0;

	while (waitpid(p->pid, &status, 0) < 0) {
		if (errno != EINTR)
			hx_fail(__FILE__, __LINE__, "waitpid(%s): %s", p->name,
				strerror(errno));
	}
	p->pid = 0;
	forget_peer(p);
	return status;
}

void hx_recv(struct hx_peer *p, struct hx_msg *m)
{
	char *b = (char *)m;
	size_t got = 0;

	memset(m, 0, sizeof(*m));
	while (got < sizeof(*m)) {
		ssize_t n;

		if (!self_peer) {
			struct pollfd pfd = { p->rfd, POLLIN, 0 };
			int r = poll(&pfd, 1, HX_PIPE_WAIT_MS);

			if (r < 0 && errno == EINTR)
				continue;
			if (r == 0) {
				hx_fail(__FILE__, __LINE__,
					"%s sent nothing for %d ms", p->name,
					HX_PIPE_WAIT_MS);
			}
		}
		n = read(p->rfd, b + got, sizeof(*m) - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			char how[128];

			if (self_peer)
				_exit(3);   /* the test process is gone */
			describe_status(reap_status(p), how, sizeof(how));
			hx_fail(__FILE__, __LINE__,
				"%s ended without reporting a failure: it %s "
				"(a crash or a sanitizer; see its stderr)",
				p->name, how);
		}
		got += (size_t)n;
	}
	if (!self_peer && m->tag == HX_MSG_FAIL) {
		char text[HX_MSG_DATA + 1];

		memcpy(text, m->data, HX_MSG_DATA);
		text[HX_MSG_DATA] = '\0';
		reap_status(p);
		hx_fail(__FILE__, __LINE__, "%s failed: %s", p->name, text);
	}
}

void hx_expect_msg(struct hx_peer *p, int tag, struct hx_msg *m)
{
	hx_recv(p, m);
	HX_CHECK(m->tag == tag, "%s sent message %d, expected %d", p->name,
		 (int)m->tag, tag);
}

void hx_reap(struct hx_peer *p)
{
	char how[128];
	int status;

	if (p->pid <= 0)
		return;
	status = reap_status(p);
	describe_status(status, how, sizeof(how));
	HX_CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s %s", p->name, how);
}

void hx_kill(struct hx_peer *p)
{
	char how[128];
	int status;

	HX_CHECK(p->pid > 0, "%s is not running", p->name);
	HX_CHECK(kill(p->pid, SIGKILL) == 0, "kill(%s): %s", p->name, strerror(errno));
	status = reap_status(p);
	describe_status(status, how, sizeof(how));
	HX_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
		 "%s should have died of SIGKILL but %s", p->name, how);
}
