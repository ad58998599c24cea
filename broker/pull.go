package broker

import (
	"encoding/binary"
	"errors"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
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

// pullRequest is one pull in flight (possibly held for long polling).
//
// Ownership: a pullRequest comes from pullProcessor.alloc and has exactly
// one owner at a time, which gives it up by exactly one of these calls and
// never touches it (nor its req, h or lease) afterwards:
//
//	p.reply / p.free     frees it at once
//	c.WriteWithBody      pr.written frees it, maybe before WriteWithBody
//	                     returns, on another goroutine
//	p.holds.park         the hold table owns it; any goroutine may wake,
//	                     answer and free it before park returns
//
// So copy what is needed after the hand-off (the Conn, a log field) before
// making it. free checks the rule: a second free of one allocation is a
// broken invariant (it panics in race-detector builds, see strictOwnership,
// and is logged and ignored otherwise).
type pullRequest struct {
	p        *pullProcessor
	c        *transport.Conn
	req      *codec.Frame
	lease    *transport.Lease // req's, held until pr is freed (h's strings alias it)
	h        header.PullMessageRequest
	sub      filter.Subscription // read only: its slices are shared with the cache
	sf       store.Filter        // sf.CQ = pr.sub.MatchCode, bound once
	deadline time.Time
	claimed  bool        // guarded by holdTable.mu: set by whoever takes it out
	index    int         // position in the timer heap; guarded by holdTable.mu
	parkID   uint64      // which parking this is; guarded by holdTable.mu
	owned    atomic.Bool // between alloc and free

	// Position in its queue's and its connection's hold lists, and the
	// memory it was counted as pinning; guarded by holdTable.mu.
	queueIndex, connIndex int
	cost                  int64

	recordFn func([]byte) bool

	// The group's read-from-slave choices (Java SubscriptionGroupConfig
	// brokerId and whichBrokerWhenConsumeSlowly), copied by check so a
	// held pull keeps them.
	groupBrokerID, groupSlowBrokerID int64
	unit                             [1]store.CQUnit // behindMemory's lookup buffer

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
	role    *roleState // a slave refuses pulls unless slaveReadEnable (nil: a master)
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

	// Remarks of a pull refused a hold (built once). compat: SYSTEM_BUSY,
	// not PULL_NOT_FOUND: on "no new message" the Java and Go push
	// consumers pull again at once, which past a cap would spin; on
	// SYSTEM_BUSY both wait (Java pullTimeDelayMillsWhenException, Go
	// _PullDelayTimeWhenError: 3 s) and pull again.
	connFullRemark, tableFullRemark string

	// inflight counts pullRequests between alloc and free (tests check that
	// every pull is freed exactly once).
	inflight atomic.Int64
}

func newPullProcessor(cfg *Config, live *liveConfig, st MessageStore, topics *topicTable, groups *groupTable, clients *clientManager, offsets *offsetTable, stats *brokerStats, filters *filter.Cache, log *slog.Logger) *pullProcessor {
	p := &pullProcessor{cfg: cfg, live: live, store: st, topics: topics, groups: groups, clients: clients, offsets: offsets, stats: stats, log: log,
		filters: filters}
	p.holds = newHoldTable(p.repull, st, log)
	p.holds.drop = p.free
	if cfg.MaxHeldPullsPerConnection > 0 {
		p.holds.maxPerConn = cfg.MaxHeldPullsPerConnection
	}
	if cfg.MaxHeldPullBytes > 0 {
		p.holds.maxBytes = cfg.MaxHeldPullBytes
	}
	p.connFullRemark = remarks.HeldPullsPerConnectionFull(p.holds.maxPerConn)
	p.tableFullRemark = remarks.HeldPullBytesFull(p.holds.maxBytes)
	return p
}

func (p *pullProcessor) alloc(c *transport.Conn, req *codec.Frame, l *transport.Lease) *pullRequest {
	pr, _ := p.reqs.Get().(*pullRequest)
	if pr == nil {
		pr = &pullRequest{p: p, vals: make([]byte, 0, 96)}
		pr.sf.CQ = pr.matchCode
		pr.written = pr.onWritten
		pr.recordFn = pr.matchRecord
	}
	l.Hold()
	pr.c, pr.req, pr.lease = c, req, l
	pr.sub = filter.Subscription{Tag: filter.TagFilter{All: true}}
	pr.owned.Store(true)
	p.inflight.Add(1)
	return pr
}

// free ends pr's life (see pullRequest for who may call it): its lease
// reference goes back, and pr to the pool.
func (p *pullProcessor) free(pr *pullRequest) {
	if !pr.owned.CompareAndSwap(true, false) {
		// A second free would release someone else's lease reference and
		// hand pr to two pulls at once.
		if strictOwnership {
			panic("broker: pullRequest freed twice")
		}
		p.log.Error("broker: pullRequest freed twice (ignored)", "stack", string(debug.Stack()))
		return
	}
	p.inflight.Add(-1)
	pr.lease.Release()
	pr.c, pr.req, pr.lease, pr.resp, pr.sub = nil, nil, nil, codec.Frame{}, filter.Subscription{}
	pr.h = header.PullMessageRequest{}
	pr.groupBrokerID, pr.groupSlowBrokerID = 0, 0
	if strictOwnership {
		// Race-detector builds never reuse a pullRequest: a late touch
		// then finds nil fields (or a data race) instead of another
		// pull's state, and a second free is always caught above.
		return
	}
	p.reqs.Put(pr)
}

// handle is the transport handler (runs on the pull pool). It always
// answers itself (or parks the request), so it returns nil; the request
// stays leased until pr is freed.
func (p *pullProcessor) handle(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	if p.role != nil && p.role.IsSlave() && !p.live.slaveRead.Load() {
		// compat: Java's PullMessageProcessor.rejectRequest (slaveReadEnable
		// is read per request: an update applies at once).
		return rejectSlave(req)
	}
	pr := p.alloc(c, req, l)
	if r := headerFailure(req, pr.h.Decode(req)); r != nil {
		p.reply(pr, r)
		return nil
	}
	p.process(pr, true)
	return nil
}

// repull re-runs a held pull after an arrival or its deadline; it always
// answers. It runs on a hold-table goroutine, where a panic would end the
// process: a broken invariant is logged instead (pr is then leaked to the
// GC, as its state is unknown).
func (p *pullProcessor) repull(pr *pullRequest) {
	c := pr.c
	defer func() {
		if v := recover(); v != nil {
			p.log.Error("pull: held pull panic", "remote", c.RemoteAddr(), "panic", v, "stack", string(debug.Stack()))
		}
	}()
	if c.Closed() {
		p.free(pr)
		return
	}
	p.process(pr, false)
}

func pullErr(req *codec.Frame, code codec.ResponseCode, remark string) *codec.Frame {
	return codec.NewResponse(req, int32(code), remark)
}

// reply writes an error response (encoded before Write returns, so it
// may live in pr) and frees pr.
func (p *pullProcessor) reply(pr *pullRequest, resp *codec.Frame) {
	c := pr.c
	if err := c.Reply(pr.req, resp); err != nil {
		p.log.Debug("pull: write response", "remote", c.RemoteAddr(), "err", err)
	}
	p.free(pr)
}

// process runs one pull: it writes the response, or parks the request
// for long polling. pr is owned by process from here on.
func (p *pullProcessor) process(pr *pullRequest, allowSuspend bool) {
	begun := time.Now() // GROUP_GET_LATENCY's start (Java: processRequest's)
	req, h := pr.req, &pr.h
	if p.live.perm.Load()&body.PermRead == 0 {
		p.reply(pr, pullErr(req, codec.RespNoPermission, remarks.BrokerPullForbidden(p.cfg.BrokerIP1)))
		return
	}
	if allowSuspend {
		if r := p.check(pr); r != nil {
			p.reply(pr, r)
			return
		}
	}

	res := &pr.res
	maxMsgs := int(h.MaxMsgNums)
	if limit := int(p.live.maxTransferCount.Load()); maxMsgs <= 0 || maxMsgs > limit {
		maxMsgs = limit
	}
	maxBytes := int(p.live.maxTransferBytes.Load())
	if h.MaxMsgBytes > 0 && int(h.MaxMsgBytes) < maxBytes {
		maxBytes = int(h.MaxMsgBytes)
	}
	sf := &pr.sf
	pr.sf.Record = nil
	if pr.sub.SQL != nil {
		pr.sf.Record = pr.recordFn
	} else if pr.sub.MatchAllCodes() {
		sf = nil
	}
	slaveRead := p.live.slaveRead.Load()
	var maxPhy int64
	if slaveRead {
		maxPhy = p.store.MaxPhyOffset() // Java reads it before the scan
	}
	p.store.GetMessages(h.Topic, h.QueueID, h.QueueOffset, maxMsgs, maxBytes, sf, res)
	if res.Status != store.Found {
		p.stats.onGetMiss() // Java's getMessageTimesTotalMiss: every read that found nothing
	}

	code, remark := pullCode(res.Status, h.QueueOffset)
	suggest := int64(0) // MixAll.MASTER_ID
	if slaveRead {
		// compat: Java's composeResponseHeader. A consumer reading further
		// back than the in-memory window is sent to the group's
		// whichBrokerWhenConsumeSlowly, otherwise to its brokerId. (Its
		// branch sending a slave's caught-up consumers to the master never
		// runs in 5.3.3: getMinBrokerIdInGroup returns the broker's own id.)
		suggest = pr.groupBrokerID
		if p.behindMemory(pr, maxPhy) {
			suggest = pr.groupSlowBrokerID
		}
	}
	if p.role != nil && p.role.IsSlave() {
		code = p.slaveCode(pr, code)
	}
	if allowSuspend && h.SysFlag&pullFlagCommitOffset != 0 {
		p.offsets.commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	}
	if code == codec.RespPullNotFound && allowSuspend && h.SysFlag&pullFlagSuspend != 0 {
		hold := time.Duration(h.SuspendTimeoutMillis) * time.Millisecond
		if !p.live.longPolling.Load() {
			hold = time.Duration(p.live.shortPollMs.Load()) * time.Millisecond
		}
		hold = min(hold, maxHold)
		if hold > 0 {
			res.Release()
			pr.deadline = time.Now().Add(hold)
			req.Suspended = true // before park: once parked another goroutine may answer it
			switch p.holds.park(pr) {
			case holdParked:
				return
			case holdConnFull:
				req.Suspended = false
				p.reply(pr, pullErr(req, codec.RespSystemBusy, p.connFullRemark))
			default:
				req.Suspended = false
				p.reply(pr, pullErr(req, codec.RespSystemBusy, p.tableFullRemark))
			}
			return
		}
	}

	v := pr.vals[:0]
	v = strconv.AppendInt(v, suggest, 10)
	suggestEnd := len(v)
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
		codec.KV{Key: "suggestWhichBrokerId", Value: vs[:suggestEnd]},
		codec.KV{Key: "nextBeginOffset", Value: vs[suggestEnd:nextEnd]},
		codec.KV{Key: "minOffset", Value: vs[nextEnd:minEnd]},
		codec.KV{Key: "maxOffset", Value: vs[minEnd:]},
	)
	if code != codec.RespSuccess {
		res.Release()
		p.reply(pr, &pr.resp)
		return
	}
	p.offsets.notePull(h.ConsumerGroup, h.Topic, h.QueueID, res.NextBeginOffset)
	p.stats.onGet(h.ConsumerGroup, h.Topic, len(res.Records), res.TotalBytes)
	p.stats.onGetLatency(h.ConsumerGroup, h.Topic, h.QueueID, elapsedMs(begun))
	// The response's header is encoded before WriteWithBody returns; the
	// records are released in pr.written, which frees pr and may run
	// before WriteWithBody returns (on a failed write, always): from here
	// on only c, copied before the hand-off, may be touched.
	c := pr.c
	if err := c.ReplyWithBody(pr.req, &pr.resp, res.Records, pr.written); err != nil {
		p.log.Debug("pull: write response", "remote", c.RemoteAddr(), "err", err)
	}
}

// check runs the group, topic, queue and subscription checks of a fresh
// pull and sets its filter.
func (p *pullProcessor) check(pr *pullRequest) *codec.Frame {
	req, h := pr.req, &pr.h
	sg, ok := p.groups.find(h.ConsumerGroup)
	if !ok {
		return pullErr(req, codec.RespSubscriptionGroupNotExist, remarks.SubscriptionGroupNotExistPull(h.ConsumerGroup))
	}
	if !sg.ConsumeEnable {
		return pullErr(req, codec.RespNoPermission, remarks.SubscriptionGroupNoPermission(h.ConsumerGroup))
	}
	pr.groupBrokerID, pr.groupSlowBrokerID = sg.BrokerID, sg.WhichBrokerWhenConsumeSlowly
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		return pullErr(req, codec.RespTopicNotExist, remarks.PullTopicNotExist(h.Topic))
	}
	if tc.Perm&body.PermRead == 0 {
		return pullErr(req, codec.RespNoPermission, remarks.TopicPullForbidden(h.Topic))
	}
	if h.QueueID < 0 || h.QueueID >= tc.ReadQueueNums {
		return pullErr(req, codec.RespInvalidParameter, remarks.PullQueueIDIllegal(h.QueueID, h.Topic, tc.ReadQueueNums, pr.c.RemoteAddr()))
	}
	return p.subscribe(pr)
}

// subscribe sets pr.sub from the request or from the group's heartbeat,
// with Java PullMessageProcessor's checks in its order: the expression
// must parse before the broker asks whether it filters by SQL92 at all.
func (p *pullProcessor) subscribe(pr *pullRequest) *codec.Frame {
	req, h := pr.req, &pr.h
	typ := h.ExpressionType
	if h.SysFlag&pullFlagSubscription != 0 {
		sub, err := p.filters.Subscription(typ, h.Subscription)
		if err != nil && !errors.Is(err, filter.ErrUnsupportedType) {
			// compat: Java only reaches this for TAG split errors and empty
			// SQL92 text; for SQL92 that fails to compile it asserts
			// (disabled in production) and then filters with nothing. We
			// refuse it with the remark Java uses for the parse failure.
			return pullErr(req, codec.RespSubscriptionParseFailed, remarks.ParseSubscriptionFailed)
		}
		if err != nil || (!filter.IsTagType(typ) && !p.live.propertyFilter.Load()) {
			return p.nonTag(req, typ)
		}
		pr.sub = sub
		return nil
	}
	hs, found, known := p.clients.pullSubscription(h.ConsumerGroup, h.Topic)
	if !known {
		return pullErr(req, codec.RespSubscriptionNotExist, remarks.ConsumerGroupInfoNotExist())
	}
	if !found {
		return pullErr(req, codec.RespSubscriptionNotExist, remarks.ConsumerSubscriptionNotExist())
	}
	if hs.version < h.SubVersion {
		return pullErr(req, codec.RespSubscriptionNotLatest, remarks.ConsumerSubscriptionNotLatest)
	}
	// The Go client pulls SQL92 subscriptions saying TAG: the heartbeat's
	// expression type decides.
	if !filter.IsTagType(hs.typ) {
		if hs.err != nil {
			return pullErr(req, codec.RespFilterDataNotExist, remarks.FilterDataNotExist)
		}
		if !p.live.propertyFilter.Load() {
			return p.nonTag(req, hs.typ)
		}
	}
	pr.sub = hs.filter
	return nil
}

// slaveCode adjusts a slave's answer as Java's does with
// offsetCheckInSlave=false: the store does not correct an offset outside
// the queue (NextBeginOffset stays the requested one), and
// PULL_OFFSET_MOVED becomes PULL_RETRY_IMMEDIATELY (the consumer keeps its
// offset and pulls again; the group's brokerId is suggested), so a slave
// behind its master never moves a consumer's offset.
func (p *pullProcessor) slaveCode(pr *pullRequest, code codec.ResponseCode) codec.ResponseCode {
	switch pr.res.Status {
	case store.NoMessageInQueue, store.NoMatchedLogicQueue, store.OffsetTooSmall, store.OffsetOverflowBadly:
		pr.res.NextBeginOffset = pr.h.QueueOffset
	}
	if code != codec.RespPullOffsetMoved {
		return code
	}
	return codec.RespPullRetryImmediately
}

// behindMemory is Java's GetMessageResult.isSuggestPullingFromSlave: the
// pull read a queue in range, and the last consume-queue unit it examined
// (NextBeginOffset-1) points further than the in-memory window behind
// maxPhy, the commit-log end before the read. Usually that unit is the
// last record returned; otherwise (filtered or missing records) it is
// looked up, which only pulls with slaveReadEnable do.
func (p *pullProcessor) behindMemory(pr *pullRequest, maxPhy int64) bool {
	res := &pr.res
	switch res.Status {
	case store.Found, store.NoMatchedMessage, store.MessageWasRemoving, store.OffsetFoundNull:
	default:
		return false // Java sets the flag only when the offset is in the queue
	}
	last := int64(0) // Java's maxPhyOffsetPulling when no unit was examined
	lastQO := res.NextBeginOffset - 1
	if n := len(res.Records); n > 0 && res.QueueOffsets[n-1] == lastQO && len(res.Records[n-1]) >= message.PosPhysicalOffset+8 {
		last = int64(binary.BigEndian.Uint64(res.Records[n-1][message.PosPhysicalOffset:]))
	} else if u, _ := p.store.ConsumeQueueUnits(pr.h.Topic, pr.h.QueueID, lastQO, 1, pr.unit[:0]); len(u) == 1 {
		last = u[0].PhyOffset
	}
	return maxPhy-last > p.live.inMemoryWindow()
}

// nonTag answers a subscription type the broker does not evaluate.
func (p *pullProcessor) nonTag(req *codec.Frame, typ string) *codec.Frame {
	// compat: Java's remark when property filtering is off.
	return pullErr(req, codec.RespSystemError, remarks.FilterTypeNotSupported(typ))
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
	return codec.RespSystemError, remarks.StoreGetMessageNull
}
