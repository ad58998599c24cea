package main

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

type consumeConfig struct {
	namesrv, topic, group string
	count                 uint64 // stop after this many messages (0: run for duration)
	duration, warmup      time.Duration
	idle                  time.Duration // stop once nothing arrived for this long (0: never)
}

// tally collects what the push consumer's callbacks see.
type tally struct {
	mu          sync.Mutex
	msgs, bytes uint64
	first, last time.Time // receive times of the first and latest message
	lat         []int64   // µs, stamped messages past the warm-up only
	done        chan struct{}
	closed      bool
}

func (t *tally) add(msgs []*primitive.MessageExt, count uint64, warmup time.Duration) {
	if len(msgs) == 0 {
		return
	}
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.msgs == 0 {
		t.first = now
		slog.Info("consume first message", "topic", msgs[0].Topic) // bench-compare waits for this line
	}
	for _, m := range msgs {
		t.msgs++
		t.bytes += uint64(len(m.Body))
		sent, ok := stampOf(m.Body)
		if !ok {
			sent = time.UnixMilli(m.BornTimestamp)
		}
		// With a warm-up, only messages sent that long after the first one
		// arrived count: the consumer is known to be up, whatever its start cost.
		if warmup <= 0 || !sent.Before(t.first.Add(warmup)) {
			t.lat = append(t.lat, now.Sub(sent).Microseconds())
		}
	}
	t.last = now
	if count > 0 && t.msgs >= count && !t.closed {
		t.closed = true
		close(t.done)
	}
}

// idleSince is how long ago the last message arrived (0 before the first).
func (t *tally) idleSince(now time.Time) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.msgs == 0 {
		return 0
	}
	return now.Sub(t.last)
}

func runConsume(cfg consumeConfig) (Summary, error) {
	t := &tally{done: make(chan struct{})}
	c, err := consumer.NewPushConsumer(
		consumer.WithNameServer([]string{cfg.namesrv}),
		consumer.WithGroupName(cfg.group),
		consumer.WithInstance(fmt.Sprintf("goclient-%d", time.Now().UnixNano())),
		consumer.WithConsumerModel(consumer.Clustering),
		consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset),
	)
	if err != nil {
		return Summary{}, fmt.Errorf("goclient: new push consumer: %w", err)
	}
	err = c.Subscribe(cfg.topic, consumer.MessageSelector{}, func(_ context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		t.add(msgs, cfg.count, cfg.warmup)
		return consumer.ConsumeSuccess, nil
	})
	if err != nil {
		return Summary{}, fmt.Errorf("goclient: subscribe %s: %w", cfg.topic, err)
	}
	start := time.Now()
	if err := c.Start(); err != nil {
		return Summary{}, fmt.Errorf("goclient: start push consumer: %w", err)
	}
	slog.Info("consume started", "topic", cfg.topic, "in", time.Since(start)) // bench-compare waits for this line
	end := time.After(cfg.duration)
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
wait:
	for {
		select {
		case <-t.done:
			break wait
		case <-end:
			break wait
		case now := <-poll.C:
			if cfg.idle > 0 && t.idleSince(now) >= cfg.idle {
				break wait
			}
		}
	}
	t.mu.Lock()
	if t.msgs > 0 {
		slog.Info("consume", "topic", cfg.topic, "messages", t.msgs, "first_after", t.first.Sub(start),
			"last_after", t.last.Sub(start), "stop_after", time.Since(start))
	}
	s := Summary{Generator: "go-client", Role: "consume", Mode: "push", Topic: cfg.topic,
		Messages: t.msgs, Bytes: t.bytes, Errors: map[string]uint64{}}
	if t.msgs > 0 {
		s.FirstMs = float64(t.first.Sub(start).Microseconds()) / 1000
	}
	lat := t.lat
	t.lat = nil
	// Catch-up rate: first to last message received (start-up and rebalance
	// excluded); with fewer than two messages, the whole run.
	elapsed := time.Since(start)
	if t.msgs > 1 && t.last.After(t.first) {
		elapsed = t.last.Sub(t.first)
	}
	t.mu.Unlock()
	if err := c.Shutdown(); err != nil {
		return Summary{}, fmt.Errorf("goclient: shutdown push consumer: %w", err)
	}
	s.Latency = latencyOf(lat)
	s.finish(elapsed)
	return s, nil
}
