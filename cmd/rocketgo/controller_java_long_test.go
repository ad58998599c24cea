//go:build long

package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
)

// javaMQAdmin runs Java 5.3.3's MQAdminStartup from
// conformance/.cache/java-server/lib (scripts/javaserver.sh fetch); a JVM on
// a loaded machine may be slow, so a command is retried (bounded) until its
// output contains want.
func javaMQAdmin(t *testing.T, home, want string, args ...string) string {
	t.Helper()
	lib, err := filepath.Abs(filepath.Join("..", "..", "conformance", ".cache", "java-server", "lib"))
	require.NoError(t, err)
	var out string
	for try := range 4 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx256m", "-Duser.home=" + home, "-cp", lib + "/*",
			"org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)...)
		cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		_ = cmd.Run()
		cancel()
		if out = b.String(); strings.Contains(out, want) {
			return out
		}
		t.Logf("mqadmin %v: want %q, try %d:\n%s", args, want, try, out)
	}
	t.Fatalf("mqadmin %v never printed %q", args, want)
	return out
}

// TestRocketgoEmbeddedControllerJavaMQAdmin (go test -tags long): Java
// 5.3.3's mqadmin reads the embedded controller (getControllerMetaData,
// getSyncStateSet), the controller-mode broker's epoch through the name
// server (getBrokerEpoch), and a Java producer's send gets SEND_OK.
func TestRocketgoEmbeddedControllerJavaMQAdmin(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	if _, err := os.Stat(filepath.Join("..", "..", "conformance", ".cache", "java-server", "lib", "rocketmq-tools-5.3.3.jar")); err != nil {
		t.Skip("no Java 5.3.3 jars; run conformance/scripts/javaserver.sh fetch")
	}
	dir := t.TempDir()
	args := controllerModeSetup(t, dir)
	var out bytes.Buffer
	stop, err := start(args, &out, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	defer func() { require.NoError(t, stop()) }()
	m := readyRE.FindStringSubmatch(out.String())
	require.NotNil(t, m, out.String())
	ns, brokerAddr, ctl := m[1], m[2], m[3]
	r := newCtlRig(t)
	require.Eventually(t, func() bool {
		ri, ok := r.replicaInfo(ctl)
		return ok && ri.MasterAddress == brokerAddr && r.send(brokerAddr, "CtlGo", "x").Code == int32(codec.RespSuccess)
	}, 15*time.Second, 20*time.Millisecond)

	home := t.TempDir()
	s := javaMQAdmin(t, home, "#ControllerLeaderAddress", "getControllerMetaData", "-a", ctl)
	require.Contains(t, s, "#ControllerGroup\tgroup1\n")
	require.Contains(t, s, "#ControllerLeaderId\tn0\n")
	require.Contains(t, s, "#ControllerLeaderAddress\t"+ctl+"\n")
	require.Contains(t, s, "#Peer:\tn0:"+ctl+"\n")

	s = javaMQAdmin(t, home, "#MasterAddr", "getSyncStateSet", "-a", ctl, "-b", "broker-a")
	require.Contains(t, s, "#MasterAddr\t"+brokerAddr)
	require.Equal(t, 1, strings.Count(s, "InSyncReplica:"), s)

	s = javaMQAdmin(t, home, "#Epoch", "getBrokerEpoch", "-n", ns, "-b", "broker-a")
	require.Equal(t, 1, strings.Count(s, "#brokerName\tbroker-a"), s)

	javaMQAdmin(t, home, "success", "updateTopic", "-n", ns, "-c", "DefaultCluster", "-t", "CtlJava")
	javaMQAdmin(t, home, "SEND_OK", "sendMessage", "-n", ns, "-t", "CtlJava", "-p", "hello")
}
