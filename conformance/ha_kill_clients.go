package conformance

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// haClient drives the cell's client for the kill scenarios: the Go client
// in this process (conformance/goclient/hakill.go), or the Java clients
// through HaTool, one JVM per call (javadriver.RunTool).
type haClient struct{ h *HARun }

func (c haClient) isGo() bool { return c.h.Client == scenario.GoV2 }

// produce sends count keyed messages (keys keyPrefix-<i>) with synchronous
// sends from threads senders and reports every outcome to on. It ends when
// every message was tried, after deadline, or when ctx ends.
func (c haClient) produce(ctx context.Context, topic, keyPrefix string, count, threads int, deadline time.Duration, on func(goclient.Sent)) error {
	if c.isGo() {
		ctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		return goclient.HAProduce(ctx, c.h.Pair.NamesrvAddr, c.h.Name("p_"+keyPrefix), topic, count, threads, keyPrefix, on)
	}
	args := []string{"produce", "--namesrv", c.h.Pair.NamesrvAddr, "--topic", topic,
		"--count", strconv.Itoa(count), "--threads", strconv.Itoa(threads),
		"--deadline-ms", strconv.FormatInt(deadline.Milliseconds(), 10), "--key-prefix", keyPrefix,
		"--sync", "--send-timeout-ms", "3000"}
	var fatal error
	err := c.h.Runner.Java.RunTool(ctx, c.h.Client, args, func(line string) {
		if a, ok := javadriver.ParseAck(line); ok {
			on(goclient.Sent{Key: a.Key, MsgID: a.MsgID, QueueID: a.QueueID, QueueOffset: a.QueueOffset, Status: a.Status})
		} else if e, ok := javadriver.ParseErr(line); ok {
			on(goclient.Sent{Key: e.Key, Err: fmt.Errorf("%s: %s", e.Class, e.Message)})
		} else if f := javadriver.ParseFatal(line); f != nil {
			fatal = f
		}
	})
	return errors.Join(fatal, err)
}

// consume runs one push consumer of group (a new client instance) on topic
// from the group's committed offsets until it has delivered expect distinct
// keys or deadline passes, then shuts it down, which commits its offsets.
// fromSlave lets it start on a route without a master (Java clients only;
// the Go push consumer cannot, see replConsumeSlave).
// rate > 0 paces deliveries (per second).
func (c haClient) consume(ctx context.Context, topic, group, phase string, expect, rate int, fromSlave bool, deadline time.Duration, on func(goclient.Got)) error {
	if c.isGo() {
		ctx, cancel := context.WithTimeout(ctx, deadline)
		defer cancel()
		var mu sync.Mutex
		distinct := map[string]bool{}
		err := goclient.HAPush(ctx, c.h.Pair.NamesrvAddr, topic, group, c.h.Name(phase), rate,
			func(g goclient.Got) {
				mu.Lock()
				distinct[g.Key] = true
				mu.Unlock()
				g.Phase = phase
				on(g)
			},
			func() bool {
				mu.Lock()
				defer mu.Unlock()
				return len(distinct) >= expect
			})
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("go push consumer %s: %d of %d distinct keys in %v", phase, len(distinct), expect, deadline)
		}
		return err
	}
	args := []string{"consume", "--namesrv", c.h.Pair.NamesrvAddr, "--topic", topic, "--group", group,
		"--deadline-ms", strconv.FormatInt(deadline.Milliseconds(), 10), "--expect", strconv.Itoa(expect)}
	if fromSlave {
		args = append(args, "--from-slave-ok")
	}
	if rate > 0 {
		args = append(args, "--rate", strconv.Itoa(rate))
	}
	var fatal error
	done := map[string]int64{}
	err := c.h.Runner.Java.RunTool(ctx, c.h.Client, args, func(line string) {
		if d, ok := javadriver.ParseMsg(line); ok {
			on(goclient.Got{Key: d.Key, MsgID: d.MsgID, QueueID: d.QueueID, QueueOffset: d.QueueOffset, BrokerName: d.BrokerName, Phase: phase})
		} else if f := javadriver.ParseFatal(line); f != nil {
			fatal = f
		} else if m, ok := javadriver.ParseDone(line); ok {
			done = m
		}
	})
	if err := errors.Join(fatal, err); err != nil {
		return err
	}
	if done["distinct"] < int64(expect) {
		return fmt.Errorf("java push consumer %s: %d of %d distinct keys in %v", phase, done["distinct"], expect, deadline)
	}
	return nil
}

// sendBook collects produce outcomes; safe for concurrent use.
type sendBook struct {
	mu     sync.Mutex
	ok     map[string]goclient.Sent // SEND_OK by key (the last one)
	okN    int                      // SEND_OK outcomes, duplicates included
	status map[string]int           // other statuses and errors by name
	firstE []string                 // the first few errors
	failed map[string]bool          // keys of failed sends (never acknowledged)
	poke   chan struct{}
}

func newSendBook() *sendBook {
	return &sendBook{ok: map[string]goclient.Sent{}, status: map[string]int{}, failed: map[string]bool{}, poke: make(chan struct{}, 1)}
}

func (b *sendBook) add(s goclient.Sent) {
	b.mu.Lock()
	switch {
	case s.Err != nil:
		b.status["error"]++
		b.failed[s.Key] = true
		if len(b.firstE) < 3 {
			e := s.Err.Error()
			if i := strings.LastIndex(e, "<- "); i >= 0 {
				e = e[i+3:] // the Java client's root cause
			}
			if len(e) > 160 {
				e = e[:160] + "…"
			}
			b.firstE = append(b.firstE, s.Key+": "+e)
		}
	case s.Status == "SEND_OK":
		b.ok[s.Key] = s
		b.okN++
	default:
		b.status[s.Status]++
		b.failed[s.Key] = true
	}
	b.mu.Unlock()
	select {
	case b.poke <- struct{}{}:
	default:
	}
}

// acked is the number of SEND_OK outcomes.
func (b *sendBook) acked() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.okN
}

func (b *sendBook) errors() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.status["error"]
}

// okKeys copies the SEND_OK outcomes by key.
func (b *sendBook) okKeys() map[string]goclient.Sent {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make(map[string]goclient.Sent, len(b.ok))
	for k, v := range b.ok {
		out[k] = v
	}
	return out
}

// failedKeys is the keys tried that no SEND_OK acknowledged, sorted.
func (b *sendBook) failedKeys() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for k := range b.failed {
		if _, ok := b.ok[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// counts is others without the error texts ("error=3 FLUSH_SLAVE_TIMEOUT=1").
func (b *sendBook) counts() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.countsLocked()
}

func (b *sendBook) countsLocked() string {
	if len(b.status) == 0 {
		return "none"
	}
	var parts []string
	for k, v := range b.status {
		parts = append(parts, k+"="+strconv.Itoa(v))
	}
	sort.Strings(parts)
	return strings.Join(parts, " ")
}

// others describes the non-SEND_OK outcomes ("error=3 FLUSH_SLAVE_TIMEOUT=1 (first errors: …)").
func (b *sendBook) others() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.countsLocked()
	if len(b.firstE) > 0 {
		s += " (first errors: " + strings.Join(b.firstE, "; ") + ")"
	}
	return s
}

// waitAcked blocks until n SEND_OK arrived, done closes, or ctx ends.
func (b *sendBook) waitAcked(ctx context.Context, n int, done <-chan struct{}) bool {
	for b.acked() < n {
		select {
		case <-ctx.Done():
			return false
		case <-done:
			return b.acked() >= n
		case <-b.poke:
		}
	}
	return true
}

// gotBook collects deliveries; safe for concurrent use.
type gotBook struct {
	mu    sync.Mutex
	all   []goclient.Got
	first map[string]time.Time // phase -> first delivery
}

func newGotBook() *gotBook { return &gotBook{first: map[string]time.Time{}} }

func (b *gotBook) add(g goclient.Got) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.all = append(b.all, g)
	if _, ok := b.first[g.Phase]; !ok {
		b.first[g.Phase] = time.Now()
	}
}

func (b *gotBook) phase(p string) []goclient.Got {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []goclient.Got
	for _, g := range b.all {
		if g.Phase == p {
			out = append(out, g)
		}
	}
	return out
}

func (b *gotBook) firstAt(p string) (time.Time, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	t, ok := b.first[p]
	return t, ok
}

func distinctKeys(gs []goclient.Got) map[string]int {
	out := map[string]int{}
	for _, g := range gs {
		out[g.Key]++
	}
	return out
}
