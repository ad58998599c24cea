#!/usr/bin/env bash
# Re-records java-5.3.3.prom: a /metrics scrape of the Apache RocketMQ 5.3.3
# controller (ControllerStartup, metricsExporterType=PROM), idle but
# leader of a one-node DLedger group. Only the shape matters.
#
#   controller/testdata/record-java.sh        (from the module root)
#
# Needs the jars conformance/scripts/javaserver.sh fetches. Ports on
# 127.0.0.1 only: CTRL_PORT (29878), PROM_PORT (29558).
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
out="$root/controller/testdata/java-5.3.3.prom"
lib="$root/conformance/.cache/java-server/lib"
ctrl_port="${CTRL_PORT:-29878}" prom_port="${PROM_PORT:-29558}"
"$root/conformance/scripts/javaserver.sh" fetch
dir="$(mktemp -d)"
pid=
trap 'if [ -n "$pid" ]; then kill -TERM -- "-$pid" 2>/dev/null || kill "$pid" || true; fi; rm -rf "$dir"' EXIT
cat >"$dir/controller.conf" <<CONF
controllerDLegerGroup=group1
controllerDLegerPeers=n0-127.0.0.1:$ctrl_port
controllerDLegerSelfId=n0
controllerStorePath=$dir/store
metricsExporterType=PROM
metricsPromExporterHost=127.0.0.1
metricsPromExporterPort=$prom_port
CONF
mkdir -p "$dir/home"
ROCKETMQ_HOME="$dir/home" setsid java -Xms128m -Xmx256m -Duser.home="$dir" -Drocketmq.home.dir="$dir/home" \
	-cp "$lib/*" org.apache.rocketmq.controller.ControllerStartup -c "$dir/controller.conf" >"$dir/out.log" 2>&1 </dev/null &
pid=$!
for _ in $(seq 1 60); do
	if curl -fsS "http://127.0.0.1:$prom_port/metrics" -o "$out.tmp" 2>/dev/null && grep -q '^role' "$out.tmp"; then
		break
	fi
	sleep 1
done
sleep 5 # leadership settles
curl -fsS "http://127.0.0.1:$prom_port/metrics" >"$out.tmp"
mv "$out.tmp" "$out"
echo "wrote $out ($(grep -c '^# TYPE' "$out") families)"
