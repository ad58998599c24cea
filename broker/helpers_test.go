package broker

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store"
)

func testLogger() *slog.Logger {
	if os.Getenv("BROKER_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

// testStoreConfig is a small store for tests: 4 MiB segments and a tiny index.
func testStoreConfig(cfg *Config) store.Config {
	sc := StoreConfig(cfg, testLogger())
	sc.MappedFileSizeConsumeQueue = 1000 * store.CQUnitSize
	sc.MaxHashSlotNum = 1000
	sc.MaxIndexNum = 4000
	return sc
}

func testConfig(root string) Config {
	cfg := DefaultConfig()
	cfg.BrokerName = "broker-a"
	cfg.BrokerIP1 = "127.0.0.1"
	cfg.ListenIP = "127.0.0.1"
	cfg.ListenPort = 0
	cfg.FastListen = false
	cfg.StorePathRootDir = root
	cfg.MaxMessageSize = 1 << 20
	cfg.MappedFileSizeCommitLog = 4 << 20
	return cfg
}

type testBroker struct {
	*Broker
	cli  *transport.Client
	addr string
}

// startBroker runs a broker on 127.0.0.1 with a temp store; everything is
// closed at cleanup.
func startBroker(t testing.TB, mutate func(*Config)) *testBroker {
	t.Helper()
	tb, _ := startBrokerAt(t, t.TempDir(), mutate)
	return tb
}

// startBrokerAt runs a broker on an existing store root; stop closes it
// (also registered as cleanup, once).
func startBrokerAt(t testing.TB, root string, mutate func(*Config)) (tb *testBroker, stop func()) {
	t.Helper()
	cfg := testConfig(root)
	if mutate != nil {
		mutate(&cfg)
	}
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	b, err := New(cfg, Deps{Logger: testLogger(), Store: st})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		require.NoError(t, b.Close())
		require.NoError(t, st.Close())
	}
	t.Cleanup(stop)
	return &testBroker{Broker: b, cli: newTestClient(t), addr: b.Addr()}, stop
}

func (tb *testBroker) invoke(t *testing.T, req *codec.Frame) *codec.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := tb.cli.Invoke(ctx, tb.addr, req)
	require.NoError(t, err)
	return resp
}

func request(code codec.RequestCode, kv ...string) *codec.Frame {
	f := &codec.Frame{Code: int32(code), Language: codec.LangGo, Version: 317}
	for i := 0; i+1 < len(kv); i += 2 {
		f.Ext = append(f.Ext, codec.KV{Key: kv[i], Value: kv[i+1]})
	}
	return f
}

// sendV1 builds a Go-client style SEND_MESSAGE.
func sendV1(topic string, queueID int, props string, body []byte) *codec.Frame {
	f := request(codec.ReqSendMessage,
		"producerGroup", "pg", "topic", topic, "queueId", strconv.Itoa(queueID), "sysFlag", "0",
		"bornTimestamp", strconv.FormatInt(time.Now().UnixMilli(), 10), "flag", "0", "properties", props,
		"reconsumeTimes", "0", "unitMode", "false", "maxReconsumeTimes", "0", "batch", "false",
		"defaultTopic", "TBW102", "defaultTopicQueueNums", "4", "bname", "broker-a")
	f.Body = body
	return f
}

func props(kv ...string) string {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = message.AppendProperty(b, kv[i], kv[i+1])
	}
	return string(b)
}

func pullReq(group, topic string, queueID int, offset int64, sysFlag int, suspendMs int64, sub string) *codec.Frame {
	return request(codec.ReqPullMessage,
		"consumerGroup", group, "topic", topic, "queueId", strconv.Itoa(queueID),
		"queueOffset", strconv.FormatInt(offset, 10), "maxMsgNums", "32", "sysFlag", strconv.Itoa(sysFlag),
		"commitOffset", "0", "suspendTimeoutMillis", strconv.FormatInt(suspendMs, 10),
		"subscription", sub, "subVersion", "0", "expressionType", "TAG")
}

// decodeRecords splits a pull body into decoded records.
func decodeRecords(t *testing.T, b []byte) []message.Ext {
	t.Helper()
	var out []message.Ext
	for len(b) > 0 {
		var e message.Ext
		require.NoError(t, message.Decode(b, &e))
		out = append(out, e)
		b = b[e.TotalSize:]
	}
	return out
}

func ext(t *testing.T, f *codec.Frame, key string) string {
	t.Helper()
	v, ok := f.Get(key)
	require.True(t, ok, "missing %s in %+v", key, f.Ext)
	return v
}

// waitDispatched waits until the queue's max offset reaches n (the store
// dispatches consume-queue units asynchronously).
func (tb *testBroker) waitDispatched(t *testing.T, topic string, q int32, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return tb.store.MaxOffset(topic, q) >= n }, 5*time.Second, time.Millisecond)
}

func openTestStore(cfg *Config) (*store.Store, error) { return store.Open(testStoreConfig(cfg)) }

func newTestClient(t testing.TB) *transport.Client {
	cli := transport.NewClient(transport.ClientConfig{Logger: testLogger(), DialTimeout: 2 * time.Second})
	t.Cleanup(func() { cli.Close() })
	return cli
}
