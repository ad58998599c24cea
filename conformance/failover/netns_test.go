package failover

import (
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestSweep: a namespace of a crashed run, with a process still inside,
// is gone after Sweep, and so is the process.
func TestSweep(t *testing.T) {
	// Sweep removes every rgfo- namespace, a running suite's too: only
	// where the suite itself may run (one at a time, see make test-failover).
	if os.Getenv("CONFORMANCE_FAILOVER") == "" {
		t.Skip("set CONFORMANCE_FAILOVER=1: Sweep would remove the namespaces of a suite running beside it")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root for ip netns")
	}
	if why := Available(); why != "" {
		t.Skip(why)
	}
	ns := Prefix + "sweeptest"
	require.NoError(t, ipcmd("netns", "add", ns))
	t.Cleanup(func() { _ = ipcmd("netns", "del", ns) })
	cmd := exec.Command("ip", "netns", "exec", ns, "sleep", "60")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); <-done })
	require.Eventually(t, func() bool {
		out, _ := exec.Command("ip", "netns", "pids", ns).Output()
		return strings.TrimSpace(string(out)) != ""
	}, 5*time.Second, 50*time.Millisecond)

	Sweep()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the process inside the leftover namespace survived Sweep")
	}
	out, err := exec.Command("ip", "netns", "list").Output()
	require.NoError(t, err)
	require.NotContains(t, string(out), ns)
}
