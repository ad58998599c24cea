package transport

import (
	"crypto/tls"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

func proxyV2(cmd byte, fam byte, addr []byte) []byte {
	b := []byte(proxyV2Sig)
	b = append(b, 0x20|cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(addr)))
	return append(b, addr...)
}

func v2inet(src [4]byte, sport uint16) []byte {
	a := append(src[:], 10, 0, 0, 1)
	a = binary.BigEndian.AppendUint16(a, sport)
	return binary.BigEndian.AppendUint16(a, 9876)
}

func v2inet6(src [16]byte, sport uint16) []byte {
	dst := netip.MustParseAddr("2001:db8::1").As16()
	a := append(src[:], dst[:]...)
	a = binary.BigEndian.AppendUint16(a, sport)
	a = binary.BigEndian.AppendUint16(a, 9876)
	return append(a, 0x04, 0x00, 0x01, 'x') // a TLV, skipped
}

func TestParseProxy(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		res  proxyResult
		n    int
		src  string
		err  bool
	}{
		{"v1 tcp4", "PROXY TCP4 203.0.113.7 198.51.100.1 51234 9876\r\nrest", proxyDone, 48, "203.0.113.7:51234", false},
		{"v1 tcp6", "PROXY TCP6 2001:db8::7 2001:db8::1 1 2\r\n", proxyDone, 40, "[2001:db8::7]:1", false},
		{"v1 unknown", "PROXY UNKNOWN\r\n", proxyDone, 15, "", false},
		{"v1 unknown with addresses", "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", proxyDone, 35, "", false},
		{"v1 partial", "PROXY TCP4 1.2.3.4", proxyMore, 0, "", false},
		{"v1 sig partial", "PRO", proxyMore, 0, "", false},
		{"not proxy P", "PROXZ", proxyNone, 0, "", false},
		{"v1 family mismatch", "PROXY TCP4 ::1 ::1 1 2\r\n", proxyNone, 0, "", true},
		{"v1 bad port", "PROXY TCP4 1.2.3.4 1.2.3.5 65536 2\r\n", proxyNone, 0, "", true},
		{"v1 leading zero", "PROXY TCP4 1.2.3.4 1.2.3.5 01 2\r\n", proxyNone, 0, "", true},
		{"v1 double space", "PROXY TCP4  1.2.3.4 1.2.3.5 1 2\r\n", proxyNone, 0, "", true},
		{"v1 udp", "PROXY UDP4 1.2.3.4 1.2.3.5 1 2\r\n", proxyNone, 0, "", true},
		{"v1 too long", "PROXY TCP4 " + string(make([]byte, 120)), proxyNone, 0, "", true},
		{"v2 inet", string(proxyV2(1, 0x11, v2inet([4]byte{192, 0, 2, 9}, 4242))) + "x", proxyDone, 28, "192.0.2.9:4242", false},
		{"v2 inet6 tlv", string(proxyV2(1, 0x21, v2inet6(netip.MustParseAddr("2001:db8::9").As16(), 7))), proxyDone, 56, "[2001:db8::9]:7", false},
		{"v2 local", string(proxyV2(0, 0x00, nil)), proxyDone, 16, "", false},
		{"v2 unix", string(proxyV2(1, 0x31, make([]byte, 216))), proxyDone, 232, "", false},
		{"v2 partial addr", string(proxyV2(1, 0x11, v2inet([4]byte{1, 2, 3, 4}, 1))[:20]), proxyMore, 0, "", false},
		{"v2 partial sig", "\r\n\r\n\x00", proxyMore, 0, "", false},
		{"v2 short inet", string(proxyV2(1, 0x11, make([]byte, 6))), proxyNone, 0, "", true},
		{"v2 bad version", string(append([]byte(proxyV2Sig), 0x11, 0x11, 0, 0)), proxyNone, 0, "", true},
		{"v2 bad command", string(append([]byte(proxyV2Sig), 0x22, 0x11, 0, 0)), proxyNone, 0, "", true},
		{"v2 bad family", string(proxyV2(1, 0x41, nil)), proxyNone, 0, "", true},
		{"not proxy CR", "\r\nhello", proxyNone, 0, "", false},
		{"frame", "\x00\x00\x00\x10", proxyNone, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, n, src, err := parseProxy([]byte(tc.in))
			if tc.err {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.res, res)
			require.Equal(t, tc.n, n)
			if tc.src == "" {
				require.False(t, src.IsValid())
			} else {
				require.Equal(t, tc.src, src.String())
			}
		})
	}
}

func FuzzParseProxy(f *testing.F) {
	f.Add([]byte("PROXY TCP4 203.0.113.7 198.51.100.1 51234 9876\r\n"))
	f.Add([]byte("PROXY TCP6 2001:db8::7 2001:db8::1 1 2\r\n"))
	f.Add([]byte("PROXY UNKNOWN\r\n"))
	f.Add(proxyV2(1, 0x11, v2inet([4]byte{192, 0, 2, 9}, 4242)))
	f.Add(proxyV2(1, 0x21, v2inet6(netip.MustParseAddr("2001:db8::9").As16(), 7)))
	f.Add(proxyV2(0, 0, nil))
	f.Add([]byte("\x00\x00\x00\x10"))
	f.Fuzz(func(t *testing.T, b []byte) {
		res, n, src, err := parseProxy(b)
		if err != nil {
			require.Equal(t, proxyNone, res)
			return
		}
		switch res {
		case proxyDone:
			require.Positive(t, n)
			require.LessOrEqual(t, n, len(b))
			if b[0] == 'P' {
				require.LessOrEqual(t, n, proxyV1Max)
			} else {
				require.LessOrEqual(t, n, proxyV2Max)
			}
			// The header alone parses the same; more bytes after it change nothing.
			r2, n2, s2, err2 := parseProxy(b[:n])
			require.NoError(t, err2)
			require.Equal(t, proxyDone, r2)
			require.Equal(t, n, n2)
			require.Equal(t, src, s2)
		case proxyMore:
			require.Zero(t, n)
			if len(b) > 0 && b[0] == 'P' {
				require.Less(t, len(b), proxyV1Max)
			} else {
				require.Less(t, len(b), proxyV2Max)
			}
		}
	})
}

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
