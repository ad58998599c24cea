package broker

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// wakeRound parks one long-poll pull at offset, waits until it is held and
// the broker has gone idle for idle, then sends one message and returns
// the time from the send to the pull's reply (and from the send to the
// send's own reply).
func wakeRound(tb testing.TB, b *testBroker, topic string, offset int64, idle time.Duration) (pull, send time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type reply struct {
		resp *codec.Frame
		err  error
		at   time.Time
	}
	ch := make(chan reply, 1)
	go func() {
		resp, err := b.cli.Invoke(ctx, b.addr, pullReq("cg", topic, 0, offset, pullFlagSuspend|pullFlagSubscription, 5000, "*"))
		ch <- reply{resp, err, time.Now()}
	}()
	deadline := time.Now().Add(5 * time.Second)
	for b.pull.holds.held() != 1 {
		if time.Now().After(deadline) {
			tb.Fatalf("pull at %d never held", offset)
		}
		time.Sleep(100 * time.Microsecond) // polling with a deadline
	}
	// Sparse traffic: let every goroutine and thread of the broker go idle
	// before the message arrives (not synchronization).
	time.Sleep(idle)
	t0 := time.Now()
	resp, err := b.cli.Invoke(ctx, b.addr, sendV1(topic, 0, "", []byte("wake")))
	send = time.Since(t0)
	require.NoError(tb, err)
	require.Equal(tb, int32(codec.RespSuccess), resp.Code, resp.Remark)
	r := <-ch
	require.NoError(tb, r.err)
	require.Equal(tb, int32(codec.RespSuccess), r.resp.Code, r.resp.Remark)
	require.NotEmpty(tb, r.resp.Body)
	return r.at.Sub(t0), send
}

// A held pull is answered within a few milliseconds of a sparse arrival:
// no tick, timer or batching delay between the append and the reply.
func TestHeldPullWakeLatencySparse(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("Wake", 1, 6, 0)
	const rounds = 100
	pulls := make([]time.Duration, 0, rounds)
	sends := make([]time.Duration, 0, rounds)
	for i := range rounds {
		p, s := wakeRound(t, tb, "Wake", int64(i), 5*time.Millisecond)
		pulls = append(pulls, p)
		sends = append(sends, s)
	}
	slices.Sort(pulls)
	slices.Sort(sends)
	q := func(d []time.Duration, f float64) time.Duration { return d[min(len(d)-1, int(f*float64(len(d))))] }
	t.Logf("send→pull reply over %d sparse arrivals: p50 %v p90 %v p99 %v max %v (send RTT p50 %v p99 %v)",
		rounds, q(pulls, .5), q(pulls, .9), q(pulls, .99), pulls[len(pulls)-1], q(sends, .5), q(sends, .99))
	// A wake-up that waits for a tick or a flush timer is late in most
	// rounds (tens to hundreds of milliseconds at p50 and p90); the p90
	// bound leaves the scheduler's odd stall on a loaded CI box (one round
	// at 113 ms in a run) out of the verdict.
	require.Less(t, q(pulls, .9), 50*time.Millisecond, "held pulls woke late")
}

// BenchmarkHeldPullWake is one wake-up round trip: a held pull, a send on
// its queue, the pull's reply (ns/op is the send→reply time plus the park).
func BenchmarkHeldPullWake(b *testing.B) {
	tb := startBroker(b, nil)
	tb.topics.createIfAbsent("WakeB", 1, 6, 0)
	b.ReportAllocs()
	var total time.Duration
	for i := 0; b.Loop(); i++ {
		p, _ := wakeRound(b, tb, "WakeB", int64(i), 0)
		total += p
	}
	b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-wake/op")
}
