#!/bin/sh
# The main job: builds what is missing, then, with the build tree's
# generated dat.conf, lists the providers and opens each, then connects a
# server and a client process over ofi-tcp (private data, asymmetric RDMA
# Read limits) and shows what both sides negotiated.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
"$top/scripts/build.sh" "$build"
cd "$build"
export DAT_OVERRIDE="$build/dat.conf"
echo "== DAT providers of the build tree (DAT_OVERRIDE=$DAT_OVERRIDE)"
./test/tools/datinfo
echo "== two processes over ofi-tcp: dat_conn_demo server / client"
DAT_TEST_CONF="$DAT_OVERRIDE" DAT_TEST_IA=ofi-tcp sh "$top/test/api/check-conn-demo.sh"
