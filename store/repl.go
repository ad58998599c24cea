package store

import "time"

// Replication API (doc.go "Replication"): the HA service reads raw
// commit-log bytes on the master (ReadRaw, WatchRaw), reports slave
// acknowledgements (AckReplicated), and on the slave appends the bytes it
// receives (AppendRaw) and truncates a diverged tail (TruncateTo).

// AckReplicated raises the replicated offset to off: every byte below it is
// acknowledged by as many slaves as a SYNC_MASTER put needs (the HA service
// reduces per-slave acknowledgements with QuorumOffset). It is clamped to
// what the master has written (a slave never acknowledges more than it was
// sent; apache/rocketmq#3015), and answers the puts it completes on the
// caller's goroutine.
func (s *Store) AckReplicated(off int64) {
	s.replicated.advance(min(off, s.rawEnd()))
}

// ReplicatedOffset is the end of the data the slaves a put needs have
// acknowledged.
func (s *Store) ReplicatedOffset() int64 { return s.replicated.Load() }

// QuorumOffset is the largest offset acknowledged by at least need-1 of
// the slaves whose acknowledged offsets are acks (the master is one of the
// need replicas): the (need-1)-th largest ack; the master's written offset
// bound applies in AckReplicated. need <= 1 asks no slave (max int64). It
// reorders acks and allocates nothing.
func QuorumOffset(acks []int64, need int) int64 {
	k := need - 1
	if k <= 0 {
		return 1<<63 - 1
	}
	if k > len(acks) {
		return -1
	}
	// Insertion sort, largest first: a handful of slaves.
	for i := 1; i < len(acks); i++ {
		for j := i; j > 0 && acks[j] > acks[j-1]; j-- {
			acks[j], acks[j-1] = acks[j-1], acks[j]
		}
	}
	return acks[k-1]
}

// SetInSyncReplicas sets how many replicas, the master included, a
// SYNC_MASTER put needs (Java inSyncReplicas; the acting-master degrade
// adjusts it at run time). Puts already queued keep their wait.
func (s *Store) SetInSyncReplicas(n int) { s.inSyncReplicas.Store(int32(n)) }

// SetSlaveTimeout changes how long a put waits for its replicas (Java
// reads slaveTimeout on every put): queued puts are measured against the
// new value from the next watchdog round.
func (s *Store) SetSlaveTimeout(d time.Duration) {
	if d > 0 {
		s.slaveTimeoutNs.Store(int64(d))
	}
}

func (s *Store) slaveTimeoutNow() time.Duration { return time.Duration(s.slaveTimeoutNs.Load()) }

// WatchRaw registers ch to receive a non-blocking send whenever the raw
// readable end (RawEnd) grows; the HA sender waits on it instead of
// polling. The returned function unregisters ch.
func (s *Store) WatchRaw(ch chan struct{}) (stop func()) {
	for {
		old := s.rawWatch.Load()
		var nl []chan struct{}
		if old != nil {
			nl = append(nl, *old...)
		}
		nl = append(nl, ch)
		if s.rawWatch.CompareAndSwap(old, &nl) {
			break
		}
	}
	return func() {
		for {
			old := s.rawWatch.Load()
			var nl []chan struct{}
			for _, c := range *old {
				if c != ch {
					nl = append(nl, c)
				}
			}
			if s.rawWatch.CompareAndSwap(old, &nl) {
				return
			}
		}
	}
}

func (s *Store) notifyRaw() {
	p := s.rawWatch.Load()
	if p == nil {
		return
	}
	for _, c := range *p {
		select {
		case c <- struct{}{}:
		default:
		}
	}
}

// RawEnd is the end of the commit-log bytes ReadRaw serves: what is
// written and in the page cache — under SYNC_FLUSH once the flusher's
// pwrite put it there, before its fdatasync, so replication overlaps the
// disk (Java's HA sends what is written, not what is flushed).
func (s *Store) RawEnd() int64 { return s.rawEnd() }

func (s *Store) rawEnd() int64 {
	if s.staging {
		return s.mapped.Load()
	}
	return s.written.Load()
}

func (s *Store) advanceMapped(off int64) {
	s.mapped.advance(off)
	s.notifyRaw()
}
