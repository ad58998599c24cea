package popfmt

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestExtraInfoRoundTrip(t *testing.T) {
	s := string(AppendExtraInfo(nil, 10, 1700000000000, 60000, 3, "%RETRY%g_T", "broker-a", 2, 12))
	require.Equal(t, "10 1700000000000 60000 3 1 broker-a 2 12", s)
	e, err := ParseExtraInfo(s)
	require.NoError(t, err)
	require.Equal(t, ExtraInfo{CKQueueOffset: 10, PopTime: 1700000000000, InvisibleTime: 60000, ReviveQid: 3, Retry: '1',
		BrokerName: "broker-a", QueueID: 2, MsgQueueOffset: 12}, e)
	_, err = ParseExtraInfo("1 2 3")
	require.ErrorIs(t, err, ErrExtraInfo)
	_, err = ParseExtraInfo("x 2 3 4 0 b 1 1")
	require.ErrorIs(t, err, ErrExtraInfo)
	require.Equal(t, "%RETRY%g_T", RealTopic("T", "g", '1'))
	require.Equal(t, "%RETRY%g+T", RealTopic("T", "g", '2'))
	require.Equal(t, "T", NormalTopic("%RETRY%g_T", "g"))
	require.Equal(t, "T", NormalTopic("%RETRY%g+T", "g"))
}

func TestInfoStrings(t *testing.T) {
	b := AppendStartOffsetInfo(nil, "T", 0, 5)
	b = AppendStartOffsetInfo(b, "%RETRY%g_T", 1, 7)
	require.Equal(t, "0 0 5;1 1 7", string(b))
	require.Equal(t, map[string]int64{"0@0": 5, "1@1": 7}, ParseStartOffsetInfo(string(b)))
	m := AppendMsgOffsetInfo(nil, "T", 0, []int64{5, 6})
	require.Equal(t, "0 0 5,6", string(m))
	require.Equal(t, map[string][]int64{"0@0": {5, 6}}, ParseMsgOffsetInfo(string(m)))
}

func TestCheckPointJSON(t *testing.T) {
	ck := CheckPoint{StartOffset: 4, PopTime: 100, InvisibleTime: 50, Num: 2, QueueID: 1, Topic: "T", CID: "g", Diff: []int32{0, 2}, BrokerName: "b"}
	s := string(ck.AppendJSON(nil))
	require.Equal(t, `{"bm":0,"bn":"b","c":"g","d":[0,2],"it":50,"n":2,"pt":100,"q":1,"reviveTime":150,"ro":0,"so":4,"t":"T"}`, s)
	require.True(t, json.Valid([]byte(s)))
	back, err := DecodeCheckPoint([]byte(s))
	require.NoError(t, err)
	require.Equal(t, ck, back)
	require.Equal(t, 1, ck.IndexOfAck(6))
	require.Equal(t, -1, ck.IndexOfAck(5))
	require.Equal(t, int64(6), ck.AckOffsetByIndex(1))
}

func TestAckJSON(t *testing.T) {
	a := AckMsg{AckOffset: 6, StartOffset: 4, ConsumerGroup: "g", Topic: "T", QueueID: 1, PopTime: 100, BrokerName: "b"}
	s := a.AppendJSON(nil)
	require.Equal(t, `{"ao":6,"bn":"b","c":"g","pt":100,"q":1,"so":4,"t":"T"}`, string(s))
	back, err := DecodeAckMsg(s)
	require.NoError(t, err)
	require.Equal(t, a, back)
	long, err := DecodeAckMsg([]byte(`{"ackOffset":6,"startOffset":4,"consumerGroup":"g","topic":"T","queueId":1,"popTime":100,"brokerName":"b"}`))
	require.NoError(t, err)
	require.Equal(t, a, long)
	a.AckOffsetList = []int64{4, 6}
	require.Contains(t, string(a.AppendJSON(nil)), `"aol":[4,6]`)
	require.Equal(t, a.Key(), (&CheckPoint{Topic: "T", CID: "g", QueueID: 1, StartOffset: 4, PopTime: 100, BrokerName: "b"}).Key())
}

func TestBatchAckBody(t *testing.T) {
	body := BatchAckBody{BrokerName: "b", Acks: []BatchAck{{ConsumerGroup: "g", Topic: "T", Retry: "0", StartOffset: 10, QueueID: 1,
		ReviveQueueID: 2, PopTime: 100, InvisibleTime: 50, BitSet: []byte{0b101, 0b1}}}}
	raw := AppendBatchAckBody(nil, &body)
	back, err := DecodeBatchAckBody(raw)
	require.NoError(t, err)
	require.Equal(t, body, back)
	require.Equal(t, []int64{10, 12, 18}, back.Acks[0].Offsets())
}

// DecodeBatchAckBodyInto reads what DecodeBatchAckBody reads, reusing a
// previous decode's room: a longer body after a shorter one and back, the
// long-name keys, and the stale bits of a reused slot never leak through.
func TestDecodeBatchAckBodyIntoReuse(t *testing.T) {
	long := BatchAckBody{BrokerName: "b", Acks: []BatchAck{
		{ConsumerGroup: "g", Topic: "T", Retry: "0", StartOffset: 10, QueueID: 1, ReviveQueueID: 2, PopTime: 100, InvisibleTime: 50, BitSet: []byte{0xff, 0xff, 0x3}},
		{ConsumerGroup: "g2", Topic: "U", Retry: "1", StartOffset: 7, QueueID: 0, ReviveQueueID: 3, PopTime: 101, InvisibleTime: 51, BitSet: []byte{0x1}},
	}}
	short := BatchAckBody{BrokerName: "c", Acks: []BatchAck{{ConsumerGroup: "h", Topic: "V", Retry: "2", StartOffset: 1, QueueID: 2,
		ReviveQueueID: 0, PopTime: 5, InvisibleTime: 6, BitSet: []byte{0x80}}}}
	var into BatchAckBody
	for _, want := range []BatchAckBody{long, short, long} {
		raw := AppendBatchAckBody(nil, &want)
		require.NoError(t, DecodeBatchAckBodyInto(raw, &into))
		require.Equal(t, want, into)
		copied, err := DecodeBatchAckBody(raw)
		require.NoError(t, err)
		require.Equal(t, copied, into)
	}
	longNames := `{"brokerName":"b","acks":[{"consumerGroup":"g","topic":"T","retry":"0","startOffset":3,"queueId":1,"reviveQueueId":2,"popTime":9,"invisibleTime":8,"bitSet":"AQ=="}]}`
	require.NoError(t, DecodeBatchAckBodyInto([]byte(longNames), &into))
	require.Equal(t, BatchAckBody{BrokerName: "b", Acks: []BatchAck{{ConsumerGroup: "g", Topic: "T", Retry: "0", StartOffset: 3, QueueID: 1,
		ReviveQueueID: 2, PopTime: 9, InvisibleTime: 8, BitSet: []byte{1}}}}, into)
	require.Error(t, DecodeBatchAckBodyInto([]byte(`{"acks":[{"b":"!!"}]}`), &into))
	require.Empty(t, into.Acks)
}

// The strings below were printed by Java 5.3.3's own classes (fastjson
// 1.2.x: JSON.toJSONString(PopCheckPoint/AckMsg/BatchAckMsg),
// BatchAckMessageRequestBody.encode) for the same values.
func TestJavaGolden(t *testing.T) {
	ck := CheckPoint{StartOffset: 4, PopTime: 100, InvisibleTime: 50, Num: 2, QueueID: 1, Topic: "T", CID: "g", Diff: []int32{0, 2}, BrokerName: "b"}
	require.Equal(t, `{"bm":0,"bn":"b","c":"g","d":[0,2],"it":50,"n":2,"pt":100,"q":1,"reviveTime":150,"ro":0,"so":4,"t":"T"}`, string(ck.AppendJSON(nil)))
	a := AckMsg{AckOffset: 6, StartOffset: 4, ConsumerGroup: "g", Topic: "T", QueueID: 1, PopTime: 100, BrokerName: "b"}
	require.Equal(t, `{"ao":6,"bn":"b","c":"g","pt":100,"q":1,"so":4,"t":"T"}`, string(a.AppendJSON(nil)))
	a.AckOffset, a.AckOffsetList = -1, []int64{4, 6}
	require.Equal(t, `{"ao":-1,"aol":[4,6],"bn":"b","c":"g","pt":100,"q":1,"so":4,"t":"T"}`, string(a.AppendJSON(nil)))
	body := BatchAckBody{BrokerName: "b", Acks: []BatchAck{{ConsumerGroup: "g", Topic: "T", Retry: "0", StartOffset: 10, QueueID: 1,
		ReviveQueueID: 2, PopTime: 100, InvisibleTime: 50, BitSet: []byte{0b101, 0b1}}}}
	require.Equal(t, `{"acks":[{"b":"BQE=","c":"g","it":50,"pt":100,"q":1,"r":"0","rq":2,"so":10,"t":"T"}],"brokerName":"b"}`, string(AppendBatchAckBody(nil, &body)))
}

func TestAppendRealTopic(t *testing.T) {
	for _, m := range []byte{'0', '1', '2'} {
		require.Equal(t, RealTopic("T", "g", m), string(AppendRealTopic([]byte("x"), "T", "g", m))[1:], "mark %c", m)
	}
}
