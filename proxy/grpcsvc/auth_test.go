package grpcsvc

import (
	"context"
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/remarks"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

func TestParseCredential(t *testing.T) {
	const dt = "20240102T030405Z"
	cases := []struct {
		name, authz, datetime string
		user                  string
		sig                   []byte
		err                   string
	}{
		{name: "none", authz: "", datetime: dt},
		{name: "sdk form", authz: "MQv2-HMAC-SHA1 Credential=alice, SignedHeaders=x-mq-date-time, Signature=0A0b", datetime: dt, user: "alice", sig: []byte{0x0a, 0x0b}},
		{name: "credential scope and trailing comma", authz: "MQv2-HMAC-SHA1 Credential=alice/2024/x,", datetime: dt, user: "alice"},
		{name: "no datetime", authz: "MQv2-HMAC-SHA1 Credential=alice", err: remarks.GRPCAuthDatetimeNull},
		{name: "no space", authz: "MQv2-HMAC-SHA1", datetime: dt, err: remarks.GRPCAuthHeaderBad},
		{name: "item without =", authz: "MQv2-HMAC-SHA1 Credential", datetime: dt, err: remarks.GRPCAuthKeyValuesBad(1)},
		{name: "empty after the space", authz: "MQv2-HMAC-SHA1 ", datetime: dt, err: remarks.GRPCAuthKeyValuesBad(1)},
		{name: "credential only slashes", authz: "MQv2-HMAC-SHA1 Credential=//", datetime: dt, err: remarks.GRPCAuthCredentialBad(0)},
		{name: "odd hex", authz: "MQv2-HMAC-SHA1 Credential=alice, Signature=abc", datetime: dt, err: remarks.GRPCAuthContextError},
		{name: "bad hex digit", authz: "MQv2-HMAC-SHA1 Credential=alice, Signature=zz", datetime: dt, err: remarks.GRPCAuthContextError},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseCredential(c.authz, c.datetime)
			if c.err != "" {
				require.Error(t, err)
				st := errStatus(err)
				assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode())
				assert.Equal(t, c.err, st.GetMessage())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, c.user, got.username)
			if c.sig != nil {
				assert.Equal(t, c.sig, got.signature)
			}
		})
	}
}

// sdkSign is rocketmq-clients' Signature.sign: hex (upper case, as the
// Java SDK's encodeHexString(…, false)) of HMAC-SHA1 over x-mq-date-time.
func sdkSign(ctx context.Context, ak, sk string) context.Context {
	dt := time.Now().UTC().Format("20060102T150405Z")
	m := hmac.New(sha1.New, []byte(sk))
	m.Write([]byte(dt))
	authz := "MQv2-HMAC-SHA1 Credential=" + ak + ", SignedHeaders=x-mq-date-time, Signature=" + strings.ToUpper(hex.EncodeToString(m.Sum(nil)))
	return metadata.AppendToOutgoingContext(ctx, "authorization", authz, "x-mq-date-time", dt)
}

const (
	authTopic = "GAuthT"
	authGroup = "GAuthG"
)

// startAuthCluster is a local-mode endpoint with authentication and
// authorization on, and users: alice (Pub+Sub on the topic, Sub on the
// group), bob (Sub only), carol (Sub denied on the topic), dora (disabled).
func startAuthCluster(t *testing.T) *cluster {
	c := startCluster(t, func(bc *broker.Config, gc *Config) {
		bc.AuthenticationEnabled, bc.AuthorizationEnabled = true, true
		bc.InitAuthenticationUser = `{"username":"root","password":"root-secret"}`
		bc.InnerClientAuthenticationCredentials = `{"accessKey":"root","secretKey":"root-secret"}`
		gc.Auth = AuthConfig{AuthenticationEnabled: true, AuthorizationEnabled: true}
	})
	svc := c.b.Auth()
	require.NotNil(t, svc)
	entry := func(res string, d auth.Decision, acts ...auth.Action) auth.Entry {
		p, ok := auth.ParseResourcePattern(res)
		require.True(t, ok, res)
		return auth.Entry{Resource: p, Actions: acts, Decision: d}
	}
	put := func(user string, entries ...auth.Entry) {
		require.NoError(t, svc.CreateUser(auth.User{Username: user, Password: user + "-secret"}))
		require.NoError(t, svc.PutACL(auth.ACL{Username: user, Policies: []auth.Policy{{Type: auth.PolicyCustom, Entries: entries}}}))
	}
	put("alice", entry("Topic:"+authTopic, auth.Allow, auth.ActionPub, auth.ActionSub), entry("Group:"+authGroup, auth.Allow, auth.ActionSub))
	put("bob", entry("Topic:"+authTopic, auth.Allow, auth.ActionSub), entry("Group:"+authGroup, auth.Allow, auth.ActionSub))
	put("carol", entry("Topic:"+authTopic, auth.Allow, auth.ActionPub), entry("Topic:"+authTopic, auth.Deny, auth.ActionSub),
		entry("Group:"+authGroup, auth.Allow, auth.ActionSub))
	require.NoError(t, svc.CreateUser(auth.User{Username: "dora", Password: "dora-secret", Status: auth.UserDisabled}))
	c.createTopic(t, authTopic, "NORMAL", 2)
	return c
}

func TestAuthLocalMode(t *testing.T) {
	c := startAuthCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	route := func(ctx context.Context) *v2.Status {
		r, err := c.cli.QueryRoute(as(ctx, "auth-client"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: authTopic},
			Endpoints: &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 8081}}}})
		require.NoError(t, err)
		return r.GetStatus()
	}
	send := func(ctx context.Context, id string) *v2.Status {
		r, err := c.cli.SendMessage(as(ctx, "auth-client"), &v2.SendMessageRequest{Messages: []*v2.Message{newMessage(authTopic, id, "b")}})
		require.NoError(t, err)
		return r.GetStatus()
	}
	refused := func(st *v2.Status, msg string) {
		t.Helper()
		assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode(), st.GetMessage())
		assert.Contains(t, st.GetMessage(), msg)
	}

	// Right credentials pass: the endpoint checks them, then forwards
	// signed as the broker's inner user (the broker's own check passes).
	assert.Equal(t, v2.Code_OK, route(sdkSign(ctx, "alice", "alice-secret")).GetCode())
	st := send(sdkSign(ctx, "alice", "alice-secret"), "0A0000000000000000000001")
	assert.Equal(t, v2.Code_OK, st.GetCode(), st.GetMessage())

	refused(route(sdkSign(ctx, "alice", "wrong")), remarks.AuthSignatureFailed)
	refused(route(sdkSign(ctx, "nobody", "x")), remarks.AuthUserNotFound("nobody"))
	refused(route(ctx), remarks.AuthUsernameNull)
	refused(route(sdkSign(ctx, "dora", "dora-secret")), remarks.AuthUserDisabled("dora"))
	refused(route(metadata.AppendToOutgoingContext(ctx, "authorization", "garbage", "x-mq-date-time", "20240102T030405Z")), remarks.GRPCAuthHeaderBad)
	// An AccessKey over the 1024-byte bound is refused as not found; one
	// past the 8 KiB metadata bound (limits.go) never reaches the check.
	long := strings.Repeat("k", 4<<10)
	refused(route(sdkSign(ctx, long, "x")), remarks.AuthUserNotFound(long[:64]+"..."))
	_, err := c.cli.QueryRoute(sdkSign(ctx, strings.Repeat("k", 64<<10), "x"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: authTopic}})
	require.Error(t, err)

	// bob may subscribe but not publish: the route (Pub or Sub) passes, a send does not.
	assert.Equal(t, v2.Code_OK, route(sdkSign(ctx, "bob", "bob-secret")).GetCode())
	refused(send(sdkSign(ctx, "bob", "bob-secret"), "0A0000000000000000000002"), "User:bob has no permission to access Topic:"+authTopic)

	// carol's Sub on the topic is denied: a receive answers the status.
	// carol's Sub on the topic is denied: the receive's one response is
	// the status, then the stream ends (Java: writeResponse, onCompleted).
	rs, err := c.cli.ReceiveMessage(sdkSign(as(ctx, "carol-client"), "carol", "carol-secret"), &v2.ReceiveMessageRequest{
		Group: &v2.Resource{Name: authGroup}, MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: authTopic}, Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 4,
		InvisibleDuration: durationpb.New(30 * time.Second), LongPollingTimeout: durationpb.New(5 * time.Second)})
	require.NoError(t, err)
	first, err := rs.Recv()
	require.NoError(t, err)
	refused(first.GetStatus(), remarks.AuthDecisionDeny)
	_, err = rs.Recv()
	assert.ErrorIs(t, err, io.EOF)
	// alice receives what she sent.
	st, msgs := c.receive(t, sdkSign(as(ctx, "alice-client"), "alice", "alice-secret"), authGroup, authTopic, 4, 30*time.Second, 5*time.Second)
	assert.Equal(t, v2.Code_OK, st.GetCode(), st.GetMessage())
	assert.Len(t, msgs, 1)
}

func TestAuthTelemetryRefusal(t *testing.T) {
	c := startAuthCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tc, err := c.cli.Telemetry(sdkSign(as(ctx, "bob-producer"), "bob", "bob-secret"))
	require.NoError(t, err)
	// A producer's settings need Pub on its topics: refused with a status,
	// and the stream stays open (Java writes the status with onNext).
	require.NoError(t, tc.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: producerSettings(authTopic)}}))
	resp, err := tc.Recv()
	require.NoError(t, err)
	assert.Equal(t, v2.Code_UNAUTHORIZED, resp.GetStatus().GetCode())
	assert.Contains(t, resp.GetStatus().GetMessage(), "User:bob has no permission to access Topic:"+authTopic)
	assert.Nil(t, resp.GetSettings())
	require.NoError(t, tc.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: consumerSettings(authGroup, authTopic)}}))
	resp, err = tc.Recv()
	require.NoError(t, err)
	assert.Equal(t, v2.Code_OK, resp.GetStatus().GetCode(), resp.GetStatus().GetMessage())
	assert.NotNil(t, resp.GetSettings())
	require.NoError(t, tc.CloseSend())
}

// TestAuthClusterMode is mqproxy's way: users and ACLs read from a broker
// of the cluster with AUTH_GET_USER / AUTH_GET_ACL, signed with the proxy's
// credentials.
func TestAuthClusterMode(t *testing.T) {
	c := startAuthCluster(t)
	inner, _, err := auth.ParseCredentials(`{"accessKey":"root","secretKey":"root-secret"}`)
	require.NoError(t, err)
	gc := Default()
	gc.GRPCPort = 0
	gc.Auth = AuthConfig{AuthenticationEnabled: true, AuthorizationEnabled: true}
	gc.ClusterName = c.b.Config().BrokerClusterName
	ep, err := Start(EndpointConfig{Listen: "127.0.0.1:0", NamesrvAddrs: []string{c.ns.Addr()}, Service: gc, Signer: inner.Signer()})
	require.NoError(t, err)
	defer ep.Close()
	cli := dial(t, ep.Addr())
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	send := func(ctx context.Context, id string) *v2.Status {
		r, err := cli.SendMessage(as(ctx, "cluster-client"), &v2.SendMessageRequest{Messages: []*v2.Message{newMessage(authTopic, id, "b")}})
		require.NoError(t, err)
		return r.GetStatus()
	}
	st := send(sdkSign(ctx, "alice", "alice-secret"), "0A0000000000000000000011")
	assert.Equal(t, v2.Code_OK, st.GetCode(), st.GetMessage())
	st = send(sdkSign(ctx, "bob", "bob-secret"), "0A0000000000000000000012")
	assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode())
	assert.Contains(t, st.GetMessage(), "User:bob has no permission to access Topic:"+authTopic)
	st = send(sdkSign(ctx, "alice", "bad"), "0A0000000000000000000013")
	assert.Equal(t, v2.Code_UNAUTHORIZED, st.GetCode())
	assert.Equal(t, remarks.AuthSignatureFailed, st.GetMessage())
	st = send(sdkSign(ctx, "nobody", "x"), "0A0000000000000000000014")
	assert.Equal(t, remarks.AuthUserNotFound("nobody"), st.GetMessage())
}

func TestClusterAuthorityCache(t *testing.T) {
	now := time.Unix(1000, 0)
	fb := &countingBackend{}
	ca := NewClusterAuthority(fb, ClusterAuthorityConfig{Cluster: "C", Refresh: 20 * time.Second, MaxNum: 2, Now: func() time.Time { return now }})
	ctx := context.Background()
	_, ok, err := ca.User(ctx, "u1")
	require.NoError(t, err)
	assert.False(t, ok, "a cluster without a route has no users")
	_, _, _ = ca.User(ctx, "u1")
	assert.Equal(t, 1, fb.routes, "an absent user is cached")
	now = now.Add(21 * time.Second)
	_, _, _ = ca.User(ctx, "u1")
	assert.Equal(t, 2, fb.routes, "read again after the refresh time")
	for _, n := range []string{"u2", "u3", "u4"} {
		_, _, _ = ca.User(ctx, n)
	}
	ca.mu.Lock()
	assert.LessOrEqual(t, len(ca.users), 2, "bounded")
	ca.mu.Unlock()
}

// dial is a plaintext client of addr.
func dial(t *testing.T, addr string) v2.MessagingServiceClient {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	return v2.NewMessagingServiceClient(conn)
}

// countingBackend knows no route and counts the lookups.
type countingBackend struct{ routes int }

func (b *countingBackend) Route(context.Context, string) (*body.TopicRouteData, error) {
	b.routes++
	return nil, ErrTopicNotFound
}

func (b *countingBackend) Refresh(ctx context.Context, topic string) (*body.TopicRouteData, error) {
	return b.Route(ctx, topic)
}

func (b *countingBackend) Invoke(context.Context, string, *codec.Frame) (*codec.Frame, error) {
	return nil, errors.New("no broker")
}

func (b *countingBackend) InvokeOneway(context.Context, string, *codec.Frame) error {
	return errors.New("no broker")
}

func (b *countingBackend) Forget(string) {}
