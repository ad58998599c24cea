package grpcsvc

import (
	"context"
	"crypto/tls"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/namesrv"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// cluster is a name server, a broker and the gRPC endpoint, all on
// loopback, with a remoting client for setup and a gRPC client.
type cluster struct {
	ns     *namesrv.Server
	b      *broker.Broker
	ep     *Endpoint
	admin  *transport.Client
	conn   *grpc.ClientConn
	cli    v2.MessagingServiceClient
	broker string
}

func startCluster(t testing.TB, tune func(*broker.Config, *Config)) *cluster {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	nsCfg := namesrv.Default()
	nsCfg.BindAddress, nsCfg.ListenPort = "127.0.0.1", 0
	nsCfg.KVConfigPath = filepath.Join(dir, "namesrv", "kvConfig.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "namesrv", "namesrv.properties")
	ns, err := namesrv.New(nsCfg, log)
	require.NoError(t, err)
	require.NoError(t, ns.Start())
	t.Cleanup(func() { _ = ns.Close() })

	bc := broker.DefaultConfig()
	bc.BrokerName = "broker-a"
	bc.StorePathRootDir = filepath.Join(dir, "store")
	bc.ListenIP, bc.ListenPort, bc.BrokerIP1 = "127.0.0.1", 0, "127.0.0.1"
	bc.FastListen = false
	bc.NamesrvAddr = ns.Addr()
	bc.ReviveInterval = 200
	gc := Default()
	gc.GRPCPort = 0
	if tune != nil {
		tune(&bc, &gc)
	}
	b, err := broker.New(bc, broker.Deps{Logger: log})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	t.Cleanup(func() { _ = b.Close() })

	epc := EndpointConfig{Listen: "127.0.0.1:0", NamesrvAddrs: []string{ns.Addr()}, LocalBroker: bc.BrokerName, Service: gc, Logger: log}
	if gc.Auth.AuthenticationEnabled || gc.Auth.AuthorizationEnabled {
		// Local mode with auth, as cmd/rocketgo wires it.
		epc.Service.Authority = LocalAuthority{Svc: b.Auth()}
		inner, ok, err := auth.ParseCredentials(bc.InnerClientAuthenticationCredentials)
		require.NoError(t, err)
		if ok {
			epc.Signer = inner.Signer()
		}
	}
	ep, err := Start(epc)
	require.NoError(t, err)
	t.Cleanup(func() { _ = ep.Close() })

	dialCreds := insecure.NewCredentials()
	if gc.TLS != nil && gc.TLS.Mode == tlsconf.Enforcing {
		dialCreds = credentials.NewTLS(&tls.Config{InsecureSkipVerify: true})
	}
	conn, err := grpc.NewClient(ep.Addr(), grpc.WithTransportCredentials(dialCreds))
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close() })
	admin := transport.NewClient(transport.ClientConfig{Logger: log, BeforeRequest: epc.Signer})
	t.Cleanup(func() { _ = admin.Close() })
	return &cluster{ns: ns, b: b, ep: ep, admin: admin, conn: conn, cli: v2.NewMessagingServiceClient(conn), broker: b.BrokerAddr()}
}

// createTopic creates topic on the broker with a message.type attribute
// and waits until the name server routes it.
func (c *cluster) createTopic(t testing.TB, topic, msgType string, queues int32) {
	t.Helper()
	h := header.CreateTopicRequest{Topic: topic, DefaultTopic: "TBW102", ReadQueueNums: queues, WriteQueueNums: queues,
		Perm: 6, TopicFilterType: "SINGLE_TAG", Attributes: "+message.type=" + msgType}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.admin.Invoke(ctx, c.broker, newRequest(codec.ReqUpdateAndCreateTopic, &h))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool {
		r, err := c.admin.Invoke(ctx, c.ns.Addr(), newRequest(codec.ReqGetRouteinfoByTopic, &header.GetRouteInfoRequest{Topic: topic}))
		return err == nil && r.Code == int32(codec.RespSuccess)
	}, 5*time.Second, 20*time.Millisecond)
}

// createGroup creates a subscription group (orderly for FIFO).
func (c *cluster) createGroup(t *testing.T, group string, orderly bool, retryMax int32) {
	t.Helper()
	g := body.NewSubscriptionGroupConfig(group)
	g.ConsumeMessageOrderly = orderly
	g.RetryMaxTimes = retryMax
	req := newRequest(codec.ReqUpdateAndCreateSubscriptiongroup, nil)
	req.Body = body.AppendSubscriptionGroupConfig(nil, &g)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.admin.Invoke(ctx, c.broker, req)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
}

// as is ctx with a client's metadata.
func as(ctx context.Context, clientID string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", clientID, "x-mq-language", "GOLANG", "x-mq-client-version", "5.0.0")
}

// telemetry opens a client's telemetry stream and exchanges its settings,
// as the SDKs do at startup.
func (c *cluster) telemetry(t testing.TB, ctx context.Context, st *v2.Settings) (grpc.BidiStreamingClient[v2.TelemetryCommand, v2.TelemetryCommand], *v2.Settings) {
	t.Helper()
	tc, err := c.cli.Telemetry(ctx)
	require.NoError(t, err)
	require.NoError(t, tc.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: st}}))
	resp, err := tc.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, resp.GetStatus().GetCode(), resp.GetStatus().GetMessage())
	require.NotNil(t, resp.GetSettings())
	return tc, resp.GetSettings()
}

func producerSettings(topics ...string) *v2.Settings {
	st := &v2.Settings{ClientType: new(v2.ClientType_PRODUCER), RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{}}}
	for _, t := range topics {
		st.GetPublishing().Topics = append(st.GetPublishing().Topics, &v2.Resource{Name: t})
	}
	return st
}

func consumerSettings(group, topic string) *v2.Settings {
	return &v2.Settings{ClientType: new(v2.ClientType_SIMPLE_CONSUMER), RequestTimeout: durationpb.New(3 * time.Second),
		PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{Group: &v2.Resource{Name: group},
			Subscriptions: []*v2.SubscriptionEntry{{Topic: &v2.Resource{Name: topic}, Expression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}}}}}}
}

// receive runs one ReceiveMessage and collects its stream.
func (c *cluster) receive(t *testing.T, ctx context.Context, group, topic string, batch int32, invisible, poll time.Duration) (*v2.Status, []*v2.Message) {
	t.Helper()
	rctx, cancel := context.WithTimeout(ctx, poll+5*time.Second)
	defer cancel()
	rs, err := c.cli.ReceiveMessage(rctx, &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: group},
		MessageQueue:     &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: -1},
		FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"},
		BatchSize:        batch, InvisibleDuration: durationpb.New(invisible), LongPollingTimeout: durationpb.New(poll)})
	require.NoError(t, err)
	var st *v2.Status
	var msgs []*v2.Message
	sawDelivery := false
	for {
		r, err := rs.Recv()
		if err != nil {
			break
		}
		switch x := r.GetContent().(type) {
		case *v2.ReceiveMessageResponse_Status:
			st = x.Status
		case *v2.ReceiveMessageResponse_Message:
			msgs = append(msgs, x.Message)
		case *v2.ReceiveMessageResponse_DeliveryTimestamp:
			sawDelivery = true
		}
	}
	require.NotNil(t, st)
	require.True(t, sawDelivery, "the stream ends with a delivery timestamp")
	return st, msgs
}

func newMessage(topic, id, body string) *v2.Message {
	return &v2.Message{Topic: &v2.Resource{Name: topic}, Body: []byte(body),
		SystemProperties: &v2.SystemProperties{MessageId: id, Tag: new("TagA"), Keys: []string{"k1", "k2"},
			MessageType: v2.MessageType_NORMAL, BodyEncoding: v2.Encoding_IDENTITY}}
}
