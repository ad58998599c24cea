package broker

import (
	"encoding/binary"
	"strconv"
	"syscall"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
	"github.com/rocketgo/rocketgo/store"
)

// offsetProcessor serves the consumer-offset and queue-offset requests.
type offsetProcessor struct {
	store   MessageStore
	offsets *offsetTable
	// live gives the in-memory window (accessMessageInMemoryMaxRatio of
	// RAM, liveConfig.inMemoryWindow); without it (tests) inMemory is used.
	live     *liveConfig
	inMemory int64
}

func newOffsetProcessor(st MessageStore, offsets *offsetTable) *offsetProcessor {
	return &offsetProcessor{store: st, offsets: offsets, inMemory: memoryWindow(physicalMemory(), defaultInMemoryRatio)}
}

// window is how far behind the commit-log end a message still counts as
// in page cache.
func (p *offsetProcessor) window() int64 {
	if p.live != nil {
		return p.live.inMemoryWindow()
	}
	return p.inMemory
}

// defaultInMemoryRatio is Java's accessMessageInMemoryMaxRatio default.
const defaultInMemoryRatio = 40

// physicalMemory is the machine's RAM (Java's
// StoreUtil.TOTAL_PHYSICAL_MEMORY_SIZE, 24 GiB when unknown).
func physicalMemory() int64 {
	var si syscall.Sysinfo_t
	if syscall.Sysinfo(&si) == nil && si.Totalram > 0 {
		return int64(si.Totalram) * int64(si.Unit)
	}
	return 24 << 30
}

// memoryWindow is ratio percent of mem, rounded as Java's
// (long) (mem * (ratio / 100.0)): how far behind the commit-log end a
// read still counts as served from page cache. Pulls further back are
// steered to a slave; QUERY_CONSUMER_OFFSET's young-queue rule uses it too.
func memoryWindow(mem int64, ratio int) int64 {
	return int64(float64(mem) * (float64(ratio) / 100.0))
}

// firstInMemory mirrors checkInMemByConsumeOffset(topic, q, 0, 1): the
// queue's message 0 exists and lies within the in-memory window.
func (p *offsetProcessor) firstInMemory(topic string, q int32) bool {
	var res store.GetResult
	p.store.GetMessages(topic, q, 0, 1, 1<<30, nil, &res)
	defer res.Release()
	if res.Status != store.Found || len(res.Records) == 0 || len(res.Records[0]) < message.PosPhysicalOffset+8 {
		return false
	}
	phy := int64(binary.BigEndian.Uint64(res.Records[0][message.PosPhysicalOffset:]))
	return p.store.MaxPhyOffset()-phy <= p.window()
}

// neverWritten reports whether queue q of topic has never held a message:
// its max offset is 0. A put acknowledged but not dispatched yet still
// reads 0 here; answering 0 for it is right too (the consumer starts
// before that message).
func (p *offsetProcessor) neverWritten(topic string, q int32) bool {
	return p.store.MaxOffset(topic, q) <= 0
}

func okWith(req *codec.Frame, key string, v int64) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Ext = []codec.KV{{Key: key, Value: strconv.FormatInt(v, 10)}}
	return resp
}

// queryConsumerOffset answers QUERY_CONSUMER_OFFSET like Java's
// ConsumerManageProcessor: the stored offset, else 0 for a young queue
// whose first message is still at hand, else QUERY_NOT_FOUND.
//
// One deliberate difference from Java 5.x: a queue that never held a
// message also answers 0, as Java 4.9.x does (its check was "message 0 is
// not on disk"; 5.x's "message 0 is in memory" is false for an empty
// queue). For an empty queue 0 is the first, the last and every
// timestamp's offset, so the answer means the same to each
// consumeFromWhere — but QUERY_NOT_FOUND sends a CONSUME_FROM_LAST_OFFSET
// client on to GET_MAX_OFFSET, and a message stored between the two calls
// (a producer sending right after the consumer's start) is skipped: issue
// #19's S1, seen against the Java 5.3.3 broker too.
func (p *offsetProcessor) queryConsumerOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.QueryConsumerOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	group, topic, q := h.ConsumerGroup, h.Topic, h.QueueID
	if off, ok := p.offsets.query(group, topic, q); ok && off >= 0 {
		return okWith(req, "offset", off)
	}
	if !h.SetZeroIfNotFound {
		return codec.NewResponse(req, int32(codec.RespQueryNotFound), remarks.OffsetNotFoundGroupBootFirst)
	}
	if p.store.MinOffset(topic, q) <= 0 && (p.neverWritten(topic, q) || p.firstInMemory(topic, q)) {
		return okWith(req, "offset", 0)
	}
	return codec.NewResponse(req, int32(codec.RespQueryNotFound), remarks.OffsetNotFoundV306)
}

func (p *offsetProcessor) updateConsumerOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.UpdateConsumerOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	p.offsets.commit(h.ConsumerGroup, h.Topic, h.QueueID, h.CommitOffset)
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}

func (p *offsetProcessor) getMaxOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetMaxOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	p.store.AwaitDispatched(dispatchWait)
	return okWith(req, "offset", p.store.MaxOffset(h.Topic, h.QueueID))
}

func (p *offsetProcessor) getMinOffset(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetMinOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	return okWith(req, "offset", p.store.MinOffset(h.Topic, h.QueueID))
}

func (p *offsetProcessor) searchOffsetByTimestamp(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.SearchOffsetRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	return okWith(req, "offset", p.store.OffsetByTime(h.Topic, h.QueueID, h.Timestamp))
}

func (p *offsetProcessor) getEarliestMsgStoretime(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	var h header.GetEarliestMsgStoretimeRequest
	if r := decodeHeader(&h, req); r != nil {
		return r
	}
	ts, err := p.store.EarliestMessageTime(h.Topic, h.QueueID)
	if err != nil {
		ts = -1
	}
	return okWith(req, "timestamp", ts)
}
