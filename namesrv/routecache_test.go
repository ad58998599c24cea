package namesrv

import (
	"fmt"
	"net"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport/transporttest"
)

// bigRouteServer is a server (not listening) whose topic big-route is on
// n brokers with filters filter servers each: n=2000, filters=20 make a
// 1.3 MB route.
func bigRouteServer(t testing.TB, n, filters int) *Server {
	s, err := New(testConfig(t), testLogger())
	require.NoError(t, err)
	for i := range n {
		r := testRegistration("big", "bigroute-broker-"+strconv.Itoa(i), fmt.Sprintf("10.55.%d.%d:10911", i/250, i%250), []string{"big-route", "own-" + strconv.Itoa(i)})
		r.body.FilterServerList = distinctStrings(filters, 18, "10.77.1.")
		_, ok := s.routes.register(r)
		require.True(t, ok)
	}
	return s
}

func routeRequest(topic string) *codec.Frame {
	return request(codec.ReqGetRouteinfoByTopic, "topic", topic)
}

// BenchmarkBigRoute: a 1.3 MB route built and encoded for each request
// (build) and answered by the handler from the route cache (handler).
func BenchmarkBigRoute(b *testing.B) {
	s := bigRouteServer(b, 2000, 20)
	b.Run("build", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			r, _ := s.routes.route("big-route", false)
			out := body.AppendTopicRouteData(make([]byte, 0, 512), &r, true)
			b.SetBytes(int64(len(out)))
		}
	})
	b.Run("handler", func(b *testing.B) {
		b.ReportAllocs()
		req := routeRequest("big-route")
		for b.Loop() {
			resp := s.getRouteInfo(nil, req)
			b.SetBytes(int64(len(resp.Body)))
		}
	})
}

// The route cache answers a big route from one encoding until anything
// in the table, the order config or the flavour asked for changes; zone
// mode and small routes are built each time.
func TestRouteCacheFollowsChanges(t *testing.T) {
	s := bigRouteServer(t, 400, 20)
	get := func(f *codec.Frame) []byte {
		resp := s.getRouteInfo(nil, f)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		return resp.Body
	}
	fresh := func(browser bool) []byte {
		r, found := s.routes.route("big-route", s.Config().SupportActingMaster)
		require.True(t, found)
		if s.Config().OrderMessageEnable {
			r.OrderTopicConf, _ = s.kv.get(namespaceOrderTopicConfig, "big-route")
		}
		return body.AppendTopicRouteData(nil, &r, browser)
	}
	first := get(routeRequest("big-route"))
	require.Greater(t, len(first), routeCacheMin)
	again := get(routeRequest("big-route"))
	require.Same(t, &first[0], &again[0], "the second answer is the cached body")

	old := routeRequest("big-route")
	old.Version = goClientVersion
	require.Equal(t, string(fresh(false)), string(get(old)), "another flavour is its own entry")
	require.Equal(t, string(fresh(true)), string(get(routeRequest("big-route"))))

	s.routes.setWritePerm("bigroute-broker-7", true)
	require.Equal(t, string(fresh(true)), string(get(routeRequest("big-route"))), "after a change in the table")
	require.NotEqual(t, string(first), string(get(routeRequest("big-route"))))

	r := testRegistration("big", "late", "10.66.0.1:10911", []string{"big-route", "late-own"})
	_, ok := s.routes.register(r)
	require.True(t, ok)
	require.Contains(t, string(get(routeRequest("big-route"))), `"late"`)

	cfg := s.Config()
	cfg.OrderMessageEnable = true
	s.cfg.Store(&cfg)
	require.NoError(t, s.kv.put(namespaceOrderTopicConfig, "big-route", "late:4", 1<<20, 1<<20))
	require.Contains(t, string(get(routeRequest("big-route"))), `"orderTopicConf":"late:4"`)
	require.NoError(t, s.kv.put(namespaceOrderTopicConfig, "big-route", "late:8", 1<<20, 1<<20))
	require.Contains(t, string(get(routeRequest("big-route"))), `"orderTopicConf":"late:8"`)

	zoned := routeRequest("big-route")
	zoned.Set("__ZONE_NAME", "z1")
	zoned.Set("__ZONE_MODE", "true")
	z1 := get(zoned)
	require.NotSame(t, &z1[0], &get(zoned)[0], "zone mode is built each time")

	s.routes.unregister("big", "10.66.0.1:10911", "late")
	require.NotContains(t, string(get(routeRequest("big-route"))), `"late"`)
	require.LessOrEqual(t, s.routeCache.bytes, routeCacheBytes)
}

// Two clients asking for a 1.3 MB route over and over without reading
// its replies do not make the server slow for others: their queued
// requests are answered from the route cache (the transport bounds the
// replies they leave unread, and closes them past the bound). The old
// code built every reply (22–29 ms each), 2 × 1024 queued requests of
// them, so another client's query waited tens of seconds.
func TestNonReadingBigRouteClientsDoNotStallOthers(t *testing.T) {
	cfg := testConfig(t)
	s, err := New(cfg, testLogger())
	require.NoError(t, err)
	for i := range 2000 {
		r := testRegistration("big", "bigroute-broker-"+strconv.Itoa(i), fmt.Sprintf("10.55.%d.%d:10911", i/250, i%250), []string{"big-route", "own-" + strconv.Itoa(i)})
		r.body.FilterServerList = distinctStrings(20, 18, "10.77.1.")
		_, ok := s.routes.register(r)
		require.True(t, ok)
	}
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })

	attackers := []net.Conn{rawConn(t, s.Addr()), rawConn(t, s.Addr())}
	var closeOnce sync.Once
	abort := func() {
		closeOnce.Do(func() {
			for _, nc := range attackers {
				nc.Close()
			}
		})
	}
	defer abort()
	w := transporttest.WatchHeap(t, 512<<20, abort)
	defer w.Stop()
	frame := routeRequest("big-route")
	var sent atomic.Int64
	var wg sync.WaitGroup
	for _, nc := range attackers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 5000 {
				f := *frame
				f.Opaque = int32(i)
				if _, err := nc.Write(f.AppendTo(nil)); err != nil {
					return // closed: by the transport's bound or by abort
				}
				sent.Add(1)
			}
		}()
	}
	// Wait until the attack is under way: the attackers' first 2 × 1024
	// requests are in.
	for sent.Load() < 2048 && !w.Tripped() {
		runtime.Gosched()
	}

	c := newClient(t)
	var lat []time.Duration
	for i := range 40 {
		start := time.Now()
		resp := getRoute(t, c, s.Addr(), "own-"+strconv.Itoa(i), javaClientVersion)
		lat = append(lat, time.Since(start))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	abort()
	wg.Wait()
	require.False(t, w.Tripped())
	slices.Sort(lat)
	t.Logf("%d big-route requests written unread; other queries p50 %v max %v; heap peak %d MiB",
		sent.Load(), lat[len(lat)/2], lat[len(lat)-1], w.Peak()>>20)
	require.Less(t, lat[len(lat)/2], 200*time.Millisecond)
	require.Less(t, lat[len(lat)-1], 3*time.Second)
}
