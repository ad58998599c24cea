package namesrv

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// With authentication on, every write needs a signed super user (the
// broker's inner credentials); reads stay open, and the auth keys cannot
// be changed remotely.
func TestAuthGuardsWrites(t *testing.T) {
	cfg := testConfig(t)
	_, err := cfg.Apply(javaprops.Props{
		{Key: "authenticationEnabled", Value: "true"},
		{Key: "innerClientAuthenticationCredentials", Value: `{"accessKey":"inner","secretKey":"inner-secret"}`},
		{Key: "initAuthenticationUser", Value: `{"username":"admin","password":"admin-secret"}`},
	})
	require.NoError(t, err)
	s := startNamesrv(t, cfg)
	anon := newClient(t)
	signed := func(ak, sk string) *transport.Client {
		c := transport.NewClient(transport.ClientConfig{Logger: testLogger(), DialTimeout: time.Second,
			BeforeRequest: auth.Credentials{AccessKey: ak, SecretKey: sk}.Signer()})
		t.Cleanup(func() { require.NoError(t, c.Close()) })
		return c
	}
	inner, wrong := signed("inner", "inner-secret"), signed("inner", "guess")

	b := &fakeBroker{cluster: "C", name: "b1", addr: "127.0.0.1:30911", ha: "127.0.0.1:30912", topics: topics("T", "T2")}
	resp := invoke(t, anon, s.Addr(), b.registerFrame(t))
	require.EqualValues(t, codec.RespNoPermission, resp.Code, "unsigned registration")
	resp = invoke(t, wrong, s.Addr(), b.registerFrame(t))
	require.EqualValues(t, codec.RespNoPermission, resp.Code, "wrong secret")
	resp = invoke(t, inner, s.Addr(), b.registerFrame(t))
	require.EqualValues(t, codec.RespSuccess, resp.Code, resp.Remark)

	resp = invoke(t, anon, s.Addr(), request(codec.ReqGetRouteinfoByTopic, "topic", "T"))
	require.EqualValues(t, codec.RespSuccess, resp.Code, "reads stay open: %s", resp.Remark)

	wipe := request(codec.ReqWipeWritePermOfBroker, "brokerName", "b1")
	require.EqualValues(t, codec.RespNoPermission, invoke(t, anon, s.Addr(), wipe).Code, "anonymous wipe")
	kv := request(codec.ReqPutKvConfig, "namespace", "ns", "key", "k", "value", "v")
	require.EqualValues(t, codec.RespNoPermission, invoke(t, anon, s.Addr(), kv).Code, "anonymous KV put")
	kv = request(codec.ReqPutKvConfig, "namespace", "ns", "key", "k", "value", "v")
	require.EqualValues(t, codec.RespSuccess, invoke(t, signed("admin", "admin-secret"), s.Addr(), kv).Code, "the init user is super")

	upd := request(codec.ReqUpdateNamesrvConfig)
	upd.Body = []byte("authenticationEnabled=false\n")
	resp = invoke(t, inner, s.Addr(), upd)
	require.EqualValues(t, codec.RespNoPermission, resp.Code, "auth keys are not remotely changeable")
	cfgResp := invoke(t, inner, s.Addr(), request(codec.ReqGetNamesrvConfig))
	require.NotContains(t, string(cfgResp.Body), "inner-secret", "GET_NAMESRV_CONFIG leaks no credentials")
}
