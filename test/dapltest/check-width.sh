#!/bin/sh
# make check: dapltest's transaction test with several EPs per thread, the
# way programs of the OpenFabrics era drive it: 2 threads of 4 and of 8
# EPs, a Send each way, an RDMA Write and an RDMA Read, every byte checked
# (-V), DT_WIDTH_ITERS iterations (default 10000).  Every completion must
# be the one expected for its EP and OP, and every message must land in
# the receive posted for it; then -T Q, and the server exits 0.
#
# Needs DAT_TEST_CONF and DAT_TEST_IA (make check sets them; check-verbs
# sets them for the guest); exits 77 (skip) without.  Run from the top
# build directory.

if [ -z "$DAT_TEST_CONF" ] || [ -z "$DAT_TEST_IA" ]; then
	echo "SKIP: DAT_TEST_CONF / DAT_TEST_IA are not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
ia=$DAT_TEST_IA
addr=${DAT_TEST_ADDR:-127.0.0.1}
iters=${DT_WIDTH_ITERS:-10000}
bound=${DT_WIDTH_TIMEOUT:-600}
here=$(cd "$(dirname "$0")" && pwd)
DAPLTEST=${builddir:-.}/test/dapltest/dapltest
export DAPLTEST
if [ ! -x "$DAPLTEST" ]; then
	echo "FAIL: $DAPLTEST is not built"
	exit 1
fi
. "$here/scripts/dt-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dt-width.XXXXXX") || exit 1
trap 'dt_kill_server; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	for f in server.log server.err; do
		if [ -s "$tmp/$f" ]; then
			echo "--- $f"
			cat "$tmp/$f"
		fi
	done
	exit 1
}

dt_start_server "$ia" "$tmp" $((2 * bound + 60)) || fail "the server did not start"
echo "server ready on port $dt_port"

for w in 4 8; do
	echo "+ dapltest -T T -s $addr -D $ia -n $dt_port -i $iters -t 2 -w $w -V" \
	     "client SR 1024 server RW 4096 server SR 1024 client RR 4096"
	start=$(date +%s)
	timeout "$bound" "$DAPLTEST" -T T -s "$addr" -D "$ia" -n "$dt_port" \
		-i "$iters" -t 2 -w "$w" -V client SR 1024 server RW 4096 \
		server SR 1024 client RR 4096 </dev/null >"$tmp/w$w.out" 2>"$tmp/w$w.err"
	rc=$?
	cat "$tmp/w$w.out"
	[ ! -s "$tmp/w$w.err" ] || { echo "--- stderr"; cat "$tmp/w$w.err"; }
	[ "$rc" -eq 0 ] || fail "-w $w: exit status $rc"
	grep -qx 'Result: PASS' "$tmp/w$w.out" || fail "-w $w: no 'Result: PASS'"
	grep -q "^----- Stats ---- : 2 threads, $((2 * w)) EPs" "$tmp/w$w.out" ||
		fail "-w $w: not 2 threads x $w EPs"
	[ ! -s "$tmp/w$w.err" ] || fail "-w $w: error messages"
	echo "-w $w: $iters iterations passed in $(($(date +%s) - start)) s"
done

timeout 60 "$DAPLTEST" -T Q -s "$addr" -D "$ia" -n "$dt_port" </dev/null >"$tmp/quit.out" 2>&1 ||
	{ cat "$tmp/quit.out"; fail "-T Q failed"; }
dt_wait_server
[ "$dt_server_rc" = 0 ] || fail "the server exited with status $dt_server_rc"
grep -q '^Dapltest: Server Exiting: 2 tests, 0 failed$' "$tmp/server.log" ||
	fail "the server did not report 2 tests, 0 failed"
echo "PASS: dapltest -w 4 and -w 8, -V, $iters iterations over $ia"
exit 0
