package broker

import (
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/filter"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// clientChannel is one client connection registered by heartbeat.
type clientChannel struct {
	conn       *transport.Conn
	clientID   string
	language   codec.LanguageCode
	version    int32
	lastUpdate int64 // unix ms; guarded by clientManager.mu
}

// gone reports whether the channel's connection has closed. Checked under
// clientManager.mu by every registration: a heartbeat handled on a pool
// worker after its connection's OnClose (connClosed, which takes the same
// lock after the close is marked) would otherwise register a dead channel
// that only the expiry scan removes, tens of seconds later — and until then
// the group's rebalance hands that client queues nobody pulls.
func (ch *clientChannel) gone() bool { return ch.conn != nil && ch.conn.Closed() }

// consumerGroup is the live membership of one consumer group.
type consumerGroup struct {
	consumeType, messageModel, consumeFromWhere string
	channels                                    map[*transport.Conn]*clientChannel
	subs                                        map[string]body.SubscriptionData // by topic
	compiled                                    map[string]heartbeatSub          // by topic, beside subs
	lastUpdate                                  int64
}

// heartbeatSub is a registered subscription compiled for the pull path
// (Java keeps the SQL92 part as ConsumerFilterData).
type heartbeatSub struct {
	version int64
	typ     string
	filter  filter.Subscription
	err     error // the expression does not compile: Java registers no filter data
}

// clientManager tracks producers and consumers by connection, like Java's
// ConsumerManager and ProducerManager together.
type clientManager struct {
	log     *slog.Logger
	filters *filter.Cache
	expiry  time.Duration
	notifyC chan string // groups whose membership changed

	mu        sync.RWMutex
	consumers map[string]*consumerGroup                     // guarded by mu
	producers map[string]map[*transport.Conn]*clientChannel // guarded by mu
}

func newClientManager(log *slog.Logger, expiry time.Duration, filters *filter.Cache) *clientManager {
	return &clientManager{
		log:       log,
		filters:   filters,
		expiry:    expiry,
		notifyC:   make(chan string, 1024),
		consumers: make(map[string]*consumerGroup),
		producers: make(map[string]map[*transport.Conn]*clientChannel),
	}
}

// registerProducer records group for conn.
func (m *clientManager) registerProducer(group string, ch clientChannel) {
	now := time.Now().UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch.gone() {
		return
	}
	set := m.producers[group]
	if set == nil {
		set = make(map[*transport.Conn]*clientChannel)
		m.producers[group] = set
	}
	if c := set[ch.conn]; c != nil {
		c.lastUpdate = now
		return
	}
	ch.lastUpdate = now
	set[ch.conn] = &ch
}

// registerConsumer records the consumer data of one heartbeat. It reports
// whether the group gained a member.
func (m *clientManager) registerConsumer(cd *body.ConsumerData, ch clientChannel, withoutSub bool) bool {
	now := time.Now().UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	if ch.gone() {
		return false
	}
	g := m.consumers[cd.GroupName]
	if g == nil {
		g = &consumerGroup{channels: make(map[*transport.Conn]*clientChannel), subs: make(map[string]body.SubscriptionData),
			compiled: make(map[string]heartbeatSub)}
		m.consumers[cd.GroupName] = g
	}
	g.consumeType, g.messageModel, g.consumeFromWhere = cd.ConsumeType, cd.MessageModel, cd.ConsumeFromWhere
	g.lastUpdate = now
	if !withoutSub {
		// Like Java: a heartbeat carries the full subscription set; topics
		// it no longer lists are dropped.
		for topic := range g.subs {
			if !slices.ContainsFunc(cd.SubscriptionDataSet, func(s body.SubscriptionData) bool { return s.Topic == topic }) {
				delete(g.subs, topic)
				delete(g.compiled, topic)
			}
		}
		for _, s := range cd.SubscriptionDataSet {
			old, had := g.subs[s.Topic]
			if had && s.SubVersion <= old.SubVersion {
				// Like Java (ConsumerGroupInfo.updateSubscription): only a
				// newer subscription replaces the group's; members'
				// heartbeats carry their own, older subVersions, and taking
				// those would answer the newest member's pulls
				// SUBSCRIPTION_NOT_LATEST.
				continue
			}
			g.subs[s.Topic] = s
			if !had || old.SubString != s.SubString || old.ExpressionType != s.ExpressionType || !slices.Equal(old.TagsSet, s.TagsSet) {
				g.compiled[s.Topic] = m.compile(&s)
			} else {
				hs := g.compiled[s.Topic]
				hs.version = s.SubVersion
				g.compiled[s.Topic] = hs
			}
		}
	}
	if c := g.channels[ch.conn]; c != nil {
		c.lastUpdate = now
		c.clientID = ch.clientID
		return false
	}
	ch.lastUpdate = now
	g.channels[ch.conn] = &ch
	return true
}

// unregister removes conn from the named groups ("" = skip); it returns the
// consumer groups that lost a member.
func (m *clientManager) unregister(conn *transport.Conn, producerGroup, consumerGroup string) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if set := m.producers[producerGroup]; set != nil {
		delete(set, conn)
		if len(set) == 0 {
			delete(m.producers, producerGroup)
		}
	}
	if g := m.consumers[consumerGroup]; g != nil {
		if _, ok := g.channels[conn]; ok {
			m.dropLocked(consumerGroup, g, conn)
			return []string{consumerGroup}
		}
	}
	return nil
}

func (m *clientManager) dropLocked(name string, g *consumerGroup, conn *transport.Conn) {
	delete(g.channels, conn)
	if len(g.channels) == 0 {
		delete(m.consumers, name)
	}
}

// connClosed removes conn everywhere and returns the consumer groups that
// lost a member.
func (m *clientManager) connClosed(conn *transport.Conn) []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	for name, set := range m.producers {
		delete(set, conn)
		if len(set) == 0 {
			delete(m.producers, name)
		}
	}
	var changed []string
	for name, g := range m.consumers {
		if _, ok := g.channels[conn]; ok {
			m.dropLocked(name, g, conn)
			changed = append(changed, name)
		}
	}
	return changed
}

// expire removes channels silent for longer than the expiry and returns
// the consumer groups that lost a member, and the expired connections.
func (m *clientManager) expire(now time.Time) ([]string, []*transport.Conn) {
	limit := now.Add(-m.expiry).UnixMilli()
	m.mu.Lock()
	defer m.mu.Unlock()
	var changed []string
	var dead []*transport.Conn
	for name, set := range m.producers {
		for conn, c := range set {
			if c.lastUpdate < limit || conn.Closed() {
				delete(set, conn)
				dead = append(dead, conn)
			}
		}
		if len(set) == 0 {
			delete(m.producers, name)
		}
	}
	for name, g := range m.consumers {
		lost := false
		for conn, c := range g.channels {
			if c.lastUpdate < limit || conn.Closed() {
				m.dropLocked(name, g, conn)
				dead = append(dead, conn)
				lost = true
			}
		}
		if lost {
			changed = append(changed, name)
		}
	}
	return changed, dead
}

// consumerIDs returns the client ids of group, sorted.
func (m *clientManager) consumerIDs(group string) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return nil
	}
	ids := make([]string, 0, len(g.channels))
	for _, c := range g.channels {
		ids = append(ids, c.clientID)
	}
	sort.Strings(ids)
	return ids
}

// consumerConns returns the connections of group.
func (m *clientManager) consumerConns(group string) []*transport.Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return nil
	}
	out := make([]*transport.Conn, 0, len(g.channels))
	for conn := range g.channels {
		out = append(out, conn)
	}
	return out
}

// consumerChannel is a snapshot of one member of a consumer group.
type consumerChannel struct {
	conn     *transport.Conn
	clientID string
	version  int32
}

// consumerChannels returns the members of group, sorted by client id.
func (m *clientManager) consumerChannels(group string) []consumerChannel {
	m.mu.RLock()
	g := m.consumers[group]
	var out []consumerChannel
	if g != nil {
		out = make([]consumerChannel, 0, len(g.channels))
		for conn, c := range g.channels {
			out = append(out, consumerChannel{conn: conn, clientID: c.clientID, version: c.version})
		}
	}
	m.mu.RUnlock()
	sort.Slice(out, func(i, j int) bool { return out[i].clientID < out[j].clientID })
	return out
}

// findConsumer returns the connection of clientID in group.
func (m *clientManager) findConsumer(group, clientID string) *transport.Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if g := m.consumers[group]; g != nil {
		for conn, c := range g.channels {
			if c.clientID == clientID {
				return conn
			}
		}
	}
	return nil
}

// subscription returns the heartbeat-registered subscription of group to
// topic; groupKnown reports whether the group is online at all.
func (m *clientManager) subscription(group, topic string) (sub body.SubscriptionData, found, groupKnown bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return sub, false, false
	}
	sub, found = g.subs[topic]
	return sub, found, true
}

// pullSubscription returns the compiled heartbeat subscription of group
// to topic; groupKnown reports whether the group is online at all.
func (m *clientManager) pullSubscription(group, topic string) (sub heartbeatSub, found, groupKnown bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return sub, false, false
	}
	sub, found = g.compiled[topic]
	return sub, found, true
}

// compile builds the pull filter of a heartbeat subscription: TAG from its
// tag set (codes by Java's String.hashCode, whatever codeSet the client
// computed), SQL92 through the shared cache.
func (m *clientManager) compile(s *body.SubscriptionData) heartbeatSub {
	hs := heartbeatSub{version: s.SubVersion, typ: s.ExpressionType}
	if filter.IsTagType(s.ExpressionType) {
		hs.filter.Tag = filter.TagFilterFromSet(s.SubString, s.TagsSet)
		return hs
	}
	hs.filter, hs.err = m.filters.Subscription(s.ExpressionType, s.SubString)
	return hs
}

// consumerConnection builds the GET_CONSUMER_CONNECTION_LIST body data.
func (m *clientManager) consumerConnection(group string) (body.ConsumerConnection, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	if g == nil {
		return body.ConsumerConnection{}, false
	}
	cc := body.ConsumerConnection{ConsumeType: g.consumeType, MessageModel: g.messageModel, ConsumeFromWhere: g.consumeFromWhere}
	for conn, c := range g.channels {
		cc.Connections = append(cc.Connections, body.Connection{ClientID: c.clientID, ClientAddr: conn.RemoteAddr(), Language: c.language, Version: c.version})
	}
	sort.Slice(cc.Connections, func(i, j int) bool { return cc.Connections[i].ClientID < cc.Connections[j].ClientID })
	for _, s := range g.subs {
		cc.Subscriptions = append(cc.Subscriptions, s)
	}
	sort.Slice(cc.Subscriptions, func(i, j int) bool { return cc.Subscriptions[i].Topic < cc.Subscriptions[j].Topic })
	return cc, true
}

// producerConnection lists the connections of a producer group.
func (m *clientManager) producerConnection(group string) []body.Connection {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []body.Connection
	for conn, c := range m.producers[group] {
		out = append(out, body.Connection{ClientID: c.clientID, ClientAddr: conn.RemoteAddr(), Language: c.language, Version: c.version})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ClientID < out[j].ClientID })
	return out
}

// producerTable lists every producer group's connections (Java's
// ProducerManager.getProducerTable), groups and clients sorted.
func (m *clientManager) producerTable() []body.ProducerGroup {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]body.ProducerGroup, 0, len(m.producers))
	for group, set := range m.producers {
		g := body.ProducerGroup{Group: group}
		for conn, c := range set {
			g.Producers = append(g.Producers, body.ProducerInfo{ClientID: c.clientID, RemoteIP: "/" + conn.RemoteAddr(),
				Language: c.language, Version: c.version, LastUpdate: c.lastUpdate})
		}
		if len(g.Producers) == 0 {
			continue
		}
		sort.Slice(g.Producers, func(i, j int) bool { return g.Producers[i].ClientID < g.Producers[j].ClientID })
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Group < out[j].Group })
	return out
}

// producerConn returns any live connection of a producer group.
func (m *clientManager) producerConn(group string) *transport.Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for conn := range m.producers[group] {
		if !conn.Closed() {
			return conn
		}
	}
	return nil
}

// groupsSubscribedTo lists online groups subscribing topic, sorted.
func (m *clientManager) groupsSubscribedTo(topic string) []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var out []string
	for name, g := range m.consumers {
		if _, ok := g.subs[topic]; ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

// notifyChanged queues a NOTIFY_CONSUMER_IDS_CHANGED for group.
func (m *clientManager) notifyChanged(groups ...string) {
	for _, g := range groups {
		select {
		case m.notifyC <- g:
		default:
			m.log.Warn("consumer change notification dropped: queue full", "group", g)
		}
	}
}

// sendNotify tells every member of group to rebalance (oneway).
func (m *clientManager) sendNotify(group string) {
	for _, conn := range m.consumerConns(group) {
		req := &codec.Frame{Code: int32(codec.ReqNotifyConsumerIdsChanged), Language: codec.LangJava, Version: codec.ServerVersion}
		req.Set("consumerGroup", group)
		if err := conn.InvokeOneway(req); err != nil {
			m.log.Debug("notify consumer ids changed", "group", group, "remote", conn.RemoteAddr(), "err", err)
		}
	}
}

// isRetryTopic reports whether topic is a %RETRY% topic.
func isRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupPrefix) }

// hasSubscriptions reports whether group is online with subscriptions.
func (m *clientManager) hasSubscriptions(group string) bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	g := m.consumers[group]
	return g != nil && len(g.subs) > 0
}

// findProducerByClientID returns a live connection registered by a
// producer heartbeat from clientID (ProducerManager.findChannel).
func (m *clientManager) findProducerByClientID(clientID string) *transport.Conn {
	m.mu.RLock()
	defer m.mu.RUnlock()
	for _, set := range m.producers {
		for conn, c := range set {
			if c.clientID == clientID && !conn.Closed() {
				return conn
			}
		}
	}
	return nil
}
