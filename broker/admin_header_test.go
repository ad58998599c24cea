package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// The admin handlers read their headers with the typed decoders (issue #20
// item 1). A malformed number is refused with Java's NumberFormatException
// text, where the old hand reads passed it on (CONSUME_MESSAGE_DIRECTLY
// forwarded topicSysFlag=abc to the client).
func TestAdminHeaderMalformedNumberIsRefused(t *testing.T) {
	tb := startBroker(t, nil)
	cases := []struct {
		name string
		req  *codec.Frame
		bad  string
	}{
		{"consume directly topicSysFlag", request(codec.ReqConsumeMessageDirectly,
			"consumerGroup", "cg", "clientId", "127.0.0.1@1", "msgId", "x", "topic", "T", "topicSysFlag", "abc"), "abc"},
		{"consume directly groupSysFlag", request(codec.ReqConsumeMessageDirectly,
			"consumerGroup", "cg", "clientId", "127.0.0.1@1", "groupSysFlag", "1.5"), "1.5"},
		{"reset offset queueId", request(codec.ReqInvokeBrokerToResetOffset,
			"topic", "T", "group", "cg", "timestamp", "0", "isForce", "true", "queueId", "q0"), "q0"},
		{"query cq count", request(codec.ReqQueryConsumeQueue,
			"topic", "T", "queueId", "0", "index", "0", "count", "ten", "consumerGroup", "cg"), "ten"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp := tb.invoke(t, c.req)
			require.Equal(t, int32(codec.RespSystemError), resp.Code, resp.Remark)
			require.Equal(t, `java.lang.NumberFormatException: For input string: "`+c.bad+`"`, resp.Remark)
		})
	}
}

// An empty value counts as absent, for the typed decoders as for the old
// hand reads (Frame.Get): the Go client sends "" for unset keys, and Java's
// binary codec turns "" into null.
func TestAdminHeaderEmptyValueIsAbsent(t *testing.T) {
	tb, _ := consumeFixture(t)
	tb.offsets.commit("cs", "CT", 0, 1)

	// GET_CONSUME_STATS: an empty topic falls through to topicList.
	resp := tb.invoke(t, request(codec.ReqGetConsumeStats, "consumerGroup", "cs", "topic", "", "topicList", "CT"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), `{"brokerName":"broker-a","queueId":0,"topic":"CT"}:{"brokerOffset":3,"consumerOffset":1`)
	// Both empty: every topic the group has offsets on, like Java's blank checks.
	resp = tb.invoke(t, request(codec.ReqGetConsumeStats, "consumerGroup", "cs", "topic", "", "topicList", ""))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), `"topic":"CT"}:{"brokerOffset":3,"consumerOffset":1`)

	// QUERY_CONSUME_QUEUE: an empty consumerGroup is no group, so no filterData.
	resp = tb.invoke(t, request(codec.ReqQueryConsumeQueue, "topic", "CT", "queueId", "0", "index", "0", "count", "1", "consumerGroup", ""))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), `{"maxQueueIndex":3,`)

	// UPDATE_AND_CREATE_TOPIC: an empty topicFilterType keeps SINGLE_TAG.
	resp = tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", "EmptyFilter", "defaultTopic", "TBW102",
		"readQueueNums", "2", "writeQueueNums", "2", "perm", "6", "topicFilterType", "", "order", "false", "attributes", ""))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tc, ok := tb.topics.get("EmptyFilter")
	require.True(t, ok)
	require.Equal(t, "SINGLE_TAG", tc.TopicFilterType)
	require.Empty(t, tc.Attributes)
}

// A missing required field is not refused (Java's decoder only logs it)
// and reads as its zero value: UPDATE_AND_CREATE_TOPIC without perm stores
// perm 0, as an explicit "0" does (the old hand read kept the default 6).
func TestAdminHeaderMissingRequiredFieldReadsZero(t *testing.T) {
	tb := startBroker(t, nil)
	create := func(topic string, kv ...string) {
		resp := tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, append([]string{"topic", topic, "defaultTopic", "TBW102",
			"readQueueNums", "2", "writeQueueNums", "2", "topicFilterType", "SINGLE_TAG", "order", "false"}, kv...)...))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	create("NoPerm")
	create("ZeroPerm", "perm", "0")
	create("ReadPerm", "perm", "4")
	for topic, perm := range map[string]int32{"NoPerm": 0, "ZeroPerm": 0, "ReadPerm": 4} {
		tc, ok := tb.topics.get(topic)
		require.True(t, ok, topic)
		require.Equal(t, perm, tc.Perm, topic)
	}
}

// QUERY_CONSUMER_OFFSET's setZeroIfNotFound is Java's Boolean: absent (or
// empty) sets zero, anything Boolean.parseBoolean reads as false does not
// (the old read only honoured the exact "false").
func TestQueryConsumerOffsetSetZeroIfNotFound(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("SZ", 1, 6, 0)
	query := func(kv ...string) *codec.Frame {
		return tb.invoke(t, request(codec.ReqQueryConsumerOffset,
			append([]string{"consumerGroup", "cg", "topic", "SZ", "queueId", "0"}, kv...)...))
	}
	for _, v := range []string{"false", "FALSE", "no"} {
		resp := query("setZeroIfNotFound", v)
		require.Equal(t, int32(codec.RespQueryNotFound), resp.Code, v)
	}
	for _, kv := range [][]string{nil, {"setZeroIfNotFound", ""}, {"setZeroIfNotFound", "True"}} {
		resp := query(kv...)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, "%v: %s", kv, resp.Remark)
		require.Equal(t, "0", ext(t, resp, "offset"))
	}
}
