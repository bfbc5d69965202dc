#!/bin/sh
# libdat.so.1 must have SONAME libdat.so.1 and export exactly the 72 dat_*
# calls of DAT 1.2, all under the version node DAT_1.2, plus the two
# libdat_private_* calls our providers look up (dat/libdat_private.h) under
# their own node LIBDAT_PRIVATE_1, and nothing else.
set -u
lib=dat/.libs/libdat.so.1
map="${srcdir:-.}/dat/libdat.map"
fail=0
[ -f "$lib" ] || { echo "no $lib"; exit 1; }

soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != libdat.so.1 ]; then
	echo "FAIL: SONAME is '$soname', want libdat.so.1"; fail=1
fi

# Our defined dynamic symbols, as name@@version.
nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' |
	grep -v '^DAT_1.2$' | sort > exports.tmp
{
	sed -n 's/^[[:space:]]*\(dat_[a-z_]*\);$/\1@@DAT_1.2/p' "$map"
	echo libdat_private_add_object_memory@@LIBDAT_PRIVATE_1
	echo libdat_private_provider_announces@@LIBDAT_PRIVATE_1
} | sort > expected.tmp
if ! cmp -s exports.tmp expected.tmp; then
	echo "FAIL: exported symbols differ from the 72 of DAT 1.2 and our 2 private ones:"
	diff expected.tmp exports.tmp
	fail=1
fi
n=$(grep -c '@@DAT_1.2$' exports.tmp)
[ "$n" -eq 72 ] || { echo "FAIL: $n symbols exported under DAT_1.2, want 72"; fail=1; }
rm -f exports.tmp expected.tmp
[ $fail -eq 0 ] && echo "PASS: SONAME libdat.so.1, 72 dat_* symbols under DAT_1.2, 2 under LIBDAT_PRIVATE_1"
exit $fail
