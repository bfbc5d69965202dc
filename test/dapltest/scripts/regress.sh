#!/bin/sh
# regress.sh host [ia_name]: the six transaction tests of OFA's regression
# script against a dapltest server on host, then -T Q (the server exits).
# Exits non-zero when any run failed; the last line is the summary.
#   DAPLTEST        the program (default: dapltest from PATH)
#   DAPLTEST_PORT   the server's port (default 45278)
#   DAPLTEST_ITERS  iterations of each test (default 10000, as OFA)
. "$(dirname "$0")/dt-lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
	echo "usage: $0 host [ia_name]   (env: DAPLTEST, DAPLTEST_PORT, DAPLTEST_ITERS)" >&2
	exit 2
fi
host=$1
ia=${2:-ofi-tcp}
iters=${DAPLTEST_ITERS:-10000}
common="-s $host -D $ia -n $DAPLTEST_PORT"
mix="client SR 256 server RW 4096 server SR 256 client SR 256 server RW 4096 server SR 256 client SR 4096 server SR 256"

# shellcheck disable=SC2086 # word splitting of $common and $mix is wanted
{
dt_run -T T $common -i "$iters" -t 1 -w 1 client SR 256 server SR 256
dt_run -T T $common -i "$iters" -t 1 -w 1 client SR 256 server RW 4096 server SR 256
dt_run -T T $common -i "$iters" -t 1 -w 1 client SR 256 server RR 4096 server SR 256
dt_run -T T $common -i "$iters" -t 1 -w 1 $mix
dt_run -T T $common -i "$iters" -t 1 -w 8 $mix
dt_run -T T $common -i "$iters" -t 4 -w 8 $mix
dt_run -T Q $common
}
dt_summary regress.sh
