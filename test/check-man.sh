#!/bin/sh
# Every man page renders with groff without a single warning.  Pages come
# from the source tree and (generated ones) the build tree; .so stubs
# resolve relative to the man root, so gather them into one.
set -u
root=$(mktemp -d "${TMPDIR:-/tmp}/datman.XXXXXX")
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/man1" "$root/man3" "$root/man5" "$root/man7"
for page in "${srcdir:-.}"/man/man[1357]/*.[1357] man/man[1357]/*.[1357]; do
	[ -f "$page" ] && cp "$page" "$root/$(basename "$(dirname "$page")" | sed 's/^man//;s/^/man/')/"
done
fail=0 n=0
for page in "$root"/man[1357]/*.[1357]; do
	n=$((n + 1))
	out=$(cd "$root" && groff -man -Tutf8 -ww -z "${page#"$root"/}" 2>&1)
	if [ -n "$out" ]; then
		echo "FAIL: $page"; echo "$out"; fail=1
	fi
done
[ $fail -eq 0 ] && echo "PASS: $n man pages render cleanly"
exit $fail
