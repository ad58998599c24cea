#!/usr/bin/env bash
# Metrics cost on the send path: BenchmarkMetricsCost (broker/metrics_cost_test.go),
# metrics off / on / on with a scrape every second, COUNT rounds of the three
# (so they alternate) of BENCHTIME each; then each side's median msg/s, the
# ratios to off, and the allocations per message.
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
for ((i = 1; i <= count; i++)); do
	go test ./broker/ -run '^$' -bench 'BenchmarkMetricsCost$' -benchtime "$benchtime" | grep '^BenchmarkMetricsCost/' | tee -a "$out"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk '
/^BenchmarkMetricsCost\/metrics=/ {
	side = $1; sub(/^BenchmarkMetricsCost\/metrics=/, "", side); sub(/-[0-9]+$/, "", side)
	for (i = 2; i <= NF; i++) {
		if ($(i) == "msg/s") tps[side, ++n[side]] = $(i - 1)
		if ($(i) == "allocs/op") allocs[side] = allocs[side] " " $(i - 1)
	}
}
function median(side,   i, j, t, a, k) {
	k = n[side]
	for (i = 1; i <= k; i++) a[i] = tps[side, i]
	for (i = 1; i <= k; i++) for (j = i + 1; j <= k; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
	return (k % 2) ? a[(k + 1) / 2] : (a[k / 2] + a[k / 2 + 1]) / 2
}
END {
	if (!n["off"] || !n["on"]) { print "no results"; exit 1 }
	off = median("off")
	printf "median msg/s (%d rounds): off %.0f, on %.0f (%.3f of off), on+scrape %.0f (%.3f of off)\n", n["off"], off, median("on"), median("on") / off, median("on+scrape"), median("on+scrape") / off
	printf "allocs per message by round: off%s; on%s; on+scrape%s\n", allocs["off"], allocs["on"], allocs["on+scrape"]
}' "$out"
