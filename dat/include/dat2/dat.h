/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * dat.h: the part of the DAT 2.0 API that user (uDAPL) and kernel (kDAPL)
 * consumers share: handles, attributes, parameters, events and the common
 * calls.  It relies on types <dat2/udat.h> declares before including it,
 * so it always goes through udat.h.
 *
 * Struct layouts, enum values and prototypes here are ABI: programs built
 * against the DAT 2.0 headers of OpenFabrics dapl 2.1.10 (Debian's
 * libdapl-dev) must run against this library.  test/unit/test_abi2.c
 * holds every size, offset and value to theirs.
 */

/* Everything is declared through <dat2/udat.h>; this makes the header
 * usable on its own too. */
#include <dat2/udat.h>

#ifndef _DAT_H_
#define _DAT_H_

#include <dat2/dat_error.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* Basic types                                                        */
/* ------------------------------------------------------------------ */

typedef char *DAT_NAME_PTR;		/* IA and attribute names */
#define DAT_NAME_MAX_LENGTH	256

/* A (name, value) pair for transport, vendor and provider attributes. */
typedef struct dat_named_attr {
	const char	*name;
	const char	*value;
} DAT_NAMED_ATTR;

typedef enum dat_boolean {
	DAT_FALSE = 0,
	DAT_TRUE = 1
} DAT_BOOLEAN;

#ifdef DAT_EXTENSIONS
/* The IB and iWARP extensions (numbered as DAT_EXTENSION below is). */
#define DAT_IB_EXTENSION	1
#define DAT_IW_EXTENSION	2
#endif

/* High availability: how a provider balances over related IAs. */
typedef DAT_UINT32 DAT_HA_LB;
#define DAT_HA_LB_NONE		(DAT_HA_LB)0
#define DAT_HA_LB_INTERCOMM	(DAT_HA_LB)1
#define DAT_HA_LB_INTRACOMM	(DAT_HA_LB)2

/* Consumer context: 8 bytes, passed by value. */
typedef union dat_context {
	DAT_PVOID	as_ptr;
	DAT_UINT64	as_64;
	DAT_UVERYLONG	as_index;
} DAT_CONTEXT;

typedef DAT_CONTEXT	DAT_DTO_COOKIE;
typedef DAT_CONTEXT	DAT_RMR_COOKIE;

typedef enum dat_completion_flags {
	DAT_COMPLETION_DEFAULT_FLAG		= 0x00,
	DAT_COMPLETION_SUPPRESS_FLAG		= 0x01, /* no event on success */
	DAT_COMPLETION_SOLICITED_WAIT_FLAG	= 0x02, /* wake a solicited waiter */
	DAT_COMPLETION_UNSIGNALLED_FLAG		= 0x04, /* no notification */
	DAT_COMPLETION_BARRIER_FENCE_FLAG	= 0x08, /* after prior RDMA reads */
	DAT_COMPLETION_EVD_THRESHOLD_FLAG	= 0x10, /* uDAPL recv: threshold */
	DAT_COMPLETION_LMR_INVALIDATE_FENCE_FLAG = 0x20 /* kDAPL only */
} DAT_COMPLETION_FLAGS;

typedef DAT_UINT32 DAT_TIMEOUT;		/* microseconds */
#define DAT_TIMEOUT_INFINITE	((DAT_TIMEOUT)~0)

/* Handles. */
typedef DAT_PVOID	DAT_HANDLE;
typedef DAT_HANDLE	DAT_CR_HANDLE;
typedef DAT_HANDLE	DAT_EP_HANDLE;
typedef DAT_HANDLE	DAT_EVD_HANDLE;
typedef DAT_HANDLE	DAT_IA_HANDLE;
typedef DAT_HANDLE	DAT_LMR_HANDLE;
typedef DAT_HANDLE	DAT_PSP_HANDLE;
typedef DAT_HANDLE	DAT_PZ_HANDLE;
typedef DAT_HANDLE	DAT_RMR_HANDLE;
typedef DAT_HANDLE	DAT_RSP_HANDLE;
typedef DAT_HANDLE	DAT_SRQ_HANDLE;
typedef DAT_HANDLE	DAT_CSP_HANDLE;		/* DAT 2.0 */

/* What a completed DTO was (DAT_DTO_COMPLETION_EVENT_DATA.operation). */
typedef enum dat_dtos {
	DAT_DTO_SEND			= 0,
	DAT_DTO_RDMA_WRITE		= 1,
	DAT_DTO_RDMA_READ		= 2,
	DAT_DTO_RECEIVE			= 3,
	DAT_DTO_RECEIVE_WITH_INVALIDATE	= 4,
	DAT_DTO_BIND_MW			= 5,	/* RMR binds */
	DAT_DTO_LMR_FMR			= 6,	/* kDAPL only */
	DAT_DTO_LMR_INVALIDATE		= 7	/* kDAPL only */
#ifdef DAT_EXTENSIONS
	,
	DAT_DTO_EXTENSION_BASE		= 8	/* first extension DTO */
#endif
} DAT_DTOS;

#define DAT_HANDLE_NULL		((DAT_HANDLE)0)

typedef DAT_SOCK_ADDR	*DAT_IA_ADDRESS_PTR;

typedef DAT_UINT64	DAT_CONN_QUAL;
typedef DAT_UINT64	DAT_PORT_QUAL;

typedef enum dat_qos {
	DAT_QOS_BEST_EFFORT		= 0x00,
	DAT_QOS_HIGH_THROUGHPUT		= 0x01,
	DAT_QOS_LOW_LATENCY		= 0x02,
	DAT_QOS_ECONOMY			= 0x04,
	DAT_QOS_PREMIUM			= 0x08
} DAT_QOS;

/* DAT 2.0 calls the multipath flag "requested"; both names are 0x01. */
typedef enum dat_connect_flags {
	DAT_CONNECT_DEFAULT_FLAG		= 0x00,
	DAT_CONNECT_MULTIPATH_FLAG		= 0x01,
	DAT_CONNECT_MULTIPATH_REQUIRED_FLAG	= 0x02
} DAT_CONNECT_FLAGS;

#define DAT_CONNECT_MULTIPATH_REQUESTED_FLAG	DAT_CONNECT_MULTIPATH_FLAG

typedef enum dat_close_flags {
	DAT_CLOSE_ABRUPT_FLAG		= 0x00,
	DAT_CLOSE_GRACEFUL_FLAG		= 0x01
} DAT_CLOSE_FLAGS;

#define DAT_CLOSE_DEFAULT	DAT_CLOSE_ABRUPT_FLAG

/* Event streams an EVD accepts. */
typedef enum dat_evd_flags {
	DAT_EVD_SOFTWARE_FLAG		= 0x001,
	DAT_EVD_CR_FLAG			= 0x010,
	DAT_EVD_DTO_FLAG		= 0x020,
	DAT_EVD_CONNECTION_FLAG		= 0x040,
	DAT_EVD_RMR_BIND_FLAG		= 0x080,
	DAT_EVD_ASYNC_FLAG		= 0x100,
	DAT_EVD_DEFAULT_FLAG		= 0x1F0	/* all but software events */
#ifdef DAT_EXTENSIONS
	,
	DAT_EVD_EXTENSION_BASE		= 0x200	/* first extension stream */
#endif
} DAT_EVD_FLAGS;

typedef enum dat_psp_flags {
	DAT_PSP_CONSUMER_FLAG		= 0x00,	/* consumer supplies the EP */
	DAT_PSP_PROVIDER_FLAG		= 0x01	/* provider creates the EP */
} DAT_PSP_FLAGS;

/* ------------------------------------------------------------------ */
/* Memory                                                             */
/* ------------------------------------------------------------------ */

typedef DAT_UINT32	DAT_LMR_CONTEXT;
typedef DAT_UINT32	DAT_RMR_CONTEXT;

typedef DAT_UINT64	DAT_VLEN;
typedef DAT_UINT64	DAT_VADDR;
typedef DAT_UINT32	DAT_SEG_LENGTH;		/* DAT 2.0: one segment's length */

/* Defined in udat.h. */
typedef struct dat_provider_attr	DAT_PROVIDER_ATTR;
typedef struct dat_evd_param		DAT_EVD_PARAM;
typedef struct dat_lmr_param		DAT_LMR_PARAM;

/*
 * Buffer segments.  DAT 2.0 puts the 64-bit address first and shrinks
 * the length to 32 bits, so a triplet is 16 bytes (24 in DAT 1.2, where
 * the context came first).  The remote triplet's address is named
 * virtual_address too (target_address in 1.2).  A zero segment_length
 * makes the other fields irrelevant.
 */
typedef struct dat_lmr_triplet {
	DAT_VADDR		virtual_address;
	DAT_SEG_LENGTH		segment_length;
	DAT_LMR_CONTEXT		lmr_context;
} DAT_LMR_TRIPLET;

typedef struct dat_rmr_triplet {
	DAT_VADDR		virtual_address;
	DAT_SEG_LENGTH		segment_length;
	DAT_RMR_CONTEXT		rmr_context;
} DAT_RMR_TRIPLET;

typedef enum dat_mem_priv_flags {
	DAT_MEM_PRIV_NONE_FLAG		= 0x00,
	DAT_MEM_PRIV_LOCAL_READ_FLAG	= 0x01,
	DAT_MEM_PRIV_REMOTE_READ_FLAG	= 0x02,
	DAT_MEM_PRIV_LOCAL_WRITE_FLAG	= 0x10,
	DAT_MEM_PRIV_REMOTE_WRITE_FLAG	= 0x20,
	DAT_MEM_PRIV_ALL_FLAG		= 0x33
#ifdef DAT_EXTENSIONS
	,
	DAT_MEM_PRIV_EXTENSION_BASE	= 0x40	/* first extension privilege */
#endif
} DAT_MEM_PRIV_FLAGS;

/* DAT 1.0 privilege names. */
#define DAT_MEM_PRIV_READ_FLAG \
	(DAT_MEM_PRIV_LOCAL_READ_FLAG | DAT_MEM_PRIV_REMOTE_READ_FLAG)
#define DAT_MEM_PRIV_WRITE_FLAG \
	(DAT_MEM_PRIV_LOCAL_WRITE_FLAG | DAT_MEM_PRIV_REMOTE_WRITE_FLAG)

/* DAT 2.0 inserts VA_TYPE at 0x040: the masks above it move up a bit. */
typedef enum dat_lmr_param_mask {
	DAT_LMR_FIELD_IA_HANDLE			= 0x001,
	DAT_LMR_FIELD_MEM_TYPE			= 0x002,
	DAT_LMR_FIELD_REGION_DESC		= 0x004,
	DAT_LMR_FIELD_LENGTH			= 0x008,
	DAT_LMR_FIELD_PZ_HANDLE			= 0x010,
	DAT_LMR_FIELD_MEM_PRIV			= 0x020,
	DAT_LMR_FIELD_VA_TYPE			= 0x040,
	DAT_LMR_FIELD_LMR_CONTEXT		= 0x080,
	DAT_LMR_FIELD_RMR_CONTEXT		= 0x100,
	DAT_LMR_FIELD_REGISTERED_SIZE		= 0x200,
	DAT_LMR_FIELD_REGISTERED_ADDRESS	= 0x400,

	DAT_LMR_FIELD_ALL			= 0x7FF
} DAT_LMR_PARAM_MASK;

/* How remote addresses into a region are formed: virtual addresses, or
 * zero-based offsets (DAT 2.0). */
typedef enum dat_va_type {
	DAT_VA_TYPE_VA			= 0x0,
	DAT_VA_TYPE_ZB			= 0x1
} DAT_VA_TYPE;

/* What an RMR may be bound through (DAT 2.0). */
typedef enum dat_rmr_scope {
	DAT_RMR_SCOPE_EP		= 0,	/* one EP at a time */
	DAT_RMR_SCOPE_PZ		= 1,	/* any EP of its PZ */
	DAT_RMR_SCOPE_ANY		= 2	/* a provider supports both */
} DAT_RMR_SCOPE;

typedef struct dat_rmr_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_PZ_HANDLE		pz_handle;
	DAT_LMR_TRIPLET		lmr_triplet;
	DAT_MEM_PRIV_FLAGS	mem_priv;
	DAT_RMR_CONTEXT		rmr_context;
	DAT_RMR_SCOPE		rmr_scope;
	DAT_VA_TYPE		va_type;
} DAT_RMR_PARAM;

typedef enum dat_rmr_param_mask {
	DAT_RMR_FIELD_IA_HANDLE		= 0x01,
	DAT_RMR_FIELD_PZ_HANDLE		= 0x02,
	DAT_RMR_FIELD_LMR_TRIPLET	= 0x04,
	DAT_RMR_FIELD_MEM_PRIV		= 0x08,
	DAT_RMR_FIELD_RMR_CONTEXT	= 0x10,
	DAT_RMR_FIELD_RMR_SCOPE		= 0x20,
	DAT_RMR_FIELD_VA_TYPE		= 0x40,

	DAT_RMR_FIELD_ALL		= 0x7F
} DAT_RMR_PARAM_MASK;

/* ------------------------------------------------------------------ */
/* Interface adapter attributes                                       */
/* ------------------------------------------------------------------ */

/* Who may touch a posted IOV after its DTO completes. */
typedef enum dat_iov_ownership {
	DAT_IOV_CONSUMER		= 0x0,	/* consumer, any time */
	DAT_IOV_PROVIDER_NOMOD		= 0x1,	/* provider left it intact */
	DAT_IOV_PROVIDER_MOD		= 0x2	/* provider may have changed it */
} DAT_IOV_OWNERSHIP;

typedef enum dat_ep_creator_for_psp {
	DAT_PSP_CREATES_EP_NEVER	= 0,
	DAT_PSP_CREATES_EP_IFASKED	= 1,
	DAT_PSP_CREATES_EP_ALWAYS	= 2
} DAT_EP_CREATOR_FOR_PSP;

/*
 * DAT 1.0 / 1.1 names of IA attribute fields and masks.  (The 1.2 and
 * 2.1.10 spelling of DAT_IA_FIELD_IA_MAX_DTO_PER_OP expands to a name
 * that does not exist; here it is the mask of the field
 * max_rdma_read_per_ep now names.)
 */
#define max_rdma_read_per_ep		max_rdma_read_per_ep_in
#define max_mtu_size			max_message_size
#define DAT_IA_FIELD_IA_MAX_DTO_PER_OP	DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN
#define DAT_IA_FIELD_IA_MAX_MTU_SIZE	DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE

/* Which extension an IA implements (DAT_IA_ATTR.extension_supported). */
typedef enum dat_extension {
	DAT_EXTENSION_NONE		= 0,
	DAT_EXTENSION_IB		= 1,
	DAT_EXTENSION_IW		= 2
} DAT_EXTENSION;

/*
 * DAT 2.0: the block, message and RDMA size limits are 32-bit
 * DAT_SEG_LENGTHs, and zb_supported, extension_supported and
 * extension_version come before the transport attributes.
 */
typedef struct dat_ia_attr {
	char			adapter_name[DAT_NAME_MAX_LENGTH];
	char			vendor_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32		hardware_version_major;
	DAT_UINT32		hardware_version_minor;
	DAT_UINT32		firmware_version_major;
	DAT_UINT32		firmware_version_minor;
	DAT_IA_ADDRESS_PTR	ia_address_ptr;
	DAT_COUNT		max_eps;
	DAT_COUNT		max_dto_per_ep;
	DAT_COUNT		max_rdma_read_per_ep_in;
	DAT_COUNT		max_rdma_read_per_ep_out;
	DAT_COUNT		max_evds;
	DAT_COUNT		max_evd_qlen;
	DAT_COUNT		max_iov_segments_per_dto;
	DAT_COUNT		max_lmrs;
	DAT_SEG_LENGTH		max_lmr_block_size;
	DAT_VADDR		max_lmr_virtual_address;
	DAT_COUNT		max_pzs;
	DAT_SEG_LENGTH		max_message_size;
	DAT_SEG_LENGTH		max_rdma_size;
	DAT_COUNT		max_rmrs;
	DAT_VADDR		max_rmr_target_address;
	DAT_COUNT		max_srqs;
	DAT_COUNT		max_ep_per_srq;
	DAT_COUNT		max_recv_per_srq;
	DAT_COUNT		max_iov_segments_per_rdma_read;
	DAT_COUNT		max_iov_segments_per_rdma_write;
	DAT_COUNT		max_rdma_read_in;
	DAT_COUNT		max_rdma_read_out;
	DAT_BOOLEAN		max_rdma_read_per_ep_in_guaranteed;
	DAT_BOOLEAN		max_rdma_read_per_ep_out_guaranteed;
	DAT_BOOLEAN		zb_supported;
	DAT_EXTENSION		extension_supported;
	DAT_COUNT		extension_version;
	DAT_COUNT		num_transport_attr;
	DAT_NAMED_ATTR		*transport_attr;
	DAT_COUNT		num_vendor_attr;
	DAT_NAMED_ATTR		*vendor_attr;
} DAT_IA_ATTR;

typedef DAT_UINT64 DAT_IA_ATTR_MASK;

#define DAT_IA_FIELD_IA_ADAPTER_NAME			UINT64_C(0x000000001)
#define DAT_IA_FIELD_IA_VENDOR_NAME			UINT64_C(0x000000002)
#define DAT_IA_FIELD_IA_HARDWARE_MAJOR_VERSION		UINT64_C(0x000000004)
#define DAT_IA_FIELD_IA_HARDWARE_MINOR_VERSION		UINT64_C(0x000000008)
#define DAT_IA_FIELD_IA_FIRMWARE_MAJOR_VERSION		UINT64_C(0x000000010)
#define DAT_IA_FIELD_IA_FIRMWARE_MINOR_VERSION		UINT64_C(0x000000020)
#define DAT_IA_FIELD_IA_ADDRESS_PTR			UINT64_C(0x000000040)
#define DAT_IA_FIELD_IA_MAX_EPS				UINT64_C(0x000000080)
#define DAT_IA_FIELD_IA_MAX_DTO_PER_EP			UINT64_C(0x000000100)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN		UINT64_C(0x000000200)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT	UINT64_C(0x000000400)
#define DAT_IA_FIELD_IA_MAX_EVDS			UINT64_C(0x000000800)
#define DAT_IA_FIELD_IA_MAX_EVD_QLEN			UINT64_C(0x000001000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_DTO	UINT64_C(0x000002000)
#define DAT_IA_FIELD_IA_MAX_LMRS			UINT64_C(0x000004000)
#define DAT_IA_FIELD_IA_MAX_LMR_BLOCK_SIZE		UINT64_C(0x000008000)
#define DAT_IA_FIELD_IA_MAX_LMR_VIRTUAL_ADDRESS		UINT64_C(0x000010000)
#define DAT_IA_FIELD_IA_MAX_PZS				UINT64_C(0x000020000)
#define DAT_IA_FIELD_IA_MAX_MESSAGE_SIZE		UINT64_C(0x000040000)
#define DAT_IA_FIELD_IA_MAX_RDMA_SIZE			UINT64_C(0x000080000)
#define DAT_IA_FIELD_IA_MAX_RMRS			UINT64_C(0x000100000)
#define DAT_IA_FIELD_IA_MAX_RMR_TARGET_ADDRESS		UINT64_C(0x000200000)
#define DAT_IA_FIELD_IA_MAX_SRQS			UINT64_C(0x000400000)
#define DAT_IA_FIELD_IA_MAX_EP_PER_SRQ			UINT64_C(0x000800000)
#define DAT_IA_FIELD_IA_MAX_RECV_PER_SRQ		UINT64_C(0x001000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_READ	UINT64_C(0x002000000)
#define DAT_IA_FIELD_IA_MAX_IOV_SEGMENTS_PER_RDMA_WRITE	UINT64_C(0x004000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_IN		UINT64_C(0x008000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_OUT		UINT64_C(0x010000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_IN_GUARANTEED \
							UINT64_C(0x020000000)
#define DAT_IA_FIELD_IA_MAX_RDMA_READ_PER_EP_OUT_GUARANTEED \
							UINT64_C(0x040000000)
#define DAT_IA_FIELD_IA_ZB_SUPPORTED			UINT64_C(0x080000000)
#define DAT_IA_FIELD_IA_EXTENSION			UINT64_C(0x100000000)
#define DAT_IA_FIELD_IA_EXTENSION_VERSION		UINT64_C(0x200000000)
#define DAT_IA_FIELD_IA_NUM_TRANSPORT_ATTR		UINT64_C(0x400000000)
#define DAT_IA_FIELD_IA_TRANSPORT_ATTR			UINT64_C(0x800000000)
#define DAT_IA_FIELD_IA_NUM_VENDOR_ATTR			UINT64_C(0x1000000000)
#define DAT_IA_FIELD_IA_VENDOR_ATTR			UINT64_C(0x2000000000)

/* Another name of DAT_IA_FIELD_IA_EXTENSION. */
#define DAT_IA_FIELD_IA_EXTENSIONS_SUPPORTED		UINT64_C(0x100000000)

#define DAT_IA_FIELD_ALL				UINT64_C(0x3FFFFFFFFF)
#define DAT_IA_FIELD_NONE				UINT64_C(0x0)
#define DAT_IA_ALL					DAT_IA_FIELD_ALL

/* ------------------------------------------------------------------ */
/* Endpoints                                                          */
/* ------------------------------------------------------------------ */

typedef enum dat_service_type {
	DAT_SERVICE_TYPE_RC		= 0	/* reliable connected */
#ifdef DAT_EXTENSIONS
	,
	DAT_SERVICE_TYPE_EXTENSION_BASE	= 1	/* first extension service */
#endif
} DAT_SERVICE_TYPE;

/* DAT 2.0: the two size limits are 32-bit DAT_SEG_LENGTHs. */
typedef struct dat_ep_attr {
	DAT_SERVICE_TYPE	service_type;
	DAT_SEG_LENGTH		max_message_size;
	DAT_SEG_LENGTH		max_rdma_size;
	DAT_QOS			qos;
	DAT_COMPLETION_FLAGS	recv_completion_flags;
	DAT_COMPLETION_FLAGS	request_completion_flags;
	DAT_COUNT		max_recv_dtos;
	DAT_COUNT		max_request_dtos;
	DAT_COUNT		max_recv_iov;
	DAT_COUNT		max_request_iov;
	DAT_COUNT		max_rdma_read_in;
	DAT_COUNT		max_rdma_read_out;
	DAT_COUNT		srq_soft_hw;
	DAT_COUNT		max_rdma_read_iov;
	DAT_COUNT		max_rdma_write_iov;
	DAT_COUNT		ep_transport_specific_count;
	DAT_NAMED_ATTR		*ep_transport_specific;
	DAT_COUNT		ep_provider_specific_count;
	DAT_NAMED_ATTR		*ep_provider_specific;
} DAT_EP_ATTR;

typedef enum dat_ep_state {
	DAT_EP_STATE_UNCONNECTED			= 0,
	DAT_EP_STATE_UNCONFIGURED_UNCONNECTED		= 1,
	DAT_EP_STATE_RESERVED				= 2,
	DAT_EP_STATE_UNCONFIGURED_RESERVED		= 3,
	DAT_EP_STATE_PASSIVE_CONNECTION_PENDING		= 4,
	DAT_EP_STATE_UNCONFIGURED_PASSIVE		= 5,
	DAT_EP_STATE_ACTIVE_CONNECTION_PENDING		= 6,
	DAT_EP_STATE_TENTATIVE_CONNECTION_PENDING	= 7,
	DAT_EP_STATE_UNCONFIGURED_TENTATIVE		= 8,
	DAT_EP_STATE_CONNECTED				= 9,
	DAT_EP_STATE_DISCONNECT_PENDING			= 10,
	DAT_EP_STATE_DISCONNECTED			= 11,
	DAT_EP_STATE_COMPLETION_PENDING			= 12,
	DAT_EP_STATE_CONNECTED_SINGLE_PATH		= 13,	/* DAT 2.0 */
	DAT_EP_STATE_CONNECTED_MULTI_PATH		= 14	/* DAT 2.0 */
} DAT_EP_STATE;

/* Older name of the disconnected state. */
#define DAT_EP_STATE_ERROR	DAT_EP_STATE_DISCONNECTED

/* DAT 2.0 adds comm after ep_state, and its mask bit 0x4 moves every
 * later EP_FIELD bit below the ep_attr ones up by one. */
typedef struct dat_ep_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_EP_STATE		ep_state;
	DAT_COMM		comm;
	DAT_IA_ADDRESS_PTR	local_ia_address_ptr;
	DAT_PORT_QUAL		local_port_qual;
	DAT_IA_ADDRESS_PTR	remote_ia_address_ptr;
	DAT_PORT_QUAL		remote_port_qual;
	DAT_PZ_HANDLE		pz_handle;
	DAT_EVD_HANDLE		recv_evd_handle;
	DAT_EVD_HANDLE		request_evd_handle;
	DAT_EVD_HANDLE		connect_evd_handle;
	DAT_SRQ_HANDLE		srq_handle;
	DAT_EP_ATTR		ep_attr;
} DAT_EP_PARAM;

typedef DAT_UINT64 DAT_EP_PARAM_MASK;

#define DAT_EP_FIELD_IA_HANDLE				UINT64_C(0x00000001)
#define DAT_EP_FIELD_EP_STATE				UINT64_C(0x00000002)
#define DAT_EP_FIELD_COMM				UINT64_C(0x00000004)
#define DAT_EP_FIELD_LOCAL_IA_ADDRESS_PTR		UINT64_C(0x00000008)
#define DAT_EP_FIELD_LOCAL_PORT_QUAL			UINT64_C(0x00000010)
#define DAT_EP_FIELD_REMOTE_IA_ADDRESS_PTR		UINT64_C(0x00000020)
#define DAT_EP_FIELD_REMOTE_PORT_QUAL			UINT64_C(0x00000040)
#define DAT_EP_FIELD_PZ_HANDLE				UINT64_C(0x00000080)
#define DAT_EP_FIELD_RECV_EVD_HANDLE			UINT64_C(0x00000100)
#define DAT_EP_FIELD_REQUEST_EVD_HANDLE			UINT64_C(0x00000200)
#define DAT_EP_FIELD_CONNECT_EVD_HANDLE			UINT64_C(0x00000400)
#define DAT_EP_FIELD_SRQ_HANDLE				UINT64_C(0x00000800)

/* ep_attr members start at bit 12. */
#define DAT_EP_FIELD_EP_ATTR_SERVICE_TYPE		UINT64_C(0x00001000)
#define DAT_EP_FIELD_EP_ATTR_MAX_MESSAGE_SIZE		UINT64_C(0x00002000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_SIZE		UINT64_C(0x00004000)
#define DAT_EP_FIELD_EP_ATTR_QOS			UINT64_C(0x00008000)
#define DAT_EP_FIELD_EP_ATTR_RECV_COMPLETION_FLAGS	UINT64_C(0x00010000)
#define DAT_EP_FIELD_EP_ATTR_REQUEST_COMPLETION_FLAGS	UINT64_C(0x00020000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_DTOS		UINT64_C(0x00040000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_DTOS		UINT64_C(0x00080000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RECV_IOV		UINT64_C(0x00100000)
#define DAT_EP_FIELD_EP_ATTR_MAX_REQUEST_IOV		UINT64_C(0x00200000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IN		UINT64_C(0x00400000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_OUT		UINT64_C(0x00800000)
#define DAT_EP_FIELD_EP_ATTR_SRQ_SOFT_HW		UINT64_C(0x01000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_READ_IOV		UINT64_C(0x02000000)
#define DAT_EP_FIELD_EP_ATTR_MAX_RDMA_WRITE_IOV		UINT64_C(0x04000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_TRANSPORT_ATTR		UINT64_C(0x08000000)
#define DAT_EP_FIELD_EP_ATTR_TRANSPORT_SPECIFIC_ATTR	UINT64_C(0x10000000)
#define DAT_EP_FIELD_EP_ATTR_NUM_PROVIDER_ATTR		UINT64_C(0x20000000)
#define DAT_EP_FIELD_EP_ATTR_PROVIDER_SPECIFIC_ATTR	UINT64_C(0x40000000)

#define DAT_EP_FIELD_EP_ATTR_ALL			UINT64_C(0x7FFFF000)
#define DAT_EP_FIELD_ALL				UINT64_C(0x7FFFFFFF)

/* Watermarks and SRQ low-watermark defaults. */
#define DAT_WATERMARK_INFINITE	((DAT_COUNT)~0)
#define DAT_HW_DEFAULT		DAT_WATERMARK_INFINITE
#define DAT_SRQ_LW_DEFAULT	0x0

/* Returned where a provider cannot tell a count. */
#define DAT_VALUE_UNKNOWN	(((DAT_COUNT)~0) - 1)

/* ------------------------------------------------------------------ */
/* Shared receive queues                                              */
/* ------------------------------------------------------------------ */

/* DAT 2.0 order (1.2 had OPERATIONAL 0, ERROR 1). */
typedef enum dat_srq_state {
	DAT_SRQ_STATE_ERROR		= 0,
	DAT_SRQ_STATE_OPERATIONAL	= 1,
	DAT_SRQ_STATE_SHUTDOWN		= 2
} DAT_SRQ_STATE;

typedef struct dat_srq_attr {
	DAT_COUNT		max_recv_dtos;
	DAT_COUNT		max_recv_iov;
	DAT_COUNT		low_watermark;
} DAT_SRQ_ATTR;

typedef struct dat_srq_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_SRQ_STATE		srq_state;
	DAT_PZ_HANDLE		pz_handle;
	DAT_COUNT		max_recv_dtos;
	DAT_COUNT		max_recv_iov;
	DAT_COUNT		low_watermark;
	DAT_COUNT		available_dto_count;
	DAT_COUNT		outstanding_dto_count;
} DAT_SRQ_PARAM;

typedef enum dat_srq_param_mask {
	DAT_SRQ_FIELD_IA_HANDLE			= 0x001,
	DAT_SRQ_FIELD_SRQ_STATE			= 0x002,
	DAT_SRQ_FIELD_PZ_HANDLE			= 0x004,
	DAT_SRQ_FIELD_MAX_RECV_DTO		= 0x008,
	DAT_SRQ_FIELD_MAX_RECV_IOV		= 0x010,
	DAT_SRQ_FIELD_LOW_WATERMARK		= 0x020,
	DAT_SRQ_FIELD_AVAILABLE_DTO_COUNT	= 0x040,
	DAT_SRQ_FIELD_OUTSTANDING_DTO_COUNT	= 0x080,

	DAT_SRQ_FIELD_ALL			= 0x0FF
} DAT_SRQ_PARAM_MASK;

/* ------------------------------------------------------------------ */
/* Protection zones and service points                                */
/* ------------------------------------------------------------------ */

typedef struct dat_pz_param {
	DAT_IA_HANDLE		ia_handle;
} DAT_PZ_PARAM;

typedef enum dat_pz_param_mask {
	DAT_PZ_FIELD_IA_HANDLE		= 0x01,

	DAT_PZ_FIELD_ALL		= 0x01
} DAT_PZ_PARAM_MASK;

typedef struct dat_psp_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_CONN_QUAL		conn_qual;
	DAT_EVD_HANDLE		evd_handle;
	DAT_PSP_FLAGS		psp_flags;
} DAT_PSP_PARAM;

typedef enum dat_psp_param_mask {
	DAT_PSP_FIELD_IA_HANDLE		= 0x01,
	DAT_PSP_FIELD_CONN_QUAL		= 0x02,
	DAT_PSP_FIELD_EVD_HANDLE	= 0x04,
	DAT_PSP_FIELD_PSP_FLAGS		= 0x08,

	DAT_PSP_FIELD_ALL		= 0x0F
} DAT_PSP_PARAM_MASK;

typedef struct dat_rsp_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_CONN_QUAL		conn_qual;
	DAT_EVD_HANDLE		evd_handle;
	DAT_EP_HANDLE		ep_handle;
} DAT_RSP_PARAM;

typedef enum dat_rsp_param_mask {
	DAT_RSP_FIELD_IA_HANDLE		= 0x01,
	DAT_RSP_FIELD_CONN_QUAL		= 0x02,
	DAT_RSP_FIELD_EVD_HANDLE	= 0x04,
	DAT_RSP_FIELD_EP_HANDLE		= 0x08,

	DAT_RSP_FIELD_ALL		= 0x0F
} DAT_RSP_PARAM_MASK;

/* Common service point (DAT 2.0): listens on an address for a
 * communicator rather than on a connection qualifier. */
typedef struct dat_csp_param {
	DAT_IA_HANDLE		ia_handle;
	DAT_COMM		*comm;
	DAT_IA_ADDRESS_PTR	address_ptr;
	DAT_EVD_HANDLE		evd_handle;
} DAT_CSP_PARAM;

typedef enum dat_csp_param_mask {
	DAT_CSP_FIELD_IA_HANDLE		= 0x01,
	DAT_CSP_FIELD_COMM		= 0x02,
	DAT_CSP_FIELD_IA_ADDRESS	= 0x04,
	DAT_CSP_FIELD_EVD_HANDLE	= 0x08,

	DAT_CSP_FIELD_ALL		= 0x0F
} DAT_CSP_PARAM_MASK;

/* ------------------------------------------------------------------ */
/* Connection requests                                                */
/* ------------------------------------------------------------------ */

/* What the passive side learns about an arriving connection request. */
typedef struct dat_cr_param {
	DAT_IA_ADDRESS_PTR	remote_ia_address_ptr;
	DAT_PORT_QUAL		remote_port_qual;
	DAT_COUNT		private_data_size;
	DAT_PVOID		private_data;
	DAT_EP_HANDLE		local_ep_handle;	/* RSP or provider EP */
} DAT_CR_PARAM;

typedef enum dat_cr_param_mask {
	DAT_CR_FIELD_REMOTE_IA_ADDRESS_PTR	= 0x01,
	DAT_CR_FIELD_REMOTE_PORT_QUAL		= 0x02,
	DAT_CR_FIELD_PRIVATE_DATA_SIZE		= 0x04,
	DAT_CR_FIELD_PRIVATE_DATA		= 0x08,
	DAT_CR_FIELD_LOCAL_EP_HANDLE		= 0x10,

	DAT_CR_FIELD_ALL			= 0x1F
} DAT_CR_PARAM_MASK;

/* ------------------------------------------------------------------ */
/* Events                                                             */
/* ------------------------------------------------------------------ */

typedef enum dat_dto_completion_status {
	DAT_DTO_SUCCESS				= 0,
	DAT_DTO_ERR_FLUSHED			= 1,
	DAT_DTO_ERR_LOCAL_LENGTH		= 2,
	DAT_DTO_ERR_LOCAL_EP			= 3,
	DAT_DTO_ERR_LOCAL_PROTECTION		= 4,
	DAT_DTO_ERR_BAD_RESPONSE		= 5,
	DAT_DTO_ERR_REMOTE_ACCESS		= 6,
	DAT_DTO_ERR_REMOTE_RESPONDER		= 7,
	DAT_DTO_ERR_TRANSPORT			= 8,
	DAT_DTO_ERR_RECEIVER_NOT_READY		= 9,
	DAT_DTO_ERR_PARTIAL_PACKET		= 10,
	DAT_RMR_OPERATION_FAILED		= 11,
	DAT_DTO_ERR_LOCAL_MM_ERROR		= 12	/* DAT 2.0 */
} DAT_DTO_COMPLETION_STATUS;

/* Older status names. */
#define DAT_DTO_LENGTH_ERROR		DAT_DTO_ERR_LOCAL_LENGTH
#define DAT_DTO_FAILURE			DAT_DTO_ERR_FLUSHED
#define DAT_RMR_BIND_SUCCESS		DAT_DTO_SUCCESS
#define DAT_RMR_BIND_FAILURE		DAT_DTO_ERR_FLUSHED

/* RMR bind completions report DTO statuses. */
#define DAT_RMR_BIND_COMPLETION_STATUS	DAT_DTO_COMPLETION_STATUS

/*
 * DTO completion; transfered_length is meaningful only on success.  DAT
 * 2.0 makes the length 32 bits and adds what the DTO was and, for a
 * receive with invalidate, the RMR context invalidated.
 */
typedef struct dat_dto_completion_event_data {
	DAT_EP_HANDLE			ep_handle;
	DAT_DTO_COOKIE			user_cookie;
	DAT_DTO_COMPLETION_STATUS	status;
	DAT_SEG_LENGTH			transfered_length;
	DAT_DTOS			operation;
	DAT_RMR_CONTEXT			rmr_context;
} DAT_DTO_COMPLETION_EVENT_DATA;

typedef struct dat_rmr_bind_completion_event_data {
	DAT_RMR_HANDLE			rmr_handle;
	DAT_RMR_COOKIE			user_cookie;
	DAT_RMR_BIND_COMPLETION_STATUS	status;
} DAT_RMR_BIND_COMPLETION_EVENT_DATA;

typedef union dat_sp_handle {
	DAT_RSP_HANDLE		rsp_handle;
	DAT_PSP_HANDLE		psp_handle;
	DAT_CSP_HANDLE		csp_handle;
} DAT_SP_HANDLE;

/* A connection request reached a PSP or RSP (sp_handle NULL for an RSP
 * that was consumed by the request). */
typedef struct dat_cr_arrival_event_data {
	DAT_SP_HANDLE		sp_handle;
	DAT_IA_ADDRESS_PTR	local_ia_address_ptr;
	DAT_CONN_QUAL		conn_qual;
	DAT_CR_HANDLE		cr_handle;
	DAT_BOOLEAN		truncate_flag;	/* private data cut short */
} DAT_CR_ARRIVAL_EVENT_DATA;

typedef struct dat_connection_event_data {
	DAT_EP_HANDLE		ep_handle;
	DAT_COUNT		private_data_size;
	DAT_PVOID		private_data;
} DAT_CONNECTION_EVENT_DATA;

/* dat_handle is the IA, EP, EVD, SRQ, LMR, RMR or PZ concerned; reason is
 * one of the per-object enums below. */
typedef struct dat_asynch_error_event_data {
	DAT_HANDLE		dat_handle;
	DAT_COUNT		reason;
} DAT_ASYNCH_ERROR_EVENT_DATA;

typedef enum ia_async_error_reason {
	DAT_IA_CATASTROPHIC_ERROR		= 0,
	DAT_IA_OTHER_ERROR			= 1
} DAT_IA_ASYNC_ERROR_REASON;

typedef enum ep_async_error_reason {
	DAT_EP_TRANSFER_TO_ERROR		= 0,
	DAT_EP_OTHER_ERROR			= 1,
	DAT_SRQ_SOFT_HIGH_WATERMARK_EVENT	= 2
} DAT_EP_ASYNC_ERROR_REASON;

typedef enum evd_async_error_reason {
	DAT_EVD_OVERFLOW_ERROR			= 0,
	DAT_EVD_OTHER_ERROR			= 1
} DAT_EVD_ASYNC_ERROR_REASON;

typedef enum srq_async_error_reason {
	DAT_SRQ_TRANSFER_TO_ERROR		= 0,
	DAT_SRQ_OTHER_ERROR			= 1,
	DAT_SRQ_LOW_WATERMARK_EVENT		= 2
} DAT_SRQ_ASYNC_ERROR_REASON;

typedef enum lmr_async_error_reason {
	DAT_LMR_OTHER_ERROR			= 0
} DAT_LMR_ASYNC_ERROR_REASON;

typedef enum rmr_async_error_reason {
	DAT_RMR_OTHER_ERROR			= 0
} DAT_RMR_ASYNC_ERROR_REASON;

typedef enum pz_async_error_reason {
	DAT_PZ_OTHER_ERROR			= 0
} DAT_PZ_ASYNC_ERROR_REASON;

typedef struct dat_software_event_data {
	DAT_PVOID		pointer;
} DAT_SOFTWARE_EVENT_DATA;

typedef enum dat_event_number {
	DAT_DTO_COMPLETION_EVENT			= 0x00001,

	DAT_RMR_BIND_COMPLETION_EVENT			= 0x01001,

	DAT_CONNECTION_REQUEST_EVENT			= 0x02001,

	DAT_CONNECTION_EVENT_ESTABLISHED		= 0x04001,
	DAT_CONNECTION_EVENT_PEER_REJECTED		= 0x04002,
	DAT_CONNECTION_EVENT_NON_PEER_REJECTED		= 0x04003,
	DAT_CONNECTION_EVENT_ACCEPT_COMPLETION_ERROR	= 0x04004,
	DAT_CONNECTION_EVENT_DISCONNECTED		= 0x04005,
	DAT_CONNECTION_EVENT_BROKEN			= 0x04006,
	DAT_CONNECTION_EVENT_TIMED_OUT			= 0x04007,
	DAT_CONNECTION_EVENT_UNREACHABLE		= 0x04008,

	DAT_ASYNC_ERROR_EVD_OVERFLOW			= 0x08001,
	DAT_ASYNC_ERROR_IA_CATASTROPHIC			= 0x08002,
	DAT_ASYNC_ERROR_EP_BROKEN			= 0x08003,
	DAT_ASYNC_ERROR_TIMED_OUT			= 0x08004,
	DAT_ASYNC_ERROR_PROVIDER_INTERNAL_ERROR		= 0x08005,

	DAT_HA_DOWN_TO_1				= 0x08101,
	DAT_HA_UP_TO_MULTI_PATH				= 0x08102,

	DAT_SOFTWARE_EVENT				= 0x10001
#ifdef DAT_EXTENSIONS
	,
	DAT_EXTENSION_EVENT				= 0x20000,
	DAT_IB_EXTENSION_RANGE_BASE			= 0x40000,
	DAT_IW_EXTENSION_RANGE_BASE			= 0x80000
#endif
} DAT_EVENT_NUMBER;

typedef union dat_event_data {
	DAT_DTO_COMPLETION_EVENT_DATA		dto_completion_event_data;
	DAT_RMR_BIND_COMPLETION_EVENT_DATA	rmr_completion_event_data;
	DAT_CR_ARRIVAL_EVENT_DATA		cr_arrival_event_data;
	DAT_CONNECTION_EVENT_DATA		connect_event_data;
	DAT_ASYNCH_ERROR_EVENT_DATA		asynch_error_event_data;
	DAT_SOFTWARE_EVENT_DATA			software_event_data;
} DAT_EVENT_DATA;

/*
 * One event as dequeued from an EVD: 120 bytes on LP64 (48 in DAT 1.2).
 * event_extension_data is where an extension's event data go (e.g.
 * DAT_IB_EXTENSION_EVENT_DATA, <dat2/dat_ib_extensions.h>); it is there
 * whether or not DAT_EXTENSIONS is defined, so the size never changes.
 */
typedef struct dat_event {
	DAT_EVENT_NUMBER	event_number;
	DAT_EVD_HANDLE		evd_handle;
	DAT_EVENT_DATA		event_data;
	DAT_UINT64		event_extension_data[8];
} DAT_EVENT;

/* ------------------------------------------------------------------ */
/* Registry entries                                                   */
/* ------------------------------------------------------------------ */

/* Registry key: an IA name plus the DAT version and thread safety the
 * provider implements. */
typedef struct dat_provider_info {
	char			ia_name[DAT_NAME_MAX_LENGTH];
	DAT_UINT32		dapl_version_major;
	DAT_UINT32		dapl_version_minor;
	DAT_BOOLEAN		is_thread_safe;
} DAT_PROVIDER_INFO;

/* ------------------------------------------------------------------ */
/* Calls shared by uDAPL and kDAPL                                    */
/* ------------------------------------------------------------------ */

/* IA.  dat_ia_open is a macro so the consumer's header version and
 * thread-safety choice reach the registry. */
extern DAT_RETURN dat_ia_openv(
	IN	const DAT_NAME_PTR,		/* ia name */
	IN	DAT_COUNT,			/* async evd min qlen */
	INOUT	DAT_EVD_HANDLE *,		/* async evd */
	OUT	DAT_IA_HANDLE *,		/* ia */
	IN	DAT_UINT32,			/* DAT major version */
	IN	DAT_UINT32,			/* DAT minor version */
	IN	DAT_BOOLEAN);			/* thread safe */

#define dat_ia_open(name, qlen, async_evd, ia) \
	dat_ia_openv((name), (qlen), (async_evd), (ia), \
		     DAT_VERSION_MAJOR, DAT_VERSION_MINOR, DAT_THREADSAFE)

extern DAT_RETURN dat_ia_query(
	IN	DAT_IA_HANDLE,
	OUT	DAT_EVD_HANDLE *,		/* async evd */
	IN	DAT_IA_ATTR_MASK,
	OUT	DAT_IA_ATTR *,
	IN	DAT_PROVIDER_ATTR_MASK,
	OUT	DAT_PROVIDER_ATTR *);

extern DAT_RETURN dat_ia_close(
	IN	DAT_IA_HANDLE,
	IN	DAT_CLOSE_FLAGS);

/* Any handle. */
extern DAT_RETURN dat_set_consumer_context(
	IN	DAT_HANDLE,
	IN	DAT_CONTEXT);

extern DAT_RETURN dat_get_consumer_context(
	IN	DAT_HANDLE,
	OUT	DAT_CONTEXT *);

extern DAT_RETURN dat_get_handle_type(
	IN	DAT_HANDLE,
	OUT	DAT_HANDLE_TYPE *);

/* CR. */
extern DAT_RETURN dat_cr_query(
	IN	DAT_CR_HANDLE,
	IN	DAT_CR_PARAM_MASK,
	OUT	DAT_CR_PARAM *);

extern DAT_RETURN dat_cr_accept(
	IN	DAT_CR_HANDLE,
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* private data size */
	IN	const DAT_PVOID);		/* private data */

/* DAT 2.0: a reject may carry private data to the active side. */
extern DAT_RETURN dat_cr_reject(
	IN	DAT_CR_HANDLE,
	IN	DAT_COUNT,			/* private data size */
	IN	const DAT_PVOID);		/* private data */

extern DAT_RETURN dat_cr_handoff(
	IN	DAT_CR_HANDLE,
	IN	DAT_CONN_QUAL);			/* hand off to this qualifier */

/* EVD. */
extern DAT_RETURN dat_evd_resize(
	IN	DAT_EVD_HANDLE,
	IN	DAT_COUNT);			/* new min qlen */

extern DAT_RETURN dat_evd_post_se(
	IN	DAT_EVD_HANDLE,
	IN	const DAT_EVENT *);

extern DAT_RETURN dat_evd_dequeue(
	IN	DAT_EVD_HANDLE,
	OUT	DAT_EVENT *);

extern DAT_RETURN dat_evd_query(
	IN	DAT_EVD_HANDLE,
	IN	DAT_EVD_PARAM_MASK,
	OUT	DAT_EVD_PARAM *);

extern DAT_RETURN dat_evd_free(
	IN	DAT_EVD_HANDLE);

/* EP. */
extern DAT_RETURN dat_ep_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_PZ_HANDLE,
	IN	DAT_EVD_HANDLE,			/* recv completions */
	IN	DAT_EVD_HANDLE,			/* request completions */
	IN	DAT_EVD_HANDLE,			/* connection events */
	IN	const DAT_EP_ATTR *,
	OUT	DAT_EP_HANDLE *);

extern DAT_RETURN dat_ep_query(
	IN	DAT_EP_HANDLE,
	IN	DAT_EP_PARAM_MASK,
	OUT	DAT_EP_PARAM *);

extern DAT_RETURN dat_ep_modify(
	IN	DAT_EP_HANDLE,
	IN	DAT_EP_PARAM_MASK,
	IN	const DAT_EP_PARAM *);

extern DAT_RETURN dat_ep_connect(
	IN	DAT_EP_HANDLE,
	IN	DAT_IA_ADDRESS_PTR,		/* remote address */
	IN	DAT_CONN_QUAL,			/* remote qualifier */
	IN	DAT_TIMEOUT,
	IN	DAT_COUNT,			/* private data size */
	IN	const DAT_PVOID,		/* private data */
	IN	DAT_QOS,
	IN	DAT_CONNECT_FLAGS);

extern DAT_RETURN dat_ep_dup_connect(
	IN	DAT_EP_HANDLE,
	IN	DAT_EP_HANDLE,			/* connected EP to copy */
	IN	DAT_TIMEOUT,
	IN	DAT_COUNT,			/* private data size */
	IN	const DAT_PVOID,		/* private data */
	IN	DAT_QOS);

/* Connect to a CSP's address (DAT 2.0). */
extern DAT_RETURN dat_ep_common_connect(
	IN	DAT_EP_HANDLE,
	IN	DAT_IA_ADDRESS_PTR,		/* remote address */
	IN	DAT_TIMEOUT,
	IN	DAT_COUNT,			/* private data size */
	IN	const DAT_PVOID);		/* private data */

extern DAT_RETURN dat_ep_disconnect(
	IN	DAT_EP_HANDLE,
	IN	DAT_CLOSE_FLAGS);

extern DAT_RETURN dat_ep_post_send(
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* number of segments */
	IN	DAT_LMR_TRIPLET *,		/* local iov */
	IN	DAT_DTO_COOKIE,
	IN	DAT_COMPLETION_FLAGS);

extern DAT_RETURN dat_ep_post_send_with_invalidate(
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* number of segments */
	IN	DAT_LMR_TRIPLET *,		/* local iov */
	IN	DAT_DTO_COOKIE,
	IN	DAT_COMPLETION_FLAGS,
	IN	DAT_BOOLEAN,			/* invalidate? */
	IN	DAT_RMR_CONTEXT);		/* the RMR to invalidate */

extern DAT_RETURN dat_ep_post_recv(
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* number of segments */
	IN	DAT_LMR_TRIPLET *,		/* local iov */
	IN	DAT_DTO_COOKIE,
	IN	DAT_COMPLETION_FLAGS);

extern DAT_RETURN dat_ep_post_rdma_read(
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* number of segments */
	IN	DAT_LMR_TRIPLET *,		/* local iov */
	IN	DAT_DTO_COOKIE,
	IN	const DAT_RMR_TRIPLET *,	/* remote buffer */
	IN	DAT_COMPLETION_FLAGS);

/* Read into an RMR rather than an LMR (DAT 2.0). */
extern DAT_RETURN dat_ep_post_rdma_read_to_rmr(
	IN	DAT_EP_HANDLE,
	IN	const DAT_RMR_TRIPLET *,	/* local buffer */
	IN	DAT_DTO_COOKIE,
	IN	const DAT_RMR_TRIPLET *,	/* remote buffer */
	IN	DAT_COMPLETION_FLAGS);

extern DAT_RETURN dat_ep_post_rdma_write(
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* number of segments */
	IN	DAT_LMR_TRIPLET *,		/* local iov */
	IN	DAT_DTO_COOKIE,
	IN	const DAT_RMR_TRIPLET *,	/* remote buffer */
	IN	DAT_COMPLETION_FLAGS);

extern DAT_RETURN dat_ep_get_status(
	IN	DAT_EP_HANDLE,
	OUT	DAT_EP_STATE *,
	OUT	DAT_BOOLEAN *,			/* recv queue idle */
	OUT	DAT_BOOLEAN *);			/* request queue idle */

extern DAT_RETURN dat_ep_free(
	IN	DAT_EP_HANDLE);

extern DAT_RETURN dat_ep_reset(
	IN	DAT_EP_HANDLE);

/* LMR (dat_lmr_create and dat_lmr_query are in udat.h). */
extern DAT_RETURN dat_lmr_free(
	IN	DAT_LMR_HANDLE);

/* Cache coherency for non-coherent memory (DAT 1.2). */
extern DAT_RETURN dat_lmr_sync_rdma_read(
	IN	DAT_IA_HANDLE,
	IN	const DAT_LMR_TRIPLET *,	/* segments */
	IN	DAT_VLEN);			/* number of segments */

extern DAT_RETURN dat_lmr_sync_rdma_write(
	IN	DAT_IA_HANDLE,
	IN	const DAT_LMR_TRIPLET *,	/* segments */
	IN	DAT_VLEN);			/* number of segments */

/* RMR. */
extern DAT_RETURN dat_rmr_create(
	IN	DAT_PZ_HANDLE,
	OUT	DAT_RMR_HANDLE *);

/* An RMR of scope EP (DAT 2.0). */
extern DAT_RETURN dat_rmr_create_for_ep(
	IN	DAT_PZ_HANDLE,
	OUT	DAT_RMR_HANDLE *);

extern DAT_RETURN dat_rmr_query(
	IN	DAT_RMR_HANDLE,
	IN	DAT_RMR_PARAM_MASK,
	OUT	DAT_RMR_PARAM *);

/* DAT 2.0 adds the LMR the triplet lies in and the address type. */
extern DAT_RETURN dat_rmr_bind(
	IN	DAT_RMR_HANDLE,
	IN	DAT_LMR_HANDLE,
	IN	const DAT_LMR_TRIPLET *,
	IN	DAT_MEM_PRIV_FLAGS,
	IN	DAT_VA_TYPE,
	IN	DAT_EP_HANDLE,
	IN	DAT_RMR_COOKIE,
	IN	DAT_COMPLETION_FLAGS,
	OUT	DAT_RMR_CONTEXT *);

extern DAT_RETURN dat_rmr_free(
	IN	DAT_RMR_HANDLE);

/* PSP. */
extern DAT_RETURN dat_psp_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_CONN_QUAL,
	IN	DAT_EVD_HANDLE,			/* CR events */
	IN	DAT_PSP_FLAGS,
	OUT	DAT_PSP_HANDLE *);

extern DAT_RETURN dat_psp_create_any(
	IN	DAT_IA_HANDLE,
	OUT	DAT_CONN_QUAL *,		/* qualifier chosen */
	IN	DAT_EVD_HANDLE,			/* CR events */
	IN	DAT_PSP_FLAGS,
	OUT	DAT_PSP_HANDLE *);

extern DAT_RETURN dat_psp_query(
	IN	DAT_PSP_HANDLE,
	IN	DAT_PSP_PARAM_MASK,
	OUT	DAT_PSP_PARAM *);

extern DAT_RETURN dat_psp_free(
	IN	DAT_PSP_HANDLE);

/* RSP. */
extern DAT_RETURN dat_rsp_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_CONN_QUAL,
	IN	DAT_EP_HANDLE,
	IN	DAT_EVD_HANDLE,			/* CR events */
	OUT	DAT_RSP_HANDLE *);

extern DAT_RETURN dat_rsp_query(
	IN	DAT_RSP_HANDLE,
	IN	DAT_RSP_PARAM_MASK,
	OUT	DAT_RSP_PARAM *);

extern DAT_RETURN dat_rsp_free(
	IN	DAT_RSP_HANDLE);

/* CSP (DAT 2.0). */
extern DAT_RETURN dat_csp_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_COMM *,
	IN	DAT_IA_ADDRESS_PTR,		/* address to listen on */
	IN	DAT_EVD_HANDLE,			/* CR events */
	OUT	DAT_CSP_HANDLE *);

extern DAT_RETURN dat_csp_query(
	IN	DAT_CSP_HANDLE,
	IN	DAT_CSP_PARAM_MASK,
	OUT	DAT_CSP_PARAM *);

extern DAT_RETURN dat_csp_free(
	IN	DAT_CSP_HANDLE);

/* PZ. */
extern DAT_RETURN dat_pz_create(
	IN	DAT_IA_HANDLE,
	OUT	DAT_PZ_HANDLE *);

extern DAT_RETURN dat_pz_query(
	IN	DAT_PZ_HANDLE,
	IN	DAT_PZ_PARAM_MASK,
	OUT	DAT_PZ_PARAM *);

extern DAT_RETURN dat_pz_free(
	IN	DAT_PZ_HANDLE);

/* SRQ and the EP calls that came with it (DAT 1.2). */
extern DAT_RETURN dat_ep_create_with_srq(
	IN	DAT_IA_HANDLE,
	IN	DAT_PZ_HANDLE,
	IN	DAT_EVD_HANDLE,			/* recv completions */
	IN	DAT_EVD_HANDLE,			/* request completions */
	IN	DAT_EVD_HANDLE,			/* connection events */
	IN	DAT_SRQ_HANDLE,
	IN	const DAT_EP_ATTR *,
	OUT	DAT_EP_HANDLE *);

extern DAT_RETURN dat_ep_recv_query(
	IN	DAT_EP_HANDLE,
	OUT	DAT_COUNT *,			/* buffers allocated */
	OUT	DAT_COUNT *);			/* buffer allocation span */

extern DAT_RETURN dat_ep_set_watermark(
	IN	DAT_EP_HANDLE,
	IN	DAT_COUNT,			/* soft high watermark */
	IN	DAT_COUNT);			/* hard high watermark */

extern DAT_RETURN dat_srq_create(
	IN	DAT_IA_HANDLE,
	IN	DAT_PZ_HANDLE,
	IN	DAT_SRQ_ATTR *,
	OUT	DAT_SRQ_HANDLE *);

extern DAT_RETURN dat_srq_free(
	IN	DAT_SRQ_HANDLE);

extern DAT_RETURN dat_srq_post_recv(
	IN	DAT_SRQ_HANDLE,
	IN	DAT_COUNT,			/* number of segments */
	IN	DAT_LMR_TRIPLET *,		/* local iov */
	IN	DAT_DTO_COOKIE);

extern DAT_RETURN dat_srq_query(
	IN	DAT_SRQ_HANDLE,
	IN	DAT_SRQ_PARAM_MASK,
	OUT	DAT_SRQ_PARAM *);

extern DAT_RETURN dat_srq_resize(
	IN	DAT_SRQ_HANDLE,
	IN	DAT_COUNT);			/* max recv DTOs */

extern DAT_RETURN dat_srq_set_lw(
	IN	DAT_SRQ_HANDLE,
	IN	DAT_COUNT);			/* low watermark */

#ifdef DAT_EXTENSIONS
/*
 * Extensions (DAT 2.0).  dat_extension_op() passes an operation and its
 * arguments to the provider of the handle; <dat2/dat_ib_extensions.h>
 * wraps the InfiniBand operations in macros.  Opening and closing
 * operations (no handle yet) are numbered from the two bases.
 */
#define DAT_OPEN_EXTENSION_BASE		0x1000
#define DAT_CLOSE_EXTENSION_BASE	0x2000

typedef int DAT_EXTENDED_OP;

extern DAT_RETURN dat_extension_op(
	IN	DAT_HANDLE,
	IN	DAT_EXTENDED_OP,
	IN	...);				/* the operation's arguments */
#endif

/* Registry.  With max_to_return 0 only the count is returned (and the
 * call reports DAT_INVALID_PARAMETER | DAT_INVALID_ARG1). */
extern DAT_RETURN dat_registry_list_providers(
	IN	DAT_COUNT,			/* max to return */
	OUT	DAT_COUNT *,			/* entries returned */
	OUT	DAT_PROVIDER_INFO *[]);		/* provider list */

/* Status to text: the names of the type and subtype of a DAT_RETURN. */
extern DAT_RETURN dat_strerror(
	IN	DAT_RETURN,
	OUT	const char **,			/* type name */
	OUT	const char **);			/* subtype name */

#ifdef __cplusplus
}
#endif

#endif /* _DAT_H_ */
