/* Object headers and handle checks of the uDAPL core.
 *
 * Every DAT object starts with struct dapl_header, whose first word is the
 * provider table libdat dispatches through.  Object memory comes from
 * arenas that never hand out an address twice (handle.c): a freed object
 * stays readable, marked dead, until its chunk goes back to the kernel,
 * and then reads as zeros.  So a consumer's stale handle, however old,
 * gets DAT_INVALID_HANDLE instead of a crash or another object (the
 * contract in dat_provider_init(3)), and validating one is a load and a
 * compare. */
#ifndef UDAPL_HANDLE_H
#define UDAPL_HANDLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <dat/udat.h>

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

/* obj as a live object of type, or NULL (NULL, dead, or another type).
 * Safe on any handle the core ever handed out, freed or not. */
/* No object of ours lies in the first 64 KiB (Linux never maps there by
 * default), and every one is aligned: that is where the registry's IA
 * handles (small numbers) and most forged values fall, and they are
 * refused without being read. */
#define DAPL_HANDLE_LOWEST 0x10000u

/* Whether a header may be read at obj at all. */
static inline bool dapl_handle_plausible(const void *obj)
{
	uintptr_t v = (uintptr_t)obj;

	return v >= DAPL_HANDLE_LOWEST && !(v & (_Alignof(struct dapl_header) - 1));
}

static inline struct dapl_header *dapl_handle_get(const void *obj,
						  DAT_HANDLE_TYPE type)
{
	struct dapl_header *h = (struct dapl_header *)obj;

	if (!dapl_handle_plausible(obj) || h->magic != dapl_magic(type))
		return NULL;
	return h;
}

/* Provider fini: the pages of dead objects go back to the kernel. */
void dapl_handle_release_all(void);

/* How many objects are live (tests). */
size_t dapl_handle_live(void);
/* Whether the page under obj is in memory (tests: freed chunks are not). */
bool dapl_handle_page_resident(const void *obj);

#endif
