package main

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func baseProduce(fb *fakeBroker, topic string) produceConfig {
	return produceConfig{
		NameSrv: fb.addr, Topic: topic, Group: "pg", Threads: 4, Conns: 2, Inflight: 8,
		Size: 256, Mode: "async", Batch: 16, Duration: 40 * time.Second, Queues: 4,
		// Generous: the shared 2-core machine can stall a reply for seconds.
		Serialize: codec.SerializeRocketMQ, Timeout: 15 * time.Second,
	}
}

func TestProduceCountStopsAndMatchesBroker(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("T1", 4)
	for _, ser := range []codec.SerializeType{codec.SerializeRocketMQ, codec.SerializeJSON} {
		topic := "T1"
		before := fb.stored(topic)
		cfg := baseProduce(fb, topic)
		cfg.Serialize = ser
		cfg.Count = 3000
		start := time.Now()
		sum, err := runProduce(cfg)
		require.NoError(t, err)
		require.Less(t, time.Since(start), 30*time.Second, "count ends the run before -duration")
		require.Equal(t, uint64(3000), sum.Messages, "%+v", sum)
		require.Equal(t, uint64(3000), sum.Requests)
		require.Equal(t, uint64(3000*256), sum.Bytes)
		require.Zero(t, sum.ErrTotal, "errors: %v", sum.Errors)
		require.Equal(t, before+3000, fb.stored(topic))
		require.Equal(t, uint64(3000), sum.Latency.Samples)
		require.Greater(t, sum.Latency.P99, 0.0)
		require.GreaterOrEqual(t, sum.Latency.Max, sum.Latency.P99)
	}
}

func TestProduceDurationStopsByItself(t *testing.T) {
	fb := startFakeBroker(t)
	cfg := baseProduce(fb, "T2")
	cfg.Create = true // the topic does not exist yet: UPDATE_AND_CREATE_TOPIC via cluster info
	cfg.Mode = "sync"
	cfg.Duration = 700 * time.Millisecond
	start := time.Now()
	sum, err := runProduce(cfg)
	require.NoError(t, err)
	took := time.Since(start)
	require.GreaterOrEqual(t, took, 700*time.Millisecond)
	require.Less(t, took, 15*time.Second, "the run ends at -duration plus the drain of replies in flight")
	require.Equal(t, 1, fb.creates)
	require.Greater(t, sum.Messages, uint64(0))
	require.Equal(t, int(sum.Messages), fb.stored("T2"), "every counted send was stored: %+v", sum)
	require.Zero(t, sum.ErrTotal)
}

func TestProduceBatchMode(t *testing.T) {
	fb := startFakeBroker(t)
	cfg := baseProduce(fb, "T3")
	cfg.NameSrv, cfg.Broker = "", fb.addr // talk to the broker directly
	fb.addTopic("T3", 4)
	cfg.Mode, cfg.Batch, cfg.Count = "batch", 16, 320
	sum, err := runProduce(cfg)
	require.NoError(t, err)
	require.Equal(t, uint64(320), sum.Messages)
	require.Equal(t, uint64(20), sum.Requests)
	require.Equal(t, 320, fb.stored("T3"))
}

func TestProduceOnewayMode(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("T4", 2)
	cfg := baseProduce(fb, "T4")
	cfg.Mode, cfg.Count = "oneway", 1000
	sum, err := runProduce(cfg)
	require.NoError(t, err)
	require.Equal(t, uint64(1000), sum.Messages)
	require.Zero(t, sum.Latency.Samples, "oneway sends have no reply to time")
	require.Eventually(t, func() bool { return fb.stored("T4") == 1000 }, 5*time.Second, 5*time.Millisecond)
}

func TestProduceOpenLoopRate(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("T5", 4)
	cfg := baseProduce(fb, "T5")
	cfg.Rate, cfg.Duration = 2000, time.Second
	sum, err := runProduce(cfg)
	require.NoError(t, err)
	require.InDelta(t, 2000, float64(sum.Messages), 200, "fixed-rate run sends rate*duration")
	require.Equal(t, int(sum.Messages), fb.stored("T5"))
}

func TestProduceCountsErrorsByCodeName(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("T6", 2)
	fb.denySends("T6", codec.RespNoPermission)
	cfg := baseProduce(fb, "T6")
	cfg.Count = 100
	sum, err := runProduce(cfg)
	require.NoError(t, err)
	require.Zero(t, sum.Messages)
	require.Equal(t, uint64(100), sum.ErrTotal)
	require.Equal(t, map[string]uint64{"NO_PERMISSION": 100}, sum.Errors)
}

func TestProduceWithoutRouteFails(t *testing.T) {
	fb := startFakeBroker(t)
	cfg := baseProduce(fb, "Missing")
	_, err := runProduce(cfg)
	require.ErrorContains(t, err, "no route")
}

func TestConsumeCatchUpCountsAndLatency(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("C1", 4)
	cfg := baseProduce(fb, "C1")
	cfg.Count = 1000
	_, err := runProduce(cfg)
	require.NoError(t, err)

	start := time.Now()
	sum, err := runConsume(consumeConfig{NameSrv: fb.addr, Topic: "C1", Group: "cg", Queues: 4, From: "first",
		MaxMsgs: 32, Suspend: time.Second, Duration: 40 * time.Second, Count: 1000, Timeout: 10 * time.Second})
	require.NoError(t, err)
	require.Less(t, time.Since(start), 30*time.Second, "count ends the run before -duration")
	require.Equal(t, uint64(1000), sum.Messages)
	require.Equal(t, uint64(1000*256), sum.Bytes)
	require.Equal(t, uint64(1000), sum.Latency.Samples)
	require.Zero(t, sum.ErrTotal)
}

func TestConsumeFromLastSeesOnlyNewMessages(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("C2", 2)
	old := baseProduce(fb, "C2")
	old.Count = 200
	_, err := runProduce(old)
	require.NoError(t, err)

	type result struct {
		sum Summary
		err error
	}
	res := make(chan result, 1)
	go func() {
		s, err := runConsume(consumeConfig{NameSrv: fb.addr, Topic: "C2", Group: "cg", Queues: 2, From: "last",
			MaxMsgs: 32, Suspend: time.Second, Duration: 3 * time.Second, Timeout: 10 * time.Second})
		res <- result{s, err}
	}()
	// Produce while the consumer is parked (held pulls wake on arrival).
	// The consumer starts from "last": wait until it has read both max offsets.
	require.Eventually(t, func() bool { return fb.maxOffsetCalls() == 2 }, 10*time.Second, time.Millisecond)
	cfg := baseProduce(fb, "C2")
	cfg.Count = 300
	_, err = runProduce(cfg)
	require.NoError(t, err)
	r := <-res
	require.NoError(t, r.err)
	require.Equal(t, uint64(300), r.sum.Messages, "exactly the messages produced after the start")
	require.Less(t, r.sum.Latency.P50, 3000.0, "end-to-end latency is from the send stamp, in ms")
}

func TestScanRecords(t *testing.T) {
	now := time.Now()
	stamped := make([]byte, 64)
	copy(stamped, bodyMagic)
	sent := now.Add(-3 * time.Millisecond).UnixNano()
	for i := 0; i < 8; i++ {
		stamped[bodyStampAt+i] = byte(uint64(sent) >> (56 - 8*i))
	}
	var b []byte
	b = append(b, record(0, 0, now.Add(-2*time.Second).UnixMilli(), []byte("plain"), "T")...)
	b = append(b, record(0, 1, now.UnixMilli(), stamped, "T")...)
	n, bytes, lats, err := scanRecords(b, now.UnixNano(), nil)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Equal(t, 5+64, bytes)
	require.InDelta(t, 2_000_000, lats[0], 1000, "born timestamp has ms resolution")
	require.Equal(t, int64(3000), lats[1], "stamp has µs resolution")

	_, _, _, err = scanRecords(b[:len(b)-3], now.UnixNano(), nil)
	require.Error(t, err)
	_, _, _, err = scanRecords([]byte{0, 0, 0, 5, 1}, now.UnixNano(), nil)
	require.Error(t, err)
}

func TestCLIJSONSummary(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("J1", 4)
	var out, errOut bytes.Buffer
	err := run([]string{"produce", "-b", fb.addr, "-t", "J1", "-queues", "4", "-threads", "2", "-conns", "1",
		"-count", "200", "-size", "100", "-json", "-quiet", "-serialize", "json", "-timeout", "15s"}, &out, &errOut)
	require.NoError(t, err, errOut.String())
	var sum Summary
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum), out.String())
	require.Equal(t, "produce", sum.Role)
	require.Equal(t, uint64(200), sum.Messages, "%+v", sum)
	require.Equal(t, uint64(200), sum.Latency.Samples)
	require.Empty(t, errOut.String(), "-quiet prints no progress")

	require.Error(t, run([]string{"produce", "-b", fb.addr, "-mode", "bogus", "-count", "1"}, &out, &errOut))
	require.Error(t, run([]string{"produce", "-b", fb.addr, "-duration", "0"}, &out, &errOut))
	require.Error(t, run([]string{"frobnicate"}, &out, &errOut))
}
