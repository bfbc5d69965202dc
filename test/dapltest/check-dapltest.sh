#!/bin/sh
# make check: dapltest against a dapltest server on a free port, over the
# IA under test (ofi-tcp on 127.0.0.1):
#  - the acceptance command: 4 threads x 4 EPs, SR/RW/RR, -V, 1000 iterations
#  - -T P blocking (RDMA Write) and polling (RDMA Read)
#  - two transaction clients at once against the one server
#  - -r (RSPs), -f pairs with -P, a script file (-f file)
#  - a wrong server address and a port where nobody listens: a message and
#    a non-zero status, in bounded time
#  - bad usage: status 2
#  - -T Q: the server finishes, exits 0
#
# Needs DAT_TEST_CONF (the build tree's dat.conf); exits 77 (skip) without.
# Run from the top build directory (make check does).

if [ -z "$DAT_TEST_CONF" ] || [ -z "$DAT_TEST_IA" ]; then
	echo "SKIP: DAT_TEST_CONF / DAT_TEST_IA are not set"
	exit 77
fi
DAT_OVERRIDE=$DAT_TEST_CONF
export DAT_OVERRIDE
ia=$DAT_TEST_IA
here=$(cd "$(dirname "$0")" && pwd)
DAPLTEST=${builddir:-.}/test/dapltest/dapltest
export DAPLTEST
if [ ! -x "$DAPLTEST" ]; then
	echo "FAIL: $DAPLTEST is not built"
	exit 1
fi
. "$here/scripts/dt-lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/dt-check.XXXXXX") || exit 1
pids=
# shellcheck disable=SC2317 # called by the trap
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	dt_kill_server
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

fail() {
	echo "FAIL: $*"
	for f in server.log server.err; do
		if [ -s "$tmp/$f" ]; then
			echo "--- $f"
			cat "$tmp/$f"
		fi
	done
	exit 1
}

# dt ID ARGS...: runs dapltest (bounded), output in $tmp/ID.out/.err,
# status in $rc.
dt() {
	_id=$1
	shift
	echo "+ dapltest $*"
	timeout 120 "$DAPLTEST" "$@" </dev/null >"$tmp/$_id.out" 2>"$tmp/$_id.err"
	rc=$?
}

# dts ID TEST ARGS...: dt with the server's address, IA and port.
dts() {
	_id=$1 _t=$2
	shift 2
	dt "$_id" -T "$_t" -s 127.0.0.1 -D "$ia" -n "$dt_port" "$@"
}

show() {
	cat "$tmp/$1.out"
	if [ -s "$tmp/$1.err" ]; then
		echo "--- stderr"
		cat "$tmp/$1.err"
	fi
}

# expect_pass ID: status 0, "Result: PASS", nothing on stderr.
expect_pass() {
	show "$1"
	[ "$rc" -eq 0 ] || fail "$1: exit status $rc"
	grep -qx 'Result: PASS' "$tmp/$1.out" || fail "$1: no 'Result: PASS'"
	[ ! -s "$tmp/$1.err" ] || fail "$1: error messages"
}

dt_start_server "$ia" "$tmp" 300 || fail "the server did not start"
echo "server ready on port $dt_port"

# 1. the acceptance command of the issue
dts accept T -i 1000 -t 4 -w 4 client SR 4096 server RW 4096 \
	server RR 4096 client SR 4096 server SR 4096 -V
expect_pass accept
grep -q '^Total WQE  *: *[0-9.]* WQE/Sec' "$tmp/accept.out" || fail "accept: no WQE/Sec line"
for t in 'Send' 'Recv' 'RDMA Read' 'RDMA Write'; do
	grep -q "^Total $t  *: *[0-9.]* MB - *[0-9.]* MB/Sec" "$tmp/accept.out" ||
		fail "accept: no MB/Sec line for $t"
done
grep -q '^----- Stats ---- : 4 threads, 16 EPs' "$tmp/accept.out" ||
	fail "accept: not 4 threads x 4 EPs"

# 2. the performance test, blocking and polling
dts perfb P -i 512 -p 8 -m b RW 4096 2
expect_pass perfb
grep -q '^Mode  *: Blocking$' "$tmp/perfb.out" || fail "perfb: mode"
grep -q '^raw: RW,b,512,4096,2,8,' "$tmp/perfb.out" || fail "perfb: raw line"
dts perfp P -i 512 -p 4 -m p RR 4096 1
expect_pass perfp
grep -q '^Mode  *: Polling$' "$tmp/perfp.out" || fail "perfp: mode"
grep -q '^raw: RR,p,512,4096,1,' "$tmp/perfp.out" || fail "perfp: raw line"

# 3. two clients at once against the one server
for n in 1 2; do
	timeout 120 "$DAPLTEST" -T T -s 127.0.0.1 -D "$ia" -n "$dt_port" \
		-i 300 -t 2 -w 2 -V client SR 2048 server RW 8192 \
		client RR 4096 server SR 512 \
		</dev/null >"$tmp/conc$n.out" 2>"$tmp/conc$n.err" &
	pids="$pids $!"
done
for p in $pids; do
	wait "$p"
	rc=$?
	[ "$rc" -eq 0 ] || { show conc1; show conc2; fail "a concurrent client exited with $rc"; }
done
pids=
for n in 1 2; do
	rc=0
	expect_pass "conc$n"
done

# 4. RSPs instead of PSPs; -f pairs with polling
dts rsp T -r -i 200 -t 2 -w 2 -V client SR 1024 server RR 4096 server SR 1024
expect_pass rsp
dts reap T -i 200 -P -V client SR 1024 -f server SR 1536 2 -f \
	client RW 8192 server SR 256
expect_pass reap

# 5. the arguments from a script file
cat >"$tmp/args" <<EOF
# a transaction test from a script file
-T T -s 127.0.0.1 -D $ia -n $dt_port   # the server
-i 100 client SR 512 server SR 512 -V
EOF
dt script -f "$tmp/args"
expect_pass script

# 6. a server that is not there: a message, a non-zero status, soon
dt noaddr -T T -s 10.255.255.1 -D "$ia" -n "$dt_port" client SR 256 server SR 256
show noaddr
if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ]; then
	fail "noaddr: exit status $rc"
fi
grep -q 'cannot connect to server 10.255.255.1' "$tmp/noaddr.err" ||
	fail "noaddr: no message"
# port 1 (tcpmux): nothing listens there on a test machine
other=1
dt noport -T T -s 127.0.0.1 -D "$ia" -n "$other" client SR 256 server SR 256
show noport
[ "$rc" -eq 1 ] || fail "noport: exit status $rc"
grep -q "cannot connect to server 127.0.0.1 port $other" "$tmp/noport.err" ||
	fail "noport: no message"

# 7. bad usage: status 2, never a crash
while read -r args; do
	# shellcheck disable=SC2086 # the arguments are split on purpose
	dt usage $args
	[ "$rc" -eq 2 ] || { show usage; fail "'$args': exit status $rc, not 2"; }
	grep -q '^dapltest: ' "$tmp/usage.err" || fail "'$args': no message"
done <<EOF
-T T -s 127.0.0.1 client SR 256
-T T -s 127.0.0.1 client SR 256 -f server SR 256
-T T -s 127.0.0.1 client RW 256 -f server SR 256 client SR 256
-T T client SR 256 server SR 256
-T T -s 127.0.0.1 -i 0 client SR 256 server SR 256
-T T -s 127.0.0.1 -t x client SR 256 server SR 256
-T T -s 127.0.0.1 client XX 256 server SR 256
-T P -s 127.0.0.1 SR 4096
-T P -s 127.0.0.1 RW 4096 1 extra
-T Q
-T Z
-f $tmp/args -d
-f $tmp/no-such-file
-D $ia -T S
-T S -n 99999
EOF

# 8. quit: the server finishes and exits 0
dts quit Q
expect_pass quit
dt_wait_server
echo "--- server"
cat "$tmp/server.log"
[ "$dt_server_rc" = 0 ] || fail "the server exited with status $dt_server_rc"
grep -q '^Dapltest: Server Exiting: 8 tests, 0 failed$' "$tmp/server.log" ||
	fail "the server did not report 8 tests, 0 failed"
echo "PASS: dapltest client and server"
exit 0
