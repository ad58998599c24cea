package goclient

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// Push consumers that start just before the first sends (issue #19 §1): a
// new group with the client's default ConsumeFromLastOffset, a fresh
// instance name, an 8-queue topic created just before.

func defaultPushOpts(t Target, group string, extra ...consumer.Option) []consumer.Option {
	return append([]consumer.Option{
		consumer.WithNameServer(t.ns()),
		consumer.WithGroupName(t.name(group)),
		consumer.WithInstance(fmt.Sprintf("i%d", time.Now().UnixNano())),
	}, extra...)
}

// repeatRuns runs one procedure n times, each with its own topic and
// group, and fails with the first failure and how many runs failed.
func repeatRuns(ctx context.Context, n int, run func(ctx context.Context, i int) error) error {
	var first error
	failed := 0
	for i := 0; i < n && ctx.Err() == nil; i++ {
		if err := run(ctx, i); err != nil {
			failed++
			if first == nil {
				first = fmt.Errorf("run %d: %w", i+1, err)
			}
		}
	}
	if first != nil {
		return fmt.Errorf("%d of %d runs failed; %w", failed, n, first)
	}
	return ctx.Err()
}

// within waits for want in got for at most d.
func within(ctx context.Context, got *bodies, want []string, d time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	return got.wait(ctx, want)
}

// pushFresh is S1: a new group subscribes with a tag and starts; right
// after, 10 tagged sync sends; all 10 consumed within 30 s.
func pushFresh(ctx context.Context, t Target) error {
	p, err := newProducer(t, "fresh_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	return repeatRuns(ctx, scenario.Repeat(), func(ctx context.Context, i int) error {
		topic := t.name(fmt.Sprintf("fresh%d_%d", i, time.Now().UnixNano()))
		if err := t.CreateTopic(ctx, topic, 8); err != nil {
			return err
		}
		got := newBodies()
		c, err := rocketmq.NewPushConsumer(defaultPushOpts(t, fmt.Sprintf("fresh_c%d_%d", i, time.Now().UnixNano()))...)
		if err != nil {
			return fmt.Errorf("new push consumer: %w", err)
		}
		if err := c.Subscribe(topic, consumer.MessageSelector{Type: consumer.TAG, Expression: "TagF"}, collectInto(got)); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		if err := c.Start(); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		defer c.Shutdown()
		want := seq("fresh", 10)
		for _, b := range want {
			m := primitive.NewMessage(topic, []byte(b))
			m.WithTag("TagF")
			if err := sendAll(ctx, p, m); err != nil {
				return err
			}
		}
		return within(ctx, got, want, 30*time.Second)
	})
}

// liteThenPush is S2: a pull consumer of group G subscribes to a new,
// empty topic, polls once and stops; a push consumer of G then starts and
// receives all 4 messages sent after it within 30 s.
func liteThenPush(ctx context.Context, t Target) error {
	p, err := newProducer(t, "lite_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	return repeatRuns(ctx, scenario.Repeat(), func(ctx context.Context, i int) error {
		topic := t.name(fmt.Sprintf("lite%d_%d", i, time.Now().UnixNano()))
		if err := t.CreateTopic(ctx, topic, 8); err != nil {
			return err
		}
		group := fmt.Sprintf("lite_g%d_%d", i, time.Now().UnixNano())
		lc, err := rocketmq.NewPullConsumer(defaultPushOpts(t, group)...)
		if err != nil {
			return fmt.Errorf("new pull consumer: %w", err)
		}
		if err := lc.Subscribe(topic, all); err != nil {
			return fmt.Errorf("pull subscribe: %w", err)
		}
		if err := lc.Start(); err != nil {
			return fmt.Errorf("pull start: %w", err)
		}
		if cr, err := lc.Poll(ctx, time.Second); err == nil && len(cr.GetMsgList()) > 0 {
			_ = lc.Shutdown()
			return fmt.Errorf("poll of an empty topic returned %d messages", len(cr.GetMsgList()))
		}
		if err := lc.Shutdown(); err != nil {
			return fmt.Errorf("pull shutdown: %w", err)
		}
		got := newBodies()
		c, err := rocketmq.NewPushConsumer(defaultPushOpts(t, group)...)
		if err != nil {
			return fmt.Errorf("new push consumer: %w", err)
		}
		if err := c.Subscribe(topic, all, collectInto(got)); err != nil {
			return fmt.Errorf("subscribe: %w", err)
		}
		if err := c.Start(); err != nil {
			return fmt.Errorf("start: %w", err)
		}
		defer c.Shutdown()
		want := seq("lite", 4)
		for _, b := range want {
			if err := sendAll(ctx, p, primitive.NewMessage(topic, []byte(b))); err != nil {
				return err
			}
		}
		return within(ctx, got, want, 30*time.Second)
	})
}

// goFirstRetryBound bounds the first retry for the Go client: delay level 3
// (10 s), plus its 30 s route refresh and one 20 s rebalance, plus 2 s. It
// reads its new group's %RETRY% route before its first heartbeat creates
// the topic, and its refresh 10 ms after start comes before that heartbeat
// too (it sends it after a synchronous route fetch), so the retry queue is
// pulled only after the next refresh and rebalance: 39.9 s against ours.
const goFirstRetryBound = 62 * time.Second

// retryTwice is S3: maxReconsumeTimes 2, the listener asks for a retry
// while reconsumeTimes < 2; every message comes back twice, the first
// retry within goFirstRetryBound and the second within 60 s of it.
func retryTwice(ctx context.Context, t Target) error {
	topic := t.name(fmt.Sprintf("retry2_%d", time.Now().UnixNano()))
	if err := t.CreateTopic(ctx, topic, 8); err != nil {
		return err
	}
	p, err := newProducer(t, "retry2_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	type attempt struct {
		times int32
		at    time.Time
	}
	var mu sync.Mutex
	attempts := map[string][]attempt{}
	poke := make(chan struct{}, 1)
	c, err := rocketmq.NewPushConsumer(defaultPushOpts(t, fmt.Sprintf("retry2_c_%d", time.Now().UnixNano()),
		consumer.WithMaxReconsumeTimes(2))...)
	if err != nil {
		return fmt.Errorf("new push consumer: %w", err)
	}
	err = c.Subscribe(topic, all, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		again := false
		for _, m := range msgs {
			attempts[string(m.Body)] = append(attempts[string(m.Body)], attempt{m.ReconsumeTimes, time.Now()})
			again = again || m.ReconsumeTimes < 2
		}
		mu.Unlock()
		select {
		case poke <- struct{}{}:
		default:
		}
		if again {
			return consumer.ConsumeRetryLater, nil
		}
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return fmt.Errorf("subscribe: %w", err)
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("start: %w", err)
	}
	defer c.Shutdown()
	want := seq("retry2", 8)
	for _, b := range want {
		if err := sendAll(ctx, p, primitive.NewMessage(topic, []byte(b))); err != nil {
			return err
		}
	}
	short := func() []string {
		mu.Lock()
		defer mu.Unlock()
		var s []string
		for _, b := range want {
			if n := len(attempts[b]); n < 3 {
				s = append(s, fmt.Sprintf("%s=%d", b, n))
			}
		}
		return s
	}
	for len(short()) > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("messages without 3 attempts: %v: %w", short(), ctx.Err())
		case <-poke:
		case <-time.After(200 * time.Millisecond):
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var errs []error
	for _, b := range want {
		a := attempts[b]
		if a[0].times != 0 || a[1].times != 1 || a[2].times != 2 {
			errs = append(errs, fmt.Errorf("%s: reconsumeTimes %d,%d,%d, want 0,1,2", b, a[0].times, a[1].times, a[2].times))
		}
		if d := a[1].at.Sub(a[0].at); d > goFirstRetryBound {
			errs = append(errs, fmt.Errorf("%s: first retry after %v (> %v)", b, d, goFirstRetryBound))
		}
		if d := a[2].at.Sub(a[1].at); d > 60*time.Second {
			errs = append(errs, fmt.Errorf("%s: second retry %v after the first (> 60 s)", b, d))
		}
	}
	return errors.Join(errs...)
}
