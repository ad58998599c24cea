package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

func TestTimerMessages(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	deliverAt := time.Now().Add(2500 * time.Millisecond).UnixMilli() // rounds down to >= now+1.5s, after "sooner"
	resp := tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", strconv.FormatInt(deliverAt, 10)), []byte("later")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "1"), []byte("sooner")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", "1"), []byte("now")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, timerTopic, 0, 2)
	tb.waitDispatched(t, "TM", 0, 1) // the past-due one goes straight through

	tb.waitDispatched(t, "TM", 0, 3)
	pull := tb.invoke(t, pullReq("cg", "TM", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), pull.Code)
	recs := decodeRecords(t, pull.Body)
	require.Len(t, recs, 3)
	require.Equal(t, "now", string(recs[0].Body))
	require.Equal(t, "sooner", string(recs[1].Body))
	require.Equal(t, "later", string(recs[2].Body))
	// Never early: re-stored into the real topic no sooner than requested,
	// and within one precision step after.
	require.GreaterOrEqual(t, recs[2].StoreTimestamp, deliverAt)
	require.Less(t, recs[2].StoreTimestamp, deliverAt+timerPrecisionMs+500)
	_, ok := message.Property(recs[2].Properties, "TIMER_DEQUEUE_MS")
	require.True(t, ok)
	require.Eventually(t, func() bool {
		cp, _ := tb.offsets.query(timerCheckGroup, timerTopic, 0)
		return cp == 2
	}, 2*time.Second, time.Millisecond)

	// Beyond the maximum delay, or unparsable: MESSAGE_ILLEGAL.
	far := strconv.FormatInt(time.Now().Add(4*24*time.Hour).UnixMilli(), 10)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELIVER_MS", far), []byte("x")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	resp = tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "soon"), []byte("x")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
}
