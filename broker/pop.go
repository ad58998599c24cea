package broker

import (
	"errors"
	"log/slog"
	"math/rand/v2"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// Java's ConsumeInitMode (MIN reads a new group from the queue start;
// MAX, from its last message).
const (
	popInitMin = 0
	popInitMax = 1
)

// maxPopMsgs is Java's cap on POP_MESSAGE's maxMsgNums.
const maxPopMsgs = 32

// popKey names one (topic, group, queue): the queue lock of a pop and the
// order-pop state.
type popKey struct {
	topic, group string
	queue        int32
}

// popRequest is one POP_MESSAGE or NOTIFICATION in flight, possibly held
// for long polling. Like pullRequest it has one owner at a time: the
// handler, the hold table (park) or the writer (ReplyWithBody's callback),
// and it is freed exactly once (popProcessor.free).
type popRequest struct {
	p      *popProcessor
	c      *transport.Conn
	req    *codec.Frame
	lease  *transport.Lease
	notify bool // NOTIFICATION rather than POP_MESSAGE
	peek   bool // PEEK_MESSAGE: read from the pop offset, change nothing
	h      header.PopMessageRequest
	nh     header.NotificationRequest

	sub   filter.Subscription
	sf    store.Filter
	retry []string // the pop retry topics read besides h.Topic

	// Hold bookkeeping; guarded by popHolds.mu once parked.
	deadline time.Time
	gens     [3]uint64 // arrival generations of watched topics when the scan began
	watched  [3]*popWatch
	nwatched int
	claimed  bool
	index    int // in the deadline heap

	// Scan state, reused across requests.
	results []store.GetResult
	nres    int
	records [][]byte
	recoded [][]byte // re-encoded retry records (own memory)
	offs    []int64
	start   []byte // startOffsetInfo
	msgInfo []byte // msgOffsetInfo
	order   []byte // orderCountInfo
	scratch []byte
	ext     [8]codec.KV // backing array of resp.Ext
	resp    codec.Frame
	written func(error)
	rb      reviveBuf // the checkpoint put's buffers
}

func (pr *popRequest) onWritten(error) {
	pr.releaseResults()
	pr.p.free(pr)
}

func (pr *popRequest) releaseResults() {
	for i := 0; i < pr.nres; i++ {
		pr.results[i].Release()
	}
	pr.nres = 0
}

func (pr *popRequest) topic() string {
	if pr.notify {
		return pr.nh.Topic
	}
	return pr.h.Topic
}

func (pr *popRequest) group() string {
	if pr.notify {
		return pr.nh.ConsumerGroup
	}
	return pr.h.ConsumerGroup
}

func (pr *popRequest) queueID() int32 {
	if pr.notify {
		return pr.nh.QueueID
	}
	return pr.h.QueueID
}

func (pr *popRequest) pollTime() int64 {
	if pr.notify {
		return pr.nh.PollTime
	}
	return pr.h.PollTime
}

// popProcessor serves POP_MESSAGE, NOTIFICATION and POLLING_INFO; acks,
// changes and revive live in popack.go and poprevive.go.
type popProcessor struct {
	cfg     *Config
	live    *liveConfig
	store   MessageStore
	topics  *topicTable
	groups  *groupTable
	offsets *offsetTable
	filters *filter.Cache
	clients *clientManager
	stats   *brokerStats
	host    *hostBox
	log     *slog.Logger
	holds   *popHolds
	orders  *popOrders
	role    *roleState  // a slave runs no revive (nil: a master)
	metrics *popMetrics // nil with metrics off

	reviveTopic string
	reviveQueue int32         // reviveQueueNum
	ckCounter   atomic.Uint64 // rotates reviveQid (Java's ckMessageNumber)

	qmu    sync.Mutex
	qlocks map[popKey]*atomic.Bool // Java's QueueLockManager; guarded by qmu

	rmu        sync.Mutex
	retryNames map[groupTopic]string // guarded by rmu

	reqs     sync.Pool
	bufs     sync.Pool // *reviveBuf of acks and changes
	inflight atomic.Int64
}

func newPopProcessor(cfg *Config, live *liveConfig, st MessageStore, topics *topicTable, groups *groupTable, offsets *offsetTable,
	filters *filter.Cache, clients *clientManager, stats *brokerStats, host *hostBox, log *slog.Logger) *popProcessor {
	p := &popProcessor{cfg: cfg, live: live, store: st, topics: topics, groups: groups, offsets: offsets, filters: filters,
		clients: clients, stats: stats, host: host, log: log.With("svc", "pop"),
		reviveTopic: popfmt.ReviveTopic(cfg.BrokerClusterName), reviveQueue: int32(max(cfg.ReviveQueueNum, 1)),
		qlocks: make(map[popKey]*atomic.Bool), orders: newPopOrders(), retryNames: make(map[groupTopic]string)}
	p.holds = newPopHolds(p.rerun, cfg.PopPollingSize, cfg.MaxPopPollingSize)
	p.holds.drop = p.free
	return p
}

// ensureReviveTopic creates the revive topic (Java's TopicConfigManager
// creates rmq_sys_REVIVE_LOG_<cluster> with reviveQueueNum queues).
func (p *popProcessor) ensureReviveTopic() {
	p.topics.createIfAbsent(p.reviveTopic, p.reviveQueue, body.PermRead|body.PermWrite, 0)
}

// retryTopic is the pop retry topic of (topic, group), built once.
func (p *popProcessor) retryTopic(topic, group string) string {
	k := groupTopic{topic: topic, group: group}
	p.rmu.Lock()
	defer p.rmu.Unlock()
	if rt, ok := p.retryNames[k]; ok {
		return rt
	}
	rt := popfmt.RetryTopic(topic, group, p.cfg.EnableRetryTopicV2)
	if len(p.retryNames) >= 1<<16 {
		clear(p.retryNames) // bounded: names come from requests
	}
	p.retryNames[groupTopic{topic: strings.Clone(topic), group: strings.Clone(group)}] = rt
	return rt
}

func (p *popProcessor) alloc(c *transport.Conn, req *codec.Frame, l *transport.Lease) *popRequest {
	pr, _ := p.reqs.Get().(*popRequest)
	if pr == nil {
		pr = &popRequest{p: p}
		pr.written = pr.onWritten
		pr.sf.CQ = func(code int64) bool { return pr.sub.MatchCode(code) }
		pr.sf.Record = func(rec []byte) bool { return pr.sub.MatchRecord(rec) }
	}
	l.Hold()
	pr.c, pr.req, pr.lease = c, req, l
	pr.sub = filter.Subscription{Tag: filter.TagFilter{All: true}}
	p.inflight.Add(1)
	return pr
}

func (p *popProcessor) free(pr *popRequest) {
	p.inflight.Add(-1)
	pr.releaseResults()
	pr.lease.Release()
	for i := range pr.recoded {
		pr.recoded[i] = nil
	}
	pr.c, pr.req, pr.lease, pr.resp = nil, nil, nil, codec.Frame{}
	pr.h, pr.nh, pr.notify, pr.peek = header.PopMessageRequest{}, header.NotificationRequest{}, false, false
	pr.sub, pr.retry, pr.recoded = filter.Subscription{}, pr.retry[:0], pr.recoded[:0]
	pr.nwatched, pr.watched, pr.deadline = 0, [3]*popWatch{}, time.Time{}
	p.reqs.Put(pr)
}

func (p *popProcessor) reply(pr *popRequest, resp *codec.Frame) {
	if err := pr.c.Reply(pr.req, resp); err != nil {
		p.log.Debug("pop: write response", "remote", pr.c.RemoteAddr(), "err", err)
	}
	p.free(pr)
}

// handlePop is POP_MESSAGE's handler (pop pool); it always answers itself.
func (p *popProcessor) handlePop(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	pr := p.alloc(c, req, l)
	if r := headerFailure(req, pr.h.Decode(req)); r != nil {
		p.reply(pr, r)
		return nil
	}
	if r := p.checkPop(pr); r != nil {
		p.reply(pr, r)
		return nil
	}
	p.process(pr, true)
	return nil
}

// checkPop runs Java PopMessageProcessor's checks in its order and sets
// the filter.
func (p *popProcessor) checkPop(pr *popRequest) *codec.Frame {
	req, h := pr.req, &pr.h
	ip := p.cfg.BrokerIP1
	if p.live.perm.Load()&body.PermRead == 0 {
		return errResp(req, codec.RespNoPermission, remarks.PopForbidden(ip))
	}
	if h.MaxMsgNums > maxPopMsgs {
		return errResp(req, codec.RespInvalidParameter, remarks.PopTooMany(ip))
	}
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		return errResp(req, codec.RespTopicNotExist, remarks.PullTopicNotExist(h.Topic))
	}
	if tc.Perm&body.PermRead == 0 {
		return errResp(req, codec.RespNoPermission, remarks.PopTopicForbidden(h.Topic))
	}
	if h.QueueID >= tc.ReadQueueNums {
		return errResp(req, codec.RespInvalidParameter, remarks.PopQueueIllegal(h.QueueID, h.Topic, tc.ReadQueueNums, pr.c.RemoteAddr()))
	}
	sg, ok := p.groups.find(h.ConsumerGroup)
	if !ok {
		return errResp(req, codec.RespSubscriptionGroupNotExist, remarks.PopGroupNotExist(h.ConsumerGroup))
	}
	if !sg.ConsumeEnable {
		return errResp(req, codec.RespNoPermission, remarks.PopGroupNoPermission(h.ConsumerGroup))
	}
	if h.Exp != "" {
		sub, err := p.filters.Subscription(h.ExpType, h.Exp)
		if err != nil && !errors.Is(err, filter.ErrUnsupportedType) {
			return errResp(req, codec.RespSubscriptionParseFailed, remarks.ParseSubscriptionFailedPop)
		}
		if err != nil || (!filter.IsTagType(h.ExpType) && !p.live.propertyFilter.Load()) {
			return errResp(req, codec.RespSystemError, remarks.FilterTypeNotSupported(h.ExpType))
		}
		pr.sub = sub
	}
	if !h.Order {
		// Java reads the v2 retry topic, and with
		// retrieveMessageFromPopRetryTopicV1 the v1 one too.
		pr.retry = append(pr.retry, p.retryTopic(h.Topic, h.ConsumerGroup))
		if p.cfg.EnableRetryTopicV2 {
			pr.retry = append(pr.retry, popfmt.RetryTopic(h.Topic, h.ConsumerGroup, false))
		}
	}
	return nil
}

// rerun re-runs a held request after an arrival or its deadline (a
// hold-table goroutine); it always answers.
func (p *popProcessor) rerun(pr *popRequest) {
	c := pr.c
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("pop: held request panic", "remote", c.RemoteAddr(), "panic", v, "stack", string(debug.Stack()))
		}
	}()
	if c.Closed() {
		p.free(pr)
		return
	}
	p.process(pr, time.Now().Before(pr.deadline))
}

// process scans, then answers or parks pr.
func (p *popProcessor) process(pr *popRequest, mayPark bool) {
	begun := time.Now() // GROUP_GET_LATENCY's start (Java: processRequest's)
	for {
		gensOK := p.holds.snapshot(pr)
		if pr.notify {
			if p.hasMessage(pr) || !mayPark || pr.nh.PollTime <= 0 {
				p.replyNotify(pr, p.hasMessage(pr), false)
				return
			}
		} else {
			popTime := time.Now().UnixMilli()
			reviveQid, rest := p.scan(pr, popTime)
			if len(pr.records) > 0 {
				// Java's key: the request's queue (-1 for any) and topic.
				p.stats.onGetLatency(pr.h.ConsumerGroup, pr.h.Topic, pr.h.QueueID, elapsedMs(begun))
				p.replyPop(pr, codec.RespSuccess, popTime, reviveQid, rest)
				return
			}
			if !mayPark || pr.h.PollTime <= 0 {
				p.replyPop(pr, codec.RespPollingTimeout, popTime, reviveQid, rest)
				return
			}
		}
		if pr.deadline.IsZero() {
			pr.deadline = time.Now().Add(min(time.Duration(pr.pollTime())*time.Millisecond, maxHold))
		}
		switch p.holds.park(pr, gensOK) {
		case popParked:
			return
		case popFull:
			if pr.notify {
				p.replyNotify(pr, false, true)
			} else {
				p.replyPop(pr, codec.RespPollingFull, time.Now().UnixMilli(), 0, 0)
			}
			return
		}
		// popChanged: something arrived since the scan began; scan again.
	}
}

// replyPop answers a POP_MESSAGE with Java's response header; on SUCCESS
// the records go out with one vectored write.
func (p *popProcessor) replyPop(pr *popRequest, code codec.ResponseCode, popTime int64, reviveQid int32, rest int64) {
	h := header.PopMessageResponse{PopTime: popTime, InvisibleTime: pr.h.InvisibleTime, ReviveQid: reviveQid, RestNum: rest,
		StartOffsetInfo: bytesString(pr.start), MsgOffsetInfo: bytesString(pr.msgInfo)}
	if pr.h.Order {
		h.OrderCountInfo = bytesString(pr.order)
	}
	remark := remarks.PopNoMessageInQueue
	if code == codec.RespSuccess {
		remark = remarks.PopFound
	}
	pr.resp = codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion,
		Opaque: pr.req.Opaque, Flag: codec.FlagResponse, Remark: remark, Ext: pr.ext[:0]}
	pr.scratch = h.AppendExt(&pr.resp, pr.scratch[:0])
	if code != codec.RespSuccess {
		p.reply(pr, &pr.resp)
		return
	}
	c := pr.c
	if err := c.ReplyWithBody(pr.req, &pr.resp, pr.records, pr.written); err != nil {
		p.log.Debug("pop: write response", "remote", c.RemoteAddr(), "err", err)
	}
}

// scan is Java's pop over the retry topic(s) and the topic's queues; it
// fills pr.records, the info strings, and returns the reviveQid and
// restNum.
func (p *popProcessor) scan(pr *popRequest, popTime int64) (int32, int64) {
	h := &pr.h
	pr.releaseResults()
	pr.records, pr.start, pr.msgInfo, pr.order = pr.records[:0], pr.start[:0], pr.msgInfo[:0], pr.order[:0]
	for i := range pr.recoded {
		pr.recoded[i] = nil
	}
	pr.recoded = pr.recoded[:0]
	reviveQid := int32(popfmt.OrderReviveQueue)
	if !h.Order {
		reviveQid = int32(p.ckCounter.Add(1) % uint64(p.reviveQueue))
	}
	maxMsgs := int(h.MaxMsgNums)
	if maxMsgs <= 0 {
		maxMsgs = 1
	}
	randomQ := rand.IntN(100)
	needRetry := randomQ < p.cfg.PopFromRetryProbability
	var rest int64
	fromTopic := func(topic string, retry bool) {
		tc, ok := p.topics.get(topic)
		if !ok || tc.ReadQueueNums <= 0 {
			return
		}
		for i := int32(0); i < tc.ReadQueueNums; i++ {
			q := (int32(randomQ) + i) % tc.ReadQueueNums
			rest += p.popQueue(pr, topic, retry, q, maxMsgs, popTime, reviveQid)
		}
	}
	retries := func() {
		for _, rt := range pr.retry {
			fromTopic(rt, true)
		}
	}
	if needRetry {
		retries()
	}
	if h.QueueID < 0 {
		fromTopic(h.Topic, false)
	} else {
		rest += p.popQueue(pr, h.Topic, false, h.QueueID, maxMsgs, popTime, reviveQid)
	}
	if !needRetry && len(pr.records) < maxMsgs {
		retries()
	}
	return reviveQid, rest
}

// queueLock is Java's QueueLockManager.tryLock: one pop at a time per
// (topic, group, queue).
func (p *popProcessor) queueLock(k popKey) *atomic.Bool {
	p.qmu.Lock()
	l := p.qlocks[k]
	if l == nil {
		l = new(atomic.Bool)
		p.qlocks[popKey{strings.Clone(k.topic), strings.Clone(k.group), k.queue}] = l
	}
	p.qmu.Unlock()
	if !l.CompareAndSwap(false, true) {
		return nil
	}
	return l
}

// popOffset is Java's getPopOffset + getInitOffset: the group's committed
// offset, or the initial one (committed at once).
func (p *popProcessor) popOffset(topic, group string, q int32, initMode int32, commit bool) int64 {
	if off, ok := p.offsets.query(group, topic, q); ok && off >= 0 {
		return off
	}
	var off int64
	if initMode == popInitMin || strings.HasPrefix(topic, RetryGroupPrefix) {
		off = p.store.MinOffset(topic, q)
	} else if p.store.MinOffset(topic, q) <= 0 {
		// compat: initPopOffsetByCheckMsgInMem (default true): a queue
		// that still holds its first message is read from 0.
		off = 0
	} else {
		off = max(p.store.MaxOffset(topic, q)-1, 0) // Java: "pop last one"
	}
	if commit {
		p.offsets.commit(group, topic, q, off)
	}
	return off
}

// popQueue is Java's popMsgFromQueue; it returns the queue's rest count.
func (p *popProcessor) popQueue(pr *popRequest, topic string, retry bool, q int32, maxMsgs int, popTime int64, reviveQid int32) int64 {
	h := &pr.h
	if pr.peek {
		return p.peekQueue(pr, topic, q, maxMsgs)
	}
	k := popKey{topic, h.ConsumerGroup, q}
	lock := p.queueLock(k)
	if lock == nil {
		off := p.popOffset(topic, h.ConsumerGroup, q, h.InitMode, true)
		if h.Order {
			return 0
		}
		return p.store.MaxOffset(topic, q) - off
	}
	defer lock.Store(false)
	off := p.popOffset(topic, h.ConsumerGroup, q, h.InitMode, true)
	if h.Order && p.orders.blocked(k, h.AttemptID, time.Now().UnixMilli()) {
		return 0
	}
	if len(pr.records) >= maxMsgs {
		return p.store.MaxOffset(topic, q) - off
	}
	if pr.nres == len(pr.results) {
		pr.results = append(pr.results, store.GetResult{})
	}
	res := &pr.results[pr.nres]
	pr.nres++
	// A SQL92 subscription passes every consume-queue unit (MatchAllCodes)
	// but must still be evaluated on each record's properties.
	var sf *store.Filter
	if !retry && (pr.sub.SQL != nil || !pr.sub.MatchAllCodes()) {
		sf = &pr.sf
	}
	maxBytes := int(p.live.maxTransferBytes.Load())
	p.store.GetMessages(topic, q, off, maxMsgs-len(pr.records), maxBytes, sf, res)
	switch res.Status {
	case store.OffsetTooSmall, store.OffsetOverflowBadly, store.OffsetFoundNull:
		// compat: Java commits the corrected offset and reads again.
		res.Release()
		off = res.NextBeginOffset
		p.offsets.commit(h.ConsumerGroup, topic, q, off)
		p.store.GetMessages(topic, q, off, maxMsgs-len(pr.records), maxBytes, sf, res)
	}
	rest := res.MaxOffset - res.NextBeginOffset
	if len(res.Records) == 0 {
		switch res.Status {
		case store.NoMatchedMessage, store.OffsetFoundNull, store.MessageWasRemoving, store.NoMatchedLogicQueue:
			if res.NextBeginOffset > off {
				// Java's addCkMock: filtered-out messages move the offset on.
				p.offsets.commit(h.ConsumerGroup, topic, q, res.NextBeginOffset)
			}
		}
		return rest
	}
	if h.Order {
		p.orders.update(k, h.AttemptID, popTime, h.InvisibleTime, res.QueueOffsets)
		pr.order = popfmt.AppendOrderCountInfo(pr.order, topic, q, 0)
	} else {
		ck := popfmt.CheckPoint{StartOffset: off, PopTime: popTime, InvisibleTime: h.InvisibleTime, Num: int8(len(res.Records)),
			QueueID: q, Topic: topic, CID: h.ConsumerGroup, BrokerName: p.cfg.BrokerName}
		ck.Diff = pr.rb.diff[:0]
		for _, o := range res.QueueOffsets {
			ck.Diff = append(ck.Diff, int32(o-off))
		}
		pr.rb.diff = ck.Diff
		if !p.putReviveWith(&pr.rb, &ck, reviveQid) {
			// Java: the messages stay unpopped (the offset does not move).
			res.Release()
			return rest + int64(len(res.QueueOffsets))
		}
		// Java's addCkJustOffset: the offset moves once the checkpoint is stored.
		p.offsets.commit(h.ConsumerGroup, topic, q, res.NextBeginOffset)
	}
	pr.start = popfmt.AppendStartOffsetInfo(pr.start, topic, q, off)
	pr.msgInfo = popfmt.AppendMsgOffsetInfo(pr.msgInfo, topic, q, res.QueueOffsets)
	if retry {
		// compat: popResponseReturnActualRetryTopic=false: a retry record
		// goes out re-encoded under the original topic, with POP_CK built
		// by the broker (the client builds it for the others).
		for _, rec := range res.Records {
			if b := p.recode(rec, off, popTime, h.InvisibleTime, reviveQid, h.Topic); b != nil {
				pr.recoded = append(pr.recoded, b)
				pr.records = append(pr.records, b)
			}
		}
		res.Release()
	} else {
		pr.records = append(pr.records, res.Records...)
	}
	p.stats.onPopGet(h.ConsumerGroup, topic, len(res.QueueOffsets), res.TotalBytes)
	p.metrics.onDeliver(h.ConsumerGroup, h.Topic, topic != h.Topic, len(res.QueueOffsets), res.TotalBytes)
	return rest
}

// recode re-encodes a retry record with POP_CK and the original topic.
func (p *popProcessor) recode(rec []byte, ckOffset, popTime, invisible int64, reviveQid int32, topic string) []byte {
	var e message.Ext
	if message.Decode(rec, &e) != nil {
		return nil
	}
	ck := popfmt.AppendExtraInfo(nil, ckOffset, popTime, invisible, reviveQid, e.Topic, p.cfg.BrokerName, e.QueueID, e.QueueOffset)
	m := e.Message()
	if _, ok := message.Property(m.Properties, message.PropertyPopCK); !ok {
		m.Properties = message.SetProperty(m.Properties, message.PropertyPopCK, string(ck))
	}
	m.Topic = topic
	return message.AppendRecord(nil, &m, e.BodyCRC, e.QueueOffset, e.PhysicalOffset)
}

// reviveBuf holds a pop's checkpoint put, reused across requests so a pop
// allocates nothing for it. The store has encoded the record when its
// done callback runs, so the buffers may be reused after the wait.
type reviveBuf struct {
	diff  []int32
	list  []int64 // a batch ack's offsets
	body  []byte
	props []byte
	m     message.Message
	done  chan store.PutStatus
	cb    func(store.PutResult)
	// ACK_MESSAGE / BATCH_ACK_MESSAGE's reply, decoded body and retry
	// topic name (popack.go).
	resp  codec.Frame
	batch popfmt.BatchAckBody
	topic []byte
}

// putReviveWith appends a checkpoint to the revive log (Java's buildCkMsg)
// and waits for the put.
func (p *popProcessor) putReviveWith(rb *reviveBuf, ck *popfmt.CheckPoint, reviveQid int32) bool {
	rb.body = ck.AppendJSON(rb.body[:0])
	rb.props = message.AppendProperty(rb.props[:0], message.PropertyTags, popfmt.CKTag)
	rb.props = append(rb.props, message.PropertyUniqKey...)
	rb.props = append(rb.props, message.NameValueSeparator)
	rb.props = ck.AppendUniqID(rb.props)
	rb.props = append(rb.props, message.PropertySeparator)
	rb.props = appendDeliverMs(rb.props, ck.ReviveTime()-popfmt.AckTimeInterval)
	return p.putBuf(rb, popfmt.CKTag, ckTagsCode, reviveQid, ck.CID, ck.Topic, reviveKindCK)
}

// putAckWith appends an ack (or batch ack) record from rb's buffers.
func (p *popProcessor) putAckWith(rb *reviveBuf, a *popfmt.AckMsg, reviveQid int32) bool {
	tag, code := popfmt.AckTag, ackTagsCode
	if a.AckOffsetList != nil {
		tag, code = popfmt.BatchAckTag, batchAckTagsCode
	}
	rb.body = a.AppendJSON(rb.body[:0])
	rb.props = message.AppendProperty(rb.props[:0], message.PropertyTags, tag)
	rb.props = append(rb.props, message.PropertyUniqKey...)
	rb.props = append(rb.props, message.NameValueSeparator)
	rb.props = a.AppendUniqID(rb.props)
	rb.props = append(rb.props, message.PropertySeparator)
	rb.props = appendDeliverMs(rb.props, a.DeliverTime)
	return p.putBuf(rb, tag, code, reviveQid, a.ConsumerGroup, a.Topic, reviveKindAck)
}

func (p *popProcessor) putBuf(rb *reviveBuf, tag string, tagsCode int64, reviveQid int32, group, topic string, kind reviveKind) bool {
	if rb.done == nil {
		rb.done = make(chan store.PutStatus, 1)
		rb.cb = func(r store.PutResult) { rb.done <- r.Status }
	}
	host := p.host.get()
	rb.m = message.Message{Topic: p.reviveTopic, QueueID: reviveQid, Body: rb.body, Properties: bytesString(rb.props),
		BornTimestamp: time.Now().UnixMilli(), BornHost: host, StoreHost: host, TagsCode: tagsCode}
	p.store.Put(&rb.m, rb.cb)
	st := <-rb.done
	ok := putStored(st)
	p.metrics.onPut(group, topic, kind, st)
	rb.m = message.Message{}
	if !ok {
		p.log.Warn("pop: revive log put failed", "tag", tag, "queue", reviveQid)
	}
	return ok
}

// appendDeliverMs adds TIMER_DELIVER_MS, the time Java gives a revive-log
// record (setDeliverTimeMs). compat: Java's put routes the record through
// the timer wheel until then; ours appends it at once (our revive service
// waits by the checkpoint's own time), and the property lets a Java
// broker's revive service, which orders the log by it, handle our records.
func appendDeliverMs(dst []byte, ms int64) []byte {
	dst = append(dst, message.PropertyTimerDeliverMs...)
	dst = append(dst, message.NameValueSeparator)
	dst = strconv.AppendInt(dst, ms, 10)
	return append(dst, message.PropertySeparator)
}

var (
	ckTagsCode       = message.TagsHash(popfmt.CKTag)
	ackTagsCode      = message.TagsHash(popfmt.AckTag)
	batchAckTagsCode = message.TagsHash(popfmt.BatchAckTag)
)
