package transport

import (
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// heapInUse is the live heap after a full collection.
func heapInUse() int64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapInuse)
}

// Thousands of handshakes that never finish: at most MaxTLSHandshakes are
// held (the rest closed at once), memory stays bounded, a normal client
// is served meanwhile, and the handshake deadline frees the held ones.
func TestTLSIdleHandshakesBounded(t *testing.T) {
	const n, limit = 2000, 256
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t),
		MaxTLSHandshakes: limit, TLSHandshakeTimeout: 3 * time.Second}, echoRouter(t))
	hello := clientHelloStart(t)
	base := heapInUse()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for range n {
		c, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = c.Write(hello[:len(hello)-10]) // never complete
		require.NoError(t, err)
	}
	// The normal clients, TLS and plaintext, are served meanwhile.
	invokeEcho(t, newClient(t, nil), s.Addr(), codeEcho, "plain")
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.sniffing) == 0 && len(s.handshakes) <= limit
	}, 5*time.Second, time.Millisecond)
	held := len(s.handshakes)
	require.LessOrEqual(t, held, limit)
	grown := heapInUse() - base
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stack := int64(ms.StackInuse) - int64(ms0.StackInuse)
	t.Logf("%d half handshakes: %d held, heap +%d KiB (%d B per held handshake), stacks +%d KiB (%d B each)",
		n, held, grown>>10, grown/int64(max(held, 1)), stack>>10, stack/int64(max(held, 1)))
	require.Less(t, grown, int64(limit)*64<<10, "heap grew %d bytes", grown)
	// Refused ones are closed by the server at once.
	seen := make([]bool, len(conns))
	refused := 0
	require.Eventually(t, func() bool {
		for i, c := range conns {
			if seen[i] {
				continue
			}
			_ = c.SetReadDeadline(time.Now().Add(100 * time.Microsecond))
			var b [1]byte
			if _, err := c.Read(b[:]); err != nil {
				if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
					seen[i] = true // seen closed
					refused++
				}
			}
		}
		return refused >= n-limit
	}, 5*time.Second, time.Millisecond)
	// The limit frees as deadlines pass: a TLS client gets through after.
	require.Eventually(t, func() bool { return len(s.handshakes) == 0 }, 10*time.Second, 10*time.Millisecond)
	invokeEcho(t, newTLSClient(t, insecureClientTLS()), s.Addr(), codeEcho, "tls-after")
}

// Memory of established, idle TLS connections (reported; bounded loosely).
func TestTLSIdleConnectionMemory(t *testing.T) {
	const n = 1000
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t)}, echoRouter(t))
	base := heapInUse()
	var ms0 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			_ = c.Close()
		}
	}()
	for i := range n {
		rc, err := dialTLS(t, s.Addr(), insecureClientTLS())
		require.NoError(t, err)
		req := request(codeEcho, int32(i))
		req.Set("id", "x")
		rc.send(req)
		rc.recv()
		conns = append(conns, rc.nc)
	}
	require.Equal(t, n, s.ConnCount())
	grown := heapInUse() - base
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stack := int64(ms.StackInuse) - int64(ms0.StackInuse)
	// Both ends live in this process: the client side's tls.Conn is in the figure too.
	t.Logf("%d idle TLS connections (both ends in this process): heap +%d KiB (%d B each), stacks +%d KiB (%d B each)",
		n, grown>>10, grown/n, stack>>10, stack/n)
	require.Less(t, grown/n, int64(128<<10))
}

// A TLS client that pipelines without reading is paused (not read) at
// the marks, and once it reads every request is answered: no wake-up of
// the TLS reader is lost.
func TestTLSPipelinedWithoutReadingPausesThenAnswersAll(t *testing.T) {
	const n = 3000
	r := NewRouter()
	r.Handle(codeEcho, newPool(t, "p", 2, 4096), echo)
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t),
		WriteHighWater: 64 << 10, WriteLowWater: 16 << 10, MaxInflightPerConn: 16}, r)
	rc, err := dialTLS(t, s.Addr(), insecureClientTLS())
	require.NoError(t, err)
	req := request(codeEcho, 0)
	req.Body = make([]byte, 1<<10)
	var wire []byte
	for i := range n {
		req.Opaque = int32(i)
		wire = req.AppendTo(wire)
	}
	wrote := make(chan error, 1)
	go func() {
		_ = rc.nc.SetWriteDeadline(time.Now().Add(30 * time.Second))
		_, err := rc.nc.Write(wire)
		wrote <- err
	}()
	require.Eventually(t, func() bool { return s.pauses.Load() > 0 }, 10*time.Second, time.Millisecond)
	seen := make([]bool, n)
	for range n {
		f := rc.recv()
		require.False(t, seen[f.Opaque])
		seen[f.Opaque] = true
	}
	require.NoError(t, <-wrote)
}
