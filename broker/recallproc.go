package broker

import (
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/broker/recall"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// recallTag is the tag of a recall's delete marker (Java's
// RECALL_MESSAGE_TAG).
const recallTag = "_RECALL_TAG_"

// recallProcessor serves RECALL_MESSAGE (Java 5.3's RecallMessageProcessor):
// it checks the handle a timer message's send response carried
// (package recall) and stores a delete marker for it, a timer record of
// the same topic and due time with TIMER_DEL_UNIQKEY = "topic+uniqKey".
// The timer wheel chains the marker into the message's slot and drops the
// message when the slot is delivered (timer.go), so the recall survives a
// restart as any timer record does. Like Java it does not look for the
// message: a well-formed handle of this broker whose time is still ahead
// is answered SUCCESS whether or not such a timer exists.
type recallProcessor struct {
	cfg       *Config
	live      *liveConfig
	role      *roleState // nil: always a master
	topics    *topicTable
	store     MessageStore
	storeHost *hostBox
	now       func() time.Time
}

func (p *recallProcessor) handle(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.RecallMessageRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	code, remark, msgID := p.recall(c, &h)
	resp := codec.NewResponse(req, int32(code), remark)
	resp.Set("MSG_REGION", p.cfg.RegionID)
	if code == codec.RespSuccess {
		resp.Set("msgId", msgID)
	}
	return resp
}

// recall runs Java's checks in Java's order and stores the marker.
func (p *recallProcessor) recall(c *transport.Conn, h *header.RecallMessageRequest) (codec.ResponseCode, string, string) {
	if !p.live.recallEnable.Load() {
		return codec.RespNoPermission, remarks.RecallForbidden, ""
	}
	if p.role != nil && p.role.IsSlave() {
		return codec.RespSlaveNotAvailable, remarks.RecallNotAvailable, ""
	}
	if p.live.perm.Load()&body.PermWrite == 0 && !p.live.recallWhenNotWritable.Load() {
		return codec.RespServiceNotAvailable, remarks.RecallNotAvailable, ""
	}
	if _, ok := p.topics.get(h.Topic); !ok {
		return codec.RespTopicNotExist, remarks.RecallTopicNotExist(h.Topic), ""
	}
	hd, err := recall.Decode(h.RecallHandle)
	if err != nil {
		return codec.RespIllegalOperation, err.Error(), ""
	}
	if hd.Topic != h.Topic {
		return codec.RespIllegalOperation, remarks.RecallTopicNotMatch, ""
	}
	if hd.BrokerName != p.cfg.BrokerName {
		return codec.RespIllegalOperation, remarks.RecallNotAvailable, ""
	}
	now := p.now().UnixMilli()
	ts := hd.TimestampMs()
	if left := ts - now; left <= 0 || left >= timerMaxDelayMs(p.cfg) {
		return codec.RespIllegalOperation, remarks.RecallTimestampBad, ""
	}
	m := p.marker(c, h, &hd, now)
	// Like Java's putMessage hook: the marker becomes a timer record.
	if code, _ := scheduleTimer(p.cfg, &m, now); code != codec.RespSuccess || m.Topic != timerTopic {
		return codec.RespSystemError, remarks.RecallExecuteError, ""
	}
	done := make(chan store.PutResult, 1)
	p.store.Put(&m, func(r store.PutResult) { done <- r })
	if r := <-done; !putStored(r.Status) {
		return codec.RespSystemError, remarks.RecallExecuteError, ""
	}
	return codec.RespSuccess, "", hd.MessageID
}

// marker builds the delete record (RecallMessageProcessor.buildMessage).
func (p *recallProcessor) marker(c *transport.Conn, h *header.RecallMessageRequest, hd *recall.Handle, now int64) message.Message {
	born := strconv.FormatInt(now, 10)
	b := make([]byte, 0, 192+2*len(hd.Topic)+len(hd.MessageID)+len(h.ProducerGroup))
	b = message.AppendProperty(b, message.PropertyTags, recallTag)
	b = message.AppendProperty(b, message.PropertyTimerDelUniqKey, hd.Topic+"+"+hd.MessageID)
	b = message.AppendProperty(b, message.PropertyUniqKey, hd.MessageID)
	b = message.AppendProperty(b, message.PropertyTimerDeliverMs, hd.Timestamp)
	b = message.AppendProperty(b, message.PropertyBornTimestamp, born)
	b = message.AppendProperty(b, message.PropertyTraceContext, "")
	if h.ProducerGroup != "" { // Java skips a null property value
		b = message.AppendProperty(b, message.PropertyProducerGroup, h.ProducerGroup)
	}
	return message.Message{
		Topic:         hd.Topic,
		Body:          []byte("0"),
		Properties:    string(b),
		BornTimestamp: now,
		BornHost:      parseAddrPort(c.RemoteAddr()),
		StoreHost:     p.storeHost.get(),
		TagsCode:      message.TagsHash(recallTag),
	}
}
