/* Object allocation with a quarantine for freed handles; see handle.h. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "handle.h"

/* The quarantine: a FIFO of dead objects.  Only the oldest ones, once more
 * than DAPL_QUARANTINE are waiting, go back to the allocator. */
static pthread_mutex_t dead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dapl_header *dead_head, *dead_tail;
static size_t dead_count;

uint32_t dapl_magic(DAT_HANDLE_TYPE type)
{
	/* "DA" in the high half keeps every live magic far from DEAD. */
	return 0xda000000u | ((uint32_t)type << 8) | 0x5a;
}

void *dapl_handle_alloc(DAT_PROVIDER *provider, DAT_HANDLE_TYPE type,
			size_t size, void *ia)
{
	struct dapl_header *h;

	if (size < sizeof(*h))
		size = sizeof(*h);
	h = calloc(1, size);
	if (!h)
		return NULL;
	h->provider = provider;
	h->type = type;
	h->ia = ia ? ia : h;
	h->magic = dapl_magic(type);
	return h;
}

void dapl_handle_free(void *obj)
{
	struct dapl_header *h = obj, *old = NULL;

	if (!h)
		return;
	pthread_mutex_lock(&dead_lock);
	h->magic = DAPL_MAGIC_DEAD;
	h->next_dead = NULL;
	if (dead_tail)
		dead_tail->next_dead = h;
	else
		dead_head = h;
	dead_tail = h;
	if (++dead_count > DAPL_QUARANTINE) {
		old = dead_head;
		dead_head = old->next_dead;
		dead_count--;
	}
	pthread_mutex_unlock(&dead_lock);
	free(old);
}

void dapl_handle_release_all(void)
{
	struct dapl_header *h, *next;

	pthread_mutex_lock(&dead_lock);
	h = dead_head;
	dead_head = dead_tail = NULL;
	dead_count = 0;
	pthread_mutex_unlock(&dead_lock);
	for (; h; h = next) {
		next = h->next_dead;
		free(h);
	}
}

size_t dapl_handle_quarantined(void)
{
	size_t n;

	pthread_mutex_lock(&dead_lock);
	n = dead_count;
	pthread_mutex_unlock(&dead_lock);
	return n;
}
