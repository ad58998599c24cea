package broker

import (
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rocketgo/rocketgo/broker/metrics"
	"github.com/rocketgo/rocketgo/store"
)

// The POP, timer, transaction and DLQ series (Java's PopMetricsManager,
// DefaultStoreMetricsManager's timer part, BrokerMetricsManager's
// transaction and DLQ instruments). Each service holds a pointer to its
// own counters, nil with metrics off (every method is nil-safe); a counter
// of a known key is an atomic add (statsSet: lock-free lookup, no
// allocation), a new key is created once.

// counter is one monotonically growing (or, for a gauge, moving) value.
type counter struct{ v atomic.Int64 }

func newCounterSet[K comparable](own func(K) K) *statsSet[K, counter] {
	s := new(statsSet[K, counter])
	s.init(func(k K) (K, *counter) { return own(k), new(counter) })
	return s
}

// reviveKind is Java's PopReviveMessageType.
type reviveKind uint8

const (
	reviveKindCK reviveKind = iota
	reviveKindAck
)

var reviveKindNames = [...]string{"CK", "ACK"}

type reviveInKey struct {
	group, topic string
	kind         reviveKind
	status       store.PutStatus
}

type reviveOutKey struct {
	group, topic string
	qid          int32
	kind         reviveKind
}

type reviveRetryKey struct {
	group, topic string
	status       store.PutStatus
}

// popOutKey is a POP delivery's labels: the topic popped (the original
// one for a retry), the group, whether the messages came from its retry
// topic.
type popOutKey struct {
	group, topic string
	retry        bool
}

// popOut are the messages and bytes POP delivered.
type popOut struct{ msgs, bytes atomic.Int64 }

// popMetrics are the POP consumption's counters.
type popMetrics struct {
	// delivered: rocketmq_messages_out_total / rocketmq_throughput_out_total
	// of POP, with Java's is_retry (PopMessageProcessor).
	delivered statsSet[popOutKey, popOut]
	in        *statsSet[reviveInKey, counter]    // rocketmq_pop_revive_in_message_total
	out       *statsSet[reviveOutKey, counter]   // rocketmq_pop_revive_out_message_total
	retry     *statsSet[reviveRetryKey, counter] // rocketmq_pop_revive_retry_messages_total
	// scan: each revive round's time (rocketmq_pop_buffer_scan_time_consume;
	// Java times its PopBufferMergeService's scan, which we do not have).
	scan metrics.IntHistogram
}

func newPopMetrics() *popMetrics {
	m := &popMetrics{
		in: newCounterSet(func(k reviveInKey) reviveInKey {
			k.group, k.topic = strings.Clone(k.group), strings.Clone(k.topic)
			return k
		}),
		out: newCounterSet(func(k reviveOutKey) reviveOutKey {
			k.group, k.topic = strings.Clone(k.group), strings.Clone(k.topic)
			return k
		}),
		retry: newCounterSet(func(k reviveRetryKey) reviveRetryKey {
			k.group, k.topic = strings.Clone(k.group), strings.Clone(k.topic)
			return k
		}),
	}
	m.delivered.init(func(k popOutKey) (popOutKey, *popOut) {
		k.group, k.topic = strings.Clone(k.group), strings.Clone(k.topic)
		return k, new(popOut)
	})
	m.scan.Init(metrics.PopScanBuckets)
	return m
}

// onDeliver counts a POP that delivered msgs messages of bytes.
func (m *popMetrics) onDeliver(group, topic string, retry bool, msgs, bytes int) {
	if m != nil && msgs > 0 {
		e := m.delivered.get(popOutKey{group: group, topic: topic, retry: retry})
		e.msgs.Add(int64(msgs))
		e.bytes.Add(int64(bytes))
	}
}

// onPut counts a record put to the revive log (Java's incPopReviveCkPutCount
// and incPopReviveAckPutCount).
func (m *popMetrics) onPut(group, topic string, kind reviveKind, st store.PutStatus) {
	if m != nil {
		m.in.get(reviveInKey{group: group, topic: topic, kind: kind, status: st}).v.Add(1)
	}
}

// onRead counts a record the revive service read (incPopReviveCkGetCount,
// incPopReviveAckGetCount).
func (m *popMetrics) onRead(group, topic string, qid int32, kind reviveKind) {
	if m != nil {
		m.out.get(reviveOutKey{group: group, topic: topic, qid: qid, kind: kind}).v.Add(1)
	}
}

// onRetry counts a revived message's put (incPopReviveRetryMessageCount).
func (m *popMetrics) onRetry(group, topic string, st store.PutStatus) {
	if m != nil {
		m.retry.get(reviveRetryKey{group: group, topic: topic, status: st}).v.Add(1)
	}
}

func (m *popMetrics) onRound(d time.Duration) {
	if m != nil {
		m.scan.Observe(d.Milliseconds())
	}
}

// timerMetrics are the timer wheel's counters, by REAL_TOPIC.
type timerMetrics struct {
	enqueued *statsSet[string, counter] // rocketmq_timer_enqueue_total
	dequeued *statsSet[string, counter] // rocketmq_timer_dequeue_total
	timing   *statsSet[string, counter] // rocketmq_timing_messages (since start)
	latency  statsSet[string, metrics.IntHistogram]
	// The last record enqueued after its time had come (Java's
	// lastEnqueueButExpiredTime and …StoreTime), for the enqueue latency.
	expiredAt, expiredStored atomic.Int64
}

func newTimerMetrics() *timerMetrics {
	m := &timerMetrics{enqueued: newCounterSet(strings.Clone), dequeued: newCounterSet(strings.Clone),
		timing: newCounterSet(strings.Clone)}
	m.latency.init(func(topic string) (string, *metrics.IntHistogram) {
		h := new(metrics.IntHistogram)
		h.Init(metrics.DelayLatencyBuckets)
		return strings.Clone(topic), h
	})
	return m
}

// onEnqueue counts a timer-topic record the enqueue read: its set latency
// (deliver time − born time, seconds) and, when it is chained (not a
// delete marker), one more timing message.
func (m *timerMetrics) onEnqueue(topic string, deliverMs, bornMs int64, del bool) {
	if m == nil {
		return
	}
	m.latency.get(topic).Observe((deliverMs - bornMs) / 1000)
	m.enqueued.get(topic).v.Add(1)
	d := int64(1)
	if del {
		d = -1
	}
	m.timing.get(topic).v.Add(d)
}

// onExpired notes a record enqueued after its time (delivered at once).
func (m *timerMetrics) onExpired(storeMs int64) {
	if m != nil {
		m.expiredAt.Store(time.Now().UnixMilli())
		m.expiredStored.Store(storeMs)
	}
}

// onDequeue counts a delivered timer.
func (m *timerMetrics) onDequeue(topic string) {
	if m != nil {
		m.dequeued.get(topic).v.Add(1)
		m.timing.get(topic).v.Add(-1)
	}
}

// enqueueBehindMs is Java's getEnqueueBehindMillis.
func (m *timerMetrics) enqueueBehindMs(now int64) int64 {
	if now-m.expiredAt.Load() < 2000 {
		return now - m.expiredStored.Load()
	}
	return 0
}

// txnMetrics are the transactions' and DLQ's counters.
type txnMetrics struct {
	commits   *statsSet[string, counter] // rocketmq_commit_messages_total by topic
	rollbacks *statsSet[string, counter] // rocketmq_rollback_messages_total
	halves    *statsSet[string, counter] // rocketmq_half_messages (since start)
	finish    statsSet[string, metrics.IntHistogram]
	dlq       *statsSet[groupTopic, counter] // rocketmq_send_to_dlq_messages_total
}

func newTxnMetrics() *txnMetrics {
	m := &txnMetrics{commits: newCounterSet(strings.Clone), rollbacks: newCounterSet(strings.Clone),
		halves: newCounterSet(strings.Clone),
		dlq: newCounterSet(func(k groupTopic) groupTopic {
			return groupTopic{topic: strings.Clone(k.topic), group: strings.Clone(k.group)}
		})}
	m.finish.init(func(topic string) (string, *metrics.IntHistogram) {
		h := new(metrics.IntHistogram)
		h.Init(metrics.FinishLatencyBuckets)
		return strings.Clone(topic), h
	})
	return m
}

// onHalf counts a stored half message of topic.
func (m *txnMetrics) onHalf(topic string) {
	if m != nil {
		m.halves.get(topic).v.Add(1)
	}
}

// onCommit counts a committed half (Java: after the final message is
// stored), with its latency from birth in seconds.
func (m *txnMetrics) onCommit(topic string, bornMs int64) {
	if m != nil {
		m.halves.get(topic).v.Add(-1)
		m.commits.get(topic).v.Add(1)
		m.finish.get(topic).Observe((time.Now().UnixMilli() - bornMs) / 1000)
	}
}

func (m *txnMetrics) onRollback(topic string) {
	if m != nil {
		m.halves.get(topic).v.Add(-1)
		m.rollbacks.get(topic).v.Add(1)
	}
}

// onDiscard counts a half moved to TRANS_CHECK_MAX_TIME_TOPIC.
func (m *txnMetrics) onDiscard(topic string) {
	if m != nil {
		m.halves.get(topic).v.Add(-1)
	}
}

// onDLQ counts a message sent to a DLQ, with Java's labels: the group and
// topic the caller names.
func (m *txnMetrics) onDLQ(group, topic string) {
	if m != nil {
		m.dlq.get(groupTopic{topic: topic, group: group}).v.Add(1)
	}
}

// opsMetrics groups the three for the collector.
type opsMetrics struct {
	pop   *popMetrics
	timer *timerMetrics
	txn   *txnMetrics
}

var (
	storeLabelValues = []string{"local", "disk"}
	timerLabels      = storeLabels
	timerTopicLabels = []string{"storage_type", "storage_medium", "topic"}

	descPopRevIn = prometheus.NewDesc("rocketmq_pop_revive_in_message_total", "Total number of put message to revive topic",
		[]string{"consumer_group", "topic", "revive_message_type", "put_status"}, nil)
	descPopRevOut = prometheus.NewDesc("rocketmq_pop_revive_out_message_total", "Total number of get message from revive topic",
		[]string{"consumer_group", "topic", "queue_id", "revive_message_type"}, nil)
	descPopRevRetry = prometheus.NewDesc("rocketmq_pop_revive_retry_messages_total", "Total number of put message to pop retry topic",
		[]string{"consumer_group", "topic", "put_status"}, nil)
	descPopScan   = prometheus.NewDesc("rocketmq_pop_buffer_scan_time_consume_milliseconds", "Time consuming of pop buffer scan", nil, nil)
	descPopOffBuf = prometheus.NewDesc("rocketmq_pop_offset_buffer_size", "Time number of buffered offset", nil, nil)
	descPopCKBuf  = prometheus.NewDesc("rocketmq_pop_checkpoint_buffer_size", "The number of buffered checkpoint", nil, nil)
	descPopRevLag = prometheus.NewDesc("rocketmq_pop_revive_lag_milliseconds", "The processing lag of revive topic",
		[]string{"queue_id"}, nil)
	descPopRevLatency = prometheus.NewDesc("rocketmq_pop_revive_latency_milliseconds", "The processing latency of revive topic",
		[]string{"queue_id"}, nil)

	descTimerEnqLag     = prometheus.NewDesc("rocketmq_timer_enqueue_lag", "Timer enqueue messages lag", timerLabels, nil)
	descTimerEnqLatency = prometheus.NewDesc("rocketmq_timer_enqueue_latency_milliseconds", "Timer enqueue latency", timerLabels, nil)
	descTimerDeqLag     = prometheus.NewDesc("rocketmq_timer_dequeue_lag", "Timer dequeue messages lag", timerLabels, nil)
	descTimerDeqLatency = prometheus.NewDesc("rocketmq_timer_dequeue_latency_milliseconds", "Timer dequeue latency", timerLabels, nil)
	descTimingMsgs      = prometheus.NewDesc("rocketmq_timing_messages", "Current message number in timing", timerTopicLabels, nil)
	descTimerEnqTotal   = prometheus.NewDesc("rocketmq_timer_enqueue_total", "Total number of timer enqueue", timerTopicLabels, nil)
	descTimerDeqTotal   = prometheus.NewDesc("rocketmq_timer_dequeue_total", "Total number of timer dequeue", timerTopicLabels, nil)
	descTimerSnapshot   = prometheus.NewDesc("rocketmq_timer_message_snapshot",
		"Timer message distribution snapshot, only count timing messages in 24h.",
		[]string{"storage_type", "storage_medium", "timer_bound_s"}, nil)
	descDelayLatency = prometheus.NewDesc("rocketmq_delay_message_latency_seconds", "Timer message set latency distribution",
		timerTopicLabels, nil)

	descDLQ = prometheus.NewDesc("rocketmq_send_to_dlq_messages_total", "Consumer send to DLQ messages",
		[]string{"consumer_group", "topic", "is_system"}, nil)
	descCommits   = prometheus.NewDesc("rocketmq_commit_messages_total", "Total number of commit messages", []string{"topic"}, nil)
	descRollbacks = prometheus.NewDesc("rocketmq_rollback_messages_total", "Total number of rollback messages", []string{"topic"}, nil)
	descFinish    = prometheus.NewDesc("rocketmq_finish_message_latency_milliseconds", "Transaction finish latency", []string{"topic"}, nil)
	descHalves    = prometheus.NewDesc("rocketmq_half_messages", "Half messages of all topics", []string{"topic"}, nil)
)

// timerBounds are Java's TimerMetrics.timerDist, seconds.
var timerBounds = []int64{5, 60, 300, 900, 3600, 14400, 28800, 86400}

var timerBoundNames = func() []string {
	s := make([]string, len(timerBounds))
	for i, b := range timerBounds {
		s[i] = strconv.FormatInt(b, 10)
	}
	return s
}()

// collectOps writes the POP, timer, transaction and DLQ series.
func (c *brokerCollector) collectOps(ch chan<- prometheus.Metric) {
	b, ops := c.b, c.m.ops
	gauge := func(d *prometheus.Desc, v float64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, lv...)
	}
	count := func(d *prometheus.Desc, v int64, lv ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, float64(v), lv...)
	}
	local, disk := storeLabelValues[0], storeLabelValues[1]

	// POP.
	p := ops.pop
	p.in.publish()
	p.out.publish()
	p.retry.publish()
	p.in.eachKV(func(k reviveInKey, e *counter) {
		count(descPopRevIn, e.v.Load(), k.group, k.topic, reviveKindNames[k.kind], k.status.String())
	})
	p.out.eachKV(func(k reviveOutKey, e *counter) {
		count(descPopRevOut, e.v.Load(), k.group, k.topic, strconv.Itoa(int(k.qid)), reviveKindNames[k.kind])
	})
	p.retry.eachKV(func(k reviveRetryKey, e *counter) {
		count(descPopRevRetry, e.v.Load(), k.group, k.topic, k.status.String())
	})
	p.delivered.publish()
	p.delivered.eachKV(func(k popOutKey, e *popOut) {
		sys := boolLabel(c.m.isSystem(k.topic) || isSystemGroup(k.group))
		count(descMessagesOutPop, e.msgs.Load(), k.topic, k.group, sys, boolLabel(k.retry))
		count(descThroughputOutPop, e.bytes.Load(), k.topic, k.group, sys, boolLabel(k.retry))
	})
	ch <- p.scan.Metric(descPopScan)
	gauge(descPopOffBuf, 0) // no PopBufferMergeService: nothing is buffered
	gauge(descPopCKBuf, 0)
	now := time.Now().UnixMilli()
	for _, rs := range b.revive {
		lag, latency := rs.behind(now)
		q := strconv.Itoa(int(rs.qid))
		gauge(descPopRevLag, float64(lag), q)
		gauge(descPopRevLatency, float64(latency), q)
	}

	// Timer wheel (Java registers these only with timerWheelEnable).
	if t := b.timer; t != nil && t.ts != nil {
		tm := ops.timer
		_, offsets := t.behind(now)
		gauge(descTimerEnqLag, float64(offsets), local, disk)
		gauge(descTimerEnqLatency, float64(tm.enqueueBehindMs(now)), local, disk)
		gauge(descTimerDeqLag, float64(t.ts.Pending(t.readMs.Load())), local, disk)
		// compat: Java serves getDequeueBehind(), seconds, under its
		// milliseconds unit.
		gauge(descTimerDeqLatency, float64(max(now-t.readMs.Load(), 0)/1000), local, disk)
		dist := make([]int64, len(timerBounds))
		t.ts.Distribution(now, timerBounds, dist)
		for i, n := range dist {
			gauge(descTimerSnapshot, float64(n), local, disk, timerBoundNames[i])
		}
		for _, s := range []*statsSet[string, counter]{tm.enqueued, tm.dequeued, tm.timing} {
			s.publish()
		}
		tm.latency.publish()
		tm.timing.eachKV(func(topic string, e *counter) { gauge(descTimingMsgs, float64(max(e.v.Load(), 0)), local, disk, topic) })
		tm.enqueued.eachKV(func(topic string, e *counter) { count(descTimerEnqTotal, e.v.Load(), local, disk, topic) })
		tm.dequeued.eachKV(func(topic string, e *counter) { count(descTimerDeqTotal, e.v.Load(), local, disk, topic) })
		tm.latency.eachKV(func(topic string, h *metrics.IntHistogram) { ch <- h.Metric(descDelayLatency, local, disk, topic) })
	}

	// Transactions and DLQ.
	x := ops.txn
	for _, s := range []*statsSet[string, counter]{x.commits, x.rollbacks, x.halves} {
		s.publish()
	}
	x.finish.publish()
	x.dlq.publish()
	x.commits.eachKV(func(topic string, e *counter) { count(descCommits, e.v.Load(), topic) })
	x.rollbacks.eachKV(func(topic string, e *counter) { count(descRollbacks, e.v.Load(), topic) })
	x.halves.eachKV(func(topic string, e *counter) { gauge(descHalves, float64(max(e.v.Load(), 0)), topic) })
	x.finish.eachKV(func(topic string, h *metrics.IntHistogram) { ch <- h.Metric(descFinish, topic) })
	x.dlq.eachKV(func(k groupTopic, e *counter) {
		sys := boolLabel(c.m.isSystem(k.topic) || isSystemGroup(k.group))
		count(descDLQ, e.v.Load(), k.group, k.topic, sys)
	})
}
