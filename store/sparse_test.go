package store

import (
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// allocatedBytes is the disk space a file holds (its allocated blocks).
func allocatedBytes(t *testing.T, path string) int64 {
	t.Helper()
	st, err := os.Stat(path)
	require.NoError(t, err)
	return st.Sys().(*syscall.Stat_t).Blocks * 512
}

// TestReopenKeepsSealedSegmentsSparse checks that opening a store does not
// allocate the holes of its sealed commit-log segments (a Java store, a
// sparse copy), while the segment being written is allocated before its
// first store and the data before and after the restart reads back.
func TestReopenKeepsSealedSegmentsSparse(t *testing.T) {
	cfg := testConfig(t, t.TempDir())
	s := openT(t, cfg)
	ws := fillStore(t, s, 40)
	// Enough to seal the first segment.
	for i := 0; s.written.Load() < cfg.MappedFileSizeCommitLog+4096; i++ {
		r := putSync(t, s, testMsg("D", int32(i%4), i, 4000))
		require.Equal(t, PutOK, r.Status)
	}
	require.NoError(t, s.Close())

	names, err := filepath.Glob(filepath.Join(cfg.RootDir, "commitlog", "*"))
	require.NoError(t, err)
	sort.Strings(names)
	require.GreaterOrEqual(t, len(names), 2)
	sealed := names[0]
	// Punch out the sealed segment's second half: a hole where a sparse
	// copy would have one (nothing read here lies there).
	f, err := os.OpenFile(sealed, os.O_RDWR, 0)
	require.NoError(t, err)
	half := cfg.MappedFileSizeCommitLog / 2
	require.NoError(t, unix.Fallocate(int(f.Fd()), unix.FALLOC_FL_PUNCH_HOLE|unix.FALLOC_FL_KEEP_SIZE, half, half))
	require.NoError(t, f.Close())
	before := allocatedBytes(t, sealed)
	require.LessOrEqual(t, before, half+64<<10)

	s2 := openT(t, cfg)
	require.Equal(t, before, allocatedBytes(t, sealed), "opening allocated the sealed segment's hole")
	for i := 0; i < 10; i++ {
		r := putSync(t, s2, testMsg("E", 0, i, 300))
		require.Equal(t, PutOK, r.Status)
	}
	verifyPresent(t, s2, ws[:1]) // from the first segment's written half
	cur := s2.cur
	require.True(t, cur.allocated.Load(), "the segment written after the restart is allocated")
	require.Equal(t, cfg.MappedFileSizeCommitLog, allocatedBytes(t, cur.path))
}
