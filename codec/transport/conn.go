package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// ErrConnClosed is returned by writes and invokes on a closed connection,
// and by invokes pending when it closed.
var ErrConnClosed = errors.New("transport: connection closed")

// outlet is how a Conn's bytes reach its socket: the gnet connection on the
// server side, a net.Conn on the client side.
type outlet interface {
	// write sends b and takes ownership of it (it is released when written).
	write(b *outBuf) error
	// writev sends hdr then bufs; done runs once the bytes are written or the write failed.
	writev(hdr *outBuf, bufs [][]byte, done func(error)) error
	close() error
	// abort fails writes still queued; called once the connection is closed.
	abort()
}

// Conn is one TCP connection as handlers see it, on either side: a client
// connection accepted by a Server, or a connection a Client dialed. It is
// safe for concurrent use.
type Conn struct {
	id     uint64
	remote string
	local  string
	out    outlet
	log    *slog.Logger
	rt     *Router            // the router the connection's requests pass (Conn.Reply's observer)
	before func(*codec.Frame) // a Client's BeforeRequest hook; nil on a server

	opaque     atomic.Int32 // last opaque of a request we sent
	closed     atomic.Bool
	lastActive atomic.Int64 // coarse unix nanos of the last traffic; servers only

	mu      sync.Mutex
	pending map[int32]*call // guarded by mu; nil once closed
	value   any             // guarded by mu

	// inflight counts requests handed to pools whose handlers have not
	// returned yet (queued or running), and those a handler took over
	// with BeginTask until their EndTask.
	inflight atomic.Int32

	// Read gating of a server connection (see Server): paused is set by
	// the event loop when it stops decoding the connection's requests;
	// whoever lowers the reason (writer, pool worker, off-loop decoder)
	// calls wake, which asks the loop to look again. woken dedups those
	// requests until the loop has run.
	paused   atomic.Bool
	woken    atomic.Bool
	decoding atomic.Bool // a big header is being decoded off the loop
	bigWait  atomic.Bool // a complete big-header frame waits for the server's budget
	evicted  atomic.Bool // closed to keep the server's unread bytes in budget
	// evictHeld is held when evicted was set, until OnClose subtracts it
	// from the server's evicting bytes.
	evictHeld atomic.Int64
	// held is the unconsumed inbound bytes gnet buffers for the connection
	// (an incomplete frame, or requests not decoded while paused), as the
	// loop last saw it; since is when the frame in progress began (coarse
	// unix nanos; the pause began, while paused; 0 when nothing is held)
	// and sinceSeq the same moment as a server-wide sequence number, so
	// the oldest holder is known exactly.
	held        atomic.Int64
	since       atomic.Int64
	sinceSeq    atomic.Uint64
	wakeFn      func() // asks the connection's loop to run OnTraffic; nil on a Client
	maxInflight int32  // the server's MaxInflightPerConn

	// Event-loop state of a server connection, touched only by its loop.
	gateFD     int     // epoll fd of gnet's loop, for read gating (readgate.go); -1: none
	readOff    bool    // out of the loop's read interest while paused
	need       int     // bytes the next frame needs before it is worth parsing
	hdrChecked bool    // its header length passed MaxHeaderLength
	needHL     int     // and that header length, once checked
	part       partial // what arrived of it, when it is big and incomplete
}

// taskDone notes that a pool handler of this connection returned, and
// wakes a paused loop once few enough are left.
func (c *Conn) taskDone() {
	if n := c.inflight.Add(-1); c.paused.Load() && n <= c.maxInflight/2 {
		c.wake()
	}
}

// BeginTask counts a request whose handler hands it on to be finished
// later (a queue of its own, a store completion) like a request on a
// pool: it counts towards ServerConfig.MaxInflightPerConn, so a peer that
// pipelines such requests without reading the replies stops being read
// at that many instead of filling the shared queue, and its neighbours do
// not wait behind it. Call EndTask exactly once when its reply is written
// or dropped.
func (c *Conn) BeginTask() { c.inflight.Add(1) }

// EndTask ends what BeginTask began.
func (c *Conn) EndTask() { c.taskDone() }

// wake asks a paused server connection's event loop to look at it again.
func (c *Conn) wake() {
	if c.wakeFn != nil && !c.closed.Load() && c.woken.CompareAndSwap(false, true) {
		c.wakeFn()
	}
}

func newConn(id uint64, remote, local string, out outlet, log *slog.Logger) *Conn {
	return &Conn{id: id, remote: remote, local: local, out: out, log: log, pending: make(map[int32]*call), gateFD: -1}
}

// ID is unique among the connections of one Server or Client.
func (c *Conn) ID() uint64 { return c.id }

// RemoteAddr is the peer's "ip:port".
func (c *Conn) RemoteAddr() string { return c.remote }

// LocalAddr is our side's "ip:port".
func (c *Conn) LocalAddr() string { return c.local }

// Closed reports whether the connection has closed.
func (c *Conn) Closed() bool { return c.closed.Load() }

// SetValue attaches v to the connection (e.g. the client's registration).
func (c *Conn) SetValue(v any) {
	c.mu.Lock()
	c.value = v
	c.mu.Unlock()
}

// Value returns what SetValue attached, or nil.
func (c *Conn) Value() any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.value
}

// Close closes the connection; pending invokes fail with ErrConnClosed once
// the close completes. Closing twice is harmless.
func (c *Conn) Close() error {
	if c.closed.Load() {
		return nil
	}
	return c.out.close()
}

// Write encodes f and sends it asynchronously, from any goroutine. It is
// how a handler sends a deferred reply (build it with codec.NewResponse so
// opaque and flag match the request); f is not used after Write returns.
func (c *Conn) Write(f *codec.Frame) error {
	if c.closed.Load() {
		return ErrConnClosed
	}
	b := getBuf()
	b.b = f.AppendTo(b.b)
	return c.out.write(b)
}

// WriteWithBody sends f's header followed by body as one vectored write,
// without copying body (e.g. views of mapped store segments). f.Body is
// ignored. done, if not nil, runs exactly once after the bytes have left
// body (written, buffered by the transport, or failed), so body may be
// released there. It may run before WriteWithBody returns, on another
// writer's goroutine, or on an event loop, so it must be quick and must
// not wait for the caller.
func (c *Conn) WriteWithBody(f *codec.Frame, body [][]byte, done func(error)) error {
	if c.closed.Load() {
		if done != nil {
			done(ErrConnClosed)
		}
		return ErrConnClosed
	}
	n := 0
	for _, p := range body {
		n += len(p)
	}
	h := getBuf()
	h.b = f.AppendHeader(h.b, n)
	return c.out.writev(h, body, done)
}

// call is one request awaiting its response.
type call struct {
	ch chan *codec.Frame // capacity 1; nil frame = connection closed
}

var callPool = sync.Pool{New: func() any { return &call{ch: make(chan *codec.Frame, 1)} }}

// Invoke sends req to the peer and waits for its response or ctx. It
// assigns req.Opaque and clears the response and oneway flags. Never call
// it from an inline (pool-less) handler: the reply would have to be read by
// the very event loop that is waiting for it.
func (c *Conn) Invoke(ctx context.Context, req *codec.Frame) (*codec.Frame, error) {
	req.Flag &^= codec.FlagResponse | codec.FlagOneway
	req.Opaque = c.opaque.Add(1)
	if c.before != nil {
		c.before(req)
	}
	cl := callPool.Get().(*call)

	c.mu.Lock()
	if c.pending == nil {
		c.mu.Unlock()
		callPool.Put(cl)
		return nil, ErrConnClosed
	}
	c.pending[req.Opaque] = cl
	c.mu.Unlock()

	if err := c.Write(req); err != nil {
		c.forget(req.Opaque, cl)
		return nil, fmt.Errorf("transport: invoke code %d on %s: %w", req.Code, c.remote, err)
	}
	select {
	case resp := <-cl.ch:
		callPool.Put(cl)
		if resp == nil {
			return nil, fmt.Errorf("transport: invoke code %d on %s: %w", req.Code, c.remote, ErrConnClosed)
		}
		return resp, nil
	case <-ctx.Done():
		c.forget(req.Opaque, cl)
		return nil, fmt.Errorf("transport: invoke code %d on %s: %w", req.Code, c.remote, ctx.Err())
	}
}

// forget removes a call that will not be waited for any more, and recycles
// it once it can no longer receive.
func (c *Conn) forget(opaque int32, cl *call) {
	c.mu.Lock()
	_, mine := c.pending[opaque]
	if mine {
		delete(c.pending, opaque)
	}
	c.mu.Unlock()
	if !mine {
		// The response (or the close) was delivered under mu before we
		// looked: drain it so the call is clean for reuse.
		<-cl.ch
	}
	callPool.Put(cl)
}

// InvokeOneway sends req with the oneway flag; no response will come.
func (c *Conn) InvokeOneway(req *codec.Frame) error {
	req.Flag = req.Flag&^codec.FlagResponse | codec.FlagOneway
	req.Opaque = c.opaque.Add(1)
	if c.before != nil {
		c.before(req)
	}
	if err := c.Write(req); err != nil {
		return fmt.Errorf("transport: oneway code %d on %s: %w", req.Code, c.remote, err)
	}
	return nil
}

// complete hands a response to the invoke waiting for its opaque. It
// reports false when nobody waits (timed out, or never asked).
func (c *Conn) complete(resp *codec.Frame) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.pending[resp.Opaque]
	if !ok {
		return false
	}
	delete(c.pending, resp.Opaque)
	cl.ch <- resp // never blocks: capacity 1, one sender per call
	return true
}

// markClosed records that the socket is gone and fails every pending
// invoke. It reports false if it already ran.
func (c *Conn) markClosed() bool {
	if c.closed.Swap(true) {
		return false
	}
	c.mu.Lock()
	for op, cl := range c.pending {
		delete(c.pending, op)
		cl.ch <- nil
	}
	c.pending = nil
	c.mu.Unlock()
	return true
}

// handleFrame routes one decoded frame: a response completes an invoke, a
// request goes to r. It returns a response to write now, or nil; l and
// kept are as for dispatch (a response is never leased).
func (c *Conn) handleFrame(r *Router, f *codec.Frame, l *Lease) (resp *codec.Frame, kept bool) {
	if f.IsResponse() {
		if !c.complete(f) {
			c.log.Warn("transport: response without pending request, dropped", "remote", c.remote, "opaque", f.Opaque, "code", f.Code)
		}
		return nil, false
	}
	if r != nil && r.obs != nil {
		f.Arrived = time.Now().UnixNano() // the observer's latency starts here
	}
	return c.dispatch(r, f, l)
}

// inFrame is a request as it arrives: the Frame plus room for typical
// extFields, so decoding most requests allocates the frame and its
// payload only.
type inFrame struct {
	f   codec.Frame
	ext [16]codec.KV
}

// decodeFrame decodes a payload the caller hands over for good: the
// Frame's strings and Body alias it.
func decodeFrame(own []byte) (*codec.Frame, error) {
	in := &inFrame{}
	in.f.Ext = in.ext[:0]
	if err := codec.Decode(own, &in.f); err != nil {
		return nil, err
	}
	return &in.f, nil
}
