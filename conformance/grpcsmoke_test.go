package conformance

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// TestGRPCSmokeJavaSDK proves rocketgo's native gRPC endpoint with the
// official RocketMQ 5 Java SDK (rocketmq-client-java 5.0.8, module
// conformance/grpcsmoke): the SDK's startup (telemetry settings), a
// Producer's sends and a SimpleConsumer's receive + ack; FIFO order of one
// message group; a committed transaction and an open one checked back
// through the telemetry stream — against rocketgo on loopback with no Java
// server anywhere.
func TestGRPCSmokeJavaSDK(t *testing.T) {
	if os.Getenv("CONFORMANCE_MATRIX") == "1" || os.Getenv("CONFORMANCE_GOLDEN") == "1" {
		t.Skip("matrix/golden run selected")
	}
	_, e1 := exec.LookPath("java")
	_, e2 := exec.LookPath("mvn")
	if e1 != nil || e2 != nil {
		t.Skip("gRPC smoke: java and mvn are needed for rocketmq-client-java 5.0.8; not installed")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	mod := grpcSmokeModule(ctx, t, env)
	dir := t.TempDir()
	bin := grpcSmokeBin(ctx, t, env, "rocketgo", "grpcListen")

	nsPort, err := harness.FreePort()
	require.NoError(t, err)
	grpcPort, err := harness.FreePort()
	require.NoError(t, err)
	brPort, err := harness.FreeBrokerPort()
	require.NoError(t, err)
	ns, br := "127.0.0.1:"+strconv.Itoa(nsPort), "127.0.0.1:"+strconv.Itoa(brPort)
	grpcAddr := "127.0.0.1:" + strconv.Itoa(grpcPort)
	// Check-backs within a second (Java: 6 s timeout, 30 s interval).
	conf := filepath.Join(dir, "broker.conf")
	require.NoError(t, os.WriteFile(conf, []byte("transactionTimeOut=1000\ntransactionCheckInterval=1000\n"), 0o644))
	p, err := harness.StartProcess("rocketgo", dir, nil, bin, "-dataDir", filepath.Join(dir, "data"),
		"-namesrvListen", ns, "-brokerListen", br, "-grpcListen", grpcAddr, "-c", conf)
	require.NoError(t, err)
	defer p.Stop(5 * time.Second)

	c := harness.Attach(harness.Ours, ns, br)
	require.NoError(t, c.WaitRoute(ctx, "TBW102", 30*time.Second), p.Tail(4096))
	require.NoError(t, c.CreateTopic(ctx, "GrpcSmokeT", 4, map[string]string{"attributes": "+message.type=NORMAL"}), p.Tail(4096))
	require.NoError(t, c.CreateTopic(ctx, "GrpcSmokeFifoT", 4, map[string]string{"attributes": "+message.type=FIFO"}), p.Tail(4096))
	require.NoError(t, c.CreateTopic(ctx, "GrpcSmokeTxnT", 2, map[string]string{"attributes": "+message.type=TRANSACTION"}), p.Tail(4096))
	require.NoError(t, c.CreateTopic(ctx, "GrpcSmokePushT", 2, map[string]string{"attributes": "+message.type=NORMAL"}), p.Tail(4096))
	g, err := harness.Call(ctx, br, 200, nil, []byte(`{"groupName":"GrpcSmokeFifoG","consumeMessageOrderly":true}`)) // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
	require.NoError(t, err)
	require.Equal(t, int32(0), g.Code, g.Remark)
	require.Eventually(t, func() bool {
		nc, err := net.DialTimeout("tcp", grpcAddr, time.Second)
		if err == nil {
			_ = nc.Close()
		}
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "gRPC port not listening\n%s", p.Tail(4096))

	lines := grpcSmokeRun(ctx, t, mod, grpcAddr, "GrpcSmokeT", "GrpcSmokeG", p.Tail,
		"GrpcSmokeFifoT", "GrpcSmokeFifoG", "GrpcSmokeTxnT", "GrpcSmokeTxnG", "GrpcSmokePushT", "GrpcSmokePushG")
	require.Contains(t, lines, "FIFO order=[fifo-0, fifo-1, fifo-2, fifo-3, fifo-4, fifo-5, fifo-6, fifo-7, fifo-8, fifo-9] OK")
	require.Regexp(t, `TXN committed=2 checked=[1-9]\d* OK`, lines)
	require.Contains(t, lines, "PUSH consumed=5 of 5")
	require.Regexp(t, `PUSH consumed=5 of 5 attempts=\[[^\]]*\] OK`, lines)
}

// TestGRPCSmokeMQProxyJavaBroker is the mixed direction: our mqproxy in
// cluster mode in front of Java's name server and broker (5.3.3 from
// Maven), with the official Java SDK as the client: no Java proxy.
// Skipped without the Java reference server (make -C conformance
// java-server).
func TestGRPCSmokeMQProxyJavaBroker(t *testing.T) {
	if os.Getenv("CONFORMANCE_MATRIX") == "1" || os.Getenv("CONFORMANCE_GOLDEN") == "1" {
		t.Skip("matrix/golden run selected")
	}
	_, e1 := exec.LookPath("java")
	_, e2 := exec.LookPath("mvn")
	if e1 != nil || e2 != nil {
		t.Skip("gRPC smoke: java and mvn are needed for rocketmq-client-java 5.0.8; not installed")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !env.HaveJavaServer() {
		t.Skip("gRPC smoke: the Java reference server is not fetched (make -C conformance java-server)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	mod := grpcSmokeModule(ctx, t, env)
	bin := grpcSmokeBin(ctx, t, env, "mqproxy", "-pc")

	c, err := harness.Start(ctx, env, harness.Java, harness.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer c.Close()
	require.NoError(t, c.CreateTopic(ctx, "GrpcProxyT", 4, map[string]string{"attributes": "+message.type=NORMAL"}), c.Logs(4096))

	grpcPort, err := harness.FreePort()
	require.NoError(t, err)
	dir := t.TempDir()
	conf := filepath.Join(dir, "rmq-proxy.json")
	require.NoError(t, os.WriteFile(conf, []byte(`{"rocketMQClusterName":"DefaultCluster","grpcServerPort":`+strconv.Itoa(grpcPort)+
		`,"namesrvAddr":"`+c.NamesrvAddr+`"}`), 0o644))
	p, err := harness.StartProcess("mqproxy", dir, nil, bin, "-pc", conf, "-bind", "127.0.0.1")
	require.NoError(t, err)
	defer p.Stop(5 * time.Second)
	grpcAddr := "127.0.0.1:" + strconv.Itoa(grpcPort)
	require.Eventually(t, func() bool {
		nc, err := net.DialTimeout("tcp", grpcAddr, time.Second)
		if err == nil {
			_ = nc.Close()
		}
		return err == nil
	}, 20*time.Second, 50*time.Millisecond, "mqproxy not listening\n%s", p.Tail(4096))
	grpcSmokeRun(ctx, t, mod, grpcAddr, "GrpcProxyT", "GrpcProxyG", func(n int) string { return p.Tail(n) + "\n" + c.Logs(n) })
}

// grpcSmokeRun runs the Java SDK smoke against grpcAddr and checks that
// every sent message was received and acked.
func grpcSmokeRun(ctx context.Context, t *testing.T, mod, grpcAddr, topic, group string, logs func(int) string, more ...string) string {
	t.Helper()
	const n = 20
	start := time.Now()
	cp := filepath.Join(mod, "target", "classes") + string(os.PathListSeparator) + filepath.Join(mod, "target", "lib", "*")
	args := append([]string{"-cp", cp, "-Drocketmq.log.level=warn", "io.rocketgo.grpcsmoke.Smoke", grpcAddr, topic, group, strconv.Itoa(n), "60000"}, more...)
	run := exec.CommandContext(ctx, "java", args...)
	run.Dir = t.TempDir()
	jout, jerr := run.CombinedOutput()
	t.Logf("Java SDK smoke took %v", time.Since(start).Round(time.Millisecond))
	lines := string(jout)
	require.NoError(t, jerr, "java smoke failed:\n%s\nserver:\n%s", grpcSmokeTail(lines, 8000), logs(4096))
	require.Contains(t, lines, "SMOKE sent=20 acked=20 OK", grpcSmokeTail(lines, 8000))
	require.Equal(t, n, strings.Count(lines, "SENT "))
	require.GreaterOrEqual(t, strings.Count(lines, "ACKED "), n)
	return lines
}

// grpcSmokeBin is bin/NAME (make build) when its -h mentions flag (it is
// recent enough), else a fresh build of ./cmd/NAME.
func grpcSmokeBin(ctx context.Context, t *testing.T, env harness.Env, name, flag string) string {
	t.Helper()
	bin := env.Bin(name)
	if help, _ := exec.CommandContext(ctx, bin, "-h").CombinedOutput(); strings.Contains(string(help), flag) {
		return bin
	}
	bin = filepath.Join(t.TempDir(), name)
	gb := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/"+name)
	gb.Dir = env.Root
	out, err := gb.CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

// grpcSmokeModule builds conformance/grpcsmoke (offline first) unless it
// is up to date; it skips the test when Maven cannot build it.
func grpcSmokeModule(ctx context.Context, t *testing.T, env harness.Env) string {
	t.Helper()
	mod := filepath.Join(env.Root, "conformance", "grpcsmoke")
	build := func(offline bool) ([]byte, error) {
		args := []string{"-q", "-B", "package"}
		if offline {
			args = append([]string{"-o"}, args...)
		}
		cmd := exec.CommandContext(ctx, "mvn", args...)
		cmd.Dir = mod
		return cmd.CombinedOutput()
	}
	if !grpcSmokeBuilt(mod) {
		if out, err := build(true); err != nil {
			if out, err = build(false); err != nil {
				t.Skipf("gRPC smoke: cannot build %s (no Maven access?): %v\n%s", mod, err, out)
			}
		}
	}

	return mod
}

// grpcSmokeBuilt reports classes newer than the source and pom, and the
// SDK jar in target/lib: Maven is slow on a loaded box, skip it then.
func grpcSmokeBuilt(mod string) bool {
	class, err := os.Stat(filepath.Join(mod, "target", "classes", "io", "rocketgo", "grpcsmoke", "Smoke.class"))
	if err != nil {
		return false
	}
	for _, src := range []string{filepath.Join(mod, "pom.xml"), filepath.Join(mod, "src", "main", "java", "io", "rocketgo", "grpcsmoke", "Smoke.java")} {
		if st, err := os.Stat(src); err != nil || st.ModTime().After(class.ModTime()) {
			return false
		}
	}
	jars, _ := filepath.Glob(filepath.Join(mod, "target", "lib", "rocketmq-client-java-*.jar"))
	return len(jars) > 0
}

func grpcSmokeTail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
