package broker

import (
	"context"
	"testing"
	"time"
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

// BenchmarkPull measures pulls of 32 stored 1 KiB messages.
func BenchmarkPull(b *testing.B) {
	tb := startBroker(b, nil)
	body := make([]byte, 1024)
	ctx := context.Background()
	for i := 0; i < 32; i++ {
		if _, err := tb.cli.Invoke(ctx, tb.addr, sendV1("BenchP", 0, "", body)); err != nil {
			b.Fatal(err)
		}
	}
	deadline := time.Now().Add(5 * time.Second)
	for tb.store.MaxOffset("BenchP", 0) < 32 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	b.SetBytes(32 * 1024)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		resp, err := tb.cli.Invoke(ctx, tb.addr, pullReq("cg", "BenchP", 0, 0, pullFlagSubscription, 0, "*"))
		if err != nil || resp.Code != 0 {
			b.Fatal(err, resp)
		}
	}
}
