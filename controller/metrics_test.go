package controller

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/telemetry"
	"github.com/rocketgo/rocketgo/telemetry/telemetrytest"
)

// The controller's metrics: Java's ControllerMetricsManager names and
// labels (role, active_broker_num, request_total, request_latency in
// microseconds) plus the remoting histogram, with metricsExporterType=PROM.
func TestControllerMetrics(t *testing.T) {
	require.Equal(t, "DISABLE", Default().MetricsExporterType)
	require.Equal(t, telemetry.DefaultPromPort, Default().MetricsPromExporterPort)
	g := startGroup(t, 1, func(c *Config) {
		c.MetricsExporterType = "PROM"
		c.MetricsPromExporterHost = "127.0.0.1"
		c.MetricsPromExporterPort = 0
	})
	addr := g.nodes[g.leader()].Addr()
	g.registerAs(addr, "C", "broker-a", "127.0.0.1:10911")
	require.Equal(t, int32(codec.RespSuccess), g.heartbeat(addr, "C", "broker-a", "127.0.0.1:10911", 1, 0, 0, 10_000).Code)

	resp, err := http.Get("http://" + g.nodes[0].MetricsAddr() + "/metrics")
	require.NoError(t, err)
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	val := func(name string, match map[string]string) float64 {
		v, ok := telemetry.Value(text, name, match)
		require.True(t, ok, "%s %v in\n%s", name, match, text)
		return v
	}
	require.Equal(t, 3.0, val("role", map[string]string{"group": "g1", "peer_id": "n0", "otel_scope_name": "controller"}))
	require.Equal(t, 1.0, val("active_broker_num", map[string]string{"cluster": "C", "broker_set": "broker-a"}))
	require.Equal(t, 1.0, val("request_total", map[string]string{"request_type": "CONTROLLER_REGISTER_BROKER", "request_handle_status": "success"}))
	require.Equal(t, 1.0, val("request_total", map[string]string{"request_type": "CONTROLLER_BROKER_HEARTBEAT", "request_handle_status": "success"}))
	require.Equal(t, 1.0, val("request_latency_microseconds_count", map[string]string{"request_type": "CONTROLLER_APPLY_BROKER_ID"}))
	require.Equal(t, 1.0, val(telemetry.RPCLatencyName+"_count", map[string]string{"request_code": "controller_get_next_broker_id"}))
}

// TestControllerJavaGolden diffs our series against the Java 5.3.3
// controller's scrape (testdata/java-5.3.3.prom): every difference must be
// named in compat/UNSUPPORTED.md's "Controller metrics" row.
func TestControllerJavaGolden(t *testing.T) {
	golden, err := os.ReadFile("testdata/java-5.3.3.prom")
	require.NoError(t, err)
	java, err := telemetry.Shape(golden)
	require.NoError(t, err)
	ledger, err := os.ReadFile("../compat/UNSUPPORTED.md")
	require.NoError(t, err)
	var row string
	for _, l := range strings.Split(string(ledger), "\n") {
		if strings.HasPrefix(l, "| Controller metrics |") {
			row = l
		}
	}
	require.NotEmpty(t, row)

	g := startGroup(t, 1, func(c *Config) {
		c.MetricsExporterType = "PROM"
		c.MetricsPromExporterHost = "127.0.0.1"
		c.MetricsPromExporterPort = 0
	})
	addr := g.nodes[g.leader()].Addr()
	g.registerAs(addr, "C", "broker-a", "127.0.0.1:10911")
	resp, err := http.Get("http://" + g.nodes[0].MetricsAddr() + "/metrics")
	require.NoError(t, err)
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	ours, err := telemetry.Shape(text)
	require.NoError(t, err)

	var diffs []string
	listed := func(name string) bool { return strings.Contains(row, "`"+name+"`") }
	for name, js := range java {
		if o, ok := ours[name]; (!ok || o.String() != js.String()) && !listed(name) {
			diffs = append(diffs, name+": Java "+js.String()+", ours "+o.String())
		}
	}
	for name, o := range ours {
		if _, ok := java[name]; !ok && !listed(name) {
			diffs = append(diffs, name+": ours only "+o.String())
		}
	}
	require.Empty(t, diffs)
	require.Equal(t, java["role"], ours["role"])
}

// TestControllerMetricsOTLPPush: metricsExporterType=OTLP_GRPC (Java's
// ControllerConfig keys) pushes Java's controller series with the common
// labels and the metricsGrpcExporterHeader headers, and serves no
// /metrics.
func TestControllerMetricsOTLPPush(t *testing.T) {
	require.Equal(t, telemetry.DefaultOTLPInterval, Default().MetricGrpcExporterIntervalInMills)
	col, target := telemetrytest.Start(t)
	g := startGroup(t, 1, func(c *Config) {
		c.MetricsExporterType = "OTLP_GRPC"
		c.MetricsGrpcExporterTarget = "http://" + target
		c.MetricsGrpcExporterHeader = "x-rocketgo-test:ctrl"
		c.MetricGrpcExporterIntervalInMills = 100 * time.Millisecond
	})
	require.Empty(t, g.nodes[0].MetricsAddr(), "OTLP_GRPC serves no /metrics")
	addr := g.nodes[g.leader()].Addr()
	g.registerAs(addr, "C", "broker-a", "127.0.0.1:10911")

	deadline := time.After(20 * time.Second)
	for {
		select {
		case req := <-col.Got:
			role, _ := telemetrytest.Value(req, "role", map[string]string{"group": "g1", "peer_id": "n0", "otel_scope_name": "controller"})
			reg, ok := telemetrytest.Value(req, "request_total",
				map[string]string{"request_type": "CONTROLLER_REGISTER_BROKER", "request_handle_status": "success"})
			if ok && reg == 1 && role == 3 {
				require.Equal(t, []string{"ctrl"}, (<-col.MD).Get("x-rocketgo-test"))
				return
			}
		case <-deadline:
			t.Fatal("no export carried role=3 and one CONTROLLER_REGISTER_BROKER")
		}
	}
}
