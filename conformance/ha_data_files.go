package conformance

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// On-disk facts of Java's store (CommitLog / ConsumeQueue), kept here so
// the comparisons do not depend on rocketgo's store package.
const (
	magicMessageV1 = -626843481 // MessageDecoder.MESSAGE_MAGIC_CODE
	magicMessageV2 = -626843477 // MESSAGE_MAGIC_CODE_V2
	magicBlank     = -875286124 // BLANK_MAGIC_CODE: the rest of the segment is padding
	cqUnit         = 20         // consume queue entry: phyOffset int64, size int32, tagsCode int64
)

// segment is one file of a commit log or a consume queue, named by the
// 20-digit offset of its first byte.
type segment struct {
	base int64
	path string
	size int64
}

func (s segment) name() string { return filepath.Base(s.path) }

// segments lists dir's offset-named files by base offset (other names are
// skipped; a missing dir is an empty list).
func segments(dir string) ([]segment, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	var out []segment
	for _, e := range ents {
		if e.IsDir() || len(e.Name()) != 20 {
			continue
		}
		base, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		info, err := e.Info()
		if err != nil {
			return nil, fmt.Errorf("stat %s: %w", e.Name(), err)
		}
		out = append(out, segment{base: base, path: filepath.Join(dir, e.Name()), size: info.Size()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].base < out[j].base })
	return out, nil
}

func commitLogDir(store string) string { return filepath.Join(store, "commitlog") }

// recordHead is the size and magic code a stored record starts with.
type recordHead struct {
	size  int32
	magic int32
}

func readHead(b []byte, off int) (recordHead, bool) {
	if off+8 > len(b) {
		return recordHead{}, false
	}
	return recordHead{size: int32(binary.BigEndian.Uint32(b[off:])), magic: int32(binary.BigEndian.Uint32(b[off+4:]))}, true
}

// walkSegment returns where the records of a segment end: at the first
// zero size (never written), at a blank record (the segment's padded end:
// the whole file counts as written) or at the file's end. It fails on a
// header that is neither.
func walkSegment(b []byte) (end int, blank bool, err error) {
	off := 0
	for off < len(b) {
		h, ok := readHead(b, off)
		if !ok || h.size == 0 {
			return off, false, nil
		}
		switch h.magic {
		case magicBlank:
			return len(b), true, nil
		case magicMessageV1, magicMessageV2:
		default:
			return off, false, fmt.Errorf("record at +%d: magic %#x size %d", off, uint32(h.magic), h.size)
		}
		if h.size < 8 || off+int(h.size) > len(b) {
			return off, false, fmt.Errorf("record at +%d: size %d past the segment (%d bytes)", off, h.size, len(b))
		}
		off += int(h.size)
	}
	return off, false, nil
}

// commitLogEnd is the written end of a stopped broker's commit log: the
// last segment's base plus where its records end (an empty last segment,
// preallocated after a roll, ends at its base).
func commitLogEnd(store string) (int64, []segment, error) {
	segs, err := segments(commitLogDir(store))
	if err != nil || len(segs) == 0 {
		return 0, segs, err
	}
	last := segs[len(segs)-1]
	b, err := os.ReadFile(last.path)
	if err != nil {
		return 0, segs, fmt.Errorf("read %s: %w", last.path, err)
	}
	end, _, err := walkSegment(b)
	if err != nil {
		return 0, segs, fmt.Errorf("commit log %s: %w", last.path, err)
	}
	return last.base + int64(end), segs, nil
}

// recordContaining walks a segment's records to the one holding byte off
// and describes it (offset, size, topic, queue), for failure messages.
func recordContaining(b []byte, base int64, off int) string {
	pos := 0
	for pos < len(b) {
		h, ok := readHead(b, pos)
		if !ok || h.size <= 0 || h.magic == magicBlank || pos+int(h.size) > len(b) {
			break
		}
		if off < pos+int(h.size) {
			return describeRecord(b[pos:pos+int(h.size)], base+int64(pos))
		}
		pos += int(h.size)
	}
	return fmt.Sprintf("no whole record around %d (walk stopped at %d)", base+int64(off), base+int64(pos))
}

// describeRecord names a stored record: its commit-log offset, size,
// topic, queue id and queue offset.
func describeRecord(r []byte, at int64) string {
	if len(r) < 60 {
		return fmt.Sprintf("record at %d (%d bytes)", at, len(r))
	}
	qid := int32(binary.BigEndian.Uint32(r[12:]))
	qoff := int64(binary.BigEndian.Uint64(r[20:]))
	sysFlag := int32(binary.BigEndian.Uint32(r[36:]))
	pos := 4 + 4 + 4 + 4 + 4 + 8 + 8 + 4 + 8
	pos += hostLen(sysFlag&0x10 != 0) + 8 + hostLen(sysFlag&0x20 != 0) + 4 + 8
	topic := "?"
	if pos+4 <= len(r) {
		bodyLen := int(int32(binary.BigEndian.Uint32(r[pos:])))
		pos += 4 + bodyLen
		magic := int32(binary.BigEndian.Uint32(r[4:]))
		n, w := 0, 1
		if magic == magicMessageV2 {
			w = 2
		}
		if pos+w <= len(r) {
			if w == 1 {
				n = int(r[pos])
			} else {
				n = int(binary.BigEndian.Uint16(r[pos:]))
			}
			if pos+w+n <= len(r) {
				topic = string(r[pos+w : pos+w+n])
			}
		}
	}
	return fmt.Sprintf("record at %d (%d bytes, topic %s queue %d offset %d)", at, len(r), topic, qid, qoff)
}

func hostLen(v6 bool) int {
	if v6 {
		return 20
	}
	return 8
}

// logCompare is what compareCommitLogs saw.
type logCompare struct {
	Files int   // master segments overlapping the range
	Bytes int64 // bytes compared
}

// compareCommitLogs checks that the slave's commit log holds the master's
// bytes [from, to): every master segment overlapping the range exists on
// the slave under the same name, with the same bytes over the range.
func compareCommitLogs(masterStore, slaveStore string, from, to int64) (logCompare, error) {
	var res logCompare
	ms, err := segments(commitLogDir(masterStore))
	if err != nil {
		return res, err
	}
	ss, err := segments(commitLogDir(slaveStore))
	if err != nil {
		return res, err
	}
	slave := map[int64]segment{}
	for _, s := range ss {
		slave[s.base] = s
	}
	for _, m := range ms {
		lo, hi := max(from, m.base), min(to, m.base+m.size)
		if lo >= hi {
			continue
		}
		res.Files++
		s, ok := slave[m.base]
		if !ok {
			return res, fmt.Errorf("slave has no commit-log file %s (master's [%d, %d) of the compared [%d, %d)); slave files: %s",
				m.name(), lo, hi, from, to, segNames(ss))
		}
		if s.base+s.size < hi {
			return res, fmt.Errorf("slave commit-log file %s is %d bytes, the master's data runs to %d in it", s.name(), s.size, hi-m.base)
		}
		if err := compareRange(m, s, lo-m.base, hi-m.base); err != nil {
			return res, err
		}
		res.Bytes += hi - lo
	}
	if res.Bytes != to-from {
		return res, fmt.Errorf("master commit-log files cover %d of the %d bytes [%d, %d): %s", res.Bytes, to-from, from, to, segNames(ms))
	}
	return res, nil
}

func segNames(ss []segment) string {
	var names []string
	for _, s := range ss {
		names = append(names, fmt.Sprintf("%s(%d)", s.name(), s.size))
	}
	if len(names) > 12 {
		names = append(names[:6], append([]string{"…"}, names[len(names)-6:]...)...)
	}
	return strings.Join(names, " ")
}

// compareRange compares [lo, hi) of two same-named segments in 1 MiB
// chunks and names the first differing byte and the master's record there.
func compareRange(m, s segment, lo, hi int64) error {
	fm, err := os.Open(m.path)
	if err != nil {
		return err
	}
	defer fm.Close()
	fs, err := os.Open(s.path)
	if err != nil {
		return err
	}
	defer fs.Close()
	const chunk = 1 << 20
	bm, bs := make([]byte, chunk), make([]byte, chunk)
	for off := lo; off < hi; off += chunk {
		n := min(int64(chunk), hi-off)
		if _, err := fm.ReadAt(bm[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read master %s at %d: %w", m.path, off, err)
		}
		if _, err := fs.ReadAt(bs[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read slave %s at %d: %w", s.path, off, err)
		}
		if bytes.Equal(bm[:n], bs[:n]) {
			continue
		}
		i := 0
		for bm[i] == bs[i] {
			i++
		}
		at := off + int64(i)
		whole, _ := os.ReadFile(m.path)
		return fmt.Errorf("commit logs differ at offset %d (file %s +%d): master % x…, slave % x…; master's %s",
			m.base+at, m.name(), at, bm[i:min(int64(i+16), n)], bs[i:min(int64(i+16), n)], recordContaining(whole, m.base, int(at)))
	}
	return nil
}

// cqCompare is what compareConsumeQueues saw.
type cqCompare struct {
	Queues  int   // master queues with entries
	Entries int64 // entries compared
	Topics  int
}

// cqEntries is the number of written entries of a consume queue file: up
// to the first entry of size 0 (files are preallocated with zeros; Java's
// leading blank entries have size MaxInt32 and count as written).
func cqEntries(b []byte) int {
	n := 0
	for off := 0; off+cqUnit <= len(b); off += cqUnit {
		if binary.BigEndian.Uint32(b[off+8:]) == 0 {
			break
		}
		n++
	}
	return n
}

// compareConsumeQueues checks that every queue of the master's
// consumequeue/ exists on the slave with the same files holding the same
// entries (byte for byte up to the master's written length). A slave may
// miss nothing; queues only the slave has are reported in extra.
func compareConsumeQueues(masterStore, slaveStore string) (res cqCompare, extra []string, err error) {
	mroot, sroot := filepath.Join(masterStore, "consumequeue"), filepath.Join(slaveStore, "consumequeue")
	mq, err := queueDirs(mroot)
	if err != nil {
		return res, nil, err
	}
	sq, err := queueDirs(sroot)
	if err != nil {
		return res, nil, err
	}
	topics := map[string]bool{}
	for _, q := range mq {
		n, err := compareQueue(filepath.Join(mroot, q), filepath.Join(sroot, q), q)
		if err != nil {
			return res, nil, err
		}
		if n > 0 {
			res.Queues++
			res.Entries += n
			topics[filepath.Dir(q)] = true
		}
	}
	res.Topics = len(topics)
	have := map[string]bool{}
	for _, q := range mq {
		have[q] = true
	}
	for _, q := range sq {
		if !have[q] {
			extra = append(extra, q)
		}
	}
	return res, extra, nil
}

// queueDirs lists "topic/queueId" under a consumequeue root.
func queueDirs(root string) ([]string, error) {
	topics, err := os.ReadDir(root)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", root, err)
	}
	var out []string
	for _, t := range topics {
		if !t.IsDir() {
			continue
		}
		qs, err := os.ReadDir(filepath.Join(root, t.Name()))
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", t.Name(), err)
		}
		for _, q := range qs {
			if q.IsDir() {
				out = append(out, t.Name()+"/"+q.Name())
			}
		}
	}
	sort.Strings(out)
	return out, nil
}

// compareQueue compares one queue's files and returns the master's entry
// count.
func compareQueue(mdir, sdir, name string) (int64, error) {
	ms, err := segments(mdir)
	if err != nil {
		return 0, err
	}
	var total int64
	for _, m := range ms {
		mb, err := os.ReadFile(m.path)
		if err != nil {
			return total, fmt.Errorf("read %s: %w", m.path, err)
		}
		n := cqEntries(mb)
		if n == 0 {
			continue
		}
		total += int64(n)
		sb, err := os.ReadFile(filepath.Join(sdir, m.name()))
		if errors.Is(err, os.ErrNotExist) {
			ss, _ := segments(sdir)
			return total, fmt.Errorf("slave misses consume queue %s file %s (master: %d entries; slave files: %s)", name, m.name(), n, segNames(ss))
		}
		if err != nil {
			return total, fmt.Errorf("read slave %s/%s: %w", name, m.name(), err)
		}
		want := mb[:n*cqUnit]
		if len(sb) < len(want) {
			return total, fmt.Errorf("slave consume queue %s file %s is %d bytes, master has %d entries (%d bytes)", name, m.name(), len(sb), n, len(want))
		}
		if !bytes.Equal(want, sb[:len(want)]) {
			i := 0
			for want[i] == sb[i] {
				i++
			}
			e := i / cqUnit
			at := e * cqUnit
			return total, fmt.Errorf("consume queue %s file %s differs at entry %d (queue offset %d): master %s, slave %s",
				name, m.name(), e, m.base/cqUnit+int64(e), cqEntryString(mb[at:]), cqEntryString(sb[at:]))
		}
	}
	return total, nil
}

func cqEntryString(b []byte) string {
	if len(b) < cqUnit {
		return "(short)"
	}
	return fmt.Sprintf("{phy %d size %d tags %d}", int64(binary.BigEndian.Uint64(b)), int32(binary.BigEndian.Uint32(b[8:])), int64(binary.BigEndian.Uint64(b[12:])))
}
