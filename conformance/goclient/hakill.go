package goclient

import (
	"context"
	"errors"
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
)

// The replication kill scenarios (conformance/ha_kill.go) drive the Go
// client through the functions below; the scenario logic (kills, waits,
// checks on the slave) lives in the conformance package.

// Sent is the outcome of one HAProduce send.
type Sent struct {
	Key, MsgID  string
	QueueID     int
	QueueOffset int64
	// Status is Java's SendStatus name: SEND_OK, FLUSH_DISK_TIMEOUT,
	// FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE; empty when Err is set.
	Status string
	Err    error
}

// Got is one message delivered to an HA consumer.
type Got struct {
	Key, MsgID  string
	QueueID     int
	QueueOffset int64
	BrokerName  string
	Phase       string // which consumer delivered it (the caller's label)
}

var sendStatusNames = map[primitive.SendStatus]string{
	primitive.SendOK:                "SEND_OK",
	primitive.SendFlushDiskTimeout:  "FLUSH_DISK_TIMEOUT",
	primitive.SendFlushSlaveTimeout: "FLUSH_SLAVE_TIMEOUT",
	primitive.SendSlaveNotAvailable: "SLAVE_NOT_AVAILABLE",
}

// HAProduce sends count keyed messages (keys keyPrefix-<i>, bodies that
// name the key) to topic with SendSync from threads goroutines and reports
// every outcome to on (called from the sending goroutines). It stops early
// when ctx ends; sends in flight then fail and are reported as errors.
func HAProduce(ctx context.Context, namesrv, group, topic string, count, threads int, keyPrefix string, on func(Sent)) error {
	p, err := rocketmq.NewProducer(producer.WithNameServer(primitive.NamesrvAddr{namesrv}),
		producer.WithGroupName(group), producer.WithInstanceName(group),
		producer.WithRetry(2), producer.WithSendMsgTimeout(3*time.Second))
	if err != nil {
		return fmt.Errorf("new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return fmt.Errorf("start producer: %w", err)
	}
	defer p.Shutdown()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range max(threads, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if i >= int64(count) {
					return
				}
				key := keyPrefix + "-" + strconv.FormatInt(i, 10)
				m := primitive.NewMessage(topic, []byte("body of "+key+" "+strings.Repeat("x", 200)))
				m.WithKeys([]string{key})
				r, err := p.SendSync(ctx, m)
				s := Sent{Key: key, Err: err}
				if err == nil {
					s.Status = sendStatusNames[r.Status]
					if s.Status == "" {
						s.Status = "STATUS_" + strconv.Itoa(int(r.Status))
					}
					s.MsgID = r.MsgID
					s.QueueOffset = r.QueueOffset
					if r.MessageQueue != nil {
						s.QueueID = r.MessageQueue.QueueId
					}
				}
				on(s)
			}
		}()
	}
	wg.Wait()
	return nil
}

// haConsumerOpts are the options of the HA consumers: full group and
// instance names (no Target prefix), from the first offset.
func haConsumerOpts(namesrv, group, instance string, opts ...consumer.Option) []consumer.Option {
	return append([]consumer.Option{
		consumer.WithNameServer(primitive.NamesrvAddr{namesrv}),
		consumer.WithGroupName(group),
		consumer.WithInstance(instance),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	}, opts...)
}

// HAPush runs a push consumer of group (instance name instance) on topic
// from the first offset, reporting every delivery to on, until stop returns
// true (checked after each message) or ctx ends; then it shuts the consumer
// down, which commits its offsets (the Go client sends them one-way).
// Messages handed to the listener after the mark are not reported and not
// consumed.
// rate > 0 paces deliveries to about rate per second, so stop lands near
// its mark instead of a few pulls past it.
func HAPush(ctx context.Context, namesrv, topic, group, instance string, rate int, on func(Got), stop func() bool) error {
	done := make(chan struct{})
	released := make(chan struct{}) // closed once the consumer is shut down
	defer close(released)
	var once sync.Once
	var pace struct {
		sync.Mutex
		next time.Time
	}
	h := func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		for _, m := range msgs {
			if rate > 0 {
				pace.Lock()
				now := time.Now()
				if pace.next.Before(now) {
					pace.next = now
				}
				due := pace.next
				pace.next = due.Add(time.Second / time.Duration(rate))
				pace.Unlock()
				// Load shaping, not synchronization.
				select {
				case <-time.After(time.Until(due)):
				case <-done:
				}
			}
			select {
			case <-done:
				// Past the mark: hold the message unconsumed until the
				// consumer is shut down; its queue is dropped by then, so
				// nothing of it is committed or sent back.
				<-released
				return consumer.ConsumeSuccess, nil
			default:
			}
			on(gotOf(m, instance))
		}
		if stop() {
			once.Do(func() { close(done) })
		}
		return consumer.ConsumeSuccess, nil
	}
	c, err := rocketmq.NewPushConsumer(haConsumerOpts(namesrv, group, instance)...)
	if err != nil {
		return fmt.Errorf("new push consumer: %w", err)
	}
	if err := c.Subscribe(topic, all, h); err != nil {
		return fmt.Errorf("subscribe %s: %w", topic, err)
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("start push consumer: %w", err)
	}
	select {
	case <-done:
	case <-ctx.Done():
	}
	if err := c.Shutdown(); err != nil {
		return fmt.Errorf("shutdown push consumer %s: %w", instance, err)
	}
	return ctx.Err()
}

// HAPullQueues reads every queue of topic with a pull consumer of group
// (PullFrom, which falls back to a slave when the route has no master),
// queue q from from[q] up to end[q], reporting each message to on. The Go
// client's offset store asks only the master, so the caller supplies the
// committed offsets (from) and the queue ends (end), read from the slave.
func HAPullQueues(ctx context.Context, namesrv, topic, group, instance string, from, end map[int]int64, on func(Got)) error {
	pc, err := rocketmq.NewPullConsumer(haConsumerOpts(namesrv, group, instance)...)
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
	for len(mqs) < len(end) {
		if mqs, err = pc.GetTopicRouteInfo(topic); err == nil && len(mqs) >= len(end) {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pull consumer: no %d-queue route for %s: %v %v", len(end), topic, mqs, err)
		case <-time.After(200 * time.Millisecond):
		}
	}
	for _, mq := range mqs {
		off, stopAt := from[mq.QueueId], end[mq.QueueId]
		// Bounded: every successful pull advances; retries are capped.
		for retries := 0; off < stopAt; {
			r, err := pc.PullFrom(ctx, mq, off, 32)
			if err == nil && r.Status == primitive.PullFound && r.NextBeginOffset > off {
				for _, m := range r.GetMessageExts() {
					on(gotOf(m, instance))
				}
				off = r.NextBeginOffset
				continue
			}
			if retries++; retries > 50 || ctx.Err() != nil {
				if err == nil {
					err = fmt.Errorf("status %v next %d", r.Status, r.NextBeginOffset)
				}
				return fmt.Errorf("pull %s q%d @%d (end %d): %w", mq.BrokerName, mq.QueueId, off, stopAt, err)
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return nil
}

// HAPushProbe starts a push consumer of group on topic for window and
// returns how many messages it delivered (it commits nothing new when it
// delivers nothing). It shows whether the Go push consumer can start on a
// route without a master.
func HAPushProbe(ctx context.Context, namesrv, topic, group, instance string, window time.Duration) (int, error) {
	var n atomic.Int64
	ctx, cancel := context.WithTimeout(ctx, window)
	defer cancel()
	err := HAPush(ctx, namesrv, topic, group, instance, 0, func(Got) { n.Add(1) }, func() bool { return false })
	if errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return int(n.Load()), err
}

func gotOf(m *primitive.MessageExt, phase string) Got {
	g := Got{Key: m.GetKeys(), MsgID: m.MsgId, QueueOffset: m.QueueOffset, Phase: phase}
	if m.Queue != nil {
		g.QueueID, g.BrokerName = m.Queue.QueueId, m.Queue.BrokerName
	}
	return g
}
