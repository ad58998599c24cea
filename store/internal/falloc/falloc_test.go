package falloc

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAllocateKeepsData(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	_, err = f.WriteAt([]byte("hello"), 4096)
	require.NoError(t, err)
	require.NoError(t, Allocate(f, 0, 1<<20))
	st, err := f.Stat()
	require.NoError(t, err)
	require.EqualValues(t, 1<<20, st.Size())
	got := make([]byte, 5)
	_, err = f.ReadAt(got, 4096)
	require.NoError(t, err)
	require.Equal(t, "hello", string(got))
	n, err := Allocated(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(1<<20), "blocks really allocated")
}

// TestFillHoles exercises the fallback for file systems without fallocate.
func TestFillHoles(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "f"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, f.Truncate(3<<20)) // sparse
	_, err = f.WriteAt([]byte("data"), 1<<20)
	require.NoError(t, err)
	require.NoError(t, fillHoles(f, 0, 4<<20))
	st, err := f.Stat()
	require.NoError(t, err)
	require.EqualValues(t, 4<<20, st.Size())
	got := make([]byte, 4)
	_, err = f.ReadAt(got, 1<<20)
	require.NoError(t, err)
	require.Equal(t, "data", string(got))
	n, err := Allocated(f)
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(4<<20))
}
