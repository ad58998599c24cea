// Package metrics is the Prometheus side of rocketgo's servers: Java
// RocketMQ 5's metric names, labels and histogram buckets
// (BrokerMetricsConstant, RemotingMetricsConstant,
// DefaultStoreMetricsConstant), the metricsExporterType keys, the
// /metrics endpoint, and the request-latency observer every server hangs
// on its transport router. It imports codec and codec/transport only; the
// broker, name server and controller each add a collector of their own
// tables.
//
// # Library
//
// github.com/prometheus/client_golang. Its Collector interface reads our
// existing counters (the broker's statistics windows, pool queues, the
// store's offsets) at scrape time, so most metrics cost nothing between
// scrapes, and it writes the text and protobuf expositions Prometheus and
// Grafana negotiate. VictoriaMetrics/metrics is smaller, but registers by
// a formatted name string per label set and has no scrape-time collector
// for tables that change (topics, groups) without that string building.
// The hot path touches neither library's label machinery: per-message
// counters are atomics in the broker's per-topic statistics entries,
// created once per key, and the request-latency observer resolves its
// (request code, response code) child histogram once and keeps it in a
// copy-on-write map, so an observation is a map read and a few atomic
// adds (see TestObserverAllocs: 0 allocations).
//
// # Names
//
// Java's OpenTelemetry Prometheus exporter (1.29.0-alpha) appends the
// instrument's unit to its series: rocketmq_rpc_latency is served as
// rocketmq_rpc_latency_milliseconds_bucket, rocketmq_storage_size as
// rocketmq_storage_size_bytes. We serve the same series names; our
// # TYPE lines name the family the series have (Java's name the
// instrument without the unit). testdata/java-5.3.3.prom is a real
// scrape (testdata/record-java.sh re-records it); TestJavaGoldenNames
// diffs our shape against it, and compat/UNSUPPORTED.md lists every
// difference.
//
// Ours, not in Java, start with rocketgo_: replication lag per slave in
// bytes and its in-sync flag, the commit log's fsync latency, held pulls,
// remoting connections and buffered bytes.
//
// # OTLP
//
// metricsExporterType=OTLP_GRPC (Java's metricsGrpcExporterTarget and
// friends) pushes the same registry through the OpenTelemetry SDK's
// periodic reader and OTLP/gRPC exporter, with the Prometheus bridge
// (go.opentelemetry.io/contrib/bridges/prometheus) as its producer: one
// set of instruments, two ways out.
//
// The controller (Java's ControllerMetricsManager names: role,
// active_broker_num, request_total, request_latency_microseconds) and the
// name server (ours; Java's has no metrics) build their exporters from
// this package too.
package metrics
