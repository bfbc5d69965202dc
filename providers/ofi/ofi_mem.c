/* Protection domains, registrations and emulated memory windows.
 *
 * libfabric keys are domain-wide (virtual addresses; keys we draw at
 * random where the provider takes them, as tcp does) and a target checks
 * an incoming RDMA request against its endpoint's domain, so each PD is a
 * libfabric domain: the first PD takes the device's, later ones open
 * their own (ofi.h).  A window is emulated by a
 * registration of the bound range: binding makes a new key and kills the
 * old one. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "ofi.h"

int ofi_pd_alloc(struct dapl_tdev *dev, struct dapl_tpd **pdp)
{
	struct dapl_tpd *pd = calloc(1, sizeof(*pd));
	int ret = 0;

	if (!pd)
		return -ENOMEM;
	pd->dev = dev;
	pthread_mutex_lock(&dev->lock);
	if (!dev->domain_taken) {
		pd->domain = dev->domain;
		dev->domain_taken = true;
	} else {
		ret = ofi_err(fi_domain(dev->fabric, dev->info, &pd->domain,
					NULL));
	}
	pthread_mutex_unlock(&dev->lock);
	if (ret) {
		free(pd);
		return ret;
	}
	*pdp = pd;
	return 0;
}

int ofi_pd_free(struct dapl_tpd *pd)
{
	struct dapl_tdev *dev = pd->dev;
	int ret = 0;

	pthread_mutex_lock(&dev->lock);
	if (pd->domain == dev->domain)
		dev->domain_taken = false;
	else
		ret = ofi_err(fi_close(&pd->domain->fid));
	pthread_mutex_unlock(&dev->lock);
	if (ret)
		return ret;     /* something of the PD is still open */
	free(pd);
	return 0;
}

static uint64_t access_to_fi(unsigned access)
{
	/* tcp does not check local access; remote access it does. */
	uint64_t fl = FI_SEND | FI_RECV | FI_READ | FI_WRITE;

	if (access & DAPL_TACCESS_REMOTE_READ)
		fl |= FI_REMOTE_READ;
	if (access & DAPL_TACCESS_REMOTE_WRITE)
		fl |= FI_REMOTE_WRITE;
	return fl;
}

/* A key a peer cannot guess from the ones it was given: 32 random bits
 * (DAT_RMR_CONTEXT is 32 bits), never 0. */
static int random_key(uint32_t *key)
{
	ssize_t n;

	do {
		n = getrandom(key, sizeof(*key), 0);
		if (n < 0 && errno != EINTR)
			return -errno;
	} while (n != (ssize_t)sizeof(*key) || *key == 0);
	return 0;
}

/* Registers [addr, addr + len) with a key that fits 32 bits: one we draw
 * when the domain takes our keys (a draw that is in use already is drawn
 * again), else the provider's. */
static int reg(struct dapl_tpd *pd, void *addr, uint64_t len,
	       unsigned access, struct fid_mr **fmr, uint32_t *key)
{
	struct dapl_tdev *dev = pd->dev;
	uint32_t want = 0;
	uint64_t k;
	int ret, tries = 0;

	if (len == 0 || len > SIZE_MAX)
		return -EINVAL;
	do {
		if (dev->own_keys) {
			ret = random_key(&want);
			if (ret)
				return ret;
		}
		ret = ofi_err(fi_mr_reg(pd->domain, addr, (size_t)len,
					access_to_fi(access), 0, want, 0, fmr,
					NULL));
	} while (ret == -ENOKEY && dev->own_keys && ++tries < 16);
	if (ret)
		return ret;
	k = fi_mr_key(*fmr);
	if (k == FI_KEY_NOTAVAIL || k > UINT32_MAX) {
		/* DAT_RMR_CONTEXT is 32 bits */
		fi_close(&(*fmr)->fid);
		*fmr = NULL;
		return -EOVERFLOW;
	}
	*key = (uint32_t)k;
	return 0;
}

int ofi_mr_reg(struct dapl_tpd *pd, void *addr, uint64_t len, unsigned access,
	       struct dapl_tmr **mrp, uint32_t *lkey, uint32_t *rkey)
{
	struct dapl_tmr *mr;
	uint32_t key;
	int ret;

	mr = calloc(1, sizeof(*mr));
	if (!mr)
		return -ENOMEM;
	ret = reg(pd, addr, len, access, &mr->fmr, &key);
	if (ret) {
		free(mr);
		return ret;
	}
	mr->dev = pd->dev;
	mr->addr = (uint64_t)(uintptr_t)addr;
	mr->len = len;
	*lkey = key;
	*rkey = key;
	*mrp = mr;
	return 0;
}

int ofi_mr_dereg(struct dapl_tmr *mr)
{
	int ret = ofi_err(fi_close(&mr->fmr->fid));

	if (ret)
		return ret;
	free(mr);
	return 0;
}

int ofi_mw_alloc(struct dapl_tpd *pd, struct dapl_tmw **mwp)
{
	struct dapl_tmw *mw = calloc(1, sizeof(*mw));

	if (!mw)
		return -ENOMEM;
	mw->pd = pd;
	*mwp = mw;
	return 0;
}

int ofi_mw_bind(struct dapl_tep *ep, struct dapl_tmw *mw, struct dapl_tmr *mr,
		uint64_t addr, uint64_t len, unsigned access, uint64_t context,
		unsigned flags, uint32_t *rkey)
{
	struct ofi_queue *q = ep->sq;
	struct dapl_tcq *cq = q->cq;
	struct fid_mr *fmr = NULL, *old;
	struct ofi_slot *s;
	uint32_t key = 0;
	int ret;

	if (len) {
		if (!mr || addr < mr->addr || len > mr->len ||
		    addr - mr->addr > mr->len - len)
			return -EINVAL;
		ret = reg(mw->pd, (void *)(uintptr_t)addr, len, access,
			  &fmr, &key);
		if (ret)
			return ret;
	}

	pthread_mutex_lock(&cq->lock);
	s = ofi_queue_claim(q);
	if (!s) {
		pthread_mutex_unlock(&cq->lock);
		if (fmr)
			fi_close(&fmr->fid);
		return -ENOSPC;
	}
	s->context = context;
	s->opcode = DAPL_TWC_BIND_MW;
	s->signaled = flags & DAPL_TPOST_SIGNALED;
	s->byte_len = 0;
	/* The bind is done: complete it in order behind what is posted. */
	s->state = OFI_SLOT_POSTED;
	if (q->submit + 1 == q->tail)
		q->submit++;
	ofi_slot_complete(s, DAPL_TWC_SUCCESS, 0, 0);
	ofi_cq_kick(cq);
	pthread_mutex_unlock(&cq->lock);

	old = mw->fmr;
	mw->fmr = fmr;
	if (old)
		fi_close(&old->fid);    /* the old key dies */
	*rkey = key;
	return 0;
}

int ofi_mw_free(struct dapl_tmw *mw)
{
	if (mw->fmr)
		fi_close(&mw->fmr->fid);
	free(mw);
	return 0;
}
