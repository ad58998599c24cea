package broker

import (
	"time"

	"github.com/rocketgo/rocketgo/broker/popfmt"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// ack is ACK_MESSAGE (Java AckMessageProcessor): an AckMsg record goes to
// the revive log queue the extraInfo names; an orderly pop's ack (reviveQid
// 999) moves the order state instead. The request is leased: nothing of it
// is kept past the return (the tables it touches copy their keys).
func (p *popProcessor) ack(c *transport.Conn, req *codec.Frame, _ *transport.Lease) *codec.Frame {
	var h header.AckMessageRequest
	if r := headerFailure(req, h.Decode(req)); r != nil { // concrete call: h stays on the stack
		return r
	}
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		return errResp(req, codec.RespTopicNotExist, remarks.AckTopicNotExist(h.Topic))
	}
	if h.QueueID >= tc.ReadQueueNums || h.QueueID < 0 {
		return errResp(req, codec.RespMessageIllegal, remarks.AckQueueIllegal(h.QueueID, h.Topic, tc.ReadQueueNums, c.RemoteAddr()))
	}
	minOff, maxOff := p.store.MinOffset(h.Topic, h.QueueID), p.store.MaxOffset(h.Topic, h.QueueID)
	if h.Offset < minOff || h.Offset > maxOff {
		return errResp(req, codec.RespNoMessage, remarks.AckCommitOffsetIllegal(h.Topic, h.QueueID, h.Offset, minOff, maxOff))
	}
	ei, err := popfmt.ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return errResp(req, codec.RespMessageIllegal, remarks.ExtraInfoIllegal(h.ExtraInfo))
	}
	rb := p.takeBuf()
	defer p.bufs.Put(rb)
	if ei.ReviveQid == popfmt.OrderReviveQueue {
		p.ackOrderly(h.Topic, h.ConsumerGroup, h.QueueID, h.Offset)
		p.replyOK(c, req, rb)
		return nil
	}
	a := popfmt.AckMsg{AckOffset: h.Offset, StartOffset: ei.CKQueueOffset, ConsumerGroup: h.ConsumerGroup, Topic: h.Topic,
		QueueID: h.QueueID, PopTime: ei.PopTime, BrokerName: ei.BrokerName, DeliverTime: ei.PopTime + ei.InvisibleTime}
	if ei.ReviveQid < 0 || ei.ReviveQid >= p.reviveQueue || !p.putAckWith(rb, &a, ei.ReviveQid) {
		return errResp(req, codec.RespSystemError, remarks.PutAckMsgError)
	}
	p.replyOK(c, req, rb)
	return nil
}

// putAck appends a to the revive log queue reviveQid and waits for the put.
func (p *popProcessor) putAck(a *popfmt.AckMsg, reviveQid int32) bool {
	if reviveQid < 0 || reviveQid >= p.reviveQueue {
		return false
	}
	rb := p.takeBuf()
	ok := p.putAckWith(rb, a, reviveQid)
	p.bufs.Put(rb)
	return ok
}

// takeBuf returns a pooled reviveBuf; it goes back with p.bufs.Put.
func (p *popProcessor) takeBuf() *reviveBuf {
	rb, _ := p.bufs.Get().(*reviveBuf)
	if rb == nil {
		rb = new(reviveBuf)
	}
	return rb
}

// replyOK writes an empty SUCCESS for req from rb's frame: a returned (or
// Reply'd) fresh frame escapes, a pooled one costs nothing
// (TestAckRoundTripAllocs).
func (p *popProcessor) replyOK(c *transport.Conn, req *codec.Frame, rb *reviveBuf) {
	rb.resp = codec.Frame{Code: int32(codec.RespSuccess), Language: codec.LangJava, Version: codec.ServerVersion,
		Opaque: req.Opaque, Flag: codec.FlagResponse}
	if err := c.Reply(req, &rb.resp); err != nil {
		p.log.Debug("ack: write response", "remote", c.RemoteAddr(), "err", err)
	}
	rb.resp = codec.Frame{}
}

// batchAck is BATCH_ACK_MESSAGE: one BatchAckMsg per entry; offsets outside
// the queue are skipped as Java does. Leased like ack: the body is decoded
// in place (its strings alias the request) into the pooled rb.batch.
func (p *popProcessor) batchAck(c *transport.Conn, req *codec.Frame, _ *transport.Lease) *codec.Frame {
	rb := p.takeBuf()
	defer p.putBatchBuf(rb)
	body := &rb.batch
	if err := popfmt.DecodeBatchAckBodyInto(req.Body, body); err != nil || len(body.Acks) == 0 {
		return errResp(req, codec.RespNoMessage, "")
	}
	for i := range body.Acks {
		b := &body.Acks[i]
		topic := b.Topic
		if m := retryByte(b.Retry); m != '0' {
			rb.topic = popfmt.AppendRealTopic(rb.topic[:0], b.Topic, b.ConsumerGroup, m)
			topic = bytesString(rb.topic) // this entry's only: every use below copies it
		}
		minOff, maxOff := p.store.MinOffset(topic, b.QueueID), p.store.MaxOffset(topic, b.QueueID)
		list := rb.list[:0]
		for j, by := range b.BitSet {
			for k := 0; by != 0 && k < 8; k++ {
				if by&(1<<k) == 0 {
					continue
				}
				off := b.StartOffset + int64(j*8+k)
				if off < minOff || off > maxOff {
					continue
				}
				if b.ReviveQueueID == popfmt.OrderReviveQueue {
					p.ackOrderly(topic, b.ConsumerGroup, b.QueueID, off)
					continue
				}
				list = append(list, off)
			}
		}
		rb.list = list
		if b.ReviveQueueID == popfmt.OrderReviveQueue || len(list) == 0 {
			continue
		}
		a := popfmt.AckMsg{AckOffset: -1, StartOffset: b.StartOffset, ConsumerGroup: b.ConsumerGroup, Topic: topic,
			QueueID: b.QueueID, PopTime: b.PopTime, BrokerName: body.BrokerName, AckOffsetList: list,
			DeliverTime: b.PopTime + b.InvisibleTime}
		if b.ReviveQueueID >= 0 && b.ReviveQueueID < p.reviveQueue {
			p.putAckWith(rb, &a, b.ReviveQueueID)
		}
	}
	p.replyOK(c, req, rb)
	return nil
}

// putBatchBuf drops rb.batch's aliases of the request (its Acks and their
// BitSets stay as room) and returns rb to the pool.
func (p *popProcessor) putBatchBuf(rb *reviveBuf) {
	acks := rb.batch.Acks
	for i := range acks {
		acks[i] = popfmt.BatchAck{BitSet: acks[i].BitSet[:0]}
	}
	rb.batch = popfmt.BatchAckBody{Acks: acks[:0]}
	p.bufs.Put(rb)
}

func retryByte(s string) byte {
	if s == "" {
		return '0'
	}
	return s[0]
}

// changeInvisible is CHANGE_MESSAGE_INVISIBLETIME (Java
// ChangeInvisibleTimeProcessor): a new one-message checkpoint from now,
// then an ack of the original.
func (p *popProcessor) changeInvisible(c *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ChangeInvisibleTimeRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	tc, ok := p.topics.get(h.Topic)
	if !ok {
		return errResp(req, codec.RespTopicNotExist, remarks.AckTopicNotExist(h.Topic))
	}
	if h.QueueID >= tc.ReadQueueNums || h.QueueID < 0 {
		return errResp(req, codec.RespMessageIllegal, remarks.AckQueueIllegal(h.QueueID, h.Topic, tc.ReadQueueNums, c.RemoteAddr()))
	}
	minOff, maxOff := p.store.MinOffset(h.Topic, h.QueueID), p.store.MaxOffset(h.Topic, h.QueueID)
	if h.Offset < minOff || h.Offset >= maxOff {
		return errResp(req, codec.RespNoMessage, "")
	}
	ei, err := popfmt.ParseExtraInfo(h.ExtraInfo)
	if err != nil {
		return errResp(req, codec.RespMessageIllegal, remarks.ExtraInfoIllegal(h.ExtraInfo))
	}
	// ours: a change in the pop's own millisecond would give the new
	// checkpoint the original's identity (Java's merge key includes the
	// pop time), and the ack of the original would close both.
	now := max(time.Now().UnixMilli(), ei.PopTime+1)
	if ei.ReviveQid == popfmt.OrderReviveQueue {
		// Orderly: the batch stays locked for the new time.
		p.orders.extend(popKey{h.Topic, h.ConsumerGroup, h.QueueID}, now, h.InvisibleTime)
	} else {
		ck := popfmt.CheckPoint{StartOffset: h.Offset, PopTime: now, InvisibleTime: h.InvisibleTime, Num: 1, QueueID: h.QueueID,
			Topic: h.Topic, CID: h.ConsumerGroup, Diff: []int32{0}, BrokerName: ei.BrokerName}
		rb := p.takeBuf()
		ok := p.putReviveWith(rb, &ck, ei.ReviveQid)
		p.bufs.Put(rb)
		if !ok {
			return errResp(req, codec.RespSystemError, "")
		}
		a := popfmt.AckMsg{AckOffset: h.Offset, StartOffset: ei.CKQueueOffset, ConsumerGroup: h.ConsumerGroup, Topic: h.Topic,
			QueueID: h.QueueID, PopTime: ei.PopTime, BrokerName: ei.BrokerName, DeliverTime: ei.PopTime + ei.InvisibleTime}
		p.putAck(&a, ei.ReviveQid)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	rh := header.ChangeInvisibleTimeResponse{PopTime: now, InvisibleTime: h.InvisibleTime, ReviveQid: ei.ReviveQid}
	rh.Encode(resp)
	return resp
}
