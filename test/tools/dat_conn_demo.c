/* dat_conn_demo: one DAT connection between two processes, showing the
 * RDMA read limits each side negotiated and the private data it received.
 *
 *   dat_conn_demo server <ia>
 *	listens on a qual chosen by dat_psp_create_any, prints "qual <n>",
 *	accepts one connection on an EP offering max_rdma_read_in 2 and
 *	max_rdma_read_out 16, prints the client's private data and what was
 *	negotiated, then disconnects once the client is done.
 *
 *   dat_conn_demo client <ia> <qual> [<IPv4 or IPv6 address>]
 *	connects (default 127.0.0.1) with max_rdma_read_in 8 and
 *	max_rdma_read_out 4 and 20 bytes of private data, prints what was
 *	negotiated and the server's private data, and disconnects.
 *
 * Each side also prints its IA's address ("<role>: ia address A"), and
 * the peer's as DAT reports it: the server from dat_cr_query ("server:
 * request from A"), both from dat_ep_query once connected ("<role>: peer
 * address A").  test/net/check-net.sh compares them across two hosts.
 *
 * dat_ep_query reports the negotiated limits while the EP is connected, so
 * each side must read them before the other one disconnects.  With no data
 * transfer to say "done", the client says it with a second connection
 * request (no private data), sent once it has read its limits; the server
 * reads its own limits first, then waits for that request, rejects it and
 * disconnects.
 *
 * Both exit 0 on success and 1, with a message on stderr, on any failure.
 * The provider comes from dat.conf (DAT_OVERRIDE selects the file). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include <dat/udat.h>

#define WAIT_US (20u * 1000u * 1000u)

static const char *role = "dat_conn_demo";

static const char client_pdata[] = "libdat-ird-ord-demo!";   /* 20 bytes */
static const char server_pdata[] = "libdat-accepted";        /* 15 bytes */

static void die(const char *what, DAT_RETURN rc)
{
	const char *major = "?", *minor = "";

	dat_strerror(rc, &major, &minor);
	fprintf(stderr, "dat_conn_demo: %s: %s failed: %s%s%s (0x%08x)\n", role, what,
		major, minor && *minor ? " " : "", minor ? minor : "", (unsigned)rc);
	exit(1);
}

#define CHECK(call) \
	do { \
		DAT_RETURN rc_ = (call); \
		if (rc_ != DAT_SUCCESS) \
			die(#call, rc_); \
	} while (0)

static const char *event_name(DAT_EVENT_NUMBER ev)
{
	switch (ev) {
	case DAT_CONNECTION_REQUEST_EVENT: return "CONNECTION_REQUEST";
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR: return "ACCEPT_COMPLETION_ERROR";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	default: return "an unexpected event";
	}
}

/* The next event on evd, which must be want. */
static void expect(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want, DAT_EVENT *ev)
{
	DAT_COUNT nmore;
	DAT_RETURN rc;

	memset(ev, 0, sizeof(*ev));
	rc = dat_evd_wait(evd, WAIT_US, 1, ev, &nmore);
	if (rc != DAT_SUCCESS) {
		fprintf(stderr, "dat_conn_demo: %s: waiting for %s: ", role, event_name(want));
		die("dat_evd_wait", rc);
	}
	if (ev->event_number != want) {
		fprintf(stderr, "dat_conn_demo: %s: got %s (0x%x), expected %s\n", role,
			event_name(ev->event_number), (unsigned)ev->event_number,
			event_name(want));
		exit(1);
	}
}

static void print_hex(const char *who, int size, const void *data)
{
	const unsigned char *p = data;
	int i;

	printf("%s: private data %d bytes: ", who, size);
	for (i = 0; i < size; i++)
		printf("%02x", p[i]);
	printf("\n");
}

/* "<who>: <what> <address>" */
static void print_addr(const char *who, const char *what, DAT_IA_ADDRESS_PTR addr)
{
	const struct sockaddr *sa = (const struct sockaddr *)addr;
	char text[INET6_ADDRSTRLEN] = "?";

	if (sa && sa->sa_family == AF_INET)
		inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, text,
			  sizeof(text));
	else if (sa && sa->sa_family == AF_INET6)
		inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, text,
			  sizeof(text));
	printf("%s: %s %s\n", who, what, text);
}

static void print_ep_addrs(const char *who, DAT_IA_HANDLE ia, DAT_EP_HANDLE ep)
{
	DAT_IA_ATTR attr;
	DAT_EP_PARAM p;

	memset(&attr, 0, sizeof(attr));
	CHECK(dat_ia_query(ia, NULL, DAT_IA_FIELD_IA_ADDRESS_PTR, &attr, 0, NULL));
	print_addr(who, "ia address", attr.ia_address_ptr);
	memset(&p, 0, sizeof(p));
	CHECK(dat_ep_query(ep, DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR, &p));
	print_addr(who, "peer address", p.remote_ia_address_ptr);
}

static void print_limits(const char *who, DAT_EP_HANDLE ep)
{
	DAT_EP_PARAM p;

	memset(&p, 0, sizeof(p));
	CHECK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN |
			   DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT, &p));
	printf("%s: negotiated in %d out %d\n", who, (int)p.ep_attr.max_rdma_read_in,
	       (int)p.ep_attr.max_rdma_read_out);
}

struct ia {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async, conn, cr, dto;
	DAT_PZ_HANDLE pz;
};

static void ia_open(struct ia *x, const char *name)
{
	memset(x, 0, sizeof(*x));
	x->async = DAT_HANDLE_NULL;
	CHECK(dat_ia_open((DAT_NAME_PTR)name, 8, &x->async, &x->ia));
	CHECK(dat_pz_create(x->ia, &x->pz));
	CHECK(dat_evd_create(x->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &x->conn));
	CHECK(dat_evd_create(x->ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &x->cr));
	CHECK(dat_evd_create(x->ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &x->dto));
}

static void ia_close(struct ia *x)
{
	CHECK(dat_evd_free(x->dto));
	CHECK(dat_evd_free(x->cr));
	CHECK(dat_evd_free(x->conn));
	CHECK(dat_pz_free(x->pz));
	CHECK(dat_ia_close(x->ia, DAT_CLOSE_GRACEFUL_FLAG));
}

/* An EP offering the given RDMA read limits. */
static DAT_EP_HANDLE ep_create(struct ia *x, int rd_in, int rd_out)
{
	DAT_EP_HANDLE ep;
	DAT_EP_PARAM p;

	/* start from the provider's defaults */
	CHECK(dat_ep_create(x->ia, x->pz, x->dto, x->dto, x->conn, NULL, &ep));
	memset(&p, 0, sizeof(p));
	CHECK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_ALL, &p));
	CHECK(dat_ep_free(ep));
	p.ep_attr.max_rdma_read_in = rd_in;
	p.ep_attr.max_rdma_read_out = rd_out;
	CHECK(dat_ep_create(x->ia, x->pz, x->dto, x->dto, x->conn, &p.ep_attr, &ep));
	return ep;
}

static int server(const char *ia_name)
{
	struct ia x;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual = 0;
	DAT_CR_HANDLE cr;
	DAT_CR_PARAM crp;
	DAT_EP_HANDLE ep;
	DAT_EVENT ev;

	role = "server";
	ia_open(&x, ia_name);
	CHECK(dat_psp_create_any(x.ia, &qual, x.cr, DAT_PSP_CONSUMER_FLAG, &psp));
	printf("qual %llu\n", (unsigned long long)qual);
	fflush(stdout);

	expect(x.cr, DAT_CONNECTION_REQUEST_EVENT, &ev);
	cr = ev.event_data.cr_arrival_event_data.cr_handle;
	memset(&crp, 0, sizeof(crp));
	CHECK(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp));
	/* cr_query's private data dies with the CR: print it now */
	print_hex("server", crp.private_data_size, crp.private_data);
	print_addr("server", "request from", crp.remote_ia_address_ptr);
	ep = ep_create(&x, 2, 16);
	CHECK(dat_cr_accept(cr, ep, (DAT_COUNT)strlen(server_pdata), (DAT_PVOID)server_pdata));
	expect(x.conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev);
	print_limits("server", ep);
	print_ep_addrs("server", x.ia, ep);
	fflush(stdout);

	/* the client's "done": a second request, refused; then disconnect */
	expect(x.cr, DAT_CONNECTION_REQUEST_EVENT, &ev);
	CHECK(dat_cr_reject(ev.event_data.cr_arrival_event_data.cr_handle));
	CHECK(dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG));
	expect(x.conn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev);
	CHECK(dat_ep_free(ep));
	CHECK(dat_psp_free(psp));
	ia_close(&x);
	return 0;
}

static int client(const char *ia_name, const char *qual_text, const char *addr_text)
{
	struct sockaddr_storage sa;
	struct ia x;
	DAT_EP_HANDLE ep, done_ep;
	DAT_EVD_HANDLE done_evd;
	DAT_EVENT ev;
	unsigned long long qual;
	char *end;

	role = "client";
	qual = strtoull(qual_text, &end, 10);
	if (*qual_text == '\0' || *end != '\0' || qual == 0 || qual > 65535) {
		fprintf(stderr, "dat_conn_demo: client: bad qual '%s'\n", qual_text);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	if (inet_pton(AF_INET, addr_text, &((struct sockaddr_in *)&sa)->sin_addr) == 1) {
		sa.ss_family = AF_INET;
	} else if (inet_pton(AF_INET6, addr_text,
			     &((struct sockaddr_in6 *)&sa)->sin6_addr) == 1) {
		sa.ss_family = AF_INET6;
	} else {
		fprintf(stderr, "dat_conn_demo: client: bad address '%s'\n", addr_text);
		return 1;
	}
	ia_open(&x, ia_name);
	ep = ep_create(&x, 8, 4);
	CHECK(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&sa, (DAT_CONN_QUAL)qual, WAIT_US,
			     (DAT_COUNT)strlen(client_pdata), (DAT_PVOID)client_pdata,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	expect(x.conn, DAT_CONNECTION_EVENT_ESTABLISHED, &ev);
	print_limits("client", ep);
	print_ep_addrs("client", x.ia, ep);
	print_hex("client", ev.event_data.connect_event_data.private_data_size,
		  ev.event_data.connect_event_data.private_data);
	fflush(stdout);

	/* done: say so with a second request, which the server refuses
	 * before it disconnects the first connection */
	CHECK(dat_evd_create(x.ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &done_evd));
	CHECK(dat_ep_create(x.ia, x.pz, x.dto, x.dto, done_evd, NULL, &done_ep));
	CHECK(dat_ep_connect(done_ep, (DAT_IA_ADDRESS_PTR)&sa, (DAT_CONN_QUAL)qual, WAIT_US,
			     0, NULL, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	expect(done_evd, DAT_CONNECTION_EVENT_PEER_REJECTED, &ev);
	expect(x.conn, DAT_CONNECTION_EVENT_DISCONNECTED, &ev);
	/* our side of the disconnect (the EP is already disconnected: a no-op) */
	CHECK(dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG));
	CHECK(dat_ep_free(done_ep));
	CHECK(dat_evd_free(done_evd));
	CHECK(dat_ep_free(ep));
	ia_close(&x);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: dat_conn_demo server <ia>\n"
			"       dat_conn_demo client <ia> <qual> [<IPv4 or IPv6 address>]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "server") == 0)
		return server(argv[2]);
	if ((argc == 4 || argc == 5) && strcmp(argv[1], "client") == 0)
		return client(argv[2], argv[3], argc == 5 ? argv[4] : "127.0.0.1");
	usage();
	return 2;
}
