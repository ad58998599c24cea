package ha

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// The slave half of the replication core, shared by classic HA (this
// package's Client) and AutoSwitch: a Link keeps one connection to the
// master (reconnecting with a doubling backoff), runs the protocol's
// Open (AutoSwitch's handshake and truncation), then a receive loop that
// appends each frame's body (Store.AppendRaw) and a report goroutine that
// reports the slave's offset on entering the transfer, after each append
// that grew it, and every HeartbeatInterval.

// LinkConfig configures a Link; zero values take Java's defaults (both
// protocols').
type LinkConfig struct {
	// Name prefixes the log messages and errors ("ha", "autoswitch").
	Name string
	// HeartbeatInterval: the slave reports at least this often.
	HeartbeatInterval time.Duration
	// HousekeepingInterval: a master silent this long is dropped; it
	// bounds every report write too.
	HousekeepingInterval time.Duration
	// ReconnectInterval caps the reconnect backoff.
	ReconnectInterval time.Duration
	// MinBackoff is the first reconnect wait, doubling up to
	// ReconnectInterval.
	MinBackoff time.Duration
	// DialTimeout bounds a connect and its TLS handshake.
	DialTimeout time.Duration
	// TLS, when set, dials the master with TLS.
	TLS *tls.Config
	// ErrOffsetNotEqual is the protocol's error for a frame at an offset
	// other than the slave's received end.
	ErrOffsetNotEqual error
	Logger            *slog.Logger
}

func (c *LinkConfig) fill() {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second // haSendHeartbeatInterval
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second // haHousekeepingInterval
	}
	if c.ReconnectInterval <= 0 {
		c.ReconnectInterval = 5 * time.Second // Java waits 5 s
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second // RemotingHelper.connect
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// SlaveProtocol is what a protocol adds to a Link.
type SlaveProtocol interface {
	// Open starts a session on a new connection; r buffers conn's reads.
	Open(conn net.Conn, r *bufio.Reader) (SlaveSession, error)
	// Ended runs after each session, once its connection is closed.
	Ended()
}

// SlaveSession is one connection's protocol state. Next, Accept and
// Appended run on the receive goroutine, Report on the report goroutine.
type SlaveSession interface {
	// Next reads the next transfer frame: its offset and body (valid
	// until the next call).
	Next() (offset int64, body []byte, err error)
	// Accept vets a frame before its body is appended (AutoSwitch records
	// its epoch).
	Accept(offset int64, body []byte) error
	// Appended runs after a frame (a heartbeat too) was taken.
	Appended()
	// Report appends the report of the slave's offset to dst and
	// returns the offset it reported.
	Report(dst []byte) ([]byte, int64)
}

// Link is the slave side of the replication core.
type Link struct {
	cfg   LinkConfig
	st    SlaveStore
	proto SlaveProtocol
	log   *slog.Logger
	wake  chan struct{} // SetMasterAddr, Close
	quit  chan struct{}
	wg    sync.WaitGroup
	once  sync.Once
	rate  Rate

	mu         sync.Mutex
	master     string
	conn       net.Conn // current connection, nil when none
	connected  bool
	reported   int64
	lastRead   time.Time
	lastWrite  time.Time
	closeCount int // connections closed (tests, status)
}

// NewLink makes a slave link running proto; Start runs it.
func NewLink(cfg LinkConfig, st SlaveStore, proto SlaveProtocol) *Link {
	cfg.fill()
	return &Link{cfg: cfg, st: st, proto: proto, log: cfg.Logger, wake: make(chan struct{}, 1), quit: make(chan struct{})}
}

// SetMasterAddr sets the master's HA address; "" disconnects. A change
// closes the current connection.
func (c *Link) SetMasterAddr(addr string) {
	c.mu.Lock()
	if c.master == addr {
		c.mu.Unlock()
		return
	}
	c.master = addr
	if c.conn != nil {
		_ = c.conn.Close()
	}
	c.mu.Unlock()
	c.log.Info(c.cfg.Name+": master address", "addr", addr)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// MasterAddr is the master's HA address ("" none).
func (c *Link) MasterAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master
}

// Status reports the connection.
func (c *Link) Status() ClientStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClientStatus{MasterAddr: c.master, Connected: c.connected, ReportedOffset: c.reported, LastRead: c.lastRead,
		LastWrite: c.lastWrite, TransferredBytesPerSecond: c.rate.PerSecond(time.Now())}
}

// HousekeepingInterval is the bound of a read or write (a handshake's).
func (c *Link) HousekeepingInterval() time.Duration { return c.cfg.HousekeepingInterval }

// Disconnects counts the connections closed so far.
func (c *Link) Disconnects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeCount
}

// Start runs the connect loop until Close.
func (c *Link) Start() {
	c.wg.Add(1)
	go c.run()
}

// Close disconnects and stops.
func (c *Link) Close() error {
	c.once.Do(func() {
		close(c.quit)
		c.mu.Lock()
		if c.conn != nil {
			_ = c.conn.Close()
		}
		c.mu.Unlock()
		c.wg.Wait()
	})
	return nil
}

func (c *Link) run() {
	defer c.wg.Done()
	backoff := c.cfg.MinBackoff
	t := time.NewTimer(0)
	defer t.Stop()
	<-t.C
	for {
		select {
		case <-c.quit:
			return
		default:
		}
		addr := c.MasterAddr()
		if addr != "" {
			start := time.Now()
			err := c.session(addr)
			c.log.Warn(c.cfg.Name+": master connection closed", "addr", addr, "err", err)
			c.proto.Ended()
			if time.Since(start) > c.cfg.ReconnectInterval {
				backoff = c.cfg.MinBackoff
			}
		}
		wait := backoff
		if addr == "" {
			wait = c.cfg.ReconnectInterval
		}
		t.Reset(wait)
		select {
		case <-c.quit:
			return
		case <-c.wake:
			backoff = c.cfg.MinBackoff
		case <-t.C:
			backoff = min(2*backoff, c.cfg.ReconnectInterval)
		}
		if !t.Stop() {
			select {
			case <-t.C:
			default:
			}
		}
	}
}

// session runs one connection until it fails.
func (c *Link) session(addr string) error {
	conn, err := tlsconf.Dial("tcp", addr, c.cfg.DialTimeout, c.cfg.TLS)
	if err != nil {
		return fmt.Errorf("%s: connect %s: %w", c.cfg.Name, addr, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	c.mu.Lock()
	if c.master != addr {
		c.mu.Unlock()
		_ = conn.Close()
		return errors.New(c.cfg.Name + ": master address changed")
	}
	select {
	case <-c.quit:
		c.mu.Unlock()
		_ = conn.Close()
		return errors.New(c.cfg.Name + ": closed")
	default:
	}
	c.conn, c.connected = conn, true
	c.mu.Unlock()
	c.log.Info(c.cfg.Name+": connected to master", "addr", addr)
	defer func() {
		_ = conn.Close()
		c.mu.Lock()
		c.conn, c.connected = nil, false
		c.closeCount++
		c.mu.Unlock()
	}()

	ss, err := c.proto.Open(conn, bufio.NewReaderSize(conn, 64<<10))
	if err != nil {
		return err
	}
	appended := make(chan struct{}, 1)
	done := make(chan struct{})
	var werr atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := c.report(conn, ss, appended, done); err != nil {
			werr.Store(err)
			_ = conn.Close()
		}
	}()
	err = c.receive(conn, ss, appended)
	close(done)
	_ = conn.Close()
	wg.Wait()
	if e, ok := werr.Load().(error); ok && e != nil {
		return e
	}
	return err
}

// report writes the slave's reports: at once, when an append grew the
// offset (woken by receive, never on a poll interval), and every
// HeartbeatInterval (Java reportSlaveMaxOffsetPlus and
// isTimeToReportOffset).
func (c *Link) report(conn net.Conn, ss SlaveSession, appended, done <-chan struct{}) error {
	var buf [32]byte
	last := int64(-1)
	tick := time.NewTicker(c.cfg.HeartbeatInterval)
	defer tick.Stop()
	send := func(force bool) error {
		b, off := ss.Report(buf[:0])
		if !force && off <= last {
			return nil
		}
		_ = conn.SetWriteDeadline(time.Now().Add(c.cfg.HousekeepingInterval))
		if _, err := conn.Write(b); err != nil {
			return fmt.Errorf("%s: report %d: %w", c.cfg.Name, off, err)
		}
		last = off
		c.mu.Lock()
		c.reported, c.lastWrite = off, time.Now()
		c.mu.Unlock()
		return nil
	}
	if err := send(true); err != nil {
		return err
	}
	for {
		var err error
		select {
		case <-done:
			return nil
		case <-appended:
			err = send(false)
		case <-tick.C:
			err = send(true)
		}
		if err != nil {
			return err
		}
	}
}

// receive appends the master's frames.
func (c *Link) receive(conn net.Conn, ss SlaveSession, appended chan<- struct{}) error {
	for {
		_ = conn.SetReadDeadline(time.Now().Add(c.cfg.HousekeepingInterval))
		off, body, err := ss.Next()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return fmt.Errorf("%s: housekeeping: nothing from the master for %v: %w", c.cfg.Name, c.cfg.HousekeepingInterval, err)
			}
			return err
		}
		now := time.Now()
		c.mu.Lock()
		c.lastRead = now
		c.mu.Unlock()
		recv := c.st.ReceivedOffset()
		// compat: Java skips the check on an empty slave (offset 0), which
		// takes the master's first or last segment; AppendRaw checks it.
		if recv != 0 && off != recv {
			return fmt.Errorf("%w: slave %d, master %d", c.cfg.ErrOffsetNotEqual, recv, off)
		}
		if err := ss.Accept(off, body); err != nil {
			return err
		}
		if len(body) > 0 {
			if err := c.st.AppendRaw(off, body); err != nil {
				return fmt.Errorf("%s: append %d bytes at %d: %w", c.cfg.Name, len(body), off, err)
			}
			c.rate.Add(int64(len(body)), now)
		}
		ss.Appended()
		if len(body) > 0 {
			select {
			case appended <- struct{}{}:
			default:
			}
		}
	}
}
