package main

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// maxPending bounds the bytes queued for one connection's writer; senders
// wait above it (backpressure for oneway and open-loop runs).
const maxPending = 4 << 20

var errConnClosed = errors.New("mqbench: connection closed")

// inflight is one request awaiting its reply.
type inflight struct {
	opaque int32
	used   bool
	start  int64 // monotonic nanoseconds since the run's base
	msgs   int32
	bytes  int32
	owner  *credits
}

// credits limits the requests one producer has in flight: acquire by
// sending into ch, release by receiving.
type credits struct{ ch chan struct{} }

func newCredits(n int) *credits { return &credits{ch: make(chan struct{}, n)} }

func (c *credits) release() {
	if c == nil {
		return
	}
	select {
	case <-c.ch:
	default:
	}
}

// sendConn is one TCP connection to a broker used by producers: a writer
// goroutine drains a double buffer, a reader goroutine matches replies to
// the in-flight ring, a sweeper expires requests older than the timeout.
type sendConn struct {
	nc      net.Conn
	clk     *clock
	rec     *recorder
	timeout time.Duration

	mu      sync.Mutex // guards the fields below
	cond    *sync.Cond // signalled when pending shrinks or the conn closes
	pending []byte
	spare   []byte
	opaque  int32
	ring    []inflight // indexed by opaque & mask
	mask    int32
	closed  bool
	werr    error

	wake chan struct{}
	quit chan struct{}
	wg   sync.WaitGroup
}

func dialSend(addr string, clk *clock, rec *recorder, ringSize int, timeout time.Duration, useTLS ...bool) (*sendConn, error) {
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	if len(useTLS) > 0 && useTLS[0] {
		// Java's test-mode certificates are self-signed: not verified.
		tc := tls.Client(nc, &tls.Config{InsecureSkipVerify: true})
		_ = tc.SetDeadline(time.Now().Add(5 * time.Second))
		if err := tc.Handshake(); err != nil {
			_ = nc.Close()
			return nil, fmt.Errorf("TLS handshake with %s: %w", addr, err)
		}
		_ = tc.SetDeadline(time.Time{})
		nc = tc
	}
	size := 1024
	for size < 2*ringSize {
		size <<= 1
	}
	c := &sendConn{
		nc: nc, clk: clk, rec: rec, timeout: timeout,
		opaque: opaqueMin,
		ring:   make([]inflight, size),
		mask:   int32(size - 1),
		wake:   make(chan struct{}, 1),
		quit:   make(chan struct{}),
	}
	c.cond = sync.NewCond(&c.mu)
	c.wg.Add(3)
	go c.writeLoop()
	go c.readLoop()
	go c.sweepLoop()
	return c, nil
}

// send appends one pre-encoded frame, patched with a fresh opaque, and
// registers it in the ring unless oneway. cr is the producer's credit
// channel, already acquired (nil for oneway).
func (c *sendConn) send(t *sendTemplate, startMono, wallNanos int64, seq uint64, cr *credits) error {
	c.mu.Lock()
	for len(c.pending) > maxPending && !c.closed {
		c.cond.Wait()
	}
	if c.closed {
		c.mu.Unlock()
		return errConnClosed
	}
	op := c.nextOpaque(cr != nil)
	off := len(c.pending)
	c.pending = append(c.pending, t.frame...)
	t.patch(c.pending[off:], op, wallNanos, seq)
	if cr != nil {
		slot := &c.ring[op&c.mask]
		*slot = inflight{opaque: op, used: true, start: startMono, msgs: int32(t.msgs), bytes: int32(t.bodyBytes), owner: cr}
	}
	c.mu.Unlock()
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return nil
}

// nextOpaque returns the opaque of the next request. One that awaits a
// reply skips opaques whose ring slot is still taken by an older request:
// the ring has at least twice as many slots as requests can be in flight,
// so a free one is near, and a slow reply is timed (or expired by the
// sweeper after the timeout), never mistaken for a lost one. mu held.
func (c *sendConn) nextOpaque(reply bool) int32 {
	for {
		op := c.opaque
		if c.opaque == opaqueMax {
			c.opaque = opaqueMin
		} else {
			c.opaque++
		}
		if !reply || !c.ring[op&c.mask].used {
			return op
		}
	}
}

func (c *sendConn) writeLoop() {
	defer c.wg.Done()
	for {
		select {
		case <-c.wake:
		case <-c.quit:
			return
		}
		c.mu.Lock()
		if len(c.pending) == 0 {
			c.mu.Unlock()
			continue
		}
		// Invariant: pending and spare never share a backing array, so
		// producers append into one while this goroutine writes the other.
		out := c.pending
		c.pending = c.spare[:0]
		c.spare = nil
		c.cond.Broadcast()
		c.mu.Unlock()
		_, err := c.nc.Write(out)
		c.mu.Lock()
		c.spare = out[:0]
		c.mu.Unlock()
		if err != nil {
			c.fail(err)
			return
		}
	}
}

func (c *sendConn) readLoop() {
	defer c.wg.Done()
	var f codec.Frame
	err := readFrames(c.nc, 256<<10, codec.DefaultMaxFrameLength, false, func(_, payload []byte, _ time.Time) error {
		if err := codec.Decode(payload, &f); err != nil {
			return err
		}
		c.handle(&f)
		return nil
	})
	if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
		err = errConnClosed
	}
	c.fail(err)
}

// handle settles one reply. Requests from the broker are answered
// REQUEST_CODE_NOT_SUPPORTED (mqbench registers nothing a broker would call).
func (c *sendConn) handle(f *codec.Frame) {
	if !f.IsResponse() {
		if !f.IsOneway() {
			resp := codec.NewResponse(f, int32(codec.RespRequestCodeNotSupported), " request type "+fmt.Sprint(f.Code)+" not supported")
			c.mu.Lock()
			c.pending = resp.AppendTo(c.pending)
			c.mu.Unlock()
			select {
			case c.wake <- struct{}{}:
			default:
			}
		}
		return
	}
	now := c.clk.mono()
	c.mu.Lock()
	slot := &c.ring[f.Opaque&c.mask]
	if !slot.used || slot.opaque != f.Opaque {
		c.mu.Unlock() // late reply of an expired request
		return
	}
	e := *slot
	slot.used = false
	slot.owner = nil
	c.mu.Unlock()
	switch f.Code {
	case 0, 10, 11, 12: // SUCCESS, FLUSH_DISK_TIMEOUT, SLAVE_NOT_AVAILABLE, FLUSH_SLAVE_TIMEOUT: stored
		c.rec.ok(int(e.msgs), int(e.bytes), (now-e.start)/1000)
	default:
		c.rec.fail(f.Code)
	}
	e.owner.release()
}

func (c *sendConn) sweepLoop() {
	defer c.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-c.quit:
			return
		}
		c.expire(c.clk.mono() - int64(c.timeout))
	}
}

// expire fails every in-flight request started before cutoff (all of them
// when cutoff is the max int64).
func (c *sendConn) expire(cutoff int64) {
	c.mu.Lock()
	for i := range c.ring {
		s := &c.ring[i]
		if s.used && s.start < cutoff {
			s.used = false
			c.rec.fail(errTimeout)
			s.owner.release()
			s.owner = nil
		}
	}
	c.mu.Unlock()
}

// outstanding counts requests still awaiting replies.
func (c *sendConn) outstanding() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for i := range c.ring {
		if c.ring[i].used {
			n++
		}
	}
	return n
}

// flushed reports whether everything queued has been handed to the socket.
func (c *sendConn) flushed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.pending) == 0 || c.closed
}

func (c *sendConn) fail(err error) {
	c.mu.Lock()
	if !c.closed {
		c.closed = true
		c.werr = err
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	c.nc.Close()
}

// close stops the goroutines and fails whatever is still in flight.
func (c *sendConn) close() {
	c.fail(errConnClosed)
	close(c.quit)
	c.wg.Wait()
	c.mu.Lock()
	for i := range c.ring {
		s := &c.ring[i]
		if s.used {
			s.used = false
			c.rec.fail(errLost)
			s.owner.release()
		}
	}
	c.mu.Unlock()
}
