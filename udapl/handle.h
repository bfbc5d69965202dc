/* Object headers and handle checks of the uDAPL core.
 *
 * Every DAT object starts with struct dapl_header, whose first word is the
 * provider table libdat dispatches through.  Object memory comes from
 * arenas that never hand out an address twice (handle.c): a freed object
 * stays readable, marked dead, until its chunk goes back to the kernel,
 * and then reads as zeros.  So a consumer's stale handle, however old,
 * gets DAT_INVALID_HANDLE instead of a crash or another object (the
 * contract in dat_provider_init(3)), and validating one is a short scan
 * of the arenas' bounds, a load and a compare.  A value that was never a
 * handle is refused unread unless it lies in an arena's readable part. */
#ifndef UDAPL_HANDLE_H
#define UDAPL_HANDLE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "dat_gen.h"

#define DAPL_MAGIC_DEAD 0xdead0bbeu

struct dapl_header {
	DAT_PROVIDER *provider;      /* first word, always */
	uint32_t magic;              /* dapl_magic(type) while live */
	DAT_HANDLE_TYPE type;
	void *ia;                    /* the owning IA object (itself for an IA) */
	DAT_CONTEXT context;         /* dat_set/get_consumer_context */
	size_t size;                 /* bytes taken in the arena */
};

/* The live magic of a handle type: distinct per type, never DEAD. */
uint32_t dapl_magic(DAT_HANDLE_TYPE type);

/* A zeroed object of size bytes (>= sizeof(struct dapl_header)) with its
 * header filled in; NULL when out of memory. */
void *dapl_handle_alloc(DAT_PROVIDER *provider, DAT_HANDLE_TYPE type,
			size_t size, void *ia);

/* Marks obj dead; its memory is never handed out again. */
void dapl_handle_free(void *obj);

/* No object of ours lies in the first 64 KiB (Linux never maps there by
 * default), and every one is aligned: that is where the registry's IA
 * handles (small numbers) and most forged values fall, and they are
 * refused without being read. */
#define DAPL_HANDLE_LOWEST 0x10000u

/* The readable part of each arena, for the lock-free check below: an
 * arena's base is set before dapl_arena_count is raised (release), and
 * open only grows (release, after the mprotect that made it readable). */
#define DAPL_MAX_ARENAS 64
/* (hidden: the checks address the table directly, not through the GOT) */
#define DAPL_HIDDEN __attribute__((visibility("hidden")))
struct dapl_arena_extent {
	uintptr_t base;
	_Atomic size_t open;
};
extern DAPL_HIDDEN struct dapl_arena_extent dapl_arena_extents[DAPL_MAX_ARENAS];
extern DAPL_HIDDEN _Atomic unsigned dapl_arena_count;

/* Whether a header may be read at obj at all: aligned, and in the opened
 * part of one of our arenas.  A forged value (unmapped memory, the
 * consumer's stack or heap, another provider's object, an arena's
 * PROT_NONE tail) is refused unread: this is the check for every handle
 * libdat did not check, those passed as second arguments or inside
 * structures, and all of them under a libdat that checks nothing. */
static inline bool dapl_handle_plausible(const void *obj)
{
	uintptr_t v = (uintptr_t)obj;
	unsigned i, n;

	if (v < DAPL_HANDLE_LOWEST || (v & (_Alignof(struct dapl_header) - 1)))
		return false;
	n = atomic_load_explicit(&dapl_arena_count, memory_order_acquire);
	for (i = 0; i < n; i++)
		if (v - dapl_arena_extents[i].base <
		    atomic_load_explicit(&dapl_arena_extents[i].open,
					 memory_order_acquire))
			return true;
	return false;
}

/* The magic at a plausible obj.  A forged value inside an arena may land in
 * the body of a freed object, which AddressSanitizer poisons; reading it is
 * what the check is for. */
#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address))
#endif
static inline uint32_t dapl_handle_magic(const struct dapl_header *h)
{
	return h->magic;
}

#if defined(__SANITIZE_ADDRESS__)
__attribute__((no_sanitize_address))
#endif
static inline DAT_HANDLE_TYPE dapl_handle_type(const struct dapl_header *h)
{
	return h->type;
}

/* obj as a live object of type, or NULL (NULL, dead, another type, or no
 * object of ours).  Safe on any value. */
static inline struct dapl_header *dapl_handle_get(const void *obj,
						  DAT_HANDLE_TYPE type)
{
	struct dapl_header *h = (struct dapl_header *)obj;

	if (!dapl_handle_plausible(obj) || dapl_handle_magic(h) != dapl_magic(type))
		return NULL;
	return h;
}

/* obj as a live object of any type, or NULL. */
static inline struct dapl_header *dapl_handle_get_any(const void *obj)
{
	struct dapl_header *h = (struct dapl_header *)obj;

	if (!dapl_handle_plausible(obj) ||
	    dapl_handle_magic(h) != dapl_magic(dapl_handle_type(h)))
		return NULL;
	return h;
}

/* Tells the registry, when it is our libdat, where objects can be: every
 * arena's readable part from now on, and (for each registered table) that
 * all its objects lie there, so that libdat refuses a forged handle
 * without reading it.  Under another libdat this does nothing. */
void dapl_handle_announce_provider(const DAT_PROVIDER *table);

/* Provider fini: the pages of dead objects go back to the kernel. */
void dapl_handle_release_all(void);

/* How many objects are live (tests). */
size_t dapl_handle_live(void);
/* Whether the page under obj is in memory (tests: freed chunks are not). */
bool dapl_handle_page_resident(const void *obj);

#endif
