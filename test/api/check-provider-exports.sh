#!/bin/sh
# Each provider library (libdaplofi.so.1, and libdaplverbs.so.1 when it is
# built: CHECK_VERBS_PROVIDER=1) exports exactly dat_provider_init and
# dat_provider_fini, has its SONAME and needs libdat.so.1 (so a consumer
# that dlopens libdat privately can still load it); the u2.0 ones
# (libdapl2*.so.2) the same with libdat2.so.2.
set -u
fail=0

check() {
	lib=$1 soname_want=$2 libdat=${3:-libdat.so.1}
	[ -f "$lib" ] || { echo "FAIL: $lib not built"; fail=1; return; }
	syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtDdBbRrWwVv]$/ && $3 !~ /^_/ { print $3 }' | sed 's/@.*//' | sort -u | tr '\n' ' ')
	ok=1
	if [ "$syms" != "dat_provider_fini dat_provider_init " ]; then
		echo "FAIL: $lib exported symbols: $syms"; ok=0
	fi
	soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
	[ "$soname" = "$soname_want" ] || { echo "FAIL: $lib SONAME '$soname'"; ok=0; }
	if ! readelf -d "$lib" | grep -q "NEEDED.*\[$libdat\]"; then
		echo "FAIL: $soname_want does not need $libdat"; ok=0
	fi
	if [ $ok -eq 1 ]; then
		echo "PASS: $lib exports only dat_provider_init/fini, SONAME $soname, needs $libdat"
	else
		fail=1
	fi
}

check providers/ofi/.libs/libdaplofi.so.1 libdaplofi.so.1
check providers/tcp/.libs/libdapltcp.so.1 libdapltcp.so.1
check providers/ofi/.libs/libdapl2ofi.so.2 libdapl2ofi.so.2 libdat2.so.2
check providers/tcp/.libs/libdapl2tcp.so.2 libdapl2tcp.so.2 libdat2.so.2
if [ "${CHECK_VERBS_PROVIDER:-0}" = 1 ]; then
	check providers/verbs/.libs/libdaplverbs.so.1 libdaplverbs.so.1
	check providers/verbs/.libs/libdapl2verbs.so.2 libdapl2verbs.so.2 libdat2.so.2
	# and the rdma-core libraries it is built on
	for need in librdmacm.so.1 libibverbs.so.1; do
		if ! readelf -d providers/verbs/.libs/libdaplverbs.so.1 |
			grep -q "NEEDED.*\[$need\]"; then
			echo "FAIL: libdaplverbs.so.1 does not need $need"; fail=1
		fi
	done
fi
exit $fail
