#!/bin/sh
# cl.sh host [suite] [ia_name]: named dapltest client suites against a
# server on host (srv.sh there), as OFA's cl.sh names them.  Exits non-zero
# when any run failed; the last line is the summary.
#   DAPLTEST       the program (default: dapltest from PATH)
#   DAPLTEST_PORT  the server's port (default 45278)
. "$(dirname "$0")/dt-lib.sh"

suites="conn trans transm transt transme transmet transmete threads threadsm"
suites="$suites perf rdma-read rdma-write bw latb latp lim regression stop"

usage() {
	echo "usage: $0 host [suite] [ia_name]   (env: DAPLTEST, DAPLTEST_PORT)" >&2
	echo "suites: $suites" >&2
	exit 2
}
if [ $# -lt 1 ] || [ $# -gt 3 ]; then usage; fi
case $1 in -h|--help) usage ;; esac
host=$1
suite=${2:-trans}
ia=${3:-ofi-tcp}
srv="-s $host -D $ia -n $DAPLTEST_PORT"
# the transaction OPs most suites use: all three transfer types
mix="client SR 4096 server RW 4096 server RR 4096 client SR 4096 server SR 4096"

# shellcheck disable=SC2086 # word splitting of $srv and $mix is wanted
run_suite() {
	case $1 in
	conn)
		dt_run -T T $srv -i 1 -t 1 -w 1 client SR 4096 server SR 4096 ;;
	trans)
		dt_run -T T $srv -i 8192 -t 1 -w 1 client SR 4096 server SR 4096 ;;
	transm)
		dt_run -T T $srv -i 500 -t 1 -w 1 -V $mix
		dt_run -T T $srv -i 500 -t 1 -w 1 -V -P \
			client SR 1024 -f server SR 1536 2 -f \
			client RW 8192 server RR 32768 4 client SR 256 server SR 256
		dt_run -T T $srv -i 500 -t 1 -w 1 \
			client SR 32768 4 server RW 32768 4 server RR 32768 4 \
			server SR 32768 4 ;;
	transt)
		dt_run -T T $srv -i 1000 -t 4 -w 1 -V $mix ;;
	transme)
		dt_run -T T $srv -i 1000 -t 1 -w 4 -V $mix ;;
	transmet)
		dt_run -T T $srv -i 1000 -t 2 -w 4 -V $mix ;;
	transmete)
		dt_run -T T $srv -i 1000 -t 4 -w 4 -V $mix ;;
	threads)
		dt_run -T T $srv -i 1000 -t 6 -w 1 client SR 4096 server SR 4096 ;;
	threadsm)
		dt_run -T T $srv -i 1000 -t 4 -w 4 -P \
			client SR 1024 server RR 4096 server RW 4096 server SR 1024 ;;
	perf)
		dt_run -T P $srv -i 2048 -m b RW 4096 2 ;;
	rdma-read)
		dt_run -T P $srv -i 2048 -m b RR 32768 1 ;;
	rdma-write)
		dt_run -T P $srv -i 2048 -m b RW 32768 4 ;;
	bw)
		dt_run -T P $srv -i 1024 -p 16 -m b RW 65536 2 ;;
	latb)
		dt_run -T P $srv -i 8192 -p 1 -m b RW 4 1 ;;
	latp)
		dt_run -T P $srv -i 100000 -p 1 -m p RW 4 1 ;;
	lim)
		# no server needed: each limit test on its own
		for t in limit_ia limit_pz limit_cno limit_evd limit_rsp \
			 limit_psp limit_ep limit_lmr limit_size_lmr; do
			dt_run -T L -D "$ia" -w 8 -m 100 "$t"
		done
		dt_run -T L -D "$ia" -w 8 -m 15 limit_rpost ;;
	regression)
		for s in trans perf threads threadsm transm transt transme \
			 transmet transmete rdma-write rdma-read bw latb latp; do
			echo "== $s"
			run_suite "$s"
		done
		dt_run -T Q $srv ;;
	stop)
		dt_run -T Q $srv ;;
	*)
		echo "$0: unknown suite '$1'" >&2
		usage ;;
	esac
}

run_suite "$suite"
dt_summary "cl.sh $suite"
