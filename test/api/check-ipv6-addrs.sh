#!/bin/sh
# ofi over IPv6, as users see it: dat_conn_demo's server and client in two
# processes over ofi-tcp6 (the build tree's dat.conf: "tcp ::1").  Every
# address DAT reports must be ::1, an IPv6 one: dat_ia_query's IA address
# on both sides, dat_cr_query's remote address on the server, and
# dat_ep_query's remote address on both.  Then the other family: the
# IPv6 IA connecting to 127.0.0.1, and the IPv4 IA (ofi-tcp) connecting
# to ::1, each end as UNREACHABLE (ofi's connections leave from the IA's
# own address, dapl_ofi(7)).
#
# Needs DAT_TEST_CONF with an ofi-tcp6 line; skips (77) without one, or
# when ::1 is not an address of this host (IPv6 disabled).
# Run from the top build directory (make check does).

if [ -z "$DAT_TEST_CONF" ] || ! grep -q '^ofi-tcp6 ' "$DAT_TEST_CONF"; then
	echo "SKIP: no ofi-tcp6 line in DAT_TEST_CONF (${DAT_TEST_CONF:-unset})"
	exit 77
fi
if ! grep -q '^00000000000000000000000000000001 ' /proc/net/if_inet6 2>/dev/null; then
	echo "SKIP: ::1 is not an address of this host"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
# shellcheck source=test/api/conn-demo-lib.sh
. "$(dirname "$0")/conn-demo-lib.sh"

demo_server ofi-tcp6
demo_client ofi-tcp6 ::1
demo_server_wait
[ "$client_rc" -eq 0 ] || fail "the client exited with status $client_rc"
[ "$server_rc" -eq 0 ] || fail "the server exited with status $server_rc"

for want in "server: ia address ::1" "server: request from ::1" \
	    "server: peer address ::1"; do
	grep -qx "$want" "$tmp/server.out" || fail "the server did not report '$want'"
done
for want in "client: ia address ::1" "client: peer address ::1"; do
	grep -qx "$want" "$tmp/client.out" || fail "the client did not report '$want'"
done
echo "PASS: ofi-tcp6: the IA, request and peer addresses are ::1 on both sides"

# The other family, where nothing listens: UNREACHABLE (a socket that
# could get there would be refused instead: NON_PEER_REJECTED).
other() {
	_ia=$1 _to=$2
	demo_client "$_ia" "$_to"
	_rc=$client_rc
	[ "$_rc" -ne 0 ] || fail "$_ia connected to $_to"
	grep -q "got UNREACHABLE" "$tmp/client.err" ||
		fail "$_ia connecting to $_to did not end as UNREACHABLE (exit $_rc)"
	echo "PASS: $_ia to $_to: UNREACHABLE"
}
other ofi-tcp6 127.0.0.1
other ofi-tcp ::1
exit 0
