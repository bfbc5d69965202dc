/*
 * dapltest -T F -f endpoint: creating and freeing endpoints.  Cases 0-2
 * are OpenFabrics' list; 3-6 are ours.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dt_lf_fft.h"

static void create_free(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_EP_PARAM param;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_ep_create",
			 dat_ep_create(kit.ia, kit.pz, kit.recv_evd,
				       kit.req_evd, kit.conn_evd, NULL, &ep),
			 DAT_SUCCESS))
		goto out;
	if (DT_CHECK_RC(ctx, "dat_ep_query",
			dat_ep_query(ep, DAT_EP_FIELD_ALL, &param),
			DAT_SUCCESS))
		DT_CHECK(ctx, param.ep_state == DAT_EP_STATE_UNCONNECTED &&
			 param.ia_handle == kit.ia && param.pz_handle == kit.pz &&
			 param.recv_evd_handle == kit.recv_evd &&
			 param.request_evd_handle == kit.req_evd &&
			 param.connect_evd_handle == kit.conn_evd,
			 "the new EP is UNCONNECTED, on our IA, PZ and EVDs");
	DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep), DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_ep_free (again)", dat_ep_free(ep),
		    DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP));
out:
	dt_kit_close(ctx, &kit);
}

static void freed_pz(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_PZ_HANDLE pz;
	DAT_EP_HANDLE ep = DAT_HANDLE_NULL;
	DAT_RETURN rc;

	if (!dt_kit_open(ctx, &kit, DT_KIT_EVDS))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_pz_create", dat_pz_create(kit.ia, &pz),
			 DAT_SUCCESS) ||
	    !DT_CHECK_RC(ctx, "dat_pz_free", dat_pz_free(pz), DAT_SUCCESS))
		goto out;
	rc = dat_ep_create(kit.ia, pz, kit.recv_evd, kit.req_evd,
			   kit.conn_evd, NULL, &ep);
	if (!DT_CHECK_RC(ctx, "dat_ep_create (freed PZ)", rc,
			 DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ))
	    && rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep), DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

/* Frees an EP that still has a receive posted: the free succeeds, the
 * receive (if it shows up at all) completes flushed, and the EP lets go
 * of its LMR's PZ and its EVDs. */
static void free_busy(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_REGION_DESCRIPTION region;
	DAT_LMR_HANDLE lmr = DAT_HANDLE_NULL;
	DAT_LMR_CONTEXT lmr_context;
	DAT_LMR_TRIPLET iov;
	DAT_DTO_COOKIE cookie;
	DAT_EVENT ev;
	DAT_RETURN rc;
	void *buf = malloc(DT_BUFSZ);

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP) ||
	    !DT_CHECK(ctx, buf != NULL, "malloc(%d)", DT_BUFSZ))
		goto out;
	memset(&region, 0, sizeof(region));
	region.for_va = buf;
	if (!DT_CHECK_RC(ctx, "dat_lmr_create",
			 dat_lmr_create(kit.ia, DAT_MEM_TYPE_VIRTUAL, region,
					DT_BUFSZ, kit.pz,
					DAT_MEM_PRIV_LOCAL_WRITE_FLAG, &lmr,
					&lmr_context, NULL, NULL, NULL),
			 DAT_SUCCESS)) {
		lmr = DAT_HANDLE_NULL;
		goto out;
	}
	iov.lmr_context = lmr_context;
	iov.pad = 0;
	iov.virtual_address = (DAT_VADDR)(uintptr_t)buf;
	iov.segment_length = DT_BUFSZ;
	cookie.as_64 = 0x1234;
	if (!DT_CHECK_RC(ctx, "dat_ep_post_recv",
			 dat_ep_post_recv(kit.ep, 1, &iov, cookie,
					  DAT_COMPLETION_DEFAULT_FLAG),
			 DAT_SUCCESS))
		goto out;
	rc = dat_ep_free(kit.ep);
	if (DT_CHECK_RC(ctx, "dat_ep_free (receive posted)", rc, DAT_SUCCESS))
		kit.ep = DAT_HANDLE_NULL;
	while ((rc = dat_evd_dequeue(kit.recv_evd, &ev)) == DAT_SUCCESS) {
		const DAT_DTO_COMPLETION_EVENT_DATA *d =
			&ev.event_data.dto_completion_event_data;

		DT_CHECK(ctx, ev.event_number == DAT_DTO_COMPLETION_EVENT &&
			 d->status == DAT_DTO_ERR_FLUSHED &&
			 d->user_cookie.as_64 == 0x1234,
			 "a leftover event is our receive, flushed (got %s, "
			 "status %d)", dt_event_name(ev.event_number),
			 (int)d->status);
	}
	/* bare DAT_QUEUE_EMPTY by default, with the class bit under
	 * DAT_STRICT=1 (libdat(7)): the type is what counts */
	DT_CHECK(ctx, rc != DAT_SUCCESS && DAT_GET_TYPE(rc) == DAT_QUEUE_EMPTY,
		 "dat_evd_dequeue (drained) returned 0x%08x, expected "
		 "DAT_QUEUE_EMPTY", (unsigned)rc);
out:
	if (lmr)
		DT_CHECK_RC(ctx, "dat_lmr_free", dat_lmr_free(lmr),
			    DAT_SUCCESS);
	dt_kit_close(ctx, &kit);
	free(buf);
}

static void wrong_evds(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_EP_HANDLE ep;
	DAT_RETURN rc;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS))
		goto out;
	/* a connection EVD cannot take DTO completions, a DTO EVD cannot
	 * take connection events */
	rc = dat_ep_create(kit.ia, kit.pz, kit.conn_evd, kit.req_evd,
			   kit.conn_evd, NULL, &ep);
	if (!DT_CHECK_RC(ctx, "dat_ep_create (recv EVD without DTO flag)", rc,
			 DAT_ERROR(DAT_INVALID_HANDLE,
				   DAT_INVALID_HANDLE_EVD_RECV)) &&
	    rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep),
			    DAT_SUCCESS);
	rc = dat_ep_create(kit.ia, kit.pz, kit.recv_evd, kit.conn_evd,
			   kit.conn_evd, NULL, &ep);
	if (!DT_CHECK_RC(ctx,
			 "dat_ep_create (request EVD without DTO flag)", rc,
			 DAT_ERROR(DAT_INVALID_HANDLE,
				   DAT_INVALID_HANDLE_EVD_REQUEST)) &&
	    rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep),
			    DAT_SUCCESS);
	rc = dat_ep_create(kit.ia, kit.pz, kit.recv_evd, kit.req_evd,
			   kit.recv_evd, NULL, &ep);
	if (!DT_CHECK_RC(ctx,
			 "dat_ep_create (connect EVD without CONNECTION flag)",
			 rc, DAT_ERROR(DAT_INVALID_HANDLE,
				       DAT_INVALID_HANDLE_EVD_CONN)) &&
	    rc == DAT_SUCCESS)
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep),
			    DAT_SUCCESS);
	DT_CHECK_RC(ctx, "dat_ep_create (ep_handle NULL)",
		    dat_ep_create(kit.ia, kit.pz, kit.recv_evd, kit.req_evd,
				  kit.conn_evd, NULL, NULL),
		    DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7));
out:
	dt_kit_close(ctx, &kit);
}

static void evd_in_use(struct dt_fft_ctx *ctx)
{
	static const DAT_RETURN in_use =
		DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EVD_IN_USE);
	struct dt_kit kit;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP))
		goto out;
	DT_CHECK_RC(ctx, "dat_evd_free (recv EVD of a live EP)",
		    dat_evd_free(kit.recv_evd), in_use);
	DT_CHECK_RC(ctx, "dat_evd_free (request EVD of a live EP)",
		    dat_evd_free(kit.req_evd), in_use);
	DT_CHECK_RC(ctx, "dat_evd_free (connect EVD of a live EP)",
		    dat_evd_free(kit.conn_evd), in_use);
	/* once the EP is gone they go too (dt_kit_close checks) */
out:
	dt_kit_close(ctx, &kit);
}

static void beyond_device(struct dt_fft_ctx *ctx)
{
	static const DAT_RETURN bad_attr =
		DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	struct dt_kit kit;
	DAT_IA_ATTR ia_attr;
	DAT_EVD_HANDLE async;
	DAT_EP_PARAM param;
	DAT_EP_ATTR attr;
	DAT_EP_HANDLE ep;
	DAT_RETURN rc;
	bool tried = false;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP))
		goto out;
	if (!DT_CHECK_RC(ctx, "dat_ia_query",
			 dat_ia_query(kit.ia, &async, DAT_IA_FIELD_ALL,
				      &ia_attr, DAT_PROVIDER_FIELD_NONE, NULL),
			 DAT_SUCCESS) ||
	    !DT_CHECK_RC(ctx, "dat_ep_query (defaults)",
			 dat_ep_query(kit.ep, DAT_EP_FIELD_ALL, &param),
			 DAT_SUCCESS))
		goto out;
	if (ia_attr.max_dto_per_ep > 0 && ia_attr.max_dto_per_ep < INT_MAX) {
		attr = param.ep_attr;
		attr.max_recv_dtos = ia_attr.max_dto_per_ep + 1;
		rc = dat_ep_create(kit.ia, kit.pz, kit.recv_evd, kit.req_evd,
				   kit.conn_evd, &attr, &ep);
		if (!DT_CHECK_RC(ctx, "dat_ep_create (max_recv_dtos = "
				 "max_dto_per_ep + 1)", rc, bad_attr) &&
		    rc == DAT_SUCCESS)
			DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep),
				    DAT_SUCCESS);
		tried = true;
	}
	if (ia_attr.max_iov_segments_per_dto > 0 &&
	    ia_attr.max_iov_segments_per_dto < INT_MAX) {
		attr = param.ep_attr;
		attr.max_request_iov = ia_attr.max_iov_segments_per_dto + 1;
		rc = dat_ep_create(kit.ia, kit.pz, kit.recv_evd, kit.req_evd,
				   kit.conn_evd, &attr, &ep);
		if (!DT_CHECK_RC(ctx, "dat_ep_create (max_request_iov = "
				 "max_iov_segments_per_dto + 1)", rc,
				 bad_attr) && rc == DAT_SUCCESS)
			DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep),
				    DAT_SUCCESS);
		tried = true;
	}
	/* and exactly the device's limits are fine */
	attr = param.ep_attr;
	if (ia_attr.max_iov_segments_per_dto > 0)
		attr.max_request_iov = ia_attr.max_iov_segments_per_dto;
	rc = dat_ep_create(kit.ia, kit.pz, kit.recv_evd, kit.req_evd,
			   kit.conn_evd, &attr, &ep);
	if (DT_CHECK_RC(ctx, "dat_ep_create (max_request_iov = "
			"max_iov_segments_per_dto)", rc, DAT_SUCCESS))
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(ep), DAT_SUCCESS);
	if (!tried)
		dt_skip(ctx, "the IA reports no finite limits to exceed");
out:
	dt_kit_close(ctx, &kit);
}

static void unconnected_dtos(struct dt_fft_ctx *ctx)
{
	struct dt_kit kit;
	DAT_DTO_COOKIE cookie;
	DAT_RMR_TRIPLET remote;

	if (!dt_kit_open(ctx, &kit, DT_KIT_PZ | DT_KIT_EVDS | DT_KIT_EP))
		goto out;
	cookie.as_64 = 1;
	memset(&remote, 0, sizeof(remote));
	/* zero segments: only the state is judged */
	DT_CHECK_RC(ctx, "dat_ep_post_send (UNCONNECTED)",
		    dat_ep_post_send(kit.ep, 0, NULL, cookie,
				     DAT_COMPLETION_DEFAULT_FLAG),
		    DAT_ERROR(DAT_INVALID_STATE,
			      DAT_INVALID_STATE_EP_UNCONNECTED));
	DT_CHECK_RC(ctx, "dat_ep_post_rdma_write (UNCONNECTED)",
		    dat_ep_post_rdma_write(kit.ep, 0, NULL, cookie, &remote,
					   DAT_COMPLETION_DEFAULT_FLAG),
		    DAT_ERROR(DAT_INVALID_STATE,
			      DAT_INVALID_STATE_EP_UNCONNECTED));
	DT_CHECK_RC(ctx, "dat_ep_disconnect (UNCONNECTED)",
		    dat_ep_disconnect(kit.ep, DAT_CLOSE_ABRUPT_FLAG),
		    DAT_ERROR(DAT_INVALID_STATE,
			      DAT_INVALID_STATE_EP_UNCONNECTED));
	DT_CHECK_RC(ctx, "dat_ep_reset (UNCONNECTED: nothing to do)",
		    dat_ep_reset(kit.ep), DAT_SUCCESS);
out:
	dt_kit_close(ctx, &kit);
}

static const struct dt_fft_case cases[] = {
	{ "Test if we can normally create endpoint and destroy it "
	  "(and that a second free is refused)", create_free },
	{ "try to create endpoint with pz already destroyed", freed_pz },
	{ "try to destroy ep with descriptor still in working queue",
	  free_busy },
	{ "try to create endpoint with EVDs of the wrong kind", wrong_evds },
	{ "try to free the EVDs of a live endpoint", evd_in_use },
	{ "try to create endpoint with attributes beyond the device's "
	  "limits", beyond_device },
	{ "try data transfers and disconnect on an unconnected endpoint",
	  unconnected_dtos },
};

const struct dt_fft_feature dt_fft_endpoint = {
	.name = "endpoint",
	.title = "EndPoint management",
	.cases = cases,
	.ncases = sizeof(cases) / sizeof(cases[0]),
};
