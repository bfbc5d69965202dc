/* The libfabric transport (providers/ofi, tcp) for the conformance suite
 * (test_transport.c): both ends over 127.0.0.1. */
#define _GNU_SOURCE
#include <check.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>

#include "test_transport.h"
#include "ofi.h"

static void ofi_check_attr(const struct dapl_tdev_attr *a)
{
	char name[96];

	snprintf(name, sizeof(name), "ofi tcp %s", fixture.addr);
	ck_assert_str_eq(a->name, name);
	ck_assert_msg(!strncmp(a->vendor, "libfabric 1.", 12), "%s", a->vendor);
	ck_assert_uint_eq(a->max_pdata_connect, 256);
	ck_assert_uint_eq(a->max_pdata_accept, 256);
	ck_assert_uint_eq(a->max_pdata_reject, 256);
	ck_assert_uint_eq(a->max_ird, 128);
	ck_assert_uint_eq(a->max_ord, 128);
	ck_assert_uint_eq(a->max_sge, 4);
	ck_assert_uint_gt(a->max_msg_size, 1u << 20);
}

/* An interface of this host without an IPv4 address, if there is one. */
static bool netdev_without_ipv4(char *name, size_t len)
{
	struct if_nameindex *ni = if_nameindex(), *i;
	struct ifaddrs *ifs, *a;
	bool found = false;

	if (!ni || getifaddrs(&ifs)) {
		if (ni)
			if_freenameindex(ni);
		return false;
	}
	for (i = ni; i->if_index && !found; i++) {
		bool v4 = false;

		for (a = ifs; a; a = a->ifa_next)
			if (!strcmp(a->ifa_name, i->if_name) && a->ifa_addr &&
			    a->ifa_addr->sa_family == AF_INET)
				v4 = true;
		if (!v4) {
			snprintf(name, len, "%s", i->if_name);
			found = true;
		}
	}
	freeifaddrs(ifs);
	if_freenameindex(ni);
	return found;
}

/* "<libfabric provider> <IPv4 address or netdev>" */
static void ofi_open_cases(void)
{
	char name[IF_NAMESIZE + 8], params[64];

	open_fails("nosuchprov 127.0.0.1", 0, "no provider \"nosuchprov\"", NULL);
	open_fails("tcp nosuchif0", -ENODEV, "neither an IPv4 address nor", NULL);
	/* a documentation address (TEST-NET-2), not this host's */
	open_fails("tcp 198.51.100.77", -EADDRNOTAVAIL,
		   "not an address of this host", NULL);
	open_fails("tcp", -EINVAL, "must be \"<libfabric provider>", NULL);
	open_fails("tcp 127.0.0.1 extra", -EINVAL, "must be", NULL);
	if (netdev_without_ipv4(name, sizeof(name))) {
		snprintf(params, sizeof(params), "tcp %s", name);
		open_fails(params, -ENODEV, "has no IPv4 address", NULL);
	}
}

struct transport_fixture fixture = {
	.ops = &dapl_ofi_ops,
	.name = "ofi",
	.params = "tcp 127.0.0.1",
	.addr = "127.0.0.1",
	.netdev_params = "tcp lo",
	/* fences held in software; windows are registrations; a bad RDMA
	 * target breaks the connection; no solicited-only wakeups */
	.caps = DAPL_TDEV_FENCE,
	.progress_fds = 1,
	.behaviour = TF_PROGRESS_SEES_DATA,
	.check_attr = ofi_check_attr,
	.open_cases = ofi_open_cases,
};
