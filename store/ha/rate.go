package ha

import (
	"sync"
	"time"
)

// Rate counts bytes per wall-clock second as Java's FlowMonitor does for
// transferredByteInSecond: the count of the last complete second. Both HA
// protocols (this package's and autoswitch) report it. The zero value is
// ready; it is safe for concurrent use.
type Rate struct {
	mu   sync.Mutex
	sec  int64 // unix second cur counts
	cur  int64
	last int64 // bytes of second sec-1
}

// Add counts n bytes at now.
func (r *Rate) Add(n int64, now time.Time) {
	r.mu.Lock()
	r.roll(now.Unix())
	r.cur += n
	r.mu.Unlock()
}

// PerSecond is the count of the last complete second.
func (r *Rate) PerSecond(now time.Time) int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.roll(now.Unix())
	return r.last
}

// roll moves to second s. mu held.
func (r *Rate) roll(s int64) {
	switch {
	case s == r.sec:
	case s == r.sec+1:
		r.sec, r.last, r.cur = s, r.cur, 0
	default:
		r.sec, r.last, r.cur = s, 0, 0
	}
}
