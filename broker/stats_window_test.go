package broker

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store"
)

// fakeClock drives the sampler: advance delivers one tick per second on
// an unbuffered channel and then a zero tick, so when it returns every
// tick it delivered has been taken.
type fakeClock struct {
	mu    sync.Mutex
	now   time.Time
	ticks chan time.Time
}

func newFakeClock(t0 time.Time) *fakeClock {
	return &fakeClock{now: t0, ticks: make(chan time.Time)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTicker(time.Duration) (<-chan time.Time, func()) { return c.ticks, func() {} }

// sync waits until the sampler took every tick delivered so far (and
// its first sample).
func (c *fakeClock) sync() { c.ticks <- time.Time{} }

func (c *fakeClock) advance(d time.Duration) {
	for ; d > 0; d -= statsTick {
		c.mu.Lock()
		c.now = c.now.Add(statsTick)
		t := c.now
		c.mu.Unlock()
		c.ticks <- t
	}
	c.sync()
}

// statsAt is a brokerStats sampled by hand: tick(k) takes the k-th
// sample at t0 + k seconds, as the broker's ticker would.
type statsAt struct {
	*brokerStats
	t0   time.Time
	next int
}

func newStatsAt(t0 time.Time, storePuts func() (int64, int64)) *statsAt {
	c := newFakeClock(t0)
	return &statsAt{brokerStats: newBrokerStats(statsDeps{clock: c, clusterName: "C", storePuts: storePuts}), t0: t0}
}

// until takes the samples up to and including second k.
func (s *statsAt) until(k int) {
	for ; s.next <= k; s.next++ {
		s.tick(s.t0.Add(time.Duration(s.next) * time.Second))
	}
}

func putOK(msgs, bytes int32) store.PutResult {
	return store.PutResult{Status: store.PutOK, MsgCount: msgs, WroteBytes: bytes}
}

var statsT0 = time.Date(2025, 3, 4, 10, 0, 0, 0, time.UTC)

// The minute, hour and day windows of TOPIC_PUT_NUMS / TOPIC_PUT_SIZE,
// computed by hand the way StatsItem.computeStatsData does.
func TestStatsWindowsMinuteHourDay(t *testing.T) {
	s := newStatsAt(statsT0, nil)
	s.until(0) // the broker's first sample: nothing counted yet

	for range 5 {
		s.onPut("T", putOK(1, 100))
	}
	s.until(10)
	e := s.puts.lookup("T")
	require.NotNil(t, e)
	// [t0-0s synthetic 0] .. [t0+10s: 5 calls, 5 msgs]
	require.Equal(t, statsSnapshot{Sum: 5, Tps: 5 * 1000.0 / 10000, Avgpt: 1, Times: 5}, e.nums.inMinute())
	require.Equal(t, statsSnapshot{Sum: 500, Tps: 500 * 1000.0 / 10000, Avgpt: 100, Times: 5}, e.size.inMinute())
	require.Equal(t, statsSnapshot{}, e.nums.inHour(), "the hour window is first sampled at 10 minutes")
	require.Equal(t, statsSnapshot{}, e.nums.inDay())

	for range 3 {
		s.onPut("T", putOK(2, 300)) // batches: 2 messages per call
	}
	s.until(20)
	require.Equal(t, statsSnapshot{Sum: 11, Tps: 11 * 1000.0 / 20000, Avgpt: 11.0 / 8, Times: 8}, e.nums.inMinute())

	s.until(60) // 7 snapshots: t0 .. t0+60s
	require.Equal(t, statsSnapshot{Sum: 11, Tps: 11 * 1000.0 / 60000, Avgpt: 11.0 / 8, Times: 8}, e.nums.inMinute())
	s.until(70) // t0 drops out: t0+10s (5 calls, 5) .. t0+70s (8, 11)
	require.Equal(t, statsSnapshot{Sum: 6, Tps: 6 * 1000.0 / 60000, Avgpt: 2, Times: 3}, e.nums.inMinute())
	s.until(130) // nothing new for a minute
	require.Equal(t, statsSnapshot{Sum: 0, Tps: 0, Avgpt: 0, Times: 0}, e.nums.inMinute())

	s.until(600) // the hour window: [t0 synthetic 0] [t0+10min: 8 calls, 11]
	require.Equal(t, statsSnapshot{Sum: 11, Tps: 11 * 1000.0 / 600000, Avgpt: 11.0 / 8, Times: 8}, e.nums.inHour())
	s.onPut("T", putOK(1, 100))
	s.until(1200)
	require.Equal(t, statsSnapshot{Sum: 12, Tps: 12 * 1000.0 / 1200000, Avgpt: 12.0 / 9, Times: 9}, e.nums.inHour())
	s.until(3600) // 7 hour snapshots: t0 .. t0+60min; the day window's first
	require.Equal(t, statsSnapshot{Sum: 12, Tps: 12 * 1000.0 / 3600000, Avgpt: 12.0 / 9, Times: 9}, e.nums.inHour())
	require.Equal(t, statsSnapshot{Sum: 12, Tps: 12 * 1000.0 / 3600000, Avgpt: 12.0 / 9, Times: 9}, e.nums.inDay())
	s.until(4200) // t0 drops out of the hour: t0+10min (8, 11) .. t0+70min (9, 12)
	require.Equal(t, statsSnapshot{Sum: 1, Tps: 1 * 1000.0 / 3600000, Avgpt: 1, Times: 1}, e.nums.inHour())
	// The day window is sampled hourly: still [t0 synthetic 0] [t0+1h].
	require.Equal(t, statsSnapshot{Sum: 1500, Tps: 1500 * 1000.0 / 3600000, Avgpt: 1500.0 / 9, Times: 9}, e.size.inDay())
}

// The day window keeps 25 hourly snapshots: 24 hours.
func TestStatsWindowDayKeeps24Hours(t *testing.T) {
	var w window
	w.buf = make([]callSnapshot, daySnapshots)
	for h := int64(0); h <= 30; h++ {
		w.add(callSnapshot{ms: h * 3600_000, times: h, value: 10 * h})
	}
	// Hours 6 .. 30 are kept.
	require.Equal(t, statsSnapshot{Sum: 240, Tps: 240 * 1000.0 / (24 * 3600_000), Avgpt: 10, Times: 24}, w.compute())
}

// A key's first sample reports all it counted: the window starts with a
// zero snapshot one period back, whenever the key appeared.
func TestStatsWindowNewKeyMidway(t *testing.T) {
	s := newStatsAt(statsT0, nil)
	s.until(25)
	s.onGet("g", "T", 32, 4096)
	s.onGet("g", "T", 8, 1024)
	s.until(29)
	require.Nil(t, (*s.gets.read.Load())[groupTopic{topic: "T", group: "g"}], "published at the next minute sample")
	require.NotNil(t, s.item("GROUP_GET_NUMS", "T@g"), "but visible to VIEW_BROKER_STATS_DATA")
	require.Equal(t, 0.0, s.groupGetTps("g", "T"))
	s.until(30)
	require.Equal(t, statsSnapshot{Sum: 40, Tps: 40 * 1000.0 / 10000, Avgpt: 20, Times: 2}, s.item("GROUP_GET_NUMS", "T@g").inMinute())
	require.Equal(t, statsSnapshot{Sum: 5120, Tps: 5120 * 1000.0 / 10000, Avgpt: 2560, Times: 2}, s.item("GROUP_GET_SIZE", "T@g").inMinute())
	require.Equal(t, 4.0, s.groupGetTps("g", "T"))
	// BROKER_GET_NUMS adds to the value only: avgpt stays 0.
	require.Equal(t, statsSnapshot{Sum: 40, Tps: 40 * 1000.0 / 10000}, s.item("BROKER_GET_NUMS", "C").inMinute())
}

// The names and keys VIEW_BROKER_STATS_DATA knows, and what it does not.
func TestStatsItemLookup(t *testing.T) {
	s := newStatsAt(statsT0, nil)
	require.Nil(t, s.item("BROKER_PUT_NUMS", "C"), "Java creates it on the first put")
	s.onPut("T", putOK(1, 10))
	s.onPut("rmq_sys_X", putOK(1, 10))
	s.onPut("SCHEDULE_TOPIC_XXXX", putOK(1, 10))
	s.onPut("T", store.PutResult{Status: store.ServiceNotAvailable})
	s.onSendBack("g", "T")
	require.NotNil(t, s.item("TOPIC_PUT_NUMS", "T"))
	require.NotNil(t, s.item("TOPIC_PUT_SIZE", "T"))
	require.NotNil(t, s.item("SNDBCK_PUT_NUMS", "T@g"))
	require.NotNil(t, s.item("BROKER_PUT_NUMS", "C"))
	require.Nil(t, s.item("BROKER_PUT_NUMS", "other"))
	require.Nil(t, s.item("TOPIC_PUT_NUMS", "U"))
	require.Nil(t, s.item("GROUP_GET_NUMS", "T@g"))
	require.Nil(t, s.item("GROUP_GET_NUMS", "no-at-sign"))
	require.Nil(t, s.item("NO_SUCH_STATS", "T"))
	require.Equal(t, int64(3), s.brokerPut.value.Load())
	require.Equal(t, int64(1), s.brokerPutNoSys.value.Load(), "system topics are left out")
	require.Equal(t, int64(1), s.putFailed.Load())
}

// StoreStatsService's rates: sampled every second, over 10, 60 and 600
// seconds, Java's Double.toString for each, nothing for a span not yet
// sampled (getTotalTps prints 0.0 instead).
func TestStatsStoreRates(t *testing.T) {
	var puts int64
	s := newStatsAt(statsT0, func() (int64, int64) { return puts, 0 })
	s.until(0)
	require.Equal(t, storeRates{put: "  ", found: "  ", miss: "  ", total: "0.0 0.0 0.0", transferred: "  "}, s.rates())
	for k := 1; k <= 11; k++ {
		puts += 100 // 100 messages a second
		if k > 1 {
			s.onGet("g", "T", 3, 300)
		}
		s.until(k)
	}
	// 11 samples (seconds 1..11): the 10-second rate is known. Java
	// computes CallSnapshot.getTPS as count / millis * 1000.
	rate := func(n, ms int64) string { return javaDouble(float64(n) / float64(ms) * 1000) }
	r := s.rates()
	require.Equal(t, "100.0  ", r.put)
	require.Equal(t, rate(30, 10000)+"  ", r.transferred)
	require.Equal(t, rate(10, 10000)+"  ", r.found)
	require.Equal(t, "0.0  ", r.miss)
	require.Equal(t, rate(10, 10000)+" 0.0 0.0", r.total)

	for k := 12; k <= 601; k++ {
		puts += 7
		s.until(k)
	}
	// 601 samples: seconds 1 (100) .. 601 (1100 + 590*7).
	require.Equal(t, rate(70, 10000)+" "+rate(420, 60000)+" "+rate(590*7+1000, 600000), s.rates().put)
	s.until(611) // ten quiet seconds; second 1 .. 10 drop out
	require.Equal(t, "0.0 "+rate(50*7, 60000)+" "+rate(590*7, 600000), s.rates().put)
	require.Equal(t, "0.0 0.0 0.0", s.rates().transferred)
	require.Equal(t, "1.0E7", javaDouble(1e7))
	require.Equal(t, "1.0E-4", javaDouble(1e-4))
}

// BrokerStats records the totals without system topics at each midnight.
func TestStatsDailyTotals(t *testing.T) {
	t0 := time.Date(2025, 3, 4, 23, 59, 50, 0, time.UTC)
	s := newStatsAt(t0, nil)
	s.until(0)
	s.onPut("T", putOK(4, 40))
	s.onPut("TBW102", putOK(1, 10))
	s.onGet("g", "T", 3, 30)
	s.until(5)
	require.Equal(t, dailyTotals{putNow: 4, getNow: 3}, s.daily())
	s.until(10) // midnight
	s.onPut("T", putOK(2, 20))
	require.Equal(t, dailyTotals{putTodayMorning: 4, putNow: 6, getTodayMorning: 3, getNow: 3}, s.daily())
	s.until(10 + 86400) // the next midnight
	require.Equal(t, dailyTotals{putYesterdayMorning: 4, putTodayMorning: 6, putNow: 6, getYesterdayMorning: 3, getTodayMorning: 3, getNow: 3}, s.daily())
}
