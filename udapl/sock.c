/* TCP sockets of the socket-based transports (sock.h). */
#include "config.h"

#include <dirent.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "sock.h"

void dapl_sock_peer_timeout(int fd, unsigned ms)
{
	int one = 1, idle, intvl, cnt = 4;

	if (!ms)
		return;
	/* idle for half the bound, then 4 probes an eighth of it apart:
	 * TCP_USER_TIMEOUT ends the connection at the bound */
	idle = (int)(ms / 2000);
	intvl = (int)(ms / 8000);
	if (idle < 1)
		idle = 1;
	if (intvl < 1)
		intvl = 1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &ms, sizeof(ms));
	(void)setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &one, sizeof(one));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof(idle));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &intvl, sizeof(intvl));
	(void)setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &cnt, sizeof(cnt));
}

static bool same_addr(const struct sockaddr_storage *a,
		      const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return false;
	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *x = (const void *)a, *y = (const void *)b;

		return x->sin_port == y->sin_port &&
		       x->sin_addr.s_addr == y->sin_addr.s_addr;
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *x = (const void *)a, *y = (const void *)b;

		return x->sin6_port == y->sin6_port &&
		       !memcmp(&x->sin6_addr, &y->sin6_addr, sizeof(x->sin6_addr));
	}
	return false;
}

/* fd is a TCP socket from local to peer: the peer's name first, which
 * fails at once on anything but a connected socket. */
static bool is_it(int fd, const struct sockaddr_storage *local,
		  const struct sockaddr_storage *peer)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);
	int type;

	memset(&ss, 0, sizeof(ss));
	if (getpeername(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    !same_addr(&ss, peer))
		return false;
	len = sizeof(ss);
	memset(&ss, 0, sizeof(ss));
	if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0 ||
	    !same_addr(&ss, local))
		return false;
	len = sizeof(type);
	return getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) == 0 &&
	       type == SOCK_STREAM;
}

int dapl_sock_find(const struct sockaddr_storage *local,
		   const struct sockaddr_storage *peer, int *hint)
{
	struct dirent *d;
	DIR *dir;
	int fd = -1, i;

	if ((local->ss_family != AF_INET && local->ss_family != AF_INET6) ||
	    local->ss_family != peer->ss_family)
		return -1;
	for (i = 0; *hint >= 0 && i < 8; i++) {
		/* hint, hint+1, hint-1, hint+2, ... */
		int at = *hint + (i & 1 ? (i + 1) / 2 : -(i / 2));

		if (at >= 0 && is_it(at, local, peer))
			return *hint = at;
	}
	dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	while ((d = readdir(dir))) {
		char *end;
		long n = strtol(d->d_name, &end, 10);

		if (*end || end == d->d_name || n < 0 || n == dirfd(dir))
			continue;
		if (is_it((int)n, local, peer)) {
			fd = (int)n;
			break;
		}
	}
	closedir(dir);
	if (fd >= 0)
		*hint = fd;
	return fd;
}
