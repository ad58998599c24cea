package autoswitch

import (
	"bufio"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

// MasterStore is what the Server uses of the master's store (*store.Store).
type MasterStore interface {
	ReadRaw(offset int64, max int, v *store.RawView) error
	WatchRaw(ch chan struct{}) (stop func())
	RawEnd() int64
	MaxPhyOffset() int64
	MinPhyOffset() int64
	ConfirmOffset() int64
	SetConfirmLimit(off int64)
	AckReplicated(off int64)
	SetInSyncReplicas(n int)
}

// Epochs is what the Server reads of the master's epoch file (*epoch.File).
type Epochs interface {
	Entries() []epoch.Entry
	Last() (epoch.Entry, bool)
	LastEpoch() int32
}

// ServerConfig configures a Server. Zero durations and sizes take Java's
// defaults.
type ServerConfig struct {
	// Addr is the listen address (haListenPort; ":0" picks a port).
	Addr string
	// SegmentSize is the commit-log segment size (mappedFileSizeCommitLog).
	SegmentSize int64
	// LocalBrokerID is the master's controller-assigned broker id; it is
	// in every SyncStateSet the Server proposes.
	LocalBrokerID int64
	// TransferBatchSize bounds a frame's body (haTransferBatchSize, 32 KiB).
	TransferBatchSize int
	// HeartbeatInterval: an idle connection gets an empty TRANSFER frame
	// this often (haSendHeartbeatInterval, 5 s).
	HeartbeatInterval time.Duration
	// HousekeepingInterval: a slave silent this long is dropped
	// (haHousekeepingInterval, 20 s).
	HousekeepingInterval time.Duration
	// MaxTimeSlaveNotCatchup: an in-sync slave not caught up for this long
	// leaves the SyncStateSet (haMaxTimeSlaveNotCatchup, 15 s).
	MaxTimeSlaveNotCatchup time.Duration
	// CheckSyncStateSetPeriod: how often the shrink check runs
	// (checkSyncStateSetPeriod, 5 s); a proposal the controller has not
	// confirmed is also offered again this often.
	CheckSyncStateSetPeriod time.Duration
	// AllAckInSyncStateSet: a put waits for every SyncStateSet member and
	// consumers see only what all of them have (allAckInSyncStateSet,
	// false). The Server then owns the store's in-sync replica count and
	// confirm limit.
	AllAckInSyncStateSet bool
	// InSyncReplicas: without AllAckInSyncStateSet, the replicas (master
	// included, any connected slave) a put needs (inSyncReplicas, 1); the
	// caller keeps the store's equal.
	InSyncReplicas int
	// OnSyncStateSetChanged receives each SyncStateSet the Server proposes
	// (expansion, shrink, a lost in-sync slave): the broker sends it to the
	// controller (CONTROLLER_ALTER_SYNC_STATE_SET) and passes the answer
	// back with SetSyncStateSet. It runs on its own goroutine, one call at a
	// time; a slow call coalesces later proposals into the newest.
	OnSyncStateSetChanged func(proposed []int64)
	Logger                *slog.Logger
}

func (c *ServerConfig) fill() error {
	if c.SegmentSize <= 0 {
		return errors.New("autoswitch: server config: SegmentSize must be positive")
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
	if c.MaxTimeSlaveNotCatchup <= 0 {
		c.MaxTimeSlaveNotCatchup = 15 * time.Second
	}
	if c.CheckSyncStateSetPeriod <= 0 {
		c.CheckSyncStateSetPeriod = 5 * time.Second
	}
	if c.InSyncReplicas <= 0 {
		c.InSyncReplicas = 1
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	return nil
}

// SlaveStatus is one connected slave (Java HARuntimeInfo's
// HAConnectionRuntimeInfo, plus the broker id and state).
type SlaveStatus struct {
	Addr         string
	BrokerID     int64 // -1 before the handshake
	State        State
	AsyncLearner bool
	AckOffset    int64 // last acknowledged offset (-1 before a report)
	Diff         int64 // master's max offset minus AckOffset
	InSync       bool  // in the controller-confirmed SyncStateSet
	TransferFrom int64 // where this connection's transfer started (-1 before)
	SentOffset   int64 // end of what was sent
	// TransferredBytesPerSecond: body bytes sent in the last second.
	TransferredBytesPerSecond int64
}

// Server is the master side of the AutoSwitch HA protocol.
type Server struct {
	cfg   ServerConfig
	st    MasterStore
	ep    Epochs
	log   *slog.Logger
	ln    net.Listener
	wg    sync.WaitGroup
	once  sync.Once
	quit  chan struct{}
	kick  chan struct{} // wakes the notifier
	isr   atomic.Int32  // InSyncReplicas (no AllAckInSyncStateSet)
	start sync.Once

	// mu guards everything below; never held while calling the store's
	// AckReplicated or the owner's callback.
	mu           sync.Mutex
	conns        map[*conn]struct{}
	confirmed    map[int64]struct{} // the controller's SyncStateSet (Java's local set)
	pending      map[int64]struct{} // the proposal being synchronized; nil when none
	caughtUp     map[int64]time.Time
	confirm      int64   // last computed confirm offset (AllAckInSyncStateSet)
	proposal     []int64 // newest proposal for the notifier
	notified     []int64 // last proposal delivered
	notifiedAt   time.Time
	acks         []int64 // scratch of updateQuorum
	ids          []int64 // scratch of updateQuorum
	lastISR      int
	done         bool
	proposeCount int
}

// NewServer listens on cfg.Addr; Start serves. st is the master's store
// (in a master role), ep its epoch file, holding the current epoch.
func NewServer(cfg ServerConfig, st MasterStore, ep Epochs) (*Server, error) {
	if err := cfg.fill(); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("autoswitch: listen %s: %w", cfg.Addr, err)
	}
	s := &Server{cfg: cfg, st: st, ep: ep, log: cfg.Logger, ln: ln, quit: make(chan struct{}), kick: make(chan struct{}, 1),
		conns: map[*conn]struct{}{}, confirmed: map[int64]struct{}{cfg.LocalBrokerID: {}}, caughtUp: map[int64]time.Time{},
		confirm: -1}
	s.isr.Store(int32(cfg.InSyncReplicas))
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Start accepts slaves and runs the SyncStateSet check until Close.
func (s *Server) Start() {
	s.start.Do(func() {
		s.mu.Lock()
		s.applyLocked()
		s.mu.Unlock()
		s.updateQuorum()
		s.wg.Add(3)
		go s.accept()
		go s.notifier()
		go s.checker()
	})
}

// Close stops listening and drops every slave.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		err = s.ln.Close()
		close(s.quit)
		s.mu.Lock()
		s.done = true
		cs := make([]*conn, 0, len(s.conns))
		for c := range s.conns {
			cs = append(cs, c)
		}
		s.mu.Unlock()
		for _, c := range cs {
			c.shut("server closed")
		}
		s.wg.Wait()
	})
	return err
}

// SetSyncStateSet installs the controller's SyncStateSet (the answer to an
// ALTER_SYNC_STATE_SET, REGISTER_BROKER, GET_REPLICA_INFO or a
// NOTIFY_BROKER_ROLE_CHANGED). It ends the proposal being synchronized
// and recomputes the confirm offset, as Java's setSyncStateSet.
func (s *Server) SetSyncStateSet(ids []int64) {
	s.mu.Lock()
	s.confirmed = make(map[int64]struct{}, len(ids)+1)
	for _, id := range ids {
		s.confirmed[id] = struct{}{}
	}
	s.confirmed[s.cfg.LocalBrokerID] = struct{}{}
	s.pending = nil
	s.applyLocked()
	s.mu.Unlock()
	s.updateQuorum()
}

// SyncStateSet is the set acknowledgements and the confirm offset wait
// for: the controller's set, joined while a proposal is synchronizing by
// the proposal (Java getSyncStateSet).
func (s *Server) SyncStateSet() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sorted(s.effectiveLocked())
}

// LocalSyncStateSet is the controller-confirmed set.
func (s *Server) LocalSyncStateSet() []int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return sorted(s.confirmed)
}

// InSyncReplicasNums is Java's inSyncReplicasNums: the larger of the
// confirmed and the proposed set while synchronizing (the broker compares
// it with minInSyncReplicas before a put).
func (s *Server) InSyncReplicasNums() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(len(s.confirmed), len(s.pending))
}

// SetInSyncReplicas changes the replicas a put needs without
// AllAckInSyncStateSet.
func (s *Server) SetInSyncReplicas(n int) {
	s.isr.Store(int32(n))
	s.updateQuorum()
}

// ConfirmOffset is the confirm offset the Server computed (-1 when it sets
// no limit: no AllAckInSyncStateSet, or the SyncStateSet is the master).
func (s *Server) ConfirmOffset() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.confirm
}

// Proposals counts the SyncStateSet proposals delivered so far (tests).
func (s *Server) Proposals() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proposeCount
}

// Slaves lists the connected slaves.
func (s *Server) Slaves() []SlaveStatus {
	end := s.st.MaxPhyOffset()
	now := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]SlaveStatus, 0, len(s.conns))
	for c := range s.conns {
		a := c.acked.Load()
		id := c.id.Load()
		_, in := s.confirmed[id]
		out = append(out, SlaveStatus{Addr: c.addr, BrokerID: id, State: State(c.state.Load()), AsyncLearner: c.learner.Load(),
			AckOffset: a, Diff: end - max(a, 0), InSync: in && id >= 0, TransferFrom: c.from.Load(), SentOffset: c.sent.Load(),
			TransferredBytesPerSecond: c.rate.perSecond(now)})
	}
	return out
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		nc, err := s.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.log.Warn("autoswitch: accept", "err", err)
			select {
			case <-time.After(10 * time.Millisecond): // compat: Java's accept loop backs off too
			case <-s.quit:
				return
			}
			continue
		}
		if tc, ok := nc.(*net.TCPConn); ok {
			_ = tc.SetNoDelay(true)
		}
		c := &conn{s: s, c: nc, addr: nc.RemoteAddr().String(), hs: make(chan struct{}, 1), started: make(chan struct{}), quit: make(chan struct{})}
		c.id.Store(-1)
		c.acked.Store(-1)
		c.from.Store(-1)
		c.state.Store(int32(Handshake))
		s.mu.Lock()
		if s.done {
			s.mu.Unlock()
			_ = nc.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.mu.Unlock()
		s.log.Info("autoswitch: slave connected", "addr", c.addr)
		s.wg.Add(2)
		go c.read()
		go c.write()
	}
}

// effectiveLocked is the confirmed set joined with the pending proposal
// (a fresh map). mu held.
func (s *Server) effectiveLocked() map[int64]struct{} {
	out := make(map[int64]struct{}, len(s.confirmed)+len(s.pending))
	for id := range s.confirmed {
		out[id] = struct{}{}
	}
	for id := range s.pending {
		out[id] = struct{}{}
	}
	return out
}

// members calls fn for each member of the effective set (confirmed, then
// pending members not confirmed) and returns their number; it allocates
// nothing. mu held.
func (s *Server) members(fn func(id int64) bool) int {
	n := 0
	for id := range s.confirmed {
		n++
		if fn != nil && !fn(id) {
			return -1
		}
	}
	for id := range s.pending {
		if _, dup := s.confirmed[id]; dup {
			continue
		}
		n++
		if fn != nil && !fn(id) {
			return -1
		}
	}
	return n
}

// memberLocked reports whether id is in the effective set. mu held.
func (s *Server) memberLocked(id int64) bool {
	_, a := s.confirmed[id]
	_, b := s.pending[id]
	return a || b
}

// ackOfLocked is the best acknowledgement of slave id over its
// connections (-1: none reported, -2: not connected). mu held.
func (s *Server) ackOfLocked(id int64) int64 {
	best := int64(-2)
	for c := range s.conns {
		if c.id.Load() == id {
			best = max(best, c.acked.Load())
		}
	}
	return best
}

// applyLocked recomputes the confirm offset (Java computeConfirmOffset)
// and sets the store's confirm limit and in-sync replica count. mu held.
func (s *Server) applyLocked() {
	if !s.cfg.AllAckInSyncStateSet {
		s.confirm = -1
		s.st.SetConfirmLimit(-1)
		return
	}
	if n := s.members(nil); n != s.lastISR {
		s.st.SetInSyncReplicas(n)
		s.lastISR = n
	}
	if len(s.confirmed) <= 1 {
		// compat: Java's getConfirmOffset is the max offset when the
		// local SyncStateSet is the master alone.
		s.confirm = -1
		s.st.SetConfirmLimit(-1)
		return
	}
	c := s.st.MaxPhyOffset()
	complete := s.members(func(id int64) bool {
		if id == s.cfg.LocalBrokerID {
			return true
		}
		a := s.ackOfLocked(id)
		c = min(c, a)
		return a >= 0
	}) >= 0
	if !complete {
		// A member without a connection or without a report yet: keep
		// the old value (apache/rocketmq#6662). Java skips a member that
		// has not reported; here it holds the offset too.
		if s.confirm < 0 {
			s.confirm = s.st.ConfirmOffset()
			s.st.SetConfirmLimit(s.confirm)
		}
		return
	}
	s.confirm = c
	s.st.SetConfirmLimit(c)
}

// updateQuorum reduces the acknowledgements into the store's replicated
// offset: with AllAckInSyncStateSet every member of SyncStateSet, else
// InSyncReplicas of any slaves. AckReplicated runs outside mu.
func (s *Server) updateQuorum() {
	s.mu.Lock()
	var need int
	s.acks = s.acks[:0]
	if s.cfg.AllAckInSyncStateSet {
		need = s.members(func(id int64) bool {
			if id != s.cfg.LocalBrokerID {
				if a := s.ackOfLocked(id); a >= 0 {
					s.acks = append(s.acks, a)
				}
			}
			return true
		})
	} else {
		need = int(s.isr.Load())
		s.ids = s.ids[:0]
		for c := range s.conns {
			id := c.id.Load()
			if id < 0 || slices.Contains(s.ids, id) {
				continue
			}
			s.ids = append(s.ids, id)
			if a := s.ackOfLocked(id); a >= 0 {
				s.acks = append(s.acks, a)
			}
		}
	}
	q := store.QuorumOffset(s.acks, need)
	s.mu.Unlock()
	switch {
	case need <= 1 && s.cfg.AllAckInSyncStateSet:
		// compat: Java completes a waiting put once the set is the master
		// alone; release puts queued while it was larger.
		s.st.AckReplicated(s.st.RawEnd())
	case need > 1 && q > 0:
		s.st.AckReplicated(q)
	}
}

// proposeLocked hands set (the master added) to the notifier unless it
// is the proposal already delivered recently. mu held.
func (s *Server) proposeLocked(set map[int64]struct{}, why string) {
	set[s.cfg.LocalBrokerID] = struct{}{}
	ids := sorted(set)
	s.pending = set
	s.applyLocked()
	if equalIDs(ids, s.notified) && time.Since(s.notifiedAt) < s.cfg.CheckSyncStateSetPeriod {
		return
	}
	s.log.Info("autoswitch: SyncStateSet proposed", "set", ids, "why", why, "confirmed", sorted(s.confirmed))
	s.proposal = ids
	select {
	case s.kick <- struct{}{}:
	default:
	}
}

// notifier delivers proposals to the owner, one at a time.
func (s *Server) notifier() {
	defer s.wg.Done()
	for {
		select {
		case <-s.quit:
			return
		case <-s.kick:
		}
		s.mu.Lock()
		p := s.proposal
		s.proposal = nil
		if p != nil {
			s.notified, s.notifiedAt = p, time.Now()
			s.proposeCount++
		}
		s.mu.Unlock()
		if p != nil && s.cfg.OnSyncStateSetChanged != nil {
			s.cfg.OnSyncStateSetChanged(p)
		}
	}
}

// checker runs the shrink check every CheckSyncStateSetPeriod.
func (s *Server) checker() {
	defer s.wg.Done()
	t := time.NewTicker(s.cfg.CheckSyncStateSetPeriod)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
		}
		s.shrink(time.Now())
	}
}

// shrink is Java's maybeShrinkSyncStateSet: members not caught up for
// MaxTimeSlaveNotCatchup, or never connected, leave the set; a proposal
// still unconfirmed is offered again.
func (s *Server) shrink(now time.Time) {
	s.mu.Lock()
	next := make(map[int64]struct{}, len(s.confirmed))
	changed := false
	for id := range s.confirmed {
		if id == s.cfg.LocalBrokerID {
			next[id] = struct{}{}
			continue
		}
		t, ok := s.caughtUp[id]
		if !ok || now.Sub(t) > s.cfg.MaxTimeSlaveNotCatchup {
			changed = true
			continue
		}
		next[id] = struct{}{}
	}
	switch {
	case changed:
		s.proposeLocked(next, "slave not caught up")
	case s.pending != nil && !equalIDs(sorted(s.pending), sorted(s.confirmed)):
		s.proposeLocked(s.pending, "proposal not confirmed yet")
	}
	s.mu.Unlock()
	s.updateQuorum()
}

// caughtUpLocked records that slave id was caught up at t. mu held.
func (s *Server) caughtUpLocked(id int64, t time.Time) {
	if old, ok := s.caughtUp[id]; !ok || t.After(old) {
		s.caughtUp[id] = t
	}
}

// onReport handles a slave's acknowledgement (Java
// maybeExpandInSyncStateSet, updateConfirmOffsetWhenSlaveAck).
func (s *Server) onReport(c *conn, ack int64) {
	id := c.id.Load()
	s.mu.Lock()
	if !c.learner.Load() && ack >= c.lastMasterMax.Load() {
		t := time.Unix(0, c.lastTransfer.Load())
		if s.st.MaxPhyOffset() == ack {
			t = time.Now()
		}
		s.caughtUpLocked(id, t)
		if _, in := s.confirmed[id]; !in {
			confirm := s.confirm
			if confirm < 0 {
				confirm = s.st.MaxPhyOffset()
			}
			last, _ := s.ep.Last()
			if ack >= confirm && ack >= last.StartOffset {
				next := make(map[int64]struct{}, len(s.confirmed)+1)
				for k := range s.confirmed {
					next[k] = struct{}{}
				}
				next[id] = struct{}{}
				s.proposeLocked(next, "slave caught up")
			}
		}
	}
	if s.memberLocked(id) {
		s.applyLocked()
	}
	s.mu.Unlock()
	s.updateQuorum()
}

// removed handles a closed connection (Java removeConnection): an in-sync
// slave with no other connection leaves the set at once.
func (s *Server) removed(c *conn) {
	id := c.id.Load()
	s.mu.Lock()
	delete(s.conns, c)
	if _, in := s.confirmed[id]; in && id >= 0 && id != s.cfg.LocalBrokerID && s.ackOfLocked(id) == -2 && !s.done {
		next := make(map[int64]struct{}, len(s.confirmed))
		for k := range s.confirmed {
			if k != id {
				next[k] = struct{}{}
			}
		}
		s.proposeLocked(next, "in-sync slave disconnected")
	} else {
		s.applyLocked()
	}
	s.mu.Unlock()
	s.updateQuorum()
}

func sorted(m map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func equalIDs(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// conn is one slave connection.
type conn struct {
	s       *Server
	c       net.Conn
	addr    string
	hs      chan struct{} // a handshake to answer
	started chan struct{} // closed by the first report
	quit    chan struct{}
	once    sync.Once

	id            atomic.Int64
	learner       atomic.Bool
	lastFile      atomic.Bool
	state         atomic.Int32
	from          atomic.Int64 // transfer start, -1 before the first report
	sent          atomic.Int64 // end of the bytes written to the socket
	acked         atomic.Int64 // clamped acknowledgement, -1 before a report
	lastMasterMax atomic.Int64 // master's max offset at the last data frame
	lastTransfer  atomic.Int64 // unix nanos of the last data frame
	rate          rate
}

func (c *conn) shut(why string, args ...any) {
	c.once.Do(func() {
		close(c.quit)
		_ = c.c.Close()
		c.state.Store(int32(Shutdown))
		c.s.removed(c)
		c.s.log.Info("autoswitch: slave connection closed", append([]any{"addr", c.addr, "slave", c.id.Load(), "why", why}, args...)...)
	})
}

// read takes the slave's handshake and reports.
func (c *conn) read() {
	defer c.s.wg.Done()
	s := c.s
	r := NewSlaveReader(bufio.NewReaderSize(c.c, 4<<10))
	var m SlaveMsg
	for {
		_ = c.c.SetReadDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
		if err := r.Next(&m); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				c.shut("housekeeping: nothing read", "interval", s.cfg.HousekeepingInterval)
			} else {
				c.shut("read", "err", err)
			}
			return
		}
		cur := State(c.state.Load())
		switch {
		case m.State == Handshake && cur == Handshake && c.id.Load() < 0:
			if m.Handshake.BrokerID < 0 || m.Handshake.BrokerID == s.cfg.LocalBrokerID {
				c.shut("handshake with an invalid broker id", "id", m.Handshake.BrokerID)
				return
			}
			c.id.Store(m.Handshake.BrokerID)
			c.learner.Store(m.Handshake.AsyncLearner)
			c.lastFile.Store(m.Handshake.SyncFromLastFile)
			s.log.Info("autoswitch: slave handshake", "addr", c.addr, "slave", m.Handshake.BrokerID,
				"syncFromLastFile", m.Handshake.SyncFromLastFile, "asyncLearner", m.Handshake.AsyncLearner)
			c.hs <- struct{}{}
		case m.State == Transfer && c.id.Load() >= 0:
			if cur == Handshake {
				if !c.begin(m.Offset) {
					return
				}
				continue
			}
			if !c.report(m.Offset) {
				return
			}
		default:
			// Strict where Java switches the connection to whatever state
			// the slave sent: a Java slave opens a new connection for each
			// handshake, so anything else is broken input.
			c.shut("state not matched", "slave", m.State, "connection", cur)
			return
		}
	}
}

// begin decides the transfer start from the first report.
func (c *conn) begin(off int64) bool {
	s := c.s
	maxOff := s.st.MaxPhyOffset()
	from := off
	if off == 0 {
		if c.lastFile.Load() {
			from = maxOff - maxOff%s.cfg.SegmentSize
		} else {
			from = s.st.MinPhyOffset()
		}
	}
	if off < 0 || from > maxOff || from < s.st.MinPhyOffset() {
		c.shut("first report outside the master's log", "report", off, "min", s.st.MinPhyOffset(), "max", maxOff)
		return false
	}
	c.sent.Store(from)
	c.from.Store(from)
	c.lastMasterMax.Store(maxOff)
	if off > 0 {
		c.acked.Store(off)
	}
	c.state.Store(int32(Transfer))
	s.log.Info("autoswitch: transfer starts", "addr", c.addr, "slave", c.id.Load(), "report", off, "from", from)
	close(c.started)
	if off > 0 {
		s.onReport(c, off)
	}
	return true
}

// report takes a TRANSFER report after the first.
func (c *conn) report(off int64) bool {
	s := c.s
	prev := c.acked.Load()
	if off < prev {
		c.shut("report went backwards", "report", off, "acked", prev)
		return false
	}
	if sent := c.sent.Load(); off > sent {
		// apache/rocketmq#3015: a slave cannot have more than it was sent.
		s.log.Warn("autoswitch: slave reports past what it was sent; clamped", "addr", c.addr, "report", off, "sent", sent)
		off = sent
	}
	c.acked.Store(max(off, prev))
	s.onReport(c, off)
	return true
}

// write answers the handshake and streams TRANSFER frames.
func (c *conn) write() {
	defer c.s.wg.Done()
	s := c.s
	var buf []byte
	select {
	case <-c.hs:
	case <-c.quit:
		return
	}
	es := s.ep.Entries()
	if len(es) > MaxEpochEntries {
		es = es[len(es)-MaxEpochEntries:]
	}
	wire := make([]EpochEntry, len(es))
	for i, e := range es {
		wire[i] = EpochEntry{Epoch: e.Epoch, StartOffset: e.StartOffset}
	}
	buf = AppendMasterHandshake(buf[:0], s.st.MaxPhyOffset(), s.ep.LastEpoch(), wire)
	_ = c.c.SetWriteDeadline(time.Now().Add(s.cfg.HousekeepingInterval))
	if _, err := c.c.Write(buf); err != nil {
		c.shut("write handshake", "err", err)
		return
	}
	select {
	case <-c.started:
	case <-c.quit:
		return
	}
	c.transfer()
}

// transfer streams frames from the transfer start: never across a
// segment (ReadRaw) nor across an epoch (cut at the epoch's end).
func (c *conn) transfer() {
	s := c.s
	next := c.from.Load()
	es := s.ep.Entries()
	cur := -1
	for i, e := range es {
		if e.StartOffset <= next && next < e.EndOffset {
			cur = i
		}
	}
	if cur < 0 {
		// Java logs "Failed to find an epochEntry to match
		// nextTransferFromWhere" and heartbeats forever; the slave cannot
		// label these bytes, so the connection closes instead.
		c.shut("no epoch holds the transfer start", "from", next)
		return
	}
	s.log.Info("autoswitch: transfer epoch", "addr", c.addr, "from", next, "epoch", es[cur].Epoch, "start", es[cur].StartOffset)
	endOf := func(i int) int64 {
		if i == len(es)-1 {
			return math.MaxInt64 // compat: the last epoch is unbounded (Java's -1)
		}
		return es[i].EndOffset
	}
	wake := make(chan struct{}, 1)
	stop := s.st.WatchRaw(wake)
	defer stop()
	var (
		v     store.RawView
		hdr   [MasterTransferHeader]byte
		iov   = make([][]byte, 2)
		timer = time.NewTimer(s.cfg.HeartbeatInterval)
	)
	defer timer.Stop()
	defer v.Release()
	lastWrite := time.Now()
	send := func(body []byte) bool {
		AppendTransferHeader(hdr[:0], MasterHeader{BodySize: int32(len(body)), Offset: next, Epoch: es[cur].Epoch,
			EpochStartOffset: es[cur].StartOffset, ConfirmOffset: s.st.ConfirmOffset()})
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
		c.rate.add(int64(len(body)), lastWrite)
		return true
	}
	for {
		if cur == len(es)-1 && s.ep.LastEpoch() != es[cur].Epoch {
			// A new epoch while connected (the master re-elected without a
			// role change; Java keeps labelling with the old one): bound
			// the current epoch by it.
			es = s.ep.Entries()
			cur = -1
			for i, e := range es {
				if e.StartOffset <= next && next < e.EndOffset {
					cur = i
				}
			}
			if cur < 0 {
				c.shut("the epoch file changed under the transfer", "next", next)
				return
			}
		}
		if next >= endOf(cur) && cur+1 < len(es) {
			cur++
			continue
		}
		var err error
		if next <= s.st.RawEnd() {
			err = s.st.ReadRaw(next, s.cfg.TransferBatchSize, &v)
		}
		if err != nil {
			c.shut("read commit log", "offset", next, "err", err)
			return
		}
		if n := int64(len(v.Data)); n > 0 {
			n = min(n, endOf(cur)-next)
			c.lastMasterMax.Store(s.st.MaxPhyOffset())
			c.lastTransfer.Store(time.Now().UnixNano())
			// Published before the write: the slave's ack may beat it.
			c.sent.Store(next + n)
			ok := send(v.Data[:n])
			v.Release()
			if !ok {
				return
			}
			next += n
			continue
		}
		// Nothing to send, everything sent acknowledged: caught up. Java's
		// size == 0 path counts it without the acknowledgement, keeping a
		// slave that stopped writing in the set while its socket buffers
		// take the bytes.
		if id := c.id.Load(); !c.learner.Load() && c.acked.Load() >= c.sent.Load() {
			s.mu.Lock()
			s.caughtUpLocked(id, time.Now())
			s.mu.Unlock()
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
