package harness

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestStopKillsTheProcessGroup(t *testing.T) {
	dir := t.TempDir()
	// The leader starts a grandchild and records its pid.
	p, err := StartProcess("group", dir, nil, "sh", "-c", "sleep 60 & echo $! > child.pid; wait")
	require.NoError(t, err)
	pidFile := filepath.Join(dir, "child.pid")
	var child int
	deadline := time.Now().Add(5 * time.Second)
	for child == 0 && time.Now().Before(deadline) {
		if b, err := os.ReadFile(pidFile); err == nil {
			child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		}
		time.Sleep(20 * time.Millisecond)
	}
	require.NotZero(t, child)
	done, _ := p.Exited()
	require.False(t, done)
	p.Stop(2 * time.Second)
	done, _ = p.Exited()
	require.True(t, done)
	// The grandchild is gone too (ESRCH), possibly after a moment as a zombie reaped by init.
	deadline = time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if err := syscall.Kill(child, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child)); err == nil && strings.Contains(string(b), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("grandchild %d survived Stop", child)
}

func TestFreeBrokerPort(t *testing.T) {
	p, err := FreeBrokerPort()
	require.NoError(t, err)
	for _, q := range []int{p - 2, p, p + 1} {
		ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(q))
		require.NoError(t, err)
		require.NoError(t, ln.Close())
	}
}

// CONFORMANCE_PORT_RANGE keeps both kinds of port inside it; a bad value
// is ignored.
func TestPortRange(t *testing.T) {
	t.Setenv("CONFORMANCE_PORT_RANGE", "24000-24999")
	for range 20 {
		p, err := FreePort()
		require.NoError(t, err)
		require.True(t, p >= 24000 && p <= 24999, "%d", p)
		b, err := FreeBrokerPort()
		require.NoError(t, err)
		require.True(t, b-2 >= 24000 && b+1 <= 24999, "%d", b)
	}
	t.Setenv("CONFORMANCE_PORT_RANGE", "24000")
	_, _, ok := portRange()
	require.False(t, ok)
}

func TestStartReportsMissingBinary(t *testing.T) {
	env := Env{Root: t.TempDir(), Script: "/nonexistent"}
	_, err := Start(context.Background(), env, Ours, Options{Dir: t.TempDir()})
	require.ErrorIs(t, err, ErrNotBuilt)
	_, err = Start(context.Background(), env, JavaNSOurs, Options{Dir: t.TempDir()})
	require.ErrorIs(t, err, ErrNotBuilt)
}

func TestFindEnv(t *testing.T) {
	env, err := FindEnv()
	require.NoError(t, err)
	_, err = os.Stat(filepath.Join(env.Root, "conformance", "go.mod"))
	require.NoError(t, err)
	require.FileExists(t, env.Script)
}

func TestWaitReadyFailsFastWhenAProcessExits(t *testing.T) {
	dir := t.TempDir()
	p, err := StartProcess("quitter", dir, nil, "sh", "-c", "echo bye; exit 3")
	require.NoError(t, err)
	c := &Cluster{Kind: Ours, NamesrvAddr: "127.0.0.1:1", BrokerAddr: "127.0.0.1:2", procs: []*Process{p}}
	start := time.Now()
	err = c.waitReady(context.Background(), 20*time.Second)
	require.Error(t, err)
	require.Contains(t, err.Error(), "quitter exited early")
	require.Less(t, time.Since(start), 10*time.Second)
}
