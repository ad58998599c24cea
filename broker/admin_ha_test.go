package broker

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store/ha"
)

type fakeHA struct {
	slave  bool
	slaves []ha.SlaveStatus
	client ha.ClientStatus
	hasCli bool
}

func (f *fakeHA) IsSlave() bool                           { return f.slave }
func (f *fakeHA) HASlaves() []ha.SlaveStatus              { return f.slaves }
func (f *fakeHA) HAClientStatus() (ha.ClientStatus, bool) { return f.client, f.hasCli }

// serveHAStatus answers one GET_BROKER_HA_STATUS through the router, as
// the server would.
func serveHAStatus(t *testing.T, src haStatusSource, maxPhy int64) body.HARuntimeInfo {
	t.Helper()
	r := transport.NewRouter()
	registerHAStatus(r, nil, src, func() int64 { return maxPhy })
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := newTestClient(t).Invoke(ctx, srv.Addr(), request(codec.ReqGetBrokerHaStatus))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	info, err := body.DecodeHARuntimeInfo(resp.Body)
	require.NoError(t, err)
	return info
}

func TestHAStatusMaster(t *testing.T) {
	src := &fakeHA{slaves: []ha.SlaveStatus{
		{Addr: "127.0.0.1:40001", AckOffset: 900, Diff: 100, InSync: true, TransferFrom: 0, TransferredBytesPerSecond: 4096},
		{Addr: "127.0.0.1:40002", AckOffset: -1, Diff: 1000, TransferFrom: 512},
	}}
	info := serveHAStatus(t, src, 1000)
	require.True(t, info.Master)
	require.Equal(t, int64(1000), info.MasterCommitLogMaxOffset)
	require.Equal(t, int32(1), info.InSyncSlaveNums)
	require.Equal(t, []body.HAConnectionRuntimeInfo{
		{Addr: "127.0.0.1:40001", SlaveAckOffset: 900, Diff: 100, InSync: true, TransferredByteInSecond: 4096},
		{Addr: "127.0.0.1:40002", SlaveAckOffset: -1, Diff: 1001, TransferFromWhere: 512},
	}, info.HAConnectionInfo)

	// A master without slaves still answers, with an empty list.
	info = serveHAStatus(t, &fakeHA{}, 7)
	require.True(t, info.Master)
	require.Empty(t, info.HAConnectionInfo)
}

func TestHAStatusSlave(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_123)
	src := &fakeHA{slave: true, hasCli: true, client: ha.ClientStatus{
		MasterAddr: "127.0.0.1:10912", Connected: true, LastRead: now, LastWrite: now.Add(time.Second),
		TransferredBytesPerSecond: 77,
	}}
	info := serveHAStatus(t, src, 4242)
	require.False(t, info.Master)
	require.Equal(t, body.HAClientRuntimeInfo{
		MasterAddr: "127.0.0.1:10912", TransferredByteInSecond: 77, MaxOffset: 4242,
		LastReadTimestamp: now.UnixMilli(), LastWriteTimestamp: now.UnixMilli() + 1000,
	}, info.HAClientRuntimeInfo)

	info = serveHAStatus(t, &fakeHA{slave: true}, 5)
	require.Equal(t, body.HAClientRuntimeInfo{MaxOffset: 5}, info.HAClientRuntimeInfo)
}
