package main

import (
	"sync"

	"github.com/rocketgo/rocketgo/codec"
)

// errTimeout and errLost are pseudo response codes for requests that got
// no reply: timed out, or the connection failed first.
const (
	errTimeout int32 = -1006 // RPC_TIME_OUT, a client-local Java code
	errLost    int32 = -1004 // RPC_SEND_TO_CHANNEL_FAILED
)

// codeName names a response code as Java does.
func codeName(code int32) string {
	switch code {
	case errTimeout:
		return "TIMEOUT"
	case errLost:
		return "CONNECTION_LOST"
	}
	return codec.ResponseCode(code).String()
}

// recorder collects the outcome of requests. One recorder per connection
// (or per consumer queue group) keeps the lock uncontended; the reporter
// folds them together.
type recorder struct {
	mu       sync.Mutex // guards everything below
	total    Histogram  // since start
	interval Histogram  // since the last take
	msgs     uint64
	bytes    uint64
	reqs     uint64
	errs     map[int32]uint64
	errCount uint64
}

func newRecorder() *recorder { return &recorder{errs: make(map[int32]uint64)} }

// ok records a successful request carrying msgs messages of bytes body
// bytes, with latency in microseconds (skipped when lat < 0).
func (r *recorder) ok(msgs, bytes int, latUS int64) {
	r.mu.Lock()
	r.msgs += uint64(msgs)
	r.bytes += uint64(bytes)
	r.reqs++
	if latUS >= 0 {
		r.total.Record(uint64(latUS))
		r.interval.Record(uint64(latUS))
	}
	r.mu.Unlock()
}

// latency records latency samples without counting a request (consumers
// record one per message).
func (r *recorder) latencies(latUS []int64) {
	r.mu.Lock()
	for _, l := range latUS {
		if l < 0 {
			l = 0
		}
		r.total.Record(uint64(l))
		r.interval.Record(uint64(l))
	}
	r.mu.Unlock()
}

// fail records a failed request.
func (r *recorder) fail(code int32) {
	r.mu.Lock()
	r.errs[code]++
	r.errCount++
	r.reqs++
	r.mu.Unlock()
}

// snapshot is a point-in-time copy of the counters.
type snapshot struct {
	msgs, bytes, reqs, errs uint64
}

// take adds r's counters to s, merges the interval histogram into iv and
// resets it.
func (r *recorder) take(s *snapshot, iv *Histogram) {
	r.mu.Lock()
	s.msgs += r.msgs
	s.bytes += r.bytes
	s.reqs += r.reqs
	s.errs += r.errCount
	iv.Merge(&r.interval)
	r.interval.Reset()
	r.mu.Unlock()
}

// final merges the whole-run histogram and errors into h and errs.
func (r *recorder) final(h *Histogram, errs map[int32]uint64) {
	r.mu.Lock()
	h.Merge(&r.total)
	for k, v := range r.errs {
		errs[k] += v
	}
	r.mu.Unlock()
}
