package broker

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/broker/metrics"
	"github.com/rocketgo/rocketgo/store"
)

// brokerStats is the broker's statistics, after Java's BrokerStatsManager
// (per-topic and per-group windows, stats_window.go), StoreStatsService
// (the broker-wide per-second rates of the runtime info) and BrokerStats
// (the totals recorded each midnight). The hot path — onPut per send,
// onGet per pull — only adds to atomic counters of entries that exist;
// an entry is created once per key. The sampler (stats_sampler.go) takes
// the snapshots on the broker's ticker goroutine.
type brokerStats struct {
	clock       Clock
	boot        time.Time
	clusterName string // the key of the BROKER_* statistics

	puts     statsSet[string, putEntry]      // TOPIC_PUT_NUMS, TOPIC_PUT_SIZE by topic
	gets     statsSet[groupTopic, getEntry]  // GROUP_GET_NUMS, GROUP_GET_SIZE by topic@group
	sendBack statsSet[groupTopic, statsItem] // SNDBCK_PUT_NUMS by topic@group
	// GROUP_GET_LATENCY by queueId@topic@group (Java's key with its
	// default enableDetailStat): the ms from a pull's start to its reply
	// being ready, summed, and the pulls (Java's RTStatsItem).
	getLatency statsSet[groupTopicQueue, statsItem]

	// BROKER_PUT_NUMS, BROKER_GET_NUMS and their …_WITHOUT_SYSTEM_TOPIC
	// variants, keyed by the cluster name. compat: Java adds only to their
	// values, never to their times, so their avgpt stays 0.
	brokerPut, brokerGet           statsItem
	brokerPutNoSys, brokerGetNoSys statsItem

	// StoreStatsService's totals: failed puts, pulls that found messages
	// and pulls that found none, messages handed out.
	putFailed, getFound, getMiss, getTransferred atomic.Int64

	storePuts func() (times, bytes int64) // the store's putMessageTimesTotal; nil: brokerPut
	storeRoll func()                      // ends the store's latency interval; may be nil
	sampler   statsSampler

	// typed: the metrics read putEntry.in by message type (set once by
	// New when metrics are on): the senders classify their messages only
	// then (putType).
	typed bool
}

// putType is props' message type when the metrics need it, else normal.
func (s *brokerStats) putType(props string) msgType {
	if !s.typed {
		return msgNormal
	}
	return messageType(props)
}

// groupTopicQueue keys a group's statistics on one queue.
type groupTopicQueue struct {
	groupTopic
	queueID int32
}

// putEntry is a topic's put statistics.
type putEntry struct {
	nums, size statsItem
	system     bool // TopicValidator.isSystemTopic: left out of the …_WITHOUT_SYSTEM_TOPIC totals
	// in splits the stored puts by message type for rocketmq_messages_in_total,
	// rocketmq_throughput_in_total and rocketmq_message_size (metrics.go).
	in [numMsgTypes]typedPuts
}

// getEntry is a group's get statistics on one topic.
type getEntry struct {
	nums, size statsItem
	system     bool
	// popMsgs, popBytes: the part of nums and size POP delivered (the
	// metrics serve POP deliveries as their own series: metrics_ops.go).
	popMsgs, popBytes atomic.Int64
}

// javaSystemTopics are the names TopicValidator counts as system topics
// whatever the broker creates; the broker's own system topics
// (topicTable.isSystem) and the rmq_sys_ prefix are added to them.
var javaSystemTopics = map[string]bool{
	"TBW102": true, "SCHEDULE_TOPIC_XXXX": true, "BenchmarkTest": true, "RMQ_SYS_TRANS_HALF_TOPIC": true,
	"RMQ_SYS_TRACE_TOPIC": true, "RMQ_SYS_TRANS_OP_HALF_TOPIC": true, "TRANS_CHECK_MAX_TIME_TOPIC": true,
	"SELF_TEST_TOPIC": true, "OFFSET_MOVED_EVENT": true, "CHECKPOINT_TOPIC": true,
}

// statsDeps are what the statistics read from the rest of the broker.
type statsDeps struct {
	clock       Clock // nil: WallClock
	clusterName string
	isSystem    func(topic string) bool     // the broker's system topics; may be nil
	storePuts   func() (times, bytes int64) // the store's put totals; may be nil
	storeRoll   func()                      // the store's RollLatency; may be nil
}

// latencyStore is a store that times its puts and reads (*store.Store).
type latencyStore interface {
	LatencyStats() store.LatencyFigures
	RollLatency()
}

// storeLatencyRoll is st's RollLatency where the store has one.
func storeLatencyRoll(st any) func() {
	if l, ok := st.(latencyStore); ok {
		return l.RollLatency
	}
	return nil
}

// storePutStats is st's put totals where the store keeps them.
func storePutStats(st any) func() (times, bytes int64) {
	if ps, ok := st.(interface{ PutStats() (int64, int64) }); ok {
		return ps.PutStats
	}
	return nil
}

func newBrokerStats(d statsDeps) *brokerStats {
	clock := d.clock
	if clock == nil {
		clock = WallClock{}
	}
	system := func(topic string) bool {
		return javaSystemTopics[topic] || strings.HasPrefix(topic, "rmq_sys_") || (d.isSystem != nil && d.isSystem(topic))
	}
	s := &brokerStats{clock: clock, boot: clock.Now(), clusterName: d.clusterName, storePuts: d.storePuts, storeRoll: d.storeRoll}
	s.puts.init(func(topic string) (string, *putEntry) {
		e := &putEntry{system: system(topic)}
		e.nums.init()
		e.size.init()
		for i := range e.in {
			e.in[i].size.Init(metrics.MessageSizeBuckets)
		}
		return strings.Clone(topic), e
	})
	s.gets.init(func(k groupTopic) (groupTopic, *getEntry) {
		e := &getEntry{system: system(k.topic)}
		e.nums.init()
		e.size.init()
		return groupTopic{topic: strings.Clone(k.topic), group: strings.Clone(k.group)}, e
	})
	s.sendBack.init(func(k groupTopic) (groupTopic, *statsItem) {
		it := new(statsItem)
		it.init()
		return groupTopic{topic: strings.Clone(k.topic), group: strings.Clone(k.group)}, it
	})
	s.getLatency.init(func(k groupTopicQueue) (groupTopicQueue, *statsItem) {
		it := new(statsItem)
		it.init()
		return groupTopicQueue{groupTopic{topic: strings.Clone(k.topic), group: strings.Clone(k.group)}, k.queueID}, it
	})
	for _, it := range []*statsItem{&s.brokerPut, &s.brokerGet, &s.brokerPutNoSys, &s.brokerGetNoSys} {
		it.init()
	}
	return s
}

// onPut counts a put the store finished (SendMessageProcessor's
// incTopicPutNums, incTopicPutSize and incBrokerPutNums for stored puts).
// It does not allocate once the topic's entry exists.
func (s *brokerStats) onPut(topic string, r store.PutResult) { s.onTypedPut(topic, msgNormal, r) }

// onTypedPut is onPut for a put of message type mt (Java's
// BrokerMetricsManager.getMessageType); it adds to the metrics' per-type
// counters too (SendMessageProcessor's messagesInTotal, throughputInTotal
// and messageSize).
func (s *brokerStats) onTypedPut(topic string, mt msgType, r store.PutResult) {
	if !putStored(r.Status) {
		s.putFailed.Add(1)
		return
	}
	n := int64(max(r.MsgCount, 1))
	e := s.puts.get(topic)
	e.nums.add(n, 1)
	e.size.add(int64(r.WroteBytes), 1)
	in := &e.in[mt]
	in.msgs.Add(n)
	in.bytes.Add(int64(r.WroteBytes))
	in.size.Observe(int64(r.WroteBytes) / n)
	s.brokerPut.value.Add(n)
	if !e.system {
		s.brokerPutNoSys.value.Add(n)
	}
}

// onGet counts a pull that found msgs messages of bytes in total
// (DefaultPullMessageResultHandler's incGroupGetNums, incGroupGetSize,
// incBrokerGetNums; the store's found and transferred counts). It does not
// allocate once the group's entry for the topic exists.
func (s *brokerStats) onGet(group, topic string, msgs, bytes int) {
	e := s.gets.get(groupTopic{topic: topic, group: group})
	e.nums.add(int64(msgs), 1)
	e.size.add(int64(bytes), 1)
	s.brokerGet.value.Add(int64(msgs))
	if !e.system {
		s.brokerGetNoSys.value.Add(int64(msgs))
	}
	s.getFound.Add(1)
	s.getTransferred.Add(int64(msgs))
}

// onPopGet is onGet for a POP that delivered msgs messages of bytes.
func (s *brokerStats) onPopGet(group, topic string, msgs, bytes int) {
	s.onGet(group, topic, msgs, bytes)
	e := s.gets.get(groupTopic{topic: topic, group: group})
	e.popMsgs.Add(int64(msgs))
	e.popBytes.Add(int64(bytes))
}

// onGetLatency counts a pull of group on topic's queue that found
// messages and was ready to answer ms after it started
// (incGroupGetLatency). It does not allocate once the entry exists.
func (s *brokerStats) onGetLatency(group, topic string, queueID int32, ms int64) {
	s.getLatency.get(groupTopicQueue{groupTopic{topic: topic, group: group}, queueID}).add(ms, 1)
}

// elapsedMs is the ms since begun as Java counts GROUP_GET_LATENCY: the
// difference of two millisecond clock readings.
func elapsedMs(begun time.Time) int64 { return time.Now().UnixMilli() - begun.UnixMilli() }

// onGetMiss counts a pull that found nothing (the store's getMissTps).
func (s *brokerStats) onGetMiss() { s.getMiss.Add(1) }

// onSendBack counts a consumer's send-back of a message of topic
// (incSendBackNums: SNDBCK_PUT_NUMS by topic@group).
func (s *brokerStats) onSendBack(group, topic string) {
	s.sendBack.get(groupTopic{topic: topic, group: group}).add(1, 1)
}

// item finds the statistic VIEW_BROKER_STATS_DATA asks for by Java's
// names: per topic, per "topic@group", or per cluster name for BROKER_*.
// It is nil where Java has no item: an unknown name, or a key nothing
// was counted for yet.
func (s *brokerStats) item(name, key string) *statsItem {
	broker := func(it *statsItem) *statsItem {
		if key != s.clusterName || it.value.Load() == 0 {
			return nil
		}
		return it
	}
	switch name {
	case "TOPIC_PUT_NUMS", "TOPIC_PUT_SIZE":
		e := s.puts.lookup(key)
		if e == nil {
			return nil
		}
		if name == "TOPIC_PUT_NUMS" {
			return &e.nums
		}
		return &e.size
	case "GROUP_GET_NUMS", "GROUP_GET_SIZE":
		k, ok := splitStatsKey(key)
		if !ok {
			return nil
		}
		e := s.gets.lookup(k)
		if e == nil {
			return nil
		}
		if name == "GROUP_GET_NUMS" {
			return &e.nums
		}
		return &e.size
	case "SNDBCK_PUT_NUMS":
		k, ok := splitStatsKey(key)
		if !ok {
			return nil
		}
		return s.sendBack.lookup(k)
	case "GROUP_GET_LATENCY":
		q, rest, ok := strings.Cut(key, "@")
		if !ok {
			return nil
		}
		qid, err := strconv.ParseInt(q, 10, 32)
		if err != nil {
			return nil
		}
		k, ok := splitStatsKey(rest)
		if !ok {
			return nil
		}
		return s.getLatency.lookup(groupTopicQueue{k, int32(qid)})
	case "BROKER_PUT_NUMS":
		return broker(&s.brokerPut)
	case "BROKER_GET_NUMS":
		return broker(&s.brokerGet)
	case "BROKER_PUT_NUMS_WITHOUT_SYSTEM_TOPIC":
		return broker(&s.brokerPutNoSys)
	case "BROKER_GET_NUMS_WITHOUT_SYSTEM_TOPIC":
		return broker(&s.brokerGetNoSys)
	}
	return nil
}

// splitStatsKey splits Java's "topic@group" (topics cannot hold '@').
func splitStatsKey(key string) (groupTopic, bool) {
	i := strings.IndexByte(key, '@')
	if i < 0 {
		return groupTopic{}, false
	}
	return groupTopic{topic: key[:i], group: key[i+1:]}, true
}

// topicPutTps is tpsTopicPutNums: TOPIC_PUT_NUMS's tps over the minute.
func (s *brokerStats) topicPutTps(topic string) float64 {
	if e := s.puts.lookup(topic); e != nil {
		return e.nums.inMinute().Tps
	}
	return 0
}

// groupGetTps is tpsGroupGetNums: GROUP_GET_NUMS's tps over the minute.
func (s *brokerStats) groupGetTps(group, topic string) float64 {
	if e := s.gets.lookup(groupTopic{topic: topic, group: group}); e != nil {
		return e.nums.inMinute().Tps
	}
	return 0
}

// statsSet maps keys to entries with lock-free reads of the keys that
// existed at the last sample. read is an immutable map replaced whole; a
// new key goes into pending under mu, and the sampler moves pending into
// a new read map every minute-window sample. So the hot path takes no
// lock for a known key, a new key takes mu until the next sample, and the
// copy costs O(keys) once per sample however many keys arrive.
type statsSet[K comparable, E any] struct {
	read    atomic.Pointer[map[K]*E]
	mu      sync.Mutex
	pending map[K]*E // guarded by mu; keys not in read
	// newEntry builds k's entry and returns k with private copies of its
	// strings. It runs under mu and may take topicTable.mu (lock order:
	// statsSet.mu, then topicTable.mu).
	newEntry func(k K) (owned K, e *E)
}

func (s *statsSet[K, E]) init(newEntry func(K) (K, *E)) {
	m := map[K]*E{}
	s.read.Store(&m)
	s.pending = map[K]*E{}
	s.newEntry = newEntry
}

// get returns k's entry, creating it on first use. Callers' keys may
// alias pooled buffers: a stored key is always a private copy.
func (s *statsSet[K, E]) get(k K) *E {
	if e := (*s.read.Load())[k]; e != nil {
		return e
	}
	return s.create(k)
}

func (s *statsSet[K, E]) create(k K) *E {
	s.mu.Lock()
	e := s.pending[k]
	if e == nil {
		if e = (*s.read.Load())[k]; e == nil {
			var owned K
			owned, e = s.newEntry(k)
			s.pending[owned] = e
		}
	}
	s.mu.Unlock()
	return e
}

// lookup returns k's entry or nil, creating nothing.
func (s *statsSet[K, E]) lookup(k K) *E {
	if e := (*s.read.Load())[k]; e != nil {
		return e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[k]
}

// publish moves the pending keys into a new read map.
func (s *statsSet[K, E]) publish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.pending) == 0 {
		return
	}
	old := *s.read.Load()
	m := make(map[K]*E, len(old)+len(s.pending))
	for k, e := range old {
		m[k] = e
	}
	for k, e := range s.pending {
		m[k] = e
	}
	s.read.Store(&m)
	s.pending = map[K]*E{}
}

// eachKV calls fn for every entry with its key, published or pending
// (for a scrape: a pending key's counts are live already).
func (s *statsSet[K, E]) eachKV(fn func(K, *E)) {
	for k, e := range *s.read.Load() {
		fn(k, e)
	}
	s.mu.Lock()
	pending := make([]K, 0, len(s.pending))
	entries := make([]*E, 0, len(s.pending))
	for k, e := range s.pending {
		pending, entries = append(pending, k), append(entries, e)
	}
	s.mu.Unlock()
	for i := range pending {
		fn(pending[i], entries[i])
	}
}

// each calls fn for every published entry.
func (s *statsSet[K, E]) each(fn func(*E)) {
	for _, e := range *s.read.Load() {
		fn(e)
	}
}

func pid() int { return os.Getpid() }
