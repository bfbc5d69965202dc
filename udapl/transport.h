/* The one seam between the uDAPL core (udapl/) and a transport
 * (providers/tcp, iWARP over kernel TCP sockets; providers/ofi over
 * libfabric FI_EP_MSG; providers/verbs over rdma_cm + libibverbs).  See
 * ARCHITECTURE.md for who makes progress on what.
 *
 * The core owns every DAT rule: handles, states, which event goes to which
 * EVD, thresholds and timeouts (including the connect timeout: transports
 * have none they can be trusted with), the private-data header
 * (udapl/wire.h), read-limit arithmetic and DAT return codes.  A transport
 * owns only its library's calls and translates its errors into the small
 * vocabulary below.  A transport includes this header and, for the
 * connection events it makes up itself, udapl/conn_events.h (the queue
 * every transport shares), and nothing else of udapl/; the core never
 * includes <rdma/...> or <infiniband/...>.
 *
 * Conventions for every op:
 *  - Ops return 0 or a negative errno (-ENOMEM, -EINVAL, -EADDRINUSE,
 *    -ECONNREFUSED, -EAGAIN, -ENOSPC, -ENOTCONN, -EOPNOTSUPP ...); the core
 *    maps them to DAT codes.  Ops that can fail for a reason a user must
 *    hear about (open) also fill a `why` text.
 *  - Objects are opaque to the core; it holds the pointers the transport
 *    hands out and never looks inside.
 *  - Unless said otherwise an op may be called from any thread; the core
 *    serialises ops on one endpoint, and the data path (post_*, cq_poll)
 *    takes no transport-wide lock.
 *  - The data path (post_*, cq_poll) allocates nothing.
 *
 * Every provider implements it; test/unit/test_transport.c checks each
 * ops table against it. */
#ifndef UDAPL_TRANSPORT_H
#define UDAPL_TRANSPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct dapl_tdev;     /* an open device: libfabric fabric+domain+EQ, or rdma device + event channel */
struct dapl_tpd;      /* protection domain */
struct dapl_tcq;      /* completion queue with a wait fd */
struct dapl_tep;      /* endpoint / QP; survives reset, reconnects after it */
struct dapl_tsrq;     /* shared receive queue */
struct dapl_tlisten;  /* a listening service point (PSP/RSP) */
struct dapl_tconn;    /* an incoming connection request, until accepted or rejected */
struct dapl_tmr;      /* a memory registration */
struct dapl_tmw;      /* a memory window (or its emulation) */

/* ---- device ------------------------------------------------------------- */

#define DAPL_TDEV_SPECIFIC_MAX 4

struct dapl_tdev_attr {
	char name[64];                  /* e.g. "rxe0", "tcp;ofi_rxm" */
	char vendor[64];
	struct sockaddr_storage addr;   /* the local address consumers connect to */
	uint32_t max_qp, max_qp_wr, max_cq, max_cqe, max_sge, max_srq;
	/* Local segments an RDMA Read may scatter into (0: max_sge).  iWARP
	 * devices often allow one: more is not refused by every device, the
	 * data then silently lands in the first segment only. */
	uint32_t max_sge_rd;
	uint32_t max_srq_wr, max_mr, max_mw, max_pd, max_inline;
	uint64_t max_mr_size, max_msg_size, max_rdma_size;
	uint16_t max_ird;               /* RDMA Reads in flight a QP accepts (max_qp_rd_atom) */
	uint16_t max_ord;               /* RDMA Reads in flight a QP issues (max_qp_init_rd_atom) */
	/* Raw private-data bytes each CM message carries; the core subtracts
	 * its header (udapl/wire.h).  Transports must never be handed more. */
	uint16_t max_pdata_connect, max_pdata_accept, max_pdata_reject;
	uint32_t flags;                 /* DAPL_TDEV_* */
	/* What a user of this device must know that no DAT attribute says
	 * (e.g. a hole in the library under the transport), reported as
	 * dat_ia_query's provider_specific_attr (datinfo -v shows them):
	 * name/value strings that live as long as the device. */
	int nspecific;
	struct { const char *name, *value; } specific[DAPL_TDEV_SPECIFIC_MAX];
};

enum {
	DAPL_TDEV_MEMORY_WINDOWS = 1u << 0,  /* real MWs; else emulated by registration */
	/* A bad RDMA target is reported as REMOTE_ACCESS; without it the
	 * connection breaks instead (libfabric tcp, like iWARP). */
	DAPL_TDEV_REMOTE_ACCESS_ERRORS = 1u << 1,
	DAPL_TDEV_SOLICITED_EVENTS = 1u << 2,
	DAPL_TDEV_FENCE = 1u << 3,
	/* DAT 2.0 IB extensions the device can do (dat_extension_op).  On a
	 * transport that negotiates them per connection (tcp: RFC 7306 with
	 * a libdat peer) the flag says the device offers them; ep_extensions
	 * says what one connection can do. */
	DAPL_TDEV_WRITE_IMM = 1u << 4,     /* RDMA Write with immediate data */
	DAPL_TDEV_ATOMICS = 1u << 5,       /* 64-bit fetch-and-add, compare-and-swap */
};

/* ---- connection events ----------------------------------------------------- */

enum dapl_tcm_event_type {
	DAPL_TCM_CONNECT_REQUEST,  /* on a listener: conn is new; pdata is the peer's */
	DAPL_TCM_ESTABLISHED,      /* on an ep: active side's pdata is the accept's */
	DAPL_TCM_REJECTED,         /* on an ep: the peer (or its provider) refused; pdata as sent */
	DAPL_TCM_UNREACHABLE,      /* on an ep: address/route resolution failed */
	/* (a port nobody listens on is REJECTED with no pdata and
	 * status -ECONNREFUSED: the core reports NON_PEER_REJECTED) */
	DAPL_TCM_DISCONNECTED,     /* on an ep: either side ended it */
	DAPL_TCM_CONN_ERROR,       /* on an ep: the handshake broke (peer died, protocol error) */
	DAPL_TCM_DEVICE_FATAL,     /* on the device: it is gone (IA catastrophic) */
	DAPL_TCM_SRQ_LIMIT,        /* on srq: fewer receives posted than its limit */
};

struct dapl_tcm_event {
	enum dapl_tcm_event_type type;
	struct dapl_tep *ep;              /* ESTABLISHED .. CONN_ERROR */
	struct dapl_tlisten *listener;    /* CONNECT_REQUEST */
	struct dapl_tconn *conn;          /* CONNECT_REQUEST */
	const void *pdata;                /* valid until the next cm_get_event */
	size_t pdata_len;                 /* may include transport padding */
	struct sockaddr_storage peer;     /* CONNECT_REQUEST: who asks */
	int status;                       /* negative errno detail, 0 if none */
	struct dapl_tsrq *srq;            /* SRQ_LIMIT */
};

/* ---- work ------------------------------------------------------------------- */

struct dapl_tsge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
	struct dapl_tmr *mr;              /* for transports that need descriptors */
};

enum dapl_twc_status {
	DAPL_TWC_SUCCESS,
	DAPL_TWC_FLUSHED,                 /* ep left CONNECTED with this posted */
	DAPL_TWC_LOCAL_LENGTH,            /* receive buffer too small */
	DAPL_TWC_LOCAL_PROTECTION,
	DAPL_TWC_LOCAL_EP,
	DAPL_TWC_REMOTE_ACCESS,           /* bad rkey / range / privilege at the target */
	DAPL_TWC_REMOTE_OP,
	DAPL_TWC_BAD_RESPONSE,
	DAPL_TWC_RETRY_EXCEEDED,          /* transport gave up: peer unreachable */
	DAPL_TWC_RNR,                     /* receiver not ready, retries exhausted */
	DAPL_TWC_GENERAL,
};

enum dapl_twc_opcode {
	DAPL_TWC_SEND, DAPL_TWC_RECV, DAPL_TWC_RDMA_WRITE, DAPL_TWC_RDMA_READ,
	DAPL_TWC_BIND_MW,
	/* DAT 2.0 extensions.  RDMA_WRITE_IMM completes at the initiator;
	 * RECV_RDMA_IMM is the posted receive a peer's write-with-immediate
	 * consumed (byte_len: the bytes the write placed, no data in the
	 * receive's buffers; imm: the immediate).  A Send carrying an
	 * immediate completes its receive as DAPL_TWC_RECV with
	 * DAPL_TWC_WITH_IMM set.  FETCH_ADD and CMP_SWAP complete at the
	 * initiator once the original 8 bytes are in its buffer. */
	DAPL_TWC_RDMA_WRITE_IMM, DAPL_TWC_RECV_RDMA_IMM,
	DAPL_TWC_FETCH_ADD, DAPL_TWC_CMP_SWAP,
};

enum {  /* dapl_twc.flags */
	DAPL_TWC_WITH_IMM = 1u << 0,      /* imm is valid */
};

struct dapl_twc {
	uint64_t context;                 /* what the core passed at post time */
	/* The owner (dapl_tep_attr.owner) of the endpoint the request
	 * completed on; 0 once that endpoint is destroyed.  This is how a
	 * receive taken from an SRQ names its endpoint. */
	uint64_t owner;
	enum dapl_twc_status status;
	enum dapl_twc_opcode opcode;
	uint32_t byte_len;                /* receives: bytes that arrived */
	int vendor_err;                   /* transport detail, for logs */
	uint32_t imm;                     /* immediate data, host order (DAPL_TWC_WITH_IMM) */
	uint32_t flags;                   /* DAPL_TWC_* flags */
};

enum {
	DAPL_TPOST_SIGNALED = 1u << 0,    /* produce a completion on success too */
	DAPL_TPOST_SOLICITED = 1u << 1,
	DAPL_TPOST_FENCE = 1u << 2,       /* wait for earlier RDMA Reads */
};

enum {  /* access flags for registrations and windows (DAT_MEM_PRIV_*) */
	DAPL_TACCESS_LOCAL_READ = 1u << 0,
	DAPL_TACCESS_LOCAL_WRITE = 1u << 1,
	DAPL_TACCESS_REMOTE_READ = 1u << 2,
	DAPL_TACCESS_REMOTE_WRITE = 1u << 3,
	DAPL_TACCESS_REMOTE_ATOMIC = 1u << 4,   /* DAT_IB_MEM_PRIV_REMOTE_ATOMIC */
};

enum dapl_tatomic_op {
	DAPL_TATOMIC_FETCH_ADD,           /* *remote += add; old value returned */
	DAPL_TATOMIC_CMP_SWAP,            /* if *remote == compare: *remote = swap; old value returned */
};

struct dapl_tep_attr {
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_send_sge, max_recv_sge;
	uint32_t max_inline;
	uint64_t owner;                   /* the core's cookie, returned in dapl_twc.owner */
};

/* ---- the ops table --------------------------------------------------------- */

struct udapl_transport_ops {
	size_t size;                      /* sizeof(struct udapl_transport_ops): lets the table grow */
	const char *name;                 /* "ofi", "verbs" */

	/* Opens the device named by dat.conf's ia_params (provider-specific
	 * syntax).  On failure fills why with a sentence a user can act on
	 * ("netdev ib0 has no IP address").  query may be called any time. */
	int (*dev_open)(const char *ia_params, struct dapl_tdev **dev,
			char *why, size_t whylen);
	int (*dev_query)(struct dapl_tdev *dev, struct dapl_tdev_attr *attr);
	void (*dev_close)(struct dapl_tdev *dev);

	/* Connection events.  The core's progress thread (one per IA) polls
	 * the fds progress_fds reports (readable = call cm_get_event until
	 * -EAGAIN); a transport that needs driving to notice disconnects
	 * (libfabric tcp notices them only while its CQs are read) does that
	 * inside cm_get_event and keeps what it reads for cq_poll.  The event
	 * and its pdata stay valid until the next cm_get_event on dev. */
	int (*progress_fds)(struct dapl_tdev *dev, int *fds, int max);
	int (*cm_get_event)(struct dapl_tdev *dev, struct dapl_tcm_event *ev);

	/* Listening.  port 0 = pick one, reported in *port.  -EADDRINUSE
	 * when another listener has it.  After unlisten, conns already
	 * reported stay valid until accepted or rejected; later requests are
	 * refused as if nobody listened and never reported. */
	int (*listen)(struct dapl_tdev *dev, uint16_t *port,
		      struct dapl_tlisten **l);
	void (*unlisten)(struct dapl_tlisten *l);

	/* Protection domain, memory. */
	int (*pd_alloc)(struct dapl_tdev *dev, struct dapl_tpd **pd);
	int (*pd_free)(struct dapl_tpd *pd);
	int (*mr_reg)(struct dapl_tpd *pd, void *addr, uint64_t len,
		      unsigned access, struct dapl_tmr **mr, uint32_t *lkey,
		      uint32_t *rkey);
	int (*mr_dereg)(struct dapl_tmr *mr);
	/* Windows: bind is posted on ep and completes on its send CQ with
	 * opcode BIND_MW; *rkey is the new remote key (the old one dies).
	 * len 0 unbinds.  Transports without windows emulate with a
	 * registration of the range and complete the bind at once. */
	int (*mw_alloc)(struct dapl_tpd *pd, struct dapl_tmw **mw);
	int (*mw_bind)(struct dapl_tep *ep, struct dapl_tmw *mw,
		       struct dapl_tmr *mr, uint64_t addr, uint64_t len,
		       unsigned access, uint64_t context, unsigned flags,
		       uint32_t *rkey);
	int (*mw_free)(struct dapl_tmw *mw);

	/* Completion queues.  wait_fd becomes readable when arm was called
	 * and a completion arrived since; the core then calls ack before
	 * re-arming (verbs: get + ack the CQ event).  The order that never
	 * loses a wakeup: arm, poll once more, then sleep on the fd. */
	int (*cq_create)(struct dapl_tdev *dev, uint32_t depth,
			 struct dapl_tcq **cq);
	int (*cq_destroy)(struct dapl_tcq *cq);
	int (*cq_wait_fd)(struct dapl_tcq *cq);
	int (*cq_arm)(struct dapl_tcq *cq, int solicited_only);
	void (*cq_ack)(struct dapl_tcq *cq);
	/* Up to max completions; returns the count (0 = empty) or a negative
	 * errno.  Per endpoint, send-side completions come back in the order
	 * they were posted, as DAT requires: a transport whose library
	 * reorders (libfabric tcp completes a read after later writes) holds
	 * the later ones back.  Every posted request completes exactly once,
	 * FLUSHED if need be, unsignalled ones included when they fail. */
	int (*cq_poll)(struct dapl_tcq *cq, struct dapl_twc *wc, int max);

	/* Endpoints.  An ep is created unconnected and may be connected,
	 * disconnected, reset and connected again (a transport that cannot
	 * reuse its endpoint makes a new one inside reset).  ep_destroy and
	 * ep_reset complete what is still posted as FLUSHED before they
	 * return (still pollable after destroy) and drop the ep's
	 * undelivered events. */
	int (*ep_create)(struct dapl_tpd *pd, struct dapl_tcq *send_cq,
			 struct dapl_tcq *recv_cq, struct dapl_tsrq *srq,
			 const struct dapl_tep_attr *attr,
			 struct dapl_tep **ep);
	int (*ep_destroy)(struct dapl_tep *ep);
	int (*ep_reset)(struct dapl_tep *ep);
	/* Active side: starts connecting; the outcome arrives as an event.
	 * pdata (header included) fits max_pdata_connect.  ird/ord go to the
	 * transport where it negotiates them too (rdma_cm
	 * responder_resources / initiator_depth). */
	int (*connect)(struct dapl_tep *ep, const struct sockaddr *addr,
		       uint16_t port, const void *pdata, size_t len,
		       uint16_t ird, uint16_t ord);
	/* Passive side: binds conn to ep and accepts; ESTABLISHED follows on
	 * ep.  reject ends conn; both consume conn. */
	int (*accept)(struct dapl_tconn *conn, struct dapl_tep *ep,
		      const void *pdata, size_t len, uint16_t ird,
		      uint16_t ord);
	int (*reject)(struct dapl_tconn *conn, const void *pdata, size_t len);
	/* Starts a disconnect; DISCONNECTED follows, and every work request
	 * still posted completes FLUSHED.  Also ends an attempt still
	 * connecting (DISCONNECTED, the one terminal event of the attempt);
	 * -ENOTCONN, nothing reported, when there is no attempt to end. */
	int (*disconnect)(struct dapl_tep *ep);
	int (*ep_addrs)(struct dapl_tep *ep, struct sockaddr_storage *local,
			struct sockaddr_storage *peer);

	/* Posting.  -ENOSPC when the queue is full: the transport enforces
	 * the depth it was created with even where its library does not.  A
	 * request holds its place until cq_poll has handed out its
	 * completion (an unsignalled success: until it completes). */
	int (*post_send)(struct dapl_tep *ep, const struct dapl_tsge *sge,
			 int nsge, uint64_t context, unsigned flags);
	int (*post_recv)(struct dapl_tep *ep, const struct dapl_tsge *sge,
			 int nsge, uint64_t context);
	int (*post_rdma_write)(struct dapl_tep *ep, const struct dapl_tsge *sge,
			       int nsge, uint64_t remote_addr, uint32_t rkey,
			       uint64_t context, unsigned flags);
	int (*post_rdma_read)(struct dapl_tep *ep, const struct dapl_tsge *sge,
			      int nsge, uint64_t remote_addr, uint32_t rkey,
			      uint64_t context, unsigned flags);

	/* Shared receive queues; set_limit arms the low-watermark event
	 * (SRQ_LIMIT from cm_get_event, once per arming; limit 0 disarms).
	 * An ep on an SRQ takes no post_recv of its own; a receive it takes
	 * from the SRQ completes on its recv CQ with its owner.  srq_destroy
	 * (-EBUSY while eps use it) discards what is still posted without
	 * completions (an SRQ has no CQ of its own), calling discarded with
	 * each such receive's context so the core can let go of it;
	 * receives already completed are still handed out by cq_poll. */
	int (*srq_create)(struct dapl_tpd *pd, uint32_t max_wr,
			  uint32_t max_sge, struct dapl_tsrq **srq);
	int (*srq_destroy)(struct dapl_tsrq *srq,
			   void (*discarded)(uint64_t context, void *arg),
			   void *arg);
	int (*srq_resize)(struct dapl_tsrq *srq, uint32_t max_wr);
	int (*srq_set_limit)(struct dapl_tsrq *srq, uint32_t limit);
	int (*srq_post_recv)(struct dapl_tsrq *srq,
			     const struct dapl_tsge *sge, int nsge,
			     uint64_t context);

	/* Added later (the core looks at size first). */
	/* Optional (NULL or beyond size: not offered).  The core calls it with on before an
	 * accept or a disconnect after which it calls cm_get_event until
	 * -EAGAIN itself, in the same thread under the IA lock, and with off
	 * once done: events the transport queues in that thread meanwhile
	 * need not wake the progress thread. */
	void (*cm_self_pump)(struct dapl_tdev *dev, bool on);
	/* Optional.  More fds a consumer asleep on cq (armed) sleeps on
	 * besides cq_wait_fd, at most max; when one fires the core polls
	 * the CQ, and the poll finds what it signalled (ofi: libfabric's
	 * own wait fds, so the consumer reads an arrival itself instead of
	 * waiting for the progress thread to hand it over).  Polled only
	 * while someone waits: never kept in an epoll set. */
	int (*cq_wait_more_fds)(struct dapl_tcq *cq, int *fds, int max);
	/* Optional.  The consumer that armed cq sleeps on it no more (its
	 * dat_evd_wait returned, however it woke: it may have read the
	 * completion itself).  A transport that treats an armed CQ as
	 * watched (ofi: the progress thread keeps it in its set and hands
	 * over every completion) may stop now; a later wait arms again. */
	void (*cq_disarm)(struct dapl_tcq *cq);

	/* Optional: the DAT 2.0 IB extensions (dat_extension_op).  NULL (or
	 * beyond size) = not offered; the core answers DAT_NOT_IMPLEMENTED.
	 * ep_extensions: DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS as this
	 * connected endpoint can do them now (negotiated with the peer where
	 * the transport negotiates; 0 when unconnected).  Posts return
	 * -EOPNOTSUPP when the connection cannot do the operation. */
	unsigned (*ep_extensions)(struct dapl_tep *ep);
	/* RDMA Write of sge to remote_addr/rkey followed by the immediate:
	 * consumes a posted receive at the target (DAPL_TWC_RECV_RDMA_IMM);
	 * completes here as DAPL_TWC_RDMA_WRITE_IMM. */
	int (*post_rdma_write_imm)(struct dapl_tep *ep,
				   const struct dapl_tsge *sge, int nsge,
				   uint64_t remote_addr, uint32_t rkey,
				   uint32_t imm, uint64_t context,
				   unsigned flags);
	/* 64-bit atomic on the 8-byte-aligned remote_addr (rkey needs
	 * DAPL_TACCESS_REMOTE_ATOMIC); the original value lands in result
	 * (one 8-byte sge, local-write access).  add_or_compare is the
	 * addend (FETCH_ADD) or the comparand (CMP_SWAP); swap is ignored
	 * for FETCH_ADD.  Completes as DAPL_TWC_FETCH_ADD / CMP_SWAP. */
	int (*post_atomic)(struct dapl_tep *ep, enum dapl_tatomic_op op,
			   const struct dapl_tsge *result,
			   uint64_t remote_addr, uint32_t rkey,
			   uint64_t add_or_compare, uint64_t swap,
			   uint64_t context, unsigned flags);

	/* Optional.  A transport whose cm_get_event only notes the endpoints
	 * whose data wants driving (tcp: the sockets that fired) drives them
	 * here, so that the IA lock is not held while an endpoint's data is
	 * read and placed, nor while its lock is waited for; one that moves
	 * data in cm_get_event (ofi) says here what that found.  The core calls
	 * it without the IA lock, right after it called cm_get_event until
	 * -EAGAIN: the progress thread, and a consumer waiting on a
	 * connection or CR EVD that runs that pass itself.  will_drain: the
	 * caller calls cm_get_event until -EAGAIN again whenever the result
	 * has DAPL_TPD_EVENTS, so connection events its drives queue need
	 * not wake anybody.  Returns DAPL_TPD_* bits.  With it, the core's
	 * thread runs SCHED_FIFO while awake where allowed (DAT_PROGRESS_RT,
	 * cm.c): only a transport that says when a busy poller did its work
	 * (DAPL_TPD_IDLE) can have a thread that preempts at every wake-up. */
	int (*progress_data)(struct dapl_tdev *dev, bool will_drain);
};

/* progress_data's result */
#define DAPL_TPD_EVENTS 1       /* its drives queued connection events */
/* It drove endpoints and each had been read by its consumer already: a
 * consumer is busy with them, and a progress thread woken for them only
 * takes that consumer's CPU.  The core's thread lets such wake-ups wait
 * for the consumer to yield (SCHED_BATCH) until a pass has DAPL_TPD_PLACED. */
#define DAPL_TPD_IDLE 2
/* It read and placed what nobody else would have (a consumer that polls
 * memory, or sleeps elsewhere): wake-ups are wanted promptly again. */
#define DAPL_TPD_PLACED 4

/* For transports too (util.c): CLOCK_MONOTONIC now, in ns. */
uint64_t dapl_now_ns(void);

/* For transports too (util.c): one line, like libdat's own messages,
 * only when DAT_DBG_TYPE has bit (not set by default).  DAPL_DBG_CM:
 * why a connection attempt or a connection ended, in the transport's own
 * words. */
#define DAPL_DBG_CM 0x8         /* OpenFabrics' DAPL_DBG_TYPE_CM */
void dapl_dbg(unsigned long bit, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif
