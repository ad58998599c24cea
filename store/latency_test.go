package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The ranges and fine buckets are Java's StoreStatsService's: the
// boundary values land where its if-chain and TreeMap.ceilingEntry put
// them.
func TestLatencyBuckets(t *testing.T) {
	for ms, want := range map[int64]int{-1: 0, 0: 0, 1: 1, 9: 1, 10: 2, 49: 2, 50: 3, 99: 3, 100: 4, 199: 4,
		200: 5, 499: 5, 500: 6, 999: 6, 1000: 7, 1999: 7, 2000: 8, 3000: 9, 4000: 10, 4999: 10, 5000: 11,
		9999: 11, 10000: 12, 1 << 40: 12} {
		require.Equal(t, want, putRange(ms), "range of %d ms", ms)
	}
	for ms, want := range map[int64]int64{0: 1, 1: 1, 2: 2, 20: 20, 21: 22, 22: 22, 49: 50, 50: 50, 51: 55,
		100: 100, 101: 110, 200: 200, 201: 250, 500: 500, 501: 600, 1000: 1000, 1001: 2000, 10000: 10000,
		10001: 1<<63 - 1} {
		require.Equal(t, want, fineBounds[fineBucket(ms)], "fine bucket of %d ms", ms)
	}
	require.Equal(t, int64(1<<63-1), fineBounds[len(fineBounds)-1])
	require.Equal(t, int64(10000), fineBounds[len(fineBounds)-2])
}

// findPutMessageEntireTimePX: the rank floor(total*px) interpolated in
// the bucket that holds it, from the bucket's lower bound.
func TestFinePercentile(t *testing.T) {
	var c [len(fineBounds)]int64
	require.Zero(t, finePercentile(&c, 0.99)) // no puts
	c[fineBucket(0)] = 1
	require.Zero(t, finePercentile(&c, 0.99)) // rank 0: Java's 0 for a single put
	c[fineBucket(0)] = 100
	require.InDelta(t, 0.99, finePercentile(&c, 0.99), 1e-9) // 1 ms × 99/100
	c[fineBucket(0)] = 90
	c[fineBucket(120)] = 10 // (110, 120]: ranks 90..99
	require.InDelta(t, 110+10*9/10.0, finePercentile(&c, 0.99), 1e-9)
	require.InDelta(t, 110+10*9/10.0, finePercentile(&c, 0.999), 1e-9) // floor(99.9) = 99
}

// A put held in its group commit by a slow fdatasync is timed from its
// call to its answer: it shows in its range and in the maximum once the
// interval ends, and the next interval starts empty while the maximum
// stays.
func TestPutLatencyMeasured(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = SyncFlush
	s := openT(t, cfg)
	defer s.Close()
	const hold = 120 * time.Millisecond
	syncing := make(chan struct{}, 1)
	release := make(chan struct{})
	s.flushMu.Lock()
	s.beforeSync = func() {
		select {
		case syncing <- struct{}{}:
		default:
		}
		<-release
	}
	s.flushMu.Unlock()

	ch := make(chan PutResult, 1)
	begun := time.Now()
	s.Put(testMsg("L", 0, 0, 100), func(r PutResult) { ch <- r })
	<-syncing
	// The delay under test: the fdatasync is held this long.
	time.Sleep(hold)
	close(release)
	r := <-ch
	took := time.Since(begun).Milliseconds()
	require.Equal(t, PutOK, r.Status, "%v", r.Err)

	f := s.LatencyStats()
	require.False(t, f.Ended, "no interval ended yet: Java prints null")
	require.GreaterOrEqual(t, f.PutMax, hold.Milliseconds())
	require.LessOrEqual(t, f.PutMax, took+1) // two ms clock readings

	s.RollLatency()
	f = s.LatencyStats()
	require.True(t, f.Ended)
	var want [PutRanges]int64
	want[putRange(f.PutMax)] = 1
	require.Equal(t, want, f.Ranges)
	require.GreaterOrEqual(t, putRange(f.PutMax), putRange(hold.Milliseconds()))
	require.Zero(t, f.P99, "a single put is rank 0")

	// A read is timed too: one held on its consume queue's lock.
	waitDispatched(t, s)
	q := s.findCQ("L", 0)
	require.NotNil(t, q)
	q.mu.Lock()
	read := make(chan GetStatus)
	go func() {
		var res GetResult
		s.GetMessages("L", 0, 0, 1, 1<<20, nil, &res)
		res.Release()
		read <- res.Status
	}()
	time.Sleep(hold) // the delay under test
	q.mu.Unlock()
	require.Equal(t, Found, <-read)
	require.Greater(t, s.LatencyStats().GetMax, int64(0))

	s.RollLatency()
	f = s.LatencyStats()
	require.Equal(t, [PutRanges]int64{}, f.Ranges, "a new interval")
	require.GreaterOrEqual(t, f.PutMax, hold.Milliseconds(), "the maximum is never reset")
}

// Recording a put and a read allocates nothing.
func TestLatencyRecordAllocs(t *testing.T) {
	var l latencyStats
	require.Zero(t, testing.AllocsPerRun(100, func() { l.observePut(42) }))
}
