package broker

import (
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/telemetry/telemetrytest"
	"github.com/stretchr/testify/require"
)

// TestMetricsOTLPPush: metricsExporterType=OTLP_GRPC pushes the broker's
// series (Java's names, the common labels, the request headers of
// metricsGrpcExporterHeader) to metricsGrpcExporterTarget every
// metricGrpcExporterIntervalInMills.
func TestMetricsOTLPPush(t *testing.T) {
	col, addr := telemetrytest.Start(t)
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
		case req := <-col.Got:
			if v, ok := telemetrytest.Value(req, "rocketmq_messages_in_total", map[string]string{"topic": "OtlpTopic", "env": "otlp", "node_type": "broker"}); ok && v == 7 {
				md := <-col.MD
				require.Equal(t, []string{"yes"}, md.Get("x-rocketgo-test"))
				return
			}
		case <-deadline:
			t.Fatal("no export carried rocketmq_messages_in_total{topic=OtlpTopic} = 7")
		}
	}
}
