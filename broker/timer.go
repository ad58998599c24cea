package broker

import (
	"container/heap"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

// Timer (5.x "wheel timer") messages carry their delivery time in
// TIMER_DELIVER_MS, or a delay in TIMER_DELAY_SEC / TIMER_DELAY_MS.
const (
	timerPrecisionMs = 1000                 // Java timerPrecisionMs
	timerMaxDelayMs  = 3 * 24 * 3600 * 1000 // Java timerMaxDelaySec, 3 days
	timerCheckGroup  = "CID_SYS_RMQ_TIMER"  // checkpoint of delivered timer records
	timerIllegal     = "timer message illegal, the delay time should not be bigger than the max delay %dms; or if set del msg, the delay time should be bigger than the current time"
)

// timerDeliverAt returns when a timer message is due: ok is false for a
// message without timer properties, bad when they do not parse
// (HookUtils.transformTimerMessage).
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
	return 0, false, false
}

// scheduleTimer rewrites a due-later timer message into the timer topic.
// It reports false when the message is illegal (too far away, or timer
// properties that do not parse).
func scheduleTimer(m *message.Message, now int64) bool {
	at, ok, bad := timerDeliverAt(m.Properties, now)
	if !ok {
		return true
	}
	if bad {
		return false
	}
	if at <= now {
		return true // due already: deliver as a normal message
	}
	if _, delayed := message.Property(m.Properties, message.PropertyDelayLevel); !delayed && at-now > timerMaxDelayMs {
		return false
	}
	// compat: Java rounds down to the precision (a multiple goes one step earlier).
	if at%timerPrecisionMs == 0 {
		at -= timerPrecisionMs
	} else {
		at = at / timerPrecisionMs * timerPrecisionMs
	}
	props := message.SetProperty(m.Properties, message.PropertyTimerOutMs, strconv.FormatInt(at, 10))
	props = message.SetProperty(props, message.PropertyRealTopic, m.Topic)
	props = message.SetProperty(props, message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Properties = props
	m.Topic = timerTopic
	m.QueueID = 0
	return true
}

// timerService delivers timer-topic records when due. It keeps the
// pending ones in a min-heap rebuilt from the timer topic at start (from
// the delivered-prefix checkpoint), and sleeps until the earliest.
type timerService struct {
	store   MessageStore
	offsets *offsetTable
	log     *slog.Logger

	mu      sync.Mutex
	pending timerHeap      // guarded by mu
	done    map[int64]bool // delivered queue offsets at or above cp; guarded by mu
	cp      int64          // every record below is delivered; guarded by mu
	scanned int64          // next timer-topic offset to read; guarded by mu

	kick chan struct{}
	quit chan struct{}
	wg   sync.WaitGroup
}

type timerEntry struct {
	at, qoff int64
}

type timerHeap []timerEntry

func (h timerHeap) Len() int           { return len(h) }
func (h timerHeap) Less(i, j int) bool { return h[i].at < h[j].at }
func (h timerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)        { *h = append(*h, x.(timerEntry)) }
func (h *timerHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

func newTimerService(st MessageStore, offsets *offsetTable, log *slog.Logger) *timerService {
	return &timerService{store: st, offsets: offsets, log: log, done: make(map[int64]bool),
		kick: make(chan struct{}, 1), quit: make(chan struct{})}
}

func (t *timerService) start() {
	cp, ok := t.offsets.query(timerCheckGroup, timerTopic, 0)
	if !ok {
		cp = t.store.MinOffset(timerTopic, 0)
	}
	t.cp, t.scanned = cp, cp
	t.wg.Add(1)
	go t.loop()
}

func (t *timerService) stop() {
	close(t.quit)
	t.wg.Wait()
}

// arrived is told about new timer-topic records.
func (t *timerService) arrived() {
	select {
	case t.kick <- struct{}{}:
	default:
	}
}

func (t *timerService) loop() {
	defer t.wg.Done()
	timer := time.NewTimer(0)
	defer timer.Stop()
	var res store.GetResult
	for {
		select {
		case <-t.quit:
			return
		case <-t.kick:
		case <-timer.C:
		}
		t.scan(&res)
		wait := t.deliverDue(&res, time.Now().UnixMilli())
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(wait)
	}
}

// scan adds the timer records written since the last scan to the heap.
func (t *timerService) scan(res *store.GetResult) {
	for {
		t.mu.Lock()
		off := t.scanned
		t.mu.Unlock()
		t.store.GetMessages(timerTopic, 0, off, 256, 4<<20, nil, res)
		if res.Status != store.Found {
			if res.Status == store.OffsetTooSmall {
				t.mu.Lock()
				t.scanned = res.NextBeginOffset
				t.mu.Unlock()
				res.Release()
				continue
			}
			res.Release()
			return
		}
		t.mu.Lock()
		for i, rec := range res.Records {
			qoff := res.QueueOffsets[i]
			t.scanned = qoff + 1
			var e message.Ext
			if message.Decode(rec, &e) != nil {
				continue
			}
			v, _ := message.Property(e.Properties, message.PropertyTimerOutMs)
			at, _ := strconv.ParseInt(v, 10, 64)
			// TIMER_OUT_MS is the requested time rounded down to the
			// precision (as Java stores it), so the requested time lies in
			// (at, at+precision]: delivering at the slot's end is never
			// early and at most one precision late.
			heap.Push(&t.pending, timerEntry{at: at + timerPrecisionMs, qoff: qoff})
		}
		t.mu.Unlock()
		res.Release()
	}
}

// deliverDue moves every due record to its real topic and returns how
// long to sleep until the next one.
func (t *timerService) deliverDue(res *store.GetResult, now int64) time.Duration {
	for {
		t.mu.Lock()
		if len(t.pending) == 0 {
			t.mu.Unlock()
			return time.Hour
		}
		next := t.pending[0]
		if next.at > now {
			t.mu.Unlock()
			return time.Duration(next.at-now) * time.Millisecond
		}
		heap.Pop(&t.pending)
		t.mu.Unlock()
		if !t.deliver(next.qoff, res) {
			t.mu.Lock()
			heap.Push(&t.pending, timerEntry{at: now + 1000, qoff: next.qoff}) // retry in a second
			t.mu.Unlock()
			continue
		}
		t.mu.Lock()
		t.done[next.qoff] = true
		for t.done[t.cp] {
			delete(t.done, t.cp)
			t.cp++
		}
		cp := t.cp
		t.mu.Unlock()
		t.offsets.commit(timerCheckGroup, timerTopic, 0, cp)
	}
}

// deliver re-stores one timer record under its real topic.
func (t *timerService) deliver(qoff int64, res *store.GetResult) bool {
	t.store.GetMessages(timerTopic, 0, qoff, 1, 4<<20, nil, res)
	defer res.Release()
	if res.Status != store.Found || len(res.Records) == 0 {
		return true // gone (expired from the store): nothing to deliver
	}
	var e message.Ext
	if message.Decode(res.Records[0], &e) != nil {
		return true
	}
	topic, _ := message.Property(e.Properties, message.PropertyRealTopic)
	qid, _ := message.Property(e.Properties, message.PropertyRealQueueID)
	if topic == "" {
		return true
	}
	props := message.SetProperty(e.Properties, message.PropertyTimerDequeueMs, strconv.FormatInt(time.Now().UnixMilli(), 10))
	tags, _ := message.Property(props, message.PropertyTags)
	m := message.Message{
		Topic: topic, QueueID: atoi32(qid), Flag: e.Flag,
		Body:          append([]byte(nil), e.Body...),
		Properties:    props,
		BornTimestamp: e.BornTimestamp, BornHost: e.BornHost, StoreHost: e.StoreHost,
		SysFlag: e.SysFlag, ReconsumeTimes: e.ReconsumeTimes, TagsCode: message.TagsHash(tags),
	}
	done := make(chan store.PutResult, 1)
	t.store.Put(&m, func(r store.PutResult) { done <- r })
	r := <-done
	if r.Status != store.PutOK && r.Status != store.FlushDiskTimeout {
		t.log.Warn("timer: delivery failed; will retry", "topic", topic, "status", r.Status, "err", r.Err)
		return false
	}
	return true
}
