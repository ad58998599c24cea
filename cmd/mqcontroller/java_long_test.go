//go:build long

package main

// TestJavaInterop (go test -tags long -run TestJavaInterop ./cmd/mqcontroller)
// runs a 3-node controller group of ours as three processes on loopback,
// drives it with Java 5.3.3's mqadmin, then lets two Java 5.3.3 brokers in
// controller mode register with it: one becomes master; kill -9 of it makes
// our group elect the other, which then takes sends; kill -9 of our Raft
// leader leaves a new leader serving the same state. It needs java and the
// jars of conformance/.cache/java-server/lib (scripts/javaserver.sh fetch).

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/codec"
	"github.com/rocketgo/rocketgo/codec/body"
	"github.com/rocketgo/rocketgo/codec/header"
	"github.com/rocketgo/rocketgo/codec/transport"
)

type interop struct {
	t      *testing.T
	dir    string
	repo   string
	lib    string
	procs  []*exec.Cmd
	cl     *transport.Client
	ctlBin string
}

func repoRoot(t *testing.T) string {
	wd, err := os.Getwd()
	require.NoError(t, err)
	return filepath.Clean(filepath.Join(wd, "..", ".."))
}

// nextPort walks ports below the ephemeral range (32768+ on Linux), where
// the outgoing connections of a busy machine cannot take them between our
// check and the child's bind.
var nextPort = 20000 + os.Getpid()%5000*2

// freeRange returns a port p with p-2 … p+1 free on 127.0.0.1.
func freeRange(t *testing.T) int {
	for i := 0; i < 1000; i++ {
		nextPort += 5
		p := nextPort
		ok := true
		for _, q := range []int{p - 2, p - 1, p, p + 1} {
			l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", q))
			if err != nil {
				ok = false
				break
			}
			l.Close()
		}
		if ok {
			return p
		}
	}
	t.Fatal("no free port range")
	return 0
}

func (x *interop) build(pkg, name string) string {
	out := filepath.Join(x.dir, name)
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Dir = x.repo
	b, err := cmd.CombinedOutput()
	require.NoError(x.t, err, string(b))
	return out
}

// start runs a child in its own process group; Cleanup kills the group.
func (x *interop) start(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(args[0], args[1:]...)
	log, err := os.Create(filepath.Join(x.dir, name+".log"))
	require.NoError(x.t, err)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(x.t, cmd.Start())
	x.procs = append(x.procs, cmd)
	return cmd
}

func kill9(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_, _ = cmd.Process.Wait()
	}
}

// mqadmin runs Java's MQAdminStartup; the machine may be loaded, so a
// command is retried (bounded) until its output contains want.
func (x *interop) mqadmin(want string, args ...string) string {
	x.t.Helper()
	var out string
	for try := 0; try < 6; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx256m", "-Duser.home=" + x.dir, "-cp", x.lib + "/*",
			"org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)...)
		cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+x.dir)
		var b bytes.Buffer
		cmd.Stdout, cmd.Stderr = &b, &b
		_ = cmd.Run()
		cancel()
		out = b.String()
		if strings.Contains(out, want) {
			return out
		}
		x.t.Logf("mqadmin %v: want %q, try %d:\n%s", args, want, try, tail(out, 800))
	}
	x.t.Fatalf("mqadmin %v never printed %q", args, want)
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

func (x *interop) call(addr string, code codec.RequestCode, enc func(*codec.Frame)) (*codec.Frame, error) {
	f := &codec.Frame{Code: int32(code), Language: codec.LangJava, Version: codec.ServerVersion}
	if enc != nil {
		enc(f)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	return x.cl.Invoke(ctx, addr, f)
}

func (x *interop) leader(addrs []string) string {
	for _, a := range addrs {
		resp, err := x.call(a, codec.ReqControllerGetMetadataInfo, nil)
		if err != nil {
			continue
		}
		var h header.GetMetaDataResponse
		if h.Decode(resp) == nil && h.ControllerLeaderAddress != "" {
			return h.ControllerLeaderAddress
		}
	}
	return ""
}

func (x *interop) replicaInfo(addrs []string) (header.GetReplicaInfoResponse, body.SyncStateSet, bool) {
	l := x.leader(addrs)
	if l == "" {
		return header.GetReplicaInfoResponse{}, body.SyncStateSet{}, false
	}
	resp, err := x.call(l, codec.ReqControllerGetReplicaInfo, (&header.GetReplicaInfoRequest{BrokerName: "broker-a"}).Encode)
	if err != nil || resp.Code != int32(codec.RespSuccess) {
		return header.GetReplicaInfoResponse{}, body.SyncStateSet{}, false
	}
	var h header.GetReplicaInfoResponse
	_ = h.Decode(resp)
	s, _ := body.DecodeSyncStateSet(resp.Body, 64)
	return h, s, true
}

func TestJavaInterop(t *testing.T) {
	if _, err := exec.LookPath("java"); err != nil {
		t.Skip("no java")
	}
	dir, err := os.MkdirTemp("", "mqcontroller-interop-")
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("logs kept in %s", dir)
			return
		}
		os.RemoveAll(dir)
	})
	x := &interop{t: t, dir: dir, repo: repoRoot(t)}
	x.lib = filepath.Join(x.repo, "conformance", ".cache", "java-server", "lib")
	if _, err := os.Stat(filepath.Join(x.lib, "rocketmq-tools-5.3.3.jar")); err != nil {
		t.Skip("no Java 5.3.3 jars; run conformance/scripts/javaserver.sh fetch")
	}
	x.cl = transport.NewClient(transport.ClientConfig{})
	t.Cleanup(func() {
		x.cl.Close()
		for _, p := range x.procs {
			kill9(p)
		}
	})
	x.ctlBin = x.build("./cmd/mqcontroller", "mqcontroller")
	nsBin := x.build("./cmd/mqnamesrv", "mqnamesrv")

	// Three controller processes.
	ports := []int{freeRange(t), freeRange(t), freeRange(t)}
	var peers, addrs []string
	for i, p := range ports {
		peers = append(peers, fmt.Sprintf("n%d-127.0.0.1:%d", i, p))
		addrs = append(addrs, fmt.Sprintf("127.0.0.1:%d", p))
	}
	ctl := make([]*exec.Cmd, 3)
	for i := range ports {
		conf := filepath.Join(x.dir, fmt.Sprintf("n%d.conf", i))
		require.NoError(t, os.WriteFile(conf, []byte(strings.Join([]string{
			"controllerDLegerGroup = group1",
			"controllerDLegerPeers = " + strings.Join(peers, ";"),
			fmt.Sprintf("controllerDLegerSelfId = n%d", i),
			"controllerStorePath = " + filepath.Join(x.dir, fmt.Sprintf("store-n%d", i)),
			"configStorePath = " + filepath.Join(x.dir, fmt.Sprintf("n%d.properties", i)),
		}, "\n")+"\n"), 0o644))
		ctl[i] = x.start(fmt.Sprintf("ctl-n%d", i), x.ctlBin, "-c", conf)
	}
	require.Eventually(t, func() bool { return x.leader(addrs) != "" }, 30*time.Second, 100*time.Millisecond)

	// mqadmin against every node.
	for _, a := range addrs {
		out := x.mqadmin("#ControllerLeaderAddress", "getControllerMetaData", "-a", a)
		require.Contains(t, out, "#ControllerGroup\tgroup1")
		// Leadership may move meanwhile on a loaded machine: any peer will do.
		require.Regexp(t, "#ControllerLeaderAddress\t("+strings.Join(addrs, "|")+")\n", out)
		for _, p := range peers {
			id, addr, _ := strings.Cut(p, "-")
			require.Contains(t, out, "#Peer:\t"+id+":"+addr)
		}
	}
	out := x.mqadmin("controllerDLegerPeers", "getControllerConfig", "-a", strings.Join(addrs, ";"))
	require.Contains(t, out, "controllerDLegerGroup")
	out = x.mqadmin("success", "updateControllerConfig", "-a", addrs[0], "-k", "electMasterMaxRetryCount", "-v", "4")
	require.Contains(t, out, "update controller config success")
	out = x.mqadmin("CODE: 16", "updateControllerConfig", "-a", addrs[0], "-k", "configStorePath", "-v", "/tmp/x")
	require.Contains(t, out, "Can not update config in black list.")
	out = x.mqadmin("CODE: 2010", "electMaster", "-a", addrs[1], "-c", "DefaultCluster", "-bn", "nobody", "-b", "1")
	require.Contains(t, out, "Broker hasn't been registered")
	out = x.mqadmin("CODE: 2009", "cleanBrokerMetadata", "-a", addrs[2], "-c", "DefaultCluster", "-bn", "nobody")
	require.Contains(t, out, "Broker nobody is not existed,clean broker data failure.")

	// Our name server and two Java brokers in controller mode.
	nsPort := freeRange(t)
	nsAddr := fmt.Sprintf("127.0.0.1:%d", nsPort)
	nsConf := filepath.Join(x.dir, "ns.conf")
	require.NoError(t, os.WriteFile(nsConf, []byte(fmt.Sprintf("listenPort=%d\nbindAddress=127.0.0.1\nkvConfigPath=%s\nconfigStorePath=%s\n",
		nsPort, filepath.Join(x.dir, "ns", "kv.json"), filepath.Join(x.dir, "ns", "ns.properties"))), 0o644))
	x.start("namesrv", nsBin, "-c", nsConf)
	extra := strings.Join([]string{"brokerId=-1", "brokerRole=SLAVE", "enableControllerMode=true",
		"controllerAddr=" + strings.Join(addrs, ";"), "brokerIP2=127.0.0.1", "allAckInSyncStateSet=true"}, "\n")
	script := filepath.Join(x.repo, "conformance", "scripts", "javaserver.sh")
	brokers := map[string]*exec.Cmd{}
	startBroker := func(dir string, port int) {
		cmd := exec.Command(script, "start-broker", nsAddr, strconv.Itoa(port), dir)
		cmd.Env = append(os.Environ(), "FOREGROUND=1", "BROKER_EXTRA_CONF="+extra)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		log, err := os.Create(dir + ".log")
		require.NoError(t, err)
		cmd.Stdout, cmd.Stderr = log, log
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		require.NoError(t, cmd.Start())
		x.procs = append(x.procs, cmd)
		brokers[fmt.Sprintf("127.0.0.1:%d", port)] = cmd
	}
	p1, p2 := freeRange(t), freeRange(t) // 5 apart: the ranges do not overlap
	startBroker(filepath.Join(x.dir, "b1"), p1)
	startBroker(filepath.Join(x.dir, "b2"), p2)

	// One becomes master, the other joins its SyncStateSet.
	var master string
	polls := 0
	require.Eventually(t, func() bool {
		h, s, ok := x.replicaInfo(addrs)
		master = h.MasterAddress
		if polls++; polls%10 == 0 {
			t.Logf("waiting for the broker set: ok=%v master=%d %s sync=%v", ok, h.MasterBrokerID, h.MasterAddress, s)
		}
		return ok && h.MasterBrokerID != 0 && len(s.IDs) == 2
	}, 5*time.Minute, time.Second, "Java brokers register, elect a master and grow the SyncStateSet")
	out = x.mqadmin("#MasterAddr", "getSyncStateSet", "-a", addrs[0], "-b", "broker-a")
	require.Contains(t, out, "#MasterAddr\t"+master)
	require.Equal(t, 2, strings.Count(out, "InSyncReplica:"))
	out = x.mqadmin("#Epoch", "getBrokerEpoch", "-n", nsAddr, "-b", "broker-a")
	require.Equal(t, 2, strings.Count(out, "#brokerName\tbroker-a"))
	x.mqadmin("success", "updateTopic", "-n", nsAddr, "-c", "DefaultCluster", "-t", "CtlTopic")
	x.mqadmin("SEND_OK", "sendMessage", "-n", nsAddr, "-t", "CtlTopic", "-p", "before")

	// kill -9 the Java master: ours elects the other broker.
	h0, _, _ := x.replicaInfo(addrs)
	kill9(brokers[master])
	var h header.GetReplicaInfoResponse
	require.Eventually(t, func() bool {
		var ok bool
		h, _, ok = x.replicaInfo(addrs)
		return ok && h.MasterBrokerID != 0 && h.MasterAddress != master
	}, time.Minute, 200*time.Millisecond, "a new master is elected")
	require.Equal(t, h0.MasterEpoch+1, h.MasterEpoch)
	out = x.mqadmin("#MasterAddr\t"+h.MasterAddress, "getSyncStateSet", "-a", addrs[1], "-b", "broker-a")
	require.Contains(t, out, "alive=false")
	x.mqadmin("SEND_OK", "sendMessage", "-n", nsAddr, "-t", "CtlTopic", "-p", "after")

	// kill -9 our Raft leader: the two others elect one and serve the state.
	lead := x.leader(addrs)
	var rest []string
	for i, a := range addrs {
		if a == lead {
			kill9(ctl[i])
		} else {
			rest = append(rest, a)
		}
	}
	require.Eventually(t, func() bool {
		l := x.leader(rest)
		return l != "" && l != lead
	}, 30*time.Second, 100*time.Millisecond)
	var h2 header.GetReplicaInfoResponse
	require.Eventually(t, func() bool {
		var ok bool
		h2, _, ok = x.replicaInfo(rest) // NOT_LEADER until its barrier passed
		return ok
	}, 30*time.Second, 100*time.Millisecond)
	require.Equal(t, h.MasterBrokerID, h2.MasterBrokerID)
	require.Equal(t, h.MasterEpoch, h2.MasterEpoch)
	out = x.mqadmin("#ControllerLeaderAddress", "getControllerMetaData", "-a", rest[0])
	require.NotContains(t, out, "#ControllerLeaderAddress\t"+lead)
	// Admin election of the current master: Java's answer, 2011.
	out = x.mqadmin("CODE: 2011", "electMaster", "-a", rest[0], "-c", "DefaultCluster", "-bn", "broker-a", "-b", strconv.FormatInt(h.MasterBrokerID, 10))
	require.Contains(t, out, "is still alive, not need to elect new master for broker broker-a")
}
