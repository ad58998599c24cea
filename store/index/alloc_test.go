package index

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/store/internal/falloc"
)

// TestEntriesAllocatedAhead: the file stays sparse (Java's size, most of
// it untouched) but every entry put writes lies in allocated blocks, so a
// store through the mapping can never fault on a full disk.
func TestEntriesAllocatedAhead(t *testing.T) {
	s := openT(t, t.TempDir(), 1000, 500_000) // a 10 MB file
	defer s.Close()
	for i := 0; i < 120_000; i++ {
		require.NoError(t, s.Put("T", fmt.Sprintf("k%d", i), "", int64(i+1)*100, 1_700_000_000_000))
		if i%10_000 != 0 {
			continue
		}
		x := s.files[len(s.files)-1]
		got, err := falloc.Allocated(x.f)
		require.NoError(t, err)
		need := x.entryPos(x.header.indexCount)
		require.GreaterOrEqual(t, got, need, "entries written past the allocated blocks")
		require.GreaterOrEqual(t, x.allocTo, need)
		require.Less(t, got, int64(len(x.data)), "the file is not allocated whole")
	}
}
