package index

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync/atomic"

	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

const (
	headerSize = 40
	entrySize  = 20
)

// file is one mapped index file.
type file struct {
	path   string
	f      *os.File
	data   []byte
	slots  int
	max    int
	header header

	// released: entries below it are unmapped from our page tables
	// (dropEntries); -1 once the whole file is.
	released atomic.Int32

	// allocTo: bytes [0, allocTo) have blocks on disk. The file is sparse
	// past it (as Java's index files are: most of the 400 MB entry area of
	// a lightly used broker is never touched), and put allocates the next
	// allocChunk before it stores an entry there, so a store through the
	// mapping never faults on a full disk. Guarded by the Service's mu.
	allocTo int64
}

// allocChunk is how much of the entry area put allocates at a time.
const allocChunk = 1 << 20

// ensure allocates blocks for [0, upTo) and the chunk after it; an error
// wrapping falloc.ErrNoSpace means the disk is full.
func (x *file) ensure(upTo int64) error {
	if upTo <= x.allocTo {
		return nil
	}
	to := min(int64(len(x.data)), (upTo+allocChunk)&^(allocChunk-1))
	if err := falloc.Allocate(x.f, x.allocTo, to-x.allocTo); err != nil {
		return fmt.Errorf("index: allocate %s: %w", x.path, err)
	}
	x.allocTo = to
	return nil
}

// keepEntries is how many of the newest entries Flush leaves mapped.
const keepEntries = 64 << 10

const pageSize = 4096

// dropEntries unmaps the entries below to from our page tables (the pages
// stay in the page cache; queries map them back), or the whole file when
// all. Like the commit log's release (store/resident.go), it keeps resident
// memory to the part being written. Caller holds the Service's flushMu.
func (x *file) dropEntries(to int32, all bool) {
	from := x.released.Load()
	if from < 0 || (!all && to <= from) {
		return
	}
	if all {
		unix.Madvise(x.data, unix.MADV_DONTNEED)
		x.released.Store(-1)
		return
	}
	base := headerSize + x.slots*4
	lo := (base + int(from)*entrySize) &^ (pageSize - 1)
	hi := (base + int(to)*entrySize) &^ (pageSize - 1)
	if lo < hi {
		unix.Madvise(x.data[lo:hi], unix.MADV_DONTNEED)
	}
	x.released.Store(to)
}

type header struct {
	beginTS, endTS   int64
	beginPhy, endPhy int64
	slotCount        int32
	indexCount       int32
}

func fileSize(slots, max int) int64 {
	return headerSize + int64(slots)*4 + int64(max)*entrySize
}

func openFile(path string, slots, max int, create bool) (*file, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := os.OpenFile(path, flag, 0o644)
	if err != nil {
		return nil, fmt.Errorf("index: open %s: %w", path, err)
	}
	size := fileSize(slots, max)
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("index: stat %s: %w", path, err)
	}
	if create {
		// Sparse, as Java's index files are; the header, the hash slots
		// and the first entries are allocated below, further entries by
		// put (ensure).
		if err := f.Truncate(size); err != nil {
			f.Close()
			os.Remove(path)
			return nil, fmt.Errorf("index: allocate %s: %w", path, err)
		}
	} else if st.Size() != size {
		f.Close()
		return nil, fmt.Errorf("index: %s has %d bytes, want %d", path, st.Size(), size)
	}
	data, err := unix.Mmap(int(f.Fd()), 0, int(size), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("index: mmap %s: %w", path, err)
	}
	x := &file{path: path, f: f, data: data, slots: slots, max: max}
	if create {
		if err := x.ensure(x.entryPos(1)); err != nil {
			x.close()
			os.Remove(path)
			return nil, err
		}
		x.header.indexCount = 1
		x.writeHeader()
	} else {
		// Reads of holes are fine; writes allocate first. A full disk
		// leaves allocTo at 0 and put tries again.
		x.readHeader()
		if x.header.indexCount < 1 || int(x.header.indexCount) > max {
			x.close()
			return nil, fmt.Errorf("index: %s: bad index count %d", path, x.header.indexCount)
		}
		if !x.full() {
			_ = x.ensure(x.entryPos(x.header.indexCount))
		}
	}
	return x, nil
}

func (x *file) readHeader() {
	be := binary.BigEndian
	d := x.data
	x.header = header{
		beginTS: int64(be.Uint64(d)), endTS: int64(be.Uint64(d[8:])),
		beginPhy: int64(be.Uint64(d[16:])), endPhy: int64(be.Uint64(d[24:])),
		slotCount: int32(be.Uint32(d[32:])), indexCount: int32(be.Uint32(d[36:])),
	}
}

func (x *file) writeHeader() {
	be := binary.BigEndian
	d := x.data
	h := &x.header
	be.PutUint64(d, uint64(h.beginTS))
	be.PutUint64(d[8:], uint64(h.endTS))
	be.PutUint64(d[16:], uint64(h.beginPhy))
	be.PutUint64(d[24:], uint64(h.endPhy))
	be.PutUint32(d[32:], uint32(h.slotCount))
	be.PutUint32(d[36:], uint32(h.indexCount))
}

func (x *file) full() bool { return int(x.header.indexCount) >= x.max }

// keyHashPositive is Java's abs(hashCode) with MIN_VALUE mapped to 0.
func keyHashPositive(h int32) int32 {
	if h < 0 {
		h = -h
	}
	if h < 0 {
		return 0
	}
	return h
}

// entryPos is the byte position of entry n.
func (x *file) entryPos(n int32) int64 {
	return headerSize + int64(x.slots)*4 + int64(n)*entrySize
}

// put adds one key; false when the file is full. An error means its
// blocks could not be allocated (nothing was written).
func (x *file) put(hash int32, phy, storeTS int64) (bool, error) {
	if x.full() {
		return false, nil
	}
	if err := x.ensure(x.entryPos(x.header.indexCount + 1)); err != nil {
		return false, err
	}
	be := binary.BigEndian
	kh := keyHashPositive(hash)
	slotPos := headerSize + int(kh%int32(x.slots))*4
	prev := int32(be.Uint32(x.data[slotPos:]))
	if prev <= 0 || prev > x.header.indexCount {
		prev = 0
	}
	h := &x.header
	var diff int64
	if h.beginTS > 0 {
		diff = (storeTS - h.beginTS) / 1000
	}
	diff = min(max(diff, 0), 1<<31-1)
	n := h.indexCount
	ep := headerSize + x.slots*4 + int(n)*entrySize
	be.PutUint32(x.data[ep:], uint32(kh))
	be.PutUint64(x.data[ep+4:], uint64(phy))
	be.PutUint32(x.data[ep+12:], uint32(diff))
	be.PutUint32(x.data[ep+16:], uint32(prev))
	be.PutUint32(x.data[slotPos:], uint32(n))
	if n <= 1 {
		h.beginPhy, h.beginTS = phy, storeTS
	}
	if prev == 0 {
		h.slotCount++
	}
	h.indexCount++
	h.endPhy, h.endTS = phy, storeTS
	x.writeHeader()
	return true, nil
}

// query appends phy offsets of entries with hash whose time is in
// [begin, end], newest first, up to max results in total.
func (x *file) query(dst []int64, hash int32, max int, begin, end int64) []int64 {
	be := binary.BigEndian
	kh := keyHashPositive(hash)
	slotPos := headerSize + int(kh%int32(x.slots))*4
	cur := int32(be.Uint32(x.data[slotPos:]))
	count := x.header.indexCount
	for steps := 0; cur > 0 && cur < count && len(dst) < max && steps < x.max; steps++ {
		ep := headerSize + x.slots*4 + int(cur)*entrySize
		h := int32(be.Uint32(x.data[ep:]))
		phy := int64(be.Uint64(x.data[ep+4:]))
		diff := int64(int32(be.Uint32(x.data[ep+12:])))
		prev := int32(be.Uint32(x.data[ep+16:]))
		t := x.header.beginTS + diff*1000
		if h == kh && t >= begin && t <= end {
			dst = append(dst, phy)
		}
		if prev <= 0 || prev >= cur || t < begin {
			break
		}
		cur = prev
	}
	return dst
}

func (x *file) sync() error {
	if err := unix.Msync(x.data, unix.MS_SYNC); err != nil {
		return fmt.Errorf("index: msync %s: %w", x.path, err)
	}
	return nil
}

func (x *file) close() {
	if x.data != nil {
		unix.Munmap(x.data)
		x.data = nil
	}
	x.f.Close()
}
