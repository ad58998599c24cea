package broker

import (
	"container/heap"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// holdList is the pulls held on one queue.
type holdList struct{ prs []*pullRequest }

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
	run   func(*pullRequest)
	store MessageStore
	log   *slog.Logger

	mu sync.Mutex
	// queues lists the pulls held per queue. A key's topic is a private
	// copy (request strings alias pooled buffers) and an emptied list stays,
	// so parking on a known queue allocates nothing; guarded by mu.
	queues map[holdKey]*holdList
	timers deadlineHeap // guarded by mu
	count  int          // held pulls; guarded by mu
	parks  uint64       // parkings so far, numbering each; guarded by mu

	kick chan struct{} // a new earliest deadline was pushed
	wake chan *pullRequest
	quit chan struct{}
	wg   sync.WaitGroup
}

const holdWakeWorkers = 4

func newHoldTable(run func(*pullRequest), st MessageStore, log *slog.Logger) *holdTable {
	return &holdTable{
		run:    run,
		store:  st,
		log:    log,
		queues: make(map[holdKey]*holdList),
		kick:   make(chan struct{}, 1),
		wake:   make(chan *pullRequest, 4096),
		quit:   make(chan struct{}),
	}
}

func (t *holdTable) start() {
	t.wg.Add(1 + holdWakeWorkers)
	go t.timerLoop()
	for range holdWakeWorkers {
		go t.wakeLoop()
	}
}

// stop ends the goroutines; held pulls are dropped (their connections are
// closing with the server).
func (t *holdTable) stop() {
	close(t.quit)
	t.wg.Wait()
}

// held reports how many pulls are parked.
func (t *holdTable) held() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.count
}

// park holds pr, then checks the queue again so a message that arrived
// between the pull's read and the park is not missed. pr belongs to the
// table from the moment it is listed (see pullRequest).
func (t *holdTable) park(pr *pullRequest) {
	// Once parked, pr may be woken, answered and recycled by another
	// goroutine at any moment: read what the re-check needs first.
	topic, queue, offset := pr.h.Topic, pr.h.QueueID, pr.h.QueueOffset
	// topic aliases the request, which an early answer would recycle:
	// keep it alive until the re-check below is done.
	lease := pr.lease
	lease.Hold()
	defer lease.Release()
	k := holdKey{topic, queue}
	t.mu.Lock()
	pr.claimed = false
	t.parks++
	pr.parkID = t.parks
	id := pr.parkID
	l := t.queues[k]
	if l == nil {
		l = &holdList{}
		t.queues[holdKey{strings.Clone(topic), queue}] = l
	}
	l.prs = append(l.prs, pr)
	heap.Push(&t.timers, pr)
	t.count++
	earliest := t.timers[0] == pr
	t.mu.Unlock()
	if earliest {
		select {
		case t.kick <- struct{}{}:
		default:
		}
	}
	if t.store.MaxOffset(topic, queue) > offset {
		// pr may meanwhile have been answered, freed and parked again by
		// another pull: claim it only if it is still this parking.
		if t.claimParked(pr, id) {
			t.dispatch(pr)
		}
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
	k := holdKey{pr.h.Topic, pr.h.QueueID}
	if l := t.queues[k]; l != nil {
		for i, x := range l.prs {
			if x == pr {
				last := len(l.prs) - 1
				l.prs[i] = l.prs[last]
				l.prs[last] = nil
				l.prs = l.prs[:last]
				break
			}
		}
	}
	if pr.index >= 0 && pr.index < len(t.timers) && t.timers[pr.index] == pr {
		heap.Remove(&t.timers, pr.index)
	}
	t.count--
	return true
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

// dispatch hands pr to a wake worker, or runs it here when they are busy.
func (t *holdTable) dispatch(pr *pullRequest) {
	select {
	case t.wake <- pr:
	default:
		t.run(pr)
	}
}

func (t *holdTable) wakeLoop() {
	defer t.wg.Done()
	for {
		select {
		case <-t.quit:
			return
		case pr := <-t.wake:
			t.run(pr)
		}
	}
}

// timerLoop sleeps until the earliest deadline, then re-runs every expired
// pull. It never polls: with nothing held it waits for a kick.
func (t *holdTable) timerLoop() {
	defer t.wg.Done()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		t.mu.Lock()
		now := time.Now()
		var due []*pullRequest
		for len(t.timers) > 0 && !t.timers[0].deadline.After(now) {
			pr := t.timers[0]
			t.claimLocked(pr)
			due = append(due, pr)
		}
		wait := time.Hour
		if len(t.timers) > 0 {
			wait = t.timers[0].deadline.Sub(now)
		}
		t.mu.Unlock()
		for _, pr := range due {
			t.dispatch(pr)
		}
		timer.Reset(wait)
		select {
		case <-t.quit:
			return
		case <-t.kick:
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

// deadlineHeap orders held pulls by deadline.
type deadlineHeap []*pullRequest

func (h deadlineHeap) Len() int           { return len(h) }
func (h deadlineHeap) Less(i, j int) bool { return h[i].deadline.Before(h[j].deadline) }
func (h deadlineHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index = i
	h[j].index = j
}
func (h *deadlineHeap) Push(x any) {
	pr := x.(*pullRequest)
	pr.index = len(*h)
	*h = append(*h, pr)
}
func (h *deadlineHeap) Pop() any {
	old := *h
	n := len(old)
	pr := old[n-1]
	old[n-1] = nil
	pr.index = -1
	*h = old[:n-1]
	return pr
}
