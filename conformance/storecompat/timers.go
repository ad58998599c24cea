package storecompat

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// Kinds of held-back messages in a TimerPlan.
const (
	KindDeliverMs = "TIMER_DELIVER_MS"
	KindDelaySec  = "TIMER_DELAY_SEC"
	KindLevel     = "DELAY level"
)

// TimerPlan times one hand-over with pending timers and delays. Every
// time is relative to SendAt, the moment the writer starts receiving them:
//
//	SendAt ─ early due ─ writer stops ─ GapDue ─ reader starts ─ ready ─ PendingAt … +Spread
//	         (writer      (SIGTERM)     "gap" due: the          "pending" due: the
//	         delivers)                  reader owes them        reader delivers
//	                                    at once                 each at its time
//
// StopLead must exceed the writer's stop time, PendingLead the stop, the
// gap and the reader's start together.
type TimerPlan struct {
	Prefix      string
	Topic       string // the real topic, Queues queues
	Queues      int
	StopLead    time.Duration // SendAt → GapDue
	PendingLead time.Duration // SendAt → first pending due
	Spread      time.Duration // pending dues lie in [PendingAt, PendingAt+Spread]
}

// NewTimerPlan plans a hand-over whose writer stops within stopLead and
// whose reader is serving within readyEst after it is launched.
func NewTimerPlan(prefix string, stopLead, readyEst time.Duration) TimerPlan {
	return TimerPlan{
		Prefix: prefix, Topic: prefix + "_timer", Queues: 2,
		StopLead:    stopLead,
		PendingLead: stopLead + readyEst + 1500*time.Millisecond,
		// A slow reader's start varies a lot on a loaded machine: spread
		// its pending dues wider, so some fall after it is up anyway.
		Spread: 2*time.Second + readyEst/2,
	}
}

// Level delays (whole seconds): level 1 1s (delivered by the writer),
// level 2 = StopLead (due in the gap), level 3 = PendingLead (pending).
func (p TimerPlan) levelDelays() []time.Duration {
	ceil := func(d time.Duration) time.Duration { return time.Duration(math.Ceil(d.Seconds())) * time.Second }
	return []time.Duration{time.Second, ceil(p.StopLead), ceil(p.PendingLead)}
}

// BrokerConf is the config both brokers need for the plan: the short delay
// levels and the 5.x timer wheel at 1 s precision (both Java's defaults,
// stated so a changed default cannot skew the test).
func (p TimerPlan) BrokerConf() []string {
	var ls []string
	for _, d := range p.levelDelays() {
		ls = append(ls, strconv.Itoa(int(d/time.Second))+"s")
	}
	return []string{"messageDelayLevel=" + strings.Join(ls, " "), "timerWheelEnable=true", "timerPrecisionMs=1000"}
}

// When a held message falls due.
type When int

// Early ones are due (and delivered by the writer) before the hand-over;
// Gap ones between the writer's stop and the reader's launch; Pending
// ones after the reader is expected to be up.
const (
	Early When = iota
	Gap
	Pending
)

// Held is one message the writer acknowledged for later delivery; no
// broker may deliver it before DueMs.
type Held struct {
	Kind        string
	When        When
	LastMinute  bool // sent just before the writer's SIGTERM
	Topic       string
	QueueID     int
	MsgID       string // UNIQ_KEY
	OffsetMsgID string // the timer-topic / SCHEDULE_TOPIC_XXXX record
	Body        []byte
	Keys        []string
	Tags        string
	Props       map[string]string // user properties, checked on delivery
	DueMs       int64             // the earliest correct delivery
}

// IsTimer reports whether h is a 5.x timer (not a delay level).
func (h Held) IsTimer() bool { return h.Kind == KindDeliverMs || h.Kind == KindDelaySec }

func (p TimerPlan) message(i int, kind string) (*primitive.Message, Held) {
	h := Held{
		Kind: kind, Topic: p.Topic, QueueID: i % p.Queues,
		Body: []byte(fmt.Sprintf("held-%d-%s-%s", i, kind, strings.Repeat("x", 40+i*7))),
		Keys: []string{"hk-" + strconv.Itoa(i), p.Prefix},
		Tags: "ht" + strconv.Itoa(i%2),
		Props: map[string]string{
			"seq": strconv.Itoa(i), "kind": kind, "uni": "ünï " + strconv.Itoa(i),
		},
	}
	m := primitive.NewMessage(p.Topic, h.Body)
	props := make(map[string]string, len(h.Props))
	for k, v := range h.Props {
		props[k] = v
	}
	m.WithProperties(props)
	m.WithKeys(h.Keys)
	m.WithTag(h.Tags)
	m.Queue = &primitive.MessageQueue{Topic: p.Topic, BrokerName: "broker-a", QueueId: h.QueueID}
	return m, h
}

// Send stores the plan's messages on writer (through namesrv) with the
// official Go client and returns them with their due times:
//
//   - one of level 1 and one TIMER_DELIVER_MS due 1.5 s after SendAt,
//     which the writer delivers before the hand-over (the reader must
//     not deliver them again);
//   - two of level 2 (due in the gap) and two of level 3 (pending);
//   - one TIMER_DELIVER_MS due in the gap;
//   - four TIMER_DELIVER_MS pending, spread over Spread, off the second
//     boundaries, plus one exactly on a boundary (Java rounds that one a
//     whole step down);
//   - two TIMER_DELAY_SEC pending.
func (p TimerPlan) Send(ctx context.Context, namesrv, writer string) (sendAt time.Time, held []Held, err error) {
	pr, err := p.Producer(namesrv, "_tp")
	if err != nil {
		return sendAt, nil, err
	}
	defer pr.Shutdown()
	// A first send warms the route up, so SendAt is not taken before a
	// slow route lookup.
	warm, _ := p.message(99, "warm-up")
	if _, err := sendSync(ctx, pr, warm); err != nil {
		return sendAt, nil, fmt.Errorf("storecompat: warm-up send: %w", err)
	}
	sendAt = time.Now()
	base := sendAt.UnixMilli()
	levels := p.levelDelays()
	i := 0
	send := func(kind string, when When, lvl int, set func(*primitive.Message) int64) error {
		m, h := p.message(i, kind)
		i++
		h.When, h.DueMs = when, set(m)
		if lvl > 0 {
			h.Kind = fmt.Sprintf("%s %d", KindLevel, lvl)
			m.WithDelayTimeLevel(lvl)
		}
		r, err := sendSync(ctx, pr, m)
		if err != nil {
			return fmt.Errorf("storecompat: send %s: %w", h.Kind, err)
		}
		if r.Status != primitive.SendOK {
			return fmt.Errorf("storecompat: send %s: status %d", h.Kind, r.Status)
		}
		h.MsgID, h.OffsetMsgID = r.MsgID, r.OffsetMsgID
		if lvl > 0 {
			// Due the level's delay after the writer stored it in
			// SCHEDULE_TOPIC_XXXX.
			stored, err := storeTimestamp(ctx, writer, h.OffsetMsgID)
			if err != nil {
				return err
			}
			h.DueMs = stored + levels[lvl-1].Milliseconds()
		}
		held = append(held, h)
		return nil
	}
	deliverAt := func(at int64) func(*primitive.Message) int64 {
		return func(m *primitive.Message) int64 {
			m.WithProperty(primitive.PropertyTimerDeliverMS, strconv.FormatInt(at, 10))
			return at
		}
	}
	none := func(*primitive.Message) int64 { return 0 }
	gapAt := base + p.StopLead.Milliseconds()
	pendAt := base + p.PendingLead.Milliseconds()
	type step struct {
		kind  string
		when  When
		level int
		set   func(*primitive.Message) int64
	}
	steps := []step{
		{KindLevel, Early, 1, none}, {KindDeliverMs, Early, 0, deliverAt(base + 1500)},
		{KindLevel, Gap, 2, none}, {KindLevel, Pending, 3, none}, {KindDeliverMs, Gap, 0, deliverAt(gapAt + 137)},
	}
	for k := range int64(4) {
		steps = append(steps, step{KindDeliverMs, Pending, 0, deliverAt(pendAt + k*p.Spread.Milliseconds()/4 + 311)})
	}
	steps = append(steps, step{KindDeliverMs, Pending, 0, deliverAt((pendAt + p.Spread.Milliseconds()) / 1000 * 1000)})
	for _, extra := range []int64{1, 2} {
		sec := int64(math.Ceil((p.PendingLead + p.Spread/2).Seconds())) + extra
		steps = append(steps, step{KindDelaySec, Pending, 0, func(m *primitive.Message) int64 {
			m.WithProperty("TIMER_DELAY_SEC", strconv.FormatInt(sec, 10))
			// Read before the send: no later than the broker's reading.
			return time.Now().UnixMilli() + sec*1000
		}})
	}
	steps = append(steps, steps[2], steps[3]) // two of levels 2 and 3
	for _, s := range steps {
		if err := send(s.kind, s.when, s.level, s.set); err != nil {
			return sendAt, held, err
		}
	}
	return sendAt, held, nil
}

// Producer starts an official Go client producer (group Prefix+suffix,
// manual queue selection) for the plan's messages.
func (p TimerPlan) Producer(namesrv, suffix string) (rocketmq.Producer, error) {
	return startProducer(namesrv, p.Prefix+suffix)
}

// SendLastMinute sends one more pending TIMER_DELIVER_MS with pr (due
// mid-way through the pending spread of a plan sent at sendAt), to be
// followed at once by the writer's SIGTERM: the writer may or may not have chained it
// into its wheel, or flushed its wheel and checkpoint since, when it stops
// (Java's wheel is not written on shutdown, only every
// timerFlushIntervalMs), so the reader must recover it from the timerlog
// or enqueue it again from the timer topic, exactly once either way.
func (p TimerPlan) SendLastMinute(ctx context.Context, pr rocketmq.Producer, sendAt time.Time) (Held, error) {
	m, h := p.message(50, KindDeliverMs)
	h.When, h.LastMinute = Pending, true
	h.DueMs = sendAt.Add(p.PendingLead+p.Spread/2).UnixMilli() + 523
	m.WithProperty(primitive.PropertyTimerDeliverMS, strconv.FormatInt(h.DueMs, 10))
	r, err := sendSync(ctx, pr, m)
	if err != nil {
		return h, fmt.Errorf("storecompat: send last-minute timer: %w", err)
	}
	if r.Status != primitive.SendOK {
		return h, fmt.Errorf("storecompat: send last-minute timer: status %d", r.Status)
	}
	h.MsgID, h.OffsetMsgID = r.MsgID, r.OffsetMsgID
	return h, nil
}

func storeTimestamp(ctx context.Context, broker, offsetMsgID string) (int64, error) {
	id, err := primitive.UnmarshalMsgID([]byte(offsetMsgID))
	if err != nil {
		return 0, fmt.Errorf("storecompat: offset msgId %q: %w", offsetMsgID, err)
	}
	rec, err := ViewByOffset(ctx, broker, id.Offset)
	if err != nil {
		return 0, err
	}
	m, err := decode(rec)
	if err != nil {
		return 0, err
	}
	return m.StoreTimestamp, nil
}

// Collect polls topic's queues on broker from offset 0 until every msgId of
// want has arrived, then for settle more (a duplicate arriving late shows),
// or until deadline. It returns every delivered record by UNIQ_KEY.
func Collect(ctx context.Context, broker, group, topic string, queues int, want map[string]bool, deadline time.Time, settle time.Duration) (map[string][]*primitive.MessageExt, error) {
	got := map[string][]*primitive.MessageExt{}
	next := make([]int64, queues)
	var allAt time.Time
	for {
		for q := range queues {
			maxOff, err := MaxOffset(ctx, broker, topic, q)
			if err != nil {
				return got, err
			}
			if maxOff <= next[q] {
				continue
			}
			recs, err := PullRange(ctx, broker, group, topic, q, next[q], maxOff, "*")
			if err != nil {
				return got, err
			}
			for _, r := range recs {
				m, err := decode(r)
				if err != nil {
					return got, err
				}
				got[m.MsgId] = append(got[m.MsgId], m)
			}
			next[q] += int64(len(recs))
		}
		if allAt.IsZero() {
			missing := 0
			for id := range want {
				if len(got[id]) == 0 {
					missing++
				}
			}
			if missing == 0 {
				allAt = time.Now()
			}
		}
		now := time.Now()
		if (!allAt.IsZero() && now.Sub(allAt) >= settle) || now.After(deadline) {
			return got, nil
		}
		select {
		case <-ctx.Done():
			return got, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Phases of the hand-over a held message falls due in.
const (
	DueInGap       = "gap"      // before the reader was launched
	DueInStart     = "starting" // while the reader was starting
	DueWhenServing = "serving"  // once the reader had registered
)

// Lateness is one delivery by the reader: how long after its due time
// (after the reader's launch, for one due in the gap) it was stored.
type Lateness struct {
	Kind  string
	Phase string
	Late  time.Duration
}

// Handover is when the writer finished stopping and the reader was
// launched and registered (ms).
type Handover struct {
	WriterStoppedMs, LaunchedMs, ReadyMs int64
}

// CheckHeld checks every held message was delivered exactly once to its
// real topic and queue, with its body, keys, tag and user properties, not
// before its due time and at most bound after max(due, ready). Each must
// come from the reader (stored after its launch), except one due before the
// writer had finished stopping, which the writer may have delivered on its
// way down (byWriter counts those), and the Early ones, which the writer
// must have delivered before it stopped. It returns problems (capped) and the
// lateness of every delivery the reader made.
func CheckHeld(held []Held, got map[string][]*primitive.MessageExt, ho Handover, bound time.Duration) (probs []string, late []Lateness, byWriter int) {
	add := func(f string, a ...any) {
		if len(probs) < 40 {
			probs = append(probs, fmt.Sprintf(f, a...))
		}
	}
	for _, h := range held {
		ms := got[h.MsgID]
		if len(ms) != 1 {
			add("%s %s (due %s): delivered %d times", h.Kind, h.MsgID, fmtMs(h.DueMs), len(ms))
		}
		if len(ms) == 0 {
			continue
		}
		m := ms[0]
		if m.Topic != h.Topic || m.Queue.QueueId != h.QueueID {
			add("%s %s: delivered to %s/%d, want %s/%d", h.Kind, h.MsgID, m.Topic, m.Queue.QueueId, h.Topic, h.QueueID)
		}
		if !bytes.Equal(m.Body, h.Body) {
			add("%s %s: body differs (%d bytes, want %d)", h.Kind, h.MsgID, len(m.Body), len(h.Body))
		}
		if m.GetTags() != h.Tags || m.GetKeys() != strings.Join(h.Keys, " ") {
			add("%s %s: tags %q keys %q", h.Kind, h.MsgID, m.GetTags(), m.GetKeys())
		}
		for k, v := range h.Props {
			if g := m.GetProperty(k); g != v {
				add("%s %s: property %s=%q, want %q", h.Kind, h.MsgID, k, g, v)
			}
		}
		if h.IsTimer() && !h.LastMinute {
			// TIMER_ENQUEUE_MS is the write time of the timerlog unit the
			// delivery came from: the writer's, not one the reader made by
			// enqueuing the timer topic again.
			enq, err := strconv.ParseInt(m.GetProperty("TIMER_ENQUEUE_MS"), 10, 64)
			if err != nil || enq <= 0 || enq > ho.WriterStoppedMs {
				add("%s %s: TIMER_ENQUEUE_MS %q: not a unit the writer chained before it stopped (%s)",
					h.Kind, h.MsgID, m.GetProperty("TIMER_ENQUEUE_MS"), fmtMs(ho.WriterStoppedMs))
			}
		}
		if m.StoreTimestamp < h.DueMs {
			add("%s %s: delivered %d ms early (at %s, due %s)", h.Kind, h.MsgID, h.DueMs-m.StoreTimestamp, fmtMs(m.StoreTimestamp), fmtMs(h.DueMs))
		}
		// Both brokers keep the original store host on a delivered
		// timer or delay, so the store time tells who delivered it.
		if h.When == Early {
			if m.StoreTimestamp >= ho.WriterStoppedMs {
				add("%s %s: due before the hand-over, yet stored at %s, after the writer stopped: the reader delivered it again",
					h.Kind, h.MsgID, fmtMs(m.StoreTimestamp))
			}
			continue
		}
		if m.StoreTimestamp < ho.LaunchedMs {
			if h.DueMs > ho.WriterStoppedMs {
				add("%s %s: stored at %s, before the reader was launched (%s), yet due after the writer stopped (%s)",
					h.Kind, h.MsgID, fmtMs(m.StoreTimestamp), fmtMs(ho.LaunchedMs), fmtMs(ho.WriterStoppedMs))
			}
			byWriter++
			continue
		}
		if over := time.Duration(m.StoreTimestamp-max(h.DueMs, ho.ReadyMs)) * time.Millisecond; over > bound {
			add("%s %s: delivered %v after max(due %s, reader ready %s)", h.Kind, h.MsgID, over, fmtMs(h.DueMs), fmtMs(ho.ReadyMs))
		}
		l := Lateness{Kind: h.Kind, Phase: DueWhenServing, Late: time.Duration(m.StoreTimestamp-max(h.DueMs, ho.LaunchedMs)) * time.Millisecond}
		switch {
		case h.DueMs < ho.LaunchedMs:
			l.Phase = DueInGap
		case h.DueMs < ho.ReadyMs:
			l.Phase = DueInStart
		}
		late = append(late, l)
	}
	return probs, late, byWriter
}

// SystemProps lists the property keys of delivered records that the
// sender did not set (user properties, KEYS, TAGS, UNIQ_KEY left out):
// what a broker adds or keeps when it delivers a timer or a delay.
func SystemProps(held []Held, got map[string][]*primitive.MessageExt, keep func(Held) bool) []string {
	seen := map[string]bool{}
	for _, h := range held {
		if !keep(h) {
			continue
		}
		for _, m := range got[h.MsgID] {
			for k := range m.GetProperties() {
				if _, user := h.Props[k]; !user && k != "KEYS" && k != "TAGS" && k != "UNIQ_KEY" {
					seen[k] = true
				}
			}
		}
	}
	out := make([]string, 0, len(seen))
	for k := range seen {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// Spread formats min/median/max of some latenesses.
func Spread(ls []Lateness, keep func(Lateness) bool) string {
	var ds []time.Duration
	for _, l := range ls {
		if keep(l) {
			ds = append(ds, l.Late)
		}
	}
	if len(ds) == 0 {
		return "none"
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	r := func(d time.Duration) time.Duration { return d.Round(time.Millisecond) }
	return fmt.Sprintf("n=%d min %v p50 %v max %v", len(ds), r(ds[0]), r(ds[len(ds)/2]), r(ds[len(ds)-1]))
}

func fmtMs(ms int64) string { return time.UnixMilli(ms).UTC().Format("15:04:05.000") }
