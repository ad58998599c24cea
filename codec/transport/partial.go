package transport

import (
	"sync"

	"github.com/panjf2000/gnet/v2"
)

// partChunk is the unit in which an incomplete big frame is kept while it
// arrives. gnet's inbound ring would hold it too, but grows by doubling
// through buffers it pools, so 500 connections each sending 1 MiB of a
// 16 MiB frame left several times that in garbage; fixed chunks from one
// pool are reused across connections and hold what arrived, rounded up to
// 64 KiB, and nothing is allocated for what was only announced.
const partChunk = 64 << 10

// chunkPool caches partChunk buffers. Scratch memory: everything in it is
// unowned.
var chunkPool = sync.Pool{New: func() any { b := make([]byte, 0, partChunk); return &b }}

// partial is the frame in progress of one server connection, prefix
// included; touched only by its event loop.
type partial struct {
	chunks []*[]byte
	n      int // bytes held
}

// take moves up to max bytes from gc into the chunks.
func (p *partial) take(gc gnet.Conn, max int) {
	for max > 0 {
		if len(p.chunks) == 0 || len(*p.chunks[len(p.chunks)-1]) == partChunk {
			p.chunks = append(p.chunks, chunkPool.Get().(*[]byte))
		}
		last := p.chunks[len(p.chunks)-1]
		room := min(partChunk-len(*last), max)
		n, _ := gc.Read((*last)[len(*last) : len(*last)+room])
		*last = (*last)[:len(*last)+n]
		p.n += n
		max -= n
		if n < room {
			return // gnet has nothing more
		}
	}
}

// head returns the first 8 bytes held (length and header-length words),
// or nil when fewer arrived.
func (p *partial) head() []byte {
	if p.n < 8 {
		return nil
	}
	return (*p.chunks[0])[:8] // a chunk holds far more than 8 bytes
}

// copyPayload copies the held bytes after the 4-byte prefix into dst and
// reports how many it copied.
func (p *partial) copyPayload(dst []byte) int {
	skip, n := 4, 0
	for _, c := range p.chunks {
		b := *c
		if skip > 0 {
			b = b[skip:]
			skip = 0
		}
		n += copy(dst[n:], b)
	}
	return n
}

// reset returns the chunks to their pool.
func (p *partial) reset() {
	for i, c := range p.chunks {
		*c = (*c)[:0]
		chunkPool.Put(c)
		p.chunks[i] = nil
	}
	p.chunks = p.chunks[:0]
	p.n = 0
}
