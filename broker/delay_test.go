package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// Delayed messages pending at a shutdown are delivered after the restart,
// once each, never before their time — also those that came due while the
// broker was down.
func TestDelayedMessagesSurviveRestart(t *testing.T) {
	root := t.TempDir()
	levels := func(c *Config) { c.MessageDelayLevel = "1s 3s" }
	tb, stop := startBrokerAt(t, root, levels)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("DR", 0, props("DELAY", "1"), []byte("due-while-down"))).Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("DR", 0, props("DELAY", "2"), []byte("due-after-restart"))).Code)
	sent := time.Now()
	tb.waitDispatched(t, TopicSchedule, 1, 1)
	require.Equal(t, int64(0), tb.store.MaxOffset("DR", 0), "delivered before its time")
	stop()
	// Stay down past the first message's time.
	time.Sleep(time.Until(sent.Add(1200 * time.Millisecond)))

	tb, _ = startBrokerAt(t, root, levels)
	tb.waitDispatched(t, "DR", 0, 1)
	first := time.Since(sent)
	tb.waitDispatched(t, "DR", 0, 2)
	second := time.Since(sent)
	require.GreaterOrEqual(t, second, 3*time.Second, "level 2 delivered early")
	require.Less(t, second, 5*time.Second)
	require.Less(t, first, 3*time.Second, "the message due while down waited too long")
	pulled := tb.invoke(t, pullReq("cg", "DR", 0, 0, pullFlagSubscription, 0, "*"))
	recs := decodeRecords(t, pulled.Body)
	require.Len(t, recs, 2)
	require.Equal(t, "due-while-down", string(recs[0].Body))
	require.Equal(t, "due-after-restart", string(recs[1].Body))
	t.Logf("delivered %v and %v after the send (levels 1s and 3s)", first.Round(time.Millisecond), second.Round(time.Millisecond))
}
