package transport

import (
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

// A pipelined connection gets every reply, matched by opaque, in whatever
// order the handlers finish, while broken connections next to it are cut.
func TestPipelinedOutOfOrderWithBadNeighbours(t *testing.T) {
	const total = 1000
	release := make(chan struct{})
	var (
		deferredMu sync.Mutex
		deferred   []*codec.Frame
		deferredC  *Conn
	)
	pool := newPool(t, "work", 16, total)
	r := NewRouter()
	r.Handle(codeEcho, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		switch req.Value("kind") {
		case "slow": // holds a worker until the test releases it
			<-release
		case "deferred": // replied to later with Conn.Write
			deferredMu.Lock()
			deferred = append(deferred, req)
			deferredC = c
			deferredMu.Unlock()
			return nil
		}
		return echo(c, req)
	})
	var closed atomic.Int32
	s := startServer(t, ServerConfig{OnClose: func(*Conn) { closed.Add(1) }}, r)

	good := dialRaw(t, s.Addr())
	kinds := make(map[int32]string, total)
	var wire []byte
	for i := range total {
		op := int32(i + 1)
		req := request(codeEcho, op)
		kind := "fast"
		switch {
		case i%100 == 3:
			kind = "slow"
		case i%10 == 7:
			kind = "deferred"
		}
		kinds[op] = kind
		req.Set("kind", kind)
		req.Set("id", strconv.Itoa(int(op)))
		wire = req.AppendTo(wire)
	}
	// Send everything in odd-sized chunks so frames straddle reads.
	sendDone := make(chan error, 1)
	go func() {
		for p := wire; len(p) > 0; {
			n := min(len(p), 977)
			if _, err := good.nc.Write(p[:n]); err != nil {
				sendDone <- err
				return
			}
			p = p[n:]
		}
		sendDone <- nil
	}()

	// Meanwhile, broken neighbours.
	var bad sync.WaitGroup
	badFrames := map[string][]byte{
		"garbage":        []byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"),
		"oversize":       binary.BigEndian.AppendUint32(nil, codec.DefaultMaxFrameLength), // +4 prefix > max
		"header-length":  binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 8), 100), 0),
		"bad-serializer": append(binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, 6), 7<<24|2), '{', '}'),
		"short-length":   binary.BigEndian.AppendUint32(nil, 2),
	}
	for name, b := range badFrames {
		bad.Add(1)
		go func() {
			defer bad.Done()
			rc := dialRaw(t, s.Addr())
			rc.sendBytes(b)
			rc.expectClosed()
			t.Logf("%s: closed by server", name)
		}()
	}
	// A truncated frame, then the client hangs up.
	trunc := request(codeEcho, 1).AppendTo(nil)
	tc := dialRaw(t, s.Addr())
	tc.sendBytes(trunc[:len(trunc)-3])
	require.NoError(t, tc.nc.Close())

	nonFast := 0
	for _, k := range kinds {
		if k != "fast" {
			nonFast++
		}
	}
	seen := make(map[int32]bool, total)
	check := func(f *codec.Frame) {
		require.True(t, f.IsResponse())
		require.Equal(t, int32(codec.RespSuccess), f.Code)
		require.False(t, seen[f.Opaque], "duplicate reply %d", f.Opaque)
		seen[f.Opaque] = true
		require.Equal(t, strconv.Itoa(int(f.Opaque)), f.Value("id"))
	}
	// Every fast request completes while slow and deferred ones are stuck:
	// replies are not held back behind earlier requests.
	for range total - nonFast {
		f := good.recv()
		check(f)
		require.Equal(t, "fast", kinds[f.Opaque], "opaque %d", f.Opaque)
	}
	require.NoError(t, <-sendDone)
	bad.Wait()

	close(release)
	deadline := time.Now().Add(5 * time.Second)
	for {
		deferredMu.Lock()
		n := len(deferred)
		deferredMu.Unlock()
		if n == total/10 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Millisecond) // polling a condition, bounded by deadline
	}
	deferredMu.Lock()
	require.Len(t, deferred, total/10)
	for i := len(deferred) - 1; i >= 0; i-- { // reverse order on purpose
		require.NoError(t, deferredC.Write(echoResponse(deferred[i])))
	}
	deferredMu.Unlock()
	for range nonFast {
		check(good.recv())
	}
	require.Len(t, seen, total)

	// The bad connections and the truncated one are gone; the good one stays.
	waitFor(t, func() bool { return closed.Load() == int32(len(badFrames)+1) })
	require.Equal(t, 1, s.ConnCount())
	good.send(request(codeEcho, 5000))
	require.Equal(t, int32(5000), good.recv().Opaque)
}

func echoResponse(req *codec.Frame) *codec.Frame {
	resp := echo(nil, req)
	resp.Opaque = req.Opaque
	return resp
}

// waitFor polls cond until it holds or 5 s pass.
func waitFor(t testing.TB, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 5s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func TestUnknownCodeOnewayPanic(t *testing.T) {
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	r.Handle(codeOther, nil, func(_ *Conn, req *codec.Frame) *codec.Frame {
		if req.Value("boom") != "" {
			panic("boom")
		}
		return echo(nil, req)
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())

	// Unknown code: Java's code and remark, leading space included.
	rc.send(request(4242, 7))
	f := rc.recv()
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), f.Code)
	require.Equal(t, " request type 4242 not supported", f.Remark)
	require.Equal(t, int32(7), f.Opaque)
	require.True(t, f.IsResponse())

	// Oneway requests get nothing back, not even errors: send a oneway
	// echo, a oneway unknown code and a oneway panic, then a normal
	// request, and see only the normal reply.
	for _, req := range []*codec.Frame{request(codeEcho, 8), request(4242, 9), request(codeOther, 10)} {
		req.Flag |= codec.FlagOneway
		req.Set("boom", "1")
		rc.send(req)
	}
	rc.send(request(codeEcho, 11))
	f = rc.recv()
	require.Equal(t, int32(11), f.Opaque)
	require.Equal(t, int32(codec.RespSuccess), f.Code)
	_, err := rc.tryRecv(100 * time.Millisecond)
	require.Error(t, err, "nothing more may arrive")

	// A panicking handler answers SYSTEM_ERROR; the connection lives on.
	req := request(codeOther, 12)
	req.Set("boom", "1")
	rc.send(req)
	f = rc.recv()
	require.Equal(t, int32(12), f.Opaque)
	require.Equal(t, int32(codec.RespSystemError), f.Code)
	require.Contains(t, f.Remark, "boom")
	rc.send(request(codeOther, 13))
	f = rc.recv()
	require.Equal(t, int32(13), f.Opaque)
	require.Equal(t, int32(codec.RespSuccess), f.Code)
}

func TestPoolOverloadAnswersSystemBusy(t *testing.T) {
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	pool := newPool(t, "tiny", 1, 1)
	r := NewRouter()
	r.Handle(codeEcho, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		started <- struct{}{}
		<-release
		return echo(c, req)
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())

	rc.send(request(codeEcho, 1))
	<-started // the worker holds request 1
	rc.send(request(codeEcho, 2))
	waitFor(t, func() bool { return pool.Pending() == 1 }) // request 2 queued
	rc.send(request(codeEcho, 3))
	f := rc.recv()
	require.Equal(t, int32(3), f.Opaque)
	require.Equal(t, int32(codec.RespSystemBusy), f.Code)
	require.Equal(t, "[OVERLOAD]system busy, start flow control for a while", f.Remark)

	// Oneway overflow is dropped silently.
	ow := request(codeEcho, 4)
	ow.Flag |= codec.FlagOneway
	rc.send(ow)

	close(release)
	got := map[int32]int32{}
	for range 2 {
		f := rc.recv()
		got[f.Opaque] = f.Code
	}
	require.Equal(t, map[int32]int32{1: 0, 2: 0}, got)
	_, err := rc.tryRecv(100 * time.Millisecond)
	require.Error(t, err)
}

func TestIdleConnectionClosed(t *testing.T) {
	var closed atomic.Int32
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	s := startServer(t, ServerConfig{IdleTimeout: 300 * time.Millisecond, OnClose: func(*Conn) { closed.Add(1) }}, r)
	rc := dialRaw(t, s.Addr())
	rc.send(request(codeEcho, 1))
	require.Equal(t, int32(1), rc.recv().Opaque)
	start := time.Now()
	rc.expectClosed()
	require.GreaterOrEqual(t, time.Since(start), 200*time.Millisecond)
	waitFor(t, func() bool { return closed.Load() == 1 })
}

func TestCloseClosesConnections(t *testing.T) {
	var opened, closed atomic.Int32
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	s := NewServer(ServerConfig{
		Addr: "127.0.0.1:0", Logger: testLogger(), Multicore: true,
		OnConnect: func(*Conn) { opened.Add(1) },
		OnClose:   func(*Conn) { closed.Add(1) },
	}, r)
	require.NoError(t, s.Start())
	var rcs []*rawConn
	for i := range 3 {
		rc := dialRaw(t, s.Addr())
		rc.send(request(codeEcho, int32(i)))
		rc.recv()
		rcs = append(rcs, rc)
	}
	require.Equal(t, int32(3), opened.Load())
	require.NoError(t, s.Close())
	require.Equal(t, int32(3), closed.Load(), "Close returns after every OnClose")
	for _, rc := range rcs {
		rc.expectClosed()
	}
	require.NoError(t, s.Close(), "second Close is harmless")
}

func TestWriteWithBody(t *testing.T) {
	doneErr := make(chan error, 1)
	r := NewRouter()
	r.Handle(codeEcho, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		require.NoError(t, c.WriteWithBody(resp, [][]byte{[]byte("abc"), []byte("defg")}, func(err error) { doneErr <- err }))
		return nil
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())
	rc.send(request(codeEcho, 77))
	f := rc.recv()
	require.Equal(t, int32(77), f.Opaque)
	require.Equal(t, "abcdefg", string(f.Body))
	require.NoError(t, <-doneErr)
}

// Frames up to the limit pass even when they arrive in many reads; one
// byte more closes the connection.
func TestFrameLimitAndLargeFrames(t *testing.T) {
	const limit = 1 << 20
	r := NewRouter()
	r.Handle(codeEcho, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
		resp.SetInt("len", int64(len(req.Body)))
		return resp
	})
	s := startServer(t, ServerConfig{MaxFrameLength: limit}, r)
	rc := dialRaw(t, s.Addr())

	req := request(codeEcho, 1)
	hdr := req.AppendHeader(nil, 0)
	bodyLen := limit - len(hdr) // prefix + header + body == limit
	req.Body = make([]byte, bodyLen)
	for i := range req.Body {
		req.Body[i] = byte(i)
	}
	wire := req.AppendTo(nil)
	require.Len(t, wire, limit)
	for p := wire; len(p) > 0; p = p[min(len(p), 10007):] {
		rc.sendBytes(p[:min(len(p), 10007)])
	}
	f := rc.recv()
	require.Equal(t, int32(1), f.Opaque)
	require.Equal(t, strconv.Itoa(bodyLen), f.Value("len"))

	req.Opaque = 2
	req.Body = append(req.Body, 0)
	rc.sendBytes(req.AppendTo(nil)[:8]) // the prefix alone is enough to refuse it
	rc.expectClosed()
}

func TestStartFailsOnBusyPort(t *testing.T) {
	s := startServer(t, ServerConfig{}, nil)
	s2 := NewServer(ServerConfig{Addr: s.Addr(), Logger: testLogger()}, nil)
	err := s2.Start()
	require.Error(t, err)
	require.Contains(t, err.Error(), s.Addr())
	require.NoError(t, s2.Close())
}

// Frames dribbled a byte at a time decode the same as whole ones.
func TestDribbledFrames(t *testing.T) {
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())
	var wire []byte
	for i := range 3 {
		req := request(codeEcho, int32(i+1))
		req.Set("id", strconv.Itoa(i+1))
		req.Body = []byte("body")
		wire = req.AppendTo(wire)
	}
	for i := range wire {
		rc.sendBytes(wire[i : i+1])
	}
	for i := range 3 {
		f := rc.recv()
		require.Equal(t, int32(i+1), f.Opaque) // inline handlers keep order
		require.Equal(t, strconv.Itoa(i+1), f.Value("id"))
		require.Equal(t, "body", string(f.Body))
	}
}

func TestPoolMaxQueueWait(t *testing.T) {
	started := make(chan struct{}, 4)
	release := make(chan struct{})
	pool := newPool(t, "send", 1, 4)
	pool.SetMaxQueueWait(50 * time.Millisecond)
	r := NewRouter()
	r.Handle(codeEcho, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		if req.Value("block") != "" {
			started <- struct{}{}
			<-release
		}
		return echo(c, req)
	})
	s := startServer(t, ServerConfig{}, r)
	rc := dialRaw(t, s.Addr())

	blocker := request(codeEcho, 1)
	blocker.Set("block", "1")
	rc.send(blocker)
	<-started
	queued := time.Now()
	rc.send(request(codeEcho, 2))
	rc.send(request(codeEcho, 3))

	// With the only worker stuck, the queued requests still get their
	// SYSTEM_BUSY once they are older than the limit, oldest first.
	for _, op := range []int32{2, 3} {
		f := rc.recv()
		require.Equal(t, op, f.Opaque)
		require.Equal(t, int32(codec.RespSystemBusy), f.Code)
		require.Regexp(t, `^\[TIMEOUT_CLEAN_QUEUE\]broker busy, start flow control for a while, period in queue: \d+ms, size of queue: \d+$`, f.Remark)
	}
	require.GreaterOrEqual(t, time.Since(queued), 50*time.Millisecond)
	require.Zero(t, pool.Pending())

	close(release)
	f := rc.recv()
	require.Equal(t, int32(1), f.Opaque)
	require.Equal(t, int32(codec.RespSuccess), f.Code)
	rc.send(request(codeEcho, 4)) // fresh requests run normally
	f = rc.recv()
	require.Equal(t, int32(4), f.Opaque)
	require.Equal(t, int32(codec.RespSuccess), f.Code)
}

// A handler still running when the server closes finds its connection
// closed; nothing panics and its reply goes nowhere.
func TestCloseWithHandlerInFlight(t *testing.T) {
	started := make(chan *Conn, 1)
	release := make(chan struct{})
	wrote := make(chan error, 1)
	pool := newPool(t, "slow", 1, 1)
	r := NewRouter()
	r.Handle(codeEcho, pool, func(c *Conn, req *codec.Frame) *codec.Frame {
		started <- c
		<-release
		wrote <- c.Write(echoResponse(req))
		return echo(c, req)
	})
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	require.NoError(t, s.Start())
	rc := dialRaw(t, s.Addr())
	rc.send(request(codeEcho, 1))
	c := <-started
	require.NoError(t, s.Close())
	require.True(t, c.Closed())
	close(release)
	require.ErrorIs(t, <-wrote, ErrConnClosed)
	rc.expectClosed()
}

// Every WriteWithBody runs its done exactly once, however the race between
// writers and the connection closing turns out (pull replies release store
// segments there).
func TestWriteWithBodyDoneOnceAcrossClose(t *testing.T) {
	conns := make(chan *Conn, 1)
	r := NewRouter()
	r.Handle(codeEcho, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		conns <- c
		return echo(c, req)
	})
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, r)
	require.NoError(t, s.Start())
	rc := dialRaw(t, s.Addr())
	rc.send(request(codeEcho, 1))
	c := <-conns
	rc.recv()

	const writers, each = 8, 200
	var calls, dones atomic.Int64
	var wg sync.WaitGroup
	body := [][]byte{make([]byte, 512)}
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				calls.Add(1)
				resp := codec.NewResponse(request(codeEcho, int32(i)), 0, "")
				_ = c.WriteWithBody(resp, body, func(error) { dones.Add(1) })
			}
		}()
	}
	go func() { _, _ = io.Copy(io.Discard, rc.nc) }() // keep the socket drained
	require.NoError(t, s.Close())
	wg.Wait()
	require.Equal(t, int64(writers*each), calls.Load())
	waitFor(t, func() bool { return dones.Load() == calls.Load() })
	require.Equal(t, calls.Load(), dones.Load())
}
