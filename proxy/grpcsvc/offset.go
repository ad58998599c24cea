package grpcsvc

import (
	"context"

	"github.com/rocketgo/rocketgo/broker/recall"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	v2 "github.com/rocketgo/rocketgo/proxy/apiv2"
)

// queueAddr validates a request's message queue and returns its broker's
// master address.
func (s *Service) queueAddr(ctx context.Context, mq *v2.MessageQueue) (string, error) {
	if err := validateTopic(mq.GetTopic()); err != nil {
		return "", err
	}
	if mq.GetBroker().GetName() == "" || mq.GetId() < 0 {
		return "", fail(v2.Code_BAD_REQUEST, "message queue must name a broker and a queue id")
	}
	return s.brokerAddr(ctx, mq.GetTopic().GetName(), mq.GetBroker().GetName())
}

// offsetCall sends one offset request and decodes its "offset" field.
func (s *Service) offsetCall(ctx context.Context, addr string, code codec.RequestCode, h encoder) (int64, error) {
	resp, err := s.backend.Invoke(ctx, addr, newRequest(code, h))
	if err != nil {
		return 0, err
	}
	if resp.Code == int32(codec.RespQueryNotFound) {
		return 0, fail(v2.Code_OFFSET_NOT_FOUND, resp.Remark)
	}
	if resp.Code != int32(codec.RespSuccess) {
		return 0, &BrokerError{Code: resp.Code, Remark: resp.Remark}
	}
	var o header.QueryConsumerOffsetResponse // every offset response is {offset}
	if err := o.Decode(resp); err != nil {
		return 0, fail(v2.Code_INTERNAL_SERVER_ERROR, err.Error())
	}
	return o.Offset, nil
}

// GetOffset implements MessagingService: QUERY_CONSUMER_OFFSET.
// (Java's proxy 5.3.3 leaves it unimplemented.)
func (s *Service) GetOffset(ctx context.Context, req *v2.GetOffsetRequest) (*v2.GetOffsetResponse, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return &v2.GetOffsetResponse{Status: errStatus(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.GetOffsetResponse{Status: errStatus(err)}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	mq := req.GetMessageQueue()
	addr, err := s.queueAddr(c, mq)
	if err != nil {
		return &v2.GetOffsetResponse{Status: errStatus(err)}, nil
	}
	off, err := s.offsetCall(c, addr, codec.ReqQueryConsumerOffset, &header.QueryConsumerOffsetRequest{
		ConsumerGroup: req.GetGroup().GetName(), Topic: mq.GetTopic().GetName(), QueueID: mq.GetId(), SetZeroIfNotFound: false, Bname: mq.GetBroker().GetName()})
	if err != nil {
		return &v2.GetOffsetResponse{Status: errStatus(err)}, nil
	}
	return &v2.GetOffsetResponse{Status: okStatus(), Offset: off}, nil
}

// UpdateOffset implements MessagingService: UPDATE_CONSUMER_OFFSET.
func (s *Service) UpdateOffset(ctx context.Context, req *v2.UpdateOffsetRequest) (*v2.UpdateOffsetResponse, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return &v2.UpdateOffsetResponse{Status: errStatus(err)}, nil
	}
	if err := validateGroup(req.GetGroup()); err != nil {
		return &v2.UpdateOffsetResponse{Status: errStatus(err)}, nil
	}
	if req.GetOffset() < 0 {
		return &v2.UpdateOffsetResponse{Status: newStatus(v2.Code_ILLEGAL_OFFSET, "offset cannot be negative")}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	mq := req.GetMessageQueue()
	addr, err := s.queueAddr(c, mq)
	if err != nil {
		return &v2.UpdateOffsetResponse{Status: errStatus(err)}, nil
	}
	h := header.UpdateConsumerOffsetRequest{ConsumerGroup: req.GetGroup().GetName(), Topic: mq.GetTopic().GetName(),
		QueueID: mq.GetId(), CommitOffset: req.GetOffset(), Bname: mq.GetBroker().GetName()}
	resp, err := s.backend.Invoke(c, addr, newRequest(codec.ReqUpdateConsumerOffset, &h))
	if err != nil {
		return &v2.UpdateOffsetResponse{Status: errStatus(err)}, nil
	}
	return &v2.UpdateOffsetResponse{Status: remotingStatus(resp.Code, resp.Remark)}, nil
}

// QueryOffset implements MessagingService: GET_MIN_OFFSET, GET_MAX_OFFSET
// or SEARCH_OFFSET_BY_TIMESTAMP by policy.
func (s *Service) QueryOffset(ctx context.Context, req *v2.QueryOffsetRequest) (*v2.QueryOffsetResponse, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return &v2.QueryOffsetResponse{Status: errStatus(err)}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	mq := req.GetMessageQueue()
	addr, err := s.queueAddr(c, mq)
	if err != nil {
		return &v2.QueryOffsetResponse{Status: errStatus(err)}, nil
	}
	topic, q, bname := mq.GetTopic().GetName(), mq.GetId(), mq.GetBroker().GetName()
	var off int64
	switch req.GetQueryOffsetPolicy() {
	case v2.QueryOffsetPolicy_BEGINNING:
		off, err = s.offsetCall(c, addr, codec.ReqGetMinOffset, &header.GetMinOffsetRequest{Topic: topic, QueueID: q, Bname: bname})
	case v2.QueryOffsetPolicy_END:
		off, err = s.offsetCall(c, addr, codec.ReqGetMaxOffset, &header.GetMaxOffsetRequest{Topic: topic, QueueID: q, Committed: true, Bname: bname})
	case v2.QueryOffsetPolicy_TIMESTAMP:
		if req.Timestamp == nil {
			return &v2.QueryOffsetResponse{Status: newStatus(v2.Code_BAD_REQUEST, "timestamp is required for the TIMESTAMP policy")}, nil
		}
		off, err = s.offsetCall(c, addr, codec.ReqSearchOffsetByTimestamp, &header.SearchOffsetRequest{Topic: topic, QueueID: q,
			Timestamp: req.GetTimestamp().AsTime().UnixMilli(), Bname: bname})
	default:
		return &v2.QueryOffsetResponse{Status: newStatus(v2.Code_BAD_REQUEST, "unknown query offset policy")}, nil
	}
	if err != nil {
		return &v2.QueryOffsetResponse{Status: errStatus(err)}, nil
	}
	return &v2.QueryOffsetResponse{Status: okStatus(), Offset: off}, nil
}

// RecallMessage implements MessagingService: RECALL_MESSAGE to the broker
// the recall handle names (package broker/recall), as Java's
// ProducerProcessor.recallMessage: a handle that does not decode is
// INTERNAL_SERVER_ERROR with the decoder's text, the broker's refusals map
// through RESPONSE_CODE_MAPPING (its ILLEGAL_OPERATION and NO_PERMISSION
// are INTERNAL_SERVER_ERROR with the broker's remark). Like Java's proxy it
// sends no producer group.
func (s *Service) RecallMessage(ctx context.Context, req *v2.RecallMessageRequest) (*v2.RecallMessageResponse, error) {
	if err := requireClient(clientMeta(ctx)); err != nil {
		return &v2.RecallMessageResponse{Status: errStatus(err)}, nil
	}
	if err := validateTopic(req.GetTopic()); err != nil {
		return &v2.RecallMessageResponse{Status: errStatus(err)}, nil
	}
	hd, err := recall.Decode(req.GetRecallHandle())
	if err != nil {
		return &v2.RecallMessageResponse{Status: newStatus(v2.Code_INTERNAL_SERVER_ERROR, err.Error())}, nil
	}
	c, cancel := s.rpcCtx(ctx)
	defer cancel()
	addr, err := s.brokerAddr(c, req.GetTopic().GetName(), hd.BrokerName)
	if err != nil {
		return &v2.RecallMessageResponse{Status: errStatus(err)}, nil
	}
	h := header.RecallMessageRequest{Topic: req.GetTopic().GetName(), RecallHandle: req.GetRecallHandle(), Bname: hd.BrokerName}
	resp, err := s.backend.Invoke(c, addr, newRequest(codec.ReqRecallMessage, &h))
	if err != nil {
		return &v2.RecallMessageResponse{Status: errStatus(err)}, nil
	}
	if resp.Code != int32(codec.RespSuccess) {
		return &v2.RecallMessageResponse{Status: remotingStatus(resp.Code, resp.Remark)}, nil
	}
	var rh header.RecallMessageResponse
	_ = rh.Decode(resp)
	return &v2.RecallMessageResponse{Status: okStatus(), MessageId: rh.MsgID}, nil
}
