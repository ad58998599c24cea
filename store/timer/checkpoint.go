package timer

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

const checkpointSize = 4096 // Java maps one OS page

// Checkpoint is root/config/timercheck (layout in doc.go).
type Checkpoint struct {
	LastReadTimeMs         int64
	LastTimerLogFlushPos   int64
	LastTimerQueueOffset   int64
	MasterTimerQueueOffset int64
	StateVersion           int64
	Timestamp              int64
	Counter                int64
	// ProgressSlotMs/ProgressPos (rocketgo): units of slot ProgressSlotMs
	// up to and including position ProgressPos are delivered; ProgressPos
	// is -1 when none is.
	ProgressSlotMs int64
	ProgressPos    int64
}

// CheckpointPath is Java's timer checkpoint file.
func CheckpointPath(root string) string { return filepath.Join(root, "config", "timercheck") }

// ReadCheckpoint loads path; found is false when the file does not exist.
func ReadCheckpoint(path string) (c Checkpoint, found bool, err error) {
	c.ProgressPos = -1
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return c, false, nil
	}
	if err != nil {
		return c, false, fmt.Errorf("timer: open checkpoint: %w", err)
	}
	defer f.Close()
	var b [checkpointSize]byte
	n, err := io.ReadFull(f, b[:])
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return c, false, fmt.Errorf("timer: read checkpoint: %w", err)
	}
	get := func(off int) int64 {
		if off+8 > n {
			return 0
		}
		return int64(be.Uint64(b[off:]))
	}
	c.LastReadTimeMs, c.LastTimerLogFlushPos = get(0), get(8)
	c.LastTimerQueueOffset, c.MasterTimerQueueOffset = get(16), get(24)
	c.StateVersion, c.Timestamp, c.Counter = get(32), get(40), get(48)
	c.ProgressSlotMs, c.ProgressPos = get(56), get(64)-1
	if c.ProgressPos < -1 {
		c.ProgressPos = -1
	}
	return c, true, nil
}

// checkpointFile writes the checkpoint in place (pwrite + fdatasync).
type checkpointFile struct {
	f *os.File
}

func openCheckpointFile(path string) (*checkpointFile, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("timer: %w", err)
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("timer: open checkpoint: %w", err)
	}
	return &checkpointFile{f: f}, nil
}

func (cf *checkpointFile) write(c *Checkpoint) error {
	var b [checkpointSize]byte
	for i, v := range []int64{c.LastReadTimeMs, c.LastTimerLogFlushPos, c.LastTimerQueueOffset,
		c.MasterTimerQueueOffset, c.StateVersion, c.Timestamp, c.Counter, c.ProgressSlotMs, c.ProgressPos + 1} {
		be.PutUint64(b[i*8:], uint64(v))
	}
	if _, err := cf.f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("timer: write checkpoint: %w", err)
	}
	if err := cf.f.Sync(); err != nil {
		return fmt.Errorf("timer: sync checkpoint: %w", err)
	}
	return nil
}

func (cf *checkpointFile) close() error { return cf.f.Close() }
