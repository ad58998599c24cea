package namesrv

import (
	"fmt"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/body"
)

// heapInUse is HeapInuse after two collections.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// footprintCase registers into t what a scenario's brokers send.
type footprintCase struct {
	name string
	regs func() []*registration
}

// distinctStrings returns n strings, each one allocation of its own as a
// decoded body's are (no garbage between them to fragment the heap).
func distinctStrings(n, length int, prefix string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = padded(length, prefix, strconv.Itoa(i), "-")
	}
	return out
}

// padded is parts padded with x to length, in one allocation.
func padded(length int, parts ...string) string {
	var b strings.Builder
	b.Grow(length)
	for _, p := range parts {
		b.WriteString(p)
	}
	for b.Len() < length {
		b.WriteByte('x')
	}
	return b.String()
}

func testRegistration(cluster, name, addr string, topicNames []string) *registration {
	ts := make([]body.TopicConfig, len(topicNames))
	for i, n := range topicNames {
		ts[i] = body.TopicConfig{TopicName: n, ReadQueueNums: 8, WriteQueueNums: 8, Perm: 6}
	}
	return &registration{
		cluster: strings.Clone(cluster), name: strings.Clone(name), addr: strings.Clone(addr), haAddr: strings.Clone(addr),
		body: body.RegisterBrokerBody{DataVersion: body.TopicVersion{Counter: 1}, Topics: ts, FilterServerList: []string{}}, hasBody: true,
	}
}

var footprintCases = []footprintCase{
	{"distinct 120-byte topics", func() []*registration {
		var rs []*registration
		for b := range 5 {
			rs = append(rs, testRegistration("c", fmt.Sprintf("b%d", b), fmt.Sprintf("127.0.0.%d:10911", b), distinctStrings(20_000, 120, fmt.Sprintf("b%d-", b))))
		}
		return rs
	}},
	{"shared short topics", func() []*registration {
		var rs []*registration
		for b := range 20 {
			rs = append(rs, testRegistration("c", fmt.Sprintf("b%d", b), fmt.Sprintf("127.0.0.%d:10911", b), distinctStrings(5_000, 20, "shared-")))
		}
		return rs
	}},
	{"static-topic mappings", func() []*registration {
		r := testRegistration("c", "b0", "127.0.0.1:10911", nil)
		for i, topic := range distinctStrings(5_000, 40, "mapped-") {
			js := []byte(fmt.Sprintf(`{"topic":%q,"bname":"b0","epoch":%d,"totalQueues":8,%s}`, topic, i, strings.Repeat(`"x":1,`, 20)))
			r.body.Mappings = append(r.body.Mappings, body.TopicMapping{Topic: topic, BrokerName: strings.Clone("b0"), JSON: js})
		}
		return []*registration{r}
	}},
	{"brokers with long headers and filter servers", func() []*registration {
		var rs []*registration
		for b := range 400 {
			r := testRegistration(strings.Repeat("c", 300), padded(200, "b", strconv.Itoa(b), "-"), fmt.Sprintf("10.0.%d.%d:10911", b/200, b%200), distinctStrings(4, 30, fmt.Sprintf("b%d-", b)))
			r.zone = strings.Repeat("z", 100)
			r.body.FilterServerList = distinctStrings(40, 24, "10.1.1.")
			rs = append(rs, r)
		}
		return rs
	}},
}

// TestFootprintMatchesHeap: the route table's byte estimate is within
// 0.8–1.3 times what the Go heap really holds for it, in each shape a
// registration can take, and the running count equals a recount.
func TestFootprintMatchesHeap(t *testing.T) {
	for _, tc := range footprintCases {
		t.Run(tc.name, func(t *testing.T) {
			// What the table holds is the heap with it less the heap
			// without it, the registrations dropped in both.
			rt := newRouteTable(testLogger(), time.Now)
			for _, r := range tc.regs() {
				res, ok := rt.register(r)
				require.True(t, ok)
				require.Empty(t, res.refused)
			}
			with := heapInUse()
			rt.mu.RLock()
			est, recount := rt.bytes, rt.footprintLocked()
			rt.mu.RUnlock()
			runtime.KeepAlive(rt)
			rt = nil
			held := float64(with) - float64(heapInUse())
			require.Equal(t, recount, est, "running count and recount")
			ratio := float64(est) / held
			t.Logf("estimate %d KiB, heap %.0f KiB: %.2f", est>>10, held/1024, ratio)
			require.InDelta(t, 1.05, ratio, 0.25)
		})
	}
}

// requireExact checks the running byte count against a recount.
func requireExact(t *testing.T, rt *routeTable, step string) int64 {
	t.Helper()
	rt.mu.RLock()
	defer rt.mu.RUnlock()
	require.Equal(t, rt.footprintLocked(), rt.bytes, step)
	return rt.bytes
}

// TestFootprintCountStaysExact: every way the table changes keeps the
// running count equal to a recount; registering the same broker again
// holds nothing more, and removing every broker returns it to zero.
func TestFootprintCountStaysExact(t *testing.T) {
	now := time.Unix(1000, 0)
	rt := newRouteTable(testLogger(), func() time.Time { return now })
	reg := func(cluster, name, addr string, id int64, version int64, topics []string) *registration {
		r := testRegistration(cluster, name, addr, topics)
		r.id = id
		r.body.DataVersion.Counter = version
		r.timeout = time.Minute
		return r
	}
	mustRegister := func(r *registration) {
		_, ok := rt.register(r)
		require.True(t, ok)
	}

	mustRegister(reg("c1", "a", "127.0.0.1:1", 0, 1, distinctStrings(300, 40, "a-")))
	once := requireExact(t, rt, "first registration")
	require.Positive(t, once)
	mustRegister(reg("c1", "a", "127.0.0.1:1", 0, 1, distinctStrings(300, 40, "a-")))
	require.Equal(t, once, requireExact(t, rt, "the same registration again"))
	mustRegister(reg("c1", "a", "127.0.0.1:1", 0, 2, distinctStrings(300, 40, "a-")))
	require.Equal(t, once, requireExact(t, rt, "a new data version, the same topics"))

	mustRegister(reg("c1", "a", "127.0.0.2:1", 1, 2, distinctStrings(300, 40, "a-")))
	requireExact(t, rt, "a slave")
	shared := reg("c2", "b", "127.0.0.3:1", 0, 1, append(distinctStrings(100, 40, "a-"), distinctStrings(50, 20, "b-")...))
	shared.zone = "zone-1"
	shared.body.FilterServerList = distinctStrings(10, 20, "10.9.9.")
	shared.body.Mappings = []body.TopicMapping{{Topic: "b-0-", BrokerName: "b", JSON: []byte(`{"bname":"b","epoch":1}`)}}
	mustRegister(shared)
	requireExact(t, rt, "a second broker sharing topics, with filters and a mapping")
	shared.body.FilterServerList = []string{}
	shared.body.Mappings[0].JSON = []byte(`{"bname":"b","epoch":2,"more":"x"}`)
	shared.body.DataVersion.Counter++
	mustRegister(shared)
	requireExact(t, rt, "filters dropped, mapping replaced")

	del := reg("c2", "b", "127.0.0.3:1", 0, 9, distinctStrings(20, 20, "b-"))
	del.deleteMissingTopics = true
	mustRegister(del)
	requireExact(t, rt, "deleteTopicWithBrokerRegistration")

	require.Empty(t, rt.registerTopic(strings.Clone("extra"), []body.QueueData{{BrokerName: "a", Perm: 6}, {BrokerName: "b", Perm: 6}}, 0, 0))
	requireExact(t, rt, "register topic")
	rt.deleteTopic("a-5-"+strings.Repeat("x", 36), "")
	rt.deleteTopic("a-6-"+strings.Repeat("x", 36), "c2")
	requireExact(t, rt, "delete topics")

	rt.unregister("c1", "127.0.0.2:1", "a")
	requireExact(t, rt, "slave unregistered")
	now = now.Add(2 * time.Minute)
	rt.expire(time.Minute)
	requireExact(t, rt, "every broker expired")

	rt.mu.RLock()
	defer rt.mu.RUnlock()
	require.Empty(t, rt.topics)
	require.Equal(t, mappingTopicBytesFor("b-0-")+mappingBytes("b", rt.mappings["b-0-"]["b"]), rt.bytes,
		"only the mapping is left: like Java's, the table never drops one")
}
