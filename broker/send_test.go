package broker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

func TestSendThenPullRoundTrip(t *testing.T) {
	tb := startBroker(t, nil)
	var offsets []string
	for i := 0; i < 3; i++ {
		resp := tb.invoke(t, sendV1("RoundTrip", 1, props("TAGS", "TagA", "KEYS", "k1"), []byte("hello-"+string(rune('0'+i)))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		require.Equal(t, "1", ext(t, resp, "queueId"))
		require.Equal(t, string(rune('0'+i)), ext(t, resp, "queueOffset"))
		id := ext(t, resp, "msgId")
		require.Len(t, id, 32)
		addr, phy, err := message.DecodeOffsetMsgID(id)
		require.NoError(t, err)
		require.Equal(t, tb.BrokerAddr(), addr.String())
		offsets = append(offsets, id)
		_ = phy
		require.Len(t, ext(t, resp, "transactionId"), 32)
		require.Equal(t, "DefaultRegion", ext(t, resp, "MSG_REGION"))
		require.Equal(t, "true", ext(t, resp, "TRACE_ON"))
	}
	// The topic was auto-created from TBW102 with min(4, 8) queues.
	tc, ok := tb.topics.get("RoundTrip")
	require.True(t, ok)
	require.Equal(t, int32(4), tc.WriteQueueNums)

	tb.waitDispatched(t, "RoundTrip", 1, 3)
	resp := tb.invoke(t, pullReq("cg", "RoundTrip", 1, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	require.Equal(t, "0", ext(t, resp, "minOffset"))
	require.Equal(t, "3", ext(t, resp, "maxOffset"))
	require.Equal(t, "0", ext(t, resp, "suggestWhichBrokerId"))
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 3)
	for i, r := range recs {
		require.Equal(t, "RoundTrip", r.Topic)
		require.Equal(t, int64(i), r.QueueOffset)
		require.Equal(t, "hello-"+string(rune('0'+i)), string(r.Body))
		tags, _ := message.Property(r.Properties, "TAGS")
		require.Equal(t, "TagA", tags)
		cluster, _ := message.Property(r.Properties, "CLUSTER")
		require.Equal(t, "DefaultCluster", cluster)
		uniq, _ := message.Property(r.Properties, "UNIQ_KEY")
		require.Len(t, uniq, 32)
		require.Equal(t, offsets[i], message.OffsetMsgID(r.StoreHost, r.PhysicalOffset))
	}

	// At the end: PULL_NOT_FOUND with exact offsets, no suspend flag.
	resp = tb.invoke(t, pullReq("cg", "RoundTrip", 1, 3, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code)
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	// Beyond the end: PULL_OFFSET_MOVED to maxOffset.
	resp = tb.invoke(t, pullReq("cg", "RoundTrip", 1, 10, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespPullOffsetMoved), resp.Code)
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	// Tag filter that matches nothing: PULL_RETRY_IMMEDIATELY past the range.
	resp = tb.invoke(t, pullReq("cg", "RoundTrip", 1, 0, pullFlagSubscription, 0, "TagB"))
	require.Equal(t, int32(codec.RespPullRetryImmediately), resp.Code)
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	// Empty queue: PULL_NOT_FOUND at 0.
	resp = tb.invoke(t, pullReq("cg", "RoundTrip", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code)
	require.Equal(t, "0", ext(t, resp, "nextBeginOffset"))
}

func TestSendBadInput(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.MaxMessageSize = 32 << 10 })
	cases := []struct {
		name   string
		req    *codec.Frame
		code   codec.ResponseCode
		remark string
	}{
		{"illegal chars", sendV1("bad topic!", 0, "", []byte("x")), codec.RespInvalidParameter, "contains illegal characters"},
		{"too long", sendV1(strings.Repeat("t", 128), 0, "", []byte("x")), codec.RespInvalidParameter, "longer than topic max length: 127"},
		{"blank", sendV1("", 0, "", []byte("x")), codec.RespInvalidParameter, "The specified topic is blank."},
		{"forbidden", sendV1("SCHEDULE_TOPIC_XXXX", 0, "", []byte("x")), codec.RespNoPermission, "Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden."},
		{"oversize", sendV1("T1", 0, "", make([]byte, 32<<10+1)), codec.RespMessageIllegal, "msg body length limit 32768B"},
		{"queue out of range", sendV1("TBW102", 8, "", []byte("x")), codec.RespInvalidParameter, "request queueId[8] is illegal"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := tb.invoke(t, c.req)
			require.Equal(t, int32(c.code), resp.Code, resp.Remark)
			require.Contains(t, resp.Remark, c.remark)
		})
	}
	// Broken batch.
	b := batchV2("T2", 0, "", []byte{0, 0, 0, 99, 1, 2})
	resp := tb.invoke(t, b)
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	// Unknown code.
	resp = tb.invoke(t, request(codec.RequestCode(9999)))
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code)
	require.Equal(t, " request type 9999 not supported", resp.Remark)
	// Auto-creation refused when the default topic is not a template.
	nt := sendV1("NoTemplate", 0, "", []byte("x"))
	nt.Set("defaultTopic", "SELF_TEST_TOPIC")
	resp = tb.invoke(t, nt)
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code)
	require.True(t, strings.HasPrefix(resp.Remark, "topic[NoTemplate] not exist, apply first please!"))
	// Still serving.
	resp = tb.invoke(t, sendV1("T3", 0, "", []byte("ok")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

func TestSendBatch(t *testing.T) {
	tb := startBroker(t, nil)
	var body []byte
	for i := 0; i < 3; i++ {
		body = message.AppendBatchEntry(body, int32(i), []byte{byte('a' + i)}, props("KEYS", "k"))
	}
	req := batchV2("Batch", 2, "", body)
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	ids := strings.Split(ext(t, resp, "msgId"), ",")
	require.Len(t, ids, 3)
	require.Equal(t, "0", ext(t, resp, "queueOffset"))

	tb.waitDispatched(t, "Batch", 2, 3)
	resp = tb.invoke(t, pullReq("cg", "Batch", 2, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 3)
	for i, r := range recs {
		require.Equal(t, int32(i), r.Flag)
		require.Equal(t, []byte{byte('a' + i)}, r.Body)
		require.Equal(t, ids[i], message.OffsetMsgID(r.StoreHost, r.PhysicalOffset))
	}
}

func TestSendMaxSizeBoundary(t *testing.T) {
	tb := startBroker(t, nil) // maxMessageSize 1 MiB
	resp := tb.invoke(t, sendV1("Big", 0, "", make([]byte, 1<<20)))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("Big", 0, "", make([]byte, 1<<20+1)))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	require.Contains(t, resp.Remark, "msg body length limit 1048576B")
}

// Java's SEND_MESSAGE_V2 (one-letter keys), sent with the binary header.
func TestSendV2BinaryHeader(t *testing.T) {
	tb := startBroker(t, nil)
	req := request(codec.ReqSendMessageV2, "a", "pg", "b", "V2Topic", "c", "TBW102", "d", "4", "e", "2", "f", "0",
		"g", "1700000000000", "h", "7", "i", props("TAGS", "x"), "j", "0", "k", "false", "m", "false", "n", "broker-a")
	req.Language = codec.LangJava
	req.Serialize = codec.SerializeRocketMQ
	req.Body = []byte("v2")
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "2", ext(t, resp, "queueId"))
	tb.waitDispatched(t, "V2Topic", 2, 1)
	pull := tb.invoke(t, pullReq("cg", "V2Topic", 2, 0, pullFlagSubscription, 0, "x"))
	require.Equal(t, int32(codec.RespSuccess), pull.Code)
	recs := decodeRecords(t, pull.Body)
	require.Len(t, recs, 1)
	require.Equal(t, int32(7), recs[0].Flag)
	require.Equal(t, int64(1700000000000), recs[0].BornTimestamp)
	require.Equal(t, "v2", string(recs[0].Body))
}
