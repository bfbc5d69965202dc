#!/bin/sh
# check-verbs.sh: the verbs provider on a real RDMA device.
#
# Run from the top build directory (make check-verbs).  Boots one rxe-vm
# guest (Soft-RoCE rxe0 on netdev rxenet0, 10.77.0.1; the build directory
# is shared read-write) and runs in it the verbs transport test and the
# API suites against the build tree's verbs-rxe IA.  Logs go to
# test/check-verbs/*.log.
#
# Exit status: 0 all passed, 1 a test failed (or the guest timed out), 77
# no guest could be started here (no rxe-vm, no QEMU, setup failed): that
# is a skip, not a pass.
#
# Environment: RXE_VM_TOOL (the rxe-vm script; default: rxe-vm on PATH,
# then ../shared/tools/rxe-vm/rxe-vm beside the checkout), CHECK_VERBS_TIMEOUT
# (seconds for the whole guest run, default 900), CHECK_VERBS_TESTS (the programs to
# run, default below).
set -u

tests_default="test/unit/test_verbs_transport test/api/test_conn
	test/api/test_objects test/api/test_dto test/api/test_mem"

in_guest() {
	top=$(pwd)
	srcdir=$(cd "$(dirname "$0")/.." && pwd)
	logs=$top/test/check-verbs
	mkdir -p "$logs"
	# netdevs for dev_open's failures: one without any address (down, so
	# not even an IPv6 link-local one), one with an address but no RDMA
	# device
	ip link add dat-noip0 type dummy 2>/dev/null
	ip link add dat-nordma0 type dummy 2>/dev/null &&
		ip addr add 10.77.9.1/24 dev dat-nordma0 &&
		ip link set dat-nordma0 up
	export VERBS_TEST_NOIP_NETDEV=dat-noip0
	export VERBS_TEST_NORDMA_NETDEV=dat-nordma0 VERBS_TEST_NORDMA_PEER=10.77.9.5
	export DAT_TEST_CONF="$top/dat.conf" DAT_TEST_IA=verbs-rxe
	export DAT_TEST_ADDR="${RXE_VM_IP:-10.77.0.1}"
	export DAT_TEST_TMPDIR="$top/test"
	export DAT_TEST_PROVIDER="$top/test/api/.libs/libdattest.so"
	export CK_DEFAULT_TIMEOUT=120
	fail=0 n=0
	for t in ${CHECK_VERBS_TESTS:-$tests_default}; do
		name=$(basename "$t")
		log=$logs/$name.log
		n=$((n + 1))
		if [ ! -x "$t" ]; then
			echo "FAIL: $t is not built"
			fail=1
			continue
		fi
		start=$(date +%s)
		timeout 1200 "./$t" > "$log" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		case $rc in
		0) echo "PASS: $t (${secs}s)" ;;
		77) echo "SKIP: $t (see $log)" ;;
		*) echo "FAIL: $t (exit $rc, ${secs}s; $log):"
		   grep -E ':[EF]:|FAIL|Assertion|error' "$log" | head -40
		   fail=1 ;;
		esac
	done
	# dapltest's regression over an OpenFabrics-style "OpenIB-cma" line
	# that names our library (fewer iterations: the guest is slow)
	n=$((n + 1))
	start=$(date +%s)
	if DAT_TEST_IA=OpenIB-cma DAPLTEST_ITERS=${CHECK_VERBS_DT_ITERS:-100} \
	   DT_REGRESS_TIMEOUT=900 builddir=. \
	   timeout 1000 sh "$srcdir/test/dapltest/check-regress.sh" \
	   > "$logs/dapltest-regress.log" 2>&1; then
		echo "PASS: dapltest regress.sh over OpenIB-cma ($(($(date +%s) - start))s)"
		grep -E '^(regress.sh:|Dapltest: Server Exiting)' "$logs/dapltest-regress.log"
	else
		echo "FAIL: dapltest regress.sh over OpenIB-cma ($logs/dapltest-regress.log):"
		tail -40 "$logs/dapltest-regress.log"
		fail=1
	fi
	if [ -n "${CHECK_VERBS_BENCH:-}" ]; then
		sh "$srcdir/bench/verbs-vs-perftest.sh" || fail=1
	fi
	[ $fail -eq 0 ] && echo "check-verbs: all $n runs passed on ${RXE_VM_IBDEV:-the RDMA device}"
	return $fail
}

if [ "${1:-}" = --in-guest ]; then
	in_guest
	exit $?
fi

# A skip leaves a marker, so scripts/check.sh can tell it from a failure.
mkdir -p test/check-verbs
rm -f test/check-verbs/.skipped
skip() {
	echo "SKIP: $*"
	: > test/check-verbs/.skipped
	exit 77
}

tool=${RXE_VM_TOOL:-}
if [ -z "$tool" ]; then
	# the project's shared folder sits beside the checkout
	srctop=$(cd "$(dirname "$0")/.." && pwd)
	tool=$(command -v rxe-vm 2>/dev/null)
	[ -z "$tool" ] && [ -x "$srctop/../shared/tools/rxe-vm/rxe-vm" ] &&
		tool=$srctop/../shared/tools/rxe-vm/rxe-vm
fi
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
	skip "check-verbs needs rxe-vm (set RXE_VM_TOOL) to boot a guest with Soft-RoCE"
fi
if [ ! -f dat.conf ] || ! grep -q '^verbs-rxe ' dat.conf; then
	echo "FAIL: run from the top build directory, with the verbs provider built (dat.conf has no verbs-rxe line)"
	exit 1
fi

script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
echo "check-verbs: booting an rxe-vm guest ($tool) ..."
"$tool" --timeout "${CHECK_VERBS_TIMEOUT:-900}" -- sh "$script" --in-guest
rc=$?
case $rc in
0) echo "check-verbs: PASS" ;;
77) skip "check-verbs: the guest found nothing to run" ;;
124) echo "FAIL: check-verbs: the guest run timed out"; exit 1 ;;
125) skip "check-verbs: the rxe-vm guest could not start (see its output above); nothing was tested" ;;
*) echo "FAIL: check-verbs: tests failed in the guest (exit $rc); logs in test/check-verbs/"
   exit 1 ;;
esac
exit 0
