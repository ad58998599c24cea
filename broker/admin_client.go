package broker

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// callClientTimeout is Broker2Client.callClient's timeout.
const callClientTimeout = 10 * time.Second

// clientStore is what the client admin needs from the store.
type clientStore interface {
	MaxOffset(topic string, queueID int32) int64
	OffsetByTime(topic string, queueID int32, ts int64) int64
	ReadRecord(phyOffset int64, size int32) ([]byte, error)
}

// clientAdmin serves the requests relayed to clients: offset resets,
// running info, consume-message-directly.
type clientAdmin struct {
	role       *roleState // a slave refuses offset resets
	brokerName string
	topics     *topicTable
	groups     *groupTable
	offsets    *offsetTable
	clients    *clientManager
	store      clientStore
	log        *slog.Logger
}

func (a *clientAdmin) register(r *transport.Router, pool *transport.Pool) {
	r.Handle(codec.ReqInvokeBrokerToResetOffset, pool, a.resetOffset)
	r.Handle(codec.ReqGetConsumerRunningInfo, pool, a.consumerRunningInfo)
	r.Handle(codec.ReqConsumeMessageDirectly, pool, a.consumeMessageDirectly)
}

// resetOffset answers INVOKE_BROKER_TO_RESET_OFFSET like Java's
// Broker2Client.resetOffset: compute each queue's offset for the
// timestamp, store it, and push RESET_CONSUMER_CLIENT_OFFSET to every
// online member of the group.
func (a *clientAdmin) resetOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	if a.role.IsSlave() {
		// compat: Java 5.x resets offsets on the server side
		// (useServerSideResetOffset=true), which a slave refuses.
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ResetOffsetInSlave)
	}
	var h header.ResetOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic, group, ts := h.Topic, h.Group, h.Timestamp
	force := h.IsForce
	tc, ok := a.topics.get(topic)
	if !ok {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ResetOffsetNoTopic(topic))
	}
	st := a.store
	offsets := make([]body.QueueOffset, 0, tc.WriteQueueNums)
	for q := int32(0); q < tc.WriteQueueNums; q++ {
		cur, ok := a.offsets.query(group, topic, q)
		if !ok {
			return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ResetOffsetGroupNotExist(group))
		}
		target := st.MaxOffset(topic, q)
		if ts != -1 {
			target = st.OffsetByTime(topic, q, ts)
		}
		if !force && target >= cur {
			target = cur
		}
		offsets = append(offsets, body.QueueOffset{MQ: body.MessageQueue{Topic: topic, BrokerName: a.brokerName, QueueID: q}, Offset: target})
	}
	resetBody := body.AppendResetOffsetBody(nil, offsets)
	conns := a.clients.consumerConns(group)
	if len(conns) == 0 {
		return codec.NewResponse(req, int32(codec.RespConsumerNotOnline),
			remarks.ResetOffsetConsumerNotOnline(group, topic, ts))
	}
	for _, o := range offsets {
		a.offsets.commit(group, topic, o.MQ.QueueID, o.Offset)
	}
	for _, c := range conns {
		push := &codec.Frame{Code: int32(codec.ReqResetConsumerClientOffset), Language: codec.LangJava, Version: codec.ServerVersion, Body: resetBody}
		push.Ext = []codec.KV{{Key: "topic", Value: topic}, {Key: "group", Value: group}, {Key: "timestamp", Value: strconv.FormatInt(ts, 10)}, {Key: "isForce", Value: strconv.FormatBool(force)}}
		if err := c.InvokeOneway(push); err != nil {
			a.log.Warn("reset offset push failed", "group", group, "remote", c.RemoteAddr(), "err", err)
		}
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = resetBody
	return resp
}

func (a *clientAdmin) consumerRunningInfo(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetConsumerRunningInfoRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	return a.callConsumer(codec.ReqGetConsumerRunningInfo, req, h.ConsumerGroup, h.ClientID, req.Body)
}

// consumeMessageDirectly relays CONSUME_MESSAGE_DIRECTLY to the client with
// the message (found by its offset id) as the body.
func (a *clientAdmin) consumeMessageDirectly(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ConsumeMessageDirectlyResultRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	req.Set("brokerName", a.brokerName)
	if topic := h.Topic; topic != "" {
		if tc, ok := a.topics.get(topic); ok {
			req.Set("topicSysFlag", strconv.Itoa(int(tc.TopicSysFlag)))
		}
	}
	group := h.ConsumerGroup
	if sg, ok := a.groups.get(group); ok {
		req.Set("groupSysFlag", strconv.Itoa(int(sg.GroupSysFlag)))
	}
	var msg []byte
	if _, phy, err := message.DecodeOffsetMsgID(h.MsgID); err == nil {
		msg, _ = a.store.ReadRecord(phy, 0)
	}
	return a.callConsumer(codec.ReqConsumeMessageDirectly, req, group, h.ClientID, msg)
}

// callConsumer forwards a request to one client and relays its answer
// unchanged (AdminBrokerProcessor.callConsumer).
func (a *clientAdmin) callConsumer(code codec.RequestCode, req *codec.Frame, group, clientID string, payload []byte) *codec.Frame {
	conn := a.clients.findConsumer(group, clientID)
	if conn == nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.ConsumerNotOnline(group, clientID))
	}
	fwd := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion, Ext: append([]codec.KV(nil), req.Ext...), Body: payload}
	ctx, cancel := context.WithTimeout(context.Background(), callClientTimeout)
	defer cancel()
	resp, err := conn.Invoke(ctx, fwd)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return codec.NewResponse(req, int32(codec.RespConsumeMsgTimeout), remarks.ConsumerTimeout(group, clientID, err.Error()))
		}
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.InvokeConsumerException(group, clientID, err.Error()))
	}
	out := codec.NewResponse(req, resp.Code, resp.Remark)
	out.Ext = resp.Ext
	out.Body = resp.Body
	return out
}
