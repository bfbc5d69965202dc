#!/bin/sh
# dtest end to end over the build tree's provider: for each mode (default,
# -p, -c, -b 65536 -B 4) a one-shot server on a free port and a client
# against it; both must exit 0, print the report lines and PASSED.  Then a
# client against a port nobody listens on must fail with a message, a -b
# mismatch must fail on both sides, and bad options must exit 2.
#
# Every server runs under timeout and is reaped by the trap; the client
# starts only once the server has printed its "waiting" line (read through
# a FIFO), never after a fixed sleep.
set -u

if [ -z "${DAT_TEST_CONF:-}" ] || [ -z "${DAT_TEST_IA:-}" ]; then
	echo "SKIP: DAT_TEST_CONF and DAT_TEST_IA are not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
dtest=${builddir:-.}/test/dtest/dtest
if [ ! -x "$dtest" ]; then
	echo "FAIL: $dtest is not built"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-dtest.XXXXXX") || exit 1
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

fail=0
bad() {
	echo "FAIL: $*"
	fail=1
}

# A port from 10000 to 31999, below Linux's ephemeral range.
random_port() {
	r=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	echo $((10000 + r % 22000))
}

# start_server OPTIONS: a one-shot server on a free port, started in the
# background with its stdout on fd 3; sets port and server_pid.  A port in
# use is retried with another one.  Returns 1 if no server came up.
start_server() {
	tries=0
	while [ $tries -lt 20 ]; do
		tries=$((tries + 1))
		port=$(random_port)
		rm -f "$tmp/fifo"
		mkfifo "$tmp/fifo" || return 1
		# shellcheck disable=SC2086  # options are words on purpose
		timeout 30 "$dtest" -P "$DAT_TEST_IA" -s -n "$port" $1 \
			>"$tmp/fifo" 2>"$tmp/server.err" &
		server_pid=$!
		exec 3<"$tmp/fifo"
		: >"$tmp/server.out"
		while IFS= read -r line <&3; do
			echo "$line" >>"$tmp/server.out"
			case $line in
			*"waiting for a connection on port $port"*) return 0 ;;
			esac
		done
		# The server ended before listening.
		exec 3<&-
		wait "$server_pid"
		server_pid=
		if grep -q "in use" "$tmp/server.err"; then
			continue
		fi
		echo "server failed to start:"
		cat "$tmp/server.out" "$tmp/server.err"
		return 1
	done
	echo "no free port found in 20 tries"
	return 1
}

# finish_server: collect the rest of the server's output and its status.
finish_server() {
	cat <&3 >>"$tmp/server.out"
	exec 3<&-
	wait "$server_pid"
	server_status=$?
	server_pid=
}

# The report lines every successful run prints.
report_lines='Message RTT: Total=
RDMA write:  Total=
RDMA read:   Total=
open:
close:
PZ create:
PZ free:
LMR create:
LMR free:
EVD create:
EVD free:
EP create:
EP free:
TOTAL:
PASSED'

check_report() {    # file what with_cno
	echo "$report_lines" | while IFS= read -r want; do
		grep -qF "$want" "$1" || echo "missing \"$want\""
	done >"$tmp/missing"
	if [ "$3" = yes ] && ! grep -q "CNO create:" "$1"; then
		echo 'missing "CNO create:"' >>"$tmp/missing"
	fi
	if [ -s "$tmp/missing" ]; then
		bad "$2: report incomplete: $(tr '\n' ' ' <"$tmp/missing")"
		cat "$1"
	fi
}

# pair NAME OPTIONS: server and client with the same options.
pair() {
	if ! start_server "$2"; then
		bad "$1: no server"
		return
	fi
	# shellcheck disable=SC2086
	timeout 30 "$dtest" -P "$DAT_TEST_IA" -h 127.0.0.1 -n "$port" $2 \
		>"$tmp/client.out" 2>"$tmp/client.err"
	client_status=$?
	finish_server
	cno=no
	case " $2 " in *" -c "*) cno=yes ;; esac
	if [ $client_status -ne 0 ] || [ $server_status -ne 0 ]; then
		bad "$1: client exit $client_status, server exit $server_status"
		cat "$tmp/client.out" "$tmp/client.err" "$tmp/server.out" "$tmp/server.err"
		return
	fi
	check_report "$tmp/client.out" "$1 (client)" $cno
	check_report "$tmp/server.out" "$1 (server)" $cno
	if [ -s "$tmp/client.err" ] || [ -s "$tmp/server.err" ]; then
		bad "$1: unexpected messages on stderr"
		cat "$tmp/client.err" "$tmp/server.err"
	fi
	echo "ok: $1: $(grep 'RDMA write:' "$tmp/client.out")"
}

pair "default" ""
pair "polling (-p)" "-p"
pair "CNO (-c)" "-c"
pair "-b 65536 -B 4" "-b 65536 -B 4"

# Both sides must notice a -b mismatch, say so and exit 1.
if start_server "-b 128"; then
	timeout 30 "$dtest" -P "$DAT_TEST_IA" -h 127.0.0.1 -n "$port" -b 64 \
		>"$tmp/client.out" 2>"$tmp/client.err"
	client_status=$?
	finish_server
	if [ $client_status -ne 1 ] || [ $server_status -ne 1 ] ||
	   ! grep -q "same -b and -B" "$tmp/client.err" ||
	   ! grep -q "same -b and -B" "$tmp/server.err"; then
		bad "-b mismatch: client exit $client_status, server exit $server_status"
		cat "$tmp/client.err" "$tmp/server.err"
	else
		echo "ok: -b mismatch refused on both sides"
	fi
else
	bad "-b mismatch: no server"
fi

# Nobody listens on the last server's port any more: the client must give up
# within its connect timeout (not be killed by ours) with a message.
timeout 20 "$dtest" -P "$DAT_TEST_IA" -h 127.0.0.1 -n "$port" \
	>"$tmp/client.out" 2>"$tmp/client.err"
status=$?
if [ $status -ne 1 ] || ! grep -q "could not connect" "$tmp/client.err"; then
	bad "no server: exit $status (want 1) and a message"
	cat "$tmp/client.out" "$tmp/client.err"
else
	echo "ok: no server: $(head -n 1 "$tmp/client.err")"
fi

# Bad usage: exit 2 with a message, before any DAT call.
usage_fail=0
while IFS= read -r args; do
	# shellcheck disable=SC2086
	timeout 10 "$dtest" $args >"$tmp/usage.out" 2>"$tmp/usage.err"
	status=$?
	if [ $status -ne 2 ] || [ ! -s "$tmp/usage.err" ]; then
		bad "dtest $args: exit $status (want 2) and a message"
		usage_fail=1
		cat "$tmp/usage.out" "$tmp/usage.err"
	fi
done <<'EOF'
-x
-b 0
-b abc
-b -1
-b 99999999999999999999999
-B 0
-B 513
-n 0
-n 65536
-d 1s
-s -h 127.0.0.1
-h 127.0.0.1 extra
-b 16777216 -B 4
-P
-h
EOF
[ $usage_fail -eq 0 ] && echo "ok: bad options exit 2 with a message"

[ $fail -eq 0 ] && echo "PASS: dtest"
exit $fail
