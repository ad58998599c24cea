package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store/index"
)

// recover brings the store to a consistent state before it serves:
//
//  1. scan the commit log from a safe point (scanStart: the segment holding
//     the checkpoint), validating magic, sizes and physical offset, and the
//     body CRC of what follows the checkpoint; the first structurally
//     invalid record ends the log (a torn tail), and the rest is wiped;
//  2. load consume queues, dropping units that point past the end;
//  3. re-dispatch (idempotently) from the checkpoint's dispatched position
//     or the start of the scanned range, whichever is earlier, so consume
//     queues and index cover every record even if their files lost data;
//     records whose body CRC fails are never exposed (their unit becomes a
//     blank unit).
func (s *Store) recover() error {
	_, err := os.Stat(s.abortPath())
	abnormal := err == nil
	ck, err := openCheckpoint(filepath.Join(s.cfg.RootDir, "checkpoint"), s.cfg.BackgroundIO)
	if err != nil {
		return err
	}
	s.ckpt = ck
	if err := s.cl.load(); err != nil {
		return err
	}
	if s.cfg.MessageIndexEnable {
		s.idx, err = index.Open(index.Config{
			Dir: filepath.Join(s.cfg.RootDir, "index"), MaxHashSlotNum: s.cfg.MaxHashSlotNum,
			MaxIndexNum: s.cfg.MaxIndexNum, Logger: s.log, Now: s.cfg.Now, Lane: s.cfg.BackgroundIO,
		})
		if err != nil {
			return err
		}
	}
	segs := s.cl.list()
	var (
		end, lastTS int64
		corrupt     []int64
		scanFrom    int64 // re-dispatch at least the scanned range
		crcFrom     int64
		scanTook    time.Duration
	)
	if len(segs) == 0 {
		if _, err := s.cl.appendSegment(0); err != nil {
			return err
		}
	} else {
		scanFrom, crcFrom = s.scanStart(segs, abnormal, ck)
		t0 := time.Now()
		end, lastTS, corrupt = s.scan(segs, scanFrom, crcFrom)
		scanTook = time.Since(t0)
		if cut := ck.truncating(); cut >= 0 && cut < end {
			// A TruncateTo was cut short by a crash: finish it.
			s.log.Warn("store: finishing an interrupted truncation", "offset", cut, "end", end)
			end = cut
			n := 0
			for _, c := range corrupt {
				if c < cut {
					corrupt[n] = c
					n++
				}
			}
			corrupt = corrupt[:n]
		}
		s.cl.truncateAfter(end)
		if s.cl.find(end) == nil {
			if _, err := s.cl.appendSegment(end); err != nil {
				return err
			}
		}
		seg := s.cl.find(end)
		if err := seg.zeroFrom(end - seg.start); err != nil {
			return err
		}
		// Make everything we are about to expose durable.
		for _, sg := range s.cl.list() {
			if sg.end() > scanFrom {
				if err := sg.sync(); err != nil {
					return err
				}
			}
		}
	}
	s.cur = s.cl.find(end)
	if s.cur == nil {
		return fmt.Errorf("store: invariant violated: no segment at end %d", end)
	}
	if end == 0 {
		end = s.cur.start
	}
	s.written.Store(end)
	s.received = end
	s.stage.at = end
	s.mapped.Store(end)
	s.flushed.Store(end)
	s.replicated.Store(end)
	s.lastTS = lastTS
	s.flushedTS.Store(lastTS)
	if err := s.loadConsumeQueues(end); err != nil {
		return err
	}

	minPhy := s.cl.minOffset()
	// Units of records removed by retention are below every queue's min.
	for _, q := range s.cqs {
		q.deleteBelow(minPhy)
	}
	d := ck.dispatched
	if !ck.valid || d < minPhy {
		d = minPhy
	}
	// After a crash, re-dispatch the whole scanned range: records below the
	// checkpoint that their queue and the index already cover are only
	// decoded and skipped (covered). After a clean shutdown the queues and
	// the index were flushed up to the checkpoint.
	from := scanFrom
	if !abnormal {
		from = crcFrom
	}
	d = min(d, end, max(from, minPhy))
	s.indexedTo = -1
	if s.idx != nil {
		if from, ok := s.idx.DropFrom(end); ok {
			s.log.Info("store: index entries past the commit-log end dropped", "reindexFrom", from)
			d = min(d, max(from, minPhy))
		}
		s.indexedTo = s.idx.MaxPhyOffset()
	}
	for _, c := range corrupt {
		d = min(d, c)
	}
	s.dispatched.Store(d)
	s.quarantine = corrupt
	if ck.valid {
		s.repairBelow = ck.dispatched
	}
	t0 := time.Now()
	s.dispatchUpTo(end)
	s.recovery = recoveryStats{abnormal: abnormal, scanFrom: scanFrom, crcFrom: crcFrom, end: end, redispatchFrom: d,
		scan: scanTook, redispatch: time.Since(t0)}
	s.log.Info("store: recovered commit log", "abnormal", abnormal, "scanFrom", scanFrom, "crcFrom", crcFrom, "end", end,
		"corruptRecords", len(corrupt), "scan", scanTook, "redispatchFrom", d, "redispatch", s.recovery.redispatch)
	s.quarantine, s.repairBelow = nil, -1
	s.putTimes.Store(0) // the stats count from the start: not what recovery re-dispatched
	s.putBytes.Store(0)
	s.dispatchTS.Store(lastTS)
	ck.endTruncate()

	s.cqMu.RLock()
	for k, q := range s.cqs {
		next := q.maxOffset.Load()
		s.queueOffsets[k] = &next
	}
	s.cqMu.RUnlock()
	// A re-dispatch that stopped early (no room for a consume-queue file)
	// left records whose units are not in their queues yet: the next queue
	// offsets must lie past theirs, or new puts would reuse them.
	s.raiseQueueOffsets(s.dispatched.Load(), end)
	if err := s.flushLogics(); err != nil {
		return err
	}
	return s.writeCheckpoint()
}

// recoveryStats says what recovery read: the commit log from scanFrom (body
// CRCs from crcFrom) to end, re-dispatched from redispatchFrom.
type recoveryStats struct {
	abnormal                               bool
	scanFrom, crcFrom, end, redispatchFrom int64
	scan, redispatch                       time.Duration
}

// scanStart picks where recovery starts reading the commit log (a segment
// start) and from where it also checks body CRCs. With a checkpoint of ours
// it reads the segment holding the checkpoint and checksums only what
// follows the checkpoint: everything below was flushed before the
// checkpoint was written, so a crash cannot have torn it (its structure is
// still validated, which finds a log that ends earlier than the checkpoint
// claims). Otherwise, as Java, it reads and checksums the last three
// segments after a clean shutdown, from the segment holding the checkpoint
// after a crash, or everything without a checkpoint.
func (s *Store) scanStart(segs []*segment, abnormal bool, ck *checkpoint) (from, crcFrom int64) {
	if ck.valid && ck.dispatched >= 0 {
		p := min(ck.flushed, ck.dispatched)
		i := len(segs) - 1
		for i > 0 && segs[i].start > p {
			i--
		}
		return segs[i].start, max(p, segs[i].start)
	}
	i := max(len(segs)-3, 0)
	if abnormal {
		if !ck.valid {
			i = 0
		} else {
			p := min(ck.flushed, ck.dispatched)
			if ck.dispatched < 0 {
				p = ck.flushed
			}
			for i > 0 && segs[i].start > p {
				i--
			}
		}
	}
	return segs[i].start, segs[i].start
}

// scan validates records from offset start (a segment start) to the end
// of the log, body CRCs from crcFrom on, and returns the end of valid data,
// the store time of the last record and the offsets of records whose body
// CRC is wrong.
func (s *Store) scan(segs []*segment, start, crcFrom int64) (end, lastTS int64, corrupt []int64) {
	var e message.Ext
	end = start
	first := 0
	for first < len(segs)-1 && segs[first].end() <= start {
		first++
	}
	for i := first; i < len(segs); i++ {
		seg := segs[i]
		pos := max(start-seg.start, 0)
		for {
			if pos+message.BlankLen > seg.size {
				return seg.start + pos, lastTS, corrupt
			}
			err := message.Decode(seg.data[pos:], &e)
			if err == message.ErrBlank {
				if int64(e.TotalSize) != seg.size-pos || i == len(segs)-1 {
					// A blank marker always closes a segment that has a
					// successor; anything else is a torn write.
					return seg.start + pos, lastTS, corrupt
				}
				end = seg.end()
				break
			}
			if err != nil || e.PhysicalOffset != seg.start+pos || e.TotalSize <= 0 {
				return seg.start + pos, lastTS, corrupt
			}
			if s.cfg.CheckCRCOnRecover && seg.start+pos >= crcFrom && e.CheckCRC() != nil {
				corrupt = append(corrupt, seg.start+pos)
			}
			lastTS = e.StoreTimestamp
			pos += int64(e.TotalSize)
			end = seg.start + pos
		}
	}
	return end, lastTS, corrupt
}

func (s *Store) loadConsumeQueues(clEnd int64) error {
	root := s.cqRoot()
	topics, err := os.ReadDir(root)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("store: list consume queues: %w", err)
	}
	for _, t := range topics {
		if !t.IsDir() {
			continue
		}
		qdirs, err := os.ReadDir(filepath.Join(root, t.Name()))
		if err != nil {
			return fmt.Errorf("store: list consume queues of %s: %w", t.Name(), err)
		}
		for _, qd := range qdirs {
			qid, err := strconv.ParseInt(qd.Name(), 10, 32)
			if err != nil || !qd.IsDir() {
				continue
			}
			q := newConsumeQueue(root, t.Name(), int32(qid), s.cfg.MappedFileSizeConsumeQueue)
			if err := q.load(clEnd); err != nil {
				return err
			}
			s.cqs[tqKey{t.Name(), int32(qid)}] = q
		}
	}
	return nil
}

// isQuarantined reports whether phy is a record with a bad CRC found by
// recovery.
func (s *Store) isQuarantined(phy int64) bool {
	for _, c := range s.quarantine {
		if c == phy {
			return true
		}
	}
	return false
}

// raiseQueueOffsets moves each queue's next offset past the records in
// [from, end) that take a queue offset (recovery, when the dispatcher could
// not reach end). mu is not needed: the store is not open for puts yet.
func (s *Store) raiseQueueOffsets(from, end int64) {
	var e message.Ext
	for d := from; d < end; {
		seg := s.cl.find(d)
		if seg == nil {
			return
		}
		pos := d - seg.start
		if pos+message.BlankLen > seg.size {
			d = seg.end()
			continue
		}
		err := message.Decode(seg.data[pos:], &e)
		if err == message.ErrBlank {
			d = seg.end()
			continue
		}
		if err != nil {
			s.log.Error("store: recovery: undecodable record below the end", "offset", d, "err", err)
			return
		}
		if tt := message.TransactionValue(e.SysFlag); tt != message.TransactionPreparedType && tt != message.TransactionRollbackType {
			next := s.queueOffset(tqKey{e.Topic, e.QueueID})
			*next = max(*next, e.QueueOffset+1)
		}
		d += int64(e.TotalSize)
	}
	if from < end {
		s.log.Warn("store: recovered with records not yet in their consume queues (no room); queue offsets continue past them",
			"dispatched", from, "end", end)
	}
}
