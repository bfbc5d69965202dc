#!/bin/sh
# datinfo: every entry listed with its status (available, unavailable with
# libdat's reason, not opened with why), u2.0 entries opened through its
# DAT 2.0 helper datinfo2 (and, without the helper, never loaded),
# entries for other DAT versions never opened, exit status 0 whatever the
# entries say, -p, -v, --brief, a dat.conf shaped like Debian's libdapl2
# one, and --conf against a fake sysfs tree with IB, RoCE and iWARP devices.
# Run by make check from the top build directory.
set -u
tool=./tools/datinfo
lib=${DAT_TEST_PROVIDER:?run through make check}
ofi=$(pwd)/providers/ofi/.libs/libdaplofi.so.1
verbs=$(pwd)/providers/verbs/.libs/libdaplverbs.so.1
tcp2=$(pwd)/providers/tcp/.libs/libdapl2tcp.so.2
fixture=${srcdir:-.}/test/tools/libdapl2-dat.conf
# the build tree's helper (installed, datinfo finds it by itself); the
# first part runs without it
helper=$(pwd)/tools/datinfo2
export DATINFO2=/nonexistent/datinfo2
dir=$(mktemp -d "${TMPDIR:-/tmp}/datinfo.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

# The u2.0 entry names a working copy of the test provider: if datinfo
# (or libdat on its behalf) ever loaded it, the dynamic loader's log
# would say so.
cp "$lib" "$dir/libmustnotload.so.2" || exit 1
cat > "$dir/dat.conf" <<CONF
# a test dat.conf
good u1.2 nonthreadsafe default $lib dapl.1.2 "ok" ""
nodev u1.2 nonthreadsafe default $ofi dapl.1.2 "tcp 192.0.2.1" ""
nolib u1.2 nonthreadsafe default $dir/libnosuch.so.1 dapl.1.2 "x" ""
ofa-v2-ib0 u2.0 nonthreadsafe default $dir/libmustnotload.so.2 dapl.2.0 "ib0 0" ""
future u2.1 nonthreadsafe default $dir/libmustnotload.so.2 dapl.2.1 "x" ""
kern k1.2 nonthreadsafe default $dir/libkern.so dapl.1.2 "" ""
other u1.2 nonthreadsafe nondefault $lib dapl.1.2 "ok" ""
broken u1.2 nonthreadsafe default
CONF
nlines=7	# entries that parse
if [ -n "${CHECK_VERBS_PROVIDER:-}" ] && [ -f "$verbs" ]; then
	echo "verbs-x u1.2 nonthreadsafe default $verbs dapl.1.2 \"nosuchnetdev0 0\" \"\"" >> "$dir/dat.conf"
	nlines=8
fi
export DAT_OVERRIDE="$dir/dat.conf"

LD_DEBUG=files LD_DEBUG_OUTPUT=$dir/ld $tool > "$dir/out" 2> "$dir/err"
rc=$?
[ $rc -eq 0 ] || no "datinfo exit status $rc, expected 0 (unavailable entries are not errors)"
[ -s "$dir/err" ] && no "datinfo wrote to stderr: $(cat "$dir/err")"
grep -q "$dir/dat.conf (DAT_OVERRIDE is set" "$dir/out" || no "the file and why it is read are not shown"
grep -q "dat.conf:9: bad .*line skipped" "$dir/out" || no "the bad line is not shown"
grep -q "^ofa-v2-ib0 u2.0" "$dir/out" || no "the u2.0 entry is not listed"
grep -q "^$nlines entries\$" "$dir/out" || no "the entry count is not $nlines"
# the loader log: the good entry's library was loaded (the log works),
# the u2.0 one's never
grep -q "file=$lib " "$dir"/ld.* || no "the loader log does not show the good entry's library"
grep -q "libmustnotload" "$dir"/ld.* && no "the u2.0 entry's library was loaded"
rm -f "$dir"/ld.*

$tool --brief > "$dir/brief" 2> "$dir/err" || no "datinfo --brief failed"
[ -s "$dir/err" ] && no "datinfo --brief wrote to stderr: $(cat "$dir/err")"
want() {	# want NAME STATUS DETAIL-PATTERN
	line=$(grep "^$1	" "$dir/brief")
	case $line in
	"$1	$2	"*) echo "$line" | grep -q -- "$3" || no "$1: detail '$line' lacks '$3'" ;;
	*) no "$1: brief line '$line', expected status $2" ;;
	esac
}
want good available good
want nodev unavailable "^nodev	unavailable	DAT_PROVIDER_NOT_FOUND DAT_RESOURCE_DEVICE: .*192\.0\.2\.1"
want nolib unavailable "DAT_PROVIDER_NOT_FOUND .*cannot load .*libnosuch\.so\.1"
want ofa-v2-ib0 not-opened "u2.0: a DAT 2.0 entry; /nonexistent/datinfo2, which opens them, is not installed"
want future not-opened "u2.1: for another DAT library, not opened"
want kern not-opened "kernel"
want other not-opened "nondefault"
if [ "$nlines" -eq 8 ]; then
	want verbs-x unavailable "DAT_PROVIDER_NOT_FOUND DAT_RESOURCE_DEVICE: .*nosuchnetdev0"
fi
[ "$(wc -l < "$dir/brief")" -eq "$nlines" ] || no "--brief printed $(wc -l < "$dir/brief") lines, expected $nlines"
# three tab-separated fields, no more
awk -F '\t' 'NF != 3 { exit 1 }' "$dir/brief" || no "--brief lines are not NAME<TAB>STATUS<TAB>DETAIL"

$tool -p good -v > "$dir/v" 2>&1 || no "datinfo -p good -v failed"
for attr in DAT_IA_ATTR: max_eps max_evd_qlen max_message_size max_rdma_size \
	    max_rdma_read_per_ep_in max_rdma_read_per_ep_out \
	    max_iov_segments_per_rdma_read max_rmrs max_srqs DAT_PROVIDER_ATTR: \
	    max_private_data_size srq_supported is_thread_safe \
	    num_provider_specific_attr; do
	grep -q "^    $attr" "$dir/v" || no "-v lacks $attr"
done
grep -q "^    max_eps  *16\$" "$dir/v" || no "-v does not show the test provider's max_eps (16)"
grep -q "^nodev" "$dir/v" && no "-p good also showed nodev"
$tool -p nodev > "$dir/p" 2>&1 || no "-p of a listed but unavailable entry did not exit 0"
grep -q "unavailable here" "$dir/p" || no "-p nodev does not show it unavailable"
$tool -p ofa-v2-ib0 > /dev/null 2>&1 || no "-p of a listed u2.0 entry did not exit 0"
$tool -p nosuchname > /dev/null 2> "$dir/err2" && no "-p with an unknown name exited 0"
grep -q "^datinfo: " "$dir/err2" || no "-p with an unknown name: no datinfo: message"
$tool --no-such-option > /dev/null 2> "$dir/err2"; [ $? -eq 2 ] || no "bad usage is not exit 2"
grep -q "^datinfo: " "$dir/err2" || no "bad usage: no datinfo: message"
DAT_OVERRIDE=$dir/missing.conf $tool > /dev/null 2> "$dir/err2" &&
	no "an unreadable DAT_OVERRIDE exited 0"
grep -q "^datinfo: .*cannot open" "$dir/err2" || no "an unreadable DAT_OVERRIDE is not explained"

# A dat.conf in the shape of Debian's libdapl2 /etc/dat.conf: every line
# listed, none opened without the helper, exit 0.
n=$(grep -c '^ofa-v2' "$fixture")
LD_DEBUG=files LD_DEBUG_OUTPUT=$dir/ld DAT_OVERRIDE=$fixture $tool -b > "$dir/dapl2" 2> "$dir/err" ||
	no "datinfo on the libdapl2-style dat.conf did not exit 0"
[ "$(grep -c '	not-opened	u2.0: a DAT 2.0 entry' "$dir/dapl2")" -eq "$n" ] ||
	no "not all $n u2.0 lines of the libdapl2-style dat.conf are shown as not opened"
[ "$(wc -l < "$dir/dapl2")" -eq "$n" ] || no "datinfo on the libdapl2-style dat.conf printed other lines"
grep -q "libdapl[a-z]*\.so\.2" "$dir"/ld.* && no "a libdapl2 library was looked for"
rm -f "$dir"/ld.*
# ... and with the helper: each one tried through libdat2.so.2 (OpenFabrics'
# libraries are not there), listed, exit 0
DATINFO2=$helper DAT_OVERRIDE=$fixture $tool -b > "$dir/dapl2h" 2> "$dir/err" ||
	no "datinfo (with datinfo2) on the libdapl2-style dat.conf did not exit 0"
[ "$(grep -c '	unavailable	u2.0: DAT_PROVIDER_NOT_FOUND' "$dir/dapl2h")" -eq "$n" ] ||
	no "with datinfo2, not all $n u2.0 lines of the libdapl2-style dat.conf are tried (unavailable)"
[ -s "$dir/err" ] && no "datinfo (with datinfo2) wrote to stderr: $(cat "$dir/err")"

# u2.0 entries opened by datinfo2, next to a u1.2 entry of the same name:
# both opened, each by its own library, the 2.0 one's attributes shown
cat > "$dir/both.conf" <<CONF
same u1.2 nonthreadsafe default $lib dapl.1.2 "ok" ""
same u2.0 nonthreadsafe default $tcp2 dapl.2.0 "127.0.0.1 0" ""
nolib2 u2.0 nonthreadsafe default $dir/libnosuch.so.2 dapl.2.0 "x" ""
CONF
DATINFO2=$helper DAT_OVERRIDE=$dir/both.conf LD_DEBUG=files LD_DEBUG_OUTPUT=$dir/ld \
	$tool -b > "$dir/both" 2> "$dir/err" || no "datinfo with u2.0 entries failed"
[ -s "$dir/err" ] && no "datinfo with u2.0 entries wrote to stderr: $(cat "$dir/err")"
[ "$(sed -n 1p "$dir/both")" = "same	available	same" ] ||
	no "the u1.2 entry: '$(sed -n 1p "$dir/both")'"
[ "$(sed -n 2p "$dir/both")" = "same	available	u2.0: tcp 127.0.0.1" ] ||
	no "the u2.0 entry is not opened by datinfo2: '$(sed -n 2p "$dir/both")'"
sed -n 3p "$dir/both" | grep -q "^nolib2	unavailable	u2.0: DAT_PROVIDER_NOT_FOUND .*libnosuch\.so\.2" ||
	no "a u2.0 entry whose library is missing: '$(sed -n 3p "$dir/both")'"
[ "$(wc -l < "$dir/both")" -eq 3 ] || no "datinfo printed $(wc -l < "$dir/both") lines for 3 entries"
grep -q "file=$tcp2 " "$dir"/ld.* || no "the loader log does not show libdapl2tcp.so.2 loaded"
rm -f "$dir"/ld.*
DATINFO2=$helper DAT_OVERRIDE=$dir/both.conf $tool -v -p same > "$dir/bothv" 2>&1 ||
	no "datinfo -v -p same failed"
[ "$(grep -c '^    DAT_IA_ATTR:' "$dir/bothv")" -eq 2 ] || no "-v does not show both entries' attributes"
grep -q "^    dapl_version_major  *2\$" "$dir/bothv" || no "-v does not show the u2.0 entry's DAT version 2"
for attr in extension_supported extension_version zb_supported; do
	grep -q "^    $attr " "$dir/bothv" || no "-v of a u2.0 entry lacks $attr"
done
grep -q "^      [a-z_]* = " "$dir/bothv" || no "-v shows no provider-specific attribute"
[ "$(grep -c '^same u' "$dir/bothv")" -eq 2 ] || no "-v -p same did not list both entries"
DATINFO2=$helper DAT_OVERRIDE=$dir/both.conf $tool > "$dir/bothn" 2>&1 || no "datinfo (both) failed"
grep -q "^3 entries\$" "$dir/bothn" || no "datinfo (both) does not count 3 entries"
grep -q "extensions: " "$dir/bothn" || no "datinfo does not summarise the u2.0 entry's extensions"

# --conf on a fake sysfs (the kernel's layout, see the sysfs-class-infiniband
# ABI document): mlx4_0, a two-port IB device whose netdevs ib0 and ib1
# are found through /sys/class/net/<if>/device/infiniband and dev_port;
# mlx5_3 (ib3, no address: left out, with a comment); mlx5_2, RoCE on
# eth2 (ports/1/gid_attrs/ndevs/0); two iWARP devices (node_type RNIC):
# cxgb4_0 on eth4 (device link) and siw_eth3 on eth3 ("parent").  Fake
# addresses stand for the host's.
s=$dir/sys
ib=$s/class/infiniband
mkdir -p "$ib/mlx4_0/ports/1" "$ib/mlx4_0/ports/2" "$ib/mlx5_3/ports/1" \
	"$ib/mlx5_2/ports/1/gid_attrs/ndevs" "$ib/cxgb4_0/ports/1" \
	"$ib/siw_eth3/ports/1" \
	"$s/class/net/ib0/device/infiniband/mlx4_0" \
	"$s/class/net/ib1/device/infiniband/mlx4_0" \
	"$s/class/net/ib3/device/infiniband/mlx5_3" \
	"$s/class/net/eth4/device/infiniband/cxgb4_0"
for d in mlx4_0 mlx5_3 mlx5_2; do echo "1: CA" > "$ib/$d/node_type"; done
for d in cxgb4_0 siw_eth3; do echo "4: RNIC" > "$ib/$d/node_type"; done
for p in mlx4_0/ports/1 mlx4_0/ports/2 mlx5_3/ports/1; do
	echo InfiniBand > "$ib/$p/link_layer"
done
for p in mlx5_2/ports/1 cxgb4_0/ports/1 siw_eth3/ports/1; do
	echo Ethernet > "$ib/$p/link_layer"
done
echo 0 > "$s/class/net/ib0/dev_port"
echo 1 > "$s/class/net/ib1/dev_port"
echo 0 > "$s/class/net/ib3/dev_port"
echo 0 > "$s/class/net/eth4/dev_port"
echo eth2 > "$ib/mlx5_2/ports/1/gid_attrs/ndevs/0"
echo eth3 > "$ib/siw_eth3/parent"
DATINFO_SYSFS_ROOT=$s \
DATINFO_ADDRS=ib0=10.1.0.1,ib1=10.1.1.1,eth2=10.2.0.1,eth3=10.3.0.1,eth4=fd00::4 \
	$tool --conf > "$dir/conf" 2> "$dir/err" || no "--conf failed"
[ -s "$dir/err" ] && no "--conf wrote to stderr: $(cat "$dir/err")"
for l in 'OpenIB-iwarp u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "eth4 0" ""' \
	 'OpenIB-cma u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "ib0 0" ""' \
	 'OpenIB-cma-1 u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "ib1 0" ""' \
	 'OpenIB-cma-roe-eth2 u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "eth2 0" ""' \
	 'OpenIB-iwarp-eth3 u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "eth3 0" ""' \
	 'ofa-v2-iwarp u2.0 nonthreadsafe default libdapl2verbs.so.2 dapl.2.0 "eth4 0" ""' \
	 'ofa-v2-ib0 u2.0 nonthreadsafe default libdapl2verbs.so.2 dapl.2.0 "ib0 0" ""' \
	 'ofa-v2-ib1 u2.0 nonthreadsafe default libdapl2verbs.so.2 dapl.2.0 "ib1 0" ""' \
	 'ofa-v2-cma-roe-eth2 u2.0 nonthreadsafe default libdapl2verbs.so.2 dapl.2.0 "eth2 0" ""' \
	 'ofa-v2-iwarp-eth3 u2.0 nonthreadsafe default libdapl2verbs.so.2 dapl.2.0 "eth3 0" ""' \
	 'tcp u1.2 nonthreadsafe default libdapltcp.so.1 dapl.1.2 "127.0.0.1 0" ""' \
	 'ofi-tcp u1.2 nonthreadsafe default libdaplofi.so.1 dapl.1.2 "tcp 127.0.0.1" ""' \
	 'tcp u2.0 nonthreadsafe default libdapl2tcp.so.2 dapl.2.0 "127.0.0.1 0" ""' \
	 'ofi-tcp u2.0 nonthreadsafe default libdapl2ofi.so.2 dapl.2.0 "tcp 127.0.0.1" ""'; do
	grep -qxF "$l" "$dir/conf" || no "--conf lacks: $l"
done
# in this order: devices by name (each one's u1.2 line, then its u2.0
# line), then the software providers
[ "$(grep -v '^#' "$dir/conf" | cut -d' ' -f1,2 | tr '\n' ' ')" = \
  "OpenIB-iwarp u1.2 ofa-v2-iwarp u2.0 OpenIB-cma u1.2 ofa-v2-ib0 u2.0 OpenIB-cma-1 u1.2 ofa-v2-ib1 u2.0 OpenIB-cma-roe-eth2 u1.2 ofa-v2-cma-roe-eth2 u2.0 OpenIB-iwarp-eth3 u1.2 ofa-v2-iwarp-eth3 u2.0 tcp u1.2 ofi-tcp u1.2 tcp u2.0 ofi-tcp u2.0 " ] ||
	no "--conf lines are not in the documented order"
grep -q '"ib3 0"' "$dir/conf" && no "--conf offered ib3, which has no address"
grep -q "^# mlx5_3 port 1 (ib3): ib3 has no IP address" "$dir/conf" ||
	no "--conf does not say why ib3 is left out"
grep -q "^# cxgb4_0 port 1, iWARP on eth4 (fd00::4)" "$dir/conf" ||
	no "--conf does not describe the iWARP port"
grep -q "^# mlx5_2 port 1, RoCE on eth2 (10.2.0.1)" "$dir/conf" ||
	no "--conf does not describe the RoCE port"
[ "$(grep -vc '^#' "$dir/conf")" -eq 14 ] || no "--conf printed $(grep -vc '^#' "$dir/conf") lines, expected 14"
# the lines it prints are ones libdat's parser takes
DAT_OVERRIDE=$dir/conf $tool -b > "$dir/confb" 2>/dev/null || no "datinfo on --conf's output failed"
[ "$(wc -l < "$dir/confb")" -eq 14 ] || no "libdat's parser did not take all 14 lines --conf printed"
# the software lines are the ones make install adds (Makefile.am)
for var in TCP_CONF_LINE OFI_CONF_LINE TCP2_CONF_LINE OFI2_CONF_LINE; do
	sw_line=$(sed -n "s/^$var = //p" "${srcdir:-.}/Makefile.am")
	if [ -z "$sw_line" ] || ! grep -qxF "$sw_line" "$dir/conf"; then
		no "--conf's software line differs from Makefile.am's $var ($sw_line)"
	fi
done
# and with nothing there: only the software line, and why
DATINFO_SYSFS_ROOT=$dir/empty $tool --conf > "$dir/conf0" || no "--conf (no devices) failed"
grep -q "no RDMA device" "$dir/conf0" || no "--conf does not say no device was found"
[ "$(grep -vc '^#' "$dir/conf0")" -eq 4 ] || no "--conf without devices printed more than the four software lines"

if [ $fail -ne 0 ]; then
	echo "--- datinfo output"; cat "$dir/out" "$dir/brief" "$dir/conf"
	exit 1
fi
echo "PASS: datinfo lists, opens, explains and generates dat.conf lines"
