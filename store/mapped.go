package store

import (
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

// segment is one fixed-size file mapped read-write (a commit-log or
// consume-queue file). Its mapping stays valid while references are held:
// the owner holds one, readers take more with tryAcquire, and the last
// release after destroy unmaps the file.
type segment struct {
	path  string
	start int64 // offset of data[0] in its log
	size  int64
	f     *os.File
	data  []byte

	refs    atomic.Int32 // 1 owner + readers; 0 = unmapped
	removed atomic.Bool  // delete the file when the last reference goes
	// allocated: every block of the file exists on disk, so stores through
	// the mapping cannot fault on a full disk. Writers check it before
	// they write (ensureAllocated).
	allocated atomic.Bool
}

// errNoSpace marks ENOSPC while allocating a segment (errors.Is also
// matches falloc.ErrNoSpace).
var errNoSpace = falloc.ErrNoSpace

// createSegment creates (or reuses) path with size bytes allocated on disk
// (fallocate, so writes through the mapping never fault on a full disk).
// Nothing is paged in: residency is managed by the caller (prefault).
func createSegment(path string, start, size int64) (*segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: create segment %s: %w", path, err)
	}
	if err := falloc.Allocate(f, 0, size); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("store: allocate segment %s: %w", path, err)
	}
	s, err := mapSegment(f, path, start, size)
	if err == nil {
		s.allocated.Store(true)
	}
	return s, err
}

// openSegment maps an existing file; a short file is extended to size.
// Its blocks are not allocated here: a sealed segment is never written
// again, and allocating a sparse one (a file written by the Java broker, a
// store copied with holes, a benchmark's punched zero fill) would claim
// disk for every hole of every segment at start. Every writer calls
// ensureAllocated before it stores through the mapping of a segment
// opened this way (put, replication, truncation, consume-queue appends).
func openSegment(path string, start, size int64) (*segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: open segment %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: stat segment %s: %w", path, err)
	}
	if st.Size() > size {
		f.Close()
		return nil, fmt.Errorf("store: segment %s has %d bytes, want %d", path, st.Size(), size)
	}
	if st.Size() < size {
		if err := f.Truncate(size); err != nil {
			f.Close()
			return nil, fmt.Errorf("store: extend segment %s: %w", path, err)
		}
	}
	return mapSegment(f, path, start, size)
}

// ensureAllocated allocates the segment's blocks if opening could not; an
// error wrapping errNoSpace means the disk is still full. Writers call it
// before storing through the mapping.
func (s *segment) ensureAllocated() error {
	if s.allocated.Load() {
		return nil
	}
	if err := falloc.Allocate(s.f, 0, s.size); err != nil {
		return fmt.Errorf("store: allocate segment %s: %w", s.path, err)
	}
	s.allocated.Store(true)
	return nil
}

func mapSegment(f *os.File, path string, start, size int64) (*segment, error) {
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("store: mmap %s: %w", path, err)
	}
	s := &segment{path: path, start: start, size: size, f: f, data: data}
	s.refs.Store(1)
	return s, nil
}

func (s *segment) end() int64 { return s.start + s.size }

// tryAcquire takes a reader reference; false if the segment is gone.
func (s *segment) tryAcquire() bool {
	for {
		n := s.refs.Load()
		if n <= 0 {
			return false
		}
		if s.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

func (s *segment) acquire() {
	if !s.tryAcquire() {
		panic("store: invariant violated: acquire of an unmapped segment " + s.path)
	}
}

func (s *segment) release() {
	n := s.refs.Add(-1)
	if n < 0 {
		panic("store: invariant violated: segment released twice " + s.path)
	}
	if n == 0 {
		unix.Munmap(s.data)
		s.data = nil
		s.f.Close()
		if s.removed.Load() {
			os.Remove(s.path)
		}
	}
}

// sync makes the file's data durable.
func (s *segment) sync() error {
	if err := unix.Fdatasync(int(s.f.Fd())); err != nil {
		return fmt.Errorf("store: fdatasync %s: %w", s.path, err)
	}
	return nil
}

// zeroFrom clears [off, size) of the file (used to wipe a torn tail).
func (s *segment) zeroFrom(off int64) error {
	if off >= s.size {
		return nil
	}
	err := unix.Fallocate(int(s.f.Fd()), unix.FALLOC_FL_ZERO_RANGE|unix.FALLOC_FL_KEEP_SIZE, off, s.size-off)
	if err == nil {
		return nil
	}
	if err := s.ensureAllocated(); err != nil {
		return err // clearing holes through the mapping could fault
	}
	clear(s.data[off:])
	return nil
}

// destroy drops the owner reference and deletes the file once unreferenced.
func (s *segment) destroy() {
	s.removed.Store(true)
	s.release()
}

// close drops the owner reference, keeping the file.
func (s *segment) close() { s.release() }
