#!/bin/sh
# fetch-dapl2-utils.sh DIR - Debian's dapl2-utils, unpacked under DIR
# (never installed), for the checks that run its programs unmodified over
# libdat2.so.2 (check-dapl2-utils.sh, check-dapl2-ext.sh,
# check-dapl2-verbs.sh).  The .deb comes from DAPL2_UTILS_DEB=/path/to/
# dapl2-utils_*.deb, else from apt-get download (no root needed).  DIR/
# VERSION gets the package's version.  Does nothing when DIR holds an
# unpacked package already.
#
# Exit 0: unpacked.  Exit 77 with one line on stderr saying why not (the
# caller SKIPs loudly with it).  Each caller has a DIR of its own: two
# checks of a parallel make check never unpack into the same place.
set -u
work=${1:?usage: fetch-dapl2-utils.sh DIR}

[ -x "$work/usr/bin/dapltest" ] && exit 0
rm -rf "$work" && mkdir -p "$work" || { echo "cannot make $work" >&2; exit 77; }
deb=${DAPL2_UTILS_DEB:-}
if [ -z "$deb" ]; then
	if ! command -v apt-get > /dev/null 2>&1; then
		echo "no apt-get to fetch dapl2-utils" >&2
		exit 77
	fi
	if ! ( cd "$work" && timeout 120 apt-get download dapl2-utils ) \
		> "$work.log" 2>&1; then
		echo "apt-get download dapl2-utils failed: $(tail -1 "$work.log")" >&2
		exit 77
	fi
	deb=$(ls "$work"/dapl2-utils_*.deb 2>/dev/null | head -1)
fi
if [ ! -f "$deb" ]; then
	echo "no dapl2-utils .deb" >&2
	exit 77
fi
if ! dpkg-deb -x "$deb" "$work"; then
	echo "cannot unpack $deb" >&2
	rm -rf "$work"
	exit 77
fi
dpkg-deb -f "$deb" Version > "$work/VERSION" 2>/dev/null
exit 0
