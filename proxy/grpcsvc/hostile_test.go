package grpcsvc

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
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
// message bound (MESSAGE_BODY_TOO_LARGE), unknown methods and services and
// PullMessage (UNIMPLEMENTED), malformed receipt handles
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
	_, err = ps.Recv()
	require.Equal(t, codes.Unimplemented, status.Code(err), "%v", err)

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
