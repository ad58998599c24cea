package controller

import (
	"slices"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// Liveness answers what the elect policy and the checks need to know of
// broker heartbeats and of which connection speaks for which broker. It is
// node-local (see doc.go).
type Liveness interface {
	Alive(cluster, broker string, id int64) bool
	Info(cluster, broker string, id int64) (LiveInfo, bool)
	// Holds reports whether conn is the connection the broker registered
	// or heartbeats on (its identity; see doc.go).
	Holds(cluster, broker string, id int64, conn *transport.Conn) bool
	// Claim binds the broker's identity to conn on registration; it fails
	// with errHeldElsewhere while another connection holds it.
	Claim(cluster, broker string, id int64, conn *transport.Conn) error
}

// LiveInfo is the last heartbeat of one broker (Java's BrokerLiveInfo).
type LiveInfo struct {
	Addr          string
	Epoch         int32
	MaxOffset     int64
	ConfirmOffset int64
	Priority      int32 // electionPriority: smaller is preferred
}

// result is a decision: the response to send and the events to replicate
// before sending it (Java's ControllerResult).
type result struct {
	code   codec.ResponseCode
	remark string
	ext    []codec.KV
	body   []byte
	events []event
}

func (r *result) fail(code codec.ResponseCode, remark string) *result {
	r.code, r.remark = code, remark
	return r
}

func (r *result) set(k, v string) { r.ext = append(r.ext, codec.KV{Key: k, Value: v}) }

func (r *result) setInt(k string, v int64) { r.set(k, strconv.FormatInt(v, 10)) }

// javaID formats a broker id as Java's String.format("%s", Long) does: 0 (no master) is null.
func javaID(id int64) string {
	if id == 0 {
		return "null"
	}
	return strconv.FormatInt(id, 10)
}

// Bounds on network input.
const (
	maxSyncSetIDs   = 1024
	maxBrokerNames  = 10000
	maxNameLength   = 255
	maxAddrLength   = 255
	maxCheckCodeLen = 512
)

// decider computes results from the state; it never mutates it. Callers
// serialize decide+replicate so no event is decided on a stale state.
type decider struct {
	state   *State
	live    Liveness
	unclean func() bool // enableElectUncleanMaster, read per election
	bounds  func() (sets, perSet int)
	// adminLive is controllerAllowAdminOnLiveBrokers, read per request:
	// admin operations may act on live brokers (see doc.go).
	adminLive func() bool
}

func (d *decider) alive(bs *brokerSet, id int64) bool {
	return d.live.Alive(bs.Cluster, bs.Name, id)
}

// alterSyncStateSet checks a master's new in-sync set, in Java's order,
// plus one check of ours: the request comes on the master's own
// connection (from; nil only for in-process callers).
func (d *decider) alterSyncStateSet(from *transport.Conn, brokerName string, masterID int64, masterEpoch int32, set body.SyncStateSet) *result {
	r := &result{}
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs == nil {
			r.fail(codec.RespControllerAlterSyncStateSetFailed, remarks.BrokerMetadataNotExisted)
			return
		}
		newSet := slices.Clone(set.IDs)
		slices.Sort(newSet)
		newSet = slices.Compact(newSet)
		if slices.Equal(newSet, bs.SyncSet) {
			r.fail(codec.RespControllerAlterSyncStateSetFailed, remarks.SyncStateSetUnchanged)
			return
		}
		if bs.Master == 0 || bs.Master != masterID {
			r.fail(codec.RespControllerInvalidMaster, remarks.AlterSyncStateSetNotLeader(javaID(bs.Master), javaID(masterID)))
			return
		}
		if !d.live.Holds(bs.Cluster, bs.Name, masterID, from) {
			r.fail(codec.RespControllerInvalidMaster, remarks.AlterSyncStateSetNotOnMasterConnection(masterID))
			return
		}
		if masterEpoch != bs.MasterEpoch {
			r.fail(codec.RespControllerFencedMasterEpoch, remarks.AlterSyncStateSetMasterEpoch(int64(bs.MasterEpoch), int64(masterEpoch)))
			return
		}
		if set.Epoch != bs.SyncEpoch {
			r.fail(codec.RespControllerFencedSyncStateSetEpoch, remarks.AlterSyncStateSetEpoch(int64(bs.SyncEpoch), int64(set.Epoch)))
			return
		}
		for _, id := range newSet {
			if _, ok := bs.Brokers[id]; !ok {
				r.fail(codec.RespControllerInvalidReplicas, remarks.AlterSyncStateSetReplicaNotExist(id))
				return
			}
			if !d.alive(bs, id) {
				r.fail(codec.RespControllerBrokerNotAlive, remarks.AlterSyncStateSetReplicaNotAlive(id))
				return
			}
		}
		if !slices.Contains(newSet, bs.Master) {
			r.fail(codec.RespControllerAlterSyncStateSetFailed, remarks.AlterSyncStateSetWithoutLeader(bs.Master))
			return
		}
		epoch := bs.SyncEpoch + 1
		r.setInt("newSyncStateSetEpoch", int64(epoch))
		r.body = body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: newSet, Epoch: epoch})
		r.events = append(r.events, event{Type: evAlterSyncStateSet, Broker: brokerName, IDs: newSet})
	})
	return r
}

// electMaster elects a master for brokerName. requester is the broker id
// that asks (-1: the controller itself); designate makes it the only
// acceptable candidate (admin electMaster).
func (d *decider) electMaster(brokerName string, requester int64, designate bool) *result {
	r := &result{}
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs == nil {
			r.fail(codec.RespControllerBrokerNeedToBeRegistered, remarks.BrokerNotRegistered)
			return
		}
		old := bs.Master
		var newMaster int64
		if bs.MasterEpoch == 0 {
			// First election of the set: the asking broker wins, as in Java,
			// provided it is a member (Java would take any id).
			if _, ok := bs.Brokers[requester]; ok {
				newMaster = requester
			}
		}
		if newMaster == 0 {
			var prefer int64
			if designate {
				prefer = requester
			}
			var all []int64
			if d.unclean() {
				all = bs.ids()
			}
			newMaster = elect(bs, d.live, bs.SyncSet, all, old, prefer)
		}
		if newMaster != 0 && newMaster == old {
			r.setInt("masterBrokerId", old)
			r.set("masterAddress", bs.addr(old))
			r.setInt("masterEpoch", int64(bs.MasterEpoch))
			r.setInt("syncStateSetEpoch", int64(bs.SyncEpoch))
			r.body = body.AppendElectMasterResponseBody(nil, body.ElectMasterResponseBody{SyncSet: bs.SyncSet})
			r.fail(codec.RespControllerMasterStillExist, remarks.OldMasterStillAlive(old, bs.Name))
			return
		}
		if newMaster != 0 {
			r.setInt("masterBrokerId", newMaster)
			r.set("masterAddress", bs.addr(newMaster))
			r.setInt("masterEpoch", int64(bs.MasterEpoch+1))
			r.setInt("syncStateSetEpoch", int64(bs.SyncEpoch+1))
			g := &body.MemberGroup{Cluster: bs.Cluster, BrokerName: bs.Name}
			for _, id := range bs.ids() {
				g.Addrs = append(g.Addrs, body.BrokerAddr{ID: id, Addr: bs.Brokers[id].Addr})
			}
			r.body = body.AppendElectMasterResponseBody(nil, body.ElectMasterResponseBody{Group: g, SyncSet: []int64{newMaster}})
			r.events = append(r.events, event{Type: evElectMaster, Broker: brokerName, ID: newMaster, Elected: true})
			return
		}
		if requester <= 0 {
			// Triggered by the controller: record that the master is gone.
			r.events = append(r.events, event{Type: evElectMaster, Broker: brokerName})
			r.fail(codec.RespControllerMasterNotAvailable, remarks.OldMasterDownElectFailed)
			return
		}
		r.fail(codec.RespControllerElectMasterFailed, remarks.ElectMasterFailed)
	})
	return r
}

// brokerElect answers a broker's own CONTROLLER_ELECT_MASTER (designateElect
// false): the asking broker must speak on its own connection.
func (d *decider) brokerElect(from *transport.Conn, brokerName string, requester int64) *result {
	r := &result{}
	if requester <= 0 {
		// -1 is the controller's own trigger, never a remote caller's.
		return r.fail(codec.RespControllerInvalidRequest, remarks.ElectNeedsBrokerID)
	}
	refused := false
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs != nil && !d.live.Holds(bs.Cluster, bs.Name, requester, from) {
			refused = true
			r.fail(codec.RespControllerInvalidRequest, remarks.BrokerNotOnConnection(brokerName, requester))
		}
	})
	if refused {
		return r
	}
	return d.electMaster(brokerName, requester, false)
}

// adminElect answers mqadmin electMaster (designateElect true). The
// designated broker must be a live member of the SyncStateSet (any live
// member before the first election), and a live master stays unless the
// controller's own configuration allows admin operations on live brokers.
func (d *decider) adminElect(brokerName string, id int64) *result {
	r := &result{}
	refused := false
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs == nil {
			return // electMaster answers Java's 2010
		}
		fail := func(remark string) {
			refused = true
			r.fail(codec.RespControllerElectMasterFailed, remark)
		}
		switch _, member := bs.Brokers[id]; {
		case !member:
			fail(remarks.ElectBrokerNotMember(id, bs.Name))
			return
		case !d.alive(bs, id):
			fail(remarks.ElectBrokerNotAlive(id))
			return
		case bs.MasterEpoch > 0 && !bs.inSync(id):
			fail(remarks.ElectBrokerNotInSyncSet(id))
			return
		}
		if bs.Master != 0 && bs.Master != id && d.alive(bs, bs.Master) && !d.adminLive() {
			refused = true
			r.setInt("masterBrokerId", bs.Master)
			r.set("masterAddress", bs.addr(bs.Master))
			r.setInt("masterEpoch", int64(bs.MasterEpoch))
			r.setInt("syncStateSetEpoch", int64(bs.SyncEpoch))
			r.body = body.AppendElectMasterResponseBody(nil, body.ElectMasterResponseBody{SyncSet: bs.SyncSet})
			r.fail(codec.RespControllerMasterStillExist, remarks.OldMasterStillAlive(bs.Master, bs.Name))
		}
	})
	if refused {
		return r
	}
	return d.electMaster(brokerName, id, true)
}

// getNextBrokerID answers CONTROLLER_GET_NEXT_BROKER_ID.
func (d *decider) getNextBrokerID(cluster, brokerName string) *result {
	r := &result{}
	r.set("clusterName", cluster)
	r.set("brokerName", brokerName)
	d.state.view(brokerName, func(bs *brokerSet) {
		next := int64(firstBrokerID)
		if bs != nil {
			next = bs.NextID
		}
		r.setInt("nextBrokerId", next)
	})
	return r
}

// applyBrokerID answers CONTROLLER_APPLY_BROKER_ID.
func (d *decider) applyBrokerID(cluster, brokerName string, id int64, checkCode string) *result {
	r := &result{}
	r.set("clusterName", cluster)
	r.set("brokerName", brokerName)
	addr, _, _ := strings.Cut(checkCode, ";")
	ev := event{Type: evApplyBrokerID, Cluster: cluster, Broker: brokerName, ID: id, Addr: addr, CheckCode: checkCode}
	maxSets, maxPerSet := d.bounds()
	if brokerName == "" || len(brokerName) > maxNameLength || len(checkCode) > maxCheckCodeLen || len(addr) > maxAddrLength || id < firstBrokerID {
		// Java would store any of these; we refuse what no broker sends.
		return r.fail(codec.RespControllerBrokerIdInvalid, remarks.ApplyBrokerIDFailed(id, brokerName))
	}
	d.state.mu.RLock()
	defer d.state.mu.RUnlock()
	bs := d.state.sets[brokerName]
	if bs == nil {
		if id != firstBrokerID {
			return r.fail(codec.RespControllerBrokerIdInvalid, remarks.ApplyBrokerIDSetNotRegistered(brokerName, id))
		}
		if len(d.state.sets) >= maxSets {
			return r.fail(codec.RespControllerBrokerIdInvalid, remarks.TooManyBrokerSets(brokerName, int64(maxSets)))
		}
		r.events = append(r.events, ev)
		return r
	}
	m, exists := bs.Brokers[id]
	if !exists && len(bs.Brokers) >= maxPerSet {
		return r.fail(codec.RespControllerBrokerIdInvalid, remarks.ApplyBrokerIDFailed(id, brokerName))
	}
	if !exists || m.CheckCode == checkCode {
		if !exists {
			r.events = append(r.events, ev)
		}
		return r
	}
	return r.fail(codec.RespControllerBrokerIdInvalid, remarks.ApplyBrokerIDFailed(id, brokerName))
}

// registerBroker answers CONTROLLER_REGISTER_BROKER and binds the broker's
// identity to from, unless another connection holds it.
func (d *decider) registerBroker(from *transport.Conn, cluster, brokerName string, id int64, addr string) *result {
	r := &result{}
	r.set("clusterName", cluster)
	r.set("brokerName", brokerName)
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs == nil {
			r.fail(codec.RespControllerBrokerNeedToBeRegistered, remarks.BrokerSetNotRegistered(brokerName))
			return
		}
		m, ok := bs.Brokers[id]
		if !ok {
			r.fail(codec.RespControllerBrokerNeedToBeRegistered, remarks.BrokerIDNotRegistered(id, brokerName))
			return
		}
		if err := d.live.Claim(bs.Cluster, bs.Name, id, from); err != nil {
			r.fail(codec.RespControllerInvalidRequest, remarks.BrokerOnOtherLiveConnection(brokerName, id))
			return
		}
		if bs.Master != 0 && d.alive(bs, bs.Master) {
			r.setInt("masterBrokerId", bs.Master)
			r.set("masterAddress", bs.addr(bs.Master))
			r.setInt("masterEpoch", int64(bs.MasterEpoch))
			r.setInt("syncStateSetEpoch", int64(bs.SyncEpoch))
		}
		r.body = body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: bs.SyncSet, Epoch: bs.SyncEpoch})
		if addr != m.Addr && addr != "" && len(addr) <= maxAddrLength {
			r.events = append(r.events, event{Type: evUpdateBrokerAddress, Cluster: cluster, Broker: brokerName, ID: id, Addr: addr})
		}
	})
	return r
}

// getReplicaInfo answers CONTROLLER_GET_REPLICA_INFO.
func (d *decider) getReplicaInfo(brokerName string) *result {
	r := &result{}
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs == nil {
			r.fail(codec.RespControllerBrokerMetadataNotExist, remarks.BrokerMetadataNotExisted)
			return
		}
		if bs.Master != 0 {
			r.setInt("masterBrokerId", bs.Master)
			r.set("masterAddress", bs.addr(bs.Master))
		}
		r.setInt("masterEpoch", int64(bs.MasterEpoch))
		r.body = body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: bs.SyncSet, Epoch: bs.SyncEpoch})
	})
	return r
}

// getSyncStateData answers CONTROLLER_GET_SYNC_STATE_DATA for the known names.
func (d *decider) getSyncStateData(names []string) *result {
	r := &result{}
	var entries []body.BrokerReplicasEntry
	seen := map[string]bool{}
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		d.state.view(name, func(bs *brokerSet) {
			if bs == nil {
				return
			}
			info := body.ReplicasInfo{MasterBrokerID: bs.Master, MasterAddress: bs.addr(bs.Master), MasterEpoch: bs.MasterEpoch, SyncStateSetEpoch: bs.SyncEpoch}
			for _, id := range bs.ids() {
				ri := body.ReplicaIdentity{BrokerName: bs.Name, BrokerID: id, BrokerAddress: bs.Brokers[id].Addr, Alive: d.alive(bs, id)}
				if bs.inSync(id) {
					info.InSync = append(info.InSync, ri)
				} else {
					info.NotInSync = append(info.NotInSync, ri)
				}
			}
			entries = append(entries, body.BrokerReplicasEntry{BrokerName: name, Info: info})
		})
	}
	r.body = body.AppendBrokerReplicasInfo(nil, entries)
	return r
}

// cleanBrokerData answers CLEAN_BROKER_DATA. Beyond Java's checks it never
// removes a live broker (nor a whole set with a live member) unless the
// controller's own configuration allows admin operations on live brokers;
// isCleanLivingBroker alone only waives Java's "the set names a master".
func (d *decider) cleanBrokerData(cluster, brokerName, idsToClean string, cleanLiving bool) *result {
	r := &result{}
	var ids []int64
	idsToClean = strings.TrimSpace(idsToClean)
	d.state.mu.RLock()
	defer d.state.mu.RUnlock()
	bs := d.state.sets[brokerName]
	if bs != nil {
		// The set's own cluster: a wrong -c must not make a live broker look dead.
		cluster = bs.Cluster
	}
	if !cleanLiving {
		if idsToClean == "" && bs != nil && bs.Master != 0 {
			return r.fail(codec.RespControllerInvalidCleanBrokerMetadata, remarks.CleanBrokerStillAlive(brokerName))
		}
	}
	guard := !cleanLiving || !d.adminLive()
	if idsToClean != "" {
		for _, s := range strings.Split(idsToClean, ";") {
			id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil {
				// compat: Java puts its NumberFormatException text here.
				return r.fail(codec.RespControllerInvalidCleanBrokerMetadata, remarks.CleanIDsBadFormat(s))
			}
			if len(ids) >= maxSyncSetIDs {
				return r.fail(codec.RespControllerInvalidCleanBrokerMetadata, remarks.CleanIDsTooMany)
			}
			ids = append(ids, id)
		}
		slices.Sort(ids)
		ids = slices.Compact(ids)
		if guard {
			for _, id := range ids {
				if d.live.Alive(cluster, brokerName, id) {
					return r.fail(codec.RespControllerInvalidCleanBrokerMetadata, remarks.CleanBrokerIDStillAlive(brokerName, id))
				}
			}
		}
	} else if guard && bs != nil {
		for _, id := range bs.ids() {
			if d.live.Alive(cluster, brokerName, id) {
				return r.fail(codec.RespControllerInvalidCleanBrokerMetadata, remarks.CleanBrokerStillAlive(brokerName))
			}
		}
	}
	if bs == nil {
		return r.fail(codec.RespControllerInvalidCleanBrokerMetadata, remarks.CleanBrokerNotExisted(brokerName))
	}
	r.events = append(r.events, event{Type: evCleanBrokerData, Broker: brokerName, IDs: ids})
	return r
}

// needReelect lists the broker sets whose master is not alive while
// another member is (Java's scanNeedReelectBrokerSets).
func (d *decider) needReelect() []string {
	d.state.mu.RLock()
	defer d.state.mu.RUnlock()
	var out []string
	for name, bs := range d.state.sets {
		if bs.Master == 0 || d.alive(bs, bs.Master) {
			continue
		}
		for id := range bs.Brokers {
			if d.alive(bs, id) {
				out = append(out, name)
				break
			}
		}
	}
	slices.Sort(out)
	return out
}

// masterOf returns the master id of brokerName (0: none or unknown).
func (d *decider) masterOf(brokerName string) int64 {
	var m int64
	d.state.view(brokerName, func(bs *brokerSet) {
		if bs != nil {
			m = bs.Master
		}
	})
	return m
}
