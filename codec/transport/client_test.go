package transport

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

const (
	codeRegister codec.RequestCode = 9100 // client → server: hand the test the server's Conn
	codeCheck    codec.RequestCode = 9101 // server → client: answered
	codeHang     codec.RequestCode = 9102 // server → client: never answered
	codeKick     codec.RequestCode = 9103 // client → server: server closes the connection
	codeSilent   codec.RequestCode = 9104 // client → server: never answered
)

func invokeCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The server calls the client on the client's own connection, as the
// broker does for transaction checks; a pending call fails when the
// connection closes.
func TestServerInvokesClient(t *testing.T) {
	conns := make(chan *Conn, 1)
	r := NewRouter()
	r.Handle(codeRegister, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		conns <- c
		return echo(c, req)
	})
	var closedConn = make(chan *Conn, 1)
	s := startServer(t, ServerConfig{OnClose: func(c *Conn) { closedConn <- c }}, r)

	hung := make(chan struct{})
	clientPool := newPool(t, "client-callbacks", 2, 8)
	cr := NewRouter()
	cr.Handle(codeCheck, clientPool, func(c *Conn, req *codec.Frame) *codec.Frame {
		resp := codec.NewResponse(req, int32(codec.RespSuccess), "checked "+req.Value("tx"))
		return resp
	})
	cr.Handle(codeHang, nil, func(*Conn, *codec.Frame) *codec.Frame {
		close(hung)
		return nil
	})
	cl := newClient(t, cr)
	_, err := cl.Invoke(invokeCtx(t), s.Addr(), request(codeRegister, 0))
	require.NoError(t, err)
	sc := <-conns

	req := request(codeCheck, 0)
	req.Set("tx", "42")
	resp, err := sc.Invoke(invokeCtx(t), req)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, "checked 42", resp.Remark)
	require.Equal(t, req.Opaque, resp.Opaque)

	// An unrouted code on the client side answers like Java's remoting.
	resp, err = sc.Invoke(invokeCtx(t), request(codeKick, 0))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespRequestCodeNotSupported), resp.Code)

	// Oneway server → client.
	require.NoError(t, sc.InvokeOneway(request(codeCheck, 0)))

	// A call the client never answers fails as soon as the connection closes.
	failed := make(chan error, 1)
	go func() {
		_, err := sc.Invoke(context.Background(), request(codeHang, 0))
		failed <- err
	}()
	<-hung
	select {
	case err := <-failed:
		t.Fatalf("invoke returned before close: %v", err)
	default:
	}
	require.NoError(t, cl.Close())
	select {
	case err := <-failed:
		require.ErrorIs(t, err, ErrConnClosed)
	case <-time.After(5 * time.Second):
		t.Fatal("pending invoke did not fail on close")
	}
	require.Same(t, sc, <-closedConn)
	require.True(t, sc.Closed())
	_, err = sc.Invoke(invokeCtx(t), request(codeCheck, 0))
	require.ErrorIs(t, err, ErrConnClosed)
}

func TestClientReconnectsAndTimesOut(t *testing.T) {
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	r.Handle(codeKick, nil, func(c *Conn, _ *codec.Frame) *codec.Frame {
		require.NoError(t, c.Close())
		return nil
	})
	r.Handle(codeSilent, nil, func(*Conn, *codec.Frame) *codec.Frame { return nil })
	s := startServer(t, ServerConfig{}, r)
	cl := newClient(t, nil)

	c1, err := cl.Conn(invokeCtx(t), s.Addr())
	require.NoError(t, err)
	_, err = cl.Invoke(invokeCtx(t), s.Addr(), request(codeEcho, 0))
	require.NoError(t, err)

	// The server drops the connection: the pending call fails…
	_, err = cl.Invoke(invokeCtx(t), s.Addr(), request(codeKick, 0))
	require.ErrorIs(t, err, ErrConnClosed)
	waitFor(t, c1.Closed)
	// …and the next call dials a fresh connection.
	resp, err := cl.Invoke(invokeCtx(t), s.Addr(), request(codeEcho, 0))
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	c2, err := cl.Conn(invokeCtx(t), s.Addr())
	require.NoError(t, err)
	require.NotSame(t, c1, c2)
	require.NotEqual(t, c1.LocalAddr(), c2.LocalAddr())

	// A call without an answer times out; the connection stays usable and
	// the late (here: never) reply would be dropped.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err = cl.Invoke(ctx, s.Addr(), request(codeSilent, 0))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.GreaterOrEqual(t, time.Since(start), 90*time.Millisecond)
	_, err = cl.Invoke(invokeCtx(t), s.Addr(), request(codeEcho, 0))
	require.NoError(t, err)
	c3, err := cl.Conn(invokeCtx(t), s.Addr())
	require.NoError(t, err)
	require.Same(t, c2, c3)
}

func TestClientDialFailureAndClose(t *testing.T) {
	// Grab a port nobody listens on: start and close a server.
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger()}, nil)
	require.NoError(t, s.Start())
	addr := s.Addr()
	require.NoError(t, s.Close())

	cl := NewClient(ClientConfig{Logger: testLogger(), DialTimeout: time.Second})
	_, err := cl.Invoke(invokeCtx(t), addr, request(codeEcho, 0))
	require.Error(t, err)
	require.Contains(t, err.Error(), addr)
	require.NoError(t, cl.Close())
	_, err = cl.Invoke(invokeCtx(t), addr, request(codeEcho, 0))
	require.True(t, errors.Is(err, ErrClientClosed))
}

func TestClientConcurrentCallersShareConnection(t *testing.T) {
	pool := newPool(t, "echo", 4, 256)
	r := NewRouter()
	r.Handle(codeEcho, pool, echo)
	var opened = make(chan struct{}, 16)
	s := startServer(t, ServerConfig{OnConnect: func(*Conn) { opened <- struct{}{} }}, r)
	cl := newClient(t, nil)
	const callers, each = 16, 50
	errs := make(chan error, callers)
	for range callers {
		go func() {
			for range each {
				req := request(codeEcho, 0)
				req.Set("id", "x")
				resp, err := cl.Invoke(invokeCtx(t), s.Addr(), req)
				if err == nil && (resp.Value("id") != "x" || resp.Opaque != req.Opaque) {
					err = errors.New("mismatched reply")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range callers {
		require.NoError(t, <-errs)
	}
	require.Len(t, opened, 1, "one connection per address")
}

// Closing the server, client and pools leaves no goroutine of ours behind.
func TestNoGoroutinesLeftAfterClose(t *testing.T) {
	before := runtime.NumGoroutine()
	pool := NewPool("p", 3, 8)
	cpool := NewPool("c", 1, 8)
	r := NewRouter()
	r.Handle(codeEcho, pool, echo)
	conns := make(chan *Conn, 1)
	r.Handle(codeRegister, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		conns <- c
		return echo(c, req)
	})
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", Logger: testLogger(), IdleTimeout: time.Minute}, r)
	require.NoError(t, s.Start())
	cr := NewRouter()
	cr.Handle(codeCheck, cpool, func(c *Conn, req *codec.Frame) *codec.Frame { return echo(c, req) })
	cl := NewClient(ClientConfig{Logger: testLogger(), Router: cr})
	for range 10 {
		_, err := cl.Invoke(invokeCtx(t), s.Addr(), request(codeEcho, 0))
		require.NoError(t, err)
	}
	_, err := cl.Invoke(invokeCtx(t), s.Addr(), request(codeRegister, 0))
	require.NoError(t, err)
	_, err = (<-conns).Invoke(invokeCtx(t), request(codeCheck, 0))
	require.NoError(t, err)

	require.NoError(t, cl.Close())
	require.NoError(t, s.Close())
	pool.Close()
	cpool.Close()
	waitFor(t, func() bool { return runtime.NumGoroutine() <= before })
}

// A peer announcing a huge reply and sending only a few bytes of it costs
// the client what arrived, not what was announced.
func TestClientDoesNotAllocateAnnouncedLength(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		var buf [256]byte
		_, _ = c.Read(buf[:]) // the request
		var hdr [4]byte
		binary.BigEndian.PutUint32(hdr[:], uint32(codec.DefaultMaxFrameLength-16))
		_, _ = c.Write(append(hdr[:], make([]byte, 100)...))
	}()
	cl := newClient(t, nil)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err = cl.Invoke(invokeCtx(t), ln.Addr().String(), request(codeEcho, 0))
	require.ErrorIs(t, err, ErrConnClosed)
	runtime.ReadMemStats(&after)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20),
		"the client allocated the announced %d bytes", codec.DefaultMaxFrameLength-16)
}
