package conformance

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"

	"github.com/rocketgo/rocketgo/conformance/goclient"
	"github.com/rocketgo/rocketgo/conformance/storecompat"
)

// Raw reads of one broker (usually the slave after the master's kill-9),
// independent of the client under test: QUERY_CONSUMER_OFFSET,
// GET_MAX_OFFSET, GET_ALL_TOPIC_CONFIG and QUERY_MESSAGE by key (which a
// slave answers without the topic's config, so no wait for its 60 s
// metadata sync), records decoded with the Go client's
// primitive.DecodeMessage.

// queueOffsets is the group's committed offset of queues 0..n-1 on addr
// (-1 for a queue without one).
func queueOffsets(ctx context.Context, addr, group, topic string, n int) (map[int]int64, error) {
	out := make(map[int]int64, n)
	for q := range n {
		off, found, err := storecompat.QueryOffset(ctx, addr, group, topic, q)
		if err != nil {
			return nil, err
		}
		if !found {
			off = -1
		}
		out[q] = off
	}
	return out, nil
}

func offsetSum(m map[int]int64) int64 {
	var s int64
	for _, v := range m {
		s += max(v, 0)
	}
	return s
}

func offsetString(m map[int]int64) string {
	qs := make([]int, 0, len(m))
	for q := range m {
		qs = append(qs, q)
	}
	sort.Ints(qs)
	parts := make([]string, len(qs))
	for i, q := range qs {
		parts[i] = fmt.Sprintf("q%d=%d", q, m[q])
	}
	return strings.Join(parts, " ")
}

func offsetsEqual(a, b map[int]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for q, v := range a {
		if b[q] != v {
			return false
		}
	}
	return true
}

// pollTick is the period of every condition poll below.
const pollTick = 200 * time.Millisecond

// waitFor polls cond every pollTick until it returns nil or timeout
// passes; the error then wraps cond's last error.
func waitFor(ctx context.Context, timeout time.Duration, what string, cond func() error) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	for {
		err := cond()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: not after %v: %w", what, timeout, err)
		case <-time.After(pollTick):
		}
	}
}

// stableOffsets waits until the group has committed something on addr and
// its offsets have not moved for quiet (the clients commit one-way, after
// their consumer is gone), and returns them.
func stableOffsets(ctx context.Context, addr, group, topic string, n int, quiet, timeout time.Duration) (map[int]int64, error) {
	var last map[int]int64
	var since time.Time
	err := waitFor(ctx, timeout, "committed offsets of "+group+" settle", func() error {
		cur, err := queueOffsets(ctx, addr, group, topic, n)
		if err != nil {
			return err
		}
		if !offsetsEqual(cur, last) {
			last, since = cur, time.Now()
		}
		if offsetSum(cur) == 0 {
			return fmt.Errorf("nothing committed (%s)", offsetString(cur))
		}
		if time.Since(since) < quiet {
			return fmt.Errorf("moved %v ago (%s)", time.Since(since).Round(time.Millisecond), offsetString(cur))
		}
		return nil
	})
	return last, err
}

// waitOffsets waits until addr holds exactly want for the group (the slave
// copies the master's consumer offsets every 10 s) and returns how long
// that took.
func waitOffsets(ctx context.Context, addr, group, topic string, want map[int]int64, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	err := waitFor(ctx, timeout, "slave has the group's offsets", func() error {
		cur, err := queueOffsets(ctx, addr, group, topic, len(want))
		if err != nil {
			return err
		}
		if !offsetsEqual(cur, want) {
			return fmt.Errorf("slave %s, master %s", offsetString(cur), offsetString(want))
		}
		return nil
	})
	return time.Since(start), err
}

// waitTopic waits until addr's topic table has topic (a slave needs the
// master's topic config, synchronized every 10 s, to answer pulls).
func waitTopic(ctx context.Context, addr, topic string, timeout time.Duration) (time.Duration, error) {
	start := time.Now()
	err := waitFor(ctx, timeout, "topic "+topic+" on "+addr, func() error {
		ts, err := storecompat.Topics(ctx, addr)
		if err != nil {
			return err
		}
		if _, ok := ts[topic]; !ok {
			return fmt.Errorf("%d topics, not this one", len(ts))
		}
		return nil
	})
	return time.Since(start), err
}

// maxOffsets is GET_MAX_OFFSET of queues 0..n-1 on addr.
func maxOffsets(ctx context.Context, addr, topic string, n int) (map[int]int64, error) {
	out := make(map[int]int64, n)
	for q := range n {
		v, err := storecompat.MaxOffset(ctx, addr, topic, q)
		if err != nil {
			return nil, err
		}
		out[q] = v
	}
	return out, nil
}

// keyCopies is how many messages of topic on addr carry key (QUERY_MESSAGE
// by key; the index is hashed, so each record's keys are compared).
func keyCopies(ctx context.Context, addr, topic, key string) (int, error) {
	recs, err := storecompat.QueryByKey(ctx, addr, topic, key, false)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, r := range recs {
		for _, m := range primitive.DecodeMessage(r) {
			if m.Topic != topic {
				continue
			}
			for _, k := range strings.Fields(m.GetKeys()) {
				if k == key {
					n++
					break
				}
			}
		}
	}
	return n, nil
}

// copiesOf queries every key (four at a time) and returns the copies of
// each; a key whose query failed is left out.
func copiesOf(ctx context.Context, addr, topic string, keys []string) (map[string]int, error) {
	out := make(map[string]int, len(keys))
	var mu sync.Mutex
	var firstErr error
	work := make(chan string)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range work {
				n, err := keyCopies(ctx, addr, topic, k)
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = err
					}
				} else {
					out[k] = n
				}
				mu.Unlock()
			}
		}()
	}
	for _, k := range keys {
		if ctx.Err() != nil {
			break
		}
		work <- k
	}
	close(work)
	wg.Wait()
	return out, firstErr
}

// slaveCheck is what the slave holds of a set of acknowledged sends.
type slaveCheck struct {
	Acked      int
	Lost       []string // acked keys not on the slave, sorted
	Duplicates int      // acked keys stored more than once
	Unacked    int      // of the failed sends, how many are stored anyway
}

// checkStored queries addr by key until every acked key is found or
// timeout passes (the index is built asynchronously from the replicated
// log), then asks once for the keys of failed sends (at most 2,000).
func checkStored(ctx context.Context, addr, topic string, acked map[string]goclient.Sent, failed []string, timeout time.Duration) (slaveCheck, error) {
	c := slaveCheck{Acked: len(acked)}
	pending := make([]string, 0, len(acked))
	for k := range acked {
		pending = append(pending, k)
	}
	sort.Strings(pending)
	var lastErr error
	err := waitFor(ctx, timeout, "acknowledged keys on "+addr, func() error {
		got, err := copiesOf(ctx, addr, topic, pending)
		lastErr = err
		rest := pending[:0]
		for _, k := range pending {
			switch n, ok := got[k]; {
			case !ok || n == 0:
				rest = append(rest, k)
			case n > 1:
				c.Duplicates++
			}
		}
		pending = rest
		if len(pending) > 0 {
			return fmt.Errorf("%d of %d acknowledged keys not found (query error: %v)", len(pending), len(acked), lastErr)
		}
		return nil
	})
	c.Lost = pending
	if err != nil && len(pending) == len(acked) && lastErr != nil {
		// Nothing could be asked at all.
		return c, err
	}
	if len(failed) > 2000 {
		failed = failed[:2000]
	}
	got, _ := copiesOf(ctx, addr, topic, failed)
	for _, n := range got {
		if n > 0 {
			c.Unacked++
		}
	}
	return c, nil
}

// lostString names up to ten lost keys with where the master said it put
// them (queue/offset from the SEND_OK) and the message id.
func lostString(lost []string, acked map[string]goclient.Sent) string {
	var b strings.Builder
	for i, k := range lost {
		if i == 10 {
			fmt.Fprintf(&b, " … (+%d)", len(lost)-10)
			break
		}
		s := acked[k]
		fmt.Fprintf(&b, " %s(q%d@%d id %s)", k, s.QueueID, s.QueueOffset, s.MsgID)
	}
	return strings.TrimSpace(b.String())
}
