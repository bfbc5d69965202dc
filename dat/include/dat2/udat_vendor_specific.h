/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * udat_vendor_specific.h: place for user-level (uDAPL) vendor extensions.
 * libdat defines none; the header exists because DAT 2.0 code may include
 * it by name.
 */

#ifndef _UDAT_VENDOR_SPECIFIC_H_
#define _UDAT_VENDOR_SPECIFIC_H_

#include <dat2/dat_vendor_specific.h>

#ifdef __cplusplus
extern "C" {
#endif

/* No vendor specific definitions. */

#ifdef __cplusplus
}
#endif

#endif /* _UDAT_VENDOR_SPECIFIC_H_ */
