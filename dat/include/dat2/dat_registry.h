/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * dat_registry.h: the interface between libdat and provider libraries.
 *
 * The registry dlopen()s a provider library named in dat.conf the first
 * time one of its IA names is opened and calls its dat_provider_init(),
 * which must register that IA name with dat_registry_add_provider() under
 * the same (name, version, thread-safety) key.  dat_provider_fini() is
 * called before the library is unloaded.  Providers include this
 * header, which brings the provider table (<dat2/udat_redirection.h>);
 * as with the 2.1.10 headers, <dat2/udat.h> does not.
 */

/* Everything is declared through <dat2/udat.h>; this makes the header
 * usable on its own too. */
#include <dat2/udat.h>

#ifndef _DAT_REGISTRY_H_
#define _DAT_REGISTRY_H_

#include <dat2/udat_redirection.h>

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

/* High availability (DAT 2.0): how two IAs relate. */
typedef enum dat_ha_relationship {
	DAT_HA_FALSE			= 0,	/* not related */
	DAT_HA_TRUE			= 1,	/* related */
	DAT_HA_UNKNOWN			= 2,	/* cannot tell */
	DAT_HA_CONFLICTING		= 3,	/* the two IAs disagree */
	DAT_HA_EXTENSION_BASE		= 4
} DAT_HA_RELATIONSHIP;

extern DAT_RETURN dat_registry_providers_related(
	IN	const DAT_NAME_PTR,		/* one IA name */
	IN	const DAT_NAME_PTR,		/* the other */
	OUT	DAT_HA_RELATIONSHIP *);

#ifdef __cplusplus
}
#endif

#endif /* _DAT_REGISTRY_H_ */
