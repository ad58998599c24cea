package failover

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"
)

// The gRPC client load (issue #21): our proxy, cmd/mqproxy in cluster
// mode, runs in the root namespace on 127.0.0.1 for the whole set, in
// front of the set's name server and brokers; the official Java gRPC
// client 5.0.8 (conformance/javagrpc's FailoverLoad, one JVM) sends
// through it and a SimpleConsumer of its own group receives and acks,
// beside the remoting clients' loads. Its lines are FailoverTool's and
// become Acks and Deliveries with Client "grpc". A gRPC send receipt
// carries no store host or commit log offset (only the message id and
// queue offset), so Check places a gRPC ack by the final log's record of
// its key.

// ClientGRPC is the gRPC client (rocketmq-client-java 5.0.8 through mqproxy).
const ClientGRPC = "grpc"

// grpcLoadClass is the load's main class in conformance/javagrpc.
const grpcLoadClass = "io.rocketgo.conformance.grpc.FailoverLoad"

// Proxy is cmd/mqproxy running for a set.
type Proxy struct {
	Endpoint string // 127.0.0.1:port, the gRPC endpoint
	cmd      *exec.Cmd
	done     chan struct{}
}

// StartProxy runs bin (cmd/mqproxy) in the root namespace on loopback
// with the set's name server, logging to dir/mqproxy.log, and waits until
// its gRPC port accepts. The gRPC port is port and its remoting port
// port+1 (FAILOVER_PROXY_PORT: a test's own range); with port 0 both are
// free ports.
func StartProxy(bin, dir, namesrv string, port int) (*Proxy, error) {
	remotingPort := port + 1
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return nil, err
		}
		if remotingPort, err = freePort(); err != nil {
			return nil, err
		}
	}
	conf := filepath.Join(dir, "rmq-proxy.json")
	b, _ := json.Marshal(map[string]any{"grpcServerPort": port, "remotingListenPort": remotingPort,
		"namesrvAddr": namesrv, "rocketMQClusterName": Cluster, "proxyMode": "cluster"})
	if err := os.WriteFile(conf, b, 0o644); err != nil {
		return nil, fmt.Errorf("mqproxy: %w", err)
	}
	lf, err := os.OpenFile(filepath.Join(dir, "mqproxy.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("mqproxy: log: %w", err)
	}
	cmd := exec.Command(bin, "-pc", conf, "-bind", "127.0.0.1")
	cmd.Stdout, cmd.Stderr = lf, lf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		lf.Close()
		return nil, fmt.Errorf("mqproxy: start: %w", err)
	}
	p := &Proxy{Endpoint: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); lf.Close(); close(p.done) }()
	ok := poll(context.Background(), 20*time.Second, func() bool {
		c, err := net.DialTimeout("tcp", p.Endpoint, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
		}
		return err == nil
	})
	if !ok {
		p.Close()
		return nil, fmt.Errorf("mqproxy: %s did not accept within 20s (log %s)", p.Endpoint, filepath.Join(dir, "mqproxy.log"))
	}
	return p, nil
}

// Close kills the proxy and waits for it.
func (p *Proxy) Close() {
	if p == nil {
		return
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
	}
}

// grpcProjectDir is conformance/javagrpc.
func grpcProjectDir() string { return filepath.Join(javaProjectDir(), "..", "javagrpc") }

// grpcClassStale says whether FailoverLoad.class is missing or older than a
// source file of the project.
func grpcClassStale(project string) bool {
	cls, err := os.Stat(filepath.Join(project, "target", "classes", "io", "rocketgo", "conformance", "grpc", "FailoverLoad.class"))
	if err != nil {
		return true
	}
	src, _ := filepath.Glob(filepath.Join(project, "src", "main", "java", "io", "rocketgo", "conformance", "grpc", "*.java"))
	for _, f := range append(src, filepath.Join(project, "pom.xml")) {
		if st, err := os.Stat(f); err == nil && st.ModTime().After(cls.ModTime()) {
			return true
		}
	}
	return false
}

// PrepareGRPCLoad builds conformance/javagrpc when its classes are stale;
// "" when the load can run, else why not.
func PrepareGRPCLoad(ctx context.Context) (string, error) {
	if _, err := exec.LookPath("java"); err != nil {
		return "no java on PATH", nil
	}
	project := grpcProjectDir()
	if _, err := os.Stat(filepath.Join(project, "pom.xml")); err != nil {
		return "no conformance/javagrpc project", nil
	}
	if !grpcClassStale(project) {
		return "", nil
	}
	if _, err := exec.LookPath("mvn"); err != nil {
		return "FailoverLoad not built and no mvn", nil
	}
	var last error
	for _, offline := range []bool{true, false} {
		args := []string{"-q", "-B", "package"}
		if offline {
			args = append([]string{"-o"}, args...)
		}
		bctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		cmd := exec.CommandContext(bctx, "mvn", args...)
		cmd.Dir = project
		out, err := cmd.CombinedOutput()
		cancel()
		if err == nil {
			return "", nil
		}
		last = fmt.Errorf("mvn %v in %s: %w: %s", args, project, err, tail(out, 1500))
	}
	return "", last
}

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("mqproxy: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// startGRPCLoad starts the FailoverLoad JVM against endpoint and waits
// (bounded) for its READY; keys are prefix-<i>, the consumer group
// prefix_c.
func startGRPCLoad(endpoint, topic, prefix string, count, threads int, pace time.Duration, add func(Ack), got func(Delivery)) (*javaLoad, error) {
	target := filepath.Join(grpcProjectDir(), "target")
	home := filepath.Join(os.TempDir(), "rocketgo-failover-grpc")
	argv := []string{"java", "-Xms64m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Duser.home=" + home,
		"-cp", filepath.Join(target, "classes") + ":" + filepath.Join(target, "lib", "*"), grpcLoadClass,
		"--endpoint", endpoint, "--topic", topic, "--group", prefix + "_c", "--prefix", prefix,
		"--count", strconv.Itoa(count), "--threads", strconv.Itoa(threads),
		"--pace-ms", strconv.FormatInt(pace.Milliseconds(), 10),
		"--deadline-ms", strconv.FormatInt(javaDeadline.Milliseconds(), 10),
		"--request-timeout-ms", "3000", "--max-attempts", "3"}
	return superviseJVM("grpc load", ClientGRPC, func(ctx context.Context, stdin *os.File, onLine func(string)) error {
		return runLineChild(ctx, argv, stdin, home, onLine)
	}, add, got)
}

// runLineChild runs argv in its own process group (killed when ctx ends)
// with HOME=home (the SDK logs under it), feeding its stdout lines to onLine.
func runLineChild(ctx context.Context, argv []string, stdin *os.File, home string, onLine func(string)) error {
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Stdin = stdin
	cmd.Env = append(os.Environ(), "HOME="+home)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	_ = os.MkdirAll(home, 0o755)
	lf, err := os.Create(filepath.Join(home, "stderr.log"))
	if err == nil {
		defer lf.Close()
		cmd.Stderr = lf
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start %s: %w", argv[0], err)
	}
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		onLine(sc.Text())
	}
	if sc.Err() != nil {
		_, _ = io.Copy(io.Discard, stdout)
	}
	werr := cmd.Wait()
	if ctx.Err() != nil {
		return fmt.Errorf("%w (exit: %v)", ctx.Err(), werr)
	}
	return werr
}

// placeGRPCAcks gives each gRPC ack the store host and commit log offset
// of its key's first record in the final log (its receipt has neither).
func placeGRPCAcks(acks []Ack, stored []Stored) {
	first := map[string]Stored{}
	for _, s := range stored {
		if _, ok := first[s.Key]; !ok {
			first[s.Key] = s
		}
	}
	for i := range acks {
		if acks[i].Client != ClientGRPC || acks[i].Host != "" {
			continue
		}
		if s, ok := first[acks[i].Key]; ok {
			acks[i].Host, acks[i].PhyOffset = s.Host, s.PhyOffset
		}
	}
}
