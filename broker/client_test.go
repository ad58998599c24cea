package broker

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// goHeartbeat is a heartbeat body as the Go client writes it (codeSet as
// strings, nanosecond subVersion).
func goHeartbeat(clientID, group, topic, expr string, tags ...string) []byte {
	var ts, cs []string
	for _, t := range tags {
		ts = append(ts, `"`+t+`"`)
	}
	_ = cs
	return []byte(`{"clientID":"` + clientID + `","producerDataSet":[{"groupName":"pg"}],"consumerDataSet":[{"groupName":"` + group +
		`","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[` +
		`{"classFilterMode":false,"topic":"` + topic + `","subString":"` + expr + `","tagsSet":[` + strings.Join(ts, ",") + `],"codeSet":["2598919"],"subVersion":1700000000000000000,"expressionType":"TAG"},` +
		`{"classFilterMode":false,"topic":"%RETRY%` + group + `","subString":"*","tagsSet":[],"codeSet":[],"subVersion":1700000000000000000,"expressionType":"TAG"}` +
		`],"unitMode":false}]}`)
}

// notifyClient is a transport client that records NOTIFY_CONSUMER_IDS_CHANGED.
func notifyClient(t *testing.T) (*transport.Client, chan string) {
	ch := make(chan string, 16)
	r := transport.NewRouter()
	r.Handle(codec.ReqNotifyConsumerIdsChanged, nil, func(_ *transport.Conn, req *codec.Frame) *codec.Frame {
		ch <- req.Value("consumerGroup")
		return nil
	})
	cli := transport.NewClient(transport.ClientConfig{Logger: testLogger(), Router: r, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { cli.Close() })
	return cli, ch
}

func TestHeartbeatMembershipAndNotify(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("HB", 2, 6, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	c1, n1 := notifyClient(t)
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("10.0.0.1@1", "cg", "HB", "TagA", "TagA")
	resp, err := c1.Invoke(ctx, tb.addr, hb)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.GreaterOrEqual(t, resp.Version, int32(232))
	require.Equal(t, "cg", <-n1)

	// The retry topic and the subscription group exist now.
	tc, ok := tb.topics.get("%RETRY%cg")
	require.True(t, ok)
	require.Equal(t, int32(1), tc.ReadQueueNums)
	require.Equal(t, int32(6), tc.Perm)
	_, ok = tb.groups.get("cg")
	require.True(t, ok)

	// A second member: both are notified, the list has both.
	c2, n2 := notifyClient(t)
	hb2 := request(codec.ReqHeartBeat)
	hb2.Body = goHeartbeat("10.0.0.2@2", "cg", "HB", "TagA", "TagA")
	resp, err = c2.Invoke(ctx, tb.addr, hb2)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "cg", <-n1)
	require.Equal(t, "cg", <-n2)
	resp, err = c1.Invoke(ctx, tb.addr, request(codec.ReqGetConsumerListByGroup, "consumerGroup", "cg"))
	require.NoError(t, err)
	require.Equal(t, `{"consumerIdList":["10.0.0.1@1","10.0.0.2@2"]}`, string(resp.Body))

	// Pull without the subscription flag uses the heartbeat's TAG filter.
	resp = tb.invoke(t, sendV1("HB", 0, props("TAGS", "TagB"), []byte("b")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	resp = tb.invoke(t, sendV1("HB", 0, props("TAGS", "TagA"), []byte("a")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	tb.waitDispatched(t, "HB", 0, 2)
	resp, err = c1.Invoke(ctx, tb.addr, pullReq("cg", "HB", 0, 0, 0, 0, ""))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "a", string(recs[0].Body))
	require.Equal(t, "2", ext(t, resp, "nextBeginOffset"))

	// A group that never sent a heartbeat has no subscription.
	resp, err = c1.Invoke(ctx, tb.addr, pullReq("nobody", "HB", 0, 0, 0, 0, ""))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSubscriptionNotExist), resp.Code)

	// Closing a member's connection notifies the rest.
	require.NoError(t, c2.Close())
	require.Equal(t, "cg", <-n1)
	require.Eventually(t, func() bool { return len(tb.clients.consumerIDs("cg")) == 1 }, 5*time.Second, time.Millisecond)

	// UNREGISTER_CLIENT removes the last one.
	resp, err = c1.Invoke(ctx, tb.addr, request(codec.ReqUnregisterClient, "clientID", "10.0.0.1@1", "consumerGroup", "cg"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	resp, err = c1.Invoke(ctx, tb.addr, request(codec.ReqGetConsumerListByGroup, "consumerGroup", "cg"))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "no consumer for this group, cg", resp.Remark)
}

func TestHeartbeatBadBody(t *testing.T) {
	tb := startBroker(t, nil)
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":`)
	resp := tb.invoke(t, hb)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	resp = tb.invoke(t, request(codec.ReqGetMaxOffset, "topic", "x", "queueId", "0"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
}

func TestHeartbeatV2(t *testing.T) {
	tb := startBroker(t, nil)
	full := `{"clientID":"c@1","heartbeatFingerprint":77,"withoutSub":false,"producerDataSet":[],"consumerDataSet":[{"groupName":"g2","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[{"topic":"T","subString":"*","tagsSet":[],"codeSet":[],"subVersion":1,"expressionType":"TAG"}],"unitMode":false}]}`
	lean := `{"clientID":"c@1","heartbeatFingerprint":77,"withoutSub":true,"producerDataSet":[],"consumerDataSet":[{"groupName":"g2","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","subscriptionDataSet":[],"unitMode":false}]}`
	send := func(b string) *codec.Frame {
		hb := request(codec.ReqHeartBeat)
		hb.Body = []byte(b)
		resp := tb.invoke(t, hb)
		require.Equal(t, int32(codec.RespSuccess), resp.Code)
		require.Equal(t, "true", ext(t, resp, "IS_SUPPORT_HEART_BEAT_V2"))
		return resp
	}
	require.Equal(t, "false", ext(t, send(full), "IS_SUB_CHANGE"))
	// Without subscriptions and the same fingerprint: the registered ones stay.
	require.Equal(t, "false", ext(t, send(lean), "IS_SUB_CHANGE"))
	_, found, _ := tb.clients.subscription("g2", "T")
	require.True(t, found)
	// A new fingerprint is a subscription change.
	require.Equal(t, "true", ext(t, send(strings.Replace(full, "77", "78", 1)), "IS_SUB_CHANGE"))
	// V1 always reports a change.
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("c@2", "g3", "T", "*")
	require.Equal(t, "true", ext(t, tb.invoke(t, hb), "IS_SUB_CHANGE"))
}

// A heartbeat still on the client pool when its connection closes must not
// register the dead channel (issue #19 S2: the Java lite-pull consumer's
// last heartbeat, handled after its UNREGISTER_CLIENT and its close, kept a
// ghost member in the group until the expiry scan, and the next consumer
// of the group rebalanced half its queues to it).
func TestHeartbeatAfterCloseLeavesNoGhost(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("GH", 8, 6, 0)
	const conns = 200
	for i := range conns {
		nc, err := net.Dial("tcp", tb.addr)
		require.NoError(t, err)
		hb := request(codec.ReqHeartBeat)
		hb.Opaque = int32(i + 1)
		hb.Body = goHeartbeat(fmt.Sprintf("127.0.0.1@ghost%d", i), "ghosts", "GH", "*")
		_, err = nc.Write(hb.AppendTo(nil))
		require.NoError(t, err)
		// Closed at once: the close usually overtakes the heartbeat's
		// turn on the pool.
		require.NoError(t, nc.Close())
	}
	// Every close is seen by the broker well before its 10 s expiry scan
	// (which would hide a ghost); until then members may still be there.
	require.Eventually(t, func() bool { return len(tb.clients.consumerIDs("ghosts")) == 0 },
		5*time.Second, 10*time.Millisecond, "members left: %v", tb.clients.consumerIDs("ghosts"))
}

// Requests whose connection closes at once still run, as in Java: the Go
// client's InvokeOneWay (offset commits at shutdown, SendOneWay) sets no
// oneway flag and closes right after (conformance offset_resume lost its
// commits when such requests were dropped).
func TestRequestsOfClosedConnectionsStillRun(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("CC", 1, 6, 0)
	const conns = 50
	for i := range conns {
		nc, err := net.Dial("tcp", tb.addr)
		require.NoError(t, err)
		commit := request(codec.ReqUpdateConsumerOffset, "consumerGroup", fmt.Sprintf("cc%d", i), "topic", "CC", "queueId", "0", "commitOffset", "7")
		commit.Opaque = 1
		send := sendV1("CC", 0, "", []byte(fmt.Sprintf("m%d", i)))
		send.Opaque = 2
		_, err = nc.Write(append(commit.AppendTo(nil), send.AppendTo(nil)...))
		require.NoError(t, err)
		require.NoError(t, nc.Close())
	}
	require.Eventually(t, func() bool {
		for i := range conns {
			if off, ok := tb.offsets.query(fmt.Sprintf("cc%d", i), "CC", 0); !ok || off != 7 {
				return false
			}
		}
		return tb.store.MaxOffset("CC", 0) == conns
	}, 10*time.Second, 20*time.Millisecond, "commits or sends of closed connections were dropped (max offset %d)", tb.store.MaxOffset("CC", 0))
}
