package javadriver

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/restart"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

func TestParseLine(t *testing.T) {
	r, ok := parseLine("PASS send_push 3.25")
	require.True(t, ok)
	require.Equal(t, "send_push", r.Scenario)
	require.Equal(t, scenario.Pass, r.Status)
	require.Equal(t, 3250*time.Millisecond, r.Elapsed)

	r, ok = parseLine("FAIL query 1.5: no message for key k-1: timeout")
	require.True(t, ok)
	require.Equal(t, scenario.Fail, r.Status)
	require.Equal(t, "query", r.Scenario)
	require.Equal(t, "no message for key k-1: timeout", r.Detail)

	_, ok = parseLine("some log line")
	require.False(t, ok)
}

// fakeCoordinator answers every participant at once.
type fakeCoordinator struct {
	mu     sync.Mutex
	left   []string
	topics []string
	killAt time.Time
}

func (f *fakeCoordinator) Plan(_ context.Context, who string, topics []string) (time.Time, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if who == "boom@java-5" {
		return time.Time{}, errors.New("broker\nwould not start")
	}
	f.topics = append(f.topics, topics...)
	return f.killAt, nil
}

func (f *fakeCoordinator) Wait(context.Context, string) (restart.Window, error) {
	return restart.Window{KillAt: f.killAt, Down: f.killAt.Add(time.Second), Up: f.killAt.Add(5 * time.Second)}, nil
}

func (f *fakeCoordinator) Leave(who string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.left = append(f.left, who)
}

func TestAnswererProtocol(t *testing.T) {
	kill := time.UnixMilli(1_700_000_000_000)
	co := &fakeCoordinator{killAt: kill}
	var out bytes.Buffer
	a := &answerer{w: &out, co: co, client: scenario.Java5}
	ctx := context.Background()
	a.handle(ctx, "RESTART-PLAN timer_restart t1,t2")
	a.wg.Wait()
	a.handle(ctx, "RESTART-WAIT timer_restart")
	a.wg.Wait()
	a.handle(ctx, "RESTART-PLAN boom")
	a.wg.Wait()
	a.handle(ctx, "some client log line")
	a.leave("timer_restart")
	require.Equal(t, "PLAN timer_restart 1700000000000\n"+
		"RESTARTED timer_restart 1700000000000 1700000001000 1700000005000\n"+
		"RESTART-ERROR boom broker would not start\n", out.String())
	require.Equal(t, []string{"t1", "t2"}, co.topics)
	require.Equal(t, []string{"timer_restart@java-5"}, co.left)

	// Without a coordinator a request is refused, not left hanging.
	out.Reset()
	none := &answerer{w: &out, client: scenario.Java49}
	none.handle(ctx, "RESTART-PLAN delay_restart x")
	require.Equal(t, "RESTART-ERROR delay_restart no restart coordinator in this run\n", out.String())
}
