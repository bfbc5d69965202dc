#!/bin/sh
# libdaplofi.so.1 exports exactly dat_provider_init and dat_provider_fini,
# has SONAME libdaplofi.so.1 and needs libdat.so.1 (so a consumer that
# dlopens libdat privately can still load it).
set -u
lib=providers/ofi/.libs/libdaplofi.so.1
[ -f "$lib" ] || { echo "FAIL: $lib not built"; exit 1; }
fail=0
syms=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TtDdBbRrWwVv]$/ && $3 !~ /^_/ { print $3 }' | sed 's/@.*//' | sort -u | tr '\n' ' ')
if [ "$syms" != "dat_provider_fini dat_provider_init " ]; then
	echo "FAIL: exported symbols: $syms"; fail=1
fi
soname=$(readelf -d "$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
[ "$soname" = libdaplofi.so.1 ] || { echo "FAIL: SONAME '$soname'"; fail=1; }
if ! readelf -d "$lib" | grep -q 'NEEDED.*\[libdat\.so\.1\]'; then
	echo "FAIL: libdaplofi.so.1 does not need libdat.so.1"; fail=1
fi
[ $fail -eq 0 ] && echo "PASS: $lib exports only dat_provider_init/fini, SONAME $soname, needs libdat.so.1"
exit $fail
