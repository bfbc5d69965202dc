#!/bin/sh
# Runs bench/dat_bench from the top build directory.
#
#	cd <build dir> && sh <srcdir>/bench/run-bench.sh
#	cd <build dir> && sh <srcdir>/bench/run-bench.sh --targets [dat_bench options]
#	cd <build dir> && sh <srcdir>/bench/run-bench.sh dat_bench options...
#
# With no arguments, or with --targets first, it measures the targets
# (bench/README.md): 8-byte Send and RDMA Write ping-pongs and 1 MiB Send
# and RDMA Write streams, busy-polled, and connection setup, each on DAT
# over tcp (when dat.conf has a tcp line), on plain kernel TCP sockets, on
# DAT over ofi-tcp and on raw libfabric tcp, all in one dat_bench run, and
# prints them as one table with the ratios tcp/socket, ofi-tcp/raw and
# tcp/ofi-tcp.  Then, in runs of their own: the 8-byte Send ping-pong
# with blocking waits, and with 512 more connections idle on the same
# EVDs, whose making (all at once) also gives the time per connection and
# the client's memory per connected endpoint, and by 8 threads per side
# at once, each busy-polling a connection of its own (dat_bench -T 8: more
# pollers than CPUs; not pinned, -c is ignored there), against the same
# with 1 thread, and what legacy MPIs over uDAPL do: RDMA Writes into
# rings polled in memory, 8 B RDMA Reads and Writes against a target that
# spins, 64 Sends in flight, connect + first message + disconnect (their
# socket column: the socket ping-pong plus one thread hand-off).  Last,
# bench/instr-cost.sh (instructions per 8 B Send
# post + poll, under callgrind) and bench/cold-open.sh (the first
# dat_ia_open of a process) print their own tables.  Options after
# --targets go to dat_bench after the targets' own (-r 3, -n 500, ...).
# Any other arguments run dat_bench
# with just those and print its own table, as before the targets existed.
#
# DAT_OVERRIDE points at the build tree's dat.conf, so the freshly built
# providers are used.  With two or more CPUs allowed, the server and the
# client are pinned to two different ones (dat_bench -c, which does what
# taskset does, in each of the two processes it forks).  Each dat_bench
# run is bounded by timeout(1): BENCH_TIMEOUT seconds (default 240).
# Not part of make check: a benchmark is not a test.
set -u

top=$(pwd)
prog="$top/bench/dat_bench"
if [ ! -x "$prog" ]; then
	echo "run-bench.sh: $prog not found: run from the top build directory after make" >&2
	exit 2
fi
if [ ! -f "$top/dat.conf" ]; then
	echo "run-bench.sh: $top/dat.conf not found: run make in $top first" >&2
	exit 2
fi
DAT_OVERRIDE="$top/dat.conf"
export DAT_OVERRIDE

targets=0
if [ $# -eq 0 ]; then
	targets=1
elif [ "$1" = "--targets" ]; then
	targets=1
	shift
fi

# The CPUs this shell may use, as a list: "0-1,4" -> "0 1 4".
allowed=""
if command -v taskset >/dev/null 2>&1; then
	allowed=$(taskset -cp $$ 2>/dev/null | sed -n 's/.*: *//p')
fi
if [ -z "$allowed" ]; then
	allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status 2>/dev/null)
fi
cpus=""
for part in $(echo "$allowed" | tr ',' ' '); do
	case $part in
	*-*)
		lo=${part%-*}
		hi=${part#*-}
		i=$lo
		while [ "$i" -le "$hi" ]; do
			cpus="$cpus $i"
			i=$((i + 1))
		done
		;;
	*)
		cpus="$cpus $part"
		;;
	esac
done
# shellcheck disable=SC2086 # $cpus is a list of numbers, split on purpose
set -- $cpus -- "$@"
pin=""
if [ "$1" != "--" ] && [ "$2" != "--" ]; then
	pin="-c $1,$2"
fi
while [ "$1" != "--" ]; do
	shift
done
shift

limit=${BENCH_TIMEOUT:-240}

# dat_bench with the pinning and the time limit; says why it failed.
bench() {
	# shellcheck disable=SC2086 # $pin is empty or two words
	timeout --kill-after=10 "$limit" "$prog" $pin "$@"
	rc=$?
	case $rc in
	0) ;;
	124|137) echo "run-bench.sh: dat_bench did not finish within $limit s" >&2 ;;
	3) echo "run-bench.sh: the DAT side is not implemented in this libdat (exit 3)" >&2 ;;
	*) echo "run-bench.sh: dat_bench failed (exit $rc)" >&2 ;;
	esac
	return $rc
}

if [ "$targets" -eq 0 ]; then
	bench "$@"
	exit $?
fi

# ---- the targets ------------------------------------------------------------

tmp=$(mktemp -d "${TMPDIR:-/tmp}/run-bench.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# -n 2000: a 1 MiB stream moves 2 GiB per run; the whole run takes about
# 30 s on an idle 2-CPU machine
pats="sendrecv@8,write@8,send_bw@1m,write_bw@1m,connect"
tcp_note=""
if grep -Eq '^[[:space:]]*tcp[[:space:]]' "$DAT_OVERRIDE"; then
	bench -t dat,raw,sock -m poll -n 2000 -p "$pats" -i ofi-tcp,tcp "$@" \
		>"$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	if [ "$rc" -ne 0 ]; then
		tcp_note="n/a (the run with tcp failed, exit $rc, above; measured again without it)"
		echo "run-bench.sh: measuring again without tcp" >&2
	fi
else
	tcp_note="n/a (no tcp entry in dat.conf)"
fi
if [ -n "$tcp_note" ]; then
	bench -t dat,raw,sock -m poll -n 2000 -p "$pats" -i ofi-tcp "$@" >"$tmp/out" 2>&1
	rc=$?
	cat "$tmp/out"
	[ "$rc" -eq 0 ] || exit $rc
fi

# The 8 B Send ping-pong with blocking waits (dat_evd_wait, fi_cq_sread,
# a blocking recv): what a sleep and a wakeup cost each side.
bench -t dat,raw,sock -m block -n 2000 -p sendrecv@8 -i "$([ -z "$tcp_note" ] &&
	echo ofi-tcp,tcp || echo ofi-tcp)" "$@" >"$tmp/outblock" 2>&1
rc=$?
cat "$tmp/outblock"
[ "$rc" -eq 0 ] && grep '^bench: ' "$tmp/outblock" >>"$tmp/out"

# The 8 B ping-pong again with 512 more connections, idle, on the same
# completion queues (dat_bench -e): what the endpoints a program keeps
# connected cost each poll.  Sockets have no shared completion queue.
# Making them is measured too: all 512 connects at once (the connection
# rate under load) and the client's memory per connected endpoint.
ias_scale=ofi-tcp
[ -z "$tcp_note" ] && ias_scale=ofi-tcp,tcp
bench -t dat,raw -m poll -n 2000 -p sendrecv@8 -e 512 -i "$ias_scale" "$@" \
	>"$tmp/out512" 2>&1
rc=$?
cat "$tmp/out512"
[ "$rc" -eq 0 ] && grep '^bench: ' "$tmp/out512" >>"$tmp/out"

# The 8 B ping-pong by 1 thread and by 8 threads per side at once, each
# thread busy-polling a connection (and EVDs/CQs) of its own: more pollers
# than CPUs, where every round trip waits for the scheduler (dat_bench -T).
# Nothing is pinned: the threads float over all the CPUs allowed.  -n 2000
# is 40 round trips per thread, about 30 s here (with 8 threads a spinning
# round trip takes tens of ms).
bench -t dat,raw,sock -T 8 -n 2000 -i "$ias_scale" "$@" >"$tmp/outthr" 2>&1
rc=$?
cat "$tmp/outthr"
[ "$rc" -eq 0 ] && grep '^bench: ' "$tmp/outthr" >>"$tmp/out"

# What legacy MPIs over uDAPL do (issue 25), busy-polling: RDMA Writes of
# 8 B, 4 KiB and 64 KiB into rings that both sides poll in memory; 8 B
# RDMA Reads and Writes against a target that spins on another EVD or on
# memory; 8 B Sends with a window of 64; connect, accept, a first message
# and disconnect.  The rounds' baseline is the socket ping-pong plus one
# thread hand-off (an eventfd ping-pong in the client), measured in the
# same run.  A run of rounds stops after 1 s (a provider that takes 2 ms a
# round runs 500, not 10,000): about a minute with -r 3 here.
mpi_pats="write_poll@8,write_poll@4k,write_poll@64k,read_evd,read_mem,write_evd,write_mem"
mpi_pats="$mpi_pats,window,cycle"
mpi_note=""
bench -t dat,raw,sock -n 2000 -p "$mpi_pats" -i "$ias_scale" "$@" >"$tmp/outmpi" 2>&1
rc=$?
cat "$tmp/outmpi"
if [ "$rc" -ne 0 ] && [ "$ias_scale" != ofi-tcp ]; then
	echo "run-bench.sh: the MPI patterns failed with tcp; measuring them again without it" >&2
	mpi_note="the MPI rows' run with tcp failed (exit $rc, above); tcp's cells there are -"
	bench -t dat,raw,sock -n 2000 -p "$mpi_pats" -i ofi-tcp "$@" >"$tmp/outmpi" 2>&1
	rc=$?
	cat "$tmp/outmpi"
fi
[ "$rc" -eq 0 ] && grep '^bench: ' "$tmp/outmpi" >>"$tmp/out"

# "bench: pattern=P wait=W size=S [idle=N] dat_X=v [dat2_X=v] raw_X=v
# sock_X=v [round fields] ratio=r" (dat = ofi-tcp, dat2 = tcp) -> the
# targets table.  The round patterns (write_poll, read_*, write_*) add
# K_p99, K_slow (rounds over 1 ms) and K_n (rounds) per stack K, and
# base_us: the socket ping-pong plus one hand-off, their socket column.
grep '^bench: ' "$tmp/out" | awk -v tcp_note="$tcp_note" -v mpi_note="$mpi_note" '
# bw: 0 latency, 1 bandwidth, 2 a factor, 3 a message rate, 4 a count
function val(v, bw) {
	if (v == "" || v == "-")
		return "-"
	if (bw == 2)
		return sprintf("%.1fx", v)
	if (bw == 3)
		return sprintf("%.4f M/s", v)
	if (bw == 4)
		return v
	return bw ? sprintf("%.3f GB/s", v) : sprintf("%.2f us", v)
}
# rounds over 1 ms of all rounds, "k/n"
function steps(k, n) {
	return k == "" || n == "" ? "-" : k "/" n
}
function ratio(a, b) {
	if (a == "" || a == "-" || b == "" || b == "-" || b + 0 == 0)
		return "-"
	# a stack that spins can be 1000 times slower than one that yields
	return sprintf(a / b < 0.095 ? "%.2g" : "%.2f", a / b)
}
# time(N threads)/time(1 thread)
function growth(n, one) {
	if (n == "" || n == "-" || one == "" || one == "-" || one + 0 == 0)
		return "-"
	return n / one
}
{
	delete f
	for (i = 2; i <= NF; i++) {
		split($i, kv, "=")
		f[kv[1]] = kv[2]
	}
	if (f["pattern"] == "sendrecv_mt") {
		# the -T run: us per round trip with 1 thread and with N
		key = f["threads"] == 1 ? "mt 1" : "mt n"
		if (f["threads"] != 1)
			mt_n = f["threads"]
		mt_cpus = f["cpus"]
		tcp[key] = f["dat2_us"]
		ofi[key] = f["dat_us"]
		raw[key] = f["raw_us"]
		sock[key] = f["sock_us"]
		next
	}
	if (f["pattern"] == "connect_all") {
		# the -e run: its connections made all at once, and memory
		ca_us[f["stack"]] = f["us_per_conn"]
		ca_kib[f["stack"]] = f["kib_per_ep"]
		ca_n = f["n"]
		next
	}
	unit = ("dat_gbps" in f) ? "gbps" : ("dat_mmps" in f) ? "mmps" : "us"
	key = f["pattern"] " " f["wait"]
	if (f["pattern"] != "connect")
		key = key " " f["size"]
	else
		pdata = f["size"]
	if ("idle" in f)
		key = key " idle"
	tcp[key] = f["dat2_" unit]
	ofi[key] = f["dat_" unit]
	raw[key] = f["raw_" unit]
	sock[key] = f["sock_" unit]
	if ("base_us" in f) {
		# a round pattern: the socket column is sockets + a hand-off,
		# then a p99 row and a row of the rounds over 1 ms
		handoff = f["handoff_us"]
		sock[key] = f["base_us"]
		tcp[key " p99"] = f["dat2_p99"]
		ofi[key " p99"] = f["dat_p99"]
		raw[key " p99"] = f["raw_p99"]
		sock[key " p99"] = f["sock_p99"]
		tcp[key " ms"] = steps(f["dat2_slow"], f["dat2_n"])
		ofi[key " ms"] = steps(f["dat_slow"], f["dat_n"])
		raw[key " ms"] = steps(f["raw_slow"], f["raw_n"])
		sock[key " ms"] = steps(f["sock_slow"], f["sock_n"])
	}
}
END {
	if (mt_n == "")
		mt_n = 8
	if (mt_cpus == "")
		mt_cpus = "?"
	n = split("sendrecv poll 8|write poll 8|send_bw poll 1048576|" \
		  "write_bw poll 1048576|connect block|sendrecv poll 8 idle|" \
		  "sendrecv block 8|mt n|mt growth", keys, "|")
	split("8 B Send ping-pong, polling|8 B RDMA Write ping-pong, polling|" \
	      "1 MiB Send stream, polling|1 MiB RDMA Write stream, polling|" \
	      "connection setup|8 B Send ping-pong, +512 idle conns|" \
	      "8 B Send ping-pong, blocking|" \
	      "8 B Send ping-pong, " mt_n " threads polling on " mt_cpus " cores|" \
	      "  the same, time(" mt_n " threads)/time(1)", names, "|")
	# what legacy MPIs over uDAPL do: each round pattern with its p99
	# and its rounds over 1 ms
	m = split("write_poll poll 8|write_poll poll 4096|write_poll poll 65536|" \
		  "read_evd poll 8|read_mem poll 8|write_evd poll 8|write_mem poll 8", rkeys, "|")
	split("RDMA Write into a polled ring, 8 B|  the same, 4 KiB|  the same, 64 KiB|" \
	      "8 B RDMA Read, target spins on an EVD|8 B RDMA Read, target spins on memory|" \
	      "8 B RDMA Write, target spins on an EVD|8 B RDMA Write, target spins on memory",
	      rnames, "|")
	for (k = 1; k <= m; k++) {
		keys[++n] = rkeys[k]
		names[n] = rnames[k]
		keys[++n] = rkeys[k] " p99"
		names[n] = "    p99"
		keys[++n] = rkeys[k] " ms"
		names[n] = "    rounds over 1 ms, of all"
	}
	keys[++n] = "window poll 8"
	names[n] = "8 B Sends, a window of 64, polling"
	keys[++n] = "cycle block 8"
	names[n] = "connect+accept+8 B message+disconnect"
	tcp["mt growth"] = growth(tcp["mt n"], tcp["mt 1"])
	ofi["mt growth"] = growth(ofi["mt n"], ofi["mt 1"])
	raw["mt growth"] = growth(raw["mt n"], raw["mt 1"])
	sock["mt growth"] = growth(sock["mt n"], sock["mt 1"])
	# sockets have no RDMA Write: the same bytes by send/recv stand in
	sub_sock["write poll 8"] = "sendrecv poll 8"
	sub_sock["write_bw poll 1048576"] = "send_bw poll 1048576"
	if (pdata != "")
		names[5] = names[5] " (" pdata " B pd)"
	# the name column: as wide as the longest name, 35 at least
	w = 35
	for (k = 1; k <= n; k++)
		if (length(names[k]) > w)
			w = length(names[k])
	namefmt = "%-" w "s"
	printf "\n" namefmt " %12s %12s %12s %13s %11s %12s %12s\n", "target", "DAT tcp",
	       "socket", "DAT ofi-tcp", "raw libfabric", "tcp/socket", "ofi-tcp/raw",
	       "tcp/ofi-tcp"
	for (k = 1; k <= n; k++) {
		key = keys[k]
		bw = key ~ /_bw/ ? 1 : key == "mt growth" ? 2 : key ~ /^window/ ? 3 : \
		     key ~ / ms$/ ? 4 : 0
		t = tcp_note != "" ? "n/a" : tcp[key]
		s = sock[key]
		mark = ""
		if (key in sub_sock) {
			s = sock[sub_sock[key]]
			if (s != "" && s != "-")
				mark = "*"
		}
		if (key ~ /^(write_poll|read_evd|read_mem|write_evd|write_mem) [a-z]+ [0-9]+$/ && s != "" && s != "-")
			mark = "+"
		# counts have no ratio
		rt = t == "n/a" ? t : bw == 4 ? "-" : ratio(t, s)
		ro = bw == 4 ? "-" : ratio(ofi[key], raw[key])
		rto = t == "n/a" ? t : bw == 4 ? "-" : ratio(t, ofi[key])
		printf namefmt " %12s %12s %12s %13s %11s %12s %12s\n", names[k],
		       t == "n/a" ? t : val(t, bw), val(s, bw) mark, val(ofi[key], bw),
		       val(raw[key], bw), rt, ro, rto
	}
	if (ca_n != "") {
		split(ca_n " connections at once, per conn|memory per connected EP (client)",
		      cnames, "|")
		for (k = 1; k <= 2; k++) {
			if (k == 1) {
				o = ca_us["dat"]; t = ca_us["dat2"]; r = ca_us["raw"]
				fmt = "%.1f us"
			} else {
				o = ca_kib["dat"]; t = ca_kib["dat2"]; r = ca_kib["raw"]
				fmt = "%.1f KiB"
			}
			if (tcp_note != "")
				t = "n/a"
			printf namefmt " %12s %12s %12s %13s %11s %12s %12s\n", cnames[k],
			       t == "n/a" || t == "" ? "n/a" : sprintf(fmt, t), "-",
			       o == "" ? "-" : sprintf(fmt, o), r == "" ? "-" : sprintf(fmt, r),
			       "-", ratio(o, r), t == "n/a" || t == "" ? "n/a" : ratio(t, o)
		}
	}
	print ""
	print "* socket: the send/recv figure of the same size (sockets have no RDMA Write)"
	print "latency (us): a ratio above 1 is slower; bandwidth (GB/s): below 1 is slower"
	if (handoff != "") {
		printf "+ socket: the busy-polled send/recv ping-pong of the same size (RDMA Write" \
		       " into a ring: its half round trip; RDMA Read/Write: its whole round trip)" \
		       " plus one thread hand-off, %.2f us (an eventfd ping-pong between two" \
		       " threads, half round trip); p99 rows: the socket alone\n", handoff
		print "RDMA Write into a ring: half round trip per round; RDMA Read/Write: per" \
		      " operation, the initiator waiting for each completion; rounds over 1 ms:" \
		      " whole rounds, all repetitions (\"no millisecond steps\": fewer than 1 in 10,000)"
		print "window: millions of 8 B messages per second, a ratio below 1 is slower"
	}
	if (mpi_note != "")
		print "note: " mpi_note
	if (ofi["mt n"] != "" || raw["mt n"] != "") {
		print "threads: us = wall time until all " mt_n " threads (each side) are done / round trips" \
		      " per thread, a whole round trip; not pinned"
		print "time(" mt_n " threads)/time(1): how much that grew from 1 thread; a ratio below 1" \
		      " degrades less"
	}
	if (tcp_note != "")
		print "DAT tcp: " tcp_note
}'
table_rc=$?

# The DAT 2.0 data path against 1.2's: the 8 B Send and RDMA Write
# ping-pongs, busy-polled, by dat_bench and by bench/dat_bench2 (the same
# source built for libdat2.so.2 and the u2.0 lines), one after the other
# on each IA; ratio = 2.0/1.2 (above 1 is slower).
echo
echo "== DAT 2.0 against DAT 1.2 (bench/dat_bench2)"
if [ -x "$top/bench/dat_bench2" ]; then
	for gen in 1 2; do
		p=$prog
		[ $gen -eq 2 ] && p="$top/bench/dat_bench2"
		# shellcheck disable=SC2086 # $pin is empty or two words
		timeout --kill-after=10 "$limit" "$p" $pin -t dat -m poll -n 2000 \
			-p sendrecv@8,write@8 -i "$ias_scale" "$@" >"$tmp/gen$gen" 2>&1 ||
			{ echo "run-bench.sh: DAT $gen.x run failed:" >&2; cat "$tmp/gen$gen" >&2; }
	done
	printf "%-9s %5s %-8s %10s %10s %9s\n" pattern size IA "1.2 us" "2.0 us" "2.0/1.2"
	awk '
	FNR == 1 { gen++ }
	/^bench: / {
		key = ""; v = ""
		for (i = 2; i <= NF; i++) {
			split($i, kv, "=")
			if (kv[1] == "pattern" || kv[1] == "size") key = key " " kv[2]
			if (kv[1] ~ /^dat[0-9]*_us$/) { ia = kv[1]; us[gen, key, ia] = kv[2]; seen[key, ia] = 1 }
		}
	}
	END {
		n = split(ias, name, ",")
		for (k in seen) {
			split(k, part, SUBSEP)
			split(part[1], ps, " ")
			idx = part[2] == "dat_us" ? 1 : substr(part[2], 4, 1) + 0
			a = us[1, part[1], part[2]]; b = us[2, part[1], part[2]]
			r = (a > 0 && b > 0) ? sprintf("%.2f", b / a) : "-"
			printf "%-9s %5s %-8s %10s %10s %9s\n", ps[1], ps[2], name[idx], a, b, r
		}
	}' ias="$ias_scale" "$tmp/gen1" "$tmp/gen2" | sort -k3,3 -k1,1
else
	echo "n/a: bench/dat_bench2 not built"
fi
echo

# The two targets dat_bench cannot measure, each by its own script: the
# instructions one 8-byte Send post + poll costs (callgrind; built only
# when configure found <valgrind/callgrind.h>) and the first dat_ia_open
# of a process.  A failure of either is reported, not fatal: the table
# above stands.
here=$(dirname "$0")
echo
echo "== instructions per 8 B Send post + poll (bench/instr-cost.sh)"
if [ -x "$top/bench/post_poll_cost" ] && command -v valgrind >/dev/null 2>&1; then
	sh "$here/instr-cost.sh" || echo "run-bench.sh: instr-cost.sh failed (exit $?)" >&2
else
	echo "n/a: bench/post_poll_cost not built (no <valgrind/callgrind.h>) or no valgrind"
fi
echo
echo "== the first dat_ia_open of a process (bench/cold-open.sh)"
sh "$here/cold-open.sh" || echo "run-bench.sh: cold-open.sh failed (exit $?)" >&2
exit $table_rc
