package broker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

// gatedStore blocks Put until the gate opens.
type gatedStore struct {
	*store.Store
	entered chan struct{}
	gate    chan struct{}
}

func (g *gatedStore) Put(m *message.Message, done func(store.PutResult)) {
	g.entered <- struct{}{}
	<-g.gate
	g.Store.Put(m, done)
}

// A send that waited in the queue longer than waitTimeMillsInSendQueue is
// refused with SYSTEM_BUSY instead of being stored late.
func TestSendQueueWaitFastFailure(t *testing.T) {
	root := t.TempDir()
	cfg := testConfig(root)
	cfg.SendMessageThreadPoolNums = 1
	cfg.WaitTimeMillsInSendQueue = 50
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	gs := &gatedStore{Store: st, entered: make(chan struct{}, 4), gate: make(chan struct{})}
	b, err := New(cfg, Deps{Logger: testLogger(), Store: gs})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	tb := &testBroker{Broker: b, cli: newTestClient(t), addr: b.Addr()}
	t.Cleanup(func() { require.NoError(t, b.Close()); require.NoError(t, st.Close()) })

	tb.topics.createIfAbsent("Busy", 1, 6, 0)
	first := make(chan *codec.Frame, 1)
	second := make(chan *codec.Frame, 1)
	go func() { first <- tb.invoke(t, sendV1("Busy", 0, "", []byte("1"))) }()
	<-gs.entered // the only worker is now stuck in Put
	go func() { second <- tb.invoke(t, sendV1("Busy", 0, "", []byte("2"))) }()
	require.Eventually(t, func() bool { return b.sendPool.Pending() == 1 }, 2*time.Second, time.Millisecond)
	time.Sleep(80 * time.Millisecond) // age the queued send past the 50 ms limit
	close(gs.gate)
	r1, r2 := <-first, <-second
	require.Equal(t, int32(codec.RespSuccess), r1.Code, r1.Remark)
	require.Equal(t, int32(codec.RespSystemBusy), r2.Code)
	require.True(t, strings.HasPrefix(r2.Remark, "[TIMEOUT_CLEAN_QUEUE]broker busy, start flow control for a while, period in queue: "), r2.Remark)
}

func TestPullTransferCap(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("Cap", 1, 6, 0)
	ctx := context.Background()
	for i := 0; i < 40; i++ {
		resp, err := tb.cli.Invoke(ctx, tb.addr, sendV1("Cap", 0, "", []byte("m")))
		require.NoError(t, err)
		require.Equal(t, int32(codec.RespSuccess), resp.Code)
	}
	tb.waitDispatched(t, "Cap", 0, 40)
	req := pullReq("cg", "Cap", 0, 0, pullFlagSubscription, 0, "*")
	req.Set("maxMsgNums", "64")
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Len(t, decodeRecords(t, resp.Body), 32)
	require.Equal(t, "32", ext(t, resp, "nextBeginOffset"))
}
