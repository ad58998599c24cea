//go:build long

package broker

// Controller mode under Java's controller (go test -tags long -run
// TestControllerModeJava ./broker): Java 5.3.3's name server with its
// embedded controller (enableControllerInNamesrv=true, one DLedger peer)
// runs as a child process from conformance/scripts/javaserver.sh; three of
// our brokers in controller mode run the failover scenario against it
// (registration, election, replication, master close, new master, old
// master back as a slave after truncation). It needs java and the jars of
// conformance/.cache/java-server/lib (javaserver.sh fetch).

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func freeLoopbackPort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, addr string, d time.Duration) {
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return false
		}
		c.Close()
		return true
	}, d, 100*time.Millisecond, "nothing listens on %s", addr)
}

// startJavaNamesrvController runs Java's name server with an embedded
// controller; it returns the controller and the name server address.
func startJavaNamesrvController(t *testing.T) (ctrl, ns string) {
	wd, err := os.Getwd()
	require.NoError(t, err)
	script := filepath.Join(wd, "..", "conformance", "scripts", "javaserver.sh")
	if _, err := os.Stat(filepath.Join(wd, "..", "conformance", ".cache", "java-server", "lib")); err != nil {
		t.Skip("no Java server jars (conformance/scripts/javaserver.sh fetch)")
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	dir := t.TempDir()
	nsPort, ctlPort := freeLoopbackPort(t), freeLoopbackPort(t)
	conf := fmt.Sprintf("enableControllerInNamesrv=true\ncontrollerDLegerGroup=g1\ncontrollerDLegerPeers=n0-127.0.0.1:%d\ncontrollerDLegerSelfId=n0\ncontrollerStorePath=%s\nscanNotActiveBrokerInterval=1000\nnotifyBrokerRoleChanged=true\n",
		ctlPort, filepath.Join(dir, "controller"))
	cmd := exec.Command("bash", script, "start-namesrv", fmt.Sprint(nsPort), dir)
	cmd.Env = append(os.Environ(), "FOREGROUND=1", "NAMESRV_EXTRA_CONF="+conf)
	log, err := os.Create(filepath.Join(dir, "namesrv.out"))
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(filepath.Join(dir, "namesrv.out"))
			t.Logf("java namesrv output (tail):\n%s", tail(string(b), 3000))
		}
	})
	ns = fmt.Sprintf("127.0.0.1:%d", nsPort)
	ctrl = fmt.Sprintf("127.0.0.1:%d", ctlPort)
	waitListening(t, ns, 90*time.Second)
	waitListening(t, ctrl, 90*time.Second)
	return ctrl, ns
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func TestControllerModeJava(t *testing.T) {
	ctrl, ns := startJavaNamesrvController(t)
	runControllerFailover(t, ctrl, ns, 90*time.Second)
}
