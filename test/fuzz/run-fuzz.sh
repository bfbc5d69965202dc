#!/bin/sh
# Short, bounded libFuzzer runs of every target from its seed corpus.  New
# inputs and crash files go to a scratch folder, never into the source tree.
set -u
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail=0
for target in conf wire; do
	mkdir -p "$work/$target"
	./test/fuzz/fuzz_$target -runs=100000 -max_total_time=20 -max_len=4096 \
		-artifact_prefix="$work/$target-" -print_final_stats=1 \
		"$work/$target" "${srcdir:-.}/test/fuzz/corpus/$target" \
		> "$work/$target.log" 2>&1
	rc=$?
	tail -n 12 "$work/$target.log"
	if [ $rc -eq 0 ]; then
		echo "PASS: fuzz_$target found nothing"
	else
		echo "FAIL: fuzz_$target (exit $rc)"; fail=1
	fi
done
exit $fail
