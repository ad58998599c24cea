package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
)

// DefaultDialTimeout is Java's connectTimeoutMillis (3 s).
const DefaultDialTimeout = 3 * time.Second

// ErrClientClosed is returned by calls on a closed Client.
var ErrClientClosed = errors.New("transport: client closed")

// ClientConfig configures a Client.
type ClientConfig struct {
	// Logger; nil means slog.Default().
	Logger *slog.Logger
	// Router handles requests the peer sends us on a dialed connection
	// (transaction checks, consumer notifications…); nil answers them
	// REQUEST_CODE_NOT_SUPPORTED.
	Router *Router
	// DialTimeout bounds connecting; 0 means DefaultDialTimeout.
	DialTimeout time.Duration
	// MaxFrameLength bounds one incoming frame; 0 means codec.DefaultMaxFrameLength.
	MaxFrameLength int
	// WriteTimeout bounds one blocked socket write when the caller's
	// context has no deadline; 0 means DefaultDialTimeout.
	WriteTimeout time.Duration
	// BeforeRequest, if set, runs on every request sent on a dialed
	// connection (Invoke, InvokeOneway) after its header is final and
	// before it is encoded: Java's client RPCHook doBeforeRequest, e.g.
	// signing it with the broker's inner credentials. It may add or
	// replace ext fields; it must be safe for concurrent use.
	BeforeRequest func(req *codec.Frame)
	// TLS, when set, makes every connection a TLS client (Java's
	// tls.enable); the handshake counts in DialTimeout. Without ServerName
	// (and with verification on), the dialed host is the name checked.
	TLS *tls.Config
}

// Client sends requests to servers, one TCP connection per address shared
// by all callers. Each connection has one reader goroutine.
type Client struct {
	cfg ClientConfig
	log *slog.Logger
	ids atomic.Uint64

	mu     sync.Mutex
	conns  map[string]*dialing // guarded by mu
	closed bool                // guarded by mu
	wg     sync.WaitGroup      // reader goroutines
}

// dialing is a connection being dialed or established; ready closes when
// the dial finished (c or err set).
type dialing struct {
	ready chan struct{}
	c     *Conn
	err   error
}

// NewClient returns a client; it dials lazily.
func NewClient(cfg ClientConfig) *Client {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.DialTimeout <= 0 {
		cfg.DialTimeout = DefaultDialTimeout
	}
	if cfg.WriteTimeout <= 0 {
		cfg.WriteTimeout = DefaultDialTimeout
	}
	if cfg.MaxFrameLength <= 0 {
		cfg.MaxFrameLength = codec.DefaultMaxFrameLength
	}
	return &Client{cfg: cfg, log: cfg.Logger, conns: make(map[string]*dialing)}
}

// Invoke sends req to addr and waits for the response or ctx. req.Opaque
// is assigned by the connection.
func (cl *Client) Invoke(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error) {
	c, err := cl.Conn(ctx, addr)
	if err != nil {
		return nil, err
	}
	return c.Invoke(ctx, req)
}

// InvokeOneway sends req to addr with the oneway flag.
func (cl *Client) InvokeOneway(ctx context.Context, addr string, req *codec.Frame) error {
	c, err := cl.Conn(ctx, addr)
	if err != nil {
		return err
	}
	return c.InvokeOneway(req)
}

// Conn returns the open connection to addr, dialing it if there is none
// (or the last one broke). Concurrent callers share one dial.
func (cl *Client) Conn(ctx context.Context, addr string) (*Conn, error) {
	for attempt := 0; ; attempt++ {
		cl.mu.Lock()
		if cl.closed {
			cl.mu.Unlock()
			return nil, ErrClientClosed
		}
		d, ok := cl.conns[addr]
		if !ok {
			d = &dialing{ready: make(chan struct{})}
			cl.conns[addr] = d
			cl.mu.Unlock()
			cl.dial(addr, d)
		} else {
			cl.mu.Unlock()
		}
		select {
		case <-d.ready:
		case <-ctx.Done():
			return nil, fmt.Errorf("transport: connect %s: %w", addr, ctx.Err())
		}
		if d.err != nil {
			return nil, d.err
		}
		if !d.c.Closed() || attempt > 0 {
			// A connection that broke right after a fresh dial is handed
			// out anyway: the call fails with ErrConnClosed instead of
			// redialing a peer that hangs up in a loop.
			return d.c, nil
		}
		// Broke since it was dialed: drop it (if still current) and dial again.
		cl.mu.Lock()
		if cl.conns[addr] == d {
			delete(cl.conns, addr)
		}
		cl.mu.Unlock()
	}
}

// dial connects d and starts its reader; a failed dial is forgotten so the
// next call retries.
func (cl *Client) dial(addr string, d *dialing) {
	defer close(d.ready)
	nc, err := cl.connect(addr)
	if err != nil {
		d.err = fmt.Errorf("transport: connect %s: %w", addr, err)
		cl.mu.Lock()
		if cl.conns[addr] == d {
			delete(cl.conns, addr)
		}
		cl.mu.Unlock()
		return
	}
	out := &clientOutlet{nc: nc, timeout: cl.cfg.WriteTimeout}
	c := newConn(cl.ids.Add(1), nc.RemoteAddr().String(), nc.LocalAddr().String(), out, cl.log)
	c.rt = cl.cfg.Router
	c.before = cl.cfg.BeforeRequest
	out.c = c
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		_ = nc.Close()
		c.markClosed()
		d.err = ErrClientClosed
		return
	}
	d.c = c
	cl.wg.Add(1)
	cl.mu.Unlock()
	go cl.read(addr, d, nc)
}

// connect dials addr, and completes a TLS handshake when configured, all
// within DialTimeout.
func (cl *Client) connect(addr string) (net.Conn, error) {
	d := &net.Dialer{Timeout: cl.cfg.DialTimeout}
	if cl.cfg.TLS == nil {
		return d.Dial("tcp", addr)
	}
	tc := cl.cfg.TLS
	if tc.ServerName == "" && !tc.InsecureSkipVerify {
		tc = tc.Clone()
		if host, _, err := net.SplitHostPort(addr); err == nil {
			tc.ServerName = host
		}
	}
	return (&tls.Dialer{NetDialer: d, Config: tc}).Dial("tcp", addr)
}

// read is the connection's only reader: it frames, decodes and routes
// until the socket fails, then fails the pending invokes.
func (cl *Client) read(addr string, d *dialing, nc net.Conn) {
	defer cl.wg.Done()
	c := d.c
	br := bufio.NewReaderSize(nc, 64<<10)
	var prefix [4]byte
	var err error
	for {
		if _, err = io.ReadFull(br, prefix[:]); err != nil {
			break
		}
		var n int
		if n, err = codec.FrameLength(prefix[:], cl.cfg.MaxFrameLength); err != nil {
			break
		}
		// The peer's announced length is not trusted with an allocation:
		// the buffer grows with the bytes that actually arrive.
		var payload []byte
		if payload, err = codec.ReadAnnounced(br, nil, n, 1<<20); err != nil {
			break
		}
		var f *codec.Frame
		if f, err = decodeFrame(payload); err != nil {
			break
		}
		if resp, _ := c.handleFrame(cl.cfg.Router, f, nil); resp != nil {
			if werr := c.Write(resp); werr != nil {
				cl.log.Debug("transport: write response", "remote", addr, "err", werr)
			}
		}
	}
	_ = nc.Close()
	c.markClosed()
	cl.mu.Lock()
	if cl.conns[addr] == d {
		delete(cl.conns, addr)
	}
	closing := cl.closed
	cl.mu.Unlock()
	if !closing && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
		cl.log.Info("transport: connection broken", "remote", addr, "err", err)
	}
}

// Close closes every connection, fails their pending invokes and waits for
// the reader goroutines. Pools of cfg.Router stay open (their owner closes them).
func (cl *Client) Close() error {
	cl.mu.Lock()
	if cl.closed {
		cl.mu.Unlock()
		return nil
	}
	cl.closed = true
	ds := make([]*dialing, 0, len(cl.conns))
	for _, d := range cl.conns {
		ds = append(ds, d)
	}
	clear(cl.conns)
	cl.mu.Unlock()
	for _, d := range ds {
		<-d.ready
		if d.c != nil {
			_ = d.c.Close()
		}
	}
	cl.wg.Wait()
	return nil
}

// clientOutlet writes frames on a plain socket. Concurrent writers batch
// up: whoever finds no write in progress becomes the flusher and writes
// everything queued meanwhile, so 64 callers in flight share a few
// syscalls instead of queueing on a mutex for one each.
type clientOutlet struct {
	nc      net.Conn
	c       *Conn
	timeout time.Duration

	mu      sync.Mutex
	pending []byte // guarded by mu: encoded frames not yet handed to the socket
	spare   []byte // guarded by mu: the last written batch, reused
	writing bool   // guarded by mu: a flusher is active
	err     error  // guarded by mu: sticky; set when a write failed
}

func (o *clientOutlet) write(b *outBuf) error {
	err := o.send(b.b, nil)
	b.put()
	return err
}

func (o *clientOutlet) writev(h *outBuf, bufs [][]byte, done func(error)) error {
	err := o.send(h.b, bufs)
	h.put()
	if done != nil {
		done(err)
	}
	return err
}

// send queues a frame (copying it) and flushes unless another goroutine
// is flushing already; that one will write it.
func (o *clientOutlet) send(p []byte, more [][]byte) error {
	o.mu.Lock()
	if o.err != nil {
		err := o.err
		o.mu.Unlock()
		return err
	}
	if o.c.Closed() {
		o.mu.Unlock()
		return ErrConnClosed
	}
	o.pending = append(o.pending, p...)
	for _, m := range more {
		o.pending = append(o.pending, m...)
	}
	if o.writing {
		o.mu.Unlock()
		return nil
	}
	o.writing = true
	for len(o.pending) > 0 && o.err == nil {
		batch := o.pending
		o.pending = o.spare[:0]
		o.mu.Unlock()
		_ = o.nc.SetWriteDeadline(time.Now().Add(o.timeout))
		_, err := o.nc.Write(batch)
		o.mu.Lock()
		if cap(batch) <= maxPooledBuf {
			o.spare = batch[:0]
		} else {
			o.spare = nil
		}
		if err != nil {
			// A partial frame leaves the stream out of sync: the
			// connection is done; the reader fails the pending calls.
			o.err = fmt.Errorf("transport: write to %s: %w", o.c.remote, err)
			o.pending = nil
			_ = o.nc.Close()
		}
	}
	o.writing = false
	err := o.err
	o.mu.Unlock()
	return err
}

func (o *clientOutlet) close() error { return o.nc.Close() }

func (o *clientOutlet) abort() {} // writes are synchronous: nothing is ever queued
