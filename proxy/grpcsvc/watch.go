package grpcsvc

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
)

// The route watch: how the endpoint follows a master change (controller
// mode) within a second instead of a route refresh period.
//
// Java's proxy (5.3.3, TopicRouteService) keeps routes in a Caffeine cache
// refreshed on access 20 s after they were loaded
// (topicRouteServiceCacheRefreshSeconds) and dropped 300 s after the last
// access (topicRouteServiceCacheExpiredSeconds); a send to a dead master
// fails until that refresh, and the SDK's retries (3 attempts, 10 ms to
// 1 s backoff) land on the same stale route. Here one request per
// interval, GET_BROKER_CLUSTER_INFO, watches every broker group's
// addresses; when the addresses of a group a cached route names differ
// from the route's (the old master gone, the new one registered with
// brokerId 0) that route is fetched again at once. The cost is one small request
// per interval whatever the number of topics, and none while no topic is
// in use. A failed write re-resolves the route on its own (Refresh; see
// send.go) without waiting for the watch.

// Defaults of the watch.
const (
	defaultWatchInterval = 200 * time.Millisecond
	defaultRouteIdle     = 300 * time.Second // topicRouteServiceCacheExpiredSeconds
	refreshParallel      = 4                 // route fetches at once after a change
)

// watch is the route watch's goroutine state.
type watch struct {
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

// StartWatch starts the route watch (RemotingConfig.WatchInterval); Close
// stops it. Calling it twice, or with the watch off, does nothing.
func (b *RemotingBackend) StartWatch() {
	if b.cfg.WatchInterval < 0 {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.w != nil {
		return
	}
	b.w = &watch{stop: make(chan struct{}), done: make(chan struct{})}
	go b.watchLoop(b.w)
}

// Close stops the route watch and waits for it.
func (b *RemotingBackend) Close() {
	b.mu.Lock()
	w := b.w
	b.mu.Unlock()
	if w == nil {
		return
	}
	w.once.Do(func() { close(w.stop) })
	<-w.done
}

func (b *RemotingBackend) watchLoop(w *watch) {
	defer close(w.done)
	t := time.NewTicker(b.cfg.WatchInterval)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		b.watchOnce()
	}
}

// watchOnce is one round: expire idle topics, ask for the broker groups,
// and fetch again the routes of the topics in use whose broker groups
// differ from the cluster's now. Each cached route is compared with the
// cluster itself (not with the previous round), so a change between a
// route's fetch and a round is not missed.
func (b *RemotingBackend) watchOnce() {
	if b.expireIdle(time.Now()) == 0 {
		return // nothing in use: nothing to watch
	}
	ctx, cancel := context.WithTimeout(context.Background(), max(b.cfg.WatchInterval, time.Second))
	defer cancel()
	cur, err := b.brokerGroups(ctx)
	if err != nil {
		b.log.Debug("grpc route watch: cluster info", "err", err)
		return
	}
	topics := b.staleTopics(cur)
	if len(topics) == 0 {
		return
	}
	b.log.Info("grpc route watch: broker addresses changed, refreshing routes", "topics", len(topics), "first", topics[0])
	b.refreshAll(ctx, topics)
}

// staleTopics lists the cached topics whose route's broker groups differ
// from cur, the cluster's. A topic refreshed once for a cluster state is
// not refreshed again until the cluster changes (a name server may keep
// presenting a route that differs, e.g. with an acting master).
func (b *RemotingBackend) staleTopics(cur map[string]string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for t, c := range b.routes {
		var have, want strings.Builder
		for _, bd := range c.r.BrokerDatas {
			have.WriteString(bd.BrokerName + ":" + fingerprint(bd.BrokerAddrs) + "|")
			want.WriteString(bd.BrokerName + ":" + cur[bd.BrokerName] + "|")
		}
		if w := want.String(); w != have.String() && w != c.seen {
			c.seen = w
			b.routes[t] = c
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return out
}

// expireIdle drops the routes no request used within RouteIdle and
// returns how many are left.
func (b *RemotingBackend) expireIdle(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	for t, c := range b.routes {
		if now.Sub(c.used) > b.cfg.RouteIdle {
			delete(b.routes, t)
		}
	}
	return len(b.routes)
}

// refreshAll fetches the routes of topics again, a few at once.
func (b *RemotingBackend) refreshAll(ctx context.Context, topics []string) {
	sem := make(chan struct{}, refreshParallel)
	var wg sync.WaitGroup
	for _, t := range topics {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			if _, err := b.refresh(ctx, t, false); err != nil && !errors.Is(err, ErrTopicNotFound) {
				b.log.Debug("grpc route watch: refresh", "topic", t, "err", err)
			}
		}()
	}
	wg.Wait()
}

// Refresh implements Backend: the route fetched from the name server now,
// replacing the cached one (kept when the fetch fails).
func (b *RemotingBackend) Refresh(ctx context.Context, topic string) (*body.TopicRouteData, error) {
	return b.refresh(ctx, topic, true)
}

func (b *RemotingBackend) refresh(ctx context.Context, topic string, touch bool) (*body.TopicRouteData, error) {
	now := time.Now()
	r, err := b.fetchRoute(ctx, topic)
	if err != nil {
		// The cached route stays: a group restarting as a whole is absent
		// for a moment (Java's reload keeps the old value likewise); a
		// write to it fails and re-resolves.
		return nil, err
	}
	b.store(topic, r, now, touch)
	return r, nil
}

// brokerGroups asks the name servers for the cluster's broker groups
// (GET_BROKER_CLUSTER_INFO): each group's name with its fingerprint, the
// ids and addresses it has (a group that is gone has none: "").
func (b *RemotingBackend) brokerGroups(ctx context.Context) (map[string]string, error) {
	var lastErr error
	for _, ns := range b.cfg.NamesrvAddrs {
		resp, err := b.cfg.Client.Invoke(ctx, ns, newRequest(codec.ReqGetBrokerClusterInfo, nil))
		if err != nil {
			lastErr = fmt.Errorf("cluster info from %s: %w", ns, err)
			continue
		}
		if resp.Code != int32(codec.RespSuccess) {
			lastErr = &BrokerError{Code: resp.Code, Remark: resp.Remark}
			continue
		}
		info, err := body.DecodeClusterInfo(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("cluster info from %s: %w", ns, err)
		}
		out := make(map[string]string, len(info.BrokerAddrTable))
		for _, bd := range info.BrokerAddrTable {
			out[bd.BrokerName] = fingerprint(bd.BrokerAddrs)
		}
		return out, nil
	}
	return nil, lastErr
}

// fingerprint is a broker group's ids and addresses in id order.
func fingerprint(addrs []body.BrokerAddr) string {
	s := append([]body.BrokerAddr(nil), addrs...)
	sort.Slice(s, func(i, j int) bool { return s[i].ID < s[j].ID })
	var sb strings.Builder
	for _, a := range s {
		sb.WriteString(strconv.FormatInt(a.ID, 10))
		sb.WriteByte('=')
		sb.WriteString(a.Addr)
		sb.WriteByte(';')
	}
	return sb.String()
}
