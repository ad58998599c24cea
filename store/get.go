package store

import (
	"fmt"
	"math"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
)

// maxScanUnits bounds the units one GetMessages call looks at when a
// filter rejects them (Java: maxFilterMessageSize 16000 bytes = 800 units).
const maxScanUnits = 800

// GetMessages reads up to maxMsgs records (and about maxBytes; at least one
// record when any matches) of topic/queueID from offset into res, which is
// reset first. Records are views into the mapped commit log, valid until
// res.Release. Offsets past the end and before the start are reported with
// Java's statuses and NextBeginOffset corrections.
func (s *Store) GetMessages(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter *Filter, res *GetResult) {
	begun := time.Now()
	s.getMessages(topic, queueID, offset, maxMsgs, maxBytes, filter, res)
	// Java's getMessageEntireTimeMax: every read, found or not.
	storeMax(&s.latency.getMax, sinceMs(begun))
}

func (s *Store) getMessages(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter *Filter, res *GetResult) {
	res.reset()
	q := s.findCQ(topic, queueID)
	if q == nil {
		res.Status = NoMatchedLogicQueue
		return
	}
	q.mu.RLock()
	if !s.collect(q, offset, maxMsgs, maxBytes, filter, res) {
		q.mu.RUnlock()
		return
	}
	q.mu.RUnlock()
	// Verify outside the queue lock (the dispatcher's appends wait for
	// it): the segments are held by res, so the views stay valid.
	n := 0
	for i, v := range res.Records {
		qo := res.QueueOffsets[i]
		if err := s.verifyRead(v, res.phys[i]); err != nil {
			// Never served. Dropped like a record a filter rejects
			// (NO_MATCHED_MESSAGE when nothing else is left: the pull
			// answers PULL_RETRY_IMMEDIATELY with NextBeginOffset past
			// it), so neither a consumer nor the delay/transaction
			// scanners stall on it; the ERROR log says what was lost.
			res.TotalBytes -= len(v)
			s.logCorrupt(q.topic, q.queueID, qo, res.phys[i], err)
			continue
		}
		res.Records[n], res.QueueOffsets[n], res.phys[n] = v, qo, res.phys[i]
		n++
	}
	if n < len(res.Records) {
		clear(res.Records[n:])
		res.Records, res.QueueOffsets, res.phys = res.Records[:n], res.QueueOffsets[:n], res.phys[:n]
		if n == 0 {
			res.Status = NoMatchedMessage
		}
	}
}

// collect fills res from the queue (q.mu held); false when the offset is
// outside the queue (res has the status and correction).
func (s *Store) collect(q *consumeQueue, offset int64, maxMsgs, maxBytes int, filter *Filter, res *GetResult) bool {
	minO, maxO := q.minOffset.Load(), q.maxOffset.Load()
	res.MinOffset, res.MaxOffset = minO, maxO
	switch {
	case maxO == 0:
		res.Status = NoMessageInQueue
		return false
	case offset < minO:
		res.Status, res.NextBeginOffset = OffsetTooSmall, minO
		return false
	case offset == maxO:
		res.Status, res.NextBeginOffset = OffsetOverflowOne, offset
		return false
	case offset > maxO:
		res.Status, res.NextBeginOffset = OffsetOverflowBadly, maxO
		return false
	}
	if maxMsgs <= 0 {
		maxMsgs = 1
	}
	minPhy := s.cl.minOffset()
	status := NoMatchedMessage
	limit := min(maxO, offset+int64(max(maxScanUnits, maxMsgs)))
	n := offset
	var last *segment
	for ; n < limit && len(res.Records) < maxMsgs; n++ {
		u := q.unitAt(n)
		if u == nil {
			status = OffsetFoundNull
			continue
		}
		phy, size, tags := readUnit(u)
		if size == math.MaxInt32 || size <= 0 {
			continue
		}
		if phy < minPhy {
			status = MessageWasRemoving
			continue
		}
		if len(res.Records) > 0 && res.TotalBytes+int(size) > maxBytes {
			break
		}
		if filter != nil && filter.CQ != nil && !filter.CQ(tags) {
			continue
		}
		v, seg, err := s.cl.view(phy, int(size))
		if err != nil {
			status = OffsetFoundNull
			continue
		}
		if filter != nil && filter.Record != nil && !filter.Record(v) {
			seg.release()
			continue
		}
		if seg != last {
			res.hold(seg)
			last = seg
		}
		seg.release()
		res.Records = append(res.Records, v)
		res.QueueOffsets = append(res.QueueOffsets, n)
		res.phys = append(res.phys, phy)
		res.TotalBytes += int(size)
	}
	if len(res.Records) > 0 {
		status = Found
	}
	res.Status, res.NextBeginOffset = status, n
	return true
}

// storeTimeAt reads the store time of the record behind unit n (q.mu held).
func (s *Store) storeTimeAt(q *consumeQueue, n int64) (int64, error) {
	u := q.unitAt(n)
	if u == nil {
		return 0, fmt.Errorf("store: %s/%d offset %d: %w", q.topic, q.queueID, n, ErrOffsetNotFound)
	}
	phy, size, _ := readUnit(u)
	if size == math.MaxInt32 || size <= 0 {
		return 0, fmt.Errorf("store: %s/%d offset %d is blank: %w", q.topic, q.queueID, n, ErrOffsetNotFound)
	}
	v, seg, err := s.cl.view(phy, int(size))
	if err != nil {
		return 0, err
	}
	defer seg.release()
	return message.StoreTimestampOf(v)
}

// StoreTime is the store timestamp of the message at queue offset.
func (s *Store) StoreTime(topic string, qid int32, offset int64) (int64, error) {
	q := s.findCQ(topic, qid)
	if q == nil {
		return 0, fmt.Errorf("store: %s/%d: %w", topic, qid, ErrOffsetNotFound)
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	if offset < q.minOffset.Load() || offset >= q.maxOffset.Load() {
		return 0, fmt.Errorf("store: %s/%d offset %d: %w", topic, qid, offset, ErrOffsetNotFound)
	}
	return s.storeTimeAt(q, offset)
}

// EarliestMessageTime is the store time of the first readable message.
func (s *Store) EarliestMessageTime(topic string, qid int32) (int64, error) {
	return s.StoreTime(topic, qid, s.MinOffset(topic, qid))
}

// OffsetByTime returns the first queue offset whose store time is >= ts
// (Java BoundaryType.LOWER): the max offset if every message is older,
// the min offset if every message is newer.
func (s *Store) OffsetByTime(topic string, qid int32, ts int64) int64 {
	q := s.findCQ(topic, qid)
	if q == nil {
		return 0
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	lo, hi := q.minOffset.Load(), q.maxOffset.Load()
	minPhy := s.cl.minOffset()
	// Skip units whose records are gone.
	for lo < hi {
		phy, size, _ := readUnit(q.unitAt(lo))
		if size != math.MaxInt32 && phy >= minPhy {
			break
		}
		lo++
	}
	for lo < hi {
		mid := lo + (hi-lo)/2
		t, err := s.storeTimeAt(q, mid)
		if err != nil {
			// Blank unit: look at its neighbour to the right.
			t2, j := int64(0), mid+1
			for ; j < hi; j++ {
				if t2, err = s.storeTimeAt(q, j); err == nil {
					break
				}
			}
			if j == hi {
				hi = mid
				continue
			}
			t, mid = t2, j
		}
		if t < ts {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// verifyRecord checks that v is a well-formed record stored at phy whose
// body matches its CRC. Every path that hands stored bytes to a client
// calls it: a CRC-32 of the body (hardware-assisted, about 0.1 µs for
// 1 KiB; BenchmarkGetMessages) is cheaper than serving a flipped bit.
func verifyRecord(v []byte, phy int64) error {
	var e message.Ext
	if err := message.Decode(v, &e); err != nil {
		return err
	}
	if int(e.TotalSize) != len(v) || e.PhysicalOffset != phy {
		return ErrCorrupt
	}
	return e.CheckCRC()
}

func (s *Store) verifyRead(v []byte, phy int64) error {
	if s.noVerify {
		return nil
	}
	return verifyRecord(v, phy)
}

// logCorrupt reports a record that failed verifyRecord. Off the hot path.
func (s *Store) logCorrupt(topic string, qid int32, queueOffset, phy int64, err error) {
	s.corruptSeen.Add(1)
	s.log.Error("store: corrupt record not served (bad body crc or framing); consumers skip it",
		"topic", topic, "queueId", qid, "queueOffset", queueOffset, "commitLogOffset", phy, "err", err)
}

// CorruptRecordsSeen counts reads that met a corrupt record since Open.
func (s *Store) CorruptRecordsSeen() int64 { return s.corruptSeen.Load() }

// EarliestStoreTime is the store time of the first record of the commit
// log (Java's getEarliestMessageTime), or -1 when the log is empty or the
// record cannot be read.
func (s *Store) EarliestStoreTime() int64 {
	minPhy, maxPhy := s.cl.minOffset(), s.MaxPhyOffset()
	if maxPhy <= minPhy {
		return -1
	}
	v, seg, err := s.cl.view(minPhy, int(min(80, maxPhy-minPhy)))
	if err != nil {
		return -1
	}
	defer seg.release()
	ts, err := message.StoreTimestampOf(v)
	if err != nil {
		return -1
	}
	return ts
}
