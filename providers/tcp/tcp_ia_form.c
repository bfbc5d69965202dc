/* The native tcp transport's ia_params (udapl/ia_params.h), on its own so
 * that test/unit/test_ia_params.c reads the form the provider uses. */
#include "config.h"

#include "ia_params.h"

/* "<netdev | IPv4 | IPv6 | host name> [<port>]", as the verbs provider
 * takes it; the port is accepted for the same syntax and not used (a
 * PSP's connection qualifier is the TCP port). */
const struct dapl_ia_form dapl_tcp_ia_form = {
	.port = DAPL_IA_PORT_OPTIONAL,
	.port_max = 65535,
	.flags = DAPL_IA_HOST_NAMES | DAPL_IA_LOCAL,
	.usage = "\"<netdev, IP address or host name> [<port>]\", "
		 "e.g. \"127.0.0.1 0\" or \"eth0 0\"",
};
