package broker

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/fastjson"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/ha"
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
	rm.mu.Lock()
	if newEpoch <= rm.masterEpoch {
		rm.mu.Unlock()
		return
	}
	oldEpoch := rm.masterEpoch
	id := rm.id
	stay := rm.masterID == id && rm.srv.Load() != nil
	rm.masterEpoch = newEpoch
	rm.mu.Unlock()
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
		if err := rm.b.becomeMasterCM(rm, newEpoch, id, cur); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		rm.mu.Lock()
		rm.masterID, rm.masterAddr = id, rm.b.BrokerAddr()
		running := rm.running
		rm.mu.Unlock()
		if running {
			rm.unfence()
		}
	}
	rm.b.reg.changed()
}

// changeToSlave is Java's changeToSlave.
func (rm *replicasManager) changeToSlave(masterAddr string, newEpoch int32, masterID int64) {
	rm.changeMu.Lock()
	defer rm.changeMu.Unlock()
	rm.mu.Lock()
	if newEpoch <= rm.masterEpoch {
		rm.mu.Unlock()
		return
	}
	oldEpoch := rm.masterEpoch
	id := rm.id
	same := masterID == rm.masterID && rm.srv.Load() == nil && rm.b.role.IsSlave()
	rm.masterEpoch = newEpoch
	rm.mu.Unlock()
	rm.log.Info("change to slave", "brokerId", id, "master", masterAddr, "masterId", masterID, "epoch", newEpoch, "same", same)
	if !same {
		if err := autoswitch.CheckSlaveEpoch(rm.ep, newEpoch); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		if err := rm.b.becomeSlaveCM(rm, id, masterAddr); err != nil {
			rm.failChange(oldEpoch, err)
			return
		}
		rm.mu.Lock()
		rm.masterID, rm.masterAddr = masterID, masterAddr
		running := rm.running
		rm.mu.Unlock()
		if running {
			rm.unfence()
		}
	}
	rm.b.reg.changed()
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

// applyStartRoleLocked is the start role in controller mode: a fenced
// slave with nothing running until the controller names a master.
// roleMu held.
func (rm *replicasManager) applyStartRoleLocked() error {
	b := rm.b
	b.role.slave.Store(true)
	if err := rm.st.SetRole(store.Slave); err != nil {
		return fmt.Errorf("broker: store role: %w", err)
	}
	r := b.role
	r.mu.Lock()
	r.role = store.Slave
	r.mu.Unlock()
	b.stopServicesLocked()
	return nil
}

// becomeMasterCM: close the Client → SetRole(SYNC_MASTER) →
// BeginMasterEpoch → NewServer → SetSyncStateSet → Start; then the
// services and brokerId 0.
func (b *Broker) becomeMasterCM(rm *replicasManager, newEpoch int32, id int64, set []int64) error {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.roleClosed {
		return errRoleClosed
	}
	if b.rrt.acli != nil {
		if err := b.rrt.acli.Close(); err != nil {
			b.log.Warn("autoswitch client close", "err", err)
		}
		b.rrt.acli = nil
	}
	if err := rm.st.SetRole(store.SyncMaster); err != nil {
		return fmt.Errorf("store role: %w", err)
	}
	if err := autoswitch.BeginMasterEpoch(rm.ep, newEpoch, rm.st.MaxPhyOffset()); err != nil {
		return err
	}
	if b.rrt.asrv == nil {
		hs, err := b.haServerConfig() // the HA port's TLS (rocketgo.tls.ha.enable)
		if err != nil {
			return err
		}
		srv, err := autoswitch.NewServer(autoswitch.ServerConfig{
			TLS:                     hs.TLS,
			Addr:                    b.haListen(),
			SegmentSize:             b.cfg.MappedFileSizeCommitLog,
			LocalBrokerID:           id,
			TransferBatchSize:       b.cfg.HaTransferBatchSize,
			HeartbeatInterval:       time.Duration(b.cfg.HaSendHeartbeatInterval) * time.Millisecond,
			HousekeepingInterval:    time.Duration(b.cfg.HaHousekeepingInterval) * time.Millisecond,
			MaxTimeSlaveNotCatchup:  ms(b.cfg.HaMaxTimeSlaveNotCatchup, 15*time.Second),
			CheckSyncStateSetPeriod: ms(b.cfg.CheckSyncStateSetPeriod, 5*time.Second),
			AllAckInSyncStateSet:    b.cfg.AllAckInSyncStateSet,
			InSyncReplicas:          max(b.cfg.InSyncReplicas, 1),
			OnSyncStateSetChanged:   rm.onSyncStateSetChanged,
			Logger:                  b.log,
		}, rm.st, rm.ep)
		if err != nil {
			return fmt.Errorf("autoswitch server: %w", err)
		}
		srv.SetSyncStateSet(set)
		srv.Start()
		b.rrt.asrv = srv
		rm.srv.Store(srv)
	}
	r := b.role
	r.mu.Lock()
	old := r.role
	r.role, r.brokerID, r.masterAddr, r.haMasterAddr = store.SyncMaster, 0, "", ""
	r.mu.Unlock()
	b.startServicesLocked()
	b.role.slave.Store(false)
	b.log.Info("broker role changed", "from", old, "to", store.SyncMaster, "epoch", newEpoch, "controllerId", id)
	return nil
}

// becomeSlaveCM: refuse writes → SetRole(SLAVE) → stop the services →
// close the Server → a Client (the master's HA address comes with the
// name server's reply) and brokerId = the controller id.
func (b *Broker) becomeSlaveCM(rm *replicasManager, id int64, masterAddr string) error {
	b.role.slave.Store(true)
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.roleClosed {
		return errRoleClosed
	}
	if err := rm.st.SetRole(store.Slave); err != nil {
		return fmt.Errorf("store role: %w", err)
	}
	b.stopServicesLocked()
	if b.rrt.asrv != nil {
		rm.srv.Store(nil)
		if err := b.rrt.asrv.Close(); err != nil {
			b.log.Warn("autoswitch server close", "err", err)
		}
		b.rrt.asrv = nil
	}
	if b.rrt.acli == nil {
		hc, err := b.haClientConfig()
		if err != nil {
			return err
		}
		b.rrt.acli = autoswitch.NewClient(autoswitch.ClientConfig{
			TLS:                  hc.TLS,
			BrokerID:             id,
			SyncFromLastFile:     b.cfg.SyncFromLastFile,
			AsyncLearner:         b.cfg.AsyncLearner,
			HeartbeatInterval:    time.Duration(b.cfg.HaSendHeartbeatInterval) * time.Millisecond,
			HousekeepingInterval: time.Duration(b.cfg.HaHousekeepingInterval) * time.Millisecond,
			OnMasterLost:         rm.masterLost,
			Logger:               b.log,
		}, rm.st, rm.ep)
		b.rrt.acli.Start()
	} else {
		b.rrt.acli.SetMasterAddr("") // a new master: drop the old connection
	}
	r := b.role
	r.mu.Lock()
	old := r.role
	r.role, r.brokerID, r.masterAddr, r.haMasterAddr = store.Slave, id, masterAddr, ""
	r.mu.Unlock()
	b.log.Info("broker role changed", "from", old, "to", store.Slave, "master", masterAddr, "controllerId", id)
	return nil
}

// closeAutoSwitchLocked stops the AutoSwitch Server or Client (Close).
// roleMu held.
func (b *Broker) closeAutoSwitchLocked() {
	if b.rm != nil {
		b.rm.srv.Store(nil)
	}
	if b.rrt.asrv != nil {
		if err := b.rrt.asrv.Close(); err != nil {
			b.log.Warn("autoswitch server close", "err", err)
		}
		b.rrt.asrv = nil
	}
	if b.rrt.acli != nil {
		if err := b.rrt.acli.Close(); err != nil {
			b.log.Warn("autoswitch client close", "err", err)
		}
		b.rrt.acli = nil
	}
}

// onRegisterResult takes the master's HA address from a name server's
// reply when the reply's master is the controller's (Java's
// updateMasterHAServerAddrPeriodically in controller mode).
func (rm *replicasManager) onRegisterResult(masterAddr, haAddr string) {
	b := rm.b
	if haAddr == "" || masterAddr == "" || masterAddr != rm.MasterAddr() || !b.role.IsSlave() {
		return
	}
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.acli == nil {
		return
	}
	b.role.mu.Lock()
	b.role.haMasterAddr = haAddr
	b.role.mu.Unlock()
	b.rrt.acli.SetMasterAddr(haAddr)
}

// gateSend wraps the send handlers in controller mode: a fenced broker
// answers SERVICE_NOT_AVAILABLE (Java's fenced running flag makes the
// store unwritable), a master with fewer in-sync replicas than
// minInSyncReplicas answers Java's IN_SYNC_REPLICAS_NOT_ENOUGH
// (SYSTEM_ERROR "in-sync replicas not enough"). A slave's refusal stays
// the send processor's.
func (rm *replicasManager) gateSend(next transport.LeasedHandler) transport.LeasedHandler {
	return func(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
		if !rm.b.role.IsSlave() {
			if rm.fenced.Load() {
				return errResp(req, codec.RespServiceNotAvailable, remarks.ServiceNotAvailable(rm.b.send.diskUtil()))
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
	w.IntField("brokerId", rm.b.role.BrokerID())
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

// autoSwitchSlaves maps the AutoSwitch Server's connections to the view
// GET_BROKER_HA_STATUS shows: in sync means in the master's local
// SyncStateSet, as Java's AutoSwitchHAService.getRuntimeInfo.
func autoSwitchSlaves(in []autoswitch.SlaveStatus, local []int64) []ha.SlaveStatus {
	out := make([]ha.SlaveStatus, 0, len(in))
	for _, s := range in {
		out = append(out, ha.SlaveStatus{Addr: s.Addr, AckOffset: s.AckOffset, Diff: s.Diff, InSync: slices.Contains(local, s.BrokerID),
			TransferFrom: s.TransferFrom, SentOffset: s.SentOffset, TransferredBytesPerSecond: s.TransferredBytesPerSecond})
	}
	return out
}

// HAInSyncSlaveNums is Java's AutoSwitch inSyncSlaveNums: the master's
// local SyncStateSet without itself (ok false outside controller mode or
// on a slave).
func (b *Broker) HAInSyncSlaveNums() (int, bool) {
	b.roleMu.Lock()
	defer b.roleMu.Unlock()
	if b.rrt.asrv == nil {
		return 0, false
	}
	return max(len(b.rrt.asrv.LocalSyncStateSet())-1, 0), true
}

func autoSwitchClientStatus(s autoswitch.ClientStatus) ha.ClientStatus {
	return ha.ClientStatus{MasterAddr: s.MasterAddr, Connected: s.Connected, ReportedOffset: s.ReportedOffset,
		LastRead: s.LastRead, LastWrite: s.LastWrite, TransferredBytesPerSecond: s.TransferredBytesPerSecond}
}
