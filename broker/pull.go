package broker

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
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

// tagFilter matches consume-queue tags codes against a TAG subscription.
type tagFilter struct {
	all   bool
	codes []int32
}

func (f *tagFilter) match(tagsCode int64) bool {
	if f.all {
		return true
	}
	for _, c := range f.codes {
		if int64(c) == tagsCode {
			return true
		}
	}
	return false
}

// setExpr sets the filter of a TAG expression ("*", "a || b"), reusing
// the codes buffer.
func (f *tagFilter) setExpr(expr string) {
	f.codes = f.codes[:0]
	for len(expr) > 0 {
		t := expr
		if i := strings.Index(expr, "||"); i >= 0 {
			t, expr = expr[:i], expr[i+2:]
		} else {
			expr = ""
		}
		if t = strings.TrimSpace(t); t != "" && t != "*" {
			f.codes = append(f.codes, message.JavaStringHash(t))
		} else if t == "*" {
			f.codes = f.codes[:0]
			break
		}
	}
	f.all = len(f.codes) == 0
}

// setTags sets the filter of a heartbeat-registered subscription,
// recomputing codes from the tags the Java way (the Go client hashes UTF-8
// bytes, which differs for non-ASCII tags).
func (f *tagFilter) setTags(tags []string) {
	f.codes = f.codes[:0]
	for _, t := range tags {
		f.codes = append(f.codes, message.JavaStringHash(t))
	}
	f.all = len(f.codes) == 0
}

// pullRequest is one pull in flight (possibly held for long polling).
type pullRequest struct {
	p        *pullProcessor
	c        *transport.Conn
	req      *codec.Frame
	h        pullHeader
	filter   tagFilter
	sf       store.Filter // sf.CQ = pr.matchTag, bound once
	deadline time.Time
	claimed  bool // guarded by holdTable.mu: set by whoever takes it out
	index    int  // position in the timer heap; guarded by holdTable.mu

	sql      *filter.Expr // SQL92 selector, nil for TAG
	recordFn func([]byte) bool

	res     store.GetResult
	resp    codec.Frame
	ext     [4]codec.KV
	vals    []byte      // backing store of the response's ext values
	written func(error) // pr.onWritten, bound once
}

func (pr *pullRequest) matchTag(tagsCode int64) bool { return pr.filter.match(tagsCode) }

// setSQL makes pr filter by a SQL92 selector on the stored properties.
func (pr *pullRequest) setSQL(e *filter.Expr) {
	pr.sql = e
	pr.filter.all = true
	pr.filter.codes = pr.filter.codes[:0]
}

// matchProps evaluates the SQL92 selector (true without one).
func (pr *pullRequest) matchProps(props string) bool {
	if pr.sql == nil {
		return true
	}
	return pr.sql.Match(props)
}

func (pr *pullRequest) matchRecord(rec []byte) bool {
	return pr.sql == nil || pr.sql.MatchRecord(rec)
}

// onWritten runs once the records have left the mapped segments.
func (pr *pullRequest) onWritten(error) {
	pr.res.Release()
	pr.p.free(pr)
}

// pullProcessor serves PULL_MESSAGE and LITE_PULL_MESSAGE.
type pullProcessor struct {
	cfg     *Config
	store   MessageStore
	topics  *topicTable
	groups  *groupTable
	clients *clientManager
	offsets *offsetTable
	stats   *brokerStats
	holds   *holdTable
	log     *slog.Logger
	sql     *filter.Cache

	reqs sync.Pool // *pullRequest
}

func newPullProcessor(cfg *Config, st MessageStore, topics *topicTable, groups *groupTable, clients *clientManager, offsets *offsetTable, stats *brokerStats, log *slog.Logger) *pullProcessor {
	p := &pullProcessor{cfg: cfg, store: st, topics: topics, groups: groups, clients: clients, offsets: offsets, stats: stats, log: log,
		sql: filter.NewCache(0)}
	p.holds = newHoldTable(p.repull, st, log)
	return p
}

func (p *pullProcessor) alloc(c *transport.Conn, req *codec.Frame) *pullRequest {
	pr, _ := p.reqs.Get().(*pullRequest)
	if pr == nil {
		pr = &pullRequest{p: p, vals: make([]byte, 0, 64)}
		pr.sf.CQ = pr.matchTag
		pr.written = pr.onWritten
		pr.recordFn = pr.matchRecord
	}
	pr.c, pr.req = c, req
	pr.filter.all = true
	pr.filter.codes = pr.filter.codes[:0]
	return pr
}

func (p *pullProcessor) free(pr *pullRequest) {
	pr.c, pr.req, pr.resp, pr.sql = nil, nil, codec.Frame{}, nil
	p.reqs.Put(pr)
}

// handle is the transport handler (runs on the pull pool). It always
// answers itself (or parks the request), so it returns nil.
func (p *pullProcessor) handle(c *transport.Conn, req *codec.Frame) *codec.Frame {
	pr := p.alloc(c, req)
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
	if p.cfg.BrokerPermission&body.PermRead == 0 {
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
	if maxMsgs <= 0 || maxMsgs > p.cfg.MaxTransferCountInMemory {
		maxMsgs = p.cfg.MaxTransferCountInMemory
	}
	maxBytes := p.cfg.MaxTransferBytesInMemory
	if h.maxMsgBytes > 0 && int(h.maxMsgBytes) < maxBytes {
		maxBytes = int(h.maxMsgBytes)
	}
	filter := &pr.sf
	pr.sf.Record = nil
	if pr.sql != nil {
		pr.sf.Record = pr.recordFn
	}
	if pr.filter.all && pr.sql == nil {
		filter = nil
	}
	p.store.GetMessages(h.topic, h.queueID, h.queueOffset, maxMsgs, maxBytes, filter, res)

	code, remark := pullCode(res.Status, h.queueOffset)
	if allowSuspend && h.sysFlag&pullFlagCommitOffset != 0 {
		p.offsets.commit(h.group, h.topic, h.queueID, h.commitOffset)
	}
	if code == codec.RespPullNotFound && allowSuspend && h.sysFlag&pullFlagSuspend != 0 {
		hold := time.Duration(h.suspendMillis) * time.Millisecond
		if !p.cfg.LongPollingEnable {
			hold = time.Duration(p.cfg.ShortPollingTimeMills) * time.Millisecond
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

// subscribe sets pr.filter from the request or from the group's heartbeat
// (Java PullMessageProcessor's subscription checks).
func (p *pullProcessor) subscribe(pr *pullRequest) *codec.Frame {
	req, h := pr.req, &pr.h
	pr.sql = nil
	if h.sysFlag&pullFlagSubscription != 0 {
		if h.expressionType != "" && h.expressionType != "TAG" {
			expr, remark := p.compileSQL(h.expressionType, h.subscription)
			if expr == nil {
				if remark == "" {
					return p.nonTag(req, h.expressionType)
				}
				return pullErr(req, codec.RespSubscriptionParseFailed, remark)
			}
			pr.setSQL(expr)
			return nil
		}
		pr.filter.setExpr(h.subscription)
		return nil
	}
	sub, found, known := p.clients.subscription(h.group, h.topic)
	if !known {
		return pullErr(req, codec.RespSubscriptionNotExist, "the consumer's group info not exist"+faqSuffix)
	}
	if !found {
		return pullErr(req, codec.RespSubscriptionNotExist, "the consumer's subscription not exist"+faqSuffix)
	}
	if sub.SubVersion < h.subVersion {
		return pullErr(req, codec.RespSubscriptionNotLatest, "the consumer's subscription not latest")
	}
	if sub.ExpressionType != "" && sub.ExpressionType != "TAG" {
		// The Go client pulls SQL92 subscriptions saying TAG: the
		// heartbeat's expression type decides.
		expr, remark := p.compileSQL(sub.ExpressionType, sub.SubString)
		if expr == nil {
			if remark == "" {
				return p.nonTag(req, sub.ExpressionType)
			}
			return pullErr(req, codec.RespFilterDataNotExist, "The broker's consumer filter data is not exist!Your expression may be wrong!")
		}
		pr.setSQL(expr)
		return nil
	}
	pr.filter.setTags(sub.TagsSet)
	return nil
}

// compileSQL returns the compiled SQL92 selector, or nil with "" when the
// broker does not filter by this type, or nil with the parse error.
func (p *pullProcessor) compileSQL(typ, expr string) (*filter.Expr, string) {
	if typ != "SQL92" || !p.cfg.EnablePropertyFilter {
		return nil, ""
	}
	e, err := p.sql.Compile(expr)
	if err != nil {
		return nil, err.Error()
	}
	return e, ""
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
