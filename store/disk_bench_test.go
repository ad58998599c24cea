package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkDiskSequentialWrite measures the machine's durable sequential
// write bandwidth in the store's directory — 1 MiB writes, one fdatasync per
// 64 MiB — so BenchmarkPutAsync's MB/s can be read against it in the same
// run (`go test -bench 'PutAsync|DiskSequential' ./store/`).
func BenchmarkDiskSequentialWrite(b *testing.B) {
	f, err := os.Create(filepath.Join(b.TempDir(), "seq"))
	require.NoError(b, err)
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	const syncEvery = 64
	b.SetBytes(int64(len(chunk)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.Write(chunk); err != nil {
			b.Fatal(err)
		}
		if i%syncEvery == syncEvery-1 {
			require.NoError(b, unix.Fdatasync(int(f.Fd())))
		}
		if i%1024 == 1023 { // stay within 1 GiB of disk
			require.NoError(b, unix.Fdatasync(int(f.Fd())))
			_, err := f.Seek(0, 0)
			require.NoError(b, err)
		}
	}
	require.NoError(b, unix.Fdatasync(int(f.Fd())))
}
