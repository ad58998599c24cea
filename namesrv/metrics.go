package namesrv

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rocketgo/rocketgo/telemetry"
)

// DefaultMetricsPromPort is the name server's metricsPromExporterPort
// default (ours: Java's name server has no metrics; one above the
// broker's and controller's 5557 so they can share a host).
const DefaultMetricsPromPort = 5558

// metricsConfig is the exporter's part of c: the broker's keys, which
// Java's name server does not have (ours, off by default).
func (c *Config) metricsConfig() telemetry.Config {
	return telemetry.Config{
		ExporterType: c.MetricsExporterType, PromHost: c.MetricsPromExporterHost, PromPort: c.MetricsPromExporterPort,
		Label: c.MetricsLabel, InDelta: c.MetricsInDelta,
		OTLP: telemetry.OTLPConfig{Target: c.MetricsGrpcExporterTarget, Header: c.MetricsGrpcExporterHeader,
			Timeout: c.MetricGrpcExporterTimeOutInMills, Interval: c.MetricGrpcExporterIntervalInMills},
	}
}

// newMetrics builds the exporter when metricsExporterType is PROM or
// OTLP_GRPC (with a target) and returns it with the request-latency
// observer to hang on the router; it exports once the caller calls Start.
func (s *Server) newMetrics(cfg Config) (*telemetry.Exporter, *telemetry.RPC, error) {
	mc := cfg.metricsConfig()
	if !mc.Enabled() {
		mc.LogOff(s.log)
		return nil, nil, nil
	}
	exp, err := telemetry.NewExporter(telemetry.Node{Type: telemetry.NodeNameServer, ID: cfg.ListenAddr(), Scope: "namesrv-meter"}, mc)
	if err != nil {
		return nil, nil, err
	}
	rpc := telemetry.NewRPC(exp.Registerer())
	exp.Registerer().MustRegister(nsCollector{s})
	return exp, rpc, nil
}

var (
	descNSBrokers   = prometheus.NewDesc("rocketgo_namesrv_brokers", "Brokers (names) registered", nil, nil)
	descNSTopics    = prometheus.NewDesc("rocketgo_namesrv_topics", "Topics in the route table", nil, nil)
	descNSWatermark = prometheus.NewDesc("rocketmq_processor_watermark", "Request processor watermark", []string{"processor"}, nil)
	descNSConns     = prometheus.NewDesc("rocketgo_remoting_connections", "Open remoting connections", []string{"port"}, nil)
)

// nsCollector reads the route table and pools at scrape time.
type nsCollector struct{ s *Server }

func (nsCollector) Describe(chan<- *prometheus.Desc) {}

func (c nsCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	gauge(descNSBrokers, float64(len(s.routes.clusterInfo().BrokerAddrTable)))
	gauge(descNSTopics, float64(len(s.routes.allTopics())))
	gauge(descNSWatermark, float64(s.general.Pending()), "default")
	gauge(descNSWatermark, float64(s.client.Pending()), "client_request")
	if s.srv != nil {
		gauge(descNSConns, float64(s.srv.ConnCount()), "main")
	}
}

// MetricsAddr is the bound /metrics address, "" when metrics are off.
func (s *Server) MetricsAddr() string { return s.metrics.Addr() }
