#!/bin/sh
# The whole test suite: builds libdat (warnings are errors) and runs
# `make check`.  Options add CI's further checks:
#   --werror       accepted for old callers; the build always uses -Werror
#   --sanitize     also run the suite once under AddressSanitizer + UBSan
#   --valgrind     also run the C tests under valgrind (memcheck)
#   --distcheck    also run `make distcheck`
#   --verbs        also run `make check-verbs`: the verbs provider's tests
#                  and dapltest's regression on Soft-RoCE in the project's
#                  QEMU guest (test/vm/datvm); says so loudly
#                  and goes on when no guest can start here
#   --net          also run `make check-net`: the ofi-tcp and tcp suites and
#                  dapltest across two network namespaces joined by a veth
#                  pair (as root only, else a loud skip)
#   --packages     also build the Debian packages (scripts/deb.sh), install
#                  them, use them and purge them (scripts/check-deb.sh; as
#                  root only, else a loud skip)
#   --no-plain     build, but leave out the plain `make check` (for a
#                  caller that has just run it: CI's second call)
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
werror=--enable-werror sanitize= valgrind= distcheck= verbs= packages= net= plain=1
for a in "$@"; do
	case $a in
	--werror) werror=--enable-werror ;;
	--sanitize) sanitize=1 ;;
	--valgrind) valgrind=1 ;;
	--distcheck) distcheck=1 ;;
	--verbs) verbs=1 ;;
	--packages) packages=1 ;;
	--net) net=1 ;;
	--no-plain) plain= ;;
	*) echo "usage: $0 [--werror] [--sanitize] [--valgrind] [--distcheck] [--verbs] [--net] [--packages] [--no-plain]" >&2; exit 2 ;;
	esac
done

# each step says how long the run has taken so far (CI's budget)
t0=$(date +%s)
step() { printf '\n== %s  [%ss]\n' "$*" "$(($(date +%s) - t0))"; }

if [ -n "$plain" ]; then
	step "build and make check ($top/build)"
	"$top/scripts/build.sh" "$top/build" $werror
	make -C "$top/build" -j"$(nproc)" check || { cat "$top"/build/test-suite.log; exit 1; }
else
	# the test programs are built too: check-valgrind and check-verbs
	# run them
	step "build ($top/build; make check itself left out: --no-plain)"
	"$top/scripts/build.sh" "$top/build" $werror
	make -C "$top/build" -j"$(nproc)" check TESTS=
fi

if [ -n "$sanitize" ]; then
	step "make check under AddressSanitizer + UBSan ($top/build-asan)"
	"$top/scripts/build.sh" "$top/build-asan" $werror --enable-sanitizers
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		make -C "$top/build-asan" -j"$(nproc)" check ||
		{ cat "$top"/build-asan/test-suite.log; exit 1; }
fi

if [ -n "$valgrind" ]; then
	step "make check-valgrind ($top/build)"
	make -C "$top/build" check-valgrind
fi

if [ -n "$verbs" ]; then
	step "make check-verbs: the verbs provider on Soft-RoCE and soft-iWARP in the guest (test/vm/datvm), and tcp against siw"
	if [ ! -e "$top/build/providers/verbs/.libs/libdaplverbs.so.1" ]; then
		echo "check-verbs: SKIPPED: the verbs provider is not built (no libibverbs/librdmacm)"
	elif ! make -C "$top/build" check-verbs; then
		# check-verbs.sh leaves .skipped when no guest could start: not
		# a failure of the code, and said loudly in its output
		[ -f "$top/build/test/check-verbs/.skipped" ] || exit 1
		echo "check-verbs: SKIPPED: no guest could start on this machine (see above)"
	fi
fi

if [ -n "$net" ]; then
	step "make check-net: ofi-tcp and tcp across two network namespaces (test/net/check-net.sh)"
	make -C "$top/build" check-net
fi

if [ -n "$packages" ]; then
	step "Debian packages: build, install, use, purge ($top/build-deb)"
	if [ "$(id -u)" -ne 0 ]; then
		echo "packages: SKIPPED: installing packages needs root"
	else
		"$top/scripts/deb.sh" "$top/build-deb"
		"$top/scripts/check-deb.sh" "$top/build-deb"
	fi
fi

if [ -n "$distcheck" ]; then
	step "make distcheck"
	# (as many jobs as CPUs: the tarball's build and make check, in parallel
	# as command 2 runs them)
	if ! make -C "$top/build" -j"$(nproc)" distcheck >"$top/build/distcheck.log" 2>&1; then
		tail -n 30 "$top/build/distcheck.log"
		# the tree distcheck tested stays on failure: show its suite log
		for f in "$top"/build/libdat-*/_build/sub/test-suite.log; do
			[ -f "$f" ] && cat "$f"
		done
		echo "distcheck FAILED (full output: $top/build/distcheck.log)"
		exit 1
	fi
	echo "distcheck passed"
fi
step "all passed"
