package configfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWriteKeepsBackup(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config", "topics.json")
	_, err := Read(p)
	require.ErrorIs(t, err, fs.ErrNotExist)

	require.NoError(t, Write(p, []byte(`{"v":1}`)))
	got, err := Read(p)
	require.NoError(t, err)
	require.Equal(t, `{"v":1}`, string(got))
	_, err = os.Stat(p + ".bak")
	require.ErrorIs(t, err, fs.ErrNotExist, "first write has nothing to back up")

	require.NoError(t, Write(p, []byte(`{"v":2}`)))
	bak, err := os.ReadFile(p + ".bak")
	require.NoError(t, err)
	require.Equal(t, `{"v":1}`, string(bak))

	// No temp files left behind.
	ents, err := os.ReadDir(filepath.Dir(p))
	require.NoError(t, err)
	require.Len(t, ents, 2)
}

func TestReadFallsBackToBackup(t *testing.T) {
	p := filepath.Join(t.TempDir(), "consumerOffset.json")
	require.NoError(t, Write(p, []byte(`old`)))
	require.NoError(t, Write(p, []byte(`new`)))

	require.NoError(t, os.WriteFile(p, nil, 0o644)) // truncated main file
	got, err := Read(p)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))

	require.NoError(t, os.Remove(p))
	got, err = Read(p)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))

	got, err = ReadBackup(p)
	require.NoError(t, err)
	require.Equal(t, "old", string(got))
}
