/* libdapltcp.so.1: the uDAPL core over the native TCP (iWARP) transport. */
#include "config.h"

#include "core.h"
#include "tcp.h"

const struct udapl_transport_ops *const udapl_transport = &dapl_tcp_ops;
