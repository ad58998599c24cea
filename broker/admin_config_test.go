package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

func updateConfig(t *testing.T, tb *testBroker, props string) *codec.Frame {
	t.Helper()
	req := request(codec.ReqUpdateBrokerConfig)
	req.Body = []byte(props)
	return tb.invoke(t, req)
}

func brokerConfigText(t *testing.T, tb *testBroker) string {
	t.Helper()
	resp := tb.invoke(t, request(codec.ReqGetBrokerConfig))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	return string(resp.Body)
}

func TestUpdateBrokerConfigPermission(t *testing.T) {
	ns := startNamesrv(t)
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte("# ours\nbrokerClusterName = C1\nbrokerName=broker-a\n"), 0o644))
	tb := startBroker(t, func(c *Config) {
		c.NamesrvAddr = ns
		c.BrokerConfigPath = confPath
		c.BrokerClusterName = "C1"
	})
	tb.topics.createIfAbsent("PT", 1, 6, 0)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("PT", 0, "", []byte("x"))).Code)
	tb.waitDispatched(t, "PT", 0, 1)
	require.Eventually(t, func() bool { return strings.Contains(string(tb.route(t, ns, "PT").Body), `"perm":6`) }, 5*time.Second, 10*time.Millisecond)

	// Read only: sends refused, pulls served, routes masked at once.
	resp := updateConfig(t, tb, "brokerPermission=4\n")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("PT", 0, "", []byte("x")))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, "the broker[127.0.0.1] sending message is forbidden", resp.Remark)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, pullReq("cg", "PT", 0, 0, pullFlagSubscription, 0, "*")).Code)
	require.Eventually(t, func() bool { return strings.Contains(string(tb.route(t, ns, "PT").Body), `"perm":4`) }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, brokerConfigText(t, tb), "\nbrokerPermission=4\n")

	// Persisted into the -c file, which still loads with its own keys.
	var reloaded Config
	_, err := reloaded.LoadFile(confPath)
	require.NoError(t, err)
	require.Equal(t, int32(4), reloaded.BrokerPermission)
	require.Equal(t, "C1", reloaded.BrokerClusterName)
	require.Equal(t, "broker-a", reloaded.BrokerName)

	// Write only: pulls refused.
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "brokerPermission=2").Code)
	resp = tb.invoke(t, pullReq("cg", "PT", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code)
	require.Equal(t, "the broker[127.0.0.1] pulling message is forbidden", resp.Remark)

	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "brokerPermission=6").Code)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("PT", 0, "", []byte("x"))).Code)
	require.Eventually(t, func() bool { return strings.Contains(string(tb.route(t, ns, "PT").Body), `"perm":6`) }, 5*time.Second, 10*time.Millisecond)
}

func TestUpdateBrokerConfigRules(t *testing.T) {
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	tb := startBroker(t, func(c *Config) {
		c.BrokerConfigPath = confPath
		c.ConfigBlackList = "configBlackList;brokerConfigPath;deleteWhen"
	})
	before := brokerConfigText(t, tb)

	// The black list refuses the whole update.
	for _, body := range []string{"brokerConfigPath=/tmp/x", "rocketmqHome=/opt", "configBlackList=", "deleteWhen=05\nbrokerPermission=4"} {
		resp := updateConfig(t, tb, body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark)
	}
	// A bad value fails it with nothing applied.
	resp := updateConfig(t, tb, "autoCreateSubscriptionGroup=false\nbrokerPermission=abc")
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Contains(t, resp.Remark, "brokerPermission")
	resp = updateConfig(t, tb, "messageDelayLevel=1x")
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, before, brokerConfigText(t, tb))
	_, err := os.Stat(confPath)
	require.True(t, os.IsNotExist(err), "nothing to persist yet")
	// Unknown keys and an empty body change nothing.
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "noSuchKey=1").Code)
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "").Code)
	require.Equal(t, before, brokerConfigText(t, tb))

	// Runtime switches take effect at once.
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "autoCreateSubscriptionGroup=false\nautoCreateTopicEnable=false").Code)
	resp = tb.invoke(t, pullReq("newgroup", TopicSelfTest, 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSubscriptionGroupNotExist), resp.Code)
	resp = tb.invoke(t, sendV1("BrandNew", 0, "", []byte("x")))
	require.Equal(t, int32(codec.RespTopicNotExist), resp.Code, resp.Remark)
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "autoCreateSubscriptionGroup=true\nautoCreateTopicEnable=true").Code)
	require.NotEqual(t, int32(codec.RespSubscriptionGroupNotExist), tb.invoke(t, pullReq("newgroup", TopicSelfTest, 0, 0, pullFlagSubscription, 0, "*")).Code)
	resp = tb.invoke(t, sendV1("BrandNew", 0, "", []byte("x")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	tb.topics.createIfAbsent("SQU", 1, 6, 0)
	require.Equal(t, int32(codec.RespSystemError), tb.invoke(t, sqlPull("cg", "SQU", 0, pullFlagSubscription, 0, "a = 1")).Code)
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "enablePropertyFilter=true").Code)
	require.Equal(t, int32(codec.RespPullNotFound), tb.invoke(t, sqlPull("cg", "SQU", 0, pullFlagSubscription, 0, "a = 1")).Code)

	// A restart-only key is reported and persisted but not applied.
	require.Equal(t, int32(codec.RespSuccess), updateConfig(t, tb, "messageDelayLevel=1s 2s").Code)
	require.Contains(t, brokerConfigText(t, tb), "\nmessageDelayLevel=1s 2s\n")
	require.Len(t, tb.delays.levels, 18)
	var reloaded Config
	_, err = reloaded.LoadFile(confPath)
	require.NoError(t, err)
	require.Equal(t, "1s 2s", reloaded.MessageDelayLevel)
	require.True(t, reloaded.EnablePropertyFilter)
	require.True(t, reloaded.AutoCreateTopicEnable)
}

// mqbroker -c: the file loaded becomes the one updates persist to.
func TestLoadFileRemembersPath(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "broker.conf")
	require.NoError(t, os.WriteFile(p, []byte("brokerName=x\n"), 0o644))
	cfg := DefaultConfig()
	_, err := cfg.LoadFile(p)
	require.NoError(t, err)
	require.Equal(t, p, cfg.BrokerConfigPath)
	other := filepath.Join(dir, "elsewhere.conf")
	require.NoError(t, os.WriteFile(p, []byte("brokerName=x\nbrokerConfigPath="+other+"\n"), 0o644))
	cfg = DefaultConfig()
	_, err = cfg.LoadFile(p)
	require.NoError(t, err)
	require.Equal(t, other, cfg.BrokerConfigPath)
}

// namesrvAddr changes at run time when refuseSensitiveRemoteConfig is off:
// the broker registers with the new list.
func TestUpdateBrokerConfigNamesrvAddr(t *testing.T) {
	nsA, nsB := startNamesrv(t), startNamesrv(t)
	tb := startBroker(t, func(c *Config) { c.NamesrvAddr, c.RefuseSensitiveRemoteConfig = nsA, false })
	require.Equal(t, int32(codec.RespSuccess), tb.route(t, nsA, "TBW102").Code)
	require.Equal(t, int32(codec.RespTopicNotExist), tb.route(t, nsB, "TBW102").Code)
	resp := updateConfig(t, tb, "namesrvAddr="+nsA+";"+nsB)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return tb.route(t, nsB, "TBW102").Code == int32(codec.RespSuccess) }, 5*time.Second, 10*time.Millisecond)
	require.Contains(t, brokerConfigText(t, tb), "\nnamesrvAddr="+nsA+";"+nsB+"\n")
	// Close unregisters from both.
	require.NoError(t, tb.Close())
	require.Equal(t, int32(codec.RespTopicNotExist), tb.route(t, nsB, "TBW102").Code)
	require.Equal(t, int32(codec.RespTopicNotExist), tb.route(t, nsA, "TBW102").Code)
}
