package broker

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// defaultQueryMaxNum is Java's defaultQueryMaxNum, used for unique-key
// queries.
const defaultQueryMaxNum = 32

// maxQueryReplyBody bounds a QUERY_MESSAGE reply's body: the records
// that fit in one frame a client accepts (Java's frameMaxLength, less
// room for the header). compat: Java has no byte bound; its reply past
// the frame limit is refused by the client's decoder anyway.
const maxQueryReplyBody = codec.DefaultMaxFrameLength - 64<<10

// queryProcessor serves QUERY_MESSAGE and VIEW_MESSAGE_BY_ID.
type queryProcessor struct {
	store MessageStore
	log   *slog.Logger
	// maxBatch caps a query's maxNum (maxMsgsNumBatch; Java
	// IndexService.queryOffset); <= 0 means Java's 64.
	maxBatch int
}

func (p *queryProcessor) queryMessage(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryMessageRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	topic, key := h.Topic, h.Key
	maxNum := int(h.MaxNum)
	if h.UniqueKeyQuery || maxNum <= 0 {
		maxNum = defaultQueryMaxNum
	}
	limit := p.maxBatch
	if limit <= 0 {
		limit = 64
	}
	maxNum = min(maxNum, limit)
	begin, end := h.BeginTimestamp, h.EndTimestamp
	if end <= 0 {
		end = time.Now().UnixMilli()
	}
	offs, err := p.store.QueryByKey(topic, key, maxNum, begin, end)
	if err != nil {
		p.log.Warn("query message by key", "topic", topic, "key", key, "err", err)
	}
	var out []byte
	for _, off := range offs {
		rec, err := p.store.ReadRecord(off, 0)
		if err != nil {
			continue
		}
		if len(out) > 0 && len(out)+len(rec) > maxQueryReplyBody {
			break // the first record always goes; the rest while they fit
		}
		out = append(out, rec...)
	}
	if len(out) == 0 {
		return codec.NewResponse(req, int32(codec.RespQueryNotFound), remarks.MessageNotFoundTimeRange)
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Ext = []codec.KV{
		{Key: "indexLastUpdateTimestamp", Value: strconv.FormatInt(time.Now().UnixMilli(), 10)},
		{Key: "indexLastUpdatePhyoffset", Value: strconv.FormatInt(p.store.MaxPhyOffset(), 10)},
	}
	resp.Body = out
	return resp
}

func (p *queryProcessor) viewMessageByID(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.ViewMessageRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	off := h.Offset
	rec, err := p.store.ReadRecord(off, 0)
	if err != nil || len(rec) == 0 {
		return codec.NewResponse(req, int32(codec.RespSystemError), remarks.MessageNotFoundByOffset(off))
	}
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = rec
	return resp
}
