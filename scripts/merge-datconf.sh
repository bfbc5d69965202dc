#!/bin/sh
# merge-datconf.sh [--remove] CONF LINE...
# Adds each dat.conf LINE to CONF unless CONF already has an entry with the
# same ia_name (first field): an administrator's lines are never changed,
# and installing twice adds nothing.  --remove takes out lines exactly equal
# to LINE (what install added) and deletes CONF if nothing else is left.
set -eu
remove=no
if [ "${1:-}" = --remove ]; then
	remove=yes
	shift
fi
conf=$1
shift
if [ $remove = yes ]; then
	[ -f "$conf" ] || exit 0
	for line in "$@"; do
		awk -v l="$line" '$0 != l' "$conf" > "$conf.tmp" && mv "$conf.tmp" "$conf"
	done
	[ -s "$conf" ] || rm -f "$conf"
	exit 0
fi
mkdir -p "$(dirname "$conf")"
[ -f "$conf" ] || : > "$conf"
for line in "$@"; do
	name=${line%%[ 	]*}
	if awk -v n="$name" '$1 == n { found = 1 } END { exit !found }' "$conf"; then
		echo "dat.conf: $conf already has an entry for $name; left as it is"
	else
		printf '%s\n' "$line" >> "$conf"
		echo "dat.conf: added $name to $conf"
	fi
done
