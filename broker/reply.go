package broker

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// replyProcessor serves SEND_REPLY_MESSAGE(_V2): the reply of a
// request/reply exchange is pushed to the requesting client
// (PUSH_REPLY_MESSAGE_TO_CLIENT) and stored in <cluster>_REPLY_TOPIC
// (Java ReplyMessageProcessor, storeReplyMessageEnable=true).
type replyProcessor struct {
	send      *sendProcessor
	clients   *clientManager
	storeHost *hostBox
	log       *slog.Logger
}

func (p *replyProcessor) handle(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h sendHeader
	if r := h.decode(req); r != nil {
		return r
	}
	tc, resp := p.send.check(c, req, &h)
	if resp != nil {
		return resp
	}
	queueID := h.QueueID
	if queueID < 0 {
		queueID = rand.Int32N(max(tc.WriteQueueNums, 1))
	}
	// Like Java: the broker's region and trace switch join the properties
	// both pushed and stored.
	h.Properties = string(p.send.appendBrokerProps(nil, h.Properties))
	props := h.Properties
	pushErr := p.push(c, &h, req.Body)
	if pushErr != "" {
		return p.withRegion(codec.NewResponse(req, int32(codec.RespSystemError), pushErr))
	}
	tags, _ := message.Property(props, message.PropertyTags)
	m := &message.Message{
		Topic: h.Topic, QueueID: queueID, Flag: h.Flag, Body: req.Body, Properties: props,
		BornTimestamp: h.BornTimestamp, BornHost: parseAddrPort(c.RemoteAddr()), StoreHost: p.storeHost.get(),
		SysFlag: h.SysFlag, ReconsumeTimes: h.ReconsumeTimes, TagsCode: message.TagsHash(tags),
	}
	done := make(chan store.PutResult, 1)
	p.send.store.Put(m, func(r store.PutResult) { done <- r })
	return p.send.putResponse(req, <-done, queueID, "", nil)
}

func (p *replyProcessor) withRegion(f *codec.Frame) *codec.Frame {
	f.Set("MSG_REGION", p.send.cfg.RegionID)
	f.Set("TRACE_ON", strconv.FormatBool(p.send.cfg.TraceOn))
	return f
}

// push hands the reply to the client named by REPLY_TO_CLIENT; it returns
// Java's remark on failure, "" on success.
func (p *replyProcessor) push(c *transport.Conn, h *sendHeader, payload []byte) string {
	sender, ok := message.Property(h.Properties, message.PropertyMessageReplyToClient)
	if !ok || sender == "" {
		return remarks.ReplyToClientNull(message.PropertyMessageReplyToClient)
	}
	conn := p.clients.findProducerByClientID(sender)
	if conn == nil {
		return remarks.PushReplyChannelNotFound(sender)
	}
	props := message.SetProperty(h.Properties, message.PropertyPushReplyTime, strconv.FormatInt(time.Now().UnixMilli(), 10))
	req := &codec.Frame{Code: int32(codec.ReqPushReplyMessageToClient), Language: codec.LangJava, Version: codec.ServerVersion, Body: payload}
	req.Ext = []codec.KV{
		{Key: "bornHost", Value: c.RemoteAddr()},
		{Key: "storeHost", Value: p.storeHost.get().String()},
		{Key: "storeTimestamp", Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
		{Key: "producerGroup", Value: h.ProducerGroup},
		{Key: "topic", Value: h.Topic},
		{Key: "defaultTopic", Value: h.DefaultTopic},
		{Key: "defaultTopicQueueNums", Value: strconv.Itoa(int(h.DefaultTopicQueueNums))},
		{Key: "queueId", Value: strconv.Itoa(int(h.QueueID))},
		{Key: "sysFlag", Value: strconv.Itoa(int(h.SysFlag))},
		{Key: "bornTimestamp", Value: strconv.FormatInt(h.BornTimestamp, 10)},
		{Key: "flag", Value: strconv.Itoa(int(h.Flag))},
		{Key: "properties", Value: props},
		{Key: "reconsumeTimes", Value: strconv.Itoa(int(h.ReconsumeTimes))},
		{Key: "unitMode", Value: strconv.FormatBool(h.UnitMode)},
	}
	ctx, cancel := context.WithTimeout(context.Background(), callClientTimeout)
	defer cancel()
	resp, err := conn.Invoke(ctx, req)
	if err != nil || resp.Code != int32(codec.RespSuccess) {
		p.log.Warn("push reply message failed", "client", sender, "err", err)
		return remarks.PushReplyFailed(sender)
	}
	return ""
}
