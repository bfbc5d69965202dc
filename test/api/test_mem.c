/* LMRs, RMRs, SRQs and the checks made when a DTO is posted, through the
 * public API, in one process, over the IA under test (ofi-tcp).  Where a
 * call needs a connected EP, an EP of the IA connects to a PSP of the same
 * IA over 127.0.0.1 (a connected pair inside the process).
 *
 * The handle tests are table driven as in test_objects.c: every LMR, RMR,
 * SRQ and DTO call is given a NULL handle, a pointer to no object, an IA
 * handle where an object belongs (or an object where the IA belongs), a
 * live object of another type and a freed object, and must answer
 * DAT_INVALID_HANDLE with the subtype of the handle's type. */
#define _GNU_SOURCE
#include <check.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dat_gen.h"	/* <dat/udat.h>, or <dat2/udat.h> with DAT_GEN=2 */

#include "conn_harness.h"

static struct hx_ia x;

#define ALL_LOCAL (DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG)

/* ---- helpers ------------------------------------------------------------ */

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

static DAT_REGION_DESCRIPTION region(void *p)
{
	DAT_REGION_DESCRIPTION r;

	memset(&r, 0, sizeof(r));
	r.for_va = p;
	return r;
}

/* A registered buffer of len bytes. */
struct mem {
	unsigned char *buf;
	DAT_VLEN len;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static void mem_create_on(struct hx_ia *ia, DAT_PZ_HANDLE pz, struct mem *m, DAT_VLEN len,
			  DAT_MEM_PRIV_FLAGS priv)
{
	memset(m, 0, sizeof(*m));
	m->len = len;
	m->buf = calloc(1, (size_t)len);
	ck_assert_ptr_nonnull(m->buf);
	HX_OK(dat_lmr_create(ia->ia, DAT_MEM_TYPE_VIRTUAL, region(m->buf), len, pz, priv,
			     &m->lmr, &m->lctx, &m->rctx, NULL, NULL));
}

static void mem_create(struct mem *m, DAT_VLEN len, DAT_MEM_PRIV_FLAGS priv)
{
	mem_create_on(&x, x.pz, m, len, priv);
}

static void mem_free(struct mem *m)
{
	if (m->lmr)
		HX_OK(dat_lmr_free(m->lmr));
	free(m->buf);
	memset(m, 0, sizeof(*m));
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

/* An EP with an EVD per stream. */
struct dep {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE conn, req, rcv;
};

static void default_attr(DAT_EP_ATTR *attr)
{
	DAT_EP_HANDLE probe;
	DAT_EP_PARAM p;

	HX_OK(dat_ep_create(x.ia, x.pz, DAT_HANDLE_NULL, DAT_HANDLE_NULL, DAT_HANDLE_NULL, NULL,
			    &probe));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(probe, DAT_EP_FIELD_EP_ATTR_ALL, &p));
	HX_OK(dat_ep_free(probe));
	*attr = p.ep_attr;
}

static void dep_create(struct dep *d, DAT_SRQ_HANDLE srq)
{
	DAT_EP_ATTR attr;

	memset(d, 0, sizeof(*d));
	default_attr(&attr);
	HX_OK(dat_evd_create(x.ia, 8, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &d->conn));
	HX_OK(dat_evd_create(x.ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG | DAT_EVD_RMR_BIND_FLAG,
			     &d->req));
	HX_OK(dat_evd_create(x.ia, 64, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &d->rcv));
	if (srq)
		HX_OK(dat_ep_create_with_srq(x.ia, x.pz, d->rcv, d->req, d->conn, srq, &attr,
					     &d->ep));
	else
		HX_OK(dat_ep_create(x.ia, x.pz, d->rcv, d->req, d->conn, &attr, &d->ep));
}

static void dep_free(struct dep *d)
{
	if (d->ep)
		HX_OK(dat_ep_free(d->ep));
	if (d->conn)
		HX_OK(dat_evd_free(d->conn));
	if (d->req)
		HX_OK(dat_evd_free(d->req));
	if (d->rcv)
		HX_OK(dat_evd_free(d->rcv));
	memset(d, 0, sizeof(*d));
}

/* A connected pair inside the process: cl connects to a PSP of x, sv
 * accepts. */
struct pair {
	struct dep cl, sv;
	DAT_PSP_HANDLE psp;
};

static void pair_connect(struct pair *p)
{
	struct sockaddr_in sa;
	DAT_CONN_QUAL qual;
	DAT_CR_HANDLE cr;

	dep_create(&p->cl, DAT_HANDLE_NULL);
	dep_create(&p->sv, DAT_HANDLE_NULL);
	p->psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);
	hx_loopback(&sa);
	HX_OK(dat_ep_connect(p->cl.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	cr = hx_wait_cr(x.cr, NULL);
	HX_OK(dat_cr_accept(cr, p->sv.ep, 0, NULL));
	hx_expect_event(p->sv.conn, DAT_CONNECTION_EVENT_ESTABLISHED, p->sv.ep, NULL);
	hx_expect_event(p->cl.conn, DAT_CONNECTION_EVENT_ESTABLISHED, p->cl.ep, NULL);
}

static void pair_free(struct pair *p)
{
	dep_free(&p->cl);
	dep_free(&p->sv);
	HX_OK(dat_psp_free(p->psp));
}

static void expect_dto(DAT_EVD_HANDLE evd, DAT_EP_HANDLE ep, uint64_t ck,
		       DAT_DTO_COMPLETION_STATUS st, DAT_VLEN len)
{
	DAT_EVENT ev;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;

	hx_wait(evd, &ev);
	ck_assert_msg(ev.event_number == DAT_DTO_COMPLETION_EVENT, "got %s, expected a DTO "
		      "completion (cookie %#" PRIx64 ")", hx_event_str(ev.event_number), ck);
	ck_assert_msg(d->ep_handle == ep, "DTO completion names EP %p, not %p", d->ep_handle, ep);
	ck_assert_msg(d->user_cookie.as_64 == ck, "DTO completion cookie %#" PRIx64
		      ", expected %#" PRIx64, d->user_cookie.as_64, ck);
	ck_assert_msg(d->status == st, "DTO %#" PRIx64 " status %d, expected %d", ck,
		      (int)d->status, (int)st);
	if (st == DAT_DTO_SUCCESS)
		ck_assert_msg(d->transfered_length == len, "DTO %#" PRIx64 ": transfered_length "
			      "%llu, expected %llu", ck, (unsigned long long)d->transfered_length,
			      (unsigned long long)len);
}

/* Binds rmr to t on ep and waits for the completion (on ep's request EVD). */
static DAT_RMR_CONTEXT bind_wait(DAT_RMR_HANDLE rmr, const DAT_LMR_TRIPLET *t,
				 DAT_MEM_PRIV_FLAGS priv, struct dep *d, uint64_t ck)
{
	DAT_RMR_CONTEXT ctx = 0;
	DAT_RMR_COOKIE c;
	DAT_EVENT ev;

	c.as_64 = ck;
	HX_OK(dat_rmr_bind(rmr, t, priv, d->ep, c, DAT_COMPLETION_DEFAULT_FLAG, &ctx));
	hx_expect_event(d->req, DAT_RMR_BIND_COMPLETION_EVENT, NULL, &ev);
	ck_assert_msg(ev.event_data.rmr_completion_event_data.rmr_handle == rmr &&
		      ev.event_data.rmr_completion_event_data.user_cookie.as_64 == ck &&
		      ev.event_data.rmr_completion_event_data.status == DAT_DTO_SUCCESS,
		      "bind completion: RMR %p cookie %#" PRIx64 " status %d; expected %p %#"
		      PRIx64 " SUCCESS", ev.event_data.rmr_completion_event_data.rmr_handle,
		      ev.event_data.rmr_completion_event_data.user_cookie.as_64,
		      (int)ev.event_data.rmr_completion_event_data.status, rmr, ck);
	return ctx;
}

static int max_iov(DAT_EP_HANDLE ep, int *recv_iov)
{
	DAT_EP_PARAM p;

	memset(&p, 0, sizeof(p));
	HX_OK(dat_ep_query(ep, DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV |
			   DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV, &p));
	if (recv_iov)
		*recv_iov = p.ep_attr.max_recv_iov;
	return p.ep_attr.max_request_iov;
}

static void setup(void)
{
	hx_setup();
	hx_ia_open(&x);
}

/* ---- LMR ---------------------------------------------------------------- */

/* Every output of dat_lmr_create and every field of dat_lmr_query; the
 * four last outputs may be NULL; two LMRs over the same memory have their
 * own lmr_contexts. */
START_TEST(lmr_create_virtual_and_query)
{
	unsigned char *buf = malloc(8192);
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL, lmr2 = DAT_HANDLE_NULL;
	DAT_LMR_CONTEXT lctx = 0, lctx2 = 0;
	DAT_RMR_CONTEXT rctx = 0;
	DAT_VLEN rlen = 0;
	DAT_VADDR raddr = 0;
	DAT_LMR_PARAM p;
	DAT_HANDLE_TYPE type;

	ck_assert_ptr_nonnull(buf);
	HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf + 100), 5000, x.pz,
			     DAT_MEM_PRIV_ALL_FLAG, &lmr, &lctx, &rctx, &rlen, &raddr));
	ck_assert_ptr_nonnull(lmr);
	ck_assert_msg(rlen == 5000 && raddr == va(buf + 100),
		      "registered %llu bytes at %#llx, expected 5000 at %p",
		      (unsigned long long)rlen, (unsigned long long)raddr, (void *)(buf + 100));
	HX_OK(dat_get_handle_type(lmr, &type));
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_LMR);

	memset(&p, 0, sizeof(p));
	HX_OK(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &p));
	ck_assert_msg(p.ia_handle == x.ia, "ia_handle %p, expected %p", p.ia_handle, x.ia);
	ck_assert_int_eq(p.mem_type, DAT_MEM_TYPE_VIRTUAL);
	ck_assert_ptr_eq(p.region_desc.for_va, buf + 100);
	ck_assert_int_eq(p.length, 5000);
	ck_assert_ptr_eq(p.pz_handle, x.pz);
	ck_assert_int_eq(p.mem_priv, DAT_MEM_PRIV_ALL_FLAG);
	ck_assert_uint_eq(p.lmr_context, lctx);
	ck_assert_uint_eq(p.rmr_context, rctx);
	ck_assert_int_eq(p.registered_size, 5000);
	ck_assert_msg(p.registered_address == va(buf + 100), "registered_address %#llx",
		      (unsigned long long)p.registered_address);

	/* the same memory again, outputs not wanted */
	HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 8192, x.pz,
			     DAT_MEM_PRIV_LOCAL_READ_FLAG, &lmr2, NULL, NULL, NULL, NULL));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_lmr_query(lmr2, DAT_LMR_FIELD_LMR_CONTEXT | DAT_LMR_FIELD_MEM_PRIV, &p));
	lctx2 = p.lmr_context;
	ck_assert_msg(lctx2 != lctx, "two LMRs share lmr_context %u", lctx);
	ck_assert_int_eq(p.mem_priv, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	HX_OK(dat_lmr_free(lmr2));
	HX_OK(dat_lmr_free(lmr));
	/* freed: the handle is dead */
	HX_RC(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &p), HX_BADH(DAT_INVALID_HANDLE_LMR));
	HX_RC(dat_lmr_free(lmr), HX_BADH(DAT_INVALID_HANDLE_LMR));
	free(buf);
	hx_ia_close(&x);
}
END_TEST

/* Every combination of the four privilege bits is accepted and reported
 * by dat_lmr_query; without a remote privilege rmr_context is 0. */
START_TEST(lmr_every_privilege)
{
	static const DAT_MEM_PRIV_FLAGS bits[4] = {
		DAT_MEM_PRIV_LOCAL_READ_FLAG, DAT_MEM_PRIV_REMOTE_READ_FLAG,
		DAT_MEM_PRIV_LOCAL_WRITE_FLAG, DAT_MEM_PRIV_REMOTE_WRITE_FLAG
	};
	unsigned char *buf = malloc(4096);
	unsigned combo;

	ck_assert_ptr_nonnull(buf);
	for (combo = 0; combo < 16; combo++) {
		DAT_MEM_PRIV_FLAGS priv = DAT_MEM_PRIV_NONE_FLAG;
		DAT_LMR_HANDLE lmr;
		DAT_LMR_PARAM p;
		DAT_RETURN rc;
		int b;

		for (b = 0; b < 4; b++)
			if (combo & (1u << b))
				priv |= bits[b];
		rc = dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, x.pz, priv,
				    &lmr, NULL, NULL, NULL, NULL);
		ck_assert_msg(rc == DAT_SUCCESS, "dat_lmr_create with privileges %#x: %s",
			      (unsigned)priv, hx_rc_str(rc));
		memset(&p, 0, sizeof(p));
		HX_OK(dat_lmr_query(lmr, DAT_LMR_FIELD_MEM_PRIV | DAT_LMR_FIELD_RMR_CONTEXT, &p));
		ck_assert_msg(p.mem_priv == priv, "created with privileges %#x, query says %#x",
			      (unsigned)priv, (unsigned)p.mem_priv);
		if (!(priv & (DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)))
			ck_assert_msg(p.rmr_context == 0, "privileges %#x (nothing remote) and "
				      "rmr_context %#x, expected 0", (unsigned)priv, p.rmr_context);
		HX_OK(dat_lmr_free(lmr));
	}
	free(buf);
	hx_ia_close(&x);
}
END_TEST

/* DAT_MEM_TYPE_LMR: a new LMR over exactly the memory of another, with its
 * own contexts, PZ and privileges; a source that is NULL, dead or no LMR is
 * DAT_INVALID_HANDLE_LMR. */
START_TEST(lmr_create_from_lmr)
{
	struct mem src;
	DAT_PZ_HANDLE pz2;
	DAT_REGION_DESCRIPTION r;
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL, dead;
	DAT_LMR_CONTEXT lctx = 0;
	DAT_RMR_CONTEXT rctx = 0;
	DAT_VLEN rlen = 0;
	DAT_VADDR raddr = 0;
	DAT_LMR_PARAM p;

	mem_create(&src, 12288, DAT_MEM_PRIV_ALL_FLAG);
	HX_OK(dat_pz_create(x.ia, &pz2));
	memset(&r, 0, sizeof(r));
	r.for_lmr_handle = src.lmr;
	/* DAT 1.2: the length is ignored for this type */
	HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_LMR, r, 1, pz2,
			     DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG, &lmr,
			     &lctx, &rctx, &rlen, &raddr));
	ck_assert_msg(rlen == 12288 && raddr == va(src.buf),
		      "an LMR over an LMR registered %llu bytes at %#llx, expected the "
		      "source's 12288 at %p", (unsigned long long)rlen,
		      (unsigned long long)raddr, (void *)src.buf);
	ck_assert_msg(lctx != src.lctx, "the new LMR has the source's lmr_context %u", lctx);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_lmr_query(lmr, DAT_LMR_FIELD_ALL, &p));
	ck_assert_int_eq(p.mem_type, DAT_MEM_TYPE_LMR);
	ck_assert_ptr_eq(p.region_desc.for_lmr_handle, src.lmr);
	ck_assert_ptr_eq(p.pz_handle, pz2);
	ck_assert_int_eq(p.mem_priv, DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG);
	ck_assert_uint_eq(p.lmr_context, lctx);
	ck_assert_uint_eq(p.rmr_context, rctx);
	ck_assert_int_eq(p.registered_size, 12288);
	ck_assert_msg(p.registered_address == va(src.buf), "registered_address %#llx",
		      (unsigned long long)p.registered_address);
	/* the PZ is in use by it */
	HX_RC(dat_pz_free(pz2), HX_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	HX_OK(dat_lmr_free(lmr));

	r.for_lmr_handle = DAT_HANDLE_NULL;
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_LMR, r, 1, pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL,
			     NULL), HX_BADH(DAT_INVALID_HANDLE_LMR));
	HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(src.buf), 64, x.pz, ALL_LOCAL,
			     &dead, NULL, NULL, NULL, NULL));
	HX_OK(dat_lmr_free(dead));
	r.for_lmr_handle = dead;
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_LMR, r, 1, pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL,
			     NULL), HX_BADH(DAT_INVALID_HANDLE_LMR));
	r.for_lmr_handle = pz2;
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_LMR, r, 1, pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL,
			     NULL), HX_BADH(DAT_INVALID_HANDLE_LMR));
	/* nothing was created on pz2 */
	HX_OK(dat_pz_free(pz2));
	mem_free(&src);
	hx_ia_close(&x);
}
END_TEST

/* A peer can use only the rmr_contexts it was given: on ofi-tcp, where
 * the key is ours to choose, they are random 32-bit values, not the
 * provider's 1, 2, 3 ...  Sequential keys fail both checks; random ones
 * fail them with a probability far below 2^-64. */
#define NKEYS 64
START_TEST(rmr_contexts_unpredictable)
{
	static char buf[4096];
	DAT_LMR_HANDLE lmr[NKEYS];
	DAT_RMR_CONTEXT key[NKEYS], lo = UINT32_MAX, hi = 0;
	int i, j, close_pairs = 0;

	if (!hx_is_ofi_tcp() && !hx_is_native_tcp()) {
		printf("rmr_contexts_unpredictable: not run, the device picks %s's keys\n",
		       hx_ia_name());
		hx_ia_close(&x);
		return;
	}
	for (i = 0; i < NKEYS; i++) {
		HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), sizeof(buf), x.pz,
				     DAT_MEM_PRIV_ALL_FLAG, &lmr[i], NULL, &key[i], NULL, NULL));
		if (key[i] < lo)
			lo = key[i];
		if (key[i] > hi)
			hi = key[i];
	}
	for (i = 0; i < NKEYS; i++)
		for (j = i + 1; j < NKEYS; j++)
			HX_CHECK(key[i] != key[j], "two LMRs have rmr_context %#x", key[i]);
	for (i = 0; i + 1 < NKEYS; i++) {
		uint32_t d = key[i + 1] > key[i] ? key[i + 1] - key[i] : key[i] - key[i + 1];

		if (d <= 16)
			close_pairs++;
	}
	HX_CHECK(hi - lo > (1u << 20), "%d rmr_contexts all lie within %#x..%#x", NKEYS, lo, hi);
	HX_CHECK(close_pairs < 8, "%d of %d successive rmr_contexts are within 16 of each other",
		 close_pairs, NKEYS - 1);
	for (i = 0; i < NKEYS; i++)
		HX_OK(dat_lmr_free(lmr[i]));
	hx_ia_close(&x);
}
END_TEST

/* Each bad argument of dat_lmr_create, and nothing created by a refused
 * call (its PZ can be freed afterwards). */
START_TEST(lmr_create_bad_arguments)
{
	unsigned char *buf = malloc(4096);
	DAT_PZ_HANDLE pz2, dead_pz;
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
	struct hx_ia other;
	struct hx_ep e;
	DAT_IA_HANDLE dead_ia;

	ck_assert_ptr_nonnull(buf);
	HX_OK(dat_pz_create(x.ia, &pz2));
	HX_OK(dat_pz_create(x.ia, &dead_pz));
	HX_OK(dat_pz_free(dead_pz));
	hx_ia_open(&other);
	dead_ia = other.ia;
	hx_ia_close(&other);
	hx_ep_create(&x, &e, -1, -1);

	HX_RC(dat_lmr_create(DAT_HANDLE_NULL, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, pz2,
			     ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_IA));
	HX_RC(dat_lmr_create(dead_ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, pz2, ALL_LOCAL,
			     &lmr, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_IA));
	HX_RC_TYPE(dat_lmr_create(x.ia, DAT_MEM_TYPE_SHARED_VIRTUAL, region(buf), 4096, pz2,
				  ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), DAT_MODEL_NOT_SUPPORTED);
	HX_RC_TYPE(dat_lmr_create(x.ia, (DAT_MEM_TYPE)0x40, region(buf), 4096, pz2, ALL_LOCAL,
				  &lmr, NULL, NULL, NULL, NULL), DAT_MODEL_NOT_SUPPORTED);
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(NULL), 4096, pz2, ALL_LOCAL, &lmr,
			     NULL, NULL, NULL, NULL), HX_LMR_ARG(3));
	/* zero length, NULL too: the length is what is wrong, and
	 * DAT_LENGTH_ERROR is what OpenFabrics' 1.2 programs test for
	 * (DAT_STRICT=1's INVALID_PARAMETER|ARG4: test_compat.c) */
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 0, pz2, ALL_LOCAL, &lmr,
			     NULL, NULL, NULL, NULL), DAT_ERROR(DAT_LENGTH_ERROR, 0));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(NULL), 0, pz2, ALL_LOCAL, &lmr,
			     NULL, NULL, NULL, NULL), DAT_ERROR(DAT_LENGTH_ERROR, 0));
	/* a length past the end of the address space */
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), UINT64_MAX, pz2, ALL_LOCAL,
			     &lmr, NULL, NULL, NULL, NULL), HX_LMR_ARG(4));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region((void *)(uintptr_t)0x10),
			     UINT64_MAX - 0xf, pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL),
	      HX_LMR_ARG(3));
	/* memory this process has not mapped: the address 0x10, a hole
	 * where a mapping was, and a region running past a mapping's end */
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region((void *)(uintptr_t)0x10), 4096,
			     pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), HX_LMR_ARG(3));
	{
		long pg = sysconf(_SC_PAGESIZE);
		char *map = mmap(NULL, (size_t)(3 * pg), PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		ck_assert_ptr_ne(map, MAP_FAILED);
		ck_assert_int_eq(munmap(map + pg, (size_t)pg), 0);
		HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(map + pg), 64, pz2,
				     ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), HX_LMR_ARG(3));
		HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(map + pg - 8), 16, pz2,
				     ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), HX_LMR_ARG(3));
		HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(map), (DAT_VLEN)(3 * pg),
				     pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), HX_LMR_ARG(3));
		/* the mapped pages on either side register */
		HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(map + 2 * pg), (DAT_VLEN)pg,
				     pz2, ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL));
		HX_OK(dat_lmr_free(lmr));
		ck_assert_int_eq(munmap(map, (size_t)pg), 0);
		ck_assert_int_eq(munmap(map + 2 * pg, (size_t)pg), 0);
	}
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, DAT_HANDLE_NULL,
			     ALL_LOCAL, &lmr, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, dead_pz, ALL_LOCAL,
			     &lmr, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, e.ep, ALL_LOCAL, &lmr,
			     NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, pz2,
			     (DAT_MEM_PRIV_FLAGS)0x04, &lmr, NULL, NULL, NULL, NULL), HX_LMR_ARG(6));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, pz2,
			     (DAT_MEM_PRIV_FLAGS)(DAT_MEM_PRIV_ALL_FLAG | 0x100), &lmr, NULL, NULL,
			     NULL, NULL), HX_LMR_ARG(6));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(buf), 4096, pz2, ALL_LOCAL, NULL,
			     NULL, NULL, NULL, NULL), HX_LMR_ARG(7));
	/* none of these left an LMR on pz2 */
	HX_OK(dat_pz_free(pz2));
	hx_ep_free(&e);
	free(buf);
	hx_ia_close(&x);
}
END_TEST

/* A PZ with an LMR, or an RMR, cannot be freed; an LMR with a bound RMR
 * cannot be freed; the RMR can (bound or not), then the LMR. */
START_TEST(lmr_and_pz_in_use)
{
	struct pair pr;
	struct mem m;
	DAT_PZ_HANDLE pz2;
	DAT_RMR_HANDLE rmr, rmr2;
	DAT_LMR_TRIPLET t;
	DAT_RMR_CONTEXT ctx;

	HX_OK(dat_pz_create(x.ia, &pz2));
	mem_create_on(&x, pz2, &m, 4096, ALL_LOCAL);
	HX_RC(dat_pz_free(pz2), HX_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	mem_free(&m);
	HX_OK(dat_rmr_create(pz2, &rmr2));
	HX_RC(dat_pz_free(pz2), HX_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	HX_OK(dat_rmr_free(rmr2));
	HX_OK(dat_pz_free(pz2));

	pair_connect(&pr);
	mem_create(&m, 8192, DAT_MEM_PRIV_ALL_FLAG);
	HX_OK(dat_rmr_create(x.pz, &rmr));
	t = trip(m.lctx, m.buf + 1024, 2048);
	ctx = bind_wait(rmr, &t, DAT_MEM_PRIV_REMOTE_WRITE_FLAG, &pr.cl, 0x77);
	(void)ctx;
	HX_RC(dat_lmr_free(m.lmr), HX_STATE(DAT_INVALID_STATE_LMR_IN_USE));
	/* still there */
	HX_OK(dat_lmr_query(m.lmr, DAT_LMR_FIELD_ALL, &(DAT_LMR_PARAM){ 0 }));
	HX_OK(dat_rmr_free(rmr));
	HX_RC(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &(DAT_RMR_PARAM){ 0 }),
	      HX_BADH(DAT_INVALID_HANDLE_RMR));
	mem_free(&m);
	pair_free(&pr);
	hx_ia_close(&x);
}
END_TEST

/* dat_lmr_sync_rdma_read / _write: DAT_SUCCESS for segments inside live
 * LMRs of this IA (lmr_sync_req is DAT_FALSE: memory is coherent);
 * ARG2 for a bad lmr_context, a range outside its LMR, an LMR of another
 * IA; a bad IA is INVALID_HANDLE_IA. */
START_TEST(lmr_sync_rdma)
{
	DAT_RETURN (*const fn[2])(DAT_IA_HANDLE, const DAT_LMR_TRIPLET *, DAT_VLEN) = {
		dat_lmr_sync_rdma_read, dat_lmr_sync_rdma_write
	};
	DAT_PROVIDER_ATTR pa;
	struct mem a, b, dead;
	struct hx_ia other;
	struct mem far;
	DAT_LMR_TRIPLET t[3];
	DAT_LMR_CONTEXT dead_ctx;
	int i;

	memset(&pa, 0, sizeof(pa));
	HX_OK(dat_ia_query(x.ia, NULL, 0, NULL, DAT_PROVIDER_FIELD_LMR_SYNC_REQ, &pa));
	ck_assert_msg(pa.lmr_sync_req == DAT_FALSE, "lmr_sync_req is %d", (int)pa.lmr_sync_req);
	mem_create(&a, 4096, DAT_MEM_PRIV_ALL_FLAG);
	mem_create(&b, 8192, ALL_LOCAL);
	mem_create(&dead, 64, ALL_LOCAL);
	dead_ctx = dead.lctx;
	mem_free(&dead);
	hx_ia_open(&other);
	mem_create_on(&other, other.pz, &far, 128, ALL_LOCAL);

	for (i = 0; i < 2; i++) {
		t[0] = trip(a.lctx, a.buf, 4096);
		t[1] = trip(b.lctx, b.buf + 100, 1000);
		t[2] = trip(b.lctx, b.buf + 8191, 1);
		HX_OK(fn[i](x.ia, t, 3));
		t[1].lmr_context = dead_ctx;
		HX_RC(fn[i](x.ia, t, 3), HX_ARG(2));
		t[1] = trip(b.lctx, b.buf + 8000, 193);
		HX_RC(fn[i](x.ia, t, 2), HX_ARG(2));
		t[1] = trip(b.lctx, b.buf, 10);
		t[1].virtual_address -= 1;
		HX_RC(fn[i](x.ia, t, 2), HX_ARG(2));
		t[1] = trip(far.lctx, far.buf, 128);
		/* the contexts may coincide across IAs: only a mismatch that
		 * names no LMR of this IA over that memory must fail */
		HX_RC(fn[i](x.ia, &t[1], 1), HX_ARG(2));
		HX_RC(fn[i](DAT_HANDLE_NULL, t, 1), HX_BADH(DAT_INVALID_HANDLE_IA));
		HX_RC(fn[i](x.pz, t, 1), HX_BADH(DAT_INVALID_HANDLE_IA));
	}
	mem_free(&far);
	hx_ia_close(&other);
	mem_free(&a);
	mem_free(&b);
	hx_ia_close(&x);
}
END_TEST

/* ---- RMR ---------------------------------------------------------------- */

/* dat_rmr_create / query; dat_rmr_bind: an EP that is not connected is
 * INVALID_STATE; privileges other than the remote ones are ARG3;
 * UNSIGNALLED on an EP that does not allow it and unknown flags are ARG6;
 * a triplet outside its LMR is INVALID_PARAMETER (DAT 1.2), one of another
 * PZ (or an RMR of another PZ than the EP's) PROTECTION_VIOLATION; a bind
 * completes on the EP's request EVD with its cookie (none with SUPPRESS);
 * query reports the binding; a length-0 bind unbinds (new completion). */
START_TEST(rmr_create_query_bind)
{
	struct pair pr;
	struct hx_ep lone;
	struct mem m;
	DAT_RMR_HANDLE rmr = DAT_HANDLE_NULL;
	DAT_RMR_PARAM p;
	DAT_LMR_TRIPLET t;
	DAT_RMR_CONTEXT ctx = 0, ctx2 = 0;
	DAT_RMR_COOKIE c;
	DAT_HANDLE_TYPE type;

	mem_create(&m, 16384, DAT_MEM_PRIV_ALL_FLAG);
	HX_OK(dat_rmr_create(x.pz, &rmr));
	HX_OK(dat_get_handle_type(rmr, &type));
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_RMR);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_IA_HANDLE | DAT_RMR_FIELD_PZ_HANDLE, &p));
	ck_assert_ptr_eq(p.ia_handle, x.ia);
	ck_assert_ptr_eq(p.pz_handle, x.pz);

	t = trip(m.lctx, m.buf + 4096, 4096);
	c.as_64 = 0xB00;
	hx_ep_create(&x, &lone, -1, -1);
	HX_RC(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, lone.ep, c,
			   DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));

	pair_connect(&pr);
	HX_RC(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_LOCAL_READ_FLAG, pr.cl.ep, c,
			   DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_BIND_ARG(3));
	HX_RC(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
			   pr.cl.ep, c, DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_BIND_ARG(3));
	HX_RC(dat_rmr_bind(rmr, &t, (DAT_MEM_PRIV_FLAGS)0x200, pr.cl.ep, c,
			   DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_BIND_ARG(3));
	hx_expect_empty(pr.cl.req);

	ctx = bind_wait(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG,
			&pr.cl, 0xB01);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
	ck_assert_uint_eq(p.lmr_triplet.lmr_context, m.lctx);
	ck_assert_msg(p.lmr_triplet.virtual_address == t.virtual_address &&
		      p.lmr_triplet.segment_length == 4096, "dat_rmr_query: bound {%#llx, %llu}",
		      (unsigned long long)p.lmr_triplet.virtual_address,
		      (unsigned long long)p.lmr_triplet.segment_length);
	ck_assert_int_eq(p.mem_priv, DAT_MEM_PRIV_REMOTE_READ_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG);
	ck_assert_uint_eq(p.rmr_context, ctx);

	/* rebind with SUPPRESS: a new context, no event */
	t = trip(m.lctx, m.buf, 1024);
	c.as_64 = 0xB02;
	HX_OK(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
			   DAT_COMPLETION_SUPPRESS_FLAG, &ctx2));
	ck_assert_msg(ctx2 != ctx, "a rebind kept rmr_context %#x", ctx);
	/* the next request's completion comes first: nothing before it */
	HX_OK(dat_ep_post_recv(pr.sv.ep, 0, NULL, cookie(0x5), DAT_COMPLETION_DEFAULT_FLAG));
	HX_OK(dat_ep_post_send(pr.cl.ep, 0, NULL, cookie(0x6), DAT_COMPLETION_DEFAULT_FLAG));
	expect_dto(pr.cl.req, pr.cl.ep, 0x6, DAT_DTO_SUCCESS, 0);
	expect_dto(pr.sv.rcv, pr.sv.ep, 0x5, DAT_DTO_SUCCESS, 0);
	memset(&p, 0, sizeof(p));
	HX_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
	ck_assert_uint_eq(p.rmr_context, ctx2);
	ck_assert_int_eq(p.mem_priv, DAT_MEM_PRIV_REMOTE_READ_FLAG);
	ck_assert_int_eq(p.lmr_triplet.segment_length, 1024);

	/* unbind */
	t.segment_length = 0;
	(void)bind_wait(rmr, &t, DAT_MEM_PRIV_NONE_FLAG, &pr.cl, 0xB03);
	t = trip(m.lctx, m.buf + 4096, 4096);
	/* refused binds.  UNSIGNALLED needs an EP that allows it (DAT 1.2) */
	HX_RC(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
			   DAT_COMPLETION_UNSIGNALLED_FLAG, &ctx), HX_BIND_ARG(6));
	HX_RC(dat_rmr_bind(rmr, &t, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
			   (DAT_COMPLETION_FLAGS)0x100, &ctx), HX_BIND_ARG(6));
	/* the triplet: outside its LMR (DAT 1.2: INVALID_PARAMETER), an LMR
	 * of another PZ, a context naming no LMR */
	{
		DAT_LMR_TRIPLET bad = trip(m.lctx, m.buf + 16000, 1000);
		DAT_PZ_HANDLE pz2;
		DAT_RMR_HANDLE rmr2;
		DAT_RETURN rc;
		struct mem m2;

		HX_RC_TYPE(dat_rmr_bind(rmr, &bad, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
					DAT_COMPLETION_DEFAULT_FLAG, &ctx), DAT_INVALID_PARAMETER);
		HX_OK(dat_pz_create(x.ia, &pz2));
		mem_create_on(&x, pz2, &m2, 4096, DAT_MEM_PRIV_ALL_FLAG);
		bad = trip(m2.lctx, m2.buf, 64);
		HX_RC_TYPE(dat_rmr_bind(rmr, &bad, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
					DAT_COMPLETION_DEFAULT_FLAG, &ctx), DAT_PROTECTION_VIOLATION);
		/* an RMR of another PZ than the EP's */
		HX_OK(dat_rmr_create(pz2, &rmr2));
		HX_RC_TYPE(dat_rmr_bind(rmr2, &bad, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
					DAT_COMPLETION_DEFAULT_FLAG, &ctx), DAT_PROTECTION_VIOLATION);
		HX_OK(dat_rmr_free(rmr2));
		mem_free(&m2);
		HX_OK(dat_pz_free(pz2));
		bad = trip(m.lctx ^ 0x40000000u, m.buf, 64);
		rc = dat_rmr_bind(rmr, &bad, DAT_MEM_PRIV_REMOTE_READ_FLAG, pr.cl.ep, c,
				  DAT_COMPLETION_DEFAULT_FLAG, &ctx);
		ck_assert_msg(rc != DAT_SUCCESS, "dat_rmr_bind of a triplet naming no LMR succeeded");
	}
	/* the refused binds left nothing: the RMR is unbound, the LMR free */
	memset(&p, 0, sizeof(p));
	HX_OK(dat_rmr_query(rmr, DAT_RMR_FIELD_ALL, &p));
	ck_assert_msg(p.lmr_triplet.segment_length == 0, "a refused bind bound %llu bytes",
		      (unsigned long long)p.lmr_triplet.segment_length);
	hx_expect_empty(pr.cl.req);

	/* unbound: the LMR is free to go */
	HX_OK(dat_lmr_free(m.lmr));
	m.lmr = DAT_HANDLE_NULL;
	HX_OK(dat_rmr_free(rmr));
	hx_expect_empty(pr.cl.req);
	hx_ep_free(&lone);
	pair_free(&pr);
	mem_free(&m);
	hx_ia_close(&x);
}
END_TEST

/* ---- local buffers checked at post time ---------------------------------- */

/* Local segments are checked when a DTO is posted (codes as DAT 1.2 names
 * them): an lmr_context that names no live LMR, or an LMR without the
 * access the operation needs (receive / Read target: LOCAL_WRITE), is
 * DAT_PRIVILEGES_VIOLATION (a send / Write source without LOCAL_READ is
 * allowed unless DAT_STRICT is set: test_compat.c); an LMR of
 * another PZ is DAT_PROTECTION_VIOLATION; a segment outside its LMR is
 * INVALID_PARAMETER|ARG3; a zero-length segment is not looked at;
 * num_segments outside 0..max is ARG2.  None of the refused posts is
 * posted: afterwards one send meets one receive. */
START_TEST(post_time_local_checks)
{
	struct pair pr;
	struct mem good, ro, wo, other, dead, remote;
	DAT_PZ_HANDLE pz2;
	DAT_LMR_TRIPLET t[8];
	DAT_RMR_TRIPLET rt;
	DAT_LMR_CONTEXT dead_ctx, nobody;
	int nmax, rmax, k;

	pair_connect(&pr);
	mem_create(&good, 4096, ALL_LOCAL);
	mem_create(&ro, 4096, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	mem_create(&wo, 4096, DAT_MEM_PRIV_LOCAL_WRITE_FLAG);
	mem_create(&remote, 4096, DAT_MEM_PRIV_ALL_FLAG);
	HX_OK(dat_pz_create(x.ia, &pz2));
	mem_create_on(&x, pz2, &other, 4096, ALL_LOCAL);
	mem_create(&dead, 4096, ALL_LOCAL);
	dead_ctx = dead.lctx;
	mem_free(&dead);
	/* a context no LMR has */
	nobody = good.lctx ^ 0x40000000u;
	ck_assert(nobody != ro.lctx && nobody != wo.lctx && nobody != remote.lctx &&
		  nobody != other.lctx);
	memset(&rt, 0, sizeof(rt));
	rt.rmr_context = remote.rctx;
	rt.HX_RMR_ADDR = va(remote.buf);
	rt.segment_length = 64;
	nmax = max_iov(pr.cl.ep, &rmax);

	/* sends */
	t[0] = trip(nobody, good.buf, 64);
	HX_RC_TYPE(dat_ep_post_send(pr.cl.ep, 1, t, cookie(1), 0), DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(dead_ctx, good.buf, 64);
	HX_RC_TYPE(dat_ep_post_send(pr.cl.ep, 1, t, cookie(1), 0), DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(other.lctx, other.buf, 64);
	HX_RC_TYPE(dat_ep_post_send(pr.cl.ep, 1, t, cookie(1), 0), DAT_PROTECTION_VIOLATION);
	t[0] = trip(good.lctx, good.buf + 4000, 97);
	HX_RC(dat_ep_post_send(pr.cl.ep, 1, t, cookie(1), 0), HX_ARG(3));
	t[0] = trip(good.lctx, good.buf, 32);
	t[0].virtual_address -= 16;     /* starts before the LMR */
	HX_RC(dat_ep_post_send(pr.cl.ep, 1, t, cookie(1), 0), HX_ARG(3));
	t[0] = trip(good.lctx, good.buf, 4097);
	HX_RC(dat_ep_post_send(pr.cl.ep, 1, t, cookie(1), 0), HX_ARG(3));
	/* the bad one in the middle */
	t[0] = trip(good.lctx, good.buf, 16);
	t[1] = trip(good.lctx, good.buf + 4090, 16);
	t[2] = trip(good.lctx, good.buf + 32, 16);
	HX_RC(dat_ep_post_send(pr.cl.ep, 3, t, cookie(1), 0), HX_ARG(3));
	t[1] = trip(dead_ctx, good.buf, 16);
	HX_RC_TYPE(dat_ep_post_send(pr.cl.ep, 3, t, cookie(1), 0), DAT_PRIVILEGES_VIOLATION);
	/* segment counts */
	HX_RC(dat_ep_post_send(pr.cl.ep, -1, t, cookie(1), 0), HX_ARG(2));
	for (k = 0; k < 8; k++)
		t[k] = trip(good.lctx, good.buf + 64 * k, 8);
	if (nmax + 1 <= 8) {
		HX_RC(dat_ep_post_send(pr.cl.ep, nmax + 1, t, cookie(1), 0), HX_ARG(2));
		HX_RC(dat_ep_post_rdma_write(pr.cl.ep, nmax + 1, t, cookie(1), &rt, 0), HX_ARG(2));
		HX_RC(dat_ep_post_rdma_read(pr.cl.ep, nmax + 1, t, cookie(1), &rt, 0), HX_ARG(2));
	}
	if (rmax + 1 <= 8)
		HX_RC(dat_ep_post_recv(pr.sv.ep, rmax + 1, t, cookie(1), 0), HX_ARG(2));
	HX_RC(dat_ep_post_recv(pr.sv.ep, -1, t, cookie(1), 0), HX_ARG(2));
	HX_RC(dat_ep_post_rdma_write(pr.cl.ep, -1, t, cookie(1), &rt, 0), HX_ARG(2));
	HX_RC(dat_ep_post_rdma_read(pr.cl.ep, -1, t, cookie(1), &rt, 0), HX_ARG(2));

	/* RDMA: the local side */
	t[0] = trip(ro.lctx, ro.buf, 64);
	HX_RC_TYPE(dat_ep_post_rdma_read(pr.cl.ep, 1, t, cookie(1), &rt, 0),
		   DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(nobody, good.buf, 64);
	HX_RC_TYPE(dat_ep_post_rdma_write(pr.cl.ep, 1, t, cookie(1), &rt, 0),
		   DAT_PRIVILEGES_VIOLATION);
	HX_RC_TYPE(dat_ep_post_rdma_read(pr.cl.ep, 1, t, cookie(1), &rt, 0),
		   DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(other.lctx, other.buf, 64);
	HX_RC_TYPE(dat_ep_post_rdma_write(pr.cl.ep, 1, t, cookie(1), &rt, 0),
		   DAT_PROTECTION_VIOLATION);
	HX_RC_TYPE(dat_ep_post_rdma_read(pr.cl.ep, 1, t, cookie(1), &rt, 0),
		   DAT_PROTECTION_VIOLATION);
	t[0] = trip(good.lctx, good.buf + 4095, 2);
	HX_RC(dat_ep_post_rdma_read(pr.cl.ep, 1, t, cookie(1), &rt, 0), HX_ARG(3));
	HX_RC(dat_ep_post_rdma_write(pr.cl.ep, 1, t, cookie(1), &rt, 0), HX_ARG(3));

	/* RDMA: a remote range that wraps past 2^64 is refused here, never
	 * sent (libfabric 1.17's target check wraps too: dapl_ofi(3)) */
	{
		DAT_RMR_TRIPLET wrap = rt;

		t[0] = trip(good.lctx, good.buf, 16);
		wrap.segment_length = 16;
		wrap.HX_RMR_ADDR = UINT64_MAX - 14;      /* one byte past 2^64 */
		HX_RC(dat_ep_post_rdma_write(pr.cl.ep, 1, t, cookie(1), &wrap, 0), HX_ARG(5));
		HX_RC(dat_ep_post_rdma_read(pr.cl.ep, 1, t, cookie(1), &wrap, 0), HX_ARG(5));
		wrap.HX_RMR_ADDR = UINT64_MAX - 15;
		/* all ones: 64 bits in DAT 1.2, 32 in 2.0 (wraps either way) */
		memset(&wrap.segment_length, 0xff, sizeof(wrap.segment_length));
		HX_RC(dat_ep_post_rdma_write(pr.cl.ep, 1, t, cookie(1), &wrap, 0), HX_ARG(5));
		HX_RC(dat_ep_post_rdma_read(pr.cl.ep, 1, t, cookie(1), &wrap, 0), HX_ARG(5));
	}

	/* receives */
	t[0] = trip(ro.lctx, ro.buf, 64);
	HX_RC_TYPE(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(1), 0), DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(dead_ctx, good.buf, 64);
	HX_RC_TYPE(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(1), 0), DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(good.lctx, good.buf + 4096, 1);
	HX_RC(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(1), 0), HX_ARG(3));
	t[0] = trip(other.lctx, other.buf, 64);
	HX_RC_TYPE(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(1), 0), DAT_PROTECTION_VIOLATION);
	hx_expect_empty(pr.cl.req);
	hx_expect_empty(pr.sv.rcv);

	/* what is allowed: a receive into write-only memory; a send from
	 * read-only memory with a zero-length segment naming nothing */
	memset(wo.buf, 0, 64);
	t[0] = trip(wo.lctx, wo.buf, 64);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(0x2EC), 0));
	memcpy(ro.buf, "exactly these bytes", 19);
	t[0] = trip(nobody, NULL, 0);
	t[1] = trip(ro.lctx, ro.buf, 19);
	HX_OK(dat_ep_post_send(pr.cl.ep, 2, t, cookie(0x5E0), 0));
	expect_dto(pr.cl.req, pr.cl.ep, 0x5E0, DAT_DTO_SUCCESS, 19);
	expect_dto(pr.sv.rcv, pr.sv.ep, 0x2EC, DAT_DTO_SUCCESS, 19);
	ck_assert_msg(memcmp(wo.buf, "exactly these bytes", 19) == 0, "the receive got other bytes");
	hx_expect_empty(pr.cl.req);
	hx_expect_empty(pr.sv.rcv);
	hx_expect_empty(pr.cl.rcv);
	hx_expect_empty(pr.sv.req);

	pair_free(&pr);
	mem_free(&good);
	mem_free(&ro);
	mem_free(&wo);
	mem_free(&remote);
	mem_free(&other);
	HX_OK(dat_pz_free(pz2));
	hx_ia_close(&x);
}
END_TEST

/* dat_ep_recv_query counts the receives an EP holds and their bytes;
 * dat_ep_set_watermark is not offered (DAT_MODEL_NOT_SUPPORTED). */
START_TEST(ep_recv_query_and_watermark)
{
	struct pair pr;
	struct mem m;
	DAT_LMR_TRIPLET t[2];
	DAT_COUNT nbufs = -1, span = -1;

	pair_connect(&pr);
	mem_create(&m, 4096, ALL_LOCAL);
	HX_OK(dat_ep_recv_query(pr.sv.ep, &nbufs, &span));
	ck_assert_msg(nbufs == 0 && span == 0, "no receives: %d buffers, %d bytes", (int)nbufs,
		      (int)span);
	t[0] = trip(m.lctx, m.buf, 100);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(1), 0));
	t[0] = trip(m.lctx, m.buf + 200, 50);
	t[1] = trip(m.lctx, m.buf + 300, 150);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 2, t, cookie(2), 0));
	t[0] = trip(m.lctx, m.buf + 1000, 300);
	HX_OK(dat_ep_post_recv(pr.sv.ep, 1, t, cookie(3), 0));
	HX_OK(dat_ep_recv_query(pr.sv.ep, &nbufs, &span));
	ck_assert_msg(nbufs == 3 && span == 600, "3 receives of 100, 200 and 300 bytes: "
		      "%d buffers, %d bytes", (int)nbufs, (int)span);
	HX_OK(dat_ep_post_send(pr.cl.ep, 0, NULL, cookie(9), 0));
	expect_dto(pr.cl.req, pr.cl.ep, 9, DAT_DTO_SUCCESS, 0);
	expect_dto(pr.sv.rcv, pr.sv.ep, 1, DAT_DTO_SUCCESS, 0);
	HX_OK(dat_ep_recv_query(pr.sv.ep, &nbufs, &span));
	ck_assert_msg(nbufs == 2 && span == 500, "one receive completed: %d buffers, %d bytes",
		      (int)nbufs, (int)span);
	HX_RC_TYPE(dat_ep_set_watermark(pr.sv.ep, 4, 8), DAT_MODEL_NOT_SUPPORTED);
	HX_RC(dat_ep_set_watermark(DAT_HANDLE_NULL, 4, 8), HX_BADH(DAT_INVALID_HANDLE_EP));
	HX_RC(dat_ep_set_watermark(x.pz, 4, 8), HX_BADH(DAT_INVALID_HANDLE_EP));
	pair_free(&pr);
	mem_free(&m);
	hx_ia_close(&x);
}
END_TEST

/* DTO posts in the EP's states: send, RDMA Read and Write are
 * INVALID_STATE (with the EP's state) before the connection is up; on a
 * DISCONNECTED EP every DTO, receives included, is accepted and completes
 * at once with DAT_DTO_ERR_FLUSHED, exactly once, on its EVD. */
START_TEST(post_wrong_states)
{
	struct sockaddr_in sa;
	struct dep e;
	struct mem m;
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET rt;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_CR_HANDLE cr;

	dep_create(&e, DAT_HANDLE_NULL);
	mem_create(&m, 4096, DAT_MEM_PRIV_ALL_FLAG);
	t = trip(m.lctx, m.buf, 64);
	memset(&rt, 0, sizeof(rt));
	rt.rmr_context = m.rctx;
	rt.HX_RMR_ADDR = va(m.buf + 1024);
	rt.segment_length = 64;
	HX_RC(dat_ep_post_send(e.ep, 1, &t, cookie(1), 0), HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	HX_RC(dat_ep_post_rdma_read(e.ep, 1, &t, cookie(1), &rt, 0),
	      HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	HX_RC(dat_ep_post_rdma_write(e.ep, 1, &t, cookie(1), &rt, 0),
	      HX_STATE(DAT_INVALID_STATE_EP_UNCONNECTED));
	/* a connection on the way: the request waits unanswered */
	psp = hx_psp_any(&x, DAT_PSP_CONSUMER_FLAG, &qual);
	hx_loopback(&sa);
	HX_OK(dat_ep_connect(e.ep, (DAT_IA_ADDRESS_PTR)&sa, qual, HX_CONNECT_US, 0, NULL,
			     DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG));
	cr = hx_wait_cr(x.cr, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_ACTIVE_CONNECTION_PENDING);
	HX_RC(dat_ep_post_send(e.ep, 1, &t, cookie(1), 0),
	      HX_STATE(DAT_INVALID_STATE_EP_ACTCONNPENDING));
	HX_RC(dat_ep_post_rdma_read(e.ep, 1, &t, cookie(1), &rt, 0),
	      HX_STATE(DAT_INVALID_STATE_EP_ACTCONNPENDING));
	HX_RC(dat_ep_post_rdma_write(e.ep, 1, &t, cookie(1), &rt, 0),
	      HX_STATE(DAT_INVALID_STATE_EP_ACTCONNPENDING));
	HX_OK(dat_cr_reject(cr));
	hx_expect_event(e.conn, DAT_CONNECTION_EVENT_PEER_REJECTED, e.ep, NULL);
	HX_EXPECT_STATE(e.ep, DAT_EP_STATE_DISCONNECTED);
	hx_expect_empty(e.req);
	hx_expect_empty(e.rcv);

	/* DISCONNECTED: accepted, flushed at once; the local checks still hold */
	HX_OK(dat_ep_post_send(e.ep, 1, &t, cookie(0xF1), 0));
	HX_OK(dat_ep_post_rdma_read(e.ep, 1, &t, cookie(0xF2), &rt, 0));
	HX_OK(dat_ep_post_rdma_write(e.ep, 1, &t, cookie(0xF3), &rt, 0));
	HX_OK(dat_ep_post_recv(e.ep, 1, &t, cookie(0xF4), 0));
	expect_dto(e.req, e.ep, 0xF1, DAT_DTO_ERR_FLUSHED, 0);
	expect_dto(e.req, e.ep, 0xF2, DAT_DTO_ERR_FLUSHED, 0);
	expect_dto(e.req, e.ep, 0xF3, DAT_DTO_ERR_FLUSHED, 0);
	expect_dto(e.rcv, e.ep, 0xF4, DAT_DTO_ERR_FLUSHED, 0);
	t.segment_length = 4097;
	HX_RC(dat_ep_post_recv(e.ep, 1, &t, cookie(0xF5), 0), HX_ARG(3));
	HX_RC(dat_ep_post_send(e.ep, 1, &t, cookie(0xF6), 0), HX_ARG(3));
	hx_expect_empty(e.req);
	hx_expect_empty(e.rcv);
	HX_OK(dat_psp_free(psp));
	dep_free(&e);
	mem_free(&m);
	hx_ia_close(&x);
}
END_TEST

/* ---- SRQ ---------------------------------------------------------------- */

/* An SRQ in one process: create and query; posts beyond max_recv_dtos,
 * bad segment counts and bad triplets are refused; set_lw above the size
 * is ARG2; resize below what is posted is INVALID_STATE; the PZ and the
 * SRQ are in use while an SRQ / an EP holds them; an EP of the SRQ cannot
 * take receives of its own. */
START_TEST(srq_in_one_process)
{
	DAT_SRQ_ATTR a;
	DAT_SRQ_PARAM p;
	DAT_SRQ_HANDLE srq = DAT_HANDLE_NULL;
	DAT_PZ_HANDLE pz2;
	DAT_HANDLE_TYPE type;
	struct mem m, ro;
	struct dep e;
	DAT_LMR_TRIPLET t[2];
	DAT_EP_PARAM ep;
	int i;

	mem_create(&m, 16 * 256, ALL_LOCAL);
	mem_create(&ro, 256, DAT_MEM_PRIV_LOCAL_READ_FLAG);
	memset(&a, 0, sizeof(a));
	a.max_recv_dtos = 8;
	a.max_recv_iov = 1;
	a.low_watermark = 0;
	HX_OK(dat_pz_create(x.ia, &pz2));
	HX_OK(dat_srq_create(x.ia, pz2, &a, &srq));
	HX_OK(dat_get_handle_type(srq, &type));
	ck_assert_int_eq(type, DAT_HANDLE_TYPE_SRQ);
	HX_RC(dat_pz_free(pz2), HX_STATE(DAT_INVALID_STATE_PZ_IN_USE));
	HX_OK(dat_srq_free(srq));
	HX_OK(dat_pz_free(pz2));

	HX_OK(dat_srq_create(x.ia, x.pz, &a, &srq));
	memset(&p, 0, sizeof(p));
	HX_OK(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p));
	ck_assert_ptr_eq(p.ia_handle, x.ia);
	ck_assert_ptr_eq(p.pz_handle, x.pz);
	ck_assert_int_eq(p.srq_state, DAT_SRQ_STATE_OPERATIONAL);
	ck_assert_int_eq(p.max_recv_dtos, 8);
	ck_assert_int_ge(p.max_recv_iov, 1);
	ck_assert_int_eq(p.low_watermark, 0);
	ck_assert_int_eq(p.available_dto_count, 0);
	ck_assert_int_eq(p.outstanding_dto_count, 0);

	for (i = 0; i < 8; i++) {
		t[0] = trip(m.lctx, m.buf + 256 * i, 256);
		HX_OK(dat_srq_post_recv(srq, 1, t, cookie((uint64_t)i)));
	}
	t[0] = trip(m.lctx, m.buf, 16);
	HX_RC_TYPE(dat_srq_post_recv(srq, 1, t, cookie(99)), DAT_INSUFFICIENT_RESOURCES);
	HX_OK(dat_srq_query(srq, DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT |
			    DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT, &p));
	ck_assert_msg(p.available_dto_count == 8 && p.outstanding_dto_count == 8,
		      "8 posted: available %d outstanding %d", (int)p.available_dto_count,
		      (int)p.outstanding_dto_count);
	HX_RC(dat_srq_set_lw(srq, 9), HX_ARG(2));
	HX_RC_TYPE(dat_srq_resize(srq, 7), DAT_INVALID_STATE);
	HX_OK(dat_srq_resize(srq, 12));
	HX_OK(dat_srq_query(srq, DAT_SRQ_FIELD_MAX_RECV_DTO, &p));
	ck_assert_int_eq(p.max_recv_dtos, 12);
	/* bad posts, with room for them */
	HX_RC(dat_srq_post_recv(srq, -1, t, cookie(99)), HX_ARG(2));
	t[1] = t[0];
	if (p.max_recv_iov < 2)
		HX_RC(dat_srq_post_recv(srq, 2, t, cookie(99)), HX_ARG(2));
	t[0] = trip(ro.lctx, ro.buf, 16);
	HX_RC_TYPE(dat_srq_post_recv(srq, 1, t, cookie(99)), DAT_PRIVILEGES_VIOLATION);
	t[0] = trip(m.lctx, m.buf + 16 * 256 - 8, 16);
	HX_RC(dat_srq_post_recv(srq, 1, t, cookie(99)), HX_ARG(3));
	t[0] = trip(m.lctx ^ 0x40000000u, m.buf, 16);
	HX_RC_TYPE(dat_srq_post_recv(srq, 1, t, cookie(99)), DAT_PRIVILEGES_VIOLATION);
	HX_OK(dat_srq_query(srq, DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT, &p));
	ck_assert_int_eq(p.available_dto_count, 8);

	/* an EP of the SRQ */
	dep_create(&e, srq);
	memset(&ep, 0, sizeof(ep));
	HX_OK(dat_ep_query(e.ep, DAT_EP_FIELD_SRQ_HANDLE, &ep));
	ck_assert_ptr_eq(ep.srq_handle, srq);
	t[0] = trip(m.lctx, m.buf, 16);
	HX_RC_TYPE(dat_ep_post_recv(e.ep, 1, t, cookie(98), 0), DAT_MODEL_NOT_SUPPORTED);
	HX_RC_TYPE(dat_srq_free(srq), DAT_INVALID_STATE);
	dep_free(&e);
	HX_OK(dat_srq_free(srq));
	HX_RC(dat_srq_query(srq, DAT_SRQ_FIELD_ALL, &p), HX_BADH(DAT_INVALID_HANDLE_SRQ));
	mem_free(&m);
	mem_free(&ro);
	hx_ia_close(&x);
}
END_TEST

/* ---- bad handles --------------------------------------------------------- */

struct hobj {
	struct mem m;                 /* LMR ALL over 4096 bytes */
	DAT_RMR_HANDLE rmr;
	DAT_SRQ_HANDLE srq;           /* only for the SRQ table */
	struct dep ep;                /* UNCONNECTED */
	DAT_LMR_TRIPLET t;
	DAT_RMR_TRIPLET rt;
	DAT_SRQ_ATTR sa;
	/* freed */
	DAT_IA_HANDLE dead_ia;
	DAT_PZ_HANDLE dead_pz;
	DAT_LMR_HANDLE dead_lmr;
	DAT_RMR_HANDLE dead_rmr;
	DAT_SRQ_HANDLE dead_srq;
	DAT_EP_HANDLE dead_ep;
	DAT_EVD_HANDLE dead_evd;
};

static void make_hobj(struct hobj *o, int with_srq)
{
	struct hx_ia other;
	struct dep tmp;
	DAT_LMR_HANDLE l;

	memset(o, 0, sizeof(*o));
	mem_create(&o->m, 4096, DAT_MEM_PRIV_ALL_FLAG);
	HX_OK(dat_rmr_create(x.pz, &o->rmr));
	dep_create(&o->ep, DAT_HANDLE_NULL);
	o->t = trip(o->m.lctx, o->m.buf, 64);
	o->rt.rmr_context = o->m.rctx;
	o->rt.HX_RMR_ADDR = va(o->m.buf + 1024);
	o->rt.segment_length = 64;
	o->sa.max_recv_dtos = 4;
	o->sa.max_recv_iov = 1;
	o->sa.low_watermark = 0;

	hx_ia_open(&other);
	o->dead_ia = other.ia;
	hx_ia_close(&other);
	HX_OK(dat_pz_create(x.ia, &o->dead_pz));
	HX_OK(dat_pz_free(o->dead_pz));
	HX_OK(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(o->m.buf), 64, x.pz, ALL_LOCAL,
			     &l, NULL, NULL, NULL, NULL));
	HX_OK(dat_lmr_free(l));
	o->dead_lmr = l;
	HX_OK(dat_rmr_create(x.pz, &o->dead_rmr));
	HX_OK(dat_rmr_free(o->dead_rmr));
	dep_create(&tmp, DAT_HANDLE_NULL);
	o->dead_ep = tmp.ep;
	HX_OK(dat_ep_free(tmp.ep));
	tmp.ep = DAT_HANDLE_NULL;
	o->dead_evd = tmp.rcv;
	HX_OK(dat_evd_free(tmp.rcv));
	tmp.rcv = DAT_HANDLE_NULL;
	dep_free(&tmp);
	if (with_srq) {
		HX_OK(dat_srq_create(x.ia, x.pz, &o->sa, &o->srq));
		HX_OK(dat_srq_create(x.ia, x.pz, &o->sa, &o->dead_srq));
		HX_OK(dat_srq_free(o->dead_srq));
	}
}

enum hkind { HK_IA, HK_PZ, HK_LMR, HK_RMR, HK_SRQ, HK_EP };

struct hcall {
	const char *name;
	enum hkind kind;
	int sub;
	DAT_RETURN (*call)(struct hobj *o, DAT_HANDLE h);
};

static DAT_RETURN c_lmr_create(struct hobj *o, DAT_HANDLE h)
{
	DAT_LMR_HANDLE l;

	return dat_lmr_create(h, DAT_MEM_TYPE_VIRTUAL, region(o->m.buf), 64, x.pz, ALL_LOCAL, &l,
			      NULL, NULL, NULL, NULL);
}

static DAT_RETURN c_lmr_query(struct hobj *o, DAT_HANDLE h)
{
	DAT_LMR_PARAM p;

	(void)o;
	return dat_lmr_query(h, DAT_LMR_FIELD_ALL, &p);
}

static DAT_RETURN c_lmr_free(struct hobj *o, DAT_HANDLE h)
{
	(void)o;
	return dat_lmr_free(h);
}

static DAT_RETURN c_lmr_sync_rdma_read(struct hobj *o, DAT_HANDLE h)
{
	return dat_lmr_sync_rdma_read(h, &o->t, 1);
}

static DAT_RETURN c_lmr_sync_rdma_write(struct hobj *o, DAT_HANDLE h)
{
	return dat_lmr_sync_rdma_write(h, &o->t, 1);
}

static DAT_RETURN c_rmr_create(struct hobj *o, DAT_HANDLE h)
{
	DAT_RMR_HANDLE r;

	(void)o;
	return dat_rmr_create(h, &r);
}

static DAT_RETURN c_rmr_query(struct hobj *o, DAT_HANDLE h)
{
	DAT_RMR_PARAM p;

	(void)o;
	return dat_rmr_query(h, DAT_RMR_FIELD_ALL, &p);
}

static DAT_RETURN c_rmr_bind(struct hobj *o, DAT_HANDLE h)
{
	DAT_RMR_CONTEXT ctx;
	DAT_RMR_COOKIE c;

	c.as_64 = 1;
	return dat_rmr_bind(h, &o->t, DAT_MEM_PRIV_REMOTE_READ_FLAG, o->ep.ep, c,
			    DAT_COMPLETION_DEFAULT_FLAG, &ctx);
}

static DAT_RETURN c_rmr_free(struct hobj *o, DAT_HANDLE h)
{
	(void)o;
	return dat_rmr_free(h);
}

static DAT_RETURN c_ep_post_send(struct hobj *o, DAT_HANDLE h)
{
	return dat_ep_post_send(h, 1, &o->t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_post_recv(struct hobj *o, DAT_HANDLE h)
{
	return dat_ep_post_recv(h, 1, &o->t, cookie(1), DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_post_rdma_read(struct hobj *o, DAT_HANDLE h)
{
	return dat_ep_post_rdma_read(h, 1, &o->t, cookie(1), &o->rt, DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_post_rdma_write(struct hobj *o, DAT_HANDLE h)
{
	return dat_ep_post_rdma_write(h, 1, &o->t, cookie(1), &o->rt, DAT_COMPLETION_DEFAULT_FLAG);
}

static DAT_RETURN c_ep_recv_query(struct hobj *o, DAT_HANDLE h)
{
	DAT_COUNT a, b;

	(void)o;
	return dat_ep_recv_query(h, &a, &b);
}

static DAT_RETURN c_ep_set_watermark(struct hobj *o, DAT_HANDLE h)
{
	(void)o;
	return dat_ep_set_watermark(h, 1, 2);
}

static DAT_RETURN c_srq_create(struct hobj *o, DAT_HANDLE h)
{
	DAT_SRQ_HANDLE s;

	return dat_srq_create(h, x.pz, &o->sa, &s);
}

static DAT_RETURN c_srq_free(struct hobj *o, DAT_HANDLE h)
{
	(void)o;
	return dat_srq_free(h);
}

static DAT_RETURN c_srq_post_recv(struct hobj *o, DAT_HANDLE h)
{
	return dat_srq_post_recv(h, 1, &o->t, cookie(1));
}

static DAT_RETURN c_srq_query(struct hobj *o, DAT_HANDLE h)
{
	DAT_SRQ_PARAM p;

	(void)o;
	return dat_srq_query(h, DAT_SRQ_FIELD_ALL, &p);
}

static DAT_RETURN c_srq_resize(struct hobj *o, DAT_HANDLE h)
{
	(void)o;
	return dat_srq_resize(h, 8);
}

static DAT_RETURN c_srq_set_lw(struct hobj *o, DAT_HANDLE h)
{
	(void)o;
	return dat_srq_set_lw(h, 1);
}

static DAT_RETURN c_ep_create_with_srq(struct hobj *o, DAT_HANDLE h)
{
	DAT_EP_ATTR attr;
	DAT_EP_HANDLE e;

	default_attr(&attr);
	return dat_ep_create_with_srq(h, x.pz, o->ep.rcv, o->ep.req, DAT_HANDLE_NULL, o->srq, &attr,
				      &e);
}

#define HC(fn, kind, sub) { #fn, kind, sub, c_##fn }
static const struct hcall mem_calls[] = {
	HC(lmr_create, HK_IA, DAT_INVALID_HANDLE_IA),
	HC(lmr_query, HK_LMR, DAT_INVALID_HANDLE_LMR),
	HC(lmr_free, HK_LMR, DAT_INVALID_HANDLE_LMR),
	HC(lmr_sync_rdma_read, HK_IA, DAT_INVALID_HANDLE_IA),
	HC(lmr_sync_rdma_write, HK_IA, DAT_INVALID_HANDLE_IA),
	HC(rmr_create, HK_PZ, DAT_INVALID_HANDLE_PZ),
	HC(rmr_query, HK_RMR, DAT_INVALID_HANDLE_RMR),
	HC(rmr_bind, HK_RMR, DAT_INVALID_HANDLE_RMR),
	HC(rmr_free, HK_RMR, DAT_INVALID_HANDLE_RMR),
	HC(ep_post_send, HK_EP, DAT_INVALID_HANDLE_EP),
	HC(ep_post_recv, HK_EP, DAT_INVALID_HANDLE_EP),
	HC(ep_post_rdma_read, HK_EP, DAT_INVALID_HANDLE_EP),
	HC(ep_post_rdma_write, HK_EP, DAT_INVALID_HANDLE_EP),
	HC(ep_recv_query, HK_EP, DAT_INVALID_HANDLE_EP),
	HC(ep_set_watermark, HK_EP, DAT_INVALID_HANDLE_EP),
};

static const struct hcall srq_calls[] = {
	HC(srq_create, HK_IA, DAT_INVALID_HANDLE_IA),
	HC(srq_free, HK_SRQ, DAT_INVALID_HANDLE_SRQ),
	HC(srq_post_recv, HK_SRQ, DAT_INVALID_HANDLE_SRQ),
	HC(srq_query, HK_SRQ, DAT_INVALID_HANDLE_SRQ),
	HC(srq_resize, HK_SRQ, DAT_INVALID_HANDLE_SRQ),
	HC(srq_set_lw, HK_SRQ, DAT_INVALID_HANDLE_SRQ),
	HC(ep_create_with_srq, HK_IA, DAT_INVALID_HANDLE_IA),
};
#undef HC

static uint64_t not_an_object[8] = {
	0x0123456789abcdefULL, 0xfedcba9876543210ULL, 1, 2, 3, 4, 5, 6
};

enum { BAD_NULL, BAD_JUNK, BAD_OTHER_SIDE, BAD_WRONG_TYPE, BAD_FREED, BAD_KINDS };
static const char *const bad_name[] = {
	"NULL", "a pointer to no object", "an IA handle for an object (or an object for the IA)",
	"a live object of another type", "a freed object"
};

static int bad_handle(struct hobj *o, enum hkind k, int bad, DAT_HANDLE *h)
{
	switch (bad) {
	case BAD_NULL:
		*h = DAT_HANDLE_NULL;
		return 1;
	case BAD_JUNK:
		*h = (DAT_HANDLE)not_an_object;
		return 1;
	case BAD_OTHER_SIDE:
		*h = k == HK_IA ? (DAT_HANDLE)x.pz : (DAT_HANDLE)x.ia;
		return 1;
	case BAD_WRONG_TYPE:
		switch (k) {
		case HK_PZ: *h = o->m.lmr; return 1;
		case HK_LMR: *h = o->rmr; return 1;
		case HK_RMR: *h = o->m.lmr; return 1;
		case HK_SRQ: *h = o->ep.ep; return 1;
		case HK_EP: *h = o->m.lmr; return 1;
		default: return 0;
		}
	case BAD_FREED:
		switch (k) {
		case HK_IA: *h = o->dead_ia; return 1;
		case HK_PZ: *h = o->dead_pz; return 1;
		case HK_LMR: *h = o->dead_lmr; return 1;
		case HK_RMR: *h = o->dead_rmr; return 1;
		case HK_SRQ: *h = o->dead_srq; return 1;
		case HK_EP: *h = o->dead_ep; return 1;
		}
	}
	return 0;
}

static void run_table(const struct hcall *calls, size_t ncalls, int bad, int with_srq)
{
	char report[8192];
	size_t used = 0;
	struct hobj o;
	size_t i;
	int failures = 0, tried = 0;

	make_hobj(&o, with_srq);
	report[0] = '\0';
	for (i = 0; i < ncalls; i++) {
		DAT_HANDLE h;
		DAT_RETURN rc, want;

		if (!bad_handle(&o, calls[i].kind, bad, &h))
			continue;
		tried++;
		rc = calls[i].call(&o, h);
		want = HX_BADH(calls[i].sub);
		if (rc != want) {
			failures++;
			if (used < sizeof(report) - 200)
				used += (size_t)snprintf(report + used, sizeof(report) - used,
							 "\n  dat_%s: %s, expected %s",
							 calls[i].name, hx_rc_str(rc),
							 hx_rc_str(want));
		}
	}
	ck_assert_int_gt(tried, 0);
	ck_assert_msg(failures == 0, "%d of %d calls given %s answered wrongly:%s", failures,
		      tried, bad_name[bad], report);
	/* whatever the calls made, abrupt close frees it */
	free(o.m.buf);
	HX_OK(dat_ia_close(x.ia, DAT_CLOSE_ABRUPT_FLAG));
}

/* _i: the kind of bad handle, for every LMR, RMR and DTO call. */
START_TEST(bad_handles_mem_and_dto_calls)
{
	run_table(mem_calls, sizeof(mem_calls) / sizeof(mem_calls[0]), _i, 0);
}
END_TEST

/* _i: the kind of bad handle, for every SRQ call. */
START_TEST(bad_handles_srq_calls)
{
	run_table(srq_calls, sizeof(srq_calls) / sizeof(srq_calls[0]), _i, 1);
}
END_TEST

/* The other handle arguments of the LMR and RMR calls: freed or of the
 * wrong type. */
START_TEST(bad_secondary_handles)
{
	struct hobj o;
	DAT_LMR_HANDLE l;
	DAT_RMR_CONTEXT ctx;
	DAT_RMR_COOKIE c;

	make_hobj(&o, 0);
	c.as_64 = 1;
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(o.m.buf), 64, o.dead_pz, ALL_LOCAL,
			     &l, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(o.m.buf), 64, o.m.lmr, ALL_LOCAL,
			     &l, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_rmr_bind(o.rmr, &o.t, DAT_MEM_PRIV_REMOTE_READ_FLAG, o.dead_ep, c,
			   DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_BADH(DAT_INVALID_HANDLE_EP));
	HX_RC(dat_rmr_bind(o.rmr, &o.t, DAT_MEM_PRIV_REMOTE_READ_FLAG, x.pz, c,
			   DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_BADH(DAT_INVALID_HANDLE_EP));
	/* an IA handle (the registry's small number) where another belongs */
	HX_RC(dat_lmr_create(x.ia, DAT_MEM_TYPE_VIRTUAL, region(o.m.buf), 64, x.ia, ALL_LOCAL,
			     &l, NULL, NULL, NULL, NULL), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_rmr_bind(o.rmr, &o.t, DAT_MEM_PRIV_REMOTE_READ_FLAG, x.ia, c,
			   DAT_COMPLETION_DEFAULT_FLAG, &ctx), HX_BADH(DAT_INVALID_HANDLE_EP));
	HX_RC(dat_rmr_create(x.ia, &l), HX_BADH(DAT_INVALID_HANDLE_PZ));
	free(o.m.buf);
	HX_OK(dat_ia_close(x.ia, DAT_CLOSE_ABRUPT_FLAG));
}
END_TEST

/* The other handle arguments of the SRQ calls: freed or of the wrong
 * type. */
START_TEST(bad_secondary_handles_srq)
{
	struct hobj o;
	DAT_SRQ_HANDLE s;
	DAT_EP_HANDLE e;
	DAT_EP_ATTR attr;

	make_hobj(&o, 1);
	HX_RC(dat_srq_create(x.ia, o.dead_pz, &o.sa, &s), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_srq_create(x.ia, o.m.lmr, &o.sa, &s), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_srq_create(x.ia, x.ia, &o.sa, &s), HX_BADH(DAT_INVALID_HANDLE_PZ));
	default_attr(&attr);
	HX_RC(dat_ep_create_with_srq(x.ia, x.pz, o.ep.rcv, o.ep.req, DAT_HANDLE_NULL, o.dead_srq,
				     &attr, &e), HX_BADH(DAT_INVALID_HANDLE_SRQ));
	HX_RC(dat_ep_create_with_srq(x.ia, x.pz, o.ep.rcv, o.ep.req, DAT_HANDLE_NULL, x.pz, &attr,
				     &e), HX_BADH(DAT_INVALID_HANDLE_SRQ));
	HX_RC(dat_ep_create_with_srq(x.ia, x.pz, o.ep.rcv, o.ep.req, DAT_HANDLE_NULL, x.ia, &attr,
				     &e), HX_BADH(DAT_INVALID_HANDLE_SRQ));
	HX_RC(dat_ep_create_with_srq(x.ia, x.pz, o.ep.rcv, o.ep.req, DAT_HANDLE_NULL,
				     DAT_HANDLE_NULL, &attr, &e), HX_BADH(DAT_INVALID_HANDLE_SRQ));
	HX_RC(dat_ep_create_with_srq(x.ia, o.dead_pz, o.ep.rcv, o.ep.req, DAT_HANDLE_NULL, o.srq,
				     &attr, &e), HX_BADH(DAT_INVALID_HANDLE_PZ));
	HX_RC(dat_ep_create_with_srq(x.ia, x.pz, o.dead_evd, o.ep.req, DAT_HANDLE_NULL, o.srq,
				     &attr, &e), HX_BADH(DAT_INVALID_HANDLE_EVD_RECV));
	free(o.m.buf);
	HX_OK(dat_ia_close(x.ia, DAT_CLOSE_ABRUPT_FLAG));
}
END_TEST

static Suite *mem_suite(void)
{
	Suite *s = suite_create("mem");
	TCase *tc;


	tc = tcase_create("lmr");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, lmr_create_virtual_and_query);
	tcase_add_test(tc, lmr_every_privilege);
	tcase_add_test(tc, lmr_create_from_lmr);
	tcase_add_test(tc, lmr_create_bad_arguments);
	tcase_add_test(tc, rmr_contexts_unpredictable);
	tcase_add_test(tc, lmr_and_pz_in_use);
	tcase_add_test(tc, lmr_sync_rdma);
	suite_add_tcase(s, tc);

	tc = tcase_create("rmr");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, rmr_create_query_bind);
	suite_add_tcase(s, tc);

	tc = tcase_create("posts");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, post_time_local_checks);
	tcase_add_test(tc, post_wrong_states);
	suite_add_tcase(s, tc);

	tc = tcase_create("handles");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_loop_test(tc, bad_handles_mem_and_dto_calls, 0, BAD_KINDS);
	tcase_add_test(tc, bad_secondary_handles);
	suite_add_tcase(s, tc);

	tc = tcase_create("srq");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, HX_TEST_TIMEOUT_S);
	tcase_add_test(tc, srq_in_one_process);
	tcase_add_test(tc, ep_recv_query_and_watermark);
	tcase_add_loop_test(tc, bad_handles_srq_calls, 0, BAD_KINDS);
	tcase_add_test(tc, bad_secondary_handles_srq);
	suite_add_tcase(s, tc);

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
	sr = srunner_create(mem_suite());
	srunner_set_fork_status(sr, CK_FORK);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
