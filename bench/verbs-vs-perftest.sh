#!/bin/sh
# verbs-vs-perftest.sh: DAT over the verbs provider next to perftest on the
# same RDMA device, in one run.  Meant for the project guest (test/vm/datvm), run from the
# top build directory:
#
#	../test/vm/datvm -- sh ../bench/verbs-vs-perftest.sh      (or: make check-verbs
#	                                                 CHECK_VERBS_BENCH=1)
#
# It needs a dat.conf whose IA (BENCH_IA, default OpenIB-cma) names the
# guest's device: DAT_OVERRIDE, else test/check-verbs/dat.conf (what make
# check-verbs writes for the guest), else the build tree's dat.conf.
#
# Prints, each DAT figure next to perftest's and their ratio DAT/raw:
#
#   RDMA Write bandwidth, 4 KiB, 64 KiB, 1 MiB   dat_bench write_bw   ib_write_bw
#   Send bandwidth, 4 KiB, 64 KiB, 1 MiB         dat_bench send_bw    ib_send_bw
#   RDMA Write latency, 8 B                      dat_bench write      ib_write_lat
#   Send latency, 8 B                            dat_bench sendrecv   ib_send_lat
#
# Latency is the half round trip of a ping-pong, the median over the
# iterations on both sides (dat_bench's value, perftest's t_typical).
# Bandwidth is in MB/s of 10^6 bytes on both sides: dat_bench prints GB/s
# of 10^9 B, perftest "MB/sec" that are MiB/s (its --help says so under
# --report_gbits, and its MsgRate[Mpps] times the size is the BW average
# times 2^20 in its own lines), converted here.
#
# Signalling is the same on both sides, and the output says so: every RDMA
# Write and every Send asks for a completion (dat_bench posts each with
# DAT_COMPLETION_DEFAULT_FLAG; perftest's bandwidth tools get --cq-mod=1,
# where they would ask for one completion per 100 small messages; its
# latency tools have one request in flight and signal it), and a stream keeps 64 outstanding
# (dat_bench -w 64, perftest -t 64).  Two differences are left and said in
# the output: dat_bench's Send stream also waits for credits, at most 8
# Sends ahead of the receives the receiver has posted again (a Send that
# finds no receive ends an iWARP connection), where ib_send_bw keeps up to
# 512 receives posted (its -r, at most -n); and the verbs
# provider puts Sends and RDMA Writes of up to 64 B inline
# (DAPL_VERBS_INLINE) where perftest on rxe inlines nothing (it does not
# know the device), which touches the 8 B rows only.
#
# Each bandwidth row is measured in BENCH_ROUNDS rounds (default 3), each
# latency row in BENCH_LAT_ROUNDS (default 5), a round being a DAT run and
# a perftest run back to back, the first side alternating from round to
# round; the medians of each side are compared, and each round's ratio is
# shown too: on Soft-RoCE under TCG both sides are slow (tens of µs, tens
# of MB/s) and a single run moves by 10% or more, a latency run up to
# twice as long.  Both sides time the same number of messages per run
# (BENCH_BW, size:messages; dat_bench sends 256 more first as warm-up,
# which at 1 MiB is most of the script's time) and the same latency
# iterations (BENCH_ITERS).  About 3.5 minutes in the guest.  Compare the
# ratio only, and only within one run.  A benchmark, not a test: it fails
# only when a program cannot run.
set -u
dev=${DATVM_RXE_IBDEV:-rxe0}
ia=${BENCH_IA:-OpenIB-cma}
iters=${BENCH_ITERS:-5000}
rounds=${BENCH_ROUNDS:-3}
lat_rounds=${BENCH_LAT_ROUNDS:-5}
# dat_bench times m = 256 MiB / size messages, but at least -n and at most
# 3 -n: with -n = messages / 3 it times exactly these many as long as they
# are at most 256 MiB (and a multiple of 3, at least 60)
bw_runs=${BENCH_BW:-4096:15000 65536:1500 1048576:96}
window=64
# the build tree's own dat.conf names a host's device (ib0), not the guest's
if [ -z "${DAT_OVERRIDE:-}" ]; then
	DAT_OVERRIDE=$(pwd)/dat.conf
	[ -f test/check-verbs/dat.conf ] && DAT_OVERRIDE=$(pwd)/test/check-verbs/dat.conf
fi
export DAT_OVERRIDE
ip=${DATVM_RXE_IP:-10.77.0.1}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/vvp.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

for p in ib_write_lat ib_send_lat ib_write_bw ib_send_bw; do
	command -v $p >/dev/null 2>&1 || { echo "verbs-vs-perftest: $p not found (perftest)"; exit 1; }
done
# the options that make perftest's streams signal like dat_bench's
for p in ib_write_bw ib_send_bw; do
	for o in --cq-mod --tx-depth; do
		$p --help 2>&1 | grep -q -- "$o" ||
			{ echo "verbs-vs-perftest: $p has no $o (perftest too old)"; exit 1; }
	done
done
[ -x ./bench/dat_bench ] || { echo "verbs-vs-perftest: run from the top build directory"; exit 1; }
for r in $bw_runs; do
	m=${r#*:}
	[ $((m % 3)) -eq 0 ] && [ "$m" -ge 60 ] ||
		{ echo "verbs-vs-perftest: BENCH_BW $r: messages must be a multiple of 3, at least 60"; exit 1; }
done

# perftest's server must listen before its client connects: the client is
# retried (a benchmark script; tests never sleep to synchronise).
. "$(dirname "$0")/perftest-pair.sh"
perftest() {
	perftest_pair "$@"
}

# the first data row of perftest's table (it starts with the byte count)
row() { grep -E '^[[:space:]]*[0-9]+[[:space:]]+[0-9]+' "$1" | head -1; }

# rec KEY VALUE: one round's value; med KEY: the median of the rounds
rec() { echo "$2" >> "$tmp/v.$1"; }
med() {
	sort -n "$tmp/v.$1" | awk '{ v[NR] = $1 }
		END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# perftest's column COL of its first row into KEY, times FACTOR; the
# header must name what we take (HEAD), or the column means something else
pt_rec() {
	key=$1 col=$2 head=$3 factor=$4
	grep -q -F "$head" "$tmp/cli" ||
		{ cat "$tmp/cli"; echo "verbs-vs-perftest: no \"$head\" in perftest's header"; exit 1; }
	rec "$key" "$(row "$tmp/cli" | awk -v c="$col" -v f="$factor" '{ printf "%.3f", $c * f }')"
}

# dat PATTERNS [OPTION...]: dat_bench, DAT only, one repetition (the
# rounds are the repetitions); its notes (a busy machine) are kept for the
# end
dat() {
	pats=$1
	shift
	./bench/dat_bench -D -i "$ia" -m poll -r 1 -p "$pats" "$@" > "$tmp/dat" 2>&1 ||
		{ cat "$tmp/dat"; exit 1; }
	sed -n "s/^dat_bench: note: /round $round, $pats: /p" "$tmp/dat" >> "$tmp/notes"
}

# dat_rec KEY PATTERN SIZE UNIT FACTOR: the machine line's value into KEY
dat_rec() {
	v=$(sed -n "s/^bench: pattern=$2 wait=poll size=$3 dat_$4=\([0-9.e+-]*\) .*/\1/p" "$tmp/dat")
	[ -n "$v" ] || { cat "$tmp/dat"; echo "verbs-vs-perftest: no $2 $3 line"; exit 1; }
	rec "$1" "$(awk -v v="$v" -v f="$5" 'BEGIN { printf "%.3f", v * f }')"
}

dat_lat() {
	dat write@8,sendrecv@8 -n "$iters"
	dat_rec write.dat write 8 us 1
	dat_rec sendrecv.dat sendrecv 8 us 1
}
pt_lat() {
	perftest ib_write_lat -s 8 -n "$iters" || exit 1
	pt_rec write.raw 5 't_typical[usec]' 1
	perftest ib_send_lat -s 8 -n "$iters" || exit 1
	pt_rec sendrecv.raw 5 't_typical[usec]' 1
}
dat_bw() {	# SIZE MESSAGES
	dat "write_bw@$1,send_bw@$1" -w "$window" -n $(($2 / 3))
	dat_rec "write_bw.$1.dat" write_bw "$1" gbps 1000     # 10^9 B/s -> 10^6
	dat_rec "send_bw.$1.dat" send_bw "$1" gbps 1000
}
pt_bw() {	# SIZE MESSAGES
	perftest ib_write_bw --cq-mod=1 -t "$window" -s "$1" -n "$2" || exit 1
	pt_rec "write_bw.$1.raw" 4 'BW average[MB/sec]' 1.048576   # 2^20 B/s -> 10^6
	perftest ib_send_bw --cq-mod=1 -t "$window" -s "$1" -n "$2" || exit 1
	pt_rec "send_bw.$1.raw" 4 'BW average[MB/sec]' 1.048576
}

: > "$tmp/notes"
# the latency rounds first, back to back: they are short, and the 8 B
# ping-pong moves most from run to run under TCG (either side now and then
# takes up to twice as long), so they get more rounds
round=1
while [ $round -le "$lat_rounds" ]; do
	if [ $((round % 2)) -eq 1 ]; then
		dat_lat; pt_lat
	else
		pt_lat; dat_lat
	fi
	round=$((round + 1))
done
round=1
while [ $round -le "$rounds" ]; do
	for r in $bw_runs; do
		if [ $((round % 2)) -eq 1 ]; then
			dat_bw "${r%:*}" "${r#*:}"; pt_bw "${r%:*}" "${r#*:}"
		else
			pt_bw "${r%:*}" "${r#*:}"; dat_bw "${r%:*}" "${r#*:}"
		fi
	done
	round=$((round + 1))
done

human() {
	awk -v s="$1" 'BEGIN {
		if (s >= 1048576 && s % 1048576 == 0) printf "%d MiB", s / 1048576
		else if (s >= 1024 && s % 1024 == 0) printf "%d KiB", s / 1024
		else printf "%d B", s }'
}
# line LABEL KEY UNIT RAWNAME: medians, their ratio, and each round's ratio
line() {
	paste -d ' ' "$tmp/v.$2.dat" "$tmp/v.$2.raw" > "$tmp/pairs"
	awk -v l="$1" -v a="$(med "$2.dat")" -v b="$(med "$2.raw")" -v u="$3" -v p="$4" '
		{ r = r sprintf(" %.2f", ($2 > 0 ? $1 / $2 : 0)) }
		END {
			f = (u == "us" ? "%9.2f" : "%9.1f")
			printf "%-28s DAT " f " %-4s  %-12s " f " %-4s  DAT/raw %.2f   (rounds:%s)\n",
				l, a, u, p, b, u, (b > 0 ? a / b : 0), r
		}' "$tmp/pairs"
}

pv=$(dpkg-query -W -f '${Version}' perftest 2>/dev/null)
sizes=
for r in $bw_runs; do
	sizes="$sizes${sizes:+, }${r#*:} x $(human "${r%:*}")"
done
echo "== DAT over verbs ($ia) vs perftest ${pv:-?} on $dev, $ip: median of $rounds rounds (latency: $lat_rounds),"
echo "== a round: one DAT and one perftest run, the first alternating; (rounds: each round's DAT/raw); dat.conf $DAT_OVERRIDE"
echo "== signalling: every RDMA Write and Send signalled on both sides, streams keep $window outstanding:"
echo "==   dat_bench -w $window (DAT_COMPLETION_DEFAULT_FLAG); ib_write_bw/ib_send_bw --cq-mod=1 -t $window; latency tools have 1 in flight"
echo "==   but DAT's Send stream waits for credits (at most 8 Sends ahead of the receiver; ib_send_bw keeps up to 512 receives posted)"
echo "==   and DAT puts the 8 B Sends and RDMA Writes inline (perftest does not on $dev)"
echo "== bandwidth: MB/s = 10^6 B/s on both (perftest's MB = 2^20 B, converted); messages timed per run: $sizes"
echo "== latency: 8 B ping-pong, half round trip, median over $iters iterations (perftest: t_typical); busy polling on both"
for pat in write_bw send_bw; do
	case $pat in
	write_bw) what="RDMA Write bandwidth" raw=ib_write_bw ;;
	send_bw) what="Send bandwidth" raw=ib_send_bw ;;
	esac
	for r in $bw_runs; do
		line "$what $(human "${r%:*}")" "$pat.${r%:*}" "MB/s" "$raw"
	done
done
line "RDMA Write latency 8 B" write us ib_write_lat
line "Send latency 8 B" sendrecv us ib_send_lat
if [ -s "$tmp/notes" ]; then
	echo "== dat_bench's notes:"
	cat "$tmp/notes"
fi
echo "== for bandwidth a ratio below 1 is slower, for latency above 1; $(($(date +%s) - start)) s"
