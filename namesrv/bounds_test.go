package namesrv

import (
	"fmt"
	"github.com/rocketgo/rocketgo/codec/transport/transporttest"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// rawInvoke writes f on a raw loopback connection and reads its reply.
func rawInvoke(t *testing.T, nc net.Conn, f *codec.Frame, opaque int32) *codec.Frame {
	t.Helper()
	f.Opaque = opaque
	_, err := nc.Write(f.AppendTo(nil))
	require.NoError(t, err)
	return readFrame(t, nc)
}

func broker(name, addr string, n int) *fakeBroker {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s-T%d", name, i)
	}
	return &fakeBroker{cluster: "c", name: name, addr: addr, ha: addr, topics: topics(names...)}
}

func (s *Server) routeEntries() int {
	s.routes.mu.RLock()
	defer s.routes.mu.RUnlock()
	return s.routes.entries
}

func (s *Server) brokerNames() int {
	s.routes.mu.RLock()
	defer s.routes.mu.RUnlock()
	return len(s.routes.brokers)
}

// A registration with more topics than maxTopicsPerBrokerRegistration is
// refused with a remark naming the key, and changes nothing; one at the
// bound is accepted. The old code accepted any number.
func TestRegisterTopicsPerRegistrationBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxTopicsPerBrokerRegistration = 100
	s := startNamesrv(t, cfg)
	nc := rawConn(t, s.Addr())

	resp := rawInvoke(t, nc, broker("big", "10.0.0.1:10911", 101).registerFrame(t), 1)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxTopicsPerBrokerRegistration")
	require.Zero(t, s.routeEntries())
	require.Zero(t, s.brokerNames())
	require.Equal(t, int32(codec.RespTopicNotExist), rawInvoke(t, nc, request(codec.ReqGetRouteinfoByTopic, "topic", "big-T0"), 2).Code)

	resp = rawInvoke(t, nc, broker("big", "10.0.0.1:10911", 100).registerFrame(t), 3)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, 100, s.routeEntries())
}

// Broker addresses past maxBrokers are refused; known ones re-register,
// and a freed slot is taken again. The old code registered any number of
// names from one anonymous connection.
func TestRegisterBrokersBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxBrokers = 3
	s := startNamesrv(t, cfg)
	nc := rawConn(t, s.Addr())
	for i := range 3 {
		resp := rawInvoke(t, nc, broker(fmt.Sprintf("b%d", i), fmt.Sprintf("10.0.0.%d:10911", i), 2).registerFrame(t), int32(i+1))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	extra := broker("b3", "10.0.0.3:10911", 2)
	resp := rawInvoke(t, nc, extra.registerFrame(t), 10)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxBrokers")
	require.Equal(t, 3, s.brokerNames())
	require.Equal(t, int32(codec.RespTopicNotExist), rawInvoke(t, nc, request(codec.ReqGetRouteinfoByTopic, "topic", "b3-T0"), 11).Code)

	resp = rawInvoke(t, nc, broker("b0", "10.0.0.0:10911", 2).registerFrame(t), 12)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, "a registered broker re-registers: %s", resp.Remark)

	resp = rawInvoke(t, nc, request(codec.ReqUnregisterBroker, "brokerName", "b1", "brokerAddr", "10.0.0.1:10911", "clusterName", "c", "brokerId", "0"), 13)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = rawInvoke(t, nc, extra.registerFrame(t), 14)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

// The route entries of all brokers stay within maxTopicRouteEntries: a
// registration adding more is refused whole, re-registering known topics
// adds nothing, and entries freed by an unregistration count again.
func TestRouteEntriesBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxTopicRouteEntries = 250
	s := startNamesrv(t, cfg)
	nc := rawConn(t, s.Addr())
	a := broker("a", "10.0.0.1:10911", 200)
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, a.registerFrame(t), 1).Code)
	require.Equal(t, 200, s.routeEntries())

	resp := rawInvoke(t, nc, broker("b", "10.0.0.2:10911", 100).registerFrame(t), 2)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxTopicRouteEntries")
	require.Equal(t, 200, s.routeEntries())
	require.Equal(t, 1, s.brokerNames(), "a refused registration changes nothing")

	a.version.Counter++ // a changed data version rewrites every topic
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, a.registerFrame(t), 3).Code)
	require.Equal(t, 200, s.routeEntries())
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, broker("b", "10.0.0.2:10911", 50).registerFrame(t), 4).Code)
	require.Equal(t, 250, s.routeEntries())

	// REGISTER_TOPIC_IN_NAMESRV is bounded too.
	rt := request(codec.ReqRegisterTopicInNamesrv, "topic", "extra")
	rt.Body = []byte(`{"queueDatas":[{"brokerName":"a","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}]}`)
	resp = rawInvoke(t, nc, rt, 5)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxTopicRouteEntries")

	resp = rawInvoke(t, nc, request(codec.ReqUnregisterBroker, "brokerName", "a", "brokerAddr", "10.0.0.1:10911", "clusterName", "c", "brokerId", "0"), 6)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, 50, s.routeEntries())
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, broker("c", "10.0.0.3:10911", 200).registerFrame(t), 7).Code)
	require.Equal(t, 250, s.routeEntries())
}

// The attack, scaled down: anonymous connections repeat one big
// plain registration (30,000 topics, about 4 MB) under new broker names.
// The route table stops at maxTopicRouteEntries and the heap stays
// bounded; the old code kept every copy (1.2 M route entries for 40) and
// tripped the watchdog.
func TestRepeatedBigRegistrationsBounded(t *testing.T) {
	// Measured: about 105 MiB at the peak now (decoding and the test's own
	// frames), 267 MiB and growing with the count on the old code.
	const limitMiB = 180
	cfg := testConfig(t)
	cfg.MaxTopicRouteEntries = 60_000
	s := startNamesrv(t, cfg)
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := transporttest.WatchHeap(t, limitMiB<<20, nil)
	defer w.Stop()
	var peak atomic.Uint64
	peakDone := make(chan struct{})
	go func() {
		for {
			select {
			case <-peakDone:
				return
			case <-time.After(5 * time.Millisecond):
			}
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > peak.Load() {
				peak.Store(m.HeapAlloc)
			}
		}
	}()
	defer close(peakDone)

	base := broker("evil", "10.9.9.9:10911", 30_000)
	f := base.registerFrame(t)
	t.Logf("body %d KiB", len(f.Body)>>10)
	const conns, perConn = 4, 10
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int32]int{}
	for c := range conns {
		nc := rawConn(t, s.Addr())
		require.NoError(t, nc.SetDeadline(time.Now().Add(60*time.Second)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perConn && !w.Tripped(); i++ {
				g := *f
				g.Ext = nil
				g.Set("brokerName", fmt.Sprintf("evil-%d-%d", c, i))
				g.Set("brokerAddr", fmt.Sprintf("10.9.%d.%d:10911", c, i))
				g.Set("clusterName", "c")
				g.Set("brokerId", "0")
				g.Set("haServerAddr", "10.9.9.9:10912")
				g.Set("compressed", "false")
				g.Opaque = int32(i + 1)
				if _, err := nc.Write(g.AppendTo(nil)); err != nil {
					return
				}
				resp := readFrame(t, nc)
				mu.Lock()
				codes[resp.Code]++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	require.False(t, w.Tripped())
	t.Logf("replies by code: %v; route entries %d; heap peak %d MiB above the start", codes, s.routeEntries(), (peak.Load()-ms.HeapAlloc)>>20)
	require.Equal(t, 2, codes[int32(codec.RespSuccess)])
	require.Equal(t, conns*perConn-2, codes[int32(codec.RespSystemError)])
	require.Equal(t, 60_000, s.routeEntries())
}

// PUT_KV_CONFIG is bounded: a value past maxKVConfigValueLength, or a put
// past maxKVConfigBytes, is refused and stores nothing; overwriting in
// place and deleting keep the count right. The old code stored anything.
func TestKVConfigBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxKVConfigValueLength = 1000
	cfg.MaxKVConfigBytes = 10 * (1000 + 2 + 2 + kvEntryOverhead)
	s := startNamesrv(t, cfg)
	nc := rawConn(t, s.Addr())
	op := int32(0)
	put := func(key string, n int) *codec.Frame {
		op++
		return rawInvoke(t, nc, request(codec.ReqPutKvConfig, "namespace", "ns", "key", key, "value", strings.Repeat("v", n)), op)
	}
	get := func(key string) *codec.Frame {
		op++
		return rawInvoke(t, nc, request(codec.ReqGetKvConfig, "namespace", "ns", "key", key), op)
	}

	resp := put("k0", 1001)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxKVConfigValueLength")
	require.NotEqual(t, int32(codec.RespSuccess), get("k0").Code)

	for i := range 10 {
		resp = put(fmt.Sprintf("k%d", i), 1000)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	resp = put("kA", 1000)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxKVConfigBytes")
	require.NotEqual(t, int32(codec.RespSuccess), get("kA").Code)

	require.Equal(t, int32(codec.RespSuccess), put("k3", 900).Code, "a smaller value in place fits")
	require.Equal(t, int32(codec.RespSuccess), put("k3", 1000).Code, "and back")
	op++
	resp = rawInvoke(t, nc, request(codec.ReqDeleteKvConfig, "namespace", "ns", "key", "k3"), op)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, int32(codec.RespSuccess), put("kA", 1000).Code, "a deleted entry's room is free again")
}
