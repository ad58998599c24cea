// Package metrics is the broker's part of its Prometheus series: Java
// RocketMQ 5's broker buckets (BrokerMetricsConstant,
// DefaultStoreMetricsConstant), the allocation-free IntHistogram the
// broker's per-topic statistics entries embed, the send path's per-stage
// latency breakdown, and Java's version and language label values. The
// exporter itself (config keys, registry, /metrics endpoint, OTLP push,
// the request-latency observer) is package telemetry, shared with the
// name server and the controller.
//
// The hot path touches no label machinery: per-message counters are
// atomics in the broker's per-topic statistics entries, created once per
// key, read by a collector at scrape time.
//
// # Names
//
// Java's OpenTelemetry Prometheus exporter (1.29.0-alpha) appends the
// instrument's unit to its series: rocketmq_rpc_latency is served as
// rocketmq_rpc_latency_milliseconds_bucket, rocketmq_storage_size as
// rocketmq_storage_size_bytes. We serve the same series names; our
// # TYPE lines name the family the series have (Java's name the
// instrument without the unit). testdata/java-5.3.3.prom is a real
// scrape (testdata/record-java.sh re-records it); the broker's
// TestJavaGoldenNames diffs our shape against it, and
// compat/UNSUPPORTED.md lists every difference.
//
// Ours, not in Java, start with rocketgo_: replication lag per slave in
// bytes and its in-sync flag, the commit log's fsync latency, held pulls,
// remoting connections and buffered bytes, send stages.
package metrics
