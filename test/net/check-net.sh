#!/bin/sh
# make check-net: two hosts without two machines.  Two network namespaces,
# "a" (the server) and "b" (the client), joined by a veth pair, each with
# its own IPv4 and IPv6 address; the ofi-tcp and tcp providers get an IA
# bound to each end (ofi-tcp-a, ofi-tcp-b, tcp-a, tcp-b in a dat.conf made
# here) and run across the link:
#  - the two-process API suites (test_conn, test_dto, test_order): the
#    test process in b, its server process in a (DAT_TEST_SERVER_NETNS);
#  - the one-process suites (test_objects, test_mem, test_compat) in b, on
#    an address that is not loopback;
#  - dapltest: regress.sh, -T T with every DTO kind, -T P blocking and
#    polling, the server in a and the client in b; -T L in b;
#  - the addresses users see (dat_ia_query, dat_cr_query, dat_ep_query on
#    both sides, dat_conn_demo) over IPv4 on both providers and over IPv6
#    on tcp (tcp6-a, tcp6-b);
#  - link faults (net_fault): the link taken down mid-stream and left
#    down, and the server's host "vanishing" (link down, its processes
#    killed, so no FIN or RST gets out, link up again).  The client must
#    see its connection end, every Send it posted complete exactly once,
#    and a new connection work once the link is back.  tcp's bound is
#    DAPL_TCP_PEER_TIMEOUT_MS (3000 here), with data in flight or idle;
#    ofi-tcp's is the kernel's retransmission limit, net.ipv4.tcp_retries2
#    (5 in namespace b here), and an idle connection is never noticed.
#
# CHECK_NET_ONLY=suites|addresses|faults runs one part.
# Run from the top build directory after make (make check-net does).  Needs
# root and ip(8); anywhere namespaces cannot be made it prints SKIPPED and
# exits 77.  Everything it makes is removed on exit; every program is
# bounded by timeout(1).
set -u
builddir=${builddir:-.}
srcdir=${srcdir:-.}
conf_in=${DAT_TEST_CONF:-$builddir/dat.conf}

skip() {
	echo "check-net: SKIPPED: $*"
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "making network namespaces needs root"
command -v ip >/dev/null 2>&1 || skip "ip(8) is not installed (iproute2)"
[ -f "$conf_in" ] || skip "no dat.conf at $conf_in: run make first"

tag=$$
ns_a=datnet-a-$tag
ns_b=datnet-b-$tag
if_a=dna$tag
if_b=dnb$tag
addr_a=10.231.0.1
addr_b=10.231.0.2
addr6_a=fd00:da7:231::1
addr6_b=fd00:da7:231::2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-net.XXXXXX") || exit 1

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	ip netns pids "$ns_a" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns pids "$ns_b" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

if ! ip netns add "$ns_a" 2>"$tmp/err" || ! ip netns add "$ns_b" 2>>"$tmp/err"; then
	skip "cannot make a network namespace: $(cat "$tmp/err")"
fi
if ! ip link add "$if_a" type veth peer name "$if_b" 2>"$tmp/err"; then
	skip "cannot make a veth pair: $(cat "$tmp/err")"
fi
if ! { ip link set "$if_a" netns "$ns_a" &&
	ip link set "$if_b" netns "$ns_b" &&
	ip -n "$ns_a" addr add "$addr_a/24" dev "$if_a" &&
	ip -n "$ns_b" addr add "$addr_b/24" dev "$if_b" &&
	ip -n "$ns_a" addr add "$addr6_a/64" dev "$if_a" nodad &&
	ip -n "$ns_b" addr add "$addr6_b/64" dev "$if_b" nodad &&
	ip -n "$ns_a" link set lo up && ip -n "$ns_b" link set lo up &&
	ip -n "$ns_a" link set "$if_a" up && ip -n "$ns_b" link set "$if_b" up; }; then
	echo "FAIL: cannot set up the link"
	exit 1
fi
echo "check-net: $ns_a ($addr_a, $addr6_a) <-> $ns_b ($addr_b, $addr6_b) over veth"

# The providers' lines again, one per end: name-a / name-b, bound to that
# end's address.
conf=$tmp/dat.conf
: >"$conf"
for ia in ofi-tcp tcp; do
	line=$(grep "^$ia " "$conf_in" | head -1)
	[ -n "$line" ] || { echo "check-net: no $ia line in $conf_in"; continue; }
	for end in a b; do
		eval "addr=\$addr_$end"
		# shellcheck disable=SC2154 # addr is set by the eval
		printf '%s\n' "$line" |
			sed -e "s/^$ia /$ia-$end /" -e "s/127\.0\.0\.1/$addr/" >>"$conf"
	done
done
# tcp over IPv6 as well
line=$(grep "^tcp " "$conf_in" | head -1)
if [ -n "$line" ]; then
	printf '%s\n' "$line" | sed -e "s/^tcp /tcp6-a /" -e "s/127\.0\.0\.1/$addr6_a/" >>"$conf"
	printf '%s\n' "$line" | sed -e "s/^tcp /tcp6-b /" -e "s/127\.0\.0\.1/$addr6_b/" >>"$conf"
fi
cat "$conf"

in_b() {
	ip netns exec "$ns_b" env DAT_TEST_CONF="$conf" DAT_OVERRIDE="$conf" "$@"
}

fail=0
pass() { echo "PASS: $*"; }
bad() {
	echo "FAIL: $*"
	fail=1
}

# prog OUT: the last "N%: Checks" line of OUT
checks_line() { grep '^[0-9]*%: Checks' "$1" | tail -1; }

# suite LABEL PROGRAM VAR=VALUE...: one API suite in b, bounded
suite() {
	_label=$1 _t=$2
	shift 2
	in_b "$@" timeout 900 "$builddir/test/api/$_t" >"$tmp/$_t.out" 2>&1
	_rc=$?
	if [ $_rc -eq 0 ]; then
		pass "$_label: $(checks_line "$tmp/$_t.out")"
	else
		bad "$_label (exit $_rc)"
		grep -v '^libdat:' "$tmp/$_t.out" | tail -25
	fi
}

# script LABEL SCRIPT VAR=VALUE...: one of the source tree's check
# scripts in b
script() {
	_label=$1 _s=$2
	shift 2
	if out=$(in_b "$@" builddir="$builddir" srcdir="$srcdir" \
		sh "$srcdir/$_s" 2>&1); then
		pass "$_label"
	else
		bad "$_label"
		printf '%s\n' "$out" | tail -30
	fi
}

only=${CHECK_NET_ONLY:-}
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

for ia in ofi-tcp tcp; do
	want suites || break
	grep -q "^$ia-a " "$conf" || continue
	echo
	echo "== $ia across the link"
	for t in test_conn test_dto test_order; do
		suite "$t, client in b, server in a" "$t" DAT_TEST_IA="$ia-b" \
			DAT_TEST_SERVER_IA="$ia-a" DAT_TEST_SERVER_NETNS="$ns_a" \
			DAT_TEST_ADDR="$addr_a" DAT_TEST_CLIENT_ADDR="$addr_b"
	done
	for t in test_objects test_mem test_compat; do
		suite "$t in b on $addr_b" "$t" DAT_TEST_IA="$ia-b" DAT_TEST_ADDR="$addr_b"
	done

	# dapltest: the regression script across the link, then -T T with
	# every DTO kind and -T P both ways, against one more server
	across="DAT_TEST_SERVER_IA=$ia-a DAT_TEST_SERVER_NETNS=$ns_a DAT_TEST_ADDR=$addr_a"
	# shellcheck disable=SC2086 # $across is split on purpose
	script "dapltest regress.sh, server in a, client in b" \
		test/dapltest/check-regress.sh DAT_TEST_IA="$ia-b" $across
	# shellcheck disable=SC2086
	script "dapltest -T T, -T P (blocking, polling), server in a, client in b" \
		test/net/dapltest-across.sh DAT_TEST_IA="$ia-b" $across
	script "dapltest -T L in b on $addr_b" test/dapltest/check-limit.sh \
		DAT_TEST_IA="$ia-b"
done

# addresses IA SERVER_ADDR CLIENT_ADDR: dat_conn_demo's server (IA-a) in a,
# its client (IA-b) in b; every address each side reports must be the
# right end's.
addresses() {
	_ia=$1 _sa=$2 _ca=$3
	rm -f "$tmp/demo.fifo"
	mkfifo "$tmp/demo.fifo" || return 1
	ip netns exec "$ns_a" env DAT_OVERRIDE="$conf" timeout 60 \
		"$builddir/test/tools/dat_conn_demo" server "$_ia-a" \
		>"$tmp/demo.fifo" 2>"$tmp/demo-server.err" &
	_spid=$!
	exec 4<"$tmp/demo.fifo"
	_qual=
	: >"$tmp/demo-server.out"
	while IFS= read -r _l <&4; do
		echo "$_l" >>"$tmp/demo-server.out"
		case $_l in
		"qual "*) _qual=${_l#qual }; break ;;
		esac
	done
	if [ -z "$_qual" ]; then
		exec 4<&-
		wait "$_spid"
		bad "$_ia: dat_conn_demo's server did not start: $(cat "$tmp/demo-server.err")"
		return
	fi
	cat <&4 >>"$tmp/demo-server.out" &
	_cpid=$!
	exec 4<&-
	in_b timeout 60 "$builddir/test/tools/dat_conn_demo" client "$_ia-b" \
		"$_qual" "$_sa" >"$tmp/demo-client.out" 2>"$tmp/demo-client.err"
	_crc=$?
	wait "$_spid"
	_src=$?
	wait "$_cpid"
	if [ $_crc -ne 0 ] || [ $_src -ne 0 ]; then
		bad "$_ia: dat_conn_demo across the link (client $_crc, server $_src)"
		cat "$tmp/demo-client.err" "$tmp/demo-server.err"
		return
	fi
	_ok=1
	for want in "server: ia address $_sa" "server: request from $_ca" \
		    "server: peer address $_ca"; do
		grep -qx "$want" "$tmp/demo-server.out" || { _ok=; echo "missing: $want"; }
	done
	for want in "client: ia address $_ca" "client: peer address $_sa"; do
		grep -qx "$want" "$tmp/demo-client.out" || { _ok=; echo "missing: $want"; }
	done
	if [ -n "$_ok" ]; then
		pass "$_ia: every address reported is the right end's ($_sa <-> $_ca)"
	else
		bad "$_ia: addresses"
		cat "$tmp/demo-server.out" "$tmp/demo-client.out"
	fi
}

if want addresses; then
	echo
	echo "== addresses as users see them"
	for ia in ofi-tcp tcp; do
		grep -q "^$ia-a " "$conf" && addresses "$ia" "$addr_a" "$addr_b"
	done
	grep -q "^tcp6-a " "$conf" && addresses tcp6 "$addr6_a" "$addr6_b"
fi


# start_server IA: net_fault's server (IA-a) in a, bounded; sets srv_pid
# and srv_qual (empty when it did not start).
start_server() {
	rm -f "$tmp/srv.fifo"
	mkfifo "$tmp/srv.fifo" || return 1
	# 5>&- 6<&-: the client's pipes stay the script's alone, or a server
	# started while the client runs would keep its input open
	ip netns exec "$ns_a" env DAT_OVERRIDE="$conf" DAPL_TCP_PEER_TIMEOUT_MS=3000 \
		timeout 300 "$builddir/test/net/net_fault" server "$1-a" \
		>"$tmp/srv.fifo" 2>>"$tmp/srv.err" 5>&- 6<&- &
	srv_pid=$!
	exec 7<"$tmp/srv.fifo"
	srv_qual=
	if IFS= read -r _l <&7; then
		case $_l in "qual "*) srv_qual=${_l#qual } ;; esac
	fi
	cat <&7 >>"$tmp/srv.out" 5>&- 6<&- &
	exec 7<&-
}

# read_until PATTERN: lines of the client (fd 6) until one matches; the
# line is in $got ("" at end of output).
read_until() {
	got=
	while IFS= read -r _l <&6; do
		echo "  client: $_l"
		# shellcheck disable=SC2254 # the pattern is a glob on purpose
		case $_l in
		$1) got=$_l; return 0 ;;
		esac
	done
	return 1
}

ms_now() { date +%s%3N; }

# Kills everything in a (no FIN gets out while the link is down) and
# reaps the server; in one redirected group, since bash reports a job
# killed by a signal on its stderr when it reaps it.
stop_server() {
	{
		ip netns pids "$ns_a" | xargs -r kill -9
		wait "$srv_pid"
	} 2>/dev/null
}

# fault IA KIND ADDR_A: KIND is "down" (the link goes down mid-stream and
# stays down until the client has reported), "idle" (the same with no
# traffic) or "vanish" (link down, the server killed, link up).
fault() {
	_ia=$1 _kind=$2 _to=$3
	: >"$tmp/srv.err"
	: >"$tmp/srv.out"
	start_server "$_ia"
	[ -n "$srv_qual" ] || { bad "$_ia $_kind: the server did not start"; cat "$tmp/srv.err"; return; }
	rm -f "$tmp/cli.in" "$tmp/cli.out"
	mkfifo "$tmp/cli.in" "$tmp/cli.out" || return
	_mode=
	[ "$_kind" = idle ] && _mode=idle
	# shellcheck disable=SC2086 # no argument at all when not idle
	in_b DAPL_TCP_PEER_TIMEOUT_MS=3000 timeout 300 \
		"$builddir/test/net/net_fault" client "$_ia-b" "$_to" "$srv_qual" \
		$_mode <"$tmp/cli.in" >"$tmp/cli.out" 2>"$tmp/cli.err" &
	_cpid=$!
	exec 5>"$tmp/cli.in"
	exec 6<"$tmp/cli.out"
	if ! read_until streaming; then
		bad "$_ia $_kind: the client did not start streaming"
		cat "$tmp/cli.err"
		exec 5>&- 6<&-
		wait "$_cpid"
		stop_server
		return
	fi
	_t0=$(ms_now)
	ip -n "$ns_a" link set "$if_a" down
	if [ "$_kind" = vanish ]; then
		stop_server
		ip -n "$ns_a" link set "$if_a" up
	fi
	read_until "event *"
	_t1=$(ms_now)
	_event=$got
	read_until "dtos posted *"
	_dtos=$got
	[ "$_kind" = vanish ] || ip -n "$ns_a" link set "$if_a" up
	if [ "$_kind" = vanish ]; then
		: >"$tmp/srv.err"
		start_server "$_ia"
	fi
	# the neighbour entry went FAILED while the link was down, and a
	# connect would be refused at once until it expires: forget it
	ip -n "$ns_b" neigh flush dev "$if_b" 2>/dev/null
	echo "connect $srv_qual" >&5
	read_until reconnected
	_again=$got
	exec 5>&-
	read_until "never" >/dev/null
	exec 6<&-
	wait "$_cpid"
	_rc=$?
	stop_server
	# a link that stays down is a broken connection where the provider
	# can tell (tcp); libfabric reports every end as a disconnect
	if [ "$_ia" = tcp ] && [ "$_kind" != vanish ] && [ -n "$_event" ]; then
		case $_event in
		"event BROKEN "*) ;;
		*) echo "tcp reported '$_event' for a link that went down, not BROKEN"; _rc=1 ;;
		esac
	fi
	if [ $_rc -eq 0 ] && [ -n "$_event" ] && [ -n "$_dtos" ] && [ -n "$_again" ]; then
		pass "$_ia, link $_kind: ${_event#event } ($((_t1 - _t0)) ms after the fault); ${_dtos#dtos }; a new connection works"
	else
		bad "$_ia, link $_kind (client exit $_rc)"
		cat "$tmp/cli.err" "$tmp/srv.err"
	fi
}

if want faults; then
	echo
	echo "== link faults"
	# ofi-tcp's sockets are libfabric's: the kernel's retransmission
	# limit is its bound.  The namespace is ours, so is its setting.
	ip netns exec "$ns_b" sysctl -qw net.ipv4.tcp_retries2=5 ||
		echo "check-net: cannot set net.ipv4.tcp_retries2 in $ns_b"
	for ia in tcp ofi-tcp; do
		grep -q "^$ia-a " "$conf" || continue
		# an idle connection to a vanished peer: only tcp looks
		kinds="down vanish"
		[ "$ia" = tcp ] && kinds="down idle vanish"
		for kind in $kinds; do
			fault "$ia" "$kind" "$addr_a"
		done
	done
fi

echo
[ $fail -eq 0 ] && echo "check-net: all passed" || echo "check-net: FAILED"
exit $fail
