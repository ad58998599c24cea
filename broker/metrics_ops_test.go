package broker

import (
	"os"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/telemetry"
	"github.com/stretchr/testify/require"
)

// metricValue polls the broker's /metrics until name{match} is want.
func metricValue(t *testing.T, tb *testBroker, name string, match map[string]string, want float64) []byte {
	t.Helper()
	var text []byte
	var got float64
	var ok bool
	deadline := time.Now().Add(10 * time.Second)
	for {
		text = scrapeBroker(t, tb)
		got, ok = telemetry.Value(text, name, match)
		if ok && got == want {
			return text
		}
		if time.Now().After(deadline) {
			require.Failf(t, "metric not reached", "%s%v = %v (found %v), want %v\n%s", name, match, got, ok, want, text)
		}
		time.Sleep(20 * time.Millisecond) // polling a scrape, not synchronizing
	}
}

// TestMetricsPop: the revive log's puts and reads, the revived messages'
// re-puts, the revive round times and the per-queue lag gauges.
func TestMetricsPop(t *testing.T) {
	tb := startMetricsBroker(t, popConfig)
	tb.sendN(t, "PT", 0, 3)
	msgs := tb.popMsgs(t, "pg", "PT", -1, 32, 1000)
	require.Len(t, msgs, 3)
	tb.ackMsg(t, "pg", msgs[0])
	with := func(kv ...string) map[string]string {
		m := map[string]string{"consumer_group": "pg", "topic": "PT"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	text := scrapeBroker(t, tb)
	// POP's deliveries are served as Java's PopMessageProcessor serves
	// them (with is_retry), and not again as pulls.
	v, ok := telemetry.Value(text, "rocketmq_messages_out_total", map[string]string{"consumer_group": "pg", "topic": "PT", "is_retry": "false"})
	require.True(t, ok, "%s", text)
	require.Equal(t, 3.0, v)
	v, ok = telemetry.Value(text, "rocketmq_throughput_out_total", map[string]string{"consumer_group": "pg", "topic": "PT", "is_retry": "false"})
	require.True(t, ok)
	require.Positive(t, v)
	requireJavaOpsShapes(t, text, "rocketmq_messages_out_total", "rocketmq_throughput_out_total")
	v, ok = telemetry.Value(text, "rocketmq_pop_revive_in_message_total", with("revive_message_type", "CK", "put_status", "PUT_OK"))
	require.True(t, ok, "%s", text)
	require.Equal(t, 1.0, v)
	v, _ = telemetry.Value(text, "rocketmq_pop_revive_in_message_total", with("revive_message_type", "ACK", "put_status", "PUT_OK"))
	require.Equal(t, 1.0, v)
	// The revive services read the checkpoint and the ack once each.
	rq := itoa64(int64(msgs[0].ck.ReviveQid))
	metricValue(t, tb, "rocketmq_pop_revive_out_message_total", with("revive_message_type", "CK", "queue_id", rq), 1)
	metricValue(t, tb, "rocketmq_pop_revive_out_message_total", with("revive_message_type", "ACK", "queue_id", rq), 1)

	// Past the invisible time the two unacked messages are re-put.
	tb.reviveAll(time.UnixMilli(msgs[0].ck.PopTime + 1000 + reviveMargin + 1))
	text = metricValue(t, tb, "rocketmq_pop_revive_retry_messages_total", with("put_status", "PUT_OK"), 2)
	// The round closed the checkpoint with a batch ack (ours).
	v, _ = telemetry.Value(text, "rocketmq_pop_revive_in_message_total", with("revive_message_type", "ACK", "put_status", "PUT_OK"))
	require.Equal(t, 2.0, v)
	n, ok := telemetry.Value(text, "rocketmq_pop_buffer_scan_time_consume_milliseconds_count", nil)
	require.True(t, ok)
	require.Positive(t, n)
	// Every revive queue has its lag gauges; with nothing pending the
	// latency is 0 and the lag is what Java serves at rest (its committed
	// offset is one below the next record).
	for q := range tb.cfg.ReviveQueueNum {
		qs := itoa64(int64(q))
		lag, ok := telemetry.Value(text, "rocketmq_pop_revive_lag_milliseconds", map[string]string{"queue_id": qs})
		require.True(t, ok, qs)
		require.GreaterOrEqual(t, lag, 0.0)
		_, ok = telemetry.Value(text, "rocketmq_pop_revive_latency_milliseconds", map[string]string{"queue_id": qs})
		require.True(t, ok, qs)
	}
	requireJavaOpsShapes(t, text, "rocketmq_pop_revive_in_message_total", "rocketmq_pop_revive_out_message_total",
		"rocketmq_pop_revive_retry_messages_total")
	text = metricValue(t, tb, "rocketmq_pop_revive_lag_milliseconds", map[string]string{"queue_id": "7"}, 1)
	v, _ = telemetry.Value(text, "rocketmq_pop_checkpoint_buffer_size", nil)
	require.Equal(t, 0.0, v)
}

// TestMetricsTimer: a timer message counted into the wheel (enqueue
// total, timing count, snapshot, set latency) and out of it.
func TestMetricsTimer(t *testing.T) {
	tb := startMetricsBroker(t, nil)
	tb.topics.createIfAbsent("TM", 1, 6, 0)
	resp := tb.invoke(t, sendV1("TM", 0, props("TIMER_DELAY_SEC", "3"), []byte("later")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tm := map[string]string{"topic": "TM", "storage_type": "local", "storage_medium": "disk"}
	text := metricValue(t, tb, "rocketmq_timer_enqueue_total", tm, 1)
	v, _ := telemetry.Value(text, "rocketmq_timing_messages", tm)
	require.Equal(t, 1.0, v)
	v, _ = telemetry.Value(text, "rocketmq_timer_message_snapshot", map[string]string{"timer_bound_s": "5"})
	require.Equal(t, 1.0, v)
	v, _ = telemetry.Value(text, "rocketmq_timer_message_snapshot", map[string]string{"timer_bound_s": "60"})
	require.Equal(t, 0.0, v)
	// The dequeue lag counts from the dequeue's read position, which its
	// goroutine moves on by itself: polled.
	metricValue(t, tb, "rocketmq_timer_dequeue_lag", nil, 1)
	v, _ = telemetry.Value(text, "rocketmq_delay_message_latency_seconds_bucket", map[string]string{"topic": "TM", "le": "60"})
	require.Equal(t, 1.0, v)
	requireJavaOpsShapes(t, text, "rocketmq_timing_messages", "rocketmq_timer_enqueue_total", "rocketmq_delay_message_latency_seconds")
	metricValue(t, tb, "rocketmq_timer_enqueue_lag", nil, 0)

	tb.pullN(t, "TM", 1, 10*time.Second)
	text = metricValue(t, tb, "rocketmq_timer_dequeue_total", tm, 1)
	v, _ = telemetry.Value(text, "rocketmq_timing_messages", tm)
	require.Equal(t, 0.0, v)
	v, _ = telemetry.Value(text, "rocketmq_timer_message_snapshot", map[string]string{"timer_bound_s": "5"})
	require.Equal(t, 0.0, v)
	requireJavaOpsShapes(t, text, "rocketmq_timer_dequeue_total")
}

// TestMetricsTransactionsAndDLQ: commits, rollbacks, the half-message
// gauge, the finish latency, and both of Java's DLQ paths.
func TestMetricsTransactionsAndDLQ(t *testing.T) {
	tb := startMetricsBroker(t, nil)
	tb.topics.createIfAbsent("TX", 1, 6, 0)
	a := tb.invoke(t, preparedSend("AAAA"))
	require.Equal(t, int32(codec.RespSuccess), a.Code, a.Remark)
	b := tb.invoke(t, preparedSend("BBBB"))
	require.Equal(t, int32(codec.RespSuccess), b.Code, b.Remark)
	tx := map[string]string{"topic": "TX"}
	metricValue(t, tb, "rocketmq_half_messages", tx, 2)
	tb.waitDispatched(t, TopicTransHalf, 0, 2)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, endTxn(a, message.TransactionCommitType)).Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, endTxn(b, message.TransactionRollbackType)).Code)
	text := metricValue(t, tb, "rocketmq_commit_messages_total", tx, 1)
	v, _ := telemetry.Value(text, "rocketmq_rollback_messages_total", tx)
	require.Equal(t, 1.0, v)
	v, _ = telemetry.Value(text, "rocketmq_half_messages", tx)
	require.Equal(t, 0.0, v)
	v, _ = telemetry.Value(text, "rocketmq_finish_message_latency_milliseconds_bucket", map[string]string{"topic": "TX", "le": "5"})
	require.Equal(t, 1.0, v)

	// A send into a retry topic past maxReconsumeTimes (labelled, as
	// Java, with the producer group and the retry topic).
	req := sendV1("%RETRY%cg2", 0, props("TAGS", "x"), []byte("x"))
	req.Set("reconsumeTimes", "3")
	req.Set("maxReconsumeTimes", "2")
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, req).Code)
	// A send-back with delay level -1 (the group and the origin topic).
	resp := tb.invoke(t, sendV1("RT", 0, props("TAGS", "T"), []byte("payload")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	_, phy, err := message.DecodeOffsetMsgID(ext(t, resp, "msgId"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendBackReq(phy, "cg", -1, 16)).Code)
	text = metricValue(t, tb, "rocketmq_send_to_dlq_messages_total",
		map[string]string{"consumer_group": "pg", "topic": "%RETRY%cg2", "is_system": "false"}, 1)
	v, _ = telemetry.Value(text, "rocketmq_send_to_dlq_messages_total", map[string]string{"consumer_group": "cg", "topic": "RT", "is_system": "false"})
	require.Equal(t, 1.0, v)
	requireJavaOpsShapes(t, text, "rocketmq_send_to_dlq_messages_total", "rocketmq_commit_messages_total",
		"rocketmq_rollback_messages_total", "rocketmq_finish_message_latency_milliseconds", "rocketmq_half_messages")
}

// TestMetricsOpsCountersAllocs: a counter of a known key allocates
// nothing (POP, timer, transaction and DLQ).
func TestMetricsOpsCountersAllocs(t *testing.T) {
	p, tm, x := newPopMetrics(), newTimerMetrics(), newTxnMetrics()
	run := func() {
		p.onPut("g", "T", reviveKindCK, store.PutOK)
		p.onRead("g", "T", 1, reviveKindAck)
		p.onRetry("g", "T", store.PutOK)
		p.onRound(time.Millisecond)
		tm.onEnqueue("T", 10_000, 1_000, false)
		tm.onDequeue("T")
		x.onHalf("T")
		x.onCommit("T", 0)
		x.onDLQ("g", "T")
	}
	run()
	require.Zero(t, testing.AllocsPerRun(1000, run))
	var nilPop *popMetrics
	var nilTxn *txnMetrics
	nilPop.onPut("g", "T", reviveKindCK, store.PutOK) // metrics off: nil-safe
	nilTxn.onDLQ("g", "T")
}

// requireJavaOpsShapes checks that text serves the named series with the
// type, label names and buckets of a real Java 5.3.3 broker's scrape after
// POP, timer, transaction and DLQ traffic (metrics/testdata
// java-5.3.3-ops.prom, recorded by record-java-ops.sh: the Java SDK's
// delay, transaction, check-back, redelivery and DLQ scenarios through
// Apache's proxy 5.3.3).
func requireJavaOpsShapes(t *testing.T, text []byte, names ...string) {
	t.Helper()
	ours, err := telemetry.Shape(text)
	require.NoError(t, err)
	golden, err := os.ReadFile("metrics/testdata/java-5.3.3-ops.prom")
	require.NoError(t, err)
	java, err := telemetry.Shape(golden)
	require.NoError(t, err)
	for _, name := range names {
		want, ok := java[name]
		require.True(t, ok, "%s is not in the Java golden scrape", name)
		require.Equal(t, want, ours[name], name)
	}
}
