package namesrv

import (
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// A broker registering 10,000 topics must not stall route queries: the
// body is decoded and the queue data built outside the table lock.
func TestBigRegistrationDoesNotStallRouteQueries(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	admin := newClient(t)
	small := &fakeBroker{cluster: "c", name: "broker-small", addr: "10.0.0.9:10911", ha: "10.0.0.9:10912", topics: topics("Hot", "Other"), version: body.TopicVersion{Counter: 1}}
	small.register(t, admin, s.Addr())

	names := make([]string, 10000)
	for i := range names {
		names[i] = fmt.Sprintf("BigTopic-%05d", i)
	}
	big := &fakeBroker{cluster: "c", name: "broker-big", addr: "10.0.0.8:10911", ha: "10.0.0.8:10912", topics: topics(names...)}
	bigClient := newClient(t)

	var stop atomic.Bool
	var mu sync.Mutex
	var lat []time.Duration
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; !stop.Load() && n < 100000; n++ {
				start := time.Now()
				resp := getRoute(t, admin, s.Addr(), "Hot", javaClientVersion)
				d := time.Since(start)
				if resp.Code != int32(codec.RespSuccess) {
					t.Errorf("route query failed: %d %s", resp.Code, resp.Remark)
					return
				}
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			}
		}()
	}
	regStart := time.Now()
	const rounds = 5
	for i := range rounds {
		big.version.Counter = int64(i + 1) // a changed data version rebuilds every topic
		big.register(t, bigClient, s.Addr())
	}
	regTime := time.Since(regStart) / rounds
	stop.Store(true)
	wg.Wait()

	sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
	require.NotEmpty(t, lat)
	p50, p99, max := lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
	hold := time.Duration(s.routes.maxRegisterHold.Load())
	t.Logf("10k-topic register: %v each, table lock held at most %v; %d route queries meanwhile: p50 %v p99 %v max %v",
		regTime, hold, len(lat), p50, p99, max)
	// What the design promises: the table is locked for a small part of a
	// registration (decoding and building happen outside the lock), so
	// readers wait at most that long. End-to-end latencies on a shared
	// 2-core machine also include scheduling and GC, so they are only logged
	// and sanity-bounded.
	// One preemption of the lock holder on a loaded 2-core machine can add
	// ~20 ms to a single hold, so the bound has a floor; decoding under the
	// lock (the regression this guards against) holds it for ~the whole
	// registration, 25-75 ms here, and still fails.
	bound := regTime / 4
	if bound < 25*time.Millisecond {
		bound = 25 * time.Millisecond
	}
	require.Less(t, hold, bound, "the registration holds the table lock for most of its work")
	require.Less(t, hold, 100*time.Millisecond)
	require.Less(t, p50, 50*time.Millisecond)
	require.Less(t, max, 2*time.Second)

	l := topicList(t, invoke(t, admin, s.Addr(), request(codec.ReqGetTopicsByCluster, "cluster", "c")))
	require.Len(t, l.Topics, 10002)
	r := decodeRoute(t, getRoute(t, admin, s.Addr(), "BigTopic-09999", goClientVersion))
	require.Equal(t, "broker-big", r.QueueDatas[0].BrokerName)
}

// rawConn speaks frames on a plain TCP socket, so tests can send garbage.
func rawConn(t *testing.T, addr string) net.Conn {
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	require.NoError(t, nc.SetDeadline(time.Now().Add(5*time.Second)))
	return nc
}

func readFrame(t *testing.T, nc net.Conn) *codec.Frame {
	var l [4]byte
	_, err := io.ReadFull(nc, l[:])
	require.NoError(t, err)
	payload := make([]byte, binary.BigEndian.Uint32(l[:]))
	_, err = io.ReadFull(nc, payload)
	require.NoError(t, err)
	var f codec.Frame
	require.NoError(t, codec.Decode(payload, &f))
	return &f
}

// closedByPeer reports whether the server closed nc.
func closedByPeer(nc net.Conn) bool {
	var b [1]byte
	_, err := nc.Read(b[:])
	return err != nil
}

func TestBadInputLeavesServerServing(t *testing.T) {
	s := startNamesrv(t, testConfig(t))
	good := newClient(t)
	m, _ := masterSlave()
	m.register(t, good, s.Addr())

	// Garbage bytes: the connection is dropped.
	g := rawConn(t, s.Addr())
	_, err := g.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	require.NoError(t, err)
	require.True(t, closedByPeer(g))

	// An oversize length prefix is refused before any body arrives.
	o := rawConn(t, s.Addr())
	_, err = o.Write([]byte{0x7F, 0xFF, 0xFF, 0xFF, 0, 0, 0, 0})
	require.NoError(t, err)
	require.True(t, closedByPeer(o))

	// A well-framed request with an unknown code gets REQUEST_CODE_NOT_SUPPORTED.
	u := rawConn(t, s.Addr())
	req := &codec.Frame{Code: 9999, Language: codec.LangJava, Version: javaClientVersion, Opaque: 42}
	_, err = u.Write(req.AppendTo(nil))
	require.NoError(t, err)
	resp := readFrame(t, u)
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code)
	require.Equal(t, " request type 9999 not supported", resp.Remark)
	require.Equal(t, int32(42), resp.Opaque)

	// Broken JSON bodies and truncated register bodies: SYSTEM_ERROR, connection kept.
	for i, b := range [][]byte{[]byte(`{"filterServerList":[`), []byte(`{{{{`), {0x78, 0x9c, 0x01}} {
		f := m.registerFrame(t)
		f.Body = b
		f.Opaque = int32(100 + i)
		if i == 2 {
			f.Set("compressed", "true")
		}
		_, err = u.Write(f.AppendTo(nil))
		require.NoError(t, err)
		resp = readFrame(t, u)
		require.Equal(t, int32(codec.RespSystemError), resp.Code)
		require.Equal(t, int32(100+i), resp.Opaque)
	}
	rt := &codec.Frame{Code: int32(codec.ReqRegisterTopicInNamesrv), Language: codec.LangJava, Opaque: 7, Body: []byte(`{"queueDatas":[{"brokerName":`)}
	rt.Set("topic", "X")
	_, err = u.Write(rt.AppendTo(nil))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSystemError), readFrame(t, u).Code)

	// A frame split into single bytes still decodes.
	q := request(codec.ReqGetRouteinfoByTopic, "topic", "TopicTest")
	q.Opaque = 77
	for _, c := range q.AppendTo(nil) {
		_, err = u.Write([]byte{c})
		require.NoError(t, err)
	}
	resp = readFrame(t, u)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, int32(77), resp.Opaque)

	// Everyone else is still served and nothing was corrupted.
	r := decodeRoute(t, getRoute(t, good, s.Addr(), "TopicTest", javaClientVersion))
	require.Equal(t, "broker-a", r.BrokerDatas[0].BrokerName)
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, good, s.Addr(), "X", javaClientVersion).Code)
}
