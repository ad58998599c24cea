package store

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store/iolane"
)

// The consume-queue flush and the checkpoint behind it take their turn on
// the store's background lane: while the lane is held they do not happen,
// and they do once it is free. (The commit-log flush has its own goroutine
// and never waits for the lane.)
func TestBackgroundSyncsWaitForTheLane(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.BackgroundIO = iolane.New()
	cfg.FlushCommitLogLeastPages = 0 // flush every interval, however little is new
	s := openT(t, cfg)
	t.Cleanup(func() { s.Close() })

	logics := func() int64 {
		s.ckpt.mu.Lock()
		defer s.ckpt.mu.Unlock()
		return s.ckpt.logicsTS
	}
	release := sync.OnceFunc(cfg.BackgroundIO.Hold())
	defer release() // before Close: the resident goroutine may be waiting for the lane
	before := logics()
	r := putSync(t, s, testMsg("LaneTopic", 0, 1, 100))
	require.Equal(t, PutOK, r.Status)
	require.Eventually(t, func() bool { return s.dispatched.Load() >= r.WroteOffset+int64(r.WroteBytes) },
		5*time.Second, time.Millisecond)
	require.Eventually(t, func() bool { return s.flushed.Load() >= r.WroteOffset+int64(r.WroteBytes) },
		5*time.Second, time.Millisecond, "the commit-log flush does not wait for the lane")
	require.Never(t, func() bool { return logics() != before }, 200*time.Millisecond, 5*time.Millisecond,
		"the consume-queue flush waits for the lane (10 flush intervals)")
	release()
	require.Eventually(t, func() bool { return logics() != before }, 5*time.Second, time.Millisecond)
}
