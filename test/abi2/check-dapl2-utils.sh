#!/bin/sh
# check-dapl2-utils.sh - Debian 12's unmodified DAT 2.0 programs over our
# libdat2.so.2 and the u2.0 tcp provider (issue 26).
#
# Fetches dapl2-utils (OpenFabrics dapl 2.1.10's dapltest and dtest, built
# against libdat2.so.2) with apt-get download (no root; or
# DAPL2_UTILS_DEB=/path/to/dapl2-utils_*.deb), unpacks it under
# test/abi2/dapl2-utils (never installs it), and runs it with
# LD_LIBRARY_PATH at our dat/.libs and DAT_OVERRIDE at the build tree's
# dat.conf, whose "tcp u2.0" line names providers/tcp/libdapl2tcp.so.2:
#   dapltest -T S on a free port; -T T Send/Recv, -T T with RDMA Write and
#   Read and -V (data checked); -T P RDMA Write; -T Q; the server must exit
#   0 having run them; -T F queryinfo, hwconn, endpoint, pz, mem, connmgt
#   (no server; every case must PASS); -T L, every limit test;
#   dtest (default, -p polling, -c CNO) server and client: both must print
#   "DAPL Test Complete. PASSED" and neither an error (dtest prints PASSED
#   and exits 0 even after failures, so its text is checked);
#   dtestcm (1000 connections, polled and -w waited): "ALL 1000 CONNECTED"
#   on both sides; dtestsrq (one and four connections on an SRQ): "DAPL RC
#   SRQ Test Complete." on both sides.
# dtest, dtestcm and dtestsrq use fixed TCP ports (45248 and 15828 for
# their own socket exchange), so the script runs in a network namespace of
# its own (unshare -n, loopback up) where it can: two make checks at once
# would otherwise connect to each other's servers.  Inside it the
# ephemeral range starts above the fixed ports: dtestcm's 1000 connections
# leave closing sockets behind whose local ports could be 45250 (seen:
# dtestsrq's server then got DAT_CONN_QUAL_IN_USE).  Without a namespace,
# a taken port SKIPs the dtest part loudly.
# Without the package the whole check is SKIPPED (exit 77) loudly.
set -u
srcdir=${srcdir:-.}

work=test/abi2/dapl2-utils
conf=${DAT_TEST_CONF:-$(pwd)/dat.conf}
ia=tcp

skip() {
	echo "########################################################"
	echo "SKIP: $*"
	echo "      Debian's dapl2-utils did not run over libdat2.so.2."
	echo "########################################################"
	exit 77
}

mkdir -p test/abi2
why=$(sh "$srcdir/test/abi2/fetch-dapl2-utils.sh" "$work" 2>&1) || skip "$why"
echo "(dapl2-utils $(cat "$work/VERSION" 2>/dev/null))"

# a network namespace of our own (see above), when we may make one;
# only now: inside it apt-get cannot reach the archive (the run again
# from the top finds the package unpacked)
if [ -z "${DAPL2_UTILS_NETNS:-}" ] && command -v unshare > /dev/null 2>&1 &&
   command -v ip > /dev/null 2>&1 && unshare -n true 2>/dev/null; then
	DAPL2_UTILS_NETNS=1
	export DAPL2_UTILS_NETNS
	exec unshare -n sh -c 'ip link set lo up &&
		echo "46000 60999" > /proc/sys/net/ipv4/ip_local_port_range &&
		exec sh "$0"' "$0"
fi

[ -f dat/.libs/libdat2.so.2 ] || { echo "FAIL: no dat/.libs/libdat2.so.2"; exit 1; }
grep -q "^$ia u2.0 " "$conf" || { echo "FAIL: no '$ia u2.0' line in $conf"; exit 1; }
LD_LIBRARY_PATH=$(pwd)/dat/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
DAT_OVERRIDE=$conf
export LD_LIBRARY_PATH DAT_OVERRIDE
DAPLTEST=$(pwd)/$work/usr/bin/dapltest
DTEST=$(pwd)/$work/usr/bin/dtest
DTESTCM=$(pwd)/$work/usr/bin/dtestcm
DTESTSRQ=$(pwd)/$work/usr/bin/dtestsrq
export DAPLTEST
# theirs must resolve dat_* from ours, not from an installed libdat2
ldd "$DAPLTEST" | grep -q "libdat2.so.2 => $(pwd)/dat/.libs/" ||
	{ echo "FAIL: dapltest does not load our libdat2.so.2:"; ldd "$DAPLTEST"; exit 1; }
# A sanitizer build (configure --enable-sanitizers): Debian's programs are
# not instrumented, so the ASan runtime our library needs must come first,
# and leaks of theirs are not ours to report.
asan=$(ldd dat/.libs/libdat2.so.2 | awk '/libasan\.so/ { print $3; exit }')
if [ -n "$asan" ]; then
	LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export LD_PRELOAD ASAN_OPTIONS
fi

. "$srcdir/test/dapltest/scripts/dt-lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dapl2-utils.XXXXXX") || exit 1
dsrv=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$dsrv" ]; then
		kill "$dsrv" 2>/dev/null
		wait "$dsrv" 2>/dev/null
	fi
	dt_kill_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0

# run ID PROGRAM ARGS...: bounded, output in $tmp/ID.out, status in $rc
run() {
	_id=$1
	shift
	echo "+ $(basename "$1") $(shift; echo "$*")"
	timeout 120 "$@" </dev/null >"$tmp/$_id.out" 2>&1
	rc=$?
}

# expect ID PATTERN: status 0 and a line matching PATTERN; no libdat error
expect() {
	if [ "$rc" -ne 0 ] || ! grep -q "$2" "$tmp/$1.out" ||
	   grep -q "not implemented" "$tmp/$1.out"; then
		echo "FAIL: $1 (status $rc)"; cat "$tmp/$1.out"; fail=1
	else
		echo "PASS: $1"
	fi
}

dt_start_server "$ia" "$tmp" 300 ||
	{ echo "FAIL: dapltest -T S did not start"; cat "$tmp/server.err"; exit 1; }
echo "dapltest server on port $dt_port"
run sr "$DAPLTEST" -T T -s 127.0.0.1 -D $ia -n "$dt_port" -i 100 \
	client SR 256 server SR 256
expect sr 'End of Work -- Client Exiting'
run rdma "$DAPLTEST" -T T -s 127.0.0.1 -D $ia -n "$dt_port" -i 500 -t 2 -w 2 \
	-V client SR 4096 server RW 4096 server RR 4096 client SR 4096 \
	server SR 4096
expect rdma 'Total RDMA Read .*MB/Sec'
run perf "$DAPLTEST" -T P -s 127.0.0.1 -D $ia -n "$dt_port" -i 1000 RW 4096 2
expect perf '^raw: RW, 1000, 4096, 2,'
run quit "$DAPLTEST" -T Q -s 127.0.0.1 -D $ia -n "$dt_port"
expect quit 'End of Work -- Client Exiting'
dt_wait_server
if [ "$dt_server_rc" -ne 0 ] || ! grep -q 'Server (tcp):  Exiting' "$tmp/server.log"; then
	echo "FAIL: the dapltest server (status $dt_server_rc)"
	cat "$tmp/server.log" "$tmp/server.err"; fail=1
else
	echo "PASS: the dapltest server exited 0"
fi

# fft CASE COUNT: every one of COUNT cases passes
fft() {
	run "fft-$1" "$DAPLTEST" -T F -D $ia -f "$1"
	n=$(grep -c 'Result: PASS' "$tmp/fft-$1.out")
	if [ "$rc" -ne 0 ] || [ "$n" -ne "$2" ] ||
	   grep -q 'Result: FAIL' "$tmp/fft-$1.out"; then
		echo "FAIL: fft $1: $n of $2 passed (status $rc)"
		cat "$tmp/fft-$1.out"; fail=1
	else
		echo "PASS: fft $1 ($2 cases)"
	fi
}
fft queryinfo 17
fft hwconn 4
fft endpoint 3
fft pz 3
fft mem 5
fft connmgt 2

# -T L: 2.1.10 prints no Result line; each test's count must be there
run limit "$DAPLTEST" -T L -D $ia -w 8 -m 100
n=$(grep -c '^Limitation Test' "$tmp/limit.out")
if [ "$rc" -ne 0 ] || [ "$n" -ne 10 ] ||
   grep -Eq 'FAIL|[Ee]rror|not implemented' "$tmp/limit.out" ||
   ! grep -q 'IAs opened: 100' "$tmp/limit.out" ||
   ! grep -q 'EPs created: 100' "$tmp/limit.out" ||
   ! grep -q 'LMRs created: 100' "$tmp/limit.out" ||
   ! grep -q 'dat_ep_post_recv fails: DAT_INSUFFICIENT_RESOURCES' "$tmp/limit.out" ||
   ! grep -q 'LMR of 0x[0-9a-f]* bytes OK' "$tmp/limit.out"; then
	echo "FAIL: dapltest -T L (status $rc, $n of 10 tests)"
	cat "$tmp/limit.out"; fail=1
else
	echo "PASS: dapltest -T L (10 limit tests)"
fi

# listening PORT: whether something listens on TCP port PORT
listening() {
	ss -Htln "sport = :$1" | grep -q .
}

# pair NAME PORT "SERVER ARGS" "CLIENT ARGS": the server, and the client
# once the server listens on PORT (or has given up); outputs in
# $tmp/NAME-s.out and $tmp/NAME-c.out, statuses in $src and $rc
pair() {
	_name=$1
	_port=$2
	timeout 120 $3 </dev/null >"$tmp/$_name-s.out" 2>&1 &
	dsrv=$!
	i=0
	while [ $i -lt 400 ] && kill -0 "$dsrv" 2>/dev/null &&
	      ! listening "$_port"; do
		i=$((i + 1)); sleep 0.05
	done
	run "$_name-c" $4
	wait "$dsrv"; src=$?; dsrv=
}

# both NAME PATTERN: both sides exited 0 and printed PATTERN, no error
both() {
	for side in "$1-s" "$1-c"; do
		if [ "$rc" -ne 0 ] || [ "$src" -ne 0 ] || ! grep -q "$2" "$tmp/$side.out" ||
		   grep -Eqi 'error|fail|not implemented|segmentation' "$tmp/$side.out"; then
			echo "FAIL: $side (client status $rc, server status $src)"
			cat "$tmp/$side.out"; fail=1
		else
			echo "PASS: $side"
		fi
	done
}

# dtest's conn qual 45248 is our tcp port, and 15828 its socket exchange:
# in a shared network namespace a taken one skips that part
if [ -z "${DAPL2_UTILS_NETNS:-}" ] && { listening 45248 || listening 15828; }; then
	echo "########################################################"
	echo "SKIP: dtest, dtestcm, dtestsrq: port 45248 or 15828 is in use"
	echo "      (no network namespace of our own); they cannot choose others"
	echo "########################################################"
	exit $fail
fi
for opt in "" -p -c; do
	# the server listens on its socket-exchange port 15828 first
	pair "dtest$opt" 15828 "$DTEST -s -P $ia $opt" "$DTEST -P $ia -h 127.0.0.1 $opt"
	if grep -q 'DAT_CONN_QUAL_IN_USE' "$tmp/dtest$opt-s.out"; then
		# taken between the look above and the listen (45248 is in
		# the ephemeral range): not a failure of ours
		echo "########################################################"
		echo "SKIP: dtest: port 45248 was taken as the server started"
		echo "########################################################"
		exit $fail
	fi
	both "dtest$opt" 'DAPL Test Complete. PASSED'
done
# the connection rate test: 1000 connections in bursts of 100, the
# requests polled, then waited for (-w)
for opt in "" -w; do
	pair "dtestcm$opt" 15828 "$DTESTCM -s -P $ia -p 45249 $opt" \
		"$DTESTCM -P $ia -h 127.0.0.1 -p 45249 $opt"
	both "dtestcm$opt" 'ALL 1000 CONNECTED'
done
# Send/Recv over EPs that share an SRQ.  Its message size is the
# provider's DAT_IB_TRANSPORT_MTU attribute (dtestsrq refuses to run
# without it), so no -b: the attribute must be there.
for opt in "" "-c 4 -B 10 -t 5"; do
	# shellcheck disable=SC2086 # opt is words
	pair "dtestsrq${opt:+-c4}" 45250 "$DTESTSRQ -s -P $ia -p 45250 $opt" \
		"$DTESTSRQ -P $ia -h 127.0.0.1 -p 45250 $opt"
	both "dtestsrq${opt:+-c4}" 'DAPL RC SRQ Test Complete.'
done
exit $fail
