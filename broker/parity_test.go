package broker

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

// propCount counts the pairs named key in an encoded properties string.
func propCount(props, key string) int {
	n := 0
	it := message.IterProperties(props)
	for {
		k, _, ok := it.Next()
		if !ok {
			return n
		}
		if k == key {
			n++
		}
	}
}

// Like Java's SendMessageProcessor: every stored message carries the
// broker's MSG_REGION, TRACE_ON and CLUSTER, replacing any the producer
// sent; a properties string without its last separator (4.9.8 clients)
// is closed before the broker's pairs follow.
func TestStoredMessageCarriesBrokerProperties(t *testing.T) {
	tb := startBroker(t, func(c *Config) {
		c.RegionID = "RegionX"
		c.TraceOn = false
		c.BrokerClusterName = "ClusterY"
	})
	// No trailing separator, and a stale MSG_REGION from the producer.
	sent := "TAGS\x01TagA\x02MSG_REGION\x01Stale\x02KEYS\x01k1"
	resp := tb.invoke(t, sendV1("Parity", 0, sent, []byte("one")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Equal(t, "RegionX", ext(t, resp, "MSG_REGION"))
	require.Equal(t, "false", ext(t, resp, "TRACE_ON"))

	tb.waitDispatched(t, "Parity", 0, 1)
	pull := tb.invoke(t, pullReq("cg", "Parity", 0, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), pull.Code, pull.Remark)
	recs := decodeRecords(t, pull.Body)
	require.Len(t, recs, 1)
	p := recs[0].Properties
	want := map[string]string{"TAGS": "TagA", "KEYS": "k1", "MSG_REGION": "RegionX", "TRACE_ON": "false", "CLUSTER": "ClusterY"}
	for k, v := range want {
		got, ok := message.Property(p, k)
		require.True(t, ok, "%s missing in %q", k, p)
		require.Equal(t, v, got, k)
		require.Equal(t, 1, propCount(p, k), "%s repeated in %q", k, p)
	}
	uniq, _ := message.Property(p, message.PropertyUniqKey)
	require.Len(t, uniq, 32)
	require.True(t, strings.HasSuffix(p, "\x02"))
}

// Like Java's batch encoder: each message of a batch keeps its own
// properties and gets the batch's (header properties, MSG_REGION,
// TRACE_ON, CLUSTER) appended.
func TestBatchMessagesCarryBatchProperties(t *testing.T) {
	tb := startBroker(t, nil)
	var body []byte
	body = message.AppendBatchEntry(body, 0, []byte("a"), props("KEYS", "k0"))
	body = message.AppendBatchEntry(body, 0, []byte("b"), "KEYS\x01k1") // no trailing separator
	body = message.AppendBatchEntry(body, 0, []byte("c"), "")
	req := batchV2("ParityBatch", 1, props("WAIT", "true"), body)
	resp := tb.invoke(t, req)
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	tb.waitDispatched(t, "ParityBatch", 1, 3)
	pull := tb.invoke(t, pullReq("cg", "ParityBatch", 1, 0, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespSuccess), pull.Code, pull.Remark)
	recs := decodeRecords(t, pull.Body)
	require.Len(t, recs, 3)
	for i, r := range recs {
		p := r.Properties
		for k, v := range map[string]string{"WAIT": "true", "MSG_REGION": "DefaultRegion", "TRACE_ON": "true", "CLUSTER": "DefaultCluster"} {
			got, ok := message.Property(p, k)
			require.True(t, ok, "message %d: %s missing in %q", i, k, p)
			require.Equal(t, v, got)
			require.Equal(t, 1, propCount(p, k))
		}
		keys, ok := message.Property(p, "KEYS")
		if i < 2 {
			require.Equal(t, "k"+string(rune('0'+i)), keys)
		} else {
			require.False(t, ok)
		}
	}
}

// Java 5.x's SubscriptionGroupManager.init creates exactly these groups;
// the ONS and transaction-check groups consume in broadcast mode.
func TestSystemGroupsAsJava(t *testing.T) {
	g := newGroupTable(&Config{StorePathRootDir: t.TempDir()}, nil, testLogger())
	want := map[string]bool{
		"TOOLS_CONSUMER": false, "FILTERSRV_CONSUMER": false, "SELF_TEST_C_GROUP": false,
		"CID_ONS-HTTP-PROXY": true, "CID_ONSAPI_PULL": true, "CID_ONSAPI_PERMISSION": true,
		"CID_ONSAPI_OWNER": true, "CID_RMQ_SYS_TRANS": true,
	}
	g.mu.RLock()
	defer g.mu.RUnlock()
	require.Len(t, g.groups, len(want))
	for name, broadcast := range want {
		sg, ok := g.groups[name]
		require.True(t, ok, name)
		require.Equal(t, name, sg.GroupName)
		require.Equal(t, broadcast, sg.ConsumeBroadcastEnable, name)
	}
	for _, absent := range []string{"CLIENT_INNER_PRODUCER", "SELF_TEST_P_GROUP", "__MONITOR_CONSUMER"} {
		_, ok := g.groups[absent]
		require.False(t, ok, absent)
	}
}
