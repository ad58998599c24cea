package filter

import (
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCacheHitsAndErrors(t *testing.T) {
	c := NewCache(4)
	e1, err := c.Compile("a = 1")
	require.NoError(t, err)
	e2, err := c.Compile("a = 1")
	require.NoError(t, err)
	require.Same(t, e1, e2)

	_, err1 := c.Compile("a = ")
	require.Error(t, err1)
	_, err2 := c.Compile("a = ")
	require.Same(t, err1, err2) // parse errors are cached too
	require.Equal(t, 2, c.Len())
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := NewCache(3)
	first, err := c.Compile("a = 0")
	require.NoError(t, err)
	for i := 1; i <= 2; i++ {
		_, err := c.Compile("a = " + strconv.Itoa(i))
		require.NoError(t, err)
	}
	// Touch "a = 0" so "a = 1" is the oldest, then overflow.
	again, _ := c.Compile("a = 0")
	require.Same(t, first, again)
	_, err = c.Compile("a = 3")
	require.NoError(t, err)
	require.Equal(t, 3, c.Len())
	again, _ = c.Compile("a = 0")
	require.Same(t, first, again, "recently used entry was evicted")
	c.mu.Lock()
	_, has1 := c.m["a = 1"]
	c.mu.Unlock()
	require.False(t, has1, "least recently used entry was kept")

	for i := range 100 {
		_, _ = c.Compile("b = " + strconv.Itoa(i))
	}
	require.Equal(t, 3, c.Len())
}

func TestCacheKeyDoesNotAliasInput(t *testing.T) {
	c := NewCache(8)
	b := []byte("a = 'v'")
	e, err := c.Compile(unsafeString(b))
	require.NoError(t, err)
	copy(b, "x = 'y'")
	again, err := c.Compile("a = 'v'")
	require.NoError(t, err)
	require.Same(t, e, again)
	require.True(t, again.Match("a\x01v\x02"))
}

func TestCacheHitDoesNotAllocate(t *testing.T) {
	c := NewCache(0)
	expr := "a > 5 AND TAGS IN ('x', 'y')"
	_, err := c.Compile(expr)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() { _, _ = c.Compile(expr) })
	require.Zero(t, allocs)
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(16)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				e, err := c.Compile("a = " + strconv.Itoa((i+g)%32))
				if err != nil || !e.Match("a\x01"+strconv.Itoa((i+g)%32)+"\x02") {
					t.Errorf("compile/match failed at %d: %v", i, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.LessOrEqual(t, c.Len(), 16)
}
