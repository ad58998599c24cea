package grpcsvc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/credentials"

	"github.com/rocketgo/rocketgo/codec/proxyproto"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/compat/javaprops"
)

// TLSConfig is the gRPC port's TLS as Java's proxy has it
// (ProxyAndTlsProtocolNegotiator): the mode is tls.server.mode, shared
// with the remoting ports (Java's TlsSystemConfig is process-wide); the
// certificate comes from the proxy's own keys tlsTestModeEnable (default
// true: a self-signed certificate made at start), tlsCertPath and
// tlsKeyPath, not from tls.server.*. Client certificates are not asked
// for (Java: ClientAuth.NONE).
type TLSConfig struct {
	Mode     tlsconf.Mode
	TestMode bool
	CertPath string
	KeyPath  string
	// HandshakeTimeout bounds a connection's first byte, its TLS
	// handshake and its HTTP/2 preface (0: 10 s).
	HandshakeTimeout time.Duration
}

// The proxy's TLS keys (ProxyConfig), in rmq-proxy.json and, for local
// mode, in broker.conf.
const (
	KeyTLSTestModeEnable = "tlsTestModeEnable"
	KeyTLSCertPath       = "tlsCertPath"
	KeyTLSKeyPath        = "tlsKeyPath"
)

// DefaultTLS is Java's ProxyConfig defaults under proxyHome (Java:
// $RMQ_PROXY_HOME, else $ROCKETMQ_HOME, else ./) with mode.
func DefaultTLS(mode tlsconf.Mode) TLSConfig {
	home := os.Getenv("RMQ_PROXY_HOME")
	if home == "" {
		home = os.Getenv("ROCKETMQ_HOME")
	}
	if home == "" {
		home = "."
	}
	return TLSConfig{Mode: mode, TestMode: true,
		CertPath: filepath.Join(home, "conf", "tls", "rocketmq.crt"), KeyPath: filepath.Join(home, "conf", "tls", "rocketmq.key")}
}

// TLSFromBrokerConf is DefaultTLS(mode) with the proxy's TLS keys of a
// broker.conf ("" for none) applied: local mode, where Java reads them
// from rmq-proxy.json.
func TLSFromBrokerConf(path string, mode tlsconf.Mode) (TLSConfig, error) {
	c := DefaultTLS(mode)
	if path == "" {
		return c, nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return c, fmt.Errorf("grpc TLS keys: %w", err)
	}
	props, err := javaprops.Parse(data)
	if err != nil {
		return c, fmt.Errorf("grpc TLS keys: %s: %w", path, err)
	}
	if v, ok := props.Get(KeyTLSTestModeEnable); ok {
		if c.TestMode, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return c, fmt.Errorf("grpc TLS keys: %s=%q: %w", KeyTLSTestModeEnable, v, err)
		}
	}
	if v, ok := props.Get(KeyTLSCertPath); ok {
		c.CertPath = strings.TrimSpace(v)
	}
	if v, ok := props.Get(KeyTLSKeyPath); ok {
		c.KeyPath = strings.TrimSpace(v)
	}
	return c, nil
}

// credentials returns the server's transport credentials; Disabled
// serves plaintext only, after the PROXY protocol detection.
func (c TLSConfig) credentials() (credentials.TransportCredentials, error) {
	if c.Mode == tlsconf.Disabled {
		return &modeCreds{mode: tlsconf.Disabled}, nil
	}
	tc, _, err := tlsconf.Config{ServerMode: c.Mode, TestMode: c.TestMode, ServerCertPath: c.CertPath, ServerKeyPath: c.KeyPath}.Server()
	if err != nil {
		return nil, fmt.Errorf("grpcsvc: gRPC TLS: %w", err)
	}
	tc.ClientAuth = tls.NoClientCert
	tc.NextProtos = []string{"h2"} // the SDKs (grpc-java, grpc-go …) insist on ALPN h2
	return &modeCreds{mode: c.Mode, tc: tc}, nil
}

// handshakeTimeout is HandshakeTimeout with its default.
func (c TLSConfig) handshakeTimeout() time.Duration {
	if c.HandshakeTimeout > 0 {
		return c.HandshakeTimeout
	}
	return 10 * time.Second
}

// modeCreds serves TLS, plaintext or both on one port as tls.server.mode
// says, after a PROXY protocol header if the connection starts with one
// (Java's ProxyAndTlsProtocolNegotiator: HAProxy detection first, then the
// TLS mode): the header's source address becomes the connection's remote
// address, hence the peer that source-IP ACLs check. Permissive reads the
// first byte and starts a handshake on 0x16 (a TLS record), plaintext
// HTTP/2 otherwise; enforcing always handshakes, so a plaintext client
// fails there; disabled never does. A malformed header closes the
// connection. It runs on grpc's goroutine of the new connection, under its
// ConnectionTimeout.
type modeCreds struct {
	mode tlsconf.Mode
	tc   *tls.Config
}

// plainInfo is the AuthInfo of a plaintext connection.
type plainInfo struct{ credentials.CommonAuthInfo }

func (plainInfo) AuthType() string { return "insecure" }

var errClientSide = errors.New("grpcsvc: server-only transport credentials")

func (m *modeCreds) ClientHandshake(context.Context, string, net.Conn) (net.Conn, credentials.AuthInfo, error) {
	return nil, nil, errClientSide
}

func (m *modeCreds) ServerHandshake(raw net.Conn) (net.Conn, credentials.AuthInfo, error) {
	rest, src, err := readProxyHeader(raw)
	if err != nil {
		return nil, nil, err
	}
	var conn net.Conn = raw
	if src.IsValid() {
		conn = &peerConn{Conn: raw, remote: net.TCPAddrFromAddrPort(src)}
	}
	plain := plainInfo{credentials.CommonAuthInfo{SecurityLevel: credentials.NoSecurity}}
	if m.mode == tlsconf.Disabled {
		return withPrefix(conn, rest), plain, nil
	}
	if m.mode == tlsconf.Permissive {
		if len(rest) == 0 {
			var first [1]byte
			if _, err := conn.Read(first[:]); err != nil {
				return nil, nil, fmt.Errorf("grpcsvc: first byte: %w", err)
			}
			rest = first[:]
		}
		if rest[0] != 0x16 {
			return withPrefix(conn, rest), plain, nil
		}
	}
	conn = withPrefix(conn, rest)
	tconn := tls.Server(conn, m.tc)
	if err := tconn.Handshake(); err != nil {
		return nil, nil, fmt.Errorf("grpcsvc: TLS handshake: %w", err)
	}
	return tconn, credentials.TLSInfo{State: tconn.ConnectionState(),
		CommonAuthInfo: credentials.CommonAuthInfo{SecurityLevel: credentials.PrivacyAndIntegrity}}, nil
}

func (m *modeCreds) Info() credentials.ProtocolInfo {
	return credentials.ProtocolInfo{SecurityProtocol: "tls", SecurityVersion: "1.2"}
}

func (m *modeCreds) Clone() credentials.TransportCredentials {
	c := &modeCreds{mode: m.mode}
	if m.tc != nil {
		c.tc = m.tc.Clone()
	}
	return c
}

func (m *modeCreds) OverrideServerName(string) error { return nil }

// readProxyHeader reads a connection's first bytes until proxyproto.Parse
// decides: rest is what was read past the header (or everything, without
// one), src the header's client address (invalid: keep the socket's).
// Reads are bounded by proxyproto.MaxV2.
func readProxyHeader(c net.Conn) (rest []byte, src netip.AddrPort, err error) {
	b := make([]byte, 0, 256)
	for {
		res, n, addr, perr := proxyproto.Parse(b)
		if perr != nil {
			return nil, src, fmt.Errorf("grpcsvc: %w", perr)
		}
		switch res {
		case proxyproto.None:
			return b, src, nil
		case proxyproto.Done:
			return b[n:], addr, nil
		}
		if len(b) == cap(b) {
			nb := make([]byte, len(b), min(2*cap(b), proxyproto.MaxV2))
			copy(nb, b)
			b = nb
		}
		k, rerr := c.Read(b[len(b):cap(b)])
		b = b[:len(b)+k]
		if rerr != nil && k == 0 {
			return nil, src, fmt.Errorf("grpcsvc: connection preamble: %w", rerr)
		}
	}
}

// peerConn is a connection whose client is the PROXY header's source.
type peerConn struct {
	net.Conn
	remote net.Addr
}

func (p *peerConn) RemoteAddr() net.Addr { return p.remote }

func withPrefix(c net.Conn, b []byte) net.Conn {
	if len(b) == 0 {
		return c
	}
	return &prefixConn{Conn: c, buf: b}
}

// prefixConn gives back the bytes the detection read before the rest.
type prefixConn struct {
	net.Conn
	buf []byte
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.buf) > 0 {
		// Alone: reading on could block on a client that sent only these.
		n := copy(b, p.buf)
		p.buf = p.buf[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}
