/* The Interface Adapter: opens the transport device, owns every other
 * object and the progress thread, and answers the attribute queries. */
#include "config.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "entry.h"
#if DAT_GEN == 2
#include <dat2/dat_ib_extensions.h>
#endif

#define DAPL_PROVIDER_VERSION_MAJOR 1
#define DAPL_PROVIDER_VERSION_MINOR 0
#define DAPL_DEFAULT_ASYNC_QLEN 8

struct dapl_ia *dapl_ia_get(DAT_IA_HANDLE h)
{
	return (struct dapl_ia *)dapl_handle_get(h, DAT_HANDLE_TYPE_IA);
}

DAT_COUNT dapl_ia_max_pdata(const struct dapl_ia *ia)
{
	/* a connect request may go without our header (wire.h) */
	size_t m = dapl_wire_max_connect_consumer(ia->dev_attr.max_pdata_connect);
	size_t a = dapl_wire_max_consumer(ia->dev_attr.max_pdata_accept);

	return (DAT_COUNT)(a < m ? a : m);
}

static void ia_release(struct dapl_ia *ia)
{
	if (ia->dev)
		ia->ops->dev_close(ia->dev);
	pthread_mutex_destroy(&ia->lock);
	dapl_handle_free(ia);
}

void dapl_ia_pin(struct dapl_ia *ia)
{
	atomic_fetch_add(&ia->pins, 1);
}

void dapl_ia_unpin(struct dapl_ia *ia)
{
	if (atomic_fetch_sub(&ia->pins, 1) == 1)
		ia_release(ia);
}

/* What a transport's dev_open failure means to the consumer (dat_ia_open(3)):
 * the device or address the entry names is not on this host: the entry is
 * unavailable here, DAT_PROVIDER_NOT_FOUND with DAT_RESOURCE_DEVICE (a
 * consumer that walks the providers skips it, as it skips unknown names);
 * ia_params it cannot parse: DAT_INVALID_PARAMETER naming the IA name;
 * out of memory or descriptors: DAT_INSUFFICIENT_RESOURCES. */
#if DAT_GEN == 2
static bool ia_has_specific(const struct dapl_ia *ia, const char *name)
{
	for (int i = 0; i < ia->nspecific; i++)
		if (strcmp(ia->specific[i].name, name) == 0)
			return true;
	return false;
}
#endif

static DAT_RETURN dev_open_error(int err)
{
	switch (err) {
	case -ENODEV:
	case -ENXIO:
	case -ENOENT:
	case -EADDRNOTAVAIL:
	case -EAFNOSUPPORT:
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_RESOURCE_DEVICE);
	case -EINVAL:
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	case -ENOMEM:
	case -EMFILE:
	case -ENFILE:
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	default:
		return DAT_ERROR(DAT_INTERNAL_ERROR, 0);
	}
}

DAT_RETURN dapl_ia_open(const DAT_NAME_PTR name, DAT_COUNT async_qlen,
			DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia_out)
{
	struct dapl_provider *prov;
	struct dapl_ia *ia;
	DAT_EVD_HANDLE evd;
	DAT_RETURN rc;
	char why[256] = "";
	int err;

	if (!name)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG1);
	if (async_qlen < 0)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	if (!async_evd)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	if (!ia_out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	/* Every IA gets its own async EVD; sharing another instance's is
	 * not offered. */
	if (*async_evd != DAT_HANDLE_NULL)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_EVD_ASYNC);
	prov = dapl_provider_find(name);
	if (!prov)
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND,
				 DAT_NAME_NOT_REGISTERED);

	ia = dapl_handle_alloc(&prov->table, DAT_HANDLE_TYPE_IA, sizeof(*ia),
			       NULL);
	if (!ia)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
	ia->h.ia = ia;
	ia->prov = prov;
	ia->ops = prov->ops;
	ia->wake_fd = -1;
	ia->timer_fd = -1;
	atomic_init(&ia->pins, 1);
	pthread_mutex_init(&ia->lock, NULL);

	err = ia->ops->dev_open(prov->ia_params, &ia->dev, why, sizeof(why));
	if (err) {
		dapl_log("%s: cannot open the %s device \"%s\": %s", name,
			 ia->ops->name, prov->ia_params,
			 why[0] ? why : strerror(-err));
		ia->dev = NULL;
		ia_release(ia);
		return dev_open_error(err);
	}
	err = ia->ops->dev_query(ia->dev, &ia->dev_attr);
	if (err) {
		ia_release(ia);
		return dapl_errno_to_dat(err);
	}
	ia->local_addr = ia->dev_attr.addr;
	if (ia->dev_attr.nspecific < 0 ||
	    ia->dev_attr.nspecific > DAPL_TDEV_SPECIFIC_MAX)
		ia->dev_attr.nspecific = 0;
	for (int i = 0; i < ia->dev_attr.nspecific; i++) {
		ia->specific[i].name = ia->dev_attr.specific[i].name;
		ia->specific[i].value = ia->dev_attr.specific[i].value;
	}
	ia->nspecific = ia->dev_attr.nspecific;
#if DAT_GEN == 2
	/* what programs test before using the IB extensions (ext.c) */
	dapl_ext_attrs(dapl_ext_offered(ia), &ia->specific[ia->nspecific]);
	ia->nspecific += DAPL_EXT_NATTR;
	/* OpenFabrics 2.x always names the path MTU and programs size
	 * their messages by it (dtestsrq refuses to run without it).  A
	 * transport with no path MTU (tcp, ofi) has no limit below
	 * max_msg_size: say 4096, the largest IB MTU. */
	if (!ia_has_specific(ia, "DAT_IB_TRANSPORT_MTU")) {
		ia->specific[ia->nspecific].name = "DAT_IB_TRANSPORT_MTU";
		ia->specific[ia->nspecific].value = "4096";
		ia->nspecific++;
	}
#endif

	evd = DAT_HANDLE_NULL;
	rc = dapl_evd_create(ia, async_qlen ? async_qlen : DAPL_DEFAULT_ASYNC_QLEN,
			     DAT_HANDLE_NULL, DAT_EVD_ASYNC_FLAG, &evd);
	if (rc != DAT_SUCCESS) {
		ia_release(ia);
		return rc;
	}
	ia->async_evd = evd;
	ia->async_evd_ours = true;

	err = dapl_cm_start(ia);
	if (err) {
		pthread_mutex_lock(&ia->lock);
		dapl_evd_destroy(ia->async_evd);
		pthread_mutex_unlock(&ia->lock);
		ia_release(ia);
		return dapl_errno_to_dat(err);
	}
	dapl_share_lock();
	dapl_share_add(ia);
	dapl_share_unlock();
	*async_evd = evd;
	*ia_out = ia;
	return DAT_SUCCESS;
}

/* Whether the consumer still has objects on ia (the async EVD we made
 * does not count).  ia->lock held. */
static bool ia_in_use(struct dapl_ia *ia)
{
	struct dapl_evd *e;

	if (ia->pzs || ia->cnos || ia->eps || ia->sps || ia->crs ||
	    ia->lmrs || ia->rmrs || ia->srqs)
		return true;
	for (e = ia->evds; e; e = e->next)
		if (!(ia->async_evd_ours && e == ia->async_evd))
			return true;
	return false;
}

DAT_RETURN dapl_ia_close(DAT_IA_HANDLE h, DAT_CLOSE_FLAGS flags)
{
	struct dapl_ia *ia = dapl_ia_get(h);

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (flags != DAT_CLOSE_ABRUPT_FLAG && flags != DAT_CLOSE_GRACEFUL_FLAG)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);

	pthread_mutex_lock(&ia->lock);
	if (flags == DAT_CLOSE_GRACEFUL_FLAG && ia_in_use(ia)) {
		pthread_mutex_unlock(&ia->lock);
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
	}
	pthread_mutex_unlock(&ia->lock);

	/* No connection event may arrive while the objects go away. */
	dapl_cm_stop(ia);

	/* Other IAs of the provider may use our EVDs, and our EVDs may
	 * have CQs on their devices, or theirs on ours (libdat(7)): under
	 * the share lock, nobody binds to us any more, their EPs let go of
	 * our EVDs first, and their EVDs drop their CQs on our device
	 * before it closes. */
	dapl_share_lock();
	dapl_share_remove(ia);
	dapl_ep_detach_evds_of(ia);

	pthread_mutex_lock(&ia->lock);
	while (ia->crs)
		dapl_cr_destroy(ia->crs);
	while (ia->sps)
		dapl_sp_destroy(ia->sps);
	while (ia->eps)
		dapl_ep_destroy(ia->eps);
	while (ia->srqs)
		dapl_srq_destroy(ia->srqs);
	while (ia->rmrs)
		dapl_rmr_destroy(ia->rmrs);
	while (ia->lmrs)
		dapl_lmr_destroy(ia->lmrs);
	while (ia->evds)
		dapl_evd_destroy(ia->evds);
	while (ia->cnos)
		dapl_cno_destroy(ia->cnos);
	while (ia->pzs)
		dapl_pz_destroy(ia->pzs);
	if (ia->spare_cq)
		ia->ops->cq_destroy(ia->spare_cq);
	dapl_lmr_table_free(ia);
	ia->async_evd = NULL;
	/* The handle dies now; the memory goes with the last pin (a
	 * dat_cno_wait that was woken by the close may still hold one). */
	ia->h.magic = DAPL_MAGIC_DEAD;
	pthread_mutex_unlock(&ia->lock);
	dapl_evd_drop_xcqs_of(ia);
	dapl_share_unlock();
	dapl_ia_unpin(ia);
	return DAT_SUCCESS;
}

static void copy_name(char *dst, const char *src)
{
	strncpy(dst, src, DAT_NAME_MAX_LENGTH - 1);
	dst[DAT_NAME_MAX_LENGTH - 1] = '\0';
}

static DAT_COUNT clamp_count(uint64_t v)
{
	return v > INT32_MAX ? INT32_MAX : (DAT_COUNT)v;
}

/* A size as the IA attributes hold it: DAT 2.0 has 32-bit segment
 * lengths (DAT_SEG_LENGTH) where 1.2 had DAT_VLEN. */
#if DAT_GEN == 2
typedef DAT_SEG_LENGTH attr_len;
#else
typedef DAT_VLEN attr_len;
#endif

static attr_len clamp_seg(uint64_t v)
{
	return v > (attr_len)~(attr_len)0 ? (attr_len)~(attr_len)0 : (attr_len)v;
}

static void fill_ia_attr(struct dapl_ia *ia, DAT_IA_ATTR *a)
{
	const struct dapl_tdev_attr *d = &ia->dev_attr;

	memset(a, 0, sizeof(*a));
	copy_name(a->adapter_name, d->name);
	copy_name(a->vendor_name, d->vendor);
	a->hardware_version_major = 1;
	a->ia_address_ptr = (DAT_IA_ADDRESS_PTR)&ia->local_addr;
	a->max_eps = clamp_count(d->max_qp);
	a->max_dto_per_ep = clamp_count(d->max_qp_wr);
	a->max_rdma_read_per_ep_in = d->max_ird;
	a->max_rdma_read_per_ep_out = d->max_ord;
	a->max_evds = clamp_count(d->max_cq);
	a->max_evd_qlen = clamp_count(d->max_cqe);
	a->max_iov_segments_per_dto = clamp_count(d->max_sge);
	a->max_lmrs = clamp_count(d->max_mr);
	a->max_lmr_block_size = clamp_seg(d->max_mr_size);
	a->max_lmr_virtual_address = UINT64_MAX;
	a->max_pzs = clamp_count(d->max_pd);
	a->max_message_size = clamp_seg(d->max_msg_size);
	a->max_rdma_size = clamp_seg(d->max_rdma_size);
	a->max_rmrs = clamp_count(d->max_mw);
	a->max_rmr_target_address = UINT64_MAX;
	a->max_srqs = clamp_count(d->max_srq);
	a->max_ep_per_srq = a->max_eps;
	a->max_recv_per_srq = clamp_count(d->max_srq_wr);
	a->max_iov_segments_per_rdma_read = a->max_iov_segments_per_dto;
	if (d->max_sge_rd &&
	    (DAT_COUNT)d->max_sge_rd < a->max_iov_segments_per_rdma_read)
		a->max_iov_segments_per_rdma_read = (DAT_COUNT)d->max_sge_rd;
	a->max_iov_segments_per_rdma_write = a->max_iov_segments_per_dto;
	a->max_rdma_read_in = d->max_ird;
	a->max_rdma_read_out = d->max_ord;
	a->max_rdma_read_per_ep_in_guaranteed = DAT_TRUE;
	a->max_rdma_read_per_ep_out_guaranteed = DAT_TRUE;
#if DAT_GEN == 2
	a->zb_supported = DAT_FALSE;	/* dapl_lmr_create: DAT_VA_TYPE_VA only */
	/* the IB extensions, where the device and transport offer any
	 * (dat_extension_op(3)); provider_specific_attr says which */
	if (dapl_ext_offered(ia)) {
		a->extension_supported = DAT_EXTENSION_IB;
		a->extension_version = DAT_IB_EXTENSION_VERSION;
	} else {
		a->extension_supported = DAT_EXTENSION_NONE;
		a->extension_version = 0;
	}
#endif
}

static void fill_provider_attr(struct dapl_ia *ia, DAT_PROVIDER_ATTR *a)
{
	DAT_BOOLEAN (*merge)[6];
	int i, j;

	memset(a, 0, sizeof(*a));
	snprintf(a->provider_name, sizeof(a->provider_name), "libdat %s",
		 ia->ops->name);
	a->provider_version_major = DAPL_PROVIDER_VERSION_MAJOR;
	a->provider_version_minor = DAPL_PROVIDER_VERSION_MINOR;
	a->dapl_version_major = DAT_VERSION_MAJOR;
	a->dapl_version_minor = DAT_VERSION_MINOR;
	a->lmr_mem_types_supported = DAT_MEM_TYPE_VIRTUAL | DAT_MEM_TYPE_LMR;
	a->iov_ownership_on_return = DAT_IOV_CONSUMER;
	a->dat_qos_supported = DAT_QOS_BEST_EFFORT;
	a->is_thread_safe = DAT_FALSE;
	a->max_private_data_size = dapl_ia_max_pdata(ia);
	a->supports_multipath = DAT_FALSE;
	a->ep_creator = DAT_PSP_CREATES_EP_IFASKED;
	a->pz_support = DAT_PZ_UNIQUE;
	a->optimal_buffer_alignment = 64;
	/* Any stream may share an EVD with any other. */
	merge = (DAT_BOOLEAN (*)[6])a->evd_stream_merging_supported;
	for (i = 0; i < 6; i++)
		for (j = 0; j < 6; j++)
			merge[i][j] = DAT_TRUE;
	a->completion_flags_supported = DAT_COMPLETION_SUPPRESS_FLAG |
		DAT_COMPLETION_UNSIGNALLED_FLAG |
		DAT_COMPLETION_SOLICITED_WAIT_FLAG |
		DAT_COMPLETION_BARRIER_FENCE_FLAG;
	a->lmr_sync_req = DAT_FALSE;
	a->srq_supported = DAT_TRUE;
	a->num_provider_specific_attr = ia->nspecific;
	a->provider_specific_attr = ia->nspecific ? ia->specific : NULL;
#if DAT_GEN == 2
	a->rdma_read_lmr_rmr_context_exposure = DAT_FALSE;
	a->rmr_scope_supported = DAT_RMR_SCOPE_PZ;	/* dat_rmr_create only */
	a->is_signal_safe = DAT_FALSE;
	a->ha_supported = DAT_FALSE;
	a->ha_loadbalancing = 0;
#endif
}

DAT_RETURN dapl_ia_query(DAT_IA_HANDLE h, DAT_EVD_HANDLE *async_evd,
			 DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
			 DAT_PROVIDER_ATTR_MASK prov_mask,
			 DAT_PROVIDER_ATTR *prov_attr)
{
	struct dapl_ia *ia = dapl_ia_get(h);

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (ia_mask && !ia_attr)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
	if (prov_mask && !prov_attr)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
	if (async_evd)
		*async_evd = ia->async_evd;
	if (ia_mask)
		fill_ia_attr(ia, ia_attr);
	if (prov_mask)
		fill_provider_attr(ia, prov_attr);
	return DAT_SUCCESS;
}

/* Any live object of ours, or NULL. */
static struct dapl_header *any_object(DAT_HANDLE h)
{
	return dapl_handle_get_any(h);
}

DAT_RETURN dapl_set_consumer_context(DAT_HANDLE h, DAT_CONTEXT context)
{
	struct dapl_header *hdr = any_object(h);

	if (!hdr)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	hdr->context = context;
	return DAT_SUCCESS;
}

DAT_RETURN dapl_get_consumer_context(DAT_HANDLE h, DAT_CONTEXT *context)
{
	struct dapl_header *hdr = any_object(h);

	if (!hdr)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	if (!context)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*context = hdr->context;
	return DAT_SUCCESS;
}

DAT_RETURN dapl_get_handle_type(DAT_HANDLE h, DAT_HANDLE_TYPE *type)
{
	struct dapl_header *hdr = any_object(h);

	if (!hdr)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	if (!type)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*type = hdr->type;
	return DAT_SUCCESS;
}

#if DAT_GEN == 2
DAT_RETURN dapl_ia_ha_related(DAT_IA_HANDLE ia, const DAT_NAME_PTR name,
			      DAT_BOOLEAN *related)
{
	(void)ia; (void)name; (void)related;
	return dapl_not_implemented("dat_ia_ha_related",
				    "no high-availability IA groups (ha_supported false)");
}
#endif
