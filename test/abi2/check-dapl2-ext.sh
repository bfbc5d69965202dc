#!/bin/sh
# check-dapl2-ext.sh - Debian 12's unmodified dtestx (dapl2-utils, OpenFabrics
# dapl 2.1.10) over our libdat2.so.2 and the u2.0 tcp provider on both
# sides: the DAT 2.0 IB extensions (dat_extension_op(3)).
#
# dtestx without -u runs, over one RC connection, RDMA Write with immediate
# data both ways (each side's receive must complete as
# DAT_IB_RDMA_WRITE_IMMED_DATA with the peer's immediate), compare-and-swap
# (one side's compare fails, the other's swaps) and two fetch-and-adds,
# each side checking the original values it got back and what the peer
# did to its memory.  Both sides must exit 0, print the three
# "test - PASSED" lines and the final "immed/atomic test PASSED", and
# neither may skip an operation ("Skipping ...: not supported by HW",
# which means our attributes said FALSE) or print an error.
#
# Fetches dapl2-utils with fetch-dapl2-utils.sh (apt-get download, or
# DAPL2_UTILS_DEB=/path/to/dapl2-utils_*.deb), into a directory of its own;
# SKIPs loudly (exit 77) without it.  dtestx has two fixed ports: 15828
# (its own TCP exchange of addresses) and conn qual 31112 (our tcp port).
# Where unshare -n works (root) both sides run in a network namespace of
# their own; otherwise, when either port is taken, the check SKIPs loudly.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
work=test/abi2/dapl2-ext
conf=${DAT_TEST_CONF:-$(pwd)/dat.conf}
ia=tcp
xport=15828      # dtestx CONN_PORT
qport=31112      # dtestx SERVER_ID, the server's PSP

skip() {
	echo "########################################################"
	echo "SKIP: $*"
	echo "      Debian's dtestx did not run over libdat2.so.2."
	echo "########################################################"
	exit 77
}

mkdir -p test/abi2
why=$(sh "$srcdir/test/abi2/fetch-dapl2-utils.sh" "$work" 2>&1) || skip "$why"
[ -x "$work/usr/bin/dtestx" ] || skip "dapl2-utils has no dtestx"
echo "(dapl2-utils $(cat "$work/VERSION" 2>/dev/null))"

# dtestx's fixed ports are shared with everything else on the host
# (another dtestx, or dtest of check-dapl2-utils.sh, which uses 15828
# too): where we may, run both sides in a network namespace of their own,
# whose loopback nobody else uses.  There, and only there, the RSTs port
# 31112 sends are dropped, so a client that connects before the server
# listens (dtestx's race, below) is not refused: the kernel sends its SYN
# again until the listener is there.
if [ -z "${DAPL2_EXT_NETNS:-}" ] && command -v unshare > /dev/null 2>&1 &&
   command -v ip > /dev/null 2>&1 &&
   unshare -n sh -c 'ip link set lo up' > /dev/null 2>&1; then
	DAPL2_EXT_NETNS=1
	export DAPL2_EXT_NETNS
	exec unshare -n sh -c 'ip link set lo up &&
		if iptables -A OUTPUT -o lo -p tcp --sport '$qport' \
			--tcp-flags RST RST -j DROP 2>/dev/null; then
			DAPL2_EXT_NORST=1; export DAPL2_EXT_NORST
		fi
		exec sh "$0"' "$0"
fi
[ -n "${DAPL2_EXT_NETNS:-}" ] && echo "(in a network namespace of its own)"
[ -n "${DAPL2_EXT_NORST:-}" ] && echo "(a connect before the server listens waits for the listener)"

[ -f dat/.libs/libdat2.so.2 ] || { echo "FAIL: no dat/.libs/libdat2.so.2"; exit 1; }
grep -q "^$ia u2.0 " "$conf" || { echo "FAIL: no '$ia u2.0' line in $conf"; exit 1; }
LD_LIBRARY_PATH=$(pwd)/dat/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
DAT_OVERRIDE=$conf
export LD_LIBRARY_PATH DAT_OVERRIDE
DTESTX=$(pwd)/$work/usr/bin/dtestx
ldd "$DTESTX" | grep -q "libdat2.so.2 => $(pwd)/dat/.libs/" ||
	{ echo "FAIL: dtestx does not load our libdat2.so.2:"; ldd "$DTESTX"; exit 1; }
# A sanitizer build: Debian's program is not instrumented, so the ASan
# runtime our library needs comes first, and its leaks are not ours.
asan=$(ldd dat/.libs/libdat2.so.2 | awk '/libasan\.so/ { print $3; exit }')
if [ -n "$asan" ]; then
	LD_PRELOAD=$asan${LD_PRELOAD:+:$LD_PRELOAD}
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
	export LD_PRELOAD ASAN_OPTIONS
fi

command -v ss > /dev/null 2>&1 || skip "no ss to see whether dtestx's fixed ports are free"
listening() { ss -Htln "sport = :$1" | grep -q .; }
for p in $xport $qport; do
	listening "$p" && skip "port $p is in use; dtestx cannot choose another"
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dapl2-ext.XXXXXX") || exit 1
srv=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$srv" ]; then
		kill "$srv" 2>/dev/null
		wait "$srv" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# Line-buffered output, so what a killed server printed is still there.
command -v stdbuf > /dev/null 2>&1 && lb="stdbuf -oL" || lb=
command -v nice > /dev/null 2>&1 && nice="nice -n 19" || nice=

# dtestx's own race: its server opens the PSP only after the address
# exchange, and its client connects right after that exchange, so on a
# busy machine the client can reach port 31112 before anybody listens
# there: NON_PEER_REJECTED (0x4003) at the client, and a server waiting
# for a request forever.  That attempt is ended and run again (up to 10
# times); anything else counts.  The client runs at the lowest priority,
# which makes the race rarer on a busy machine (it is no cure).
try=1
while :; do
	echo "+ dtestx -s -P $ia"
	timeout 60 $lb "$DTESTX" -s -P $ia </dev/null >"$tmp/server.out" 2>&1 &
	srv=$!
	# the client goes once the server takes its address exchange (or died)
	i=0
	while [ $i -lt 400 ] && kill -0 "$srv" 2>/dev/null && ! listening $xport; do
		i=$((i + 1)); sleep 0.05
	done
	echo "+ dtestx -P $ia -h 127.0.0.1"
	timeout 60 $nice $lb "$DTESTX" -P $ia -h 127.0.0.1 </dev/null >"$tmp/client.out" 2>&1
	crc=$?
	if [ $crc -ne 0 ] && [ $try -lt 10 ] &&
	   grep -q 'unexpected event, !conn established: 0x4003' "$tmp/client.out" &&
	   ! grep -q 'accepted CR' "$tmp/server.out"; then
		echo "(attempt $try: the client connected before the server listened; again)"
		kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null; srv=
		try=$((try + 1))
		continue
	fi
	wait "$srv"; src=$?; srv=
	break
done

# (outside a namespace of our own: dtest of check-dapl2-utils.sh uses
# 15828 too, and a parallel make check may run it meanwhile)
if grep -q 'DAT_CONN_QUAL_IN_USE' "$tmp/server.out"; then
	skip "port $qport was taken as the dtestx server started"
fi
if grep -q "Couldn't listen to port $xport" "$tmp/server.out"; then
	skip "port $xport was taken as the dtestx server started"
fi
fail=0
for side in server client; do
	[ $side = server ] && rc=$src || rc=$crc
	bad=
	[ "$rc" -eq 0 ] || bad="exit status $rc"
	for pass in 'RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED' \
		    'CMP_SWAP test - PASSED' 'FETCH_ADD test - PASSED' \
		    'IB extension test - immed/atomic test PASSED'; do
		grep -q "$pass" "$tmp/$side.out" || bad="${bad:+$bad; }no '$pass'"
	done
	if grep -Eqi 'error|skipping|not implemented|unexpected' "$tmp/$side.out"; then
		bad="${bad:+$bad; }an error or a skipped operation"
	fi
	if [ -n "$bad" ]; then
		echo "FAIL: dtestx $side: $bad"; cat "$tmp/$side.out"; fail=1
	else
		echo "PASS: dtestx $side"
		grep -E 'received immed_data|original data|final result|PASSED' \
			"$tmp/$side.out" | sed 's/^/    /'
	fi
done
exit $fail
