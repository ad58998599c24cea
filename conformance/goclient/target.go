package goclient

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/rlog"

	"github.com/rocketgo/rocketgo/conformance/restart"
)

// Target is the server a scenario runs against.
type Target struct {
	Namesrv     string // 127.0.0.1:port
	Broker      string // 127.0.0.1:port (advertised)
	Prefix      string // unique per scenario run: topics, groups, instance names
	CreateTopic func(ctx context.Context, topic string, queues int) error
	// BrokerRelease is the Apache release whose broker answers the
	// scenario expects ("5.3.3" or "5.4.0"; harness.Kind.BrokerRelease).
	BrokerRelease string
	// Restart is the shared broker restart; set only for restart scenarios.
	Restart Restarter
}

// Restarter is a restart scenario's handle on the broker restart it shares
// with the others (restart.Point).
type Restarter interface {
	// Plan blocks until every restart scenario reached its restart point
	// and returns when the broker will be stopped; topics must be routed
	// again before Wait returns.
	Plan(ctx context.Context, topics ...string) (time.Time, error)
	// Wait blocks until the broker is back and describes the outage.
	Wait(ctx context.Context) (restart.Window, error)
}

func (t Target) ns() primitive.NamesrvAddr { return primitive.NamesrvAddr{t.Namesrv} }

func (t Target) name(s string) string { return t.Prefix + "_" + s }

// Func is one Go scenario.
type Func func(ctx context.Context, t Target) error

// Scenarios maps scenario names (scenario.Table) to their Go implementation.
var Scenarios = map[string]Func{
	"admin_route":    adminRoute,
	"send_push":      sendPush,
	"pull":           pull,
	"tag_filter":     tagFilter,
	"broadcast":      broadcast,
	"orderly":        orderly,
	"bad_input":      badInput,
	"admin_54":       admin54,
	"offset_resume":  offsetResume,
	"delay":          delay,
	"retry":          retry,
	"transaction":    transaction,
	"request_reply":  requestReply,
	"sql92":          sql92,
	"timer":          timer,
	"rebalance":      rebalance,
	"dlq":            dlq,
	"push_fresh":     pushFresh,
	"lite_then_push": liteThenPush,
	"retry_twice":    retryTwice,
	"delay_restart":  delayRestart,
	"timer_restart":  timerRestart,
	"txn_restart":    txnRestart,
}

var quietOnce sync.Once

// Quiet turns the Go client's own logging down to errors only.
func Quiet() {
	quietOnce.Do(func() {
		if os.Getenv("CONFORMANCE_GOLOG") == "" {
			rlog.SetLogLevel("fatal")
		}
	})
}

// bodies collects consumed messages by body, safe for concurrent use.
type bodies struct {
	mu   sync.Mutex
	seen map[string][]*primitive.MessageExt // guarded by mu
	ch   chan struct{}                      // poked on every add
}

func newBodies() *bodies {
	return &bodies{seen: map[string][]*primitive.MessageExt{}, ch: make(chan struct{}, 1)}
}

func (b *bodies) add(msgs ...*primitive.MessageExt) {
	b.mu.Lock()
	for _, m := range msgs {
		b.seen[string(m.Body)] = append(b.seen[string(m.Body)], m)
	}
	b.mu.Unlock()
	select {
	case b.ch <- struct{}{}:
	default:
	}
}

func (b *bodies) get(body string) []*primitive.MessageExt {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*primitive.MessageExt(nil), b.seen[body]...)
}

func (b *bodies) missing(want []string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var miss []string
	for _, w := range want {
		if len(b.seen[w]) == 0 {
			miss = append(miss, w)
		}
	}
	return miss
}

func (b *bodies) all() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{}
	for k, v := range b.seen {
		out[k] = len(v)
	}
	return out
}

// wait blocks until every body in want has been seen or ctx ends.
func (b *bodies) wait(ctx context.Context, want []string) error {
	for {
		miss := b.missing(want)
		if len(miss) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			sort.Strings(miss)
			if len(miss) > 5 {
				miss = append(miss[:5], "…")
			}
			return fmt.Errorf("%d/%d bodies not consumed (%s): %w", len(b.missing(want)), len(want), strings.Join(miss, ","), ctx.Err())
		case <-b.ch:
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func seq(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%03d", prefix, i)
	}
	return out
}
