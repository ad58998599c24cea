package broker

import (
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// lockEntry is one queue lock held by a client.
type lockEntry struct {
	clientID   string
	lastUpdate time.Time
}

// lockTable is Java's RebalanceLockManager: queue locks for orderly
// consumers, per group, expiring after maxLive unless renewed.
type lockTable struct {
	maxLive time.Duration

	mu    sync.Mutex
	locks map[string]map[body.MessageQueue]*lockEntry // guarded by mu
}

func newLockTable(maxLive time.Duration) *lockTable {
	return &lockTable{maxLive: maxLive, locks: make(map[string]map[body.MessageQueue]*lockEntry)}
}

// lock tries to lock every queue for clientID and returns those it holds.
func (l *lockTable) lock(group, clientID string, mqs []body.MessageQueue, now time.Time) []body.MessageQueue {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.locks[group]
	if g == nil {
		g = make(map[body.MessageQueue]*lockEntry)
		l.locks[group] = g
	}
	out := make([]body.MessageQueue, 0, len(mqs))
	for _, mq := range mqs {
		e := g[mq]
		switch {
		case e == nil || now.Sub(e.lastUpdate) > l.maxLive:
			g[mq] = &lockEntry{clientID: clientID, lastUpdate: now}
		case e.clientID == clientID:
			e.lastUpdate = now
		default:
			continue
		}
		out = append(out, mq)
	}
	return out
}

// unlock releases the queues clientID holds.
func (l *lockTable) unlock(group, clientID string, mqs []body.MessageQueue) {
	l.mu.Lock()
	defer l.mu.Unlock()
	g := l.locks[group]
	for _, mq := range mqs {
		if e := g[mq]; e != nil && e.clientID == clientID {
			delete(g, mq)
		}
	}
	if len(g) == 0 {
		delete(l.locks, group)
	}
}

// groupHasLock reports whether group holds any unexpired lock
// (!isLockAllExpired).
func (l *lockTable) groupHasLock(group string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	for _, e := range l.locks[group] {
		if now.Sub(e.lastUpdate) <= l.maxLive {
			return true
		}
	}
	return false
}

// lockProcessor serves LOCK_BATCH_MQ and UNLOCK_BATCH_MQ.
type lockProcessor struct {
	locks *lockTable
}

func (p *lockProcessor) lockBatch(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	r, err := body.DecodeLockBatchRequest(req.Body)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	locked := p.locks.lock(r.ConsumerGroup, r.ClientID, r.MQSet, time.Now())
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Body = body.AppendLockBatchResponse(nil, locked)
	return resp
}

func (p *lockProcessor) unlockBatch(_ *transport.Conn, req *codec.Frame) *codec.Frame {
	r, err := body.DecodeLockBatchRequest(req.Body)
	if err != nil {
		return codec.NewResponse(req, int32(codec.RespSystemError), err.Error())
	}
	p.locks.unlock(r.ConsumerGroup, r.ClientID, r.MQSet)
	return codec.NewResponse(req, int32(codec.RespSuccess), "")
}
