/* dat_interop: one DAT program for both ends of a connection, so that two
 * providers (tcp on one side, verbs on soft-iWARP on the other) can be
 * checked against each other through the public API only.
 *
 *   dat_interop -P ia -s [-n port] [-x write|read [-o] [-L] [-F]]
 *   dat_interop -P ia -h address [-n port] [-x write|read [-o] [-L] [-F]]
 *
 * Over one connection it checks, and prints as it goes:
 *  - private data: the client connects with as much as its IA allows, the
 *    server accepts with as much as its IA allows; each checks every byte
 *    and the size;
 *  - read limits: the client offers 8 in / 4 out, the server 2 in / 16
 *    out; both must end with what the DAT rule gives (client 8/2, server
 *    2/8);
 *  - a Send each way, a 32 KiB RDMA Write each way (announced by a Send)
 *    and a 32 KiB RDMA Read each way, every byte checked;
 *  - with -x, a remote access error: the side given -o posts an RDMA Write
 *    or Read with a key its peer never gave; the peer's memory must stay
 *    untouched and the connection must end on both sides.  The offender
 *    wants DAT_DTO_ERR_REMOTE_ACCESS, except: with -L (its Writes complete
 *    once handed to the network: verbs on iWARP, or tcp toward a peer that
 *    is not libdat) a refused Write may already have completed with
 *    success; with -F (its provider cannot tell a refusal from the
 *    connection's end: verbs on siw) the refused request completes
 *    flushed or with a local error.  Either is reported as such.
 *
 * Exit status: 0 every check held, 1 a check or a DAT call failed, 2 bad
 * usage.  Every wait is bounded (20 s). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <dat/udat.h>

#define WAIT_US 20000000u
#define WIN_LEN 65536u                  /* peer writes [0, 32K), reads [32K, 64K) */
#define HALF (WIN_LEN / 2)
#define MSG_LEN 256u
#define NRECV 8
#define MAGIC 0x1d47a0e1u
#define BAD_KEY_XOR 0x5a5a00u

enum { M_INFO = 1, M_WROTE, M_BYE };

struct msg {
	uint32_t magic, type;
	uint64_t addr;
	uint32_t rmr, len;
	uint8_t body[200];
};

struct region {
	uint8_t *p;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static const char *role = "?";
static const char *ia_name = "tcp";

static void fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "dat_interop %s (%s): FAIL: ", role, ia_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static void ok(const char *fmt, ...)
{
	va_list ap;

	printf("dat_interop %s (%s): ", role, ia_name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void check(DAT_RETURN rc, const char *what)
{
	const char *major = "", *minor = "";

	if (rc == DAT_SUCCESS)
		return;
	dat_strerror(rc, &major, &minor);
	fail("%s: %s %s (0x%08x)", what, major, minor, (unsigned)rc);
}

/* Byte i of the pattern seed makes: the same on both sides. */
static uint8_t pat(unsigned seed, size_t i)
{
	return (uint8_t)((i * 131u + seed * 29u + (i >> 8)) ^ seed);
}

static void fill(uint8_t *p, size_t len, unsigned seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed, i);
}

static void expect(const uint8_t *p, size_t len, unsigned seed, const char *what)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed, i))
			fail("%s: byte %zu is 0x%02x, wanted 0x%02x", what, i,
			     p[i], pat(seed, i));
}

static DAT_IA_HANDLE ia;
static DAT_PZ_HANDLE pz;
static DAT_EVD_HANDLE async_evd = DAT_HANDLE_NULL, req_evd, recv_evd, conn_evd,
	cr_evd;
static DAT_EP_HANDLE ep;
static struct region win, loc, msgs;
static bool is_server;

static void region_make(struct region *r, size_t len)
{
	DAT_REGION_DESCRIPTION d;
	DAT_VLEN rlen;
	DAT_VADDR raddr;
	void *p;

	if (posix_memalign(&p, 4096, len))
		fail("no memory");
	memset(p, 0, len);
	r->p = p;
	d.for_va = p;
	check(dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, d, len, pz,
			     DAT_MEM_PRIV_ALL_FLAG, &r->lmr, &r->lctx, &r->rctx,
			     &rlen, &raddr), "dat_lmr_create");
}

static DAT_LMR_TRIPLET iov(struct region *r, size_t off, size_t len)
{
	DAT_LMR_TRIPLET t;

	t.lmr_context = r->lctx;
	t.pad = 0;
	t.virtual_address = (DAT_VADDR)(uintptr_t)(r->p + off);
	t.segment_length = (DAT_VLEN)len;
	return t;
}

static DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

static void wait_event(DAT_EVD_HANDLE evd, DAT_EVENT *e, const char *what)
{
	DAT_COUNT n;

	check(dat_evd_wait(evd, WAIT_US, 1, e, &n), what);
}

/* The next DTO completion on evd. */
static DAT_DTO_COMPLETION_EVENT_DATA next_dto(DAT_EVD_HANDLE evd, const char *what)
{
	DAT_EVENT e;

	wait_event(evd, &e, what);
	if (e.event_number != DAT_DTO_COMPLETION_EVENT)
		fail("%s: event 0x%x, wanted a DTO completion", what,
		     (unsigned)e.event_number);
	return e.event_data.dto_completion_event_data;
}

static void post_recv(unsigned slot)
{
	DAT_LMR_TRIPLET t = iov(&msgs, (size_t)(slot + 1) * MSG_LEN, MSG_LEN);

	check(dat_ep_post_recv(ep, 1, &t, cookie(0x100 + slot),
			       DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_recv");
}

/* may_flush: the peer may end the connection before this Send's
 * completion is in (it was delivered; its acknowledgement raced the end). */
static void send_msg_ending(uint32_t type, uint64_t addr, uint32_t rmr,
			    unsigned seed, bool may_flush)
{
	struct msg *m = (struct msg *)msgs.p;
	DAT_LMR_TRIPLET t = iov(&msgs, 0, sizeof(*m));
	DAT_DTO_COMPLETION_EVENT_DATA d;

	memset(m, 0, sizeof(*m));
	m->magic = MAGIC;
	m->type = type;
	m->addr = addr;
	m->rmr = rmr;
	m->len = WIN_LEN;
	fill(m->body, sizeof(m->body), seed);
	check(dat_ep_post_send(ep, 1, &t, cookie(1),
			       DAT_COMPLETION_DEFAULT_FLAG), "dat_ep_post_send");
	d = next_dto(req_evd, "send completion");
	if (d.user_cookie.as_64 != 1 || (d.status != DAT_DTO_SUCCESS &&
	    !(may_flush && d.status == DAT_DTO_ERR_FLUSHED)))
		fail("send completed with cookie %llu status %d",
		     (unsigned long long)d.user_cookie.as_64, (int)d.status);
}

static void send_msg(uint32_t type, uint64_t addr, uint32_t rmr, unsigned seed)
{
	send_msg_ending(type, addr, rmr, seed, false);
}

/* The peer's next message, of type type, its body checked. */
static struct msg recv_msg(uint32_t type, unsigned seed)
{
	DAT_DTO_COMPLETION_EVENT_DATA d = next_dto(recv_evd, "receive");
	unsigned slot = (unsigned)(d.user_cookie.as_64 - 0x100);
	struct msg m;

	if (d.status != DAT_DTO_SUCCESS || slot >= NRECV)
		fail("receive completed with cookie 0x%llx status %d",
		     (unsigned long long)d.user_cookie.as_64, (int)d.status);
	if (d.transfered_length != sizeof(m))
		fail("received %llu bytes, wanted %zu",
		     (unsigned long long)d.transfered_length, sizeof(m));
	memcpy(&m, msgs.p + (size_t)(slot + 1) * MSG_LEN, sizeof(m));
	if (m.magic != MAGIC || m.type != type)
		fail("message magic 0x%x type %u, wanted type %u", m.magic,
		     m.type, type);
	expect(m.body, sizeof(m.body), seed, "a Send's data");
	post_recv(slot);
	return m;
}

static void rdma(bool read, struct region *r, size_t off, uint64_t raddr,
		 uint32_t rkey, uint64_t ck)
{
	DAT_LMR_TRIPLET t = iov(r, off, HALF);
	DAT_RMR_TRIPLET rt;

	rt.rmr_context = rkey;
	rt.pad = 0;
	rt.target_address = raddr;
	rt.segment_length = HALF;
	if (read)
		check(dat_ep_post_rdma_read(ep, 1, &t, cookie(ck), &rt,
					    DAT_COMPLETION_DEFAULT_FLAG),
		      "dat_ep_post_rdma_read");
	else
		check(dat_ep_post_rdma_write(ep, 1, &t, cookie(ck), &rt,
					     DAT_COMPLETION_DEFAULT_FLAG),
		      "dat_ep_post_rdma_write");
}

static const char *conn_event_name(DAT_EVENT_NUMBER n)
{
	switch (n) {
	case DAT_CONNECTION_EVENT_ESTABLISHED: return "ESTABLISHED";
	case DAT_CONNECTION_EVENT_PEER_REJECTED: return "PEER_REJECTED";
	case DAT_CONNECTION_EVENT_NON_PEER_REJECTED: return "NON_PEER_REJECTED";
	case DAT_CONNECTION_EVENT_DISCONNECTED: return "DISCONNECTED";
	case DAT_CONNECTION_EVENT_BROKEN: return "BROKEN";
	case DAT_CONNECTION_EVENT_TIMED_OUT: return "TIMED_OUT";
	case DAT_CONNECTION_EVENT_UNREACHABLE: return "UNREACHABLE";
	default: return "another event";
	}
}

/* The connection ended: BROKEN or DISCONNECTED on the connect EVD. */
static DAT_EVENT_NUMBER expect_end(void)
{
	DAT_EVENT e;

	wait_event(conn_evd, &e, "the connection's end");
	if (e.event_number != DAT_CONNECTION_EVENT_BROKEN &&
	    e.event_number != DAT_CONNECTION_EVENT_DISCONNECTED)
		fail("connection event %s, wanted BROKEN or DISCONNECTED",
		     conn_event_name(e.event_number));
	return e.event_number;
}

static void usage(void)
{
	fprintf(stderr, "usage: dat_interop -P ia (-s | -h address) [-n port] "
		"[-x write|read [-o] [-L] [-F]]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *host = NULL, *bad = NULL;
	unsigned port = 47311;
	bool offender = false, local_completion = false, no_remote_errors = false;
	bool bad_read;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR prov_attr;
	DAT_EP_ATTR attr;
	DAT_EP_PARAM param;
	DAT_EVENT e;
	DAT_COUNT pmax;
	uint8_t pd_out[256];
	const uint8_t *pd_in;
	DAT_COUNT pd_in_len;
	struct msg peer;
	int c, want_in, want_out;
	unsigned i, my_seed, peer_seed;

	while ((c = getopt(argc, argv, "P:sh:n:x:oLF")) != -1) {
		switch (c) {
		case 'P': ia_name = optarg; break;
		case 's': is_server = true; break;
		case 'h': host = optarg; break;
		case 'n': port = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'x': bad = optarg; break;
		case 'o': offender = true; break;
		case 'L': local_completion = true; break;
		case 'F': no_remote_errors = true; break;
		default: usage();
		}
	}
	if (optind != argc || is_server == (host != NULL) ||
	    (bad && strcmp(bad, "write") && strcmp(bad, "read")) || !port)
		usage();
	bad_read = bad && !strcmp(bad, "read");
	role = is_server ? "server" : "client";
	my_seed = is_server ? 0x53 : 0x43;
	peer_seed = is_server ? 0x43 : 0x53;

	check(dat_ia_open((DAT_NAME_PTR)ia_name, 8, &async_evd, &ia), "dat_ia_open");
	check(dat_ia_query(ia, &async_evd, DAT_IA_ALL, &ia_attr,
			   DAT_PROVIDER_FIELD_ALL, &prov_attr), "dat_ia_query");
	check(dat_pz_create(ia, &pz), "dat_pz_create");
	check(dat_evd_create(ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &req_evd),
	      "dat_evd_create");
	check(dat_evd_create(ia, 32, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &recv_evd),
	      "dat_evd_create");
	check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG,
			     &conn_evd), "dat_evd_create");
	region_make(&win, WIN_LEN);
	region_make(&loc, WIN_LEN);
	region_make(&msgs, (NRECV + 1) * MSG_LEN);
	/* what the peer reads: [32K, 64K) */
	fill(win.p + HALF, HALF, my_seed + 1);

	memset(&attr, 0, sizeof(attr));
	attr.service_type = DAT_SERVICE_TYPE_RC;
	attr.max_message_size = WIN_LEN;
	attr.max_rdma_size = WIN_LEN;
	attr.qos = DAT_QOS_BEST_EFFORT;
	attr.recv_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.request_completion_flags = DAT_COMPLETION_DEFAULT_FLAG;
	attr.max_recv_dtos = NRECV;
	attr.max_request_dtos = 16;
	attr.max_recv_iov = 1;
	attr.max_request_iov = 1;
	attr.max_rdma_read_in = is_server ? 2 : 8;
	attr.max_rdma_read_out = is_server ? 16 : 4;
	attr.max_rdma_read_iov = 1;
	attr.max_rdma_write_iov = 1;
	attr.srq_soft_hw = DAT_HW_DEFAULT;
	check(dat_ep_create(ia, pz, recv_evd, req_evd, conn_evd, &attr, &ep),
	      "dat_ep_create");
	/* receives before the connection: a Send that finds none ends an
	 * iWARP connection */
	for (i = 0; i < NRECV; i++)
		post_recv(i);

	pmax = prov_attr.max_private_data_size;
	if (pmax > (DAT_COUNT)sizeof(pd_out))
		pmax = (DAT_COUNT)sizeof(pd_out);
	fill(pd_out, (size_t)pmax, my_seed + 2);
	if (is_server) {
		DAT_PSP_HANDLE psp;
		DAT_CR_PARAM crp;
		DAT_CR_HANDLE cr;

		check(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG,
				     &cr_evd), "dat_evd_create");
		check(dat_psp_create(ia, port, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp),
		      "dat_psp_create");
		ok("listening on port %u", port);
		wait_event(cr_evd, &e, "the connection request");
		if (e.event_number != DAT_CONNECTION_REQUEST_EVENT)
			fail("event 0x%x, wanted a connection request",
			     (unsigned)e.event_number);
		cr = e.event_data.cr_arrival_event_data.cr_handle;
		check(dat_cr_query(cr, DAT_CR_FIELD_ALL, &crp), "dat_cr_query");
		pd_in = crp.private_data;
		pd_in_len = crp.private_data_size;
		if (pd_in_len < 1)
			fail("the request carried no private data");
		expect(pd_in, (size_t)pd_in_len, peer_seed + 2,
		       "the request's private data");
		ok("connection request with %d bytes of private data: every byte as sent",
		   (int)pd_in_len);
		check(dat_cr_accept(cr, ep, pmax, pd_out), "dat_cr_accept");
		wait_event(conn_evd, &e, "ESTABLISHED");
		if (e.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
			fail("connection event %s, wanted ESTABLISHED",
			     conn_event_name(e.event_number));
		ok("accepted with %d bytes of private data: ESTABLISHED", (int)pmax);
		check(dat_psp_free(psp), "dat_psp_free");
	} else {
		struct sockaddr_in sa;
		DAT_CONNECTION_EVENT_DATA *cd;

		memset(&sa, 0, sizeof(sa));
		sa.sin_family = AF_INET;
		if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
			usage();
		check(dat_ep_connect(ep, (DAT_IA_ADDRESS_PTR)&sa, port, WAIT_US,
				     pmax, pd_out, DAT_QOS_BEST_EFFORT,
				     DAT_CONNECT_DEFAULT_FLAG), "dat_ep_connect");
		wait_event(conn_evd, &e, "ESTABLISHED");
		if (e.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
			fail("connection event %s, wanted ESTABLISHED",
			     conn_event_name(e.event_number));
		cd = &e.event_data.connect_event_data;
		if (cd->private_data_size < 1)
			fail("the accept carried no private data");
		expect(cd->private_data, (size_t)cd->private_data_size,
		       peer_seed + 2, "the accept's private data");
		ok("connected with %d bytes of private data; ESTABLISHED with the "
		   "accept's %d bytes: every byte as sent", (int)pmax,
		   (int)cd->private_data_size);
	}

	/* client 8 in / 4 out, server 2 in / 16 out: each side's out is at
	 * most the peer's in, its in at most the peer's out */
	check(dat_ep_query(ep, DAT_EP_FIELD_ALL, &param), "dat_ep_query");
	want_in = is_server ? 2 : 8;
	want_out = is_server ? 8 : 2;
	if ((int)param.ep_attr.max_rdma_read_in != want_in ||
	    (int)param.ep_attr.max_rdma_read_out != want_out)
		fail("read limits in %d out %d, wanted in %d out %d",
		     (int)param.ep_attr.max_rdma_read_in,
		     (int)param.ep_attr.max_rdma_read_out, want_in, want_out);
	ok("read limits negotiated: in %d, out %d", want_in, want_out);

	/* Send each way: where the peer may write and read */
	send_msg(M_INFO, (uint64_t)(uintptr_t)win.p, win.rctx, my_seed);
	peer = recv_msg(M_INFO, peer_seed);
	if (peer.len != WIN_LEN)
		fail("the peer's window is %u bytes", peer.len);
	ok("Send each way: %zu bytes, every byte as sent", sizeof(peer.body));

	/* RDMA Write each way, then a Send that says so */
	fill(loc.p, HALF, my_seed + 3);
	rdma(false, &loc, 0, peer.addr, peer.rmr, 2);
	{
		DAT_DTO_COMPLETION_EVENT_DATA d = next_dto(req_evd, "RDMA Write");

		if (d.user_cookie.as_64 != 2 || d.status != DAT_DTO_SUCCESS)
			fail("RDMA Write completed with status %d", (int)d.status);
	}
	send_msg(M_WROTE, 0, 0, my_seed);
	recv_msg(M_WROTE, peer_seed);
	expect(win.p, HALF, peer_seed + 3, "the peer's RDMA Write");
	ok("RDMA Write each way: %u bytes, every byte as written", HALF);

	/* RDMA Read each way */
	memset(loc.p + HALF, 0, HALF);
	rdma(true, &loc, HALF, peer.addr + HALF, peer.rmr, 3);
	{
		DAT_DTO_COMPLETION_EVENT_DATA d = next_dto(req_evd, "RDMA Read");

		if (d.user_cookie.as_64 != 3 || d.status != DAT_DTO_SUCCESS ||
		    d.transfered_length != HALF)
			fail("RDMA Read completed with status %d, %llu bytes",
			     (int)d.status, (unsigned long long)d.transfered_length);
	}
	expect(loc.p + HALF, HALF, peer_seed + 1, "an RDMA Read");
	ok("RDMA Read each way: %u bytes, every byte as the peer holds it", HALF);
	/* the side about to be wronged: its goodbye reached the peer, whose
	 * refused request may end the connection before the goodbye's
	 * completion comes back */
	send_msg_ending(M_BYE, 0, 0, my_seed, bad && !offender);
	recv_msg(M_BYE, peer_seed);

	if (bad && offender) {
		DAT_DTO_COMPLETION_EVENT_DATA d;
		DAT_EVENT_NUMBER end;

		/* a key the peer never gave: its memory must stay as it is */
		rdma(bad_read, &loc, 0, peer.addr, peer.rmr ^ BAD_KEY_XOR, 4);
		d = next_dto(req_evd, "the refused RDMA request");
		if (d.user_cookie.as_64 != 4)
			fail("completion of cookie %llu, wanted 4",
			     (unsigned long long)d.user_cookie.as_64);
		if (d.status == DAT_DTO_ERR_REMOTE_ACCESS) {
			ok("RDMA %s with a key the peer never gave: DAT_DTO_ERR_REMOTE_ACCESS",
			   bad);
		} else if (local_completion && !bad_read &&
			   d.status == DAT_DTO_SUCCESS) {
			ok("RDMA write with a key the peer never gave: SUCCESS "
			   "(it completed once sent; the refusal arrives as the "
			   "connection's end)");
		} else if (no_remote_errors &&
			   (d.status == DAT_DTO_ERR_FLUSHED ||
			    d.status == DAT_DTO_ERR_LOCAL_EP)) {
			ok("RDMA %s with a key the peer never gave: %s (this "
			   "provider cannot report the peer's refusal; it "
			   "arrives as the connection's end)", bad,
			   d.status == DAT_DTO_ERR_FLUSHED ? "ERR_FLUSHED" :
			   "ERR_LOCAL_EP");
		} else {
			fail("RDMA %s with a bad key completed with status %d, "
			     "wanted DAT_DTO_ERR_REMOTE_ACCESS", bad, (int)d.status);
		}
		end = expect_end();
		ok("then the connection ended: %s", conn_event_name(end));
	} else if (bad) {
		DAT_EVENT_NUMBER end = expect_end();

		ok("the peer's RDMA %s with a bad key ended the connection: %s",
		   bad, conn_event_name(end));
		expect(win.p, HALF, peer_seed + 3, "memory after the refused request");
		expect(win.p + HALF, HALF, my_seed + 1,
		       "memory after the refused request");
		ok("memory untouched by the refused request");
	} else {
		if (!is_server)
			check(dat_ep_disconnect(ep, DAT_CLOSE_GRACEFUL_FLAG),
			      "dat_ep_disconnect");
		expect_end();
		ok("disconnected");
	}

	/* the receives still posted flushed; then everything goes */
	check(dat_ep_free(ep), "dat_ep_free");
	check(dat_lmr_free(win.lmr), "dat_lmr_free");
	check(dat_lmr_free(loc.lmr), "dat_lmr_free");
	check(dat_lmr_free(msgs.lmr), "dat_lmr_free");
	free(win.p);
	free(loc.p);
	free(msgs.p);
	if (is_server)
		check(dat_evd_free(cr_evd), "dat_evd_free");
	check(dat_evd_free(conn_evd), "dat_evd_free");
	check(dat_evd_free(req_evd), "dat_evd_free");
	check(dat_evd_free(recv_evd), "dat_evd_free");
	check(dat_pz_free(pz), "dat_pz_free");
	check(dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG), "dat_ia_close");
	ok("all checks passed");
	return 0;
}
