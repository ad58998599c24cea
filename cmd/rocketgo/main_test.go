package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// The embedded name server and broker come up, the broker is routable,
// and a send goes through.
func TestRocketgoStartsAndServes(t *testing.T) {
	var out bytes.Buffer
	stop, err := start([]string{"-dataDir", t.TempDir(), "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0"},
		&out, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	m := regexp.MustCompile(`^rocketgo ready namesrv=(\S+) broker=(\S+) data=`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	ns, brokerAddr := m[1], m[2]

	cli := transport.NewClient(transport.ClientConfig{Logger: slog.New(slog.DiscardHandler), DialTimeout: 2 * time.Second})
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	route := &codec.Frame{Code: int32(codec.ReqGetRouteinfoByTopic), Language: codec.LangGo, Version: 317, Ext: []codec.KV{{Key: "topic", Value: "TBW102"}}}
	resp, err := cli.Invoke(ctx, ns, route)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), brokerAddr)

	send := &codec.Frame{Code: int32(codec.ReqSendMessage), Language: codec.LangGo, Version: 317, Body: []byte("hi"), Ext: []codec.KV{
		{Key: "producerGroup", Value: "pg"}, {Key: "topic", Value: "Hello"}, {Key: "defaultTopic", Value: "TBW102"},
		{Key: "defaultTopicQueueNums", Value: "4"}, {Key: "queueId", Value: "0"}, {Key: "sysFlag", Value: "0"},
		{Key: "bornTimestamp", Value: "1"}, {Key: "flag", Value: "0"}}}
	resp, err = cli.Invoke(ctx, brokerAddr, send)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Eventually(t, func() bool {
		route.Ext[0].Value = "Hello"
		r, err := cli.Invoke(ctx, ns, route)
		return err == nil && r.Code == int32(codec.RespSuccess)
	}, 5*time.Second, 10*time.Millisecond)
}

// Started with -c, runtime config updates are written back to that file.
func TestRocketgoPersistsConfigUpdates(t *testing.T) {
	dir := t.TempDir()
	conf := filepath.Join(dir, "broker.conf")
	require.NoError(t, os.WriteFile(conf, []byte("brokerName=broker-x\n"), 0o644))
	var out bytes.Buffer
	stop, err := start([]string{"-dataDir", dir, "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0", "-c", conf},
		&out, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	m := regexp.MustCompile(`broker=(\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())

	cli := transport.NewClient(transport.ClientConfig{Logger: slog.New(slog.DiscardHandler), DialTimeout: 2 * time.Second})
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	upd := &codec.Frame{Code: int32(codec.ReqUpdateBrokerConfig), Language: codec.LangJava, Version: 479, Body: []byte("brokerPermission=4\n")}
	resp, err := cli.Invoke(ctx, m[1], upd)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	b, err := os.ReadFile(conf)
	require.NoError(t, err)
	require.Equal(t, "brokerName=broker-x\nbrokerPermission=4\n", string(b))
}

// The gRPC endpoint comes up with rocketgo on -grpcListen and answers a
// QueryRoute for the broker's topics; -grpcListen ” turns it off.
func TestRocketgoServesGRPC(t *testing.T) {
	var out bytes.Buffer
	stop, err := start([]string{"-dataDir", t.TempDir(), "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0", "-grpcListen", "127.0.0.1:0"},
		&out, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	m := regexp.MustCompile(`grpc=(\S+)`).FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	conn, err := grpc.NewClient(m[1], grpc.WithTransportCredentials(insecure.NewCredentials()))
	require.NoError(t, err)
	defer conn.Close()
	cli := v2.NewMessagingServiceClient(conn)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ctx = metadata.AppendToOutgoingContext(ctx, "x-mq-client-id", "t1")
	var r *v2.QueryRouteResponse
	require.Eventually(t, func() bool {
		r, err = cli.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "TBW102"}, Endpoints: &v2.Endpoints{}})
		return err == nil && r.GetStatus().GetCode() == v2.Code_OK
	}, 10*time.Second, 20*time.Millisecond, "%v %v", err, r)
	require.NotEmpty(t, r.GetMessageQueues())
	require.Equal(t, "broker-a", r.GetMessageQueues()[0].GetBroker().GetName())

	var off bytes.Buffer
	stop2, err := start([]string{"-dataDir", t.TempDir(), "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0", "-grpcListen", ""},
		&off, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, stop2()) }()
	require.NotContains(t, off.String(), "grpc=")
}
