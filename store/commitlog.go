package store

import (
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/codec/message"
)

// commitLog is the list of commit-log segments plus the preallocator.
type commitLog struct {
	lane    *iolane.Lane // background disk calls (prefault of a new segment, directory syncs)
	dir     string
	segSize int64
	log     *slog.Logger

	segMu sync.Mutex                 // serialises changes of segs
	segs  atomic.Pointer[[]*segment] // sorted by start; readers load without locks

	spareMu   sync.Mutex
	spare     *segment // preallocated next segment, guarded by spareMu
	spareWant chan int64
	stop      chan struct{}
	wg        sync.WaitGroup
}

func segmentName(start int64) string { return fmt.Sprintf("%020d", start) }

func newCommitLog(dir string, segSize int64, log *slog.Logger, lane *iolane.Lane) (*commitLog, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("store: commitlog dir: %w", err)
	}
	c := &commitLog{lane: lane, dir: dir, segSize: segSize, log: log, spareWant: make(chan int64, 1), stop: make(chan struct{})}
	empty := []*segment{}
	c.segs.Store(&empty)
	return c, nil
}

// load maps the existing segments in name order.
func (c *commitLog) load() error {
	names, err := listSegmentFiles(c.dir)
	if err != nil {
		return err
	}
	var segs []*segment
	for i, n := range names {
		if n.start%c.segSize != 0 {
			return fmt.Errorf("store: commitlog segment %s not aligned to %d", n.name, c.segSize)
		}
		if i > 0 && n.start != segs[i-1].end() {
			return fmt.Errorf("store: commitlog gap before segment %s", n.name)
		}
		s, err := openSegment(filepath.Join(c.dir, n.name), n.start, c.segSize)
		if err != nil {
			for _, o := range segs {
				o.close()
			}
			return err
		}
		segs = append(segs, s)
	}
	c.segs.Store(&segs)
	return nil
}

type segFile struct {
	name  string
	start int64
}

func listSegmentFiles(dir string) ([]segFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("store: list %s: %w", dir, err)
	}
	var out []segFile
	for _, e := range ents {
		if e.IsDir() || len(e.Name()) != 20 {
			continue
		}
		v, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		out = append(out, segFile{e.Name(), v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out, nil
}

func (c *commitLog) list() []*segment { return *c.segs.Load() }

func (c *commitLog) last() *segment {
	l := c.list()
	if len(l) == 0 {
		return nil
	}
	return l[len(l)-1]
}

// find returns the segment holding offset, or nil.
func (c *commitLog) find(off int64) *segment {
	l := c.list()
	if len(l) == 0 || off < l[0].start {
		return nil
	}
	i := int((off - l[0].start) / c.segSize)
	if i >= len(l) {
		return nil
	}
	s := l[i]
	if off < s.start || off >= s.end() {
		return nil
	}
	return s
}

func (c *commitLog) minOffset() int64 {
	l := c.list()
	if len(l) == 0 {
		return 0
	}
	return l[0].start
}

// appendSegment adds a new last segment starting at start, taking the
// preallocated spare when it matches.
func (c *commitLog) appendSegment(start int64) (*segment, error) {
	// spareMu is held while creating, so the writer and the preallocator
	// never create the same file.
	c.spareMu.Lock()
	s := c.spare
	c.spare = nil
	if s != nil && s.start != start {
		s.destroy()
		s = nil
	}
	if s == nil {
		var err error
		s, err = createSegment(filepath.Join(c.dir, segmentName(start)), start, c.segSize)
		if err != nil {
			c.spareMu.Unlock()
			return nil, err
		}
	}
	c.segMu.Lock()
	old := c.list()
	nl := make([]*segment, len(old), len(old)+1)
	copy(nl, old)
	nl = append(nl, s)
	c.segs.Store(&nl)
	c.segMu.Unlock()
	c.spareMu.Unlock()
	// Ask for the one after it off the write path.
	select {
	case c.spareWant <- s.end():
	default:
	}
	return s, nil
}

// startPreallocator runs the goroutine that creates and allocates the next
// segment and pages in its head.
func (c *commitLog) startPreallocator() {
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		for {
			select {
			case <-c.stop:
				return
			case start := <-c.spareWant:
				c.prepareSpare(start)
			}
		}
	}()
}

func (c *commitLog) prepareSpare(start int64) {
	c.spareMu.Lock()
	defer c.spareMu.Unlock()
	if c.spare != nil && c.spare.start == start {
		return
	}
	if l := c.last(); l != nil && l.end() != start {
		return // stale request: the writer has moved on
	}
	s, err := createSegment(filepath.Join(c.dir, segmentName(start)), start, c.segSize)
	if err != nil {
		c.log.Warn("commitlog: preallocate segment failed", "start", start, "err", err)
		return
	}
	// Only the head is paged in: the writer starts there, and the window
	// ahead of it moves on from there (resident.go).
	s.prefaultVia(c.lane.Run, 0, min(prefaultAhead, s.size))
	if c.spare != nil {
		c.spare.destroy()
	}
	c.spare = s
}

// removeFirst deletes the oldest segment.
func (c *commitLog) removeFirst() {
	c.segMu.Lock()
	old := c.list()
	if len(old) <= 1 {
		c.segMu.Unlock()
		return
	}
	s := old[0]
	nl := append([]*segment(nil), old[1:]...)
	c.segs.Store(&nl)
	c.segMu.Unlock()
	s.destroy()
}

// truncateAfter deletes every segment that starts after off, the last
// first and each unlinked at once (readers keep their mapping), so a crash
// in between never leaves a gap and a later segment of the same name is
// never removed by a late release.
func (c *commitLog) truncateAfter(off int64) {
	c.spareMu.Lock()
	if c.spare != nil && c.spare.start > off {
		c.spare.destroy()
		c.spare = nil
	}
	c.spareMu.Unlock()
	c.segMu.Lock()
	defer c.segMu.Unlock()
	l := c.list()
	keep := l[:0:0]
	for _, s := range l {
		if s.start <= off {
			keep = append(keep, s)
		}
	}
	c.segs.Store(&keep)
	for i := len(l) - 1; i >= len(keep); i-- {
		s := l[i]
		if err := os.Remove(s.path); err != nil {
			c.log.Warn("commitlog: remove truncated segment", "path", s.path, "err", err)
		}
		syncDir(c.dir)
		s.close()
	}
}

// resetTo replaces the segments of an empty log by one new empty segment
// starting at start (an empty slave joining at the master's offset). The
// old files go first, so a crash never leaves two segments with a gap.
func (c *commitLog) resetTo(start int64) (*segment, error) {
	c.spareMu.Lock()
	defer c.spareMu.Unlock()
	if c.spare != nil {
		c.spare.destroy()
		c.spare = nil
	}
	c.segMu.Lock()
	defer c.segMu.Unlock()
	old := c.list()
	for i := len(old) - 1; i >= 0; i-- {
		os.Remove(old[i].path)
	}
	syncDir(c.dir)
	s, err := createSegment(filepath.Join(c.dir, segmentName(start)), start, c.segSize)
	if err != nil {
		// Keep the (empty) log where it was.
		if len(old) > 0 {
			if back, berr := createSegment(old[0].path, old[0].start, c.segSize); berr == nil {
				for _, o := range old {
					o.close()
				}
				c.segs.Store(&[]*segment{back})
			}
		}
		return nil, err
	}
	c.segs.Store(&[]*segment{s})
	for _, o := range old {
		o.close()
	}
	return s, nil
}

// syncDir makes the removals in dir durable (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}

func (c *commitLog) close() {
	close(c.stop)
	c.wg.Wait()
	c.spareMu.Lock()
	if c.spare != nil {
		// An unused preallocated segment is an empty file: remove it so
		// recovery does not see a segment past the end.
		c.spare.destroy()
		c.spare = nil
	}
	c.spareMu.Unlock()
	c.segMu.Lock()
	for _, s := range c.list() {
		s.close()
	}
	empty := []*segment{}
	c.segs.Store(&empty)
	c.segMu.Unlock()
}

// readAt returns a view of size bytes at off with a reference held; the
// caller releases seg.
func (c *commitLog) view(off int64, size int) ([]byte, *segment, error) {
	s := c.find(off)
	if s == nil || !s.tryAcquire() {
		return nil, nil, fmt.Errorf("store: commit-log offset %d: %w", off, ErrOffsetNotFound)
	}
	pos := off - s.start
	if size <= 0 {
		if pos+8 > s.size {
			s.release()
			return nil, nil, fmt.Errorf("store: commit-log offset %d: %w", off, ErrOffsetNotFound)
		}
		n, magic, _ := message.PeekSize(s.data[pos:])
		if magic != message.MagicV1 && magic != message.MagicV2 {
			s.release()
			return nil, nil, fmt.Errorf("store: commit-log offset %d: %w", off, message.ErrMagic)
		}
		size = int(n)
	}
	if size <= 0 || pos+int64(size) > s.size {
		s.release()
		return nil, nil, fmt.Errorf("store: commit-log offset %d size %d: %w", off, size, ErrOffsetNotFound)
	}
	return s.data[pos : pos+int64(size) : pos+int64(size)], s, nil
}
