package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// freeAddr returns a 127.0.0.1 address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// startRocketgo builds cmd/rocketgo of the enclosing repository and runs it
// on 127.0.0.1; it returns the name server address.
func startRocketgo(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds and starts a broker")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	dir := t.TempDir()
	bin := filepath.Join(dir, "rocketgo")
	build := exec.Command("go", "build", "-o", bin, "./cmd/rocketgo")
	build.Dir = root
	out, err := build.CombinedOutput()
	require.NoError(t, err, "%s", out)

	ns, broker := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "-dataDir", filepath.Join(dir, "data"), "-namesrvListen", ns, "-brokerListen", broker)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", broker, 200*time.Millisecond)
		if err == nil {
			require.NoError(t, c.Close())
			break
		}
		require.True(t, time.Now().Before(deadline), "broker did not listen on %s", broker)
		time.Sleep(20 * time.Millisecond)
	}
	return ns
}

// TestProduceThenConsumeAgainstRocketgo drives a real broker with the official
// Go client: a counted producer run, then a push consumer reading all of it.
func TestProduceThenConsumeAgainstRocketgo(t *testing.T) {
	ns := startRocketgo(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	topic := "GoClientBenchTest"

	var p Summary
	var err error
	// The broker auto-creates the topic on the first send; its route may
	// take a moment to show up at the name server.
	for {
		p, err = runProduce(produceConfig{namesrv: ns, topic: topic, group: "gc_test_p", threads: 4, size: 256,
			count: 400, duration: 20 * time.Second, timeout: 3 * time.Second})
		if err == nil || ctx.Err() != nil {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	require.NoError(t, err)
	require.Equal(t, uint64(400), p.Messages)
	require.Zero(t, p.ErrTotal)
	require.Equal(t, uint64(400), p.Latency.Samples)
	require.Positive(t, p.TPS)

	c, err := runConsume(consumeConfig{namesrv: ns, topic: topic, group: "gc_test_c", count: 401,
		duration: 30 * time.Second})
	require.NoError(t, err)
	// 400 counted sends plus the uncounted route-warming one.
	require.Equal(t, uint64(401), c.Messages)
	require.Equal(t, uint64(401*256), c.Bytes)
	require.Equal(t, uint64(401), c.Latency.Samples, "every body carries the send stamp")
	require.Positive(t, c.FirstMs)
}
