package store

import (
	"errors"
	"fmt"
	"math"

	"github.com/rocketgo/rocketgo/codec/message"
)

// Check proves the commit log, consume queues and index agree: every
// record up to the dispatched offset decodes at its own offset; every
// consume-queue unit points at a record of its topic, queue and offset whose
// body CRC is right; every dispatched, CRC-valid, non-transactional record
// has its unit; and the index finds every record with keys. Records with a
// bad CRC may exist only if no unit points at them. Expensive: for tests
// and tools, on a quiet store.
func (s *Store) Check() error {
	d := s.dispatched.Load()
	var e message.Ext
	var errs []error
	fail := func(format string, a ...any) {
		if len(errs) < 20 {
			errs = append(errs, fmt.Errorf(format, a...))
		}
	}
	type unitRef struct {
		topic string
		qid   int32
		qo    int64
	}
	records := make(map[int64]unitRef)
	bad := make(map[int64]bool)
	off := s.cl.minOffset()
	for off < d {
		v, seg, err := s.cl.view(off, message.BlankLen)
		if err != nil {
			fail("check: commit log at %d: %w", off, err)
			break
		}
		seg.release()
		pos := off - seg.start
		err = message.Decode(seg.data[pos:], &e)
		_ = v
		if err == message.ErrBlank {
			off = seg.end()
			continue
		}
		if err != nil || e.PhysicalOffset != off {
			fail("check: commit log record at %d: %v (phy %d)", off, err, e.PhysicalOffset)
			break
		}
		tt := message.TransactionValue(e.SysFlag)
		if e.CheckCRC() != nil {
			bad[off] = true
		} else if tt != message.TransactionPreparedType && tt != message.TransactionRollbackType {
			records[off] = unitRef{e.Topic, e.QueueID, e.QueueOffset}
		}
		if s.idx != nil && !bad[off] && tt != message.TransactionRollbackType {
			keys, _ := message.Property(e.Properties, message.PropertyKeys)
			uniq, _ := message.Property(e.Properties, message.PropertyUniqKey)
			for _, k := range append(splitKeys(keys), uniq) {
				if k == "" {
					continue
				}
				found := false
				for _, p := range s.idx.Query(e.Topic, k, math.MaxInt32, e.StoreTimestamp-1000, e.StoreTimestamp) {
					if p == off {
						found = true
						break
					}
				}
				if !found {
					fail("check: index misses key %q of record %d", k, off)
				}
			}
		}
		off += int64(e.TotalSize)
	}
	if off != d && len(errs) == 0 {
		fail("check: records end at %d, dispatched %d", off, d)
	}
	qs := s.queues()
	seen := make(map[int64]bool, len(records))
	minPhy := s.cl.minOffset()
	for _, q := range qs {
		q.mu.RLock()
		for n := q.minOffset.Load(); n < q.maxOffset.Load(); n++ {
			phy, size, tags := readUnit(q.unitAt(n))
			if size == math.MaxInt32 {
				continue
			}
			if phy < minPhy || phy >= d {
				continue // removed, or dispatched after d was read
			}
			if bad[phy] {
				fail("check: %s/%d unit %d points at corrupt record %d", q.topic, q.queueID, n, phy)
				continue
			}
			r, ok := records[phy]
			if !ok {
				fail("check: %s/%d unit %d points at %d, not a record start", q.topic, q.queueID, n, phy)
				continue
			}
			if r.topic != q.topic || r.qid != q.queueID || r.qo != n {
				fail("check: %s/%d unit %d points at record of %s/%d offset %d", q.topic, q.queueID, n, r.topic, r.qid, r.qo)
			}
			v, seg, err := s.cl.view(phy, int(size))
			if err != nil {
				fail("check: %s/%d unit %d: %w", q.topic, q.queueID, n, err)
				continue
			}
			if message.Decode(v, &e) != nil || int(e.TotalSize) != len(v) {
				fail("check: %s/%d unit %d: size %d does not match record", q.topic, q.queueID, n, size)
			} else if want := s.tagsCode(&e); want != tags {
				fail("check: %s/%d unit %d: tags code %d, want %d", q.topic, q.queueID, n, tags, want)
			}
			seg.release()
			seen[phy] = true
		}
		q.mu.RUnlock()
	}
	for phy, r := range records {
		if !seen[phy] {
			if q := s.findCQ(r.topic, r.qid); q != nil && r.qo < q.minOffset.Load() {
				continue
			}
			fail("check: record %d (%s/%d offset %d) has no consume-queue unit", phy, r.topic, r.qid, r.qo)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%w: %w", ErrCorrupt, errors.Join(errs...))
	}
	return nil
}

func splitKeys(keys string) []string {
	var out []string
	for keys != "" {
		k := keys
		if i := indexByte(keys, ' '); i >= 0 {
			k, keys = keys[:i], keys[i+1:]
		} else {
			keys = ""
		}
		out = append(out, k)
	}
	return out
}

func indexByte(s string, c byte) int {
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			return i
		}
	}
	return -1
}
