package broker

import (
	"os"
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

	mu       sync.Mutex
	topicPut map[string]int64 // guarded by mu
	groupGet map[string]int64 // "topic@group"; guarded by mu
}

func newBrokerStats() *brokerStats {
	return &brokerStats{boot: time.Now(), topicPut: make(map[string]int64), groupGet: make(map[string]int64)}
}

func (s *brokerStats) onPut(topic string, r store.PutResult) {
	if r.Status != store.PutOK && r.Status != store.FlushDiskTimeout {
		return
	}
	n := int64(max(r.MsgCount, 1))
	s.putMsgs.Add(n)
	s.putBytes.Add(int64(r.WroteBytes))
	s.mu.Lock()
	s.topicPut[topic] += n
	s.mu.Unlock()
}

func (s *brokerStats) onGet(group, topic string, msgs, bytes int) {
	s.getMsgs.Add(int64(msgs))
	s.getBytes.Add(int64(bytes))
	s.mu.Lock()
	s.groupGet[topic+"@"+group] += int64(msgs)
	s.mu.Unlock()
}

func (s *brokerStats) topicPuts(topic string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topicPut[topic]
}

func (s *brokerStats) groupGets(key string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.groupGet[key]
}

func pid() int { return os.Getpid() }
