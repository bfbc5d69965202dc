/* The behaviours OpenFabrics-era DAT 1.2 programs rely on, and DAT_STRICT
 * (libdat(7)), through the public API over the IA under test (ofi-tcp),
 * in one process.
 *
 * Every test runs in a process of its own (Check forks), so DAT_STRICT,
 * which the core reads once per process, is set by the fixture of the
 * strict test case before the first dat_ call.  The warning tests point
 * fd 2 at a temporary file before the first dat_ call and count the
 * "compatibility:" lines the core printed through its log. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>

#include "dat_gen.h"	/* <dat/udat.h>, or <dat2/udat.h> with DAT_GEN=2 */

#include "conn_harness.h"

static struct hx_ia x;

#define ALL_LOCAL (DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG)
#define WIDE_QUAL ((DAT_CONN_QUAL)0xAffab1e)

/* ---- helpers ------------------------------------------------------------ */

static int stderr_fd = -1;    /* the temporary file fd 2 points at, or -1 */

/* Points fd 2 at a fresh temporary file (before the first dat_ call). */
static void capture_stderr(void)
{
	char path[] = "/tmp/test_compat.XXXXXX";
	int fd = mkstemp(path);

	ck_assert_int_ge(fd, 0);
	unlink(path);
	ck_assert_int_eq(dup2(fd, 2), 2);
	stderr_fd = fd;
}

/* How many lines of what was captured contain "compatibility:". */
static int compat_lines(void)
{
	char buf[8192];
	ssize_t n;
	const char *p;
	int count = 0;

	ck_assert_int_ge(stderr_fd, 0);
	n = pread(stderr_fd, buf, sizeof(buf) - 1, 0);
	ck_assert_int_ge(n, 0);
	buf[n] = '\0';
	for (p = buf; (p = strstr(p, "compatibility:")) != NULL; p++)
		count++;
	return count;
}

static void setup_default(void)
{
	unsetenv("DAT_STRICT");
	hx_setup();
}

static void setup_strict(void)
{
	setenv("DAT_STRICT", "1", 1);
	hx_setup();
}

static DAT_VADDR va(const void *p)
{
	return (DAT_VADDR)(uintptr_t)p;
}

static DAT_DTO_COOKIE cookie(uint64_t v)
{
	DAT_DTO_COOKIE c;

	c.as_64 = v;
	return c;
}

static DAT_LMR_TRIPLET trip(DAT_LMR_CONTEXT ctx, const void *p, DAT_VLEN len)
{
	DAT_LMR_TRIPLET t;

	memset(&t, 0, sizeof(t));
	t.lmr_context = ctx;
	t.virtual_address = va(p);
	t.segment_length = len;
	return t;
}

/* A registered buffer. */
struct mem {
	unsigned char *buf;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static void mem_create(struct mem *m, DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv)
{
	DAT_REGION_DESCRIPTION r;

	memset(m, 0, sizeof(*m));
	m->buf = calloc(1, (size_t)len);
	ck_assert_ptr_nonnull(m->buf);
	memset(&r, 0, sizeof(r));
	r.for_va = m->buf;
	HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, r, len, x.pz, priv, &m->lmr,
			     &m->lctx, &m->rctx, NULL, NULL));
}

static void mem_free(struct mem *m)
{
	HX_OK(dat_lmr_free(m->lmr));
	free(m->buf);
	memset(m, 0, sizeof(*m));
}

/* An EP with an EVD per stream. */
struct dep {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE conn, req, rcv;
};

/* rcv_cno: the receive EVD's CNO; the request EVD joins it too when
 * req_on_cno */
static void dep_create_cno(struct dep *d, DAT_CNO_HANDLE rcv_cno, bool req_on_cno)
{
	memset(d, 0, sizeof(*d));
	HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &d->conn));
	HX_OK(dat_evd_create(x.ia, 16, req_on_cno ? rcv_cno : DAT_HANDLE_NULL,
			     DAT_EVD_DTO_FLAG, &d->req));
	HX_OK(dat_evd_create(x.ia, 16, rcv_cno, DAT_EVD_DTO_FLAG, &d->rcv));
	HX_OK(dat_ep_create(x.ia, x.pz, d->rcv, d->req, d->conn, NULL, &d->ep));
}

static void dep_create(struct dep *d, DAT_CNO_HANDLE rcv_cno)
{
	dep_create_cno(d, rcv_cno, false);
}

static void dep_free(struct dep *d)
{
	HX_OK(dat_ep_free(d->ep));
	HX_OK(dat_evd_free(d->conn));
	HX_OK(dat_evd_free(d->req));
	HX_OK(dat_evd_free(d->rcv));
	memset(d, 0, sizeof(*d));
}

/* A connected pair inside the process: cl connects to a PSP of x on
 * qual (0: any), sv accepts. */
struct pair {
	struct dep cl, sv;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
};

/* The server's receive EVD on sv_cno, its request EVD too when
 * sv_req_on_cno. */
static void pair_connect_cno(struct pair *p, DAT_CONN_QUAL qual, DAT_CNO_HANDLE sv_cno,
			     bool sv_req_on_cno)
{
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	struct sockaddr_in sa;
	DAT_CR_HANDLE cr;

	dep_create(&p->cl, DAT_HANDLE_NULL);
	dep_create_cno(&p->sv, sv_cno, sv_req_on_cno);
	if (qual) {
		HX_OK(dat_psp_create(x.ia, qual, x.cr, DAT_PSP_CONSUMER_FLAG, &p->psp));
		p->qual = qual;
	} else {
		p->psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &p->qual);
	}
	hx_loopback(&sa);
	HX_OK(dat_ep_connect(p->cl.ep, (DAT_IA_ADDRESS_PTR)&sa, p->qual, HX_CONNECT_US, 0,
			     NULL, DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	cr = hx_wait_cr(x.cr, &arr);
	/* the request names the qualifier the consumer listens on */
	ck_assert_msg(arr.conn_qual == p->qual, "CR arrival names qualifier %#" PRIx64
		      ", the PSP's is %#" PRIx64, (uint64_t)arr.conn_qual, (uint64_t)p->qual);
	ck_assert_ptr_eq(arr.sp_handle.psp_handle, p->psp);
	HX_OK(dat_cr_accept(cr, p->sv.ep, 0, NULL));
	hx_expect_event(p->sv.conn, DAT_CONNECTION_EVENT_ESTABLISHED, p->sv.ep, NULL);
	hx_expect_event(p->cl.conn, DAT_CONNECTION_EVENT_ESTABLISHED, p->cl.ep, NULL);
}

static void pair_connect(struct pair *p, DAT_CONN_QUAL qual, DAT_CNO_HANDLE sv_cno)
{
	pair_connect_cno(p, qual, sv_cno, false);
}

static void pair_free(struct pair *p)
{
	dep_free(&p->cl);
	dep_free(&p->sv);
	HX_OK(dat_psp_free(p->psp));
}

static void expect_dto(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep, uint64_t ck, DAT_VLEN len)
{
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;

	hx_wait(evd, &ev);
	ck_assert_msg(ev.event_number == DAT_DTO_COMPLETION_EVENT, "got %s, expected a DTO "
		      "completion", hx_event_str(ev.event_number));
	ck_assert_ptr_eq(d->ep_handle, ep);
	ck_assert_uint_eq(d->user_cookie.as_64, ck);
	ck_assert_int_eq(d->status, DAT_DTO_SUCCESS);
	ck_assert_uint_eq(d->transfered_length, len);
}

/* The fold the core documents (libdat(7), dat_psp_create(3)). */
static uint16_t fold(DAT_CONN_QUAL q)
{
	return q <= 0xFFFF ? (uint16_t)q : (uint16_t)(q % 32001u + 33534u);
}

/* A qualifier above 65535 whose port is free right now: a port a PSP had
 * and gave back, in the fold's range, and a qualifier that folds onto it. */
static DAT_CONN_QUAL free_wide_qual(void)
{
	DAT_CONN_QUAL port, q;
	int i;

	for (i = 0; i < 200; i++) {
		port = hx_free_qual(&x);
		if (port >= 33534 && port <= 65534) {
			q = (port - 33534) + 32001u * 1000u;
			ck_assert_uint_eq(fold(q), port);
			return q;
		}
	}
	ck_abort_msg("no free port in 33534..65534 after 200 tries");
	return 0;
}

/* ---- 1: DAT_QUEUE_EMPTY ------------------------------------------------- */

/* dat_evd_dequeue on an empty EVD returns DAT_QUEUE_EMPTY itself, so
 * "== DAT_QUEUE_EMPTY" loops end; DAT_GET_TYPE still says QUEUE_EMPTY.
 * The timeouts of dat_evd_wait and dat_cno_wait keep their class bit. */
START_TEST(dequeue_empty_is_bare)
{
	DAT_EVD_HANDLE evd, out;
	DAT_CNO_HANDLE cno;
	DAT_EVENT ev;
	DAT_COUNT nmore;
	int loops = 0;

	hx_ia_open(&x);
	HX_OK(dat_cno_create(x.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	HX_OK(dat_evd_create(x.ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &evd));
	HX_RC(dat_evd_dequeue(evd, &ev), DAT_QUEUE_EMPTY);
	ck_assert_uint_eq(DAT_GET_TYPE(dat_evd_dequeue(evd, &ev)), DAT_QUEUE_EMPTY);
	/* the legacy loop: drain until the bare value */
	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	HX_OK(dat_evd_post_se(evd, &ev));
	HX_OK(dat_evd_post_se(evd, &ev));
	while (dat_evd_dequeue(evd, &ev) != DAT_QUEUE_EMPTY)
		ck_assert_int_lt(++loops, 3);
	ck_assert_int_eq(loops, 2);
	/* unchanged: the waits' timeouts */
	HX_RC(dat_evd_wait(evd, 1000, 1, &ev, &nmore),
	      DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE));
	HX_RC(dat_cno_wait(cno, 1000, &out), DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE));
	HX_OK(dat_evd_free(evd));
	HX_OK(dat_cno_free(cno));
	hx_ia_close(&x);
}
END_TEST

START_TEST(strict_dequeue_empty_has_class_bit)
{
	DAT_EVD_HANDLE evd;
	DAT_EVENT ev;

	hx_ia_open(&x);
	HX_OK(dat_evd_create(x.ia, 4, DAT_HANDLE_NULL, DAT_EVD_SOFTWARE_FLAG, &evd));
	HX_RC(dat_evd_dequeue(evd, &ev), DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE));
	HX_OK(dat_evd_free(evd));
	hx_ia_close(&x);
}
END_TEST

/* ---- 2: local read implied ---------------------------------------------- */

/* An LMR registered with LOCAL_WRITE alone is the source of a Send and of
 * an RDMA Write, and the bytes arrive; the relaxed check says so once. */
START_TEST(local_read_implied)
{
	struct pair pr;
	struct mem wo, dst, remote;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET rt;

	setenv("DAT_DBG_TYPE", "1", 1);
	unsetenv("DAT_DBG_DEST");
	capture_stderr();
	hx_ia_open(&x);
	pair_connect(&pr, 0, DAT_HANDLE_NULL);
	mem_create(&wo, 256, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	mem_create(&dst, 256, ALL_LOCAL);
	mem_create(&remote, 256, DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG);
	ck_assert_int_eq(compat_lines(), 0);

	hx_pattern(wo.buf, 100, 7);
	t = trip(dst.lctx, dst.buf, 256);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 1, &t, cookie(0x11), DAT_COMPLETION_DEFAULT_FLAG));
	t = trip(wo.lctx, wo.buf, 100);
	HX_OK(dat_ep_post_send(pr.cl.ep, 1, &t, cookie(0x22), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(pr.cl.req, pr.cl.ep, 0x22, 100);
	expect_dto(pr.sv.rcv, pr.sv.ep, 0x11, 100);
	ck_assert(hx_pattern_ok(dst.buf, 100, 7));

	hx_pattern(wo.buf, 200, 9);
	memset(&rt, 0, sizeof(rt));
	rt.rmr_context = remote.rctx;
	rt.HX_RMR_ADDR = va(remote.buf);
	rt.segment_length = 200;
	t = trip(wo.lctx, wo.buf, 200);
	HX_OK(dat_ep_post_rdma_write(pr.cl.ep, 1, &t, cookie(0x33), &rt,
				     DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(pr.cl.req, pr.cl.ep, 0x33, 200);
	ck_assert(hx_pattern_ok(remote.buf, 200, 9));
	/* one warning per process, however often the check is relaxed */
	ck_assert_int_eq(compat_lines(), 1);

	/* only local read is implied: an RDMA Read still needs LOCAL_WRITE */
	{
		struct mem ro;

		mem_create(&ro, 64, DAT_MEM_PRIV_LOCAL_READ_FLAG);
		t = trip(ro.lctx, ro.buf, 64);
		rt.segment_length = 64;
		HX_RC_TYPE(dat_ep_post_rdma_read(pr.cl.ep, 1, &t, cookie(0x44), &rt,
						 DAT_COMPLETION_DEFAULT_FLAG),
			   DAT_PRIVILEGES_VIOLATION);
		HX_RC_TYPE(dat_ep_post_recv(pr.cl.ep, 1, &t, cookie(0x55),
					    DAT_COMPLETION_DEFAULT_FLAG),
			   DAT_PRIVILEGES_VIOLATION);
		mem_free(&ro);
	}
	hx_expect_empty(pr.cl.req);
	pair_free(&pr);
	mem_free(&wo);
	mem_free(&dst);
	mem_free(&remote);
	hx_ia_close(&x);
}
END_TEST

/* DAT_DBG_TYPE=0 silences the warning; the behaviour stays. */
START_TEST(warning_silenced_by_dbg_type)
{
	struct pair pr;
	struct mem wo, dst;
	DAT_LMR_TRIPLET t;

	setenv("DAT_DBG_TYPE", "0", 1);
	capture_stderr();
	hx_ia_open(&x);
	pair_connect(&pr, 0, DAT_HANDLE_NULL);
	mem_create(&wo, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	mem_create(&dst, 64, ALL_LOCAL);
	t = trip(dst.lctx, dst.buf, 64);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG));
	t = trip(wo.lctx, wo.buf, 64);
	HX_OK(dat_ep_post_send(pr.cl.ep, 1, &t, cookie(2), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(pr.cl.req, pr.cl.ep, 2, 64);
	expect_dto(pr.sv.rcv, pr.sv.ep, 1, 64);
	ck_assert_int_eq(compat_lines(), 0);
	pair_free(&pr);
	mem_free(&wo);
	mem_free(&dst);
	hx_ia_close(&x);
}
END_TEST

/* A zero-length LMR: DAT_LENGTH_ERROR by default, what programs written
 * for OpenFabrics' 1.2 providers test for (test_mem.c); DAT 1.2's own
 * INVALID_PARAMETER naming the length under DAT_STRICT=1, NULL or not. */
START_TEST(strict_zero_length_lmr)
{
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
	static unsigned char buf[64];

	hx_ia_open(&x);
	memset(&r, 0, sizeof(r));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, r, 0, x.pz, ALL_LOCAL, &lmr,
			     NULL, NULL, NULL, NULL), HX_LMR_ARG(4));
	r.for_va = buf;
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, r, 0, x.pz, ALL_LOCAL, &lmr,
			     NULL, NULL, NULL, NULL), HX_LMR_ARG(4));
	ck_assert_ptr_eq(lmr, DAT_HANDLE_NULL);
	hx_ia_close(&x);
}
END_TEST

START_TEST(strict_local_read_required)
{
	struct pair pr;
	struct mem wo, remote;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET rt;

	hx_ia_open(&x);
	pair_connect(&pr, 0, DAT_HANDLE_NULL);
	mem_create(&wo, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	mem_create(&remote, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG);
	t = trip(wo.lctx, wo.buf, 64);
	HX_RC_TYPE(dat_ep_post_send(pr.cl.ep, 1, &t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_PRIVILEGES_VIOLATION);
	memset(&rt, 0, sizeof(rt));
	rt.rmr_context = remote.rctx;
	rt.HX_RMR_ADDR = va(remote.buf);
	rt.segment_length = 64;
	HX_RC_TYPE(dat_ep_post_rdma_write(pr.cl.ep, 1, &t, cookie(2), &rt,
					  DAT_COMPLETION_DEFAULT_FLAG),
		   DAT_PRIVILEGES_VIOLATION);
	hx_expect_empty(pr.cl.req);
	pair_free(&pr);
	mem_free(&wo);
	mem_free(&remote);
	hx_ia_close(&x);
}
END_TEST

/* ---- 3: wide connection qualifiers -------------------------------------- */

/* A PSP and a connect with a qualifier above 65535 meet (both sides fold
 * it alike); the PSP, the request and the active EP report the
 * consumer's qualifier; another qualifier that folds onto the same port,
 * and that port itself, collide with it. */
START_TEST(wide_qual_psp_connect)
{
	DAT_CONN_QUAL q;
	DAT_PSP_PARAM pp;
	DAT_EP_PARAM ep;
	DAT_PSP_HANDLE other;
	struct pair pr;

	setenv("DAT_DBG_TYPE", "1", 1);
	unsetenv("DAT_DBG_DEST");
	capture_stderr();
	hx_ia_open(&x);
	q = free_wide_qual();
	pair_connect(&pr, q, DAT_HANDLE_NULL);
	memset(&pp, 0, sizeof(pp));
	HX_OK(dat_psp_query(pr.psp, DAT_PSP_FIELD_ALL, &pp));
	ck_assert_uint_eq(pp.conn_qual, q);
	memset(&ep, 0, sizeof(ep));
	HX_OK(dat_ep_query(pr.cl.ep, DAT_EP_FIELD_REMOTE_PORT_QUAL, &ep));
	ck_assert_uint_eq(ep.remote_port_qual, q);
	/* collisions (dat_psp_create(3)) */
	HX_RC_TYPE(dat_psp_create(x.ia, q + 32001u, x.cr, DAT_PSP_CONSUMER_FLAG, &other),
		   DAT_CONN_QUAL_IN_USE);
	HX_RC_TYPE(dat_psp_create(x.ia, fold(q), x.cr, DAT_PSP_CONSUMER_FLAG, &other),
		   DAT_CONN_QUAL_IN_USE);
	pair_free(&pr);
	ck_assert_int_eq(compat_lines(), 1);

	/* the issue's example is accepted: listening may only fail when its
	 * port is taken by someone else right now */
	{
		DAT_RETURN rc = dat_psp_create(x.ia, WIDE_QUAL, x.cr, DAT_PSP_CONSUMER_FLAG,
					       &other);

		if (rc == DAT_SUCCESS) {
			memset(&pp, 0, sizeof(pp));
			HX_OK(dat_psp_query(other, DAT_PSP_FIELD_ALL, &pp));
			ck_assert_uint_eq(pp.conn_qual, WIDE_QUAL);
			HX_OK(dat_psp_free(other));
		} else {
			ck_assert_msg(DAT_GET_TYPE(rc) == DAT_CONN_QUAL_IN_USE,
				      "dat_psp_create(0xAffab1e) returned %s", hx_rc_str(rc));
		}
	}
	hx_ia_close(&x);
}
END_TEST

/* An RSP on a wide qualifier: the connect reaches its EP, and
 * dat_rsp_query reports the consumer's qualifier. */
START_TEST(wide_qual_rsp)
{
	DAT_CONN_QUAL q;
	DAT_RSP_HANDLE rsp;
	DAT_RSP_PARAM rp;
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	struct dep cl, sv;
	struct sockaddr_in sa;
	DAT_CR_HANDLE cr;

	hx_ia_open(&x);
	q = free_wide_qual();
	dep_create(&cl, DAT_HANDLE_NULL);
	dep_create(&sv, DAT_HANDLE_NULL);
	HX_OK(dat_rsp_create(x.ia, q, sv.ep, x.cr, &rsp));
	memset(&rp, 0, sizeof(rp));
	HX_OK(dat_rsp_query(rsp, DAT_RSP_FIELD_ALL, &rp));
	ck_assert_uint_eq(rp.conn_qual, q);
	hx_loopback(&sa);
	HX_OK(dat_ep_connect(cl.ep, (DAT_IA_ADDRESS_PTR)&sa, q, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	cr = hx_wait_cr(x.cr, &arr);
	ck_assert_uint_eq(arr.conn_qual, q);
	ck_assert_ptr_eq(arr.sp_handle.rsp_handle, rsp);
	HX_OK(dat_cr_accept(cr, DAT_HANDLE_NULL, 0, NULL));
	hx_expect_event(sv.conn, DAT_CONNECTION_EVENT_ESTABLISHED, sv.ep, NULL);
	hx_expect_event(cl.conn, DAT_CONNECTION_EVENT_ESTABLISHED, cl.ep, NULL);
	HX_OK(dat_rsp_free(rsp));
	dep_free(&cl);
	dep_free(&sv);
	hx_ia_close(&x);
}
END_TEST

/* dat_psp_create_any still hands out qualifiers that are their own
 * port, so they map one to one. */
START_TEST(create_any_is_one_to_one)
{
	DAT_CONN_QUAL q;
	DAT_PSP_HANDLE psp;
	DAT_PSP_PARAM pp;
	int i;

	hx_ia_open(&x);
	for (i = 0; i < 4; i++) {
		psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &q);
		ck_assert(q > 0 && q <= 0xFFFF);
		ck_assert_uint_eq(fold(q), q);
		memset(&pp, 0, sizeof(pp));
		HX_OK(dat_psp_query(psp, DAT_PSP_FIELD_ALL, &pp));
		ck_assert_uint_eq(pp.conn_qual, q);
		HX_OK(dat_psp_free(psp));
	}
	hx_ia_close(&x);
}
END_TEST

START_TEST(strict_wide_qual_refused)
{
	DAT_PSP_HANDLE psp;
	DAT_RSP_HANDLE rsp;
	struct hx_ep e;
	struct sockaddr_in sa;

	hx_ia_open(&x);
	hx_ep_create(&x, &e, -1, -1);
	hx_loopback(&sa);
	HX_RC(dat_psp_create(x.ia, WIDE_QUAL, x.cr, DAT_PSP_CONSUMER_FLAG, &psp), HX_ARG(2));
	HX_RC(dat_psp_create(x.ia, 65536, x.cr, DAT_PSP_CONSUMER_FLAG, &psp), HX_ARG(2));
	HX_RC(dat_rsp_create(x.ia, WIDE_QUAL, e.ep, x.cr, &rsp), HX_ARG(2));
	HX_RC(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, WIDE_QUAL, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG), HX_ARG(3));
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_UNCONNECTED);
	hx_expect_empty(e.conn);
	hx_ep_free(&e);
	hx_ia_close(&x);
}
END_TEST

/* ---- 6: the EVD dat_cno_wait names -------------------------------------- */

static void post_sw(DAT_EVD_HANDLE evd, uintptr_t tag)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_SOFTWARE_EVENT;
	ev.event_data.software_event_data.pointer = (DAT_PVOID)tag;
	HX_OK(dat_evd_post_se(evd, &ev));
}

static void expect_sw(DAT_EVD_HANDLE evd, uintptr_t tag)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	HX_OK(dat_evd_dequeue(evd, &ev));
	ck_assert_int_eq(ev.event_number, DAT_SOFTWARE_EVENT);
	ck_assert_ptr_eq(ev.event_data.software_event_data.pointer, (DAT_PVOID)tag);
}

/* Every EVD dat_cno_wait names has the event that woke the waiter: two
 * EVDs that fired are named one after the other (oldest first), none is
 * lost to the later trigger, and an EVD whose event a consumer already
 * took is not named. */
START_TEST(cno_names_the_evd_with_the_event)
{
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE a, b, out;
	DAT_EVENT ev;

	hx_ia_open(&x);
	HX_OK(dat_cno_create(x.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	HX_OK(dat_evd_create(x.ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &a));
	HX_OK(dat_evd_create(x.ia, 4, cno, DAT_EVD_SOFTWARE_FLAG, &b));

	post_sw(a, 1);
	post_sw(b, 2);
	HX_OK(dat_cno_wait(cno, HX_WAIT_US, &out));
	ck_assert_ptr_eq(out, a);
	expect_sw(out, 1);
	HX_OK(dat_cno_wait(cno, HX_WAIT_US, &out));
	ck_assert_ptr_eq(out, b);
	expect_sw(out, 2);
	HX_RC_TYPE(dat_cno_wait(cno, 1000, &out), DAT_QUEUE_EMPTY);
	ck_assert_ptr_eq(out, DAT_HANDLE_NULL);

	/* b fired last but a consumer drained it: a is named */
	post_sw(a, 3);
	post_sw(b, 4);
	expect_sw(b, 4);
	HX_OK(dat_cno_wait(cno, HX_WAIT_US, &out));
	ck_assert_ptr_eq(out, a);
	expect_sw(out, 3);
	/* a fired and was drained before the wait: nothing to name */
	post_sw(a, 5);
	expect_sw(a, 5);
	HX_RC_TYPE(dat_cno_wait(cno, 1000, &out), DAT_QUEUE_EMPTY);
	HX_RC_TYPE(dat_evd_dequeue(a, &ev), DAT_QUEUE_EMPTY);
	HX_RC_TYPE(dat_evd_dequeue(b, &ev), DAT_QUEUE_EMPTY);

	HX_OK(dat_evd_free(a));
	HX_OK(dat_evd_free(b));
	HX_OK(dat_cno_free(cno));
	hx_ia_close(&x);
}
END_TEST

/* A receive completion wakes a CNO waiter; the EVD named is the receive
 * EVD, and the completion is there to dequeue. */
START_TEST(cno_names_the_dto_evd)
{
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE out;
	struct pair pr;
	struct mem src, dst;
	DAT_LMR_TRIPLET t;
	DAT_EVENT ev;

	hx_ia_open(&x);
	HX_OK(dat_cno_create(x.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	pair_connect(&pr, 0, cno);
	mem_create(&src, 64, ALL_LOCAL);
	mem_create(&dst, 64, ALL_LOCAL);
	HX_RC_TYPE(dat_cno_wait(cno, 1000, &out), DAT_QUEUE_EMPTY);
	t = trip(dst.lctx, dst.buf, 64);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 1, &t, cookie(0xD0), DAT_COMPLETION_DEFAULT_FLAG));
	t = trip(src.lctx, src.buf, 32);
	HX_OK(dat_ep_post_send(pr.cl.ep, 1, &t, cookie(0xD1), DAT_COMPLETION_DEFAULT_FLAG));
	HX_OK(dat_cno_wait(cno, HX_WAIT_US, &out));
	ck_assert_ptr_eq(out, pr.sv.rcv);
	memset(&ev, 0, sizeof(ev));
	HX_OK(dat_evd_dequeue(out, &ev));
	ck_assert_int_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64, 0xD0);
	expect_dto(pr.cl.req, pr.cl.ep, 0xD1, 32);
	pair_free(&pr);
	mem_free(&src);
	mem_free(&dst);
	HX_OK(dat_cno_free(cno));
	hx_ia_close(&x);
}
END_TEST

/* The peer of cno_skips_the_evd_its_waiter_reaped, a process of its own
 * with its own IA: connects to the qualifier the test sends, then answers
 * each 16-byte Send with a 24-byte one, as an independent peer would, so
 * the answer may reach the test before, during or after its wait for its
 * own Send's completion. */
enum { CNO_ROUNDS = 200, MSG_QUAL = 40, MSG_DONE = 41, MSG_ANSWERED = 42 };

static void cno_echo_peer(struct hx_peer *self, void *arg)
{
	struct hx_ia y;
	struct hx_ep e;
	struct hx_msg m;
	DAT_EVD_HANDLE req, rcv;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_TRIPLET t;
	DAT_EVENT ev;
	DAT_COUNT n;
	static unsigned char buf[128];
	int i;

	(void)arg;
	hx_expect_msg(self, MSG_QUAL, &m);
	hx_ia_open(&y);
	memset(&r, 0, sizeof(r));
	r.for_va = buf;
	HX_OK(dat_lmr_create(y.ia, DAT_MEM_TYPE_VIRTUAL, r, sizeof(buf), y.pz, ALL_LOCAL,
			     &lmr, &lctx, &rctx, NULL, NULL));
	HX_OK(dat_evd_create(y.ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &req));
	HX_OK(dat_evd_create(y.ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &rcv));
	HX_OK(dat_evd_create(y.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &e.conn));
	HX_OK(dat_ep_create(y.ia, y.pz, rcv, req, e.conn, NULL, &e.ep));
	t = trip(lctx, buf, 64);
	HX_OK(dat_ep_post_recv(e.ep, 1, &t, cookie(0xC0), DAT_COMPLETION_DEFAULT_FLAG));
	hx_connect(&e, (DAT_CONN_QUAL)m.v[0], 0, NULL);
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, e.ep, NULL);
	for (i = 0; i < CNO_ROUNDS; i++) {
		HX_OK(dat_evd_wait(rcv, HX_WAIT_US, 1, &ev, &n));
		HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT &&
			 ev.event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS,
			 "peer round %d: %s", i, hx_event_str(ev.event_number));
		t = trip(lctx, buf, 64);
		HX_OK(dat_ep_post_recv(e.ep, 1, &t, cookie(0xC1 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		t = trip(lctx, buf + 64, 24);
		HX_OK(dat_ep_post_send(e.ep, 1, &t, cookie(0xE0 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		HX_OK(dat_evd_wait(req, HX_WAIT_US, 1, &ev, &n));
		HX_CHECK(ev.event_number == DAT_DTO_COMPLETION_EVENT &&
			 ev.event_data.dto_completion_event_data.status == DAT_DTO_SUCCESS,
			 "peer round %d: the Send: %s", i, hx_event_str(ev.event_number));
		hx_send(self, MSG_ANSWERED, NULL, 0, NULL, 0);
	}
	hx_expect_msg(self, MSG_DONE, &m);
	HX_OK(dat_ep_disconnect(e.ep, DAT_CLOSE_ABRUPT_FLAG));
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, e.ep, NULL);
	HX_OK(dat_ep_free(e.ep));
	HX_OK(dat_evd_free(e.conn));
	HX_OK(dat_evd_free(req));
	HX_OK(dat_evd_free(rcv));
	HX_OK(dat_lmr_free(lmr));
	hx_ia_close(&y);
}

/* The pattern of programs that share one CNO between their request and
 * receive EVDs: each Send's completion is reaped by dat_evd_wait on the
 * request EVD, then the CNO is waited on for the peer's answer.  An EVD
 * being waited on does not trigger its CNO (DAT 1.2's waited state), and
 * an event its own waiter took is gone: the CNO names the receive EVD,
 * every round, with its event there to dequeue. */
START_TEST(cno_skips_the_evd_its_waiter_reaped)
{
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE out;
	DAT_CR_ARRIVAL_EVENT_DATA arr;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_CR_HANDLE cr;
	struct hx_peer peer;
	struct hx_msg m;
	struct dep sv;
	struct mem src, dst;
	DAT_LMR_TRIPLET t;
	DAT_EVENT ev;
	DAT_COUNT n;
	int64_t v;
	int i;

	/* the peer first: a child forked with our objects made would hold
	 * copies it never frees (LeakSanitizer) */
	hx_spawn(&peer, "echo peer", cno_echo_peer, NULL);
	hx_ia_open(&x);
	HX_OK(dat_cno_create(x.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &cno));
	dep_create_cno(&sv, cno, true);
	mem_create(&src, 64, ALL_LOCAL);
	mem_create(&dst, 64, ALL_LOCAL);
	psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);
	v = (int64_t)qual;
	hx_send(&peer, MSG_QUAL, &v, 1, NULL, 0);
	cr = hx_wait_cr(x.cr, &arr);
	HX_OK(dat_cr_accept(cr, sv.ep, 0, NULL));
	hx_expect_event(sv.conn, DAT_CONNECTION_EVENT_ESTABLISHED, sv.ep, NULL);
	for (i = 0; i < CNO_ROUNDS; i++) {
		t = trip(dst.lctx, dst.buf, 64);
		HX_OK(dat_ep_post_recv(sv.ep, 1, &t, cookie(0x500 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		t = trip(src.lctx, src.buf, 16);
		HX_OK(dat_ep_post_send(sv.ep, 1, &t, cookie(0x600 + (uint64_t)i),
				       DAT_COMPLETION_DEFAULT_FLAG));
		/* the peer has its Send and has answered: the Send's
		 * completion is on its way or here before the wait, the
		 * order that lets it trigger the CNO first */
		hx_expect_msg(&peer, MSG_ANSWERED, &m);
		memset(&ev, 0, sizeof(ev));
		HX_OK(dat_evd_wait(sv.req, HX_WAIT_US, 1, &ev, &n));
		ck_assert_int_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT);
		ck_assert_uint_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64,
				  0x600 + (uint64_t)i);
		/* the CNO: the receive EVD, never the request EVD whose
		 * event the wait above took */
		HX_OK(dat_cno_wait(cno, HX_WAIT_US, &out));
		HX_CHECK(out == sv.rcv, "round %d: dat_cno_wait named %s, the receive EVD "
			 "was due", i, out == sv.req ? "the request EVD" : "another handle");
		memset(&ev, 0, sizeof(ev));
		HX_OK(dat_evd_dequeue(out, &ev));
		ck_assert_int_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT);
		ck_assert_uint_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64,
				  0x500 + (uint64_t)i);
		ck_assert_uint_eq(ev.event_data.dto_completion_event_data.transfered_length, 24);
		HX_RC_TYPE(dat_evd_dequeue(sv.req, &ev), DAT_QUEUE_EMPTY);
	}
	/* nothing left for the CNO to name */
	HX_RC_TYPE(dat_cno_wait(cno, 1000, &out), DAT_QUEUE_EMPTY);
	hx_send(&peer, MSG_DONE, NULL, 0, NULL, 0);
	hx_expect_event(sv.conn, DAT_CONNECTION_EVENT_DISCONNECTED, sv.ep, NULL);
	hx_reap(&peer);
	dep_free(&sv);
	HX_OK(dat_psp_free(psp));
	mem_free(&src);
	mem_free(&dst);
	HX_OK(dat_cno_free(cno));
	hx_ia_close(&x);
}
END_TEST

/* ---- 4: EVDs shared between IAs of one provider ------------------------ */

static struct hx_ia y;       /* a second IA of the same dat.conf entry */

/* EVDs of x for an EP of y (and a CNO of x on the receive EVD). */
struct xevds {
	DAT_EVD_HANDLE conn, req, rcv;
	DAT_CNO_HANDLE cno;
};

static void xevds_create(struct xevds *e)
{
	HX_OK(dat_cno_create(x.ia, DAT_OS_WAIT_PROXY_AGENT_NULL, &e->cno));
	HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &e->conn));
	HX_OK(dat_evd_create(x.ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &e->req));
	HX_OK(dat_evd_create(x.ia, 16, e->cno, DAT_EVD_DTO_FLAG, &e->rcv));
}

static void xevds_free(struct xevds *e)
{
	HX_OK(dat_evd_free(e->conn));
	HX_OK(dat_evd_free(e->req));
	HX_OK(dat_evd_free(e->rcv));
	HX_OK(dat_cno_free(e->cno));
}

/* An EP of y whose three EVDs are x's, connected to sv, an EP of y with
 * its own EVDs, through a PSP of y. */
struct shared {
	struct xevds e;
	DAT_EP_HANDLE ep;            /* y's EP on x's EVDs */
	struct dep sv;               /* y's EP on y's EVDs */
	DAT_PSP_HANDLE psp;
};

static void y_dep_create(struct dep *d)
{
	memset(d, 0, sizeof(*d));
	HX_OK(dat_evd_create(y.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &d->conn));
	HX_OK(dat_evd_create(y.ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->req));
	HX_OK(dat_evd_create(y.ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->rcv));
	HX_OK(dat_ep_create(y.ia, y.pz, d->rcv, d->req, d->conn, NULL, &d->ep));
}

static void shared_connect(struct shared *s)
{
	struct sockaddr_in sa;
	DAT_CONN_QUAL qual;
	DAT_CR_HANDLE cr;
	DAT_EP_PARAM p;

	xevds_create(&s->e);
	HX_OK(dat_ep_create(y.ia, y.pz, s->e.rcv, s->e.req, s->e.conn, NULL, &s->ep));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(s->ep, DAT_EP_FIELD_ALL, &p));
	ck_assert_ptr_eq(p.ia_handle, y.ia);
	ck_assert_ptr_eq(p.recv_evd_handle, s->e.rcv);
	ck_assert_ptr_eq(p.request_evd_handle, s->e.req);
	ck_assert_ptr_eq(p.connect_evd_handle, s->e.conn);
	y_dep_create(&s->sv);
	s->psp = hx_psp_any(&y, DAT_PSP_CONSUMER_FLAG, &qual);
	hx_loopback(&sa);
	HX_OK(dat_ep_connect(s->ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	cr = hx_wait_cr(y.cr, NULL);
	HX_OK(dat_cr_accept(cr, s->sv.ep, 0, NULL));
	hx_expect_event(s->sv.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s->sv.ep, NULL);
	/* the connection event of y's EP arrives on x's EVD */
	hx_expect_event(s->e.conn, DAT_CONNECTION_EVENT_ESTABLISHED, s->ep, NULL);
}

/* An EP of one IA uses a connect, a request and a receive EVD of another
 * IA of the same dat.conf entry: its connection events and both kinds of
 * completions arrive there (the receive one also wakes a CNO of that IA,
 * which names the EVD), the EVDs cannot be freed nor their IA closed
 * gracefully while the EP uses them, and once it is freed both go. */
START_TEST(evds_shared_between_ias)
{
	struct shared s;
	struct mem src, dst;
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_HANDLE ylmr;
	DAT_LMR_CONTEXT yctx;
	unsigned char ybuf[128];
	DAT_LMR_TRIPLET t;
	DAT_EVD_HANDLE out;
	DAT_EVENT ev;

	setenv("DAT_DBG_TYPE", "1", 1);
	unsetenv("DAT_DBG_DEST");
	capture_stderr();
	hx_ia_open(&x);
	hx_ia_open(&y);
	ck_assert_int_eq(compat_lines(), 0);
	shared_connect(&s);
	ck_assert_int_eq(compat_lines(), 1);

	/* y's memory for y's EPs */
	memset(&r, 0, sizeof(r));
	r.for_va = ybuf;
	HX_OK(dat_lmr_create(y.ia, DAT_MEM_TYPE_VIRTUAL, r, sizeof(ybuf), y.pz, ALL_LOCAL,
			     &ylmr, &yctx, NULL, NULL, NULL));
	memset(&src, 0, sizeof(src));
	memset(&dst, 0, sizeof(dst));
	r.for_va = src.buf = calloc(1, 64);
	HX_OK(dat_lmr_create(y.ia, DAT_MEM_TYPE_VIRTUAL, r, 64, y.pz, ALL_LOCAL, &src.lmr,
			     &src.lctx, NULL, NULL, NULL));
	r.for_va = dst.buf = calloc(1, 64);
	HX_OK(dat_lmr_create(y.ia, DAT_MEM_TYPE_VIRTUAL, r, 64, y.pz, ALL_LOCAL, &dst.lmr,
			     &dst.lctx, NULL, NULL, NULL));

	/* a receive of y's EP completes on x's receive EVD, through a CNO */
	t = trip(yctx, ybuf, sizeof(ybuf));
	HX_OK(dat_ep_post_recv(s.ep, 1, &t, cookie(0xA1), DAT_COMPLETION_DEFAULT_FLAG));
	HX_RC_TYPE(dat_cno_wait(s.e.cno, 1000, &out), DAT_QUEUE_EMPTY);
	hx_pattern(src.buf, 48, 3);
	t = trip(src.lctx, src.buf, 48);
	HX_OK(dat_ep_post_send(s.sv.ep, 1, &t, cookie(0xA2), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(s.sv.req, s.sv.ep, 0xA2, 48);
	HX_OK(dat_cno_wait(s.e.cno, HX_WAIT_US, &out));
	ck_assert_ptr_eq(out, s.e.rcv);
	memset(&ev, 0, sizeof(ev));
	HX_OK(dat_evd_dequeue(out, &ev));
	ck_assert_int_eq(ev.event_number, DAT_DTO_COMPLETION_EVENT);
	ck_assert_ptr_eq(ev.evd_handle, s.e.rcv);
	ck_assert_ptr_eq(ev.event_data.dto_completion_event_data.ep_handle, s.ep);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data.user_cookie.as_64, 0xA1);
	ck_assert_uint_eq(ev.event_data.dto_completion_event_data.transfered_length, 48);
	ck_assert(hx_pattern_ok(ybuf, 48, 3));

	/* a send of y's EP completes on x's request EVD */
	t = trip(dst.lctx, dst.buf, 64);
	HX_OK(dat_ep_post_recv(s.sv.ep, 1, &t, cookie(0xB1), DAT_COMPLETION_DEFAULT_FLAG));
	t = trip(yctx, ybuf, 20);
	HX_OK(dat_ep_post_send(s.ep, 1, &t, cookie(0xB2), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(s.e.req, s.ep, 0xB2, 20);
	expect_dto(s.sv.rcv, s.sv.ep, 0xB1, 20);
	ck_assert(memcmp(dst.buf, ybuf, 20) == 0);

	/* in use: neither the EVDs nor their IA go */
	HX_RC(dat_evd_free(s.e.conn), HX_STATE(DAT_INVALID_STATE_EVD_IN_USE));
	HX_RC(dat_evd_free(s.e.rcv), HX_STATE(DAT_INVALID_STATE_EVD_IN_USE));
	HX_RC_TYPE(dat_ia_close(x.ia, DAT_CLOSE_GRACEFUL_FLAG), DAT_INVALID_STATE);

	/* the disconnect of y's EP is reported on x's EVD */
	HX_OK(dat_ep_disconnect(s.ep, DAT_CLOSE_GRACEFUL_FLAG));
	hx_expect_event(s.e.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.ep, NULL);
	hx_expect_event(s.sv.conn, DAT_CONNECTION_EVENT_DISCONNECTED, s.sv.ep, NULL);
	HX_OK(dat_ep_free(s.ep));
	dep_free(&s.sv);
	HX_OK(dat_psp_free(s.psp));
	HX_OK(dat_lmr_free(ylmr));
	HX_OK(dat_lmr_free(src.lmr));
	HX_OK(dat_lmr_free(dst.lmr));
	free(src.buf);
	free(dst.buf);
	hx_ia_close(&y);
	/* y is gone and its EP with it: x's EVDs are free to go */
	hx_expect_empty(s.e.rcv);
	hx_expect_empty(s.e.req);
	xevds_free(&s.e);
	ck_assert_int_eq(compat_lines(), 1);
	hx_ia_close(&x);
}
END_TEST

/* Closing the EVDs' IA abruptly while an EP of another IA uses them: the
 * EP survives, disconnected, without those EVDs; its peer sees the
 * connection end; the rest of the other IA works and closes gracefully. */
START_TEST(abrupt_close_of_the_evds_ia)
{
	struct shared s;
	DAT_EP_PARAM p;
	DAT_EVENT ev;

	hx_ia_open(&x);
	hx_ia_open(&y);
	shared_connect(&s);
	HX_OK(dat_ia_close(x.ia, DAT_CLOSE_ABRUPT_FLAG));
	memset(&x, 0, sizeof(x));
	HX_EXPECT_STATE(s.ep, DAT_EP_STATE_DISCONNECTED);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(s.ep, DAT_EP_FIELD_ALL, &p));
	ck_assert_ptr_eq(p.recv_evd_handle, DAT_HANDLE_NULL);
	ck_assert_ptr_eq(p.request_evd_handle, DAT_HANDLE_NULL);
	ck_assert_ptr_eq(p.connect_evd_handle, DAT_HANDLE_NULL);
	hx_wait(s.sv.conn, &ev);
	ck_assert_msg(ev.event_number == DAT_CONNECTION_EVENT_DISCONNECTED ||
		      ev.event_number == DAT_CONNECTION_EVENT_BROKEN,
		      "the peer saw %s", hx_event_str(ev.event_number));
	/* reset, it takes EVDs of its own IA */
	HX_OK(dat_ep_reset(s.ep));
	HX_EXPECT_STATE(s.ep, DAT_EP_STATE_UNCONNECTED);
	memset(&p, 0, sizeof(p));
	p.connect_evd_handle = s.sv.conn;
	HX_OK(dat_ep_modify(s.ep, DAT_EP_FIELD_CONNECT_EVD_HANDLE, &p));
	HX_OK(dat_ep_free(s.ep));
	dep_free(&s.sv);
	HX_OK(dat_psp_free(s.psp));
	hx_ia_close(&y);
}
END_TEST

/* Closing abruptly the IA whose EP uses another IA's EVDs: the EVDs keep
 * working (the CQ they had on that IA's device is gone with it) and go
 * afterwards, their IA gracefully. */
START_TEST(abrupt_close_of_the_eps_ia)
{
	struct shared s;
	DAT_EVD_HANDLE out;
	DAT_COUNT nmore;
	DAT_EVENT ev;

	hx_ia_open(&x);
	hx_ia_open(&y);
	shared_connect(&s);
	HX_OK(dat_ia_close(y.ia, DAT_CLOSE_ABRUPT_FLAG));
	memset(&y, 0, sizeof(y));
	/* nothing of the freed EP is delivered; the EVDs still work */
	hx_expect_empty(s.e.rcv);
	hx_expect_empty(s.e.req);
	hx_expect_empty(s.e.conn);
	HX_RC_TYPE(dat_evd_wait(s.e.rcv, 1000, 1, &ev, &nmore), DAT_TIMEOUT_EXPIRED);
	HX_RC_TYPE(dat_cno_wait(s.e.cno, 1000, &out), DAT_QUEUE_EMPTY);
	xevds_free(&s.e);
	hx_ia_close(&x);
}
END_TEST

/* Writes a dat.conf with the IA under test's line twice, the second time
 * as "<name>-b": another provider instance of the same library. */
static void two_entry_conf(char *path, size_t len)
{
	const char *conf = getenv("DAT_TEST_CONF");
	const char *name = hx_ia_name();
	char line[2048];
	FILE *in, *out;
	int fd, found = 0;

	snprintf(path, len, "/tmp/test_compat_conf.XXXXXX");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	out = fdopen(fd, "w");
	ck_assert_ptr_nonnull(out);
	in = fopen(conf, "r");
	ck_assert_ptr_nonnull(in);
	while (fgets(line, sizeof(line), in)) {
		if (strncmp(line, name, strlen(name)) == 0 && line[strlen(name)] == ' ') {
			fputs(line, out);
			fprintf(out, "%s-b%s", name, line + strlen(name));
			found = 1;
		}
	}
	fclose(in);
	ck_assert_int_eq(fclose(out), 0);
	ck_assert_msg(found, "no %s line in %s", name, conf);
}

/* An EVD of an IA of another dat.conf entry (another provider instance,
 * even of the same library) is refused, in every role. */
START_TEST(evds_of_another_provider_refused)
{
	char path[64], other[300];
	DAT_EVD_HANDLE conn, dto;
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE zia;
	DAT_PZ_HANDLE zpz;

	two_entry_conf(path, sizeof(path));
	ck_assert_int_eq(setenv("DAT_OVERRIDE", path, 1), 0);
	hx_ia_open(&x);
	snprintf(other, sizeof(other), "%s-b", hx_ia_name());
	HX_OK(dat_ia_open((DAT_NAME_PTR)other, 8, &async, &zia));
	HX_OK(dat_pz_create(zia, &zpz));
	HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &conn));
	HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dto));
	HX_RC(dat_ep_create(zia, zpz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, conn, NULL, &ep),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_CONN));
	HX_RC(dat_ep_create(zia, zpz, dto, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL, &ep),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_RECV));
	HX_RC(dat_ep_create(zia, zpz, DAT_HANDLE_NULL, dto, DAT_HANDLE_NULL, NULL, &ep),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_REQUEST));
	HX_OK(dat_evd_free(conn));
	HX_OK(dat_evd_free(dto));
	HX_OK(dat_pz_free(zpz));
	HX_OK(dat_ia_close(zia, DAT_CLOSE_GRACEFUL_FLAG));
	hx_ia_close(&x);
	unlink(path);
}
END_TEST

/* DAT_STRICT=1: an EVD of another IA is refused, in every role, at
 * create and at modify. */
START_TEST(strict_shared_evds_refused)
{
	struct xevds e;
	DAT_EP_HANDLE ep;
	DAT_EP_PARAM p;

	hx_ia_open(&x);
	hx_ia_open(&y);
	xevds_create(&e);
	HX_RC(dat_ep_create(y.ia, y.pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, e.conn, NULL, &ep),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_CONN));
	HX_RC(dat_ep_create(y.ia, y.pz, e.rcv, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL, &ep),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_RECV));
	HX_RC(dat_ep_create(y.ia, y.pz, DAT_HANDLE_NULL, e.req, DAT_HANDLE_NULL, NULL, &ep),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_REQUEST));
	HX_OK(dat_ep_create(y.ia, y.pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL,
			    &ep));
	memset(&p, 0, sizeof(p));
	p.connect_evd_handle = e.conn;
	HX_RC(dat_ep_modify(ep, DAT_EP_FIELD_CONNECT_EVD_HANDLE, &p),
	      HX_BADH(DAT_INVALID_HANDLE_EVD_CONN));
	HX_OK(dat_ep_free(ep));
	xevds_free(&e);
	hx_ia_close(&y);
	hx_ia_close(&x);
}
END_TEST

/* dat_ep_modify gives an EP another IA's EVDs too (default mode). */
START_TEST(modify_to_shared_evds)
{
	struct xevds e;
	DAT_EP_HANDLE ep;
	DAT_EP_PARAM p;

	hx_ia_open(&x);
	hx_ia_open(&y);
	xevds_create(&e);
	HX_OK(dat_ep_create(y.ia, y.pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL,
			    &ep));
	memset(&p, 0, sizeof(p));
	p.connect_evd_handle = e.conn;
	p.recv_evd_handle = e.rcv;
	HX_OK(dat_ep_modify(ep, DAT_EP_FIELD_CONNECT_EVD_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE,
			    &p));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(ep, DAT_EP_FIELD_ALL, &p));
	ck_assert_ptr_eq(p.connect_evd_handle, e.conn);
	ck_assert_ptr_eq(p.recv_evd_handle, e.rcv);
	HX_RC(dat_evd_free(e.conn), HX_STATE(DAT_INVALID_STATE_EVD_IN_USE));
	/* and takes them back */
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_modify(ep, DAT_EP_FIELD_CONNECT_EVD_HANDLE | DAT_EP_FIELD_RECV_EVD_HANDLE,
			    &p));
	HX_OK(dat_evd_free(e.conn));
	HX_OK(dat_ep_free(ep));
	HX_OK(dat_evd_free(e.req));
	HX_OK(dat_evd_free(e.rcv));
	HX_OK(dat_cno_free(e.cno));
	hx_ia_close(&y);
	hx_ia_close(&x);
}
END_TEST

/* ---- loading the provider leaves the process's signals alone ------------ */

static void own_handler(int sig)
{
	(void)sig;
}

/* Debian's libfabric pulls in PSM libraries whose constructors take over
 * SIGINT, SIGILL, SIGABRT, SIGBUS, SIGSEGV and SIGTERM (issue 12): after
 * the first dat_ia_open, which loads the provider, every signal is
 * handled as before it. */
START_TEST(provider_leaves_signals_alone)
{
	static const int sigs[] = { SIGINT, SIGILL, SIGABRT, SIGBUS, SIGSEGV, SIGTERM };
	struct sigaction mine, now;
	size_t i;

	memset(&mine, 0, sizeof(mine));
	mine.sa_handler = own_handler;
	sigemptyset(&mine.sa_mask);
	ck_assert_int_eq(sigaction(SIGINT, &mine, NULL), 0);
	ck_assert_int_eq(sigaction(SIGTERM, &mine, NULL), 0);
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	signal(SIGILL, SIG_DFL);
	signal(SIGABRT, SIG_DFL);

	hx_ia_open(&x);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		void (*want)(int) = sigs[i] == SIGINT || sigs[i] == SIGTERM ? own_handler : SIG_DFL;

		ck_assert_int_eq(sigaction(sigs[i], NULL, &now), 0);
		HX_CHECK(now.sa_handler == want, "after dat_ia_open, signal %d (%s) has "
			 "another handler", sigs[i], strsignal(sigs[i]));
	}
	hx_ia_close(&x);
}
END_TEST

/* ---- a busy poller lets others run --------------------------------------- */

/* Polls a poller makes before the test gives up on the other thread. */
#define SPIN_LIMIT 1000000L

struct spin {
	DAT_EVD_HANDLE evd;
	atomic_int started, other_ran;
	long polls;
	DAT_RETURN bad;
};

static void *spinner(void *arg)
{
	struct spin *s = arg;
	DAT_EVENT ev;

	atomic_store(&s->started, 1);
	while (!atomic_load(&s->other_ran) && s->polls < SPIN_LIMIT) {
		DAT_RETURN rc = dat_evd_dequeue(s->evd, &ev);

		if (rc != DAT_QUEUE_EMPTY) {
			s->bad = rc;
			break;
		}
		s->polls++;
	}
	return NULL;
}

static void *other_thread(void *arg)
{
	struct spin *s = arg;

	atomic_store(&s->other_ran, 1);
	return NULL;
}

/* Starts fn as a SCHED_FIFO thread (priority 1) pinned to cpu; errno-style
 * result of pthread_create. */
static int start_fifo(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
	struct sched_param sp = { .sched_priority = 1 };
	pthread_attr_t a;
	cpu_set_t set;
	int err;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	ck_assert_int_eq(pthread_attr_init(&a), 0);
	ck_assert_int_eq(pthread_attr_setinheritsched(&a, PTHREAD_EXPLICIT_SCHED), 0);
	ck_assert_int_eq(pthread_attr_setschedpolicy(&a, SCHED_FIFO), 0);
	ck_assert_int_eq(pthread_attr_setschedparam(&a, &sp), 0);
	ck_assert_int_eq(pthread_attr_setaffinity_np(&a, sizeof(set), &set), 0);
	err = pthread_create(t, &a, fn, arg);
	pthread_attr_destroy(&a);
	return err;
}

/* Programs busy-poll with more threads than cores (libdat(7)).  Two
 * real-time FIFO threads of one priority share one CPU: the first spins on
 * an empty DTO EVD, the second only has to run once.  A FIFO thread keeps
 * its CPU until it blocks or yields, so the second runs only if the
 * poller's empty dat_evd_dequeue calls give the CPU up: then the poller
 * sees it at once, never after SPIN_LIMIT polls.  Needs two CPUs and the
 * right to use SCHED_FIFO (root); without them it says so and passes. */
START_TEST(busy_poller_lets_others_run)
{
	struct spin s;
	pthread_t t1, t2;
	cpu_set_t main_cpu;
	int err;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("busy_poller_lets_others_run: not run, one CPU only\n");
		return;
	}
	hx_ia_open(&x);
	memset(&s, 0, sizeof(s));
	atomic_init(&s.started, 0);
	atomic_init(&s.other_ran, 0);
	HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &s.evd));
	/* this thread stays off the CPU the two share */
	CPU_ZERO(&main_cpu);
	CPU_SET(1, &main_cpu);
	ck_assert_int_eq(sched_setaffinity(0, sizeof(main_cpu), &main_cpu), 0);

	err = start_fifo(&t1, 0, spinner, &s);
	if (err == EPERM) {
		printf("busy_poller_lets_others_run: not run, SCHED_FIFO is not allowed here\n");
		HX_OK(dat_evd_free(s.evd));
		hx_ia_close(&x);
		return;
	}
	ck_assert_int_eq(err, 0);
	while (!atomic_load(&s.started))
		sched_yield();
	ck_assert_int_eq(start_fifo(&t2, 0, other_thread, &s), 0);
	ck_assert_int_eq(pthread_join(t1, NULL), 0);
	ck_assert_int_eq(pthread_join(t2, NULL), 0);

	HX_CHECK(s.bad == 0, "dat_evd_dequeue on the empty EVD returned %s", hx_rc_str(s.bad));
	HX_CHECK(s.polls < SPIN_LIMIT, "the poller made %ld empty dat_evd_dequeue calls "
		 "without giving its CPU to the other thread", s.polls);
	HX_OK(dat_evd_free(s.evd));
	hx_ia_close(&x);
}
END_TEST

/* ---- suite -------------------------------------------------------------- */

static Suite *compat_suite(void)
{
	Suite *s = suite_create("compat");
	TCase *tc = tcase_create("default");
	TCase *st = tcase_create("strict");

	tcase_add_checked_fixture(tc, setup_default, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, dequeue_empty_is_bare);
	tcase_add_test(tc, local_read_implied);
	tcase_add_test(tc, warning_silenced_by_dbg_type);
	tcase_add_test(tc, wide_qual_psp_connect);
	tcase_add_test(tc, wide_qual_rsp);
	tcase_add_test(tc, create_any_is_one_to_one);
	tcase_add_test(tc, cno_names_the_evd_with_the_event);
	tcase_add_test(tc, cno_names_the_dto_evd);
	tcase_add_test(tc, cno_skips_the_evd_its_waiter_reaped);
	tcase_add_test(tc, evds_shared_between_ias);
	tcase_add_test(tc, abrupt_close_of_the_evds_ia);
	tcase_add_test(tc, abrupt_close_of_the_eps_ia);
	tcase_add_test(tc, evds_of_another_provider_refused);
	tcase_add_test(tc, modify_to_shared_evds);
	tcase_add_test(tc, busy_poller_lets_others_run);
	tcase_add_test(tc, provider_leaves_signals_alone);
	suite_add_tcase(s, tc);

	tcase_add_checked_fixture(st, setup_strict, NULL);
	tcase_set_timeout(st, HX_TEST_TIMEOUT_S);
	tcase_add_test(st, strict_dequeue_empty_has_class_bit);
	tcase_add_test(st, strict_local_read_required);
	tcase_add_test(st, strict_zero_length_lmr);
	tcase_add_test(st, strict_wide_qual_refused);
	tcase_add_test(st, strict_shared_evds_refused);
	suite_add_tcase(s, st);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (!hx_env_ok()) {
		printf("SKIP: DAT_TEST_CONF is not set (run through make check)\n");
		return 77;
	}
	sr = srunner_create(compat_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
