package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
)

// The per-request parsing on the send and pull paths allocates nothing,
// subscription lookup included once the expression is cached.
func TestHotPathParsingAllocs(t *testing.T) {
	send := sendV1("T", 1, props("TAGS", "a"), []byte("x"))
	pull := pullReq("g", "T", 0, 5, 6, 100, "a || b")
	sendV2 := request(codec.ReqSendMessageV2, "a", "pg", "b", "T", "c", "TBW102", "d", "4", "e", "2",
		"f", "0", "g", "1700000000000", "h", "0", "i", props("TAGS", "a"), "j", "0", "k", "false", "l", "16", "m", "false")
	var sh, sh2 sendHeader
	var ph header.PullMessageRequest
	var sub filter.Subscription
	cache := filter.NewCache(0)
	_, err := cache.Subscription("TAG", "a || b") // warm the cache
	require.NoError(t, err)
	n := testing.AllocsPerRun(100, func() {
		if sh.decode(send) != nil || sh2.decode(sendV2) != nil || headerFailure(pull, ph.Decode(pull)) != nil {
			panic("decode failed")
		}
		sub, _ = cache.Subscription(ph.ExpressionType, ph.Subscription)
	})
	require.Zero(t, n)
	require.Equal(t, "T", sh.Topic)
	require.Equal(t, int32(1), sh.QueueID)
	require.Equal(t, int32(2), sh2.QueueID)
	require.Equal(t, int64(5), ph.QueueOffset)
	require.False(t, sub.MatchAllCodes())
	require.True(t, sub.MatchCode(message.TagsHash("b")))
	require.False(t, sub.MatchCode(message.TagsHash("c")))
}

// A pull without the subscription flag finds the heartbeat's subscription
// compiled: looking it up allocates nothing.
func TestHeartbeatSubscriptionLookupAllocs(t *testing.T) {
	m := newClientManager(testLogger(), time.Minute, filter.NewCache(0))
	cd := body.ConsumerData{GroupName: "g", SubscriptionDataSet: []body.SubscriptionData{
		{Topic: "T", SubString: "a || b", TagsSet: []string{"a", "b"}, SubVersion: 3},
		{Topic: "S", SubString: "x > 1", ExpressionType: "SQL92", SubVersion: 4},
	}}
	require.True(t, m.registerConsumer(&cd, clientChannel{clientID: "c"}, false))
	var hs heartbeatSub
	n := testing.AllocsPerRun(100, func() {
		hs, _, _ = m.pullSubscription("g", "T")
		hs, _, _ = m.pullSubscription("g", "S")
	})
	require.Zero(t, n)
	require.NoError(t, hs.err)
	require.NotNil(t, hs.filter.SQL)
	hs, found, known := m.pullSubscription("g", "T")
	require.True(t, found && known)
	require.Equal(t, int64(3), hs.version)
	require.True(t, hs.filter.MatchCode(message.TagsHash("b")))
	require.False(t, hs.filter.MatchCode(message.TagsHash("c")))
}
