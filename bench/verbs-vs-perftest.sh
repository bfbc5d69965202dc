#!/bin/sh
# verbs-vs-perftest.sh: DAT over the verbs provider next to perftest on the
# same RDMA device, in one run.  Meant for the project guest (test/vm/datvm), run from the
# top build directory:
#
#	../test/vm/datvm -- sh ../bench/verbs-vs-perftest.sh      (or: make check-verbs
#	                                                 CHECK_VERBS_BENCH=1)
#
# Prints RDMA Write ping-pong latency (half round trip, 8 B: dat_bench -D
# "write" against ib_write_lat) and RDMA Write streaming bandwidth (64 KiB:
# dat_bench "write_bw" against ib_write_bw), each pair with its ratio.  On
# Soft-RoCE under TCG both sides are slow (tens of µs): compare the ratio
# only, and only within one run.  A benchmark, not a test: it fails only
# when a program cannot run.
set -u
dev=${DATVM_RXE_IBDEV:-rxe0}
ia=${BENCH_IA:-OpenIB-cma}
iters=${BENCH_ITERS:-2000}
DAT_OVERRIDE=${DAT_OVERRIDE:-$(pwd)/dat.conf}
export DAT_OVERRIDE
ip=${DATVM_RXE_IP:-10.77.0.1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vvp.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

for p in ib_write_lat ib_write_bw; do
	command -v $p >/dev/null 2>&1 || { echo "verbs-vs-perftest: $p not found (perftest)"; exit 1; }
done
[ -x ./bench/dat_bench ] || { echo "verbs-vs-perftest: run from the top build directory"; exit 1; }

# perftest's server must listen before its client connects: the client is
# retried (a benchmark script; tests never sleep to synchronise).
perftest() {
	prog=$1
	shift
	port=$(( 18000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 2000 ))
	timeout 120 "$prog" -d "$dev" -F -p "$port" "$@" > "$tmp/srv" 2>&1 &
	spid=$!
	tries=0
	while [ $tries -lt 40 ]; do
		tries=$((tries + 1))
		if timeout 120 "$prog" -d "$dev" -F -p "$port" "$@" "$ip" > "$tmp/cli" 2>&1; then
			wait $spid
			return 0
		fi
		sleep 0.25
	done
	kill $spid 2>/dev/null
	wait $spid
	cat "$tmp/cli"
	return 1
}

# the first data row of perftest's table (it starts with the byte count)
row() { grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+' "$1" | head -1; }

perftest ib_write_lat -s 8 -n "$iters" || exit 1
lat_raw=$(row "$tmp/cli" | awk '{ print $5 }')     # t_typical [usec]
perftest ib_write_bw -s 65536 -n "$iters" || exit 1
bw_raw=$(row "$tmp/cli" | awk '{ print $4 }')      # BW average [MB/sec]

./bench/dat_bench -D -i "$ia" -p write -m poll -s 8 -n "$iters" -r 3 > "$tmp/lat" 2>&1 ||
	{ cat "$tmp/lat"; exit 1; }
lat_dat=$(sed -n 's/.*pattern=write wait=poll size=8 dat_us=\([0-9.e+-]*\).*/\1/p' "$tmp/lat")
./bench/dat_bench -D -i "$ia" -p write_bw -m poll -s 65536 -n "$iters" -r 3 > "$tmp/bw" 2>&1 ||
	{ cat "$tmp/bw"; exit 1; }
bw_dat=$(sed -n 's/.*pattern=write_bw wait=poll size=65536 dat_gbps=\([0-9.e+-]*\).*/\1/p' "$tmp/bw")

echo "== DAT over verbs ($ia) vs perftest on $dev, one run"
awk -v a="$lat_dat" -v b="$lat_raw" -v c="$bw_dat" -v d="$bw_raw" 'BEGIN {
	printf "RDMA Write latency 8 B      DAT %9.2f us    ib_write_lat %9.2f us    DAT/raw %.2f\n", a, b, (b > 0 ? a / b : 0)
	c *= 1000    # GB/s (1e9) -> MB/s (1e6)
	d *= 1.048576  # perftest MB = 2^20 B -> 1e6
	printf "RDMA Write bandwidth 64 KiB DAT %9.1f MB/s  ib_write_bw  %9.1f MB/s  DAT/raw %.2f\n", c, d, (d > 0 ? c / d : 0)
}'
