package body

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeHeartbeatJavaAndGo(t *testing.T) {
	java := `{"clientID":"10.0.0.1@1234#987","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"cg","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[2598919,2598920],"expressionType":"TAG","subString":"TagA || TagB","subVersion":1700000000000,"tagsSet":["TagA","TagB"],"topic":"TopicTest"}],"unitMode":false}],"heartbeatFingerprint":0,"producerDataSet":[{"groupName":"pg"}],"withoutSub":false}`
	h, err := DecodeHeartbeat([]byte(java))
	require.NoError(t, err)
	require.Equal(t, "10.0.0.1@1234#987", h.ClientID)
	require.Equal(t, []ProducerData{{GroupName: "pg"}}, h.ProducerDataSet)
	sub := h.ConsumerDataSet[0].SubscriptionDataSet[0]
	require.Equal(t, Int32List{2598919, 2598920}, sub.CodeSet)
	require.Equal(t, []string{"TagA", "TagB"}, sub.TagsSet)

	goBody := `{"clientID":"192.0.2.2@7079","producerDataSet":[],"consumerDataSet":[{"groupName":"cg","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"T","subString":"TagA","tagsSet":["TagA"],"codeSet":["2598919"],"subVersion":1764460927000000000,"expressionType":"TAG"}],"unitMode":false}]}`
	h, err = DecodeHeartbeat([]byte(goBody))
	require.NoError(t, err)
	sub = h.ConsumerDataSet[0].SubscriptionDataSet[0]
	require.Equal(t, Int32List{2598919}, sub.CodeSet)
	require.Equal(t, int64(1764460927000000000), sub.SubVersion)

	_, err = DecodeHeartbeat([]byte(`{"clientID":`))
	require.Error(t, err)
	_, err = DecodeHeartbeat([]byte(`{"consumerDataSet":[{"subscriptionDataSet":[{"codeSet":["x"]}]}]}`))
	require.Error(t, err)
}

func TestConsumerOffsetFileJavaShape(t *testing.T) {
	// What Java writes (pretty printed, bare integer keys).
	java := "{\n\t\"offsetTable\":{\n\t\t\"TopicTest@cg\":{0:5,1:7\n\t\t}\n\t},\n\t\"dataVersion\":{\"counter\":1,\"stateVersion\":0,\"timestamp\":1}\n}"
	f, err := DecodeConsumerOffsetFile([]byte(java))
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{0: 5, 1: 7}, f.OffsetTable["TopicTest@cg"])

	out := AppendConsumerOffsetFile(nil, TopicVersion{Counter: 2, Timestamp: 3}, f.OffsetTable)
	require.Equal(t, `{"dataVersion":{"counter":2,"stateVersion":0,"timestamp":3},"offsetTable":{"TopicTest@cg":{0:5,1:7}}}`, string(out))
	back, err := DecodeConsumerOffsetFile(out)
	require.NoError(t, err)
	require.Equal(t, f.OffsetTable, back.OffsetTable)
}

func TestQuoteBareKeysLeavesStringsAlone(t *testing.T) {
	require.Equal(t, `{"0":1,"a":"{1:2}","-3":[1,2]}`, string(QuoteBareKeys([]byte(`{0:1,"a":"{1:2}",-3:[1,2]}`))))
	require.Equal(t, `[1, 2, {"5" :6}]`, string(QuoteBareKeys([]byte(`[1, 2, {5 :6}]`))))
}

func TestFastjsonShapes(t *testing.T) {
	require.Equal(t, `{"consumerIdList":["a","b"]}`, string(AppendConsumerIDList(nil, []string{"a", "b"})))
	require.Equal(t, `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"t"}:100}}`,
		string(AppendResetOffsetBody(nil, []QueueOffset{{MQ: MessageQueue{Topic: "t", BrokerName: "b"}, Offset: 100}})))
	require.Equal(t, `{"consumeTps":0.0,"offsetTable":{{"brokerName":"b","queueId":1,"topic":"t"}:{"brokerOffset":9,"consumerOffset":4,"lastTimestamp":0,"pullOffset":5}}}`,
		string(AppendConsumeStats(nil, 0, []OffsetWrapper{{MQ: MessageQueue{Topic: "t", BrokerName: "b", QueueID: 1}, BrokerOffset: 9, ConsumerOffset: 4, PullOffset: 5}})))
	tc := NewTopicConfig("TopicTest")
	tc.ReadQueueNums, tc.WriteQueueNums = 4, 4
	require.Equal(t, `{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"TopicTest","topicSysFlag":0,"writeQueueNums":4}`, string(AppendTopicConfig(nil, &tc)))
	for v, want := range map[float64]string{0: "0.0", 1.5: "1.5", 2: "2.0"} {
		require.Equal(t, want, string(AppendJavaDouble(nil, v)))
	}
	d, err := DecodeDelayOffsetFile(AppendDelayOffsetFile(nil, TopicVersion{}, map[int32]int64{1: 3, 3: 9}))
	require.NoError(t, err)
	require.Equal(t, map[int32]int64{1: 3, 3: 9}, d)
}

func TestSubscriptionGroupDefaults(t *testing.T) {
	g, err := DecodeSubscriptionGroupConfig([]byte(`{"groupName":"g"}`))
	require.NoError(t, err)
	require.Equal(t, NewSubscriptionGroupConfig("g"), g)
	f, err := DecodeSubscriptionGroupFile(AppendSubscriptionGroupFile(nil, TopicVersion{}, []SubscriptionGroupConfig{g}))
	require.NoError(t, err)
	require.Equal(t, "g", f.SubscriptionGroupTable["g"].GroupName)
	require.True(t, f.SubscriptionGroupTable["g"].ConsumeEnable)
}

// FuzzBrokerBodies: the broker's body decoders never panic, and
// QuoteBareKeys never changes valid standard JSON.
func FuzzBrokerBodies(f *testing.F) {
	f.Add([]byte(`{"clientID":"a","consumerDataSet":[{"subscriptionDataSet":[{"codeSet":["1",2]}]}]}`))
	f.Add([]byte(`{"offsetTable":{"t@g":{0:5,1:7}}}`))
	f.Add([]byte(`{"consumerGroup":"g","clientId":"c","mqSet":[{"topic":"t","brokerName":"b","queueId":0}]}`))
	f.Add([]byte(`{"a":"{1:\"x\\\"}"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeHeartbeat(b)
		_, _ = DecodeLockBatchRequest(b)
		_, _ = DecodeConsumerOffsetFile(b)
		_, _ = DecodeSubscriptionGroupFile(b)
		_, _ = DecodeTopicConfigFile(b)
		_, _ = DecodeDelayOffsetFile(b)
		q := QuoteBareKeys(b)
		if json.Valid(b) && !bytes.Equal(q, b) {
			t.Fatalf("valid JSON changed: %q -> %q", b, q)
		}
	})
}
