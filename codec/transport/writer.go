package transport

import (
	"runtime"
	"sync"
)

// writer is a server goroutine that writes the frames other goroutines
// queue on its connections (a server runs one per event loop, connections
// are spread over them). Handing a reply to it costs a wake-up, not a
// syscall, so pool workers go back to their work at once, and a burst of
// replies to one connection leaves in one writev: the batching the event
// loop used to do, without gnet's per-task allocation.
type writer struct {
	kick chan struct{} // capacity 1: work is waiting

	mu    sync.Mutex
	dirty []*serverOutlet // guarded by mu: outlets with pending frames
	spare []*serverOutlet // writer goroutine only
}

// writers is a server's set of writer goroutines.
type writers struct {
	ws   []*writer
	stop chan struct{}
	wg   sync.WaitGroup
}

func startWriters(multicore bool) *writers {
	n := 1
	if multicore {
		n = runtime.NumCPU()
	}
	s := &writers{ws: make([]*writer, n), stop: make(chan struct{})}
	for i := range s.ws {
		w := &writer{kick: make(chan struct{}, 1)}
		s.ws[i] = w
		s.wg.Add(1)
		go w.run(s.stop, &s.wg)
	}
	return s
}

// pick returns the writer of connection id.
func (s *writers) pick(id uint64) *writer { return s.ws[id%uint64(len(s.ws))] }

// close stops the writers once every connection is closed (their outlets
// are dead, so nothing is left to write) and waits for them.
func (s *writers) close() {
	close(s.stop)
	s.wg.Wait()
}

// add marks o as having pending frames and wakes the writer.
func (w *writer) add(o *serverOutlet) {
	w.mu.Lock()
	w.dirty = append(w.dirty, o)
	w.mu.Unlock()
	select {
	case w.kick <- struct{}{}:
	default: // already woken
	}
}

func (w *writer) run(stop <-chan struct{}, wg *sync.WaitGroup) {
	defer wg.Done()
	for {
		select {
		case <-stop:
			return
		case <-w.kick:
		}
		w.mu.Lock()
		batch := w.dirty
		w.dirty = w.spare[:0]
		w.mu.Unlock()
		for _, o := range batch {
			o.writeOut()
		}
		clear(batch)
		w.spare = batch[:0]
	}
}
