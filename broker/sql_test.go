package broker

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
)

func sqlPull(group, topic string, offset int64, sysFlag int, suspend int64, expr string) *codec.Frame {
	req := pullReq(group, topic, 0, offset, sysFlag, suspend, expr)
	req.Set("expressionType", "SQL92")
	return req
}

func TestSQL92Filtering(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.EnablePropertyFilter = true })
	tb.topics.createIfAbsent("SQ", 1, 6, 0)
	for _, a := range []string{"1", "5", "9"} {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SQ", 0, props("a", a), []byte("a="+a))).Code)
	}
	tb.waitDispatched(t, "SQ", 0, 3)

	// Subscription carried by the pull.
	resp := tb.invoke(t, sqlPull("cg", "SQ", 0, pullFlagSubscription, 0, "a > 3"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 2)
	require.Equal(t, "a=5", string(recs[0].Body))
	require.Equal(t, "a=9", string(recs[1].Body))
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	resp = tb.invoke(t, sqlPull("cg", "SQ", 0, pullFlagSubscription, 0, "a >"))
	require.Equal(t, int32(codec.RespSubscriptionParseFailed), resp.Code)

	// Subscription from a Go-style heartbeat (pulls say TAG).
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"c@1","producerDataSet":[],"consumerDataSet":[{"groupName":"sg","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"SQ","subString":"a = 1 OR a = 9","tagsSet":[],"codeSet":[],"subVersion":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `,"expressionType":"SQL92"}],"unitMode":false}]}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, hb).Code)
	resp = tb.invoke(t, pullReq("sg", "SQ", 0, 0, 0, 0, ""))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs = decodeRecords(t, resp.Body)
	require.Len(t, recs, 2)
	require.Equal(t, "a=1", string(recs[0].Body))

	// A held SQL pull wakes only for a matching arrival.
	ch := tb.pullAsync(sqlPull("cg", "SQ", 3, pullFlagSubscription|pullFlagSuspend, 3000, "a = 100"))
	require.Eventually(t, func() bool { return tb.pull.holds.held() == 1 }, 2*time.Second, time.Millisecond)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SQ", 0, props("a", "2"), []byte("a=2"))).Code)
	tb.waitDispatched(t, "SQ", 0, 4)
	require.Equal(t, 1, tb.pull.holds.held())
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SQ", 0, props("a", "100"), []byte("a=100"))).Code)
	r := <-ch
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespSuccess), r.resp.Code, r.resp.Remark)
	recs = decodeRecords(t, r.resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "a=100", string(recs[0].Body))

	// CHECK_CLIENT_CONFIG.
	cc := request(codec.ReqCheckClientConfig)
	cc.Body = []byte(`{"clientId":"c","group":"g","subscriptionData":{"topic":"SQ","subString":"a > 1","expressionType":"SQL92"}}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, cc).Code)
	cc.Body = []byte(`{"clientId":"c","group":"g","subscriptionData":{"topic":"SQ","subString":"a >","expressionType":"SQL92"}}`)
	require.Equal(t, int32(codec.RespSubscriptionParseFailed), tb.invoke(t, cc).Code)
}

func TestSQL92DisabledByDefault(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("SQD", 1, 6, 0)
	resp := tb.invoke(t, sqlPull("cg", "SQD", 0, pullFlagSubscription, 0, "a > 3"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The broker does not support consumer to filter message by SQL92", resp.Remark)
}

func sqlHeartbeat(group, topic, expr string) *codec.Frame {
	hb := request(codec.ReqHeartBeat)
	hb.Body = []byte(`{"clientID":"c@1","producerDataSet":[],"consumerDataSet":[{"groupName":"` + group + `","consumeType":"CONSUME_PASSIVELY","messageModel":"CLUSTERING","consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,"topic":"` + topic + `","subString":"` + expr + `","tagsSet":[],"codeSet":[],"subVersion":` + strconv.FormatInt(time.Now().UnixNano(), 10) + `,"expressionType":"SQL92"}],"unitMode":false}]}`)
	return hb
}

// The order of Java's subscription checks: the expression must parse (or,
// from a heartbeat, have filter data) before enablePropertyFilter counts.
func TestPullSubscriptionChecks(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		t.Run(map[bool]string{false: "filterOff", true: "filterOn"}[enabled], func(t *testing.T) {
			tb := startBroker(t, func(c *Config) { c.EnablePropertyFilter = enabled })
			tb.topics.createIfAbsent("SC", 1, 6, 0)
			require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SC", 0, props("a", "1", "TAGS", "A"), []byte("m"))).Code)
			tb.waitDispatched(t, "SC", 0, 1)

			// With the subscription flag.
			for _, bad := range []string{"a >", "a = 1 AND", ""} {
				resp := tb.invoke(t, sqlPull("cg", "SC", 0, pullFlagSubscription, 0, bad))
				require.Equal(t, int32(codec.RespSubscriptionParseFailed), resp.Code, bad)
				require.Equal(t, "parse the consumer's subscription failed", resp.Remark)
			}
			resp := tb.invoke(t, pullReq("cg", "SC", 0, 0, pullFlagSubscription, 0, "||"))
			require.Equal(t, int32(codec.RespSubscriptionParseFailed), resp.Code)
			resp = tb.invoke(t, sqlPull("cg", "SC", 0, pullFlagSubscription, 0, "a = 1"))
			if enabled {
				require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
			} else {
				require.Equal(t, int32(codec.RespSystemError), resp.Code)
				require.Equal(t, "The broker does not support consumer to filter message by SQL92", resp.Remark)
			}
			bogus := pullReq("cg", "SC", 0, 0, pullFlagSubscription, 0, "x")
			bogus.Set("expressionType", "CLASS")
			resp = tb.invoke(t, bogus)
			require.Equal(t, int32(codec.RespSystemError), resp.Code)
			require.Equal(t, "The broker does not support consumer to filter message by CLASS", resp.Remark)

			// From the heartbeat (the Go client's pulls say TAG, no flag).
			require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sqlHeartbeat("badg", "SC", "a >")).Code)
			resp = tb.invoke(t, pullReq("badg", "SC", 0, 0, 0, 0, ""))
			require.Equal(t, int32(codec.RespFilterDataNotExist), resp.Code)
			require.Equal(t, "The broker's consumer filter data is not exist!Your expression may be wrong!", resp.Remark)
			require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sqlHeartbeat("goodg", "SC", "a = 1")).Code)
			resp = tb.invoke(t, pullReq("goodg", "SC", 0, 0, 0, 0, ""))
			if enabled {
				require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
				require.Len(t, decodeRecords(t, resp.Body), 1)
			} else {
				require.Equal(t, int32(codec.RespSystemError), resp.Code)
				require.Equal(t, "The broker does not support consumer to filter message by SQL92", resp.Remark)
			}
			// A later heartbeat with a fixed expression replaces the broken one.
			require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sqlHeartbeat("badg", "SC", "a = 2")).Code)
			resp = tb.invoke(t, pullReq("badg", "SC", 0, 0, 0, 0, ""))
			require.NotEqual(t, int32(codec.RespFilterDataNotExist), resp.Code)
		})
	}
}

// TAG filtering follows Java: " || " subscribes to nothing, "*" to
// everything, and a held pull wakes only for a tag it subscribes.
func TestPullTagFilter(t *testing.T) {
	tb := startBroker(t, nil)
	tb.topics.createIfAbsent("TF", 1, 6, 0)
	for _, tag := range []string{"A", "B", "A"} {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("TF", 0, props("TAGS", tag), []byte(tag))).Code)
	}
	tb.waitDispatched(t, "TF", 0, 3)

	resp := tb.invoke(t, pullReq("cg", "TF", 0, 0, pullFlagSubscription, 0, "B || C"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	recs := decodeRecords(t, resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "B", string(recs[0].Body))

	resp = tb.invoke(t, pullReq("cg", "TF", 0, 0, pullFlagSubscription, 0, " || "))
	require.NotEqual(t, int32(codec.RespSuccess), resp.Code, "an empty tag set matches nothing")
	require.Equal(t, "3", ext(t, resp, "nextBeginOffset"))
	resp = tb.invoke(t, pullReq("cg", "TF", 0, 0, pullFlagSubscription, 0, "*"))
	require.Len(t, decodeRecords(t, resp.Body), 3)

	// Heartbeat-registered TAG subscription (codes recomputed from tagsSet).
	hb := request(codec.ReqHeartBeat)
	hb.Body = goHeartbeat("c@1", "tg", "TF", "A", "A")
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, hb).Code)
	resp = tb.invoke(t, pullReq("tg", "TF", 0, 0, 0, 0, ""))
	require.Len(t, decodeRecords(t, resp.Body), 2)

	ch := tb.pullAsync(pullReq("cg", "TF", 0, 3, pullFlagSubscription|pullFlagSuspend, 5000, "C"))
	require.Eventually(t, func() bool { return tb.pull.holds.held() == 1 }, 2*time.Second, time.Millisecond)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("TF", 0, props("TAGS", "A"), []byte("A"))).Code)
	tb.waitDispatched(t, "TF", 0, 4)
	require.Equal(t, 1, tb.pull.holds.held(), "woken by a tag it does not subscribe")
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("TF", 0, props("TAGS", "C"), []byte("C"))).Code)
	r := <-ch
	require.NoError(t, r.err)
	require.Equal(t, int32(codec.RespSuccess), r.resp.Code, r.resp.Remark)
	recs = decodeRecords(t, r.resp.Body)
	require.Len(t, recs, 1)
	require.Equal(t, "C", string(recs[0].Body))
}

func TestCheckClientConfigSharesCache(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.EnablePropertyFilter = true })
	cc := request(codec.ReqCheckClientConfig)
	cc.Body = []byte(`{"clientId":"c","group":"g","subscriptionData":{"topic":"SQ","subString":"b >","expressionType":"SQL92"}}`)
	resp := tb.invoke(t, cc)
	require.Equal(t, int32(codec.RespSubscriptionParseFailed), resp.Code)
	_, err := filter.Compile("b >")
	require.EqualError(t, err, resp.Remark)
	n := tb.filters.Len()
	cc.Body = []byte(`{"clientId":"c","group":"g","subscriptionData":{"topic":"SQ","subString":"b > 1","expressionType":"SQL92"}}`)
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, cc).Code)
	require.Equal(t, n+1, tb.filters.Len())
	// The pull that follows finds it compiled.
	tb.topics.createIfAbsent("SQ", 1, 6, 0)
	require.Equal(t, int32(codec.RespPullNotFound), tb.invoke(t, sqlPull("cg", "SQ", 0, pullFlagSubscription, 0, "b > 1")).Code)
	require.Equal(t, n+1, tb.filters.Len())

	off := startBroker(t, nil)
	resp = off.invoke(t, cc)
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The broker does not support consumer to filter message by SQL92", resp.Remark)
}
