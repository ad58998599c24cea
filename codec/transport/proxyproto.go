package transport

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"strconv"
)

// PROXY protocol (HAProxy) headers a load balancer puts before the
// client's bytes, detected at the start of a connection like Java's
// HandshakeHandler (Netty's HAProxyMessageDecoder):
//
//	v1: "PROXY TCP4 203.0.113.7 198.51.100.1 51234 9876\r\n"  (≤ 107 bytes)
//	    "PROXY UNKNOWN ...\r\n"                               (address kept)
//	v2: \r\n\r\n\x00\r\nQUIT\n  ver|cmd  fam|proto  len(2, BE)  addresses, TLVs
//	     0                  12       13          14  16         16+len
//	    cmd LOCAL (0) or family UNSPEC/UNIX: address kept; INET: 4+4+2+2 bytes,
//	    INET6: 16+16+2+2 bytes (source first).
const (
	proxyV1Max = 107
	proxyV2Max = 16 + 65535
	proxyV1Sig = "PROXY "
	proxyV2Sig = "\r\n\r\n\x00\r\nQUIT\n"
)

var errProxyHeader = errors.New("transport: malformed PROXY protocol header")

// proxyResult is what parseProxy found.
type proxyResult int

const (
	proxyNone proxyResult = iota // not a PROXY header
	proxyMore                    // may be one: more bytes are needed
	proxyDone                    // a header of n bytes; src is the client (invalid: keep the socket's)
)

// parseProxy looks for a PROXY header at the start of b. It never reads
// past a header's bound, so a peer cannot make it buffer more.
func parseProxy(b []byte) (res proxyResult, n int, src netip.AddrPort, err error) {
	if len(b) == 0 {
		return proxyMore, 0, src, nil
	}
	switch b[0] {
	case 'P':
		if !hasPrefixSoFar(b, proxyV1Sig) {
			return proxyNone, 0, src, nil
		}
		if len(b) < len(proxyV1Sig) {
			return proxyMore, 0, src, nil
		}
		return parseProxyV1(b)
	case '\r':
		if !hasPrefixSoFar(b, proxyV2Sig) {
			return proxyNone, 0, src, nil
		}
		if len(b) < 16 {
			return proxyMore, 0, src, nil
		}
		return parseProxyV2(b)
	}
	return proxyNone, 0, src, nil
}

// hasPrefixSoFar reports whether b and sig agree on their common length.
func hasPrefixSoFar(b []byte, sig string) bool {
	m := min(len(b), len(sig))
	return string(b[:m]) == sig[:m]
}

func parseProxyV1(b []byte) (proxyResult, int, netip.AddrPort, error) {
	var src netip.AddrPort
	lim := min(len(b), proxyV1Max)
	end := bytes.Index(b[:lim], []byte("\r\n"))
	if end < 0 {
		if len(b) >= proxyV1Max {
			return proxyNone, 0, src, errProxyHeader
		}
		return proxyMore, 0, src, nil
	}
	line := b[len(proxyV1Sig):end]
	n := end + 2
	// compat: fields are separated by exactly one space, as HAProxy writes them.
	f := bytes.Split(line, []byte{' '})
	if len(f) >= 1 && string(f[0]) == "UNKNOWN" {
		return proxyDone, n, src, nil
	}
	if len(f) != 5 {
		return proxyNone, 0, src, errProxyHeader
	}
	var want4 bool
	switch string(f[0]) {
	case "TCP4":
		want4 = true
	case "TCP6":
	default:
		return proxyNone, 0, src, errProxyHeader
	}
	sa, err1 := netip.ParseAddr(string(f[1]))
	da, err2 := netip.ParseAddr(string(f[2]))
	sp, ok1 := parsePort(f[3])
	_, ok2 := parsePort(f[4])
	if err1 != nil || err2 != nil || !ok1 || !ok2 || sa.Is4() != want4 || da.Is4() != want4 || sa.Zone() != "" || da.Zone() != "" {
		return proxyNone, 0, src, errProxyHeader
	}
	return proxyDone, n, netip.AddrPortFrom(sa, sp), nil
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

func parseProxyV2(b []byte) (proxyResult, int, netip.AddrPort, error) {
	var src netip.AddrPort
	verCmd, fam := b[12], b[13]
	l := int(binary.BigEndian.Uint16(b[14:16]))
	if verCmd>>4 != 2 || verCmd&0xF > 1 {
		return proxyNone, 0, src, errProxyHeader
	}
	n := 16 + l
	if len(b) < n {
		return proxyMore, 0, src, nil
	}
	if verCmd&0xF == 0 { // LOCAL: the proxy's own connection (health check)
		return proxyDone, n, src, nil
	}
	a := b[16:n]
	switch fam >> 4 {
	case 0x1: // AF_INET
		if len(a) < 12 {
			return proxyNone, 0, src, errProxyHeader
		}
		ip := netip.AddrFrom4([4]byte(a[0:4]))
		return proxyDone, n, netip.AddrPortFrom(ip, binary.BigEndian.Uint16(a[8:10])), nil
	case 0x2: // AF_INET6
		if len(a) < 36 {
			return proxyNone, 0, src, errProxyHeader
		}
		ip := netip.AddrFrom16([16]byte(a[0:16]))
		return proxyDone, n, netip.AddrPortFrom(ip, binary.BigEndian.Uint16(a[32:34])), nil
	case 0x0, 0x3: // AF_UNSPEC, AF_UNIX: no IP address to report
		return proxyDone, n, src, nil
	}
	return proxyNone, 0, src, errProxyHeader
}
