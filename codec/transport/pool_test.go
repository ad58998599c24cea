package transport

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// captureOutlet records the frames written to a Conn.
type captureOutlet struct {
	frames chan *codec.Frame
}

func (o *captureOutlet) write(b *outBuf) error {
	payload, _, err := codec.NextFrame(b.b, codec.DefaultMaxFrameLength)
	if err != nil {
		return err
	}
	own := append([]byte(nil), payload...)
	b.put()
	f, err := decodeFrame(own)
	if err != nil {
		return err
	}
	o.frames <- f
	return nil
}

func (o *captureOutlet) writev(h *outBuf, _ [][]byte, done func(error)) error {
	h.put()
	if done != nil {
		done(nil)
	}
	return nil
}
func (o *captureOutlet) close() error { return nil }
func (o *captureOutlet) abort()       {}

func captureConn() (*Conn, *captureOutlet) {
	out := &captureOutlet{frames: make(chan *codec.Frame, 64)}
	return newConn(1, "peer", "local", out, testLogger()), out
}

// With no queue, a pool accepts exactly as many requests as it has idle
// workers (a rendezvous, like an unbuffered channel).
func TestPoolZeroQueueAcceptsIdleWorkersOnly(t *testing.T) {
	started := make(chan struct{}, 8)
	release := make(chan struct{})
	p := NewPool("rendezvous", 2, 0)
	defer p.Close()
	c, out := captureConn()
	h := func(c *Conn, req *codec.Frame) *codec.Frame {
		started <- struct{}{}
		<-release
		return echo(c, req)
	}
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.idle == 2 })
	require.True(t, p.submit(task{c: c, req: request(codeEcho, 1), h: h}))
	require.True(t, p.submit(task{c: c, req: request(codeEcho, 2), h: h}))
	require.False(t, p.submit(task{c: c, req: request(codeEcho, 3), h: h}))
	<-started
	<-started
	require.False(t, p.submit(task{c: c, req: request(codeEcho, 4), h: h}), "both workers busy")
	close(release)
	got := map[int32]bool{}
	for range 2 {
		got[(<-out.frames).Opaque] = true
	}
	require.Equal(t, map[int32]bool{1: true, 2: true}, got)
	require.Equal(t, 0, p.Cap())
}

// The queue is FIFO and Close drops what is still queued, returning only
// after the workers have exited.
func TestPoolFIFOAndClose(t *testing.T) {
	started := make(chan struct{}, 1)
	release := make(chan struct{})
	p := NewPool("fifo", 1, 8)
	c, out := captureConn()
	h := func(c *Conn, req *codec.Frame) *codec.Frame {
		if req.Opaque == 0 {
			started <- struct{}{}
			<-release
		}
		return echo(c, req)
	}
	require.True(t, p.submit(task{c: c, req: request(codeEcho, 0), h: h}))
	<-started
	for i := range 8 {
		require.True(t, p.submit(task{c: c, req: request(codeEcho, int32(i+1)), h: h}))
	}
	require.False(t, p.submit(task{c: c, req: request(codeEcho, 99), h: h}), "queue full")
	require.Equal(t, 8, p.Pending())
	close(release)
	for i := range 9 {
		require.Equal(t, int32(i), (<-out.frames).Opaque)
	}

	// Refill behind a blocked worker, then close: the queued ones are dropped.
	block := make(chan struct{})
	require.True(t, p.submit(task{c: c, req: request(codeEcho, 100), h: func(*Conn, *codec.Frame) *codec.Frame {
		<-block
		return nil
	}}))
	waitFor(t, func() bool { return p.Pending() == 0 })
	require.True(t, p.submit(task{c: c, req: request(codeEcho, 101), h: h}))
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	waitFor(t, func() bool { p.mu.Lock(); defer p.mu.Unlock(); return p.closed })
	select {
	case <-closed:
		t.Fatal("Close returned while a worker was busy")
	default:
	}
	close(block)
	<-closed
	require.False(t, p.submit(task{c: c, req: request(codeEcho, 102), h: h}))
	require.Empty(t, out.frames, "request 101 was dropped, not run")
}
