package broker

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
)

// The per-request parsing on the send and pull paths allocates nothing,
// subscription lookup included once the expression is cached.
func TestHotPathParsingAllocs(t *testing.T) {
	send := sendV1("T", 1, props("TAGS", "a"), []byte("x"))
	pull := pullReq("g", "T", 0, 5, 6, 100, "a || b")
	var sh sendHeader
	var ph pullHeader
	var sub filter.Subscription
	cache := filter.NewCache(0)
	_, err := cache.Subscription("TAG", "a || b") // warm the cache
	require.NoError(t, err)
	n := testing.AllocsPerRun(100, func() {
		sh.parse(send)
		ph.parse(pull)
		sub, _ = cache.Subscription(ph.expressionType, ph.subscription)
	})
	require.Zero(t, n)
	require.Equal(t, "T", sh.topic)
	require.Equal(t, int32(1), sh.queueID)
	require.Equal(t, int64(5), ph.queueOffset)
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
