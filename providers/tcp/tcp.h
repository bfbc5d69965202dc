/* The native TCP transport: iWARP (MPA/DDP/RDMAP, tcp_wire.h) over kernel
 * TCP sockets, with every check on what a peer may touch made here.
 *
 * Files, split the way the protocol is layered, so that one direction is
 * read in one file:
 *   tcp_wire.h    the wire codec: MPA, DDP and RDMAP headers built and
 *                 read, no I/O
 *   tcp_mpa.c     the MPA handshake: connect, request, reply and RTR,
 *                 accept and reject, an accepted connection's request
 *   tcp_rx.c      receive: FPDUs read, checked and placed, Read and
 *                 Atomic Requests answered (queued for tcp_tx.c), Sends
 *                 held for receives, the peer's acks
 *   tcp_tx.c      transmit: posts, framing, batching into sendmsg, our
 *                 acks and Terminates
 *   tcp_wr.c      what both directions share of a request: its segments,
 *                 its completion
 *   tcp_ep.c      an endpoint's life, and tcp_ep_drive: the handshake,
 *                 then receive, then transmit
 *   tcp_listen.c  listeners, accept4, the half-open bounds
 *   tcp_dev.c     the device, the progress epoll and its tick,
 *                 cm_get_event
 *   tcp_cq.c, tcp_srq.c, tcp_mem.c   CQs, SRQs, PDs/STags/windows
 *
 * Design:
 *  - One socket per connected endpoint, non-blocking.  Everything about an
 *    endpoint's data path (its queues, its transmit and receive state,
 *    the socket) is under ep->lock.  Whoever holds it "drives" the
 *    endpoint: reads what arrived and places it, writes what waits.
 *  - Drivers: a post drives transmission in the caller's thread; cq_poll
 *    drives every endpoint of the CQ (trylock: someone else driving is as
 *    good) unless completions are waiting already, or, above
 *    TCP_CQ_DRIVE_ALL endpoints, those the CQ's epoll set reports (every
 *    poll counts as a drive of all of them then); a consumer asleep in
 *    dat_evd_wait sleeps on the CQ's epoll fd, which takes the sockets of
 *    its endpoints when the consumer arms it; the core's progress thread
 *    (cm_get_event) drives the endpoints nobody else does, waiting for
 *    their lock.  An endpoint a consumer keeps driving (or busy-polls)
 *    stays in the progress epoll edge-triggered ("excluded"), so an
 *    arrival wakes the thread once, and the core batches the thread
 *    while such wake-ups find the work done; an arrival nobody read, on
 *    an endpoint whose CQs nobody polled for TCP_GONE_NS, makes it the
 *    thread's again (tcp_dev.c, ep_service).  No timer hands it back.
 *  - Acks: a consumer's poll that was not part of a busy loop (none
 *    within TCP_BUSY_NS before it) sends the placement report it leaves
 *    owed at once; a busy poller's rides on its reply or its next poll,
 *    and the thread sends any it finds owed; a sender that drives
 *    TCP_NUDGE_DRIVES times without reading while a report is due sends
 *    a bare one of its own, which wakes the peer's thread.
 *  - Receive: data goes straight from the socket to its place (the posted
 *    receive, the RDMA Write target, the Read sink), with the trailer and
 *    the next header read behind it into a staging buffer in the same
 *    recvmsg; headers and small messages come through that buffer.
 *  - Completions go, in the order they happen, into the CQ's ring of
 *    dapl_twc (cq->lock, taken after ep->lock).  Its size covers every
 *    queue that completes there, so a completion always has room.
 *  - Placement: a Send lands in the posted receive (or, when none is
 *    posted yet, in a bounded buffer until one is); an RDMA Write or Read
 *    Response lands where its STag and tagged offset say, after the STag,
 *    PZ, rights and range checks (tcp_mem.c).  A violation sends a
 *    Terminate and ends the connection with nothing placed.
 *  - Delivery: with a libdat peer a Send or RDMA Write completes once the
 *    peer reports it placed (tcp_wire.h: the count in the CRC field);
 *    with another iWARP peer once the socket has taken it.
 *  - RFC 7306, with a libdat peer that announced it (ep->ext_7306): a
 *    write with immediate is a Write and an Immediate Data message that
 *    takes a receive like a Send (held like one too); an atomic goes
 *    like a Read Request (ORD, reads_out) and its answer comes in order
 *    with the Read Responses; the target runs it at once, under the STag
 *    read lock, and queues the answer with the Read Responses it owes.
 *
 * Lock order: ep->lock, then cq->lock / srq->lock / dev->lock; dev->lock
 * is never held while an ep->lock is waited for (only tried). */
#ifndef PROVIDERS_TCP_TCP_H
#define PROVIDERS_TCP_TCP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>
#include <netinet/in.h>

#include "transport.h"
#include "conn_events.h"
#include "sock.h"
#include "tcp_wire.h"

extern const struct udapl_transport_ops dapl_tcp_ops;

#pragma GCC visibility push(hidden)

#define TCP_MAX_SGE 8
#define TCP_QUEUE_MAX 16384
#define TCP_READS_MAX 128            /* IRD/ORD we offer */
#define TCP_FPDU_DATA 65024          /* payload bytes per FPDU at most */
#define TCP_RX_BUF (128 * 1024)      /* staging buffer per endpoint */
#define TCP_DIRECT_MIN 4096          /* after an FPDU this large, read the next header alone */
#define TCP_TX_BATCH 32              /* FPDUs gathered into one sendmsg */
#define TCP_STASH_MAX 64             /* endpoints noted per progress pass */
#define TCP_UNEXPECTED_MAX (4u << 20)/* bytes of Sends held for receives not yet
                                        posted, TCP_UNEXPECTED_COST each included */
#define TCP_UNEXPECTED_COST 64u      /* a held Send's charge beyond its data: its
                                        struct tcp_unexpected and malloc's header */
#define TCP_UNEXPECTED_MSGS TCP_QUEUE_MAX /* Sends held at most: a libdat peer
                                        never has more unplaced than its send
                                        queue is deep; past it a Terminate */
#define TCP_DRIVE_FPDUS 4096         /* FPDUs one drive takes before it lets the
                                        lock go (the socket stays readable) */
#define TCP_TICK_NS 2000000          /* the timer: deadlines, paused listeners, owed acks */
#define TCP_BUSY_DRIVES 8            /* consumer drives between two wakeups: a busy poller */
#define TCP_BUSY_NS 5000             /* polls of a CQ this close together: a busy loop */
/* no poll of an endpoint's CQs for this long, and data waited for the
 * progress thread: the consumer drives it no more (tcp_dev.c ep_service) */
#define TCP_GONE_NS 200000
/* drives that read nothing while Sends or Writes wait for the peer's
 * placement report: then one bare report of ours wakes the peer's
 * progress thread, which sends the report a consumer left owed */
#define TCP_NUDGE_DRIVES 64
#define TCP_CQ_DRIVE_ALL 4           /* up to this many endpoints a CQ poll drives each */
#define TCP_ACK_MSGS 16              /* placed messages owed an ack: it goes at once */
#define TCP_ACK_BYTES (512u * 1024)  /* ... or bytes of them */
#define TCP_PEER_TIMEOUT_MS 30000    /* a peer that acknowledges nothing for this
                                        long is gone (DAPL_TCP_PEER_TIMEOUT_MS) */
#define TCP_HANDSHAKE_MS 10000       /* a half-open handshake is dropped after this
                                        (DAPL_TCP_HANDSHAKE_MS) */
/* Private data we take from the core (what dev_query reports): with the
 * MPA v2 block in front and our trailer behind, a request or reply stays
 * within the 256 bytes Linux's iWARP stacks take (RDMA_MAX_PRIVATE_DATA;
 * siw refuses a longer request without answering).  A peer may send up
 * to MPA_PD_MAX - MPA_V2_LEN. */
#define TCP_PDATA_MAX (256 - MPA_V2_LEN - TCP_EXT_LEN)

/* ---- work requests ------------------------------------------------------- */

enum tcp_wr_state {
	TCP_WR_QUEUED,      /* not (all) on the wire yet */
	TCP_WR_SENT,        /* on the wire, waiting for its ack or response */
	TCP_WR_DONE,        /* completed; slot free when it is the oldest */
};

struct tcp_wr {
	uint64_t context;
	uint8_t opcode;             /* enum dapl_twc_opcode */
	uint8_t state;              /* enum tcp_wr_state */
	uint8_t nsge;
	uint8_t status;             /* enum dapl_twc_status, once DONE */
	bool signaled, fence, solicited;
	uint32_t msn;               /* Sends: the MSN of its FPDUs */
	uint32_t len;               /* bytes in sge */
	uint32_t done;              /* sends: bytes framed so far; reads: bytes placed */
	uint32_t seq;               /* Sends/Writes: message number for the ack */
	uint32_t rkey;              /* Writes/Reads: remote STag */
	uint64_t raddr;             /* Writes/Reads: remote address (TO) */
	uint32_t sink;              /* Reads: our sink STag for the response;
	                               atomics: the Request Identifier */
	uint32_t imm;               /* write with immediate: the immediate */
	bool imm_framed;            /* ... its Immediate Data is on the wire */
	uint64_t add_or_cmp, swap;  /* atomics (opcode FETCH_ADD / CMP_SWAP) */
	uint64_t tx_end;            /* stream position after its last byte */
	struct dapl_tsge sge[TCP_MAX_SGE];
};

/* A ring of work requests; indices grow and wrap mod 2^32:
 *   head   oldest not yet completed
 *   frame  next send-queue request to put on the wire (head <= frame)
 *   tail   next free (tail - head <= depth) */
struct tcp_queue {
	uint32_t depth;
	uint32_t head, frame, tail;
	struct tcp_wr *wr;
};

/* Request i of the ring. */
static inline struct tcp_wr *qwr(struct tcp_queue *q, uint32_t i)
{
	return &q->wr[i % q->depth];
}

/* Message number have is want or past it (mod 2^32). */
static inline bool seq_reached(uint32_t have, uint32_t want)
{
	return (int32_t)(have - want) >= 0;
}

/* Requests that complete when a response comes back (RDMA Reads, and
 * the RFC 7306 atomics): they count against ORD. */
static inline bool wants_response(unsigned opcode)
{
	return opcode == DAPL_TWC_RDMA_READ || opcode == DAPL_TWC_FETCH_ADD ||
	       opcode == DAPL_TWC_CMP_SWAP;
}


/* An RDMA Read Response we owe the peer (IRD of them). */
struct tcp_read_resp {
	uint32_t stag;              /* our source STag, checked at each send */
	uint32_t sink;
	uint64_t sink_to;
	uint64_t src;               /* our address */
	uint32_t len, done;
	/* an Atomic Response (RFC 7306), executed when its request came:
	 * it goes in order with the Read Responses */
	bool atomic;
	uint32_t req_id;
	uint64_t orig;
};

/* A Send that arrived before a receive was posted for it. */
struct tcp_unexpected {
	struct tcp_unexpected *next;
	uint32_t seq;               /* its inbound message number */
	uint32_t len, filled;
	bool complete;
	/* an Immediate Data message (no data): its receive completes as
	 * RECV_RDMA_IMM with byte_len imm_len, the write before it */
	bool is_imm;
	uint32_t imm, imm_len;
	uint8_t data[];
};

/* (malloc's header is 16 bytes at most, its rounding 15) */
_Static_assert(sizeof(struct tcp_unexpected) + 32 <=
	       TCP_UNEXPECTED_COST, "a held Send's charge covers its overhead");
_Static_assert(2 + DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN <=
	       2 + DDP_UNTAGGED_LEN + TERM_PAYLOAD_MAX,
	       "an Atomic Request fits the receive header buffer");
_Static_assert((uint64_t)TCP_UNEXPECTED_MSGS * TCP_UNEXPECTED_COST <
	       TCP_UNEXPECTED_MAX, "empty Sends meet the count bound first");

enum tcp_ep_state {
	TCP_EP_IDLE,
	TCP_EP_CONNECTING,   /* TCP connect in progress */
	TCP_EP_MPA_REQ,      /* request sent, waiting for the reply */
	TCP_EP_ACCEPTING,    /* reply sent, waiting for the initiator's RTR */
	TCP_EP_CONNECTED,
	TCP_EP_DOWN,         /* the attempt ended; posts flush */
};

enum tcp_rx_phase { RX_HDR, RX_DATA, RX_TRAILER };

struct dapl_tep {
	pthread_mutex_t lock;
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	struct dapl_tcq *scq, *rcq;
	struct dapl_tsrq *srq;
	uint64_t owner;
	uint32_t max_send_sge, max_recv_sge;
	atomic_int refs;            /* drivers holding a pointer without the lock */
	struct dapl_tep *next;      /* dev->eps (dev->lock) */
	struct dapl_tep *cq_next_s, *cq_next_r;

	enum tcp_ep_state state;
	int fd;
	bool active;                /* this attempt was a connect */
	bool ext_acks;              /* the peer speaks the ack extension */
	bool ext_7306;              /* ... and RFC 7306 (both announced it) */
	bool crc;                   /* CRC negotiated: refused, never set */
	bool hold_tx;               /* responder without RTR: wait for the first FPDU */
	bool rtr_write;             /* initiator: send a zero-length Write as RTR */
	bool rtr_pending;           /* responder: waiting for the RTR */
	bool remote_error;          /* a Terminate names an error of ours */
	uint64_t deadline_ms;       /* handshake deadline (monotonic ms) */
	struct sockaddr_storage local, peer;
	uint16_t ird, ord;          /* negotiated */
	uint32_t handshake_len;     /* bytes of the MPA frame in hs_buf */
	uint32_t handshake_done;
	uint8_t hs_buf[MPA_HDR_LEN + MPA_PD_MAX];

	/* its place in dev->connq, where all its events wait (dev->lock) */
	struct dapl_conn_event_slot cev;
	uint64_t rx_bytes;          /* bytes read from the socket, ever */

	/* completions in a CQ not yet handed out: a request holds its
	 * place in its queue until then (transport.h) */
	atomic_uint sq_unreaped, rq_unreaped;

	/* send side */
	struct tcp_queue sq;
	uint32_t msn_send, msn_read, msn_term;   /* last MSN used per queue */
	uint32_t msn_aresp;         /* ... and QN 3, Atomic Responses */
	uint32_t tx_seq;            /* Sends/Writes put on the wire */
	uint32_t peer_placed;       /* what the peer reports placed */
	uint32_t reads_out;         /* our Reads waiting for their response */
	uint32_t read_head;         /* sq index of the oldest Read in flight */
	uint64_t tx_pos;            /* stream bytes handed to the socket */
	uint64_t tx_queued;         /* stream bytes framed */
	/* what sendmsg still has to send: iov[iov_at..iov_n) */
	struct iovec iov[TCP_TX_BATCH * 3 + 4];
	int iov_at, iov_n;
	uint8_t hdrs[TCP_TX_BATCH + 2][2 + DDP_UNTAGGED_LEN + RDMAP_ATOMIC_REQ_LEN];
	uint8_t trailers[TCP_TX_BATCH + 2][8];
	/* the Read Response pieces in the batch being sent */
	struct tcp_resp_chk { uint32_t stag; uint64_t addr; uint32_t len; }
		resp_chk[TCP_TX_BATCH + 2];
	int nresp_chk;
	uint8_t term_buf[2 + DDP_UNTAGGED_LEN + TERM_PAYLOAD_MAX + 8];
	uint32_t term_len;
	bool term_queued, term_sent;
	bool ack_owed;              /* placed count changed since we last told */
	uint32_t rx_unacked;        /* Send/Write bytes received since we last told */
	uint8_t ack_age;            /* drives since it became owed */
	bool ack_ticked;            /* a tick saw it owed: the next one sends it */
	bool force_ack;             /* send a bare ack even without traffic */
	uint16_t stall_drives;      /* drives that read nothing while we wait for a report */
	bool nudge;                 /* send a bare ack even with nothing new to tell */
	atomic_uint drives;         /* consumer drives, for the progress thread */
	uint32_t posts;             /* consumer posts, for the progress thread too */
	uint32_t drives_seen;       /* progress thread's copy */
	/* a consumer drives it: in the progress epoll edge-triggered, so
	 * that the thread wakes once for an arrival, not until it is read */
	bool excluded;
	bool rx_more;               /* the last rx drive left the socket unread */
	bool want_out;              /* registered for EPOLLOUT */
	uint32_t dev_ev;            /* events in the progress epoll, 0: not in it */
	uint32_t cq_ev[2];          /* events in the send / receive CQ's epoll
	                               (added when a consumer arms it), 0: not in it */

	/* responses to the peer's Reads */
	struct tcp_read_resp *resp;
	uint32_t resp_head, resp_tail, resp_cap;

	/* receive side */
	struct tcp_queue rq;        /* depth 0 on an SRQ */
	uint32_t rx_msn_send, rx_msn_read, rx_msn_term;  /* next expected */
	uint32_t rx_msn_aresp;
	/* bytes of the last RDMA Write message (its FPDUs so far while
	 * rx_write_open): what an Immediate Data behind it reports */
	uint32_t rx_write_len;
	bool rx_write_open;
	uint32_t rx_seq;            /* inbound Sends/Writes seen */
	uint32_t rx_placed;         /* ... placed, in order */
	uint32_t told_placed;       /* last placed count sent */
	bool got_fpdu;              /* the peer has sent its first FPDU */
	enum tcp_rx_phase phase;
	uint32_t hdr_need, hdr_have;
	uint8_t hdr[2 + DDP_UNTAGGED_LEN + TERM_PAYLOAD_MAX];
	uint32_t ulpdu_len, data_len, data_done, trailer_len;
	uint8_t trailer[8];

	/* where this FPDU's data goes */
	enum { DST_NONE, DST_MEM, DST_RECV, DST_READ, DST_UNEXP } dst;
	uint32_t dst_stag;          /* DST_MEM: the STag and offset, checked per piece */
	uint64_t dst_to;
	bool msg_counts;            /* this FPDU ends a Send or Write (ack count) */
	bool read_last;             /* this FPDU ends its message */
	bool is_term;
	bool in_send;               /* a Send's FPDUs are arriving */
	bool send_to_unexp;         /* ... into the holding buffer */
	bool stalled;               /* a Send waits for a receive, buffer full */
	uint32_t trailer_have;
	uint32_t sink_salt;         /* makes our read sink STags unpredictable */
	struct tcp_wr *dst_wr;      /* DST_RECV: the receive */
	struct tcp_unexpected *dst_unexp;
	uint32_t dst_off;           /* offset into the message */
	struct tcp_wr srq_wr;       /* a receive taken from the SRQ */
	bool srq_wr_busy;
	/* Sends held, oldest first; unexp_link is the link that points at
	 * the tail (&unexp_head or the one before's next), so that the
	 * tail, grown by realloc, is relinked without a walk */
	struct tcp_unexpected *unexp_head, *unexp_tail, **unexp_link;
	uint32_t unexp_bytes;       /* their data + TCP_UNEXPECTED_COST each */
	uint32_t unexp_count;       /* how many (TCP_UNEXPECTED_MSGS at most) */
	uint64_t unexp_visits;      /* held Sends looked at, ever: tests check
	                               that it grows by O(1) per message */
	uint32_t cur_msg_seq;       /* inbound message number of the current Send/Write */
	uint8_t *rbuf;              /* staging */
	uint32_t rbuf_rd, rbuf_wr;
	bool rx_big;                /* the last FPDU was large: read headers alone */
	bool rx_eof;                /* the peer's FIN was read */
};

struct dapl_tconn {
	struct dapl_tlisten *listener;
	struct dapl_tdev *dev;
	int fd;
	uint64_t deadline_ms;
	uint32_t have;
	uint32_t bits, pd_len;
	bool reported;
	bool watched;                   /* in the progress epoll */
	bool ext_acks;
	bool ext_early;                 /* ... and takes FPDUs right after the reply */
	bool ext_7306;                  /* ... and offers RFC 7306 */
	uint16_t peer_ird, peer_ord;    /* RFC 6581 values, with their flag bits */
	bool v2;
	struct sockaddr_storage peer;
	struct sockaddr_storage local;  /* the listener's address */
	uint8_t buf[MPA_HDR_LEN + MPA_PD_MAX];
	struct dapl_tconn *next;        /* dev->conns */
	/* Half-open: accepted, its request not in yet (dev->lock).  Such a
	 * conn is on two lists, oldest first: the device's and its source
	 * address's; the bounds evict from their heads (tcp_listen.c). */
	bool half_open;
	struct tcp_src *src;
	struct dapl_tconn *ho_prev, *ho_next;     /* dev->ho_oldest... */
	struct dapl_tconn *src_prev, *src_next;   /* src->oldest... */
};

/* A source address with half-open handshakes (dev->srcs, dev->lock). */
struct tcp_src {
	uint8_t addr[16];               /* IPv4 (also v4-mapped): 4 bytes */
	uint8_t len;
	unsigned count;                 /* its half-open conns */
	struct dapl_tconn *oldest, *newest;
	struct tcp_src *next;           /* hash chain */
};

struct dapl_tlisten {
	struct dapl_tdev *dev;
	int fd;
	uint16_t port;
	bool dead;
	int unanswered;
	/* accept4 ran out of fds or memory: out of the epoll set, retried
	 * at each tick until it takes a connection again (dev->lock) */
	bool paused;
	struct dapl_tlisten *next;
};

struct dapl_tcq {
	struct dapl_tdev *dev;
	pthread_mutex_t lock;
	int epfd;                       /* what cq_wait_fd returns */
	int event_fd;                   /* in epfd: a completion while armed */
	bool armed;
	bool notified;
	uint32_t cap, count, head;      /* ring of completions */
	uint32_t reserved;              /* entries promised to live queues */
	struct dapl_twc *ring;
	atomic_uint **ring_cnt;         /* per entry: the queue count it holds, or NULL */
	struct dapl_tep **eps;          /* endpoints completing here */
	int neps, eps_cap;
	/* Above TCP_CQ_DRIVE_ALL endpoints a poll drives only those whose
	 * sockets epfd reports: every connected one is then in epfd.
	 * changes counts connections made here, synced what a poll has put
	 * in epfd so far (lock). */
	atomic_uint changes;
	unsigned synced;
	/* polls with many endpoints: each is a drive of all of them, for
	 * the progress thread (tcp_ep_drives) */
	atomic_uint polls;
	/* when a consumer last polled it (CLOCK_MONOTONIC ns): whether its
	 * next poll is part of a busy loop */
	_Atomic uint64_t polled_ns;
};

struct dapl_tsrq {
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	pthread_mutex_t lock;
	struct tcp_queue q;             /* posted receives, oldest at head */
	uint32_t max_sge;
	uint32_t limit;                 /* armed low watermark, 0 off */
	int users;
	bool pending;                   /* SRQ_LIMIT waiting (dev->lock) */
	struct dapl_tsrq *pend_next;
};

struct dapl_tpd {
	struct dapl_tdev *dev;
};

struct dapl_tmr {
	struct dapl_tdev *dev;
	struct dapl_tpd *pd;
	uint64_t addr, len;
	unsigned access;
	uint32_t stag;
	struct dapl_tmr *hnext;         /* dev->stags bucket */
};

struct dapl_tmw {
	struct dapl_tpd *pd;
	struct dapl_tmr *bound;         /* the registration of its range, or NULL */
};

#define TCP_STAG_BUCKETS 1024
#define TCP_SRC_BUCKETS 64
#define TCP_SALTS 64

/* a reject's private data (MPA's most) is kept whole in dev->connq */
_Static_assert(MPA_PD_MAX <= DAPL_CONN_EVENT_PDATA_MAX,
	       "MPA private data fits a queued connection event");

struct dapl_tdev {
	pthread_mutex_t lock;
	pthread_rwlock_t stag_lock;     /* the STag table and the memory behind it */
	struct dapl_tmr *stags[TCP_STAG_BUCKETS];
	uint64_t rng;                   /* STags only if getrandom() fails (stag_lock) */
	struct sockaddr_storage addr;
	char name[64];
	uint64_t handshake_ms;          /* DAPL_TCP_HANDSHAKE_MS or TCP_HANDSHAKE_MS */
	unsigned peer_timeout_ms;       /* DAPL_TCP_PEER_TIMEOUT_MS, 0: the kernel's */
	int epfd;                       /* the progress fd */
	int notify_fd;                  /* eventfd: an SRQ limit or receive */
	int timer_fd;                   /* TCP_TICK_NS: deadlines, paused listeners, owed acks */
	atomic_bool timer_on;
	bool no_timer;                  /* DAPL_TCP_NO_TIMER=1 (debug): never started */
	struct dapl_tlisten *listeners;
	struct dapl_tconn *conns;
	/* the half-open ones among conns, oldest first, and their sources */
	struct dapl_tconn *ho_oldest, *ho_newest;
	unsigned half_open;
	struct tcp_src *srcs[TCP_SRC_BUCKETS];
	uint32_t src_key;               /* random: where a source hashes */
	struct dapl_tep *eps;
	/* the endpoints' events, all of them made up here */
	struct dapl_conn_events connq;
	struct dapl_tsrq *srq_pend_head;
	bool self_pump;                 /* self_pumper calls cm_get_event next */
	pthread_t self_pumper;
	bool polled;                    /* the last pass emptied the epoll set */
	/* endpoints whose sockets fired, for tcp_progress_data: noted by
	 * cm_get_event under the IA lock, driven without it; pointers only,
	 * found in eps again before use */
	struct dapl_tep *stash[TCP_STASH_MAX];
	int nstash;
	uint32_t salts[TCP_SALTS];      /* getrandom() output not used yet */
	unsigned salts_left;
	/* the private data of the connection request cm_get_event returned last */
	uint8_t ev_buf[MPA_PD_MAX];
	/* for tests (test_tcp_peer): accept4 calls and ticks, ever */
	atomic_uint accept_calls, ticks;
};

/* DAPL_TCP_TRACE=1: one line per FPDU and per state change on stderr. */
extern int tcp_trace;
#define TCP_TRACE(ep, ...) do { if (tcp_trace) tcp_trace_line(ep, __VA_ARGS__); } while (0)
void tcp_trace_line(const struct dapl_tep *ep, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ---- tcp_dev.c ------------------------------------------------------------ */
/* What a progress epoll entry is: a tag in the low bits of its pointer. */
enum { TAG_NOTIFY = 0, TAG_LISTEN = 1, TAG_CONN = 2, TAG_EP = 3, TAG_TIMER = 4,
       TAG_CONNQ = 5 };
#define TAG_MASK 7u
uint64_t tcp_tagged(const void *p, unsigned tag);
int tcp_epoll_set(int epfd, int op, int fd, uint32_t events, uint64_t data);
/* dev->lock held: the timer runs (on) or stops. */
void tcp_timer_set(struct dapl_tdev *dev, bool on);
int tcp_dev_open(const char *ia_params, struct dapl_tdev **dev, char *why,
		 size_t whylen);
int tcp_dev_query(struct dapl_tdev *dev, struct dapl_tdev_attr *attr);
void tcp_dev_close(struct dapl_tdev *dev);
int tcp_progress_fds(struct dapl_tdev *dev, int *fds, int max);
int tcp_cm_get_event(struct dapl_tdev *dev, struct dapl_tcm_event *ev);
void tcp_cm_self_pump(struct dapl_tdev *dev, bool on);
int tcp_progress_data(struct dapl_tdev *dev, bool will_drain);
/* the core's clock (dapl_now_ns), in ms: deadlines and the tick */
static inline uint64_t tcp_now_ms(void)
{
	return dapl_now_ns() / 1000000;
}
/* The event a failed socket call on a connected endpoint ends it with:
 * CONN_ERROR (BROKEN) when the path to the peer failed or the peer went
 * silent, DISCONNECTED when the peer's end closed the connection. */
enum dapl_tcm_event_type tcp_sock_error_event(int err);
void tcp_dev_notify(struct dapl_tdev *dev);
/* Starts the timer (a deadline to watch). */
void tcp_dev_need_tick(struct dapl_tdev *dev);
/* Watch ep's socket in the progress epoll (ep->lock held). */
void tcp_dev_watch(struct dapl_tep *ep);
void tcp_dev_unwatch(struct dapl_tep *ep);
void tcp_conn_free(struct dapl_tconn *c);

/* ---- tcp_listen.c --------------------------------------------------------- */
int tcp_listen(struct dapl_tdev *dev, uint16_t *port, struct dapl_tlisten **l);
void tcp_unlisten(struct dapl_tlisten *l);
/* Detaches conn for accept/reject; false if it is not (or no more) ours. */
bool tcp_conn_take(struct dapl_tdev *dev, struct dapl_tconn *conn);
/* dev->lock held: takes a connection l's socket has for us (one a call). */
void tcp_accept_new(struct dapl_tdev *dev, struct dapl_tlisten *l);
/* dev->lock held: a conn leaves the lists (accepted, rejected, dropped). */
void tcp_conn_unlink(struct dapl_tdev *dev, struct dapl_tconn *c);
/* dev->lock held: c is half-open no more (its request is in, or it goes). */
void tcp_ho_remove(struct dapl_tdev *dev, struct dapl_tconn *c);

/* ---- tcp_ep.c ------------------------------------------------------------- */
int tcp_ep_create(struct dapl_tpd *pd, struct dapl_tcq *scq,
		  struct dapl_tcq *rcq, struct dapl_tsrq *srq,
		  const struct dapl_tep_attr *attr, struct dapl_tep **ep);
int tcp_ep_destroy(struct dapl_tep *ep);
int tcp_ep_reset(struct dapl_tep *ep);
int tcp_disconnect(struct dapl_tep *ep);
int tcp_ep_addrs(struct dapl_tep *ep, struct sockaddr_storage *local,
		 struct sockaddr_storage *peer);
/* ep->lock held: the connection is over (status: why, for the event). */
void tcp_ep_fail(struct dapl_tep *ep, enum dapl_tcm_event_type type,
		 int status);
/* ep->lock held: the socket leaves the progress epoll and closes. */
void tcp_ep_drop_socket(struct dapl_tep *ep);
/* ep->lock held: read and place what arrived, write what waits.  Returns
 * false when the connection ended while driving. */
bool tcp_ep_drive(struct dapl_tep *ep);
/* Both directions' stream state back to that of a new connection. */
void tcp_ep_reset_streams(struct dapl_tep *ep);
/* Room for ird Read and Atomic Responses, made at connect and accept. */
int tcp_ep_size_responses(struct dapl_tep *ep, uint32_t ird);
/* A fresh secret for the sink STags of our RDMA Reads (per connection). */
void tcp_ep_new_salt(struct dapl_tep *ep);

/* ---- tcp_mpa.c ------------------------------------------------------------ */
int tcp_connect(struct dapl_tep *ep, const struct sockaddr *addr,
		uint16_t port, const void *pdata, size_t len, uint16_t ird,
		uint16_t ord);
int tcp_accept(struct dapl_tconn *conn, struct dapl_tep *ep,
	       const void *pdata, size_t len, uint16_t ird, uint16_t ord);
int tcp_reject(struct dapl_tconn *conn, const void *pdata, size_t len);
/* ep->lock held: handshake progress on the active side and the RTR. */
void tcp_ep_handshake(struct dapl_tep *ep);
/* ep->lock held: the socket carries FPDUs from now on. */
void tcp_ep_go_connected(struct dapl_tep *ep);
/* ep->lock held: the responder's RTR came (tcp_rx.c): ESTABLISHED. */
void tcp_ep_become_connected(struct dapl_tep *ep);
/* dev->lock held: reads more of an accepted connection's MPA request.
 * 1 when it is complete and acceptable, 0 for more to come, -1 to drop. */
int tcp_conn_read(struct dapl_tconn *c);

/* ---- tcp_wr.c ------------------------------------------------------------- */
/* Copies len bytes between buf and wr's segments at offset off (to_sge:
 * into them); the caller checked off + len <= wr->len. */
void tcp_sge_copy(struct tcp_wr *wr, uint32_t off, uint8_t *buf,
		  uint32_t len, bool to_sge);
/* iov for wr's segments from off for len bytes; returns the count. */
int tcp_sge_iov(const struct tcp_wr *wr, uint32_t off, uint32_t len,
		struct iovec *iov);
/* ep->lock held: wr's completion in cq (signaled, or not a success);
 * with_imm: a receive an Immediate Data consumed (RECV_RDMA_IMM). */
void tcp_complete_imm(struct dapl_tep *ep, struct dapl_tcq *cq,
		      struct tcp_wr *wr, enum dapl_twc_status st,
		      uint32_t byte_len, bool with_imm, uint32_t imm);
void tcp_complete(struct dapl_tep *ep, struct dapl_tcq *cq,
		  struct tcp_wr *wr, enum dapl_twc_status st,
		  uint32_t byte_len);
/* ep->lock held: the send queue's done requests complete, oldest first. */
void tcp_complete_sends(struct dapl_tep *ep);
/* ep->lock held: complete everything posted as FLUSHED. */
void tcp_ep_flush_all(struct dapl_tep *ep);

/* ---- tcp_tx.c ------------------------------------------------------------- */
int tcp_post_send(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context, unsigned flags);
int tcp_post_recv(struct dapl_tep *ep, const struct dapl_tsge *sge, int nsge,
		  uint64_t context);
int tcp_post_rdma_write(struct dapl_tep *ep, const struct dapl_tsge *sge,
			int nsge, uint64_t raddr, uint32_t rkey,
			uint64_t context, unsigned flags);
int tcp_post_rdma_read(struct dapl_tep *ep, const struct dapl_tsge *sge,
		       int nsge, uint64_t raddr, uint32_t rkey,
		       uint64_t context, unsigned flags);
unsigned tcp_ep_extensions(struct dapl_tep *ep);
int tcp_post_rdma_write_imm(struct dapl_tep *ep, const struct dapl_tsge *sge,
			    int nsge, uint64_t raddr, uint32_t rkey,
			    uint32_t imm, uint64_t context, unsigned flags);
int tcp_post_atomic(struct dapl_tep *ep, enum dapl_tatomic_op op,
		    const struct dapl_tsge *result, uint64_t raddr,
		    uint32_t rkey, uint64_t add_or_compare, uint64_t swap,
		    uint64_t context, unsigned flags);
/* ep->lock held: push what waits on the socket. */
void tcp_ep_flush(struct dapl_tep *ep);
/* Something for tcp_ep_flush to frame or push. */
bool tcp_tx_pending(const struct dapl_tep *ep);
/* ep->lock held: send a Terminate and end the connection. */
void tcp_ep_terminate(struct dapl_tep *ep, unsigned layer, unsigned etype,
		      unsigned code, const uint8_t *hdr, size_t hdr_len);

/* ---- tcp_rx.c ------------------------------------------------------------- */
/* ep->lock held: read and place what arrived (and send the acks a long
 * stream owes on the way).  false when the connection ended. */
bool tcp_rx_drive(struct dapl_tep *ep);
/* ep->lock held: the Sends held for receives are dropped. */
void tcp_ep_drop_unexpected(struct dapl_tep *ep);

/* ---- tcp_cq.c ------------------------------------------------------------- */
int tcp_cq_create(struct dapl_tdev *dev, uint32_t depth, struct dapl_tcq **cq);
int tcp_cq_destroy(struct dapl_tcq *cq);
int tcp_cq_wait_fd(struct dapl_tcq *cq);
int tcp_cq_arm(struct dapl_tcq *cq, int solicited_only);
void tcp_cq_ack(struct dapl_tcq *cq);
int tcp_cq_poll(struct dapl_tcq *cq, struct dapl_twc *wc, int max);
/* Reserves room for a queue of depth completions / returns it. */
int tcp_cq_attach(struct dapl_tcq *cq, struct dapl_tep *ep, uint32_t depth);
void tcp_cq_detach(struct dapl_tcq *cq, struct dapl_tep *ep, uint32_t depth);
/* ep->lock held: a completion; unreaped (or NULL) counts it until
 * cq_poll hands it out. */
void tcp_cq_push(struct dapl_tcq *cq, const struct dapl_twc *wc,
		 atomic_uint *unreaped);
/* An endpoint is gone: its SRQ receives in the ring lose their owner, and
 * its entries stop counting against its queues. */
void tcp_cq_forget_ep(struct dapl_tcq *cq, struct dapl_tep *ep);
/* ep->lock held: the socket's events changed (EPOLLOUT) in the CQ sets
 * that hold it. */
void tcp_cq_watch(struct dapl_tep *ep);
void tcp_cq_connected(struct dapl_tep *ep);
unsigned tcp_ep_drives(const struct dapl_tep *ep);
/* ep->lock held: the socket leaves the CQ sets that hold it. */
void tcp_cq_unwatch(struct dapl_tep *ep);

/* ---- tcp_srq.c ------------------------------------------------------------ */
int tcp_srq_create(struct dapl_tpd *pd, uint32_t max_wr, uint32_t max_sge,
		   struct dapl_tsrq **srq);
int tcp_srq_destroy(struct dapl_tsrq *srq,
		    void (*discarded)(uint64_t context, void *arg), void *arg);
int tcp_srq_resize(struct dapl_tsrq *srq, uint32_t max_wr);
int tcp_srq_set_limit(struct dapl_tsrq *srq, uint32_t limit);
int tcp_srq_post_recv(struct dapl_tsrq *srq, const struct dapl_tsge *sge,
		      int nsge, uint64_t context);
/* Takes the oldest posted receive into *wr; false if none. */
bool tcp_srq_take(struct dapl_tsrq *srq, struct tcp_wr *wr);

/* ---- tcp_mem.c ------------------------------------------------------------ */
int tcp_pd_alloc(struct dapl_tdev *dev, struct dapl_tpd **pd);
int tcp_pd_free(struct dapl_tpd *pd);
int tcp_mr_reg(struct dapl_tpd *pd, void *addr, uint64_t len, unsigned access,
	       struct dapl_tmr **mr, uint32_t *lkey, uint32_t *rkey);
int tcp_mr_dereg(struct dapl_tmr *mr);
int tcp_mw_alloc(struct dapl_tpd *pd, struct dapl_tmw **mw);
int tcp_mw_bind(struct dapl_tep *ep, struct dapl_tmw *mw, struct dapl_tmr *mr,
		uint64_t addr, uint64_t len, unsigned access,
		uint64_t context, unsigned flags, uint32_t *rkey);
int tcp_mw_free(struct dapl_tmw *mw);
/* With dev->stag_lock read-held: is [to, to+len) of stag open to pd with
 * access?  0, or TCP_STAG_BAD | the Terminate code that says why not. */
#define TCP_STAG_BAD 0x100
int tcp_stag_check(struct dapl_tdev *dev, uint32_t stag, struct dapl_tpd *pd,
		   uint64_t to, uint64_t len, unsigned access);
/* A fresh unpredictable non-zero 32-bit value not in the table. */
uint32_t tcp_stag_new(struct dapl_tdev *dev);

#pragma GCC visibility pop

#endif
