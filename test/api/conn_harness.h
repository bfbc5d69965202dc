/* Helpers shared by the connection and object tests (public API only).
 *
 * Environment: DAT_TEST_CONF names the build tree's dat.conf (the tests set
 * DAT_OVERRIDE from it before their first dat_ call) and DAT_TEST_IA the IA
 * to open (ofi-tcp).  Without DAT_TEST_CONF a test program exits 77 (skip).
 *
 * Failures: HX_CHECK / HX_RC / HX_OK work in the Check test process and in
 * a forked peer alike.  In the test process they fail the test through
 * Check; in a peer they send the message to the test process over the
 * pipe, print it on stderr and exit 1, so the test process reports it.
 *
 * Peers: hx_spawn forks a child (call it before the test process's first
 * dat_ call) that runs a function talking to the test process over two
 * pipes.  Every child is bounded by alarm(HX_CHILD_ALARM_S); the test
 * process reaps it (hx_reap, hx_kill) and checks how it ended; a child left
 * behind by a failing test is killed and reaped when the test process
 * exits. */
#ifndef CONN_HARNESS_H
#define CONN_HARNESS_H

#include <stdint.h>
#include <sys/types.h>
#include <netinet/in.h>

#include "dat_gen.h"	/* <dat/udat.h>, or <dat2/udat.h> with DAT_GEN=2 */

/* Every wait for an event: generous, so a bug fails instead of hanging. */
#define HX_WAIT_US (10u * 1000u * 1000u)
/* The connect timeout of connections that are expected to be answered. */
#define HX_CONNECT_US (10u * 1000u * 1000u)
/* A peer process never lives longer than this. */
#define HX_CHILD_ALARM_S 60
/* The test process waits at most this long for a message from a peer. */
#define HX_PIPE_WAIT_MS (45 * 1000)
/* Check's per-test timeout for tests that use peers (> the alarm). */
#define HX_TEST_TIMEOUT_S 120

/* ---- one source, two DAT generations --------------------------------
 *
 * The suites are written to DAT 1.2 and built a second time with
 * DAT_GEN=2 against libdat2.so.2 (test_*2 in make check).  Where the 2.0
 * call takes more, these give its extra arguments the 1.2 meaning: a
 * virtual address (DAT_VA_TYPE_VA), no reject private data, and the RMR
 * bound over the LMR whose context the triplet names.  Field names that
 * differ are spelled through HX_RMR_ADDR and HX_CLEAR_PAD. */
#if DAT_GEN == 2
DAT_RETURN hx_lmr_noted(DAT_RETURN rc, const DAT_LMR_HANDLE *lmr,
			const DAT_LMR_CONTEXT *ctx);
DAT_LMR_HANDLE hx_lmr_of(const DAT_LMR_TRIPLET *iov);
static inline DAT_RETURN hx_lmr_create2(DAT_IA_HANDLE ia, DAT_MEM_TYPE type,
		DAT_REGION_DESCRIPTION region, DAT_VLEN len, DAT_PZ_HANDLE pz,
		DAT_MEM_PRIV_FLAGS priv, DAT_LMR_HANDLE *lmr,
		DAT_LMR_CONTEXT *lctx, DAT_RMR_CONTEXT *rctx, DAT_VLEN *rlen,
		DAT_VADDR *raddr)
{
	return hx_lmr_noted((dat_lmr_create)(ia, type, region, len, pz, priv,
					     DAT_VA_TYPE_VA, lmr, lctx, rctx,
					     rlen, raddr), lmr, lctx);
}
static inline DAT_RETURN hx_rmr_bind2(DAT_RMR_HANDLE rmr,
		const DAT_LMR_TRIPLET *iov, DAT_MEM_PRIV_FLAGS priv,
		DAT_EP_HANDLE ep, DAT_RMR_COOKIE cookie,
		DAT_COMPLETION_FLAGS flags, DAT_RMR_CONTEXT *ctx)
{
	return (dat_rmr_bind)(rmr, hx_lmr_of(iov), iov, priv, DAT_VA_TYPE_VA,
			      ep, cookie, flags, ctx);
}
#define dat_lmr_create hx_lmr_create2
#define dat_rmr_bind hx_rmr_bind2
#define dat_cr_reject(cr) (dat_cr_reject)(cr, 0, NULL)
#define HX_RMR_ADDR virtual_address
#define HX_CLEAR_PAD(triplet) ((void)0)
/* DAT_INVALID_ARGn of the 1.2 argument n of dat_lmr_create (2.0 adds
 * va_type as its 7th) and dat_rmr_bind (2.0 adds the LMR handle 2nd and
 * va_type 5th) */
#define HX_ARGN(n) \
	DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + (n) - 1)
#define HX_LMR_ARG(n) HX_ARGN((n) >= 7 ? (n) + 1 : (n))
#define HX_BIND_ARG(n) HX_ARGN((n) >= 4 ? (n) + 2 : (n) >= 2 ? (n) + 1 : (n))
/* the dat.conf words and provider version of this generation */
#define HX_API "u2.0"
#define HX_DAPL_VER "dapl.2.0"
#define HX_DAPL_MAJOR 2
#define HX_DAPL_MINOR 0
#else
#define HX_RMR_ADDR target_address
#define HX_CLEAR_PAD(triplet) ((triplet).pad = 0)
#define HX_LMR_ARG(n) HX_ARG(n)
#define HX_BIND_ARG(n) HX_ARG(n)
#define HX_API "u1.2"
#define HX_DAPL_VER "dapl.1.2"
#define HX_DAPL_MAJOR 1
#define HX_DAPL_MINOR 2
#endif

/* ---- environment ---------------------------------------------------- */

/* Nonzero when DAT_TEST_CONF is set (else main should return 77). */
int hx_env_ok(void);
/* Points DAT_OVERRIDE at DAT_TEST_CONF; a Check fixture (runs in the
 * forked test process). */
void hx_setup(void);
/* The IA name to open: DAT_TEST_IA, default "ofi-tcp". */
const char *hx_ia_name(void);
/* Nonzero when the IA under test is ofi-tcp (its documented limits). */
int hx_is_ofi_tcp(void);
/* The native TCP (iWARP) provider: "tcp". */
int hx_is_native_tcp(void);
/* The provider completes Sends and RDMA Writes once sent and cannot report
 * a peer's refusal as a request's status (verbs on iWARP): the test runner
 * says so with DAT_TEST_LOCAL_COMPLETION=1. */
int hx_local_completion(void);

/* ---- failures ------------------------------------------------------- */

void hx_fail(const char *file, int line, const char *fmt, ...)
	__attribute__((noreturn, format(printf, 3, 4)));

/* "0x80060028 (DAT_INVALID_PARAMETER DAT_INVALID_ARG5)"; a few rotating
 * buffers, so several may appear in one message. */
const char *hx_rc_str(DAT_RETURN rc);
const char *hx_event_str(DAT_EVENT_NUMBER ev);
const char *hx_state_str(DAT_EP_STATE st);

#define HX_CHECK(cond, ...) \
	do { \
		if (!(cond)) \
			hx_fail(__FILE__, __LINE__, __VA_ARGS__); \
	} while (0)

#define HX_RC(expr, want) \
	do { \
		DAT_RETURN hx_rc_ = (expr); \
		DAT_RETURN hx_want_ = (DAT_RETURN)(want); \
		if (hx_rc_ != hx_want_) \
			hx_fail(__FILE__, __LINE__, "%s returned %s, expected %s", \
				#expr, hx_rc_str(hx_rc_), hx_rc_str(hx_want_)); \
	} while (0)

#define HX_OK(expr) HX_RC(expr, DAT_SUCCESS)

/* For codes the DAT pages name by type alone (DAT_TIMEOUT_EXPIRED,
 * DAT_QUEUE_EMPTY, DAT_QUEUE_FULL, DAT_CONN_QUAL_IN_USE, ...): the type must
 * match and the call must have failed; class bits and subtype are free. */
#define HX_RC_TYPE(expr, type) \
	do { \
		DAT_RETURN hx_rc_ = (expr); \
		if (DAT_GET_TYPE(hx_rc_) != (DAT_UINT32)(type) || hx_rc_ == DAT_SUCCESS) \
			hx_fail(__FILE__, __LINE__, "%s returned %s, expected %s", \
				#expr, hx_rc_str(hx_rc_), hx_rc_str(type)); \
	} while (0)

#define HX_ARG(n) DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG##n)
#define HX_BADH(sub) DAT_ERROR(DAT_INVALID_HANDLE, sub)
#define HX_STATE(sub) DAT_ERROR(DAT_INVALID_STATE, sub)

/* ---- addresses and private data ------------------------------------- */

/* The IPv4 address the IA under test listens on, port 0: DAT_TEST_ADDR
 * when set (an IA on an RDMA device, e.g. 10.77.0.1 for verbs-rxe), else
 * 127.0.0.1 (ofi-tcp). */
void hx_loopback(struct sockaddr_in *sa);
/* Nonzero when sa is that IPv4 address. */
int hx_is_loopback(const struct sockaddr *sa);
/* Nonzero when sa is this process's IA's address / the other process's.
 * On one host both are hx_loopback's; on two (check-net.sh) the server
 * process (a peer, in DAT_TEST_SERVER_NETNS, opening DAT_TEST_SERVER_IA)
 * has DAT_TEST_ADDR and the test process DAT_TEST_CLIENT_ADDR. */
int hx_is_own_addr(const struct sockaddr *sa);
int hx_is_peer_addr(const struct sockaddr *sa);
/* Nonzero when the server and the test process are on two hosts
 * (DAT_TEST_CLIENT_ADDR differs from DAT_TEST_ADDR). */
int hx_two_hosts(void);
/* Nonzero when the IA under test is on a 127.0.0.0/8 address. */
int hx_on_loopback(void);
/* A recognisable byte pattern: buf[i] = f(seed, i). */
void hx_pattern(unsigned char *buf, int n, unsigned seed);
/* Nonzero when buf holds exactly hx_pattern(n, seed). */
int hx_pattern_ok(const void *buf, int n, unsigned seed);

/* ---- IA, EP and events ---------------------------------------------- */

/* An open IA with what most tests need. */
struct hx_ia {
	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async;  /* created by dat_ia_open */
	DAT_PZ_HANDLE pz;
	DAT_EVD_HANDLE dto;    /* recv and request completions of every EP */
	DAT_EVD_HANDLE cr;     /* connection requests of every service point */
	DAT_COUNT max_pdata;   /* provider_attr.max_private_data_size */
};

void hx_ia_open(struct hx_ia *x);
/* Frees pz, dto and cr, then closes the IA gracefully (must succeed). */
void hx_ia_close(struct hx_ia *x);

/* An EP with a connect EVD of its own. */
struct hx_ep {
	DAT_EP_HANDLE ep;
	DAT_EVD_HANDLE conn;
};

/* rd_in / rd_out < 0: the provider's defaults (attr NULL). */
void hx_ep_create(struct hx_ia *x, struct hx_ep *e, int rd_in, int rd_out);
/* Frees the EP (any state) and its connect EVD. */
void hx_ep_free(struct hx_ep *e);

/* The EP's state from dat_ep_query, checked against dat_ep_get_status. */
DAT_EP_STATE hx_state(DAT_EP_HANDLE ep);
#define HX_EXPECT_STATE(ep, want) \
	do { \
		DAT_EP_STATE hx_st_ = hx_state(ep); \
		HX_CHECK(hx_st_ == (want), "EP state %s, expected %s", \
			 hx_state_str(hx_st_), hx_state_str(want)); \
	} while (0)

/* max_rdma_read_in / _out as dat_ep_query reports them. */
void hx_limits(DAT_EP_HANDLE ep, int *in, int *out);

/* Connects e to hx_loopback's address:qual with HX_CONNECT_US (must
 * return SUCCESS). */
void hx_connect(struct hx_ep *e, DAT_CONN_QUAL qual, int size, const void *pdata);

/* Waits (HX_WAIT_US) for the next event on evd; fails on anything but
 * DAT_SUCCESS. */
void hx_wait(DAT_EVD_HANDLE evd, DAT_EVENT *ev);
/* Waits for the next event and checks its number (and, for connection
 * events, that it names ep when ep is not NULL). */
void hx_expect_event(DAT_EVD_HANDLE evd, DAT_EVENT_NUMBER want,
		     DAT_EP_HANDLE ep, DAT_EVENT *ev);
/* Nothing queued on evd. */
void hx_expect_empty(DAT_EVD_HANDLE evd);

/* A PSP on an unused qual (dat_psp_create_any) on x->cr. */
DAT_PSP_HANDLE hx_psp_any(struct hx_ia *x, DAT_PSP_FLAGS flags, DAT_CONN_QUAL *qual);
/* A qual nothing listens on right now: one a PSP had and gave back. */
DAT_CONN_QUAL hx_free_qual(struct hx_ia *x);
/* Waits for a DAT_CONNECTION_REQUEST_EVENT on evd; returns its CR. */
DAT_CR_HANDLE hx_wait_cr(DAT_EVD_HANDLE evd, DAT_CR_ARRIVAL_EVENT_DATA *data);

/* ---- peer processes ------------------------------------------------- */

#define HX_MSG_DATA 320

/* One message on a pipe (written whole: smaller than PIPE_BUF). */
struct hx_msg {
	int32_t tag;
	int32_t len;                      /* bytes used in data */
	int64_t v[8];
	unsigned char data[HX_MSG_DATA];
};

/* Tags 1..99 are free for the tests; these are the harness's. */
enum {
	HX_MSG_FAIL = 1000,   /* peer -> test: an assertion failed, data = text */
};

struct hx_peer {
	pid_t pid;            /* 0 once reaped */
	int rfd, wfd;         /* this side's ends */
	const char *name;
};

typedef void (*hx_peer_fn)(struct hx_peer *self, void *arg);

/* Forks a peer running fn(self, arg) (then exit 0); returns in the test
 * process. */
void hx_spawn(struct hx_peer *p, const char *name, hx_peer_fn fn, void *arg);
/* Either side: sends a message (data may be NULL with len 0). */
void hx_send(struct hx_peer *p, int tag, const int64_t *v, int nv,
	     const void *data, int len);
/* Either side: the next message.  In the test process: fails on a peer's
 * HX_MSG_FAIL (with its text), on EOF (with how the peer ended) and after
 * HX_PIPE_WAIT_MS; in a peer: EOF (the test process is gone) exits 3. */
void hx_recv(struct hx_peer *p, struct hx_msg *m);
/* hx_recv and check the tag. */
void hx_expect_msg(struct hx_peer *p, int tag, struct hx_msg *m);
/* Test process: waits for the peer to exit and checks it exited 0. */
void hx_reap(struct hx_peer *p);
/* Test process: SIGKILLs the peer and reaps it. */
void hx_kill(struct hx_peer *p);

#endif
