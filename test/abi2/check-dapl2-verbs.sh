#!/bin/sh
# check-dapl2-verbs.sh - Debian 12's unmodified DAT 2.0 programs
# (dapl2-utils: OpenFabrics dapl 2.1.10's dapltest, dtest, dtestcm,
# dtestsrq, dtestx) over our libdat2.so.2 and the u2.0 verbs provider on a
# real RDMA device: rxe (Soft-RoCE) or siw (soft-iWARP) in the project's
# QEMU guest (issue 26).  scripts/check-verbs.sh runs it in the guest once
# per device; the guest has no network, so the package is fetched on the
# host first:
#
#   check-dapl2-verbs.sh --fetch              host, top build directory:
#       apt-get download dapl2-utils (or DAPL2_UTILS_DEB=/path/to/.deb) and
#       unpack it under test/abi2/dapl2-utils (never installed); exit 77
#       when it cannot be had
#   check-dapl2-verbs.sh rxe|siw IA ADDRESS   guest, top build directory:
#       IA is the device's u2.0 entry in $DAT_TEST_CONF, ADDRESS its IP
#
# What runs, each bounded, each judged by its text as well as its exit
# status (dtest and dtestsrq print their verdict and exit 0 either way):
#   dapltest -T S, then against it -T T Send/Recv, -T T RDMA Write and
#     RDMA Read with -V (data checked), a mix on 2 threads x 2 EPs, -T P
#     RDMA Write and Read, -T Q (the server must exit 0);
#   dapltest -T L (every limit test), -T F (every feature test), unless
#     DAPL2_VERBS_OBJECTS=0 (they test objects, not the device: the guest
#     runs them on one of its devices);
#   dtest: default (wait), -p (polling), -c (CNO): "PASSED" on both sides;
#   dtestcm: every connection made on both sides (50);
#   dtestsrq: an SRQ shared by 4 connections, 3 bursts of 10 messages;
#   dtestx: RDMA Write with immediate data, fetch-and-add, compare-and-swap.
#     On siw (iWARP has neither) the atomics must be skipped as not
#     supported by the device and the Write with immediate refused as not
#     supported; those lines say UNSUPPORTED, not PASS or FAIL.
#   dapltest -T P RR with 2 segments on siw: UNSUPPORTED (iWARP scatters a
#     Read into one local segment); with 1 it must pass.
# Output: one PASS:, FAIL:, UNSUPPORTED: or XFAIL: line per run (XFAIL:
# a failure whose cause is known and outside the verbs provider, matched
# exactly; none today); exit 1 on any FAIL.
set -u
srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
work=test/abi2/dapl2-utils

if [ "${1:-}" = --fetch ]; then
	mkdir -p test/abi2
	exec sh "$srcdir/test/abi2/fetch-dapl2-utils.sh" "$work"
fi

if [ $# -ne 3 ]; then
	echo "usage: $0 --fetch | rxe|siw IA ADDRESS" >&2
	exit 2
fi
kind=$1 ia=$2 addr=$3
bin=$(pwd)/$work/usr/bin
conf=${DAT_TEST_CONF:-$(pwd)/dat.conf}
if [ ! -x "$bin/dtestx" ]; then
	echo "FAIL: no dapl2-utils under $work (check-dapl2-verbs.sh --fetch on the host)"
	exit 1
fi
grep -q "^$ia u2.0 " "$conf" || { echo "FAIL: no '$ia u2.0' line in $conf"; exit 1; }
LD_LIBRARY_PATH=$(pwd)/dat/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
DAT_OVERRIDE=$conf
export LD_LIBRARY_PATH DAT_OVERRIDE
ldd "$bin/dtest" | grep -q "libdat2.so.2 => $(pwd)/dat/.libs/" ||
	{ echo "FAIL: dtest does not load our libdat2.so.2"; ldd "$bin/dtest"; exit 1; }
what="over $ia ($kind, dapl2-utils $(cat "$work/VERSION" 2>/dev/null))"
echo "check-dapl2-verbs: Debian's dapl2-utils $what"

DAPLTEST=$bin/dapltest
. "$srcdir/test/dapltest/scripts/dt-lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dapl2-verbs.XXXXXX") || exit 1
spid=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$spid" ]; then
		kill "$spid" 2>/dev/null
		wait "$spid" 2>/dev/null
	fi
	dt_kill_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP
fail=0 runs=0 npass=0 nxfail=0 nunsup=0

pass() { runs=$((runs + 1)); npass=$((npass + 1)); echo "PASS: $*"; }
unsupported() { runs=$((runs + 1)); nunsup=$((nunsup + 1)); echo "UNSUPPORTED: $*"; }
xfail() { runs=$((runs + 1)); nxfail=$((nxfail + 1)); echo "XFAIL: $*"; }
failed() {
	runs=$((runs + 1)); fail=1
	_f=$1; shift
	echo "FAIL: $*"
	[ -n "$_f" ] && sed 's/^/    | /' "$_f" | tail -40
}

# run ID SECS PROGRAM ARGS...: bounded, output in $tmp/ID.out, status in rc
run() {
	_id=$1 _secs=$2
	shift 2
	timeout "$_secs" "$@" </dev/null >"$tmp/$_id.out" 2>&1
	rc=$?
}

# expect ID PATTERN: status 0, a line matching PATTERN, no libdat refusal
expect() {
	if [ "$rc" -ne 0 ] || ! grep -q "$2" "$tmp/$1.out" ||
	   grep -qi "not implemented" "$tmp/$1.out"; then
		failed "$tmp/$1.out" "dapltest $1 (status $rc)"
	else
		pass "dapltest $1 ($(grep -m1 "$2" "$tmp/$1.out" | cut -c1-70))"
	fi
}

# ---- dapltest: transactions and performance against one server ---------
iters=${DAPL2_VERBS_ITERS:-50}
if ! dt_start_server "$ia" "$tmp" 900; then
	failed "$tmp/server.err" "dapltest -T S did not start"
else
	c="-s $addr -D $ia -n $dt_port"
	# shellcheck disable=SC2086 # $c is split on purpose
	{
	run T-SR 300 "$DAPLTEST" -T T $c -i "$iters" -t 1 -w 1 \
		client SR 256 server SR 256
	expect T-SR 'End of Work -- Client Exiting'
	run T-RW 300 "$DAPLTEST" -T T $c -i "$iters" -t 1 -w 1 -V \
		client SR 256 server RW 4096 server SR 256
	expect T-RW 'Total RDMA Write .*MB/Sec'
	run T-RR 300 "$DAPLTEST" -T T $c -i "$iters" -t 1 -w 1 -V \
		client SR 256 server RR 4096 server SR 256
	expect T-RR 'Total RDMA Read .*MB/Sec'
	run T-mix 300 "$DAPLTEST" -T T $c -i "$iters" -t 2 -w 2 -V \
		client SR 256 server RW 4096 server SR 256 client SR 4096 \
		server RR 4096 server SR 256
	expect T-mix 'End of Work -- Client Exiting'
	run P-RW 300 "$DAPLTEST" -T P $c -i 1000 RW 4096 2
	expect P-RW '^raw: RW, 1000, 4096, 2,'
	if [ "$kind" = rxe ]; then
		run P-RR 300 "$DAPLTEST" -T P $c -i 1000 RR 4096 2
		expect P-RR '^raw: RR, 1000, 4096, 2,'
	else
		# iWARP scatters a Read into one local segment (siw's
		# max_sge_rd; max_rdma_read_iov 1): a 2-segment Read is
		# refused at post (DAT_INVALID_PARAMETER, ARG2), which
		# dapltest's perf client reports by exiting 0 silently
		run P-RR 300 "$DAPLTEST" -T P $c -i 1000 RR 4096 1
		expect P-RR '^raw: RR, 1000, 4096, 1,'
		unsupported "dapltest -T P RR 4096 2 on $kind (an iWARP Read scatters into one local segment)"
	fi
	run Q 60 "$DAPLTEST" -T Q $c
	expect Q 'End of Work -- Client Exiting'
	}
	dt_wait_server
	if [ "$dt_server_rc" -ne 0 ] ||
	   ! grep -q "Server ($ia):  Exiting" "$tmp/server.log"; then
		cat "$tmp/server.err" >> "$tmp/server.log"
		failed "$tmp/server.log" "the dapltest server (status $dt_server_rc)"
	else
		pass "the dapltest server ran them all and exited 0"
	fi
fi

# ---- dapltest -T L and -T F: the objects, not the device's operations ---
# They run on one device per guest (DAPL2_VERBS_OBJECTS=0 elsewhere): the
# guest's time is short.
if [ "${DAPL2_VERBS_OBJECTS:-1}" = 0 ]; then
	echo "(dapltest -T L and -T F: run on the other device of this guest)"
else
run L 600 "$DAPLTEST" -T L -D "$ia" -w 8 -m 100
n=$(grep -c '^Limitation Test ' "$tmp/L.out")
# Each object test must reach -m 100; limit_rpost posts until the queue
# refuses, limit_size_lmr doubles a registration until it (or dapltest's
# own malloc, in a small guest) fails: those two end in a refusal.
reached=$(grep -cE '^LimitTest: (IAs opened|PZs created|CNOs created|EVDs created|EPs created|RSPs created|PSPs created|LMRs created): 100$' "$tmp/L.out")
if [ "$rc" -ne 0 ] || [ "$n" -ne 10 ] || [ "$reached" -ne 8 ] ||
   ! grep -q 'recv buffers posted per EP' "$tmp/L.out" ||
   ! grep -qE 'LMR of .* bytes OK|Largest LMR was' "$tmp/L.out" ||
   grep -qi 'not implemented' "$tmp/L.out"; then
	# without limit_rpost's hundreds of "posted #n" lines, so the
	# object that stopped short and its DAT code are in the 40 shown
	grep -v '^LimitTest: dat_ep_post_recv #' "$tmp/L.out" > "$tmp/L.short"
	failed "$tmp/L.short" "dapltest -T L: $n of 10 limit tests ran, $reached of 8 reached 100 (status $rc)"
else
	pass "dapltest -T L: all 10 limit tests, 8 object limits reached 100, $(grep -m1 -E 'LMR of .* bytes OK|Largest LMR was' "$tmp/L.out" | sed 's/^LimitTest: //')"
fi

# ---- dapltest -T F: every feature test ------------------------------------
for f in hwconn endpoint pz mem connmgt queryinfo; do
	run "F-$f" 300 "$DAPLTEST" -T F -D "$ia" -f "$f"
	np=$(grep -c '^Result: PASS' "$tmp/F-$f.out")
	nu=$(grep -c '^Result: UNSUPP' "$tmp/F-$f.out")
	if [ "$rc" -ne 0 ] || [ "$np" -eq 0 ] ||
	   grep -qE '^Result: FAIL' "$tmp/F-$f.out"; then
		failed "$tmp/F-$f.out" "dapltest -T F -f $f (status $rc, $np passed)"
	else
		pass "dapltest -T F -f $f ($np cases passed, $nu unsupported by dapltest)"
	fi
done
fi

# ---- the dtest family: a server and a client on the device's address ---
# They exchange the server's address over a TCP socket on port 15828
# first (dapl 2.1.10's dtest, dtestcm, dtestx); dtestsrq listens on the
# RDMA CM alone.  The client starts once the server listens.

# wait_tcp PORT / wait_cm PORT: until the server ($spid) listens there.
# The guest's kernel has no socket diagnostics for ss, so a TCP listener
# is read from /proc/net/tcp{,6} (state 0A); an RDMA CM listener from
# rdma(8)'s resource list (netlink RDMA).
wait_tcp() {
	_hex=$(printf ':%04X ' "$1")
	_i=0
	while [ $_i -lt 300 ] && kill -0 "$spid" 2>/dev/null &&
	      ! cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		awk -v p="$_hex" 'index($2 " ", p) && $4 == "0A" { f = 1 } END { exit !f }'; do
		_i=$((_i + 1)); sleep 0.1
	done
}
wait_cm() {
	_i=0
	while [ $_i -lt 300 ] && kill -0 "$spid" 2>/dev/null &&
	      ! rdma resource show cm_id 2>/dev/null |
		grep "state LISTEN" | grep -q ":$1 "; do
		_i=$((_i + 1)); sleep 0.1
	done
}

# Line-buffered output, so what a killed server printed is still there.
command -v stdbuf > /dev/null 2>&1 && lb="stdbuf -oL" || lb=

# pair ID WAIT PORT SERVER_ARGS -- CLIENT_ARGS: both sides bounded;
# outputs in $tmp/ID-s.out and $tmp/ID-c.out, statuses in src and crc.
# These programs race themselves: the server opens its PSP only after the
# address exchange, the client connects right after it, so the client can
# reach the port before anybody listens (NON_PEER_REJECTED, 0x4003, and a
# server waiting forever).  Such an attempt is ended and run again, at
# most 5 times, and said so; anything else counts.
pair() {
	_id=$1 _wait=$2 _port=$3
	shift 3
	_s=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _s="$_s $1"; shift; done
	shift
	_try=1
	while :; do
		# shellcheck disable=SC2086
		timeout "${pair_timeout:-150}" $lb $_s </dev/null >"$tmp/$_id-s.out" 2>&1 &
		spid=$!
		"$_wait" "$_port"
		timeout "${pair_timeout:-150}" $lb "$@" </dev/null >"$tmp/$_id-c.out" 2>&1
		crc=$?
		if [ $crc -ne 0 ] && [ $_try -lt 5 ] &&
		   grep -qE 'NON_PEER_REJECTED|0x4003' "$tmp/$_id-c.out"; then
			echo "($_id attempt $_try: the client connected before the server listened; again)"
			kill "$spid" 2>/dev/null
			{ wait "$spid"; } 2>/dev/null; spid=
			_try=$((_try + 1))
			continue
		fi
		break
	done
	# A server whose client gave up waits for it forever: once the
	# client is done the server gets 60 s to finish, 10 s if the client
	# failed (dtest exits 0 then too: its text says so).  One sleeping
	# killer, no polling: every fork is slow on the guest's emulated CPU.
	_g=60
	if [ $crc -ne 0 ] || grep -qE 'FAILED|Error' "$tmp/$_id-c.out"; then
		_g=10
	fi
	( sleep $_g; kill "$spid" 2>/dev/null ) &
	_killer=$!
	{ wait "$spid"; src=$?; } 2>/dev/null
	spid=
	pkill -P "$_killer" sleep 2>/dev/null
	kill "$_killer" 2>/dev/null
	{ wait "$_killer"; } 2>/dev/null
}

# judge ID LABEL PATTERN...: both sides exited 0, each pattern is in the
# side's output it names (s:PATTERN or c:PATTERN), no error on either side
judge() {
	_id=$1 _label=$2
	shift 2
	_bad=
	[ "$src" -eq 0 ] && [ "$crc" -eq 0 ] || _bad="server status $src, client status $crc"
	for _p in "$@"; do
		_side=${_p%%:*} _pat=${_p#*:}
		grep -q -- "$_pat" "$tmp/$_id-$_side.out" ||
			_bad="${_bad:+$_bad; }no '$_pat' from the $_side side"
	done
	# (a provider attribute's text is not an error)
	if cat "$tmp/$_id-s.out" "$tmp/$_id-c.out" |
	   grep -v 'Provider Specific Attribute' |
	   grep -qiE 'error|fail|not implemented|not supported'; then
		_bad="${_bad:+$_bad; }an error was printed"
	fi
	if [ -n "$_bad" ]; then
		{ echo "--- server"; cat "$tmp/$_id-s.out"; echo "--- client";
		  cat "$tmp/$_id-c.out"; } > "$tmp/$_id.both"
		failed "$tmp/$_id.both" "$_label ($_bad)"
	else
		pass "$_label"
	fi
}

for mode in "" -p -c; do
	id=dtest${mode:-_wait}
	# shellcheck disable=SC2086
	# bursts of 100 RDMA Writes of 64 KiB, not 1000 of 4 MiB: the
	# guest's CPU is emulated
	pair "$id" wait_tcp 15828 "$bin/dtest" -s -P "$ia" -B 100 -b 65536 $mode -- \
		"$bin/dtest" -P "$ia" -h "$addr" -B 100 -b 65536 $mode
	judge "$id" "dtest ${mode:-(default: dat_evd_wait)}, server and client: DAPL Test Complete. PASSED" \
		's:DAPL Test Complete. PASSED' 'c:DAPL Test Complete. PASSED'
done

conns=${DAPL2_VERBS_CONNS:-50}
pair dtestcm wait_tcp 15828 "$bin/dtestcm" -s -P "$ia" -c "$conns" -- \
	"$bin/dtestcm" -P "$ia" -h "$addr" -c "$conns"
judge dtestcm "dtestcm: ALL $conns CONNECTED on server and client" \
	"s:ALL $conns CONNECTED on Server" "c:ALL $conns CONNECTED on Client" \
	's:DAPL Connection Test Complete' 'c:DAPL Connection Test Complete'

# (60 s: the exchange takes seconds)
pair_timeout=60 pair dtestsrq wait_cm 45248 "$bin/dtestsrq" -s -v -P "$ia" -c 4 -B 10 -- \
	"$bin/dtestsrq" -v -P "$ia" -h "$addr" -c 4 -B 10
# after each disconnect it waits for DAT_ASYNC_ERROR_EP_BROKEN naming the
# SRQ EP on the async EVD, as OpenFabrics 2.x posts it (udapl/cm.c)
judge dtestsrq "dtestsrq: 4 connections sharing one SRQ, 3 bursts of 10" \
	's:Test Complete' 'c:Test Complete'

# dtestx: the IB extensions.  A device that has them must pass all three;
# one that does not must say so: atomics skipped (the attributes say
# FALSE), the Write with immediate refused as not supported.
pair dtestx wait_tcp 15828 "$bin/dtestx" -s -v -P "$ia" -- \
	"$bin/dtestx" -v -P "$ia" -h "$addr"
if [ "$kind" = rxe ]; then
	judge dtestx "dtestx: RDMA Write with immediate, fetch-and-add, compare-and-swap" \
		's:RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED' \
		'c:RDMA_WRITE_WITH_IMMEDIATE_DATA test - PASSED' \
		's:CMP_SWAP test - PASSED' 'c:CMP_SWAP test - PASSED' \
		's:FETCH_ADD test - PASSED' 'c:FETCH_ADD test - PASSED' \
		's:immed/atomic test PASSED' 'c:immed/atomic test PASSED'
else
	# A device with none of the three (siw): the IA reports no IB
	# extension (extension_supported DAT_EXTENSION_NONE) and dtestx
	# stops there, saying so, on both sides.  A device with some: the
	# attributes of the others say FALSE (dtestx -v prints them) and a
	# Write with immediate must be refused as not implemented / not
	# supported.  Nothing may crash, hang or report another error, and
	# no operation the device lacks may be tried.
	cat "$tmp/dtestx-s.out" "$tmp/dtestx-c.out" > "$tmp/dtestx.both"
	none='ERROR: IB extension not supported'
	if [ "$(grep -c "$none" "$tmp/dtestx.both")" -eq 2 ] && [ "$crc" -eq 1 ] &&
	   [ "$src" -eq 1 ] &&
	   ! grep -v "$none" "$tmp/dtestx.both" | grep -qiE 'error|fail|PASSED|Doing '; then
		for op in "RDMA Write with immediate" compare-and-swap fetch-and-add; do
			unsupported "dtestx: $op on $kind (the IA offers no IB extension: dtestx says '$none' on both sides)"
		done
	else
	refusal='dat_ib_post_rdma_write_immed returned DAT_(NOT_IMPLEMENTED|MODEL_NOT_SUPPORTED)'
	bad=
	[ "$crc" -le 1 ] || bad="client status $crc"
	case $src in 0|1|124|143) ;; *) bad="${bad:+$bad; }server status $src" ;; esac
	grep -q 'IB extension not supported' "$tmp/dtestx.both" &&
		bad="${bad:+$bad; }the IA does not offer the IB extensions at all"
	for a in DAT_IB_IMMED_DATA DAT_IB_FETCH_AND_ADD DAT_IB_CMP_AND_SWAP; do
		grep -q "Provider Specific Attribute.* $a=FALSE" "$tmp/dtestx-c.out" ||
			bad="${bad:+$bad; }the client did not see $a=FALSE"
	done
	grep -qE "$refusal" "$tmp/dtestx.both" ||
		bad="${bad:+$bad; }the Write with immediate was not refused as not supported"
	grep -qE 'test - PASSED|Doing (CMP and SWAP|FETCH and ADD)' "$tmp/dtestx.both" &&
		bad="${bad:+$bad; }an operation siw lacks was tried"
	grep -v 'Provider Specific Attribute' "$tmp/dtestx.both" |
		grep -Ev "$refusal|not implemented: RDMA Write with immediate data on" |
		grep -qiE 'error|fail|unexpected' &&
		bad="${bad:+$bad; }an error other than not-supported"
	if [ -n "$bad" ]; then
		failed "$tmp/dtestx.both" "dtestx on $kind ($bad)"
	else
		unsupported "dtestx: RDMA Write with immediate on $kind ($(grep -m1 -oE "$refusal" "$tmp/dtestx.both"); DAT_IB_IMMED_DATA=FALSE)"
		unsupported "dtestx: compare-and-swap on $kind (DAT_IB_CMP_AND_SWAP=FALSE, not tried)"
		unsupported "dtestx: fetch-and-add on $kind (DAT_IB_FETCH_AND_ADD=FALSE, not tried)"
	fi
	fi
fi

if [ $fail -eq 0 ]; then
	echo "check-dapl2-verbs: $runs runs, $npass passed, $nxfail expected failures, $nunsup unsupported by the device, none failed $what"
else
	echo "check-dapl2-verbs: FAILED $what"
fi
exit $fail
