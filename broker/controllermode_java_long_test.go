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
// TestControllerModeKill9Processes (no Java) runs our own binaries as
// processes for the kill -9 case.

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/transport"
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

// javaBroker is a Java 5.3.3 broker in controller mode (child process).
type javaBroker struct {
	t    *testing.T
	cmd  *exec.Cmd
	dir  string
	addr string
	conf string
	ns   string
	port int
}

func startJavaCMBroker(t *testing.T, dir string, port int, ctrl, ns string) *javaBroker {
	wd, err := os.Getwd()
	require.NoError(t, err)
	script := filepath.Join(wd, "..", "conformance", "scripts", "javaserver.sh")
	conf := fmt.Sprintf("enableControllerMode=true\ncontrollerAddr=%s\nbrokerId=-1\nbrokerRole=SLAVE\nsyncBrokerMetadataPeriod=1000\nbrokerHeartbeatInterval=500\ncontrollerHeartBeatTimeoutMills=3000\nhaSendHeartbeatInterval=1000\nallAckInSyncStateSet=false\nmappedFileSizeCommitLog=4194304\n", ctrl)
	cmd := exec.Command("bash", script, "start-broker", ns, fmt.Sprint(port), dir)
	cmd.Env = append(os.Environ(), "FOREGROUND=1", "BROKER_EXTRA_CONF="+conf)
	log, err := os.OpenFile(filepath.Join(dir, "broker.out"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(t, cmd.Start())
	jb := &javaBroker{t: t, cmd: cmd, dir: dir, addr: fmt.Sprintf("127.0.0.1:%d", port), ns: ns, port: port}
	t.Cleanup(jb.kill)
	return jb
}

func (jb *javaBroker) kill() {
	if jb.cmd != nil && jb.cmd.Process != nil {
		_ = syscall.Kill(-jb.cmd.Process.Pid, syscall.SIGKILL)
		_, _ = jb.cmd.Process.Wait()
		jb.cmd = nil
	}
}

// epochCache asks a broker for GET_BROKER_EPOCH_CACHE (brokerId, maxOffset).
func epochCache(cli *transport.Client, addr string) (brokerID, maxOffset int64, ok bool) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	resp, err := cli.Invoke(ctx, addr, request(codec.ReqGetBrokerEpochCache))
	if err != nil || resp.Code != int32(codec.RespSuccess) {
		return 0, 0, false
	}
	var v struct {
		BrokerID  int64 `json:"brokerId"`
		MaxOffset int64 `json:"maxOffset"`
	}
	if json.Unmarshal(resp.Body, &v) != nil {
		return 0, 0, false
	}
	return v.BrokerID, v.MaxOffset, true
}

// runMixed: a Java 5.3.3 broker in controller mode starts first and
// becomes master; two of ours join as slaves and replicate from it; kill
// -9 of the Java master makes one of ours master with a higher epoch that
// takes writes; the Java broker restarted rejoins as a slave of ours and
// replicates up to our master's end (its GET_BROKER_EPOCH_CACHE maxOffset).
func runMixed(t *testing.T, ctrl, ns string) {
	jdir := t.TempDir()
	jport := freeLoopbackPort(t)
	for jport < 3 || jport > 65000 {
		jport = freeLoopbackPort(t)
	}
	jb := startJavaCMBroker(t, jdir, jport, ctrl, ns)
	probe := newTestClient(t)
	require.Eventually(t, func() bool { id, _, ok := epochCache(probe, jb.addr); return ok && id == 0 }, 120*time.Second, 200*time.Millisecond,
		"the Java broker never became master")

	mut := controllerModeConfig(ctrl, ns)
	ours := make([]*cmBroker, 2)
	for i := range ours {
		root := t.TempDir()
		tb, stop := startBrokerAt(t, root, mut)
		ours[i] = &cmBroker{testBroker: tb, root: root, stop: stop}
	}
	for _, b := range ours {
		require.Eventually(t, func() bool { return b.rm.ID() > 0 && b.IsSlave() && b.MasterAddr() == jb.addr }, 60*time.Second, 20*time.Millisecond)
	}
	// Sends to the Java master (a topic the route knows: auto-created).
	for i := 0; i < 20; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := probe.Invoke(ctx, jb.addr, sendV1("MIX", 0, props("UNIQ_KEY", fmt.Sprint("j", i)), []byte(fmt.Sprint("java-", i))))
		cancel()
		require.NoError(t, err)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
	}
	_, jend, ok := epochCache(probe, jb.addr)
	require.True(t, ok)
	for _, b := range ours {
		require.Eventually(t, func() bool { return b.store.MaxPhyOffset() == jend }, 60*time.Second, 10*time.Millisecond, "our slave behind the Java master")
	}
	t.Logf("our slaves replicated the Java master to %d", jend)

	jb.kill()
	require.Eventually(t, func() bool { return len(masterOf(ours)) == 1 }, 90*time.Second, 20*time.Millisecond, "no new master among ours")
	nm := masterOf(ours)[0]
	sendN(t, nm.testBroker, "MIX", 100, 20)
	t.Logf("our broker %d is master, epoch %d", nm.rm.ID(), nm.rm.MasterEpoch())

	jb = startJavaCMBroker(t, jdir, jport, ctrl, ns)
	end := nm.store.MaxPhyOffset()
	require.Eventually(t, func() bool {
		id, max, ok := epochCache(probe, jb.addr)
		return ok && id > 0 && max >= end
	}, 120*time.Second, 200*time.Millisecond, "the Java broker did not catch up as our slave")
	t.Logf("the Java broker rejoined as a slave of ours and reached %d", end)

	// GET_BROKER_EPOCH_CACHE: ours and Java's bodies have the same shape
	// (fields, order, the last entry's open end).
	raw := func(addr string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		resp, err := probe.Invoke(ctx, addr, request(codec.ReqGetBrokerEpochCache))
		require.NoError(t, err)
		require.Equal(t, int32(codec.RespSuccess), resp.Code, resp.Remark)
		return string(resp.Body)
	}
	jraw, oraw := raw(jb.addr), raw(nm.Addr())
	t.Logf("java epoch cache: %s", jraw)
	t.Logf("ours epoch cache: %s", oraw)
	digits := regexp.MustCompile(`[0-9]+`)
	require.Equal(t, digits.ReplaceAllString(jraw, "N"), digits.ReplaceAllString(oraw, "N"))
}

func TestControllerModeMixedOurController(t *testing.T) {
	runMixed(t, startTestController(t), startNamesrv(t))
}

func TestControllerModeMixedJavaController(t *testing.T) {
	ctrl, ns := startJavaNamesrvController(t)
	runMixed(t, ctrl, ns)
}

// TestControllerModeKill9Processes: our controller, name server and three
// brokers as processes (bin built from cmd/); kill -9 of the master
// broker (no unregistration, no graceful HA close) makes a slave master
// with a higher epoch that takes writes; the killed broker restarted
// rejoins as a slave and catches up.
func TestControllerModeKill9Processes(t *testing.T) {
	dir := t.TempDir()
	wd, err := os.Getwd()
	require.NoError(t, err)
	repo := filepath.Join(wd, "..")
	bin := func(name string) string {
		out := filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-o", out, "./cmd/"+name)
		cmd.Dir = repo
		b, err := cmd.CombinedOutput()
		require.NoError(t, err, string(b))
		return out
	}
	ctlBin, nsBin, brBin := bin("mqcontroller"), bin("mqnamesrv"), bin("mqbroker")
	var procs []*exec.Cmd
	start := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(args[0], args[1:]...)
		log, err := os.OpenFile(filepath.Join(dir, name+".log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		require.NoError(t, err)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		procs = append(procs, cmd)
		return cmd
	}
	kill9 := func(cmd *exec.Cmd) {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
	}
	t.Cleanup(func() {
		for _, p := range procs {
			kill9(p)
		}
	})
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(s), 0o644))
		return p
	}
	ctlPort := freeLoopbackPort(t)
	for {
		l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", ctlPort+1))
		if err == nil {
			l.Close()
			break
		}
		ctlPort = freeLoopbackPort(t)
	}
	nsPort := freeLoopbackPort(t)
	ctrl, ns := fmt.Sprintf("127.0.0.1:%d", ctlPort), fmt.Sprintf("127.0.0.1:%d", nsPort)
	start("ctl", ctlBin, "-c", write("ctl.conf", fmt.Sprintf("controllerDLegerGroup=g1\ncontrollerDLegerPeers=n0-%s\ncontrollerDLegerSelfId=n0\ncontrollerStorePath=%s\n", ctrl, filepath.Join(dir, "ctl"))))
	start("ns", nsBin, "-c", write("ns.conf", fmt.Sprintf("listenPort=%d\nbindAddress=127.0.0.1\n", nsPort)))
	waitListening(t, ctrl, 30*time.Second)
	waitListening(t, ns, 30*time.Second)

	type proc struct {
		cmd  *exec.Cmd
		conf string
		addr string
	}
	brokers := make([]*proc, 3)
	for i := range brokers {
		port := freeLoopbackPort(t)
		conf := write(fmt.Sprintf("b%d.conf", i), fmt.Sprintf(`brokerClusterName=DefaultCluster
brokerName=broker-a
brokerId=-1
brokerRole=SLAVE
enableControllerMode=true
controllerAddr=%s
namesrvAddr=%s
brokerIP1=127.0.0.1
listenIP=127.0.0.1
listenPort=%d
haListenPort=0
storePathRootDir=%s
mappedFileSizeCommitLog=4194304
maxMessageSize=1048576
autoCreateTopicEnable=true
syncBrokerMetadataPeriod=500
registerNameServerPeriod=1000
`, ctrl, ns, port, filepath.Join(dir, fmt.Sprintf("store%d", i))))
		brokers[i] = &proc{conf: conf, addr: fmt.Sprintf("127.0.0.1:%d", port)}
		brokers[i].cmd = start(fmt.Sprintf("b%d", i), brBin, "-c", conf)
	}
	cli := newTestClient(t)
	master := func(among []*proc) *proc {
		var m *proc
		require.Eventually(t, func() bool {
			m = nil
			for _, b := range among {
				if id, _, ok := epochCache(cli, b.addr); ok && id == 0 {
					m = b
				}
			}
			return m != nil
		}, 60*time.Second, 100*time.Millisecond)
		return m
	}
	send := func(addr string, from, n int) {
		for i := from; i < from+n; i++ {
			var resp *codec.Frame
			require.Eventually(t, func() bool {
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				defer cancel()
				var err error
				resp, err = cli.Invoke(ctx, addr, sendV1("K9", 0, props("UNIQ_KEY", fmt.Sprint("k", i)), []byte(fmt.Sprint("k9-", i))))
				return err == nil && resp.Code == int32(codec.RespSuccess)
			}, 30*time.Second, 100*time.Millisecond, "send %d to %s", i, addr)
		}
	}
	m := master(brokers)
	send(m.addr, 0, 30)
	_, end, _ := epochCache(cli, m.addr)
	for _, b := range brokers {
		require.Eventually(t, func() bool { _, max, ok := epochCache(cli, b.addr); return ok && max == end }, 60*time.Second, 100*time.Millisecond)
	}

	killedAt := time.Now()
	kill9(m.cmd)
	var rest []*proc
	for _, b := range brokers {
		if b != m {
			rest = append(rest, b)
		}
	}
	nm := master(rest)
	send(nm.addr, 100, 10)
	t.Logf("kill -9 of the master: the new master took a write %v later", time.Since(killedAt).Round(time.Millisecond))
	_, end2, _ := epochCache(cli, nm.addr)
	require.Greater(t, end2, end)

	m.cmd = start("b-restarted", brBin, "-c", m.conf)
	require.Eventually(t, func() bool {
		id, max, ok := epochCache(cli, m.addr)
		return ok && id > 0 && max == end2
	}, 60*time.Second, 100*time.Millisecond, "the killed master did not rejoin as a slave")
}
