/* Shared receive queues.
 *
 * The transport shares one receive queue between the endpoints created on
 * it; a receive taken from it completes on the recv CQ of the endpoint
 * that took it, and the transport names that endpoint (dapl_twc.owner).
 * The core keeps the receives' cookies in a request-slot table of the SRQ
 * (dto.c), sized once for the device's maximum so dat_srq_resize never
 * moves a slot a completion may still point at.  A receive counts as
 * outstanding until the consumer dequeues its event.
 *
 * The low watermark is the transport's (srq_set_limit): it reports the
 * SRQ through cm_get_event, and cm.c turns that into the async event. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "entry.h"

#define SRQ_DTO_MAX_SGE 32
#define SRQ_TABLE_MAX 65536

#define BAD_SRQ DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_SRQ)

static struct dapl_srq *srq_get(DAT_SRQ_HANDLE h)
{
	return (struct dapl_srq *)dapl_handle_get(h, DAT_HANDLE_TYPE_SRQ);
}

struct dapl_srq *dapl_srq_of_tsrq(struct dapl_ia *ia, struct dapl_tsrq *tsrq)
{
	struct dapl_srq *srq;

	for (srq = ia->srqs; srq; srq = srq->next)
		if (srq->tsrq == tsrq)
			return srq;
	return NULL;
}

/* The most receives an SRQ of this device can hold (0: no SRQs). */
static uint32_t device_max(const struct dapl_ia *ia)
{
	uint32_t max = ia->dev_attr.max_srq_wr;

	return max > SRQ_TABLE_MAX ? SRQ_TABLE_MAX : max;
}

DAT_RETURN dapl_srq_create(DAT_IA_HANDLE ia_h, DAT_PZ_HANDLE pz_h,
			   DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *out)
{
	struct dapl_ia *ia = dapl_ia_get(ia_h);
	uint32_t cap;
	struct dapl_srq *srq;
	struct dapl_pz *pz;
	DAT_RETURN rc;
	int err;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	cap = device_max(ia);
	if (!attr || attr->max_recv_dtos <= 0 ||
	    (uint32_t)attr->max_recv_dtos > cap || attr->max_recv_iov < 0 ||
	    attr->max_recv_iov > SRQ_DTO_MAX_SGE ||
	    (ia->dev_attr.max_sge &&
	     (uint32_t)attr->max_recv_iov > ia->dev_attr.max_sge) ||
	    attr->low_watermark < 0 ||
	    attr->low_watermark > attr->max_recv_dtos)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);

	pthread_mutex_lock(&ia->lock);
	pz = (struct dapl_pz *)dapl_handle_get(pz_h, DAT_HANDLE_TYPE_PZ);
	if (!pz || pz->ia != ia) {
		rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
		goto out;
	}
	srq = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_SRQ,
				sizeof(*srq), ia);
	if (!srq) {
		rc = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
		goto out;
	}
	srq->ia = ia;
	srq->pz = pz;
	srq->param.ia_handle = ia;
	srq->param.pz_handle = pz;
	srq->param.srq_state = DAT_SRQ_STATE_OPERATIONAL;
	srq->param.max_recv_dtos = attr->max_recv_dtos;
	srq->param.max_recv_iov = attr->max_recv_iov ? attr->max_recv_iov : 1;
	srq->param.low_watermark = attr->low_watermark;
	srq->slots = dapl_dto_slots_new(NULL, cap);
	if (!srq->slots) {
		dapl_handle_free(srq);
		rc = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
		goto out;
	}
	err = ia->ops->srq_create(pz->tpd, (uint32_t)attr->max_recv_dtos,
				  (uint32_t)srq->param.max_recv_iov, &srq->tsrq);
	if (!err && attr->low_watermark)
		err = ia->ops->srq_set_limit(srq->tsrq,
					     (uint32_t)attr->low_watermark);
	if (err) {
		if (srq->tsrq)
			ia->ops->srq_destroy(srq->tsrq, dapl_dto_discarded, NULL);
		dapl_dto_slots_put(srq->slots, false);
		dapl_handle_free(srq);
		rc = err == -EINVAL ? DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3) :
			DAT_ERROR(dapl_errno_to_dat(err), DAT_RESOURCE_SRQ);
		goto out;
	}
	pz->users++;
	srq->next = ia->srqs;
	ia->srqs = srq;
	*out = srq;
	rc = DAT_SUCCESS;
out:
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

/* ia->lock held, no EP on it (dat_srq_free) or none left (abrupt close):
 * the transport drops what is still posted and says which, and receives
 * already completed come through their CQs and are given back there. */
void dapl_srq_destroy(struct dapl_srq *srq)
{
	struct dapl_ia *ia = srq->ia;
	struct dapl_srq **pp;

	for (pp = &ia->srqs; *pp; pp = &(*pp)->next) {
		if (*pp == srq) {
			*pp = srq->next;
			break;
		}
	}
	ia->ops->srq_destroy(srq->tsrq, dapl_dto_discarded, NULL);
	dapl_dto_slots_put(srq->slots, false);
	srq->pz->users--;
	dapl_handle_free(srq);
}

DAT_RETURN dapl_srq_free(DAT_SRQ_HANDLE h)
{
	struct dapl_srq *srq = srq_get(h);
	struct dapl_ia *ia;
	DAT_RETURN rc = DAT_SUCCESS;

	if (!srq)
		return BAD_SRQ;
	ia = srq->ia;
	pthread_mutex_lock(&ia->lock);
	if (!srq_get(h))
		rc = BAD_SRQ;           /* freed by another thread meanwhile */
	else if (srq->users)
		rc = DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_SRQ_IN_USE);
	else
		dapl_srq_destroy(srq);
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

/* Lock free like the EP's post_recv: the slot is claimed with atomics and
 * the transport takes its own lock. */
DAT_RETURN dapl_srq_post_recv(DAT_SRQ_HANDLE h, DAT_COUNT n,
			      DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie)
{
	struct dapl_srq *srq = srq_get(h);
	struct dapl_tsge sge[SRQ_DTO_MAX_SGE];
	struct dapl_dto_slot *sl;
	uint64_t total;
	DAT_RETURN rc;
	int nsge, err;

	if (!srq)
		return BAD_SRQ;
	if (n < 0 || n > srq->param.max_recv_iov || (n > 0 && !iov))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	rc = dapl_dto_sges(srq->ia, srq->pz, n, iov,
			   DAT_MEM_PRIV_LOCAL_WRITE_FLAG, sge, &nsge, &total);
	if (rc != DAT_SUCCESS)
		return rc;
	sl = dapl_dto_claim_recv(srq->slots,
				 __atomic_load_n(&srq->param.max_recv_dtos,
						 __ATOMIC_RELAXED),
				 cookie, total);
	if (!sl)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_SRQ);
	dapl_dto_note_post(srq->ia);
	err = srq->ia->ops->srq_post_recv(srq->tsrq, sge, nsge,
					  (uint64_t)(uintptr_t)sl);
	if (err) {
		dapl_dto_unclaim(sl);
		if (err == -ENOSPC || err == -EAGAIN || err == -ENOMEM)
			return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
					 DAT_RESOURCE_SRQ);
		return dapl_errno_to_dat(err);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dapl_srq_query(DAT_SRQ_HANDLE h, DAT_SRQ_PARAM_MASK mask,
			  DAT_SRQ_PARAM *param)
{
	struct dapl_srq *srq = srq_get(h);

	(void)mask;     /* everything is cheap: fill it all */
	if (!srq)
		return BAD_SRQ;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	pthread_mutex_lock(&srq->ia->lock);
	*param = srq->param;
	pthread_mutex_unlock(&srq->ia->lock);
	dapl_dto_srq_counts(srq->slots, &param->outstanding_dto_count,
			    &param->available_dto_count);
	return DAT_SUCCESS;
}

DAT_RETURN dapl_srq_resize(DAT_SRQ_HANDLE h, DAT_COUNT qlen)
{
	struct dapl_srq *srq = srq_get(h);
	DAT_COUNT outstanding;
	DAT_RETURN rc = DAT_SUCCESS;
	int err;

	if (!srq)
		return BAD_SRQ;
	if (qlen <= 0 || (uint32_t)qlen > device_max(srq->ia))
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	pthread_mutex_lock(&srq->ia->lock);
	dapl_dto_srq_counts(srq->slots, &outstanding, NULL);
	/* DAT 1.2: smaller than what is outstanding is a state error */
	if (qlen < outstanding || qlen < srq->param.low_watermark) {
		rc = DAT_ERROR(DAT_INVALID_STATE, DAT_NO_SUBTYPE);
		goto out;
	}
	err = srq->ia->ops->srq_resize(srq->tsrq, (uint32_t)qlen);
	if (err) {
		rc = err == -EINVAL ? DAT_ERROR(DAT_INVALID_STATE, DAT_NO_SUBTYPE) :
			dapl_errno_to_dat(err);
		goto out;
	}
	__atomic_store_n(&srq->param.max_recv_dtos, qlen, __ATOMIC_RELAXED);
out:
	pthread_mutex_unlock(&srq->ia->lock);
	return rc;
}

DAT_RETURN dapl_srq_set_lw(DAT_SRQ_HANDLE h, DAT_COUNT lw)
{
	struct dapl_srq *srq = srq_get(h);
	DAT_RETURN rc = DAT_SUCCESS;
	int err;

	if (!srq)
		return BAD_SRQ;
	pthread_mutex_lock(&srq->ia->lock);
	if (lw < 0 || lw > srq->param.max_recv_dtos) {
		rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
		goto out;
	}
	/* arms one event: when fewer than lw receives remain posted (at
	 * once if that is already so); 0 disarms */
	err = srq->ia->ops->srq_set_limit(srq->tsrq, (uint32_t)lw);
	if (err) {
		rc = dapl_errno_to_dat(err);
		goto out;
	}
	srq->param.low_watermark = lw;
out:
	pthread_mutex_unlock(&srq->ia->lock);
	return rc;
}
