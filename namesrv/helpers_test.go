package namesrv

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// Versions requesters announce.
const (
	goClientVersion   = 317 // rocketmq-client-go v2: bare brokerAddrs keys
	javaClientVersion = 479 // V5_3_3: standard JSON
)

func testLogger() *slog.Logger {
	level := slog.LevelError + 1
	if os.Getenv("ROCKETGO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

func testConfig(t testing.TB) Config {
	cfg := Default()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	dir := t.TempDir()
	cfg.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	cfg.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	cfg.ClientRequestThreadPoolNums = 4
	cfg.DefaultThreadPoolNums = 4
	return cfg
}

func startNamesrv(t testing.TB, cfg Config) *Server {
	t.Helper()
	s, err := New(cfg, testLogger())
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func newClient(t testing.TB) *transport.Client {
	c := transport.NewClient(transport.ClientConfig{Logger: testLogger(), DialTimeout: time.Second})
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

func invoke(t testing.TB, c *transport.Client, addr string, req *codec.Frame) *codec.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if req.Version == 0 {
		req.Version = javaClientVersion
	}
	resp, err := c.Invoke(ctx, addr, req)
	require.NoError(t, err)
	return resp
}

func request(code codec.RequestCode, kv ...string) *codec.Frame {
	f := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: javaClientVersion}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Set(kv[i], kv[i+1])
	}
	return f
}

type fakeBroker struct {
	cluster, name, addr, ha string
	id                      int64
	topics                  []body.TopicConfig
	version                 body.TopicVersion
	compressed              bool
	actingMaster            *bool
}

func topics(names ...string) []body.TopicConfig {
	out := make([]body.TopicConfig, len(names))
	for i, n := range names {
		out[i] = body.TopicConfig{TopicName: n, ReadQueueNums: 4, WriteQueueNums: 4, Perm: 6, TopicFilterType: body.SingleTag, Attributes: map[string]string{}}
	}
	return out
}

func (b *fakeBroker) registerFrame(t testing.TB) *codec.Frame {
	h := header.RegisterBrokerRequest{BrokerName: b.name, BrokerAddr: b.addr, ClusterName: b.cluster, HaServerAddr: b.ha, BrokerID: b.id, Compressed: b.compressed}
	if b.actingMaster != nil {
		h.EnableActingMaster = *b.actingMaster
	}
	f := &codec.Frame{Code: int32(codec.ReqRegisterBroker), Language: codec.LangJava, Version: javaClientVersion}
	h.Encode(f)
	if b.actingMaster != nil {
		f.Set("enableActingMaster", strconv.FormatBool(*b.actingMaster))
	}
	rb := body.RegisterBrokerBody{DataVersion: b.version, Topics: b.topics, FilterServerList: []string{}}
	if b.compressed {
		enc, err := body.AppendRegisterBrokerBodyCompressed(nil, &rb, javaClientVersion)
		require.NoError(t, err)
		f.Body = enc
	} else {
		f.Body = body.AppendRegisterBrokerBody(nil, &rb)
	}
	return f
}

func (b *fakeBroker) register(t testing.TB, c *transport.Client, addr string) *codec.Frame {
	t.Helper()
	resp := invoke(t, c, addr, b.registerFrame(t))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	return resp
}

func getRoute(t testing.TB, c *transport.Client, addr, topic string, version int32) *codec.Frame {
	req := request(codec.ReqGetRouteinfoByTopic, "topic", topic)
	req.Version = version
	return invoke(t, c, addr, req)
}

func decodeRoute(t testing.TB, resp *codec.Frame) body.TopicRouteData {
	t.Helper()
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	r, err := body.DecodeTopicRouteData(resp.Body)
	require.NoError(t, err)
	return r
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("condition not met within %v: %s", within, msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func readFile(path string) (string, error) {
	b, err := os.ReadFile(path)
	return string(b), err
}
