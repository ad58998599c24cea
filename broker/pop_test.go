package broker

import (
	"context"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

func popReq(group, topic string, queueID int, maxMsgs int, invisibleMs, pollMs int64, kv ...string) *codec.Frame {
	f := request(codec.ReqPopMessage, "consumerGroup", group, "topic", topic, "queueId", strconv.Itoa(queueID),
		"maxMsgNums", strconv.Itoa(maxMsgs), "invisibleTime", strconv.FormatInt(invisibleMs, 10),
		"pollTime", strconv.FormatInt(pollMs, 10), "bornTime", strconv.FormatInt(time.Now().UnixMilli(), 10), "initMode", "0")
	for i := 0; i+1 < len(kv); i += 2 {
		f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
	}
	return f
}

// popped is a message as a Java client sees it after processPopResponse.
type popped struct {
	message.Ext
	ck popfmt.ExtraInfo
	ex string
}

func (m popped) prop(k string) string { v, _ := message.Property(m.Properties, k); return v }

// realTopic is the topic ACK and CHANGE name (the client's getRealTopic).
func (m popped) realTopic(group string) string { return popfmt.RealTopic(m.Topic, group, m.ck.Retry) }

// popResult decodes a POP response as Java's MQClientAPIImpl.processPopResponse:
// a record without POP_CK gets one built from the response header.
func popResult(t *testing.T, resp *codec.Frame, brokerName string) []popped {
	t.Helper()
	if resp.Code != int32(codec.RespSuccess) {
		return nil
	}
	popTime, _ := strconv.ParseInt(ext(t, resp, "popTime"), 10, 64)
	invisible, _ := strconv.ParseInt(ext(t, resp, "invisibleTime"), 10, 64)
	rq, _ := strconv.Atoi(ext(t, resp, "reviveQid"))
	starts := popfmt.ParseStartOffsetInfo(ext(t, resp, "startOffsetInfo"))
	var out []popped
	for _, e := range decodeRecords(t, resp.Body) {
		m := popped{Ext: e}
		ex, ok := message.Property(e.Properties, message.PropertyPopCK)
		if !ok {
			key := string(popfmt.RetryMark(e.Topic)) + "@" + strconv.Itoa(int(e.QueueID))
			start, found := starts[key]
			require.True(t, found, "startOffsetInfo has no %s", key)
			ex = string(popfmt.AppendExtraInfo(nil, start, popTime, invisible, int32(rq), e.Topic, brokerName, e.QueueID, e.QueueOffset))
		}
		ck, err := popfmt.ParseExtraInfo(ex)
		require.NoError(t, err, ex)
		m.ck, m.ex = ck, ex
		out = append(out, m)
	}
	return out
}

func (tb *testBroker) popMsgs(t *testing.T, group, topic string, q, n int, invisibleMs int64) []popped {
	t.Helper()
	resp := tb.invoke(t, popReq(group, topic, q, n, invisibleMs, 0))
	require.Contains(t, []int32{int32(codec.RespSuccess), int32(codec.RespPollingTimeout)}, resp.Code, resp.Remark)
	return popResult(t, resp, tb.cfg.BrokerName)
}

func (tb *testBroker) ackMsg(t *testing.T, group string, m popped) {
	t.Helper()
	resp := tb.invoke(t, request(codec.ReqAckMessage, "consumerGroup", group, "topic", m.realTopic(group),
		"queueId", strconv.Itoa(int(m.QueueID)), "extraInfo", m.ex, "offset", strconv.FormatInt(m.QueueOffset, 10)))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

// reviveAll runs one revive round on every revive queue as if at time at.
func (tb *testBroker) reviveAll(at time.Time) {
	tb.store.AwaitDispatched(time.Second)
	for _, rs := range tb.revive {
		rs.round(at.UnixMilli())
	}
	tb.store.AwaitDispatched(time.Second)
}

func (tb *testBroker) sendN(t *testing.T, topic string, q, n int) {
	t.Helper()
	for i := range n {
		resp := tb.invoke(t, sendV1(topic, q, props("TAGS", "a"), []byte("m"+strconv.Itoa(i))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	tb.waitDispatched(t, topic, int32(q), int64(n))
}

func popConfig(c *Config) { c.ReviveInterval = 100 }

func TestPopAckRevive(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "PT", 0, 3)
	msgs := tb.popMsgs(t, "pg", "PT", -1, 32, 1000)
	require.Len(t, msgs, 3)
	for i, m := range msgs {
		require.Equal(t, "m"+strconv.Itoa(i), string(m.Body))
		require.Equal(t, byte('0'), m.ck.Retry)
		require.Equal(t, int64(0), m.ck.CKQueueOffset)
		require.Equal(t, int64(i), m.ck.MsgQueueOffset)
		require.Equal(t, "broker-a", m.ck.BrokerName)
	}
	// Popped and invisible: nothing more to pop.
	require.Empty(t, tb.popMsgs(t, "pg", "PT", -1, 32, 1000))
	// The checkpoint is in the revive log, in Java's format.
	rq := msgs[0].ck.ReviveQid
	rev := tb.readQueue(t, tb.Broker.pop.reviveTopic, rq)
	require.Len(t, rev, 1)
	tag, _ := message.Property(rev[0].Properties, message.PropertyTags)
	require.Equal(t, "ck", tag)
	ck, err := popfmt.DecodeCheckPoint(rev[0].Body)
	require.NoError(t, err)
	require.Equal(t, popfmt.CheckPoint{StartOffset: 0, PopTime: msgs[0].ck.PopTime, InvisibleTime: 1000, Num: 3, QueueID: 0,
		Topic: "PT", CID: "pg", Diff: []int32{0, 1, 2}, BrokerName: "broker-a"}, ck)
	uk, _ := message.Property(rev[0].Properties, message.PropertyUniqKey)
	require.Equal(t, ck.UniqID(), uk)
	dm, _ := message.Property(rev[0].Properties, message.PropertyTimerDeliverMs)
	require.Equal(t, strconv.FormatInt(ck.ReviveTime()-1000, 10), dm, "Java's deliverTimeMs")

	tb.ackMsg(t, "pg", msgs[0])
	tb.ackMsg(t, "pg", msgs[2])
	// Before the invisible time nothing comes back.
	tb.reviveAll(time.UnixMilli(msgs[0].ck.PopTime + 500))
	require.Equal(t, int64(0), tb.store.MaxOffset("%RETRY%pg_PT", 0))

	// After it, the unacked message comes back through the retry topic.
	var again []popped
	require.Eventually(t, func() bool {
		again = append(again, tb.popMsgs(t, "pg", "PT", -1, 32, 1000)...)
		return len(again) > 0
	}, 10*time.Second, 20*time.Millisecond)
	require.Len(t, again, 1)
	m := again[0]
	require.Equal(t, "m1", string(m.Body))
	require.Equal(t, "PT", m.Topic)
	require.Equal(t, int32(1), m.ReconsumeTimes)
	require.Equal(t, byte('1'), m.ck.Retry)
	require.Equal(t, "%RETRY%pg_PT", m.realTopic("pg"))
	require.Equal(t, strconv.FormatInt(msgs[0].ck.PopTime, 10), m.prop(message.PropertyFirstPopTime))
	tb.ackMsg(t, "pg", m)
	tb.reviveAll(time.Now().Add(time.Minute))
	require.Equal(t, int64(1), tb.store.MaxOffset("%RETRY%pg_PT", 0))
	require.Empty(t, tb.popMsgs(t, "pg", "PT", -1, 32, 1000))
}

// pull reads a queue from offset 0 with the store (no group).
func (tb *testBroker) readQueue(t *testing.T, topic string, q int32) []message.Ext {
	t.Helper()
	tb.store.AwaitDispatched(time.Second)
	resp := tb.invoke(t, pullReq("reader", topic, int(q), 0, pullFlagSubscription, 0, "*"))
	if resp.Code != int32(codec.RespSuccess) {
		return nil
	}
	return decodeRecords(t, resp.Body)
}

func TestPopBatchAck(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "BT", 0, 3)
	msgs := tb.popMsgs(t, "bg", "BT", 0, 32, 1000)
	require.Len(t, msgs, 3)
	body := popfmt.BatchAckBody{BrokerName: "broker-a", Acks: []popfmt.BatchAck{{ConsumerGroup: "bg", Topic: "BT", Retry: "0",
		StartOffset: 0, QueueID: 0, ReviveQueueID: msgs[0].ck.ReviveQid, PopTime: msgs[0].ck.PopTime, InvisibleTime: 1000,
		BitSet: []byte{0b111}}}}
	req := request(codec.ReqBatchAckMessage)
	req.Body = popfmt.AppendBatchAckBody(nil, &body)
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.reviveAll(time.Now().Add(time.Minute))
	require.Equal(t, int64(0), tb.store.MaxOffset("%RETRY%bg_BT", 0))
}

func TestPopChangeInvisibleTime(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "CT", 0, 1)
	msgs := tb.popMsgs(t, "cg", "CT", 0, 1, 1000)
	require.Len(t, msgs, 1)
	m := msgs[0]
	resp := tb.invoke(t, request(codec.ReqChangeMessageInvisibletime, "consumerGroup", "cg", "topic", "CT", "queueId", "0",
		"extraInfo", m.ex, "offset", "0", "invisibleTime", "60000"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "60000", ext(t, resp, "invisibleTime"))
	require.Equal(t, strconv.Itoa(int(m.ck.ReviveQid)), ext(t, resp, "reviveQid"))
	newPop, _ := strconv.ParseInt(ext(t, resp, "popTime"), 10, 64)
	// The original invisible time is past: still invisible.
	tb.reviveAll(time.UnixMilli(m.ck.PopTime + 5000))
	require.Equal(t, int64(0), tb.store.MaxOffset("%RETRY%cg_CT", 0))
	// Past the new one it comes back.
	tb.reviveAll(time.UnixMilli(newPop + 60000 + reviveMargin))
	require.Equal(t, int64(1), tb.store.MaxOffset("%RETRY%cg_CT", 0))
}

func TestPopDLQAfterMaxReconsume(t *testing.T) {
	tb := startBroker(t, popConfig)
	sg, _ := tb.groups.find("dg")
	sg.RetryMaxTimes = 1
	require.NoError(t, tb.groups.put(sg))
	tb.sendN(t, "DT", 0, 1)
	require.Len(t, tb.popMsgs(t, "dg", "DT", 0, 1, 1000), 1)
	tb.reviveAll(time.Now().Add(time.Minute))
	require.Equal(t, int64(1), tb.store.MaxOffset("%RETRY%dg_DT", 0))
	var again []popped
	require.Eventually(t, func() bool {
		again = tb.popMsgs(t, "dg", "DT", -1, 1, 1000)
		return len(again) == 1
	}, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(1), again[0].ReconsumeTimes)
	tb.reviveAll(time.Now().Add(2 * time.Minute))
	dlq := tb.readQueue(t, "%DLQ%dg", 0)
	require.Len(t, dlq, 1)
	require.Equal(t, int32(2), dlq[0].ReconsumeTimes)
	require.Equal(t, int64(1), tb.store.MaxOffset("%RETRY%dg_DT", 0))
}

func TestPopInvisibleSurvivesRestart(t *testing.T) {
	root := t.TempDir()
	tb, stop := startBrokerAt(t, root, popConfig)
	tb.sendN(t, "RT", 0, 2)
	msgs := tb.popMsgs(t, "rg", "RT", 0, 32, 1500)
	require.Len(t, msgs, 2)
	tb.ackMsg(t, "rg", msgs[0])
	stop()

	tb2, _ := startBrokerAt(t, root, popConfig)
	// Still invisible right after the restart, back after the invisible time.
	var again []popped
	require.Eventually(t, func() bool {
		again = append(again, tb2.popMsgs(t, "rg", "RT", -1, 32, 60000)...)
		return len(again) > 0
	}, 15*time.Second, 50*time.Millisecond)
	require.GreaterOrEqual(t, time.Now().UnixMilli(), msgs[0].ck.PopTime+1500)
	require.Len(t, again, 1)
	require.Equal(t, "m1", string(again[0].Body))
	require.Equal(t, int32(1), again[0].ReconsumeTimes)
	// Revived once only, even though the revive log was read again.
	tb2.reviveAll(time.Now().Add(30 * time.Second))
	require.Equal(t, int64(1), tb2.store.MaxOffset("%RETRY%rg_RT", 0))
}

func TestPopLongPollWokenBySend(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "LT", 0, 1)
	require.Len(t, tb.popMsgs(t, "lg", "LT", -1, 32, 60000), 1)
	held := tb.Broker.pop.holds
	type out struct {
		resp *codec.Frame
		err  error
	}
	done := make(chan out, 1)
	start := time.Now()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := tb.cli.Invoke(ctx, tb.addr, popReq("lg", "LT", -1, 32, 60000, 8000))
		done <- out{resp, err}
	}()
	require.Eventually(t, func() bool { return held.held() == 1 }, 5*time.Second, time.Millisecond)
	// POLLING_INFO sees it.
	resp := tb.invoke(t, request(codec.ReqPollingInfo, "consumerGroup", "lg", "topic", "LT", "queueId", "-1"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "1", ext(t, resp, "pollingNum"))
	tb.sendN(t, "LT", 0, 2)
	o := <-done
	require.NoError(t, o.err)
	require.Equal(t, int32(codec.RespSuccess), o.resp.Code, o.resp.Remark)
	require.Less(t, time.Since(start), 8*time.Second)
	got := popResult(t, o.resp, "broker-a")
	require.NotEmpty(t, got)
	require.Equal(t, "m0", string(got[0].Body)) // the second send's first
	require.Equal(t, 0, held.held())

	// A held pop with nothing arriving answers POLLING_TIMEOUT at its deadline.
	tb.waitDispatched(t, "LT", 0, 3)
	for len(tb.popMsgs(t, "lg", "LT", -1, 32, 60000)) > 0 {
	}
	resp = tb.invoke(t, popReq("lg", "LT", -1, 32, 60000, 200))
	require.Equal(t, int32(codec.RespPollingTimeout), resp.Code)
	require.Eventually(t, func() bool { return tb.Broker.pop.inflight.Load() == 0 }, 5*time.Second, time.Millisecond)

	// A held pop whose connection closes is freed at once.
	cli := newTestClient(t)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_, _ = cli.Invoke(ctx, tb.addr, popReq("lg", "LT", -1, 32, 60000, 20000))
	}()
	require.Eventually(t, func() bool { return held.held() == 1 }, 5*time.Second, time.Millisecond)
	cli.Close()
	require.Eventually(t, func() bool { return held.held() == 0 && tb.Broker.pop.inflight.Load() == 0 }, 5*time.Second, time.Millisecond)
}

func TestPopNotification(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "NT", 0, 1)
	require.Len(t, tb.popMsgs(t, "ng", "NT", -1, 32, 60000), 1)
	notif := func(poll int64) *codec.Frame {
		return request(codec.ReqNotification, "consumerGroup", "ng", "topic", "NT", "queueId", "-1",
			"pollTime", strconv.FormatInt(poll, 10), "bornTime", strconv.FormatInt(time.Now().UnixMilli(), 10))
	}
	resp := tb.invoke(t, notif(0))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "false", ext(t, resp, "hasMsg"))
	done := make(chan *codec.Frame, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r, _ := tb.cli.Invoke(ctx, tb.addr, notif(8000))
		done <- r
	}()
	require.Eventually(t, func() bool { return tb.Broker.pop.holds.held() == 1 }, 5*time.Second, time.Millisecond)
	tb.sendN(t, "NT", 0, 2)
	r := <-done
	require.NotNil(t, r)
	require.Equal(t, "true", ext(t, r, "hasMsg"))
}

func TestPopTwoConsumersNeverShareInvisible(t *testing.T) {
	tb := startBroker(t, popConfig)
	const n = 60
	tb.sendN(t, "ST", 0, n)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for c := 0; c < 2; c++ {
		cli := newTestClient(t)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				resp, err := cli.Invoke(ctx, tb.addr, popReq("sg", "ST", 0, 4, 60000, 0))
				cancel()
				if err != nil || resp.Code != int32(codec.RespSuccess) {
					return
				}
				var e message.Ext
				b := resp.Body
				mu.Lock()
				for len(b) > 0 {
					if message.Decode(b, &e) != nil {
						break
					}
					seen[string(e.Body)]++
					b = b[e.TotalSize:]
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.Len(t, seen, n)
	for k, v := range seen {
		require.Equal(t, 1, v, k)
	}
}

func TestPopOrderly(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "OT", 0, 3)
	resp := tb.invoke(t, popReq("og", "OT", 0, 2, 60000, 0, "order", "true", "attemptId", "a1"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, strconv.Itoa(popfmt.OrderReviveQueue), ext(t, resp, "reviveQid"))
	first := popResult(t, resp, "broker-a")
	require.Len(t, first, 2)
	// Blocked for another attempt while the batch is in flight.
	resp = tb.invoke(t, popReq("og", "OT", 0, 2, 60000, 0, "order", "true", "attemptId", "a2"))
	require.Equal(t, int32(codec.RespPollingTimeout), resp.Code)
	tb.ackMsg(t, "og", first[0])
	resp = tb.invoke(t, popReq("og", "OT", 0, 2, 60000, 0, "order", "true", "attemptId", "a2"))
	require.Equal(t, int32(codec.RespPollingTimeout), resp.Code)
	tb.ackMsg(t, "og", first[1])
	resp = tb.invoke(t, popReq("og", "OT", 0, 2, 60000, 0, "order", "true", "attemptId", "a3"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	next := popResult(t, resp, "broker-a")
	require.Len(t, next, 1)
	require.Equal(t, "m2", string(next[0].Body))
}

func (tb *testBroker) dumpRevive(t *testing.T) {
	for q := int32(0); q < tb.Broker.pop.reviveQueue; q++ {
		for _, e := range tb.readQueue(t, tb.Broker.pop.reviveTopic, q) {
			t.Logf("revive q%d %s %s", q, e.Properties, e.Body)
		}
	}
}

func TestPeekChangesNothing(t *testing.T) {
	tb := startBroker(t, popConfig)
	tb.sendN(t, "KT", 0, 2)
	peek := func() *codec.Frame {
		return tb.invoke(t, request(codec.ReqPeekMessage, "consumerGroup", "kg", "topic", "KT", "queueId", "0", "maxMsgNums", "32"))
	}
	resp := peek()
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Len(t, decodeRecords(t, resp.Body), 2)
	require.Len(t, decodeRecords(t, peek().Body), 2, "a peek moves nothing")
	require.Len(t, tb.popMsgs(t, "kg", "KT", 0, 32, 60000), 2)
	resp = peek()
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code)
	tb.store.AwaitDispatched(time.Second)
	var cks int64
	for q := range tb.Broker.pop.reviveQueue {
		cks += tb.store.MaxOffset(tb.Broker.pop.reviveTopic, q)
	}
	require.Equal(t, int64(1), cks, "only the pop wrote a checkpoint")
}

// TestPopSQL92Filter: a POP with expType SQL92 (what Apache's proxy sends for
// a gRPC SQL subscription) gets only the records whose properties match,
// as Java's ExpressionMessageFilter evaluates them on the commit log.
func TestPopSQL92Filter(t *testing.T) {
	tb := startBroker(t, func(c *Config) { popConfig(c); c.EnablePropertyFilter = true })
	for i := range 6 {
		resp := tb.invoke(t, sendV1("SQLT", 0, props("TAGS", "a", "n", strconv.Itoa(i)), []byte("s"+strconv.Itoa(i))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	tb.waitDispatched(t, "SQLT", 0, 6)
	resp := tb.invoke(t, popReq("sqlg", "SQLT", 0, 32, 60000, 0, "expType", "SQL92", "exp", "n >= 4"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var bodies []string
	for _, m := range popResult(t, resp, tb.cfg.BrokerName) {
		bodies = append(bodies, string(m.Body))
	}
	require.Equal(t, []string{"s4", "s5"}, bodies)
}
