package broker

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/controller"
)

// Issue #20's takeover against one real controller-mode broker: a client
// that is not the broker reads the set (GET_REPLICA_INFO), registers a
// fake broker of its own, then sends ALTER_SYNC_STATE_SET in the master's
// name and epochs, an admin ELECT_MASTER of its fake broker and
// CLEAN_BROKER_DATA of the live master. The controller refuses all of it:
// the set keeps its master and epochs, and the broker stays master and
// takes sends.
func TestControllerModeStrangerCannotSteer(t *testing.T) {
	ctrl := startTestController(t)
	ns := startNamesrv(t)
	tb := startBroker(t, controllerModeConfig(ctrl, ns))
	require.Eventually(t, func() bool { return !tb.IsSlave() && !tb.rm.fenced.Load() }, 20*time.Second, 10*time.Millisecond)
	sendN(t, tb, "STEER", 0, 3)
	cluster, name := tb.cfg.BrokerClusterName, tb.cfg.BrokerName

	cl := transport.NewClient(transport.ClientConfig{Logger: testLogger()})
	t.Cleanup(func() { cl.Close() })
	call := ctrlCaller(t, cl, ctrl)
	replicaInfo := func() (header.GetReplicaInfoResponse, body.SyncStateSet) {
		t.Helper()
		resp := call(codec.ReqControllerGetReplicaInfo, (&header.GetReplicaInfoRequest{BrokerName: name}).Encode, nil)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		var h header.GetReplicaInfoResponse
		require.NoError(t, h.Decode(resp))
		s, err := body.DecodeSyncStateSet(resp.Body, 64)
		require.NoError(t, err)
		return h, s
	}
	h0, set0 := replicaInfo()
	require.Equal(t, tb.rm.ID(), h0.MasterBrokerID)
	require.Equal(t, tb.BrokerAddr(), h0.MasterAddress)
	master := h0.MasterBrokerID

	// The stranger's own fake broker, registered and heartbeating.
	resp := call(codec.ReqControllerGetNextBrokerId, (&header.GetNextBrokerIdRequest{ClusterName: cluster, BrokerName: name}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var next header.GetNextBrokerIdResponse
	require.NoError(t, next.Decode(resp))
	fake := next.NextBrokerID
	resp = call(codec.ReqControllerApplyBrokerId, (&header.ApplyBrokerIdRequest{ClusterName: cluster, BrokerName: name, AppliedBrokerID: fake, RegisterCheckCode: "127.0.0.1:1;1"}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = call(codec.ReqControllerRegisterBroker, (&header.RegisterBrokerToControllerRequest{ClusterName: cluster, BrokerName: name, BrokerID: fake, BrokerAddress: "127.0.0.1:1"}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = call(codec.ReqBrokerHeartbeat, (&header.BrokerHeartbeatRequest{ClusterName: cluster, BrokerAddr: "127.0.0.1:1", BrokerName: name, BrokerID: fake,
		Epoch: 99, MaxOffset: 1 << 40, HeartbeatTimeoutMills: 60000}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	// The takeover.
	resp = call(codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: name, MasterBrokerID: master, MasterEpoch: h0.MasterEpoch}).Encode,
		body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{master, fake}, Epoch: set0.Epoch}))
	require.Equal(t, int32(codec.RespControllerInvalidMaster), resp.Code, resp.Remark)
	resp = call(codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: cluster, BrokerName: name, BrokerID: fake, DesignateElect: true}).Encode, nil)
	require.Equal(t, int32(codec.RespControllerElectMasterFailed), resp.Code, resp.Remark)
	resp = call(codec.ReqCleanBrokerData, (&header.CleanControllerBrokerDataRequest{ClusterName: cluster, BrokerName: name,
		BrokerControllerIdsToClean: strconv.FormatInt(master, 10), IsCleanLivingBroker: true}).Encode, nil)
	require.Equal(t, int32(codec.RespControllerInvalidCleanBrokerMetadata), resp.Code, resp.Remark)

	h1, set1 := replicaInfo()
	require.Equal(t, h0, h1, "the set keeps its master and master epoch")
	require.Equal(t, set0, set1, "and its SyncStateSet")

	// The broker, after a sync round of its own, is still the master.
	tb.rm.syncReplicaInfo()
	require.False(t, tb.IsSlave())
	require.False(t, tb.rm.fenced.Load())
	require.Equal(t, h0.MasterEpoch, tb.rm.MasterEpoch())
	sendN(t, tb, "STEER", 10, 3)
}

// The same takeover with authentication on at the controller: the broker
// signs its controller calls with its inner credentials and keeps serving
// as master; an unsigned stranger, or one with a guessed secret, is
// refused every controller code, reads included.
func TestControllerModeStrangerRefusedWithAuth(t *testing.T) {
	const creds = `{"accessKey":"inner","secretKey":"inner-secret"}`
	ctrl := startTestController(t, func(c *controller.Config) {
		c.Auth.AuthenticationEnabled = true
		c.Auth.InnerClientAuthenticationCredentials = creds
	})
	ns := startNamesrv(t)
	cm := controllerModeConfig(ctrl, ns)
	tb := startBroker(t, func(c *Config) { cm(c); c.InnerClientAuthenticationCredentials = creds })
	require.Eventually(t, func() bool { return !tb.IsSlave() && !tb.rm.fenced.Load() }, 20*time.Second, 10*time.Millisecond)
	sendN(t, tb, "STEERA", 0, 3)
	cluster, name := tb.cfg.BrokerClusterName, tb.cfg.BrokerName
	master, epoch := tb.rm.ID(), tb.rm.MasterEpoch()

	for _, who := range []struct {
		name string
		sign func(*codec.Frame)
	}{
		{"unsigned", nil},
		{"guessed secret", auth.Credentials{AccessKey: "inner", SecretKey: "guess"}.Signer()},
		{"unknown user", auth.Credentials{AccessKey: "mallory", SecretKey: "mallory-secret"}.Signer()},
	} {
		cl := transport.NewClient(transport.ClientConfig{Logger: testLogger(), BeforeRequest: who.sign})
		call := ctrlCaller(t, cl, ctrl)
		for _, resp := range []*codec.Frame{
			call(codec.ReqControllerGetReplicaInfo, (&header.GetReplicaInfoRequest{BrokerName: name}).Encode, nil),
			call(codec.ReqControllerRegisterBroker, (&header.RegisterBrokerToControllerRequest{ClusterName: cluster, BrokerName: name, BrokerID: master + 1, BrokerAddress: "127.0.0.1:1"}).Encode, nil),
			call(codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: name, MasterBrokerID: master, MasterEpoch: epoch}).Encode,
				body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{master, master + 1}, Epoch: 1})),
			call(codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: cluster, BrokerName: name, BrokerID: master + 1, DesignateElect: true}).Encode, nil),
			call(codec.ReqCleanBrokerData, (&header.CleanControllerBrokerDataRequest{ClusterName: cluster, BrokerName: name,
				BrokerControllerIdsToClean: strconv.FormatInt(master, 10), IsCleanLivingBroker: true}).Encode, nil),
			call(codec.ReqBrokerHeartbeat, (&header.BrokerHeartbeatRequest{ClusterName: cluster, BrokerAddr: "127.0.0.1:1", BrokerName: name, BrokerID: master,
				Epoch: 99, MaxOffset: 1 << 40, HeartbeatTimeoutMills: 60000}).Encode, nil),
		} {
			require.Equal(t, int32(codec.RespNoPermission), resp.Code, "%s: %s", who.name, resp.Remark)
		}
		cl.Close()
	}

	// The broker's own signed calls keep working: a sync round, and it is
	// still the master of its epoch, taking sends.
	tb.rm.syncReplicaInfo()
	require.False(t, tb.IsSlave())
	require.False(t, tb.rm.fenced.Load())
	require.Equal(t, master, tb.rm.ID())
	require.Equal(t, epoch, tb.rm.MasterEpoch())
	sendN(t, tb, "STEERA", 10, 3)
}

// ctrlCaller returns a function sending one controller request on cl:
// code, the header encoder (nil: none) and the body.
func ctrlCaller(t *testing.T, cl *transport.Client, ctrl string) func(codec.RequestCode, func(*codec.Frame), []byte) *codec.Frame {
	return func(code codec.RequestCode, enc func(*codec.Frame), b []byte) *codec.Frame {
		t.Helper()
		f := newRequest(code)
		f.Body = b
		if enc != nil {
			enc(f)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := cl.Invoke(ctx, ctrl, f)
		require.NoError(t, err)
		return resp
	}
}
