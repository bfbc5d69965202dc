/* Protection domains, registrations and windows: the STag table.
 *
 * An STag is an unpredictable non-zero 32-bit value (a peer that guesses
 * has one chance in 2^32 per try, and each wrong try ends its
 * connection).  It names a registration of one PZ; the tagged offset is
 * the virtual address, as DAT's RMR contexts and target addresses are.
 * Windows are registrations of their range made at bind time: a new
 * bind gives a new STag and the old one dies.  The rights are kept as
 * given (DAPL_TACCESS_*, REMOTE_ATOMIC included) and checked, right by
 * right, by tcp_stag_check for every incoming access. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "tcp.h"

int tcp_pd_alloc(struct dapl_tdev *dev, struct dapl_tpd **out)
{
	struct dapl_tpd *pd = calloc(1, sizeof(*pd));

	if (!pd)
		return -ENOMEM;
	pd->dev = dev;
	*out = pd;
	return 0;
}

int tcp_pd_free(struct dapl_tpd *pd)
{
	free(pd);
	return 0;
}

static struct dapl_tmr **bucket(struct dapl_tdev *dev, uint32_t stag)
{
	return &dev->stags[(stag ^ (stag >> 16)) % TCP_STAG_BUCKETS];
}

static struct dapl_tmr *stag_find(struct dapl_tdev *dev, uint32_t stag)
{
	struct dapl_tmr *m;

	for (m = *bucket(dev, stag); m; m = m->hnext)
		if (m->stag == stag)
			return m;
	return NULL;
}

/* stag_lock write-held.  Every STag comes from the kernel's CSPRNG: a
 * generator a peer could run forward from the STags it was given would
 * let it predict the ones registered for others. */
uint32_t tcp_stag_new(struct dapl_tdev *dev)
{
	uint32_t s = 0;

	do {
		if (getrandom(&s, sizeof(s), 0) != (ssize_t)sizeof(s)) {
			/* no entropy source at all: still unique, and say so */
			dev->rng = dev->rng * 6364136223846793005ull + 1442695040888963407ull;
			s = (uint32_t)(dev->rng >> 32);
		}
	} while (s == 0 || stag_find(dev, s));
	return s;
}

static int reg(struct dapl_tpd *pd, uint64_t addr, uint64_t len,
	       unsigned access, struct dapl_tmr **out)
{
	struct dapl_tdev *dev = pd->dev;
	struct dapl_tmr *mr = calloc(1, sizeof(*mr)), **b;

	if (!mr)
		return -ENOMEM;
	mr->dev = dev;
	mr->pd = pd;
	mr->addr = addr;
	mr->len = len;
	mr->access = access;
	pthread_rwlock_wrlock(&dev->stag_lock);
	mr->stag = tcp_stag_new(dev);
	b = bucket(dev, mr->stag);
	mr->hnext = *b;
	*b = mr;
	pthread_rwlock_unlock(&dev->stag_lock);
	*out = mr;
	return 0;
}

static void unreg(struct dapl_tmr *mr)
{
	struct dapl_tdev *dev = mr->dev;
	struct dapl_tmr **p;

	pthread_rwlock_wrlock(&dev->stag_lock);
	for (p = bucket(dev, mr->stag); *p; p = &(*p)->hnext)
		if (*p == mr) {
			*p = mr->hnext;
			break;
		}
	pthread_rwlock_unlock(&dev->stag_lock);
	free(mr);
}

int tcp_mr_reg(struct dapl_tpd *pd, void *addr, uint64_t len, unsigned access,
	       struct dapl_tmr **out, uint32_t *lkey, uint32_t *rkey)
{
	uint64_t a = (uint64_t)(uintptr_t)addr;
	int err;

	if (len && a + len < a)
		return -EINVAL;
	err = reg(pd, a, len, access, out);
	if (err)
		return err;
	*lkey = (*out)->stag;
	*rkey = (*out)->stag;
	return 0;
}

int tcp_mr_dereg(struct dapl_tmr *mr)
{
	unreg(mr);
	return 0;
}

int tcp_mw_alloc(struct dapl_tpd *pd, struct dapl_tmw **out)
{
	struct dapl_tmw *mw = calloc(1, sizeof(*mw));

	if (!mw)
		return -ENOMEM;
	mw->pd = pd;
	*out = mw;
	return 0;
}

int tcp_mw_bind(struct dapl_tep *ep, struct dapl_tmw *mw, struct dapl_tmr *mr,
		uint64_t addr, uint64_t len, unsigned access,
		uint64_t context, unsigned flags, uint32_t *rkey)
{
	struct dapl_twc wc;
	struct dapl_tmr *nmr = NULL;
	int err;

	if (len) {
		if (!mr || addr < mr->addr || addr + len < addr ||
		    addr + len > mr->addr + mr->len)
			return -EINVAL;
		err = reg(mw->pd, addr, len, access, &nmr);
		if (err)
			return err;
	}
	if (mw->bound)
		unreg(mw->bound);
	mw->bound = nmr;
	*rkey = nmr ? nmr->stag : 0;

	memset(&wc, 0, sizeof(wc));
	wc.context = context;
	wc.owner = ep->owner;
	wc.status = DAPL_TWC_SUCCESS;
	wc.opcode = DAPL_TWC_BIND_MW;
	/* a bind completes at once; unsignalled, nothing to report */
	if (flags & DAPL_TPOST_SIGNALED) {
		pthread_mutex_lock(&ep->lock);
		tcp_cq_push(ep->scq, &wc, NULL);
		pthread_mutex_unlock(&ep->lock);
	}
	return 0;
}

int tcp_mw_free(struct dapl_tmw *mw)
{
	if (mw->bound)
		unreg(mw->bound);
	free(mw);
	return 0;
}

int tcp_stag_check(struct dapl_tdev *dev, uint32_t stag, struct dapl_tpd *pd,
		   uint64_t to, uint64_t len, unsigned access)
{
	struct dapl_tmr *m = stag_find(dev, stag);

	/* (TERM_CODE_INVALID_STAG is 0: every refusal carries TCP_STAG_BAD) */
	if (!m)
		return TCP_STAG_BAD | TERM_CODE_INVALID_STAG;
	if (m->pd != pd)
		return TCP_STAG_BAD | TERM_CODE_STAG_STREAM;
	if ((m->access & access) != access)
		return TCP_STAG_BAD | TERM_CODE_ACCESS;
	/* to + len must not wrap, and [to, to + len) must sit inside */
	if (to + len < to)
		return TCP_STAG_BAD | TERM_CODE_TO_WRAP;
	if (to < m->addr || to - m->addr > m->len || len > m->len - (to - m->addr))
		return TCP_STAG_BAD | TERM_CODE_BOUNDS;
	return 0;
}
