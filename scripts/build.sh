#!/bin/sh
# build.sh DIR [configure options...]: configures (once) and builds libdat
# in the out-of-tree folder DIR.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
"$top/scripts/deps.sh"
if [ ! -x "$top/configure" ]; then
	"$top/autogen.sh" > "$top/autogen.log" 2>&1 ||
		{ cat "$top/autogen.log"; exit 1; }
fi
mkdir -p "$dir"
cd "$dir"
if [ ! -f Makefile ] || [ "$top/configure" -nt Makefile ] ||
   [ "$(cat .configure-args 2>/dev/null)" != "$*" ]; then
	"$top/configure" -q "$@"
	echo "$*" > .configure-args
fi
make -j"$(nproc)" >/dev/null
