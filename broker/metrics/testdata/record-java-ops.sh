#!/usr/bin/env bash
# Re-records java-5.3.3-ops.prom: a /metrics scrape of the Apache RocketMQ
# 5.3.3 broker after POP, timer, transaction and DLQ traffic, the golden
# the POP / timer / transaction metric tests (broker/metrics_ops_test.go
# requireJavaOpsShapes) and TestJavaGoldenNames check our shapes against.
# The traffic is the official Java gRPC SDK's scenarios (delay, transaction,
# check-back, push retry to the DLQ, redelivery, ack, change invisible)
# through Apache's proxy 5.3.3 in front of the Java broker, run by the
# conformance suite (TestGRPC, kind java) with CONFORMANCE_GRPC_METRICS_OUT.
# Values mean nothing; only the shape is compared.
#
#   broker/metrics/testdata/record-java-ops.sh        (from the module root)
#
# Needs the jars `make -C conformance java-server` fetches (server and proxy)
# and bin/ built (make build). Servers on 127.0.0.1 only.
set -euo pipefail
root="$(cd "$(dirname "$0")/../../.." && pwd)"
out="$root/broker/metrics/testdata/java-5.3.3-ops.prom"
cd "$root/conformance"
CONFORMANCE_GRPC_SERVERS=java \
	CONFORMANCE_GRPC_SCENARIOS=send_delay,send_transaction,transaction_check,push_retry_dlq,simple_redeliver,simple_ack,simple_change_invisible \
	CONFORMANCE_GRPC_METRICS_OUT="$out.tmp" CONFORMANCE_READY_TIMEOUT="${CONFORMANCE_READY_TIMEOUT:-6m}" \
	go test -count=1 -run 'TestGRPC$' .
mv "$out.tmp" "$out"
echo "wrote $out ($(grep -c '^# TYPE' "$out") families)"
