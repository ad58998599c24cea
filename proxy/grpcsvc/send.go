package grpcsvc

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// Java's MessageSysFlag bits the proxy sets.
const (
	sysFlagCompressed   = 0x1
	sysFlagTxnPrepared  = 0x1 << 2
	sysFlagTxnCommit    = 0x2 << 2
	sysFlagTxnRollback  = 0x3 << 2
	sysFlagTxnNotType   = 0
	defaultTopicQueues  = 4
	autoCreateTopicName = "TBW102"
)

// systemKeys are MessageConst.STRING_HASH_SET: property names a user
// property may not use, and that the receive side keeps out of
// user_properties.
var systemKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range []string{
		"TRACE_ON", "MSG_REGION", "KEYS", "TAGS", "WAIT", "DELAY", "RETRY_TOPIC", "REAL_TOPIC", "REAL_QID",
		"TRAN_MSG", "PGROUP", "MIN_OFFSET", "MAX_OFFSET", "BUYER_ID", "ORIGIN_MESSAGE_ID", "TRANSFER_FLAG",
		"CORRECTION_FLAG", "MQ2_FLAG", "RECONSUME_TIME", "UNIQ_KEY", "MAX_RECONSUME_TIMES",
		"CONSUME_START_TIME", "POP_CK", "POP_CK_OFFSET", "1ST_POP_TIME", "TRAN_PREPARED_QUEUE_OFFSET",
		"DUP_INFO", "EXTEND_UNIQ_INFO", "INSTANCE_ID", "CORRELATION_ID", "REPLY_TO_CLIENT", "TTL",
		"ARRIVE_TIME", "PUSH_REPLY_TIME", "CLUSTER", "MSG_TYPE", "INNER_MULTI_QUEUE_OFFSET",
		"__BORNHOST", "TIMER_OUT_MS", "TIMER_ENQUEUE_MS", "TIMER_DEQUEUE_MS", "TIMER_ROLL_TIMES",
		"TIMER_DEL_UNIQKEY", "TIMER_DELAY_LEVEL", "__STARTDELIVERTIME", "TIMER_DELAY_SEC",
		"TIMER_DELIVER_MS", "__SHARDINGKEY", "__transactionId__", "TRANSACTION_CHECK_TIMES",
		"CHECK_IMMUNITY_TIME_IN_SECONDS", "INNER_MULTI_DISPATCH", "TRACE_CONTEXT", "INNER_NUM",
		"INNER_BASE", "BORN_TIMESTAMP", "DLQ_ORIGIN_TOPIC", "DLQ_ORIGIN_MESSAGE_ID", "__CRC32#",
		"PROPERTY_FORWARD_QUEUE_ID", "REDIRECT", "INNER_NUM", "TIMER_ENQUEUE_MS",
	} {
		m[k] = true
	}
	return m
}()

func hasControl(s string) bool {
	for _, r := range s {
		if unicode.IsControl(r) {
			return true
		}
	}
	return false
}

// writeQueue is one queue a send may go to.
type writeQueue struct {
	broker, addr string
	id           int32
}

// writeQueues are the route's writable queues of masters, in route order
// (Java's MessageQueueView write selector).
func writeQueues(r *body.TopicRouteData) []writeQueue {
	var out []writeQueue
	for _, q := range r.QueueDatas {
		if q.Perm&permWrite == 0 {
			continue
		}
		addr, ok := masterAddr(r, q.BrokerName)
		if !ok {
			continue
		}
		for i := int32(0); i < q.WriteQueueNums; i++ {
			out = append(out, writeQueue{broker: q.BrokerName, addr: addr, id: i})
		}
	}
	// compat: sorted as Java's MessageQueue compares (broker name, queue id),
	// so a message group hashes to the same queue as through Java's proxy.
	sort.Slice(out, func(i, j int) bool {
		if out[i].broker != out[j].broker {
			return out[i].broker < out[j].broker
		}
		return out[i].id < out[j].id
	})
	return out
}

// consistentHash is Guava's Hashing.consistentHash(long, int), which
// SendMessageQueueSelector applies to the message group's hashCode.
func consistentHash(input int64, buckets int) int {
	state := uint64(input)
	candidate := 0
	for {
		state = 2862933555777941757*state + 1
		d := float64(int32(state>>33)+1) / float64(1<<31)
		next := int(float64(candidate+1) / d)
		if next >= 0 && next < buckets {
			candidate = next
		} else {
			return candidate
		}
	}
}

// SendMessage implements MessagingService (SendMessageActivity).
func (s *Service) SendMessage(ctx context.Context, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	m := clientMeta(ctx)
	resp, err := s.send(ctx, m, req)
	if err != nil {
		return &v2.SendMessageResponse{Status: errStatus(err)}, nil
	}
	return resp, nil
}

func (s *Service) send(ctx context.Context, m meta, req *v2.SendMessageRequest) (*v2.SendMessageResponse, error) {
	if err := requireClient(m); err != nil {
		return nil, err
	}
	msgs := req.GetMessages()
	if len(msgs) == 0 {
		return nil, fail(v2.Code_MESSAGE_CORRUPTED, "no message to send")
	}
	topic := msgs[0].GetTopic()
	if err := validateTopic(topic); err != nil {
		return nil, err
	}
	type built struct {
		props   string
		sysFlag int32
		body    []byte
		id      string
		txn     bool
	}
	all := make([]built, 0, len(msgs))
	for _, pm := range msgs {
		if pm.GetTopic().GetName() != topic.GetName() || pm.GetTopic().GetResourceNamespace() != topic.GetResourceNamespace() {
			return nil, fail(v2.Code_MESSAGE_CORRUPTED, "topic in message is not same")
		}
		if len(pm.GetBody()) == 0 {
			return nil, fail(v2.Code_MESSAGE_BODY_EMPTY, "message body cannot be empty")
		}
		if len(pm.GetBody()) > s.cfg.MaxMessageSize {
			return nil, fail(v2.Code_MESSAGE_BODY_TOO_LARGE, "message body cannot exceed the max "+strconv.Itoa(s.cfg.MaxMessageSize))
		}
		props, err := s.messageProperties(m, pm, topic.GetName())
		if err != nil {
			return nil, err
		}
		sp := pm.GetSystemProperties()
		var flag int32
		if sp.GetBodyEncoding() == v2.Encoding_GZIP {
			flag |= sysFlagCompressed
		}
		txn := sp.GetMessageType() == v2.MessageType_TRANSACTION
		if txn {
			flag |= sysFlagTxnPrepared
		}
		all = append(all, built{props: props, sysFlag: flag, body: pm.GetBody(), id: sp.GetMessageId(), txn: txn})
	}

	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	r, err := s.backend.Route(c, topic.GetName())
	if err != nil {
		return nil, err
	}
	qs := writeQueues(r)
	if len(qs) == 0 && masterless(r) { // a master change under way (resolve.go)
		qs = s.awaitWritable(c, topic.GetName())
	}
	if len(qs) == 0 {
		return nil, fail(v2.Code_FORBIDDEN, "no writable queue of topic "+topic.GetName())
	}
	group := ""
	if g := msgs[0].GetSystemProperties().GetMessageGroup(); len(msgs) == 1 && g != "" {
		group = g
	}
	q := s.pickQueue(qs, group)

	out := &v2.SendMessageResponse{}
	codes := map[v2.Code]bool{}
	for _, b := range all {
		e, retry := s.sendOne(c, q, topic.GetName(), b.props, b.sysFlag, b.body, b.id, b.txn)
		if retry { // the broker is gone or no longer master: once more on the fresh route
			if nq, ok := s.reresolve(c, topic.GetName(), q, group); ok {
				q = nq
				e, _ = s.sendOne(c, q, topic.GetName(), b.props, b.sysFlag, b.body, b.id, b.txn)
			}
		}
		out.Entries = append(out.Entries, e)
		codes[e.GetStatus().GetCode()] = true
	}
	switch len(codes) {
	case 1:
		for code := range codes {
			out.Status = newStatus(code, code.String())
		}
	default:
		out.Status = newStatus(v2.Code_MULTIPLE_RESULTS, v2.Code_MULTIPLE_RESULTS.String())
	}
	return out, nil
}

// sendOne is one SEND_MESSAGE_V2 and its SendResultEntry; retry says the
// message was not stored because the broker is unreachable or not a
// master, so the send may go to the broker the fresh route names.
func (s *Service) sendOne(ctx context.Context, q writeQueue, topic, props string, sysFlag int32, msgBody []byte, id string, txn bool) (*v2.SendResultEntry, bool) {
	h := header.SendMessageRequestV2{
		ProducerGroup: topic, Topic: topic, DefaultTopic: autoCreateTopicName, DefaultTopicQueueNums: defaultTopicQueues,
		QueueID: q.id, SysFlag: sysFlag, BornTimestamp: time.Now().UnixMilli(), Properties: props, BrokerName: q.broker,
	}
	req := newRequest(codec.ReqSendMessageV2, &h)
	req.Body = msgBody
	resp, err := s.backend.Invoke(ctx, q.addr, req)
	if err != nil {
		s.backend.Forget(topic)
		return &v2.SendResultEntry{Status: errStatus(err)}, ctx.Err() == nil
	}
	switch codec.ResponseCode(resp.Code) {
	case codec.RespSuccess:
	case codec.RespFlushDiskTimeout:
		return &v2.SendResultEntry{Status: newStatus(v2.Code_MASTER_PERSISTENCE_TIMEOUT, "send message failed, sendStatus=FLUSH_DISK_TIMEOUT")}, false
	case codec.RespFlushSlaveTimeout:
		return &v2.SendResultEntry{Status: newStatus(v2.Code_SLAVE_PERSISTENCE_TIMEOUT, "send message failed, sendStatus=FLUSH_SLAVE_TIMEOUT")}, false
	case codec.RespSlaveNotAvailable:
		return &v2.SendResultEntry{Status: newStatus(v2.Code_HA_NOT_AVAILABLE, "send message failed, sendStatus=SLAVE_NOT_AVAILABLE")}, false
	case codec.RespServiceNotAvailable: // a slave, or a store not writable: nothing stored
		return &v2.SendResultEntry{Status: remotingStatus(resp.Code, resp.Remark)}, true
	default:
		return &v2.SendResultEntry{Status: remotingStatus(resp.Code, resp.Remark)}, false
	}
	var rh header.SendMessageResponse
	if err := rh.Decode(resp); err != nil {
		return &v2.SendResultEntry{Status: newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())}, false
	}
	txnID := rh.TransactionID
	if txn {
		if txnID == "" {
			txnID = id
		}
		if _, off, err := message.DecodeOffsetMsgID(rh.MsgID); err == nil {
			s.txns.put(txnID, txnData{broker: q.broker, addr: q.addr, topic: topic, group: topic,
				tranStateOffset: rh.QueueOffset, commitLogOffset: off, msgID: id})
		}
	}
	return &v2.SendResultEntry{Status: okStatus(), MessageId: id, TransactionId: txnID, Offset: rh.QueueOffset, RecallHandle: rh.RecallHandle}, false
}

// messageProperties is SendMessageActivity.buildMessageProperty.
func (s *Service) messageProperties(m meta, pm *v2.Message, group string) (string, error) {
	up := pm.GetUserProperties()
	if len(up) > s.cfg.UserPropertyMaxNum {
		return "", fail(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "too many user properties, max is "+strconv.Itoa(s.cfg.UserPropertyMaxNum))
	}
	size := 0
	props := make(map[string]string, len(up)+12)
	for k, v := range up {
		if systemKeys[k] {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "property is used by system: "+k)
		}
		if hasControl(k) {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the key of property cannot contain control character")
		}
		if hasControl(v) {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY, "the value of property cannot contain control character")
		}
		if k == "" || v == "" || strings.ContainsAny(k+v, "\x01\x02") {
			continue
		}
		size += len(k) + len(v)
		props[k] = v
	}
	sp := pm.GetSystemProperties()
	if sp == nil {
		return "", fail(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	if tag := sp.GetTag(); tag != "" {
		if strings.TrimSpace(tag) == "" {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot be the char sequence of whitespace")
		}
		if strings.Contains(tag, "|") {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain '|'")
		}
		if hasControl(tag) {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_TAG, "tag cannot contain control character")
		}
		props[message.PropertyTags] = tag
		size += len(tag)
	}
	if keys := sp.GetKeys(); len(keys) > 0 {
		for _, k := range keys {
			if k != "" && strings.TrimSpace(k) == "" {
				return "", fail(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot be the char sequence of whitespace")
			}
			if hasControl(k) {
				return "", fail(v2.Code_ILLEGAL_MESSAGE_KEY, "key cannot contain control character")
			}
			size += len(k)
		}
		props[message.PropertyKeys] = strings.Join(keys, message.KeySeparator)
	}
	if size > s.cfg.MaxUserPropertySize {
		return "", fail(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the total size of user property is too large, max is "+strconv.Itoa(s.cfg.MaxUserPropertySize))
	}
	if strings.TrimSpace(sp.GetMessageId()) == "" {
		return "", fail(v2.Code_ILLEGAL_MESSAGE_ID, "message id cannot be empty")
	}
	props[message.PropertyUniqKey] = sp.GetMessageId()
	if sp.GetMessageType() == v2.MessageType_TRANSACTION {
		props[message.PropertyTransactionPrepared] = "true"
		if d := sp.GetOrphanedTransactionRecoveryDuration(); d != nil {
			sec := d.GetSeconds()
			if sec > int64(s.cfg.MaxTransactionRecovery/time.Second) {
				return "", fail(v2.Code_BAD_REQUEST, "the max transaction recovery time of message is too large, max is "+strconv.FormatInt(int64(s.cfg.MaxTransactionRecovery/time.Second), 10))
			}
			props[message.PropertyCheckImmunityTimeInSeconds] = strconv.FormatInt(sec, 10)
		}
	}
	if dt := sp.GetDeliveryTimestamp(); dt != nil {
		ms := dt.AsTime().UnixMilli()
		if ms-time.Now().UnixMilli() > s.cfg.MaxDelay.Milliseconds() {
			return "", fail(v2.Code_ILLEGAL_DELIVERY_TIME, "the max delay time of message is too large, max is "+strconv.FormatInt(s.cfg.MaxDelay.Milliseconds(), 10))
		}
		props[message.PropertyTimerDeliverMs] = strconv.FormatInt(ms, 10)
	}
	props[message.PropertyReconsumeTime] = strconv.Itoa(int(sp.GetDeliveryAttempt()))
	props[message.PropertyProducerGroup] = group
	if g := sp.GetMessageGroup(); g != "" {
		if strings.TrimSpace(g) == "" {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot be the char sequence of whitespace")
		}
		if s.cfg.MaxMessageGroupSize > 0 && len(g) >= s.cfg.MaxMessageGroupSize {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group exceed the max size "+strconv.Itoa(s.cfg.MaxMessageGroupSize))
		}
		if hasControl(g) {
			return "", fail(v2.Code_ILLEGAL_MESSAGE_GROUP, "message group cannot contain control character")
		}
		props[message.PropertyShardingKey] = g
	}
	if tc := sp.GetTraceContext(); tc != "" {
		props[message.PropertyTraceContext] = tc
	}
	bornHost := sp.GetBornHost()
	if strings.TrimSpace(bornHost) == "" {
		bornHost = m.remote
	}
	if strings.TrimSpace(bornHost) != "" {
		props[message.PropertyBornHost] = bornHost
	}
	if bt := sp.GetBornTimestamp(); bt != nil && bt.IsValid() {
		props[message.PropertyBornTimestamp] = strconv.FormatInt(bt.AsTime().UnixMilli(), 10)
	}
	enc := message.EncodeProperties(props)
	if len(enc) > message.MaxPropertiesLen {
		return "", fail(v2.Code_MESSAGE_PROPERTIES_TOO_LARGE, "the properties of the message are too large")
	}
	return enc, nil
}
