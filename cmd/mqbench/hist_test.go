package main

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHistogramBucketsBoundValues(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		v := r.Uint64() >> (r.Uint32() % 64)
		b := bucketOf(v)
		require.Less(t, b, histBuckets)
		hi := bucketHigh(b)
		require.GreaterOrEqual(t, hi, v, "bucket %d high %d below value %d", b, hi, v)
		if b > 0 {
			require.Less(t, bucketHigh(b-1), v, "value %d belongs to an earlier bucket", v)
		}
		if v >= histSubCount {
			require.Less(t, float64(hi-v)/float64(v), 1.0/histSubCount)
		} else {
			require.Equal(t, v, hi, "small values are exact")
		}
	}
	require.Equal(t, uint64(1<<64-1), bucketHigh(bucketOf(1<<64-1)))
}

func TestHistogramQuantilesOnKnownData(t *testing.T) {
	var h Histogram
	for v := uint64(1); v <= 10000; v++ {
		h.Record(v)
	}
	require.Equal(t, uint64(10000), h.Count())
	require.Equal(t, uint64(1), h.Min())
	require.Equal(t, uint64(10000), h.Max())
	require.InDelta(t, 5000.5, h.Mean(), 1e-9)
	for _, tc := range []struct {
		q    float64
		want uint64
	}{{0.5, 5000}, {0.9, 9000}, {0.99, 9900}, {0.999, 9990}, {0.0001, 1}, {1, 10000}} {
		got := h.Quantile(tc.q)
		require.GreaterOrEqual(t, got, tc.want, "q=%v", tc.q)
		require.LessOrEqual(t, float64(got-tc.want), float64(tc.want)/histSubCount, "q=%v got %d", tc.q, got)
	}
	// Small values below the sub-bucket count are exact.
	var s Histogram
	for _, v := range []uint64{3, 1, 4, 1, 5, 9, 2, 6} {
		s.Record(v)
	}
	// sorted: 1 1 2 3 4 5 6 9; quantile q is the ceil(q*n)-th smallest
	require.Equal(t, uint64(1), s.Quantile(0.25))
	require.Equal(t, uint64(2), s.Quantile(0.3))
	require.Equal(t, uint64(3), s.Quantile(0.5))
	require.Equal(t, uint64(9), s.Quantile(0.99))
}

func TestHistogramMatchesExactPercentilesOfSkewedData(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 9))
	var h Histogram
	vals := make([]uint64, 50000)
	for i := range vals {
		vals[i] = uint64(r.ExpFloat64()*800) + 50 // latency-like: long tail
		h.Record(vals[i])
	}
	sort.Slice(vals, func(i, j int) bool { return vals[i] < vals[j] })
	for _, q := range []float64{0.5, 0.9, 0.99, 0.999} {
		exact := vals[int(q*float64(len(vals)))-1]
		got := h.Quantile(q)
		require.InDelta(t, float64(exact), float64(got), float64(exact)/histSubCount+1, "q=%v", q)
	}
}

func TestHistogramMergeAndReset(t *testing.T) {
	var a, b, m Histogram
	for v := uint64(0); v < 1000; v++ {
		a.Record(v)
		b.Record(v + 1000)
	}
	m.Merge(&a)
	m.Merge(&b)
	require.Equal(t, uint64(2000), m.Count())
	require.Equal(t, uint64(0), m.Min())
	require.Equal(t, uint64(1999), m.Max())
	require.InDelta(t, 1000, float64(m.Quantile(0.5)), 1000.0/histSubCount)
	m.Reset()
	require.Equal(t, uint64(0), m.Count())
	require.Equal(t, uint64(0), m.Quantile(0.99))
	var empty Histogram
	m.Merge(&empty)
	require.Equal(t, uint64(0), m.Count())
}

func BenchmarkHistogramRecord(b *testing.B) {
	var h Histogram
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		h.Record(uint64(i&0xFFFF) * 37)
	}
}
