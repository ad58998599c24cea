package transport

import (
	"net"
	"os"
	"runtime"
	"syscall"
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
// held (each new one beyond closes the oldest), memory stays bounded, and
// normal clients, TLS ones included, are served during the flood.
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
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	for i := range n {
		c, err := net.DialTimeout("tcp", s.Addr(), 2*time.Second)
		require.NoError(t, err)
		conns = append(conns, c)
		_, err = c.Write(hello[:len(hello)-10]) // never complete
		require.NoError(t, err)
		if i == n/2 {
			// A real TLS client mid-flood completes its handshake.
			invokeEcho(t, newTLSClient(t, insecureClientTLS()), s.Addr(), codeEcho, "tls-during")
		}
	}
	// The normal clients, TLS and plaintext, are served.
	invokeEcho(t, newClient(t, nil), s.Addr(), codeEcho, "plain")
	invokeEcho(t, newTLSClient(t, insecureClientTLS()), s.Addr(), codeEcho, "tls-after")
	require.Eventually(t, func() bool {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.sniffing) == 0 && s.shaking.Len() <= limit
	}, 5*time.Second, time.Millisecond)
	held := s.handshaking()
	require.LessOrEqual(t, held, limit)
	grown := heapInUse() - base
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	stack := int64(ms.StackInuse) - int64(ms0.StackInuse)
	t.Logf("%d half handshakes: %d held, heap +%d KiB (%d B per held handshake), stacks +%d KiB (%d B each)",
		n, held, grown>>10, grown/int64(max(held, 1)), stack>>10, stack/int64(max(held, 1)))
	require.Less(t, grown, int64(limit)*64<<10, "heap grew %d bytes", grown)
	// The ones beyond the limit were closed by the server (the oldest).
	require.Eventually(t, func() bool { return closedByPeer(conns) >= n-limit }, 5*time.Second, time.Millisecond)
	// And the deadline frees the held ones.
	require.Eventually(t, func() bool { return s.handshaking() == 0 }, 10*time.Second, 10*time.Millisecond)
}

// closedByPeer counts the connections the other end closed (a read fails
// otherwise than by its deadline); it marks them by setting them nil.
func closedByPeer(conns []net.Conn) int {
	n := 0
	for i, c := range conns {
		if c == nil {
			n++
			continue
		}
		_ = c.SetReadDeadline(time.Now().Add(50 * time.Microsecond))
		var b [1]byte
		if _, err := c.Read(b[:]); err != nil {
			if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
				_ = c.Close()
				conns[i] = nil
				n++
			}
		}
	}
	return n
}

// raiseNoFile makes the open-file limit at least n, or skips the test.
func raiseNoFile(t *testing.T, n uint64) {
	t.Helper()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Skipf("cannot read RLIMIT_NOFILE: %v", err)
	}
	if lim.Cur >= n {
		return
	}
	want := lim
	want.Cur = n
	if want.Max < n {
		want.Max = n // needs CAP_SYS_RESOURCE (root)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &want); err != nil {
		t.Skipf("needs %d open files, RLIMIT_NOFILE is %d (hard %d) and cannot be raised: %v", n, lim.Cur, lim.Max, err)
	}
	t.Cleanup(func() { _ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim) })
}

// 10,000 idle TLS handshakes against one server with its default limit
// (DefaultMaxTLSHandshakes): a third of the clients send nothing at all,
// a third only the handshake byte 0x16 (past the sniff, into crypto/tls),
// a third a ClientHello cut short; all hold. The process's heap (both
// ends: the clients' sockets too) stays under a bound checked as the
// flood goes (a watchdog: the flood stops at 512 MiB), plaintext and TLS
// clients are served during it, at most the limit is held, and the
// handshake deadline (3 s here) closes every idle connection.
// ROCKETGO_HOSTILE=1 (make test runs it, on its own).
func TestTLSTenThousandIdleHandshakes(t *testing.T) {
	if os.Getenv("ROCKETGO_HOSTILE") == "" {
		t.Skip("set ROCKETGO_HOSTILE=1 (make test runs it on its own)")
	}
	const n, timeout, watchdog = 10000, 3 * time.Second, 512 << 20
	raiseNoFile(t, n+n/2+2000) // the clients, and the silent ones and held handshakes server-side
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t), TLSHandshakeTimeout: timeout},
		echoRouter(t))
	limit := s.cfg.MaxTLSHandshakes
	require.Equal(t, DefaultMaxTLSHandshakes, limit)
	hello := clientHelloStart(t)
	base := heapInUse()
	conns := make([]net.Conn, 0, n)
	defer func() {
		for _, c := range conns {
			if c != nil {
				_ = c.Close()
			}
		}
	}()
	began := time.Now()
	var peak int64
	for i := range n {
		c, err := net.DialTimeout("tcp", s.Addr(), 5*time.Second)
		require.NoError(t, err, "dial %d", i)
		conns = append(conns, c)
		switch i % 3 {
		case 1:
			_, err = c.Write(hello[:1])
		case 2:
			_, err = c.Write(hello[:len(hello)/2])
		}
		require.NoError(t, err)
		if i%1000 == 999 {
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			peak = max(peak, int64(ms.HeapInuse))
			require.Less(t, int64(ms.HeapInuse), int64(watchdog), "watchdog: heap past %d MiB after %d connections", watchdog>>20, i+1)
			// Served meanwhile: plaintext, and a fresh TLS handshake.
			invokeEcho(t, newClient(t, nil), s.Addr(), codeEcho, "plain-during")
			invokeEcho(t, newTLSClient(t, insecureClientTLS()), s.Addr(), codeEcho, "tls-during")
		}
	}
	flood := time.Since(began)
	require.LessOrEqual(t, s.handshaking(), limit)
	grown := heapInUse() - base
	t.Logf("%d idle connections opened in %v; %d TLS handshakes held (limit %d); heap +%d MiB (peak in use %d MiB); %d handshakes closed for newer ones",
		n, flood.Round(time.Millisecond), s.handshaking(), limit, grown>>20, peak>>20, s.evictions.Load())
	// Bound: the held handshakes (~21 KiB each, doc.go) and the sniffers
	// and sockets of both ends, well under the watchdog.
	require.Less(t, grown, int64(128<<20), "heap grew %d MiB", grown>>20)
	// The deadline closes every idle one (the evicted at once).
	require.Eventually(t, func() bool { return closedByPeer(conns) == n }, timeout+20*time.Second, 20*time.Millisecond,
		"idle connections left open past the handshake deadline")
	t.Logf("all %d closed by the server %v after the flood ended", n, (time.Since(began) - flood).Round(time.Millisecond))
	require.Eventually(t, func() bool { return s.handshaking() == 0 }, 5*time.Second, 10*time.Millisecond)
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
