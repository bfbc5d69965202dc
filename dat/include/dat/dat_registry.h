/*
 * libdat - DAT 1.2 (uDAPL) public headers.
 *
 * dat_registry.h: the interface between libdat and provider libraries.
 *
 * The registry dlopen()s a provider library named in dat.conf the first
 * time one of its IA names is opened and calls its dat_provider_init(),
 * which must register that IA name with dat_registry_add_provider() under
 * the same (name, version, thread-safety) key.  dat_provider_fini() is
 * called before the library is unloaded.  <dat/udat.h> includes this
 * header; consumers have no use for it.
 */

/* Everything is declared through <dat/udat.h>; this makes the header
 * usable on its own too. */
#include <dat/udat.h>

#ifndef _DAT_REGISTRY_H_
#define _DAT_REGISTRY_H_

#include <dat/udat_redirection.h>

#ifdef __cplusplus
extern "C" {
#endif

extern DAT_RETURN dat_registry_add_provider(
	IN	const DAT_PROVIDER *,
	IN	const DAT_PROVIDER_INFO *);

extern DAT_RETURN dat_registry_remove_provider(
	IN	const DAT_PROVIDER *,
	IN	const DAT_PROVIDER_INFO *);

/* Entry points a dynamically loaded provider exports. */
#define DAT_PROVIDER_INIT_FUNC_NAME	dat_provider_init
#define DAT_PROVIDER_FINI_FUNC_NAME	dat_provider_fini

#define DAT_PROVIDER_INIT_FUNC_STR	"dat_provider_init"
#define DAT_PROVIDER_FINI_FUNC_STR	"dat_provider_fini"

typedef void (*DAT_PROVIDER_INIT_FUNC)(
	IN	const DAT_PROVIDER_INFO *,
	IN	const char *);			/* dat.conf ia_params */

typedef void (*DAT_PROVIDER_FINI_FUNC)(
	IN	const DAT_PROVIDER_INFO *);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REGISTRY_H_ */
