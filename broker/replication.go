package broker

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/store/ha"
	"github.com/rocketgo/rocketgo/store/ha/autoswitch"
)

// replicator is the HA side of a role as the role runtime (role.go) sees
// it: the master's server or the slave's client, of either protocol
// (classic HA, or AutoSwitch in controller mode).
type replicator interface {
	// master: a server (else a client).
	master() bool
	// addr is the bound HA listen address (nil on a slave).
	addr() net.Addr
	// slaves lists a master's connected slaves (nil on a slave).
	slaves() []ha.SlaveStatus
	// clientStatus is a slave's connection (false on a master).
	clientStatus() (ha.ClientStatus, bool)
	// setMasterAddr points a slave at the master's HA address.
	setMasterAddr(addr string)
	// setInSyncReplicas changes a master's quorum (inSyncReplicas).
	setInSyncReplicas(n int)
	// inSyncSlaveNums is AutoSwitch's inSyncSlaveNums (false otherwise).
	inSyncSlaveNums() (int, bool)
	Close() error
}

// replication makes the replicators of one HA protocol for one role
// change; the role runtime starts, reuses and closes them.
type replication interface {
	// enterMaster runs once the store is in a master role, before the
	// master's replicator is made or kept (AutoSwitch: the new epoch).
	enterMaster() error
	// newMaster makes and starts a master's replicator.
	newMaster() (replicator, error)
	// newSlave makes and starts a slave's replicator following
	// haMasterAddr ("" unknown yet).
	newSlave(haMasterAddr string) (replicator, error)
	// keepSlave runs when a slave's replicator stays (AutoSwitch: a new
	// master, drop the old connection).
	keepSlave(r replicator)
}

// haListenAddr is the HA listen address: haListenPort (as Validate
// resolved it), bound like the main port.
func (c *Config) haListenAddr() string {
	return net.JoinHostPort(c.BindIP(), strconv.Itoa(c.HaListenPort))
}

// haTLS is the HA port's TLS with our rocketgo.tls.ha.enable (Java's HA
// never uses TLS): the server's and the client's config, nil without it.
func (c *Config) haTLS(server bool) (*tls.Config, error) {
	if c.TLS == nil || !c.TLS.HA {
		return nil, nil
	}
	if server {
		return c.TLS.ServerTLS()
	}
	tc, _, err := c.TLS.Client()
	return tc, err
}

func (c *Config) haHeartbeat() time.Duration {
	return time.Duration(c.HaSendHeartbeatInterval) * time.Millisecond
}

func (c *Config) haHousekeeping() time.Duration {
	return time.Duration(c.HaHousekeepingInterval) * time.Millisecond
}

// classicReplication is master/slave HA (store/ha) on the broker's store.
type classicReplication struct {
	cfg *Config
	st  replStore
	log *slog.Logger
}

func (classicReplication) enterMaster() error   { return nil }
func (classicReplication) keepSlave(replicator) {}

func (p classicReplication) newMaster() (replicator, error) {
	tc, err := p.cfg.haTLS(true)
	if err != nil {
		return nil, fmt.Errorf("broker: ha: %w", err)
	}
	srv, err := ha.NewServer(ha.ServerConfig{
		TLS:                  tc,
		Addr:                 p.cfg.haListenAddr(),
		SegmentSize:          p.cfg.MappedFileSizeCommitLog,
		TransferBatchSize:    p.cfg.HaTransferBatchSize,
		HeartbeatInterval:    p.cfg.haHeartbeat(),
		HousekeepingInterval: p.cfg.haHousekeeping(),
		InSyncReplicas:       max(p.cfg.InSyncReplicas, 1),
		MaxGapNotInSync:      p.cfg.HaMaxGapNotInSync,
		Logger:               p.log,
	}, p.st)
	if err != nil {
		return nil, fmt.Errorf("broker: ha: %w", err)
	}
	srv.Start()
	return classicMaster{srv}, nil
}

func (p classicReplication) newSlave(haMasterAddr string) (replicator, error) {
	tc, err := p.cfg.haTLS(false)
	if err != nil {
		return nil, fmt.Errorf("broker: ha: %w", err)
	}
	cli := ha.NewClient(ha.ClientConfig{
		HeartbeatInterval:    p.cfg.haHeartbeat(),
		HousekeepingInterval: p.cfg.haHousekeeping(),
		TLS:                  tc,
		Logger:               p.log,
	}, p.st)
	cli.SetMasterAddr(haMasterAddr)
	cli.Start()
	return classicSlave{cli}, nil
}

// autoSwitchReplication is controller mode's AutoSwitch HA for one role
// change to epoch (master: controller id id, SyncStateSet set).
type autoSwitchReplication struct {
	rm    *replicasManager
	epoch int32
	id    int64
	set   []int64
}

func (p autoSwitchReplication) enterMaster() error {
	return autoswitch.BeginMasterEpoch(p.rm.ep, p.epoch, p.rm.st.MaxPhyOffset())
}

func (p autoSwitchReplication) keepSlave(r replicator) { r.setMasterAddr("") }

func (p autoSwitchReplication) newMaster() (replicator, error) {
	rm, cfg := p.rm, p.rm.cfg
	tc, err := cfg.haTLS(true)
	if err != nil {
		return nil, err
	}
	srv, err := autoswitch.NewServer(autoswitch.ServerConfig{
		TLS:                     tc,
		Addr:                    cfg.haListenAddr(),
		SegmentSize:             cfg.MappedFileSizeCommitLog,
		LocalBrokerID:           p.id,
		TransferBatchSize:       cfg.HaTransferBatchSize,
		HeartbeatInterval:       cfg.haHeartbeat(),
		HousekeepingInterval:    cfg.haHousekeeping(),
		MaxTimeSlaveNotCatchup:  ms(cfg.HaMaxTimeSlaveNotCatchup, 15*time.Second),
		CheckSyncStateSetPeriod: ms(cfg.CheckSyncStateSetPeriod, 5*time.Second),
		AllAckInSyncStateSet:    cfg.AllAckInSyncStateSet,
		InSyncReplicas:          max(cfg.InSyncReplicas, 1),
		OnSyncStateSetChanged:   rm.onSyncStateSetChanged,
		Logger:                  rm.blog,
	}, rm.st, rm.ep)
	if err != nil {
		return nil, fmt.Errorf("autoswitch server: %w", err)
	}
	srv.SetSyncStateSet(p.set)
	srv.Start()
	rm.srv.Store(srv)
	return autoSwitchMaster{srv: srv, pub: &rm.srv}, nil
}

func (p autoSwitchReplication) newSlave(haMasterAddr string) (replicator, error) {
	rm, cfg := p.rm, p.rm.cfg
	tc, err := cfg.haTLS(false)
	if err != nil {
		return nil, err
	}
	cli := autoswitch.NewClient(autoswitch.ClientConfig{
		TLS:                  tc,
		BrokerID:             p.id,
		SyncFromLastFile:     cfg.SyncFromLastFile,
		AsyncLearner:         cfg.AsyncLearner,
		HeartbeatInterval:    cfg.haHeartbeat(),
		HousekeepingInterval: cfg.haHousekeeping(),
		OnMasterLost:         rm.masterLost,
		Logger:               rm.blog,
	}, rm.st, rm.ep)
	cli.SetMasterAddr(haMasterAddr)
	cli.Start()
	return autoSwitchSlave{cli}, nil
}

// The four replicators.

type classicMaster struct{ *ha.Server }

func (classicMaster) master() bool                          { return true }
func (r classicMaster) addr() net.Addr                      { return r.Addr() }
func (r classicMaster) slaves() []ha.SlaveStatus            { return r.Slaves() }
func (classicMaster) clientStatus() (ha.ClientStatus, bool) { return ha.ClientStatus{}, false }
func (classicMaster) setMasterAddr(string)                  {}
func (r classicMaster) setInSyncReplicas(n int)             { r.SetInSyncReplicas(n) }
func (classicMaster) inSyncSlaveNums() (int, bool)          { return 0, false }

type classicSlave struct{ *ha.Client }

func (classicSlave) master() bool                            { return false }
func (classicSlave) addr() net.Addr                          { return nil }
func (classicSlave) slaves() []ha.SlaveStatus                { return nil }
func (r classicSlave) clientStatus() (ha.ClientStatus, bool) { return r.Status(), true }
func (r classicSlave) setMasterAddr(a string)                { r.SetMasterAddr(a) }
func (classicSlave) setInSyncReplicas(int)                   {}
func (classicSlave) inSyncSlaveNums() (int, bool)            { return 0, false }

// autoSwitchMaster publishes its Server to the replicas manager (pub: the
// send gate and SyncStateSet answers) until Close.
type autoSwitchMaster struct {
	srv *autoswitch.Server
	pub *atomic.Pointer[autoswitch.Server]
}

func (autoSwitchMaster) master() bool     { return true }
func (r autoSwitchMaster) addr() net.Addr { return r.srv.Addr() }

// slaves: in sync means in the master's local SyncStateSet, as Java's
// AutoSwitchHAService.getRuntimeInfo.
func (r autoSwitchMaster) slaves() []ha.SlaveStatus {
	in, local := r.srv.Slaves(), r.srv.LocalSyncStateSet()
	out := make([]ha.SlaveStatus, 0, len(in))
	for _, s := range in {
		out = append(out, ha.SlaveStatus{Addr: s.Addr, AckOffset: s.AckOffset, Diff: s.Diff, InSync: slices.Contains(local, s.BrokerID),
			TransferFrom: s.TransferFrom, SentOffset: s.SentOffset, TransferredBytesPerSecond: s.TransferredBytesPerSecond})
	}
	return out
}
func (autoSwitchMaster) clientStatus() (ha.ClientStatus, bool) { return ha.ClientStatus{}, false }
func (autoSwitchMaster) setMasterAddr(string)                  {}

// setInSyncReplicas: without allAckInSyncStateSet the Server's quorum.
func (r autoSwitchMaster) setInSyncReplicas(n int) { r.srv.SetInSyncReplicas(n) }

// inSyncSlaveNums is the master's local SyncStateSet without itself.
func (r autoSwitchMaster) inSyncSlaveNums() (int, bool) {
	return max(len(r.srv.LocalSyncStateSet())-1, 0), true
}

func (r autoSwitchMaster) Close() error {
	r.pub.Store(nil)
	return r.srv.Close()
}

type autoSwitchSlave struct{ *autoswitch.Client }

func (autoSwitchSlave) master() bool             { return false }
func (autoSwitchSlave) addr() net.Addr           { return nil }
func (autoSwitchSlave) slaves() []ha.SlaveStatus { return nil }
func (r autoSwitchSlave) clientStatus() (ha.ClientStatus, bool) {
	s := r.Status()
	return ha.ClientStatus{MasterAddr: s.MasterAddr, Connected: s.Connected, ReportedOffset: s.ReportedOffset,
		LastRead: s.LastRead, LastWrite: s.LastWrite, TransferredBytesPerSecond: s.TransferredBytesPerSecond}, true
}
func (r autoSwitchSlave) setMasterAddr(a string)     { r.SetMasterAddr(a) }
func (autoSwitchSlave) setInSyncReplicas(int)        {}
func (autoSwitchSlave) inSyncSlaveNums() (int, bool) { return 0, false }
