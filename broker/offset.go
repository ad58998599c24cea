package broker

import (
	"strconv"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// offsetProcessor serves the consumer-offset and queue-offset requests.
type offsetProcessor struct {
	store   MessageStore
	offsets *offsetTable
}

func okWith(req *codec.Frame, key string, v int64) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Ext = []codec.KV{{Key: key, Value: strconv.FormatInt(v, 10)}}
	return resp
}

// queryConsumerOffset answers QUERY_CONSUMER_OFFSET like Java's
// ConsumerManageProcessor: the stored offset, else 0 for a young queue
// whose first message is still at hand, else QUERY_NOT_FOUND.
func (p *offsetProcessor) queryConsumerOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	group, topic := req.Value("consumerGroup"), req.Value("topic")
	q := atoi32(req.Value("queueId"))
	if off, ok := p.offsets.query(group, topic, q); ok && off >= 0 {
		return okWith(req, "offset", off)
	}
	if v, ok := req.Get("setZeroIfNotFound"); ok && v == "false" {
		return codec.NewResponse(req, int32(codec.RespQueryNotFound), "Not found, do not set to zero, maybe this group boot first")
	}
	// compat: Java asks whether offset 0 is still in page cache; every
	// message of a queue that still starts at 0 counts as such here.
	if p.store.MinOffset(topic, q) <= 0 && p.store.MaxOffset(topic, q) > 0 {
		return okWith(req, "offset", 0)
	}
	return codec.NewResponse(req, int32(codec.RespQueryNotFound), "Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first")
}

func (p *offsetProcessor) updateConsumerOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	p.offsets.commit(req.Value("consumerGroup"), req.Value("topic"), atoi32(req.Value("queueId")), atoi64(req.Value("commitOffset")))
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (p *offsetProcessor) getMaxOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	return okWith(req, "offset", p.store.MaxOffset(req.Value("topic"), atoi32(req.Value("queueId"))))
}

func (p *offsetProcessor) getMinOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	return okWith(req, "offset", p.store.MinOffset(req.Value("topic"), atoi32(req.Value("queueId"))))
}

func (p *offsetProcessor) searchOffsetByTimestamp(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	return okWith(req, "offset", p.store.OffsetByTime(req.Value("topic"), atoi32(req.Value("queueId")), atoi64(req.Value("timestamp"))))
}

func (p *offsetProcessor) getEarliestMsgStoretime(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	ts, err := p.store.EarliestMessageTime(req.Value("topic"), atoi32(req.Value("queueId")))
	if err != nil {
		ts = -1
	}
	return okWith(req, "timestamp", ts)
}
