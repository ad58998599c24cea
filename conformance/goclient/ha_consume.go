package goclient

import (
	"context"
	"fmt"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// ConsumeBodies runs a push consumer of group (from the first offset) on
// topic until it received every body in want, or ctx ends; it then shuts
// the consumer down. The consumer follows the brokers' suggestWhichBrokerId
// like any Go v2 push consumer.
func ConsumeBodies(ctx context.Context, namesrv, group, topic string, want []string) error {
	Quiet()
	got := newBodies()
	c, err := rocketmq.NewPushConsumer(
		consumer.WithNameServer(primitive.NamesrvAddr{namesrv}),
		consumer.WithGroupName(group), consumer.WithInstance(group),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
	if err != nil {
		return fmt.Errorf("new push consumer: %w", err)
	}
	if err := c.Subscribe(topic, all, collectInto(got)); err != nil {
		return fmt.Errorf("subscribe %s: %w", topic, err)
	}
	if err := c.Start(); err != nil {
		return fmt.Errorf("start push consumer: %w", err)
	}
	defer c.Shutdown()
	return got.wait(ctx, want)
}
