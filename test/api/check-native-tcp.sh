#!/bin/sh
# The API suites and dapltest's scripts again, over the native TCP
# (iWARP) provider "tcp" instead of ofi-tcp (make check runs them over
# DAT_TEST_IA, ofi-tcp); the suites' DAT 2.0 builds (test_*2, against
# libdat2.so.2) open tcp's u2.0 line.  One line per program; fails if any
# fails.
set -u
builddir=${builddir:-.}
srcdir=${srcdir:-.}
if [ -z "${DAT_TEST_CONF:-}" ] || ! grep -q '^tcp ' "$DAT_TEST_CONF" 2>/dev/null; then
	echo "SKIP: no tcp line in DAT_TEST_CONF (${DAT_TEST_CONF:-unset})"
	exit 77
fi
DAT_TEST_IA=tcp
export DAT_TEST_IA
fail=0
for t in test_conn test_objects test_mem test_dto test_compat test_order test_progress \
	 test_conn2 test_objects2 test_mem2 test_dto2 test_compat2 test_order2; do
	out=$("$builddir/test/api/$t" 2>&1)
	rc=$?
	line=$(printf '%s\n' "$out" | grep '^[0-9]*%: Checks' | tail -1)
	if [ $rc -eq 0 ]; then
		echo "PASS: $t over tcp: $line"
	else
		echo "FAIL: $t over tcp (exit $rc): $line"
		printf '%s\n' "$out" | grep -v '^libdat:' | tail -20
		fail=1
	fi
done
for s in check-dapltest.sh check-regress.sh check-width.sh; do
	out=$(builddir=$builddir srcdir=$srcdir sh "$srcdir/test/dapltest/$s" 2>&1)
	rc=$?
	if [ $rc -eq 0 ]; then
		echo "PASS: dapltest $s over tcp"
	else
		echo "FAIL: dapltest $s over tcp (exit $rc)"
		printf '%s\n' "$out" | tail -20
		fail=1
	fi
done
exit $fail
