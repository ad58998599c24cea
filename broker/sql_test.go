package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func sqlPull(group, topic string, offset int64, sysFlag int, suspend int64, expr string) *codec.Frame {
	req := pullReq(group, topic, 0, offset, sysFlag, suspend, expr)
	req.Set("expressionType", "SQL92")
	return req
}

func TestSQL92Filtering(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.EnablePropertyFilter = true })
	tb.topics.createIfAbsent("SQ", 1, 6, 0)
	for _, a := range []string{"1", "5", "9"} {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SQ", 0, props("a", a), []byte("a="+a))).Code)
	}
	tb.waitDispatched(t, "SQ", 0, 3)

	// Subscription carried by the pull.
	resp := tb.invoke(t, sqlPull("cg", "SQ", 0, pullFlagSubscription, 0, "a > 3"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 2)
	require.Equal(t, "a=5", string(recs[0].Body))
	require.Equal(t, "a=9", string(recs[1].Body))
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	resp = tb.invoke(t, sqlPull("cg", "SQ", 0, pullFlagSubscription, 0, "a >"))
	require.Equal(t, int32(codec.RespSubscriptionParseFailed), resp.Code)

	// Subscription from a Go-style heartbeat (pulls say TAG).
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"c@1","producerDataSet":[],"consumerDataSet":[{"groupName":"sg","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"SQ","subString":"a = 1 OR a = 9","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"SQL92"}],"unitMode":false}]}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, hb).Code)
	resp = tb.invoke(t, pullReq("sg", "SQ", 0, 0, 0, 0, ""))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs = decodeRecords(t, resp.Body)
	require.Len(t, recs, 2)
	require.Equal(t, "a=1", string(recs[0].Body))

	// A held SQL pull wakes only for a matching arrival.
	ch := tb.pullAsync(sqlPull("cg", "SQ", 3, pullFlagSubscription|pullFlagSuspend, 3000, "a = 100"))
	require.Eventually(t, func() bool { return tb.pull.holds.held() == 1 }, 2*time.Second, time.Millisecond)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SQ", 0, props("a", "2"), []byte("a=2"))).Code)
	tb.waitDispatched(t, "SQ", 0, 4)
	require.Equal(t, 1, tb.pull.holds.held())
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SQ", 0, props("a", "100"), []byte("a=100"))).Code)
	r := <-ch
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespSuccess), r.resp.Code, r.resp.Remark)
	recs = decodeRecords(t, r.resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "a=100", string(recs[0].Body))

	// CHECK_CLIENT_CONFIG.
	cc := request(codec.ReqCheckClientConfig)
	cc.Body = []byte(`{"clientId":"c","group":"g","subscriptionData":{"topic":"SQ","subString":"a > 1","expressionType":"SQL92"}}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, cc).Code)
	cc.Body = []byte(`{"clientId":"c","group":"g","subscriptionData":{"topic":"SQ","subString":"a >","expressionType":"SQL92"}}`)
	require.Equal(t, int32(codec.RespSubscriptionParseFailed), tb.invoke(t, cc).Code)
}

func TestSQL92DisabledByDefault(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("SQD", 1, 6, 0)
	resp := tb.invoke(t, sqlPull("cg", "SQD", 0, pullFlagSubscription, 0, "a > 3"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The broker does not support consumer to filter message by SQL92", resp.Remark)
}
