/*
 * dapltest -T L: limit tests.
 *
 * Each test builds `width` sets of the objects the tested kind needs
 * ({IA, PZ, CNO, EVD, EP, LMR} up to the level below it), then creates
 * objects of that kind, spread over the sets, until the provider refuses
 * or -m of them exist.  A refusal must be a proper DAT error that says
 * "out of resources" (never a crash, a wrong type or an unnamed value);
 * every free must then succeed, newest object first, and every IA of the
 * sets must close gracefully, which proves the provider's bookkeeping
 * gave everything back.
 *
 * Output shape follows OpenFabrics dapltest ("Limitation Test ...",
 * "LimitTest: PZs created: N"); a "Result: PASS|FAIL" line per test is
 * ours, as is the exit status (1 when any test failed).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

#include "dt_tests.h"
#include "dt_lf_util.h"

#define LIM_MODULE	"LimitTest"
#define LIM_QLEN	10	/* EVDs that are only counted */
#define LIM_SET_QLEN	256	/* the sets' EVDs: room for flushed receives */
#define LIM_BUFSZ	4096	/* one LMR buffer */
#define LIM_MAX_WIDTH	1024
#define LIM_MAX_MAX	1000000
#define LIM_RSP_QUAL_TRIES 8
#define LIM_SIZE_LMR_CEILING (1ull << 30)	/* never more than 1 GiB */

/* In the order OpenFabrics dapltest runs them; sets are built for every
 * level below the tested one. */
enum lim_kind {
	LIM_IA, LIM_PZ, LIM_CNO, LIM_EVD, LIM_EP, LIM_RSP, LIM_PSP, LIM_LMR,
	LIM_RPOST, LIM_SIZE_LMR, LIM_COUNT
};

static const struct lim_test {
	const char *name;
	const char *description;
} lim_tests[LIM_COUNT] = {
	[LIM_IA] = { "limit_ia",
		"Test max num of opens for the same physical IA" },
	[LIM_PZ] = { "limit_pz",
		"Test max num of PZs that are supported by an IA" },
	[LIM_CNO] = { "limit_cno",
		"Test max num of CNOs that are supported by an IA" },
	[LIM_EVD] = { "limit_evd",
		"Test max num of EVDs that are supported by an IA" },
	[LIM_EP] = { "limit_ep",
		"Test max num of EPs that are supported by an IA" },
	[LIM_RSP] = { "limit_rsp",
		"Test max num of RSPs that are supported by an IA" },
	[LIM_PSP] = { "limit_psp",
		"Test max num of PSPs that are supported by an IA" },
	[LIM_LMR] = { "limit_lmr",
		"Test max num of LMRs that are supported by an IA" },
	[LIM_RPOST] = { "limit_rpost",
		"Test max num of receive buffers posted to an EP" },
	[LIM_SIZE_LMR] = { "limit_size_lmr",
		"Test max size of LMRs that are supported by an IA" },
};

struct lim_cmd {
	struct dt_common_opts common;
	unsigned long width;
	unsigned long maximum;
	bool selected[LIM_COUNT];
};

/* One {IA, PZ, CNO, EVD, EP, LMR} set. */
struct lim_set {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async_evd;
	DAT_PZ_HANDLE pz;
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE evd;		/* DTO, CR and RMR bind events */
	DAT_EVD_HANDLE conn_evd;
	DAT_EP_HANDLE ep;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_context;
	void *lmr_buf;
};

/* State of one test run. */
struct lim_run {
	const struct lim_cmd *cmd;
	enum lim_kind kind;
	struct lim_set *sets;
	unsigned long nsets;
	bool failed;
};

/* A growing array of whatever a test creates. */
struct lim_vec {
	void *items;
	size_t count, cap, size;
};

static bool vec_push(struct lim_vec *v, const void *item)
{
	if (v->count == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 256;
		void *p = realloc(v->items, cap * v->size);

		if (!p)
			return false;
		v->items = p;
		v->cap = cap;
	}
	memcpy((char *)v->items + v->count * v->size, item, v->size);
	v->count++;
	return true;
}

static void *vec_at(const struct lim_vec *v, size_t i)
{
	return (char *)v->items + i * v->size;
}

/* ------------------------------------------------------------------ */
/* Reporting                                                          */
/* ------------------------------------------------------------------ */

static void lim_fail(struct lim_run *run, const char *call, DAT_RETURN rc)
{
	char text[DT_RC_TEXT_MAX];

	printf("%s: %s fails: %s\n", LIM_MODULE, call, dt_rc_text(rc, text));
	run->failed = true;
}

static void lim_failf(struct lim_run *run, const char *what)
{
	printf("%s: %s\n", LIM_MODULE, what);
	run->failed = true;
}

/* A provider that cannot make one more object must say so with a named
 * error of a type that means "no more": anything else (a wrong type, a
 * value dat_strerror cannot name, a warning) fails the test. */
static bool refusal_is_proper(enum lim_kind kind, DAT_RETURN rc)
{
	DAT_RETURN type = DAT_GET_TYPE(rc);

	if (!dt_rc_is_named_error(rc))
		return false;
	if (type == DAT_INSUFFICIENT_RESOURCES)
		return true;
	switch (kind) {
	case LIM_RPOST:
		return type == DAT_QUEUE_FULL;
	case LIM_PSP:
	case LIM_RSP:
		/* the qualifier space (ports) ran out */
		return type == DAT_CONN_QUAL_UNAVAILABLE ||
		       type == DAT_CONN_QUAL_IN_USE;
	case LIM_SIZE_LMR:
		return type == DAT_LENGTH_ERROR;
	default:
		return false;
	}
}

/* The n-th create (1-based) of `call` was refused with rc: report it as
 * OpenFabrics dapltest does, and judge it. */
static void lim_refused(struct lim_run *run, const char *call,
			unsigned long n, DAT_RETURN rc)
{
	char text[DT_RC_TEXT_MAX];

	printf("%s: %s #%lu fails: %s\n", LIM_MODULE, call, n,
	       dt_rc_text(rc, text));
	if (!refusal_is_proper(run->kind, rc)) {
		printf("%s: that is not a proper refusal (want an error of "
		       "type DAT_INSUFFICIENT_RESOURCES%s)\n", LIM_MODULE,
		       run->kind == LIM_RPOST ? " or DAT_QUEUE_FULL" :
		       run->kind == LIM_PSP || run->kind == LIM_RSP ?
		       " or DAT_CONN_QUAL_UNAVAILABLE/IN_USE" :
		       run->kind == LIM_SIZE_LMR ? " or DAT_LENGTH_ERROR" :
		       "");
		run->failed = true;
	}
	if (n == 1) {
		printf("%s: the provider refused the very first one\n",
		       LIM_MODULE);
		run->failed = true;
	}
}

static void lim_debug(const struct lim_run *run, const char *call,
		      unsigned long n)
{
	if (run->cmd->common.debug)
		printf("%s: %s #%lu\n", LIM_MODULE, call, n);
}

/* Registers len bytes at buf and checks that the registration covers
 * them (OpenFabrics checks the same).  Returns the status. */
static DAT_RETURN lim_register(struct lim_run *run, const struct lim_set *s,
			       void *buf, DAT_VLEN len, DAT_LMR_HANDLE *lmr,
			       DAT_LMR_CONTEXT *context)
{
	DAT_REGION_DESCRIPTION region;
	DAT_RMR_CONTEXT rmr_context;
	DAT_VLEN reg_len = 0;
	DAT_VADDR reg_addr = 0;
	DAT_RETURN rc;
	uintptr_t va = (uintptr_t)buf;

	memset(&region, 0, sizeof(region));
	region.for_va = buf;
	rc = dat_lmr_create(s->ia, DAT_MEM_TYPE_VIRTUAL, region, len, s->pz,
			    DAT_MEM_PRIV_ALL_FLAG, lmr, context, &rmr_context,
			    &reg_len, &reg_addr);
	if (rc != DAT_SUCCESS)
		return rc;
	if (reg_addr > va || reg_addr + reg_len < va + len) {
		printf("%s: dat_lmr_create registered [0x%llx, +0x%llx) for "
		       "[0x%llx, +0x%llx)\n", LIM_MODULE,
		       (unsigned long long)reg_addr,
		       (unsigned long long)reg_len, (unsigned long long)va,
		       (unsigned long long)len);
		run->failed = true;
	}
	return DAT_SUCCESS;
}

/* ------------------------------------------------------------------ */
/* The sets                                                           */
/* ------------------------------------------------------------------ */

/* Builds what `kind` needs; false (reported) when something failed. */
static bool sets_build(struct lim_run *run)
{
	const struct lim_cmd *cmd = run->cmd;
	enum lim_kind kind = run->kind;
	unsigned long w;
	DAT_RETURN rc;

	run->nsets = cmd->width;
	run->sets = calloc(run->nsets, sizeof(*run->sets));
	if (!run->sets) {
		lim_failf(run, "no memory for the object sets");
		return false;
	}
	for (w = 0; w < run->nsets; w++) {
		struct lim_set *s = &run->sets[w];
		char call[64];

		s->async_evd = DAT_HANDLE_NULL;
		rc = dat_ia_open(cmd->common.ia_name, LIM_QLEN, &s->async_evd,
				 &s->ia);
		if (rc != DAT_SUCCESS) {
			s->ia = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call), "dat_ia_open (%s) #%lu",
				 cmd->common.ia_name, w + 1);
			lim_fail(run, call, rc);
			return false;
		}
		if (kind <= LIM_PZ)
			continue;
		rc = dat_pz_create(s->ia, &s->pz);
		if (rc != DAT_SUCCESS) {
			s->pz = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call), "dat_pz_create #%lu",
				 w + 1);
			lim_fail(run, call, rc);
			return false;
		}
		if (kind <= LIM_CNO)
			continue;
		rc = dat_cno_create(s->ia, DAT_OS_WAIT_PROXY_AGENT_NULL,
				    &s->cno);
		if (DAT_GET_TYPE(rc) == DAT_NOT_IMPLEMENTED) {
			/* as OpenFabrics: go on without CNOs */
			printf("%s: dat_cno_create unimplemented\n",
			       LIM_MODULE);
			s->cno = DAT_HANDLE_NULL;
		} else if (rc != DAT_SUCCESS) {
			s->cno = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call), "dat_cno_create #%lu",
				 w + 1);
			lim_fail(run, call, rc);
			return false;
		}
		if (kind <= LIM_EVD)
			continue;
		rc = dat_evd_create(s->ia, LIM_SET_QLEN, s->cno,
				    DAT_EVD_DTO_FLAG | DAT_EVD_CR_FLAG |
				    DAT_EVD_RMR_BIND_FLAG, &s->evd);
		if (rc != DAT_SUCCESS) {
			s->evd = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call), "dat_evd_create #%lu",
				 w + 1);
			lim_fail(run, call, rc);
			return false;
		}
		/* One connection EVD per set: an EP may only use EVDs of
		 * its own IA. */
		rc = dat_evd_create(s->ia, LIM_QLEN, DAT_HANDLE_NULL,
				    DAT_EVD_CONNECTION_FLAG, &s->conn_evd);
		if (rc != DAT_SUCCESS) {
			s->conn_evd = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call),
				 "conn dat_evd_create #%lu", w + 1);
			lim_fail(run, call, rc);
			return false;
		}
		if (kind <= LIM_EP)
			continue;
		rc = dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->conn_evd,
				   NULL, &s->ep);
		if (rc != DAT_SUCCESS) {
			s->ep = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call), "dat_ep_create #%lu",
				 w + 1);
			lim_fail(run, call, rc);
			return false;
		}
		if (kind <= LIM_LMR)
			continue;
		s->lmr_buf = aligned_alloc(LIM_BUFSZ, LIM_BUFSZ);
		if (!s->lmr_buf) {
			lim_failf(run, "no memory for LMR buffers");
			return false;
		}
		rc = lim_register(run, s, s->lmr_buf, LIM_BUFSZ, &s->lmr,
				  &s->lmr_context);
		if (rc != DAT_SUCCESS) {
			s->lmr = DAT_HANDLE_NULL;
			snprintf(call, sizeof(call), "dat_lmr_create #%lu",
				 w + 1);
			lim_fail(run, call, rc);
			return false;
		}
	}
	return true;
}

/* Drains what an EVD still holds after its EP went away: only flushed
 * receive completions may be there, and connection requests of other
 * processes that happened to connect to a qualifier our PSPs or RSPs
 * held (a port they thought free): those are not the provider's doing,
 * they are only refused so the IA can close. */
static void drain_flushed(struct lim_run *run, DAT_EVD_HANDLE evd)
{
	DAT_EVENT ev;
	DAT_RETURN rc;

	while ((rc = dat_evd_dequeue(evd, &ev)) == DAT_SUCCESS) {
		if (ev.event_number == DAT_CONNECTION_REQUEST_EVENT) {
			printf("%s: a connection request from elsewhere came "
			       "to qualifier %llu; rejecting it\n", LIM_MODULE,
			       (unsigned long long)ev.event_data.
			       cr_arrival_event_data.conn_qual);
			rc = dat_cr_reject(ev.event_data.
					   cr_arrival_event_data.cr_handle);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_cr_reject", rc);
			continue;
		}
		if (ev.event_number != DAT_DTO_COMPLETION_EVENT ||
		    ev.event_data.dto_completion_event_data.status !=
		    DAT_DTO_ERR_FLUSHED) {
			printf("%s: unexpected %s (status %d) after the EP "
			       "was freed\n", LIM_MODULE,
			       dt_event_name(ev.event_number),
			       ev.event_number == DAT_DTO_COMPLETION_EVENT ?
			       (int)ev.event_data.dto_completion_event_data.
			       status : -1);
			run->failed = true;
		}
	}
	if (DAT_GET_TYPE(rc) != DAT_QUEUE_EMPTY)
		lim_fail(run, "dat_evd_dequeue", rc);
}

/* Frees the sets, newest object first; every free must succeed and every
 * IA must then close gracefully (nothing left behind). */
static void sets_free(struct lim_run *run)
{
	unsigned long w;
	DAT_RETURN rc;

	if (!run->sets)
		return;
	for (w = run->nsets; w-- > 0;) {
		struct lim_set *s = &run->sets[w];

		if (s->lmr) {
			rc = dat_lmr_free(s->lmr);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_lmr_free", rc);
		}
		free(s->lmr_buf);
		if (s->ep) {
			rc = dat_ep_free(s->ep);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_ep_free", rc);
		}
		if (s->evd)
			drain_flushed(run, s->evd);
		if (s->conn_evd) {
			rc = dat_evd_free(s->conn_evd);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "conn dat_evd_free", rc);
		}
		if (s->evd) {
			rc = dat_evd_free(s->evd);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_evd_free", rc);
		}
		if (s->cno) {
			rc = dat_cno_free(s->cno);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_cno_free", rc);
		}
		if (s->pz) {
			rc = dat_pz_free(s->pz);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_pz_free", rc);
		}
		if (s->ia) {
			rc = dat_ia_close(s->ia, DAT_CLOSE_GRACEFUL_FLAG);
			if (rc != DAT_SUCCESS) {
				lim_fail(run, "dat_ia_close (graceful)", rc);
				/* the largest hammer, so the process can go
				 * on with the next test */
				rc = dat_ia_close(s->ia, DAT_CLOSE_ABRUPT_FLAG);
				if (rc != DAT_SUCCESS)
					lim_fail(run, "dat_ia_close (abrupt)",
						 rc);
			}
		}
	}
	free(run->sets);
	run->sets = NULL;
}

/* ------------------------------------------------------------------ */
/* Exhaustion, one function per kind                                  */
/* ------------------------------------------------------------------ */

static const char *lim_no_room_msg = "no memory for more handles";

static void exhaust_ia(struct lim_run *run)
{
	struct ia_pair {
		DAT_IA_HANDLE ia;
		DAT_EVD_HANDLE async_evd;
	} one;
	struct lim_vec v = { .size = sizeof(one) };
	unsigned long n;
	DAT_RETURN rc;
	char call[300];

	snprintf(call, sizeof(call), "dat_ia_open (%s)",
		 run->cmd->common.ia_name);
	for (n = 0; n < run->cmd->maximum; n++) {
		lim_debug(run, "dat_ia_open", n + 1);
		one.async_evd = DAT_HANDLE_NULL;
		rc = dat_ia_open(run->cmd->common.ia_name, LIM_QLEN,
				 &one.async_evd, &one.ia);
		if (rc != DAT_SUCCESS) {
			lim_refused(run, call, n + 1, rc);
			break;
		}
		if (!vec_push(&v, &one)) {
			printf("%s: %s\n", LIM_MODULE, lim_no_room_msg);
			rc = dat_ia_close(one.ia, DAT_CLOSE_GRACEFUL_FLAG);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_ia_close (graceful)", rc);
			break;
		}
	}
	printf("%s: IAs opened: %zu\n", LIM_MODULE, v.count);
	while (v.count > 0) {
		struct ia_pair *p = vec_at(&v, --v.count);

		rc = dat_ia_close(p->ia, DAT_CLOSE_GRACEFUL_FLAG);
		if (rc != DAT_SUCCESS) {
			lim_fail(run, "dat_ia_close (graceful)", rc);
			rc = dat_ia_close(p->ia, DAT_CLOSE_ABRUPT_FLAG);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_ia_close (abrupt)", rc);
		}
	}
	free(v.items);
}

/* The kinds whose objects are a single handle made from one set. */
static DAT_RETURN create_one(struct lim_run *run, struct lim_set *s,
			     DAT_HANDLE *h)
{
	switch (run->kind) {
	case LIM_PZ:
		return dat_pz_create(s->ia, h);
	case LIM_CNO:
		return dat_cno_create(s->ia, DAT_OS_WAIT_PROXY_AGENT_NULL, h);
	case LIM_EVD:
		return dat_evd_create(s->ia, LIM_QLEN, s->cno,
				      DAT_EVD_DTO_FLAG | DAT_EVD_CR_FLAG |
				      DAT_EVD_RMR_BIND_FLAG, h);
	case LIM_EP:
		return dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->conn_evd,
				     NULL, h);
	case LIM_PSP: {
		DAT_CONN_QUAL qual;

		/* a free qualifier each time: never collides with another
		 * process (OpenFabrics used fixed ones) */
		return dat_psp_create_any(s->ia, &qual, s->evd,
					  DAT_PSP_CONSUMER_FLAG, h);
	}
	default:
		return DAT_ERROR(DAT_INTERNAL_ERROR, DAT_NO_SUBTYPE);
	}
}

static DAT_RETURN free_one(enum lim_kind kind, DAT_HANDLE h)
{
	switch (kind) {
	case LIM_PZ:
		return dat_pz_free(h);
	case LIM_CNO:
		return dat_cno_free(h);
	case LIM_EVD:
		return dat_evd_free(h);
	case LIM_EP:
		return dat_ep_free(h);
	case LIM_PSP:
		return dat_psp_free(h);
	default:
		return DAT_ERROR(DAT_INTERNAL_ERROR, DAT_NO_SUBTYPE);
	}
}

static void exhaust_simple(struct lim_run *run, const char *create_call,
			   const char *free_call, const char *noun)
{
	struct lim_vec v = { .size = sizeof(DAT_HANDLE) };
	unsigned long n;
	DAT_HANDLE h;
	DAT_RETURN rc;

	for (n = 0; n < run->cmd->maximum; n++) {
		lim_debug(run, create_call, n + 1);
		rc = create_one(run, &run->sets[n % run->nsets], &h);
		if (DAT_GET_TYPE(rc) == DAT_NOT_IMPLEMENTED) {
			printf("%s: %s unimplemented\n", LIM_MODULE,
			       create_call);
			break;
		}
		if (rc != DAT_SUCCESS) {
			lim_refused(run, create_call, n + 1, rc);
			break;
		}
		if (!vec_push(&v, &h)) {
			printf("%s: %s\n", LIM_MODULE, lim_no_room_msg);
			rc = free_one(run->kind, h);
			if (rc != DAT_SUCCESS)
				lim_fail(run, free_call, rc);
			break;
		}
	}
	printf("%s: %s created: %zu\n", LIM_MODULE, noun, v.count);
	while (v.count > 0) {
		rc = free_one(run->kind,
			      *(DAT_HANDLE *)vec_at(&v, --v.count));
		if (rc != DAT_SUCCESS)
			lim_fail(run, free_call, rc);
	}
	free(v.items);
}

/* A qualifier nobody listens on: let the provider pick a free one for a
 * PSP, then give it back.  *call names the call that failed. */
static DAT_RETURN free_qual(struct lim_set *s, DAT_CONN_QUAL *qual,
			    const char **call)
{
	DAT_PSP_HANDLE psp;
	DAT_RETURN rc;

	*call = "dat_psp_create_any (to find a free qualifier)";
	rc = dat_psp_create_any(s->ia, qual, s->evd, DAT_PSP_CONSUMER_FLAG,
				&psp);
	if (rc != DAT_SUCCESS)
		return rc;
	*call = "dat_psp_free (of the probe PSP)";
	return dat_psp_free(psp);
}

static void exhaust_rsp(struct lim_run *run)
{
	struct rsp_pair {
		DAT_RSP_HANDLE rsp;
		DAT_EP_HANDLE ep;
	} one;
	struct lim_vec v = { .size = sizeof(one) };
	unsigned long n;
	DAT_RETURN rc;

	for (n = 0; n < run->cmd->maximum; n++) {
		struct lim_set *s = &run->sets[n % run->nsets];
		DAT_CONN_QUAL qual;
		const char *call = "dat_rsp_create";
		int tries;

		lim_debug(run, "dat_rsp_create", n + 1);
		/* each RSP reserves an EP of its own */
		rc = dat_ep_create(s->ia, s->pz, s->evd, s->evd, s->conn_evd,
				   NULL, &one.ep);
		if (rc != DAT_SUCCESS) {
			printf("%s: (testing RSPs)\n", LIM_MODULE);
			lim_refused(run, "dat_ep_create", n + 1, rc);
			break;
		}
		/* Another process may take the qualifier between the probe
		 * and the RSP: try a few. */
		for (tries = 0; tries < LIM_RSP_QUAL_TRIES; tries++) {
			rc = free_qual(s, &qual, &call);
			if (rc != DAT_SUCCESS)
				break;
			call = "dat_rsp_create";
			rc = dat_rsp_create(s->ia, qual, one.ep, s->evd,
					    &one.rsp);
			if (DAT_GET_TYPE(rc) != DAT_CONN_QUAL_IN_USE)
				break;
		}
		if (rc != DAT_SUCCESS) {
			DAT_RETURN frc = dat_ep_free(one.ep);

			if (DAT_GET_TYPE(rc) == DAT_NOT_IMPLEMENTED)
				printf("%s: %s unimplemented\n", LIM_MODULE,
				       call);
			else
				lim_refused(run, call, n + 1, rc);
			if (frc != DAT_SUCCESS)
				lim_fail(run, "dat_ep_free (of the RSP's EP)",
					 frc);
			break;
		}
		if (!vec_push(&v, &one)) {
			printf("%s: %s\n", LIM_MODULE, lim_no_room_msg);
			rc = dat_rsp_free(one.rsp);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_rsp_free", rc);
			rc = dat_ep_free(one.ep);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_ep_free for RSPs", rc);
			break;
		}
	}
	printf("%s: RSPs created: %zu\n", LIM_MODULE, v.count);
	while (v.count > 0) {
		struct rsp_pair *p = vec_at(&v, --v.count);

		rc = dat_rsp_free(p->rsp);
		if (rc != DAT_SUCCESS)
			lim_fail(run, "dat_rsp_free", rc);
		/* the RSP gave its EP back: it must be freeable now */
		rc = dat_ep_free(p->ep);
		if (rc != DAT_SUCCESS)
			lim_fail(run, "dat_ep_free for RSPs", rc);
	}
	free(v.items);
}

static void exhaust_lmr(struct lim_run *run)
{
	struct lmr_pair {
		DAT_LMR_HANDLE lmr;
		void *buf;
	} one;
	struct lim_vec v = { .size = sizeof(one) };
	unsigned long n;
	DAT_LMR_CONTEXT context;
	DAT_RETURN rc;

	for (n = 0; n < run->cmd->maximum; n++) {
		lim_debug(run, "dat_lmr_create", n + 1);
		/* a buffer of its own for each: unique registrations, not
		 * the same memory again and again */
		one.buf = aligned_alloc(LIM_BUFSZ, LIM_BUFSZ);
		if (!one.buf) {
			printf("%s: no memory for LMR buffers\n", LIM_MODULE);
			break;
		}
		rc = lim_register(run, &run->sets[n % run->nsets], one.buf,
				  LIM_BUFSZ, &one.lmr, &context);
		if (rc != DAT_SUCCESS) {
			free(one.buf);
			lim_refused(run, "dat_lmr_create", n + 1, rc);
			break;
		}
		if (!vec_push(&v, &one)) {
			printf("%s: %s\n", LIM_MODULE, lim_no_room_msg);
			rc = dat_lmr_free(one.lmr);
			if (rc != DAT_SUCCESS)
				lim_fail(run, "dat_lmr_free", rc);
			free(one.buf);
			break;
		}
	}
	printf("%s: LMRs created: %zu\n", LIM_MODULE, v.count);
	while (v.count > 0) {
		struct lmr_pair *p = vec_at(&v, --v.count);

		rc = dat_lmr_free(p->lmr);
		if (rc != DAT_SUCCESS)
			lim_fail(run, "dat_lmr_free", rc);
		free(p->buf);
	}
	free(v.items);
}

/* Posts receives round-robin over the sets' EPs until one refuses: the
 * refusal must come exactly when that EP holds max_recv_dtos of them. */
static void exhaust_rpost(struct lim_run *run)
{
	DAT_EP_PARAM param;
	DAT_COUNT depth;
	unsigned long round, total = 0, w = 0;
	bool refused = false;
	DAT_RETURN rc;

	rc = dat_ep_query(run->sets[0].ep, DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS,
			  &param);
	if (rc != DAT_SUCCESS) {
		lim_fail(run, "dat_ep_query", rc);
		return;
	}
	depth = param.ep_attr.max_recv_dtos;
	printf("%s: each EP takes up to %d receives (max_recv_dtos)\n",
	       LIM_MODULE, depth);
	for (round = 0; round < run->cmd->maximum && !refused; round++) {
		for (w = 0; w < run->nsets; w++) {
			struct lim_set *s = &run->sets[w];
			DAT_LMR_TRIPLET iov;
			DAT_DTO_COOKIE cookie;

			/* the same buffer every time: fine, nothing
			 * arrives */
			iov.lmr_context = s->lmr_context;
			iov.pad = 0;
			iov.virtual_address = (DAT_VADDR)(uintptr_t)s->lmr_buf;
			iov.segment_length = LIM_BUFSZ;
			cookie.as_64 = ((DAT_UINT64)w << 32) | round;
			lim_debug(run, "dat_ep_post_recv", total + 1);
			rc = dat_ep_post_recv(s->ep, 1, &iov, cookie,
					      DAT_COMPLETION_DEFAULT_FLAG);
			if (rc != DAT_SUCCESS) {
				lim_refused(run, "dat_ep_post_recv",
					    total + 1, rc);
				refused = true;
				break;
			}
			total++;
		}
	}
	if (refused) {
		/* `round` was bumped past the refusing round on exit */
		unsigned long on_that_ep = round - 1;

		printf("%s: recv buffers posted per EP: %lu\n\t\t (total "
		       "posted: %lu)\n", LIM_MODULE, on_that_ep, total);
		if (on_that_ep != (unsigned long)depth) {
			printf("%s: EP #%lu refused after %lu receives, but "
			       "its max_recv_dtos is %d\n", LIM_MODULE, w + 1,
			       on_that_ep, depth);
			run->failed = true;
		}
	} else {
		printf("%s: recv buffers posted per EP: %lu\n\t\t (total "
		       "posted: %lu)\n", LIM_MODULE, round, total);
		if (round > (unsigned long)depth) {
			printf("%s: the EPs took more than max_recv_dtos (%d) "
			       "receives each\n", LIM_MODULE, depth);
			run->failed = true;
		}
	}
	/* The receives stay posted; freeing the EPs (sets_free) drops
	 * them, and drain_flushed checks what shows up on the EVDs. */
}

/* The cap for limit_size_lmr: 1 GiB, a quarter of RAM, half of the free
 * memory, whichever is least, rounded down to a power of two. */
static unsigned long long size_lmr_cap(void)
{
	long page = sysconf(_SC_PAGESIZE);
	long phys = sysconf(_SC_PHYS_PAGES);
	long avail = sysconf(_SC_AVPHYS_PAGES);
	unsigned long long cap = LIM_SIZE_LMR_CEILING, p;

	if (page > 0 && phys > 0 &&
	    (unsigned long long)phys * (unsigned long long)page / 4 < cap)
		cap = (unsigned long long)phys * (unsigned long long)page / 4;
	if (page > 0 && avail > 0 &&
	    (unsigned long long)avail * (unsigned long long)page / 2 < cap)
		cap = (unsigned long long)avail * (unsigned long long)page / 2;
	for (p = LIM_BUFSZ; p * 2 <= cap; p *= 2)
		;
	return p;
}

static void exhaust_size_lmr(struct lim_run *run)
{
	unsigned long long cap = size_lmr_cap();
	unsigned long long size, largest = 0;
	unsigned long n = 0;
	struct lim_set *s = &run->sets[0];
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT context;
	DAT_RETURN rc;

	printf("%s: trying sizes 0x%x to 0x%llx bytes (the cap: 1 GiB, a "
	       "quarter of RAM or half of the free memory, whichever is "
	       "least)\n", LIM_MODULE, LIM_BUFSZ, cap);
	for (size = LIM_BUFSZ; size <= cap; size *= 2) {
		/* Untouched and not reserved: costs no memory unless the
		 * provider pins it, and then the cap bounds it. */
		void *buf = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				 -1, 0);

		if (buf == MAP_FAILED) {
			printf("%s: no memory to map 0x%llx bytes\n",
			       LIM_MODULE, size);
			break;
		}
		n++;
		lim_debug(run, "dat_lmr_create", n);
		rc = lim_register(run, s, buf, size, &lmr, &context);
		if (rc != DAT_SUCCESS) {
			munmap(buf, (size_t)size);
			printf("%s: Largest LMR was 0x%llx bytes\n\t (failed "
			       "attempting 0x%llx bytes)\n", LIM_MODULE,
			       largest, size);
			lim_refused(run, "dat_lmr_create", n, rc);
			return;
		}
		rc = dat_lmr_free(lmr);
		munmap(buf, (size_t)size);
		if (rc != DAT_SUCCESS) {
			lim_fail(run, "dat_lmr_free", rc);
			return;
		}
		largest = size;
	}
	printf("%s: Largest LMR was 0x%llx bytes\n\t (no refusal up to the "
	       "cap)\n", LIM_MODULE, largest);
}

/* ------------------------------------------------------------------ */
/* Driver                                                             */
/* ------------------------------------------------------------------ */

static bool run_one(const struct lim_cmd *cmd, enum lim_kind kind)
{
	static const char star[] =
	  "**********************************************************************";
	struct lim_run run = { .cmd = cmd, .kind = kind };

	printf("%s\n", star);
	printf("Limitation Test                      %s\n",
	       lim_tests[kind].name);
	printf("Description:  %s\n", lim_tests[kind].description);
	fflush(stdout);

	if (kind == LIM_IA) {
		exhaust_ia(&run);
	} else if (sets_build(&run)) {
		switch (kind) {
		case LIM_PZ:
			exhaust_simple(&run, "dat_pz_create", "dat_pz_free",
				       "PZs");
			break;
		case LIM_CNO:
			exhaust_simple(&run, "dat_cno_create",
				       "dat_cno_free", "CNOs");
			break;
		case LIM_EVD:
			exhaust_simple(&run, "dat_evd_create",
				       "dat_evd_free", "EVDs");
			break;
		case LIM_EP:
			exhaust_simple(&run, "dat_ep_create", "dat_ep_free",
				       "EPs");
			break;
		case LIM_RSP:
			exhaust_rsp(&run);
			break;
		case LIM_PSP:
			exhaust_simple(&run, "dat_psp_create_any",
				       "dat_psp_free", "PSPs");
			break;
		case LIM_LMR:
			exhaust_lmr(&run);
			break;
		case LIM_RPOST:
			exhaust_rpost(&run);
			break;
		case LIM_SIZE_LMR:
			exhaust_size_lmr(&run);
			break;
		default:
			break;
		}
	}
	sets_free(&run);
	printf("Result: %s\n", run.failed ? "FAIL" : "PASS");
	printf("%s\n", star);
	fflush(stdout);
	return !run.failed;
}

void dt_limit_usage(FILE *out)
{
	size_t i;

	fprintf(out,
		"USAGE: ---- LIMIT TEST ----\n"
		"USAGE:     dapltest -T L\n"
		"USAGE:              [-D <device Name>] (default %s)\n"
		"USAGE:              [-n <server port number>] (accepted, "
		"not used)\n"
		"USAGE:              [-d] : debug (zero)\n"
		"USAGE:              [-w <width_of_resource_sets>] (1)\n"
		"USAGE:              [-m <maximum_for_exhaustion_tests>]\n"
		"USAGE:                  (1000 - Default)\n"
		"USAGE:              [-R <service reliability>]   "
		"(BE/HT/LL/EC/PM)\n"
		"USAGE:              [limit_ia [limit_pz] [limit_evd] ... ]\n"
		"NOTE: If test is not specified, do all the limit tests\n"
		"NOTE: Else, just do the specified tests\n"
		"NOTE: Each test is separated by space, the test can be:\n",
		DT_DEFAULT_IA);
	for (i = 0; i < LIM_COUNT; i++) {
		char bracketed[32];

		snprintf(bracketed, sizeof(bracketed), "[%s]",
			 lim_tests[i].name);
		fprintf(out, "NOTE: %-18s %s\n", bracketed,
			lim_tests[i].description);
	}
	fprintf(out, "NOTE: Options come before the test names; -h prints "
		"this text.\n");
}

static int usage_error(void)
{
	dt_limit_usage(stderr);
	return 2;
}

int dt_limit_main(int argc, char **argv)
{
	struct lim_cmd cmd;
	struct dt_opt_scan scan;
	bool any = false, all_passed = true;
	unsigned passed = 0, run = 0;
	int c, i;
	size_t k;

	memset(&cmd, 0, sizeof(cmd));
	dt_common_opts_init(&cmd.common);
	cmd.width = 1;
	cmd.maximum = 1000;

	dt_opt_begin(&scan, argc, argv);
	while ((c = dt_opt_next(&scan, "D:dR:n:w:m:h")) != -1) {
		int done;

		if (c == '?')
			return usage_error();
		if (c == 'h') {
			dt_limit_usage(stdout);
			return 0;
		}
		done = dt_common_opt(&cmd.common, c, scan.arg);
		if (done < 0)
			return usage_error();
		if (done)
			continue;
		if (c == 'w' && !dt_parse_ulong(scan.arg, 1, LIM_MAX_WIDTH,
						 &cmd.width)) {
			fprintf(stderr, "dapltest: -w takes a width of 1 to "
				"%d, not '%s'\n", LIM_MAX_WIDTH, scan.arg);
			return usage_error();
		}
		if (c == 'm' && !dt_parse_ulong(scan.arg, 1, LIM_MAX_MAX,
						 &cmd.maximum)) {
			fprintf(stderr, "dapltest: -m takes a maximum of 1 "
				"to %d, not '%s'\n", LIM_MAX_MAX, scan.arg);
			return usage_error();
		}
	}
	for (i = scan.ind; i < argc; i++) {
		for (k = 0; k < LIM_COUNT; k++)
			if (strcmp(argv[i], lim_tests[k].name) == 0)
				break;
		if (k == LIM_COUNT) {
			fprintf(stderr, "dapltest: Cannot find this limit "
				"test: %s\n", argv[i]);
			return usage_error();
		}
		cmd.selected[k] = true;
		any = true;
	}
	for (k = 0; k < LIM_COUNT; k++)
		if (!any)
			cmd.selected[k] = true;

	printf("dapltest -T L: IA %s, width %lu, maximum %lu\n",
	       cmd.common.ia_name, cmd.width, cmd.maximum);
	for (k = 0; k < LIM_COUNT; k++) {
		if (!cmd.selected[k])
			continue;
		run++;
		if (run_one(&cmd, (enum lim_kind)k))
			passed++;
		else
			all_passed = false;
	}
	printf("Limit tests: %u run, %u passed, %u failed\n", run, passed,
	       run - passed);
	fflush(stdout);
	return all_passed ? 0 : 1;
}
