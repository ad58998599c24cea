package store

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store/index"
)

// recover brings the store to a consistent state before it serves:
//
//  1. scan the commit log from a safe point (the last three segments after a
//     clean shutdown; from the checkpoint's flushed/dispatched position, or
//     the start when there is no checkpoint, after a crash), validating
//     magic, sizes, physical offset and body CRC; the first structurally
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
	ck, err := openCheckpoint(filepath.Join(s.cfg.RootDir, "checkpoint"))
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
			MaxIndexNum: s.cfg.MaxIndexNum, Logger: s.log, Now: s.cfg.Now,
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
	)
	if len(segs) == 0 {
		if _, err := s.cl.appendSegment(0); err != nil {
			return err
		}
	} else {
		from := max(len(segs)-3, 0)
		if abnormal {
			if !ck.valid {
				from = 0
			} else {
				p := min(ck.flushed, ck.dispatched)
				if ck.dispatched < 0 {
					p = ck.flushed
				}
				for from > 0 && segs[from].start > p {
					from--
				}
			}
		}
		scanFrom = segs[from].start
		end, lastTS, corrupt = s.scan(segs[from:])
		s.log.Info("store: recovered commit log", "abnormal", abnormal, "fromSegment", segs[from].start,
			"end", end, "corruptRecords", len(corrupt))
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
			if sg.end() > segs[from].start {
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
	s.flushed.Store(end)
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
	d = min(d, end, max(scanFrom, minPhy))
	if s.idx != nil {
		if from, ok := s.idx.DropFrom(end); ok {
			s.log.Info("store: index entries past the commit-log end dropped", "reindexFrom", from)
			d = min(d, max(from, minPhy))
		}
	}
	for _, c := range corrupt {
		d = min(d, c)
	}
	s.dispatched.Store(d)
	s.quarantine = corrupt
	if ck.valid {
		s.repairBelow = ck.dispatched
	}
	s.dispatchUpTo(end)
	s.quarantine, s.repairBelow = nil, -1
	s.dispatchTS.Store(lastTS)

	s.cqMu.RLock()
	for k, q := range s.cqs {
		next := q.maxOffset.Load()
		s.queueOffsets[k] = &next
	}
	s.cqMu.RUnlock()
	if err := s.flushLogics(); err != nil {
		return err
	}
	return s.writeCheckpoint()
}

// scan validates records from the first of segs and returns the end of
// valid data, the store time of the last record and the offsets of
// records whose body CRC is wrong.
func (s *Store) scan(segs []*segment) (end, lastTS int64, corrupt []int64) {
	var e message.Ext
	end = segs[0].start
	for i, seg := range segs {
		pos := int64(0)
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
			if s.cfg.CheckCRCOnRecover && e.CheckCRC() != nil {
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
