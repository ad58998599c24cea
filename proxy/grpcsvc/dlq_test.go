package grpcsvc

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// dlqDepth is the message count of %DLQ%group's queue 0 (0 without it).
func (c *cluster) dlqDepth(t *testing.T, group string) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.admin.Invoke(ctx, c.broker, newRequest(codec.ReqGetMaxOffset, &header.GetMaxOffsetRequest{Topic: "%DLQ%" + group, QueueID: 0, Committed: true}))
	require.NoError(t, err)
	if resp.Code != int32(codec.RespSuccess) {
		return 0
	}
	var h header.GetMaxOffsetResponse
	require.NoError(t, h.Decode(resp))
	return h.Offset
}

// Dead letters: ForwardMessageToDeadLetterQueue moves a received message
// to %DLQ%group and acks it; a message past the group's max attempts
// (retryMaxTimes+1 from the settings) goes there on receive instead of
// to the client (PopMessageResultFilterImpl).
func TestDeadLetters(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, g *Config) { g.MinInvisible = time.Second })
	c.createTopic(t, "DlqT", "NORMAL", 1)
	c.createGroup(t, "DG1", false, 16)
	c.createGroup(t, "DG2", false, 0) // max attempts 1
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pctx := as(ctx, "dlq-producer")
	c.telemetry(t, pctx, producerSettings("DlqT"))
	send := func(id string) {
		sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{newMessage("DlqT", id, id)}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
	}
	receiveOne := func(cctx context.Context, group string) *v2.Message {
		deadline := time.Now().Add(20 * time.Second)
		for time.Now().Before(deadline) {
			st, msgs := c.receive(t, cctx, group, "DlqT", 1, time.Second, 5*time.Second)
			if st.GetCode() == v2.Code_OK && len(msgs) > 0 {
				return msgs[0]
			}
		}
		return nil
	}

	// Explicit forward.
	c1 := as(ctx, "dlq-consumer-1")
	_, st1 := c.telemetry(t, c1, consumerSettings("DG1", "DlqT"))
	require.Equal(t, int32(17), st1.GetBackoffPolicy().GetMaxAttempts())
	send("DLQ-1")
	m := receiveOne(c1, "DG1")
	require.NotNil(t, m)
	fr, err := c.cli.ForwardMessageToDeadLetterQueue(c1, &v2.ForwardMessageToDeadLetterQueueRequest{Group: &v2.Resource{Name: "DG1"},
		Topic: &v2.Resource{Name: "DlqT"}, ReceiptHandle: m.GetSystemProperties().GetReceiptHandle(), MessageId: m.GetSystemProperties().GetMessageId(),
		DeliveryAttempt: 1, MaxDeliveryAttempts: 17})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, fr.GetStatus().GetCode(), fr.GetStatus().GetMessage())
	require.Eventually(t, func() bool { return c.dlqDepth(t, "DG1") == 1 }, 10*time.Second, 50*time.Millisecond)

	// Past max attempts: delivered once, then dead-lettered by the endpoint.
	c2 := as(ctx, "dlq-consumer-2")
	_, st2 := c.telemetry(t, c2, consumerSettings("DG2", "DlqT"))
	require.Equal(t, int32(1), st2.GetBackoffPolicy().GetMaxAttempts())
	first := receiveOne(c2, "DG2")
	require.NotNil(t, first)
	require.Equal(t, int32(1), first.GetSystemProperties().GetDeliveryAttempt())
	deadline := time.Now().Add(30 * time.Second)
	for c.dlqDepth(t, "DG2") < 1 {
		require.True(t, time.Now().Before(deadline), "the message past its max attempts never reached %%DLQ%%DG2")
		st, msgs := c.receive(t, c2, "DG2", "DlqT", 1, time.Second, 5*time.Second)
		require.Empty(t, msgs, "a message past its max attempts was delivered (%v)", st)
	}
}
