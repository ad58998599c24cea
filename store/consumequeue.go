package store

import (
	"encoding/binary"
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
)

// CQUnitSize is the size of one consume-queue unit.
const CQUnitSize = 20

// consumeQueue is the index of one topic/queue: unit n (logical offset n)
// lives at byte n*20 of the queue.
type consumeQueue struct {
	topic    string
	queueID  int32
	dir      string
	fileSize int64

	// Invariant: minOffset <= maxOffset; units in [minOffset, maxOffset)
	// are written. mu guards files and writes; readers of units below
	// maxOffset hold mu.RLock so files are not unmapped under them.
	mu        sync.RWMutex
	files     []*segment // by start byte offset
	minOffset atomic.Int64
	maxOffset atomic.Int64
	maxPhy    int64 // end of the record behind the last unit; guarded by mu
	dirty     bool  // unsynced writes; guarded by mu

	releasedTo int64 // end of the files released by releaseOld; resident goroutine only
}

func newConsumeQueue(root, topic string, qid int32, fileSize int64) *consumeQueue {
	return &consumeQueue{
		topic: topic, queueID: qid, fileSize: fileSize,
		dir: filepath.Join(root, topic, strconv.Itoa(int(qid))),
	}
}

// load maps the files of the queue and finds its end: the first unit that
// is empty. Units pointing at or past clEnd are dropped.
func (q *consumeQueue) load(clEnd int64) error {
	names, err := listSegmentFiles(q.dir)
	if err != nil {
		if os.IsNotExist(err) || os.IsNotExist(unwrapAll(err)) {
			return nil
		}
		return err
	}
	for i, n := range names {
		if n.start%q.fileSize != 0 || (i > 0 && n.start != q.files[i-1].end()) {
			q.closeFiles()
			return fmt.Errorf("store: consume queue %s/%d: misplaced file %s", q.topic, q.queueID, n.name)
		}
		s, err := openSegment(filepath.Join(q.dir, n.name), n.start, q.fileSize)
		if err != nil {
			q.closeFiles()
			return err
		}
		q.files = append(q.files, s)
	}
	if len(q.files) == 0 {
		return nil
	}
	// Min: the first real unit of the first file (pre-filled blanks skipped).
	first := q.files[0]
	minUnit := first.start / CQUnitSize
	for p := int64(0); p+CQUnitSize <= first.size; p += CQUnitSize {
		_, size, _ := readUnit(first.data[p:])
		if size != math.MaxInt32 {
			break
		}
		minUnit++
	}
	// Max: scan the last non-empty file.
	var end int64 = q.files[0].start
	for i := len(q.files) - 1; i >= 0; i-- {
		f := q.files[i]
		p := int64(0)
		for ; p+CQUnitSize <= f.size; p += CQUnitSize {
			phy, size, _ := readUnit(f.data[p:])
			if phy == 0 && size == 0 {
				break
			}
		}
		if p > 0 || i == 0 {
			end = f.start + p
			break
		}
	}
	q.maxOffset.Store(end / CQUnitSize)
	q.minOffset.Store(min(minUnit, end/CQUnitSize))
	q.truncateTo(clEnd)
	return nil
}

func unwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}

func readUnit(b []byte) (phy int64, size int32, tags int64) {
	return int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:])), int64(binary.BigEndian.Uint64(b[12:]))
}

func putUnit(b []byte, phy int64, size int32, tags int64) {
	binary.BigEndian.PutUint64(b, uint64(phy))
	binary.BigEndian.PutUint32(b[8:], uint32(size))
	binary.BigEndian.PutUint64(b[12:], uint64(tags))
}

// unitAt returns the unit bytes of logical offset n; mu must be held.
func (q *consumeQueue) unitAt(n int64) []byte {
	pos := n * CQUnitSize
	if len(q.files) == 0 || pos < q.files[0].start {
		return nil
	}
	i := int((pos - q.files[0].start) / q.fileSize)
	if i >= len(q.files) {
		return nil
	}
	f := q.files[i]
	p := pos - f.start
	return f.data[p : p+CQUnitSize]
}

// truncateTo drops trailing units whose record ends past clEnd and
// recomputes maxPhy; mu must be held or the queue private.
func (q *consumeQueue) truncateTo(clEnd int64) {
	max := q.maxOffset.Load()
	for max > q.minOffset.Load() {
		u := q.unitAt(max - 1)
		phy, size, _ := readUnit(u)
		if size == math.MaxInt32 {
			break // blank unit: points nowhere, keeps its offset
		}
		if phy+int64(size) <= clEnd {
			q.maxPhy = phy + int64(size)
			break
		}
		clear(u)
		q.dirty = true
		max--
	}
	if max == q.minOffset.Load() {
		q.maxPhy = 0
	}
	q.maxOffset.Store(max)
	// Drop whole files past the end.
	for len(q.files) > 1 && q.files[len(q.files)-1].start > max*CQUnitSize {
		q.files[len(q.files)-1].destroy()
		q.files = q.files[:len(q.files)-1]
	}
}

// put stores the unit for logical offset n. It is idempotent for units
// already present (replay after recovery); a differing unit truncates the
// queue there; a gap is filled with blank units, as Java does.
func (q *consumeQueue) put(n, phy int64, size int32, tags int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	max := q.maxOffset.Load()
	if n < max {
		if n < q.minOffset.Load() {
			return nil
		}
		p, s, t := readUnit(q.unitAt(n))
		if p == phy && s == size && t == tags {
			return nil
		}
		q.truncateUnits(n)
		max = n
	}
	// compat: a queue with no file yet starts at n (write pre-fills its
	// first file with blank units and sets the min offset), as Java does
	// for a slave that joins at the master's last segment.
	for max < n && len(q.files) > 0 {
		if err := q.write(max, 0, math.MaxInt32, 0); err != nil {
			return err
		}
		max++
	}
	if err := q.write(n, phy, size, tags); err != nil {
		return err
	}
	q.maxPhy = phy + int64(size)
	q.maxOffset.Store(n + 1)
	return nil
}

// repair appends the unit for logical offset n only if the queue lacks it:
// n at or past the end and the record after the last unit's record.
// Recovery uses it below the checkpoint, where units that differ belong to
// a deleted and re-created topic and must be left alone.
func (q *consumeQueue) repair(n, phy int64, size int32, tags int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	max := q.maxOffset.Load()
	if n < max || phy < q.maxPhy {
		return nil
	}
	for ; max < n; max++ {
		if err := q.write(max, 0, math.MaxInt32, 0); err != nil {
			return err
		}
	}
	if err := q.write(n, phy, size, tags); err != nil {
		return err
	}
	q.maxPhy = phy + int64(size)
	q.maxOffset.Store(n + 1)
	return nil
}

// lacks reports whether repair(n, phy, ...) would append a unit.
func (q *consumeQueue) lacks(n, phy int64) bool {
	q.mu.RLock()
	defer q.mu.RUnlock()
	return n >= q.maxOffset.Load() && phy >= q.maxPhy
}

// hide replaces unit n (a record with a bad CRC) with a blank unit in
// place, or appends a blank unit when the queue does not reach n yet.
func (q *consumeQueue) hide(n int64) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	max := q.maxOffset.Load()
	if n < q.minOffset.Load() {
		return nil
	}
	if n < max {
		putUnit(q.unitAt(n), 0, math.MaxInt32, 0)
		q.dirty = true
		return nil
	}
	for ; max <= n; max++ {
		if err := q.write(max, 0, math.MaxInt32, 0); err != nil {
			return err
		}
	}
	q.maxOffset.Store(n + 1)
	return nil
}

func (q *consumeQueue) truncateUnits(n int64) {
	for i := n; i < q.maxOffset.Load(); i++ {
		if u := q.unitAt(i); u != nil {
			clear(u)
		}
	}
	q.maxOffset.Store(n)
	q.dirty = true
}

// write stores one unit, creating the file as needed; mu held.
func (q *consumeQueue) write(n, phy int64, size int32, tags int64) error {
	pos := n * CQUnitSize
	if len(q.files) == 0 || pos >= q.files[len(q.files)-1].end() {
		start := pos - pos%q.fileSize
		if len(q.files) > 0 && start != q.files[len(q.files)-1].end() {
			return fmt.Errorf("store: consume queue %s/%d: invariant violated: gap before %d", q.topic, q.queueID, start)
		}
		if err := os.MkdirAll(q.dir, 0o755); err != nil {
			return fmt.Errorf("store: consume queue dir: %w", err)
		}
		f, err := createSegment(filepath.Join(q.dir, segmentName(start)), start, q.fileSize)
		if err != nil {
			return err
		}
		if len(q.files) == 0 {
			// compat: like Java, a queue that starts mid-file is pre-filled
			// with blank units.
			for p := int64(0); p < pos-start; p += CQUnitSize {
				putUnit(f.data[p:], 0, math.MaxInt32, 0)
			}
			q.minOffset.Store(n)
			q.maxOffset.Store(n)
		}
		q.files = append(q.files, f)
	}
	if f := q.files[len(q.files)-1]; !f.allocated.Load() {
		// Opened sparse on a full disk: a store into a hole would fault.
		if err := f.ensureAllocated(); err != nil {
			return err
		}
	}
	putUnit(q.unitAt(n), phy, size, tags)
	q.dirty = true
	return nil
}

// flush syncs dirty files.
func (q *consumeQueue) flush(lane *iolane.Lane) error {
	q.mu.Lock()
	if !q.dirty {
		q.mu.Unlock()
		return nil
	}
	q.dirty = false
	var files []*segment
	max := q.maxOffset.Load() * CQUnitSize
	for _, f := range q.files {
		if f.end() >= max-CQUnitSize-q.fileSize {
			f.acquire()
			files = append(files, f)
		}
	}
	q.mu.Unlock()
	var err error
	for _, f := range files {
		if e := lane.Do(f.sync); e != nil && err == nil {
			err = e
		}
		f.release()
	}
	return err
}

// deleteBelow removes files whose units all point below minPhy and
// advances minOffset past units below minPhy.
func (q *consumeQueue) deleteBelow(minPhy int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.files) > 1 {
		f := q.files[0]
		phy, size, _ := readUnit(f.data[f.size-CQUnitSize:])
		if size == 0 || phy+int64(size) > minPhy {
			break
		}
		f.destroy()
		q.files = q.files[1:]
		if m := q.files[0].start / CQUnitSize; q.minOffset.Load() < m {
			q.minOffset.Store(m)
		}
	}
	// Advance past units of deleted records within the first file.
	n := q.minOffset.Load()
	for ; n < q.maxOffset.Load(); n++ {
		phy, size, _ := readUnit(q.unitAt(n))
		if size != math.MaxInt32 && phy >= minPhy {
			break
		}
	}
	q.minOffset.Store(n)
}

// releaseOld unmaps files with at least one whole file after them from our
// page tables (they stay in the page cache; see resident.go): those that
// became so since the last call, or all with sweep. Readers of old units
// map them back on demand. Resident goroutine only.
func (q *consumeQueue) releaseOld(sweep bool) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	if sweep {
		q.releasedTo = 0
	}
	end := q.maxOffset.Load() * CQUnitSize
	for _, f := range q.files {
		if f.end()+q.fileSize > end {
			return
		}
		if f.end() > q.releasedTo {
			f.dropResident(0, f.size)
			q.releasedTo = f.end()
		}
	}
}

func (q *consumeQueue) closeFiles() {
	for _, f := range q.files {
		f.close()
	}
	q.files = nil
}

// destroy deletes the queue's files and directory.
func (q *consumeQueue) destroy() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, f := range q.files {
		f.destroy()
	}
	q.files = nil
	q.maxOffset.Store(0)
	q.minOffset.Store(0)
	os.RemoveAll(q.dir)
}

// unitsIn returns the queue offsets [from, to) of the units whose record
// lies in the commit-log range [start, end) (blank units inside count).
// Units are in commit-log order, so it scans from the queue's minimum.
func (q *consumeQueue) unitsIn(start, end int64) (from, to int64) {
	q.mu.RLock()
	defer q.mu.RUnlock()
	maxO := q.maxOffset.Load()
	n := q.minOffset.Load()
	for ; n < maxO; n++ {
		phy, size, _ := readUnit(q.unitAt(n))
		if size != math.MaxInt32 && phy >= start {
			break
		}
	}
	from = n
	for ; n < maxO; n++ {
		phy, size, _ := readUnit(q.unitAt(n))
		if size != math.MaxInt32 && phy >= end {
			break
		}
	}
	return from, n
}

// queues is a snapshot of the store's consume queues, for walks that must
// not hold cqMu while they work on each queue.
func (s *Store) queues() []*consumeQueue {
	s.cqMu.RLock()
	defer s.cqMu.RUnlock()
	qs := make([]*consumeQueue, 0, len(s.cqs))
	for _, q := range s.cqs {
		qs = append(qs, q)
	}
	return qs
}
