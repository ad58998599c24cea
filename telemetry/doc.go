// Package telemetry is the exporter every rocketgo server shares: Java's
// metricsExporterType keys (PROM with metricsPromExporterHost/Port,
// OTLP_GRPC with metricsGrpcExporterTarget and friends), a Prometheus
// registry whose series carry the common labels Java puts on every series
// (cluster, node_type, node_id, metricsLabel, aggregation, otel_scope_name),
// the /metrics endpoint, the OTLP/gRPC push of that same registry, and
// rocketmq_rpc_latency, the request-latency observer each server hangs on
// its transport router. It imports codec and codec/transport only, so the
// broker, the name server and the controller all build on it without
// importing each other; what only the broker serves (message sizes, send
// stages, version labels) is in broker/metrics.
//
//	server config ──Config──▶ NewExporter ──▶ Registry (+ common labels)
//	                                             │
//	              collectors, RPC observer ──────┤
//	                                             ├─ PROM:      Serve → GET /metrics
//	                                             └─ OTLP_GRPC: StartOTLP → periodic push
//
// # Library
//
// github.com/prometheus/client_golang. Its Collector interface reads the
// servers' existing counters at scrape time, so most metrics cost nothing
// between scrapes, and it writes the text and protobuf expositions
// Prometheus and Grafana negotiate. VictoriaMetrics/metrics is smaller,
// but registers by a formatted name string per label set and has no
// scrape-time collector for tables that change (topics, groups) without
// that string building. The request-latency observer resolves its
// (request code, response code) child histogram once and keeps it in a
// copy-on-write map, so an observation is a map read and a few atomic
// adds (TestObserverAllocs: 0 allocations).
//
// # OTLP
//
// metricsExporterType=OTLP_GRPC pushes the registry through the
// OpenTelemetry SDK's periodic reader and OTLP/gRPC exporter, with the
// Prometheus bridge (go.opentelemetry.io/contrib/bridges/prometheus) as
// its producer: one set of instruments, two ways out. Start picks the
// way from the config, for all three servers alike.
//
// # Shapes
//
// Shape and Value read a text exposition back (series names, label names,
// buckets; one series' value): the golden comparisons with Java's scrapes
// and the servers' tests use them.
package telemetry
