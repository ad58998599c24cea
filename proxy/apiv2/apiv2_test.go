package apiv2

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// Compile-time: the generated server interfaces are satisfiable by
// embedding, the way the gRPC front will implement them piece by piece.
type messagingServer struct {
	UnimplementedMessagingServiceServer
}
type adminServer struct{ UnimplementedAdminServer }

var (
	_ MessagingServiceServer = messagingServer{}
	_ AdminServer            = adminServer{}
)

func TestSendMessageRequestRoundTrip(t *testing.T) {
	tag := "TagA"
	in := &SendMessageRequest{Messages: []*Message{{
		Topic:          &Resource{ResourceNamespace: "ns", Name: "TopicTest"},
		UserProperties: map[string]string{"k": "v", "empty": ""},
		SystemProperties: &SystemProperties{
			Tag:           &tag,
			Keys:          []string{"key1", "key2"},
			MessageId:     "01C0A80001000000000000000000000001",
			BodyDigest:    &Digest{Type: DigestType_CRC32, Checksum: "5E7D1B3C"},
			BodyEncoding:  Encoding_IDENTITY,
			MessageType:   MessageType_FIFO,
			BornTimestamp: timestamppb.New(timestamppb.Now().AsTime()),
			BornHost:      "127.0.0.10",
			MessageGroup:  proto.String("g1"),
		},
		Body: []byte("hello"),
	}}}
	b, err := proto.Marshal(in)
	require.NoError(t, err)
	var out SendMessageRequest
	require.NoError(t, proto.Unmarshal(b, &out))
	require.True(t, proto.Equal(in, &out), "round trip differs:\n%v\n%v", in, &out)
	m := out.GetMessages()[0]
	require.Equal(t, "TagA", m.GetSystemProperties().GetTag())
	require.True(t, m.GetSystemProperties().Tag != nil, "proto3 optional keeps presence")
	require.Nil(t, m.GetSystemProperties().QueueOffset, "unset optional stays absent")
	require.Equal(t, "v", m.GetUserProperties()["k"])
}

func TestReceiveMessageResponseOneof(t *testing.T) {
	for _, in := range []*ReceiveMessageResponse{
		{Content: &ReceiveMessageResponse_Status{Status: &Status{Code: Code_MESSAGE_NOT_FOUND, Message: "no new message"}}},
		{Content: &ReceiveMessageResponse_Message{Message: &Message{
			Topic: &Resource{Name: "T"},
			SystemProperties: &SystemProperties{
				ReceiptHandle:     proto.String("rh"),
				InvisibleDuration: durationpb.New(30e9),
				DeliveryAttempt:   proto.Int32(2),
			},
			Body: []byte{0, 1, 2},
		}}},
		{Content: &ReceiveMessageResponse_DeliveryTimestamp{DeliveryTimestamp: timestamppb.New(timestamppb.Now().AsTime())}},
	} {
		b, err := proto.Marshal(in)
		require.NoError(t, err)
		var out ReceiveMessageResponse
		require.NoError(t, proto.Unmarshal(b, &out))
		require.True(t, proto.Equal(in, &out))
		require.IsType(t, in.GetContent(), out.GetContent())
	}
	// Status code numbers are the wire: 40401 is MESSAGE_NOT_FOUND.
	require.Equal(t, int32(40401), int32(Code_MESSAGE_NOT_FOUND))
}

// Every rpc of the two services is in the generated descriptors, with the
// streaming shape SDKs expect.
func TestServiceMethods(t *testing.T) {
	want := map[string][2]bool{ // name -> client, server streaming
		"QueryRoute": {}, "Heartbeat": {}, "SendMessage": {}, "QueryAssignment": {},
		"ReceiveMessage": {false, true}, "AckMessage": {}, "ForwardMessageToDeadLetterQueue": {},
		"PullMessage": {false, true}, "UpdateOffset": {}, "GetOffset": {}, "QueryOffset": {},
		"EndTransaction": {}, "Telemetry": {true, true}, "NotifyClientTermination": {},
		"ChangeInvisibleDuration": {}, "RecallMessage": {}, "SyncLiteSubscription": {},
	}
	sd := File_apache_rocketmq_v2_service_proto.Services().ByName("MessagingService")
	require.NotNil(t, sd)
	got := map[string][2]bool{}
	for i := 0; i < sd.Methods().Len(); i++ {
		m := sd.Methods().Get(i)
		got[string(m.Name())] = [2]bool{m.IsStreamingClient(), m.IsStreamingServer()}
	}
	require.Equal(t, want, got)
	require.Len(t, MessagingService_ServiceDesc.Methods, 14)
	require.Len(t, MessagingService_ServiceDesc.Streams, 3)
	require.NotNil(t, File_apache_rocketmq_v2_admin_proto.Services().ByName("Admin").Methods().ByName("ChangeLogLevel"))
}
