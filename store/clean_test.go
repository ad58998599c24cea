package store

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

func TestRetentionDeletesOldSegments(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.CleanResourceInterval = time.Hour // driven by hand below
	s := openT(t, cfg)
	defer s.Close()
	var rs []PutResult
	for len(rs) == 0 || rs[len(rs)-1].WroteOffset < 3*cfg.MappedFileSizeCommitLog+100 {
		rs = append(rs, putSync(t, s, testMsg("Ret", 0, len(rs), 20000)))
	}
	waitDispatched(t, s)
	require.Eventually(t, func() bool { return s.FlushedOffset() == s.MaxPhyOffset() }, 5*time.Second, time.Millisecond)

	require.Zero(t, s.DeleteExpired(time.Now(), false), "nothing is old enough")
	n := s.DeleteExpired(time.Now().Add(cfg.FileReservedTime+time.Hour), false)
	require.Equal(t, 3, n, "all but the segment taking writes")
	require.Equal(t, 3*cfg.MappedFileSizeCommitLog, s.MinPhyOffset())

	// The first queue offset still backed by the commit log.
	var first int64
	for i, r := range rs {
		if r.WroteOffset >= s.MinPhyOffset() {
			first = int64(i)
			break
		}
	}
	require.Equal(t, first, s.MinOffset("Ret", 0))
	var res GetResult
	s.GetMessages("Ret", 0, 0, 1, math.MaxInt32, nil, &res)
	require.Equal(t, OffsetTooSmall, res.Status)
	require.Equal(t, first, res.NextBeginOffset)
	s.GetMessages("Ret", 0, first, 1, math.MaxInt32, nil, &res)
	require.Equal(t, Found, res.Status)
	res.Release()
	_, err := s.ReadRecord(rs[0].WroteOffset, 0)
	require.ErrorIs(t, err, ErrOffsetNotFound)
	require.NoError(t, s.Check())
	_, err = os.Stat(filepath.Join(cfg.CommitLogDir, segmentName(0)))
	require.ErrorIs(t, err, os.ErrNotExist)

	// Survives a reopen.
	require.NoError(t, s.Close())
	s = openT(t, cfg)
	defer s.Close()
	require.Equal(t, first, s.MinOffset("Ret", 0))
	require.Equal(t, int64(len(rs)), s.MaxOffset("Ret", 0))
	require.NoError(t, s.Check())
}

func TestDiskFullRefusesWritesKeepsReads(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.CleanResourceInterval = 10 * time.Millisecond
	var used atomic.Int64
	used.Store(95) // above diskSpaceWarningLevelRatio (90)
	cfg.usage = func() (float64, int64) { return float64(used.Load()), math.MaxInt64 }
	s := openT(t, cfg)
	defer s.Close()
	require.Eventually(t, func() bool { return s.Writable() != nil }, 5*time.Second, time.Millisecond)
	r := putSync(t, s, testMsg("Full", 0, 0, 10))
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.ErrorIs(t, r.Err, ErrDiskFull)
	// Between the forcible (85) and the warning ratio the state stays.
	used.Store(88)
	rounds := s.cleanRounds.Load()
	require.Eventually(t, func() bool { return s.cleanRounds.Load() >= rounds+3 }, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, s.Writable(), ErrDiskFull)
	// At or below the forcible ratio writes are accepted again.
	used.Store(80)
	require.Eventually(t, func() bool { return s.Writable() == nil }, 5*time.Second, time.Millisecond)
	require.Equal(t, PutOK, putSync(t, s, testMsg("Full", 0, 1, 10)).Status)
}

func TestSegmentAllocationFailureTurnsReadOnly(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	defer s.Close()
	// Block the third segment: a directory where its file must go (the
	// second one is already preallocated).
	require.NoError(t, os.Mkdir(filepath.Join(cfg.CommitLogDir, segmentName(2*cfg.MappedFileSizeCommitLog)), 0o755))
	var ok []PutResult
	var r PutResult
	for i := 0; ; i++ {
		r = putSync(t, s, testMsg("RO", 0, i, 50000))
		if r.Status != PutOK {
			break
		}
		ok = append(ok, r)
	}
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.ErrorIs(t, r.Err, ErrReadOnly)
	require.ErrorIs(t, s.Writable(), ErrReadOnly)
	waitDispatched(t, s)
	var res GetResult
	s.GetMessages("RO", 0, 0, 100, math.MaxInt32, nil, &res)
	require.Equal(t, Found, res.Status)
	require.Len(t, res.Records, len(ok))
	res.Release()
	require.NoError(t, s.Check())
}

// TestENOSPC runs the store on a 3 MiB tmpfs (root only): when the disk
// fills, appends fail with ServiceNotAvailable and the process survives,
// reads keep working.
func TestENOSPC(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to mount a small tmpfs")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=3m", "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	cfg := testConfig(t, dir)
	cfg.CleanResourceInterval = time.Hour
	cfg.usage = func() (float64, int64) { return 0, math.MaxInt64 } // let the OS say ENOSPC
	s := openT(t, cfg)
	defer s.Close()
	var ok int
	var r PutResult
	for i := 0; i < 1000; i++ {
		r = putSync(t, s, testMsg("Full", 0, i, 30000))
		if r.Status != PutOK {
			break
		}
		ok++
	}
	require.Equal(t, ServiceNotAvailable, r.Status)
	require.ErrorIs(t, r.Err, ErrDiskFull)
	require.Greater(t, ok, 30)
	waitDispatched(t, s)
	var res GetResult
	s.GetMessages("Full", 0, 0, 1000, math.MaxInt32, nil, &res)
	require.Equal(t, Found, res.Status)
	require.Len(t, res.Records, ok)
	res.Release()
	require.NoError(t, s.Check())
}

// TestDiskFullBelowRatios: a disk can be full while its usage is below the
// ratios (a segment larger than what the ratios leave free, a quota).
// After a failed allocation puts stay refused, without flapping, until
// the free space would hold it, and then are accepted again.
func TestDiskFullBelowRatios(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	cfg.CleanResourceInterval = 5 * time.Millisecond
	var free atomic.Int64
	free.Store(1 << 20)
	cfg.usage = func() (float64, int64) { return 50, free.Load() }
	s := openT(t, cfg)
	defer s.Close()
	s.noSpace(&falloc.NoSpaceError{Bytes: 4 << 20, Err: unix.ENOSPC})
	require.ErrorIs(t, s.Writable(), ErrDiskFull)
	rounds := s.cleanRounds.Load()
	require.Eventually(t, func() bool { return s.cleanRounds.Load() >= rounds+5 }, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, s.Writable(), ErrDiskFull, "accepted puts although the failed allocation cannot succeed")
	free.Store(8 << 20)
	require.Eventually(t, func() bool { return s.Writable() == nil }, 5*time.Second, time.Millisecond)
	require.Equal(t, PutOK, putSync(t, s, testMsg("Full", 0, 0, 10)).Status)
}

func TestDiskUsedRatios(t *testing.T) {
	s := openT(t, testConfig(t, t.TempDir()))
	defer s.Close()
	cl, cq, idx := s.DiskUsedRatios()
	for _, r := range []float64{cl, cq, idx} {
		require.True(t, r > 0 && r < 1, "ratio %v", r)
	}
}
