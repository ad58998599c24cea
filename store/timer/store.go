package timer

import (
	"errors"
	"fmt"
	"github.com/rocketgo/rocketgo/store/iolane"
	"log/slog"
	"slices"
	"sync"
	"time"
)

// Config configures a Store; zero values take Java's defaults.
type Config struct {
	RootDir         string
	LogFileSize     int64 // mappedFileSizeTimerLog
	PrecisionMs     int64 // timerPrecisionMs
	RollWindowSlots int   // timerRollWindowSlot
	Logger          *slog.Logger
	Now             func() time.Time
	// Lane is taken around each Flush's msyncs and fsync (package
	// iolane: the store's background lane); nil: none.
	Lane *iolane.Lane
}

// DefaultRollWindowSlots is Java's timerRollWindowSlot: two days.
const DefaultRollWindowSlots = 2 * 86400

// Store is the timer wheel of one broker: the wheel, the timerlog and the
// checkpoint. Add (the enqueue side) and Batch/Walk (the dequeue side) may
// run on different goroutines.
type Store struct {
	cfg       Config
	rollSlots int64
	log       *slog.Logger

	mu    sync.Mutex // guards wheel, tlog, ckf, ck
	wheel *Wheel
	tlog  *Log
	ckf   *checkpointFile
	ck    Checkpoint // last written

	start Checkpoint // where to resume, computed by Open
	found bool       // a checkpoint file existed

	// pending is the units chained in the slots from doneMs on, kept as
	// Add changes them so that Pending does not walk the whole wheel
	// (1.2 M slots, 39 MB) on every metrics scrape; guarded by mu.
	pending int64
	doneMs  int64
}

// Open opens the files under cfg.RootDir and recovers them: the timerlog
// tail is validated (a torn one is cut), the wheel is re-pointed at the
// surviving units, and Resume tells where enqueue and dequeue restart.
func Open(cfg Config) (*Store, error) {
	if cfg.LogFileSize <= 0 {
		cfg.LogFileSize = DefaultLogFileSize
	}
	if cfg.PrecisionMs <= 0 {
		cfg.PrecisionMs = 1000
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Store{cfg: cfg, log: cfg.Logger, rollSlots: int64(cfg.RollWindowSlots)}
	// compat: like Java, a window outside [2, slotsTotal-60] means the largest.
	if s.rollSlots > SlotsTotal-BlankSlots || s.rollSlots < 2 {
		s.rollSlots = SlotsTotal - BlankSlots
	}
	ck, found, err := ReadCheckpoint(CheckpointPath(cfg.RootDir))
	if err != nil {
		return nil, err
	}
	s.ck, s.found = ck, found
	if s.wheel, err = OpenWheel(WheelPath(cfg.RootDir), SlotsTotal, cfg.PrecisionMs); err != nil {
		return nil, err
	}
	if s.tlog, err = OpenLog(LogDir(cfg.RootDir), cfg.LogFileSize); err != nil {
		s.wheel.Close()
		return nil, err
	}
	if s.ckf, err = openCheckpointFile(CheckpointPath(cfg.RootDir)); err != nil {
		s.tlog.Close()
		s.wheel.Close()
		return nil, err
	}
	if err := s.recover(); err != nil {
		s.Close()
		return nil, err
	}
	s.doneMs = s.start.LastReadTimeMs / s.cfg.PrecisionMs * s.cfg.PrecisionMs
	s.pending = s.wheel.Count(s.doneMs)
	return s, nil
}

func (s *Store) recover() error {
	prec := s.cfg.PrecisionMs
	revise := func(pos int64, u *Unit) { s.wheel.Revise(u.SlotTimeMs(), Ignore, pos, true) }
	from := max(s.ck.LastTimerLogFlushPos-s.cfg.LogFileSize, 0)
	end, err := s.tlog.Recover(from, true, revise)
	if err != nil {
		return fmt.Errorf("timer: recover timerlog: %w", err)
	}
	st := s.ck
	st.LastTimerQueueOffset = min(st.LastTimerQueueOffset, st.MasterTimerQueueOffset)
	// compat: after a stop longer than the wheel, Java resumes 7 days minus
	// 60 slots back; older slots are lost.
	oldest := s.cfg.Now().UnixMilli()/prec*prec - SlotsTotal*prec + BlankSlots*prec
	if st.LastReadTimeMs < oldest {
		st.LastReadTimeMs = oldest
	}
	if len(s.tlog.files) == 0 {
		// No timerlog: nothing is pending, no chain can be followed.
		if !s.found {
			st.LastReadTimeMs = s.cfg.Now().UnixMilli() / prec * prec
		}
		s.start = st
		return nil
	}
	if st.ProgressSlotMs != st.LastReadTimeMs {
		st.ProgressPos = -1
	}
	// A lost timerlog tail may have cut chains the wheel still points
	// past: rescan from the oldest such chain and re-point them.
	if minFirst := s.wheel.MinFirstBeyond(st.LastReadTimeMs, end); minFirst >= 0 && minFirst < end {
		s.log.Warn("timer: wheel points past the timerlog; rescanning", "from", minFirst, "end", end)
		if _, err := s.tlog.Recover(minFirst, false, revise); err != nil {
			return fmt.Errorf("timer: rescan timerlog: %w", err)
		}
	}
	s.wheel.dropBeyond(st.LastReadTimeMs, end)
	s.start = st
	s.log.Info("timer: recovered", "readTimeMs", st.LastReadTimeMs, "queueOffset", st.LastTimerQueueOffset,
		"timerlogEnd", end, "checkpoint", s.found)
	return nil
}

// Resume is the recovered checkpoint: LastReadTimeMs (clamped to the
// wheel's span), LastTimerQueueOffset and the in-slot progress; found is
// false when there was no checkpoint file.
func (s *Store) Resume() (c Checkpoint, found bool) { return s.start, s.found }

// PrecisionMs is the slot width.
func (s *Store) PrecisionMs() int64 { return s.cfg.PrecisionMs }

// LastUnit returns the unit appended last, if any.
func (s *Store) LastUnit() (Unit, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var u Unit
	ok := s.tlog.Read(s.tlog.WrotePos()-UnitSize, &u)
	return u, ok
}

// Add chains a timer due at slot delayedMs (a multiple of the precision)
// into the wheel, writeMs being the current write time (the slot being
// filled now). A timer further than the roll window is chained into a
// nearer slot with MagicRoll, to be re-enqueued from there (Java's
// doEnqueue). It returns the slot used.
func (s *Store) Add(offsetPy int64, sizePy int32, delayedMs, writeMs int64, topicHash int32, deleteMarker bool) (slotMs int64, err error) {
	prec := s.cfg.PrecisionMs
	magic := MagicDefault
	window := s.rollSlots * prec
	if delayedMs-writeMs >= window {
		magic |= MagicRoll
		if delayedMs-writeMs-window < s.rollSlots/3*prec {
			delayedMs = writeMs + s.rollSlots/2*prec // leave time for the next roll
		} else {
			delayedMs = writeMs + window
		}
	}
	if deleteMarker {
		magic |= MagicDelete
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slot := s.wheel.Raw(delayedMs)
	if slot.TimeMs != delayedMs/prec*prec {
		// A chain of an earlier turn of the wheel is replaced: its units
		// leave the running count if they are still in it.
		if slot.TimeMs >= s.doneMs {
			s.pending -= int64(slot.Num)
		}
		slot = emptySlot
	}
	u := Unit{PrevPos: slot.LastPos, Magic: magic, WriteTimeMs: writeMs, DelayMs: int32(delayedMs - writeMs),
		OffsetPy: offsetPy, SizePy: sizePy, TopicHash: topicHash}
	pos, err := s.tlog.Append(&u)
	if err != nil {
		return 0, fmt.Errorf("timer: append timerlog: %w", err)
	}
	if slot.FirstPos == -1 {
		slot.FirstPos = pos
	}
	slot.LastPos = pos
	d := int64(1)
	if deleteMarker {
		d = -1
		slot.Magic |= MagicDelete
	}
	slot.Num += int32(d)
	if delayedMs >= s.doneMs {
		s.pending += d
	}
	s.wheel.Put(delayedMs, slot)
	return delayedMs, nil
}

// Slot returns the slot of timeMs (empty when nothing is chained there).
func (s *Store) Slot(timeMs int64) Slot {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.wheel.Get(timeMs)
}

// Pending is the number of timers chained in the slots from startMs on
// (Java's getDequeueBehindMessages), startMs being the dequeue's read
// time, which only moves forward: the running count drops the slots read
// since the last call, so a call costs the slots passed since, not the
// wheel. An earlier startMs than the last one's, or a jump past the whole
// wheel, counts the wheel afresh.
func (s *Store) Pending(startMs int64) int64 {
	prec := s.cfg.PrecisionMs
	startMs = startMs / prec * prec
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case startMs < s.doneMs || (startMs-s.doneMs)/prec >= s.wheel.slots:
		s.pending = s.wheel.Count(startMs)
	default:
		for t := s.doneMs; t < startMs; t += prec {
			s.pending -= int64(s.wheel.num(t))
		}
	}
	s.doneMs = startMs
	return s.pending
}

// Distribution sets dst[i] to the timers chained in the slots from
// bounds[i-1] (0 for i = 0) up to bounds[i] seconds after nowMs, as Java's
// timer_message_snapshot reads its wheel; dst has len(bounds).
func (s *Store) Distribution(nowMs int64, boundsSec []int64, dst []int64) {
	prec := s.cfg.PrecisionMs
	cur := nowMs / prec * prec
	s.mu.Lock()
	defer s.mu.Unlock()
	var from int64
	for i, b := range boundsSec {
		to := b * 1000 / prec
		var n int64
		for j := from; j < to; j++ {
			n += int64(s.wheel.num(cur + j*prec))
		}
		dst[i] = n
		from = to
	}
}

// Entry is a unit and its timerlog position.
type Entry struct {
	Pos int64
	Unit
}

// read returns the unit at pos if it belongs to slot.
func (s *Store) read(slot *Slot, pos int64, u *Unit) bool {
	s.mu.Lock()
	ok := s.tlog.Read(pos, u)
	s.mu.Unlock()
	p := s.cfg.PrecisionMs
	return ok && u.SlotTimeMs()/p == slot.TimeMs/p
}

// Batch fills dst (up to its capacity) with the oldest units of slot's
// chain positioned after after (-1: from the start), oldest first. Memory
// is bounded by cap(dst) whatever the chain's length: the chain runs
// newest to oldest, so each call walks it down to after and keeps the
// last cap(dst) units seen. A chain that breaks (a unit lost in a crash)
// ends there.
func (s *Store) Batch(slot Slot, after int64, dst []Entry) []Entry {
	return s.BatchFrom(slot, slot.LastPos, after, dst)
}

// BatchFrom is Batch walking from start, a unit of slot's chain at least
// cap(dst) units above after (see Waypoints), instead of the chain's end.
func (s *Store) BatchFrom(slot Slot, start, after int64, dst []Entry) []Entry {
	n := cap(dst)
	ring := dst[:n]
	if n == 0 || slot.Empty() {
		return dst[:0]
	}
	cnt := 0
	var u Unit
	for pos := start; pos > after && pos >= 0; {
		if !s.read(&slot, pos, &u) {
			break
		}
		ring[cnt%n] = Entry{Pos: pos, Unit: u}
		cnt++
		if u.PrevPos >= pos {
			break // chains only point backwards
		}
		pos = u.PrevPos
	}
	if cnt <= n {
		slices.Reverse(ring[:cnt])
		return ring[:cnt]
	}
	r := cnt % n // ring[r] is the newest of the kept units
	slices.Reverse(ring[:r])
	slices.Reverse(ring[r:])
	return ring
}

// Waypoints remembers, in a fixed-size table, every k-th position of a
// chain walked newest first, so that each batch of a long chain starts
// near its place instead of at the chain's end: delivering a slot of n
// units in batches of b costs O(n + n/b·k) unit reads, with k about
// max(b, n/len(table)).
type Waypoints struct {
	pos   []int64 // descending; pos[0] is the chain's end
	every int
	seen  int
}

// NewWaypoints makes a table of max entries.
func NewWaypoints(max int) *Waypoints { return &Waypoints{pos: make([]int64, 0, max)} }

// Reset prepares for a chain of about num units delivered in batches of
// batch.
func (w *Waypoints) Reset(num int32, batch int) {
	w.pos, w.seen = w.pos[:0], 0
	w.every = max(batch, int(num)/max(cap(w.pos), 1)+1)
}

// Add records the next position of the walk.
func (w *Waypoints) Add(pos int64) {
	if w.seen%w.every == 0 && len(w.pos) < cap(w.pos) {
		w.pos = append(w.pos, pos)
	}
	w.seen++
}

// Start returns where a batch of units after after should begin walking:
// the waypoint one step above the lowest waypoint above after, so that at
// least one stride (>= the batch size) of units lies between; fallback
// when the table knows nothing of after.
func (w *Waypoints) Start(after, fallback int64) int64 {
	j := -1
	for i, p := range w.pos { // descending
		if p <= after {
			break
		}
		j = i
	}
	if j <= 0 {
		return fallback
	}
	return w.pos[j-1]
}

// Walk calls fn for every unit of slot's chain, newest first, until fn
// returns false.
func (s *Store) Walk(slot Slot, fn func(pos int64, u *Unit) bool) {
	if slot.Empty() {
		return
	}
	var u Unit
	for pos := slot.LastPos; pos >= 0; {
		if !s.read(&slot, pos, &u) || !fn(pos, &u) || u.PrevPos >= pos {
			return
		}
		pos = u.PrevPos
	}
}

// Flush makes the timerlog and the wheel durable, then writes the
// checkpoint: every slot before readMs is delivered, and every timer-topic
// record before queueOffset is in the wheel (or delivered). progressPos
// (-1: none) is the last delivered unit of slot readMs.
func (s *Store) Flush(readMs, queueOffset, progressPos int64) error {
	defer s.cfg.Lane.Hold()() // before mu: Add never waits for the lane
	s.mu.Lock()
	defer s.mu.Unlock()
	flushed, err := s.tlog.Flush()
	if err != nil {
		return err
	}
	if err := s.wheel.Flush(); err != nil {
		return err
	}
	c := s.ck
	c.LastReadTimeMs, c.LastTimerLogFlushPos = readMs, flushed
	c.LastTimerQueueOffset, c.MasterTimerQueueOffset = queueOffset, queueOffset
	c.ProgressSlotMs, c.ProgressPos = readMs, progressPos
	if c.ProgressPos < 0 {
		c.ProgressSlotMs = 0
	}
	if c == s.ck {
		return nil
	}
	if c.LastReadTimeMs != s.ck.LastReadTimeMs || c.LastTimerQueueOffset != s.ck.LastTimerQueueOffset {
		c.Counter++ // compat: Java's DataVersion moves when read time or offset do
		c.Timestamp = s.cfg.Now().UnixMilli()
	}
	if err := s.ckf.write(&c); err != nil {
		return err
	}
	s.ck = c
	return nil
}

// DeleteExpired drops timerlog files whose every unit names a commit-log
// offset below minPy (messages removed by retention).
func (s *Store) DeleteExpired(minPy int64) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tlog.DeleteExpired(minPy)
}

// Close unmaps everything; call Flush first to persist progress.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if s.ckf != nil {
		errs = append(errs, s.ckf.close())
		s.ckf = nil
	}
	if s.tlog != nil {
		errs = append(errs, s.tlog.Close())
		s.tlog = nil
	}
	if s.wheel != nil {
		errs = append(errs, s.wheel.Close())
		s.wheel = nil
	}
	return errors.Join(errs...)
}
