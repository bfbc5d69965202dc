/* A fake DAT provider for the registry tests and the build tree's demo.
 * It moves no data: every call checks its handle like a real provider
 * would, records which table slot it reached, and creates or frees plain
 * objects.  Freed objects stay in a pool, dead but readable, which is the
 * handle contract libdat relies on (dat_provider_init(3)).  The pool is
 * mapped once per load and never unmapped, and announced to libdat as
 * object memory (dat/libdat_private.h) like our real providers do, unless
 * ia_params says "no-announce": then the test provider stands for another
 * vendor's, whose handles libdat must still accept. */
#define _GNU_SOURCE 1                /* dlvsym, RTLD_DEFAULT */
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>

#include <dat/udat.h>
#include <dat/dat_registry.h>

#include "dattest_provider.h"
#include "libdat_private.h"

#define EXPORT __attribute__((visibility("default")))

#define TP_MAGIC_LIVE 0x7e57ab1eu
#define TP_MAGIC_DEAD 0xdeadab1eu
#define TP_POOL_SIZE 16384

struct tp_provider {
	DAT_PROVIDER table;          /* first: objects point here */
	DAT_PROVIDER_INFO info;
	int open_fails;
	int no_remove;
	int no_announce;
	int in_use;
	struct tp_provider *next;
};

struct tp_obj {
	DAT_PROVIDER *provider;      /* first word, as DAT requires */
	unsigned magic;
	DAT_HANDLE_TYPE type;
	struct tp_obj *ia;           /* owning IA (itself for an IA) */
	struct tp_obj *async_evd;    /* IA only */
	DAT_CONTEXT context;
};

static pthread_mutex_t tp_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tp_obj *tp_pool;       /* TP_POOL_SIZE objects */
static size_t tp_pool_used;
static struct tp_provider *tp_providers;
/* Static, so a provider left registered by a "no-remove" fini is not a leak
 * when libdat unloads us. */
static struct tp_provider tp_provider_pool[64];
static __thread struct dattest_last_call tp_last;

EXPORT struct dattest_last_call *dattest_last_call(void)
{
	return &tp_last;
}

#define SLOT(member) ((int)(offsetof(DAT_PROVIDER, member) / sizeof(void *)))

static struct tp_obj *tp_new(DAT_PROVIDER *provider, DAT_HANDLE_TYPE type,
			     struct tp_obj *ia)
{
	struct tp_obj *o = NULL;

	pthread_mutex_lock(&tp_lock);
	if (tp_pool && tp_pool_used < TP_POOL_SIZE) {
		o = &tp_pool[tp_pool_used++];
		o->provider = provider;
		o->magic = TP_MAGIC_LIVE;
		o->type = type;
		o->ia = ia ? ia : o;
	}
	pthread_mutex_unlock(&tp_lock);
	return o;
}

static struct tp_obj *tp_any(DAT_HANDLE h);

EXPORT DAT_CR_HANDLE dattest_new_cr(DAT_HANDLE any_object)
{
	struct tp_obj *o = tp_any(any_object);

	return o ? tp_new(o->provider, DAT_HANDLE_TYPE_CR, o->ia) : NULL;
}

/* Whether h is a live object of ours of the given type. */
static struct tp_obj *tp_get(DAT_HANDLE h, DAT_HANDLE_TYPE type)
{
	struct tp_obj *o = h;

	if (!tp_pool || o < tp_pool || o >= tp_pool + TP_POOL_SIZE)
		return NULL;
	if (o->magic != TP_MAGIC_LIVE || o->type != type)
		return NULL;
	return o;
}

static DAT_RETURN tp_call(int slot, DAT_HANDLE h, DAT_HANDLE_TYPE type,
			  DAT_RETURN_SUBTYPE bad)
{
	if (!tp_get(h, type))
		return DAT_ERROR(DAT_INVALID_HANDLE, bad);
	tp_last.slot = slot;
	tp_last.handle = h;
	return DAT_SUCCESS;
}

/* Creates a child object of the IA that owns parent. */
static DAT_RETURN tp_create(int slot, DAT_HANDLE parent,
			    DAT_HANDLE_TYPE parent_type, DAT_RETURN_SUBTYPE bad,
			    DAT_HANDLE_TYPE type, DAT_HANDLE *out)
{
	struct tp_obj *p = tp_get(parent, parent_type), *o;
	DAT_RETURN rc = tp_call(slot, parent, parent_type, bad);

	if (rc != DAT_SUCCESS)
		return rc;
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	o = tp_new(p->provider, type, p->ia);
	if (!o)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	*out = o;
	return DAT_SUCCESS;
}

static DAT_RETURN tp_free(int slot, DAT_HANDLE h, DAT_HANDLE_TYPE type,
			  DAT_RETURN_SUBTYPE bad)
{
	DAT_RETURN rc = tp_call(slot, h, type, bad);

	if (rc == DAT_SUCCESS)
		((struct tp_obj *)h)->magic = TP_MAGIC_DEAD;
	return rc;
}

static int tp_has_children(struct tp_obj *ia)
{
	size_t i;

	for (i = 0; i < tp_pool_used; i++)
		if (tp_pool[i].magic == TP_MAGIC_LIVE && tp_pool[i].ia == ia &&
		    &tp_pool[i] != ia && &tp_pool[i] != ia->async_evd)
			return 1;
	return 0;
}

/* ---- IA and generic handles ------------------------------------------- */

static DAT_RETURN tp_ia_open(const DAT_NAME_PTR name, DAT_COUNT qlen,
			     DAT_EVD_HANDLE *async_evd, DAT_IA_HANDLE *ia_handle)
{
	struct tp_provider *prov;
	struct tp_obj *ia, *evd;

	(void)qlen;
	pthread_mutex_lock(&tp_lock);
	for (prov = tp_providers; prov; prov = prov->next)
		if (!strcmp(prov->info.ia_name, name))
			break;
	pthread_mutex_unlock(&tp_lock);
	if (!prov)
		return DAT_ERROR(DAT_PROVIDER_NOT_FOUND, DAT_NAME_NOT_REGISTERED);
	if (prov->open_fails)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_DEVICE);
	ia = tp_new(&prov->table, DAT_HANDLE_TYPE_IA, NULL);
	evd = ia ? tp_new(&prov->table, DAT_HANDLE_TYPE_EVD, ia) : NULL;
	if (!evd)
		return DAT_ERROR(DAT_INSUFFICIENT_RESOURCES,
				 DAT_RESOURCE_MEMORY);
	ia->async_evd = evd;
	*async_evd = evd;
	*ia_handle = ia;
	tp_last.slot = SLOT(ia_open_func);
	tp_last.handle = ia;
	return DAT_SUCCESS;
}

static DAT_RETURN tp_ia_query(DAT_IA_HANDLE ia_handle, DAT_EVD_HANDLE *async_evd,
			      DAT_IA_ATTR_MASK ia_mask, DAT_IA_ATTR *ia_attr,
			      DAT_PROVIDER_ATTR_MASK prov_mask,
			      DAT_PROVIDER_ATTR *prov_attr)
{
	struct tp_obj *ia = tp_get(ia_handle, DAT_HANDLE_TYPE_IA);
	struct tp_provider *prov;
	DAT_RETURN rc = tp_call(SLOT(ia_query_func), ia_handle,
				DAT_HANDLE_TYPE_IA, DAT_INVALID_HANDLE_IA);

	if (rc != DAT_SUCCESS)
		return rc;
	prov = (struct tp_provider *)ia->provider;
	if (async_evd)
		*async_evd = ia->async_evd;
	if (ia_attr && ia_mask) {
		memset(ia_attr, 0, sizeof(*ia_attr));
		strcpy(ia_attr->adapter_name, prov->info.ia_name);
		strcpy(ia_attr->vendor_name, "libdat test provider");
		ia_attr->max_eps = 16;
	}
	if (prov_attr && prov_mask) {
		memset(prov_attr, 0, sizeof(*prov_attr));
		strcpy(prov_attr->provider_name, "dattest");
		prov_attr->provider_version_major = 0;
		prov_attr->provider_version_minor = 1;
		prov_attr->dapl_version_major = 1;
		prov_attr->dapl_version_minor = 2;
		prov_attr->is_thread_safe = DAT_TRUE;
	}
	return DAT_SUCCESS;
}

static DAT_RETURN tp_ia_close(DAT_IA_HANDLE ia_handle, DAT_CLOSE_FLAGS flags)
{
	struct tp_obj *ia = tp_get(ia_handle, DAT_HANDLE_TYPE_IA);
	size_t i;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	pthread_mutex_lock(&tp_lock);
	if (flags == DAT_CLOSE_GRACEFUL_FLAG && tp_has_children(ia)) {
		pthread_mutex_unlock(&tp_lock);
		return DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_IA_IN_USE);
	}
	for (i = 0; i < tp_pool_used; i++)
		if (tp_pool[i].ia == ia)
			tp_pool[i].magic = TP_MAGIC_DEAD;
	pthread_mutex_unlock(&tp_lock);
	tp_last.slot = SLOT(ia_close_func);
	tp_last.handle = ia_handle;
	return DAT_SUCCESS;
}

/* Any live object of ours, whatever its type. */
static struct tp_obj *tp_any(DAT_HANDLE h)
{
	struct tp_obj *o = h;

	if (!tp_pool || o < tp_pool || o >= tp_pool + TP_POOL_SIZE ||
	    o->magic != TP_MAGIC_LIVE)
		return NULL;
	return o;
}

static DAT_RETURN tp_set_consumer_context(DAT_HANDLE h, DAT_CONTEXT context)
{
	struct tp_obj *o = tp_any(h);

	if (!o)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	o->context = context;
	tp_last.slot = SLOT(set_consumer_context_func);
	tp_last.handle = h;
	return DAT_SUCCESS;
}

static DAT_RETURN tp_get_consumer_context(DAT_HANDLE h, DAT_CONTEXT *context)
{
	struct tp_obj *o = tp_any(h);

	if (!o)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	if (!context)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*context = o->context;
	tp_last.slot = SLOT(get_consumer_context_func);
	tp_last.handle = h;
	return DAT_SUCCESS;
}

static DAT_RETURN tp_get_handle_type(DAT_HANDLE h, DAT_HANDLE_TYPE *type)
{
	struct tp_obj *o = tp_any(h);

	if (!o)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE1);
	if (!type)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	*type = o->type;
	tp_last.slot = SLOT(get_handle_type_func);
	tp_last.handle = h;
	return DAT_SUCCESS;
}

/* ---- CNO --------------------------------------------------------------- */

static DAT_RETURN tp_cno_create(DAT_IA_HANDLE ia, DAT_OS_WAIT_PROXY_AGENT agent,
				DAT_CNO_HANDLE *cno)
{
	(void)agent;
	return tp_create(SLOT(cno_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_CNO, cno);
}

static DAT_RETURN tp_cno_modify_agent(DAT_CNO_HANDLE cno,
				      DAT_OS_WAIT_PROXY_AGENT agent)
{
	(void)agent;
	return tp_call(SLOT(cno_modify_agent_func), cno, DAT_HANDLE_TYPE_CNO,
		       DAT_INVALID_HANDLE_CNO);
}

static DAT_RETURN tp_cno_query(DAT_CNO_HANDLE cno, DAT_CNO_PARAM_MASK mask,
			       DAT_CNO_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(cno_query_func), cno, DAT_HANDLE_TYPE_CNO,
				DAT_INVALID_HANDLE_CNO);

	if (rc == DAT_SUCCESS && param && (mask & DAT_CNO_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)cno)->ia;
	return rc;
}

static DAT_RETURN tp_cno_free(DAT_CNO_HANDLE cno)
{
	return tp_free(SLOT(cno_free_func), cno, DAT_HANDLE_TYPE_CNO,
		       DAT_INVALID_HANDLE_CNO);
}

static DAT_RETURN tp_cno_wait(DAT_CNO_HANDLE cno, DAT_TIMEOUT timeout,
			      DAT_EVD_HANDLE *evd)
{
	DAT_RETURN rc = tp_call(SLOT(cno_wait_func), cno, DAT_HANDLE_TYPE_CNO,
				DAT_INVALID_HANDLE_CNO);

	(void)timeout;
	(void)evd;
	return rc == DAT_SUCCESS ? DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE)
				 : rc;
}

/* ---- CR ---------------------------------------------------------------- */

static DAT_RETURN tp_cr_query(DAT_CR_HANDLE cr, DAT_CR_PARAM_MASK mask,
			      DAT_CR_PARAM *param)
{
	(void)mask;
	(void)param;
	return tp_call(SLOT(cr_query_func), cr, DAT_HANDLE_TYPE_CR,
		       DAT_INVALID_HANDLE_CR);
}

static DAT_RETURN tp_cr_accept(DAT_CR_HANDLE cr, DAT_EP_HANDLE ep,
			       DAT_COUNT size, const DAT_PVOID data)
{
	(void)ep;
	(void)size;
	(void)data;
	return tp_call(SLOT(cr_accept_func), cr, DAT_HANDLE_TYPE_CR,
		       DAT_INVALID_HANDLE_CR);
}

static DAT_RETURN tp_cr_reject(DAT_CR_HANDLE cr)
{
	return tp_call(SLOT(cr_reject_func), cr, DAT_HANDLE_TYPE_CR,
		       DAT_INVALID_HANDLE_CR);
}

static DAT_RETURN tp_cr_handoff(DAT_CR_HANDLE cr, DAT_CONN_QUAL qual)
{
	(void)qual;
	return tp_call(SLOT(cr_handoff_func), cr, DAT_HANDLE_TYPE_CR,
		       DAT_INVALID_HANDLE_CR);
}

/* ---- EVD --------------------------------------------------------------- */

static DAT_RETURN tp_evd_create(DAT_IA_HANDLE ia, DAT_COUNT qlen,
				DAT_CNO_HANDLE cno, DAT_EVD_FLAGS flags,
				DAT_EVD_HANDLE *evd)
{
	(void)qlen;
	(void)cno;
	(void)flags;
	return tp_create(SLOT(evd_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_EVD, evd);
}

#define TP_EVD_CALL(name)                                                   \
	static DAT_RETURN tp_##name(DAT_EVD_HANDLE evd)                     \
	{                                                                   \
		return tp_call(SLOT(name##_func), evd, DAT_HANDLE_TYPE_EVD, \
			       DAT_INVALID_HANDLE1);                        \
	}
TP_EVD_CALL(evd_enable)
TP_EVD_CALL(evd_disable)
TP_EVD_CALL(evd_set_unwaitable)
TP_EVD_CALL(evd_clear_unwaitable)

static DAT_RETURN tp_evd_query(DAT_EVD_HANDLE evd, DAT_EVD_PARAM_MASK mask,
			       DAT_EVD_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(evd_query_func), evd, DAT_HANDLE_TYPE_EVD,
				DAT_INVALID_HANDLE1);

	if (rc == DAT_SUCCESS && param && (mask & DAT_EVD_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)evd)->ia;
	return rc;
}

static DAT_RETURN tp_evd_modify_cno(DAT_EVD_HANDLE evd, DAT_CNO_HANDLE cno)
{
	(void)cno;
	return tp_call(SLOT(evd_modify_cno_func), evd, DAT_HANDLE_TYPE_EVD,
		       DAT_INVALID_HANDLE1);
}

/* The async EVD of an IA always holds one IA_CATASTROPHIC event naming its
 * IA, so the tests can see libdat translate the IA in events. */
static DAT_RETURN tp_evd_event(DAT_EVD_HANDLE evd, DAT_EVENT *event)
{
	struct tp_obj *o = evd;

	if (o->ia->async_evd != o)
		return DAT_ERROR(DAT_QUEUE_EMPTY, DAT_NO_SUBTYPE);
	if (!event)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	memset(event, 0, sizeof(*event));
	event->event_number = DAT_ASYNC_ERROR_IA_CATASTROPHIC;
	event->evd_handle = evd;
	event->event_data.asynch_error_event_data.dat_handle = o->ia;
	return DAT_SUCCESS;
}

static DAT_RETURN tp_evd_wait(DAT_EVD_HANDLE evd, DAT_TIMEOUT timeout,
			      DAT_COUNT threshold, DAT_EVENT *event,
			      DAT_COUNT *nmore)
{
	DAT_RETURN rc = tp_call(SLOT(evd_wait_func), evd, DAT_HANDLE_TYPE_EVD,
				DAT_INVALID_HANDLE1);

	(void)timeout;
	(void)threshold;
	if (rc != DAT_SUCCESS)
		return rc;
	if (nmore)
		*nmore = 0;
	rc = tp_evd_event(evd, event);
	return rc == DAT_SUCCESS ? rc
				 : DAT_ERROR(DAT_TIMEOUT_EXPIRED, DAT_NO_SUBTYPE);
}

static DAT_RETURN tp_evd_resize(DAT_EVD_HANDLE evd, DAT_COUNT qlen)
{
	(void)qlen;
	return tp_call(SLOT(evd_resize_func), evd, DAT_HANDLE_TYPE_EVD,
		       DAT_INVALID_HANDLE1);
}

static DAT_RETURN tp_evd_post_se(DAT_EVD_HANDLE evd, const DAT_EVENT *event)
{
	(void)event;
	return tp_call(SLOT(evd_post_se_func), evd, DAT_HANDLE_TYPE_EVD,
		       DAT_INVALID_HANDLE1);
}

static DAT_RETURN tp_evd_dequeue(DAT_EVD_HANDLE evd, DAT_EVENT *event)
{
	DAT_RETURN rc = tp_call(SLOT(evd_dequeue_func), evd,
				DAT_HANDLE_TYPE_EVD, DAT_INVALID_HANDLE1);

	return rc == DAT_SUCCESS ? tp_evd_event(evd, event) : rc;
}

static DAT_RETURN tp_evd_free(DAT_EVD_HANDLE evd)
{
	return tp_free(SLOT(evd_free_func), evd, DAT_HANDLE_TYPE_EVD,
		       DAT_INVALID_HANDLE1);
}

/* ---- EP ---------------------------------------------------------------- */

static DAT_RETURN tp_ep_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
			       DAT_EVD_HANDLE recv_evd, DAT_EVD_HANDLE req_evd,
			       DAT_EVD_HANDLE conn_evd, const DAT_EP_ATTR *attr,
			       DAT_EP_HANDLE *ep)
{
	(void)pz;
	(void)recv_evd;
	(void)req_evd;
	(void)conn_evd;
	(void)attr;
	return tp_create(SLOT(ep_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_EP, ep);
}

static DAT_RETURN tp_ep_create_with_srq(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
					DAT_EVD_HANDLE recv_evd,
					DAT_EVD_HANDLE req_evd,
					DAT_EVD_HANDLE conn_evd,
					DAT_SRQ_HANDLE srq,
					const DAT_EP_ATTR *attr,
					DAT_EP_HANDLE *ep)
{
	(void)pz;
	(void)recv_evd;
	(void)req_evd;
	(void)conn_evd;
	(void)srq;
	(void)attr;
	return tp_create(SLOT(ep_create_with_srq_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_EP, ep);
}

static DAT_RETURN tp_ep_query(DAT_EP_HANDLE ep, DAT_EP_PARAM_MASK mask,
			      DAT_EP_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(ep_query_func), ep, DAT_HANDLE_TYPE_EP,
				DAT_INVALID_HANDLE_EP);

	if (rc == DAT_SUCCESS && param && (mask & DAT_EP_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)ep)->ia;
	return rc;
}

static DAT_RETURN tp_ep_modify(DAT_EP_HANDLE ep, DAT_EP_PARAM_MASK mask,
			       const DAT_EP_PARAM *param)
{
	(void)mask;
	(void)param;
	return tp_call(SLOT(ep_modify_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_connect(DAT_EP_HANDLE ep, DAT_IA_ADDRESS_PTR addr,
				DAT_CONN_QUAL qual, DAT_TIMEOUT timeout,
				DAT_COUNT size, const DAT_PVOID data,
				DAT_QOS qos, DAT_CONNECT_FLAGS flags)
{
	(void)addr;
	(void)qual;
	(void)timeout;
	(void)size;
	(void)data;
	(void)qos;
	(void)flags;
	return tp_call(SLOT(ep_connect_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_dup_connect(DAT_EP_HANDLE ep, DAT_EP_HANDLE dup,
				    DAT_TIMEOUT timeout, DAT_COUNT size,
				    const DAT_PVOID data, DAT_QOS qos)
{
	(void)dup;
	(void)timeout;
	(void)size;
	(void)data;
	(void)qos;
	return tp_call(SLOT(ep_dup_connect_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_disconnect(DAT_EP_HANDLE ep, DAT_CLOSE_FLAGS flags)
{
	(void)flags;
	return tp_call(SLOT(ep_disconnect_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_post_send(DAT_EP_HANDLE ep, DAT_COUNT n,
				  DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				  DAT_COMPLETION_FLAGS flags)
{
	(void)n;
	(void)iov;
	(void)cookie;
	(void)flags;
	return tp_call(SLOT(ep_post_send_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_post_recv(DAT_EP_HANDLE ep, DAT_COUNT n,
				  DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie,
				  DAT_COMPLETION_FLAGS flags)
{
	(void)n;
	(void)iov;
	(void)cookie;
	(void)flags;
	return tp_call(SLOT(ep_post_recv_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_post_rdma_read(DAT_EP_HANDLE ep, DAT_COUNT n,
				       DAT_LMR_TRIPLET *iov,
				       DAT_DTO_COOKIE cookie,
				       const DAT_RMR_TRIPLET *remote,
				       DAT_COMPLETION_FLAGS flags)
{
	(void)n;
	(void)iov;
	(void)cookie;
	(void)remote;
	(void)flags;
	return tp_call(SLOT(ep_post_rdma_read_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_post_rdma_write(DAT_EP_HANDLE ep, DAT_COUNT n,
					DAT_LMR_TRIPLET *iov,
					DAT_DTO_COOKIE cookie,
					const DAT_RMR_TRIPLET *remote,
					DAT_COMPLETION_FLAGS flags)
{
	(void)n;
	(void)iov;
	(void)cookie;
	(void)remote;
	(void)flags;
	return tp_call(SLOT(ep_post_rdma_write_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_get_status(DAT_EP_HANDLE ep, DAT_EP_STATE *state,
				   DAT_BOOLEAN *recv_idle,
				   DAT_BOOLEAN *req_idle)
{
	DAT_RETURN rc = tp_call(SLOT(ep_get_status_func), ep,
				DAT_HANDLE_TYPE_EP, DAT_INVALID_HANDLE_EP);

	if (rc == DAT_SUCCESS && state)
		*state = DAT_EP_STATE_UNCONNECTED;
	if (rc == DAT_SUCCESS && recv_idle)
		*recv_idle = DAT_TRUE;
	if (rc == DAT_SUCCESS && req_idle)
		*req_idle = DAT_TRUE;
	return rc;
}

static DAT_RETURN tp_ep_free(DAT_EP_HANDLE ep)
{
	return tp_free(SLOT(ep_free_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_reset(DAT_EP_HANDLE ep)
{
	return tp_call(SLOT(ep_reset_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_recv_query(DAT_EP_HANDLE ep, DAT_COUNT *nbufs,
				   DAT_COUNT *span)
{
	(void)nbufs;
	(void)span;
	return tp_call(SLOT(ep_recv_query_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

static DAT_RETURN tp_ep_set_watermark(DAT_EP_HANDLE ep, DAT_COUNT soft,
				      DAT_COUNT hard)
{
	(void)soft;
	(void)hard;
	return tp_call(SLOT(ep_set_watermark_func), ep, DAT_HANDLE_TYPE_EP,
		       DAT_INVALID_HANDLE_EP);
}

/* ---- LMR, RMR ---------------------------------------------------------- */

static DAT_RETURN tp_lmr_create(DAT_IA_HANDLE ia, DAT_MEM_TYPE type,
				DAT_REGION_DESCRIPTION region, DAT_VLEN length,
				DAT_PZ_HANDLE pz, DAT_MEM_PRIV_FLAGS priv,
				DAT_LMR_HANDLE *lmr, DAT_LMR_CONTEXT *lctx,
				DAT_RMR_CONTEXT *rctx, DAT_VLEN *reg_len,
				DAT_VADDR *reg_addr)
{
	(void)type;
	(void)region;
	(void)length;
	(void)pz;
	(void)priv;
	(void)lctx;
	(void)rctx;
	(void)reg_len;
	(void)reg_addr;
	return tp_create(SLOT(lmr_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_LMR, lmr);
}

static DAT_RETURN tp_lmr_query(DAT_LMR_HANDLE lmr, DAT_LMR_PARAM_MASK mask,
			       DAT_LMR_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(lmr_query_func), lmr, DAT_HANDLE_TYPE_LMR,
				DAT_INVALID_HANDLE_LMR);

	if (rc == DAT_SUCCESS && param && (mask & DAT_LMR_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)lmr)->ia;
	return rc;
}

static DAT_RETURN tp_lmr_free(DAT_LMR_HANDLE lmr)
{
	return tp_free(SLOT(lmr_free_func), lmr, DAT_HANDLE_TYPE_LMR,
		       DAT_INVALID_HANDLE_LMR);
}

static DAT_RETURN tp_lmr_sync_rdma_read(DAT_IA_HANDLE ia,
					const DAT_LMR_TRIPLET *iov, DAT_VLEN n)
{
	(void)iov;
	(void)n;
	return tp_call(SLOT(lmr_sync_rdma_read_func), ia, DAT_HANDLE_TYPE_IA,
		       DAT_INVALID_HANDLE_IA);
}

static DAT_RETURN tp_lmr_sync_rdma_write(DAT_IA_HANDLE ia,
					 const DAT_LMR_TRIPLET *iov, DAT_VLEN n)
{
	(void)iov;
	(void)n;
	return tp_call(SLOT(lmr_sync_rdma_write_func), ia, DAT_HANDLE_TYPE_IA,
		       DAT_INVALID_HANDLE_IA);
}

static DAT_RETURN tp_rmr_create(DAT_PZ_HANDLE pz, DAT_RMR_HANDLE *rmr)
{
	return tp_create(SLOT(rmr_create_func), pz, DAT_HANDLE_TYPE_PZ,
			 DAT_INVALID_HANDLE_PZ, DAT_HANDLE_TYPE_RMR, rmr);
}

static DAT_RETURN tp_rmr_query(DAT_RMR_HANDLE rmr, DAT_RMR_PARAM_MASK mask,
			       DAT_RMR_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(rmr_query_func), rmr, DAT_HANDLE_TYPE_RMR,
				DAT_INVALID_HANDLE_RMR);

	if (rc == DAT_SUCCESS && param && (mask & DAT_RMR_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)rmr)->ia;
	return rc;
}

static DAT_RETURN tp_rmr_bind(DAT_RMR_HANDLE rmr, const DAT_LMR_TRIPLET *lmr,
			      DAT_MEM_PRIV_FLAGS priv, DAT_EP_HANDLE ep,
			      DAT_RMR_COOKIE cookie, DAT_COMPLETION_FLAGS flags,
			      DAT_RMR_CONTEXT *ctx)
{
	(void)lmr;
	(void)priv;
	(void)ep;
	(void)cookie;
	(void)flags;
	(void)ctx;
	return tp_call(SLOT(rmr_bind_func), rmr, DAT_HANDLE_TYPE_RMR,
		       DAT_INVALID_HANDLE_RMR);
}

static DAT_RETURN tp_rmr_free(DAT_RMR_HANDLE rmr)
{
	return tp_free(SLOT(rmr_free_func), rmr, DAT_HANDLE_TYPE_RMR,
		       DAT_INVALID_HANDLE_RMR);
}

/* ---- PSP, RSP, PZ ------------------------------------------------------ */

static DAT_RETURN tp_psp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
				DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
				DAT_PSP_HANDLE *psp)
{
	(void)qual;
	(void)evd;
	(void)flags;
	return tp_create(SLOT(psp_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_PSP, psp);
}

static DAT_RETURN tp_psp_create_any(DAT_IA_HANDLE ia, DAT_CONN_QUAL *qual,
				    DAT_EVD_HANDLE evd, DAT_PSP_FLAGS flags,
				    DAT_PSP_HANDLE *psp)
{
	(void)evd;
	(void)flags;
	if (qual)
		*qual = 45279;
	return tp_create(SLOT(psp_create_any_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_PSP, psp);
}

static DAT_RETURN tp_psp_query(DAT_PSP_HANDLE psp, DAT_PSP_PARAM_MASK mask,
			       DAT_PSP_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(psp_query_func), psp, DAT_HANDLE_TYPE_PSP,
				DAT_INVALID_HANDLE_PSP);

	if (rc == DAT_SUCCESS && param && (mask & DAT_PSP_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)psp)->ia;
	return rc;
}

static DAT_RETURN tp_psp_free(DAT_PSP_HANDLE psp)
{
	return tp_free(SLOT(psp_free_func), psp, DAT_HANDLE_TYPE_PSP,
		       DAT_INVALID_HANDLE_PSP);
}

static DAT_RETURN tp_rsp_create(DAT_IA_HANDLE ia, DAT_CONN_QUAL qual,
				DAT_EP_HANDLE ep, DAT_EVD_HANDLE evd,
				DAT_RSP_HANDLE *rsp)
{
	(void)qual;
	(void)ep;
	(void)evd;
	return tp_create(SLOT(rsp_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_RSP, rsp);
}

static DAT_RETURN tp_rsp_query(DAT_RSP_HANDLE rsp, DAT_RSP_PARAM_MASK mask,
			       DAT_RSP_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(rsp_query_func), rsp, DAT_HANDLE_TYPE_RSP,
				DAT_INVALID_HANDLE_RSP);

	if (rc == DAT_SUCCESS && param && (mask & DAT_RSP_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)rsp)->ia;
	return rc;
}

static DAT_RETURN tp_rsp_free(DAT_RSP_HANDLE rsp)
{
	return tp_free(SLOT(rsp_free_func), rsp, DAT_HANDLE_TYPE_RSP,
		       DAT_INVALID_HANDLE_RSP);
}

static DAT_RETURN tp_pz_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE *pz)
{
	return tp_create(SLOT(pz_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_PZ, pz);
}

static DAT_RETURN tp_pz_query(DAT_PZ_HANDLE pz, DAT_PZ_PARAM_MASK mask,
			      DAT_PZ_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(pz_query_func), pz, DAT_HANDLE_TYPE_PZ,
				DAT_INVALID_HANDLE_PZ);

	if (rc == DAT_SUCCESS && param && (mask & DAT_PZ_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)pz)->ia;
	return rc;
}

static DAT_RETURN tp_pz_free(DAT_PZ_HANDLE pz)
{
	return tp_free(SLOT(pz_free_func), pz, DAT_HANDLE_TYPE_PZ,
		       DAT_INVALID_HANDLE_PZ);
}

/* ---- SRQ --------------------------------------------------------------- */

static DAT_RETURN tp_srq_create(DAT_IA_HANDLE ia, DAT_PZ_HANDLE pz,
				DAT_SRQ_ATTR *attr, DAT_SRQ_HANDLE *srq)
{
	(void)pz;
	(void)attr;
	return tp_create(SLOT(srq_create_func), ia, DAT_HANDLE_TYPE_IA,
			 DAT_INVALID_HANDLE_IA, DAT_HANDLE_TYPE_SRQ, srq);
}

static DAT_RETURN tp_srq_free(DAT_SRQ_HANDLE srq)
{
	return tp_free(SLOT(srq_free_func), srq, DAT_HANDLE_TYPE_SRQ,
		       DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN tp_srq_post_recv(DAT_SRQ_HANDLE srq, DAT_COUNT n,
				   DAT_LMR_TRIPLET *iov, DAT_DTO_COOKIE cookie)
{
	(void)n;
	(void)iov;
	(void)cookie;
	return tp_call(SLOT(srq_post_recv_func), srq, DAT_HANDLE_TYPE_SRQ,
		       DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN tp_srq_query(DAT_SRQ_HANDLE srq, DAT_SRQ_PARAM_MASK mask,
			       DAT_SRQ_PARAM *param)
{
	DAT_RETURN rc = tp_call(SLOT(srq_query_func), srq, DAT_HANDLE_TYPE_SRQ,
				DAT_INVALID_HANDLE_SRQ);

	if (rc == DAT_SUCCESS && param && (mask & DAT_SRQ_FIELD_IA_HANDLE))
		param->ia_handle = ((struct tp_obj *)srq)->ia;
	return rc;
}

static DAT_RETURN tp_srq_resize(DAT_SRQ_HANDLE srq, DAT_COUNT n)
{
	(void)n;
	return tp_call(SLOT(srq_resize_func), srq, DAT_HANDLE_TYPE_SRQ,
		       DAT_INVALID_HANDLE_SRQ);
}

static DAT_RETURN tp_srq_set_lw(DAT_SRQ_HANDLE srq, DAT_COUNT lw)
{
	(void)lw;
	return tp_call(SLOT(srq_set_lw_func), srq, DAT_HANDLE_TYPE_SRQ,
		       DAT_INVALID_HANDLE_SRQ);
}

/* ---- the table and the two entry points -------------------------------- */

static const DAT_PROVIDER tp_table = {
	.device_name = "dattest",
	.extension = NULL,
	.ia_open_func = tp_ia_open,
	.ia_query_func = tp_ia_query,
	.ia_close_func = tp_ia_close,
	.set_consumer_context_func = tp_set_consumer_context,
	.get_consumer_context_func = tp_get_consumer_context,
	.get_handle_type_func = tp_get_handle_type,
	.cno_create_func = tp_cno_create,
	.cno_modify_agent_func = tp_cno_modify_agent,
	.cno_query_func = tp_cno_query,
	.cno_free_func = tp_cno_free,
	.cno_wait_func = tp_cno_wait,
	.cr_query_func = tp_cr_query,
	.cr_accept_func = tp_cr_accept,
	.cr_reject_func = tp_cr_reject,
	.cr_handoff_func = tp_cr_handoff,
	.evd_create_func = tp_evd_create,
	.evd_query_func = tp_evd_query,
	.evd_modify_cno_func = tp_evd_modify_cno,
	.evd_enable_func = tp_evd_enable,
	.evd_disable_func = tp_evd_disable,
	.evd_wait_func = tp_evd_wait,
	.evd_resize_func = tp_evd_resize,
	.evd_post_se_func = tp_evd_post_se,
	.evd_dequeue_func = tp_evd_dequeue,
	.evd_free_func = tp_evd_free,
	.ep_create_func = tp_ep_create,
	.ep_query_func = tp_ep_query,
	.ep_modify_func = tp_ep_modify,
	.ep_connect_func = tp_ep_connect,
	.ep_dup_connect_func = tp_ep_dup_connect,
	.ep_disconnect_func = tp_ep_disconnect,
	.ep_post_send_func = tp_ep_post_send,
	.ep_post_recv_func = tp_ep_post_recv,
	.ep_post_rdma_read_func = tp_ep_post_rdma_read,
	.ep_post_rdma_write_func = tp_ep_post_rdma_write,
	.ep_get_status_func = tp_ep_get_status,
	.ep_free_func = tp_ep_free,
	.lmr_create_func = tp_lmr_create,
	.lmr_query_func = tp_lmr_query,
	.lmr_free_func = tp_lmr_free,
	.rmr_create_func = tp_rmr_create,
	.rmr_query_func = tp_rmr_query,
	.rmr_bind_func = tp_rmr_bind,
	.rmr_free_func = tp_rmr_free,
	.psp_create_func = tp_psp_create,
	.psp_query_func = tp_psp_query,
	.psp_free_func = tp_psp_free,
	.rsp_create_func = tp_rsp_create,
	.rsp_query_func = tp_rsp_query,
	.rsp_free_func = tp_rsp_free,
	.pz_create_func = tp_pz_create,
	.pz_query_func = tp_pz_query,
	.pz_free_func = tp_pz_free,
	.psp_create_any_func = tp_psp_create_any,
	.ep_reset_func = tp_ep_reset,
	.evd_set_unwaitable_func = tp_evd_set_unwaitable,
	.evd_clear_unwaitable_func = tp_evd_clear_unwaitable,
	.lmr_sync_rdma_read_func = tp_lmr_sync_rdma_read,
	.lmr_sync_rdma_write_func = tp_lmr_sync_rdma_write,
	.ep_create_with_srq_func = tp_ep_create_with_srq,
	.ep_recv_query_func = tp_ep_recv_query,
	.ep_set_watermark_func = tp_ep_set_watermark,
	.srq_create_func = tp_srq_create,
	.srq_free_func = tp_srq_free,
	.srq_post_recv_func = tp_srq_post_recv,
	.srq_query_func = tp_srq_query,
	.srq_resize_func = tp_srq_resize,
	.srq_set_lw_func = tp_srq_set_lw,
};

static int has_word(const char *params, const char *word)
{
	size_t n = strlen(word);
	const char *p = params;

	while (p && (p = strstr(p, word))) {
		if ((p == params || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
		p += n;
	}
	return 0;
}

/* Maps the pool (tp_lock held); it outlives an unload, as handles may. */
static void tp_pool_map(void)
{
	void *p;

	if (tp_pool)
		return;
	p = mmap(NULL, TP_POOL_SIZE * sizeof(*tp_pool), PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p != MAP_FAILED)
		tp_pool = p;
}

/* libdat's private call, when it is ours. */
static void *registry_call(const char *name)
{
	return dlvsym(RTLD_DEFAULT, name, LIBDAT_PRIVATE_VERSION);
}

/* The pool is object memory, and prov promises to keep its objects there. */
static void tp_announce(struct tp_provider *prov)
{
	libdat_add_object_memory_fn add;
	libdat_provider_announces_fn announces;

	*(void **)&add = registry_call(LIBDAT_ADD_OBJECT_MEMORY);
	*(void **)&announces = registry_call(LIBDAT_PROVIDER_ANNOUNCES);
	if (!add || !announces)
		return;
	add(tp_pool, TP_POOL_SIZE * sizeof(*tp_pool));
	announces(&prov->table);
}

EXPORT void dat_provider_init(const DAT_PROVIDER_INFO *info,
			      const char *ia_params)
{
	struct tp_provider *prov;

	if (!info || has_word(ia_params, "no-register"))
		return;
	pthread_mutex_lock(&tp_lock);
	tp_pool_map();
	for (prov = tp_provider_pool; prov < tp_provider_pool + 64; prov++)
		if (!prov->in_use)
			break;
	if (prov == tp_provider_pool + 64) {
		pthread_mutex_unlock(&tp_lock);
		return;
	}
	memset(prov, 0, sizeof(*prov));
	prov->in_use = 1;
	pthread_mutex_unlock(&tp_lock);
	prov->table = tp_table;
	prov->info = *info;
	prov->table.device_name = prov->info.ia_name;
	prov->open_fails = has_word(ia_params, "open-fails");
	prov->no_remove = has_word(ia_params, "no-remove");
	prov->no_announce = has_word(ia_params, "no-announce");
	if (dat_registry_add_provider(&prov->table, info) != DAT_SUCCESS) {
		prov->in_use = 0;
		return;
	}
	if (!prov->no_announce && tp_pool)
		tp_announce(prov);
	pthread_mutex_lock(&tp_lock);
	prov->next = tp_providers;
	tp_providers = prov;
	pthread_mutex_unlock(&tp_lock);
}

EXPORT void dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	struct tp_provider **pp, *prov;

	pthread_mutex_lock(&tp_lock);
	for (pp = &tp_providers; *pp; pp = &(*pp)->next)
		if (!strcmp((*pp)->info.ia_name, info->ia_name))
			break;
	prov = *pp;
	if (prov && !prov->no_remove)
		*pp = prov->next;
	pthread_mutex_unlock(&tp_lock);
	if (!prov || prov->no_remove)
		return;
	dat_registry_remove_provider(&prov->table, info);
	pthread_mutex_lock(&tp_lock);
	prov->in_use = 0;
	pthread_mutex_unlock(&tp_lock);
}
