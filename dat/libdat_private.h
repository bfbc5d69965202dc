/* The libdat-private interface between our libdat.so.1 and our providers
 * (not DAT API, not installed).  Its two calls are exported under their own
 * version node, so a provider looks them up at run time with dlvsym() and
 * keeps working, without them, under another vendor's libdat; a change to
 * either call gets a new node.
 *
 * A provider that announces its object memory lets libdat refuse a forged
 * handle value without reading it: libdat reads the first word of a handle
 * only inside announced memory, or (the fallback) while some registered
 * provider has not promised that all its objects lie there.  See
 * dat_registry_add_provider(3). */
#ifndef DAT_LIBDAT_PRIVATE_H
#define DAT_LIBDAT_PRIVATE_H

#include <stddef.h>

#include "dat_gen.h"

/* One node per generation: a u2.0 provider must announce to libdat2.so.2
 * even in a process that also has libdat.so.1 loaded. */
#if DAT_GEN == 2
#define LIBDAT_PRIVATE_VERSION "LIBDAT2_PRIVATE_1"
#else
#define LIBDAT_PRIVATE_VERSION "LIBDAT_PRIVATE_1"
#endif

/* [base, base + readable) holds provider objects and stays readable for
 * the rest of the process (never unmapped, never made inaccessible).
 * Called again with the same base and a larger readable as the memory
 * grows; ranges never shrink. */
#define LIBDAT_ADD_OBJECT_MEMORY "libdat_private_add_object_memory"
typedef void (*libdat_add_object_memory_fn)(const void *base, size_t readable);

/* The registered table provider promises that every object of it lies in
 * memory announced with the call above before its handle is returned.
 * DAT_PROVIDER_NOT_FOUND when provider is not registered. */
#define LIBDAT_PROVIDER_ANNOUNCES "libdat_private_provider_announces"
typedef DAT_RETURN (*libdat_provider_announces_fn)(const DAT_PROVIDER *provider);

/* libdat's definitions; a provider never references them at link time
 * (it would then need our libdat.so.1). */
void libdat_private_add_object_memory(const void *base, size_t readable);
DAT_RETURN libdat_private_provider_announces(const DAT_PROVIDER *provider);

#endif
