/*
 * libdat - DAT 1.2 (uDAPL) public headers.
 *
 * udat_vendor_specific.h: place for user-level (uDAPL) vendor extensions.
 * libdat defines none; the header exists because DAT 1.2 code may include
 * it by name.
 */

#ifndef _UDAT_VENDOR_SPECIFIC_H_
#define _UDAT_VENDOR_SPECIFIC_H_

#include <dat/dat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/* No vendor specific definitions. */

#ifdef __cplusplus
}
#endif

#endif /* _UDAT_VENDOR_SPECIFIC_H_ */
