/*
 * dapltest -T F -f queryinfo: the query calls.  Cases 0-17 are
 * OpenFabrics' list (success for IA, CNO, EVD, PSP, RSP, CR, EP, PZ, LMR
 * and RMR, then a bad parameter and a bad handle for IA, CNO, EVD and
 * PSP); OpenFabrics left the CR query (case 5) to "other tools", here it
 * queries a real request over loopback.  Cases 18-29 are ours: the bad
 * parameter and bad handle of RSP, CR, EP, PZ, LMR and RMR.
 *
 * A bad parameter is a NULL result pointer with a non-empty mask; a bad
 * handle is a live handle of another kind.
 */
#include <stdlib.h>
#include <string.h>

#include "dt_lf_fft.h"

enum q_object { Q_IA, Q_CNO, Q_EVD, Q_PSP, Q_RSP, Q_CR, Q_EP, Q_PZ, Q_LMR,
		Q_RMR };
enum q_variant { Q_OK, Q_BAD_PARAM, Q_BAD_HANDLE };

#define BAD_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)
#define BAD_HANDLE(sub) DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_##sub)

static const char cr_pdata[] = "queryinfo";

/* Every object the queries need, on one IA (and a loopback pair for the
 * connection request). */
struct q_env {
	struct dt_kit kit;	/* PZ, EVDs, EP, CR EVD */
	DAT_CNO_HANDLE cno;
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL psp_qual, rsp_qual;
	DAT_RSP_HANDLE rsp;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_context;
	DAT_RMR_HANDLE rmr;
	void *buf;
	struct dt_pair pair;
	bool pair_open;
	DAT_CR_HANDLE cr;
};

static bool env_open(struct dt_fft_ctx *ctx, struct q_env *e, bool with_cr)
{
	DAT_REGION_DESCRIPTION region;
	DAT_PSP_HANDLE probe;

	memset(e, 0, sizeof(*e));
	if (!dt_kit_open(ctx, &e->kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP |
			 DT_KIT_CR_EVD))
		return false;
	if (!DT_CHECK_RC(ctx, "dat_cno_create",
			 dat_cno_create(e->kit.ia, DAT_OS_WAIT_PROXY_AGENT_NULL,
					&e->cno), DAT_SUCCESS)) {
		e->cno = DAT_HANDLE_NULL;
		return false;
	}
	/* a provider PSP, as OpenFabrics queried */
	if (!DT_CHECK_RC(ctx, "dat_psp_create_any (provider EPs)",
			 dat_psp_create_any(e->kit.ia, &e->psp_qual,
					    e->kit.cr_evd,
					    DAT_PSP_PROVIDER_FLAG, &e->psp),
			 DAT_SUCCESS)) {
		e->psp = DAT_HANDLE_NULL;
		return false;
	}
	/* a free qualifier for the RSP: picked for a PSP, given back */
	if (!DT_CHECK_RC(ctx, "dat_psp_create_any (probe)",
			 dat_psp_create_any(e->kit.ia, &e->rsp_qual,
					    e->kit.cr_evd,
					    DAT_PSP_CONSUMER_FLAG, &probe),
			 DAT_SUCCESS) ||
	    !DT_CHECK_RC(ctx, "dat_psp_free (probe)", dat_psp_free(probe),
			 DAT_SUCCESS))
		return false;
	if (!DT_CHECK_RC(ctx, "dat_rsp_create",
			 dat_rsp_create(e->kit.ia, e->rsp_qual, e->kit.ep,
					e->kit.cr_evd, &e->rsp), DAT_SUCCESS)) {
		e->rsp = DAT_HANDLE_NULL;
		return false;
	}
	e->buf = malloc(DT_BUFSZ);
	if (!DT_CHECK(ctx, e->buf != NULL, "malloc(%d)", DT_BUFSZ))
		return false;
	memset(&region, 0, sizeof(region));
	region.for_va = e->buf;
	if (!DT_CHECK_RC(ctx, "dat_lmr_create",
			 dat_lmr_create(e->kit.ia, DAT_MEM_TYPE_VIRTUAL, region,
					DT_BUFSZ, e->kit.pz,
					DAT_MEM_PRIV_ALL_FLAG, &e->lmr,
					&e->lmr_context, NULL, NULL, NULL),
			 DAT_SUCCESS)) {
		e->lmr = DAT_HANDLE_NULL;
		return false;
	}
	if (!DT_CHECK_RC(ctx, "dat_rmr_create",
			 dat_rmr_create(e->kit.pz, &e->rmr), DAT_SUCCESS)) {
		e->rmr = DAT_HANDLE_NULL;
		return false;
	}
	if (!with_cr)
		return true;
	e->pair_open = true;
	return dt_pair_open(ctx, &e->pair) &&
	       dt_pair_qos_usable(ctx, &e->pair) &&
	       dt_pair_request(ctx, &e->pair, cr_pdata,
			       (DAT_COUNT)strlen(cr_pdata), &e->cr);
}

static void env_close(struct dt_fft_ctx *ctx, struct q_env *e)
{
	DAT_EVENT ev;

	if (e->cr) {
		DT_CHECK_RC(ctx, "dat_cr_reject", dat_cr_reject(e->cr),
			    DAT_SUCCESS);
		dt_wait_event(ctx, e->pair.cli.conn_evd,
			      DAT_CONNECTION_EVENT_PEER_REJECTED, &ev);
	}
	if (e->pair_open)
		dt_pair_close(ctx, &e->pair);
	if (e->rmr)
		DT_CHECK_RC(ctx, "dat_rmr_free", dat_rmr_free(e->rmr),
			    DAT_SUCCESS);
	if (e->lmr)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(e->lmr),
			    DAT_SUCCESS);
	free(e->buf);
	/* the RSP gives its EP back before the kit frees it */
	if (e->rsp)
		DT_CHECK_RC(ctx, "dat_rsp_free", dat_rsp_free(e->rsp),
			    DAT_SUCCESS);
	if (e->psp)
		DT_CHECK_RC(ctx, "dat_psp_free", dat_psp_free(e->psp),
			    DAT_SUCCESS);
	if (e->cno)
		DT_CHECK_RC(ctx, "dat_cno_free", dat_cno_free(e->cno),
			    DAT_SUCCESS);
	dt_kit_close(ctx, &e->kit);
}

/* What a successful query must say about the object. */
static void check_ok(struct dt_fft_ctx *ctx, struct q_env *e,
		     enum q_object obj)
{
	DAT_EVD_HANDLE async;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pattr;
	DAT_CNO_PARAM cno;
	DAT_EVD_PARAM evd;
	DAT_PSP_PARAM psp;
	DAT_RSP_PARAM rsp;
	DAT_CR_PARAM cr;
	DAT_EP_PARAM ep;
	DAT_PZ_PARAM pz;
	DAT_LMR_PARAM lmr;
	DAT_RMR_PARAM rmr;

	switch (obj) {
	case Q_IA:
		if (!DT_CHECK_RC(ctx, "dat_ia_query",
				 dat_ia_query(e->kit.ia, &async,
					      DAT_IA_FIELD_ALL, &ia_attr,
					      DAT_PROVIDER_FIELD_ALL, &pattr),
				 DAT_SUCCESS))
			return;
		DT_CHECK(ctx, async == e->kit.async_evd,
			 "the async EVD is the one dat_ia_open gave");
		DT_CHECK(ctx, ia_attr.ia_address_ptr != NULL &&
			 ia_attr.max_eps > 0 && ia_attr.max_evds > 0 &&
			 ia_attr.max_pzs > 0 && ia_attr.max_lmrs > 0 &&
			 ia_attr.max_iov_segments_per_dto > 0,
			 "the IA has an address and room for EPs, EVDs, PZs, "
			 "LMRs and segments");
		DT_CHECK(ctx, pattr.dapl_version_major == 1 &&
			 pattr.dapl_version_minor == 2 &&
			 pattr.max_private_data_size > 0,
			 "the provider implements DAT 1.2 and carries "
			 "private data (version %u.%u, %d bytes)",
			 pattr.dapl_version_major, pattr.dapl_version_minor,
			 (int)pattr.max_private_data_size);
		return;
	case Q_CNO:
		if (DT_CHECK_RC(ctx, "dat_cno_query",
				dat_cno_query(e->cno, DAT_CNO_FIELD_ALL, &cno),
				DAT_SUCCESS))
			DT_CHECK(ctx, cno.ia_handle == e->kit.ia &&
				 cno.agent.proxy_agent_func == NULL,
				 "the CNO is on our IA, with no agent");
		return;
	case Q_EVD:
		if (DT_CHECK_RC(ctx, "dat_evd_query",
				dat_evd_query(e->kit.recv_evd,
					      DAT_EVD_FIELD_ALL, &evd),
				DAT_SUCCESS))
			DT_CHECK(ctx, evd.ia_handle == e->kit.ia &&
				 evd.evd_qlen >= DT_QLEN &&
				 evd.evd_flags == DAT_EVD_DTO_FLAG &&
				 evd.cno_handle == DAT_HANDLE_NULL,
				 "the EVD is on our IA with its queue length "
				 "(%d >= %d), flags and no CNO",
				 (int)evd.evd_qlen, DT_QLEN);
		/* and the asynchronous one, as OpenFabrics queried */
		if (DT_CHECK_RC(ctx, "dat_evd_query (async EVD)",
				dat_evd_query(e->kit.async_evd,
					      DAT_EVD_FIELD_ALL, &evd),
				DAT_SUCCESS))
			DT_CHECK(ctx, evd.ia_handle == e->kit.ia &&
				 (evd.evd_flags & DAT_EVD_ASYNC_FLAG),
				 "the async EVD has DAT_EVD_ASYNC_FLAG");
		return;
	case Q_PSP:
		if (DT_CHECK_RC(ctx, "dat_psp_query",
				dat_psp_query(e->psp, DAT_PSP_FIELD_ALL, &psp),
				DAT_SUCCESS))
			DT_CHECK(ctx, psp.ia_handle == e->kit.ia &&
				 psp.conn_qual == e->psp_qual &&
				 psp.evd_handle == e->kit.cr_evd &&
				 psp.psp_flags == DAT_PSP_PROVIDER_FLAG,
				 "the PSP is on our IA, qualifier, EVD and "
				 "flags");
		return;
	case Q_RSP:
		if (DT_CHECK_RC(ctx, "dat_rsp_query",
				dat_rsp_query(e->rsp, DAT_RSP_FIELD_ALL, &rsp),
				DAT_SUCCESS))
			DT_CHECK(ctx, rsp.ia_handle == e->kit.ia &&
				 rsp.conn_qual == e->rsp_qual &&
				 rsp.evd_handle == e->kit.cr_evd &&
				 rsp.ep_handle == e->kit.ep,
				 "the RSP is on our IA, qualifier, EVD and EP");
		return;
	case Q_CR:
		if (DT_CHECK_RC(ctx, "dat_cr_query",
				dat_cr_query(e->cr, DAT_CR_FIELD_ALL, &cr),
				DAT_SUCCESS))
			DT_CHECK(ctx, cr.remote_ia_address_ptr != NULL &&
				 cr.remote_port_qual != 0 &&
				 cr.private_data_size ==
				 (DAT_COUNT)strlen(cr_pdata) &&
				 cr.private_data &&
				 memcmp(cr.private_data, cr_pdata,
					strlen(cr_pdata)) == 0 &&
				 cr.local_ep_handle == DAT_HANDLE_NULL,
				 "the request has the peer's address and port "
				 "and exactly its %zu bytes (got %d)",
				 strlen(cr_pdata), (int)cr.private_data_size);
		return;
	case Q_EP:
		if (DT_CHECK_RC(ctx, "dat_ep_query",
				dat_ep_query(e->kit.ep, DAT_EP_FIELD_ALL, &ep),
				DAT_SUCCESS))
			DT_CHECK(ctx, ep.ia_handle == e->kit.ia &&
				 ep.ep_state == DAT_EP_STATE_RESERVED &&
				 ep.pz_handle == e->kit.pz &&
				 ep.ep_attr.max_recv_dtos > 0 &&
				 ep.ep_attr.max_request_dtos > 0,
				 "the EP is on our IA and PZ, RESERVED by the "
				 "RSP (state %d), with queues",
				 (int)ep.ep_state);
		return;
	case Q_PZ:
		if (DT_CHECK_RC(ctx, "dat_pz_query",
				dat_pz_query(e->kit.pz, DAT_PZ_FIELD_ALL, &pz),
				DAT_SUCCESS))
			DT_CHECK(ctx, pz.ia_handle == e->kit.ia,
				 "the PZ is on our IA");
		return;
	case Q_LMR:
		if (DT_CHECK_RC(ctx, "dat_lmr_query",
				dat_lmr_query(e->lmr, DAT_LMR_FIELD_ALL, &lmr),
				DAT_SUCCESS))
			DT_CHECK(ctx, lmr.ia_handle == e->kit.ia &&
				 lmr.pz_handle == e->kit.pz &&
				 lmr.length == DT_BUFSZ &&
				 lmr.region_desc.for_va == e->buf &&
				 lmr.lmr_context == e->lmr_context,
				 "the LMR is on our IA and PZ, our memory and "
				 "context");
		return;
	case Q_RMR:
		/* unbound: no triplet to ask for (as OpenFabrics) */
		if (DT_CHECK_RC(ctx, "dat_rmr_query",
				dat_rmr_query(e->rmr, DAT_RMR_FIELD_ALL &
					      ~DAT_RMR_FIELD_LMR_TRIPLET,
					      &rmr), DAT_SUCCESS))
			DT_CHECK(ctx, rmr.ia_handle == e->kit.ia &&
				 rmr.pz_handle == e->kit.pz,
				 "the RMR is on our IA and PZ");
		return;
	}
}

static void check_bad_param(struct dt_fft_ctx *ctx, struct q_env *e,
			    enum q_object obj)
{
	DAT_EVD_HANDLE async;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pattr;

	switch (obj) {
	case Q_IA:
		DT_CHECK_RC(ctx, "dat_ia_query (ia_attr NULL)",
			    dat_ia_query(e->kit.ia, &async, DAT_IA_FIELD_ALL,
					 NULL, DAT_PROVIDER_FIELD_ALL, &pattr),
			    BAD_ARG(4));
		DT_CHECK_RC(ctx, "dat_ia_query (provider_attr NULL)",
			    dat_ia_query(e->kit.ia, &async, DAT_IA_FIELD_ALL,
					 &ia_attr, DAT_PROVIDER_FIELD_ALL,
					 NULL), BAD_ARG(6));
		return;
	case Q_CNO:
		DT_CHECK_RC(ctx, "dat_cno_query (param NULL)",
			    dat_cno_query(e->cno, DAT_CNO_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_EVD:
		DT_CHECK_RC(ctx, "dat_evd_query (param NULL)",
			    dat_evd_query(e->kit.recv_evd, DAT_EVD_FIELD_ALL,
					  NULL), BAD_ARG(3));
		return;
	case Q_PSP:
		DT_CHECK_RC(ctx, "dat_psp_query (param NULL)",
			    dat_psp_query(e->psp, DAT_PSP_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_RSP:
		DT_CHECK_RC(ctx, "dat_rsp_query (param NULL)",
			    dat_rsp_query(e->rsp, DAT_RSP_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_CR:
		DT_CHECK_RC(ctx, "dat_cr_query (param NULL)",
			    dat_cr_query(e->cr, DAT_CR_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_EP:
		DT_CHECK_RC(ctx, "dat_ep_query (param NULL)",
			    dat_ep_query(e->kit.ep, DAT_EP_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_PZ:
		DT_CHECK_RC(ctx, "dat_pz_query (param NULL)",
			    dat_pz_query(e->kit.pz, DAT_PZ_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_LMR:
		DT_CHECK_RC(ctx, "dat_lmr_query (param NULL)",
			    dat_lmr_query(e->lmr, DAT_LMR_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	case Q_RMR:
		DT_CHECK_RC(ctx, "dat_rmr_query (param NULL)",
			    dat_rmr_query(e->rmr, DAT_RMR_FIELD_ALL, NULL),
			    BAD_ARG(3));
		return;
	}
}

static void check_bad_handle(struct dt_fft_ctx *ctx, struct q_env *e,
			     enum q_object obj)
{
	DAT_EVD_HANDLE async;
	DAT_IA_ATTR ia_attr;
	DAT_PROVIDER_ATTR pattr;
	DAT_CNO_PARAM cno;
	DAT_EVD_PARAM evd;
	DAT_PSP_PARAM psp;
	DAT_RSP_PARAM rsp;
	DAT_CR_PARAM cr;
	DAT_EP_PARAM ep;
	DAT_PZ_PARAM pz;
	DAT_LMR_PARAM lmr;
	DAT_RMR_PARAM rmr;

	switch (obj) {
	case Q_IA:
		DT_CHECK_RC(ctx, "dat_ia_query (an EVD as the IA)",
			    dat_ia_query(e->kit.async_evd, &async,
					 DAT_IA_FIELD_ALL, &ia_attr,
					 DAT_PROVIDER_FIELD_ALL, &pattr),
			    BAD_HANDLE(IA));
		return;
	case Q_CNO:
		DT_CHECK_RC(ctx, "dat_cno_query (the IA as the CNO)",
			    dat_cno_query(e->kit.ia, DAT_CNO_FIELD_ALL, &cno),
			    BAD_HANDLE(CNO));
		return;
	case Q_EVD:
		/* an EVD as first argument of an evd call: HANDLE1 */
		DT_CHECK_RC(ctx, "dat_evd_query (the IA as the EVD)",
			    dat_evd_query(e->kit.ia, DAT_EVD_FIELD_ALL, &evd),
			    DAT_ERROR(DAT_INVALID_HANDLE,
				      DAT_INVALID_HANDLE1));
		return;
	case Q_PSP:
		DT_CHECK_RC(ctx, "dat_psp_query (an EVD as the PSP)",
			    dat_psp_query(e->kit.cr_evd, DAT_PSP_FIELD_ALL,
					  &psp), BAD_HANDLE(PSP));
		return;
	case Q_RSP:
		DT_CHECK_RC(ctx, "dat_rsp_query (the PSP as the RSP)",
			    dat_rsp_query(e->psp, DAT_RSP_FIELD_ALL, &rsp),
			    BAD_HANDLE(RSP));
		return;
	case Q_CR:
		DT_CHECK_RC(ctx, "dat_cr_query (the PSP as the request)",
			    dat_cr_query(e->psp, DAT_CR_FIELD_ALL, &cr),
			    BAD_HANDLE(CR));
		return;
	case Q_EP:
		DT_CHECK_RC(ctx, "dat_ep_query (the PZ as the EP)",
			    dat_ep_query(e->kit.pz, DAT_EP_FIELD_ALL, &ep),
			    BAD_HANDLE(EP));
		return;
	case Q_PZ:
		DT_CHECK_RC(ctx, "dat_pz_query (the EP as the PZ)",
			    dat_pz_query(e->kit.ep, DAT_PZ_FIELD_ALL, &pz),
			    BAD_HANDLE(PZ));
		return;
	case Q_LMR:
		DT_CHECK_RC(ctx, "dat_lmr_query (the RMR as the LMR)",
			    dat_lmr_query(e->rmr, DAT_LMR_FIELD_ALL, &lmr),
			    BAD_HANDLE(LMR));
		return;
	case Q_RMR:
		DT_CHECK_RC(ctx, "dat_rmr_query (the LMR as the RMR)",
			    dat_rmr_query(e->lmr, DAT_RMR_FIELD_ALL, &rmr),
			    BAD_HANDLE(RMR));
		return;
	}
}

static void query(struct dt_fft_ctx *ctx, enum q_object obj,
		  enum q_variant variant)
{
	struct q_env e;

	if (env_open(ctx, &e, obj == Q_CR)) {
		if (variant == Q_OK)
			check_ok(ctx, &e, obj);
		else if (variant == Q_BAD_PARAM)
			check_bad_param(ctx, &e, obj);
		else
			check_bad_handle(ctx, &e, obj);
	}
	env_close(ctx, &e);
}

#define QCASE(fn, obj, variant) \
	static void fn(struct dt_fft_ctx *ctx) { query(ctx, obj, variant); }

QCASE(ia_ok, Q_IA, Q_OK)
QCASE(cno_ok, Q_CNO, Q_OK)
QCASE(evd_ok, Q_EVD, Q_OK)
QCASE(psp_ok, Q_PSP, Q_OK)
QCASE(rsp_ok, Q_RSP, Q_OK)
QCASE(cr_ok, Q_CR, Q_OK)
QCASE(ep_ok, Q_EP, Q_OK)
QCASE(pz_ok, Q_PZ, Q_OK)
QCASE(lmr_ok, Q_LMR, Q_OK)
QCASE(rmr_ok, Q_RMR, Q_OK)
QCASE(ia_param, Q_IA, Q_BAD_PARAM)
QCASE(ia_handle, Q_IA, Q_BAD_HANDLE)
QCASE(cno_param, Q_CNO, Q_BAD_PARAM)
QCASE(cno_handle, Q_CNO, Q_BAD_HANDLE)
QCASE(evd_param, Q_EVD, Q_BAD_PARAM)
QCASE(evd_handle, Q_EVD, Q_BAD_HANDLE)
QCASE(psp_param, Q_PSP, Q_BAD_PARAM)
QCASE(psp_handle, Q_PSP, Q_BAD_HANDLE)
QCASE(rsp_param, Q_RSP, Q_BAD_PARAM)
QCASE(rsp_handle, Q_RSP, Q_BAD_HANDLE)
QCASE(cr_param, Q_CR, Q_BAD_PARAM)
QCASE(cr_handle, Q_CR, Q_BAD_HANDLE)
QCASE(ep_param, Q_EP, Q_BAD_PARAM)
QCASE(ep_handle, Q_EP, Q_BAD_HANDLE)
QCASE(pz_param, Q_PZ, Q_BAD_PARAM)
QCASE(pz_handle, Q_PZ, Q_BAD_HANDLE)
QCASE(lmr_param, Q_LMR, Q_BAD_PARAM)
QCASE(lmr_handle, Q_LMR, Q_BAD_HANDLE)
QCASE(rmr_param, Q_RMR, Q_BAD_PARAM)
QCASE(rmr_handle, Q_RMR, Q_BAD_HANDLE)

#define OK_TEXT(X) "Verify " X " Querying information is successful " \
		   "using DAT_" X "_QUERY"
#define PARAM_TEXT(X) "Verify " X " Querying fails with " \
		      "DAT_INVALID_PARAMETER when passing a bad parameter " \
		      "to DAT_" X "_QUERY"
#define HANDLE_TEXT(X) "Verify " X " Querying fails with " \
		       "DAT_INVALID_HANDLE when passing an invalid handle " \
		       "to DAT_" X "_QUERY"

static const struct dt_fft_case cases[] = {
	{ OK_TEXT("IA"), ia_ok },
	{ OK_TEXT("CNO"), cno_ok },
	{ OK_TEXT("EVD"), evd_ok },
	{ OK_TEXT("PSP"), psp_ok },
	{ OK_TEXT("RSP"), rsp_ok },
	{ OK_TEXT("CR"), cr_ok },
	{ OK_TEXT("EP"), ep_ok },
	{ OK_TEXT("PZ"), pz_ok },
	{ OK_TEXT("LMR"), lmr_ok },
	{ OK_TEXT("RMR"), rmr_ok },
	{ PARAM_TEXT("IA"), ia_param },
	{ HANDLE_TEXT("IA"), ia_handle },
	{ PARAM_TEXT("CNO"), cno_param },
	{ HANDLE_TEXT("CNO"), cno_handle },
	{ PARAM_TEXT("EVD"), evd_param },
	{ HANDLE_TEXT("EVD"), evd_handle },
	{ PARAM_TEXT("PSP"), psp_param },
	{ HANDLE_TEXT("PSP"), psp_handle },
	{ PARAM_TEXT("RSP"), rsp_param },
	{ HANDLE_TEXT("RSP"), rsp_handle },
	{ PARAM_TEXT("CR"), cr_param },
	{ HANDLE_TEXT("CR"), cr_handle },
	{ PARAM_TEXT("EP"), ep_param },
	{ HANDLE_TEXT("EP"), ep_handle },
	{ PARAM_TEXT("PZ"), pz_param },
	{ HANDLE_TEXT("PZ"), pz_handle },
	{ PARAM_TEXT("LMR"), lmr_param },
	{ HANDLE_TEXT("LMR"), lmr_handle },
	{ PARAM_TEXT("RMR"), rmr_param },
	{ HANDLE_TEXT("RMR"), rmr_handle },
};

const struct dt_fft_feature dt_fft_queryinfo = {
	.name = "queryinfo",
	.title = "Queryinfo",
	.cases = cases,
	.ncases = sizeof(cases) / sizeof(cases[0]),
};
