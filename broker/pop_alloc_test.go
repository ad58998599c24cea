package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
)

// popAllocBroker stores 32 messages of 1 KiB in AllocPop queue 0; revive
// is idle so the counts are the request path's alone.
func popAllocBroker(t *testing.T) (*testBroker, *rawClient) {
	tb := startBroker(t, func(c *Config) { c.ReviveInterval = int64(time.Hour / time.Millisecond) })
	rc := dialRawClient(t, tb.addr)
	wire := sendV2Wire("AllocPop", 0, props("TAGS", "TagA"), make([]byte, 1024))
	for range 32 {
		require.Equal(t, int(codec.RespSuccess), replyCode(t, rc.roundTrip(wire)))
	}
	tb.waitDispatched(t, "AllocPop", 0, 32)
	return tb, rc
}

// The broker's side of a POP_MESSAGE round trip returning 32 messages
// (decode, pop lock, read, checkpoint, reply with extraInfo) allocates
// nothing per pop once warm, like a pull (TestPullRoundTripAllocs). The
// group's pop offset is rewound in process before each pop.
func TestPopRoundTripAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb, rc := popAllocBroker(t)
	f := popReq("apg", "AllocPop", 0, 32, 300000, 0)
	f.Opaque = 3
	pop := f.AppendTo(nil)
	get := func() {
		tb.offsets.commit("apg", "AllocPop", 0, 0)
		if code := replyCode(t, rc.roundTrip(pop)); code != int(codec.RespSuccess) {
			t.Fatalf("pop answered %d", code)
		}
	}
	for range 200 {
		get()
	}
	n := testing.AllocsPerRun(300, get)
	t.Logf("%.2f allocs per 32-message pop round trip", n)
	require.Zero(t, n)
}

// ACK_MESSAGE (one message, the gRPC endpoint's ack) and BATCH_ACK_MESSAGE
// (32 messages, plain and retry-topic entries) allocate nothing once warm:
// both are leased routes (no private copy of the request), the batch body
// decodes in place into pooled room, the retry topic's name is built in a
// pooled buffer, and the reply frame is pooled.
func TestAckRoundTripAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb, rc := popAllocBroker(t)
	msgs := tb.popMsgs(t, "aag", "AllocPop", 0, 32, 300000)
	require.Len(t, msgs, 32)
	acks := make([][]byte, len(msgs))
	for i, m := range msgs {
		f := request(codec.ReqAckMessage, "consumerGroup", "aag", "topic", m.realTopic("aag"),
			"queueId", strconv.Itoa(int(m.QueueID)), "extraInfo", m.ex, "offset", strconv.FormatInt(m.QueueOffset, 10))
		f.Opaque = int32(10 + i)
		acks[i] = f.AppendTo(nil)
	}
	i := 0
	ack := func() {
		if code := replyCode(t, rc.roundTrip(acks[i%len(acks)])); code != int(codec.RespSuccess) {
			t.Fatalf("ack answered %d", code)
		}
		i++
	}
	for range 200 {
		ack()
	}
	n := testing.AllocsPerRun(300, ack)
	t.Logf("%.2f allocs per ACK_MESSAGE round trip", n)
	require.Zero(t, n, "ack allocations")

	body := popfmt.BatchAckBody{BrokerName: "broker-a", Acks: []popfmt.BatchAck{{ConsumerGroup: "aag", Topic: "AllocPop", Retry: "0",
		QueueID: 0, ReviveQueueID: 1, PopTime: 1, InvisibleTime: 300000, BitSet: []byte{0xff, 0xff, 0xff, 0xff}},
		// A retry entry: its real topic (%RETRY%aag_AllocPop) is named in a pooled buffer.
		{ConsumerGroup: "aag", Topic: "AllocPop", Retry: "1", QueueID: 0, ReviveQueueID: 1, PopTime: 1, InvisibleTime: 300000,
			BitSet: []byte{0x01}}}}
	bf := request(codec.ReqBatchAckMessage)
	bf.Body = popfmt.AppendBatchAckBody(nil, &body)
	batch := bf.AppendTo(nil)
	bn := testing.AllocsPerRun(100, func() {
		if code := replyCode(t, rc.roundTrip(batch)); code != int(codec.RespSuccess) {
			t.Fatalf("batch ack answered %d", code)
		}
	})
	t.Logf("%.2f allocs per 32-message BATCH_ACK_MESSAGE round trip", bn)
	require.Zero(t, bn, "batch ack allocations")
}
