package namesrv

import (
	"log/slog"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/compat/remarks"
)

// masterID is the broker id of a master (Java MixAll.MASTER_ID).
const masterID = 0

// brokerKey identifies one broker process: Java's BrokerAddrInfo.
type brokerKey struct {
	cluster, addr string
}

// liveInfo is what the name server knows of one broker process.
type liveInfo struct {
	lastUpdate atomic.Int64 // unix nanos of the last register/heartbeat
	timeout    time.Duration
	version    body.TopicVersion
	conn       *transport.Conn // nil when registered without a connection (tests)
	haAddr     string
}

// brokerGroup is one broker name's master and slaves (Java BrokerData).
type brokerGroup struct {
	cluster, name, zone string
	actingMaster        bool
	addrs               map[int64]string // broker id → "ip:port"
}

func (g *brokerGroup) minID() (int64, bool) {
	first := true
	var m int64
	for id := range g.addrs {
		if first || id < m {
			m, first = id, false
		}
	}
	return m, !first
}

func (g *brokerGroup) data() body.BrokerData {
	bd := body.BrokerData{Cluster: g.cluster, BrokerName: g.name, ZoneName: g.zone, EnableActingMaster: g.actingMaster}
	bd.BrokerAddrs = make([]body.BrokerAddr, 0, len(g.addrs))
	for id, a := range g.addrs {
		bd.BrokerAddrs = append(bd.BrokerAddrs, body.BrokerAddr{ID: id, Addr: a})
	}
	bd.SortAddrs()
	return bd
}

// routeTable is the name server's view of clusters, brokers and topics
// (Java's RouteInfoManager). Readers take mu shared; registration builds
// what it can before taking mu exclusively.
//
// Lock order: mu only; no other lock is taken while holding it.
type routeTable struct {
	log *slog.Logger
	now func() time.Time

	mu       sync.RWMutex
	topics   map[string]queueSet            // topic → one QueueData per broker name; guarded by mu
	brokers  map[string]*brokerGroup        // broker name → group; guarded by mu
	clusters map[string]map[string]struct{} // cluster → broker names; guarded by mu
	live     map[brokerKey]*liveInfo        // guarded by mu (fields of *liveInfo: see there)
	filters  map[brokerKey][]string         // guarded by mu
	mappings map[string]map[string][]byte   // topic → bname → TopicQueueMappingInfo JSON; guarded by mu
	// entries counts the (topic, broker name) pairs of topics plus those
	// of mappings, the bulk of what registrations retain; guarded by mu.
	entries int
	// bytes estimates what all of the above retain (footprint.go).
	// Invariant: bytes == footprintLocked(); guarded by mu.
	bytes int64

	// gen moves on with every write lock (lock), so what was built from
	// the table under an older gen may be stale (routeCache).
	gen atomic.Uint64

	maxRegisterHold atomic.Int64 // longest write-lock hold of a registration, ns (observability, tests)
}

// lock takes mu for writing and moves gen on. Every writer goes through it.
func (t *routeTable) lock() {
	t.mu.Lock()
	t.gen.Add(1)
}

func newRouteTable(log *slog.Logger, now func() time.Time) *routeTable {
	return &routeTable{
		log:      log,
		now:      now,
		topics:   make(map[string]queueSet, 1024),
		brokers:  make(map[string]*brokerGroup),
		clusters: make(map[string]map[string]struct{}),
		live:     make(map[brokerKey]*liveInfo),
		filters:  make(map[brokerKey][]string),
		mappings: make(map[string]map[string][]byte),
	}
}

// registration is one REGISTER_BROKER request, decoded.
type registration struct {
	cluster, addr, name string
	id                  int64
	haAddr, zone        string
	timeout             time.Duration
	actingMaster        *bool // nil: the broker is older than 5.x and sent no flag
	body                body.RegisterBrokerBody
	hasBody             bool
	conn                *transport.Conn
	deleteMissingTopics bool // deleteTopicWithBrokerRegistration
	// Bounds (maxBrokers, maxTopicRouteEntries, maxRouteTableBytes): a
	// registration that would pass one is refused before anything changes.
	maxBrokers, maxEntries int
	maxBytes               int64
}

// registerResult is what a slave learns about its master, or why the
// registration was refused (refused != "": nothing changed).
type registerResult struct {
	haAddr, masterAddr string
	refused            string
}

// register applies a broker registration like Java's registerBroker. ok is
// false when Java would answer "register broker failed".
func (t *routeTable) register(r *registration) (res registerResult, ok bool) {
	// Build per-topic queue data outside the lock: with thousands of topics
	// this is the bulk of the work.
	// Each entry doubles as the one-element queueSet of a topic new to the
	// table, so inserting thousands of new topics allocates nothing under it.
	// The queue data share the group's copy of the broker name.
	t.mu.RLock()
	if g := t.brokers[r.name]; g != nil {
		r.name = g.name
	}
	t.mu.RUnlock()
	queues := make([]body.QueueData, len(r.body.Topics))
	for i := range r.body.Topics {
		tc := &r.body.Topics[i]
		queues[i] = body.QueueData{BrokerName: r.name, ReadQueueNums: tc.ReadQueueNums, WriteQueueNums: tc.WriteQueueNums, Perm: tc.Perm, TopicSysFlag: tc.TopicSysFlag}
	}
	now := t.now()
	key := brokerKey{r.cluster, r.addr}

	t.lock()
	locked := time.Now()
	defer func() {
		held := int64(time.Since(locked))
		t.mu.Unlock()
		for {
			prev := t.maxRegisterHold.Load()
			if held <= prev || t.maxRegisterHold.CompareAndSwap(prev, held) {
				break
			}
		}
	}()

	if refused := t.overBoundsLocked(r, key); refused != "" {
		// What the broker registered before stays, and stays alive: a
		// broker grown past a bound keeps serving its old routes.
		if li := t.live[key]; li != nil {
			li.lastUpdate.Store(now.UnixNano())
		}
		return registerResult{refused: refused}, true
	}
	brokerBefore := t.brokerBytesLocked(r.cluster, r.name, key)
	defer func() { t.bytes += t.brokerBytesLocked(r.cluster, r.name, key) - brokerBefore }()

	names := t.clusters[r.cluster]
	if names == nil {
		names = make(map[string]struct{})
		t.clusters[r.cluster] = names
	}
	names[r.name] = struct{}{}

	registerFirst := false
	g := t.brokers[r.name]
	if g == nil {
		registerFirst = true
		g = &brokerGroup{cluster: r.cluster, name: r.name, addrs: make(map[int64]string)}
		t.brokers[r.name] = g
	}
	oldVersion := r.actingMaster == nil
	g.actingMaster = !oldVersion && *r.actingMaster
	g.zone = r.zone

	// A slave switched to master (or back) keeps one id per address.
	for id, a := range g.addrs {
		if a == r.addr && id != r.id {
			delete(g.addrs, id)
		}
	}
	if old, found := g.addrs[r.id]; found && old != r.addr {
		if prev := t.live[brokerKey{r.cluster, old}]; prev != nil && prev.version.StateVersion > r.body.DataVersion.StateVersion {
			t.log.Warn("namesrv: registering broker conflicts with a newer one, ignored",
				"cluster", r.cluster, "broker", r.name, "id", r.id, "oldAddr", old, "newAddr", r.addr)
			delete(t.live, key)
			return registerResult{}, true
		}
	}
	if _, found := g.addrs[r.id]; !found && len(r.body.Topics) == 1 {
		// Like Java: a single-topic registration must follow a full one.
		t.log.Warn("namesrv: single-topic registration before the broker registered", "broker", r.name, "id", r.id, "addr", r.addr)
		return registerResult{}, false
	}
	oldAddr := g.addrs[r.id]
	g.addrs[r.id] = r.addr
	registerFirst = registerFirst || oldAddr == ""

	isMaster := r.id == masterID
	minID, _ := g.minID()
	isPrimeSlave := !oldVersion && !isMaster && r.id == minID

	prev := t.live[key]
	versionChanged := prev == nil || prev.version != r.body.DataVersion
	if r.hasBody && (isMaster || isPrimeSlave) {
		if r.deleteMissingTopics && len(r.body.Mappings) == 0 {
			keep := make(map[string]struct{}, len(r.body.Topics))
			for i := range r.body.Topics {
				keep[r.body.Topics[i].TopicName] = struct{}{}
			}
			for topic, qs := range t.topics {
				if qs.find(r.name) < 0 {
					continue
				}
				if _, kept := keep[topic]; !kept {
					t.removeQueues(topic, qs, r.name)
				}
			}
		}
		for i := range r.body.Topics {
			topic := r.body.Topics[i].TopicName
			qs := t.topics[topic]
			if !registerFirst && !versionChanged && qs.find(r.name) >= 0 {
				continue
			}
			if isPrimeSlave && g.actingMaster {
				// The acting master of a group without master serves reads only.
				queues[i].Perm &^= body.PermWrite
			}
			if len(qs) == 0 {
				t.topics[topic] = queues[i : i+1 : i+1]
				t.entries++
				t.bytes += topicBytes(topic) + queueEntryBytes
				continue
			}
			if qs.find(r.name) < 0 {
				t.entries++
				t.bytes += queueEntryBytes
			}
			t.topics[topic] = qs.set(queues[i])
		}
		if versionChanged || registerFirst {
			for _, m := range r.body.Mappings {
				bm := t.mappings[m.Topic]
				if bm == nil {
					bm = make(map[string][]byte)
					t.mappings[m.Topic] = bm
					t.bytes += mappingTopicBytesFor(m.Topic)
				}
				if old, had := bm[m.BrokerName]; had {
					t.bytes -= mappingBytes(m.BrokerName, old)
				} else {
					t.entries++
				}
				t.bytes += mappingBytes(m.BrokerName, m.JSON)
				bm[m.BrokerName] = m.JSON
			}
		}
	}

	li := &liveInfo{timeout: r.timeout, version: r.body.DataVersion, conn: r.conn, haAddr: r.haAddr}
	li.lastUpdate.Store(now.UnixNano())
	t.live[key] = li
	if prev == nil {
		t.log.Info("namesrv: new broker registered", "cluster", r.cluster, "broker", r.name, "id", r.id, "addr", r.addr, "ha", r.haAddr)
	}
	if r.body.FilterServerList != nil {
		if len(r.body.FilterServerList) == 0 {
			delete(t.filters, key)
		} else {
			t.filters[key] = r.body.FilterServerList
		}
	}
	if r.id != masterID {
		if ma, found := g.addrs[masterID]; found {
			if ml := t.live[brokerKey{r.cluster, ma}]; ml != nil {
				res = registerResult{haAddr: ml.haAddr, masterAddr: ma}
			}
		}
	}
	return res, true
}

// touch refreshes a broker's last-update time (heartbeat, data version query).
func (t *routeTable) touch(cluster, addr string) {
	t.mu.RLock()
	if li := t.live[brokerKey{cluster, addr}]; li != nil {
		li.lastUpdate.Store(t.now().UnixNano())
	}
	t.mu.RUnlock()
}

// dataVersion returns the data version a broker last registered.
func (t *routeTable) dataVersion(cluster, addr string) (body.TopicVersion, bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	li := t.live[brokerKey{cluster, addr}]
	if li == nil {
		return body.TopicVersion{}, false
	}
	return li.version, true
}

// unregister removes one broker process like Java's unRegisterBroker.
func (t *routeTable) unregister(cluster, addr, name string) {
	t.lock()
	defer t.mu.Unlock()
	t.unregisterLocked(cluster, addr, name)
}

func (t *routeTable) unregisterLocked(cluster, addr, name string) {
	key := brokerKey{cluster, addr}
	brokerBefore := t.brokerBytesLocked(cluster, name, key)
	defer func() { t.bytes += t.brokerBytesLocked(cluster, name, key) - brokerBefore }()
	delete(t.live, key)
	delete(t.filters, key)
	g := t.brokers[name]
	removedName := false
	if g != nil {
		for id, a := range g.addrs {
			if a == addr {
				delete(g.addrs, id)
			}
		}
		if len(g.addrs) == 0 {
			delete(t.brokers, name)
			removedName = true
		}
	}
	t.log.Info("namesrv: broker unregistered", "cluster", cluster, "broker", name, "addr", addr, "groupRemoved", removedName)
	if removedName {
		if names := t.clusters[cluster]; names != nil {
			delete(names, name)
			if len(names) == 0 {
				delete(t.clusters, cluster)
			}
		}
		for topic, qs := range t.topics {
			t.removeQueues(topic, qs, name)
		}
		return
	}
	// The group lives on: with acting master and no master left, its
	// queues stop taking writes.
	if g != nil && g.actingMaster {
		if min, ok := g.minID(); !ok || min > masterID {
			for _, qs := range t.topics {
				if i := qs.find(name); i >= 0 {
					qs[i].Perm &^= body.PermWrite
				}
			}
		}
	}
}

// findBroker resolves a broker process to its group name.
func (t *routeTable) findBrokerLocked(key brokerKey) (string, bool) {
	for name, g := range t.brokers {
		if g.cluster != key.cluster {
			continue
		}
		for _, a := range g.addrs {
			if a == key.addr {
				return name, true
			}
		}
	}
	return "", false
}

// connClosed unregisters every broker that registered over c.
func (t *routeTable) connClosed(c *transport.Conn) {
	// Most connections are clients': no write lock (nor a new gen) for them.
	t.mu.RLock()
	registered := false
	for _, li := range t.live {
		if li.conn == c {
			registered = true
			break
		}
	}
	t.mu.RUnlock()
	if !registered {
		return
	}
	t.lock()
	defer t.mu.Unlock()
	for key, li := range t.live {
		if li.conn != c {
			continue
		}
		if name, ok := t.findBrokerLocked(key); ok {
			t.log.Info("namesrv: broker connection closed", "cluster", key.cluster, "addr", key.addr)
			t.unregisterLocked(key.cluster, key.addr, name)
		} else {
			t.bytes -= t.keyBytesLocked(key)
			delete(t.live, key)
			delete(t.filters, key)
		}
	}
}

// expire unregisters brokers silent for longer than their timeout and
// returns their connections for the caller to close.
func (t *routeTable) expire(def time.Duration) []*transport.Conn {
	now := t.now().UnixNano()
	var dead []brokerKey
	t.mu.RLock()
	for key, li := range t.live {
		timeout := li.timeout
		if timeout <= 0 {
			timeout = def
		}
		if li.lastUpdate.Load()+int64(timeout) < now {
			dead = append(dead, key)
		}
	}
	t.mu.RUnlock()
	if len(dead) == 0 {
		return nil
	}
	var conns []*transport.Conn
	t.lock()
	defer t.mu.Unlock()
	for _, key := range dead {
		li := t.live[key]
		if li == nil {
			continue
		}
		t.log.Warn("namesrv: broker channel expired", "cluster", key.cluster, "addr", key.addr)
		if li.conn != nil {
			conns = append(conns, li.conn)
		}
		if name, ok := t.findBrokerLocked(key); ok {
			t.unregisterLocked(key.cluster, key.addr, name)
		} else {
			t.bytes -= t.keyBytesLocked(key)
			delete(t.live, key)
			delete(t.filters, key)
		}
	}
	return conns
}

// route builds a topic's route data (Java's pickupTopicRouteData).
func (t *routeTable) route(topic string, supportActingMaster bool) (body.TopicRouteData, bool) {
	var r body.TopicRouteData
	t.mu.RLock()
	qs := t.topics[topic]
	if len(qs) == 0 {
		t.mu.RUnlock()
		return t.clusterTopicRoute(topic)
	}
	r.QueueDatas = append([]body.QueueData(nil), qs...) // sorted by broker name
	r.BrokerDatas = make([]body.BrokerData, 0, len(qs))
	for i := range qs {
		g := t.brokers[qs[i].BrokerName]
		if g == nil {
			continue
		}
		bd := g.data()
		r.BrokerDatas = append(r.BrokerDatas, bd)
		if len(t.filters) == 0 {
			continue
		}
		for _, a := range bd.BrokerAddrs {
			if fs := t.filters[brokerKey{bd.Cluster, a.Addr}]; fs != nil {
				r.FilterServerTable = append(r.FilterServerTable, body.FilterServers{BrokerAddr: a.Addr, Servers: fs})
			}
		}
	}
	if bm := t.mappings[topic]; bm != nil {
		r.MappingByBroker = make([]body.MappingInfo, 0, len(bm))
		for name, js := range bm {
			r.MappingByBroker = append(r.MappingByBroker, body.MappingInfo{BrokerName: name, JSON: js})
		}
		sort.Slice(r.MappingByBroker, func(i, j int) bool { return r.MappingByBroker[i].BrokerName < r.MappingByBroker[j].BrokerName })
	}
	t.mu.RUnlock()
	if len(r.BrokerDatas) == 0 {
		return r, false
	}
	if supportActingMaster {
		actingMaster(&r, topic)
	}
	return r, true
}

// syncBrokerMemberGroupPrefix is TopicValidator.SYNC_BROKER_MEMBER_GROUP_PREFIX.
const syncBrokerMemberGroupPrefix = "rmq_sys_SYNC_BROKER_MEMBER_"

// actingMaster presents, for a group without master whose queues are
// read-only, its lowest-id slave as broker 0 (Java's supportActingMaster).
func actingMaster(r *body.TopicRouteData, topic string) {
	if len(topic) >= len(syncBrokerMemberGroupPrefix) && topic[:len(syncBrokerMemberGroupPrefix)] == syncBrokerMemberGroupPrefix {
		return
	}
	for i := range r.BrokerDatas {
		bd := &r.BrokerDatas[i]
		if len(bd.BrokerAddrs) == 0 || !bd.EnableActingMaster {
			continue
		}
		if _, hasMaster := bd.Addr(masterID); hasMaster {
			continue
		}
		for _, qd := range r.QueueDatas {
			if qd.BrokerName == bd.BrokerName {
				if qd.Perm&body.PermWrite == 0 {
					bd.BrokerAddrs[0].ID = masterID // BrokerAddrs is sorted: [0] is the lowest id
					bd.SortAddrs()
				}
				break
			}
		}
	}
}

// clusterTopicRoute answers a topic named like a cluster with that
// cluster's brokers.
// compat: a Java broker registers its cluster name as a topic (16 queues,
// perm INHERIT|READ|WRITE, clusterTopicEnable); brokers that do not are
// answered as if they had.
func (t *routeTable) clusterTopicRoute(cluster string) (body.TopicRouteData, bool) {
	var r body.TopicRouteData
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := t.clusters[cluster]
	if len(names) == 0 {
		return r, false
	}
	for name := range names {
		g := t.brokers[name]
		if g == nil {
			continue
		}
		r.BrokerDatas = append(r.BrokerDatas, g.data())
		r.QueueDatas = append(r.QueueDatas, body.QueueData{BrokerName: name, ReadQueueNums: body.DefaultReadQueueNums, WriteQueueNums: body.DefaultWriteQueueNums, Perm: body.PermInherit | body.PermRead | body.PermWrite})
	}
	if len(r.BrokerDatas) == 0 {
		return r, false
	}
	sort.Slice(r.QueueDatas, func(i, j int) bool { return r.QueueDatas[i].BrokerName < r.QueueDatas[j].BrokerName })
	sort.Slice(r.BrokerDatas, func(i, j int) bool { return r.BrokerDatas[i].BrokerName < r.BrokerDatas[j].BrokerName })
	return r, true
}

// clusterInfo snapshots the broker and cluster tables.
func (t *routeTable) clusterInfo() body.ClusterInfo {
	var info body.ClusterInfo
	t.mu.RLock()
	for _, g := range t.brokers {
		info.BrokerAddrTable = append(info.BrokerAddrTable, g.data())
	}
	for c, names := range t.clusters {
		info.ClusterAddrTable = append(info.ClusterAddrTable, body.ClusterBrokers{Cluster: c, BrokerNames: sortedKeys(names)})
	}
	t.mu.RUnlock()
	sort.Slice(info.BrokerAddrTable, func(i, j int) bool {
		return info.BrokerAddrTable[i].BrokerName < info.BrokerAddrTable[j].BrokerName
	})
	sort.Slice(info.ClusterAddrTable, func(i, j int) bool {
		return info.ClusterAddrTable[i].Cluster < info.ClusterAddrTable[j].Cluster
	})
	return info
}

// memberGroup returns a broker group's addresses (GET_BROKER_MEMBER_GROUP).
func (t *routeTable) memberGroup(name string) []body.BrokerAddr {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if g := t.brokers[name]; g != nil {
		return g.data().BrokerAddrs
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// deleteTopic removes a topic everywhere, or only from cluster's brokers.
func (t *routeTable) deleteTopic(topic, cluster string) {
	t.lock()
	defer t.mu.Unlock()
	if cluster == "" {
		if qs, found := t.topics[topic]; found {
			t.entries -= len(qs)
			t.bytes -= topicBytes(topic) + queueEntryBytes*int64(len(qs))
			delete(t.topics, topic)
		}
		return
	}
	names := t.clusters[cluster]
	qs := t.topics[topic]
	if len(names) == 0 || qs == nil {
		return
	}
	for name := range names {
		qs = t.removeQueues(topic, qs, name)
	}
}

// registerTopic adds queue data for a topic (REGISTER_TOPIC_IN_NAMESRV);
// like Java it ignores, whole, a list naming an unknown broker. It
// refuses (refused says why, nothing changed) a list that would take the
// route entries past maxEntries or the bytes past maxBytes (when > 0).
// The queue data take their broker's name from its group, so they hold
// no text of their own.
func (t *routeTable) registerTopic(topic string, qds []body.QueueData, maxEntries int, maxBytes int64) (refused string) {
	t.lock()
	defer t.mu.Unlock()
	qs, found := t.topics[topic]
	added := 0
	for i := range qds {
		g := t.brokers[qds[i].BrokerName]
		if g == nil {
			t.log.Warn("namesrv: register topic names an unknown broker", "topic", topic, "broker", qds[i].BrokerName)
			return ""
		}
		qds[i].BrokerName = g.name
		if qs.find(g.name) < 0 {
			added++ // at most: qds may name a broker twice
		}
	}
	if maxEntries > 0 && t.entries+added > maxEntries {
		t.log.Warn("namesrv: register topic refused (maxTopicRouteEntries)", "topic", topic, "entries", t.entries)
		return remarks.RouteEntriesFull(maxEntries)
	}
	add := queueEntryBytes * int64(added)
	if !found {
		add += topicBytes(topic)
	}
	if maxBytes > 0 && t.bytes+add > maxBytes {
		t.log.Warn("namesrv: register topic refused (maxRouteTableBytes)", "topic", topic, "bytes", t.bytes)
		return remarks.RouteBytesFull(add, t.bytes, maxBytes)
	}
	if !found {
		t.bytes += topicBytes(topic)
	}
	for _, qd := range qds {
		if qs.find(qd.BrokerName) < 0 {
			t.entries++
			t.bytes += queueEntryBytes
		}
		qs = qs.set(qd)
	}
	t.topics[topic] = qs
	return ""
}

// setWritePerm wipes (wipe=true) or restores the write permission of every
// topic on broker name; it returns the number of topics touched.
func (t *routeTable) setWritePerm(name string, wipe bool) int {
	t.lock()
	defer t.mu.Unlock()
	n := 0
	for _, qs := range t.topics {
		i := qs.find(name)
		if i < 0 {
			continue
		}
		if wipe {
			qs[i].Perm &^= body.PermWrite
		} else {
			qs[i].Perm = body.PermRead | body.PermWrite
		}
		n++
	}
	return n
}

// queueSet is a topic's queue data, one entry per broker name, sorted by
// name. Topics live on few brokers, so a sorted slice beats a map.
type queueSet []body.QueueData

func (qs queueSet) find(name string) int {
	for i := range qs {
		if qs[i].BrokerName == name {
			return i
		}
	}
	return -1
}

// set replaces or inserts qd's broker entry, keeping the order.
func (qs queueSet) set(qd body.QueueData) queueSet {
	if i := qs.find(qd.BrokerName); i >= 0 {
		qs[i] = qd
		return qs
	}
	i := sort.Search(len(qs), func(i int) bool { return qs[i].BrokerName > qd.BrokerName })
	out := make(queueSet, 0, len(qs)+1)
	out = append(out, qs[:i]...)
	out = append(out, qd)
	return append(out, qs[i:]...)
}

// removeQueues drops broker name's entry of topic, and the topic when it
// was the last; it returns what is left.
func (t *routeTable) removeQueues(topic string, qs queueSet, name string) queueSet {
	i := qs.find(name)
	if i < 0 {
		return qs
	}
	t.entries--
	t.bytes -= queueEntryBytes
	if len(qs) == 1 {
		t.bytes -= topicBytes(topic)
		delete(t.topics, topic)
		return nil
	}
	out := make(queueSet, 0, len(qs)-1)
	out = append(out, qs[:i]...)
	out = append(out, qs[i+1:]...)
	t.topics[topic] = out
	return out
}
