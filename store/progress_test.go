package store

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Waiters are woken in target order, each once, by the advance that
// passes them; a waiter whose target has passed is not queued; a callback
// may advance the same progress.
func TestProgressWakesInOrder(t *testing.T) {
	var p progress
	var got []int64
	p.pass = func(w *waiter) {
		got = append(got, w.target)
		if w.target == 20 {
			p.advance(40) // re-entrant: picked up by the running round
		}
	}
	for _, tg := range []int64{30, 10, 20, 50, 40} {
		require.True(t, p.enqueue(&waiter{target: tg}))
	}
	p.advance(5)
	require.Empty(t, got)
	p.advance(25)
	require.Equal(t, []int64{10, 20, 30, 40}, got)
	require.False(t, p.enqueue(&waiter{target: 40}), "passed already")
	p.advance(30) // never lowers
	require.Equal(t, int64(40), p.Load())
	var dropped []int64
	p.reset(35, func(w *waiter) { dropped = append(dropped, w.target) })
	require.Equal(t, []int64{50}, dropped)
	require.Equal(t, int64(35), p.Load())
	require.Zero(t, p.waiting.Load())
}

// Concurrent enqueues and advances answer every waiter exactly once.
func TestProgressConcurrent(t *testing.T) {
	var p progress
	var answered atomic.Int64
	var twice atomic.Int32
	seen := make([]atomic.Bool, 4000)
	p.pass = func(w *waiter) {
		if seen[w.target-1].Swap(true) {
			twice.Add(1)
		}
		answered.Add(1)
	}
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < 4000; i += 4 {
				w := waiter{target: int64(i + 1)}
				if !p.enqueue(&w) {
					p.pass(&w)
				}
				if i%7 == 0 {
					p.advance(int64(i))
				}
			}
		}()
	}
	wg.Wait()
	p.advance(4000)
	require.Equal(t, int64(4000), answered.Load())
	require.Zero(t, twice.Load())
}

func TestQuorumOffset(t *testing.T) {
	require.Equal(t, int64(1<<63-1), QuorumOffset(nil, 1), "no slave needed")
	require.Equal(t, int64(-1), QuorumOffset([]int64{5}, 3), "not enough slaves")
	require.Equal(t, int64(9), QuorumOffset([]int64{5, 9, 7}, 2))
	require.Equal(t, int64(7), QuorumOffset([]int64{5, 9, 7}, 3))
	require.Equal(t, int64(5), QuorumOffset([]int64{5, 9, 7}, 4))
}

func syncMasterConfig(t *testing.T, ft FlushType) Config {
	cfg := testConfig(t, t.TempDir())
	cfg.FlushDiskType = ft
	cfg.BrokerRole = SyncMaster
	cfg.InSyncReplicas = 2
	cfg.SlaveTimeout = 5 * time.Second
	return cfg
}

// A SYNC_MASTER put that needs a slave completes only when the
// acknowledged offset passes its end (and, under SYNC_FLUSH, the flushed
// one too); acknowledgements past what was written are clamped.
func TestSyncMasterWaitsForReplication(t *testing.T) {
	for _, ft := range []FlushType{AsyncFlush, SyncFlush} {
		t.Run(ft.String(), func(t *testing.T) {
			s := openT(t, syncMasterConfig(t, ft))
			defer s.Close()
			ch := make(chan PutResult, 4)
			done := func(r PutResult) { ch <- r }
			m0 := testMsg("R", 0, 0, 100)
			s.Put(m0, done)
			s.Put(testMsg("R", 0, 1, 100), done)
			// Under SYNC_FLUSH the bytes reach the page cache (RawEnd)
			// with the group commit, without any acknowledgement.
			require.Eventually(t, func() bool { return s.RawEnd() == s.MaxPhyOffset() }, 5*time.Second, time.Millisecond)
			select {
			case r := <-ch:
				t.Fatalf("answered before any acknowledgement: %+v", r)
			default:
			}
			first := s.MaxPhyOffset()
			// Acknowledge the first record only.
			s.AckReplicated(int64(m0.RecordSize()))
			r := <-ch
			require.Equal(t, PutOK, r.Status)
			require.Equal(t, int64(0), r.WroteOffset)
			select {
			case r := <-ch:
				t.Fatalf("second answered early: %+v", r)
			default:
			}
			s.AckReplicated(1 << 40)
			require.Equal(t, first, s.ReplicatedOffset(), "clamped to what was written")
			r = <-ch
			require.Equal(t, PutOK, r.Status)

			// inSyncReplicas 1 waits for nobody (Java 5.x).
			s.SetInSyncReplicas(1)
			require.Equal(t, PutOK, putSync(t, s, testMsg("R", 0, 2, 100)).Status)
		})
	}
}

// With no acknowledgement the put is answered FlushSlaveTimeout after
// SlaveTimeout, and the record is stored.
func TestSyncMasterSlaveTimeout(t *testing.T) {
	cfg := syncMasterConfig(t, SyncFlush)
	cfg.SlaveTimeout = 100 * time.Millisecond
	s := openT(t, cfg)
	defer s.Close()
	t0 := time.Now()
	r := putSync(t, s, testMsg("R", 0, 0, 100))
	require.Equal(t, FlushSlaveTimeout, r.Status)
	require.GreaterOrEqual(t, time.Since(t0), 100*time.Millisecond)
	waitDispatched(t, s)
	require.Equal(t, int64(1), s.MaxOffset("R", 0), "stored")
	_, err := s.ReadRecord(r.WroteOffset, r.WroteBytes)
	require.NoError(t, err)
}

// An ASYNC_MASTER never waits for slaves.
func TestAsyncMasterDoesNotWait(t *testing.T) {
	cfg := syncMasterConfig(t, SyncFlush)
	cfg.BrokerRole = AsyncMaster
	s := openT(t, cfg)
	defer s.Close()
	require.Equal(t, PutOK, putSync(t, s, testMsg("R", 0, 0, 100)).Status)
}

// Puts still waiting for slaves when the store closes are answered.
func TestCloseAnswersReplicationWaiters(t *testing.T) {
	s := openT(t, syncMasterConfig(t, AsyncFlush))
	ch := make(chan PutResult, 1)
	s.Put(testMsg("R", 0, 0, 100), func(r PutResult) { ch <- r })
	require.NoError(t, s.Close())
	require.Equal(t, FlushSlaveTimeout, (<-ch).Status)
}

// A SYNC_MASTER put and its acknowledgement allocate nothing.
func TestSyncMasterAllocationBudget(t *testing.T) {
	for _, ft := range []FlushType{AsyncFlush, SyncFlush} {
		t.Run(ft.String(), func(t *testing.T) {
			cfg := syncMasterConfig(t, ft)
			cfg.MessageIndexEnable = false
			cfg.FlushIntervalConsumeQueue = time.Hour // no background flush allocations
			s := openT(t, cfg)
			defer s.Close()
			raw := make(chan struct{}, 1)
			defer s.WatchRaw(raw)()
			m := benchMsg(0)
			ch := make(chan PutResult, 1)
			done := func(r PutResult) { ch <- r }
			// The fake slave acknowledges what the master has in the page
			// cache whenever it grows.
			round := func() {
				s.Put(m, done)
				s.AckReplicated(s.RawEnd())
				for {
					select {
					case r := <-ch:
						if r.Status != PutOK {
							t.Fatalf("put: %v %v", r.Status, r.Err)
						}
						return
					case <-raw:
						s.AckReplicated(s.RawEnd())
					}
				}
			}
			for range 100 {
				round()
			}
			require.Zero(t, testing.AllocsPerRun(200, round))
		})
	}
}

// A put whose slaves acknowledged in time is not answered FlushSlaveTimeout
// when its fdatasync alone took longer than SlaveTimeout.
func TestSlowFlushAfterReplication(t *testing.T) {
	cfg := syncMasterConfig(t, SyncFlush)
	cfg.SlaveTimeout = 50 * time.Millisecond
	s := openT(t, cfg)
	defer s.Close()
	block := make(chan struct{})
	s.flushMu.Lock()
	s.beforeSync = func() { <-block }
	s.flushMu.Unlock()
	ch := make(chan PutResult, 1)
	t0 := time.Now()
	s.Put(testMsg("R", 0, 0, 100), func(r PutResult) { ch <- r })
	require.Eventually(t, func() bool { return s.RawEnd() == s.MaxPhyOffset() }, 5*time.Second, time.Millisecond)
	s.AckReplicated(s.RawEnd())
	require.Eventually(t, func() bool { return time.Since(t0) > 3*cfg.SlaveTimeout }, 5*time.Second, time.Millisecond)
	close(block)
	r := <-ch
	require.Equal(t, PutOK, r.Status, "%v", r.Err)
}

// SetSlaveTimeout applies to a put already waiting: with the configured
// 5 s it would wait that long; lowered to 100 ms it is answered
// FlushSlaveTimeout within a few watchdog rounds of the new value.
func TestSetSlaveTimeoutLive(t *testing.T) {
	s := openT(t, syncMasterConfig(t, AsyncFlush))
	defer s.Close()
	ch := make(chan PutResult, 1)
	start := time.Now()
	s.Put(testMsg("L", 0, 0, 100), func(r PutResult) { ch <- r })
	s.SetSlaveTimeout(100 * time.Millisecond)
	select {
	case r := <-ch:
		require.Equal(t, FlushSlaveTimeout, r.Status)
		require.Less(t, time.Since(start), 2*time.Second, "answered after the old timeout's watchdog round")
	case <-time.After(4 * time.Second):
		t.Fatal("the lowered slaveTimeout did not apply to the waiting put")
	}
}

// A fenced master refuses every local put with ErrFenced (ServiceNotAvailable)
// and accepts them again once unfenced.
func TestSetFenced(t *testing.T) {
	s := openT(t, testConfig(t, t.TempDir()))
	defer s.Close()
	require.Equal(t, PutOK, putSync(t, s, testMsg("F", 0, 0, 10)).Status)
	s.SetFenced(true)
	r := putSync(t, s, testMsg("F", 0, 1, 10))
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.ErrorIs(t, r.Err, ErrFenced)
	require.ErrorIs(t, s.Writable(), ErrFenced)
	s.SetFenced(false)
	require.Equal(t, PutOK, putSync(t, s, testMsg("F", 0, 2, 10)).Status)
	require.True(t, s.AwaitDispatched(5*time.Second))
	require.Equal(t, int64(2), s.MaxOffset("F", 0), "the refused put took no queue offset")
}
