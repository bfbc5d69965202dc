/* dtest: the simple DAT client/server sanity and timing tool (see dtest(1)).
 *
 * dtest.c    options, main, the report
 * dt_objs.c  creating and freeing the DAT objects (timed), waiting for events
 * dt_run.c   connecting, the RMR exchange and the transfer tests
 */
#ifndef DTEST_H
#define DTEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dat/udat.h>

#define DT_DEFAULT_PROVIDER "ofi-tcp"
#define DT_DEFAULT_BUF_LEN 64
#define DT_DEFAULT_BURST 10
#define DT_DEFAULT_PORT 45248       /* OFA dtest's fixed connection qualifier */

/* Limits for the options: the request queue must hold a whole burst plus a
 * few control operations (queue depths go up to 1024), and the seven
 * buffers dtest allocates stay well below a gigabyte. */
#define DT_MAX_BURST 512
#define DT_MAX_BUF_LEN (16u << 20)
#define DT_MAX_BURST_BYTES (32u << 20)   /* buf_len * burst */
#define DT_MAX_DELAY_S 3600

#define DT_CONNECT_TIMEOUT_US (5u * 1000u * 1000u)
#define DT_EVENT_TIMEOUT_US (10u * 1000u * 1000u)

/* Receives kept posted for control and ping-pong messages.  The exchange is
 * lock-step, so the peer is never more than two messages ahead. */
#define DT_RECV_POOL 4

/* Control messages (RMR info, "writes done", "all done") are this long;
 * every message buffer is at least this long. */
#define DT_CTL_LEN 64

struct dt_opts {
	const char *provider;
	size_t buf_len;
	int burst;
	bool verbose;
	bool use_cno;
	bool poll;
	unsigned delay_s;
	bool server;
	const char *host;
	unsigned port;
};

/* Object setup and teardown costs, reported in µs. */
enum dt_cost {
	DT_COST_OPEN, DT_COST_CLOSE,
	DT_COST_PZ_CREATE, DT_COST_PZ_FREE,
	DT_COST_LMR_CREATE, DT_COST_LMR_FREE,
	DT_COST_RMR_CREATE, DT_COST_RMR_FREE,
	DT_COST_EVD_CREATE, DT_COST_EVD_FREE,
	DT_COST_CNO_CREATE, DT_COST_CNO_FREE,
	DT_COST_EP_CREATE, DT_COST_EP_FREE,
	DT_COST_N
};

/* One timed test: total time, operations done, empty polls seen. */
struct dt_op_stats {
	double total_us;
	int ops;
	unsigned long polls;
};

/* A buffer registered as one LMR. */
struct dt_region {
	unsigned char *buf;
	size_t len;
	DAT_LMR_HANDLE lmr;
	DAT_LMR_CONTEXT lmr_ctx;
};

struct dt {
	const struct dt_opts *o;
	const char *role;               /* "server" or "client" */

	DAT_IA_HANDLE ia;
	DAT_EVD_HANDLE async_evd;
	DAT_PZ_HANDLE pz;
	DAT_CNO_HANDLE cno;
	DAT_EVD_HANDLE req_evd, recv_evd, conn_evd, cr_evd;
	DAT_EP_HANDLE ep;
	DAT_PSP_HANDLE psp;
	DAT_RMR_HANDLE rmr_wr, rmr_rd;  /* windows for the peer's writes and reads */

	/* Buffers: each holds burst slots of buf_len bytes, except the
	 * message buffers (msg_len each, DT_RECV_POOL of them to receive). */
	struct dt_region wr_target;     /* the peer RDMA-writes here */
	struct dt_region rd_source;     /* the peer RDMA-reads from here */
	struct dt_region wr_source;     /* our RDMA writes come from here */
	struct dt_region rd_target;     /* our RDMA reads land here */
	struct dt_region msg_send;
	struct dt_region msg_recv;
	size_t msg_len;
	int next_recv;                  /* the pool slot that completes next */

	DAT_RMR_TRIPLET peer_wr, peer_rd;   /* the peer's windows */
	int ord;                            /* RDMA reads we may have in flight */
	bool connected;

	double cost[DT_COST_N];
	struct dt_op_stats rtt, wr, rd;
};

/* dtest.c */
double dt_now_us(void);
void dt_fail(const struct dt *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void dt_fail_dat(const struct dt *t, const char *call, DAT_RETURN rc);
void dt_verbose(const struct dt *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* dt_objs.c */
int dt_setup(struct dt *t);
int dt_teardown(struct dt *t);          /* graceful, checked, timed */
void dt_teardown_after_error(struct dt *t);
const char *dt_event_name(DAT_EVENT_NUMBER ev);
const char *dt_dto_status_name(DAT_DTO_COMPLETION_STATUS s);
DAT_RETURN dt_next_event(struct dt *t, DAT_EVD_HANDLE evd, bool may_poll,
			 DAT_TIMEOUT timeout_us, DAT_EVENT *ev,
			 unsigned long *polls);
void dt_explain_connection(struct dt *t);

/* dt_run.c */
int dt_connect(struct dt *t);
int dt_run_tests(struct dt *t);
int dt_disconnect(struct dt *t);

#endif /* DTEST_H */
