package broker

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store/timer"
)

func serveMasterSync(t *testing.T, timerEnabled bool, root string) func(code codec.RequestCode) *codec.Frame {
	r := transport.NewRouter()
	registerMasterSync(r, nil, timerEnabled, root)
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	cli := newTestClient(t)
	return func(code codec.RequestCode) *codec.Frame {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := cli.Invoke(ctx, srv.Addr(), request(code))
		require.NoError(t, err)
		return resp
	}
}

func TestMasterSyncAnswers(t *testing.T) {
	root := t.TempDir()
	call := serveMasterSync(t, true, root)

	// GET_ALL_MESSAGE_REQUEST_MODE: see TestQueryAssignmentFollowsRequestMode.
	// No checkpoint yet: zeros and a fresh data version.
	resp := call(codec.ReqGetTimerCheckPoint)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Len(t, resp.Body, timerCheckpointWireSize)
	require.Equal(t, make([]byte, 40), resp.Body[:40])

	// The timer's checkpoint file, as store/timer writes it.
	page := make([]byte, 4096)
	for i, v := range []int64{111, 222, 333, 444, 1, 1700000000000, 9} {
		binary.BigEndian.PutUint64(page[i*8:], uint64(v))
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(timer.CheckpointPath(root)), 0o755))
	require.NoError(t, os.WriteFile(timer.CheckpointPath(root), page, 0o644))
	resp = call(codec.ReqGetTimerCheckPoint)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, page[:timerCheckpointWireSize], resp.Body) // TimerCheckpoint.encode's seven longs

	resp = call(codec.ReqGetTimerMetrics)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	var w struct {
		DataVersion map[string]int64           `json:"dataVersion"`
		TimingCount map[string]json.RawMessage `json:"timingCount"`
	}
	require.NoError(t, json.Unmarshal(resp.Body, &w))
	require.NotZero(t, w.DataVersion["timestamp"])
	require.NotNil(t, w.TimingCount)
	again := call(codec.ReqGetTimerMetrics)
	require.Equal(t, resp.Body, again.Body) // the version does not move by itself
}

func TestMasterSyncTimerDisabled(t *testing.T) {
	call := serveMasterSync(t, false, t.TempDir())
	resp := call(codec.ReqGetTimerCheckPoint)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The checkpoint is null", resp.Remark)
	resp = call(codec.ReqGetTimerMetrics)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The timer message store is null", resp.Remark)
}
