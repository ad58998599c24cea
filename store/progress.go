package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// A put's durability is a set of progress offsets (doc.go): written,
// flushed and replicated. Each is a progress: a monotonic commit-log offset
// plus the puts waiting for it to pass their end, ordered by that end and
// woken in order by whoever advances it — the flusher for flushed, the HA
// service (AckReplicated) for replicated. No goroutine waits per put.

// Offsets a put may wait for (waiter.needs).
const (
	needFlushed uint8 = 1 << iota
	needReplicated
)

// waiter is one put waiting for progress offsets to pass target.
type waiter struct {
	target int64     // end of the put's records
	at     time.Time // when the put was appended (timeouts)
	begun  time.Time // when the put was called (its latency)
	needs  uint8     // offsets still to pass
	res    PutResult
	done   func(PutResult)
}

// progress is a monotonic offset and its waiters. The offset only grows,
// except by reset (TruncateTo).
type progress struct {
	atomic.Int64 // the offset

	mu      sync.Mutex
	ws      []waiter // ws[head:] sorted by target; guarded by mu
	head    int      // guarded by mu
	waiting atomic.Int32

	// fire runs on one goroutine at a time (fireMu); an advance that finds
	// it busy sets pending and the running one loops, so a waiter's
	// callback may itself advance a progress.
	fireMu  sync.Mutex
	pending atomic.Bool
	ready   []waiter // guarded by fireMu

	// pass is told about each waiter the offset has passed, outside mu.
	pass func(w *waiter)
}

// enqueue queues w unless the offset has passed w.target already (false:
// the caller goes on with w at once). Mostly an append: puts arrive in
// offset order, nearly.
func (p *progress) enqueue(w *waiter) bool {
	p.mu.Lock()
	// waiting first: an advance that misses the count has moved the offset
	// before this Load sees it (sequentially consistent atomics), one that
	// sees it fires after mu is released.
	p.waiting.Add(1)
	if p.Load() >= w.target {
		p.waiting.Add(-1)
		p.mu.Unlock()
		return false
	}
	if len(p.ws) == cap(p.ws) && p.head > 0 {
		n := copy(p.ws, p.ws[p.head:])
		clear(p.ws[n:])
		p.ws, p.head = p.ws[:n], 0
	}
	p.ws = append(p.ws, waiter{})
	i := len(p.ws) - 1
	for i > p.head && p.ws[i-1].target > w.target {
		p.ws[i] = p.ws[i-1]
		i--
	}
	p.ws[i] = *w
	p.mu.Unlock()
	return true
}

// advance raises the offset to off (never lowers it) and wakes the waiters
// it passed, in order.
func (p *progress) advance(off int64) {
	for {
		cur := p.Load()
		if off <= cur || p.CompareAndSwap(cur, off) {
			break
		}
	}
	if p.waiting.Load() > 0 {
		p.wake()
	}
}

// wake hands the waiters the offset has passed to pass. If another
// goroutine is firing, it leaves the work to it (pending).
func (p *progress) wake() {
	p.pending.Store(true)
	for p.pending.Load() && p.fireMu.TryLock() {
		p.pending.Store(false)
		p.mu.Lock()
		off, i := p.Load(), p.head
		for i < len(p.ws) && p.ws[i].target <= off {
			i++
		}
		p.ready = append(p.ready, p.ws[p.head:i]...)
		clear(p.ws[p.head:i])
		p.head = i
		p.runLocked(p.pass)
	}
}

// runLocked ends a firing round (fireMu and mu held): it unlocks mu, hands
// the taken waiters to then and unlocks fireMu.
func (p *progress) runLocked(then func(*waiter)) {
	if p.head == len(p.ws) {
		p.ws, p.head = p.ws[:0], 0
	}
	p.waiting.Add(-int32(len(p.ready)))
	p.mu.Unlock()
	for i := range p.ready {
		then(&p.ready[i])
	}
	clear(p.ready)
	p.ready = p.ready[:0]
	p.fireMu.Unlock()
}

// sweep hands every queued waiter for which take is true to then, after
// releasing the locks (off the hot path: it allocates), so a callback that
// blocks holds up only its caller, never the advances.
func (p *progress) sweep(take func(*waiter) bool, then func(*waiter)) {
	if p.waiting.Load() == 0 {
		return
	}
	var out []waiter
	p.fireMu.Lock()
	p.mu.Lock()
	n := p.head
	for i := p.head; i < len(p.ws); i++ {
		if take(&p.ws[i]) {
			out = append(out, p.ws[i])
			continue
		}
		p.ws[n] = p.ws[i]
		n++
	}
	clear(p.ws[n:])
	p.ws = p.ws[:n]
	if p.head == len(p.ws) {
		p.ws, p.head = p.ws[:0], 0
	}
	p.waiting.Add(-int32(len(out)))
	p.mu.Unlock()
	p.fireMu.Unlock()
	if p.pending.Load() {
		p.wake()
	}
	for i := range out {
		then(&out[i])
	}
}

// expire hands every waiter queued before deadline to then.
func (p *progress) expire(deadline time.Time, then func(*waiter)) {
	p.sweep(func(w *waiter) bool { return w.at.Before(deadline) }, then)
}

// drain hands every waiter whose target is at or below upTo (every
// waiter: upTo < 0) to then.
func (p *progress) drain(upTo int64, then func(*waiter)) {
	p.sweep(func(w *waiter) bool { return upTo < 0 || w.target <= upTo }, then)
}

// reset sets the offset to off, lowering it (TruncateTo); waiters past off
// are handed to then.
func (p *progress) reset(off int64, then func(*waiter)) {
	p.Store(off)
	p.sweep(func(w *waiter) bool { return w.target > off }, then)
}
