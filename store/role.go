package store

import (
	"errors"
	"fmt"
)

// Role is Java's BrokerRole as the store sees it: a master takes local
// puts (SYNC_MASTER puts also wait for replication, flush.go policy); a
// slave is read-only for puts and takes bytes from its master (AppendRaw).
type Role int32

// Roles.
const (
	AsyncMaster Role = iota
	SyncMaster
	Slave
)

func (r Role) String() string {
	switch r {
	case SyncMaster:
		return "SYNC_MASTER"
	case Slave:
		return "SLAVE"
	}
	return "ASYNC_MASTER"
}

// ParseRole reads Java's brokerRole value.
func ParseRole(v string) (Role, error) {
	switch v {
	case "ASYNC_MASTER":
		return AsyncMaster, nil
	case "SYNC_MASTER":
		return SyncMaster, nil
	case "SLAVE":
		return Slave, nil
	}
	return 0, fmt.Errorf("store: unknown broker role %q", v)
}

// Errors of the replication API.
var (
	// ErrSlave refuses a local put on a slave (Java: SERVICE_NOT_AVAILABLE,
	// "messages are put to the slave").
	ErrSlave = errors.New("store: read-only: this store is a slave")
	// ErrFenced refuses a local put on a master fenced in controller mode
	// (SetFenced; Java's fenced running flag: SERVICE_NOT_AVAILABLE).
	ErrFenced = errors.New("store: fenced: a newer master epoch may exist")
	// ErrMaster refuses AppendRaw on a master.
	ErrMaster = errors.New("store: writable: this store is a master")
	// ErrOffsetMismatch refuses AppendRaw at an offset other than the end.
	ErrOffsetMismatch = errors.New("store: offset is not the end of the commit log")
)

// Role is the store's current role.
func (s *Store) Role() Role { return Role(s.role.Load()) }

// IsWritable reports whether the role takes local puts (a master).
func (s *Store) IsWritable() bool { return s.Role() != Slave }

// SetRole switches the role at run time (the broker's role change; no
// restart). Master to slave: local puts are refused from now on, puts
// already appended complete as their offsets pass, and AppendRaw continues
// at the written end. Slave to master: an incomplete record still arriving
// is dropped, everything received is flushed and dispatched, and local
// puts continue at the written end with each queue's next offset taken
// from its consume queue. Between SYNC_MASTER and ASYNC_MASTER only the
// put policy changes.
func (s *Store) SetRole(r Role) error {
	if r < AsyncMaster || r > Slave {
		return fmt.Errorf("store: unknown role %d", r)
	}
	if s.closed.Load() {
		return ErrClosed
	}
	old := s.Role()
	if old == r {
		return nil
	}
	if (old == Slave) == (r == Slave) {
		s.role.Store(int32(r))
		return nil
	}
	if r == Slave {
		s.mu.Lock()
		s.role.Store(int32(r))
		s.received = s.written.Load()
		s.mu.Unlock()
		s.wakeFlusher()
		s.log.Info("store: role changed", "from", old, "to", r, "offset", s.written.Load())
		return nil
	}
	// Slave to master.
	s.confirmCap.Store(-1)
	s.mu.Lock()
	w := s.written.Load()
	if s.received > w {
		clear(s.cur.data[w-s.cur.start : s.received-s.cur.start])
		s.received = w
	}
	s.mu.Unlock()
	if err := s.flushCommitLog(); err != nil {
		return err
	}
	s.dispatchUpTo(s.watermark())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.written.Load() != w || s.dispatched.Load() != w {
		return fmt.Errorf("store: role change: %d written, %d dispatched: %w", w, s.dispatched.Load(), ErrCorrupt)
	}
	s.cqMu.RLock()
	for k, q := range s.cqs {
		next := q.maxOffset.Load()
		s.queueOffsets[k] = &next
	}
	s.cqMu.RUnlock()
	s.stage.at = w
	s.mapped.advance(w)
	s.role.Store(int32(r))
	s.log.Info("store: role changed", "from", old, "to", r, "offset", w)
	return nil
}
