/*
 * dapltest -T F (function feature tests): what the feature files share.
 *
 * A feature is a table of cases; each case prints nothing on success
 * (except with -d) and one line per failed check, and the runner prints
 * the "Result: PASS|FAIL|SKIP" line.  Checks compare exact DAT_RETURN
 * values: the codes this library documents in its man pages.
 */
#ifndef DAPLTEST_DT_LF_FFT_H
#define DAPLTEST_DT_LF_FFT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/socket.h>
#include <dat/udat.h>

#include "dt_lf_util.h"

/* How long a case waits for an event that must come (it never sleeps
 * otherwise); generous, so a loaded machine does not fail a test. */
#define DT_EVENT_WAIT_US	(10u * 1000u * 1000u)

#define DT_QLEN			16	/* EVDs of the cases */
#define DT_BUFSZ		1024	/* buffers of the cases */

/* Default dapltest server port for features that talk to a server. */
#define DT_SERVER_PORT		45278

struct dt_fft_ctx {
	struct dt_common_opts common;
	unsigned long iters;	/* -i, stress only */
	unsigned long threads;	/* -t, stress only */
	unsigned long vis;	/* -v, stress only */
	const char *server;	/* -s */

	/* the running case */
	pthread_mutex_t lock;	/* the fields below, for stress threads */
	unsigned failed_checks;
	const char *skip_reason;
};

struct dt_fft_case {
	const char *description;
	void (*run)(struct dt_fft_ctx *ctx);
};

struct dt_fft_feature {
	const char *name;	/* the -f value */
	const char *title;	/* "Function feature: <title>" */
	const struct dt_fft_case *cases;
	size_t ncases;
	bool needs_server;	/* -s is required, as in OpenFabrics */
};

extern const struct dt_fft_feature dt_fft_hwconn;
extern const struct dt_fft_feature dt_fft_endpoint;
extern const struct dt_fft_feature dt_fft_pz;
extern const struct dt_fft_feature dt_fft_mem;
extern const struct dt_fft_feature dt_fft_connmgt;
extern const struct dt_fft_feature dt_fft_queryinfo;
extern const struct dt_fft_feature dt_fft_stress;
extern const struct dt_fft_feature dt_fft_connmgt_client;

/* ------------------------------------------------------------------ */
/* Checks: each failed one prints "    FAIL <file>:<line>: ..." and   */
/* fails the case; they return whether the check held.                */
/* ------------------------------------------------------------------ */

bool dt_check_rc_(struct dt_fft_ctx *ctx, const char *file, int line,
		  const char *call, DAT_RETURN got, DAT_RETURN want);
bool dt_check_(struct dt_fft_ctx *ctx, const char *file, int line,
	       bool cond, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* got must be exactly want */
#define DT_CHECK_RC(ctx, call, got, want) \
	dt_check_rc_((ctx), __FILE__, __LINE__, (call), (got), (want))
/* cond must hold; the rest is a printf description of it */
#define DT_CHECK(ctx, cond, ...) \
	dt_check_((ctx), __FILE__, __LINE__, (cond), __VA_ARGS__)

/* The case cannot run here (reason printed in its Result line). */
void dt_skip(struct dt_fft_ctx *ctx, const char *reason);

/* An indented line of information ("    ..."). */
void dt_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ------------------------------------------------------------------ */
/* A kit: an IA and the objects most cases need.                      */
/* ------------------------------------------------------------------ */

enum {
	DT_KIT_PZ	= 0x01,
	DT_KIT_EVDS	= 0x02,	/* request (DTO + RMR bind), recv, conn */
	DT_KIT_EP	= 0x04,	/* needs PZ and EVDS */
	DT_KIT_CR_EVD	= 0x08,
};

struct dt_kit {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async_evd;
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE req_evd, recv_evd, conn_evd, cr_evd;
	DAT_EP_HANDLE ep;
};

/* Opens what `what` asks for (checks every call); false on failure,
 * with whatever was made left in the kit for dt_kit_close. */
bool dt_kit_open(struct dt_fft_ctx *ctx, struct dt_kit *kit, unsigned what);
/* Frees what the kit holds (each free must succeed) and closes the IA
 * gracefully: nothing of the case may be left on it. */
void dt_kit_close(struct dt_fft_ctx *ctx, struct dt_kit *kit);

/* dat_evd_wait for one event that must be `want`; false (reported) when
 * the wait fails or another event comes. */
bool dt_wait_event(struct dt_fft_ctx *ctx, DAT_EVD_HANDLE evd,
		   DAT_EVENT_NUMBER want, DAT_EVENT *ev);

/* The IA's own address (for connecting to it over loopback). */
bool dt_ia_address(struct dt_fft_ctx *ctx, DAT_IA_HANDLE ia,
		   struct sockaddr_storage *addr);

/* Connections use the -R QoS.  False when the IA does not offer it: then
 * a connect with it must be refused with DAT_MODEL_NOT_SUPPORTED
 * (checked) and the case is skipped. */
bool dt_qos_usable(struct dt_fft_ctx *ctx, DAT_IA_HANDLE ia,
		   DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
		   DAT_CONN_QUAL qual);

/* ------------------------------------------------------------------ */
/* A loopback pair: a listening kit and a connecting kit, two IAs of  */
/* one process.                                                       */
/* ------------------------------------------------------------------ */

struct dt_pair {
	struct dt_kit srv;	/* PZ, EVDs, EP, CR EVD */
	struct dt_kit cli;	/* PZ, EVDs, EP */
	DAT_PSP_HANDLE psp;
	DAT_CONN_QUAL qual;
	struct sockaddr_storage srv_addr;
};

bool dt_pair_open(struct dt_fft_ctx *ctx, struct dt_pair *pair);
/* dt_qos_usable for the pair's client. */
bool dt_pair_qos_usable(struct dt_fft_ctx *ctx, struct dt_pair *pair);
void dt_pair_close(struct dt_fft_ctx *ctx, struct dt_pair *pair);
/* The client connects with this private data; the server's request
 * arrives.  On success *cr is the request. */
bool dt_pair_request(struct dt_fft_ctx *ctx, struct dt_pair *pair,
		     const void *pdata, DAT_COUNT pdata_size,
		     DAT_CR_HANDLE *cr);
/* Connected both ways (request, accept, ESTABLISHED on both sides). */
bool dt_pair_connect(struct dt_fft_ctx *ctx, struct dt_pair *pair);

#endif
