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
// entry beyond its size. It also keeps parsed TAG expressions, so a pull
// that carries its subscription does not re-parse it. It is safe for
// concurrent use; a hit does not allocate.
type Cache struct {
	mu   sync.Mutex
	max  int
	m    map[string]*cacheEntry // SQL92; guarded by mu
	head cacheEntry             // sentinel of the LRU list; head.next is newest; guarded by mu
	tags map[string]tagEntry    // TAG; emptied when it reaches max; guarded by mu
}

type tagEntry struct {
	f   TagFilter
	err error
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

// Tag returns the parsed TAG expression (ParseTagExpression), parsing it on
// a miss. The filter's slices are shared between callers: read only. expr
// may alias a request buffer.
func (c *Cache) Tag(expr string) (TagFilter, error) {
	if expr == "" || expr == SubAll {
		return TagFilter{All: true}, nil
	}
	c.mu.Lock()
	e, ok := c.tags[expr]
	c.mu.Unlock()
	if ok {
		return e.f, e.err
	}
	f, err := ParseTagExpression(expr)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tags == nil || len(c.tags) >= c.max {
		// Tag expressions are few (one per group and topic); a full table
		// means churn, and starting over is as good as LRU here.
		c.tags = make(map[string]tagEntry, min(c.max, 64))
	}
	c.tags[strings.Clone(expr)] = tagEntry{f: f, err: err}
	return f, err
}

// Len returns the number of cached SQL92 expressions.
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
