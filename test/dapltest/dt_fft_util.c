/*
 * dapltest -T F: checks, kits and loopback pairs the feature files share
 * (see dt_lf_fft.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <netinet/in.h>

#include "dt_lf_fft.h"

/* Only the file name: __FILE__ may carry the source directory. */
static const char *base_name(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash ? slash + 1 : file;
}

static void count_failure(struct dt_fft_ctx *ctx)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->failed_checks++;
	pthread_mutex_unlock(&ctx->lock);
}

bool dt_check_rc_(struct dt_fft_ctx *ctx, const char *file, int line,
		  const char *call, DAT_RETURN got, DAT_RETURN want)
{
	char got_text[DT_RC_TEXT_MAX], want_text[DT_RC_TEXT_MAX];

	if (got == want) {
		if (ctx->common.debug)
			printf("    ok: %s: %s\n", call,
			       dt_rc_text(got, got_text));
		return true;
	}
	printf("    FAIL %s:%d: %s: got %s, want %s\n", base_name(file), line,
	       call, dt_rc_text(got, got_text), dt_rc_text(want, want_text));
	count_failure(ctx);
	return false;
}

bool dt_check_(struct dt_fft_ctx *ctx, const char *file, int line,
	       bool cond, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	if (cond && !ctx->common.debug)
		return true;
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (cond) {
		printf("    ok: %s\n", text);
		return true;
	}
	printf("    FAIL %s:%d: %s\n", base_name(file), line, text);
	count_failure(ctx);
	return false;
}

void dt_skip(struct dt_fft_ctx *ctx, const char *reason)
{
	pthread_mutex_lock(&ctx->lock);
	ctx->skip_reason = reason;
	pthread_mutex_unlock(&ctx->lock);
}

void dt_note(const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	printf("    %s\n", text);
}

/* ------------------------------------------------------------------ */
/* Kits                                                               */
/* ------------------------------------------------------------------ */

bool dt_kit_open(struct dt_fft_ctx *ctx, struct dt_kit *kit, unsigned what)
{
	memset(kit, 0, sizeof(*kit));
	kit->async_evd = DAT_HANDLE_NULL;
	if (!DT_CHECK_RC(ctx, "dat_ia_open",
			 dat_ia_open(ctx->common.ia_name, DT_QLEN,
				     &kit->async_evd, &kit->ia), DAT_SUCCESS)) {
		kit->ia = DAT_HANDLE_NULL;
		return false;
	}
	if ((what & DT_KIT_PZ) &&
	    !DT_CHECK_RC(ctx, "dat_pz_create",
			 dat_pz_create(kit->ia, &kit->pz), DAT_SUCCESS)) {
		kit->pz = DAT_HANDLE_NULL;
		return false;
	}
	if (what & DT_KIT_EVDS) {
		if (!DT_CHECK_RC(ctx, "dat_evd_create (request)",
				 dat_evd_create(kit->ia, DT_QLEN,
						DAT_HANDLE_NULL,
						DAT_EVD_DTO_FLAG |
						DAT_EVD_RMR_BIND_FLAG,
						&kit->req_evd), DAT_SUCCESS)) {
			kit->req_evd = DAT_HANDLE_NULL;
			return false;
		}
		if (!DT_CHECK_RC(ctx, "dat_evd_create (recv)",
				 dat_evd_create(kit->ia, DT_QLEN,
						DAT_HANDLE_NULL,
						DAT_EVD_DTO_FLAG,
						&kit->recv_evd), DAT_SUCCESS)) {
			kit->recv_evd = DAT_HANDLE_NULL;
			return false;
		}
		if (!DT_CHECK_RC(ctx, "dat_evd_create (connection)",
				 dat_evd_create(kit->ia, DT_QLEN,
						DAT_HANDLE_NULL,
						DAT_EVD_CONNECTION_FLAG,
						&kit->conn_evd), DAT_SUCCESS)) {
			kit->conn_evd = DAT_HANDLE_NULL;
			return false;
		}
	}
	if ((what & DT_KIT_CR_EVD) &&
	    !DT_CHECK_RC(ctx, "dat_evd_create (CR)",
			 dat_evd_create(kit->ia, DT_QLEN, DAT_HANDLE_NULL,
					DAT_EVD_CR_FLAG, &kit->cr_evd),
			 DAT_SUCCESS)) {
		kit->cr_evd = DAT_HANDLE_NULL;
		return false;
	}
	if ((what & DT_KIT_EP) &&
	    !DT_CHECK_RC(ctx, "dat_ep_create",
			 dat_ep_create(kit->ia, kit->pz, kit->recv_evd,
				       kit->req_evd, kit->conn_evd, NULL,
				       &kit->ep), DAT_SUCCESS)) {
		kit->ep = DAT_HANDLE_NULL;
		return false;
	}
	return true;
}

static void free_evd(struct dt_fft_ctx *ctx, const char *call,
		     DAT_EVD_HANDLE *evd)
{
	if (*evd)
		DT_CHECK_RC(ctx, call, dat_evd_free(*evd), DAT_SUCCESS);
	*evd = DAT_HANDLE_NULL;
}

void dt_kit_close(struct dt_fft_ctx *ctx, struct dt_kit *kit)
{
	if (kit->ep)
		DT_CHECK_RC(ctx, "dat_ep_free", dat_ep_free(kit->ep),
			    DAT_SUCCESS);
	kit->ep = DAT_HANDLE_NULL;
	free_evd(ctx, "dat_evd_free (CR)", &kit->cr_evd);
	free_evd(ctx, "dat_evd_free (connection)", &kit->conn_evd);
	free_evd(ctx, "dat_evd_free (recv)", &kit->recv_evd);
	free_evd(ctx, "dat_evd_free (request)", &kit->req_evd);
	if (kit->pz)
		DT_CHECK_RC(ctx, "dat_pz_free", dat_pz_free(kit->pz),
			    DAT_SUCCESS);
	kit->pz = DAT_HANDLE_NULL;
	if (kit->ia &&
	    !DT_CHECK_RC(ctx, "dat_ia_close (graceful: nothing left)",
			 dat_ia_close(kit->ia, DAT_CLOSE_GRACEFUL_FLAG),
			 DAT_SUCCESS))
		DT_CHECK_RC(ctx, "dat_ia_close (abrupt)",
			    dat_ia_close(kit->ia, DAT_CLOSE_ABRUPT_FLAG),
			    DAT_SUCCESS);
	kit->ia = DAT_HANDLE_NULL;
}

bool dt_wait_event(struct dt_fft_ctx *ctx, DAT_EVD_HANDLE evd,
		   DAT_EVENT_NUMBER want, DAT_EVENT *ev)
{
	DAT_COUNT nmore = 0;
	DAT_RETURN rc;

	memset(ev, 0, sizeof(*ev));
	rc = dat_evd_wait(evd, DT_EVENT_WAIT_US, 1, ev, &nmore);
	if (!DT_CHECK_RC(ctx, "dat_evd_wait", rc, DAT_SUCCESS))
		return false;
	return DT_CHECK(ctx, ev->event_number == want,
			"event %s (0x%x), want %s",
			dt_event_name(ev->event_number),
			(unsigned)ev->event_number, dt_event_name(want));
}

bool dt_ia_address(struct dt_fft_ctx *ctx, DAT_IA_HANDLE ia,
		   struct sockaddr_storage *addr)
{
	DAT_IA_ATTR attr;
	DAT_EVD_HANDLE async;
	size_t len;

	if (!DT_CHECK_RC(ctx, "dat_ia_query (address)",
			 dat_ia_query(ia, &async, DAT_IA_FIELD_IA_ADDRESS_PTR,
				      &attr, DAT_PROVIDER_FIELD_NONE, NULL),
			 DAT_SUCCESS))
		return false;
	if (!DT_CHECK(ctx, attr.ia_address_ptr != NULL,
		      "dat_ia_query gives the IA's address"))
		return false;
	memset(addr, 0, sizeof(*addr));
	len = attr.ia_address_ptr->sa_family == AF_INET6 ?
	      sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);
	memcpy(addr, attr.ia_address_ptr, len);
	return true;
}

/* ------------------------------------------------------------------ */
/* Loopback pairs                                                     */
/* ------------------------------------------------------------------ */

bool dt_pair_open(struct dt_fft_ctx *ctx, struct dt_pair *pair)
{
	memset(pair, 0, sizeof(*pair));
	if (!dt_kit_open(ctx, &pair->srv, DT_KIT_PZ | DT_KIT_EVDS |
			 DT_KIT_EP | DT_KIT_CR_EVD))
		return false;
	if (!dt_kit_open(ctx, &pair->cli, DT_KIT_PZ | DT_KIT_EVDS |
			 DT_KIT_EP))
		return false;
	if (!dt_ia_address(ctx, pair->srv.ia, &pair->srv_addr))
		return false;
	/* a free qualifier: parallel runs never collide */
	if (!DT_CHECK_RC(ctx, "dat_psp_create_any",
			 dat_psp_create_any(pair->srv.ia, &pair->qual,
					    pair->srv.cr_evd,
					    DAT_PSP_CONSUMER_FLAG, &pair->psp),
			 DAT_SUCCESS)) {
		pair->psp = DAT_HANDLE_NULL;
		return false;
	}
	return true;
}

void dt_pair_close(struct dt_fft_ctx *ctx, struct dt_pair *pair)
{
	if (pair->psp)
		DT_CHECK_RC(ctx, "dat_psp_free", dat_psp_free(pair->psp),
			    DAT_SUCCESS);
	pair->psp = DAT_HANDLE_NULL;
	dt_kit_close(ctx, &pair->cli);
	dt_kit_close(ctx, &pair->srv);
}

bool dt_qos_usable(struct dt_fft_ctx *ctx, DAT_IA_HANDLE ia,
		   DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
		   DAT_CONN_QUAL qual)
{
	DAT_PROVIDER_ATTR pattr;
	DAT_EVD_HANDLE async;

	if (ctx->common.qos == DAT_QOS_BEST_EFFORT)
		return true;
	if (!DT_CHECK_RC(ctx, "dat_ia_query (provider)",
			 dat_ia_query(ia, &async, 0, NULL,
				      DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED,
				      &pattr), DAT_SUCCESS))
		return false;
	if ((pattr.dat_qos_supported & ctx->common.qos) == ctx->common.qos)
		return true;
	DT_CHECK_RC(ctx, "dat_ep_connect (QoS the IA does not offer)",
		    dat_ep_connect(ep, addr, qual, DT_EVENT_WAIT_US, 0, NULL,
				   ctx->common.qos, DAT_CONNECT_DEFAULT_FLAG),
		    DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, DAT_NO_SUBTYPE));
	dt_skip(ctx, "the IA does not offer the QoS of -R; the connect "
		"was refused as it must be");
	return false;
}

bool dt_pair_qos_usable(struct dt_fft_ctx *ctx, struct dt_pair *pair)
{
	return dt_qos_usable(ctx, pair->cli.ia, pair->cli.ep,
			     (DAT_IA_ADDRESS_PTR)&pair->srv_addr, pair->qual);
}

bool dt_pair_request(struct dt_fft_ctx *ctx, struct dt_pair *pair,
		     const void *pdata, DAT_COUNT pdata_size,
		     DAT_CR_HANDLE *cr)
{
	DAT_EVENT ev;

	if (!DT_CHECK_RC(ctx, "dat_ep_connect",
			 dat_ep_connect(pair->cli.ep,
					(DAT_IA_ADDRESS_PTR)&pair->srv_addr,
					pair->qual, DT_EVENT_WAIT_US,
					pdata_size, (const DAT_PVOID)pdata,
					ctx->common.qos,
					DAT_CONNECT_DEFAULT_FLAG),
			 DAT_SUCCESS))
		return false;
	if (!dt_wait_event(ctx, pair->srv.cr_evd,
			   DAT_CONNECTION_REQUEST_EVENT, &ev))
		return false;
	*cr = ev.event_data.cr_arrival_event_data.cr_handle;
	return DT_CHECK(ctx, ev.event_data.cr_arrival_event_data.
			sp_handle.psp_handle == pair->psp &&
			ev.event_data.cr_arrival_event_data.conn_qual ==
			pair->qual,
			"the request names our PSP and qualifier %llu",
			(unsigned long long)pair->qual);
}

bool dt_pair_connect(struct dt_fft_ctx *ctx, struct dt_pair *pair)
{
	DAT_CR_HANDLE cr;
	DAT_EVENT ev;

	if (!dt_pair_request(ctx, pair, NULL, 0, &cr))
		return false;
	if (!DT_CHECK_RC(ctx, "dat_cr_accept",
			 dat_cr_accept(cr, pair->srv.ep, 0, NULL),
			 DAT_SUCCESS))
		return false;
	if (!dt_wait_event(ctx, pair->srv.conn_evd,
			   DAT_CONNECTION_EVENT_ESTABLISHED, &ev))
		return false;
	return dt_wait_event(ctx, pair->cli.conn_evd,
			     DAT_CONNECTION_EVENT_ESTABLISHED, &ev);
}
