package transport

import (
	"net"
	"os"
	"time"

	"github.com/panjf2000/gnet/v2"

	"github.com/rocketgo/rocketgo/codec/proxyproto"
	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// Detection of what a connection speaks, from its first bytes (Java's
// HandshakeHandler and TlsModeHandler), when the server is configured for
// it (ServerConfig.TLSMode not Disabled, or ProxyProtocol):
//
//	OnOpen: no Conn yet (OnConnect comes with the first bytes); the gnet
//	        context is a sniffer (deadline: IdleTimeout, or
//	        TLSHandshakeTimeout without one; enforced by the idle loop)
//	OnTraffic, first bytes:
//	  PROXY v1/v2 header (ProxyProtocol)? ─► parsed, discarded, its source
//	        address is the Conn's RemoteAddr; malformed ─► close
//	  0x16 (a TLS handshake record)?
//	        Disabled ─► close; else (at MaxTLSHandshakes in progress, the
//	        oldest of them is closed first) dup the socket, take what gnet read as a prefix, close the gnet
//	        connection (gnet's close is epoll delete + close(2) of its fd,
//	        no shutdown(2): the dup keeps the socket open) ─► tlsconn.go
//	  anything else: Enforcing ─► close; else a Conn on gnet as without
//	        detection (OnConnect now), and the bytes are framed at once.
//
// Without detection nothing here runs: OnOpen makes the Conn at once.

// DefaultTLSHandshakeTimeout is Netty's SslHandler handshake timeout (10 s).
const DefaultTLSHandshakeTimeout = 10 * time.Second

// DefaultMaxTLSHandshakes bounds the TLS handshakes in progress at once.
const DefaultMaxTLSHandshakes = 1024

// tlsRecordHandshake is the first byte of a TLS ClientHello record.
const tlsRecordHandshake = 0x16

// sniffer is the gnet context of a connection whose first bytes are not
// seen yet. Touched by its event loop only, except opened (immutable).
type sniffer struct {
	opened int64  // coarse unix nanos of the accept
	remote string // the PROXY header's source, once one was parsed
	local  string
	proxed bool // a PROXY header was taken
}

// sniffs reports whether connections are detected before framing.
func (s *Server) sniffs() bool {
	return s.cfg.TLSMode != tlsconf.Disabled || s.cfg.ProxyProtocol
}

// openSniffer is OnOpen with detection on.
func (e *events) openSniffer(gc gnet.Conn) {
	s := e.s
	sn := &sniffer{opened: s.clock.Load()}
	gc.SetContext(sn)
	s.mu.Lock()
	s.sniffing[gc] = sn
	s.mu.Unlock()
}

// sniff looks at the first bytes of gc. It returns the Conn to go on with
// (plaintext), or nil and the action to return.
func (e *events) sniff(gc gnet.Conn, sn *sniffer) (*Conn, gnet.Action) {
	s := e.s
	avail := gc.InboundBuffered()
	if avail == 0 {
		return nil, gnet.None
	}
	if s.cfg.ProxyProtocol && !sn.proxed {
		b, _ := gc.Peek(min(avail, proxyproto.MaxV2))
		res, n, src, err := proxyproto.Parse(b)
		switch {
		case err != nil:
			s.log.Warn("transport: closing connection: malformed PROXY protocol header", "remote", addrString(gc.RemoteAddr()))
			return nil, gnet.Close
		case res == proxyproto.More:
			return nil, gnet.None
		case res == proxyproto.Done:
			_, _ = gc.Discard(n)
			sn.proxed = true
			if src.IsValid() {
				sn.remote = src.String()
			}
			if avail -= n; avail == 0 {
				return nil, gnet.None
			}
		}
	}
	remote := sn.remote
	if remote == "" {
		remote = addrString(gc.RemoteAddr())
	}
	first, _ := gc.Peek(1)
	if first[0] == tlsRecordHandshake {
		if s.cfg.TLSMode == tlsconf.Disabled {
			// compat: Java closes it with this warning.
			s.log.Warn("transport: closing connection: clients intend to establish an SSL connection while this server is running in SSL disabled mode", "remote", remote)
			return nil, gnet.Close
		}
		e.handoff(gc, sn, remote, avail)
		return nil, gnet.Close
	}
	if s.cfg.TLSMode == tlsconf.Enforcing {
		// compat: Java's warning for it.
		s.log.Warn("transport: closing connection: clients intend to establish an insecure connection while this server is running in SSL enforcing mode", "remote", remote)
		return nil, gnet.Close
	}
	s.mu.Lock()
	delete(s.sniffing, gc)
	s.mu.Unlock()
	return e.open(gc, remote), gnet.None
}

// handoff moves gc's socket to a crypto/tls server connection. gc is
// closed by the caller's gnet.Close either way.
func (e *events) handoff(gc gnet.Conn, sn *sniffer, remote string, avail int) {
	s := e.s
	fd, err := gc.Dup()
	if err != nil {
		s.log.Warn("transport: closing connection: cannot take its socket for TLS", "remote", remote, "err", err)
		return
	}
	f := os.NewFile(uintptr(fd), "tls")
	raw, err := net.FileConn(f) // its own dup: f is closed right after
	_ = f.Close()
	if err != nil {
		s.log.Warn("transport: closing connection: cannot take its socket for TLS", "remote", remote, "err", err)
		return
	}
	b, _ := gc.Peek(avail)
	prefix := append([]byte(nil), b...)
	local := addrString(gc.LocalAddr())
	s.handoffTLS(raw, prefix, remote, local)
}

// expireSniffers closes connections that sent nothing decisive within
// IdleTimeout (as a silent connection without detection), or within
// TLSHandshakeTimeout when there is no IdleTimeout (the idle loop calls it).
func (s *Server) expireSniffers(now int64) {
	limit := s.cfg.IdleTimeout
	if limit <= 0 {
		limit = s.cfg.TLSHandshakeTimeout
	}
	cut := now - int64(limit)
	var late []gnet.Conn
	s.mu.Lock()
	for gc, sn := range s.sniffing {
		if sn.opened < cut {
			late = append(late, gc)
		}
	}
	s.mu.Unlock()
	for _, gc := range late {
		s.log.Info("transport: closing connection: nothing decisive sent in time",
			"remote", addrString(gc.RemoteAddr()), "timeout", limit)
		_ = gc.Close()
	}
}
