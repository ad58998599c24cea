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

// Single attacks of issue #19 §2, each beside a well-behaved producer
// sending every 2 ms (500 msg/s) on its own connection, against one
// bin/rocketgo under the 1 GiB watchdog:
//
//   - storm: one client pipelines SEND_MESSAGE_V2 (1 KiB bodies), then
//     HEART_BEAT, then PULL_MESSAGE, reading no reply and reconnecting
//     whenever cut. Before: +450 MiB, the producer's p99 6.6 s and 16 %
//     errors (send); now its requests beyond maxInflightRequestsPerConnection
//     stay unread in the kernel.
//   - bigheader: 200 frames with 1,047,893-byte headers on 4 connections.
//   - stuckpull: 4 connections each pipeline 400 pulls of a backlog and
//     then neither read nor write; each must be cut within the write-stall
//     bound (10 s, plus the 1 s check interval).
//
// Memory and the producer's errors are asserted strictly (no error, no
// SYSTEM_BUSY); latency generously (shared 2-core CI), the real figures
// are logged and in the README.
func TestHostileSingleAttacks(t *testing.T) {
	if os.Getenv("ROCKETGO_HOSTILE") == "" {
		t.Skip("set ROCKETGO_HOSTILE=1 (make test runs it on its own)")
	}
	pid, broker := startRocketgo(t)
	base := hostileConfig{
		Broker: broker, Topic: "HostileSingle", PID: pid,
		Baseline: 2 * time.Second, Duration: 4 * time.Second, Backlog: 500,
		ProbeEvery: 2 * time.Millisecond, MaxAnon: 1 << 30,
	}
	base.modeConfig = modeConfig{StormConns: 1, StormMaxDials: 10000, BigHeaderConns: 4, BigHeaderFrames: 200,
		BigHeaderLen: 1047893, StuckConns: 4, StuckPulls: 400}
	for _, tc := range []struct {
		name     string
		mode     string
		code     string
		duration time.Duration
		memBound float64 // MiB above idle
	}{
		{"storm-send", modeStorm, "send", 4 * time.Second, 64},
		{"storm-heartbeat", modeStorm, "heartbeat", 4 * time.Second, 64},
		{"storm-pull", modeStorm, "pull", 4 * time.Second, 64},
		{"bigheader", modeBigHeader, "", 5 * time.Second, 64},
		{"stuckpull", modeStuckPull, "", 13 * time.Second, 64},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := base
			cfg.Mode, cfg.StormCode, cfg.Duration = tc.mode, tc.code, tc.duration
			if testing.Verbose() {
				cfg.Progress = os.Stderr
			}
			sum, err := runHostile(cfg)
			var text bytes.Buffer
			sum.writeText(&text)
			t.Logf("hostile %s:\n%s", tc.name, text.String())
			require.NoError(t, err)
			require.False(t, sum.WatchdogKilled)
			require.LessOrEqual(t, sum.AboveIdleMiB, tc.memBound, "anonymous RSS above idle")
			require.Zero(t, sum.ProbeErrors, "the well-behaved client's sends failed: %q", sum.ProbeErrorSamples)
			require.Zero(t, sum.ProbeBusy, "the well-behaved client was refused SYSTEM_BUSY")
			require.Positive(t, sum.AttackProbe.Samples)
			// Generous: before the fixes it was 0.3–6.6 s for send storms.
			require.Less(t, sum.AttackProbe.P99, max(20*sum.IdleProbe.P99, 100), "probe p99 (ms) under attack")
			switch tc.mode {
			case modeBigHeader:
				require.NotNil(t, sum.BigHeader)
				require.Equal(t, cfg.BigHeaderFrames, sum.BigHeader.Answered, "big-header senders cut or unanswered")
			case modeStuckPull:
				for _, s := range sum.Stuck {
					require.GreaterOrEqual(t, s.CutAfterQuiet, 0.0, "a stuck puller was never cut")
					require.LessOrEqual(t, s.CutAfterQuiet, 12.5, "a stuck puller outlived the write-stall bound")
				}
			}
		})
	}
}
