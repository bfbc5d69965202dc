/* See netns.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include "netns.h"

int test_netns_with_loopback(void)
{
	struct ifreq ifr;
	int fd, ok, err;

	if (unshare(CLONE_NEWNET) != 0)
		return 0;
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	ok = ioctl(fd, SIOCGIFFLAGS, &ifr) == 0;
	if (ok) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		ok = ioctl(fd, SIOCSIFFLAGS, &ifr) == 0;
	}
	err = errno;
	close(fd);
	errno = err;
	return ok ? 1 : -1;
}
