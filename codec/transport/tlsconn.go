package transport

import (
	"bufio"
	"container/list"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// A TLS connection leaves gnet after its first bytes (sniff.go) and is
// served here on a plain net.Conn, like the Client's connections: one
// reader goroutine frames, decodes and routes into the server's Router
// (leased frames and inline batching as on the loop), and one writer
// goroutine per connection sends what Conn.Write queues (streamOutlet),
// so a pool worker never waits for a slow TLS peer. The bounds follow the
// loop's: MaxFrameLength, MaxHeaderLength, a pause (no read) while
// MaxInflightPerConn requests are in flight or the unsent bytes are over
// WriteHighWater (until half / WriteLowWater), MaxUnsentPerConn closes,
// frames over 64 KiB count in the server's MaxUnreadTotal while they
// arrive, IdleTimeout and FrameReadTimeout (frames over 64 KiB) are read
// deadlines, WriteStallTimeout a write deadline.

// replayConn gives back the bytes gnet had already read (the start of the
// ClientHello) before reading the socket, through a small buffer: crypto/tls
// reads a record at a time, so pipelined requests would cost a syscall
// for every few records without it.
type replayConn struct {
	net.Conn
	pre []byte
	br  *bufio.Reader
}

// tlsReadBuffer is the socket read buffer under crypto/tls: ~20 small
// requests' records per syscall.
const tlsReadBuffer = 4 << 10

func (r *replayConn) Read(p []byte) (int, error) {
	if len(r.pre) > 0 {
		n := copy(p, r.pre)
		r.pre = r.pre[n:]
		if len(r.pre) == 0 {
			r.pre = nil
		}
		return n, nil
	}
	return r.br.Read(p)
}

// streamOutlet is a Conn's outlet on a net.Conn served by the Server: Write
// appends to pending (a copy: TLS encrypts out of a buffer anyway) and
// kicks the connection's writer goroutine, which writes everything pending
// in one call.
type streamOutlet struct {
	nc      net.Conn // written (the tls.Conn)
	raw     net.Conn // closed: the socket itself, so a close never waits
	c       *Conn
	timeout time.Duration // per write; <= 0: none
	limit   int64         // unsent bytes past which the connection closes
	low     int64         // a paused reader is woken at or below it

	unsent atomic.Int64
	kick   chan struct{} // capacity 1: pending has bytes
	wakeCh chan struct{} // capacity 1: the paused reader may look again
	quit   chan struct{} // closed by close
	once   sync.Once

	mu      sync.Mutex
	pending []byte // guarded by mu
	spare   []byte // guarded by mu: the last written batch, reused
	err     error  // guarded by mu: sticky
}

func newStreamOutlet(nc, raw net.Conn, timeout time.Duration, limit, low int64) *streamOutlet {
	return &streamOutlet{nc: nc, raw: raw, timeout: timeout, limit: limit, low: low,
		kick: make(chan struct{}, 1), wakeCh: make(chan struct{}, 1), quit: make(chan struct{})}
}

func (o *streamOutlet) write(b *outBuf) error {
	err := o.send(b.b, nil)
	b.put()
	return err
}

func (o *streamOutlet) writev(h *outBuf, bufs [][]byte, done func(error)) error {
	err := o.send(h.b, bufs)
	h.put()
	if done != nil {
		done(err)
	}
	return err
}

func (o *streamOutlet) send(p []byte, more [][]byte) error {
	n := len(p)
	for _, m := range more {
		n += len(m)
	}
	o.mu.Lock()
	if o.err != nil {
		err := o.err
		o.mu.Unlock()
		return err
	}
	if u := o.unsent.Load() + int64(n); u > o.limit {
		o.err = ErrConnClosed
		o.mu.Unlock()
		o.c.log.Warn("transport: closing connection: its unsent replies exceed the limit (the peer does not read)",
			"remote", o.c.remote, "unsent", u, "maxUnsentBytesPerConnection", o.limit, "tls", true)
		_ = o.close()
		return ErrConnClosed
	}
	o.pending = append(o.pending, p...)
	for _, m := range more {
		o.pending = append(o.pending, m...)
	}
	o.unsent.Add(int64(n))
	o.mu.Unlock()
	select {
	case o.kick <- struct{}{}:
	default:
	}
	return nil
}

// run is the writer goroutine: it writes what is pending until close.
func (o *streamOutlet) run(wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-o.kick:
		case <-o.quit:
			return
		}
		for {
			o.mu.Lock()
			batch := o.pending
			if len(batch) == 0 || o.err != nil {
				o.mu.Unlock()
				break
			}
			o.pending = o.spare[:0]
			o.spare = nil
			o.mu.Unlock()
			if o.timeout > 0 {
				_ = o.nc.SetWriteDeadline(time.Now().Add(o.timeout))
			}
			_, err := o.nc.Write(batch)
			o.unsent.Add(-int64(len(batch)))
			o.mu.Lock()
			if cap(batch) <= maxPooledBuf {
				o.spare = batch[:0]
			}
			if err != nil && o.err == nil {
				o.err = ErrConnClosed
				o.pending = nil
			}
			o.mu.Unlock()
			if err != nil {
				if !o.c.Closed() && !errors.Is(err, net.ErrClosed) {
					o.c.log.Warn("transport: closing connection: write failed (a peer that takes nothing for writeStallTimeout is cut)",
						"remote", o.c.remote, "err", err, "writeStallTimeout", o.timeout, "tls", true)
				}
				_ = o.close()
				return
			}
			if o.c.paused.Load() && o.unsent.Load() <= o.low {
				o.c.wake()
			}
		}
	}
}

func (o *streamOutlet) close() error {
	var err error
	o.once.Do(func() {
		o.mu.Lock()
		if o.err == nil {
			o.err = ErrConnClosed // later writes fail at once instead of queueing
		}
		o.pending = nil
		o.mu.Unlock()
		close(o.quit)
		// Not tls.Conn.Close: its close_notify may wait seconds for a
		// peer that does not read, and for a write in progress.
		err = o.raw.Close()
	})
	return err
}

func (o *streamOutlet) abort() {}

// errEvicted fails a handshake closed for a newer one.
var errEvicted = errors.New("transport: TLS handshake closed for a newer one (maxTLSHandshakes)")

// handoffTLS registers raw (the dup of a gnet connection whose first byte
// was a TLS handshake) and serves it on goroutines. At MaxTLSHandshakes
// in progress it closes the oldest of them first. It reports false when
// the server is closing (raw is then closed).
func (s *Server) handoffTLS(raw net.Conn, prefix []byte, remote, local string) bool {
	h := &handshake{raw: raw, remote: remote}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		_ = raw.Close()
		return false
	}
	var victim *handshake
	if s.shaking.Len() >= s.cfg.MaxTLSHandshakes {
		victim = s.shaking.Remove(s.shaking.Front()).(*handshake)
		victim.evicted = true
	}
	h.el = s.shaking.PushBack(h)
	s.handed[raw] = nil
	s.tlsWG.Add(1)
	s.mu.Unlock()
	if victim != nil {
		// Its goroutine sees the handshake fail and cleans up.
		_ = victim.raw.Close()
		if n := s.evictions.Add(1); n&(n-1) == 0 { // 1, 2, 4, …: a flood logs a few lines
			s.log.Warn("transport: closing connection: too many TLS handshakes in progress, the oldest one closed",
				"remote", victim.remote, "maxTLSHandshakes", s.cfg.MaxTLSHandshakes, "closedSoFar", n)
		}
	}
	go s.serveTLS(raw, h, prefix, remote, local)
	return true
}

// handshake is one TLS handshake in progress, in Server.shaking.
type handshake struct {
	raw     net.Conn
	remote  string
	el      *list.Element
	evicted bool // guarded by Server.mu: taken off shaking for a newer one
}

// handshaking is the number of TLS handshakes in progress.
func (s *Server) handshaking() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.shaking.Len()
}

// serveTLS completes the handshake within TLSHandshakeTimeout, then reads
// the connection's frames until it closes.
func (s *Server) serveTLS(raw net.Conn, h *handshake, prefix []byte, remote, local string) {
	defer s.tlsWG.Done()
	tc := tls.Server(&replayConn{Conn: raw, pre: prefix, br: bufio.NewReaderSize(raw, tlsReadBuffer)}, s.cfg.TLS)
	_ = raw.SetDeadline(time.Now().Add(s.cfg.TLSHandshakeTimeout))
	err := tc.Handshake()
	s.mu.Lock()
	if h.evicted {
		if err == nil {
			err = errEvicted
		}
	} else {
		s.shaking.Remove(h.el)
	}
	s.mu.Unlock()
	if err != nil {
		s.log.Info("transport: closing connection: TLS handshake failed", "remote", remote, "err", err,
			"handshakeTimeout", s.cfg.TLSHandshakeTimeout)
		_ = raw.Close()
		s.mu.Lock()
		delete(s.handed, raw)
		s.mu.Unlock()
		return
	}
	_ = raw.SetDeadline(time.Time{})

	o := newStreamOutlet(tc, raw, s.cfg.WriteStallTimeout, s.cfg.MaxUnsentPerConn, s.cfg.WriteLowWater)
	c := newConn(s.ids.Add(1), remote, local, o, s.log)
	o.c = c
	c.rt = s.router
	c.maxInflight = int32(s.cfg.MaxInflightPerConn)
	c.wakeFn = func() {
		select {
		case o.wakeCh <- struct{}{}:
		default:
		}
	}
	s.mu.Lock()
	if s.stopping {
		s.mu.Unlock()
		_ = raw.Close()
		return
	}
	s.handed[raw] = c
	s.mu.Unlock()
	var wg sync.WaitGroup
	wg.Add(1)
	go o.run(&wg)
	if s.cfg.OnConnect != nil {
		s.cfg.OnConnect(c)
	}
	s.log.Debug("transport: TLS connection", "remote", remote, "version", tls.VersionName(tc.ConnectionState().Version))

	err = s.readTLS(tc, raw, c, o)
	_ = o.close()
	wg.Wait()
	c.markClosed()
	s.mu.Lock()
	delete(s.handed, raw)
	s.mu.Unlock()
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		s.log.Debug("transport: connection closed", "remote", remote, "err", err, "tls", true)
	}
	if s.cfg.OnClose != nil {
		s.cfg.OnClose(c)
	}
}

// readTLS is the reader loop of a TLS connection.
func (s *Server) readTLS(tc *tls.Conn, raw net.Conn, c *Conn, o *streamOutlet) error {
	cfg := &s.cfg
	e := &events{s: s}
	var prefix [4]byte
	var deadline int64 // unix nanos of the read deadline set last; 0: none
	setDeadline := func(d time.Duration) {
		want := int64(0)
		if d > 0 {
			want = s.clock.Load() + int64(d) // coarse: set at most once per tick
		}
		if want != deadline {
			deadline = want
			t := time.Time{}
			if want != 0 {
				t = time.Unix(0, want)
			}
			_ = raw.SetReadDeadline(t)
		}
	}
	for {
		if !e.streamMayRead(c, o) {
			return ErrConnClosed
		}
		setDeadline(cfg.IdleTimeout)
		if _, err := io.ReadFull(tc, prefix[:]); err != nil {
			return err
		}
		n, err := codec.FrameLength(prefix[:], cfg.MaxFrameLength)
		if err != nil {
			s.log.Warn("transport: bad frame, closing connection", "remote", c.remote, "err", err, "tls", true)
			return err
		}
		if n > bigFrame {
			if err := e.readBigTLS(tc, c, n, setDeadline); err != nil {
				return err
			}
			continue
		}
		l := getLease(n)
		if _, err := io.ReadFull(tc, l.buf); err != nil {
			l.Release()
			return err
		}
		hl := 0
		if n >= 4 {
			hl = int(binary.BigEndian.Uint32(l.buf) & 0xFFFFFF)
		}
		if !e.headerFits(c, hl) {
			l.Release()
			return ErrConnClosed
		}
		var out *outBuf
		if !e.route(c, l, &out, hl > inlineHeaderLimit) {
			return ErrConnClosed
		}
		if out != nil {
			if err := o.write(out); err != nil {
				return err
			}
		}
	}
}

// readBigTLS reads a frame over 64 KiB as its bytes arrive (never
// allocating what is only announced), within FrameReadTimeout and the
// server's MaxUnreadTotal, and routes it.
func (e *events) readBigTLS(tc *tls.Conn, c *Conn, n int, setDeadline func(time.Duration)) error {
	s := e.s
	if total := s.unread.Add(int64(n)); total > s.cfg.MaxUnreadTotal {
		s.unread.Add(-int64(n))
		s.log.Warn("transport: closing connection: the server's unread bytes exceed their budget",
			"remote", c.remote, "frameLength", n, "maxUnreadBytesTotal", s.cfg.MaxUnreadTotal, "tls", true)
		return ErrConnClosed
	}
	defer s.unread.Add(-int64(n))
	setDeadline(s.cfg.FrameReadTimeout)
	payload, err := codec.ReadAnnounced(tc, nil, n, 1<<20)
	if err != nil {
		return err
	}
	if len(payload) >= 4 && !e.headerFits(c, int(binary.BigEndian.Uint32(payload)&0xFFFFFF)) {
		return ErrConnClosed
	}
	f, err := decodeFrame(payload)
	if err != nil {
		s.log.Warn("transport: undecodable frame, closing connection", "remote", c.remote, "err", err, "tls", true)
		return err
	}
	if resp, _ := c.handleFrame(s.router, f, nil); resp != nil {
		return c.Write(resp)
	}
	return nil
}

// streamMayRead waits while the connection must not be read (its in-flight
// requests or unsent replies are over their marks), as pause/mayResume do
// on the loop. It reports false once the connection closed.
func (e *events) streamMayRead(c *Conn, o *streamOutlet) bool {
	cfg := &e.s.cfg
	if o.unsent.Load() <= cfg.WriteHighWater && c.inflight.Load() < int32(cfg.MaxInflightPerConn) {
		return true
	}
	c.paused.Store(true)
	e.s.pauses.Add(1)
	defer c.paused.Store(false)
	for {
		// Checked after paused is set: whoever lowers a reason sees it and wakes us.
		if o.unsent.Load() <= cfg.WriteLowWater && c.inflight.Load() <= int32(cfg.MaxInflightPerConn/2) {
			return true
		}
		select {
		case <-o.wakeCh:
			c.woken.Store(false)
		case <-o.quit:
			return false
		}
	}
}
