package namesrv

import (
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/telemetry"
	"github.com/rocketgo/rocketgo/telemetry/telemetrytest"
	"github.com/stretchr/testify/require"
)

// The name server's metrics (ours; Java's has none): off by default; with
// metricsExporterType=PROM, /metrics counts each request by code and
// reads the route table.
func TestNamesrvMetrics(t *testing.T) {
	require.Equal(t, "DISABLE", Default().MetricsExporterType)
	require.Empty(t, startNamesrv(t, testConfig(t)).MetricsAddr())

	cfg := testConfig(t)
	cfg.MetricsExporterType = "PROM"
	cfg.MetricsPromExporterHost = "127.0.0.1"
	cfg.MetricsPromExporterPort = 0
	s := startNamesrv(t, cfg)
	require.NotEmpty(t, s.MetricsAddr())
	c := newClient(t)
	b := &fakeBroker{cluster: "C", name: "broker-a", addr: "127.0.0.1:10911", ha: "127.0.0.1:10912", topics: topics("T1", "T2")}
	require.Equal(t, int32(codec.RespSuccess), b.register(t, c, s.Addr()).Code)
	for range 3 {
		invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo))
	}

	resp, err := http.Get("http://" + s.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	count := func(code string) float64 {
		v, _ := telemetry.Value(text, telemetry.RPCLatencyName+"_count", map[string]string{"request_code": code, "node_type": "namesrv"})
		return v
	}
	require.Equal(t, 1.0, count("register_broker"))
	require.Equal(t, 3.0, count("get_broker_cluster_info"))
	brokers, _ := telemetry.Value(text, "rocketgo_namesrv_brokers", nil)
	require.Equal(t, 1.0, brokers)
	n, _ := telemetry.Value(text, "rocketgo_namesrv_topics", nil)
	require.GreaterOrEqual(t, n, 2.0)
}

// TestNamesrvMetricsOTLPPush: metricsExporterType=OTLP_GRPC pushes the
// name server's series (the common labels, metricsLabel, the headers of
// metricsGrpcExporterHeader) to metricsGrpcExporterTarget every
// metricGrpcExporterIntervalInMills, and serves no /metrics.
func TestNamesrvMetricsOTLPPush(t *testing.T) {
	col, addr := telemetrytest.Start(t)
	cfg := testConfig(t)
	cfg.MetricsExporterType = "OTLP_GRPC"
	cfg.MetricsGrpcExporterTarget = "http://" + addr
	cfg.MetricsGrpcExporterHeader = "x-rocketgo-test:ns,broken"
	cfg.MetricGrpcExporterIntervalInMills = 100 * time.Millisecond
	cfg.MetricsLabel = "env:otlp"
	s := startNamesrv(t, cfg)
	require.Empty(t, s.MetricsAddr(), "OTLP_GRPC serves no /metrics")
	c := newClient(t)
	b := &fakeBroker{cluster: "C", name: "broker-a", addr: "127.0.0.1:10911", ha: "127.0.0.1:10912", topics: topics("T1", "T2")}
	require.Equal(t, int32(codec.RespSuccess), b.register(t, c, s.Addr()).Code)
	for range 3 {
		invoke(t, c, s.Addr(), request(codec.ReqGetBrokerClusterInfo))
	}

	deadline := time.After(20 * time.Second)
	for {
		select {
		case req := <-col.Got:
			calls, ok := telemetrytest.Value(req, telemetry.RPCLatencyName,
				map[string]string{"request_code": "get_broker_cluster_info", "node_type": "namesrv", "env": "otlp"})
			brokers, _ := telemetrytest.Value(req, "rocketgo_namesrv_brokers", nil)
			if ok && calls == 3 && brokers == 1 {
				require.Equal(t, []string{"ns"}, (<-col.MD).Get("x-rocketgo-test"))
				return
			}
		case <-deadline:
			t.Fatal("no export carried 3 get_broker_cluster_info calls and 1 broker")
		}
	}
}
