package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func smallSegConfig(t testing.TB) Config {
	cfg := testConfig(t, t.TempDir())
	cfg.MappedFileSizeCommitLog = 64 << 10
	cfg.MaxMessageSize = 16 << 10
	return cfg
}

// commitLogBytes reads the commit-log files of a closed or open store
// from minPhy to end.
func commitLogBytes(t testing.TB, dir string, segSize, from, end int64) []byte {
	t.Helper()
	var out []byte
	for off := from - from%segSize; off < end; off += segSize {
		b, err := os.ReadFile(filepath.Join(dir, "commitlog", segmentName(off)))
		require.NoError(t, err)
		lo, hi := max(from-off, 0), min(end-off, segSize)
		out = append(out, b[lo:hi]...)
	}
	return out
}

// ReadRaw serves the commit log as written, in views that never cross a
// segment, up to RawEnd and not past it, without allocating.
func TestReadRaw(t *testing.T) {
	cfg := smallSegConfig(t)
	s := openT(t, cfg)
	defer s.Close()
	for i := 0; i < 300; i++ {
		require.Equal(t, PutOK, putSync(t, s, testMsg("Raw", int32(i%2), i, 300+i*7%900)).Status)
	}
	end := s.RawEnd()
	require.Equal(t, s.MaxPhyOffset(), end)
	require.Greater(t, end, 4*cfg.MappedFileSizeCommitLog, "several segment rolls")
	var v RawView
	var got []byte
	for off := int64(0); off < end; {
		require.NoError(t, s.ReadRaw(off, 7000, &v))
		require.Equal(t, off, v.Offset)
		require.NotEmpty(t, v.Data)
		require.LessOrEqual(t, len(v.Data), 7000)
		require.Equal(t, off/cfg.MappedFileSizeCommitLog, (off+int64(len(v.Data))-1)/cfg.MappedFileSizeCommitLog, "never across a segment")
		got = append(got, v.Data...)
		off += int64(len(v.Data))
	}
	v.Release()
	require.Equal(t, commitLogBytes(t, cfg.RootDir, cfg.MappedFileSizeCommitLog, 0, end), got)

	require.NoError(t, s.ReadRaw(end, 7000, &v), "at the end: nothing yet")
	require.Empty(t, v.Data)
	require.True(t, errors.Is(s.ReadRaw(end+1, 7000, &v), ErrOffsetNotFound))
	require.True(t, errors.Is(s.ReadRaw(-1, 7000, &v), ErrOffsetNotFound))

	require.Zero(t, testing.AllocsPerRun(200, func() {
		if err := s.ReadRaw(1000, 32<<10, &v); err != nil || len(v.Data) == 0 {
			t.Fatal("read")
		}
		v.Release()
	}))
}

// A view keeps its segment mapped after retention deleted it.
func TestReadRawHoldsSegment(t *testing.T) {
	cfg := smallSegConfig(t)
	cfg.FlushCommitLogLeastPages = 0 // flush at every tick
	s := openT(t, cfg)
	defer s.Close()
	for i := 0; i < 200; i++ {
		require.Equal(t, PutOK, putSync(t, s, testMsg("Raw", 0, i, 1000)).Status)
	}
	waitDispatched(t, s)
	require.Eventually(t, func() bool { return s.FlushedOffset() == s.MaxPhyOffset() }, 5*time.Second, time.Millisecond)
	var v RawView
	require.NoError(t, s.ReadRaw(0, 1<<20, &v))
	want := bytes.Clone(v.Data)
	require.Positive(t, s.DeleteExpired(time.Now(), true))
	require.Positive(t, s.MinPhyOffset())
	require.Equal(t, want, v.Data, "still mapped while referenced")
	v.Release()
	require.True(t, errors.Is(s.ReadRaw(0, 100, &v), ErrOffsetNotFound), "deleted")
}

// Under SYNC_FLUSH the bytes are readable for the slaves once in the page
// cache, while their fdatasync is still running: disk and network overlap.
func TestReadRawBeforeFdatasync(t *testing.T) {
	cfg := smallSegConfig(t)
	cfg.FlushDiskType = SyncFlush
	s, err := Open(cfg)
	require.NoError(t, err)
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
	s.Put(testMsg("Raw", 0, 0, 500), func(r PutResult) { ch <- r })
	<-entered
	end := s.MaxPhyOffset()
	require.Equal(t, end, s.RawEnd(), "in the page cache before the fdatasync")
	require.Less(t, s.FlushedOffset(), end)
	var v RawView
	require.NoError(t, s.ReadRaw(0, 1<<20, &v))
	require.Len(t, v.Data, int(end))
	v.Release()
	select {
	case <-ch:
		t.Fatal("acknowledged before its fdatasync")
	default:
	}
	close(block)
	require.Equal(t, PutOK, (<-ch).Status)
}
