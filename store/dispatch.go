package store

import (
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
)

// dispatchLoop is the "reput" goroutine: it turns records below the durable
// watermark into consume-queue units and index entries.
func (s *Store) dispatchLoop() {
	defer s.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		s.dispatchUpTo(s.watermark())
		select {
		case <-s.stop:
			return
		case <-s.dispatchWake:
		case <-t.C:
		}
	}
}

// dispatchUpTo dispatches records in [dispatched, wm). Only one goroutine
// dispatches at a time (the loop, or recovery/Close while it is stopped).
func (s *Store) dispatchUpTo(wm int64) {
	s.dispMu.Lock()
	from := s.dispatched.Load()
	s.dispatchLocked(wm)
	moved := s.dispatched.Load() != from
	s.dispMu.Unlock()
	if moved {
		s.endRound()
	}
}

// endRound wakes AwaitDispatched callers.
func (s *Store) endRound() {
	s.dispRoundMu.Lock()
	if s.dispRound != nil {
		close(s.dispRound)
		s.dispRound = nil
	}
	s.dispRoundMu.Unlock()
}

// AwaitDispatched waits, at most timeout, until every record confirmed when
// it is called is dispatched, so that a reader of queue offsets (admin
// stats, GET_MAX_OFFSET) sees each put already acknowledged to its
// producer. It reports whether that happened in time. Not for the event
// loops: it blocks.
func (s *Store) AwaitDispatched(timeout time.Duration) bool {
	target := s.watermark()
	if s.dispatched.Load() >= target {
		return true
	}
	t := time.NewTimer(timeout)
	defer t.Stop()
	for {
		s.dispRoundMu.Lock()
		if s.dispRound == nil {
			s.dispRound = make(chan struct{})
		}
		ch := s.dispRound
		s.dispRoundMu.Unlock()
		// Checked after taking the channel: a round ending in between
		// closes this one.
		if s.dispatched.Load() >= min(target, s.watermark()) {
			return true
		}
		s.wakeDispatcher()
		select {
		case <-ch:
		case <-t.C:
			return s.dispatched.Load() >= min(target, s.watermark())
		case <-s.stop:
			return false
		}
	}
}

// dispatchLocked is dispatchUpTo with dispMu held.
func (s *Store) dispatchLocked(wm int64) {
	wm = min(wm, s.watermark()) // TruncateTo may have lowered it
	var e message.Ext
	d := s.dispatched.Load()
	slave := Role(s.role.Load()) == Slave
	for d < wm {
		seg := s.cl.find(d)
		if seg == nil {
			// Should not happen: segments below the watermark exist.
			s.log.Error("store: dispatch: no segment", "offset", d)
			return
		}
		pos := d - seg.start
		if pos+message.BlankLen > seg.size {
			d = seg.end()
			s.dispatched.Store(d)
			continue
		}
		err := message.Decode(seg.data[pos:], &e)
		if err == message.ErrBlank {
			d = seg.end()
			s.dispatched.Store(d)
			continue
		}
		if err != nil {
			// The writer produced it and recovery validated it: a broken
			// record below the watermark is a broken invariant.
			panic("store: invariant violated: undecodable record below watermark at " + itoa(d) + ": " + err.Error())
		}
		if err := s.dispatchRecord(&e, d); err != nil {
			// No room for a consume-queue file: stop here and retry on the
			// next round (the store refuses puts meanwhile), so no unit is
			// ever skipped.
			s.noSpace(err)
			return
		}
		d += int64(e.TotalSize)
		if slave {
			s.putTimes.Add(1)
			s.putBytes.Add(int64(e.TotalSize))
		}
		s.dispatchTS.Store(e.StoreTimestamp)
		s.dispatched.Store(d)
	}
}

// dispatchRecord writes the record's consume-queue unit and index entries.
// It returns an error only when a consume-queue or index file cannot be
// allocated (disk full): the caller retries the record later (both writes
// are idempotent).
func (s *Store) dispatchRecord(e *message.Ext, phy int64) error {
	tt := message.TransactionValue(e.SysFlag)
	if len(s.quarantine) > 0 && s.isQuarantined(phy) {
		s.log.Error("store: record with bad body crc hidden from consumers", "offset", phy, "topic", e.Topic, "queueId", e.QueueID, "queueOffset", e.QueueOffset)
		if tt != message.TransactionPreparedType && tt != message.TransactionRollbackType {
			if q := s.findCQ(e.Topic, e.QueueID); q != nil || phy >= s.repairBelow {
				if err := s.cqFor(e.Topic, e.QueueID).hide(e.QueueOffset); err != nil {
					if isNoSpace(err) {
						return err
					}
					s.setReadOnly(err)
				}
			}
		}
		return nil
	}
	if phy < s.repairBelow && s.covered(e, phy, tt) {
		return nil
	}
	// The consume queue and the arrival notification come first: a held
	// pull is woken before the index entry is written, so index work
	// (a page fault in its 400 MB file) never delays delivery.
	if tt != message.TransactionPreparedType && tt != message.TransactionRollbackType {
		if err := s.dispatchCQ(e, phy); err != nil {
			return err
		}
	}
	if s.idx != nil && tt != message.TransactionRollbackType {
		keys, _ := message.Property(e.Properties, message.PropertyKeys)
		uniq, _ := message.Property(e.Properties, message.PropertyUniqKey)
		if keys != "" || uniq != "" {
			if err := s.idx.Put(e.Topic, keys, uniq, phy, e.StoreTimestamp); err != nil {
				if isNoSpace(err) {
					// Nothing of the record was indexed: retried with the
					// record (its consume-queue unit is already there).
					return err
				}
				s.log.Warn("store: index entry skipped", "offset", phy, "err", err)
			}
		}
	}
	return nil
}

// covered reports whether a record below the checkpoint (recovery's
// re-dispatch) has the consume-queue unit and index entries it should
// have, so it is skipped without the property lookups of a dispatch.
func (s *Store) covered(e *message.Ext, phy int64, tt int32) bool {
	if tt != message.TransactionPreparedType && tt != message.TransactionRollbackType {
		if q := s.findCQ(e.Topic, e.QueueID); q != nil && q.lacks(e.QueueOffset, phy) {
			return false
		}
	}
	return s.idx == nil || tt == message.TransactionRollbackType || phy <= s.indexedTo
}

// dispatchCQ appends the record's consume-queue unit and wakes whoever
// waits for the queue.
func (s *Store) dispatchCQ(e *message.Ext, phy int64) error {
	tags := s.tagsCode(e)
	if phy < s.repairBelow {
		// Recovery below the checkpoint: only fill what queues lack, never
		// resurrect deleted topics.
		if q := s.findCQ(e.Topic, e.QueueID); q != nil {
			if err := q.repair(e.QueueOffset, phy, e.TotalSize, tags); err != nil {
				if isNoSpace(err) {
					return err
				}
				s.setReadOnly(err)
			}
		}
		return nil
	}
	q := s.cqFor(e.Topic, e.QueueID)
	if err := q.put(e.QueueOffset, phy, e.TotalSize, tags); err != nil {
		if isNoSpace(err) {
			return err
		}
		s.setReadOnly(err)
		return nil
	}
	if fn := s.onArrival.Load(); fn != nil {
		(*fn)(e.Topic, e.QueueID, e.QueueOffset+1, tags, e.Properties)
	}
	return nil
}

func (s *Store) tagsCode(e *message.Ext) int64 {
	if s.cfg.TagsCode != nil {
		return s.cfg.TagsCode(e.Topic, e.Properties, e.StoreTimestamp)
	}
	tags, _ := message.Property(e.Properties, message.PropertyTags)
	return message.TagsHash(tags)
}
