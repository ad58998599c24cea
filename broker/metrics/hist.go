package metrics

import (
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Java's histogram buckets.
var (
	// MessageSizeBuckets: rocketmq_message_size (1K, 4K, 512K, 1M, 2M, 4M bytes).
	MessageSizeBuckets = []int64{1 << 10, 4 << 10, 512 << 10, 1 << 20, 2 << 20, 4 << 20}
	// CreateTimeBuckets: rocketmq_topic_create_execution_time and
	// rocketmq_consumer_group_create_execution_time, milliseconds.
	CreateTimeBuckets = []float64{10, 100, 1000, 3000, 5000}
	// PopScanBuckets: rocketmq_pop_buffer_scan_time_consume, milliseconds
	// (PopMetricsManager.getMetricsView).
	PopScanBuckets = []int64{1, 10, 100, 1000, 2000, 3000}
	// DelayLatencyBuckets: rocketmq_delay_message_latency, seconds (1 min,
	// 10 min, 1 h, 12 h, 1 d, 3 d; DefaultStoreMetricsManager.getMetricsView).
	DelayLatencyBuckets = []int64{60, 600, 3600, 12 * 3600, 24 * 3600, 3 * 24 * 3600}
	// FinishLatencyBuckets: rocketmq_finish_message_latency (5 s, 1 min,
	// 10 min, 1 h, 12 h, 1 d). compat: Java records seconds into its
	// instrument of unit "ms" (EndTransactionProcessor); so do we.
	FinishLatencyBuckets = []int64{5, 60, 600, 3600, 12 * 3600, 24 * 3600}
	// FsyncBuckets (ours): rocketgo_storage_fsync_latency, milliseconds.
	FsyncBuckets = []int64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000}
)

// maxBuckets bounds IntHistogram's bounds: the counters are an array, so
// a histogram is one allocation-free value inside its owner.
const maxBuckets = 12

// IntHistogram is a lock-free histogram of integer observations for
// counters kept in the servers' own tables (per topic, per message type)
// and read at scrape time. The zero value needs Init. Observe is a few
// atomic adds and never allocates.
type IntHistogram struct {
	bounds []int64                      // upper bounds, ascending; shared
	counts [maxBuckets + 1]atomic.Int64 // per bucket (not cumulative); the last is +Inf
	sum    atomic.Int64
}

// Init sets the bucket bounds (at most 12, ascending).
func (h *IntHistogram) Init(bounds []int64) {
	if len(bounds) > maxBuckets {
		panic("metrics: IntHistogram with more than 12 buckets")
	}
	h.bounds = bounds
}

// Observe counts v.
func (h *IntHistogram) Observe(v int64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i].Add(1)
	h.sum.Add(v)
}

// Count is the number of observations.
func (h *IntHistogram) Count() uint64 {
	var n int64
	for i := 0; i <= len(h.bounds); i++ {
		n += h.counts[i].Load()
	}
	return uint64(n)
}

// Metric is h as a constant histogram of desc with labelValues (at scrape
// time; allocates).
func (h *IntHistogram) Metric(desc *prometheus.Desc, labelValues ...string) prometheus.Metric {
	buckets := make(map[float64]uint64, len(h.bounds))
	var cum uint64
	for i, b := range h.bounds {
		cum += uint64(h.counts[i].Load())
		buckets[float64(b)] = cum
	}
	cum += uint64(h.counts[len(h.bounds)].Load())
	return prometheus.MustNewConstHistogram(desc, cum, float64(h.sum.Load()), buckets, labelValues...)
}

// StageBuckets (ours): rocketgo_send_stage_latency_microseconds, the
// per-stage breakdown of a send, in microseconds.
var StageBuckets = []int64{10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10000, 50000, 200000}

// Send stages, in the order a single-message send passes them.
const (
	StageQueueWait   = iota // arrival at the router → the send worker starts it
	StageDecode             // worker start → header and message decoded and checked, handed to the store
	StageAppend             // handed to the store → appended to the commit log (lock wait, copy)
	StageDurableWait        // appended → as durable as the flush and replication policy promises
	StageReply              // durable → the reply encoded and handed to the connection
	NumStages
)

// StageNames are the stage label values, indexed by stage.
var StageNames = [NumStages]string{"queue_wait", "decode", "append", "durable_wait", "reply"}

// Stages is the send path's per-stage latency breakdown: one
// allocation-free histogram per stage.
type Stages [NumStages]IntHistogram

// NewStages returns stages with StageBuckets.
func NewStages() *Stages {
	s := new(Stages)
	for i := range s {
		s[i].Init(StageBuckets)
	}
	return s
}

// Observe counts a stage that took from start to end (Unix nanoseconds).
func (s *Stages) Observe(stage int, start, end int64) {
	s[stage].Observe((end - start) / int64(time.Microsecond))
}

// Collect writes the stages as desc's series labelled by stage.
func (s *Stages) Collect(ch chan<- prometheus.Metric, desc *prometheus.Desc) {
	for i := range s {
		ch <- s[i].Metric(desc, StageNames[i])
	}
}
