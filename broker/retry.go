package broker

import (
	"log/slog"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// retryProcessor serves CONSUMER_SEND_MSG_BACK: a consumer hands back a
// message it failed to consume; it goes to %RETRY%<group> with a delay, or
// to %DLQ%<group> once retries are exhausted.
type retryProcessor struct {
	cfg       *Config
	live      *liveConfig
	store     MessageStore
	topics    *topicTable
	groups    *groupTable
	delays    *delayTable
	role      *roleState // a slave refuses (nil: always a master)
	storeHost *hostBox
	stats     *brokerStats // SNDBCK_PUT_NUMS (nil in tests)
	dlq       *txnMetrics  // rocketmq_send_to_dlq_messages_total; nil with metrics off
	log       *slog.Logger
}

func (p *retryProcessor) sendBack(c *transport.Conn, req *codec.Frame) *codec.Frame {
	if p.role != nil && p.role.IsSlave() {
		// compat: CONSUMER_SEND_MSG_BACK is SendMessageProcessor's in Java,
		// whose rejectRequest refuses it on a slave.
		return rejectSlave(req)
	}
	var h header.ConsumerSendMsgBackRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group := h.Group
	sg, ok := p.groups.find(group)
	if !ok {
		return errResp(req, codec.RespSubscriptionGroupNotExist, remarks.SubscriptionGroupNotExistSend(group))
	}
	if p.live.perm.Load()&body.PermWrite == 0 {
		return errResp(req, codec.RespNoPermission, remarks.BrokerSendForbidden(p.cfg.BrokerIP1))
	}
	if sg.RetryQueueNums <= 0 {
		return codec.NewResponse(req, int32(codec.RespSuccess), "")
	}
	var sysFlag int32
	if h.UnitMode {
		sysFlag = 2
	}
	topic := RetryGroupPrefix + group
	tc := p.topics.createIfAbsent(topic, sg.RetryQueueNums, body.PermWrite|body.PermRead, sysFlag)
	// Like Java, a random retry queue of the group's; within the topic's
	// queues, which maxTopicQueueNums may have capped.
	queueID := rand.Int32N(max(min(sg.RetryQueueNums, tc.WriteQueueNums), 1))
	if tc.Perm&body.PermWrite == 0 {
		return errResp(req, codec.RespNoPermission, remarks.TopicSendForbidden(topic))
	}
	offset := h.Offset
	rec, err := p.store.ReadRecord(offset, 0)
	var e message.Ext
	if err == nil {
		err = message.Decode(rec, &e)
	}
	if err != nil {
		return errResp(req, codec.RespSystemError, remarks.LookMessageByOffsetFailed(offset))
	}
	props := e.Properties
	backTopic := e.Topic // Java's incSendBackNums key: the original topic
	if rt, ok := message.Property(props, message.PropertyRetryTopic); ok {
		backTopic = strings.Clone(rt)
	}
	if _, ok := message.Property(props, message.PropertyRetryTopic); !ok {
		props = message.SetProperty(props, message.PropertyRetryTopic, e.Topic)
	}
	props = message.SetProperty(props, message.PropertyWaitStoreMsgOK, "false")

	delayLevel := h.DelayLevel
	maxTimes := sg.RetryMaxTimes
	if _, ok := req.Get("maxReconsumeTimes"); ok && req.Version >= versionV3_4_9 {
		maxTimes = h.MaxReconsumeTimes
	}
	if e.ReconsumeTimes >= maxTimes || delayLevel < 0 {
		p.dlq.onDLQ(group, h.OriginTopic) // Java's labels: the group and the header's originTopic
		topic = DLQGroupPrefix + group
		queueID = 0
		p.topics.createIfAbsent(topic, 1, body.PermWrite|body.PermRead, 0)
		props = message.SetProperty(props, message.PropertyDelayLevel, "0")
	} else {
		if delayLevel == 0 {
			delayLevel = 3 + e.ReconsumeTimes
		}
		props = message.SetProperty(props, message.PropertyDelayLevel, strconv.Itoa(int(delayLevel)))
	}
	if _, ok := message.Property(props, message.PropertyOriginMessageID); !ok {
		props = message.SetProperty(props, message.PropertyOriginMessageID, message.OffsetMsgID(e.StoreHost, e.PhysicalOffset))
	}
	tags, _ := message.Property(props, message.PropertyTags)
	m := &message.Message{
		Topic: topic, QueueID: queueID, Flag: e.Flag,
		Body:          append([]byte(nil), e.Body...),
		Properties:    props,
		BornTimestamp: e.BornTimestamp, BornHost: e.BornHost, StoreHost: p.storeHost.get(),
		SysFlag: e.SysFlag, ReconsumeTimes: e.ReconsumeTimes + 1, TagsCode: message.TagsHash(tags),
	}
	p.delays.schedule(m)
	p.store.Put(m, func(r store.PutResult) {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		if !putStored(r.Status) {
			resp = errResp(req, codec.RespSystemError, r.Status.String())
		} else if p.stats != nil {
			p.stats.onSendBack(group, backTopic)
		}
		if err := c.Reply(req, resp); err != nil {
			p.log.Debug("send back: write response", "err", err)
		}
	})
	return nil
}
