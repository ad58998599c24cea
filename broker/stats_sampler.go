package broker

import (
	"strings"
	"sync"
	"time"
)

// Clock is the time source of the statistics sampler. Tests pass a fake
// one to drive the windows without waiting for them.
type Clock interface {
	Now() time.Time
	// NewTicker delivers a time every d until stop is called. A zero
	// time delivered on the channel is ignored by the sampler (a fake
	// clock sends one to wait until the ticks before it are taken).
	NewTicker(d time.Duration) (ticks <-chan time.Time, stop func())
}

// WallClock is the real clock.
type WallClock struct{}

func (WallClock) Now() time.Time { return time.Now() }

func (WallClock) NewTicker(d time.Duration) (<-chan time.Time, func()) {
	t := time.NewTicker(d)
	return t.C, t.Stop
}

// statsTick is the sampler's cadence: StoreStatsService samples every
// second; the minute, hour and day windows every 10, 600 and 3600 ticks.
const (
	statsTick        = time.Second
	minuteEveryTicks = int64(minuteSamplePeriod / statsTick)
	hourEveryTicks   = int64(hourSamplePeriod / statsTick)
	dayEveryTicks    = int64(daySamplePeriod / statsTick)
	storeTpsShort    = 10
	storeTpsMiddle   = 60
	storeTpsLong     = 600
	// StoreStatsService's printTPSInterval: the put-latency distribution
	// is counted per interval of this many ticks.
	latencyEveryTicks = 60
)

// statsSampler is the sampler's own state.
type statsSampler struct {
	mu    sync.Mutex // guards the fields below (the ticker writes, the runtime info reads)
	ticks int64      // ticks taken since start

	// StoreStatsService's sample lists.
	put, found, miss, transferred tpsSeries

	// BrokerStats: the broker-wide totals without system topics as they
	// were at the last two midnights, recorded at each local midnight.
	nextMorning                          time.Time
	putYesterdayMorning, putTodayMorning int64
	getYesterdayMorning, getTodayMorning int64
}

// run samples every statsTick until quit is closed; the first sample is
// taken at once, as Java's schedules start with no delay.
func (s *brokerStats) run(quit <-chan struct{}) {
	ticks, stop := s.clock.NewTicker(statsTick)
	defer stop()
	s.tick(s.clock.Now())
	for {
		select {
		case <-quit:
			return
		case t := <-ticks:
			if !t.IsZero() {
				s.tick(t)
			}
		}
	}
}

// tick takes the samples due at now.
func (s *brokerStats) tick(now time.Time) {
	ms := now.UnixMilli()
	p := &s.sampler
	p.mu.Lock()
	k := p.ticks
	p.ticks++
	if k > 0 {
		// StoreStatsService's thread samples after its first second.
		puts := s.brokerPut.value.Load()
		if s.storePuts != nil {
			puts, _ = s.storePuts()
		}
		p.put.add(tpsSample{ms, puts})
		p.found.add(tpsSample{ms, s.getFound.Load()})
		p.miss.add(tpsSample{ms, s.getMiss.Load()})
		p.transferred.add(tpsSample{ms, s.getTransferred.Load()})
	}
	if p.nextMorning.IsZero() {
		p.nextMorning = nextMorning(now)
	} else if !now.Before(p.nextMorning) {
		// BrokerStats.record.
		p.putYesterdayMorning, p.getYesterdayMorning = p.putTodayMorning, p.getTodayMorning
		p.putTodayMorning, p.getTodayMorning = s.brokerPutNoSys.value.Load(), s.brokerGetNoSys.value.Load()
		p.nextMorning = nextMorning(now)
	}
	p.mu.Unlock()
	if k > 0 && k%latencyEveryTicks == 0 && s.storeRoll != nil {
		s.storeRoll()
	}

	if k%minuteEveryTicks != 0 {
		return
	}
	s.puts.publish()
	s.gets.publish()
	s.sendBack.publish()
	s.getLatency.publish()
	s.eachItem(func(it *statsItem) {
		if it.minute.n == 0 && it.value.Load() == 0 && it.times.Load() == 0 {
			return // Java creates an item on its first add
		}
		it.sample(&it.minute, ms, minuteSamplePeriod)
		if k%hourEveryTicks == 0 {
			it.sample(&it.hour, ms, hourSamplePeriod)
		}
		if k%dayEveryTicks == 0 {
			it.sample(&it.day, ms, daySamplePeriod)
		}
	})
}

// eachItem calls fn for every item; only the sampler calls it.
func (s *brokerStats) eachItem(fn func(*statsItem)) {
	s.puts.each(func(e *putEntry) { fn(&e.nums); fn(&e.size) })
	s.gets.each(func(e *getEntry) { fn(&e.nums); fn(&e.size) })
	s.sendBack.each(fn)
	s.getLatency.each(fn)
	for _, it := range []*statsItem{&s.brokerPut, &s.brokerGet, &s.brokerPutNoSys, &s.brokerGetNoSys} {
		fn(it)
	}
}

// nextMorning is UtilAll.computeNextMorningTimeMillis: the next midnight
// in now's time zone.
func nextMorning(now time.Time) time.Time {
	y, m, d := now.Date()
	return time.Date(y, m, d+1, 0, 0, 0, 0, now.Location())
}

// storeRates are the runtime info's rate strings (StoreStatsService's
// getPutTps and friends): the rates over 10, 60 and 600 seconds separated
// by spaces, each empty until that many seconds were sampled, except
// getTotalTps, which prints 0.0 then.
type storeRates struct {
	put, found, miss, total, transferred string
}

func (s *brokerStats) rates() storeRates {
	p := &s.sampler
	p.mu.Lock()
	defer p.mu.Unlock()
	three := func(series *tpsSeries) string {
		var b strings.Builder
		for i, secs := range [3]int{storeTpsShort, storeTpsMiddle, storeTpsLong} {
			if i > 0 {
				b.WriteByte(' ')
			}
			if v, ok := series.tps(secs); ok {
				b.WriteString(javaDouble(v))
			}
		}
		return b.String()
	}
	var total strings.Builder
	for i, secs := range [3]int{storeTpsShort, storeTpsMiddle, storeTpsLong} {
		if i > 0 {
			total.WriteByte(' ')
		}
		found, _ := p.found.tps(secs)
		miss, _ := p.miss.tps(secs)
		total.WriteString(javaDouble(found + miss))
	}
	return storeRates{put: three(&p.put), found: three(&p.found), miss: three(&p.miss),
		total: total.String(), transferred: three(&p.transferred)}
}

// dailyTotals are BrokerStats' figures for the runtime info.
type dailyTotals struct {
	putYesterdayMorning, putTodayMorning, putNow int64
	getYesterdayMorning, getTodayMorning, getNow int64
}

func (s *brokerStats) daily() dailyTotals {
	p := &s.sampler
	p.mu.Lock()
	defer p.mu.Unlock()
	return dailyTotals{
		putYesterdayMorning: p.putYesterdayMorning, putTodayMorning: p.putTodayMorning, putNow: s.brokerPutNoSys.value.Load(),
		getYesterdayMorning: p.getYesterdayMorning, getTodayMorning: p.getTodayMorning, getNow: s.brokerGetNoSys.value.Load(),
	}
}
