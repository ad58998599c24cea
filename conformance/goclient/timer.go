package goclient

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// Note is returned by a scenario that passed with something worth reporting
// (a measured latency); the runner records it as a pass with this detail.
type Note string

func (n Note) Error() string { return string(n) }

// timerPrecisionMs is the 5.x broker's default timerPrecisionMs.
const timerPrecisionMs = 1000

// earliestTimerDelivery is the earliest instant a broker may deliver a
// message asking for deliverMs. Like the Java 5.x broker, the requested time
// is rounded down to the timer precision, and one whole tick earlier when it
// already sits on a tick boundary.
func earliestTimerDelivery(deliverMs int64) int64 {
	if deliverMs%timerPrecisionMs == 0 {
		return deliverMs - timerPrecisionMs
	}
	return deliverMs / timerPrecisionMs * timerPrecisionMs
}

// timer: a 5.x timer message (TIMER_DELIVER_MS = now + 3 s) is consumed no
// earlier than its (tick-rounded) delivery time.
func timer(ctx context.Context, t Target) error {
	topic := t.name("timer")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "timer_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	got := newBodies()
	arrived := make(chan int64, 4) // receive time, unix ms
	c, err := startPush(t, "timer_c", "timer_c", topic, all, func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now().UnixMilli()
		for range msgs {
			select {
			case arrived <- now:
			default:
			}
		}
		return collectInto(got)(ctx, msgs...)
	})
	if err != nil {
		return err
	}
	defer c.Shutdown()
	deliverMs := time.Now().UnixMilli() + 3000
	m := primitive.NewMessage(topic, []byte("timer-3s"))
	m.WithKeys([]string{t.name("timer_key")})
	m.WithProperty(primitive.PropertyTimerDeliverMS, strconv.FormatInt(deliverMs, 10))
	if err := sendAll(ctx, p, m); err != nil {
		return err
	}
	if err := got.wait(ctx, []string{"timer-3s"}); err != nil {
		return err
	}
	at := <-arrived
	if early := earliestTimerDelivery(deliverMs); at < early {
		return fmt.Errorf("timer message consumed at %d, %d ms before its delivery time %d (earliest allowed %d)",
			at, deliverMs-at, deliverMs, early)
	}
	d := got.get("timer-3s")[0]
	if d.Topic != topic {
		return fmt.Errorf("timer message delivered with topic %q, want %q", d.Topic, topic)
	}
	return Note(fmt.Sprintf("consumed %+d ms after deliver time", at-deliverMs))
}

// queryByKey asks the broker directly (QUERY_MESSAGE) for the messages of
// topic indexed under key. The Go admin API has no query call.
func queryByKey(ctx context.Context, broker, topic, key string) ([]*primitive.MessageExt, error) {
	f, err := harness.Call(ctx, broker, codeQueryMessage, map[string]string{
		"topic": topic, "key": key, "maxNum": "32", "beginTimestamp": "0",
		"endTimestamp": strconv.FormatInt(time.Now().Add(time.Hour).UnixMilli(), 10),
	}, nil)
	if err != nil {
		return nil, err
	}
	if f.Code != 0 {
		return nil, fmt.Errorf("QUERY_MESSAGE %s/%s: code %d %q", topic, key, f.Code, f.Remark)
	}
	return primitive.DecodeMessage(f.Body), nil
}
