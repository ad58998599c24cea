package controller

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/telemetry"
)

// metricsConfig is the exporter's part of c (Java's ControllerConfig keys).
func (c *Config) metricsConfig() telemetry.Config {
	return telemetry.Config{
		ExporterType: c.MetricsExporterType, PromHost: c.MetricsPromExporterHost, PromPort: c.MetricsPromExporterPort,
		Label: c.MetricsLabel, InDelta: c.MetricsInDelta,
		OTLP: telemetry.OTLPConfig{Target: c.MetricsGrpcExporterTarget, Header: c.MetricsGrpcExporterHeader,
			Timeout: c.MetricGrpcExporterTimeOutInMills, Interval: c.MetricGrpcExporterIntervalInMills},
	}
}

// requestTypes are Java's ControllerMetricsConstant.RequestType names by
// request code (getLowerCaseNameByCode returns name(), upper case).
var requestTypes = map[int32]string{
	int32(codec.ReqControllerAlterSyncStateSet): "CONTROLLER_ALTER_SYNC_STATE_SET",
	int32(codec.ReqControllerElectMaster):       "CONTROLLER_ELECT_MASTER",
	int32(codec.ReqControllerRegisterBroker):    "CONTROLLER_REGISTER_BROKER",
	int32(codec.ReqControllerGetReplicaInfo):    "CONTROLLER_GET_REPLICA_INFO",
	int32(codec.ReqControllerGetMetadataInfo):   "CONTROLLER_GET_METADATA_INFO",
	int32(codec.ReqControllerGetSyncStateData):  "CONTROLLER_GET_SYNC_STATE_DATA",
	int32(codec.ReqGetBrokerEpochCache):         "CONTROLLER_GET_BROKER_EPOCH_CACHE",
	int32(codec.ReqNotifyBrokerRoleChanged):     "CONTROLLER_NOTIFY_BROKER_ROLE_CHANGED",
	int32(codec.ReqBrokerHeartbeat):             "CONTROLLER_BROKER_HEARTBEAT",
	int32(codec.ReqUpdateControllerConfig):      "CONTROLLER_UPDATE_CONTROLLER_CONFIG",
	int32(codec.ReqGetControllerConfig):         "CONTROLLER_GET_CONTROLLER_CONFIG",
	int32(codec.ReqCleanBrokerData):             "CONTROLLER_CLEAN_BROKER_DATA",
	int32(codec.ReqControllerGetNextBrokerId):   "CONTROLLER_GET_NEXT_BROKER_ID",
	int32(codec.ReqControllerApplyBrokerId):     "CONTROLLER_APPLY_BROKER_ID",
}

// controllerLatencyBuckets are Java's request_latency buckets, in
// microseconds: 1, 3, 5, 10, 30, 50, 100, 300, 500 µs … 10 s.
var controllerLatencyBuckets = []float64{
	1, 3, 5, 10, 30, 50, 100, 300, 500,
	1e3, 3e3, 5e3, 10e3, 30e3, 50e3, 100e3, 300e3, 500e3,
	1e6, 3e6, 5e6, 10e6,
}

// controllerMetrics is Java's ControllerMetricsManager's part we serve:
// request_total{request_type, request_handle_status},
// request_latency_microseconds{request_type} (successes only, as Java),
// role, active_broker_num{cluster, broker_set}; plus rocketmq_rpc_latency
// (the broker's remoting histogram, ours on the controller).
type controllerMetrics struct {
	exp     *telemetry.Exporter
	rpc     *telemetry.RPC
	total   *prometheus.CounterVec
	latency *prometheus.HistogramVec

	mu    sync.Mutex                        // serializes adding children
	cache atomic.Pointer[map[int64]ctrlObs] // by code<<1 | failed; copy-on-write
}

type ctrlObs struct {
	total   prometheus.Counter
	latency prometheus.Observer // nil for a failure
}

func newControllerMetrics(c *Controller, cfg Config) (*controllerMetrics, error) {
	mc := cfg.metricsConfig()
	if !mc.Enabled() {
		mc.LogOff(c.log)
		return nil, nil
	}
	exp, err := telemetry.NewExporter(telemetry.Node{Scope: "controller", Extra: [][2]string{
		{"address", c.self.Addr}, {"group", cfg.Group}, {"peer_id", cfg.SelfID},
	}}, mc)
	if err != nil {
		return nil, err
	}
	m := &controllerMetrics{
		exp: exp,
		rpc: telemetry.NewRPC(exp.Registerer()),
		total: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "request_total", Help: "total request num"},
			[]string{"request_type", "request_handle_status"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "request_latency_microseconds", Help: "request latency",
			Buckets: controllerLatencyBuckets}, []string{"request_type"}),
	}
	empty := map[int64]ctrlObs{}
	m.cache.Store(&empty)
	exp.Registerer().MustRegister(m.total, m.latency, ctrlCollector{c})
	return m, nil
}

// observe is the router's observer: the remoting histogram, and Java's
// request_total / request_latency for the controller's own codes. A
// SYSTEM_ERROR answer counts as failed (Java: the processor threw).
func (m *controllerMetrics) observe(conn *transport.Conn, req, resp *codec.Frame) {
	m.rpc.Observe(conn, req, resp)
	if _, ok := requestTypes[req.Code]; !ok {
		return
	}
	failed := resp != nil && resp.Code == int32(codec.RespSystemError)
	k := int64(req.Code) << 1
	if failed {
		k |= 1
	}
	o, ok := (*m.cache.Load())[k]
	if !ok {
		o = m.child(k, req.Code, failed)
	}
	o.total.Inc()
	if o.latency != nil && req.Arrived != 0 {
		o.latency.Observe(float64((time.Now().UnixNano() - req.Arrived) / int64(time.Microsecond)))
	}
}

func (m *controllerMetrics) child(k int64, code int32, failed bool) ctrlObs {
	m.mu.Lock()
	defer m.mu.Unlock()
	old := *m.cache.Load()
	if o, ok := old[k]; ok {
		return o
	}
	name := requestTypes[code]
	status := "success"
	if failed {
		status = "failed"
	}
	o := ctrlObs{total: m.total.WithLabelValues(name, status)}
	if !failed {
		o.latency = m.latency.WithLabelValues(name)
	}
	next := make(map[int64]ctrlObs, len(old)+1)
	for kk, v := range old {
		next[kk] = v
	}
	next[k] = o
	m.cache.Store(&next)
	return o
}

var (
	descRole   = prometheus.NewDesc("role", "role of current node", nil, nil)
	descActive = prometheus.NewDesc("active_broker_num", "now active brokers num", []string{"cluster", "broker_set"}, nil)
)

// ctrlCollector reads the Raft state and the heartbeat table at scrape
// time.
type ctrlCollector struct{ c *Controller }

func (ctrlCollector) Describe(chan<- *prometheus.Desc) {}

func (cc ctrlCollector) Collect(ch chan<- prometheus.Metric) {
	c := cc.c
	role := 0.0 // Java: UNKNOWN 0, CANDIDATE 1, FOLLOWER 2, LEADER 3
	if c.node != nil {
		switch c.node.raft.State() {
		case raft.Candidate:
			role = 1
		case raft.Follower:
			role = 2
		case raft.Leader:
			role = 3
		}
	}
	ch <- prometheus.MustNewConstMetric(descRole, prometheus.GaugeValue, role)
	type set struct{ cluster, broker string }
	active := map[set]int{}
	h := c.live
	now := h.now()
	h.mu.Lock()
	for k, e := range h.table {
		if e.alive(now) {
			active[set{k.cluster, k.broker}]++
		}
	}
	h.mu.Unlock()
	for s, n := range active {
		ch <- prometheus.MustNewConstMetric(descActive, prometheus.GaugeValue, float64(n), s.cluster, s.broker)
	}
}

// MetricsAddr is the bound /metrics address, "" when metrics are off.
func (c *Controller) MetricsAddr() string {
	if c.metrics == nil {
		return ""
	}
	return c.metrics.exp.Addr()
}
