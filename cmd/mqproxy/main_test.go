package main

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/namesrv"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// mqproxy in cluster mode in front of two brokers of one cluster: routes
// from the name server, QueryRoute lists both brokers' queues at the
// proxy's endpoint, and messages sent through it are received (from
// either broker) and acked through it.
func TestClusterModeTwoBrokers(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	nsCfg := namesrv.Default()
	nsCfg.BindAddress, nsCfg.ListenPort = "127.0.0.1", 0
	nsCfg.KVConfigPath = filepath.Join(dir, "ns", "kv.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "ns", "ns.properties")
	ns, err := namesrv.New(nsCfg, log)
	require.NoError(t, err)
	require.NoError(t, ns.Start())
	defer ns.Close()
	var brokers []*broker.Broker
	for _, name := range []string{"broker-a", "broker-b"} {
		bc := broker.DefaultConfig()
		bc.BrokerName = name
		bc.StorePathRootDir = filepath.Join(dir, name)
		bc.ListenIP, bc.ListenPort, bc.BrokerIP1, bc.FastListen = "127.0.0.1", 0, "127.0.0.1", false
		bc.NamesrvAddr = ns.Addr()
		b, err := broker.New(bc, broker.Deps{Logger: log})
		require.NoError(t, err)
		require.NoError(t, b.Start())
		defer b.Close()
		brokers = append(brokers, b)
	}
	admin := transport.NewClient(transport.ClientConfig{Logger: log})
	defer admin.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, b := range brokers {
		req := &codec.Frame{Code: int32(codec.ReqUpdateAndCreateTopic), Language: codec.LangJava, Version: codec.ServerVersion, Ext: []codec.KV{
			{Key: "topic", Value: "ProxyT"}, {Key: "defaultTopic", Value: "TBW102"}, {Key: "readQueueNums", Value: "2"},
			{Key: "writeQueueNums", Value: "2"}, {Key: "perm", Value: "6"}, {Key: "topicFilterType", Value: "SINGLE_TAG"}, {Key: "order", Value: "false"}}}
		resp, err := admin.Invoke(ctx, b.BrokerAddr(), req)
		require.NoError(t, err)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}

	conf := filepath.Join(dir, "rmq-proxy.json")
	require.NoError(t, os.WriteFile(conf, []byte(fmt.Sprintf(`{"rocketMQClusterName":"DefaultCluster","grpcServerPort":0,"remotingListenPort":0,"namesrvAddr":%q,"someJavaKey":1}`, ns.Addr())), 0o644))
	var out bytes.Buffer
	stop, err := start([]string{"-pc", conf, "-bind", "127.0.0.1"}, &out, log)
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	m := regexp.MustCompile(`grpc=(\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())

	conn, err := grpc.NewClient(m[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	cli := v2.NewMessagingServiceClient(conn)
	pctx := metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "p1")
	cctx := metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "c1")

	var route *v2.QueryRouteResponse
	require.Eventually(t, func() bool {
		route, err = cli.QueryRoute(pctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "ProxyT"},
			Endpoints: &v2.Endpoints{Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 1}}}})
		return err == nil && len(route.GetMessageQueues()) == 4
	}, 10*time.Second, 50*time.Millisecond, "route through the proxy: %v %v", err, route)
	names := map[string]bool{}
	for _, q := range route.GetMessageQueues() {
		names[q.GetBroker().GetName()] = true
		require.NotEqual(t, int32(1), q.GetBroker().GetEndpoints().GetAddresses()[0].GetPort(), "the proxy's own port is advertised")
	}
	require.Len(t, names, 2)

	for _, st := range []struct {
		ctx context.Context
		s   *v2.Settings
	}{
		{pctx, &v2.Settings{ClientType: new(v2.ClientType_PRODUCER), PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: "ProxyT"}}}}}},
		{cctx, &v2.Settings{ClientType: new(v2.ClientType_SIMPLE_CONSUMER), PubSub: &v2.Settings_Subscription{Subscription: &v2.Subscription{
			Group: &v2.Resource{Name: "PG"}, Subscriptions: []*v2.SubscriptionEntry{{Topic: &v2.Resource{Name: "ProxyT"}, Expression: &v2.FilterExpression{Expression: "*"}}}}}}},
	} {
		tc, err := cli.Telemetry(st.ctx)
		require.NoError(t, err)
		require.NoError(t, tc.Send(&v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: st.s}}))
		r, err := tc.Recv()
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, r.GetStatus().GetCode())
	}

	const n = 8
	for i := range n {
		sr, err := cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: "ProxyT"}, Body: []byte("x"),
			SystemProperties: &v2.SystemProperties{MessageId: fmt.Sprintf("PROXY-%d", i), MessageType: v2.MessageType_NORMAL}}}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
	}
	got := map[string]bool{}
	fromBrokers := map[string]bool{}
	deadline := time.Now().Add(30 * time.Second)
	for len(got) < n && time.Now().Before(deadline) {
		rctx, rcancel := context.WithTimeout(cctx, 15*time.Second)
		rs, err := cli.ReceiveMessage(rctx, &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: "PG"},
			MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: "ProxyT"}}, FilterExpression: &v2.FilterExpression{Expression: "*"},
			BatchSize: 32, InvisibleDuration: durationpb.New(20 * time.Second), LongPollingTimeout: durationpb.New(5 * time.Second)})
		require.NoError(t, err)
		for {
			r, err := rs.Recv()
			if err != nil {
				break
			}
			msg := r.GetMessage()
			if msg == nil {
				continue
			}
			got[msg.GetSystemProperties().GetMessageId()] = true
			if f := strings.Fields(msg.GetSystemProperties().GetReceiptHandle()); len(f) > 5 {
				fromBrokers[f[5]] = true // the receipt handle names its broker
			}
			ar, err := cli.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "PG"}, Topic: &v2.Resource{Name: "ProxyT"},
				Entries: []*v2.AckMessageEntry{{MessageId: msg.GetSystemProperties().GetMessageId(), ReceiptHandle: msg.GetSystemProperties().GetReceiptHandle()}}})
			require.NoError(t, err)
			require.Equal(t, v2.Code_OK, ar.GetStatus().GetCode(), ar.GetStatus().GetMessage())
		}
		rcancel()
	}
	require.Len(t, got, n, "every message sent through the proxy was received through it")
	require.Len(t, fromBrokers, 2, "both brokers served receives")
}
