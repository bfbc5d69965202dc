/* Protection zones: a transport protection domain each. */
#include "config.h"

#include "core.h"
#include "entry.h"

DAT_RETURN dapl_pz_create(DAT_IA_HANDLE h, DAT_PZ_HANDLE *out)
{
	struct dapl_ia *ia = dapl_ia_get(h);
	struct dapl_pz *pz;
	int err;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	pz = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_PZ,
			       sizeof(*pz), ia);
	if (!pz)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	pz->ia = ia;
	err = ia->ops->pd_alloc(ia->dev, &pz->tpd);
	if (err) {
		dapl_handle_free(pz);
		return DAT_ERROR(dapl_errno_to_dat(err), DAT_RESOURCE_PROTECTION_DOMAIN);
	}
	pthread_mutex_lock(&ia->lock);
	pz->next = ia->pzs;
	ia->pzs = pz;
	pthread_mutex_unlock(&ia->lock);
	*out = pz;
	return DAT_SUCCESS;
}

DAT_RETURN dapl_pz_query(DAT_PZ_HANDLE h, DAT_PZ_PARAM_MASK mask,
			 DAT_PZ_PARAM *param)
{
	struct dapl_pz *pz = (struct dapl_pz *)dapl_handle_get(h, DAT_HANDLE_TYPE_PZ);

	if (!pz)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (mask & DAT_PZ_FIELD_IA_HANDLE)
		param->ia_handle = pz->ia;
	return DAT_SUCCESS;
}

/* Unlinks and frees pz.  ia->lock held. */
void dapl_pz_destroy(struct dapl_pz *pz)
{
	struct dapl_pz **pp;

	for (pp = &pz->ia->pzs; *pp; pp = &(*pp)->next)
		if (*pp == pz) {
			*pp = pz->next;
			break;
		}
	pz->ia->ops->pd_free(pz->tpd);
	dapl_handle_free(pz);
}

DAT_RETURN dapl_pz_free(DAT_PZ_HANDLE h)
{
	struct dapl_pz *pz = (struct dapl_pz *)dapl_handle_get(h, DAT_HANDLE_TYPE_PZ);
	struct dapl_ia *ia;

	if (!pz)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	ia = pz->ia;
	pthread_mutex_lock(&ia->lock);
	/* Checked again under the lock: another thread may have freed it. */
	if (!dapl_handle_get(pz, DAT_HANDLE_TYPE_PZ)) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
	}
	if (pz->users > 0) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_PZ_IN_USE);
	}
	dapl_pz_destroy(pz);
	pthread_mutex_unlock(&ia->lock);
	return DAT_SUCCESS;
}
