package namesrv

import (
	"sort"

	"github.com/rocketgo/rocketgo/codec/body"
)

// allTopics lists every topic.
func (t *routeTable) allTopics() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return sortedKeys(t.topics)
}

// topicsByCluster lists the topics served by any broker of cluster.
func (t *routeTable) topicsByCluster(cluster string) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	names := t.clusters[cluster]
	var out []string
	for topic, qs := range t.topics {
		for name := range names {
			if qs.find(name) >= 0 {
				out = append(out, topic)
				break
			}
		}
	}
	sort.Strings(out)
	return out
}

// systemTopics lists cluster and broker names (which brokers register as
// topics) and one broker address, as Java's getSystemTopicList does.
func (t *routeTable) systemTopics() body.TopicList {
	var l body.TopicList
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := map[string]struct{}{}
	for _, c := range sortedKeys(t.clusters) {
		for _, n := range append([]string{c}, sortedKeys(t.clusters[c])...) {
			if _, dup := seen[n]; !dup {
				seen[n] = struct{}{}
				l.Topics = append(l.Topics, n)
			}
		}
	}
	for _, name := range sortedKeys(t.brokers) {
		if bd := t.brokers[name].data(); len(bd.BrokerAddrs) > 0 {
			l.BrokerAddr = bd.BrokerAddrs[0].Addr
			break
		}
	}
	return l
}

// Topic system flags (Java TopicSysFlag).
const (
	flagUnit    = 1 << 0
	flagUnitSub = 1 << 1
)

// topicsByFlag lists topics whose first queue data's sysflag passes keep.
func (t *routeTable) topicsByFlag(keep func(flag int32) bool) []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var out []string
	for topic, qs := range t.topics {
		if len(qs) > 0 && keep(qs[0].TopicSysFlag) { // Java looks at any one broker's entry
			out = append(out, topic)
		}
	}
	sort.Strings(out)
	return out
}
