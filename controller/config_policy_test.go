package controller

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// applyConf sets config-file keys on c, as cmd/mqcontroller reads them.
func applyConf(t *testing.T, c *Config, text string) {
	t.Helper()
	p, err := javaprops.Parse([]byte(text))
	require.NoError(t, err)
	_, err = c.Apply(p)
	require.NoError(t, err)
}

// UPDATE_CONTROLLER_CONFIG refuses, with Java's black-list answer and
// nothing applied, the group's membership and addresses (always), the
// policy's own keys, the jRaft and metrics addresses, and the keys the
// operator lists in sensitiveRemoteConfigKeys (stricter than Java). The
// old controller took electMasterMaxRetryCount although listed, and the
// policy keys.
func TestUpdateControllerConfigPolicy(t *testing.T) {
	g := startGroup(t, 1, func(c *Config) { applyConf(t, c, "sensitiveRemoteConfigKeys=electMasterMaxRetryCount\n") })
	li := g.leader()
	leader := g.nodes[li].Addr()
	before := g.nodes[li].Config()
	for _, body := range []string{
		"electMasterMaxRetryCount=5\n",
		"notifyBrokerRoleChanged=false\nelectMasterMaxRetryCount=5\n", // one refused key refuses all
		"refuseSensitiveRemoteConfig=false\n",
		"sensitiveRemoteConfigKeys=\n",
		"jRaftInitConf=127.0.0.1:1\n",
		"metricsGrpcExporterTarget=127.0.0.1:1\n",
		"controllerDLegerPeers=n0-127.0.0.1:1\n",
		"controllerDLegerSelfId=n9\n",
		"controllerRaftPeers=n0-127.0.0.1:1\n",
	} {
		resp := g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte(body))
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
		require.Equal(t, before, g.nodes[li].Config(), body)
	}
	resp := g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("notifyBrokerRoleChanged=false\n"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.False(t, g.nodes[li].Config().NotifyBrokerRoleChanged)
}

// refuseSensitiveRemoteConfig=false takes the listed keys as Java does;
// the membership keys and the policy's own stay refused.
func TestUpdateControllerConfigPolicyOff(t *testing.T) {
	g := startGroup(t, 1, func(c *Config) {
		applyConf(t, c, "refuseSensitiveRemoteConfig=false\nsensitiveRemoteConfigKeys=electMasterMaxRetryCount\n")
	})
	li := g.leader()
	leader := g.nodes[li].Addr()
	resp := g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte("electMasterMaxRetryCount=5\n"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, 5, g.nodes[li].Config().ElectMasterMaxRetryCount)
	for _, body := range []string{"refuseSensitiveRemoteConfig=true\n", "sensitiveRemoteConfigKeys=\n", "controllerDLegerPeers=n0-127.0.0.1:1\n", "configStorePath=/tmp/x\n"} {
		resp := g.call(leader, codec.ReqUpdateControllerConfig, nil, []byte(body))
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, body)
		require.Equal(t, "Can not update config in black list.", resp.Remark, body)
	}
}
