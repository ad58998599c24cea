package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// With authentication and authorization on, the pipeline checks every
// route: a normal user with Pub on one topic sends there and nowhere
// else, cannot create topics or change the broker's config; a super user
// may change even the sensitive keys.
func TestAuthPipelineOnEveryRoute(t *testing.T) {
	tb := startBroker(t, func(c *Config) {
		c.AuthenticationEnabled = true
		c.AuthorizationEnabled = true
		c.InitAuthenticationUser = `{"username":"root","password":"root-secret"}`
	})
	s := tb.Auth()
	require.NoError(t, s.CreateUser(auth.User{Username: "alice", Password: "alice-secret", Type: auth.UserNormal}))
	res, ok := auth.ParseResourcePattern("Topic:AT")
	require.True(t, ok)
	require.NoError(t, s.PutACL(auth.ACL{Username: "alice", Policies: []auth.Policy{{Type: auth.PolicyCustom,
		Entries: []auth.Entry{{Resource: res, Actions: []auth.Action{auth.ActionPub}, Decision: auth.Allow}}}}}))
	tb.topics.createIfAbsent("AT", 1, body.PermRead|body.PermWrite, 0)
	tb.topics.createIfAbsent("BT", 1, body.PermRead|body.PermWrite, 0)

	resp := tb.invoke(t, signedAs(t, sendV1("AT", 0, "", []byte("x")), "alice", "alice-secret"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendV1("AT", 0, "", []byte("x")))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code, "unsigned send")
	resp = tb.invoke(t, signedAs(t, sendV1("BT", 0, "", []byte("x")), "alice", "alice-secret"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code, "no Pub on BT")
	require.Contains(t, resp.Remark, "has no permission to access Topic:BT", resp.Remark)

	create := request(codec.ReqUpdateAndCreateTopic, "topic", "CT", "readQueueNums", "1", "writeQueueNums", "1", "perm", "6")
	resp = tb.invoke(t, signedAs(t, create, "alice", "alice-secret"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code, "alice may not create topics")

	upd := request(codec.ReqUpdateBrokerConfig)
	upd.Body = []byte("brokerPermission=6\n")
	resp = tb.invoke(t, signedAs(t, upd, "alice", "alice-secret"))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code, "a normal user may not change the config")

	upd = request(codec.ReqUpdateBrokerConfig)
	upd.Body = []byte("namesrvAddr=127.0.0.1:9\n")
	resp = tb.invoke(t, signedAs(t, upd, "root", "root-secret"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, "a super user may change a sensitive key: %s", resp.Remark)
	require.Equal(t, "127.0.0.1:9", tb.Config().NamesrvAddr)
}

// With everything off the router has no middleware, so the send and pull
// paths are what they were (their allocation tests run on such brokers).
func TestAuthOffNoMiddleware(t *testing.T) {
	tb := startBroker(t, nil)
	require.Nil(t, tb.authChk)
	require.False(t, tb.authChk.enabled())
}
