package telemetry

import (
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
)

// Exporter types: Java's MetricsExporterType. DISABLE, PROM and OTLP_GRPC
// work here; LOG is accepted and logged as not supported
// (compat/UNSUPPORTED.md).
const (
	ExporterDisable  = "DISABLE"
	ExporterOTLPGRPC = "OTLP_GRPC"
	ExporterProm     = "PROM"
	ExporterLog      = "LOG"
)

// DefaultPromPort is Java's metricsPromExporterPort default.
const DefaultPromPort = 5557

// Config is the exporter's part of a server's config: Java's BrokerConfig
// (and ControllerConfig) keys metricsExporterType, metricsPromExporterHost,
// metricsPromExporterPort, metricsLabel and metricsInDelta.
type Config struct {
	ExporterType string // DISABLE | PROM | OTLP_GRPC | LOG
	PromHost     string // "" → the server's advertised IP (brokerIP1)
	PromPort     int
	Label        string // "k:v,k:v": constant labels on every series
	InDelta      bool   // adds aggregation="delta" (Java's delta temporality; our counters stay cumulative)
	Pprof        bool   // ours: also serve Go's /debug/pprof/ handlers
	OTLP         OTLPConfig
}

// Validate checks the exporter type and the label list.
func (c Config) Validate() error {
	switch strings.ToUpper(c.ExporterType) {
	case "", ExporterDisable, ExporterProm, ExporterOTLPGRPC, ExporterLog:
	default:
		return fmt.Errorf("metrics: metricsExporterType %q: want DISABLE, PROM, OTLP_GRPC or LOG", c.ExporterType)
	}
	if c.PromPort < 0 || c.PromPort > 65535 {
		return fmt.Errorf("metrics: metricsPromExporterPort %d", c.PromPort)
	}
	_, err := ParseLabels(c.Label)
	return err
}

// Prom reports whether the Prometheus endpoint is on.
func (c Config) Prom() bool { return strings.EqualFold(c.ExporterType, ExporterProm) }

// PushOTLP reports whether metrics are pushed over OTLP/gRPC: Java's
// OTLP_GRPC, which (like Java's checkConfig) needs a target.
func (c Config) PushOTLP() bool {
	return strings.EqualFold(c.ExporterType, ExporterOTLPGRPC) && c.OTLP.Target != ""
}

// Enabled reports whether c exports anything: PROM, or OTLP_GRPC with a
// target.
func (c Config) Enabled() bool { return c.Prom() || c.PushOTLP() }

// LogOff logs, when c names an exporter but exports nothing, why: LOG is
// not supported here, OTLP_GRPC needs metricsGrpcExporterTarget.
func (c Config) LogOff(log *slog.Logger) {
	if c.Enabled() {
		return
	}
	switch strings.ToUpper(c.ExporterType) {
	case ExporterLog:
		log.Warn("metricsExporterType not supported, metrics off", "metricsExporterType", c.ExporterType)
	case ExporterOTLPGRPC:
		log.Error("metricsExporterType OTLP_GRPC without metricsGrpcExporterTarget, metrics off")
	}
}

// Addr is the endpoint's listen address; defaultHost stands in for a blank
// host (Java: brokerIP1).
func (c Config) Addr(defaultHost string) string {
	host := c.PromHost
	if host == "" {
		host = defaultHost
	}
	return net.JoinHostPort(host, strconv.Itoa(c.PromPort))
}

// ParseLabels parses metricsLabel, "k:v,k:v" (Java splits on ',' then ':'
// and skips nothing: a pair without ':' is an error here, where Java
// would throw at startup).
func ParseLabels(s string) ([][2]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out [][2]string
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, ":")
		if !ok || k == "" {
			return nil, fmt.Errorf("metrics: metricsLabel %q: want k:v,k:v", s)
		}
		out = append(out, [2]string{k, v})
	}
	return out, nil
}
