package controller

import (
	"crypto/tls"
	"fmt"
	"net"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// tlsStream is a raft.StreamLayer of TLS connections, listener and dialer
// from tlsconf, for our opt-in rocketgo.tls.raft.enable (Java's DLedger
// and jRaft controllers never use TLS). Every node of a group must agree:
// the Raft port is TLS-only when it is on.
type tlsStream struct {
	net.Listener
	adv    net.Addr
	client *tls.Config
}

func (s *tlsStream) Addr() net.Addr { return s.adv }

func (s *tlsStream) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return tlsconf.Dial("tcp", string(addr), timeout, s.client)
}

// newTLSStream listens on addr with tc's server settings.
func newTLSStream(tc *tlsconf.Config, addr string, adv net.Addr) (*tlsStream, error) {
	stc, err := tc.ServerTLS()
	if err != nil {
		return nil, fmt.Errorf("controller: raft TLS: %w", err)
	}
	ctc, _, err := tc.Client()
	if err != nil {
		return nil, fmt.Errorf("controller: raft TLS: %w", err)
	}
	ln, err := tlsconf.Listen("tcp", addr, stc)
	if err != nil {
		return nil, err
	}
	return &tlsStream{Listener: ln, adv: adv, client: ctc}, nil
}
