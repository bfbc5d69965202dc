#!/bin/sh
# Installs the Debian packages libdat needs to build and test, only those
# that are missing, and only when run as root (otherwise it names them).
set -eu
# librdmacm-dev and libibverbs-dev build the verbs provider; the runtime
# libraries and ibverbs-providers (the device drivers: rxe, mlx5 ...) run
# it; make check-verbs boots a guest through test/vm/datvm, which installs its own.
# iptables drops a link's traffic in make check-net's "drop" fault.
need="gcc g++ make autoconf automake libtool pkg-config check
      libfabric-dev librdmacm-dev libibverbs-dev
      librdmacm1 libibverbs1 ibverbs-providers
      clang libclang-rt-14-dev valgrind groff-base binutils iptables"
missing=
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -ne 0 ]; then
	echo "libdat needs these Debian packages:$missing" >&2
	echo "install them (sudo apt-get install$missing) and run again" >&2
	exit 1
fi
echo "installing:$missing"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086
apt-get install -y -qq --no-install-recommends $missing >/dev/null
