#!/bin/sh
# What delivery-complete semantics cost on ofi-tcp (dapl_ofi(3)): runs
# dat_bench with Sends and RDMA Writes completing on transmit
# (DAPL_OFI_COMPLETION=transmit, raw -W tx) and on delivery (the default,
# raw -W dc), alternating, ROUNDS times each, and prints per pattern, wait
# and size the median DAT value of each, with delivery/transmit for DAT and
# for raw libfabric (libfabric's own cost of the acknowledgement).
#
#	cd <build dir> && sh <srcdir>/bench/delivery-cost.sh [dat_bench options]
#
# ROUNDS (default 3); other arguments go to run-bench.sh / dat_bench (the
# default here is -r 3 -s 8,4k,64k).  A benchmark, not a test.
set -u

here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-3}
[ $# -gt 0 ] || set -- -r 3 -s 8,4k,64k
tmp=$(mktemp -d "${TMPDIR:-/tmp}/delivery-cost.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# DELIVERY_COST_KEEP=dir keeps every run's output there
keep=${DELIVERY_COST_KEEP:-}

i=1
while [ "$i" -le "$rounds" ]; do
	for mode in transmit delivery; do
		echo "delivery-cost: round $i of $rounds, completion on $mode" >&2
		if [ "$mode" = transmit ]; then
			DAPL_OFI_COMPLETION=transmit sh "$here/run-bench.sh" -W tx "$@" \
				>"$tmp/$mode.$i" 2>&1
		else
			DAPL_OFI_COMPLETION=delivery sh "$here/run-bench.sh" -W dc "$@" \
				>"$tmp/$mode.$i" 2>&1
		fi
		rc=$?
		if [ "$rc" -ne 0 ]; then
			echo "delivery-cost: dat_bench failed (status $rc):" >&2
			cat "$tmp/$mode.$i" >&2
			exit 1
		fi
		grep '^bench: ' "$tmp/$mode.$i" | sed "s/^bench: /$mode /" >>"$tmp/all"
		[ -z "$keep" ] || cp "$tmp/$mode.$i" "$keep/"
	done
	i=$((i + 1))
done
head -n 3 "$tmp/delivery.1" | sed 's/^dat_bench:/delivery-cost:/'

# "mode pattern=P wait=W size=S dat_X=v raw_X=v ratio=r" -> the table
awk '
function median(list,    n, a, i, j, t) {
	n = split(list, a, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
			t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
		}
	return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
	mode = $1
	for (f = 2; f <= NF; f++) {
		split($f, kv, "=")
		v[kv[1]] = kv[2]
		if (kv[1] ~ /^dat_/) { unit = substr(kv[1], 5); dat = kv[2] }
		if (kv[1] ~ /^raw_/) raw = kv[2]
	}
	key = v["pattern"] " " v["wait"] " " v["size"]
	if (!(key in seen)) { seen[key] = 1; order[++nkeys] = key; units[key] = unit }
	d[key, mode] = d[key, mode] " " dat
	r[key, mode] = r[key, mode] " " raw
}
END {
	printf "%-9s %-5s %7s %5s %10s %10s %8s %11s\n", "pattern", "wait", "size", "unit",
	       "DAT tx", "DAT dc", "DAT dc/tx", "raw dc/tx"
	for (k = 1; k <= nkeys; k++) {
		key = order[k]
		dt = median(d[key, "transmit"]); dd = median(d[key, "delivery"])
		rt = median(r[key, "transmit"]); rd = median(r[key, "delivery"])
		split(key, p, " ")
		printf "%-9s %-5s %7s %5s %10.3f %10.3f %8.2f %11.2f\n", p[1], p[2], p[3],
		       units[key], dt, dd, (dt > 0 ? dd / dt : 0), (rt > 0 ? rd / rt : 0)
	}
	print "(us: half round trip, lower is better; gbps: 1e9 B/s, higher is better)"
}' "$tmp/all"
