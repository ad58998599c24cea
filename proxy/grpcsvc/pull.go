package grpcsvc

import (
	"context"
	"strconv"
	"time"

	"google.golang.org/grpc"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// PULL_MESSAGE's sysFlag bits (PullSysFlag) the endpoint sets.
const (
	pullFlagSuspend      = 1 << 1
	pullFlagSubscription = 1 << 2
)

// Pull bounds: a batch the client leaves unset is the Java pull
// consumer's default (pullBatchSize 32); the broker caps any batch by its
// maxTransferCountOnMessageInMemory. A filtered-out stretch is pulled past
// at most pullRetries times within one call.
const (
	defaultPullBatch = 32
	maxPullBatch     = 1024
	pullRetries      = 16
)

// PullMessage implements MessagingService (ours: Java's proxy 5.3.3
// answers UNIMPLEMENTED). One call is one PULL_MESSAGE to the master of
// the queue's broker, from the client's offset with the client's filter
// (FLAG_SUBSCRIPTION: no heartbeat is needed), held on the broker
// (FLAG_SUSPEND) up to the long-polling time when one is given. The stream
// carries a status, the messages in queue order, then the offset to pull
// from next; nothing is committed (UpdateOffset does that).
func (s *Service) PullMessage(req *v2.PullMessageRequest, stream grpc.ServerStreamingServer[v2.PullMessageResponse]) error {
	msgs, next, st := s.pull(stream.Context(), req)
	if stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Status{Status: st}}) != nil {
		return nil
	}
	for _, m := range msgs {
		if stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_Message{Message: m}}) != nil {
			return nil // nothing to undo: a pull moves no offset
		}
	}
	if next >= 0 {
		_ = stream.Send(&v2.PullMessageResponse{Content: &v2.PullMessageResponse_NextOffset{NextOffset: next}})
	}
	return nil
}

// pull answers one PullMessage: the messages, the next offset (-1 when
// the broker gave none) and the status.
func (s *Service) pull(ctx context.Context, req *v2.PullMessageRequest) ([]*v2.Message, int64, *v2.Status) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return nil, -1, errStatus(err)
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return nil, -1, errStatus(err)
	}
	mq := req.GetMessageQueue()
	if err := validateTopic(mq.GetTopic()); err != nil {
		return nil, -1, errStatus(err)
	}
	if req.GetOffset() < 0 {
		return nil, -1, newStatus(v2.Code_ILLEGAL_OFFSET, "offset cannot be negative")
	}
	poll, err := s.pullPolling(ctx, req)
	if err != nil {
		return nil, -1, errStatus(err)
	}
	topic, group := mq.GetTopic().GetName(), req.GetGroup().GetName()
	if err := s.checkPullQueue(ctx, mq); err != nil {
		return nil, -1, errStatus(err)
	}
	c, cancel := s.rpcCtx(ctx)
	addr, err := s.queueAddr(c, mq)
	cancel()
	if err != nil {
		return nil, -1, errStatus(err)
	}
	batch := req.GetBatchSize()
	if batch <= 0 {
		batch = defaultPullBatch
	}
	batch = min(batch, maxPullBatch)
	typ, exp := expression(req.GetFilterExpression())
	h := header.PullMessageRequest{ConsumerGroup: group, Topic: topic, QueueID: mq.GetId(), QueueOffset: req.GetOffset(),
		MaxMsgNums: batch, SysFlag: pullFlagSubscription, Subscription: exp, ExpressionType: typ,
		SubVersion: time.Now().UnixMilli(), ProxyFrowardClientID: clientMeta(ctx).clientID}
	if poll > 0 {
		h.SysFlag |= pullFlagSuspend
		h.SuspendTimeoutMillis = poll.Milliseconds()
	}
	for range pullRetries {
		c, cancel := context.WithTimeout(ctx, poll+s.cfg.RequestTimeout)
		resp, err := s.backend.Invoke(c, addr, newRequest(codec.ReqPullMessage, &h))
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil, h.QueueOffset, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no new message")
			}
			s.backend.Forget(topic)
			return nil, -1, errStatus(err)
		}
		var ph header.PullMessageResponse
		switch codec.ResponseCode(resp.Code) {
		case codec.RespSuccess, codec.RespPullNotFound, codec.RespPullRetryImmediately, codec.RespPullOffsetMoved:
			if err := ph.Decode(resp); err != nil {
				return nil, -1, newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
			}
		default:
			return nil, -1, pullStatus(resp.Code, resp.Remark)
		}
		switch codec.ResponseCode(resp.Code) {
		case codec.RespSuccess:
			if msgs := s.pulled(resp.Body); len(msgs) > 0 {
				return msgs, ph.NextBeginOffset, okStatus()
			}
			// A body that decodes to nothing moves on as a filtered stretch.
		case codec.RespPullNotFound:
			return nil, ph.NextBeginOffset, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no new message")
		case codec.RespPullOffsetMoved:
			// compat: the client's offset is outside the queue; the offset
			// to use instead (the queue's nearest end) is the next offset.
			return nil, ph.NextBeginOffset, newStatus(v2.Code_ILLEGAL_OFFSET,
				"offset "+strconv.FormatInt(h.QueueOffset, 10)+" is outside the queue ["+strconv.FormatInt(ph.MinOffset, 10)+", "+strconv.FormatInt(ph.MaxOffset, 10)+"]")
		}
		// PULL_RETRY_IMMEDIATELY (nothing matched the filter in the stretch
		// read): pull on from where the broker stopped, as the Java pull
		// consumer does, while the client's deadline allows.
		if ph.NextBeginOffset <= h.QueueOffset || ctx.Err() != nil {
			return nil, ph.NextBeginOffset, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no matched message")
		}
		h.QueueOffset = ph.NextBeginOffset
	}
	return nil, h.QueueOffset, newStatus(v2.Code_MESSAGE_NOT_FOUND, "no matched message")
}

// pullPolling is how long the broker may hold the pull: none without a
// long-polling timeout, else the timeout clamped as a receive's, and short
// enough that the answer reaches the client before its deadline.
func (s *Service) pullPolling(ctx context.Context, req *v2.PullMessageRequest) (time.Duration, error) {
	lp := req.GetLongPollingTimeout().AsDuration()
	if lp <= 0 {
		return 0, nil
	}
	poll := min(max(lp, s.cfg.MinLongPolling), s.cfg.MaxLongPolling)
	if dl, ok := ctx.Deadline(); ok {
		// The answer needs time to travel back: a tenth of what is left,
		// at most a request timeout.
		remaining := time.Until(dl)
		budget := remaining - min(remaining/10, s.cfg.RequestTimeout)
		if budget <= 0 {
			return 0, fail(v2.Code_ILLEGAL_POLLING_TIME, "The deadline time remaining is not enough for polling, please check network condition")
		}
		poll = min(poll, budget)
	}
	return poll, nil
}

// checkPullQueue checks that the queue's broker serves the topic and the
// queue id is one of its read queues.
func (s *Service) checkPullQueue(ctx context.Context, mq *v2.MessageQueue) error {
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	topic, name := mq.GetTopic().GetName(), mq.GetBroker().GetName()
	r, err := s.backend.Route(c, topic)
	if err != nil {
		return err
	}
	if name == "" || mq.GetId() < 0 {
		return fail(v2.Code_BAD_REQUEST, "message queue must name a broker and a queue id")
	}
	for _, q := range r.QueueDatas {
		if q.BrokerName != name {
			continue
		}
		if q.Perm&permRead == 0 {
			return fail(v2.Code_FORBIDDEN, "broker "+name+" does not allow reading topic "+topic)
		}
		if mq.GetId() >= q.ReadQueueNums {
			return fail(v2.Code_BAD_REQUEST, "queue "+strconv.Itoa(int(mq.GetId()))+" of topic "+topic+" on broker "+name+
				" does not exist: it has "+strconv.Itoa(int(q.ReadQueueNums))+" read queues")
		}
		return nil
	}
	return fail(v2.Code_BAD_REQUEST, "broker "+name+" is not in the route of topic "+topic)
}

// pulled converts a PULL_MESSAGE body (stored records, the pull wire
// format) into messages; a pulled message has no receipt handle.
func (s *Service) pulled(b []byte) []*v2.Message {
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
		out = append(out, s.toMessage(&e, ""))
	}
	return out
}

// pullStatus maps a pull's other answers: the filter's and the queue's
// refusals get the proto's codes, the rest as every remoting answer.
func pullStatus(code int32, remark string) *v2.Status {
	switch codec.ResponseCode(code) {
	case codec.RespSubscriptionParseFailed:
		return newStatus(v2.Code_ILLEGAL_FILTER_EXPRESSION, remark)
	case codec.RespInvalidParameter:
		return newStatus(v2.Code_BAD_REQUEST, remark)
	case codec.RespNoPermission:
		return newStatus(v2.Code_FORBIDDEN, remark)
	}
	return remotingStatus(code, remark)
}
