/*
 * dapltest: shared definitions of the client, the server and the tests.
 *
 * The program is a from-scratch, command-line compatible rewrite of the
 * OpenFabrics dapltest (test types S, Q, T and P here; L and F live in
 * dt_limit.c / dt_fft.c).  One process is the server (-T S): it listens on
 * a fixed connection qualifier and runs the server side of each test a
 * client asks for, in threads of its own, so many clients can test at once.
 *
 * Functions shared between these files are named dtc_*, so they never
 * clash with the dt_* helpers of the limit and feature tests.
 */
#ifndef DAPLTEST_DT_COMMON_H
#define DAPLTEST_DT_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <dat/udat.h>

/* ------------------------------------------------------------------ */
/* Defaults and limits                                                 */
/* ------------------------------------------------------------------ */

#define DT_DEFAULT_IA		"ofi-tcp"	/* OFA 1.2's was OpenIB-cma */
#define DT_DEFAULT_PORT		45278		/* 0xB0DE, as OFA */
#define DT_DEFAULT_ITERS	1000
#define DT_DEFAULT_SEG_SIZE	4096
#define DT_DEFAULT_PIPELINE	16

#define DT_MAX_USER_OPS		100		/* OPs on the command line */
#define DT_SYNC_OPS		3		/* appended by -V */
#define DT_MAX_OPS		(DT_MAX_USER_OPS + DT_SYNC_OPS)
#define DT_MAX_THREADS		128
#define DT_MAX_EPS_PER_THREAD	128
#define DT_MAX_TEST_EPS		1024		/* threads x EPs per thread */
#define DT_MAX_SEGS		16		/* parse limit; the IA's is checked too */
#define DT_MAX_OP_BYTES		(64u << 20)	/* seg_size x num_segs */
#define DT_MAX_TEST_MEMORY	(1ull << 30)	/* all buffers of one test */
#define DT_MAX_PIPELINE		1024
#define DT_MAX_ITERS		100000000u
#define DT_SYNC_OP_SIZE		64		/* bytes of a -V sync SEND */

/* The transaction test's connect private data, checked by the server. */
#define DT_PDATA		"DAPL and RDMA rule! Test 4321."
#define DT_PDATA_LEN		30

/* Timeouts (microseconds).  They only bound waits that would otherwise
 * hang when the peer is stuck; no result depends on them. */
#define DT_SEC			1000000u
#define DT_CONNECT_TIMEOUT	(5 * DT_SEC)	/* control connection */
#define DT_TEST_CONNECT_TIMEOUT	(20 * DT_SEC)	/* per-test connections */
#define DT_HANDSHAKE_TIMEOUT	(10 * DT_SEC)	/* version / request */
#define DT_SETUP_TIMEOUT	(60 * DT_SEC)	/* server test setup, accepts */
#define DT_DTO_TIMEOUT		(60 * DT_SEC)	/* one DTO completion */
#define DT_RESULT_TIMEOUT	(120 * DT_SEC)	/* server result after the test */
#define DT_PERF_DONE_TIMEOUT	(600 * DT_SEC)	/* whole -T P run */
#define DT_QUIT_TIMEOUT		(300 * DT_SEC)	/* server finishing its tests */

/* Exit statuses (OFA 1.2 always exited 0 once the arguments parsed). */
#define DT_EXIT_PASS		0
#define DT_EXIT_FAIL		1
#define DT_EXIT_USAGE		2
#define DT_EXIT_PORT_IN_USE	3	/* -T S: the server port is taken */

/* ------------------------------------------------------------------ */
/* Parameters                                                          */
/* ------------------------------------------------------------------ */

enum dt_who { DT_CLIENT = 0, DT_SERVER = 1 };
enum dt_xfer { DT_SR = 1, DT_RR = 2, DT_RW = 3 };

struct dt_op {
	uint8_t		who;		/* enum dt_who: who initiates */
	uint8_t		xfer;		/* enum dt_xfer */
	bool		reap_on_recv;	/* -f: reap this SEND after the next RECV */
	uint32_t	seg_size;
	uint32_t	num_segs;
};

struct dt_trans_args {
	uint32_t	iters;
	uint32_t	threads;
	uint32_t	eps_per_thread;
	bool		validate;	/* -V */
	bool		poll;		/* -P */
	bool		use_rsp;	/* -r */
	uint32_t	nops;		/* user OPs, then DT_SYNC_OPS if -V */
	uint32_t	user_nops;
	struct dt_op	ops[DT_MAX_OPS];
};

struct dt_perf_args {
	uint8_t		xfer;		/* DT_RR or DT_RW */
	bool		poll;		/* -m p */
	uint32_t	iters;
	uint32_t	pipeline;
	uint32_t	seg_size;
	uint32_t	num_segs;
};

struct dt_params {
	char		test;		/* 'S', 'Q', 'T', 'P' */
	const char	*ia_name;
	uint16_t	port;
	DAT_QOS		qos;
	const char	*server;	/* -s */
	struct dt_trans_args trans;
	struct dt_perf_args perf;
};

extern int dtc_debug;		/* -d count */

/* dt_params.c */
int dtc_parse_args(int argc, char **argv, struct dt_params *p);
void dtc_usage(char test, int to_stderr);
int dtc_read_script(const char *path, int *argc_out, char ***argv_out,
		   char **storage_out);
int dtc_trans_check(const struct dt_trans_args *t, char *err, size_t errlen);
void dtc_trans_expand(struct dt_trans_args *t);
int dtc_perf_check(const struct dt_perf_args *pa, char *err, size_t errlen);
const char *dtc_xfer_name(uint8_t xfer);
const char *dtc_qos_name(DAT_QOS qos);

/* ------------------------------------------------------------------ */
/* Wire messages (dt_proto.c)                                          */
/* ------------------------------------------------------------------ */

#define DT_PROTO_MAGIC		0x44415054u	/* "DAPT" */
#define DT_PROTO_VERSION	2		/* OFA's DAPLTEST_VERSION is 6 */
#define DT_MSG_HDR_LEN		12
#define DT_MSG_MAX		8192
#define DT_TEXT_MAX		240

enum dt_msg_type {
	DT_MSG_VERSION = 1,
	DT_MSG_REQUEST = 2,
	DT_MSG_REPLY = 3,
	DT_MSG_RESULT = 4,
	DT_MSG_RMRINFO = 5,
	DT_MSG_FIN = 6,
};

struct dt_request {
	char			test;	/* 'T', 'P' or 'Q' */
	uint8_t			debug;
	struct dt_trans_args	trans;
	struct dt_perf_args	perf;
};

struct dt_reply {
	uint32_t	status;		/* 0: ready; else the server refused */
	uint32_t	nquals;
	uint32_t	quals[DT_MAX_TEST_EPS];
	char		text[DT_TEXT_MAX + 1];
};

struct dt_result {
	uint32_t	status;		/* 0: pass */
	char		text[DT_TEXT_MAX + 1];
};

struct dt_rmrinfo {
	uint32_t	count;
	DAT_RMR_TRIPLET	t[DT_MAX_OPS];
};

struct dt_msg {
	uint16_t	type;
	union {
		uint32_t		version;
		struct dt_request	request;
		struct dt_reply		reply;
		struct dt_result	result;
		struct dt_rmrinfo	rmrinfo;
	} u;
};

size_t dtc_encode_version(uint8_t *buf, size_t cap);
size_t dtc_encode_request(uint8_t *buf, size_t cap, const struct dt_request *r);
size_t dtc_encode_reply(uint8_t *buf, size_t cap, uint32_t status,
		       const uint32_t *quals, uint32_t nquals, const char *text);
size_t dtc_encode_result(uint8_t *buf, size_t cap, uint32_t status,
			const char *text);
size_t dtc_encode_rmrinfo(uint8_t *buf, size_t cap, const DAT_RMR_TRIPLET *t,
			 uint32_t count);
size_t dtc_encode_fin(uint8_t *buf, size_t cap);
size_t dtc_rmrinfo_size(uint32_t count);
int dtc_decode(const uint8_t *buf, size_t len, struct dt_msg *m,
	      char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Utilities (dt_util.c)                                               */
/* ------------------------------------------------------------------ */

#if defined(__GNUC__)
#define DT_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define DT_PRINTF(f, a)
#endif

void dtc_log(const char *fmt, ...) DT_PRINTF(1, 2);	/* stdout */
void dtc_err(const char *fmt, ...) DT_PRINTF(1, 2);	/* "dapltest: " on stderr */
void dtc_dbg(int level, const char *fmt, ...) DT_PRINTF(2, 3);
/* "dapltest: <where>: dat_<call> failed: <type> <subtype>" */
void dtc_dat_err(const char *where, const char *call, DAT_RETURN rc);
/* The same text into a buffer (for thread error reports). */
void dtc_dat_errstr(char *buf, size_t len, const char *where,
		   const char *call, DAT_RETURN rc);
const char *dtc_event_name(DAT_EVENT_NUMBER n);
const char *dtc_dto_status_name(DAT_DTO_COMPLETION_STATUS s);
bool dtc_is_timeout(DAT_RETURN rc);
double dtc_now(void);		/* monotonic seconds */
void dtc_addr_str(const struct sockaddr *sa, char *buf, size_t len);
int dtc_resolve(const char *host, struct sockaddr_storage *ss, char *err,
	       size_t errlen);

/* One event from an EVD: dat_evd_wait, or dat_evd_dequeue in a loop when
 * poll is set.  Returns the DAT status (DAT_TIMEOUT_EXPIRED on timeout). */
DAT_RETURN dtc_evd_next(DAT_EVD_HANDLE evd, bool poll, DAT_TIMEOUT timeout,
		       DAT_EVENT *ev);

/* Byte patterns for -V: a function of the iteration, the OP and the byte
 * offset, so a stale or misplaced buffer is caught. */
void dtc_pattern_fill(uint8_t *p, size_t len, uint32_t iter, uint32_t op);
/* Returns the offset of the first wrong byte, or len when all match. */
size_t dtc_pattern_check(const uint8_t *p, size_t len, uint32_t iter,
			uint32_t op, uint8_t *want, uint8_t *got);

/* The process's IA, PZ and the limits that matter to the tests. */
struct dt_ia {
	DAT_IA_HANDLE	ia;
	DAT_PZ_HANDLE	pz;
	DAT_EVD_HANDLE	async_evd;
	const char	*name;
	DAT_COUNT	max_iov;
	DAT_COUNT	max_rdma_read_out;
	DAT_COUNT	max_rdma_read_in;
	DAT_COUNT	max_dtos;
	DAT_COUNT	max_evd_qlen;
};
int dtc_ia_open(struct dt_ia *d, const char *name);
int dtc_ia_close(struct dt_ia *d);

/* An EP's LMR and its memory. */
struct dt_mem {
	uint8_t		*base;
	size_t		len;
	DAT_LMR_HANDLE	lmr;
	DAT_LMR_CONTEXT	lmr_ctx;
};
int dtc_mem_create(struct dt_mem *m, const struct dt_ia *d, size_t len,
		  char *err, size_t errlen);
int dtc_mem_free(struct dt_mem *m, char *err, size_t errlen);

/* ------------------------------------------------------------------ */
/* Control channel: the client's connection to the server's port,     */
/* carrying VERSION, REQUEST, REPLY and RESULT (dt_util.c).            */
/* ------------------------------------------------------------------ */

#define DT_CHAN_RECVS		2

struct dt_chan {
	const struct dt_ia *d;
	DAT_EP_HANDLE	ep;
	DAT_EVD_HANDLE	recv_evd;
	DAT_EVD_HANDLE	req_evd;
	DAT_EVD_HANDLE	conn_evd;
	struct dt_mem	mem;		/* send buffer, then the receive slots */
	unsigned	next_recv;	/* slot of the oldest posted receive */
	bool		connected;
	char		peer[64];	/* peer address, for messages */
};

int dtc_chan_create(struct dt_chan *c, const struct dt_ia *d);
/* Connects; on failure writes why (event name, reason) into err. */
int dtc_chan_connect(struct dt_chan *c, struct sockaddr *addr,
		    DAT_CONN_QUAL qual, DAT_QOS qos, char *err, size_t errlen);
int dtc_chan_accept(struct dt_chan *c, DAT_CR_HANDLE cr);
/* Sends the message encoded in dtc_chan_sendbuf(c). */
uint8_t *dtc_chan_sendbuf(struct dt_chan *c);
/* may_flush: this is the last message and the peer may disconnect as
 * soon as it has it, so a FLUSHED completion is not an error. */
int dtc_chan_send(struct dt_chan *c, size_t len, bool may_flush);
int dtc_chan_recv(struct dt_chan *c, DAT_TIMEOUT timeout, struct dt_msg *m,
		 char *err, size_t errlen);
/* initiate: call dat_ep_disconnect; then wait for the DISCONNECTED event. */
int dtc_chan_disconnect(struct dt_chan *c, bool initiate, DAT_TIMEOUT timeout);
int dtc_chan_destroy(struct dt_chan *c);

/* ------------------------------------------------------------------ */
/* Tests                                                               */
/* ------------------------------------------------------------------ */

/* Server side of a test, run by the session thread of one client; the
 * REPLY (with the per-test connection qualifiers) is sent from inside.
 * Returns 0 on pass; text gets a one-line reason on failure. */
int dtc_trans_server(const struct dt_ia *d, struct dt_chan *ctl,
		    const struct dt_request *req, char *text, size_t textlen);
int dtc_perf_server(const struct dt_ia *d, struct dt_chan *ctl,
		   const struct dt_request *req, char *text, size_t textlen);

/* Client side, given the REPLY's qualifiers.  Return 0 on pass. */
int dtc_trans_client(const struct dt_ia *d, const struct dt_params *p,
		    const struct sockaddr *server, const uint32_t *quals);
int dtc_perf_client(const struct dt_ia *d, const struct dt_params *p,
		   const struct sockaddr *server, uint32_t qual);

/* Top-level runs (dt_server.c, dt_client.c); return an exit status. */
int dtc_server_main(const struct dt_params *p);
int dtc_client_main(const struct dt_params *p);

#endif
