package remoting

import (
	"context"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/namesrv"
)

// cluster is a name server, two brokers of one cluster (broker-a,
// broker-b, both serving topic T with 2 queues) and the proxy, in
// process on loopback.
type cluster struct {
	ns      *namesrv.Server
	brokers map[string]*broker.Broker
	proxy   *Server
	admin   *transport.Client // straight to the brokers
}

func startCluster(t testing.TB) *cluster {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	nsCfg := namesrv.Default()
	nsCfg.BindAddress, nsCfg.ListenPort = "127.0.0.1", 0
	nsCfg.KVConfigPath = filepath.Join(dir, "ns", "kv.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "ns", "ns.properties")
	ns, err := namesrv.New(nsCfg, log)
	require.NoError(t, err)
	require.NoError(t, ns.Start())
	t.Cleanup(func() { ns.Close() })
	c := &cluster{ns: ns, brokers: map[string]*broker.Broker{}}
	c.admin = transport.NewClient(transport.ClientConfig{Logger: log})
	t.Cleanup(func() { c.admin.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, name := range []string{"broker-a", "broker-b"} {
		bc := broker.DefaultConfig()
		bc.BrokerName = name
		bc.StorePathRootDir = filepath.Join(dir, name)
		bc.ListenIP, bc.ListenPort, bc.BrokerIP1, bc.FastListen = "127.0.0.1", 0, "127.0.0.1", false
		bc.NamesrvAddr = ns.Addr()
		b, err := broker.New(bc, broker.Deps{Logger: log})
		require.NoError(t, err)
		require.NoError(t, b.Start())
		t.Cleanup(func() { b.Close() })
		c.brokers[name] = b
		resp := c.call(ctx, t, b.BrokerAddr(), codec.ReqUpdateAndCreateTopic, []codec.KV{
			{Key: "topic", Value: "T"}, {Key: "defaultTopic", Value: "TBW102"}, {Key: "readQueueNums", Value: "2"},
			{Key: "writeQueueNums", Value: "2"}, {Key: "perm", Value: "6"}, {Key: "topicFilterType", Value: "SINGLE_TAG"}, {Key: "order", Value: "false"}}, nil)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	c.proxy, err = Start(Config{Listen: "127.0.0.1:0", NamesrvAddrs: []string{ns.Addr()}, Logger: log})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.proxy.Close()) })
	// Both brokers registered with the topic.
	require.Eventually(t, func() bool {
		r, err := c.proxy.table.route(ctx, "T")
		return err == nil && len(r.QueueDatas) == 2
	}, 20*time.Second, 50*time.Millisecond)
	return c
}

func (c *cluster) call(ctx context.Context, t testing.TB, addr string, code codec.RequestCode, ext []codec.KV, b []byte) *codec.Frame {
	t.Helper()
	req := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion, Ext: ext, Body: b}
	resp, err := c.admin.Invoke(ctx, addr, req)
	require.NoError(t, err)
	return resp
}

// client is a remoting client of the proxy that answers the broker
// requests relayed to it.
type client struct {
	tc        *transport.Client
	notified  atomic.Int32
	runningID atomic.Value // clientId of the last GET_CONSUMER_RUNNING_INFO
}

func newClient(t testing.TB) *client {
	cl := &client{}
	r := transport.NewRouter()
	pool := transport.NewPool("test-client", 1, 16)
	t.Cleanup(pool.Close)
	r.Handle(codec.ReqNotifyConsumerIdsChanged, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		cl.notified.Add(1)
		return nil
	})
	r.Handle(codec.ReqGetConsumerRunningInfo, pool, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		cl.runningID.Store(req.Value("clientId"))
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = []byte(`{"properties":{"relayed":"yes"}}`)
		return resp
	})
	cl.tc = transport.NewClient(transport.ClientConfig{Logger: slog.New(slog.DiscardHandler), Router: r})
	t.Cleanup(func() { cl.tc.Close() })
	return cl
}

func (cl *client) invoke(ctx context.Context, t *testing.T, addr string, code codec.RequestCode, ext []codec.KV, b []byte) *codec.Frame {
	t.Helper()
	req := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion, Ext: ext, Body: b}
	resp, err := cl.tc.Invoke(ctx, addr, req)
	require.NoError(t, err)
	return resp
}

// The route hands out the proxy for every broker, in both key encodings.
func TestRouteHandsOutTheProxy(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newClient(t)
	resp := cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqGetRouteinfoByTopic, []codec.KV{{Key: "topic", Value: "T"}}, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "false", resp.Value(extTrace))
	r, err := body.DecodeTopicRouteData(resp.Body)
	require.NoError(t, err)
	require.Len(t, r.QueueDatas, 2)
	require.Len(t, r.BrokerDatas, 2)
	for _, bd := range r.BrokerDatas {
		require.Len(t, bd.BrokerAddrs, 1)
		require.Equal(t, c.proxy.AccessAddr(), bd.BrokerAddrs[0].Addr)
	}
	require.Contains(t, string(resp.Body), `"0":"`, "a 5.x requester gets quoted keys")
	old := &codec.Frame{Code: int32(codec.ReqGetRouteinfoByTopic), Language: codec.LangJava, Version: 300, Ext: []codec.KV{{Key: "topic", Value: "T"}}}
	resp, err = cl.tc.Invoke(ctx, c.proxy.Addr(), old)
	require.NoError(t, err)
	require.Contains(t, string(resp.Body), `{0:"`, "a requester before 4.9.4 gets fastjson's bare keys")

	resp = cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqGetRouteinfoByTopic, []codec.KV{{Key: "topic", Value: "NoSuchTopic"}}, nil)
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code, "the name server's answer is relayed")
	resp = cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqGetBrokerClusterInfo, nil, nil)
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code, "as Java's proxy: not a code it serves")
}

// Sends go to the broker they name; one that names none, where two
// brokers could take it, is refused as Java's proxy refuses it.
func TestSendByBrokerName(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cl := newClient(t)
	for i, name := range []string{"broker-b", "broker-b", "broker-a"} {
		resp := cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqSendMessageV2, []codec.KV{
			{Key: "a", Value: "PG"}, {Key: "b", Value: "T"}, {Key: "c", Value: "TBW102"}, {Key: "d", Value: "4"}, {Key: "e", Value: "1"},
			{Key: "f", Value: "0"}, {Key: "g", Value: strconv.FormatInt(time.Now().UnixMilli(), 10)}, {Key: "h", Value: "0"},
			{Key: "i", Value: "UNIQ_KEY\x01K" + strconv.Itoa(i) + "\x02"}, {Key: "n", Value: name}}, []byte("body"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		require.Equal(t, "1", resp.Value("queueId"))
	}
	for name, want := range map[string]string{"broker-a": "1", "broker-b": "2"} {
		resp := c.call(ctx, t, c.brokers[name].BrokerAddr(), codec.ReqGetMaxOffset, []codec.KV{{Key: "topic", Value: "T"}, {Key: "queueId", Value: "1"}}, nil)
		require.Equal(t, want, resp.Value("offset"), name)
	}
	// Through the proxy, GET_MAX_OFFSET with bname reads broker-b.
	resp := cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqGetMaxOffset, []codec.KV{{Key: "topic", Value: "T"}, {Key: "queueId", Value: "1"}, {Key: "bname", Value: "broker-b"}}, nil)
	require.Equal(t, "2", resp.Value("offset"))
	// No broker name and nothing to choose by.
	resp = cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqLockBatchMq, nil, []byte(`{"consumerGroup":"G","clientId":"x","mqSet":[]}`))
	require.Equal(t, int32(codec.RespVersionNotSupported), resp.Code)
	require.Equal(t, remarks.ProxyNoBrokerName, resp.Remark)
}

// A pull held by the broker returns as soon as a message arrives.
func TestPullLongPolling(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cl := newClient(t)
	hb := `{"clientID":"C1","producerDataSet":[],"consumerDataSet":[{"groupName":"PullG","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"topic":"T","subString":"*","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"TAG","classFilterMode":false}],"unitMode":false}]}`
	resp := cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqHeartBeat, nil, []byte(hb))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	type result struct {
		f   *codec.Frame
		err error
		at  time.Time
	}
	done := make(chan result, 1)
	go func() {
		req := &codec.Frame{Code: int32(codec.ReqPullMessage), Language: codec.LangJava, Version: codec.ServerVersion, Ext: []codec.KV{
			{Key: "consumerGroup", Value: "PullG"}, {Key: "topic", Value: "T"}, {Key: "queueId", Value: "0"}, {Key: "queueOffset", Value: "0"},
			{Key: "maxMsgNums", Value: "32"}, {Key: "sysFlag", Value: "2"}, {Key: "commitOffset", Value: "0"}, {Key: "suspendTimeoutMillis", Value: "15000"},
			{Key: "subscription", Value: "*"}, {Key: "subVersion", Value: "0"}, {Key: "expressionType", Value: "TAG"}, {Key: "bname", Value: "broker-a"}}}
		f, err := cl.tc.Invoke(ctx, c.proxy.Addr(), req)
		done <- result{f, err, time.Now()}
	}()
	// The pull is held (nothing to read yet) until the send below.
	select {
	case r := <-done:
		t.Fatalf("pull answered before any message: %+v %v", r.f, r.err)
	case <-time.After(500 * time.Millisecond):
	}
	sent := time.Now()
	resp = cl.invoke(ctx, t, c.proxy.Addr(), codec.ReqSendMessageV2, []codec.KV{
		{Key: "a", Value: "PG"}, {Key: "b", Value: "T"}, {Key: "c", Value: "TBW102"}, {Key: "d", Value: "4"}, {Key: "e", Value: "0"},
		{Key: "f", Value: "0"}, {Key: "g", Value: strconv.FormatInt(time.Now().UnixMilli(), 10)}, {Key: "h", Value: "0"}, {Key: "n", Value: "broker-a"}}, []byte("held"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespSuccess), r.f.Code, r.f.Remark)
	require.Contains(t, string(r.f.Body), "held")
	require.Less(t, r.at.Sub(sent), 10*time.Second, "woken by the arrival, not by the 15 s hold")
}

// A heartbeat through the proxy registers the client at every broker on
// its own connection; the brokers' requests for it reach it; when it
// leaves, the brokers drop it.
func TestHeartbeatAndCallbacks(t *testing.T) {
	c := startCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	a := newClient(t)
	hb := func(id string) []byte {
		return []byte(`{"clientID":"` + id + `","producerDataSet":[{"groupName":"PG"}],"consumerDataSet":[{"groupName":"CG","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":"T","subString":"*","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"TAG","classFilterMode":false}],"unitMode":false}]}`)
	}
	for range 2 { // a client heartbeats once per broker name of its routes
		resp := a.invoke(ctx, t, c.proxy.Addr(), codec.ReqHeartBeat, nil, hb("client-A"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	members := func(addr string) string {
		resp := c.call(ctx, t, addr, codec.ReqGetConsumerListByGroup, []codec.KV{{Key: "consumerGroup", Value: "CG"}}, nil)
		if resp.Code != int32(codec.RespSuccess) {
			return ""
		}
		return string(resp.Body)
	}
	for name, b := range c.brokers {
		require.Contains(t, members(b.BrokerAddr()), "client-A", name)
	}
	resp := a.invoke(ctx, t, c.proxy.Addr(), codec.ReqGetConsumerListByGroup, []codec.KV{{Key: "consumerGroup", Value: "CG"}}, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), "client-A")

	// A direct member joins at broker-a: broker-a tells client-A, through the proxy.
	direct := newClient(t)
	resp = direct.invoke(ctx, t, c.brokers["broker-a"].BrokerAddr(), codec.ReqHeartBeat, nil, hb("client-D"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return a.notified.Load() > 0 }, 10*time.Second, 20*time.Millisecond,
		"NOTIFY_CONSUMER_IDS_CHANGED relayed to the proxied client")

	// An admin asks broker-b for client-A's running info: relayed both ways.
	resp = c.call(ctx, t, c.brokers["broker-b"].BrokerAddr(), codec.ReqGetConsumerRunningInfo,
		[]codec.KV{{Key: "consumerGroup", Value: "CG"}, {Key: "clientId", Value: "client-A"}}, nil)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), "relayed")
	require.Equal(t, "client-A", a.runningID.Load())

	// client-A leaves: both brokers forget it.
	require.NoError(t, a.tc.Close())
	for name, b := range c.brokers {
		require.Eventually(t, func() bool { return !strings.Contains(members(b.BrokerAddr()), "client-A") }, 10*time.Second, 50*time.Millisecond, name)
	}
	require.Contains(t, members(c.brokers["broker-a"].BrokerAddr()), "client-D")
}

// BenchmarkSend compares a 1 KiB SEND_MESSAGE_V2 straight to the broker
// with the same send through the proxy (8 senders, everything in one
// process on loopback).
func BenchmarkSend(b *testing.B) {
	c := startCluster(b)
	ctx := context.Background()
	cl := newClient(b)
	payload := make([]byte, 1024)
	for _, target := range []struct{ name, addr string }{
		{"direct", c.brokers["broker-a"].BrokerAddr()}, {"proxy", c.proxy.Addr()}} {
		b.Run(target.name, func(b *testing.B) {
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			b.SetParallelism(4) // 8 senders on 2 cores
			var busy atomic.Int64
			defer func() { b.ReportMetric(float64(busy.Load())/float64(b.N), "busy/op") }()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					req := &codec.Frame{Code: int32(codec.ReqSendMessageV2), Language: codec.LangJava, Version: codec.ServerVersion, Ext: []codec.KV{
						{Key: "a", Value: "PG"}, {Key: "b", Value: "T"}, {Key: "c", Value: "TBW102"}, {Key: "d", Value: "4"}, {Key: "e", Value: "0"},
						{Key: "f", Value: "0"}, {Key: "g", Value: "1"}, {Key: "h", Value: "0"}, {Key: "n", Value: "broker-a"}}, Body: payload}
					resp, err := cl.tc.Invoke(ctx, target.addr, req)
					if err == nil && resp.Code == int32(codec.RespSystemBusy) {
						busy.Add(1) // the broker's fast failure on a loaded box
						continue
					}
					if err != nil || resp.Code != int32(codec.RespSuccess) {
						b.Fatalf("send: %v %+v", err, resp)
					}
				}
			})
		})
	}
}
