package namesrv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// policyServer starts a name server from a -c file holding extra and
// returns it, the file and an UPDATE_NAMESRV_CONFIG sender.
func policyServer(t *testing.T, extra ...string) (*Server, string, func(string) *codec.Frame) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "namesrv.conf")
	lines := append([]string{"bindAddress=127.0.0.1", "listenPort=0", "kvConfigPath=" + filepath.Join(dir, "kvConfig.json")}, extra...)
	require.NoError(t, os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	s := startFromFile(t, path)
	c := newClient(t)
	return s, path, func(body string) *codec.Frame {
		u := request(codec.ReqUpdateNamesrvConfig)
		u.Body = []byte(body)
		return invoke(t, c, s.Addr(), u)
	}
}

func requireRefusedUnchanged(t *testing.T, s *Server, path string, update func(string) *codec.Frame, bodies ...string) {
	t.Helper()
	cfg := s.Config()
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, body := range bodies {
		resp := update(body)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, cfg, s.Config(), body)
		now, err := os.ReadFile(path)
		require.NoError(t, err)
		require.Equal(t, string(file), string(now), body)
	}
}

// By default (stricter than Java) UPDATE_NAMESRV_CONFIG refuses
// supportActingMaster, which makes routes present a slave as master, and
// the policy's own keys; the controller's peers and the server's address
// are refused as start-only keys. Other keys still apply. (The old name
// server took supportActingMaster=true and the policy keys.)
func TestUpdateNamesrvConfigRefusesSensitiveKeys(t *testing.T) {
	s, path, update := policyServer(t)
	requireRefusedUnchanged(t, s, path, update,
		"supportActingMaster=true\n",
		"orderMessageEnable=true\nsupportActingMaster=true\n", // one refused key refuses all
		"refuseSensitiveRemoteConfig=false\n",
		"refuseSensitiveRemoteConfig=false\nsupportActingMaster=true\n",
		"sensitiveRemoteConfigKeys=\n",
		"controllerDLegerPeers=n0-127.0.0.1:1\n",
		"controllerDLegerSelfId=n9\n",
		"bindAddress=0.0.0.0\n",
	)
	require.False(t, s.Config().SupportActingMaster)
	require.Equal(t, int32(codec.RespSuccess), update("orderMessageEnable=true\n").Code)
	require.True(t, s.Config().OrderMessageEnable)
}

// sensitiveRemoteConfigKeys adds keys; refuseSensitiveRemoteConfig=false
// takes the sensitive ones as Java does, and persists them, while the
// policy's own keys stay refused.
func TestUpdateNamesrvConfigPolicyFromFile(t *testing.T) {
	s, path, update := policyServer(t, "sensitiveRemoteConfigKeys=orderMessageEnable;deleteTopicWithBrokerRegistration")
	requireRefusedUnchanged(t, s, path, update, "orderMessageEnable=true\n", "deleteTopicWithBrokerRegistration=true\n", "supportActingMaster=true\n")
	require.Equal(t, int32(codec.RespSuccess), update("enableTopicList=false\n").Code)

	s, path, update = policyServer(t, "refuseSensitiveRemoteConfig=false", "sensitiveRemoteConfigKeys=orderMessageEnable")
	resp := update("supportActingMaster=true\norderMessageEnable=true\n")
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.True(t, s.Config().SupportActingMaster)
	require.True(t, s.Config().OrderMessageEnable)
	stored, err := readFile(path)
	require.NoError(t, err)
	require.Contains(t, stored, "supportActingMaster=true\n")
	require.Contains(t, stored, "refuseSensitiveRemoteConfig=false\n")
	requireRefusedUnchanged(t, s, path, update, "refuseSensitiveRemoteConfig=true\n", "sensitiveRemoteConfigKeys=\n", "listenPort=1\n")
}
