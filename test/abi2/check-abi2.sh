#!/bin/sh
# check-abi2.sh - hold our <dat2/*.h> to OpenFabrics dapl 2.1.10's.
#
# 1. Always: test/abi2/abi-probe (built by make check against our
#    headers) must print exactly the committed table dat2-2.1.10.abi,
#    and our headers must accept the 2.1.10 prototypes of every call and
#    provider-table function type (dat2-2.1.10.decls) as redeclarations:
#    C11 rejects a redeclared function or typedef of a different type.
# 2. When Debian's libdapl-dev .deb can be had (apt-get download works
#    without root; or ABI2_DEB=/path/to/libdapl-dev_2.1.10*.deb), unpack
#    its headers under test/abi2/libdapl-dev, compile the same probe
#    against them and compare the two outputs, and check that the
#    committed table and declarations are what those headers give.
#    Without it the comparison is SKIPPED (exit 77) after a loud message;
#    step 1 still has to pass.
#
# --regenerate rewrites dat2-2.1.10.abi and dat2-2.1.10.decls in the
# source tree from the 2.1.10 headers (then review the diff).
set -u
srcdir=${srcdir:-.}
here=$srcdir/test/abi2
cc=${ABI2_CC:-${CC:-cc}}
table=$here/dat2-2.1.10.abi
decls=$here/dat2-2.1.10.decls
work=test/abi2/libdapl-dev
fail=0
regenerate=no
[ "${1:-}" = --regenerate ] && regenerate=yes

mkdir -p test/abi2

# The calls and function types the DAT 2.0 headers under $1 declare, one
# normalised declaration per line.
extract_decls() {
	printf '#include <netinet/in.h>\n#include <dat2/udat.h>\n#include <dat2/dat_registry.h>\n#include <dat2/dat_ib_extensions.h>\n' |
	$cc -std=gnu99 -E -P -I"$1" -x c - |
	tr '\n' ' ' | tr ';' '\n' |
	sed 's/[[:space:]][[:space:]]*/ /g; s/^ //; s/ $//' |
	grep -E '^(extern [A-Za-z_]+ dat_[a-z_]+ ?\(|typedef [A-Za-z_]+ ?\( ?\* ?DAT_[A-Z_]+_FUNC ?\))' |
	sed 's/$/;/'
}

# --- 1: our headers against the committed data ---------------------------
if [ $regenerate = no ]; then
	if ! ./test/abi2/abi-probe > test/abi2/ours.abi; then
		echo "FAIL: test/abi2/abi-probe did not run"; exit 1
	fi
	if grep -v '^#' "$table" | diff -u - test/abi2/ours.abi \
	   > test/abi2/table.diff; then
		echo "PASS: our <dat2/*.h> print the committed 2.1.10 table" \
		     "($(wc -l < test/abi2/ours.abi) items)"
	else
		echo "FAIL: our <dat2/*.h> differ from dat2-2.1.10.abi" \
		     "(- 2.1.10, + ours):"
		cat test/abi2/table.diff; fail=1
	fi

	{
		printf '#include <dat2/udat.h>\n#include <dat2/dat_registry.h>\n#include <dat2/dat_ib_extensions.h>\n'
		grep -v '^#' "$decls"
	} > test/abi2/decls.c
	if $cc -std=c11 -Wall -Werror -fsyntax-only -I"$srcdir/dat/include" \
	       test/abi2/decls.c 2> test/abi2/decls.err; then
		echo "PASS: our <dat2/*.h> accept the 2.1.10 prototypes" \
		     "($(grep -vc '^#' "$decls") declarations)"
	else
		echo "FAIL: a 2.1.10 prototype conflicts with ours:"
		cat test/abi2/decls.err; fail=1
	fi
fi

# --- 2: the 2.1.10 headers themselves ------------------------------------
skip() {
	echo "########################################################"
	echo "SKIP: $*"
	echo "      The comparison with Debian's libdapl-dev 2.1.10 headers"
	echo "      did not run; only the committed table was checked."
	echo "########################################################"
	[ $fail -ne 0 ] && exit 1
	exit 77
}

if [ ! -f "$work/usr/include/dat2/dat.h" ]; then
	rm -rf "$work"; mkdir -p "$work"
	deb=${ABI2_DEB:-}
	if [ -z "$deb" ]; then
		command -v apt-get > /dev/null 2>&1 ||
			skip "no apt-get to fetch libdapl-dev"
		( cd "$work" && timeout 120 apt-get download libdapl-dev ) \
			> "$work.log" 2>&1 ||
			skip "apt-get download libdapl-dev failed: $(tail -1 "$work.log")"
		deb=$(ls "$work"/libdapl-dev_*.deb 2>/dev/null | head -1)
	fi
	[ -f "$deb" ] || skip "no libdapl-dev .deb"
	version=$(dpkg-deb -f "$deb" Version 2>/dev/null)
	case "$version" in
	2.1.10*) ;;
	*) skip "libdapl-dev is version '$version', not 2.1.10";;
	esac
	dpkg-deb -x "$deb" "$work" || skip "cannot unpack $deb"
	echo "$version" > "$work/VERSION"
fi
echo "(2.1.10 headers: libdapl-dev $(cat "$work/VERSION" 2>/dev/null))"

if ! $cc -std=gnu99 -w -I"$work/usr/include" -I"$here" \
	"$here/abi-probe.c" -o test/abi2/abi-probe-2.1.10 ||
   ! ./test/abi2/abi-probe-2.1.10 > test/abi2/theirs.abi; then
	echo "FAIL: abi-probe does not build or run against the 2.1.10 headers"
	exit 1
fi
extract_decls "$work/usr/include" > test/abi2/theirs.decls

if [ $regenerate = yes ]; then
	{
		echo "# dat2-2.1.10.abi - the DAT 2.0 ABI of OpenFabrics dapl 2.1.10 on x86_64, as"
		echo "# test/abi2/abi-probe.c prints it compiled against Debian 12's libdapl-dev"
		echo "# Package: libdapl-dev Version: $(cat "$work/VERSION") (headers only; see check-abi2.sh)."
		cat test/abi2/theirs.abi
	} > "$table"
	{
		echo "# dat2-2.1.10.decls - the prototypes of OpenFabrics dapl 2.1.10's <dat2/*.h>"
		echo "# (libdapl-dev $(cat "$work/VERSION")), preprocessed and one per line by"
		echo "# check-abi2.sh --regenerate: every dat_* call and DAT_*_FUNC type."
		cat test/abi2/theirs.decls
	} > "$decls"
	echo "regenerated $table and $decls"
	exit 0
fi

if diff -u test/abi2/theirs.abi test/abi2/ours.abi > test/abi2/probe.diff; then
	echo "PASS: the probe prints the same table against the 2.1.10" \
	     "headers and ours"
else
	echo "FAIL: 2.1.10 headers (-) and ours (+) differ:"
	cat test/abi2/probe.diff; fail=1
fi
if ! grep -v '^#' "$table" | cmp -s - test/abi2/theirs.abi ||
   ! grep -v '^#' "$decls" | cmp -s - test/abi2/theirs.decls; then
	echo "FAIL: dat2-2.1.10.abi or .decls is not what the 2.1.10 headers" \
	     "give; run test/abi2/check-abi2.sh --regenerate and review"
	fail=1
fi
exit $fail
