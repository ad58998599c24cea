package broker

import (
	"context"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

// BenchmarkSend measures one synchronous 1 KiB send through a real
// connection (client and broker allocations together).
func BenchmarkSend(b *testing.B) {
	tb := startBroker(b, nil)
	body := make([]byte, 1024)
	ps := props("TAGS", "TagA", "UNIQ_KEY", "0A0000010000000000000000000000AA")
	ctx := context.Background()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := tb.cli.Invoke(ctx, tb.addr, sendV1("Bench", 0, ps, body))
		if err != nil || resp.Code != 0 {
			b.Fatal(err, resp)
		}
	}
}

// BenchmarkPull measures pulls of 32 stored 1 KiB messages, with every
// kind of subscription the pull path compiles (all, tags, SQL92 from the
// pull, SQL92 from the heartbeat).
func BenchmarkPull(b *testing.B) {
	tb := startBroker(b, func(c *Config) { c.EnablePropertyFilter = true })
	body := make([]byte, 1024)
	ctx := context.Background()
	for i := 0; i < 32; i++ {
		if _, err := tb.cli.Invoke(ctx, tb.addr, sendV1("BenchP", 0, props("TAGS", "TagA", "a", "1"), body)); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for tb.store.MaxOffset("BenchP", 0) < 32 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	hb := request(codec.ReqHeartBeat)
	hb.Body = sqlHeartbeat("hbg", "BenchP", "a = 1").Body
	if r, err := tb.cli.Invoke(ctx, tb.addr, hb); err != nil || r.Code != 0 {
		b.Fatal(err, r)
	}
	sql := pullReq("cg", "BenchP", 0, 0, pullFlagSubscription, 0, "a = 1")
	sql.Set("expressionType", "SQL92")
	for _, bc := range []struct {
		name string
		req  *codec.Frame
	}{
		{"all", pullReq("cg", "BenchP", 0, 0, pullFlagSubscription, 0, "*")},
		{"tags", pullReq("cg", "BenchP", 0, 0, pullFlagSubscription, 0, "TagB || TagA")},
		{"sql", sql},
		{"heartbeatSQL", pullReq("hbg", "BenchP", 0, 0, 0, 0, "")},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(32 * 1024)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				resp, err := tb.cli.Invoke(ctx, tb.addr, bc.req)
				if err != nil || resp.Code != 0 || len(resp.Body) < 32*1024 {
					b.Fatal(err, resp)
				}
			}
		})
	}
}

// BenchmarkEndTransaction measures a half-message send followed at once by
// its commit (the END_TRANSACTION a producer sends right after the half
// message's reply), for both flush modes.
func BenchmarkEndTransaction(b *testing.B) {
	for _, mode := range []string{"ASYNC_FLUSH", "SYNC_FLUSH"} {
		b.Run(mode, func(b *testing.B) {
			tb := startBroker(b, func(c *Config) { c.FlushDiskType = mode })
			tb.topics.createIfAbsent("TX", 1, 6, 0)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				half, err := tb.cli.Invoke(ctx, tb.addr, preparedSend("BENCH"))
				if err != nil || half.Code != 0 {
					b.Fatal(err, half)
				}
				resp, err := tb.cli.Invoke(ctx, tb.addr, endTxn(half, message.TransactionCommitType))
				if err != nil || resp.Code != 0 {
					b.Fatal(err, resp)
				}
			}
		})
	}
}

// BenchmarkSendBack measures a send followed at once by a
// CONSUMER_SEND_MSG_BACK of the message just stored.
func BenchmarkSendBack(b *testing.B) {
	tb := startBroker(b, nil)
	ctx := context.Background()
	ps := props("TAGS", "T")
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := tb.cli.Invoke(ctx, tb.addr, sendV1("SB", 0, ps, []byte("payload")))
		if err != nil || resp.Code != 0 {
			b.Fatal(err, resp)
		}
		_, phy, _ := message.DecodeOffsetMsgID(resp.Value("msgId"))
		resp, err = tb.cli.Invoke(ctx, tb.addr, sendBackReq(phy, "cg", 0, 16))
		if err != nil || resp.Code != 0 {
			b.Fatal(err, resp)
		}
	}
}
