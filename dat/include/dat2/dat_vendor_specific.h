/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * dat_vendor_specific.h: place for vendor extensions shared by uDAPL and
 * kDAPL.  libdat defines none; the header exists because DAT 2.0 code may
 * include it by name.
 */

#ifndef _DAT_VENDOR_SPECIFIC_H_
#define _DAT_VENDOR_SPECIFIC_H_

#ifdef __cplusplus
extern "C" {
#endif

/* No vendor specific definitions. */

#ifdef __cplusplus
}
#endif

#endif /* _DAT_VENDOR_SPECIFIC_H_ */
