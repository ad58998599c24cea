package broker

import (
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
)

// startStatsBroker runs a broker whose sampler a fake clock drives.
func startStatsBroker(t *testing.T, clock *fakeClock) *testBroker {
	t.Helper()
	cfg := testConfig(t.TempDir())
	st, err := openTestStore(&cfg)
	require.NoError(t, err)
	b, err := New(cfg, Deps{Logger: testLogger(), Store: st, Clock: clock})
	require.NoError(t, err)
	require.NoError(t, b.Start())
	t.Cleanup(func() {
		require.NoError(t, b.Close())
		require.NoError(t, st.Close())
	})
	return &testBroker{Broker: b, cli: newTestClient(t), addr: b.Addr()}
}

type brokerStatsItemJSON struct {
	Avgpt float64 `json:"avgpt"`
	Sum   int64   `json:"sum"`
	Tps   float64 `json:"tps"`
}

func (tb *testBroker) viewStats(t *testing.T, name, key string) (minute, hour, day brokerStatsItemJSON) {
	t.Helper()
	resp := tb.invoke(t, request(codec.ReqViewBrokerStatsData, "statsName", name, "statsKey", key))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	var d struct {
		StatsMinute, StatsHour, StatsDay brokerStatsItemJSON
	}
	require.NoError(t, json.Unmarshal(resp.Body, &d), string(resp.Body))
	return d.StatsMinute, d.StatsHour, d.StatsDay
}

// Send N messages, pull them, let the sampler run ten seconds: every
// report shows the rates of what was sent and pulled.
func TestStatsBrokerReportsRates(t *testing.T) {
	clock := newFakeClock(statsT0)
	tb := startStatsBroker(t, clock)
	clock.sync()               // the first sample is taken
	clock.advance(time.Second) // StoreStatsService's first sample: nothing yet

	const n = 20
	tb.topics.createIfAbsent("ST", 1, 6, 0)
	for i := 0; i < n; i++ {
		require.Equal(t, int32(codec.RespSuccess), tb.invoke(t, sendV1("ST", 0, "", []byte("stats-body-"+strconv.Itoa(i)))).Code)
	}
	tb.waitDispatched(t, "ST", 0, n)
	var pulled, pulls int
	for pulled < n {
		resp := tb.invoke(t, pullReq("sg", "ST", 0, int64(pulled), pullFlagSubscription, 0, "*"))
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		pulled += len(decodeRecords(t, resp.Body))
		pulls++
	}
	tb.offsets.commit("sg", "ST", 0, n)
	putTimes, putBytes := tb.store.(interface{ PutStats() (int64, int64) }).PutStats()
	require.Equal(t, int64(n), putTimes)

	// Before the minute sample: the keys exist, the windows are empty.
	m, _, _ := tb.viewStats(t, "TOPIC_PUT_NUMS", "ST")
	require.Equal(t, brokerStatsItemJSON{}, m)

	clock.advance(10 * time.Second) // seconds 2 .. 11: the minute sample at 10 s

	resp := tb.invoke(t, request(codec.ReqViewBrokerStatsData, "statsName", "TOPIC_PUT_NUMS", "statsKey", "ST"))
	require.Equal(t, `{"statsDay":{"avgpt":0.0,"sum":0,"tps":0.0},"statsHour":{"avgpt":0.0,"sum":0,"tps":0.0},`+
		`"statsMinute":{"avgpt":1.0,"sum":20,"tps":2.0}}`, string(resp.Body))
	m, _, _ = tb.viewStats(t, "TOPIC_PUT_SIZE", "ST")
	require.Equal(t, brokerStatsItemJSON{Sum: putBytes, Tps: float64(putBytes) * 1000 / 10000, Avgpt: float64(putBytes) / n}, m)
	m, _, _ = tb.viewStats(t, "GROUP_GET_NUMS", "ST@sg")
	require.Equal(t, brokerStatsItemJSON{Sum: n, Tps: 2, Avgpt: float64(n) / float64(pulls)}, m)
	m, _, _ = tb.viewStats(t, "GROUP_GET_SIZE", "ST@sg")
	require.Equal(t, putBytes, m.Sum, "pulls hand out the stored records")
	m, _, _ = tb.viewStats(t, "BROKER_PUT_NUMS", tb.Config().BrokerClusterName)
	require.Equal(t, brokerStatsItemJSON{Sum: n, Tps: 2}, m, "Java counts no times for BROKER_*")
	m, _, _ = tb.viewStats(t, "BROKER_GET_NUMS", tb.Config().BrokerClusterName)
	require.Equal(t, brokerStatsItemJSON{Sum: n, Tps: 2}, m)
	resp = tb.invoke(t, request(codec.ReqViewBrokerStatsData, "statsName", "GROUP_GET_NUMS", "statsKey", "ST@other"))
	require.Equal(t, int32(codec.RespSystemError), resp.Code)
	require.Equal(t, "The stats <GROUP_GET_NUMS> <ST@other> not exist", resp.Remark)

	// consumeTps is GROUP_GET_NUMS's minute tps; topicPutTps TOPIC_PUT_NUMS's.
	resp = tb.invoke(t, request(codec.ReqGetBrokerConsumeStats, "isOrder", "false"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), `{"sg":[{"consumeTps":2.0,"offsetTable":{`)
	resp = tb.invoke(t, request(codec.ReqGetConsumeStats, "consumerGroup", "sg", "topic", "ST"))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	require.Contains(t, string(resp.Body), `{"consumeTps":2.0,`)
	resp = tb.invoke(t, request(codec.ReqGetTopicStatsInfo, "topic", "ST"))
	require.Contains(t, string(resp.Body), `"topicPutTps":2.0}`)

	// Runtime info: 11 one-second samples, the puts and pulls between the
	// first two of them; only the 10-second rate is known yet.
	kv := runtimeTable(t, tb)
	rate := func(v int) string { return javaDouble(float64(v) / 10000 * 1000) }
	require.Equal(t, "2.0  ", kv["putTps"])
	require.Equal(t, "2.0  ", kv["getTransferredTps"])
	require.Equal(t, rate(pulls)+"  ", kv["getFoundTps"])
	require.Equal(t, "0.0  ", kv["getMissTps"])
	require.Equal(t, rate(pulls)+" 0.0 0.0", kv["getTotalTps"])
	require.Equal(t, "20", kv["msgPutTotalTodayNow"])
	require.Equal(t, "20", kv["msgGetTotalTodayNow"])
	require.Equal(t, "0", kv["msgPutTotalTodayMorning"])
	require.Equal(t, "0", kv["msgPutTotalYesterdayMorning"])
	require.Equal(t, "20", kv["putMessageTimesTotal"])
	require.Equal(t, "[ 0 days, 0 hours, 0 minutes, 11 seconds ]", kv["runtime"])

	// Fifty seconds on the 60-second rate spans the sends and the
	// 10-second one is 0; the minute window still starts before them.
	clock.advance(50 * time.Second)
	kv = runtimeTable(t, tb)
	require.Equal(t, "0.0 "+javaDouble(float64(n)/60000*1000)+" ", kv["putTps"])
	m, _, _ = tb.viewStats(t, "TOPIC_PUT_NUMS", "ST")
	require.Equal(t, brokerStatsItemJSON{Sum: n, Tps: n * 1000.0 / 60000, Avgpt: 1}, m)
	clock.advance(10 * time.Second)
	m, _, _ = tb.viewStats(t, "TOPIC_PUT_NUMS", "ST")
	require.Equal(t, brokerStatsItemJSON{}, m, "the minute window has moved past the sends")
}

// A pull that finds nothing is a miss (getMissTps), and a stored send-back
// counts SNDBCK_PUT_NUMS under its original topic and group.
func TestStatsMissAndSendBack(t *testing.T) {
	clock := newFakeClock(statsT0)
	tb := startStatsBroker(t, clock)
	clock.sync()
	clock.advance(time.Second)
	tb.topics.createIfAbsent("SM", 1, 6, 0)
	resp := tb.invoke(t, sendV1("SM", 0, "", []byte("m")))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	_, phy, err := message.DecodeOffsetMsgID(ext(t, resp, "msgId"))
	require.NoError(t, err)
	tb.waitDispatched(t, "SM", 0, 1)
	resp = tb.invoke(t, pullReq("sg", "SM", 0, 1, pullFlagSubscription, 0, "*"))
	require.Equal(t, int32(codec.RespPullNotFound), resp.Code, resp.Remark)
	resp = tb.invoke(t, sendBackReq(phy, "sg", 0, 16))
	require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)

	clock.advance(10 * time.Second)
	kv := runtimeTable(t, tb)
	require.Equal(t, javaDouble(1.0/10000*1000)+"  ", kv["getMissTps"])
	m, _, _ := tb.viewStats(t, "SNDBCK_PUT_NUMS", "SM@sg")
	require.Equal(t, int64(1), m.Sum)
}
