package controller

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// applyTimeout bounds one Raft apply, as Java's processor waits at most
// 5 s (WAIT_TIMEOUT_OUT) for its consensus future.
const applyTimeout = 5 * time.Second

// Controller is one node of a controller group: the remoting server on the
// peer's address, the Raft node, the heartbeat table and the scanners.
type Controller struct {
	cfg   atomic.Pointer[Config] // replaced whole by UPDATE_CONTROLLER_CONFIG
	cfgMu sync.Mutex             // serializes config updates
	log   *slog.Logger
	auth  *auth.Service // with authentication on: who may call (nil: anyone)
	now   func() time.Time
	peers []Peer
	self  Peer

	state *State
	live  *heartbeats
	dec   *decider
	node  *node

	// writeMu serializes decide + replicate, as Java's single event
	// thread does, so no event is decided on a state that a concurrent
	// write is about to change.
	writeMu     sync.Mutex
	ready       atomic.Bool  // Raft leader with every earlier entry applied
	leaderSince atomic.Int64 // unix nanos when ready last became true

	srv    *transport.Server
	pool   *transport.Pool
	client *transport.Client // NOTIFY_BROKER_ROLE_CHANGED to brokers

	metrics *controllerMetrics // metricsExporterType=PROM or OTLP_GRPC (metrics.go); nil otherwise

	stop      chan struct{}
	bg        sync.WaitGroup
	closeOnce sync.Once
}

// New validates cfg and builds a controller; Start opens Raft and listens.
func New(cfg Config, log *slog.Logger) (*Controller, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.Default()
	}
	peers, err := cfg.PeerList()
	if err != nil {
		return nil, err
	}
	c := &Controller{log: log, now: time.Now, peers: peers, state: NewState(), stop: make(chan struct{})}
	for _, p := range peers {
		if p.ID == cfg.SelfID {
			c.self = p
		}
	}
	cc := cfg
	c.cfg.Store(&cc)
	c.live = newHeartbeats(c.now, cfg.MaxLiveBrokers)
	c.dec = &decider{
		state:   c.state,
		live:    c.live,
		unclean: func() bool { return c.Config().EnableElectUncleanMaster },
		bounds: func() (int, int) {
			x := c.Config()
			return x.MaxBrokerSets, x.MaxBrokersPerSet
		},
		adminLive: func() bool { return c.Config().AllowAdminOnLiveBrokers },
	}
	return c, nil
}

// Config returns the current configuration.
func (c *Controller) Config() Config { return *c.cfg.Load() }

// Start opens the Raft node, listens on the peer's remoting address and
// starts the leadership watcher and the scanners.
func (c *Controller) Start() error {
	cfg := c.Config()
	n, err := openNode(&cfg, c.peers, &fsm{state: c.state}, c.log)
	if err != nil {
		return err
	}
	c.node = n
	c.pool = transport.NewPool("controller", cfg.ThreadPoolNums, cfg.RequestQueueCapacity)
	var sign func(*codec.Frame)
	inner, signed, err := auth.ParseCredentials(cfg.Auth.InnerClientAuthenticationCredentials)
	if err == nil && signed {
		sign = inner.Signer() // NOTIFY_BROKER_ROLE_CHANGED to brokers with auth on
	}
	if err == nil && cfg.Auth.AuthenticationEnabled {
		c.auth, err = auth.Open(cfg.Auth, filepath.Join(cfg.StorePath, "auth"), c.log.With("component", "auth"))
	}
	if err != nil {
		c.pool.Close()
		n.close()
		return fmt.Errorf("controller: auth: %w", err)
	}
	ccfg, tlsErr := transport.ClientConfig{Logger: c.log, BeforeRequest: sign}.WithTLS(cfg.TLS)
	c.client = transport.NewClient(ccfg)
	scfg, err := transport.ServerConfig{
		Addr:        c.self.Addr,
		Logger:      c.log,
		IdleTimeout: transport.DefaultIdleTimeout,
		OnClose: func(conn *transport.Conn) {
			// Off the event loop: may trigger an election.
			c.bg.Add(1)
			go func() {
				defer c.bg.Done()
				for _, k := range c.live.connClosed(conn) {
					c.onBrokerInactive(k)
				}
			}()
		},
	}.WithTLS(cfg.TLS)
	r := c.router()
	if err == nil {
		err = tlsErr
	}
	if err == nil {
		if c.metrics, err = newControllerMetrics(c, cfg); err == nil && c.metrics != nil {
			r.Observe(c.metrics.observe)
		}
	}
	c.srv = transport.NewServer(scfg, r)
	if err == nil {
		err = c.srv.Start()
	}
	if err == nil && c.metrics != nil {
		host, _, _ := net.SplitHostPort(c.self.Addr)
		if err = c.metrics.exp.Start(cfg.metricsConfig(), host); err != nil {
			_ = c.srv.Close()
			c.srv = nil
		}
	}
	if err != nil {
		c.pool.Close()
		c.client.Close()
		n.close()
		if c.auth != nil {
			_ = c.auth.Close()
		}
		return fmt.Errorf("controller: listen %s: %w", c.self.Addr, err)
	}
	c.bg.Add(2)
	go c.watchLeadership()
	go c.scan()
	c.log.Info("controller: started", "id", c.self.ID, "addr", c.srv.Addr(), "raft", c.self.RaftAddr, "group", cfg.Group)
	return nil
}

// Addr is the bound remoting address.
func (c *Controller) Addr() string { return c.srv.Addr() }

// IsLeader reports whether this node leads and serves writes.
func (c *Controller) IsLeader() bool {
	// A closing node acts no more: its connections closing must not look
	// like brokers dying.
	return c.ready.Load() && !c.Closed() && c.node != nil && c.node.raft.State() == raft.Leader
}

// Closed reports whether Close was called.
func (c *Controller) Closed() bool {
	select {
	case <-c.stop:
		return true
	default:
		return false
	}
}

// Close stops the scanners, the server and the Raft node.
func (c *Controller) Close() error {
	var err error
	c.closeOnce.Do(func() {
		close(c.stop)
		if c.metrics != nil {
			if e := c.metrics.exp.Close(); e != nil {
				c.log.Warn("controller: close metrics endpoint", "err", e)
			}
		}
		if c.srv != nil {
			err = c.srv.Close()
		}
		c.bg.Wait()
		if c.pool != nil {
			c.pool.Close()
		}
		if c.client != nil {
			c.client.Close()
		}
		if c.node != nil {
			if e := c.node.close(); err == nil {
				err = e
			}
		}
		if c.auth != nil {
			if e := c.auth.Close(); err == nil {
				err = e
			}
		}
		c.log.Info("controller: stopped", "id", c.self.ID)
	})
	return err
}

// watchLeadership turns ready on once this node leads and a barrier has
// applied every earlier entry (Java's DLedger controller appends an empty
// entry for the same reason), and off when it stops leading.
func (c *Controller) watchLeadership() {
	defer c.bg.Done()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.stop:
			c.ready.Store(false)
			return
		case <-tick.C:
		}
		leader := c.node.raft.State() == raft.Leader
		switch {
		case leader && !c.ready.Load():
			if err := c.node.raft.Barrier(applyTimeout).Error(); err != nil {
				c.log.Warn("controller: leader barrier failed", "err", err)
				continue
			}
			c.leaderSince.Store(c.now().UnixNano())
			c.ready.Store(true)
			c.log.Info("controller: leading", "id", c.self.ID)
		case !leader && c.ready.Load():
			c.ready.Store(false)
			c.log.Info("controller: no longer leading", "id", c.self.ID)
		}
	}
}

// scan expires heartbeats every scanNotActiveBrokerInterval and, on the
// leader, re-elects masters that went silent every scanInactiveMasterInterval.
func (c *Controller) scan() {
	defer c.bg.Done()
	cfg := c.Config()
	// The expiry scan runs every scanNotActiveBrokerInterval and also
	// just after the earliest heartbeat deadline, so a silent broker is
	// found when its controllerHeartBeatTimeoutMills runs out, not up to
	// one scan interval later (Java's fixed-rate scan).
	hb := time.NewTimer(c.live.untilNextExpiry(cfg.ScanNotActiveBrokerInterval))
	defer hb.Stop()
	im := time.NewTicker(cfg.ScanInactiveMasterInterval)
	defer im.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-c.live.Added():
			// Go ≥ 1.23: Reset also drops an expiry not yet received.
			hb.Reset(c.live.untilNextExpiry(c.Config().ScanNotActiveBrokerInterval))
		case <-hb.C:
			gone, conns := c.live.expire()
			hb.Reset(c.live.untilNextExpiry(c.Config().ScanNotActiveBrokerInterval))
			for _, conn := range conns {
				conn.Close()
			}
			for _, k := range gone {
				c.log.Warn("controller: broker heartbeat expired", "cluster", k.cluster, "broker", k.broker, "id", k.id)
				c.onBrokerInactive(k)
			}
		case <-im.C:
			c.scanInactiveMasters()
		}
	}
}

// scanInactiveMasters triggers elections for broker sets whose master is
// silent. A leader that has led for less than controllerElectGraceMillis
// skips it: its heartbeat table may simply not have heard from the master
// yet (apache/rocketmq#5712).
func (c *Controller) scanInactiveMasters() {
	if !c.IsLeader() {
		return
	}
	if c.now().Sub(time.Unix(0, c.leaderSince.Load())) < c.Config().ElectGrace {
		return
	}
	for _, name := range c.dec.needReelect() {
		c.triggerElect(name)
	}
}

// onBrokerInactive reacts to one broker that expired or disconnected: if it
// was the master of its set, the leader elects another (Java's
// ControllerManager.onBrokerInactive).
func (c *Controller) onBrokerInactive(k brokerKey) {
	if !c.IsLeader() {
		return
	}
	if c.dec.masterOf(k.broker) != k.id {
		return
	}
	c.triggerElect(k.broker)
}

// triggerElect runs a controller-triggered election, retrying on Raft
// errors up to electMasterMaxRetryCount times. Java also retries when no
// candidate is left, replicating one "master lost" event per try; one is
// enough, so we stop at CONTROLLER_MASTER_NOT_AVAILABLE.
func (c *Controller) triggerElect(brokerName string) {
	tries := max(c.Config().ElectMasterMaxRetryCount, 1)
	for i := 0; i < tries; i++ {
		r, err := c.run(true, func() *result { return c.dec.electMaster(brokerName, -1, false) })
		if err != nil {
			c.log.Warn("controller: triggered election failed", "broker", brokerName, "try", i, "err", err)
			continue
		}
		switch r.code {
		case codec.RespSuccess:
			c.log.Info("controller: elected master", "broker", brokerName, "master", r.ext)
			c.notifyRoleChanged(brokerName)
		case codec.RespControllerMasterNotAvailable:
			c.log.Warn("controller: master lost, no candidate", "broker", brokerName)
		}
		return
	}
}

var errNotLeader = errors.New("controller: not leader")

// run decides and, for writes, replicates the decision's events before
// returning it.
func (c *Controller) run(write bool, decide func() *result) (*result, error) {
	if write {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
	}
	if !c.IsLeader() {
		return nil, errNotLeader
	}
	r := decide()
	if len(r.events) == 0 {
		if c.Config().ProcessReadEvent {
			if err := c.node.raft.Barrier(applyTimeout).Error(); err != nil {
				return nil, fmt.Errorf("controller: read barrier: %w", err)
			}
		}
		return r, nil
	}
	for i := range r.events {
		f := c.node.raft.Apply(encodeEvent(&r.events[i]), applyTimeout)
		if err := f.Error(); err != nil {
			return nil, fmt.Errorf("controller: raft apply: %w", err)
		}
		if err, ok := f.Response().(error); ok && err != nil {
			return nil, err
		}
	}
	return r, nil
}

// notifyRoleChanged tells every live member of brokerName its new master
// with a oneway NOTIFY_BROKER_ROLE_CHANGED, as Java's ControllerManager does.
func (c *Controller) notifyRoleChanged(brokerName string) {
	if !c.Config().NotifyBrokerRoleChanged {
		return
	}
	var targets []string
	var h header.NotifyBrokerRoleChangedRequest
	var set []byte
	c.state.view(brokerName, func(bs *brokerSet) {
		if bs == nil || bs.Master == 0 {
			return
		}
		h = header.NotifyBrokerRoleChangedRequest{MasterAddress: bs.addr(bs.Master), MasterEpoch: bs.MasterEpoch, SyncStateSetEpoch: bs.SyncEpoch, MasterBrokerID: bs.Master}
		set = body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: bs.SyncSet, Epoch: bs.SyncEpoch})
		for _, id := range bs.ids() {
			// Only a live broker (heartbeating on the connection that holds
			// its identity) at the address it heartbeats with: a
			// registration alone never makes us dial a host.
			a := bs.Brokers[id].Addr
			if info, ok := c.live.Info(bs.Cluster, bs.Name, id); ok && a != "" && a == info.Addr && c.live.Alive(bs.Cluster, bs.Name, id) {
				targets = append(targets, a)
			}
		}
	})
	for _, addr := range targets {
		if _, _, err := net.SplitHostPort(addr); err != nil {
			continue
		}
		f := &codec.Frame{Code: int32(codec.ReqNotifyBrokerRoleChanged), Language: codec.LangJava, Version: codec.ServerVersion, Body: set}
		h.Encode(f)
		select {
		case <-c.stop:
			return
		default:
		}
		c.bg.Add(1)
		go func(addr string, f *codec.Frame) {
			defer c.bg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			defer cancel()
			if err := c.client.InvokeOneway(ctx, addr, f); err != nil {
				c.log.Warn("controller: notify role changed", "broker", addr, "err", err)
				return
			}
			c.log.Info("controller: notified role change", "broker", addr, "master", h.MasterAddress, "epoch", h.MasterEpoch)
		}(addr, f)
	}
}

// leaderPeer returns the current Raft leader as a peer of the group.
func (c *Controller) leaderPeer() (Peer, bool) {
	if c.node == nil {
		return Peer{}, false
	}
	_, id := c.node.raft.LeaderWithID()
	for _, p := range c.peers {
		if raft.ServerID(p.ID) == id {
			return p, true
		}
	}
	return Peer{}, false
}
