package storecompat

import (
	"os"
	"testing"

	"github.com/apache/rocketmq-client-go/v2/rlog"
	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
)

// prepare skips without the Java reference server or our binaries, quiets
// the Go client's log (CONFORMANCE_GOLOG keeps it) and returns the scratch
// directory: the test's own, or STORECOMPAT_DIR to keep stores and logs.
func prepare(t *testing.T) (harness.Env, string) {
	t.Helper()
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !env.HaveJavaServer() {
		t.Skip("storecompat: Java reference server unavailable (needs java on PATH and conformance/.cache/java-server/lib: run conformance/scripts/javaserver.sh fetch, which needs mvn)")
	}
	if _, err := os.Stat(env.Bin("mqbroker")); err != nil {
		t.Skip("storecompat: bin/mqbroker not built (run make build)")
	}
	if os.Getenv("CONFORMANCE_GOLOG") == "" {
		rlog.SetLogLevel("fatal")
	}
	dir := t.TempDir()
	if d := os.Getenv("STORECOMPAT_DIR"); d != "" {
		dir = d
		require.NoError(t, os.MkdirAll(dir, 0o755))
	}
	return env, dir
}
