#!/bin/sh
# verbs-targets.sh: what legacy MPIs over uDAPL do (issue 25's patterns),
# on DAT over the verbs provider, next to the same run's baselines.  Meant
# for the project guest (test/vm/datvm), run from the top build directory:
#
#	../test/vm/datvm -- sh ../bench/verbs-targets.sh               (rxe0)
#	../test/vm/datvm --siw -- sh ../bench/verbs-targets.sh --siw   (siw0)
#	make check-verbs CHECK_VERBS_BENCH=1         (both, after the tests)
#
# One dat_bench run (-t dat,sock) of the patterns run-bench.sh --targets
# runs on the host: RDMA Writes of 8 B, 4 KiB and 64 KiB into rings both
# sides poll in memory (write_poll), 8 B RDMA Reads and Writes against a
# target spinning on another EVD or on memory (read_evd, read_mem,
# write_evd, write_mem), 8 B Sends with a window of 64 (window) and
# connect + accept + first message + disconnect (cycle), on the DAT IA
# BENCH_IA (default OpenIB-cma, OpenIB-iwarp with --siw) and on kernel TCP
# sockets at the device's netdev address (dat_bench -A), whose ping-pong
# plus one thread hand-off is the round patterns' baseline (bench/README.md
# "What legacy MPIs do").  Then perftest's latency tool for the same
# operation where one exists: ib_write_lat -s 8, 4096, 65536 (a ping-pong
# of RDMA Writes, each side polling the last byte in memory: write_poll's
# own measure, half a round trip) and ib_read_lat -s 8 (one Read waited
# for: read_evd's and read_mem's measure).  No perftest tool times a
# signalled Write's completion (write_evd, write_mem), a window of Sends
# or a connection cycle: those rows have sockets only.
#
# dat.conf: DAT_OVERRIDE, else test/check-verbs/dat.conf (what make
# check-verbs writes for the guest), else one line of its own for BENCH_IA
# at the device's address.  Environment:
# BENCH_REPS (dat_bench -r, default 3), BENCH_N (dat_bench -n, default
# 2000: the round patterns run at least 10,000 rounds or 1 s, the window
# 20·n Sends, the cycle n/4 connections), BENCH_ITERS (perftest -n, 5000),
# BENCH_TIMEOUT (seconds for dat_bench, default 420; perftest 120 each),
# BENCH_PATS (dat_bench -p, the patterns above; on siw without cycle).
# About 3 minutes on rxe under TCG.  Compare ratios only, and only within
# one run.  A benchmark, not a test: it fails only when a program cannot
# run.
set -u
kind=rxe
[ "${1:-}" = --siw ] && kind=siw
if [ $kind = siw ]; then
	dev=${DATVM_SIW_IBDEV:-siw0} ip=${DATVM_SIW_IP:-10.77.1.1}
	ia=${BENCH_IA:-OpenIB-iwarp}
	# iWARP: perftest connects through rdma_cm; siw counts registered
	# memory against RLIMIT_MEMLOCK even for root
	cm=-R
	# shellcheck disable=SC3045 # dash and bash have -l
	ulimit -l unlimited 2>/dev/null
else
	dev=${DATVM_RXE_IBDEV:-rxe0} ip=${DATVM_RXE_IP:-10.77.0.1}
	ia=${BENCH_IA:-OpenIB-cma}
	cm=
fi
reps=${BENCH_REPS:-3}
n=${BENCH_N:-2000}
iters=${BENCH_ITERS:-5000}
limit=${BENCH_TIMEOUT:-420}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vtg.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
if [ -z "${DAT_OVERRIDE:-}" ]; then
	if [ -f test/check-verbs/dat.conf ]; then
		DAT_OVERRIDE=$(pwd)/test/check-verbs/dat.conf
	else
		# no make check-verbs ran here: the build tree's dat.conf
		# names OpenFabrics' devices (ib0), so the IA goes at the
		# device's address
		DAT_OVERRIDE=$tmp/dat.conf
		echo "$ia u1.2 nonthreadsafe default $(pwd)/providers/verbs/.libs/libdaplverbs.so.1 dapl.1.2 \"$ip 0\" \"\"" > "$DAT_OVERRIDE"
	fi
fi
export DAT_OVERRIDE
start=$(date +%s)

[ -x ./bench/dat_bench ] || { echo "verbs-targets: run from the top build directory"; exit 1; }
grep -Eq "^[[:space:]]*${ia}[[:space:]]" "$DAT_OVERRIDE" ||
	{ echo "verbs-targets: no $ia line in $DAT_OVERRIDE"; exit 1; }
for p in ib_write_lat ib_read_lat; do
	command -v $p >/dev/null 2>&1 || { echo "verbs-targets: $p not found (perftest)"; exit 1; }
done
# the server and the client on two CPUs, as run-bench.sh does on the host;
# perftest's too (taskset), so both sides run alike
pin='' pt_srv='' pt_cli=''
if [ "$(nproc 2>/dev/null || echo 1)" -ge 2 ] && command -v taskset >/dev/null 2>&1; then
	pin="-c 0,1" pt_srv="taskset -c 0" pt_cli="taskset -c 1"
fi

pats="write_poll@8,write_poll@4k,write_poll@64k,read_evd,read_mem,write_evd,write_mem"
pats="$pats,window,cycle"
# siw: the cycle fails in most runs (the server's receive flushed, the
# client's connect refused by a reset, or unreachable, bench/README.md):
# left out unless BENCH_PATS asks for it, so the other rows are measured
[ $kind = siw ] && pats=${pats%,cycle}
pats=${BENCH_PATS:-$pats}
# shellcheck disable=SC2086 # $pin: no option or two words
timeout "$limit" ./bench/dat_bench -t dat,sock -i "$ia" -A "$ip" $pin -r "$reps" \
	-n "$n" -p "$pats" > "$tmp/dat" 2>&1
rc=$?
cat "$tmp/dat"
[ $rc -eq 0 ] || { echo "verbs-targets: dat_bench failed (exit $rc)"; exit 1; }

# perftest's server must listen before its client connects: the client is
# retried (a benchmark script; tests never sleep to synchronise).
. "$(dirname "$0")/perftest-pair.sh"
perftest() {
	perftest_pair "$@" || { echo "verbs-targets: $* failed"; return 1; }
}
# KEY: t_typical and the 99% percentile of perftest's first row; the
# header must name them, or the columns mean something else
pt() {
	key=$1
	shift
	perftest "$@" || exit 1
	if ! grep -q -F 't_typical[usec]' "$tmp/cli" ||
	   ! grep -q -F '99% percentile[usec]' "$tmp/cli"; then
		cat "$tmp/cli"
		echo "verbs-targets: perftest's header changed"
		exit 1
	fi
	grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+' "$tmp/cli" | head -1 |
		awk -v k="$key" '{ print k, $5, $8 }' >> "$tmp/pt"
}
: > "$tmp/pt"
pt "write_poll 8" ib_write_lat -s 8 -n "$iters"
pt "write_poll 4096" ib_write_lat -s 4096 -n "$iters"
pt "write_poll 65536" ib_write_lat -s 65536 -n "$iters"
pt "read 8" ib_read_lat -s 8 -n "$iters"

pv=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null)
echo
echo "== issue 25's patterns: DAT over verbs ($ia) on $dev, sockets at $ip, perftest ${pv:-?}; $(uname -r), $(nproc) CPUs"
echo "== dat_bench -t dat,sock -A $ip $pin -r $reps -n $n (medians of $reps repetitions); perftest -n $iters (t_typical, 99%)${pt_srv:+, server $pt_srv, client $pt_cli}"
grep '^bench: ' "$tmp/dat" | awk -v ptfile="$tmp/pt" '
function us(v) { return v == "" ? "-" : sprintf("%.2f us", v) }
function r(a, b) { return (a == "" || b == "" || b + 0 == 0) ? "-" : sprintf("%.2f", a / b) }
BEGIN {
	while ((getline line < ptfile) > 0) {
		split(line, w, " ")
		pt[w[1] " " w[2]] = w[3]
		pt99[w[1] " " w[2]] = w[4]
	}
	split("write_poll 8|write_poll 4096|write_poll 65536|read_evd 8|read_mem 8|" \
	      "write_evd 8|write_mem 8|window 8|cycle 8", order, "|")
	split("RDMA Write into a polled ring, 8 B|  the same, 4 KiB|  the same, 64 KiB|" \
	      "8 B RDMA Read, target spins on an EVD|8 B RDMA Read, target spins on memory|" \
	      "8 B RDMA Write, target spins on an EVD|8 B RDMA Write, target spins on memory|" \
	      "8 B Sends, a window of 64|connect+accept+8 B message+disconnect", label, "|")
	ptname["write_poll 8"] = ptname["write_poll 4096"] = ptname["write_poll 65536"] = "ib_write_lat"
	ptname["read_evd 8"] = ptname["read_mem 8"] = "ib_read_lat"
	ptkey["write_poll 8"] = "write_poll 8"
	ptkey["write_poll 4096"] = "write_poll 4096"
	ptkey["write_poll 65536"] = "write_poll 65536"
	ptkey["read_evd 8"] = ptkey["read_mem 8"] = "read 8"
}
{
	delete f
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		f[kv[1]] = kv[2]
	}
	k = f["pattern"] " " f["size"]
	for (x in f)
		v[k, x] = f[x]
	seen[k] = 1
	if ("handoff_us" in f)
		handoff = f["handoff_us"]
}
END {
	printf "%-40s %11s %9s %11s %12s %8s %12s %11s %9s\n", "row", "DAT", "DAT p99",
	       ">1ms/all", "sock+hand-off", "DAT/base", "perftest", "pt p99", "DAT/pt"
	for (j = 1; j in order; j++) {
		k = order[j]
		if (!(k in seen)) {
			printf "%-40s (not measured)\n", label[j]
			continue
		}
		if (k == "window 8") {
			printf "%-40s %9.4f M/s %9s %11s %8.4f M/s %8s %12s %11s %9s\n", label[j],
			       v[k, "dat_mmps"], "", "", v[k, "sock_mmps"],
			       r(v[k, "dat_mmps"], v[k, "sock_mmps"]), "-", "", ""
			continue
		}
		if (k == "cycle 8") {
			printf "%-40s %11s %9s %11s %12s %8s %12s %11s %9s\n", label[j],
			       us(v[k, "dat_us"]), "", "", us(v[k, "sock_us"]) " ",
			       r(v[k, "dat_us"], v[k, "sock_us"]), "-", "", ""
			continue
		}
		p = ptkey[k]
		printf "%-40s %11s %9.1f %11s %12s %8s %12s %11s %9s\n", label[j],
		       us(v[k, "dat_us"]), v[k, "dat_p99"], v[k, "dat_slow"] "/" v[k, "dat_n"],
		       us(v[k, "base_us"]) "+", r(v[k, "dat_us"], v[k, "base_us"]),
		       p == "" ? "-" : us(pt[p]), p == "" ? "" : sprintf("%.1f", pt99[p]),
		       p == "" ? "-" : r(v[k, "dat_us"], pt[p])
	}
	printf "\n+ sock+hand-off: the busy-polled socket ping-pong of the same size (write_poll: half round trip; read/write: whole round trip) plus one thread hand-off, %.2f us (eventfd ping-pong, half round trip)\n", handoff
	print "write_poll and ib_write_lat: half round trip of a ping-pong polled in memory; read/write: per operation, the initiator waiting for each completion"
	print "p99 in us; >1ms/all: rounds over 1 ms of all rounds, every repetition; window: millions of 8 B messages per second (socket: the same loop and credits)"
	print "perftest rows: ib_write_lat for the polled ring (the same pattern), ib_read_lat for the Reads; none times a signalled Write, a window or a connection"
}'
if grep -q '^dat_bench: note: ' "$tmp/dat"; then
	echo "== dat_bench's notes:"
	grep '^dat_bench: note: ' "$tmp/dat"
fi
echo "== $(($(date +%s) - start)) s"
