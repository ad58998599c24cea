package transport

import (
	"bytes"
	"encoding/binary"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/rocketgo/rocketgo/codec"
)

// LeasedHandler processes one request whose memory the transport lends
// rather than gives: req, its strings and Body live in a pooled buffer that
// is reused once the lease is released. The transport holds one reference
// while the handler runs and its returned response is encoded, and drops it
// afterwards. A handler that uses req (or any string or slice of it) after
// returning calls l.Hold before returning and l.Release exactly once when
// done; anything kept longer (map keys, names in tables) must be copied.
// l is nil when the request was not pooled (e.g. on a Client): Hold and
// Release are then no-ops. Routes that opt in this way are the hot ones
// (send, pull), so taking a request off the wire allocates nothing.
type LeasedHandler func(c *Conn, req *codec.Frame, l *Lease) *codec.Frame

// HandleLeased routes code to h, run on pool (nil: inline on the event
// loop), lending h the request as LeasedHandler describes.
func (r *Router) HandleLeased(code codec.RequestCode, pool *Pool, h LeasedHandler) {
	if h == nil {
		panic("transport: Router.HandleLeased with nil handler")
	}
	r.routes[int32(code)] = route{lh: h, pool: pool}
}

// leaseExt is the room for extFields a lease decodes into without
// allocating: Java's send and pull headers carry up to 15.
const leaseExt = 24

// Lease is a reference-counted request frame and the payload its strings
// alias, recycled through size-classed pools.
type Lease struct {
	f     codec.Frame
	ext   [leaseExt]codec.KV
	buf   []byte
	refs  atomic.Int32
	class int // index into leaseClasses; -1 for an oversized payload, never pooled
	// bigExt is the pooled extFields room of a big header (decodeBig),
	// returned with the lease.
	bigExt *[]codec.KV
}

// leaseClasses are the payload capacities kept for reuse. A frame bigger
// than the last (up to the 16 MiB frame limit) gets a buffer of its own
// that goes to the GC after use, so one burst of huge frames does not pin
// memory.
var leaseClasses = [...]int{1 << 10, 4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20, 2 << 20}

// leasePools holds free leases per class. Scratch memory, not shared
// state: everything in it is unowned.
var leasePools [len(leaseClasses)]sync.Pool

// getLease returns a lease holding one reference, with a payload buffer of
// length n to fill.
func getLease(n int) *Lease {
	class := -1
	for i, c := range leaseClasses {
		if n <= c {
			class = i
			break
		}
	}
	var l *Lease
	if class >= 0 {
		l, _ = leasePools[class].Get().(*Lease)
	}
	if l == nil {
		size := n
		if class >= 0 {
			size = leaseClasses[class]
		}
		l = &Lease{buf: make([]byte, 0, size), class: class}
	}
	l.buf = l.buf[:n]
	l.refs.Store(1)
	return l
}

// decode decodes the filled payload into the lease's frame.
func (l *Lease) decode() error {
	l.f.Ext = l.ext[:0]
	return codec.Decode(l.buf, &l.f)
}

// bigExtPool holds extFields room for big headers. Scratch memory: cleared
// before it goes back.
var bigExtPool sync.Pool // *[]codec.KV

// decodeBig decodes a frame whose header is big (above
// inlineHeaderLimit) into room for as many extFields as the header can
// hold, taken from a pool: a 1 MiB header of 45,000 tiny fields otherwise
// grows its slice by appending, ~7 MB of garbage per frame, and the GC
// that follows slows every connection, not just the sender's.
func (l *Lease) decodeBig() error {
	need := leaseExt
	if len(l.buf) >= 4 {
		word := binary.BigEndian.Uint32(l.buf)
		hdr := l.buf[4:min(len(l.buf), 4+int(word&0xFFFFFF))]
		if codec.SerializeType(word>>24) == codec.SerializeJSON {
			need = bytes.Count(hdr, []byte{':'}) + 1 // each field has one
		} else {
			need = len(hdr)/6 + 1 // a key's and a value's length words at least
		}
	}
	p, _ := bigExtPool.Get().(*[]codec.KV)
	if p == nil || cap(*p) < need {
		e := make([]codec.KV, 0, need)
		p = &e
	}
	l.bigExt = p
	l.f.Ext = (*p)[:0]
	return codec.Decode(l.buf, &l.f)
}

// Hold adds a reference: the request stays valid until the matching
// Release. Holding a released lease is a broken invariant and panics.
func (l *Lease) Hold() {
	if l == nil {
		return
	}
	if l.refs.Add(1) <= 1 {
		panic("transport: Lease.Hold on a released lease")
	}
}

// Release drops a reference; the last one recycles the request and its
// payload. Releasing more often than holding panics.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	switch n := l.refs.Add(-1); {
	case n == 0:
		l.recycle()
	case n < 0:
		panic("transport: Lease released more often than held")
	}
}

func (l *Lease) recycle() {
	if p := l.bigExt; p != nil {
		l.bigExt = nil
		if n := len(l.f.Ext); n <= cap(*p) {
			clear((*p)[:n]) // the strings alias this payload
		} else {
			clear((*p)[:cap(*p)]) // grew past it: clear what it held
		}
		bigExtPool.Put(p)
	}
	l.f = codec.Frame{}
	clear(l.ext[:])
	if l.class < 0 || strictLeases {
		// strictLeases (race-detector builds): a recycled lease is never
		// reused, so a Hold or Release after the last one always panics
		// instead of counting against another request's lease.
		return
	}
	l.buf = l.buf[:0]
	leasePools[l.class].Put(l)
}

// detach gives the decoded request memory of its own, for a receiver that
// may keep it forever (an ordinary Handler, an invoke's response), and
// releases the lease. The frame is copied, not decoded again: strings and
// Body that alias the pooled payload are re-pointed at the copy.
func (l *Lease) detach() *codec.Frame {
	in := &inFrame{}
	own := make([]byte, len(l.buf))
	copy(own, l.buf)
	in.f = l.f
	switch {
	case len(l.f.Ext) <= len(in.ext):
		in.f.Ext = append(in.ext[:0], l.f.Ext...)
	case l.bigExt != nil:
		// A big header's pooled room goes with the frame for good (it is
		// rebased below), instead of a copy of a few MB.
		l.bigExt = nil
	default:
		in.f.Ext = slices.Clone(l.f.Ext)
	}
	in.f.Remark = l.rebase(own, in.f.Remark)
	for i := range in.f.Ext {
		in.f.Ext[i].Key = l.rebase(own, in.f.Ext[i].Key)
		in.f.Ext[i].Value = l.rebase(own, in.f.Ext[i].Value)
	}
	if b := l.f.Body; len(b) > 0 {
		if off, ok := l.offset(unsafe.Pointer(unsafe.SliceData(b)), len(b)); ok {
			in.f.Body = own[off : off+len(b) : off+len(b)]
		}
	}
	l.Release()
	return &in.f
}

// offset locates n bytes at p inside the payload.
func (l *Lease) offset(p unsafe.Pointer, n int) (int, bool) {
	if len(l.buf) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(l.buf)))
	at := uintptr(p)
	if at < base || at+uintptr(n) > base+uintptr(len(l.buf)) {
		return 0, false
	}
	return int(at - base), true
}

// rebase re-points s at the same bytes in own when it aliases the payload;
// strings the decoder built elsewhere (unescaped JSON) stay as they are.
func (l *Lease) rebase(own []byte, s string) string {
	if len(s) == 0 {
		return s
	}
	off, ok := l.offset(unsafe.Pointer(unsafe.StringData(s)), len(s))
	if !ok {
		return s
	}
	return unsafe.String(&own[off], len(s))
}
