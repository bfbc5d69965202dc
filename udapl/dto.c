/* Data transfer: posting DTOs and turning their completions into events.
 *
 * Each transport endpoint direction gets a table of request slots; the
 * context a transport carries is the slot's address.  Slots are claimed
 * with one compare-and-swap and freed when the completion is converted, so
 * the post and completion paths allocate nothing and take no lock of the
 * core's (the transport takes its own, one).  A slot table outlives its
 * EP until the last completion of it has come back: flushes of a freed EP
 * are then dropped instead of reading freed memory.
 *
 * An SRQ has a table of its own (ep NULL): its receive completes on the
 * EP that took it, which the transport names (dapl_twc.owner), and stays
 * outstanding until the consumer dequeues its event, so the EVD holds the
 * slot until then (dapl_dto_hold_release). */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "entry.h"

#define DTO_MAX_SGE 32

/* DTO_EXT: a DAT 2.0 extended request (dapl_dto_slot.ext says which). */
enum dto_kind { DTO_SEND, DTO_RECV, DTO_READ, DTO_WRITE, DTO_BIND, DTO_EXT };

/* The remote address of an RMR triplet: DAT 2.0 renamed the member. */
#if DAT_GEN == 2
#define RMR_TRIPLET_ADDRESS(t) ((t)->virtual_address)
#else
#define RMR_TRIPLET_ADDRESS(t) ((t)->target_address)
#endif

struct dapl_dto_slot {
	atomic_bool busy;
	uint8_t kind;
	uint8_t ext;              /* DTO_EXT: enum dapl_ext_kind */
	bool suppress;
	DAT_DTO_COOKIE cookie;
	uint64_t len;
	struct dapl_rmr *rmr;
	struct dapl_dto_slots *table;
};

struct dapl_dto_slots {
	struct dapl_ep *ep;       /* NULL: an SRQ's */
	atomic_int refs;          /* 1 for the EP + one per slot in use */
	atomic_int used;          /* SRQ: slots in use (dapl_dto_claim_recv) */
	atomic_int held;          /* SRQ: completed, event not yet dequeued */
	atomic_bool ep_gone;
	atomic_uint hint;
	uint32_t n;
	struct dapl_dto_slot slot[];
};

struct dapl_dto_slots *dapl_dto_slots_new(struct dapl_ep *ep, uint32_t n)
{
	struct dapl_dto_slots *s;
	uint32_t i;

	if (n == 0)
		n = 1;
	s = calloc(1, sizeof(*s) + n * sizeof(s->slot[0]));
	if (!s)
		return NULL;
	s->ep = ep;
	s->n = n;
	atomic_init(&s->refs, 1);
	for (i = 0; i < n; i++)
		s->slot[i].table = s;
	return s;
}

static void slots_unref(struct dapl_dto_slots *s)
{
	if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1)
		free(s);
}

void dapl_dto_slots_put(struct dapl_dto_slots *s, bool ep_gone)
{
	if (!s)
		return;
	if (ep_gone)
		atomic_store(&s->ep_gone, true);
	slots_unref(s);
}

bool dapl_dto_idle(const struct dapl_dto_slots *s)
{
	return !s || atomic_load(&((struct dapl_dto_slots *)s)->refs) <= 1;
}

static struct dapl_dto_slot *slot_claim(struct dapl_dto_slots *s)
{
	uint32_t start = atomic_fetch_add_explicit(&s->hint, 1, memory_order_relaxed);
	uint32_t i;

	for (i = 0; i < s->n; i++) {
		struct dapl_dto_slot *sl = &s->slot[(start + i) % s->n];
		bool expect = false;

		if (atomic_compare_exchange_strong(&sl->busy, &expect, true)) {
			atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
			return sl;
		}
	}
	return NULL;
}

static void slot_release(struct dapl_dto_slot *sl)
{
	struct dapl_dto_slots *s = sl->table;

	if (!s->ep)     /* only an SRQ's table counts */
		atomic_fetch_sub_explicit(&s->used, 1, memory_order_relaxed);
	atomic_store_explicit(&sl->busy, false, memory_order_release);
	slots_unref(s);
}

struct dapl_dto_slot *dapl_dto_claim_recv(struct dapl_dto_slots *s,
					  int limit, DAT_DTO_COOKIE cookie,
					  uint64_t len)
{
	struct dapl_dto_slot *sl;

	/* reserve against the limit first, so racing posts cannot pass it */
	if (atomic_fetch_add(&s->used, 1) >= limit) {
		atomic_fetch_sub(&s->used, 1);
		return NULL;
	}
	sl = slot_claim(s);
	if (!sl) {
		atomic_fetch_sub(&s->used, 1);
		return NULL;
	}
	sl->kind = DTO_RECV;
	sl->ext = DAPL_EXT_NONE;
	sl->cookie = cookie;
	sl->len = len;
	sl->rmr = NULL;
	sl->suppress = false;
	return sl;
}

void dapl_dto_unclaim(struct dapl_dto_slot *sl)
{
	slot_release(sl);
}

void dapl_dto_discarded(uint64_t context, void *arg)
{
	(void)arg;
	if (context)
		slot_release((struct dapl_dto_slot *)(uintptr_t)context);
}

void dapl_dto_hold_release(struct dapl_dto_slot *sl)
{
	atomic_fetch_sub(&sl->table->held, 1);
	slot_release(sl);
}

void dapl_dto_srq_counts(struct dapl_dto_slots *s, DAT_COUNT *outstanding,
			 DAT_COUNT *available)
{
	int used = atomic_load(&s->used), held = atomic_load(&s->held);

	if (outstanding)
		*outstanding = used;
	if (available)
		*available = used > held ? used - held : 0;
}

static DAT_DTO_COMPLETION_STATUS wc_status(enum dapl_twc_status st)
{
	switch (st) {
	case DAPL_TWC_SUCCESS: return DAT_DTO_SUCCESS;
	case DAPL_TWC_FLUSHED: return DAT_DTO_ERR_FLUSHED;
	case DAPL_TWC_LOCAL_LENGTH: return DAT_DTO_ERR_LOCAL_LENGTH;
	case DAPL_TWC_LOCAL_PROTECTION: return DAT_DTO_ERR_LOCAL_PROTECTION;
	case DAPL_TWC_LOCAL_EP: return DAT_DTO_ERR_LOCAL_EP;
	case DAPL_TWC_REMOTE_ACCESS: return DAT_DTO_ERR_REMOTE_ACCESS;
	case DAPL_TWC_REMOTE_OP: return DAT_DTO_ERR_REMOTE_RESPONDER;
	case DAPL_TWC_BAD_RESPONSE: return DAT_DTO_ERR_BAD_RESPONSE;
	case DAPL_TWC_RETRY_EXCEEDED: return DAT_DTO_ERR_TRANSPORT;
	case DAPL_TWC_RNR: return DAT_DTO_ERR_RECEIVER_NOT_READY;
	default: return DAT_DTO_ERR_TRANSPORT;
	}
}

#if DAT_GEN == 2
/* DAT 2.0 completions say which operation completed. */
static DAT_DTOS dto_operation(enum dto_kind kind)
{
	switch (kind) {
	case DTO_RECV: return DAT_DTO_RECEIVE;
	case DTO_READ: return DAT_DTO_RDMA_READ;
	case DTO_WRITE: return DAT_DTO_RDMA_WRITE;
	default: return DAT_DTO_SEND;
	}
}
#endif

/* An SRQ receive's completion: it names the EP that took it. */
static bool srq_wc_to_event(struct dapl_evd *evd, struct dapl_dto_slot *sl,
			    const struct dapl_twc *wc, DAT_EVENT *ev,
			    struct dapl_dto_slot **hold)
{
	DAT_DTO_COMPLETION_EVENT_DATA *d = &ev->event_data.dto_completion_event_data;
	DAT_DTO_COMPLETION_STATUS status = wc_status(wc->status);

	/* owner 0: the EP was freed first, and its event with it */
	if (!wc->owner || !hold) {
		slot_release(sl);
		return false;
	}
	ev->evd_handle = evd;
	ev->event_number = DAT_DTO_COMPLETION_EVENT;
	d->ep_handle = (DAT_EP_HANDLE)(uintptr_t)wc->owner;
	d->user_cookie = sl->cookie;
	d->status = status;
	d->transfered_length = status == DAT_DTO_SUCCESS ? wc->byte_len : 0;
#if DAT_GEN == 2
	d->operation = DAT_DTO_RECEIVE;
	d->rmr_context = 0;
	/* imm is read for this opcode only: transports leave it unset on
	 * others */
	if (wc->opcode == DAPL_TWC_RECV_RDMA_IMM)
		dapl_ext_event(ev, DAPL_EXT_RECV_IMM, wc);
#endif
	atomic_fetch_add(&sl->table->held, 1);
	*hold = sl;
	return true;
}


bool dapl_dto_wc_to_event(struct dapl_evd *evd, const struct dapl_twc *wc,
			  DAT_EVENT *ev, struct dapl_dto_slot **hold)
{
	struct dapl_dto_slot *sl = (struct dapl_dto_slot *)(uintptr_t)wc->context;
	DAT_DTO_COMPLETION_STATUS status;
	bool deliver;

	if (hold)
		*hold = NULL;
	if (!sl)
		return false;
	if (!sl->table->ep)
		return srq_wc_to_event(evd, sl, wc, ev, hold);
	status = wc_status(wc->status);
	deliver = !atomic_load(&sl->table->ep_gone) &&
		  !(sl->suppress && status == DAT_DTO_SUCCESS);
	if (deliver) {
		ev->evd_handle = evd;
		if (sl->kind == DTO_BIND) {
			ev->event_number = DAT_RMR_BIND_COMPLETION_EVENT;
			ev->event_data.rmr_completion_event_data.rmr_handle = sl->rmr;
			ev->event_data.rmr_completion_event_data.user_cookie = sl->cookie;
			ev->event_data.rmr_completion_event_data.status =
				status == DAT_DTO_SUCCESS ? DAT_DTO_SUCCESS :
				DAT_RMR_OPERATION_FAILED;
		} else {
			DAT_DTO_COMPLETION_EVENT_DATA *d =
				&ev->event_data.dto_completion_event_data;

			ev->event_number = DAT_DTO_COMPLETION_EVENT;
			d->ep_handle = sl->table->ep;
			d->user_cookie = sl->cookie;
			d->status = status;
			d->transfered_length = sl->kind == DTO_RECV ?
				(status == DAT_DTO_SUCCESS ? wc->byte_len : 0) :
				sl->len;
#if DAT_GEN == 2
			d->operation = dto_operation(sl->kind);
			d->rmr_context = 0;	/* no send with invalidate */
			if (sl->kind == DTO_EXT)
				dapl_ext_event(ev, (enum dapl_ext_kind)sl->ext, wc);
			else if (sl->kind == DTO_RECV &&
				 wc->opcode == DAPL_TWC_RECV_RDMA_IMM)
				/* a peer's write with immediate took it */
				dapl_ext_event(ev, DAPL_EXT_RECV_IMM, wc);
#endif
		}
	}
	slot_release(sl);
	return deliver;
}

/* Every verbs device lets a QP read any memory registered on its PD, and
 * OpenFabrics-era programs register send buffers with LOCAL_WRITE alone:
 * local read is implied unless DAT_STRICT is set (libdat(7)).  Only the
 * read privilege is implied; the LMR still has to exist, be of the PZ and
 * cover the segment. */
static bool local_read_implied(const struct dapl_lmr *lmr, unsigned need)
{
	unsigned missing = need & ~(unsigned)lmr->param.mem_priv;

	return missing == DAT_MEM_PRIV_LOCAL_READ_FLAG &&
	       dapl_compat_allow(DAPL_COMPAT_LOCAL_READ);
}

DAT_RETURN dapl_dto_sges(struct dapl_ia *ia, struct dapl_pz *pz, DAT_COUNT n,
			 const DAT_LMR_TRIPLET *iov, unsigned need,
			 struct dapl_tsge *sge, int *nsge, uint64_t *total)
{
	struct dapl_lmr *lmr;
	DAT_COUNT i;
	int k = 0;

	*total = 0;
	for (i = 0; i < n; i++) {
		const DAT_LMR_TRIPLET *t = &iov[i];

		if (t->segment_length == 0)
			continue;
		/* The codes DAT 1.2 gives: an unknown LMR or a missing
		 * privilege, a PZ mismatch, memory outside the LMR. */
		lmr = dapl_lmr_lookup(ia, t->lmr_context);
		if (!lmr)
			return DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0);
		if ((lmr->param.mem_priv & need) != need &&
		    !local_read_implied(lmr, need))
			return DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0);
		if (lmr->pz != pz)
			return DAT_ERROR(DAT_PROTECTION_VIOLATION, 0);
		if (!dapl_lmr_covers(lmr, t->virtual_address, t->segment_length))
			return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
		if (t->segment_length > UINT32_MAX)
			return DAT_ERROR(DAT_LENGTH_ERROR, 0);
		sge[k].addr = t->virtual_address;
		sge[k].length = (uint32_t)t->segment_length;
		sge[k].lkey = lmr->lkey;
		sge[k].mr = lmr->tmr;
		*total += t->segment_length;
		k++;
	}
	*nsge = k;
#if DAT_GEN == 2
	/* a 2.0 completion reports the length in 32 bits */
	if (*total > UINT32_MAX)
		return DAT_ERROR(DAT_LENGTH_ERROR, 0);
#endif
	return DAT_SUCCESS;
}

static struct dapl_ep *ep_get(DAT_EP_HANDLE h)
{
	return (struct dapl_ep *)dapl_handle_get(h, DAT_HANDLE_TYPE_EP);
}

#define BAD_EP DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP)

static DAT_RETURN post_error(int err)
{
	if (err == -ENOSPC || err == -EAGAIN || err == -ENOMEM)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	if (err == -ENOTCONN)
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_DISCONNECTED);
	return dapl_errno_to_dat(err);
}

/* The consumer is at work on this IA: the progress thread does not spin
 * for a while (cm.c).  Written only when clear, so that the threads
 * posting on a busy IA only read its line. */
void dapl_dto_note_post(struct dapl_ia *ia)
{
	if (ia->spin_ns &&
	    !atomic_load_explicit(&ia->posted, memory_order_relaxed))
		atomic_store_explicit(&ia->posted, true, memory_order_relaxed);
}

/* The checks every request post shares.  Returns the slot to use. */
static DAT_RETURN request_prepare(struct dapl_ep *ep, DAT_COUNT n,
				  DAT_LMR_TRIPLET *iov,
				  DAT_COMPLETION_FLAGS flags, int flags_arg,
				  unsigned need, struct dapl_tsge *sge,
				  int *nsge, uint64_t *total,
				  struct dapl_dto_slot **slot)
{
	const unsigned known = DAT_COMPLETION_SUPPRESS_FLAG |
		DAT_COMPLETION_SOLICITED_WAIT_FLAG |
		DAT_COMPLETION_UNSIGNALLED_FLAG |
		DAT_COMPLETION_BARRIER_FENCE_FLAG;
	DAT_EP_STATE state = ep->param.ep_state;
	DAT_RETURN rc;

	dapl_dto_note_post(ep->ia);
	if (n < 0 || n > ep->param.ep_attr.max_request_iov || n > DTO_MAX_SGE ||
	    (n > 0 && !iov))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if ((unsigned)flags & ~known)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + flags_arg - 1);
	if ((flags & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
	    !(ep->param.ep_attr.request_completion_flags &
	      DAT_COMPLETION_UNSIGNALLED_FLAG))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1 + flags_arg - 1);
	*slot = NULL;
	if (state == DAT_EP_STATE_DISCONNECTED && ep->request_evd)
		/* accepted, with no slot: flushed at once (flush_at_once) */
		return dapl_dto_sges(ep->ia, ep->pz, n, iov, need, sge, nsge, total);
	if (state != DAT_EP_STATE_CONNECTED || !ep->tep || !ep->req_slots)
		return dapl_ep_state_error(state);
	if (!ep->request_evd)
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
	rc = dapl_dto_sges(ep->ia, ep->pz, n, iov, need, sge, nsge, total);
	if (rc != DAT_SUCCESS)
		return rc;
	*slot = slot_claim(ep->req_slots);
	if (!*slot)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	(*slot)->suppress = (flags & (DAT_COMPLETION_SUPPRESS_FLAG |
				      DAT_COMPLETION_UNSIGNALLED_FLAG)) != 0;
	(*slot)->len = *total;
	(*slot)->rmr = NULL;
	(*slot)->ext = DAPL_EXT_NONE;
	return DAT_SUCCESS;
}

/* DAT 1.2: a DTO posted on a DISCONNECTED EP is accepted and flushed at
 * once (request_prepare then gives no slot). */
static DAT_RETURN flush_ext_at_once(struct dapl_ep *ep, struct dapl_evd *evd,
				    DAT_DTO_COOKIE cookie,
				    enum dapl_ext_kind ext)
{
	DAT_EVENT ev;

	memset(&ev, 0, sizeof(ev));
	ev.event_number = DAT_DTO_COMPLETION_EVENT;
	ev.evd_handle = evd;
	ev.event_data.dto_completion_event_data.ep_handle = ep;
	ev.event_data.dto_completion_event_data.user_cookie = cookie;
	ev.event_data.dto_completion_event_data.status = DAT_DTO_ERR_FLUSHED;
#if DAT_GEN == 2
	if (ext != DAPL_EXT_NONE)
		dapl_ext_event(&ev, ext, NULL);
#else
	(void)ext;
#endif
	dapl_evd_post(evd, &ev);
	return DAT_SUCCESS;
}

static DAT_RETURN flush_at_once(struct dapl_ep *ep, struct dapl_evd *evd,
				DAT_DTO_COOKIE cookie)
{
	return flush_ext_at_once(ep, evd, cookie, DAPL_EXT_NONE);
}

static unsigned tpost_flags(DAT_COMPLETION_FLAGS flags)
{
	/* Always signalled: the completion gives the slot back; a
	 * suppressed or unsignalled success just makes no event. */
	unsigned f = DAPL_TPOST_SIGNALED;

	if (flags & DAT_COMPLETION_SOLICITED_WAIT_FLAG)
		f |= DAPL_TPOST_SOLICITED;
	if (flags & DAT_COMPLETION_BARRIER_FENCE_FLAG)
		f |= DAPL_TPOST_FENCE;
	return f;
}

DAT_RETURN dapl_ep_post_send(DAT_EP_HANDLE h, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			     DAT_COMPLETION_FLAGS flags)
{
	struct dapl_ep *ep = ep_get(h);
	struct dapl_tsge sge[DTO_MAX_SGE];
	struct dapl_dto_slot *sl;
	uint64_t total;
	DAT_RETURN rc;
	int nsge, err;

	if (!ep)
		return BAD_EP;
	rc = request_prepare(ep, n, iov, flags, 5, DAT_MEM_PRIV_LOCAL_READ_FLAG,
			     sge, &nsge, &total, &sl);
	if (rc != DAT_SUCCESS)
		return rc;
	if (!sl)
		return flush_at_once(ep, ep->request_evd, cookie);
	sl->kind = DTO_SEND;
	sl->cookie = cookie;
	err = ep->ia->ops->post_send(ep->tep, sge, nsge, (uint64_t)(uintptr_t)sl,
				     tpost_flags(flags));
	if (err) {
		slot_release(sl);
		return post_error(err);
	}
	return DAT_SUCCESS;
}

static DAT_RETURN post_rdma(DAT_EP_HANDLE h, DAT_COUNT n, DAT_LMR_TRIPLET *iov,
			    DAT_DTO_COOKIE cookie, const DAT_RMR_TRIPLET *remote,
			    DAT_COMPLETION_FLAGS flags, bool read)
{
	struct dapl_ep *ep = ep_get(h);
	struct dapl_tsge sge[DTO_MAX_SGE];
	struct dapl_dto_slot *sl;
	uint64_t total;
	DAT_RETURN rc;
	int nsge, err;

	if (!ep)
		return BAD_EP;
	if (!remote)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	/* The segments a Read scatters into are bounded by the EP's
	 * max_rdma_read_iov (when set) and by the device (iWARP devices
	 * often allow one), whatever the EP asked for. */
	if (read && ((ep->param.ep_attr.max_rdma_read_iov > 0 &&
		      n > ep->param.ep_attr.max_rdma_read_iov) ||
		     (ep->ia->dev_attr.max_sge_rd &&
		      (uint32_t)n > ep->ia->dev_attr.max_sge_rd)))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	/* A remote range that wraps past 2^64 names no memory anywhere; it
	 * is never sent (libfabric 1.17's own target check wraps and would
	 * copy there: dapl_ofi(3)). */
	if (remote->segment_length &&
	    RMR_TRIPLET_ADDRESS(remote) > UINT64_MAX - (remote->segment_length - 1))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	rc = request_prepare(ep, n, iov, flags, 6,
			     read ? DAT_MEM_PRIV_LOCAL_WRITE_FLAG :
				    DAT_MEM_PRIV_LOCAL_READ_FLAG,
			     sge, &nsge, &total, &sl);
	if (rc != DAT_SUCCESS)
		return rc;
	if (!sl)
		return flush_at_once(ep, ep->request_evd, cookie);
	if (total > remote->segment_length) {
		slot_release(sl);
		return DAT_ERROR(DAT_LENGTH_ERROR, 0);
	}
	sl->kind = read ? DTO_READ : DTO_WRITE;
	sl->cookie = cookie;
	if (read)
		err = ep->ia->ops->post_rdma_read(ep->tep, sge, nsge,
						  RMR_TRIPLET_ADDRESS(remote),
						  remote->rmr_context,
						  (uint64_t)(uintptr_t)sl,
						  tpost_flags(flags));
	else
		err = ep->ia->ops->post_rdma_write(ep->tep, sge, nsge,
						   RMR_TRIPLET_ADDRESS(remote),
						   remote->rmr_context,
						   (uint64_t)(uintptr_t)sl,
						   tpost_flags(flags));
	if (err) {
		slot_release(sl);
		return post_error(err);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dapl_ep_post_rdma_read(DAT_EP_HANDLE ep, DAT_COUNT n,
				  DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				  const DAT_RMR_TRIPLET *remote,
				  DAT_COMPLETION_FLAGS flags)
{
	return post_rdma(ep, n, iov, cookie, remote, flags, true);
}

DAT_RETURN dapl_ep_post_rdma_write(DAT_EP_HANDLE ep, DAT_COUNT n,
				   DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				   const DAT_RMR_TRIPLET *remote,
				   DAT_COMPLETION_FLAGS flags)
{
	return post_rdma(ep, n, iov, cookie, remote, flags, false);
}

DAT_RETURN dapl_ep_post_recv(DAT_EP_HANDLE h, DAT_COUNT n,
			     DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
			     DAT_COMPLETION_FLAGS flags)
{
	struct dapl_ep *ep = ep_get(h);
	struct dapl_tsge sge[DTO_MAX_SGE];
	struct dapl_dto_slot *sl;
	DAT_EP_STATE state;
	uint64_t total;
	DAT_RETURN rc;
	int nsge, err;

	if (!ep)
		return BAD_EP;
	if (ep->srq)    /* its receives come from the SRQ only */
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	if (n < 0 || n > ep->param.ep_attr.max_recv_iov || n > DTO_MAX_SGE ||
	    (n > 0 && !iov))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if ((unsigned)flags & ~(unsigned)(DAT_COMPLETION_SUPPRESS_FLAG |
					  DAT_COMPLETION_UNSIGNALLED_FLAG |
					  DAT_COMPLETION_EVD_THRESHOLD_FLAG))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	if ((flags & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
	    !(ep->param.ep_attr.recv_completion_flags &
	      DAT_COMPLETION_UNSIGNALLED_FLAG))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
	state = ep->param.ep_state;
	if ((state == DAT_EP_STATE_DISCONNECTED ||
	     state == DAT_EP_STATE_DISCONNECT_PENDING) && ep->recv_evd) {
		rc = dapl_dto_sges(ep->ia, ep->pz, n, iov, DAT_MEM_PRIV_LOCAL_WRITE_FLAG,
				   sge, &nsge, &total);
		return rc == DAT_SUCCESS ? flush_at_once(ep, ep->recv_evd, cookie) : rc;
	}
	if (!ep->tep) {
		/* Receives may come before the connection: make the
		 * transport endpoint now (under the IA lock, once). */
		pthread_mutex_lock(&ep->ia->lock);
		rc = ep->recv_evd ? dapl_ep_ensure_tep(ep) :
			DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
		pthread_mutex_unlock(&ep->ia->lock);
		if (rc != DAT_SUCCESS)
			return rc;
	}
	if (!ep->recv_evd)
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
	rc = dapl_dto_sges(ep->ia, ep->pz, n, iov, DAT_MEM_PRIV_LOCAL_WRITE_FLAG, sge, &nsge,
			   &total);
	if (rc != DAT_SUCCESS)
		return rc;
	sl = slot_claim(ep->recv_slots);
	if (!sl)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	sl->kind = DTO_RECV;
	sl->ext = DAPL_EXT_NONE;
	sl->cookie = cookie;
	sl->len = total;
	sl->rmr = NULL;
	sl->suppress = (flags & (DAT_COMPLETION_SUPPRESS_FLAG |
				 DAT_COMPLETION_UNSIGNALLED_FLAG)) != 0;
	dapl_dto_note_post(ep->ia);
	err = ep->ia->ops->post_recv(ep->tep, sge, nsge, (uint64_t)(uintptr_t)sl);
	if (err) {
		slot_release(sl);
		return post_error(err);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dapl_dto_post_bind(struct dapl_ep *ep, struct dapl_rmr *rmr,
			      struct dapl_lmr *lmr, uint64_t addr,
			      uint64_t len, unsigned access,
			      DAT_RMR_COOKIE cookie,
			      DAT_COMPLETION_FLAGS flags, uint32_t *rkey)
{
	struct dapl_dto_slot *sl;
	int err;

	if (ep->param.ep_state != DAT_EP_STATE_CONNECTED || !ep->tep ||
	    !ep->req_slots)
		return dapl_ep_state_error(ep->param.ep_state);
	sl = slot_claim(ep->req_slots);
	if (!sl)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_TEP);
	sl->kind = DTO_BIND;
	sl->ext = DAPL_EXT_NONE;
	sl->cookie = cookie;
	sl->len = 0;
	sl->rmr = rmr;
	sl->suppress = (flags & (DAT_COMPLETION_SUPPRESS_FLAG |
				 DAT_COMPLETION_UNSIGNALLED_FLAG)) != 0;
	err = ep->ia->ops->mw_bind(ep->tep, rmr->tmw, lmr ? lmr->tmr : NULL,
				   addr, len, access, (uint64_t)(uintptr_t)sl,
				   tpost_flags(flags), rkey);
	if (err) {
		slot_release(sl);
		return post_error(err);
	}
	return DAT_SUCCESS;
}

void dapl_dto_recv_query(const struct dapl_dto_slots *s, DAT_COUNT *nbufs,
			 DAT_COUNT *span)
{
	DAT_COUNT n = 0;
	uint64_t bytes = 0;
	uint32_t i;

	for (i = 0; s && i < s->n; i++) {
		if (atomic_load(&((struct dapl_dto_slots *)s)->slot[i].busy)) {
			n++;
			bytes += s->slot[i].len;
		}
	}
	if (nbufs)
		*nbufs = n;
	if (span)
		*span = bytes > INT32_MAX ? INT32_MAX : (DAT_COUNT)bytes;
}

#if DAT_GEN == 2
/* Without invalidation this is a plain Send; invalidating the peer's RMR
 * needs a transport operation none of ours has yet. */
DAT_RETURN dapl_ep_post_send_with_invalidate(DAT_EP_HANDLE h, DAT_COUNT n,
					     DAT_LMR_TRIPLET *iov,
					     DAT_DTO_COOKIE cookie,
					     DAT_COMPLETION_FLAGS flags,
					     DAT_BOOLEAN invalidate,
					     DAT_RMR_CONTEXT rmr_context)
{
	(void)rmr_context;
	if (!invalidate)
		return dapl_ep_post_send(h, n, iov, cookie, flags);
	return dapl_not_implemented("dat_ep_post_send_with_invalidate",
				    "no transport invalidates a remote RMR");
}

DAT_RETURN dapl_ep_post_rdma_read_to_rmr(DAT_EP_HANDLE h,
					 const DAT_RMR_TRIPLET *local,
					 DAT_DTO_COOKIE cookie,
					 const DAT_RMR_TRIPLET *remote,
					 DAT_COMPLETION_FLAGS flags)
{
	(void)h; (void)local; (void)cookie; (void)remote; (void)flags;
	return dapl_not_implemented("dat_ep_post_rdma_read_to_rmr",
				    "reads land in LMRs only (no RMR as local buffer)");
}
#endif

#if DAT_GEN == 2
DAT_RETURN dapl_dto_post_ext(struct dapl_ep *ep, const struct dapl_ext_req *rq)
{
	const struct udapl_transport_ops *ops = ep->ia->ops;
	const DAT_RMR_TRIPLET *r = rq->remote;
	struct dapl_tsge sge[DTO_MAX_SGE];
	struct dapl_dto_slot *sl;
	bool atomic = rq->kind != DAPL_EXT_WRITE_IMM;
	uint64_t total, ctx;
	DAT_RETURN rc;
	int nsge, err;

	/* an atomic writes the original value into its local buffer */
	rc = request_prepare(ep, rq->n, rq->iov, rq->flags, rq->flags_arg,
			     atomic ? DAT_MEM_PRIV_LOCAL_WRITE_FLAG :
				      DAT_MEM_PRIV_LOCAL_READ_FLAG,
			     sge, &nsge, &total, &sl);
	if (rc != DAT_SUCCESS)
		return rc;
	if (!sl)
		return flush_ext_at_once(ep, ep->request_evd, rq->cookie,
					 rq->kind);
	if (total > r->segment_length || (atomic && nsge != 1)) {
		slot_release(sl);
		return DAT_ERROR(DAT_LENGTH_ERROR, 0);
	}
	sl->kind = DTO_EXT;
	sl->ext = (uint8_t)rq->kind;
	sl->cookie = rq->cookie;
	ctx = (uint64_t)(uintptr_t)sl;
	if (atomic)
		err = ops->post_atomic(ep->tep,
				       rq->kind == DAPL_EXT_FETCH_ADD ?
				       DAPL_TATOMIC_FETCH_ADD :
				       DAPL_TATOMIC_CMP_SWAP,
				       &sge[0], RMR_TRIPLET_ADDRESS(r),
				       r->rmr_context, rq->add_or_compare,
				       rq->swap, ctx, tpost_flags(rq->flags));
	else
		err = ops->post_rdma_write_imm(ep->tep, sge, nsge,
					       RMR_TRIPLET_ADDRESS(r),
					       r->rmr_context, rq->imm, ctx,
					       tpost_flags(rq->flags));
	if (err) {
		slot_release(sl);
		/* the connection cannot do it (a peer without the extension) */
		if (err == -EOPNOTSUPP)
			return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
		return post_error(err);
	}
	return DAT_SUCCESS;
}
#endif
