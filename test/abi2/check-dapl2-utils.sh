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
#   Read and -V (data checked); -T P RDMA Write; -T F queryinfo (17 cases,
#   no server); -T Q; the server must exit 0 having run them;
#   dtest server and client (its fixed conn qual 45248: when that port is
#   taken the dtest part is SKIPPED loudly): both must print
#   "DAPL Test Complete. PASSED" and neither an error (dtest prints PASSED
#   and exits 0 even after failures, so its text is checked).
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
if [ ! -x "$work/usr/bin/dapltest" ]; then
	rm -rf "$work"; mkdir -p "$work"
	deb=${DAPL2_UTILS_DEB:-}
	if [ -z "$deb" ]; then
		command -v apt-get > /dev/null 2>&1 ||
			skip "no apt-get to fetch dapl2-utils"
		( cd "$work" && timeout 120 apt-get download dapl2-utils ) \
			> "$work.log" 2>&1 ||
			skip "apt-get download dapl2-utils failed: $(tail -1 "$work.log")"
		deb=$(ls "$work"/dapl2-utils_*.deb 2>/dev/null | head -1)
	fi
	[ -f "$deb" ] || skip "no dapl2-utils .deb"
	dpkg-deb -x "$deb" "$work" || skip "cannot unpack $deb"
	dpkg-deb -f "$deb" Version > "$work/VERSION" 2>/dev/null
fi
echo "(dapl2-utils $(cat "$work/VERSION" 2>/dev/null))"

[ -f dat/.libs/libdat2.so.2 ] || { echo "FAIL: no dat/.libs/libdat2.so.2"; exit 1; }
grep -q "^$ia u2.0 " "$conf" || { echo "FAIL: no '$ia u2.0' line in $conf"; exit 1; }
LD_LIBRARY_PATH=$(pwd)/dat/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
DAT_OVERRIDE=$conf
export LD_LIBRARY_PATH DAT_OVERRIDE
DAPLTEST=$(pwd)/$work/usr/bin/dapltest
DTEST=$(pwd)/$work/usr/bin/dtest
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

run fft "$DAPLTEST" -T F -D $ia -f queryinfo
n=$(grep -c 'Result: PASS' "$tmp/fft.out")
if [ "$rc" -ne 0 ] || [ "$n" -ne 17 ] || grep -q 'Result: FAIL' "$tmp/fft.out"; then
	echo "FAIL: fft queryinfo: $n of 17 passed (status $rc)"
	grep -B6 'Result: FAIL' "$tmp/fft.out"; fail=1
else
	echo "PASS: fft queryinfo (17 cases)"
fi

# dtest: its conn qual 45248 is our tcp port; skip that part when taken
if command -v ss > /dev/null 2>&1 && ss -Htln 'sport = :45248' | grep -q .; then
	echo "########################################################"
	echo "SKIP: dtest: port 45248 is in use; dtest cannot choose another"
	echo "########################################################"
else
	timeout 120 "$DTEST" -s -P $ia </dev/null >"$tmp/dtest-s.out" 2>&1 &
	dsrv=$!
	# the client goes once the server listens (or has given up)
	i=0
	while [ $i -lt 200 ] && kill -0 "$dsrv" 2>/dev/null &&
	      ! ss -Htln 'sport = :45248' | grep -q .; do
		i=$((i + 1)); sleep 0.05
	done
	run dtest-c "$DTEST" -P $ia -h 127.0.0.1
	wait "$dsrv"; src=$?; dsrv=
	if grep -q 'DAT_CONN_QUAL_IN_USE' "$tmp/dtest-s.out"; then
		# taken between the look above and the listen (45248 is in
		# the ephemeral range): not a failure of ours
		echo "########################################################"
		echo "SKIP: dtest: port 45248 was taken as the server started"
		echo "########################################################"
		exit $fail
	fi
	for side in dtest-s dtest-c; do
		if ! grep -q 'DAPL Test Complete. PASSED' "$tmp/$side.out" ||
		   grep -Eqi 'error|fail|not implemented' "$tmp/$side.out"; then
			echo "FAIL: $side (client status $rc, server status $src)"
			cat "$tmp/$side.out"; fail=1
		else
			echo "PASS: $side"
		fi
	done
fi
exit $fail
