package goclient

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

func newProducer(t Target, group string, opts ...producer.Option) (rocketmq.Producer, error) {
	base := []producer.Option{
		producer.WithNameServer(t.ns()),
		producer.WithGroupName(t.name(group)),
		producer.WithInstanceName(t.name(group)),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(5 * time.Second),
	}
	p, err := rocketmq.NewProducer(append(base, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("start producer: %w", err)
	}
	return p, nil
}

func consumerOpts(t Target, group, instance string, opts ...consumer.Option) []consumer.Option {
	base := []consumer.Option{
		consumer.WithNameServer(t.ns()),
		consumer.WithGroupName(t.name(group)),
		consumer.WithInstance(t.name(instance)),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}
	return append(base, opts...)
}

type handler func(context.Context, ...*primitive.MessageExt) (consumer.ConsumeResult, error)

// startPush starts a push consumer subscribed to topic with expression expr.
func startPush(t Target, group, instance, topic string, sel consumer.MessageSelector, h handler, opts ...consumer.Option) (rocketmq.PushConsumer, error) {
	c, err := rocketmq.NewPushConsumer(consumerOpts(t, group, instance, opts...)...)
	if err != nil {
		return nil, fmt.Errorf("new push consumer: %w", err)
	}
	if err := c.Subscribe(topic, sel, h); err != nil {
		return nil, fmt.Errorf("subscribe %s: %w", topic, err)
	}
	if err := c.Start(); err != nil {
		return nil, fmt.Errorf("start push consumer: %w", err)
	}
	return c, nil
}

func collectInto(b *bodies) handler {
	return func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		b.add(msgs...)
		return consumer.ConsumeSuccess, nil
	}
}

var all = consumer.MessageSelector{Type: consumer.TAG, Expression: "*"}

func sendAll(ctx context.Context, p rocketmq.Producer, msgs ...*primitive.Message) error {
	for _, m := range msgs {
		r, err := p.SendSync(ctx, m)
		if err != nil {
			return fmt.Errorf("send %s: %w", m.Body, err)
		}
		if r.Status != primitive.SendOK {
			return fmt.Errorf("send %s: status %d", m.Body, r.Status)
		}
	}
	return nil
}

// adminRoute: create a topic with the admin API, see it in the topic list
// and in its route.
func adminRoute(ctx context.Context, t Target) error {
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{t.Namesrv})))
	if err != nil {
		return fmt.Errorf("new admin: %w", err)
	}
	defer adm.Close()
	topic := t.name("admin_route")
	if err := adm.CreateTopic(ctx, admin.WithTopicCreate(topic), admin.WithBrokerAddrCreate(t.Broker),
		admin.WithReadQueueNums(4), admin.WithWriteQueueNums(4)); err != nil {
		return fmt.Errorf("create topic: %w", err)
	}
	for {
		list, err := adm.FetchAllTopicList(ctx)
		if err == nil && slices.Contains(list.TopicList, topic) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("topic %s not in topic list (last err %v): %w", topic, err, ctx.Err())
		case <-time.After(200 * time.Millisecond):
		}
	}
	mqs, err := adm.FetchPublishMessageQueues(ctx, topic)
	if err != nil {
		return fmt.Errorf("route of %s: %w", topic, err)
	}
	if len(mqs) != 4 {
		return fmt.Errorf("route of %s: %d publish queues, want 4", topic, len(mqs))
	}
	for _, q := range mqs {
		if q.Topic != topic || q.BrokerName == "" || q.QueueId < 0 || q.QueueId > 3 {
			return fmt.Errorf("bad queue in route: %+v", q)
		}
	}
	return nil
}

// sendPush: every send mode, then one clustering push consumer.
func sendPush(ctx context.Context, t Target) error {
	topic := t.name("send_push")
	if err := t.CreateTopic(ctx, topic, 4); err != nil {
		return err
	}
	p, err := newProducer(t, "send_push_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	mk := func(body, tag string) *primitive.Message {
		m := primitive.NewMessage(topic, []byte(body))
		m.WithTag(tag)
		m.WithKeys([]string{"key-" + body})
		m.WithProperty("color", "c-"+body)
		return m
	}
	var want []string
	for _, b := range seq("sync", 3) {
		want = append(want, b)
		if err := sendAll(ctx, p, mk(b, "TagSync")); err != nil {
			return err
		}
	}
	var wg sync.WaitGroup
	var asyncErr error
	var mu sync.Mutex
	for _, b := range seq("async", 3) {
		want = append(want, b)
		wg.Add(1)
		err := p.SendAsync(ctx, func(_ context.Context, r *primitive.SendResult, err error) {
			defer wg.Done()
			if err == nil && r.Status != primitive.SendOK {
				err = fmt.Errorf("status %d", r.Status)
			}
			if err != nil {
				mu.Lock()
				asyncErr = errors.Join(asyncErr, fmt.Errorf("async send: %w", err))
				mu.Unlock()
			}
		}, mk(b, "TagAsync"))
		if err != nil {
			wg.Done()
			return fmt.Errorf("send async: %w", err)
		}
	}
	wg.Wait()
	if asyncErr != nil {
		return asyncErr
	}
	for _, b := range seq("oneway", 3) {
		want = append(want, b)
		if err := p.SendOneWay(ctx, mk(b, "TagOneway")); err != nil {
			return fmt.Errorf("send oneway: %w", err)
		}
	}
	var batch []*primitive.Message
	for _, b := range seq("batch", 3) {
		want = append(want, b)
		batch = append(batch, mk(b, "TagBatch"))
	}
	if r, err := p.SendSync(ctx, batch...); err != nil || r.Status != primitive.SendOK {
		return fmt.Errorf("send batch: %v %v", r, err)
	}

	got := newBodies()
	c, err := startPush(t, "send_push_c", "send_push_c", topic, all, collectInto(got))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if err := got.wait(ctx, want); err != nil {
		return err
	}
	for _, b := range want {
		m := got.get(b)[0]
		wantTag := "Tag" + strings.ToUpper(b[:1]) + b[1:strings.IndexByte(b, '-')]
		if m.GetTags() != wantTag {
			return fmt.Errorf("%s: tag %q, want %q", b, m.GetTags(), wantTag)
		}
		if m.GetKeys() != "key-"+b {
			return fmt.Errorf("%s: keys %q", b, m.GetKeys())
		}
		if m.GetProperty("color") != "c-"+b {
			return fmt.Errorf("%s: property color=%q", b, m.GetProperty("color"))
		}
		if m.Topic != topic || m.MsgId == "" || m.OffsetMsgId == "" {
			return fmt.Errorf("%s: topic %q msgId %q offsetMsgId %q", b, m.Topic, m.MsgId, m.OffsetMsgId)
		}
	}
	return nil
}

// pull: pull every queue from offset 0 with the pull consumer, then hold a
// pull at the end of a queue and check a new message wakes it early.
func pull(ctx context.Context, t Target) error {
	topic := t.name("pull")
	if err := t.CreateTopic(ctx, topic, 4); err != nil {
		return err
	}
	p, err := newProducer(t, "pull_p", producer.WithQueueSelector(producer.NewManualQueueSelector()))
	if err != nil {
		return err
	}
	defer p.Shutdown()
	pc, err := rocketmq.NewPullConsumer(consumerOpts(t, "pull_c", "pull_c")...)
	if err != nil {
		return fmt.Errorf("new pull consumer: %w", err)
	}
	if err := pc.Subscribe(topic, all); err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if err := pc.Start(); err != nil {
		return fmt.Errorf("start pull consumer: %w", err)
	}
	defer pc.Shutdown()
	var mqs []*primitive.MessageQueue
	for {
		if mqs, err = pc.GetTopicRouteInfo(topic); err == nil && len(mqs) == 4 {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no 4-queue route for the pull consumer: %v %v", mqs, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	slices.SortFunc(mqs, func(a, b *primitive.MessageQueue) int { return a.QueueId - b.QueueId })
	want := seq("pull", 8)
	end := map[int]int64{} // queueId -> next offset after our sends
	for i, b := range want {
		m := primitive.NewMessage(topic, []byte(b))
		m.Queue = mqs[i%len(mqs)]
		r, err := p.SendSync(ctx, m)
		if err != nil {
			return fmt.Errorf("send %s: %w", b, err)
		}
		if r.MessageQueue.QueueId != m.Queue.QueueId {
			return fmt.Errorf("send %s: landed in queue %d, selected %d", b, r.MessageQueue.QueueId, m.Queue.QueueId)
		}
		end[r.MessageQueue.QueueId] = r.QueueOffset + 1
	}
	got := newBodies()
	total := 0
	for _, mq := range mqs {
		// Stop at the known end: a pull past it is held (long poll) for 20 s.
		for offset := int64(0); offset < end[mq.QueueId]; {
			r, err := pc.PullFrom(ctx, mq, offset, 32)
			if err != nil {
				return fmt.Errorf("pull %s q%d @%d: %w", mq.BrokerName, mq.QueueId, offset, err)
			}
			if r.Status != primitive.PullFound {
				return fmt.Errorf("pull q%d @%d: status %v, want found (end %d)", mq.QueueId, offset, r.Status, end[mq.QueueId])
			}
			msgs := r.GetMessageExts()
			if len(msgs) == 0 || r.NextBeginOffset != offset+int64(len(msgs)) {
				return fmt.Errorf("pull q%d @%d: %d msgs, nextBeginOffset %d", mq.QueueId, offset, len(msgs), r.NextBeginOffset)
			}
			if r.MaxOffset < r.NextBeginOffset {
				return fmt.Errorf("pull q%d: maxOffset %d below nextBeginOffset %d", mq.QueueId, r.MaxOffset, r.NextBeginOffset)
			}
			for i, m := range msgs {
				if m.QueueOffset != offset+int64(i) {
					return fmt.Errorf("pull q%d: message queueOffset %d, want %d", mq.QueueId, m.QueueOffset, offset+int64(i))
				}
			}
			got.add(msgs...)
			total += len(msgs)
			offset = r.NextBeginOffset
		}
	}
	if miss := got.missing(want); len(miss) > 0 || total != len(want) {
		return fmt.Errorf("pulled %d messages, want %d; missing %v", total, len(want), miss)
	}

	// Long poll: a pull held at the end of queue 0 returns when a message lands.
	q0 := mqs[0]
	type pulled struct {
		r   *primitive.PullResult
		err error
	}
	ch := make(chan pulled, 1)
	heldAt := time.Now()
	go func() {
		r, err := pc.PullFrom(ctx, q0, end[q0.QueueId], 32)
		ch <- pulled{r, err}
	}()
	// Give the pull a head start so it is parked before the send.
	select {
	case x := <-ch:
		return fmt.Errorf("pull at queue end returned before any send: %+v %v", x.r, x.err)
	case <-time.After(500 * time.Millisecond):
	}
	m := primitive.NewMessage(topic, []byte("wake-up"))
	m.Queue = q0
	if err := sendAll(ctx, p, m); err != nil {
		return err
	}
	select {
	case x := <-ch:
		if x.err != nil {
			return fmt.Errorf("held pull: %w", x.err)
		}
		if x.r.Status != primitive.PullFound || len(x.r.GetMessageExts()) != 1 || string(x.r.GetMessageExts()[0].Body) != "wake-up" {
			return fmt.Errorf("held pull: status %v, %d msgs", x.r.Status, len(x.r.GetMessageExts()))
		}
		if el := time.Since(heldAt); el > 10*time.Second {
			return fmt.Errorf("held pull woke only after %v (suspend is 20 s)", el)
		}
	case <-time.After(15 * time.Second):
		return fmt.Errorf("held pull not woken 15 s after a message arrived")
	}
	return nil
}

// tagFilter: 'TagA || TagB' never sees TagC.
func tagFilter(ctx context.Context, t Target) error {
	topic := t.name("tag_filter")
	if err := t.CreateTopic(ctx, topic, 4); err != nil {
		return err
	}
	p, err := newProducer(t, "tag_filter_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	var want []string
	for _, tag := range []string{"TagC", "TagA", "TagB"} {
		for _, b := range seq(tag, 4) {
			m := primitive.NewMessage(topic, []byte(b))
			m.WithTag(tag)
			if err := sendAll(ctx, p, m); err != nil {
				return err
			}
			if tag != "TagC" {
				want = append(want, b)
			}
		}
	}
	got := newBodies()
	c, err := startPush(t, "tag_filter_c", "tag_filter_c", topic,
		consumer.MessageSelector{Type: consumer.TAG, Expression: "TagA || TagB"}, collectInto(got))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if err := got.wait(ctx, want); err != nil {
		return err
	}
	for b := range got.all() {
		if strings.HasPrefix(b, "TagC") {
			return fmt.Errorf("filtered-out message %s delivered", b)
		}
	}
	return nil
}

// broadcast: both consumers of one broadcasting group see everything.
func broadcast(ctx context.Context, t Target) error {
	topic := t.name("broadcast")
	if err := t.CreateTopic(ctx, topic, 4); err != nil {
		return err
	}
	p, err := newProducer(t, "broadcast_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	want := seq("bc", 8)
	for _, b := range want {
		if err := sendAll(ctx, p, primitive.NewMessage(topic, []byte(b))); err != nil {
			return err
		}
	}
	var sets []*bodies
	for i := range 2 {
		got := newBodies()
		sets = append(sets, got)
		c, err := startPush(t, "broadcast_c", "broadcast_c"+strconv.Itoa(i), topic, all, collectInto(got),
			consumer.WithConsumerModel(consumer.BroadCasting))
		if err != nil {
			return err
		}
		defer c.Shutdown()
	}
	for i, got := range sets {
		if err := got.wait(ctx, want); err != nil {
			return fmt.Errorf("consumer %d: %w", i, err)
		}
	}
	return nil
}

// orderly: sharding-key send, orderly consume in order per key.
func orderly(ctx context.Context, t Target) error {
	topic := t.name("orderly")
	if err := t.CreateTopic(ctx, topic, 4); err != nil {
		return err
	}
	p, err := newProducer(t, "orderly_p", producer.WithQueueSelector(producer.NewHashQueueSelector()))
	if err != nil {
		return err
	}
	defer p.Shutdown()
	const orders, steps = 6, 5
	var want []string
	for s := range steps {
		for o := range orders {
			b := fmt.Sprintf("order%d-step%d", o, s)
			want = append(want, b)
			m := primitive.NewMessage(topic, []byte(b))
			m.WithShardingKey("order" + strconv.Itoa(o))
			if err := sendAll(ctx, p, m); err != nil {
				return err
			}
		}
	}
	var mu sync.Mutex
	seen := map[string][]int{} // order -> steps in consumption order
	got := newBodies()
	c, err := startPush(t, "orderly_c", "orderly_c", topic, all,
		func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			mu.Lock()
			for _, m := range msgs {
				var o, s int
				if _, err := fmt.Sscanf(string(m.Body), "order%d-step%d", &o, &s); err == nil {
					seen["order"+strconv.Itoa(o)] = append(seen["order"+strconv.Itoa(o)], s)
				}
			}
			mu.Unlock()
			got.add(msgs...)
			return consumer.ConsumeSuccess, nil
		}, consumer.WithConsumerOrder(true))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	if err := got.wait(ctx, want); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	for o, ss := range seen {
		// Redelivery may repeat a step, but first deliveries must be in order.
		next := 0
		for _, s := range ss {
			if s > next {
				return fmt.Errorf("%s consumed out of order: %v", o, ss)
			}
			if s == next {
				next++
			}
		}
	}
	return nil
}
