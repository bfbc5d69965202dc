#!/bin/sh
# check-deb.sh [DEBDIR]: installs the packages scripts/deb.sh built
# (dependencies from the archive), uses them from the installed files only
# (no build tree, no DAT_OVERRIDE): datinfo, a dapltest server and client
# over tcp (and ofi-tcp opening), a consumer compiled with pkg-config; checks that Debian's
# libdapl2 and its /etc/dat.conf live side by side with them; then purges
# them (also when a step failed) and checks nothing of theirs is left.
# Root only: exits 77 (skip) otherwise.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
debs=${1:-$top/build-deb}
case $debs in /*) ;; *) debs=$(pwd)/$debs ;; esac
if [ "$(id -u)" -ne 0 ]; then
	echo "SKIP: check-deb.sh installs packages: run it as root"
	exit 77
fi
pkgs="libdat1 libdat-dev libdat-tools"
export DEBIAN_FRONTEND=noninteractive
tmp=$(mktemp -d "${TMPDIR:-/tmp}/check-deb.XXXXXX") || exit 1
summary= failed=0
step() {	# step NAME STATUS
	if [ "$2" -eq 0 ]; then r=PASS; else r=FAIL; failed=1; fi
	summary="$summary$(printf '  %-44s %s' "$1" "$r")
"
}
dapl2_ours=0
cleanup() {
	[ -n "${dt_server_pid:-}" ] && dt_kill_server
	# shellcheck disable=SC2086
	apt-get purge -y -qq $pkgs >/dev/null 2>&1
	[ "$dapl2_ours" = 1 ] && apt-get purge -y -qq libdapl2 >/dev/null 2>&1
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

etc_sum() { [ -f /etc/dat.conf ] && md5sum < /etc/dat.conf || echo none; }

echo "== Debian's libdapl2 first (it owns /etc/dat.conf)"
if ! dpkg-query -W -f='${Status}' libdapl2 2>/dev/null | grep -q "ok installed"; then
	{ apt-get install -y -qq --no-install-recommends libdapl2 >/dev/null 2>&1 ||
	  { apt-get update -qq && apt-get install -y -qq --no-install-recommends libdapl2 >/dev/null; }; } &&
		dapl2_ours=1
fi
dpkg-query -W -f='${Status}' libdapl2 2>/dev/null | grep -q "ok installed"
step "libdapl2 installed" $?
before=$(etc_sum)

echo "== install $(cd "$debs" && ls libdat1_*.deb libdat-dev_*.deb libdat-tools_*.deb | tr '\n' ' ')"
apt-get install -y -qq --no-install-recommends "$debs"/libdat1_*.deb \
	"$debs"/libdat-dev_*.deb "$debs"/libdat-tools_*.deb > "$tmp/install.log" 2>&1
rc=$?
[ $rc -eq 0 ] || cat "$tmp/install.log"
step "apt-get install our three packages" $rc
dpkg -L $pkgs 2>/dev/null | sort -u > "$tmp/files"
[ "$(etc_sum)" = "$before" ]
step "/etc/dat.conf untouched by installing" $?

echo "== datinfo (installed, no DAT_OVERRIDE)"
unset DAT_OVERRIDE
cd "$tmp" || exit 1
/usr/bin/datinfo > "$tmp/datinfo" 2>&1
rc=$?
cat "$tmp/datinfo"
step "datinfo exits 0" $rc
/usr/bin/datinfo --brief 2>/dev/null | grep -q "^tcp	available	"
step "datinfo: tcp (from /etc/libdat/dat.conf) opens" $?
/usr/bin/datinfo --brief 2>/dev/null | grep -q "^ofi-tcp	available	"
step "datinfo: ofi-tcp (from /etc/libdat/dat.conf) opens" $?
/usr/bin/datinfo --brief 2>/dev/null | grep -q "	not-opened	u2.0"
step "datinfo: libdapl2's u2.0 lines shown, not opened" $?

echo "== dapltest server and client over tcp (installed, the default)"
DAPLTEST=/usr/bin/dapltest
export DAPLTEST
. /usr/share/libdat/dapltest/dt-lib.sh
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

echo "== a consumer built with pkg-config against libdat-dev"
cat > "$tmp/consumer.c" <<'C'
#include <stdio.h>
#include <dat/udat.h>
int main(void)
{
	DAT_EVD_HANDLE async = DAT_HANDLE_NULL;
	DAT_IA_HANDLE ia;
	DAT_RETURN rc = dat_ia_open("tcp", 8, &async, &ia);

	if (rc != DAT_SUCCESS) {
		printf("dat_ia_open: 0x%08x\n", (unsigned)rc);
		return 1;
	}
	printf("consumer: tcp opened\n");
	return dat_ia_close(ia, DAT_CLOSE_GRACEFUL_FLAG) != DAT_SUCCESS;
}
C
# shellcheck disable=SC2046
cc -o "$tmp/consumer" "$tmp/consumer.c" $(pkg-config --cflags --libs dat) &&
	"$tmp/consumer"
step "cc \$(pkg-config --cflags --libs dat); run" $?

echo "== purge"
# shellcheck disable=SC2086
apt-get purge -y -qq $pkgs > "$tmp/purge.log" 2>&1
step "apt-get purge our packages" $?
left=
while read -r f; do
	[ -f "$f" ] || [ -L "$f" ] && left="$left $f"
done < "$tmp/files"
[ -z "$left" ] || echo "left behind:$left"
[ -z "$left" ] && [ ! -e /etc/libdat ]
step "nothing of ours left (files, /etc/libdat)" $?
[ "$(etc_sum)" = "$before" ] &&
	dpkg-query -W -f='${Status}' libdapl2 2>/dev/null | grep -q "ok installed" &&
	dpkg -V libdapl2 >/dev/null 2>&1
step "libdapl2 and /etc/dat.conf intact after purge" $?

echo "== summary"
printf '%s' "$summary"
[ $failed -eq 0 ] && echo "check-deb: PASS" || echo "check-deb: FAIL"
exit $failed
