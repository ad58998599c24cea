package store

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
)

// BenchmarkGroupCommitCeiling is the machine's SYNC_FLUSH ceiling with no
// store code in the way: writers copy 1 KiB records into a mapped,
// fallocated file under one lock, a single flusher fdatasyncs whatever is
// written and releases every writer it covered. Compare BenchmarkPutSync
// with it in the same run
// (`go test -run - -bench 'PutSync|GroupCommitCeiling' ./store/`).
func BenchmarkGroupCommitCeiling(b *testing.B) {
	for _, writers := range []int{1, 16, 64} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			const size = 256 << 20
			f, err := os.Create(filepath.Join(b.TempDir(), "gc"))
			require.NoError(b, err)
			defer f.Close()
			require.NoError(b, allocate(f, size))
			data, err := unix.Mmap(int(f.Fd()), 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
			require.NoError(b, err)
			defer unix.Munmap(data)

			var (
				mu        sync.Mutex
				cond      = sync.NewCond(&mu)
				pos       int   // guarded by mu
				flushed   int   // guarded by mu
				flushErr  error // guarded by mu
				wake      = make(chan struct{}, 1)
				stop      = make(chan struct{})
				flusherWG sync.WaitGroup
			)
			flusherWG.Add(1)
			go func() {
				defer flusherWG.Done()
				for {
					select {
					case <-stop:
						return
					case <-wake:
					}
					mu.Lock()
					target := pos
					mu.Unlock()
					err := unix.Fdatasync(int(f.Fd()))
					mu.Lock()
					flushed, flushErr = max(flushed, target), err
					cond.Broadcast()
					mu.Unlock()
				}
			}()
			rec := make([]byte, 1024)
			b.SetBytes(int64(len(rec)))
			b.ReportAllocs()
			b.ResetTimer()
			var wg sync.WaitGroup
			for w := range writers {
				n := b.N / writers
				if w < b.N%writers {
					n++
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for range n {
						mu.Lock()
						p := pos % (size - len(rec)) // wrap: the ceiling, not the disk size, is measured
						copy(data[p:], rec)
						pos += len(rec)
						end := pos
						mu.Unlock()
						select {
						case wake <- struct{}{}:
						default:
						}
						mu.Lock()
						for flushed < end && flushErr == nil {
							cond.Wait()
						}
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			b.StopTimer()
			close(stop)
			flusherWG.Wait()
			require.NoError(b, flushErr)
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}
