#!/bin/sh
# merge-datconf.sh [--remove] CONF LINE...
# Adds each dat.conf LINE to CONF unless CONF already has an entry with the
# same ia_name and API version (first two fields: "tcp u1.2" and "tcp u2.0"
# are different entries, for libdat.so.1 and libdat2.so.2): an
# administrator's lines are never changed, and installing twice adds nothing.  --remove takes out lines exactly equal
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
	name=$(printf '%s\n' "$line" | awk '{ print $1 }')
	api=$(printf '%s\n' "$line" | awk '{ print $2 }')
	if awk -v n="$name" -v a="$api" '$1 == n && $2 == a { found = 1 } END { exit !found }' "$conf"; then
		echo "dat.conf: $conf already has an entry for $name $api; left as it is"
	else
		printf '%s\n' "$line" >> "$conf"
		echo "dat.conf: added $name $api to $conf"
	fi
done
