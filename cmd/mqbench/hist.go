package main

import (
	"math"
	"math/bits"
)

// histSubBits sets the resolution: each power-of-two range is split into
// 2^histSubBits linear buckets, so a recorded value is reported with a
// relative error below 1/2^histSubBits (0.8 %).
const (
	histSubBits  = 7
	histSubCount = 1 << histSubBits
	histBuckets  = (64 - histSubBits + 1) * histSubCount
)

// Histogram is an HDR-style log-linear histogram of non-negative integer
// values (mqbench records microseconds). The zero value is ready; it is not
// safe for concurrent use.
type Histogram struct {
	counts [histBuckets]uint64
	total  uint64
	sum    uint64
	min    uint64
	max    uint64
}

// bucketOf maps v to its bucket index. Values below histSubCount get one
// bucket each; above, the top histSubBits+1 significant bits select it.
func bucketOf(v uint64) int {
	if v < histSubCount {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1
	return (shift+1)*histSubCount + int(v>>uint(shift)) - histSubCount
}

// bucketHigh is the largest value that falls into bucket i.
func bucketHigh(i int) uint64 {
	if i < histSubCount {
		return uint64(i)
	}
	shift := uint(i/histSubCount - 1)
	mant := uint64(i%histSubCount + histSubCount)
	return (mant+1)<<shift - 1
}

// Record adds one value.
func (h *Histogram) Record(v uint64) {
	h.counts[bucketOf(v)]++
	if h.total == 0 || v < h.min {
		h.min = v
	}
	if v > h.max {
		h.max = v
	}
	h.total++
	h.sum += v
}

// Count is the number of recorded values.
func (h *Histogram) Count() uint64 { return h.total }

// Max is the largest recorded value (exact).
func (h *Histogram) Max() uint64 { return h.max }

// Min is the smallest recorded value (exact).
func (h *Histogram) Min() uint64 { return h.min }

// Mean is the average of the recorded values.
func (h *Histogram) Mean() float64 {
	if h.total == 0 {
		return 0
	}
	return float64(h.sum) / float64(h.total)
}

// Quantile returns the value at quantile q (0..1): the highest value of the
// bucket holding the ceil(q*count)-th smallest sample, capped by the exact
// maximum. An empty histogram returns 0.
func (h *Histogram) Quantile(q float64) uint64 {
	if h.total == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.total)))
	if rank < 1 {
		rank = 1
	}
	if rank >= h.total {
		return h.max
	}
	var seen uint64
	for i := range h.counts {
		seen += h.counts[i]
		if seen >= rank {
			v := bucketHigh(i)
			if v > h.max {
				v = h.max
			}
			if v < h.min {
				v = h.min
			}
			return v
		}
	}
	return h.max
}

// Merge adds every sample of o to h.
func (h *Histogram) Merge(o *Histogram) {
	if o.total == 0 {
		return
	}
	for i, c := range o.counts {
		if c != 0 {
			h.counts[i] += c
		}
	}
	if h.total == 0 || o.min < h.min {
		h.min = o.min
	}
	if o.max > h.max {
		h.max = o.max
	}
	h.total += o.total
	h.sum += o.sum
}

// Reset empties h.
func (h *Histogram) Reset() { *h = Histogram{} }
