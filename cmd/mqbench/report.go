package main

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
)

// clock gives monotonic nanoseconds since the run began and the matching
// wall-clock time.
type clock struct {
	base     time.Time
	baseWall int64
}

func newClock() *clock {
	now := time.Now()
	return &clock{base: now, baseWall: now.UnixNano()}
}

func (c *clock) mono() int64           { return int64(time.Since(c.base)) }
func (c *clock) wall(mono int64) int64 { return c.baseWall + mono }

// Latency is a latency summary in milliseconds.
type Latency struct {
	Samples uint64  `json:"samples"`
	Mean    float64 `json:"mean"`
	P50     float64 `json:"p50"`
	P90     float64 `json:"p90"`
	P99     float64 `json:"p99"`
	P999    float64 `json:"p999"`
	Max     float64 `json:"max"`
}

func latencyOf(h *Histogram) Latency {
	ms := func(us uint64) float64 { return float64(us) / 1000 }
	return Latency{
		Samples: h.Count(),
		Mean:    h.Mean() / 1000,
		P50:     ms(h.Quantile(0.50)),
		P90:     ms(h.Quantile(0.90)),
		P99:     ms(h.Quantile(0.99)),
		P999:    ms(h.Quantile(0.999)),
		Max:     ms(h.Max()),
	}
}

// Summary is the end-of-run report (printed as text, or JSON with -json).
type Summary struct {
	Role     string            `json:"role"` // produce | consume
	Mode     string            `json:"mode,omitempty"`
	Topic    string            `json:"topic"`
	Threads  int               `json:"threads,omitempty"`
	Conns    int               `json:"conns,omitempty"`
	Size     int               `json:"size,omitempty"`
	Rate     float64           `json:"rate,omitempty"`
	Seconds  float64           `json:"seconds"`
	Messages uint64            `json:"messages"`
	Requests uint64            `json:"requests"`
	Bytes    uint64            `json:"bytes"`
	TPS      float64           `json:"tps"`
	MBps     float64           `json:"mbps"`
	Errors   map[string]uint64 `json:"errors"`
	ErrTotal uint64            `json:"errorTotal"`
	// Latency: producers measure send→reply (from the scheduled time in
	// open loop), consumers now − born/send time of each message.
	Latency Latency `json:"latencyMs"`
}

func (s *Summary) writeText(w io.Writer) {
	fmt.Fprintf(w, "=== mqbench %s %s topic=%s", s.Role, s.Mode, s.Topic)
	if s.Threads > 0 {
		fmt.Fprintf(w, " threads=%d conns=%d size=%d", s.Threads, s.Conns, s.Size)
	}
	if s.Rate > 0 {
		fmt.Fprintf(w, " rate=%.0f/s", s.Rate)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "messages  %d in %.2fs (%d requests)\n", s.Messages, s.Seconds, s.Requests)
	fmt.Fprintf(w, "tps       %.0f msg/s   %.2f MB/s\n", s.TPS, s.MBps)
	l := s.Latency
	fmt.Fprintf(w, "latency   p50 %.3f  p90 %.3f  p99 %.3f  p99.9 %.3f  max %.3f  mean %.3f ms (%d samples)\n",
		l.P50, l.P90, l.P99, l.P999, l.Max, l.Mean, l.Samples)
	if len(s.Errors) == 0 {
		fmt.Fprintln(w, "errors    0")
		return
	}
	names := make([]string, 0, len(s.Errors))
	for k := range s.Errors {
		names = append(names, k)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = fmt.Sprintf("%s=%d", n, s.Errors[n])
	}
	fmt.Fprintf(w, "errors    %d (%s)\n", s.ErrTotal, strings.Join(parts, " "))
}

func (s *Summary) writeJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	return enc.Encode(s)
}

// reporter prints a progress line every second from a set of recorders.
type reporter struct {
	out   io.Writer // nil: silent
	recs  func() []*recorder
	label string
	prev  snapshot
	start time.Time
	last  time.Time
	iv    Histogram
}

func (r *reporter) tick(now time.Time) {
	var s snapshot
	r.iv.Reset()
	for _, rec := range r.recs() {
		rec.take(&s, &r.iv)
	}
	dt := now.Sub(r.last).Seconds()
	if dt <= 0 {
		dt = 1
	}
	r.last = now
	d := snapshot{msgs: s.msgs - r.prev.msgs, bytes: s.bytes - r.prev.bytes, errs: s.errs - r.prev.errs}
	r.prev = s
	if r.out == nil {
		return
	}
	fmt.Fprintf(r.out, "[%5.0fs] %s %8.0f msg/s %8.2f MB/s  p50 %7.3f ms  p99 %7.3f ms  max %7.3f ms  errors %d (total %d msgs)\n",
		now.Sub(r.start).Seconds(), r.label, float64(d.msgs)/dt, float64(d.bytes)/dt/1e6,
		float64(r.iv.Quantile(0.5))/1000, float64(r.iv.Quantile(0.99))/1000, float64(r.iv.Max())/1000, d.errs, s.msgs)
}

// run ticks every second until stop is closed.
func (r *reporter) run(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	r.last = r.start
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case now := <-t.C:
			r.tick(now)
		case <-stop:
			return
		}
	}
}

// summarize folds all recorders into a Summary.
func summarize(recs []*recorder, elapsed time.Duration) Summary {
	var s snapshot
	var iv, total Histogram
	errs := make(map[int32]uint64)
	for _, rec := range recs {
		rec.take(&s, &iv)
		rec.final(&total, errs)
	}
	sum := Summary{
		Seconds:  elapsed.Seconds(),
		Messages: s.msgs,
		Requests: s.reqs,
		Bytes:    s.bytes,
		Errors:   make(map[string]uint64),
		ErrTotal: s.errs,
		Latency:  latencyOf(&total),
	}
	if sec := elapsed.Seconds(); sec > 0 {
		sum.TPS = float64(s.msgs) / sec
		sum.MBps = float64(s.bytes) / sec / 1e6
	}
	for code, n := range errs {
		sum.Errors[codeName(code)] += n
	}
	return sum
}
