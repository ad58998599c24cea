package broker

import (
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
)

// brokerStats counts puts and gets for runtime info and stats requests.
type brokerStats struct {
	boot time.Time

	putMsgs, putBytes atomic.Int64
	getMsgs, getBytes atomic.Int64

	mu sync.Mutex
	// Counters sit behind pointers: assigning to a map entry rewrites its
	// key, and callers' names may alias pooled request buffers, so a key is
	// written once, as a private copy, when the entry is created.
	topicPut map[string]*int64     // guarded by mu
	groupGet map[groupTopic]*int64 // guarded by mu
}

func newBrokerStats() *brokerStats {
	return &brokerStats{boot: time.Now(), topicPut: make(map[string]*int64), groupGet: make(map[groupTopic]*int64)}
}

func (s *brokerStats) onPut(topic string, r store.PutResult) {
	if !putStored(r.Status) {
		return
	}
	n := int64(max(r.MsgCount, 1))
	s.putMsgs.Add(n)
	s.putBytes.Add(int64(r.WroteBytes))
	s.mu.Lock()
	c := s.topicPut[topic]
	if c == nil {
		c = new(int64)
		s.topicPut[strings.Clone(topic)] = c
	}
	*c += n
	s.mu.Unlock()
}

func (s *brokerStats) onGet(group, topic string, msgs, bytes int) {
	s.getMsgs.Add(int64(msgs))
	s.getBytes.Add(int64(bytes))
	k := groupTopic{topic: topic, group: group}
	s.mu.Lock()
	c := s.groupGet[k]
	if c == nil {
		c = new(int64)
		s.groupGet[groupTopic{topic: strings.Clone(topic), group: strings.Clone(group)}] = c
	}
	*c += int64(msgs)
	s.mu.Unlock()
}

func (s *brokerStats) topicPuts(topic string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.topicPut[topic]; c != nil {
		return *c
	}
	return 0
}

// groupGets takes Java's stats key "topic@group".
func (s *brokerStats) groupGets(key string) int64 {
	i := strings.LastIndexByte(key, '@')
	if i < 0 {
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.groupGet[groupTopic{topic: key[:i], group: key[i+1:]}]; c != nil {
		return *c
	}
	return 0
}

func pid() int { return os.Getpid() }
