package controller

import (
	"fmt"
	"slices"
	"sync"

	"github.com/rocketgo/rocketgo/compat/fastjson"
)

// firstBrokerID is the first id the controller assigns in a broker set
// (Java MixAll.FIRST_BROKER_CONTROLLER_ID).
const firstBrokerID = 1

// member is one broker of a broker set.
type member struct {
	Addr      string `json:"addr"`
	CheckCode string `json:"checkCode"` // registerCheckCode "addr;millis"
}

// brokerSet is one broker name's replicas: Java's BrokerReplicaInfo and
// SyncStateInfo in one record, so the two can never disagree.
//
// Invariants: Master is 0 (none) or a key of Brokers; every id of SyncSet is
// a key of Brokers; SyncSet is sorted ascending without duplicates.
type brokerSet struct {
	Cluster     string           `json:"cluster"`
	Name        string           `json:"name"`
	NextID      int64            `json:"nextId"`
	Brokers     map[int64]member `json:"brokers"`
	SyncSet     []int64          `json:"syncSet"`
	Master      int64            `json:"master"` // 0: no master (Java: null)
	MasterEpoch int32            `json:"masterEpoch"`
	SyncEpoch   int32            `json:"syncEpoch"`
}

func (b *brokerSet) ids() []int64 {
	ids := make([]int64, 0, len(b.Brokers))
	for id := range b.Brokers {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

func (b *brokerSet) addr(id int64) string {
	if id == 0 {
		return ""
	}
	return b.Brokers[id].Addr
}

func (b *brokerSet) inSync(id int64) bool {
	_, ok := slices.BinarySearch(b.SyncSet, id)
	return ok
}

func (b *brokerSet) clone() *brokerSet {
	c := *b
	c.Brokers = make(map[int64]member, len(b.Brokers))
	for k, v := range b.Brokers {
		c.Brokers[k] = v
	}
	c.SyncSet = slices.Clone(b.SyncSet)
	return &c
}

// eventType numbers the replicated events as Java's EventType does.
type eventType uint8

const (
	evAlterSyncStateSet   eventType = 1
	evApplyBrokerID       eventType = 2
	evElectMaster         eventType = 3
	evCleanBrokerData     eventType = 5
	evUpdateBrokerAddress eventType = 6
)

// event is one replicated change, decided by the leader and applied by
// every node in log order. Apply is deterministic: it depends on the
// event and the state only, never on clocks or heartbeats.
type event struct {
	Type      eventType `json:"t"`
	Cluster   string    `json:"c,omitempty"`
	Broker    string    `json:"b"`
	ID        int64     `json:"id,omitempty"`   // applied broker id, new master, updated broker
	Addr      string    `json:"addr,omitempty"` // broker address
	CheckCode string    `json:"code,omitempty"` // registerCheckCode
	Elected   bool      `json:"e,omitempty"`    // ElectMaster: a master was elected (false: master lost)
	IDs       []int64   `json:"ids,omitempty"`  // AlterSyncStateSet: new set; CleanBrokerData: ids (empty: all)
}

func encodeEvent(e *event) []byte {
	b, err := fastjson.Marshal(e)
	if err != nil {
		panic("controller: marshal event: " + err.Error()) // plain struct: cannot fail
	}
	return b
}

func decodeEvent(b []byte) (event, error) {
	var e event
	if err := fastjson.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("controller: decode event: %w", err)
	}
	return e, nil
}

// State is the replicated controller state: every broker set by name.
// Readers take mu shared; apply takes it exclusively.
type State struct {
	mu   sync.RWMutex
	sets map[string]*brokerSet // guarded by mu
}

// NewState returns an empty state.
func NewState() *State { return &State{sets: make(map[string]*brokerSet)} }

// apply performs one event. Events refer to what the leader saw when it
// decided; one that no longer fits (a broker set cleaned meanwhile) is a
// no-op, as in Java's ReplicasInfoManager.applyEvent.
func (s *State) apply(e *event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	bs := s.sets[e.Broker]
	switch e.Type {
	case evAlterSyncStateSet:
		if bs == nil {
			return
		}
		bs.SyncSet = s.knownIDs(bs, e.IDs)
		bs.SyncEpoch++
	case evApplyBrokerID:
		if bs == nil {
			bs = &brokerSet{Cluster: e.Cluster, Name: e.Broker, NextID: firstBrokerID, Brokers: map[int64]member{}}
			s.sets[e.Broker] = bs
		}
		if _, ok := bs.Brokers[e.ID]; !ok {
			bs.Brokers[e.ID] = member{Addr: e.Addr, CheckCode: e.CheckCode}
			// Like Java: the next id only grows by one per added broker,
			// whatever id was applied.
			bs.NextID++
		}
	case evElectMaster:
		if bs == nil {
			return
		}
		if !e.Elected {
			bs.Master = 0
			bs.MasterEpoch++
			return
		}
		if _, ok := bs.Brokers[e.ID]; !ok {
			return // the leader only elects members; keep the invariant anyway
		}
		bs.Master = e.ID
		bs.MasterEpoch++
		bs.SyncSet = []int64{e.ID}
		bs.SyncEpoch++
	case evCleanBrokerData:
		if len(e.IDs) == 0 {
			delete(s.sets, e.Broker)
			return
		}
		if bs == nil {
			return
		}
		for _, id := range e.IDs {
			delete(bs.Brokers, id)
			if i, ok := slices.BinarySearch(bs.SyncSet, id); ok {
				bs.SyncSet = slices.Delete(bs.SyncSet, i, i+1)
			}
			if bs.Master == id {
				// Java keeps the id of a cleaned master; we drop it so
				// Master always names a member.
				bs.Master = 0
			}
		}
		// Java drops its replica table when no broker is left and its sync
		// state table when the set is empty; either makes the broker set
		// unknown to every request, so we drop the whole record.
		if len(bs.Brokers) == 0 || len(bs.SyncSet) == 0 {
			delete(s.sets, e.Broker)
		}
	case evUpdateBrokerAddress:
		if bs == nil {
			return
		}
		if m, ok := bs.Brokers[e.ID]; ok {
			m.Addr = e.Addr
			bs.Brokers[e.ID] = m
		}
	}
}

// knownIDs returns ids sorted, deduplicated and restricted to members.
func (s *State) knownIDs(bs *brokerSet, ids []int64) []int64 {
	out := make([]int64, 0, len(ids))
	for _, id := range ids {
		if _, ok := bs.Brokers[id]; ok {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// view calls f with the broker set name (nil if unknown) under the read lock.
func (s *State) view(name string, f func(bs *brokerSet)) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	f(s.sets[name])
}

// Len is the number of broker sets.
func (s *State) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.sets)
}

// snapshotFormat versions the snapshot document.
const snapshotFormat = 1

type snapshotDoc struct {
	Format int          `json:"format"`
	Sets   []*brokerSet `json:"sets"`
}

// marshal writes the whole state as JSON, broker sets by name.
func (s *State) marshal() ([]byte, error) {
	s.mu.RLock()
	doc := snapshotDoc{Format: snapshotFormat, Sets: make([]*brokerSet, 0, len(s.sets))}
	for _, bs := range s.sets {
		doc.Sets = append(doc.Sets, bs.clone())
	}
	s.mu.RUnlock()
	slices.SortFunc(doc.Sets, func(a, b *brokerSet) int {
		switch {
		case a.Name < b.Name:
			return -1
		case a.Name > b.Name:
			return 1
		}
		return 0
	})
	return fastjson.Marshal(&doc)
}

// unmarshal replaces the state with a snapshot, checking its invariants.
func (s *State) unmarshal(b []byte) error {
	var doc snapshotDoc
	if err := fastjson.Unmarshal(b, &doc); err != nil {
		return fmt.Errorf("controller: snapshot: %w", err)
	}
	if doc.Format != snapshotFormat {
		return fmt.Errorf("controller: snapshot format %d, want %d", doc.Format, snapshotFormat)
	}
	sets := make(map[string]*brokerSet, len(doc.Sets))
	for _, bs := range doc.Sets {
		if bs == nil || bs.Name == "" {
			return fmt.Errorf("controller: snapshot: broker set without a name")
		}
		if bs.Brokers == nil {
			bs.Brokers = map[int64]member{}
		}
		if bs.Master != 0 {
			if _, ok := bs.Brokers[bs.Master]; !ok {
				return fmt.Errorf("controller: snapshot: %s: master %d is no member", bs.Name, bs.Master)
			}
		}
		for _, id := range bs.SyncSet {
			if _, ok := bs.Brokers[id]; !ok {
				return fmt.Errorf("controller: snapshot: %s: in-sync %d is no member", bs.Name, id)
			}
		}
		if !slices.IsSorted(bs.SyncSet) {
			return fmt.Errorf("controller: snapshot: %s: sync set not sorted", bs.Name)
		}
		sets[bs.Name] = bs
	}
	s.mu.Lock()
	s.sets = sets
	s.mu.Unlock()
	return nil
}
