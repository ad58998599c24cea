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

// errHeldElsewhere refuses a registration or heartbeat for a broker whose
// identity another connection holds (see doc.go, "Who may speak for a broker").
var errHeldElsewhere = errors.New("controller: broker identity held by another connection")

// errConnClosed refuses a heartbeat or registration handled after its
// connection closed.
var errConnClosed = errors.New("controller: connection closed")

type brokerKey struct {
	cluster, broker string
	id              int64
}

// liveEntry is one broker as this node knows it: its last heartbeat and
// the connection that holds its identity.
type liveEntry struct {
	info    LiveInfo
	last    time.Time // last heartbeat; zero: registered on conn, not heard yet
	seen    time.Time // last heartbeat or registration: the claim runs from here
	timeout time.Duration
	conn    *transport.Conn // nil only for in-process callers (tests)
}

// alive: heard, and the last heartbeat is within its timeout.
func (e *liveEntry) alive(now time.Time) bool {
	return (e.conn == nil || !e.conn.Closed()) && !e.last.IsZero() && !now.After(e.last.Add(e.timeout))
}

// held: the identity still belongs to e.conn (open, and heard from or
// registered within the timeout).
func (e *liveEntry) held(now time.Time) bool {
	return (e.conn == nil || !e.conn.Closed()) && !now.After(e.seen.Add(e.timeout))
}

// heartbeats is the node-local broker liveness table (Java's
// DefaultBrokerHeartbeatManager) and the broker identity table: which
// connection speaks for which broker. Every controller node keeps its own:
// Java brokers send BROKER_HEARTBEAT to every controller they reach.
//
// Invariant: an entry's conn changes only once its claim lapsed (held is
// false); a heartbeat or registration from another connection while it is
// held is refused.
//
// Lock order: State.mu before mu (the decider asks under State.view).
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

// entryFor returns k's entry for connection c, making a fresh one when k
// is unknown or its previous holder's claim lapsed. Called with mu held.
func (h *heartbeats) entryFor(k brokerKey, c *transport.Conn, now time.Time) (*liveEntry, error) {
	if c != nil && c.Closed() {
		// A request still queued when its connection closed (they run,
		// replies dropped) must not bind or refresh an identity: connClosed
		// took mu after the close was marked, so it would never be undone
		// and the dead broker would look alive.
		return nil, errConnClosed
	}
	e := h.table[k]
	if e != nil && e.conn == c {
		return e, nil
	}
	if e != nil && e.held(now) {
		return nil, errHeldElsewhere
	}
	if e == nil && len(h.table) >= h.max {
		return nil, errTooManyBrokers
	}
	e = &liveEntry{timeout: defaultHeartbeatTimeout, conn: c, seen: now}
	h.table[k] = e
	h.poke()
	return e, nil
}

// beat records one heartbeat received on c. Like Java, epoch and offsets
// only move forward (a stale heartbeat cannot lower them); the timeout and
// the election priority take the latest value. A heartbeat on another
// connection than the one holding the broker's identity is refused.
func (h *heartbeats) beat(k brokerKey, info LiveInfo, timeout time.Duration, c *transport.Conn) error {
	if timeout <= 0 {
		timeout = defaultHeartbeatTimeout
	}
	timeout = min(timeout, maxHeartbeatTimeout)
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	e, err := h.entryFor(k, c, now)
	if err != nil {
		return err
	}
	if timeout < e.timeout || e.last.IsZero() {
		h.poke()
	}
	first := e.last.IsZero()
	e.last, e.seen = now, now
	e.timeout = timeout
	e.info.Priority = info.Priority
	e.info.Addr = info.Addr
	if first || info.Epoch > e.info.Epoch || info.Epoch == e.info.Epoch && info.MaxOffset > e.info.MaxOffset {
		e.info.Epoch, e.info.MaxOffset, e.info.ConfirmOffset = info.Epoch, info.MaxOffset, info.ConfirmOffset
	}
	return nil
}

// Claim records that the broker registered on c (CONTROLLER_REGISTER_BROKER).
// It makes the broker no more alive than it was: only heartbeats do.
func (h *heartbeats) Claim(cluster, broker string, id int64, c *transport.Conn) error {
	k := brokerKey{cluster, broker, id}
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	e, err := h.entryFor(k, c, now)
	if err != nil {
		return err
	}
	e.seen = now
	return nil
}

// Holds reports whether c is the connection that speaks for the broker:
// the one it registered or heartbeats on, with the claim not lapsed.
func (h *heartbeats) Holds(cluster, broker string, id int64, c *transport.Conn) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.table[brokerKey{cluster, broker, id}]
	return e != nil && e.conn == c && e.held(h.now())
}

// Alive reports whether the broker's last heartbeat is within its timeout.
func (h *heartbeats) Alive(cluster, broker string, id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.table[brokerKey{cluster, broker, id}]
	return e != nil && e.alive(h.now())
}

// Info returns the broker's last heartbeat data.
func (h *heartbeats) Info(cluster, broker string, id int64) (LiveInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	e := h.table[brokerKey{cluster, broker, id}]
	if e == nil || e.last.IsZero() {
		return LiveInfo{}, false
	}
	return e.info, true
}

// expire removes the brokers whose claim lapsed and returns those that had
// heartbeated, with their connections (to be closed off the lock). A
// registration never followed by a heartbeat just leaves the table.
func (h *heartbeats) expire() (gone []brokerKey, conns []*transport.Conn) {
	now := h.now()
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, e := range h.table {
		if now.Sub(e.seen) > e.timeout {
			delete(h.table, k)
			if e.last.IsZero() {
				continue
			}
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
		// expire removes an entry once now-seen exceeds its timeout.
		if left := e.seen.Add(e.timeout).Sub(now) + time.Millisecond; left < d {
			d = left
		}
	}
	return max(d, time.Millisecond)
}

// connClosed removes the brokers that registered or heartbeated on c: a
// closed connection loses every identity it held (Java:
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
