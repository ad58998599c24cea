package transport

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"github.com/rocketgo/rocketgo/codec/transport/transporttest"
	"io"
	"log/slog"
	"net"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/rocketgo/rocketgo/codec"
)

// logSink captures a server's WARN lines, so a test can check the reason
// a connection was closed.
type logSink struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logSink) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

func captureLog() (*slog.Logger, *logSink) {
	sink := &logSink{}
	return slog.New(slog.NewTextHandler(sink, &slog.HandlerOptions{Level: slog.LevelWarn})), sink
}

// A client that pipelines requests with big replies and never reads is
// paused: the server stops decoding its requests once its unsent replies
// pass WriteHighWater (or MaxInflightPerConn requests are on the pool), so
// what it buffers for the connection stays below high water plus the
// replies of the requests already dispatched. Replies that are views
// (WriteWithBody, as pull replies are) are not copied while they wait.
// Another client is served meanwhile. The contract once the client reads:
// every request it sent is answered, none twice, none dropped.
func TestNonReadingClientIsBounded(t *testing.T) {
	const (
		n        = 2000
		high     = 1 << 20
		inflight = 16
	)
	for _, tc := range []struct {
		name   string
		reply  int
		views  bool
		inline bool
	}{
		{"views", 128 << 10, true, false},  // pull-like: 250 MiB if copied
		{"copies", 64 << 10, false, false}, // ordinary replies: 125 MiB
		{"inline", 64 << 10, false, true},  // replies batched by the event loop
	} {
		t.Run(tc.name, func(t *testing.T) {
			shared := bytes.Repeat([]byte{'v'}, tc.reply)
			var handled atomic.Int32
			pool := newPool(t, "big", 4, 4*n)
			r := NewRouter()
			r.Handle(codeEcho, nil, echo)
			p := pool
			if tc.inline {
				p = nil
			}
			r.Handle(codeOther, p, func(c *Conn, req *codec.Frame) *codec.Frame {
				handled.Add(1)
				resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
				if tc.views {
					_ = c.WriteWithBody(resp, [][]byte{shared}, nil)
					return nil
				}
				resp.Body = shared
				return resp
			})
			s := startServer(t, ServerConfig{WriteHighWater: high, WriteLowWater: high / 4, MaxInflightPerConn: inflight}, r)

			nc, err := net.DialTimeout("tcp", s.Addr(), time.Second)
			require.NoError(t, err)
			t.Cleanup(func() { _ = nc.Close() })
			require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(16<<10))
			w := transporttest.WatchHeap(t, 64<<20, func() { _ = nc.Close() })

			var wire []byte
			for i := range n {
				wire = request(codeOther, int32(i+1)).AppendTo(wire)
			}
			_, err = nc.Write(wire)
			require.NoError(t, err)

			// The server stops at a pause and stays there.
			waitFor(t, func() bool { return s.pauses.Load() > 0 })
			var last int32
			require.Eventually(t, func() bool {
				h := handled.Load()
				steady := h == last && h > 0
				last = h
				return steady && pool.Pending() == 0
			}, 10*time.Second, 100*time.Millisecond)
			require.Less(t, int(handled.Load()), n, "every request was dispatched although nobody read")
			unsent, _ := s.Buffered()
			bound := int64(high + inflight*(tc.reply+256))
			require.LessOrEqual(t, unsent, bound, "unsent bytes of the paused connection")
			t.Logf("paused after %d of %d requests: unsent %d KiB (bound %d KiB), heap +%d KiB",
				handled.Load(), n, unsent>>10, bound>>10, w.Peak()>>10)

			// Another client gets normal service.
			probe := dialRaw(t, s.Addr())
			var lat []time.Duration
			for i := range 50 {
				start := time.Now()
				probe.send(request(codeEcho, int32(i)))
				require.Equal(t, int32(i), probe.recv().Opaque)
				lat = append(lat, time.Since(start))
			}
			slices.Sort(lat)
			require.Less(t, lat[len(lat)/2], 20*time.Millisecond, "probe p50 while a client does not read")

			// Now it reads: all n replies arrive, each once.
			br := newFrameReader(nc)
			seen := make(map[int32]bool, n)
			for range n {
				f, err := br.next(10 * time.Second)
				require.NoError(t, err, "after %d replies", len(seen))
				require.False(t, seen[f.Opaque], "opaque %d twice", f.Opaque)
				seen[f.Opaque] = true
				require.Len(t, f.Body, tc.reply)
			}
			require.Equal(t, int32(n), handled.Load())
			w.Stop()
			require.Less(t, w.Peak(), uint64(64<<20))
			waitFor(t, func() bool { u, _ := s.Buffered(); return u == 0 })
		})
	}
}

// Together, non-reading clients stay within MaxUnsentTotal (plus the
// replies of what each had dispatched), far below what their per-
// connection high water marks allow; each still gets all its replies.
func TestNonReadingClientsShareUnsentBudget(t *testing.T) {
	const (
		clients  = 4
		n        = 500
		reply    = 64 << 10
		total    = 2 << 20
		inflight = 8
	)
	body := make([]byte, reply)
	pool := newPool(t, "big", 4, clients*n)
	r := NewRouter()
	r.Handle(codeOther, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body
		return resp
	})
	s := startServer(t, ServerConfig{MaxUnsentTotal: total, MaxInflightPerConn: inflight}, r)
	var ncs []net.Conn
	for range clients {
		nc, err := net.DialTimeout("tcp", s.Addr(), time.Second)
		require.NoError(t, err)
		t.Cleanup(func() { _ = nc.Close() })
		require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(16<<10))
		ncs = append(ncs, nc)
	}
	w := transporttest.WatchHeap(t, 64<<20, func() {
		for _, nc := range ncs {
			_ = nc.Close()
		}
	})
	var wire []byte
	for i := range n {
		wire = request(codeOther, int32(i+1)).AppendTo(wire)
	}
	for _, nc := range ncs {
		_, err := nc.Write(wire)
		require.NoError(t, err)
	}
	var last int64 = -1
	require.Eventually(t, func() bool {
		u, _ := s.Buffered()
		steady := u == last && u > 0
		last = u
		return steady && pool.Pending() == 0
	}, 10*time.Second, 100*time.Millisecond)
	unsent, _ := s.Buffered()
	bound := int64(total + clients*(inflight+1)*(reply+256))
	t.Logf("%d non-reading clients hold %d KiB unsent (bound %d KiB; per-connection high water alone would allow %d KiB)",
		clients, unsent>>10, bound>>10, clients*DefaultWriteHighWater>>10)
	require.LessOrEqual(t, unsent, bound)

	for _, nc := range ncs {
		fr := newFrameReader(nc)
		for i := range n {
			f, err := fr.next(10 * time.Second)
			require.NoError(t, err, "reply %d", i)
			require.Len(t, f.Body, reply)
		}
	}
	w.Stop()
	waitFor(t, func() bool { u, _ := s.Buffered(); return u == 0 })
}

// Output the pause cannot hold back (server-initiated requests, replies
// that come later) is still bounded: past MaxUnsentPerConn the connection
// is closed with a WARN naming the key.
func TestUnsentLimitClosesConnection(t *testing.T) {
	log, sink := captureLog()
	var srv atomic.Pointer[Conn]
	s := startServer(t, ServerConfig{Logger: log, MaxUnsentPerConn: 1 << 20, OnConnect: func(c *Conn) { srv.Store(c) }}, NewRouter())
	nc, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(16<<10))
	waitFor(t, func() bool { return srv.Load() != nil })
	c := srv.Load()
	w := transporttest.WatchHeap(t, 64<<20, func() { _ = nc.Close() })
	f := request(codeEcho, 1)
	f.Body = make([]byte, 64<<10)
	var werr error
	for i := 0; i < 1000 && werr == nil; i++ { // 64 MiB at most
		werr = c.Write(f)
	}
	require.ErrorIs(t, werr, ErrConnClosed)
	waitFor(t, func() bool { return c.Closed() })
	require.Contains(t, sink.String(), "maxUnsentBytesPerConnection")
	w.Stop()
	waitFor(t, func() bool { u, _ := s.Buffered(); return u == 0 })
}

// frameReader reads frames off a plain socket.
type frameReader struct {
	nc net.Conn
	rd io.Reader
}

func newFrameReader(nc net.Conn) *frameReader { return &frameReader{nc: nc, rd: nc} }

func (r *frameReader) next(d time.Duration) (*codec.Frame, error) {
	_ = r.nc.SetReadDeadline(time.Now().Add(d))
	var prefix [4]byte
	if _, err := io.ReadFull(r.rd, prefix[:]); err != nil {
		return nil, err
	}
	payload := make([]byte, binary.BigEndian.Uint32(prefix[:]))
	if _, err := io.ReadFull(r.rd, payload); err != nil {
		return nil, err
	}
	f := &codec.Frame{}
	return f, codec.Decode(payload, f)
}

// A paused client that keeps sending is not read any more (read gating):
// its requests wait in the kernel and its writes block, so the server
// holds no backlog for it (before, it copied up to MaxUnreadPerConn of
// them and then cut the client, which reconnected at once); and as it
// takes none of its replies, it is cut WriteStallTimeout later with a
// WARN naming the key. The server keeps serving others meanwhile.
func TestNonReadingSenderIsNotRead(t *testing.T) {
	log, sink := captureLog()
	pool := newPool(t, "big", 2, 1<<16)
	body := make([]byte, 64<<10)
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	r.Handle(codeOther, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.Body = body
		return resp
	})
	// The replies to requests already taken are what the server may hold
	// for a paused connection: at most MaxInflightPerConn of 64 KiB each.
	// With the default 1024 that is the heap bound itself (64 MiB), which
	// garbage not yet collected passed under load; 256 leaves 16 MiB.
	s := startServer(t, ServerConfig{Logger: log, MaxFrameLength: 1 << 20, MaxUnreadPerConn: 1 << 20,
		MaxInflightPerConn: 256, WriteHighWater: 256 << 10, WriteLowWater: 64 << 10,
		WriteStallTimeout: 500 * time.Millisecond}, r)
	nc, err := net.DialTimeout("tcp", s.Addr(), time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	require.NoError(t, nc.(*net.TCPConn).SetReadBuffer(16<<10))
	w := transporttest.WatchHeap(t, 64<<20, func() { _ = nc.Close() })

	req := request(codeOther, 1)
	req.Body = make([]byte, 1000)
	var chunk []byte
	for range 64 {
		chunk = req.AppendTo(chunk)
	}
	// Write until the writes block (the server stopped reading) or fail
	// (it cut the connection); 64 MiB at most.
	var sent int
	start := time.Now()
	for range 1024 {
		_ = nc.SetWriteDeadline(time.Now().Add(300 * time.Millisecond))
		n, err := nc.Write(chunk)
		sent += n
		if err != nil {
			break
		}
	}
	_, unread := s.Buffered()
	t.Logf("the client got %d KiB out before its writes stopped; the server holds %d KiB of it unread", sent>>10, unread>>10)
	require.Less(t, sent, 32<<20, "the server kept reading a paused connection")
	require.LessOrEqual(t, unread, int64(256<<10), "a paused connection's bytes should stay in the kernel")
	require.NotContains(t, sink.String(), "maxUnreadBytesPerConnection")

	probe := dialRaw(t, s.Addr())
	probe.send(request(codeEcho, 7))
	require.Equal(t, int32(7), probe.recv().Opaque)

	require.True(t, cutWithoutReading(t, nc, 5*time.Second), "the server never cut a client that does not read")
	require.Less(t, time.Since(start), 5*time.Second)
	require.Contains(t, sink.String(), "writeStallTimeout")
	w.Stop()
	t.Logf("heap grew by %d MiB at most", w.Peak()>>20)
	waitFor(t, func() bool { u, r := s.Buffered(); return u == 0 && r == 0 })
}

// cutWithoutReading waits up to d for the server to close nc (a reset, or
// a FIN), without reading: reading would take replies, which is progress.
func cutWithoutReading(t *testing.T, nc net.Conn, d time.Duration) bool {
	t.Helper()
	rc, err := nc.(*net.TCPConn).SyscallConn()
	require.NoError(t, err)
	for end := time.Now().Add(d); time.Now().Before(end); {
		cut := false
		require.NoError(t, rc.Control(func(fd uintptr) {
			p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLRDHUP}}
			if n, err := unix.Poll(p, 20); err == nil && n > 0 && p[0].Revents&(unix.POLLRDHUP|unix.POLLHUP|unix.POLLERR) != 0 {
				cut = true
			}
		}))
		if cut {
			return true
		}
	}
	return false
}

// Normal pipelining (256 requests in flight on one connection, replies
// read as they come) never pauses a connection.
func TestPipelinedClientNeverPaused(t *testing.T) {
	pool := newPool(t, "send", 4, 10000)
	r := NewRouter()
	r.Handle(codeEcho, pool, echo)
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())
	const total, window = 20000, 256
	body := make([]byte, 1024)
	sem := make(chan struct{}, window) // a slot per request in flight
	errs := make(chan error, 1)
	go func() {
		defer close(errs)
		for i := range total {
			if _, err := rc.tryRecv(10 * time.Second); err != nil {
				errs <- fmt.Errorf("reply %d: %w", i, err)
				return
			}
			<-sem
		}
	}()
	for i := range total {
		sem <- struct{}{}
		req := request(codeEcho, int32(i))
		req.Body = body
		rc.send(req)
	}
	require.NoError(t, <-errs)
	require.Zero(t, s.pauses.Load(), "a normal pipelining client was paused")
}

// Many connections holding half frames stay within MaxUnreadTotal: the
// connections that have held their bytes longest are closed, the newest
// stay.
func TestHalfFramesStayUnderUnreadBudget(t *testing.T) {
	const (
		budget = 4 << 20
		part   = 256 << 10
		conns  = 32 // 8 MiB if nothing is closed
	)
	log, sink := captureLog()
	var mu sync.Mutex
	var srv []*Conn
	s := startServer(t, ServerConfig{Logger: log, MaxFrameLength: 2 << 20, MaxUnreadTotal: budget,
		OnConnect: func(c *Conn) { mu.Lock(); srv = append(srv, c); mu.Unlock() }}, NewRouter())

	var peak atomic.Int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, u := s.Buffered(); u > peak.Load() {
				peak.Store(u)
			}
			runtime.Gosched()
		}
	}()
	half := binary.BigEndian.AppendUint32(nil, 1<<20) // announces a 1 MiB frame
	half = append(half, make([]byte, part-4)...)
	var rcs []*rawConn
	for i := range conns {
		rc := dialRaw(t, s.Addr())
		rc.sendBytes(half)
		rcs = append(rcs, rc)
		// Let the server take it in before the next one, so ages are distinct.
		waitFor(t, func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(srv) == i+1 && (srv[i].held.Load() >= part || srv[i].Closed())
		})
	}
	close(stop)
	<-sampled
	_, unread := s.Buffered()
	require.LessOrEqual(t, unread, int64(budget))
	require.LessOrEqual(t, peak.Load(), int64(budget+128<<10), "unread bytes overshoot the budget by more than a read")
	mu.Lock()
	defer mu.Unlock()
	open := 0
	for _, c := range srv {
		if !c.Closed() {
			open++
		}
	}
	require.LessOrEqual(t, open, budget/part)
	require.Greater(t, open, budget/part/2, "closed more than needed")
	require.True(t, srv[0].Closed(), "the oldest holder should go first")
	require.False(t, srv[conns-1].Closed(), "the newest should stay")
	rcs[0].expectClosed()
	require.Contains(t, sink.String(), "maxUnreadBytesTotal")
}

// The memory behind the unread budget is what arrived, not a multiple of
// it: 200 connections each sending 1 MiB of a 2 MiB frame (200 MiB on the
// wire) leave the heap within a few times the 16 MiB budget.
func TestHalfFramesHeapBounded(t *testing.T) {
	const (
		budget = 16 << 20
		conns  = 200
	)
	var mu sync.Mutex
	var ncs []net.Conn
	var srv []*Conn
	s := startServer(t, ServerConfig{MaxFrameLength: 4 << 20, MaxUnreadTotal: budget,
		OnConnect: func(c *Conn) { mu.Lock(); srv = append(srv, c); mu.Unlock() }}, NewRouter())
	w := transporttest.WatchHeap(t, 80<<20, func() {
		mu.Lock()
		defer mu.Unlock()
		for _, nc := range ncs {
			_ = nc.Close()
		}
	})
	half := binary.BigEndian.AppendUint32(nil, 2<<20)
	half = append(half, make([]byte, 1<<20-4)...)
	var wg sync.WaitGroup
	for range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			nc, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
			if err != nil {
				t.Errorf("dial: %v", err)
				return
			}
			mu.Lock()
			ncs = append(ncs, nc)
			mu.Unlock()
			_ = nc.SetWriteDeadline(time.Now().Add(10 * time.Second))
			_, _ = nc.Write(half) // fails once the server closed it: expected for most
		}()
	}
	wg.Wait()
	// Every connection's megabyte is in, or it was closed.
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		if len(srv) < conns {
			return false
		}
		for _, c := range srv {
			if !c.Closed() && c.held.Load() < 1<<20 {
				return false
			}
		}
		return true
	}, 20*time.Second, 10*time.Millisecond)
	_, unread := s.Buffered()
	require.LessOrEqual(t, unread, int64(budget+budget/4))
	w.Stop()
	t.Logf("heap peak +%d MiB with a %d MiB unread budget; %d of %d connections open",
		w.Peak()>>20, budget>>20, s.ConnCount(), conns)
	mu.Lock()
	for _, nc := range ncs {
		_ = nc.Close()
	}
	mu.Unlock()
}

// A sender that dribbles one frame is closed FrameReadTimeout after it
// began, however steadily bytes arrive; and bytes of an incomplete frame
// are not traffic for the idle check. Frames that complete in time, even
// slowly, are never cut off.
func TestSlowSenderClosed(t *testing.T) {
	drip := func(t *testing.T, rc *rawConn, stop <-chan struct{}) {
		prefix := binary.BigEndian.AppendUint32(nil, 200)
		rc.sendBytes(prefix)
		go func() {
			tick := time.NewTicker(50 * time.Millisecond)
			defer tick.Stop()
			for range 100 { // 5 s at most
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				if _, err := rc.nc.Write([]byte{0}); err != nil {
					return
				}
			}
		}()
	}
	t.Run("frame deadline", func(t *testing.T) {
		log, sink := captureLog()
		s := startServer(t, ServerConfig{Logger: log, FrameReadTimeout: 300 * time.Millisecond}, NewRouter())
		rc := dialRaw(t, s.Addr())
		stop := make(chan struct{})
		defer close(stop)
		start := time.Now()
		drip(t, rc, stop)
		rc.expectClosed()
		require.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
		require.Contains(t, sink.String(), "frameReadTimeout")
	})
	t.Run("partial bytes are not activity", func(t *testing.T) {
		s := startServer(t, ServerConfig{IdleTimeout: 300 * time.Millisecond, FrameReadTimeout: -1}, NewRouter())
		rc := dialRaw(t, s.Addr())
		stop := make(chan struct{})
		defer close(stop)
		drip(t, rc, stop)
		rc.expectClosed()
	})
	t.Run("slow but timely frames pass", func(t *testing.T) {
		r := NewRouter()
		r.Handle(codeEcho, nil, echo)
		s := startServer(t, ServerConfig{FrameReadTimeout: 400 * time.Millisecond}, r)
		rc := dialRaw(t, s.Addr())
		for i := range 6 { // 6 frames, 100 ms each: 600 ms on one connection
			req := request(codeEcho, int32(i))
			req.Body = make([]byte, 100)
			wire := req.AppendTo(nil)
			for p := range 3 {
				rc.sendBytes(wire[p*len(wire)/3 : (p+1)*len(wire)/3])
				if p < 2 {
					time.Sleep(50 * time.Millisecond) // the slow sender under test, not synchronization
				}
			}
			require.Equal(t, int32(i), rc.recv().Opaque)
		}
	})
}

// bigHeaderFrame builds a JSON request whose header carries fields tiny
// extFields: about 8 bytes each.
func bigHeaderFrame(opaque int32, fields int) []byte {
	var h []byte
	h = append(h, `{"code":`...)
	h = strconv.AppendInt(h, int64(codeEcho), 10)
	h = append(h, `,"flag":0,"language":"GO","opaque":`...)
	h = strconv.AppendInt(h, int64(opaque), 10)
	h = append(h, `,"version":317,"extFields":{"id":"big"`...)
	for range fields {
		h = append(h, `,"k":"v"`...)
	}
	h = append(h, `}}`...)
	out := binary.BigEndian.AppendUint32(nil, uint32(4+len(h)))
	out = binary.BigEndian.AppendUint32(out, uint32(len(h)))
	return append(out, h...)
}

// A header longer than MaxHeaderLength closes the connection with a WARN
// naming the key, as soon as its length is known.
func TestBigHeaderRefused(t *testing.T) {
	log, sink := captureLog()
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	s := startServer(t, ServerConfig{Logger: log, MaxHeaderLength: 32 << 10}, r)

	rc := dialRaw(t, s.Addr())
	rc.sendBytes(bigHeaderFrame(1, 5000)) // 40 KiB
	rc.expectClosed()
	require.Contains(t, sink.String(), "maxHeaderLength")

	rc = dialRaw(t, s.Addr())
	rc.sendBytes(bigHeaderFrame(2, 120000)[:8]) // the length words alone
	rc.expectClosed()

	rc = dialRaw(t, s.Addr())
	rc.sendBytes(bigHeaderFrame(3, 3000)) // 24 KiB: fine
	f := rc.recv()
	require.Equal(t, int32(3), f.Opaque)
	require.Equal(t, "big", f.Value("id"))
}

// Headers below MaxHeaderLength but too big for the event loop are
// decoded and routed off it: while a big-header request's (inline)
// handler is stuck, another client on the same loop is still served; the
// big request's connection reads its next request only after it, so
// replies keep their order. Then, with two connections streaming ~940 KiB
// headers, the figures of a third client are logged.
func TestBigHeadersDoNotStallTheLoop(t *testing.T) {
	const fields = 120000 // ~940 KiB, under the default 1 MiB bound
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var block atomic.Bool
	block.Store(true)
	r := NewRouter()
	r.Handle(codeEcho, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		if req.Value("id") == "big" && block.Load() {
			entered <- struct{}{}
			<-release // the test's stand-in for a long decode
		}
		return echo(c, req)
	})
	s := startServer(t, ServerConfig{}, r) // one event loop for all
	var once sync.Once
	unblock := func() { once.Do(func() { block.Store(false); close(release) }) }
	t.Cleanup(unblock) // before the server closes, even if the test fails

	rc := dialRaw(t, s.Addr())
	small := request(codeEcho, 2)
	small.Set("id", "small")
	rc.sendBytes(append(bigHeaderFrame(1, fields), small.AppendTo(nil)...))
	select {
	case <-entered:
	case <-time.After(5 * time.Second):
		t.Fatal("big request not routed")
	}
	probe := dialRaw(t, s.Addr())
	for i := range 20 {
		probe.send(request(codeEcho, int32(100+i)))
		f, err := probe.tryRecv(2 * time.Second)
		require.NoError(t, err, "the loop is held by a big header")
		require.Equal(t, int32(100+i), f.Opaque)
	}
	unblock()
	require.Equal(t, int32(1), rc.recv().Opaque, "the big request first")
	require.Equal(t, int32(2), rc.recv().Opaque)

	// Figures under a stream of big headers.
	const frames = 10
	var decode time.Duration = 1 << 62
	big := bigHeaderFrame(0, fields)
	for range 3 {
		var f codec.Frame
		p := slices.Clone(big[4:])
		start := time.Now()
		require.NoError(t, codec.Decode(p, &f))
		decode = min(decode, time.Since(start))
	}
	var wg sync.WaitGroup
	var answered atomic.Int32
	for w := range 2 {
		rc := dialRaw(t, s.Addr())
		var wire []byte
		for i := range frames {
			wire = append(wire, bigHeaderFrame(int32(w*frames+i), fields)...)
		}
		wg.Add(2)
		go func() {
			defer wg.Done()
			_, _ = rc.nc.Write(wire)
		}()
		go func() {
			defer wg.Done()
			for range frames {
				if _, err := rc.tryRecv(30 * time.Second); err != nil {
					t.Errorf("big header reply: %v", err)
					return
				}
				answered.Add(1)
			}
		}()
	}
	var lat []time.Duration
	for i := 0; answered.Load() < 2*frames && i < 5000; i++ {
		start := time.Now()
		probe.send(request(codeEcho, int32(i)))
		require.Equal(t, int32(i), probe.recv().Opaque)
		lat = append(lat, time.Since(start))
	}
	wg.Wait()
	require.Equal(t, int32(2*frames), answered.Load())
	slices.Sort(lat)
	t.Logf("one ~940 KiB header decodes in %v; probe over %d requests: p50 %v p90 %v max %v",
		decode, len(lat), lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1])
}
