package main

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// startFakeServer serves handlers on 127.0.0.1 until the test ends.
func startFakeServer(t *testing.T, handlers map[codec.RequestCode]func(*codec.Frame) *codec.Frame) string {
	r := transport.NewRouter()
	for code, h := range handlers {
		r.Handle(code, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame { return h(req) })
	}
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError}))
	srv := transport.NewServer(transport.ServerConfig{Addr: "127.0.0.1:0", Logger: log}, r)
	require.NoError(t, srv.Start())
	t.Cleanup(func() { require.NoError(t, srv.Close()) })
	return srv.Addr()
}

// storeTsAt is where record() puts the store timestamp (IPv4 born host).
const storeTsAt = 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8 + 8

// laggingSlave serves GET_MAX_OFFSET as a slave that shows a master record
// only delay after the master stored it (read from the record's store
// timestamp), or never when delay < 0.
func laggingSlave(t *testing.T, fb *fakeBroker, delay time.Duration) string {
	return startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{
		codec.ReqGetMaxOffset: func(req *codec.Frame) *codec.Frame {
			key := req.Value("topic") + "/" + req.Value("queueId")
			cut := time.Now().Add(-delay).UnixMilli()
			fb.mu.Lock()
			n := 0
			for _, r := range fb.queues[key] {
				if delay < 0 || int64(binary.BigEndian.Uint64(r[storeTsAt:])) > cut {
					break
				}
				n++
			}
			fb.mu.Unlock()
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.SetInt("offset", int64(n))
			return resp
		},
	})
}

func baseReplLag(master, slave string) replLagConfig {
	return replLagConfig{Master: master, Slave: slave, Topic: "L", Group: "pg", Rate: 2000, Senders: 4, Conns: 2,
		Size: 128, Duration: 500 * time.Millisecond, Poll: 200 * time.Microsecond,
		// Generous: the shared 2-core machine can stall a reply for seconds.
		Grace: 5 * time.Second, Sync: 5 * time.Second, Timeout: 10 * time.Second}
}

func TestReplLagMeasuresSlaveDelayFromTheAck(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("L", 1)
	const delay = 40 * time.Millisecond
	slave := laggingSlave(t, fb, delay)
	cfg := baseReplLag(fb.addr, slave)
	cfg.Grace = 30 * time.Second
	start := time.Now()
	sum, err := runReplLag(cfg)
	require.NoError(t, err)
	require.Less(t, time.Since(start), 15*time.Second, "ends once the slave shows everything, before -grace")
	require.Positive(t, sum.Acked)
	require.Equal(t, sum.Sent, sum.Acked, "errors: %v", sum.Errors)
	require.Equal(t, uint64(fb.stored("L")), sum.Acked)
	require.Equal(t, sum.Acked, sum.Replicated)
	require.Zero(t, sum.Missing)
	require.Equal(t, sum.Acked, sum.Lag.Samples)
	// The fake acks at once and shows a record delay later (ms-rounded
	// store timestamps): every lag is about delay, none is zero.
	require.GreaterOrEqual(t, sum.Lag.P50, float64((delay - 2*time.Millisecond).Milliseconds()), "%+v", sum.Lag)
	require.Less(t, sum.Lag.P50, 5000.0)
	require.Zero(t, sum.BeforeAck)
	require.Positive(t, sum.Polls)
}

func TestReplLagCountsMissingAndEndsAfterGrace(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("L", 1)
	slave := laggingSlave(t, fb, -1) // never shows anything
	cfg := baseReplLag(fb.addr, slave)
	cfg.Grace = 300 * time.Millisecond
	start := time.Now()
	sum, err := runReplLag(cfg)
	require.NoError(t, err)
	require.GreaterOrEqual(t, time.Since(start), cfg.Duration+cfg.Grace)
	require.Less(t, time.Since(start), 15*time.Second)
	require.Positive(t, sum.Acked)
	require.Equal(t, sum.Acked, sum.Missing)
	require.Zero(t, sum.Replicated)
	require.Zero(t, sum.Lag.Samples)
}

func TestReplLagRefusesASlaveBehindTheMaster(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("L", 1)
	pre := baseProduce(fb, "L")
	pre.Queues, pre.Count = 1, 5
	_, err := runProduce(pre)
	require.NoError(t, err)
	cfg := baseReplLag(fb.addr, laggingSlave(t, fb, -1))
	cfg.Sync = 300 * time.Millisecond
	_, err = runReplLag(cfg)
	require.ErrorContains(t, err, "at offset 0")
	require.ErrorContains(t, err, "master at 5")
}

func TestReplLagJSONViaRun(t *testing.T) {
	fb := startFakeBroker(t)
	fb.addTopic("L", 1)
	var out, errOut bytes.Buffer
	require.NoError(t, run([]string{"repllag", "-m", fb.addr, "-s", laggingSlave(t, fb, 0), "-t", "L",
		"-rate", "500", "-duration", "200ms", "-senders", "2", "-conns", "1", "-timeout", "10s", "-json", "-quiet"}, &out, &errOut))
	var sum ReplLagSummary
	require.NoError(t, json.Unmarshal(out.Bytes(), &sum), out.String())
	require.Equal(t, "repllag", sum.Role)
	require.Positive(t, sum.Acked)
	require.Equal(t, sum.Acked, sum.Replicated)
}

// fakeHAMaster answers GET_BROKER_HA_STATUS from a script indexed by the
// request count (the last entry repeats), so samples are deterministic.
type fakeHAMaster struct {
	mu     sync.Mutex
	n      int
	script []body.HARuntimeInfo
}

func (m *fakeHAMaster) status(req *codec.Frame) *codec.Frame {
	m.mu.Lock()
	info := m.script[min(m.n, len(m.script)-1)]
	m.n++
	m.mu.Unlock()
	info.Master = true
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendHARuntimeInfo(nil, &info)
	return resp
}

func haInfo(master int64, conns ...body.HAConnectionRuntimeInfo) body.HARuntimeInfo {
	return body.HARuntimeInfo{MasterCommitLogMaxOffset: master, HAConnectionInfo: conns}
}

func haConn(addr string, ack int64) body.HAConnectionRuntimeInfo {
	return body.HAConnectionRuntimeInfo{Addr: addr, SlaveAckOffset: ack}
}

func TestHAWaitNewTimesOnlyTheNewSlave(t *testing.T) {
	// A stale connection already "in sync" must not end the catch-up; the
	// new one connects at sample 3 and reaches the target at sample 6.
	stale := haConn("127.0.0.1:1111", 1000)
	m := &fakeHAMaster{script: []body.HARuntimeInfo{
		haInfo(1000, stale),
		haInfo(1000, stale),
		haInfo(1000, stale, haConn("127.0.0.1:2222", 200)),
		haInfo(1000, haConn("127.0.0.1:2222", 200)),
		haInfo(1000, haConn("127.0.0.1:2222", 600)),
		haInfo(1000, haConn("127.0.0.1:2222", 1000)),
	}}
	addr := startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{codec.ReqGetBrokerHaStatus: m.status})
	ready := filepath.Join(t.TempDir(), "ready")
	sum, err := runHAWait(haWaitConfig{Master: addr, New: true, Base: 200, Interval: 5 * time.Millisecond, Timeout: 30 * time.Second, Ready: ready})
	require.NoError(t, err)
	require.FileExists(t, ready)
	require.Equal(t, 6, sum.Samples)
	require.Equal(t, "127.0.0.1:2222", sum.Slave)
	require.Equal(t, int64(1000), sum.Target)
	require.Equal(t, int64(800), sum.Bytes)
	require.False(t, sum.MasterMoved)
	require.Positive(t, sum.TransferSec)
	require.Greater(t, sum.DoneMs, sum.ConnectMs)
	require.InDelta(t, 800/sum.TransferSec/1e6, sum.MBps, 1e-9)
}

func TestHAWaitInSyncFollowsTheMaster(t *testing.T) {
	m := &fakeHAMaster{script: []body.HARuntimeInfo{
		haInfo(500), // no slave yet
		haInfo(700, haConn("127.0.0.1:3333", -1)), // connected, no report
		haInfo(900, haConn("127.0.0.1:3333", 700)),
		haInfo(900, haConn("127.0.0.1:3333", 900)),
	}}
	addr := startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{codec.ReqGetBrokerHaStatus: m.status})
	sum, err := runHAWait(haWaitConfig{Master: addr, Base: -1, Interval: 5 * time.Millisecond, Timeout: 30 * time.Second})
	require.NoError(t, err)
	require.Equal(t, 4, sum.Samples)
	require.Equal(t, int64(900), sum.Target)
}

func TestHAWaitTimesOut(t *testing.T) {
	m := &fakeHAMaster{script: []body.HARuntimeInfo{haInfo(500, haConn("127.0.0.1:3333", 100))}}
	addr := startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{codec.ReqGetBrokerHaStatus: m.status})
	start := time.Now()
	_, err := runHAWait(haWaitConfig{Master: addr, Base: -1, Interval: 10 * time.Millisecond, Timeout: 200 * time.Millisecond})
	require.ErrorContains(t, err, "no slave reached")
	require.Less(t, time.Since(start), 10*time.Second)
}

func TestHAWaitRefusesASlave(t *testing.T) {
	addr := startFakeServer(t, map[codec.RequestCode]func(*codec.Frame) *codec.Frame{
		codec.ReqGetBrokerHaStatus: func(req *codec.Frame) *codec.Frame {
			resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
			resp.Body = body.AppendHARuntimeInfo(nil, &body.HARuntimeInfo{})
			return resp
		},
	})
	_, err := runHAWait(haWaitConfig{Master: addr, Base: -1, Interval: 10 * time.Millisecond, Timeout: 200 * time.Millisecond})
	require.ErrorContains(t, err, "not a master")
}
