package controller

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/javaprops"
	"github.com/rocketgo/rocketgo/controller/internal/portpair"
)

// freePorts returns n distinct free TCP ports on 127.0.0.1, each with the
// next port free too (Raft takes port + 1), below the ephemeral range.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	ps := portpair.Find(n)
	if ps == nil {
		t.Fatal("no free port pairs below the ephemeral range")
	}
	return ps
}

type group struct {
	t     *testing.T
	cfgs  []Config
	nodes []*Controller
	cl    *transport.Client
}

func quietLog() *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// startGroup starts n controller nodes on loopback with fast timers.
func startGroup(t *testing.T, n int, tune func(*Config)) *group {
	t.Helper()
	ports := freePorts(t, n)
	var peers []string
	for i, p := range ports {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, p))
	}
	g := &group{t: t, cl: transport.NewClient(transport.ClientConfig{Logger: quietLog()})}
	t.Cleanup(func() {
		g.cl.Close()
		for _, c := range g.nodes {
			if c != nil {
				c.Close()
			}
		}
	})
	for i := range ports {
		cfg := Default()
		cfg.Group = "g1"
		cfg.Peers = strings.Join(peers, ";")
		cfg.SelfID = fmt.Sprintf("n%d", i)
		cfg.StorePath = t.TempDir()
		cfg.ConfigStorePath = ""
		cfg.RaftElectionTimeout = time.Second // tolerant of a loaded CI machine
		cfg.ScanNotActiveBrokerInterval = 100 * time.Millisecond
		cfg.ScanInactiveMasterInterval = 100 * time.Millisecond
		cfg.ElectGrace = 300 * time.Millisecond
		if tune != nil {
			tune(&cfg)
		}
		g.cfgs = append(g.cfgs, cfg)
		g.nodes = append(g.nodes, nil)
		g.restart(i)
	}
	return g
}

func (g *group) restart(i int) {
	c, err := New(g.cfgs[i], quietLog())
	require.NoError(g.t, err)
	require.NoError(g.t, c.Start())
	g.nodes[i] = c
}

// leader waits for exactly one serving leader among the running nodes.
func (g *group) leader() int {
	g.t.Helper()
	idx := -1
	require.Eventually(g.t, func() bool {
		idx = -1
		for i, c := range g.nodes {
			if c != nil && c.IsLeader() {
				if idx >= 0 {
					return false
				}
				idx = i
			}
		}
		return idx >= 0
	}, 15*time.Second, 20*time.Millisecond)
	return idx
}

func (g *group) tryCall(addr string, code codec.RequestCode, enc func(f *codec.Frame), b []byte) (*codec.Frame, error) {
	return tryCallOn(g.cl, addr, code, enc, b)
}

func tryCallOn(cl *transport.Client, addr string, code codec.RequestCode, enc func(f *codec.Frame), b []byte) (*codec.Frame, error) {
	f := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion, Body: b}
	if enc != nil {
		enc(f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return cl.Invoke(ctx, addr, f)
}

func (g *group) call(addr string, code codec.RequestCode, enc func(f *codec.Frame), b []byte) *codec.Frame {
	g.t.Helper()
	return g.callOn(g.cl, addr, code, enc, b)
}

// callOn sends one request on cl's connection to addr: a broker's own
// client, so the controller sees the broker's connection.
func (g *group) callOn(cl *transport.Client, addr string, code codec.RequestCode, enc func(f *codec.Frame), b []byte) *codec.Frame {
	g.t.Helper()
	resp, err := tryCallOn(cl, addr, code, enc, b)
	require.NoError(g.t, err)
	return resp
}

// newClient is a client of its own (its own connections), closed at the end.
func (g *group) newClient() *transport.Client {
	cl := transport.NewClient(transport.ClientConfig{Logger: quietLog()})
	g.t.Cleanup(func() { cl.Close() })
	return cl
}

func (g *group) heartbeat(addr, cluster, broker, brokerAddr string, id int64, epoch int32, maxOffset int64, timeoutMs int64) *codec.Frame {
	h := header.BrokerHeartbeatRequest{ClusterName: cluster, BrokerAddr: brokerAddr, BrokerName: broker, BrokerID: id, Epoch: epoch, MaxOffset: maxOffset, HeartbeatTimeoutMills: timeoutMs}
	return g.call(addr, codec.ReqBrokerHeartbeat, func(f *codec.Frame) {
		h.Encode(f)
		f.Set("brokerId", fmt.Sprint(id)) // also for id 0
	}, nil)
}

// registerAs runs a Java broker's registration on the group's client.
func (g *group) registerAs(addr, cluster, broker, brokerAddr string) int64 {
	g.t.Helper()
	return g.registerOn(g.cl, addr, cluster, broker, brokerAddr)
}

// registerOn runs a Java broker's registration on cl: next id, apply, register.
func (g *group) registerOn(cl *transport.Client, addr, cluster, broker, brokerAddr string) int64 {
	g.t.Helper()
	resp := g.callOn(cl, addr, codec.ReqControllerGetNextBrokerId, (&header.GetNextBrokerIdRequest{ClusterName: cluster, BrokerName: broker}).Encode, nil)
	require.Equal(g.t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var next header.GetNextBrokerIdResponse
	require.NoError(g.t, next.Decode(resp))
	resp = g.callOn(cl, addr, codec.ReqControllerApplyBrokerId, (&header.ApplyBrokerIdRequest{ClusterName: cluster, BrokerName: broker, AppliedBrokerID: next.NextBrokerID, RegisterCheckCode: brokerAddr + ";1700000000000"}).Encode, nil)
	require.Equal(g.t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = g.callOn(cl, addr, codec.ReqControllerRegisterBroker, (&header.RegisterBrokerToControllerRequest{ClusterName: cluster, BrokerName: broker, BrokerID: next.NextBrokerID, BrokerAddress: brokerAddr}).Encode, nil)
	require.Equal(g.t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	return next.NextBrokerID
}

func (g *group) replicaInfo(addr, broker string) (header.GetReplicaInfoResponse, body.SyncStateSet) {
	g.t.Helper()
	resp := g.call(addr, codec.ReqControllerGetReplicaInfo, (&header.GetReplicaInfoRequest{BrokerName: broker}).Encode, nil)
	require.Equal(g.t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var h header.GetReplicaInfoResponse
	require.NoError(g.t, h.Decode(resp))
	s, err := body.DecodeSyncStateSet(resp.Body, 100)
	require.NoError(g.t, err)
	return h, s
}

func TestGroupProtocol(t *testing.T) {
	g := startGroup(t, 3, nil)
	li := g.leader()
	leader := g.nodes[li].Addr()
	follower := g.nodes[(li+1)%3].Addr()

	// Every node answers GET_METADATA_INFO with the same leader.
	for i, c := range g.nodes {
		resp := g.call(c.Addr(), codec.ReqControllerGetMetadataInfo, nil, nil)
		require.Equal(t, int32(codec.RespSuccess), resp.Code)
		var h header.GetMetaDataResponse
		require.NoError(t, h.Decode(resp))
		require.Equal(t, "g1", h.Group)
		require.Equal(t, leader, h.ControllerLeaderAddress)
		require.Equal(t, fmt.Sprintf("n%d", li), h.ControllerLeaderID)
		require.Equal(t, i == li, h.IsLeader)
		require.Equal(t, strings.Count(h.Peers, ";"), 3)
		v, _ := resp.Get("isLeader")
		require.NotEmpty(t, v, "isLeader is always written")
	}

	// Followers refuse state requests with Java's code and remark.
	resp := g.call(follower, codec.ReqControllerGetNextBrokerId, (&header.GetNextBrokerIdRequest{ClusterName: "c", BrokerName: "b"}).Encode, nil)
	require.Equal(t, int32(codec.RespControllerNotLeader), resp.Code)
	require.Equal(t, "The controller is not in leader state", resp.Remark)

	// Unknown codes and broken input.
	resp = g.call(leader, codec.RequestCode(1007), nil, nil) // GET_BROKER_EPOCH_CACHE is a broker code
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code)
	resp = g.call(leader, codec.ReqBrokerHeartbeat, (&header.BrokerHeartbeatRequest{ClusterName: "c", BrokerName: "b", BrokerAddr: "x:1"}).Encode, nil)
	require.Equal(t, int32(codec.RespControllerInvalidRequest), resp.Code)
	require.Equal(t, "Heart beat with empty brokerId", resp.Remark)
	resp = g.call(leader, codec.ReqControllerElectMaster, nil, nil)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	resp = g.call(leader, codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: "b", MasterBrokerID: 1, MasterEpoch: 1}).Encode, []byte("{not json"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	resp = g.call(leader, codec.ReqControllerGetSyncStateData, nil, nil)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "not set any response code", resp.Remark)

	// A broker set registers, heartbeats and elects its first master.
	id1 := g.registerAs(leader, "c", "b", "127.0.0.1:30911")
	id2 := g.registerAs(leader, "c", "b", "127.0.0.1:30912")
	require.Equal(t, []int64{1, 2}, []int64{id1, id2})
	for _, c := range g.nodes {
		require.Equal(t, int32(codec.RespSuccess), g.heartbeat(c.Addr(), "c", "b", "127.0.0.1:30911", 1, 0, 100, 10000).Code)
		require.Equal(t, int32(codec.RespSuccess), g.heartbeat(c.Addr(), "c", "b", "127.0.0.1:30912", 2, 0, 100, 10000).Code)
	}
	resp = g.call(leader, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 1}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var em header.ElectMasterResponse
	require.NoError(t, em.Decode(resp))
	require.Equal(t, header.ElectMasterResponse{MasterBrokerID: 1, MasterAddress: "127.0.0.1:30911", MasterEpoch: 1, SyncStateSetEpoch: 1}, em)
	resp = g.call(leader, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 2}).Encode, nil)
	require.Equal(t, int32(codec.RespControllerMasterStillExist), resp.Code)

	// The master adds broker 2 to the sync set; a stale retry is fenced.
	alter := func(epoch int32, ids ...int64) *codec.Frame {
		return g.call(leader, codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: "b", MasterBrokerID: 1, MasterEpoch: 1}).Encode,
			body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: ids, Epoch: epoch}))
	}
	resp = alter(1, 1, 2)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = alter(1, 1)
	require.Equal(t, int32(codec.RespControllerFencedSyncStateSetEpoch), resp.Code)
	h, set := g.replicaInfo(leader, "b")
	require.Equal(t, int64(1), h.MasterBrokerID)
	require.Equal(t, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 2}, set)

	resp = g.call(leader, codec.ReqControllerGetSyncStateData, nil, body.AppendBrokerNames(nil, []string{"b"}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	info, err := body.DecodeBrokerReplicasInfo(resp.Body)
	require.NoError(t, err)
	require.Len(t, info, 1)
	require.Len(t, info[0].Info.InSync, 2)

	// Config: every node answers; black-listed keys are refused.
	resp = g.call(follower, codec.ReqGetControllerConfig, nil, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Contains(t, string(resp.Body), "controllerDLegerGroup=g1\n")
	resp = g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("configStorePath=/tmp/x\n"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, "Can not update config in black list.", resp.Remark)
	resp = g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("enableElectUncleanMaster=true\n"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.True(t, g.nodes[li].Config().EnableElectUncleanMaster)

	// The followers hold the same replicated state.
	for _, c := range g.nodes {
		require.Eventually(t, func() bool {
			var m int64
			c.state.view("b", func(bs *brokerSet) {
				if bs != nil && len(bs.SyncSet) == 2 {
					m = bs.Master
				}
			})
			return m == 1
		}, 5*time.Second, 10*time.Millisecond)
	}
}

// fakeBroker records NOTIFY_BROKER_ROLE_CHANGED requests.
type fakeBroker struct {
	srv *transport.Server
	mu  sync.Mutex
	got []header.NotifyBrokerRoleChangedRequest
}

func startFakeBroker(t *testing.T) *fakeBroker {
	fb := &fakeBroker{}
	r := transport.NewRouter()
	r.Handle(codec.ReqNotifyBrokerRoleChanged, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		var h header.NotifyBrokerRoleChangedRequest
		if h.Decode(req) == nil && req.IsOneway() {
			fb.mu.Lock()
			fb.got = append(fb.got, h)
			fb.mu.Unlock()
		}
		return nil
	})
	fb.srv = transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: quietLog()}, r)
	require.NoError(t, fb.srv.Start())
	t.Cleanup(func() { fb.srv.Close() })
	return fb
}

func (fb *fakeBroker) last() (header.NotifyBrokerRoleChangedRequest, bool) {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	if len(fb.got) == 0 {
		return header.NotifyBrokerRoleChangedRequest{}, false
	}
	return fb.got[len(fb.got)-1], true
}

// TestFailover: the master stops heartbeating; the leader elects the
// in-sync slave and notifies it; then the controller leader itself is
// closed and the two others keep serving the replicated state.
func TestFailover(t *testing.T) {
	g := startGroup(t, 3, nil)
	li := g.leader()
	leader := g.nodes[li].Addr()
	b1, b2 := startFakeBroker(t), startFakeBroker(t)
	// Each broker its own connections, as a real broker: it registers and
	// heartbeats on them, and the controller closes them when its
	// heartbeats expire.
	cl1, cl2 := g.newClient(), g.newClient()
	require.Equal(t, int64(1), g.registerOn(cl1, leader, "c", "b", b1.srv.Addr()))
	require.Equal(t, int64(2), g.registerOn(cl2, leader, "c", "b", b2.srv.Addr()))

	stopMaster := make(chan struct{})
	var wg sync.WaitGroup
	var addrs []string // fixed: nodes restart on the same address
	for _, c := range g.nodes {
		addrs = append(addrs, c.Addr())
	}
	beat := func(id int64, a string, cl *transport.Client, stop <-chan struct{}) {
		defer wg.Done()
		defer cl.Close() // a stopped broker's connections close
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 2000; i++ { // bounded: 100 s at most
			for _, addr := range addrs {
				h := header.BrokerHeartbeatRequest{ClusterName: "c", BrokerAddr: a, BrokerName: "b", BrokerID: id, Epoch: 1, MaxOffset: 1000, HeartbeatTimeoutMills: 1500}
				f := &codec.Frame{Code: int32(codec.ReqBrokerHeartbeat), Language: codec.LangJava, Version: codec.ServerVersion}
				h.Encode(f)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_ = cl.InvokeOneway(ctx, addr, f) // oneway as Java; the node may close meanwhile
				cancel()
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}
	stopAll := make(chan struct{})
	wg.Add(2)
	go beat(1, b1.srv.Addr(), cl1, stopMaster)
	go beat(2, b2.srv.Addr(), cl2, stopAll)
	t.Cleanup(func() { close(stopAll); wg.Wait() })

	require.Eventually(t, func() bool {
		return g.nodes[li].live.Alive("c", "b", 1) && g.nodes[li].live.Alive("c", "b", 2)
	}, 5*time.Second, 10*time.Millisecond)
	resp := g.callOn(cl1, leader, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 1}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { _, ok := b2.last(); return ok }, 5*time.Second, 10*time.Millisecond, "members are notified of the first election")
	require.Eventually(t, func() bool {
		resp := g.callOn(cl1, leader, codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: "b", MasterBrokerID: 1, MasterEpoch: 1}).Encode,
			body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
		return resp.Code == int32(codec.RespSuccess)
	}, 5*time.Second, 50*time.Millisecond)

	close(stopMaster)
	require.Eventually(t, func() bool {
		h, _ := g.replicaInfo(leader, "b")
		return h.MasterBrokerID == 2
	}, 10*time.Second, 50*time.Millisecond, "the slave is elected when the master goes silent")
	h, set := g.replicaInfo(leader, "b")
	require.Equal(t, b2.srv.Addr(), h.MasterAddress)
	require.Equal(t, int32(2), h.MasterEpoch)
	require.Equal(t, body.SyncStateSet{IDs: []int64{2}, Epoch: 3}, set)
	require.Eventually(t, func() bool {
		n, ok := b2.last()
		return ok && n.MasterBrokerID == 2 && n.MasterEpoch == 2 && n.MasterAddress == b2.srv.Addr()
	}, 5*time.Second, 10*time.Millisecond, "the new master is notified")

	// Kill the controller leader: a new one serves the same state.
	require.NoError(t, g.nodes[li].Close())
	nl := g.leader()
	require.NotEqual(t, li, nl)
	h, set = g.replicaInfo(g.nodes[nl].Addr(), "b")
	require.Equal(t, int64(2), h.MasterBrokerID)
	require.Equal(t, int32(3), set.Epoch)
	resp = g.callOn(cl2, g.nodes[nl].Addr(), codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 2}).Encode, nil)
	require.Equal(t, int32(codec.RespControllerMasterStillExist), resp.Code, "the new leader knows broker 2 is alive, on its heartbeat connection")

	// The closed node restarts from its store and catches up.
	g.restart(li)
	require.Eventually(t, func() bool { return g.nodes[li].state.Len() == 1 && g.nodes[li].dec.masterOf("b") == 2 }, 10*time.Second, 20*time.Millisecond)
}

// TestNewLeaderWaitsBeforeJudging: a leader that never heard the master
// does not elect during its grace period (apache/rocketmq#5712).
func TestNewLeaderWaitsBeforeJudging(t *testing.T) {
	g := startGroup(t, 1, func(c *Config) { c.ElectGrace = time.Hour })
	leader := g.nodes[g.leader()].Addr()
	g.registerAs(leader, "c", "b", "127.0.0.1:1")
	g.registerAs(leader, "c", "b", "127.0.0.1:2")
	g.heartbeat(leader, "c", "b", "127.0.0.1:1", 1, 0, 0, 60000)
	require.Equal(t, int32(codec.RespSuccess), g.call(leader, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 1}).Encode, nil).Code)

	// Restart: the new leader has an empty heartbeat table; only broker 2 beats.
	require.NoError(t, g.nodes[0].Close())
	g.restart(0)
	leader = g.nodes[g.leader()].Addr()
	require.Equal(t, int32(codec.RespSuccess), g.heartbeat(leader, "c", "b", "127.0.0.1:2", 2, 0, 0, 60000).Code)
	require.Equal(t, 1, g.nodes[0].state.Len(), "state replayed from raft.db")
	require.Equal(t, []string{"b"}, g.nodes[0].dec.needReelect(), "master 1 looks dead to this node")
	for i := 0; i < 5; i++ {
		g.nodes[0].scanInactiveMasters()
	}
	h, _ := g.replicaInfo(leader, "b")
	require.Equal(t, int64(1), h.MasterBrokerID, "no election within the grace period")
}

// TestHeartbeatFlood: distinct forged brokers fill the table up to its
// bound, then are refused; the replicated state is untouched.
func TestHeartbeatFlood(t *testing.T) {
	g := startGroup(t, 1, func(c *Config) { c.MaxLiveBrokers = 50 })
	leader := g.nodes[g.leader()].Addr()
	refused := 0
	for i := 0; i < 200; i++ {
		resp := g.heartbeat(leader, "c", fmt.Sprintf("b%d", i), "127.0.0.1:1", int64(i), 0, 0, 600000000)
		if resp.Code != int32(codec.RespSuccess) {
			require.Equal(t, int32(codec.RespControllerInvalidRequest), resp.Code)
			refused++
		}
	}
	require.Equal(t, 150, refused)
	require.Equal(t, 50, g.nodes[0].live.Len())
	require.Zero(t, g.nodes[0].state.Len())
	// The claimed timeout is capped.
	g.nodes[0].live.mu.Lock()
	for _, e := range g.nodes[0].live.table {
		require.LessOrEqual(t, e.timeout, maxHeartbeatTimeout)
	}
	g.nodes[0].live.mu.Unlock()
}

// TestRestartFromSnapshot: a snapshot taken by Raft (FileSnapshotStore) and
// the log after it bring a restarted node back to the same state.
func TestRestartFromSnapshot(t *testing.T) {
	g := startGroup(t, 1, nil)
	leader := g.nodes[g.leader()].Addr()
	g.registerAs(leader, "c", "b", "127.0.0.1:1")
	g.heartbeat(leader, "c", "b", "127.0.0.1:1", 1, 0, 0, 60000)
	require.Equal(t, int32(codec.RespSuccess), g.call(leader, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 1}).Encode, nil).Code)
	require.NoError(t, g.nodes[0].node.raft.Snapshot().Error())
	g.registerAs(leader, "c", "b2", "127.0.0.1:2") // after the snapshot: from the log
	want, err := g.nodes[0].state.marshal()
	require.NoError(t, err)

	require.NoError(t, g.nodes[0].Close())
	g.restart(0)
	g.leader()
	got, err := g.nodes[0].state.marshal()
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got))
	h, _ := g.replicaInfo(g.nodes[0].Addr(), "b")
	require.Equal(t, int64(1), h.MasterBrokerID)
}

// TestSilentMasterFoundAtItsTimeout: with scans every 20 s, a master that
// stops heartbeating (its connection left open, as a SIGSTOPped process)
// is replaced about its heartbeat timeout (400 ms) after its last beat,
// not at the next scan.
func TestSilentMasterFoundAtItsTimeout(t *testing.T) {
	g := startGroup(t, 1, func(c *Config) {
		c.ScanNotActiveBrokerInterval = 20 * time.Second
		c.ScanInactiveMasterInterval = 20 * time.Second
	})
	leader := g.nodes[g.leader()].Addr()
	b1, b2 := startFakeBroker(t), startFakeBroker(t)
	// Each broker its own client, closed only at the end: a closed
	// connection would count as the broker's death at once.
	cl1, cl2 := g.newClient(), g.newClient()
	require.Equal(t, int64(1), g.registerOn(cl1, leader, "c", "b", b1.srv.Addr()))
	require.Equal(t, int64(2), g.registerOn(cl2, leader, "c", "b", b2.srv.Addr()))
	var lastBeat1 atomic.Int64
	beater := func(id int64, a string, cl *transport.Client, stop <-chan struct{}, done chan<- struct{}) {
		defer close(done)
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 400; i++ { // bounded: 20 s
			h := header.BrokerHeartbeatRequest{ClusterName: "c", BrokerAddr: a, BrokerName: "b", BrokerID: id, Epoch: 1, MaxOffset: 1000, HeartbeatTimeoutMills: 400}
			f := &codec.Frame{Code: int32(codec.ReqBrokerHeartbeat), Language: codec.LangJava, Version: codec.ServerVersion}
			h.Encode(f)
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			if cl.InvokeOneway(ctx, leader, f) == nil && id == 1 {
				lastBeat1.Store(time.Now().UnixNano())
			}
			cancel()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}
	stop1, stop2 := make(chan struct{}), make(chan struct{})
	done1, done2 := make(chan struct{}), make(chan struct{})
	go beater(1, b1.srv.Addr(), cl1, stop1, done1)
	go beater(2, b2.srv.Addr(), cl2, stop2, done2)
	defer func() { close(stop2); <-done2 }()
	c := g.nodes[0]
	require.Eventually(t, func() bool { return c.live.Alive("c", "b", 1) && c.live.Alive("c", "b", 2) }, 5*time.Second, 5*time.Millisecond)
	resp := g.callOn(cl1, leader, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: 1}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = g.callOn(cl1, leader, codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: "b", MasterBrokerID: 1, MasterEpoch: 1}).Encode,
		body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	close(stop1) // the master goes silent; its connection stays open
	<-done1
	require.Eventually(t, func() bool {
		h, _ := g.replicaInfo(leader, "b")
		return h.MasterBrokerID == 2
	}, 5*time.Second, 5*time.Millisecond, "the silent master is replaced long before the 20 s scan")
	took := time.Since(time.Unix(0, lastBeat1.Load()))
	t.Logf("replaced %v after the master's last heartbeat (timeout 400ms)", took)
	require.GreaterOrEqual(t, took, 400*time.Millisecond, "never before its timeout")
}

func TestUntilNextExpiry(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newHeartbeats(func() time.Time { return now }, 10)
	require.Equal(t, time.Second, h.untilNextExpiry(time.Second), "empty: the scan interval")
	require.NoError(t, h.beat(brokerKey{"c", "b", 1}, LiveInfo{}, 300*time.Millisecond, nil))
	require.NoError(t, h.beat(brokerKey{"c", "b", 2}, LiveInfo{}, 5*time.Second, nil))
	require.Equal(t, 301*time.Millisecond, h.untilNextExpiry(time.Second))
	now = now.Add(301 * time.Millisecond)
	gone, _ := h.expire()
	require.Equal(t, []brokerKey{{"c", "b", 1}}, gone)
	require.Equal(t, time.Second, h.untilNextExpiry(time.Second), "the other is further than the interval")
	now = now.Add(4500 * time.Millisecond)
	require.Equal(t, 200*time.Millisecond, h.untilNextExpiry(time.Second))
}

// TestUpdateControllerConfigPersisted: UPDATE_CONTROLLER_CONFIG writes every
// key to configStorePath as Java's Configuration.persist does, keeping the
// previous file as .bak.
func TestUpdateControllerConfigPersisted(t *testing.T) {
	path := filepath.Join(t.TempDir(), "controller.properties")
	g := startGroup(t, 1, func(c *Config) { c.ConfigStorePath = path })
	leader := g.nodes[g.leader()].Addr()
	resp := g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("enableElectUncleanMaster=true\n"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	p, err := javaprops.Parse(mustRead(t, path))
	require.NoError(t, err)
	v, ok := p.Get("enableElectUncleanMaster")
	require.True(t, ok)
	require.Equal(t, "true", v)
	v, _ = p.Get("controllerDLegerGroup")
	require.Equal(t, "g1", v, "every key, not only the updated one")

	resp = g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("electMasterMaxRetryCount=5\n"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	p, err = javaprops.Parse(mustRead(t, path))
	require.NoError(t, err)
	v, _ = p.Get("electMasterMaxRetryCount")
	require.Equal(t, "5", v)
	bak, err := javaprops.Parse(mustRead(t, path+".bak"))
	require.NoError(t, err)
	v, _ = bak.Get("electMasterMaxRetryCount")
	require.NotEqual(t, "5", v, "the previous file is the backup")
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
