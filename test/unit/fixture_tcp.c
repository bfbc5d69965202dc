/* The native TCP transport (providers/tcp) for the conformance suite
 * (test_transport.c): both ends over 127.0.0.1.
 *
 * The suite runs in a network namespace of its own with only loopback
 * (when it may make one: root), so that an address of no interface here
 * is unreachable rather than answered by whatever the host's default
 * route leads to (a sandbox's proxy accepts any TCP connection, which is
 * a peer that is not iWARP, not an unreachable one). */
#define _GNU_SOURCE
#include "config.h"

#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "test_transport.h"
#include "tcp.h"
#include "../common/netns.h"

static int tcp_setup(struct transport_fixture *f)
{
	int r;

	(void)f;
	/* placed by make check-net, in the namespace it made */
	if (getenv("TRANSPORT_TEST_ADDR"))
		return 0;
	r = test_netns_with_loopback();
	if (r == 0)
		fprintf(stderr, "test_transport_tcp: no network namespace of "
			"its own (not root?): addresses are this host's\n");
	return r < 0 ? 1 : 0;
}

struct transport_fixture fixture = {
	.ops = &dapl_tcp_ops,
	.name = "tcp",
	.params = "127.0.0.1 0",
	.addr = "127.0.0.1",
	.netdev_params = "lo 0",
	.caps = DAPL_TDEV_REMOTE_ACCESS_ERRORS | DAPL_TDEV_FENCE |
		DAPL_TDEV_WRITE_IMM | DAPL_TDEV_ATOMICS,
	.progress_fds = 1,
	.behaviour = TF_PROGRESS_SEES_DATA,
	.setup = tcp_setup,
};
