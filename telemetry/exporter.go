package telemetry

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Node types: Java's LABEL_NODE_TYPE values.
const (
	NodeBroker     = "broker"
	NodeController = "controller"
	NodeNameServer = "namesrv" // ours: Java's name server has no metrics
)

// Exporter is one server's registry and, once Serve runs, its /metrics
// endpoint. Everything registered through Registerer carries the common
// labels Java puts on every series: cluster, node_type, node_id, the
// metricsLabel pairs, aggregation="delta" with metricsInDelta, and
// otel_scope_name (the OpenTelemetry meter's name, which Java's exporter
// adds).
type Exporter struct {
	pprof   bool
	otlp    *pusher // OTLP_GRPC; nil otherwise
	reg     *prometheus.Registry
	wrapped prometheus.Registerer
	srv     *http.Server
	ln      net.Listener
	done    chan struct{}
}

// Node names the server on every series; an empty field adds no label.
type Node struct {
	Type    string // node_type: NodeBroker, NodeNameServer ("" for the controller, as Java)
	Cluster string // cluster
	ID      string // node_id; Java: the broker name (not its id)
	Scope   string // otel_scope_name: "broker-meter", "controller"
	Extra   [][2]string
}

// NewExporter builds a registry with n's and cfg's common labels.
func NewExporter(n Node, cfg Config) (*Exporter, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	extra, _ := ParseLabels(cfg.Label)
	labels := prometheus.Labels{}
	for _, kv := range append(append([][2]string{{"node_type", n.Type}, {"cluster", n.Cluster}, {"node_id", n.ID},
		{"otel_scope_name", n.Scope}}, n.Extra...), extra...) {
		if kv[1] != "" {
			labels[kv[0]] = kv[1]
		}
	}
	if cfg.InDelta {
		labels["aggregation"] = "delta"
	}
	reg := prometheus.NewRegistry()
	wrapped := prometheus.WrapRegistererWith(labels, reg)
	return &Exporter{pprof: cfg.Pprof, reg: reg, wrapped: wrapped}, nil
}

// Registerer registers collectors whose series get the common labels.
func (e *Exporter) Registerer() prometheus.Registerer { return e.wrapped }

// RegisterGoRuntime adds the Go runtime's own series, for tail-latency
// work: scheduling delay (go_sched_latencies_seconds), GC and other
// stop-the-world pauses (go_sched_pauses_*_seconds), the GC's heap
// figures and the classic go_memstats_*.
func (e *Exporter) RegisterGoRuntime() error {
	if err := e.wrapped.Register(collectors.NewGoCollector(
		collectors.WithGoCollectorRuntimeMetrics(collectors.MetricsScheduler, collectors.MetricsGC))); err != nil {
		return fmt.Errorf("metrics: go collector: %w", err)
	}
	return nil
}

// Gatherer is the registry, for tests and handlers.
func (e *Exporter) Gatherer() prometheus.Gatherer { return e.reg }

// Handler serves the registry in the text or protobuf exposition.
func (e *Exporter) Handler() http.Handler {
	return promhttp.HandlerFor(e.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// Start exports the registry as c says: PROM serves /metrics on
// c.Addr(defaultHost), OTLP_GRPC pushes to c.OTLP.Target. Anything else
// starts nothing. Close stops either.
func (e *Exporter) Start(c Config, defaultHost string) error {
	switch {
	case c.Prom():
		return e.Serve(c.Addr(defaultHost))
	case c.PushOTLP():
		return e.StartOTLP(c.OTLP)
	}
	return nil
}

// Serve listens on addr and serves /metrics until Close. It returns once
// the listener is bound.
func (e *Exporter) Serve(addr string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("metrics: listen %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", e.Handler())
	if e.pprof {
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	e.ln, e.done = ln, make(chan struct{})
	e.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	go func() {
		defer close(e.done)
		_ = e.srv.Serve(ln)
	}()
	return nil
}

// Addr is the bound endpoint address, "" before Serve.
func (e *Exporter) Addr() string {
	if e == nil || e.ln == nil {
		return ""
	}
	return e.ln.Addr().String()
}

// Close stops the endpoint (in-flight scrapes get a second to finish).
func (e *Exporter) Close() error {
	if e == nil {
		return nil
	}
	if err := e.otlp.close(); err != nil {
		return fmt.Errorf("metrics: OTLP shutdown: %w", err)
	}
	if e.srv == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = e.srv.Close()
	}
	<-e.done
	return err
}
