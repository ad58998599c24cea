package autoswitch

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/store"
)

// With rocketgo.tls.ha.enable the AutoSwitch port is TLS-only, through the
// same tlsconf listener and dialer as classic HA: a TLS slave replicates
// byte for byte across epochs; a plain-TCP handshake gets no answer but a
// TLS alert.
func TestReplicateOverTLS(t *testing.T) {
	c := tlsconf.Default()
	c.HA = true
	stc, err := c.ServerTLS()
	require.NoError(t, err)
	ctc, _, err := c.Client()
	require.NoError(t, err)

	m, s := newNode(t, store.Slave), newNode(t, store.Slave)
	m.becomeMaster(t, store.AsyncMaster, 1)
	fill(t, m.st, 0, 30)
	m.becomeMaster(t, store.AsyncMaster, 2)
	fill(t, m.st, 30, 20)
	scfg := serverConfig(1)
	scfg.TLS = stc
	srv := startServer(t, m, scfg)

	plain, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second)
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.Write(make([]byte, 32)) // not a ClientHello
	require.NoError(t, err)
	_ = plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 64)
	if n, _ := plain.Read(b); n > 0 {
		require.Equal(t, byte(0x15), b[0], "only a TLS alert")
	}

	ccfg := clientConfig(2)
	ccfg.TLS = ctc
	startClient(t, s, ccfg, srv.Addr().String())
	fill(t, m.st, 50, 40)
	requireSame(t, m, s, 0)
}
