package grpcsvc

import (
	"bytes"
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/status"

	"github.com/rocketgo/rocketgo/broker"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// rawCodec sends bytes as they are: a malformed protobuf on the wire.
type rawCodec struct{}

func (rawCodec) Marshal(v any) ([]byte, error) { return *(v.(*[]byte)), nil }
func (rawCodec) Unmarshal(b []byte, v any) error {
	*(v.(*[]byte)) = append([]byte(nil), b...)
	return nil
}
func (rawCodec) Name() string { return "proto" }

var _ encoding.Codec = rawCodec{}

// Bad input gets clear status codes and leaves the endpoint serving:
// malformed protobuf (INTERNAL, as grpc-java's "invalid protobuf"), a
// request over the receive bound (RESOURCE_EXHAUSTED), a body over the
// message bound (MESSAGE_BODY_TOO_LARGE), unknown methods and services
// (UNIMPLEMENTED), an empty PullMessage (its status), malformed receipt handles
// (INVALID_RECEIPT_HANDLE), too short an invisible time
// (ILLEGAL_INVISIBLE_TIME).
func TestBadInput(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, g *Config) {
		g.MaxRecvMsgSize = 1 << 20
		g.MaxMessageSize = 256 << 10
	})
	c.createTopic(t, "BadT", "NORMAL", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cctx := as(ctx, "bad-client")

	garbage := bytes.Repeat([]byte{0xff}, 64)
	var reply []byte
	err := c.conn.Invoke(cctx, "/apache.rocketmq.v2.MessagingService/SendMessage", &garbage, &reply, grpc.ForceCodec(rawCodec{}))
	require.Equal(t, codes.Internal, status.Code(err), "malformed protobuf: %v", err)

	err = c.conn.Invoke(cctx, "/apache.rocketmq.v2.MessagingService/NoSuchMethod", &garbage, &reply, grpc.ForceCodec(rawCodec{}))
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	err = c.conn.Invoke(cctx, "/apache.rocketmq.v2.NoSuchService/Foo", &garbage, &reply, grpc.ForceCodec(rawCodec{}))
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)
	ps, err := c.cli.PullMessage(cctx, &v2.PullMessageRequest{})
	require.NoError(t, err)
	first, err := ps.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_ILLEGAL_CONSUMER_GROUP, first.GetStatus().GetCode())
	ps, err = c.cli.PullMessage(cctx, &v2.PullMessageRequest{Group: &v2.Resource{Name: "G"}})
	require.NoError(t, err)
	first, err = ps.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_ILLEGAL_TOPIC, first.GetStatus().GetCode())

	huge := newMessage("BadT", "HUGE", "")
	huge.Body = make([]byte, 2<<20)
	_, err = c.cli.SendMessage(cctx, &v2.SendMessageRequest{Messages: []*v2.Message{huge}})
	require.Equal(t, codes.ResourceExhausted, status.Code(err), "%v", err)

	big := newMessage("BadT", "BIG", "")
	big.Body = make([]byte, 300<<10)
	sr, err := c.cli.SendMessage(cctx, &v2.SendMessageRequest{Messages: []*v2.Message{big}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_MESSAGE_BODY_TOO_LARGE, sr.GetStatus().GetCode())

	empty := newMessage("BadT", "EMPTY", "")
	sr, err = c.cli.SendMessage(cctx, &v2.SendMessageRequest{Messages: []*v2.Message{empty}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_MESSAGE_BODY_EMPTY, sr.GetStatus().GetCode())

	noID := newMessage("BadT", "", "x")
	sr, err = c.cli.SendMessage(cctx, &v2.SendMessageRequest{Messages: []*v2.Message{noID}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_ILLEGAL_MESSAGE_ID, sr.GetStatus().GetCode())

	sysKey := newMessage("BadT", "SYSKEY", "x")
	sysKey.UserProperties = map[string]string{"UNIQ_KEY": "forged"}
	sr, err = c.cli.SendMessage(cctx, &v2.SendMessageRequest{Messages: []*v2.Message{sysKey}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, sr.GetStatus().GetCode())

	ar, err := c.cli.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "BG"}, Topic: &v2.Resource{Name: "BadT"},
		Entries: []*v2.AckMessageEntry{{MessageId: "m", ReceiptHandle: "not a handle"}}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_INVALID_RECEIPT_HANDLE, ar.GetStatus().GetCode())

	st, _ := c.receive(t, cctx, "BG", "BadT", 1, time.Second, 5*time.Second)
	require.Equal(t, v2.Code_ILLEGAL_INVISIBLE_TIME, st.GetCode())

	// Still serving.
	r, err := c.cli.QueryRoute(cctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "BadT"}, Endpoints: &v2.Endpoints{}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode())
}

// Idle streams: many telemetry streams that never send hold only their
// own goroutines; the heap they cost is bounded and measured, and the
// endpoint keeps answering.
func TestIdleStreamsBounded(t *testing.T) {
	c := startCluster(t, nil)
	c.createTopic(t, "IdleT", "NORMAL", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const conns, perConn = 4, 500 // under MaxConcurrentStreams per connection
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	g0 := runtime.NumGoroutine()
	var streams []grpc.ClientStream
	for range conns {
		conn, err := grpc.NewClient(c.ep.Addr(), grpc.WithTransportCredentials(insecure.NewCredentials()))
		require.NoError(t, err)
		defer conn.Close()
		cli := v2.NewMessagingServiceClient(conn)
		for range perConn {
			tc, err := cli.Telemetry(as(ctx, "idle"))
			require.NoError(t, err)
			streams = append(streams, tc)
		}
	}
	// The server has them all when its goroutine count has grown by at
	// least one per stream (ours and the client's run in this process).
	require.Eventually(t, func() bool { return runtime.NumGoroutine()-g0 >= conns*perConn*2 }, 30*time.Second, 50*time.Millisecond)
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	perStream := (int64(after.HeapInuse+after.StackInuse) - int64(before.HeapInuse+before.StackInuse)) / (conns * perConn)
	t.Logf("%d idle telemetry streams: %d B per stream (client and server sides together), %d goroutines", conns*perConn, perStream, runtime.NumGoroutine()-g0)
	require.Less(t, perStream, int64(64<<10), "an idle stream costs more than 64 KiB")

	r, err := c.cli.QueryRoute(as(ctx, "still-here"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "IdleT"}, Endpoints: &v2.Endpoints{}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode())
	for _, s := range streams {
		_ = s.CloseSend()
	}
}
