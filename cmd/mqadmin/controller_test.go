package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/controller/controllertest"
)

// startController starts one controller node on loopback (its Raft
// transport on the next port) and waits until it leads. Its local config
// allows admin operations on live brokers (controllerAllowAdminOnLiveBrokers),
// so electMaster and cleanBrokerMetadata -l act as in Java.
func startController(t *testing.T) *controller.Controller {
	t.Helper()
	return controllertest.StartSingle(t, nil, func(c *controller.Config) { c.AllowAdminOnLiveBrokers = true })
}

// ctrlCall sends one request to the controller as a broker would. The
// connection stays open: the controller forgets a broker whose heartbeat
// connection closes.
func ctrlCall(t *testing.T, cl *transport.Client, addr string, code codec.RequestCode, enc func(*codec.Frame), b []byte) *codec.Frame {
	t.Helper()
	f := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion, Body: b}
	if enc != nil {
		enc(f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, addr, f)
	require.NoError(t, err)
	return resp
}

// brokerSet registers brokers 1 and 2 of "broker-a" in cluster "C",
// makes 1 master and puts both in the SyncStateSet.
func brokerSet(t *testing.T, addr string) {
	t.Helper()
	cl := transport.NewClient(transport.ClientConfig{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { cl.Close() })
	for i, ba := range []string{"127.0.0.1:30911", "127.0.0.1:30912"} {
		id := int64(i + 1)
		resp := ctrlCall(t, cl, addr, codec.ReqControllerApplyBrokerId, (&header.ApplyBrokerIdRequest{ClusterName: "C", BrokerName: "broker-a", AppliedBrokerID: id, RegisterCheckCode: ba + ";1700000000000"}).Encode, nil)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		resp = ctrlCall(t, cl, addr, codec.ReqControllerRegisterBroker, (&header.RegisterBrokerToControllerRequest{ClusterName: "C", BrokerName: "broker-a", BrokerID: id, BrokerAddress: ba}).Encode, nil)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		hb := header.BrokerHeartbeatRequest{ClusterName: "C", BrokerAddr: ba, BrokerName: "broker-a", BrokerID: id, MaxOffset: 100, HeartbeatTimeoutMills: 60000}
		resp = ctrlCall(t, cl, addr, codec.ReqBrokerHeartbeat, hb.Encode, nil)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	resp := ctrlCall(t, cl, addr, codec.ReqControllerElectMaster, (&header.ElectMasterRequest{ClusterName: "C", BrokerName: "broker-a", BrokerID: 1}).Encode, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = ctrlCall(t, cl, addr, codec.ReqControllerAlterSyncStateSet, (&header.AlterSyncStateSetRequest{BrokerName: "broker-a", MasterBrokerID: 1, MasterEpoch: 1}).Encode,
		body.AppendSyncStateSet(nil, body.SyncStateSet{IDs: []int64{1, 2}, Epoch: 1}))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

func TestControllerCommands(t *testing.T) {
	c := startController(t)
	addr := c.Addr()
	brokerSet(t, addr)
	ns := startHABroker(t, body.HARuntimeInfo{}) // name server: cluster C = broker-a

	out, err := runAdmin(t, "getControllerMetaData", "-a", addr)
	require.NoError(t, err)
	require.Equal(t, "\n#ControllerGroup\tg1\n#ControllerLeaderId\tn0\n#ControllerLeaderAddress\t"+addr+"\n#Peer:\tn0:"+addr+"\n", out)

	inSync := "\nInSyncReplica:\tReplicaIdentity{brokerName='broker-a', brokerId=1, brokerAddress='127.0.0.1:30911', alive=true}\n" +
		"\nInSyncReplica:\tReplicaIdentity{brokerName='broker-a', brokerId=2, brokerAddress='127.0.0.1:30912', alive=true}\n"
	want := "\n#brokerName\tbroker-a\n#MasterBrokerId\t1\n#MasterAddr\t127.0.0.1:30911\n#MasterEpoch\t1\n#SyncStateSetEpoch\t2\n#SyncStateSetNums\t2\n" + inSync
	out, err = runAdmin(t, "getSyncStateSet", "-a", addr, "-b", "broker-a")
	require.NoError(t, err)
	require.Equal(t, want, out)
	out, err = runAdmin(t, "getSyncStateSet", "-a", addr+";127.0.0.1:1", "-n", ns, "-c", "C")
	require.NoError(t, err)
	require.Equal(t, want, out)
	out, err = runAdmin(t, "getSyncStateSet", "-a", addr, "-b", "nosuch") // as Java: unknown sets are left out
	require.NoError(t, err)
	require.Empty(t, out)
	_, err = runAdmin(t, "getSyncStateSet", "-a", addr, "-n", ns, "-c", "nope")
	require.ErrorContains(t, err, "Make sure the specified clusterName exists")
	_, err = runAdmin(t, "getSyncStateSet", "-b", "broker-a")
	require.ErrorContains(t, err, "missing required option: -a")

	// electMaster designates broker 2: epoch 2, no #Broker lines (as Java).
	out, err = runAdmin(t, "electMaster", "-a", addr, "-c", "C", "-bn", "broker-a", "-b", "2")
	require.NoError(t, err)
	require.Equal(t, "\n#ClusterName\tC\n#BrokerName\tbroker-a\n#BrokerMasterAddr\t127.0.0.1:30912\n#MasterEpoch\t2\n#SyncStateSetEpoch\t3\n", out)
	out, err = runAdmin(t, "electMaster", "-a", addr, "-c", "C", "-bn", "nosuch", "-b", "1")
	require.Error(t, err)
	require.Empty(t, out)
	require.Contains(t, err.Error(), fmt.Sprintf("CODE: %d  DESC: Broker hasn't been registered", codec.RespControllerBrokerNeedToBeRegistered))
	_, err = runAdmin(t, "electMaster", "-a", addr, "-c", "C", "-bn", "broker-a", "-b", "x")
	require.ErrorContains(t, err, `-b "x"`)

	// Config: read, update, refuse a black-listed key with Java's remark.
	out, err = runAdmin(t, "getControllerConfig", "-a", addr)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "============"+addr+"============\n"), out)
	require.Contains(t, out, fmt.Sprintf("%-50s=  %s\n", "controllerDLegerGroup", "g1"))
	out, err = runAdmin(t, "updateControllerConfig", "-a", addr, "-k", "enableElectUncleanMaster", "-v", "true")
	require.NoError(t, err)
	require.Equal(t, "update controller config success!["+addr+"]\nenableElectUncleanMaster : true\n", out)
	require.True(t, c.Config().EnableElectUncleanMaster)
	_, err = runAdmin(t, "updateControllerConfig", "-a", addr, "-k", "configStorePath", "-v", "/tmp/x")
	require.ErrorContains(t, err, fmt.Sprintf("CODE: %d  DESC: Can not update config in black list.", codec.RespNoPermission))

	// cleanBrokerMetadata: Java's option check, then the controller's answer.
	_, err = runAdmin(t, "cleanBrokerMetadata", "-a", addr, "-bn", "broker-a")
	require.EqualError(t, err, "cleanLivingBroker option is false, clusterName option can not be empty.")
	_, err = runAdmin(t, "cleanBrokerMetadata", "-a", addr, "-bn", "nosuch", "-c", "C")
	require.ErrorContains(t, err, fmt.Sprintf("CODE: %d  DESC: Broker nosuch is not existed,clean broker data failure.", codec.RespControllerInvalidCleanBrokerMetadata))
	out, err = runAdmin(t, "cleanBrokerMetadata", "-a", addr, "-bn", "broker-a", "-c", "C", "-b", "1;2", "-l")
	require.NoError(t, err)
	require.Equal(t, "clear broker broker-a metadata from controller success! \n", out)
	out, err = runAdmin(t, "getSyncStateSet", "-a", addr, "-b", "broker-a")
	require.NoError(t, err)
	require.NotContains(t, out, "ReplicaIdentity")
}

// startEpochBroker serves GET_BROKER_EPOCH_CACHE, and cluster info naming
// itself as the only broker of broker-a in cluster C.
func startEpochBroker(t *testing.T) string {
	return startSelfNamedBroker(t, codec.ReqGetBrokerEpochCache, func() []byte {
		return []byte(`{"brokerId":1,"brokerName":"broker-a","clusterName":"C","epochList":[` +
			`{"endOffset":500,"epoch":1,"startOffset":0},{"endOffset":-1,"epoch":2,"startOffset":500}],"maxOffset":900}`)
	})
}

func TestGetBrokerEpoch(t *testing.T) {
	addr := startEpochBroker(t)
	want := "\n#clusterName\tC\n#brokerName\tbroker-a\n#brokerAddr\t" + addr + "\n#brokerId\t1" +
		"\n#Epoch: EpochEntry{epoch=1, startOffset=0, endOffset=500}" +
		"\n#Epoch: EpochEntry{epoch=2, startOffset=500, endOffset=900}\n"
	out, err := runAdmin(t, "getBrokerEpoch", "-n", addr, "-b", "broker-a")
	require.NoError(t, err)
	require.Equal(t, want, out)
	out, err = runAdmin(t, "getBrokerEpoch", "-n", addr, "-c", "C")
	require.NoError(t, err)
	require.Equal(t, want, out)

	// Unknown names print nothing; an unknown cluster prints Java's error.
	out, err = runAdmin(t, "getBrokerEpoch", "-n", addr, "-b", "nosuch")
	require.NoError(t, err)
	require.Empty(t, out)
	out, err = runAdmin(t, "getBrokerEpoch", "-n", addr, "-c", "nosuch")
	require.NoError(t, err)
	require.Equal(t, "[error] Make sure the specified clusterName exists or the name server connected to is correct.", out)

	// Neither -b nor -c.
	_, err = runAdmin(t, "getBrokerEpoch", "-n", addr)
	require.Error(t, err)
}
