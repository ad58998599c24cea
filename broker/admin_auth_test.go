package broker

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
)

func withBody(f *codec.Frame, b string) *codec.Frame {
	f.Body = []byte(b)
	return f
}

// signedAs signs f as a Java client with these credentials does.
func signedAs(t *testing.T, f *codec.Frame, ak, sk string) *codec.Frame {
	t.Helper()
	f.Ext = append(f.Ext, codec.KV{Key: auth.KeyAccessKey, Value: ak})
	sig, ok := auth.Sign(f, sk)
	require.True(t, ok)
	f.Ext = append(f.Ext, codec.KV{Key: auth.KeySignature, Value: sig})
	return f
}

func requireCode(t *testing.T, resp *codec.Frame, code codec.ResponseCode, remark string) {
	t.Helper()
	require.Equal(t, int32(code), resp.Code, resp.Remark)
	require.Equal(t, remark, resp.Remark)
}

// TestAdminAuthOverTheWire creates, reads, changes and deletes users and
// ACLs through AUTH_* 3001–3010 on a real connection, then restarts the
// broker on the same store and reads them back.
func TestAdminAuthOverTheWire(t *testing.T) {
	root := t.TempDir()
	conf := func(c *Config) { c.InitAuthenticationUser = `{"username":"rocketmq","password":"12345678"}` }
	tb, stop := startBrokerAt(t, root, conf)

	resp := tb.invoke(t, request(codec.ReqAuthGetUser, "username", "rocketmq"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Equal(t, `{"password":"12345678","userStatus":"enable","userType":"Super","username":"rocketmq"}`, string(resp.Body))

	// Create: the header's username wins over the body's.
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateUser, "username", "alice"), `{"username":"ignored","password":"alice-pw"}`))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateUser, "username", "alice"), `{"password":"x"}`))
	requireCode(t, resp, codec.RespNoPermission, "The user is existed")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateUser), `{"password":"x"}`))
	requireCode(t, resp, codec.RespInvalidParameter, "The username is blank")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateUser, "username", "nopw"), `{}`))
	requireCode(t, resp, codec.RespNoPermission, "password can not be blank")
	// Only a super user may create a super user.
	resp = tb.invoke(t, signedAs(t, withBody(request(codec.ReqAuthCreateUser, "username", "evil"), `{"password":"x","userType":"Super"}`), "alice", "alice-pw"))
	requireCode(t, resp, codec.RespSystemError, "The super user can only be create by super user")
	resp = tb.invoke(t, signedAs(t, withBody(request(codec.ReqAuthCreateUser, "username", "admin2"), `{"password":"x","userType":"Super"}`), "rocketmq", "12345678"))
	requireCode(t, resp, codec.RespSuccess, "")

	// Update: only the fields given.
	resp = tb.invoke(t, withBody(request(codec.ReqAuthUpdateUser, "username", "alice"), `{"userStatus":"disable"}`))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthUpdateUser, "username", "bob"), `{"password":"x"}`))
	requireCode(t, resp, codec.RespNoPermission, "The user is not exist")
	resp = tb.invoke(t, signedAs(t, withBody(request(codec.ReqAuthUpdateUser, "username", "admin2"), `{"password":"y"}`), "alice", "alice-pw"))
	requireCode(t, resp, codec.RespNoPermission, "The super user can only be update by super user")
	// An AccessKey nobody has fails the super-user check itself.
	resp = tb.invoke(t, signedAs(t, withBody(request(codec.ReqAuthUpdateUser, "username", "admin2"), `{"password":"y"}`), "ghost", "x"))
	requireCode(t, resp, codec.RespNoPermission, "User:ghost is not found")

	resp = tb.invoke(t, request(codec.ReqAuthListUser, "filter", "li"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Equal(t, `[{"password":"alice-pw","userStatus":"disable","userType":"Normal","username":"alice"}]`, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqAuthListUser, "filter", "zzz"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Empty(t, resp.Body)

	// ACLs.
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateAcl, "subject", "User:alice"),
		`{"subject":"User:alice","policies":[{"policyType":"Custom","entries":[{"resource":"Topic:orders","actions":["Pub","Sub"],"sourceIps":["10.0.0.0/8"],"decision":"Allow"}]}]}`))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthUpdateAcl, "subject", "User:alice"),
		`{"policies":[{"entries":[{"resource":"Group:g*","actions":["Sub"],"decision":"Deny"}]}]}`))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateAcl, "subject", "User:ghost"),
		`{"policies":[{"entries":[{"resource":"Topic:t","actions":["Pub"],"decision":"Allow"}]}]}`))
	requireCode(t, resp, codec.RespNoPermission, "The subject of User:ghost is not exist.")
	resp = tb.invoke(t, withBody(request(codec.ReqAuthCreateAcl, "subject", "User:alice"),
		`{"policies":[{"entries":[{"resource":"Topic:t","actions":["Any"],"decision":"Allow"}]}]}`))
	requireCode(t, resp, codec.RespNoPermission, "The actions can not be Any.")
	resp = tb.invoke(t, request(codec.ReqAuthCreateAcl, "subject", "User:alice"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)

	const aliceACL = `{"policies":[{"entries":[` +
		`{"actions":["Pub","Sub"],"decision":"Allow","resource":"Topic:orders","sourceIps":["10.0.0.0/8"]},` +
		`{"actions":["Sub"],"decision":"Deny","resource":"Group:g*"}],"policyType":"Custom"}],"subject":"User:alice"}`
	resp = tb.invoke(t, request(codec.ReqAuthGetAcl, "subject", "User:alice"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Equal(t, aliceACL, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqAuthListAcl, "subjectFilter", "alice", "resourceFilter", "Group"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Equal(t, `[{"policies":[{"entries":[{"actions":["Sub"],"decision":"Deny","resource":"Group:g*"}],"policyType":"Custom"}],"subject":"User:alice"}]`, string(resp.Body))

	// The broker restarts on the same store: everything is back.
	stop()
	tb, _ = startBrokerAt(t, root, conf)
	resp = tb.invoke(t, request(codec.ReqAuthGetAcl, "subject", "User:alice"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Equal(t, aliceACL, string(resp.Body))
	resp = tb.invoke(t, request(codec.ReqAuthListUser))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Equal(t, `[{"password":"x","userStatus":"enable","userType":"Super","username":"admin2"},`+
		`{"password":"alice-pw","userStatus":"disable","userType":"Normal","username":"alice"},`+
		`{"password":"12345678","userStatus":"enable","userType":"Super","username":"rocketmq"}]`, string(resp.Body))

	// Delete one entry, then the ACL, then the user.
	resp = tb.invoke(t, request(codec.ReqAuthDeleteAcl, "subject", "User:alice", "resource", "Group:g*"))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, request(codec.ReqAuthGetAcl, "subject", "User:alice"))
	require.NotContains(t, string(resp.Body), "Group:g*")
	resp = tb.invoke(t, request(codec.ReqAuthDeleteAcl, "subject", "User:alice"))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, request(codec.ReqAuthGetAcl, "subject", "User:alice"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Empty(t, resp.Body)
	resp = tb.invoke(t, request(codec.ReqAuthDeleteAcl, "subject", "User:alice"))
	requireCode(t, resp, codec.RespNoPermission, "The acl is not exist.")
	resp = tb.invoke(t, signedAs(t, request(codec.ReqAuthDeleteUser, "username", "admin2"), "alice", "alice-pw"))
	requireCode(t, resp, codec.RespNoPermission, "The super user can only be update by super user")
	resp = tb.invoke(t, request(codec.ReqAuthDeleteUser, "username", "alice"))
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, request(codec.ReqAuthGetUser, "username", "alice"))
	requireCode(t, resp, codec.RespSuccess, "")
	require.Empty(t, resp.Body)
	resp = tb.invoke(t, request(codec.ReqAuthDeleteUser, "username", "alice")) // gone: still success
	requireCode(t, resp, codec.RespSuccess, "")
	resp = tb.invoke(t, request(codec.ReqAuthGetUser))
	requireCode(t, resp, codec.RespInvalidParameter, "The username is blank")
}

func TestAdminAuthOffWithoutKeys(t *testing.T) {
	tb := startBroker(t, nil)
	require.Nil(t, tb.Auth())
	resp := tb.invoke(t, withBody(request(codec.ReqAuthCreateUser, "username", "alice"), `{"password":"x"}`))
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code)
}

func TestAuthConfigKeys(t *testing.T) {
	cfg := DefaultConfig()
	for k, v := range map[string]string{
		"authenticationEnabled":                "true",
		"authorizationEnabled":                 "true",
		"authenticationMetadataProvider":       "org.apache.rocketmq.auth.authentication.provider.LocalAuthenticationMetadataProvider",
		"authorizationMetadataProvider":        "org.apache.rocketmq.auth.authorization.provider.LocalAuthorizationMetadataProvider",
		"initAuthenticationUser":               `{"username":"rocketmq","password":"12345678"}`,
		"innerClientAuthenticationCredentials": `{"accessKey":"inner","secretKey":"secret"}`,
		"authenticationWhitelist":              "34,105",
		"authorizationWhitelist":               "34",
		"migrateAuthFromV1Enabled":             "true",
	} {
		known, err := cfg.Set(k, v)
		require.NoError(t, err, k)
		require.True(t, known, k)
	}
	require.True(t, cfg.AuthenticationEnabled && cfg.AuthorizationEnabled && cfg.MigrateAuthFromV1Enabled)
	require.Equal(t, "34,105", cfg.AuthenticationWhitelist)
	require.Equal(t, `{"accessKey":"inner","secretKey":"secret"}`, cfg.InnerClientAuthenticationCredentials)

	// The broker opens the service with them: the init users exist, and
	// authentication is on with its whitelist.
	tb := startBroker(t, func(c *Config) {
		c.AuthenticationEnabled = true
		c.AuthenticationWhitelist = cfg.AuthenticationWhitelist
		c.InnerClientAuthenticationCredentials = cfg.InnerClientAuthenticationCredentials
	})
	s := tb.Auth()
	require.NotNil(t, s)
	ok, err := s.IsSuperUser("inner")
	require.NoError(t, err)
	require.True(t, ok)
	_, remark, pass := s.Authenticate(request(codec.ReqSendMessage, "topic", "t"))
	require.False(t, pass)
	require.Equal(t, "username cannot be null.", remark)
	user, _, pass := s.Authenticate(signedAs(t, request(codec.ReqSendMessage, "topic", "t"), "inner", "secret"))
	require.True(t, pass)
	require.Equal(t, "inner", user)
	_, _, pass = s.Authenticate(request(codec.ReqHeartBeat))
	require.True(t, pass)

	// GET_BROKER_CONFIG does not tell them (Java's does not either).
	// (Authentication is on: the request pipeline checks it too.)
	resp := tb.invoke(t, request(codec.ReqGetBrokerConfig))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code, "unsigned, refused by the pipeline")
	resp = tb.invoke(t, signedAs(t, request(codec.ReqGetBrokerConfig), "inner", "secret"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), "brokerName=")
	require.NotContains(t, string(resp.Body), "secret")
	for k := range authKeys {
		require.NotContains(t, string(resp.Body), k+"=")
	}
}
