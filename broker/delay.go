package broker

import (
	"log/slog"
	"maps"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

// delayTable knows the delay levels and turns a message with DELAY into a
// SCHEDULE_TOPIC_XXXX record (Java HookUtils.handleScheduleMessage).
type delayTable struct {
	levels []time.Duration // level 1 first
}

// schedule rewrites m in place when it carries a positive delay level:
// topic SCHEDULE_TOPIC_XXXX, queue level-1, REAL_TOPIC and REAL_QID kept.
func (d *delayTable) schedule(m *message.Message) {
	tt := message.TransactionValue(m.SysFlag)
	if tt != message.TransactionNotType && tt != message.TransactionCommitType {
		return
	}
	v, ok := message.Property(m.Properties, message.PropertyDelayLevel)
	if !ok {
		return
	}
	level, err := strconv.Atoi(v)
	if err != nil || level <= 0 || len(d.levels) == 0 {
		return
	}
	if level > len(d.levels) {
		level = len(d.levels)
		m.Properties = message.SetProperty(m.Properties, message.PropertyDelayLevel, strconv.Itoa(level))
	}
	props := message.SetProperty(m.Properties, message.PropertyRealTopic, m.Topic)
	props = message.SetProperty(props, message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Properties = props
	m.Topic = TopicSchedule
	m.QueueID = int32(level - 1)
}

// tagsCode is the store's consume-queue tags code hook: the delivery time
// for scheduled records, the TAGS hash otherwise.
func (d *delayTable) tagsCode(topic, props string, storeTimestamp int64) int64 {
	if topic == TopicSchedule {
		if v, ok := message.Property(props, message.PropertyDelayLevel); ok {
			if level, err := strconv.Atoi(v); err == nil && level > 0 && level <= len(d.levels) {
				return storeTimestamp + d.levels[level-1].Milliseconds()
			}
		}
		return storeTimestamp
	}
	tags, _ := message.Property(props, message.PropertyTags)
	return message.TagsHash(tags)
}

// delayService delivers scheduled messages to their real topics when due
// (Java ScheduleMessageService), tracking progress in delayOffset.json.
type delayService struct {
	table *delayTable
	store MessageStore
	log   *slog.Logger
	path  string
	pmu   sync.Mutex // serializes writes of the file

	mu      sync.Mutex
	offsets map[int32]int64 // level -> next offset in queue level-1; guarded by mu

	quit chan struct{}
	wg   sync.WaitGroup
}

func newDelayService(cfg *Config, table *delayTable, st MessageStore, log *slog.Logger) *delayService {
	return &delayService{
		table: table, store: st, log: log,
		path:    filepath.Join(cfg.StorePathRootDir, "config", "delayOffset.json"),
		offsets: make(map[int32]int64),
		quit:    make(chan struct{}),
	}
}

func (d *delayService) load() error {
	return loadConfigFile(d.path, "delay offsets", body.DecodeDelayOffsetFile, func(f map[int32]int64) {
		d.mu.Lock()
		maps.Copy(d.offsets, f)
		d.mu.Unlock()
	})
}

// encode returns the delayOffset.json content.
func (d *delayService) encode() []byte {
	d.mu.Lock()
	m := make(map[int32]int64, len(d.offsets))
	for l, off := range d.offsets {
		m[l] = off
	}
	d.mu.Unlock()
	return body.AppendDelayOffsetFile(nil, body.TopicVersion{Timestamp: time.Now().UnixMilli()}, m)
}

func (d *delayService) persist() error {
	d.pmu.Lock()
	defer d.pmu.Unlock()
	return writeConfigFile(d.path, d.encode())
}

func (d *delayService) start() {
	d.quit = make(chan struct{}) // a new one per start (role changes)
	d.wg.Add(1)
	go d.loop()
}

func (d *delayService) stop() {
	close(d.quit)
	d.wg.Wait()
}

// loop checks every level every 100 ms, as Java's per-level timers do
// when nothing is due.
func (d *delayService) loop() {
	defer d.wg.Done()
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	var res store.GetResult
	for {
		select {
		case <-d.quit:
			return
		case <-t.C:
			for level := 1; level <= len(d.table.levels); level++ {
				d.deliver(int32(level), &res)
			}
		}
	}
}

// deliver moves every due message of one level to its real topic.
func (d *delayService) deliver(level int32, res *store.GetResult) {
	q := level - 1
	if d.store.MaxOffset(TopicSchedule, q) == 0 {
		return
	}
	d.mu.Lock()
	off := d.offsets[level]
	d.mu.Unlock()
	delay := d.table.levels[level-1].Milliseconds()
	now := time.Now().UnixMilli()
	// The consume-queue unit's tags code is the delivery time: peek at it
	// so a level with nothing due costs no record read.
	var peek [1]store.CQUnit
	if units, ok := d.store.ConsumeQueueUnits(TopicSchedule, q, off, 1, peek[:0]); ok && len(units) == 1 && units[0].TagsCode > now && units[0].TagsCode <= now+delay {
		return
	}
	for {
		d.store.GetMessages(TopicSchedule, q, off, 32, 256<<10, nil, res)
		if res.Status != store.Found {
			next := res.NextBeginOffset
			res.Release()
			if next != off && (res.Status == store.OffsetTooSmall || res.Status == store.OffsetOverflowBadly || res.Status == store.NoMatchedMessage) {
				d.setOffset(level, next)
			}
			return
		}
		for i, rec := range res.Records {
			var e message.Ext
			if err := message.Decode(rec, &e); err != nil {
				d.log.Error("delay: bad scheduled record", "level", level, "offset", res.QueueOffsets[i], "err", err)
				off = res.QueueOffsets[i] + 1
				continue
			}
			if e.StoreTimestamp+delay > now {
				res.Release()
				d.setOffset(level, off)
				return
			}
			if !d.redeliver(&e) {
				res.Release()
				d.setOffset(level, off)
				return
			}
			off = res.QueueOffsets[i] + 1
		}
		res.Release()
		d.setOffset(level, off)
	}
}

// runningStats adds ScheduleMessageService.buildRunningStats' keys to
// the runtime table: for each level with a recorded offset,
// scheduleMessageOffset_<level> = "<next offset>,<queue's max offset>".
func (d *delayService) runningStats(kv map[string]string) {
	d.mu.Lock()
	levels := make(map[int32]int64, len(d.offsets))
	maps.Copy(levels, d.offsets)
	d.mu.Unlock()
	for level, off := range levels {
		maxOff := d.store.MaxOffset(TopicSchedule, level-1)
		kv["scheduleMessageOffset_"+strconv.Itoa(int(level))] = strconv.FormatInt(off, 10) + "," + strconv.FormatInt(maxOff, 10)
	}
}

func (d *delayService) setOffset(level int32, off int64) {
	d.mu.Lock()
	d.offsets[level] = off
	d.mu.Unlock()
}

// redeliver stores e under its real topic and waits for the result.
func (d *delayService) redeliver(e *message.Ext) bool {
	topic, _ := message.Property(e.Properties, message.PropertyRealTopic)
	qid, _ := message.Property(e.Properties, message.PropertyRealQueueID)
	if topic == "" {
		d.log.Error("delay: scheduled record without REAL_TOPIC dropped", "offset", e.QueueOffset)
		return true
	}
	// compat: Java's messageTimeUp clears DELAY and sets WAIT=false on its
	// property map only after the stored properties string was built, so
	// the delivered record keeps the scheduled record's properties as they
	// are (DELAY, REAL_TOPIC, REAL_QID included); the Java 5.3.3 broker's
	// store shows exactly that.
	props := e.Properties
	tags, _ := message.Property(props, message.PropertyTags)
	m := message.Message{
		Topic: topic, QueueID: atoi32(qid), Flag: e.Flag,
		Body:          append([]byte(nil), e.Body...),
		Properties:    props,
		BornTimestamp: e.BornTimestamp, BornHost: e.BornHost, StoreHost: e.StoreHost,
		SysFlag: e.SysFlag, ReconsumeTimes: e.ReconsumeTimes, TagsCode: message.TagsHash(tags),
	}
	done := make(chan store.PutResult, 1)
	d.store.Put(&m, func(r store.PutResult) { done <- r })
	r := <-done
	if !putStored(r.Status) {
		d.log.Warn("delay: redelivery failed; will retry", "topic", topic, "status", r.Status, "err", r.Err)
		return false
	}
	return true
}
