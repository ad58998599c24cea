package store

import (
	"errors"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"
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
}

// errNoSpace marks ENOSPC while allocating a segment.
var errNoSpace = errors.New("store: no space left on device")

// createSegment creates (or reuses) path with size bytes allocated on disk
// (fallocate, so writes through the mapping never fault on a full disk).
// Nothing is paged in: residency is managed by the caller (prefault).
func createSegment(path string, start, size int64) (*segment, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: create segment %s: %w", path, err)
	}
	if err := allocate(f, size); err != nil {
		f.Close()
		os.Remove(path)
		return nil, fmt.Errorf("store: allocate segment %s: %w", path, err)
	}
	return mapSegment(f, path, start, size)
}

func allocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOSPC) {
		return errNoSpace
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}

// openSegment maps an existing file; a short file is extended to size.
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
	if st.Size() != size {
		if st.Size() > size {
			f.Close()
			return nil, fmt.Errorf("store: segment %s has %d bytes, want %d", path, st.Size(), size)
		}
		if err := allocate(f, size); err != nil {
			f.Close()
			return nil, fmt.Errorf("store: extend segment %s: %w", path, err)
		}
	}
	return mapSegment(f, path, start, size)
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
	if err != nil {
		clear(s.data[off:])
	}
	return nil
}

// destroy drops the owner reference and deletes the file once unreferenced.
func (s *segment) destroy() {
	s.removed.Store(true)
	s.release()
}

// close drops the owner reference, keeping the file.
func (s *segment) close() { s.release() }
