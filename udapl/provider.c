/* dat_provider_init / dat_provider_fini: the two symbols a provider library
 * exports.  libdat calls init once per dat.conf line naming this library;
 * each line gets its own DAT_PROVIDER table (objects point at it) holding
 * that line's ia_params. */
#include "config.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dat_gen.h"

#include "core.h"
#include "entry.h"
#include "handle.h"

#define EXPORT __attribute__((visibility("default")))

static pthread_mutex_t providers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dapl_provider *providers;

static const DAT_PROVIDER dapl_table = {
	.ia_open_func = dapl_ia_open,
	.ia_query_func = dapl_ia_query,
	.ia_close_func = dapl_ia_close,
	.set_consumer_context_func = dapl_set_consumer_context,
	.get_consumer_context_func = dapl_get_consumer_context,
	.get_handle_type_func = dapl_get_handle_type,
	.cno_create_func = dapl_cno_create,
	.cno_modify_agent_func = dapl_cno_modify_agent,
	.cno_query_func = dapl_cno_query,
	.cno_free_func = dapl_cno_free,
	.cno_wait_func = dapl_cno_wait,
	.cr_query_func = dapl_cr_query,
	.cr_accept_func = dapl_cr_accept,
	.cr_reject_func = dapl_cr_reject,
	.cr_handoff_func = dapl_cr_handoff,
	.evd_create_func = dapl_evd_create,
	.evd_query_func = dapl_evd_query,
	.evd_modify_cno_func = dapl_evd_modify_cno,
	.evd_enable_func = dapl_evd_enable,
	.evd_disable_func = dapl_evd_disable,
	.evd_wait_func = dapl_evd_wait,
	.evd_resize_func = dapl_evd_resize,
	.evd_post_se_func = dapl_evd_post_se,
	.evd_dequeue_func = dapl_evd_dequeue,
	.evd_free_func = dapl_evd_free,
	.ep_create_func = dapl_ep_create,
	.ep_query_func = dapl_ep_query,
	.ep_modify_func = dapl_ep_modify,
	.ep_connect_func = dapl_ep_connect,
	.ep_dup_connect_func = dapl_ep_dup_connect,
	.ep_disconnect_func = dapl_ep_disconnect,
	.ep_post_send_func = dapl_ep_post_send,
	.ep_post_recv_func = dapl_ep_post_recv,
	.ep_post_rdma_read_func = dapl_ep_post_rdma_read,
	.ep_post_rdma_write_func = dapl_ep_post_rdma_write,
	.ep_get_status_func = dapl_ep_get_status,
	.ep_free_func = dapl_ep_free,
	.lmr_create_func = dapl_lmr_create,
	.lmr_query_func = dapl_lmr_query,
	.lmr_free_func = dapl_lmr_free,
	.rmr_create_func = dapl_rmr_create,
	.rmr_query_func = dapl_rmr_query,
	.rmr_bind_func = dapl_rmr_bind,
	.rmr_free_func = dapl_rmr_free,
	.psp_create_func = dapl_psp_create,
	.psp_query_func = dapl_psp_query,
	.psp_free_func = dapl_psp_free,
	.rsp_create_func = dapl_rsp_create,
	.rsp_query_func = dapl_rsp_query,
	.rsp_free_func = dapl_rsp_free,
	.pz_create_func = dapl_pz_create,
	.pz_query_func = dapl_pz_query,
	.pz_free_func = dapl_pz_free,
	.psp_create_any_func = dapl_psp_create_any,
	.ep_reset_func = dapl_ep_reset,
	.evd_set_unwaitable_func = dapl_evd_set_unwaitable,
	.evd_clear_unwaitable_func = dapl_evd_clear_unwaitable,
	.lmr_sync_rdma_read_func = dapl_lmr_sync_rdma_read,
	.lmr_sync_rdma_write_func = dapl_lmr_sync_rdma_write,
	.ep_create_with_srq_func = dapl_ep_create_with_srq,
	.ep_recv_query_func = dapl_ep_recv_query,
	.ep_set_watermark_func = dapl_ep_set_watermark,
	.srq_create_func = dapl_srq_create,
	.srq_free_func = dapl_srq_free,
	.srq_post_recv_func = dapl_srq_post_recv,
	.srq_query_func = dapl_srq_query,
	.srq_resize_func = dapl_srq_resize,
	.srq_set_lw_func = dapl_srq_set_lw,
#if DAT_GEN == 2
	.csp_create_func = dapl_csp_create,
	.csp_query_func = dapl_csp_query,
	.csp_free_func = dapl_csp_free,
	.ep_common_connect_func = dapl_ep_common_connect,
	.rmr_create_for_ep_func = dapl_rmr_create_for_ep,
	.ep_post_send_with_invalidate_func = dapl_ep_post_send_with_invalidate,
	.ep_post_rdma_read_to_rmr_func = dapl_ep_post_rdma_read_to_rmr,
	.cno_fd_create_func = dapl_cno_fd_create,
	.cno_trigger_func = dapl_cno_fd_trigger,
	.ia_ha_related_func = dapl_ia_ha_related,
	.handle_extendedop_func = dapl_handle_extendedop,
#endif
};

struct dapl_provider *dapl_provider_find(const char *ia_name)
{
	struct dapl_provider *p;

	pthread_mutex_lock(&providers_lock);
	for (p = providers; p; p = p->next)
		if (strcmp(p->info.ia_name, ia_name) == 0)
			break;
	pthread_mutex_unlock(&providers_lock);
	return p;
}

EXPORT void dat_provider_init(const DAT_PROVIDER_INFO *info,
			      const char *ia_params)
{
	struct dapl_provider *p;

	if (!info)
		return;
	p = calloc(1, sizeof(*p));
	if (!p)
		return;
	p->table = dapl_table;
	p->info = *info;
	p->table.device_name = p->info.ia_name;
	p->table.extension = p;
	p->ops = udapl_transport;
	p->ia_params = strdup(ia_params ? ia_params : "");
	if (!p->ia_params) {
		free(p);
		return;
	}
	if (dat_registry_add_provider(&p->table, info) != DAT_SUCCESS) {
		dapl_log("%s: the registry refused the provider", info->ia_name);
		free(p->ia_params);
		free(p);
		return;
	}
	/* before any IA of it opens: libdat then reads no handle value
	 * outside our arenas */
	dapl_handle_announce_provider(&p->table);
	pthread_mutex_lock(&providers_lock);
	p->next = providers;
	providers = p;
	pthread_mutex_unlock(&providers_lock);
}

EXPORT void dat_provider_fini(const DAT_PROVIDER_INFO *info)
{
	struct dapl_provider **pp, *p = NULL;
	bool last;

	if (!info)
		return;
	pthread_mutex_lock(&providers_lock);
	for (pp = &providers; *pp; pp = &(*pp)->next) {
		if (strcmp((*pp)->info.ia_name, info->ia_name) == 0) {
			p = *pp;
			*pp = p->next;
			break;
		}
	}
	last = providers == NULL;
	pthread_mutex_unlock(&providers_lock);
	if (!p)
		return;
	dat_registry_remove_provider(&p->table, info);
	/* libdat calls fini after the last IA of this name closed: the
	 * pages of dead objects go back to the kernel.  Their headers still
	 * name this table, which libdat only compares, never follows. */
	if (last)
		dapl_handle_release_all();
	free(p->ia_params);
	free(p);
}
