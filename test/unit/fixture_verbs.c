/* The verbs transport (providers/verbs) for the conformance suite
 * (test_transport.c): both ends at the address of an RDMA device of this
 * host.
 *
 * Without an RDMA device the program exits 77 (skip).  In datvm's guest
 * (test/vm) check-verbs gives it VERBS_TEST_IP and VERBS_TEST_NETDEV;
 * elsewhere VERBS_TEST_PARAMS gives the ia_params ("<netdev|address> 0"),
 * or the first IPv4 address of this host with a device is taken.  The
 * optional VERBS_TEST_NOIP_NETDEV (a netdev without any address) and
 * VERBS_TEST_NORDMA_NETDEV (one with an address but no RDMA device) make
 * the dev_open failures testable, and VERBS_TEST_NORDMA_PEER (an address
 * routed through the latter) an UNREACHABLE event; scripts/check-verbs.sh
 * creates them. */
#define _GNU_SOURCE
#include <check.h>
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_transport.h"
#include "verbs.h"

/* rdma_cm pads private data on IB and RoCE, not on iWARP (which carries
 * up to 251 bytes: see VERBS_IW_PDATA) */
#define IWARP_PDATA 251

static void verbs_check_attr(const struct dapl_tdev_attr *a)
{
	ck_assert_msg(strstr(a->vendor, "vendor"), "%s", a->vendor);
	if (a->max_pdata_connect != IWARP_PDATA) {      /* IB and RoCE */
		ck_assert_uint_eq(a->max_pdata_connect, 56);
		ck_assert_uint_eq(a->max_pdata_accept, 196);
		ck_assert_uint_eq(a->max_pdata_reject, 148);
	}
	ck_assert_uint_le(a->max_ird, 255);
	ck_assert_uint_le(a->max_sge, VERBS_MAX_SGE);
	/* the IB extensions: Write with immediate and atomics on RoCE
	 * (rxe has both), neither on iWARP (siw) */
	if (a->max_pdata_connect == IWARP_PDATA)
		ck_assert_uint_eq(a->flags & (DAPL_TDEV_WRITE_IMM |
					      DAPL_TDEV_ATOMICS), 0);
	else if (!strncmp(a->name, "rxe", 3))
		ck_assert_uint_eq(a->flags & (DAPL_TDEV_WRITE_IMM |
					      DAPL_TDEV_ATOMICS),
				  DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS);
	else
		ck_assert(a->flags & DAPL_TDEV_WRITE_IMM);
}

/* "<netdev|address> <port>" */
static void verbs_open_cases(void)
{
	const char *noip = getenv("VERBS_TEST_NOIP_NETDEV");
	const char *nordma = getenv("VERBS_TEST_NORDMA_NETDEV");
	struct dapl_tdev_attr attr;
	struct dapl_tdev *dev;
	struct dapl_tlisten *l;
	uint16_t port, asked;
	int err;
	char why[256] = "", params[80];

	/* windows emulated on request: the device says so */
	setenv("DAPL_VERBS_MW", "0", 1);
	ck_assert_int_eq(dapl_verbs_ops.dev_open(fixture.params, &dev, why,
						 sizeof(why)), 0);
	ck_assert_int_eq(dapl_verbs_ops.dev_query(dev, &attr), 0);
	ck_assert_uint_eq(attr.flags & DAPL_TDEV_MEMORY_WINDOWS, 0);
	dapl_verbs_ops.dev_close(dev);
	unsetenv("DAPL_VERBS_MW");

	/* An open IA holds no port a consumer may listen on: the port the
	 * anchor took while opening is free for a service point. */
	ck_assert_int_eq(dapl_verbs_ops.dev_open(fixture.params, &dev, why,
						 sizeof(why)), 0);
	port = dev->anchor_port;
	ck_assert_uint_ne(port, 0);
	asked = port;
	err = dapl_verbs_ops.listen(dev, &port, &l);
	ck_assert_msg(err == 0, "listen on the anchor's port %u: %s", asked,
		      strerror(-err));
	ck_assert_uint_eq(port, asked);
	dapl_verbs_ops.unlisten(l);
	dapl_verbs_ops.dev_close(dev);

	open_fails("nosuchif0 0", -ENODEV, "is neither a netdev", NULL);
	/* a documentation address (TEST-NET-2), not this host's */
	open_fails("198.51.100.77 0", 0, "not an address of this host",
		   "no RDMA device");
	open_fails("127.0.0.1 0", -ENODEV, "no RDMA device", NULL);
	open_fails("lo 0", -ENODEV, "no RDMA device", NULL);
	open_fails("rxenet0", -EINVAL, "must be", NULL);
	open_fails("10.77.0.1 0 extra", -EINVAL, "must be", NULL);
	open_fails("10.77.0.1 x", -EINVAL, "must be", NULL);
	if (noip && *noip) {
		snprintf(params, sizeof(params), "%s 0", noip);
		open_fails(params, -ENODEV, "has no IP address", NULL);
	}
	if (nordma && *nordma) {
		snprintf(params, sizeof(params), "%s 0", nordma);
		open_fails(params, -ENODEV, "has no RDMA device behind it", NULL);
	}
}

static uint32_t verbs_ep_max_inline(struct dapl_tep *ep)
{
	return ep->max_inline;
}

/* The netdev that holds addr, if any. */
static void netdev_of(const struct sockaddr_in *addr, char *name, size_t len)
{
	struct ifaddrs *ifs, *a;

	name[0] = '\0';
	if (getifaddrs(&ifs))
		return;
	for (a = ifs; a; a = a->ifa_next)
		if (a->ifa_addr && a->ifa_addr->sa_family == AF_INET &&
		    ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr ==
		    addr->sin_addr.s_addr) {
			snprintf(name, len, "%s", a->ifa_name);
			break;
		}
	freeifaddrs(ifs);
}

/* Takes params when they open a device with an IPv4 address. */
static bool try_params(struct transport_fixture *f, const char *params)
{
	struct dapl_tdev_attr attr;
	struct sockaddr_in *sin = (struct sockaddr_in *)&attr.addr;
	struct dapl_tdev *dev;
	char why[256];

	if (dapl_verbs_ops.dev_open(params, &dev, why, sizeof(why))) {
		fprintf(stderr, "test_transport_verbs: %s: %s\n", params, why);
		return false;
	}
	dapl_verbs_ops.dev_query(dev, &attr);
	dapl_verbs_ops.dev_close(dev);
	if (attr.addr.ss_family != AF_INET)
		return false;
	snprintf(f->params, sizeof(f->params), "%s", params);
	inet_ntop(AF_INET, &sin->sin_addr, f->addr, sizeof(f->addr));
	if (attr.max_pdata_connect != IWARP_PDATA)
		f->behaviour |= TF_PDATA_PADDED;
	else
		f->behaviour |= TF_LOCAL_COMPLETION;
	/* rxe says "local QP operation error" where the IB spec (and
	 * hardware) say "local length error" */
	if (!strncmp(attr.name, "rxe", 3))
		f->short_recv_also = DAPL_TWC_LOCAL_EP;
	return true;
}

/* The ia_params of an RDMA device: given, or the first IPv4 address of
 * this host that has one. */
static bool find_device(struct transport_fixture *f)
{
	const char *p = getenv("VERBS_TEST_PARAMS");
	struct ibv_device **list;
	struct ifaddrs *ifs, *a;
	char buf[96];
	int n = 0;
	bool ok = false;

	list = ibv_get_device_list(&n);
	if (list)
		ibv_free_device_list(list);
	if (n <= 0) {
		fprintf(stderr, "test_transport_verbs: no RDMA device on this "
			"host: skipped\n");
		return false;
	}
	if (p && *p)
		return try_params(f, p);
	p = getenv("VERBS_TEST_IP");
	if (p && *p) {
		snprintf(buf, sizeof(buf), "%s 0", p);
		return try_params(f, buf);
	}
	if (getifaddrs(&ifs))
		return false;
	for (a = ifs; a && !ok; a = a->ifa_next) {
		char ip[INET_ADDRSTRLEN];

		if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET ||
		    !strcmp(a->ifa_name, "lo"))
			continue;
		inet_ntop(AF_INET, &((struct sockaddr_in *)a->ifa_addr)->sin_addr,
			  ip, sizeof(ip));
		snprintf(buf, sizeof(buf), "%s 0", ip);
		ok = try_params(f, buf);
	}
	freeifaddrs(ifs);
	if (!ok)
		fprintf(stderr, "test_transport_verbs: no IPv4 address of this "
			"host has an RDMA device: skipped\n");
	return ok;
}

static int verbs_setup(struct transport_fixture *f)
{
	const char *netdev = getenv("VERBS_TEST_NETDEV");
	const char *peer = getenv("VERBS_TEST_NORDMA_PEER");
	char name[IF_NAMESIZE + 1];
	struct sockaddr_in sin = { .sin_family = AF_INET };

	if (!find_device(f))
		return 77;
	if (netdev && *netdev) {
		snprintf(name, sizeof(name), "%s", netdev);
	} else {
		inet_pton(AF_INET, f->addr, &sin.sin_addr);
		netdev_of(&sin, name, sizeof(name));
	}
	if (name[0])
		snprintf(f->netdev_params, sizeof(f->netdev_params), "%s 0", name);
	if (peer && *peer)
		snprintf(f->unreachable_peer, sizeof(f->unreachable_peer), "%s",
			 peer);
	return 0;
}

/* Windows of the device's type, type 2, and emulated (DAPL_VERBS_MW). */
static const struct window_mode windows[] = {
	{ NULL, 0 },
	{ "DAPL_VERBS_MW=2", WINDOW_HOLDS_EP },
	{ "DAPL_VERBS_MW=0", WINDOW_EMULATED },
};

struct transport_fixture fixture = {
	.ops = &dapl_verbs_ops,
	.name = "verbs",
	.caps = DAPL_TDEV_REMOTE_ACCESS_ERRORS | DAPL_TDEV_SOLICITED_EVENTS |
		DAPL_TDEV_FENCE,
	/* windows: of the device, or emulated (DAPL_VERBS_MW, siw) */
	.caps_vary = DAPL_TDEV_MEMORY_WINDOWS |
		     /* not on iWARP (siw) */
		     DAPL_TDEV_REMOTE_ACCESS_ERRORS |
		     /* of the device: verbs_check_attr says which */
		     DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS,
	/* rdma_cm's channel, the async events, faults and SRQ limits, the
	 * sweep of unwatched CQs, and the queue of synthesised events */
	.progress_fds = 5,
	.behaviour = TF_FAILED_ANSWER_BREAKS | TF_UNSIGNALLED_HELD |
		     TF_LATE_CM_WAKEUPS,
	.unreachable_env = "DAPL_CM_ARP_TIMEOUT_MS=500",
	.windows = windows,
	.nwindows = sizeof(windows) / sizeof(windows[0]),
	.setup = verbs_setup,
	.check_attr = verbs_check_attr,
	.open_cases = verbs_open_cases,
	.ep_max_inline = verbs_ep_max_inline,
};
