package controllertest

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/controller"
)

// FreePortPair returns a loopback port p with p+1 free too (a
// controller's Raft port, a broker's HA port).
func FreePortPair(t testing.TB) int {
	t.Helper()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		p := l.Addr().(*net.TCPAddr).Port
		l2, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p+1))
		l.Close()
		if err == nil {
			l2.Close()
			return p
		}
	}
	t.Fatal("controllertest: no free port pair")
	return 0
}

// StartSingle runs a one-node controller group "g1" on loopback with its
// store in a temporary directory, no config file and a 1 s Raft timeout
// (tolerant of a loaded machine); tune may change the config first. It
// waits until the node leads and closes it when the test ends.
func StartSingle(t testing.TB, log *slog.Logger, tune ...func(*controller.Config)) *controller.Controller {
	t.Helper()
	port := FreePortPair(t)
	cfg := controller.Default()
	cfg.Group = "g1"
	cfg.Peers = fmt.Sprintf("n0-127.0.0.1:%d", port)
	cfg.SelfID = "n0"
	cfg.StorePath = t.TempDir()
	cfg.ConfigStorePath = ""
	cfg.RaftElectionTimeout = time.Second
	for _, f := range tune {
		f(&cfg)
	}
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	c, err := controller.New(cfg, log)
	require.NoError(t, err)
	require.NoError(t, c.Start())
	t.Cleanup(func() { c.Close() })
	require.Eventually(t, c.IsLeader, 15*time.Second, 10*time.Millisecond)
	return c
}
