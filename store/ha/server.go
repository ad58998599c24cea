package ha

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
)

// MasterStore is what the Server uses of the master's store (*store.Store).
type MasterStore interface {
	ReadRaw(offset int64, max int, v *store.RawView) error
	WatchRaw(ch chan struct{}) (stop func())
	RawEnd() int64
	AckReplicated(off int64)
}

// ServerConfig configures a Server. Zero durations and sizes take Java's
// defaults.
type ServerConfig struct {
	// Addr is the listen address (haListenPort; ":0" picks a port).
	Addr string
	// SegmentSize is the commit-log segment size
	// (mappedFileSizeCommitLog): an empty slave starts at the last one.
	SegmentSize int64
	// TransferBatchSize bounds a frame's body (haTransferBatchSize, 32 KiB).
	TransferBatchSize int
	// HeartbeatInterval: an idle connection gets an empty frame this often
	// (haSendHeartbeatInterval, 5 s).
	HeartbeatInterval time.Duration
	// HousekeepingInterval: a slave silent this long is dropped
	// (haHousekeepingInterval, 20 s).
	HousekeepingInterval time.Duration
	// InSyncReplicas: replicas, the master included, a replicated offset
	// needs (inSyncReplicas, 1); SetInSyncReplicas changes it.
	InSyncReplicas int
	// MaxGapNotInSync: a slave this far behind is not in sync
	// (haMaxGapNotInSync, 256 MiB; status only).
	MaxGapNotInSync int64
	// TLS, when set, makes the port TLS-only (ours: Java's HA is plain
	// TCP; rocketgo.tls.ha.enable).
	TLS    *tls.Config
	Logger *slog.Logger
}

func (c *ServerConfig) fill() error {
	if c.SegmentSize <= 0 {
		return errors.New("ha: server config: SegmentSize must be positive")
	}
	if c.InSyncReplicas <= 0 {
		c.InSyncReplicas = 1
	}
	if c.MaxGapNotInSync <= 0 {
		c.MaxGapNotInSync = 256 << 20
	}
	return nil
}

// SlaveStatus is one connected slave as GET_BROKER_HA_STATUS shows it
// (Java HARuntimeInfo.HAConnectionRuntimeInfo).
type SlaveStatus struct {
	Addr         string
	AckOffset    int64 // last acknowledged offset (-1 before the first report)
	Diff         int64 // master's end minus AckOffset
	InSync       bool  // Diff < MaxGapNotInSync
	TransferFrom int64 // where this connection's transfer started
	SentOffset   int64 // end of what was sent
	// TransferredBytesPerSecond: body bytes sent in the last second.
	TransferredBytesPerSecond int64
}

// Server is the master side of classic HA: the replication core (Hub)
// with this protocol's 8-byte reports and 12-byte frame header.
type Server struct {
	cfg ServerConfig
	st  MasterStore
	hub *Hub[*session]
	isr atomic.Int32

	acks []int64 // reused by updateQuorum; hub.Mu held
}

// NewServer listens on cfg.Addr; Start serves.
func NewServer(cfg ServerConfig, st MasterStore) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, st: st}
	hub, err := NewHub(HubConfig{Name: "ha", Addr: cfg.Addr, TLS: cfg.TLS, TransferBatchSize: cfg.TransferBatchSize,
		HeartbeatInterval: cfg.HeartbeatInterval, HousekeepingInterval: cfg.HousekeepingInterval, Logger: cfg.Logger},
		st, func(c *Conn[*session]) *session { return &session{s: s, c: c} })
	if err != nil {
		return nil, err
	}
	s.hub = hub
	s.isr.Store(int32(cfg.InSyncReplicas))
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.hub.Addr() }

// SetInSyncReplicas changes how many replicas an acknowledgement needs.
func (s *Server) SetInSyncReplicas(n int) {
	s.isr.Store(int32(n))
	s.updateQuorum()
}

// Start accepts slaves until Close.
func (s *Server) Start() { s.hub.Start() }

// Close stops listening and drops every slave.
func (s *Server) Close() error { return s.hub.Close() }

// Slaves lists the connected slaves.
func (s *Server) Slaves() []SlaveStatus {
	end := s.st.RawEnd()
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	conns := s.hub.ConnsLocked()
	out := make([]SlaveStatus, 0, len(conns))
	now := time.Now()
	for c := range conns {
		a := c.Acked()
		d := end - max(a, 0)
		out = append(out, SlaveStatus{Addr: c.Addr(), AckOffset: a, Diff: d, InSync: a >= 0 && d < s.cfg.MaxGapNotInSync,
			TransferFrom: c.From(), SentOffset: c.Sent(), TransferredBytesPerSecond: c.BytesPerSecond(now)})
	}
	return out
}

// updateQuorum reduces the slaves' acks into the store's replicated
// offset. AckReplicated runs outside the lock: it answers puts on this
// goroutine, and it only ever raises the offset, so racing calls are fine.
func (s *Server) updateQuorum() {
	need := int(s.isr.Load())
	if need <= 1 {
		return // no put waits for a slave
	}
	s.hub.Mu.Lock()
	s.acks = s.acks[:0]
	for c := range s.hub.ConnsLocked() {
		if a := c.Acked(); a >= 0 {
			s.acks = append(s.acks, a)
		}
	}
	q := store.QuorumOffset(s.acks, need)
	s.hub.Mu.Unlock()
	if q > 0 {
		s.st.AckReplicated(q)
	}
}

// session is classic HA's part of a slave connection: no handshake, every
// message a report, the plain 12-byte frame header.
type session struct {
	s   *Server
	c   *Conn[*session]
	buf [ReportSize]byte
}

func (p *session) ReadReport(r *bufio.Reader) (int64, bool, error) {
	if _, err := io.ReadFull(r, p.buf[:]); err != nil {
		return 0, false, err
	}
	return int64(binary.BigEndian.Uint64(p.buf[:])), true, nil
}

// Start: a report of 0 (an empty slave) starts at the master's last
// segment; a start past the master's end closes the connection.
func (p *session) Start(off int64) (int64, bool) {
	end := p.s.st.RawEnd()
	from := off
	if off == 0 {
		// compat: Java starts an empty slave at the master's last segment.
		from = end - end%p.s.cfg.SegmentSize
	}
	if off < 0 || from > end {
		p.c.Shut("first report outside the master's log", "report", off, "end", end)
		return 0, false
	}
	return from, true
}

func (p *session) Started(off int64) {
	if off > 0 {
		p.s.updateQuorum()
	}
}

func (p *session) Acked(_ int64, grew bool) {
	if grew {
		p.s.updateQuorum()
	}
}

func (p *session) Prepare() bool             { return true }
func (p *session) BeginTransfer(int64) bool  { return true }
func (p *session) Limit(int64) (int64, bool) { return NoLimit, true }
func (p *session) Sending()                  {}
func (p *session) CaughtUp()                 {}
func (p *session) Closed()                   { p.s.updateQuorum() }
func (p *session) LogAttrs() []any           { return nil }
func (p *session) AppendHeader(dst []byte, next int64, n int) []byte {
	return AppendHeader(dst, Header{Offset: next, Size: int32(n)})
}
