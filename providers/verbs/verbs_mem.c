/* Protection domains, registrations and memory windows. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "verbs.h"

int verbs_pd_alloc(struct dapl_tdev *dev, struct dapl_tpd **out)
{
	struct dapl_tpd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return -ENOMEM;
	pd->dev = dev;
	pd->pd = ibv_alloc_pd(dev->ctx);
	if (!pd->pd) {
		int err = errno ? errno : ENOMEM;

		free(pd);
		return -err;
	}
	*out = pd;
	return 0;
}

int verbs_pd_free(struct dapl_tpd *pd)
{
	int err;

	if (!pd)
		return -EINVAL;
	err = ibv_dealloc_pd(pd->pd);
	if (err)
		return -err;
	free(pd);
	return 0;
}

int verbs_mr_access(const struct dapl_tdev *dev, unsigned access)
{
	int a = 0;

	/* verbs wants local write wherever a remote side may write */
	if (access & (DAPL_TACCESS_LOCAL_WRITE | DAPL_TACCESS_REMOTE_WRITE))
		a |= IBV_ACCESS_LOCAL_WRITE;
	if (access & DAPL_TACCESS_REMOTE_WRITE)
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (access & DAPL_TACCESS_REMOTE_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	/* asked of a device without atomics (programs ask for it on every
	 * buffer, siw included): left out, and no atomic ever targets it */
	if ((access & DAPL_TACCESS_REMOTE_ATOMIC) &&
	    (dev->ext & DAPL_TDEV_ATOMICS))
		a |= IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_LOCAL_WRITE;
	/* any LMR may get an RMR bound into it */
	if (dev->mw_type)
		a |= IBV_ACCESS_MW_BIND;
	return a;
}

int verbs_mr_reg(struct dapl_tpd *pd, void *addr, uint64_t len,
		 unsigned access, struct dapl_tmr **out, uint32_t *lkey,
		 uint32_t *rkey)
{
	struct dapl_tmr *mr;

	if (!pd || !out || (!addr && len))
		return -EINVAL;
	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	mr->pd = pd;
	mr->mr = ibv_reg_mr(pd->pd, addr, (size_t)len,
			    verbs_mr_access(pd->dev, access));
	if (!mr->mr) {
		int err = errno ? errno : ENOMEM;

		free(mr);
		return -err;
	}
	if (lkey)
		*lkey = mr->mr->lkey;
	if (rkey)
		*rkey = mr->mr->rkey;
	*out = mr;
	return 0;
}

int verbs_mr_dereg(struct dapl_tmr *mr)
{
	int err;

	if (!mr)
		return -EINVAL;
	err = ibv_dereg_mr(mr->mr);
	if (err)
		return -err;
	free(mr);
	return 0;
}

int verbs_mw_alloc(struct dapl_tpd *pd, struct dapl_tmw **out)
{
	struct dapl_tmw *mw;

	if (!pd || !out)
		return -EINVAL;
	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return -ENOMEM;
	mw->pd = pd;
	if (pd->dev->mw_type) {
		mw->mw = ibv_alloc_mw(pd->pd, pd->dev->mw_type);
		if (!mw->mw) {
			int err = errno ? errno : ENOMEM;

			free(mw);
			return -err;
		}
		mw->rkey = mw->mw->rkey;
	}
	*out = mw;
	return 0;
}

int verbs_mw_free(struct dapl_tmw *mw)
{
	int err = 0;

	if (!mw)
		return -EINVAL;
	if (mw->mw)
		err = ibv_dealloc_mw(mw->mw);
	if (mw->emr)
		ibv_dereg_mr(mw->emr);
	free(mw);
	return err ? -err : 0;
}

static int mw_access(const struct dapl_tdev *dev, unsigned access)
{
	int a = 0;

	if (access & DAPL_TACCESS_REMOTE_READ)
		a |= IBV_ACCESS_REMOTE_READ;
	if (access & DAPL_TACCESS_REMOTE_WRITE)
		a |= IBV_ACCESS_REMOTE_WRITE;
	if ((access & DAPL_TACCESS_REMOTE_ATOMIC) &&
	    (dev->ext & DAPL_TDEV_ATOMICS))
		a |= IBV_ACCESS_REMOTE_ATOMIC;
	return a;
}

/* scq->lock held: a window emulated by registering the range; the bind
 * completes at once. */
static int bind_emulated(struct dapl_tep *ep, struct dapl_tmw *mw,
			 uint64_t addr, uint64_t len, unsigned access,
			 uint64_t context, unsigned flags, uint32_t *rkey)
{
	struct ibv_mr *mr = NULL;
	struct verbs_slot *s;
	int err;

	s = verbs_send_claim(ep, DAPL_TWC_BIND_MW, context, flags, 0, &err);
	if (!s)
		return err;
	if (len) {
		int a = mw_access(ep->dev, access);

		if (a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC))
			a |= IBV_ACCESS_LOCAL_WRITE;
		mr = ibv_reg_mr(mw->pd->pd, (void *)(uintptr_t)addr, (size_t)len, a);
		if (!mr) {
			err = errno ? errno : ENOMEM;
			verbs_queue_unclaim(ep->sq);
			return -err;
		}
	}
	/* the old registration's key dies with it */
	if (mw->emr)
		ibv_dereg_mr(mw->emr);
	mw->emr = mr;
	mw->bound = mr != NULL;
	mw->rkey = mr ? mr->rkey : 0;
	*rkey = mw->rkey;
	verbs_slot_done_now(ep->sq, s, DAPL_TWC_SUCCESS);
	verbs_cq_kick(ep->scq);
	return 0;
}

/* scq->lock held: a type 1 window, bound through ibv_bind_mw (a
 * rebind replaces the old binding and its key). */
static int bind_type1(struct dapl_tep *ep, struct dapl_tmw *mw,
		      struct dapl_tmr *mr, uint64_t addr, uint64_t len,
		      unsigned access, uint64_t context, unsigned flags,
		      uint32_t *rkey)
{
	struct ibv_mw_bind b;
	struct verbs_slot *s;
	int err;

	s = verbs_send_claim(ep, DAPL_TWC_BIND_MW, context, flags, 0, &err);
	if (!s)
		return err;
	if (!len && !mw->bound) {
		/* nothing to take back: done at once */
		verbs_slot_done_now(ep->sq, s, DAPL_TWC_SUCCESS);
		verbs_cq_kick(ep->scq);
		*rkey = 0;
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.wr_id = (uint64_t)(uintptr_t)s;
	b.send_flags = verbs_send_flags(flags);
	/* An unbind is a bind of length 0; it names the registration bound
	 * last, as some provider libraries (rxe) read it even then. */
	b.bind_info.mr = len ? mr->mr : mw->bound_mr;
	if (len) {
		b.bind_info.addr = addr;
		b.bind_info.length = len;
		b.bind_info.mw_access_flags = (unsigned)mw_access(ep->dev, access);
	}
	err = ibv_bind_mw(ep->qp, mw->mw, &b);
	if (err) {
		verbs_queue_unclaim(ep->sq);
		return err == ENOMEM ? -ENOSPC : -err;
	}
	mw->rkey = mw->mw->rkey;
	mw->bound = len != 0;
	mw->bound_mr = len ? mr->mr : NULL;
	*rkey = len ? mw->rkey : 0;
	return 0;
}

/* scq->lock held: a type 2 window.  It binds only when free, so a rebind
 * invalidates first (an unsignalled request of its own, chained). */
static int bind_type2(struct dapl_tep *ep, struct dapl_tmw *mw,
		      struct dapl_tmr *mr, uint64_t addr, uint64_t len,
		      unsigned access, uint64_t context, unsigned flags,
		      uint32_t *rkey)
{
	struct ibv_send_wr inv, bind, *first, *bad;
	struct verbs_slot *si = NULL, *sb;
	uint32_t key = ibv_inc_rkey(mw->rkey);
	int err, claimed = 0;

	if (!len && !mw->bound) {
		/* nothing to take back: done at once */
		sb = verbs_send_claim(ep, DAPL_TWC_BIND_MW, context, flags, 0,
				      &err);
		if (!sb)
			return err;
		verbs_slot_done_now(ep->sq, sb, DAPL_TWC_SUCCESS);
		verbs_cq_kick(ep->scq);
		*rkey = 0;
		return 0;
	}
	memset(&inv, 0, sizeof(inv));
	memset(&bind, 0, sizeof(bind));
	if (mw->bound) {
		/* the invalidate of a rebind reports nothing unless it fails */
		si = verbs_send_claim(ep, DAPL_TWC_BIND_MW,
				      len ? 0 : context, len ? 0 : flags, 0,
				      &err);
		if (!si)
			return err;
		claimed++;
		inv.wr_id = (uint64_t)(uintptr_t)si;
		inv.opcode = IBV_WR_LOCAL_INV;
		inv.invalidate_rkey = mw->rkey;
		inv.send_flags = len ? 0 : verbs_send_flags(flags);
	}
	if (len) {
		sb = verbs_send_claim(ep, DAPL_TWC_BIND_MW, context, flags, 0,
				      &err);
		if (!sb) {
			while (claimed--)
				verbs_queue_unclaim(ep->sq);
			return err;
		}
		claimed++;
		bind.wr_id = (uint64_t)(uintptr_t)sb;
		bind.opcode = IBV_WR_BIND_MW;
		bind.send_flags = verbs_send_flags(flags);
		bind.bind_mw.mw = mw->mw;
		bind.bind_mw.rkey = key;
		bind.bind_mw.bind_info.mr = mr->mr;
		bind.bind_mw.bind_info.addr = addr;
		bind.bind_mw.bind_info.length = len;
		bind.bind_mw.bind_info.mw_access_flags =
			(unsigned)mw_access(ep->dev, access);
	}
	if (si && len) {
		inv.next = &bind;
		first = &inv;
	} else {
		first = si ? &inv : &bind;
	}
	err = ibv_post_send(ep->qp, first, &bad);
	if (err) {
		while (claimed--)
			verbs_queue_unclaim(ep->sq);
		return verbs_post_err(err);
	}
	if (len) {
		/* type 2 keys are the consumer's to track (ibv_alloc_mw(3));
		 * the provider library reads the current one from here */
		mw->rkey = key;
		mw->mw->rkey = key;
	}
	mw->bound = len != 0;
	*rkey = len ? mw->rkey : 0;
	return 0;
}

int verbs_mw_bind(struct dapl_tep *ep, struct dapl_tmw *mw,
		  struct dapl_tmr *mr, uint64_t addr, uint64_t len,
		  unsigned access, uint64_t context, unsigned flags,
		  uint32_t *rkey)
{
	uint32_t key = 0;
	int err;

	if (!ep || !mw)
		return -EINVAL;
	if (len) {
		uint64_t base, size;

		if (!mr || mr->pd != mw->pd)
			return -EINVAL;
		base = (uint64_t)(uintptr_t)mr->mr->addr;
		size = mr->mr->length;
		/* inside the registration, written so no sum can wrap */
		if (addr < base || len > size || addr - base > size - len)
			return -EINVAL;
	}
	pthread_mutex_lock(&ep->scq->lock);
	if (ep->state == VERBS_EP_DOWN) {
		/* the connection is over: the bind is flushed */
		verbs_send_claim(ep, DAPL_TWC_BIND_MW, context, flags, 0, &err);
	} else if (!mw->mw)
		err = bind_emulated(ep, mw, addr, len, access, context, flags,
				    &key);
	else if (mw->mw->type == IBV_MW_TYPE_1)
		err = bind_type1(ep, mw, mr, addr, len, access, context, flags,
				 &key);
	else
		err = bind_type2(ep, mw, mr, addr, len, access, context, flags,
				 &key);
	pthread_mutex_unlock(&ep->scq->lock);
	if (!err && rkey)
		*rkey = key;
	return err;
}
