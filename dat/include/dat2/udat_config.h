/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * udat_config.h: which DAT version and thread-safety level a consumer
 * built with these headers asks for when it calls dat_ia_open(), and
 * whether the DAT 2.0 extension interface (dat_extension_op, the
 * *_EXTENSION_BASE values) is visible.
 */

#ifndef _UDAT_CONFIG_H_
#define _UDAT_CONFIG_H_

#define DAT_VERSION_MAJOR 2
#define DAT_VERSION_MINOR 0

/*
 * Like the 2.1.10 headers, a consumer always asks for a non-thread-safe
 * provider: the value is fixed here, not a default a build may override
 * (dat.conf entries are matched on it: "nonthreadsafe").
 */
#ifdef DAT_THREADSAFE
#undef DAT_THREADSAFE
#endif
#define DAT_THREADSAFE DAT_FALSE

/* Extensions are on unless the build defines DAT_EXTENSIONS itself.  (As
 * in the 2.1.10 headers, what counts is whether it is defined.) */
#ifndef DAT_EXTENSIONS
#define DAT_EXTENSIONS 1
#endif

#endif /* _UDAT_CONFIG_H_ */
