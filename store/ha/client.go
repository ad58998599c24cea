package ha

import (
	"bufio"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"time"

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
	if c.MaxFrameBody <= 0 {
		c.MaxFrameBody = 4 << 20
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

// Client is the slave side of classic HA: the replication core (Link)
// with no handshake, 8-byte reports of ReceivedOffset and 12-byte frames.
type Client struct {
	*Link
}

// NewClient makes a slave client; Start runs it.
func NewClient(cfg ClientConfig, st SlaveStore) *Client {
	cfg.fill()
	p := &slaveProto{st: st, max: cfg.MaxFrameBody}
	return &Client{Link: NewLink(LinkConfig{Name: "ha", HeartbeatInterval: cfg.HeartbeatInterval,
		HousekeepingInterval: cfg.HousekeepingInterval, ReconnectInterval: cfg.ReconnectInterval, MinBackoff: cfg.MinBackoff,
		DialTimeout: cfg.DialTimeout, TLS: cfg.TLS, ErrOffsetNotEqual: ErrOffsetNotEqual, Logger: cfg.Logger}, st, p)}
}

// slaveProto is classic HA's part of the Link.
type slaveProto struct {
	st  SlaveStore
	max int
}

func (p *slaveProto) Open(_ net.Conn, r *bufio.Reader) (SlaveSession, error) {
	return &slaveSession{st: p.st, fr: NewFrameReader(r, p.max)}, nil
}

func (p *slaveProto) Ended() {}

type slaveSession struct {
	st SlaveStore
	fr *FrameReader
}

func (s *slaveSession) Next() (int64, []byte, error) {
	h, body, err := s.fr.Next()
	return h.Offset, body, err
}

func (s *slaveSession) Accept(int64, []byte) error { return nil }
func (s *slaveSession) Appended()                  {}

// Report is the received offset (written plus the head of a record
// still arriving).
func (s *slaveSession) Report(dst []byte) ([]byte, int64) {
	off := s.st.ReceivedOffset()
	return AppendReport(dst, off), off
}

var _ SlaveStore = (*store.Store)(nil)
var _ MasterStore = (*store.Store)(nil)
