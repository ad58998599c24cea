package transport

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// sweepInterval is how often a pool with a wait limit looks at the head of
// its queue (Java's BrokerFastFailure runs every 10 ms too).
const sweepInterval = 10 * time.Millisecond

// task is one request queued on a pool; stored by value in the ring, so
// queueing does not allocate.
type task struct {
	c   *Conn
	req *codec.Frame
	h   Handler
	lh  LeasedHandler // instead of h for a leased route
	l   *Lease        // req's lease, or nil; the task owns one reference
	r   *Router       // whose middleware and observer the request passes
	at  int64         // unix nanos when queued; 0 when the pool had no wait limit
}

// Pool is a fixed set of worker goroutines behind a bounded FIFO queue.
// Whoever creates a pool owns it and closes it after the servers and
// clients routing to it are closed; servers never close pools.
type Pool struct {
	name     string
	queueLen int
	maxWait  atomic.Int64 // nanoseconds; 0 = no limit
	lastWarn atomic.Int64 // unix nanos of the last overload log line

	mu   sync.Mutex
	cond sync.Cond // L = &mu; signalled when a task is queued or the pool closes
	// ring holds queued tasks: n of them from head. Its size is queueLen +
	// workers: a request is accepted while fewer than queueLen wait beyond
	// the idle workers about to take them (a buffered channel's rule).
	ring     []task // guarded by mu
	head, n  int    // guarded by mu
	idle     int    // guarded by mu: workers waiting for a task
	closed   bool   // guarded by mu
	sweeping bool   // guarded by mu: the sweeper goroutine runs

	stop chan struct{} // closed by Close
	wg   sync.WaitGroup
	once sync.Once
}

// NewPool starts workers goroutines serving a queue of queueLen requests.
// A request arriving when the queue is full is answered SYSTEM_BUSY.
func NewPool(name string, workers, queueLen int) *Pool {
	workers = max(workers, 1)
	queueLen = max(queueLen, 0)
	p := &Pool{name: name, queueLen: queueLen, ring: make([]task, queueLen+workers), stop: make(chan struct{})}
	p.cond.L = &p.mu
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

// SetMaxQueueWait makes the pool answer SYSTEM_BUSY, without running the
// handler, for a request that has waited in the queue d or longer; 0 turns
// it off. Like the Java broker's fast failure (waitTimeMillsInSendQueue and
// friends): the head of the queue is checked every 10 ms, so requests
// expire even while every worker is stuck. Safe to call at any time.
func (p *Pool) SetMaxQueueWait(d time.Duration) {
	p.maxWait.Store(int64(d))
	if d <= 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.sweeping || p.closed {
		return
	}
	p.sweeping = true
	p.wg.Add(1)
	go p.sweep()
}

// Name is the name the pool was created with.
func (p *Pool) Name() string { return p.name }

// Pending is the number of queued requests not yet taken by a worker.
func (p *Pool) Pending() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// Cap is the queue's capacity (the queueLen it was created with).
func (p *Pool) Cap() int { return p.queueLen }

// Close stops the workers after their current request and waits for them.
// Requests still queued are dropped without a reply; their connections
// are expected to be closing too.
func (p *Pool) Close() {
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		clear(p.ring)
		p.n = 0
		p.mu.Unlock()
		p.cond.Broadcast()
		close(p.stop)
		p.wg.Wait()
	})
}

// submit queues t, or reports false when the queue is full or the pool closed.
func (p *Pool) submit(t task) bool {
	if p.maxWait.Load() > 0 {
		t.at = time.Now().UnixNano()
	}
	p.mu.Lock()
	if p.closed || p.n >= p.queueLen+p.idle {
		p.mu.Unlock()
		return false
	}
	p.ring[(p.head+p.n)%len(p.ring)] = t
	p.n++
	wake := p.idle > 0
	p.mu.Unlock()
	if wake {
		p.cond.Signal()
	}
	return true
}

// popLocked removes the head task. p.mu is held and p.n > 0.
func (p *Pool) popLocked() task {
	t := p.ring[p.head]
	p.ring[p.head] = task{} // let the GC have the request
	p.head = (p.head + 1) % len(p.ring)
	p.n--
	return t
}

func (p *Pool) work() {
	defer p.wg.Done()
	p.mu.Lock()
	for {
		for p.n == 0 && !p.closed {
			p.idle++
			p.cond.Wait()
			p.idle--
		}
		if p.closed {
			p.mu.Unlock()
			return
		}
		t := p.popLocked()
		left := p.n
		p.mu.Unlock()

		// A request of a connection that has closed still runs, as in
		// Java: clients send requests whose effect is all there is without
		// the oneway flag (the Go client's InvokeOneWay — offset commits,
		// oneway sends — sets none) and close at once. Its reply is
		// dropped. What a dead connection can leave queued is bounded by
		// MaxInflightPerConn.
		var resp *codec.Frame
		if limit := p.maxWait.Load(); limit > 0 && t.at > 0 && time.Now().UnixNano()-t.at >= limit {
			resp = p.expired(t, left)
		} else {
			resp = t.c.run(&t)
		}
		reply(t.c, resp)
		t.l.Release() // the response is encoded: req is no longer needed
		t.c.taskDone()
		p.mu.Lock()
	}
}

// sweep answers queued requests that outlived the wait limit, oldest first.
func (p *Pool) sweep() {
	defer p.wg.Done()
	tick := time.NewTicker(sweepInterval)
	defer tick.Stop()
	var expired []task
	for {
		select {
		case <-p.stop:
			return
		case now := <-tick.C:
			limit := p.maxWait.Load()
			if limit <= 0 {
				continue
			}
			cut := now.UnixNano() - limit
			p.mu.Lock()
			for p.n > 0 && p.ring[p.head].at > 0 && p.ring[p.head].at <= cut {
				expired = append(expired, p.popLocked())
			}
			left := p.n
			p.mu.Unlock()
			for i := range expired {
				reply(expired[i].c, p.expired(expired[i], left))
				expired[i].l.Release()
				expired[i].c.taskDone()
			}
			clear(expired)
			expired = expired[:0]
		}
	}
}

// expired refuses a request that waited too long in the queue; left is
// the queue's size after it was removed.
func (p *Pool) expired(t task, left int) *codec.Frame {
	waited := (time.Now().UnixNano() - t.at) / int64(time.Millisecond)
	if p.shouldWarn() {
		t.c.log.Warn("transport: request expired in queue, answering SYSTEM_BUSY", "pool", p.name, "remote", t.c.remote, "code", t.req.Code, "waitedMs", waited)
	}
	// compat: the remark of Java's BrokerFastFailure.
	return t.c.refuse(t.r, t.req, codec.RespSystemBusy, remarks.TimeoutCleanQueue(waited, left))
}

// shouldWarn rate-limits overload logging to one line per second per pool:
// under overload every request would otherwise log.
func (p *Pool) shouldWarn() bool {
	now := time.Now().UnixNano()
	last := p.lastWarn.Load()
	return now-last >= int64(time.Second) && p.lastWarn.CompareAndSwap(last, now)
}

// reply writes a worker's response, if there is one.
func reply(c *Conn, resp *codec.Frame) {
	if resp == nil {
		return
	}
	if err := c.Write(resp); err != nil {
		c.log.Debug("transport: write response", "remote", c.remote, "code", resp.Code, "err", err)
	}
}
