package grpcsvc

import (
	"context"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// receiptHandle is Java's ReceiptHandle: the POP_CK extraInfo fields plus
// the commit log offset (9 space-separated fields; 8 without it).
type receiptHandle struct {
	popfmt.ExtraInfo
	commitLogOffset int64
	raw             string
}

func parseHandle(s string) (receiptHandle, error) {
	h := receiptHandle{raw: s, commitLogOffset: -1}
	f := strings.Split(s, " ")
	if len(f) < 8 {
		return h, fail(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is not valid")
	}
	e, err := popfmt.ParseExtraInfo(strings.Join(f[:8], " "))
	if err != nil {
		return h, fail(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is not valid")
	}
	h.ExtraInfo = e
	if len(f) >= 9 {
		v, err := strconv.ParseInt(f[8], 10, 64)
		if err != nil {
			return h, fail(v2.Code_INVALID_RECEIPT_HANDLE, "receipt handle is not valid")
		}
		h.commitLogOffset = v
	}
	return h, nil
}

// brokerAddr is the master address of the handle's broker.
func (s *Service) brokerAddr(ctx context.Context, topic, broker string) (string, error) {
	r, err := s.backend.Route(ctx, topic)
	if err != nil {
		return "", err
	}
	addr, ok := masterAddr(r, broker)
	if !ok {
		return "", fail(v2.Code_INVALID_RECEIPT_HANDLE, "broker "+broker+" of the receipt handle is not in the route of "+topic)
	}
	return addr, nil
}

// AckMessage implements MessagingService: one ACK_MESSAGE per entry with
// the receipt handle as extraInfo (AckMessageActivity.ackMessageOneByOne).
func (s *Service) AckMessage(ctx context.Context, req *v2.AckMessageRequest) (*v2.AckMessageResponse, error) {
	m := clientMeta(ctx)
	if err := requireClient(m); err != nil {
		return &v2.AckMessageResponse{Status: errStatus(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.AckMessageResponse{Status: errStatus(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.AckMessageResponse{Status: errStatus(err)}, nil
	}
	if len(req.GetEntries()) == 0 {
		return &v2.AckMessageResponse{Status: newStatus(v2.Code_INTERNAL_SERVER_ERROR, "ack message result is empty")}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	out := &v2.AckMessageResponse{}
	codes := map[v2.Code]bool{}
	for _, e := range req.GetEntries() {
		st := okStatus()
		if rh, err := parseHandle(s.takeHandle(m.clientID, req.GetGroup().GetName(), e.GetMessageId(), e.GetReceiptHandle())); err != nil {
			st = errStatus(err)
		} else if err := s.ack(c, rh, req.GetGroup().GetName(), req.GetTopic().GetName()); err != nil {
			st = errStatus(err)
		}
		out.Entries = append(out.Entries, &v2.AckMessageResultEntry{MessageId: e.GetMessageId(), ReceiptHandle: e.GetReceiptHandle(), Status: st})
		codes[st.GetCode()] = true
	}
	out.Status = okStatus()
	if len(codes) > 1 {
		out.Status = newStatus(v2.Code_MULTIPLE_RESULTS, v2.Code_MULTIPLE_RESULTS.String())
	} else {
		for code := range codes {
			out.Status = newStatus(code, code.String())
		}
	}
	return out, nil
}

func (s *Service) ack(ctx context.Context, rh receiptHandle, group, topic string) error {
	addr, err := s.brokerAddr(ctx, topic, rh.BrokerName)
	if err != nil {
		return err
	}
	h := header.AckMessageRequest{ConsumerGroup: group, Topic: popfmt.RealTopic(topic, group, rh.Retry),
		QueueID: rh.QueueID, ExtraInfo: rh.raw, Offset: rh.MsgQueueOffset, Bname: rh.BrokerName}
	resp, err := s.backend.Invoke(ctx, addr, newRequest(codec.ReqAckMessage, &h))
	if err != nil {
		return err
	}
	if resp.Code != int32(codec.RespSuccess) {
		return &BrokerError{Code: resp.Code, Remark: resp.Remark}
	}
	return nil
}

// ChangeInvisibleDuration implements MessagingService: CHANGE_MESSAGE_
// INVISIBLETIME; the answer carries the new receipt handle.
func (s *Service) ChangeInvisibleDuration(ctx context.Context, req *v2.ChangeInvisibleDurationRequest) (*v2.ChangeInvisibleDurationResponse, error) {
	m := clientMeta(ctx)
	if err := requireClient(m); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	d := req.GetInvisibleDuration().AsDuration()
	if err := s.validateInvisible(d, 0); err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	rh, err := parseHandle(s.takeHandle(m.clientID, req.GetGroup().GetName(), req.GetMessageId(), req.GetReceiptHandle()))
	if err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	handle, err := s.changeInvisible(c, rh, req.GetGroup().GetName(), req.GetTopic().GetName(), d)
	if err != nil {
		return &v2.ChangeInvisibleDurationResponse{Status: errStatus(err)}, nil
	}
	return &v2.ChangeInvisibleDurationResponse{Status: okStatus(), ReceiptHandle: handle}, nil
}

// changeInvisible returns the new receipt handle (MQClientAPIImpl's
// processChangeInvisibleTime rebuilds the extraInfo from the response).
func (s *Service) changeInvisible(ctx context.Context, rh receiptHandle, group, topic string, d time.Duration) (string, error) {
	addr, err := s.brokerAddr(ctx, topic, rh.BrokerName)
	if err != nil {
		return "", err
	}
	real := popfmt.RealTopic(topic, group, rh.Retry)
	h := header.ChangeInvisibleTimeRequest{ConsumerGroup: group, Topic: real, QueueID: rh.QueueID, ExtraInfo: rh.raw,
		Offset: rh.MsgQueueOffset, InvisibleTime: d.Milliseconds(), Bname: rh.BrokerName}
	resp, err := s.backend.Invoke(ctx, addr, newRequest(codec.ReqChangeMessageInvisibletime, &h))
	if err != nil {
		return "", err
	}
	if resp.Code != int32(codec.RespSuccess) {
		return "", &BrokerError{Code: resp.Code, Remark: resp.Remark}
	}
	var ch header.ChangeInvisibleTimeResponse
	if err := ch.Decode(resp); err != nil {
		return "", fail(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
	}
	ck := popfmt.AppendExtraInfo(nil, rh.CKQueueOffset, ch.PopTime, ch.InvisibleTime, ch.ReviveQid, real, rh.BrokerName, rh.QueueID, rh.MsgQueueOffset)
	return string(ck) + " " + strconv.FormatInt(rh.commitLogOffset, 10), nil
}

// ForwardMessageToDeadLetterQueue implements MessagingService:
// CONSUMER_SEND_MSG_BACK with delay level -1, then an ack.
func (s *Service) ForwardMessageToDeadLetterQueue(ctx context.Context, req *v2.ForwardMessageToDeadLetterQueueRequest) (*v2.ForwardMessageToDeadLetterQueueResponse, error) {
	m := clientMeta(ctx)
	if err := requireClient(m); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: errStatus(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: errStatus(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: errStatus(err)}, nil
	}
	rh, err := parseHandle(s.takeHandle(m.clientID, req.GetGroup().GetName(), req.GetMessageId(), req.GetReceiptHandle()))
	if err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: errStatus(err)}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	addr, err := s.brokerAddr(c, req.GetTopic().GetName(), rh.BrokerName)
	if err != nil {
		return &v2.ForwardMessageToDeadLetterQueueResponse{Status: errStatus(err)}, nil
	}
	st := s.toDLQ(c, addr, rh, req.GetMessageId(), req.GetGroup().GetName(), req.GetTopic().GetName())
	return &v2.ForwardMessageToDeadLetterQueueResponse{Status: st}, nil
}

// toDLQ is ProducerProcessor.forwardMessageToDeadLetterQueue.
func (s *Service) toDLQ(ctx context.Context, addr string, rh receiptHandle, msgID, group, topic string) *v2.Status {
	if rh.commitLogOffset < 0 {
		return newStatus(v2.Code_INVALID_RECEIPT_HANDLE, "commit log offset is empty")
	}
	h := header.ConsumerSendMsgBackRequest{Offset: rh.commitLogOffset, Group: group, DelayLevel: -1,
		OriginMsgID: msgID, OriginTopic: popfmt.RealTopic(topic, group, rh.Retry), MaxReconsumeTimes: 0, Bname: rh.BrokerName}
	resp, err := s.backend.Invoke(ctx, addr, newRequest(codec.ReqConsumerSendMsgBack, &h))
	if err != nil {
		return errStatus(err)
	}
	if resp.Code == int32(codec.RespSuccess) {
		if err := s.ack(ctx, rh, group, topic); err != nil {
			s.log.Warn("grpc proxy: ack after DLQ forward failed", "topic", topic, "group", group, "err", err)
		}
	}
	return remotingStatus(resp.Code, resp.Remark)
}

// takeHandle stops the auto-renew of a handle the client acks, nacks or
// forwards and returns the handle to send: the latest renewal's.
func (s *Service) takeHandle(clientID, group, msgID, handle string) string {
	if s.renew == nil {
		return handle
	}
	return s.renew.take(clientID, group, msgID, handle)
}

// changeHandle is changeInvisible on a handle string (the renewer's).
func (s *Service) changeHandle(ctx context.Context, handle, group, topic string, d time.Duration) (string, error) {
	rh, err := parseHandle(handle)
	if err != nil {
		return "", err
	}
	return s.changeInvisible(ctx, rh, group, topic, d)
}
