// Package proxyproto parses the PROXY protocol (HAProxy) v1 and v2 header
// a load balancer puts before a client's bytes, as Netty's
// HAProxyMessageDecoder does for Java's remoting HandshakeHandler and the
// proxy's ProxyAndTlsProtocolNegotiator. The remoting transport
// (codec/transport sniff.go) and the gRPC endpoint (proxy/grpcsvc
// tls.go) both detect it with Parse; the header's source address becomes
// the connection's peer for logs and source-IP checks.
//
//	v1: "PROXY TCP4 203.0.113.7 198.51.100.1 51234 9876\r\n"  (≤ 107 bytes)
//	    "PROXY UNKNOWN ...\r\n"                               (address kept)
//	v2: \r\n\r\n\x00\r\nQUIT\n  ver|cmd  fam|proto  len(2, BE)  addresses, TLVs
//	     0                  12       13          14  16         16+len
//	    cmd LOCAL (0) or family UNSPEC/UNIX: address kept; INET: 4+4+2+2 bytes,
//	    INET6: 16+16+2+2 bytes (source first).
package proxyproto
