//go:build long

package javadriver

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// TestHaToolKillMasterLong drives HaTool through RunTool against a real
// master/slave pair on loopback, per Java client: produce mixed kinds, kill -9
// the master in the middle of a push consume, and require that the consumer
// finishes on the slave with every acknowledged message, that its offsets
// were committed to the slave, and that a second consumer of the group on the
// slave-only route resumes from them (no redelivery).
//
// HATOOL_PAIR=go (default: bin/mqnamesrv, bin/mqbroker; run `make build`) or
// java (conformance/scripts/javaserver.sh, Apache RocketMQ 5.3.3).
func TestHaToolKillMasterLong(t *testing.T) {
	if !Available() {
		t.Skip("java or mvn not found")
	}
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	kind := os.Getenv("HATOOL_PAIR")
	if kind == "" {
		kind = "go"
	}
	if kind == "go" {
		for _, b := range []string{"mqnamesrv", "mqbroker"} {
			if _, err := os.Stat(filepath.Join(root, "bin", b)); err != nil {
				t.Skipf("bin/%s missing: run make build", b)
			}
		}
	}
	d := New(filepath.Join(root, "conformance", "java"))
	for _, client := range []scenario.Client{scenario.Java49, scenario.Java5} {
		t.Run(string(client), func(t *testing.T) {
			p := startPair(t, root, kind)
			killMasterMidConsume(t, d, client, p)
		})
	}
}

type testPair struct {
	ns     string
	master *exec.Cmd
}

func (p *testPair) killMaster() {
	_ = syscall.Kill(-p.master.Process.Pid, syscall.SIGKILL)
}

func killMasterMidConsume(t *testing.T, d *Driver, client scenario.Client, p *testPair) {
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	topic, group := "hatool_long", "hatool_long_c"
	run := func(args ...string) []string {
		var lines []string
		err := d.RunTool(ctx, client, args, func(l string) { lines = append(lines, l) })
		for _, l := range lines {
			require.NoError(t, ParseFatal(l))
		}
		require.NoError(t, err, "HaTool %v", args)
		return lines
	}
	done := func(lines []string) map[string]int64 {
		require.NotEmpty(t, lines)
		m, ok := ParseDone(lines[len(lines)-1])
		require.True(t, ok, "last line %q", lines[len(lines)-1])
		return m
	}

	lines := run("topic", "--namesrv", p.ns, "--topic", topic, "--queues", "4", "--deadline-ms", "150000", "--wait-slaves")
	require.Equal(t, int64(1), done(lines)["brokers"])
	require.True(t, strings.HasPrefix(lines[len(lines)-2], "SLAVE-HAS "), "slave never listed the topic: %v", lines)

	// Delay is left out: a delayed message still in the master's schedule
	// when it dies is never delivered by a slave.
	acked := map[string]bool{}
	lines = run("produce", "--namesrv", p.ns, "--topic", topic, "--count", "4000", "--threads", "4",
		"--deadline-ms", "120000", "--kinds", "single,batch,keyed,compressed,txn", "--key-prefix", "long")
	for _, l := range lines {
		if a, ok := ParseAck(l); ok {
			acked[a.Key] = true
		}
	}
	sum := done(lines)
	t.Logf("%s produce: %v", client, sum)
	require.Zero(t, sum["unresolved"])
	require.Equal(t, int64(len(acked)), sum["acked"])
	require.Greater(t, len(acked), 3000)

	var once sync.Once
	seen := map[string]bool{}
	var deliveries int
	var killedAt time.Time
	err := d.RunTool(ctx, client, []string{"consume", "--namesrv", p.ns, "--topic", topic, "--group", group,
		"--deadline-ms", "240000", "--expect", fmt.Sprint(len(acked)), "--rate", "400",
		// A small client cache: after the kill the rest must be pulled from
		// the slave, and the consumer lives past its route refresh, so its
		// offsets go to the slave (not to the dead master's address).
		"--pull-threshold", "50"}, func(l string) {
		if m, ok := ParseMsg(l); ok {
			seen[m.Key] = true
			deliveries++
			if len(seen) >= len(acked)/2 {
				once.Do(func() { p.killMaster(); killedAt = time.Now() })
			}
		}
	})
	require.NoError(t, err)
	require.False(t, killedAt.IsZero(), "master never killed")
	var missing []string
	for k := range acked {
		if !seen[k] {
			missing = append(missing, k)
		}
	}
	require.Empty(t, missing, "acknowledged but not delivered after the master died")
	t.Logf("%s: %d acked, %d distinct delivered, %d deliveries, finished %s after the kill",
		client, len(acked), len(seen), deliveries, time.Since(killedAt).Round(time.Second))

	var committed int64
	for _, l := range run("offsets", "--namesrv", p.ns, "--topic", topic, "--group", group) {
		if o, ok := ParseOff(l); ok {
			require.Equal(t, int64(1), o.BrokerID, "offsets answered by %s", l)
			committed += o.Offset
		}
	}
	require.GreaterOrEqual(t, committed, int64(len(acked)), "offsets committed to the slave")

	lines = run("consume", "--namesrv", p.ns, "--topic", topic, "--group", group, "--deadline-ms", "20000",
		"--expect", "1", "--from-slave-ok")
	require.Zero(t, done(lines)["deliveries"], "second consumer re-read committed messages")
}

// startPair starts a name server, an ASYNC_MASTER and a SLAVE (slaveReadEnable)
// on loopback, each in its own process group killed at cleanup.
func startPair(t *testing.T, root, kind string) *testPair {
	dir := t.TempDir()
	nsPort, mPort, sPort := brokerPort(t), brokerPort(t), brokerPort(t)
	ns := fmt.Sprintf("127.0.0.1:%d", nsPort)
	start := func(name string, env []string, argv ...string) *exec.Cmd {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		out, err := os.Create(filepath.Join(dir, name+".log"))
		require.NoError(t, err)
		cmd.Stdout, cmd.Stderr = out, out
		require.NoError(t, cmd.Start())
		t.Cleanup(func() {
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			_ = out.Close()
		})
		return cmd
	}
	p := &testPair{ns: ns}
	switch kind {
	case "go":
		conf := func(name string, port, id int, role string) string {
			path := filepath.Join(dir, name+".conf")
			body := fmt.Sprintf("brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=%d\nbrokerRole=%s\n"+
				"listenPort=%d\nhaListenPort=%d\nbindAddress=127.0.0.1\nbrokerIP1=127.0.0.1\nbrokerIP2=127.0.0.1\n"+
				"storePathRootDir=%s\nnamesrvAddr=%s\nmappedFileSizeCommitLog=16777216\nslaveReadEnable=true\n"+
				"transactionTimeOut=2000\ntransactionCheckInterval=3000\n",
				id, role, port, port+1, filepath.Join(dir, name), ns)
			require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
			return path
		}
		nsConf := filepath.Join(dir, "namesrv.conf")
		require.NoError(t, os.WriteFile(nsConf, []byte(fmt.Sprintf("listenPort=%d\nbindAddress=127.0.0.1\nkvConfigPath=%s\nconfigStorePath=%s\n",
			nsPort, filepath.Join(dir, "kv.json"), filepath.Join(dir, "ns.properties"))), 0o644))
		start("namesrv", nil, filepath.Join(root, "bin", "mqnamesrv"), "-c", nsConf)
		waitListen(t, ns)
		p.master = start("master", nil, filepath.Join(root, "bin", "mqbroker"), "-c", conf("master", mPort, 0, "ASYNC_MASTER"))
		start("slave", nil, filepath.Join(root, "bin", "mqbroker"), "-c", conf("slave", sPort, 1, "SLAVE"))
	case "java":
		js := filepath.Join(root, "conformance", "scripts", "javaserver.sh")
		fg := "FOREGROUND=1"
		start("namesrv", []string{fg}, js, "start-namesrv", fmt.Sprint(nsPort), filepath.Join(dir, "ns"))
		waitListen(t, ns)
		p.master = start("master", []string{fg, "BROKER_EXTRA_CONF=brokerIP2=127.0.0.1\nmappedFileSizeCommitLog=16777216"},
			js, "start-broker", ns, fmt.Sprint(mPort), filepath.Join(dir, "master"))
		start("slave", []string{fg, "BROKER_EXTRA_CONF=brokerId=1\nbrokerRole=SLAVE\nbrokerIP2=127.0.0.1\n" +
			"mappedFileSizeCommitLog=16777216\nslaveReadEnable=true"},
			js, "start-broker", ns, fmt.Sprint(sPort), filepath.Join(dir, "slave"))
	default:
		t.Fatalf("HATOOL_PAIR=%q: want go or java", kind)
	}
	return p
}

// brokerPort picks P in 20000–40000 with P-2, P and P+1 free on loopback.
func brokerPort(t *testing.T) int {
	for range 200 {
		p := 20002 + rand.IntN(19990)
		ok := true
		for _, q := range []int{p - 2, p, p + 1} {
			ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", q))
			if err != nil {
				ok = false
				break
			}
			_ = ln.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatal("no free port triple")
	return 0
}

func waitListen(t *testing.T, addr string) {
	require.Eventually(t, func() bool {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	}, 60*time.Second, 100*time.Millisecond, "nothing listens on %s", addr)
}
