/* Where provider objects can be: the ranges providers announced
 * (libdat_private.h), checked by every dispatching call before it reads a
 * handle's first word.  The table only grows, entries are published with
 * release stores, and a check is a lock-free linear scan. */
#ifndef DAT_OBJECT_MEMORY_H
#define DAT_OBJECT_MEMORY_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Our three providers reserve at most 64 arenas each; a full table only
 * turns on the fallback (dat_object_memory_may_hold). */
#define DAT_MAX_OBJECT_RANGES 256

/* (hidden: the checks address the table directly, not through the GOT) */
#define DAT_HIDDEN __attribute__((visibility("hidden")))

struct dat_object_range {
	_Atomic uintptr_t base;
	_Atomic size_t readable;       /* only grows */
};

extern DAT_HIDDEN struct dat_object_range dat_object_ranges[DAT_MAX_OBJECT_RANGES];
extern DAT_HIDDEN _Atomic unsigned dat_object_nranges;
/* Nonzero while a registered provider has not promised to announce all its
 * objects, or a range did not fit: then a handle in no range is still read
 * (the checks of DAT 1.2 libdats, which can fault on a forged value). */
extern DAT_HIDDEN _Atomic int dat_object_memory_partial;

/* Whether libdat may read the first word at h (h aligned, >= 64 KiB). */
static inline int dat_object_memory_may_hold(const void *h)
{
	unsigned i, n = atomic_load_explicit(&dat_object_nranges,
					     memory_order_acquire);

	for (i = 0; i < n; i++) {
		uintptr_t base = atomic_load_explicit(&dat_object_ranges[i].base,
						      memory_order_relaxed);

		/* (h aligned and the end page aligned: the whole word fits) */
		if ((uintptr_t)h - base <
		    atomic_load_explicit(&dat_object_ranges[i].readable,
					 memory_order_acquire))
			return 1;
	}
	return atomic_load_explicit(&dat_object_memory_partial,
				    memory_order_acquire);
}

/* Sets the "a registered provider did not promise" half of
 * dat_object_memory_partial (registry.c, reg_lock held). */
void dat_object_memory_set_unannounced(int any);

#endif
