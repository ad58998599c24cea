package broker

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store"
)

// Tests of the pooled requests' lifetimes (pullRequest, sendCtx, the
// transport's leases): bursts of pipelined requests on a connection that
// closes while replies are being written, held pulls whose connection
// closes. Run them with -race too: then strictOwnership and strictLeases
// never reuse a freed object, so a touch after free or a second free fails
// where it happens.

// problemLog is a slog.Handler keeping every record at Error level and
// every record that mentions a panic, so a test can require that none
// happened (the transport logs a recovered handler panic at Error).
type problemLog struct {
	mu   sync.Mutex
	msgs []string
}

func (h *problemLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *problemLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *problemLog) WithGroup(string) slog.Handler            { return h }

func (h *problemLog) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	r.Attrs(func(a slog.Attr) bool {
		if a.Key != "stack" {
			b.WriteString(" " + a.Key + "=" + a.Value.String())
		}
		return true
	})
	line := b.String()
	if r.Level >= slog.LevelError || strings.Contains(line, "panic") {
		h.mu.Lock()
		h.msgs = append(h.msgs, line)
		h.mu.Unlock()
	}
	return nil
}

func (h *problemLog) problems() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.msgs...)
}

// hookStore wraps the test store; getHook, when set, runs before each
// GetMessages.
type hookStore struct {
	MessageStore
	getHook atomic.Pointer[func(topic string)]
}

func (s *hookStore) GetMessages(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, f *store.Filter, res *store.GetResult) {
	if h := s.getHook.Load(); h != nil {
		(*h)(topic)
	}
	s.MessageStore.GetMessages(topic, queueID, offset, maxMsgs, maxBytes, f, res)
}

// startWatchedBroker is startBroker with the broker logging into a
// problemLog and its store wrapped in a hookStore.
func startWatchedBroker(t *testing.T, mutate func(*Config)) (*testBroker, *problemLog, *hookStore) {
	t.Helper()
	cfg := testConfig(t.TempDir())
	if mutate != nil {
		mutate(&cfg)
	}
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	hs := &hookStore{MessageStore: st}
	pl := &problemLog{}
	b, err := New(cfg, Deps{Logger: slog.New(pl), Store: hs})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, st.Close())
	})
	return &testBroker{Broker: b, cli: newTestClient(t), addr: b.Addr()}, pl, hs
}

// pipeline writes frames to a fresh raw connection in one go (bounded by
// a deadline: a server that stops reading ends the write early) and
// returns the connection, still open.
func pipeline(t *testing.T, addr string, frames [][]byte) net.Conn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	var all []byte
	for _, f := range frames {
		all = append(all, f...)
	}
	require.NoError(t, nc.SetWriteDeadline(time.Now().Add(3*time.Second)))
	_, _ = nc.Write(all)
	return nc
}

// closeMidReply reads a few bytes of the first reply, then closes with a
// reset, so the broker's writes of the rest fail at any point.
func closeMidReply(t *testing.T, nc net.Conn) {
	t.Helper()
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
	var b [16]byte
	_, _ = nc.Read(b[:])
	if tc, ok := nc.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	require.NoError(t, nc.Close())
}

func (tb *testBroker) fill(t *testing.T, topic string, q, n int, size int) {
	t.Helper()
	body := make([]byte, size)
	for range n {
		resp := tb.invoke(t, sendV1(topic, q, "", body))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	tb.waitDispatched(t, topic, int32(q), int64(n))
}

// requireQuiet waits until every pooled pull and send is freed, then
// checks nothing panicked or freed twice on the way.
func requireQuiet(t *testing.T, tb *testBroker, pl *problemLog) {
	t.Helper()
	require.Eventually(t, func() bool {
		return tb.pull.inflight.Load() == 0 && tb.send.inflight.Load() == 0 && tb.pull.holds.held() == 0
	}, 20*time.Second, 5*time.Millisecond, "pulls %d, sends %d, held %d still live",
		tb.pull.inflight.Load(), tb.send.inflight.Load(), tb.pull.holds.held())
	require.Empty(t, pl.problems())
}

// 2,000 pipelined pulls of a backlog, then the connection resets while
// their replies are being written: every pull is freed exactly once and
// nothing touches one after its write's callback freed it (the old code
// logged its connection after WriteWithBody, by then freed: a nil
// dereference per failed write).
func TestPullBurstThenCloseMidReply(t *testing.T) {
	tb, pl, _ := startWatchedBroker(t, nil)
	tb.fill(t, "PullBurst", 0, 64, 1024)
	frames := make([][]byte, 2000)
	for i := range frames {
		f := pullReq("cg", "PullBurst", 0, int64(i%32), pullFlagSubscription, 0, "*")
		f.Opaque = int32(i + 1)
		frames[i] = f.AppendTo(nil)
	}
	closeMidReply(t, pipeline(t, tb.addr, frames))
	requireQuiet(t, tb, pl)
}

// The same for sends: each is stored, its reply fails, its context and
// lease are recycled once.
func TestSendBurstThenCloseMidReply(t *testing.T) {
	tb, pl, _ := startWatchedBroker(t, nil)
	frames := make([][]byte, 2000)
	for i := range frames {
		frames[i] = sendV2Wire("SendBurst", i%4, "", make([]byte, 256))
	}
	closeMidReply(t, pipeline(t, tb.addr, frames))
	requireQuiet(t, tb, pl)
}

// Held pulls whose connection closes, then a message arrives: each re-run
// finds the connection closed and frees its pull once.
func TestHeldPullsConnCloseThenArrival(t *testing.T) {
	tb, pl, _ := startWatchedBroker(t, nil)
	tb.topics.createIfAbsent("HeldClose", 1, 6, 0)
	const n = 200
	frames := make([][]byte, n)
	for i := range frames {
		f := pullReq("cg", "HeldClose", 0, 0, pullFlagSuspend|pullFlagSubscription, 20000, "*")
		f.Opaque = int32(i + 1)
		frames[i] = f.AppendTo(nil)
	}
	nc := pipeline(t, tb.addr, frames)
	require.Eventually(t, func() bool { return tb.pull.holds.held() == n }, 5*time.Second, time.Millisecond)
	c := tb.heldConn(t, "HeldClose")
	require.NoError(t, nc.Close())
	require.Eventually(t, c.Closed, 5*time.Second, time.Millisecond)
	resp := tb.invoke(t, sendV1("HeldClose", 0, "", []byte("wake")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	requireQuiet(t, tb, pl)
}

// A held pull whose connection closes after its re-run checked it, while
// the re-run reads the store: the reply's write fails, its callback frees
// the pull before WriteWithBody returns, and nothing touches it after.
// (The old code dereferenced the freed pull on a hold-table goroutine,
// which has no recover: the process died.)
func TestHeldPullConnClosesDuringRerun(t *testing.T) {
	tb, pl, hs := startWatchedBroker(t, nil)
	tb.topics.createIfAbsent("HeldRerun", 1, 6, 0)
	nc := pipeline(t, tb.addr, [][]byte{pullReq("cg", "HeldRerun", 0, 0, pullFlagSuspend|pullFlagSubscription, 20000, "*").AppendTo(nil)})
	require.Eventually(t, func() bool { return tb.pull.holds.held() == 1 }, 5*time.Second, time.Millisecond)
	c := tb.heldConn(t, "HeldRerun")
	var once sync.Once
	hook := func(topic string) {
		if topic != "HeldRerun" {
			return
		}
		once.Do(func() {
			_ = nc.Close()
			deadline := time.Now().Add(5 * time.Second)
			for !c.Closed() && time.Now().Before(deadline) {
				time.Sleep(time.Millisecond) // polling the close, with a deadline
			}
		})
	}
	hs.getHook.Store(&hook)
	resp := tb.invoke(t, sendV1("HeldRerun", 0, "", []byte("wake")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	requireQuiet(t, tb, pl)
	require.True(t, c.Closed())
}

// heldConn is the server side of the connection holding a pull on topic.
func (tb *testBroker) heldConn(t *testing.T, topic string) *transport.Conn {
	t.Helper()
	h := tb.pull.holds
	h.mu.Lock()
	defer h.mu.Unlock()
	l := h.queues[holdKey{topic, 0}]
	require.NotNil(t, l)
	require.NotEmpty(t, l.prs)
	return l.prs[0].c
}

// fakeOffsets is a MessageStore whose MaxOffset runs a hook (the rest of
// the interface is never called).
type fakeOffsets struct {
	MessageStore
	maxOffset func() int64
}

func (f *fakeOffsets) MaxOffset(string, int32) int64 { return f.maxOffset() }

// park's re-check must not claim its pull once that was answered, freed
// and parked again as another pull: the old code woke (and so answered
// early) whatever pull the recycled pullRequest then served.
func TestParkRecheckLeavesReparkedRequest(t *testing.T) {
	var runs []*pullRequest
	fs := &fakeOffsets{}
	ht := newHoldTable(func(pr *pullRequest) { runs = append(runs, pr) }, fs, testLogger())
	ht.wake = make(chan *pullRequest) // no wake workers: dispatch runs here
	pr := &pullRequest{deadline: time.Now().Add(time.Hour), sub: filter.Subscription{Tag: filter.TagFilter{All: true}}}
	pr.h.Topic, pr.h.QueueOffset = "T", 5
	nested := false
	fs.maxOffset = func() int64 {
		if !nested {
			// Meanwhile: a message arrived, pr was woken and answered, and
			// the pool gave it to a new pull, which found nothing and parked.
			nested = true
			ht.arrived("T", 0, 6, 0, "")
			require.Equal(t, []*pullRequest{pr}, runs)
			pr.h.QueueOffset = 9
			ht.park(pr)
			return 6 // the second parking's re-check: nothing new for it
		}
		return 6
	}
	ht.park(pr)
	require.Len(t, runs, 1, "the re-check of the first parking woke the second")
	require.Equal(t, 1, ht.held())
}

// A second free is caught: it panics in race-detector builds and is
// logged and ignored otherwise, leaving the count of live pulls right.
func TestPullRequestDoubleFreeDetected(t *testing.T) {
	pl := &problemLog{}
	p := &pullProcessor{log: slog.New(pl)}
	pr := p.alloc(nil, &codec.Frame{}, nil)
	p.free(pr)
	if strictOwnership {
		require.PanicsWithValue(t, "broker: pullRequest freed twice", func() { p.free(pr) })
	} else {
		p.free(pr)
		require.Len(t, pl.problems(), 1)
	}
	require.Zero(t, p.inflight.Load())
}
