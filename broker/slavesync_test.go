package broker

import (
	"context"
	"encoding/binary"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store/timer"
)

type fixedRole struct {
	slave  bool
	master string
}

func (r fixedRole) IsSlave() bool      { return r.slave }
func (r fixedRole) MasterAddr() string { return r.master }

// invokerFunc answers some codes itself and passes the rest on.
type invokerFunc func(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error)

func (f invokerFunc) Invoke(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error) {
	return f(ctx, addr, req)
}

func freshSlaveTables(t *testing.T) (slaveSyncTables, Config) {
	cfg := testConfig(t.TempDir())
	cfg.BrokerID = 1
	live := newLiveConfig(&cfg)
	return slaveSyncTables{
		topics:  newTopicTable(&cfg, live, testLogger()),
		offsets: newOffsetTable(&cfg),
		groups:  newGroupTable(&cfg, live, testLogger()),
		delay:   newDelayService(&cfg, nil, nil, testLogger()),
	}, cfg
}

func TestSlaveSyncPullsMasterMetadata(t *testing.T) {
	master := startBroker(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	resp := master.invoke(t, request(codec.ReqUpdateAndCreateTopic, "topic", "SyncT", "readQueueNums", "3", "writeQueueNums", "3", "perm", "6"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	g := request(codec.ReqUpdateAndCreateSubscriptiongroup)
	g.Body = []byte(`{"groupName":"SyncG","retryMaxTimes":5}`)
	require.Equal(t, int32(codec.RespSuccess), master.invoke(t, g).Code)
	resp = master.invoke(t, request(codec.ReqUpdateConsumerOffset, "consumerGroup", "SyncG", "topic", "SyncT", "queueId", "2", "commitOffset", "42"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	master.delay.setOffset(3, 17)

	var codes []int32
	cli := invokerFunc(func(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error) {
		codes = append(codes, req.Code)
		if req.Code == int32(codec.ReqGetAllMessageRequestMode) && addr == master.addr {
			// Until broker.go registers registerMasterSync, answer as it would.
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.Body = []byte(emptyMessageRequestModes)
			return resp, nil
		}
		return master.cli.Invoke(ctx, addr, req)
	})
	tables, cfg := freshSlaveTables(t)
	s := newSlaveSync(cli, fixedRole{slave: true, master: master.addr}, func() string { return "127.0.0.1:1" }, tables, testLogger())
	require.NoError(t, s.SyncOnce(ctx))

	// Java's order and codes.
	require.Equal(t, []int32{
		int32(codec.ReqGetAllTopicConfig), int32(codec.ReqGetAllConsumerOffset), int32(codec.ReqGetAllDelayOffset),
		int32(codec.ReqGetAllSubscriptiongroupConfig), int32(codec.ReqGetAllMessageRequestMode),
	}, codes)

	tc, ok := tables.topics.get("SyncT")
	require.True(t, ok)
	require.Equal(t, int32(3), tc.WriteQueueNums)
	sg, ok := tables.groups.get("SyncG")
	require.True(t, ok)
	require.Equal(t, int32(5), sg.RetryMaxTimes)
	off, ok := tables.offsets.query("SyncG", "SyncT", 2)
	require.True(t, ok)
	require.Equal(t, int64(42), off)
	tables.delay.mu.Lock()
	require.Equal(t, int64(17), tables.delay.offsets[3])
	tables.delay.mu.Unlock()

	// The master's data version, bumped once (Java's updateDataVersion).
	mv, _ := master.topics.snapshot()
	sv, _ := tables.topics.snapshot()
	require.Equal(t, mv.Counter+1, sv.Counter)

	// Persisted, so a restarted slave keeps what it synced.
	for _, f := range []string{"topics.json", "consumerOffset.json", "subscriptionGroup.json", "delayOffset.json"} {
		_, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "config", f))
		require.NoError(t, err, f)
	}
	again, _ := freshSlaveTables(t)
	again.topics.path = tables.topics.path
	require.NoError(t, again.topics.load())
	_, ok = again.topics.get("SyncT")
	require.True(t, ok)

	// A master equal to ourselves, or none, is skipped.
	codes = nil
	s2 := newSlaveSync(cli, fixedRole{slave: true, master: master.addr}, func() string { return master.addr }, tables, testLogger())
	require.NoError(t, s2.SyncOnce(ctx))
	require.Empty(t, codes)
}

func TestSlaveSyncBadAnswersKeepTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tables, _ := freshSlaveTables(t)
	tc := tables.topics
	require.NoError(t, tc.put(body.NewTopicConfig("Keep")))
	require.NoError(t, tables.groups.put(body.NewSubscriptionGroupConfig("KeepG")))
	tables.offsets.commit("KeepG", "Keep", 0, 9)
	tables.delay.setOffset(1, 5)
	v0, _ := tables.topics.snapshot()

	answers := []func(req *codec.Frame) *codec.Frame{
		func(req *codec.Frame) *codec.Frame {
			return codec.NewResponse(req, int32(codec.RespSystemError), "boom")
		},
		func(req *codec.Frame) *codec.Frame {
			r := codec.NewResponse(req, int32(codec.RespSuccess), "")
			r.Body = []byte("not json")
			return r
		},
		func(req *codec.Frame) *codec.Frame { return codec.NewResponse(req, int32(codec.RespSuccess), "") },
		func(req *codec.Frame) *codec.Frame {
			r := codec.NewResponse(req, int32(codec.RespSuccess), "")
			r.Body = []byte(`{"dataVersion":{"counter":99,"timestamp":1},"topicConfigTable":{},"subscriptionGroupTable":{},"offsetTable":{}}`)
			return r
		},
	}
	for i, answer := range answers {
		cli := invokerFunc(func(_ context.Context, _ string, req *codec.Frame) (*codec.Frame, error) { return answer(req), nil })
		s := newSlaveSync(cli, fixedRole{slave: true, master: "127.0.0.1:9"}, nil, tables, testLogger())
		require.Error(t, s.SyncOnce(ctx), "answer %d", i)

		_, ok := tables.topics.get("Keep")
		require.True(t, ok, "answer %d", i)
		v, _ := tables.topics.snapshot()
		require.Equal(t, v0, v, "answer %d", i)
		_, ok = tables.groups.get("KeepG")
		require.True(t, ok, "answer %d", i)
		off, ok := tables.offsets.query("KeepG", "Keep", 0)
		require.True(t, ok, "answer %d", i)
		require.Equal(t, int64(9), off)
		tables.delay.mu.Lock()
		require.Equal(t, int64(5), tables.delay.offsets[1], "answer %d", i)
		tables.delay.mu.Unlock()
	}
}

func TestSlaveSyncStartStop(t *testing.T) {
	tables, _ := freshSlaveTables(t)
	cli := invokerFunc(func(context.Context, string, *codec.Frame) (*codec.Frame, error) {
		t.Error("no sync is due before 60 s")
		return nil, context.Canceled
	})
	s := newSlaveSync(cli, fixedRole{slave: true, master: "127.0.0.1:9"}, nil, tables, testLogger())
	s.Start()
	s.Stop()
	s.Stop()
}

func TestSlaveSyncTimer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	root := t.TempDir()
	page := make([]byte, 4096)
	for i, v := range []int64{111, 222, 333, 444, 1, 1700000000000, 9} {
		binary.BigEndian.PutUint64(page[i*8:], uint64(v))
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(timer.CheckpointPath(root)), 0o755))
	require.NoError(t, os.WriteFile(timer.CheckpointPath(root), page, 0o644))
	r := transport.NewRouter()
	registerMasterSync(r, nil, true, root)
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { require.NoError(t, srv.Close()) })

	var got []timer.Checkpoint
	tables, _ := freshSlaveTables(t)
	tables.timerWheel = true
	tables.timerCheckpoint = func(c timer.Checkpoint) { got = append(got, c) }
	role := &fixedRole{slave: false, master: srv.Addr()}
	s := newSlaveSync(newTestClient(t), role, nil, tables, testLogger())
	require.NoError(t, s.SyncTimerCheckpoint(ctx))
	require.Empty(t, got, "a master does not sync")
	role.slave = true
	s = newSlaveSync(newTestClient(t), role, nil, tables, testLogger())
	require.NoError(t, s.SyncTimerCheckpoint(ctx))
	require.Equal(t, []timer.Checkpoint{{LastReadTimeMs: 111, LastTimerLogFlushPos: 222, LastTimerQueueOffset: 333,
		MasterTimerQueueOffset: 444, StateVersion: 1, Timestamp: 1700000000000, Counter: 9, ProgressPos: -1}}, got)

	// syncAll asks for the timer metrics too; this master answers only the
	// timer codes, so every other step fails and the metrics step does not.
	err := s.SyncOnce(ctx)
	require.ErrorContains(t, err, "topic config")
	require.NotContains(t, err.Error(), "timer metrics")

	// Without the timer the master answers Java's error and nothing is applied.
	r2 := transport.NewRouter()
	registerMasterSync(r2, nil, false, root)
	srv2 := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r2)
	require.NoError(t, srv2.Start())
	t.Cleanup(func() { require.NoError(t, srv2.Close()) })
	role.master = srv2.Addr()
	require.ErrorContains(t, s.SyncTimerCheckpoint(ctx), "The checkpoint is null")
	require.Len(t, got, 1)
	require.ErrorContains(t, s.SyncOnce(ctx), "timer metrics")

	_, err = decodeTimerCheckpoint(make([]byte, 31))
	require.Error(t, err)
	old, err := decodeTimerCheckpoint(page[:32]) // before the data version was added
	require.NoError(t, err)
	require.Equal(t, int64(444), old.MasterTimerQueueOffset)
}

// A 5.x master splits its tables into pages (enableSplitMetadata): the
// slave follows topicSeq to the total, and starts over when the data
// version moves.
func TestSlaveSyncPagedTopics(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	names := []string{"P1", "P2", "P3", "P4", "P5"}
	version := body.TopicVersion{Counter: 3, Timestamp: 1700000000000}
	moved := false
	var seqs []string
	cli := invokerFunc(func(_ context.Context, _ string, req *codec.Frame) (*codec.Frame, error) {
		if req.Code != int32(codec.ReqGetAllTopicConfig) {
			return codec.NewResponse(req, int32(codec.RespSystemError), "not in this test"), nil
		}
		seqs = append(seqs, req.Value("topicSeq")+"/"+req.Value("maxTopicNum"))
		seq := 0
		if req.Value("dataVersion") == string(body.AppendTopicVersion(nil, version)) {
			seq = int(mustAtoi(t, req.Value("topicSeq")))
		}
		if seq == 2 && !moved { // the table changes under the slave once
			moved = true
			version.Counter++
		}
		end := min(seq+2, len(names))
		var page []body.TopicConfig
		for _, n := range names[seq:end] {
			page = append(page, body.NewTopicConfig(n))
		}
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body.AppendTopicConfigFile(nil, version, page)
		resp.SetInt("totalTopicNum", int64(len(names)))
		return resp, nil
	})
	tables, _ := freshSlaveTables(t)
	s := newSlaveSync(cli, fixedRole{slave: true, master: "127.0.0.1:9"}, nil, tables, testLogger())
	require.Error(t, s.SyncOnce(ctx)) // the other steps fail here
	_, topics := tables.topics.snapshot()
	var got []string
	for _, tc := range topics {
		got = append(got, tc.TopicName)
	}
	require.Equal(t, names, got)
	require.Equal(t, []string{"0/2000", "2/2000", "0/2000", "2/2000", "4/2000"}, seqs)
	v, _ := tables.topics.snapshot()
	require.Equal(t, version.Counter+1, v.Counter)
}

func mustAtoi(t *testing.T, s string) int64 {
	n, err := strconv.ParseInt(s, 10, 64)
	require.NoError(t, err)
	return n
}
