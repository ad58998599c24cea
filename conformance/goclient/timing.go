package goclient

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// clock records when each body was first consumed (unix ms, consumer
// clock = broker clock on this machine) and feeds got.
type clock struct {
	mu    sync.Mutex
	first map[string]int64 // guarded by mu
	got   *bodies
}

func newClock() *clock { return &clock{first: map[string]int64{}, got: newBodies()} }

func (a *clock) handler() handler {
	return func(ctx context.Context, msgs ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		now := time.Now().UnixMilli()
		a.mu.Lock()
		for _, m := range msgs {
			if _, ok := a.first[string(m.Body)]; !ok {
				a.first[string(m.Body)] = now
			}
		}
		a.mu.Unlock()
		return collectInto(a.got)(ctx, msgs...)
	}
}

func (a *clock) at(body string) int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.first[body]
}

// due is one message's promised delivery: never before earliest; lateness
// is measured from want.
type due struct {
	body     string
	want     int64 // requested delivery time, unix ms
	earliest int64 // earliest legitimate arrival (tick rounding), unix ms
}

// checkDue fails on any early arrival and returns the lateness of each
// message in order.
func checkDue(a *clock, ds []due) ([]int64, error) {
	late := make([]int64, len(ds))
	for i, d := range ds {
		at := a.at(d.body)
		if at < d.earliest {
			return nil, fmt.Errorf("%s consumed at %d, %d ms before its delivery time %d (earliest allowed %d)",
				d.body, at, d.want-at, d.want, d.earliest)
		}
		late[i] = at - d.want
	}
	return late, nil
}

// spread renders lateness figures as min/p50/max.
func spread(ms []int64) string {
	if len(ms) == 0 {
		return "n/a"
	}
	s := slices.Clone(ms)
	slices.Sort(s)
	return fmt.Sprintf("%+d/%+d/%+d ms (n=%d)", s[0], s[len(s)/2], s[len(s)-1], len(s))
}

// duplicates counts deliveries beyond the first for the given bodies.
func duplicates(got *bodies, want []string) int {
	n := 0
	for _, w := range want {
		if k := len(got.get(w)); k > 1 {
			n += k - 1
		}
	}
	return n
}
