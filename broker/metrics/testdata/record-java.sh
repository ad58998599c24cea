#!/usr/bin/env bash
# Re-records java-5.3.3.prom: a /metrics scrape of the Apache RocketMQ 5.3.3
# broker (metricsExporterType=PROM) after a little traffic, the golden file
# TestJavaGoldenNames diffs our names, types, labels and buckets against.
# Values in it mean nothing; only the shape is compared.
#
#   broker/metrics/testdata/record-java.sh        (from the module root)
#   ROCKETMQ_SERVER_VERSION=5.4.0 broker/metrics/testdata/record-java.sh
#                                                 (java-5.4.0.prom, the second reference;
#                                                 jars of make -C conformance java-server-5.4)
#
# Needs the jars conformance/scripts/javaserver.sh fetches. Ports on
# 127.0.0.1 only: NS_PORT (29876), BROKER_PORT (29911, HA +1, VIP -2),
# PROM_PORT (29557).
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
version="${ROCKETMQ_SERVER_VERSION:-5.3.3}"
export ROCKETMQ_SERVER_VERSION="$version"
out="$root/broker/metrics/testdata/java-$version.prom"
ns_port="${NS_PORT:-29876}" broker_port="${BROKER_PORT:-29911}" prom_port="${PROM_PORT:-29557}"
dir="$(mktemp -d)"
js="$root/conformance/scripts/javaserver.sh"
trap '"$js" stop "$dir"; if [ -z "${KEEP:-}" ]; then rm -rf "$dir"; else echo "kept $dir" >&2; fi' EXIT

wait_port() { # PORT SECONDS
	for _ in $(seq 1 "$2"); do
		if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
		sleep 1
	done
	echo "port $1 not up after $2 s" >&2; return 1
}

"$js" start-namesrv "$ns_port" "$dir/ns"
wait_port "$ns_port" 60
BROKER_EXTRA_CONF=$'metricsExporterType=PROM\nmetricsPromExporterHost=127.0.0.1\nmetricsPromExporterPort='"$prom_port" \
	"$js" start-broker "127.0.0.1:$ns_port" "$broker_port" "$dir/broker"
wait_port "$broker_port" 90
wait_port "$prom_port" 30
sleep 5 # first registration with the name server

cd "$root"
go build -o "$dir/mqbench" ./cmd/mqbench
"$dir/mqbench" produce -n "127.0.0.1:$ns_port" -t MetricsTopic -create -duration 5s -quiet
"$dir/mqbench" produce -n "127.0.0.1:$ns_port" -t MetricsTopic -mode sync -threads 1 -duration 2s -quiet
"$dir/mqbench" consume -n "127.0.0.1:$ns_port" -t MetricsTopic -from first -duration 12s -quiet &
bench=$!
sleep 8 # consumer connected and lagging or caught up; the exporter reads gauges on scrape
curl -fsS "http://127.0.0.1:$prom_port/metrics" >"$out.tmp"
wait "$bench" || true
mv "$out.tmp" "$out"
echo "wrote $out ($(grep -c '^# TYPE' "$out") families)"
