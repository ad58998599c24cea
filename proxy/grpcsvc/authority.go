package grpcsvc

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/auth"
	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
)

// ClusterAuthorityConfig configures NewClusterAuthority; zero durations and
// sizes take Java's ProxyConfig defaults (userCacheRefreshSeconds 20,
// userCacheExpiredSeconds 300, userCacheMaxNum 20000; the same for ACLs).
type ClusterAuthorityConfig struct {
	// Cluster is rocketMQClusterName: users and ACLs are read from one of
	// the brokers of its route (Java's findOneBroker(clusterName)).
	Cluster string
	Refresh time.Duration
	Expire  time.Duration
	MaxNum  int
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// ClusterAuthority is Authority for a proxy in cluster mode, as Java's
// ClusterMetadataService: AUTH_GET_USER and AUTH_GET_ACL to a broker of
// the cluster (through the backend, so signed as the backend's client
// signs: enableAclRpcHookForClusterMode), cached. An entry is read again
// when older than Refresh (a failed read keeps the old value, as Guava's
// refreshAfterWrite), and dropped when unused for Expire; an absent user or
// ACL is cached too.
type ClusterAuthority struct {
	backend Backend
	cfg     ClusterAuthorityConfig
	timeout time.Duration

	mu    sync.Mutex
	users map[string]*cached[auth.User] // guarded by mu
	acls  map[string]*cached[auth.ACL]  // guarded by mu
}

// cached is one read: v nil when the broker has none.
type cached[T any] struct {
	v        *T
	fetched  time.Time
	accessed time.Time
}

// NewClusterAuthority returns an authority reading from backend's brokers.
func NewClusterAuthority(backend Backend, cfg ClusterAuthorityConfig) *ClusterAuthority {
	if cfg.Refresh <= 0 {
		cfg.Refresh = 20 * time.Second
	}
	if cfg.Expire <= 0 {
		cfg.Expire = 300 * time.Second
	}
	if cfg.MaxNum <= 0 {
		cfg.MaxNum = 20000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &ClusterAuthority{backend: backend, cfg: cfg, timeout: 3 * time.Second,
		users: map[string]*cached[auth.User]{}, acls: map[string]*cached[auth.ACL]{}}
}

// User implements Authority.
func (c *ClusterAuthority) User(ctx context.Context, name string) (auth.User, bool, error) {
	u, err := lookup(ctx, c, c.users, name, func(ctx context.Context, addr string) (*auth.User, error) {
		h := header.GetUserRequest{Username: name}
		resp, err := c.backend.Invoke(ctx, addr, newRequest(codec.ReqAuthGetUser, &h))
		if err != nil {
			return nil, err
		}
		if resp.Code != int32(codec.RespSuccess) {
			return nil, &BrokerError{Code: resp.Code, Remark: resp.Remark}
		}
		if len(resp.Body) == 0 {
			return nil, nil
		}
		info, err := body.DecodeUserInfo(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("AUTH_GET_USER %s: %w", name, err)
		}
		u := auth.UserFromInfo(&info)
		return &u, nil
	})
	if err != nil || u == nil {
		return auth.User{}, false, err
	}
	return *u, true, nil
}

// Authorize implements Authority: the user (for its type), then its ACL.
func (c *ClusterAuthority) Authorize(ctx context.Context, user string, ip netip.Addr, action auth.Action, res auth.Resource) (string, bool, error) {
	one := [1]auth.Resource{res}
	if user == "" {
		remark, ok := auth.Evaluate(user, nil, nil, ip, action, one[:])
		return remark, ok, nil
	}
	u, found, err := c.User(ctx, user)
	if err != nil {
		return "", false, err
	}
	if !found {
		remark, ok := auth.Evaluate(user, nil, nil, ip, action, one[:])
		return remark, ok, nil
	}
	if u.Type == auth.UserSuper {
		return "", true, nil
	}
	acl, err := lookup(ctx, c, c.acls, user, func(ctx context.Context, addr string) (*auth.ACL, error) {
		subject := "User:" + user
		h := header.GetAclRequest{Subject: subject}
		resp, err := c.backend.Invoke(ctx, addr, newRequest(codec.ReqAuthGetAcl, &h))
		if err != nil {
			return nil, err
		}
		if resp.Code != int32(codec.RespSuccess) {
			return nil, &BrokerError{Code: resp.Code, Remark: resp.Remark}
		}
		if len(resp.Body) == 0 {
			return nil, nil
		}
		info, err := body.DecodeAclInfo(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("AUTH_GET_ACL %s: %w", subject, err)
		}
		a, ok := auth.ACLFromInfo(&info, subject)
		if !ok {
			return nil, nil
		}
		a.Prepare()
		return &a, nil
	})
	if err != nil {
		return "", false, err
	}
	remark, ok := auth.Evaluate(user, &u, acl, ip, action, one[:])
	return remark, ok, nil
}

// lookup returns m[key], reading it with fetch from one broker of the
// cluster when absent or older than Refresh.
func lookup[T any](ctx context.Context, c *ClusterAuthority, m map[string]*cached[T], key string,
	fetch func(ctx context.Context, addr string) (*T, error)) (*T, error) {
	now := c.cfg.Now()
	c.mu.Lock()
	e, ok := m[key]
	if ok {
		e.accessed = now
	}
	c.mu.Unlock()
	if ok && now.Sub(e.fetched) < c.cfg.Refresh {
		return e.v, nil
	}
	v, err := func() (*T, error) {
		ctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		addr, found, err := c.brokerAddr(ctx)
		if err != nil || !found {
			return nil, err
		}
		return fetch(ctx, addr)
	}()
	if err != nil {
		if ok {
			return e.v, nil // a failed refresh keeps the old value
		}
		return nil, err
	}
	c.mu.Lock()
	if len(m) >= c.cfg.MaxNum {
		evict(m, now, c.cfg.Expire)
	}
	m[key] = &cached[T]{v: v, fetched: now, accessed: now}
	c.mu.Unlock()
	return v, nil
}

// evict drops the entries unused for expire, and all of them when that is
// not enough (the bound holds whatever names clients send).
func evict[T any](m map[string]*cached[T], now time.Time, expire time.Duration) {
	n := len(m)
	for k, e := range m {
		if now.Sub(e.accessed) >= expire {
			delete(m, k)
		}
	}
	if len(m) == n {
		clear(m)
	}
}

// brokerAddr is the master of a random broker of the cluster's route, or
// another of its addresses when it has no master (Java: a random
// BrokerData, selectBrokerAddr). found is false for a cluster without a
// route: it has no users (Java's EMPTY_USER).
func (c *ClusterAuthority) brokerAddr(ctx context.Context) (addr string, found bool, err error) {
	r, err := c.backend.Route(ctx, c.cfg.Cluster)
	if errors.Is(err, ErrTopicNotFound) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	if len(r.BrokerDatas) == 0 {
		return "", false, nil
	}
	bd := &r.BrokerDatas[rand.IntN(len(r.BrokerDatas))]
	if a, ok := bd.Addr(0); ok {
		return a, true, nil
	}
	if len(bd.BrokerAddrs) == 0 {
		return "", false, nil
	}
	return bd.BrokerAddrs[rand.IntN(len(bd.BrokerAddrs))].Addr, true, nil
}
