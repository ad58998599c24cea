package broker

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/rocketgo/rocketgo/broker/metrics"
	"github.com/rocketgo/rocketgo/broker/recall"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// sendHeader is SendMessageRequestHeader, decoded from whichever spelling
// the request code uses.
type sendHeader struct {
	header.SendMessageRequest
}

// decode reads req's header as Java does: the one-letter V2 keys for
// SEND_MESSAGE_V2, SEND_BATCH_MESSAGE and SEND_REPLY_MESSAGE_V2, the long
// keys otherwise. It returns nil to go on, or the answer to a header that
// does not decode (a malformed number: see headerFailure). An absent or
// empty queueId reads as -1 (the broker picks a queue).
func (h *sendHeader) decode(req *codec.Frame) *codec.Frame {
	var err error
	if isV2Send(req.Code) {
		var v2 header.SendMessageRequestV2
		err = v2.Decode(req)
		v2.ToV1(&h.SendMessageRequest)
	} else {
		err = h.SendMessageRequest.Decode(req)
	}
	if r := headerFailure(req, err); r != nil {
		return r
	}
	if !h.HasQueueID() {
		h.QueueID = -1
	}
	return nil
}

// maxReconsume is the header's maxReconsumeTimes, if the request has one.
func (h *sendHeader) maxReconsume() (int32, bool) {
	return h.MaxReconsumeTimes, h.HasMaxReconsumeTimes()
}

func isV2Send(code int32) bool {
	switch codec.RequestCode(code) {
	case codec.ReqSendMessageV2, codec.ReqSendBatchMessage, codec.ReqSendReplyMessageV2:
		return true
	}
	return false
}

// sendProcessor stores messages: SEND_MESSAGE, SEND_MESSAGE_V2,
// SEND_BATCH_MESSAGE (and the reply variants).
type sendProcessor struct {
	cfg       *Config
	live      *liveConfig
	store     MessageStore
	topics    *topicTable
	groups    *groupTable
	locks     *lockTable
	delays    *delayTable
	role      *roleState // a slave refuses sends (nil: always a master)
	stats     *brokerStats
	stages    *metrics.Stages // per-stage latencies; nil with metrics off
	txn       *txnMetrics     // half messages and DLQ sends; nil with metrics off
	log       *slog.Logger
	storeHost *hostBox

	uniqMu sync.Mutex
	uniq   *message.UniqIDGen // guarded by uniqMu

	ctxs sync.Pool // *sendCtx
	// inflight counts sendCtxs between getCtx and putCtx (tests check
	// that every send is answered and recycled exactly once).
	inflight atomic.Int64
}

func newSendProcessor(cfg *Config, live *liveConfig, st MessageStore, topics *topicTable, groups *groupTable, locks *lockTable, stats *brokerStats, storeHost *hostBox, log *slog.Logger) *sendProcessor {
	return &sendProcessor{
		cfg: cfg, live: live, store: st, topics: topics, groups: groups, locks: locks, stats: stats, log: log,
		storeHost: storeHost,
		uniq:      message.NewUniqIDGen(parseIP(cfg.BrokerIP1), pid(), int32(time.Now().UnixNano()), nil),
	}
}

// handle runs on the send pool (its queue is sendThreadPoolQueueCapacity
// long, its wait limit waitTimeMillsInSendQueue: Java's fast failure). A
// send whose connection has closed is still stored, as in Java: the Go
// client's SendOneWay sets no oneway flag and may close right after. The
// request is leased: a send the store answers later keeps a reference and
// counts as the connection's task until its reply is written (sendCtx,
// the batch callback), so a connection's unanswered sends stay capped by
// maxInflightRequestsPerConnection.
func (p *sendProcessor) handle(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	if p.role != nil && p.role.IsSlave() {
		// compat: Java's SendMessageProcessor.rejectRequest on a slave.
		return rejectSlave(req)
	}
	l.Hold()
	c.BeginTask()
	resp := p.process(c, req, l)
	if resp != nil { // answered now: the store took nothing
		l.Release()
		c.EndTask()
	}
	return resp
}

func (p *sendProcessor) reply(c *transport.Conn, req, resp *codec.Frame) {
	if err := c.Reply(req, resp); err != nil {
		p.log.Debug("send: write response", "remote", c.RemoteAddr(), "err", err)
	}
}

func errResp(req *codec.Frame, code codec.ResponseCode, remark string) *codec.Frame {
	return codec.NewResponse(req, int32(code), remark)
}

// process validates and stores one request. It returns an immediate
// response, or nil when the store's completion will answer; then that
// completion releases l after replying.
func (p *sendProcessor) process(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	var start int64
	if p.stages != nil {
		start = time.Now().UnixNano()
		if req.Arrived != 0 {
			p.stages.Observe(metrics.StageQueueWait, req.Arrived, start)
		}
	}
	var h sendHeader
	if r := h.decode(req); r != nil {
		return r
	}
	tc, resp := p.check(c, req, &h)
	if resp != nil {
		return resp
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(max(tc.WriteQueueNums, 1))
	}
	bornHost := parseAddrPort(c.RemoteAddr())
	if h.Batch {
		return p.sendBatch(c, req, l, &h, &tc, queueID, bornHost)
	}

	if len(req.Body) > p.cfg.MaxMessageSize {
		return errResp(req, codec.RespMessageIllegal, remarks.MessageIllegal(p.cfg.MaxMessageSize))
	}
	topic := h.Topic
	props := h.Properties
	if isRetryTopic(topic) {
		var dlq bool
		var r *codec.Frame
		topic, queueID, dlq, r = p.retryTarget(req, &h, queueID)
		if r != nil {
			return r
		}
		if dlq {
			props = message.SetProperty(props, message.PropertyDelayLevel, "-1")
			// compat: Java's SendMessageProcessor labels this DLQ send with
			// the producer group and the retry topic sent to.
			p.txn.onDLQ(h.ProducerGroup, h.Topic)
		}
	}
	if _, ok := message.Property(props, message.PropertyPopCK); ok {
		props = message.DeleteProperty(props, message.PropertyPopCK)
	}
	sc := p.getCtx()
	sc.c, sc.req, sc.queueID, sc.start = c, req, queueID, start
	// One buffer holds the final properties: the producer's, then what the
	// broker adds (region, trace switch, a generated UNIQ_KEY, cluster).
	uniq, ok := message.Property(props, message.PropertyUniqKey)
	b := p.appendBrokerProps(sc.props[:0], props)
	uniqAt := -1
	if !ok || uniq == "" {
		b = append(b, message.PropertyUniqKey...)
		b = append(b, message.NameValueSeparator)
		uniqAt = len(b)
		p.uniqMu.Lock()
		b = p.uniq.Append(b, time.Now())
		p.uniqMu.Unlock()
		b = append(b, message.PropertySeparator)
	}
	b = message.AppendProperty(b, message.PropertyCluster, p.cfg.BrokerClusterName)
	sc.props = b
	props = bytesString(b)
	if uniqAt >= 0 {
		uniq = props[uniqAt : uniqAt+32]
	}
	sc.uniq = uniq
	if len(props) > message.MaxPropertiesLen {
		p.putCtx(sc)
		return errResp(req, codec.RespMessageIllegal, remarks.MessageIllegal(p.cfg.MaxMessageSize))
	}
	sysFlag := h.SysFlag
	if tc.TopicFilterType == body.MultiTag {
		sysFlag |= message.MultiTagsFlag
	}
	tags, _ := message.Property(props, message.PropertyTags)
	m := &sc.msg
	*m = message.Message{
		Topic:          topic,
		QueueID:        queueID,
		Flag:           h.Flag,
		Body:           req.Body,
		Properties:     props,
		BornTimestamp:  h.BornTimestamp,
		BornHost:       bornHost,
		StoreHost:      p.storeHost.get(),
		SysFlag:        sysFlag,
		ReconsumeTimes: h.ReconsumeTimes,
		TagsCode:       message.TagsHash(tags),
	}
	if isPrepared(h.SysFlag, props) {
		toHalf(m)
	} else {
		if code, remark := scheduleTimer(p.cfg, m, time.Now().UnixMilli()); code != codec.RespSuccess {
			p.putCtx(sc)
			return errResp(req, code, remark)
		}
		if m.Topic != timerTopic {
			p.delays.schedule(m)
		}
	}
	sc.topic = h.Topic
	sc.lease = l
	if sc.start != 0 {
		sc.decoded = time.Now().UnixNano()
	}
	p.store.Put(m, sc.done)
	return nil
}

// sendCtx is the pooled state of one single-message send, from the store
// call to the reply, so a send allocates nothing of its own.
//
// Ownership: process owns sc from getCtx until it either puts it back
// (putCtx, on an early refusal) or hands it to the store with Put; sc.done
// then owns it, may run before Put returns, and recycles it after the
// reply is encoded (Conn.Write copies the frame before it returns). Nobody
// touches sc after the hand-off; putCtx checks that it runs once.
type sendCtx struct {
	p       *sendProcessor
	c       *transport.Conn
	req     *codec.Frame
	lease   *transport.Lease // req's; released once the reply is written
	msg     message.Message
	queueID int32
	start   int64 // Unix nanoseconds the worker started it; 0 without stage metrics
	decoded int64 // Unix nanoseconds it was handed to the store (with start)
	topic   string
	uniq    string // aliases props or the request
	props   []byte
	done    func(store.PutResult) // sc.onPut, bound once
	owned   atomic.Bool           // between getCtx and putCtx
	resp    codec.Frame
	ext     [7]codec.KV
	vals    []byte // backing store of the response's ext values
	raw     []byte // scratch: a recall handle before base64
}

func (p *sendProcessor) getCtx() *sendCtx {
	sc, _ := p.ctxs.Get().(*sendCtx)
	if sc == nil {
		sc = &sendCtx{p: p, props: make([]byte, 0, 512), vals: make([]byte, 0, 96), raw: make([]byte, 0, 160)}
		sc.done = sc.onPut
	}
	sc.owned.Store(true)
	p.inflight.Add(1)
	return sc
}

func (p *sendProcessor) putCtx(sc *sendCtx) {
	if !sc.owned.CompareAndSwap(true, false) {
		// A second put would release someone else's lease reference.
		if strictOwnership {
			panic("broker: sendCtx recycled twice")
		}
		p.log.Error("broker: sendCtx recycled twice (ignored)", "stack", string(debug.Stack()))
		return
	}
	p.inflight.Add(-1)
	if sc.lease != nil { // handed to the store: the task ends here
		sc.lease.Release()
		sc.c.EndTask()
	}
	sc.c, sc.req, sc.lease, sc.msg, sc.topic, sc.uniq, sc.start, sc.decoded = nil, nil, nil, message.Message{}, "", "", 0, 0
	if strictOwnership {
		return // never reused in race-detector builds: see strictOwnership
	}
	p.ctxs.Put(sc)
}

// onPut answers the send once the store is done with it.
func (sc *sendCtx) onPut(r store.PutResult) {
	p := sc.p
	p.stats.onTypedPut(sc.topic, p.stats.putType(sc.msg.Properties), r)
	if p.txn != nil && sc.msg.Topic == TopicTransHalf && putStored(r.Status) {
		p.txn.onHalf(sc.topic)
	}
	var durable int64
	if sc.start != 0 && r.Appended != 0 {
		durable = time.Now().UnixNano()
		p.stages.Observe(metrics.StageDecode, sc.start, sc.decoded)
		p.stages.Observe(metrics.StageAppend, sc.decoded, r.Appended)
		p.stages.Observe(metrics.StageDurableWait, r.Appended, durable)
	}
	if !sc.req.IsOneway() {
		p.reply(sc.c, sc.req, p.putResponseInto(sc, r))
	}
	if durable != 0 {
		p.stages.Observe(metrics.StageReply, durable, time.Now().UnixNano())
	}
	p.putCtx(sc)
}

// putResponseInto builds the response of a single send in sc's own
// frame; it is valid until sc goes back to the pool.
func (p *sendProcessor) putResponseInto(sc *sendCtx, r store.PutResult) *codec.Frame {
	if !putStored(r.Status) {
		return p.putResponse(sc.req, r, sc.queueID, sc.uniq, nil)
	}
	code := codec.RespSuccess
	switch r.Status {
	case store.FlushDiskTimeout:
		code = codec.RespFlushDiskTimeout
	case store.FlushSlaveTimeout:
		code = codec.RespFlushSlaveTimeout
	}
	v := sc.vals[:0]
	v = message.AppendOffsetMsgID(v, p.storeHost.get(), r.WroteOffset)
	idEnd := len(v)
	v = strconv.AppendInt(v, int64(sc.queueID), 10)
	qEnd := len(v)
	v = strconv.AppendInt(v, r.QueueOffset, 10)
	offEnd := len(v)
	v = p.appendRecallHandle(v, sc)
	sc.vals = v
	s := bytesString(v)
	sc.resp = codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion, Ext: sc.ext[:0]}
	sc.resp.Ext = append(sc.resp.Ext,
		codec.KV{Key: "msgId", Value: s[:idEnd]},
		codec.KV{Key: "queueId", Value: s[idEnd:qEnd]},
		codec.KV{Key: "queueOffset", Value: s[qEnd:offEnd]},
		codec.KV{Key: "MSG_REGION", Value: p.cfg.RegionID},
		codec.KV{Key: "TRACE_ON", Value: strconv.FormatBool(p.cfg.TraceOn)},
	)
	if sc.uniq != "" {
		sc.resp.Ext = append(sc.resp.Ext, codec.KV{Key: "transactionId", Value: sc.uniq})
	}
	if len(s) > offEnd {
		sc.resp.Ext = append(sc.resp.Ext, codec.KV{Key: "recallHandle", Value: s[offEnd:]})
	}
	return &sc.resp
}

// appendRecallHandle appends the recall handle of a timer message to v
// (Java's attachRecallHandle), nothing for any other message: a record
// with TIMER_OUT_MS and a REAL_TOPIC outside %RETRY%, the handle's time
// one past TIMER_OUT_MS (the slot's floor). SEND_BATCH_MESSAGE and
// CONSUMER_SEND_MSG_BACK never come here, as Java leaves them out.
func (p *sendProcessor) appendRecallHandle(v []byte, sc *sendCtx) []byte {
	props := sc.msg.Properties
	out, ok := message.Property(props, message.PropertyTimerOutMs)
	if !ok {
		return v
	}
	realTopic, ok := message.Property(props, message.PropertyRealTopic)
	if !ok || isRetryTopic(realTopic) {
		return v
	}
	ms, err := strconv.ParseInt(out, 10, 64)
	if err != nil {
		return v
	}
	sc.raw = recall.AppendRaw(sc.raw[:0], realTopic, p.cfg.BrokerName, ms+1, sc.uniq)
	return recall.AppendEncoded(v, sc.raw)
}

// bytesString views b as a string; b must not change while it is used.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}

// appendBrokerProps appends props, the producer's encoded properties, to
// dst and then the region and trace switch the broker stamps on every
// message. Like the Java broker (which re-encodes a property map): each
// pair ends with a separator even when the producer left the last one off,
// and a producer's own MSG_REGION, TRACE_ON or CLUSTER is replaced (the
// caller appends CLUSTER). Allocates only when such a key must be dropped.
func (p *sendProcessor) appendBrokerProps(dst []byte, props string) []byte {
	props = message.DeleteProperty(props, message.PropertyMsgRegion)
	props = message.DeleteProperty(props, message.PropertyTraceSwitch)
	props = message.DeleteProperty(props, message.PropertyCluster)
	dst = append(dst, props...)
	if len(props) > 0 && props[len(props)-1] != message.PropertySeparator {
		dst = append(dst, message.PropertySeparator)
	}
	dst = message.AppendProperty(dst, message.PropertyMsgRegion, p.cfg.RegionID)
	return message.AppendProperty(dst, message.PropertyTraceSwitch, strconv.FormatBool(p.cfg.TraceOn))
}

// check runs Java's msgCheck: broker permission, topic name, forbidden
// system topics, topic existence (with auto-creation), queue id range.
func (p *sendProcessor) check(c *transport.Conn, req *codec.Frame, h *sendHeader) (body.TopicConfig, *codec.Frame) {
	if p.live.perm.Load()&body.PermWrite == 0 {
		return body.TopicConfig{}, errResp(req, codec.RespNoPermission, remarks.BrokerSendForbidden(p.cfg.BrokerIP1))
	}
	if remark := validateTopic(h.Topic); remark != "" {
		return body.TopicConfig{}, errResp(req, codec.RespInvalidParameter, remark)
	}
	if notAllowedSend[h.Topic] {
		return body.TopicConfig{}, errResp(req, codec.RespNoPermission, remarks.SendToTopicForbidden(h.Topic))
	}
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		var sysFlag int32
		if h.UnitMode {
			if isRetryTopic(h.Topic) {
				sysFlag = 2
			} else {
				sysFlag = 1
			}
		}
		p.log.Warn("send: topic not exist", "topic", h.Topic, "producer", c.RemoteAddr())
		tc, ok = p.topics.createInSend(h.Topic, h.DefaultTopic, h.DefaultTopicQueueNums, sysFlag)
		if !ok && isRetryTopic(h.Topic) {
			tc, ok = p.topics.createIfAbsent(h.Topic, 1, body.PermWrite|body.PermRead, sysFlag), true
		}
		if !ok {
			return tc, errResp(req, codec.RespTopicNotExist, remarks.TopicNotExistApplyFirst(h.Topic))
		}
	}
	if h.QueueID >= max(tc.WriteQueueNums, tc.ReadQueueNums) {
		return tc, errResp(req, codec.RespInvalidParameter, remarks.SendQueueIDIllegal(h.QueueID, topicConfigString(&tc), c.RemoteAddr()))
	}
	return tc, nil
}

// retryTarget applies handleRetryAndDLQ to a send into %RETRY%<group>: the
// group must exist, and past maxReconsumeTimes the message goes to the DLQ.
func (p *sendProcessor) retryTarget(req *codec.Frame, h *sendHeader, queueID int32) (topic string, q int32, dlq bool, resp *codec.Frame) {
	group := strings.TrimPrefix(h.Topic, RetryGroupPrefix)
	sg, ok := p.groups.find(group)
	if !ok {
		return "", 0, false, errResp(req, codec.RespSubscriptionGroupNotExist, remarks.SubscriptionGroupNotExistSend(group))
	}
	maxTimes := sg.RetryMaxTimes
	if n, ok := h.maxReconsume(); ok && req.Version >= versionV3_4_9 {
		maxTimes = n
	}
	if h.ReconsumeTimes > maxTimes || (p.locks != nil && p.locks.groupHasLock(group)) {
		dlqTopic := DLQGroupPrefix + group
		p.topics.createIfAbsent(dlqTopic, 1, body.PermWrite|body.PermRead, 0)
		return dlqTopic, 0, true, nil
	}
	return h.Topic, queueID, false, nil
}

func (p *sendProcessor) sendBatch(c *transport.Conn, req *codec.Frame, l *transport.Lease, h *sendHeader, tc *body.TopicConfig, queueID int32, bornHost netip.AddrPort) *codec.Frame {
	if len(h.Topic) > topicMaxLen {
		// compat: Java's remark for a batch to a too long topic.
		return errResp(req, codec.RespMessageIllegal, remarks.MessageTopicTooLong(len(h.Topic)))
	}
	if isRetryTopic(h.Topic) {
		// compat: Java 5.x refuses batches to retry topics with this remark.
		return errResp(req, codec.RespMessageIllegal, remarks.BatchNotSupportRetry(h.Topic))
	}
	sysFlag := h.SysFlag
	if tc.TopicFilterType == body.MultiTag {
		sysFlag |= message.MultiTagsFlag
	}
	// Like Java's batch encoder: every message stores its own properties
	// followed by the batch's (the header's, plus region, trace switch and
	// cluster). One buffer holds them all; ends[i] closes message i's.
	suffix := p.appendBrokerProps(nil, h.Properties)
	suffix = message.AppendProperty(suffix, message.PropertyCluster, p.cfg.BrokerClusterName)
	var msgs []message.Message
	var all []byte
	var ends []int
	it := message.IterBatch(req.Body)
	var e message.BatchEntry
	for it.Next(&e) {
		if len(e.Body) > p.cfg.MaxMessageSize || len(e.Properties) > message.MaxPropertiesLen {
			return errResp(req, codec.RespMessageIllegal, remarks.MessageIllegal(p.cfg.MaxMessageSize))
		}
		start := len(all)
		all = append(all, e.Properties...)
		if len(e.Properties) > 0 && e.Properties[len(e.Properties)-1] != message.PropertySeparator {
			all = append(all, message.PropertySeparator)
		}
		all = append(all, suffix...)
		ends = append(ends, len(all))
		if len(all)-start > message.MaxPropertiesLen {
			return errResp(req, codec.RespMessageIllegal, remarks.MessageIllegal(p.cfg.MaxMessageSize))
		}
		tags, _ := message.Property(e.Properties, message.PropertyTags)
		msgs = append(msgs, message.Message{
			Topic:          h.Topic,
			QueueID:        queueID,
			Flag:           e.Flag,
			Body:           e.Body,
			BornTimestamp:  h.BornTimestamp,
			BornHost:       bornHost,
			StoreHost:      p.storeHost.get(),
			SysFlag:        sysFlag,
			ReconsumeTimes: h.ReconsumeTimes,
			TagsCode:       message.TagsHash(tags),
		})
	}
	if err := it.Err(); err != nil || len(msgs) == 0 {
		p.log.Warn("send: bad batch body", "topic", h.Topic, "remote", c.RemoteAddr(), "err", err)
		return errResp(req, codec.RespMessageIllegal, remarks.MessageIllegal(p.cfg.MaxMessageSize))
	}
	allProps := string(all)
	start := 0
	for i := range msgs {
		msgs[i].Properties = allProps[start:ends[i]]
		start = ends[i]
	}
	uniq, _ := message.Property(h.Properties, message.PropertyUniqKey)
	topic := h.Topic
	mt := p.stats.putType(h.Properties)
	p.store.PutBatch(msgs, func(r store.PutResult) {
		p.stats.onTypedPut(topic, mt, r)
		p.reply(c, req, p.putResponse(req, r, queueID, uniq, msgs))
		l.Release()
		c.EndTask()
	})
	return nil
}

// diskRatios is implemented by stores that can say how full their disks are.
type diskRatios interface {
	DiskUsedRatios() (commitLog, consumeQueue, index float64)
}

// diskUtil is the bracketed part of Java's SERVICE_NOT_AVAILABLE remark:
// the used fractions of the disks holding the commit log, consume queues
// and index (Java's SendMessageProcessor.diskUtil). Error path only.
func (p *sendProcessor) diskUtil() string {
	cl, cq, idx := -1.0, -1.0, -1.0
	if d, ok := p.store.(diskRatios); ok {
		cl, cq, idx = d.DiskUsedRatios()
	}
	return fmt.Sprintf("CL: %5.2f CQ: %5.2f INDEX: %5.2f", cl, cq, idx)
}

// putResponse maps a store result to the send response (Java
// handlePutMessageResult). batch, when not nil, lists the stored messages
// so each gets its own offset id.
func (p *sendProcessor) putResponse(req *codec.Frame, r store.PutResult, queueID int32, uniq string, batch []message.Message) *codec.Frame {
	var code codec.ResponseCode
	remark := ""
	switch r.Status {
	case store.PutOK:
		code = codec.RespSuccess
	case store.FlushDiskTimeout:
		code = codec.RespFlushDiskTimeout
	case store.FlushSlaveTimeout:
		code = codec.RespFlushSlaveTimeout
	case store.MessageIllegal, store.PropertiesSizeExceeded:
		return errResp(req, codec.RespMessageIllegal, remarks.MessageIllegal(p.cfg.MaxMessageSize))
	case store.ServiceNotAvailable:
		return errResp(req, codec.RespServiceNotAvailable, remarks.ServiceNotAvailable(p.diskUtil()))
	case store.OSPageCacheBusy:
		return errResp(req, codec.RespSystemBusy, remarks.PageCacheBusy)
	default:
		return errResp(req, codec.RespSystemError, remarks.UnknownError)
	}
	resp := codec.NewResponse(req, int32(code), remark)
	var ids []byte
	if batch == nil {
		ids = message.AppendOffsetMsgID(make([]byte, 0, 32), p.storeHost.get(), r.WroteOffset)
	} else {
		off := r.WroteOffset
		ids = make([]byte, 0, 33*len(batch))
		for i := range batch {
			if i > 0 {
				ids = append(ids, ',')
			}
			ids = message.AppendOffsetMsgID(ids, p.storeHost.get(), off)
			off += int64(batch[i].RecordSize())
		}
	}
	resp.Ext = make([]codec.KV, 0, 6)
	resp.Ext = append(resp.Ext,
		codec.KV{Key: "msgId", Value: string(ids)},
		codec.KV{Key: "queueId", Value: strconv.FormatInt(int64(queueID), 10)},
		codec.KV{Key: "queueOffset", Value: strconv.FormatInt(r.QueueOffset, 10)},
		codec.KV{Key: "MSG_REGION", Value: p.cfg.RegionID},
		codec.KV{Key: "TRACE_ON", Value: strconv.FormatBool(p.cfg.TraceOn)},
	)
	if uniq != "" {
		resp.Ext = append(resp.Ext, codec.KV{Key: "transactionId", Value: uniq})
	}
	return resp
}

func (p *sendProcessor) newUniqKey() string {
	p.uniqMu.Lock()
	b := p.uniq.Append(make([]byte, 0, 32), time.Now())
	p.uniqMu.Unlock()
	return string(b)
}

// appendProp adds name=value to an encoded properties string.
func appendProp(props, name, value string) string {
	b := make([]byte, 0, len(props)+len(name)+len(value)+2)
	b = append(b, props...)
	b = message.AppendProperty(b, name, value)
	return string(b)
}

// versionV3_4_9 is the MQVersion ordinal from which the header's
// maxReconsumeTimes is honoured.
const versionV3_4_9 = 121

// topicConfigString mimics TopicConfig.toString for remarks.
func topicConfigString(tc *body.TopicConfig) string {
	return fmt.Sprintf("TopicConfig [topicName=%s, readQueueNums=%d, writeQueueNums=%d, perm=%s, topicFilterType=%s, topicSysFlag=%d, order=%t, attributes=%v]",
		tc.TopicName, tc.ReadQueueNums, tc.WriteQueueNums, permString(tc.Perm), tc.TopicFilterType, tc.TopicSysFlag, tc.Order, tc.Attributes)
}

// permString is PermName.perm2String ("RW-", "R--" …).
func permString(perm int32) string {
	b := []byte("---")
	if perm&body.PermRead != 0 {
		b[0] = 'R'
	}
	if perm&body.PermWrite != 0 {
		b[1] = 'W'
	}
	if perm&body.PermInherit != 0 {
		b[2] = 'X'
	}
	return string(b)
}

// parseAddrPort parses "ip:port", or returns the zero value.
func parseAddrPort(s string) netip.AddrPort {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPortFrom(netip.IPv4Unspecified(), 0)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// parseIP parses an IP, or returns the unspecified IPv4 address.
func parseIP(s string) netip.Addr {
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.IPv4Unspecified()
	}
	return a.Unmap()
}
