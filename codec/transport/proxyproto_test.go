package transport

import (
	"crypto/tls"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/proxyproto/proxyprototest"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

func proxyV2(cmd byte, fam byte, addr []byte) []byte { return proxyprototest.V2(cmd, fam, addr) }

func v2inet(src [4]byte, sport uint16) []byte { return proxyprototest.Inet(src, sport, 9876) }

func v2inet6(src [16]byte, sport uint16) []byte { return proxyprototest.Inet6(src, sport, 9876) }

func TestProxyProtocolSetsRemoteAddr(t *testing.T) {
	remotes := make(chan string, 4)
	r := NewRouter()
	r.Handle(codeEcho, nil, func(c *Conn, req *codec.Frame) *codec.Frame {
		remotes <- c.RemoteAddr()
		return echo(c, req)
	})
	for _, mode := range []tlsconf.Mode{tlsconf.Disabled, tlsconf.Permissive} {
		cfg := ServerConfig{ProxyProtocol: true, TLSMode: mode}
		if mode != tlsconf.Disabled {
			cfg.TLS = serverTLS(t)
		}
		s := startServer(t, cfg, r)
		for _, tc := range []struct {
			header []byte
			want   string
			tls    bool
		}{
			{[]byte("PROXY TCP4 203.0.113.7 198.51.100.1 51234 9876\r\n"), "203.0.113.7:51234", false},
			{proxyV2(1, 0x11, v2inet([4]byte{192, 0, 2, 9}, 4242)), "192.0.2.9:4242", false},
			{proxyV2(1, 0x21, v2inet6(netip.MustParseAddr("2001:db8::9").As16(), 7)), "[2001:db8::9]:7", true},
			{[]byte("PROXY TCP4 198.51.100.20 198.51.100.1 40000 9876\r\n"), "198.51.100.20:40000", true},
		} {
			if tc.tls && mode == tlsconf.Disabled {
				continue
			}
			rc := dialRaw(t, s.Addr())
			// The header in pieces: detection waits for the rest.
			rc.sendBytes(tc.header[:3])
			rc.sendBytes(tc.header[3:])
			conn := rc
			if tc.tls {
				tcn := tls.Client(rc.nc, insecureClientTLS())
				conn = newRaw(t, tcn)
			}
			req := request(codeEcho, 5)
			req.Set("id", "p")
			conn.send(req)
			require.Equal(t, "p", conn.recv().Value("id"))
			require.Equal(t, tc.want, <-remotes)
		}
		// Malformed: closed.
		bad := dialRaw(t, s.Addr())
		bad.sendBytes([]byte("PROXY TCP4 1.2.3.4 nonsense\r\n"))
		bad.expectClosed()
		// No header: the socket's address.
		invokeEcho(t, newClient(t, nil), s.Addr(), codeEcho, "direct")
		require.Contains(t, <-remotes, "127.0.0.1:")
	}
}
