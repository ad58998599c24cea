package broker

import (
	"errors"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/fastjson"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/ha/autoswitch"
)

// Role changes in controller mode, through the role component (role.go):
// the same roleMu, roleState and master-only services as the classic
// mode, with the AutoSwitch Server/Client instead of classic HA.

var errRoleClosed = errors.New("broker: closed")

// changeToMaster is Java's changeToMaster.
func (rm *replicasManager) changeToMaster(newEpoch, syncEpoch int32, set []int64) {
	rm.changeMu.Lock()
	defer rm.changeMu.Unlock()
	oldEpoch, id, stay, ok := rm.beginChange(newEpoch, func(id int64) bool { return rm.masterID == id && rm.srv.Load() != nil })
	if !ok {
		return
	}
	rm.log.Info("change to master", "brokerId", id, "epoch", newEpoch, "stay", stay)
	if stay {
		// Re-elected: a new epoch, the same Server.
		if err := autoswitch.BeginMasterEpoch(rm.ep, newEpoch, rm.st.MaxPhyOffset()); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		rm.changeSyncStateSet(set, syncEpoch)
	} else {
		rm.changeSyncStateSet(set, syncEpoch)
		cur, _ := rm.SyncStateSet()
		if len(set) > 0 {
			cur = set
		}
		if err := rm.host.becomeMaster(autoSwitchReplication{rm: rm, epoch: newEpoch, id: id, set: cur}); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		rm.followed(id, rm.host.BrokerAddr())
	}
	rm.host.reregister()
}

// changeToSlave is Java's changeToSlave.
func (rm *replicasManager) changeToSlave(masterAddr string, newEpoch int32, masterID int64) {
	rm.changeMu.Lock()
	defer rm.changeMu.Unlock()
	oldEpoch, id, same, ok := rm.beginChange(newEpoch, func(int64) bool {
		return masterID == rm.masterID && rm.srv.Load() == nil && rm.host.IsSlave()
	})
	if !ok {
		return
	}
	rm.log.Info("change to slave", "brokerId", id, "master", masterAddr, "masterId", masterID, "epoch", newEpoch, "same", same)
	if !same {
		if err := autoswitch.CheckSlaveEpoch(rm.ep, newEpoch); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		if err := rm.host.becomeSlave(autoSwitchReplication{rm: rm, epoch: newEpoch, id: id}, masterAddr); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		rm.followed(masterID, masterAddr)
	}
	rm.host.reregister()
}

// beginChange takes a role change to newEpoch (ok false: not newer than
// the epoch followed): it records the new epoch and returns the old one,
// the controller id and keep's answer (under mu: nothing changes but the
// epoch). changeMu held.
func (rm *replicasManager) beginChange(newEpoch int32, keep func(id int64) bool) (oldEpoch int32, id int64, kept, ok bool) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	if newEpoch <= rm.masterEpoch {
		return 0, 0, false, false
	}
	oldEpoch, id = rm.masterEpoch, rm.id
	kept = keep(id)
	rm.masterEpoch = newEpoch
	return oldEpoch, id, kept, true
}

// followed records the master a role change followed and lifts the
// fence of a running broker.
func (rm *replicasManager) followed(masterID int64, masterAddr string) {
	rm.mu.Lock()
	rm.masterID, rm.masterAddr = masterID, masterAddr
	running := rm.running
	rm.mu.Unlock()
	if running {
		rm.unfence()
	}
}

// failChange undoes the epoch bookkeeping of a role change that failed,
// fenced, so the next GET_REPLICA_INFO round tries again.
func (rm *replicasManager) failChange(oldEpoch int32, err error) {
	rm.mu.Lock()
	rm.masterEpoch = oldEpoch
	rm.mu.Unlock()
	rm.fence("role change failed")
	rm.log.Error("role change failed", "err", err)
}

// roleHost is what the replicas manager uses of the broker: its
// address, re-registration, the send path's disk remark and the one role
// machine (role.go) with AutoSwitch's replication.
type roleHost interface {
	BrokerAddr() string
	IsSlave() bool
	// roleBrokerID is the run-time brokerId (0 on a master).
	roleBrokerID() int64
	// haMasterAddr is the master's HA address ("" unknown).
	haMasterAddr() string
	// reregister registers with the name servers at once.
	reregister()
	// diskUtil is the bracketed part of SERVICE_NOT_AVAILABLE.
	diskUtil() string
	// becomeMaster: close the Client → SetRole(SYNC_MASTER) →
	// BeginMasterEpoch → NewServer → SetSyncStateSet → Start; then the
	// services and brokerId 0.
	becomeMaster(p autoSwitchReplication) error
	// becomeSlave: refuse writes → SetRole(SLAVE) → stop the services →
	// close the Server → a Client (the master's HA address comes with the
	// name server's reply) and brokerId = the controller id.
	becomeSlave(p autoSwitchReplication, masterAddr string) error
	// followMasterHA points a running slave's Client at haAddr.
	followMasterHA(haAddr string)
}

func (b *Broker) roleBrokerID() int64  { return b.role.BrokerID() }
func (b *Broker) haMasterAddr() string { return b.role.HAMasterAddr() }
func (b *Broker) reregister()          { b.reg.changed() }
func (b *Broker) diskUtil() string     { return b.send.diskUtil() }

func (b *Broker) becomeMaster(p autoSwitchReplication) error {
	return b.switchControllerRole(store.SyncMaster, p, 0, "", "epoch", p.epoch, "controllerId", p.id)
}

func (b *Broker) becomeSlave(p autoSwitchReplication, masterAddr string) error {
	b.role.slave.Store(true)
	return b.switchControllerRole(store.Slave, p, p.id, masterAddr, "master", masterAddr, "controllerId", p.id)
}

// switchControllerRole runs the role machine with AutoSwitch's
// replication, then records the role the controller named (brokerId,
// the master's broker address; the HA address comes with the name
// server's reply).
func (b *Broker) switchControllerRole(role store.Role, p autoSwitchReplication, brokerID int64, masterAddr string, logArgs ...any) error {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.roleClosed {
		return errRoleClosed
	}
	var old store.Role
	err := b.switchRoleLocked(role, p.rm.st, p, func() {
		r := b.role
		r.mu.Lock()
		old = r.role
		r.role, r.brokerID, r.masterAddr, r.haMasterAddr = role, brokerID, masterAddr, ""
		r.mu.Unlock()
	})
	if err != nil {
		return err
	}
	b.log.Info("broker role changed", append([]any{"from", old, "to", role}, logArgs...)...)
	return nil
}

func (b *Broker) followMasterHA(haAddr string) {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.repl == nil || b.rrt.repl.master() {
		return
	}
	b.role.mu.Lock()
	b.role.haMasterAddr = haAddr
	b.role.mu.Unlock()
	b.rrt.repl.setMasterAddr(haAddr)
}

// onRegisterResult takes the master's HA address from a name server's
// reply when the reply's master is the controller's (Java's
// updateMasterHAServerAddrPeriodically in controller mode).
func (rm *replicasManager) onRegisterResult(masterAddr, haAddr string) {
	if haAddr == "" || masterAddr == "" || masterAddr != rm.MasterAddr() || !rm.host.IsSlave() {
		return
	}
	rm.host.followMasterHA(haAddr)
}

// gateSend wraps the send handlers in controller mode: a fenced broker
// answers SERVICE_NOT_AVAILABLE (Java's fenced running flag makes the
// store unwritable), a master with fewer in-sync replicas than
// minInSyncReplicas answers Java's IN_SYNC_REPLICAS_NOT_ENOUGH
// (SYSTEM_ERROR "in-sync replicas not enough"). A slave's refusal stays
// the send processor's.
func (rm *replicasManager) gateSend(next transport.LeasedHandler) transport.LeasedHandler {
	return func(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
		if !rm.host.IsSlave() {
			if rm.fenced.Load() {
				return errResp(req, codec.RespServiceNotAvailable, remarks.ServiceNotAvailable(rm.host.diskUtil()))
			}
			if srv := rm.srv.Load(); srv != nil && srv.InSyncReplicasNums() < int(rm.minInSync.Load()) && waitStoreMsgOK(req) {
				return errResp(req, codec.RespSystemError, remarks.InSyncReplicasNotEnough)
			}
		}
		return next(c, req, l)
	}
}

// waitStoreMsgOK is Java's Message.isWaitStoreMsgOK for a send request:
// the WAIT property, true when absent, else Boolean.parseBoolean of it. A
// message with WAIT=false skips the in-sync check, as Java's
// CommitLog.needHandleHA skips it. A header that does not decode skips it
// too: the send handler refuses it, as Java's decoder does before the
// store is asked.
func waitStoreMsgOK(req *codec.Frame) bool {
	var h sendHeader
	if h.decode(req) != nil {
		return false
	}
	v, ok := message.Property(h.Properties, message.PropertyWaitStoreMsgOK)
	return !ok || strings.EqualFold(v, "true")
}

// registerControllerMode serves GET_BROKER_EPOCH_CACHE and
// NOTIFY_BROKER_ROLE_CHANGED (rm nil outside controller mode).
func registerControllerMode(r *transport.Router, pool *transport.Pool, b *Broker) {
	r.Handle(codec.ReqGetBrokerEpochCache, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		if b.rm == nil {
			// compat: Java's remark, trailing space included.
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.OnlyForControllerMode)
		}
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = b.rm.epochEntryCache(nil)
		return resp
	})
	r.Handle(codec.ReqNotifyBrokerRoleChanged, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		if b.rm != nil {
			var h header.NotifyBrokerRoleChangedRequest
			if err := h.Decode(req); err != nil {
				return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
			}
			set, err := body.DecodeSyncStateSet(req.Body, maxSyncStateSetIDs)
			if err != nil {
				return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
			}
			b.rm.log.Info("notify broker role changed", "master", h.MasterAddress, "masterId", h.MasterBrokerID, "epoch", h.MasterEpoch)
			b.rm.changeBrokerRole(h.MasterBrokerID, h.MasterAddress, h.MasterEpoch, h.SyncStateSetEpoch, set.IDs)
		}
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	})
}

// epochEntryCache is Java's EpochEntryCache body: cluster, broker name,
// the run-time brokerId (0 on the master), the epoch file's entries and
// the commit log's end, as fastjson writes it.
func (rm *replicasManager) epochEntryCache(dst []byte) []byte {
	w := fastjson.Writer{Buf: dst}
	w.ObjectStart()
	w.IntField("brokerId", rm.host.roleBrokerID())
	w.StringField("brokerName", rm.cfg.BrokerName)
	w.StringField("clusterName", rm.cfg.BrokerClusterName)
	w.Key("epochList")
	w.ArrayStart()
	for _, e := range rm.ep.Entries() {
		w.ObjectStart()
		w.IntField("endOffset", e.EndOffset)
		w.IntField("epoch", int64(e.Epoch))
		w.IntField("startOffset", e.StartOffset)
		w.ObjectEnd()
	}
	w.ArrayEnd()
	w.IntField("maxOffset", rm.st.MaxPhyOffset())
	w.ObjectEnd()
	return w.Buf
}
