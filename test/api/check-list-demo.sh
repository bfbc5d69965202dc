#!/bin/sh
# The registry demo: a dat.conf with 3 good and 3 broken lines lists the 3
# good IA names, and each broken line gets one message naming its line.
set -u
dir=$(mktemp -d "${TMPDIR:-/tmp}/datlist.XXXXXX")
trap 'rm -rf "$dir"' EXIT
cat > "$dir/dat.conf" <<CONF
# three good lines, three broken ones
good-one   u1.2 nonthreadsafe default libgood1.so.1 dapl.1.2 "eth0 0" ""
broken-1   u1.2 nonthreadsafe default libx.so dapl.1.2
good-two   u1.2 nonthreadsafe default libgood2.so.1 dapl.1.2 "ib0 0" ""
broken-2   u1.two nonthreadsafe default libx.so dapl.1.2 "" ""
good-three u1.2 nonthreadsafe default "/opt/dat lib/libgood3.so" dapl.1.2 "tcp 127.0.0.1" ""
broken-3   u1.2 nonthreadsafe default libx.so dapl.1.2 "" "" extra
CONF
DAT_OVERRIDE="$dir/dat.conf" ./tools/datinfo --list-only > "$dir/out" 2> "$dir/err"
cat "$dir/out" "$dir/err"
fail=0
for name in good-one good-two good-three; do
	grep -q "^  $name " "$dir/out" || { echo "FAIL: $name not listed"; fail=1; }
done
grep -q "broken" "$dir/out" && { echo "FAIL: a broken line was listed"; fail=1; }
grep -q '^3 providers:' "$dir/out" || { echo "FAIL: not 3 providers"; fail=1; }
for line in 3 5 7; do
	n=$(grep -c "dat.conf:$line: " "$dir/err")
	[ "$n" -eq 1 ] || { echo "FAIL: $n messages for line $line, want 1"; fail=1; }
done
[ "$(wc -l < "$dir/err")" -eq 3 ] || { echo "FAIL: want exactly 3 error lines"; fail=1; }
[ $fail -eq 0 ] && echo "PASS: 3 good names listed, 3 broken lines reported"
exit $fail
