package broker

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/namesrv"
)

func startNamesrv(t *testing.T) string {
	t.Helper()
	cfg := namesrv.Default()
	cfg.BindAddress = "127.0.0.1"
	cfg.ListenPort = 0
	dir := t.TempDir()
	cfg.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	cfg.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	ns, err := namesrv.New(cfg, testLogger())
	require.NoError(t, err)
	require.NoError(t, ns.Start())
	t.Cleanup(func() { ns.Close() })
	return ns.Addr()
}

func (tb *testBroker) route(t *testing.T, ns, topic string) *codec.Frame {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := tb.cli.Invoke(ctx, ns, request(codec.ReqGetRouteinfoByTopic, "topic", topic))
	require.NoError(t, err)
	return resp
}

func TestRegistersWithNameServer(t *testing.T) {
	ns := startNamesrv(t)
	tb := startBroker(t, func(c *Config) { c.NamesrvAddr = ns; c.FastListen = true })

	// Registered at start: TBW102 and the cluster topic route to us.
	resp := tb.route(t, ns, "TBW102")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), tb.BrokerAddr())
	require.Contains(t, string(resp.Body), `"perm":7`)

	// An auto-created topic and a heartbeat-created retry topic are
	// registered at once.
	require.Equal(t, int32(codec.RespTopicNotExist), tb.route(t, ns, "NewTopic").Code)
	send := tb.invoke(t, sendV1("NewTopic", 0, "", []byte("x")))
	require.Equal(t, int32(codec.RespSuccess), send.Code)
	require.Eventually(t, func() bool { return tb.route(t, ns, "NewTopic").Code == int32(codec.RespSuccess) }, 5*time.Second, 10*time.Millisecond)
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("10.0.0.1@1", "grp", "NewTopic", "*")
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, hb).Code)
	require.Eventually(t, func() bool { return tb.route(t, ns, "%RETRY%grp").Code == int32(codec.RespSuccess) }, 5*time.Second, 10*time.Millisecond)

	// The VIP port serves sends but not pulls.
	fast := tb.FastAddr()
	require.NotEmpty(t, fast)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	r, err := tb.cli.Invoke(ctx, fast, sendV1("NewTopic", 0, "", []byte("vip")))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), r.Code, r.Remark)
	r, err = tb.cli.Invoke(ctx, fast, pullReq("grp", "NewTopic", 0, 0, pullFlagSubscription, 0, "*"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), r.Code)

	// Close unregisters.
	require.NoError(t, tb.Close())
	resp = tb.route(t, ns, "NewTopic")
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code)
	require.True(t, strings.HasPrefix(resp.Remark, "No topic route info in name server for the topic: NewTopic"), resp.Remark)
}

// Two brokers run side by side in one process and share a name server.
func TestTwoBrokersOneProcess(t *testing.T) {
	ns := startNamesrv(t)
	a := startBroker(t, func(c *Config) { c.NamesrvAddr = ns; c.BrokerName = "broker-a" })
	b := startBroker(t, func(c *Config) { c.NamesrvAddr = ns; c.BrokerName = "broker-b" })
	resp := a.route(t, ns, "DefaultCluster")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), a.BrokerAddr())
	require.Contains(t, string(resp.Body), b.BrokerAddr())
	require.Equal(t, int32(codec.RespSuccess), a.invoke(t, sendV1("Shared", 0, "", []byte("a"))).Code)
	require.Equal(t, int32(codec.RespSuccess), b.invoke(t, sendV1("Shared", 0, "", []byte("b"))).Code)
	a.waitDispatched(t, "Shared", 0, 1)
	b.waitDispatched(t, "Shared", 0, 1)
}

// A broker whose port is taken fails to start and closes cleanly.
func TestStartFailsOnBusyPort(t *testing.T) {
	a := startBroker(t, nil)
	root := t.TempDir()
	cfg := testConfig(root)
	_, port, _ := strings.Cut(a.Addr(), ":")
	require.NoError(t, func() error { _, err := cfg.Set("listenPort", port); return err }())
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	defer st.Close()
	b, err := New(cfg, Deps{Logger: testLogger(), Store: st})
	require.NoError(t, err)
	require.Error(t, b.Start())
	require.NoError(t, b.Close())
}

// A heartbeat that creates its group's retry topic is answered only once
// the name server routes that topic, as Java's broker does: the official
// clients read the route right after their first heartbeat, and a miss
// waits out their 30 s refresh before any retry is pulled (issue #19 S3).
func TestHeartbeatRetryTopicRoutedBeforeReply(t *testing.T) {
	ns := startNamesrv(t)
	tb := startBroker(t, func(c *Config) { c.NamesrvAddr = ns })
	tb.topics.createIfAbsent("HBR", 4, 6, 0)
	for i := range 20 {
		group := "hbr" + strconv.Itoa(i)
		hb := request(codec.ReqHeartBeat)
		hb.Body = goHeartbeat("127.0.0.1@1", group, "HBR", "*")
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, hb).Code)
		resp := tb.route(t, ns, "%RETRY%"+group)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, "heartbeat %d: %s", i, resp.Remark)
	}
}
