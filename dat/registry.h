/* libdat internals shared by registry.c (the provider table and IA handles)
 * and api.c (the dispatching calls). */
#ifndef DAT_REGISTRY_INTERNAL_H
#define DAT_REGISTRY_INTERNAL_H

#include <stddef.h>
#include <stdio.h>

#include "dat_gen.h"

/* IA handles given to consumers are the integers 1 .. DAT_IA_HANDLE_LIMIT-1.
 * No object of any provider lives that low in the address space (Linux maps
 * nothing below mmap_min_addr, 64 KiB), so such a value is never mistaken
 * for, or dereferenced as, an object pointer. */
#define DAT_IA_HANDLE_LIMIT 4096

static inline int dat_is_ia_handle_value(const void *h)
{
	return (size_t)h != 0 && (size_t)h < DAT_IA_HANDLE_LIMIT;
}

/* Whether an object handle may be read at all: nothing is mapped below
 * 64 KiB, and an object's first word is aligned. */
static inline int dat_handle_readable(const void *h)
{
	return (size_t)h >= 0x10000u && !((size_t)h & (sizeof(void *) - 1));
}

/* The provider table and provider IA behind a consumer IA handle.
 * Returns 0 when the handle is not an open IA. */
int dat_ia_resolve(DAT_IA_HANDLE consumer_ia, DAT_IA_HANDLE *provider_ia,
		   DAT_PROVIDER **provider);

/* The consumer IA handle for a provider IA, or h itself when h is not an
 * open provider IA: used to rewrite query results and async events. */
DAT_HANDLE dat_ia_to_consumer(DAT_HANDLE h);

/* Whether p is the table of a registered provider; the cheap check every
 * dispatching call makes before it jumps through an object's first word. */
int dat_provider_is_known(const DAT_PROVIDER *p);

#endif
