#!/bin/sh
# Runs bench/cold_open from the top build directory: what the first
# dat_ia_open of a process costs, each run in a fresh process, next to
# raw libfabric's own cold start (dlopen, first fi_getinfo, fabric, domain
# and event queue) and a plain socket+bind+listen (bench/README.md).
#
#	cd <build dir> && sh <srcdir>/bench/cold-open.sh [cold_open options]
#
# Options go to cold_open: -r reps (default 5), -i ia,... (default
# ofi-tcp,tcp), -T seconds (each child's bound, default 30), -v.
# DAT_OVERRIDE points at the build tree's dat.conf, so the freshly built
# providers are used.  The run is bounded by timeout(1): BENCH_TIMEOUT
# seconds (default 240).  Nothing is pinned: the PSM libraries that
# Debian's libfabric loads pin the loading thread themselves.  Not part of
# make check: a benchmark is not a test.
set -u

top=$(pwd)
prog="$top/bench/cold_open"
if [ ! -x "$prog" ]; then
	echo "cold-open.sh: $prog not found: run from the top build directory after make" >&2
	exit 2
fi
if [ ! -f "$top/dat.conf" ]; then
	echo "cold-open.sh: $top/dat.conf not found: run make in $top first" >&2
	exit 2
fi
DAT_OVERRIDE="$top/dat.conf"
export DAT_OVERRIDE

limit=${BENCH_TIMEOUT:-240}
timeout --kill-after=10 "$limit" "$prog" "$@"
rc=$?
case $rc in
0) ;;
124|137) echo "cold-open.sh: cold_open did not finish within $limit s" >&2 ;;
2) echo "cold-open.sh: cold_open: usage error (exit 2)" >&2 ;;
*) echo "cold-open.sh: cold_open failed (exit $rc)" >&2 ;;
esac
exit $rc
