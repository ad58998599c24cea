package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/binary"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// serverTLS is a test-mode server config (self-signed, client certs
// requested, not verified).
func serverTLS(t testing.TB) *tls.Config {
	t.Helper()
	tc, mode, err := tlsconf.Default().Server()
	require.NoError(t, err)
	require.Equal(t, tlsconf.Permissive, mode)
	return tc
}

func insecureClientTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12}
}

func echoRouter(t testing.TB) *Router {
	r := NewRouter()
	r.Handle(codeEcho, nil, echo)
	r.Handle(codeOther, newPool(t, "p", 2, 64), echo)
	return r
}

func invokeEcho(t testing.TB, cl *Client, addr string, code codec.RequestCode, id string) {
	t.Helper()
	req := request(code, 0)
	req.Set("id", id)
	req.Body = []byte("body-" + id)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := cl.Invoke(ctx, addr, req)
	require.NoError(t, err)
	require.Equal(t, int32(codec.RespSuccess), resp.Code)
	require.Equal(t, id, resp.Value("id"))
	require.Equal(t, "body-"+id, string(resp.Body))
}

func newTLSClient(t testing.TB, tc *tls.Config) *Client {
	c := NewClient(ClientConfig{Logger: testLogger(), DialTimeout: 2 * time.Second, TLS: tc})
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	return c
}

// dialTLS is crypto/tls straight, with a raw-frame wrapper on top.
func dialTLS(t testing.TB, addr string, tc *tls.Config) (*rawConn, error) {
	t.Helper()
	nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 2 * time.Second}, "tcp", addr, tc)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = nc.Close() })
	return newRaw(t, nc), nil
}

func TestTLSPermissiveServesBoth(t *testing.T) {
	var opened, closed atomic.Int32
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t),
		OnConnect: func(*Conn) { opened.Add(1) }, OnClose: func(*Conn) { closed.Add(1) }}, echoRouter(t))

	plain := newClient(t, nil)
	secure := newTLSClient(t, insecureClientTLS())
	for i, code := range []codec.RequestCode{codeEcho, codeOther, codeEcho, codeOther} {
		id := string(rune('a' + i))
		invokeEcho(t, plain, s.Addr(), code, "p"+id)
		invokeEcho(t, secure, s.Addr(), code, "t"+id)
	}
	rc, err := dialTLS(t, s.Addr(), insecureClientTLS())
	require.NoError(t, err)
	req := request(codeOther, 7)
	req.Set("id", "raw")
	rc.send(req)
	f := rc.recv()
	require.Equal(t, int32(7), f.Opaque)
	require.Equal(t, "raw", f.Value("id"))
	require.Equal(t, 3, s.ConnCount())
	require.Equal(t, int32(3), opened.Load())

	// The server's Conn of a TLS client writes server-initiated requests too.
	require.NoError(t, rc.nc.Close())
	require.Eventually(t, func() bool { return closed.Load() == 1 && s.ConnCount() == 2 }, 5*time.Second, time.Millisecond)
}

func TestTLSServerInitiatedInvoke(t *testing.T) {
	srvConn := make(chan *Conn, 1)
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Enforcing, TLS: serverTLS(t),
		OnConnect: func(c *Conn) { srvConn <- c }}, echoRouter(t))
	cr := NewRouter()
	cr.Handle(codeEcho, nil, echo)
	cl := NewClient(ClientConfig{Logger: testLogger(), Router: cr, TLS: insecureClientTLS()})
	t.Cleanup(func() { _ = cl.Close() })
	invokeEcho(t, cl, s.Addr(), codeOther, "x")
	c := <-srvConn
	req := request(codeEcho, 0)
	req.Set("id", "from-server")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, req)
	require.NoError(t, err)
	require.Equal(t, "from-server", resp.Value("id"))
}

func TestTLSEnforcingRefusesPlaintext(t *testing.T) {
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Enforcing, TLS: serverTLS(t)}, echoRouter(t))
	rc := dialRaw(t, s.Addr())
	rc.send(request(codeEcho, 1))
	rc.expectClosed()
	invokeEcho(t, newTLSClient(t, insecureClientTLS()), s.Addr(), codeEcho, "ok")
}

func TestTLSDisabledRefusesTLS(t *testing.T) {
	for _, proxy := range []bool{false, true} { // without detection: as a bad frame length
		s := startServer(t, ServerConfig{ProxyProtocol: proxy}, echoRouter(t))
		_, err := dialTLS(t, s.Addr(), insecureClientTLS())
		require.Error(t, err)
		invokeEcho(t, newClient(t, nil), s.Addr(), codeEcho, "plain")
	}
}

func TestTLSModeWithoutConfigFailsStart(t *testing.T) {
	s := NewServer(ServerConfig{Addr: "127.0.0.1:0", TLSMode: tlsconf.Permissive, Logger: testLogger()}, nil)
	require.Error(t, s.Start())
}

func TestTLSClientAuthRequire(t *testing.T) {
	certs := writeTestPKI(t)
	cfg, err := tlsconf.Load(map[string]string{
		tlsconf.KeyConfigFile: certs.dir + "/absent.properties", tlsconf.KeyServerMode: "enforcing",
		tlsconf.KeyTestModeEnable: "false", tlsconf.KeyServerCertPath: certs.cert, tlsconf.KeyServerKeyPath: certs.key,
		tlsconf.KeyServerNeedClientAuth: "require", tlsconf.KeyServerAuthClient: "true", tlsconf.KeyServerTrustCertPath: certs.cert,
	})
	require.NoError(t, err)
	stc, mode, err := cfg.Server()
	require.NoError(t, err)
	require.Equal(t, tls.RequireAndVerifyClientCert, stc.ClientAuth)
	s := startServer(t, ServerConfig{TLSMode: mode, TLS: stc}, echoRouter(t))

	// No certificate: TLS 1.3 reports the refusal on the first read.
	if rc, err := dialTLS(t, s.Addr(), insecureClientTLS()); err == nil {
		rc.send(request(codeEcho, 1))
		_, err = rc.tryRecv(5 * time.Second)
		require.Error(t, err)
		var ne net.Error
		require.False(t, errorAs(err, &ne) && ne.Timeout(), "not refused: %v", err)
	}
	// With the certificate (the same self-signed one, trusted as a root).
	ccfg := cfg
	ccfg.ClientCertPath, ccfg.ClientKeyPath = certs.cert, certs.key
	ctc, _, err := ccfg.Client()
	require.NoError(t, err)
	invokeEcho(t, newTLSClient(t, ctc), s.Addr(), codeEcho, "authed")
}

func TestTLSGarbageAfterHandshakeByte(t *testing.T) {
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t)}, echoRouter(t))
	for _, junk := range [][]byte{
		{0x16},
		{0x16, 0x03, 0x01, 0xff, 0xff, 1, 2, 3},
		append([]byte{0x16, 0x03, 0x03, 0x00, 0x10}, make([]byte, 16)...),
		append([]byte{0x16}, make([]byte, 4096)...),
	} {
		rc := dialRaw(t, s.Addr())
		rc.sendBytes(junk)
		if len(junk) > 1 {
			rc.expectClosed() // an alert or a close, never a hang
		}
	}
	invokeEcho(t, newClient(t, nil), s.Addr(), codeEcho, "still")
	require.Eventually(t, func() bool { return s.ConnCount() == 1 }, 5*time.Second, time.Millisecond)
}

func TestTLSHalfHandshakeTimesOut(t *testing.T) {
	s := startServer(t, ServerConfig{TLSMode: tlsconf.Permissive, TLS: serverTLS(t),
		TLSHandshakeTimeout: 200 * time.Millisecond}, echoRouter(t))
	hello := clientHelloStart(t)
	half := dialRaw(t, s.Addr())
	half.sendBytes(hello[:len(hello)/2]) // a ClientHello cut in the middle
	silent := dialRaw(t, s.Addr())       // nothing at all
	_ = silent
	began := time.Now()
	half.expectClosed()
	silent.expectClosed()
	require.Less(t, time.Since(began), 4*time.Second)
}

// clientHelloStart records the first flight of a crypto/tls client.
func clientHelloStart(t testing.TB) []byte {
	t.Helper()
	a, b := net.Pipe()
	go func() {
		_ = tls.Client(a, insecureClientTLS()).Handshake()
	}()
	buf := make([]byte, 4096)
	_ = b.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := b.Read(buf)
	require.NoError(t, err)
	_ = b.Close()
	_ = a.Close()
	require.Equal(t, byte(0x16), buf[0])
	// Whole record: header 5 bytes + length.
	if l := 5 + int(binary.BigEndian.Uint16(buf[3:5])); l <= n {
		n = l
	}
	return buf[:n]
}

func newRaw(t testing.TB, nc net.Conn) *rawConn {
	return &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
}

type testPKI struct{ dir, cert, key string }

// writeTestPKI writes a self-signed certificate and its unencrypted key
// as PEM files.
func writeTestPKI(t testing.TB) testPKI {
	t.Helper()
	cert, err := tlsconf.SelfSigned()
	require.NoError(t, err)
	dir := t.TempDir()
	p := testPKI{dir: dir, cert: filepath.Join(dir, "cert.pem"), key: filepath.Join(dir, "key.pem")}
	der, err := x509.MarshalPKCS8PrivateKey(cert.PrivateKey)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(p.cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600))
	require.NoError(t, os.WriteFile(p.key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), 0o600))
	return p
}
