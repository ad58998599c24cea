package broker

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/ha"
	"github.com/rocketgo/rocketgo/store/ha/autoswitch"
)

// haAddressMinLength: a configured haMasterAddress shorter than this is
// ignored (Java BrokerController.HA_ADDRESS_MIN_LENGTH).
const haAddressMinLength = 6

// replStore is what replication needs from the store (*store.Store). A
// MessageStore without it (a test double) runs without HA.
type replStore interface {
	ha.MasterStore
	ha.SlaveStore
	SetRole(store.Role) error
	Role() store.Role
	SetInSyncReplicas(n int)
	SetSlaveTimeout(d time.Duration)
}

// roleState is the broker's role as run-time state: role, brokerId, the
// master's broker address and HA address. Processors read IsSlave on the
// hot path (an atomic); everything else is under mu.
type roleState struct {
	slave atomic.Bool

	mu           sync.Mutex
	role         store.Role
	brokerID     int64
	masterAddr   string // master's broker address (registration reply)
	haMasterAddr string // master's HA address
	haFixed      bool   // haMasterAddress configured: replies do not change it
}

func newRoleState(cfg *Config) (*roleState, error) {
	role, err := store.ParseRole(cfg.BrokerRole)
	if err != nil {
		return nil, err
	}
	r := &roleState{role: role, brokerID: cfg.BrokerID}
	if len(cfg.HaMasterAddress) >= haAddressMinLength {
		r.haMasterAddr, r.haFixed = cfg.HaMasterAddress, true
	}
	r.slave.Store(role == store.Slave)
	return r, nil
}

// IsSlave reports whether the broker is a slave now.
func (r *roleState) IsSlave() bool { return r.slave.Load() }

// MasterAddr is the master's broker address as the last registration
// reply named it ("" unknown or a master).
func (r *roleState) MasterAddr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.masterAddr
}

// Role is the current role.
func (r *roleState) Role() store.Role {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.role
}

// BrokerID is the current brokerId (0 on a master).
func (r *roleState) BrokerID() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.brokerID
}

// HAMasterAddr is the master's HA address ("" unknown).
func (r *roleState) HAMasterAddr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.haMasterAddr
}

// validateRole checks brokerRole and brokerId as Java's BrokerStartup: a
// slave needs brokerId > 0. (Java forces a master's brokerId to 0; here
// New does that on the role state, the fixed Config keeps what was read.)
func (c *Config) validateRole() error {
	role, err := store.ParseRole(c.BrokerRole)
	if err != nil {
		return fmt.Errorf("broker: brokerRole: %w", err)
	}
	if role == store.Slave && c.BrokerID <= 0 && !c.EnableControllerMode {
		// compat: in controller mode Java's sample conf starts every
		// broker as SLAVE with brokerId -1; the controller assigns both.
		return errors.New("broker: a SLAVE's brokerId must be > 0")
	}
	if c.InSyncReplicas < 0 || c.TotalReplicas < 0 || c.MinInSyncReplicas < 0 {
		return errors.New("broker: totalReplicas, inSyncReplicas and minInSyncReplicas must not be negative")
	}
	if c.HaListenPort <= 0 {
		// compat: Java's BrokerStartup turns haListenPort <= 0 into
		// listenPort+1; with listenPort 0 (any port, tests) it is any
		// port too.
		c.HaListenPort = 0
		if c.ListenPort > 0 {
			c.HaListenPort = c.ListenPort + 1
		}
	}
	if c.HaListenPort > 65535 {
		return fmt.Errorf("broker: haListenPort %d out of range", c.HaListenPort)
	}
	return nil
}

// roleRuntime is what a role starts: the HA server (master) or client
// (slave) and the master-only services. Guarded by Broker.roleMu.
type roleRuntime struct {
	srv      *ha.Server
	cli      *ha.Client
	services bool // delay levels, timers, transaction checks running

	// Controller mode (controllermode_role.go): the AutoSwitch HA
	// server or client instead of srv/cli.
	asrv *autoswitch.Server
	acli *autoswitch.Client
}

// Role is the broker's current role.
func (b *Broker) Role() store.Role { return b.role.Role() }

// IsSlave reports whether the broker is a slave now.
func (b *Broker) IsSlave() bool { return b.role.IsSlave() }

// MasterAddr is the master's broker address ("" unknown).
func (b *Broker) MasterAddr() string { return b.role.MasterAddr() }

// HAAddr is the bound HA listen address, "" when not serving (a slave,
// a store without replication, or not started).
func (b *Broker) HAAddr() string {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.asrv != nil {
		return b.rrt.asrv.Addr().String()
	}
	if b.rrt.srv == nil {
		return ""
	}
	return b.rrt.srv.Addr().String()
}

// HAClientStatus is the slave's HA connection (ok false on a master).
func (b *Broker) HAClientStatus() (ha.ClientStatus, bool) {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.acli != nil {
		return autoSwitchClientStatus(b.rrt.acli.Status()), true
	}
	if b.rrt.cli == nil {
		return ha.ClientStatus{}, false
	}
	return b.rrt.cli.Status(), true
}

// HASlaves lists the master's connected slaves (nil on a slave).
func (b *Broker) HASlaves() []ha.SlaveStatus {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.asrv != nil {
		return autoSwitchSlaves(b.rrt.asrv.Slaves(), b.rrt.asrv.LocalSyncStateSet())
	}
	if b.rrt.srv == nil {
		return nil
	}
	return b.rrt.srv.Slaves()
}

// SetRole switches the role at run time: the store's role, the HA server
// or client and the master-only services follow. A master gets brokerId
// 0 as in Java; a slave needs brokerID > 0. haMasterAddr, when not "",
// replaces the master HA address. It is also what the failover issue
// calls.
func (b *Broker) SetRole(role store.Role, brokerID int64, haMasterAddr string) error {
	if role < store.AsyncMaster || role > store.Slave {
		return fmt.Errorf("broker: unknown role %d", role)
	}
	if role == store.Slave && brokerID <= 0 {
		return errors.New("broker: a SLAVE's brokerId must be > 0")
	}
	if b.rm != nil {
		return errors.New("broker: controller mode: the controller decides the role")
	}
	if role != store.Slave {
		brokerID = 0
	}
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.roleClosed {
		return errors.New("broker: closed")
	}
	r := b.role
	r.mu.Lock()
	old := r.role
	r.role, r.brokerID = role, brokerID
	if haMasterAddr != "" {
		r.haMasterAddr = haMasterAddr
	}
	if role != store.Slave {
		r.masterAddr = ""
	}
	r.mu.Unlock()
	if err := b.applyRoleLocked(old); err != nil {
		return err
	}
	b.log.Info("broker role changed", "from", old, "to", role, "brokerId", brokerID)
	b.reg.changed() // re-register at once with the new brokerId
	return nil
}

// applyRoleLocked brings the store, HA and the services to the role in
// b.role. roleMu held. old is the previous role (for the store order).
func (b *Broker) applyRoleLocked(old store.Role) error {
	if b.rm != nil {
		return b.rm.applyStartRoleLocked()
	}
	role := b.role.Role()
	rs, repl := b.store.(replStore)
	if role == store.Slave {
		// Stop taking local writes first, then the services that write.
		b.role.slave.Store(true)
		if repl {
			if err := rs.SetRole(role); err != nil {
				return fmt.Errorf("broker: store role: %w", err)
			}
		}
		b.stopServicesLocked()
		if b.rrt.srv != nil {
			if err := b.rrt.srv.Close(); err != nil {
				b.log.Warn("ha server close", "err", err)
			}
			b.rrt.srv = nil
		}
		if repl && b.rrt.cli == nil {
			cc, err := b.haClientConfig()
			if err != nil {
				return fmt.Errorf("broker: ha: %w", err)
			}
			b.rrt.cli = ha.NewClient(cc, rs)
			b.rrt.cli.SetMasterAddr(b.role.HAMasterAddr())
			b.rrt.cli.Start()
		}
		return nil
	}
	if b.rrt.cli != nil {
		if err := b.rrt.cli.Close(); err != nil {
			b.log.Warn("ha client close", "err", err)
		}
		b.rrt.cli = nil
	}
	if repl {
		if err := rs.SetRole(role); err != nil {
			return fmt.Errorf("broker: store role: %w", err)
		}
		if b.rrt.srv == nil {
			sc, err := b.haServerConfig()
			if err != nil {
				return fmt.Errorf("broker: ha: %w", err)
			}
			srv, err := ha.NewServer(sc, rs)
			if err != nil {
				return fmt.Errorf("broker: ha: %w", err)
			}
			srv.Start()
			b.rrt.srv = srv
		}
	}
	b.startServicesLocked()
	b.role.slave.Store(false)
	_ = old
	return nil
}

func (b *Broker) startServicesLocked() {
	if b.rrt.services {
		return
	}
	b.delay.start()
	b.txn.start()
	b.timer.start()
	b.rrt.services = true
}

func (b *Broker) stopServicesLocked() {
	if !b.rrt.services {
		return
	}
	b.delay.stop()
	b.txn.stop()
	b.timer.halt()
	b.rrt.services = false
}

// closeRole stops everything the role started (Close).
func (b *Broker) closeRole() {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	b.roleClosed = true
	b.stopServicesLocked()
	b.closeAutoSwitchLocked()
	if b.rrt.srv != nil {
		if err := b.rrt.srv.Close(); err != nil {
			b.log.Warn("ha server close", "err", err)
		}
		b.rrt.srv = nil
	}
	if b.rrt.cli != nil {
		if err := b.rrt.cli.Close(); err != nil {
			b.log.Warn("ha client close", "err", err)
		}
		b.rrt.cli = nil
	}
}

// haListen is the HA listen address: haListenPort (as Validate resolved
// it), bound like the main port.
func (b *Broker) haListen() string {
	return net.JoinHostPort(b.cfg.BindIP(), strconv.Itoa(b.cfg.HaListenPort))
}

// haServerConfig is the classic HA master's config; TLS-only with our
// rocketgo.tls.ha.enable (Java's HA never uses TLS).
func (b *Broker) haServerConfig() (ha.ServerConfig, error) {
	var tc *tls.Config
	if b.cfg.TLS != nil && b.cfg.TLS.HA {
		var err error
		if tc, err = b.cfg.TLS.ServerTLS(); err != nil {
			return ha.ServerConfig{}, err
		}
	}
	return ha.ServerConfig{
		TLS:                  tc,
		Addr:                 b.haListen(),
		SegmentSize:          b.cfg.MappedFileSizeCommitLog,
		TransferBatchSize:    b.cfg.HaTransferBatchSize,
		HeartbeatInterval:    time.Duration(b.cfg.HaSendHeartbeatInterval) * time.Millisecond,
		HousekeepingInterval: time.Duration(b.cfg.HaHousekeepingInterval) * time.Millisecond,
		InSyncReplicas:       max(b.cfg.InSyncReplicas, 1),
		MaxGapNotInSync:      b.cfg.HaMaxGapNotInSync,
		Logger:               b.log,
	}, nil
}

// haClientConfig is the classic HA slave's config (TLS as haServerConfig).
func (b *Broker) haClientConfig() (ha.ClientConfig, error) {
	var tc *tls.Config
	if b.cfg.TLS != nil && b.cfg.TLS.HA {
		var err error
		if tc, _, err = b.cfg.TLS.Client(); err != nil {
			return ha.ClientConfig{}, err
		}
	}
	return ha.ClientConfig{
		HeartbeatInterval:    time.Duration(b.cfg.HaSendHeartbeatInterval) * time.Millisecond,
		HousekeepingInterval: time.Duration(b.cfg.HaHousekeepingInterval) * time.Millisecond,
		TLS:                  tc,
		Logger:               b.log,
	}, nil
}

// haServerAddr is what registration advertises: brokerIP2 (else
// brokerIP1) with the HA port (Java BrokerController.getHAServerAddr).
func (b *Broker) haServerAddr() string {
	ip := b.cfg.BrokerIP2
	if ip == "" {
		ip = b.cfg.BrokerIP1
	}
	port := b.cfg.HaListenPort
	b.roleMu.Lock()
	if b.rrt.srv != nil {
		if a, ok := b.rrt.srv.Addr().(*net.TCPAddr); ok {
			port = a.Port
		}
	}
	if b.rrt.asrv != nil {
		if a, ok := b.rrt.asrv.Addr().(*net.TCPAddr); ok {
			port = a.Port
		}
	}
	b.roleMu.Unlock()
	return net.JoinHostPort(ip, strconv.Itoa(port))
}

// onRegisterResult applies a REGISTER_BROKER reply as Java's
// handleRegisterBrokerResult: the master's HA address (unless
// haMasterAddress is configured) and the master's broker address.
func (b *Broker) onRegisterResult(masterAddr, haAddr string) {
	if b.rm != nil {
		b.rm.onRegisterResult(masterAddr, haAddr)
		return
	}
	r := b.role
	r.mu.Lock()
	r.masterAddr = masterAddr
	update := haAddr != "" && !r.haFixed && r.haMasterAddr != haAddr
	if update {
		r.haMasterAddr = haAddr
	}
	r.mu.Unlock()
	if !update {
		return
	}
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.cli != nil {
		b.rrt.cli.SetMasterAddr(haAddr)
	}
}

// putStored reports whether a put's message is in the store: Java's
// sendOK statuses (PUT_OK, FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT).
func putStored(s store.PutStatus) bool {
	return s == store.PutOK || s == store.FlushDiskTimeout || s == store.FlushSlaveTimeout
}

// rejectSlave answers a request a slave refuses as Java's rejectRequest.
func rejectSlave(req *codec.Frame) *codec.Frame {
	return codec.NewResponse(req, int32(codec.RespSystemBusy), remarks.RejectRequest)
}
