package storecompat

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"time"

	rocketmq "github.com/apache/rocketmq-client-go/v2"
	"github.com/apache/rocketmq-client-go/v2/primitive"
	"github.com/apache/rocketmq-client-go/v2/producer"
)

// Topic is one topic of the workload.
type Topic struct {
	Name   string
	Queues int
}

// Workload describes the messages a writer broker stores.
type Workload struct {
	Prefix string // unique per run: topic and group names
	Topics []Topic
	Seed   uint64
}

// NewWorkload spreads messages over three topics of 4, 2 and 8 queues.
func NewWorkload(prefix string, seed uint64) Workload {
	return Workload{Prefix: prefix, Seed: seed, Topics: []Topic{
		{prefix + "_a", 4}, {prefix + "_b", 2}, {prefix + "_c", 8},
	}}
}

// Group is the consumer group whose offsets and settings must survive.
func (w Workload) Group() string { return w.Prefix + "_grp" }

// Sent is one message as the writer acknowledged it.
type Sent struct {
	Topic       string
	QueueID     int
	QueueOffset int64
	MsgID       string // UNIQ_KEY
	OffsetMsgID string // store host + commit-log offset
	Body        []byte
	Keys        []string
	Tags        string
	Props       map[string]string // user properties
	Batch       bool              // sent in a SEND_BATCH_MESSAGE
}

// message builds message i: keys, a tag, two user properties, and a body
// of varying size (every 25th is large enough for the client to compress
// it and for the commit log to roll sooner).
func (w Workload) message(i int) (*primitive.Message, Sent) {
	rng := rand.New(rand.NewPCG(w.Seed, uint64(i)))
	t, qid := w.placement(i)
	n := 64 + rng.IntN(700)
	if i%25 == 0 {
		n = 12 << 10
	}
	body := make([]byte, 0, n+16)
	body = append(body, "m-"+strconv.Itoa(i)+"-"...)
	for len(body) < n {
		body = append(body, "0123456789abcdef"[rng.IntN(16)])
	}
	s := Sent{
		Topic: t.Name, QueueID: qid, Body: body,
		Keys: []string{"k-" + strconv.Itoa(i), "g-" + strconv.Itoa(i%7)},
		Tags: "tag" + strconv.Itoa(i%3),
		Props: map[string]string{
			"seq":   strconv.Itoa(i),
			"uni":   "ünï-" + strconv.Itoa(i) + " sp=ace",
			"batch": w.Prefix,
		},
	}
	m := primitive.NewMessage(t.Name, body)
	// WithProperties replaces the client's property map, so it goes first
	// and gets a copy.
	props := make(map[string]string, len(s.Props))
	for k, v := range s.Props {
		props[k] = v
	}
	m.WithProperties(props)
	m.WithKeys(s.Keys)
	m.WithTag(s.Tags)
	m.Queue = &primitive.MessageQueue{Topic: t.Name, BrokerName: "broker-a", QueueId: qid}
	return m, s
}

// batchAt reports whether message i is the first of a batch of batchLen:
// messages 16..19 of every 20 go in one SEND_BATCH_MESSAGE.
func batchAt(i int) bool { return i%20 == 20-batchLen }

const batchLen = 4

// placement is the queue of message i: round robin over topics and queues,
// except that a batch goes to one queue.
func (w Workload) placement(i int) (Topic, int) {
	if i%20 >= 20-batchLen {
		g := i / 20
		t := w.Topics[g%len(w.Topics)]
		return t, g % t.Queues
	}
	t := w.Topics[i%len(w.Topics)]
	return t, (i / len(w.Topics)) % t.Queues
}

// Produce sends messages [from, to) of the workload with the official Go
// client through namesrv (one in five as batches) and returns what each
// send reported.
func (w Workload) Produce(ctx context.Context, namesrv string, from, to int) ([]Sent, error) {
	p, err := startProducer(namesrv, w.Prefix+"_p")
	if err != nil {
		return nil, err
	}
	defer p.Shutdown()
	out := make([]Sent, 0, to-from)
	for i := from; i < to; i++ {
		if batchAt(i) && i+batchLen <= to {
			ss, err := w.sendBatch(ctx, p, i)
			if err != nil {
				return out, err
			}
			out = append(out, ss...)
			i += batchLen - 1
			continue
		}
		m, s := w.message(i)
		r, err := sendSync(ctx, p, m)
		if err != nil {
			return out, fmt.Errorf("storecompat: send %d: %w", i, err)
		}
		if r.Status != primitive.SendOK {
			return out, fmt.Errorf("storecompat: send %d: status %d", i, r.Status)
		}
		if r.MessageQueue == nil || r.MessageQueue.QueueId != s.QueueID || r.MessageQueue.Topic != s.Topic {
			return out, fmt.Errorf("storecompat: send %d: went to %v, want %s/%d", i, r.MessageQueue, s.Topic, s.QueueID)
		}
		s.QueueOffset, s.MsgID, s.OffsetMsgID = r.QueueOffset, r.MsgID, r.OffsetMsgID
		out = append(out, s)
	}
	return out, nil
}

// sendBatch sends messages i..i+batchLen-1 as one batch and expands the
// result: consecutive queue offsets, one offset msgId each.
func (w Workload) sendBatch(ctx context.Context, p rocketmq.Producer, i int) ([]Sent, error) {
	msgs := make([]*primitive.Message, batchLen)
	ss := make([]Sent, batchLen)
	for j := range batchLen {
		msgs[j], ss[j] = w.message(i + j)
		// The client does not give batched messages a UNIQ_KEY itself.
		ss[j].MsgID = primitive.CreateUniqID()
		msgs[j].WithProperty(primitive.PropertyUniqueClientMessageIdKeyIndex, ss[j].MsgID)
	}
	r, err := sendSync(ctx, p, msgs...)
	if err != nil {
		return nil, fmt.Errorf("storecompat: send batch %d: %w", i, err)
	}
	if r.Status != primitive.SendOK {
		return nil, fmt.Errorf("storecompat: send batch %d: status %d", i, r.Status)
	}
	if r.MessageQueue == nil || r.MessageQueue.QueueId != ss[0].QueueID || r.MessageQueue.Topic != ss[0].Topic {
		return nil, fmt.Errorf("storecompat: send batch %d: went to %v, want %s/%d", i, r.MessageQueue, ss[0].Topic, ss[0].QueueID)
	}
	ids := strings.Split(r.OffsetMsgID, ",")
	if len(ids) != batchLen {
		return nil, fmt.Errorf("storecompat: send batch %d: offset msgIds %q, want %d", i, r.OffsetMsgID, batchLen)
	}
	for j := range ss {
		ss[j].QueueOffset, ss[j].OffsetMsgID, ss[j].Batch = r.QueueOffset+int64(j), ids[j], true
	}
	return ss, nil
}

// sendSync sends, retrying (a bounded number of times) when the broker
// sheds load with SYSTEM_BUSY: it stored nothing then, so a retry cannot
// duplicate. The Java broker does this on a loaded 2-core machine when a
// send waits over waitTimeMillsInSendQueue.
func sendSync(ctx context.Context, p rocketmq.Producer, msgs ...*primitive.Message) (*primitive.SendResult, error) {
	var err error
	for attempt := range 6 {
		sctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		var r *primitive.SendResult
		r, err = p.SendSync(sctx, msgs...)
		cancel()
		if err == nil || !strings.Contains(err.Error(), "CODE: 2,") {
			return r, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(time.Duration(attempt+1) * 200 * time.Millisecond):
		}
	}
	return nil, err
}

// QueueKey names one queue.
type QueueKey struct {
	Topic string
	Queue int
}

// Snapshot is every raw record a broker serves for the workload, by queue
// in offset order (index = queue offset, as pulled from 0).
type Snapshot map[QueueKey][][]byte

// Counts returns how many messages went to each queue.
func Counts(sent []Sent) map[QueueKey]int64 {
	c := map[QueueKey]int64{}
	for _, s := range sent {
		c[QueueKey{s.Topic, s.QueueID}]++
	}
	return c
}

// ReadAll waits until every queue's max offset reaches its expected count
// (dispatch is asynchronous), then pulls each queue from offset 0.
func (w Workload) ReadAll(ctx context.Context, broker string, want map[QueueKey]int64, dispatchWait time.Duration) (Snapshot, error) {
	snap := Snapshot{}
	for _, t := range w.Topics {
		for q := range t.Queues {
			k := QueueKey{t.Name, q}
			maxOff, err := WaitMaxOffset(ctx, broker, t.Name, q, want[k], dispatchWait)
			if err != nil {
				return snap, err
			}
			recs, err := PullRaw(ctx, broker, w.Prefix+"_reader", t.Name, q, maxOff, "*")
			if err != nil {
				return snap, err
			}
			snap[k] = recs
		}
	}
	return snap, nil
}

// decode is the official client's decoder applied to one record.
func decode(rec []byte) (*primitive.MessageExt, error) {
	ms := primitive.DecodeMessage(rec)
	if len(ms) != 1 {
		return nil, fmt.Errorf("storecompat: record decodes to %d messages", len(ms))
	}
	return ms[0], nil
}

// Check compares snap with what was sent and returns every problem found
// (capped). Offsets are positions in the queue's slice, so a record at the
// wrong queue offset shows up as a mismatch.
func Check(sent []Sent, snap Snapshot) []string {
	var probs []string
	add := func(f string, a ...any) {
		if len(probs) < 40 {
			probs = append(probs, fmt.Sprintf(f, a...))
		}
	}
	for k, n := range Counts(sent) {
		if got := int64(len(snap[k])); got != n {
			add("%s/%d: %d records, want %d", k.Topic, k.Queue, got, n)
		}
	}
	for _, s := range sent {
		recs := snap[QueueKey{s.Topic, s.QueueID}]
		if s.QueueOffset < 0 || s.QueueOffset >= int64(len(recs)) {
			add("%s/%d@%d (%s): missing", s.Topic, s.QueueID, s.QueueOffset, s.MsgID)
			continue
		}
		m, err := decode(recs[s.QueueOffset])
		if err != nil {
			add("%s/%d@%d: %v", s.Topic, s.QueueID, s.QueueOffset, err)
			continue
		}
		for _, p := range diffMessage(s, m) {
			add("%s/%d@%d (%s): %s", s.Topic, s.QueueID, s.QueueOffset, s.MsgID, p)
		}
	}
	return probs
}

func diffMessage(s Sent, m *primitive.MessageExt) []string {
	var d []string
	if m.Topic != s.Topic || m.Queue.QueueId != s.QueueID || m.QueueOffset != s.QueueOffset {
		d = append(d, fmt.Sprintf("record says %s/%d@%d", m.Topic, m.Queue.QueueId, m.QueueOffset))
	}
	if !bytes.Equal(m.Body, s.Body) {
		d = append(d, fmt.Sprintf("body differs (%d bytes, want %d)", len(m.Body), len(s.Body)))
	}
	if m.MsgId != s.MsgID {
		d = append(d, fmt.Sprintf("msgId %s", m.MsgId))
	}
	if m.OffsetMsgId != s.OffsetMsgID {
		d = append(d, fmt.Sprintf("offsetMsgId %s, want %s", m.OffsetMsgId, s.OffsetMsgID))
	}
	if m.GetTags() != s.Tags {
		d = append(d, fmt.Sprintf("tags %q", m.GetTags()))
	}
	if m.GetKeys() != strings.Join(s.Keys, " ") {
		d = append(d, fmt.Sprintf("keys %q", m.GetKeys()))
	}
	for k, v := range s.Props {
		if got := m.GetProperty(k); got != v {
			d = append(d, fmt.Sprintf("property %s=%q, want %q", k, got, v))
		}
	}
	if m.StoreTimestamp <= 0 || m.BornTimestamp <= 0 {
		d = append(d, fmt.Sprintf("timestamps born %d store %d", m.BornTimestamp, m.StoreTimestamp))
	}
	return d
}

// SameRecords reports queues and offsets where two snapshots differ byte
// for byte (capped).
func SameRecords(before, after Snapshot) []string {
	var probs []string
	keys := make([]QueueKey, 0, len(before))
	for k := range before {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Queue < keys[j].Queue
	})
	for _, k := range keys {
		a, b := before[k], after[k]
		if len(a) != len(b) {
			probs = append(probs, fmt.Sprintf("%s/%d: %d records before, %d after", k.Topic, k.Queue, len(a), len(b)))
		}
		for i := range min(len(a), len(b)) {
			if !bytes.Equal(a[i], b[i]) && len(probs) < 40 {
				probs = append(probs, fmt.Sprintf("%s/%d@%d: record bytes differ (%d vs %d bytes)", k.Topic, k.Queue, i, len(a[i]), len(b[i])))
			}
		}
	}
	return probs
}

// CheckLookups queries every message by its first key and every
// tenth by UNIQ_KEY, and views every message by its offset msgId, on
// broker. It returns problems (capped).
func CheckLookups(ctx context.Context, broker string, sent []Sent) ([]string, error) {
	var probs []string
	add := func(f string, a ...any) {
		if len(probs) < 40 {
			probs = append(probs, fmt.Sprintf(f, a...))
		}
	}
	for i, s := range sent {
		recs, err := QueryByKey(ctx, broker, s.Topic, s.Keys[0], false)
		if err != nil {
			return probs, err
		}
		if !matchesOne(recs, s) {
			add("query key %s/%s: %d records, none is %s", s.Topic, s.Keys[0], len(recs), s.MsgID)
		}
		if i%10 == 0 {
			recs, err := QueryByKey(ctx, broker, s.Topic, s.MsgID, true)
			if err != nil {
				return probs, err
			}
			if !matchesOne(recs, s) {
				add("query uniq key %s/%s: %d records, none matches", s.Topic, s.MsgID, len(recs))
			}
		}
		id, err := primitive.UnmarshalMsgID([]byte(s.OffsetMsgID))
		if err != nil {
			return probs, fmt.Errorf("storecompat: offset msgId %q: %w", s.OffsetMsgID, err)
		}
		rec, err := ViewByOffset(ctx, broker, id.Offset)
		if err != nil {
			add("view %s: %v", s.OffsetMsgID, err)
			continue
		}
		m, err := decode(rec)
		if err != nil {
			add("view %s: %v", s.OffsetMsgID, err)
			continue
		}
		for _, p := range diffMessage(s, m) {
			add("view %s: %s", s.OffsetMsgID, p)
		}
	}
	return probs, nil
}

func matchesOne(recs [][]byte, s Sent) bool {
	for _, r := range recs {
		if m, err := decode(r); err == nil && len(diffMessage(s, m)) == 0 {
			return true
		}
	}
	return false
}

// CheckTagPull pulls every queue with the subscription "tag1" and checks
// the broker returns exactly the tag1 messages: it filters on the tag hash
// codes stored in the consume queue, so this proves the other side's
// codes. It returns problems (capped).
func (w Workload) CheckTagPull(ctx context.Context, broker string, sent []Sent) ([]string, error) {
	const tag = "tag1"
	want := map[QueueKey][]int64{}
	for _, s := range sent {
		if s.Tags == tag {
			k := QueueKey{s.Topic, s.QueueID}
			want[k] = append(want[k], s.QueueOffset)
		}
	}
	counts := Counts(sent)
	var probs []string
	for _, t := range w.Topics {
		for q := range t.Queues {
			k := QueueKey{t.Name, q}
			recs, err := PullRaw(ctx, broker, w.Prefix+"_tags", t.Name, q, counts[k], tag)
			if err != nil {
				return probs, err
			}
			var got []int64
			for _, r := range recs {
				m, err := decode(r)
				if err != nil {
					return probs, err
				}
				got = append(got, m.QueueOffset)
			}
			sort.Slice(got, func(i, j int) bool { return got[i] < got[j] })
			if fmt.Sprint(got) != fmt.Sprint(want[k]) && len(probs) < 20 {
				probs = append(probs, fmt.Sprintf("%s/%d: %s pull returned offsets %v, want %v", t.Name, q, tag, got, want[k]))
			}
		}
	}
	return probs, nil
}

// Traits lists what a broker put into the records of sent beyond the
// message itself: property keys (the workload's own user keys left out),
// sysFlag, flag and reconsume times, per send kind ("single."/"batch.").
// Comparing the traits of records each broker wrote shows where the two
// encode the same send differently.
func Traits(sent []Sent, snap Snapshot) (map[string]bool, error) {
	out := map[string]bool{}
	for _, s := range sent {
		recs := snap[QueueKey{s.Topic, s.QueueID}]
		if s.QueueOffset < 0 || s.QueueOffset >= int64(len(recs)) {
			return nil, fmt.Errorf("storecompat: %s/%d@%d missing", s.Topic, s.QueueID, s.QueueOffset)
		}
		m, err := decode(recs[s.QueueOffset])
		if err != nil {
			return nil, err
		}
		kind := "single."
		if s.Batch {
			kind = "batch."
		}
		for k := range m.GetProperties() {
			if _, user := s.Props[k]; !user {
				out[kind+"property "+k] = true
			}
		}
		out[fmt.Sprintf("%ssysFlag %d", kind, m.SysFlag)] = true
		out[fmt.Sprintf("%sflag %d", kind, m.Flag)] = true
		out[fmt.Sprintf("%sreconsumeTimes %d", kind, m.ReconsumeTimes)] = true
	}
	return out, nil
}

// TraitDiff lists the traits only a has and only b has.
func TraitDiff(a, b map[string]bool) (onlyA, onlyB []string) {
	for k := range a {
		if !b[k] {
			onlyA = append(onlyA, k)
		}
	}
	for k := range b {
		if !a[k] {
			onlyB = append(onlyB, k)
		}
	}
	sort.Strings(onlyA)
	sort.Strings(onlyB)
	return onlyA, onlyB
}

// startProducer starts an official Go client producer of group (also its
// instance name) with manual queue selection.
func startProducer(namesrv, group string) (rocketmq.Producer, error) {
	p, err := producer.NewDefaultProducer(
		producer.WithNameServer(primitive.NamesrvAddr{namesrv}),
		producer.WithGroupName(group),
		producer.WithInstanceName(group),
		producer.WithRetry(2),
		producer.WithSendMsgTimeout(10*time.Second),
		producer.WithQueueSelector(producer.NewManualQueueSelector()),
	)
	if err != nil {
		return nil, fmt.Errorf("storecompat: new producer: %w", err)
	}
	if err := p.Start(); err != nil {
		return nil, fmt.Errorf("storecompat: start producer: %w", err)
	}
	return p, nil
}
