package transport

import (
	"container/list"
	"context"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// DefaultIdleTimeout is Java's serverChannelMaxIdleTimeSeconds (120 s).
const DefaultIdleTimeout = 120 * time.Second

// Defaults of the bounds in ServerConfig (what a zero field means). They
// keep one hostile or stuck peer, and many of them together, to tens of
// MiB, while a normal client (hundreds of requests in flight, replies read
// as they come) never meets them.
const (
	DefaultWriteHighWater     = 4 << 20
	DefaultWriteLowWater      = 1 << 20
	DefaultMaxUnsentPerConn   = 64 << 20
	DefaultMaxUnsentTotal     = 256 << 20
	DefaultMaxInflightPerConn = 1024
	DefaultMaxUnreadPerConn   = codec.DefaultMaxFrameLength + 1<<20
	DefaultMaxUnreadTotal     = 64 << 20
	DefaultFrameReadTimeout   = 60 * time.Second
	DefaultMaxHeaderLength    = 1 << 20
	DefaultWriteStallTimeout  = 10 * time.Second
)

// inlineHeaderLimit is the largest header the event loop decodes itself; a
// bigger one (up to MaxHeaderLength) is decoded on a goroutine while its
// connection's later requests wait, so it cannot stall the loop's other
// connections. Decoding 64 KiB of tiny extFields takes about 1 ms.
const inlineHeaderLimit = 64 << 10

// bigHeaderRate is the bytes of big headers one decode slot takes per
// second (a 1 MiB header of tiny fields decodes in ~4 ms here: at this
// rate the slot is busy about a quarter of the time).
const bigHeaderRate = 64 << 20

// ServerConfig configures a Server. The zero value of each field is usable.
type ServerConfig struct {
	// Addr is "host:port" to listen on; port 0 picks a free port (see Server.Addr).
	Addr string
	// Multicore runs one event loop per CPU instead of one.
	Multicore bool
	// WriteObserver, when set, is told for every frame written to a
	// plaintext connection when it was handed to the connection and when
	// the socket took its last byte (Unix nanoseconds): the reply-write
	// stage of a request's latency. Called on the writing goroutine; it
	// must be quick and must not allocate.
	WriteObserver func(queued, written int64)
	// ReusePort sets SO_REUSEPORT on the listener (off by default).
	ReusePort bool
	// MaxFrameLength bounds one frame, length prefix included; 0 means
	// codec.DefaultMaxFrameLength (16 MiB, Java's frameMaxLength).
	MaxFrameLength int
	// IdleTimeout closes a connection without traffic in either direction
	// for that long; 0 disables it. Java servers use DefaultIdleTimeout.
	// Bytes of a frame not yet complete do not count as traffic.
	IdleTimeout time.Duration

	// WriteHighWater: once a connection's unsent replies pass it, the
	// server stops decoding that connection's requests (they wait in the
	// kernel and gnet's inbound buffer) until they fall to WriteLowWater.
	// 0 means DefaultWriteHighWater (4 MiB) / DefaultWriteLowWater (1 MiB).
	WriteHighWater, WriteLowWater int64
	// MaxUnsentPerConn closes a connection whose unsent bytes pass it
	// anyway (replies of requests already dispatched, server-initiated
	// requests); 0 means DefaultMaxUnsentPerConn (64 MiB).
	MaxUnsentPerConn int64
	// MaxUnsentTotal: while all connections' unsent bytes together pass
	// it, a connection with unsent bytes of its own is not read; 0 means
	// DefaultMaxUnsentTotal (256 MiB).
	MaxUnsentTotal int64
	// MaxInflightPerConn: a connection with that many requests on pools
	// whose handlers have not returned is not read until half of them
	// have; 0 means DefaultMaxInflightPerConn (1024).
	MaxInflightPerConn int
	// MaxUnreadPerConn closes a connection holding more inbound bytes not
	// yet decoded (requests that wait while it is not read); 0 means
	// DefaultMaxUnreadPerConn (17 MiB: a whole frame of the default limit
	// and a little more). Raised to MaxFrameLength if lower.
	MaxUnreadPerConn int64
	// MaxUnreadTotal bounds the inbound bytes held by all connections
	// together (incomplete frames and requests not yet decoded); past it
	// the connection that has held its bytes longest is closed (and, while
	// those close, any connection adding bytes past a quarter more). 0
	// means DefaultMaxUnreadTotal (64 MiB).
	MaxUnreadTotal int64
	// FrameReadTimeout closes a connection whose frame in progress is not
	// complete that long after its first bytes arrived (a slow sender);
	// 0 means DefaultFrameReadTimeout (60 s), negative disables it.
	FrameReadTimeout time.Duration
	// WriteStallTimeout closes a connection that has output pending (in
	// the transport or unacknowledged in the kernel's send queue) and whose
	// peer has taken none of it for that long: a client that stopped
	// reading, whatever the size of its socket buffers. 0 means
	// DefaultWriteStallTimeout (10 s), negative disables it.
	WriteStallTimeout time.Duration
	// MaxHeaderLength bounds one frame's header (the JSON or ROCKETMQ
	// part, without body); a bigger one closes the connection with a WARN.
	// 0 means DefaultMaxHeaderLength (1 MiB).
	MaxHeaderLength int

	// TLSMode is Java's tls.server.mode. Disabled (the zero value) looks at
	// nothing: a TLS ClientHello fails as a bad frame length. Permissive
	// and Enforcing detect the first byte (sniff.go): a TLS connection is
	// served by crypto/tls with TLS (required then) off the event loops
	// (tlsconn.go); plaintext stays on gnet, and Enforcing closes it.
	TLSMode tlsconf.Mode
	TLS     *tls.Config
	// ProxyProtocol accepts a PROXY protocol v1/v2 header before the
	// first bytes, as Java always does; its source address becomes the
	// Conn's RemoteAddr.
	ProxyProtocol bool
	// TLSHandshakeTimeout bounds a TLS handshake, and how long a detected
	// connection may take to send its first bytes; 0 means
	// DefaultTLSHandshakeTimeout (10 s).
	TLSHandshakeTimeout time.Duration
	// MaxTLSHandshakes bounds the TLS handshakes in progress; a TLS
	// connection beyond it closes the oldest handshake still in progress
	// (so a flood of idle handshakes cannot lock real clients out, who
	// finish theirs in a round trip or two). 0 means
	// DefaultMaxTLSHandshakes (1024).
	MaxTLSHandshakes int

	// Logger receives the transport's and gnet's logs; nil means slog.Default().
	Logger *slog.Logger
	// OnConnect and OnClose run on the connection's event loop, so they
	// must be quick and must not block. OnClose runs exactly once per
	// connection, after pending invokes on it have failed.
	OnConnect, OnClose func(*Conn)
}

// withDefaults fills the zero fields.
func (cfg ServerConfig) withDefaults() ServerConfig {
	if cfg.MaxFrameLength <= 0 {
		cfg.MaxFrameLength = codec.DefaultMaxFrameLength
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	def64 := func(v *int64, d int64) {
		if *v <= 0 {
			*v = d
		}
	}
	def64(&cfg.WriteHighWater, DefaultWriteHighWater)
	def64(&cfg.WriteLowWater, DefaultWriteLowWater)
	cfg.WriteLowWater = min(cfg.WriteLowWater, cfg.WriteHighWater)
	def64(&cfg.MaxUnsentPerConn, DefaultMaxUnsentPerConn)
	def64(&cfg.MaxUnsentTotal, DefaultMaxUnsentTotal)
	def64(&cfg.MaxUnreadPerConn, DefaultMaxUnreadPerConn)
	cfg.MaxUnreadPerConn = max(cfg.MaxUnreadPerConn, int64(cfg.MaxFrameLength))
	def64(&cfg.MaxUnreadTotal, DefaultMaxUnreadTotal)
	if cfg.MaxInflightPerConn <= 0 {
		cfg.MaxInflightPerConn = DefaultMaxInflightPerConn
	}
	if cfg.FrameReadTimeout == 0 {
		cfg.FrameReadTimeout = DefaultFrameReadTimeout
	}
	if cfg.MaxHeaderLength <= 0 {
		cfg.MaxHeaderLength = DefaultMaxHeaderLength
	}
	if cfg.WriteStallTimeout == 0 {
		cfg.WriteStallTimeout = DefaultWriteStallTimeout
	}
	if cfg.TLSHandshakeTimeout <= 0 {
		cfg.TLSHandshakeTimeout = DefaultTLSHandshakeTimeout
	}
	if cfg.MaxTLSHandshakes <= 0 {
		cfg.MaxTLSHandshakes = DefaultMaxTLSHandshakes
	}
	return cfg
}

// Server is a gnet v2 remoting server. Event loops only frame, decode,
// route and encode; handlers on pools do the real work.
type Server struct {
	cfg    ServerConfig
	router *Router
	log    *slog.Logger
	ids    atomic.Uint64

	mu    sync.Mutex
	conns map[uint64]*Conn // guarded by mu: open connections, for idle checks
	// Detection and TLS (sniff.go, tlsconn.go), guarded by mu:
	// connections whose first bytes are not seen yet; sockets handed to
	// crypto/tls (their Conn once the handshake is done, else nil);
	// stopping refuses new hand-offs once Close began.
	sniffing  map[gnet.Conn]*sniffer
	handed    map[net.Conn]*Conn
	stopping  bool
	shaking   list.List // of *handshake: TLS handshakes in progress, oldest first
	evictions atomic.Int64
	tlsWG     sync.WaitGroup

	// clock is a coarse unix-nano time refreshed by the idle checker, so
	// noting a connection's activity costs one atomic store.
	clock atomic.Int64

	// Server-wide totals behind the budgets: unsent output of every
	// connection, inbound bytes they hold undecoded; seq orders the
	// moments connections began holding them.
	unsent, unread atomic.Int64
	// evicting is the part of unread held by connections closed for the
	// budget whose OnClose has not run yet (their memory is not free yet,
	// but closing more connections for it would close too many).
	evicting   atomic.Int64
	seq        atomic.Uint64
	pauses     atomic.Uint64 // times a connection stopped being read
	watch      *watcher      // writability of full sockets
	bigHeaders chan struct{} // semaphore of off-loop header decodes
	// Big-header frames taken off the wire and not yet decoded are
	// budgeted in bytes (bigBudget): past it a connection's next big
	// frame stays unread (paused, bigWait) until bytes are released.
	bigMu     sync.Mutex
	bigBytes  int64   // guarded by bigMu
	bigQueue  []*Conn // guarded by bigMu: connections waiting for budget
	bigBudget int64
	bg        sync.WaitGroup

	eng       gnet.Engine
	writers   *writers // started by Start, stopped by Close after the engine
	addr      string
	booted    chan struct{}
	runErr    chan error // Run's result, buffered
	stopIdle  chan struct{}
	idleDone  chan struct{}
	closeOnce sync.Once
	closeErr  error
}

// NewServer prepares a server; Start begins listening. r must be fully
// built before Start.
func NewServer(cfg ServerConfig, r *Router) *Server {
	cfg = cfg.withDefaults()
	if r == nil {
		r = NewRouter()
	}
	s := &Server{
		cfg:      cfg,
		router:   r,
		log:      cfg.Logger,
		conns:    make(map[uint64]*Conn),
		sniffing: make(map[gnet.Conn]*sniffer),
		handed:   make(map[net.Conn]*Conn),
		booted:   make(chan struct{}),
		runErr:   make(chan error, 1),
		stopIdle: make(chan struct{}),
		idleDone: make(chan struct{}),
		// Half the CPUs at most decode big headers, so the loops keep theirs.
		bigHeaders: make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2)),
		// Room for two maximal headers per decoding CPU: one decoding, one
		// ready, and the rest of every sender's stays unread.
		bigBudget: 2 * int64(max(1, runtime.GOMAXPROCS(0)/2)) * int64(cfg.MaxHeaderLength),
	}
	s.clock.Store(time.Now().UnixNano())
	return s
}

// Start listens on cfg.Addr and returns once the listener is bound.
func (s *Server) Start() error {
	if code, ok := s.router.inlineWithMiddleware(); ok {
		return fmt.Errorf("transport: route %v has no pool but the router has middleware, which must not run on an event loop", code)
	}
	if s.cfg.TLSMode != tlsconf.Disabled && s.cfg.TLS == nil {
		return fmt.Errorf("transport: listen on %s: TLS mode %s without a TLS config", s.cfg.Addr, s.cfg.TLSMode)
	}
	h := &events{s: s}
	opts := []gnet.Option{
		gnet.WithMulticore(s.cfg.Multicore),
		gnet.WithReusePort(s.cfg.ReusePort),
		gnet.WithReuseAddr(true), // as Java's server bootstrap does
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetLogger{s.log}),
	}
	w, err := newWatcher(s.log)
	if err != nil {
		return err
	}
	s.watch = w
	s.writers = startWriters(s.cfg.Multicore)
	go func() { s.runErr <- gnet.Run(h, "tcp://"+s.cfg.Addr, opts...) }()
	select {
	case <-s.booted:
	case err := <-s.runErr:
		s.writers.close()
		s.watch.close()
		if err == nil {
			err = errors.New("engine stopped during boot")
		}
		return fmt.Errorf("transport: listen on %s: %w", s.cfg.Addr, err)
	}
	go s.idleLoop()
	s.log.Info("transport: listening", "addr", s.addr)
	return nil
}

// Addr is the bound "ip:port" (the real port when cfg.Addr asked for 0).
func (s *Server) Addr() string { return s.addr }

// Close stops accepting, closes every connection (OnClose runs for each),
// and waits for the event loops to exit. Pools are not closed: their owner
// closes them afterwards.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		select {
		case <-s.booted:
		default:
			return // never started: nothing to stop
		}
		close(s.stopIdle)
		<-s.idleDone
		s.mu.Lock()
		s.stopping = true
		for raw := range s.handed {
			_ = raw.Close()
		}
		s.mu.Unlock()
		// Engine.Stop polls for completion every 500 ms; Run returning is
		// the precise signal, so Stop only triggers the shutdown here.
		ctx, cancel := context.WithCancel(context.Background())
		stopped := make(chan struct{})
		go func() {
			defer close(stopped)
			_ = s.eng.Stop(ctx)
		}()
		if err := <-s.runErr; err != nil {
			s.closeErr = fmt.Errorf("transport: stop %s: %w", s.addr, err)
		}
		cancel()
		<-stopped
		s.tlsWG.Wait()    // TLS connections: closed above, none handed off since
		s.bg.Wait()       // off-loop decodes: their connections are closed
		s.writers.close() // every connection is closed: nothing is left to write
		s.watch.close()   // every outlet is dead, so disarmed
	})
	return s.closeErr
}

// ConnCount is the number of open connections.
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := len(s.conns)
	for _, c := range s.handed {
		if c != nil {
			n++
		}
	}
	return n
}

// Buffered reports what the transport holds for its connections: unsent
// output (replies, server requests; views of store segments included) and
// inbound bytes not yet decoded (incomplete frames, requests of
// connections that are not read).
func (s *Server) Buffered() (unsent, unread int64) {
	return s.unsent.Load(), s.unread.Load()
}

// idleLoop refreshes the coarse clock, closes idle connections and those
// whose frame in progress is overdue.
func (s *Server) idleLoop() {
	defer close(s.idleDone)
	tick := time.Second
	if t := s.cfg.IdleTimeout / 4; t > 0 && t < tick {
		tick = t
	}
	if t := s.cfg.FrameReadTimeout / 4; t > 0 && t < tick {
		tick = t
	}
	if t := s.cfg.WriteStallTimeout / 4; t > 0 && t < tick {
		tick = t
	}
	if t := s.cfg.TLSHandshakeTimeout / 4; s.sniffs() && t > 0 && t < tick {
		tick = t
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var idle, slow, owing []*Conn
	for {
		select {
		case <-s.stopIdle:
			return
		case now := <-t.C:
			s.clock.Store(now.UnixNano())
			if s.sniffs() {
				s.expireSniffers(now.UnixNano())
			}
			if s.cfg.IdleTimeout <= 0 && s.cfg.FrameReadTimeout <= 0 && s.cfg.WriteStallTimeout <= 0 {
				continue
			}
			cut := now.UnixNano() - int64(s.cfg.IdleTimeout)
			frameCut := now.UnixNano() - int64(s.cfg.FrameReadTimeout)
			idle, slow, owing = idle[:0], slow[:0], owing[:0]
			s.mu.Lock()
			for _, c := range s.conns {
				if s.cfg.WriteStallTimeout > 0 && c.out.(*serverOutlet).owes() {
					owing = append(owing, c)
				}
				switch since := c.since.Load(); {
				case s.cfg.FrameReadTimeout > 0 && since != 0 && since < frameCut && !c.paused.Load():
					slow = append(slow, c)
				case s.cfg.IdleTimeout > 0 && c.lastActive.Load() < cut:
					idle = append(idle, c)
				}
			}
			s.mu.Unlock()
			for _, c := range idle {
				s.log.Info("transport: closing idle connection", "remote", c.remote, "idle", s.cfg.IdleTimeout)
				_ = c.Close()
			}
			for _, c := range slow {
				s.log.Warn("transport: closing connection: a frame was not complete in time (slow sender)",
					"remote", c.remote, "unreadBytes", c.held.Load(), "frameReadTimeout", s.cfg.FrameReadTimeout)
				_ = c.Close()
			}
			for _, c := range owing {
				o := c.out.(*serverOutlet)
				if stalled, outq := o.stalled(now.UnixNano(), int64(s.cfg.WriteStallTimeout)); stalled {
					s.log.Warn("transport: closing connection: its peer took none of the pending output in time (it does not read)",
						"remote", c.remote, "unsent", o.unsent.Load(), "kernelSendQueue", outq, "writeStallTimeout", s.cfg.WriteStallTimeout)
					_ = c.Close()
				}
			}
			clear(idle)
			clear(slow)
			clear(owing)
		}
	}
}

// events is the gnet event handler of one Server.
type events struct {
	gnet.BuiltinEventEngine
	s *Server
}

func (e *events) OnBoot(eng gnet.Engine) gnet.Action {
	s := e.s
	fd, err := eng.Dup()
	if err != nil {
		s.runErr <- fmt.Errorf("dup listener: %w", err)
		return gnet.Shutdown
	}
	sa, err := unix.Getsockname(fd)
	_ = unix.Close(fd)
	if err != nil {
		s.runErr <- fmt.Errorf("listener address: %w", err)
		return gnet.Shutdown
	}
	switch a := sa.(type) {
	case *unix.SockaddrInet4:
		s.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	case *unix.SockaddrInet6:
		s.addr = net.JoinHostPort(net.IP(a.Addr[:]).String(), strconv.Itoa(a.Port))
	default:
		s.addr = s.cfg.Addr
	}
	s.eng = eng
	close(s.booted)
	return gnet.None
}

func (e *events) OnOpen(gc gnet.Conn) ([]byte, gnet.Action) {
	if e.s.sniffs() {
		e.openSniffer(gc) // the Conn comes with the first bytes (sniff.go)
		return nil, gnet.None
	}
	e.open(gc, addrString(gc.RemoteAddr()))
	return nil, gnet.None
}

// open makes and announces the Conn of a plaintext gnet connection.
func (e *events) open(gc gnet.Conn, remote string) *Conn {
	s := e.s
	id := s.ids.Add(1)
	out := newServerOutlet(gc, s, s.writers.pick(id))
	c := newConn(id, remote, addrString(gc.LocalAddr()), out, s.log)
	out.conn = c
	c.rt = s.router
	c.maxInflight = int32(s.cfg.MaxInflightPerConn)
	c.gateFD = gnetPollerFD(gc)
	c.wakeFn = func() { _ = gc.Wake(nil) } // gnet ignores a wake of a closed conn
	c.lastActive.Store(s.clock.Load())
	gc.SetContext(c)
	s.mu.Lock()
	s.conns[c.id] = c
	s.mu.Unlock()
	if s.cfg.OnConnect != nil {
		s.cfg.OnConnect(c)
	}
	return c
}

func (e *events) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*Conn)
	if c == nil {
		if _, ok := gc.Context().(*sniffer); ok {
			e.s.mu.Lock()
			delete(e.s.sniffing, gc)
			e.s.mu.Unlock()
		}
		return gnet.None
	}
	s := e.s
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
	if c.markClosed() {
		c.out.abort()
		s.unread.Add(-c.held.Swap(0))
		c.part.reset()                        // OnClose runs on the connection's loop
		if v := c.evictHeld.Swap(0); v != 0 { // after markClosed: see evictOldest
			s.evicting.Add(-v)
		}
		c.since.Store(0)
		s.log.Debug("transport: connection closed", "remote", c.remote, "err", err)
		if s.cfg.OnClose != nil {
			s.cfg.OnClose(c)
		}
	}
	return gnet.None
}

// OnTraffic decodes and routes the complete frames buffered on gc — unless
// the connection is paused: its unsent replies passed WriteHighWater (or
// the server's total passed MaxUnsentTotal), it has MaxInflightPerConn
// requests in flight, or a big header of it is being decoded off the loop
// or waits for the budget. A paused connection is not read (readgate.go):
// what gnet had already read stays with it, bounded by MaxUnreadPerConn
// and MaxUnreadTotal, the rest in the kernel, until whoever lowers the
// reason wakes the loop.
func (e *events) OnTraffic(gc gnet.Conn) gnet.Action {
	c, _ := gc.Context().(*Conn)
	if c == nil {
		sn, ok := gc.Context().(*sniffer)
		if !ok {
			return gnet.None
		}
		var a gnet.Action
		if c, a = e.sniff(gc, sn); c == nil {
			return a
		}
	}
	if c.evicted.Load() {
		return gnet.Close
	}
	s := e.s
	o := c.out.(*serverOutlet)
	c.woken.Store(false) // from here on, a new reason to look again queues a new wake
	if c.paused.Load() {
		if !e.mayResume(c, o) {
			return e.account(gc, c, false)
		}
		c.paused.Store(false)
		c.startReading(o.fd)
		if c.since.Load() != 0 {
			c.since.Store(s.clock.Load()) // the frame deadline starts now, not when the pause began
		}
	}
	var out *outBuf
	action, frames := e.drain(gc, c, o, &out)
	if out != nil {
		// The replies of inline handlers, batched per read.
		if err := o.send(pendingWrite{buf: out}, true); err != nil && !errors.Is(err, ErrConnClosed) {
			action = gnet.Close
		}
	}
	if frames {
		// Only complete frames count as activity: a peer dribbling one
		// frame forever is not kept alive by it.
		c.lastActive.Store(s.clock.Load())
	}
	if action != gnet.None {
		return action
	}
	return e.account(gc, c, frames)
}

// pause reports whether c must not be read now, and marks it paused if so.
// The reason is checked again after paused is set: whoever lowers it
// checks paused afterwards, so either they wake the loop or the loop sees
// the lower value (no lost wake-up).
func (e *events) pause(c *Conn, o *serverOutlet) bool {
	cfg := &e.s.cfg
	u := o.unsent.Load()
	if u <= cfg.WriteHighWater && c.inflight.Load() < int32(cfg.MaxInflightPerConn) &&
		(u == 0 || e.s.unsent.Load() <= cfg.MaxUnsentTotal) && !c.decoding.Load() && !c.bigWait.Load() {
		return false
	}
	c.paused.Store(true)
	c.since.Store(e.s.clock.Load())
	c.sinceSeq.Store(e.s.seq.Add(1))
	if e.mayResume(c, o) {
		c.paused.Store(false)
		return false
	}
	e.s.pauses.Add(1)
	c.stopReading(o.fd) // its requests wait in the kernel (readgate.go)
	return true
}

// mayResume reports whether a paused connection may be read again: every
// reason is below its low mark.
func (e *events) mayResume(c *Conn, o *serverOutlet) bool {
	cfg := &e.s.cfg
	u := o.unsent.Load()
	return u <= cfg.WriteLowWater && c.inflight.Load() <= int32(cfg.MaxInflightPerConn/2) &&
		(u == 0 || e.s.unsent.Load() <= cfg.MaxUnsentTotal) && !c.decoding.Load() && !c.bigWait.Load()
}

// account records the inbound bytes c leaves in gnet's buffers after this
// call (frames says whether some frame completed, so a new one began) and
// enforces MaxUnreadPerConn and MaxUnreadTotal.
func (e *events) account(gc gnet.Conn, c *Conn, frames bool) gnet.Action {
	s := e.s
	if c.paused.Load() {
		// Not decoded for now: out of gnet's doubling ring (see partChunk).
		c.part.take(gc, gc.InboundBuffered())
	}
	held := int64(gc.InboundBuffered() + c.part.n) // gnet keeps what is left, this read's bytes included
	if held == 0 && c.held.Load() == 0 {
		c.since.Store(0) // the usual case: every frame was whole
		return gnet.None
	}
	switch {
	case held == 0:
		c.since.Store(0)
	case c.paused.Load():
		// since is when the pause began.
	case frames || c.since.Load() == 0:
		c.since.Store(s.clock.Load())
		c.sinceSeq.Store(s.seq.Add(1))
	}
	if held > s.cfg.MaxUnreadPerConn {
		s.log.Warn("transport: closing connection: too many unread bytes while its requests wait (the peer sends but does not read)",
			"remote", c.remote, "unreadBytes", held, "unsent", c.out.(*serverOutlet).unsent.Load(),
			"inflight", c.inflight.Load(), "maxUnreadBytesPerConnection", s.cfg.MaxUnreadPerConn)
		return gnet.Close
	}
	total := s.unread.Add(held - c.held.Swap(held))
	for i := 0; total-s.evicting.Load() > s.cfg.MaxUnreadTotal && i < 8; i++ {
		if !s.evictOldest() {
			break
		}
	}
	if c.evicted.Load() {
		return gnet.Close
	}
	if limit := s.cfg.MaxUnreadTotal + s.cfg.MaxUnreadTotal/4; held > bigFrame && s.unread.Load() > limit {
		// The connections closed for the budget have not let go of their
		// bytes yet (their loops are busy): this one goes now, so the real
		// total stays within a quarter over the budget. Not for a few KiB
		// of a small frame split by a read: a normal client's.
		s.log.Warn("transport: closing connection: the server's unread bytes exceed their budget while older holders are still closing",
			"remote", c.remote, "unreadBytes", held, "maxUnreadBytesTotal", s.cfg.MaxUnreadTotal)
		return gnet.Close
	}
	return gnet.None
}

// evictOldest closes the connection that has held unread bytes longest
// (a slow sender, or a peer that does not read; a legitimate big frame is
// usually the newest) and takes its bytes off the server's total at once,
// so the next one over budget does not close a second connection for the
// same bytes. It reports false when there was nobody to close.
func (s *Server) evictOldest() bool {
	var victim *Conn
	var seq uint64
	s.mu.Lock()
	for _, c := range s.conns {
		if c.held.Load() == 0 || c.evicted.Load() {
			continue
		}
		if q := c.sinceSeq.Load(); victim == nil || q < seq {
			victim, seq = c, q
		}
	}
	s.mu.Unlock()
	if victim == nil || !victim.evicted.CompareAndSwap(false, true) {
		return victim != nil
	}
	// The victim's bytes count as evicting until its OnClose. OnClose
	// marks it closed, then takes evictHeld; we store evictHeld, then look
	// at closed: whichever comes second sees the other, and Swap lets only
	// one of them subtract.
	held := victim.held.Load()
	victim.evictHeld.Store(held)
	s.evicting.Add(held)
	if victim.Closed() {
		if v := victim.evictHeld.Swap(0); v != 0 {
			s.evicting.Add(-v)
		}
	}
	s.log.Warn("transport: closing connection: the server's unread bytes exceed their budget and it held its bytes longest",
		"remote", victim.remote, "unreadBytes", held, "paused", victim.paused.Load(), "maxUnreadBytesTotal", s.cfg.MaxUnreadTotal)
	_ = victim.Close()
	return true
}

// Framing windows: frames up to bigFrame are cut out of a Peek of at
// most peekWindow bytes (no copy while gnet's ring is empty, a bounded one
// otherwise, however much a paused connection has queued); a bigger frame
// is read straight into its lease once complete (one copy).
const (
	bigFrame   = 64 << 10
	peekWindow = 256 << 10
)

// drain handles the complete frames buffered on gc, up to a pause, and
// notes the size of a trailing partial one in c.need. frames reports that
// at least one frame was taken.
func (e *events) drain(gc gnet.Conn, c *Conn, o *serverOutlet, out **outBuf) (action gnet.Action, frames bool) {
	s := e.s
	for action == gnet.None {
		avail := gc.InboundBuffered()
		if c.need > 0 {
			if !c.hdrChecked && c.part.n+avail >= 8 {
				// Refuse an oversized header before its bytes arrive.
				var w [8]byte
				c.peekIn(gc, w[:])
				hl := int(binary.BigEndian.Uint32(w[4:]) & 0xFFFFFF)
				if !e.headerFits(c, hl) {
					return gnet.Close, frames
				}
				c.hdrChecked, c.needHL = true, hl
			}
			if c.part.n+avail < c.need {
				if c.need > bigFrame || c.part.n > 0 {
					c.part.take(gc, avail) // out of gnet's ring: see partChunk
				}
				break
			}
			if !flushBig(o, out) {
				return gnet.Close, frames
			}
			if e.pause(c, o) {
				break
			}
			if c.needHL > inlineHeaderLimit && !s.admitBig(c, int64(c.need)) {
				e.waitBig(c, o)
				break
			}
			var prefix [4]byte
			c.readIn(gc, prefix[:])
			l := getLease(c.need - 4)
			c.readIn(gc, l.buf)
			c.need, c.hdrChecked, c.needHL = 0, false, 0
			frames = true
			if !e.take(c, l, out) {
				action = gnet.Close
			} else if c.decoding.Load() {
				break // paused until its big header is decoded
			}
			continue
		}
		if c.part.n > 0 {
			// A backlog taken out of gnet while paused: frame by frame.
			if c.part.n+avail < 4 {
				c.part.take(gc, avail)
				break
			}
			var prefix [4]byte
			c.peekIn(gc, prefix[:])
			l, err := codec.FrameLength(prefix[:], s.cfg.MaxFrameLength)
			if err != nil {
				s.log.Warn("transport: bad frame, closing connection", "remote", c.remote, "err", err)
				return gnet.Close, frames
			}
			c.need = 4 + l
			continue
		}
		if avail == 0 {
			break
		}
		window := min(avail, peekWindow)
		buf, _ := gc.Peek(window)
		consumed, stop := 0, false
		for {
			rest := buf[consumed:]
			if len(rest) < 4 {
				stop = window == avail // else: more beyond the window
				break
			}
			l, err := codec.FrameLength(rest, s.cfg.MaxFrameLength)
			if err != nil {
				s.log.Warn("transport: bad frame, closing connection", "remote", c.remote, "err", err)
				action = gnet.Close
				break
			}
			if n := 4 + l; n > bigFrame || n > len(rest) {
				c.need = n // read it whole once it is complete, above
				break
			}
			if !flushBig(o, out) {
				action = gnet.Close
				break
			}
			if e.pause(c, o) {
				stop = true
				break
			}
			l4 := 4 + l
			payload := rest[4:l4]
			consumed += l4
			frames = true
			lease := getLease(len(payload))
			copy(lease.buf, payload)
			if !e.take(c, lease, out) {
				action = gnet.Close
				break
			}
			if c.decoding.Load() {
				stop = true
				break
			}
		}
		if consumed > 0 { // gnet's Discard(0) would drop everything buffered
			_, _ = gc.Discard(consumed)
		}
		if stop {
			break
		}
	}
	return action, frames
}

// take routes the frame in l: on the loop, or off it when its header is
// big. It reports false when the connection must close.
func (e *events) take(c *Conn, l *Lease, out **outBuf) bool {
	hl := 0
	if len(l.buf) >= 4 {
		hl = int(binary.BigEndian.Uint32(l.buf) & 0xFFFFFF)
	}
	if !e.headerFits(c, hl) {
		l.Release()
		return false
	}
	if hl > inlineHeaderLimit {
		e.offload(c, l)
		return true
	}
	return e.route(c, l, out, false)
}

// flushBig sends the inline replies batched so far once they are big:
// they count towards a pause only once sent. It reports false when the
// connection must close.
func flushBig(o *serverOutlet, out **outBuf) bool {
	if *out == nil || len((*out).b) < peekWindow {
		return true
	}
	b := *out
	*out = nil
	err := o.send(pendingWrite{buf: b}, true)
	return err == nil || errors.Is(err, ErrConnClosed)
}

// headerFits checks a frame's header length against MaxHeaderLength.
func (e *events) headerFits(c *Conn, hl int) bool {
	if hl <= e.s.cfg.MaxHeaderLength {
		return true
	}
	e.s.log.Warn("transport: closing connection: frame header too long",
		"remote", c.remote, "headerLength", hl, "maxHeaderLength", e.s.cfg.MaxHeaderLength)
	return false
}

// offload decodes and routes a frame with a big header on a goroutine, so
// the loop's other connections do not wait for it. c is paused until it is
// done, so its later requests are still routed after this one.
func (e *events) offload(c *Conn, l *Lease) {
	s := e.s
	c.decoding.Store(true)
	c.paused.Store(true)
	c.stopReading(c.out.(*serverOutlet).fd)
	s.pauses.Add(1)
	c.since.Store(s.clock.Load())
	c.sinceSeq.Store(s.seq.Add(1))
	s.bg.Add(1)
	n := int64(4 + len(l.buf)) // as admitted (admitBig)
	go func() {
		defer s.bg.Done()
		defer s.releaseBig(n)
		s.bigHeaders <- struct{}{}
		began := time.Now()
		var out *outBuf
		ok := true
		if c.Closed() {
			l.Release() // cut while it waited: nobody to decode it for
		} else {
			ok = e.route(c, l, &out, true)
		}
		// Pace: a decode slot passes at most bigHeaderRate bytes a second,
		// so a stream of big headers takes a bounded share of the CPU and
		// its sender, not its neighbours, waits.
		if d := time.Duration(n)*time.Second/bigHeaderRate - time.Since(began); d > 0 && !c.Closed() {
			time.Sleep(d) // pacing on this goroutine; the loop is not held
		}
		<-s.bigHeaders
		if out != nil {
			_ = c.out.(*serverOutlet).send(pendingWrite{buf: out}, false)
		}
		if !ok {
			_ = c.Close()
		}
		c.decoding.Store(false)
		c.wake()
	}()
}

// admitBig takes n bytes of the big-header budget for c's next frame, or
// queues c to be woken when bytes are released. A frame is always
// admitted when nothing else holds the budget, so any header up to
// MaxHeaderLength passes.
func (s *Server) admitBig(c *Conn, n int64) bool {
	s.bigMu.Lock()
	defer s.bigMu.Unlock()
	if s.bigBytes == 0 || s.bigBytes+n <= s.bigBudget {
		s.bigBytes += n
		return true
	}
	c.bigWait.Store(true)
	s.bigQueue = append(s.bigQueue, c)
	return false
}

// releaseBig returns n bytes of the budget and wakes the connections that
// waited for it (each asks again; one refused again queues again).
func (s *Server) releaseBig(n int64) {
	s.bigMu.Lock()
	s.bigBytes -= n
	q := s.bigQueue
	s.bigQueue = nil
	s.bigMu.Unlock()
	for _, c := range q {
		c.bigWait.Store(false)
		c.wake()
	}
}

// waitBig pauses c, whose next frame (a big header, complete in its
// buffers) waits for the budget: it is not read further meanwhile.
func (e *events) waitBig(c *Conn, o *serverOutlet) {
	s := e.s
	c.paused.Store(true)
	c.since.Store(s.clock.Load())
	c.sinceSeq.Store(s.seq.Add(1))
	s.pauses.Add(1)
	c.stopReading(o.fd)
	if !c.bigWait.Load() {
		// Released between admitBig and here: its wake may have found
		// paused unset; look again rather than wait for it.
		c.wake()
	}
}

// route decodes the frame payload in l and routes it, appending any
// immediate response to *out. A leased route borrows l; anything else
// (responses, ordinary handlers) may keep the frame forever, so it gets a
// copy of its own and l goes back to its pool. It reports false when the
// connection must close.
func (e *events) route(c *Conn, l *Lease, out **outBuf, big bool) bool {
	var err error
	if big {
		err = l.decodeBig()
	} else {
		err = l.decode()
	}
	if err != nil {
		l.Release()
		e.s.log.Warn("transport: undecodable frame, closing connection", "remote", c.remote, "err", err)
		return false
	}
	req := &l.f
	if req.IsResponse() || !e.s.router.leased(req.Code) {
		req = l.detach()
		l = nil
	}
	resp, kept := c.handleFrame(e.s.router, req, l)
	if resp != nil {
		if *out == nil {
			*out = getBuf()
		}
		(*out).b = resp.AppendTo((*out).b)
	}
	if !kept {
		l.Release()
	}
	return true
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// gnetLogger routes gnet's printf-style logs to slog; gnet's info chatter
// goes to debug.
type gnetLogger struct{ l *slog.Logger }

func (g gnetLogger) Debugf(format string, args ...any) {
	g.l.Debug("gnet: " + fmt.Sprintf(format, args...))
}
func (g gnetLogger) Infof(format string, args ...any) {
	g.l.Debug("gnet: " + fmt.Sprintf(format, args...))
}
func (g gnetLogger) Warnf(format string, args ...any) {
	g.l.Warn("gnet: " + fmt.Sprintf(format, args...))
}
func (g gnetLogger) Errorf(format string, args ...any) {
	g.l.Error("gnet: " + fmt.Sprintf(format, args...))
}
func (g gnetLogger) Fatalf(format string, args ...any) {
	g.l.Error("gnet: " + fmt.Sprintf(format, args...))
}
