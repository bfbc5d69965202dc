# shellcheck shell=sh
# Sourced by the scripts that run dat_conn_demo's server and client in two
# processes (check-conn-demo.sh, check-ipv6-addrs.sh).  Run from the top
# build directory, DAT_OVERRIDE set.  Gives:
#   $tmp                  a directory removed on exit (the server killed)
#   fail MESSAGE          prints it and what both sides printed, exits 1
#   demo_server IA        starts the server, sets $qual (or fails)
#   demo_client IA ARG... the client (dat_conn_demo client IA $qual ARG...)
#                         into client.out/.err; sets client_rc
#   demo_server_wait      reaps the server: server.out, server_rc
demo=./test/tools/dat_conn_demo
if [ ! -x "$demo" ]; then
	echo "FAIL: $demo is not built"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/conn-demo.XXXXXX") || exit 1
server_pid=
# shellcheck disable=SC2317 # called by the trap
demo_cleanup() {
	if [ -n "$server_pid" ]; then
		kill "$server_pid" 2>/dev/null
		wait "$server_pid" 2>/dev/null
	fi
	rm -rf "$tmp"
}
trap demo_cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	for f in server.out server.err client.out client.err; do
		if [ -s "$tmp/$f" ]; then
			echo "--- $f"
			cat "$tmp/$f"
		fi
	done
	exit 1
}

# The server's stdout goes through a FIFO, so reading its first line
# ("qual <n>") waits exactly as long as the server needs; timeout bounds it.
demo_server() {
	rm -f "$tmp/fifo"
	mkfifo "$tmp/fifo" || exit 1
	timeout 30 "$demo" server "$1" >"$tmp/fifo" 2>"$tmp/server.err" &
	server_pid=$!
	exec 3<"$tmp/fifo"
	read -r word qual <&3
	if [ "$word" != qual ] || [ -z "$qual" ]; then
		exec 3<&-
		wait "$server_pid"
		server_pid=
		fail "the server on $1 did not print its qual (got '$word $qual')"
	fi
	# the rest of the server's output, until it exits
	cat <&3 >"$tmp/server.out" &
	cat_pid=$!
	exec 3<&-
}

demo_client() {
	_ia=$1
	shift
	timeout 30 "$demo" client "$_ia" "$qual" "$@" >"$tmp/client.out" \
		2>"$tmp/client.err"
	# shellcheck disable=SC2034 # for the sourcing script
	client_rc=$?
}

demo_server_wait() {
	wait "$server_pid"
	# shellcheck disable=SC2034 # for the sourcing script
	server_rc=$?
	server_pid=
	wait "$cat_pid"
}
