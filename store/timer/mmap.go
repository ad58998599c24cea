package timer

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

// mfile is one fixed-size file mapped read-write.
type mfile struct {
	path  string
	start int64 // position of data[0] (timerlog) or 0
	f     *os.File
	data  []byte
}

// mapFile opens (creating if asked) path and maps size bytes of it; a
// shorter file is extended, a longer one refused.
func mapFile(path string, start, size int64, create bool) (*mfile, error) {
	flags := os.O_RDWR
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("timer: open %s: %w", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("timer: stat %s: %w", path, err)
	}
	if st.Size() > size {
		f.Close()
		return nil, fmt.Errorf("timer: %s has %d bytes, want %d", path, st.Size(), size)
	}
	// Every block is allocated, a file of full size too (one written by
	// the Java broker is sparse): a store through the mapping into a hole
	// would fault on a full disk (SIGBUS) instead of failing here.
	if err := falloc.Allocate(f, 0, size); err != nil {
		f.Close()
		if create && st.Size() == 0 {
			os.Remove(path) // ours, never used: leave no short file behind
		}
		return nil, fmt.Errorf("timer: allocate %s: %w", path, err)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("timer: mmap %s: %w", path, err)
	}
	return &mfile{path: path, start: start, f: f, data: data}, nil
}

// sync writes back dirty pages of [off, end).
func (m *mfile) sync(off, end int64) error {
	page := int64(os.Getpagesize())
	off = off / page * page
	if end > int64(len(m.data)) {
		end = int64(len(m.data))
	}
	if off >= end {
		return nil
	}
	if err := unix.Msync(m.data[off:end], unix.MS_SYNC); err != nil {
		return fmt.Errorf("timer: msync %s: %w", m.path, err)
	}
	return nil
}

func (m *mfile) close() error {
	err := unix.Munmap(m.data)
	m.data = nil
	if cerr := m.f.Close(); err == nil {
		err = cerr
	}
	return err
}
