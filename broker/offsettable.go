package broker

import (
	"maps"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
)

// groupTopic keys offsets without building "topic@group" strings on the
// hot path.
type groupTopic struct {
	topic, group string
}

// offsetTable holds committed consumer offsets (consumerOffset.json): the
// next offset each group consumes from each queue.
type offsetTable struct {
	path string
	pmu  sync.Mutex // serializes writes of the file

	mu      sync.RWMutex
	table   map[groupTopic]map[int32]int64 // guarded by mu
	pulled  map[groupTopic]map[int32]int64 // last pull offsets (admin stats); guarded by mu
	version body.TopicVersion              // guarded by mu
}

func newOffsetTable(cfg *Config) *offsetTable {
	return &offsetTable{
		path:    filepath.Join(cfg.StorePathRootDir, "config", "consumerOffset.json"),
		table:   make(map[groupTopic]map[int32]int64),
		pulled:  make(map[groupTopic]map[int32]int64),
		version: body.TopicVersion{Timestamp: time.Now().UnixMilli()},
	}
}

func (o *offsetTable) load() error {
	return loadConfigFile(o.path, "consumer offsets", body.DecodeConsumerOffsetFile, func(f body.ConsumerOffsetFile) {
		o.mu.Lock()
		defer o.mu.Unlock()
		for key, queues := range f.OffsetTable {
			i := strings.LastIndexByte(key, '@')
			if i < 0 {
				continue
			}
			o.table[groupTopic{topic: key[:i], group: key[i+1:]}] = maps.Clone(queues)
		}
	})
}

// commit stores offset for (group, topic, queue).
func (o *offsetTable) commit(group, topic string, queueID int32, offset int64) {
	k := groupTopic{topic: topic, group: group}
	o.mu.Lock()
	m := o.table[k]
	if m == nil {
		m = make(map[int32]int64)
		o.table[groupTopic{topic: strings.Clone(topic), group: strings.Clone(group)}] = m
	}
	m[queueID] = offset
	o.mu.Unlock()
}

// notePull records the offset a group last pulled from.
func (o *offsetTable) notePull(group, topic string, queueID int32, offset int64) {
	k := groupTopic{topic: topic, group: group}
	o.mu.Lock()
	m := o.pulled[k]
	if m == nil {
		m = make(map[int32]int64)
		o.pulled[groupTopic{topic: strings.Clone(topic), group: strings.Clone(group)}] = m
	}
	m[queueID] = offset
	o.mu.Unlock()
}

// query returns the committed offset, or false when none is stored.
func (o *offsetTable) query(group, topic string, queueID int32) (int64, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	off, ok := o.table[groupTopic{topic: topic, group: group}][queueID]
	return off, ok
}

func (o *offsetTable) pullOffset(group, topic string, queueID int32) (int64, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	off, ok := o.pulled[groupTopic{topic: topic, group: group}][queueID]
	return off, ok
}

// groupsOf lists the groups with offsets on topic, sorted.
func (o *offsetTable) groupsOf(topic string) []string {
	o.mu.RLock()
	var out []string
	for k := range o.table {
		if k.topic == topic {
			out = append(out, k.group)
		}
	}
	o.mu.RUnlock()
	sort.Strings(out)
	return out
}

// offsetsOf returns a copy of group's committed offsets on topic, nil when
// it has none.
func (o *offsetTable) offsetsOf(group, topic string) map[int32]int64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	m := o.table[groupTopic{topic: topic, group: group}]
	if m == nil {
		return nil
	}
	out := make(map[int32]int64, len(m))
	for q, off := range m {
		out[q] = off
	}
	return out
}

// topicsOf lists the topics group has offsets on, sorted.
func (o *offsetTable) topicsOf(group string) []string {
	o.mu.RLock()
	var out []string
	for k := range o.table {
		if k.group == group {
			out = append(out, k.topic)
		}
	}
	o.mu.RUnlock()
	sort.Strings(out)
	return out
}

// removeGroup drops every offset of group (DELETE_SUBSCRIPTIONGROUP cleanOffset).
func (o *offsetTable) removeGroup(group string) {
	o.mu.Lock()
	for k := range o.table {
		if k.group == group {
			delete(o.table, k)
		}
	}
	o.mu.Unlock()
}

// removeTopic drops every offset on topic.
func (o *offsetTable) removeTopic(topic string) {
	o.mu.Lock()
	for k := range o.table {
		if k.topic == topic {
			delete(o.table, k)
		}
	}
	o.mu.Unlock()
}

func (o *offsetTable) encode() []byte {
	o.mu.RLock()
	out := make(map[string]map[int32]int64, len(o.table))
	for k, m := range o.table {
		c := make(map[int32]int64, len(m))
		for q, off := range m {
			c[q] = off
		}
		out[k.topic+"@"+k.group] = c
	}
	v := o.version
	o.mu.RUnlock()
	return body.AppendConsumerOffsetFile(nil, v, out)
}

func (o *offsetTable) persist() error {
	o.pmu.Lock()
	defer o.pmu.Unlock()
	return writeConfigFile(o.path, o.encode())
}
