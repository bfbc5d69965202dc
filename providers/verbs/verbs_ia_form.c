/* The verbs transport's ia_params (udapl/ia_params.h), on its own so that
 * test/unit/test_ia_params.c reads the form the provider uses. */
#include "config.h"

#include "ia_params.h"

/* "<netdev | IPv4 | IPv6 | host name> <port>", as OpenFabrics' cma
 * provider took it; the port field is accepted and not used (the device
 * port is the one the address lives on).  rdma_bind_addr tells whether
 * the address is this host's, and which device is behind it. */
const struct dapl_ia_form dapl_verbs_ia_form = {
	.port = DAPL_IA_PORT_REQUIRED,
	.port_max = 255,
	.flags = DAPL_IA_HOST_NAMES,
	.usage = "\"<netdev, IP address or host name> <port>\", "
		 "e.g. \"ib0 0\" or \"10.0.0.1 0\"",
	.netdev_hint = " (the RDMA CM finds devices by address)",
};
