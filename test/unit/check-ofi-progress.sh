#!/bin/sh
# ofi-tcp: an RDMA Read or Write reaches a target that posted nothing
# and only spins, on an EVD none of its endpoints uses (read_evd,
# write_evd) or on memory (read_mem, write_mem), with the progress
# thread's tick switched off (DAPL_OFI_TICK_MS=0): what moves the data is
# the progress thread woken by the arrival, and the initiator's
# completions arrive (a Read's completion needs the target's answer, a
# Write's the target's placement: DAPL_OFI_COMPLETION=delivery).  Then
# both ends wait in dat_evd_wait for DISCONNECTED, which the target's
# thread notices only by reading its CQs.  dat_bench's one-sided
# patterns do exactly that (bench/README.md); only its exit status is
# looked at, never a time.  Before 2026-11-28 a target spinning on
# another EVD took every CQ of its IA out of the thread's set and only a
# 2 ms tick brought them back: with the tick off the initiator's first
# Write never completed (timeout here).
set -u
builddir=${builddir:-.}
# dat_bench's output, in a file of our own removed on the way out
# (distcheck wants a build directory that distclean leaves empty)
out=$(mktemp "${TMPDIR:-/tmp}/check-ofi-progress.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
if [ -z "${DAT_TEST_CONF:-}" ] || ! grep -q '^ofi-tcp ' "$DAT_TEST_CONF" 2>/dev/null; then
	echo "SKIP: no ofi-tcp line in DAT_TEST_CONF (${DAT_TEST_CONF:-unset})"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF DAPL_OFI_TICK_MS=0 \
	timeout 120 "$builddir/bench/dat_bench" -m poll -t dat -i ofi-tcp \
	-r 1 -n 20 -p read_evd,write_evd,read_mem,write_mem \
	> "$out" 2>&1
rc=$?
grep "^bench:" "$out"
if [ $rc -ne 0 ]; then
	echo "FAIL: dat_bench exited $rc (124: it timed out; 1: it saw a side make no progress, or a teardown without DISCONNECTED)"
	tail -20 "$out"
	exit 1
fi
echo "PASS: every one-sided round and the disconnect completed with the tick off"
