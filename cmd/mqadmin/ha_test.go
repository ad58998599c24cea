package main

import (
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// startHABroker serves GET_BROKER_HA_STATUS with info, and cluster info
// naming itself as the only master.
func startHABroker(t *testing.T, info body.HARuntimeInfo) string {
	return startSelfNamedBroker(t, codec.ReqGetBrokerHaStatus, func() []byte { return body.AppendHARuntimeInfo(nil, &info) })
}

// startSelfNamedBroker is a fake broker (and name server) on loopback: it
// answers code with payload(), and GET_BROKER_CLUSTER_INFO with a cluster C
// whose only broker, broker-a, is itself as master.
func startSelfNamedBroker(t *testing.T, code codec.RequestCode, payload func() []byte) string {
	t.Helper()
	var addr string
	r := transport.NewRouter()
	r.Handle(code, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = payload()
		return resp
	})
	r.Handle(codec.ReqGetBrokerClusterInfo, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = appendSelfCluster(addr)
		return resp
	})
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}, r)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	addr = srv.Addr()
	return addr
}

func appendSelfCluster(addr string) []byte {
	return body.AppendClusterInfo(nil, &body.ClusterInfo{
		BrokerAddrTable:  []body.BrokerData{{Cluster: "C", BrokerName: "broker-a", BrokerAddrs: []body.BrokerAddr{{ID: 0, Addr: addr}}}},
		ClusterAddrTable: []body.ClusterBrokers{{Cluster: "C", BrokerNames: []string{"broker-a"}}},
	})
}

func TestHAStatusMasterOutput(t *testing.T) {
	addr := startHABroker(t, body.HARuntimeInfo{
		Master: true, MasterCommitLogMaxOffset: 1000, InSyncSlaveNums: 1,
		HAConnectionInfo: []body.HAConnectionRuntimeInfo{
			{Addr: "127.0.0.1:40001", SlaveAckOffset: 900, Diff: 100, InSync: true, TransferredByteInSecond: 2048},
			{Addr: "127.0.0.1:40002", SlaveAckOffset: 10, Diff: 990, TransferFromWhere: 5},
		},
	})
	want := "\n#MasterAddr\t" + addr + "\n#MasterCommitLogMaxOffset\t1000\n#SlaveNum\t2\n#InSyncSlaveNum\t1\n" +
		"#SlaveAddr                        #SlaveAckOffset             #Diff #TransferSpeed(KB/s)          #Status #TransferFromWhere\n" +
		"127.0.0.1:40001                   900                           100             2.00               OK                0\n" +
		"127.0.0.1:40002                   10                            990             0.00      Fall Behind                5\n"
	out, err := runAdmin(t, "haStatus", "-b", addr)
	require.NoError(t, err)
	require.Equal(t, want, out)

	// -c asks the name server for the cluster's masters.
	out, err = runAdmin(t, "haStatus", "-n", addr, "-c", "C")
	require.NoError(t, err)
	require.Equal(t, want, out)

	_, err = runAdmin(t, "haStatus")
	require.Error(t, err)
}

func TestHAStatusSlaveOutput(t *testing.T) {
	ts := time.Date(2026, 1, 2, 3, 4, 5, 6e6, time.Local).UnixMilli()
	addr := startHABroker(t, body.HARuntimeInfo{HAClientRuntimeInfo: body.HAClientRuntimeInfo{
		MasterAddr: "127.0.0.1:10912", TransferredByteInSecond: 512, MaxOffset: 4242,
		LastReadTimestamp: ts, LastWriteTimestamp: ts + 1000,
	}})
	out, err := runAdmin(t, "haStatus", "-b", addr)
	require.NoError(t, err)
	require.Equal(t, "\n#MasterAddr\t127.0.0.1:10912\n#CommitLogMaxOffset\t4242\n#TransferSpeed(KB/s)\t0.50\n"+
		"#LastReadTime\t2026-01-02 03:04:05,006\n#LastWriteTime\t2026-01-02 03:04:06,006\n#MasterFlushOffset\t0\n", out)

	addr = startHABroker(t, body.HARuntimeInfo{})
	out, err = runAdmin(t, "haStatus", "-b", addr)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(out, "\n#MasterAddr\tnull\n"), out)
}
