package broker

import (
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport"
)

// Java's PopLongPollingService bounds: popPollingSize held requests per
// (topic, group, queue) and maxPopPollingSize in all.
const (
	DefaultPopPollingSize    = 1024
	DefaultMaxPopPollingSize = 100000
)

// popWatch is one topic's held pops and notifications, with its arrival
// generation (bumped by every arrival on the topic).
type popWatch struct {
	gen  uint64
	held []*popRequest
}

type popOutcome int

const (
	popParked  popOutcome = iota // the table owns the request
	popFull                      // POLLING_FULL
	popChanged                   // a message arrived since the scan began: scan again
)

// popHolds parks POP_MESSAGE and NOTIFICATION requests that found nothing,
// like holdTable does pulls (Java PopLongPollingService): no goroutine per
// request; arrivals on a watched topic (the topic and its pop retry
// topics) wake them; one timer goroutine serves the deadlines; re-runs go
// to a few wake workers.
//
// No lost wake-up: a request records the arrival generation of each
// watched topic before it scans (snapshot); park refuses (popChanged) when
// any moved since, so a message that lands between the scan and the park
// makes the request scan again instead of sleeping.
type popHolds struct {
	// holdClock: the deadline heap (guarded by mu), the timer goroutine,
	// the wake workers and run (pullhold.go).
	holdClock[*popRequest]
	drop            func(*popRequest) // frees a request whose connection closed
	perKey, maxHeld int

	mu      sync.Mutex
	watches map[string]*popWatch // keys are private copies; guarded by mu
	perQ    map[popKey]int       // held per (topic, group, queue); guarded by mu
	count   int                  // guarded by mu
}

func newPopHolds(run func(*popRequest), perKey, maxHeld int) *popHolds {
	if perKey <= 0 {
		perKey = DefaultPopPollingSize
	}
	if maxHeld <= 0 {
		maxHeld = DefaultMaxPopPollingSize
	}
	t := &popHolds{perKey: perKey, maxHeld: maxHeld,
		watches: make(map[string]*popWatch), perQ: make(map[popKey]int)}
	t.holdClock.init(&t.mu, t.claimLocked, run, 1024)
	return t
}

func (t *popHolds) watchLocked(topic string) *popWatch {
	w := t.watches[topic]
	if w == nil {
		w = &popWatch{}
		t.watches[strings.Clone(topic)] = w
	}
	return w
}

// snapshot records the generations of pr's watched topics before a scan.
func (t *popHolds) snapshot(pr *popRequest) bool {
	t.mu.Lock()
	pr.nwatched = 0
	add := func(topic string) {
		w := t.watchLocked(topic)
		pr.watched[pr.nwatched] = w
		pr.gens[pr.nwatched] = w.gen
		pr.nwatched++
	}
	add(pr.topic())
	for _, rt := range pr.retry {
		if pr.nwatched < len(pr.watched) {
			add(rt)
		}
	}
	t.mu.Unlock()
	return true
}

// park holds pr until an arrival on a watched topic or its deadline.
func (t *popHolds) park(pr *popRequest, _ bool) popOutcome {
	k := popKey{pr.topic(), pr.group(), pr.queueID()}
	t.mu.Lock()
	for i := 0; i < pr.nwatched; i++ {
		if pr.watched[i].gen != pr.gens[i] {
			t.mu.Unlock()
			return popChanged
		}
	}
	if t.count >= t.maxHeld || t.perQ[k] >= t.perKey {
		t.mu.Unlock()
		return popFull
	}
	if _, ok := t.perQ[k]; !ok {
		k = popKey{strings.Clone(k.topic), strings.Clone(k.group), k.queue}
	}
	t.perQ[k]++
	for i := 0; i < pr.nwatched; i++ {
		w := pr.watched[i]
		w.held = append(w.held, pr)
	}
	pr.claimed = false
	earliest := t.pushLocked(pr)
	t.count++
	t.mu.Unlock()
	if earliest {
		t.kickTimer()
	}
	return popParked
}

func (t *popHolds) claimLocked(pr *popRequest) bool {
	if pr.claimed {
		return false
	}
	pr.claimed = true
	for i := 0; i < pr.nwatched; i++ {
		w := pr.watched[i]
		for j, x := range w.held {
			if x == pr {
				last := len(w.held) - 1
				w.held[j] = w.held[last]
				w.held[last] = nil
				w.held = w.held[:last]
				break
			}
		}
	}
	k := popKey{pr.topic(), pr.group(), pr.queueID()}
	if n := t.perQ[k]; n > 1 {
		t.perQ[k] = n - 1
	} else {
		delete(t.perQ, k)
	}
	t.removeLocked(pr)
	t.count--
	return true
}

// arrived wakes every request watching topic (store.OnArrival).
func (t *popHolds) arrived(topic string) {
	t.mu.Lock()
	w := t.watches[topic]
	if w == nil {
		t.mu.Unlock()
		return
	}
	w.gen++
	if len(w.held) == 0 {
		t.mu.Unlock()
		return
	}
	ready := append([]*popRequest(nil), w.held...)
	for _, pr := range ready {
		t.claimLocked(pr)
	}
	t.mu.Unlock()
	for _, pr := range ready {
		t.dispatch(pr)
	}
}

// connClosed frees at once every request held for c (the broker's
// OnClose hook; a scan of the held requests, which a close can afford).
func (t *popHolds) connClosed(c *transport.Conn) {
	t.mu.Lock()
	var gone []*popRequest
	for _, pr := range t.timers {
		if pr.c == c {
			gone = append(gone, pr)
		}
	}
	for _, pr := range gone {
		t.claimLocked(pr)
	}
	t.mu.Unlock()
	for _, pr := range gone {
		t.drop(pr)
	}
}

// polling counts the requests held for (topic, group, queue).
func (t *popHolds) polling(topic, group string, queue int32) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.perQ[popKey{topic, group, queue}]
}

func (t *popHolds) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}

func (pr *popRequest) holdDeadline() time.Time { return pr.deadline }
func (pr *popRequest) heapIndex() *int         { return &pr.index }
