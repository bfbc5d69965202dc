#!/bin/sh
# dapltest -T F: every feature with all its cases, each run bounded by
# timeout; the check fails on a non-zero exit status, a FAIL line or a
# run without a single "Result: PASS".  connmgt_client runs against a
# dapltest server (-T S) started here on a free port (with the helpers of
# scripts/dt-lib.sh), which must then quit cleanly on -T Q.  Bad usage
# must give exit status 2.
#
# Needs DAT_TEST_CONF (the build tree's dat.conf) and DAT_TEST_IA; exits
# 77 (skip) without.  Run from the top build directory (make check does).

if [ -z "$DAT_TEST_CONF" ] || [ -z "$DAT_TEST_IA" ]; then
	echo "SKIP: DAT_TEST_CONF or DAT_TEST_IA is not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
ia=$DAT_TEST_IA
dapltest=${builddir:-.}/test/dapltest/dapltest
if [ ! -x "$dapltest" ]; then
	echo "FAIL: $dapltest is not built"
	exit 1
fi

# dt_start_server, dt_wait_server, dt_kill_server
DAPLTEST=$dapltest
. "${srcdir:-.}/test/dapltest/scripts/dt-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-fft.XXXXXX") || exit 1
cleanup() {
	dt_kill_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
failed=0

# judge <label> <exit status>: the verdict on $tmp/out
judge() {
	cat "$tmp/out"
	if [ "$2" -ne 0 ]; then
		echo "FAIL: $1: exit status $2"
		failed=1
	elif grep -q 'FAIL' "$tmp/out"; then
		echo "FAIL: $1: a FAIL line"
		failed=1
	elif ! grep -q '^Result: PASS' "$tmp/out"; then
		echo "FAIL: $1: no 'Result: PASS' line"
		failed=1
	else
		echo "PASS: $1 ($(grep -c '^Result: PASS' "$tmp/out") cases" \
		     "passed, $(grep -c '^Result: SKIP' "$tmp/out") skipped)"
	fi
}

for f in hwconn endpoint pz mem connmgt queryinfo stress; do
	timeout 300 "$dapltest" -T F -D "$ia" -f "$f" >"$tmp/out" 2>&1
	judge "-f $f" $?
done

# A dapltest server on a free port (dt-lib.sh picks one and retries
# when it is taken), bounded by timeout, stopped by -T Q.
if dt_start_server "$ia" "$tmp" 120; then
	echo "server listens on port $dt_port"
	timeout 120 "$dapltest" -T F -D "$ia" -f connmgt_client \
		-s 127.0.0.1 -n "$dt_port" >"$tmp/out" 2>&1
	judge "-f connmgt_client" $?
	timeout 60 "$dapltest" -T Q -D "$ia" -s 127.0.0.1 -n "$dt_port" \
		>"$tmp/quit.out" 2>&1
	quit_rc=$?
	dt_wait_server
	echo "--- server"
	cat "$tmp/server.log" "$tmp/server.err" 2>/dev/null
	if [ "$quit_rc" -ne 0 ] || [ "$dt_server_rc" -ne 0 ]; then
		echo "FAIL: -T Q exited with $quit_rc, the server with" \
		     "$dt_server_rc"
		cat "$tmp/quit.out"
		failed=1
	fi
else
	echo "FAIL: the dapltest server did not start"
	cat "$tmp/server.log" "$tmp/server.err" 2>/dev/null
	failed=1
fi

# usage <label> <dapltest -T F arguments...>: must be refused with 2
usage() {
	label=$1
	shift
	timeout 60 "$dapltest" -T F -D "$ia" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		echo "FAIL: $label: exit status $rc, want 2"
		failed=1
	elif ! grep -q 'FFT TEST' "$tmp/err"; then
		echo "FAIL: $label: no usage message on standard error"
		cat "$tmp/err"
		failed=1
	else
		echo "PASS: $label is refused: $(head -n 1 "$tmp/err")"
	fi
}

usage "no -f" case0
usage "an unknown feature" -f nothing
usage "connmgt_client without -s" -f connmgt_client
usage "a case beyond the feature's" -f hwconn case99
usage "a case that is not caseN" -f hwconn 0
usage "-t 0" -f stress -t 0

exit $failed
