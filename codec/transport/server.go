package transport

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/codec"
)

// DefaultIdleTimeout is Java's serverChannelMaxIdleTimeSeconds (120 s).
const DefaultIdleTimeout = 120 * time.Second

// ServerConfig configures a Server. The zero value of each field is usable.
type ServerConfig struct {
	// Addr is "host:port" to listen on; port 0 picks a free port (see Server.Addr).
	Addr string
	// Multicore runs one event loop per CPU instead of one.
	Multicore bool
	// ReusePort sets SO_REUSEPORT on the listener (off by default).
	ReusePort bool
	// MaxFrameLength bounds one frame, length prefix included; 0 means
	// codec.DefaultMaxFrameLength (16 MiB, Java's frameMaxLength).
	MaxFrameLength int
	// IdleTimeout closes a connection without traffic in either direction
	// for that long; 0 disables it. Java servers use DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Logger receives the transport's and gnet's logs; nil means slog.Default().
	Logger *slog.Logger
	// OnConnect and OnClose run on the connection's event loop, so they
	// must be quick and must not block. OnClose runs exactly once per
	// connection, after pending invokes on it have failed.
	OnConnect, OnClose func(*Conn)
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

	// clock is a coarse unix-nano time refreshed by the idle checker, so
	// noting a connection's activity costs one atomic store.
	clock atomic.Int64

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
	if cfg.MaxFrameLength <= 0 {
		cfg.MaxFrameLength = codec.DefaultMaxFrameLength
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if r == nil {
		r = NewRouter()
	}
	s := &Server{
		cfg:      cfg,
		router:   r,
		log:      cfg.Logger,
		conns:    make(map[uint64]*Conn),
		booted:   make(chan struct{}),
		runErr:   make(chan error, 1),
		stopIdle: make(chan struct{}),
		idleDone: make(chan struct{}),
	}
	s.clock.Store(time.Now().UnixNano())
	return s
}

// Start listens on cfg.Addr and returns once the listener is bound.
func (s *Server) Start() error {
	h := &events{s: s}
	opts := []gnet.Option{
		gnet.WithMulticore(s.cfg.Multicore),
		gnet.WithReusePort(s.cfg.ReusePort),
		gnet.WithReuseAddr(true), // as Java's server bootstrap does
		gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(gnetLogger{s.log}),
	}
	s.writers = startWriters(s.cfg.Multicore)
	go func() { s.runErr <- gnet.Run(h, "tcp://"+s.cfg.Addr, opts...) }()
	select {
	case <-s.booted:
	case err := <-s.runErr:
		s.writers.close()
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
		s.writers.close() // every connection is closed: nothing is left to write
	})
	return s.closeErr
}

// ConnCount is the number of open connections.
func (s *Server) ConnCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// idleLoop refreshes the coarse clock and closes idle connections.
func (s *Server) idleLoop() {
	defer close(s.idleDone)
	tick := time.Second
	if t := s.cfg.IdleTimeout / 4; t > 0 && t < tick {
		tick = t
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var idle []*Conn
	for {
		select {
		case <-s.stopIdle:
			return
		case now := <-t.C:
			s.clock.Store(now.UnixNano())
			if s.cfg.IdleTimeout <= 0 {
				continue
			}
			cut := now.UnixNano() - int64(s.cfg.IdleTimeout)
			idle = idle[:0]
			s.mu.Lock()
			for _, c := range s.conns {
				if c.lastActive.Load() < cut {
					idle = append(idle, c)
				}
			}
			s.mu.Unlock()
			for _, c := range idle {
				s.log.Info("transport: closing idle connection", "remote", c.remote, "idle", s.cfg.IdleTimeout)
				_ = c.Close()
			}
			clear(idle)
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
	s := e.s
	id := s.ids.Add(1)
	out := newServerOutlet(gc, &s.clock, s.writers.pick(id))
	c := newConn(id, addrString(gc.RemoteAddr()), addrString(gc.LocalAddr()), out, s.log)
	out.conn = c
	c.lastActive.Store(s.clock.Load())
	gc.SetContext(c)
	s.mu.Lock()
	s.conns[c.id] = c
	s.mu.Unlock()
	if s.cfg.OnConnect != nil {
		s.cfg.OnConnect(c)
	}
	return nil, gnet.None
}

func (e *events) OnClose(gc gnet.Conn, err error) gnet.Action {
	c, _ := gc.Context().(*Conn)
	if c == nil {
		return gnet.None
	}
	s := e.s
	s.mu.Lock()
	delete(s.conns, c.id)
	s.mu.Unlock()
	if c.markClosed() {
		c.out.abort()
		s.log.Debug("transport: connection closed", "remote", c.remote, "err", err)
		if s.cfg.OnClose != nil {
			s.cfg.OnClose(c)
		}
	}
	return gnet.None
}

func (e *events) OnTraffic(gc gnet.Conn) gnet.Action {
	c := gc.Context().(*Conn)
	s := e.s
	c.lastActive.Store(s.clock.Load())
	var out *outBuf
	action := gnet.None
	if c.need > 0 {
		if gc.InboundBuffered() < c.need {
			return gnet.None // the frame in progress is still incomplete
		}
		// The frame that spanned reads is complete: copy it once, straight
		// from gnet's buffers into a pooled payload.
		var prefix [4]byte
		_, _ = gc.Read(prefix[:])
		l := getLease(c.need - 4)
		_, _ = gc.Read(l.buf)
		c.need = 0
		if !e.handle(c, l, &out) {
			action = gnet.Close
		}
	}
	if action == gnet.None && gc.InboundBuffered() > 0 {
		action = e.drain(gc, c, &out)
	}
	if out != nil {
		// The replies of inline handlers, batched per read.
		if err := c.out.(*serverOutlet).send(pendingWrite{buf: out}, true); err != nil && !errors.Is(err, ErrConnClosed) {
			action = gnet.Close
		}
	}
	return action
}

// drain handles every complete frame buffered on gc and notes the size of
// a trailing partial one in c.need.
func (e *events) drain(gc gnet.Conn, c *Conn, out **outBuf) gnet.Action {
	s := e.s
	buf, _ := gc.Peek(-1)
	consumed := 0
	action := gnet.None
	for {
		payload, n, err := codec.NextFrame(buf[consumed:], s.cfg.MaxFrameLength)
		if err != nil {
			s.log.Warn("transport: bad frame, closing connection", "remote", c.remote, "err", err)
			action = gnet.Close
			break
		}
		if n == 0 {
			if rest := buf[consumed:]; len(rest) >= 4 {
				l, _ := codec.FrameLength(rest, s.cfg.MaxFrameLength)
				c.need = 4 + l
			}
			break
		}
		consumed += n
		l := getLease(len(payload))
		copy(l.buf, payload)
		if !e.handle(c, l, out) {
			action = gnet.Close
			break
		}
	}
	if consumed > 0 { // gnet's Discard(0) would drop everything buffered
		_, _ = gc.Discard(consumed)
	}
	return action
}

// handle decodes the frame payload in l and routes it, appending any
// immediate response to *out. A leased route borrows l; anything else
// (responses, ordinary handlers) may keep the frame forever, so it gets a
// copy of its own and l goes back to its pool. It reports false when the
// connection must close.
func (e *events) handle(c *Conn, l *Lease, out **outBuf) bool {
	if err := l.decode(); err != nil {
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
