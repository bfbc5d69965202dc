#!/bin/sh
# srv.sh [ia_name]: a dapltest server (-T S) on $DAPLTEST_PORT (default
# 45278) over ia_name (default ofi-tcp), until a client sends -T Q.
#   DAPLTEST       the program (default: dapltest from PATH)
#   DAPLTEST_PORT  the port
. "$(dirname "$0")/dt-lib.sh"

case ${1-} in
-h|--help)
	echo "usage: $0 [ia_name]   (env: DAPLTEST, DAPLTEST_PORT)"
	exit 0 ;;
esac
ia=${1:-ofi-tcp}
echo "+ dapltest -T S -D $ia -n $DAPLTEST_PORT"
exec "$DAPLTEST" -T S -D "$ia" -n "$DAPLTEST_PORT"
