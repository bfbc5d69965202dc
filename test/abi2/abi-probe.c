/*
 * abi-probe.c - print the DAT 2.0 ABI that the <dat2/...> headers found first on
 * the include path define: one line per item of abi-items.h,
 *
 *	size T <bytes>
 *	member T.m <offset> <bytes>
 *	scalar T <bytes> signed|unsigned
 *	value N <value> <bytes>
 *	pointer N <value>
 *	string N "<text>"
 *
 * Compiled once against OpenFabrics dapl 2.1.10's headers (extracted from
 * Debian's libdapl-dev) and once against ours, the two outputs must be
 * identical; the first is what dat2-2.1.10.abi holds.  See check-abi2.sh.
 */

#include <stddef.h>
#include <stdio.h>
#include <netinet/in.h>		/* 2.1.10's headers need sockaddr_in6 */
#include <dat2/udat.h>
#include <dat2/dat_registry.h>
#include <dat2/dat_ib_extensions.h>

#define ABI_SIZE(T) \
	printf("size %s %lu\n", #T, (unsigned long)sizeof(T));
#define ABI_MEMBER(T, m) \
	printf("member %s.%s %lu %lu\n", #T, #m, \
	       (unsigned long)offsetof(T, m), \
	       (unsigned long)sizeof(((T *)0)->m));
#define ABI_SCALAR(T) \
	printf("scalar %s %lu %s\n", #T, (unsigned long)sizeof(T), \
	       (T)-1 < (T)1 ? "signed" : "unsigned");
#define ABI_VALUE(N) \
	printf("value %s %lld %lu\n", #N, (long long)(N), \
	       (unsigned long)sizeof(N));
#define ABI_POINTER(N) \
	printf("pointer %s %lu\n", #N, (unsigned long)(N));
#define ABI_STRING(N) \
	printf("string %s \"%s\"\n", #N, N);

int main(void)
{
#include "abi-items.h"
	return fflush(stdout) == 0 ? 0 : 1;
}
