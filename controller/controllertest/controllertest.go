package controllertest

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/controller"
	"github.com/rocketgo/rocketgo/controller/internal/portpair"
)

// FreePortPair returns a loopback port p with p+1 free too (a
// controller's Raft port, a broker's HA port), below the kernel's
// ephemeral range (32768 and up by default): a node closed and restarted
// by a test listens on its ports again, and an outgoing connection from
// anywhere on the machine could take a port of the ephemeral range in
// between (CI saw "bind: address already in use" on a restart).
func FreePortPair(t testing.TB) int {
	t.Helper()
	ps := FreePortPairs(t, 1)
	return ps[0]
}

// FreePortPairs returns n distinct ports as FreePortPair does.
func FreePortPairs(t testing.TB, n int) []int {
	t.Helper()
	ps := portpair.Find(n)
	if ps == nil {
		t.Fatal("controllertest: no free port pairs")
	}
	return ps
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
