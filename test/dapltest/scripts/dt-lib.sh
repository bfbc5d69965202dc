# dt-lib.sh: shell helpers shared by the dapltest scripts and the checks
# (sourced, POSIX sh).
#
#   DAPLTEST       the dapltest program (default: dapltest from PATH)
#   DAPLTEST_PORT  the server port (default 45278)
#   DT_SERVER_PREFIX  a command the server runs under, e.g. "ip netns exec
#                  NS" (test/net/check-net.sh: the server on another host)
#
#   dt_run ARGS...            runs "$DAPLTEST ARGS", counts it in
#                             dt_runs/dt_passed, shows the command line
#   dt_summary NAME           "NAME: <runs> runs, <passed> passed"; status
#                             0 when all passed
#   dt_random_port            a port in 20000..31999 (below the Linux
#                             ephemeral range, where per-test qualifiers go)
#   dt_start_server IA DIR [SECS]
#                             starts "dapltest -T S" on a free port, bounded
#                             by timeout SECS (default 600); returns once it
#                             printed its ready line.  Sets dt_server_pid,
#                             dt_port; its output goes to DIR/server.log,
#                             its errors to DIR/server.err.  Tries another
#                             port when the one picked is in use.
#   dt_wait_server            waits for the server to exit; its status is
#                             in dt_server_rc
#   dt_kill_server            stops it (for traps)

# shellcheck disable=SC2034 # dt_port, dt_server_rc: for the callers
DAPLTEST=${DAPLTEST:-dapltest}
DAPLTEST_PORT=${DAPLTEST_PORT:-45278}
dt_runs=0
dt_passed=0
dt_server_pid=
dt_cat_pid=
dt_server_rc=

dt_run() {
	echo "+ dapltest $*"
	dt_runs=$((dt_runs + 1))
	if "$DAPLTEST" "$@"; then
		dt_passed=$((dt_passed + 1))
		return 0
	fi
	echo "FAILED: dapltest $*"
	return 1
}

dt_summary() {
	echo "$1: $dt_runs runs, $dt_passed passed"
	[ "$dt_runs" -eq "$dt_passed" ]
}

dt_random_port() {
	n=$(od -An -N2 -tu2 /dev/urandom | tr -d ' ')
	echo $((20000 + n % 12000))
}

dt_start_server() {
	_ia=$1 _dir=$2 _secs=${3:-600}
	_tries=0
	while [ $_tries -lt 10 ]; do
		_tries=$((_tries + 1))
		_port=$(dt_random_port)
		rm -f "$_dir/server.fifo"
		mkfifo "$_dir/server.fifo" || return 1
		# the output goes through a FIFO: reading the ready line waits
		# exactly as long as the server needs, and no longer
		# shellcheck disable=SC2086 # the prefix is split on purpose
		timeout "$_secs" ${DT_SERVER_PREFIX:-} "$DAPLTEST" -T S -D "$_ia" -n "$_port" \
			>"$_dir/server.fifo" 2>>"$_dir/server.err" &
		dt_server_pid=$!
		exec 3<"$_dir/server.fifo"
		_ready=
		while IFS= read -r _line <&3; do
			echo "$_line" >>"$_dir/server.log"
			case $_line in
			"Dapltest: Service Point Ready"*) _ready=1; break ;;
			esac
		done
		if [ -n "$_ready" ]; then
			# keep draining, or the server would block on a full pipe
			cat <&3 >>"$_dir/server.log" &
			dt_cat_pid=$!
			exec 3<&-
			rm -f "$_dir/server.fifo"
			dt_port=$_port
			return 0
		fi
		exec 3<&-
		rm -f "$_dir/server.fifo"
		wait "$dt_server_pid"
		_rc=$?
		dt_server_pid=
		# 3: the port is in use; anything else is a real failure
		[ $_rc -eq 3 ] || return 1
	done
	return 1
}

dt_wait_server() {
	dt_server_rc=
	if [ -n "$dt_server_pid" ]; then
		wait "$dt_server_pid"
		dt_server_rc=$?
		dt_server_pid=
	fi
	if [ -n "$dt_cat_pid" ]; then
		wait "$dt_cat_pid"
		dt_cat_pid=
	fi
}

dt_kill_server() {
	if [ -n "$dt_server_pid" ]; then
		kill "$dt_server_pid" 2>/dev/null
		wait "$dt_server_pid" 2>/dev/null
		dt_server_pid=
	fi
	if [ -n "$dt_cat_pid" ]; then
		wait "$dt_cat_pid" 2>/dev/null
		dt_cat_pid=
	fi
}
