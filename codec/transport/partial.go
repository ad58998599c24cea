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

// partial holds inbound bytes a server connection took out of gnet before
// it could decode them: a big frame still arriving (prefix included), or
// the backlog of a paused connection. Touched only by its event loop.
// Bytes here come before anything gnet still buffers.
type partial struct {
	chunks []*[]byte
	off    int // read position in chunks[0]
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

// peek copies the first bytes held into dst without consuming them.
func (p *partial) peek(dst []byte) int {
	n, off := 0, p.off
	for _, c := range p.chunks {
		if n == len(dst) {
			break
		}
		n += copy(dst[n:], (*c)[off:])
		off = 0
	}
	return n
}

// read consumes the first bytes held into dst; emptied chunks go back to
// their pool.
func (p *partial) read(dst []byte) int {
	n := 0
	for n < len(dst) && len(p.chunks) > 0 {
		c := p.chunks[0]
		m := copy(dst[n:], (*c)[p.off:])
		n += m
		p.off += m
		p.n -= m
		if p.off == len(*c) && (len(p.chunks) > 1 || len(*c) == partChunk || p.n == 0) {
			*c = (*c)[:0]
			chunkPool.Put(c)
			copy(p.chunks, p.chunks[1:])
			p.chunks[len(p.chunks)-1] = nil
			p.chunks = p.chunks[:len(p.chunks)-1]
			p.off = 0
		}
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
	p.n, p.off = 0, 0
}

// readIn consumes len(dst) bytes of c's input: first what part holds,
// then gnet's. The caller knows they are there.
func (c *Conn) readIn(gc gnet.Conn, dst []byte) {
	n := c.part.read(dst)
	if n < len(dst) {
		_, _ = gc.Read(dst[n:])
	}
}

// peekIn copies the first len(dst) bytes of c's input into dst without
// consuming them. The caller knows they are there.
func (c *Conn) peekIn(gc gnet.Conn, dst []byte) {
	n := c.part.peek(dst)
	if n < len(dst) {
		w, _ := gc.Peek(len(dst) - n)
		copy(dst[n:], w)
	}
}
