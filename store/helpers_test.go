package store

import (
	"fmt"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/message"
)

func testConfig(t testing.TB, dir string) Config {
	cfg := DefaultConfig(dir)
	cfg.MappedFileSizeCommitLog = 1 << 20
	cfg.MappedFileSizeConsumeQueue = 1000 * CQUnitSize
	cfg.MaxMessageSize = 256 << 10
	cfg.MaxHashSlotNum = 1000
	cfg.MaxIndexNum = 4000
	cfg.FlushIntervalCommitLog = 10 * time.Millisecond
	cfg.FlushIntervalConsumeQueue = 20 * time.Millisecond
	cfg.DeleteWhen = "99" // never by hour
	return cfg
}

func openT(t testing.TB, cfg Config) *Store {
	t.Helper()
	s, err := Open(cfg)
	require.NoError(t, err)
	// Close is idempotent: a test that closes its store itself loses
	// nothing, and one that forgets cannot leave the store's loops writing
	// into a directory t.TempDir is removing.
	t.Cleanup(func() { _ = s.Close() })
	return s
}

var (
	bornHost  = netip.MustParseAddrPort("10.0.0.7:51234")
	storeHost = netip.MustParseAddrPort("192.168.0.1:10911")
)

func testMsg(topic string, qid int32, i int, bodyLen int) *message.Message {
	body := make([]byte, bodyLen)
	for j := range body {
		body[j] = byte(i + j)
	}
	var props []byte
	props = message.AppendProperty(props, message.PropertyTags, fmt.Sprintf("tag%d", i%3))
	props = message.AppendProperty(props, message.PropertyKeys, fmt.Sprintf("k%d shared", i))
	props = message.AppendProperty(props, message.PropertyUniqKey, fmt.Sprintf("U%030d", i))
	return &message.Message{
		Topic: topic, QueueID: qid, Body: body, Properties: string(props),
		BornTimestamp: 1700000000000 + int64(i), BornHost: bornHost, StoreHost: storeHost,
	}
}

// putSync appends m and waits for its result.
func putSync(t testing.TB, s *Store, m *message.Message) PutResult {
	t.Helper()
	ch := make(chan PutResult, 1)
	s.Put(m, func(r PutResult) { ch <- r })
	select {
	case r := <-ch:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("put did not complete")
		return PutResult{}
	}
}

// waitDispatched polls until the store dispatched everything written.
func waitDispatched(t testing.TB, s *Store) {
	t.Helper()
	require.Eventually(t, func() bool { return s.DispatchBehind() == 0 }, 10*time.Second, time.Millisecond)
}

type collector struct {
	mu  sync.Mutex
	res []PutResult
	wg  sync.WaitGroup
}

func (c *collector) done(r PutResult) {
	c.mu.Lock()
	c.res = append(c.res, r)
	c.mu.Unlock()
	c.wg.Done()
}

type timeT = time.Time

func timeMs(ms int64) time.Time { return time.UnixMilli(ms) }
