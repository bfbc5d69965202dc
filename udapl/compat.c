/* The core's compatibility switch (libdat(7)).
 *
 * Long-lived DAT 1.2 programs written for OpenFabrics' uDAPL providers
 * rely on a few behaviours looser than libdat's own rules.  libdat gives
 * them by default; DAT_STRICT=1 in the environment (read once per process)
 * restores the strict rules.  Each relaxed rule says once per process,
 * through dapl_log, that it let something pass. */
#include "config.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"

static pthread_once_t strict_once = PTHREAD_ONCE_INIT;
static bool strict;

static void strict_read(void)
{
	const char *v = getenv("DAT_STRICT");

	/* unset, empty or "0": the compatible behaviour */
	strict = v && *v && strcmp(v, "0") != 0;
}

bool dapl_strict(void)
{
	pthread_once(&strict_once, strict_read);
	return strict;
}

static atomic_bool warned[DAPL_COMPAT_COUNT];

static const char *const compat_what[DAPL_COMPAT_COUNT] = {
	[DAPL_COMPAT_LOCAL_READ] =
		"an LMR without DAT_MEM_PRIV_LOCAL_READ_FLAG was used as the source of a Send or RDMA Write",
	[DAPL_COMPAT_WIDE_QUAL] =
		"a connection qualifier above 65535 was folded onto the port space",
	[DAPL_COMPAT_SHARED_EVD] =
		"an EVD of one IA was given to an object of another IA of the same provider",
};

bool dapl_compat_allow(enum dapl_compat c)
{
	if (dapl_strict())
		return false;
	if (!atomic_exchange(&warned[c], true))
		dapl_log("compatibility: %s (DAT_STRICT=1 refuses this; see libdat(7))",
			 compat_what[c]);
	return true;
}

uint16_t dapl_qual_port(DAT_CONN_QUAL qual)
{
	/* The fold OpenFabrics' cma provider used, so programs that relied
	 * on it meet at the same ports: 32001 ports from 33534 up. */
	if (qual <= 0xFFFF)
		return (uint16_t)qual;
	return (uint16_t)(qual % 32001u + 33534u);
}

/* ---- EVDs shared between IAs: the share lock and the open IAs --------- */

static pthread_mutex_t share_mutex = PTHREAD_MUTEX_INITIALIZER;
static struct dapl_ia *open_ias;

void dapl_share_lock(void)
{
	pthread_mutex_lock(&share_mutex);
}

void dapl_share_unlock(void)
{
	pthread_mutex_unlock(&share_mutex);
}

struct dapl_ia *dapl_share_first(void)
{
	return open_ias;
}

struct dapl_ia *dapl_share_next(struct dapl_ia *ia)
{
	return ia->share_next;
}

void dapl_share_add(struct dapl_ia *ia)
{
	ia->share_next = open_ias;
	open_ias = ia;
}

void dapl_share_remove(struct dapl_ia *ia)
{
	struct dapl_ia **pp;

	for (pp = &open_ias; *pp; pp = &(*pp)->share_next) {
		if (*pp == ia) {
			*pp = ia->share_next;
			break;
		}
	}
	ia->share_next = NULL;
}

bool dapl_share_is_open(struct dapl_ia *ia)
{
	struct dapl_ia *i;

	for (i = open_ias; i; i = i->share_next)
		if (i == ia)
			return true;
	return false;
}
