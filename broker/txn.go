package broker

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// Transaction internals (Java TransactionalMessageUtil).
const (
	txnCheckGroup = "CID_RMQ_SYS_TRANS"
	txnOpTag      = "d"
)

// txnService keeps half (prepared) messages in RMQ_SYS_TRANS_HALF_TOPIC,
// commits or rolls them back on END_TRANSACTION, and asks producers about
// the ones left undecided (CHECK_TRANSACTION_STATE).
//
// Everything it knows survives a restart because it lives in the store, as
// Java keeps it: a decision is an op message in RMQ_SYS_TRANS_OP_HALF_TOPIC
// whose body is the decided half's queue offset (Java 5 may batch several,
// comma-separated); an undecided half that is checked is appended again to
// the half queue with TRANSACTION_CHECK_TIMES raised, so the check
// checkpoint (CID_RMQ_SYS_TRANS on the half queue) always moves forward and
// the check count is persisted; the op queue has its own checkpoint. Memory
// holds only decisions about halves above the checkpoint.
type txnService struct {
	cfg       *Config
	live      *liveConfig
	store     MessageStore
	topics    *topicTable
	clients   *clientManager
	offsets   *offsetTable
	storeHost *hostBox
	log       *slog.Logger
	interval  time.Duration

	// Only the check goroutine touches these.
	decided map[int64]int64 // half queue offset at or above the checkpoint → op queue offset deciding it
	opRefs  map[int64]int   // op queue offset → entries of decided naming it
	opDone  map[int64]bool  // op queue offsets at or above opCP with nothing left to decide
	opNext  int64           // next op queue offset to read

	role    *roleState  // a slave answers SLAVE_NOT_AVAILABLE (nil: a master)
	metrics *txnMetrics // nil with metrics off

	quit chan struct{}
	wg   sync.WaitGroup
}

// txnMaxCheckRun bounds one check pass (Java MAX_PROCESS_TIME_LIMIT).
const txnMaxCheckRun = 60 * time.Second

func newTxnService(cfg *Config, live *liveConfig, st MessageStore, topics *topicTable, clients *clientManager, offsets *offsetTable, storeHost *hostBox, log *slog.Logger) *txnService {
	iv := time.Duration(cfg.TransactionCheckInterval) * time.Millisecond
	if iv <= 0 {
		iv = 30 * time.Second
	}
	return &txnService{cfg: cfg, live: live, store: st, topics: topics, clients: clients, offsets: offsets, storeHost: storeHost, log: log, interval: iv,
		decided: make(map[int64]int64), opRefs: make(map[int64]int), opDone: make(map[int64]bool), opNext: -1,
		quit: make(chan struct{})}
}

// toHalf turns a prepared message into a half message
// (TransactionalMessageBridge.parseHalfMessageInner).
func toHalf(m *message.Message) {
	props := m.Properties
	if uniq, ok := message.Property(props, message.PropertyUniqKey); ok && uniq != "" {
		props = message.SetProperty(props, message.PropertyTransactionID, uniq)
	}
	props = message.SetProperty(props, message.PropertyRealTopic, m.Topic)
	props = message.SetProperty(props, message.PropertyRealQueueID, strconv.Itoa(int(m.QueueID)))
	m.Properties = props
	m.SysFlag = message.ResetTransactionValue(m.SysFlag, message.TransactionNotType)
	m.Topic = TopicTransHalf
	m.QueueID = 0
}

// isPrepared reports whether a send is the first phase of a transaction.
func isPrepared(sysFlag int32, props string) bool {
	v, _ := message.Property(props, message.PropertyTransactionPrepared)
	return strings.EqualFold(v, "true") && message.TransactionValue(sysFlag) == message.TransactionPreparedType
}

func (s *txnService) start() {
	s.quit = make(chan struct{}) // a new one per start (role changes)
	s.wg.Add(1)
	go s.checkLoop()
}

func (s *txnService) stop() {
	close(s.quit)
	s.wg.Wait()
}

// endTransaction serves END_TRANSACTION (EndTransactionProcessor).
func (s *txnService) endTransaction(c *transport.Conn, req *codec.Frame) *codec.Frame {
	resp := s.end(c, req)
	if resp != nil && resp.Code != int32(codec.RespSuccess) {
		s.log.Warn("end transaction refused", "remote", c.RemoteAddr(), "remark", resp.Remark, "header", req.Ext)
	}
	return resp
}

func (s *txnService) end(c *transport.Conn, req *codec.Frame) *codec.Frame {
	if s.role != nil && s.role.IsSlave() {
		// compat: Java's EndTransactionProcessor answers a slave's
		// END_TRANSACTION SLAVE_NOT_AVAILABLE with no remark.
		return codec.NewResponse(req, int32(codec.RespSlaveNotAvailable), "")
	}
	var h header.EndTransactionRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	typ := h.CommitOrRollback
	if typ != message.TransactionCommitType && typ != message.TransactionRollbackType {
		return nil // unknown state: no answer, as Java
	}
	phy := h.CommitLogOffset
	rec, err := s.store.ReadRecord(phy, 0)
	var e message.Ext
	if err == nil {
		err = message.Decode(rec, &e)
	}
	if err != nil || e.Topic != TopicTransHalf {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.FindPreparedTxnFailed)
	}
	if pg, _ := message.Property(e.Properties, message.PropertyProducerGroup); pg != h.ProducerGroup {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ProducerGroupWrong)
	}
	if e.QueueOffset != h.TranStateTableOffset {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.TxnStateTableOffsetWrong)
	}
	if e.PhysicalOffset != phy {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.CommitLogOffsetWrong)
	}
	if typ == message.TransactionRollbackType {
		s.writeOp(e.QueueOffset)
		if real, ok := message.Property(e.Properties, message.PropertyRealTopic); ok {
			s.metrics.onRollback(real)
		}
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	realTopic, _ := message.Property(e.Properties, message.PropertyRealTopic)
	realQID, _ := message.Property(e.Properties, message.PropertyRealQueueID)
	// compat: Java's endMessageTransaction builds the stored properties
	// string from the half message before it clears REAL_TOPIC/REAL_QID
	// and sets WAIT=false on the map: the committed record carries the
	// half message's properties unchanged.
	props := e.Properties
	tags, _ := message.Property(props, message.PropertyTags)
	m := &message.Message{
		Topic: realTopic, QueueID: atoi32(realQID), Flag: e.Flag,
		Body:          append([]byte(nil), e.Body...),
		Properties:    props,
		BornTimestamp: e.BornTimestamp, BornHost: e.BornHost, StoreHost: e.StoreHost,
		SysFlag:                   message.ResetTransactionValue(e.SysFlag, message.TransactionCommitType),
		ReconsumeTimes:            e.ReconsumeTimes,
		PreparedTransactionOffset: phy,
		TagsCode:                  message.TagsHash(tags),
	}
	halfOffset := e.QueueOffset
	s.store.Put(m, func(r store.PutResult) {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		if putStored(r.Status) {
			s.writeOp(halfOffset)
			s.metrics.onCommit(m.Topic, m.BornTimestamp)
		} else {
			resp = codec.NewResponse(req, int32(codec.RespSystemError), r.Status.String())
		}
		if err := c.Reply(req, resp); err != nil {
			s.log.Debug("end transaction: write response", "err", err)
		}
	})
	return nil
}

// writeOp records that the half message at offset is decided.
func (s *txnService) writeOp(halfOffset int64) {
	m := &message.Message{
		Topic:         TopicTransOpHalf,
		Body:          strconv.AppendInt(nil, halfOffset, 10),
		Properties:    string(message.AppendProperty(nil, message.PropertyTags, txnOpTag)),
		BornTimestamp: time.Now().UnixMilli(), BornHost: s.storeHost.get(), StoreHost: s.storeHost.get(),
		TagsCode: message.TagsHash(txnOpTag),
	}
	s.store.Put(m, func(r store.PutResult) {
		if !putStored(r.Status) {
			s.log.Error("transaction op message not stored", "halfOffset", halfOffset, "status", r.Status, "err", r.Err)
		}
	})
}

func (s *txnService) checkLoop() {
	defer s.wg.Done()
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-s.quit:
			return
		case <-t.C:
			s.checkOnce(time.Now())
		}
	}
}

// checkOnce walks the half queue from the checkpoint (Java
// TransactionalMessageServiceImpl.check): decided halves are skipped,
// halves checked transactionCheckMax times are moved to
// TRANS_CHECK_MAX_TIME_TOPIC, and every half older than the transaction
// timeout is appended again with its check count raised and its producer
// asked about the new copy. The walk stops at the first half too young to
// check, so the checkpoint never passes an undecided message.
func (s *txnService) checkOnce(now time.Time) {
	cp, ok := s.offsets.query(txnCheckGroup, TopicTransHalf, 0)
	if !ok {
		cp = s.store.MinOffset(TopicTransHalf, 0)
	}
	if min := s.store.MinOffset(TopicTransHalf, 0); cp < min {
		cp = min // expired from the store
	}
	s.readOps(cp)
	start := now.UnixMilli()
	var res store.GetResult
	for off := cp; time.Since(now) < txnMaxCheckRun; {
		s.store.GetMessages(TopicTransHalf, 0, off, 64, 1<<20, nil, &res)
		if res.Status != store.Found {
			res.Release()
			break
		}
		stop := false
		for i, rec := range res.Records {
			qo := res.QueueOffsets[i]
			if s.passDecided(qo) {
				off, cp = qo+1, qo+1
				continue
			}
			var e message.Ext
			if message.Decode(rec, &e) != nil {
				off, cp = qo+1, qo+1
				continue
			}
			if !s.checkHalf(&e, start) {
				stop = true
				break
			}
			off, cp = qo+1, qo+1
		}
		res.Release()
		if stop {
			break
		}
	}
	s.offsets.commit(txnCheckGroup, TopicTransHalf, 0, cp)
	s.forgetBelow(cp)
}

// checkHalf handles one undecided half message; false means it (and so
// everything after it) is too young to check yet.
func (s *txnService) checkHalf(e *message.Ext, start int64) bool {
	checks := int64(0)
	if v, ok := message.Property(e.Properties, message.PropertyTransactionCheckTimes); ok {
		checks, _ = strconv.ParseInt(v, 10, 64)
	}
	tooOld := start-e.BornTimestamp > int64(s.cfg.FileReservedTime)*3600*1000
	if checks >= s.live.txnCheckMax.Load() || tooOld {
		s.discard(e, checks)
		return true
	}
	if e.StoreTimestamp >= start {
		return false
	}
	immunity := s.live.txnTimeoutMs.Load()
	if v, ok := message.Property(e.Properties, message.PropertyCheckImmunityTimeInSeconds); ok {
		// compat: an unparsable value means the transaction timeout, as Java.
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec >= 0 {
			immunity = sec * 1000
		}
	}
	age := start - e.BornTimestamp
	if age >= 0 && age <= immunity {
		return false
	}
	props := message.SetProperty(e.Properties, message.PropertyTransactionCheckTimes, strconv.FormatInt(checks+1, 10))
	copyRes, ok := s.putHalfCopy(e, props)
	if !ok {
		return false // try again next round rather than lose it
	}
	e.Properties = props
	e.QueueOffset, e.PhysicalOffset, e.StoreTimestamp = copyRes.QueueOffset, copyRes.WroteOffset, copyRes.StoreTimestamp
	s.sendCheck(e)
	return true
}

// putHalfCopy appends a half message again (Java putBackHalfMsgQueue) and
// waits for the result.
func (s *txnService) putHalfCopy(e *message.Ext, props string) (store.PutResult, bool) {
	tags, _ := message.Property(props, message.PropertyTags)
	m := &message.Message{
		Topic: TopicTransHalf, QueueID: 0, Flag: e.Flag,
		Body:          append([]byte(nil), e.Body...),
		Properties:    props,
		BornTimestamp: e.BornTimestamp, BornHost: e.BornHost, StoreHost: e.StoreHost,
		SysFlag: e.SysFlag, ReconsumeTimes: e.ReconsumeTimes,
		TagsCode: message.TagsHash(tags),
	}
	r := s.putWait(m)
	if !putStored(r.Status) {
		s.log.Error("transaction check: half message not re-stored; will retry", "halfOffset", e.QueueOffset, "status", r.Status, "err", r.Err)
		return r, false
	}
	return r, true
}

// discard moves a half message checked too often (or older than the
// store's retention) to TRANS_CHECK_MAX_TIME_TOPIC, where operators can
// find it (Java DefaultTransactionalMessageCheckListener.resolveDiscardMsg).
func (s *txnService) discard(e *message.Ext, checks int64) {
	s.topics.createIfAbsent(TopicTransCheckMax, 1, body.DefaultPerm, 0)
	tags, _ := message.Property(e.Properties, message.PropertyTags)
	m := &message.Message{
		Topic: TopicTransCheckMax, QueueID: 0, Flag: e.Flag,
		Body:          append([]byte(nil), e.Body...),
		Properties:    e.Properties,
		BornTimestamp: e.BornTimestamp, BornHost: e.BornHost, StoreHost: e.StoreHost,
		SysFlag: e.SysFlag, ReconsumeTimes: e.ReconsumeTimes,
		TagsCode: message.TagsHash(tags),
	}
	r := s.putWait(m)
	real, _ := message.Property(e.Properties, message.PropertyRealTopic)
	if putStored(r.Status) {
		s.metrics.onDiscard(real)
	}
	s.log.Warn("half message checked too many times; moved to "+TopicTransCheckMax,
		"halfOffset", e.QueueOffset, "checks", checks, "realTopic", real, "status", r.Status)
}

func (s *txnService) putWait(m *message.Message) store.PutResult {
	done := make(chan store.PutResult, 1)
	s.store.Put(m, func(r store.PutResult) { done <- r })
	return <-done
}

// readOps learns the decisions recorded since the last read; decisions
// about halves below the half checkpoint are already accounted for.
func (s *txnService) readOps(halfCP int64) {
	if s.opNext < 0 {
		cp, ok := s.offsets.query(txnCheckGroup, TopicTransOpHalf, 0)
		if min := s.store.MinOffset(TopicTransOpHalf, 0); !ok || cp < min {
			cp = min
		}
		s.opNext = cp
	}
	var res store.GetResult
	for {
		s.store.GetMessages(TopicTransOpHalf, 0, s.opNext, 256, 1<<20, nil, &res)
		if res.Status != store.Found {
			if res.Status == store.OffsetTooSmall || res.Status == store.OffsetOverflowBadly {
				s.opNext = res.NextBeginOffset
			}
			res.Release()
			return
		}
		for i, rec := range res.Records {
			opOff := res.QueueOffsets[i]
			s.opNext = opOff + 1
			var e message.Ext
			if message.Decode(rec, &e) != nil {
				s.opDone[opOff] = true
				continue
			}
			if tag, _ := message.Property(e.Properties, message.PropertyTags); tag != txnOpTag {
				s.opDone[opOff] = true
				continue
			}
			for _, f := range strings.Split(string(e.Body), ",") {
				half, err := strconv.ParseInt(f, 10, 64)
				if err != nil || half < halfCP {
					continue
				}
				if _, dup := s.decided[half]; !dup {
					s.decided[half] = opOff
					s.opRefs[opOff]++
				}
			}
			if s.opRefs[opOff] == 0 {
				s.opDone[opOff] = true
			}
		}
		res.Release()
	}
}

// passDecided reports whether the half at offset is decided, and forgets
// the decision (the checkpoint is about to pass it).
func (s *txnService) passDecided(half int64) bool {
	op, ok := s.decided[half]
	if !ok {
		return false
	}
	delete(s.decided, half)
	if s.opRefs[op]--; s.opRefs[op] <= 0 {
		delete(s.opRefs, op)
		s.opDone[op] = true
	}
	return true
}

// forgetBelow drops decisions the half checkpoint has passed and moves the
// op checkpoint over the op messages fully accounted for.
func (s *txnService) forgetBelow(halfCP int64) {
	for half := range s.decided {
		if half < halfCP {
			s.passDecided(half)
		}
	}
	cp, ok := s.offsets.query(txnCheckGroup, TopicTransOpHalf, 0)
	if min := s.store.MinOffset(TopicTransOpHalf, 0); !ok || cp < min {
		cp = min
	}
	start := cp
	for s.opDone[cp] {
		delete(s.opDone, cp)
		cp++
	}
	for op := range s.opDone {
		if op < cp {
			delete(s.opDone, op)
		}
	}
	if cp != start {
		s.offsets.commit(txnCheckGroup, TopicTransOpHalf, 0, cp)
	}
}

// sendCheck sends CHECK_TRANSACTION_STATE (oneway) to a producer of the
// message's group, with the message re-encoded under its real topic.
func (s *txnService) sendCheck(e *message.Ext) {
	group, _ := message.Property(e.Properties, message.PropertyProducerGroup)
	conn := s.clients.producerConn(group)
	if conn == nil {
		s.log.Debug("transaction check: no producer online", "group", group, "halfOffset", e.QueueOffset)
		return
	}
	uniq, _ := message.Property(e.Properties, message.PropertyUniqKey)
	realTopic, _ := message.Property(e.Properties, message.PropertyRealTopic)
	realQID, _ := message.Property(e.Properties, message.PropertyRealQueueID)
	m := e.Message()
	m.Topic, m.QueueID = realTopic, atoi32(realQID)
	req := &codec.Frame{Code: int32(codec.ReqCheckTransactionState), Language: codec.LangJava, Version: codec.ServerVersion,
		Body: message.AppendRecord(nil, &m, e.BodyCRC, e.QueueOffset, e.PhysicalOffset)}
	req.Ext = []codec.KV{
		{Key: "topic", Value: realTopic},
		{Key: "tranStateTableOffset", Value: strconv.FormatInt(e.QueueOffset, 10)},
		{Key: "commitLogOffset", Value: strconv.FormatInt(e.PhysicalOffset, 10)},
		{Key: "msgId", Value: uniq},
		{Key: "transactionId", Value: uniq},
		{Key: "offsetMsgId", Value: message.OffsetMsgID(e.StoreHost, e.PhysicalOffset)},
		{Key: "bname", Value: s.cfg.BrokerName},
	}
	if err := conn.InvokeOneway(req); err != nil {
		s.log.Debug("transaction check: send", "group", group, "err", err)
	}
}
