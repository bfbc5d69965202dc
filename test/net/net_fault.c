/* net_fault: one side of a connection whose link check-net.sh breaks.
 *
 *   net_fault server <ia>
 *	listens on a qual of dat_psp_create_any, prints "qual <n>", and
 *	serves every connection that comes: 32 receives of 64 KiB posted
 *	and posted again as they complete.  Runs until killed.
 *
 *   net_fault client <ia> <address> <qual>
 *	connects, prints "connected", then keeps 16 Sends of 64 KiB in
 *	flight; after 64 have completed it prints "streaming" (the script
 *	then breaks the link) and goes on until the connection ends.  It
 *	prints the connection event and how long after the last successful
 *	completion it came ("event BROKEN after 3012 ms"), then checks that
 *	every Send it posted completed exactly once (each cookie is counted)
 *	and prints "dtos posted P, completed P: S succeeded, F flushed".
 *	With "idle" after the qual it posts nothing: "streaming" comes
 *	right after "connected", and the connection must end all the same.
 *	It then reads lines from standard input: "connect <qual>" connects a
 *	new EP to that qual (the link is back), sends one message and prints
 *	"reconnected"; end of input ends it.
 *
 * Exit status 0 when every check held, 1 with a message otherwise.  The
 * waits are bounded (NET_FAULT_WAIT_S, default 120 s per event). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <dat/udat.h>

#define MSG (64u * 1024u)
#define SRV_RECVS 32
#define CLI_DEPTH 16
#define CLI_MAX_POSTS 1000000

static const char *role = "net_fault";

static void die(const char *what, DAT_RETURN rc)
{
	const char *major = "?", *minor = "";

	dat_strerror(rc, &major, &minor);
	fprintf(stderr, "net_fault: %s: %s: %s %s (0x%08x)\n", role, what, major,
		minor ? minor : "", (unsigned)rc);
	exit(1);
}

#define CHECK(call) \
	do { \
		DAT_RETURN rc_ = (call); \
		if (rc_ != DAT_SUCCESS) \
			die(#call, rc_); \
	} while (0)

static DAT_TIMEOUT wait_us(void)
{
	const char *v = getenv("NET_FAULT_WAIT_S");
	unsigned long s = v && *v ? strtoul(v, NULL, 10) : 120;

	return (DAT_TIMEOUT)(s ? s : 120) * 1000000u;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static const char *event_name(DAT_EVENT_NUMBER ev)
{
	switch (ev) {
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
	case DAT_DTO_COMPLETION_EVENT: return "DTO_COMPLETION";
	default: return "another event";
	}
}

struct ia {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, evd;      /* evd: requests, connections, DTOs */
	DAT_PZ_HANDLE pz;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	unsigned char *buf;
	DAT_VLEN len;
};

static void ia_open(struct ia *x, const char *name, DAT_VLEN len)
{
	DAT_REGION_DESCRIPTION r;
	DAT_VLEN reg;
	DAT_VADDR va;

	memset(x, 0, sizeof(*x));
	x->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open((DAT_NAME_PTR)name, 8, &x->async, &x->ia));
	CHECK(dat_pz_create(x->ia, &x->pz));
	CHECK(dat_evd_create(x->ia, 256, DAT_HANDLE_NULL,
			     DAT_EVD_CR_FLAG | DAT_EVD_CONNECTION_FLAG | DAT_EVD_DTO_FLAG,
			     &x->evd));
	x->len = len;
	x->buf = calloc(1, len);
	if (!x->buf) {
		fprintf(stderr, "net_fault: %s: out of memory\n", role);
		exit(1);
	}
	r.for_va = x->buf;
	CHECK(dat_lmr_create(x->ia, DAT_MEM_TYPE_VIRTUAL, r, len, x->pz,
			     DAT_MEM_PRIV_ALL_FLAG, &x->lmr, &x->lctx, NULL, &reg, &va));
}

static DAT_EP_HANDLE ep_new(struct ia *x, int recvs, int reqs)
{
	DAT_EP_ATTR a;
	DAT_EP_PARAM p;
	DAT_EP_HANDLE ep;

	CHECK(dat_ep_create(x->ia, x->pz, x->evd, x->evd, x->evd, NULL, &ep));
	memset(&p, 0, sizeof(p));
	CHECK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_ALL, &p));
	CHECK(dat_ep_free(ep));
	a = p.ep_attr;
	a.max_recv_dtos = recvs;
	a.max_request_dtos = reqs;
	CHECK(dat_ep_create(x->ia, x->pz, x->evd, x->evd, x->evd, &a, &ep));
	return ep;
}

static void post_recv(struct ia *x, DAT_EP_HANDLE ep, unsigned slot)
{
	DAT_LMR_TRIPLET iov;
	DAT_DTO_COOKIE ck;

	iov.lmr_context = x->lctx;
	iov.virtual_address = (DAT_VADDR)(uintptr_t)(x->buf + (size_t)slot * MSG);
	iov.segment_length = MSG;
	ck.as_64 = slot;
	CHECK(dat_ep_post_recv(ep, 1, &iov, ck, DAT_COMPLETION_DEFAULT_FLAG));
}

/* ---- server --------------------------------------------------------------- */

static int server(const char *name)
{
	struct ia x;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual = 0;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	unsigned i;

	role = "server";
	ia_open(&x, name, (DAT_VLEN)SRV_RECVS * MSG);
	CHECK(dat_psp_create_any(x.ia, &qual, x.evd, DAT_PSP_CONSUMER_FLAG, &psp));
	printf("qual %llu\n", (unsigned long long)qual);
	fflush(stdout);
	for (;;) {
		DAT_RETURN rc = dat_evd_wait(x.evd, DAT_TIMEOUT_INFINITE, 1, &ev, &nmore);

		if (rc != DAT_SUCCESS)
			die("dat_evd_wait", rc);
		if (ev.event_number == DAT_CONNECTION_REQUEST_EVENT) {
			DAT_EP_HANDLE ep = ep_new(&x, SRV_RECVS, 4);

			/* every connection shares the buffers: only the
			 * client's completions are checked */
			for (i = 0; i < SRV_RECVS; i++)
				post_recv(&x, ep, i);
			CHECK(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
					    ep, 0, NULL));
		} else if (ev.event_number == DAT_DTO_COMPLETION_EVENT) {
			DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;

			if (d->status == DAT_DTO_SUCCESS)
				post_recv(&x, d->ep_handle, (unsigned)d->user_cookie.as_64);
		} else if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED) {
			printf("server: %s\n", event_name(ev.event_number));
			fflush(stdout);
		}
	}
	return 0;
}

/* ---- client ---------------------------------------------------------------- */

static unsigned char *seen;     /* per cookie: completions */

static void to_addr(const char *text, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, text, &((struct sockaddr_in *)ss)->sin_addr) == 1) {
		ss->ss_family = AF_INET;
	} else if (inet_pton(AF_INET6, text, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1) {
		ss->ss_family = AF_INET6;
	} else {
		fprintf(stderr, "net_fault: client: bad address '%s'\n", text);
		exit(2);
	}
}

static DAT_EP_HANDLE connect_to(struct ia *x, struct sockaddr_storage *to, DAT_CONN_QUAL qual)
{
	DAT_EP_HANDLE ep = ep_new(x, 4, CLI_DEPTH);
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_RETURN rc;
	uint64_t t0 = now_ms();

	CHECK(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)to, qual, wait_us(), 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	rc = dat_evd_wait(x->evd, wait_us(), 1, &ev, &nmore);
	if (rc != DAT_SUCCESS)
		die("dat_evd_wait(connect)", rc);
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED) {
		fprintf(stderr, "net_fault: client: connecting: %s after %llu ms\n",
			event_name(ev.event_number),
			(unsigned long long)(now_ms() - t0));
		exit(1);
	}
	return ep;
}

static void post_send(struct ia *x, DAT_EP_HANDLE ep, uint64_t cookie)
{
	DAT_LMR_TRIPLET iov;
	DAT_DTO_COOKIE ck;

	iov.lmr_context = x->lctx;
	iov.virtual_address = (DAT_VADDR)(uintptr_t)x->buf;
	iov.segment_length = MSG;
	ck.as_64 = cookie;
	CHECK(dat_ep_post_send(ep, 1, &iov, ck, DAT_COMPLETION_DEFAULT_FLAG));
}

static int client(const char *name, const char *addr, const char *qual_text, int idle)
{
	struct sockaddr_storage to;
	struct ia x;
	DAT_EP_HANDLE ep;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	DAT_EVENT_NUMBER end = 0;
	uint64_t posted = 0, done = 0, ok = 0, flushed = 0, last_ok_ms;
	char line[128];
	int announced = 0;

	role = "client";
	to_addr(addr, &to);
	seen = calloc(CLI_MAX_POSTS, 1);
	if (!seen)
		return 1;
	ia_open(&x, name, MSG);
	ep = connect_to(&x, &to, strtoull(qual_text, NULL, 10));
	printf("connected\n");
	fflush(stdout);
	last_ok_ms = now_ms();

	if (idle) {
		printf("streaming\n");
		fflush(stdout);
		announced = 1;
	}
	while (!idle && posted < CLI_DEPTH)
		post_send(&x, ep, posted++);
	/* stream until the connection ends, then collect every completion */
	while (!end || done < posted) {
		DAT_RETURN rc = dat_evd_wait(x.evd, wait_us(), 1, &ev, &nmore);

		if (rc != DAT_SUCCESS)
			die(end ? "waiting for the flushed sends" : "waiting for the link to break",
			    rc);
		if (ev.event_number == DAT_DTO_COMPLETION_EVENT) {
			DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
			uint64_t c = d->user_cookie.as_64;

			if (c >= posted || seen[c]) {
				fprintf(stderr, "net_fault: client: send %llu completed %s\n",
					(unsigned long long)c, c >= posted ? "but was never posted" :
					"twice");
				return 1;
			}
			seen[c] = 1;
			done++;
			if (d->status == DAT_DTO_SUCCESS) {
				ok++;
				last_ok_ms = now_ms();
			} else {
				flushed++;
			}
			if (!announced && ok >= 64) {
				printf("streaming\n");
				fflush(stdout);
				announced = 1;
			}
			if (!end && d->status == DAT_DTO_SUCCESS && posted < CLI_MAX_POSTS)
				post_send(&x, ep, posted++);
		} else if (!end) {
			end = ev.event_number;
			printf("event %s after %llu ms\n", event_name(end),
			       (unsigned long long)(now_ms() - last_ok_ms));
			fflush(stdout);
		} else {
			fprintf(stderr, "net_fault: client: a second connection event, %s\n",
				event_name(ev.event_number));
			return 1;
		}
	}
	printf("dtos posted %llu, completed %llu: %llu succeeded, %llu flushed\n",
	       (unsigned long long)posted, (unsigned long long)done,
	       (unsigned long long)ok, (unsigned long long)flushed);
	fflush(stdout);
	if (end != DAT_CONNECTION_EVENT_BROKEN && end != DAT_CONNECTION_EVENT_DISCONNECTED &&
	    end != DAT_CONNECTION_EVENT_TIMED_OUT) {
		fprintf(stderr, "net_fault: client: the connection ended with %s\n",
			event_name(end));
		return 1;
	}
	CHECK(dat_ep_free(ep));

	/* the link is back: the IA takes new connections */
	while (fgets(line, sizeof(line), stdin)) {
		unsigned long long q;

		if (sscanf(line, "connect %llu", &q) != 1)
			continue;
		ep = connect_to(&x, &to, (DAT_CONN_QUAL)q);
		post_send(&x, ep, 0);
		if (dat_evd_wait(x.evd, wait_us(), 1, &ev, &nmore) != DAT_SUCCESS ||
		    ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    ev.event_data.dto_completion_event_data.status != DAT_DTO_SUCCESS) {
			fprintf(stderr, "net_fault: client: a send on the new connection failed\n");
			return 1;
		}
		printf("reconnected\n");
		fflush(stdout);
		CHECK(dat_ep_disconnect(ep, DAT_CLOSE_ABRUPT_FLAG));
		CHECK(dat_ep_free(ep));
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		return server(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], argv[4], 0);
	if (argc == 6 && !strcmp(argv[1], "client") && !strcmp(argv[5], "idle"))
		return client(argv[2], argv[3], argv[4], 1);
	fprintf(stderr, "usage: net_fault server <ia>\n"
			"       net_fault client <ia> <address> <qual> [idle]\n");
	return 2;
}
