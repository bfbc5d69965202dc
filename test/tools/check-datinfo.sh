#!/bin/sh
# datinfo: every entry listed with its status (available, unavailable with
# libdat's reason, not opened with why), other-version entries never
# opened, exit status 0 whatever the entries say, -p, -v, --brief, and
# --conf against a fake sysfs tree with IB, RoCE and iWARP devices.
# Run by make check from the top build directory.
set -u
tool=./tools/datinfo
lib=${DAT_TEST_PROVIDER:?run through make check}
ofi=$(pwd)/providers/ofi/.libs/libdaplofi.so.1
dir=$(mktemp -d "${TMPDIR:-/tmp}/datinfo.XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fail=0
no() { echo "FAIL: $*"; fail=1; }

cat > "$dir/dat.conf" <<CONF
# a test dat.conf
good u1.2 nonthreadsafe default $lib dapl.1.2 "ok" ""
nodev u1.2 nonthreadsafe default $ofi dapl.1.2 "tcp datnosuchdev0" ""
ofa-v2-ib0 u2.0 nonthreadsafe default $dir/libmustnotload.so.2 dapl.2.0 "ib0 0" ""
kern k1.2 nonthreadsafe default $dir/libkern.so dapl.1.2 "" ""
broken u1.2 nonthreadsafe default
CONF
export DAT_OVERRIDE="$dir/dat.conf"

$tool > "$dir/out" 2> "$dir/err"
rc=$?
[ $rc -eq 0 ] || no "datinfo exit status $rc, expected 0 (unavailable entries are not errors)"
grep -q "$dir/dat.conf (DAT_OVERRIDE is set" "$dir/out" || no "the file and why it is read are not shown"
grep -q "dat.conf:6: bad .*line skipped" "$dir/out" || no "the bad line is not shown"
grep -q "^ofa-v2-ib0 u2.0" "$dir/out" || no "the u2.0 entry is not listed"
grep -q "libmustnotload" "$dir/err" && no "the u2.0 entry's library was loaded: $(cat "$dir/err")"

$tool --brief > "$dir/brief" 2>/dev/null || no "datinfo --brief failed"
want() {	# want NAME STATUS DETAIL-PATTERN
	line=$(grep "^$1	" "$dir/brief")
	case $line in
	"$1	$2	"*) echo "$line" | grep -q -- "$3" || no "$1: detail '$line' lacks '$3'" ;;
	*) no "$1: brief line '$line', expected status $2" ;;
	esac
}
want good available good
want nodev unavailable "DAT_PROVIDER_NOT_FOUND DAT_RESOURCE_DEVICE: .*datnosuchdev0"
want ofa-v2-ib0 not-opened "u2.0: for another DAT library"
want kern not-opened "kernel"
[ "$(wc -l < "$dir/brief")" -eq 4 ] || no "--brief printed $(wc -l < "$dir/brief") lines, expected 4"

$tool -p good -v > "$dir/v" 2>&1 || no "datinfo -p good -v failed"
for attr in max_eps max_rdma_read_per_ep_in max_rdma_read_per_ep_out \
	    max_private_data_size srq_supported max_rmrs num_provider_specific_attr; do
	grep -q "^    $attr " "$dir/v" || no "-v lacks $attr"
done
grep -q "^nodev" "$dir/v" && no "-p good also showed nodev"
$tool -p nosuchname > /dev/null 2>&1 && no "-p with an unknown name exited 0"
$tool --no-such-option > /dev/null 2>&1; [ $? -eq 2 ] || no "bad usage is not exit 2"
DAT_OVERRIDE=$dir/missing.conf $tool > /dev/null 2> "$dir/err2" &&
	no "an unreadable DAT_OVERRIDE exited 0"
grep -q "cannot open" "$dir/err2" || no "an unreadable DAT_OVERRIDE is not explained"

# --conf on a fake sysfs: ib0 (IB, port 1 of mlx5_0, found through the
# netdev's device link), ib1 (no address), eth2 (RoCE, gid_attrs), eth3
# (iWARP, parent); fake addresses stand for the host's
s=$dir/sys
mkdir -p "$s/class/infiniband/mlx5_0/ports/1" "$s/class/infiniband/mlx5_1/ports/1" \
	"$s/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs" \
	"$s/class/infiniband/siw_eth3/ports/1" \
	"$s/class/net/ib0/device/infiniband/mlx5_0" "$s/class/net/ib1/device/infiniband/mlx5_1"
echo "1: CA" > "$s/class/infiniband/mlx5_0/node_type"
echo InfiniBand > "$s/class/infiniband/mlx5_0/ports/1/link_layer"
echo 0 > "$s/class/net/ib0/dev_port"
echo "1: CA" > "$s/class/infiniband/mlx5_1/node_type"
echo InfiniBand > "$s/class/infiniband/mlx5_1/ports/1/link_layer"
echo "1: CA" > "$s/class/infiniband/mlx5_2/node_type"
echo Ethernet > "$s/class/infiniband/mlx5_2/ports/1/link_layer"
echo eth2 > "$s/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0"
echo "4: RNIC" > "$s/class/infiniband/siw_eth3/node_type"
echo eth3 > "$s/class/infiniband/siw_eth3/parent"
DATINFO_SYSFS_ROOT=$s DATINFO_ADDRS=ib0=10.1.0.1,eth2=10.2.0.1,eth3=10.3.0.1 \
	$tool --conf > "$dir/conf" || no "--conf failed"
for l in 'OpenIB-cma u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "ib0 0" ""' \
	 'OpenIB-cma-roe-eth2 u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "eth2 0" ""' \
	 'OpenIB-iwarp u1.2 nonthreadsafe default libdaplverbs.so.1 dapl.1.2 "eth3 0" ""' \
	 'ofi-tcp u1.2 nonthreadsafe default libdaplofi.so.1 dapl.1.2 "tcp 127.0.0.1" ""'; do
	grep -qxF "$l" "$dir/conf" || no "--conf lacks: $l"
done
grep -q '"ib1 0"' "$dir/conf" && no "--conf offered ib1, which has no address"
grep -q "ib1 has no IP address" "$dir/conf" || no "--conf does not say why ib1 is left out"
[ "$(grep -vc '^#' "$dir/conf")" -eq 4 ] || no "--conf printed $(grep -vc '^#' "$dir/conf") lines, expected 4"
# and with nothing there: only the software line, and why
DATINFO_SYSFS_ROOT=$dir/empty $tool --conf > "$dir/conf0" || no "--conf (no devices) failed"
grep -q "no RDMA device" "$dir/conf0" || no "--conf does not say no device was found"
[ "$(grep -vc '^#' "$dir/conf0")" -eq 1 ] || no "--conf without devices printed more than the software line"

if [ $fail -ne 0 ]; then
	echo "--- datinfo output"; cat "$dir/out" "$dir/brief" "$dir/conf"
	exit 1
fi
echo "PASS: datinfo lists, opens, explains and generates dat.conf lines"
