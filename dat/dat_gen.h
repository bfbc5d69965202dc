/* The one switch between the two DAT generations built from these sources:
 * DAT_GEN=2 (set in the CPPFLAGS of libdat2.so.2, udapl/libudapl2.la and
 * the u2.0 providers) compiles a file against the DAT 2.0 headers
 * (<dat2/...>), anything else against DAT 1.2's (<dat/...>).  Code then
 * uses "#if DAT_GEN == 2" only where the two ABIs differ. */
#ifndef DAT_GEN_H
#define DAT_GEN_H

#ifndef DAT_GEN
#define DAT_GEN 1
#endif

#if DAT_GEN == 2
#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#if DAT_VERSION_MAJOR != 2
#error "DAT_GEN=2 but <dat2/udat.h> is not DAT 2.0"
#endif
/* The 2.0 headers leave building a status to the implementation; the
 * same definition as DAT 1.2's <dat/dat_error.h>. */
#ifndef DAT_ERROR
#define DAT_ERROR(Type, SubType) \
	((DAT_RETURN)(DAT_CLASS_ERROR | (Type) | (SubType)))
#endif
#else
#include <dat/udat.h>
#include <dat/dat_registry.h>
#if DAT_VERSION_MAJOR != 1
#error "DAT_GEN=1 but <dat/udat.h> is not DAT 1.2"
#endif
#endif

#endif
