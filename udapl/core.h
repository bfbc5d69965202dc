/* The uDAPL core's objects and the calls between its files.
 *
 * One file per DAT object (ia.c pz.c evd.c cno.c ep.c psp.c rsp.c cr.c),
 * cm.c for the connection state machine and the progress thread,
 * provider.c for dat_provider_init/fini and the DAT_PROVIDER table.
 *
 * Locking, in the order locks are taken:
 *   ia->lock    the IA's object lists, every EP/PSP/RSP/CR field that the
 *               connection state machine touches, and every transport CM
 *               call.  The progress thread holds it while it reads and
 *               handles connection events, so an object found by a lookup
 *               cannot be freed under it.
 *   evd->lock   the EVD's event ring and its flags.
 *   cno->lock   the CNO's trigger.
 * Nothing that sleeps (dat_evd_wait, dat_cno_wait) holds ia->lock.
 */
#ifndef UDAPL_CORE_H
#define UDAPL_CORE_H

#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "dat_gen.h"

#include "handle.h"
#include "transport.h"
#include "wire.h"

struct dapl_ia;
struct dapl_pz;

/* ext.c: the provider-specific attributes the IB extensions add (DAT 2.0). */
#define DAPL_EXT_NATTR 3

/* What an extended DTO is (DAT 2.0 IB extensions, ext.c): for its
 * request slot and for the event it completes as. */
enum dapl_ext_kind {
	DAPL_EXT_NONE,
	DAPL_EXT_WRITE_IMM,       /* an RDMA Write with immediate, at its initiator */
	DAPL_EXT_RECV_IMM,        /* the receive such a write consumed at the target */
	DAPL_EXT_FETCH_ADD,
	DAPL_EXT_CMP_SWAP,
};
struct dapl_evd;
struct dapl_cno;
struct dapl_ep;
struct dapl_sp;
struct dapl_cr;
struct dapl_srq;
struct dapl_dto_slot;

/* ---- provider.c ---------------------------------------------------------- */

/* One per dat.conf line a provider library registered: the table libdat
 * dispatches through (first, so objects can point at it) and the line's
 * ia_params. */
struct dapl_provider {
	DAT_PROVIDER table;
	DAT_PROVIDER_INFO info;
	char *ia_params;
	const struct udapl_transport_ops *ops;
	struct dapl_provider *next;
};

/* The transport this provider library was built with (defined by the
 * provider directory, e.g. providers/ofi). */
extern const struct udapl_transport_ops *const udapl_transport;

/* The registration for an IA name, or NULL. */
struct dapl_provider *dapl_provider_find(const char *ia_name);

/* ---- ia.c ------------------------------------------------------------------ */

/* Intrusive list links, one per kind of object the IA owns. */
struct dapl_obj_list {
	void *head;
};

/* Progress fds a transport may report (cm.c). */
#define DAPL_CM_MAX_FDS 16

struct dapl_ia {
	struct dapl_header h;
	struct dapl_provider *prov;
	const struct udapl_transport_ops *ops;
	struct dapl_tdev *dev;
	struct dapl_tdev_attr dev_attr;
	/* provider_specific_attr for ia_query: dev_attr's, then (DAT 2.0)
	 * the IB extension attributes (ext.c) and, when the device named
	 * none, a DAT_IB_TRANSPORT_MTU */
	DAT_NAMED_ATTR specific[DAPL_TDEV_SPECIFIC_MAX + DAPL_EXT_NATTR + 1];
	int nspecific;
	struct sockaddr_storage local_addr;   /* what ia_query reports */

	pthread_mutex_t lock;
	struct dapl_evd *async_evd;
	bool async_evd_ours;                  /* created by ia_open, freed by close */

	/* objects, newest first, linked through their own next fields */
	struct dapl_pz *pzs;
	struct dapl_evd *evds;
	struct dapl_cno *cnos;
	struct dapl_ep *eps;
	struct dapl_sp *sps;                  /* PSPs and RSPs */
	struct dapl_cr *crs;
	struct dapl_tcq *spare_cq;            /* for EPs without a DTO EVD */
	struct dapl_lmr *lmrs;
	struct dapl_rmr *rmrs;
	struct dapl_srq *srqs;
	/* lmr_context -> LMR, read without a lock on the DTO path (lmr.c) */
	struct dapl_lmr *_Atomic *lmr_table;
	uint16_t *lmr_gen;

	/* Keeps the memory (and lock) alive for a thread that sleeps
	 * without ia->lock and takes it again afterwards (dat_cno_wait):
	 * one for the open IA, one per such thread; the last drop frees. */
	_Atomic int pins;
	unsigned long refused_requests;       /* cm.c: malformed ones, for the log */
	struct dapl_ia *share_next;           /* the open list (compat.c) */

	/* cm.c: the progress thread */
	pthread_t progress;
	bool progress_running;
	bool stopping;
	int wake_fd;                          /* eventfd: wakes the progress thread */
	int timer_fd;                         /* timerfd: the earliest connect deadline */
	uint64_t timer_ns;                    /* when it goes off, 0 never set (lock) */
	uint64_t spin_ns;                     /* DAT_PROGRESS_SPIN_US, in ns; 0: none */
	int rt_prio;                          /* DAT_PROGRESS_RT: the thread's SCHED_FIFO
					       * priority awake; 0 never (cm.c) */
	atomic_bool posted;                   /* a DTO since the thread last looked (dto.c, the spin) */
	int prog_epfd;                        /* what the thread sleeps on: wake_fd, timer_fd, */
	int prog_fds[DAPL_CM_MAX_FDS];        /* ... and these transport fds (lock) */
	int prog_nfds;
	bool prog_watch_ok;                   /* all of them could be added (lock) */
	int pump_waiters;                     /* connection/CR EVD waiters serving the fds (lock) */
};

/* The IA behind a handle (checked), or NULL. */
struct dapl_ia *dapl_ia_get(DAT_IA_HANDLE h);
/* Pins (ia->lock held, so the IA is open) and unpins an IA; the unpin
 * that drops the last pin of a closed IA frees it. */
void dapl_ia_pin(struct dapl_ia *ia);
void dapl_ia_unpin(struct dapl_ia *ia);

/* ---- pz.c ------------------------------------------------------------------- */

struct dapl_pz {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_tpd *tpd;
	int users;                            /* EPs, LMRs, RMRs, SRQs on it */
	struct dapl_pz *next;
};

void dapl_pz_destroy(struct dapl_pz *pz); /* ia->lock held; abrupt close */

/* ---- evd.c / cno.c: events --------------------------------------------------- */

struct dapl_evd {
	struct dapl_header h;
	struct dapl_ia *ia;
	DAT_EVD_FLAGS flags;
	struct dapl_evd *next;

	pthread_mutex_t lock;
	DAT_EVENT *ring;                      /* qlen slots */
	/* per ring slot: an SRQ receive the event holds until it is
	 * dequeued (dto.c), else NULL */
	struct dapl_dto_slot **ring_hold;
	DAT_COUNT qlen, head, count;
	struct dapl_tcq *cq;                  /* DTO / RMR_BIND EVDs: polled directly */
	/* CQs of this EVD on the devices of other IAs of the provider whose
	 * EPs use it (libdat(7)); polled, armed and waited on with cq.
	 * Changed under evd->lock. */
	struct dapl_xcq *xcqs;
	int event_fd;                         /* eventfd: written when an event is queued */
	struct dapl_cno *cno;
	/* cno.c, under cno->lock: queued on the CNO as having fired */
	struct dapl_evd *cno_next;
	bool cno_queued;
	bool enabled, waitable;
	bool waiting;                         /* a thread is in dat_evd_wait */
	pthread_t waiter;                     /* that thread, while waiting */
	bool overflowed;                      /* overflow already reported */
	unsigned empty_polls;                 /* dequeues in a row that found nothing */
	/* EPs, PSPs, RSPs that name it.  Raised under the EVD's IA lock
	 * (that is what dat_evd_free looks under), lowered anywhere. */
	_Atomic int users;
};

/* One CQ an EVD has on another IA's device. */
struct dapl_xcq {
	struct dapl_ia *ia;                   /* whose device it is on */
	struct dapl_tcq *cq;
	struct dapl_xcq *next;
};

/* The CQ an EP of ia completes into on evd: evd's own, or one made on
 * ia's device for it.  ia->lock held; NULL without resources. */
struct dapl_tcq *dapl_evd_cq_for(struct dapl_evd *evd, struct dapl_ia *ia);
/* ia is going away: every EVD of other IAs drops the CQ it has on ia's
 * device.  Share lock held (compat.c), no IA lock. */
void dapl_evd_drop_xcqs_of(struct dapl_ia *ia);

/* Queues ev (a copy) on evd; the caller may hold ia->lock but not
 * evd->lock.  On a full queue the event is dropped
 * and DAT_ASYNC_ERROR_EVD_OVERFLOW goes to the IA's async EVD (once per
 * overflow).  Wakes a waiter and the EVD's CNO.  Returns DAT_SUCCESS or
 * DAT_QUEUE_FULL. */
DAT_RETURN dapl_evd_post(struct dapl_evd *evd, const DAT_EVENT *ev);

/* Convenience builders for dapl_evd_post. */
DAT_RETURN dapl_evd_post_connection(struct dapl_evd *evd,
				    DAT_EVENT_NUMBER num,
				    struct dapl_ep *ep, DAT_COUNT pdata_size,
				    DAT_PVOID pdata);
DAT_RETURN dapl_evd_post_cr(struct dapl_evd *evd, struct dapl_sp *sp,
			    struct dapl_cr *cr);
DAT_RETURN dapl_evd_post_async(struct dapl_ia *ia, DAT_EVENT_NUMBER num,
			       DAT_HANDLE about);
DAT_RETURN dapl_evd_post_async_reason(struct dapl_ia *ia, DAT_EVENT_NUMBER num,
				      DAT_HANDLE about, DAT_COUNT reason);

void dapl_evd_destroy(struct dapl_evd *evd); /* ia->lock held; abrupt close */

/* A transport completion as the DAT event the consumer sees (dto.c).
 * False when the completion is internal and produces no event.  An SRQ
 * receive stays outstanding until its event is dequeued: with hold, *hold
 * gets the slot to pass to dapl_dto_hold_release then (else NULL); without
 * hold (the event is dropped) it is given back at once. */
bool dapl_dto_wc_to_event(struct dapl_evd *evd, const struct dapl_twc *wc,
			  DAT_EVENT *ev, struct dapl_dto_slot **hold);
void dapl_dto_hold_release(struct dapl_dto_slot *sl);

struct dapl_cno {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_cno *next;
	pthread_mutex_t lock;
	DAT_OS_WAIT_PROXY_AGENT agent;
	int event_fd;                         /* eventfd: written on trigger */
	/* EVDs that fired, oldest first, until a wait takes them */
	struct dapl_evd *fired_head, *fired_tail;
	bool waiting;
	int users;                            /* EVDs attached */
};

/* An event arrived on evd (enabled, nobody waiting on it): trigger its
 * CNO.  Called with evd->lock held. */
void dapl_cno_trigger(struct dapl_cno *cno, struct dapl_evd *evd);

void dapl_cno_destroy(struct dapl_cno *cno); /* ia->lock held; abrupt close */

/* ---- ep.c / cm.c: endpoints and connections -------------------------------- */

struct dapl_ep {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_ep *next;
	DAT_EP_PARAM param;                   /* ep_state lives here */
	struct sockaddr_storage remote_addr;  /* param.remote_ia_address_ptr */
	struct sockaddr_storage local_addr;   /* param.local_ia_address_ptr */
	struct dapl_pz *pz;
	struct dapl_evd *recv_evd, *request_evd, *connect_evd;
	struct dapl_tep *tep;                 /* made when first needed */

	/* connection */
	bool connected_actively;              /* dup_connect needs a listener at the far end */
	uint64_t deadline_ns;                 /* connect timeout (CLOCK_MONOTONIC); 0 none */
	struct dapl_read_limits negotiated;   /* what ep_query reports while connected */
	struct dapl_cr *cr;                   /* passive: the request being accepted */
	struct dapl_sp *rsp;                  /* the RSP this EP waits on */
	uint8_t pdata[256];                   /* peer's accept data, for ESTABLISHED */
	size_t pdata_len;
	bool provider_created;                /* made for a PSP_PROVIDER_FLAG request */
	struct dapl_dto_slots *req_slots;     /* made with the tep (dto.c) */
	struct dapl_dto_slots *recv_slots;    /* NULL on an SRQ */
	struct dapl_srq *srq;                 /* receives come from it, or NULL */
	/* ep_query's ep_provider_specific while connected (DAT 2.0): what
	 * this connection can do of the IB extensions (ext.c) */
	DAT_NAMED_ATTR ext_attr[DAPL_EXT_NATTR];
};

/* DAT_INVALID_STATE with the subtype naming state. */
DAT_RETURN dapl_ep_state_error(DAT_EP_STATE state);

/* Creates ep->tep if it does not exist yet (needs a PZ and EVDs).
 * ia->lock held. */
DAT_RETURN dapl_ep_ensure_tep(struct dapl_ep *ep);

/* Tears down the transport endpoint (flushing what is posted); the next
 * use makes a new one.  ia->lock held. */
void dapl_ep_drop_tep(struct dapl_ep *ep);

/* Creates an EP on behalf of a PSP with DAT_PSP_PROVIDER_FLAG.  ia->lock
 * held. */
struct dapl_ep *dapl_ep_create_for_psp(struct dapl_ia *ia);

void dapl_ep_destroy(struct dapl_ep *ep); /* ia->lock held */

/* ia closes: EPs of other IAs lose the EVDs of ia they use (share lock
 * held, no IA lock). */
void dapl_ep_detach_evds_of(struct dapl_ia *ia);

/* ---- lmr.c / rmr.c / dto.c: memory and data transfer ------------------------- */

#define DAPL_LMR_TABLE 65536                  /* lmr_context low 16 bits: the slot */

struct dapl_lmr {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_lmr *next;
	struct dapl_pz *pz;
	DAT_LMR_PARAM param;
	uint64_t addr, len;
	struct dapl_tmr *tmr;
	uint32_t lkey;                        /* the transport's local key */
	int users;                            /* RMRs bound into it */
};

/* The live LMR named by lmr_context, or NULL.  Lock free. */
struct dapl_lmr *dapl_lmr_lookup(struct dapl_ia *ia, DAT_LMR_CONTEXT ctx);
/* Whether [addr, addr + len) lies inside lmr. */
bool dapl_lmr_covers(const struct dapl_lmr *lmr, uint64_t addr, uint64_t len);
void dapl_lmr_destroy(struct dapl_lmr *lmr);   /* ia->lock held */
/* Frees the IA's LMR table (close). */
void dapl_lmr_table_free(struct dapl_ia *ia);

struct dapl_rmr {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_rmr *next;
	struct dapl_pz *pz;
	struct dapl_tmw *tmw;
	struct dapl_lmr *lmr;                 /* bound into, or NULL */
	DAT_RMR_PARAM param;
};

void dapl_rmr_destroy(struct dapl_rmr *rmr);   /* ia->lock held */

/* Checks a DTO's local segments (LMRs of pz) and turns them into
 * transport ones.  need: the DAT_MEM_PRIV_LOCAL_* access the operation
 * needs. */
DAT_RETURN dapl_dto_sges(struct dapl_ia *ia, struct dapl_pz *pz, DAT_COUNT n,
			 const DAT_LMR_TRIPLET *iov, unsigned need,
			 struct dapl_tsge *sge, int *nsge, uint64_t *total);

/* Per-direction request bookkeeping of a transport endpoint, or of an
 * SRQ (ep NULL) (dto.c). */
struct dapl_dto_slots *dapl_dto_slots_new(struct dapl_ep *ep, uint32_t n);
/* An SRQ receive: claims a slot (NULL when limit are in use already). */
struct dapl_dto_slot *dapl_dto_claim_recv(struct dapl_dto_slots *s,
					  int limit, DAT_DTO_COOKIE cookie,
					  uint64_t len);
/* Gives back a slot whose post failed. */
void dapl_dto_unclaim(struct dapl_dto_slot *sl);
/* A post on the IA (EP or SRQ): its progress thread holds its spin
 * (cm.c, DAT_PROGRESS_SPIN_US). */
void dapl_dto_note_post(struct dapl_ia *ia);
/* srq_destroy's callback: the transport dropped this receive. */
void dapl_dto_discarded(uint64_t context, void *arg);
/* An SRQ's counts: receives not yet dequeued, and of those the ones not
 * yet completed. */
void dapl_dto_srq_counts(struct dapl_dto_slots *s, DAT_COUNT *outstanding,
			 DAT_COUNT *available);
/* The EP lets go; the slots live on until every completion is in. */
void dapl_dto_slots_put(struct dapl_dto_slots *s, bool ep_gone);
/* Posts a memory-window bind through the EP's request queue (rmr.c). */
DAT_RETURN dapl_dto_post_bind(struct dapl_ep *ep, struct dapl_rmr *rmr,
			      struct dapl_lmr *lmr, uint64_t addr,
			      uint64_t len, unsigned access,
			      DAT_RMR_COOKIE cookie,
			      DAT_COMPLETION_FLAGS flags, uint32_t *rkey);
/* Receives an EP holds and the bytes of their buffers. */
void dapl_dto_recv_query(const struct dapl_dto_slots *s, DAT_COUNT *nbufs,
			 DAT_COUNT *span);
/* Whether the EP has no DTO outstanding in that direction. */
bool dapl_dto_idle(const struct dapl_dto_slots *s);

#if DAT_GEN == 2
/* ---- ext.c: the DAT 2.0 IB extensions (dat_extension_op) -------------------- */

/* An extended request ext.c has checked, for dto.c to post. */
struct dapl_ext_req {
	enum dapl_ext_kind kind;          /* WRITE_IMM, FETCH_ADD or CMP_SWAP */
	DAT_COUNT n;                      /* local segments (atomics: 1, of 8 bytes) */
	DAT_LMR_TRIPLET *iov;
	DAT_DTO_COOKIE cookie;
	const DAT_RMR_TRIPLET *remote;
	DAT_COMPLETION_FLAGS flags;
	int flags_arg;                    /* flgs' argument number, for DAT_INVALID_ARGn */
	uint32_t imm;
	uint64_t add_or_compare, swap;
};

/* Posts req on ep like any request (dto.c): the same state, LMR and flag
 * checks, one request slot, the same completion rules. */
DAT_RETURN dapl_dto_post_ext(struct dapl_ep *ep, const struct dapl_ext_req *req);
/* DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS as ia's device says it can and
 * its transport has the ops for. */
unsigned dapl_ext_offered(const struct dapl_ia *ia);
/* What a connected ep can do now (the transport's ep_extensions, where it
 * has one), within what the IA offers; 0 unconnected. */
unsigned dapl_ext_of_ep(struct dapl_ep *ep);
/* Fills out[DAPL_EXT_NATTR] with DAT_IB_FETCH_AND_ADD, DAT_IB_CMP_AND_SWAP
 * and DAT_IB_IMMED_DATA, "TRUE" or "FALSE" as ext says. */
void dapl_ext_attrs(unsigned ext, DAT_NAMED_ATTR *out);
/* ev, a DTO completion event dto.c filled (status and length included),
 * becomes the DAT_IB_DTO_EVENT of kind; wc (NULL for a flush the core
 * made itself) gives a received immediate. */
void dapl_ext_event(DAT_EVENT *ev, enum dapl_ext_kind kind,
		    const struct dapl_twc *wc);
#endif

/* ---- srq.c: shared receive queues ---------------------------------------------- */

struct dapl_srq {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_srq *next;
	struct dapl_pz *pz;
	struct dapl_tsrq *tsrq;
	DAT_SRQ_PARAM param;                  /* max_recv_dtos, max_recv_iov, low_watermark */
	struct dapl_dto_slots *slots;         /* sized for the device's maximum */
	int users;                            /* EPs on it */
};

void dapl_srq_destroy(struct dapl_srq *srq);   /* ia->lock held; abrupt close */
/* The SRQ whose transport SRQ is tsrq, or NULL.  ia->lock held. */
struct dapl_srq *dapl_srq_of_tsrq(struct dapl_ia *ia, struct dapl_tsrq *tsrq);

/* ---- psp.c / rsp.c: service points ------------------------------------------ */

struct dapl_sp {
	struct dapl_header h;                 /* type PSP or RSP */
	struct dapl_ia *ia;
	struct dapl_sp *next;
	DAT_CONN_QUAL conn_qual;
	struct dapl_evd *evd;
	DAT_PSP_FLAGS psp_flags;              /* PSP only */
	struct dapl_ep *ep;                   /* RSP only */
	struct dapl_tlisten *listener;        /* NULL once an RSP has had its request */
};

/* EVDs shared between IAs (compat.c, libdat(7)).  The share lock is taken
 * before any IA lock, and whoever holds more than one IA lock holds it;
 * dat_ia_close holds it from its teardown to the release, so an IA found
 * on the open list under it stays open. */
void dapl_share_lock(void);
void dapl_share_unlock(void);
/* The open IAs (share lock held): first, and the one after ia. */
struct dapl_ia *dapl_share_first(void);
struct dapl_ia *dapl_share_next(struct dapl_ia *ia);
void dapl_share_add(struct dapl_ia *ia);
void dapl_share_remove(struct dapl_ia *ia);
/* Whether ia is on the open list (share lock held). */
bool dapl_share_is_open(struct dapl_ia *ia);

/* Whether qual may name a service point or a connect's target. */
bool dapl_qual_ok(DAT_CONN_QUAL qual);
/* The CR EVD behind h for a PSP/RSP, or NULL; listening (ia->lock held). */
struct dapl_evd *dapl_sp_evd(struct dapl_ia *ia, DAT_EVD_HANDLE h);
DAT_RETURN dapl_sp_listen(struct dapl_ia *ia, DAT_HANDLE_TYPE type,
			  DAT_CONN_QUAL *qual, struct dapl_evd *evd,
			  struct dapl_sp **out);
void dapl_sp_destroy(struct dapl_sp *sp);

/* ---- cr.c: connection requests ---------------------------------------------- */

struct dapl_cr {
	struct dapl_header h;
	struct dapl_ia *ia;
	struct dapl_cr *next;
	struct dapl_sp *sp;
	struct dapl_tconn *conn;
	DAT_CR_PARAM param;
	struct sockaddr_storage remote_addr;
	struct dapl_read_limits peer_limits;
	uint8_t pdata[256];                   /* exactly the peer consumer's bytes */
	size_t pdata_len;
	struct dapl_ep *ep;                   /* provider-created or RSP EP, else NULL */
};

void dapl_cr_destroy(struct dapl_cr *cr); /* ia->lock held */

/* ---- cm.c -------------------------------------------------------------------- */

/* Starts / stops the IA's progress thread. */
int dapl_cm_start(struct dapl_ia *ia);
void dapl_cm_stop(struct dapl_ia *ia);
/* Wakes the progress thread (to stop it). */
void dapl_cm_kick(struct dapl_ia *ia);
/* For a consumer asleep in dat_evd_wait on a connection or CR EVD: the
 * transport's progress fds (at most max; 0 once the IA is closing), and
 * the progress thread's pass, run by that consumer when they fire, so the
 * event reaches it without a hop through the progress thread.  While any
 * such waiter holds the fds (from a waiter_fds that returned some to its
 * waiter_done) the progress thread does not sleep on them.  The pass
 * returns how many connection events it handed out.  No lock held. */
int dapl_cm_waiter_fds(struct dapl_ia *ia, int *fds, int max);
int dapl_cm_waiter_pump(struct dapl_ia *ia);
void dapl_cm_waiter_done(struct dapl_ia *ia);

/* Consumer calls that need the state machine, ia->lock held. */
DAT_RETURN dapl_cm_connect(struct dapl_ep *ep, const struct sockaddr *addr,
			   DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
			   DAT_COUNT pdata_size, const void *pdata);
DAT_RETURN dapl_cm_accept(struct dapl_cr *cr, struct dapl_ep *ep,
			  DAT_COUNT pdata_size, const void *pdata);
/* pdata: the consumer's reject private data (DAT 2.0; none in 1.2) */
DAT_RETURN dapl_cm_reject(struct dapl_cr *cr, DAT_COUNT pdata_size,
			  const void *pdata);
DAT_RETURN dapl_cm_disconnect(struct dapl_ep *ep, DAT_CLOSE_FLAGS flags);

/* ---- helpers ------------------------------------------------------------------- */

/* A negative errno from a transport as a DAT return code. */
DAT_RETURN dapl_errno_to_dat(int err);

/* One line to stderr/syslog, gated like libdat's own messages
 * (DAT_DBG_TYPE, DAT_DBG_DEST); prefixed "libdat: ". */
void dapl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* DAT_NOT_IMPLEMENTED for a DAT 2.0 call the core does not offer yet,
 * after one line saying which call and why. */
DAT_RETURN dapl_not_implemented(const char *call, const char *why);
/* dapl_dbg (transport.h): the same, for a DAT_DBG_TYPE bit. */

/* ---- compat.c: DAT_STRICT and the OpenFabrics-era behaviours (libdat(7)) -- */

enum dapl_compat {
	DAPL_COMPAT_LOCAL_READ,       /* Send / Write source without LOCAL_READ */
	DAPL_COMPAT_WIDE_QUAL,        /* connection qualifiers > 65535 */
	DAPL_COMPAT_SHARED_EVD,       /* an EVD of another IA of the provider */
	DAPL_COMPAT_COUNT
};

/* DAT_STRICT is set (read once per process). */
bool dapl_strict(void);
/* Whether the relaxed rule c applies (not strict); the first time per
 * process it does, one line through dapl_log says so. */
bool dapl_compat_allow(enum dapl_compat c);
/* The transport port of a connection qualifier: qualifiers up to 65535
 * are their own port, wider ones fold onto 33534..65534, so a nonzero
 * qualifier never maps to port 0. */
uint16_t dapl_qual_port(DAT_CONN_QUAL qual);

/* The private-data maximum a consumer may pass (transport max - header). */
DAT_COUNT dapl_ia_max_pdata(const struct dapl_ia *ia);

/* ---- evd.c / cno.c: provider entry points ----------------------------------- */

DAT_RETURN dapl_evd_create(DAT_IA_HANDLE ia, DAT_COUNT min_qlen,
			   DAT_CNO_HANDLE cno, DAT_EVD_FLAGS flags,
			   DAT_EVD_HANDLE *evd);
DAT_RETURN dapl_evd_query(DAT_EVD_HANDLE evd, DAT_EVD_PARAM_MASK mask,
			  DAT_EVD_PARAM *param);
DAT_RETURN dapl_evd_modify_cno(DAT_EVD_HANDLE evd, DAT_CNO_HANDLE cno);
DAT_RETURN dapl_evd_enable(DAT_EVD_HANDLE evd);
DAT_RETURN dapl_evd_disable(DAT_EVD_HANDLE evd);
DAT_RETURN dapl_evd_wait(DAT_EVD_HANDLE evd, DAT_TIMEOUT timeout,
			 DAT_COUNT threshold, DAT_EVENT *event,
			 DAT_COUNT *nmore);
DAT_RETURN dapl_evd_resize(DAT_EVD_HANDLE evd, DAT_COUNT qlen);
DAT_RETURN dapl_evd_post_se(DAT_EVD_HANDLE evd, const DAT_EVENT *event);
DAT_RETURN dapl_evd_dequeue(DAT_EVD_HANDLE evd, DAT_EVENT *event);
DAT_RETURN dapl_evd_free(DAT_EVD_HANDLE evd);
DAT_RETURN dapl_evd_set_unwaitable(DAT_EVD_HANDLE evd);
DAT_RETURN dapl_evd_clear_unwaitable(DAT_EVD_HANDLE evd);

#if DAT_GEN == 2
/* DAT 2.0's dat_cno_fd_create and dat_cno_trigger (the core has a
 * dapl_cno_trigger of its own), not implemented */
DAT_RETURN dapl_cno_fd_create(DAT_IA_HANDLE ia, DAT_FD *fd,
			      DAT_CNO_HANDLE *cno);
DAT_RETURN dapl_cno_fd_trigger(DAT_CNO_HANDLE cno, DAT_EVD_HANDLE *evd);
#endif
DAT_RETURN dapl_cno_create(DAT_IA_HANDLE ia, DAT_OS_WAIT_PROXY_AGENT agent,
			   DAT_CNO_HANDLE *cno);
DAT_RETURN dapl_cno_modify_agent(DAT_CNO_HANDLE cno,
				 DAT_OS_WAIT_PROXY_AGENT agent);
DAT_RETURN dapl_cno_query(DAT_CNO_HANDLE cno, DAT_CNO_PARAM_MASK mask,
			  DAT_CNO_PARAM *param);
DAT_RETURN dapl_cno_free(DAT_CNO_HANDLE cno);
DAT_RETURN dapl_cno_wait(DAT_CNO_HANDLE cno, DAT_TIMEOUT timeout,
			 DAT_EVD_HANDLE *evd);

/* Between evd.c and cno.c only.  An EVD joins / leaves a CNO's users
 * (ia->lock held; detach also evd->lock); freed = the EVD is going away,
 * which unblocks the CNO's waiter with a NULL EVD when it was the last. */
void dapl_cno_attach(struct dapl_cno *cno);
void dapl_cno_detach(struct dapl_cno *cno, struct dapl_evd *evd, bool freed);
/* dat_cno_wait's look at one EVD (ia->lock held): when evd feeds cno and
 * may notify, arms its CQs, moves what they hold into the ring
 * (triggering cno if that was anything) and puts the CQs' wait fds in
 * pfd (at most room); returns how many fds it has (0 when it does not
 * feed cno), which may be more than room. */
int dapl_evd_cno_arm(struct dapl_evd *evd, struct dapl_cno *cno,
		     struct pollfd *pfd, int room);
/* Whether evd feeds cno, may notify it and has an event for
 * dat_evd_dequeue right now (completions in its CQ are moved into its
 * queue to find out).  ia->lock held, no evd or cno lock. */
bool dapl_evd_cno_ready(struct dapl_evd *evd, struct dapl_cno *cno);

#endif
