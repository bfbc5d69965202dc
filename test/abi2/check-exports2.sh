#!/bin/sh
# libdat2.so.2 must have SONAME libdat2.so.2 and export, under the node
# DAT_2.0, what OpenFabrics dapl 2.1.10's libdat2.so.2 exports (the list
# committed from Debian 12's libdapl2), dats_get_ia_handle included (in
# no header, but Debian's providers libdaplofa/oscm/oucm.so.2 import it);
# plus our two libdat_private_* calls (dat/libdat_private.h) under
# LIBDAT2_PRIVATE_1, and nothing else.
set -u
lib=dat/.libs/libdat2.so.2
list="${srcdir:-.}/test/abi2/libdat2-2.1.10.exports"
fail=0
[ -f "$lib" ] || { echo "no $lib"; exit 1; }

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != libdat2.so.2 ]; then
	echo "FAIL: SONAME is '$soname', want libdat2.so.2"; fail=1
fi

nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' |
	grep -v '^DAT_2.0$' | sort > exports2.tmp
{
	grep -v '^#' "$list" | sed 's/$/@@DAT_2.0/'
	echo libdat_private_add_object_memory@@LIBDAT2_PRIVATE_1
	echo libdat_private_provider_announces@@LIBDAT2_PRIVATE_1
} | sort > expected2.tmp
if ! cmp -s exports2.tmp expected2.tmp; then
	echo "FAIL: exports differ from dapl 2.1.10's libdat2.so.2 (want < got >):"
	diff expected2.tmp exports2.tmp
	fail=1
fi
n=$(grep -c '@@DAT_2.0$' exports2.tmp)
[ "$n" -eq 74 ] || { echo "FAIL: $n symbols under DAT_2.0, want 74"; fail=1; }
rm -f exports2.tmp expected2.tmp
[ $fail -eq 0 ] && echo "PASS: SONAME libdat2.so.2, 74 calls under DAT_2.0 (dapl 2.1.10's), 2 under LIBDAT2_PRIVATE_1"
exit $fail
