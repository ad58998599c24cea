package broker

import (
	"maps"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rocketgo/rocketgo/broker/metrics"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store/ha"
	"github.com/rocketgo/rocketgo/telemetry"
)

// msgType is Java's TopicMessageType as the message_type label has it
// (getMetricsValue).
type msgType uint8

const (
	msgNormal msgType = iota
	msgFIFO
	msgDelay
	msgTransaction
	numMsgTypes
)

var msgTypeNames = [numMsgTypes]string{"normal", "fifo", "delay", "transaction"}

// typedPuts are a topic's stored puts of one message type.
type typedPuts struct {
	msgs, bytes atomic.Int64
	size        metrics.IntHistogram // bytes per message (wroteBytes / msgNum, as Java)
}

// messageType classifies a send by its properties in one pass, as Java's
// BrokerMetricsManager.getMessageType: a prepared transaction, then a
// sharding key (FIFO), then any delay or timer property. It does not
// allocate.
func messageType(props string) msgType {
	var fifo, delay bool
	it := message.IterProperties(props)
	for {
		n, v, ok := it.Next()
		if !ok {
			break
		}
		switch n {
		case message.PropertyTransactionPrepared:
			if strings.EqualFold(v, "true") {
				return msgTransaction
			}
		case message.PropertyShardingKey:
			fifo = true
		case message.PropertyStartDeliverTime, message.PropertyDelayTimeLevel, message.PropertyTimerDeliverMs,
			message.PropertyTimerDelaySec, message.PropertyTimerDelayMs:
			delay = true
		}
	}
	switch {
	case fifo:
		return msgFIFO
	case delay:
		return msgDelay
	}
	return msgNormal
}

// isRetryOrDLQ reports the topics Java's metrics leave out of the in and
// out counters (BrokerMetricsManager.isRetryOrDlqTopic).
func isRetryOrDLQ(topic string) bool {
	return strings.HasPrefix(topic, "%RETRY%") || strings.HasPrefix(topic, "%DLQ%")
}

// isSystemGroup is MixAll.isSysConsumerGroup / BrokerMetricsManager.isSystemGroup.
func isSystemGroup(group string) bool {
	return len(group) >= 12 && strings.EqualFold(group[:12], "CID_RMQ_SYS_")
}

func boolLabel(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// brokerMetrics is the broker's exporter (metricsExporterType=PROM): the
// request-latency observer on both routers and a collector that reads the
// broker's tables at scrape time.
type brokerMetrics struct {
	exp   *telemetry.Exporter
	rpc   *telemetry.RPC
	fsync metrics.IntHistogram // rocketgo_storage_fsync_latency_milliseconds
	// rocketgo_send_stage_latency_microseconds: where a send's time goes.
	stages *metrics.Stages
	// rocketgo_reply_write_latency_microseconds: every reply of the
	// remoting ports, from handed to its connection to on the socket.
	replyWrite metrics.IntHistogram

	// rocketmq_topic_create_execution_time_milliseconds by
	// [failure][is_system], rocketmq_consumer_group_create_execution_time_milliseconds
	// by [failure]: resolved once.
	// ops: the POP, timer, transaction and DLQ counters the services feed
	// (metrics_ops.go).
	ops opsMetrics

	topicCreate [2][2]prometheus.Observer
	groupCreate [2]prometheus.Observer
	isSystem    func(topic string) bool
}

// newBrokerMetrics builds the exporter when cfg asks for PROM or
// OTLP_GRPC (with a target); nil otherwise (LOG, or OTLP_GRPC without a
// target, is logged).
func newBrokerMetrics(b *Broker) (*brokerMetrics, error) {
	mc := b.cfg.metricsConfig()
	if !mc.Enabled() {
		mc.LogOff(b.log)
		return nil, nil
	}
	exp, err := telemetry.NewExporter(telemetry.Node{
		Type: telemetry.NodeBroker, Cluster: b.cfg.BrokerClusterName, ID: b.cfg.BrokerName, Scope: "broker-meter",
	}, mc)
	if err != nil {
		return nil, err
	}
	m := &brokerMetrics{exp: exp, rpc: telemetry.NewRPC(exp.Registerer())}
	if err := exp.RegisterGoRuntime(); err != nil {
		return nil, err
	}
	m.fsync.Init(metrics.FsyncBuckets)
	m.stages = metrics.NewStages()
	m.replyWrite.Init(metrics.StageBuckets)
	b.send.stages = m.stages // before any send: New has not returned
	m.ops = opsMetrics{pop: newPopMetrics(), timer: newTimerMetrics(), txn: newTxnMetrics()}
	b.pop.metrics = m.ops.pop // likewise before any request or service runs
	b.timer.metrics = m.ops.timer
	b.txn.metrics = m.ops.txn
	b.send.txn = m.ops.txn
	b.retry.dlq = m.ops.txn
	topicCreate := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rocketmq_topic_create_execution_time_milliseconds",
		Help: "The distribution of create topic time", Buckets: metrics.CreateTimeBuckets}, []string{"invocation_status", "is_system"})
	groupCreate := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "rocketmq_consumer_group_create_execution_time_milliseconds",
		Help: "The distribution of create subscription time", Buckets: metrics.CreateTimeBuckets}, []string{"invocation_status"})
	for f, status := range []string{"success", "failure"} {
		m.groupCreate[f] = groupCreate.WithLabelValues(status)
		for sys, is := range []string{"false", "true"} {
			m.topicCreate[f][sys] = topicCreate.WithLabelValues(status, is)
		}
	}
	m.isSystem = func(topic string) bool {
		return javaSystemTopics[topic] || strings.HasPrefix(topic, "rmq_sys_") || b.topics.isSystem(topic)
	}
	exp.Registerer().MustRegister(topicCreate, groupCreate)
	if fo, ok := b.store.(interface{ SetFsyncObserver(func(time.Duration)) }); ok {
		fo.SetFsyncObserver(func(d time.Duration) { m.fsync.Observe(d.Milliseconds()) })
	}
	exp.Registerer().MustRegister(&brokerCollector{b: b, m: m})
	b.stats.typed = true // before any send: New has not returned
	return m, nil
}

// metricsConfig is the exporter's part of c.
func (c *Config) metricsConfig() telemetry.Config {
	return telemetry.Config{
		ExporterType: c.MetricsExporterType, PromHost: c.MetricsPromExporterHost, PromPort: c.MetricsPromExporterPort,
		Label: c.MetricsLabel, InDelta: c.MetricsInDelta, Pprof: c.MetricsPprofEnable,
		OTLP: telemetry.OTLPConfig{Target: c.MetricsGrpcExporterTarget, Header: c.MetricsGrpcExporterHeader,
			Timeout:  time.Duration(c.MetricGrpcExporterTimeOutInMills) * time.Millisecond,
			Interval: time.Duration(c.MetricGrpcExporterIntervalInMills) * time.Millisecond},
	}
}

// observe hangs the broker's observer on r.
func (m *brokerMetrics) observe(r *transport.Router) {
	if m != nil {
		r.Observe(m.observeRequest)
	}
}

// observeRequest records every request's latency, and the topic and
// group creations' execution times (Java's AdminBrokerProcessor records
// them around its handlers; here the observer sees the same span).
func (m *brokerMetrics) observeRequest(c *transport.Conn, req, resp *codec.Frame) {
	m.rpc.Observe(c, req, resp)
	switch codec.RequestCode(req.Code) {
	case codec.ReqUpdateAndCreateTopic, codec.ReqUpdateAndCreateTopicList,
		codec.ReqUpdateAndCreateSubscriptiongroup, codec.ReqUpdateAndCreateSubscriptiongroupList:
	default:
		return
	}
	if resp == nil || req.Arrived == 0 {
		return
	}
	failed := 0
	if resp.Code != int32(codec.RespSuccess) {
		failed = 1
	}
	ms := float64((time.Now().UnixNano() - req.Arrived) / int64(time.Millisecond))
	switch codec.RequestCode(req.Code) {
	case codec.ReqUpdateAndCreateTopic:
		sys := 0
		if topic, _ := req.Get("topic"); m.isSystem(topic) {
			sys = 1
		}
		m.topicCreate[failed][sys].Observe(ms)
	case codec.ReqUpdateAndCreateTopicList:
		m.topicCreate[failed][0].Observe(ms)
	default:
		m.groupCreate[failed].Observe(ms)
	}
}

// MetricsAddr is the bound /metrics address, "" when metrics are off.
func (b *Broker) MetricsAddr() string {
	if b.metrics == nil {
		return ""
	}
	return b.metrics.exp.Addr()
}

var (
	storeLabels  = []string{"storage_type", "storage_medium"}
	inLabels     = []string{"topic", "message_type", "is_system"}
	outLabels    = []string{"topic", "consumer_group", "is_system"}
	popOutLabels = []string{"topic", "consumer_group", "is_system", "is_retry"}
	lagLabels    = []string{"consumer_group", "topic", "is_retry", "is_system"}

	descMessagesIn    = prometheus.NewDesc("rocketmq_messages_in_total", "Total number of incoming messages", inLabels, nil)
	descThroughputIn  = prometheus.NewDesc("rocketmq_throughput_in_total", "Total traffic of incoming messages", inLabels, nil)
	descMessageSize   = prometheus.NewDesc("rocketmq_message_size", "Incoming messages size", inLabels, nil)
	descMessagesOut   = prometheus.NewDesc("rocketmq_messages_out_total", "Total number of outgoing messages", outLabels, nil)
	descThroughputOut = prometheus.NewDesc("rocketmq_throughput_out_total", "Total traffic of outgoing messages", outLabels, nil)
	// POP's deliveries: the same families with Java's is_retry (its
	// PopMessageProcessor adds it; its pull path does not).
	descMessagesOutPop   = prometheus.NewDesc("rocketmq_messages_out_total", "Total number of outgoing messages", popOutLabels, nil)
	descThroughputOutPop = prometheus.NewDesc("rocketmq_throughput_out_total", "Total traffic of outgoing messages", popOutLabels, nil)
	descWatermark        = prometheus.NewDesc("rocketmq_processor_watermark", "Request processor watermark", []string{"processor"}, nil)
	descPermission       = prometheus.NewDesc("rocketmq_broker_permission", "Broker permission", nil, nil)
	descTopicNum         = prometheus.NewDesc("rocketmq_topic_number", "Active topic number", nil, nil)
	descGroupNum         = prometheus.NewDesc("rocketmq_consumer_group_number", "Active subscription group number", nil, nil)
	descProducerConns    = prometheus.NewDesc("rocketmq_producer_connections", "Producer connections",
		[]string{"language", "version", "protocol_type"}, nil)
	descConsumerConns = prometheus.NewDesc("rocketmq_consumer_connections", "Consumer connections",
		[]string{"consumer_group", "language", "version", "consume_mode", "protocol_type", "is_system"}, nil)
	descLag             = prometheus.NewDesc("rocketmq_consumer_lag_messages", "Consumer lag messages", lagLabels, nil)
	descInflight        = prometheus.NewDesc("rocketmq_consumer_inflight_messages", "Consumer inflight messages", lagLabels, nil)
	descReady           = prometheus.NewDesc("rocketmq_consumer_ready_messages", "Consumer ready messages", lagLabels, nil)
	descLagLatency      = prometheus.NewDesc("rocketmq_consumer_lag_latency_milliseconds", "Consumer lag time", lagLabels, nil)
	descQueueingLatency = prometheus.NewDesc("rocketmq_consumer_queueing_latency_milliseconds", "Consumer queueing time", lagLabels, nil)
	descStorageSize     = prometheus.NewDesc("rocketmq_storage_size_bytes", "Broker storage size", storeLabels, nil)
	descFlushBehind     = prometheus.NewDesc("rocketmq_storage_flush_behind_bytes", "Broker flush behind bytes", storeLabels, nil)
	descDispatchBehnd   = prometheus.NewDesc("rocketmq_storage_dispatch_behind_bytes", "Broker dispatch behind bytes", storeLabels, nil)
	descReserveTime     = prometheus.NewDesc("rocketmq_storage_message_reserve_time_milliseconds", "Broker message reserve time", storeLabels, nil)

	// Ours (not in Java).
	descReplLagBytes = prometheus.NewDesc("rocketgo_replication_lag_bytes",
		"Commit-log bytes a slave has not acknowledged (master only; before its first report: the whole log)", []string{"slave"}, nil)
	descReplInSync = prometheus.NewDesc("rocketgo_replication_in_sync",
		"1 while the slave is within haMaxGapNotInSync of the master", []string{"slave"}, nil)
	descFsync     = prometheus.NewDesc("rocketgo_storage_fsync_latency_milliseconds", "Commit-log fsync latency", nil, nil)
	descHeldPulls = prometheus.NewDesc("rocketgo_held_pulls", "Long-polling pulls held", nil, nil)
	descStages    = prometheus.NewDesc("rocketgo_send_stage_latency_microseconds",
		"Single-message send latency by stage: queue_wait, decode, append, durable_wait, reply", []string{"stage"}, nil)
	descReplyWrite = prometheus.NewDesc("rocketgo_reply_write_latency_microseconds",
		"Reply write latency on the remoting ports: handed to the connection → on the socket", nil, nil)
	descConns  = prometheus.NewDesc("rocketgo_remoting_connections", "Open remoting connections", []string{"port"}, nil)
	descUnsent = prometheus.NewDesc("rocketgo_remoting_unsent_bytes",
		"Response bytes queued for slow readers (bounded by maxUnsentBytesTotal)", []string{"port"}, nil)
	descUnread = prometheus.NewDesc("rocketgo_remoting_unread_bytes",
		"Request bytes read but not yet handled (bounded by maxUnreadBytesTotal)", []string{"port"}, nil)
)

// processorPools maps our pools to Java's processor label values; Java's
// async_put, ack, heartbeat, lite_pull and transaction executors have no
// pool of their own here (compat/UNSUPPORTED.md).
var processorPools = map[string]string{
	"send": "send", "pull": "pull", "query": "query_message", "client": "client_manager",
	"offset": "consumer_manager", "admin": "admin", "reply": "reply",
}

// brokerCollector reads the broker's tables at scrape time. It is an
// unchecked collector (Describe sends nothing): its label sets follow the
// tables.
type brokerCollector struct {
	b *Broker
	m *brokerMetrics
}

func (c *brokerCollector) Describe(chan<- *prometheus.Desc) {}

func (c *brokerCollector) Collect(ch chan<- prometheus.Metric) {
	b := c.b
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	counter := func(d *prometheus.Desc, v int64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	b.stats.puts.eachKV(func(topic string, e *putEntry) {
		if isRetryOrDLQ(topic) {
			return
		}
		sys := boolLabel(e.system)
		for t := range e.in {
			in := &e.in[t]
			if in.size.Count() == 0 {
				continue
			}
			name := msgTypeNames[t]
			counter(descMessagesIn, in.msgs.Load(), topic, name, sys)
			counter(descThroughputIn, in.bytes.Load(), topic, name, sys)
			ch <- in.size.Metric(descMessageSize, topic, name, sys)
		}
	})
	b.stats.gets.eachKV(func(k groupTopic, e *getEntry) {
		if isRetryOrDLQ(k.topic) {
			return
		}
		// Pulls only: POP's part is its own series (collectOps).
		n := e.nums.value.Load() - e.popMsgs.Load()
		if n <= 0 {
			return
		}
		sys := boolLabel(e.system || isSystemGroup(k.group))
		counter(descMessagesOut, n, k.topic, k.group, sys)
		counter(descThroughputOut, e.size.value.Load()-e.popBytes.Load(), k.topic, k.group, sys)
	})
	for _, p := range b.pools {
		if name, ok := processorPools[p.Name()]; ok {
			gauge(descWatermark, float64(p.Pending()), name)
		}
	}
	gauge(descPermission, float64(b.live.perm.Load()))
	_, topics := b.topics.snapshot()
	gauge(descTopicNum, float64(len(topics)))
	gauge(descGroupNum, float64(b.groups.count()))
	c.connections(gauge)
	c.lag(gauge, topics)
	if st, ok := b.store.(interface {
		StorageUsedBytes() int64
		FlushBehind() int64
		DispatchBehind() int64
		EarliestStoreTime() int64
	}); ok {
		gauge(descStorageSize, float64(st.StorageUsedBytes()), "local", "disk")
		gauge(descFlushBehind, float64(st.FlushBehind()), "local", "disk")
		gauge(descDispatchBehnd, float64(st.DispatchBehind()), "local", "disk")
		if ts := st.EarliestStoreTime(); ts > 0 { // Java serves nothing for an empty store
			gauge(descReserveTime, float64(max(time.Now().UnixMilli()-ts, 0)), "local", "disk")
		}
	}
	if !b.IsSlave() {
		for _, s := range b.HASlaves() {
			c.slave(gauge, s)
		}
	}
	for _, srv := range []struct {
		port string
		s    *transport.Server
	}{{"main", b.main}, {"fast", b.fast}} {
		if srv.s == nil {
			continue
		}
		unsent, unread := srv.s.Buffered()
		gauge(descConns, float64(srv.s.ConnCount()), srv.port)
		gauge(descUnsent, float64(unsent), srv.port)
		gauge(descUnread, float64(unread), srv.port)
	}
	ch <- c.m.fsync.Metric(descFsync)
	c.m.stages.Collect(ch, descStages)
	ch <- c.m.replyWrite.Metric(descReplyWrite)
	gauge(descHeldPulls, float64(b.pull.holds.held()))
	c.collectOps(ch)
}

func (c *brokerCollector) slave(gauge func(*prometheus.Desc, float64, ...string), s ha.SlaveStatus) {
	gauge(descReplLagBytes, float64(max(s.Diff, 0)), s.Addr)
	in := 0.0
	if s.InSync {
		in = 1
	}
	gauge(descReplInSync, in, s.Addr)
}

// connections counts producer and consumer channels by Java's attributes.
func (c *brokerCollector) connections(gauge func(*prometheus.Desc, float64, ...string)) {
	type prodKey struct {
		lang, version string
	}
	type consKey struct {
		group, lang, version, mode string
	}
	prods, conss := map[prodKey]int{}, map[consKey]int{}
	m := c.b.clients
	m.mu.RLock()
	for _, chs := range m.producers {
		for _, ch := range chs {
			prods[prodKey{metrics.LanguageName(ch.language), metrics.VersionName(ch.version)}]++
		}
	}
	for group, g := range m.consumers {
		for _, ch := range g.channels {
			conss[consKey{group, metrics.LanguageName(ch.language), metrics.VersionName(ch.version), consumeModeName(g.consumeType)}]++
		}
	}
	m.mu.RUnlock()
	for k, n := range prods {
		gauge(descProducerConns, float64(n), k.lang, k.version, "remoting")
	}
	for k, n := range conss {
		gauge(descConsumerConns, float64(n), k.group, k.lang, k.version, k.mode, "remoting", boolLabel(isSystemGroup(k.group)))
	}
}

// consumeModeName is ConsumeType.getTypeCN() in lower case.
func consumeModeName(consumeType string) string {
	switch consumeType {
	case "CONSUME_ACTIVELY":
		return "pull"
	case "CONSUME_PASSIVELY":
		return "push"
	case "CONSUME_POP":
		return "pop"
	}
	return strings.ToLower(consumeType)
}

// lag reports, per group and topic, the messages not yet committed
// (lag), pulled but not committed (inflight) and not yet pulled (ready),
// summed over the topic's write queues, and the age of the oldest message
// not committed (lag latency) and not pulled (queueing latency): Java's
// ConsumerLagCalculator. The pairs are those of Java — the topics live
// consumers subscribe to and those a group pulled (Java's compensation
// table) — and ours besides: any pair with committed offsets, so a group
// that went offline keeps its lag. A missing committed offset counts as
// the queue's end, a missing pull offset as the committed one (Java).
// Offsets are copied under the tables' locks; the store is read after.
func (c *brokerCollector) lag(gauge func(*prometheus.Desc, float64, ...string), topics []body.TopicConfig) {
	b := c.b
	queues := make(map[string]int32, len(topics))
	system := make(map[string]bool, len(topics))
	for _, tc := range topics {
		queues[tc.TopicName] = tc.WriteQueueNums
		system[tc.TopicName] = b.topics.isSystem(tc.TopicName) || javaSystemTopics[tc.TopicName]
	}
	type offsets struct{ committed, pulled map[int32]int64 }
	pairs := map[groupTopic]*offsets{}
	add := func(k groupTopic) *offsets {
		if _, ok := queues[k.topic]; !ok || strings.HasPrefix(k.topic, "%RETRY%") {
			return nil
		}
		o := pairs[k]
		if o == nil {
			o = &offsets{}
			pairs[k] = o
		}
		return o
	}
	m := b.clients
	m.mu.RLock()
	for group, g := range m.consumers {
		for topic := range g.subs {
			add(groupTopic{topic: topic, group: group})
		}
	}
	m.mu.RUnlock()
	ot := b.offsets
	ot.mu.RLock()
	for k, offs := range ot.table {
		if o := add(k); o != nil {
			o.committed = maps.Clone(offs)
		}
	}
	for k, offs := range ot.pulled {
		if o := add(k); o != nil {
			o.pulled = maps.Clone(offs)
		}
	}
	ot.mu.RUnlock()

	now := time.Now().UnixMilli()
	oldest := func(earliest *int64, topic string, q int32, off int64) {
		if ts, err := b.store.StoreTime(topic, q, off); err == nil && ts > 0 && (*earliest == 0 || ts < *earliest) {
			*earliest = ts
		}
	}
	age := func(ts int64) float64 {
		if ts == 0 {
			return 0
		}
		return float64(max(now-ts, 0))
	}
	for k, o := range pairs {
		var lag, inflight, ready, unconsumed, unpulled int64
		for q := range queues[k.topic] {
			maxOff := max(b.store.MaxOffset(k.topic, q), 0)
			committed, hasCommit := o.committed[q]
			pulled, hasPull := o.pulled[q]
			if !hasCommit {
				committed = maxOff
			}
			if !hasPull {
				pulled = committed
			}
			lag += max(maxOff-committed, 0)
			inflight += max(pulled-committed, 0)
			ready += max(maxOff-pulled, 0)
			if maxOff > committed {
				oldest(&unconsumed, k.topic, q, committed)
			}
			if maxOff > pulled {
				oldest(&unpulled, k.topic, q, pulled)
			}
		}
		lv := []string{k.group, k.topic, "false", boolLabel(system[k.topic] || isSystemGroup(k.group))}
		gauge(descLag, float64(lag), lv...)
		gauge(descInflight, float64(inflight), lv...)
		gauge(descReady, float64(ready), lv...)
		gauge(descLagLatency, age(unconsumed), lv...)
		gauge(descQueueingLatency, age(unpulled), lv...)
	}
}

// observeReplyWrite is the remoting servers' WriteObserver.
func (m *brokerMetrics) observeReplyWrite(queued, written int64) {
	m.replyWrite.Observe((written - queued) / int64(time.Microsecond))
}
