#!/bin/sh
# The acceptance demo of the connection issue: dat_conn_demo's server and
# client in two processes over the IA under test (ofi-tcp, 127.0.0.1).
# The client offers RDMA reads in 8 / out 4, the server in 2 / out 16:
# each must report what was negotiated, and the server must show exactly
# the client's 20 bytes of private data.
#
# Needs DAT_TEST_CONF (the build tree's dat.conf); exits 77 (skip) without.
# Run from the top build directory (make check does).

if [ -z "$DAT_TEST_CONF" ]; then
	echo "SKIP: DAT_TEST_CONF is not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
ia=${DAT_TEST_IA:-ofi-tcp}
# shellcheck source=test/api/conn-demo-lib.sh
. "$(dirname "$0")/conn-demo-lib.sh"

demo_server "$ia"
echo "server listens on qual $qual"
demo_client "$ia"
demo_server_wait

echo "--- client"
cat "$tmp/client.out"
echo "--- server"
cat "$tmp/server.out"

[ "$client_rc" -eq 0 ] || fail "the client exited with status $client_rc"
[ "$server_rc" -eq 0 ] || fail "the server exited with status $server_rc"

grep -qx 'client: negotiated in 8 out 2' "$tmp/client.out" ||
	fail "the client did not report 'client: negotiated in 8 out 2'"
grep -qx 'server: negotiated in 2 out 8' "$tmp/server.out" ||
	fail "the server did not report 'server: negotiated in 2 out 8'"

want_hex=$(printf '%s' 'libdat-ird-ord-demo!' | od -An -tx1 | tr -d ' \n')
grep -qx "server: private data 20 bytes: $want_hex" "$tmp/server.out" ||
	fail "the server did not report exactly the client's 20 bytes ($want_hex)"
[ "$(grep -c '^server: private data ' "$tmp/server.out")" -eq 1 ] ||
	fail "the server reported private data more than once"
want_hex=$(printf '%s' 'libdat-accepted' | od -An -tx1 | tr -d ' \n')
grep -qx "client: private data 15 bytes: $want_hex" "$tmp/client.out" ||
	fail "the client did not report exactly the server's 15 bytes ($want_hex)"

echo "PASS: read limits and private data as expected"
exit 0
