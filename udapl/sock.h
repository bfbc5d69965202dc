/* sock: what the socket-based transports do to their TCP sockets.
 *
 * A peer that vanishes (host down, link cut, a drop rule) is noticed
 * within about a bound the user sets, whether data is in flight
 * (TCP_USER_TIMEOUT ends the retransmissions) or the connection is idle
 * (keepalive probes, ended by the same timeout), instead of TCP's 15
 * minutes or never.  The ofi transport's sockets are libfabric's, which
 * sets none of this: dapl_sock_find finds the one a connection uses by
 * its two addresses, among the process's descriptors.
 *
 * A transport includes this header; the code is in the core
 * (udapl/sock.c), which every provider links.  No DAT header here:
 * transports include none. */
#ifndef UDAPL_SOCK_H
#define UDAPL_SOCK_H

#include <sys/socket.h>

/* Bounds how long fd's peer may stay silent to about ms (0: leave it to
 * the kernel).  Failures are ignored: the kernel's bounds stay. */
void dapl_sock_peer_timeout(int fd, unsigned ms);

/* The descriptor of this process's TCP socket from local to peer, or -1.
 * *hint (a previous answer, or -1) and the descriptors next to it are
 * tried first: sockets opened one after another get numbers close
 * together; it is updated with the answer. */
int dapl_sock_find(const struct sockaddr_storage *local,
		   const struct sockaddr_storage *peer, int *hint);

#endif
