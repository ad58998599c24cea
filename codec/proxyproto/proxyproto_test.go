package proxyproto_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/proxyproto"
	"github.com/rocketgo/rocketgo/codec/proxyproto/proxyprototest"
)

func proxyV2(cmd byte, fam byte, addr []byte) []byte { return proxyprototest.V2(cmd, fam, addr) }

func v2inet(src [4]byte, sport uint16) []byte { return proxyprototest.Inet(src, sport, 9876) }

func v2inet6(src [16]byte, sport uint16) []byte { return proxyprototest.Inet6(src, sport, 9876) }

func TestParseProxy(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   string
		res  proxyproto.Result
		n    int
		src  string
		err  bool
	}{
		{"v1 tcp4", "PROXY TCP4 203.0.113.7 198.51.100.1 51234 9876\r\nrest", proxyproto.Done, 48, "203.0.113.7:51234", false},
		{"v1 tcp6", "PROXY TCP6 2001:db8::7 2001:db8::1 1 2\r\n", proxyproto.Done, 40, "[2001:db8::7]:1", false},
		{"v1 unknown", "PROXY UNKNOWN\r\n", proxyproto.Done, 15, "", false},
		{"v1 unknown with addresses", "PROXY UNKNOWN ffff::1 ffff::2 1 2\r\n", proxyproto.Done, 35, "", false},
		{"v1 partial", "PROXY TCP4 1.2.3.4", proxyproto.More, 0, "", false},
		{"v1 sig partial", "PRO", proxyproto.More, 0, "", false},
		{"not proxy P", "PROXZ", proxyproto.None, 0, "", false},
		{"v1 family mismatch", "PROXY TCP4 ::1 ::1 1 2\r\n", proxyproto.None, 0, "", true},
		{"v1 bad port", "PROXY TCP4 1.2.3.4 1.2.3.5 65536 2\r\n", proxyproto.None, 0, "", true},
		{"v1 leading zero", "PROXY TCP4 1.2.3.4 1.2.3.5 01 2\r\n", proxyproto.None, 0, "", true},
		{"v1 double space", "PROXY TCP4  1.2.3.4 1.2.3.5 1 2\r\n", proxyproto.None, 0, "", true},
		{"v1 udp", "PROXY UDP4 1.2.3.4 1.2.3.5 1 2\r\n", proxyproto.None, 0, "", true},
		{"v1 too long", "PROXY TCP4 " + string(make([]byte, 120)), proxyproto.None, 0, "", true},
		{"v2 inet", string(proxyV2(1, 0x11, v2inet([4]byte{192, 0, 2, 9}, 4242))) + "x", proxyproto.Done, 28, "192.0.2.9:4242", false},
		{"v2 inet6 tlv", string(proxyV2(1, 0x21, v2inet6(netip.MustParseAddr("2001:db8::9").As16(), 7))), proxyproto.Done, 56, "[2001:db8::9]:7", false},
		{"v2 local", string(proxyV2(0, 0x00, nil)), proxyproto.Done, 16, "", false},
		{"v2 unix", string(proxyV2(1, 0x31, make([]byte, 216))), proxyproto.Done, 232, "", false},
		{"v2 partial addr", string(proxyV2(1, 0x11, v2inet([4]byte{1, 2, 3, 4}, 1))[:20]), proxyproto.More, 0, "", false},
		{"v2 partial sig", "\r\n\r\n\x00", proxyproto.More, 0, "", false},
		{"v2 short inet", string(proxyV2(1, 0x11, make([]byte, 6))), proxyproto.None, 0, "", true},
		{"v2 bad version", string(append([]byte(proxyproto.SigV2), 0x11, 0x11, 0, 0)), proxyproto.None, 0, "", true},
		{"v2 bad command", string(append([]byte(proxyproto.SigV2), 0x22, 0x11, 0, 0)), proxyproto.None, 0, "", true},
		{"v2 bad family", string(proxyV2(1, 0x41, nil)), proxyproto.None, 0, "", true},
		{"not proxy CR", "\r\nhello", proxyproto.None, 0, "", false},
		{"frame", "\x00\x00\x00\x10", proxyproto.None, 0, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, n, src, err := proxyproto.Parse([]byte(tc.in))
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
		res, n, src, err := proxyproto.Parse(b)
		if err != nil {
			require.Equal(t, proxyproto.None, res)
			return
		}
		switch res {
		case proxyproto.Done:
			require.Positive(t, n)
			require.LessOrEqual(t, n, len(b))
			if b[0] == 'P' {
				require.LessOrEqual(t, n, proxyproto.MaxV1)
			} else {
				require.LessOrEqual(t, n, proxyproto.MaxV2)
			}
			// The header alone parses the same; more bytes after it change nothing.
			r2, n2, s2, err2 := proxyproto.Parse(b[:n])
			require.NoError(t, err2)
			require.Equal(t, proxyproto.Done, r2)
			require.Equal(t, n, n2)
			require.Equal(t, src, s2)
		case proxyproto.More:
			require.Zero(t, n)
			if len(b) > 0 && b[0] == 'P' {
				require.Less(t, len(b), proxyproto.MaxV1)
			} else {
				require.Less(t, len(b), proxyproto.MaxV2)
			}
		}
	})
}
