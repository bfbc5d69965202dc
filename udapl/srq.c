/* Shared receive queues: not there yet.  The transports can share a
 * receive queue, but a completion taken from one must name the EP that
 * consumed it, which the seam does not carry yet (issue 4 is open on it).
 * Until then every call checks its handle and says so. */
#include "config.h"

#include "core.h"
#include "entry.h"

#define PENDING DAT_ERROR(DAT_NOT_IMPLEMENTED, 0)
#define NO_SRQ DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ)

DAT_RETURN dapl_srq_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
			   DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *srq)
{
	(void)pz; (void)attr; (void)srq;
	if (!dapl_ia_get(ia))
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	return PENDING;
}

/* No SRQ can exist, so every SRQ handle is a bad one. */
DAT_RETURN dapl_srq_free(DAT_SRQ_HANDLE srq)
{
	(void)srq;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_post_recv(DAT_SRQ_HANDLE srq, DAT_COUNT n,
			      DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie)
{
	(void)srq; (void)n; (void)iov; (void)cookie;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_query(DAT_SRQ_HANDLE srq, DAT_SRQ_PARAM_MASK mask,
			  DAT_SRQ_PARAM *param)
{
	(void)srq; (void)mask; (void)param;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_resize(DAT_SRQ_HANDLE srq, DAT_COUNT qlen)
{
	(void)srq; (void)qlen;
	return NO_SRQ;
}

DAT_RETURN dapl_srq_set_lw(DAT_SRQ_HANDLE srq, DAT_COUNT lw)
{
	(void)srq; (void)lw;
	return NO_SRQ;
}
