package broker

import (
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rocketgo/rocketgo/store/timer"
)

// Timer (5.x "wheel timer") messages carry their delivery time in
// TIMER_DELIVER_MS, or a delay in TIMER_DELAY_SEC / TIMER_DELAY_MS. The
// send path rewrites them into rmq_sys_wheel_timer (scheduleTimer); the
// timerService chains each timer-topic record into the on-disk wheel
// (store/timer) and re-stores it under its real topic when its slot ends.
const (
	timerCheckGroup   = "CID_SYS_RMQ_TIMER" // delivered prefix kept by rocketgo before the wheel; read once to migrate
	timerEnqueueBatch = 256                 // timer-topic units read per step
	timerDequeueBatch = 1024                // units delivered per step: bounds the memory a slot costs
	timerCleanEvery   = 30 * time.Second
)

// timerPrecision is timerPrecisionMs as Java applies it: rounded down to
// 100, 200, 500 or 1000.
func timerPrecision(cfg *Config) int64 {
	p := int64(100)
	for _, c := range []int64{200, 500, 1000} {
		if cfg.TimerPrecisionMs >= c {
			p = c
		}
	}
	return p
}

func timerMaxDelayMs(cfg *Config) int64 { return cfg.TimerMaxDelaySec * 1000 }

// timerDeliverAt returns when a timer message is due: ok is false for a
// message without timer properties, bad when they do not parse
// (HookUtils.transformTimerMessage). The older __STARTDELIVERTIME (an
// absolute time in ms, set by OpenMessaging and Aliyun's clients) counts as
// TIMER_DELIVER_MS when no 5.x property is present; the open-source Java
// broker ignores it.
func timerDeliverAt(props string, now int64) (at int64, ok, bad bool) {
	if v, has := message.Property(props, message.PropertyTimerDelaySec); has {
		n, err := strconv.ParseInt(v, 10, 64)
		return now + n*1000, true, err != nil
	}
	if v, has := message.Property(props, message.PropertyTimerDelayMs); has {
		n, err := strconv.ParseInt(v, 10, 64)
		return now + n, true, err != nil
	}
	if v, has := message.Property(props, message.PropertyTimerDeliverMs); has {
		n, err := strconv.ParseInt(v, 10, 64)
		return n, true, err != nil
	}
	if v, has := message.Property(props, message.PropertyStartDeliverTime); has {
		n, err := strconv.ParseInt(v, 10, 64)
		return n, true, err != nil
	}
	return 0, false, false
}

// scheduleTimer rewrites a due-later timer message into the timer topic
// (Java's HookUtils.handleScheduleMessage). A refused message gets the
// response code and remark to answer with; RespSuccess otherwise.
func scheduleTimer(cfg *Config, m *message.Message, now int64) (codec.ResponseCode, string) {
	at, ok, bad := timerDeliverAt(m.Properties, now)
	if !ok || m.Topic == timerTopic {
		return codec.RespSuccess, ""
	}
	if _, has := message.Property(m.Properties, message.PropertyTimerOutMs); has {
		return codec.RespSuccess, ""
	}
	if lvl, delayed := message.Property(m.Properties, message.PropertyDelayLevel); delayed {
		if n, _ := strconv.Atoi(lvl); n > 0 {
			// Like Java: a delay level wins and the timer properties go;
			// send.go schedules the level.
			for _, k := range []string{message.PropertyTimerDeliverMs, message.PropertyTimerDelaySec, message.PropertyTimerDelayMs} {
				m.Properties = message.DeleteProperty(m.Properties, k)
			}
			return codec.RespSuccess, ""
		}
	}
	if !cfg.TimerWheelEnable {
		return codec.RespSystemError, remarks.TimerNotEnabled
	}
	if bad {
		return codec.RespMessageIllegal, remarks.TimerIllegal(timerMaxDelayMs(cfg))
	}
	if at <= now {
		if _, del := message.Property(m.Properties, message.PropertyTimerDelUniqKey); del {
			return codec.RespMessageIllegal, remarks.TimerIllegal(timerMaxDelayMs(cfg))
		}
		return codec.RespSuccess, "" // due already: deliver as a normal message
	}
	if at-now > timerMaxDelayMs(cfg) {
		return codec.RespMessageIllegal, remarks.TimerIllegal(timerMaxDelayMs(cfg))
	}
	// compat: Java rounds down to the precision (a multiple goes one step
	// earlier), so the requested time lies in (at, at+precision]: the slot
	// at is delivered once it has ended, never early.
	p := timerPrecision(cfg)
	if at%p == 0 {
		at -= p
	} else {
		at = at / p * p
	}
	props := message.SetProperty(m.Properties, message.PropertyTimerOutMs, strconv.FormatInt(at, 10))
	props = message.SetProperty(props, message.PropertyRealTopic, m.Topic)
	props = message.SetProperty(props, message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Properties = props
	m.Topic = timerTopic
	m.QueueID = 0
	return codec.RespSuccess, ""
}

// timerService moves timer-topic records through the on-disk wheel
// (Java's TimerMessageStore). Two goroutines:
//
//   - enqueue reads the timer topic's consume queue from the checkpointed
//     offset and chains each record into its slot (the body stays in the
//     commit log); one already due is delivered at once. It alone moves
//     writeMs, the first slot still open, at each slot boundary.
//   - dequeue delivers each slot below writeMs in bounded batches, then
//     moves readMs on, and persists progress every timerFlushIntervalMs.
//
// Invariant: enqueue chains only into slots >= writeMs and dequeue reads
// only slots < writeMs, so a slot is never delivered while it can still
// grow. Memory does not depend on the number of pending timers.
type timerService struct {
	store MessageStore
	log   *slog.Logger
	ts    *timer.Store // nil when timerWheelEnable is false
	prec  int64
	flush time.Duration // timerFlushIntervalMs
	// offsets holds the delivered prefix of the heap-based timer this
	// service replaced, used once when there is no timer checkpoint.
	offsets *offsetTable
	metrics *timerMetrics // nil with metrics off

	writeMs  atomic.Int64 // currWriteTimeMs; stored by the enqueue goroutine only
	readMs   atomic.Int64 // next slot to deliver; stored by the dequeue goroutine only
	queueOff atomic.Int64 // next timer-topic offset to enqueue
	progress atomic.Int64 // last delivered unit of slot readMs, -1 none

	kick  chan struct{} // timer-topic records arrived
	moved chan struct{} // writeMs moved
	quit  chan struct{}
	wg    sync.WaitGroup

	// dequeue goroutine only
	batch []timer.Entry
	wps   *timer.Waypoints
	dels  map[string]struct{}
}

func newTimerService(cfg *Config, st MessageStore, offsets *offsetTable, log *slog.Logger) (*timerService, error) {
	t := &timerService{store: st, offsets: offsets, log: log, prec: timerPrecision(cfg),
		flush: time.Duration(max(cfg.TimerFlushIntervalMs, 10)) * time.Millisecond,
		kick:  make(chan struct{}, 1), moved: make(chan struct{}, 1), quit: make(chan struct{}),
		dels: make(map[string]struct{})}
	if !cfg.TimerWheelEnable {
		return t, nil
	}
	ts, err := timer.Open(timer.Config{RootDir: cfg.StorePathRootDir, LogFileSize: cfg.MappedFileSizeTimerLog,
		PrecisionMs: t.prec, RollWindowSlots: cfg.TimerRollWindowSlot, Logger: log, Lane: st.BackgroundIO()})
	if err != nil {
		return nil, fmt.Errorf("broker: open timer wheel: %w", err)
	}
	t.ts = ts
	return t, nil
}

func (t *timerService) start() {
	if t.ts == nil {
		return
	}
	r, found := t.ts.Resume()
	q := r.LastTimerQueueOffset
	if !found {
		if cp, ok := t.offsets.query(timerCheckGroup, timerTopic, 0); ok {
			q = cp
		}
	}
	// Records chained after the last checkpoint need not be chained again:
	// resume after the record of the last unit (Java's reviseQueueOffset).
	if u, ok := t.ts.LastUnit(); ok {
		if rec, err := t.store.ReadRecord(u.OffsetPy, u.SizePy); err == nil {
			var e message.Ext
			if message.Decode(rec, &e) == nil && e.Topic == timerTopic && e.QueueOffset+1 > q {
				q = e.QueueOffset + 1
			}
		}
	}
	q = max(q, t.store.MinOffset(timerTopic, 0))
	q = min(q, t.store.MaxOffset(timerTopic, 0))
	t.queueOff.Store(q)
	t.readMs.Store(r.LastReadTimeMs / t.prec * t.prec)
	t.progress.Store(r.ProgressPos)
	t.writeMs.Store(time.Now().UnixMilli() / t.prec * t.prec)
	t.batch = make([]timer.Entry, 0, timerDequeueBatch)
	t.wps = timer.NewWaypoints(4096)
	t.quit = make(chan struct{}) // a new one per start: halt closes it
	t.wg.Add(2)
	go t.enqueueLoop()
	go t.dequeueLoop()
}

// stop ends both loops and persists where they stopped.
func (t *timerService) stop() {
	t.halt()
	t.close()
}

// halt ends both loops and persists where they stopped; start resumes
// (a role change: a slave delivers no timers).
func (t *timerService) halt() {
	if t.ts == nil {
		return
	}
	close(t.quit)
	t.wg.Wait()
	if err := t.persist(); err != nil {
		t.log.Error("timer: persist on stop", "err", err)
	}
}

// close releases the wheel files (also for a broker never started).
func (t *timerService) close() {
	if t.ts == nil {
		return
	}
	if err := t.ts.Close(); err != nil {
		t.log.Error("timer: close", "err", err)
	}
	t.ts = nil
}

// arrived is told about new timer-topic records.
func (t *timerService) arrived() { notify(t.kick) }

func notify(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

func (t *timerService) stopping() bool {
	select {
	case <-t.quit:
		return true
	default:
		return false
	}
}

// pause waits d or until stop; false when stopping.
func (t *timerService) pause(d time.Duration) bool {
	tm := time.NewTimer(d)
	defer tm.Stop()
	select {
	case <-t.quit:
		return false
	case <-tm.C:
		return true
	}
}

func (t *timerService) persist() error {
	return t.ts.Flush(t.readMs.Load(), t.queueOff.Load(), t.progress.Load())
}

// ---- enqueue ----

func (t *timerService) enqueueLoop() {
	defer t.wg.Done()
	tick := time.NewTimer(0)
	defer tick.Stop()
	units := make([]store.CQUnit, 0, timerEnqueueBatch)
	for {
		select {
		case <-t.quit:
			return
		case <-t.kick:
		case <-tick.C:
		}
		for !t.stopping() {
			t.moveWriteTime()
			if t.enqueue(&units) == 0 {
				break
			}
		}
		// Wake at the next slot boundary (to open it) or within 100 ms.
		now := time.Now().UnixMilli()
		wait := min(time.Duration(t.prec-now%t.prec)*time.Millisecond, 100*time.Millisecond)
		if !tick.Stop() {
			select {
			case <-tick.C:
			default:
			}
		}
		tick.Reset(wait)
	}
}

func (t *timerService) moveWriteTime() {
	if w := time.Now().UnixMilli() / t.prec * t.prec; w > t.writeMs.Load() {
		t.writeMs.Store(w)
		notify(t.moved)
	}
}

// enqueue chains the next timer-topic records and returns how many it
// consumed.
func (t *timerService) enqueue(units *[]store.CQUnit) int {
	off := t.queueOff.Load()
	if lo := t.store.MinOffset(timerTopic, 0); off < lo {
		t.log.Warn("timer: records removed before they were enqueued", "from", off, "to", lo)
		off = lo
		t.queueOff.Store(off)
	}
	us, _ := t.store.ConsumeQueueUnits(timerTopic, 0, off, timerEnqueueBatch, (*units)[:0])
	*units = us[:0]
	for i := range us {
		if !t.enqueueOne(&us[i]) {
			return i
		}
		t.queueOff.Store(us[i].QueueOffset + 1)
	}
	return len(us)
}

// enqueueOne chains one record; false when stopping before it is done.
func (t *timerService) enqueueOne(u *store.CQUnit) bool {
	rec, err := t.store.ReadRecord(u.PhyOffset, u.Size)
	var e message.Ext
	if err == nil {
		err = message.Decode(rec, &e)
	}
	if err != nil {
		t.log.Warn("timer: unreadable timer record skipped", "queueOffset", u.QueueOffset, "err", err)
		return true
	}
	v, _ := message.Property(e.Properties, message.PropertyTimerOutMs)
	at, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.log.Warn("timer: record without TIMER_OUT_MS skipped", "queueOffset", u.QueueOffset)
		return true
	}
	_, del := message.Property(e.Properties, message.PropertyTimerDelUniqKey)
	realTopic, _ := message.Property(e.Properties, message.PropertyRealTopic)
	w := t.writeMs.Load()
	if at < w && del {
		return true // compat: a delete marker past its time is dropped, as Java does
	}
	if at < w {
		// Its slot has ended already: deliver now, marked as never enqueued.
		t.metrics.onEnqueue(realTopic, at, e.BornTimestamp, del)
		t.metrics.onExpired(e.StoreTimestamp)
		t.metrics.onDequeue(realTopic)
		return t.deliverNow(&e, math.MaxInt64, false)
	}
	for {
		_, err := t.ts.Add(u.PhyOffset, u.Size, at, w, message.JavaStringHash(realTopic), del)
		if err == nil {
			// Counted once it is in the wheel: a scrape that sees the
			// count sees the timer in the wheel's gauges too.
			t.metrics.onEnqueue(realTopic, at, e.BornTimestamp, del)
			return true
		}
		t.log.Error("timer: cannot chain timer; retrying", "queueOffset", u.QueueOffset, "err", err)
		if !t.pause(time.Second) {
			return false
		}
	}
}

// ---- dequeue ----

func (t *timerService) dequeueLoop() {
	defer t.wg.Done()
	flushEvery := t.flush
	tick := time.NewTicker(flushEvery)
	defer tick.Stop()
	lastFlush, lastClean := time.Now(), time.Now()
	maybeFlush := func() {
		if time.Since(lastFlush) < flushEvery {
			return
		}
		lastFlush = time.Now()
		if err := t.persist(); err != nil {
			t.log.Error("timer: persist", "err", err)
		}
	}
	for {
		for r := t.readMs.Load(); r < t.writeMs.Load(); r = t.readMs.Load() {
			if !t.dequeueSlot(r, maybeFlush) {
				return // stopping mid-slot; progress is persisted by stop
			}
			t.progress.Store(-1)
			t.readMs.Store(r + t.prec)
			maybeFlush()
		}
		maybeFlush()
		if time.Since(lastClean) >= timerCleanEvery {
			lastClean = time.Now()
			if n, err := t.ts.DeleteExpired(t.store.MinPhyOffset()); err != nil || n > 0 {
				t.log.Info("timer: expired timerlog files removed", "files", n, "err", err)
			}
		}
		select {
		case <-t.quit:
			return
		case <-t.moved:
		case <-tick.C:
		}
	}
}

// dequeueSlot delivers slot slotMs in batches, after the persisted
// progress; false when stopping before the slot is done. Memory is the
// batch, the waypoint table and the keys of the slot's delete markers.
func (t *timerService) dequeueSlot(slotMs int64, maybeFlush func()) bool {
	slot := t.ts.Slot(slotMs)
	if slot.Empty() {
		return true
	}
	// Delete markers (TIMER_DEL_UNIQKEY, "topic+uniqKey") cancel timers of
	// the same slot; only their keys are held.
	clear(t.dels)
	t.wps.Reset(slot.Num, cap(t.batch))
	t.ts.Walk(slot, func(pos int64, u *timer.Unit) bool {
		t.wps.Add(pos)
		if u.Magic&timer.MagicDelete != 0 && u.Magic&timer.MagicRoll == 0 {
			if rec, err := t.store.ReadRecord(u.OffsetPy, u.SizePy); err == nil {
				var e message.Ext
				if message.Decode(rec, &e) == nil {
					if k, ok := message.Property(e.Properties, message.PropertyTimerDelUniqKey); ok {
						t.dels[k] = struct{}{}
					}
				}
			}
		}
		return true
	})
	after := t.progress.Load()
	for {
		es := t.ts.BatchFrom(slot, t.wps.Start(after, slot.LastPos), after, t.batch[:0])
		if len(es) == 0 {
			return true
		}
		if !t.deliverBatch(es) {
			return false
		}
		after = es[len(es)-1].Pos
		t.progress.Store(after)
		if len(es) < cap(t.batch) {
			return true
		}
		maybeFlush()
		if t.stopping() {
			return false
		}
	}
}

// deliverBatch re-stores the records of es (async puts, waited for
// together); a put that fails is retried until it succeeds or the service
// stops (false).
func (t *timerService) deliverBatch(es []timer.Entry) bool {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var retry []int
	for i := range es {
		e := &es[i]
		roll := e.Magic&timer.MagicRoll != 0
		if e.Magic&timer.MagicDelete != 0 && !roll {
			continue // a delete marker is never delivered
		}
		m, ok := t.load(e, roll)
		if !ok {
			continue
		}
		if t.metrics != nil {
			rt, _ := message.Property(m.Properties, message.PropertyRealTopic)
			t.metrics.onDequeue(rt)
		}
		wg.Add(1)
		t.store.Put(&m, func(r store.PutResult) {
			if t.putFailed(r) {
				mu.Lock()
				retry = append(retry, i)
				mu.Unlock()
			}
			wg.Done()
		})
	}
	wg.Wait()
	for _, i := range retry {
		for {
			m, ok := t.load(&es[i], es[i].Magic&timer.MagicRoll != 0)
			if !ok || !t.putSync(&m) {
				break
			}
			if !t.pause(500 * time.Millisecond) {
				return false
			}
		}
	}
	return true
}

// load reads the record of e and builds what to store; false when it is
// gone or deleted.
func (t *timerService) load(e *timer.Entry, roll bool) (message.Message, bool) {
	rec, err := t.store.ReadRecord(e.OffsetPy, e.SizePy)
	var x message.Ext
	if err == nil {
		err = message.Decode(rec, &x)
	}
	if err != nil {
		t.log.Warn("timer: record gone before delivery", "offset", e.OffsetPy, "err", err)
		return message.Message{}, false
	}
	if len(t.dels) > 0 && !roll {
		topic, _ := message.Property(x.Properties, message.PropertyRealTopic)
		uniq, _ := message.Property(x.Properties, message.PropertyUniqKey)
		if _, gone := t.dels[topic+"+"+uniq]; gone {
			return message.Message{}, false
		}
	}
	return t.convert(&x, e.WriteTimeMs, roll), true
}

// deliverNow stores a due record at once (synchronously, retrying);
// false when stopping first.
func (t *timerService) deliverNow(x *message.Ext, enqueueMs int64, roll bool) bool {
	for {
		m := t.convert(x, enqueueMs, roll)
		if !t.putSync(&m) {
			return true
		}
		if !t.pause(500 * time.Millisecond) {
			return false
		}
	}
}

// putSync stores m and reports whether to retry.
func (t *timerService) putSync(m *message.Message) (retry bool) {
	done := make(chan store.PutResult, 1)
	t.store.Put(m, func(r store.PutResult) { done <- r })
	return t.putFailed(<-done)
}

// putFailed reports whether a put should be retried; a put that can
// never succeed is dropped with an error (Java's PUT_NO_RETRY).
func (t *timerService) putFailed(r store.PutResult) bool {
	switch r.Status {
	case store.PutOK, store.FlushDiskTimeout, store.FlushSlaveTimeout:
		return false
	case store.MessageIllegal, store.PropertiesSizeExceeded:
		t.log.Error("timer: delivery refused; dropped", "status", r.Status, "err", r.Err)
		return false
	default:
		t.log.Warn("timer: delivery failed; will retry", "status", r.Status, "err", r.Err)
		return true
	}
}

// convert builds the record to store for a due timer (Java's convert and
// convertMessage): under REAL_TOPIC/REAL_QID, or back into the timer topic
// when the unit was only a roll step toward a far-off time.
func (t *timerService) convert(x *message.Ext, enqueueMs int64, roll bool) message.Message {
	props := x.Properties
	if enqueueMs != -1 {
		props = message.SetProperty(props, message.PropertyTimerEnqueueMs, strconv.FormatInt(enqueueMs, 10))
	}
	topic, qid := x.Topic, x.QueueID
	if roll {
		n := 0
		if v, ok := message.Property(props, message.PropertyTimerRollTimes); ok {
			n, _ = strconv.Atoi(v)
		}
		props = message.SetProperty(props, message.PropertyTimerRollTimes, strconv.Itoa(n+1))
	} else {
		rt, _ := message.Property(props, message.PropertyRealTopic)
		rq, _ := message.Property(props, message.PropertyRealQueueID)
		// compat: Java's convertMessage clears REAL_TOPIC/REAL_QID only
		// after the stored properties string was built: delivered records
		// keep them (as the Java 5.3.3 broker's store shows).
		topic, qid = rt, atoi32(rq)
	}
	props = message.SetProperty(props, message.PropertyTimerDequeueMs, strconv.FormatInt(time.Now().UnixMilli(), 10))
	tags, _ := message.Property(props, message.PropertyTags)
	return message.Message{
		Topic: topic, QueueID: qid, Flag: x.Flag,
		Body:          x.Body,
		Properties:    props,
		BornTimestamp: x.BornTimestamp, BornHost: x.BornHost, StoreHost: x.StoreHost,
		SysFlag: x.SysFlag, ReconsumeTimes: x.ReconsumeTimes, TagsCode: message.TagsHash(tags),
	}
}

// behind reports how far delivery trails the clock in seconds and how many
// timer-topic records are not in the wheel yet (Java's timerReadBehind and
// timerOffsetBehind of GET_BROKER_RUNTIME_INFO).
func (t *timerService) behind(now int64) (readSec, offsets int64) {
	if t.ts == nil {
		return 0, 0
	}
	if r := t.readMs.Load(); r > 0 && now > r {
		readSec = (now - r) / 1000
	}
	return readSec, max(t.store.MaxOffset(timerTopic, 0)-t.queueOff.Load(), 0)
}
