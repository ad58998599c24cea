package restart

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeRestart records calls and returns a window around killAt.
type fakeRestart struct {
	calls  atomic.Int32
	topics chan []string
}

func (f *fakeRestart) do(_ context.Context, killAt time.Time, topics []string) (Window, error) {
	f.calls.Add(1)
	f.topics <- topics
	return Window{Down: killAt.Add(time.Millisecond), Up: killAt.Add(2 * time.Millisecond)}, nil
}

func TestEveryoneArrivesOneRestart(t *testing.T) {
	f := &fakeRestart{topics: make(chan []string, 4)}
	g := NewGate(context.Background(), []string{"a@go", "a@java", "b@go"}, 50*time.Millisecond, time.Minute, f.do)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	wins := make([]Window, 3)
	kills := make([]time.Time, 3)
	errs := make([]error, 3)
	for i, who := range []string{"a@go", "a@java", "b@go"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := g.Bind(who)
			if kills[i], errs[i] = p.Plan(ctx, "topic_"+who); errs[i] == nil {
				wins[i], errs[i] = p.Wait(ctx)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.True(t, g.Close())
	require.Equal(t, int32(1), f.calls.Load())
	require.Equal(t, []string{"topic_a@go", "topic_a@java", "topic_b@go"}, <-f.topics)
	for i := range wins {
		require.Equal(t, kills[0], kills[i])
		require.Equal(t, wins[0], wins[i])
		require.Equal(t, kills[0], wins[i].KillAt)
	}
}

func TestLeaversDoNotBlockAndLateArrivalMisses(t *testing.T) {
	f := &fakeRestart{topics: make(chan []string, 4)}
	g := NewGate(context.Background(), []string{"x", "y", "z"}, 10*time.Millisecond, 300*time.Millisecond, f.do)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g.Leave("y") // failed before its restart point
	start := time.Now()
	_, err := g.Bind("x").Plan(ctx)
	require.NoError(t, err)
	// z never arrived: x waited the bound, not forever.
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond)
	_, err = g.Bind("z").Plan(ctx)
	require.ErrorIs(t, err, ErrMissed)
	_, err = g.Bind("y").Wait(ctx)
	require.Error(t, err, "a participant that never planned cannot wait")
	_, err = g.Bind("x").Wait(ctx)
	require.NoError(t, err)
	require.True(t, g.Close())
	require.Equal(t, int32(1), f.calls.Load())
}

func TestLastLeaverReleasesTheArrived(t *testing.T) {
	f := &fakeRestart{topics: make(chan []string, 4)}
	g := NewGate(context.Background(), []string{"x", "y"}, 10*time.Millisecond, time.Minute, f.do)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	planned := make(chan error, 1)
	go func() {
		_, err := g.Bind("x").Plan(ctx)
		planned <- err
	}()
	// y ends before reaching its restart point; x must not wait a minute.
	for {
		g.mu.Lock()
		arrived := g.arrived["x"]
		g.mu.Unlock()
		if arrived {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	g.Leave("y")
	select {
	case err := <-planned:
		require.NoError(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("x still waiting after the only other participant left")
	}
	require.True(t, g.Close())
}

func TestNobodyArrivesNoRestart(t *testing.T) {
	f := &fakeRestart{topics: make(chan []string, 4)}
	g := NewGate(context.Background(), []string{"x", "y"}, time.Millisecond, time.Minute, f.do)
	g.Leave("x")
	g.Leave("y")
	require.False(t, g.Close())
	require.Zero(t, f.calls.Load())
	_, err := g.Bind("x").Plan(context.Background())
	require.Error(t, err)
}
