package broker

import (
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
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
// Decisions are recorded as op messages in RMQ_SYS_TRANS_OP_HALF_TOPIC
// whose body is the half message's queue offset, as Java does; unlike
// Java, check counts live in memory instead of re-appended half messages.
type txnService struct {
	cfg       *Config
	live      *liveConfig
	store     MessageStore
	clients   *clientManager
	offsets   *offsetTable
	storeHost *hostBox
	log       *slog.Logger
	interval  time.Duration

	mu     sync.Mutex
	done   map[int64]bool // half queue offsets decided; guarded by mu
	checks map[int64]int  // checks sent per half queue offset; guarded by mu

	quit chan struct{}
	wg   sync.WaitGroup
}

func newTxnService(cfg *Config, live *liveConfig, st MessageStore, clients *clientManager, offsets *offsetTable, storeHost *hostBox, log *slog.Logger) *txnService {
	iv := time.Duration(cfg.TransactionCheckInterval) * time.Millisecond
	if iv <= 0 {
		iv = 30 * time.Second
	}
	return &txnService{cfg: cfg, live: live, store: st, clients: clients, offsets: offsets, storeHost: storeHost, log: log, interval: iv,
		done: make(map[int64]bool), checks: make(map[int64]int), quit: make(chan struct{})}
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
	s.loadOps()
	s.wg.Add(1)
	go s.checkLoop()
}

func (s *txnService) stop() {
	close(s.quit)
	s.wg.Wait()
}

// loadOps reads every op message to learn which half messages are decided.
func (s *txnService) loadOps() {
	var res store.GetResult
	off := s.store.MinOffset(TopicTransOpHalf, 0)
	for {
		s.store.GetMessages(TopicTransOpHalf, 0, off, 256, 1<<20, nil, &res)
		if res.Status != store.Found {
			res.Release()
			return
		}
		for i, rec := range res.Records {
			var e message.Ext
			if message.Decode(rec, &e) == nil {
				if n, err := strconv.ParseInt(string(e.Body), 10, 64); err == nil {
					s.done[n] = true
				}
			}
			off = res.QueueOffsets[i] + 1
		}
		res.Release()
	}
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
	typ := atoi32(req.Value("commitOrRollback"))
	if typ != message.TransactionCommitType && typ != message.TransactionRollbackType {
		return nil // unknown state: no answer, as Java
	}
	phy := atoi64(req.Value("commitLogOffset"))
	rec, err := s.store.ReadRecord(phy, 0)
	var e message.Ext
	if err == nil {
		err = message.Decode(rec, &e)
	}
	if err != nil || e.Topic != TopicTransHalf {
		return codec.NewResponse(req, int32(codec.RespSystemError), "Find prepared transaction message failed")
	}
	if pg, _ := message.Property(e.Properties, message.PropertyProducerGroup); pg != req.Value("producerGroup") {
		return codec.NewResponse(req, int32(codec.RespSystemError), "The producer group wrong")
	}
	if e.QueueOffset != atoi64(req.Value("tranStateTableOffset")) {
		return codec.NewResponse(req, int32(codec.RespSystemError), "The transaction state table offset wrong")
	}
	if e.PhysicalOffset != phy {
		return codec.NewResponse(req, int32(codec.RespSystemError), "The commit log offset wrong")
	}
	if typ == message.TransactionRollbackType {
		s.writeOp(e.QueueOffset)
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	realTopic, _ := message.Property(e.Properties, message.PropertyRealTopic)
	realQID, _ := message.Property(e.Properties, message.PropertyRealQueueID)
	props := message.DeleteProperty(e.Properties, message.PropertyRealTopic)
	props = message.DeleteProperty(props, message.PropertyRealQueueID)
	props = message.DeleteProperty(props, message.PropertyTransactionPrepared)
	props = message.SetProperty(props, message.PropertyWaitStoreMsgOK, "false")
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
		if r.Status == store.PutOK || r.Status == store.FlushDiskTimeout {
			s.writeOp(halfOffset)
		} else {
			resp = codec.NewResponse(req, int32(codec.RespSystemError), r.Status.String())
		}
		if !req.IsOneway() {
			if err := c.Write(resp); err != nil {
				s.log.Debug("end transaction: write response", "err", err)
			}
		}
	})
	return nil
}

// writeOp records that the half message at offset is decided.
func (s *txnService) writeOp(halfOffset int64) {
	s.mu.Lock()
	s.done[halfOffset] = true
	delete(s.checks, halfOffset)
	s.mu.Unlock()
	m := &message.Message{
		Topic:         TopicTransOpHalf,
		Body:          strconv.AppendInt(nil, halfOffset, 10),
		Properties:    string(message.AppendProperty(nil, message.PropertyTags, txnOpTag)),
		BornTimestamp: time.Now().UnixMilli(), BornHost: s.storeHost.get(), StoreHost: s.storeHost.get(),
		TagsCode: message.TagsHash(txnOpTag),
	}
	s.store.Put(m, func(r store.PutResult) {
		if r.Status != store.PutOK && r.Status != store.FlushDiskTimeout {
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

// checkOnce walks the undecided half messages from the checkpoint and asks
// their producers about the ones older than the transaction timeout.
func (s *txnService) checkOnce(now time.Time) {
	cp, ok := s.offsets.query(txnCheckGroup, TopicTransHalf, 0)
	if !ok {
		cp = s.store.MinOffset(TopicTransHalf, 0)
	}
	var res store.GetResult
	off := cp
	advancing := true
	for {
		s.store.GetMessages(TopicTransHalf, 0, off, 64, 1<<20, nil, &res)
		if res.Status != store.Found {
			res.Release()
			break
		}
		stop := false
		for i, rec := range res.Records {
			qo := res.QueueOffsets[i]
			off = qo + 1
			s.mu.Lock()
			decided := s.done[qo]
			s.mu.Unlock()
			if decided {
				if advancing {
					cp = qo + 1
				}
				continue
			}
			var e message.Ext
			if message.Decode(rec, &e) != nil {
				continue
			}
			timeout := s.live.txnTimeoutMs.Load()
			if v, ok := message.Property(e.Properties, message.PropertyCheckImmunityTimeInSeconds); ok {
				if sec, err := strconv.ParseInt(v, 10, 64); err == nil && sec*1000 > timeout {
					timeout = sec * 1000
				}
			}
			if now.UnixMilli()-e.StoreTimestamp < timeout {
				stop = true
				break
			}
			advancing = false
			s.mu.Lock()
			n := s.checks[qo]
			if int64(n) >= s.live.txnCheckMax.Load() {
				s.done[qo] = true // compat: Java moves it to TRANS_CHECK_MAX_TIME_TOPIC
				delete(s.checks, qo)
				s.mu.Unlock()
				s.log.Warn("half message discarded after max checks", "halfOffset", qo, "checks", n)
				continue
			}
			s.checks[qo] = n + 1
			s.mu.Unlock()
			s.sendCheck(&e)
		}
		res.Release()
		if stop {
			break
		}
	}
	s.offsets.commit(txnCheckGroup, TopicTransHalf, 0, cp)
	s.mu.Lock()
	for k := range s.done {
		if k < cp {
			delete(s.done, k)
		}
	}
	s.mu.Unlock()
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
