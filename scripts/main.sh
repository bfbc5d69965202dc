#!/bin/sh
# The main job: builds what is missing, then, with the build tree's
# generated dat.conf, lists the providers and opens the default one.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
build="$top/build"
"$top/scripts/build.sh" "$build"
cd "$build"
export DAT_OVERRIDE="$build/dat.conf"
echo "== DAT providers of the build tree (DAT_OVERRIDE=$DAT_OVERRIDE)"
./test/tools/datinfo
