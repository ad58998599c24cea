package broker

import (
	"context"

	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

type pullReply struct {
	resp *codec.Frame
	err  error
	at   time.Time
}

func (tb *testBroker) pullAsync(req *codec.Frame) <-chan pullReply {
	ch := make(chan pullReply, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		resp, err := tb.cli.Invoke(ctx, tb.addr, req)
		ch <- pullReply{resp, err, time.Now()}
	}()
	return ch
}

func TestLongPollWakesOnArrival(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, sendV1("LP", 0, "", []byte("first")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	tb.waitDispatched(t, "LP", 0, 1)

	ch := tb.pullAsync(pullReq("cg", "LP", 0, 1, pullFlagSuspend|pullFlagSubscription, 5000, "*"))
	require.Eventually(t, func() bool { return tb.pull.holds.held() == 1 }, 2*time.Second, time.Millisecond)
	time.Sleep(50 * time.Millisecond) // let the hold age; not synchronization

	resp = tb.invoke(t, sendV1("LP", 0, "", []byte("second")))
	sent := time.Now()
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	r := <-ch
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespSuccess), r.resp.Code, r.resp.Remark)
	require.Less(t, r.at.Sub(sent), 100*time.Millisecond, "held pull answered late")
	recs := decodeRecords(t, r.resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "second", string(recs[0].Body))
	require.Equal(t, "2", ext(t, r.resp, "nextBeginOffset"))
	require.Equal(t, 0, tb.pull.holds.held())
}

func TestLongPollTimesOut(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("LPT", 1, 6, 0)
	start := time.Now()
	r := <-tb.pullAsync(pullReq("cg", "LPT", 0, 0, pullFlagSuspend|pullFlagSubscription, 300, "*"))
	took := time.Since(start)
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespPullNotFound), r.resp.Code)
	require.Equal(t, "0", ext(t, r.resp, "nextBeginOffset"))
	require.GreaterOrEqual(t, took, 300*time.Millisecond)
	require.Less(t, took, 1500*time.Millisecond)
}

// A message of a tag the held pull does not want must not wake it.
func TestLongPollIgnoresUnmatchedTag(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("LPF", 1, 6, 0)
	ch := tb.pullAsync(pullReq("cg", "LPF", 0, 0, pullFlagSuspend|pullFlagSubscription, 600, "TagA"))
	// Parked and re-checked: a message arriving before the re-check would
	// (rightly) re-run the pull, which then answers PULL_RETRY_IMMEDIATELY
	// past the unmatched message, as Java's periodic hold check does.
	require.Eventually(t, func() bool { return tb.pull.holds.held() == 1 && tb.pull.holds.parked.Load() == 1 }, 2*time.Second, time.Millisecond)
	resp := tb.invoke(t, sendV1("LPF", 0, props("TAGS", "TagB"), []byte("b")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	tb.waitDispatched(t, "LPF", 0, 1)
	require.Equal(t, 1, tb.pull.holds.held(), "unmatched arrival woke the pull")
	resp = tb.invoke(t, sendV1("LPF", 0, props("TAGS", "TagA"), []byte("a")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	r := <-ch
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespSuccess), r.resp.Code, r.resp.Remark)
	recs := decodeRecords(t, r.resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "a", string(recs[0].Body))
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	require.NoError(t, syscall.Getrusage(syscall.RUSAGE_SELF, &ru))
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Many idle held pulls use no goroutine each and no CPU while they wait.
func TestHeldPullsAreCheap(t *testing.T) {
	tb := startBroker(t, nil)
	const n = 200
	tb.topics.createIfAbsent("Idle", 8, 6, 0)
	before := runtime.NumGoroutine()
	var wg sync.WaitGroup
	results := make(chan pullReply, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results <- <-tb.pullAsync(pullReq("cg", "Idle", i%8, 0, pullFlagSuspend|pullFlagSubscription, 3000, "*"))
		}()
	}
	require.Eventually(t, func() bool { return tb.pull.holds.held() == n }, 5*time.Second, time.Millisecond)
	// Each test pull costs two goroutines of ours (waiter + invoker); the
	// broker must add only a constant on top.
	require.Less(t, runtime.NumGoroutine()-before, 2*n+30)
	cpu0 := cpuTime(t)
	time.Sleep(500 * time.Millisecond) // measuring idle CPU over a window
	require.Less(t, cpuTime(t)-cpu0, 100*time.Millisecond, "idle held pulls burn CPU")
	wg.Wait()
	close(results)
	for r := range results {
		require.NoError(t, r.err)
		require.Equal(t, int32(codec.RespPullNotFound), r.resp.Code)
	}
	require.Equal(t, 0, tb.pull.holds.held())
}

// Offsets committed inside a pull are stored.
func TestPullCommitsOffset(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("PC", 1, 6, 0)
	req := pullReq("cg", "PC", 0, 0, pullFlagSubscription|pullFlagCommitOffset, 0, "*")
	req.Set("commitOffset", "42")
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code)
	off, ok := tb.offsets.query("cg", "PC", 0)
	require.True(t, ok)
	require.Equal(t, int64(42), off)
}
