package index

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store/internal/smaps"
)

// mappedRSS returns the resident bytes of the mapping that starts at
// data[0].
func mappedRSS(t *testing.T, data []byte) int64 {
	t.Helper()
	n, err := smaps.MappedRSS(data)
	require.NoError(t, err)
	return n
}

// TestFlushReleasesOldEntries checks that Flush unmaps full files and all
// but the newest entries of the current one, and that queries still find
// released entries (they come back from the page cache).
func TestFlushReleasesOldEntries(t *testing.T) {
	const perFile = 300000
	s := openT(t, t.TempDir(), 1000, perFile)
	defer s.Close()
	const n = perFile + 250000 // fills file 1, about 250000 entries in file 2
	for i := range n {
		require.NoError(t, s.Put("T", "", fmt.Sprintf("U%d", i), int64(i+1)*100, 1_700_000_000_000+int64(i)))
	}
	s.mu.RLock()
	files := append([]*file(nil), s.files...)
	s.mu.RUnlock()
	require.Len(t, files, 2)
	full, cur := files[0], files[1]
	before := mappedRSS(t, cur.data)
	require.Greater(t, before, int64(250000*entrySize*9/10), "written entries are mapped")
	require.Greater(t, mappedRSS(t, full.data), int64(perFile*entrySize*9/10))

	require.NoError(t, s.Flush())
	require.Zero(t, mappedRSS(t, full.data), "full file released")
	// Left: the slot table (4000 bytes) and the newest keepEntries (with
	// room for a large folio of the page cache mapped whole).
	require.LessOrEqual(t, mappedRSS(t, cur.data), int64(keepEntries*entrySize+2<<20))

	// Old keys in both files are still found.
	got := s.Query("T", "U5", 4, 0, 1<<62)
	require.Contains(t, got, int64(600))
	got = s.Query("T", fmt.Sprintf("U%d", perFile+10), 4, 0, 1<<62)
	require.Contains(t, got, int64(perFile+11)*100)
}
