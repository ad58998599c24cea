package store

import (
	"errors"
	"fmt"

	"github.com/rocketgo/rocketgo/codec/message"
)

// RawView is a view of raw commit-log bytes returned by ReadRaw: Data are
// the mapped bytes themselves (no copy), valid until Release, which drops
// the segment reference that keeps them mapped. A RawView is reused across
// calls; the zero value is ready.
type RawView struct {
	Data   []byte // the bytes, from Offset on
	Offset int64  // commit-log offset of Data[0]
	seg    *segment
}

// Release drops the view's segment reference; Data must not be used after.
func (v *RawView) Release() {
	if v.seg != nil {
		v.seg.release()
	}
	*v = RawView{}
}

// ReadRaw sets v to the commit-log bytes from offset on: at most max bytes,
// never across a segment, never past RawEnd (written and in the page
// cache). At RawEnd Data is empty and the error nil (nothing yet: wait on
// WatchRaw). At a segment's end it reads from the next segment. Below the
// first segment, or above RawEnd, it fails with ErrOffsetNotFound. v is
// released first; nothing is allocated.
func (s *Store) ReadRaw(offset int64, max int, v *RawView) error {
	v.Release()
	end := s.rawEnd()
	if offset < 0 || offset > end {
		return fmt.Errorf("store: raw read at %d past %d: %w", offset, end, ErrOffsetNotFound)
	}
	if offset == end || max <= 0 {
		v.Offset = offset
		return nil
	}
	seg := s.cl.find(offset)
	if seg == nil || !seg.tryAcquire() {
		return fmt.Errorf("store: raw read at %d: %w", offset, ErrOffsetNotFound)
	}
	n := min(int64(max), seg.end()-offset, end-offset)
	pos := offset - seg.start
	v.Data, v.Offset, v.seg = seg.data[pos:pos+n:pos+n], offset, seg
	return nil
}

// AppendRaw appends b, commit-log bytes received from the master, at
// offset (slave role only; a master answers ErrMaster). offset must be the
// end of what was received so far (ReceivedOffset; else ErrOffsetMismatch,
// the HA service closes the connection as Java does) — except on an empty
// store, which starts at any segment-aligned offset (Java's master starts
// an empty slave at its last segment). b may end inside a record: the
// bytes are stored at once, but a record becomes visible (written,
// dispatched into consume queues and the index exactly as a local put)
// only when it is complete and valid — magic, size, physical offset, body
// CRC, room for the end-of-segment marker. A blank end-of-segment record
// rolls to the next segment once the bytes up to the segment's end have
// arrived, exactly where the master rolled. An invalid record is dropped
// with everything after it and reported (ErrCorrupt). b is not retained.
func (s *Store) AppendRaw(offset int64, b []byte) error {
	s.mu.Lock()
	if s.received != offset && s.isEmptyLocked() && offset%s.cfg.MappedFileSizeCommitLog == 0 && offset > 0 {
		s.mu.Unlock()
		if err := s.restartAt(offset); err != nil {
			return err
		}
		s.mu.Lock()
	}
	err := s.appendRawLocked(offset, b)
	w := s.written.Load()
	if s.staging {
		s.mapped.advance(w)
	}
	s.mu.Unlock()
	s.notifyRaw()
	if s.staging {
		s.wakeFlusher()
	}
	s.wakeDispatcher()
	return err
}

func (s *Store) appendRawLocked(offset int64, b []byte) error {
	if s.IsWritable() {
		return ErrMaster
	}
	if err := s.healthy(); err != nil {
		return err
	}
	if offset != s.received {
		return fmt.Errorf("store: append at %d, received up to %d: %w", offset, s.received, ErrOffsetMismatch)
	}
	for len(b) > 0 {
		seg := s.cur
		if s.received == seg.end() {
			// The blank marker closed seg (validate moved written there).
			next, err := s.cl.appendSegment(seg.end())
			if err != nil {
				if isNoSpace(err) {
					s.noSpace(err)
					err = fmt.Errorf("%w: %w", ErrDiskFull, err)
				} else {
					s.setReadOnly(err)
				}
				return err
			}
			s.cur, seg = next, next
		}
		if err := seg.ensureAllocated(); err != nil {
			s.noSpace(err)
			return fmt.Errorf("%w: %w", ErrDiskFull, err)
		}
		pos := s.received - seg.start
		n := min(int64(len(b)), seg.size-pos)
		copy(seg.data[pos:pos+n], b[:n])
		b = b[n:]
		s.received += n
		if err := s.validateLocked(seg); err != nil {
			return err
		}
		if s.received == seg.end() && s.written.Load() != seg.end() {
			return s.dropReceivedLocked(seg, fmt.Errorf("store: segment %s ends without its end-of-segment record: %w", seg.path, ErrCorrupt))
		}
	}
	if w := s.written.Load(); w+4096 > s.faultMark.Load() {
		s.wakeResident()
	}
	return nil
}

// validateLocked makes the complete records received in seg visible, in
// order, and stops at the first incomplete one. mu held.
func (s *Store) validateLocked(seg *segment) error {
	for {
		w := s.written.Load()
		pos := w - seg.start
		avail := s.received - w
		if avail < message.BlankLen {
			return nil
		}
		size, magic, _ := message.PeekSize(seg.data[pos:])
		if magic == message.BlankMagic {
			if int64(size) != seg.size-pos {
				return s.dropReceivedLocked(seg, fmt.Errorf("store: blank record at %d of %d bytes, segment has %d left: %w", w, size, seg.size-pos, ErrCorrupt))
			}
			if s.received < seg.end() {
				return nil // the rest of the segment is still arriving
			}
			s.written.Store(seg.end())
			return nil
		}
		if size <= 0 || pos+int64(size)+message.BlankLen > seg.size {
			return s.dropReceivedLocked(seg, fmt.Errorf("store: record at %d of %d bytes does not fit its segment: %w", w, size, ErrCorrupt))
		}
		if avail < int64(size) {
			return nil
		}
		v := seg.data[pos : pos+int64(size)]
		if err := verifyRecord(v, w); err != nil {
			return s.dropReceivedLocked(seg, fmt.Errorf("store: received record at %d: %w: %w", w, ErrCorrupt, err))
		}
		if ts, err := message.StoreTimestampOf(v); err == nil {
			s.lastTS = ts
		}
		s.written.Store(w + int64(size))
	}
}

// dropReceivedLocked clears the received bytes past written (an invalid
// record and what followed it) and returns err. mu held.
func (s *Store) dropReceivedLocked(seg *segment, err error) error {
	w := s.written.Load()
	clear(seg.data[w-seg.start : s.received-seg.start])
	s.received = w
	s.log.Error("store: replicated bytes refused", "offset", w, "err", err)
	return err
}

// ReceivedOffset is the end of the bytes a slave has received (what it
// reports to its master): written plus the head of a record still
// arriving. On a master it is the written offset.
func (s *Store) ReceivedOffset() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return max(s.received, s.written.Load())
}

// isEmptyLocked: the commit log holds nothing (one segment, no byte
// received). mu held.
func (s *Store) isEmptyLocked() bool {
	return s.received == s.cur.start && s.written.Load() == s.cur.start && len(s.cl.list()) == 1
}

// restartAt moves an empty store's commit log to start at offset (a
// segment start), as a slave that joins a master with history does.
func (s *Store) restartAt(offset int64) error {
	s.flushMu.Lock()
	defer s.flushMu.Unlock()
	s.dispMu.Lock()
	defer s.dispMu.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.isEmptyLocked() || s.IsWritable() {
		return nil // appendRawLocked reports it
	}
	next, err := s.cl.resetTo(offset)
	if l := s.cl.list(); len(l) == 1 {
		s.cur = l[0]
	}
	if err != nil {
		if isNoSpace(err) {
			s.noSpace(err)
			return fmt.Errorf("%w: %w", ErrDiskFull, err)
		}
		s.setReadOnly(err)
		return err
	}
	s.cur = next
	s.log.Info("store: empty slave starts at the master's offset", "offset", offset)
	s.received, s.stage.at = offset, offset
	for _, p := range []*progress{&s.written, &s.mapped, &s.flushed, &s.replicated} {
		p.Store(offset)
	}
	s.dispatched.Store(offset)
	return nil
}

// cutOffsetsLocked lowers the offsets the append lock guards to off (a
// truncated log); cutWaiters then lowers the others. mu, dispMu and
// flushMu held.
func (s *Store) cutOffsetsLocked(off int64) {
	s.received = off
	s.stage.at = off
	s.written.Store(off)
	s.mapped.Store(min(s.mapped.Load(), off))
	s.dispatched.Store(min(s.dispatched.Load(), off))
}

// cutWaiters lowers flushed and replicated to off and answers the puts
// waiting past it: their records are gone (ServiceNotAvailable). dispMu and
// flushMu held, mu not (the callbacks may call into the store).
func (s *Store) cutWaiters(off int64) {
	gone := func(w *waiter) {
		w.res.Status, w.res.Err, w.needs = ServiceNotAvailable, errors.New("store: commit log truncated past the record"), 0
		s.answer(w)
	}
	s.flushed.reset(min(s.flushed.Load(), off), gone)
	s.replicated.reset(min(s.replicated.Load(), off), gone)
}
