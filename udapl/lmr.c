/* Local memory regions.  A consumer names an LMR in its DTOs by
 * lmr_context, which libdat hands out itself: the slot of the LMR in the
 * IA's table (low 16 bits) and that slot's generation (high 16), so the
 * DTO path finds the LMR with one load and no lock, and a stale context
 * never finds a newer LMR. */
#include "config.h"

#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "core.h"
#include "entry.h"
#if DAT_GEN == 2
#include <dat2/dat_ib_extensions.h>
#endif

#define BAD_LMR DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_LMR)
#define SLOT_MASK (DAPL_LMR_TABLE - 1)

static struct dapl_lmr *lmr_get(DAT_LMR_HANDLE h)
{
	return (struct dapl_lmr *)dapl_handle_get(h, DAT_HANDLE_TYPE_LMR);
}

struct dapl_lmr *dapl_lmr_lookup(struct dapl_ia *ia, DAT_LMR_CONTEXT ctx)
{
	struct dapl_lmr *lmr;

	if (!ia->lmr_table)
		return NULL;
	lmr = atomic_load_explicit(&ia->lmr_table[ctx & SLOT_MASK],
				   memory_order_acquire);
	/* A freed LMR stays readable (handle.c), so these reads are safe
	 * even when it died since the load. */
	if (!lmr || lmr->h.magic != dapl_magic(DAT_HANDLE_TYPE_LMR) ||
	    lmr->param.lmr_context != ctx)
		return NULL;
	return lmr;
}

bool dapl_lmr_covers(const struct dapl_lmr *lmr, uint64_t addr, uint64_t len)
{
	/* written so that no sum can wrap */
	return addr >= lmr->addr && len <= lmr->len &&
	       addr - lmr->addr <= lmr->len - len;
}

void dapl_lmr_table_free(struct dapl_ia *ia)
{
	free((void *)ia->lmr_table);
	free(ia->lmr_gen);
	ia->lmr_table = NULL;
	ia->lmr_gen = NULL;
}

/* A free slot's context, or 0 when the table is full.  ia->lock held. */
static DAT_LMR_CONTEXT slot_take(struct dapl_ia *ia)
{
	uint32_t i;

	if (!ia->lmr_table) {
		ia->lmr_table = calloc(DAPL_LMR_TABLE, sizeof(*ia->lmr_table));
		ia->lmr_gen = calloc(DAPL_LMR_TABLE, sizeof(*ia->lmr_gen));
		if (!ia->lmr_table || !ia->lmr_gen) {
			dapl_lmr_table_free(ia);
			return 0;
		}
	}
	/* Slot 0 is never used, so no context is 0. */
	for (i = 1; i < DAPL_LMR_TABLE; i++) {
		if (!atomic_load_explicit(&ia->lmr_table[i], memory_order_relaxed)) {
			ia->lmr_gen[i]++;
			return ((DAT_LMR_CONTEXT)ia->lmr_gen[i] << 16) | i;
		}
	}
	return 0;
}

#if DAT_GEN == 2
/* the target of the IB extensions' atomics */
#define PRIV_REMOTE_ATOMIC ((unsigned)DAT_IB_MEM_PRIV_REMOTE_ATOMIC)
#else
#define PRIV_REMOTE_ATOMIC 0u
#endif
#define PRIV_ALL ((unsigned)DAT_MEM_PRIV_ALL_FLAG | PRIV_REMOTE_ATOMIC)
#define PRIV_REMOTE ((unsigned)(DAT_MEM_PRIV_REMOTE_READ_FLAG | \
				DAT_MEM_PRIV_REMOTE_WRITE_FLAG) | \
		     PRIV_REMOTE_ATOMIC)

/* Remote-atomic access goes to the transport only where the device can do
 * atomics: programs written for dapl ask for it on every registration
 * (dtestx does), and a device without atomics may refuse the bit. */
static unsigned priv_to_access(const struct dapl_ia *ia, DAT_MEM_PRIV_FLAGS priv)
{
	unsigned a = 0;

	if (priv & DAT_MEM_PRIV_LOCAL_READ_FLAG)
		a |= DAPL_TACCESS_LOCAL_READ;
	if (priv & DAT_MEM_PRIV_LOCAL_WRITE_FLAG)
		a |= DAPL_TACCESS_LOCAL_WRITE;
	if (priv & DAT_MEM_PRIV_REMOTE_READ_FLAG)
		a |= DAPL_TACCESS_REMOTE_READ;
	if (priv & DAT_MEM_PRIV_REMOTE_WRITE_FLAG)
		a |= DAPL_TACCESS_REMOTE_WRITE;
	if (((unsigned)priv & PRIV_REMOTE_ATOMIC) &&
	    (ia->dev_attr.flags & DAPL_TDEV_ATOMICS))
		a |= DAPL_TACCESS_REMOTE_ATOMIC;
	return a;
}

/* Whether every page of [addr, addr + len) is mapped in this process
 * (len > 0, and the range does not wrap).  mincore fails with ENOMEM on a
 * range with a hole; it only looks at the page tables (msync would do,
 * but valgrind takes it for a read of the whole range).  Asked in chunks,
 * so the answer vector stays on the stack. */
static bool region_mapped(uint64_t addr, uint64_t len)
{
	unsigned char vec[1024];
	uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
	uint64_t first = addr & ~(page - 1);
	uint64_t last = (addr + (len - 1)) & ~(page - 1);
	uint64_t pages = (last - first) / page + 1, n;

	while (pages) {
		n = pages < sizeof(vec) ? pages : sizeof(vec);
		if (mincore((void *)(uintptr_t)first, (size_t)(n * page), vec))
			return false;
		first += n * page;
		pages -= n;
	}
	return true;
}

/* DAT 2.0 inserts va_type as the 7th argument: the output arguments'
 * numbers move up by one. */
#if DAT_GEN == 2
#define LMR_ARG_OUT DAT_INVALID_ARG8
#else
#define LMR_ARG_OUT DAT_INVALID_ARG7
#endif

DAT_RETURN dapl_lmr_create(DAT_IA_HANDLE ia_h, DAT_MEM_TYPE type,
			   DAT_REGION_DESCRIPTION desc, DAT_VLEN len,
			   DAT_PZ_HANDLE pz_h, DAT_MEM_PRIV_FLAGS priv,
#if DAT_GEN == 2
			   DAT_VA_TYPE va_type,
#endif
			   DAT_LMR_HANDLE *out, DAT_LMR_CONTEXT *lmr_context,
			   DAT_RMR_CONTEXT *rmr_context, DAT_VLEN *reg_len,
			   DAT_VADDR *reg_addr)
{
	struct dapl_ia *ia = dapl_ia_get(ia_h);
	struct dapl_lmr *lmr, *src;
	struct dapl_pz *pz;
	uint64_t addr;
	uint32_t rkey = 0;
	DAT_LMR_CONTEXT ctx;
	DAT_RETURN rc = DAT_SUCCESS;
	int err;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (type != DAT_MEM_TYPE_VIRTUAL && type != DAT_MEM_TYPE_LMR)
		return DAT_ERROR(DAT_MODEL_NOT_SUPPORTED, 0);
	if ((unsigned)priv & ~PRIV_ALL)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG6);
#if DAT_GEN == 2
	/* Zero-based addresses (DAT_VA_TYPE_ZB) would need every transport
	 * to offset remote addresses; not offered (zb_supported false). */
	if (va_type != DAT_VA_TYPE_VA)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG7);
#endif
	if (!out)
		return DAT_ERROR(DAT_INVALID_PARAMETER, LMR_ARG_OUT);

	pthread_mutex_lock(&ia->lock);
	if (type == DAT_MEM_TYPE_VIRTUAL) {
		/* The length first: a zero-length region is an invalid length
		 * wherever it is, NULL included.  Programs written for
		 * OpenFabrics' 1.2 providers test for DAT_LENGTH_ERROR;
		 * DAT 1.2's text names DAT_INVALID_PARAMETER, the subtype
		 * naming the argument (DAT_STRICT=1, libdat(7)). */
		if (len == 0) {
			rc = dapl_strict() ?
				DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4) :
				DAT_ERROR(DAT_LENGTH_ERROR, 0);
			goto out;
		}
		if (!desc.for_va) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
			goto out;
		}
		addr = (uint64_t)(uintptr_t)desc.for_va;
		/* A region past the end of the address space, or one this
		 * process has not mapped: a transport that does not touch
		 * the pages when it registers them (libfabric tcp) would
		 * give a peer an address that faults in our progress
		 * thread. */
		/* (addr >= 1 here, so the bound does not overflow) */
		if (len > (uint64_t)UINTPTR_MAX - addr + 1) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG4);
			goto out;
		}
		if (!region_mapped(addr, len)) {
			rc = DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
			goto out;
		}
	} else {
		/* A second registration of exactly the memory of src. */
		src = lmr_get(desc.for_lmr_handle);
		if (!src || src->ia != ia) {
			rc = BAD_LMR;
			goto out;
		}
		addr = src->addr;
		len = src->len;
	}
	pz = (struct dapl_pz *)dapl_handle_get(pz_h, DAT_HANDLE_TYPE_PZ);
	if (!pz || pz->ia != ia) {
		rc = DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_PZ);
		goto out;
	}
	ctx = slot_take(ia);
	if (!ctx) {
		rc = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY_REGION);
		goto out;
	}
	lmr = dapl_handle_alloc(&ia->prov->table, DAT_HANDLE_TYPE_LMR,
				sizeof(*lmr), ia);
	if (!lmr) {
		rc = DAT_ERROR(DAT_INSUFFICIENT_RESOURCES, DAT_RESOURCE_MEMORY);
		goto out;
	}
	err = ia->ops->mr_reg(pz->tpd, (void *)(uintptr_t)addr, len,
			      priv_to_access(ia, priv), &lmr->tmr, &lmr->lkey, &rkey);
	if (err) {
		dapl_handle_free(lmr);
		rc = DAT_ERROR(dapl_errno_to_dat(err), DAT_RESOURCE_MEMORY_REGION);
		goto out;
	}
	lmr->ia = ia;
	lmr->pz = pz;
	lmr->addr = addr;
	lmr->len = len;
	lmr->param.ia_handle = ia;
	lmr->param.mem_type = type;
	lmr->param.region_desc = desc;
	lmr->param.length = len;
	lmr->param.pz_handle = pz;
	lmr->param.mem_priv = priv;
	lmr->param.lmr_context = ctx;
	/* DAT 1.2: no remote privilege, no rmr_context. */
	lmr->param.rmr_context = ((unsigned)priv & PRIV_REMOTE) ? rkey : 0;
	lmr->param.registered_size = len;
	lmr->param.registered_address = addr;
	pz->users++;
	lmr->next = ia->lmrs;
	ia->lmrs = lmr;
	atomic_store_explicit(&ia->lmr_table[ctx & SLOT_MASK], lmr,
			      memory_order_release);
	*out = lmr;
	if (lmr_context)
		*lmr_context = ctx;
	if (rmr_context)
		*rmr_context = lmr->param.rmr_context;
	if (reg_len)
		*reg_len = len;
	if (reg_addr)
		*reg_addr = addr;
out:
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

DAT_RETURN dapl_lmr_query(DAT_LMR_HANDLE h, DAT_LMR_PARAM_MASK mask,
			  DAT_LMR_PARAM *param)
{
	struct dapl_lmr *lmr = lmr_get(h);

	(void)mask;
	if (!lmr)
		return BAD_LMR;
	if (!param)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG3);
	*param = lmr->param;
	return DAT_SUCCESS;
}

void dapl_lmr_destroy(struct dapl_lmr *lmr)
{
	struct dapl_ia *ia = lmr->ia;
	struct dapl_lmr **pp;

	atomic_store_explicit(&ia->lmr_table[lmr->param.lmr_context & SLOT_MASK],
			      NULL, memory_order_release);
	ia->ops->mr_dereg(lmr->tmr);
	lmr->pz->users--;
	for (pp = &ia->lmrs; *pp; pp = &(*pp)->next)
		if (*pp == lmr) {
			*pp = lmr->next;
			break;
		}
	dapl_handle_free(lmr);
}

DAT_RETURN dapl_lmr_free(DAT_LMR_HANDLE h)
{
	struct dapl_lmr *lmr = lmr_get(h);
	struct dapl_ia *ia;
	DAT_RETURN rc = DAT_SUCCESS;

	if (!lmr)
		return BAD_LMR;
	ia = lmr->ia;
	pthread_mutex_lock(&ia->lock);
	if (!lmr_get(h))
		rc = BAD_LMR;
	else if (lmr->users > 0)
		rc = DAT_ERROR(DAT_INVALID_STATE, DAT_INVALID_STATE_LMR_IN_USE);
	else
		dapl_lmr_destroy(lmr);
	pthread_mutex_unlock(&ia->lock);
	return rc;
}

/* Memory is coherent here (provider_attr.lmr_sync_req is false): syncing
 * is checking that the triplets name memory of live LMRs. */
static DAT_RETURN lmr_sync(DAT_IA_HANDLE ia_h, const DAT_LMR_TRIPLET *iov,
			   DAT_VLEN n)
{
	struct dapl_ia *ia = dapl_ia_get(ia_h);
	struct dapl_lmr *lmr;
	DAT_VLEN i;

	if (!ia)
		return DAT_ERROR(DAT_INVALID_HANDLE, DAT_INVALID_HANDLE_IA);
	if (n > 0 && !iov)
		return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	for (i = 0; i < n; i++) {
		if (iov[i].segment_length == 0)
			continue;
		lmr = dapl_lmr_lookup(ia, iov[i].lmr_context);
		if (!lmr || !dapl_lmr_covers(lmr, iov[i].virtual_address,
					     iov[i].segment_length))
			return DAT_ERROR(DAT_INVALID_PARAMETER, DAT_INVALID_ARG2);
	}
	return DAT_SUCCESS;
}

DAT_RETURN dapl_lmr_sync_rdma_read(DAT_IA_HANDLE ia, const DAT_LMR_TRIPLET *iov,
				   DAT_VLEN n)
{
	return lmr_sync(ia, iov, n);
}

DAT_RETURN dapl_lmr_sync_rdma_write(DAT_IA_HANDLE ia, const DAT_LMR_TRIPLET *iov,
				    DAT_VLEN n)
{
	return lmr_sync(ia, iov, n);
}
