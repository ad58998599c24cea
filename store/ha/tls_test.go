package ha

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec/transport/tlsconf"
	"github.com/rocketgo/rocketgo/store"
)

// With rocketgo.tls.ha.enable the master's port is TLS-only: a TLS slave
// replicates byte for byte, a plain-TCP one gets nothing.
func TestReplicateOverTLS(t *testing.T) {
	c := tlsconf.Default()
	c.HA = true
	stc, err := c.ServerTLS()
	require.NoError(t, err)
	ctc, _, err := c.Client()
	require.NoError(t, err)

	mc, sc := storeConfig(t, store.AsyncMaster), storeConfig(t, store.Slave)
	master, slave := openStore(t, mc), openStore(t, sc)
	srv, err := NewServer(ServerConfig{Addr: "127.0.0.1:0", SegmentSize: segSize, InSyncReplicas: 1, TLS: stc,
		HeartbeatInterval: 50 * time.Millisecond, HousekeepingInterval: 2 * time.Second, Logger: quiet}, master)
	require.NoError(t, err)
	srv.Start()
	t.Cleanup(func() { _ = srv.Close() })

	// A plain-TCP peer speaking HA gets no frame: the bytes are no ClientHello.
	plain, err := net.DialTimeout("tcp", srv.Addr().String(), time.Second)
	require.NoError(t, err)
	defer plain.Close()
	_, err = plain.Write(make([]byte, 8)) // an HA offset report
	require.NoError(t, err)
	_ = plain.SetReadDeadline(time.Now().Add(5 * time.Second))
	b := make([]byte, 64)
	n, _ := plain.Read(b)
	if n > 0 {
		require.Equal(t, byte(0x15), b[0], "only a TLS alert") // record type alert
	}

	cl := NewClient(ClientConfig{HeartbeatInterval: 50 * time.Millisecond, HousekeepingInterval: 2 * time.Second,
		MinBackoff: 10 * time.Millisecond, ReconnectInterval: 200 * time.Millisecond, TLS: ctc, Logger: quiet}, slave)
	cl.SetMasterAddr(srv.Addr().String())
	cl.Start()
	t.Cleanup(func() { _ = cl.Close() })
	waitSlaves(t, srv, 1)
	fill(t, master, 0, 60)
	requireSame(t, mc, sc, master, slave, 0)
}
