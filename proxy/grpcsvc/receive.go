package grpcsvc

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// Receive bounds (ProxyUtils.MAX_MSG_NUMS_FOR_POP_REQUEST, ConsumeInitMode.MAX).
const (
	maxPopBatch   = 32
	initModeMax   = 1
	nackInvisible = time.Second
)

// ReceiveMessage implements MessagingService (ReceiveMessageActivity):
// one POP_MESSAGE with the client's invisible duration, held up to the
// long-polling time; the stream carries a status, the messages, and a
// delivery timestamp.
func (s *Service) ReceiveMessage(req *v2.ReceiveMessageRequest, stream grpc.ServerStreamingServer[v2.ReceiveMessageResponse]) error {
	ctx := stream.Context()
	msgs, st := s.receive(ctx, req)
	send := func(r *v2.ReceiveMessageResponse) bool { return stream.Send(r) == nil }
	ok := send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Status{Status: st}})
	for i, m := range msgs {
		if !ok || !send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_Message{Message: m}}) {
			// compat: what could not be written becomes visible again soon
			// (processThrowableWhenWriteMessage, NACK_INVISIBLE_TIME).
			s.nack(clientMeta(ctx).clientID, req, msgs[i:])
			return nil
		}
	}
	send(&v2.ReceiveMessageResponse{Content: &v2.ReceiveMessageResponse_DeliveryTimestamp{DeliveryTimestamp: timestamppb.Now()}})
	return nil
}

func (s *Service) receive(ctx context.Context, req *v2.ReceiveMessageRequest) ([]*v2.Message, *v2.Status) {
	m := clientMeta(ctx)
	if err := requireClient(m); err != nil {
		return nil, errStatus(err)
	}
	st := s.clients.settings(m.clientID)
	fifo := st.GetSubscription().GetFifo()
	maxAttempts := st.GetBackoffPolicy().GetMaxAttempts()

	remaining := 20 * time.Second
	if dl, ok := ctx.Deadline(); ok {
		remaining = time.Until(dl)
	}
	poll := remaining - st.GetRequestTimeout().AsDuration()/2
	if lp := req.GetLongPollingTimeout(); lp != nil {
		poll = lp.AsDuration()
	}
	poll = max(poll, s.cfg.MinLongPolling)
	poll = min(poll, s.cfg.MaxLongPolling)
	if poll > remaining {
		if remaining < s.cfg.MinLongPolling {
			return nil, newStatus(v2.Code_ILLEGAL_POLLING_TIME, "The deadline time remaining is not enough for polling, please check network condition")
		}
		poll = remaining
	}
	if err := validateTopic(req.GetMessageQueue().GetTopic()); err != nil {
		return nil, errStatus(err)
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return nil, errStatus(err)
	}
	topic, group := req.GetMessageQueue().GetTopic().GetName(), req.GetGroup().GetName()
	invisible := req.GetInvisibleDuration().AsDuration()
	autoRenew := req.GetAutoRenew() && s.renew != nil
	if autoRenew {
		invisible = s.cfg.Renew.DefaultInvisible // defaultInvisibleTimeMills, renewed (renew.go)
	} else if err := s.validateInvisible(invisible, s.cfg.MinInvisible); err != nil {
		return nil, errStatus(err)
	}
	expType, exp := expression(req.GetFilterExpression())

	r, err := s.backend.Route(ctx, topic)
	if err != nil {
		return nil, errStatus(err)
	}
	brokerName, addr, ok := s.readBroker(r, req.GetMessageQueue().GetBroker().GetName())
	if !ok {
		return nil, newStatus(v2.Code_FORBIDDEN, "no readable queue of topic "+topic)
	}
	batch := req.GetBatchSize()
	if batch <= 0 || batch > maxPopBatch {
		batch = maxPopBatch
	}
	now := time.Now()
	h := header.PopMessageRequest{
		ConsumerGroup: group, Topic: topic, QueueID: -1, MaxMsgNums: batch,
		InvisibleTime: invisible.Milliseconds(), PollTime: poll.Milliseconds(), BornTime: now.UnixMilli(),
		InitMode: initModeMax, ExpType: expType, Exp: exp, Order: fifo, AttemptID: req.GetAttemptId(), Bname: brokerName,
	}
	c, cancel := context.WithTimeout(ctx, poll+s.cfg.RequestTimeout)
	defer cancel()
	resp, err := s.backend.Invoke(c, addr, newRequest(codec.ReqPopMessage, &h))
	if err != nil {
		if ctx.Err() != nil {
			return nil, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no new message")
		}
		s.backend.Forget(topic)
		return nil, errStatus(err)
	}
	switch codec.ResponseCode(resp.Code) {
	case codec.RespSuccess:
	case codec.RespPollingFull:
		return nil, newStatus(v2.Code_TOO_MANY_REQUESTS, "polling full")
	case codec.RespPollingTimeout, codec.RespPullNotFound:
		return nil, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no new message")
	default:
		return nil, remotingStatus(resp.Code, resp.Remark)
	}
	var ph header.PopMessageResponse
	if err := ph.Decode(resp); err != nil {
		return nil, newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
	}
	msgs := s.popped(ctx, resp.Body, &ph, brokerName, addr, group, topic, fifo, maxAttempts)
	if len(msgs) == 0 {
		return nil, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no match message")
	}
	if autoRenew {
		for _, msg := range msgs {
			sp := msg.GetSystemProperties()
			s.renew.add(m.clientID, group, topic, sp.GetMessageId(), sp.GetReceiptHandle(), sp.GetDeliveryAttempt()-1)
		}
	}
	return msgs, okStatus()
}

func (s *Service) validateInvisible(d, min time.Duration) error {
	if d < min {
		return fail(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisibleTime is too small. min is "+strconv.FormatInt(min.Milliseconds(), 10))
	}
	if d > s.cfg.MaxInvisible {
		return fail(v2.Code_ILLEGAL_INVISIBLE_TIME, "the invisibleTime is too large. max is "+strconv.FormatInt(s.cfg.MaxInvisible.Milliseconds(), 10))
	}
	return nil
}

// readBroker is the broker a receive pops from: the one the client names
// if it has readable queues, else the next readable master in turn.
func (s *Service) readBroker(r *body.TopicRouteData, want string) (name, addr string, ok bool) {
	var names []string
	for _, q := range r.QueueDatas {
		if q.Perm&permRead == 0 || q.ReadQueueNums <= 0 {
			continue
		}
		if _, ok := masterAddr(r, q.BrokerName); ok {
			names = append(names, q.BrokerName)
		}
	}
	if len(names) == 0 {
		return "", "", false
	}
	name = names[s.rr.next()%uint64(len(names))]
	for _, n := range names {
		if n == want {
			name = n
		}
	}
	addr, _ = masterAddr(r, name)
	return name, addr, true
}

// popped converts a POP_MESSAGE body: each record gets its receipt handle
// (POP_CK, built from the response header as Java's client API does when
// the broker did not set it, plus the commit log offset); messages past
// the group's max attempts go to the DLQ instead (PopMessageResultFilterImpl).
func (s *Service) popped(ctx context.Context, b []byte, ph *header.PopMessageResponse, brokerName, addr, group, topic string, fifo bool, maxAttempts int32) []*v2.Message {
	starts := popfmt.ParseStartOffsetInfo(ph.StartOffsetInfo)
	offs := popfmt.ParseMsgOffsetInfo(ph.MsgOffsetInfo)
	orders := parseOrderCountInfo(ph.OrderCountInfo)
	seen := map[string]int{}
	var out []*v2.Message
	for len(b) > 0 {
		size, _, err := message.PeekSize(b)
		if err != nil || size <= 0 || int(size) > len(b) {
			break
		}
		var e message.Ext
		if message.Decode(b[:size], &e) != nil {
			break
		}
		b = b[size:]
		ck, hasCK := message.Property(e.Properties, message.PropertyPopCK)
		if !hasCK {
			key := string(popfmt.RetryMark(e.Topic)) + "@" + strconv.Itoa(int(e.QueueID))
			qo := e.QueueOffset
			if list := offs[key]; seen[key] < len(list) {
				qo = list[seen[key]]
			}
			seen[key]++
			start, ok := starts[key]
			if !ok {
				start = e.QueueOffset
			}
			ck = string(popfmt.AppendExtraInfo(nil, start, ph.PopTime, ph.InvisibleTime, ph.ReviveQid, e.Topic, brokerName, e.QueueID, qo))
			if fifo {
				n, ok := orders[key+"@"+strconv.FormatInt(e.QueueOffset, 10)]
				if !ok {
					n = orders[key]
				}
				if n > 0 {
					e.ReconsumeTimes = n
				}
			}
		}
		handle := ck + " " + strconv.FormatInt(e.PhysicalOffset, 10)
		if maxAttempts > 0 && e.ReconsumeTimes >= maxAttempts {
			uniq, _ := message.Property(e.Properties, message.PropertyUniqKey)
			if rh, err := parseHandle(handle); err == nil {
				s.toDLQ(ctx, addr, rh, uniq, group, topic)
			}
			continue
		}
		out = append(out, s.toMessage(&e, handle))
	}
	return out
}

// parseOrderCountInfo is ExtraInfoUtil.parseOrderCountInfo: keys
// "retry@queueId" or "retry@queueId@offset".
func parseOrderCountInfo(s string) map[string]int32 {
	m := map[string]int32{}
	if s == "" {
		return m
	}
	for _, one := range strings.Split(s, ";") {
		f := strings.Split(one, " ")
		var key string
		var v string
		switch len(f) {
		case 3:
			key, v = f[0]+"@"+f[1], f[2]
		case 4:
			key, v = f[0]+"@"+f[1]+"@"+f[2], f[3]
		default:
			continue
		}
		if n, err := strconv.ParseInt(v, 10, 32); err == nil {
			m[key] = int32(n)
		}
	}
	return m
}

// nack makes messages the stream could not deliver visible again soon.
func (s *Service) nack(clientID string, req *v2.ReceiveMessageRequest, msgs []*v2.Message) {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.RequestTimeout)
	defer cancel()
	for _, m := range msgs {
		sp := m.GetSystemProperties()
		rh, err := parseHandle(s.takeHandle(clientID, req.GetGroup().GetName(), sp.GetMessageId(), sp.GetReceiptHandle()))
		if err != nil {
			continue
		}
		_, _ = s.changeInvisible(ctx, rh, req.GetGroup().GetName(), req.GetMessageQueue().GetTopic().GetName(), nackInvisible)
	}
}

// resourceOf is GrpcConverter.buildResource: "ns%name" → namespace, name.
func resourceOf(full string) *v2.Resource {
	ns, name := splitNamespace(full)
	return &v2.Resource{Name: name, ResourceNamespace: ns}
}

// splitNamespace is NamespaceUtil.getNamespaceFromResource /
// withoutNamespace for plain, retry and DLQ resources.
func splitNamespace(full string) (ns, name string) {
	prefix := ""
	rest := full
	for _, p := range []string{popfmt.RetryPrefix, "%DLQ%"} {
		if strings.HasPrefix(rest, p) {
			prefix, rest = p, rest[len(p):]
			break
		}
	}
	if i := strings.IndexByte(rest, '%'); i >= 0 {
		return rest[:i], prefix + rest[i+1:]
	}
	return "", full
}

func addrString(a netip.AddrPort) string {
	if !a.IsValid() {
		return ""
	}
	return a.String()
}

// toMessage is GrpcConverter.buildMessage.
func (s *Service) toMessage(e *message.Ext, handle string) *v2.Message {
	props := message.ParseProperties(e.Properties)
	sp := &v2.SystemProperties{}
	user := map[string]string{}
	for k, v := range props {
		if !systemKeys[k] {
			user[k] = v
		}
	}
	if tag, ok := props[message.PropertyTags]; ok {
		sp.Tag = &tag
	}
	if keys, ok := props[message.PropertyKeys]; ok {
		sp.Keys = strings.Split(keys, message.KeySeparator)
	}
	if id, ok := props[message.PropertyUniqKey]; ok && id != "" {
		sp.MessageId = id
	} else {
		sp.MessageId = message.OffsetMsgID(e.StoreHost, e.PhysicalOffset)
	}
	bodyBytes := e.Body
	sp.BodyEncoding = v2.Encoding_IDENTITY
	if e.SysFlag&sysFlagCompressed != 0 {
		if d, err := message.Decompress(e.Body, e.SysFlag, s.cfg.MaxMessageSize*4); err == nil {
			bodyBytes = d
		} else {
			sp.BodyEncoding = v2.Encoding_GZIP
		}
	}
	sum := md5.Sum(bodyBytes)
	sp.BodyDigest = &v2.Digest{Type: v2.DigestType_MD5, Checksum: strings.ToUpper(hex.EncodeToString(sum[:]))}
	_, delay := props[message.PropertyDelayTimeLevel]
	_, deliverMs := props[message.PropertyTimerDeliverMs]
	_, delaySec := props[message.PropertyTimerDelaySec]
	switch {
	case props[message.PropertyTransactionPrepared] == "true":
		sp.MessageType = v2.MessageType_TRANSACTION
	case delay || deliverMs || delaySec:
		sp.MessageType = v2.MessageType_DELAY
	case props[message.PropertyShardingKey] != "":
		sp.MessageType = v2.MessageType_FIFO
	default:
		sp.MessageType = v2.MessageType_NORMAL
	}
	sp.BornTimestamp = timestamppb.New(time.UnixMilli(e.BornTimestamp))
	if bh := strings.TrimSpace(props[message.PropertyBornHost]); bh != "" {
		sp.BornHost = bh
	} else if e.BornHost.IsValid() {
		sp.BornHost = e.BornHost.Addr().String()
	}
	sp.StoreTimestamp = timestamppb.New(time.UnixMilli(e.StoreTimestamp))
	sp.StoreHost = addrString(e.StoreHost)
	if v, ok := props[message.PropertyTimerDelaySec]; ok {
		if sec, err := strconv.ParseInt(v, 10, 64); err == nil {
			sp.DeliveryTimestamp = timestamppb.New(time.Now().Add(time.Duration(sec) * time.Second))
		}
	} else if v, ok := props[message.PropertyTimerDeliverMs]; ok {
		if ms, err := strconv.ParseInt(v, 10, 64); err == nil {
			sp.DeliveryTimestamp = timestamppb.New(time.UnixMilli(ms))
		}
	}
	if g, ok := props[message.PropertyShardingKey]; ok {
		sp.MessageGroup = &g
	}
	if handle != "" {
		sp.ReceiptHandle = &handle
	}
	sp.QueueId = e.QueueID
	sp.QueueOffset = new(e.QueueOffset)
	sp.DeliveryAttempt = new(e.ReconsumeTimes + 1)
	if tc, ok := props[message.PropertyTraceContext]; ok {
		sp.TraceContext = &tc
	}
	if t, ok := props[message.PropertyDLQOriginTopic]; ok {
		if id, ok := props[message.PropertyDLQOriginMessageID]; ok {
			sp.DeadLetterQueue = &v2.DeadLetterQueue{Topic: t, MessageId: id}
		}
	}
	return &v2.Message{Topic: resourceOf(e.Topic), UserProperties: user, SystemProperties: sp, Body: bodyBytes}
}
