package store

import (
	"errors"
	"fmt"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
)

// Put appends m and calls done once, when the record is as durable as the
// flush mode promises: ASYNC_FLUSH right after the append (on the caller's
// goroutine), SYNC_FLUSH after the group-commit fdatasync that covers it (on
// the flusher goroutine), or with FlushDiskTimeout when that takes longer
// than SyncFlushTimeout. Put never waits for the disk. m.StoreTimestamp is
// set. m's slices are not retained after Put returns.
//
// Prepared and rollback transaction records get queue offset 0 and no
// consume-queue unit, as in Java.
func (s *Store) Put(m *message.Message, done func(PutResult)) {
	if r, ok := s.checkPut(m); !ok {
		done(r)
		return
	}
	crc := message.BodyCRC(m.Body)
	size := m.RecordSize()
	if int64(size)+message.BlankLen > s.cfg.MappedFileSizeCommitLog {
		done(PutResult{Status: MessageIllegal, Err: fmt.Errorf("store: record of %d bytes does not fit a segment", size)})
		return
	}
	tt := message.TransactionValue(m.SysFlag)
	counted := tt != message.TransactionPreparedType && tt != message.TransactionRollbackType

	begun := time.Now() // Java times the commit log's put from here (lock wait included)
	s.mu.Lock()
	if err := s.Writable(); err != nil {
		s.mu.Unlock()
		done(PutResult{Status: ServiceNotAvailable, Err: err})
		return
	}
	now := s.cfg.Now().UnixMilli()
	m.StoreTimestamp = now
	var qo int64
	var next *int64
	if counted {
		next = s.queueOffset(tqKey{m.Topic, m.QueueID})
		qo = *next
	}
	buf, phy, err := s.reserve(size)
	if err != nil {
		s.mu.Unlock()
		done(PutResult{Status: ServiceNotAvailable, Err: err})
		return
	}
	message.PutRecord(buf, m, crc, qo, phy)
	if counted {
		*next = qo + 1
	}
	s.lastTS = now
	s.written.Store(phy + int64(size))
	s.puts.Add(1)
	s.mu.Unlock()

	s.finish(PutResult{Status: PutOK, WroteOffset: phy, WroteBytes: int32(size), QueueOffset: qo,
		MsgCount: 1, StoreTimestamp: now}, begun, done)
}

// PutBatch appends ms, which must share topic and queue, as contiguous
// records with consecutive queue offsets; done gets one result (first
// offsets, MsgCount). m.StoreTimestamp is set on each.
func (s *Store) PutBatch(ms []message.Message, done func(PutResult)) {
	if len(ms) == 0 {
		done(PutResult{Status: MessageIllegal, Err: errors.New("store: empty batch")})
		return
	}
	total := 0
	for i := range ms {
		m := &ms[i]
		if r, ok := s.checkPut(m); !ok {
			done(r)
			return
		}
		if m.Topic != ms[0].Topic || m.QueueID != ms[0].QueueID {
			done(PutResult{Status: MessageIllegal, Err: errors.New("store: batch mixes queues")})
			return
		}
		if tt := message.TransactionValue(m.SysFlag); tt == message.TransactionPreparedType || tt == message.TransactionRollbackType {
			done(PutResult{Status: MessageIllegal, Err: errors.New("store: batch of transaction messages")})
			return
		}
		total += m.RecordSize()
	}
	if int64(total)+message.BlankLen > s.cfg.MappedFileSizeCommitLog {
		done(PutResult{Status: MessageIllegal, Err: fmt.Errorf("store: batch of %d bytes does not fit a segment", total)})
		return
	}
	// Body CRCs outside the lock (no allocation for batches up to 64).
	var crcBuf [64]int32
	crcs := crcBuf[:0]
	if len(ms) > len(crcBuf) {
		crcs = make([]int32, 0, len(ms))
	}
	for i := range ms {
		crcs = append(crcs, message.BodyCRC(ms[i].Body))
	}
	begun := time.Now()
	s.mu.Lock()
	if err := s.Writable(); err != nil {
		s.mu.Unlock()
		done(PutResult{Status: ServiceNotAvailable, Err: err})
		return
	}
	now := s.cfg.Now().UnixMilli()
	next := s.queueOffset(tqKey{ms[0].Topic, ms[0].QueueID})
	qo := *next
	buf, phy, err := s.reserve(total)
	if err != nil {
		s.mu.Unlock()
		done(PutResult{Status: ServiceNotAvailable, Err: err})
		return
	}
	p := 0
	for i := range ms {
		m := &ms[i]
		m.StoreTimestamp = now
		p += message.PutRecord(buf[p:], m, crcs[i], qo+int64(i), phy+int64(p))
	}
	*next = qo + int64(len(ms))
	s.lastTS = now
	s.written.Store(phy + int64(total))
	s.puts.Add(1)
	s.mu.Unlock()

	s.finish(PutResult{Status: PutOK, WroteOffset: phy, WroteBytes: int32(total), QueueOffset: qo,
		MsgCount: int32(len(ms)), StoreTimestamp: now}, begun, done)
}

func (s *Store) checkPut(m *message.Message) (PutResult, bool) {
	if err := s.Writable(); err != nil {
		return PutResult{Status: ServiceNotAvailable, Err: err}, false
	}
	if len(m.Properties) > message.MaxPropertiesLen {
		return PutResult{Status: PropertiesSizeExceeded, Err: fmt.Errorf("store: properties of %d bytes", len(m.Properties))}, false
	}
	if len(m.Body) > s.cfg.MaxMessageSize {
		return PutResult{Status: MessageIllegal, Err: fmt.Errorf("store: body of %d bytes exceeds %d", len(m.Body), s.cfg.MaxMessageSize)}, false
	}
	if err := m.Validate(); err != nil {
		return PutResult{Status: MessageIllegal, Err: err}, false
	}
	return PutResult{}, true
}

// queueOffset returns the next offset of k, to be advanced in place. The
// key is cloned on first use and never assigned again (an assignment to a
// map entry rewrites its key, and m.Topic may alias a pooled network
// buffer). mu held.
func (s *Store) queueOffset(k tqKey) *int64 {
	next := s.queueOffsets[k]
	if next == nil {
		k.topic = cloneString(k.topic)
		next = new(int64)
		s.queueOffsets[k] = next
	}
	return next
}

// reserve returns the mapped bytes for the next size-byte write and its
// commit-log offset, rolling to a new segment (after an end-of-segment
// blank marker) when the record plus a marker does not fit. mu held.
func (s *Store) reserve(size int) ([]byte, int64, error) {
	w := s.written.Load()
	pos := w - s.cur.start
	if !s.cur.allocated.Load() {
		// Opened sparse on a full disk (recovery): allocate before writing.
		if err := s.cur.ensureAllocated(); err != nil {
			s.noSpace(err)
			return nil, 0, s.refusal(fmt.Errorf("%w: %w", ErrDiskFull, err))
		}
	}
	if pos+int64(size)+message.BlankLen > s.cur.size {
		next, err := s.cl.appendSegment(s.cur.end())
		if err != nil {
			if isNoSpace(err) {
				s.noSpace(err) // clears by itself once space is freed
				err = fmt.Errorf("%w: %w", ErrDiskFull, err)
			} else {
				s.setReadOnly(err)
			}
			return nil, 0, s.refusal(err)
		}
		if s.staging {
			message.PutBlank(s.stage.reserve(message.BlankLen), int32(s.cur.size-pos))
			if err := s.writeStageLocked(next.start); err != nil {
				s.setReadOnly(err)
				return nil, 0, s.refusal(err)
			}
		} else {
			message.PutBlank(s.cur.data[pos:], int32(s.cur.size-pos))
		}
		s.cur = next
		w = next.start
		s.written.Store(w)
		pos = 0
	}
	if w+int64(size) > s.faultMark.Load() {
		s.wakeResident() // keep the window ahead paged in (resident.go)
	}
	if s.staging {
		return s.stage.reserve(size), w, nil
	}
	return s.cur.data[pos : pos+int64(size)], w, nil
}

// refusal is why a failed reservation refuses the put: the store's state
// (Writable), or cause when the cleaner already cleared that state again
// (a concurrent check found room) — never nil.
func (s *Store) refusal(cause error) error {
	if err := s.Writable(); err != nil {
		return err
	}
	return cause
}

// writeStageLocked writes the staged tail of the current segment before
// the writer moves to the segment starting at next. mu held.
func (s *Store) writeStageLocked(next int64) error {
	b, at := s.stage.take(next)
	err := writeStaged(s.cur, b, at)
	s.stage.giveBack(b)
	return err
}

// finish hands the result to done now (the policy waits for nothing) or
// queues the put on the progress offsets it waits for (flush.go), and ends
// the append's s.puts count.
// begun is when the put was called (its latency, latency.go).
func (s *Store) finish(r PutResult, begun time.Time, done func(PutResult)) {
	s.putTimes.Add(int64(r.MsgCount))
	s.putBytes.Add(int64(r.WroteBytes))
	s.notifyRaw()
	now := time.Now()
	r.Appended = now.UnixNano()
	needs := s.policy()
	if needs == 0 {
		s.puts.Done()
		s.wakeDispatcher()
		s.latency.observePut(msBetween(begun, now))
		done(r)
		return
	}
	w := waiter{target: r.WroteOffset + int64(r.WroteBytes), at: now, begun: begun, needs: needs, res: r, done: done}
	s.proceed(&w)
	s.puts.Done()
	if needs&needFlushed == 0 {
		s.wakeDispatcher()
	}
}

func cloneString(s string) string { return string([]byte(s)) }
