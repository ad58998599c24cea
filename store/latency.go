package store

import (
	"sync"
	"sync/atomic"
	"time"
)

// The store's put and get latencies, after Java's StoreStatsService: a
// put is timed from its call to its answer (lock wait, append, group
// commit and replica wait included), a read from GetMessages' call to
// its return, both in whole milliseconds of the wall clock (sinceMs). Kept per put:
//
//   - the distribution over 13 coarse ranges (putMessageDistributeTime)
//     and over 76 fine buckets (the source of putLatency99/putLatency999),
//     counted per interval: RollLatency ends one (Java's StoreStatsService
//     does every 60 s) and the figures read are those of the last ended
//     interval;
//   - the largest put and get since the store opened (never reset, as
//     in Java).
//
// Recording is a few atomic adds, no lock and no allocation. Three banks
// rotate: writers add to the current one, readers read the previous one,
// and a roll clears the third before making it current, so a reader
// never sees a bank being cleared.

// PutRanges is the number of putMessageDistributeTime's ranges.
const PutRanges = 13

// putRangeUpper are the exclusive upper bounds, in ms, of the ranges
// after the first (which holds 0 ms); the last range is open.
var putRangeUpper = [PutRanges - 2]int64{10, 50, 100, 200, 500, 1000, 2000, 3000, 4000, 5000, 10000}

// fineBounds are the inclusive upper bounds, in ms, of the fine buckets:
// steps of 1 to 20, 2 to 50, 5 to 100, 10 to 200, 50 to 500, 100 to 1000,
// 1000 to 10000, then one open bucket (Java's PUT_MESSAGE_ENTIRE_TIME_BUCKETS).
var fineBounds = func() [76]int64 {
	var b [76]int64
	i := 0
	last := int64(0)
	for _, r := range [...]struct{ step, n int64 }{{1, 20}, {2, 15}, {5, 10}, {10, 10}, {50, 6}, {100, 5}, {1000, 9}} {
		for j := int64(0); j < r.n; j++ {
			last += r.step
			b[i] = last
			i++
		}
	}
	b[i] = 1<<63 - 1
	return b
}()

type latencyBank struct {
	ranges [PutRanges]atomic.Int64
	fine   [len(fineBounds)]atomic.Int64
}

type latencyStats struct {
	banks  [3]latencyBank
	cur    atomic.Int32 // the bank puts add to
	rolled atomic.Bool  // an interval has ended: banks[cur-1] holds it
	rollMu sync.Mutex   // serializes RollLatency

	putMax, getMax atomic.Int64
}

// putRange is the putMessageDistributeTime range of a put of ms.
func putRange(ms int64) int {
	if ms <= 0 {
		return 0
	}
	for i, up := range putRangeUpper {
		if ms < up {
			return i + 1
		}
	}
	return PutRanges - 1
}

// fineBucket is the first fine bucket whose bound is at least ms
// (Java's TreeMap.ceilingEntry).
func fineBucket(ms int64) int {
	lo, hi := 0, len(fineBounds)-1
	for lo < hi {
		mid := (lo + hi) / 2
		if fineBounds[mid] >= ms {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

func storeMax(a *atomic.Int64, v int64) {
	for {
		old := a.Load()
		if v <= old || a.CompareAndSwap(old, v) {
			return
		}
	}
}

// observePut records a put that took ms.
func (l *latencyStats) observePut(ms int64) {
	b := &l.banks[l.cur.Load()]
	b.fine[fineBucket(ms)].Add(1)
	b.ranges[putRange(ms)].Add(1)
	storeMax(&l.putMax, ms)
}

// sinceMs is the ms since begun as Java counts them: the difference of
// two millisecond clock readings (compat: a 0.3 ms put that spans a
// millisecond tick counts 1, as in Java's StoreStatsService).
func sinceMs(begun time.Time) int64 { return msBetween(begun, time.Now()) }

// msBetween is to - from in Java's whole milliseconds (sinceMs).
func msBetween(from, to time.Time) int64 { return to.UnixMilli() - from.UnixMilli() }

// RollLatency ends the current interval of the put distribution: the
// figures LatencyStats reports are then those of the interval just
// ended (Java's StoreStatsService rolls every printTPSInterval, 60 s).
func (s *Store) RollLatency() {
	l := &s.latency
	l.rollMu.Lock()
	defer l.rollMu.Unlock()
	next := (l.cur.Load() + 1) % 3
	b := &l.banks[next] // two intervals old: nobody reads or adds to it
	for i := range b.ranges {
		b.ranges[i].Store(0)
	}
	for i := range b.fine {
		b.fine[i].Store(0)
	}
	l.cur.Store(next)
	l.rolled.Store(true)
}

// LatencyFigures are StoreStatsService's latency figures.
type LatencyFigures struct {
	// Ended: an interval has ended; before that Java prints "null" for
	// the distribution.
	Ended bool
	// Ranges counts the puts of the last ended interval per
	// putMessageDistributeTime range: [<=0ms] [0~10ms] … [10s~].
	Ranges [PutRanges]int64
	// P99 and P999 are the last ended interval's 99th and 99.9th
	// percentile put latencies in ms (0 without puts), interpolated in
	// the fine buckets as Java's findPutMessageEntireTimePX does.
	P99, P999 float64
	// PutMax and GetMax are the slowest put and read since the store
	// opened, in ms.
	PutMax, GetMax int64
}

// LatencyStats returns the put and get latency figures.
func (s *Store) LatencyStats() LatencyFigures {
	l := &s.latency
	f := LatencyFigures{PutMax: l.putMax.Load(), GetMax: l.getMax.Load()}
	if !l.rolled.Load() {
		return f
	}
	f.Ended = true
	b := &l.banks[(l.cur.Load()+2)%3]
	for i := range b.ranges {
		f.Ranges[i] = b.ranges[i].Load()
	}
	var fine [len(fineBounds)]int64
	for i := range b.fine {
		fine[i] = b.fine[i].Load()
	}
	f.P99, f.P999 = finePercentile(&fine, 0.99), finePercentile(&fine, 0.999)
	return f
}

// finePercentile is Java's findPutMessageEntireTimePX over counts:
// the px-th put's latency, interpolated linearly in its bucket.
// compat: Java multiplies the bucket width by the rank in a long, which
// wraps in the open bucket; int64 arithmetic wraps the same way.
func finePercentile(counts *[len(fineBounds)]int64, px float64) float64 {
	var total int64
	for _, c := range counts {
		total += c
	}
	idx := int64(float64(total) * px)
	var passed int64
	for i, c := range counts {
		if idx > passed+c {
			passed += c
			continue
		}
		if c == 0 {
			if i == 0 {
				return 0
			}
			return float64(fineBounds[i-1])
		}
		rel := idx - passed
		if i == 0 {
			return float64(fineBounds[0]*rel) / float64(c)
		}
		lo := fineBounds[i-1]
		return float64(lo) + float64((fineBounds[i]-lo)*rel)/float64(c)
	}
	return 0
}
