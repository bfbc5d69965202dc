/* The ofi transport's ia_params (udapl/ia_params.h), on its own so that
 * test/unit/test_ia_params.c reads the form the provider uses (and needs
 * no libfabric header). */
#include "config.h"

#include "ia_params.h"

/* "<libfabric provider> <IPv4 address | IPv6 address | netdev>"; a netdev
 * gives its IPv4 address.  tcp's fi_getinfo takes any address, and a
 * listener would fail later: the address is checked to be this host's. */
const struct dapl_ia_form dapl_ofi_ia_form = {
	.word = "libfabric provider",
	.word_max = DAPL_OFI_PROV_MAX,
	.port = DAPL_IA_PORT_NONE,
	.flags = DAPL_IA_NETDEV_IPV4 | DAPL_IA_LOCAL,
	.usage = "\"<libfabric provider> <IPv4 or IPv6 address or "
		 "interface>\", e.g. \"tcp 127.0.0.1\", \"tcp ::1\" or "
		 "\"tcp eth0\"",
};
