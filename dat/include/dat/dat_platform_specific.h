/*
 * libdat - DAT 1.2 (uDAPL) public headers.
 *
 * dat_platform_specific.h: the basic scalar types every other DAT header
 * is built from.  They follow the Linux LP64/ILP32 choices of the DAT 1.2
 * reference headers (DAT_COUNT is an int, addresses are struct sockaddr).
 */

#ifndef _DAT_PLATFORM_SPECIFIC_H_
#define _DAT_PLATFORM_SPECIFIC_H_

#include <stdint.h>
#include <sys/socket.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Buffer alignment (bytes) that gives the best transfer performance. */
#ifndef DAT_OPTIMAL_ALIGNMENT
#define DAT_OPTIMAL_ALIGNMENT 256
#endif

typedef uint32_t		DAT_UINT32;	/* host order, 32 bits */
typedef uint64_t		DAT_UINT64;	/* host order, 64 bits */
typedef unsigned long long	DAT_UVERYLONG;	/* widest native unsigned */

typedef void			*DAT_PVOID;
typedef int			DAT_COUNT;
typedef DAT_UINT64		DAT_PADDR;

/* IA addresses are ordinary socket addresses (IPv4 or IPv6). */
typedef struct sockaddr		DAT_SOCK_ADDR;
typedef struct sockaddr_in6	DAT_SOCK_ADDR6;

#define DAT_AF_INET		AF_INET
#define DAT_AF_INET6		AF_INET6

/* 64-bit constant helper, normally provided by <stdint.h>. */
#ifndef UINT64_C
#define UINT64_C(c)		c ## ULL
#endif

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
