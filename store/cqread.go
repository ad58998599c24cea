package store

// CQUnit is one consume-queue entry as stored (for admin views; the pull
// path reads units in place).
type CQUnit struct {
	QueueOffset int64
	PhyOffset   int64
	Size        int32
	TagsCode    int64
}

// ConsumeQueueUnits appends to dst up to max units of topic/qid starting
// at logical offset from, which must lie in [MinOffset, MaxOffset). ok is
// false when the queue does not exist; an offset outside the queue gives
// no units.
func (s *Store) ConsumeQueueUnits(topic string, qid int32, from int64, max int, dst []CQUnit) (units []CQUnit, ok bool) {
	q := s.findCQ(topic, qid)
	if q == nil {
		return dst, false
	}
	q.mu.RLock()
	defer q.mu.RUnlock()
	end := q.maxOffset.Load()
	if from < q.minOffset.Load() {
		return dst, true
	}
	for n := from; n < end && max > 0; n++ {
		u := q.unitAt(n)
		if u == nil {
			break
		}
		phy, size, tags := readUnit(u)
		dst = append(dst, CQUnit{QueueOffset: n, PhyOffset: phy, Size: size, TagsCode: tags})
		max--
	}
	return dst, true
}
