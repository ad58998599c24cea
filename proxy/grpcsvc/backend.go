package grpcsvc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

// Backend is everything the service needs from RocketMQ: routes and
// remoting requests to broker addresses. The remoting implementation
// (NewRemotingBackend) serves both local and cluster mode.
type Backend interface {
	// Route returns topic's route, as the name server answers it (in local
	// mode restricted to this process's broker). A topic the name server
	// does not know is an error wrapping ErrTopicNotFound.
	Route(ctx context.Context, topic string) (*body.TopicRouteData, error)
	// Invoke sends req to the broker at addr and waits for its response.
	Invoke(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error)
	// InvokeOneway sends req to addr without waiting (END_TRANSACTION).
	InvokeOneway(ctx context.Context, addr string, req *codec.Frame) error
	// Forget drops what the backend cached about topic's route, after a
	// request to one of its brokers failed.
	Forget(topic string)
	// Refresh asks for topic's route now, bypassing (and replacing) what
	// was cached: a write that failed re-resolves its broker with it.
	Refresh(ctx context.Context, topic string) (*body.TopicRouteData, error)
}

// ErrTopicNotFound is wrapped by Route for a topic without a route.
var ErrTopicNotFound = errors.New("grpcsvc: topic route not found")

// BrokerError is a remoting response other than SUCCESS.
type BrokerError struct {
	Code   int32
	Remark string
}

func (e *BrokerError) Error() string {
	return fmt.Sprintf("broker answered code %d: %s", e.Code, e.Remark)
}

// RemotingConfig configures NewRemotingBackend.
type RemotingConfig struct {
	// NamesrvAddrs are the name servers asked for routes, tried in order.
	NamesrvAddrs []string
	// LocalBroker, when set, is local mode: routes keep only this broker
	// name, so every request goes to this process's broker.
	LocalBroker string
	// RouteTTL is how long a route is reused before it is asked again;
	// 0 means 3 s.
	RouteTTL time.Duration
	// WatchInterval is the route watch's period (watch.go): one
	// GET_BROKER_CLUSTER_INFO per period while some topic is in use, and
	// the routes of the topics on a broker group whose addresses changed
	// fetched again at once. 0 means 200 ms; negative turns the watch off
	// (routes then follow a master change after RouteTTL or a failed
	// write). StartWatch starts it.
	WatchInterval time.Duration
	// RouteIdle drops a topic's route (and stops watching it) when no
	// request used it for this long (Java's
	// topicRouteServiceCacheExpiredSeconds); 0 means 300 s.
	RouteIdle time.Duration
	// Client sends the requests; its Router receives what brokers send
	// back (CHECK_TRANSACTION_STATE). Required.
	Client *transport.Client
	Logger *slog.Logger
}

// RemotingBackend is Backend over the remoting client.
type RemotingBackend struct {
	cfg RemotingConfig
	log *slog.Logger

	mu     sync.Mutex
	routes map[string]cachedRoute // guarded by mu
	w      *watch                 // guarded by mu; nil until StartWatch
}

type cachedRoute struct {
	r    *body.TopicRouteData
	at   time.Time // fetched
	used time.Time // last asked for by a request
	// seen is the cluster state (watch.go) the watch last refreshed this
	// route for.
	seen string
}

// NewRemotingBackend returns a backend asking cfg.NamesrvAddrs for routes.
func NewRemotingBackend(cfg RemotingConfig) (*RemotingBackend, error) {
	if cfg.Client == nil {
		return nil, errors.New("grpcsvc: RemotingConfig.Client is required")
	}
	var addrs []string
	for _, a := range cfg.NamesrvAddrs {
		for _, s := range strings.Split(a, ";") {
			if s = strings.TrimSpace(s); s != "" {
				addrs = append(addrs, s)
			}
		}
	}
	if len(addrs) == 0 {
		return nil, errors.New("grpcsvc: no name server address")
	}
	cfg.NamesrvAddrs = addrs
	if cfg.RouteTTL <= 0 {
		cfg.RouteTTL = 3 * time.Second
	}
	if cfg.WatchInterval == 0 {
		cfg.WatchInterval = defaultWatchInterval
	}
	if cfg.RouteIdle <= 0 {
		cfg.RouteIdle = defaultRouteIdle
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &RemotingBackend{cfg: cfg, log: cfg.Logger, routes: map[string]cachedRoute{}}, nil
}

// Route implements Backend.
func (b *RemotingBackend) Route(ctx context.Context, topic string) (*body.TopicRouteData, error) {
	now := time.Now()
	b.mu.Lock()
	c, ok := b.routes[topic]
	if ok {
		c.used = now
		b.routes[topic] = c
	}
	b.mu.Unlock()
	if ok && now.Sub(c.at) < b.cfg.RouteTTL {
		return c.r, nil
	}
	r, err := b.fetchRoute(ctx, topic)
	if err != nil {
		return nil, err
	}
	b.store(topic, r, now, true)
	return r, nil
}

// store caches r as topic's route fetched at now; touch marks it used now
// (a request's fetch, not the watch's).
func (b *RemotingBackend) store(topic string, r *body.TopicRouteData, now time.Time, touch bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	used := now
	c, ok := b.routes[topic]
	if !touch {
		if !ok {
			return // expired meanwhile: not in use any more
		}
		used = c.used
	}
	b.routes[topic] = cachedRoute{r: r, at: now, used: used, seen: c.seen}
	if len(b.routes) > 10000 { // bound: forget everything rather than grow
		b.routes = map[string]cachedRoute{topic: {r: r, at: now, used: used}}
	}
}

// Forget implements Backend.
func (b *RemotingBackend) Forget(topic string) {
	b.mu.Lock()
	delete(b.routes, topic)
	b.mu.Unlock()
}

func (b *RemotingBackend) fetchRoute(ctx context.Context, topic string) (*body.TopicRouteData, error) {
	var lastErr error
	for _, ns := range b.cfg.NamesrvAddrs {
		h := header.GetRouteInfoRequest{Topic: topic, AcceptStandardJsonOnly: true}
		req := newRequest(codec.ReqGetRouteinfoByTopic, &h)
		resp, err := b.cfg.Client.Invoke(ctx, ns, req)
		if err != nil {
			lastErr = fmt.Errorf("route of %s from %s: %w", topic, ns, err)
			continue
		}
		if resp.Code == int32(codec.RespTopicNotExist) {
			return nil, fmt.Errorf("%w: %s", ErrTopicNotFound, topic)
		}
		if resp.Code != int32(codec.RespSuccess) {
			lastErr = &BrokerError{Code: resp.Code, Remark: resp.Remark}
			continue
		}
		r, err := body.DecodeTopicRouteData(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("route of %s: %w", topic, err)
		}
		if b.cfg.LocalBroker != "" {
			restrict(&r, b.cfg.LocalBroker)
			if len(r.QueueDatas) == 0 {
				return nil, fmt.Errorf("%w: %s (not on broker %s)", ErrTopicNotFound, topic, b.cfg.LocalBroker)
			}
		}
		return &r, nil
	}
	return nil, lastErr
}

// restrict keeps only broker name's queues and addresses in r.
func restrict(r *body.TopicRouteData, name string) {
	qs := r.QueueDatas[:0]
	for _, q := range r.QueueDatas {
		if q.BrokerName == name {
			qs = append(qs, q)
		}
	}
	r.QueueDatas = qs
	bs := r.BrokerDatas[:0]
	for _, bd := range r.BrokerDatas {
		if bd.BrokerName == name {
			bs = append(bs, bd)
		}
	}
	r.BrokerDatas = bs
}

// Invoke implements Backend.
func (b *RemotingBackend) Invoke(ctx context.Context, addr string, req *codec.Frame) (*codec.Frame, error) {
	return b.cfg.Client.Invoke(ctx, addr, req)
}

// InvokeOneway implements Backend.
func (b *RemotingBackend) InvokeOneway(ctx context.Context, addr string, req *codec.Frame) error {
	return b.cfg.Client.InvokeOneway(ctx, addr, req)
}

// encoder is a generated request header.
type encoder interface{ Encode(f *codec.Frame) }

// newRequest is a request frame as Java's proxy sends it.
func newRequest(code codec.RequestCode, h encoder) *codec.Frame {
	f := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion}
	if h != nil {
		h.Encode(f)
	}
	return f
}

// masterAddr is broker name's master address in r.
func masterAddr(r *body.TopicRouteData, name string) (string, bool) {
	for i := range r.BrokerDatas {
		if r.BrokerDatas[i].BrokerName == name {
			return r.BrokerDatas[i].Addr(0)
		}
	}
	return "", false
}
