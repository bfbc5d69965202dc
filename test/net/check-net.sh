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
#    both sides, dat_conn_demo) over IPv4 and over IPv6 on both providers
#    (tcp6-a, tcp6-b, ofi-tcp6-a, ofi-tcp6-b);
#  - link faults (net_fault): the link taken down mid-stream and left
#    down, every packet silently dropped both ways (iptables DROP rules in
#    both namespaces), and the server's host "vanishing" (link down, its
#    processes killed, so no FIN or RST gets out, link up again).  The client must
#    see its connection end, every Send it posted complete exactly once,
#    and a new connection work once the link is back.  tcp's bound is
#    DAPL_TCP_PEER_TIMEOUT_MS (3000 here), ofi-tcp's
#    DAPL_OFI_PEER_TIMEOUT_MS (3000 here, set on libfabric's sockets), with
#    data in flight or idle (an idle connection: only the tcp providers).
#    Before libdat set it, ofi-tcp's bound was the kernel's retransmission
#    limit, which a client whose Sends had all been acknowledged by TCP
#    (waiting for libfabric's delivery reports) never reached: 1 "link
#    down" run in about 7 waited out its 120 s.
#
#  - the transport-conformance suites (test_transport_tcp, _ofi) at an
#    address whose own connections cross a veth link (transport_across);
#
# CHECK_NET_ONLY=suites|transport|addresses|faults runs one part.
#
# CHECK_NET_RDMA=rxe|siw is the routed mode, for the project's guest
# (check-verbs.sh runs it there): Linux 6.1's Soft-RoCE opens its UDP
# sockets in the first namespace only, so both ends stay in this one.  The
# veth pair gets an RDMA device of that kind on each end, and policy
# routing (rules for what this host sends to each end, ahead of the local
# table; accept_local; fixed neighbours) sends the traffic between the two
# addresses out of one end and in at the other instead of through lo, so
# it really crosses the link.  The IAs are verbs-KIND-a/-b (or what
# CHECK_NET_IAS names); a vanished host is the server's processes killed,
# found by name, instead of a namespace's.  A further fault,
# "drop" there is netem loss 100% on both ends (the guest's kernel has
# sch_netem, the CI host's not; the guest has no iptables).
# CHECK_NET_IAS lists the IAs to run (default: ofi-tcp tcp, or
# verbs-KIND in the routed mode); CHECK_NET_SUITES2 and CHECK_NET_SUITES1
# the two-process and one-process API suites (either may be empty);
# CHECK_NET_LIMIT=0 leaves out dapltest -T L (one host's limits);
# CHECK_NET_FAULTS="down idle drop vanish" picks the faults to run;
# CHECK_NET_FAULT_ENV the variables (bounds) their programs get.
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

rdma=${CHECK_NET_RDMA:-}
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
if [ -n "$rdma" ]; then
	case $rdma in
	rxe|siw) ;;
	*) echo "check-net: CHECK_NET_RDMA must be rxe or siw"; exit 1 ;;
	esac
	# its own subnet and rule numbers: a run per kind in one guest
	n=232 pref=101
	[ "$rdma" = siw ] && n=233 pref=103
	addr_a=10.$n.0.1 addr_b=10.$n.0.2
	addr6_a=fd00:da7:$n::1 addr6_b=fd00:da7:$n::2
	if_a=dna$rdma if_b=dnb$rdma
	dev_a=${rdma}_a dev_b=${rdma}_b
fi

# shellcheck disable=SC2317 # called by the trap
cleanup() {
	if [ -n "$rdma" ]; then
		pkill -9 -f "net_fault (server|client) " 2>/dev/null
		echo "check-net: removing $dev_a and $dev_b"
		timeout 20 rdma link delete "$dev_a"
		timeout 20 rdma link delete "$dev_b"
		for _f in -4 -6; do
			ip "$_f" rule del pref "$pref" 2>/dev/null
			ip "$_f" rule del pref "$((pref + 1))" 2>/dev/null
		done
		ip -6 rule del pref "$((pref + 200))" 2>/dev/null
		ip -6 rule del pref "$((pref + 201))" 2>/dev/null
		if [ -n "${local_moved:-}" ]; then
			ip rule add pref 0 lookup local && ip rule del pref 500
		fi
		if [ -n "${local6_moved:-}" ]; then
			ip -6 rule add pref 0 lookup local && ip -6 rule del pref 500
		fi
		ip link del "$if_a" 2>/dev/null
		[ -n "${retries2:-}" ] && sysctl -qw net.ipv4.tcp_retries2="$retries2"
	else
		ip netns pids "$ns_a" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns pids "$ns_b" 2>/dev/null | xargs -r kill -9 2>/dev/null
		ip netns del "$ns_a" 2>/dev/null
		ip netns del "$ns_b" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# routed_link: the pair in this namespace, one RDMA device on each end,
# and the traffic between the two addresses sent across the link
routed_link() {
	ip link add "$if_a" type veth peer name "$if_b" 2>"$tmp/err" ||
		skip "cannot make a veth pair: $(cat "$tmp/err")"
	ip addr add "$addr_a/24" dev "$if_a" && ip addr add "$addr_b/24" dev "$if_b" &&
	ip addr add "$addr6_a/64" dev "$if_a" nodad &&
	ip addr add "$addr6_b/64" dev "$if_b" nodad &&
	ip link set "$if_a" up && ip link set "$if_b" up || return 1
	for _d in all "$if_a" "$if_b"; do
		sysctl -qw "net.ipv4.conf.$_d.accept_local=1" "net.ipv4.conf.$_d.rp_filter=0" ||
			return 1
	done
	# a packet this host sends to one end leaves by the other end: these
	# rules (for what is sent from here: iif lo) come before the local
	# table, which moves from 0 to 500.  What arrives on a veth end is
	# still delivered by the local table.  (Keyed on the source instead,
	# rdma_cm, which resolves with no source, would see a local address;
	# with the local table first, siw's TCP would.)  A connection from an
	# end to its own address leaves by the other end too, so nothing
	# here connects an IA to itself.
	ip rule add pref "$pref" iif lo to "$addr_b" lookup "${n}1" &&
	ip rule add pref "$((pref + 1))" iif lo to "$addr_a" lookup "${n}2" &&
	ip -6 rule add pref "$pref" iif lo to "$addr6_b" lookup "${n}1" &&
	ip -6 rule add pref "$((pref + 1))" iif lo to "$addr6_a" lookup "${n}2" &&
	# and for a lookup bound to an end (rdma_cm's passive side checks the
	# way back with the end's ifindex; IPv6 takes the oif as a hint only,
	# and would find the other end's local route)
	ip -6 rule add pref "$((pref + 200))" oif "$if_a" to "$addr6_b" lookup "${n}1" &&
	ip -6 rule add pref "$((pref + 201))" oif "$if_b" to "$addr6_a" lookup "${n}2" || return 1
	if ip rule show pref 0 | grep -q 'lookup local'; then
		ip rule add pref 500 lookup local && ip rule del pref 0 || return 1
		local_moved=1
	fi
	if ip -6 rule show pref 0 | grep -q 'lookup local'; then
		ip -6 rule add pref 500 lookup local && ip -6 rule del pref 0 || return 1
		local6_moved=1
	fi
	routed_paths || return 1
	# and not through lo
	for _r in "$addr_b/$if_a" "$addr_a/$if_b" "$addr6_b/$if_a" "$addr6_a/$if_b"; do
		ip route get "${_r%%/*}" | grep -q "dev ${_r##*/} " || {
			echo "check-net: the route to ${_r%%/*} does not leave by ${_r##*/}:"
			ip route get "${_r%%/*}"
			return 1
		}
	done
	rdma link add "$dev_a" type "$rdma" netdev "$if_a" &&
	rdma link add "$dev_b" type "$rdma" netdev "$if_b"
}
# routed_paths: the rules' routes and fixed neighbours (no ARP: its
# request would come from a local address); a link taken down loses both
routed_paths() {
	ip route replace "$addr_b" dev "$if_a" src "$addr_a" table "${n}1" &&
	ip route replace "$addr_a" dev "$if_b" src "$addr_b" table "${n}2" &&
	ip neigh replace "$addr_b" lladdr "$(cat "/sys/class/net/$if_b/address")" \
		dev "$if_a" nud permanent &&
	ip neigh replace "$addr_a" lladdr "$(cat "/sys/class/net/$if_a/address")" \
		dev "$if_b" nud permanent || return 1
	# IPv6 (the addresses part; setup checks these routes): right after
	# a link comes back up its addresses cannot be a route's source yet,
	# and the faults only use IPv4
	{
		ip -6 route replace "$addr6_b" dev "$if_a" src "$addr6_a" table "${n}1"
		ip -6 route replace "$addr6_a" dev "$if_b" src "$addr6_b" table "${n}2"
		ip -6 neigh replace "$addr6_b" lladdr "$(cat "/sys/class/net/$if_b/address")" \
			dev "$if_a" nud permanent
		ip -6 neigh replace "$addr6_a" lladdr "$(cat "/sys/class/net/$if_a/address")" \
			dev "$if_b" nud permanent
	} 2>/dev/null
	return 0
}

if [ -n "$rdma" ]; then
	command -v rdma >/dev/null 2>&1 || skip "rdma(8) is not installed (iproute2)"
	if ! routed_link; then
		echo "FAIL: cannot set up the routed link"
		exit 1
	fi
	echo "check-net: $dev_a on $if_a ($addr_a, $addr6_a) <-> $dev_b on $if_b ($addr_b, $addr6_b) over veth, routed"
else
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
fi

# The providers' lines again, one per end: name-a / name-b, bound to that
# end's address (the loopback address replaced, or, for verbs, the first
# word of the parameters: its netdev).
if [ -n "$rdma" ]; then
	ias=${CHECK_NET_IAS:-verbs-$rdma}
else
	ias=${CHECK_NET_IAS:-ofi-tcp tcp}
fi
conf=$tmp/dat.conf
: >"$conf"
for ia in $ias; do
	line=$(grep "^$ia u1\.2 " "$conf_in" | head -1)
	[ -n "$line" ] || { echo "check-net: no $ia line in $conf_in"; continue; }
	for end in a b; do
		eval "addr=\$addr_$end"
		# shellcheck disable=SC2154 # addr is set by the eval
		case $line in
		*127.0.0.1*) printf '%s\n' "$line" |
			sed -e "s/^$ia /$ia-$end /" -e "s/127\.0\.0\.1/$addr/" ;;
		*) printf '%s\n' "$line" |
			sed -e "s/^$ia /$ia-$end /" -e "s/\"[^\" ]* \([0-9]*\)\"/\"$addr \1\"/" ;;
		esac >>"$conf"
	done
done
# and over IPv6: tcp and ofi-tcp, or verbs in the routed mode
for ia in tcp ofi-tcp; do
	line=$(grep "^$ia u1\.2 " "$conf_in" | head -1)
	if [ -z "$rdma" ] && [ -n "$line" ]; then
		printf '%s\n' "$line" | sed -e "s/^$ia /${ia}6-a /" -e "s/127\.0\.0\.1/$addr6_a/" >>"$conf"
		printf '%s\n' "$line" | sed -e "s/^$ia /${ia}6-b /" -e "s/127\.0\.0\.1/$addr6_b/" >>"$conf"
	fi
done
if [ -n "$rdma" ]; then
	for ia in $ias; do
		line=$(grep "^$ia u1\.2 " "$conf_in" | head -1)
		[ -n "$line" ] || continue
		for end in a b; do
			eval "addr=\$addr6_$end"
			printf '%s\n' "$line" | sed -e "s/^$ia /${ia}6-$end /" \
				-e "s/\"[^\" ]* \([0-9]*\)\"/\"$addr \1\"/" >>"$conf"
		done
	done
fi
cat "$conf"

# on_a / on_b CMD...: a command in the server's / the client's namespace
on_a() {
	if [ -n "$rdma" ]; then "$@"; else ip netns exec "$ns_a" "$@"; fi
}
on_b() {
	if [ -n "$rdma" ]; then "$@"; else ip netns exec "$ns_b" "$@"; fi
}
# in_a / in_b CMD...: the same, with the dat.conf made here
in_a() { on_a env DAT_TEST_CONF="$conf" DAT_OVERRIDE="$conf" "$@"; }
in_b() { on_b env DAT_TEST_CONF="$conf" DAT_OVERRIDE="$conf" "$@"; }
# link_a up|down: the server's end of the link
link_a() { on_a ip link set "$if_a" "$1"; }
# DAT_TEST_SERVER_NETNS for the harness (none when routed)
server_ns=
[ -z "$rdma" ] && server_ns=$ns_a
# the bounds the fault runs ask for: tcp's and ofi's dead-peer timeouts,
# verbs' RC retries (4 tries of 268 ms); CHECK_NET_FAULT_ENV replaces them
fault_env=${CHECK_NET_FAULT_ENV-DAPL_TCP_PEER_TIMEOUT_MS=3000 DAPL_OFI_PEER_TIMEOUT_MS=3000 DAPL_VERBS_RETRY=3 DAPL_VERBS_ACK_TIMEOUT=16}

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
		# what went wrong, wherever it is in a long run, then the end
		printf '%s\n' "$out" | grep -E 'FAIL|instead of|failed|timed out|no message' |
			grep -v ', 0 failed' | head -20
		echo "..."
		printf '%s\n' "$out" | tail -30
	fi
}

only=${CHECK_NET_ONLY:-}
want() { [ -z "$only" ] || [ "$only" = "$1" ]; }

for ia in $ias; do
	want suites || break
	grep -q "^$ia-a " "$conf" || continue
	echo
	echo "== $ia across the link"
	for t in ${CHECK_NET_SUITES2-test_conn test_dto test_order}; do
		suite "$t, client in b, server in a" "$t" DAT_TEST_IA="$ia-b" \
			DAT_TEST_SERVER_IA="$ia-a" DAT_TEST_SERVER_NETNS="$server_ns" \
			DAT_TEST_ADDR="$addr_a" DAT_TEST_CLIENT_ADDR="$addr_b"
	done
	for t in ${CHECK_NET_SUITES1-test_objects test_mem test_compat}; do
		suite "$t in b on $addr_b" "$t" DAT_TEST_IA="$ia-b" DAT_TEST_ADDR="$addr_b"
	done

	# dapltest: the regression script across the link, then -T T with
	# every DTO kind and -T P both ways, against one more server
	across="DAT_TEST_SERVER_IA=$ia-a DAT_TEST_SERVER_NETNS=$server_ns DAT_TEST_ADDR=$addr_a"
	# shellcheck disable=SC2086 # $across is split on purpose
	script "dapltest regress.sh, server in a, client in b" \
		test/dapltest/check-regress.sh DAT_TEST_IA="$ia-b" $across
	# shellcheck disable=SC2086
	script "dapltest -T T, -T P (blocking, polling), server in a, client in b" \
		test/net/dapltest-across.sh DAT_TEST_IA="$ia-b" $across
	if [ "${CHECK_NET_LIMIT:-1}" = 1 ]; then
		script "dapltest -T L in b on $addr_b" test/dapltest/check-limit.sh \
			DAT_TEST_IA="$ia-b"
	fi
done

# addresses IA SERVER_ADDR CLIENT_ADDR: dat_conn_demo's server (IA-a) in a,
# its client (IA-b) in b; every address each side reports must be the
# right end's.
addresses() {
	_ia=$1 _sa=$2 _ca=$3
	rm -f "$tmp/demo.fifo"
	mkfifo "$tmp/demo.fifo" || return 1
	in_a timeout 60 \
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

# transport_across: the transport-conformance suites (test_transport_tcp,
# test_transport_ofi) in a namespace of their own, "t", with a veth pair
# routed as in the guest (see routed_link): the suite's one device sits at
# one end's address, and every packet of its connections to itself leaves
# by the other end and comes back in across the link (MTU 1500, a real
# neighbour), as the link's byte counters must show.
transport_across() {
	_ns=datnet-t-$tag _ta=dta$tag _tb=dtb$tag
	_a=10.234.0.1 _b=10.234.0.2
	_t() { ip netns exec "$_ns" "$@"; }
	if ! { ip netns add "$_ns" &&
	       ip -n "$_ns" link add "$_ta" type veth peer name "$_tb" &&
	       ip -n "$_ns" addr add "$_a/24" dev "$_ta" &&
	       ip -n "$_ns" addr add "$_b/24" dev "$_tb" &&
	       ip -n "$_ns" link set lo up &&
	       ip -n "$_ns" link set "$_ta" up && ip -n "$_ns" link set "$_tb" up &&
	       _t sysctl -qw net.ipv4.conf.all.accept_local=1 \
		   net.ipv4.conf.all.rp_filter=0 \
		   "net.ipv4.conf.$_ta.accept_local=1" "net.ipv4.conf.$_ta.rp_filter=0" \
		   "net.ipv4.conf.$_tb.accept_local=1" "net.ipv4.conf.$_tb.rp_filter=0" &&
	       ip -n "$_ns" rule add pref 101 iif lo to "$_b" lookup 2341 &&
	       ip -n "$_ns" rule add pref 102 iif lo to "$_a" lookup 2342 &&
	       ip -n "$_ns" rule add pref 500 lookup local &&
	       ip -n "$_ns" rule del pref 0 &&
	       ip -n "$_ns" route add "$_b" dev "$_ta" src "$_a" table 2341 &&
	       ip -n "$_ns" route add "$_a" dev "$_tb" src "$_b" table 2342 &&
	       ip -n "$_ns" neigh replace "$_b" dev "$_ta" nud permanent \
		   lladdr "$(_t cat "/sys/class/net/$_tb/address")" &&
	       ip -n "$_ns" neigh replace "$_a" dev "$_tb" nud permanent \
		   lladdr "$(_t cat "/sys/class/net/$_ta/address")" &&
	       ip -n "$_ns" route get "$_a" | grep -q "dev $_tb "; }; then
		bad "transport suites: cannot set up the routed link"
		ip -n "$_ns" route get "$_a" 2>&1
		ip netns del "$_ns" 2>/dev/null
		return
	fi
	echo "check-net: $_ns: $_a on $_ta, its own connections routed out by $_tb"
	for _s in test_transport_tcp test_transport_ofi; do
		[ -x "$builddir/test/unit/$_s" ] || continue
		_rx0=$(_t cat "/sys/class/net/$_ta/statistics/rx_bytes")
		_t env TRANSPORT_TEST_ADDR="$_a" TRANSPORT_TEST_NETDEV="$_ta" \
			timeout 900 "$builddir/test/unit/$_s" >"$tmp/$_s.out" 2>&1
		_rc=$?
		_rx=$(($(_t cat "/sys/class/net/$_ta/statistics/rx_bytes") - _rx0))
		if [ $_rc -eq 0 ] && [ "$_rx" -gt 1000000 ]; then
			pass "$_s at $_a across the link: $(checks_line "$tmp/$_s.out"); $_rx bytes in at $_ta"
		else
			bad "$_s at $_a across the link (exit $_rc, $_rx bytes in at $_ta)"
			grep -v '^libdat:' "$tmp/$_s.out" | tail -25
		fi
	done
	ip netns pids "$_ns" 2>/dev/null | xargs -r kill -9 2>/dev/null
	ip netns del "$_ns"
}

if [ -z "$rdma" ] && want transport; then
	echo
	echo "== the transport-conformance suites across a link"
	transport_across
fi

if want addresses; then
	echo
	echo "== addresses as users see them"
	for ia in $ias; do
		grep -q "^$ia-a " "$conf" && addresses "$ia" "$addr_a" "$addr_b"
	done
	ias6="tcp6 ofi-tcp6"
	[ -n "$rdma" ] && ias6=$(for _i in $ias; do echo "${_i}6"; done)
	for ia in $ias6; do
		grep -q "^$ia-a " "$conf" && addresses "$ia" "$addr6_a" "$addr6_b"
	done
fi


# start_server IA: net_fault's server (IA-a) in a, bounded; sets srv_pid
# and srv_qual (empty when it did not start).
start_server() {
	rm -f "$tmp/srv.fifo"
	mkfifo "$tmp/srv.fifo" || return 1
	# exec 5>&- 6<&-: the client's pipes stay the script's alone, or a
	# server started while the client runs would keep its input open.
	# (A redirection on a function call is not enough: dash keeps a copy
	# of the fd to restore afterwards, in the subshell that waits.)
	# shellcheck disable=SC2086 # $fault_env is split on purpose
	( exec 5>&- 6<&-
	  in_a $fault_env timeout 300 "$builddir/test/net/net_fault" server "$1-a" \
		>"$tmp/srv.fifo" 2>>"$tmp/srv.err" ) &
	srv_pid=$!
	exec 7<"$tmp/srv.fifo"
	srv_qual=
	if IFS= read -r _l <&7; then
		case $_l in "qual "*) srv_qual=${_l#qual } ;; esac
	fi
	( exec 5>&- 6<&-; cat <&7 >>"$tmp/srv.out" ) &
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

# drop_all on|off: every packet on both ends of the link silently
# dropped, both ways (netem loss 100%, or firewall DROP rules), or no
# longer
drop_all() {
	for _e in a b; do
		eval "_if=\$if_$_e"
		# shellcheck disable=SC2154 # _if is set by the eval
		case $drop:$1 in
		netem:on) "on_$_e" tc qdisc add dev "$_if" root netem loss 100% ;;
		netem:off) "on_$_e" tc qdisc del dev "$_if" root ;;
		iptables:on)
			"on_$_e" iptables -I INPUT -i "$_if" -j DROP &&
			"on_$_e" iptables -I OUTPUT -o "$_if" -j DROP ;;
		iptables:off)
			"on_$_e" iptables -D INPUT -i "$_if" -j DROP &&
			"on_$_e" iptables -D OUTPUT -o "$_if" -j DROP ;;
		esac || echo "check-net: cannot turn dropping $1 on $_if"
	done
}

# Kills everything in a (no FIN gets out while the link is down) and
# reaps the server; in one redirected group, since bash reports a job
# killed by a signal on its stderr when it reaps it.
stop_server() {
	{
		if [ -n "$rdma" ]; then
			# routed, the server's "host" is its processes, gone
			# (not only signalled) before the link comes back
			pkill -9 -f "net_fault server "
			_i=0
			while pgrep -f "net_fault server " >/dev/null && [ $_i -lt 100 ]; do
				sleep 0.1
				_i=$((_i + 1))
			done
		else
			ip netns pids "$ns_a" | xargs -r kill -9
		fi
		wait "$srv_pid"
	} 2>/dev/null
	srv_pid=
}

# fault IA KIND ADDR_A: KIND is "down" (the link goes down mid-stream and
# stays down until the client has reported), "idle" (the same with no
# traffic), "drop" (every packet dropped both ways, the link up) or
# "vanish" (link down, the server killed, link up).
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
	in_b $fault_env timeout 300 \
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
	# a vanishing host is cut off while its processes die, so that
	# nothing they send on the way out arrives (the kernel sends it once
	# the link is back: what is tested is a peer that died and a host
	# that came back; silence is "drop").  On rxe by dropping rather than
	# by taking the link down: a Soft-RoCE device whose CM sends a
	# message (the dying server's DREQ) while its netdev is down puts its
	# GSI QP in error for good (Linux 6.1 rxe_req.c, the "err" path sets
	# req.state = QP_STATE_ERROR), and never answers a connection request
	# again.  On siw by taking the link down: siw then ends its
	# connections itself, while a QP destroyed with its socket still
	# alive (dropped) can crash 6.1's siw when the socket later has room
	# (siw_qp_llp_write_space calls siw_sq_start with cep->qp NULL).
	_cut=down
	[ "$_kind" = drop ] && _cut=drop
	[ "$_kind" = vanish ] && [ "$rdma" = rxe ] && [ -n "$drop" ] && _cut=drop
	if [ $_cut = drop ]; then
		drop_all on
	else
		link_a down
	fi
	if [ "$_kind" = vanish ]; then
		stop_server
		if [ $_cut = drop ]; then
			drop_all off
		else
			link_a up
			[ -n "$rdma" ] && routed_paths
		fi
	fi
	read_until "event *"
	_t1=$(ms_now)
	_event=$got
	read_until "dtos posted *"
	_dtos=$got
	case $_kind in
	drop) drop_all off ;;
	vanish) ;;
	*) link_a up ;;
	esac
	if [ "$_kind" = vanish ]; then
		: >"$tmp/srv.err"
		start_server "$_ia"
	fi
	if [ -n "$rdma" ]; then
		routed_paths
	else
		# the neighbour entry went FAILED while the link was down, and
		# a connect would be refused at once until it expires: forget it
		ip -n "$ns_b" neigh flush dev "$if_b" 2>/dev/null
	fi
	# in a subshell: a client that already ended (its error is printed
	# below) would otherwise kill this script with SIGPIPE, unexplained
	(echo "connect $srv_qual" >&5) 2>/dev/null
	read_until reconnected
	_again=$got
	exec 5>&-
	read_until "never" >/dev/null
	exec 6<&-
	wait "$_cpid"
	_rc=$?
	stop_server
	# a link that stays down is a broken connection where the provider
	# can tell (tcp, verbs on RoCE); libfabric and iWARP's CM report
	# every end as a disconnect
	case $_ia in tcp|verbs-rxe) _broken=1 ;; *) _broken= ;; esac
	if [ -n "$_broken" ] && [ "$_kind" != vanish ] && [ -n "$_event" ]; then
		case $_event in
		"event BROKEN "*) ;;
		*) echo "$_ia reported '$_event' for a link that went down, not BROKEN"; _rc=1 ;;
		esac
	fi
	if [ $_rc -eq 0 ] && [ -n "$_event" ] && [ -n "$_dtos" ] && [ -n "$_again" ]; then
		pass "$_ia, link $_kind: ${_event#event } ($((_t1 - _t0)) ms after the fault); ${_dtos#dtos }; a new connection works"
	else
		bad "$_ia, link $_kind (client exit $_rc)"
		cat "$tmp/cli.err" "$tmp/srv.err"
		if [ -n "$rdma" ]; then
			# what the RDMA CM and the devices were left holding
			rdma res show cm_id 2>&1 | head -20
			dmesg 2>/dev/null | tail -10
		fi
	fi
}

if want faults; then
	echo
	echo "== link faults"
	# ofi-tcp's and siw's sockets are libfabric's and the kernel's: the
	# kernel's retransmission limit is their bound.  The namespace (or,
	# routed, the guest) is ours, so is its setting.
	[ -n "$rdma" ] && retries2=$(sysctl -n net.ipv4.tcp_retries2)
	on_b sysctl -qw net.ipv4.tcp_retries2=5 ||
		echo "check-net: cannot set net.ipv4.tcp_retries2"
	# silently dropped traffic: netem where the kernel has it (the
	# guest's), else a firewall rule (iptables, in the namespaces)
	drop=
	if on_a tc qdisc add dev "$if_a" root netem loss 0% 2>/dev/null; then
		on_a tc qdisc del dev "$if_a" root
		drop=netem
	elif [ -z "$rdma" ] && command -v iptables >/dev/null 2>&1 &&
	     on_a iptables -A INPUT -i "$if_a" -j ACCEPT 2>/dev/null; then
		on_a iptables -D INPUT -i "$if_a" -j ACCEPT
		drop=iptables
	fi
	for ia in $ias; do
		grep -q "^$ia-a " "$conf" || continue
		# an idle connection to a vanished peer: the socket providers
		# look (keepalive), RC queue pairs send nothing to time out
		kinds="down ${drop:+drop} vanish"
		case $ia in tcp|ofi-tcp) kinds="down idle ${drop:+drop} vanish" ;; esac
		for kind in $kinds; do
			case " ${CHECK_NET_FAULTS:-$kind} " in
			*" $kind "*) fault "$ia" "$kind" "$addr_a" ;;
			esac
		done
	done
	[ -n "$drop" ] || echo "check-net: no \"drop\" fault: no netem (sch_netem) in this kernel, no iptables here"
fi

echo
[ $fail -eq 0 ] && echo "check-net: all passed" || echo "check-net: FAILED"
exit $fail
