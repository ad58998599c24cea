package ha

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/store"
)

// The master half of the replication core, shared by classic HA (this
// package's Server) and AutoSwitch (package autoswitch): a Hub accepts
// slaves and runs one Conn per slave, a reader goroutine taking the
// slave's reports and a writer goroutine streaming the commit log. What a
// protocol adds (its handshake, its frame header, AutoSwitch's epoch cut
// and SyncStateSet) it adds through a MasterSession, one per connection.

// TransferStore is what a Hub reads of the master's store (*store.Store).
type TransferStore interface {
	ReadRaw(offset int64, max int, v *store.RawView) error
	WatchRaw(ch chan struct{}) (stop func())
}

// HubConfig configures a Hub; zero values take Java's defaults (both
// protocols').
type HubConfig struct {
	// Name prefixes the log messages ("ha", "autoswitch").
	Name string
	// Addr is the listen address (haListenPort; ":0" picks a port).
	Addr string
	// TLS, when set, makes the port TLS-only (ours: Java's HA is plain
	// TCP); the handshake runs on a slave's first read.
	TLS *tls.Config
	// TransferBatchSize bounds a frame's body (haTransferBatchSize).
	TransferBatchSize int
	// HeartbeatInterval: an idle connection gets an empty frame this often.
	HeartbeatInterval time.Duration
	// HousekeepingInterval bounds every read of a report and every write.
	HousekeepingInterval time.Duration
	Logger               *slog.Logger
}

func (c *HubConfig) fill() {
	if c.TransferBatchSize <= 0 {
		c.TransferBatchSize = 32 << 10 // haTransferBatchSize
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second // haSendHeartbeatInterval
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second // haHousekeepingInterval
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// MasterSession is one protocol's part of one slave connection. The
// reader goroutine calls ReadReport, Start, Started and Acked; the writer
// goroutine calls Prepare, BeginTransfer, Limit, AppendHeader, Sending
// and CaughtUp; Closed runs once, after the connection left the Hub.
// A session that closes the connection itself calls Conn.Shut with its
// own reason.
type MasterSession interface {
	// ReadReport reads the slave's next message. report says it is a
	// transfer report of off; otherwise the session handled it (a
	// handshake) or shut the connection.
	ReadReport(r *bufio.Reader) (off int64, report bool, err error)
	// Start decides where the transfer starts from the first report;
	// false: the session shut the connection.
	Start(off int64) (from int64, ok bool)
	// Started runs once the transfer start is published.
	Started(off int64)
	// Acked runs after each later report, clamped to what was sent;
	// grew says the acknowledgement rose.
	Acked(off int64, grew bool)
	// Prepare runs on the writer before the transfer starts (AutoSwitch
	// answers the handshake); false ends the writer.
	Prepare() bool
	// BeginTransfer runs once the transfer start is known; false ends the
	// writer.
	BeginTransfer(from int64) bool
	// Limit bounds the next frame at next: the bytes it may carry
	// (math.MaxInt64: a segment's worth), 0 to read nothing now; ok false
	// ends the writer (the session shut the connection).
	Limit(next int64) (n int64, ok bool)
	// AppendHeader appends the wire header of a frame at next carrying
	// n body bytes.
	AppendHeader(dst []byte, next int64, n int) []byte
	// Sending runs before a data frame is written.
	Sending()
	// CaughtUp runs when there is nothing to send.
	CaughtUp()
	// Closed runs after the connection was removed from the Hub.
	Closed()
	// LogAttrs are the session's attributes in the Hub's log lines.
	LogAttrs() []any
}

// Hub accepts slave connections and runs them with S, the protocol's
// session.
type Hub[S MasterSession] struct {
	cfg  HubConfig
	st   TransferStore
	log  *slog.Logger
	ln   net.Listener
	open func(*Conn[S]) S
	wg   sync.WaitGroup
	once sync.Once
	quit chan struct{}

	// Mu guards the connection set; a protocol guards its own state with
	// it too, so one lock orders both. The Hub never holds it while
	// calling a session.
	Mu    sync.Mutex
	conns map[*Conn[S]]struct{}
	done  bool
}

// NewHub listens on cfg.Addr; open makes the session of each accepted
// connection. Start serves.
func NewHub[S MasterSession](cfg HubConfig, st TransferStore, open func(*Conn[S]) S) (*Hub[S], error) {
	cfg.fill()
	ln, err := tlsconf.Listen("tcp", cfg.Addr, cfg.TLS)
	if err != nil {
		return nil, fmt.Errorf("%s: listen %s: %w", cfg.Name, cfg.Addr, err)
	}
	return &Hub[S]{cfg: cfg, st: st, log: cfg.Logger, ln: ln, open: open, quit: make(chan struct{}),
		conns: map[*Conn[S]]struct{}{}}, nil
}

// Addr is the listening address.
func (h *Hub[S]) Addr() net.Addr { return h.ln.Addr() }

// Start accepts slaves until Close.
func (h *Hub[S]) Start() {
	h.wg.Add(1)
	go h.accept()
}

// ConnsLocked is the connection set; Mu held, read only.
func (h *Hub[S]) ConnsLocked() map[*Conn[S]]struct{} { return h.conns }

// Close stops listening and drops every slave.
func (h *Hub[S]) Close() error {
	var err error
	h.once.Do(func() {
		err = h.ln.Close()
		close(h.quit)
		h.Mu.Lock()
		h.done = true
		cs := make([]*Conn[S], 0, len(h.conns))
		for c := range h.conns {
			cs = append(cs, c)
		}
		h.Mu.Unlock()
		for _, c := range cs {
			c.Shut("server closed")
		}
		h.wg.Wait()
	})
	return err
}

func (h *Hub[S]) accept() {
	defer h.wg.Done()
	for {
		nc, err := h.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			h.log.Warn(h.cfg.Name+": accept", "err", err)
			select {
			case <-time.After(10 * time.Millisecond): // compat: Java's accept loop backs off too
			case <-h.quit:
				return
			}
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c := &Conn[S]{h: h, nc: nc, addr: nc.RemoteAddr().String(), started: make(chan struct{}), quit: make(chan struct{})}
		c.acked.Store(-1)
		c.from.Store(-1)
		c.S = h.open(c)
		h.Mu.Lock()
		if h.done {
			h.Mu.Unlock()
			_ = nc.Close()
			return
		}
		h.conns[c] = struct{}{}
		h.Mu.Unlock()
		h.log.Info(h.cfg.Name+": slave connected", "addr", c.addr)
		h.wg.Add(2)
		go c.read()
		go c.write()
	}
}

// Conn is one slave connection of a Hub.
type Conn[S MasterSession] struct {
	h       *Hub[S]
	nc      net.Conn
	addr    string
	started chan struct{} // closed by the first report
	quit    chan struct{}
	once    sync.Once
	from    atomic.Int64 // transfer start, -1 before the first report
	sent    atomic.Int64 // end of the bytes written to the socket
	acked   atomic.Int64 // clamped acknowledgement, -1 before a report
	rate    Rate

	// S is the protocol's session (set before the goroutines start).
	S S
}

// Addr is the slave's address.
func (c *Conn[S]) Addr() string { return c.addr }

// Done is closed when the connection is shut.
func (c *Conn[S]) Done() <-chan struct{} { return c.quit }

// From is where the transfer started (-1 before the first report).
func (c *Conn[S]) From() int64 { return c.from.Load() }

// Sent is the end of what was written to the socket.
func (c *Conn[S]) Sent() int64 { return c.sent.Load() }

// Acked is the clamped acknowledgement (-1 before a report).
func (c *Conn[S]) Acked() int64 { return c.acked.Load() }

// BytesPerSecond is the body bytes sent in the last complete second.
func (c *Conn[S]) BytesPerSecond(now time.Time) int64 { return c.rate.PerSecond(now) }

// Write writes b within HousekeepingInterval (a handshake reply).
func (c *Conn[S]) Write(b []byte) error {
	_ = c.nc.SetWriteDeadline(time.Now().Add(c.h.cfg.HousekeepingInterval))
	_, err := c.nc.Write(b)
	return err
}

// Shut closes the connection once, removes it from the Hub and runs the
// session's Closed.
func (c *Conn[S]) Shut(why string, args ...any) {
	c.once.Do(func() {
		close(c.quit)
		_ = c.nc.Close()
		h := c.h
		h.Mu.Lock()
		delete(h.conns, c)
		h.Mu.Unlock()
		c.S.Closed()
		attrs := append([]any{"addr", c.addr}, c.S.LogAttrs()...)
		h.log.Info(h.cfg.Name+": slave connection closed", append(append(attrs, "why", why), args...)...)
	})
}

// read takes the slave's messages: the first report starts the transfer,
// each later one is an acknowledgement.
func (c *Conn[S]) read() {
	defer c.h.wg.Done()
	h := c.h
	r := bufio.NewReaderSize(c.nc, 4<<10)
	for {
		_ = c.nc.SetReadDeadline(time.Now().Add(h.cfg.HousekeepingInterval))
		off, report, err := c.S.ReadReport(r)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.Shut("housekeeping: nothing read", "interval", h.cfg.HousekeepingInterval)
			} else {
				c.Shut("read", "err", err)
			}
			return
		}
		if !report {
			select {
			case <-c.quit:
				return
			default:
				continue
			}
		}
		if c.from.Load() < 0 {
			if !c.begin(off) {
				return
			}
			continue
		}
		if !c.ack(off) {
			return
		}
	}
}

// begin publishes the transfer start the session decided.
func (c *Conn[S]) begin(off int64) bool {
	from, ok := c.S.Start(off)
	if !ok {
		return false
	}
	c.sent.Store(from)
	c.from.Store(from)
	if off > 0 {
		c.acked.Store(off)
	}
	c.S.Started(off)
	attrs := append([]any{"addr", c.addr}, c.S.LogAttrs()...)
	c.h.log.Info(c.h.cfg.Name+": transfer starts", append(attrs, "report", off, "from", from)...)
	close(c.started)
	return true
}

// ack takes a report after the first.
func (c *Conn[S]) ack(off int64) bool {
	prev := c.acked.Load()
	if off < prev {
		c.Shut("report went backwards", "report", off, "acked", prev)
		return false
	}
	if sent := c.sent.Load(); off > sent {
		// apache/rocketmq#3015: a slave cannot have more than it was sent.
		c.h.log.Warn(c.h.cfg.Name+": slave reports past what it was sent; clamped", "addr", c.addr, "report", off, "sent", sent)
		off = sent
	}
	grew := off > prev
	if grew {
		c.acked.Store(off)
	}
	c.S.Acked(off, grew)
	return true
}

// write waits for the session to be ready and streams frames from the
// transfer start: at most TransferBatchSize and the session's Limit, never
// across a segment (ReadRaw), an empty frame after HeartbeatInterval of
// silence. It wakes on WatchRaw (every append) and on the heartbeat timer.
func (c *Conn[S]) write() {
	defer c.h.wg.Done()
	h := c.h
	if !c.S.Prepare() {
		return
	}
	select {
	case <-c.started:
	case <-c.quit:
		return
	}
	next := c.from.Load()
	if !c.S.BeginTransfer(next) {
		return
	}
	wake := make(chan struct{}, 1)
	stop := h.st.WatchRaw(wake)
	defer stop()
	var (
		v     store.RawView
		hbuf  [64]byte
		iov   = make([][]byte, 2) // WriteTo consumes its slice, not this one
		timer = time.NewTimer(h.cfg.HeartbeatInterval)
	)
	defer timer.Stop()
	defer v.Release()
	lastWrite := time.Now()
	send := func(body []byte) bool {
		iov[0], iov[1] = c.S.AppendHeader(hbuf[:0], next, len(body)), body
		bufs := net.Buffers(iov)
		_ = c.nc.SetWriteDeadline(time.Now().Add(h.cfg.HousekeepingInterval))
		_, err := bufs.WriteTo(c.nc)
		iov[1] = nil
		if err != nil {
			c.Shut("write", "err", err)
			return false
		}
		lastWrite = time.Now()
		c.rate.Add(int64(len(body)), lastWrite)
		return true
	}
	for {
		limit, ok := c.S.Limit(next)
		if !ok {
			return
		}
		if limit > 0 {
			if err := h.st.ReadRaw(next, h.cfg.TransferBatchSize, &v); err != nil {
				c.Shut("read commit log", "offset", next, "err", err)
				return
			}
		}
		if n := int64(len(v.Data)); n > 0 {
			n = min(n, limit)
			c.S.Sending()
			// Published before the write: the slave's ack may beat the
			// write's return.
			c.sent.Store(next + n)
			ok := send(v.Data[:n])
			v.Release()
			if !ok {
				return
			}
			next += n
			continue
		}
		c.S.CaughtUp()
		idle := time.Since(lastWrite)
		if idle >= h.cfg.HeartbeatInterval {
			if !send(nil) {
				return
			}
			idle = 0
		}
		timer.Reset(h.cfg.HeartbeatInterval - idle)
		select {
		case <-wake:
		case <-timer.C:
		case <-c.quit:
			return
		}
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
	}
}

// NoLimit is a Limit that bounds nothing beyond the batch and the segment.
const NoLimit = math.MaxInt64
