package transporttest

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// HeapWatch samples the Go heap and records its peak growth over the heap
// when the watch started (after a GC).
type HeapWatch struct {
	base    uint64
	peak    atomic.Uint64
	tripped atomic.Bool
	stop    chan struct{}
	once    sync.Once
	done    chan struct{}
}

// WatchHeap starts a watch sampling every 5 ms. Once the heap has grown by
// more than limit it fails t, calls abort (if not nil; it must end the
// growth, e.g. by closing the attacking connections) and reports Tripped.
// The watch stops with Stop or at the end of the test.
func WatchHeap(t testing.TB, limit uint64, abort func()) *HeapWatch {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	w := &HeapWatch{base: ms.HeapAlloc, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			grow := uint64(0)
			if ms.HeapAlloc > w.base {
				grow = ms.HeapAlloc - w.base
			}
			if grow > w.peak.Load() {
				w.peak.Store(grow)
			}
			if grow > limit && !w.tripped.Swap(true) {
				t.Errorf("heap grew by %d MiB, over the %d MiB bound", grow>>20, limit>>20)
				if abort != nil {
					abort()
				}
			}
		}
	}()
	t.Cleanup(w.Stop)
	return w
}

// Peak is the largest growth seen so far, in bytes.
func (w *HeapWatch) Peak() uint64 { return w.peak.Load() }

// Tripped reports whether the heap passed the limit.
func (w *HeapWatch) Tripped() bool { return w.tripped.Load() }

// Stop ends the watch and waits for its sampler.
func (w *HeapWatch) Stop() {
	w.once.Do(func() { close(w.stop) })
	<-w.done
}
