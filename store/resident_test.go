package store

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store/internal/smaps"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/codec/message"
)

// mappedRSS returns the resident bytes of the mapping that starts at
// data[0].
func mappedRSS(t *testing.T, data []byte) int64 {
	t.Helper()
	n, err := smaps.MappedRSS(data)
	require.NoError(t, err)
	return n
}

// populateSupported reports whether the kernel has MADV_POPULATE_READ
// (5.14+); without it the window ahead is only read into the page cache.
func populateSupported(t *testing.T) bool {
	b, err := unix.Mmap(-1, 0, 4096, unix.PROT_READ, unix.MAP_PRIVATE|unix.MAP_ANON)
	require.NoError(t, err)
	defer unix.Munmap(b)
	return unix.Madvise(b, unix.MADV_POPULATE_READ) == nil
}

func (c *commitLog) spareSeg() *segment {
	c.spareMu.Lock()
	defer c.spareMu.Unlock()
	return c.spare
}

// TestResidentWindows checks that a fresh store maps in only the window
// ahead of the writer and the spare's head, and that written, flushed and
// dispatched data is released from the mapping yet reads back intact.
func TestResidentWindows(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.MappedFileSizeCommitLog = 64 << 20
	cfg.MappedFileSizeConsumeQueue = 1000 * CQUnitSize
	s := openT(t, cfg)
	defer s.Close()
	cfg.MessageIndexEnable = false
	// Large folios of the page cache may be mapped 2 MiB at a time.
	const slack = 4 << 20

	cur := s.cl.last()
	var spare *segment
	require.Eventually(t, func() bool { spare = s.cl.spareSeg(); return spare != nil }, 5*time.Second, time.Millisecond)
	if populateSupported(t) {
		require.Eventually(t, func() bool { return mappedRSS(t, cur.data) >= prefaultAhead }, 5*time.Second, time.Millisecond,
			"the window ahead of the writer is paged in")
		require.GreaterOrEqual(t, mappedRSS(t, spare.data), int64(prefaultAhead), "the spare's head is paged in")
	}
	require.LessOrEqual(t, mappedRSS(t, cur.data), int64(prefaultAhead+slack))
	require.LessOrEqual(t, mappedRSS(t, spare.data), int64(prefaultAhead+slack), "the spare is not paged in whole")

	// Write 56 MiB in 1 KiB records over 8 queues.
	first := testMsg("Res", 0, 0, 1024)
	r0 := putSync(t, s, first)
	require.Equal(t, PutOK, r0.Status)
	var c collector
	n := (56 << 20) / first.RecordSize()
	c.wg.Add(n)
	for i := 1; i <= n; i++ {
		s.Put(testMsg("Res", int32(i%8), i, 1024), c.done)
	}
	c.wg.Wait()
	for _, r := range c.res {
		require.Equal(t, PutOK, r.Status)
	}
	waitDispatched(t, s)
	w := s.MaxPhyOffset()
	require.Equal(t, cur, s.cl.find(w), "still in the first segment")
	if populateSupported(t) {
		require.Eventually(t, func() bool { return s.faultMark.Load() >= w }, 5*time.Second, time.Millisecond,
			"the window ahead moved with the writer")
	}

	// Everything older than keepBehind below the flushed, dispatched end
	// goes; what is left is about the two windows.
	require.Eventually(t, func() bool {
		return mappedRSS(t, cur.data) <= keepBehind+prefaultAhead+slack
	}, 10*time.Second, 10*time.Millisecond, "released behind the writer")

	// Released pages read back from the page cache unchanged.
	rec, err := s.ReadRecord(r0.WroteOffset, r0.WroteBytes)
	require.NoError(t, err)
	require.True(t, bytes.Contains(rec, first.Body))
	rec, err = s.ReadRecord(c.res[0].WroteOffset, 0)
	require.NoError(t, err)
	require.Len(t, rec, int(c.res[0].WroteBytes))

	// Full consume-queue files are released too (1000 units per file).
	q := s.findCQ("Res", 1)
	require.NotNil(t, q)
	q.mu.RLock()
	old := slices.Clone(q.files[:len(q.files)-2])
	q.mu.RUnlock()
	require.NotEmpty(t, old)
	require.Eventually(t, func() bool {
		for _, f := range old {
			if mappedRSS(t, f.data) != 0 {
				return false
			}
		}
		return true
	}, 10*time.Second, 10*time.Millisecond, "old consume-queue files released")
	var res GetResult
	s.GetMessages("Res", 1, 0, 4, 1<<20, nil, &res)
	require.Equal(t, Found, res.Status)
	require.Len(t, res.Records, 4)
	require.Equal(t, []int64{0, 1, 2, 3}, res.QueueOffsets)
	res.Release()
}

// TestDispatchIsImmediateAtLowRate proves the dispatcher is woken by each
// append: at a low rate, with no other traffic, OnArrival follows Put's
// completion within milliseconds, not the dispatcher's 100 ms ticker.
func TestDispatchIsImmediateAtLowRate(t *testing.T) {
	s := openT(t, testConfig(t, t.TempDir()))
	defer s.Close()
	arrived := make(chan time.Time, 1)
	s.OnArrival(func(topic string, qid int32, maxOffset, tags int64, props string) {
		arrived <- time.Now()
	})
	const n = 20
	lat := make([]time.Duration, 0, n)
	tick := time.NewTicker(20 * time.Millisecond) // paces the puts at 50/s
	defer tick.Stop()
	for i := range n {
		<-tick.C
		var doneAt time.Time
		r := putSync(t, s, testMsg("Low", 0, i, 100))
		doneAt = time.Now()
		require.Equal(t, PutOK, r.Status)
		select {
		case at := <-arrived:
			lat = append(lat, max(at.Sub(doneAt), 0))
		case <-time.After(5 * time.Second):
			t.Fatalf("record %d never dispatched", i)
		}
	}
	slices.Sort(lat)
	t.Logf("put done → OnArrival: p50 %v max %v", lat[n/2], lat[n-1])
	// Woken only by the 100 ms ticker, the median would be ~50 ms.
	require.Less(t, lat[n/2], 5*time.Millisecond)
	require.Less(t, lat[n-1], 50*time.Millisecond)
}

// A record's arrival is announced before its index entries are written, so
// index work (a fault in the index file, a lock held by its flush) never
// delays a long-poll wake-up.
func TestArrivalPrecedesIndex(t *testing.T) {
	s := openT(t, testConfig(t, t.TempDir()))
	defer s.Close()
	type seen struct {
		queueOffset int64
		indexed     int
		err         error
	}
	ch := make(chan seen, 8)
	s.OnArrival(func(topic string, qid int32, maxOffset, tags int64, props string) {
		key, _ := message.Property(props, message.PropertyKeys)
		first, _, _ := strings.Cut(key, " ")
		hits, err := s.QueryByKey(topic, first, 10, 0, math.MaxInt64)
		ch <- seen{maxOffset - 1, len(hits), err}
	})
	for i := range 3 {
		r := putSync(t, s, testMsg("Idx", 0, i, 100))
		require.Equal(t, PutOK, r.Status)
		select {
		case got := <-ch:
			require.NoError(t, got.err)
			require.Equal(t, int64(i), got.queueOffset)
			require.Zero(t, got.indexed, "record %d was indexed before its arrival was announced", i)
		case <-time.After(5 * time.Second):
			t.Fatalf("record %d never dispatched", i)
		}
		waitDispatched(t, s)
		hits, err := s.QueryByKey("Idx", "k"+strconv.Itoa(i), 10, 0, math.MaxInt64)
		require.NoError(t, err)
		require.Equal(t, []int64{r.WroteOffset}, hits)
	}
}

// TestPrefaultInBoundedPieces checks that paging in a window ahead takes
// one lane turn per prefaultChunk, each paging in no more than its piece,
// and that together they cover the window: a single long MADV_POPULATE_READ
// holds the mmap lock for tens of milliseconds on fresh memory.
func TestPrefaultInBoundedPieces(t *testing.T) {
	if !populateSupported(t) {
		t.Skip("no MADV_POPULATE_READ")
	}
	seg, err := createSegment(t.TempDir()+"/00000000000000000000", 0, 4<<20)
	require.NoError(t, err)
	defer seg.destroy()
	const window = 1<<20 + 4096 // four whole pieces and one page
	var steps []int64
	seg.prefaultVia(func(f func()) {
		f()
		steps = append(steps, mappedRSS(t, seg.data))
	}, 0, window)
	require.Len(t, steps, 5)
	prev := int64(0)
	for i, rss := range steps {
		require.LessOrEqual(t, rss-prev, int64(prefaultChunk), "piece %d paged in more than a chunk", i)
		require.Greater(t, rss, prev, "piece %d paged in nothing", i)
		prev = rss
	}
	require.GreaterOrEqual(t, prev, int64(window), "the window is not resident")
}
