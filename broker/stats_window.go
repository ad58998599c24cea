package broker

import (
	"sync"
	"sync/atomic"
	"time"
)

// Statistics windows, as Java's StatsItem keeps them: two running totals
// (value and times) that the hot path adds to, and three short histories
// of snapshots the sampler takes of them. A window's figures are the
// difference between its oldest and newest snapshot:
//
//	window   sampled every   snapshots kept   spans at most
//	minute   10 s            7                60 s
//	hour     10 min          7                60 min
//	day      1 h             25               24 h
//
// The first sample of a window is preceded by a synthetic zero snapshot
// one period earlier, so a fresh item reports everything counted so far.
const (
	minuteSamplePeriod = 10 * time.Second
	hourSamplePeriod   = 10 * time.Minute
	daySamplePeriod    = time.Hour

	minuteSnapshots = 7
	hourSnapshots   = 7
	daySnapshots    = 25
)

// callSnapshot is one sample of an item's totals (Java's CallSnapshot).
type callSnapshot struct {
	ms           int64 // sample time, Unix milliseconds
	times, value int64
}

// window is a bounded history of snapshots, oldest first; buf's length is
// the bound. Adding to a full window drops the oldest.
type window struct {
	buf     []callSnapshot
	head, n int
}

func (w *window) add(s callSnapshot) {
	if w.n < len(w.buf) {
		w.buf[(w.head+w.n)%len(w.buf)] = s
		w.n++
		return
	}
	w.buf[w.head] = s
	w.head = (w.head + 1) % len(w.buf)
}

func (w *window) first() callSnapshot { return w.buf[w.head] }
func (w *window) last() callSnapshot  { return w.buf[(w.head+w.n-1)%len(w.buf)] }

// statsSnapshot is what a window reports (Java's StatsSnapshot).
type statsSnapshot struct {
	Sum   int64
	Tps   float64
	Avgpt float64
	Times int64
}

// compute is StatsItem.computeStatsData: sum and call count between the
// oldest and newest snapshot, tps per second over their time span, avgpt
// the sum per call.
func (w *window) compute() statsSnapshot {
	var ss statsSnapshot
	if w.n == 0 {
		return ss
	}
	first, last := w.first(), w.last()
	ss.Sum = last.value - first.value
	// compat: Java divides by the span even when it is zero (NaN or
	// Infinity); the synthetic first snapshot keeps it from happening.
	ss.Tps = float64(ss.Sum) * 1000.0 / float64(last.ms-first.ms)
	ss.Times = last.times - first.times
	if ss.Times > 0 {
		ss.Avgpt = float64(ss.Sum) / float64(ss.Times)
	}
	return ss
}

// statsItem is one key of one statistic (Java's StatsItem).
//
// value and times are added to lock-free on the hot path. mu guards the
// windows, which only the sampler writes and the admin handlers read. An
// item is used through a pointer once initialised: its windows slice snaps.
type statsItem struct {
	value, times atomic.Int64

	mu                sync.Mutex
	minute, hour, day window // guarded by mu
	snaps             [minuteSnapshots + hourSnapshots + daySnapshots]callSnapshot
}

func (it *statsItem) init() {
	it.minute.buf = it.snaps[:minuteSnapshots:minuteSnapshots]
	it.hour.buf = it.snaps[minuteSnapshots : minuteSnapshots+hourSnapshots : minuteSnapshots+hourSnapshots]
	it.day.buf = it.snaps[minuteSnapshots+hourSnapshots:]
}

// add counts one event of size v (addValue(key, v, 1)).
func (it *statsItem) add(v, times int64) {
	it.value.Add(v)
	it.times.Add(times)
}

// sample appends the current totals to w, which is sampled every period
// (samplingInSeconds / InMinutes / InHour).
func (it *statsItem) sample(w *window, nowMs int64, period time.Duration) {
	s := callSnapshot{ms: nowMs, times: it.times.Load(), value: it.value.Load()}
	it.mu.Lock()
	if w.n == 0 {
		w.add(callSnapshot{ms: nowMs - period.Milliseconds()})
	}
	w.add(s)
	it.mu.Unlock()
}

func (it *statsItem) inMinute() statsSnapshot { return it.computeLocked(&it.minute) }
func (it *statsItem) inHour() statsSnapshot   { return it.computeLocked(&it.hour) }
func (it *statsItem) inDay() statsSnapshot    { return it.computeLocked(&it.day) }

func (it *statsItem) computeLocked(w *window) statsSnapshot {
	it.mu.Lock()
	defer it.mu.Unlock()
	return w.compute()
}

// tpsSeries is one of Java's StoreStatsService sample lists: a running
// total sampled every second, the last storeSeriesLen samples kept, from
// which the rate over the last 10, 60 or 600 seconds is read.
const storeSeriesLen = 600 + 1

type tpsSample struct{ ms, total int64 }

type tpsSeries struct {
	buf     [storeSeriesLen]tpsSample
	head, n int
}

func (s *tpsSeries) add(v tpsSample) {
	if s.n < len(s.buf) {
		s.buf[(s.head+s.n)%len(s.buf)] = v
		s.n++
		return
	}
	s.buf[s.head] = v
	s.head = (s.head + 1) % len(s.buf)
}

func (s *tpsSeries) at(i int) tpsSample { return s.buf[(s.head+i)%len(s.buf)] }

// tps is the rate over the last secs samples; ok is false until more than
// secs samples are kept (Java then prints nothing for that span).
func (s *tpsSeries) tps(secs int) (float64, bool) {
	if s.n <= secs {
		return 0, false
	}
	begin, end := s.at(s.n-(secs+1)), s.at(s.n-1)
	// Like CallSnapshot.getTPS: the count per millisecond, times 1000.
	return float64(end.total-begin.total) / float64(end.ms-begin.ms) * 1000, true
}
