#!/bin/sh
# The main job: builds what is missing, then, with the build tree's
# generated dat.conf, lists its entries (datinfo: each opened, or shown as
# unavailable here with the reason), and runs dapltest over tcp (the
# native iWARP-over-TCP provider, the default software path) on
# 127.0.0.1: a server on a free port, one performance run (-T P) and OFA's
# regression script (six transaction tests, then -T Q) against it.
# Prints each step's PASS/FAIL and exits non-zero when one failed.  An
# entry whose device this host lacks (the verbs line on a host without
# RDMA hardware) is reported as unavailable, and is not a failure: the job
# fails only when something it set out to run fails.
#   DAPLTEST_ITERS  iterations of each regression test (default 1000;
#                   OFA's scripts use 10000)
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
"$top/scripts/build.sh" "$build" --enable-werror || exit 1
cd "$build" || exit 1
export DAT_OVERRIDE="$build/dat.conf"
DAPLTEST="$build/test/dapltest/dapltest"
export DAPLTEST
. "$top/test/dapltest/scripts/dt-lib.sh"

summary=
failed=0
line() {	# line NAME RESULT...
	summary="$summary$(printf '  %-34s %s' "$1" "$2")
"
}
step() {	# step NAME STATUS [DETAIL]
	if [ "$2" -eq 0 ]; then r=PASS; else r=FAIL; failed=1; fi
	line "$1" "$r${3:+ $3}"
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/main.XXXXXX") || exit 1
trap 'dt_kill_server; rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP

echo "== dat.conf entries of the build tree (DAT_OVERRIDE=$DAT_OVERRIDE)"
./tools/datinfo
step "datinfo" $?
# One summary line per entry.  The job runs over tcp, so its DAT 1.2
# entry must open; any other entry that cannot open here (the u2.0 ones,
# for DAT 2.0 programs, are never opened by this DAT 1.2 datinfo) is
# shown, with why.
if ./tools/datinfo --brief >"$tmp/brief" 2>"$tmp/brief.err"; then
	while IFS='	' read -r name status detail; do
		if [ "$name" = tcp ] && [ "$status" = unavailable ]; then
			step "open $name" 1 "($detail)"
		elif [ "$status" = available ]; then
			line "open $name" "PASS"
		else
			line "open $name" "$status: $detail"
		fi
	done <"$tmp/brief"
	grep -q '^tcp	available	' "$tmp/brief" ||
		step "open tcp" 1 "(no DAT 1.2 tcp entry opened)"
else
	cat "$tmp/brief.err"
	step "datinfo --brief" 1
fi

echo "== dapltest server over tcp (127.0.0.1)"
if dt_start_server tcp "$tmp" 900; then
	step "dapltest -T S (port $dt_port)" 0
	cat "$tmp/server.log"

	echo "== dapltest -T P: RDMA Write, 2 x 4096 bytes, pipeline 16"
	"$DAPLTEST" -T P -s 127.0.0.1 -D tcp -n "$dt_port" -i 2048 -p 16 \
		-m b RW 4096 2
	step "dapltest -T P" $?

	echo "== regress.sh 127.0.0.1 tcp (ends with -T Q)"
	DAPLTEST_PORT=$dt_port DAPLTEST_ITERS=${DAPLTEST_ITERS:-1000} \
		sh "$top/test/dapltest/scripts/regress.sh" 127.0.0.1 tcp \
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
if [ $failed -eq 0 ]; then
	echo "main: PASS"
else
	echo "main: FAIL"
fi
exit $failed
