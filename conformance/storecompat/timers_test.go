package storecompat

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// lateBound is how late after max(due, reader ready) a held message may
// arrive: about one timer step plus room for a loaded machine.
const lateBound = 6 * time.Second

// TestStoreCompatTimers hands a store with pending 5.x timers and
// delay-level messages over Java → ours and ours → Java.
func TestStoreCompatTimers(t *testing.T) {
	env, dir := prepare(t)
	ctx, cancel := context.WithTimeout(context.Background(), 240*time.Second)
	defer cancel()
	start := time.Now()
	rig, err := NewRig(ctx, env, dir)
	require.NoError(t, err)
	defer rig.Close()
	t.Logf("java name server %s ready in %v", rig.NamesrvAddr, time.Since(start).Round(time.Millisecond))

	t.Run("java_to_ours", func(t *testing.T) { handOverTimers(ctx, t, rig, Java, Ours) })
	t.Run("ours_to_java", func(t *testing.T) { handOverTimers(ctx, t, rig, Ours, Java) })
}

// handOverTimers stores timers and delays on writer, stops it before any
// is due, waits past the gap messages' due times, starts reader on the
// same directory and checks it delivers every one (TimerPlan).
func handOverTimers(ctx context.Context, t *testing.T, rig *Rig, writer, reader Side) {
	lap := newLap(t)
	// How long the writer may take to stop, and the reader to register.
	stopLead, readyEst := 4*time.Second, time.Second
	if writer == Java {
		// The Java broker takes 10–17 s to shut down here (its service
		// threads stop one after another, each finishing its wait), and
		// the SIGTERM comes 2–3 s after the sends.
		stopLead = 20 * time.Second
	}
	if reader == Java {
		// A JVM start varies 8–25 s on this machine: plan for a quicker
		// one than the last, so some dues fall while it starts (checked
		// too: never early, exactly once) and, with the spread, some
		// after it serves.
		readyEst = 12 * time.Second
		if rig.JavaStart > 0 {
			readyEst = max(rig.JavaStart*3/5, 6*time.Second)
		}
	}
	plan := NewTimerPlan(fmt.Sprintf("tm%s%d", writer, time.Now().UnixNano()%1e6), stopLead, readyEst)
	rig.Extra = plan.BrokerConf()
	defer func() { rig.Extra = nil }()
	store := filepath.Join(rig.Dir, fmt.Sprintf("timers-%s-to-%s", writer, reader))

	bw, err := rig.StartBroker(ctx, writer, store)
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			_, _ = bw.Stop(5 * time.Second)
		}
	}()
	lap(fmt.Sprintf("start %s broker (writer)", writer))
	cl := harness.Attach(harness.External, rig.NamesrvAddr, bw.Addr)
	require.NoError(t, cl.CreateTopic(ctx, plan.Topic, plan.Queues, nil))
	sendAt, held, err := plan.Send(ctx, rig.NamesrvAddr, bw.Addr)
	require.NoError(t, err, "send on %s:\n%s", writer, bw.Logs(3000))
	lap(fmt.Sprintf("send %d held on %s", len(held), writer))

	// The writer delivers the early ones before the hand-over (so its
	// delay offsets and wheel read time have moved), and hands over only
	// once it has chained every timer into its wheel: its checkpoint
	// (flushed every timerFlushIntervalMs) has passed every timer-topic
	// record. Until then a timer is still only a record in the timer
	// topic, which the reader would simply enqueue itself.
	timers, early, earlyTimers := 0, map[string]bool{}, 0
	for _, h := range held {
		if h.IsTimer() {
			timers++
		}
		if h.When == Early {
			early[h.MsgID] = true
			if h.IsTimer() {
				earlyTimers++
			}
		}
	}
	gotEarly, err := Collect(ctx, bw.Addr, plan.Prefix+"_twriter", plan.Topic, plan.Queues, early, time.Now().Add(15*time.Second), 0)
	require.NoError(t, err)
	for id := range early {
		require.Len(t, gotEarly[id], 1, "early message %s on the %s writer", id, writer)
	}
	// Ready before the wait, so the last-minute send comes right before
	// the SIGTERM.
	lastPr, err := plan.Producer(rig.NamesrvAddr, "_tl")
	require.NoError(t, err)
	defer func() { _ = lastPr.Shutdown() }()
	warm, _ := plan.message(98, "warm-up")
	_, err = sendSync(ctx, lastPr, warm)
	require.NoError(t, err)
	var ts TimerState
	for deadline := time.Now().Add(10 * time.Second); ; {
		ts, err = ReadTimerState(store, 1000)
		if err == nil && ts.QueueOffset >= int64(timers) {
			break
		}
		require.True(t, time.Now().Before(deadline), "the %s writer has not chained the timers into its wheel: %+v %v", writer, ts, err)
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	lap(fmt.Sprintf("%s checkpoints the wheel", writer))
	last, err := plan.SendLastMinute(ctx, lastPr, sendAt)
	require.NoError(t, err, "last-minute send on %s", writer)
	held = append(held, last)

	_, err = bw.Stop(45 * time.Second)
	stopped = true
	require.NoError(t, err, "%s", bw.Logs(3000))
	stopEnd := time.Now()
	lap(fmt.Sprintf("stop %s (SIGTERM, clean)", writer))
	firstDue, lastGap, lastDue := int64(1<<62), int64(0), int64(0)
	for _, h := range held {
		if h.When == Early {
			continue
		}
		firstDue, lastDue = min(firstDue, h.DueMs), max(lastDue, h.DueMs)
		if h.When == Gap {
			lastGap = max(lastGap, h.DueMs)
		}
	}
	if stopEnd.UnixMilli() >= firstDue {
		t.Logf("WARNING: the %s writer stopped %v after the sends, past the first due time (+%v): it may deliver some on its way down",
			writer, stopEnd.Sub(sendAt).Round(time.Millisecond), time.Duration(firstDue-sendAt.UnixMilli())*time.Millisecond)
	}

	// Every timer is in the wheel the writer left: the checkpoint has
	// passed all timer-topic records, one unit each is in the timerlog and
	// the live slots count those not delivered yet; nothing was read past
	// the first pending slot. The last-minute timer may be in the wheel,
	// or only in the timer topic.
	ts, err = ReadTimerState(store, 1000)
	require.NoError(t, err)
	t.Logf("  %s left: timercheck readTime %s flushPos %d queueOffset %d/%d; %d live slots with %d timers; %d timerlog units",
		writer, fmtMs(ts.ReadTimeMs), ts.FlushPos, ts.QueueOffset, ts.MasterQueueOffset, ts.LiveSlots, ts.Pending, ts.Units)
	t.Logf("  the last-minute timer is in the timerlog: %v; in the checkpoint: %v", ts.Units > timers, ts.QueueOffset > int64(timers))
	require.Contains(t, []int64{int64(timers), int64(timers) + 1}, ts.QueueOffset, "timer-topic records the %s writer's checkpoint has passed", writer)
	require.Contains(t, []int{timers, timers + 1}, ts.Units, "timerlog units the %s writer wrote", writer)
	if stopEnd.UnixMilli() < firstDue { // else it may have delivered some
		pend := int64(timers - earlyTimers)
		require.Contains(t, []int64{pend, pend + 1}, ts.Pending, "timers in the %s writer's live wheel slots", writer)
		require.Less(t, ts.ReadTimeMs, firstDue, "the %s writer's read time passed a due timer", writer)
	}

	// The store stays offline until every gap message is due: the reader
	// owes those at once.
	select {
	case <-ctx.Done():
		t.Fatal(ctx.Err())
	case <-time.After(time.Until(time.UnixMilli(lastGap + 300))):
	}
	lap("offline until the gap ones are due")
	launched := time.Now()
	br, err := rig.StartBroker(ctx, reader, store)
	require.NoError(t, err)
	ready := time.Now()
	rstopped := false
	defer func() {
		if !rstopped {
			_, _ = br.Stop(5 * time.Second)
		}
	}()
	lap(fmt.Sprintf("start %s broker (reader)", reader))
	want := map[string]bool{}
	onTime := 0
	for _, h := range held {
		want[h.MsgID] = true
		if h.DueMs >= ready.UnixMilli() {
			onTime++
		}
	}
	if onTime == 0 {
		t.Logf("note: the %s reader took %v to register, longer than planned (%v): every held message fell due before it registered",
			reader, ready.Sub(launched), readyEst)
	}

	got, err := Collect(ctx, br.Addr, plan.Prefix+"_treader", plan.Topic, plan.Queues, want,
		time.UnixMilli(lastDue).Add(lateBound+5*time.Second), 1500*time.Millisecond)
	require.NoError(t, err)
	probs, late, byWriter := CheckHeld(held, got, Handover{stopEnd.UnixMilli(), launched.UnixMilli(), ready.UnixMilli()}, lateBound)
	require.Empty(t, probs, "%s delivering what %s held:\n%s", reader, writer, br.Logs(4000))
	lap(fmt.Sprintf("deliveries on %s (+1.5 s for duplicates)", reader))
	t.Logf("  %d held: %d delivered by %s before the hand-over, %d due later but before %s was ready (%v after launch), %d due after; %d delivered by %s while stopping",
		len(held), len(early), writer, len(held)-len(early)-onTime, reader, ready.Sub(launched).Round(time.Millisecond), onTime, byWriter, writer)
	for _, ph := range []struct{ phase, what string }{
		{DueInGap, "due in the gap, stored after the reader's launch"},
		{DueInStart, "due while the reader started, stored after due"},
		{DueWhenServing, "due once the reader served, stored after due"},
	} {
		t.Logf("  %-48s %s", ph.what, Spread(late, func(l Lateness) bool { return l.Phase == ph.phase }))
	}
	for _, k := range []string{KindDeliverMs, KindDelaySec, KindLevel + " 2", KindLevel + " 3"} {
		t.Logf("    %-18s (serving) %s", k, Spread(late, func(l Lateness) bool { return l.Kind == k && l.Phase == DueWhenServing }))
	}
	t.Logf("  properties %s leaves on delivered timers: %v", reader, SystemProps(held, got, func(h Held) bool { return h.When != Early && h.IsTimer() }))
	t.Logf("  properties %s leaves on delivered delays: %v", reader, SystemProps(held, got, func(h Held) bool { return h.When != Early && !h.IsTimer() }))

	// Nothing is checked after this: a Java reader is killed rather than
	// given its ~12 s clean shutdown.
	rstopped = true
	if reader == Java {
		br.Kill()
		return
	}
	_, err = br.Stop(45 * time.Second)
	require.NoError(t, err, "%s", br.Logs(3000))
	lap(fmt.Sprintf("stop %s (SIGTERM, clean)", reader))
}
