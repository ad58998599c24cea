package broker

import (
	"container/heap"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// holdList is the pulls held on one queue, or on one connection.
type holdList struct{ prs []*pullRequest }

// Defaults of the held-pull bounds (maxHeldPullsPerConnection,
// maxHeldPullBytes). A push consumer holds one pull per assigned queue
// per connection, so even a client with thousands of queues stays under
// the first; the second bounds what all connections together can pin.
const (
	DefaultMaxHeldPullsPerConnection = 4096
	DefaultMaxHeldPullBytes          = 128 << 20
)

// holdBaseCost is what a held pull pins besides its request's bytes: the
// pullRequest, its lease and the lease's decoded frame (about 2 KiB).
const holdBaseCost = 2 << 10

// holdCost estimates the memory a held pull pins: holdBaseCost plus its
// request's payload rounded up to the transport's lease classes (1 KiB,
// then ×4 up to 1 MiB; larger payloads get a buffer of their own).
func holdCost(req *codec.Frame) int64 {
	n := len(req.Remark) + len(req.Body) + 64 // 64: the fixed header fields
	for _, kv := range req.Ext {
		n += len(kv.Key) + len(kv.Value) + 6 // quotes, colon, comma
	}
	c := 1 << 10
	for c < n && c < 1<<20 {
		c <<= 2
	}
	return holdBaseCost + int64(max(c, n))
}

// holdKey names one queue.
type holdKey struct {
	topic string
	queue int32
}

// holdTable parks pulls that found nothing until a message arrives on their
// queue or their deadline passes (Java PullRequestHoldService). One timer
// goroutine serves every deadline; arrivals wake pulls from the store's
// dispatcher. Re-runs execute on a few wake workers.
type holdTable struct {
	// holdClock: the deadline heap (guarded by mu), the timer goroutine,
	// the wake workers and run.
	holdClock[*pullRequest]
	drop  func(*pullRequest) // frees a pull whose connection closed
	store MessageStore
	log   *slog.Logger

	// Bounds: held pulls per connection, and the estimated bytes
	// (holdCost) all held pulls pin. Past either, park refuses.
	maxPerConn int
	maxBytes   int64

	mu sync.Mutex
	// queues lists the pulls held per queue. A key's topic is a private
	// copy (request strings alias pooled buffers) and an emptied list stays,
	// so parking on a known queue allocates nothing; guarded by mu.
	queues map[holdKey]*holdList
	// conns lists the pulls held per connection, so a closed connection's
	// are freed at once rather than at their deadlines. An entry lives
	// until its connection closes; guarded by mu.
	conns map[*transport.Conn]*holdList
	count int    // held pulls; guarded by mu
	bytes int64  // sum of the held pulls' cost; guarded by mu
	parks uint64 // parkings so far, numbering each; guarded by mu
	// parked counts the parkings whose re-check is done (park returned);
	// after it, only arrivals of matching messages and deadlines wake a
	// pull (tests wait for it).
	parked atomic.Uint64
}

const holdWakeWorkers = 4

// newHoldTable makes a table with the default bounds; the broker's sets
// drop and its configured bounds before start.
func newHoldTable(run func(*pullRequest), st MessageStore, log *slog.Logger) *holdTable {
	t := &holdTable{
		drop:       func(*pullRequest) {},
		store:      st,
		log:        log,
		maxPerConn: DefaultMaxHeldPullsPerConnection,
		maxBytes:   DefaultMaxHeldPullBytes,
		queues:     make(map[holdKey]*holdList),
		conns:      make(map[*transport.Conn]*holdList),
	}
	t.holdClock.init(&t.mu, t.claimLocked, run, 4096)
	return t
}

// held reports how many pulls are parked.
func (t *holdTable) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}

// holdOutcome is park's answer.
type holdOutcome int

const (
	holdParked    holdOutcome = iota // the table owns the pull
	holdConnFull                     // its connection holds maxPerConn pulls
	holdTableFull                    // the held pulls pin maxBytes
)

// heldBytes reports the estimated bytes the held pulls pin.
func (t *holdTable) heldBytes() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.bytes
}

// park holds pr, then checks the queue again so a message that arrived
// between the pull's read and the park is not missed. pr belongs to the
// table from the moment it is listed (see pullRequest). park refuses
// (holdConnFull or holdTableFull: pr stays the caller's) when pr's
// connection already holds maxPerConn pulls or pr's cost would take the
// table past maxBytes.
func (t *holdTable) park(pr *pullRequest) holdOutcome {
	out := t.parkAndRecheck(pr)
	if out == holdParked {
		t.parked.Add(1)
	}
	return out
}

func (t *holdTable) parkAndRecheck(pr *pullRequest) holdOutcome {
	// Once parked, pr may be woken, answered and recycled by another
	// goroutine at any moment: read what the re-check needs first.
	topic, queue, offset, c := pr.h.Topic, pr.h.QueueID, pr.h.QueueOffset, pr.c
	var cost int64 = holdBaseCost
	if pr.req != nil {
		cost = holdCost(pr.req)
	}
	k := holdKey{topic, queue}
	t.mu.Lock()
	cl := t.conns[c]
	if cl != nil && len(cl.prs) >= t.maxPerConn {
		t.mu.Unlock()
		return holdConnFull
	}
	if t.bytes+cost > t.maxBytes {
		t.mu.Unlock()
		return holdTableFull
	}
	if cl == nil {
		cl = &holdList{}
		t.conns[c] = cl
	}
	// topic aliases the request, which an early answer would recycle:
	// keep it alive until the re-check below is done.
	lease := pr.lease
	lease.Hold()
	defer lease.Release()
	pr.cost = cost
	pr.connIndex = len(cl.prs)
	cl.prs = append(cl.prs, pr)
	t.bytes += cost
	pr.claimed = false
	t.parks++
	pr.parkID = t.parks
	id := pr.parkID
	l := t.queues[k]
	if l == nil {
		l = &holdList{}
		t.queues[holdKey{strings.Clone(topic), queue}] = l
	}
	pr.queueIndex = len(l.prs)
	l.prs = append(l.prs, pr)
	earliest := t.pushLocked(pr)
	t.count++
	t.mu.Unlock()
	if earliest {
		t.kickTimer()
	}
	if c != nil && c.Closed() {
		// The connection closed before pr was listed, so its OnClose
		// (which runs after Closed turns true) may have missed pr.
		t.connClosed(c)
		return holdParked
	}
	if t.store.MaxOffset(topic, queue) > offset {
		// pr may meanwhile have been answered, freed and parked again by
		// another pull: claim it only if it is still this parking.
		if t.claimParked(pr, id) {
			t.dispatch(pr)
		}
	}
	return holdParked
}

// connClosed frees every pull held for c at once (the broker's OnClose
// hook; it runs on c's event loop, so it only unlinks and releases) and
// forgets c.
func (t *holdTable) connClosed(c *transport.Conn) {
	t.mu.Lock()
	cl := t.conns[c]
	if cl == nil {
		t.mu.Unlock()
		return
	}
	delete(t.conns, c)
	// Every listed pull is unclaimed (a claim unlists it); keep only
	// those claimed here all the same, so none is freed twice.
	prs := cl.prs[:0]
	for _, pr := range cl.prs {
		if t.claimLocked(pr) {
			prs = append(prs, pr)
		}
	}
	cl.prs = nil
	t.mu.Unlock()
	for _, pr := range prs {
		t.drop(pr)
	}
}

// claimParked takes pr out of the table if it is still held as parking
// id; false when someone else claimed it (it may since serve another
// pull). Caller must not hold mu.
func (t *holdTable) claimParked(pr *pullRequest, id uint64) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return pr.parkID == id && t.claimLocked(pr)
}

func (t *holdTable) claimLocked(pr *pullRequest) bool {
	if pr.claimed {
		return false
	}
	pr.claimed = true
	if l := t.queues[holdKey{pr.h.Topic, pr.h.QueueID}]; l != nil {
		unlink(l, pr, &pr.queueIndex, func(x *pullRequest) *int { return &x.queueIndex })
	}
	if l := t.conns[pr.c]; l != nil {
		unlink(l, pr, &pr.connIndex, func(x *pullRequest) *int { return &x.connIndex })
	}
	t.bytes -= pr.cost
	pr.cost = 0
	t.removeLocked(pr)
	t.count--
	return true
}

// unlink removes pr from l in O(1): *at is pr's position in l, and idx
// gives the position field of the pull moved into its place.
func unlink(l *holdList, pr *pullRequest, at *int, idx func(*pullRequest) *int) {
	i := *at
	if i < 0 || i >= len(l.prs) || l.prs[i] != pr {
		return
	}
	last := len(l.prs) - 1
	moved := l.prs[last]
	l.prs[i] = moved
	*idx(moved) = i
	l.prs[last] = nil
	l.prs = l.prs[:last]
	*at = -1
}

// arrived wakes the pulls held on (topic, queue) that can now find
// something (store.OnArrival callback).
func (t *holdTable) arrived(topic string, queue int32, maxOffset int64, tagsCode int64, props string) {
	k := holdKey{topic, queue}
	var ready []*pullRequest
	t.mu.Lock()
	var held []*pullRequest
	if l := t.queues[k]; l != nil {
		held = l.prs
	}
	for _, pr := range held {
		if pr.h.QueueOffset < maxOffset && pr.sub.MatchCode(tagsCode) && pr.matchProps(props) {
			ready = append(ready, pr)
		}
	}
	for _, pr := range ready {
		t.claimLocked(pr)
	}
	t.mu.Unlock()
	for _, pr := range ready {
		t.dispatch(pr)
	}
}

func (pr *pullRequest) holdDeadline() time.Time { return pr.deadline }
func (pr *pullRequest) heapIndex() *int         { return &pr.index }

// heldRequest is what a hold table parks: a held pull (this file) or a
// held POP or notification (pophold.go).
type heldRequest interface {
	comparable
	holdDeadline() time.Time
	heapIndex() *int
}

// holdClock is the machinery both hold tables share (Java's
// PullRequestHoldService and PopLongPollingService): the deadline heap,
// one timer goroutine that claims what expired, and wake workers that
// re-run what an arrival or a deadline claimed. The heap is guarded by
// the table's mutex; claim is the table's claimLocked.
type holdClock[R heldRequest] struct {
	mu     *sync.Mutex
	claim  func(R) bool
	run    func(R)
	timers holdHeap[R] // guarded by *mu

	kick chan struct{} // a new earliest deadline was pushed
	wake chan R
	quit chan struct{}
	wg   sync.WaitGroup
}

func (k *holdClock[R]) init(mu *sync.Mutex, claim func(R) bool, run func(R), wakeQueue int) {
	k.mu, k.claim, k.run = mu, claim, run
	k.kick, k.wake, k.quit = make(chan struct{}, 1), make(chan R, wakeQueue), make(chan struct{})
}

func (k *holdClock[R]) start() {
	k.wg.Add(1 + holdWakeWorkers)
	go k.timerLoop()
	for range holdWakeWorkers {
		go k.wakeLoop()
	}
}

// stop ends the goroutines; held requests are dropped (their connections
// are closing with the server).
func (k *holdClock[R]) stop() {
	close(k.quit)
	k.wg.Wait()
}

// pushLocked adds r to the deadline heap; true when it is the earliest
// (then kickTimer, after the table's mutex is released). mu held.
func (k *holdClock[R]) pushLocked(r R) bool {
	heap.Push(&k.timers, r)
	return k.timers[0] == r
}

func (k *holdClock[R]) kickTimer() {
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// removeLocked takes r out of the deadline heap if it is there. mu held.
func (k *holdClock[R]) removeLocked(r R) {
	if i := *r.heapIndex(); i >= 0 && i < len(k.timers) && k.timers[i] == r {
		heap.Remove(&k.timers, i)
	}
}

// dispatch hands r to a wake worker, or runs it here when they are busy.
func (k *holdClock[R]) dispatch(r R) {
	select {
	case k.wake <- r:
	default:
		k.run(r)
	}
}

func (k *holdClock[R]) wakeLoop() {
	defer k.wg.Done()
	for {
		select {
		case <-k.quit:
			return
		case r := <-k.wake:
			k.run(r)
		}
	}
}

// timerLoop sleeps until the earliest deadline, then re-runs every expired
// request. It never polls: with nothing held it waits for a kick.
func (k *holdClock[R]) timerLoop() {
	defer k.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	var due []R
	for {
		k.mu.Lock()
		now := time.Now()
		due = due[:0]
		for len(k.timers) > 0 && !k.timers[0].holdDeadline().After(now) {
			r := k.timers[0]
			k.claim(r)
			due = append(due, r)
		}
		wait := time.Hour
		if len(k.timers) > 0 {
			wait = k.timers[0].holdDeadline().Sub(now)
		}
		k.mu.Unlock()
		for i, r := range due {
			k.dispatch(r)
			var zero R
			due[i] = zero
		}
		timer.Reset(wait)
		select {
		case <-k.quit:
			return
		case <-k.kick:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		case <-timer.C:
		}
	}
}

// holdHeap orders held requests by deadline.
type holdHeap[R heldRequest] []R

func (h holdHeap[R]) Len() int           { return len(h) }
func (h holdHeap[R]) Less(i, j int) bool { return h[i].holdDeadline().Before(h[j].holdDeadline()) }
func (h holdHeap[R]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	*h[i].heapIndex() = i
	*h[j].heapIndex() = j
}
func (h *holdHeap[R]) Push(x any) {
	r := x.(R)
	*r.heapIndex() = len(*h)
	*h = append(*h, r)
}
func (h *holdHeap[R]) Pop() any {
	old := *h
	n := len(old)
	r := old[n-1]
	var zero R
	old[n-1] = zero
	*r.heapIndex() = -1
	*h = old[:n-1]
	return r
}
