package main

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The pacer never sends early and, unlike a Go timer (whose sub-millisecond
// waits become 1 ms epoll timeouts), wakes well within a millisecond of a
// short deadline.
func TestPacerWakesOnTime(t *testing.T) {
	p, err := newPacer()
	require.NoError(t, err)
	defer p.close()
	clk := newClock()
	done := make(chan struct{})
	var late []time.Duration
	for range 40 {
		sched := clk.mono() + int64(300*time.Microsecond)
		require.True(t, p.wait(clk, sched, done))
		now := clk.mono()
		require.GreaterOrEqual(t, now, sched, "woke before the scheduled time")
		late = append(late, time.Duration(now-sched))
	}
	slices.Sort(late)
	t.Logf("lateness median %v p90 %v", late[len(late)/2], late[len(late)*9/10])
	require.Less(t, late[len(late)/2], 500*time.Microsecond, "median lateness; all: %v", late)

	// A wait longer than the coarse part spans a Go timer and the timerfd.
	sched := clk.mono() + int64(5*time.Millisecond)
	require.True(t, p.wait(clk, sched, done))
	require.GreaterOrEqual(t, clk.mono(), sched)
}

func TestPacerStopsOnDone(t *testing.T) {
	p, err := newPacer()
	require.NoError(t, err)
	defer p.close()
	clk := newClock()
	done := make(chan struct{})
	close(done)
	start := time.Now()
	require.False(t, p.wait(clk, clk.mono()+int64(time.Hour), done))
	require.Less(t, time.Since(start), time.Second)
}
