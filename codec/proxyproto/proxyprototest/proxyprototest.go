package proxyprototest

import (
	"encoding/binary"
	"net/netip"

	"github.com/rocketgo/rocketgo/codec/proxyproto"
)

// V2 is a v2 header: version 2 with the command cmd (0 LOCAL, 1 PROXY),
// the address family/protocol byte fam and the address block addr.
func V2(cmd, fam byte, addr []byte) []byte {
	b := []byte(proxyproto.SigV2)
	b = append(b, 0x20|cmd, fam)
	b = binary.BigEndian.AppendUint16(b, uint16(len(addr)))
	return append(b, addr...)
}

// Inet is the address block of a TCP over IPv4 header from src:sport to
// 10.0.0.1:dport.
func Inet(src [4]byte, sport, dport uint16) []byte {
	a := append(src[:], 10, 0, 0, 1)
	a = binary.BigEndian.AppendUint16(a, sport)
	return binary.BigEndian.AppendUint16(a, dport)
}

// Inet6 is the address block of a TCP over IPv6 header from src:sport to
// [2001:db8::1]:dport, followed by one TLV (which a parser skips).
func Inet6(src [16]byte, sport, dport uint16) []byte {
	dst := netip.MustParseAddr("2001:db8::1").As16()
	a := append(src[:], dst[:]...)
	a = binary.BigEndian.AppendUint16(a, sport)
	a = binary.BigEndian.AppendUint16(a, dport)
	return append(a, 0x04, 0x00, 0x01, 'x')
}

// ProxyInet is a whole PROXY TCP4 header from src:sport to 10.0.0.1:dport.
func ProxyInet(src [4]byte, sport, dport uint16) []byte {
	return V2(1, 0x11, Inet(src, sport, dport))
}
