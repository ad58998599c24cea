package goclient

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/admin"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

const rebalanceQueues = 8

// arrivals records which member consumed each body, safe for concurrent use.
type arrivals struct {
	mu sync.Mutex
	by map[string][]string // body -> members that consumed it; guarded by mu
}

func (a *arrivals) handler(member string) handler {
	return func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		a.mu.Lock()
		for _, m := range msgs {
			a.by[string(m.Body)] = append(a.by[string(m.Body)], member)
		}
		a.mu.Unlock()
		return consumer.ConsumeSuccess, nil
	}
}

func (a *arrivals) get(body string) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.by[body]...)
}

// probeRound sends one message to every queue and waits until all arrived.
// It returns queue -> consuming members.
func probeRound(ctx context.Context, p rocketmq.Producer, mqs []*primitive.MessageQueue, a *arrivals, tag string) (map[int][]string, error) {
	bodies := make([]string, len(mqs))
	for i, mq := range mqs {
		bodies[i] = fmt.Sprintf("%s-q%d", tag, mq.QueueId)
		m := primitive.NewMessage(mq.Topic, []byte(bodies[i]))
		m.Queue = mq
		if err := sendAll(ctx, p, m); err != nil {
			return nil, err
		}
	}
	for {
		out := map[int][]string{}
		for i, mq := range mqs {
			if got := a.get(bodies[i]); len(got) > 0 {
				out[mq.QueueId] = got
			}
		}
		if len(out) == len(mqs) {
			return out, nil
		}
		select {
		case <-ctx.Done():
			return out, fmt.Errorf("round %s: %d/%d queues delivered (%v): %w", tag, len(out), len(mqs), out, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// settled reports whether a round shows every queue consumed by exactly one
// live member, spread as the default averaging strategy does (each member
// owning ⌊8/n⌋ or ⌈8/n⌉ queues).
func settled(round map[int][]string, live []string) (bool, string) {
	owned := map[string]int{}
	for q, ms := range round {
		if len(ms) != 1 {
			return false, fmt.Sprintf("queue %d consumed by %v", q, ms)
		}
		if !slices.Contains(live, ms[0]) {
			return false, fmt.Sprintf("queue %d consumed by departed %s", q, ms[0])
		}
		owned[ms[0]]++
	}
	lo, hi := rebalanceQueues/len(live), (rebalanceQueues+len(live)-1)/len(live)
	for _, m := range live {
		if owned[m] < lo || owned[m] > hi {
			return false, fmt.Sprintf("unbalanced: %v over %d members", owned, len(live))
		}
	}
	return true, ""
}

// rebalance: two members, a third joins, one leaves; after each change the
// 8 queues settle to exactly one live owner each, and every probe arrives.
func rebalance(ctx context.Context, t Target) error {
	topic := t.name("rebalance")
	if err := t.CreateTopic(ctx, topic, rebalanceQueues); err != nil {
		return err
	}
	p, err := newProducer(t, "rebalance_p", producer.WithQueueSelector(producer.NewManualQueueSelector()))
	if err != nil {
		return err
	}
	defer p.Shutdown()
	adm, err := admin.NewAdmin(admin.WithResolver(primitive.NewPassthroughResolver([]string{t.Namesrv})))
	if err != nil {
		return fmt.Errorf("new admin: %w", err)
	}
	defer adm.Close()
	var mqs []*primitive.MessageQueue
	for {
		mqs, err = adm.FetchPublishMessageQueues(ctx, topic)
		if err == nil && len(mqs) == rebalanceQueues {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("no %d-queue route for %s: %v %v", rebalanceQueues, topic, mqs, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	sort.Slice(mqs, func(i, j int) bool { return mqs[i].QueueId < mqs[j].QueueId })

	a := &arrivals{by: map[string][]string{}}
	members := map[string]rocketmq.PushConsumer{}
	defer func() {
		for _, c := range members {
			_ = c.Shutdown()
		}
	}()
	join := func(name string) error {
		c, err := startPush(t, "rebalance_c", name, topic, all, a.handler(name))
		if err != nil {
			return err
		}
		members[name] = c
		return nil
	}
	leave := func(name string) error {
		c := members[name]
		delete(members, name)
		if err := c.Shutdown(); err != nil {
			return fmt.Errorf("shutdown %s: %w", name, err)
		}
		return nil
	}
	var sent []string
	round := 0
	// waitSettled sends probe rounds until one shows the expected ownership.
	waitSettled := func(phase string) error {
		var live []string
		for m := range members {
			live = append(live, m)
		}
		sort.Strings(live)
		last := ""
		for ctx.Err() == nil {
			round++
			tag := fmt.Sprintf("%s-r%02d", phase, round)
			got, err := probeRound(ctx, p, mqs, a, tag)
			for _, mq := range mqs {
				sent = append(sent, fmt.Sprintf("%s-q%d", tag, mq.QueueId))
			}
			if err != nil {
				return fmt.Errorf("%s (members %v): %w", phase, live, err)
			}
			ok, why := settled(got, live)
			if ok {
				return nil
			}
			last = why
			select {
			case <-ctx.Done():
			case <-time.After(500 * time.Millisecond):
			}
		}
		return fmt.Errorf("%s: never settled over members %v: %s: %w", phase, live, last, ctx.Err())
	}
	for _, n := range []string{"m1", "m2"} {
		if err := join(n); err != nil {
			return err
		}
	}
	if err := waitSettled("two"); err != nil {
		return err
	}
	if err := join("m3"); err != nil {
		return err
	}
	if err := waitSettled("three"); err != nil {
		return err
	}
	if err := leave("m1"); err != nil {
		return err
	}
	if err := waitSettled("after-leave"); err != nil {
		return err
	}
	var lost []string
	for _, b := range sent {
		if len(a.get(b)) == 0 {
			lost = append(lost, b)
		}
	}
	if len(lost) > 0 {
		return fmt.Errorf("%d probes never consumed: %s", len(lost), strings.Join(lost, ","))
	}
	return Note(fmt.Sprintf("settled in %d probe rounds", round))
}
