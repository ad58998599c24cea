package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

const (
	codeEcho  codec.RequestCode = 9001
	codeOther codec.RequestCode = 9002
)

// testLogger is quiet: the failures tests provoke on purpose (panics, bad
// frames) would otherwise flood the output. ROCKETGO_TEST_LOG=1 shows all.
func testLogger() *slog.Logger {
	level := slog.LevelError + 1
	if os.Getenv("ROCKETGO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// startServer starts a server on 127.0.0.1:0 and closes it when the test ends.
func startServer(t testing.TB, cfg ServerConfig, r *Router) *Server {
	t.Helper()
	cfg.Addr = "127.0.0.1:0"
	if cfg.Logger == nil {
		cfg.Logger = testLogger()
	}
	s := NewServer(cfg, r)
	require.NoError(t, s.Start())
	t.Cleanup(func() { require.NoError(t, s.Close()) })
	return s
}

func newPool(t testing.TB, name string, workers, queue int) *Pool {
	p := NewPool(name, workers, queue)
	t.Cleanup(p.Close)
	return p
}

func newClient(t testing.TB, r *Router) *Client {
	c := NewClient(ClientConfig{Logger: testLogger(), Router: r, DialTimeout: time.Second})
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// echo answers SUCCESS with the request's "id" ext field and body.
func echo(_ *Conn, req *codec.Frame) *codec.Frame {
	resp := codec.NewResponse(req, int32(codec.RespSuccess), "")
	resp.Set("id", req.Value("id"))
	resp.Body = req.Body
	return resp
}

// rawConn is a hand-driven client socket for wire-level tests.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = nc.Close() })
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) send(f *codec.Frame) {
	r.t.Helper()
	_, err := r.nc.Write(f.AppendTo(nil))
	require.NoError(r.t, err)
}

func (r *rawConn) sendBytes(b []byte) {
	r.t.Helper()
	_, err := r.nc.Write(b)
	require.NoError(r.t, err)
}

// recv reads one frame, failing the test after 5 s.
func (r *rawConn) recv() *codec.Frame {
	r.t.Helper()
	f, err := r.tryRecv(5 * time.Second)
	require.NoError(r.t, err)
	return f
}

func (r *rawConn) tryRecv(d time.Duration) (*codec.Frame, error) {
	_ = r.nc.SetReadDeadline(time.Now().Add(d))
	var prefix [4]byte
	if _, err := io.ReadFull(r.br, prefix[:]); err != nil {
		return nil, err
	}
	payload := make([]byte, binary.BigEndian.Uint32(prefix[:]))
	if _, err := io.ReadFull(r.br, payload); err != nil {
		return nil, err
	}
	f := &codec.Frame{}
	if err := codec.Decode(payload, f); err != nil {
		return nil, err
	}
	return f, nil
}

// expectClosed waits until the server closes the socket (EOF or reset).
func (r *rawConn) expectClosed() {
	r.t.Helper()
	_ = r.nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.Copy(io.Discard, r.br)
	// io.Copy returns nil on EOF; a reset is also a close by the server.
	if err != nil {
		var ne net.Error
		require.False(r.t, errorAs(err, &ne) && ne.Timeout(), "server did not close the connection: %v", err)
	}
}

func errorAs(err error, target any) bool { return errors.As(err, target) }

func request(code codec.RequestCode, opaque int32) *codec.Frame {
	return &codec.Frame{Code: int32(code), Language: codec.LangGo, Version: 317, Opaque: opaque}
}
