package falloc

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// ErrNoSpace is what errors.Is matches when the file system has no room
// for the blocks (ENOSPC; a quota's EDQUOT is reported as it too). The
// error is a *NoSpaceError, which says how much was asked for.
var ErrNoSpace error = unix.ENOSPC

// NoSpaceError is an allocation the file system had no room for.
type NoSpaceError struct {
	Bytes int64 // the size of the range that could not be allocated
	Err   error // the system error (ENOSPC or EDQUOT)
}

func (e *NoSpaceError) Error() string {
	return fmt.Sprintf("allocate %d bytes: %v", e.Bytes, e.Err)
}

// Is makes errors.Is(err, ErrNoSpace) hold for quotas too.
func (e *NoSpaceError) Is(target error) bool { return target == ErrNoSpace }

func (e *NoSpaceError) Unwrap() error { return e.Err }

// zeroChunk is the largest write of the zero-filling fallback.
const zeroChunk = 1 << 20

// Allocate makes sure every block of [off, off+n) of f exists on disk,
// extending the file when it is shorter. Data already in the range is
// kept. It uses fallocate(2); on file systems without it, holes in the
// range are filled by writing zeros. A full file system yields an error
// for which errors.Is(err, ErrNoSpace) holds.
func Allocate(f *os.File, off, n int64) error {
	if n <= 0 {
		return nil
	}
	err := unix.Fallocate(int(f.Fd()), 0, off, n)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		err = fillHoles(f, off, off+n)
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EDQUOT) {
		return &NoSpaceError{Bytes: n, Err: err}
	}
	return fmt.Errorf("allocate %d bytes at %d: %w", n, off, err)
}

// fillHoles writes zeros into the holes of [off, end) and past the end of
// the file, never over data.
func fillHoles(f *os.File, off, end int64) error {
	st, err := f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	zeros := make([]byte, min(zeroChunk, end-off))
	// Holes inside the current file.
	for pos := off; pos < min(end, size); {
		hole, err := unix.Seek(int(f.Fd()), pos, unix.SEEK_HOLE)
		if err != nil || hole >= min(end, size) {
			break // no hole (or no SEEK_HOLE support: treated as all data)
		}
		data, err := unix.Seek(int(f.Fd()), hole, unix.SEEK_DATA)
		if err != nil {
			if !errors.Is(err, syscall.ENXIO) {
				return err
			}
			data = size // a hole up to the end of the file
		}
		stop := min(data, end)
		if err := writeZeros(f, zeros, hole, stop); err != nil {
			return err
		}
		pos = stop
	}
	if end > size {
		return writeZeros(f, zeros, max(off, size), end)
	}
	return nil
}

func writeZeros(f *os.File, zeros []byte, from, to int64) error {
	for from < to {
		b := zeros[:min(int64(len(zeros)), to-from)]
		n, err := f.WriteAt(b, from)
		if err != nil && !errors.Is(err, io.ErrShortWrite) {
			return err
		}
		from += int64(n)
	}
	return nil
}

// Allocated returns how many bytes of f have blocks on disk (st_blocks).
func Allocated(f *os.File) (int64, error) {
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return 0, err
	}
	return st.Blocks * 512, nil
}
