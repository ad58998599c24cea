package namesrv

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"sync"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/compat/configfile"
)

// namespaceOrderTopicConfig is Java's NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG.
const namespaceOrderTopicConfig = "ORDER_TOPIC_CONFIG"

// kvStore is the namespace → key → value configuration table, persisted
// to one JSON file (Java's kvConfig.json shape) after every change.
type kvStore struct {
	path string
	log  *slog.Logger

	mu    sync.RWMutex
	table map[string]map[string]string // guarded by mu
	bytes int                          // kvCost of every entry; guarded by mu

	persistMu sync.Mutex // serializes file writes, taken after mu is released
}

func newKVStore(path string, log *slog.Logger) *kvStore {
	return &kvStore{path: path, log: log, table: make(map[string]map[string]string)}
}

// load reads the file; a missing file is an empty table.
func (s *kvStore) load() error {
	b, err := os.ReadFile(s.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("namesrv: kv config: %w", err)
	}
	nss, err := body.DecodeKVConfigFile(b)
	if err != nil {
		return fmt.Errorf("namesrv: kv config %s: %w", s.path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, ns := range nss {
		m := make(map[string]string, len(ns.Table))
		for _, kv := range ns.Table {
			m[kv.Key] = kv.Value
		}
		s.table[ns.Namespace] = m
	}
	s.bytes = 0
	for ns, m := range s.table {
		for k, v := range m {
			s.bytes += kvCost(ns, k, v)
		}
	}
	return nil
}

// kvEntryOverhead is what one entry costs besides its strings (map slot,
// string headers), roughly.
const kvEntryOverhead = 64

// kvCost is the memory one entry is counted as pinning.
func kvCost(ns, key, value string) int { return len(ns) + len(key) + len(value) + kvEntryOverhead }

// errKVFull refuses a put that would pass the KV bounds.
var errKVFull = errors.New("namesrv: kv config full")

func (s *kvStore) get(ns, key string) (string, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.table[ns][key]
	return v, ok
}

// list returns a namespace's entries sorted by key; ok is false when the
// namespace does not exist (an existing empty one is ok, as in Java).
func (s *kvStore) list(ns string) ([]body.KVEntry, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	m, ok := s.table[ns]
	if !ok {
		return nil, false
	}
	return sortedEntries(m), true
}

func sortedEntries(m map[string]string) []body.KVEntry {
	out := make([]body.KVEntry, 0, len(m))
	for k, v := range m {
		out = append(out, body.KVEntry{Key: k, Value: v})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// put sets one entry. It refuses (an error wrapping errKVFull, nothing
// changed) a value longer than maxValue or a put that would take the
// table's kvCost past maxBytes; a bound <= 0 is not checked.
func (s *kvStore) put(ns, key, value string, maxBytes, maxValue int) error {
	if maxValue > 0 && len(value) > maxValue {
		return fmt.Errorf("%w: value of %d bytes, more than maxKVConfigValueLength %d", errKVFull, len(value), maxValue)
	}
	s.mu.Lock()
	m := s.table[ns]
	grow := kvCost(ns, key, value)
	if old, had := m[key]; had {
		grow -= kvCost(ns, key, old)
	}
	if maxBytes > 0 && grow > 0 && s.bytes+grow > maxBytes {
		used := s.bytes
		s.mu.Unlock()
		return fmt.Errorf("%w: %d bytes used, %d more would pass maxKVConfigBytes %d", errKVFull, used, grow, maxBytes)
	}
	if m == nil {
		m = make(map[string]string)
		s.table[ns] = m
	}
	m[key] = value
	s.bytes += grow
	s.mu.Unlock()
	s.log.Info("namesrv: put kv config", "namespace", ns, "key", key, "value", logValue(value))
	return s.persist()
}

// logValue shortens a long value for the log.
func logValue(v string) string {
	const max = 256
	if len(v) <= max {
		return v
	}
	return v[:max] + "…(" + strconv.Itoa(len(v)) + " bytes)"
}

func (s *kvStore) delete(ns, key string) error {
	s.mu.Lock()
	if m := s.table[ns]; m != nil {
		if old, had := m[key]; had {
			s.bytes -= kvCost(ns, key, old)
			delete(m, key)
		}
	}
	s.mu.Unlock()
	s.log.Info("namesrv: delete kv config", "namespace", ns, "key", key)
	return s.persist()
}

// persist writes the whole table: temp file, fsync, rename, fsync dir.
func (s *kvStore) persist() error {
	s.persistMu.Lock()
	defer s.persistMu.Unlock()
	s.mu.RLock()
	nss := make([]body.KVNamespace, 0, len(s.table))
	for ns, m := range s.table {
		nss = append(nss, body.KVNamespace{Namespace: ns, Table: sortedEntries(m)})
	}
	s.mu.RUnlock()
	sort.Slice(nss, func(i, j int) bool { return nss[i].Namespace < nss[j].Namespace })
	if err := configfile.Write(s.path, body.AppendKVConfigFile(nil, nss)); err != nil {
		return fmt.Errorf("namesrv: persist kv config: %w", err)
	}
	return nil
}
