/*
 * libdat - DAT 1.2 (uDAPL) public headers.
 *
 * udat_config.h: which DAT version and thread-safety level a consumer
 * built with these headers asks for when it calls dat_ia_open().
 */

#ifndef _UDAT_CONFIG_H_
#define _UDAT_CONFIG_H_

#ifdef __cplusplus
extern "C" {
#endif

#define DAT_VERSION_MAJOR 1
#define DAT_VERSION_MINOR 2

/*
 * Every DAT 1.2 reference build asks for a non-thread-safe provider, and
 * dat.conf entries are matched on this exactly ("nonthreadsafe").  A build
 * may predefine DAT_THREADSAFE to DAT_TRUE, but then only "threadsafe"
 * registry entries will match.
 */
#ifndef DAT_THREADSAFE
#define DAT_THREADSAFE DAT_FALSE
#endif

#ifdef __cplusplus
}
#endif

#endif /* _UDAT_CONFIG_H_ */
