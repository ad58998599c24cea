package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

type produceConfig struct {
	namesrv, topic, group string
	threads, size         int
	count                 uint64 // 0: no limit
	rate                  float64
	duration, timeout     time.Duration
	warmup                time.Duration // sends before start+warmup run but are not counted
}

// worker is one sending goroutine's tally.
type worker struct {
	sent, bytes uint64
	lat         []int64 // µs per successful send
	errs        map[string]uint64
}

// schedule returns when message k of goroutine i (of n) is due at rate/s.
func schedule(start time.Time, rate float64, n, i int, k uint64) time.Time {
	return start.Add(time.Duration(float64(k*uint64(n)+uint64(i)) / rate * float64(time.Second)))
}

func runProduce(cfg produceConfig) (Summary, error) {
	p, err := producer.NewDefaultProducer(
		producer.WithNameServer([]string{cfg.namesrv}),
		producer.WithGroupName(cfg.group),
		producer.WithInstanceName(fmt.Sprintf("goclient-%d", time.Now().UnixNano())),
		producer.WithSendMsgTimeout(cfg.timeout),
		producer.WithRetry(2),
	)
	if err != nil {
		return Summary{}, fmt.Errorf("goclient: new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return Summary{}, fmt.Errorf("goclient: start producer: %w", err)
	}
	defer p.Shutdown()

	// The first send of a topic fetches its route; do it before the clock starts.
	if _, err := p.SendSync(context.Background(), primitive.NewMessage(cfg.topic, newBody(cfg.size, time.Now()))); err != nil {
		return Summary{}, fmt.Errorf("goclient: first send to %s: %w", cfg.topic, err)
	}

	var left atomic.Int64 // messages still to send when -count is set
	left.Store(int64(cfg.count))
	workers := make([]worker, cfg.threads)
	start := time.Now()
	measured := start.Add(cfg.warmup)
	deadline := measured.Add(cfg.duration)
	var wg sync.WaitGroup
	for i := range workers {
		w := &workers[i]
		w.errs = map[string]uint64{}
		wg.Go(func() {
			for k := uint64(0); ; k++ {
				if cfg.count > 0 && left.Add(-1) < 0 {
					return
				}
				if cfg.rate > 0 {
					if d := time.Until(schedule(start, cfg.rate, cfg.threads, i, k)); d > 0 {
						time.Sleep(d)
					}
				}
				now := time.Now()
				if !now.Before(deadline) {
					return
				}
				res, err := p.SendSync(context.Background(), primitive.NewMessage(cfg.topic, newBody(cfg.size, now)))
				switch {
				case now.Before(measured):
				case err != nil:
					w.errs[errClass(err)]++
				case res.Status != primitive.SendOK:
					w.errs[fmt.Sprintf("status_%d", res.Status)]++
				default:
					w.sent++
					w.bytes += uint64(cfg.size)
					w.lat = append(w.lat, time.Since(now).Microseconds())
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(measured)

	s := Summary{Generator: "go-client", Role: "produce", Mode: "sync", Topic: cfg.topic, Threads: cfg.threads,
		Size: cfg.size, Rate: cfg.rate, Errors: map[string]uint64{}}
	var lat []int64
	for _, w := range workers {
		s.Messages += w.sent
		s.Bytes += w.bytes
		lat = append(lat, w.lat...)
		for k, n := range w.errs {
			s.Errors[k] += n
		}
	}
	s.Latency = latencyOf(lat)
	s.finish(elapsed)
	return s, nil
}

// errClass shortens a send error to a stable key for the errors map.
func errClass(err error) string {
	msg := err.Error()
	if len(msg) > 60 {
		msg = msg[:60]
	}
	return msg
}
