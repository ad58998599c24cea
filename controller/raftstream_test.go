package controller

import (
	"crypto/tls"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
)

// With rocketgo.tls.raft.enable a group elects a leader over TLS, and the
// Raft port refuses a plain-TCP peer.
func TestRaftOverTLS(t *testing.T) {
	tc := tlsconf.Default()
	tc.Raft = true
	g := startGroup(t, 3, func(c *Config) { c.TLS = &tc })
	l := g.leader()
	self, err := g.cfgs[l].PeerList()
	require.NoError(t, err)
	var raftAddr string
	for _, p := range self {
		if p.ID == g.cfgs[l].SelfID {
			raftAddr = p.RaftAddr
		}
	}
	// The port speaks TLS (a plain-TCP transport would never answer a ClientHello).
	tconn, err := tls.DialWithDialer(&net.Dialer{Timeout: time.Second}, "tcp", raftAddr, &tls.Config{InsecureSkipVerify: true})
	require.NoError(t, err)
	_ = tconn.Close()
	nc, err := net.DialTimeout("tcp", raftAddr, time.Second)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte{0, 0x81, 0xa4}) // rpcAppendEntries, msgpack start
	require.NoError(t, err)
	_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 64)
	n, _ := nc.Read(b)
	if n > 0 {
		require.Equal(t, byte(0x15), b[0], "only a TLS alert")
	}
}
