package broker

import (
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// NOTIFICATION, POLLING_INFO and PEEK_MESSAGE: the POP family's read-only
// requests (Java NotificationProcessor, PollingInfoProcessor,
// PeekMessageProcessor).

// hasMessage is NOTIFICATION's check (Java's NotificationProcessor.hasMsgFromQueue):
// a queue of the topic or the retry topic past the group's pop offset.
func (p *popProcessor) hasMessage(pr *popRequest) bool {
	h := &pr.nh
	check := func(topic string, q int32) bool {
		off, ok := p.offsets.query(h.ConsumerGroup, topic, q)
		if !ok || off < 0 {
			off = p.store.MinOffset(topic, q)
		}
		return p.store.MaxOffset(topic, q) > off
	}
	all := func(topic string) bool {
		tc, ok := p.topics.get(topic)
		if !ok {
			return false
		}
		for q := int32(0); q < tc.ReadQueueNums; q++ {
			if check(topic, q) {
				return true
			}
		}
		return false
	}
	if h.QueueID < 0 {
		if all(h.Topic) {
			return true
		}
	} else if check(h.Topic, h.QueueID) {
		return true
	}
	for _, rt := range pr.retry {
		if all(rt) {
			return true
		}
	}
	return false
}

// handleNotification is NOTIFICATION's handler (pop pool).
func (p *popProcessor) handleNotification(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	pr := p.alloc(c, req, l)
	pr.notify = true
	if r := headerFailure(req, pr.nh.Decode(req)); r != nil {
		p.reply(pr, r)
		return nil
	}
	h := &pr.nh
	if p.live.perm.Load()&body.PermRead == 0 {
		p.reply(pr, errResp(req, codec.RespNoPermission, remarks.PopForbidden(p.cfg.BrokerIP1)))
		return nil
	}
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		p.reply(pr, errResp(req, codec.RespTopicNotExist, remarks.PullTopicNotExist(h.Topic)))
		return nil
	}
	if h.QueueID >= tc.ReadQueueNums {
		p.reply(pr, errResp(req, codec.RespInvalidParameter, remarks.PopQueueIllegal(h.QueueID, h.Topic, tc.ReadQueueNums, c.RemoteAddr())))
		return nil
	}
	if _, ok := p.groups.find(h.ConsumerGroup); !ok {
		p.reply(pr, errResp(req, codec.RespSubscriptionGroupNotExist, remarks.PopGroupNotExist(h.ConsumerGroup)))
		return nil
	}
	if !h.Order {
		pr.retry = append(pr.retry, p.retryTopic(h.Topic, h.ConsumerGroup))
	}
	p.process(pr, true)
	return nil
}

func (p *popProcessor) replyNotify(pr *popRequest, hasMsg, full bool) {
	resp := codec.NewResponse(pr.req, int32(codec.RespSuccess), "")
	nh := header.NotificationResponse{HasMsg: hasMsg, PollingFull: full}
	nh.Encode(resp)
	p.reply(pr, resp)
}

// pollingInfo is POLLING_INFO: how many requests are held for the queue.
func (p *popProcessor) pollingInfo(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.PollingInfoRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		return errResp(req, codec.RespTopicNotExist, remarks.PullTopicNotExist(h.Topic))
	}
	if h.QueueID >= tc.ReadQueueNums {
		return errResp(req, codec.RespInvalidParameter, remarks.PopQueueIllegal(h.QueueID, h.Topic, tc.ReadQueueNums, c.RemoteAddr()))
	}
	if _, ok := p.groups.find(h.ConsumerGroup); !ok {
		return errResp(req, codec.RespSubscriptionGroupNotExist, remarks.PopGroupNotExist(h.ConsumerGroup))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	ph := header.PollingInfoResponse{PollingNum: int32(p.holds.polling(h.Topic, h.ConsumerGroup, h.QueueID))}
	ph.Encode(resp)
	return resp
}

// peekQueue is Java's peekMsgFromQueue: the records from the group's pop
// offset, with no checkpoint and no offset change.
func (p *popProcessor) peekQueue(pr *popRequest, topic string, q int32, maxMsgs int) int64 {
	if len(pr.records) >= maxMsgs {
		return 0
	}
	off := p.popOffset(topic, pr.h.ConsumerGroup, q, popInitMax, false)
	if pr.nres == len(pr.results) {
		pr.results = append(pr.results, store.GetResult{})
	}
	res := &pr.results[pr.nres]
	pr.nres++
	p.store.GetMessages(topic, q, off, maxMsgs-len(pr.records), int(p.live.maxTransferBytes.Load()), nil, res)
	pr.records = append(pr.records, res.Records...)
	return res.MaxOffset - res.NextBeginOffset
}

// handlePeek is PEEK_MESSAGE (Java PeekMessageProcessor): answers
// SUCCESS with the records or PULL_NOT_FOUND; nothing is held.
func (p *popProcessor) handlePeek(c *transport.Conn, req *codec.Frame, l *transport.Lease) *codec.Frame {
	pr := p.alloc(c, req, l)
	pr.peek = true
	var ph header.PeekMessageRequest
	if r := headerFailure(req, ph.Decode(req)); r != nil {
		p.reply(pr, r)
		return nil
	}
	pr.h = header.PopMessageRequest{ConsumerGroup: ph.ConsumerGroup, Topic: ph.Topic, QueueID: ph.QueueID, MaxMsgNums: ph.MaxMsgNums}
	if p.live.perm.Load()&body.PermRead == 0 {
		p.reply(pr, errResp(req, codec.RespNoPermission, remarks.PeekForbidden(p.cfg.BrokerIP1)))
		return nil
	}
	pr.h.MaxMsgNums = min(max(pr.h.MaxMsgNums, 1), maxPopMsgs)
	if r := p.checkPop(pr); r != nil {
		p.reply(pr, r)
		return nil
	}
	_, rest := p.scan(pr, 0)
	code := codec.RespSuccess
	if len(pr.records) == 0 {
		code = codec.RespPullNotFound
	}
	p.replyPop(pr, code, 0, 0, rest)
	return nil
}
