package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

func sendBackReq(offset int64, group string, delayLevel, maxTimes int) *codec.Frame {
	return request(codec.ReqConsumerSendMsgBack, "offset", strconv.FormatInt(offset, 10), "group", group,
		"delayLevel", strconv.Itoa(delayLevel), "originMsgId", "", "originTopic", "RT", "unitMode", "false",
		"maxReconsumeTimes", strconv.Itoa(maxTimes))
}

func TestSendBackRetriesAfterDelayThenDLQ(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.MessageDelayLevel = "1s 1s 1s 1s 1s" })
	resp := tb.invoke(t, sendV1("RT", 0, props("TAGS", "T", "UNIQ_KEY", "AABBCCDDEEFF00112233445566778899"), []byte("payload")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	origID := ext(t, resp, "msgId")
	_, phy, err := message.DecodeOffsetMsgID(origID)
	require.NoError(t, err)

	resp = tb.invoke(t, sendBackReq(phy, "cg", 0, 16))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	// Scheduled at level 3 (3 + reconsumeTimes 0): nothing in the retry
	// topic yet, one record in SCHEDULE_TOPIC_XXXX queue 2.
	tb.waitDispatched(t, TopicSchedule, 2, 1)
	require.Equal(t, int64(0), tb.store.MaxOffset("%RETRY%cg", 0))

	start := time.Now()
	tb.waitDispatched(t, "%RETRY%cg", 0, 1)
	require.Greater(t, time.Since(start), 300*time.Millisecond)
	resp = tb.invoke(t, pullReq("cg", "%RETRY%cg", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 1)
	r := recs[0]
	require.Equal(t, "payload", string(r.Body))
	require.Equal(t, int32(1), r.ReconsumeTimes)
	get := func(k string) string { v, _ := message.Property(r.Properties, k); return v }
	require.Equal(t, "RT", get("RETRY_TOPIC"))
	require.Equal(t, origID, get("ORIGIN_MESSAGE_ID"))
	require.Equal(t, "AABBCCDDEEFF00112233445566778899", get("UNIQ_KEY"))
	require.Equal(t, "%RETRY%cg", get("REAL_TOPIC"))
	// Java's delivered record keeps the scheduled record's DELAY (its
	// clearProperty comes after the stored properties string is built).
	require.Equal(t, "3", get("DELAY"))

	// Past maxReconsumeTimes the message goes to the DLQ at once.
	resp = tb.invoke(t, sendBackReq(r.PhysicalOffset, "cg", 0, 1))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "%DLQ%cg", 0, 1)
	_, ok := tb.topics.get("%DLQ%cg")
	require.True(t, ok)

	// Unknown offset.
	resp = tb.invoke(t, sendBackReq(1<<40, "cg", 0, 16))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "look message by offset failed, 1099511627776", resp.Remark)
}

// A plain send into %RETRY%<group> past maxReconsumeTimes is diverted to
// the DLQ (the clients' fallback path).
func TestRetryTopicSendToDLQ(t *testing.T) {
	tb := startBroker(t, nil)
	req := sendV1("%RETRY%cg2", 0, props("TAGS", "x"), []byte("x"))
	req.Set("reconsumeTimes", "3")
	req.Set("maxReconsumeTimes", "2")
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "%DLQ%cg2", 0, 1)

	req = sendV1("%RETRY%cg2", 0, props("TAGS", "x"), []byte("y"))
	req.Set("reconsumeTimes", "1")
	req.Set("maxReconsumeTimes", "2")
	resp = tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "%RETRY%cg2", 0, 1)
}

func TestDelayedSend(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.MessageDelayLevel = "1s 5s" })
	resp := tb.invoke(t, sendV1("DL", 0, props("DELAY", "1"), []byte("later")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	sent := time.Now()
	tb.waitDispatched(t, TopicSchedule, 0, 1)
	require.Equal(t, int64(0), tb.store.MaxOffset("DL", 0))
	tb.waitDispatched(t, "DL", 0, 1)
	require.GreaterOrEqual(t, time.Since(sent), 900*time.Millisecond)
	// The delay progress is persisted.
	require.Eventually(t, func() bool {
		tb.delay.mu.Lock()
		defer tb.delay.mu.Unlock()
		return tb.delay.offsets[1] == 1
	}, 2*time.Second, time.Millisecond)
}
