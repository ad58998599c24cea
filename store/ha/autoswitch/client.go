package autoswitch

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/store/ha"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

// SlaveStore is what the Client uses of the slave's store (*store.Store,
// in the slave role).
type SlaveStore interface {
	AppendRaw(offset int64, b []byte) error
	ReceivedOffset() int64
	MaxPhyOffset() int64
	TruncateTo(offset int64) error
	SetConfirmLimit(off int64)
}

// SlaveEpochs is what the Client uses of the slave's epoch file
// (*epoch.File).
type SlaveEpochs interface {
	Entries() []epoch.Entry
	Last() (epoch.Entry, bool)
	Append(epoch int32, start int64) error
	TruncateFromOffset(off int64) error
}

// ClientConfig configures a Client. Zero values take Java's defaults.
type ClientConfig struct {
	// BrokerID is the slave's controller-assigned broker id, sent in the
	// handshake.
	BrokerID int64
	// TLS, when set, dials the master with TLS (ours, as ServerConfig.TLS).
	TLS *tls.Config
	// SyncFromLastFile: an empty slave starts at the master's last segment
	// instead of its first (syncFromLastFile, false).
	SyncFromLastFile bool
	// AsyncLearner: the slave never joins the SyncStateSet (asyncLearner,
	// false).
	AsyncLearner bool
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
	// MaxFrameBody bounds a TRANSFER body (Java's slave read buffer, 4 MiB).
	MaxFrameBody int
	// DialTimeout bounds a connect (Java RemotingHelper.connect, 5 s).
	DialTimeout time.Duration
	// OnMasterLost, when set, is called (on the client's goroutine; it
	// must not block) each time a transferring connection to the master
	// ends (not for failed reconnects), so the
	// broker can ask the controller for a new master at once instead of
	// at its next GET_REPLICA_INFO period.
	OnMasterLost func()
	Logger       *slog.Logger
}

func (c *ClientConfig) fill() {
	if c.MaxFrameBody <= 0 {
		c.MaxFrameBody = 4 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
}

// Errors of the slave side.
var (
	// ErrOffsetNotEqual closes a connection whose master pushed a frame at
	// an offset other than the slave's received end.
	ErrOffsetNotEqual = errors.New("autoswitch: master pushed offset not equal the received offset of the slave")
	// ErrNoConsistentPoint fails a handshake whose epoch lists share no
	// epoch (Java: "Failed to find a consistent point").
	ErrNoConsistentPoint = errors.New("autoswitch: no consistent point with the master's epochs")
	// ErrEpochConflict closes a connection whose frame's epoch contradicts
	// the slave's epoch file.
	ErrEpochConflict = errors.New("autoswitch: frame epoch conflicts with the epoch file")
)

// ClientStatus is the slave side as GET_BROKER_HA_STATUS shows it.
type ClientStatus struct {
	MasterAddr     string
	Connected      bool
	State          State
	ReportedOffset int64
	// ConsistentPoint is where the last handshake truncated to (-1 none).
	ConsistentPoint int64
	LastRead        time.Time
	LastWrite       time.Time
	// TransferredBytesPerSecond: body bytes received in the last second.
	TransferredBytesPerSecond int64
}

// Client is the slave side of the AutoSwitch HA protocol: the
// replication core (ha.Link) with AutoSwitch's handshake and truncation
// (Open), the epoch of each frame (adoptEpoch), the master's confirm
// offset and reports of the max physical offset.
type Client struct {
	*ha.Link
	cfg ClientConfig
	st  SlaveStore
	ep  SlaveEpochs
	log *slog.Logger

	// masterEpochs is the current session's handshake list (receive
	// goroutine only).
	masterEpochs []epoch.Entry

	// onTruncate runs after each step of a handshake's truncation (tests):
	// 1 before the store's TruncateTo, 2 after it, 3 after the epoch file's.
	onTruncate func(step int)

	state atomic.Int32

	mu         sync.Mutex
	cp         int64
	handshakes int
}

// NewClient makes a slave client; Start runs it.
func NewClient(cfg ClientConfig, st SlaveStore, ep SlaveEpochs) *Client {
	cfg.fill()
	c := &Client{cfg: cfg, st: st, ep: ep, log: cfg.Logger, cp: -1}
	c.state.Store(int32(Ready))
	c.Link = ha.NewLink(ha.LinkConfig{Name: "autoswitch", HeartbeatInterval: cfg.HeartbeatInterval,
		HousekeepingInterval: cfg.HousekeepingInterval, ReconnectInterval: cfg.ReconnectInterval, MinBackoff: cfg.MinBackoff,
		DialTimeout: cfg.DialTimeout, TLS: cfg.TLS, ErrOffsetNotEqual: ErrOffsetNotEqual, Logger: cfg.Logger}, st, (*slaveProto)(c))
	return c
}

// Status reports the connection.
func (c *Client) Status() ClientStatus {
	ls := c.Link.Status()
	c.mu.Lock()
	defer c.mu.Unlock()
	return ClientStatus{MasterAddr: ls.MasterAddr, Connected: ls.Connected, State: State(c.state.Load()), ReportedOffset: ls.ReportedOffset,
		ConsistentPoint: c.cp, LastRead: ls.LastRead, LastWrite: ls.LastWrite, TransferredBytesPerSecond: ls.TransferredBytesPerSecond}
}

// Handshakes counts the completed handshakes (truncations) so far.
func (c *Client) Handshakes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.handshakes
}

// Close disconnects and stops.
func (c *Client) Close() error {
	err := c.Link.Close()
	c.state.Store(int32(Shutdown))
	return err
}

// slaveProto is the Client as the Link's protocol.
type slaveProto Client

// Open runs the handshake on a new connection.
func (p *slaveProto) Open(conn net.Conn, r *bufio.Reader) (ha.SlaveSession, error) {
	c := (*Client)(p)
	mr := NewMasterReader(r, c.cfg.MaxFrameBody)
	c.state.Store(int32(Handshake))
	if err := c.handshake(conn, mr); err != nil {
		return nil, err
	}
	c.state.Store(int32(Transfer))
	return &slaveSession{c: c, mr: mr, curEpoch: -1}, nil
}

// Ended: a transferring connection that ended tells the owner
// (OnMasterLost).
func (p *slaveProto) Ended() {
	c := (*Client)(p)
	if c.state.Swap(int32(Ready)) == int32(Transfer) && c.cfg.OnMasterLost != nil {
		c.cfg.OnMasterLost()
	}
}

// slaveSession is one transferring connection (receive goroutine, but
// Report).
type slaveSession struct {
	c        *Client
	mr       *MasterReader
	h        MasterHeader
	curEpoch int32
}

func (s *slaveSession) Next() (int64, []byte, error) {
	h, _, body, err := s.mr.Next(Transfer)
	s.h = h
	return h.Offset, body, err
}

// Accept records a frame's epoch before its bytes.
func (s *slaveSession) Accept(_ int64, body []byte) error {
	if s.h.Epoch == s.curEpoch {
		return nil
	}
	ok, err := s.c.adoptEpoch(s.h, len(body))
	if err != nil {
		return err
	}
	if ok {
		s.curEpoch = s.h.Epoch
	}
	return nil
}

// Appended bounds the confirm offset by the master's.
func (s *slaveSession) Appended() {
	s.c.st.SetConfirmLimit(min(s.h.ConfirmOffset, s.c.st.MaxPhyOffset()))
}

// Report is the slave's max physical offset (whole records, as Java's): a
// Java master dispatches every record that starts below its confirm
// offset, so a report inside a record would let its consumers see a
// record this slave does not have whole.
func (s *slaveSession) Report(dst []byte) ([]byte, int64) {
	off := s.c.st.MaxPhyOffset()
	return AppendSlaveReport(dst, off), off
}

// handshake sends the slave's handshake, reads the master's epochs,
// truncates to the consistent point and sends the first report.
func (c *Client) handshake(conn net.Conn, mr *MasterReader) error {
	var b [SlaveHandshakeSize]byte
	_ = conn.SetWriteDeadline(time.Now().Add(c.HousekeepingInterval()))
	hs := SlaveHandshake{SyncFromLastFile: c.cfg.SyncFromLastFile, AsyncLearner: c.cfg.AsyncLearner, BrokerID: c.cfg.BrokerID}
	if _, err := conn.Write(AppendSlaveHandshake(b[:0], hs)); err != nil {
		return fmt.Errorf("autoswitch: send handshake: %w", err)
	}
	_ = conn.SetReadDeadline(time.Now().Add(c.HousekeepingInterval()))
	h, entries, _, err := mr.Next(Handshake)
	if err != nil {
		return fmt.Errorf("autoswitch: handshake: %w", err)
	}
	master := make([]epoch.Entry, len(entries))
	for i, e := range entries {
		master[i] = epoch.Entry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	c.log.Info("autoswitch: master handshake", "masterMax", h.Offset, "lastEpoch", h.Epoch, "entries", len(master))
	if recv, w := c.st.ReceivedOffset(), c.st.MaxPhyOffset(); recv > w {
		// The head of a record from the last connection: reports are
		// whole records, and the transfer resumes at the first report.
		if err := c.st.TruncateTo(w); err != nil {
			return fmt.Errorf("autoswitch: drop the partial record at %d: %w", w, err)
		}
	}
	cp, err := c.truncate(master, h.Offset)
	if err != nil {
		return err
	}
	c.masterEpochs = master
	c.mu.Lock()
	c.cp = cp
	c.handshakes++
	c.mu.Unlock()
	return nil
}

// truncate is Java's doTruncate: with local epochs, cut the store and the
// epoch file at the consistent point with the master's; an empty epoch
// file (a new replica) truncates nothing. The store is cut first: a kill
// between the two steps leaves the stale epoch entry, which the next
// handshake finds again and drops (the store's cut is idempotent).
func (c *Client) truncate(master []epoch.Entry, masterMax int64) (int64, error) {
	local := c.ep.Entries()
	if len(local) == 0 {
		c.log.Info("autoswitch: local epoch file empty, nothing truncated")
		return -1, nil
	}
	localMax := c.st.MaxPhyOffset()
	cp := epoch.ConsistentPoint(local, localMax, master, masterMax)
	if cp < 0 {
		return -1, fmt.Errorf("%w: local %v, master %v", ErrNoConsistentPoint, local, master)
	}
	// An entry may start past the local end (a tail lost in a crash).
	cp = min(cp, localMax)
	c.log.Info("autoswitch: truncating to the consistent point", "offset", cp, "localMax", localMax, "masterMax", masterMax)
	c.hook(1)
	if err := c.st.TruncateTo(cp); err != nil {
		return -1, fmt.Errorf("autoswitch: truncate the commit log to %d: %w", cp, err)
	}
	c.hook(2)
	if err := c.ep.TruncateFromOffset(cp); err != nil {
		return -1, fmt.Errorf("autoswitch: truncate the epoch file from %d: %w", cp, err)
	}
	c.hook(3)
	return cp, nil
}

func (c *Client) hook(step int) {
	if c.onTruncate != nil {
		c.onTruncate(step)
	}
}

// adoptEpoch records a frame's epoch in the epoch file before its bytes
// are appended: the epoch the file ends with is kept, a newer one is
// appended. A data frame whose epoch contradicts the file closes the
// connection; a heartbeat's is ignored (Java's heartbeat before a
// transfer carries the master's first epoch, and Java's append fails
// quietly).
//
// compat: Java's master labels the frame cut at an epoch's end with the
// next epoch, whose start is then the frame's end (seen on the wire from
// Java 5.3.3: bytes [0, 21560) of epoch 1 sent as epoch 5 starting at
// 21560). A Java slave then never records the earlier epoch; here the
// entry of the handshake's list holding the frame's offset is appended
// first, so the slave's epoch file equals the master's.
func (c *Client) adoptEpoch(h MasterHeader, n int) (bool, error) {
	last, ok := c.ep.Last()
	fail := func(why string) (bool, error) {
		if n == 0 {
			return false, nil
		}
		return false, fmt.Errorf("%w: frame at %d epoch %d start %d, file ends with epoch %d start %d: %s",
			ErrEpochConflict, h.Offset, h.Epoch, h.EpochStartOffset, last.Epoch, last.StartOffset, why)
	}
	after := func(ep int32, start int64) bool {
		return !ok || (ep > last.Epoch && start > last.StartOffset)
	}
	switch {
	case ok && last.Epoch == h.Epoch:
		if last.StartOffset != h.EpochStartOffset {
			return fail("same epoch, other start")
		}
		return true, nil
	case !after(h.Epoch, h.EpochStartOffset):
		return fail("not after the last entry")
	case h.EpochStartOffset < 0 || h.EpochStartOffset > h.Offset+int64(n):
		return fail("epoch starts past the frame")
	}
	if n > 0 && h.EpochStartOffset > h.Offset {
		for i, e := range c.masterEpochs {
			end := int64(1<<63 - 1)
			if i+1 < len(c.masterEpochs) {
				end = c.masterEpochs[i+1].StartOffset
			}
			if e.StartOffset <= h.Offset && h.Offset < end && e.Epoch < h.Epoch && e.StartOffset < h.EpochStartOffset && after(e.Epoch, e.StartOffset) {
				if err := c.ep.Append(e.Epoch, e.StartOffset); err != nil {
					return false, fmt.Errorf("autoswitch: epoch file: %w", err)
				}
				c.log.Info("autoswitch: epoch of a frame cut at its end, from the handshake", "epoch", e.Epoch, "start", e.StartOffset)
				break
			}
		}
	}
	if err := c.ep.Append(h.Epoch, h.EpochStartOffset); err != nil {
		return false, fmt.Errorf("autoswitch: epoch file: %w", err)
	}
	c.log.Info("autoswitch: new epoch from the master", "epoch", h.Epoch, "start", h.EpochStartOffset)
	return true, nil
}

var (
	_ SlaveStore  = (*store.Store)(nil)
	_ MasterStore = (*store.Store)(nil)
	_ SlaveEpochs = (*epoch.File)(nil)
	_ Epochs      = (*epoch.File)(nil)
)
