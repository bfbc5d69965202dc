#!/bin/sh
# Runs bench/post_poll_cost under valgrind's callgrind from the top build
# directory: the instructions one 8-byte Send post + poll costs, DAT over
# ofi-tcp (and over tcp, libdat's own provider, when dat.conf has it)
# against raw libfabric tcp (bench/README.md).
#
#	cd <build dir> && sh <srcdir>/bench/instr-cost.sh [-n cycles] [-k polls] [-w warm-up] [-r reps] [-v]
#
# Each stack runs twice, each run in one process (post_poll_cost's own
# comment says what it does), and that -r times (default 3): the table
# has each figure's median over the repetitions and its range.  Which
# thread does a message's receive work varies from run to run on tcp (the
# progress thread, when it is woken before the measuring thread polls, or
# the measuring thread), so the measuring thread's own figure moves with
# it while the whole process's stays put:
#
#  1. --collect-atstart=no: post_poll_cost toggles collection on and off
#     around each region, and collection is per thread in callgrind, so
#     the counts are the measuring thread's only: what the application's
#     own thread executes, in libdat, the provider, libfabric and libc.
#  2. --collect-atstart=yes with post_poll_cost -A (no toggles): every
#     thread collects, and a region's dump (--separate-threads=no, so one
#     file holds every thread's costs) has the whole process's
#     instructions between the dumps around it: with libdat's progress
#     thread and any thread of libfabric's.  Under valgrind threads take
#     turns and everything runs some 5-50 times slower, while the progress
#     thread's timers keep their period: its share here is an indication,
#     not what it does at full speed.
#
# The table, per message (one post_recv, one 8 B Send post, polling both
# completions): the measuring thread's instructions with its empty polls
# taken out, (Ir(cycle) - empty_rx * Ir(empty rx poll) - empty_tx *
# Ir(empty tx poll)) / n, the cost of one empty poll of each queue (from
# post_poll_cost's idle regions), how many empty polls a message took,
# the whole process's instructions per message (run 2, the empty polls
# taken out the same way), and the ratios DAT/raw.  Callgrind counts
# user-space instructions (Ir) only: the kernel's side of the syscalls is
# not in them.  -v adds, for each DAT IA, the top functions by inclusive
# cost per message of the measuring thread (callgrind_annotate).
#
# Options: -n cycles (default 2000), -k empty polls per idle region
# (default 2000), -w warm-up cycles (default 200), -r repetitions
# (default 3), -v.  DAT_OVERRIDE
# points at the build tree's dat.conf, DAT_PROGRESS_SPIN_US=0 (below);
# each run is bounded by timeout(1):
# BENCH_TIMEOUT seconds (default 600).  Not part of make check.
set -u

me=instr-cost.sh
top=$(pwd)
prog="$top/bench/post_poll_cost"
if [ ! -x "$prog" ]; then
	echo "$me: $prog not found: run from the top build directory after make" >&2
	echo "$me: (it is built only when configure found <valgrind/callgrind.h>)" >&2
	exit 2
fi
if [ ! -f "$top/dat.conf" ]; then
	echo "$me: $top/dat.conf not found: run make in $top first" >&2
	exit 2
fi
for t in valgrind callgrind_annotate timeout; do
	if ! command -v $t >/dev/null 2>&1; then
		echo "$me: $t not found (Debian: valgrind, coreutils)" >&2
		exit 2
	fi
done
DAT_OVERRIDE="$top/dat.conf"
export DAT_OVERRIDE
# The progress thread does not spin between arrivals here (libdat(7),
# DAT_PROGRESS_SPIN_US; 10 us by default): under valgrind the threads
# take turns, and a spinning thread's polls, many times more frequent
# than at full speed, change what the measuring thread finds when it
# polls.  What is measured is the program's own post and poll.
DAT_PROGRESS_SPIN_US=0
export DAT_PROGRESS_SPIN_US

n=2000 k=2000 warm=200 reps=3 verbose=0
usage() {
	echo "usage: $me [-n cycles] [-k empty polls] [-w warm-up cycles] [-r reps] [-v]" >&2
	exit 2
}
while getopts n:k:w:r:vh opt; do
	case $opt in
	n) n=$OPTARG ;;
	k) k=$OPTARG ;;
	w) warm=$OPTARG ;;
	r) reps=$OPTARG ;;
	v) verbose=1 ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
for v in "$n" "$k" "$warm" "$reps"; do
	case $v in
	''|*[!0-9]*) usage ;;
	esac
done
if [ "$n" -eq 0 ] || [ "$k" -eq 0 ] || [ "$reps" -eq 0 ]; then
	usage
fi

limit=${BENCH_TIMEOUT:-600}
# the program is a libtool wrapper: valgrind must run the real binary
run_libtool=""
if [ -x "$top/libtool" ]; then
	run_libtool="$top/libtool --mode=execute"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/instr-cost.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# run TAG MODE post_poll_cost-args...: MODE measuring or all.  Leaves
# $tmp/TAG.MODE.out.* (the dumps) and $tmp/TAG.MODE.txt (its line).
run() {
	tag=$1 mode=$2
	shift 2
	if [ "$mode" = all ]; then
		set -- --collect-atstart=yes "$prog" -A "$@"
	else
		set -- --collect-atstart=no "$prog" "$@"
	fi
	# shellcheck disable=SC2086
	timeout --kill-after=10 "$limit" $run_libtool valgrind --tool=callgrind \
		--callgrind-out-file="$tmp/$tag.$mode.out" "$@" \
		-n "$n" -k "$k" -w "$warm" \
		>"$tmp/$tag.$mode.txt" 2>"$tmp/$tag.$mode.err"
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q '^post_poll_cost: ' "$tmp/$tag.$mode.txt"; then
		case $rc in
		124|137) echo "$me: $tag ($mode): did not finish within $limit s" >&2 ;;
		*) echo "$me: $tag ($mode): post_poll_cost failed (exit $rc):" >&2 ;;
		esac
		grep -v '^==[0-9]*==' "$tmp/$tag.$mode.err" | tail -5 >&2
		return 1
	fi
	return 0
}

# ir TAG MODE REGION: the Ir of the dump named REGION.
ir() {
	awk -v want="desc: Trigger: Client Request: $3" '
		FNR == 1 { hit = 0 }
		$0 == want { hit = 1 }
		hit && ($1 == "summary:" || $1 == "totals:") { print $2; found = 1; exit }
		END { if (!found) print "?" }' "$tmp/$1.$2".out.*
}

# field TAG MODE KEY: a key=value of post_poll_cost's line.
field() {
	sed -n "s/^post_poll_cost: .* $3=\([^ ]*\).*/\1/p" "$tmp/$1.$2.txt"
}

# The stacks: tag, label, post_poll_cost arguments.
set -- "raw|raw libfabric|-t raw" "ofi-tcp|DAT ofi-tcp|-t dat -i ofi-tcp"
have_tcp=0
if grep -q '^tcp[[:space:]]' "$top/dat.conf"; then
	have_tcp=1
	set -- "$@" "tcp|DAT tcp|-t dat -i tcp"
fi

echo "post_poll_cost under callgrind: $n cycles, $k empty polls per idle queue, $warm warm-up cycles, $reps runs of each"
results=""
failed=0
for s in "$@"; do
	stack=${s%%|*}
	rest=${s#*|}
	label=${rest%%|*}
	args=${rest#*|}
	r=1
	while [ $r -le "$reps" ]; do
		t=$stack.$r
		ok=1
		# shellcheck disable=SC2086
		run "$t" measuring $args || ok=0
		# shellcheck disable=SC2086
		[ $ok -eq 1 ] && { run "$t" all $args || ok=0; }
		if [ $ok -eq 0 ]; then
			failed=1
			results="$results$stack|$label|fail
"
		else
			results="$results$stack|$label|ok|$(ir "$t" measuring cycle)|$(ir "$t" measuring idle_rx)|$(ir "$t" measuring idle_tx)|$(field "$t" measuring empty_rx)|$(field "$t" measuring empty_tx)|$(ir "$t" all cycle)|$(field "$t" all empty_rx)|$(field "$t" all empty_tx)
"
		fi
		r=$((r + 1))
	done
done

echo
printf '%s' "$results" | awk -F'|' -v n="$n" -v k="$k" -v have_tcp="$have_tcp" '
function num(x) { return x ~ /^[0-9]+$/ }
# median, low and high of the m values v[s, 1..m] (sorted here)
function stats(v, s, m,    i, j, t) {
	for (i = 2; i <= m; i++)
		for (j = i; j > 1 && v[s, j - 1] > v[s, j]; j--) {
			t = v[s, j]; v[s, j] = v[s, j - 1]; v[s, j - 1] = t
		}
	lo = v[s, 1]; hi = v[s, m]
	med = m % 2 ? v[s, (m + 1) / 2] : (v[s, m / 2] + v[s, m / 2 + 1]) / 2
}
{
	if (!($1 in seen)) { seen[$1] = 1; order[++ns] = $1; label[$1] = $2 }
	if ($3 != "ok") { failedrun[$1] = 1; next }
	if (!num($4) || !num($5) || !num($6) || !num($9)) { nodump[$1] = 1; next }
	s = $1; m = ++cnt[s]
	erx[s] += $5 / k; etx[s] += $6 / k
	nrx[s, m] = $7 / n; ntx[s, m] = $8 / n
	msg[s, m] = ($4 - $7 * ($5 / k) - $8 * ($6 / k)) / n
	all[s, m] = ($9 - $10 * ($5 / k) - $11 * ($6 / k)) / n
}
END {
	for (i = 1; i <= ns; i++) {
		s = order[i]
		if (!cnt[s]) continue
		m = cnt[s]
		erx[s] /= m; etx[s] /= m
		stats(msg, s, m); msgmed[s] = med; msglo[s] = lo; msghi[s] = hi
		stats(all, s, m); allmed[s] = med; alllo[s] = lo; allhi[s] = hi
		stats(nrx, s, m); nrxmed[s] = med
		stats(ntx, s, m); ntxmed[s] = med
		if (s == "raw") raw = s
	}
	printf "%-14s %20s %20s %17s %15s %8s %8s\n", "stack", "all thr Ir/msg",
		"meas. Ir/msg", "empty polls/msg", "empty poll Ir", "DAT/raw", "(meas.)"
	printf "%-14s %20s %20s %17s %15s %8s %8s\n", "", "median (range)",
		"median (range)", "rx / tx", "rx / tx", "all thr", ""
	for (i = 1; i <= ns; i++) {
		s = order[i]
		if (!cnt[s]) {
			printf "%-14s %20s   (%s)\n", label[s], "n/a",
				nodump[s] ? "no dump found" : "the run failed, above"
			continue
		}
		r = "-"; rm = "-"
		if (raw != "" && s != raw) {
			r = sprintf("%.2f", allmed[s] / allmed[raw])
			rm = sprintf("%.2f", msgmed[s] / msgmed[raw])
		}
		printf "%-14s %6.0f %13s %6.0f %13s %8.2f / %-6.2f %7.0f / %-5.0f %8s %8s\n",
			label[s], allmed[s], sprintf("(%.0f-%.0f)", alllo[s], allhi[s]),
			msgmed[s], sprintf("(%.0f-%.0f)", msglo[s], msghi[s]),
			nrxmed[s], ntxmed[s], erx[s], etx[s], r, rm
	}
	if (!have_tcp)
		printf "%-14s %20s   (no tcp entry in dat.conf)\n", "DAT tcp", "n/a"
	print ""
	print "all thr: every thread of the process (nothing toggled), per post_recv + 8 B"
	print "Send post + polling both completions, the measuring thread'"'"'s empty polls"
	print "taken out at the cost of an idle empty poll; the figure to compare.  meas.:"
	print "the measuring thread only (collection toggled around each region, per"
	print "thread), empty polls taken out alike: on tcp it moves with which thread did"
	print "the receive work in that run.  Under valgrind the threads take turns and the"
	print "progress thread'"'"'s timers run relatively more often than at full speed."
	print "User-space instructions only."
	for (i = 1; i <= ns; i++) {
		s = order[i]
		if (!cnt[s]) continue
		printf "instr: stack=%s all_ir_msg=%.0f all_lo=%.0f all_hi=%.0f ir_msg=%.0f ir_lo=%.0f ir_hi=%.0f empty_rx_ir=%.0f empty_tx_ir=%.0f empty_rx_msg=%.3f empty_tx_msg=%.3f runs=%d", \
			s, allmed[s], alllo[s], allhi[s], msgmed[s], msglo[s], msghi[s], erx[s], etx[s], nrxmed[s], ntxmed[s], cnt[s]
		if (raw != "" && s != raw)
			printf " all_ratio=%.3f ratio=%.3f", allmed[s] / allmed[raw], msgmed[s] / msgmed[raw]
		printf "\n"
	}
}'

# profile TAG LABEL: the measuring thread's top functions in region cycle.
profile() {
	f=$(grep -l '^desc: Trigger: Client Request: cycle$' "$tmp/$1".1.measuring.out.* 2>/dev/null | head -n 1)
	[ -n "$f" ] || return 0
	echo
	echo "$2: the measuring thread's top functions in region cycle,"
	echo "inclusive Ir per message (its empty polls included)"
	# callgrind_annotate names a function once per file it has code from
	# (inlined headers too): one line per function name, the first (the
	# largest); main and what is above it are left out
	callgrind_annotate --inclusive=yes --auto=no "$f" 2>/dev/null | awk -v n="$n" '
		/PROGRAM TOTALS/ { seen = 1; next }
		seen && /^ *[0-9,]+ \(/ {
			ir = $1; gsub(",", "", ir)
			pct = $2
			fn = $3
			if (pct == "(") { pct = $2 $3; fn = $4 }
			sub(/.*:/, "", fn)
			obj = $NF
			if (obj !~ /^\[/ || obj ~ /:/) obj = ""
			sub(/.*\//, "", obj); sub(/\]$/, "", obj)
			if (fn == "" || fn in shown || obj ~ /^ld-linux/ ||
			    fn ~ /^(main|__libc_start_main|\(below|cycles)/)
				next
			shown[fn] = 1
			printf "  %9.0f %8s  %s%s\n", ir / n, pct, fn, obj == "" ? "" : "  (" obj ")"
			if (++count == 10) exit
		}'
}

if [ $verbose -eq 1 ]; then
	# the DAT IAs, then raw libfabric to read them against
	for s in "$@"; do
		tag=${s%%|*}
		rest=${s#*|}
		[ "$tag" = raw ] || profile "$tag" "${rest%%|*}"
	done
	profile raw "raw libfabric"
fi
[ $failed -eq 0 ] || exit 1
exit 0
