package main

import (
	"encoding/binary"
	"encoding/json"
	"io"
	"slices"
	"time"
)

// Body stamp shared with cmd/mqbench: magic, then the send time.
const (
	stampMagic = "RGBENCH1"
	stampAt    = len(stampMagic)
	stampLen   = stampAt + 8
)

// newBody returns a body of size bytes (at least stampLen) stamped with t.
func newBody(size int, t time.Time) []byte {
	b := make([]byte, max(size, stampLen))
	copy(b, stampMagic)
	binary.BigEndian.PutUint64(b[stampAt:], uint64(t.UnixNano()))
	for i := stampLen; i < len(b); i++ {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// stampOf returns the send time stamped in body, if it carries one.
func stampOf(body []byte) (time.Time, bool) {
	if len(body) < stampLen || string(body[:stampAt]) != stampMagic {
		return time.Time{}, false
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(body[stampAt:]))), true
}

// Latency is a latency summary in milliseconds (mqbench's field names).
type Latency struct {
	Samples uint64  `json:"samples"`
	Mean    float64 `json:"mean"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	P999    float64 `json:"p999"`
	Max     float64 `json:"max"`
}

// latencyOf summarizes samples (microseconds); it sorts them in place.
func latencyOf(us []int64) Latency {
	if len(us) == 0 {
		return Latency{}
	}
	slices.Sort(us)
	var sum int64
	for _, v := range us {
		sum += v
	}
	q := func(p float64) float64 {
		i := int(p*float64(len(us))+0.5) - 1 // nearest rank
		i = min(max(i, 0), len(us)-1)
		return float64(us[i]) / 1000
	}
	return Latency{
		Samples: uint64(len(us)),
		Mean:    float64(sum) / float64(len(us)) / 1000,
		P50:     q(0.50),
		P90:     q(0.90),
		P99:     q(0.99),
		P999:    q(0.999),
		Max:     float64(us[len(us)-1]) / 1000,
	}
}

// Summary is the end-of-run report, shaped like mqbench's -json output.
type Summary struct {
	Generator string            `json:"generator"`
	Role      string            `json:"role"`
	Mode      string            `json:"mode,omitempty"`
	Topic     string            `json:"topic"`
	Threads   int               `json:"threads,omitempty"`
	Size      int               `json:"size,omitempty"`
	Rate      float64           `json:"rate,omitempty"`
	Seconds   float64           `json:"seconds"`
	Messages  uint64            `json:"messages"`
	Bytes     uint64            `json:"bytes"`
	TPS       float64           `json:"tps"`
	MBps      float64           `json:"mbps"`
	Errors    map[string]uint64 `json:"errors"`
	ErrTotal  uint64            `json:"errorTotal"`
	Latency   Latency           `json:"latencyMs"`
	// FirstMs (consumers): from starting the consumer to the first message.
	FirstMs float64 `json:"firstMs,omitempty"`
}

// finish fills the rate fields from Messages, Bytes and elapsed.
func (s *Summary) finish(elapsed time.Duration) {
	s.Seconds = elapsed.Seconds()
	if s.Seconds > 0 {
		s.TPS = float64(s.Messages) / s.Seconds
		s.MBps = float64(s.Bytes) / s.Seconds / 1e6
	}
	for _, n := range s.Errors {
		s.ErrTotal += n
	}
}

func (s *Summary) write(w io.Writer) error { return json.NewEncoder(w).Encode(s) }
