package autoswitch

import (
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
	"github.com/rocketgo/rocketgo/store/ha"
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
	// TLS, when set, makes the port TLS-only (ours, rocketgo.tls.ha.enable:
	// Java's HA never uses TLS); the handshake runs on a slave's first read.
	TLS *tls.Config
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

// Server is the master side of the AutoSwitch HA protocol: the
// replication core (ha.Hub) with AutoSwitch's sessions (conn) and the
// SyncStateSet (syncstate.go).
type Server struct {
	cfg   ServerConfig
	st    MasterStore
	ep    Epochs
	log   *slog.Logger
	hub   *ha.Hub[*conn]
	wg    sync.WaitGroup
	once  sync.Once
	quit  chan struct{}
	kick  chan struct{} // wakes the notifier
	isr   atomic.Int32  // InSyncReplicas (no AllAckInSyncStateSet)
	start sync.Once

	// hub.Mu guards the connection set and everything below; never held
	// while calling the store's AckReplicated or the owner's callback.
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
	s := &Server{cfg: cfg, st: st, ep: ep, log: cfg.Logger, quit: make(chan struct{}), kick: make(chan struct{}, 1),
		confirmed: map[int64]struct{}{cfg.LocalBrokerID: {}}, caughtUp: map[int64]time.Time{}, confirm: -1}
	hub, err := ha.NewHub(ha.HubConfig{Name: "autoswitch", Addr: cfg.Addr, TLS: cfg.TLS, TransferBatchSize: cfg.TransferBatchSize,
		HeartbeatInterval: cfg.HeartbeatInterval, HousekeepingInterval: cfg.HousekeepingInterval, Logger: cfg.Logger},
		st, func(hc *ha.Conn[*conn]) *conn { return newConn(s, hc) })
	if err != nil {
		return nil, err
	}
	s.hub = hub
	s.isr.Store(int32(cfg.InSyncReplicas))
	return s, nil
}

// Addr is the listening address.
func (s *Server) Addr() net.Addr { return s.hub.Addr() }

// Start accepts slaves and runs the SyncStateSet check until Close.
func (s *Server) Start() {
	s.start.Do(func() {
		s.hub.Mu.Lock()
		s.applyLocked()
		s.hub.Mu.Unlock()
		s.updateQuorum()
		s.hub.Start()
		s.wg.Add(2)
		go s.notifier()
		go s.checker()
	})
}

// Close stops listening and drops every slave.
func (s *Server) Close() error {
	var err error
	s.once.Do(func() {
		close(s.quit)
		s.hub.Mu.Lock()
		s.done = true
		s.hub.Mu.Unlock()
		err = s.hub.Close()
		s.wg.Wait()
	})
	return err
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
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	return s.confirm
}

// Proposals counts the SyncStateSet proposals delivered so far (tests).
func (s *Server) Proposals() int {
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	return s.proposeCount
}

// Slaves lists the connected slaves.
func (s *Server) Slaves() []SlaveStatus {
	end := s.st.MaxPhyOffset()
	now := time.Now()
	s.hub.Mu.Lock()
	defer s.hub.Mu.Unlock()
	conns := s.hub.ConnsLocked()
	out := make([]SlaveStatus, 0, len(conns))
	for hc := range conns {
		c := hc.S
		a := hc.Acked()
		id := c.id.Load()
		_, in := s.confirmed[id]
		out = append(out, SlaveStatus{Addr: hc.Addr(), BrokerID: id, State: State(c.state.Load()), AsyncLearner: c.learner.Load(),
			AckOffset: a, Diff: end - max(a, 0), InSync: in && id >= 0, TransferFrom: hc.From(), SentOffset: hc.Sent(),
			TransferredBytesPerSecond: hc.BytesPerSecond(now)})
	}
	return out
}
