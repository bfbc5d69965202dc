/* The object ranges providers announce; see object_memory.h and
 * libdat_private.h. */
#include "config.h"

#include <pthread.h>

#include "libdat_private.h"
#include "object_memory.h"

#define EXPORT __attribute__((visibility("default")))

struct dat_object_range dat_object_ranges[DAT_MAX_OBJECT_RANGES];
_Atomic unsigned dat_object_nranges;
_Atomic int dat_object_memory_partial;

/* A leaf lock: taken by providers while they hold their own allocation
 * lock, so nothing is called with it held. */
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;
static int ranges_overflowed;
static int unannounced;

static void partial_update_locked(void)
{
	atomic_store_explicit(&dat_object_memory_partial,
			      ranges_overflowed || unannounced,
			      memory_order_release);
}

EXPORT void libdat_private_add_object_memory(const void *base, size_t readable)
{
	uintptr_t b = (uintptr_t)base;
	unsigned i, n;

	if (!base || !readable)
		return;
	pthread_mutex_lock(&ranges_lock);
	n = atomic_load_explicit(&dat_object_nranges, memory_order_relaxed);
	for (i = 0; i < n; i++) {
		if (atomic_load_explicit(&dat_object_ranges[i].base,
					 memory_order_relaxed) != b)
			continue;
		/* only grows: a stale smaller announcement changes nothing */
		if (readable > atomic_load_explicit(&dat_object_ranges[i].readable,
						    memory_order_relaxed))
			atomic_store_explicit(&dat_object_ranges[i].readable,
					      readable, memory_order_release);
		pthread_mutex_unlock(&ranges_lock);
		return;
	}
	if (n < DAT_MAX_OBJECT_RANGES) {
		atomic_store_explicit(&dat_object_ranges[n].base, b,
				      memory_order_relaxed);
		atomic_store_explicit(&dat_object_ranges[n].readable, readable,
				      memory_order_relaxed);
		atomic_store_explicit(&dat_object_nranges, n + 1,
				      memory_order_release);
	} else {
		ranges_overflowed = 1;
		partial_update_locked();
	}
	pthread_mutex_unlock(&ranges_lock);
}

void dat_object_memory_set_unannounced(int any)
{
	pthread_mutex_lock(&ranges_lock);
	unannounced = any;
	partial_update_locked();
	pthread_mutex_unlock(&ranges_lock);
}
