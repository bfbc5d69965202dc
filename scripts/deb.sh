#!/bin/sh
# deb.sh [OUTDIR]: builds libdat's Debian packages (libdat-common, libdat1,
# libdat-dev, libdat-tools, libdat2-2, libdat2-dev)
# with Debian's own tools, from a copy of this tree (tracked
# and new files, no build folders), and puts the .deb files in OUTDIR
# (default build-deb/).  As root it installs the build tools and the
# build dependencies that are missing; otherwise it names them.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$top/build-deb}
case $out in /*) ;; *) out=$(pwd)/$out ;; esac

"$top/scripts/deps.sh"	# the build dependencies
need="dpkg-dev debhelper fakeroot"
missing=
for p in $need; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "deb.sh needs these Debian packages:$missing" >&2
		exit 1
	fi
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	apt-get install -y -qq --no-install-recommends $missing >/dev/null 2>&1 ||
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing >/dev/null; }
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/libdat-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/libdat"
# the tree as git knows it, uncommitted work included, build output not
(cd "$top" && git ls-files -co --exclude-standard -z) |
	(cd "$top" && xargs -0 tar -cf - --no-recursion) | tar -xf - -C "$work/libdat"
(cd "$work/libdat" && dpkg-buildpackage -b -us -uc -Jauto) > "$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log"; echo "deb.sh: dpkg-buildpackage failed" >&2; exit 1; }
mkdir -p "$out"
rm -f "$out"/*.deb
mv "$work"/*.deb "$work"/*.buildinfo "$work"/*.changes "$out"/
echo "deb.sh: built in $out:"
ls -1 "$out"/*.deb
