package timer

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
)

// Timerlog unit layout (doc.go).
const (
	UnitSize       = 52
	MinBlankLen    = 4 + 8 + 4
	offsetPyOffset = 28 // Java's UNIT_PRE_SIZE_FOR_MSG

	MagicDefault int32 = 1
	MagicRoll    int32 = 1 << 1
	MagicDelete  int32 = 1 << 2

	// DefaultLogFileSize is Java's mappedFileSizeTimerLog.
	DefaultLogFileSize = 100 << 20
)

// BlankMagic marks the filler at the end of a timerlog file.
// compat: Java's 0xBBCCDDEE ^ 1880681586 + 8, where + binds first:
// 0xCBD43194.
const BlankMagic int32 = -0x342BCE6C

const blankMagicBits uint32 = 0xCBD43194

// MagicOK reports whether magic is a unit magic (flags in the low 4 bits).
func MagicOK(magic int32) bool { return magic|0xF == 0xF }

// Unit is one timerlog entry.
type Unit struct {
	PrevPos     int64
	Magic       int32
	WriteTimeMs int64
	DelayMs     int32
	OffsetPy    int64
	SizePy      int32
	TopicHash   int32
}

// SlotTimeMs is the slot the unit was chained into.
func (u *Unit) SlotTimeMs() int64 { return u.WriteTimeMs + int64(u.DelayMs) }

// Encode writes the 52-byte unit to b.
func (u *Unit) Encode(b []byte) {
	_ = b[UnitSize-1]
	be.PutUint32(b[0:], UnitSize)
	be.PutUint64(b[4:], uint64(u.PrevPos))
	be.PutUint32(b[12:], uint32(u.Magic))
	be.PutUint64(b[16:], uint64(u.WriteTimeMs))
	be.PutUint32(b[24:], uint32(u.DelayMs))
	be.PutUint64(b[28:], uint64(u.OffsetPy))
	be.PutUint32(b[36:], uint32(u.SizePy))
	be.PutUint32(b[40:], uint32(u.TopicHash))
	be.PutUint64(b[44:], 0)
}

// decodeUnit reads a unit; ok is false for anything but a whole valid unit.
func decodeUnit(b []byte, u *Unit) bool {
	if len(b) < UnitSize || int32(be.Uint32(b[0:])) != UnitSize {
		return false
	}
	u.PrevPos = int64(be.Uint64(b[4:]))
	u.Magic = int32(be.Uint32(b[12:]))
	u.WriteTimeMs = int64(be.Uint64(b[16:]))
	u.DelayMs = int32(be.Uint32(b[24:]))
	u.OffsetPy = int64(be.Uint64(b[28:]))
	u.SizePy = int32(be.Uint32(b[36:]))
	u.TopicHash = int32(be.Uint32(b[40:]))
	return MagicOK(u.Magic)
}

// Log is the timerlog: mapped files named by start position, units
// appended back to back. Not safe for concurrent use; Store serializes
// access.
type Log struct {
	dir      string
	fileSize int64
	files    []*mfile // ascending start, contiguous
	wrote    int64    // end of the last unit
	flushed  int64    // Invariant: flushed <= wrote
}

// LogDir is Java's timerlog directory.
func LogDir(root string) string { return filepath.Join(root, "timerlog") }

// OpenLog maps every file of dir; the write position is set by Recover.
func OpenLog(dir string, fileSize int64) (*Log, error) {
	if fileSize < UnitSize+MinBlankLen {
		return nil, fmt.Errorf("timer: timerlog file size %d too small", fileSize)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("timer: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("timer: read %s: %w", dir, err)
	}
	l := &Log{dir: dir, fileSize: fileSize}
	var starts []int64
	for _, e := range ents {
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil || len(e.Name()) != 20 || e.IsDir() {
			continue
		}
		starts = append(starts, n)
	}
	sort.Slice(starts, func(i, j int) bool { return starts[i] < starts[j] })
	for i, s := range starts {
		if s%fileSize != 0 || (i > 0 && s != starts[i-1]+fileSize) {
			l.Close()
			return nil, fmt.Errorf("timer: timerlog file %020d does not follow (file size %d)", s, fileSize)
		}
		m, err := mapFile(filepath.Join(dir, fmt.Sprintf("%020d", s)), s, fileSize, false)
		if err != nil {
			l.Close()
			return nil, err
		}
		l.files = append(l.files, m)
	}
	if len(l.files) > 0 {
		l.wrote = l.files[len(l.files)-1].start + fileSize
		l.flushed = l.wrote
	}
	return l, nil
}

// MinPos is the first position still on disk.
func (l *Log) MinPos() int64 {
	if len(l.files) == 0 {
		return l.wrote
	}
	return l.files[0].start
}

// WrotePos is the end of the last unit.
func (l *Log) WrotePos() int64 { return l.wrote }

func (l *Log) file(pos int64) *mfile {
	if len(l.files) == 0 || pos < l.files[0].start {
		return nil
	}
	i := (pos - l.files[0].start) / l.fileSize
	if i >= int64(len(l.files)) {
		return nil
	}
	return l.files[i]
}

// Append writes u and returns its position.
func (l *Log) Append(u *Unit) (int64, error) {
	f := l.file(l.wrote)
	if f == nil || l.wrote == f.start+l.fileSize {
		var err error
		if f, err = l.newFile(l.wrote); err != nil {
			return -1, err
		}
	}
	off := l.wrote - f.start
	if off+UnitSize+MinBlankLen > l.fileSize {
		b := f.data[off:]
		be.PutUint32(b[0:], uint32(l.fileSize-off))
		be.PutUint64(b[4:], 0)
		be.PutUint32(b[12:], blankMagicBits)
		l.wrote = f.start + l.fileSize
		var err error
		if f, err = l.newFile(l.wrote); err != nil {
			return -1, err
		}
		off = 0
	}
	pos := l.wrote
	u.Encode(f.data[off : off+UnitSize])
	l.wrote += UnitSize
	return pos, nil
}

func (l *Log) newFile(start int64) (*mfile, error) {
	start = start / l.fileSize * l.fileSize
	m, err := mapFile(filepath.Join(l.dir, fmt.Sprintf("%020d", start)), start, l.fileSize, true)
	if err != nil {
		return nil, err
	}
	l.files = append(l.files, m)
	return m, nil
}

// Read decodes the unit at pos; false when pos holds no valid unit.
func (l *Log) Read(pos int64, u *Unit) bool {
	if pos < 0 || pos+UnitSize > l.wrote {
		return false
	}
	f := l.file(pos)
	if f == nil {
		return false
	}
	off := pos - f.start
	if off+UnitSize > l.fileSize {
		return false
	}
	return decodeUnit(f.data[off:off+UnitSize], u)
}

// Flush writes back everything appended; it returns the durable position.
func (l *Log) Flush() (int64, error) {
	for _, f := range l.files {
		end := f.start + l.fileSize
		if end <= l.flushed || f.start >= l.wrote {
			continue
		}
		if err := f.sync(max(l.flushed, f.start)-f.start, min(l.wrote, end)-f.start); err != nil {
			return l.flushed, err
		}
	}
	l.flushed = l.wrote
	return l.flushed, nil
}

// Recover scans units from the file holding from (0: the first file) and
// returns the end of the valid units. When truncate is set, the scan stops
// at the first damaged unit, which becomes the write position; the rest of
// that file is zeroed and later files are deleted. visit sees every valid
// unit.
func (l *Log) Recover(from int64, truncate bool, visit func(pos int64, u *Unit)) (int64, error) {
	if len(l.files) == 0 {
		l.wrote, l.flushed = 0, 0
		return 0, nil
	}
	i := 0
	if f := l.file(from); f != nil {
		i = int((f.start - l.files[0].start) / l.fileSize)
	}
	end := l.files[i].start
	var u Unit
scan:
	for ; i < len(l.files); i++ {
		f := l.files[i]
		for off := int64(0); off+MinBlankLen <= l.fileSize; off += UnitSize {
			b := f.data[off:]
			size, magic := int32(be.Uint32(b[0:])), int32(be.Uint32(b[12:]))
			if magic == BlankMagic {
				end = f.start + l.fileSize
				continue scan
			}
			if off+UnitSize > l.fileSize || size != UnitSize || !MagicOK(magic) {
				if truncate {
					end = f.start + off
					break scan
				}
				end = f.start + off
				break
			}
			decodeUnit(b[:UnitSize], &u)
			if visit != nil {
				visit(f.start+off, &u)
			}
			end = f.start + off + UnitSize
		}
	}
	if !truncate {
		return end, nil
	}
	return end, l.truncate(end)
}

// truncate makes end the write position: the rest of its file is zeroed
// and later files are removed.
func (l *Log) truncate(end int64) error {
	var errs []error
	keep := l.files[:0]
	for _, f := range l.files {
		switch {
		case f.start+l.fileSize <= end:
			keep = append(keep, f)
		case f.start <= end && end < f.start+l.fileSize:
			clear(f.data[end-f.start:])
			if err := f.sync(end-f.start, l.fileSize); err != nil {
				errs = append(errs, err)
			}
			keep = append(keep, f)
		default:
			errs = append(errs, f.close(), os.Remove(f.path))
		}
	}
	l.files = keep
	l.wrote = end
	l.flushed = end
	return errors.Join(errs...)
}

// DeleteExpired removes whole files, oldest first and never the one being
// written, whose last unit names a commit-log offset below minPy: every
// message they point to is gone (Java's deleteExpiredFileByOffsetForTimerLog).
func (l *Log) DeleteExpired(minPy int64) (int, error) {
	n := 0
	lastUnit := l.fileSize - (l.fileSize-MinBlankLen)%UnitSize - MinBlankLen - UnitSize
	var u Unit
	for len(l.files) > 1 {
		f := l.files[0]
		if f.start+l.fileSize > l.wrote {
			break
		}
		if !decodeUnit(f.data[lastUnit:lastUnit+UnitSize], &u) || u.OffsetPy >= minPy {
			break
		}
		if err := f.close(); err != nil {
			return n, err
		}
		if err := os.Remove(f.path); err != nil {
			return n, fmt.Errorf("timer: delete %s: %w", f.path, err)
		}
		l.files = l.files[1:]
		n++
	}
	return n, nil
}

// Close unmaps every file (without flushing).
func (l *Log) Close() error {
	var errs []error
	for _, f := range l.files {
		errs = append(errs, f.close())
	}
	l.files = nil
	return errors.Join(errs...)
}
