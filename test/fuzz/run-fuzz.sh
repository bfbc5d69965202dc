#!/bin/sh
# A short, bounded libFuzzer run of the dat.conf parser from the seed
# corpus.  New inputs go to a scratch folder, never into the source tree.
set -u
work=$(mktemp -d "${TMPDIR:-/tmp}/fuzzconf.XXXXXX")
trap 'rm -rf "$work"' EXIT
./test/fuzz/fuzz_conf -runs=100000 -max_total_time=30 -max_len=4096 \
	-print_final_stats=1 "$work" "${srcdir:-.}/test/fuzz/corpus/conf" \
	> "$work/log" 2>&1
rc=$?
tail -n 15 "$work/log"
[ $rc -eq 0 ] && echo "PASS: fuzz_conf found nothing"
exit $rc
