#!/bin/sh
# dapltest -T L: every limit test on its own, as OpenFabrics' "lim" suite
# runs them (cl.sh: -w 8 -m 100, limit_rpost with -m 15), plus
# limit_rpost with -m 100 so the receive queue really fills and the
# refusal is judged.  Each run is bounded by timeout and fails the check
# on a non-zero exit status, a FAIL line or a missing "Result: PASS".
# Then bad usage must give exit status 2 and a usage message.
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

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-limit.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 1' INT TERM HUP
failed=0

# run <label> <dapltest -T L arguments...>
run() {
	label=$1
	shift
	timeout 300 "$dapltest" -T L -D "$ia" "$@" >"$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	if [ "$rc" -ne 0 ]; then
		echo "FAIL: $label: exit status $rc"
		failed=1
	elif grep -q 'FAIL' "$tmp/out"; then
		echo "FAIL: $label: a FAIL line"
		failed=1
	elif ! grep -q '^Result: PASS' "$tmp/out"; then
		echo "FAIL: $label: no 'Result: PASS' line"
		failed=1
	else
		echo "PASS: $label"
	fi
}

for t in limit_ia limit_pz limit_cno limit_evd limit_rsp limit_psp \
	 limit_ep limit_lmr limit_size_lmr; do
	run "$t -w 8 -m 100" -w 8 -m 100 "$t"
done
run "limit_rpost -w 8 -m 15" -w 8 -m 15 limit_rpost
run "limit_rpost -w 8 -m 100 (to the refusal)" -w 8 -m 100 limit_rpost
grep -q 'dat_ep_post_recv #.* fails: DAT_INSUFFICIENT_RESOURCES' \
	"$tmp/out" || {
	echo "FAIL: limit_rpost -m 100 did not fill the receive queue"
	failed=1
}

# usage <label> <dapltest -T L arguments...>: must be refused with 2
usage() {
	label=$1
	shift
	timeout 60 "$dapltest" -T L -D "$ia" "$@" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	if [ "$rc" -ne 2 ]; then
		echo "FAIL: $label: exit status $rc, want 2"
		failed=1
	elif ! grep -q 'LIMIT TEST' "$tmp/err"; then
		echo "FAIL: $label: no usage message on standard error"
		cat "$tmp/err"
		failed=1
	else
		echo "PASS: $label is refused: $(head -n 1 "$tmp/err")"
	fi
}

usage "an unknown test name" limit_nothing
usage "-w 0" -w 0 limit_pz
usage "-m without a number" -m many limit_pz
usage "an unknown option" -x limit_pz

exit $failed
