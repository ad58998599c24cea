package filter

import (
	"strings"
	"sync"
)

// DefaultCacheSize bounds a Cache made with size <= 0. (Java's parser
// keeps 100 entries; a broker serving many groups benefits from more.)
const DefaultCacheSize = 1024

// Cache holds compiled expressions by source text, parse errors included
// (as Java's SelectorParser cache does), evicting the least recently used
// entry beyond its size. It is safe for concurrent use; a hit does not
// allocate.
type Cache struct {
	mu   sync.Mutex
	max  int
	m    map[string]*cacheEntry // guarded by mu
	head cacheEntry             // sentinel of the LRU list; head.next is newest; guarded by mu
}

type cacheEntry struct {
	key        string
	expr       *Expr
	err        error
	prev, next *cacheEntry
}

// NewCache returns a cache of at most size expressions.
func NewCache(size int) *Cache {
	if size <= 0 {
		size = DefaultCacheSize
	}
	c := &Cache{max: size, m: make(map[string]*cacheEntry, min(size, 256))}
	c.head.prev, c.head.next = &c.head, &c.head
	return c
}

// Compile returns the compiled form of expr, compiling it on a miss. expr
// may alias a request buffer: the cache keeps its own copy.
func (c *Cache) Compile(expr string) (*Expr, error) {
	c.mu.Lock()
	if e, ok := c.m[expr]; ok {
		c.unlink(e)
		c.pushFront(e)
		c.mu.Unlock()
		return e.expr, e.err
	}
	c.mu.Unlock()

	// Parse outside the lock; a concurrent miss on the same text parses
	// twice and the first insert wins.
	x, err := Compile(expr)
	key := expr
	if x != nil {
		key = x.src // already a private copy
	} else {
		key = strings.Clone(expr)
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if e, ok := c.m[key]; ok {
		return e.expr, e.err
	}
	e := &cacheEntry{key: key, expr: x, err: err}
	c.m[key] = e
	c.pushFront(e)
	for len(c.m) > c.max {
		old := c.head.prev
		c.unlink(old)
		delete(c.m, old.key)
	}
	return x, err
}

// Len returns the number of cached expressions.
func (c *Cache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.m)
}

func (c *Cache) unlink(e *cacheEntry) {
	e.prev.next = e.next
	e.next.prev = e.prev
}

func (c *Cache) pushFront(e *cacheEntry) {
	e.prev = &c.head
	e.next = c.head.next
	c.head.next.prev = e
	c.head.next = e
}
