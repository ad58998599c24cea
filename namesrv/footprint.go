package namesrv

import "fmt"

// What the route table retains, in bytes: an estimate per item of what the
// Go runtime really holds (the item's allocations rounded to size classes,
// plus its share of the maps it sits in), kept in routeTable.bytes and
// bounded by maxRouteTableBytes. TestFootprintMatchesHeap compares it with
// runtime.MemStats for tables of distinct long topics, shared topics,
// mappings and filter server lists: the estimate is 0.8–1.3 times the heap.
//
// A map slot costs its key and value plus a control byte, divided by the
// occupancy of a Swiss table (between 7/16 and 7/8, doubling as it grows):
// about 1.6 times the slot on average, 2.3 at worst.
const (
	// topicSlotBytes: one t.topics slot (string key 16, queueSet 24).
	topicSlotBytes = 64
	// queueEntryBytes: one (topic, broker name) QueueData (32) in a
	// queueSet, or in the registration's queue array that a new topic
	// points into (it lives as long as any of its topics does), rounded up
	// for the size-class slack of small slices.
	queueEntryBytes = 40
	// mappingTopicBytes: a t.mappings slot and its inner one-group map.
	mappingTopicBytes = 64 + 512
	// mappingEntryBytes: one broker's slot in a topic's mapping map.
	mappingEntryBytes = 64
	// liveBytes: a liveInfo (64) and its t.live slot (brokerKey 32 + 8).
	liveBytes = 64 + 64
	// filterListBytes: a t.filters slot (brokerKey 32 + slice 24); each
	// server adds its string header and text.
	filterListBytes = 96
	// groupBytes: a brokerGroup (64), its t.brokers slot and its addrs
	// map (one group of 8 slots); each address past 8 adds addrSlotBytes.
	groupBytes    = 64 + 40 + 256 + 96
	addrSlotBytes = 40
	// clusterBytes: a t.clusters slot and its inner set; each broker name
	// in the set adds nameSlotBytes (the name's text is the group's).
	clusterBytes  = 40 + 192
	nameSlotBytes = 32
)

// strBytes is what a string or byte slice of n bytes allocates: Go's size
// classes step by 16 up to 256 bytes and by at most an eighth above.
func strBytes(n int) int64 {
	switch {
	case n <= 0:
		return 0
	case n <= 256:
		return int64(n+15) &^ 15
	default:
		return int64(n) + int64(n)/8
	}
}

// topicBytes: a topic new to t.topics (its name and slot), without its
// queue entries.
func topicBytes(name string) int64 { return topicSlotBytes + strBytes(len(name)) }

// mappingTopicBytesFor: a topic new to t.mappings, without its entries.
func mappingTopicBytesFor(topic string) int64 { return mappingTopicBytes + strBytes(len(topic)) }

func mappingBytes(bname string, js []byte) int64 {
	return mappingEntryBytes + strBytes(len(bname)) + strBytes(cap(js))
}

func filterBytes(fs []string) int64 {
	if fs == nil {
		return 0
	}
	n := filterListBytes + 16*int64(cap(fs))
	for _, s := range fs {
		n += strBytes(len(s))
	}
	return n
}

// keyBytesLocked: a broker process's liveness entry and filter servers.
// Caller holds mu.
func (t *routeTable) keyBytesLocked(key brokerKey) int64 {
	var n int64
	if li := t.live[key]; li != nil {
		n += liveBytes + strBytes(len(key.cluster)) + strBytes(len(key.addr)) + strBytes(len(li.haAddr))
	}
	return n + filterBytes(t.filters[key])
}

// groupBytesLocked: a broker name's group. Caller holds mu.
func (t *routeTable) groupBytesLocked(name string) int64 {
	g := t.brokers[name]
	if g == nil {
		return 0
	}
	n := groupBytes + strBytes(len(g.name)) + strBytes(len(g.cluster)) + strBytes(len(g.zone))
	if len(g.addrs) > 8 {
		n += addrSlotBytes * int64(len(g.addrs)-8)
	}
	for _, a := range g.addrs {
		n += strBytes(len(a)) // mostly the live key's text: counted twice, erring high
	}
	return n
}

// clusterBytesLocked: a cluster's set of broker names. Caller holds mu.
func (t *routeTable) clusterBytesLocked(cluster string) int64 {
	names, found := t.clusters[cluster]
	if !found {
		return 0
	}
	return clusterBytes + strBytes(len(cluster)) + nameSlotBytes*int64(len(names))
}

// brokerBytesLocked is what one registration's broker side holds: its
// cluster set, its group and its process entries. Registration and
// unregistration change t.bytes by its difference around them, so a
// broker that registers again replaces its bytes. Caller holds mu.
func (t *routeTable) brokerBytesLocked(cluster, name string, key brokerKey) int64 {
	return t.clusterBytesLocked(cluster) + t.groupBytesLocked(name) + t.keyBytesLocked(key)
}

// footprintLocked recomputes bytes from the whole table (tests check that
// the running count equals it). Caller holds mu.
func (t *routeTable) footprintLocked() int64 {
	var n int64
	for topic, qs := range t.topics {
		n += topicBytes(topic) + queueEntryBytes*int64(len(qs))
	}
	for topic, bm := range t.mappings {
		n += mappingTopicBytesFor(topic)
		for bname, js := range bm {
			n += mappingBytes(bname, js)
		}
	}
	for c := range t.clusters {
		n += t.clusterBytesLocked(c)
	}
	for name := range t.brokers {
		n += t.groupBytesLocked(name)
	}
	keys := make(map[brokerKey]struct{}, len(t.live)+len(t.filters))
	for k := range t.live {
		keys[k] = struct{}{}
	}
	for k := range t.filters {
		keys[k] = struct{}{}
	}
	for k := range keys {
		n += t.keyBytesLocked(k)
	}
	return n
}

// registrationBytesLocked estimates what r adds to the table: topics and
// route entries new for its broker name, new or grown mappings, and its
// broker side, less the topics deleteTopicWithBrokerRegistration drops. It
// errs high: it does not know yet whether r is a master, whose topics
// alone are kept. Caller holds mu.
func (t *routeTable) registrationBytesLocked(r *registration, key brokerKey) int64 {
	var add int64
	if r.hasBody {
		for i := range r.body.Topics {
			name := r.body.Topics[i].TopicName
			qs, found := t.topics[name]
			switch {
			case !found:
				add += topicBytes(name) + queueEntryBytes
			case qs.find(r.name) < 0:
				add += queueEntryBytes
			}
		}
		for _, m := range r.body.Mappings {
			bm, found := t.mappings[m.Topic]
			if !found {
				add += mappingTopicBytesFor(m.Topic)
			}
			if old, had := bm[m.BrokerName]; had {
				add += mappingBytes(m.BrokerName, m.JSON) - mappingBytes(m.BrokerName, old)
			} else {
				add += mappingBytes(m.BrokerName, m.JSON)
			}
		}
		if r.deleteMissingTopics && len(r.body.Mappings) == 0 && r.id == masterID {
			add -= t.droppedTopicBytesLocked(r)
		}
	}
	// The broker side: its process entry replaces the one it had.
	add += liveBytes + strBytes(len(r.cluster)) + strBytes(len(r.addr)) + strBytes(len(r.haAddr))
	if fs := r.body.FilterServerList; fs != nil {
		add += filterBytes(fs)
		if len(fs) == 0 {
			add -= filterListBytes // an empty list deletes the entry
		}
		add -= filterBytes(t.filters[key])
	}
	if li := t.live[key]; li != nil {
		add -= liveBytes + strBytes(len(key.cluster)) + strBytes(len(key.addr)) + strBytes(len(li.haAddr))
	}
	if g := t.brokers[r.name]; g == nil {
		add += groupBytes + strBytes(len(r.name)) + strBytes(len(r.cluster)) + strBytes(len(r.zone)) + strBytes(len(r.addr))
	} else {
		add += strBytes(len(r.zone)) - strBytes(len(g.zone))
		if g.addrs[r.id] != r.addr {
			add += addrSlotBytes + strBytes(len(r.addr))
		}
	}
	if names, found := t.clusters[r.cluster]; !found {
		add += clusterBytes + strBytes(len(r.cluster)) + nameSlotBytes
	} else if _, in := names[r.name]; !in {
		add += nameSlotBytes
	}
	return add
}

// droppedTopicBytesLocked: the entries of r's broker name that r does not
// list, which deleteTopicWithBrokerRegistration removes. Caller holds mu.
func (t *routeTable) droppedTopicBytesLocked(r *registration) int64 {
	keep := make(map[string]struct{}, len(r.body.Topics))
	for i := range r.body.Topics {
		keep[r.body.Topics[i].TopicName] = struct{}{}
	}
	var n int64
	for topic, qs := range t.topics {
		if qs.find(r.name) < 0 {
			continue
		}
		if _, kept := keep[topic]; kept {
			continue
		}
		n += queueEntryBytes
		if len(qs) == 1 {
			n += topicBytes(topic)
		}
	}
	return n
}

// overBoundsLocked says why r may not register ("" when it may): a new
// broker address past maxBrokers, route entries (topics and mappings new
// for this broker name) past maxEntries, or bytes past maxBytes. Caller
// holds mu.
func (t *routeTable) overBoundsLocked(r *registration, key brokerKey) string {
	if _, known := t.live[key]; !known && r.maxBrokers > 0 && len(t.live) >= r.maxBrokers {
		return fmt.Sprintf("register broker refused: %d brokers are registered (maxBrokers)", len(t.live))
	}
	if r.maxEntries > 0 && r.hasBody {
		added := 0
		for i := range r.body.Topics {
			if t.topics[r.body.Topics[i].TopicName].find(r.name) < 0 {
				added++
			}
		}
		for _, m := range r.body.Mappings {
			if _, had := t.mappings[m.Topic][m.BrokerName]; !had {
				added++
			}
		}
		if t.entries+added > r.maxEntries {
			return fmt.Sprintf("register broker refused: %d new topic route entries on top of %d pass maxTopicRouteEntries %d",
				added, t.entries, r.maxEntries)
		}
	}
	if r.maxBytes > 0 {
		if add := t.registrationBytesLocked(r, key); add > 0 && t.bytes+add > r.maxBytes {
			return fmt.Sprintf("register broker refused: %d more bytes on top of the %d the route table holds pass maxRouteTableBytes %d",
				add, t.bytes, r.maxBytes)
		}
	}
	return ""
}
