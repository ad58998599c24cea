package telemetry

import (
	"context"
	"fmt"
	"strings"
	"time"

	promBridge "go.opentelemetry.io/contrib/bridges/prometheus"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// OTLP keys' defaults: Java's metricGrpcExporterTimeOutInMills and
// metricGrpcExporterIntervalInMills.
const (
	DefaultOTLPTimeout  = 3 * time.Second
	DefaultOTLPInterval = time.Minute
)

// OTLPConfig is Java's OTLP_GRPC part of the metrics keys:
// metricsGrpcExporterTarget, metricsGrpcExporterHeader ("k:v,k:v"),
// metricGrpcExporterTimeOutInMills, metricGrpcExporterIntervalInMills.
type OTLPConfig struct {
	Target   string
	Header   string
	Timeout  time.Duration
	Interval time.Duration
}

// endpointURL is Target as Java uses it: without a scheme it is https.
func (c OTLPConfig) endpointURL() string {
	if strings.HasPrefix(c.Target, "http") {
		return c.Target
	}
	return "https://" + c.Target
}

// headers parses Header as Java does: pairs split on ',' (empty ones
// skipped), each on ':'; a pair that is not exactly k:v is skipped.
func (c OTLPConfig) headers() map[string]string {
	var h map[string]string
	for _, kv := range strings.Split(c.Header, ",") {
		parts := strings.Split(kv, ":")
		if kv == "" || len(parts) != 2 {
			continue
		}
		if h == nil {
			h = map[string]string{}
		}
		h[parts[0]] = parts[1]
	}
	return h
}

// pusher is a running OTLP/gRPC export of the registry.
type pusher struct {
	provider *sdkmetric.MeterProvider
}

// StartOTLP pushes everything the exporter's registry holds to c.Target
// every c.Interval over OTLP/gRPC (the series as /metrics serves them,
// bridged from the registry at each export), until Close. It does not
// wait for the collector: an unreachable one costs failed exports only.
func (e *Exporter) StartOTLP(c OTLPConfig) error {
	if c.Target == "" {
		return fmt.Errorf("metrics: OTLP_GRPC needs metricsGrpcExporterTarget")
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultOTLPTimeout
	}
	if c.Interval <= 0 {
		c.Interval = DefaultOTLPInterval
	}
	opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpointURL(c.endpointURL()), otlpmetricgrpc.WithTimeout(c.Timeout)}
	if h := c.headers(); h != nil {
		opts = append(opts, otlpmetricgrpc.WithHeaders(h))
	}
	exp, err := otlpmetricgrpc.New(context.Background(), opts...)
	if err != nil {
		return fmt.Errorf("metrics: OTLP exporter for %s: %w", c.Target, err)
	}
	reader := sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(c.Interval),
		sdkmetric.WithProducer(promBridge.NewMetricProducer(promBridge.WithGatherer(e.reg))))
	e.otlp = &pusher{provider: sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))}
	return nil
}

// close flushes a last export and stops.
func (p *pusher) close() error {
	if p == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	return p.provider.Shutdown(ctx)
}
