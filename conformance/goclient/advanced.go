package goclient

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Request codes of the raw checks (Apache RocketMQ RequestCode).
const (
	codeQueryMessage           = 12
	codeQueryConsumerOffset    = 14
	codeGetConsumerListByGroup = 38
)

// offsetResume: a restarted consumer continues from its committed offsets.
func offsetResume(ctx context.Context, t Target) error {
	topic := t.name("offset_resume")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "offset_resume_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	first, second := seq("first", 6), seq("second", 6)
	for _, b := range first {
		if err := sendAll(ctx, p, primitive.NewMessage(topic, []byte(b))); err != nil {
			return err
		}
	}
	got1 := newBodies()
	c1, err := startPush(t, "offset_resume_c", "offset_resume_c1", topic, all, collectInto(got1))
	if err != nil {
		return err
	}
	if err := got1.wait(ctx, first); err != nil {
		_ = c1.Shutdown()
		return fmt.Errorf("first consumer: %w", err)
	}
	// The consumed offset moves after the listener returns: wait for it.
	for c1.GetOffsetDiffMap()[topic] != 0 && ctx.Err() == nil {
		time.Sleep(50 * time.Millisecond)
	}
	if err := c1.Shutdown(); err != nil {
		return fmt.Errorf("shutdown first consumer: %w", err)
	}
	// The Go client commits offsets fire-and-forget and leaves by closing
	// its connection: wait until the broker has both, so the restart below
	// really starts from committed offsets with the whole topic to itself.
	if err := waitGroupGone(ctx, t, topic, "offset_resume_c", 2, int64(len(first))); err != nil {
		return err
	}
	for _, b := range second {
		if err := sendAll(ctx, p, primitive.NewMessage(topic, []byte(b))); err != nil {
			return err
		}
	}
	got2 := newBodies()
	c2, err := startPush(t, "offset_resume_c", "offset_resume_c2", topic, all, collectInto(got2))
	if err != nil {
		return err
	}
	defer c2.Shutdown()
	if err := got2.wait(ctx, second); err != nil {
		return fmt.Errorf("restarted consumer: %w", err)
	}
	for b := range got2.all() {
		if strings.HasPrefix(b, "first") {
			return fmt.Errorf("restarted consumer got already-consumed %s", b)
		}
	}
	return nil
}

// delay: level 1 = 1 s, three messages; none consumed before its send
// time + 1 s, lateness reported.
func delay(ctx context.Context, t Target) error {
	topic := t.name("delay")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "delay_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	a := newClock()
	c, err := startPush(t, "delay_c", "delay_c", topic, all, a.handler())
	if err != nil {
		return err
	}
	defer c.Shutdown()
	var ds []due
	for i := range 3 {
		body := fmt.Sprintf("delayed-1s-%d", i)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithDelayTimeLevel(1)
		sent := time.Now().UnixMilli()
		if err := sendAll(ctx, p, m); err != nil {
			return err
		}
		ds = append(ds, due{body: body, want: sent + 1000, earliest: sent + 1000})
	}
	want := make([]string, len(ds))
	for i, d := range ds {
		want[i] = d.body
	}
	if err := a.got.wait(ctx, want); err != nil {
		return err
	}
	late, err := checkDue(a, ds)
	if err != nil {
		return err
	}
	for _, w := range want {
		d := a.got.get(w)[0]
		if d.StoreTimestamp-d.BornTimestamp < 1000 {
			return fmt.Errorf("%s stored %d ms after birth, want >= 1000", w, d.StoreTimestamp-d.BornTimestamp)
		}
	}
	return Note("lateness min/p50/max " + spread(late))
}

// retry: RETRY_LATER once, then the redelivery carries reconsumeTimes 1.
func retry(ctx context.Context, t Target) error {
	topic := t.name("retry")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "retry_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	var mu sync.Mutex
	attempts := map[string][]int32{}
	got := newBodies()
	c, err := startPush(t, "retry_c", "retry_c", topic, all,
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			defer mu.Unlock()
			retry := false
			for _, m := range msgs {
				b := string(m.Body)
				attempts[b] = append(attempts[b], m.ReconsumeTimes)
				if len(attempts[b]) == 1 {
					retry = true
				} else {
					got.add(m)
				}
			}
			if retry {
				if cc, ok := primitive.GetConcurrentlyCtx(ctx); ok {
					cc.DelayLevelWhenNextConsume = 1 // 1 s instead of the default 10 s
				}
				return consumer.ConsumeRetryLater, nil
			}
			return consumer.ConsumeSuccess, nil
		}, consumer.WithConsumeMessageBatchMaxSize(1))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if err := sendAll(ctx, p, primitive.NewMessage(topic, []byte("retry-me"))); err != nil {
		return err
	}
	if err := got.wait(ctx, []string{"retry-me"}); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if a := attempts["retry-me"]; a[0] != 0 || a[1] != 1 {
		return fmt.Errorf("reconsumeTimes per attempt %v, want [0 1]", a)
	}
	return nil
}

type txListener struct {
	mu      sync.Mutex
	checked map[string]int // guarded by mu
}

func (l *txListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	switch {
	case strings.HasPrefix(string(m.Body), "commit"):
		return primitive.CommitMessageState
	case strings.HasPrefix(string(m.Body), "rollback"):
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

func (l *txListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	l.mu.Lock()
	l.checked[string(m.Body)]++
	l.mu.Unlock()
	if strings.HasPrefix(string(m.Body), "unknown") {
		return primitive.CommitMessageState
	}
	return primitive.RollbackMessageState
}

// startTxnProducer starts a transactional producer of group name (also its
// instance name) whose checks go to l.
func startTxnProducer(t Target, name string, l primitive.TransactionListener) (rocketmq.TransactionProducer, error) {
	p, err := rocketmq.NewTransactionProducer(l,
		producer.WithNameServer(t.ns()), producer.WithGroupName(t.name(name)),
		producer.WithInstanceName(t.name(name)), producer.WithRetry(1))
	if err != nil {
		return nil, fmt.Errorf("new transaction producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start transaction producer: %w", err)
	}
	return p, nil
}

// transaction: commit, rollback and check-back.
func transaction(ctx context.Context, t Target) error {
	topic := t.name("transaction")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	l := &txListener{checked: map[string]int{}}
	p, err := startTxnProducer(t, "transaction_p", l)
	if err != nil {
		return err
	}
	defer p.Shutdown()
	got := newBodies()
	c, err := startPush(t, "transaction_c", "transaction_c", topic, all, collectInto(got))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	for _, b := range []string{"commit-1", "rollback-1", "unknown-1"} {
		r, err := p.SendMessageInTransaction(ctx, primitive.NewMessage(topic, []byte(b)))
		if err != nil {
			return fmt.Errorf("send %s in transaction: %w", b, err)
		}
		if r.Status != primitive.SendOK {
			return fmt.Errorf("send %s in transaction: status %d", b, r.Status)
		}
	}
	if err := got.wait(ctx, []string{"commit-1", "unknown-1"}); err != nil {
		return err
	}
	if n := len(got.get("rollback-1")); n != 0 {
		return fmt.Errorf("rolled-back message delivered %d times", n)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.checked["unknown-1"] == 0 {
		return fmt.Errorf("unknown-1 delivered without a check-back")
	}
	return nil
}

// requestReply: Request() answered through SEND_REPLY_MESSAGE.
func requestReply(ctx context.Context, t Target) error {
	topic := t.name("request_reply")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	replier, err := newProducer(t, "request_reply_r")
	if err != nil {
		return err
	}
	defer replier.Shutdown()
	var replyErr atomic.Value
	c, err := startPush(t, "request_reply_c", "request_reply_c", topic, all,
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				reply, err := consumer.CreateReplyMessage(m, append([]byte("reply-to-"), m.Body...))
				if err != nil {
					replyErr.Store(fmt.Errorf("create reply: %w", err))
					return consumer.ConsumeRetryLater, nil
				}
				if _, err := replier.SendSync(ctx, reply); err != nil {
					replyErr.Store(fmt.Errorf("send reply to %s: %w", reply.Topic, err))
					return consumer.ConsumeRetryLater, nil
				}
			}
			return consumer.ConsumeSuccess, nil
		})
	if err != nil {
		return err
	}
	defer c.Shutdown()
	p, err := newProducer(t, "request_reply_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	// The broker routes a reply to the requester's connection, known only
	// once the requester's first heartbeat (1 s after start) arrived: retry.
	var last error
	for attempt := 0; ctx.Err() == nil; attempt++ {
		body := "question-" + strconv.Itoa(attempt)
		r, err := p.Request(ctx, 8*time.Second, primitive.NewMessage(topic, []byte(body)))
		if err == nil {
			if string(r.Body) != "reply-to-"+body {
				return fmt.Errorf("reply body %q to %q", r.Body, body)
			}
			return nil
		}
		last = err
	}
	return fmt.Errorf("no reply: %v (replier: %v)", last, replyErr.Load())
}

// sql92: property filter.
func sql92(ctx context.Context, t Target) error {
	topic := t.name("sql92")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "sql92_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	var want []string
	for i := range 10 {
		b := fmt.Sprintf("a=%d", i)
		m := primitive.NewMessage(topic, []byte(b))
		m.WithProperty("a", strconv.Itoa(i))
		if err := sendAll(ctx, p, m); err != nil {
			return err
		}
		if i > 5 {
			want = append(want, b)
		}
	}
	got := newBodies()
	c, err := startPush(t, "sql92_c", "sql92_c", topic,
		consumer.MessageSelector{Type: consumer.SQL92, Expression: "a > 5"}, collectInto(got))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if err := got.wait(ctx, want); err != nil {
		return err
	}
	for b := range got.all() {
		if n, _ := strconv.Atoi(strings.TrimPrefix(b, "a=")); n <= 5 {
			return fmt.Errorf("message %s does not match 'a > 5' but was delivered", b)
		}
	}
	return nil
}

// waitGroupGone polls the broker until group has no consumer connected and
// its committed offsets on topic's queues add up to want.
func waitGroupGone(ctx context.Context, t Target, topic, group string, queues int, want int64) error {
	g := t.name(group)
	for {
		var sum int64
		var err error
		for q := range queues {
			f, e := harness.Call(ctx, t.Broker, codeQueryConsumerOffset,
				map[string]string{"consumerGroup": g, "topic": topic, "queueId": strconv.Itoa(q)}, nil)
			if e != nil || f.Code != 0 {
				err = fmt.Errorf("QUERY_CONSUMER_OFFSET q%d: %v %v", q, e, f)
				break
			}
			n, _ := strconv.ParseInt(f.Ext["offset"], 10, 64)
			sum += n
		}
		online := true
		if f, e := harness.Call(ctx, t.Broker, codeGetConsumerListByGroup, map[string]string{"consumerGroup": g}, nil); e == nil {
			online = f.Code == 0 && strings.Contains(string(f.Body), "@")
		}
		if err == nil && sum == want && !online {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("group %s: committed %d of %d (err %v), still online %v: %w", g, sum, want, err, online, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
