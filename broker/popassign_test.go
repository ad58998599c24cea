package broker

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func TestQueryAssignmentFollowsRequestMode(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "QT", 0, 1) // creates QT (4 queues from TBW102)
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("cid-1", "qg", "QT", "*")
	resp := tb.invoke(t, hb)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	query := func() []mqAssignment {
		req := request(codec.ReqQueryAssignment)
		req.Body = []byte(`{"clientId":"cid-1","consumerGroup":"qg","messageModel":"CLUSTERING","strategyName":"AVG","topic":"QT"}`)
		resp := tb.invoke(t, req)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		var out struct {
			MessageQueueAssignments []mqAssignment `json:"messageQueueAssignments"`
		}
		require.NoError(t, json.Unmarshal(resp.Body, &out))
		return out.MessageQueueAssignments
	}
	resp = tb.invoke(t, request(codec.ReqGetAllMessageRequestMode))
	require.Equal(t, emptyMessageRequestModes, string(resp.Body))
	// PULL by default: the client's share of the queues.
	got := query()
	tc, _ := tb.topics.get("QT")
	require.Len(t, got, int(tc.ReadQueueNums))
	require.Equal(t, "PULL", got[0].Mode)

	set := request(codec.ReqSetMessageRequestMode)
	set.Body = []byte(`{"consumerGroup":"qg","mode":"POP","popShareQueueNum":8,"topic":"QT"}`)
	resp = tb.invoke(t, set)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	// POP with popShareQueueNum past the group's size: every queue, as -1.
	got = query()
	require.Equal(t, []mqAssignment{{MessageQueue: mqRef{BrokerName: "broker-a", QueueID: -1, Topic: "QT"}, Mode: "POP"}}, got)

	resp = tb.invoke(t, request(codec.ReqGetAllMessageRequestMode))
	require.JSONEq(t, `{"messageRequestModeMap":{"QT":{"qg":{"consumerGroup":"qg","mode":"POP","popShareQueueNum":8,"topic":"QT"}}}}`, string(resp.Body))

	set.Body = []byte(`{"consumerGroup":"qg","mode":"POP","topic":"%RETRY%qg"}`)
	resp = tb.invoke(t, set)
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
}

func TestAllocateAveragely(t *testing.T) {
	var mqs []mqRef
	for q := range int32(5) {
		mqs = append(mqs, mqRef{BrokerName: "b", QueueID: q, Topic: "T"})
	}
	cids := []string{"a", "b"}
	require.Equal(t, mqs[:3], allocAveragely("a", mqs, cids))
	require.Equal(t, mqs[3:], allocAveragely("b", mqs, cids))
}
