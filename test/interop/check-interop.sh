#!/bin/sh
# check-interop.sh: test/interop/dat_interop with the server on one IA and
# the client on another; both must exit 0.  Five runs: the plain exchange
# (private data, read limits, Send, RDMA Write and Read each way), then a
# refused RDMA Write and a refused RDMA Read raised by each side.
#
# Environment: INTEROP_SERVER_IA and INTEROP_CLIENT_IA (default: tcp for
# both), INTEROP_ADDR (the server's address, default 127.0.0.1),
# INTEROP_SERVER_FLAGS / INTEROP_CLIENT_FLAGS (dat_interop's -L and -F for
# that side when it raises the refused request: what its provider can
# report), DAT_TEST_CONF (the dat.conf to use).  Each program runs under timeout;
# the client starts once the server printed that it listens (read through
# a FIFO), never after a fixed sleep.  Output: every line both printed.
set -u

if [ -z "${DAT_TEST_CONF:-}" ]; then
	echo "SKIP: DAT_TEST_CONF is not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
prog=${builddir:-.}/test/interop/dat_interop
if [ ! -x "$prog" ]; then
	echo "FAIL: $prog is not built"
	exit 1
fi
sia=${INTEROP_SERVER_IA:-tcp}
cia=${INTEROP_CLIENT_IA:-tcp}
addr=${INTEROP_ADDR:-127.0.0.1}
sflags=${INTEROP_SERVER_FLAGS:-} cflags=${INTEROP_CLIENT_FLAGS:-}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-interop.XXXXXX") || exit 1
server_pid=
# shellcheck disable=SC2317  # called by the trap
cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	exec 3<&-
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' HUP INT TERM

random_port() {
	r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	echo $((10000 + r % 22000))
}

fail=0
# run NAME SERVER_OPTIONS CLIENT_OPTIONS
run() {
	name=$1 sopts=$2 copts=$3
	tries=0
	while :; do
		tries=$((tries + 1))
		if [ $tries -gt 20 ]; then
			echo "FAIL: $name: no free port in 20 tries"
			fail=1
			return
		fi
		port=$(random_port)
		rm -f "$tmp/fifo"
		mkfifo "$tmp/fifo" || exit 1
		# shellcheck disable=SC2086  # options are words on purpose
		timeout 60 "$prog" -P "$sia" -s -n "$port" $sopts \
			>"$tmp/fifo" 2>"$tmp/server.err" &
		server_pid=$!
		exec 3<"$tmp/fifo"
		: >"$tmp/server.out"
		up=0
		while IFS= read -r line <&3; do
			echo "$line" >>"$tmp/server.out"
			case $line in *"listening on port $port"*) up=1; break ;; esac
		done
		[ $up = 1 ] && break
		exec 3<&-
		wait "$server_pid"
		server_pid=
		# dat_interop says DAT_CONN_QUAL_IN_USE (the port was taken
		# between the pick and the listen, by a test running alongside)
		grep -q -i -e "in use" -e "in_use" -e busy "$tmp/server.err" && continue
		echo "FAIL: $name: the server did not start:"
		cat "$tmp/server.out" "$tmp/server.err"
		fail=1
		return
	done
	# shellcheck disable=SC2086
	timeout 60 "$prog" -P "$cia" -h "$addr" -n "$port" $copts \
		>"$tmp/client.out" 2>&1
	cs=$?
	cat <&3 >>"$tmp/server.out"
	exec 3<&-
	wait "$server_pid"
	ss=$?
	server_pid=
	if [ $cs -eq 0 ] && [ $ss -eq 0 ]; then
		echo "PASS: $name (server $sia, client $cia)"
	else
		echo "FAIL: $name (server $sia exit $ss, client $cia exit $cs)"
		fail=1
	fi
	sed 's/^/  /' "$tmp/server.out" "$tmp/server.err" "$tmp/client.out"
}

run "exchange" "" ""
run "client's refused RDMA Write" "-x write" "-x write -o $cflags"
run "client's refused RDMA Read" "-x read" "-x read -o $cflags"
run "server's refused RDMA Write" "-x write -o $sflags" "-x write"
run "server's refused RDMA Read" "-x read -o $sflags" "-x read"
exit $fail
