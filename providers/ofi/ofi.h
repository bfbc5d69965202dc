/* The libfabric (FI_EP_MSG) transport: internal objects and calls.
 *
 * The one object the core sees is dapl_ofi_ops; everything else here is
 * hidden inside the provider library.
 *
 * Design, driven by libfabric 1.17 tcp (see LIBFABRIC-TCP-1.17.md):
 *  - Every posted request owns a slot in its endpoint queue (send queue or
 *    receive queue), preallocated to the queue's depth.  libfabric always
 *    gets FI_COMPLETION and the slot as op_context; an unsignalled request's
 *    successful completion is swallowed here.  Slots retire strictly in
 *    posting order (tcp completes a read after later operations), and a
 *    retired slot with something to report goes on its CQ's ready list,
 *    where cq_poll picks it up.  A slot is free again once cq_poll has
 *    handed it out (or at retirement when there is nothing to report).
 *  - Each queue is protected by the lock of the CQ it completes to, so a
 *    post takes one lock and cq_poll takes one lock.
 *  - A fid_ep lives for one connection attempt.  Whenever the attempt ends
 *    (refused, broken, disconnected by either side) it is closed at once:
 *    tcp writes flush entries for everything still posted during fi_close,
 *    they are drained under the CQ locks, and nothing refers to the closed
 *    fid_ep afterwards.
 *  - cm_get_event first reads every CQ of the device (this is what drives
 *    tcp's data progress and its disconnect detection), then returns
 *    synthesised events, then EQ events.
 *  - An SRQ is an fi_srx_context with its own slots (ofi_srq.c).  A
 *    libfabric completion does not say which endpoint took a receive from
 *    it, so each endpoint on an SRQ binds its receives to a private
 *    libfabric CQ (an ofi_subcq) that its recv CQ reads along with its own.
 *  - A PD is a libfabric domain of its own: keys are domain-wide in
 *    libfabric, and an incoming RDMA Read or Write is checked against the
 *    registrations of the target endpoint's domain only, so this is what
 *    keeps a peer of an endpoint in one PD out of another PD's memory.
 *    The first PD takes the device's domain; others open their own.  A
 *    CQ is opened in the device's domain, so an endpoint of another
 *    domain completes through a sub-CQ of its domain (an ofi_subcq shared
 *    by the endpoints of that domain on that CQ), read along with it.
 *  - The progress thread sleeps on the wait fds of every CQ and reads
 *    every CQ each time it wakes: that is what places RMA target data,
 *    answers Reads and notices disconnects.  A CQ the consumer spins on
 *    (driven: many empty polls between two looks of the thread) moves
 *    its own endpoints' data in cq_poll, so its fds, and those of a
 *    partner CQ all of whose endpoints are on it, stay registered but
 *    quiet, and the thread does not wake on every message (ofi_dev.c,
 *    "driven CQs").  Every other CQ wakes it at its first arrival; a
 *    driven CQ the consumer stops polling is taken back at the thread's
 *    next look, at the latest after the tick (DAPL_OFI_TICK_MS).
 *
 * Lock order: dev->lock, then CQ locks (lower address first), then
 * dev->quiet_lock; srq->lock is taken alone. */
#ifndef PROVIDERS_OFI_OFI_H
#define PROVIDERS_OFI_OFI_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <netinet/in.h>

#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_eq.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_rma.h>

#include "transport.h"
#include "conn_events.h"

/* The transport's ops table: the only symbol the core uses. */
extern const struct udapl_transport_ops dapl_ofi_ops;

#pragma GCC visibility push(hidden)

#define OFI_MAX_SGE 4            /* tcp iov_limit */
#define OFI_CM_DATA_MAX 256      /* FI_OPT_CM_DATA_SIZE; tcp 1.17 does not check it */
#define OFI_QUEUE_MAX 1024       /* tx/rx size asked of libfabric (tcp's tx maximum) */
#define OFI_READS_MAX 128        /* reported max_ird/max_ord: reads are software */
#define OFI_BUSY_POLLS 8         /* empty polls in a row that mean 'the consumer spins here' */
#define OFI_TICK_MS 2            /* a driven CQ nobody polls any more is taken back
                                    after this at the latest (DAPL_OFI_TICK_MS, 0: never) */
#define OFI_PEER_TIMEOUT_MS 30000 /* a peer that acknowledges nothing for this
                                    long is gone (DAPL_OFI_PEER_TIMEOUT_MS) */
#define OFI_HANDSHAKE_MS 2000    /* a connection request whose bytes stop
                                    coming is cut after this (DAPL_OFI_HANDSHAKE_MS) */

/* ---- requests -------------------------------------------------------------- */

enum ofi_slot_state {
	OFI_SLOT_FREE,
	OFI_SLOT_HELD,    /* not yet given to libfabric: no fid_ep yet, or fenced */
	OFI_SLOT_POSTED,  /* libfabric has it */
	OFI_SLOT_DONE,    /* completed, waiting for earlier slots to retire */
	OFI_SLOT_READY,   /* on the CQ's ready list */
};

struct ofi_queue;

struct ofi_slot {
	uint64_t context;
	struct ofi_queue *q;            /* NULL for an SRQ's slot */
	struct dapl_tsrq *srq;
	struct ofi_slot *next;          /* CQ ready list */
	uint8_t state;                  /* enum ofi_slot_state */
	uint8_t opcode;                 /* enum dapl_twc_opcode */
	uint8_t niov;
	bool signaled;
	bool fence;
	uint8_t status;                 /* enum dapl_twc_status */
	uint32_t byte_len;              /* sends/RDMA: posted length; recvs: arrived */
	int vendor_err;
	uint64_t owner;                 /* SRQ slots: the ep that took it */
	uint32_t rkey;
	uint64_t raddr;
	/* The segments are not kept here: libfabric copies them when it
	 * takes the request, so only a held slot needs them (its queue's
	 * held[]).  Kept in every slot they were more than half of an
	 * endpoint's memory. */
};

/* A request's segments in libfabric's terms. */
struct ofi_sgl {
	struct iovec iov[OFI_MAX_SGE];
	void *desc[OFI_MAX_SGE];
};

/* A send or receive queue.  Indices grow without bound (mod 2^32) and
 * select slots modulo depth:
 *   head    oldest slot not yet free
 *   retire  oldest slot not yet retired (head <= retire)
 *   submit  oldest slot not yet given to libfabric (retire <= submit)
 *   tail    next slot to allocate (submit <= tail, tail - head <= depth)
 * Everything is protected by cq->lock. */
struct ofi_queue {
	struct dapl_tcq *cq;
	struct dapl_tep *ep;            /* NULL once the ep is gone (zombie) */
	bool is_send;
	uint32_t depth, max_sge;
	uint32_t head, retire, submit, tail;
	uint32_t nready;                /* slots on the CQ's ready list */
	uint32_t reads;                 /* RDMA Reads posted and not completed */
	struct ofi_queue *zombie_next;
	/* the segments of held slots (not yet given to libfabric), at the
	 * slot's index; made when the first is held */
	struct ofi_sgl *held;
	struct ofi_slot slots[];
};

/* ---- objects --------------------------------------------------------------- */

struct dapl_tcq {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;
	struct fid_cq *fcq;
	int fcq_fd;                     /* libfabric's wait fd (in dev->epfd) */
	int event_fd;                   /* what cq_wait_fd returns */
	bool armed;
	uint32_t depth;
	int users;                      /* queues of live endpoints */
	struct ofi_slot *ready_head, *ready_tail;
	struct ofi_queue *zombies;      /* queues of destroyed eps with ready slots */
	struct ofi_subcq *subs;         /* private CQs of the SRQ eps receiving here */
	/* cq_poll calls that found nothing, and as many when the progress
	 * thread looked last (cq->lock) */
	uint32_t empty_polls, empty_seen;
	pthread_t poller;               /* the thread that polled it empty last (cq->lock) */
	/* dev->quiet_lock: the consumer spins here; its fds listen in
	 * dev->epfd; endpoints on it; the other CQs of its endpoints */
	bool driven, fds_on;
	int eps;
	bool fired;                     /* its fds fired (dev->lock, ofi_event.c) */
	uint64_t polled_ns;             /* a consumer's last cq_poll (cq->lock) */
	struct ofi_cqlink *links;
	int nlinks, links_cap;
};

/* One other CQ of a CQ's endpoints, and how many endpoints use both. */
struct ofi_cqlink {
	struct dapl_tcq *cq;
	int eps;
};

/* A libfabric CQ read along with a dapl_tcq's own (see the top): the
 * private receive CQ of an endpoint on an SRQ (ep set), or the CQ of
 * another PD's domain, shared by that domain's endpoints (ep NULL). */
struct ofi_subcq {
	struct fid_cq *fcq;
	int fd;
	struct dapl_tep *ep;
	struct fid_domain *domain;
	int refs;                       /* endpoints bound to it (dev->lock) */
	struct ofi_subcq *next;         /* cq->subs (dev->lock and cq->lock) */
};

enum ofi_ep_state {
	OFI_EP_IDLE,         /* no fid_ep; receives are held */
	OFI_EP_CONNECTING,   /* fid_ep made, connect or accept issued */
	OFI_EP_CONNECTED,
	OFI_EP_DOWN,         /* the attempt ended; fid_ep closed, posts flush */
};

struct dapl_tep {
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	struct dapl_tcq *scq, *rcq;
	/* the CQs of pd's domain on scq and rcq; NULL: the CQ's own */
	struct ofi_subcq *ssub, *rsub;
	struct ofi_queue *sq, *rq;      /* rq NULL on an SRQ */
	struct dapl_tsrq *srq;
	struct ofi_subcq *sub;          /* on an SRQ: where its receives complete */
	uint64_t owner;                 /* the core's cookie (dapl_twc.owner) */
	/* fep and state change with dev->lock and both CQ locks held; posts
	 * read them under their CQ's lock. */
	struct fid_ep *fep;
	enum ofi_ep_state state;
	bool active;                    /* this attempt was a connect */
	bool faulted;                   /* a DTO failed with a real error */
	bool have_addrs;
	struct sockaddr_storage local, peer;
	/* its place in dev->connq (dev->lock) */
	struct dapl_conn_event_slot cev;
};

struct dapl_tconn {
	struct dapl_tlisten *listener;
	struct fi_info *info;           /* FI_CONNREQ's, with the handle */
	struct dapl_tconn *next;        /* listener->conns (dev->lock) */
	struct dapl_tconn *qnext;       /* dev->reqq until reported (dev->lock) */
	struct sockaddr_storage peer;
	size_t pdata_len;
	uint8_t pdata[OFI_CM_DATA_MAX];
};

/* After unlisten, a listener with unanswered requests lingers (dead) until
 * the last is accepted or rejected: tcp needs the fid_pep for that.  A
 * dead listener refuses new requests itself and never reports them. */
struct dapl_tlisten {
	struct dapl_tdev *dev;
	struct fid_pep *pep;
	uint16_t port;
	bool dead;
	struct dapl_tconn *conns;       /* unanswered requests */
	struct dapl_tlisten *next;
};

/* A shared receive queue over fi_srx_context.  Its slots complete on the
 * CQ of whichever ep received; the state of a slot and the counters are
 * atomics, so posting takes only srq->lock and cq_poll only its CQ's. */
struct dapl_tsrq {
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	pthread_mutex_t lock;           /* posting */
	struct fid_ep *srx;
	uint32_t cap, max_wr, max_sge;
	uint32_t cursor;
	uint32_t inuse;                 /* atomic: slots not free */
	uint32_t avail;                 /* atomic: posted and not completed */
	uint32_t limit;                 /* atomic: armed low watermark, 0 off */
	bool limit_hit;                 /* atomic: SRQ_LIMIT to report */
	int users;                      /* eps on it (dev->lock) */
	bool dead;                      /* destroyed; slots still on CQ lists */
	struct dapl_tsrq *next;         /* dev->srqs (dev->lock) */
	struct ofi_slot slots[];
};

struct dapl_tpd {
	struct dapl_tdev *dev;
	struct fid_domain *domain;      /* dev->domain, or its own */
};

struct dapl_tmr {
	struct dapl_tdev *dev;
	struct fid_mr *fmr;
	uint64_t addr, len;
};

struct dapl_tmw {
	struct dapl_tpd *pd;
	struct fid_mr *fmr;             /* the bound range, NULL when unbound */
};

struct dapl_tdev {
	pthread_mutex_t lock;
	pthread_mutex_t progress_lock;  /* libfabric CQ reads, one at a time (ofi_cq.c) */
	pthread_mutex_t quiet_lock;     /* driven CQs (ofi_dev.c); taken last */
	uint64_t tick_ns;               /* DAPL_OFI_TICK_MS, 0 off */
	unsigned peer_timeout_ms;       /* DAPL_OFI_PEER_TIMEOUT_MS, 0: the kernel's */
	int sock_hint;                  /* the last connection's socket (sock.h) */
	bool tick_set;                  /* timer_fd armed (quiet_lock) */
	struct fi_info *info;
	struct fid_fabric *fabric;
	struct fid_domain *domain;
	struct fid_eq *eq;
	int eq_fd;
	int epfd;                       /* progress fd: EQ, CQs, notify_fd, timer_fd, connq */
	int notify_fd;                  /* eventfd: an SRQ limit, or more to do */
	int timer_fd;                   /* the next look at driven CQs (tick_ns) */
	/* the IA's address, AF_INET or AF_INET6 (port 0): every listener
	 * and every connection's fid_ep is bound to it */
	struct sockaddr_storage addr;
	char prov[32];
	char name[64];
	char vendor[64];
	char rma_hole[320];             /* dev_query's provider-specific text */

	struct dapl_tcq **cqs;          /* every CQ, for the progress pump */
	int ncqs, cqs_cap;
	/* room for the EQ and every CQ and sub-CQ: the fi_trywait list,
	 * made by each try_wait of the CQs whose fds listen (ofi_event.c) */
	struct fid **wait_fids;
	int wait_cap;

	struct fi_info *info_srx;       /* info, for eps on an SRQ */
	struct dapl_tlisten *listeners;

	/* Listeners have an EQ and a thread of their own, and a watchdog
	 * (ofi_listen.c).  The watch_lock fields are the watchdog's view of
	 * the listener thread; it takes no other lock. */
	struct fid_eq *leq;
	int leq_fd;
	int lstop_fd;                   /* eventfd: the listener threads end */
	int watch_fd;                   /* timerfd: a listener call overran */
	bool linit;                     /* ofi_listen_init ran */
	bool lthreads;                  /* started (dev->lock) */
	pthread_t lthread, wthread;
	pthread_mutex_t watch_lock;
	pthread_cond_t watch_cond;      /* lended changed */
	int ltid;                       /* the listener thread (watch_lock) */
	bool lin_call, lended;          /* watch_lock */
	uint64_t lcall_ns;              /* when lin_call began (watch_lock) */
	uint64_t handshake_ns;          /* DAPL_OFI_HANDSHAKE_MS */
	uint8_t *lports;                /* bitmap of listening ports (watch_lock) */
	unsigned long cut;              /* handshakes the watchdog ended */
	/* requests read by the listener thread, not yet reported (dev->lock) */
	struct dapl_tconn *reqq_head, *reqq_tail;
	struct dapl_tsrq *srqs;
	/* the events we make up ourselves (a local disconnect's); dev->lock */
	struct dapl_conn_events connq;
	bool fatal;                     /* DEVICE_FATAL reported */
	/* cm_get_event's last call handed out an event: its CQs were read
	 * just before, so the next call (the core's, straight after) starts
	 * with the events instead of reading every CQ again */
	bool handed_out;
	int tpd;                        /* DAPL_TPD_* its pumps found since
					 * progress_data asked (dev->lock) */
	bool domain_taken;              /* a PD uses dev->domain (dev->lock) */
	bool own_keys;                  /* registrations get keys we pick */

	/* buffers of the event cm_get_event returned last */
	_Alignas(struct fi_eq_cm_entry)
	uint8_t eq_buf[sizeof(struct fi_eq_cm_entry) + 2 * OFI_CM_DATA_MAX];
	uint8_t err_buf[2 * OFI_CM_DATA_MAX];
	uint8_t pdata[OFI_CM_DATA_MAX];
};

/* ---- ofi_cq.c ---------------------------------------------------------------- */

int ofi_cq_create(struct dapl_tdev *dev, uint32_t depth, struct dapl_tcq **cq);
int ofi_cq_destroy(struct dapl_tcq *cq);
int ofi_cq_wait_fd(struct dapl_tcq *cq);
int ofi_cq_wait_more_fds(struct dapl_tcq *cq, int *fds, int max);
void ofi_cq_disarm(struct dapl_tcq *cq);
int ofi_cq_arm(struct dapl_tcq *cq, int solicited_only);
void ofi_cq_ack(struct dapl_tcq *cq);
int ofi_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max);

/* cq->lock held: reads libfabric's CQ dry, completing slots. */
void ofi_cq_drain(struct dapl_tcq *cq);
/* cq->lock held: puts s on the ready list. */
void ofi_cq_push_ready(struct dapl_tcq *cq, struct ofi_slot *s);
/* cq->lock held: wakes an armed waiter if anything is ready. */
void ofi_cq_kick(struct dapl_tcq *cq);
/* cq->lock held: frees zombie queues with nothing left on the ready list. */
void ofi_cq_sweep(struct dapl_tcq *cq);

/* Locks the CQs of ep (one lock when they are the same CQ). */
void ofi_ep_lock_cqs(struct dapl_tep *ep);
void ofi_ep_unlock_cqs(struct dapl_tep *ep);

/* Queues, cq->lock held for all but alloc/free. */
struct ofi_queue *ofi_queue_alloc(struct dapl_tcq *cq, struct dapl_tep *ep,
				  bool is_send, uint32_t depth,
				  uint32_t max_sge);
/* The ep is gone: frees q, or leaves it to the CQ as a zombie until its
 * ready slots have been polled. */
void ofi_queue_release(struct ofi_queue *q);
/* Claims the next slot, or NULL when the queue is full. */
struct ofi_slot *ofi_queue_claim(struct ofi_queue *q);
/* Gives held slots to libfabric (in order, respecting fences). */
void ofi_queue_submit(struct ofi_queue *q);
/* Marks s complete and retires what can be retired. */
void ofi_slot_complete(struct ofi_slot *s, enum dapl_twc_status status,
		       uint32_t byte_len, int vendor_err);
/* Completes every unfinished slot as FLUSHED (the fid_ep is closed). */
void ofi_queue_flush(struct ofi_queue *q);
/* Posts s, its s->niov segments in sgl, on fep; 0 or a negative errno. */
int ofi_slot_post(struct fid_ep *fep, struct ofi_slot *s, struct ofi_sgl *sgl);
/* Keeps s's segments until it is submitted: 0, or -ENOMEM. */
int ofi_slot_hold(struct ofi_queue *q, struct ofi_slot *s,
		  const struct ofi_sgl *sgl);
void ofi_queue_free(struct ofi_queue *q);

/* ---- ofi_ep.c ------------------------------------------------------------------ */

int ofi_ep_create(struct dapl_tpd *pd, struct dapl_tcq *send_cq,
		  struct dapl_tcq *recv_cq, struct dapl_tsrq *srq,
		  const struct dapl_tep_attr *attr, struct dapl_tep **ep);
int ofi_ep_destroy(struct dapl_tep *ep);
int ofi_ep_reset(struct dapl_tep *ep);
int ofi_connect(struct dapl_tep *ep, const struct sockaddr *addr,
		uint16_t port, const void *pdata, size_t len, uint16_t ird,
		uint16_t ord);
int ofi_accept(struct dapl_tconn *conn, struct dapl_tep *ep,
	       const void *pdata, size_t len, uint16_t ird, uint16_t ord);
int ofi_reject(struct dapl_tconn *conn, const void *pdata, size_t len);
int ofi_disconnect(struct dapl_tep *ep);
int ofi_ep_addrs(struct dapl_tep *ep, struct sockaddr_storage *local,
		 struct sockaddr_storage *peer);

/* dev->lock held: the attempt on ep is over; closes its fid_ep, flushes
 * what was posted, state DOWN. */
void ofi_ep_teardown(struct dapl_tep *ep);
/* dev->lock held: fid_ep reached FI_CONNECTED. */
void ofi_ep_established(struct dapl_tep *ep);

/* ---- ofi_post.c ------------------------------------------------------------------ */

int ofi_post_send(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context, unsigned flags);
int ofi_post_recv(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context);
int ofi_post_rdma_write(struct dapl_tep *ep, const struct dapl_tsge *sge,
			int nsge, uint64_t remote_addr, uint32_t rkey,
			uint64_t context, unsigned flags);
int ofi_post_rdma_read(struct dapl_tep *ep, const struct dapl_tsge *sge,
		       int nsge, uint64_t remote_addr, uint32_t rkey,
		       uint64_t context, unsigned flags);

/* ---- ofi_mem.c ------------------------------------------------------------------- */

int ofi_pd_alloc(struct dapl_tdev *dev, struct dapl_tpd **pd);
int ofi_pd_free(struct dapl_tpd *pd);
int ofi_mr_reg(struct dapl_tpd *pd, void *addr, uint64_t len, unsigned access,
	       struct dapl_tmr **mr, uint32_t *lkey, uint32_t *rkey);
int ofi_mr_dereg(struct dapl_tmr *mr);
int ofi_mw_alloc(struct dapl_tpd *pd, struct dapl_tmw **mw);
int ofi_mw_bind(struct dapl_tep *ep, struct dapl_tmw *mw, struct dapl_tmr *mr,
		uint64_t addr, uint64_t len, unsigned access, uint64_t context,
		unsigned flags, uint32_t *rkey);
int ofi_mw_free(struct dapl_tmw *mw);

/* ---- ofi_srq.c ------------------------------------------------------------------- */

int ofi_srq_create(struct dapl_tpd *pd, uint32_t max_wr, uint32_t max_sge,
		   struct dapl_tsrq **srq);
int ofi_srq_destroy(struct dapl_tsrq *srq,
		    void (*discarded)(uint64_t context, void *arg), void *arg);
int ofi_srq_resize(struct dapl_tsrq *srq, uint32_t max_wr);
int ofi_srq_set_limit(struct dapl_tsrq *srq, uint32_t limit);
int ofi_srq_post_recv(struct dapl_tsrq *srq, const struct dapl_tsge *sge,
		      int nsge, uint64_t context);
/* cq->lock held: an SRQ slot completed on cq. */
void ofi_srq_slot_complete(struct dapl_tcq *cq, struct ofi_slot *s,
			   enum dapl_twc_status status, uint32_t byte_len,
			   int vendor_err, uint64_t owner);
/* cq->lock held: cq_poll handed s out. */
void ofi_srq_slot_release(struct ofi_slot *s);
/* dev->lock held: an SRQ whose limit fired, or NULL; frees dead SRQs. */
struct dapl_tsrq *ofi_srq_take_limit(struct dapl_tdev *dev);
void ofi_srq_free_all(struct dapl_tdev *dev);
/* The segments' total length, or -EINVAL (too many, too long). */
int64_t ofi_sge_total(const struct dapl_tsge *sge, int nsge, uint32_t max);
/* The segments in libfabric's terms. */
void ofi_sge_fill(struct ofi_sgl *sgl, const struct dapl_tsge *sge, int nsge);

/* ---- ofi_dev.c ------------------------------------------------------------------- */

int ofi_dev_open(const char *ia_params, struct dapl_tdev **dev, char *why,
		 size_t whylen);
int ofi_dev_query(struct dapl_tdev *dev, struct dapl_tdev_attr *attr);
void ofi_dev_close(struct dapl_tdev *dev);
int ofi_progress_fds(struct dapl_tdev *dev, int *fds, int max);

/* ---- ofi_listen.c ---------------------------------------------------------------- */

int ofi_listen(struct dapl_tdev *dev, uint16_t *port, struct dapl_tlisten **l);
void ofi_unlisten(struct dapl_tlisten *l);
/* dev->lock held: frees l if it is dead and has no request left. */
void ofi_listener_put(struct dapl_tlisten *l);
/* At dev_open: the listeners' EQ and what its threads need. */
int ofi_listen_init(struct dapl_tdev *dev);
/* At dev_close, no lock held: ends the threads, refuses what is left,
 * frees the listeners and their EQ. */
void ofi_listen_fini(struct dapl_tdev *dev);
/* dev->lock held: the oldest request not yet reported, taken off the
 * queue (a dead listener's are refused on the way), or NULL. */
struct dapl_tconn *ofi_reqq_pop(struct dapl_tdev *dev);
/* dev->lock held: takes conn off its listener's list / frees it. */
void ofi_conn_unlink(struct dapl_tconn *conn);
void ofi_conn_free(struct dapl_tconn *conn);

/* dev->lock held: the CQ joins / leaves the progress pump. */
int ofi_dev_add_cq(struct dapl_tdev *dev, struct dapl_tcq *cq);
void ofi_dev_remove_cq(struct dapl_tdev *dev, struct dapl_tcq *cq);
/* dev->lock and cq->lock held: a sub-CQ joins / leaves cq (its reads,
 * the progress fd and fi_trywait). */
int ofi_dev_add_subcq(struct dapl_tdev *dev, struct dapl_tcq *cq,
		      struct ofi_subcq *sub);
void ofi_dev_remove_subcq(struct dapl_tdev *dev, struct dapl_tcq *cq,
			  struct ofi_subcq *sub);
/* cq->lock held: the consumer spins on cq (on), or left it (off). */
void ofi_cq_drive(struct dapl_tcq *cq, bool on);
/* dev->lock held: an endpoint on scq and rcq comes (delta 1) or goes (-1). */
int ofi_dev_link_ep(struct dapl_tdev *dev, struct dapl_tcq *scq,
		    struct dapl_tcq *rcq, int delta);
/* dev->lock held: reads the tick (it woke the thread). */
bool ofi_dev_tick(struct dapl_tdev *dev);
/* dev->lock held, before the thread sleeps: a CQ polled empty
 * OFI_BUSY_POLLS times since the last look, and not armed, is driven;
 * others are not; the tick is armed while any is. */
void ofi_dev_update_busy(struct dapl_tdev *dev);
/* dev->lock held: makes room in wait_fids for every CQ and sub-CQ. */
int ofi_dev_sync_waits(struct dapl_tdev *dev);
/* Makes the progress fd readable (an SRQ limit, or more to do). */
void ofi_dev_notify(struct dapl_tdev *dev);

/* ---- ofi_event.c ----------------------------------------------------------------- */

int ofi_cm_get_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev);
/* What the pumps since the last call found (DAPL_TPD_IDLE: only CQs a
 * consumer polls; DAPL_TPD_PLACED: one nobody polls), for the core's
 * choice of the progress thread's policy (transport.h). */
int ofi_progress_data(struct dapl_tdev *dev, bool will_drain);
/* A consumer that polled a CQ within this long is still polling it. */
#define OFI_ACTIVE_NS 200000u

/* A libfabric return (negative FI_E*) as 0 or a negative errno. */
int ofi_err(ssize_t ret);

/* ---- addresses (ofi_dev.c) ------------------------------------------------------- */

/* The size of an AF_INET or AF_INET6 sockaddr, 0 for another family. */
size_t ofi_sa_len(int family);
/* An address of len bytes that libfabric handed us, into *out when it is
 * a whole IPv4 or IPv6 one (true); else *out is zeroed (false). */
bool ofi_sa_copy(struct sockaddr_storage *out, const void *sa, size_t len);
/* Sets the port of an AF_INET or AF_INET6 address (host order). */
void ofi_sa_set_port(struct sockaddr_storage *ss, uint16_t port);
uint16_t ofi_sa_port(const struct sockaddr_storage *ss);

#pragma GCC visibility pop

#endif
