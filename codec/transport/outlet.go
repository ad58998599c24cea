package transport

import (
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// maxIOV bounds the slices of one writev call (Linux IOV_MAX is 1024).
const maxIOV = 1024

// pendingWrite is one frame on its way to the socket.
type pendingWrite struct {
	buf  *outBuf
	body [][]byte    // written after buf, not copied
	done func(error) // optional; runs once buf and body are no longer needed
	skip int         // leading bytes of the frame already on the socket
	at   int64       // Unix nanoseconds it was handed over; 0 without ServerConfig.WriteObserver
}

// serverOutlet writes a server connection's frames from any goroutine.
//
// Direct mode (the usual case): frames go to the socket with writev on a
// reused iovec array, bypassing gnet: no event-loop task, no copy, no
// allocation. A goroutine other than the loop appends its frame to pending
// and wakes the server's writer goroutine for this connection, which takes
// everything pending in one writev (a burst of replies costs one syscall,
// and pool workers never wait for the socket). The event loop writes its
// own inline replies itself when nobody else is writing, one round only,
// and hands anything left to the writer. When the socket takes only part
// (the peer reads slowly), direct mode ends: the rest stays at the head of
// pending, uncopied, the server's watcher is armed for writability, and
// writers only append. The watcher's event turns direct mode back on and
// hands the outlet to its writer. gnet's own outbound buffer is never used.
//
// Every byte in pending counts in unsent (and in the server's total), so
// the event loop can stop reading the requests of a connection whose
// replies pile up (see Server and doc.go); past ServerConfig.
// MaxUnsentPerConn the connection is closed.
//
// The fd stays valid while writing is set or mu is held with dead unset:
// gnet calls OnClose (abort) on the loop before it closes the fd, and
// abort waits for the active writer, which never starts a writev once
// dead is set, and disarms the watcher under mu. So no writer and no
// watcher can touch a descriptor number the kernel has handed to a new
// connection. The loop waits only for mu and, in OnClose, for one
// non-blocking writev.
type serverOutlet struct {
	gc   gnet.Conn
	fd   int
	conn *Conn
	srv  *Server // clock, limits, server-wide totals, watcher
	wr   *writer // the writer goroutine serving this connection

	// unsent is the bytes of pending not yet on the socket. Added when a
	// frame is accepted, subtracted as bytes leave or frames fail.
	unsent atomic.Int64
	// written is the bytes handed to the socket so far.
	written atomic.Int64

	// Write-stall state, owned by the server's idle loop (stalled):
	// settled is a value of written known to be all acknowledged by the
	// peer; acked the most the peer was seen to have taken; stallSince
	// when that last grew (unix nanos; 0: not watching).
	settled, acked, stallSince int64

	mu      sync.Mutex
	idle    sync.Cond      // L = &mu; broadcast when the active writer stops
	direct  bool           // guarded by mu: writers may write the socket; false while it is full
	dead    bool           // guarded by mu: OnClose ran; never touch the fd again
	writing bool           // guarded by mu: a writer owns the socket (and iov, spareP)
	marked  bool           // guarded by mu: handed to wr, which has not started on it
	watched bool           // guarded by mu: the fd is registered with the watcher
	over    bool           // guarded by mu: closed for MaxUnsentPerConn; logged once
	pending []pendingWrite // guarded by mu: frames not yet (wholly) on the socket, in order

	// Owned by the active writer.
	iov    []unix.Iovec
	spareP []pendingWrite
}

func newServerOutlet(gc gnet.Conn, srv *Server, wr *writer) *serverOutlet {
	o := &serverOutlet{gc: gc, fd: gc.Fd(), srv: srv, wr: wr, direct: true, iov: make([]unix.Iovec, 0, 64)}
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

// send writes w directly when it can, and queues it otherwise. onLoop is
// true on the connection's own event loop, which then writes one round
// itself instead of waking the writer. A write error after the frame was
// accepted reaches w.done, not the caller.
func (o *serverOutlet) send(w pendingWrite, onLoop bool) error {
	size := int64(w.size())
	if o.srv.cfg.WriteObserver != nil {
		w.at = time.Now().UnixNano()
	}
	o.mu.Lock()
	if o.dead || o.over {
		o.mu.Unlock()
		w.finish(ErrConnClosed)
		return ErrConnClosed
	}
	if !o.coalesceLocked(&w) {
		o.pending = append(o.pending, w)
	}
	o.addUnsent(size)
	if limit := o.srv.cfg.MaxUnsentPerConn; o.unsent.Load() > limit && !o.over {
		o.over = true
		o.resetOnCloseLocked()
		o.mu.Unlock()
		o.srv.log.Warn("transport: closing connection: its unsent replies exceed the limit (the peer does not read)",
			"remote", o.conn.remote, "unsent", o.unsent.Load(), "maxUnsentBytesPerConnection", limit)
		_ = o.gc.Close()
		return nil // w is failed by abort with everything else pending
	}
	if !o.direct || o.writing || o.marked {
		o.mu.Unlock() // the active or the woken writer takes it, or the watcher will
		return nil
	}
	if !onLoop {
		o.marked = true
		o.mu.Unlock()
		o.wr.add(o)
		return nil
	}
	o.writing = true
	handoff := o.drainLocked(true)
	o.writing = false
	o.idle.Broadcast()
	o.mu.Unlock()
	if handoff {
		o.wr.add(o)
	}
	o.drained()
	return nil
}

// coalesceLocked copies a small plain frame that must wait (the socket is
// full, or a writer is busy) into the room left in the last pending
// buffer, and releases its own: a peer that does not read then costs the
// bytes of its replies, not a 4 KiB pooled buffer for each 200-byte send
// reply (14× the unsent bytes the pause counts). It reports whether w was
// absorbed. Views (body) and frames with a done callback are never copied.
// The caller holds mu; no writer is inside a pending buffer (the active
// writer took its batch out of pending).
func (o *serverOutlet) coalesceLocked(w *pendingWrite) bool {
	n := len(o.pending)
	if n == 0 || w.body != nil || w.done != nil || (o.direct && !o.writing && !o.marked) {
		return false
	}
	last := &o.pending[n-1]
	if last.body != nil || last.done != nil || cap(last.buf.b)-len(last.buf.b) < len(w.buf.b) {
		return false
	}
	last.buf.b = append(last.buf.b, w.buf.b...)
	w.buf.put()
	return true
}

// addUnsent moves unsent and the server's total by n.
func (o *serverOutlet) addUnsent(n int64) {
	o.unsent.Add(n)
	o.srv.unsent.Add(n)
}

// drained wakes the connection's event loop if it stopped reading requests
// and its unsent bytes are low again. Called after bytes left or failed.
func (o *serverOutlet) drained() {
	if o.conn.paused.Load() && o.unsent.Load() <= o.srv.cfg.WriteLowWater {
		o.conn.wake()
	}
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
	o.drainLocked(false)
	o.writing = false
	o.idle.Broadcast()
	o.mu.Unlock()
	o.drained()
}

// writable is the watcher's event: the socket has room again.
func (o *serverOutlet) writable() {
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		return
	}
	o.direct = true
	wake := len(o.pending) > 0 && !o.writing && !o.marked
	o.marked = o.marked || wake
	o.mu.Unlock()
	if wake {
		o.wr.add(o)
	}
}

// drainLocked writes pending frames until none are left, the connection
// dies or the socket is full. The caller holds mu and has set writing; mu
// is released around each writev and the done callbacks. An event loop
// writes one round only and leaves the rest to the writer goroutine
// (handoff: the caller must add o to it), so a stream of other writers
// cannot keep the loop from its other connections.
func (o *serverOutlet) drainLocked(onLoop bool) (handoff bool) {
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
		if n > 0 {
			o.written.Add(int64(n))
			o.conn.lastActive.Store(o.srv.clock.Load()) // writes count as activity, as in Java's all-idle check
		}
		o.addUnsent(-int64(n))
		i := 0
		var now int64
		if obs := o.srv.cfg.WriteObserver; obs != nil && n > 0 {
			now = time.Now().UnixNano()
		}
		for ; i < len(batch); i++ { // release what the socket took whole
			size := batch[i].size() - batch[i].skip
			if n < size {
				break
			}
			n -= size
			if now != 0 && batch[i].at != 0 {
				o.srv.cfg.WriteObserver(batch[i].at, now)
			}
			batch[i].finish(nil)
		}
		rest := batch[i:]
		if len(rest) > 0 && err != nil && err != unix.EAGAIN {
			o.failAll(rest, n, err)
			rest = nil
			_ = o.gc.Close() // the socket is broken; the loop reports the close
		}

		o.mu.Lock()
		if len(rest) > 0 {
			// The socket buffer is full: the rest goes back to the head of
			// pending, and writers only append until the watcher reports
			// room.
			rest[0].skip += n
			o.direct = false
			rest = append(rest, o.pending...)
			clear(o.pending)
			o.spareP, o.pending = o.pending[:0], rest
			if err := o.srv.watch.arm(o); err != nil {
				o.srv.log.Error("transport: closing connection", "remote", o.conn.remote, "err", err)
				_ = o.gc.Close()
			}
			batch = batch[:i] // the frames released above; rest now lives in pending
		}
		clear(batch)
		if len(rest) == 0 {
			o.spareP = batch[:0]
		}
	}
	return handoff
}

// failAll fails frames that will never be written; skip is the bytes of
// the first already on the socket.
func (o *serverOutlet) failAll(q []pendingWrite, skip int, err error) {
	var n int64
	for i := range q {
		n += int64(q[i].size() - q[i].skip)
	}
	o.addUnsent(-(n - int64(skip)))
	finish(q, err)
}

// writeBatch writes the frames of batch with as few writev calls as the
// iovec limit allows, stopping at the first short write. It returns the
// bytes written. Only the active writer calls it.
func (o *serverOutlet) writeBatch(batch []pendingWrite) (n int, err error) {
	iov := o.iov[:0]
	for i := range batch {
		iov = batch[i].appendUnsent(iov)
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

// siocOUTQ is Linux's SIOCOUTQ (the same number as TIOCOUTQ): the bytes
// of a TCP socket's send queue the peer has not acknowledged.
const siocOUTQ = unix.TIOCOUTQ

// owes reports whether o may have output its peer has not taken: bytes
// pending here, or written since the last time the kernel's send queue
// was seen empty. Cheap (two loads); for the idle loop.
func (o *serverOutlet) owes() bool {
	return o.unsent.Load() > 0 || o.written.Load() != o.settled
}

// stalled reports whether o's peer has taken none of its output for
// timeout while some is pending, here or in the kernel's send queue
// (outq): a peer that stops reading is found whatever its socket buffers
// hold, not only once the transport's own buffer passes a mark. Progress
// is bytes acknowledged (written minus the send queue). Only the idle
// loop calls it.
func (o *serverOutlet) stalled(now, timeout int64) (stalled bool, outq int) {
	w := o.written.Load()
	o.mu.Lock()
	if o.dead {
		o.mu.Unlock()
		return false, 0
	}
	outq, err := unix.IoctlGetInt(o.fd, siocOUTQ) // the fd is valid: mu held, not dead
	o.mu.Unlock()
	if err != nil {
		return false, 0
	}
	if outq == 0 && o.unsent.Load() == 0 {
		o.settled, o.stallSince = w, 0
		return false, 0
	}
	if acked := w - int64(outq); acked > o.acked || o.stallSince == 0 {
		o.acked = max(o.acked, acked)
		o.stallSince = now
		return false, outq
	}
	if now-o.stallSince < timeout {
		return false, outq
	}
	o.mu.Lock()
	o.resetOnCloseLocked()
	o.mu.Unlock()
	return true, outq
}

// resetOnCloseLocked makes the coming close a reset (SO_LINGER 0): a FIN
// would queue behind the bytes the peer does not take, so the peer would
// never learn of the close and the kernel would keep the orphaned socket
// and its send buffer until its retries run out. The caller holds mu.
func (o *serverOutlet) resetOnCloseLocked() {
	if !o.dead {
		_ = unix.SetsockoptLinger(o.fd, unix.SOL_SOCKET, unix.SO_LINGER, &unix.Linger{Onoff: 1, Linger: 0})
	}
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

// appendUnsent appends the parts of w not yet on the socket.
func (w *pendingWrite) appendUnsent(iov []unix.Iovec) []unix.Iovec {
	skip := w.skip
	if skip < len(w.buf.b) {
		iov = appendIovec(iov, w.buf.b[skip:])
		skip = 0
	} else {
		skip -= len(w.buf.b)
	}
	for _, p := range w.body {
		if skip >= len(p) {
			skip -= len(p)
			continue
		}
		iov = appendIovec(iov, p[skip:])
		skip = 0
	}
	return iov
}

// abort marks the connection dead, waits for the active writer, disarms
// the watcher and fails every frame still pending with ErrConnClosed.
// OnClose calls it on the loop before gnet closes the fd, so no writer
// touches the socket afterwards and no frame waits for a write that will
// never happen.
func (o *serverOutlet) abort() {
	o.mu.Lock()
	o.dead = true
	o.direct = false
	for o.writing {
		o.idle.Wait() // one non-blocking writev at most
	}
	o.srv.watch.disarm(o)
	p := o.pending
	o.pending = nil
	o.mu.Unlock()
	o.failAll(p, 0, ErrConnClosed)
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
