package broker

import (
	"log/slog"
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// System topic names (Java TopicValidator / MixAll).
const (
	TopicAutoCreate     = "TBW102"
	TopicSchedule       = "SCHEDULE_TOPIC_XXXX"
	TopicBenchmark      = "BenchmarkTest"
	TopicTransHalf      = "RMQ_SYS_TRANS_HALF_TOPIC"
	TopicTransOpHalf    = "RMQ_SYS_TRANS_OP_HALF_TOPIC"
	TopicTransCheckMax  = "TRANS_CHECK_MAX_TIME_TOPIC"
	TopicSelfTest       = "SELF_TEST_TOPIC"
	TopicOffsetMoved    = "OFFSET_MOVED_EVENT"
	TopicRocksDBOffset  = "CHECKPOINT_TOPIC"
	RetryGroupPrefix    = "%RETRY%"
	DLQGroupPrefix      = "%DLQ%"
	replyTopicSuffix    = "_REPLY_TOPIC"
	syncMemberPrefix    = "rmq_sys_SYNC_BROKER_MEMBER_"
	reviveTopicPrefix   = "rmq_sys_REVIVE_LOG_"
	scheduleQueueNums   = 18
	timerTopic          = "rmq_sys_wheel_timer"
	topicMaxLen         = 127
	retryOrDLQTopicMax  = 255
	reviveQueueNumsJava = 8
)

// groupMaxLen is TopicValidator.GROUP_MAX_LENGTH (5.4.0): a group name
// becomes part of %RETRY%<group> and %DLQ%<group>.
const groupMaxLen = 120

// notAllowedSend lists topics clients may not send to.
var notAllowedSend = map[string]bool{
	TopicSchedule: true, TopicTransHalf: true, TopicTransOpHalf: true,
	TopicTransCheckMax: true, TopicSelfTest: true, TopicOffsetMoved: true,
}

// validTopicChar is Java's VALID_CHAR_BIT_MAP: ^[%|a-zA-Z0-9_-]+$.
func validTopicChar(c byte) bool {
	return c == '%' || c == '|' || c == '_' || c == '-' ||
		(c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
}

// validateTopic mirrors TopicValidator.validateTopic and returns Java's
// remark, or "" when the topic is valid.
func validateTopic(topic string) string {
	if strings.TrimSpace(topic) == "" {
		return remarks.TopicBlank
	}
	for i := 0; i < len(topic); i++ {
		if !validTopicChar(topic[i]) {
			return remarks.TopicIllegalCharacters(topic)
		}
	}
	if strings.HasPrefix(topic, RetryGroupPrefix) || strings.HasPrefix(topic, DLQGroupPrefix) {
		if len(topic) > retryOrDLQTopicMax {
			return remarks.RetryOrDLQTopicTooLong(topic, retryOrDLQTopicMax)
		}
	} else if len(topic) > topicMaxLen {
		return remarks.TopicTooLong(topic, topicMaxLen)
	}
	return ""
}

// validateGroup is Java 5.4.0's TopicValidator.validateGroup: "" when the
// group name may be used, else the INVALID_PARAMETER remark. (5.3.3 took
// any name in UPDATE_AND_CREATE_SUBSCRIPTIONGROUP.)
func validateGroup(group string) string {
	if strings.TrimSpace(group) == "" {
		return remarks.GroupBlank
	}
	for i := 0; i < len(group); i++ {
		if !validTopicChar(group[i]) {
			return remarks.GroupIllegalCharacters(group)
		}
	}
	if len(group) > groupMaxLen {
		return remarks.GroupTooLong(group, groupMaxLen)
	}
	return ""
}

// topicTable is the broker's topic configuration (topics.json).
type topicTable struct {
	path      string
	live      *liveConfig // autoCreateTopicEnable
	maxQueues int32       // maxTopicQueueNums
	log       *slog.Logger
	// onChange is called after a change that name servers must learn:
	// with the names of the topics created or updated, or nil when the
	// whole table must be registered again (a delete, a replaced table).
	onChange func(topics []string)

	pmu sync.Mutex // serializes writes of the file

	mu      sync.RWMutex
	topics  map[string]body.TopicConfig // guarded by mu
	system  map[string]bool             // guarded by mu
	version body.TopicVersion           // guarded by mu
}

func newTopicTable(cfg *Config, live *liveConfig, log *slog.Logger) *topicTable {
	t := &topicTable{
		live:      live,
		path:      filepath.Join(cfg.StorePathRootDir, "config", "topics.json"),
		log:       log,
		topics:    make(map[string]body.TopicConfig),
		maxQueues: cfg.MaxTopicQueueNums,
		system:    make(map[string]bool),
	}
	t.version = body.TopicVersion{Timestamp: time.Now().UnixMilli()}
	t.initSystem(cfg)
	return t
}

// initSystem creates the topics Java's TopicConfigManager creates at start.
func (t *topicTable) initSystem(cfg *Config) {
	add := func(name string, queues int32, perm int32) {
		tc := body.NewTopicConfig(name)
		if queues > 0 {
			tc.ReadQueueNums, tc.WriteQueueNums = queues, queues
		}
		if perm >= 0 {
			tc.Perm = perm
		}
		t.topics[name] = tc
		t.system[name] = true
	}
	add(TopicSelfTest, 1, -1)
	if cfg.AutoCreateTopicEnable {
		add(TopicAutoCreate, cfg.DefaultTopicQueueNums, body.PermInherit|body.PermRead|body.PermWrite)
	}
	add(TopicBenchmark, 1024, -1)
	clusterPerm := int32(body.PermInherit)
	if cfg.ClusterTopicEnable {
		clusterPerm |= body.PermRead | body.PermWrite
	}
	add(cfg.BrokerClusterName, 0, clusterPerm)
	brokerPerm := int32(body.PermInherit)
	if cfg.BrokerTopicEnable {
		brokerPerm |= body.PermRead | body.PermWrite
	}
	add(cfg.BrokerName, 1, brokerPerm)
	add(TopicOffsetMoved, 1, -1)
	add(TopicSchedule, scheduleQueueNums, -1)
	if cfg.TraceTopicEnable {
		add(cfg.MsgTraceTopicName, 1, -1)
	}
	add(cfg.BrokerClusterName+replyTopicSuffix, 1, -1)
	add(reviveTopicPrefix+cfg.BrokerClusterName, reviveQueueNumsJava, -1)
	add(syncMemberPrefix+cfg.BrokerName, 1, body.PermInherit)
	add(TopicTransHalf, 1, -1)
	add(TopicTransOpHalf, 1, -1)
	add(timerTopic, 1, -1)
}

// load merges topics.json over the system topics.
func (t *topicTable) load() error {
	return loadConfigFile(t.path, "topics", body.DecodeTopicConfigFile, func(f body.TopicConfigFile) {
		t.mu.Lock()
		defer t.mu.Unlock()
		maps.Copy(t.topics, f.TopicConfigTable)
		if f.DataVersion.Timestamp != 0 {
			t.version = f.DataVersion
		}
	})
}

func (t *topicTable) get(name string) (body.TopicConfig, bool) {
	t.mu.RLock()
	tc, ok := t.topics[name]
	t.mu.RUnlock()
	return tc, ok
}

func (t *topicTable) isSystem(name string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.system[name]
}

// queueNumsRemark checks the queue numbers a request asks for against
// maxTopicQueueNums: "" when they are within it, else the remark of the
// INVALID_PARAMETER answer. Each queue can cost a consume-queue file, so
// a topic with 100,000 queues is a way to fill a disk.
func (t *topicTable) queueNumsRemark(tc *body.TopicConfig) string {
	if tc.ReadQueueNums <= t.maxQueues && tc.WriteQueueNums <= t.maxQueues {
		return ""
	}
	return remarks.TopicQueueNumsIllegal(tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums, t.maxQueues)
}

// capQueues bounds a queue number a topic is created with by
// maxTopicQueueNums.
func (t *topicTable) capQueues(n int32) int32 { return min(n, t.maxQueues) }

// bumpLocked advances the data version; caller holds mu.
func (t *topicTable) bumpLocked() {
	t.version.Counter++
	t.version.Timestamp = time.Now().UnixMilli()
}

// bump advances the data version, so name servers take the next
// registration's topics as changed.
func (t *topicTable) bump() {
	t.mu.Lock()
	t.bumpLocked()
	t.mu.Unlock()
}

// put creates or replaces a topic, persists and announces it.
func (t *topicTable) put(tc body.TopicConfig) error {
	t.mu.Lock()
	t.topics[tc.TopicName] = tc
	t.bumpLocked()
	t.mu.Unlock()
	return t.changed([]string{tc.TopicName})
}

// delete removes a topic; it reports whether it existed.
func (t *topicTable) delete(name string) (bool, error) {
	t.mu.Lock()
	_, ok := t.topics[name]
	if ok {
		delete(t.topics, name)
		t.bumpLocked()
	}
	t.mu.Unlock()
	if !ok {
		return false, nil
	}
	return true, t.changed(nil)
}

// changed persists the table and tells onChange which topics changed
// (nil: any, register everything).
func (t *topicTable) changed(topics []string) error {
	err := t.persist()
	if t.onChange != nil {
		t.onChange(topics)
	}
	return err
}

// createInSend auto-creates topic from defaultTopic as
// createTopicInSendMessageMethod does; ok is false when it may not.
func (t *topicTable) createInSend(topic, defaultTopic string, clientQueueNums int32, sysFlag int32) (body.TopicConfig, bool) {
	t.mu.Lock()
	if tc, ok := t.topics[topic]; ok {
		t.mu.Unlock()
		return tc, true
	}
	def, ok := t.topics[defaultTopic]
	if ok && defaultTopic == TopicAutoCreate && !t.live.autoCreateTopic.Load() {
		// Like Java: with autoCreateTopicEnable off (even if turned off at
		// run time) TBW102 lends no inherit permission.
		def.Perm = body.PermRead | body.PermWrite
	}
	if !ok || def.Perm&body.PermInherit == 0 {
		t.mu.Unlock()
		t.log.Warn("auto-create topic refused", "topic", topic, "defaultTopic", defaultTopic, "exists", ok)
		return body.TopicConfig{}, false
	}
	n := t.capQueues(min(clientQueueNums, def.WriteQueueNums))
	if n < 0 {
		n = 0
	}
	topic = strings.Clone(topic) // names from requests alias their payload
	tc := body.NewTopicConfig(topic)
	tc.ReadQueueNums, tc.WriteQueueNums = n, n
	tc.Perm = def.Perm &^ body.PermInherit
	tc.TopicSysFlag = sysFlag
	tc.TopicFilterType = def.TopicFilterType
	t.topics[topic] = tc
	t.bumpLocked()
	t.mu.Unlock()
	t.log.Info("topic auto-created", "topic", topic, "defaultTopic", defaultTopic, "queues", n)
	if err := t.changed([]string{topic}); err != nil {
		t.log.Error("persist topics", "err", err)
	}
	return tc, true
}

// createIfAbsent creates a retry/DLQ-style topic with the given queues and
// perm (createTopicInSendMessageBackMethod).
func (t *topicTable) createIfAbsent(topic string, queues int32, perm int32, sysFlag int32) body.TopicConfig {
	t.mu.Lock()
	if tc, ok := t.topics[topic]; ok {
		t.mu.Unlock()
		return tc
	}
	topic = strings.Clone(topic)
	tc := body.NewTopicConfig(topic)
	queues = t.capQueues(queues)
	tc.ReadQueueNums, tc.WriteQueueNums = queues, queues
	tc.Perm = perm
	tc.TopicSysFlag = sysFlag
	t.topics[topic] = tc
	t.bumpLocked()
	t.mu.Unlock()
	t.log.Info("topic created", "topic", topic, "queues", queues, "perm", perm)
	if err := t.changed([]string{topic}); err != nil {
		t.log.Error("persist topics", "err", err)
	}
	return tc
}

// snapshot returns the data version and every topic sorted by name.
func (t *topicTable) snapshot() (body.TopicVersion, []body.TopicConfig) {
	t.mu.RLock()
	v := t.version
	out := make([]body.TopicConfig, 0, len(t.topics))
	for _, tc := range t.topics {
		out = append(out, tc)
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].TopicName < out[j].TopicName })
	return v, out
}

// snapshotOf returns the data version and the named topics sorted by
// name; complete is false when one of them no longer exists.
func (t *topicTable) snapshotOf(names []string) (v body.TopicVersion, out []body.TopicConfig, complete bool) {
	complete = true
	out = make([]body.TopicConfig, 0, len(names))
	t.mu.RLock()
	v = t.version
	for _, n := range names {
		if tc, ok := t.topics[n]; ok {
			out = append(out, tc)
		} else {
			complete = false
		}
	}
	t.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].TopicName < out[j].TopicName })
	return v, out, complete
}

// encode returns the topics.json content.
func (t *topicTable) encode() []byte {
	v, topics := t.snapshot()
	return body.AppendTopicConfigFile(nil, v, topics)
}

func (t *topicTable) persist() error {
	t.pmu.Lock()
	defer t.pmu.Unlock()
	return writeConfigFile(t.path, t.encode())
}
