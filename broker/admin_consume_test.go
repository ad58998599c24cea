package broker

import (
	"context"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// statusClient is a consumer that answers GET_CONSUMER_STATUS_FROM_CLIENT
// with body (or, when body is "", does not support it, like the Go client).
func statusClient(t *testing.T, tb *testBroker, clientID, group string, version int32, body string) {
	t.Helper()
	r := transport.NewRouter()
	r.Handle(codec.ReqNotifyConsumerIdsChanged, nil, func(*transport.Conn, *codec.Frame) *codec.Frame { return nil })
	if body != "" {
		r.Handle(codec.ReqGetConsumerStatusFromClient, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
			if req.Value("topic") != "CS" || req.Value("group") != group {
				return codec.NewResponse(req, int32(codec.RespSystemError), "bad header")
			}
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.Body = []byte(body)
			return resp
		})
	}
	cli := transport.NewClient(transport.ClientConfig{Logger: testLogger(), Router: r, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { cli.Close() })
	hb := request(codec.ReqHeartBeat)
	hb.Version = version
	hb.Body = goHeartbeat(clientID, group, "CS", "*")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, tb.addr, hb)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
}

func TestInvokeBrokerToGetConsumerStatus(t *testing.T) {
	tb := startBroker(t, nil)
	// What a Java client answers: its offset table, MessageQueue keys bare.
	statusClient(t, tb, "10.0.0.2@b", "sg", 317,
		`{"consumerTable":{},"messageQueueTable":{{"brokerName":"broker-a","queueId":1,"topic":"CS"}:7,{"brokerName":"broker-a","queueId":0,"topic":"CS"}:5}}`)
	statusClient(t, tb, "10.0.0.1@a", "sg", 317, `{"messageQueueTable":{{"brokerName":"broker-a","queueId":0,"topic":"CS"}:3}}`)
	statusClient(t, tb, "10.0.0.3@go", "sg", 317, "")

	resp := tb.invoke(t, request(codec.ReqInvokeBrokerToGetConsumerStatus, "topic", "CS", "group", "sg"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, `{"consumerTable":{"10.0.0.1@a":{{"brokerName":"broker-a","queueId":0,"topic":"CS"}:3},`+
		`"10.0.0.2@b":{{"brokerName":"broker-a","queueId":0,"topic":"CS"}:5,{"brokerName":"broker-a","queueId":1,"topic":"CS"}:7}},"messageQueueTable":{}}`,
		string(resp.Body))

	// One client by id.
	resp = tb.invoke(t, request(codec.ReqInvokeBrokerToGetConsumerStatus, "topic", "CS", "group", "sg", "clientAddr", "10.0.0.1@a"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, `{"consumerTable":{"10.0.0.1@a":{{"brokerName":"broker-a","queueId":0,"topic":"CS"}:3}},"messageQueueTable":{}}`, string(resp.Body))

	resp = tb.invoke(t, request(codec.ReqInvokeBrokerToGetConsumerStatus, "topic", "CS", "group", "nobody"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "No Any Consumer online in the consumer group: [nobody]", resp.Remark)

	statusClient(t, tb, "10.0.0.4@old", "oldg", 20, `{"messageQueueTable":{}}`)
	resp = tb.invoke(t, request(codec.ReqInvokeBrokerToGetConsumerStatus, "topic", "CS", "group", "oldg"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "the client does not support this feature. version=V3_0_3_SNAPSHOT", resp.Remark)
}

func TestJavaDateString(t *testing.T) {
	ms := int64(1700000000123)
	require.Equal(t, time.UnixMilli(ms).Format("2006-01-02#15:04:05")+":123", javaDateString(ms))
	require.Regexp(t, `^\d{4}-\d{2}-\d{2}#\d{2}:\d{2}:\d{2}:999$`, javaDateString(-1))
	require.True(t, strings.HasSuffix(javaDateString(1700000000007), ":007"))
}

type timeSpan struct {
	ConsumeTimeStamp    int64  `json:"consumeTimeStamp"`
	ConsumeTimeStampStr string `json:"consumeTimeStampStr"`
	DelayTime           int64  `json:"delayTime"`
	MaxTimeStamp        int64  `json:"maxTimeStamp"`
	MinTimeStamp        int64  `json:"minTimeStamp"`
	MessageQueue        struct {
		Topic      string `json:"topic"`
		BrokerName string `json:"brokerName"`
		QueueID    int32  `json:"queueId"`
	} `json:"messageQueue"`
}

// consumeFixture stores three messages on CT queue 0 (of 2) and commits
// offsets for four groups.
func consumeFixture(t *testing.T) (*testBroker, []int64) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("CT", 2, 6, 0)
	for i := range 3 {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("CT", 0, "", []byte("m"+strconv.Itoa(i)))).Code)
	}
	tb.waitDispatched(t, "CT", 0, 3)
	var times []int64
	for i := range int64(3) {
		ts, err := tb.store.StoreTime("CT", 0, i)
		require.NoError(t, err)
		times = append(times, ts)
	}
	for _, g := range []string{"g1", "g2", "g3", "g4"} {
		_, ok := tb.groups.find(g)
		require.True(t, ok)
	}
	tb.offsets.commit("g1", "CT", 0, 2)
	tb.offsets.commit("g2", "CT", 0, 1)
	tb.offsets.commit("g2", "CT", 1, 0)
	tb.offsets.commit("g3", "CT", 0, 0)
	tb.offsets.commit("g4", "CT", 0, 0)
	return tb, times
}

func TestQueryConsumeTimeSpan(t *testing.T) {
	tb, times := consumeFixture(t)
	before := time.Now().UnixMilli()
	resp := tb.invoke(t, request(codec.ReqQueryConsumeTimeSpan, "topic", "CT", "group", "g1"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var body struct {
		ConsumeTimeSpanSet []timeSpan `json:"consumeTimeSpanSet"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &body))
	require.Len(t, body.ConsumeTimeSpanSet, 2)
	q0, q1 := body.ConsumeTimeSpanSet[0], body.ConsumeTimeSpanSet[1]
	require.Equal(t, "CT", q0.MessageQueue.Topic)
	require.Equal(t, "broker-a", q0.MessageQueue.BrokerName)
	require.Equal(t, int32(1), q1.MessageQueue.QueueID)
	require.Equal(t, times[0], q0.MinTimeStamp)
	require.Equal(t, times[2], q0.MaxTimeStamp)
	require.Equal(t, times[1], q0.ConsumeTimeStamp) // offset 2 consumed up to message 1
	require.Equal(t, javaDateString(times[1]), q0.ConsumeTimeStampStr)
	require.GreaterOrEqual(t, q0.DelayTime, before-times[2])
	require.Less(t, q0.DelayTime, int64(60_000))
	// An empty queue the group never committed: Java's -1 values.
	require.Equal(t, int64(-1), q1.MinTimeStamp)
	require.Equal(t, int64(-1), q1.MaxTimeStamp)
	require.Equal(t, int64(-1), q1.ConsumeTimeStamp)
	require.Greater(t, q1.DelayTime, before)
	require.Regexp(t, regexp.MustCompile(`"messageQueue":\{"brokerName":"broker-a","queueId":0,"topic":"CT"\},"minTimeStamp":`), string(resp.Body))

	resp = tb.invoke(t, request(codec.ReqQueryConsumeTimeSpan, "topic", "NOPE", "group", "g1"))
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code)
	require.Equal(t, "topic[NOPE] not exist", resp.Remark)
}

func TestQueryCorrectionOffset(t *testing.T) {
	tb, _ := consumeFixture(t)
	resp := tb.invoke(t, request(codec.ReqQueryCorrectionOffset, "topic", "CT", "filterGroups", "g3,g4", "compareGroup", "g4"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	// Minimum of g1 and g2; g4 is behind g2 on queue 0.
	require.Equal(t, `{"correctionOffsets":{0:9223372036854775807,1:0}}`, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqQueryCorrectionOffset, "topic", "CT", "filterGroups", "g3,g4", "compareGroup", "g1"))
	require.Equal(t, `{"correctionOffsets":{0:1,1:0}}`, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqQueryCorrectionOffset, "topic", "CT", "compareGroup", "none"))
	require.Equal(t, `{"correctionOffsets":{0:0,1:0}}`, string(resp.Body))
	// Filtered groups keep their offsets (Java drops them).
	off, ok := tb.offsets.query("g3", "CT", 0)
	require.True(t, ok)
	require.Equal(t, int64(0), off)
}

func TestGetBrokerConsumeStats(t *testing.T) {
	tb, times := consumeFixture(t)
	resp := tb.invoke(t, request(codec.ReqGetBrokerConsumeStats, "isOrder", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	b := string(resp.Body)
	require.True(t, strings.HasPrefix(b, `{"brokerAddr":"`+tb.BrokerAddr()+`","consumeStatsList":[`), b)
	require.Contains(t, b, `{"g1":[{"consumeTps":0.0,"offsetTable":{`+
		`{"brokerName":"broker-a","queueId":0,"topic":"CT"}:{"brokerOffset":3,"consumerOffset":2,"lastTimestamp":`+strconv.FormatInt(times[1], 10)+`,"pullOffset":0},`+
		`{"brokerName":"broker-a","queueId":1,"topic":"CT"}:{"brokerOffset":0,"consumerOffset":0,"lastTimestamp":0,"pullOffset":0}}}]}`)
	require.Contains(t, b, `{"TOOLS_CONSUMER":[]}`)
	// Diffs: g1 1, g2 2, g3 3, g4 3; in flight: minus the consumer offsets.
	require.True(t, strings.HasSuffix(b, `],"totalDiff":9,"totalInflightDiff":-3}`), b)
	r := fastjson.NewReader(resp.Body)
	r.Skip()
	require.NoError(t, r.End())

	resp = tb.invoke(t, request(codec.ReqGetBrokerConsumeStats, "isOrder", "true"))
	require.Contains(t, string(resp.Body), `{"g1":[]}`)
	require.True(t, strings.HasSuffix(string(resp.Body), `"totalDiff":0,"totalInflightDiff":0}`))
}

func TestQueryConsumeQueue(t *testing.T) {
	tb, _ := consumeFixture(t)
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("10.0.0.1@1", "g1", "CT", "*")
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, hb).Code)

	resp := tb.invoke(t, request(codec.ReqQueryConsumeQueue, "topic", "CT", "queueId", "0", "index", "1", "count", "5", "consumerGroup", "g1"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	units, ok := tb.store.ConsumeQueueUnits("CT", 0, 1, 5, nil)
	require.True(t, ok)
	require.Len(t, units, 2)
	var want strings.Builder
	want.WriteString(`{"filterData":"null","maxQueueIndex":3,"minQueueIndex":0,"queueData":[`)
	for i, u := range units {
		if i > 0 {
			want.WriteString(",")
		}
		want.WriteString(`{"eval":false,"physicOffset":` + strconv.FormatInt(u.PhyOffset, 10) + `,"physicSize":` + strconv.Itoa(int(u.Size)) + `,"tagsCode":0}`)
	}
	want.WriteString(`],"subscriptionData":{"classFilterMode":false,`)
	require.True(t, strings.HasPrefix(string(resp.Body), want.String()), string(resp.Body))
	require.True(t, strings.HasSuffix(string(resp.Body), `"topic":"CT"}}`), string(resp.Body))

	resp = tb.invoke(t, request(codec.ReqQueryConsumeQueue, "topic", "CT", "queueId", "0", "index", "0", "count", "1", "consumerGroup", "off"))
	require.True(t, strings.HasPrefix(string(resp.Body), `{"filterData":"off@CT is not online!","maxQueueIndex":3,"minQueueIndex":0,"queueData":[{"eval":false,"physicOffset":0,`), string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqQueryConsumeQueue, "topic", "CT", "queueId", "0", "index", "0", "count", "1"))
	require.True(t, strings.HasPrefix(string(resp.Body), `{"maxQueueIndex":3,`), string(resp.Body))

	resp = tb.invoke(t, request(codec.ReqQueryConsumeQueue, "topic", "CT", "queueId", "0", "index", "3", "count", "1"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "Index 3 of 0@CT is not exist!", resp.Remark)
	require.Empty(t, resp.Body)
	resp = tb.invoke(t, request(codec.ReqQueryConsumeQueue, "topic", "CT", "queueId", "7", "index", "0", "count", "1"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "7@CT is not exist!", resp.Remark)
}

func TestConsumerFilterDataJSON(t *testing.T) {
	sub := body.SubscriptionData{Topic: "T", SubString: "a > 1", ExpressionType: "SQL92", SubVersion: 42}
	require.Equal(t, "{\n\t\"clientVersion\":42,\n\t\"consumerGroup\":\"g\",\n\t\"deadTime\":0,\n\t\"expression\":\"a > 1\",\n\t\"expressionType\":\"SQL92\",\n\t\"topic\":\"T\"\n}",
		consumerFilterDataJSON("g", &sub))
}
