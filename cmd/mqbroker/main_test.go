package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
	"github.com/rocketgo/rocketgo/namesrv"
)

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// routeOf asks the name server for a topic's route and returns the response
// code and body.
func routeOf(t *testing.T, c *transport.Client, ns, topic string) (int32, string) {
	t.Helper()
	req := &codec.Frame{Code: int32(codec.ReqGetRouteinfoByTopic), Language: codec.LangJava, Version: 409}
	req.Set("topic", topic)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := c.Invoke(ctx, ns, req)
	require.NoError(t, err)
	return resp.Code, string(resp.Body)
}

// TestKilledBrokerLeavesRoutes runs the real mqbroker binary against an
// in-process name server, waits until its topics are routable, SIGKILLs it
// and checks the name server drops the broker and its topics (the closed
// connection is the signal, long before the 120 s silence timeout).
func TestKilledBrokerLeavesRoutes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the broker binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "mqbroker")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Stderr = os.Stderr
	require.NoError(t, build.Run())

	nsCfg := namesrv.Default()
	nsCfg.BindAddress = "127.0.0.1"
	nsCfg.ListenPort = freePort(t)
	nsCfg.KVConfigPath = filepath.Join(dir, "namesrv", "kvConfig.json")
	nsCfg.ConfigStorePath = filepath.Join(dir, "namesrv", "namesrv.properties")
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ns, err := namesrv.New(nsCfg, log)
	require.NoError(t, err)
	require.NoError(t, ns.Start())
	defer ns.Close()

	port := freePort(t)
	haPort := freePort(t) // listenPort+1 (the default) may be taken by another test's socket
	conf := filepath.Join(dir, "broker.conf")
	require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
		"brokerClusterName=KillCluster",
		"brokerName=broker-kill",
		"brokerIP1=127.0.0.1",
		"listenIP=127.0.0.1",
		fmt.Sprintf("listenPort=%d", port),
		fmt.Sprintf("haListenPort=%d", haPort),
		"enableFastChannel=false",
		"storePathRootDir=" + filepath.Join(dir, "store"),
		"mappedFileSizeCommitLog=16777216",
		"",
	}, "\n")), 0o644))

	cmd := exec.Command(bin, "-c", conf, "-n", ns.Addr())
	logf, err := os.Create(filepath.Join(dir, "broker.log"))
	require.NoError(t, err)
	defer logf.Close()
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		if t.Failed() {
			out, _ := os.ReadFile(logf.Name())
			t.Logf("broker log:\n%s", out)
		}
	})
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	c := transport.NewClient(transport.ClientConfig{DialTimeout: time.Second, Logger: log})
	defer c.Close()
	addr := fmt.Sprintf("127.0.0.1:%d", port)

	// The broker's own topic (named after the broker) becomes routable once
	// it has registered.
	require.Eventually(t, func() bool {
		code, body := routeOf(t, c, ns.Addr(), "broker-kill")
		return code == int32(codec.RespSuccess) && strings.Contains(body, addr)
	}, 20*time.Second, 50*time.Millisecond, "broker never registered")
	// One start-up line names the bound addresses: the main one and the
	// HA port. It is written after Start returns, and the registration
	// may come first.
	want := `msg="mqbroker: listening" addrs=` + addr + fmt.Sprintf(",127.0.0.1:%d", haPort) + "\n"
	require.Eventually(t, func() bool {
		logged, err := os.ReadFile(logf.Name())
		return err == nil && strings.Contains(string(logged), want)
	}, 10*time.Second, 20*time.Millisecond, "no start-up line %q", want)

	killed := time.Now()
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	_ = cmd.Wait()

	require.Eventually(t, func() bool {
		code, _ := routeOf(t, c, ns.Addr(), "broker-kill")
		return code == int32(codec.RespTopicNotExist)
	}, 10*time.Second, 20*time.Millisecond, "killed broker still routed")
	t.Logf("route gone %v after SIGKILL", time.Since(killed).Round(time.Millisecond))
}
