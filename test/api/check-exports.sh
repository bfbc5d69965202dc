#!/bin/sh
# libdat.so.1 must have SONAME libdat.so.1 and export exactly the 72 dat_*
# calls of DAT 1.2, all under the version node DAT_1.2, and nothing else.
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
sed -n 's/^[[:space:]]*\(dat_[a-z_]*\);$/\1@@DAT_1.2/p' "$map" | sort > expected.tmp
if ! cmp -s exports.tmp expected.tmp; then
	echo "FAIL: exported symbols differ from the 72 of DAT 1.2:"
	diff expected.tmp exports.tmp
	fail=1
fi
n=$(wc -l < exports.tmp)
[ "$n" -eq 72 ] || { echo "FAIL: $n symbols exported, want 72"; fail=1; }
rm -f exports.tmp expected.tmp
[ $fail -eq 0 ] && echo "PASS: SONAME libdat.so.1, 72 dat_* symbols under DAT_1.2"
exit $fail
