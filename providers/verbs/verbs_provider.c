/* libdaplverbs.so.1: the uDAPL core over rdma-core (librdmacm + libibverbs). */
#include "config.h"

#include "core.h"
#include "verbs.h"

const struct udapl_transport_ops *const udapl_transport = &dapl_verbs_ops;
