package broker

import (
	"github.com/rocketgo/rocketgo/store/iolane"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

// MessageStore is what the broker needs from the store; *store.Store
// implements it.
type MessageStore interface {
	// BackgroundIO is the lane periodic disk writers take turns on
	// (store/iolane).
	BackgroundIO() *iolane.Lane
	Put(m *message.Message, done func(store.PutResult))
	PutBatch(ms []message.Message, done func(store.PutResult))
	GetMessages(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter *store.Filter, res *store.GetResult)
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	// AwaitDispatched waits (bounded) until every put confirmed so far is
	// in its consume queue: offset readers see acknowledged sends.
	AwaitDispatched(timeout time.Duration) bool
	OffsetByTime(topic string, queueID int32, ts int64) int64
	EarliestMessageTime(topic string, queueID int32) (int64, error)
	StoreTime(topic string, queueID int32, offset int64) (int64, error)
	// ReadRecord reads a record by commit-log offset; one whose put has
	// completed is readable at once, dispatched or not.
	ReadRecord(phyOffset int64, size int32) ([]byte, error)
	QueryByKey(topic, key string, max int, begin, end int64) ([]int64, error)
	ConsumeQueueUnits(topic string, qid int32, from int64, max int, dst []store.CQUnit) ([]store.CQUnit, bool)
	OnArrival(fn store.ArrivalFunc)
	MaxPhyOffset() int64
	MinPhyOffset() int64
	DeleteTopic(topic string) error
	Close() error
}

// hostBox holds the broker's advertised ip:port, the store host of every
// record; the port is known only once the listener is bound, after the
// processors exist.
type hostBox struct {
	p atomic.Pointer[netip.AddrPort]
}

func (h *hostBox) get() netip.AddrPort {
	if p := h.p.Load(); p != nil {
		return *p
	}
	return netip.AddrPort{}
}

// dispatchWait bounds how long an offset reader waits for the dispatcher
// to reach the puts already acknowledged (MessageStore.AwaitDispatched).
const dispatchWait = time.Second

func (h *hostBox) set(a netip.AddrPort) { h.p.Store(&a) }
