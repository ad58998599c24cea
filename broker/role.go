package broker

import (
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

// roleRuntime is what a role starts: the replicator (the HA server on a
// master, the client on a slave, of either protocol: replication.go) and
// the master-only services. Guarded by Broker.roleMu.
type roleRuntime struct {
	repl     replicator // nil: none (a store without replication, controller mode before a master is known)
	services bool       // delay levels, timers, transaction checks running
}

// Role is the broker's current role.
func (b *Broker) Role() store.Role { return b.role.Role() }

// IsSlave reports whether the broker is a slave now.
func (b *Broker) IsSlave() bool { return b.role.IsSlave() }

// MasterAddr is the master's broker address ("" unknown).
func (b *Broker) MasterAddr() string { return b.role.MasterAddr() }

// haAddr is the bound HA listen address, nil when not serving. roleMu
// held.
func (b *Broker) haAddrLocked() net.Addr {
	if b.rrt.repl == nil {
		return nil
	}
	return b.rrt.repl.addr()
}

// HAAddr is the bound HA listen address, "" when not serving (a slave,
// a store without replication, or not started).
func (b *Broker) HAAddr() string {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if a := b.haAddrLocked(); a != nil {
		return a.String()
	}
	return ""
}

// HAClientStatus is the slave's HA connection (ok false on a master).
func (b *Broker) HAClientStatus() (ha.ClientStatus, bool) {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.repl == nil {
		return ha.ClientStatus{}, false
	}
	return b.rrt.repl.clientStatus()
}

// HASlaves lists the master's connected slaves (nil on a slave).
func (b *Broker) HASlaves() []ha.SlaveStatus {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.repl == nil {
		return nil
	}
	return b.rrt.repl.slaves()
}

// HAInSyncSlaveNums is Java's AutoSwitch inSyncSlaveNums: the master's
// local SyncStateSet without itself (ok false outside controller mode or
// on a slave).
func (b *Broker) HAInSyncSlaveNums() (int, bool) {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.repl == nil {
		return 0, false
	}
	return b.rrt.repl.inSyncSlaveNums()
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
// b.role (classic mode) or to controller mode's start role: a fenced
// slave with nothing running until the controller names a master.
// roleMu held. old is the previous role.
func (b *Broker) applyRoleLocked(old store.Role) error {
	_ = old
	if rm := b.rm; rm != nil {
		return b.switchRoleLocked(store.Slave, rm.st, nil, func() {
			b.role.mu.Lock()
			b.role.role = store.Slave
			b.role.mu.Unlock()
		})
	}
	rs, ok := b.store.(replStore)
	if !ok {
		return b.switchRoleLocked(b.role.Role(), nil, nil, nil)
	}
	return b.switchRoleLocked(b.role.Role(), rs, classicReplication{cfg: &b.cfg, st: rs, log: b.log}, nil)
}

// roleStore is what a role change sets on the store.
type roleStore interface{ SetRole(store.Role) error }

// switchRoleLocked is the one role machine of both modes. To a slave:
// refuse writes, the store's role, stop the services, close a master's
// replicator, then start (or keep) a slave's. To a master: close a
// slave's replicator, the store's role, p.enterMaster, start (or keep) a
// master's replicator, then the services and writes. st nil: a store
// without replication (no replicator); p nil: no replicator is started.
// commit runs once the replicator is in place (before the services start
// on a master). roleMu held.
func (b *Broker) switchRoleLocked(role store.Role, st roleStore, p replication, commit func()) error {
	closeRepl := func() {
		if err := b.rrt.repl.Close(); err != nil {
			b.log.Warn("ha close", "err", err)
		}
		b.rrt.repl = nil
	}
	if role == store.Slave {
		// Stop taking local writes first, then the services that write.
		b.role.slave.Store(true)
		if st != nil {
			if err := st.SetRole(role); err != nil {
				return fmt.Errorf("broker: store role: %w", err)
			}
		}
		b.stopServicesLocked()
		if b.rrt.repl != nil && b.rrt.repl.master() {
			closeRepl()
		}
		if st != nil && p != nil {
			if b.rrt.repl == nil {
				r, err := p.newSlave(b.role.HAMasterAddr())
				if err != nil {
					return err
				}
				b.rrt.repl = r
			} else {
				p.keepSlave(b.rrt.repl)
			}
		}
		if commit != nil {
			commit()
		}
		return nil
	}
	if b.rrt.repl != nil && !b.rrt.repl.master() {
		closeRepl()
	}
	if st != nil {
		if err := st.SetRole(role); err != nil {
			return fmt.Errorf("broker: store role: %w", err)
		}
		if p != nil {
			if err := p.enterMaster(); err != nil {
				return err
			}
			if b.rrt.repl == nil {
				r, err := p.newMaster()
				if err != nil {
					return err
				}
				b.rrt.repl = r
			}
		}
	}
	if commit != nil {
		commit()
	}
	b.startServicesLocked()
	b.role.slave.Store(false)
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
	if b.rrt.repl != nil {
		if err := b.rrt.repl.Close(); err != nil {
			b.log.Warn("ha close", "err", err)
		}
		b.rrt.repl = nil
	}
}

// setReplInSyncReplicas changes the running master's quorum. roleMu held.
func (b *Broker) setReplInSyncReplicasLocked(n int) {
	if b.rrt.repl != nil {
		b.rrt.repl.setInSyncReplicas(n)
	}
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
	if a, ok := b.haAddrLocked().(*net.TCPAddr); ok {
		port = a.Port
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
	if b.rrt.repl != nil {
		b.rrt.repl.setMasterAddr(haAddr)
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
