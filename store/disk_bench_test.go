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

// BenchmarkDiskSyncAfterAppend is the measurement behind SYNC_FLUSH staging
// (stage.go): append 32 KiB to a fallocated file, then fdatasync, with the
// bytes stored through a shared mapping or written with pwrite. Reports
// the fdatasync rate of each.
func BenchmarkDiskSyncAfterAppend(b *testing.B) {
	const size, chunk = 256 << 20, 32 << 10
	for _, mode := range []string{"mmap", "pwrite"} {
		b.Run(mode, func(b *testing.B) {
			f, err := os.Create(filepath.Join(b.TempDir(), "sync"))
			require.NoError(b, err)
			defer f.Close()
			require.NoError(b, unix.Fallocate(int(f.Fd()), 0, 0, size))
			data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			require.NoError(b, err)
			defer unix.Munmap(data)
			buf := make([]byte, chunk)
			for i := range buf {
				buf[i] = byte(i)
			}
			b.SetBytes(chunk)
			b.ReportAllocs()
			b.ResetTimer()
			off := int64(0)
			for i := 0; i < b.N; i++ {
				if off+chunk > size {
					off = 0
				}
				if mode == "mmap" {
					copy(data[off:], buf)
				} else if _, err := unix.Pwrite(int(f.Fd()), buf, off); err != nil {
					b.Fatal(err)
				}
				if err := unix.Fdatasync(int(f.Fd())); err != nil {
					b.Fatal(err)
				}
				off += chunk
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "syncs/s")
		})
	}
}
