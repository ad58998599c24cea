#!/usr/bin/env bash
# Metrics cost on the send path: BenchmarkMetricsCost (broker/metrics_cost_test.go)
# with metrics off and on, alternating, COUNT pairs of BENCHTIME each, then
# the median msg/s of each side, their ratio and the allocations per message.
#
#   scripts/bench-metrics.sh                 (COUNT=5 BENCHTIME=20000x)
#
# Run it on a quiet machine: the ratio is load-sensitive, allocations are not.
set -euo pipefail
cd "$(dirname "$0")/.."
count="${COUNT:-5}" benchtime="${BENCHTIME:-20000x}"
out="$(mktemp)"
trap 'rm -f "$out"' EXIT
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
go test ./broker/ -run '^$' -bench 'BenchmarkMetricsCost$' -count "$count" -benchtime "$benchtime" | tee "$out"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
/^BenchmarkMetricsCost\/metrics=/ {
	side = ($1 ~ /metrics=on/) ? "on" : "off"
	for (i = 2; i <= NF; i++) {
		if ($(i) == "msg/s") tps[side, ++n[side]] = $(i - 1)
		if ($(i) == "allocs/op") allocs[side] = $(i - 1)
	}
}
function median(side,   i, j, t, a, k) {
	k = n[side]
	for (i = 1; i <= k; i++) a[i] = tps[side, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	if (!n["on"] || !n["off"]) { print "no results"; exit 1 }
	off = median("off"); on = median("on")
	printf "median msg/s: off %.0f, on %.0f (%d pairs); on/off %.3f\n", off, on, n["on"], on / off
	printf "allocs per message: off %s, on %s\n", allocs["off"], allocs["on"]
}' "$out"
