package broker

import (
	"bytes"
	"fmt"
	"github.com/rocketgo/rocketgo/codec/message"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/controller/controllertest"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/epoch"
)

// startTestController runs one controller node on loopback (its Raft port
// is the remoting port + 1) with fast scans, and waits until it leads.
func startTestController(t *testing.T, muts ...func(*controller.Config)) string {
	t.Helper()
	fast := func(cfg *controller.Config) {
		cfg.ScanNotActiveBrokerInterval = 100 * time.Millisecond
		cfg.ScanInactiveMasterInterval = 100 * time.Millisecond
		cfg.ElectGrace = 300 * time.Millisecond
	}
	return controllertest.StartSingle(t, testLogger(), append([]func(*controller.Config){fast}, muts...)...).Addr()
}

// controllerModeConfig is a controller-mode broker as Java's sample conf
// starts one (SLAVE, brokerId -1) with fast periods.
func controllerModeConfig(ctrl, ns string) func(*Config) {
	return func(c *Config) {
		c.EnableControllerMode = true
		c.ControllerAddr = ctrl
		c.NamesrvAddr = ns
		c.BrokerRole = "SLAVE"
		c.BrokerID = -1
		c.HaListenPort = 0
		c.HaSendHeartbeatInterval = 200
		c.SyncBrokerMetadataPeriod = 200
		c.SyncControllerMetadataPeriod = 1000
		c.BrokerHeartbeatInterval = 100
		c.ControllerHeartBeatTimeoutMills = 1500
		c.CheckSyncStateSetPeriod = 300
		c.HaMaxTimeSlaveNotCatchup = 2000
		c.RegisterNameServerPeriod = 1000
	}
}

type cmBroker struct {
	*testBroker
	root string
	stop func()
}

// startCMBrokers starts n brokers, each on its own store directory.
func startCMBrokers(t *testing.T, n int, mut func(*Config)) []*cmBroker {
	t.Helper()
	bs := make([]*cmBroker, n)
	for i := range bs {
		root := t.TempDir()
		tb, stop := startBrokerAt(t, root, mut)
		bs[i] = &cmBroker{testBroker: tb, root: root, stop: stop}
	}
	return bs
}

func masterOf(bs []*cmBroker) []*cmBroker {
	var out []*cmBroker
	for _, b := range bs {
		if b != nil && b.rm != nil && !b.IsSlave() && !b.rm.fenced.Load() {
			out = append(out, b)
		}
	}
	return out
}

func sendN(t *testing.T, tb *testBroker, topic string, from, n int) {
	t.Helper()
	for i := from; i < from+n; i++ {
		resp := tb.invoke(t, sendV1(topic, 0, props("UNIQ_KEY", fmt.Sprint("u", i)), []byte(fmt.Sprint("body-", i))))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
}

// storeOf is the broker's *store.Store (tests open it themselves).
func storeOf(tb *testBroker) *store.Store { return tb.store.(*store.Store) }

// Three brokers in controller mode under our controller: the controller
// assigns ids 1–3 through the brokerIdentity files, one master is elected
// (brokerId 0, epoch 1), the slaves replicate byte for byte and join the
// SyncStateSet. Closing the master makes a slave master with a higher
// epoch that takes writes; the old master, given a divergent tail while it
// was away, rejoins as a slave under its old id, truncates to the
// consistent point and ends byte-identical to the new master.
func TestControllerModeFailover(t *testing.T) {
	runControllerFailover(t, startTestController(t), startNamesrv(t), 20*time.Second)
}

// runControllerFailover is TestControllerModeFailover's scenario against
// the controller ctrl and name server ns; wait bounds each step.
func runControllerFailover(t *testing.T, ctrl, ns string, wait time.Duration) {
	mut := controllerModeConfig(ctrl, ns)
	bs := startCMBrokers(t, 3, mut)
	require.Eventually(t, func() bool { return len(masterOf(bs)) == 1 }, wait, 10*time.Millisecond)
	m := masterOf(bs)[0]
	ids := map[int64]bool{}
	for _, b := range bs {
		require.Eventually(t, func() bool { return b.rm.ID() > 0 }, wait, 10*time.Millisecond)
		ids[b.rm.ID()] = true
		id, ok, err := b.rm.ident.read()
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, b.rm.ID(), id.brokerID)
		require.Equal(t, "broker-a", id.brokerName)
	}
	require.Equal(t, map[int64]bool{1: true, 2: true, 3: true}, ids)
	require.Equal(t, int64(0), m.role.BrokerID())
	require.Equal(t, store.SyncMaster, m.Role())
	epoch1 := m.rm.MasterEpoch()
	require.Positive(t, epoch1)

	sendN(t, m.testBroker, "CM", 0, 40)
	end := m.store.MaxPhyOffset()
	for _, b := range bs {
		require.Eventually(t, func() bool { return b.store.MaxPhyOffset() == end }, wait, 5*time.Millisecond)
		if b != m {
			require.True(t, b.IsSlave())
			require.Equal(t, m.BrokerAddr(), b.MasterAddr())
			require.Equal(t, rawBytes(t, storeOf(m.testBroker), 0, end), rawBytes(t, storeOf(b.testBroker), 0, end))
		}
	}
	require.Eventually(t, func() bool { s, _ := m.rm.SyncStateSet(); return len(s) == 3 }, wait, 10*time.Millisecond)
	// GET_BROKER_HA_STATUS shows the AutoSwitch connections: two slaves,
	// both in the local SyncStateSet.
	require.Eventually(t, func() bool {
		resp := m.invoke(t, request(codec.ReqGetBrokerHaStatus))
		s := string(resp.Body)
		return resp.Code == int32(codec.RespSuccess) && strings.Contains(s, `"inSyncSlaveNums":2`) &&
			strings.Count(s, `"inSync":true`) == 2 && strings.Contains(s, `"master":true`)
	}, wait, 20*time.Millisecond)

	// The master goes away.
	oldID := m.rm.ID()
	m.stop()
	var rest []*cmBroker
	for _, b := range bs {
		if b != m {
			rest = append(rest, b)
		}
	}
	require.Eventually(t, func() bool { return len(masterOf(rest)) == 1 }, wait, 10*time.Millisecond)
	nm := masterOf(rest)[0]
	require.Greater(t, nm.rm.MasterEpoch(), epoch1)
	require.Equal(t, store.SyncMaster, nm.Role())
	sendN(t, nm.testBroker, "CM", 100, 20)

	// The old master writes a tail the others never see (as if it kept
	// taking writes while cut off), then rejoins in controller mode.
	div, stopDiv := startBrokerAt(t, m.root, func(c *Config) { c.BrokerRole = "ASYNC_MASTER" })
	sendN(t, div, "CM", 200, 10)
	divEnd := div.store.MaxPhyOffset()
	stopDiv()
	sendN(t, nm.testBroker, "CM", 300, 10)
	newEnd := nm.store.MaxPhyOffset()
	require.Greater(t, divEnd, end)

	back, _ := startBrokerAt(t, m.root, mut)
	require.Eventually(t, func() bool { return back.rm.ID() == oldID && back.rm.MasterEpoch() == nm.rm.MasterEpoch() }, wait, 10*time.Millisecond)
	require.True(t, back.IsSlave())
	require.Eventually(t, func() bool {
		return back.store.MaxPhyOffset() == nm.store.MaxPhyOffset()
	}, wait, 5*time.Millisecond)
	require.GreaterOrEqual(t, nm.store.MaxPhyOffset(), newEnd)
	fin := nm.store.MaxPhyOffset()
	require.True(t, bytes.Equal(rawBytes(t, storeOf(nm.testBroker), 0, fin), rawBytes(t, storeOf(back), 0, fin)))
	st, ok := back.HAClientStatus()
	require.True(t, ok)
	require.Equal(t, nm.HAAddr(), st.MasterAddr)
	// Its epoch file now equals the new master's.
	require.Equal(t, nm.rm.ep.Entries(), back.rm.ep.Entries())
}

// A slave whose master connection ends asks the controller for the
// master within milliseconds rather than at its next
// syncBrokerMetadataPeriod: with the controller's NOTIFY_BROKER_ROLE_CHANGED
// off (as when it cannot reach the brokers) and a 60 s period, the
// remaining brokers still follow the new master within seconds of the
// old one closing.
func TestControllerModeSlaveChasesLostMaster(t *testing.T) {
	ctrl := startTestController(t, func(c *controller.Config) { c.NotifyBrokerRoleChanged = false })
	ns := startNamesrv(t)
	base := controllerModeConfig(ctrl, ns)
	mut := func(c *Config) {
		base(c)
		c.SyncBrokerMetadataPeriod = 60000
	}
	bs := startCMBrokers(t, 3, mut)
	require.Eventually(t, func() bool { return len(masterOf(bs)) == 1 }, 20*time.Second, 10*time.Millisecond)
	m := masterOf(bs)[0]
	var rest []*cmBroker
	for _, b := range bs {
		if b != m {
			rest = append(rest, b)
		}
	}
	sendN(t, m.testBroker, "CHASE", 0, 10)
	end := m.store.MaxPhyOffset()
	for _, b := range rest {
		require.Eventually(t, func() bool { return b.store.MaxPhyOffset() == end && b.MasterAddr() == m.BrokerAddr() },
			20*time.Second, 5*time.Millisecond)
	}
	epoch1 := m.rm.MasterEpoch()
	m.stop()
	start := time.Now()
	// Far below the 60 s period: only the chase can explain it.
	require.Eventually(t, func() bool { return len(masterOf(rest)) == 1 }, 10*time.Second, 5*time.Millisecond)
	nm := masterOf(rest)[0]
	for _, b := range rest {
		require.Eventually(t, func() bool { return b.rm.MasterEpoch() > epoch1 }, 10*time.Second, 5*time.Millisecond)
	}
	t.Logf("new master %d in %v", nm.rm.ID(), time.Since(start))
	sendN(t, nm.testBroker, "CHASE", 100, 5)
}

func TestChaseSchedule(t *testing.T) {
	var c chase
	defer c.stop()
	require.Nil(t, c.c())
	c.begin(3, 100*time.Millisecond)
	require.NotNil(t, c.c())
	<-c.c()
	require.Equal(t, chaseFirst, c.gap)
	c.begin(3, time.Second) // already chasing: unchanged
	require.Equal(t, 100*time.Millisecond, c.max)
	c.next(3) // 20 ms
	require.True(t, c.active)
	<-c.c()
	c.next(3) // 40
	<-c.c()
	c.next(3) // 80
	<-c.c()
	c.next(3) // 160 ≥ 100: the period takes over
	require.False(t, c.active)
	require.Nil(t, c.c())
	c.begin(3, time.Second)
	<-c.c()
	c.next(4) // the epoch moved: done
	require.False(t, c.active)
}

// A master in controller mode: GET_BROKER_EPOCH_CACHE answers Java's
// EpochEntryCache from the epoch file; with minInSyncReplicas above the
// SyncStateSet a send answers Java's IN_SYNC_REPLICAS_NOT_ENOUGH; fenced,
// SERVICE_NOT_AVAILABLE; told by NOTIFY_BROKER_ROLE_CHANGED of a newer
// epoch with another master, it refuses writes at once as a slave and
// ignores an older epoch afterwards.
func TestControllerModeFencing(t *testing.T) {
	ctrl := startTestController(t)
	ns := startNamesrv(t)
	tb := startBroker(t, controllerModeConfig(ctrl, ns))
	require.Eventually(t, func() bool { return !tb.IsSlave() && !tb.rm.fenced.Load() }, 20*time.Second, 10*time.Millisecond)
	sendN(t, tb, "CMF", 0, 3)
	e := tb.rm.MasterEpoch()

	resp := tb.invoke(t, request(codec.ReqGetBrokerEpochCache))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, fmt.Sprintf(`{"brokerId":0,"brokerName":"broker-a","clusterName":"DefaultCluster","epochList":[{"endOffset":9223372036854775807,"epoch":%d,"startOffset":0}],"maxOffset":%d}`,
		e, tb.store.MaxPhyOffset()), string(resp.Body))

	// minInSyncReplicas changes at once by UPDATE_BROKER_CONFIG, as Java
	// reads it per put.
	up := updateConfig(t, tb, "minInSyncReplicas=2\n")
	require.Equal(t, int32(codec.RespSuccess), up.Code, up.Remark)
	resp = tb.invoke(t, sendV1("CMF", 0, props("UNIQ_KEY", "x"), []byte("x")))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "in-sync replicas not enough", resp.Remark)
	// A message that does not wait for the store (WAIT=false) skips the
	// check, as Java's needHandleHA.
	resp = tb.invoke(t, sendV1("CMF", 0, props("UNIQ_KEY", "w", "WAIT", "false"), []byte("w")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV2("CMF", "0", props("UNIQ_KEY", "w2", "WAIT", "false"), []byte("w")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV2("CMF", "0", props("UNIQ_KEY", "v2"), []byte("v")))
	require.Equal(t, "in-sync replicas not enough", resp.Remark)
	// A header that does not decode is refused as such, before the check
	// (Java decodes the header before the store asks for replicas).
	resp = tb.invoke(t, sendV2("CMF", "q", props("UNIQ_KEY", "q"), []byte("q")))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, `java.lang.NumberFormatException: For input string: "q"`, resp.Remark)
	up = updateConfig(t, tb, "minInSyncReplicas=1\n")
	require.Equal(t, int32(codec.RespSuccess), up.Code, up.Remark)

	okSend := tb.invoke(t, sendV1("CMF", 0, props("UNIQ_KEY", "z"), []byte("z")))
	require.Equal(t, int32(codec.RespSuccess), okSend.Code, okSend.Remark)
	_, phy, err := message.DecodeOffsetMsgID(ext(t, okSend, "msgId"))
	require.NoError(t, err)
	tb.rm.fence("test")
	resp = tb.invoke(t, sendV1("CMF", 0, props("UNIQ_KEY", "y"), []byte("y")))
	require.Equal(t, int32(codec.RespServiceNotAvailable), resp.Code)
	require.True(t, strings.HasPrefix(resp.Remark, "service not available now."), resp.Remark)
	// Every write path stops, not only sends: a send-back (retry topic
	// put) is refused by the fenced store too.
	before := tb.store.MaxPhyOffset()
	resp = tb.invoke(t, sendBackReq(phy, "cmf_g", 0, 16))
	require.NotEqual(t, int32(codec.RespSuccess), resp.Code, "a fenced master stored a send-back: %s", resp.Remark)
	require.Equal(t, before, tb.store.MaxPhyOffset())
	tb.rm.unfence()
	resp = tb.invoke(t, sendBackReq(phy, "cmf_g", 0, 16))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	sendN(t, tb, "CMF", 10, 1)

	// A newer master elsewhere.
	f := request(codec.ReqNotifyBrokerRoleChanged)
	(&header.NotifyBrokerRoleChangedRequest{MasterAddress: "127.0.0.1:1", MasterEpoch: e + 5, SyncStateSetEpoch: 9, MasterBrokerID: 7}).Encode(f)
	f.Body = body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{7}, Epoch: 9})
	resp = tb.invoke(t, f)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.True(t, tb.IsSlave())
	require.Equal(t, e+5, tb.rm.MasterEpoch())
	resp = tb.invoke(t, sendV1("CMF", 0, props("UNIQ_KEY", "z"), []byte("z")))
	require.Equal(t, int32(codec.RespSystemBusy), resp.Code)
	require.Equal(t, remarks.RejectRequest, resp.Remark)
	// The controller's own (older) view does not bring it back.
	tb.rm.syncReplicaInfo()
	require.True(t, tb.IsSlave())
}

// Outside controller mode GET_BROKER_EPOCH_CACHE answers Java's
// SYSTEM_ERROR and remark; NOTIFY_BROKER_ROLE_CHANGED is a no-op success.
func TestEpochCacheOutsideControllerMode(t *testing.T) {
	tb := startBroker(t, nil)
	resp := tb.invoke(t, request(codec.ReqGetBrokerEpochCache))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "this request only for controllerMode ", resp.Remark)
	resp = tb.invoke(t, request(codec.ReqNotifyBrokerRoleChanged))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.False(t, tb.IsSlave())
}

// The brokerIdentity files use Java's text format; a temp file left by a
// crash between GET_NEXT_BROKER_ID and APPLY_BROKER_ID resumes the
// registration with the same id and check code.
func TestBrokerIdentityFiles(t *testing.T) {
	dir := t.TempDir()
	f := identityFiles{path: dir + "/brokerIdentity"}
	_, ok, err := f.read()
	require.NoError(t, err)
	require.False(t, ok)
	require.NoError(t, f.writeTemp(identity{cluster: "c", brokerName: "b", brokerID: 4, checkCode: "127.0.0.1:10911;1700000000000"}))
	got, err := readFileString(dir + "/brokerIdentity-temp")
	require.NoError(t, err)
	require.Equal(t, "c#b#4#127.0.0.1:10911;1700000000000", got)
	tmp, ok, err := f.readTemp()
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, int64(4), tmp.brokerID)
	require.NoError(t, f.write(identity{cluster: "c", brokerName: "b", brokerID: 4}))
	require.NoError(t, f.removeTemp())
	got, err = readFileString(dir + "/brokerIdentity")
	require.NoError(t, err)
	require.Equal(t, "c#b#4", got)

	// Resume from a temp file against a controller: the applied id is the
	// temp file's.
	ctrl := startTestController(t)
	ns := startNamesrv(t)
	root := t.TempDir()
	pre := identityFiles{path: root + "/brokerIdentity"}
	require.NoError(t, pre.writeTemp(identity{cluster: "DefaultCluster", brokerName: "broker-a", brokerID: 1, checkCode: "x;1"}))
	tb, _ := startBrokerAt(t, root, controllerModeConfig(ctrl, ns))
	require.Eventually(t, func() bool { return tb.rm.ID() == 1 && !tb.IsSlave() }, 20*time.Second, 10*time.Millisecond)
	_, ok, err = pre.readTemp()
	require.NoError(t, err)
	require.False(t, ok, "temp file removed after APPLY_BROKER_ID")
	ep, err := epoch.Open(root + "/epochFileCheckpoint")
	require.NoError(t, err)
	require.Equal(t, tb.rm.MasterEpoch(), ep.LastEpoch())
}

func readFileString(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}

// startTestControllerGroup runs n controller nodes on loopback; it
// returns the nodes and their remoting addresses.
func startTestControllerGroup(t *testing.T, n int) ([]*controller.Controller, []string) {
	t.Helper()
	var ports []int
	for len(ports) < n {
		ports = append(ports, controllertest.FreePortPair(t))
	}
	var peers, addrs []string
	for i, p := range ports {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, p))
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	nodes := make([]*controller.Controller, n)
	for i := range ports {
		cfg := controller.Default()
		cfg.Group = "g1"
		cfg.Peers = strings.Join(peers, ";")
		cfg.SelfID = fmt.Sprintf("n%d", i)
		cfg.StorePath = t.TempDir()
		cfg.ConfigStorePath = ""
		cfg.RaftElectionTimeout = time.Second
		cfg.ScanNotActiveBrokerInterval = 100 * time.Millisecond
		cfg.ScanInactiveMasterInterval = 100 * time.Millisecond
		cfg.ElectGrace = 300 * time.Millisecond
		c, err := controller.New(cfg, testLogger())
		require.NoError(t, err)
		require.NoError(t, c.Start())
		nodes[i] = c
		t.Cleanup(func() { c.Close() })
	}
	return nodes, addrs
}

func controllerLeader(t *testing.T, nodes []*controller.Controller) int {
	t.Helper()
	idx := -1
	require.Eventually(t, func() bool {
		idx = -1
		for i, c := range nodes {
			if c != nil && c.IsLeader() {
				if idx >= 0 {
					return false
				}
				idx = i
			}
		}
		return idx >= 0
	}, 20*time.Second, 10*time.Millisecond)
	return idx
}

// With a three-node controller group, the brokers follow a controller
// leader change (a failed call or CONTROLLER_NOT_LEADER makes them ask
// the group for the new leader; heartbeats went to every node), and the
// new leader fails the broker master over.
func TestControllerModeControllerLeaderChange(t *testing.T) {
	nodes, addrs := startTestControllerGroup(t, 3)
	li := controllerLeader(t, nodes)
	ns := startNamesrv(t)
	mut := controllerModeConfig(strings.Join(addrs, ";"), ns)
	bs := startCMBrokers(t, 2, mut)
	require.Eventually(t, func() bool { return len(masterOf(bs)) == 1 }, 20*time.Second, 10*time.Millisecond)
	m := masterOf(bs)[0]
	sendN(t, m.testBroker, "CML", 0, 10)
	e := m.rm.MasterEpoch()
	// Only an in-sync slave may take over (no unclean election).
	require.Eventually(t, func() bool { s, _ := m.rm.SyncStateSet(); return len(s) == 2 }, 20*time.Second, 10*time.Millisecond)

	require.NoError(t, nodes[li].Close())
	nodes[li] = nil
	nli := controllerLeader(t, nodes)
	require.NotEqual(t, li, nli)
	// Both brokers find the new leader.
	for _, b := range bs {
		require.Eventually(t, func() bool { return b.rm.leaderAddr() == addrs[nli] }, 20*time.Second, 10*time.Millisecond)
	}

	m.stop()
	var other *cmBroker
	for _, b := range bs {
		if b != m {
			other = b
		}
	}
	require.Eventually(t, func() bool { return len(masterOf([]*cmBroker{other})) == 1 }, 20*time.Second, 10*time.Millisecond)
	require.Greater(t, other.rm.MasterEpoch(), e)
	sendN(t, other.testBroker, "CML", 100, 5)
}
