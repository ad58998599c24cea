package controller

import (
	"errors"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/transport"
)

// defaultHeartbeatTimeout is Java's DEFAULT_BROKER_CHANNEL_EXPIRED_TIME (10 s),
// used when a heartbeat carries no timeout.
const defaultHeartbeatTimeout = 10 * time.Second

// maxHeartbeatTimeout caps the timeout a broker may claim (a forged huge
// value would otherwise keep a dead broker alive for ever).
const maxHeartbeatTimeout = 10 * time.Minute

// errTooManyBrokers refuses a heartbeat that would grow a full table.
var errTooManyBrokers = errors.New("controller: heartbeat table full")

type brokerKey struct {
	cluster, broker string
	id              int64
}

type liveEntry struct {
	info    LiveInfo
	last    time.Time
	timeout time.Duration
	conn    *transport.Conn
}

// heartbeats is the node-local broker liveness table (Java's
// DefaultBrokerHeartbeatManager). Every controller node keeps its own:
// Java brokers send BROKER_HEARTBEAT to every controller they reach.
//
// Lock order: mu only.
type heartbeats struct {
	now func() time.Time
	max int

	mu    sync.Mutex
	table map[brokerKey]*liveEntry // guarded by mu
	added chan struct{}            // see Added
}

func newHeartbeats(now func() time.Time, max int) *heartbeats {
	return &heartbeats{now: now, max: max, table: make(map[brokerKey]*liveEntry), added: make(chan struct{}, 1)}
}

// Added is signalled when a broker enters the table or shortens its
// timeout: its deadline may be earlier than the scanner's next wake-up.
func (h *heartbeats) Added() <-chan struct{} { return h.added }

func (h *heartbeats) poke() {
	select {
	case h.added <- struct{}{}:
	default:
	}
}

// beat records one heartbeat. Like Java, epoch and offsets only move
// forward (a stale heartbeat cannot lower them); the timeout and the
// election priority take the latest value.
func (h *heartbeats) beat(k brokerKey, info LiveInfo, timeout time.Duration, c *transport.Conn) error {
	if timeout <= 0 {
		timeout = defaultHeartbeatTimeout
	}
	timeout = min(timeout, maxHeartbeatTimeout)
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.table[k]
	if e == nil {
		if len(h.table) >= h.max {
			return errTooManyBrokers
		}
		h.table[k] = &liveEntry{info: info, last: now, timeout: timeout, conn: c}
		h.poke()
		return nil
	}
	if timeout < e.timeout {
		h.poke()
	}
	e.last = now
	e.timeout = timeout
	e.info.Priority = info.Priority
	e.info.Addr = info.Addr
	if c != nil {
		e.conn = c
	}
	if info.Epoch > e.info.Epoch || info.Epoch == e.info.Epoch && info.MaxOffset > e.info.MaxOffset {
		e.info.Epoch, e.info.MaxOffset, e.info.ConfirmOffset = info.Epoch, info.MaxOffset, info.ConfirmOffset
	}
	return nil
}

// Alive reports whether the broker's last heartbeat is within its timeout.
func (h *heartbeats) Alive(cluster, broker string, id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.table[brokerKey{cluster, broker, id}]
	return e != nil && !h.now().After(e.last.Add(e.timeout))
}

// Info returns the broker's last heartbeat data.
func (h *heartbeats) Info(cluster, broker string, id int64) (LiveInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.table[brokerKey{cluster, broker, id}]
	if e == nil {
		return LiveInfo{}, false
	}
	return e.info, true
}

// expire removes the brokers past their timeout and returns them with
// their connections (to be closed off the lock).
func (h *heartbeats) expire() (gone []brokerKey, conns []*transport.Conn) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, e := range h.table {
		if now.Sub(e.last) > e.timeout {
			delete(h.table, k)
			gone = append(gone, k)
			if e.conn != nil {
				conns = append(conns, e.conn)
			}
		}
	}
	return gone, conns
}

// untilNextExpiry is how long until the earliest entry passes its
// timeout (just past it), or def when the table is empty or every entry
// is further away than def.
func (h *heartbeats) untilNextExpiry(def time.Duration) time.Duration {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	d := def
	for _, e := range h.table {
		// expire removes an entry once now-last exceeds its timeout.
		if left := e.last.Add(e.timeout).Sub(now) + time.Millisecond; left < d {
			d = left
		}
	}
	return max(d, time.Millisecond)
}

// connClosed removes the brokers that heartbeated on c (Java:
// onBrokerChannelClose, which drops the first match).
func (h *heartbeats) connClosed(c *transport.Conn) (gone []brokerKey) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, e := range h.table {
		if e.conn == c {
			delete(h.table, k)
			gone = append(gone, k)
		}
	}
	return gone
}

// Len is the number of brokers in the table.
func (h *heartbeats) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.table)
}
