package grpcsvc

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketgo/rocketgo/broker"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// QueryRoute hands out this endpoint for every queue of the topic, with
// the topic's message type; an unknown topic is TOPIC_NOT_FOUND; a
// request without client id is CLIENT_ID_REQUIRED.
func TestQueryRoute(t *testing.T) {
	c := startCluster(t, nil)
	c.createTopic(t, "RouteT", "FIFO", 4)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ep := &v2.Endpoints{Scheme: v2.AddressScheme_IPv4, Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 18081}}}
	r, err := c.cli.QueryRoute(as(ctx, "c1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "RouteT"}, Endpoints: ep})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), r.GetStatus().GetMessage())
	require.Len(t, r.GetMessageQueues(), 4)
	for i, q := range r.GetMessageQueues() {
		require.Equal(t, int32(i), q.GetId())
		require.Equal(t, v2.Permission_READ_WRITE, q.GetPermission())
		require.Equal(t, "broker-a", q.GetBroker().GetName())
		require.Equal(t, []v2.MessageType{v2.MessageType_FIFO}, q.GetAcceptMessageTypes())
		require.Equal(t, "127.0.0.1", q.GetBroker().GetEndpoints().GetAddresses()[0].GetHost())
		require.Equal(t, int32(18081), q.GetBroker().GetEndpoints().GetAddresses()[0].GetPort())
	}
	r, err = c.cli.QueryRoute(as(ctx, "c1"), &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "NoSuchTopic"}, Endpoints: ep})
	require.NoError(t, err)
	require.Equal(t, v2.Code_TOPIC_NOT_FOUND, r.GetStatus().GetCode())
	r, err = c.cli.QueryRoute(ctx, &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "RouteT"}, Endpoints: ep})
	require.NoError(t, err)
	require.Equal(t, v2.Code_CLIENT_ID_REQUIRED, r.GetStatus().GetCode())
}

// Send, receive, ack one message, leave the other: only the unacked one
// comes back after its invisible time, with delivery attempt 2; its new
// receipt handle acks it. Properties survive the trip.
func TestSendReceiveAckRedelivery(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, g *Config) { g.MinInvisible = time.Second })
	c.createTopic(t, "NormalT", "NORMAL", 2)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx, cctx := as(ctx, "producer-1"), as(ctx, "consumer-1")
	_, pst := c.telemetry(t, pctx, producerSettings("NormalT"))
	require.Equal(t, int32(3), pst.GetBackoffPolicy().GetMaxAttempts())
	require.Equal(t, int32(4<<20), pst.GetPublishing().GetMaxBodySize())
	_, cst := c.telemetry(t, cctx, consumerSettings("G1", "NormalT"))
	require.Equal(t, int32(17), cst.GetBackoffPolicy().GetMaxAttempts())
	require.Equal(t, int32(32), cst.GetSubscription().GetReceiveBatchSize())
	hb, err := c.cli.Heartbeat(cctx, &v2.HeartbeatRequest{Group: &v2.Resource{Name: "G1"}, ClientType: v2.ClientType_SIMPLE_CONSUMER})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, hb.GetStatus().GetCode(), hb.GetStatus().GetMessage())

	for i, id := range []string{"MSGID-ACKED", "MSGID-LEFT"} {
		m := newMessage("NormalT", id, fmt.Sprintf("body-%d", i))
		m.UserProperties = map[string]string{"color": "red"}
		sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
		require.Equal(t, id, sr.GetEntries()[0].GetMessageId())
	}

	got := map[string]*v2.Message{}
	deadline := time.Now().Add(20 * time.Second)
	for len(got) < 2 && time.Now().Before(deadline) {
		st, msgs := c.receive(t, cctx, "G1", "NormalT", 16, 3*time.Second, 5*time.Second)
		if st.GetCode() == v2.Code_MESSAGE_NOT_FOUND {
			continue
		}
		require.Equal(t, v2.Code_OK, st.GetCode(), st.GetMessage())
		for _, m := range msgs {
			got[m.GetSystemProperties().GetMessageId()] = m
		}
	}
	require.Len(t, got, 2)
	acked := got["MSGID-ACKED"]
	require.Equal(t, "body-0", string(acked.GetBody()))
	sp := acked.GetSystemProperties()
	require.Equal(t, "TagA", sp.GetTag())
	require.Equal(t, []string{"k1", "k2"}, sp.GetKeys())
	require.Equal(t, "red", acked.GetUserProperties()["color"])
	require.Equal(t, int32(1), sp.GetDeliveryAttempt())
	require.Equal(t, v2.MessageType_NORMAL, sp.GetMessageType())
	require.NotEmpty(t, sp.GetReceiptHandle())
	require.Equal(t, v2.DigestType_MD5, sp.GetBodyDigest().GetType())
	require.Len(t, sp.GetBodyDigest().GetChecksum(), 32)
	require.NotEmpty(t, sp.GetStoreHost())

	ar, err := c.cli.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "G1"}, Topic: &v2.Resource{Name: "NormalT"},
		Entries: []*v2.AckMessageEntry{{MessageId: "MSGID-ACKED", ReceiptHandle: sp.GetReceiptHandle()}}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, ar.GetStatus().GetCode(), ar.GetStatus().GetMessage())

	// The unacked one comes back after its invisible time, the acked one never.
	var again *v2.Message
	deadline = time.Now().Add(30 * time.Second)
	for again == nil && time.Now().Before(deadline) {
		st, msgs := c.receive(t, cctx, "G1", "NormalT", 16, 3*time.Second, 5*time.Second)
		if st.GetCode() != v2.Code_OK {
			continue
		}
		for _, m := range msgs {
			require.NotEqual(t, "MSGID-ACKED", m.GetSystemProperties().GetMessageId(), "an acked message came back")
			if m.GetSystemProperties().GetMessageId() == "MSGID-LEFT" {
				again = m
			}
		}
	}
	require.NotNil(t, again, "the unacked message was not redelivered")
	require.Equal(t, int32(2), again.GetSystemProperties().GetDeliveryAttempt())
	require.Equal(t, "body-1", string(again.GetBody()))

	// Change its invisible duration, then ack with the new handle.
	cr, err := c.cli.ChangeInvisibleDuration(cctx, &v2.ChangeInvisibleDurationRequest{Group: &v2.Resource{Name: "G1"}, Topic: &v2.Resource{Name: "NormalT"},
		ReceiptHandle: again.GetSystemProperties().GetReceiptHandle(), InvisibleDuration: durationpb.New(30 * time.Second), MessageId: "MSGID-LEFT"})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, cr.GetStatus().GetCode(), cr.GetStatus().GetMessage())
	require.NotEqual(t, again.GetSystemProperties().GetReceiptHandle(), cr.GetReceiptHandle())
	ar, err = c.cli.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "G1"}, Topic: &v2.Resource{Name: "NormalT"},
		Entries: []*v2.AckMessageEntry{{MessageId: "MSGID-LEFT", ReceiptHandle: cr.GetReceiptHandle()}}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, ar.GetStatus().GetCode(), ar.GetStatus().GetMessage())

	nt, err := c.cli.NotifyClientTermination(cctx, &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: "G1"}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, nt.GetStatus().GetCode(), nt.GetStatus().GetMessage())
	hb, err = c.cli.Heartbeat(cctx, &v2.HeartbeatRequest{Group: &v2.Resource{Name: "G1"}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_UNRECOGNIZED_CLIENT_TYPE, hb.GetStatus().GetCode())
}

// FIFO: one message group lands on one queue and a FIFO group receives
// it in send order; a delay message carries its delivery timestamp.
func TestFIFOAndDelay(t *testing.T) {
	c := startCluster(t, nil)
	c.createTopic(t, "FifoT", "FIFO", 4)
	c.createGroup(t, "FG", true, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx, cctx := as(ctx, "fifo-producer"), as(ctx, "fifo-consumer")
	c.telemetry(t, pctx, producerSettings("FifoT"))
	_, cst := c.telemetry(t, cctx, consumerSettings("FG", "FifoT"))
	require.True(t, cst.GetSubscription().GetFifo(), "the orderly group's settings say fifo")

	qa, err := c.cli.QueryAssignment(cctx, &v2.QueryAssignmentRequest{Topic: &v2.Resource{Name: "FifoT"}, Group: &v2.Resource{Name: "FG"},
		Endpoints: &v2.Endpoints{Addresses: []*v2.Address{{Host: "127.0.0.1", Port: 1}}}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, qa.GetStatus().GetCode())
	require.Len(t, qa.GetAssignments(), 4, "a FIFO group gets every queue")

	queues := map[int32]bool{}
	const n = 6
	for i := range n {
		m := newMessage("FifoT", fmt.Sprintf("FIFO-%d", i), fmt.Sprintf("%d", i))
		m.SystemProperties.MessageType = v2.MessageType_FIFO
		m.SystemProperties.MessageGroup = new("order-42")
		sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
	}
	var order []string
	deadline := time.Now().Add(20 * time.Second)
	for len(order) < n && time.Now().Before(deadline) {
		st, msgs := c.receive(t, cctx, "FG", "FifoT", 32, 20*time.Second, 5*time.Second)
		if st.GetCode() != v2.Code_OK {
			continue
		}
		for _, m := range msgs {
			require.Equal(t, "order-42", m.GetSystemProperties().GetMessageGroup())
			require.Equal(t, v2.MessageType_FIFO, m.GetSystemProperties().GetMessageType())
			queues[m.GetSystemProperties().GetQueueId()] = true
			order = append(order, string(m.GetBody()))
			ar, err := c.cli.AckMessage(cctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "FG"}, Topic: &v2.Resource{Name: "FifoT"},
				Entries: []*v2.AckMessageEntry{{MessageId: m.GetSystemProperties().GetMessageId(), ReceiptHandle: m.GetSystemProperties().GetReceiptHandle()}}})
			require.NoError(t, err)
			require.Equal(t, v2.Code_OK, ar.GetStatus().GetCode(), ar.GetStatus().GetMessage())
		}
	}
	require.Equal(t, []string{"0", "1", "2", "3", "4", "5"}, order)
	require.Len(t, queues, 1, "one message group, one queue")

	// Delay: the delivery timestamp goes through as TIMER_DELIVER_MS.
	c.createTopic(t, "DelayT", "DELAY", 1)
	c.telemetry(t, as(ctx, "delay-producer"), producerSettings("DelayT"))
	c.telemetry(t, as(ctx, "delay-consumer"), consumerSettings("DG", "DelayT"))
	at := time.Now().Add(2 * time.Second)
	m := newMessage("DelayT", "DELAY-1", "later")
	m.SystemProperties.MessageType = v2.MessageType_DELAY
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(at)
	sr, err := c.cli.SendMessage(as(ctx, "delay-producer"), &v2.SendMessageRequest{Messages: []*v2.Message{m}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
	var got *v2.Message
	deadline = time.Now().Add(20 * time.Second)
	for got == nil && time.Now().Before(deadline) {
		st, msgs := c.receive(t, as(ctx, "delay-consumer"), "DG", "DelayT", 1, 20*time.Second, 5*time.Second)
		if st.GetCode() == v2.Code_OK && len(msgs) > 0 {
			got = msgs[0]
		}
	}
	require.NotNil(t, got)
	require.False(t, time.Now().Before(at.Add(-50*time.Millisecond)), "delivered before its time")
	require.Equal(t, v2.MessageType_DELAY, got.GetSystemProperties().GetMessageType())
	require.Equal(t, at.UnixMilli(), got.GetSystemProperties().GetDeliveryTimestamp().AsTime().UnixMilli())
}
