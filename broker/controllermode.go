package broker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
	"github.com/rocketgo/rocketgo/store/ha/autoswitch"
)

// Controller mode (RIP-44): Java's ReplicasManager. The broker finds the
// controller leader (CONTROLLER_GET_METADATA_INFO), registers its broker
// set membership through the resumable brokerIdentity files
// (GET_NEXT_BROKER_ID → temp file → APPLY_BROKER_ID → brokerIdentity →
// REGISTER_BROKER), heartbeats every controller, asks for an election when
// the set has no master and follows the controller's view (GET_REPLICA_INFO
// every syncBrokerMetadataPeriod, NOTIFY_BROKER_ROLE_CHANGED at once):
// master (brokerId 0, SYNC_MASTER, the AutoSwitch Server, the master-only
// services, registration with stateVersion = master epoch) or slave (the
// AutoSwitch Client to the master's HA address from the name server's
// reply, slave metadata sync). A role change only ever moves to a higher
// master epoch. The Server's SyncStateSet proposals go to the controller
// as ALTER_SYNC_STATE_SET and the answers are applied in syncStateSetEpoch
// order.
//
// Fencing: the broker starts fenced (Java's isolated + fenced running
// flag: puts answer SERVICE_NOT_AVAILABLE, no name-server registration)
// until the first master is known. Where Java only logs, a master also
// fences itself at once when the controller refuses its
// ALTER_SYNC_STATE_SET with CONTROLLER_FENCED_MASTER_EPOCH or reports a
// newer epoch without a master; a newer master makes it a slave (puts
// refused as on any slave).
//
// Deviations (on purpose): the first-start retry waits
// min(5 s, syncBrokerMetadataPeriod) (Java 5 s); a failed call to the
// controller leader refreshes the leader at once (Java waits for the next
// syncControllerMetadataPeriod); a slave that does not know its master's
// HA address yet re-registers with the name servers every
// syncBrokerMetadataPeriod (Java waits registerNameServerPeriod), and only
// takes a reply whose masterAddr is the controller's master.

// cmStore is what controller mode needs of the store (*store.Store).
type cmStore interface {
	autoswitch.MasterStore
	autoswitch.SlaveStore
	SetRole(store.Role) error
	Role() store.Role
}

// Registration states (Java's ReplicasManager.RegisterState).
const (
	regInitial = iota
	regTempFileDone
	regFileDone
	regRegistered
)

// controllerCallTimeout bounds each request to a controller (Java 3 s).
const controllerCallTimeout = 3 * time.Second

// maxSyncStateSetIDs bounds a SyncStateSet body from the network.
const maxSyncStateSetIDs = 1024

type replicasManager struct {
	host  roleHost
	cfg   *Config
	log   *slog.Logger
	blog  *slog.Logger // the broker's, for the AutoSwitch Server and Client
	cli   *transport.Client
	st    cmStore
	ep    *epoch.File
	ident identityFiles
	addrs []string // controllerAddr

	fenced    atomic.Bool
	srv       atomic.Pointer[autoswitch.Server] // the master's Server (nil on a slave)
	minInSync atomic.Int32                      // minInSyncReplicas

	changeMu sync.Mutex // serializes role changes (Java's synchronized changeTo*); held across HA start/stop
	setMu    sync.Mutex // serializes SyncStateSet changes; never held across a Server's Close

	mu          sync.Mutex // guards the fields below; held briefly
	leader      string
	regState    int
	id          int64 // brokerControllerId; 0 before registration
	masterID    int64 // 0: none known
	masterAddr  string
	masterEpoch int32
	syncSet     []int64
	syncEpoch   int32
	running     bool

	kick chan struct{}
	lost chan struct{} // the AutoSwitch client lost its master (masterLost)
	quit chan struct{}
	wg   sync.WaitGroup
}

// newReplicasManager runs controller mode for host, with the broker's
// config, logger, store and controller client config.
func newReplicasManager(host roleHost, cfg *Config, log *slog.Logger, msgStore MessageStore, cliCfg transport.ClientConfig) (*replicasManager, error) {
	st, ok := msgStore.(cmStore)
	if !ok {
		return nil, errors.New("broker: controller mode needs a store with replication")
	}
	var addrs []string
	for _, a := range strings.Split(cfg.ControllerAddr, ";") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("broker: enableControllerMode needs controllerAddr")
	}
	epPath := cfg.StorePathEpochFile
	if epPath == "" {
		epPath = filepath.Join(cfg.StorePathRootDir, "epochFileCheckpoint")
	}
	ep, err := epoch.Open(epPath)
	if err != nil {
		return nil, fmt.Errorf("broker: epoch file: %w", err)
	}
	idPath := cfg.StorePathBrokerIdentity
	if idPath == "" {
		idPath = filepath.Join(cfg.StorePathRootDir, "brokerIdentity")
	}
	rm := &replicasManager{host: host, cfg: cfg, log: log.With("component", "replicas"), blog: log, st: st, ep: ep,
		ident: identityFiles{path: idPath}, addrs: addrs,
		cli:  transport.NewClient(cliCfg),
		kick: make(chan struct{}, 1), lost: make(chan struct{}, 1), quit: make(chan struct{})}
	rm.minInSync.Store(int32(cfg.MinInSyncReplicas))
	rm.fenced.Store(true) // compat: Java's recoverAndInitService fences a controller-mode broker until it runs
	rm.setStoreFenced(true)
	return rm, nil
}

func ms(v int64, def time.Duration) time.Duration {
	if v <= 0 {
		return def
	}
	return time.Duration(v) * time.Millisecond
}

// start runs the registration and then the periodic tasks in the
// background (Java's start; the broker serves meanwhile, fenced).
func (rm *replicasManager) start() {
	rm.wg.Add(1)
	go rm.run()
}

func (rm *replicasManager) stop() {
	select {
	case <-rm.quit:
	default:
		close(rm.quit)
	}
	rm.cli.Close() // aborts a call in flight
	rm.wg.Wait()
}

func (rm *replicasManager) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-rm.quit:
		return false
	case <-t.C:
		return true
	}
}

func (rm *replicasManager) run() {
	defer rm.wg.Done()
	retry := min(5*time.Second, ms(rm.cfg.SyncBrokerMetadataPeriod, 5*time.Second))
	for !rm.startBasic() {
		if !rm.sleep(retry) {
			return
		}
	}
	hb := time.NewTicker(ms(rm.cfg.BrokerHeartbeatInterval, time.Second))
	defer hb.Stop()
	info := time.NewTicker(ms(rm.cfg.SyncBrokerMetadataPeriod, 5*time.Second))
	defer info.Stop()
	meta := time.NewTicker(ms(rm.cfg.SyncControllerMetadataPeriod, 10*time.Second))
	defer meta.Stop()
	var ch chase
	defer ch.stop()
	for {
		select {
		case <-rm.quit:
			return
		case <-hb.C:
			rm.sendHeartbeats()
		case <-info.C:
			rm.syncReplicaInfo()
		case <-rm.kick:
			rm.syncReplicaInfo()
		case <-rm.lost:
			ch.begin(rm.MasterEpoch(), ms(rm.cfg.SyncBrokerMetadataPeriod, 5*time.Second))
		case <-ch.c():
			rm.syncReplicaInfo()
			ch.next(rm.MasterEpoch())
		case <-meta.C:
			rm.updateControllerMetadata()
		}
	}
}

// masterLost is the AutoSwitch client's OnMasterLost: a slave whose
// master connection ended asks the controller for the master again within
// milliseconds (chase), so it follows a new master even when the
// controller's NOTIFY_BROKER_ROLE_CHANGED does not reach it (Java waits
// for its next syncBrokerMetadataPeriod). Never blocks.
func (rm *replicasManager) masterLost() {
	select {
	case rm.lost <- struct{}{}:
	default:
	}
}

// chase is the GET_REPLICA_INFO schedule after a lost master: rounds at
// chaseFirst, then doubling gaps, until the master epoch moves past the
// one at the loss or the gap reaches the regular period (the periodic
// round carries on from there). The controller elects a few milliseconds
// after it sees the master's connection close, so the first rounds
// usually find the new master.
type chase struct {
	t      *time.Timer
	gap    time.Duration
	max    time.Duration
	epoch  int32
	active bool
}

const chaseFirst = 10 * time.Millisecond

func (c *chase) begin(epoch int32, period time.Duration) {
	if c.active {
		return
	}
	c.active, c.epoch, c.gap, c.max = true, epoch, chaseFirst, period
	if c.t == nil {
		c.t = time.NewTimer(c.gap)
	} else {
		c.t.Reset(c.gap)
	}
}

// c is the timer's channel while chasing, else nil (never ready).
func (c *chase) c() <-chan time.Time {
	if !c.active {
		return nil
	}
	return c.t.C
}

// next schedules the following round, or ends the chase once the epoch
// moved or the gap reached the period.
func (c *chase) next(epoch int32) {
	c.gap *= 2
	if epoch != c.epoch || c.gap >= c.max {
		c.active = false
		return
	}
	c.t.Reset(c.gap)
}

func (c *chase) stop() {
	if c.t != nil {
		c.t.Stop()
	}
}

// kickSync asks for a GET_REPLICA_INFO round now.
func (rm *replicasManager) kickSync() {
	select {
	case rm.kick <- struct{}{}:
	default:
	}
}

// startBasic is Java's startBasicService: controller metadata, register
// (5 tries), heartbeat, and an election when there is no master.
func (rm *replicasManager) startBasic() bool {
	if !rm.updateControllerMetadata() {
		return false
	}
	registered := false
	for range 5 {
		if rm.register() {
			registered = true
			break
		}
		// compat: Java sleeps a random time below 1 s against concurrent registrations.
		if !rm.sleep(time.Duration(rand.IntN(1000)) * time.Millisecond) {
			return false
		}
	}
	if !registered {
		rm.log.Error("register to controller failed 5 times")
		return false
	}
	rm.sendHeartbeats()
	rm.mu.Lock()
	hasMaster := rm.masterID > 0
	rm.mu.Unlock()
	if !hasMaster && !rm.brokerElect() {
		return false
	}
	rm.mu.Lock()
	rm.running = true
	rm.mu.Unlock()
	rm.unfence()
	rm.log.Info("controller mode running", "brokerId", rm.ID(), "master", rm.MasterAddr(), "epoch", rm.MasterEpoch())
	return true
}

func (rm *replicasManager) unfence() {
	if rm.fenced.Swap(false) {
		rm.setStoreFenced(false)
		rm.host.reregister()
	}
}

// setStoreFenced makes the store refuse every local put while fenced, so
// send-backs, transaction decisions and delay/timer re-puts stop too, each
// with its processor's own answer.
func (rm *replicasManager) setStoreFenced(on bool) {
	if fs, ok := rm.st.(interface{ SetFenced(bool) }); ok {
		fs.SetFenced(on)
	}
}

// fence stops writes at once (a newer epoch exists elsewhere).
func (rm *replicasManager) fence(why string) {
	if !rm.fenced.Swap(true) {
		rm.setStoreFenced(true)
		rm.log.Warn("fenced: writes refused", "why", why)
	}
}

// ID is the controller-assigned broker id (0 before registration).
func (rm *replicasManager) ID() int64 {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.id
}

// MasterAddr is the master's broker address as the controller names it.
func (rm *replicasManager) MasterAddr() string {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.masterAddr
}

// MasterEpoch is the newest master epoch this broker followed.
func (rm *replicasManager) MasterEpoch() int32 {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.masterEpoch
}

// SyncStateSet is the controller's set and its epoch as last applied.
func (rm *replicasManager) SyncStateSet() ([]int64, int32) {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return append([]int64(nil), rm.syncSet...), rm.syncEpoch
}

func (rm *replicasManager) leaderAddr() string {
	rm.mu.Lock()
	defer rm.mu.Unlock()
	return rm.leader
}

// call sends a request to the controller leader; a transport error or
// CONTROLLER_NOT_LEADER refreshes the leader.
func (rm *replicasManager) call(f *codec.Frame) (*codec.Frame, error) {
	addr := rm.leaderAddr()
	if addr == "" {
		rm.updateControllerMetadata()
		if addr = rm.leaderAddr(); addr == "" {
			return nil, errors.New("no controller leader known")
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), controllerCallTimeout)
	defer cancel()
	resp, err := rm.cli.Invoke(ctx, addr, f)
	if err != nil || resp.Code == int32(codec.RespControllerNotLeader) {
		rm.updateControllerMetadata()
	}
	if err != nil {
		return nil, fmt.Errorf("controller %s: %w", addr, err)
	}
	return resp, nil
}

func newRequest(code codec.RequestCode) *codec.Frame {
	return &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion}
}

// updateControllerMetadata asks the controllers for the leader's address
// (Java's updateControllerMetadata).
func (rm *replicasManager) updateControllerMetadata() bool {
	for _, addr := range rm.addrs {
		ctx, cancel := context.WithTimeout(context.Background(), controllerCallTimeout)
		resp, err := rm.cli.Invoke(ctx, addr, newRequest(codec.ReqControllerGetMetadataInfo))
		cancel()
		if err != nil || resp.Code != int32(codec.RespSuccess) {
			continue
		}
		var h header.GetMetaDataResponse
		if h.Decode(resp) != nil || h.ControllerLeaderAddress == "" {
			continue
		}
		rm.mu.Lock()
		changed := rm.leader != h.ControllerLeaderAddress
		rm.leader = h.ControllerLeaderAddress
		rm.mu.Unlock()
		if changed {
			rm.log.Info("controller leader", "addr", h.ControllerLeaderAddress)
		}
		return true
	}
	return false
}

// register is Java's register: the resumable brokerIdentity state machine.
func (rm *replicasManager) register() bool {
	cluster, name := rm.cfg.BrokerClusterName, rm.cfg.BrokerName
	// 1. where the files say we are
	st := regInitial
	var temp identity
	if id, ok, err := rm.ident.read(); err != nil {
		rm.log.Error("read brokerIdentity", "err", err)
	} else if ok {
		if id.cluster != cluster || id.brokerName != name {
			rm.log.Error("brokerIdentity names another broker set", "cluster", id.cluster, "brokerName", id.brokerName)
			return false
		}
		st = regFileDone
		rm.mu.Lock()
		rm.id = id.brokerID
		rm.mu.Unlock()
	}
	if st == regInitial {
		if t, ok, err := rm.ident.readTemp(); err != nil {
			rm.log.Error("read brokerIdentity-temp", "err", err)
		} else if ok {
			if t.cluster != cluster || t.brokerName != name {
				rm.log.Error("brokerIdentity-temp names another broker set", "cluster", t.cluster, "brokerName", t.brokerName)
				return false
			}
			st, temp = regTempFileDone, t
		}
	}
	// 2. next id and the temp file
	if st == regInitial {
		f := newRequest(codec.ReqControllerGetNextBrokerId)
		(&header.GetNextBrokerIdRequest{ClusterName: cluster, BrokerName: name}).Encode(f)
		resp, err := rm.call(f)
		if err != nil || resp.Code != int32(codec.RespSuccess) {
			rm.log.Warn("get next broker id failed", "err", err, "resp", respText(resp))
			return false
		}
		var h header.GetNextBrokerIdResponse
		if err := h.Decode(resp); err != nil || h.NextBrokerID <= 0 {
			rm.log.Warn("get next broker id: bad answer", "err", err, "id", h.NextBrokerID)
			return false
		}
		temp = identity{cluster: cluster, brokerName: name, brokerID: h.NextBrokerID,
			checkCode: fmt.Sprintf("%s;%d", rm.host.BrokerAddr(), time.Now().UnixMilli())}
		if err := rm.ident.writeTemp(temp); err != nil {
			rm.log.Error("write brokerIdentity-temp", "err", err)
			return false
		}
		st = regTempFileDone
	}
	// 3. apply the id, then the identity file
	if st == regTempFileDone {
		f := newRequest(codec.ReqControllerApplyBrokerId)
		(&header.ApplyBrokerIdRequest{ClusterName: cluster, BrokerName: name, AppliedBrokerID: temp.brokerID, RegisterCheckCode: temp.checkCode}).Encode(f)
		resp, err := rm.call(f)
		if err != nil || resp.Code != int32(codec.RespSuccess) {
			// The id went to another broker: start over.
			rm.log.Warn("apply broker id failed", "id", temp.brokerID, "err", err, "resp", respText(resp))
			if err := rm.ident.removeTemp(); err != nil {
				rm.log.Error("remove brokerIdentity-temp", "err", err)
			}
			return false
		}
		if err := rm.ident.write(identity{cluster: cluster, brokerName: name, brokerID: temp.brokerID}); err != nil {
			rm.log.Error("write brokerIdentity", "err", err)
			return false
		}
		if err := rm.ident.removeTemp(); err != nil {
			rm.log.Warn("remove brokerIdentity-temp", "err", err)
		}
		rm.mu.Lock()
		rm.id = temp.brokerID
		rm.mu.Unlock()
		st = regFileDone
	}
	rm.mu.Lock()
	rm.regState = st
	rm.mu.Unlock()
	// 4. register
	if !rm.registerToController() {
		return false
	}
	rm.mu.Lock()
	rm.regState = regRegistered
	rm.mu.Unlock()
	return true
}

// registerToController sends CONTROLLER_REGISTER_BROKER and follows the
// master it names.
func (rm *replicasManager) registerToController() bool {
	id := rm.ID()
	f := newRequest(codec.ReqControllerRegisterBroker)
	(&header.RegisterBrokerToControllerRequest{ClusterName: rm.cfg.BrokerClusterName, BrokerName: rm.cfg.BrokerName,
		BrokerID: id, BrokerAddress: rm.host.BrokerAddr(), InvokeTime: time.Now().UnixMilli()}).Encode(f)
	resp, err := rm.call(f)
	if err != nil || resp.Code != int32(codec.RespSuccess) {
		rm.log.Warn("register to controller failed", "err", err, "resp", respText(resp))
		return false
	}
	var h header.RegisterBrokerToControllerResponse
	if err := h.Decode(resp); err != nil {
		rm.log.Warn("register to controller: bad header", "err", err)
		return false
	}
	set, err := body.DecodeSyncStateSet(resp.Body, maxSyncStateSetIDs)
	if err != nil && len(resp.Body) > 0 {
		rm.log.Warn("register to controller: bad body", "err", err)
		return false
	}
	rm.changeBrokerRole(h.MasterBrokerID, h.MasterAddress, h.MasterEpoch, h.SyncStateSetEpoch, set.IDs)
	return true
}

// brokerElect asks the controller to elect a master (this broker first).
func (rm *replicasManager) brokerElect() bool {
	f := newRequest(codec.ReqControllerElectMaster)
	(&header.ElectMasterRequest{ClusterName: rm.cfg.BrokerClusterName, BrokerName: rm.cfg.BrokerName,
		BrokerID: rm.ID(), InvokeTime: time.Now().UnixMilli()}).Encode(f)
	resp, err := rm.call(f)
	if err != nil || (resp.Code != int32(codec.RespSuccess) && resp.Code != int32(codec.RespControllerMasterStillExist)) {
		rm.log.Warn("elect master failed", "err", err, "resp", respText(resp))
		return false
	}
	var h header.ElectMasterResponse
	if err := h.Decode(resp); err != nil {
		return false
	}
	var set []int64
	if len(resp.Body) > 0 {
		if eb, err := body.DecodeElectMasterResponseBody(resp.Body); err == nil {
			set = eb.SyncSet
		}
	}
	if h.MasterAddress == "" || h.MasterBrokerID <= 0 {
		rm.log.Warn("no master in the broker set yet")
		return false
	}
	rm.changeBrokerRole(h.MasterBrokerID, h.MasterAddress, h.MasterEpoch, h.SyncStateSetEpoch, set)
	return true
}

// sendHeartbeats sends BROKER_HEARTBEAT oneway to every controller.
func (rm *replicasManager) sendHeartbeats() {
	h := header.BrokerHeartbeatRequest{
		ClusterName: rm.cfg.BrokerClusterName, BrokerAddr: rm.host.BrokerAddr(), BrokerName: rm.cfg.BrokerName,
		BrokerID: rm.ID(), Epoch: rm.ep.LastEpoch(), MaxOffset: rm.st.MaxPhyOffset(), ConfirmOffset: rm.st.ConfirmOffset(),
		HeartbeatTimeoutMills: rm.cfg.ControllerHeartBeatTimeoutMills, ElectionPriority: rm.cfg.BrokerElectionPriority,
	}
	to := ms(rm.cfg.SendHeartbeatTimeoutMillis, time.Second)
	for _, addr := range rm.addrs {
		f := newRequest(codec.ReqBrokerHeartbeat)
		h.Encode(f)
		ctx, cancel := context.WithTimeout(context.Background(), to)
		if err := rm.cli.InvokeOneway(ctx, addr, f); err != nil {
			rm.log.Debug("heartbeat to controller failed", "controller", addr, "err", err)
		}
		cancel()
	}
}

// syncReplicaInfo is one GET_REPLICA_INFO round (Java's
// schedulingSyncBrokerMetadata task).
func (rm *replicasManager) syncReplicaInfo() {
	f := newRequest(codec.ReqControllerGetReplicaInfo)
	(&header.GetReplicaInfoRequest{BrokerName: rm.cfg.BrokerName}).Encode(f)
	resp, err := rm.call(f)
	if err != nil {
		rm.log.Warn("get replica info failed", "err", err)
		return
	}
	if resp.Code == int32(codec.RespControllerBrokerMetadataNotExist) {
		rm.registerToController()
		return
	}
	if resp.Code != int32(codec.RespSuccess) {
		rm.log.Warn("get replica info refused", "resp", respText(resp))
		return
	}
	var h header.GetReplicaInfoResponse
	if err := h.Decode(resp); err != nil {
		return
	}
	set, err := body.DecodeSyncStateSet(resp.Body, maxSyncStateSetIDs)
	if err != nil {
		rm.log.Warn("get replica info: bad body", "err", err)
		return
	}
	rm.mu.Lock()
	cur, id, masterID := rm.masterEpoch, rm.id, rm.masterID
	rm.mu.Unlock()
	switch {
	case h.MasterEpoch > cur:
		if h.MasterAddress != "" && h.MasterBrokerID > 0 {
			rm.changeBrokerRole(h.MasterBrokerID, h.MasterAddress, h.MasterEpoch, set.Epoch, set.IDs)
		} else {
			if masterID == id && id > 0 {
				rm.fence(fmt.Sprintf("master epoch %d without a master, ours %d", h.MasterEpoch, cur))
			}
			rm.brokerElect()
		}
	case h.MasterEpoch == cur && h.MasterBrokerID == id && id > 0:
		rm.changeSyncStateSet(set.IDs, set.Epoch)
	}
	if rm.host.IsSlave() && rm.host.haMasterAddr() == "" {
		rm.host.reregister() // learn the master's HA address from the name server
	}
}

// changeBrokerRole follows a master named by the controller (Java's
// changeBrokerRole): only a higher master epoch changes anything.
func (rm *replicasManager) changeBrokerRole(masterID int64, masterAddr string, masterEpoch, syncEpoch int32, set []int64) {
	id := rm.ID()
	if masterID <= 0 || id <= 0 {
		return
	}
	if masterID == id {
		rm.changeToMaster(masterEpoch, syncEpoch, set)
	} else {
		rm.changeToSlave(masterAddr, masterEpoch, masterID)
	}
}

// changeSyncStateSet applies a SyncStateSet newer than the last one.
func (rm *replicasManager) changeSyncStateSet(ids []int64, e int32) {
	rm.setMu.Lock()
	defer rm.setMu.Unlock()
	rm.mu.Lock()
	if e <= rm.syncEpoch {
		rm.mu.Unlock()
		return
	}
	rm.syncEpoch, rm.syncSet = e, append([]int64(nil), ids...)
	rm.mu.Unlock()
	rm.log.Info("SyncStateSet changed", "set", ids, "epoch", e)
	if srv := rm.srv.Load(); srv != nil {
		srv.SetSyncStateSet(ids)
	}
}

// onSyncStateSetChanged is the Server's callback: send the proposal to the
// controller (ALTER_SYNC_STATE_SET) and apply the answer.
func (rm *replicasManager) onSyncStateSetChanged(proposed []int64) {
	rm.mu.Lock()
	id, epoch, syncEpoch := rm.id, rm.masterEpoch, rm.syncEpoch
	rm.mu.Unlock()
	f := newRequest(codec.ReqControllerAlterSyncStateSet)
	(&header.AlterSyncStateSetRequest{BrokerName: rm.cfg.BrokerName, MasterBrokerID: id, MasterEpoch: epoch, InvokeTime: time.Now().UnixMilli()}).Encode(f)
	f.Body = body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: proposed, Epoch: syncEpoch})
	resp, err := rm.call(f)
	if err != nil {
		rm.log.Warn("alter SyncStateSet failed", "proposed", proposed, "err", err)
		return
	}
	switch resp.Code {
	case int32(codec.RespSuccess):
		set, err := body.DecodeSyncStateSet(resp.Body, maxSyncStateSetIDs)
		if err != nil {
			rm.log.Warn("alter SyncStateSet: bad body", "err", err)
			return
		}
		rm.changeSyncStateSet(set.IDs, set.Epoch)
	case int32(codec.RespControllerFencedMasterEpoch):
		rm.fence(fmt.Sprintf("controller fenced master epoch %d", epoch))
		rm.kickSync()
	default:
		rm.log.Warn("alter SyncStateSet refused", "proposed", proposed, "resp", respText(resp))
	}
}

func respText(f *codec.Frame) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf("%d %s", f.Code, f.Remark)
}
