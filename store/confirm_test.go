package store

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// ConfirmOffset is Java's: written under ASYNC_FLUSH, flushed under
// SYNC_FLUSH; DispatchedOffset follows it; a limit (controller mode) holds
// the dispatcher and ReadRecord back until it is raised.
func TestConfirmOffset(t *testing.T) {
	t.Run("ASYNC_FLUSH", func(t *testing.T) {
		s := openT(t, testConfig(t, t.TempDir()))
		defer s.Close()
		r := putSync(t, s, testMsg("C", 0, 0, 100))
		require.Equal(t, s.MaxPhyOffset(), s.ConfirmOffset())
		waitDispatched(t, s)
		require.Equal(t, s.ConfirmOffset(), s.DispatchedOffset())

		end := r.WroteOffset + int64(r.WroteBytes)
		s.SetConfirmLimit(end)
		r2 := putSync(t, s, testMsg("C", 0, 1, 100))
		require.Equal(t, end, s.ConfirmOffset())
		_, err := s.ReadRecord(r2.WroteOffset, r2.WroteBytes)
		require.ErrorIs(t, err, ErrOffsetNotFound, "not confirmed yet")
		s.dispatchUpTo(s.MaxPhyOffset()) // a dispatch round stops at the limit
		require.Equal(t, int64(1), s.MaxOffset("C", 0))
		require.Equal(t, end, s.DispatchedOffset())
		s.SetConfirmLimit(-1)
		require.Eventually(t, func() bool { return s.MaxOffset("C", 0) == 2 }, 5*time.Second, time.Millisecond)
	})
	t.Run("SYNC_FLUSH", func(t *testing.T) {
		cfg := testConfig(t, t.TempDir())
		cfg.FlushDiskType = SyncFlush
		s := openT(t, cfg)
		defer s.Close()
		block, entered := make(chan struct{}), make(chan struct{}, 1)
		s.flushMu.Lock()
		s.beforeSync = func() {
			select {
			case entered <- struct{}{}:
			default:
			}
			<-block
		}
		s.flushMu.Unlock()
		ch := make(chan PutResult, 1)
		s.Put(testMsg("C", 0, 0, 100), func(r PutResult) { ch <- r })
		<-entered
		require.Zero(t, s.ConfirmOffset(), "not flushed: not confirmed")
		require.Equal(t, s.MaxPhyOffset(), s.RawEnd(), "but readable for the slaves")
		close(block)
		require.Equal(t, PutOK, (<-ch).Status)
		require.Equal(t, s.FlushedOffset(), s.ConfirmOffset())
		require.Equal(t, s.MaxPhyOffset(), s.ConfirmOffset())
	})
}

// AwaitDispatched returns once the puts confirmed at the call are in their
// consume queues, and gives up after its timeout while the dispatcher is held.
func TestAwaitDispatched(t *testing.T) {
	s := openT(t, testConfig(t, t.TempDir()))
	defer s.Close()
	putSync(t, s, testMsg("W", 0, 0, 100))
	require.True(t, s.AwaitDispatched(5*time.Second))
	require.Equal(t, int64(1), s.MaxOffset("W", 0))

	s.dispMu.Lock() // no dispatch round can run
	putSync(t, s, testMsg("W", 0, 1, 100))
	start := time.Now()
	require.False(t, s.AwaitDispatched(50*time.Millisecond))
	require.GreaterOrEqual(t, time.Since(start), 50*time.Millisecond)
	require.Equal(t, int64(1), s.MaxOffset("W", 0))

	got := make(chan bool, 1)
	go func() { got <- s.AwaitDispatched(10 * time.Second) }()
	s.dispMu.Unlock()
	require.True(t, <-got)
	require.Equal(t, int64(2), s.MaxOffset("W", 0), "offset readers see every acknowledged put")
}
