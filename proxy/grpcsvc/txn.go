package grpcsvc

import (
	"context"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// txnData is what END_TRANSACTION needs of a half message (Java's
// TransactionData): where it is and its offsets.
type txnData struct {
	broker, addr, topic, group string
	tranStateOffset            int64
	commitLogOffset            int64
	msgID                      string
	at                         time.Time
}

// txnTable maps transaction ids to their half messages, bounded in count
// and age (Java: transactionDataExpireMillis, here 1 h past the longest
// check-back window).
type txnTable struct {
	mu  sync.Mutex
	max int
	m   map[string]txnData // guarded by mu
}

func newTxnTable(max int) *txnTable { return &txnTable{max: max, m: map[string]txnData{}} }

func (t *txnTable) put(id string, d txnData) {
	d.at = time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.m) >= t.max {
		cut := time.Now().Add(-time.Hour)
		for k, v := range t.m {
			if v.at.Before(cut) {
				delete(t.m, k)
			}
		}
		if len(t.m) >= t.max {
			for k := range t.m { // still full: drop an arbitrary one
				delete(t.m, k)
				break
			}
		}
	}
	t.m[id] = d
}

func (t *txnTable) take(id string) (txnData, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	d, ok := t.m[id]
	if ok {
		delete(t.m, id)
	}
	return d, ok
}

// checkTransactionState handles a broker's check-back on the proxy's
// connection: it goes to a producer of the message's group as
// RecoverOrphanedTransactionCommand (GrpcClientChannel.processCheckTransaction).
func (s *Service) checkTransactionState(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.CheckTransactionStateRequest
	if err := h.Decode(req); err != nil {
		s.log.Warn("grpc proxy: bad CHECK_TRANSACTION_STATE", "err", err)
		return nil
	}
	var e message.Ext
	if err := message.Decode(req.Body, &e); err != nil {
		s.log.Warn("grpc proxy: CHECK_TRANSACTION_STATE without a message", "err", err)
		return nil
	}
	group, _ := message.Property(e.Properties, message.PropertyProducerGroup)
	topic := e.Topic
	if rt, ok := message.Property(e.Properties, message.PropertyRealTopic); ok {
		topic = rt
	}
	if group == "" {
		group = topic
	}
	out := s.clients.producerStream(group)
	if out == nil {
		s.log.Debug("grpc proxy: no producer stream for check-back", "group", group)
		return nil
	}
	txnID := h.TransactionID
	if txnID == "" {
		txnID = h.MsgID
	}
	uniq, _ := message.Property(e.Properties, message.PropertyUniqKey)
	if uniq == "" {
		uniq = h.MsgID
	}
	s.txns.put(txnID, txnData{broker: h.Bname, addr: c.RemoteAddr(), topic: topic, group: group,
		tranStateOffset: h.TranStateTableOffset, commitLogOffset: h.CommitLogOffset, msgID: uniq})
	msg := s.toMessage(&e, "")
	msg.Topic = resourceOf(topic)
	cmd := &v2.TelemetryCommand{Command: &v2.TelemetryCommand_RecoverOrphanedTransactionCommand{
		RecoverOrphanedTransactionCommand: &v2.RecoverOrphanedTransactionCommand{Message: msg, TransactionId: txnID}}}
	select {
	case out <- cmd:
	default:
		s.log.Warn("grpc proxy: producer telemetry stream full, check-back dropped", "group", group)
	}
	return nil
}

// EndTransaction implements MessagingService: END_TRANSACTION, oneway,
// to the broker holding the half message.
func (s *Service) EndTransaction(ctx context.Context, req *v2.EndTransactionRequest) (*v2.EndTransactionResponse, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return &v2.EndTransactionResponse{Status: errStatus(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.EndTransactionResponse{Status: errStatus(err)}, nil
	}
	if req.GetTransactionId() == "" {
		return &v2.EndTransactionResponse{Status: newStatus(v2.Code_INVALID_TRANSACTION_ID, "transaction id cannot be empty")}, nil
	}
	var flag int32
	switch req.GetResolution() {
	case v2.TransactionResolution_COMMIT:
		flag = sysFlagTxnCommit
	case v2.TransactionResolution_ROLLBACK:
		flag = sysFlagTxnRollback
	default:
		flag = sysFlagTxnNotType
	}
	d, ok := s.txns.take(req.GetTransactionId())
	if !ok {
		return &v2.EndTransactionResponse{Status: newStatus(v2.Code_INVALID_TRANSACTION_ID, "cannot found transaction data")}, nil
	}
	if flag == sysFlagTxnNotType {
		s.txns.put(req.GetTransactionId(), d) // unknown: the broker checks back later
	}
	h := header.EndTransactionRequest{
		Topic: d.topic, ProducerGroup: d.group, TranStateTableOffset: d.tranStateOffset, CommitLogOffset: d.commitLogOffset,
		CommitOrRollback: flag, FromTransactionCheck: req.GetSource() == v2.TransactionSource_SOURCE_SERVER_CHECK,
		MsgID: d.msgID, TransactionID: req.GetTransactionId(), Bname: d.broker,
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	if err := s.backend.InvokeOneway(c, d.addr, newRequest(codec.ReqEndTransaction, &h)); err != nil {
		return &v2.EndTransactionResponse{Status: errStatus(err)}, nil
	}
	return &v2.EndTransactionResponse{Status: okStatus()}, nil
}
