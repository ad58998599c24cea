package broker

import (
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/message"
	"github.com/rocketgo/rocketgo/store"
)

// MessageStore is what the broker needs from the store; *store.Store
// implements it.
type MessageStore interface {
	Put(m *message.Message, done func(store.PutResult))
	PutBatch(ms []message.Message, done func(store.PutResult))
	GetMessages(topic string, queueID int32, offset int64, maxMsgs, maxBytes int, filter *store.Filter, res *store.GetResult)
	MinOffset(topic string, queueID int32) int64
	MaxOffset(topic string, queueID int32) int64
	OffsetByTime(topic string, queueID int32, ts int64) int64
	EarliestMessageTime(topic string, queueID int32) (int64, error)
	StoreTime(topic string, queueID int32, offset int64) (int64, error)
	ReadRecord(phyOffset int64, size int32) ([]byte, error)
	QueryByKey(topic, key string, max int, begin, end int64) ([]int64, error)
	OnArrival(fn store.ArrivalFunc)
	MaxPhyOffset() int64
	MinPhyOffset() int64
	DeleteTopic(topic string) error
	Close() error
}

// readRecordWait reads the record at phyOffset, waiting up to wait for
// the store to expose it: a record is readable only once dispatched, which
// may trail the send reply a client acts on (END_TRANSACTION right after
// the half message's reply).
func readRecordWait(st MessageStore, phyOffset int64, wait time.Duration) ([]byte, error) {
	deadline := time.Now().Add(wait)
	for {
		rec, err := st.ReadRecord(phyOffset, 0)
		if err == nil || phyOffset >= st.MaxPhyOffset() || time.Now().After(deadline) {
			return rec, err
		}
		time.Sleep(time.Millisecond)
	}
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

func (h *hostBox) set(a netip.AddrPort) { h.p.Store(&a) }
