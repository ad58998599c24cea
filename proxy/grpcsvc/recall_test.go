package grpcsvc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/recall"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// SendMessage of a DELAY message answers the broker's recall handle;
// RecallMessage with it cancels the delivery (a control message of the
// same time arrives); bad handles answer as Java's proxy.
func TestRecallMessage(t *testing.T) {
	c := startCluster(t, func(bc *broker.Config, _ *Config) { bc.RecallMessageEnable = true })
	c.createTopic(t, "RecallT", "DELAY", 1)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx, cctx := as(ctx, "recall-producer"), as(ctx, "recall-consumer")
	c.telemetry(t, pctx, producerSettings("RecallT"))
	c.telemetry(t, cctx, consumerSettings("RG", "RecallT"))

	at := time.Now().Add(3 * time.Second)
	send := func(id, body string) *v2.SendResultEntry {
		m := newMessage("RecallT", id, body)
		m.SystemProperties.MessageType = v2.MessageType_DELAY
		m.SystemProperties.DeliveryTimestamp = timestamppb.New(at)
		sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
		return sr.GetEntries()[0]
	}
	gone := send("0A0000000000000000000000000000A1", "gone")
	keep := send("0A0000000000000000000000000000A2", "keep")
	require.NotEmpty(t, gone.GetRecallHandle())
	require.NotEmpty(t, keep.GetRecallHandle())
	hd, err := recall.Decode(gone.GetRecallHandle())
	require.NoError(t, err)
	require.Equal(t, "RecallT", hd.Topic)
	require.Equal(t, "broker-a", hd.BrokerName)
	require.Equal(t, gone.GetMessageId(), hd.MessageID)

	rr, err := c.cli.RecallMessage(pctx, &v2.RecallMessageRequest{Topic: &v2.Resource{Name: "RecallT"}, RecallHandle: gone.GetRecallHandle()})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, rr.GetStatus().GetCode(), rr.GetStatus().GetMessage())
	require.Equal(t, gone.GetMessageId(), rr.GetMessageId())

	// Java's ProducerProcessor: a handle that does not decode.
	rr, err = c.cli.RecallMessage(pctx, &v2.RecallMessageRequest{Topic: &v2.Resource{Name: "RecallT"}, RecallHandle: "not a handle"})
	require.NoError(t, err)
	require.Equal(t, v2.Code_INTERNAL_SERVER_ERROR, rr.GetStatus().GetCode())
	require.Equal(t, "recall handle is invalid", rr.GetStatus().GetMessage())
	// The broker's ILLEGAL_OPERATION (RESPONSE_CODE_MAPPING has none).
	rr, err = c.cli.RecallMessage(pctx, &v2.RecallMessageRequest{Topic: &v2.Resource{Name: "RecallT"},
		RecallHandle: recall.Encode("RecallT", "broker-a", time.Now().Add(-time.Second).UnixMilli(), "x")})
	require.NoError(t, err)
	require.Equal(t, v2.Code_INTERNAL_SERVER_ERROR, rr.GetStatus().GetCode())
	require.Equal(t, "recall failed, timestamp invalid", rr.GetStatus().GetMessage())

	// Only the control arrives; wait a full slot past the due time.
	var got []string
	deadline := at.Add(3 * time.Second)
	for time.Now().Before(deadline) {
		st, msgs := c.receive(t, cctx, "RG", "RecallT", 8, 20*time.Second, time.Second)
		if st.GetCode() != v2.Code_OK {
			continue
		}
		for _, m := range msgs {
			got = append(got, string(m.GetBody()))
		}
	}
	require.Equal(t, []string{"keep"}, got)
}
