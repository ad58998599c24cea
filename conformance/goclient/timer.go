package goclient

import (
	"context"
	"fmt"
	"strconv"
	"time"

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

// timer: three 5.x timer messages (TIMER_DELIVER_MS = now + 3, 3.5, 4 s)
// are consumed no earlier than their tick-rounded delivery times, in their
// own topic; lateness reported.
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
	a := newClock()
	c, err := startPush(t, "timer_c", "timer_c", topic, all, a.handler())
	if err != nil {
		return err
	}
	defer c.Shutdown()
	base := time.Now().UnixMilli()
	var ds []due
	var want []string
	for i, off := range []int64{3000, 3500, 4000} {
		body := fmt.Sprintf("timer-%d", i)
		deliverMs := base + off
		m := primitive.NewMessage(topic, []byte(body))
		m.WithKeys([]string{t.name("timer_key")})
		m.WithProperty(primitive.PropertyTimerDeliverMS, strconv.FormatInt(deliverMs, 10))
		if err := sendAll(ctx, p, m); err != nil {
			return err
		}
		ds = append(ds, due{body: body, want: deliverMs, earliest: earliestTimerDelivery(deliverMs)})
		want = append(want, body)
	}
	if err := a.got.wait(ctx, want); err != nil {
		return err
	}
	late, err := checkDue(a, ds)
	if err != nil {
		return err
	}
	for _, w := range want {
		if d := a.got.get(w)[0]; d.Topic != topic {
			return fmt.Errorf("timer message delivered with topic %q, want %q", d.Topic, topic)
		}
	}
	return Note("lateness min/p50/max " + spread(late))
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
