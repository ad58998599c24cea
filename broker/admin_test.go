package broker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

func TestAdminTopicsAndGroups(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", "AdminT", "defaultTopic", "TBW102",
		"readQueueNums", "3", "writeQueueNums", "3", "perm", "6", "topicFilterType", "SINGLE_TAG", "topicSysFlag", "0", "order", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, request(codec.ReqGetTopicConfig, "topic", "AdminT"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, `{"attributes":{},"order":false,"perm":6,"readQueueNums":3,"topicFilterType":"SINGLE_TAG","topicName":"AdminT","topicSysFlag":0,"writeQueueNums":3}`, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqGetAllTopicConfig))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Contains(t, string(resp.Body), `"AdminT":{"attributes":{}`)
	require.Contains(t, string(resp.Body), `"TBW102":{"attributes":{},"order":false,"perm":7,"readQueueNums":8`)

	resp = tb.invoke(t, request(codec.ReqGetTopicStatsInfo, "topic", "AdminT"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.True(t, strings.HasPrefix(string(resp.Body), `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"AdminT"}:{"lastUpdateTimestamp":0,"maxOffset":0,"minOffset":0}`), string(resp.Body))

	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("AdminT", 0, "", []byte("x"))).Code)
	tb.waitDispatched(t, "AdminT", 0, 1)
	resp = tb.invoke(t, request(codec.ReqDeleteTopicInBroker, "topic", "AdminT"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	_, ok := tb.topics.get("AdminT")
	require.False(t, ok)
	require.Equal(t, int64(0), tb.store.MaxOffset("AdminT", 0))
	resp = tb.invoke(t, request(codec.ReqDeleteTopicInBroker, "topic", "TBW102"))
	require.Equal(t, int32(codec.RespInvalidParameter), resp.Code)

	g := request(codec.ReqUpdateAndCreateSubscriptiongroup)
	g.Body = []byte(`{"groupName":"AdminG","consumeEnable":false,"retryMaxTimes":3}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, g).Code)
	sg, ok := tb.groups.get("AdminG")
	require.True(t, ok)
	require.False(t, sg.ConsumeEnable)
	require.Equal(t, int32(3), sg.RetryMaxTimes)
	require.Equal(t, int32(1), sg.RetryQueueNums) // Java default for an absent key
	resp = tb.invoke(t, request(codec.ReqGetAllSubscriptiongroupConfig))
	require.Contains(t, string(resp.Body), `"forbiddenTable":{}`)
	require.Contains(t, string(resp.Body), `"AdminG":{`)
	// A disabled group may not pull.
	tb.topics.createIfAbsent("AdminP", 1, 6, 0)
	resp = tb.invoke(t, pullReq("AdminG", "AdminP", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, request(codec.ReqDeleteSubscriptiongroup, "groupName", "AdminG")).Code)
	_, ok = tb.groups.get("AdminG")
	require.False(t, ok)

	resp = tb.invoke(t, request(codec.ReqGetBrokerRuntimeInfo))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Contains(t, string(resp.Body), `"brokerVersionDesc":"V5_4_0"`)
	resp = tb.invoke(t, request(codec.ReqGetBrokerConfig))
	require.Contains(t, string(resp.Body), "brokerName=broker-a\n")
}

// A consumer client answering broker→client requests like the real clients.
func consumerClient(t *testing.T, resets chan *codec.Frame) *transport.Client {
	r := transport.NewRouter()
	r.Handle(codec.ReqNotifyConsumerIdsChanged, nil, func(*transport.Conn, *codec.Frame) *codec.Frame { return nil })
	r.Handle(codec.ReqResetConsumerClientOffset, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resets <- req
		return nil
	})
	r.Handle(codec.ReqGetConsumerRunningInfo, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = []byte(`{"properties":{"clientId":"` + req.Value("clientId") + `"}}`)
		return resp
	})
	cli := transport.NewClient(transport.ClientConfig{Logger: testLogger(), Router: r, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { cli.Close() })
	return cli
}

func TestAdminRelaysToClients(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("RS", 2, 6, 0)
	for i := 0; i < 3; i++ {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("RS", 0, "", []byte("m"))).Code)
	}
	tb.waitDispatched(t, "RS", 0, 3)
	resets := make(chan *codec.Frame, 4)
	cc := consumerClient(t, resets)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("10.0.0.9@9", "rg", "RS", "*")
	resp, err := cc.Invoke(ctx, tb.addr, hb)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	tb.offsets.commit("rg", "RS", 0, 3)
	tb.offsets.commit("rg", "RS", 1, 0)

	// Reset to the earliest time, forced: queue 0 goes back to 0.
	resp = tb.invoke(t, request(codec.ReqInvokeBrokerToResetOffset, "topic", "RS", "group", "rg", "timestamp", "0", "isForce", "true"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	want := `{"offsetTable":{{"brokerName":"broker-a","queueId":0,"topic":"RS"}:0,{"brokerName":"broker-a","queueId":1,"topic":"RS"}:0}}`
	require.Equal(t, want, string(resp.Body))
	push := <-resets
	require.Equal(t, "rg", push.Value("group"))
	require.Equal(t, want, string(push.Body))
	off, _ := tb.offsets.query("rg", "RS", 0)
	require.Equal(t, int64(0), off)

	// Running info is relayed to the client and its answer comes back.
	resp = tb.invoke(t, request(codec.ReqGetConsumerRunningInfo, "consumerGroup", "rg", "clientId", "10.0.0.9@9", "jstackEnable", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, `{"properties":{"clientId":"10.0.0.9@9"}}`, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqGetConsumerRunningInfo, "consumerGroup", "rg", "clientId", "nobody"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The Consumer <rg> <nobody> not online", resp.Remark)

	resp = tb.invoke(t, request(codec.ReqGetConsumerConnectionList, "consumerGroup", "rg"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Contains(t, string(resp.Body), `"clientId":"10.0.0.9@9","language":"GO","version":317`)
	resp = tb.invoke(t, request(codec.ReqGetConsumeStats, "consumerGroup", "rg", "topic", "RS"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Contains(t, string(resp.Body), `{"brokerName":"broker-a","queueId":0,"topic":"RS"}:{"brokerOffset":3,"consumerOffset":0`)
}

func TestLockBatch(t *testing.T) {
	tb := startBroker(t, nil)
	lock := func(client string) string {
		req := request(codec.ReqLockBatchMq)
		req.Body = []byte(`{"consumerGroup":"og","clientId":"` + client + `","mqSet":[{"topic":"T","brokerName":"broker-a","queueId":0},{"topic":"T","brokerName":"broker-a","queueId":1}]}`)
		resp := tb.invoke(t, req)
		require.Equal(t, int32(codec.RespSuccess), resp.Code)
		return string(resp.Body)
	}
	require.Equal(t, `{"lockOKMQSet":[{"brokerName":"broker-a","queueId":0,"topic":"T"},{"brokerName":"broker-a","queueId":1,"topic":"T"}]}`, lock("c1"))
	require.Equal(t, `{"lockOKMQSet":[]}`, lock("c2"))
	un := request(codec.ReqUnlockBatchMq)
	un.Body = []byte(`{"consumerGroup":"og","clientId":"c1","mqSet":[{"topic":"T","brokerName":"broker-a","queueId":1}]}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, un).Code)
	require.Equal(t, `{"lockOKMQSet":[{"brokerName":"broker-a","queueId":1,"topic":"T"}]}`, lock("c2"))
}

func TestAdminBatchAndClone(t *testing.T) {
	tb := startBroker(t, nil)
	req := request(codec.ReqUpdateAndCreateTopicList)
	req.Body = []byte(`{"topicConfigList":[{"topicName":"L1","readQueueNums":2,"writeQueueNums":2,"perm":6},{"topicName":"L2","readQueueNums":1,"writeQueueNums":1,"perm":4}]}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, req).Code)
	tc, ok := tb.topics.get("L2")
	require.True(t, ok)
	require.Equal(t, int32(4), tc.Perm)
	require.Equal(t, "SINGLE_TAG", tc.TopicFilterType)

	req = request(codec.ReqUpdateAndCreateSubscriptiongroupList)
	req.Body = []byte(`{"groupConfigList":[{"groupName":"G1"},{"groupName":"G2","retryMaxTimes":2}]}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, req).Code)
	g2, ok := tb.groups.get("G2")
	require.True(t, ok)
	require.Equal(t, int32(2), g2.RetryMaxTimes)

	tb.offsets.commit("G1", "L1", 1, 9)
	resp := tb.invoke(t, request(codec.ReqCloneGroupOffset, "srcGroup", "G1", "destGroup", "G3", "topic", "L1", "offline", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	off, ok := tb.offsets.query("G3", "L1", 1)
	require.True(t, ok)
	require.Equal(t, int64(9), off)

	resp = tb.invoke(t, request(codec.ReqQuerySubscriptionByConsumer, "group", "nobody", "topic", "L1"))
	require.Equal(t, `{"group":"nobody","topic":"L1"}`, string(resp.Body))
}
