/* A network namespace of the calling process's own, with only loopback up:
 * tests that must not reach this host's network (or its default route)
 * run in one when they may create it. */
#ifndef TEST_COMMON_NETNS_H
#define TEST_COMMON_NETNS_H

/* 1: the process is in its own namespace with lo up (127.0.0.0/8 is all
 * that routes); 0: not permitted (not root), nothing changed; -1: the
 * namespace was made but lo could not be brought up (errno says why). */
int test_netns_with_loopback(void);

#endif
