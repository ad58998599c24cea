package goclient

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketgo/rocketgo/conformance/restart"
)

// The restart scenarios: set up clients, reach the restart point (Plan
// announces when the broker will be stopped), send the pending work before
// that instant, wait for the broker to come back, then check that nothing
// was lost, nothing came early, and report how late things were.

var errNoRestarter = errors.New("restart scenario run without a restart coordinator")

// busyRetry runs send until it succeeds, fails with something other than
// broker flow control (SYSTEM_BUSY, which a loaded Java broker answers when
// every client sends at the announced moment), or the deadline passes.
func busyRetry(ctx context.Context, deadline time.Time, send func() error) error {
	for {
		err := send()
		if err == nil || !strings.Contains(err.Error(), "broker busy") || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// timed is the common part of the delay and timer restart scenarios: a
// topic, a producer, a push consumer timing arrivals, and the announced
// kill time.
type timed struct {
	topic  string
	p      rocketmq.Producer
	c      rocketmq.PushConsumer
	a      *clock
	killAt time.Time
}

func startTimed(ctx context.Context, t Target, name string) (*timed, error) {
	if t.Restart == nil {
		return nil, errNoRestarter
	}
	r := &timed{topic: t.name(name), a: newClock()}
	if err := t.CreateTopic(ctx, r.topic, 2); err != nil {
		return nil, err
	}
	var err error
	if r.p, err = newProducer(t, name+"_p"); err != nil {
		return nil, err
	}
	if r.c, err = startPush(t, name+"_c", name+"_c", r.topic, all, r.a.handler()); err != nil {
		r.close()
		return nil, err
	}
	if r.killAt, err = t.Restart.Plan(ctx, r.topic); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *timed) close() {
	if r.c != nil {
		_ = r.c.Shutdown()
	}
	_ = r.p.Shutdown()
}

// delayLevelMs are the broker's default messageDelayLevel entries 2-4.
var delayLevelMs = map[int]int64{2: 5000, 3: 10000, 4: 30000}

// delayRestart: delay levels 2-4 sent right before the broker is killed.
func delayRestart(ctx context.Context, t Target) error {
	r, err := startTimed(ctx, t, "delay_restart")
	if err != nil {
		return err
	}
	defer r.close()
	topic, p, a, killAt := r.topic, r.p, r.a, r.killAt
	var ds []due
	var want []string
	for _, level := range []int{2, 3, 4} {
		for i := range 2 {
			body := fmt.Sprintf("delay-L%d-%d", level, i)
			m := primitive.NewMessage(topic, []byte(body))
			m.WithDelayTimeLevel(level)
			sent := time.Now().UnixMilli()
			if err := busyRetry(ctx, killAt, func() error { return sendAll(ctx, p, m) }); err != nil {
				return err
			}
			ds = append(ds, due{body: body, want: sent + delayLevelMs[level], earliest: sent + delayLevelMs[level]})
			want = append(want, body)
		}
	}
	if time.Now().After(killAt) {
		return fmt.Errorf("sends finished %v after the announced kill", time.Since(killAt))
	}
	w, err := t.Restart.Wait(ctx)
	if err != nil {
		return err
	}
	if err := a.got.wait(ctx, want); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	late, err := checkDue(a, ds)
	if err != nil {
		return err
	}
	pending, down := phases(ds, w)
	if pending == 0 {
		return fmt.Errorf("no delayed message was pending when the broker stopped (%s)", windowString(w))
	}
	return Note(fmt.Sprintf("lateness min/p50/max %s; %d/%d pending at the kill, %d due while down; %d duplicate deliveries; %s",
		spread(late), pending, len(ds), down, duplicates(a.got, want), windowString(w)))
}

// phases counts the messages still pending when the broker stopped and,
// among them, those that came due while it was down.
func phases(ds []due, w restart.Window) (pending, down int) {
	for _, d := range ds {
		if d.want >= w.Down.UnixMilli() {
			pending++
			if d.want < w.Up.UnixMilli() {
				down++
			}
		}
	}
	return pending, down
}

func windowString(w restart.Window) string {
	return fmt.Sprintf("broker down %.1fs", w.Up.Sub(w.Down).Seconds())
}

// timerOffsetsMs place TIMER_DELIVER_MS messages relative to the announced
// kill: one due before it, two while the broker is surely down (it stays
// down >= 4 s), three after (for our broker; a Java broker may still be
// starting).
var timerOffsetsMs = []int64{-1500, 1500, 3000, 8000, 15000, 25000}

// timerDelaySec are TIMER_DELAY_SEC messages (relative to the broker's
// receive time), sent about 3 s before the kill.
var timerDelaySec = []int64{5, 12}

// timerRestart: timer messages due before, during and after the outage.
func timerRestart(ctx context.Context, t Target) error {
	r, err := startTimed(ctx, t, "timer_restart")
	if err != nil {
		return err
	}
	defer r.close()
	topic, p, a, killAt := r.topic, r.p, r.a, r.killAt
	var ds []due
	var want []string
	for _, off := range timerOffsetsMs {
		body := fmt.Sprintf("timer-at-kill%+dms", off)
		deliverMs := killAt.UnixMilli() + off
		m := primitive.NewMessage(topic, []byte(body))
		m.WithProperty(primitive.PropertyTimerDeliverMS, strconv.FormatInt(deliverMs, 10))
		if err := busyRetry(ctx, killAt, func() error { return sendAll(ctx, p, m) }); err != nil {
			return err
		}
		ds = append(ds, due{body: body, want: deliverMs, earliest: earliestTimerDelivery(deliverMs)})
		want = append(want, body)
	}
	for _, sec := range timerDelaySec {
		body := fmt.Sprintf("timer-delay-%ds", sec)
		m := primitive.NewMessage(topic, []byte(body))
		m.WithProperty("TIMER_DELAY_SEC", strconv.FormatInt(sec, 10))
		sent := time.Now().UnixMilli()
		if err := busyRetry(ctx, killAt, func() error { return sendAll(ctx, p, m) }); err != nil {
			return err
		}
		// The broker adds the delay to its receive time, at or after sent.
		ds = append(ds, due{body: body, want: sent + sec*1000, earliest: earliestTimerDelivery(sent + sec*1000)})
		want = append(want, body)
	}
	if time.Now().After(killAt) {
		return fmt.Errorf("sends finished %v after the announced kill", time.Since(killAt))
	}
	w, err := t.Restart.Wait(ctx)
	if err != nil {
		return err
	}
	if err := a.got.wait(ctx, want); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	late, err := checkDue(a, ds)
	if err != nil {
		return err
	}
	for _, body := range want {
		if d := a.got.get(body)[0]; d.Topic != topic {
			return fmt.Errorf("%s delivered with topic %q, want %q", body, d.Topic, topic)
		}
	}
	pending, down := phases(ds, w)
	if down == 0 {
		return fmt.Errorf("no timer came due while the broker was down (%s)", windowString(w))
	}
	var afterUp []int64
	for i, d := range ds {
		if d.want >= w.Up.UnixMilli() {
			afterUp = append(afterUp, late[i])
		}
	}
	return Note(fmt.Sprintf("lateness min/p50/max %s, of those due after the restart %s; %d/%d pending at the kill, %d due while down; %d duplicate deliveries; %s",
		spread(late), spread(afterUp), pending, len(ds), down, duplicates(a.got, want), windowString(w)))
}

// txnRestartListener leaves "doubt-*" half messages UNKNOW until the
// broker has restarted, then commits doubt-commit-* and rolls back
// doubt-rollback-*.
type txnRestartListener struct {
	restarted atomic.Bool
	mu        sync.Mutex
	unknownAt []time.Time    // guarded by mu: check-backs answered UNKNOW (until the restart was seen)
	after     map[string]int // guarded by mu: check-backs after it
	firstLate time.Time      // guarded by mu: first check-back after the restart
}

func (l *txnRestartListener) ExecuteLocalTransaction(m *primitive.Message) primitive.LocalTransactionState {
	switch b := string(m.Body); {
	case b == "now-commit":
		return primitive.CommitMessageState
	case b == "now-rollback":
		return primitive.RollbackMessageState
	}
	return primitive.UnkonwnState
}

func (l *txnRestartListener) CheckLocalTransaction(m *primitive.MessageExt) primitive.LocalTransactionState {
	b := string(m.Body)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.restarted.Load() {
		l.unknownAt = append(l.unknownAt, time.Now())
		return primitive.UnkonwnState
	}
	if l.firstLate.IsZero() {
		l.firstLate = time.Now()
	}
	l.after[b]++
	switch {
	case strings.HasPrefix(b, "doubt-commit"), b == "now-commit":
		return primitive.CommitMessageState
	}
	return primitive.RollbackMessageState
}

func (l *txnRestartListener) checkedAfter(body string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.after[body]
}

// txnBodies are the transactions of txn_restart, in send order ("seq").
var txnBodies = []string{"now-commit", "now-rollback", "doubt-commit-0", "doubt-rollback-0", "doubt-commit-1", "doubt-rollback-1"}

// txnRestart: transactions in doubt across a broker restart.
func txnRestart(ctx context.Context, t Target) error {
	if t.Restart == nil {
		return errNoRestarter
	}
	topic := t.name("txn_restart")
	if err := t.CreateTopic(ctx, topic, 2); err != nil {
		return err
	}
	l := &txnRestartListener{after: map[string]int{}}
	p, err := startTxnProducer(t, "txn_restart_p", l)
	if err != nil {
		return err
	}
	defer p.Shutdown()
	got := newBodies()
	c, err := startPush(t, "txn_restart_c", "txn_restart_c", topic, all, collectInto(got))
	if err != nil {
		return err
	}
	defer c.Shutdown()
	killAt, err := t.Restart.Plan(ctx, topic)
	if err != nil {
		return err
	}
	commit := []string{"now-commit", "doubt-commit-0", "doubt-commit-1"}
	rollback := []string{"now-rollback", "doubt-rollback-0", "doubt-rollback-1"}
	for i, b := range txnBodies {
		m := primitive.NewMessage(topic, []byte(b))
		m.WithTag("TagTxn")
		m.WithKeys([]string{t.name("txn_key_" + b)})
		m.WithProperty("seq", strconv.Itoa(i))
		var r *primitive.TransactionSendResult
		err := busyRetry(ctx, killAt, func() (err error) {
			r, err = p.SendMessageInTransaction(ctx, m)
			return err
		})
		if err != nil {
			return fmt.Errorf("send %s in transaction: %w", b, err)
		}
		if r.Status != primitive.SendOK {
			return fmt.Errorf("send %s in transaction: status %d", b, r.Status)
		}
	}
	if time.Now().After(killAt) {
		return fmt.Errorf("half sends finished %v after the announced kill", time.Since(killAt))
	}
	w, err := t.Restart.Wait(ctx)
	if err != nil {
		return err
	}
	l.restarted.Store(true)
	if err := got.wait(ctx, commit); err != nil {
		return fmt.Errorf("after the restart: %w", err)
	}
	// Every doubtful half message is decided by a check-back after the
	// restart; then give a rolled-back one every chance to show up.
	for _, b := range []string{"doubt-commit-0", "doubt-commit-1", "doubt-rollback-0", "doubt-rollback-1"} {
		for l.checkedAfter(b) == 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s never checked back after the restart: %w", b, ctx.Err())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	settle := time.NewTimer(2 * time.Second)
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-settle.C:
	}
	for _, b := range rollback {
		if n := len(got.get(b)); n != 0 {
			return fmt.Errorf("rolled-back %s delivered %d times", b, n)
		}
	}
	// A check-back after the crash may ask about a transaction already
	// decided (the checker's progress is persisted lazily, on the Java
	// broker too), and the producer answers commit again: at-least-once,
	// so extra copies are allowed, but never more than commit decisions.
	extra := 0
	for i, b := range txnBodies {
		ms := got.get(b)
		if len(ms) == 0 {
			continue
		}
		copies := map[string]bool{}
		for _, m := range ms {
			qid := -1
			if m.Queue != nil {
				qid = m.Queue.QueueId
			}
			copies[fmt.Sprintf("%d/%d", qid, m.QueueOffset)] = true
			if m.Topic != topic || m.GetTags() != "TagTxn" || m.GetKeys() != t.name("txn_key_"+b) || m.GetProperty("seq") != strconv.Itoa(i) {
				return fmt.Errorf("%s consumed as topic %q tag %q keys %q seq %q, not as sent", b, m.Topic, m.GetTags(), m.GetKeys(), m.GetProperty("seq"))
			}
		}
		commits := l.checkedAfter(b)
		if b == "now-commit" {
			commits++
		}
		if len(copies) > commits {
			return fmt.Errorf("%s stored in %d queue positions %v after %d commit decisions", b, len(copies), copies, commits)
		}
		extra += len(copies) - 1
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	beforeKill := 0
	for _, at := range l.unknownAt {
		if at.Before(w.Down) {
			beforeKill++
		}
	}
	return Note(fmt.Sprintf("first deciding check-back %.1fs after the broker was back; %d check-backs answered UNKNOW (%d before the kill); %d re-committed copies; %d duplicate deliveries; %s",
		l.firstLate.Sub(w.Up).Seconds(), len(l.unknownAt), beforeKill, extra, duplicates(got, commit), windowString(w)))
}
