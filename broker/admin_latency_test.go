package broker

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/store"
)

// slowReads is a store whose reads of one topic take at least delay (a
// pull the broker times for GROUP_GET_LATENCY).
type slowReads struct {
	*store.Store
	topic string
	delay time.Duration
}

func (s *slowReads) GetMessages(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, f *store.Filter, res *store.GetResult) {
	if topic == s.topic {
		time.Sleep(s.delay) // the delay under test
	}
	s.Store.GetMessages(topic, queueID, offset, maxMsgs, maxBytes, f, res)
}

// startLatencyBroker runs a broker on st whose sampler clock drives.
func startLatencyBroker(t *testing.T, clock *fakeClock, wrap func(*store.Store) MessageStore) *testBroker {
	t.Helper()
	cfg := testConfig(t.TempDir())
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	b, err := New(cfg, Deps{Logger: testLogger(), Store: wrap(st), Clock: clock})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, st.Close())
	})
	return &testBroker{Broker: b, cli: newTestClient(t), addr: b.Addr()}
}

// exporterDistribution parses putMessageDistributeTime as
// rocketmq-exporter's BrokerRuntimeStats does: split on ' ', then ':',
// brackets stripped, each count an Integer.parseInt.
func exporterDistribution(t *testing.T, v string) map[string]int {
	t.Helper()
	m := map[string]int{}
	for _, part := range strings.Split(v, " ") {
		kv := strings.Split(part, ":")
		if len(kv) < 2 {
			continue // the exporter logs and skips it (the trailing blank)
		}
		n, err := strconv.ParseInt(kv[1], 10, 32)
		require.NoError(t, err, part)
		m[strings.NewReplacer("[", "", "]", "").Replace(kv[0])] = int(n)
	}
	return m
}

// The runtime table's latency keys are measured: "null" and zero
// percentiles in the first minute (as Java prints them), then the
// minute's puts per range in Java's format, which parses as the exporter
// parses it and counts every put sent; the maxima parse as Java's longs.
func TestRuntimeInfoPutLatency(t *testing.T) {
	clock := newFakeClock(statsT0)
	tb := startLatencyBroker(t, clock, func(s *store.Store) MessageStore { return s })
	clock.sync()
	tb.topics.createIfAbsent("LAT", 1, 6, 0)
	const n = 30
	for i := 0; i < n; i++ {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("LAT", 0, "", []byte("latency-"+strconv.Itoa(i)))).Code)
	}
	info := runtimeTable(t, tb)
	require.Equal(t, "null", info["putMessageDistributeTime"], "Java's first minute")
	require.Equal(t, "0.00", info["putLatency99"])
	require.Equal(t, "0.00", info["putLatency999"])

	clock.advance(latencyEveryTicks * statsTick) // the minute ends
	info = runtimeTable(t, tb)
	d := info["putMessageDistributeTime"]
	require.Regexp(t, `^(\[[^\]]+\]:\d+ ){13}$`, d)
	dist := exporterDistribution(t, d)
	// rocketmq-exporter's RMQMetricsCollector reads these 13 names.
	names := []string{"<=0ms", "0~10ms", "10~50ms", "50~100ms", "100~200ms", "200~500ms", "500ms~1s", "1~2s", "2~3s",
		"3~4s", "4~5s", "5~10s", "10s~"}
	total := 0
	for _, name := range names {
		c, ok := dist[name]
		require.True(t, ok, "no %s in %q", name, d)
		total += c
	}
	require.Len(t, dist, len(names))
	require.Equal(t, n, total, "every put of the minute is counted once: %s", d)
	putMax, err := strconv.ParseInt(info["putMessageEntireTimeMax"], 10, 64)
	require.NoError(t, err)
	_, err = strconv.ParseInt(info["getMessageEntireTimeMax"], 10, 64)
	require.NoError(t, err)
	// The slowest put is in the range the distribution's last non-empty
	// one covers.
	last := 0
	for i, name := range names {
		if dist[name] > 0 {
			last = i
		}
	}
	lo := []int64{0, 1, 10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000}
	require.GreaterOrEqual(t, putMax, lo[last], "max %d ms, distribution %s", putMax, d)
	if last+1 < len(lo) {
		require.Less(t, putMax, lo[last+1], "max %d ms, distribution %s", putMax, d)
	}
	for _, k := range []string{"putLatency99", "putLatency999"} {
		require.Regexp(t, `^\d+\.\d\d$`, info[k], k)
		p, err := strconv.ParseFloat(info[k], 64)
		require.NoError(t, err)
		require.LessOrEqual(t, p, float64(putMax+1), "%s %s against a %d ms maximum", k, info[k], putMax)
	}

	clock.advance(latencyEveryTicks * statsTick) // a minute without puts
	info = runtimeTable(t, tb)
	require.Equal(t, "[<=0ms]:0 [0~10ms]:0 [10~50ms]:0 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 "+
		"[500ms~1s]:0 [1~2s]:0 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:0 ", info["putMessageDistributeTime"])
	require.Equal(t, strconv.FormatInt(putMax, 10), info["putMessageEntireTimeMax"], "the maximum is kept")
}

// GROUP_GET_LATENCY: each pull that finds messages adds the ms from its
// start to its reply being ready under queueId@topic@group (Java's key
// with enableDetailStat), and VIEW_BROKER_STATS_DATA answers its minute
// window: the pulls' summed latency and its average per pull.
func TestStatsGroupGetLatency(t *testing.T) {
	const delay = 40 * time.Millisecond
	clock := newFakeClock(statsT0)
	tb := startLatencyBroker(t, clock, func(s *store.Store) MessageStore { return &slowReads{Store: s, topic: "GL", delay: delay} })
	clock.sync()
	tb.topics.createIfAbsent("GL", 2, 6, 0)
	const n = 4
	for i := 0; i < n; i++ {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("GL", 1, "", []byte("gl-"+strconv.Itoa(i)))).Code)
	}
	tb.waitDispatched(t, "GL", 1, n)
	const pulls = 2
	for i := 0; i < pulls; i++ {
		resp := tb.invoke(t, pullReq("glg", "GL", 1, int64(i), pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	// A pull that finds nothing is not a get (Java counts the FOUND path).
	resp := tb.invoke(t, pullReq("glg", "GL", 0, 0, pullFlagSubscription, 0, "*"))
	require.NotEqual(t, int32(codec.RespSuccess), resp.Code)
	r := tb.invoke(t, request(codec.ReqViewBrokerStatsData, "statsName", "GROUP_GET_LATENCY", "statsKey", "0@GL@glg"))
	require.Equal(t, int32(codec.RespSystemError), r.Code, "no item for the empty queue")

	clock.advance(10 * time.Second) // the minute window's sample
	m, _, _ := tb.viewStats(t, "GROUP_GET_LATENCY", "1@GL@glg")
	require.GreaterOrEqual(t, m.Sum, int64(pulls)*delay.Milliseconds(), "%+v", m)
	require.GreaterOrEqual(t, m.Avgpt, float64(delay.Milliseconds()), "%+v", m)
	require.Less(t, m.Avgpt, 10*float64(delay.Milliseconds()), "%+v", m)
	require.InDelta(t, float64(m.Sum)/pulls, m.Avgpt, 1e-9, "avgpt is per pull: %+v", m)

	// The store's own read maximum covers the reads, not the broker's delay.
	info := runtimeTable(t, tb)
	_, err := strconv.ParseInt(info["getMessageEntireTimeMax"], 10, 64)
	require.NoError(t, err)
}

// Java's String.format("%.2f"): half up on the shortest decimal.
func TestJavaFixed2(t *testing.T) {
	for v, want := range map[float64]string{0: "0.00", 0.125: "0.13", 0.9: "0.90", 1.005: "1.01", 99.999: "100.00",
		119: "119.00", 2.675: "2.68", -0.001: "-0.00", -1.5: "-1.50", 1e7: "10000000.00"} {
		require.Equal(t, want, javaFixed2(v), "%v", v)
	}
}

// ScheduleMessageService.buildRunningStats: once a level delivered, the
// runtime table has scheduleMessageOffset_<level> = "<next offset>,<max
// offset>" (rocketmq-exporter splits it on ',').
func TestRuntimeInfoScheduleOffsets(t *testing.T) {
	tb := startBroker(t, func(c *Config) { c.MessageDelayLevel = "1s 3s" })
	require.NotContains(t, runtimeTable(t, tb), "scheduleMessageOffset_1")
	require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("SO", 0, props("DELAY", "1"), []byte("later"))).Code)
	tb.waitDispatched(t, "SO", 0, 1)
	require.Eventually(t, func() bool { return runtimeTable(t, tb)["scheduleMessageOffset_1"] == "1,1" }, 5*time.Second, 10*time.Millisecond,
		"table: %v", runtimeTable(t, tb))
	require.NotContains(t, runtimeTable(t, tb), "scheduleMessageOffset_2", "a level that delivered nothing")
}
