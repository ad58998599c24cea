package grpcsvc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/compat/remarks"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

const (
	pullTopic = "GPullT"
	pullGroup = "GPullG"
)

// startPullCluster is a local-mode endpoint over a broker with SQL92
// filtering on and /metrics on loopback (rocketgo_held_pulls shows a pull
// held on the broker), with a one-queue topic.
func startPullCluster(t *testing.T) *cluster {
	c := startCluster(t, func(bc *broker.Config, gc *Config) {
		bc.EnablePropertyFilter = true
		bc.MetricsExporterType, bc.MetricsPromExporterHost, bc.MetricsPromExporterPort = "PROM", "127.0.0.1", 0
		gc.MinLongPolling = 100 * time.Millisecond
	})
	c.createTopic(t, pullTopic, "NORMAL", 1)
	return c
}

// sendTagged sends n messages to topic, message i tagged tags[i%len(tags)]
// with user property n=i; it returns their message ids in order.
func (c *cluster) sendTagged(t *testing.T, ctx context.Context, topic string, n int, tags ...string) []string {
	t.Helper()
	pctx := as(ctx, "pull-producer")
	c.telemetry(t, pctx, producerSettings(topic))
	base := c.queueEnd(t, ctx, topic)
	ids := make([]string, n)
	for i := range n {
		ids[i] = fmt.Sprintf("0A00000000000000000%05X", i+1)
		m := newMessage(topic, ids[i], "body-"+strconv.Itoa(i))
		m.SystemProperties.Tag = new(tags[i%len(tags)])
		m.UserProperties = map[string]string{"n": strconv.Itoa(i)}
		sr, err := c.cli.SendMessage(pctx, &v2.SendMessageRequest{Messages: []*v2.Message{m}})
		require.NoError(t, err)
		require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())
	}
	c.waitQueueEnd(t, ctx, topic, base+int64(n))
	return ids
}

// queueEnd is QueryOffset END of a one-queue topic's queue 0.
func (c *cluster) queueEnd(t *testing.T, ctx context.Context, topic string) int64 {
	t.Helper()
	r, err := c.cli.QueryOffset(as(ctx, "pull-client"), &v2.QueryOffsetRequest{QueryOffsetPolicy: v2.QueryOffsetPolicy_END,
		MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: 0, Broker: &v2.Broker{Name: "broker-a"}}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, r.GetStatus().GetCode(), r.GetStatus().GetMessage())
	return r.GetOffset()
}

// waitQueueEnd waits until the queue's end reaches want: the broker
// dispatches a message to its consume queue after the send's reply.
func (c *cluster) waitQueueEnd(t *testing.T, ctx context.Context, topic string, want int64) {
	t.Helper()
	require.Eventually(t, func() bool { return c.queueEnd(t, ctx, topic) == want }, 10*time.Second, 5*time.Millisecond)
}

// pullResult is one PullMessage stream, in the order it came.
type pullResult struct {
	status  *v2.Status
	msgs    []*v2.Message
	next    int64 // -1: none sent
	itemsIn []string
}

func pullReq(topic string, queue int32, offset int64, batch int32, f *v2.FilterExpression, poll time.Duration) *v2.PullMessageRequest {
	r := &v2.PullMessageRequest{Group: &v2.Resource{Name: pullGroup},
		MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: topic}, Id: queue, Broker: &v2.Broker{Name: "broker-a"}},
		Offset:       offset, BatchSize: batch, FilterExpression: f}
	if poll > 0 {
		r.LongPollingTimeout = durationpb.New(poll)
	}
	return r
}

func tagFilter(exp string) *v2.FilterExpression {
	return &v2.FilterExpression{Type: v2.FilterType_TAG, Expression: exp}
}

// pull runs one PullMessage to its end and checks the stream's shape:
// the status first, then messages, then at most one next offset.
func (c *cluster) pull(t *testing.T, ctx context.Context, req *v2.PullMessageRequest) pullResult {
	t.Helper()
	return pullOn(t, ctx, c.cli, req)
}

func pullOn(t *testing.T, ctx context.Context, cli v2.MessagingServiceClient, req *v2.PullMessageRequest) pullResult {
	t.Helper()
	ps, err := cli.PullMessage(as(ctx, "pull-client"), req)
	require.NoError(t, err)
	res := pullResult{next: -1}
	for {
		r, err := ps.Recv()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		switch x := r.GetContent().(type) {
		case *v2.PullMessageResponse_Status:
			require.Nil(t, res.status, "one status")
			res.status = x.Status
			res.itemsIn = append(res.itemsIn, "status")
		case *v2.PullMessageResponse_Message:
			require.NotNil(t, res.status, "the status comes first")
			require.Equal(t, int64(-1), res.next, "messages come before the next offset")
			res.msgs = append(res.msgs, x.Message)
			res.itemsIn = append(res.itemsIn, "message")
		case *v2.PullMessageResponse_NextOffset:
			require.Equal(t, int64(-1), res.next, "one next offset")
			res.next = x.NextOffset
			res.itemsIn = append(res.itemsIn, "next")
		}
	}
	require.NotNil(t, res.status)
	return res
}

func offsets(msgs []*v2.Message) []int64 {
	out := make([]int64, len(msgs))
	for i, m := range msgs {
		out[i] = m.GetSystemProperties().GetQueueOffset()
	}
	return out
}

// A pull reads the queue in order from the client's offset, batch by
// batch, each answer naming the offset to pull from next; at the end of
// the queue it answers MESSAGE_NOT_FOUND with the same next offset. The
// messages are whole (body, tag, user properties, id) and carry no
// receipt handle (a pull is not a pop).
func TestPullMessageInOrder(t *testing.T) {
	c := startPullCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := c.sendTagged(t, ctx, pullTopic, 10, "TagA", "TagB")

	r := c.pull(t, ctx, pullReq(pullTopic, 0, 0, 4, nil, 0))
	require.Equal(t, v2.Code_OK, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, []int64{0, 1, 2, 3}, offsets(r.msgs))
	require.Equal(t, int64(4), r.next)
	m := r.msgs[1]
	assert.Equal(t, ids[1], m.GetSystemProperties().GetMessageId())
	assert.Equal(t, "body-1", string(m.GetBody()))
	assert.Equal(t, "TagB", m.GetSystemProperties().GetTag())
	assert.Equal(t, "1", m.GetUserProperties()["n"])
	assert.Equal(t, pullTopic, m.GetTopic().GetName())
	assert.Nil(t, m.GetSystemProperties().ReceiptHandle)

	r = c.pull(t, ctx, pullReq(pullTopic, 0, r.next, 0, tagFilter("*"), 0)) // batch 0: the default 32
	require.Equal(t, v2.Code_OK, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, []int64{4, 5, 6, 7, 8, 9}, offsets(r.msgs))
	require.Equal(t, int64(10), r.next)
	for i, m := range r.msgs {
		assert.Equal(t, ids[4+i], m.GetSystemProperties().GetMessageId())
	}

	r = c.pull(t, ctx, pullReq(pullTopic, 0, 7, 2, nil, 0)) // any offset, not only a batch boundary
	require.Equal(t, []int64{7, 8}, offsets(r.msgs))
	require.Equal(t, int64(9), r.next)

	r = c.pull(t, ctx, pullReq(pullTopic, 0, 10, 4, nil, 0))
	require.Equal(t, v2.Code_MESSAGE_NOT_FOUND, r.status.GetCode(), r.status.GetMessage())
	require.Empty(t, r.msgs)
	require.Equal(t, int64(10), r.next)
	require.Equal(t, []string{"status", "next"}, r.itemsIn)
}

// Tag and SQL92 filters select on the broker; a filtered-out stretch is
// pulled past, and a filter matching nothing gives MESSAGE_NOT_FOUND with
// the queue's end as the next offset. A bad SQL92 expression is
// ILLEGAL_FILTER_EXPRESSION.
func TestPullMessageFilters(t *testing.T) {
	c := startPullCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.sendTagged(t, ctx, pullTopic, 12, "TagA", "TagB", "TagC")

	r := c.pull(t, ctx, pullReq(pullTopic, 0, 0, 32, tagFilter("TagB"), 0))
	require.Equal(t, v2.Code_OK, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, []int64{1, 4, 7, 10}, offsets(r.msgs))
	for _, m := range r.msgs {
		require.Equal(t, "TagB", m.GetSystemProperties().GetTag())
	}
	require.Equal(t, int64(12), r.next)

	r = c.pull(t, ctx, pullReq(pullTopic, 0, 0, 32, tagFilter("TagA || TagC"), 0))
	require.Equal(t, []int64{0, 2, 3, 5, 6, 8, 9, 11}, offsets(r.msgs))

	sql := &v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "n >= 5 AND n < 8"}
	r = c.pull(t, ctx, pullReq(pullTopic, 0, 0, 32, sql, 0))
	require.Equal(t, v2.Code_OK, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, []int64{5, 6, 7}, offsets(r.msgs))
	require.Equal(t, "5", r.msgs[0].GetUserProperties()["n"])

	r = c.pull(t, ctx, pullReq(pullTopic, 0, 0, 32, tagFilter("NoSuchTag"), 0))
	require.Equal(t, v2.Code_MESSAGE_NOT_FOUND, r.status.GetCode(), r.status.GetMessage())
	require.Empty(t, r.msgs)
	require.Equal(t, int64(12), r.next)

	r = c.pull(t, ctx, pullReq(pullTopic, 0, 0, 32, &v2.FilterExpression{Type: v2.FilterType_SQL, Expression: "n >"}, 0))
	require.Equal(t, v2.Code_ILLEGAL_FILTER_EXPRESSION, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, int64(-1), r.next)
}

// heldPulls reads rocketgo_held_pulls from the broker's /metrics.
func (c *cluster) heldPulls(t *testing.T) int {
	t.Helper()
	resp, err := http.Get("http://" + c.b.MetricsAddr() + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "rocketgo_held_pulls"); ok && (rest[0] == ' ' || rest[0] == '{') {
			n, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			require.NoError(t, err)
			return int(n)
		}
	}
	require.NoError(t, sc.Err())
	t.Fatal("no rocketgo_held_pulls in /metrics")
	return 0
}

// A pull at the queue's end with a long-polling timeout is held on the
// broker (rocketgo_held_pulls counts it) and answered by the next send,
// long before the timeout. Without a message it ends at the timeout with
// MESSAGE_NOT_FOUND; and a client deadline shorter than the timeout is
// respected: the answer comes before it, not DEADLINE_EXCEEDED.
func TestPullMessageLongPolling(t *testing.T) {
	c := startPullCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	c.sendTagged(t, ctx, pullTopic, 2, "TagA")

	type result struct {
		r   pullResult
		dur time.Duration
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		// Collected here and checked on the test's goroutine.
		ps, err := c.cli.PullMessage(as(ctx, "pull-client"), pullReq(pullTopic, 0, 2, 4, tagFilter("*"), 15*time.Second))
		res := pullResult{next: -1}
		for err == nil {
			var r *v2.PullMessageResponse
			if r, err = ps.Recv(); err != nil {
				break
			}
			switch x := r.GetContent().(type) {
			case *v2.PullMessageResponse_Status:
				res.status = x.Status
			case *v2.PullMessageResponse_Message:
				res.msgs = append(res.msgs, x.Message)
			case *v2.PullMessageResponse_NextOffset:
				res.next = x.NextOffset
			}
		}
		done <- result{res, time.Since(start)}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for c.heldPulls(t) != 1 {
		require.True(t, time.Now().Before(deadline), "the pull was never held on the broker")
		select {
		case r := <-done:
			t.Fatalf("the pull returned before it was held: %v", r.r.status)
		case <-time.After(10 * time.Millisecond):
		}
	}
	wake := c.sendTagged(t, ctx, pullTopic, 1, "TagW")
	var got result
	select {
	case got = <-done:
	case <-ctx.Done():
		t.Fatal("the held pull was not woken by the send")
	}
	require.Equal(t, v2.Code_OK, got.r.status.GetCode(), got.r.status.GetMessage())
	require.Len(t, got.r.msgs, 1)
	require.Equal(t, int64(2), got.r.msgs[0].GetSystemProperties().GetQueueOffset())
	require.Equal(t, "TagW", got.r.msgs[0].GetSystemProperties().GetTag())
	require.Equal(t, wake[0], got.r.msgs[0].GetSystemProperties().GetMessageId())
	require.Equal(t, int64(3), got.r.next)
	require.Less(t, got.dur, 15*time.Second, "woken by the send, not by the timeout")

	// Nothing arrives: the broker answers at the long-polling timeout.
	start = time.Now()
	r := c.pull(t, ctx, pullReq(pullTopic, 0, 3, 4, nil, 300*time.Millisecond))
	require.Equal(t, v2.Code_MESSAGE_NOT_FOUND, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, int64(3), r.next)
	require.GreaterOrEqual(t, time.Since(start), 300*time.Millisecond, "held for the long-polling time")

	// A client deadline of 1.5 s under a 15 s long poll: the answer comes
	// in time, as a status.
	dctx, dcancel := context.WithTimeout(ctx, 1500*time.Millisecond)
	defer dcancel()
	r = c.pull(t, dctx, pullReq(pullTopic, 0, 3, 4, nil, 15*time.Second))
	require.Equal(t, v2.Code_MESSAGE_NOT_FOUND, r.status.GetCode(), r.status.GetMessage())
	require.NoError(t, dctx.Err(), "answered before the client's deadline")
	require.Equal(t, 0, c.heldPulls(t))
}

// Bad queues and offsets get the proto's codes and leave the endpoint
// serving: an offset past the end (or before the start) is ILLEGAL_OFFSET
// with the queue's nearest end as the next offset.
func TestPullMessageBadQueueAndOffset(t *testing.T) {
	c := startPullCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c.sendTagged(t, ctx, pullTopic, 3, "TagA")

	r := c.pull(t, ctx, pullReq(pullTopic, 0, 1000, 4, nil, 0))
	require.Equal(t, v2.Code_ILLEGAL_OFFSET, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, int64(3), r.next, "the queue's end")

	r = c.pull(t, ctx, pullReq(pullTopic, 0, -1, 4, nil, 0))
	require.Equal(t, v2.Code_ILLEGAL_OFFSET, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, int64(-1), r.next)

	r = c.pull(t, ctx, pullReq(pullTopic, 5, 0, 4, nil, 0))
	require.Equal(t, v2.Code_BAD_REQUEST, r.status.GetCode(), r.status.GetMessage())
	require.Contains(t, r.status.GetMessage(), "1 read queues")

	req := pullReq(pullTopic, 0, 0, 4, nil, 0)
	req.MessageQueue.Broker.Name = "no-such-broker"
	r = c.pull(t, ctx, req)
	require.Equal(t, v2.Code_BAD_REQUEST, r.status.GetCode(), r.status.GetMessage())

	req = pullReq(pullTopic, 0, 0, 4, nil, 0)
	req.MessageQueue.Broker = nil
	r = c.pull(t, ctx, req)
	require.Equal(t, v2.Code_BAD_REQUEST, r.status.GetCode(), r.status.GetMessage())

	r = c.pull(t, ctx, pullReq("GPullNoSuchTopic", 0, 0, 4, nil, 0))
	require.Equal(t, v2.Code_TOPIC_NOT_FOUND, r.status.GetCode(), r.status.GetMessage())

	req = pullReq(pullTopic, 0, 0, 4, nil, 0)
	req.Group = nil
	r = c.pull(t, ctx, req)
	require.Equal(t, v2.Code_ILLEGAL_CONSUMER_GROUP, r.status.GetCode(), r.status.GetMessage())

	ps, err := c.cli.PullMessage(ctx, pullReq(pullTopic, 0, 0, 4, nil, 0)) // no client id
	require.NoError(t, err)
	first, err := ps.Recv()
	require.NoError(t, err)
	require.Equal(t, v2.Code_CLIENT_ID_REQUIRED, first.GetStatus().GetCode())

	// Still serving.
	r = c.pull(t, ctx, pullReq(pullTopic, 0, 0, 4, nil, 0))
	require.Equal(t, []int64{0, 1, 2}, offsets(r.msgs))
}

// With auth on, a pull needs Sub on the group and the topic, as a receive:
// carol (Sub denied on the topic) gets the refusal as the stream's one
// response; alice pulls what she sent.
func TestPullMessageAuth(t *testing.T) {
	c := startAuthCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	actx := sdkSign(as(ctx, "alice-client"), "alice", "alice-secret")
	sr, err := c.cli.SendMessage(actx, &v2.SendMessageRequest{Messages: []*v2.Message{newMessage(authTopic, "0A0000000000000000000101", "pulled")}})
	require.NoError(t, err)
	require.Equal(t, v2.Code_OK, sr.GetStatus().GetCode(), sr.GetStatus().GetMessage())

	req := func() *v2.PullMessageRequest {
		r := pullReq(authTopic, 0, 0, 32, nil, 0)
		r.Group.Name = authGroup
		return r
	}
	find := func(ctx context.Context) *v2.Message {
		for id := int32(0); id < 2; id++ { // the message went to one of the two queues
			r := req()
			r.MessageQueue.Id = id
			ps, err := c.cli.PullMessage(ctx, r)
			require.NoError(t, err)
			for {
				resp, err := ps.Recv()
				if err != nil {
					break
				}
				if m := resp.GetMessage(); m != nil {
					return m
				}
			}
		}
		return nil
	}
	var m *v2.Message
	require.Eventually(t, func() bool { m = find(actx); return m != nil }, 10*time.Second, 10*time.Millisecond,
		"alice pulls her message (once dispatched)")
	require.Equal(t, "pulled", string(m.GetBody()))

	ps, err := c.cli.PullMessage(sdkSign(as(ctx, "carol-client"), "carol", "carol-secret"), req())
	require.NoError(t, err)
	first, err := ps.Recv()
	require.NoError(t, err)
	assert.Equal(t, v2.Code_UNAUTHORIZED, first.GetStatus().GetCode())
	assert.Contains(t, first.GetStatus().GetMessage(), remarks.AuthDecisionDeny)
	_, err = ps.Recv()
	assert.ErrorIs(t, err, io.EOF)

	ps, err = c.cli.PullMessage(as(ctx, "anon-client"), req()) // no credentials
	require.NoError(t, err)
	first, err = ps.Recv()
	require.NoError(t, err)
	assert.Equal(t, v2.Code_UNAUTHORIZED, first.GetStatus().GetCode())
}

// Cluster mode (cmd/mqproxy's endpoint: routes from the name server) pulls
// from the queue's broker the same way.
func TestPullMessageClusterMode(t *testing.T) {
	c := startPullCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ids := c.sendTagged(t, ctx, pullTopic, 3, "TagA", "TagB")
	gc := Default()
	gc.GRPCPort = 0
	gc.ClusterName = c.b.Config().BrokerClusterName
	ep, err := Start(EndpointConfig{Listen: "127.0.0.1:0", NamesrvAddrs: []string{c.ns.Addr()}, Service: gc})
	require.NoError(t, err)
	defer ep.Close()
	cli := dial(t, ep.Addr())

	r := pullOn(t, ctx, cli, pullReq(pullTopic, 0, 0, 32, tagFilter("TagB"), 0))
	require.Equal(t, v2.Code_OK, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, []int64{1}, offsets(r.msgs))
	require.Equal(t, ids[1], r.msgs[0].GetSystemProperties().GetMessageId())
	require.Equal(t, int64(3), r.next)
	r = pullOn(t, ctx, cli, pullReq(pullTopic, 0, 3, 32, nil, 200*time.Millisecond))
	require.Equal(t, v2.Code_MESSAGE_NOT_FOUND, r.status.GetCode(), r.status.GetMessage())
	require.Equal(t, int64(3), r.next)
}
