/* The transport-conformance suite (test_transport.c) and the fixture that
 * describes the one transport a build of it tests (fixture_<name>.c).
 *
 * The suite sees a transport only through its ops table.  What really
 * differs between transports (their libraries and wires do) is declared
 * in the fixture, and the suite chooses its expectations by that, never
 * by the transport's name.  A new transport is a fixture and a build rule
 * (see providers/ofi/local.am). */
#ifndef TEST_UNIT_TEST_TRANSPORT_H
#define TEST_UNIT_TEST_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>

#include "transport.h"

/* Behaviour that differs between transports (fixture.behaviour). */
enum {
	/* Private data arrives padded with zeros to the most the message
	 * carries (rdma_cm on IB and RoCE). */
	TF_PDATA_PADDED = 1u << 0,
	/* An accept or reject refused for too much data ends the request as
	 * a broken handshake (CONN_ERROR), not a rejection without data. */
	TF_FAILED_ANSWER_BREAKS = 1u << 1,
	/* An unsignalled request keeps its slot until a later signalled one
	 * has been polled: its own completion is never seen (verbs). */
	TF_UNSIGNALLED_HELD = 1u << 2,
	/* Data makes the progress fds fire: the transport moves data in
	 * cm_get_event (libfabric tcp). */
	TF_PROGRESS_SEES_DATA = 1u << 3,
	/* After a disconnect the progress fds may still fire for library
	 * events the transport keeps to itself (rdma_cm's TIMEWAIT_EXIT). */
	TF_LATE_CM_WAKEUPS = 1u << 4,
	/* A Send or RDMA Write completes once the device handed it to the
	 * network (iWARP), not once the peer placed it: one the peer then
	 * refuses may already have completed with success. */
	TF_LOCAL_COMPLETION = 1u << 5,
	/* Connections leave from the device's own address: one to an
	 * address of the other family (IPv4 / IPv6) is UNREACHABLE
	 * (libfabric tcp binds its endpoints). */
	TF_ONE_FAMILY = 1u << 6,
};

/* One way of running the memory-window case. */
enum {
	WINDOW_EMULATED = 1u << 0,      /* the device must not report windows */
	WINDOW_HOLDS_EP = 1u << 1,      /* a bound window holds its ep: unbind
					 * before the connection ends */
};

struct window_mode {
	const char *env;                /* NAME=VALUE while the device opens */
	unsigned flags;                 /* WINDOW_* */
};

struct transport_fixture {
	const struct udapl_transport_ops *ops;
	const char *name;               /* ops->name */
	/* The device every case opens (ia_params), the IPv4 address its
	 * listeners are reached at and its connections come from, and
	 * ia_params naming it by its netdev ("": none).  setup may fill
	 * them in. */
	char params[160];
	char addr[64];
	char netdev_params[160];
	/* ia_params of a device on an IPv6 address of this host and that
	 * address ("": none), for the ipv6_connection case. */
	char params6[160];
	char addr6[64];
	/* dev_query's flags: exactly caps, apart from the DAPL_TDEV_* bits in
	 * caps_vary (those depend on the device or the environment). */
	uint32_t caps, caps_vary;
	int progress_fds;               /* how many progress_fds reports */
	unsigned behaviour;             /* TF_* */
	/* Another status than LOCAL_LENGTH a too short receive may complete
	 * with (rxe: LOCAL_EP); SUCCESS when there is none. */
	enum dapl_twc_status short_recv_also;
	/* NAME=VALUE while the unreachable-address case opens its device
	 * (a short address-resolution timeout), or NULL. */
	const char *unreachable_env;
	/* An address routed through a netdev without a device: connect
	 * reports UNREACHABLE as an event.  "": none. */
	char unreachable_peer[64];
	/* The memory-window case runs once per mode (none: once, default). */
	const struct window_mode *windows;
	int nwindows;

	/* Finds the device: 0, or the exit status (77: none here, skip). */
	int (*setup)(struct transport_fixture *f);
	/* The transport's own limits and names in a dev_query. */
	void (*check_attr)(const struct dapl_tdev_attr *a);
	/* dev_open's refusals and knobs for this transport's ia_params. */
	void (*open_cases)(void);
	/* Bytes an ep sends inline, the buffer never read by the device
	 * (NULL: the transport does not say). */
	uint32_t (*ep_max_inline)(struct dapl_tep *ep);
};

/* The transport under test: fixture_<name>.c. */
extern struct transport_fixture fixture;

/* dev_open(params) fails with err (0: any error) and a why containing
 * needle, or needle2 when not NULL. */
void open_fails(const char *params, int err, const char *needle,
		const char *needle2);

#endif
