#!/bin/sh
# The main job: builds what is missing, then, with the build tree's
# generated dat.conf, lists the providers and opens each (datinfo), and
# runs dapltest over ofi-tcp on 127.0.0.1: a server on a free port, one
# performance run (-T P) and OFA's regression script (six transaction
# tests, then -T Q) against it.  Prints each step's PASS/FAIL and exits
# non-zero when one failed.
#   DAPLTEST_ITERS  iterations of each regression test (default 1000;
#                   OFA's scripts use 10000)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
"$top/scripts/build.sh" "$build" || exit 1
cd "$build" || exit 1
export DAT_OVERRIDE="$build/dat.conf"
DAPLTEST="$build/test/dapltest/dapltest"
export DAPLTEST
. "$top/test/dapltest/scripts/dt-lib.sh"

summary=
failed=0
step() {	# step NAME STATUS [DETAIL]
	if [ "$2" -eq 0 ]; then r=PASS; else r=FAIL; failed=1; fi
	summary="$summary$(printf '  %-34s %s %s' "$1" "$r" "${3-}")
"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/main.XXXXXX") || exit 1
trap 'dt_kill_server; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

echo "== DAT providers of the build tree (DAT_OVERRIDE=$DAT_OVERRIDE)"
./test/tools/datinfo
step "datinfo" $?

echo "== dapltest server over ofi-tcp (127.0.0.1)"
if dt_start_server ofi-tcp "$tmp" 900; then
	step "dapltest -T S (port $dt_port)" 0
	cat "$tmp/server.log"

	echo "== dapltest -T P: RDMA Write, 2 x 4096 bytes, pipeline 16"
	"$DAPLTEST" -T P -s 127.0.0.1 -D ofi-tcp -n "$dt_port" -i 2048 -p 16 \
		-m b RW 4096 2
	step "dapltest -T P" $?

	echo "== regress.sh 127.0.0.1 ofi-tcp (ends with -T Q)"
	DAPLTEST_PORT=$dt_port DAPLTEST_ITERS=${DAPLTEST_ITERS:-1000} \
		sh "$top/test/dapltest/scripts/regress.sh" 127.0.0.1 ofi-tcp \
		>"$tmp/regress.out" 2>&1
	rc=$?
	cat "$tmp/regress.out"
	step "regress.sh" $rc "($(tail -n 1 "$tmp/regress.out"))"

	dt_wait_server
	echo "== the server's log"
	cat "$tmp/server.log"
	[ -s "$tmp/server.err" ] && cat "$tmp/server.err"
	step "dapltest server exit status 0" "$dt_server_rc"
else
	[ -s "$tmp/server.err" ] && cat "$tmp/server.err"
	step "dapltest -T S" 1
fi

echo "== summary"
printf '%s' "$summary"
exit $failed
