package conformance

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// TestProtoDrift checks proxy/apiv2's RocketMQ 5 gRPC descriptors against
// Apache's rocketmq-proto jar: java/.../ProtoDump.java (client-5 profile)
// prints the jar's file descriptors, and proxy/apiv2's TestDriftAgainstJar
// compares them element by element with ours. The comparison runs in the
// root module so this module does not take on protobuf and grpc. Skips
// without java/mvn.
func TestProtoDrift(t *testing.T) {
	if !javadriver.Available() {
		t.Skip("java/mvn not installed")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	drv := javadriver.New(filepath.Join(env.Root, "conformance", "java"))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	require.NoError(t, drv.Build(ctx, javadriver.Profiles[scenario.Java5]))

	var dump strings.Builder
	require.NoError(t, drv.RunClass(ctx, scenario.Java5, "io.rocketgo.conformance.ProtoDump", nil, nil, func(line string) {
		dump.WriteString(line)
		dump.WriteByte('\n')
	}))
	path := filepath.Join(t.TempDir(), "rocketmq-proto.dump")
	require.NoError(t, os.WriteFile(path, []byte(dump.String()), 0o644))

	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-run", "^TestDriftAgainstJar$", "-v", "./proxy/apiv2")
	cmd.Dir = env.Root
	cmd.Env = append(os.Environ(), "ROCKETGO_PROTO_DUMP="+path)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	t.Log(out.String())
	require.NoError(t, err, "proxy/apiv2 drifted from the rocketmq-proto jar (see the log above)")
	require.Contains(t, out.String(), "--- PASS: TestDriftAgainstJar", "the comparison did not run")
}
