package broker

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/namesrv"
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

// With auth on everywhere — name server, master and slave — the brokers'
// own calls carry the inner credentials: both register (the slave learns
// its master from the registration reply), replication runs, and the
// slave's metadata sync reads the master's tables; an unsigned reader of
// the same tables is refused.
func TestAuthPairRegistersAndSyncs(t *testing.T) {
	const creds = `{"accessKey":"inner","secretKey":"inner-secret"}`
	ncfg := namesrv.Default()
	ncfg.BindAddress, ncfg.ListenPort = "127.0.0.1", 0
	dir := t.TempDir()
	ncfg.KVConfigPath = filepath.Join(dir, "kvConfig.json")
	ncfg.ConfigStorePath = filepath.Join(dir, "namesrv.properties")
	ncfg.Auth.AuthenticationEnabled = true
	ncfg.Auth.InnerClientAuthenticationCredentials = creds
	nsrv, err := namesrv.New(ncfg, testLogger())
	require.NoError(t, err)
	require.NoError(t, nsrv.Start())
	t.Cleanup(func() { nsrv.Close() })
	ns := nsrv.Addr()
	authOn := func(c *Config) {
		c.NamesrvAddr = ns
		c.AuthenticationEnabled, c.AuthorizationEnabled = true, true
		c.InnerClientAuthenticationCredentials = creds
	}
	master := startBroker(t, func(c *Config) { authOn(c); c.HaListenPort = 0 })
	slave := startBroker(t, func(c *Config) {
		authOn(c)
		c.BrokerRole = "SLAVE"
		c.BrokerID = 1
		c.HaSendHeartbeatInterval = 200
	})
	require.Equal(t, master.BrokerAddr(), slave.MasterAddr(), "both registered with the guarded name server")

	create := request(codec.ReqUpdateAndCreateTopic, "topic", "AuthSync", "defaultTopic", "TBW102",
		"readQueueNums", "4", "writeQueueNums", "4", "perm", "6", "topicFilterType", "SINGLE_TAG", "order", "false")
	resp := master.invoke(t, signedAs(t, create, "inner", "inner-secret"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	resp = master.invoke(t, signedAs(t, sendV1("AuthSync", 0, props("UNIQ_KEY", "u"), []byte("x")), "inner", "inner-secret"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	end := master.store.MaxPhyOffset()
	require.Eventually(t, func() bool { return slave.store.MaxPhyOffset() == end }, 5*time.Second, time.Millisecond)

	require.NoError(t, slave.sync.SyncOnce(t.Context()), "the slave's signed metadata sync passes the master's checks")
	_, ok := slave.topics.get("AuthSync")
	require.True(t, ok, "the topic reached the slave by the metadata sync")
	resp = master.invoke(t, request(codec.ReqGetAllTopicConfig))
	require.Equal(t, int32(codec.RespNoPermission), resp.Code, "an unsigned reader of the same table")
}

// Bad input on the signature surface: a huge AccessKey, a huge or
// malformed Signature, a signature without an AccessKey — each refused
// with NO_PERMISSION on its own connection's request, and the next
// well-signed request on the same connection is served.
func TestAuthHostileSignatures(t *testing.T) {
	tb := startBroker(t, func(c *Config) {
		c.AuthenticationEnabled = true
		c.InitAuthenticationUser = `{"username":"root","password":"root-secret"}`
	})
	tb.topics.createIfAbsent("HT", 1, body.PermRead|body.PermWrite, 0)
	huge := strings.Repeat("k", 16<<10) // within maxHeaderLength: the check sees it
	for _, tc := range []struct {
		name string
		kv   []codec.KV
	}{
		{"huge access key", []codec.KV{{Key: "AccessKey", Value: huge}, {Key: "Signature", Value: "AAAAAAAAAAAAAAAAAAAAAAAAAAA="}}},
		{"huge signature", []codec.KV{{Key: "AccessKey", Value: "root"}, {Key: "Signature", Value: huge}}},
		{"not base64", []codec.KV{{Key: "AccessKey", Value: "root"}, {Key: "Signature", Value: "!!!!!!!!!!!!!!!!!!!!!!!!!!!!"}}},
		{"signature without access key", []codec.KV{{Key: "Signature", Value: "AAAAAAAAAAAAAAAAAAAAAAAAAAA="}}},
		{"empty access key", []codec.KV{{Key: "AccessKey", Value: ""}, {Key: "Signature", Value: "AAAAAAAAAAAAAAAAAAAAAAAAAAA="}}},
	} {
		req := sendV1("HT", 0, "", []byte("x"))
		req.Ext = append(req.Ext, tc.kv...)
		resp := tb.invoke(t, req)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, tc.name)
		require.Less(t, len(resp.Remark), 4096, "%s: the remark does not echo the input", tc.name)
		ok := tb.invoke(t, signedAs(t, sendV1("HT", 0, "", []byte("y")), "root", "root-secret"))
		require.Equal(t, int32(codec.RespSuccess), ok.Code, "%s: then served: %s", tc.name, ok.Remark)
	}
	// A header past maxHeaderLength closes that connection before any
	// check; a new one is served.
	req := sendV1("HT", 0, "", []byte("x"))
	req.Ext = append(req.Ext, codec.KV{Key: "AccessKey", Value: strings.Repeat("k", 1<<20)})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := tb.cli.Invoke(ctx, tb.addr, req)
	require.Error(t, err)
	fresh := newTestClient(t) // the old connection is gone (its client may not know yet)
	ok, err := fresh.Invoke(ctx, tb.addr, signedAs(t, sendV1("HT", 0, "", []byte("y")), "root", "root-secret"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), ok.Code, ok.Remark)
}

// ACL 1.0's admin codes 50–54 (UPDATE_AND_CREATE_ACL_CONFIG,
// DELETE_ACL_CONFIG, GET_BROKER_CLUSTER_ACL_INFO,
// UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, GET_BROKER_CLUSTER_ACL_CONFIG) are
// gone from Java 5.3.3: RequestCode no longer defines them and
// AdminBrokerProcessor, the broker's default processor, answers an
// unknown code REQUEST_CODE_NOT_SUPPORTED (" request type N not
// supported"). With the 5.x auth module on, the request is checked first
// (unsigned: NO_PERMISSION), then answered so, as Java does.
func TestACL1CodesNotSupported(t *testing.T) {
	tb := startBroker(t, func(c *Config) {
		c.AuthenticationEnabled = true
		c.AuthorizationEnabled = true
		c.InitAuthenticationUser = `{"username":"root","password":"root-secret"}`
	})
	for code := codec.RequestCode(50); code <= 54; code++ {
		req := request(code, "accessKey", "RocketMQ", "secretKey", "12345678", "topicPerms", "T=PUB", "admin", "true")
		resp := tb.invoke(t, req)
		require.Equal(t, int32(codec.RespNoPermission), resp.Code, "code %d unsigned", code)
		resp = tb.invoke(t, signedAs(t, request(code, "accessKey", "RocketMQ", "secretKey", "12345678"), "root", "root-secret"))
		require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code, "code %d signed", code)
		require.Equal(t, remarks.RequestCodeNotSupported(int32(code)), resp.Remark)
	}
}

// With authentication and authorization on, the broker's side of a signed
// SEND_MESSAGE_V2 round trip still allocates nothing once warm, for a
// super user and for a normal user whose ACL allows the topic.
func TestAuthSendRoundTripAllocs(t *testing.T) {
	skipAllocsUnderRace(t)
	tb := startBroker(t, func(c *Config) {
		c.AuthenticationEnabled = true
		c.AuthorizationEnabled = true
		c.InitAuthenticationUser = `{"username":"root","password":"root-secret"}`
	})
	s := tb.Auth()
	require.NoError(t, s.CreateUser(auth.User{Username: "alice", Password: "alice-secret", Type: auth.UserNormal}))
	res, ok := auth.ParseResourcePattern("Topic:AllocAuth")
	require.True(t, ok)
	require.NoError(t, s.PutACL(auth.ACL{Username: "alice", Policies: []auth.Policy{{Type: auth.PolicyCustom,
		Entries: []auth.Entry{{Resource: res, Actions: []auth.Action{auth.ActionPub}, Decision: auth.Allow}}}}}))
	tb.topics.createIfAbsent("AllocAuth", 1, body.PermRead|body.PermWrite, 0)
	sent := 0
	for _, who := range [][2]string{{"root", "root-secret"}, {"alice", "alice-secret"}} {
		f := sendV2Request("AllocAuth", 0, props("TAGS", "TagA", "UNIQ_KEY", "0A0000010000000000000000000000AA"), make([]byte, 1024))
		auth.Credentials{AccessKey: who[0], SecretKey: who[1]}.Signer()(f)
		wire := f.AppendTo(nil)
		rc := dialRawClient(t, tb.addr)
		send := func() {
			if code := replyCode(t, rc.roundTrip(wire)); code != int(codec.RespSuccess) {
				t.Fatalf("%s: send answered %d", who[0], code)
			}
		}
		for range 200 {
			send()
		}
		const runs = 500
		n := testing.AllocsPerRun(runs, send)
		sent += 200 + runs + 1
		t.Logf("%s: %.2f allocs per signed send round trip", who[0], n)
		require.Zero(t, n, who[0])
	}
	tb.waitDispatched(t, "AllocAuth", 0, int64(sent))
}
