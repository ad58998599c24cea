package store

import (
	"fmt"
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
