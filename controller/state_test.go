package controller

import (
	"bytes"
	"io"
	"testing"

	"github.com/hashicorp/raft"
	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// fakeLive is a Liveness table set by the test: the brokers alive.
type fakeLive map[int64]LiveInfo

// fakeOwners says which connection holds each broker's identity; a
// broker not listed is held by the nil connection (an in-process caller).
type fakeOwners map[int64]*transport.Conn

type fakeLiveness struct {
	live   fakeLive
	owners fakeOwners
}

func (f fakeLiveness) Alive(_, _ string, id int64) bool { _, ok := f.live[id]; return ok }
func (f fakeLiveness) Info(_, _ string, id int64) (LiveInfo, bool) {
	i, ok := f.live[id]
	return i, ok
}
func (f fakeLiveness) Holds(_, _ string, id int64, c *transport.Conn) bool { return f.owners[id] == c }
func (f fakeLiveness) Claim(_, _ string, id int64, c *transport.Conn) error {
	if f.owners[id] != c {
		return errHeldElsewhere
	}
	return nil
}

type fixture struct {
	t         *testing.T
	state     *State
	live      fakeLive
	owners    fakeOwners
	dec       *decider
	uncl      bool
	adminLive bool
}

func newFixture(t *testing.T) *fixture {
	f := &fixture{t: t, state: NewState(), live: fakeLive{}, owners: fakeOwners{}}
	f.dec = &decider{state: f.state, live: fakeLiveness{f.live, f.owners}, unclean: func() bool { return f.uncl },
		bounds: func() (int, int) { return 100, 8 }, adminLive: func() bool { return f.adminLive }}
	return f
}

// commit applies r's events through the Raft FSM, as a follower would.
func (f *fixture) commit(r *result) *result {
	m := &fsm{state: f.state}
	for i := range r.events {
		require.Nil(f.t, m.Apply(&raft.Log{Type: raft.LogCommand, Index: uint64(i + 1), Data: encodeEvent(&r.events[i])}))
	}
	return r
}

func ext(r *result, k string) string {
	for _, kv := range r.ext {
		if kv.Key == k {
			return kv.Value
		}
	}
	return ""
}

// register adds brokers 1..n to set "b" of cluster "c" as Java brokers do.
func (f *fixture) register(n int) {
	for id := int64(1); id <= int64(n); id++ {
		r := f.dec.getNextBrokerID("c", "b")
		require.Equal(f.t, codec.RespSuccess, r.code)
		require.Equal(f.t, itoa(id), ext(r, "nextBrokerId"))
		r = f.commit(f.dec.applyBrokerID("c", "b", id, addr(id)+";1700000000000"))
		require.Equal(f.t, codec.RespSuccess, r.code, r.remark)
	}
}

func itoa(v int64) string { return string(appendInt(nil, v)) }
func appendInt(b []byte, v int64) []byte {
	if v >= 10 {
		b = appendInt(b, v/10)
	}
	return append(b, byte('0'+v%10))
}
func addr(id int64) string { return "127.0.0.1:1091" + itoa(id) }

func (f *fixture) set() *brokerSet {
	var c *brokerSet
	f.state.view("b", func(bs *brokerSet) {
		if bs != nil {
			c = bs.clone()
		}
	})
	return c
}

func TestBrokerIDAssignment(t *testing.T) {
	f := newFixture(t)
	// Unknown set: only id 1 may be applied.
	r := f.dec.applyBrokerID("c", "b", 2, "x:1;1")
	require.Equal(t, codec.RespControllerBrokerIdInvalid, r.code)
	require.Equal(t, "Broker-set: b hasn't been registered in controller, but broker try to apply brokerId: 2", r.remark)
	require.Empty(t, r.events)

	f.register(2)
	bs := f.set()
	require.Equal(t, int64(3), bs.NextID)
	require.Equal(t, "127.0.0.1:10911", bs.Brokers[1].Addr)

	// The same broker re-applying its id (same check code) is fine and changes nothing.
	r = f.dec.applyBrokerID("c", "b", 2, addr(2)+";1700000000000")
	require.Equal(t, codec.RespSuccess, r.code)
	require.Empty(t, r.events)
	// Another broker claiming id 2 is refused.
	r = f.dec.applyBrokerID("c", "b", 2, "10.0.0.9:10911;1")
	require.Equal(t, codec.RespControllerBrokerIdInvalid, r.code)
	require.Equal(t, "Fail to apply brokerId: 2 in broker-set: b", r.remark)
	// Forged ids (0, negative) never enter the state.
	for _, id := range []int64{0, -1} {
		r = f.dec.applyBrokerID("c", "b", id, "10.0.0.9:10911;1")
		require.Equal(t, codec.RespControllerBrokerIdInvalid, r.code)
		require.Empty(t, r.events)
	}
	// Bounds: at most 8 members per set (fixture), 100 sets.
	for id := int64(3); id <= 8; id++ {
		f.commit(f.dec.applyBrokerID("c", "b", id, addr(id)+";1"))
	}
	r = f.dec.applyBrokerID("c", "b", 9, "x:1;1")
	require.Equal(t, codec.RespControllerBrokerIdInvalid, r.code)
	require.Len(t, f.set().Brokers, 8)
}

func TestRegisterBroker(t *testing.T) {
	f := newFixture(t)
	r := f.dec.registerBroker(nil, "c", "b", 1, addr(1))
	require.Equal(t, codec.RespControllerBrokerNeedToBeRegistered, r.code)
	require.Equal(t, "Broker-set: b hasn't been registered in controller", r.remark)
	f.register(2)
	r = f.dec.registerBroker(nil, "c", "b", 5, addr(5))
	require.Equal(t, codec.RespControllerBrokerNeedToBeRegistered, r.code)
	require.Equal(t, "BrokerId: 5 hasn't been registered in broker-set: b", r.remark)

	// No master yet: no master fields, an empty sync set.
	r = f.dec.registerBroker(nil, "c", "b", 1, addr(1))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, "", ext(r, "masterBrokerId"))
	require.Equal(t, `{"syncStateSet":[],"syncStateSetEpoch":0}`, string(r.body))

	f.live[1] = LiveInfo{}
	f.commit(f.dec.electMaster("b", 1, false))
	r = f.dec.registerBroker(nil, "c", "b", 2, "127.0.0.1:20911") // the broker moved
	require.Equal(t, "1", ext(r, "masterBrokerId"))
	require.Equal(t, addr(1), ext(r, "masterAddress"))
	require.Equal(t, "1", ext(r, "masterEpoch"))
	require.Equal(t, "1", ext(r, "syncStateSetEpoch"))
	require.Len(t, r.events, 1)
	f.commit(r)
	require.Equal(t, "127.0.0.1:20911", f.set().Brokers[2].Addr)

	// A dead master is not announced.
	delete(f.live, 1)
	r = f.dec.registerBroker(nil, "c", "b", 2, "127.0.0.1:20911")
	require.Equal(t, "", ext(r, "masterBrokerId"))
	require.Empty(t, r.events)
}

func TestAlterSyncStateSet(t *testing.T) {
	f := newFixture(t)
	f.register(3)
	f.live[1], f.live[2], f.live[3] = LiveInfo{}, LiveInfo{}, LiveInfo{}
	f.commit(f.dec.electMaster("b", 1, false)) // master 1, masterEpoch 1, set {1} epoch 1

	ok := body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}
	cases := []struct {
		name   string
		broker string
		master int64
		epoch  int32
		set    body.SyncStateSet
		dead   int64
		code   codec.ResponseCode
		remark string
	}{
		{"unknown set", "nope", 1, 1, ok, 0, codec.RespControllerAlterSyncStateSetFailed, "Broker metadata is not existed"},
		{"unchanged", "b", 1, 1, body.SyncStateSet{IDs: []int64{1}, Epoch: 1}, 0, codec.RespControllerAlterSyncStateSetFailed,
			"The newSyncStateSet is equal with oldSyncStateSet, no needed to update syncStateSet"},
		{"not the master", "b", 2, 1, ok, 0, codec.RespControllerInvalidMaster,
			"Rejecting alter syncStateSet request because the current leader is:{1}, not {2}"},
		{"stale master epoch", "b", 1, 0, ok, 0, codec.RespControllerFencedMasterEpoch,
			"Rejecting alter syncStateSet request because the current master epoch is:{1}, not {0}"},
		{"stale set epoch", "b", 1, 1, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 0}, 0, codec.RespControllerFencedSyncStateSetEpoch,
			"Rejecting alter syncStateSet request because the current syncStateSet epoch is:{1}, not {0}"},
		{"unknown replica", "b", 1, 1, body.SyncStateSet{IDs: []int64{1, 7}, Epoch: 1}, 0, codec.RespControllerInvalidReplicas,
			"Rejecting alter syncStateSet request because the replicas {7} don't exist"},
		{"dead replica", "b", 1, 1, ok, 2, codec.RespControllerBrokerNotAlive,
			"Rejecting alter syncStateSet request because the replicas {2} don't alive"},
		{"master left out", "b", 1, 1, body.SyncStateSet{IDs: []int64{2, 3}, Epoch: 1}, 0, codec.RespControllerAlterSyncStateSetFailed,
			"Rejecting alter syncStateSet request because the newSyncStateSet don't contains origin leader {1}"},
	}
	before := f.set()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.dead != 0 {
				saved := f.live[tc.dead]
				delete(f.live, tc.dead)
				defer func() { f.live[tc.dead] = saved }()
			}
			r := f.dec.alterSyncStateSet(nil, tc.broker, tc.master, tc.epoch, tc.set)
			require.Equal(t, tc.code, r.code)
			require.Equal(t, tc.remark, r.remark)
			require.Empty(t, r.events)
		})
	}
	require.Equal(t, before, f.set(), "refused requests changed the state")

	r := f.commit(f.dec.alterSyncStateSet(nil, "b", 1, 1, body.SyncStateSet{IDs: []int64{2, 1, 2}, Epoch: 1}))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, "2", ext(r, "newSyncStateSetEpoch"))
	require.Equal(t, `{"syncStateSet":[1,2],"syncStateSetEpoch":2}`, string(r.body))
	bs := f.set()
	require.Equal(t, []int64{1, 2}, bs.SyncSet)
	require.Equal(t, int32(2), bs.SyncEpoch)
	// The same request again is now stale.
	r = f.dec.alterSyncStateSet(nil, "b", 1, 1, body.SyncStateSet{IDs: []int64{1, 2, 3}, Epoch: 1})
	require.Equal(t, codec.RespControllerFencedSyncStateSetEpoch, r.code)
}

func TestElectMaster(t *testing.T) {
	f := newFixture(t)
	r := f.dec.electMaster("b", 1, false)
	require.Equal(t, codec.RespControllerBrokerNeedToBeRegistered, r.code)
	f.register(3)

	// First election: the asking broker wins even if nobody heartbeated.
	r = f.commit(f.dec.electMaster("b", 2, false))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, "2", ext(r, "masterBrokerId"))
	require.Equal(t, "1", ext(r, "masterEpoch"))
	require.Equal(t, `{"brokerMemberGroup":{"brokerAddrs":{1:"127.0.0.1:10911",2:"127.0.0.1:10912",3:"127.0.0.1:10913"},"brokerName":"b","cluster":"c"},"syncStateSet":[2]}`, string(r.body))

	// Master alive: it stays (2011, current info, no group in the body).
	f.live[2] = LiveInfo{}
	r = f.dec.electMaster("b", 1, false)
	require.Equal(t, codec.RespControllerMasterStillExist, r.code)
	require.Equal(t, "The old master 2 is still alive, not need to elect new master for broker b", r.remark)
	require.Equal(t, `{"syncStateSet":[2]}`, string(r.body))
	require.Empty(t, r.events)

	// All three in sync; the master dies: best by epoch, then offset, then priority.
	f.live[1], f.live[3] = LiveInfo{}, LiveInfo{}
	f.commit(f.dec.alterSyncStateSet(nil, "b", 2, 1, body.SyncStateSet{IDs: []int64{1, 2, 3}, Epoch: 1}))
	delete(f.live, 2)
	for _, tc := range []struct {
		l1, l3 LiveInfo
		want   int64
	}{
		{LiveInfo{Epoch: 2, MaxOffset: 1}, LiveInfo{Epoch: 1, MaxOffset: 99}, 1},
		{LiveInfo{Epoch: 1, MaxOffset: 5}, LiveInfo{Epoch: 1, MaxOffset: 9}, 3},
		{LiveInfo{Epoch: 1, MaxOffset: 9, Priority: 5}, LiveInfo{Epoch: 1, MaxOffset: 9, Priority: 1}, 3},
		{LiveInfo{Epoch: 1, MaxOffset: 9, Priority: 1}, LiveInfo{Epoch: 1, MaxOffset: 9, Priority: 1}, 1},
	} {
		f.live[1], f.live[3] = tc.l1, tc.l3
		r = f.dec.electMaster("b", -1, false)
		require.Equal(t, codec.RespSuccess, r.code)
		require.Equal(t, itoa(tc.want), ext(r, "masterBrokerId"))
		require.Equal(t, "2", ext(r, "masterEpoch"))
		require.Equal(t, "3", ext(r, "syncStateSetEpoch"))
	}
	f.commit(r) // master 1, epochs 2/3, set {1}

	// Designated broker: out of sync → 2012 (without unclean election);
	// in sync and alive → elected over a live master; dead → 2012.
	r = f.dec.electMaster("b", 3, true)
	require.Equal(t, codec.RespControllerElectMasterFailed, r.code)
	require.Equal(t, "Failed to elect a new master", r.remark)
	require.Equal(t, codec.RespSuccess, f.commit(f.dec.alterSyncStateSet(nil, "b", 1, 2, body.SyncStateSet{IDs: []int64{1, 3}, Epoch: 3})).code)
	r = f.dec.electMaster("b", 3, true)
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, "3", ext(r, "masterBrokerId"))
	delete(f.live, 3)
	r = f.dec.electMaster("b", 3, true)
	require.Equal(t, codec.RespControllerElectMasterFailed, r.code)
	f.commit(f.dec.alterSyncStateSet(nil, "b", 1, 2, body.SyncStateSet{IDs: []int64{1}, Epoch: 4}))

	// Master 1 dies; 3 is alive but not in sync: no clean candidate.
	f.live[3] = LiveInfo{}
	delete(f.live, 1)
	r = f.dec.electMaster("b", 3, false)
	require.Equal(t, codec.RespControllerElectMasterFailed, r.code)
	r = f.dec.electMaster("b", -1, false)
	require.Equal(t, codec.RespControllerMasterNotAvailable, r.code)
	require.Equal(t, "Old master has down and failed to elect a new broker master", r.remark)
	f.commit(r)
	bs := f.set()
	require.Equal(t, int64(0), bs.Master)
	require.Equal(t, int32(3), bs.MasterEpoch)
	require.Equal(t, []int64{1}, bs.SyncSet, "the lost master's set is kept")

	// Unclean election takes any live member.
	f.uncl = true
	r = f.commit(f.dec.electMaster("b", -1, false))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, "3", ext(r, "masterBrokerId"))
	require.Equal(t, int32(4), f.set().MasterEpoch)
}

func TestFirstElectionNeedsAMember(t *testing.T) {
	f := newFixture(t)
	f.register(1)
	// A forged requester id wins nothing on the first election.
	r := f.dec.electMaster("b", 42, false)
	require.Equal(t, codec.RespControllerElectMasterFailed, r.code)
	require.Empty(t, r.events)
}

func TestCleanBrokerData(t *testing.T) {
	f := newFixture(t)
	r := f.dec.cleanBrokerData("c", "b", "", false)
	require.Equal(t, codec.RespControllerInvalidCleanBrokerMetadata, r.code)
	require.Equal(t, "Broker b is not existed,clean broker data failure.", r.remark)
	f.register(3)
	f.live[1], f.live[2] = LiveInfo{}, LiveInfo{}
	f.commit(f.dec.electMaster("b", 1, false))
	f.commit(f.dec.alterSyncStateSet(nil, "b", 1, 1, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))

	r = f.dec.cleanBrokerData("c", "b", "", false)
	require.Equal(t, "Broker b is still alive, clean up failure", r.remark)
	r = f.dec.cleanBrokerData("c", "b", "2", false)
	require.Equal(t, "Broker [b,  2] is still alive, clean up failure", r.remark)
	r = f.dec.cleanBrokerData("c", "b", "2;x", false)
	require.Equal(t, codec.RespControllerInvalidCleanBrokerMetadata, r.code)
	require.Contains(t, r.remark, "Please set the option <brokerControllerIdsToClean> according to the format")

	r = f.commit(f.dec.cleanBrokerData("c", "b", "3", false))
	require.Equal(t, codec.RespSuccess, r.code)
	require.NotContains(t, f.set().Brokers, int64(3))

	// isCleanLivingBroker alone never removes a live broker, whatever
	// cluster the request names; nor a set with a live member.
	for _, cluster := range []string{"c", "other"} {
		for _, ids := range []string{"1", "2", "1;2", ""} {
			r = f.dec.cleanBrokerData(cluster, "b", ids, true)
			require.Equal(t, codec.RespControllerInvalidCleanBrokerMetadata, r.code, ids)
			require.Contains(t, r.remark, "is still alive, clean up failure")
			require.Empty(t, r.events)
		}
		r = f.dec.cleanBrokerData(cluster, "b", "2", false)
		require.Equal(t, codec.RespControllerInvalidCleanBrokerMetadata, r.code)
	}
	// It does waive Java's "the set names a master" once nobody is alive.
	saved := f.live[1]
	delete(f.live, 1)
	delete(f.live, 2)
	r = f.dec.cleanBrokerData("c", "b", "", false)
	require.Equal(t, "Broker b is still alive, clean up failure", r.remark, "Java's check without -l")
	r = f.dec.cleanBrokerData("c", "b", "", true)
	require.Equal(t, codec.RespSuccess, r.code)
	f.live[1], f.live[2] = saved, saved

	// The controller's local controllerAllowAdminOnLiveBrokers restores Java's -l.
	f.adminLive = true
	r = f.commit(f.dec.cleanBrokerData("c", "b", "2", true))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, []int64{1}, f.set().SyncSet)
	r = f.dec.cleanBrokerData("c", "b", "1", false)
	require.Equal(t, codec.RespControllerInvalidCleanBrokerMetadata, r.code, "without -l, still Java's refusal")
	r = f.commit(f.dec.cleanBrokerData("c", "b", "", true))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Nil(t, f.set())
}

// TestWhoMaySpeak: requests that name a broker only count on the
// connection that holds its identity; admin requests follow doc.go's rule.
func TestWhoMaySpeak(t *testing.T) {
	f := newFixture(t)
	f.register(3)
	real1, real2, stranger := &transport.Conn{}, &transport.Conn{}, &transport.Conn{}
	f.owners[1], f.owners[2], f.owners[3] = real1, real2, stranger
	f.live[1], f.live[2], f.live[3] = LiveInfo{}, LiveInfo{}, LiveInfo{}

	// Broker elect: only on the asker's own connection; never as the controller.
	r := f.dec.brokerElect(stranger, "b", 1)
	require.Equal(t, codec.RespControllerInvalidRequest, r.code)
	require.Equal(t, "Broker [b, 1] is not registered on this connection", r.remark)
	require.Empty(t, r.events)
	r = f.dec.brokerElect(stranger, "b", -1)
	require.Equal(t, codec.RespControllerInvalidRequest, r.code)
	require.Equal(t, codec.RespControllerBrokerNeedToBeRegistered, f.dec.brokerElect(stranger, "nope", 1).code)
	r = f.commit(f.dec.brokerElect(real1, "b", 1))
	require.Equal(t, codec.RespSuccess, r.code)
	require.Equal(t, int64(1), f.set().Master)

	// ALTER_SYNC_STATE_SET: the master's id and epochs are not enough.
	before := f.set()
	set := body.SyncStateSet{IDs: []int64{1, 3}, Epoch: 1}
	for _, from := range []*transport.Conn{stranger, real2, nil} {
		r = f.dec.alterSyncStateSet(from, "b", 1, 1, set)
		require.Equal(t, codec.RespControllerInvalidMaster, r.code)
		require.Equal(t, "Rejecting alter syncStateSet request because it does not come on the connection of master {1}", r.remark)
		require.Empty(t, r.events)
	}
	require.Equal(t, before, f.set())
	r = f.commit(f.dec.alterSyncStateSet(real1, "b", 1, 1, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
	require.Equal(t, codec.RespSuccess, r.code, r.remark)

	// REGISTER_BROKER of a held identity from elsewhere: refused, the address stays.
	r = f.dec.registerBroker(stranger, "c", "b", 2, "127.0.0.1:1")
	require.Equal(t, codec.RespControllerInvalidRequest, r.code)
	require.Equal(t, "Broker [b, 2] is registered on another live connection", r.remark)
	require.Empty(t, r.events)
	r = f.dec.registerBroker(real2, "c", "b", 2, "127.0.0.1:20912")
	require.Equal(t, codec.RespSuccess, r.code)
	require.Len(t, r.events, 1, "the broker itself may move")

	// Admin elect: the designated broker must be a live in-sync member …
	for _, tc := range []struct {
		id     int64
		remark string
	}{
		{3, "Failed to elect a new master: broker 3 is not in the SyncStateSet"},
		{9, "Failed to elect a new master: broker 9 is not a member of broker set b"},
	} {
		r = f.dec.adminElect("b", tc.id)
		require.Equal(t, codec.RespControllerElectMasterFailed, r.code)
		require.Equal(t, tc.remark, r.remark)
		require.Empty(t, r.events)
	}
	delete(f.live, 2)
	r = f.dec.adminElect("b", 2)
	require.Equal(t, "Failed to elect a new master: broker 2 is not alive", r.remark)
	f.live[2] = LiveInfo{}
	// … and a live master stays (Java's 2011 with the current master).
	r = f.dec.adminElect("b", 2)
	require.Equal(t, codec.RespControllerMasterStillExist, r.code)
	require.Equal(t, "The old master 1 is still alive, not need to elect new master for broker b", r.remark)
	require.Equal(t, "1", ext(r, "masterBrokerId"))
	require.Empty(t, r.events)
	require.Equal(t, codec.RespControllerMasterStillExist, f.dec.adminElect("b", 1).code)
	require.Equal(t, codec.RespControllerBrokerNeedToBeRegistered, f.dec.adminElect("nope", 1).code)
	// The master gone, the live in-sync slave is elected.
	delete(f.live, 1)
	r = f.dec.adminElect("b", 2)
	require.Equal(t, codec.RespSuccess, r.code, r.remark)
	require.Equal(t, "2", ext(r, "masterBrokerId"))
	// With controllerAllowAdminOnLiveBrokers, Java's forced switch over a live master.
	f.live[1] = LiveInfo{}
	f.adminLive = true
	r = f.dec.adminElect("b", 2)
	require.Equal(t, codec.RespSuccess, r.code, r.remark)
	require.Equal(t, codec.RespControllerElectMasterFailed, f.dec.adminElect("b", 3).code, "still only in-sync members")
}

func TestSyncStateDataAndReplicaInfo(t *testing.T) {
	f := newFixture(t)
	f.register(2)
	r := f.dec.getReplicaInfo("b")
	require.Equal(t, "", ext(r, "masterBrokerId"))
	require.Equal(t, "0", ext(r, "masterEpoch"))
	f.live[1] = LiveInfo{}
	f.commit(f.dec.electMaster("b", 1, false))
	r = f.dec.getReplicaInfo("b")
	require.Equal(t, "1", ext(r, "masterBrokerId"))
	require.Equal(t, addr(1), ext(r, "masterAddress"))
	require.Equal(t, codec.RespControllerBrokerMetadataNotExist, f.dec.getReplicaInfo("x").code)

	r = f.dec.getSyncStateData([]string{"b", "unknown", "b"})
	require.Equal(t, `{"replicasInfoTable":{"b":{"inSyncReplicas":[{"alive":true,"brokerAddress":"127.0.0.1:10911","brokerId":1,"brokerName":"b"}],`+
		`"masterAddress":"127.0.0.1:10911","masterBrokerId":1,"masterEpoch":1,"notInSyncReplicas":[{"alive":false,"brokerAddress":"127.0.0.1:10912","brokerId":2,"brokerName":"b"}],"syncStateSetEpoch":1}}}`,
		string(r.body))
	got, err := body.DecodeBrokerReplicasInfo(r.body)
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, int64(1), got[0].Info.MasterBrokerID)
}

func TestNeedReelect(t *testing.T) {
	f := newFixture(t)
	f.register(2)
	f.live[1] = LiveInfo{}
	f.commit(f.dec.electMaster("b", 1, false))
	require.Empty(t, f.dec.needReelect())
	delete(f.live, 1)
	require.Empty(t, f.dec.needReelect(), "nobody alive: nothing to elect")
	f.live[2] = LiveInfo{}
	require.Equal(t, []string{"b"}, f.dec.needReelect())
}

func TestSnapshotRoundTrip(t *testing.T) {
	f := newFixture(t)
	f.register(3)
	f.live[1], f.live[2] = LiveInfo{}, LiveInfo{}
	f.commit(f.dec.electMaster("b", 1, false))
	f.commit(f.dec.alterSyncStateSet(nil, "b", 1, 1, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
	f.commit(f.dec.applyBrokerID("c2", "other", 1, "10.0.0.1:10911;5"))

	m := &fsm{state: f.state}
	snap, err := m.Snapshot()
	require.NoError(t, err)
	sink := &memSink{}
	require.NoError(t, snap.Persist(sink))

	restored := NewState()
	require.NoError(t, (&fsm{state: restored}).Restore(io.NopCloser(bytes.NewReader(sink.Bytes()))))
	require.Equal(t, f.state.sets, restored.sets)
	b1, _ := f.state.marshal()
	b2, _ := restored.marshal()
	require.Equal(t, b1, b2, "marshal is deterministic")

	// A damaged snapshot is refused and leaves the state alone.
	for _, bad := range []string{
		`{"format":2,"sets":[]}`,
		`{"format":1,"sets":[{"name":"b","brokers":{"1":{}},"master":9}]}`,
		`{"format":1,"sets":[{"name":"b","brokers":{"1":{}},"syncSet":[4]}]}`,
		`{"format":1,"sets":[{"name":""}]}`,
		`{"format":1,`,
	} {
		require.Error(t, restored.unmarshal([]byte(bad)), bad)
	}
	require.Equal(t, f.state.sets, restored.sets)
}

func TestApplyIgnoresStaleEvents(t *testing.T) {
	f := newFixture(t)
	// Events about unknown sets or non-members change nothing.
	for _, e := range []event{
		{Type: evAlterSyncStateSet, Broker: "b", IDs: []int64{1}},
		{Type: evElectMaster, Broker: "b", ID: 1, Elected: true},
		{Type: evUpdateBrokerAddress, Broker: "b", ID: 1, Addr: "x"},
		{Type: evCleanBrokerData, Broker: "b", IDs: []int64{1}},
	} {
		f.state.apply(&e)
	}
	require.Zero(t, f.state.Len())
	f.register(1)
	f.state.apply(&event{Type: evElectMaster, Broker: "b", ID: 9, Elected: true})
	f.state.apply(&event{Type: evAlterSyncStateSet, Broker: "b", IDs: []int64{9, 1}})
	bs := f.set()
	require.Equal(t, int64(0), bs.Master)
	require.Equal(t, []int64{1}, bs.SyncSet)
	// A garbage entry is reported, not applied.
	require.Error(t, (&fsm{state: f.state}).Apply(&raft.Log{Type: raft.LogCommand, Data: []byte("{")}).(error))
}

type memSink struct{ bytes.Buffer }

func (s *memSink) ID() string    { return "mem" }
func (s *memSink) Cancel() error { return nil }
func (s *memSink) Close() error  { return nil }
