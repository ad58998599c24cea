package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/recall"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
)

func recallReq(topic, handle string) *codec.Frame {
	return request(codec.ReqRecallMessage, "producerGroup", "pg", "topic", topic, "recallHandle", handle, "bname", "broker-a")
}

func enableRecall(c *Config) { c.RecallMessageEnable = true }

// sendTimer sends a timer message due at `at` and returns its recall handle.
func sendTimer(t *testing.T, tb *testBroker, at int64, uniq string) string {
	t.Helper()
	resp := tb.invoke(t, timerAt(at, uniq))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	h := resp.Value("recallHandle")
	require.NotEmpty(t, h, "timer send response without recallHandle: %v", resp.Ext)
	return h
}

// The handle of a timer send names the real topic, this broker, the
// tick-rounded time plus one (Java's attachRecallHandle) and the UNIQ_KEY;
// a plain send has none.
func TestRecallHandleInSendResponse(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(5 * time.Second).UnixMilli()
	hd, err := recall.Decode(sendTimer(t, tb, at, "u1"))
	require.NoError(t, err)
	floor := at / 1000 * 1000
	if at%1000 == 0 {
		floor -= 1000
	}
	require.Equal(t, recall.Handle{Topic: "TM", BrokerName: "broker-a", Timestamp: strconv.FormatInt(floor+1, 10), MessageID: "u1"}, hd)

	resp := tb.invoke(t, sendV1("TM", 0, props("UNIQ_KEY", "plain"), []byte("plain")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Empty(t, resp.Value("recallHandle"))
	// A delay level is not a wheel timer: no handle either (Java the same).
	resp = tb.invoke(t, sendV1("TM", 0, props("DELAY", "1", "UNIQ_KEY", "lvl"), []byte("lvl")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Empty(t, resp.Value("recallHandle"))
}

// A recalled timer is never delivered; its neighbour in the same slot is.
func TestRecallDeletesTimer(t *testing.T) {
	tb := startBroker(t, enableRecall)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(1500 * time.Millisecond).UnixMilli()
	h := sendTimer(t, tb, at, "gone")
	sendTimer(t, tb, at, "keep")
	resp := tb.invoke(t, recallReq("TM", h))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "gone", resp.Value("msgId"))
	require.Equal(t, "DefaultRegion", resp.Value("MSG_REGION"))
	sendTimer(t, tb, at+1000, "keep2") // delivered a slot after: "gone" had its chance

	recs := tb.pullN(t, "TM", 2, 10*time.Second)
	require.Equal(t, "keep", string(recs[0].Body))
	require.Equal(t, "keep2", string(recs[1].Body))
	require.Equal(t, int64(2), tb.store.MaxOffset("TM", 0))
}

// A recall stored before a restart still cancels the timer after it.
func TestRecallSurvivesRestart(t *testing.T) {
	root := t.TempDir()
	tb, stop := startBrokerAt(t, root, enableRecall)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	at := time.Now().Add(3 * time.Second).UnixMilli()
	h := sendTimer(t, tb, at, "gone")
	sendTimer(t, tb, at, "keep")
	resp := tb.invoke(t, recallReq("TM", h))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, timerTopic, 0, 3)
	stop()

	tb2, _ := startBrokerAt(t, root, enableRecall)
	sendTimer(t, tb2, at+1000, "keep2")
	recs := tb2.pullN(t, "TM", 2, 10*time.Second)
	require.Equal(t, "keep", string(recs[0].Body))
	require.Equal(t, "keep2", string(recs[1].Body))
	require.Equal(t, int64(2), tb2.store.MaxOffset("TM", 0))
}

// Every refusal answers Java's code and remark, in Java's order.
func TestRecallRefusals(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	tb.topics.createIfAbsent("TN", 1, 6, 0)
	good := sendTimer(t, tb, time.Now().Add(10*time.Second).UnixMilli(), "u")

	// Off by default, as Java's recallMessageEnable.
	resp := tb.invoke(t, recallReq("TM", good))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, "recall failed, operation is forbidden", resp.Remark)
	require.Equal(t, "DefaultRegion", resp.Value("MSG_REGION"))
	require.Empty(t, resp.Value("msgId"))
	tb.live.recallEnable.Store(true)

	now := time.Now().UnixMilli()
	cases := []struct {
		name, topic, handle string
		code                codec.ResponseCode
		remark              string
	}{
		{"unknown topic", "Nope", good, codec.RespTopicNotExist, "recall failed, the topic[Nope] not exist"},
		{"empty handle", "TM", "", codec.RespIllegalOperation, "recall handle is invalid"},
		{"not base64", "TM", "v1 TM broker-a 1 u", codec.RespIllegalOperation, "recall handle is invalid"},
		{"garbage", "TM", "!!!!", codec.RespIllegalOperation, "recall handle is invalid"},
		{"topic mismatch", "TN", good, codec.RespIllegalOperation, "recall failed, topic not match"},
		{"other broker", "TM", recall.Encode("TM", "broker-b", now+5000, "u"), codec.RespIllegalOperation, "recall failed, broker service not available"},
		{"due already", "TM", recall.Encode("TM", "broker-a", now-1, "u"), codec.RespIllegalOperation, "recall failed, timestamp invalid"},
		{"too far", "TM", recall.Encode("TM", "broker-a", now+timerMaxDelayMs(&tb.cfg)+60_000, "u"), codec.RespIllegalOperation, "recall failed, timestamp invalid"},
		{"bad timestamp", "TM", "djEgVE0gYnJva2VyLWEgeCB1", codec.RespIllegalOperation, "recall failed, timestamp invalid"}, // "v1 TM broker-a x u"
	}
	for _, c := range cases {
		resp := tb.invoke(t, recallReq(c.topic, c.handle))
		require.Equal(t, int32(c.code), resp.Code, c.name)
		require.Equal(t, c.remark, resp.Remark, c.name)
		require.Empty(t, resp.Value("msgId"), c.name)
	}

	// Like Java: a well-formed handle of this broker is not looked up.
	resp = tb.invoke(t, recallReq("TM", recall.Encode("TM", "broker-a", now+5000, "never-sent")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "never-sent", resp.Value("msgId"))

	// Not writeable: allowed by default (allowRecallWhenBrokerNotWriteable).
	tb.live.perm.Store(body.PermRead)
	resp = tb.invoke(t, recallReq("TM", good))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.live.recallWhenNotWritable.Store(false)
	resp = tb.invoke(t, recallReq("TM", good))
	require.Equal(t, int32(codec.RespServiceNotAvailable), resp.Code)
	require.Equal(t, "recall failed, broker service not available", resp.Remark)
}

// The marker is stored as Java builds it: a timer record of the real topic
// with TIMER_DEL_UNIQKEY "topic+uniqKey", tag _RECALL_TAG_, body "0".
func TestRecallMarkerRecord(t *testing.T) {
	tb := startBroker(t, enableRecall)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	h := sendTimer(t, tb, time.Now().Add(20*time.Second).UnixMilli(), "u9")
	resp := tb.invoke(t, recallReq("TM", h))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, timerTopic, 0, 2)
	recs := tb.pullN(t, timerTopic, 2, 5*time.Second)
	m := recs[1]
	require.Equal(t, "0", string(m.Body))
	hd, err := recall.Decode(h)
	require.NoError(t, err)
	for k, want := range map[string]string{
		"TIMER_DEL_UNIQKEY": "TM+u9", "UNIQ_KEY": "u9", "TAGS": "_RECALL_TAG_", "REAL_TOPIC": "TM",
		"REAL_QID": "0", "TIMER_DELIVER_MS": hd.Timestamp, "PGROUP": "pg",
		"TIMER_OUT_MS": strconv.FormatInt(hd.TimestampMs()-1, 10),
	} {
		v, ok := message.Property(m.Properties, k)
		require.True(t, ok, k)
		require.Equal(t, want, v, k)
	}
}
