/* libdaplofi.so.1: the uDAPL core over the libfabric transport. */
#include "config.h"

#include "core.h"
#include "ofi.h"

const struct udapl_transport_ops *const udapl_transport = &dapl_ofi_ops;
