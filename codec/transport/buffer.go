package transport

import (
	"sync"

	"github.com/panjf2000/gnet/v2"
)

// maxPooledBuf is the largest buffer kept for reuse; bigger ones (rare,
// e.g. a route table of a large cluster) are left to the GC so one burst
// does not pin memory forever.
const maxPooledBuf = 1 << 20

// outBuf is an encoded frame on its way to a socket. It goes back to
// bufPool only after the write that carries it has completed (gnet's
// callback or a blocking net.Conn write).
type outBuf struct {
	b []byte
	// done is release bound once, so handing it to AsyncWrite costs no
	// closure allocation per message.
	done gnet.AsyncCallback
}

// bufPool caches outBufs. A cache of scratch memory, not shared state:
// everything in it is unowned.
var bufPool sync.Pool

func getBuf() *outBuf {
	if b, ok := bufPool.Get().(*outBuf); ok {
		return b
	}
	b := &outBuf{b: make([]byte, 0, 4096)}
	b.done = b.release
	return b
}

func (b *outBuf) put() {
	if cap(b.b) > maxPooledBuf {
		return
	}
	b.b = b.b[:0]
	bufPool.Put(b)
}

// release is the AsyncWrite callback: the bytes have been written or
// copied into gnet's outbound buffer, or the write failed.
func (b *outBuf) release(gnet.Conn, error) error {
	b.put()
	return nil
}
