package broker

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

// orphanAcks are the offsets acked for a checkpoint not read yet.
type orphanAcks struct {
	offsets []int64
	seen    int64 // ms
}

const (
	orphanTTL = 5 * 60 * 1000 // ms
	maxOrphan = 100000
)

// reviveMargin is how long after its revive time a checkpoint is revived.
const reviveMargin = popfmt.AckTimeInterval + 1000

// reviveCK is a checkpoint the revive service tracks.
type reviveCK struct {
	ck     popfmt.CheckPoint
	acked  uint64 // bit i: message i acknowledged (num <= 32)
	offset int64  // its revive-log queue offset
}

func (r *reviveCK) done() bool {
	n := int(r.ck.Num)
	if n > 64 {
		n = 64
	}
	return r.acked&(uint64(1)<<n-1) == uint64(1)<<n-1
}

// reviveService is Java's PopReviveService for one revive queue: it reads
// the revive log from its own offset (group CID_RMQ_SYS_REVIVE_GROUP in the
// consumer offset table), matches checkpoints with acks, and once a
// checkpoint's invisible time has passed puts its unacknowledged messages
// into the pop retry topic (RECONSUME_TIMES + 1), or into %DLQ%<group>
// once they were reconsumed retryMaxTimes.
//
// Its state is only what the log holds: after a restart it reads again from
// the committed offset, the revive-log offset of the oldest checkpoint
// still pending. Revived checkpoints are closed with a batch ack of the
// offsets they re-put, so a re-read does not revive them twice.
type reviveService struct {
	p        *popProcessor
	qid      int32
	interval time.Duration

	mu   sync.Mutex // serializes rounds (the loop, tests)
	next int64      // next revive-log offset to read; guarded by mu
	cks  map[string]*reviveCK
	// orphans are acks read before their checkpoint (a Java broker's
	// timer may deliver an ack first), applied when it comes; dropped
	// after orphanTTL (their checkpoint was closed already). Guarded by mu.
	orphans map[string]*orphanAcks
	res     store.GetResult

	// For the metrics, stored by round, read at scrape time:
	// reviveOffset is Java's (the last revive-log offset done with),
	// firstRT Java's currentReviveMessageTimestamp (the earliest revive
	// time of the checkpoints still pending after the last round, or that
	// round's time when none; 0 before the first round).
	reviveOffset, firstRT atomic.Int64
}

func newReviveService(p *popProcessor, qid int32) *reviveService {
	iv := time.Duration(p.cfg.ReviveInterval) * time.Millisecond
	if iv <= 0 {
		iv = time.Second
	}
	s := &reviveService{p: p, qid: qid, interval: iv, cks: make(map[string]*reviveCK), orphans: make(map[string]*orphanAcks)}
	s.next = -1
	return s
}

func (s *reviveService) run(quit <-chan struct{}) {
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			s.round(time.Now().UnixMilli())
		}
	}
}

// round reads the new revive-log records, then revives what is due.
func (s *reviveService) round(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.p
	if p.metrics != nil {
		start := time.Now()
		defer func() { p.metrics.onRound(time.Since(start)) }()
	}
	if p.role != nil && p.role.IsSlave() {
		// Like Java ("slave skip scan"): the master revives; a slave
		// re-reads from the replicated offset if it becomes master.
		s.next = -1
		s.cks = make(map[string]*reviveCK)
		s.orphans = make(map[string]*orphanAcks)
		return
	}
	topic := p.reviveTopic
	if s.next < 0 {
		// compat: Java commits the last revive-log offset it is done with
		// and reads on from the next.
		if off, ok := p.offsets.query(popfmt.ReviveGroup, topic, s.qid); ok && off >= -1 {
			s.next = off + 1
		} else {
			s.next = p.store.MinOffset(topic, s.qid)
		}
	}
	for {
		p.store.GetMessages(topic, s.qid, s.next, 32, 1<<20, nil, &s.res)
		n := len(s.res.Records)
		for i, rec := range s.res.Records {
			s.apply(rec, s.res.QueueOffsets[i], now)
		}
		if s.res.NextBeginOffset > s.next {
			s.next = s.res.NextBeginOffset
		}
		s.res.Release()
		if n == 0 {
			break
		}
	}
	for k, o := range s.orphans {
		if now-o.seen > orphanTTL {
			delete(s.orphans, k)
		}
	}
	commit := s.next
	firstRT := int64(0)
	for k, r := range s.cks {
		if r.done() {
			delete(s.cks, k)
			continue
		}
		// compat: like Java (endTime - reviveTime > ackTimeInterval + 1 s),
		// a checkpoint is revived 2 s after its time, so an ack a Java
		// broker routed through its timer (due at the revive time) is in.
		if r.ck.ReviveTime()+reviveMargin <= now {
			if s.reviveCK(r) {
				delete(s.cks, k)
				continue
			}
		}
		commit = min(commit, r.offset)
		if rt := r.ck.ReviveTime(); firstRT == 0 || rt < firstRT {
			firstRT = rt
		}
	}
	p.offsets.commit(popfmt.ReviveGroup, topic, s.qid, commit-1)
	if firstRT == 0 {
		firstRT = now
	}
	s.reviveOffset.Store(commit - 1)
	s.firstRT.Store(firstRT)
}

// behind is Java's getReviveBehindMessages and getReviveBehindMillis: how
// many revive-log records and how long (while more than one record is
// left) the service trails the log's end.
func (s *reviveService) behind(now int64) (msgs, ms int64) {
	rt := s.firstRT.Load()
	if rt <= 0 {
		return 0, 0
	}
	diff := s.p.store.MaxOffset(s.p.reviveTopic, s.qid) - s.reviveOffset.Load()
	if diff > 1 {
		ms = max(0, now-rt)
	}
	return max(0, diff), ms
}

// apply reads one revive-log record.
func (s *reviveService) apply(rec []byte, qo, now int64) {
	var e message.Ext
	if message.Decode(rec, &e) != nil {
		return
	}
	tag, _ := message.Property(e.Properties, message.PropertyTags)
	switch tag {
	case popfmt.CKTag:
		ck, err := popfmt.DecodeCheckPoint(e.Body)
		if err != nil || ck.Num <= 0 {
			return
		}
		s.p.metrics.onRead(ck.CID, ck.Topic, s.qid, reviveKindCK)
		k := ck.Key()
		if _, ok := s.cks[k]; !ok {
			r := &reviveCK{ck: ck, offset: qo}
			s.cks[k] = r
			if o := s.orphans[k]; o != nil {
				for _, off := range o.offsets {
					if i := ck.IndexOfAck(off); i >= 0 && i < 64 {
						r.acked |= 1 << i
					}
				}
				delete(s.orphans, k)
			}
		}
	case popfmt.AckTag, popfmt.BatchAckTag:
		a, err := popfmt.DecodeAckMsg(e.Body)
		if err != nil {
			return
		}
		s.p.metrics.onRead(a.ConsumerGroup, a.Topic, s.qid, reviveKindAck)
		k := a.Key()
		r := s.cks[k]
		if r == nil {
			// Its checkpoint comes later, or was closed already.
			if len(s.orphans) >= maxOrphan {
				return
			}
			o := s.orphans[k]
			if o == nil {
				o = &orphanAcks{seen: now}
				s.orphans[k] = o
			}
			if tag == popfmt.BatchAckTag {
				o.offsets = append(o.offsets, a.AckOffsetList...)
			} else {
				o.offsets = append(o.offsets, a.AckOffset)
			}
			return
		}
		mark := func(off int64) {
			if i := r.ck.IndexOfAck(off); i >= 0 && i < 64 {
				r.acked |= 1 << i
			}
		}
		if tag == popfmt.BatchAckTag {
			for _, off := range a.AckOffsetList {
				mark(off)
			}
		} else {
			mark(a.AckOffset)
		}
	}
}

// reviveCK re-puts every unacknowledged message of r; false leaves r for
// the next round (a put failed).
func (s *reviveService) reviveCK(r *reviveCK) bool {
	var list []int64
	for i := 0; i < int(r.ck.Num) && i < 64; i++ {
		if r.acked&(1<<i) != 0 {
			continue
		}
		off := r.ck.AckOffsetByIndex(i)
		if !s.p.reviveOne(&r.ck, off) {
			return false
		}
		r.acked |= 1 << i
		list = append(list, off)
	}
	if len(list) > 0 {
		// Close the checkpoint in the log (see reviveService).
		a := popfmt.AckMsg{AckOffset: -1, StartOffset: r.ck.StartOffset, ConsumerGroup: r.ck.CID, Topic: r.ck.Topic,
			QueueID: r.ck.QueueID, PopTime: r.ck.PopTime, BrokerName: r.ck.BrokerName, AckOffsetList: list,
			DeliverTime: time.Now().UnixMilli()}
		s.p.putAck(&a, s.qid)
	}
	return true
}

// reviveOne is Java's PopReviveService.reviveRetry for one message; a
// message gone from the store (retention) counts as revived.
func (p *popProcessor) reviveOne(ck *popfmt.CheckPoint, off int64) bool {
	var res store.GetResult
	p.store.GetMessages(ck.Topic, ck.QueueID, off, 1, 4<<20, nil, &res)
	defer res.Release()
	if len(res.Records) == 0 || res.QueueOffsets[0] != off {
		if res.Status == store.OffsetTooSmall || res.Status == store.NoMatchedLogicQueue {
			return true
		}
		p.log.Warn("revive: message not found", "topic", ck.Topic, "queue", ck.QueueID, "offset", off, "status", res.Status.String())
		return res.Status != store.OffsetOverflowOne // not yet dispatched: retry later
	}
	var e message.Ext
	if message.Decode(res.Records[0], &e) != nil {
		return true
	}
	normal := popfmt.NormalTopic(ck.Topic, ck.CID)
	topic := ck.Topic
	if topic == normal {
		topic = p.retryTopic(ck.Topic, ck.CID)
	}
	maxTimes := int32(16)
	if sg, ok := p.groups.find(ck.CID); ok {
		maxTimes = sg.RetryMaxTimes
	}
	props := e.Properties
	if e.ReconsumeTimes == 0 {
		props = message.SetProperty(props, message.PropertyFirstPopTime, itoa64(ck.PopTime))
	} else if _, ok := message.Property(props, message.PropertyFirstPopTime); !ok {
		props = message.SetProperty(props, message.PropertyFirstPopTime, itoa64(ck.PopTime))
	}
	queues := int32(1) // PopAckConstants.retryQueueNum
	if e.ReconsumeTimes >= maxTimes {
		// ours: Java 5.3.3 leaves this to the client (or the proxy); the
		// broker moves an exhausted message to the group's DLQ itself.
		topic = DLQGroupPrefix + ck.CID
		props = message.SetProperty(props, message.PropertyRetryTopic, normal)
	}
	p.topics.createIfAbsent(topic, queues, body.PermRead|body.PermWrite, 0)
	tags, _ := message.Property(props, message.PropertyTags)
	host := p.host.get()
	m := &message.Message{Topic: topic, QueueID: 0, Flag: e.Flag, Body: append([]byte(nil), e.Body...), Properties: props,
		BornTimestamp: e.BornTimestamp, BornHost: host, StoreHost: host, SysFlag: e.SysFlag,
		ReconsumeTimes: e.ReconsumeTimes + 1, TagsCode: message.TagsHash(tags)}
	done := make(chan store.PutStatus, 1)
	p.store.Put(m, func(r store.PutResult) { done <- r.Status })
	st := <-done
	p.metrics.onRetry(ck.CID, ck.Topic, st)
	return putStored(st)
}

func itoa64(v int64) string { return strconv.FormatInt(v, 10) }
