package transport

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/panjf2000/gnet/v2"
)

// maxIOV bounds the slices of one writev call (Linux IOV_MAX is 1024).
const maxIOV = 1024

// pendingWrite is one frame waiting for its connection's event loop.
type pendingWrite struct {
	buf  *outBuf
	body [][]byte    // written after buf, not copied
	done func(error) // optional; runs once buf and body are no longer needed
}

// serverOutlet queues frames written from any goroutine and has the
// connection's event loop write them in one writev per batch: one loop
// task per burst instead of one per frame, and fewer syscalls under load.
type serverOutlet struct {
	gc    gnet.Conn
	conn  *Conn
	clock *atomic.Int64 // the server's coarse clock

	mu        sync.Mutex
	queue     []pendingWrite // guarded by mu
	scheduled bool           // guarded by mu: a flush task is queued on the loop

	// Loop-only scratch.
	spare []pendingWrite
	vec   [][]byte
}

func (o *serverOutlet) write(b *outBuf) error {
	return o.enqueue(pendingWrite{buf: b})
}

func (o *serverOutlet) writev(h *outBuf, bufs [][]byte, done func(error)) error {
	return o.enqueue(pendingWrite{buf: h, body: bufs, done: done})
}

func (o *serverOutlet) close() error { return o.gc.Close() }

func (o *serverOutlet) enqueue(w pendingWrite) error {
	o.mu.Lock()
	o.queue = append(o.queue, w)
	kick := !o.scheduled
	o.scheduled = true
	o.mu.Unlock()
	if o.conn.closed.Load() {
		// Closed while we queued: OnClose may already have failed the
		// queue, so fail what is left here rather than strand it.
		o.abort()
		return ErrConnClosed
	}
	if !kick {
		return nil
	}
	if err := o.gc.EventLoop().Execute(context.Background(), o); err != nil {
		o.mu.Lock()
		q := o.queue
		o.queue = nil
		o.scheduled = false
		o.mu.Unlock()
		finish(q, err)
		return fmt.Errorf("transport: schedule write: %w", err)
	}
	return nil
}

// Run flushes the queue; it runs on the connection's event loop, where
// OnClose also runs, so the closed check cannot race with the fd going away.
func (o *serverOutlet) Run(context.Context) error {
	o.mu.Lock()
	q := o.queue
	o.queue = o.spare[:0]
	o.scheduled = false
	o.mu.Unlock()

	var err error
	if o.conn.closed.Load() {
		err = ErrConnClosed
	} else {
		vec := o.vec[:0]
		for i := range q {
			if len(vec)+1+len(q[i].body) > maxIOV && len(vec) > 0 {
				if _, err = o.gc.Writev(vec); err != nil {
					break
				}
				clear(vec)
				vec = vec[:0]
			}
			vec = append(vec, q[i].buf.b)
			vec = append(vec, q[i].body...)
		}
		if err == nil && len(vec) > 0 {
			// gnet copies whatever the socket does not take now into its
			// outbound buffer, so every buffer is free after this call.
			_, err = o.gc.Writev(vec)
		}
		clear(vec)
		o.vec = vec[:0]
		o.conn.lastActive.Store(o.clock.Load()) // writes count as activity, as in Java's all-idle check
	}
	finish(q, err)
	o.spare = q[:0]
	return nil // an error here would shut the event loop down
}

// abort fails every queued frame with ErrConnClosed. OnClose calls it on
// the loop once the connection is marked closed, so no frame waits for a
// flush that will never run (the engine may stop before it does).
func (o *serverOutlet) abort() {
	o.mu.Lock()
	q := o.queue
	o.queue = nil
	o.scheduled = false
	o.mu.Unlock()
	finish(q, ErrConnClosed)
}

// finish releases written (or failed) frames and clears q.
func finish(q []pendingWrite, err error) {
	for i := range q {
		q[i].buf.put()
		if q[i].done != nil {
			q[i].done(err)
		}
	}
	clear(q)
}
