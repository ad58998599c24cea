package ha

import (
	"bufio"
	"crypto/tls"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
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
	if c.TransferBatchSize <= 0 {
		c.TransferBatchSize = 32 << 10
	}
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HousekeepingInterval <= 0 {
		c.HousekeepingInterval = 20 * time.Second
	}
	if c.InSyncReplicas <= 0 {
		c.InSyncReplicas = 1
	}
	if c.MaxGapNotInSync <= 0 {
		c.MaxGapNotInSync = 256 << 20
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
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

// Server is the master side of classic HA.
type Server struct {
	cfg   ServerConfig
	st    MasterStore
	log   *slog.Logger
	ln    net.Listener
	isr   atomic.Int32
	wg    sync.WaitGroup
	close sync.Once

	mu    sync.Mutex
	conns map[*serverConn]struct{}
	acks  []int64 // reused by updateQuorum; mu held
	done  bool
}

// NewServer listens on cfg.Addr; Start serves.
func NewServer(cfg ServerConfig, st MasterStore) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("ha: listen %s: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, st: st, log: cfg.Logger, ln: ln, conns: map[*serverConn]struct{}{}}
	s.isr.Store(int32(cfg.InSyncReplicas))
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// SetInSyncReplicas changes how many replicas an acknowledgement needs.
func (s *Server) SetInSyncReplicas(n int) {
	s.isr.Store(int32(n))
	s.updateQuorum()
}

// Start accepts slaves until Close.
func (s *Server) Start() {
	s.wg.Add(1)
	go s.accept()
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("ha: accept", "err", err)
			time.Sleep(10 * time.Millisecond) // compat: Java's accept loop backs off too
			continue
		}
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		if s.cfg.TLS != nil {
			// The handshake runs on the connection's first read, within
			// its housekeeping deadline.
			c = tls.Server(c, s.cfg.TLS)
		}
		sc := &serverConn{s: s, c: c, addr: c.RemoteAddr().String(), started: make(chan struct{}), quit: make(chan struct{})}
		sc.acked.Store(-1)
		sc.from.Store(-1)
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			_ = c.Close()
			return
		}
		s.conns[sc] = struct{}{}
		s.mu.Unlock()
		s.log.Info("ha: slave connected", "addr", sc.addr)
		s.wg.Add(2)
		go sc.read()
		go sc.write()
	}
}

// Close stops listening and drops every slave.
func (s *Server) Close() error {
	var err error
	s.close.Do(func() {
		err = s.ln.Close()
		s.mu.Lock()
		s.done = true
		conns := make([]*serverConn, 0, len(s.conns))
		for c := range s.conns {
			conns = append(conns, c)
		}
		s.mu.Unlock()
		for _, c := range conns {
			c.shut("server closed")
		}
		s.wg.Wait()
	})
	return err
}

// Slaves lists the connected slaves.
func (s *Server) Slaves() []SlaveStatus {
	end := s.st.RawEnd()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SlaveStatus, 0, len(s.conns))
	now := time.Now()
	for c := range s.conns {
		a := c.acked.Load()
		d := end - max(a, 0)
		out = append(out, SlaveStatus{Addr: c.addr, AckOffset: a, Diff: d, InSync: a >= 0 && d < s.cfg.MaxGapNotInSync,
			TransferFrom: c.from.Load(), SentOffset: c.sent.Load(), TransferredBytesPerSecond: c.rate.PerSecond(now)})
	}
	return out
}

// updateQuorum reduces the slaves' acks into the store's replicated
// offset. AckReplicated runs outside mu: it answers puts on this
// goroutine, and it only ever raises the offset, so racing calls are fine.
func (s *Server) updateQuorum() {
	need := int(s.isr.Load())
	if need <= 1 {
		return // no put waits for a slave
	}
	s.mu.Lock()
	s.acks = s.acks[:0]
	for c := range s.conns {
		if a := c.acked.Load(); a >= 0 {
			s.acks = append(s.acks, a)
		}
	}
	q := store.QuorumOffset(s.acks, need)
	s.mu.Unlock()
	if q > 0 {
		s.st.AckReplicated(q)
	}
}

type serverConn struct {
	s       *Server
	c       net.Conn
	addr    string
	started chan struct{} // closed by the first report
	quit    chan struct{}
	once    sync.Once
	from    atomic.Int64 // transfer start, -1 before the first report
	sent    atomic.Int64 // end of the bytes written to the socket
	acked   atomic.Int64 // clamped acknowledgement, -1 before a report
	rate    Rate
}

func (c *serverConn) shut(why string, args ...any) {
	c.once.Do(func() {
		close(c.quit)
		_ = c.c.Close()
		s := c.s
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		s.updateQuorum()
		s.log.Info("ha: slave connection closed", append([]any{"addr", c.addr, "why", why}, args...)...)
	})
}

// read takes the slave's reports.
func (c *serverConn) read() {
	defer c.s.wg.Done()
	s := c.s
	r := bufio.NewReaderSize(c.c, 4<<10)
	var b [ReportSize]byte
	for {
		_ = c.c.SetReadDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		if _, err := io.ReadFull(r, b[:]); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.shut("housekeeping: nothing read", "interval", s.cfg.HousekeepingInterval)
			} else {
				c.shut("read", "err", err)
			}
			return
		}
		off := int64(binary.BigEndian.Uint64(b[:]))
		if c.from.Load() < 0 {
			if !c.begin(off) {
				return
			}
			continue
		}
		prev := c.acked.Load()
		if off < prev {
			c.shut("report went backwards", "report", off, "acked", prev)
			return
		}
		if sent := c.sent.Load(); off > sent {
			// apache/rocketmq#3015: a slave cannot have more than it was sent.
			s.log.Warn("ha: slave reports past what it was sent; clamped", "addr", c.addr, "report", off, "sent", sent)
			off = sent
		}
		if off > prev {
			c.acked.Store(off)
			s.updateQuorum()
		}
	}
}

// begin decides the transfer start from the first report.
func (c *serverConn) begin(off int64) bool {
	s := c.s
	end := s.st.RawEnd()
	from := off
	if off == 0 {
		// compat: Java starts an empty slave at the master's last segment.
		from = end - end%s.cfg.SegmentSize
	}
	if off < 0 || from > end {
		c.shut("first report outside the master's log", "report", off, "end", end)
		return false
	}
	c.sent.Store(from)
	c.from.Store(from)
	if off > 0 {
		c.acked.Store(off)
		s.updateQuorum()
	}
	s.log.Info("ha: transfer starts", "addr", c.addr, "report", off, "from", from)
	close(c.started)
	return true
}

// write streams frames from the transfer start.
func (c *serverConn) write() {
	defer c.s.wg.Done()
	s := c.s
	select {
	case <-c.started:
	case <-c.quit:
		return
	}
	wake := make(chan struct{}, 1)
	stop := s.st.WatchRaw(wake)
	defer stop()
	var (
		v     store.RawView
		hdr   [FrameHeaderSize]byte
		iov   = make([][]byte, 2) // WriteTo consumes its slice, not this one
		timer = time.NewTimer(s.cfg.HeartbeatInterval)
	)
	defer timer.Stop()
	defer v.Release()
	next := c.from.Load()
	lastWrite := time.Now()
	send := func(body []byte) bool {
		AppendHeader(hdr[:0], Header{Offset: next, Size: int32(len(body))})
		iov[0], iov[1] = hdr[:], body
		bufs := net.Buffers(iov)
		_ = c.c.SetWriteDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		_, err := bufs.WriteTo(c.c)
		iov[1] = nil
		if err != nil {
			c.shut("write", "err", err)
			return false
		}
		lastWrite = time.Now()
		c.rate.Add(int64(len(body)), lastWrite)
		return true
	}
	for {
		if err := s.st.ReadRaw(next, s.cfg.TransferBatchSize, &v); err != nil {
			c.shut("read commit log", "offset", next, "err", err)
			return
		}
		if len(v.Data) > 0 {
			n := int64(len(v.Data))
			// Published before the write: the slave's ack may beat the
			// write's return.
			c.sent.Store(next + n)
			ok := send(v.Data)
			v.Release()
			if !ok {
				return
			}
			next += n
			continue
		}
		idle := time.Since(lastWrite)
		if idle >= s.cfg.HeartbeatInterval {
			if !send(nil) {
				return
			}
			idle = 0
		}
		timer.Reset(s.cfg.HeartbeatInterval - idle)
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
