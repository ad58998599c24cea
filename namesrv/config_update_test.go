package namesrv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// startFromFile starts a server the way cmd/mqnamesrv does from -c path.
func startFromFile(t *testing.T, path string) *Server {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	p, err := javaprops.Parse(data)
	require.NoError(t, err)
	cfg, err := fromFile(p, path)
	require.NoError(t, err)
	s, err := New(cfg, testLogger())
	require.NoError(t, err)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

// TestUpdateNamesrvConfigCannotBrickRestart: the update
// (listenPort and enableControllerInNamesrv=true, persisted into the -c
// file; the restart listened elsewhere and stopped for want of controller
// peers) and every other key read only at start are refused with Java's
// black-list answer; values out of range with SYSTEM_ERROR naming the key.
// Neither the running configuration nor the file changes. A valid update
// applies, is persisted next to the file's controller keys, and the server
// starts again from the file with the same settings. The old code took
// listenPort and enableControllerInNamesrv and wrote them to the file.
func TestUpdateNamesrvConfigCannotBrickRestart(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "namesrv.conf")
	require.NoError(t, os.WriteFile(path, []byte(strings.Join([]string{
		"bindAddress=127.0.0.1",
		"listenPort=0",
		"kvConfigPath=" + filepath.Join(dir, "kvConfig.json"),
		"clientRequestThreadPoolNums=4",
		"defaultThreadPoolNums=4",
		"controllerDLegerGroup=group1", // the controller's, kept as they are
		"controllerDLegerPeers=n0-127.0.0.1:9878",
		"",
	}, "\n")), 0o644))
	s := startFromFile(t, path)
	c := newClient(t)
	update := func(body string) *codec.Frame {
		u := request(codec.ReqUpdateNamesrvConfig)
		u.Body = []byte(body)
		return invoke(t, c, s.Addr(), u)
	}
	fileBefore, err := os.ReadFile(path)
	require.NoError(t, err)
	cfgBefore := s.Config()

	for _, body := range []string{
		"listenPort=19999\nenableControllerInNamesrv=true\n", // the issue's
		"listenPort=19999\n",
		"enableControllerInNamesrv=true\n",
		"bindAddress=10.0.0.1\n",
		"controllerDLegerPeers=\n",
		"controllerType=jRaft\n",
		"enableElectUncleanMaster=true\n",
		"scanNotActiveBrokerInterval=1\n",
		"clientRequestThreadPoolNums=100000\n",
		"defaultThreadPoolQueueCapacity=2000000000\n",
		"serverChannelMaxIdleTimeSeconds=1\n",
		"maxRouteTableBytes=999999999999\n",
		"orderMessageEnable=true\nlistenPort=19999\n", // one refused key refuses all
	} {
		resp := update(body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, cfgBefore, s.Config(), body)
		fileNow, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, string(fileBefore), string(fileNow), body)
	}
	for _, tc := range []struct{ body, key string }{
		{"brokerChannelExpiredTime=0\n", "brokerChannelExpiredTime"},
		{"brokerChannelExpiredTime=-5\n", "brokerChannelExpiredTime"},
		{"waitSecondsForService=-1\n", "waitSecondsForService"},
		{"brokerChannelExpiredTime=99999999999999999999\n", "brokerChannelExpiredTime"}, // past int64
		{"waitSecondsForService=many\n", "waitSecondsForService"},
		{"orderMessageEnable=true\nbrokerChannelExpiredTime=0\n", "brokerChannelExpiredTime"},
	} {
		resp := update(tc.body)
		require.Equal(t, int32(codec.RespSystemError), resp.Code, tc.body)
		require.Contains(t, resp.Remark, tc.key, tc.body)
		require.Equal(t, cfgBefore, s.Config(), tc.body)
		fileNow, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, string(fileBefore), string(fileNow), tc.body)
	}

	resp := update("orderMessageEnable=true\nbrokerChannelExpiredTime=60000\nproductEnvName=x\\nlistenPort=1\n")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	live := s.Config()
	require.True(t, live.OrderMessageEnable)
	require.Equal(t, "x\nlistenPort=1", live.ProductEnvName)
	stored, err := readFile(path)
	require.NoError(t, err)
	require.Contains(t, stored, "orderMessageEnable=true\n")
	require.Contains(t, stored, "brokerChannelExpiredTime=60000\n")
	require.Contains(t, stored, "controllerDLegerGroup=group1\n")
	require.Contains(t, stored, "controllerDLegerPeers=n0-127.0.0.1\\:9878\n")

	require.NoError(t, s.Close())
	again := startFromFile(t, path)
	require.Equal(t, live, again.Config(), "the restart has the settings the server ran with")
	require.Equal(t, int32(codec.RespTopicNotExist), getRoute(t, c, again.Addr(), "Nope", javaClientVersion).Code)
}

// startsAs refuses a file a start would read differently or not at all.
func TestStartsAs(t *testing.T) {
	cfg := testConfig(t)
	cfg.OrderMessageEnable = true
	file, err := configFile(&cfg)
	require.NoError(t, err)
	require.NoError(t, startsAs(file, &cfg))
	require.ErrorContains(t, startsAs([]byte(strings.Replace(string(file), "orderMessageEnable=true", "orderMessageEnable=false", 1)), &cfg), "other settings")
	require.ErrorContains(t, startsAs(append(file, "brokerChannelExpiredTime=0\n"...), &cfg), "would not start")
}
