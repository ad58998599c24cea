package remoting

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// errTopicNotFound wraps a name server's TOPIC_NOT_EXIST.
var errTopicNotFound = errors.New("proxy remoting: topic route not found")

// nsError is a name server answer other than SUCCESS, kept to relay it.
type nsError struct {
	code   int32
	remark string
}

func (e *nsError) Error() string {
	return fmt.Sprintf("name server answered code %d: %s", e.code, e.remark)
}

// brokerTable is what the proxy knows of the cluster, asked of the name
// servers: every broker group (GET_BROKER_CLUSTER_INFO) and the routes of
// topics, each cached for ttl. Like Java's ClusterTopicRouteService it is
// the only place broker addresses come from.
type brokerTable struct {
	ns    *transport.Client
	addrs []string
	ttl   time.Duration

	mu     sync.Mutex
	groups *brokerGroups          // guarded by mu; nil: never fetched
	routes map[string]cachedRoute // guarded by mu
}

// brokerGroups is one cluster-info snapshot; read-only once built.
type brokerGroups struct {
	at     time.Time
	byName map[string]body.BrokerData
	names  []string          // sorted
	byAddr map[string]string // any member's address → broker name
}

type cachedRoute struct {
	at time.Time
	r  *body.TopicRouteData
}

// maxCachedRoutes bounds the route cache: past it the cache starts over.
const maxCachedRoutes = 10000

func newBrokerTable(ns *transport.Client, addrs []string, ttl time.Duration) *brokerTable {
	return &brokerTable{ns: ns, addrs: addrs, ttl: ttl, routes: map[string]cachedRoute{}}
}

// nsRequest is a request frame to a name server, as Java's proxy sends it.
func nsRequest(code codec.RequestCode) *codec.Frame {
	return &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion}
}

// ask sends req to the name servers in order until one answers.
func (t *brokerTable) ask(ctx context.Context, req func() *codec.Frame) (*codec.Frame, error) {
	var last error
	for _, a := range t.addrs {
		resp, err := t.ns.Invoke(ctx, a, req())
		if err != nil {
			last = fmt.Errorf("name server %s: %w", a, err)
			continue
		}
		return resp, nil
	}
	if last == nil {
		last = errors.New("proxy remoting: no name server")
	}
	return nil, last
}

// snapshot returns the cluster info, fetched again once older than ttl
// (or at once when fresh is set: a broker name was not in it).
func (t *brokerTable) snapshot(ctx context.Context, fresh bool) (*brokerGroups, error) {
	t.mu.Lock()
	g := t.groups
	t.mu.Unlock()
	if g != nil && !fresh && time.Since(g.at) < t.ttl {
		return g, nil
	}
	resp, err := t.ask(ctx, func() *codec.Frame { return nsRequest(codec.ReqGetBrokerClusterInfo) })
	if err != nil {
		if g != nil {
			return g, nil // keep serving what we knew
		}
		return nil, fmt.Errorf("proxy remoting: cluster info: %w", err)
	}
	if resp.Code != int32(codec.RespSuccess) {
		if g != nil {
			return g, nil
		}
		return nil, &nsError{code: resp.Code, remark: resp.Remark}
	}
	info, err := body.DecodeClusterInfo(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("proxy remoting: cluster info: %w", err)
	}
	ng := &brokerGroups{at: time.Now(), byName: map[string]body.BrokerData{}, byAddr: map[string]string{}}
	for _, bd := range info.BrokerAddrTable {
		bd.SortAddrs()
		ng.byName[bd.BrokerName] = bd
		ng.names = append(ng.names, bd.BrokerName)
		for _, a := range bd.BrokerAddrs {
			ng.byAddr[a.Addr] = bd.BrokerName
		}
	}
	sort.Strings(ng.names)
	t.mu.Lock()
	t.groups = ng
	t.mu.Unlock()
	return ng, nil
}

// master is broker name's master address. Like Java's proxy, a request
// always goes to the master of the broker group it names.
func (t *brokerTable) master(ctx context.Context, name string) (string, error) {
	for _, fresh := range []bool{false, true} {
		g, err := t.snapshot(ctx, fresh)
		if err != nil {
			return "", err
		}
		if bd, ok := g.byName[name]; ok {
			if a, ok := bd.Addr(0); ok {
				return a, nil
			}
		}
	}
	return "", fmt.Errorf("%w: broker %s has no master", errTopicNotFound, name)
}

// nameOf is the broker name of a member address, "" when unknown.
func (t *brokerTable) nameOf(ctx context.Context, addr string) string {
	g, err := t.snapshot(ctx, false)
	if err != nil {
		return ""
	}
	return g.byAddr[addr]
}

// route asks the name servers for topic's route (uncached): what a
// client's GET_ROUTEINFO_BY_TOPIC relays.
func (t *brokerTable) route(ctx context.Context, topic string) (*body.TopicRouteData, error) {
	resp, err := t.ask(ctx, func() *codec.Frame {
		f := nsRequest(codec.ReqGetRouteinfoByTopic)
		h := header.GetRouteInfoRequest{Topic: topic, AcceptStandardJsonOnly: true}
		h.Encode(f)
		return f
	})
	if err != nil {
		return nil, err
	}
	if resp.Code != int32(codec.RespSuccess) {
		e := &nsError{code: resp.Code, remark: resp.Remark}
		if resp.Code == int32(codec.RespTopicNotExist) {
			return nil, fmt.Errorf("%w: %w", errTopicNotFound, e)
		}
		return nil, e
	}
	r, err := body.DecodeTopicRouteData(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("proxy remoting: route of %s: %w", topic, err)
	}
	t.mu.Lock()
	if len(t.routes) >= maxCachedRoutes {
		t.routes = map[string]cachedRoute{}
	}
	t.routes[topic] = cachedRoute{at: time.Now(), r: &r}
	t.mu.Unlock()
	return &r, nil
}

// cachedRouteOf is topic's route, reused for ttl: the broker choice for
// requests that name no broker.
func (t *brokerTable) cachedRouteOf(ctx context.Context, topic string) (*body.TopicRouteData, error) {
	t.mu.Lock()
	c, ok := t.routes[topic]
	t.mu.Unlock()
	if ok && time.Since(c.at) < t.ttl {
		return c.r, nil
	}
	return t.route(ctx, topic)
}
