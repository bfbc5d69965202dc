#!/bin/sh
# check-dapltest-cross.sh: a dapltest server on one IA and a dapltest
# transaction client on another: Sends, RDMA Writes and RDMA Reads issued
# by both sides, every byte checked (-V), then -T Q; the server must report
# no failed test.
#
# Environment: DT_SERVER_IA, DT_CLIENT_IA (default tcp for both), DT_ADDR
# (the server's address, default 127.0.0.1), DT_CROSS_ITERS (iterations,
# default 200), DAT_TEST_CONF.  Run from the top build directory.
set -u

if [ -z "${DAT_TEST_CONF:-}" ]; then
	echo "SKIP: DAT_TEST_CONF is not set"
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
. "$here/../dapltest/scripts/dt-lib.sh"
sia=${DT_SERVER_IA:-tcp}
cia=${DT_CLIENT_IA:-tcp}
addr=${DT_ADDR:-127.0.0.1}
iters=${DT_CROSS_ITERS:-200}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dt-cross.XXXXXX") || exit 1
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	dt_kill_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

if ! dt_start_server "$sia" "$tmp" 600; then
	echo "FAIL: the dapltest server on $sia did not start"
	cat "$tmp/server.log" "$tmp/server.err" 2>/dev/null
	exit 1
fi
fail=0
for w in 1 4; do
	if ! timeout 300 "$DAPLTEST" -T T -s "$addr" -D "$cia" -n "$dt_port" \
		-i "$iters" -t 2 -w "$w" client SR 4096 server RW 4096 \
		server RR 4096 client RW 4096 client RR 4096 server SR 4096 -V \
		</dev/null >"$tmp/client.out" 2>&1; then
		echo "FAIL: dapltest -T T -w $w, server on $sia, client on $cia:"
		cat "$tmp/client.out"
		fail=1
		break
	fi
	echo "PASS: dapltest -T T -t 2 -w $w -i $iters (SR, RW, RR from both sides, -V), server on $sia, client on $cia"
	grep -E '^Total (Send|Recv|RDMA Read|RDMA Write) ' "$tmp/client.out"
done
timeout 60 "$DAPLTEST" -T Q -s "$addr" -D "$cia" -n "$dt_port" </dev/null \
	>"$tmp/quit.out" 2>&1 || { echo "FAIL: -T Q"; cat "$tmp/quit.out"; fail=1; }
dt_wait_server
grep '^Dapltest: Server Exiting' "$tmp/server.log"
if ! grep -q '^Dapltest: Server Exiting: [0-9]* tests, 0 failed$' "$tmp/server.log"; then
	echo "FAIL: the server on $sia reported failures:"
	cat "$tmp/server.log" "$tmp/server.err"
	fail=1
fi
exit $fail
