package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// hostileBound is the documented bound on the broker's anonymous memory
// above idle under the hostile mix (README, "Hardening").
const hostileBound = 256 // MiB

// startRocketgo builds cmd/rocketgo and runs it as a child process on
// loopback ports; the child is killed when the test ends.
func startRocketgo(t *testing.T) (pid int, broker string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("hostile run samples /proc: linux only")
	}
	bin := filepath.Join(t.TempDir(), "rocketgo")
	build := exec.Command("go", "build", "-o", bin, "../rocketgo")
	out, err := build.CombinedOutput()
	require.NoError(t, err, string(out))

	cmd := exec.Command(bin, "-dataDir", t.TempDir(), "-namesrvListen", "127.0.0.1:0", "-brokerListen", "127.0.0.1:0")
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("rocketgo log tail:\n%s", tail(logs.Bytes(), 4000))
		}
	})
	ready := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		re := regexp.MustCompile(`^rocketgo ready namesrv=\S+ broker=(\S+)`)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	select {
	case broker = <-ready:
	case <-time.After(20 * time.Second):
		t.Fatal("rocketgo did not become ready")
	}
	return cmd.Process.Pid, broker
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}

// Non-reading clients for pull (with a backlog), send and heartbeat, 500
// connections holding half of a 16 MiB frame and a 1 B/s sender keep the
// broker's anonymous memory within the documented bound, and a well-behaved
// client on another connection keeps getting its sends answered. A
// watchdog kills the broker at 1 GiB, so a regression cannot take the
// machine down.
func TestHostileMixStaysBounded(t *testing.T) {
	if os.Getenv("ROCKETGO_HOSTILE") == "" {
		// It saturates both cores for ~15 s: run alone (make test does, after
		// the parallel package run), never beside timing-sensitive tests.
		t.Skip("set ROCKETGO_HOSTILE=1 (make test runs it on its own)")
	}
	pid, broker := startRocketgo(t)
	cfg := hostileConfig{
		Broker: broker, Topic: "HostileTopic", PID: pid,
		Baseline: 2 * time.Second, Duration: 12 * time.Second, Backlog: 1000,
		HalfFrames: 500, HalfAnnounce: 16<<20 - 4, HalfSend: 1 << 20, Trickle: 1,
		ProbeEvery: 5 * time.Millisecond, MaxAnon: 1 << 30,
	}
	if testing.Verbose() {
		cfg.Progress = os.Stderr
	}
	sum, err := runHostile(cfg)
	var text bytes.Buffer
	sum.writeText(&text)
	t.Logf("hostile run:\n%s", text.String())
	require.NoError(t, err)
	require.False(t, sum.WatchdogKilled)
	require.LessOrEqual(t, sum.AboveIdleMiB, float64(hostileBound), "anonymous RSS above idle")
	require.Zero(t, sum.ProbeErrors, "the well-behaved client's sends failed: %q", sum.ProbeErrorSamples)
	// SYSTEM_BUSY is Java's overload answer, which clients retry: a send
	// that waited past waitTimeMillsInSendQueue while the attack saturated
	// both cores. Allowed, rarely (~2,800 probe sends per run).
	require.LessOrEqual(t, sum.ProbeBusy, uint64(28), "the well-behaved client was refused SYSTEM_BUSY too often")
	require.Positive(t, sum.AttackProbe.Samples)
	// Latency is measured, not asserted (two shared cores): the ratio is
	// in the log and the README.
}
