/* What the test provider (libdattest.so) lets the registry tests observe.
 * The tests find these symbols with dlsym() once libdat has loaded it. */
#ifndef DATTEST_PROVIDER_H
#define DATTEST_PROVIDER_H

#include <dat/udat.h>
#include <dat/dat_registry.h>

/* The last provider call that got past its handle check: its DAT_PROVIDER
 * slot number (0 = device_name, 2 = ia_open_func ... 69 = srq_set_lw_func)
 * and the handle it was given.  Thread-local, so concurrent tests do not
 * see each other's calls. */
struct dattest_last_call {
	int slot;
	DAT_HANDLE handle;
};
typedef struct dattest_last_call *(*dattest_last_call_fn)(void);
#define DATTEST_LAST_CALL "dattest_last_call"

/* A connection request in the IA of any live object: DAT gives consumers no
 * way to make one without a peer, and the tests need a CR handle. */
typedef DAT_CR_HANDLE (*dattest_new_cr_fn)(DAT_HANDLE any_object);
#define DATTEST_NEW_CR "dattest_new_cr"

struct dattest_last_call *dattest_last_call(void);
DAT_CR_HANDLE dattest_new_cr(DAT_HANDLE any_object);

/* The two entry points every provider library exports. */
void dat_provider_init(const DAT_PROVIDER_INFO *info, const char *ia_params);
void dat_provider_fini(const DAT_PROVIDER_INFO *info);

/* ia_params words understood by dat_provider_init:
 *   ok           register and behave
 *   no-register  register nothing (libdat must try the next entry)
 *   open-fails   register; every ia_open fails with RESOURCE_DEVICE
 *   no-remove    dat_provider_fini leaves the registration in place
 *   no-announce  do not announce the object pool to libdat (another
 *                vendor's provider: libdat's fallback check applies) */

#endif
