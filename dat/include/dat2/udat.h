/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * udat.h: the header uDAPL consumers include.  It declares the user-level
 * types and calls and pulls in the common API (dat.h) and status codes
 * (dat_error.h).  As with OpenFabrics dapl 2.1.10's headers, the provider
 * table, the redirection macros and the registration calls are not part
 * of it: providers include <dat2/dat_registry.h>, and users of the IB
 * extension <dat2/dat_ib_extensions.h>.
 *
 * Struct layouts, enum values and prototypes are the DAT 2.0 ABI of
 * OpenFabrics dapl 2.1.10 (Debian's libdapl-dev) on Linux.
 */

#ifndef _UDAT_H_
#define _UDAT_H_

#include <dat2/udat_config.h>
#include <dat2/dat_platform_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Kinds of memory an LMR can register. */
typedef enum dat_mem_type {
	DAT_MEM_TYPE_VIRTUAL		= 0x00,
	DAT_MEM_TYPE_LMR		= 0x01,
	DAT_MEM_TYPE_SHARED_VIRTUAL	= 0x02	/* uDAPL only */
} DAT_MEM_TYPE;

/* What dat_get_handle_type() reports. */
typedef enum dat_handle_type {
	DAT_HANDLE_TYPE_CR		= 0,
	DAT_HANDLE_TYPE_EP		= 1,
	DAT_HANDLE_TYPE_EVD		= 2,
	DAT_HANDLE_TYPE_IA		= 3,
	DAT_HANDLE_TYPE_LMR		= 4,
	DAT_HANDLE_TYPE_PSP		= 5,
	DAT_HANDLE_TYPE_PZ		= 6,
	DAT_HANDLE_TYPE_RMR		= 7,
	DAT_HANDLE_TYPE_RSP		= 8,
	DAT_HANDLE_TYPE_CNO		= 9,
	DAT_HANDLE_TYPE_SRQ		= 10,
	DAT_HANDLE_TYPE_CSP		= 11	/* DAT 2.0 */
#ifdef DAT_EXTENSIONS
	,
	DAT_HANDLE_TYPE_EXTENSION_BASE	= 12	/* first extension handle */
#endif
} DAT_HANDLE_TYPE;

/*
 * EVD state: three independent groups of bits, one value from each --
 * enabled/disabled, waitable/unwaitable and the notification mode.
 */
typedef enum dat_evd_state {
	DAT_EVD_STATE_ENABLED		= 0x01,
	DAT_EVD_STATE_DISABLED		= 0x02,
	DAT_EVD_STATE_WAITABLE		= 0x04,
	DAT_EVD_STATE_UNWAITABLE	= 0x08,
	DAT_EVD_STATE_CONFIG_NOTIFY	= 0x10,
	DAT_EVD_STATE_CONFIG_SOLICITED	= 0x20,
	DAT_EVD_STATE_CONFIG_THRESHOLD	= 0x30
} DAT_EVD_STATE;

typedef enum dat_evd_param_mask {
	DAT_EVD_FIELD_IA_HANDLE		= 0x01,
	DAT_EVD_FIELD_EVD_QLEN		= 0x02,
	DAT_EVD_FIELD_EVD_STATE		= 0x04,
	DAT_EVD_FIELD_CNO		= 0x08,
	DAT_EVD_FIELD_EVD_FLAGS		= 0x10,

	DAT_EVD_FIELD_ALL		= 0x1F
} DAT_EVD_PARAM_MASK;

typedef DAT_UINT64 DAT_PROVIDER_ATTR_MASK;

#ifdef __cplusplus
}
#endif

#include <dat2/dat.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef DAT_HANDLE	DAT_CNO_HANDLE;

struct dat_evd_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_COUNT		evd_qlen;
	DAT_EVD_STATE		evd_state;
	DAT_CNO_HANDLE		cno_handle;
	DAT_EVD_FLAGS		evd_flags;
};

/* Identifies shared memory regions between processes. */
#define DAT_LMR_COOKIE_SIZE	40
typedef char (*DAT_LMR_COOKIE)[DAT_LMR_COOKIE_SIZE];

/* OS wait proxy agent: called with instance_data and the EVD that
 * triggered the CNO. */
typedef void (DAT_API *DAT_AGENT_FUNC)(
	DAT_PVOID,			/* instance data */
	DAT_EVD_HANDLE);		/* triggering EVD */

typedef struct dat_os_wait_proxy_agent {
	DAT_PVOID		instance_data;
	DAT_AGENT_FUNC		proxy_agent_func;
} DAT_OS_WAIT_PROXY_AGENT;

/* "No agent" value for dat_cno_create() / dat_cno_modify_agent(). */
#ifdef __cplusplus
#define DAT_OS_WAIT_PROXY_AGENT_NULL	(DAT_OS_WAIT_PROXY_AGENT())
#else
#define DAT_OS_WAIT_PROXY_AGENT_NULL \
	((DAT_OS_WAIT_PROXY_AGENT) { (DAT_PVOID)0, (DAT_AGENT_FUNC)0 })
#endif

/* Passed to dat_ia_open() as the async EVD: this IA is already open and
 * its existing async EVD serves this instance too. */
#define DAT_EVD_ASYNC_EXISTS	((DAT_EVD_HANDLE)0x1)

/* Returned by dat_ia_query() as the async EVD of an instance opened with
 * DAT_EVD_ASYNC_EXISTS. */
#define DAT_EVD_OUT_OF_SCOPE	((DAT_EVD_HANDLE)0x2)

/* Region descriptions for dat_lmr_create(), selected by DAT_MEM_TYPE. */
typedef struct dat_shared_memory {
	DAT_PVOID		virtual_address;
	DAT_LMR_COOKIE		shared_memory_id;
} DAT_SHARED_MEMORY;

typedef union dat_region_description {
	DAT_PVOID		for_va;
	DAT_LMR_HANDLE		for_lmr_handle;
	DAT_SHARED_MEMORY	for_shared_memory;	/* uDAPL only */
} DAT_REGION_DESCRIPTION;

struct dat_lmr_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_MEM_TYPE		mem_type;
	DAT_REGION_DESCRIPTION	region_desc;
	DAT_VLEN		length;
	DAT_PZ_HANDLE		pz_handle;
	DAT_MEM_PRIV_FLAGS	mem_priv;
	DAT_VA_TYPE		va_type;		/* DAT 2.0 */
	DAT_LMR_CONTEXT		lmr_context;
	DAT_RMR_CONTEXT		rmr_context;
	DAT_VLEN		registered_size;
	DAT_VADDR		registered_address;
};

/* How a CNO wakes its consumer besides dat_cno_wait() (DAT 2.0). */
typedef enum dat_proxy_type {
	DAT_PROXY_TYPE_NONE		= 0x0,
	DAT_PROXY_TYPE_AGENT		= 0x1,	/* call proxy.agent */
	DAT_PROXY_TYPE_FD		= 0x2	/* make proxy.fd readable */
} DAT_PROXY_TYPE;

/*
 * DAT 2.0: the agent moved into a union selected by proxy_type, at
 * offset 16 (8 in 1.2).  The mask values are those of the 2.1.10 headers,
 * PROXY (0x3) included, though it is not a bit of its own.
 */
typedef struct dat_cno_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_PROXY_TYPE		proxy_type;
	union {
		DAT_OS_WAIT_PROXY_AGENT	agent;
		DAT_FD			fd;
		DAT_PVOID		none;
	} proxy;
} DAT_CNO_PARAM;

typedef enum dat_cno_param_mask {
	DAT_CNO_FIELD_IA_HANDLE		= 0x1,
	DAT_CNO_FIELD_PROXY_TYPE	= 0x2,
	DAT_CNO_FIELD_PROXY		= 0x3,

	DAT_CNO_FIELD_ALL		= 0x4
} DAT_CNO_PARAM_MASK;

/* Whether an EP, LMR and RMR may use PZs that differ. */
typedef enum dat_pz_support {
	DAT_PZ_UNIQUE			= 0,
	DAT_PZ_SHAREABLE		= 1
} DAT_PZ_SUPPORT;

/*
 * Provider attributes.
 *
 * evd_stream_merging_supported[i][j] says whether event streams i and j
 * may feed the same EVD; rows and columns are ordered software, CR, DTO,
 * connection, RMR bind, async (the DAT_EVD_FLAGS order).  It is const in
 * C as in the reference headers; the provider fills it through a cast.
 * C++ cannot default-construct a struct with a const member, so there it
 * is left writable (same layout).
 */
#ifdef __cplusplus
#define DAT_PROVIDER_ATTR_CONST_
#else
#define DAT_PROVIDER_ATTR_CONST_ const
#endif

struct dat_provider_attr {
	char			provider_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32		provider_version_major;
	DAT_UINT32		provider_version_minor;
	DAT_UINT32		dapl_version_major;
	DAT_UINT32		dapl_version_minor;
	DAT_MEM_TYPE		lmr_mem_types_supported;
	DAT_IOV_OWNERSHIP	iov_ownership_on_return;
	DAT_QOS			dat_qos_supported;
	DAT_COMPLETION_FLAGS	completion_flags_supported;
	DAT_BOOLEAN		is_thread_safe;
	DAT_COUNT		max_private_data_size;
	DAT_BOOLEAN		supports_multipath;
	DAT_EP_CREATOR_FOR_PSP	ep_creator;
	DAT_PZ_SUPPORT		pz_support;
	DAT_UINT32		optimal_buffer_alignment;
	DAT_PROVIDER_ATTR_CONST_ DAT_BOOLEAN
				evd_stream_merging_supported[6][6];
	DAT_BOOLEAN		srq_supported;
	DAT_COUNT		srq_watermarks_supported;
	DAT_BOOLEAN		srq_ep_pz_difference_supported;
	DAT_COUNT		srq_info_supported;
	DAT_COUNT		ep_recv_info_supported;
	DAT_BOOLEAN		lmr_sync_req;
	DAT_BOOLEAN		dto_async_return_guaranteed;
	DAT_BOOLEAN		rdma_write_for_rdma_read_req;
	/* DAT 2.0 */
	DAT_BOOLEAN		rdma_read_lmr_rmr_context_exposure;
	DAT_RMR_SCOPE		rmr_scope_supported;
	DAT_BOOLEAN		is_signal_safe;
	DAT_BOOLEAN		ha_supported;
	DAT_HA_LB		ha_loadbalancing;
	DAT_COUNT		num_provider_specific_attr;
	DAT_NAMED_ATTR		*provider_specific_attr;
};

#undef DAT_PROVIDER_ATTR_CONST_

#define DAT_PROVIDER_FIELD_PROVIDER_NAME		UINT64_C(0x00000001)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MAJOR	UINT64_C(0x00000002)
#define DAT_PROVIDER_FIELD_PROVIDER_VERSION_MINOR	UINT64_C(0x00000004)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MAJOR		UINT64_C(0x00000008)
#define DAT_PROVIDER_FIELD_DAPL_VERSION_MINOR		UINT64_C(0x00000010)
#define DAT_PROVIDER_FIELD_LMR_MEM_TYPE_SUPPORTED	UINT64_C(0x00000020)
#define DAT_PROVIDER_FIELD_IOV_OWNERSHIP		UINT64_C(0x00000040)
#define DAT_PROVIDER_FIELD_DAT_QOS_SUPPORTED		UINT64_C(0x00000080)
#define DAT_PROVIDER_FIELD_COMPLETION_FLAGS_SUPPORTED	UINT64_C(0x00000100)
#define DAT_PROVIDER_FIELD_IS_THREAD_SAFE		UINT64_C(0x00000200)
#define DAT_PROVIDER_FIELD_MAX_PRIVATE_DATA_SIZE	UINT64_C(0x00000400)
#define DAT_PROVIDER_FIELD_SUPPORTS_MULTIPATH		UINT64_C(0x00000800)
#define DAT_PROVIDER_FIELD_EP_CREATOR			UINT64_C(0x00001000)
#define DAT_PROVIDER_FIELD_PZ_SUPPORT			UINT64_C(0x00002000)
#define DAT_PROVIDER_FIELD_OPTIMAL_BUFFER_ALIGNMENT	UINT64_C(0x00004000)
#define DAT_PROVIDER_FIELD_EVD_STREAM_MERGING_SUPPORTED	UINT64_C(0x00008000)
#define DAT_PROVIDER_FIELD_SRQ_SUPPORTED		UINT64_C(0x00010000)
#define DAT_PROVIDER_FIELD_SRQ_WATERMARKS_SUPPORTED	UINT64_C(0x00020000)
#define DAT_PROVIDER_FIELD_SRQ_EP_PZ_DIFFERENCE_SUPPORTED \
							UINT64_C(0x00040000)
#define DAT_PROVIDER_FIELD_SRQ_INFO_SUPPORTED		UINT64_C(0x00080000)
#define DAT_PROVIDER_FIELD_EP_RECV_INFO_SUPPORTED	UINT64_C(0x00100000)
#define DAT_PROVIDER_FIELD_LMR_SYNC_REQ			UINT64_C(0x00200000)
#define DAT_PROVIDER_FIELD_DTO_ASYNC_RETURN_GUARANTEED	UINT64_C(0x00400000)
#define DAT_PROVIDER_FIELD_RDMA_WRITE_FOR_RDMA_READ_REQ	UINT64_C(0x00800000)
#define DAT_PROVIDER_FIELD_RDMA_READ_LMR_RMR_CONTEXT_EXPOSURE \
							UINT64_C(0x01000000)
#define DAT_PROVIDER_FIELD_RMR_SCOPE_SUPPORTED		UINT64_C(0x02000000)
#define DAT_PROVIDER_FIELD_IS_SIGNAL_SAFE		UINT64_C(0x04000000)
#define DAT_PROVIDER_FIELD_HA_SUPPORTED			UINT64_C(0x08000000)
#define DAT_PROVIDER_FIELD_HA_LB			UINT64_C(0x10000000)
#define DAT_PROVIDER_FIELD_NUM_PROVIDER_SPECIFIC_ATTR	UINT64_C(0x20000000)
#define DAT_PROVIDER_FIELD_PROVIDER_SPECIFIC_ATTR	UINT64_C(0x40000000)

#define DAT_PROVIDER_FIELD_ALL				UINT64_C(0x7FFFFFFF)
#define DAT_PROVIDER_FIELD_NONE				UINT64_C(0x0)

#ifdef __cplusplus
}
#endif

#include <dat2/udat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* uDAPL-only calls                                                   */
/* ------------------------------------------------------------------ */

extern DAT_RETURN dat_lmr_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_MEM_TYPE,
	IN	DAT_REGION_DESCRIPTION,		/* by value */
	IN	DAT_VLEN,			/* length */
	IN	DAT_PZ_HANDLE,
	IN	DAT_MEM_PRIV_FLAGS,
	IN	DAT_VA_TYPE,			/* DAT 2.0 */
	OUT	DAT_LMR_HANDLE *,
	OUT	DAT_LMR_CONTEXT *,
	OUT	DAT_RMR_CONTEXT *,
	OUT	DAT_VLEN *,			/* registered length */
	OUT	DAT_VADDR *);			/* registered address */

extern DAT_RETURN dat_lmr_query(
	IN	DAT_LMR_HANDLE,
	IN	DAT_LMR_PARAM_MASK,
	OUT	DAT_LMR_PARAM *);

extern DAT_RETURN dat_evd_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_COUNT,			/* min qlen */
	IN	DAT_CNO_HANDLE,
	IN	DAT_EVD_FLAGS,
	OUT	DAT_EVD_HANDLE *);

extern DAT_RETURN dat_evd_modify_cno(
	IN	DAT_EVD_HANDLE,
	IN	DAT_CNO_HANDLE);

extern DAT_RETURN dat_cno_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_OS_WAIT_PROXY_AGENT,
	OUT	DAT_CNO_HANDLE *);

extern DAT_RETURN dat_cno_modify_agent(
	IN	DAT_CNO_HANDLE,
	IN	DAT_OS_WAIT_PROXY_AGENT);

extern DAT_RETURN dat_cno_query(
	IN	DAT_CNO_HANDLE,
	IN	DAT_CNO_PARAM_MASK,
	OUT	DAT_CNO_PARAM *);

extern DAT_RETURN dat_cno_free(
	IN	DAT_CNO_HANDLE);

extern DAT_RETURN dat_cno_wait(
	IN	DAT_CNO_HANDLE,
	IN	DAT_TIMEOUT,
	OUT	DAT_EVD_HANDLE *);		/* EVD that triggered */

extern DAT_RETURN dat_evd_enable(
	IN	DAT_EVD_HANDLE);

extern DAT_RETURN dat_evd_wait(
	IN	DAT_EVD_HANDLE,
	IN	DAT_TIMEOUT,
	IN	DAT_COUNT,			/* threshold */
	OUT	DAT_EVENT *,
	OUT	DAT_COUNT *);			/* events still queued */

extern DAT_RETURN dat_evd_disable(
	IN	DAT_EVD_HANDLE);

extern DAT_RETURN dat_evd_set_unwaitable(
	IN	DAT_EVD_HANDLE);

extern DAT_RETURN dat_evd_clear_unwaitable(
	IN	DAT_EVD_HANDLE);

/* A CNO that signals through a file descriptor, and a manual trigger
 * (DAT 2.0). */
extern DAT_RETURN dat_cno_fd_create(
	IN	DAT_IA_HANDLE,
	OUT	DAT_FD *,
	OUT	DAT_CNO_HANDLE *);

extern DAT_RETURN dat_cno_trigger(
	IN	DAT_CNO_HANDLE,
	OUT	DAT_EVD_HANDLE *);		/* EVD that triggered */

#ifdef __cplusplus
}
#endif

#endif /* _UDAT_H_ */
