// Package telemetrytest is a fake OpenTelemetry collector for the servers'
// OTLP_GRPC tests: an OTLP/gRPC metrics receiver on loopback and a reader
// of one series' value from an export.
package telemetrytest

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	commonv1 "go.opentelemetry.io/proto/otlp/common/v1"
	metricsv1 "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// Collector is an OTLP/gRPC metrics receiver. Got carries the exports (up
// to 64 buffered; later ones are dropped until the test reads), MD the
// request metadata of the first unread export.
type Collector struct {
	colmetrics.UnimplementedMetricsServiceServer
	Got chan *colmetrics.ExportMetricsServiceRequest
	MD  chan metadata.MD
}

// Export takes one push.
func (f *Collector) Export(ctx context.Context, req *colmetrics.ExportMetricsServiceRequest) (*colmetrics.ExportMetricsServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	select {
	case f.Got <- req:
	default:
	}
	select {
	case f.MD <- md:
	default:
	}
	return &colmetrics.ExportMetricsServiceResponse{}, nil
}

// Start runs a collector on 127.0.0.1 until the test ends and returns it
// with its address.
func Start(t testing.TB) (*Collector, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &Collector{Got: make(chan *colmetrics.ExportMetricsServiceRequest, 64), MD: make(chan metadata.MD, 1)}
	srv := grpc.NewServer()
	colmetrics.RegisterMetricsServiceServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f, ln.Addr().String()
}

// Value is the value of metric name's first sum or gauge data point (a
// histogram's count) whose attributes include want.
func Value(req *colmetrics.ExportMetricsServiceRequest, name string, want map[string]string) (float64, bool) {
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() != name {
					continue
				}
				if v, ok := points(m, want); ok {
					return v, true
				}
			}
		}
	}
	return 0, false
}

type numberPoint interface {
	GetAttributes() []*commonv1.KeyValue
	GetAsDouble() float64
	GetAsInt() int64
}

func points(m *metricsv1.Metric, want map[string]string) (float64, bool) {
	var nums []numberPoint
	switch {
	case m.GetSum() != nil:
		for _, dp := range m.GetSum().GetDataPoints() {
			nums = append(nums, dp)
		}
	case m.GetGauge() != nil:
		for _, dp := range m.GetGauge().GetDataPoints() {
			nums = append(nums, dp)
		}
	case m.GetHistogram() != nil:
		for _, dp := range m.GetHistogram().GetDataPoints() {
			if match(dp.GetAttributes(), want) {
				return float64(dp.GetCount()), true
			}
		}
	}
	for _, dp := range nums {
		if !match(dp.GetAttributes(), want) {
			continue
		}
		if dp.GetAsDouble() != 0 {
			return dp.GetAsDouble(), true
		}
		return float64(dp.GetAsInt()), true
	}
	return 0, false
}

func match(attrs []*commonv1.KeyValue, want map[string]string) bool {
	got := make(map[string]string, len(attrs))
	for _, kv := range attrs {
		got[kv.GetKey()] = kv.GetValue().GetStringValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}
