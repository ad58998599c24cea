package store

import (
	"fmt"

	"github.com/rocketgo/rocketgo/codec/message"
)

// TruncateTo removes the commit log from offset on, at run time, on a slave
// (a master answers ErrMaster: switch the role first): the records at and
// past offset, their consume-queue units and their index entries, and any
// bytes received past it. offset must be a record boundary (a record's
// start, an end-of-segment record's start, a segment start or the written
// end) not below the first segment.
//
// Crash-safe: first the checkpoint records the cut (and lowers its
// positions to it) durably, then the segment holding offset is zeroed from
// it and synced, then later segments are removed (the last first); a kill
// at any point after the checkpoint write recovers the log cut at offset
// (recovery finishes the cut), never the truncated tail. Puts still
// waiting for offsets past the cut are answered (ServiceNotAvailable).
func (s *Store) TruncateTo(offset int64) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.dispMu.Lock()
	defer s.dispMu.Unlock()
	s.mu.Lock()
	if s.IsWritable() {
		s.mu.Unlock()
		return ErrMaster
	}
	if err := s.healthy(); err != nil {
		s.mu.Unlock()
		return err
	}
	w := s.written.Load()
	if offset == max(w, s.received) {
		s.mu.Unlock()
		return nil
	}
	seg := s.cl.find(offset)
	if err := s.checkBoundaryLocked(seg, offset, w); err != nil {
		s.mu.Unlock()
		return err
	}
	s.log.Warn("store: truncating the commit log", "offset", offset, "written", w, "received", s.received)

	// 1. The cut, durably in the checkpoint.
	s.ckpt.beginTruncate(offset)
	f := min(s.flushed.Load(), offset)
	if err := s.ckpt.write(f, min(f, s.watermark()), s.flushedTS.Load()); err != nil {
		s.mu.Unlock()
		s.setReadOnly(err)
		return err
	}
	s.truncateHook(1)
	// 2. Nothing valid from offset on in its segment, durably.
	if err := seg.zeroFrom(offset - seg.start); err != nil {
		s.mu.Unlock()
		s.setReadOnly(err)
		return err
	}
	if err := seg.sync(); err != nil {
		s.mu.Unlock()
		s.setReadOnly(err)
		return err
	}
	s.truncateHook(2)
	// 3. Later segments, the last first.
	s.cl.truncateAfter(offset)
	s.cur = seg
	s.truncateHook(3)
	s.cutOffsetsLocked(offset)
	s.mu.Unlock()
	s.cutWaiters(offset)

	// 4. Consume queues and index: nothing at or past offset.
	s.cqMu.RLock()
	for _, q := range s.cqs {
		q.mu.Lock()
		q.truncateTo(offset)
		q.mu.Unlock()
	}
	s.cqMu.RUnlock()
	if s.idx != nil {
		if from, ok := s.idx.DropFrom(offset); ok {
			// The dropped index files also held entries below offset:
			// index them again (consume queues only fill what they lack).
			s.indexedTo = s.idx.MaxPhyOffset()
			s.repairBelow = offset
			s.dispatched.Store(min(s.dispatched.Load(), max(from, s.cl.minOffset())))
			s.dispatchLocked(offset)
			s.repairBelow, s.indexedTo = -1, -1
		}
	}
	s.truncateHook(4)
	// 5. The queues, the index and a checkpoint without the cut.
	if err := s.flushLogics(); err != nil {
		return err
	}
	s.ckpt.endTruncate()
	if err := s.writeCheckpoint(); err != nil {
		return err
	}
	s.notifyRaw()
	return nil
}

// checkBoundaryLocked checks that offset, in seg, is where a record starts
// and at or below written. mu held.
func (s *Store) checkBoundaryLocked(seg *segment, offset, w int64) error {
	if offset > w || seg == nil || offset < s.cl.minOffset() {
		return fmt.Errorf("store: truncate to %d outside [%d, %d]: %w", offset, s.cl.minOffset(), w, ErrOffsetNotFound)
	}
	pos := offset - seg.start
	if pos == 0 || offset == w {
		return nil
	}
	var e message.Ext
	err := message.Decode(seg.data[pos:], &e)
	if err == message.ErrBlank && int64(e.TotalSize) == seg.size-pos {
		return nil
	}
	if err != nil || e.PhysicalOffset != offset {
		return fmt.Errorf("store: truncate to %d: not a record boundary: %w", offset, ErrCorrupt)
	}
	return nil
}

// truncateHook runs the test hook at a step of TruncateTo.
func (s *Store) truncateHook(step int) {
	if s.onTruncateStep != nil {
		s.onTruncateStep(step)
	}
}
