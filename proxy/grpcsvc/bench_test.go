package grpcsvc

import (
	"context"
	"fmt"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// BenchmarkSendGRPC is SendMessage of 1 KiB through the endpoint (local
// mode, loopback to the broker), parallel clients.
func BenchmarkSendGRPC(b *testing.B) {
	c := startCluster(b, nil)
	c.createTopic(b, "BenchT", "NORMAL", 8)
	ctx := as(context.Background(), "bench-producer")
	c.telemetry(b, ctx, producerSettings("BenchT"))
	body := make([]byte, 1024)
	var id atomic.Int64
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m := newMessage("BenchT", "B"+strconv.FormatInt(id.Add(1), 10), "")
			m.Body = body
			sr, err := c.cli.SendMessage(ctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
			if err != nil || sr.GetStatus().GetCode() != v2.Code_OK {
				b.Error(fmt.Sprint("send: ", err, sr.GetStatus()))
				return
			}
		}
	})
}

// BenchmarkSendRemoting is the same send as SEND_MESSAGE_V2 straight to
// the broker: what the translation costs.
func BenchmarkSendRemoting(b *testing.B) {
	c := startCluster(b, nil)
	c.createTopic(b, "BenchT", "NORMAL", 8)
	body := make([]byte, 1024)
	var q atomic.Int32
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	b.SetParallelism(4)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			h := header.SendMessageRequestV2{ProducerGroup: "BenchT", Topic: "BenchT", DefaultTopic: "TBW102", DefaultTopicQueueNums: 4,
				QueueID: q.Add(1) % 8, BornTimestamp: time.Now().UnixMilli(), Properties: "UNIQ_KEY\x01x\x02"}
			req := newRequest(codec.ReqSendMessageV2, &h)
			req.Body = body
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			resp, err := c.admin.Invoke(ctx, c.broker, req)
			cancel()
			if err != nil || resp.Code != 0 {
				b.Error(fmt.Sprint("send: ", err, resp))
				return
			}
		}
	})
}
