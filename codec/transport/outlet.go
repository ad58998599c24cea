package transport

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// maxIOV bounds the slices of one writev call (Linux IOV_MAX is 1024).
const maxIOV = 1024

// pendingWrite is one frame waiting for its connection's event loop.
type pendingWrite struct {
	buf  *outBuf
	body [][]byte    // written after buf, not copied
	done func(error) // optional; runs once buf and body are no longer needed
	skip int         // leading bytes of the frame already on the socket
}

// serverOutlet writes a server connection's frames from any goroutine.
//
// Direct mode (the usual case): while gnet holds no unsent bytes for the
// connection, frames go to the socket with writev on a reused iovec array,
// bypassing gnet: no event-loop task, no copy, no allocation. A goroutine
// other than the loop appends its frame to pending and wakes the server's
// writer goroutine for this connection, which takes everything pending in
// one writev (a burst of replies costs one syscall, and pool workers never
// wait for the socket). The event loop writes its own inline replies
// itself when nobody else is writing, one round only, and hands anything
// left to the writer. When the socket takes only part (the peer reads
// slowly), the rest moves to queue, direct mode ends, and the event loop
// hands queued frames to gnet, which buffers them and writes on
// writability (one loop task per burst: only then does a write allocate).
// A flush that leaves gnet with nothing to send turns direct mode back on.
//
// The fd stays valid while writing is set: gnet calls OnClose (abort) on
// the loop before it closes the fd, and abort waits for the active writer,
// which never starts a writev once dead is set. So no writer can write into
// a descriptor number the kernel has handed to a new connection. The loop
// waits only for mu and, in OnClose, for one non-blocking writev.
type serverOutlet struct {
	gc    gnet.Conn
	fd    int
	conn  *Conn
	clock *atomic.Int64 // the server's coarse clock
	wr    *writer       // the writer goroutine serving this connection

	mu        sync.Mutex
	idle      sync.Cond      // L = &mu; broadcast when the active writer stops
	direct    bool           // guarded by mu: writers may write the socket themselves
	dead      bool           // guarded by mu: OnClose ran; never touch the fd again
	writing   bool           // guarded by mu: a writer owns the socket (and iov, spareP)
	marked    bool           // guarded by mu: handed to wr, which has not started on it
	pending   []pendingWrite // guarded by mu: frames for the active writer
	queue     []pendingWrite // guarded by mu: frames for the event loop
	scheduled bool           // guarded by mu: a flush task is queued on the loop

	// Owned by the active writer.
	iov    []unix.Iovec
	spareP []pendingWrite

	// Loop-only scratch.
	spare []pendingWrite
	vec   [][]byte
}

func newServerOutlet(gc gnet.Conn, clock *atomic.Int64, wr *writer) *serverOutlet {
	o := &serverOutlet{gc: gc, fd: gc.Fd(), clock: clock, wr: wr, direct: true, iov: make([]unix.Iovec, 0, 64)}
	o.idle.L = &o.mu
	return o
}

func (o *serverOutlet) write(b *outBuf) error {
	return o.send(pendingWrite{buf: b}, false)
}

func (o *serverOutlet) writev(h *outBuf, bufs [][]byte, done func(error)) error {
	return o.send(pendingWrite{buf: h, body: bufs, done: done}, false)
}

func (o *serverOutlet) close() error { return o.gc.Close() }

// send writes w directly when it can, and queues it for the event loop
// otherwise. onLoop is true on the connection's own event loop, which then
// flushes the queue at once instead of scheduling itself a task. A write
// error after the frame was accepted reaches w.done, not the caller.
func (o *serverOutlet) send(w pendingWrite, onLoop bool) error {
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		w.finish(ErrConnClosed)
		return ErrConnClosed
	}
	if o.direct {
		o.pending = append(o.pending, w)
		if o.writing || o.marked {
			o.mu.Unlock() // the active or the woken writer takes it
			return nil
		}
		if !onLoop {
			o.marked = true
			o.mu.Unlock()
			o.wr.add(o)
			return nil
		}
		o.writing = true
		kick, handoff := o.drainLocked(true)
		o.writing = false
		o.idle.Broadcast()
		o.mu.Unlock()
		if handoff {
			o.wr.add(o)
		}
		if kick {
			o.schedule()
		}
		return nil
	}
	o.queue = append(o.queue, w)
	kick := !o.scheduled && !onLoop
	o.scheduled = o.scheduled || kick
	o.mu.Unlock()
	if onLoop {
		o.flush()
		return nil
	}
	if kick {
		return o.schedule()
	}
	return nil
}

// schedule queues a flush on the connection's event loop.
func (o *serverOutlet) schedule() error {
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

// writeOut is the writer goroutine's turn on o: it writes everything
// pending (unless the event loop is writing right now; the loop then hands
// back what it leaves).
func (o *serverOutlet) writeOut() {
	o.mu.Lock()
	o.marked = false
	if o.writing {
		o.mu.Unlock()
		return
	}
	o.writing = true
	kick, _ := o.drainLocked(false)
	o.writing = false
	o.idle.Broadcast()
	o.mu.Unlock()
	if kick {
		o.schedule()
	}
}

// drainLocked writes pending frames until none are left, the connection
// dies or the socket is full; kick reports that a flush must be scheduled.
// The caller holds mu and has set writing; mu is released around each
// writev and the done callbacks. An event loop writes one round only and
// leaves the rest to the writer goroutine (handoff: the caller must add o
// to it), so a stream of other writers cannot keep the loop from its other
// connections.
func (o *serverOutlet) drainLocked(onLoop bool) (kick, handoff bool) {
	for round := 0; len(o.pending) > 0 && !o.dead && o.direct; round++ {
		if onLoop && round > 0 {
			if !o.marked {
				o.marked = true
				handoff = true
			}
			break
		}
		batch := o.pending
		o.pending = o.spareP[:0]
		o.mu.Unlock()

		n, err := o.writeBatch(batch)
		o.conn.lastActive.Store(o.clock.Load()) // writes count as activity, as in Java's all-idle check
		i := 0
		for ; i < len(batch); i++ { // release what the socket took whole
			size := batch[i].size()
			if n < size {
				break
			}
			n -= size
			batch[i].finish(nil)
		}
		rest := batch[i:]
		if len(rest) > 0 && err != nil && err != unix.EAGAIN {
			finish(rest, err)
			rest = nil
			_ = o.gc.Close() // the socket is broken; the loop reports the close
		}

		o.mu.Lock()
		if len(rest) > 0 {
			// The socket buffer is full: the loop writes the rest once gnet
			// has it, and everything after it queues behind.
			rest[0].skip = n
			o.direct = false
			o.queue = append(o.queue, rest...)
			o.queue = append(o.queue, o.pending...)
			clear(o.pending)
			o.pending = o.pending[:0]
			kick = !o.scheduled
			o.scheduled = true
		}
		clear(batch)
		o.spareP = batch[:0]
	}
	return kick, handoff
}

// writeBatch writes the frames of batch with as few writev calls as the
// iovec limit allows, stopping at the first short write. It returns the
// bytes written. Only the active writer calls it.
func (o *serverOutlet) writeBatch(batch []pendingWrite) (n int, err error) {
	iov := o.iov[:0]
	for i := range batch {
		iov = appendIovec(iov, batch[i].buf.b)
		for _, p := range batch[i].body {
			iov = appendIovec(iov, p)
		}
	}
	o.iov = iov
	for rest := iov; len(rest) > 0; {
		chunk := rest[:min(len(rest), maxIOV)]
		want := 0
		for i := range chunk {
			want += int(chunk[i].Len)
		}
		var m int
		m, err = rawWritev(o.fd, chunk)
		n += m
		if err != nil || m < want {
			break
		}
		rest = rest[len(chunk):]
	}
	clear(o.iov) // do not pin the callers' buffers
	return n, err
}

// size is the frame's length on the wire.
func (w *pendingWrite) size() int {
	n := len(w.buf.b)
	for _, p := range w.body {
		n += len(p)
	}
	return n
}

func appendIovec(iov []unix.Iovec, p []byte) []unix.Iovec {
	if len(p) == 0 {
		return iov
	}
	v := unix.Iovec{Base: &p[0]}
	v.SetLen(len(p))
	return append(iov, v)
}

// rawWritev is writev(2) without x/sys/unix.Writev's per-call iovec
// allocation. The socket is non-blocking: a full buffer is EAGAIN.
func rawWritev(fd int, iov []unix.Iovec) (int, error) {
	for {
		n, _, e := unix.Syscall(unix.SYS_WRITEV, uintptr(fd), uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		switch e {
		case 0:
			return int(n), nil
		case unix.EINTR:
			continue
		default:
			return 0, e
		}
	}
}

// Run flushes the queue; it runs on the connection's event loop.
func (o *serverOutlet) Run(context.Context) error {
	o.flush()
	return nil // an error here would shut the event loop down
}

// flush hands queued frames to gnet on the connection's event loop (where
// OnClose also runs, so the dead check cannot race with the fd going away)
// and turns direct mode back on once gnet has nothing left to send. While
// direct mode is off no writer touches the socket, so the loop owns it.
func (o *serverOutlet) flush() {
	o.mu.Lock()
	q := o.queue
	o.queue = o.spare[:0]
	o.scheduled = false
	dead := o.dead
	o.mu.Unlock()

	var err error
	if dead {
		err = ErrConnClosed
	} else if len(q) > 0 {
		vec := o.vec[:0]
		for i := range q {
			if len(vec)+1+len(q[i].body) > maxIOV && len(vec) > 0 {
				if _, err = o.gc.Writev(vec); err != nil {
					break
				}
				clear(vec)
				vec = vec[:0]
			}
			vec = q[i].appendUnsent(vec)
		}
		if err == nil && len(vec) > 0 {
			// gnet copies whatever the socket does not take now into its
			// outbound buffer, so every buffer is free after this call.
			_, err = o.gc.Writev(vec)
		}
		clear(vec)
		o.vec = vec[:0]
		o.conn.lastActive.Store(o.clock.Load())
	}
	finish(q, err)
	o.spare = q[:0]

	o.mu.Lock()
	if !o.dead && len(o.queue) == 0 && o.gc.OutboundBuffered() == 0 {
		o.direct = true
	}
	o.mu.Unlock()
}

// appendUnsent appends the parts of w not yet on the socket.
func (w *pendingWrite) appendUnsent(vec [][]byte) [][]byte {
	skip := w.skip
	if skip < len(w.buf.b) {
		vec = append(vec, w.buf.b[skip:])
		skip = 0
	} else {
		skip -= len(w.buf.b)
	}
	for _, p := range w.body {
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		vec = append(vec, p[skip:])
		skip = 0
	}
	return vec
}

// abort marks the connection dead, waits for the active writer and fails
// every frame still pending or queued with ErrConnClosed. OnClose calls it
// on the loop before gnet closes the fd, so no writer touches the socket
// afterwards and no frame waits for a flush that will never run.
func (o *serverOutlet) abort() {
	o.mu.Lock()
	o.dead = true
	o.direct = false
	for o.writing {
		o.idle.Wait() // one non-blocking writev at most
	}
	q, p := o.queue, o.pending
	o.queue, o.pending = nil, nil
	o.scheduled = false
	o.mu.Unlock()
	finish(q, ErrConnClosed)
	finish(p, ErrConnClosed)
}

// finish releases a written (or failed) frame.
func (w *pendingWrite) finish(err error) {
	w.buf.put()
	if w.done != nil {
		w.done(err)
	}
}

// finish releases written (or failed) frames and clears q.
func finish(q []pendingWrite, err error) {
	for i := range q {
		q[i].finish(err)
	}
	clear(q)
}
