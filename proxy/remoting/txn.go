package remoting

import (
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
)

// txnTable maps a half message's transaction id and message id to the
// broker holding it, for END_TRANSACTION from clients that name no broker
// (Java clients before 4.9.5): filled from the answers to prepared sends and from
// the check-backs relayed to clients. Bounded in count; entries older than
// txnTTL go first (Java's transactionDataExpireMillis plays this part in
// its proxy's TransactionDataManager).
type txnTable struct {
	mu  sync.Mutex
	max int
	m   map[string]txnEntry // guarded by mu
}

type txnEntry struct {
	broker string
	at     time.Time
}

const txnTTL = time.Hour

func newTxnTable(max int) *txnTable { return &txnTable{max: max, m: map[string]txnEntry{}} }

// put records broker for every non-empty id.
func (t *txnTable) put(broker string, ids ...string) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if id == "" {
			continue
		}
		if len(t.m) >= t.max {
			t.evictLocked(now)
		}
		t.m[id] = txnEntry{broker: broker, at: now}
	}
}

func (t *txnTable) evictLocked(now time.Time) {
	for k, v := range t.m {
		if now.Sub(v.at) > txnTTL {
			delete(t.m, k)
		}
	}
	for k := range t.m { // still full: drop arbitrary ones
		if len(t.m) < t.max {
			break
		}
		delete(t.m, k)
	}
}

// broker is the broker of the first id known.
func (t *txnTable) broker(ids ...string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range ids {
		if e, ok := t.m[id]; ok && id != "" && time.Since(e.at) <= txnTTL {
			return e.broker
		}
	}
	return ""
}

// heartbeatHasConsumers reports a HEART_BEAT body with consumer groups.
func heartbeatHasConsumers(b []byte) bool {
	hb, err := body.DecodeHeartbeat(b)
	return err == nil && len(hb.ConsumerDataSet) > 0
}
