package broker

import (
	"strings"
	"sync"
)

// popOrder is one orderly pop's in-flight batch of a queue.
type popOrder struct {
	attempt        string
	popTime, invis int64
	offsets        []int64
	acked          []bool
	count          int // how often this batch was popped again
}

// popOrders is a simplified ConsumerOrderInfoManager: per (topic, group,
// queue) at most one batch is in flight. A queue is blocked while its
// batch is neither fully acked nor past its invisible time (a pop with the
// batch's attemptId is let through, as Java's retried attempt is). The
// group's offset stays at the batch start until every message is acked;
// an expired batch is popped again from there (same messages, same order).
// Not persisted: after a restart an orderly queue is popped again from its
// committed offset.
type popOrders struct {
	mu sync.Mutex
	m  map[popKey]*popOrder // guarded by mu
}

func newPopOrders() *popOrders { return &popOrders{m: make(map[popKey]*popOrder)} }

func (o *popOrders) blocked(k popKey, attempt string, now int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.m[k]
	if e == nil {
		return false
	}
	if now >= e.popTime+e.invis {
		return false
	}
	return attempt == "" || attempt != e.attempt
}

func (o *popOrders) update(k popKey, attempt string, popTime, invis int64, offsets []int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.m[k]
	if e == nil {
		e = &popOrder{}
		o.m[popKey{strings.Clone(k.topic), strings.Clone(k.group), k.queue}] = e
	} else if len(offsets) > 0 && len(e.offsets) > 0 && e.offsets[0] == offsets[0] {
		e.count++
	} else {
		e.count = 0
	}
	e.attempt = strings.Clone(attempt)
	e.popTime, e.invis = popTime, invis
	e.offsets = append(e.offsets[:0], offsets...)
	e.acked = make([]bool, len(offsets))
}

func (o *popOrders) extend(k popKey, now, invis int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if e := o.m[k]; e != nil {
		e.popTime, e.invis = now, invis
	}
}

// ack marks offset; when the batch is complete it returns the offset the
// group consumes from next.
func (o *popOrders) ack(k popKey, offset int64) (int64, bool) {
	o.mu.Lock()
	defer o.mu.Unlock()
	e := o.m[k]
	if e == nil {
		return 0, false
	}
	done := true
	for i, off := range e.offsets {
		if off == offset {
			e.acked[i] = true
		}
		done = done && e.acked[i]
	}
	if !done {
		return 0, false
	}
	next := e.offsets[len(e.offsets)-1] + 1
	delete(o.m, k)
	return next, true
}

// ackOrderly is Java's AckMessageProcessor.ackOrderly (simplified, see
// popOrders): the offset moves once the whole batch is acked, and held
// pops of the topic are woken.
func (p *popProcessor) ackOrderly(topic, group string, q int32, offset int64) {
	if next, ok := p.orders.ack(popKey{topic, group, q}, offset); ok {
		if cur, _ := p.offsets.query(group, topic, q); next > cur {
			p.offsets.commit(group, topic, q, next)
		}
		p.holds.arrived(topic)
	}
}
