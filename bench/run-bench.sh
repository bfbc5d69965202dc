#!/bin/sh
# Runs bench/dat_bench (libdat over ofi-tcp against raw libfabric tcp) from
# the top build directory and prints its table:
#
#	cd <build dir> && sh <srcdir>/bench/run-bench.sh [dat_bench options]
#
# DAT_OVERRIDE points at the build tree's dat.conf, so the freshly built
# libdaplofi is used.  With two or more CPUs allowed, the server and the
# client are pinned to two different ones (dat_bench -c, which does what
# taskset does, in each of the two processes it forks).  The whole run is
# bounded by timeout(1): BENCH_TIMEOUT seconds (default 240).
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
# shellcheck disable=SC2086 # $pin is empty or two words
timeout --kill-after=10 "$limit" "$prog" $pin "$@"
rc=$?
case $rc in
0) ;;
124|137) echo "run-bench.sh: dat_bench did not finish within $limit s" >&2 ;;
3) echo "run-bench.sh: the DAT side is not implemented in this libdat (exit 3)" >&2 ;;
*) echo "run-bench.sh: dat_bench failed (exit $rc)" >&2 ;;
esac
exit $rc
