package broker

import (
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// recordingNamesrv accepts REGISTER_BROKER on 127.0.0.1, answers SUCCESS
// and keeps the topics of every registration body in order.
type recordingNamesrv struct {
	ln   net.Listener
	mu   sync.Mutex
	regs []body.RegisterBrokerBody
}

func startRecordingNamesrv(t *testing.T) *recordingNamesrv {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ns := &recordingNamesrv{ln: ln}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() { defer wg.Done(); ns.serve(c) }()
			t.Cleanup(func() { c.Close() })
		}
	}()
	return ns
}

func (ns *recordingNamesrv) serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 0, 1<<16)
	for {
		if len(buf) == cap(buf) {
			buf = slices.Grow(buf, cap(buf))
		}
		n, err := c.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		for {
			payload, used, ferr := codec.NextFrame(buf, codec.DefaultMaxFrameLength)
			if ferr != nil || used == 0 {
				break
			}
			var f codec.Frame
			if codec.Decode(append([]byte(nil), payload...), &f) == nil && !f.IsResponse() {
				if f.Code == int32(codec.ReqRegisterBroker) {
					if rb, err := body.DecodeRegisterBrokerBody(f.Body, false, f.Version); err == nil {
						ns.mu.Lock()
						ns.regs = append(ns.regs, rb)
						ns.mu.Unlock()
					}
				}
				if !f.IsOneway() {
					_, _ = c.Write(codec.NewResponse(&f, int32(codec.RespSuccess), "").AppendTo(nil))
				}
			}
			buf = buf[:copy(buf, buf[used:])]
		}
		if err != nil {
			return // closed by the broker or by the test
		}
	}
}

// topicsOf lists the topic names of every registration so far.
func (ns *recordingNamesrv) topicsOf() [][]string {
	ns.mu.Lock()
	defer ns.mu.Unlock()
	out := make([][]string, len(ns.regs))
	for i, rb := range ns.regs {
		for _, tc := range rb.Topics {
			out[i] = append(out[i], tc.TopicName)
		}
		slices.Sort(out[i])
	}
	return out
}

// Creating topics one by one registers each alone (Java's
// registerIncrementBrokerData), not the whole table each time; a delete
// registers the whole table again.
func TestTopicChangesRegisterIncrementally(t *testing.T) {
	ns := startRecordingNamesrv(t)
	tb := startBroker(t, func(c *Config) { c.NamesrvAddr = ns.ln.Addr().String(); c.FastListen = false })
	require.Len(t, ns.topicsOf(), 1, "start registers once")
	all := ns.topicsOf()[0]
	require.Contains(t, all, TopicAutoCreate)

	for _, name := range []string{"IncrA", "IncrB", "IncrC"} {
		resp := tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", name, "defaultTopic", TopicAutoCreate,
			"readQueueNums", "8", "writeQueueNums", "8", "perm", "6", "topicFilterType", "SINGLE_TAG", "topicSysFlag", "0", "order", "false"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	seen := func() map[string]bool {
		m := map[string]bool{}
		for _, names := range ns.topicsOf()[1:] {
			for _, n := range names {
				m[n] = true
			}
		}
		return m
	}
	require.Eventually(t, func() bool { s := seen(); return s["IncrA"] && s["IncrB"] && s["IncrC"] }, 10*time.Second, 10*time.Millisecond)
	regs := ns.topicsOf()
	for i, names := range regs[1:] {
		require.NotContains(t, names, TopicAutoCreate, "registration %d after start carries only created topics: %v", i+1, names)
		require.LessOrEqual(t, len(names), 3)
	}
	ns.mu.Lock()
	// Each carries the table's data version at its sending: never older
	// than the one before (a periodic or coalesced registration may repeat
	// it), and the three creations moved it.
	for i := 1; i < len(ns.regs); i++ {
		require.GreaterOrEqual(t, ns.regs[i].DataVersion.Counter, ns.regs[i-1].DataVersion.Counter, "registration %d", i)
	}
	require.Greater(t, ns.regs[len(ns.regs)-1].DataVersion.Counter, ns.regs[0].DataVersion.Counter)
	ns.mu.Unlock()

	// A delete: the next registration carries the whole table, without it.
	before := len(regs)
	resp := tb.invoke(t, request(codec.ReqDeleteTopicInBroker, "topic", "IncrB"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return len(ns.topicsOf()) > before }, 10*time.Second, 10*time.Millisecond)
	last := ns.topicsOf()[before]
	require.Contains(t, last, TopicAutoCreate)
	require.Contains(t, last, "IncrA")
	require.NotContains(t, last, "IncrB")
}

// Against a real name server, incremental registrations keep the routes
// of the topics they do not carry.
func TestIncrementalRegistrationKeepsOtherRoutes(t *testing.T) {
	ns := startNamesrv(t)
	tb := startBroker(t, func(c *Config) { c.NamesrvAddr = ns; c.FastListen = false })
	for _, name := range []string{"KeepA", "KeepB"} {
		resp := tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", name, "defaultTopic", TopicAutoCreate,
			"readQueueNums", "4", "writeQueueNums", "4", "perm", "6", "topicFilterType", "SINGLE_TAG", "topicSysFlag", "0", "order", "false"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	require.Eventually(t, func() bool {
		return tb.route(t, ns, "KeepA").Code == int32(codec.RespSuccess) && tb.route(t, ns, "KeepB").Code == int32(codec.RespSuccess)
	}, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(codec.RespSuccess), tb.route(t, ns, TopicAutoCreate).Code)
}
