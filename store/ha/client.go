package ha

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/store"
)

// SlaveStore is what the Client uses of the slave's store (*store.Store).
type SlaveStore interface {
	AppendRaw(offset int64, b []byte) error
	ReceivedOffset() int64
}

// ClientConfig configures a Client. Zero values take Java's defaults.
type ClientConfig struct {
	// HeartbeatInterval: the slave reports at least this often
	// (haSendHeartbeatInterval, 5 s).
	HeartbeatInterval time.Duration
	// HousekeepingInterval: a master silent this long is dropped
	// (haHousekeepingInterval, 20 s).
	HousekeepingInterval time.Duration
	// ReconnectInterval caps the reconnect backoff (Java waits 5 s).
	ReconnectInterval time.Duration
	// MinBackoff is the first reconnect wait (100 ms), doubling up to
	// ReconnectInterval.
	MinBackoff time.Duration
	// MaxFrameBody bounds a frame's body (Java's slave read buffer, 4 MiB).
	MaxFrameBody int
	// DialTimeout bounds a connect (Java RemotingHelper.connect, 5 s).
	DialTimeout time.Duration
	// TLS, when set, dials the master with TLS (ours: Java's HA is plain
	// TCP; rocketgo.tls.ha.enable); the handshake counts in DialTimeout.
	TLS    *tls.Config
	Logger *slog.Logger
}

func (c *ClientConfig) fill() {
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second
	}
	if c.ReconnectInterval <= 0 {
		c.ReconnectInterval = 5 * time.Second
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = 100 * time.Millisecond
	}
	if c.MaxFrameBody <= 0 {
		c.MaxFrameBody = 4 << 20
	}
	if c.DialTimeout <= 0 {
		c.DialTimeout = 5 * time.Second
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// ErrOffsetNotEqual closes a connection whose master pushed a frame at an
// offset other than the slave's received end.
var ErrOffsetNotEqual = errors.New("ha: master pushed offset not equal the received offset of the slave")

// ClientStatus is the slave side as GET_BROKER_HA_STATUS shows it.
type ClientStatus struct {
	MasterAddr     string
	Connected      bool
	ReportedOffset int64
	LastRead       time.Time // last frame from the master
	LastWrite      time.Time // last report to the master
	// TransferredBytesPerSecond: body bytes received in the last second.
	TransferredBytesPerSecond int64
}

// Client is the slave side of classic HA.
type Client struct {
	cfg  ClientConfig
	st   SlaveStore
	log  *slog.Logger
	wake chan struct{} // SetMasterAddr, Close
	quit chan struct{}
	wg   sync.WaitGroup
	once sync.Once

	mu         sync.Mutex
	master     string
	conn       net.Conn // current connection, nil when none
	connected  bool
	reported   int64
	lastRead   time.Time
	lastWrite  time.Time
	rate       Rate
	closeCount int // connections closed (tests, status)
}

// NewClient makes a slave client; Start runs it.
func NewClient(cfg ClientConfig, st SlaveStore) *Client {
	cfg.fill()
	return &Client{cfg: cfg, st: st, log: cfg.Logger, wake: make(chan struct{}, 1), quit: make(chan struct{})}
}

// SetMasterAddr sets the master's HA address; "" disconnects. A change
// closes the current connection.
func (c *Client) SetMasterAddr(addr string) {
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
	c.log.Info("ha: master address", "addr", addr)
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// MasterAddr is the master's HA address ("" none).
func (c *Client) MasterAddr() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.master
}

// Status reports the connection.
func (c *Client) Status() ClientStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClientStatus{MasterAddr: c.master, Connected: c.connected, ReportedOffset: c.reported, LastRead: c.lastRead,
		LastWrite: c.lastWrite, TransferredBytesPerSecond: c.rate.PerSecond(time.Now())}
}

// Disconnects counts the connections closed so far.
func (c *Client) Disconnects() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeCount
}

// Start runs the connect loop until Close.
func (c *Client) Start() {
	c.wg.Add(1)
	go c.run()
}

// Close disconnects and stops.
func (c *Client) Close() error {
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

func (c *Client) run() {
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
			c.log.Warn("ha: master connection closed", "addr", addr, "err", err)
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
func (c *Client) session(addr string) error {
	d := net.Dialer{Timeout: c.cfg.DialTimeout}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return fmt.Errorf("ha: connect %s: %w", addr, err)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	if c.cfg.TLS != nil {
		tconn := tls.Client(conn, tlsconf.WithServerName(c.cfg.TLS, addr))
		ctx, cancel := context.WithTimeout(context.Background(), c.cfg.DialTimeout)
		err := tconn.HandshakeContext(ctx)
		cancel()
		if err != nil {
			_ = conn.Close()
			return fmt.Errorf("ha: TLS handshake with %s: %w", addr, err)
		}
		conn = tconn
	}
	c.mu.Lock()
	if c.master != addr {
		c.mu.Unlock()
		_ = conn.Close()
		return errors.New("ha: master address changed")
	}
	select {
	case <-c.quit:
		c.mu.Unlock()
		_ = conn.Close()
		return errors.New("ha: closed")
	default:
	}
	c.conn, c.connected = conn, true
	c.mu.Unlock()
	c.log.Info("ha: connected to master", "addr", addr)

	appended := make(chan struct{}, 1)
	done := make(chan struct{})
	var werr atomic.Value
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if err := c.report(conn, appended, done); err != nil {
			werr.Store(err)
			_ = conn.Close()
		}
	}()
	err = c.receive(conn, appended)
	close(done)
	_ = conn.Close()
	wg.Wait()
	c.mu.Lock()
	c.conn, c.connected = nil, false
	c.closeCount++
	c.mu.Unlock()
	if e, ok := werr.Load().(error); ok && e != nil {
		return e
	}
	return err
}

// report writes the slave's offset on connect, when an append grew it,
// and every HeartbeatInterval (Java reportSlaveMaxOffsetPlus and
// isTimeToReportOffset).
func (c *Client) report(conn net.Conn, appended, done <-chan struct{}) error {
	var b [ReportSize]byte
	last := int64(-1)
	tick := time.NewTicker(c.cfg.HeartbeatInterval)
	defer tick.Stop()
	send := func(force bool) error {
		off := c.st.ReceivedOffset()
		if !force && off <= last {
			return nil
		}
		_ = conn.SetWriteDeadline(time.Now().Add(c.cfg.HousekeepingInterval))
		if _, err := conn.Write(AppendReport(b[:0], off)); err != nil {
			return fmt.Errorf("ha: report %d: %w", off, err)
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
func (c *Client) receive(conn net.Conn, appended chan<- struct{}) error {
	fr := NewFrameReader(bufio.NewReaderSize(conn, 64<<10), c.cfg.MaxFrameBody)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(c.cfg.HousekeepingInterval))
		h, body, err := fr.Next()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return fmt.Errorf("ha: housekeeping: nothing from the master for %v: %w", c.cfg.HousekeepingInterval, err)
			}
			return err
		}
		now := time.Now()
		c.mu.Lock()
		c.lastRead = now
		c.mu.Unlock()
		recv := c.st.ReceivedOffset()
		// compat: Java skips the check on an empty slave (offset 0), which
		// takes the master's last segment; AppendRaw checks that one.
		if recv != 0 && h.Offset != recv {
			return fmt.Errorf("%w: slave %d, master %d", ErrOffsetNotEqual, recv, h.Offset)
		}
		if len(body) == 0 {
			continue
		}
		if err := c.st.AppendRaw(h.Offset, body); err != nil {
			return fmt.Errorf("ha: append %d bytes at %d: %w", len(body), h.Offset, err)
		}
		c.rate.Add(int64(len(body)), now)
		select {
		case appended <- struct{}{}:
		default:
		}
	}
}

var _ SlaveStore = (*store.Store)(nil)
var _ MasterStore = (*store.Store)(nil)
