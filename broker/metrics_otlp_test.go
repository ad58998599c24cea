package broker

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	colmetrics "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// fakeCollector is an OTLP/gRPC metrics receiver on loopback.
type fakeCollector struct {
	colmetrics.UnimplementedMetricsServiceServer
	got chan *colmetrics.ExportMetricsServiceRequest
	md  chan metadata.MD
}

func (f *fakeCollector) Export(ctx context.Context, req *colmetrics.ExportMetricsServiceRequest) (*colmetrics.ExportMetricsServiceResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	select {
	case f.got <- req:
	default: // the test reads what it needs; later exports are dropped
	}
	select {
	case f.md <- md:
	default:
	}
	return &colmetrics.ExportMetricsServiceResponse{}, nil
}

func startFakeCollector(t *testing.T) (*fakeCollector, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	f := &fakeCollector{got: make(chan *colmetrics.ExportMetricsServiceRequest, 64), md: make(chan metadata.MD, 1)}
	srv := grpc.NewServer()
	colmetrics.RegisterMetricsServiceServer(srv, f)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(srv.Stop)
	return f, ln.Addr().String()
}

// TestMetricsOTLPPush: metricsExporterType=OTLP_GRPC pushes the broker's
// series (Java's names, the common labels, the request headers of
// metricsGrpcExporterHeader) to metricsGrpcExporterTarget every
// metricGrpcExporterIntervalInMills.
func TestMetricsOTLPPush(t *testing.T) {
	col, addr := startFakeCollector(t)
	tb := startBroker(t, func(c *Config) {
		c.MetricsExporterType = "OTLP_GRPC"
		c.MetricsGrpcExporterTarget = "http://" + addr
		c.MetricsGrpcExporterHeader = "x-rocketgo-test:yes,broken"
		c.MetricGrpcExporterIntervalInMills = 100
		c.MetricsLabel = "env:otlp"
	})
	require.Empty(t, tb.MetricsAddr(), "OTLP_GRPC serves no /metrics")
	metricsSend(t, tb, "OtlpTopic", 7, "")

	deadline := time.After(20 * time.Second)
	for {
		select {
		case req := <-col.got:
			if v, ok := otlpSum(req, "rocketmq_messages_in_total", map[string]string{"topic": "OtlpTopic", "env": "otlp", "node_type": "broker"}); ok && v == 7 {
				md := <-col.md
				require.Equal(t, []string{"yes"}, md.Get("x-rocketgo-test"))
				return
			}
		case <-deadline:
			t.Fatal("no export carried rocketmq_messages_in_total{topic=OtlpTopic} = 7")
		}
	}
}

// otlpSum is the value of the sum data point of metric name whose
// attributes include want.
func otlpSum(req *colmetrics.ExportMetricsServiceRequest, name string, want map[string]string) (float64, bool) {
	for _, rm := range req.GetResourceMetrics() {
		for _, sm := range rm.GetScopeMetrics() {
			for _, m := range sm.GetMetrics() {
				if m.GetName() != name || m.GetSum() == nil {
					continue
				}
			points:
				for _, dp := range m.GetSum().GetDataPoints() {
					attrs := map[string]string{}
					for _, kv := range dp.GetAttributes() {
						attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
					}
					for k, v := range want {
						if attrs[k] != v {
							continue points
						}
					}
					if dp.GetAsDouble() != 0 {
						return dp.GetAsDouble(), true
					}
					return float64(dp.GetAsInt()), true
				}
			}
		}
	}
	return 0, false
}
