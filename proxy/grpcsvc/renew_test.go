package grpcsvc

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/broker"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// renewCluster is a cluster whose auto-renewed receives pop with 2 s of
// invisibility, renewed 1.5 s ahead, scanned every 100 ms; steps replaces
// Java's 1 min first renewal when set.
func renewCluster(t *testing.T, steps ...time.Duration) *cluster {
	c := startCluster(t, func(_ *broker.Config, g *Config) {
		g.MinInvisible, g.MinLongPolling = time.Second, 200*time.Millisecond
		g.Renew = RenewConfig{DefaultInvisible: 2 * time.Second, Ahead: 1500 * time.Millisecond, Period: 100 * time.Millisecond, steps: steps}
	})
	c.createTopic(t, "RenewT", "NORMAL", 1)
	c.createGroup(t, "RG", false, 16)
	return c
}

func (c *cluster) sendOne(t *testing.T, ctx context.Context, topic, id string) {
	t.Helper()
	pctx := as(ctx, "renew-producer")
	c.telemetry(t, pctx, producerSettings(topic))
	sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{newMessage(topic, id, id)}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
}

// receiveAutoRenew is a PushConsumer's receive: auto_renew, with the
// client's invisible duration ignored by the endpoint.
func (c *cluster) receiveAutoRenew(t *testing.T, ctx context.Context, group, topic string, deadline time.Duration) *v2.Message {
	t.Helper()
	end := time.Now().Add(deadline)
	for time.Now().Before(end) {
		rctx, cancel := context.WithTimeout(ctx, 6*time.Second)
		rs, err := c.cli.ReceiveMessage(rctx, &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: group},
			MessageQueue:     &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: -1},
			FilterExpression: &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: "*"}, BatchSize: 1,
			InvisibleDuration: durationpb.New(time.Second), LongPollingTimeout: durationpb.New(time.Second), AutoRenew: true})
		require.NoError(t, err)
		var got *v2.Message
		for {
			r, err := rs.Recv()
			if err != nil {
				break
			}
			if m := r.GetMessage(); m != nil {
				got = m
			}
		}
		cancel()
		if got != nil {
			return got
		}
	}
	return nil
}

// pollNone receives as another consumer of the group for d and fails on
// any message: the held one must stay invisible.
func (c *cluster) pollNone(t *testing.T, ctx context.Context, group, topic string, d time.Duration) {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		st, msgs := c.receive(t, ctx, group, topic, 1, time.Second, 300*time.Millisecond)
		require.Empty(t, msgs, "redelivered while the holder's handle is under auto-renew (status %v)", st)
	}
}

func (c *cluster) pollOne(t *testing.T, ctx context.Context, group, topic string, d time.Duration) *v2.Message {
	t.Helper()
	end := time.Now().Add(d)
	for time.Now().Before(end) {
		if _, msgs := c.receive(t, ctx, group, topic, 1, time.Second, 500*time.Millisecond); len(msgs) > 0 {
			return msgs[0]
		}
	}
	return nil
}

// Auto-renew (Java's DefaultReceiptHandleManager): a handle received with
// auto_renew and 2 s of invisibility stays invisible while its client
// holds it for 7 s, and comes back about invisibleTimeMillisWhenClear
// after the client terminates. Without the renewal the second consumer
// gets it after about 4 s (2 s plus the revive margin).
func TestAutoRenewHoldsUntilTermination(t *testing.T) {
	c := renewCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c.sendOne(t, ctx, "RenewT", "renew-1")

	hctx := as(ctx, "renew-holder")
	st := consumerSettings("RG", "RenewT")
	st.ClientType = new(v2.ClientType_PUSH_CONSUMER)
	c.telemetry(t, hctx, st)
	held := c.receiveAutoRenew(t, hctx, "RG", "RenewT", 20*time.Second)
	require.NotNil(t, held)
	got := time.Now()
	svc := c.ep.Service()
	require.Equal(t, 1, svc.renew.tracking())

	octx := as(ctx, "renew-other")
	c.telemetry(t, octx, consumerSettings("RG", "RenewT"))
	// 2 s invisible + the broker's 2 s revive margin + slack: without the
	// renewal the message is back within this window.
	c.pollNone(t, octx, "RG", "RenewT", 7*time.Second)
	require.Greater(t, time.Since(got), 3*svc.cfg.Renew.DefaultInvisible)

	nt, err := c.cli.NotifyClientTermination(hctx, &v2.NotifyClientTerminationRequest{Group: &v2.Resource{Name: "RG"}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, nt.GetStatus().GetCode())
	require.Equal(t, 0, svc.renew.tracking())
	again := c.pollOne(t, octx, "RG", "RenewT", 15*time.Second)
	require.NotNil(t, again, "the terminated client's message comes back")
	require.Equal(t, held.GetSystemProperties().GetMessageId(), again.GetSystemProperties().GetMessageId())
	require.Equal(t, int32(2), again.GetSystemProperties().GetDeliveryAttempt())
}

// A client that drops without terminating (no telemetry stream for the
// idle time) is found by the scan and its handles come back.
func TestAutoRenewClientDropped(t *testing.T) {
	c := startCluster(t, func(_ *broker.Config, g *Config) {
		g.MinInvisible, g.MinLongPolling, g.IdleTimeout = time.Second, 200*time.Millisecond, 3*time.Second
		g.Renew = RenewConfig{DefaultInvisible: 2 * time.Second, Ahead: 1500 * time.Millisecond, Period: 100 * time.Millisecond}
	})
	c.createTopic(t, "RenewT", "NORMAL", 1)
	c.createGroup(t, "RG", false, 16)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c.sendOne(t, ctx, "RenewT", "renew-drop")

	tctx, dropTelemetry := context.WithCancel(ctx)
	hctx := as(tctx, "renew-dropper")
	st := consumerSettings("RG", "RenewT")
	st.ClientType = new(v2.ClientType_PUSH_CONSUMER)
	c.telemetry(t, hctx, st)
	held := c.receiveAutoRenew(t, hctx, "RG", "RenewT", 20*time.Second)
	require.NotNil(t, held)
	octx := as(ctx, "renew-other")
	c.telemetry(t, octx, consumerSettings("RG", "RenewT"))
	c.pollNone(t, octx, "RG", "RenewT", 3*time.Second) // renewed past its 2 s

	dropTelemetry() // the stream ends; no NotifyClientTermination
	svc := c.ep.Service()
	require.Eventually(t, func() bool { return svc.renew.tracking() == 0 }, 15*time.Second, 50*time.Millisecond)
	again := c.pollOne(t, octx, "RG", "RenewT", 15*time.Second)
	require.NotNil(t, again)
	require.Equal(t, held.GetSystemProperties().GetMessageId(), again.GetSystemProperties().GetMessageId())
}

// The client acks with the handle it received; the endpoint acks the
// latest renewal's handle (AckMessageActivity.getHandleString), so the
// message never comes back. Renewals here ask 2 s, so a stale ack would
// show as a redelivery within the poll.
func TestAutoRenewAckUsesRenewedHandle(t *testing.T) {
	c := renewCluster(t, 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	c.sendOne(t, ctx, "RenewT", "renew-ack")
	hctx := as(ctx, "renew-acker")
	st := consumerSettings("RG", "RenewT")
	st.ClientType = new(v2.ClientType_PUSH_CONSUMER)
	c.telemetry(t, hctx, st)
	held := c.receiveAutoRenew(t, hctx, "RG", "RenewT", 20*time.Second)
	require.NotNil(t, held)
	octx := as(ctx, "renew-other")
	c.telemetry(t, octx, consumerSettings("RG", "RenewT"))
	c.pollNone(t, octx, "RG", "RenewT", 3*time.Second) // at least one renewal done

	sp := held.GetSystemProperties()
	ar, err := c.cli.AckMessage(hctx, &v2.AckMessageRequest{Group: &v2.Resource{Name: "RG"}, Topic: &v2.Resource{Name: "RenewT"},
		Entries: []*v2.AckMessageEntry{{MessageId: sp.GetMessageId(), ReceiptHandle: sp.GetReceiptHandle()}}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, ar.GetStatus().GetCode(), ar.GetStatus().GetMessage())
	require.Equal(t, 0, c.ep.Service().renew.tracking())
	c.pollNone(t, octx, "RG", "RenewT", 5*time.Second)
}

// The table is bounded: past MaxHandles a handle is not tracked.
func TestRenewerBounded(t *testing.T) {
	r := newRenewer(RenewConfig{MaxHandles: 2}, renewFuncs{}, slog.New(slog.DiscardHandler))
	h := func(off int) string {
		return "0 1700000000000 60000 0 0 broker-a 0 " + string(rune('0'+off)) + " 100"
	}
	require.True(t, r.add("c", "g", "t", "m1", h(1), 0))
	require.True(t, r.add("c", "g", "t", "m2", h(2), 0))
	require.False(t, r.add("c", "g", "t", "m3", h(3), 0))
	require.Equal(t, 2, r.tracking())
	require.Equal(t, h(1), r.take("c", "g", "m1", h(1)))
	require.True(t, r.add("c", "g", "t", "m3", h(3), 0))
	require.Equal(t, "not-tracked", r.take("c", "g", "m9", "not-tracked"))
	require.False(t, r.add("c", "g", "t", "m4", "garbage", 0))
}
