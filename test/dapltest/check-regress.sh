#!/bin/sh
# make check: scripts/regress.sh against a dapltest server on a free port.
# The six transaction tests must pass, -T Q must make the server exit, and
# the server must exit 0 (every test it ran passed, everything freed).
#
# Needs DAT_TEST_CONF (the build tree's dat.conf); exits 77 (skip) without.
# Run from the top build directory (make check does).

if [ -z "$DAT_TEST_CONF" ] || [ -z "$DAT_TEST_IA" ]; then
	echo "SKIP: DAT_TEST_CONF / DAT_TEST_IA are not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
here=$(cd "$(dirname "$0")" && pwd)
DAPLTEST=${builddir:-.}/test/dapltest/dapltest
export DAPLTEST
if [ ! -x "$DAPLTEST" ]; then
	echo "FAIL: $DAPLTEST is not built"
	exit 1
fi
. "$here/scripts/dt-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dt-regress.XXXXXX") || exit 1
trap 'dt_kill_server; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	for f in server.log server.err regress.out; do
		if [ -s "$tmp/$f" ]; then
			echo "--- $f"
			cat "$tmp/$f"
		fi
	done
	exit 1
}

# two hosts (test/net/check-net.sh): the server's own IA, in its namespace
if [ -n "${DAT_TEST_SERVER_NETNS:-}" ]; then
	DT_SERVER_PREFIX="ip netns exec $DAT_TEST_SERVER_NETNS"
fi
dt_start_server "${DAT_TEST_SERVER_IA:-$DAT_TEST_IA}" "$tmp" 300 ||
	fail "the server did not start"
echo "server ready on port $dt_port"

# A few iterations are enough to run every path (OFA's default is 10000).
DAPLTEST_PORT=$dt_port DAPLTEST_ITERS=${DAPLTEST_ITERS:-200} \
	timeout "${DT_REGRESS_TIMEOUT:-240}" sh "$here/scripts/regress.sh" \
	"${DAT_TEST_ADDR:-127.0.0.1}" "$DAT_TEST_IA" \
	>"$tmp/regress.out" 2>&1
rc=$?
dt_wait_server
cat "$tmp/regress.out"
echo "--- server"
cat "$tmp/server.log"

[ $rc -eq 0 ] || fail "regress.sh exited with status $rc"
tail -n 1 "$tmp/regress.out" | grep -qx 'regress.sh: 7 runs, 7 passed' ||
	fail "regress.sh did not report 7 runs, 7 passed"
[ "$(grep -c '^Result: PASS$' "$tmp/regress.out")" -eq 7 ] ||
	fail "not every run printed Result: PASS"
[ "$(grep -c '^Total WQE' "$tmp/regress.out")" -eq 6 ] ||
	fail "not every transaction test printed its statistics"
[ "$dt_server_rc" = 0 ] || fail "the server exited with status $dt_server_rc"
grep -q '^Dapltest: Server Exiting: 6 tests, 0 failed$' "$tmp/server.log" ||
	fail "the server did not report 6 tests, 0 failed"
echo "PASS: regress.sh against a dapltest server"
exit 0
