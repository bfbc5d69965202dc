/* Remote memory regions (memory windows): bound to a range of an LMR
 * through an EP's request queue; each bind gives a new rmr_context and
 * kills the old one. */
#include "config.h"

#include <string.h>

#include "core.h"
#include "entry.h"
#if DAT_GEN == 2
#include <dat2/dat_ib_extensions.h>
#endif

#define BAD_RMR DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_RMR)

static struct dapl_rmr *rmr_get(DAT_RMR_HANDLE h)
{
	return (struct dapl_rmr *)dapl_handle_get(h, DAT_HANDLE_TYPE_RMR);
}

DAT_RETURN dapl_rmr_create(DAT_PZ_HANDLE pz_h, DAT_RMR_HANDLE *out)
{
	struct dapl_pz *pz = (struct dapl_pz *)dapl_handle_get(pz_h, DAT_HANDLE_TYPE_PZ);
	struct dapl_ia *ia;
	struct dapl_rmr *rmr;
	int err;

	if (!pz)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	ia = pz->ia;
	rmr = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_RMR,
				sizeof(*rmr), ia);
	if (!rmr)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	err = ia->ops->mw_alloc(pz->tpd, &rmr->tmw);
	if (err) {
		dapl_handle_free(rmr);
		return DAT_ERROR(dapl_errno_to_dat(err), DAT_RESOURCE_MEMORY_REGION);
	}
	rmr->ia = ia;
	rmr->pz = pz;
	rmr->param.ia_handle = ia;
	rmr->param.pz_handle = pz;
#if DAT_GEN == 2
	/* bound through any EP of its PZ, as the provider attributes say */
	rmr->param.rmr_scope = DAT_RMR_SCOPE_PZ;
	rmr->param.va_type = DAT_VA_TYPE_VA;
#endif
	pthread_mutex_lock(&ia->lock);
	pz->users++;
	rmr->next = ia->rmrs;
	ia->rmrs = rmr;
	pthread_mutex_unlock(&ia->lock);
	*out = rmr;
	return DAT_SUCCESS;
}

DAT_RETURN dapl_rmr_query(DAT_RMR_HANDLE h, DAT_RMR_PARAM_MASK mask,
			  DAT_RMR_PARAM *param)
{
	struct dapl_rmr *rmr = rmr_get(h);

	(void)mask;
	if (!rmr)
		return BAD_RMR;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&rmr->ia->lock);
	*param = rmr->param;
	pthread_mutex_unlock(&rmr->ia->lock);
	return DAT_SUCCESS;
}

#if DAT_GEN == 2
#define PRIV_REMOTE_ATOMIC ((unsigned)DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
#else
#define PRIV_REMOTE_ATOMIC 0u
#endif

/* Remote-atomic access only where the device does atomics (as lmr.c). */
static unsigned remote_access(const struct dapl_ia *ia, DAT_MEM_PRIV_FLAGS priv)
{
	unsigned a = 0;

	if (priv & DAT_MEM_PRIV_REMOTE_READ_FLAG)
		a |= DAPL_TACCESS_REMOTE_READ;
	if (priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG)
		a |= DAPL_TACCESS_REMOTE_WRITE;
	if (((unsigned)priv & PRIV_REMOTE_ATOMIC) &&
	    (ia->dev_attr.flags & DAPL_TDEV_ATOMICS))
		a |= DAPL_TACCESS_REMOTE_ATOMIC;
	return a;
}

static void rmr_unbind_lmr(struct dapl_rmr *rmr)
{
	if (rmr->lmr) {
		rmr->lmr->users--;
		rmr->lmr = NULL;
	}
}

/* DAT 2.0 names the LMR (2nd) and the address type (5th) too: the other
 * arguments' numbers move. */
#if DAT_GEN == 2
#define BIND_ARG_IOV	DAT_INVALID_ARG3
#define BIND_ARG_PRIV	DAT_INVALID_ARG4
#define BIND_ARG_FLAGS	DAT_INVALID_ARG8
DAT_RETURN dapl_rmr_bind(DAT_RMR_HANDLE h, DAT_LMR_HANDLE lmr_h,
			 const DAT_LMR_TRIPLET *iov, DAT_MEM_PRIV_FLAGS priv,
			 DAT_VA_TYPE va_type, DAT_EP_HANDLE ep_h,
			 DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
			 DAT_RMR_CONTEXT *rmr_context)
#else
#define BIND_ARG_IOV	DAT_INVALID_ARG2
#define BIND_ARG_PRIV	DAT_INVALID_ARG3
#define BIND_ARG_FLAGS	DAT_INVALID_ARG6
DAT_RETURN dapl_rmr_bind(DAT_RMR_HANDLE h, const DAT_LMR_TRIPLET *iov,
			 DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep_h,
			 DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
			 DAT_RMR_CONTEXT *rmr_context)
#endif
{
	const unsigned remote = DAT_MEM_PRIV_REMOTE_READ_FLAG |
				DAT_MEM_PRIV_REMOTE_WRITE_FLAG |
				PRIV_REMOTE_ATOMIC;
	struct dapl_rmr *rmr = rmr_get(h);
	struct dapl_lmr *lmr = NULL;
	struct dapl_ep *ep;
	struct dapl_ia *ia;
	uint32_t rkey = 0;
	DAT_RETURN rc;

	if (!rmr)
		return BAD_RMR;
	if (!iov)
		return DAT_ERROR(DAT_INVALID_PARAMETER, BIND_ARG_IOV);
	if ((unsigned)priv & ~remote)
		return DAT_ERROR(DAT_INVALID_PARAMETER, BIND_ARG_PRIV);
#if DAT_GEN == 2
	if (va_type != DAT_VA_TYPE_VA)	/* as dapl_lmr_create */
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG5);
#endif
	if ((unsigned)flags & ~(unsigned)(DAT_COMPLETION_SUPPRESS_FLAG |
					  DAT_COMPLETION_UNSIGNALLED_FLAG |
					  DAT_COMPLETION_BARRIER_FENCE_FLAG))
		return DAT_ERROR(DAT_INVALID_PARAMETER, BIND_ARG_FLAGS);
	ia = rmr->ia;
	pthread_mutex_lock(&ia->lock);
	ep = (struct dapl_ep *)dapl_handle_get(ep_h, DAT_HANDLE_TYPE_EP);
	if (!rmr_get(h)) {
		rc = BAD_RMR;
		goto out;
	}
	if (!ep || ep->ia != ia) {
		rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EP);
		goto out;
	}
	if (ep->pz != rmr->pz) {
		rc = DAT_ERROR(DAT_PROTECTION_VIOLATION, 0);
		goto out;
	}
	if ((flags & DAT_COMPLETION_UNSIGNALLED_FLAG) &&
	    !(ep->param.ep_attr.request_completion_flags &
	      DAT_COMPLETION_UNSIGNALLED_FLAG)) {
		rc = DAT_ERROR(DAT_INVALID_PARAMETER, BIND_ARG_FLAGS);
		goto out;
	}
	if (!ep->request_evd) {
		rc = DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_EP_NOTREADY);
		goto out;
	}
	if (iov->segment_length > 0) {
		lmr = dapl_lmr_lookup(ia, iov->lmr_context);
		if (!lmr) {
			rc = DAT_ERROR(DAT_PRIVILEGES_VIOLATION, 0);
			goto out;
		}
#if DAT_GEN == 2
		/* the LMR named must be the one the triplet's context names */
		if ((struct dapl_lmr *)dapl_handle_get(lmr_h,
				DAT_HANDLE_TYPE_LMR) != lmr) {
			rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR);
			goto out;
		}
#endif
		if (lmr->pz != rmr->pz) {
			rc = DAT_ERROR(DAT_PROTECTION_VIOLATION, 0);
			goto out;
		}
		if (!dapl_lmr_covers(lmr, iov->virtual_address, iov->segment_length)) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, BIND_ARG_IOV);
			goto out;
		}
	}
	rc = dapl_dto_post_bind(ep, rmr, lmr, iov->virtual_address,
				lmr ? iov->segment_length : 0,
				remote_access(ia, priv), cookie, flags, &rkey);
	if (rc != DAT_SUCCESS)
		goto out;
	rmr_unbind_lmr(rmr);
	if (lmr) {
		rmr->lmr = lmr;
		lmr->users++;
		rmr->param.lmr_triplet = *iov;
		rmr->param.mem_priv = priv;
		rmr->param.rmr_context = rkey;
	} else {
		memset(&rmr->param.lmr_triplet, 0, sizeof(rmr->param.lmr_triplet));
		rmr->param.mem_priv = 0;
		rmr->param.rmr_context = 0;
	}
	if (rmr_context)
		*rmr_context = rmr->param.rmr_context;
out:
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

void dapl_rmr_destroy(struct dapl_rmr *rmr)
{
	struct dapl_ia *ia = rmr->ia;
	struct dapl_rmr **pp;

	rmr_unbind_lmr(rmr);
	ia->ops->mw_free(rmr->tmw);
	rmr->pz->users--;
	for (pp = &ia->rmrs; *pp; pp = &(*pp)->next)
		if (*pp == rmr) {
			*pp = rmr->next;
			break;
		}
	dapl_handle_free(rmr);
}

DAT_RETURN dapl_rmr_free(DAT_RMR_HANDLE h)
{
	struct dapl_rmr *rmr = rmr_get(h);
	struct dapl_ia *ia;
	DAT_RETURN rc = DAT_SUCCESS;

	if (!rmr)
		return BAD_RMR;
	ia = rmr->ia;
	pthread_mutex_lock(&ia->lock);
	if (rmr_get(h))
		dapl_rmr_destroy(rmr);
	else
		rc = BAD_RMR;
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

#if DAT_GEN == 2
DAT_RETURN dapl_rmr_create_for_ep(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *rmr)
{
	(void)pz; (void)rmr;
	return dapl_not_implemented("dat_rmr_create_for_ep",
				    "RMRs are of PZ scope only (dat_rmr_create)");
}
#endif
