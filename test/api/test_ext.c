/* The DAT 2.0 IB extensions through the public API (dat_extension_op(3)),
 * built against libdat2.so.2: one process, one IA, a pair of endpoints
 * connected to each other through a PSP of that IA.
 *
 *   test_ext [IA...]      (default: tcp ofi-tcp)
 *
 * On an IA whose attributes offer the extensions (tcp) every operation
 * runs for real: a write with immediate consumes the receive posted at
 * the target, whose DAT_IB_DTO_EVENT carries the write's length and the
 * immediate; fetch-and-add and compare-and-swap (successful and failed)
 * return the original value and change the target; the argument checks
 * (unaligned remote address, local buffer not 8 bytes, a remote segment
 * too short, unknown flags, an unconnected EP, another handle); a target
 * without DAT_IB_MEM_PRIV_REMOTE_ATOMIC fails the atomic with a remote
 * access error.  On an IA that offers none (ofi-tcp) the attributes must
 * say FALSE and every post DAT_NOT_IMPLEMENTED.  Operations nobody offers
 * (UD, counters, collectives) answer DAT_NOT_IMPLEMENTED everywhere.
 *
 * DAT_OVERRIDE: $DAT_TEST_CONF (exit 77 without it).  Exit 0 when every
 * check holds; each failure is printed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dat2/udat.h>
#include <dat2/dat_ib_extensions.h>

#define ERR(type, sub) ((DAT_RETURN)(DAT_CLASS_ERROR | (type) | (sub)))
#define WAIT_US (10u * 1000u * 1000u)

static int failures;

#define CHECK(cond) do { \
	if (!(cond)) { \
		printf("FAIL: %s: %s:%d: %s\n", ia_name, __FILE__, __LINE__, \
		       #cond); \
		failures++; \
	} \
} while (0)

#define CHECK_RC(expr, want) do { \
	DAT_RETURN rc_ = (expr); \
	if (rc_ != (DAT_RETURN)(want)) { \
		printf("FAIL: %s: %s:%d: %s returned 0x%x, expected 0x%x\n", \
		       ia_name, __FILE__, __LINE__, #expr, (unsigned)rc_, \
		       (unsigned)(want)); \
		failures++; \
	} \
} while (0)

static const char *ia_name;

struct mem {
	void *buf;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lctx;
	DAT_RMR_CONTEXT rctx;
};

static int reg(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz, struct mem *m, size_t len,
	       DAT_MEM_PRIV_FLAGS priv)
{
	DAT_REGION_DESCRIPTION r;
	DAT_VLEN rlen;
	DAT_VADDR raddr;
	DAT_RETURN rc;

	m->buf = aligned_alloc(64, len);
	if (!m->buf)
		return -1;
	memset(m->buf, 0, len);
	r.for_va = m->buf;
	rc = dat_lmr_create(ia, DAT_MEM_TYPE_VIRTUAL, r, len, pz, priv,
			    DAT_VA_TYPE_VA, &m->lmr, &m->lctx, &m->rctx,
			    &rlen, &raddr);
	if (rc != DAT_SUCCESS) {
		printf("FAIL: %s: dat_lmr_create(priv 0x%x): 0x%x\n", ia_name,
		       (unsigned)priv, (unsigned)rc);
		failures++;
		return -1;
	}
	return 0;
}

/* (an abrupt dat_ia_close frees the LMRs: then free_lmr is 0) */
static void unreg(struct mem *m, int free_lmr)
{
	if (m->lmr && free_lmr)
		dat_lmr_free(m->lmr);
	free(m->buf);
}

static DAT_LMR_TRIPLET ltrip(const struct mem *m, size_t off, DAT_VLEN len)
{
	DAT_LMR_TRIPLET t;

	t.lmr_context = m->lctx;
	t.virtual_address = (DAT_VADDR)(uintptr_t)m->buf + off;
	t.segment_length = len;
	return t;
}

static DAT_RMR_TRIPLET rtrip(const struct mem *m, size_t off, uint32_t len)
{
	DAT_RMR_TRIPLET t;

	t.rmr_context = m->rctx;
	t.virtual_address = (DAT_VADDR)(uintptr_t)m->buf + off;
	t.segment_length = len;
	return t;
}

static DAT_IB_EXTENSION_EVENT_DATA *ext_of(DAT_EVENT *ev)
{
	return (DAT_IB_EXTENSION_EVENT_DATA *)(void *)ev->event_extension_data;
}

/* The next event of evd, or event_number 0 when none came in time. */
static DAT_EVENT next_event(DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_COUNT nmore;

	memset(&ev, 0, sizeof(ev));
	if (dat_evd_wait(evd, WAIT_US, 1, &ev, &nmore) != DAT_SUCCESS)
		ev.event_number = 0;
	return ev;
}

static const char *attr_value(const DAT_PROVIDER_ATTR *p, const char *name)
{
	for (int i = 0; i < p->num_provider_specific_attr; i++)
		if (!strcmp(p->provider_specific_attr[i].name, name))
			return p->provider_specific_attr[i].value;
	return NULL;
}

static const char *ep_attr_value(const DAT_EP_PARAM *p, const char *name)
{
	for (int i = 0; i < p->ep_attr.ep_provider_specific_count; i++)
		if (!strcmp(p->ep_attr.ep_provider_specific[i].name, name))
			return p->ep_attr.ep_provider_specific[i].value;
	return NULL;
}

/* Checks one atomic's completion on evd: cookie, type, length. */
static void expect_atomic(DAT_EVD_HANDLE evd, DAT_UINT64 cookie,
			  DAT_IB_EXT_TYPE type, DAT_DTO_COMPLETION_STATUS st)
{
	DAT_EVENT ev = next_event(evd);
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;

	CHECK(ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT);
	CHECK(d->user_cookie.as_64 == cookie);
	CHECK(d->status == st);
	CHECK(ext_of(&ev)->type == type);
	CHECK(ext_of(&ev)->status == (st == DAT_DTO_SUCCESS ? DAT_OP_SUCCESS :
				      DAT_IB_OP_ERR));
	if (st == DAT_DTO_SUCCESS) {
		CHECK(d->transfered_length == 8);
		CHECK(d->operation == (DAT_DTOS)(type == DAT_IB_FETCH_AND_ADD ?
						 DAT_IB_DTO_FETCH_ADD :
						 DAT_IB_DTO_CMP_SWAP));
	}
}

static void run_ia(const char *name)
{
	DAT_IA_HANDLE ia = DAT_HANDLE_NULL;
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL, cr_evd, ca, cb, da, db, xevd;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE a, b, lone;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	DAT_IA_ATTR iattr;
	DAT_PROVIDER_ATTR pattr;
	DAT_EP_PARAM epp;
	DAT_EVENT ev;
	DAT_DTO_COOKIE ck;
	DAT_CONTEXT cx = { .as_64 = 0 };
	DAT_LMR_TRIPLET l;
	DAT_RMR_TRIPLET r;
	DAT_COUNT nbufs, span;
	struct mem src = {0}, tgt = {0}, noat = {0}, res = {0}, rcv = {0};
	volatile DAT_UINT64 *word;
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev.event_data.dto_completion_event_data;
	int offered, i;

	ia_name = name;
	if (dat_ia_open((DAT_NAME_PTR)name, 8, &async, &ia) != DAT_SUCCESS) {
		printf("SKIP: %s: no such IA here\n", name);
		return;
	}
	CHECK_RC(dat_ia_query(ia, NULL, DAT_IA_FIELD_ALL, &iattr,
			      DAT_PROVIDER_FIELD_ALL, &pattr), DAT_SUCCESS);
	offered = iattr.extension_supported == DAT_EXTENSION_IB;
	if (offered) {
		CHECK(iattr.extension_version == DAT_IB_EXTENSION_VERSION);
	} else {
		CHECK(iattr.extension_supported == DAT_EXTENSION_NONE);
	}
	/* tcp offers all three; ofi-tcp none (libfabric 1.17 tcp, dapl_ofi(3)) */
	if (!strcmp(name, "tcp"))
		CHECK(offered);
	if (!strcmp(name, "ofi-tcp"))
		CHECK(!offered);
	CHECK(attr_value(&pattr, DAT_IB_ATTR_FETCH_AND_ADD) &&
	      !strcmp(attr_value(&pattr, DAT_IB_ATTR_FETCH_AND_ADD),
		      offered ? "TRUE" : "FALSE"));
	CHECK(attr_value(&pattr, DAT_IB_ATTR_CMP_AND_SWAP) &&
	      !strcmp(attr_value(&pattr, DAT_IB_ATTR_CMP_AND_SWAP),
		      offered ? "TRUE" : "FALSE"));
	CHECK(attr_value(&pattr, DAT_IB_ATTR_IMMED_DATA) &&
	      !strcmp(attr_value(&pattr, DAT_IB_ATTR_IMMED_DATA),
		      offered ? "TRUE" : "FALSE"));

	CHECK_RC(dat_pz_create(ia, &pz), DAT_SUCCESS);
	CHECK_RC(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CR_FLAG, &cr_evd), DAT_SUCCESS);
	CHECK_RC(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &ca), DAT_SUCCESS);
	CHECK_RC(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &cb), DAT_SUCCESS);
	CHECK_RC(dat_evd_create(ia, 16, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &da), DAT_SUCCESS);
	/* the extension EVD flag is accepted and gives a DTO EVD */
	CHECK_RC(dat_evd_create(ia, 16, DAT_HANDLE_NULL,
				(DAT_EVD_FLAGS)DAT_IB_EVD_EXTENSION_FLAG, &db),
		 DAT_SUCCESS);
	CHECK_RC(dat_evd_create(ia, 4, DAT_HANDLE_NULL,
				DAT_EVD_DTO_FLAG | DAT_IB_EVD_EXTENSION_FLAG,
				&xevd), DAT_SUCCESS);
	CHECK_RC(dat_ep_create(ia, pz, da, da, ca, NULL, &a), DAT_SUCCESS);
	CHECK_RC(dat_ep_create(ia, pz, db, db, cb, NULL, &b), DAT_SUCCESS);
	CHECK_RC(dat_ep_create(ia, pz, xevd, xevd, ca, NULL, &lone), DAT_SUCCESS);

	/* REMOTE_ATOMIC is a privilege every IA takes (programs ask for it
	 * whatever the device) */
	if (reg(ia, pz, &src, 256, DAT_MEM_PRIV_ALL_FLAG) ||
	    reg(ia, pz, &tgt, 256, DAT_MEM_PRIV_ALL_FLAG |
		DAT_IB_MEM_PRIV_REMOTE_ATOMIC) ||
	    reg(ia, pz, &noat, 64, DAT_MEM_PRIV_ALL_FLAG) ||
	    reg(ia, pz, &res, 16, DAT_MEM_PRIV_ALL_FLAG) ||
	    reg(ia, pz, &rcv, 64, DAT_MEM_PRIV_ALL_FLAG))
		goto out;
	CHECK(tgt.rctx != 0);
	{	/* the privilege alone exposes the region too */
		struct mem only = {0};

		if (!reg(ia, pz, &only, 64, DAT_MEM_PRIV_LOCAL_WRITE_FLAG |
			 DAT_IB_MEM_PRIV_REMOTE_ATOMIC))
			CHECK(only.rctx != 0);
		unreg(&only, 1);
	}

	/* an unconnected EP: the state is wrong (where offered at all) */
	ck.as_64 = 1;
	l = ltrip(&src, 0, 8);
	r = rtrip(&tgt, 0, 256);
	CHECK_RC(dat_ib_post_rdma_write_immed(lone, 1, &l, ck, &r, 5,
					      DAT_COMPLETION_DEFAULT_FLAG),
		 offered ? ERR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_UNCONNECTED) :
			   ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));

	/* connect a to b through a PSP of the same IA */
	CHECK_RC(dat_psp_create_any(ia, &qual, cr_evd, DAT_PSP_CONSUMER_FLAG, &psp),
		 DAT_SUCCESS);
	l = ltrip(&rcv, 0, 64);
	memset(rcv.buf, 0x5a, 64);
	ck.as_64 = 77;
	CHECK_RC(dat_ep_post_recv(b, 1, &l, ck, DAT_COMPLETION_DEFAULT_FLAG),
		 DAT_SUCCESS);
	CHECK_RC(dat_ep_connect(a, iattr.ia_address_ptr, qual, WAIT_US, 0, NULL,
				DAT_QOS_BEST_EFFORT, DAT_CONNECT_DEFAULT_FLAG),
		 DAT_SUCCESS);
	ev = next_event(cr_evd);
	CHECK(ev.event_number == DAT_CONNECTION_REQUEST_EVENT);
	if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
		goto out;
	CHECK_RC(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
			       b, 0, NULL), DAT_SUCCESS);
	ev = next_event(cb);
	CHECK(ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED);
	ev = next_event(ca);
	CHECK(ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED);
	if (ev.event_number != DAT_CONNECTION_EVENT_ESTABLISHED)
		goto out;

	/* what this connection can do, per EP */
	CHECK_RC(dat_ep_query(a, DAT_EP_FIELD_ALL, &epp), DAT_SUCCESS);
	if (offered) {
		CHECK(ep_attr_value(&epp, DAT_IB_ATTR_IMMED_DATA) &&
		      !strcmp(ep_attr_value(&epp, DAT_IB_ATTR_IMMED_DATA), "TRUE"));
		CHECK(ep_attr_value(&epp, DAT_IB_ATTR_FETCH_AND_ADD) &&
		      !strcmp(ep_attr_value(&epp, DAT_IB_ATTR_FETCH_AND_ADD), "TRUE"));
	}

	/* operations nobody offers, on any handle of ours */
	CHECK_RC(dat_ib_post_send_ud(a, 1, &l, NULL, ck, DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
	{
		DAT_UINT64 cnt[DCNT_EP_ALL_COUNTERS];

		CHECK_RC(dat_ib_query_counters(a, DCNT_EP_ALL_COUNTERS, cnt, 0),
			 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
	}
	CHECK_RC(dat_ib_collective_barrier(ia, cx, DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
	CHECK_RC(dat_extension_op(a, (DAT_EXTENDED_OP)12345),
		 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
	/* an EP operation on another handle */
	l = ltrip(&res, 0, 8);
	r = rtrip(&tgt, 0, 256);
	CHECK_RC(dat_ib_post_fetch_and_add(pz, 1, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP));

	if (!offered) {
		/* connected, and still not implemented: nothing is sent */
		l = ltrip(&src, 0, 16);
		CHECK_RC(dat_ib_post_rdma_write_immed(a, 1, &l, ck, &r, 5,
						      DAT_COMPLETION_DEFAULT_FLAG),
			 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
		l = ltrip(&res, 0, 8);
		CHECK_RC(dat_ib_post_fetch_and_add(a, 1, &l, ck, &r,
						   DAT_COMPLETION_DEFAULT_FLAG),
			 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
		CHECK_RC(dat_ib_post_cmp_and_swap(a, 1, 2, &l, ck, &r,
						  DAT_COMPLETION_DEFAULT_FLAG),
			 ERR(DAT_NOT_IMPLEMENTED, DAT_NO_SUBTYPE));
		/* the receive posted for the write is still there */
		CHECK_RC(dat_ep_recv_query(b, &nbufs, &span), DAT_SUCCESS);
		CHECK(nbufs == 1);
		goto out;
	}

	/* 1. write with immediate: 200 bytes to tgt+8, immediate 0xabcd1234 */
	for (i = 0; i < 200; i++)
		((unsigned char *)src.buf)[i] = (unsigned char)(i * 7 + 3);
	l = ltrip(&src, 0, 200);
	r = rtrip(&tgt, 8, 248);
	ck.as_64 = 11;
	CHECK_RC(dat_ib_post_rdma_write_immed(a, 1, &l, ck, &r, 0xabcd1234u,
					      DAT_COMPLETION_DEFAULT_FLAG),
		 DAT_SUCCESS);
	ev = next_event(da);
	CHECK(ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT);
	CHECK(d->status == DAT_DTO_SUCCESS);
	CHECK(d->user_cookie.as_64 == 11);
	CHECK(d->transfered_length == 200);
	CHECK(d->operation == (DAT_DTOS)DAT_IB_DTO_RDMA_WRITE_IMMED);
	CHECK(ext_of(&ev)->type == DAT_IB_RDMA_WRITE_IMMED);
	CHECK(ext_of(&ev)->status == DAT_OP_SUCCESS);
	/* ... the target's receive carries the length and the immediate */
	ev = next_event(db);
	CHECK(ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT);
	CHECK(d->ep_handle == b);
	CHECK(d->status == DAT_DTO_SUCCESS);
	CHECK(d->user_cookie.as_64 == 77);
	CHECK(d->transfered_length == 200);
	CHECK(d->operation == (DAT_DTOS)DAT_IB_DTO_RECV_IMMED);
	CHECK(ext_of(&ev)->type == DAT_IB_RDMA_WRITE_IMMED_DATA);
	CHECK(ext_of(&ev)->val.immed.data == 0xabcd1234u);
	CHECK(memcmp((char *)tgt.buf + 8, src.buf, 200) == 0);
	/* no data in the receive's own buffer, and it is consumed */
	for (i = 0; i < 64; i++)
		if (((unsigned char *)rcv.buf)[i] != 0x5a)
			break;
	CHECK(i == 64);
	CHECK_RC(dat_ep_recv_query(b, &nbufs, &span), DAT_SUCCESS);
	CHECK(nbufs == 0);

	/* argument checks of the write */
	r = rtrip(&tgt, 8, 100);
	CHECK_RC(dat_ib_post_rdma_write_immed(a, 1, &l, ck, &r, 1,
					      DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_LENGTH_ERROR, 0));
	CHECK_RC(dat_ib_post_rdma_write_immed(a, 1, &l, ck, NULL, 1,
					      DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5));
	r = rtrip(&tgt, 8, 248);
	CHECK_RC(dat_ib_post_rdma_write_immed(a, 1, &l, ck, &r, 1,
					      (DAT_COMPLETION_FLAGS)0x4000),
		 ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7));

	/* 2. fetch-and-add: the old value back, the target changed */
	word = (volatile DAT_UINT64 *)tgt.buf;
	*word = 0x100;
	l = ltrip(&res, 0, 8);
	r = rtrip(&tgt, 0, 256);
	ck.as_64 = 21;
	CHECK_RC(dat_ib_post_fetch_and_add(a, 0x23, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG), DAT_SUCCESS);
	expect_atomic(da, 21, DAT_IB_FETCH_AND_ADD, DAT_DTO_SUCCESS);
	CHECK(*(DAT_UINT64 *)res.buf == 0x100);
	CHECK(*word == 0x123);

	/* 3. compare-and-swap that swaps, then one whose compare fails */
	ck.as_64 = 31;
	CHECK_RC(dat_ib_post_cmp_and_swap(a, 0x123, 0x777, &l, ck, &r,
					  DAT_COMPLETION_DEFAULT_FLAG), DAT_SUCCESS);
	expect_atomic(da, 31, DAT_IB_CMP_AND_SWAP, DAT_DTO_SUCCESS);
	CHECK(*(DAT_UINT64 *)res.buf == 0x123);
	CHECK(*word == 0x777);
	ck.as_64 = 32;
	CHECK_RC(dat_ib_post_cmp_and_swap(a, 0x1, 0x999, &l, ck, &r,
					  DAT_COMPLETION_DEFAULT_FLAG), DAT_SUCCESS);
	expect_atomic(da, 32, DAT_IB_CMP_AND_SWAP, DAT_DTO_SUCCESS);
	CHECK(*(DAT_UINT64 *)res.buf == 0x777);
	CHECK(*word == 0x777);

	/* 4. argument checks of the atomics, before anything is sent */
	r = rtrip(&tgt, 4, 64);                 /* unaligned */
	CHECK_RC(dat_ib_post_fetch_and_add(a, 1, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5));
	CHECK_RC(dat_ib_post_cmp_and_swap(a, 1, 2, &l, ck, &r,
					  DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6));
	r = rtrip(&tgt, 0, 4);                  /* remote shorter than 8 */
	CHECK_RC(dat_ib_post_fetch_and_add(a, 1, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_LENGTH_ERROR, 0));
	r = rtrip(&tgt, 0, 256);
	l = ltrip(&res, 0, 4);                  /* local not 8 bytes */
	CHECK_RC(dat_ib_post_fetch_and_add(a, 1, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_LENGTH_ERROR, 0));
	l = ltrip(&res, 0, 16);
	CHECK_RC(dat_ib_post_cmp_and_swap(a, 1, 2, &l, ck, &r,
					  DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_LENGTH_ERROR, 0));
	CHECK_RC(dat_ib_post_fetch_and_add(a, 1, NULL, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3));
	l = ltrip(&res, 0, 8);
	l.lmr_context ^= 0x7fff0000;            /* no such LMR */
	CHECK_RC(dat_ib_post_fetch_and_add(a, 1, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG),
		 ERR(DAT_PRIVILEGES_VIOLATION, 0));
	l = ltrip(&res, 0, 8);
	CHECK_RC(dat_ib_post_cmp_and_swap(a, 1, 2, &l, ck, &r,
					  (DAT_COMPLETION_FLAGS)0x4000),
		 ERR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7));
	CHECK(*word == 0x777);

	/* 5. a write with immediate into an EP on an SRQ: the SRQ's
	 * receive is consumed, its event names the EP that took it */
	{
		DAT_SRQ_ATTR sa = { .max_recv_dtos = 4, .max_recv_iov = 1,
				    .low_watermark = 0 };
		DAT_SRQ_HANDLE srq;
		DAT_EP_HANDLE a2, c;
		DAT_EVD_HANDLE dc, cc;

		CHECK_RC(dat_evd_create(ia, 8, DAT_HANDLE_NULL, DAT_EVD_DTO_FLAG, &dc), DAT_SUCCESS);
		CHECK_RC(dat_evd_create(ia, 4, DAT_HANDLE_NULL, DAT_EVD_CONNECTION_FLAG, &cc), DAT_SUCCESS);
		CHECK_RC(dat_srq_create(ia, pz, &sa, &srq), DAT_SUCCESS);
		CHECK_RC(dat_ep_create_with_srq(ia, pz, dc, dc, cc, srq, NULL, &c), DAT_SUCCESS);
		CHECK_RC(dat_ep_create(ia, pz, da, da, ca, NULL, &a2), DAT_SUCCESS);
		l = ltrip(&rcv, 0, 64);
		ck.as_64 = 88;
		CHECK_RC(dat_srq_post_recv(srq, 1, &l, ck), DAT_SUCCESS);
		CHECK_RC(dat_ep_connect(a2, iattr.ia_address_ptr, qual, WAIT_US, 0,
					NULL, DAT_QOS_BEST_EFFORT,
					DAT_CONNECT_DEFAULT_FLAG), DAT_SUCCESS);
		ev = next_event(cr_evd);
		CHECK(ev.event_number == DAT_CONNECTION_REQUEST_EVENT);
		if (ev.event_number != DAT_CONNECTION_REQUEST_EVENT)
			goto out;
		CHECK_RC(dat_cr_accept(ev.event_data.cr_arrival_event_data.cr_handle,
				       c, 0, NULL), DAT_SUCCESS);
		ev = next_event(cc);
		CHECK(ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED);
		ev = next_event(ca);
		CHECK(ev.event_number == DAT_CONNECTION_EVENT_ESTABLISHED);
		l = ltrip(&src, 0, 32);
		r = rtrip(&tgt, 128, 32);
		ck.as_64 = 12;
		CHECK_RC(dat_ib_post_rdma_write_immed(a2, 1, &l, ck, &r, 0x5151,
						      DAT_COMPLETION_DEFAULT_FLAG),
			 DAT_SUCCESS);
		ev = next_event(da);
		CHECK(ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT);
		CHECK(d->user_cookie.as_64 == 12 && d->status == DAT_DTO_SUCCESS);
		ev = next_event(dc);
		CHECK(ev.event_number == (DAT_EVENT_NUMBER)DAT_IB_DTO_EVENT);
		CHECK(d->ep_handle == c);
		CHECK(d->user_cookie.as_64 == 88);
		CHECK(d->status == DAT_DTO_SUCCESS);
		CHECK(d->transfered_length == 32);
		CHECK(ext_of(&ev)->type == DAT_IB_RDMA_WRITE_IMMED_DATA);
		CHECK(ext_of(&ev)->val.immed.data == 0x5151);
		CHECK(memcmp((char *)tgt.buf + 128, src.buf, 32) == 0);
	}

	/* 6. a target without DAT_IB_MEM_PRIV_REMOTE_ATOMIC: the atomic
	 * completes with a remote access error (last: the error may end
	 * the connection) */
	*(volatile DAT_UINT64 *)noat.buf = 5;
	l = ltrip(&res, 0, 8);
	r = rtrip(&noat, 0, 64);
	ck.as_64 = 51;
	CHECK_RC(dat_ib_post_fetch_and_add(a, 1, &l, ck, &r,
					   DAT_COMPLETION_DEFAULT_FLAG), DAT_SUCCESS);
	expect_atomic(da, 51, DAT_IB_FETCH_AND_ADD, DAT_DTO_ERR_REMOTE_ACCESS);
	CHECK(*(volatile DAT_UINT64 *)noat.buf == 5);

out:
	dat_ia_close(ia, DAT_CLOSE_ABRUPT_FLAG);
	unreg(&src, 0);
	unreg(&tgt, 0);
	unreg(&noat, 0);
	unreg(&res, 0);
	unreg(&rcv, 0);
	(void)cr_evd;
}

int main(int argc, char **argv)
{
	const char *conf = getenv("DAT_TEST_CONF");
	static const char *defaults[] = { "tcp", "ofi-tcp" };
	const char **names = defaults;
	int n = 2;

	if (!conf) {
		printf("SKIP: no DAT_TEST_CONF\n");
		return 77;
	}
	setenv("DAT_OVERRIDE", conf, 1);
	if (argc > 1) {
		names = (const char **)argv + 1;
		n = argc - 1;
	}
	for (int i = 0; i < n; i++)
		run_ia(names[i]);
	if (failures)
		return 1;
	printf("PASS: the IB extensions on");
	for (int i = 0; i < n; i++)
		printf(" %s", names[i]);
	printf("\n");
	return 0;
}
