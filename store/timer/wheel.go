package timer

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
)

// Wheel geometry and markers, as in Java's TimerWheel / TimerMessageStore.
const (
	SlotSize   = 32
	TTLDays    = 7 // the wheel spans 2 × 7 days of slots
	SlotsTotal = TTLDays * 86400
	BlankSlots = 60 // slots kept free behind the read time after a long stop

	// Ignore leaves a slot position unchanged in Revise.
	Ignore int64 = -2
)

var be = binary.BigEndian

// Slot is one wheel entry; TimeMs is -1 for an empty slot.
type Slot struct {
	TimeMs   int64
	FirstPos int64
	LastPos  int64
	Num      int32
	Magic    int32
}

// Empty reports whether the slot has no chain.
func (s Slot) Empty() bool { return s.TimeMs == -1 }

var emptySlot = Slot{TimeMs: -1, FirstPos: -1, LastPos: -1}

// Wheel is the fixed-size mapped file root/timerwheel. Not safe for
// concurrent use; Store serializes access.
type Wheel struct {
	m           *mfile
	slots       int64 // 2 × slotsTotal
	precisionMs int64
}

// WheelPath is Java's timer wheel file name.
func WheelPath(root string) string { return filepath.Join(root, "timerwheel") }

// OpenWheel maps (creating) the wheel file; an existing file of another
// size is refused, as Java does.
func OpenWheel(path string, slotsTotal int, precisionMs int64) (*Wheel, error) {
	if precisionMs <= 0 || slotsTotal <= 0 {
		return nil, fmt.Errorf("timer: wheel of %d slots, precision %d ms", slotsTotal, precisionMs)
	}
	size := int64(slotsTotal) * 2 * SlotSize
	if st, err := os.Stat(path); err == nil && st.Size() != 0 && st.Size() != size {
		return nil, fmt.Errorf("timer: wheel %s has %d bytes, expected %d", path, st.Size(), size)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("timer: %w", err)
	}
	m, err := mapFile(path, 0, size, true)
	if err != nil {
		return nil, err
	}
	return &Wheel{m: m, slots: int64(slotsTotal) * 2, precisionMs: precisionMs}, nil
}

func (w *Wheel) index(timeMs int64) int64 { return timeMs / w.precisionMs % w.slots }

func (w *Wheel) at(timeMs int64) []byte {
	i := w.index(timeMs) * SlotSize
	return w.m.data[i : i+SlotSize]
}

// Raw returns the slot stored where timeMs falls, whatever its time.
func (w *Wheel) Raw(timeMs int64) Slot {
	b := w.at(timeMs)
	return Slot{
		TimeMs:   int64(be.Uint64(b[0:])) * w.precisionMs,
		FirstPos: int64(be.Uint64(b[8:])),
		LastPos:  int64(be.Uint64(b[16:])),
		Num:      int32(be.Uint32(b[24:])),
		Magic:    int32(be.Uint32(b[28:])),
	}
}

// Get returns the slot of timeMs, or an empty one when the stored chain
// belongs to another time.
func (w *Wheel) Get(timeMs int64) Slot {
	s := w.Raw(timeMs)
	if s.TimeMs != timeMs/w.precisionMs*w.precisionMs {
		return emptySlot
	}
	return s
}

// num is the unit count of the slot of timeMs, 0 when the stored chain
// belongs to another time (Get(timeMs).Num without decoding the slot).
func (w *Wheel) num(timeMs int64) int32 {
	b := w.at(timeMs)
	if int64(be.Uint64(b[0:])) != timeMs/w.precisionMs {
		return 0
	}
	return int32(be.Uint32(b[24:]))
}

// Put writes the slot of timeMs.
func (w *Wheel) Put(timeMs int64, s Slot) {
	b := w.at(timeMs)
	be.PutUint64(b[0:], uint64(timeMs/w.precisionMs))
	be.PutUint64(b[8:], uint64(s.FirstPos))
	be.PutUint64(b[16:], uint64(s.LastPos))
	be.PutUint32(b[24:], uint32(s.Num))
	be.PutUint32(b[28:], uint32(s.Magic))
}

// Revise repoints the slot of timeMs (positions equal to Ignore are kept).
// A slot holding another time is replaced only when force is set.
func (w *Wheel) Revise(timeMs, first, last int64, force bool) {
	b := w.at(timeMs)
	if int64(be.Uint64(b[0:])) != timeMs/w.precisionMs {
		if force {
			if first == Ignore {
				first = last
			}
			w.Put(timeMs, Slot{FirstPos: first, LastPos: last})
		}
		return
	}
	if first != Ignore {
		be.PutUint64(b[8:], uint64(first))
	}
	if last != Ignore {
		be.PutUint64(b[16:], uint64(last))
	}
}

// MinFirstBeyond scans the live wheel (every slot from startMs on) and
// returns the smallest first position of a chain whose last position is
// beyond maxPos: the chains a lost timerlog tail may have cut.
func (w *Wheel) MinFirstBeyond(startMs, maxPos int64) int64 {
	minFirst := int64(-1)
	start := startMs / w.precisionMs
	for i := int64(0); i < w.slots; i++ {
		t := start + i
		b := w.m.data[(t%w.slots)*SlotSize:]
		if int64(be.Uint64(b[0:])) != t {
			continue
		}
		first, last := int64(be.Uint64(b[8:])), int64(be.Uint64(b[16:]))
		if last >= maxPos && first >= 0 && (minFirst < 0 || first < minFirst) {
			minFirst = first
		}
	}
	return minFirst
}

// Count sums the units of every live slot from startMs on (timers pending).
func (w *Wheel) Count(startMs int64) int64 {
	var n int64
	start := startMs / w.precisionMs
	for i := int64(0); i < w.slots; i++ {
		t := start + i
		b := w.m.data[(t%w.slots)*SlotSize:]
		if int64(be.Uint64(b[0:])) == t {
			n += int64(int32(be.Uint32(b[24:])))
		}
	}
	return n
}

// Flush writes the wheel's dirty pages back.
func (w *Wheel) Flush() error { return w.m.sync(0, int64(len(w.m.data))) }

// Close unmaps the wheel (without flushing).
func (w *Wheel) Close() error { return w.m.close() }

// dropBeyond empties live chains that lie wholly at or past end (their
// units were lost with a timerlog tail).
func (w *Wheel) dropBeyond(startMs, end int64) {
	start := startMs / w.precisionMs
	for i := int64(0); i < w.slots; i++ {
		t := start + i
		b := w.m.data[(t%w.slots)*SlotSize:]
		if int64(be.Uint64(b[0:])) != t || int64(be.Uint64(b[16:])) < end {
			continue
		}
		if first := int64(be.Uint64(b[8:])); first >= end || first < 0 {
			be.PutUint64(b[8:], ^uint64(0))
			be.PutUint64(b[16:], ^uint64(0))
		}
	}
}
