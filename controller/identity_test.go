package controller

import (
	"context"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// beater heartbeats one fake broker on its own client until stopped, then
// closes the client (a stopped broker's connections close).
type beater struct {
	cl       *transport.Client
	stop     chan struct{}
	stopOnce sync.Once
	done     chan struct{}
}

func (g *group) startBeating(cl *transport.Client, id int64, brokerAddr string) *beater {
	b := &beater{cl: cl, stop: make(chan struct{}), done: make(chan struct{})}
	var addrs []string
	for _, c := range g.nodes {
		addrs = append(addrs, c.Addr())
	}
	go func() {
		defer close(b.done)
		defer cl.Close()
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for i := 0; i < 1200; i++ { // bounded: 60 s
			for _, addr := range addrs {
				h := header.BrokerHeartbeatRequest{ClusterName: "c", BrokerAddr: brokerAddr, BrokerName: "b", BrokerID: id, Epoch: 1, MaxOffset: 1000, HeartbeatTimeoutMills: 1500}
				f := &codec.Frame{Code: int32(codec.ReqBrokerHeartbeat), Language: codec.LangJava, Version: codec.ServerVersion}
				h.Encode(f)
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				_ = cl.InvokeOneway(ctx, addr, f) // oneway as Java
				cancel()
			}
			select {
			case <-b.stop:
				return
			case <-tick.C:
			}
		}
	}()
	g.t.Cleanup(b.end)
	return b
}

// end stops the broker and waits until its connections are closed.
func (b *beater) end() {
	b.stopOnce.Do(func() { close(b.stop) })
	<-b.done
}

func heartbeatReq(id int64, brokerAddr string) func(*codec.Frame) {
	return func(f *codec.Frame) {
		(&header.BrokerHeartbeatRequest{ClusterName: "c", BrokerAddr: brokerAddr, BrokerName: "b", BrokerID: id, Epoch: 9, MaxOffset: 1 << 40, HeartbeatTimeoutMills: 600000}).Encode(f)
		f.Set("brokerId", fmt.Sprint(id))
	}
}

func alterReq(master int64, epoch int32) func(*codec.Frame) {
	return (&header.AlterSyncStateSetRequest{BrokerName: "b", MasterBrokerID: master, MasterEpoch: epoch}).Encode
}

func electReq(id int64, designate bool) func(*codec.Frame) {
	return (&header.ElectMasterRequest{ClusterName: "c", BrokerName: "b", BrokerID: id, DesignateElect: designate}).Encode
}

func cleanReq(ids string, living bool) func(*codec.Frame) {
	return (&header.CleanControllerBrokerDataRequest{ClusterName: "c", BrokerName: "b", BrokerControllerIdsToClean: ids, IsCleanLivingBroker: living}).Encode
}

// TestStrangerCannotSteer: a client that is none of the brokers reads the
// set (GET_REPLICA_INFO) and tries the takeover issue #20 found: an
// ALTER_SYNC_STATE_SET claiming the master's id and epochs, an admin
// ELECT_MASTER of its own fake broker, heartbeats and a registration in
// the real brokers' names, CLEAN_BROKER_DATA of the live master. Every one
// is refused and changes nothing; the real master's own ALTER still
// works; after a failover the controller notifies the real brokers only,
// never an address a stranger registered.
func TestStrangerCannotSteer(t *testing.T) {
	g := startGroup(t, 1, nil)
	leader := g.nodes[g.leader()].Addr()
	b1, b2, trap := startFakeBroker(t), startFakeBroker(t), startFakeBroker(t)
	cl1, cl2, stranger := g.newClient(), g.newClient(), g.newClient()
	require.Equal(t, int64(1), g.registerOn(cl1, leader, "c", "b", b1.srv.Addr()))
	require.Equal(t, int64(2), g.registerOn(cl2, leader, "c", "b", b2.srv.Addr()))
	m := g.startBeating(cl1, 1, b1.srv.Addr())
	g.startBeating(cl2, 2, b2.srv.Addr())
	c := g.nodes[0]
	require.Eventually(t, func() bool { return c.live.Alive("c", "b", 1) && c.live.Alive("c", "b", 2) }, 5*time.Second, 10*time.Millisecond)
	resp := g.callOn(cl1, leader, codec.ReqControllerElectMaster, electReq(1, false), nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = g.callOn(cl1, leader, codec.ReqControllerAlterSyncStateSet, alterReq(1, 1), body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	// The stranger: a fake broker registered only (3, at the trap's
	// address) and one registered and heartbeating (4).
	call := func(code codec.RequestCode, enc func(*codec.Frame), b []byte) *codec.Frame {
		return g.callOn(stranger, leader, code, enc, b)
	}
	require.Equal(t, int64(3), g.registerOn(stranger, leader, "c", "b", trap.srv.Addr()))
	require.Equal(t, int64(4), g.registerOn(stranger, leader, "c", "b", "127.0.0.1:1"))
	require.Equal(t, int32(codec.RespSuccess), call(codec.ReqBrokerHeartbeat, heartbeatReq(4, "127.0.0.1:1"), nil).Code)
	h, set := g.replicaInfo(leader, "b")
	require.Equal(t, int64(1), h.MasterBrokerID)
	want, err := c.state.marshal()
	require.NoError(t, err)

	for _, ids := range [][]int64{{1, 2, 4}, {1, 4}, {1}} {
		resp = call(codec.ReqControllerAlterSyncStateSet, alterReq(1, h.MasterEpoch), body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: ids, Epoch: set.Epoch}))
		require.Equal(t, int32(codec.RespControllerInvalidMaster), resp.Code, "alter %v: %s", ids, resp.Remark)
	}
	for _, id := range []int64{1, 2} {
		resp = call(codec.ReqBrokerHeartbeat, heartbeatReq(id, "127.0.0.1:1"), nil)
		require.Equal(t, int32(codec.RespControllerInvalidRequest), resp.Code, "heartbeat as %d", id)
		resp = call(codec.ReqControllerRegisterBroker, (&header.RegisterBrokerToControllerRequest{ClusterName: "c", BrokerName: "b", BrokerID: id, BrokerAddress: trap.srv.Addr()}).Encode, nil)
		require.Equal(t, int32(codec.RespControllerInvalidRequest), resp.Code, "register as %d", id)
	}
	resp = call(codec.ReqControllerElectMaster, electReq(4, true), nil)
	require.Equal(t, int32(codec.RespControllerElectMasterFailed), resp.Code, resp.Remark)
	resp = call(codec.ReqControllerElectMaster, electReq(2, true), nil)
	require.Equal(t, int32(codec.RespControllerMasterStillExist), resp.Code, resp.Remark)
	resp = call(codec.ReqControllerElectMaster, electReq(2, false), nil)
	require.Equal(t, int32(codec.RespControllerInvalidRequest), resp.Code, resp.Remark)
	resp = call(codec.ReqControllerElectMaster, electReq(-1, false), nil)
	require.Equal(t, int32(codec.RespControllerInvalidRequest), resp.Code, resp.Remark)
	for _, tc := range []struct {
		ids    string
		living bool
	}{{"1", true}, {"1", false}, {"1;2", true}, {"", true}} {
		resp = call(codec.ReqCleanBrokerData, cleanReq(tc.ids, tc.living), nil)
		require.Equal(t, int32(codec.RespControllerInvalidCleanBrokerMetadata), resp.Code, "clean %q: %s", tc.ids, resp.Remark)
	}
	got, err := c.state.marshal()
	require.NoError(t, err)
	require.JSONEq(t, string(want), string(got), "the refused requests changed the state")
	info, ok := c.live.Info("c", "b", 1)
	require.True(t, ok)
	require.Equal(t, b1.srv.Addr(), info.Addr, "the master's heartbeat record is its own")
	require.Equal(t, int32(1), info.Epoch)

	// The real master shrinks and expands its set as before.
	resp = g.callOn(cl1, leader, codec.ReqControllerAlterSyncStateSet, alterReq(1, 1), body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1}, Epoch: 2}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = g.callOn(cl1, leader, codec.ReqControllerAlterSyncStateSet, alterReq(1, 1), body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 3}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	// Failover: the in-sync real slave, notified at its own address.
	m.end()
	require.Eventually(t, func() bool { h, _ := g.replicaInfo(leader, "b"); return h.MasterBrokerID == 2 }, 10*time.Second, 20*time.Millisecond)
	h, _ = g.replicaInfo(leader, "b")
	require.Equal(t, b2.srv.Addr(), h.MasterAddress)
	require.Eventually(t, func() bool { n, ok := b2.last(); return ok && n.MasterBrokerID == 2 }, 5*time.Second, 10*time.Millisecond)
	_, trapped := trap.last()
	require.False(t, trapped, "the controller dialled an address only a stranger registered")
}

// TestAdminElectWhenMasterGone: mqadmin electMaster's legitimate use. The
// master dies while its in-sync slave is away, so the controller has no
// candidate (master lost); the slave comes back and the operator elects
// it from an admin connection. Cleaning the dead old master's data works;
// cleaning the live new master does not.
func TestAdminElectWhenMasterGone(t *testing.T) {
	g := startGroup(t, 1, nil)
	leader := g.nodes[g.leader()].Addr()
	c := g.nodes[0]
	b1, b2 := startFakeBroker(t), startFakeBroker(t)
	cl1, cl2 := g.newClient(), g.newClient()
	require.Equal(t, int64(1), g.registerOn(cl1, leader, "c", "b", b1.srv.Addr()))
	require.Equal(t, int64(2), g.registerOn(cl2, leader, "c", "b", b2.srv.Addr()))
	m, s := g.startBeating(cl1, 1, b1.srv.Addr()), g.startBeating(cl2, 2, b2.srv.Addr())
	require.Eventually(t, func() bool { return c.live.Alive("c", "b", 1) && c.live.Alive("c", "b", 2) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(codec.RespSuccess), g.callOn(cl1, leader, codec.ReqControllerElectMaster, electReq(1, false), nil).Code)
	resp := g.callOn(cl1, leader, codec.ReqControllerAlterSyncStateSet, alterReq(1, 1), body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	s.end()
	require.Eventually(t, func() bool { return !c.live.Alive("c", "b", 2) }, 5*time.Second, 10*time.Millisecond)
	m.end()
	require.Eventually(t, func() bool {
		h, _ := g.replicaInfo(leader, "b")
		return h.MasterBrokerID == 0 && h.MasterEpoch == 2
	}, 10*time.Second, 20*time.Millisecond, "master lost: nobody to elect")

	// The slave restarts: new connection, registration, heartbeats.
	cl2b := g.newClient()
	resp = g.callOn(cl2b, leader, codec.ReqControllerRegisterBroker, (&header.RegisterBrokerToControllerRequest{ClusterName: "c", BrokerName: "b", BrokerID: 2, BrokerAddress: b2.srv.Addr()}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	g.startBeating(cl2b, 2, b2.srv.Addr())
	require.Eventually(t, func() bool { return c.live.Alive("c", "b", 2) }, 5*time.Second, 10*time.Millisecond)

	// The operator, from its own connection.
	resp = g.call(leader, codec.ReqControllerElectMaster, electReq(1, true), nil)
	require.Equal(t, int32(codec.RespControllerElectMasterFailed), resp.Code, "the dead old master: %s", resp.Remark)
	resp = g.call(leader, codec.ReqControllerElectMaster, electReq(2, true), nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var em header.ElectMasterResponse
	require.NoError(t, em.Decode(resp))
	require.Equal(t, header.ElectMasterResponse{MasterBrokerID: 2, MasterAddress: b2.srv.Addr(), MasterEpoch: 3, SyncStateSetEpoch: 3}, em)
	require.Eventually(t, func() bool { n, ok := b2.last(); return ok && n.MasterEpoch == 3 }, 5*time.Second, 10*time.Millisecond)

	resp = g.call(leader, codec.ReqCleanBrokerData, cleanReq("2", true), nil)
	require.Equal(t, int32(codec.RespControllerInvalidCleanBrokerMetadata), resp.Code, resp.Remark)
	resp = g.call(leader, codec.ReqCleanBrokerData, cleanReq("1", false), nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	c.state.view("b", func(bs *brokerSet) {
		require.NotNil(t, bs)
		require.Equal(t, []int64{2}, bs.ids())
		require.Equal(t, int64(2), bs.Master)
	})
}

// TestAllowAdminOnLiveBrokersIsLocal: the key that lifts the live-broker
// rule is read from the local configuration; UPDATE_CONTROLLER_CONFIG
// refuses it.
func TestAllowAdminOnLiveBrokersIsLocal(t *testing.T) {
	g := startGroup(t, 1, nil)
	leader := g.nodes[g.leader()].Addr()
	resp := g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("controllerAllowAdminOnLiveBrokers=true\n"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, "Can not update config in black list.", resp.Remark)
	require.False(t, g.nodes[0].Config().AllowAdminOnLiveBrokers)

	cfg := Default()
	p, err := javaprops.Parse([]byte("controllerAllowAdminOnLiveBrokers=true\n"))
	require.NoError(t, err)
	unknown, err := cfg.Apply(p)
	require.NoError(t, err)
	require.Empty(t, unknown)
	require.True(t, cfg.AllowAdminOnLiveBrokers)
}

// TestIdentityTable: a broker's identity is the connection it registered
// or heartbeats on, until that claim lapses.
func TestIdentityTable(t *testing.T) {
	now := time.Unix(1000, 0)
	h := newHeartbeats(func() time.Time { return now }, 10)
	a, b := &transport.Conn{}, &transport.Conn{}
	k1, k2 := brokerKey{"c", "b", 1}, brokerKey{"c", "b", 2}
	require.NoError(t, h.beat(k1, LiveInfo{Addr: "x:1", Epoch: 1}, time.Second, a))
	require.ErrorIs(t, h.beat(k1, LiveInfo{Addr: "evil:1", Epoch: 9}, time.Second, b), errHeldElsewhere)
	require.ErrorIs(t, h.Claim("c", "b", 1, b), errHeldElsewhere)
	info, _ := h.Info("c", "b", 1)
	require.Equal(t, LiveInfo{Addr: "x:1", Epoch: 1}, info)
	require.True(t, h.Holds("c", "b", 1, a))
	require.False(t, h.Holds("c", "b", 1, b))

	// A registration claims without making the broker alive.
	require.NoError(t, h.Claim("c", "b", 2, a))
	require.True(t, h.Holds("c", "b", 2, a))
	require.False(t, h.Alive("c", "b", 2))
	_, ok := h.Info("c", "b", 2)
	require.False(t, ok)
	require.ErrorIs(t, h.beat(k2, LiveInfo{}, time.Second, b), errHeldElsewhere)
	require.NoError(t, h.beat(k2, LiveInfo{Epoch: -1, MaxOffset: -1}, time.Second, a))
	require.True(t, h.Alive("c", "b", 2))
	info, _ = h.Info("c", "b", 2)
	require.Equal(t, int32(-1), info.Epoch, "the first heartbeat is taken whole")

	// Silent past its timeout: the claim lapses and another connection may take it.
	now = now.Add(1001 * time.Millisecond)
	require.False(t, h.Holds("c", "b", 1, a))
	require.NoError(t, h.beat(k1, LiveInfo{Addr: "y:1"}, time.Second, b))
	require.True(t, h.Holds("c", "b", 1, b))
	require.Equal(t, []brokerKey{k2}, h.connClosed(a))
	require.Equal(t, 1, h.Len())

	// A registration never followed by a heartbeat leaves quietly.
	require.NoError(t, h.Claim("c", "b", 3, a))
	now = now.Add(defaultHeartbeatTimeout + time.Millisecond)
	gone, conns := h.expire()
	require.Equal(t, []brokerKey{k1}, gone)
	require.Equal(t, []*transport.Conn{b}, conns)
	require.Zero(t, h.Len())
}

// A heartbeat handled after its connection closed (queued requests of a
// closed connection still run) binds no identity and keeps no broker
// alive: a killed master's last heartbeat made it look alive for its whole
// timeout, and the failover suite found no master.
func TestHeartbeatAfterCloseKeepsNoGhost(t *testing.T) {
	g := startGroup(t, 1, nil)
	c := g.nodes[g.leader()]
	const conns = 100
	for i := range conns {
		nc, err := net.Dial("tcp", c.Addr())
		require.NoError(t, err)
		f := &codec.Frame{Code: int32(codec.ReqBrokerHeartbeat), Language: codec.LangJava, Version: codec.ServerVersion, Opaque: 1}
		heartbeatReq(int64(i+1), "127.0.0.1:1")(f)
		_, err = nc.Write(f.AppendTo(nil))
		require.NoError(t, err)
		require.NoError(t, nc.Close()) // usually before the heartbeat's turn
	}
	alive := func() (n int) {
		for i := range conns {
			if c.live.Alive("c", "b", int64(i+1)) {
				n++
			}
		}
		return n
	}
	// The heartbeats ask for a 600 s timeout: a ghost would stay.
	require.Eventually(t, func() bool { return alive() == 0 }, 5*time.Second, 10*time.Millisecond, "alive: %d", alive())
}
