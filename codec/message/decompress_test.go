package message

import (
	"bytes"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecompressBombBounded: 200 KiB of zlib that inflates to 200 MiB is
// refused after about the limit's worth of memory (io.ReadAll's growth
// allocated 157 MiB for the 64 MiB limit).
func TestDecompressBombBounded(t *testing.T) {
	z, err := CompressZlib(make([]byte, 200<<20), 9)
	require.NoError(t, err)
	require.Less(t, len(z), 1<<20)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = Decompress(z, CompressedFlag, 0)
	runtime.ReadMemStats(&after)
	require.ErrorContains(t, err, "exceeds")
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("bomb of %d bytes refused after %d MiB", len(z), got>>20)
	require.Less(t, got, uint64(DefaultMaxDecompressed+DefaultMaxDecompressed/4))
}

func TestDecompressLimitIsExact(t *testing.T) {
	body := bytes.Repeat([]byte("0123456789abcdef"), (3<<20)/16+1) // several blocks
	z, err := CompressZlib(body, 5)
	require.NoError(t, err)
	got, err := Decompress(z, CompressedFlag, len(body))
	require.NoError(t, err)
	require.Equal(t, body, got)
	_, err = Decompress(z, CompressedFlag, len(body)-1)
	require.ErrorContains(t, err, "exceeds")
	empty, err := CompressZlib(nil, 5)
	require.NoError(t, err)
	got, err = Decompress(empty, CompressedFlag, 0)
	require.NoError(t, err)
	require.Empty(t, got)
}

// FuzzDecompress: no panic; what decodes stays within the limit and
// survives a recompress round trip.
func FuzzDecompress(f *testing.F) {
	z, _ := CompressZlib([]byte("hello rocketmq"), 5)
	f.Add(z)
	bomb, _ := CompressZlib(make([]byte, 1<<20), 9)
	f.Add(bomb)
	f.Add([]byte{0x78, 0x9c, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		const max = 256 << 10
		out, err := Decompress(b, CompressedFlag, max)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(out), max)
		z, err := CompressZlib(out, 5)
		require.NoError(t, err)
		back, err := Decompress(z, CompressedFlag, max)
		require.NoError(t, err)
		require.Equal(t, out, back)
	})
}
