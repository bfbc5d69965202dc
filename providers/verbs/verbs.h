/* The verbs transport (rdma-core: librdmacm + libibverbs): internal
 * objects and calls.
 *
 * The one object the core sees is dapl_verbs_ops; everything else here is
 * hidden inside the provider library.
 *
 * Design:
 *  - A device is an rdma_cm event channel plus our own open of the RDMA
 *    device behind the address ia_params names.  An "anchor" cm_id bound
 *    to that address tells which device and port it is, and the INIT
 *    attributes of every QP; then it goes, since a bound cm_id holds a
 *    port of rdma_cm's TCP space that a consumer may want to listen on.
 *    The device is opened a second time with ibv_open_device so its
 *    async event fd belongs to this IA alone.
 *  - QPs are created here, not by rdma_create_qp: an endpoint needs its
 *    QP (to hold receives) before it knows which cm_id will carry its
 *    connection.  The cm_ids never own a QP; the QP is moved through
 *    INIT/RTR/RTS with rdma_init_qp_attr, and the active side completes
 *    with rdma_establish (rdma_cm reports CONNECT_RESPONSE to it).
 *  - A QP and its cm_id live for one connection attempt.  When the attempt
 *    ends (refused, broken, disconnected by either side, reset, destroy)
 *    both are destroyed at once: after ibv_destroy_qp no completion of that
 *    QP can appear any more, so the CQs are read dry and every request
 *    still outstanding is completed FLUSHED by the transport itself, in
 *    posting order.  No completion is ever left to the device's own flush.
 *  - Every posted request owns a slot in its endpoint's queue, preallocated
 *    to the queue's depth; wr_id is the slot's address.  Completed slots go
 *    on their CQ's ready list and cq_poll hands them out from there, so a
 *    slot is busy until its completion has been handed out (the depth is
 *    enforced whatever the device allows).  An unsignalled send finishes
 *    silently when a later request of its queue completes.
 *  - Each queue is protected by the lock of the CQ it completes to, so a
 *    post takes one lock and cq_poll takes one lock.  The CQ's wait fd is
 *    an epoll fd over its completion channel and an eventfd, because
 *    completions the transport makes itself (flushes) must wake a sleeper
 *    as the device's do.
 *  - A shared receive queue has its own slots (verbs_srq.c); a receive
 *    taken from it completes on the recv CQ of the endpoint that took it,
 *    and the CQ maps the completion's qp_num to that endpoint's owner.
 *  - Data-path errors (a completion with a real error) end the connection:
 *    cq_poll marks the endpoint and wakes the progress fd; cm_get_event then
 *    disconnects it and reports CONN_ERROR.  The device tells the requester
 *    of such an error only with the completion, so while any endpoint is
 *    connected a timer makes the progress thread read the CQs nobody has
 *    polled since its last round (rarely: every DAPL_VERBS_SWEEP_MS).
 *
 * Lock order: dev->lock, then CQ locks (lower address first); srq->lock is
 * taken alone. */
#ifndef PROVIDERS_VERBS_VERBS_H
#define PROVIDERS_VERBS_VERBS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "transport.h"
#include "conn_events.h"

/* The transport's ops table: the only symbol the core uses. */
extern const struct udapl_transport_ops dapl_verbs_ops;

#pragma GCC visibility push(hidden)

#define VERBS_MAX_SGE 32          /* segments per request we pass on */
#define VERBS_CM_DATA_MAX 256     /* rdma_cm's private-data buffer */
#define VERBS_POLL_BATCH 16       /* ibv_wc read per ibv_poll_cq */
#define VERBS_DEFAULT_INLINE 64   /* inline bytes asked per QP by default */
#define VERBS_LISTEN_BACKLOG 64
/* receives an SRQ of a device without SRQ resizing holds from the start */
#define VERBS_SRQ_FIXED_ROOM 4096u

/* rdma_cm private data per message, IB and RoCE (rdma_connect(3),
 * rdma_accept(3); a REQ loses 36 of the CM's 92 bytes to rdma_cm's own
 * header, a REJ carries the CM's 148) ... */
#define VERBS_IB_PDATA_REQ 56
#define VERBS_IB_PDATA_REP 196
#define VERBS_IB_PDATA_REJ 148
/* ... and iWARP: Linux's iWARP CM takes at most 256 bytes of MPA private
 * data (RDMA_MAX_PRIVATE_DATA), the 4-byte MPA v2 IRD/ORD block (RFC
 * 6581) included, and siw (6.1) keeps the length it sends in 8 bits, that
 * block included: with more than 251 bytes of ours the length wraps, and
 * the peer never sees the request. */
#define VERBS_IW_PDATA 251

/* The first member of every object an rdma_cm_id's context points at. */
enum verbs_kind {
	VERBS_KIND_LISTENER = 0x4c,
	VERBS_KIND_CONN = 0x43,
	VERBS_KIND_EP = 0x45,
};

/* ---- requests -------------------------------------------------------------- */

enum verbs_slot_state {
	VERBS_SLOT_FREE,
	VERBS_SLOT_POSTED,    /* the device has it */
	VERBS_SLOT_READY,     /* completed, on its CQ's ready list */
};

struct verbs_queue;

struct verbs_slot {
	uint64_t context;
	struct verbs_slot *next;        /* CQ ready list; SRQ free stack */
	struct verbs_queue *q;          /* NULL for an SRQ's slot */
	struct dapl_tsrq *srq;          /* the SRQ of an SRQ slot */
	struct dapl_tep *taker;         /* SRQ slot: the ep that received */
	uint32_t byte_len;              /* posted length; receives: arrived */
	int vendor_err;
	uint32_t imm;                   /* receives: the immediate, host order */
	uint8_t flags;                  /* DAPL_TWC_WITH_IMM */
	_Atomic uint8_t state;          /* enum verbs_slot_state */
	uint8_t opcode;                 /* enum dapl_twc_opcode */
	uint8_t status;                 /* enum dapl_twc_status */
	bool signaled;
};

/* A send or receive queue of an endpoint.  Indices grow without bound
 * (mod 2^32) and select slots modulo depth:
 *   head    oldest slot not yet free
 *   retire  oldest slot the device may still complete (head <= retire)
 *   tail    next slot to claim (retire <= tail, tail - head <= depth)
 * Everything is protected by cq->lock. */
struct verbs_queue {
	struct dapl_tcq *cq;
	struct dapl_tep *ep;            /* NULL once the ep is gone (zombie) */
	uint64_t owner;
	bool is_send;
	uint32_t depth, max_sge;
	uint32_t head, retire, tail;
	uint32_t nready;                /* slots on the CQ's ready list */
	struct verbs_queue *zombie_next;
	struct verbs_slot slots[];
};

/* ---- objects --------------------------------------------------------------- */

/* An endpoint on an SRQ receiving on a CQ: its QP number names it. */
struct verbs_srq_taker {
	uint32_t qp_num;
	struct dapl_tep *ep;
};

struct dapl_tcq {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;
	struct ibv_comp_channel *ch;
	struct ibv_cq *cq;
	int epfd;                       /* what cq_wait_fd returns */
	int event_fd;                   /* readable: software completions ready */
	bool armed;
	uint32_t cqe;                   /* the device CQ's size */
	uint32_t asked;                 /* what cq_create was given */
	uint32_t needed;                /* depths of the queues completing here */
	uint32_t polls, polls_seen;     /* cq_poll calls; as the last sweep saw them */
	int users;                      /* queues of live endpoints */
	struct verbs_slot *ready_head, *ready_tail;
	struct verbs_queue *zombies;    /* queues of destroyed eps with ready slots */
	struct verbs_srq_taker *takers; /* eps on an SRQ receiving here */
	int ntakers, takers_cap;
};

enum verbs_ep_state {
	VERBS_EP_IDLE,        /* a QP in INIT, no cm_id: receives are held */
	VERBS_EP_CONNECTING,  /* cm_id resolving / requested / accepted */
	VERBS_EP_CONNECTED,   /* QP in RTS */
	VERBS_EP_DOWN,        /* the attempt ended: no QP, posts flush */
};

struct dapl_tep {
	uint8_t kind;                   /* VERBS_KIND_EP */
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	struct dapl_tcq *scq, *rcq;
	struct verbs_queue *sq, *rq;    /* rq NULL on an SRQ */
	struct dapl_tsrq *srq;
	uint64_t owner;                 /* the core's cookie (dapl_twc.owner) */
	uint32_t max_send_sge, max_recv_sge;
	uint32_t inline_asked;          /* 0: the default */
	uint32_t max_inline;            /* what the QP got */
	/* qp and state change with dev->lock and both CQ locks held; posts
	 * read them under their CQ's lock. */
	struct ibv_qp *qp;
	enum verbs_ep_state state;
	struct rdma_cm_id *id;          /* this attempt's, or NULL */
	bool active;                    /* this attempt was a connect */
	atomic_bool faulted;            /* a DTO failed with a real error */
	uint16_t ird, ord;              /* asked for this attempt (clamped) */
	uint8_t pdata[VERBS_CM_DATA_MAX];
	uint8_t pdata_len;              /* the connect's, sent at ROUTE_RESOLVED */
	bool have_addrs;
	struct sockaddr_storage local, peer;
	/* its place in dev->connq (dev->lock) */
	struct dapl_conn_event_slot cev;
	struct dapl_tep *next, *prev;   /* dev->eps (dev->lock) */
};

struct dapl_tconn {
	uint8_t kind;                   /* VERBS_KIND_CONN */
	struct dapl_tdev *dev;
	struct dapl_tlisten *listener;
	struct rdma_cm_id *id;
	uint8_t responder_resources;    /* the request's, this side's view */
	uint8_t initiator_depth;
	struct dapl_tconn *next;        /* dev->conns (dev->lock) */
};

struct dapl_tlisten {
	uint8_t kind;                   /* VERBS_KIND_LISTENER */
	struct dapl_tdev *dev;
	struct rdma_cm_id *id;
	uint16_t port;
	struct dapl_tlisten *next;      /* dev->listeners (dev->lock) */
};

/* Slot storage of an SRQ: grows with srq_resize, never moves. */
struct verbs_srq_chunk {
	struct verbs_srq_chunk *next;
	uint32_t n;
	struct verbs_slot slots[];
};

/* A shared receive queue.  Posting takes srq->lock; cq_poll gives a slot
 * back with atomics only (a free stack only posters pop, under the lock,
 * so it has no ABA problem). */
struct dapl_tsrq {
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	pthread_mutex_t lock;
	struct ibv_srq *srq;
	uint32_t max_wr, max_sge;
	uint32_t hw_max_wr;             /* what the device SRQ holds */
	uint32_t cap;                   /* slots in chunks */
	struct verbs_srq_chunk *chunks;
	struct verbs_slot *_Atomic free_top;
	/* 1 while not destroyed + slots not free; whoever drops it to 0
	 * frees the SRQ */
	atomic_uint refs;
	int users;                      /* eps on it (dev->lock) */
	/* a limit event we make ourselves (dev->limit_head, dev->lock) */
	bool limit_queued;
	struct dapl_tsrq *limit_next;
};

struct dapl_tpd {
	struct dapl_tdev *dev;
	struct ibv_pd *pd;
};

struct dapl_tmr {
	struct dapl_tpd *pd;
	struct ibv_mr *mr;
};

struct dapl_tmw {
	struct dapl_tpd *pd;
	struct ibv_mw *mw;              /* NULL: emulated */
	struct ibv_mr *emr;             /* emulation: the bound range's registration */
	struct ibv_mr *bound_mr;        /* type 1: the registration bound into */
	uint32_t rkey;                  /* the key of the current binding */
	bool bound;
};

struct dapl_tdev {
	pthread_mutex_t lock;
	struct rdma_event_channel *ch;
	struct rdma_cm_id *anchor;      /* bound to addr while opening only */
	uint16_t anchor_port;           /* the port it held (free since) */
	struct ibv_qp_attr qp_init_attr; /* INIT: port, P_Key index */
	int qp_init_mask;
	struct ibv_context *ctx;        /* our own open of that device */
	struct ibv_device_attr attr;
	struct ibv_port_attr port_attr;
	uint8_t port_num;
	bool iwarp;
	/* DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS: the DAT 2.0 IB
	 * extensions this device can do (iWARP: neither) */
	unsigned ext;
	enum ibv_mw_type mw_type;       /* 0: windows are emulated */
	uint32_t max_inline;
	uint32_t default_inline;        /* asked per QP (DAPL_VERBS_INLINE) */
	uint16_t max_pdata_connect, max_pdata_accept, max_pdata_reject;
	struct sockaddr_storage addr;
	socklen_t addr_len;
	int notify_fd;                  /* eventfd: a fault or an SRQ limit waits */
	int timer_fd;                   /* the sweep of unwatched CQs (see verbs_event.c) */
	int sweep_ms;
	int nconnected;                 /* eps CONNECTED: the sweep runs while > 0 */
	struct dapl_tcq **cqs;          /* every CQ (dev->lock) */
	int ncqs, cqs_cap;
	int addr_timeout_ms, route_timeout_ms;
	uint8_t retry, rnr_retry;
	uint8_t rnr_timer;              /* IB encoding: 12 = 0.64 ms */
	uint8_t ack_timeout;            /* 4.096 us << n; 0: the CM's */
	char name[64];
	char vendor[64];
	char mtu[16];                   /* active MTU in bytes, as text */

	struct dapl_tlisten *listeners;
	struct dapl_tconn *conns;       /* reported, unanswered requests */
	struct dapl_tep *eps;
	/* the events we make up ourselves (local disconnect, a data-path
	 * fault's CONN_ERROR); dev->lock */
	struct dapl_conn_events connq;
	struct dapl_tsrq *limit_head;   /* SRQs whose limit fired at arming */
	atomic_bool faults;             /* some ep's faulted is set */
	bool fatal;                     /* the device is gone */
	bool fatal_reported;

	uint8_t pdata[VERBS_CM_DATA_MAX]; /* of the event returned last */
};

/* ---- verbs_cq.c ---------------------------------------------------------------- */

int verbs_cq_create(struct dapl_tdev *dev, uint32_t depth, struct dapl_tcq **cq);
int verbs_cq_destroy(struct dapl_tcq *cq);
int verbs_cq_wait_fd(struct dapl_tcq *cq);
int verbs_cq_arm(struct dapl_tcq *cq, int solicited_only);
void verbs_cq_ack(struct dapl_tcq *cq);
int verbs_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max);

/* cq->lock held: reads the device CQ dry onto the ready list. */
void verbs_cq_drain(struct dapl_tcq *cq);
/* cq->lock held: puts s on the ready list. */
void verbs_cq_push_ready(struct dapl_tcq *cq, struct verbs_slot *s);
/* cq->lock held: wakes an armed waiter if anything is ready. */
void verbs_cq_kick(struct dapl_tcq *cq);
/* cq->lock held: the CQ must hold `more` completions more (ep_create);
 * grows the device CQ when it can. */
int verbs_cq_reserve(struct dapl_tcq *cq, uint32_t more);
/* cq->lock held: an SRQ ep's QP receives here / no more. */
int verbs_cq_add_taker(struct dapl_tcq *cq, uint32_t qp_num,
		       struct dapl_tep *ep);
void verbs_cq_remove_taker(struct dapl_tcq *cq, struct dapl_tep *ep);
/* cq->lock held: SRQ receives ep took that wait on the ready list name
 * nobody from now on (the ep is destroyed). */
void verbs_cq_forget_taker(struct dapl_tcq *cq, struct dapl_tep *ep);

/* Locks the CQs of ep (one lock when they are the same CQ). */
void verbs_ep_lock_cqs(struct dapl_tep *ep);
void verbs_ep_unlock_cqs(struct dapl_tep *ep);

/* Queues (cq->lock held for all but alloc). */
struct verbs_queue *verbs_queue_alloc(struct dapl_tcq *cq, struct dapl_tep *ep,
				      bool is_send, uint32_t depth,
				      uint32_t max_sge);
/* The ep is gone: frees q, or leaves it to the CQ as a zombie until its
 * ready slots have been handed out. */
void verbs_queue_release(struct verbs_queue *q);
/* Claims the next slot, or NULL when the queue is full. */
struct verbs_slot *verbs_queue_claim(struct verbs_queue *q);
/* Gives back the slot claimed last (its post failed). */
void verbs_queue_unclaim(struct verbs_queue *q);
/* Completes every slot the device still has as FLUSHED (its QP is gone). */
void verbs_queue_flush(struct verbs_queue *q);
/* Completes a slot just claimed at once, without the device (a flush
 * after the connection ended, an emulated window bind).  A success of an
 * unsignalled request is not reported. */
void verbs_slot_done_now(struct verbs_queue *q, struct verbs_slot *s,
			 enum dapl_twc_status status);

enum dapl_twc_status verbs_wc_status(enum ibv_wc_status st);

/* ---- verbs_ep.c ------------------------------------------------------------------ */

int verbs_ep_create(struct dapl_tpd *pd, struct dapl_tcq *send_cq,
		    struct dapl_tcq *recv_cq, struct dapl_tsrq *srq,
		    const struct dapl_tep_attr *attr, struct dapl_tep **ep);
int verbs_ep_destroy(struct dapl_tep *ep);
int verbs_ep_reset(struct dapl_tep *ep);
int verbs_connect(struct dapl_tep *ep, const struct sockaddr *addr,
		  uint16_t port, const void *pdata, size_t len, uint16_t ird,
		  uint16_t ord);
int verbs_accept(struct dapl_tconn *conn, struct dapl_tep *ep,
		 const void *pdata, size_t len, uint16_t ird, uint16_t ord);
int verbs_reject(struct dapl_tconn *conn, const void *pdata, size_t len);
int verbs_disconnect(struct dapl_tep *ep);
int verbs_ep_addrs(struct dapl_tep *ep, struct sockaddr_storage *local,
		   struct sockaddr_storage *peer);

/* dev->lock held: the attempt on ep is over; destroys its cm_id and QP,
 * flushes what was posted, state DOWN. */
void verbs_ep_teardown(struct dapl_tep *ep);
/* dev->lock held, ep connected: whether a DTO of ep failed with a real
 * error, after reading every completion the device has made so far
 * (clears the mark: the caller ends the connection for it). */
bool verbs_ep_dto_failed(struct dapl_tep *ep);
/* dev->lock held: the connection is up (the QP is in RTS: moved by the
 * iWARP CM, or by us at accept and CONNECT_RESPONSE); 0 or a negative
 * errno. */
int verbs_ep_established(struct dapl_tep *ep);
/* dev->lock held: moves ep's QP to RTR and RTS for its cm_id (active side,
 * CONNECT_RESPONSE) and completes the handshake. */
int verbs_ep_connect_response(struct dapl_tep *ep);
/* dev->lock held: ROUTE_RESOLVED: sends the request. */
int verbs_ep_send_request(struct dapl_tep *ep);
/* Remembers the cm_id's addresses for ep_addrs. */
void verbs_ep_save_addrs(struct dapl_tep *ep);

/* ---- verbs_post.c ------------------------------------------------------------------ */

int verbs_post_send(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		    uint64_t context, unsigned flags);
int verbs_post_recv(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		    uint64_t context);
int verbs_post_rdma_write(struct dapl_tep *ep, const struct dapl_tsge *sge,
			  int nsge, uint64_t remote_addr, uint32_t rkey,
			  uint64_t context, unsigned flags);
int verbs_post_rdma_read(struct dapl_tep *ep, const struct dapl_tsge *sge,
			 int nsge, uint64_t remote_addr, uint32_t rkey,
			 uint64_t context, unsigned flags);
/* The DAT 2.0 IB extensions (dat_extension_op): -EOPNOTSUPP where the
 * device cannot do them (iWARP has neither). */
unsigned verbs_ep_extensions(struct dapl_tep *ep);
int verbs_post_rdma_write_imm(struct dapl_tep *ep, const struct dapl_tsge *sge,
			      int nsge, uint64_t remote_addr, uint32_t rkey,
			      uint32_t imm, uint64_t context, unsigned flags);
int verbs_post_atomic(struct dapl_tep *ep, enum dapl_tatomic_op op,
		      const struct dapl_tsge *result, uint64_t remote_addr,
		      uint32_t rkey, uint64_t add_or_compare, uint64_t swap,
		      uint64_t context, unsigned flags);
/* Fills an ibv_sge list; returns the total length or -EINVAL. */
int64_t verbs_sge_fill(struct ibv_sge *out, const struct dapl_tsge *sge,
		       int nsge, uint32_t max);
/* scq->lock held: claims a send slot for a request.  NULL with *err
 * set when it cannot be posted, NULL with *err 0 when it was completed
 * FLUSHED at once (the connection is over). */
struct verbs_slot *verbs_send_claim(struct dapl_tep *ep,
				    enum dapl_twc_opcode op, uint64_t context,
				    unsigned flags, uint32_t len, int *err);
/* DAPL_TPOST_* as ibv_send_flags. */
unsigned verbs_send_flags(unsigned flags);
/* An ibv_post_* failure as the seam's negative errno (-ENOSPC when full). */
int verbs_post_err(int ret);
/* wr's segment list for a receive of nsge segments (list has room for 1). */
void verbs_recv_list(struct ibv_recv_wr *wr, struct ibv_sge *list, int nsge,
		     bool iwarp);

/* ---- verbs_mem.c ------------------------------------------------------------------- */

int verbs_pd_alloc(struct dapl_tdev *dev, struct dapl_tpd **pd);
int verbs_pd_free(struct dapl_tpd *pd);
int verbs_mr_reg(struct dapl_tpd *pd, void *addr, uint64_t len,
		 unsigned access, struct dapl_tmr **mr, uint32_t *lkey,
		 uint32_t *rkey);
int verbs_mr_dereg(struct dapl_tmr *mr);
int verbs_mw_alloc(struct dapl_tpd *pd, struct dapl_tmw **mw);
int verbs_mw_bind(struct dapl_tep *ep, struct dapl_tmw *mw,
		  struct dapl_tmr *mr, uint64_t addr, uint64_t len,
		  unsigned access, uint64_t context, unsigned flags,
		  uint32_t *rkey);
int verbs_mw_free(struct dapl_tmw *mw);
/* DAPL_TACCESS_* as ibv_access_flags for a registration. */
int verbs_mr_access(const struct dapl_tdev *dev, unsigned access);

/* ---- verbs_srq.c ------------------------------------------------------------------- */

int verbs_srq_create(struct dapl_tpd *pd, uint32_t max_wr, uint32_t max_sge,
		     struct dapl_tsrq **srq);
int verbs_srq_destroy(struct dapl_tsrq *srq,
		      void (*discarded)(uint64_t context, void *arg), void *arg);
int verbs_srq_resize(struct dapl_tsrq *srq, uint32_t max_wr);
int verbs_srq_set_limit(struct dapl_tsrq *srq, uint32_t limit);
int verbs_srq_post_recv(struct dapl_tsrq *srq, const struct dapl_tsge *sge,
			int nsge, uint64_t context);
/* cq_poll handed an SRQ slot out (no lock). */
void verbs_srq_slot_release(struct verbs_slot *s);

/* ---- verbs_dev.c ------------------------------------------------------------------- */

int verbs_dev_open(const char *ia_params, struct dapl_tdev **dev, char *why,
		   size_t whylen);
int verbs_dev_query(struct dapl_tdev *dev, struct dapl_tdev_attr *attr);
void verbs_dev_close(struct dapl_tdev *dev);
int verbs_progress_fds(struct dapl_tdev *dev, int *fds, int max);
int verbs_listen(struct dapl_tdev *dev, uint16_t *port,
		 struct dapl_tlisten **l);
void verbs_unlisten(struct dapl_tlisten *l);
/* Makes the notify fd readable (a fault or an SRQ limit to look at). */
void verbs_dev_notify(struct dapl_tdev *dev);
/* dev->lock held: unlinks and frees an answered request. */
void verbs_conn_free(struct dapl_tconn *conn);
/* dev->lock held: an ep's state goes from old to st (keeps the sweep
 * running while anything is connected). */
void verbs_dev_track(struct dapl_tdev *dev, enum verbs_ep_state old,
		     enum verbs_ep_state st);
/* dev->lock held: a CQ joins / leaves the sweep. */
int verbs_dev_add_cq(struct dapl_tdev *dev, struct dapl_tcq *cq);
void verbs_dev_remove_cq(struct dapl_tdev *dev, struct dapl_tcq *cq);
/* dev->lock held: reads the CQs nobody polled since the last round. */
void verbs_dev_sweep(struct dapl_tdev *dev);

/* ---- verbs_event.c ----------------------------------------------------------------- */

int verbs_cm_get_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev);

/* The length of private data to hand over: rdma_cm pads with zeros, so
 * data that is all zeros is no data. */
size_t verbs_pdata_len(const void *p, size_t len);

#pragma GCC visibility pop

#endif
