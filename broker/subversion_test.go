package broker

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func tagHeartbeat(clientID, group, topic string, subVersion int64) *codec.Frame {
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"` + clientID + `","producerDataSet":[],"consumerDataSet":[{"groupName":"` + group +
		`","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"` +
		topic + `","subString":"*","tagsSet":[],"codeSet":[],"subVersion":` + strconv.FormatInt(subVersion, 10) +
		`,"expressionType":"TAG"}],"unitMode":false}]}`)
	return hb
}

// Like Java's ConsumerGroupInfo.updateSubscription: a member's heartbeat
// carrying an older subVersion does not replace the group's subscription.
// Otherwise the member that rebalanced last (newest subVersion, as the Java
// 4.9.8 push consumer sets it at every rebalance) gets
// SUBSCRIPTION_NOT_LATEST on every pull until its own next heartbeat.
func TestOlderHeartbeatKeepsNewestSubVersion(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("SV", 1, 6, 0)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, tagHeartbeat("new@1", "svg", "SV", 200)).Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, tagHeartbeat("old@2", "svg", "SV", 100)).Code)

	pull := pullReq("svg", "SV", 0, 0, 0, 0, "")
	pull.Set("subVersion", "200")
	resp := tb.invoke(t, pull)
	require.NotEqual(t, int32(codec.RespSubscriptionNotLatest), resp.Code, resp.Remark)
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code, resp.Remark)

	// A pull newer than anything the broker heard still says not latest.
	pull = pullReq("svg", "SV", 0, 0, 0, 0, "")
	pull.Set("subVersion", "300")
	require.Equal(t, int32(codec.RespSubscriptionNotLatest), tb.invoke(t, pull).Code)
}
