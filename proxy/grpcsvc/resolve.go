package grpcsvc

import (
	"context"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/message"
)

// Re-resolving a write after a master change. A send that finds the
// broker gone (the connection refused or broken) or not a master
// (SERVICE_NOT_AVAILABLE: a slave's store refuses writes) asks the name
// server for the route again, waits (bounded) until it names another
// master, and sends once more there: the client sees one slower send
// instead of an error, provided its deadline leaves room. Java's proxy
// does not retry in the proxy; its client's retries land on the stale
// cached route until the cache refreshes (watch.go). A retry after a
// broken connection may store the message twice (the broker may have
// written it before it died): at-least-once, as a client retry is.
const (
	// resolveBudget bounds the wait for a new master in one request.
	resolveBudget = 1500 * time.Millisecond
	// resolveReserve is deadline left for the retried send itself.
	resolveReserve = 500 * time.Millisecond
	// resolvePoll is how often the name server is asked meanwhile.
	resolvePoll = 100 * time.Millisecond
)

// pickQueue chooses the queue of a send: a message group's by Guava's
// consistentHash (SendMessageQueueSelector), else the next in turn.
func (s *Service) pickQueue(qs []writeQueue, group string) writeQueue {
	if group != "" {
		return qs[consistentHash(int64(message.JavaStringHash(group)), len(qs))]
	}
	return qs[s.rr.next()%uint64(len(qs))]
}

// masterless says whether some writable queue data of r belongs to a
// broker group that has no master in r: a master change under way (the
// old master's registration gone, the new one's not yet there).
func masterless(r *body.TopicRouteData) bool {
	for _, q := range r.QueueDatas {
		if q.Perm&permWrite == 0 || q.WriteQueueNums <= 0 {
			continue
		}
		if _, ok := masterAddr(r, q.BrokerName); !ok {
			return true
		}
	}
	return false
}

// resolveUntil is how long a request with ctx may wait for a new route:
// resolveBudget, less when its deadline is nearer; zero when no retry
// fits.
func resolveUntil(ctx context.Context) time.Time {
	until := time.Now().Add(resolveBudget)
	if dl, ok := ctx.Deadline(); ok {
		if d := dl.Add(-resolveReserve); d.Before(until) {
			until = d
		}
	}
	if !until.After(time.Now()) {
		return time.Time{}
	}
	return until
}

// awaitWritable polls the name server (bounded by resolveUntil) until
// topic has writable master queues, and returns them (nil when none came).
func (s *Service) awaitWritable(ctx context.Context, topic string) []writeQueue {
	var out []writeQueue
	s.pollRoute(ctx, topic, func(r *body.TopicRouteData) bool {
		out = writeQueues(r)
		return len(out) > 0
	})
	return out
}

// reresolve finds where a send that failed on q goes now: the same queue
// of the same broker group on its new master, else a queue of another
// master (a message group re-hashes over what is writable then). It waits
// for the name server to name a master other than q.addr, bounded by
// resolveUntil; false means no retry.
func (s *Service) reresolve(ctx context.Context, topic string, q writeQueue, group string) (writeQueue, bool) {
	var next writeQueue
	found := s.pollRoute(ctx, topic, func(r *body.TopicRouteData) bool {
		var others []writeQueue
		for _, c := range writeQueues(r) {
			if c.addr == q.addr {
				continue
			}
			if c.broker == q.broker && c.id == q.id {
				next = c
				return true
			}
			others = append(others, c)
		}
		if len(others) == 0 {
			return false
		}
		next = s.pickQueue(others, group)
		return true
	})
	return next, found
}

// pollRoute fetches topic's route from the name server until ok accepts
// it or the request's resolve time is over.
func (s *Service) pollRoute(ctx context.Context, topic string, ok func(*body.TopicRouteData) bool) bool {
	until := resolveUntil(ctx)
	if until.IsZero() {
		return false
	}
	ctx, cancel := context.WithDeadline(ctx, until)
	defer cancel()
	for {
		if r, err := s.backend.Refresh(ctx, topic); err == nil && ok(r) {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(resolvePoll): // the name server's next answer
		}
	}
}
