package broker

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/store"
)

// PullSysFlag bits.
const (
	pullFlagCommitOffset = 1 << 0
	pullFlagSuspend      = 1 << 1
	pullFlagSubscription = 1 << 2
	pullFlagClassFilter  = 1 << 3
)

// maxHold caps a long-poll hold so the reply always reaches the client
// before its own timeout (30 s for the Java and Go clients).
const maxHold = 25 * time.Second

// pullHeader is PullMessageRequestHeader.
type pullHeader struct {
	group, topic, subscription, expressionType string
	queueID, maxMsgNums, sysFlag, maxMsgBytes  int32
	queueOffset, commitOffset, suspendMillis   int64
	subVersion                                 int64
}

func (h *pullHeader) parse(req *codec.Frame) {
	*h = pullHeader{}
	for _, kv := range req.Ext {
		v := kv.Value
		switch kv.Key {
		case "consumerGroup":
			h.group = v
		case "topic":
			h.topic = v
		case "queueId":
			h.queueID = atoi32(v)
		case "queueOffset":
			h.queueOffset = atoi64(v)
		case "maxMsgNums":
			h.maxMsgNums = atoi32(v)
		case "sysFlag":
			h.sysFlag = atoi32(v)
		case "commitOffset":
			h.commitOffset = atoi64(v)
		case "suspendTimeoutMillis":
			h.suspendMillis = atoi64(v)
		case "subscription":
			h.subscription = v
		case "subVersion":
			h.subVersion = atoi64(v)
		case "expressionType":
			h.expressionType = v
		case "maxMsgBytes":
			h.maxMsgBytes = atoi32(v)
		}
	}
}

// pullRequest is one pull in flight (possibly held for long polling).
type pullRequest struct {
	p        *pullProcessor
	c        *transport.Conn
	req      *codec.Frame
	lease    *transport.Lease // req's, held until pr is freed (h's strings alias it)
	h        pullHeader
	sub      filter.Subscription // read only: its slices are shared with the cache
	sf       store.Filter        // sf.CQ = pr.sub.MatchCode, bound once
	deadline time.Time
	claimed  bool // guarded by holdTable.mu: set by whoever takes it out
	index    int  // position in the timer heap; guarded by holdTable.mu

	recordFn func([]byte) bool

	res     store.GetResult
	resp    codec.Frame
	ext     [4]codec.KV
	vals    []byte      // backing store of the response's ext values
	written func(error) // pr.onWritten, bound once
}

func (pr *pullRequest) matchCode(tagsCode int64) bool { return pr.sub.MatchCode(tagsCode) }

// matchProps evaluates the SQL92 selector on a properties string (true
// for TAG subscriptions).
func (pr *pullRequest) matchProps(props string) bool {
	return pr.sub.SQL == nil || pr.sub.SQL.Match(props)
}

func (pr *pullRequest) matchRecord(rec []byte) bool { return pr.sub.MatchRecord(rec) }

// onWritten runs once the records have left the mapped segments.
func (pr *pullRequest) onWritten(error) {
	pr.res.Release()
	pr.p.free(pr)
}

// pullProcessor serves PULL_MESSAGE and LITE_PULL_MESSAGE.
type pullProcessor struct {
	cfg     *Config
	live    *liveConfig
	store   MessageStore
	topics  *topicTable
	groups  *groupTable
	clients *clientManager
	offsets *offsetTable
	stats   *brokerStats
	holds   *holdTable
	log     *slog.Logger
	filters *filter.Cache

	reqs sync.Pool // *pullRequest
}

func newPullProcessor(cfg *Config, live *liveConfig, st MessageStore, topics *topicTable, groups *groupTable, clients *clientManager, offsets *offsetTable, stats *brokerStats, filters *filter.Cache, log *slog.Logger) *pullProcessor {
	p := &pullProcessor{cfg: cfg, live: live, store: st, topics: topics, groups: groups, clients: clients, offsets: offsets, stats: stats, log: log,
		filters: filters}
	p.holds = newHoldTable(p.repull, st, log)
	return p
}

func (p *pullProcessor) alloc(c *transport.Conn, req *codec.Frame, l *transport.Lease) *pullRequest {
	pr, _ := p.reqs.Get().(*pullRequest)
	if pr == nil {
		pr = &pullRequest{p: p, vals: make([]byte, 0, 64)}
		pr.sf.CQ = pr.matchCode
		pr.written = pr.onWritten
		pr.recordFn = pr.matchRecord
	}
	l.Hold()
	pr.c, pr.req, pr.lease = c, req, l
	pr.sub = filter.Subscription{Tag: filter.TagFilter{All: true}}
	return pr
}

func (p *pullProcessor) free(pr *pullRequest) {
	pr.lease.Release()
	pr.c, pr.req, pr.lease, pr.resp, pr.sub = nil, nil, nil, codec.Frame{}, filter.Subscription{}
	pr.h = pullHeader{}
	p.reqs.Put(pr)
}

// handle is the transport handler (runs on the pull pool). It always
// answers itself (or parks the request), so it returns nil; the request
// stays leased until pr is freed.
func (p *pullProcessor) handle(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	pr := p.alloc(c, req, l)
	pr.h.parse(req)
	p.process(pr, true)
	return nil
}

// repull re-runs a held pull after an arrival or its deadline; it always
// answers.
func (p *pullProcessor) repull(pr *pullRequest) {
	if pr.c.Closed() {
		p.free(pr)
		return
	}
	p.process(pr, false)
}

func pullErr(req *codec.Frame, code codec.ResponseCode, remark string) *codec.Frame {
	return codec.NewResponse(req, int32(code), remark)
}

// reply writes an error response and frees pr.
func (p *pullProcessor) reply(pr *pullRequest, resp *codec.Frame) {
	if err := pr.c.Write(resp); err != nil {
		p.log.Debug("pull: write response", "remote", pr.c.RemoteAddr(), "err", err)
	}
	p.free(pr)
}

// process runs one pull: it writes the response, or parks the request
// for long polling. pr is owned by process from here on.
func (p *pullProcessor) process(pr *pullRequest, allowSuspend bool) {
	req, h := pr.req, &pr.h
	if p.live.perm.Load()&body.PermRead == 0 {
		p.reply(pr, pullErr(req, codec.RespNoPermission, "the broker["+p.cfg.BrokerIP1+"] pulling message is forbidden"))
		return
	}
	if allowSuspend {
		if r := p.check(pr); r != nil {
			p.reply(pr, r)
			return
		}
	}

	res := &pr.res
	maxMsgs := int(h.maxMsgNums)
	if limit := int(p.live.maxTransferCount.Load()); maxMsgs <= 0 || maxMsgs > limit {
		maxMsgs = limit
	}
	maxBytes := int(p.live.maxTransferBytes.Load())
	if h.maxMsgBytes > 0 && int(h.maxMsgBytes) < maxBytes {
		maxBytes = int(h.maxMsgBytes)
	}
	sf := &pr.sf
	pr.sf.Record = nil
	if pr.sub.SQL != nil {
		pr.sf.Record = pr.recordFn
	} else if pr.sub.MatchAllCodes() {
		sf = nil
	}
	p.store.GetMessages(h.topic, h.queueID, h.queueOffset, maxMsgs, maxBytes, sf, res)

	code, remark := pullCode(res.Status, h.queueOffset)
	if allowSuspend && h.sysFlag&pullFlagCommitOffset != 0 {
		p.offsets.commit(h.group, h.topic, h.queueID, h.commitOffset)
	}
	if code == codec.RespPullNotFound && allowSuspend && h.sysFlag&pullFlagSuspend != 0 {
		hold := time.Duration(h.suspendMillis) * time.Millisecond
		if !p.live.longPolling.Load() {
			hold = time.Duration(p.live.shortPollMs.Load()) * time.Millisecond
		}
		hold = min(hold, maxHold)
		if hold > 0 {
			res.Release()
			pr.deadline = time.Now().Add(hold)
			p.holds.park(pr)
			return
		}
	}

	v := pr.vals[:0]
	v = strconv.AppendInt(v, res.NextBeginOffset, 10)
	nextEnd := len(v)
	v = strconv.AppendInt(v, res.MinOffset, 10)
	minEnd := len(v)
	v = strconv.AppendInt(v, res.MaxOffset, 10)
	pr.vals = v
	vs := bytesString(v)
	pr.resp = codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion,
		Opaque: req.Opaque, Flag: codec.FlagResponse, Remark: remark, Ext: pr.ext[:0]}
	pr.resp.Ext = append(pr.resp.Ext,
		codec.KV{Key: "suggestWhichBrokerId", Value: "0"},
		codec.KV{Key: "nextBeginOffset", Value: vs[:nextEnd]},
		codec.KV{Key: "minOffset", Value: vs[nextEnd:minEnd]},
		codec.KV{Key: "maxOffset", Value: vs[minEnd:]},
	)
	if code != codec.RespSuccess {
		res.Release()
		p.reply(pr, &pr.resp)
		return
	}
	p.offsets.notePull(h.group, h.topic, h.queueID, res.NextBeginOffset)
	p.stats.onGet(h.group, h.topic, len(res.Records), res.TotalBytes)
	// The response's header is encoded before WriteWithBody returns; the
	// records are released in pr.written.
	if err := pr.c.WriteWithBody(&pr.resp, res.Records, pr.written); err != nil {
		p.log.Debug("pull: write response", "remote", pr.c.RemoteAddr(), "err", err)
	}
}

// check runs the group, topic, queue and subscription checks of a fresh
// pull and sets its filter.
func (p *pullProcessor) check(pr *pullRequest) *codec.Frame {
	req, h := pr.req, &pr.h
	sg, ok := p.groups.find(h.group)
	if !ok {
		return pullErr(req, codec.RespSubscriptionGroupNotExist, fmt.Sprintf("subscription group [%s] does not exist, %s", h.group, faqSuffix))
	}
	if !sg.ConsumeEnable {
		return pullErr(req, codec.RespNoPermission, "subscription group no permission, "+h.group)
	}
	tc, ok := p.topics.get(h.topic)
	if !ok {
		return pullErr(req, codec.RespTopicNotExist, fmt.Sprintf("topic[%s] not exist, apply first please! %s", h.topic, faqSuffix))
	}
	if tc.Perm&body.PermRead == 0 {
		return pullErr(req, codec.RespNoPermission, "the topic["+h.topic+"] pulling message is forbidden")
	}
	if h.queueID < 0 || h.queueID >= tc.ReadQueueNums {
		return pullErr(req, codec.RespInvalidParameter, fmt.Sprintf("queueId[%d] is illegal, topic:[%s] topicConfig.readQueueNums:[%d] consumer:[%s]",
			h.queueID, h.topic, tc.ReadQueueNums, pr.c.RemoteAddr()))
	}
	return p.subscribe(pr)
}

// subscribe sets pr.sub from the request or from the group's heartbeat,
// with Java PullMessageProcessor's checks in its order: the expression
// must parse before the broker asks whether it filters by SQL92 at all.
func (p *pullProcessor) subscribe(pr *pullRequest) *codec.Frame {
	req, h := pr.req, &pr.h
	typ := h.expressionType
	if h.sysFlag&pullFlagSubscription != 0 {
		sub, err := p.filters.Subscription(typ, h.subscription)
		if err != nil && !errors.Is(err, filter.ErrUnsupportedType) {
			// compat: Java only reaches this for TAG split errors and empty
			// SQL92 text; for SQL92 that fails to compile it asserts
			// (disabled in production) and then filters with nothing. We
			// refuse it with the remark Java uses for the parse failure.
			return pullErr(req, codec.RespSubscriptionParseFailed, "parse the consumer's subscription failed")
		}
		if err != nil || (!filter.IsTagType(typ) && !p.live.propertyFilter.Load()) {
			return p.nonTag(req, typ)
		}
		pr.sub = sub
		return nil
	}
	hs, found, known := p.clients.pullSubscription(h.group, h.topic)
	if !known {
		return pullErr(req, codec.RespSubscriptionNotExist, "the consumer's group info not exist"+faqSuffix)
	}
	if !found {
		return pullErr(req, codec.RespSubscriptionNotExist, "the consumer's subscription not exist"+faqSuffix)
	}
	if hs.version < h.subVersion {
		return pullErr(req, codec.RespSubscriptionNotLatest, "the consumer's subscription not latest")
	}
	// The Go client pulls SQL92 subscriptions saying TAG: the heartbeat's
	// expression type decides.
	if !filter.IsTagType(hs.typ) {
		if hs.err != nil {
			return pullErr(req, codec.RespFilterDataNotExist, "The broker's consumer filter data is not exist!Your expression may be wrong!")
		}
		if !p.live.propertyFilter.Load() {
			return p.nonTag(req, hs.typ)
		}
	}
	pr.sub = hs.filter
	return nil
}

// nonTag answers a subscription type the broker does not evaluate.
func (p *pullProcessor) nonTag(req *codec.Frame, typ string) *codec.Frame {
	// compat: Java's remark when property filtering is off.
	return pullErr(req, codec.RespSystemError, "The broker does not support consumer to filter message by "+typ)
}

// pullCode maps a store status to the pull response code as Java's
// PullMessageProcessor does on a master.
func pullCode(s store.GetStatus, reqOffset int64) (codec.ResponseCode, string) {
	switch s {
	case store.Found:
		return codec.RespSuccess, s.String()
	case store.MessageWasRemoving, store.NoMatchedMessage:
		return codec.RespPullRetryImmediately, s.String()
	case store.NoMatchedLogicQueue, store.NoMessageInQueue:
		if reqOffset != 0 {
			return codec.RespPullOffsetMoved, s.String()
		}
		return codec.RespPullNotFound, s.String()
	case store.OffsetFoundNull, store.OffsetOverflowOne:
		return codec.RespPullNotFound, s.String()
	case store.OffsetOverflowBadly, store.OffsetTooSmall:
		return codec.RespPullOffsetMoved, s.String()
	}
	return codec.RespSystemError, "store getMessage return null"
}
