package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// fileValue is key's value in the properties file at path.
func fileValue(t *testing.T, path, key string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p, err := javaprops.Parse(data)
	require.NoError(t, err)
	v, ok := p.Get(key)
	require.True(t, ok, key)
	return v
}

// Keys that re-home the broker are refused by default (stricter than
// Java, which took namesrvAddr from anyone: the broker then registered
// with the caller's name servers): nothing applied or written, and the
// broker keeps registering with its own name server. brokerPermission, the
// key operators drain a broker with, still applies. The policy's own keys
// are never taken remotely. (The old broker took namesrvAddr=127.0.0.1:1
// and refreshed the -c file with it.)
func TestUpdateBrokerConfigRefusesSensitiveKeys(t *testing.T) {
	ns := startNamesrv(t)
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(updateTestConf+"namesrvAddr="+ns+"\n"), 0o644))
	tb, _ := startFromFile(t, t.TempDir(), confPath)
	tb.topics.createIfAbsent("PolicyT", 1, 6, 0)
	tb.reg.changed()
	require.Eventually(t, func() bool { return strings.Contains(string(tb.route(t, ns, "PolicyT").Body), `"perm":6`) }, 5*time.Second, 10*time.Millisecond)
	before := readConfigState(t, tb, confPath)

	for _, body := range []string{
		"namesrvAddr=127.0.0.1:1",
		"namesrvAddr=",
		"brokerPermission=6\nnamesrvAddr=127.0.0.1:1", // one refused key refuses all
		"fetchNamesrvAddrByAddressServer=true",
		"fetchNameSrvAddrByDnsLookup=true",
		"brokerElectionPriority=0",
		"asyncLearner=true",
		"enableSlaveActingMaster=true",
		"metricsGrpcExporterTarget=127.0.0.1:1",
		"refuseSensitiveRemoteConfig=false",
		"refuseSensitiveRemoteConfig=false\nnamesrvAddr=127.0.0.1:1",
		"sensitiveRemoteConfigKeys=",
	} {
		resp := updateConfig(t, tb, body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, before, readConfigState(t, tb, confPath), body)
	}
	require.Equal(t, []string{ns}, tb.live.namesrvAddrs())
	tb.cfgMu.Lock()
	require.Empty(t, tb.pending)
	tb.cfgMu.Unlock()

	// brokerPermission applies by default, and the registration it
	// triggers goes to the broker's own name server.
	resp := updateConfig(t, tb, "brokerPermission=4")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return strings.Contains(string(tb.route(t, ns, "PolicyT").Body), `"perm":4`) }, 5*time.Second, 10*time.Millisecond)
	resp = updateConfig(t, tb, "brokerPermission=6")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, int32(6), tb.live.perm.Load())
	require.Eventually(t, func() bool { return strings.Contains(string(tb.route(t, ns, "PolicyT").Body), `"perm":6`) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, ns, fileValue(t, confPath, "namesrvAddr"))
	require.Equal(t, "6", fileValue(t, confPath, "brokerPermission"))
}

// sensitiveRemoteConfigKeys in broker.conf adds keys to the policy:
// listed, brokerPermission is refused like namesrvAddr; unlisted keys
// still apply.
func TestUpdateBrokerConfigPolicyExtraKeys(t *testing.T) {
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(updateTestConf+"sensitiveRemoteConfigKeys=brokerPermission; deleteWhen\n"), 0o644))
	tb, _ := startFromFile(t, t.TempDir(), confPath)
	before := readConfigState(t, tb, confPath)
	for _, body := range []string{"brokerPermission=6", "brokerPermission=4", "deleteWhen=05", "shortPollingTimeMills=500\nbrokerPermission=2", "namesrvAddr=127.0.0.1:1"} {
		resp := updateConfig(t, tb, body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, before, readConfigState(t, tb, confPath), body)
	}
	require.Equal(t, int32(6), tb.live.perm.Load())
	resp := updateConfig(t, tb, "shortPollingTimeMills=500")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, int64(500), tb.live.shortPollMs.Load())
}

// refuseSensitiveRemoteConfig=false in broker.conf takes the sensitive
// keys as Java does (the listed extras too): namesrvAddr applies and the
// broker registers with the new list. The black list, the start-up keys
// and the policy's own keys stay refused.
func TestUpdateBrokerConfigPolicyOff(t *testing.T) {
	nsA, nsB := startNamesrv(t), startNamesrv(t)
	confPath := filepath.Join(t.TempDir(), "broker.conf")
	require.NoError(t, os.WriteFile(confPath, []byte(updateTestConf+"namesrvAddr="+nsA+"\nrefuseSensitiveRemoteConfig=false\nsensitiveRemoteConfigKeys=brokerPermission\n"), 0o644))
	tb, _ := startFromFile(t, t.TempDir(), confPath)
	require.Equal(t, int32(codec.RespTopicNotExist), tb.route(t, nsB, "TBW102").Code)

	resp := updateConfig(t, tb, "namesrvAddr="+nsA+";"+nsB+"\nbrokerPermission=4")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool { return tb.route(t, nsB, "TBW102").Code == int32(codec.RespSuccess) }, 5*time.Second, 10*time.Millisecond)
	require.Equal(t, int32(4), tb.live.perm.Load())
	require.Equal(t, nsA+";"+nsB, fileValue(t, confPath, "namesrvAddr"))

	for _, body := range []string{"refuseSensitiveRemoteConfig=true", "sensitiveRemoteConfigKeys=", "listenPort=1", "storePathRootDir=/tmp/x"} {
		resp := updateConfig(t, tb, body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
	}
}
