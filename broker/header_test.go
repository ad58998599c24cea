package broker

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
)

// sendV2 builds a Java-client style SEND_MESSAGE_V2 (one-letter keys);
// queueID is the raw header value.
func sendV2(topic, queueID, props string, body []byte) *codec.Frame {
	f := request(codec.ReqSendMessageV2, "a", "pg", "b", topic, "c", "TBW102", "d", "4", "e", queueID,
		"f", "0", "g", strconv.FormatInt(time.Now().UnixMilli(), 10), "h", "0", "i", props, "j", "0",
		"k", "false", "l", "16", "m", "false", "n", "broker-a")
	f.Body = body
	return f
}

// batchV2 builds SEND_BATCH_MESSAGE as the Go and Java clients do: the V2
// header with m=true.
func batchV2(topic string, queueID int, props string, body []byte) *codec.Frame {
	f := sendV2(topic, strconv.Itoa(queueID), props, body)
	f.Code = int32(codec.ReqSendBatchMessage)
	f.Set("m", "true")
	return f
}

// A number that does not parse, in any header field the broker reads, is
// refused the way the Java broker refuses it on its fast decoders:
// SYSTEM_ERROR with the NumberFormatException's text. (The old hand
// parsers read it as 0: queueId=abc stored the message in queue 0.)
func TestMalformedHeaderNumberIsRefused(t *testing.T) {
	tb := startBroker(t, nil)
	tb.fill(t, "Malformed", 0, 1, 8)
	batch := message.AppendBatchEntry(nil, 0, []byte("b"), "")
	withKey := func(f *codec.Frame, key, v string) *codec.Frame { f.Set(key, v); return f }
	pull := func(key, v string) *codec.Frame {
		return withKey(pullReq("cg", "Malformed", 0, 0, pullFlagSubscription, 0, "*"), key, v)
	}
	cases := []struct {
		name string
		req  *codec.Frame
		bad  string
	}{
		{"pull queueId", pull("queueId", "abc"), "abc"},
		{"pull queueOffset", pull("queueOffset", "1x"), "1x"},
		{"pull queueId out of int range", pull("queueId", "99999999999"), "99999999999"},
		{"lite pull maxMsgNums", func() *codec.Frame {
			f := pull("maxMsgNums", "many")
			f.Code = int32(codec.ReqLitePullMessage)
			return f
		}(), "many"},
		{"send V1 queueId", withKey(sendV1("Malformed", 0, "", []byte("x")), "queueId", "abc"), "abc"},
		{"send V1 bornTimestamp", withKey(sendV1("Malformed", 0, "", []byte("x")), "bornTimestamp", "now"), "now"},
		{"send V2 queueId", sendV2("Malformed", "abc", "", []byte("x")), "abc"},
		{"batch queueId", withKey(batchV2("Malformed", 0, "", batch), "e", "abc"), "abc"},
		{"update offset", request(codec.ReqUpdateConsumerOffset, "consumerGroup", "cg", "topic", "Malformed", "queueId", "abc", "commitOffset", "1"), "abc"},
		{"query offset", request(codec.ReqQueryConsumerOffset, "consumerGroup", "cg", "topic", "Malformed", "queueId", "abc"), "abc"},
		{"max offset", request(codec.ReqGetMaxOffset, "topic", "Malformed", "queueId", "abc"), "abc"},
		{"min offset", request(codec.ReqGetMinOffset, "topic", "Malformed", "queueId", "0x1"), "0x1"},
		{"search offset", request(codec.ReqSearchOffsetByTimestamp, "topic", "Malformed", "queueId", "0", "timestamp", "yesterday"), "yesterday"},
		{"earliest time", request(codec.ReqGetEarliestMsgStoretime, "topic", "Malformed", "queueId", " 0"), " 0"},
		{"query message", request(codec.ReqQueryMessage, "topic", "Malformed", "key", "k", "maxNum", "abc", "beginTimestamp", "0", "endTimestamp", "0"), "abc"},
		{"view message", request(codec.ReqViewMessageById, "offset", "abc"), "abc"},
		{"send back", request(codec.ReqConsumerSendMsgBack, "offset", "abc", "group", "cg", "delayLevel", "0"), "abc"},
		{"end transaction", request(codec.ReqEndTransaction, "producerGroup", "pg", "tranStateTableOffset", "0", "commitLogOffset", "abc", "commitOrRollback", "8", "msgId", "m"), "abc"},
		{"create topic", request(codec.ReqUpdateAndCreateTopic, "topic", "MalformedNew", "defaultTopic", "TBW102", "readQueueNums", "abc", "writeQueueNums", "4", "perm", "6", "topicFilterType", "SINGLE_TAG", "order", "false"), "abc"},
		{"query consume queue", request(codec.ReqQueryConsumeQueue, "topic", "Malformed", "queueId", "abc", "index", "0", "count", "1"), "abc"},
		{"reset offset", request(codec.ReqInvokeBrokerToResetOffset, "topic", "Malformed", "group", "cg", "timestamp", "abc", "isForce", "true"), "abc"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := tb.invoke(t, c.req)
			require.Equal(t, int32(codec.RespSystemError), resp.Code, resp.Remark)
			require.Equal(t, `java.lang.NumberFormatException: For input string: "`+c.bad+`"`, resp.Remark)
		})
	}
	require.Equal(t, int64(1), tb.store.MaxOffset("Malformed", 0), "a malformed send was stored")
	_, ok := tb.offsets.query("cg", "Malformed", 0)
	require.False(t, ok, "a malformed offset update was committed")
	_, ok = tb.topics.get("MalformedNew")
	require.False(t, ok)

	// Well-formed values still work, an absent queueId included (the
	// broker picks a queue), and a negative one is a range error.
	resp := tb.invoke(t, sendV2("Malformed", "", "", []byte("y")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, pull("queueId", "-1"))
	require.Equal(t, int32(codec.RespInvalidParameter), resp.Code, resp.Remark)
}

// compat: a batch to a retry topic gets Java 5.x's remark, not an empty one.
func TestBatchToRetryTopicRemark(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, batchV2("%RETRY%cg", 0, "", message.AppendBatchEntry(nil, 0, []byte("b"), "")))
	require.Equal(t, int32(codec.RespMessageIllegal), resp.Code)
	require.Equal(t, "batch request does not support retry group %RETRY%cg", resp.Remark)
}

// maxTopicQueueNums bounds every path that sets a topic's queue numbers:
// UPDATE_AND_CREATE_TOPIC(_LIST) refuse more, auto-creation and the
// retry/DLQ creations cap at it. (The old code created 100,000 queues.)
func TestTopicQueueNumsCapped(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.MaxTopicQueueNums = 64 })
	create := func(topic string, n int) *codec.Frame {
		return tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", topic, "defaultTopic", "TBW102",
			"readQueueNums", strconv.Itoa(n), "writeQueueNums", strconv.Itoa(n), "perm", "6",
			"topicFilterType", "SINGLE_TAG", "order", "false"))
	}
	resp := create("TooMany", 100000)
	require.Equal(t, int32(codec.RespInvalidParameter), resp.Code, resp.Remark)
	require.Contains(t, resp.Remark, "maxTopicQueueNums")
	_, ok := tb.topics.get("TooMany")
	require.False(t, ok)
	resp = create("JustRight", 64)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	list := tb.invoke(t, func() *codec.Frame {
		f := request(codec.ReqUpdateAndCreateTopicList)
		f.Body = []byte(`{"topicConfigList":[{"topicName":"ListBig","readQueueNums":100000,"writeQueueNums":100000,"perm":6}]}`)
		return f
	}())
	require.Equal(t, int32(codec.RespInvalidParameter), list.Code, list.Remark)
	_, ok = tb.topics.get("ListBig")
	require.False(t, ok)

	// A template with inherit permission and too many queues (as an old
	// topics.json could hold) lends at most the cap.
	tpl := body.NewTopicConfig("BigTemplate")
	tpl.ReadQueueNums, tpl.WriteQueueNums, tpl.Perm = 100000, 100000, body.PermInherit|body.PermRead|body.PermWrite
	require.NoError(t, tb.topics.put(tpl))
	send := sendV1("AutoBig", 0, "", []byte("x"))
	send.Set("defaultTopic", "BigTemplate")
	send.Set("defaultTopicQueueNums", "100000")
	resp = tb.invoke(t, send)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tc, ok := tb.topics.get("AutoBig")
	require.True(t, ok)
	require.Equal(t, int32(64), tc.WriteQueueNums)
	resp = tb.invoke(t, sendV1("AutoBig", 99999, "", []byte("x")))
	require.Equal(t, int32(codec.RespInvalidParameter), resp.Code, resp.Remark)

	retry := tb.topics.createIfAbsent(RetryGroupPrefix+"big", 100000, body.PermRead|body.PermWrite, 0)
	require.Equal(t, int32(64), retry.ReadQueueNums)
	require.Equal(t, int32(64), retry.WriteQueueNums)
}

func TestMaxTopicQueueNumsValidated(t *testing.T) {
	cfg := testConfig(t.TempDir())
	require.Equal(t, int32(1024), DefaultConfig().MaxTopicQueueNums)
	cfg.MaxTopicQueueNums = 0
	require.Error(t, cfg.Validate())
	cfg.MaxTopicQueueNums, cfg.DefaultTopicQueueNums = 4, 8
	err := cfg.Validate()
	require.Error(t, err)
	require.True(t, strings.Contains(err.Error(), "maxTopicQueueNums"), err.Error())
}

// The send and pull headers decode without allocating, as the hand
// parsers they replaced did (compare with b.ReportAllocs output).
func BenchmarkSendHeaderDecode(b *testing.B) {
	v1 := sendV1("T", 1, props("TAGS", "a"), []byte("x"))
	v2 := sendV2("T", "1", props("TAGS", "a"), []byte("x"))
	var h sendHeader
	b.ReportAllocs()
	for b.Loop() {
		if h.decode(v1) != nil || h.decode(v2) != nil {
			b.Fatal("decode")
		}
	}
}

func BenchmarkPullHeaderDecode(b *testing.B) {
	req := pullReq("g", "T", 0, 5, 6, 100, "a || b")
	var h header.PullMessageRequest
	b.ReportAllocs()
	for b.Loop() {
		if headerFailure(req, h.Decode(req)) != nil {
			b.Fatal("decode")
		}
	}
}
