package broker

import (
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
)

// BenchmarkServerSidePopAck pops the same 32 stored 1 KiB messages and
// batch-acks them over a raw socket (the group's pop offset is rewound in
// process between rounds; revive is idle): allocs/op are the broker's
// alone, per 32 messages. Compare BenchmarkServerSidePull.
func BenchmarkServerSidePopAck(b *testing.B) {
	tb := startBroker(b, func(c *Config) { c.ReviveInterval = int64(time.Hour / time.Millisecond) })
	rc := dialRawClient(b, tb.addr)
	wire := sendV2Wire("BenchRawPop", 0, props("TAGS", "TagA"), make([]byte, 1024))
	for range 32 {
		if code := replyCode(b, rc.roundTrip(wire)); code != int(codec.RespSuccess) {
			b.Fatalf("send answered %d", code)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for tb.store.MaxOffset("BenchRawPop", 0) < 32 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	pop := popReq("bpg", "BenchRawPop", 0, 32, 300000, 0).AppendTo(nil)
	body := popfmt.BatchAckBody{BrokerName: "broker-a", Acks: []popfmt.BatchAck{{ConsumerGroup: "bpg", Topic: "BenchRawPop", Retry: "0",
		QueueID: 0, ReviveQueueID: 1, PopTime: 1, InvisibleTime: 300000, BitSet: []byte{0xff, 0xff, 0xff, 0xff}}}}
	ackF := request(codec.ReqBatchAckMessage)
	ackF.Body = popfmt.AppendBatchAckBody(nil, &body)
	ack := ackF.AppendTo(nil)
	for _, bc := range []struct {
		name string
		ack  bool
	}{{"pop", false}, {"pop+batchAck", true}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(32 * 1024)
			b.ReportAllocs()
			for b.Loop() {
				tb.offsets.commit("bpg", "BenchRawPop", 0, 0)
				if code := replyCode(b, rc.roundTrip(pop)); code != int(codec.RespSuccess) {
					b.Fatalf("pop answered %d", code)
				}
				if bc.ack {
					if code := replyCode(b, rc.roundTrip(ack)); code != int(codec.RespSuccess) {
						b.Fatalf("ack answered %d", code)
					}
				}
			}
		})
	}
}
