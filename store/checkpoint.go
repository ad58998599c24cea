package store

import (
	"encoding/binary"
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"os"
	"sync"
)

const checkpointSize = 4096

// checkpoint is the 4096-byte checkpoint file (layout in doc.go). It is
// written with pwrite + fdatasync.
type checkpoint struct {
	f    *os.File
	lane *iolane.Lane // the fsync waits its turn with the other background disk calls
	mu   sync.Mutex
	// guarded by mu:
	physicTS, logicsTS, indexTS int64
	flushed, dispatched         int64
	// truncate is the offset a TruncateTo in progress cuts the commit log
	// at (-1: none); recovery finishes the cut.
	truncate int64
	valid    bool // the file had a readable checkpoint
}

func openCheckpoint(path string, lane *iolane.Lane) (*checkpoint, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("store: open checkpoint: %w", err)
	}
	c := &checkpoint{f: f, lane: lane, dispatched: -1, truncate: -1}
	var b [checkpointSize]byte
	n, _ := f.ReadAt(b[:], 0)
	if n >= 48 {
		be := binary.BigEndian
		c.physicTS = int64(be.Uint64(b[0:]))
		c.logicsTS = int64(be.Uint64(b[8:]))
		c.indexTS = int64(be.Uint64(b[16:]))
		c.flushed = int64(be.Uint64(b[24:]))
		c.dispatched = int64(be.Uint64(b[40:]))
		if n >= 56 {
			c.truncate = int64(be.Uint64(b[48:])) - 1
		}
		c.valid = c.physicTS > 0 || c.dispatched > 0
		if n < checkpointSize || c.dispatched < 0 {
			// A Java checkpoint (or a short file): no dispatch position.
			c.dispatched = -1
		}
	}
	return c, nil
}

// setLogics records that consume queues and index durably cover every
// record below dispatched.
func (c *checkpoint) setLogics(dispatched, ts int64) {
	c.mu.Lock()
	c.dispatched = dispatched
	if ts > 0 {
		c.logicsTS, c.indexTS = ts, ts
	}
	c.mu.Unlock()
}

// beginTruncate records that the commit log is cut at off: the
// positions it holds are lowered to off and recovery finishes the cut
// (write makes it durable).
func (c *checkpoint) beginTruncate(off int64) {
	c.mu.Lock()
	c.truncate = off
	if c.dispatched > off {
		c.dispatched = off
	}
	c.mu.Unlock()
}

// endTruncate clears the cut once it is complete.
func (c *checkpoint) endTruncate() {
	c.mu.Lock()
	c.truncate = -1
	c.mu.Unlock()
}

func (c *checkpoint) truncating() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.truncate
}

// write stores the checkpoint durably: flushed is the durable commit-log
// end (masterFlushedOffset), confirm the confirm offset (confirmPhyOffset).
func (c *checkpoint) write(flushed, confirm, physicTS int64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if physicTS > 0 {
		c.physicTS = physicTS
	}
	c.flushed = flushed
	var b [checkpointSize]byte
	be := binary.BigEndian
	be.PutUint64(b[0:], uint64(c.physicTS))
	be.PutUint64(b[8:], uint64(c.logicsTS))
	be.PutUint64(b[16:], uint64(c.indexTS))
	be.PutUint64(b[24:], uint64(flushed))
	be.PutUint64(b[32:], uint64(confirm))
	be.PutUint64(b[40:], uint64(max(c.dispatched, 0)))
	be.PutUint64(b[48:], uint64(max(c.truncate+1, 0)))
	if _, err := c.f.WriteAt(b[:], 0); err != nil {
		return fmt.Errorf("store: write checkpoint: %w", err)
	}
	if err := c.lane.Do(c.f.Sync); err != nil {
		return fmt.Errorf("store: sync checkpoint: %w", err)
	}
	return nil
}

func (c *checkpoint) close() { c.f.Close() }
