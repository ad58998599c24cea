package goclient

import (
	"context"
	"fmt"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// dlq: a consumer that always answers retry-later with maxReconsumeTimes 1
// sends the message to %DLQ%<group>, body and properties intact.
func dlq(ctx context.Context, t Target) error {
	topic := t.name("dlq")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	p, err := newProducer(t, "dlq_p")
	if err != nil {
		return err
	}
	defer p.Shutdown()
	// The broker creates %RETRY%<group> on the first heartbeat, but the Go
	// client only learns its route on its 30 s route refresh: create it
	// first so the redelivery is not held up by that.
	if err := t.CreateTopic(ctx, "%RETRY%"+t.name("dlq_c"), 1); err != nil {
		return err
	}
	attempts := make(chan int32, 8)
	c, err := startPush(t, "dlq_c", "dlq_c", topic, all,
		func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
			for _, m := range msgs {
				select {
				case attempts <- m.ReconsumeTimes:
				default:
				}
			}
			if cc, ok := primitive.GetConcurrentlyCtx(ctx); ok {
				cc.DelayLevelWhenNextConsume = 1 // 1 s instead of 10 s
			}
			return consumer.ConsumeRetryLater, nil
		}, consumer.WithMaxReconsumeTimes(1), consumer.WithConsumeMessageBatchMaxSize(1))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	key := t.name("dlq_key")
	m := primitive.NewMessage(topic, []byte("dead-letter"))
	m.WithTag("TagD")
	m.WithKeys([]string{key})
	m.WithProperty("color", "red")
	if err := sendAll(ctx, p, m); err != nil {
		return err
	}
	dlqTopic := "%DLQ%" + t.name("dlq_c")
	var last error
	for {
		msgs, err := queryByKey(ctx, t.Broker, dlqTopic, key)
		if err == nil && len(msgs) > 0 {
			if len(msgs) != 1 {
				return fmt.Errorf("%s holds %d messages with key %s, want 1", dlqTopic, len(msgs), key)
			}
			d := msgs[0]
			switch {
			case d.Topic != dlqTopic:
				return fmt.Errorf("dead letter stored in topic %q, want %q", d.Topic, dlqTopic)
			case string(d.Body) != "dead-letter":
				return fmt.Errorf("dead letter body %q", d.Body)
			case d.GetTags() != "TagD" || d.GetKeys() != key || d.GetProperty("color") != "red":
				return fmt.Errorf("dead letter lost properties: tags %q keys %q color %q (%v)",
					d.GetTags(), d.GetKeys(), d.GetProperty("color"), d.GetProperties())
			case d.GetProperty(primitive.PropertyRetryTopic) != topic:
				return fmt.Errorf("dead letter RETRY_TOPIC %q, want %q", d.GetProperty(primitive.PropertyRetryTopic), topic)
			}
			break
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("no message with key %s in %s (last: %v): %w", key, dlqTopic, last, ctx.Err())
		case <-time.After(300 * time.Millisecond):
		}
	}
	var seen []int32
	for len(attempts) > 0 {
		seen = append(seen, <-attempts)
	}
	if len(seen) != 2 || seen[0] != 0 || seen[1] != 1 {
		return fmt.Errorf("consume attempts with reconsumeTimes %v, want [0 1]", seen)
	}
	return nil
}
