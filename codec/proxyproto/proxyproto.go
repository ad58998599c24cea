package proxyproto

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
)

// Header bounds and signatures (see doc.go for the layouts).
const (
	MaxV1 = 107        // a v1 line with its CRLF
	MaxV2 = 16 + 65535 // a v2 header with the largest length
	SigV1 = "PROXY "
	SigV2 = "\r\n\r\n\x00\r\nQUIT\n"
)

// ErrHeader is a malformed PROXY protocol header.
var ErrHeader = errors.New("proxyproto: malformed PROXY protocol header")

// Result is what Parse found.
type Result int

const (
	None Result = iota // not a PROXY header
	More               // may be one: more bytes are needed
	Done               // a header of n bytes; src is the client (invalid: keep the socket's)
)

// Parse looks for a PROXY header at the start of b. It never reads past a
// header's bound, so a peer cannot make a caller buffer more than MaxV2.
func Parse(b []byte) (res Result, n int, src netip.AddrPort, err error) {
	if len(b) == 0 {
		return More, 0, src, nil
	}
	switch b[0] {
	case 'P':
		if !hasPrefixSoFar(b, SigV1) {
			return None, 0, src, nil
		}
		if len(b) < len(SigV1) {
			return More, 0, src, nil
		}
		return parseV1(b)
	case '\r':
		if !hasPrefixSoFar(b, SigV2) {
			return None, 0, src, nil
		}
		if len(b) < 16 {
			return More, 0, src, nil
		}
		return parseV2(b)
	}
	return None, 0, src, nil
}

// hasPrefixSoFar reports whether b and sig agree on their common length.
func hasPrefixSoFar(b []byte, sig string) bool {
	m := min(len(b), len(sig))
	return string(b[:m]) == sig[:m]
}

func parseV1(b []byte) (Result, int, netip.AddrPort, error) {
	var src netip.AddrPort
	lim := min(len(b), MaxV1)
	end := bytes.Index(b[:lim], []byte("\r\n"))
	if end < 0 {
		if len(b) >= MaxV1 {
			return None, 0, src, ErrHeader
		}
		return More, 0, src, nil
	}
	line := b[len(SigV1):end]
	n := end + 2
	// compat: fields are separated by exactly one space, as HAProxy writes them.
	f := bytes.Split(line, []byte{' '})
	if len(f) >= 1 && string(f[0]) == "UNKNOWN" {
		return Done, n, src, nil
	}
	if len(f) != 5 {
		return None, 0, src, ErrHeader
	}
	var want4 bool
	switch string(f[0]) {
	case "TCP4":
		want4 = true
	case "TCP6":
	default:
		return None, 0, src, ErrHeader
	}
	sa, err1 := netip.ParseAddr(string(f[1]))
	da, err2 := netip.ParseAddr(string(f[2]))
	sp, ok1 := parsePort(f[3])
	_, ok2 := parsePort(f[4])
	if err1 != nil || err2 != nil || !ok1 || !ok2 || sa.Is4() != want4 || da.Is4() != want4 || sa.Zone() != "" || da.Zone() != "" {
		return None, 0, src, ErrHeader
	}
	return Done, n, netip.AddrPortFrom(sa, sp), nil
}

// parsePort reads a decimal port without sign or leading zeros.
func parsePort(b []byte) (uint16, bool) {
	if len(b) == 0 || len(b) > 5 || (b[0] == '0' && len(b) > 1) {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(string(b), 10, 16)
	return uint16(v), err == nil
}

func parseV2(b []byte) (Result, int, netip.AddrPort, error) {
	var src netip.AddrPort
	verCmd, fam := b[12], b[13]
	l := int(binary.BigEndian.Uint16(b[14:16]))
	if verCmd>>4 != 2 || verCmd&0xF > 1 {
		return None, 0, src, ErrHeader
	}
	n := 16 + l
	if len(b) < n {
		return More, 0, src, nil
	}
	if verCmd&0xF == 0 { // LOCAL: the proxy's own connection (health check)
		return Done, n, src, nil
	}
	a := b[16:n]
	switch fam >> 4 {
	case 0x1: // AF_INET
		if len(a) < 12 {
			return None, 0, src, ErrHeader
		}
		ip := netip.AddrFrom4([4]byte(a[0:4]))
		return Done, n, netip.AddrPortFrom(ip, binary.BigEndian.Uint16(a[8:10])), nil
	case 0x2: // AF_INET6
		if len(a) < 36 {
			return None, 0, src, ErrHeader
		}
		ip := netip.AddrFrom16([16]byte(a[0:16]))
		return Done, n, netip.AddrPortFrom(ip, binary.BigEndian.Uint16(a[32:34])), nil
	case 0x0, 0x3: // AF_UNSPEC, AF_UNIX: no IP address to report
		return Done, n, src, nil
	}
	return None, 0, src, ErrHeader
}
