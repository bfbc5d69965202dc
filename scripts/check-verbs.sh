#!/bin/sh
# check-verbs.sh: the verbs provider on real RDMA devices.
#
# Run from the top build directory (make check-verbs).  Boots one guest of
# the project's runner (test/vm/datvm; the build directory is shared
# read-write) with Soft-RoCE rxe0 (netdev datrxe0, 10.77.0.1) and
# soft-iWARP siw0 (netdev datsiw0, 10.77.1.1), writes the guest's
# dat.conf (test/check-verbs/dat.conf) and runs, on each device, the
# transport conformance suite on verbs (test_transport_verbs), the API
# suites and dapltest's regression over an OpenFabrics-style line naming
# our library.  Logs: test/check-verbs/.
#
# Exit status: 0 all passed, 1 a test failed (or the guest timed out), 77
# no guest could be started here (that is a skip, not a pass; it leaves
# test/check-verbs/.skipped).
#
# On siw0 it also runs the interoperability checks of our tcp provider
# (at siw0's address) against verbs on siw0, both ways: test/interop's
# dat_interop (private data, read limits, Send, RDMA Write and Read each
# way, a refused Write and Read raised by each side) and a dapltest server
# on one with the transaction client on the other.
#
# Then, per device kind (CHECK_VERBS_ACROSS), two hosts:
# test/net/check-net.sh in its routed mode (CHECK_NET_RDMA) makes a veth
# pair with a device of that kind on each end and runs, across the link,
# the two-process API suites (rxe), dapltest (regress.sh, -T T, -T P), the
# addresses each side reports, and the link cut and its traffic dropped
# (what is left out, and why: run_across).
#
# Environment: CHECK_VERBS_DEVICES ("rxe siw", the default; one guest
# carries both), CHECK_VERBS_TIMEOUT (seconds for the whole guest run,
# default 2100), CHECK_VERBS_TEST_TIMEOUT (seconds per program, 300),
# CHECK_VERBS_TESTS (the programs to run on every device),
# CHECK_VERBS_DT_ITERS (dapltest iterations, 100; 20 on siw),
# CHECK_VERBS_WIDTH_ITERS (iterations of the -w 4 / -w 8 runs, 4000 on rxe:
# about 100 s under TCG, where 10000 took 256 s of the 30 minutes CI has;
# make check still runs 10000 on ofi-tcp; 500
# on siw), CHECK_VERBS_CROSS_ITERS (dapltest across tcp and siw, 100),
# CHECK_VERBS_BENCH=1 (also bench/verbs-vs-perftest.sh on rxe, and
# bench/verbs-targets.sh, issue 25's MPI patterns, on each device),
# CHECK_VERBS_ACROSS (the kinds run across two devices, default "rxe
# siw"; "" for none), CHECK_VERBS_PARTS (which parts run, default all:
# "suites regress width interop across dapl2").
#
# dapl2: Debian 12's unmodified dapl2-utils (DAT 2.0: dapltest, dtest,
# dtestcm, dtestsrq, dtestx) over each device's u2.0 entry
# (test/abi2/check-dapl2-verbs.sh; fetched here before the guest boots).
# About 205 s on rxe and less on siw (no -T L / -T F there), measured.
set -u

tests_default="test/unit/test_transport_verbs test/api/test_conn
	test/api/test_objects test/api/test_dto test/api/test_mem
	test/api/test_compat test/api/test_order"
# On siw, what iWARP and siw allow (dapl_verbs(7) says why the others do
# not pass there): test_conn's never-answered connect waits for siw's own
# MPA timeout, and test_order checks the delivery guarantee iWARP does not
# give.
tests_siw="test/unit/test_transport_verbs test/api/test_objects
	test/api/test_dto test/api/test_mem test/api/test_compat"
devices=${CHECK_VERBS_DEVICES:-rxe siw}

# run_dt_check NAME WHAT BOUND SUMMARY [VAR=VALUE ...]:
# test/dapltest/check-NAME.sh over the OpenFabrics-style line ($cma) with
# those variables, bounded by BOUND seconds; its log in
# $logs/dapltest-NAME.log, the lines matching SUMMARY shown on success.
# Counts the run in n, sets fail on failure.
run_dt_check() {
	_name=$1 _what=$2 _bound=$3 _summary=$4
	shift 4
	_log=$logs/dapltest-$_name.log
	n=$((n + 1))
	start=$(date +%s)
	if env DAT_TEST_IA="$cma" builddir=. "$@" timeout "$_bound" \
	   sh "$srcdir/test/dapltest/check-$_name.sh" > "$_log" 2>&1; then
		echo "PASS: dapltest $_what over $cma on $ibdev ($(($(date +%s) - start))s)"
		grep -E "$_summary" "$_log"
	else
		echo "FAIL: dapltest $_what over $cma on $ibdev ($_log):"
		tail -40 "$_log"
		fail=1
	fi
}

# run_interop SERVER_IA SERVER_FLAGS CLIENT_IA CLIENT_FLAGS:
# test/interop/check-interop.sh between two IAs at $ip.
run_interop() {
	_log=$logs/interop-$1-$3.log
	n=$((n + 1))
	start=$(date +%s)
	if env INTEROP_SERVER_IA="$1" INTEROP_SERVER_FLAGS="$2" \
	   INTEROP_CLIENT_IA="$3" INTEROP_CLIENT_FLAGS="$4" INTEROP_ADDR="$ip" \
	   builddir=. timeout 600 sh "$srcdir/test/interop/check-interop.sh" \
	   > "$_log" 2>&1; then
		echo "PASS: interop, server $1, client $3 ($(($(date +%s) - start))s)"
	else
		echo "FAIL: interop, server $1, client $3 ($_log):"
		fail=1
	fi
	grep -E '^(PASS|FAIL)|REMOTE_ACCESS|SUCCESS \(|ERR_FLUSHED|ERR_LOCAL_EP|private data|read limits' "$_log"
}

# run_dt_cross SERVER_IA CLIENT_IA: a dapltest server on one, the
# transaction client on the other.
run_dt_cross() {
	_log=$logs/dapltest-cross-$1-$2.log
	n=$((n + 1))
	start=$(date +%s)
	if env DT_SERVER_IA="$1" DT_CLIENT_IA="$2" DT_ADDR="$ip" \
	   DT_CROSS_ITERS="${CHECK_VERBS_CROSS_ITERS:-100}" builddir=. \
	   timeout 900 sh "$srcdir/test/interop/check-dapltest-cross.sh" \
	   > "$_log" 2>&1; then
		echo "PASS: dapltest, server on $1, client on $2 ($(($(date +%s) - start))s)"
		grep -E '^(PASS|Dapltest: Server Exiting)' "$_log"
	else
		echo "FAIL: dapltest, server on $1, client on $2 ($_log):"
		tail -30 "$_log"
		fail=1
	fi
}

# run_across rxe|siw: two devices of that kind on the two ends of a veth
# pair (test/net/check-net.sh, routed).  What runs across is what runs on
# one device of that kind; the one-process suites and -T L would not
# cross the link, so they are left to the runs above.
#
# Not yet, so left out rather than passed: test_dto on siw (part way
# through the suite, the server stops seeing connection requests).
run_across() {
	_log=$logs/across.log
	_suites=
	[ "$1" = rxe ] && _suites="test_conn test_dto test_order"
	n=$((n + 1))
	start=$(date +%s)
	env CHECK_NET_RDMA="$1" CHECK_NET_SUITES2="$_suites" CHECK_NET_SUITES1= \
	    CHECK_NET_LIMIT=0 CHECK_NET_FAULTS="down drop vanish" \
	    DT_ACROSS_ITERS=100 DAPLTEST_ITERS="$dt_iters" \
	    DAT_TEST_CONF="$top/test/check-verbs/dat.conf" builddir=. srcdir="$srcdir" \
	    timeout 900 sh "$srcdir/test/net/check-net.sh" > "$_log" 2>&1
	_rc=$?
	if [ $_rc -eq 0 ]; then
		echo "PASS: two $1 devices across a veth link ($(($(date +%s) - start))s)"
		grep -E '^(PASS|check-net:)' "$_log"
	else
		echo "FAIL: two $1 devices across a veth link (exit $_rc; $_log):"
		tail -40 "$_log"
		fail=1
	fi
}

# run_dapl2: Debian's unmodified dapl2-utils (DAT 2.0) over the device's
# u2.0 entry (test/abi2/check-dapl2-verbs.sh; the package was fetched on
# the host before the guest started).
run_dapl2() {
	_log=$logs/dapl2-utils.log
	n=$((n + 1))
	if [ -n "${CHECK_VERBS_DAPL2_SKIP:-}" ]; then
		echo "SKIP: Debian's dapl2-utils on $ibdev: $CHECK_VERBS_DAPL2_SKIP"
		return
	fi
	# dapltest -T L and -T F test objects, not the device: on rxe only
	# when the guest has both (its time is short)
	_obj=1
	if [ "$dev" = siw ]; then
		case " $devices " in *" rxe "*) _obj=0 ;; esac
	fi
	start=$(date +%s)
	if DAPL2_VERBS_OBJECTS=$_obj builddir=. timeout 1200 \
	   sh "$srcdir/test/abi2/check-dapl2-verbs.sh" \
	   "$dev" "$ia2" "$ip" > "$_log" 2>&1; then
		echo "PASS: Debian's dapl2-utils over $ia2 on $ibdev ($(($(date +%s) - start))s)"
	else
		echo "FAIL: Debian's dapl2-utils over $ia2 on $ibdev ($_log):"
		fail=1
	fi
	grep -E '^(PASS|FAIL|UNSUPPORTED|XFAIL|SKIP|check-dapl2-verbs:)|^    \|' "$_log"
	grep -E "attempt [0-9]: the client connected before" "$_log"
}

# wanted PART: the part is in CHECK_VERBS_PARTS (default: all of them)
wanted() {
	case " ${CHECK_VERBS_PARTS:-suites regress width interop across dapl2} " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# One device's runs.  $1: rxe or siw.
run_device() {
	dev=$1
	case $dev in
	rxe) ibdev=${DATVM_RXE_IBDEV:-rxe0} netdev=${DATVM_RXE_NETDEV:-datrxe0}
	     ip=${DATVM_RXE_IP:-10.77.0.1} ia=verbs-rxe cma=OpenIB-cma
	     ia2=ofa-v2-rxe ;;
	siw) ibdev=${DATVM_SIW_IBDEV:-siw0} netdev=${DATVM_SIW_NETDEV:-datsiw0}
	     ip=${DATVM_SIW_IP:-10.77.1.1} ia=verbs-siw cma=OpenIB-iwarp
	     ia2=ofa-v2-iwarp ;;
	esac
	logs=$top/test/check-verbs/$dev
	mkdir -p "$logs"
	export VERBS_TEST_IP="$ip" VERBS_TEST_NETDEV="$netdev"
	export DAT_TEST_IA=$ia DAT_TEST_ADDR=$ip
	fail=0 n=0
	tests=$tests_default dt_iters=100 width_iters=4000
	if [ "$dev" = siw ]; then
		# a Send or Write completes once sent; a refusal is the end
		export DAT_TEST_LOCAL_COMPLETION=1
		tests=$tests_siw dt_iters=20 width_iters=500
	else
		unset DAT_TEST_LOCAL_COMPLETION
	fi
	wanted suites || tests=
	for t in ${CHECK_VERBS_TESTS:-$tests}; do
		name=$(basename "$t")
		log=$logs/$name.log
		n=$((n + 1))
		if [ ! -x "$t" ]; then
			echo "FAIL: $t is not built"
			fail=1
			continue
		fi
		start=$(date +%s)
		timeout "${CHECK_VERBS_TEST_TIMEOUT:-300}" "./$t" > "$log" 2>&1
		rc=$?
		secs=$(($(date +%s) - start))
		case $rc in
		0) echo "PASS: $t on $ibdev (${secs}s)" ;;
		77) echo "SKIP: $t on $ibdev (see $log)" ;;
		*) echo "FAIL: $t on $ibdev (exit $rc, ${secs}s; $log):"
		   grep -E ':[EF]:|FAIL|Assertion|error' "$log" | head -40
		   fail=1 ;;
		esac
	done
	# dapltest's regression over an OpenFabrics-style line that names our
	# library (fewer iterations: the guest is slow)
	wanted regress &&
	run_dt_check regress "regress.sh" 1000 \
		'^(regress.sh:|Dapltest: Server Exiting)' \
		DAPLTEST_ITERS="${CHECK_VERBS_DT_ITERS:-$dt_iters}" DT_REGRESS_TIMEOUT=900
	# several EPs per thread, every byte checked (issue 13)
	wanted width &&
	run_dt_check width "-w 4 and -w 8" 1900 '^-w [48]: ' \
		DT_WIDTH_ITERS="${CHECK_VERBS_WIDTH_ITERS:-$width_iters}" DT_WIDTH_TIMEOUT=900
	# soft-iWARP against our own iWARP: tcp on one side, verbs on siw0
	# on the other, both ways (issue 14's interoperability)
	if [ "$dev" = siw ] && wanted interop; then
		run_interop "tcp-siw" "-L" "$ia" "-L -F"
		run_interop "$ia" "-L -F" "tcp-siw" "-L"
		run_dt_cross tcp-siw "$ia"
		run_dt_cross "$ia" tcp-siw
	fi
	if [ -n "${CHECK_VERBS_BENCH:-}" ]; then
		if [ "$dev" = rxe ]; then
			sh "$srcdir/bench/verbs-vs-perftest.sh" || fail=1
			sh "$srcdir/bench/verbs-targets.sh" || fail=1
		else
			sh "$srcdir/bench/verbs-targets.sh" --siw || fail=1
		fi
	fi
	wanted dapl2 && run_dapl2
	wanted across &&
	case " ${CHECK_VERBS_ACROSS-rxe siw} " in
	*" $dev "*) run_across "$dev" ;;
	esac
	if [ $fail -eq 0 ]; then
		echo "check-verbs: all $n runs passed on $ibdev"
	else
		echo "check-verbs: FAILED on $ibdev"
	fi
	return $fail
}

in_guest() {
	top=$(pwd)
	# siw counts registered memory against RLIMIT_MEMLOCK even for root
	# (rxe does not); RDMA sites lift it (limits.conf), so do we
	ulimit -l unlimited 2>/dev/null || echo "check-verbs: cannot lift RLIMIT_MEMLOCK"
	srcdir=$(cd "$(dirname "$0")/.." && pwd)
	# netdevs for dev_open's failures: one without any address (down, so
	# not even an IPv6 link-local one), one with an address but no RDMA
	# device
	ip link add dat-noip0 type dummy 2>/dev/null
	ip link add dat-nordma0 type dummy 2>/dev/null &&
		ip addr add 10.77.9.1/24 dev dat-nordma0 &&
		ip link set dat-nordma0 up
	export VERBS_TEST_NOIP_NETDEV=dat-noip0
	export VERBS_TEST_NORDMA_NETDEV=dat-nordma0 VERBS_TEST_NORDMA_PEER=10.77.9.5
	export DAT_TEST_CONF="$top/test/check-verbs/dat.conf"
	export DAT_TEST_TMPDIR="$top/test"
	export DAT_TEST_PROVIDER="$top/test/api/.libs/libdattest.so"
	export CK_DEFAULT_TIMEOUT=120
	status=0
	for d in $devices; do
		run_device "$d" || status=1
	done
	return $status
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

srctop=$(cd "$(dirname "$0")/.." && pwd)
lib=$(pwd)/providers/verbs/.libs/libdaplverbs.so.1
lib2=$(pwd)/providers/verbs/.libs/libdapl2verbs.so.2
tcplib=$(pwd)/providers/tcp/.libs/libdapltcp.so.1
if [ ! -f dat.conf ] || [ ! -e "$lib" ]; then
	echo "FAIL: run from the top build directory, with the verbs provider built ($lib)"
	exit 1
fi
# The guest's dat.conf: the build tree's software lines, then one verbs
# entry per device by netdev and by address, and the OpenFabrics names.
{
	grep -E '^(ofi-tcp|tcp|dattest) u1\.2 ' dat.conf
	for v in "verbs-rxe datrxe0" "verbs-rxe-ip 10.77.0.1" "OpenIB-cma datrxe0" \
		 "verbs-siw datsiw0" "verbs-siw-ip 10.77.1.1" "OpenIB-iwarp datsiw0"; do
		set -- $v
		echo "$1 u1.2 nonthreadsafe default $lib dapl.1.2 \"$2 0\" \"\""
	done
	# the u2.0 verbs entries Debian's dapl2-utils use (DAT 2.0 programs
	# see only u2.0 lines)
	for v in "ofa-v2-rxe datrxe0" "ofa-v2-iwarp datsiw0"; do
		set -- $v
		echo "$1 u2.0 nonthreadsafe default $lib2 dapl.2.0 \"$2 0\" \"\""
	done
	# our own iWARP at siw0's address, for the interoperability runs
	echo "tcp-siw u1.2 nonthreadsafe default $tcplib dapl.1.2 \"10.77.1.1 0\" \"\""
} > test/check-verbs/dat.conf

# Debian's dapl2-utils: the guest has no network, so fetched here
CHECK_VERBS_DAPL2_SKIP=
if wanted dapl2 &&
   ! srcdir=$srctop sh "$srctop/test/abi2/check-dapl2-verbs.sh" --fetch; then
	CHECK_VERBS_DAPL2_SKIP="dapl2-utils could not be downloaded (apt-get download dapl2-utils)"
	echo "########################################################"
	echo "SKIP: $CHECK_VERBS_DAPL2_SKIP; they will not run in the guest"
	echo "########################################################"
fi
export CHECK_VERBS_DAPL2_SKIP

siw=
case " $devices " in *" siw "*) siw=--siw ;; esac
script=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
echo "check-verbs: booting a guest (test/vm/datvm $siw; devices: $devices) ..."
CHECK_VERBS_DEVICES=$devices \
	"$srctop/test/vm/datvm" $siw --timeout "${CHECK_VERBS_TIMEOUT:-2100}" \
	-- sh "$script" --in-guest
rc=$?
case $rc in
0) echo "check-verbs: PASS ($devices)" ;;
124) echo "FAIL: check-verbs: the guest run timed out"; exit 1 ;;
125) skip "check-verbs: the guest could not start (see its output above); nothing was tested" ;;
*) echo "FAIL: check-verbs: tests failed in the guest (exit $rc); logs in test/check-verbs/"
   exit 1 ;;
esac
exit 0
