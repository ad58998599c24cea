package timer

import (
	"encoding/binary"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

const prec = 1000

func openTest(t *testing.T, root string, fileSize int64, now time.Time) *Store {
	t.Helper()
	s, err := Open(Config{RootDir: root, LogFileSize: fileSize, PrecisionMs: prec, Now: func() time.Time { return now }, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	return s
}

// The unit is laid out exactly as Java's doEnqueue writes it (int size,
// long prevPos, int magic, long writeTime, int delay, long offsetPy, int
// sizePy, int topicHash, long reserved), big-endian.
func TestUnitLayoutMatchesJava(t *testing.T) {
	u := Unit{PrevPos: 0x0102030405060708, Magic: MagicDefault | MagicRoll, WriteTimeMs: 1_700_000_000_000,
		DelayMs: 172_800_000, OffsetPy: 0x1122334455, SizePy: 321, TopicHash: -12345}
	var got [UnitSize]byte
	u.Encode(got[:])
	var want []byte
	want = binary.BigEndian.AppendUint32(want, 52)
	want = binary.BigEndian.AppendUint64(want, 0x0102030405060708)
	want = binary.BigEndian.AppendUint32(want, 3)
	want = binary.BigEndian.AppendUint64(want, 1_700_000_000_000)
	want = binary.BigEndian.AppendUint32(want, 172_800_000)
	want = binary.BigEndian.AppendUint64(want, 0x1122334455)
	want = binary.BigEndian.AppendUint32(want, 321)
	want = binary.BigEndian.AppendUint32(want, uint32(0xFFFFCFC7))
	want = binary.BigEndian.AppendUint64(want, 0)
	require.Equal(t, want, got[:])
	require.Equal(t, 28, offsetPyOffset) // Java UNIT_PRE_SIZE_FOR_MSG
	require.Equal(t, int64(0x1122334455), int64(binary.BigEndian.Uint64(got[offsetPyOffset:])))
	var back Unit
	require.True(t, decodeUnit(got[:], &back))
	require.Equal(t, u, back)
	require.Equal(t, int64(1_700_000_000_000+172_800_000), back.SlotTimeMs())
	bm := BlankMagic
	require.Equal(t, uint32(0xCBD43194), uint32(bm))
	require.Equal(t, blankMagicBits, uint32(bm))
	require.False(t, MagicOK(BlankMagic))
	require.True(t, MagicOK(MagicDefault|MagicRoll|MagicDelete))
}

// The wheel file has Java's size and slot layout: 32-byte slots at
// (time/precision mod 2·slotsTotal), the time stored in precision units.
func TestWheelLayoutAndWrap(t *testing.T) {
	root := t.TempDir()
	s := openTest(t, root, 4096, time.UnixMilli(1_700_000_000_000))
	defer s.Close()
	st, err := os.Stat(filepath.Join(root, "timerwheel"))
	require.NoError(t, err)
	require.Equal(t, int64(2*7*86400*32), st.Size()) // 38,707,200 bytes

	at := int64(1_700_000_123_000)
	_, err = s.Add(5000, 200, at, 1_700_000_000_000, 7, false)
	require.NoError(t, err)
	idx := at / prec % (2 * SlotsTotal)
	raw := s.wheel.m.data[idx*SlotSize : idx*SlotSize+SlotSize]
	require.Equal(t, uint64(at/prec), binary.BigEndian.Uint64(raw[0:]))
	require.Equal(t, uint64(0), binary.BigEndian.Uint64(raw[8:]))  // first unit at 0
	require.Equal(t, uint64(0), binary.BigEndian.Uint64(raw[16:])) // last unit at 0
	require.Equal(t, uint32(1), binary.BigEndian.Uint32(raw[24:]))

	// Wrap: a time one full wheel later shares the index but not the chain.
	later := at + 2*SlotsTotal*prec
	require.Equal(t, s.wheel.index(at), s.wheel.index(later))
	require.True(t, s.Slot(later).Empty())
	_, err = s.Add(6000, 200, later, later-1000, 7, false)
	require.NoError(t, err)
	require.True(t, s.Slot(at).Empty(), "the older chain is no longer matched")
	sl := s.Slot(later)
	require.Equal(t, later, sl.TimeMs)
	require.Equal(t, int64(UnitSize), sl.FirstPos)
	require.Equal(t, int32(1), sl.Num)
	var u Unit
	require.True(t, s.tlog.Read(sl.LastPos, &u))
	require.Equal(t, int64(-1), u.PrevPos, "a fresh chain starts at -1")
}

// Chains are walked in bounded batches, oldest first, across timerlog
// files (with Java's blank filler at each file's end).
func TestBatchWalksChainInOrder(t *testing.T) {
	root := t.TempDir()
	fileSize := int64(UnitSize*10 + 30) // 10 units, then a 30-byte blank
	s := openTest(t, root, fileSize, time.UnixMilli(1_000_000))
	defer s.Close()
	slotA, slotB := int64(1_005_000), int64(1_006_000)
	for i := range 95 {
		at := slotA
		if i%3 == 0 {
			at = slotB
		}
		_, err := s.Add(int64(i)*100, int32(i), at, 1_000_000, 0, false)
		require.NoError(t, err)
	}
	require.Len(t, s.tlog.files, 10)
	f0 := s.tlog.files[0].data
	require.Equal(t, uint32(30), binary.BigEndian.Uint32(f0[520:]))
	require.Equal(t, blankMagicBits, binary.BigEndian.Uint32(f0[532:]))

	collect := func(slotMs int64, batch int) []int64 {
		var got []int64
		buf := make([]Entry, 0, batch)
		after := int64(-1)
		for {
			es := s.Batch(s.Slot(slotMs), after, buf)
			for _, e := range es {
				require.Equal(t, slotMs, e.SlotTimeMs())
				got = append(got, e.OffsetPy/100)
				after = e.Pos
			}
			if len(es) < batch {
				return got
			}
		}
	}
	var wantA, wantB []int64
	for i := range int64(95) {
		if i%3 == 0 {
			wantB = append(wantB, i)
		} else {
			wantA = append(wantA, i)
		}
	}
	for _, batch := range []int{1, 7, 32, 63, 64, 1000} {
		require.Equal(t, wantA, collect(slotA, batch), "batch %d", batch)
		require.Equal(t, wantB, collect(slotB, batch), "batch %d", batch)
	}
	require.Equal(t, int32(len(wantA)), s.Slot(slotA).Num)
	require.Equal(t, int64(95), s.wheel.Count(1_000_000), "pending over the whole wheel")
	require.Equal(t, int64(len(wantB)), s.wheel.Count(slotB), "slot a lies before the start")
	var walked []int64
	s.Walk(s.Slot(slotB), func(pos int64, u *Unit) bool { walked = append(walked, u.OffsetPy/100); return true })
	require.Len(t, walked, len(wantB))
	require.Equal(t, wantB[len(wantB)-1], walked[0], "Walk goes newest first")
}

// Beyond the roll window a timer is chained into a nearer slot and marked
// MagicRoll (Java's doEnqueue arithmetic).
func TestAddRolls(t *testing.T) {
	s, err := Open(Config{RootDir: t.TempDir(), LogFileSize: 4096, PrecisionMs: prec, RollWindowSlots: 100, Logger: slog.New(slog.DiscardHandler)})
	require.NoError(t, err)
	defer s.Close()
	w := int64(50_000_000)
	got, err := s.Add(1, 1, w+99_000, w, 0, false)
	require.NoError(t, err)
	require.Equal(t, w+99_000, got, "inside the window: not rolled")
	got, err = s.Add(2, 1, w+110_000, w, 0, false) // 10 s past the window < 33 s: half window
	require.NoError(t, err)
	require.Equal(t, w+50_000, got)
	got, err = s.Add(3, 1, w+500_000, w, 0, true)
	require.NoError(t, err)
	require.Equal(t, w+100_000, got)
	es := s.Batch(s.Slot(w+100_000), -1, make([]Entry, 0, 4))
	require.Len(t, es, 1)
	require.Equal(t, MagicDefault|MagicRoll|MagicDelete, es[0].Magic)
	require.Equal(t, MagicDelete, s.Slot(w+100_000).Magic)
	require.Equal(t, int32(-1), s.Slot(w+100_000).Num)
}

// Flush + reopen restores read time, queue offset and in-slot progress;
// appends continue after the recovered tail.
func TestCheckpointReload(t *testing.T) {
	root := t.TempDir()
	now := time.UnixMilli(2_000_000_000_000)
	s := openTest(t, root, 1024, now)
	_, found := s.Resume()
	require.False(t, found)
	for i := range 30 {
		_, err := s.Add(int64(i), 10, now.UnixMilli()+5000, now.UnixMilli(), 0, false)
		require.NoError(t, err)
	}
	require.NoError(t, s.Flush(now.UnixMilli()+5000, 30, 7*UnitSize))
	require.NoError(t, s.Close())

	ck, found, err := ReadCheckpoint(filepath.Join(root, "config", "timercheck"))
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, int64(30), ck.LastTimerQueueOffset)
	require.Equal(t, int64(30), ck.MasterTimerQueueOffset)
	require.Equal(t, s.tlog == nil, true)
	raw, err := os.ReadFile(filepath.Join(root, "config", "timercheck"))
	require.NoError(t, err)
	require.Len(t, raw, 4096)
	require.Equal(t, uint64(now.UnixMilli()+5000), binary.BigEndian.Uint64(raw[0:]))
	require.Equal(t, uint64(30), binary.BigEndian.Uint64(raw[16:]))
	require.Equal(t, uint64(1), binary.BigEndian.Uint64(raw[48:]), "DataVersion counter")

	s = openTest(t, root, 1024, now.Add(time.Second))
	defer s.Close()
	r, found := s.Resume()
	require.True(t, found)
	require.Equal(t, now.UnixMilli()+5000, r.LastReadTimeMs)
	require.Equal(t, int64(30), r.LastTimerQueueOffset)
	require.Equal(t, int64(7*UnitSize), r.ProgressPos)
	es := s.Batch(s.Slot(now.UnixMilli()+5000), r.ProgressPos, make([]Entry, 0, 100))
	require.Len(t, es, 22)
	require.Equal(t, int64(8), es[0].OffsetPy)
	_, err = s.Add(99, 10, now.UnixMilli()+5000, now.UnixMilli(), 0, false)
	require.NoError(t, err)
	u, ok := s.LastUnit()
	require.True(t, ok)
	require.Equal(t, int64(99), u.OffsetPy)
	require.Len(t, s.Batch(s.Slot(now.UnixMilli()+5000), -1, make([]Entry, 0, 100)), 31)
}

// A torn timerlog tail (a crash mid-append, or a tail the OS lost while the
// wheel page survived) is cut and zeroed, and the wheel is re-pointed at
// the last surviving unit of each chain.
func TestTornTimerlogTail(t *testing.T) {
	root := t.TempDir()
	now := time.UnixMilli(2_000_000_000_000)
	fileSize := int64(UnitSize*8 + 16)
	s := openTest(t, root, fileSize, now)
	a, b := now.UnixMilli()+3000, now.UnixMilli()+4000
	for i := range 20 {
		at := a
		if i >= 12 {
			at = b // units 12.. go to b; b's whole chain lies past unit 12
		}
		_, err := s.Add(int64(i), 10, at, now.UnixMilli(), 0, false)
		require.NoError(t, err)
	}
	require.NoError(t, s.Flush(now.UnixMilli(), 20, -1))
	// Unit 10 (file 1, second unit) is half written; 11.. are "lost".
	f1 := s.tlog.files[1].data
	binary.BigEndian.PutUint32(f1[UnitSize+12:], 0xdeadbeef)
	require.NoError(t, s.Close())

	s = openTest(t, root, fileSize, now)
	defer s.Close()
	require.Equal(t, fileSize+UnitSize, s.tlog.WrotePos())
	require.Len(t, s.tlog.files, 2, "files after the tear are removed")
	_, err := os.Stat(filepath.Join(root, "timerlog", "00000000000000000432"))
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(root, "timerlog", "00000000000000000864"))
	require.True(t, os.IsNotExist(err))
	for _, x := range s.tlog.files[1].data[UnitSize:] {
		require.Zero(t, x)
	}
	var got []int64
	for _, e := range s.Batch(s.Slot(a), -1, make([]Entry, 0, 64)) {
		got = append(got, e.OffsetPy)
	}
	require.Equal(t, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8}, got)
	require.Equal(t, int64(-1), s.Slot(b).LastPos, "a chain wholly lost is emptied")
	require.Empty(t, s.Batch(s.Slot(b), -1, make([]Entry, 0, 64)))
	// New units land after the cut and chain onto the survivors.
	_, err = s.Add(100, 10, a, now.UnixMilli(), 0, false)
	require.NoError(t, err)
	es := s.Batch(s.Slot(a), -1, make([]Entry, 0, 64))
	require.Len(t, es, 10)
	require.Equal(t, int64(100), es[9].OffsetPy)
	require.Equal(t, fileSize+UnitSize, es[9].Pos)
}

// A wheel whose last page was lost (units flushed, slots not) is rebuilt
// from the timerlog on open.
func TestWheelRevisedFromTimerlog(t *testing.T) {
	root := t.TempDir()
	now := time.UnixMilli(2_000_000_000_000)
	s := openTest(t, root, 4096, now)
	at := now.UnixMilli() + 2000
	for i := range 5 {
		_, err := s.Add(int64(i), 10, at, now.UnixMilli(), 0, false)
		require.NoError(t, err)
	}
	require.NoError(t, s.Flush(now.UnixMilli(), 5, -1))
	// Pretend the wheel still has the slot as of unit 2.
	s.wheel.Put(at, Slot{FirstPos: 0, LastPos: 2 * UnitSize, Num: 3})
	require.NoError(t, s.Close())
	s = openTest(t, root, 4096, now)
	defer s.Close()
	require.Len(t, s.Batch(s.Slot(at), -1, make([]Entry, 0, 8)), 5)
}

// Timerlog files whose last unit points below the commit log's minimum
// offset are deleted, never the file being written.
func TestDeleteExpired(t *testing.T) {
	s := openTest(t, t.TempDir(), UnitSize*4+16, time.UnixMilli(1_000_000))
	defer s.Close()
	for i := range 10 {
		_, err := s.Add(int64(i)*1000, 10, 1_003_000, 1_000_000, 0, false)
		require.NoError(t, err)
	}
	require.Len(t, s.tlog.files, 3)
	n, err := s.DeleteExpired(3000) // file 0's last unit names 3000: kept
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = s.DeleteExpired(100_000)
	require.NoError(t, err)
	require.Equal(t, 2, n)
	require.Len(t, s.tlog.files, 1)
	// The chain now ends where its files went away.
	es := s.Batch(s.Slot(1_003_000), -1, make([]Entry, 0, 16))
	require.Len(t, es, 2)
	require.Equal(t, int64(8000), es[0].OffsetPy)
}

// Waypoints make batches start near their place in a long chain and
// change nothing in what the batches return.
func TestWaypointsBatches(t *testing.T) {
	s := openTest(t, t.TempDir(), UnitSize*1000+16, time.UnixMilli(1_000_000))
	defer s.Close()
	const n = 5000
	for i := range n {
		_, err := s.Add(int64(i), 1, 1_004_000, 1_000_000, 0, false)
		require.NoError(t, err)
	}
	slot := s.Slot(1_004_000)
	for _, tc := range []struct{ batch, table int }{{64, 16}, {64, 4096}, {100, 7}, {1, 3}, {4999, 2}} {
		w := NewWaypoints(tc.table)
		w.Reset(slot.Num, tc.batch)
		s.Walk(slot, func(pos int64, _ *Unit) bool { w.Add(pos); return true })
		buf := make([]Entry, 0, tc.batch)
		after, next := int64(-1), int64(0)
		for {
			es := s.BatchFrom(slot, w.Start(after, slot.LastPos), after, buf)
			for _, e := range es {
				require.Equal(t, next, e.OffsetPy, "batch %d table %d", tc.batch, tc.table)
				next++
				after = e.Pos
			}
			if len(es) < tc.batch {
				break
			}
		}
		require.Equal(t, int64(n), next, "batch %d table %d", tc.batch, tc.table)
	}
}

// Pending keeps a running count instead of walking the wheel: after any
// mix of adds, delete markers, reads moving on (in small and large steps),
// a chain of an earlier turn of the wheel being replaced while still
// counted, and a reopen, it equals the count a full walk of the wheel
// gives.
func TestPendingFollowsWheel(t *testing.T) {
	root := t.TempDir()
	now := time.UnixMilli(1_700_000_000_000)
	s := openTest(t, root, 1<<20, now)
	read := now.UnixMilli() / prec * prec
	rng := rand.New(rand.NewPCG(1, 2))
	check := func(step string) {
		t.Helper()
		want := s.wheel.Count(read)
		require.Equal(t, want, s.Pending(read), step)
	}
	check("fresh")
	for i := range 3000 {
		switch r := rng.IntN(10); {
		case r < 6:
			at := read + int64(rng.IntN(3600))*prec
			_, err := s.Add(int64(i), 1, at, read, 0, r == 0)
			require.NoError(t, err)
		case r < 9:
			read += int64(rng.IntN(5)) * prec
			check("step")
		default:
			read += int64(rng.IntN(2000)) * prec
			check("jump")
		}
	}
	// A counted chain replaced by the next turn of the wheel before any
	// Pending call walks past it.
	first := read + 10*prec
	_, err := s.Add(1, 1, first, read, 0, false)
	require.NoError(t, err)
	check("before the turn")
	writeMs := read + 700_000*prec
	_, err = s.Add(2, 1, first+2*SlotsTotal*prec, writeMs, 0, false)
	require.NoError(t, err)
	read = writeMs
	check("after the turn")
	read += 3 * SlotsTotal * prec // past the whole wheel
	check("past the wheel")
	require.NoError(t, s.Close())

	s = openTest(t, root, 1<<20, time.UnixMilli(read))
	defer s.Close()
	check("reopened")
}
