package namesrv

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"fmt"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport/transporttest"
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

	resp := rawInvoke(t, nc, broker("big", "127.0.0.1:10911", 101).registerFrame(t), 1)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxTopicsPerBrokerRegistration")
	require.Zero(t, s.routeEntries())
	require.Zero(t, s.brokerNames())
	require.Equal(t, int32(codec.RespTopicNotExist), rawInvoke(t, nc, request(codec.ReqGetRouteinfoByTopic, "topic", "big-T0"), 2).Code)

	resp = rawInvoke(t, nc, broker("big", "127.0.0.1:10911", 100).registerFrame(t), 3)
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
		resp := rawInvoke(t, nc, broker(fmt.Sprintf("b%d", i), fmt.Sprintf("127.0.0.%d:10911", i), 2).registerFrame(t), int32(i+1))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	extra := broker("b3", "127.0.0.3:10911", 2)
	resp := rawInvoke(t, nc, extra.registerFrame(t), 10)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxBrokers")
	require.Equal(t, 3, s.brokerNames())
	require.Equal(t, int32(codec.RespTopicNotExist), rawInvoke(t, nc, request(codec.ReqGetRouteinfoByTopic, "topic", "b3-T0"), 11).Code)

	resp = rawInvoke(t, nc, broker("b0", "127.0.0.0:10911", 2).registerFrame(t), 12)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, "a registered broker re-registers: %s", resp.Remark)

	resp = rawInvoke(t, nc, request(codec.ReqUnregisterBroker, "brokerName", "b1", "brokerAddr", "127.0.0.1:10911", "clusterName", "c", "brokerId", "0"), 13)
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
	a := broker("a", "127.0.0.1:10911", 200)
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, a.registerFrame(t), 1).Code)
	require.Equal(t, 200, s.routeEntries())

	resp := rawInvoke(t, nc, broker("b", "127.0.0.2:10911", 100).registerFrame(t), 2)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxTopicRouteEntries")
	require.Equal(t, 200, s.routeEntries())
	require.Equal(t, 1, s.brokerNames(), "a refused registration changes nothing")

	a.version.Counter++ // a changed data version rewrites every topic
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, a.registerFrame(t), 3).Code)
	require.Equal(t, 200, s.routeEntries())
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, broker("b", "127.0.0.2:10911", 50).registerFrame(t), 4).Code)
	require.Equal(t, 250, s.routeEntries())

	// REGISTER_TOPIC_IN_NAMESRV is bounded too.
	rt := request(codec.ReqRegisterTopicInNamesrv, "topic", "extra")
	rt.Body = []byte(`{"queueDatas":[{"brokerName":"a","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}]}`)
	resp = rawInvoke(t, nc, rt, 5)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "maxTopicRouteEntries")

	resp = rawInvoke(t, nc, request(codec.ReqUnregisterBroker, "brokerName", "a", "brokerAddr", "127.0.0.1:10911", "clusterName", "c", "brokerId", "0"), 6)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, 50, s.routeEntries())
	require.Equal(t, int32(codec.RespSuccess), rawInvoke(t, nc, broker("c", "127.0.0.3:10911", 200).registerFrame(t), 7).Code)
	require.Equal(t, 250, s.routeEntries())
}

// The issue's attack, scaled down: anonymous connections repeat one big
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

// attackFrame is one of the issue's registrations: broker evil-<r> with n
// topics whose names are length bytes long, compressed as a 5.x broker
// sends them (zlib at its fastest, to keep the test quick).
func attackFrame(r, n, length int) (*codec.Frame, error) {
	var raw []byte
	chunk := func(p []byte) {
		raw = binary.BigEndian.AppendUint32(raw, uint32(len(p)))
		raw = append(raw, p...)
	}
	chunk(body.AppendTopicVersion(nil, body.TopicVersion{Counter: 1, Timestamp: 1}))
	raw = binary.BigEndian.AppendUint32(raw, uint32(n))
	line := make([]byte, 0, length+32)
	for i := range n {
		line = fmt.Appendf(line[:0], "r%d-t%d-", r, i)
		for len(line) < length {
			line = append(line, 'x')
		}
		line = append(line, " 8 8 6 SINGLE_TAG {}"...)
		chunk(line)
	}
	chunk([]byte("[]"))
	raw = binary.BigEndian.AppendUint32(raw, 0) // no static-topic mappings
	var zb bytes.Buffer
	zw, err := zlib.NewWriterLevel(&zb, zlib.BestSpeed)
	if err != nil {
		return nil, fmt.Errorf("attack frame %d: %w", r, err)
	}
	if _, err := zw.Write(raw); err != nil {
		return nil, fmt.Errorf("attack frame %d: %w", r, err)
	}
	if err := zw.Close(); err != nil {
		return nil, fmt.Errorf("attack frame %d: %w", r, err)
	}

	addr := fmt.Sprintf("10.66.%d.%d:10911", r/250, r%250)
	h := header.RegisterBrokerRequest{BrokerName: fmt.Sprintf("evil-%d", r), BrokerAddr: addr, ClusterName: "evil", HaServerAddr: addr, Compressed: true}
	f := &codec.Frame{Code: int32(codec.ReqRegisterBroker), Language: codec.LangJava, Version: javaClientVersion}
	h.Encode(f)
	f.Body = zb.Bytes()
	return f, nil
}

// The issue's attack with the default configuration, 10 of its 25
// anonymous registrations of 100,000 topics with 120-byte names (the
// default holds 4). The route table stops at maxRouteTableBytes (refusals
// name it, with SYSTEM_ERROR), the heap it holds stays within the bound
// (and the estimate's error), and the broker registered before keeps its
// routes and re-registers. The old code, bounded by entry counts only,
// took all 10 (about 220 MiB of heap; 20 of the 25, 450 MiB).
func TestIssueRegisterAttackBoundedInBytes(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	good := newClient(t)
	m, _ := masterSlave()
	m.register(t, good, s.Addr())

	const regs, topicsPer, nameLen = 10, 100_000, 120
	ncs := make([]net.Conn, regs)
	for i := range ncs {
		ncs[i] = rawConn(t, s.Addr())
	}
	var closeOnce sync.Once
	abort := func() {
		closeOnce.Do(func() {
			for _, nc := range ncs {
				nc.Close()
			}
		})
	}
	base := heapInUse()
	// The watchdog reads HeapAlloc, garbage included (up to the live heap
	// again at GOGC=100); the bound itself is checked after a collection.
	w := transporttest.WatchHeap(t, 512<<20, abort)
	defer w.Stop()

	// Frames are built one ahead of the one in flight.
	next := make(chan *codec.Frame, 1)
	go func() {
		defer close(next)
		for r := range regs {
			f, err := attackFrame(r, topicsPer, nameLen)
			if err != nil {
				t.Error(err)
				return
			}
			next <- f
		}
	}()
	accepted, refused := 0, 0
	r := 0
	for f := range next {
		if w.Tripped() {
			continue
		}
		require.NoError(t, ncs[r].SetDeadline(time.Now().Add(30*time.Second)))
		_, err := ncs[r].Write(f.AppendTo(nil))
		require.NoError(t, err)
		resp, err := readFrameErr(ncs[r]) // the connection stays open: closing it unregisters
		require.NoError(t, err)
		switch resp.Code {
		case int32(codec.RespSuccess):
			require.Zero(t, refused, "nothing is accepted after the first refusal")
			accepted++
		case int32(codec.RespSystemError):
			require.Contains(t, resp.Remark, "maxRouteTableBytes")
			refused++
		default:
			t.Fatalf("registration %d: code %d %q", r, resp.Code, resp.Remark)
		}
		r++
	}
	require.False(t, w.Tripped())
	held := heapInUse() - base
	s.routes.mu.RLock()
	tableBytes := s.routes.bytes
	s.routes.mu.RUnlock()
	t.Logf("%d accepted, %d refused; table %d MiB (estimate), heap %d MiB above the start, peak %d MiB",
		accepted, refused, tableBytes>>20, held>>20, w.Peak()>>20)
	require.Positive(t, accepted)
	require.Positive(t, refused)
	require.LessOrEqual(t, tableBytes, int64(DefaultMaxRouteTableBytes))
	require.Less(t, held, uint64(DefaultMaxRouteTableBytes)*5/4)

	r0 := decodeRoute(t, getRoute(t, good, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, "broker-a", r0.BrokerDatas[0].BrokerName)
	m.register(t, good, s.Addr()) // the same registration again adds nothing: still accepted
	runtime.KeepAlive(ncs)
}

func (s *Server) tableBytes() int64 {
	s.routes.mu.RLock()
	defer s.routes.mu.RUnlock()
	return s.routes.bytes
}

// maxRouteTableBytes bounds what registrations hold, whatever holds it:
// topics, filter server lists, header strings. A refused registration
// changes nothing (a known broker stays alive on its old routes), the
// same broker registering again replaces its bytes, and bytes freed by
// an unregistration are taken again.
func TestRouteTableBytesBounded(t *testing.T) {
	cfg := testConfig(t)
	cfg.MaxRouteTableBytes = 200_000
	s := startNamesrv(t, cfg)
	nc := rawConn(t, s.Addr())
	op := int32(0)
	send := func(f *codec.Frame) *codec.Frame {
		op++
		return rawInvoke(t, nc, f, op)
	}
	requireRefused := func(resp *codec.Frame) {
		t.Helper()
		require.Equal(t, int32(codec.RespSystemError), resp.Code)
		require.Contains(t, resp.Remark, "maxRouteTableBytes")
	}

	a := broker("a", "127.0.0.1:10911", 500)
	require.Equal(t, int32(codec.RespSuccess), send(a.registerFrame(t)).Code)
	held := s.tableBytes()
	require.Greater(t, held, int64(50_000))
	for range 3 {
		a.version.Counter++
		require.Equal(t, int32(codec.RespSuccess), send(a.registerFrame(t)).Code)
		require.Equal(t, held, s.tableBytes(), "registering again replaces, not adds")
	}

	b := broker("b", "127.0.0.2:10911", 1200)
	requireRefused(send(b.registerFrame(t)))
	require.Equal(t, held, s.tableBytes())
	require.Equal(t, 1, s.brokerNames())
	require.Equal(t, int32(codec.RespTopicNotExist), send(request(codec.ReqGetRouteinfoByTopic, "topic", "b-T0")).Code)

	// Bytes of any kind count: a filter server list, a long header.
	f := broker("f", "127.0.0.3:10911", 1).registerFrame(t)
	f.Body = body.AppendRegisterBrokerBody(nil, &body.RegisterBrokerBody{FilterServerList: distinctStrings(2000, 100, "127.0.0.")})
	requireRefused(send(f))
	h := broker("h", "127.0.0.4:10911", 2).registerFrame(t)
	h.Set("__ZONE_NAME", strings.Repeat("z", 200_000))
	requireRefused(send(h))
	require.Equal(t, held, s.tableBytes())

	// A known broker grown past the bound is refused but stays alive.
	now := time.Now()
	s.routes.mu.RLock()
	s.routes.live[brokerKey{"c", "127.0.0.1:10911"}].lastUpdate.Store(now.Add(-time.Hour).UnixNano())
	s.routes.mu.RUnlock()
	grown := broker("a", "127.0.0.1:10911", 2000)
	grown.version.Counter = 100
	requireRefused(send(grown.registerFrame(t)))
	s.routes.mu.RLock()
	last := s.routes.live[brokerKey{"c", "127.0.0.1:10911"}].lastUpdate.Load()
	s.routes.mu.RUnlock()
	require.GreaterOrEqual(t, last, now.UnixNano())
	require.Equal(t, int32(codec.RespSuccess), send(request(codec.ReqGetRouteinfoByTopic, "topic", "a-T499")).Code)

	// REGISTER_TOPIC_IN_NAMESRV too.
	for i := 0; ; i++ {
		rt := request(codec.ReqRegisterTopicInNamesrv, "topic", fmt.Sprintf("extra-%d-%s", i, strings.Repeat("e", 200)))
		rt.Body = []byte(`{"queueDatas":[{"brokerName":"a","readQueueNums":1,"writeQueueNums":1,"perm":6,"topicSysFlag":0}]}`)
		resp := send(rt)
		if resp.Code != int32(codec.RespSuccess) {
			requireRefused(resp)
			break
		}
		require.Less(t, i, 1000, "register topic is never refused")
	}
	require.LessOrEqual(t, s.tableBytes(), cfg.MaxRouteTableBytes)

	resp := send(request(codec.ReqUnregisterBroker, "brokerName", "a", "brokerAddr", "127.0.0.1:10911", "clusterName", "c", "brokerId", "0"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Zero(t, s.tableBytes(), "an unregistered broker's bytes are free again")
	require.Equal(t, int32(codec.RespSuccess), send(b.registerFrame(t)).Code)
}
