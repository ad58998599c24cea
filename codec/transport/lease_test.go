package transport

import (
	"bytes"
	"encoding/binary"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// A leased route round trip costs the server nothing once warm: the
// request comes from a pooled lease, the reply is written directly to the
// socket from the worker (or the loop), and the handler reuses its
// response frame.
func TestLeasedRoundTripAllocs(t *testing.T) {
	skipUnderRace(t)
	for _, onPool := range []bool{false, true} {
		name := "inline"
		if onPool {
			name = "pool"
		}
		t.Run(name, func(t *testing.T) {
			var pool *Pool
			if onPool {
				pool = newPool(t, "leased", 1, 16)
			}
			var resp codec.Frame // one in flight at a time: reused
			var ext [1]codec.KV
			r := NewRouter()
			r.HandleLeased(codeEcho, pool, func(_ *Conn, req *codec.Frame, _ *Lease) *codec.Frame {
				resp = codec.Frame{Code: int32(codec.RespSuccess), Ext: ext[:0]}
				resp.Ext = append(resp.Ext, codec.KV{Key: "topic", Value: req.Value("topic")})
				resp.Body = req.Body
				return &resp
			})
			s := startServer(t, ServerConfig{}, r)
			rc := dialRaw(t, s.Addr())
			req := request(codeEcho, 1)
			req.Set("topic", "LeaseTopic")
			req.Body = bytes.Repeat([]byte("b"), 3000)
			wire := req.AppendTo(nil)
			reply := make([]byte, 8192)
			var n int
			roundTrip := func() {
				if _, err := rc.nc.Write(wire); err != nil {
					t.Fatal(err)
				}
				if _, err := io.ReadFull(rc.br, reply[:4]); err != nil {
					t.Fatal(err)
				}
				n = int(binary.BigEndian.Uint32(reply))
				if _, err := io.ReadFull(rc.br, reply[:n]); err != nil {
					t.Fatal(err)
				}
			}
			for range 100 {
				roundTrip()
			}
			allocs := testing.AllocsPerRun(500, roundTrip)
			var f codec.Frame
			require.NoError(t, codec.Decode(reply[:n], &f))
			require.Equal(t, "LeaseTopic", f.Value("topic"))
			require.Equal(t, req.Body, f.Body)
			require.Zero(t, allocs)
		})
	}
}

// A handler that holds its lease may answer later: the request's strings
// and body stay intact while held, even as many more requests reuse the
// pooled buffers, and every hold is paired with one release.
func TestLeaseHeldAcrossDeferredReply(t *testing.T) {
	type held struct {
		c   *Conn
		req *codec.Frame
		l   *Lease
	}
	parked := make(chan held, 64)
	r := NewRouter()
	r.HandleLeased(codeEcho, nil, func(c *Conn, req *codec.Frame, l *Lease) *codec.Frame {
		if req.Value("park") == "" {
			return echo(c, req)
		}
		l.Hold()
		parked <- held{c, req, l}
		return nil
	})
	s := startServer(t, ServerConfig{}, r)
	cl := newClient(t, nil)
	const parkedN = 20
	for i := range parkedN {
		req := request(codeEcho, 0)
		req.Set("id", "parked-"+strconv.Itoa(i))
		req.Set("park", "1")
		req.Body = bytes.Repeat([]byte{byte('A' + i)}, 100+i)
		require.NoError(t, cl.InvokeOneway(t.Context(), s.Addr(), req))
	}
	var hs []held
	for range parkedN {
		select {
		case h := <-parked:
			hs = append(hs, h)
		case <-time.After(5 * time.Second):
			t.Fatal("parked request did not arrive")
		}
	}
	// Churn the pools with other requests of the same size classes.
	for i := range 200 {
		req := request(codeEcho, 0)
		req.Set("id", "churn-"+strconv.Itoa(i))
		req.Body = bytes.Repeat([]byte("z"), 100+i%30)
		resp, err := cl.Invoke(t.Context(), s.Addr(), req)
		require.NoError(t, err)
		require.Equal(t, "churn-"+strconv.Itoa(i), resp.Value("id"))
	}
	for _, h := range hs {
		id := h.req.Value("id")
		i, err := strconv.Atoi(id[len("parked-"):])
		require.NoError(t, err, id)
		require.Equal(t, bytes.Repeat([]byte{byte('A' + i)}, 100+i), h.req.Body, id)
		h.l.Release()
	}
}

func TestLeaseMisusePanics(t *testing.T) {
	l := getLease(10)
	l.Hold()
	l.Release()
	l.Release() // last reference: recycled
	require.Panics(t, func() { l.Release() })
	require.Panics(t, func() { l.Hold() })
	var none *Lease
	require.NotPanics(t, func() { none.Hold(); none.Release() }) // unpooled requests
	big := getLease(leaseClasses[len(leaseClasses)-1] + 1)
	require.Equal(t, -1, big.class)
	require.Len(t, big.buf, leaseClasses[len(leaseClasses)-1]+1)
	big.Release()
}

// A peer that stops reading fills the socket: writers fall back to the
// event loop (gnet buffers the rest), frames stay whole and in order, and
// every done runs once. When the peer drains everything, direct writes
// resume and cost nothing again.
func TestSlowReaderBackpressureThenDirectAgain(t *testing.T) {
	var srv atomic.Pointer[Conn]
	connected := make(chan struct{})
	s := startServer(t, ServerConfig{OnConnect: func(c *Conn) { srv.Store(c); close(connected) }}, NewRouter())
	rc := dialRaw(t, s.Addr())
	<-connected
	c := srv.Load()

	const frames = 128
	body := make([][]byte, 4)
	for i := range body {
		body[i] = bytes.Repeat([]byte{byte('a' + i)}, 64<<10)
	}
	var done atomic.Int32
	var wg sync.WaitGroup
	for w := range 4 { // several writers at once, as pool workers do
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < frames; i += 4 {
				f := &codec.Frame{Code: int32(codec.RespSuccess), Opaque: int32(i), Flag: codec.FlagResponse}
				if err := c.WriteWithBody(f, body, func(err error) {
					if err != nil {
						t.Errorf("frame %d: %v", i, err)
					}
					done.Add(1)
				}); err != nil {
					t.Errorf("write %d: %v", i, err)
				}
			}
		}()
	}
	wg.Wait() // 32 MiB: far more than the socket buffers hold
	o := c.out.(*serverOutlet)
	require.Eventually(t, func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return !o.direct
	}, 5*time.Second, time.Millisecond, "the unread socket should have pushed writes to the event loop")

	seen := make(map[int32]bool)
	_ = rc.nc.SetReadDeadline(time.Now().Add(20 * time.Second))
	for range frames {
		f := rc.recv()
		require.False(t, seen[f.Opaque], "frame %d twice", f.Opaque)
		seen[f.Opaque] = true
		require.Len(t, f.Body, 4*(64<<10))
		for i := range body {
			require.Equal(t, body[i], f.Body[i*(64<<10):(i+1)*(64<<10)], "frame %d part %d", f.Opaque, i)
		}
	}
	require.Eventually(t, func() bool { return done.Load() == frames }, 5*time.Second, time.Millisecond)

	// Drained: the next write re-enables direct mode; then writes are free.
	small := &codec.Frame{Code: int32(codec.RespSuccess), Flag: codec.FlagResponse}
	require.NoError(t, c.Write(small))
	rc.recv()
	require.Eventually(t, func() bool {
		o.mu.Lock()
		defer o.mu.Unlock()
		return o.direct
	}, 5*time.Second, time.Millisecond)
	if !raceEnabled {
		reply := make([]byte, 256)
		allocs := testing.AllocsPerRun(200, func() {
			if err := c.Write(small); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(rc.br, reply[:4]); err != nil {
				t.Fatal(err)
			}
			if _, err := io.ReadFull(rc.br, reply[:binary.BigEndian.Uint32(reply)]); err != nil {
				t.Fatal(err)
			}
		})
		require.Zero(t, allocs)
	}
}

// Writers racing a close never write after it: each write either lands or
// fails with ErrConnClosed, and done runs exactly once for each.
func TestWritersRacingClose(t *testing.T) {
	var srv atomic.Pointer[Conn]
	connected := make(chan struct{})
	s := startServer(t, ServerConfig{OnConnect: func(c *Conn) { srv.Store(c); close(connected) }}, NewRouter())
	rc := dialRaw(t, s.Addr())
	<-connected
	c := srv.Load()
	go func() { _, _ = io.Copy(io.Discard, rc.br) }()

	const writers, each = 4, 200
	var calls atomic.Int32
	var wg sync.WaitGroup
	body := [][]byte{make([]byte, 8<<10)}
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range each {
				f := &codec.Frame{Code: int32(codec.RespSuccess), Flag: codec.FlagResponse}
				_ = c.WriteWithBody(f, body, func(error) {
					if calls.Add(1) == writers*each/4 {
						go c.Close() // mid-stream, from yet another goroutine
					}
				})
			}
		}()
	}
	wg.Wait()
	require.Eventually(t, func() bool { return calls.Load() == writers*each }, 5*time.Second, time.Millisecond)
	require.Eventually(t, c.Closed, 5*time.Second, time.Millisecond)
	require.ErrorIs(t, c.Write(&codec.Frame{}), ErrConnClosed)
}

// A detached frame keeps its values after the lease's buffer is reused,
// for both header encodings and for strings the decoder had to unescape.
func TestDetachSurvivesBufferReuse(t *testing.T) {
	for _, ser := range []codec.SerializeType{codec.SerializeJSON, codec.SerializeRocketMQ} {
		req := request(codeEcho, 7)
		req.Serialize = ser
		req.Remark = "remark \"quoted\" \u00e9"
		for i := range 20 { // more than inFrame's room
			req.Set("k"+strconv.Itoa(i), "v\t"+strconv.Itoa(i))
		}
		req.Body = []byte("the body")
		wire := req.AppendTo(nil)
		payload, _, err := codec.NextFrame(wire, codec.DefaultMaxFrameLength)
		require.NoError(t, err)
		l := getLease(len(payload))
		copy(l.buf, payload)
		require.NoError(t, l.decode())
		f := l.detach()
		for i := range l.buf[:cap(l.buf)] { // what the next request would do
			l.buf[:cap(l.buf)][i] = 'X'
		}
		require.Equal(t, req.Remark, f.Remark)
		require.Len(t, f.Ext, 20)
		for i := range 20 {
			require.Equal(t, "v\t"+strconv.Itoa(i), f.Value("k"+strconv.Itoa(i)))
		}
		require.Equal(t, []byte("the body"), f.Body)
		require.Equal(t, int32(7), f.Opaque)
	}
}
