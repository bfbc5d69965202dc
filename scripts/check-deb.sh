#!/bin/sh
# shellcheck disable=SC2154 # dt_port, dt_server_rc: set by dt-lib.sh
# check-deb.sh [DEBDIR]: installs the packages scripts/deb.sh built
# (dependencies from the archive) and uses them from the installed files
# only (no build tree, no DAT_OVERRIDE), next to Debian's own DAT packages:
#   1. Debian's libdapl2 first (it owns /etc/dat.conf); then ours for DAT
#      1.2 (libdat-common, libdat1, libdat-dev, libdat-tools) beside it:
#      datinfo, a dapltest server and client over tcp, a consumer compiled
#      with pkg-config dat; /etc/dat.conf untouched.
#   2. ours for DAT 2.0 (libdat2-2, libdat2-dev): it takes libdapl2's place
#      (libdapl2 removed, its /etc/dat.conf left as it was); datinfo opens
#      the u2.0 entries; a consumer compiled with pkg-config dat2.
#   3. Debian's dapl2-utils from the archive, resolved against ours (it
#      needs libdapl2, which libdat2-2 provides): its dapltest (server,
#      -T T with -V, -T Q) and dtest over the installed "tcp u2.0" line.
#      When apt cannot fetch dapl2-utils this part is a loud SKIP.
#   4. everything purged (also when a step failed): nothing of ours left,
#      no diversion, /etc/dat.conf as Debian shipped it, and libdapl2
#      installed again (when it was there before) and intact.
# Root only: exits 77 (skip) otherwise.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
debs=${1:-$top/build-deb}
case $debs in /*) ;; *) debs=$(pwd)/$debs ;; esac
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: check-deb.sh installs packages: run it as root"
	exit 77
fi
pkgs1="libdat-common libdat1 libdat-dev libdat-tools"
pkgs2="libdat2-2 libdat2-dev"
export DEBIAN_FRONTEND=noninteractive
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-deb.XXXXXX") || exit 1
chmod 755 "$tmp"
summary='' failed=0 skipped=''
step() {	# step NAME STATUS
	if [ "$2" -eq 0 ]; then r=PASS; else r=FAIL; failed=1; fi
	summary="$summary$(printf '  %-56s %s' "$1" "$r")
"
}
skip() {	# skip NAME WHY
	echo "########################################################"
	echo "SKIP: $1: $2"
	echo "########################################################"
	summary="$summary$(printf '  %-56s %s' "$1" "SKIP ($2)")
"
	skipped="$skipped $1;"
}
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }
# known PKG...: those dpkg has any trace of (apt-get purge refuses a name
# it cannot find, and then purges nothing)
known() {
	for _p in "$@"; do
		dpkg-query -W -f='${Status}\n' "$_p" 2>/dev/null |
			grep -qv "not-installed$" && echo "$_p"
	done
}
etc_sum() { [ -f /etc/dat.conf ] && md5sum < /etc/dat.conf || echo none; }

# libdapl2 as it was before: "yes" (put back at the end), "ours" (installed
# here, purged at the end)
dapl2_before=no
installed libdapl2 && dapl2_before=yes
dsrv=
cleanup() {
	[ -n "${dt_server_pid:-}" ] && dt_kill_server
	if [ -n "$dsrv" ]; then kill "$dsrv" 2>/dev/null; wait "$dsrv" 2>/dev/null; fi
	# shellcheck disable=SC2046,SC2086
	apt-get purge -y -qq $(known dapl2-utils $pkgs2 $pkgs1) >/dev/null 2>&1
	case $dapl2_before in
	yes) installed libdapl2 ||
		apt-get install -y -qq --no-install-recommends libdapl2 >/dev/null 2>&1 ;;
	*) apt-get purge -y -qq libdapl2 >/dev/null 2>&1 ;;
	esac
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

aptget() {	# aptget LOG ARGS...: apt-get install, once more after an update
	_log=$1; shift
	apt-get install -y -qq --no-install-recommends "$@" > "$_log" 2>&1 ||
		{ apt-get update -qq >> "$_log" 2>&1 &&
		  apt-get install -y -qq --no-install-recommends "$@" >> "$_log" 2>&1; }
}

echo "== 1. Debian's libdapl2 first (it owns /etc/dat.conf), then ours for DAT 1.2"
if [ $dapl2_before = no ]; then
	aptget "$tmp/dapl2.log" libdapl2 || cat "$tmp/dapl2.log"
fi
installed libdapl2
step "libdapl2 installed" $?
before=$(etc_sum)
cp /etc/dat.conf "$tmp/debian-dat.conf" 2>/dev/null

echo "== install $(cd "$debs" && ls libdat-common_*.deb libdat1_*.deb libdat-dev_*.deb libdat-tools_*.deb | tr '\n' ' ')"
aptget "$tmp/install.log" "$debs"/libdat-common_*.deb "$debs"/libdat1_*.deb \
	"$debs"/libdat-dev_*.deb "$debs"/libdat-tools_*.deb
rc=$?
[ $rc -eq 0 ] || cat "$tmp/install.log"
step "apt-get install libdat-common libdat1 libdat-dev libdat-tools" $rc
installed libdapl2
step "libdapl2 still installed beside them" $?
[ "$(etc_sum)" = "$before" ]
step "/etc/dat.conf untouched by installing" $?

echo "== datinfo (installed, no DAT_OVERRIDE)"
unset DAT_OVERRIDE
cd "$tmp" || exit 1
/usr/bin/datinfo > "$tmp/datinfo" 2>&1
rc=$?
cat "$tmp/datinfo"
step "datinfo exits 0" $rc
/usr/bin/datinfo --brief > "$tmp/brief1" 2>/dev/null
grep -q "^tcp	available	tcp " "$tmp/brief1"
step "datinfo: tcp u1.2 (from /etc/libdat/dat.conf) opens" $?
grep -q "^ofi-tcp	available	ofi " "$tmp/brief1"
step "datinfo: ofi-tcp u1.2 (from /etc/libdat/dat.conf) opens" $?
grep -q "	not-opened	u2.0: a DAT 2.0 entry" "$tmp/brief1"
step "datinfo: u2.0 lines listed, not opened (no libdat2-2)" $?

echo "== dapltest server and client over tcp (installed, the default)"
DAPLTEST=/usr/bin/dapltest
export DAPLTEST
cp /usr/share/libdat/dapltest/dt-lib.sh "$tmp/dt-lib.sh"
# shellcheck disable=SC1091 # dt-lib.sh, installed by libdat-tools
. "$tmp/dt-lib.sh"
if dt_start_server tcp "$tmp" 300; then
	step "dapltest -T S (port $dt_port)" 0
	timeout 300 "$DAPLTEST" -T T -s 127.0.0.1 -D tcp -n "$dt_port" \
		-i 100 -t 2 -w 2 client SR 1024 server RW 1024 server RR 1024 \
		client SR 1024 server SR 1024 -V
	step "dapltest -T T (2 threads x 2 EPs, -V)" $?
	timeout 60 "$DAPLTEST" -T Q -s 127.0.0.1 -D tcp -n "$dt_port"
	step "dapltest -T Q" $?
	dt_wait_server
	step "dapltest server exit status 0" "$dt_server_rc"
else
	cat "$tmp/server.err" 2>/dev/null
	step "dapltest -T S" 1
fi

# consumer GEN HEADER PKG: a program that opens "tcp" through the installed
# library, compiled with pkg-config
consumer() {
	cat > "$tmp/consumer$1.c" <<C
#include <stdio.h>
#include <$2>
int main(void)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;
	DAT_RETURN rc = dat_ia_open("tcp", 8, &async, &ia);

	if (rc != DAT_SUCCESS) {
		printf("dat_ia_open: 0x%08x\n", (unsigned)rc);
		return 1;
	}
	printf("consumer: tcp (DAT %d.%d) opened\n", DAT_VERSION_MAJOR,
	       DAT_VERSION_MINOR);
	return dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS;
}
C
	# shellcheck disable=SC2046
	cc -o "$tmp/consumer$1" "$tmp/consumer$1.c" $(pkg-config --cflags --libs "$3") &&
		"$tmp/consumer$1"
}
echo "== a consumer built with pkg-config against libdat-dev"
consumer 1 dat/udat.h dat
step "cc \$(pkg-config --cflags --libs dat); run" $?

echo "== 2. ours for DAT 2.0: libdat2-2 in libdapl2's place"
aptget "$tmp/install2.log" "$debs"/libdat2-2_*.deb "$debs"/libdat2-dev_*.deb
rc=$?
[ $rc -eq 0 ] || cat "$tmp/install2.log"
step "apt-get install libdat2-2 libdat2-dev" $rc
! installed libdapl2 && installed libdat1 && installed libdat2-2
step "libdapl2 replaced; libdat1 and libdat2-2 both installed" $?
[ "$(etc_sum)" = "$before" ]
step "/etc/dat.conf untouched (libdapl2's, as shipped)" $?
grep -qx 'tcp u2.0 nonthreadsafe default libdapl2tcp.so.2 dapl.2.0 "127.0.0.1 0" ""' /etc/libdat/dat.conf &&
	grep -qx 'ofi-tcp u2.0 nonthreadsafe default libdapl2ofi.so.2 dapl.2.0 "tcp 127.0.0.1" ""' /etc/libdat/dat.conf
step "/etc/libdat/dat.conf has the u2.0 tcp and ofi-tcp lines" $?
/usr/bin/datinfo --brief > "$tmp/brief2" 2>&1
rc=$?
cat "$tmp/brief2"
[ $rc -eq 0 ] && grep -q "^tcp	available	u2.0: tcp " "$tmp/brief2" &&
	grep -q "^ofi-tcp	available	u2.0: ofi " "$tmp/brief2" &&
	grep -q "^tcp	available	tcp " "$tmp/brief2"
step "datinfo: tcp and ofi-tcp open as u1.2 and as u2.0" $?
# libdapl2's own lines stay listed; their libraries went with libdapl2
n=$(grep -c '^[^#[:space:]]* u2\.0 ' "$tmp/debian-dat.conf" 2>/dev/null)
[ "$(grep -c '	unavailable	u2.0: DAT_PROVIDER_NOT_FOUND' "$tmp/brief2")" -ge "${n:-1}" ]
step "datinfo: libdapl2's $n u2.0 lines tried, unavailable" $?
/usr/bin/datinfo -v -p tcp > "$tmp/v2" 2>&1 &&
	grep -q "^    extension_supported " "$tmp/v2" &&
	grep -q "^    dapl_version_major  *2$" "$tmp/v2"
step "datinfo -v -p tcp: the u2.0 entry's DAT 2.0 attributes" $?
echo "== a consumer built with pkg-config against libdat2-dev"
consumer 2 dat2/udat.h dat2
step "cc \$(pkg-config --cflags --libs dat2); run" $?

echo "== 3. Debian's dapl2-utils over libdat2-2"
if ! aptget "$tmp/utils.log" dapl2-utils; then
	cat "$tmp/utils.log"
	if grep -qi "unable to locate\|failed to fetch\|temporary failure\|could not resolve" "$tmp/utils.log"; then
		skip "apt-get install dapl2-utils" "the archive cannot be reached"
	else
		step "apt-get install dapl2-utils (with ours)" 1
	fi
else
	step "apt-get install dapl2-utils (with ours)" 0
	! installed libdapl2 && installed libdat2-2 && ! installed libdat-tools
	step "resolved to libdat2-2 (libdapl2 not pulled; libdat-tools out)" $?
	# both ship dat.conf(5): ours keeps the name, theirs is diverted
	zgrep -q /etc/libdat/dat.conf /usr/share/man/man5/dat.conf.5.gz &&
		[ -f /usr/share/man/man5/dat.conf.dapl2.5.gz ] &&
		! zgrep -q /etc/libdat/dat.conf /usr/share/man/man5/dat.conf.dapl2.5.gz
	step "dapl2-utils' dat.conf(5) diverted to dat.conf.dapl2(5)" $?
	lib=$(ldd /usr/bin/dapltest | awk '/libdat2\.so\.2 =>/ { print $3 }')
	# /lib is /usr/lib (merged /usr): the file's real name is in the package
	[ -n "$lib" ] && dpkg -S "$(readlink -f "$lib")" | grep -q "^libdat2-2:"
	step "Debian's dapltest loads our libdat2.so.2" $?
	DAPLTEST=/usr/bin/dapltest
	. "$top/test/dapltest/scripts/dt-lib.sh"
	rm -f "$tmp/server.log" "$tmp/server.err"
	if dt_start_server tcp "$tmp" 300; then
		step "Debian's dapltest -T S -D tcp (port $dt_port)" 0
		timeout 300 "$DAPLTEST" -T T -s 127.0.0.1 -D tcp -n "$dt_port" \
			-i 100 -t 2 -w 2 -V client SR 1024 server RW 1024 \
			server RR 1024 client SR 1024 server SR 1024 \
			> "$tmp/dt2.out" 2>&1
		rc=$?
		tail -5 "$tmp/dt2.out"
		[ $rc -eq 0 ] && grep -q 'End of Work -- Client Exiting' "$tmp/dt2.out"
		step "Debian's dapltest -T T SR/RW/RR -V over u2.0 tcp" $?
		timeout 60 "$DAPLTEST" -T Q -s 127.0.0.1 -D tcp -n "$dt_port" \
			> "$tmp/dtq.out" 2>&1
		step "Debian's dapltest -T Q" $?
		dt_wait_server
		[ "$dt_server_rc" -eq 0 ] && grep -q 'Server (tcp):  Exiting' "$tmp/server.log"
		step "Debian's dapltest server exit status 0" $?
	else
		cat "$tmp/server.err" 2>/dev/null
		step "Debian's dapltest -T S -D tcp" 1
	fi
	# dtest's server listens on a fixed socket port, 15828, that hands the
	# client its parameters, then on its fixed conn qual 45248 (the tcp
	# port)
	if ss -Htln 'sport = :45248 or sport = :15828' | grep -q .; then
		skip "Debian's dtest" "port 45248 or 15828 is in use; dtest cannot choose another"
	else
		timeout 120 /usr/bin/dtest -s -P tcp </dev/null >"$tmp/dtest-s.out" 2>&1 &
		dsrv=$!
		# the client goes once the server listens (or gave up)
		i=0
		while [ $i -lt 400 ] && kill -0 "$dsrv" 2>/dev/null &&
		      ! ss -Htln 'sport = :15828' | grep -q .; do
			i=$((i + 1)); sleep 0.05
		done
		timeout 120 /usr/bin/dtest -P tcp -h 127.0.0.1 </dev/null >"$tmp/dtest-c.out" 2>&1
		wait "$dsrv"; dsrv=
		tail -3 "$tmp/dtest-c.out"
		if grep -q 'DAT_CONN_QUAL_IN_USE' "$tmp/dtest-s.out"; then
			skip "Debian's dtest" "port 45248 was taken as the server started"
		else
			ok=0
			for side in dtest-s dtest-c; do
				if ! grep -q 'DAPL Test Complete. PASSED' "$tmp/$side.out" ||
				   grep -Eqi 'error|fail|not implemented' "$tmp/$side.out"; then
					cat "$tmp/$side.out"; ok=1
				fi
			done
			step "Debian's dtest server and client over u2.0 tcp" $ok
		fi
	fi
fi

echo "== 4. purge"
# shellcheck disable=SC2086
dpkg -L $pkgs1 $pkgs2 2>/dev/null | sort -u > "$tmp/files"
# shellcheck disable=SC2046,SC2086
apt-get purge -y -qq $(known dapl2-utils $pkgs2 $pkgs1) > "$tmp/purge.log" 2>&1
rc=$?
[ $rc -eq 0 ] || cat "$tmp/purge.log"
step "apt-get purge ours and dapl2-utils" $rc
left=
while read -r f; do
	{ [ -f "$f" ] || [ -L "$f" ]; } && left="$left $f"
done < "$tmp/files"
[ -z "$left" ] || echo "left behind:$left"
[ -z "$left" ] && [ ! -e /etc/libdat ] && [ ! -e /usr/share/man/man5/dat.conf.5.gz ] &&
	! dpkg-divert --list | grep -q libdat
step "nothing of ours left (files, /etc/libdat, the diversion)" $?
[ "$(etc_sum)" = "$before" ]
step "/etc/dat.conf as Debian shipped it" $?
aptget "$tmp/dapl2-again.log" libdapl2 || cat "$tmp/dapl2-again.log"
installed libdapl2 && dpkg -V libdapl2 && [ "$(etc_sum)" = "$before" ]
step "libdapl2 installs again, intact (dpkg -V)" $?

echo "== summary"
printf '%s' "$summary"
if [ $failed -ne 0 ]; then
	echo "check-deb: FAIL"
elif [ -n "$skipped" ]; then
	echo "check-deb: PASS, except what was SKIPPED:$skipped"
else
	echo "check-deb: PASS"
fi
exit $failed
