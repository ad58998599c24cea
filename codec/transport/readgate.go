package transport

import (
	"reflect"
	"sync"

	"github.com/panjf2000/gnet/v2"
	"golang.org/x/sys/unix"
)

// Read gating: gnet reads every readable socket and has no call to stop
// (its event loop's epoll has the fd level-triggered for EPOLLIN|EPOLLPRI
// from open to close, and only its own outbound buffer, which we never
// use, ever changes that). Left alone, a paused connection's peer keeps
// pushing bytes that we must copy and hold until MaxUnreadPerConn cuts it:
// an attacker pipelining at loopback speed then costs a core of copying,
// and reconnects at once. So a paused connection is taken out of its
// loop's epoll interest (EPOLL_CTL_MOD to no events; errors and hang-ups
// are still reported, so a reset peer is still closed) and put back when
// it resumes: its requests wait in the kernel, its peer's writes block
// (real backpressure), and nothing of it is read or copied meanwhile.
//
// The loop's epoll fd is not exported: it is read once per connection by
// reflection from gnet's conn → eventloop → netpoll.Poller (v2, the
// default epoll poller; with the poll_opt build tag, or if the layout
// changes, gating is off and the bounds on unread bytes do the work).
// Only the connection's own event loop gates it.
const gnetReadEvents = unix.EPOLLIN | unix.EPOLLPRI

var (
	gateOnce   sync.Once
	gatePath   []int // field indexes: conn.loop, eventloop.poller, Poller.fd
	gateUsable bool
)

// gnetPollerFD returns the epoll fd of gc's event loop, or -1.
func gnetPollerFD(gc gnet.Conn) int {
	v := reflect.ValueOf(gc)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return -1
	}
	gateOnce.Do(func() { gatePath, gateUsable = findGatePath(v.Type()) })
	if !gateUsable {
		return -1
	}
	loop := v.Elem().Field(gatePath[0])
	if loop.IsNil() {
		return -1
	}
	poller := loop.Elem().Field(gatePath[1])
	if poller.IsNil() {
		return -1
	}
	return int(poller.Elem().Field(gatePath[2]).Int())
}

// findGatePath checks gnet's layout: *conn{loop *eventloop{poller
// *Poller{fd int, efd int}}} (efd: the default epoll poller, whose events
// carry the fd; the poll_opt one carries a pointer and is not gated).
func findGatePath(t reflect.Type) ([]int, bool) {
	field := func(t reflect.Type, name string, kind reflect.Kind) (reflect.StructField, bool) {
		if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
			return reflect.StructField{}, false
		}
		f, ok := t.Elem().FieldByName(name)
		return f, ok && f.Type.Kind() == kind && len(f.Index) == 1
	}
	loop, ok1 := field(t, "loop", reflect.Pointer)
	if !ok1 {
		return nil, false
	}
	poller, ok2 := field(loop.Type, "poller", reflect.Pointer)
	if !ok2 {
		return nil, false
	}
	fd, ok3 := field(poller.Type, "fd", reflect.Int)
	_, ok4 := field(poller.Type, "efd", reflect.Int)
	if !ok3 || !ok4 {
		return nil, false
	}
	return []int{loop.Index[0], poller.Index[0], fd.Index[0]}, true
}

// stopReading takes c out of its loop's read interest; on c's loop only.
func (c *Conn) stopReading(fd int) {
	if c.gateFD < 0 || c.readOff {
		return
	}
	ev := unix.EpollEvent{Fd: int32(fd)}
	if unix.EpollCtl(c.gateFD, unix.EPOLL_CTL_MOD, fd, &ev) == nil {
		c.readOff = true
	}
}

// startReading puts c back; on c's loop only.
func (c *Conn) startReading(fd int) {
	if !c.readOff {
		return
	}
	ev := unix.EpollEvent{Fd: int32(fd), Events: gnetReadEvents}
	if err := unix.EpollCtl(c.gateFD, unix.EPOLL_CTL_MOD, fd, &ev); err != nil {
		c.log.Warn("transport: resume reading", "remote", c.remote, "err", err)
		return
	}
	c.readOff = false
}
