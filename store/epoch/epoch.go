package epoch

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
)

// Entry is one epoch: the master of Epoch wrote from StartOffset up to
// EndOffset (the next entry's start; math.MaxInt64 for the last entry).
type Entry struct {
	Epoch       int32
	StartOffset int64
	EndOffset   int64
}

// ErrNotIncreasing is returned by Append for an entry whose epoch or start
// offset is not above the last entry's.
var ErrNotIncreasing = errors.New("epoch: entry not above the last one")

// File is an epoch file and its entries in memory. It is safe for
// concurrent use.
type File struct {
	path string

	mu      sync.RWMutex
	entries []Entry // ascending epoch and start offset; guarded by mu
}

// Open reads path (falling back to path.bak when path is missing, empty or
// broken, as Java does). A missing file is an empty list.
func Open(path string) (*File, error) {
	f := &File{path: path}
	es, err := readFile(path)
	if err != nil || len(es) == 0 {
		bak, berr := readFile(path + ".bak")
		if berr != nil {
			if err != nil {
				return nil, fmt.Errorf("epoch: %s: %w (backup: %v)", path, err, berr)
			}
			return nil, fmt.Errorf("epoch: %s.bak: %w", path, berr)
		}
		if len(bak) > 0 || err != nil {
			es = bak
		}
	}
	f.entries = withEnds(es)
	return f, nil
}

// readFile parses one checkpoint file; a missing file is an empty list.
func readFile(path string) ([]Entry, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return Parse(b)
}

// Parse decodes the checkpoint format (entries without end offsets).
func Parse(b []byte) ([]Entry, error) {
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 0, 256), 1<<20)
	line := func() (string, bool) {
		if !sc.Scan() {
			return "", false
		}
		return strings.TrimSuffix(sc.Text(), "\r"), true
	}
	first, ok := line()
	if !ok {
		return nil, errors.New("epoch: empty file")
	}
	want, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || want < 0 {
		return nil, fmt.Errorf("epoch: bad entry count %q", first)
	}
	second, ok := line()
	if !ok {
		return nil, errors.New("epoch: no crc line")
	}
	wantCRC, err := strconv.ParseInt(strings.TrimSpace(second), 10, 32)
	if err != nil {
		return nil, fmt.Errorf("epoch: bad crc %q", second)
	}
	var body bytes.Buffer
	var es []Entry
	for {
		l, ok := line()
		if !ok {
			break
		}
		body.WriteString(l)
		body.WriteByte('\n')
		e, ok := parseLine(l)
		if !ok {
			continue // compat: Java skips lines its serializer does not read
		}
		es = append(es, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("epoch: read: %w", err)
	}
	if len(es) != want {
		return nil, fmt.Errorf("epoch: expected %d entries, found %d", want, len(es))
	}
	if wantCRC != 0 && int64(checksum(body.Bytes())) != wantCRC {
		return nil, fmt.Errorf("epoch: crc %d does not match the entries (%d)", wantCRC, checksum(body.Bytes()))
	}
	for i := 1; i < len(es); i++ {
		if es[i].Epoch <= es[i-1].Epoch || es[i].StartOffset < es[i-1].StartOffset {
			return nil, fmt.Errorf("epoch: entries out of order at %d-%d", es[i].Epoch, es[i].StartOffset)
		}
	}
	return es, nil
}

func parseLine(l string) (Entry, bool) {
	a, b, ok := strings.Cut(l, "-")
	if !ok || strings.Contains(b, "-") {
		return Entry{}, false
	}
	ep, err1 := strconv.ParseInt(a, 10, 32)
	off, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil {
		return Entry{}, false
	}
	return Entry{Epoch: int32(ep), StartOffset: off}, true
}

// checksum is Java's UtilAll.crc32: CRC-32 (IEEE) masked to 31 bits.
func checksum(b []byte) int32 { return int32(crc32.ChecksumIEEE(b) & 0x7fffffff) }

// Format encodes entries in the checkpoint format.
func Format(es []Entry) []byte {
	var body bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&body, "%d-%d\n", e.Epoch, e.StartOffset)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d\n%d\n", len(es), checksum(body.Bytes()))
	b.Write(body.Bytes())
	return b.Bytes()
}

// withEnds sets each entry's end offset to the next one's start.
func withEnds(es []Entry) []Entry {
	out := make([]Entry, len(es))
	copy(out, es)
	for i := range out {
		if i+1 < len(out) {
			out[i].EndOffset = out[i+1].StartOffset
		} else {
			out[i].EndOffset = math.MaxInt64
		}
	}
	return out
}

// Entries returns a copy of the entries.
func (f *File) Entries() []Entry {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return append([]Entry(nil), f.entries...)
}

// Last returns the last entry, if any.
func (f *File) Last() (Entry, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	if len(f.entries) == 0 {
		return Entry{}, false
	}
	return f.entries[len(f.entries)-1], true
}

// LastEpoch is the last entry's epoch, or -1 (Java's lastEpoch).
func (f *File) LastEpoch() int32 {
	if e, ok := f.Last(); ok {
		return e.Epoch
	}
	return -1
}

// Get returns the entry of epoch.
func (f *File) Get(epoch int32) (Entry, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, e := range f.entries {
		if e.Epoch == epoch {
			return e, true
		}
	}
	return Entry{}, false
}

// ByOffset returns the entry whose range holds off.
func (f *File) ByOffset(off int64) (Entry, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, e := range f.entries {
		if e.StartOffset <= off && off < e.EndOffset {
			return e, true
		}
	}
	return Entry{}, false
}

// Next returns the first entry after epoch.
func (f *File) Next(epoch int32) (Entry, bool) {
	f.mu.RLock()
	defer f.mu.RUnlock()
	for _, e := range f.entries {
		if e.Epoch > epoch {
			return e, true
		}
	}
	return Entry{}, false
}

// Append adds an entry after the last one and persists the file. Its
// epoch and start offset must be above the last entry's.
func (f *File) Append(epoch int32, start int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.entries); n > 0 {
		last := f.entries[n-1]
		if last.Epoch >= epoch || last.StartOffset >= start {
			return fmt.Errorf("%w: %d-%d after %d-%d", ErrNotIncreasing, epoch, start, last.Epoch, last.StartOffset)
		}
	}
	next := append(f.cloneLocked(), Entry{Epoch: epoch, StartOffset: start})
	return f.replaceLocked(next)
}

// cloneLocked copies the entries; mu held.
func (f *File) cloneLocked() []Entry { return append([]Entry(nil), f.entries...) }

// TruncateFromOffset drops the entries starting at or after off (Java's
// truncateSuffixByOffset) and persists the file.
func (f *File) TruncateFromOffset(off int64) error {
	return f.truncate(func(e Entry) bool { return e.StartOffset >= off })
}

// TruncateFromEpoch drops the entries of epoch and later (Java's
// truncateSuffixByEpoch) and persists the file.
func (f *File) TruncateFromEpoch(epoch int32) error {
	return f.truncate(func(e Entry) bool { return e.Epoch >= epoch })
}

// TruncateBelowOffset drops the entries that end at or before off
// (retention removed their data; Java's truncatePrefixByOffset).
func (f *File) TruncateBelowOffset(off int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []Entry
	for _, e := range f.entries {
		if e.EndOffset > off {
			keep = append(keep, e)
		}
	}
	if len(keep) == len(f.entries) {
		return nil
	}
	return f.replaceLocked(keep)
}

func (f *File) truncate(drop func(Entry) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	var keep []Entry
	for _, e := range f.entries {
		if !drop(e) {
			keep = append(keep, e)
		}
	}
	if len(keep) == len(f.entries) {
		return nil
	}
	return f.replaceLocked(keep)
}

// Reset replaces every entry (a slave adopting the master's list) and
// persists the file.
func (f *File) Reset(es []Entry) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 1; i < len(es); i++ {
		if es[i].Epoch <= es[i-1].Epoch || es[i].StartOffset < es[i-1].StartOffset {
			return fmt.Errorf("%w: %d-%d after %d-%d", ErrNotIncreasing, es[i].Epoch, es[i].StartOffset, es[i-1].Epoch, es[i-1].StartOffset)
		}
	}
	return f.replaceLocked(es)
}

// replaceLocked persists es and makes it the list; mu held. An empty list
// is not written (as Java): the file keeps its old content on disk, which
// the next non-empty write replaces, so callers wanting "no epochs" on disk
// must remove the file.
func (f *File) replaceLocked(es []Entry) error {
	if len(es) > 0 {
		if err := writeSafely(f.path, Format(es)); err != nil {
			return err
		}
	} else if err := removeBoth(f.path); err != nil {
		return err
	}
	f.entries = withEnds(es)
	return nil
}

func removeBoth(path string) error {
	for _, p := range []string{path, path + ".bak"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("epoch: remove %s: %w", p, err)
		}
	}
	syncDir(filepath.Dir(path))
	return nil
}

// writeSafely replaces path with b: the old content is copied to path.bak
// (synced), b goes to a synced temporary file renamed over path, and the
// directory is synced. A kill at any step leaves path or path.bak valid.
func writeSafely(path string, b []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("epoch: mkdir %s: %w", dir, err)
	}
	if old, err := os.ReadFile(path); err == nil && len(old) > 0 {
		if _, perr := Parse(old); perr == nil {
			if err := writeSynced(path+".bak", old); err != nil {
				return err
			}
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("epoch: read %s: %w", path, err)
	}
	tmp := path + ".tmp"
	if err := writeSynced(tmp, b); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("epoch: rename %s: %w", tmp, err)
	}
	syncDir(dir)
	return nil
}

func writeSynced(path string, b []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("epoch: create %s: %w", path, err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("epoch: write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("epoch: sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("epoch: close %s: %w", path, err)
	}
	return nil
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
}

// ConsistentPoint is Java's findConsistentPoint: walking local epochs from
// the newest, the first one the master has with the same start offset
// gives min(local end, master end), where each list's last entry ends at
// its side's max offset. -1 when they share no epoch.
func ConsistentPoint(local []Entry, localMax int64, master []Entry, masterMax int64) int64 {
	l, m := withEnds(local), withEnds(master)
	if len(l) > 0 {
		l[len(l)-1].EndOffset = localMax
	}
	if len(m) > 0 {
		m[len(m)-1].EndOffset = masterMax
	}
	for i := len(l) - 1; i >= 0; i-- {
		for _, me := range m {
			if me.Epoch == l[i].Epoch {
				if me.StartOffset == l[i].StartOffset {
					return min(l[i].EndOffset, me.EndOffset)
				}
				break
			}
		}
	}
	return -1
}
