package transport

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"golang.org/x/sys/unix"
)

// watcher tells outlets when their full sockets can take bytes again. gnet
// offers no writability callback except through its own outbound buffer,
// which copies everything handed to it (pull replies are views of mapped
// store segments) and grows without bound while the peer does not read.
// So a server keeps one epoll instance of its own: an outlet whose writev
// stopped short arms its fd (EPOLLOUT, one shot), and the watcher's
// goroutine hands the outlet back to its writer once the kernel reports
// room. Unsent frames stay in the outlet's pending list as they are, views
// included: nothing is copied while a peer is slow.
//
// fd validity: arm and disarm run under the outlet's mu while dead is
// false, and abort (on the loop, before gnet closes the fd) disarms, so the
// watcher never holds a descriptor number the kernel may hand to another
// connection. Events carry the connection id, not the fd; a late event for
// an outlet already gone finds nothing in outlets and is dropped.
type watcher struct {
	epfd int
	stop int // eventfd; a write ends run
	log  *slog.Logger

	mu      sync.Mutex
	outlets map[uint64]*serverOutlet // guarded by mu: registered outlets

	done chan struct{}
}

// stopID is the event data of the stop eventfd; connection ids start at 1.
const stopID = 0

func newWatcher(log *slog.Logger) (*watcher, error) {
	epfd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("transport: epoll_create1: %w", err)
	}
	stop, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		_ = unix.Close(epfd)
		return nil, fmt.Errorf("transport: eventfd: %w", err)
	}
	ev := unix.EpollEvent{Events: unix.EPOLLIN}
	setEventID(&ev, stopID)
	if err := unix.EpollCtl(epfd, unix.EPOLL_CTL_ADD, stop, &ev); err != nil {
		_ = unix.Close(epfd)
		_ = unix.Close(stop)
		return nil, fmt.Errorf("transport: epoll_ctl stop: %w", err)
	}
	w := &watcher{epfd: epfd, stop: stop, log: log, outlets: make(map[uint64]*serverOutlet), done: make(chan struct{})}
	go w.run()
	return w, nil
}

func setEventID(ev *unix.EpollEvent, id uint64) {
	ev.Fd = int32(uint32(id))
	ev.Pad = int32(uint32(id >> 32))
}

func eventID(ev *unix.EpollEvent) uint64 {
	return uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
}

// arm asks for one writability event on o's socket. The caller holds o.mu
// and o is not dead.
func (w *watcher) arm(o *serverOutlet) error {
	ev := unix.EpollEvent{Events: unix.EPOLLOUT | unix.EPOLLONESHOT}
	setEventID(&ev, o.conn.id)
	op := unix.EPOLL_CTL_MOD
	if !o.watched {
		op = unix.EPOLL_CTL_ADD
		w.mu.Lock()
		w.outlets[o.conn.id] = o
		w.mu.Unlock()
	}
	if err := unix.EpollCtl(w.epfd, op, o.fd, &ev); err != nil {
		if !o.watched {
			w.mu.Lock()
			delete(w.outlets, o.conn.id)
			w.mu.Unlock()
		}
		return fmt.Errorf("transport: arm writability of %s: %w", o.conn.remote, err)
	}
	o.watched = true
	return nil
}

// disarm forgets o; the caller holds o.mu, and the fd is still open.
func (w *watcher) disarm(o *serverOutlet) {
	if !o.watched {
		return
	}
	o.watched = false
	_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, o.fd, nil)
	w.mu.Lock()
	delete(w.outlets, o.conn.id)
	w.mu.Unlock()
}

func (w *watcher) run() {
	defer close(w.done)
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			w.log.Error("transport: epoll_wait of the writability watcher", "err", err)
			return
		}
		for i := range n {
			id := eventID(&events[i])
			if id == stopID {
				return
			}
			w.mu.Lock()
			o := w.outlets[id]
			w.mu.Unlock()
			if o != nil {
				o.writable()
			}
		}
	}
}

// close stops the watcher; every outlet must be dead (disarmed) already.
func (w *watcher) close() {
	var one = [8]byte{1}
	_, _ = unix.Write(w.stop, one[:])
	<-w.done
	_ = unix.Close(w.stop)
	_ = unix.Close(w.epfd)
}
