/* Object memory that never comes back as another object; see handle.h.
 *
 * Objects are carved, in order, out of large anonymous mappings reserved
 * for them (arenas) and an address is never handed out twice.  A freed
 * object keeps its place, marked dead; once every object overlapping a
 * 64 KiB chunk is dead and the allocation point has moved past it, the
 * chunk's pages go back to the kernel (MADV_DONTNEED), which leaves them
 * readable as zeros.  So any handle the core ever gave out, however long
 * ago it was freed or its IA closed, can be read: its magic is DEAD or 0,
 * never that of a live object.  The reservation is address space only
 * (PROT_NONE, MAP_NORESERVE), made readable and writable a megabyte at a
 * time as objects fill it (a leak checker scans what is readable); when
 * one arena is used up another is reserved, and arenas are never
 * unmapped, not even when the provider is unloaded. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1      /* dlvsym, RTLD_DEFAULT */
#endif
#include "config.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "handle.h"
#include "libdat_private.h"

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define POISON(p, n) ASAN_POISON_MEMORY_REGION(p, n)
#else
#define POISON(p, n) ((void)(p), (void)(n))
#endif

#define OBJ_ALIGN 64u
#define CHUNK ((size_t)64 * 1024)
#define MAX_ARENAS DAPL_MAX_ARENAS
#define CHUNK_GONE UINT32_MAX    /* given back to the kernel */
#define OPEN_STEP ((size_t)1 << 20)

struct arena {
	unsigned char *base;
	size_t size, used;
	size_t open;                /* bytes from base that are read-write */
	uint32_t *live;             /* live objects per chunk, or CHUNK_GONE */
};

static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;
static struct arena arenas[MAX_ARENAS];
static int narenas;
static size_t live_objects;

struct dapl_arena_extent dapl_arena_extents[DAPL_MAX_ARENAS];
_Atomic unsigned dapl_arena_count;

/* Our libdat's calls (libdat_private.h), found once at the first provider
 * init; both NULL under another libdat.  Set under arena_lock. */
static libdat_add_object_memory_fn registry_add_memory;
static libdat_provider_announces_fn registry_provider_announces;
static bool registry_looked_up;

/* Makes [base, base + open) of arena a count as object memory, here and in
 * the registry; arena_lock held, after the mprotect. */
static void arena_publish(struct arena *a, size_t open)
{
	a->open = open;
	atomic_store_explicit(&dapl_arena_extents[a - arenas].open, open,
			      memory_order_release);
	if (registry_add_memory)
		registry_add_memory(a->base, open);
}

uint32_t dapl_magic(DAT_HANDLE_TYPE type)
{
	/* "DA" in the high half keeps every live magic far from DEAD and 0. */
	return 0xda000000u | ((uint32_t)type << 8) | 0x5a;
}

/* Reserves the next arena, big enough for need bytes.  arena_lock held. */
static struct arena *arena_new(size_t need)
{
	/* Address space is cheap; a kernel that counts it strictly
	 * (overcommit_memory=2) gets a smaller one. */
	static const size_t sizes[] = {
		(size_t)1 << 36, (size_t)1 << 32, (size_t)1 << 28, (size_t)1 << 24,
	};
	struct arena *a;
	size_t i;

	if (narenas == MAX_ARENAS)
		return NULL;
	a = &arenas[narenas];
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *p;

		if (sizes[i] < need)
			break;
		p = mmap(NULL, sizes[i], PROT_NONE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			continue;
		a->live = calloc(sizes[i] / CHUNK, sizeof(*a->live));
		if (!a->live) {
			munmap(p, sizes[i]);
			return NULL;
		}
		a->base = p;
		a->size = sizes[i];
		a->used = 0;
		a->open = 0;
		narenas++;
		dapl_arena_extents[a - arenas].base = (uintptr_t)p;
		atomic_store_explicit(&dapl_arena_count, (unsigned)narenas,
				      memory_order_release);
		return a;
	}
	return NULL;
}

/* Gives chunk c back to the kernel when nothing in it lives any more and
 * nothing new will be put there.  arena_lock held. */
static void chunk_settle(struct arena *a, size_t c)
{
	if (a->live[c] != 0 || (c + 1) * CHUNK > a->used)
		return;
	madvise(a->base + c * CHUNK, CHUNK, MADV_DONTNEED);
	a->live[c] = CHUNK_GONE;
}

void *dapl_handle_alloc(DAT_PROVIDER *provider, DAT_HANDLE_TYPE type,
			size_t size, void *ia)
{
	struct dapl_header *h;
	struct arena *a;
	size_t c, old;

	if (size < sizeof(*h))
		size = sizeof(*h);
	if (size > CHUNK * 16)
		return NULL;            /* no DAT object is anywhere near this */
	size = (size + OBJ_ALIGN - 1) & ~(size_t)(OBJ_ALIGN - 1);

	pthread_mutex_lock(&arena_lock);
	a = narenas ? &arenas[narenas - 1] : NULL;
	if (!a || a->size - a->used < size)
		a = arena_new(size);
	if (a && a->used + size > a->open) {
		size_t open = (a->used + size + OPEN_STEP - 1) & ~(OPEN_STEP - 1);

		if (open > a->size)
			open = a->size;
		if (mprotect(a->base + a->open, open - a->open,
			     PROT_READ | PROT_WRITE))
			a = NULL;
		else
			arena_publish(a, open);
	}
	if (!a) {
		pthread_mutex_unlock(&arena_lock);
		return NULL;
	}
	old = a->used;
	h = (struct dapl_header *)(a->base + old);
	a->used += size;
	/* (a chunk the allocation point leaves behind still holds this
	 * object, so it is settled by the frees, never here) */
	for (c = old / CHUNK; c <= (a->used - 1) / CHUNK; c++)
		a->live[c]++;
	live_objects++;
	pthread_mutex_unlock(&arena_lock);

	/* never used before: the pages are zero */
	h->provider = provider;
	h->type = type;
	h->ia = ia ? ia : h;
	h->size = size;
	h->magic = dapl_magic(type);
	return h;
}

void dapl_handle_free(void *obj)
{
	struct dapl_header *h = obj;
	struct arena *a = NULL;
	size_t c, off, size;
	int i;

	if (!h)
		return;
	size = h->size;
	h->magic = DAPL_MAGIC_DEAD;
	POISON((unsigned char *)h + sizeof(*h), size - sizeof(*h));
	pthread_mutex_lock(&arena_lock);
	for (i = 0; i < narenas; i++)
		if ((unsigned char *)h >= arenas[i].base &&
		    (unsigned char *)h < arenas[i].base + arenas[i].used) {
			a = &arenas[i];
			break;
		}
	if (a) {
		/* (size read first: settling a chunk zeroes the header) */
		off = (size_t)((unsigned char *)h - a->base);
		for (c = off / CHUNK; c <= (off + size - 1) / CHUNK; c++) {
			a->live[c]--;
			chunk_settle(a, c);
		}
		live_objects--;
	}
	pthread_mutex_unlock(&arena_lock);
}

void dapl_handle_announce_provider(const DAT_PROVIDER *table)
{
	libdat_provider_announces_fn announces;
	int i;

	pthread_mutex_lock(&arena_lock);
	if (!registry_looked_up) {
		/* dlvsym, not a link-time reference: under another vendor's
		 * libdat.so.1 the node is missing and the provider still loads;
		 * both calls or neither. */
		void *add = dlvsym(RTLD_DEFAULT, LIBDAT_ADD_OBJECT_MEMORY,
				   LIBDAT_PRIVATE_VERSION);
		void *ann = dlvsym(RTLD_DEFAULT, LIBDAT_PROVIDER_ANNOUNCES,
				   LIBDAT_PRIVATE_VERSION);

		if (add && ann) {
			*(void **)&registry_add_memory = add;
			*(void **)&registry_provider_announces = ann;
		}
		registry_looked_up = true;
		/* what was opened before (a provider initialised again) */
		for (i = 0; registry_add_memory && i < narenas; i++)
			if (arenas[i].open)
				registry_add_memory(arenas[i].base, arenas[i].open);
	}
	announces = registry_provider_announces;
	pthread_mutex_unlock(&arena_lock);
	/* (registered first: the promise is about a registered table) */
	if (announces)
		announces(table);
}

void dapl_handle_release_all(void)
{
	size_t c;
	int i;

	/* The provider is going away (its library stays mapped: -z
	 * nodelete, and so do the arenas): every chunk nothing lives in goes
	 * back to the kernel now, the one being filled included, and the
	 * allocation point moves to the next chunk so that none of it is
	 * handed out again. */
	pthread_mutex_lock(&arena_lock);
	for (i = 0; i < narenas; i++) {
		struct arena *a = &arenas[i];

		if (a->used % CHUNK && a->size - a->used >= CHUNK)
			a->used = (a->used + CHUNK - 1) & ~(CHUNK - 1);
		for (c = 0; c < a->used / CHUNK; c++)
			if (a->live[c] != CHUNK_GONE)
				chunk_settle(a, c);
	}
	pthread_mutex_unlock(&arena_lock);
}

size_t dapl_handle_live(void)
{
	size_t n;

	pthread_mutex_lock(&arena_lock);
	n = live_objects;
	pthread_mutex_unlock(&arena_lock);
	return n;
}

bool dapl_handle_page_resident(const void *obj)
{
	unsigned char vec;
	uintptr_t size = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t page = (uintptr_t)obj & ~(size - 1);

	if (mincore((void *)page, (size_t)size, &vec))
		return false;
	return vec & 1;
}
