# perftest-pair.sh: sourced by verbs-vs-perftest.sh and verbs-targets.sh.
#
# perftest_pair PROG ARG...: one perftest run on device $dev, a random
# port: PROG's server in the background, its client against $ip, their
# output in $tmp/srv and $tmp/cli.  $pt_srv and $pt_cli (words or nothing,
# e.g. a taskset) go in front of each, $cm (nothing, or -R) after -F.
# perftest's server must listen before its client connects: the client is
# retried (a benchmark script; tests never sleep to synchronise).  Returns
# 1, with the client's output printed, when no attempt succeeded.
perftest_pair() {
	prog=$1
	shift
	port=$(( 18000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 2000 ))
	# shellcheck disable=SC2086 # $pt_srv, $cm: words or nothing
	${pt_srv:-} timeout 120 "$prog" -d "$dev" -F ${cm:-} -p "$port" "$@" > "$tmp/srv" 2>&1 &
	spid=$!
	tries=0
	while [ $tries -lt 40 ]; do
		tries=$((tries + 1))
		# shellcheck disable=SC2086
		if ${pt_cli:-} timeout 120 "$prog" -d "$dev" -F ${cm:-} -p "$port" "$@" "$ip" > "$tmp/cli" 2>&1; then
			wait $spid
			return 0
		fi
		sleep 0.25
	done
	kill $spid 2>/dev/null
	wait $spid
	cat "$tmp/cli"
	return 1
}
