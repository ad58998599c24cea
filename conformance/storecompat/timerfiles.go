package storecompat

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Java's timer store geometry (TimerMessageStore, TimerWheel, TimerLog),
// restated here so the files are read independently of either broker.
const (
	timerSlotsTotal = 7 * 86400 // the wheel holds 2 × this many 32-byte slots
	timerSlotSize   = 32
	timerUnitSize   = 52
)

// TimerState is what a store's timer files say: config/timercheck, the
// live part of timerwheel and the head of timerlog. PrecisionMs must be
// the brokers' timerPrecisionMs.
type TimerState struct {
	ReadTimeMs, FlushPos, QueueOffset, MasterQueueOffset int64
	LiveSlots                                            int   // wheel slots from ReadTimeMs on that hold a chain
	Pending                                              int64 // the sum of their unit counts
	Units                                                int   // whole units from the start of the first timerlog file
}

// ReadTimerState reads the timer files of store.
func ReadTimerState(store string, precisionMs int64) (TimerState, error) {
	var st TimerState
	ck, err := os.ReadFile(filepath.Join(store, "config", "timercheck"))
	if err != nil {
		return st, fmt.Errorf("storecompat: timer checkpoint: %w", err)
	}
	if len(ck) < 32 {
		return st, fmt.Errorf("storecompat: timer checkpoint of %d bytes", len(ck))
	}
	be := binary.BigEndian
	st.ReadTimeMs, st.FlushPos = int64(be.Uint64(ck[0:])), int64(be.Uint64(ck[8:]))
	st.QueueOffset, st.MasterQueueOffset = int64(be.Uint64(ck[16:])), int64(be.Uint64(ck[24:]))

	wheel, err := os.ReadFile(filepath.Join(store, "timerwheel"))
	if err != nil {
		return st, fmt.Errorf("storecompat: timer wheel: %w", err)
	}
	slots := int64(2 * timerSlotsTotal)
	if int64(len(wheel)) != slots*timerSlotSize {
		return st, fmt.Errorf("storecompat: timer wheel of %d bytes, want %d", len(wheel), slots*timerSlotSize)
	}
	start := st.ReadTimeMs / precisionMs
	for i := range slots {
		t := start + i
		b := wheel[(t%slots)*timerSlotSize:]
		if int64(be.Uint64(b)) == t {
			st.LiveSlots++
			st.Pending += int64(int32(be.Uint32(b[24:])))
		}
	}

	names, err := filepath.Glob(filepath.Join(store, "timerlog", "????????????????????"))
	if err != nil || len(names) == 0 {
		return st, fmt.Errorf("storecompat: no timerlog file (%v)", err)
	}
	sort.Strings(names)
	f, err := os.Open(names[0])
	if err != nil {
		return st, fmt.Errorf("storecompat: timerlog: %w", err)
	}
	defer f.Close()
	head := make([]byte, 1<<20)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) {
		return st, fmt.Errorf("storecompat: read timerlog: %w", err)
	}
	for off := 0; off+timerUnitSize <= n; off += timerUnitSize {
		size, magic := int32(be.Uint32(head[off:])), int32(be.Uint32(head[off+12:]))
		if size != timerUnitSize || magic|0xF != 0xF || magic == 0 {
			break
		}
		st.Units++
	}
	return st, nil
}
