/*
 * libdat - DAT 2.0 (uDAPL) public headers, <dat2/...>.
 *
 * dat_platform_specific.h: the scalar types every other DAT 2.0 header is
 * built from, with the Linux choices of the DAT 2.0 headers OpenFabrics
 * dapl 2.1.10 installs (Debian's libdapl-dev): DAT_COUNT is an int,
 * addresses are socket addresses, and a communicator is a socket triple.
 */

#ifndef _DAT_PLATFORM_SPECIFIC_H_
#define _DAT_PLATFORM_SPECIFIC_H_

/*
 * Programs built against the 2.1.10 headers get <sys/types.h>,
 * <stddef.h>, <stdio.h> and <sys/socket.h> from here; so do ours.
 * <netinet/in.h> makes DAT_SOCK_ADDR6 a complete type, which
 * <dat2/dat_ib_extensions.h> needs.
 */
#include <sys/types.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Buffer alignment (bytes) that gives the best transfer performance. */
#ifndef DAT_OPTIMAL_ALIGNMENT
#define DAT_OPTIMAL_ALIGNMENT 256
#endif

typedef u_int32_t		DAT_UINT32;	/* host order, 32 bits */
typedef u_int64_t		DAT_UINT64;	/* host order, 64 bits */
typedef unsigned long long	DAT_UVERYLONG;	/* widest native unsigned */

typedef void			*DAT_PVOID;
typedef int			DAT_COUNT;
typedef DAT_UINT64		DAT_PADDR;

/* 64-bit constant helper, normally provided by <stdint.h>. */
#ifndef UINT64_C
#define UINT64_C(c)		c ## ULL
#endif

/* An IA handle carried in an unsigned long, and back. */
#define DAT_IA_HANDLE_TO_UL(a)	(unsigned long)(a)
#define DAT_UL_TO_IA_HANDLE(a)	(DAT_IA_HANDLE)(a)

/* A communicator: the arguments of socket(2).  DAT_EP_PARAM carries one
 * and dat_csp_create() takes one. */
typedef struct dat_comm {
	int			domain;
	int			type;
	int			protocol;
} DAT_COMM;

typedef int			DAT_FD;		/* a file descriptor */

/* IA addresses are ordinary socket addresses (IPv4 or IPv6). */
typedef struct sockaddr		DAT_SOCK_ADDR;
typedef struct sockaddr_in6	DAT_SOCK_ADDR6;

#define DAT_AF_INET		AF_INET
#define DAT_AF_INET6		AF_INET6

/* Calling convention and linkage markers (empty on Linux). */
#define DAT_API
#define DAT_EXPORT		extern

/* Parameter direction markers used in the prototypes; they expand to
 * nothing. */
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef INOUT
#define INOUT
#endif

#ifdef __cplusplus
}
#endif

#endif /* _DAT_PLATFORM_SPECIFIC_H_ */
