/* The libfabric transport (providers/ofi, tcp) for the conformance suite
 * (test_transport.c): both ends over 127.0.0.1 (ipv6_connection: ::1). */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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

/* ::1 is an address of this host (IPv6 can be disabled). */
static bool have_ipv6_loopback(void)
{
	struct sockaddr_in6 s6 = { .sin6_family = AF_INET6,
				   .sin6_addr = IN6ADDR_LOOPBACK_INIT };
	int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	bool ok;

	if (fd < 0)
		return false;
	ok = bind(fd, (struct sockaddr *)&s6, sizeof(s6)) == 0;
	close(fd);
	return ok;
}

static int ofi_setup(struct transport_fixture *f)
{
	if (!have_ipv6_loopback()) {
		fprintf(stderr, "test_transport_ofi: ::1 is not an address of "
			"this host: the IPv6 cases are left out\n");
		f->params6[0] = f->addr6[0] = '\0';
	}
	return 0;
}

/* "tcp ::1" opens on ::1 and says so. */
static void ofi_open_ipv6(void)
{
	const struct sockaddr_in6 *s6;
	struct dapl_tdev_attr attr;
	struct dapl_tdev *dev = NULL;
	struct in6_addr want;
	char why[256] = "";
	int ret;

	ret = dapl_ofi_ops.dev_open("tcp ::1", &dev, why, sizeof(why));
	ck_assert_msg(ret == 0, "dev_open(tcp ::1): %d %s", ret, why);
	ck_assert_int_eq(dapl_ofi_ops.dev_query(dev, &attr), 0);
	ck_assert_str_eq(attr.name, "ofi tcp ::1");
	s6 = (const struct sockaddr_in6 *)&attr.addr;
	ck_assert_int_eq(s6->sin6_family, AF_INET6);
	ck_assert_int_eq(inet_pton(AF_INET6, "::1", &want), 1);
	ck_assert_int_eq(memcmp(&s6->sin6_addr, &want, sizeof(want)), 0);
	ck_assert_uint_eq(s6->sin6_port, 0);
	dapl_ofi_ops.dev_close(dev);
}

/* "<libfabric provider> <IPv4 or IPv6 address or netdev>" */
static void ofi_open_cases(void)
{
	char name[IF_NAMESIZE + 8], params[64];

	open_fails("nosuchprov 127.0.0.1", 0, "no provider \"nosuchprov\"", NULL);
	open_fails("tcp nosuchif0", -ENODEV,
		   "neither an IPv4 or IPv6 address nor", NULL);
	/* a documentation address (TEST-NET-2), not this host's */
	open_fails("tcp 198.51.100.77", -EADDRNOTAVAIL,
		   "not an address of this host", NULL);
	/* IPv6: ::1 opens; a documentation address (2001:db8::/32) does not,
	 * nor does text with a colon that is no address */
	if (fixture.params6[0])
		ofi_open_ipv6();
	open_fails("tcp 2001:db8::77", -EADDRNOTAVAIL,
		   "2001:db8::77 is not an address of this host", NULL);
	open_fails("tcp 2001:db8::77::1", -ENODEV,
		   "neither an IPv4 or IPv6 address nor", NULL);
	open_fails("tcp fe80::1", -EINVAL, "name its interface too", NULL);
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
	.params6 = "tcp ::1",
	.addr6 = "::1",
	/* fences held in software; windows are registrations; a bad RDMA
	 * target breaks the connection; no solicited-only wakeups */
	.caps = DAPL_TDEV_FENCE,
	.progress_fds = 1,
	.behaviour = TF_PROGRESS_SEES_DATA | TF_ONE_FAMILY,
	.setup = ofi_setup,
	.check_attr = ofi_check_attr,
	.open_cases = ofi_open_cases,
};
