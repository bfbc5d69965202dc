#!/bin/sh
# dapltest across two hosts (run by check-net.sh inside the client's
# namespace): a server with DAT_TEST_SERVER_IA in DAT_TEST_SERVER_NETNS (or
# here, when that is empty: check-net.sh's routed mode) on DAT_TEST_ADDR,
# and from here, with DAT_TEST_IA: -T T with Send, RDMA
# Write and RDMA Read both ways (-V), -T P blocking with RDMA Write and
# polling with RDMA Read, then -T Q.  Every run must print "Result: PASS";
# the server must exit 0 having counted them.
set -u
: "${DAT_TEST_CONF:?}" "${DAT_TEST_IA:?}" "${DAT_TEST_SERVER_IA:?}" \
	"${DAT_TEST_ADDR:?}"
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
here=$(cd "$(dirname "$0")" && pwd)
DAPLTEST=${builddir:-.}/test/dapltest/dapltest
export DAPLTEST
# shellcheck source=../dapltest/scripts/dt-lib.sh
. "$here/../dapltest/scripts/dt-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dt-across.XXXXXX") || exit 1
trap 'dt_kill_server; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	for f in server.log server.err out err; do
		if [ -s "$tmp/$f" ]; then
			echo "--- $f"
			cat "$tmp/$f"
		fi
	done
	exit 1
}

where=here
if [ -n "${DAT_TEST_SERVER_NETNS:-}" ]; then
	# shellcheck disable=SC2034 # read by dt_start_server (dt-lib.sh)
	DT_SERVER_PREFIX="ip netns exec $DAT_TEST_SERVER_NETNS"
	where="in $DAT_TEST_SERVER_NETNS"
fi
dt_start_server "$DAT_TEST_SERVER_IA" "$tmp" 300 || fail "the server did not start"
echo "server ($DAT_TEST_SERVER_IA $where) ready on $DAT_TEST_ADDR port $dt_port"

# run ARGS...: one client run, bounded; must pass
run() {
	echo "+ dapltest $*"
	timeout 300 "$DAPLTEST" "$@" -s "$DAT_TEST_ADDR" -D "$DAT_TEST_IA" -n "$dt_port" \
		</dev/null >"$tmp/out" 2>"$tmp/err"
	rc=$?
	cat "$tmp/out"
	[ $rc -eq 0 ] || fail "exit status $rc"
	grep -qx 'Result: PASS' "$tmp/out" || fail "no 'Result: PASS'"
}

run -T T -i "${DT_ACROSS_ITERS:-500}" -t 2 -w 2 -V client SR 4096 server RW 65536 \
	server RR 65536 client SR 1024 server SR 1024
run -T P -i 256 -p 8 -m b RW 65536 2
run -T P -i 256 -p 4 -m p RR 4096 1
run -T Q
dt_wait_server
echo "--- server"
cat "$tmp/server.log"
[ "$dt_server_rc" = 0 ] || fail "the server exited with status $dt_server_rc"
grep -q '^Dapltest: Server Exiting: 3 tests, 0 failed$' "$tmp/server.log" ||
	fail "the server did not report 3 tests, 0 failed"
echo "PASS: dapltest across the link"
