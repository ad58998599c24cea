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
// Producer's sends and a SimpleConsumer's receive + ack, against rocketgo
// on loopback with no Java server anywhere.
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

	dir := t.TempDir()
	// bin/rocketgo (make build) when it has the endpoint, else a fresh build.
	bin := env.Bin("rocketgo")
	if help, _ := exec.CommandContext(ctx, bin, "-h").CombinedOutput(); !strings.Contains(string(help), "grpcListen") {
		bin = filepath.Join(dir, "rocketgo")
		gb := exec.CommandContext(ctx, "go", "build", "-o", bin, "./cmd/rocketgo")
		gb.Dir = env.Root
		out, err := gb.CombinedOutput()
		require.NoError(t, err, "%s", out)
	}

	nsPort, err := harness.FreePort()
	require.NoError(t, err)
	grpcPort, err := harness.FreePort()
	require.NoError(t, err)
	brPort, err := harness.FreeBrokerPort()
	require.NoError(t, err)
	ns, br := "127.0.0.1:"+strconv.Itoa(nsPort), "127.0.0.1:"+strconv.Itoa(brPort)
	grpcAddr := "127.0.0.1:" + strconv.Itoa(grpcPort)
	p, err := harness.StartProcess("rocketgo", dir, nil, bin, "-dataDir", filepath.Join(dir, "data"),
		"-namesrvListen", ns, "-brokerListen", br, "-grpcListen", grpcAddr)
	require.NoError(t, err)
	defer p.Stop(5 * time.Second)

	c := harness.Attach(harness.Ours, ns, br)
	require.NoError(t, c.WaitRoute(ctx, "TBW102", 30*time.Second), p.Tail(4096))
	require.NoError(t, c.CreateTopic(ctx, "GrpcSmokeT", 4, map[string]string{"attributes": "+message.type=NORMAL"}), p.Tail(4096))
	require.Eventually(t, func() bool {
		nc, err := net.DialTimeout("tcp", grpcAddr, time.Second)
		if err == nil {
			_ = nc.Close()
		}
		return err == nil
	}, 10*time.Second, 50*time.Millisecond, "gRPC port not listening\n%s", p.Tail(4096))

	const n = 20
	start := time.Now()
	run := exec.CommandContext(ctx, "java", "-cp", filepath.Join(mod, "target", "classes")+string(os.PathListSeparator)+filepath.Join(mod, "target", "lib", "*"),
		"-Drocketmq.log.level=warn", "io.rocketgo.grpcsmoke.Smoke", grpcAddr, "GrpcSmokeT", "GrpcSmokeG", strconv.Itoa(n), "60000")
	run.Dir = dir
	jout, jerr := run.CombinedOutput()
	t.Logf("Java SDK smoke took %v", time.Since(start).Round(time.Millisecond))
	lines := string(jout)
	require.NoError(t, jerr, "java smoke failed:\n%s\nrocketgo:\n%s", grpcSmokeTail(lines, 8000), p.Tail(4096))
	require.Contains(t, lines, "SMOKE sent=20 acked=20 OK", grpcSmokeTail(lines, 8000))
	require.Equal(t, n, strings.Count(lines, "SENT "))
	require.GreaterOrEqual(t, strings.Count(lines, "ACKED "), n)
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
