package namesrv

import (
	"strings"
	"sync"
)

// routeCache keeps the encoded GET_ROUTEINFO_BY_TOPIC bodies of big routes
// (a topic on thousands of brokers, with filter servers), valid while the
// route table's gen has not moved. Building and encoding one of 1.3 MB
// (2000 brokers, 20 filter servers each) takes 22–29 ms and allocates
// 7 MB (BenchmarkBigRoute/build); a client asking for it over and over
// without reading queues up to maxInflightRequestsPerConnection requests
// on the route pool per connection, and four such clients kept the pool
// busy for about 40 s: another client's route query took 40 s. From the
// cache a reply costs 0.3 µs (BenchmarkBigRoute/handler) and its copy
// into the connection's buffer; the same attack left other queries at
// p50 5 ms, p99 26–63 ms (2 loaded cores), until the transport closed the
// non-reading connections at maxUnsentBytesPerConnection.
//
// Small routes are built each time (cheaper than they are worth keeping);
// the cache holds at most routeCacheBytes, a fraction of the table bound.
type routeCache struct {
	mu    sync.Mutex
	m     map[routeCacheKey]routeCacheEntry // guarded by mu
	bytes int                               // of the bodies in m; guarded by mu
}

type routeCacheKey struct {
	topic               string
	browser             bool // standard JSON keys
	supportActingMaster bool
}

type routeCacheEntry struct {
	gen       uint64 // route table gen read before the route was built
	orderConf string // the KV order config the body carries
	body      []byte // never written after it is cached
}

const (
	routeCacheMin   = 64 << 10 // bodies shorter than this are not kept
	routeCacheBytes = 16 << 20
)

// get returns the cached body for k if it was built at gen with orderConf.
func (c *routeCache) get(k routeCacheKey, gen uint64, orderConf string) ([]byte, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, found := c.m[k]
	if !found || e.gen != gen || e.orderConf != orderConf {
		return nil, false
	}
	return e.body, true
}

// put keeps a body built at gen, when it is big enough to be worth it;
// entries of other gens go first, then any, to stay within the bound.
func (c *routeCache) put(k routeCacheKey, e routeCacheEntry) {
	if len(e.body) < routeCacheMin || len(e.body) > routeCacheBytes/4 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = make(map[routeCacheKey]routeCacheEntry)
	}
	if old, found := c.m[k]; found {
		c.bytes -= len(old.body)
		delete(c.m, k)
	}
	for pass := 0; c.bytes+len(e.body) > routeCacheBytes && pass < 2; pass++ {
		for ok, old := range c.m {
			if pass == 0 && old.gen == e.gen {
				continue
			}
			c.bytes -= len(old.body)
			delete(c.m, ok)
			if c.bytes+len(e.body) <= routeCacheBytes {
				break
			}
		}
	}
	k.topic = strings.Clone(k.topic) // the request's may alias its buffer
	c.m[k] = e
	c.bytes += len(e.body)
}
