package store

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// Residency of the commit-log mappings. Every segment stays mapped, but
// only two windows are kept paged in by us:
//
//	        released            kept             written  prefaulted
//	[ ..... (page cache) ....|<- keepBehind ->|.........|<- ahead ->| .... ]
//	                      limit = min(flushed, dispatched) - keepBehind
//
// Ahead of the write position a background goroutine pages in
// prefaultAhead bytes (the writer asks when it crosses the middle of the
// window), so appends do not take page-allocation faults. Behind, ranges
// that are flushed (clean) and dispatched are unmapped from our page tables
// with MADV_DONTNEED once a second; on a MAP_SHARED file mapping that drops
// only our mapping, the pages stay in the page cache (Linux moves the dirty
// bit of a page to the page cache, so even unflushed data would survive;
// waiting for the flush is caution), and a reader that touches them again
// just maps them back (a minor fault). Resident memory so follows what is
// being written and read, not the size of the store.
const (
	prefaultAhead    = 8 << 20
	prefaultChunk    = 256 << 10 // bytes per madvise call (see prefaultVia)
	keepBehind       = 16 << 20
	releaseInterval  = time.Second
	sweepEvery       = 10 // release ticks between sweeps of everything older
	residentPageSize = 4096
)

// prefault pages in [from, to) of the segment without dirtying it: the
// pages are read-mapped (zero pages of the fallocated file come from the
// page cache), so a later write costs a cheap write-protect fault at most,
// and nothing extra goes to disk. Best effort.
func (s *segment) prefault(from, to int64) {
	from &^= residentPageSize - 1
	if from >= to || to > s.size {
		return
	}
	b := s.data[from:to]
	err := unix.Madvise(b, unix.MADV_POPULATE_READ)
	if errors.Is(err, unix.EINVAL) {
		// Kernels before 5.14: at least start the reads into the page cache.
		unix.Madvise(b, unix.MADV_WILLNEED)
	}
}

// prefaultVia pages in [from, to) of the segment in prefaultChunk pieces,
// each a turn of its own through run (the store's background lane). MADV_POPULATE_READ holds the
// process's mmap lock for as long as it runs, and allocating and zeroing
// fresh page-cache pages costs 1-20 µs a page (the high end on a VM whose
// memory the host has not backed yet): one 4 MiB call measured 20-28 ms,
// and an execution trace showed the gnet event loop unable to come back
// from epoll_wait for as long in half of them (page faults queue behind a
// writer waiting for that lock). 256 KiB bounds a call to ~1 ms there,
// and the syncs sharing the lane get their turn between pieces.
func (s *segment) prefaultVia(run func(func()), from, to int64) {
	for from < to {
		end := min(to, from+prefaultChunk)
		run(func() { s.prefault(from, end) })
		from = end
	}
}

// dropResident unmaps the pages inside [from, to) of the segment from our
// page tables (up to the end of the mapping when to >= size); the file
// pages stay in the page cache. Only for ranges nobody writes any more.
func (s *segment) dropResident(from, to int64) {
	from &^= residentPageSize - 1
	if to < s.size {
		to &^= residentPageSize - 1
	} else {
		to = s.size
	}
	if from >= to {
		return
	}
	unix.Madvise(s.data[from:to], unix.MADV_DONTNEED)
}

// residentLoop keeps the window ahead of the writer paged in and releases
// what lies behind the flushed and dispatched data.
func (s *Store) residentLoop() {
	defer s.wg.Done()
	t := time.NewTicker(releaseInterval)
	defer t.Stop()
	ticks := 0
	for {
		s.prefaultAhead()
		select {
		case <-s.stop:
			return
		case <-s.residentWake:
		case <-t.C:
			ticks++
			s.releaseBehind(ticks%sweepEvery == 0)
		}
	}
}

// wakeResident asks for the window ahead to move (the writer crossed
// faultMark).
func (s *Store) wakeResident() {
	select {
	case s.residentWake <- struct{}{}:
	default:
	}
}

// prefaultAhead pages in up to prefaultAhead bytes past the write position
// and sets the mark at which the writer asks again. Resident goroutine only.
func (s *Store) prefaultAhead() {
	w := s.written.Load()
	from := max(s.faultedTo, w)
	to := w + prefaultAhead
	for from < to {
		seg := s.cl.find(from)
		if seg == nil || !seg.tryAcquire() {
			break // past the last segment: the spare's head is paged in already
		}
		end := min(to, seg.end())
		seg.prefaultVia(s.cfg.BackgroundIO.Run, from-seg.start, end-seg.start)
		seg.release()
		from = end
	}
	s.faultedTo = from
	if from < to {
		// Stopped at the end of the last segment: nothing to do until the
		// writer rolls past it.
		s.faultMark.Store(from)
		return
	}
	s.faultMark.Store(to - prefaultAhead/2)
}

// releaseBehind drops our mapping of commit-log data that is flushed,
// dispatched and keepBehind bytes old: what became so since the last call,
// or with sweep everything older (pages readers of old data mapped back);
// likewise consume-queue files that have a whole file after them.
// Resident goroutine only.
func (s *Store) releaseBehind(sweep bool) {
	limit := min(s.flushed.Load(), s.dispatched.Load()) - keepBehind
	from := s.releasedTo
	if sweep {
		from = 0
	}
	if limit <= from {
		return
	}
	for _, seg := range s.cl.list() {
		if seg.start >= limit {
			break
		}
		if seg.end() <= from || !seg.tryAcquire() {
			continue
		}
		seg.dropResident(max(from-seg.start, 0), limit-seg.start)
		seg.release()
	}
	s.releasedTo = limit
	qs := s.queues()
	for _, q := range qs {
		q.releaseOld(sweep)
	}
}
