package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/rocketgo/rocketgo/conformance/harness"
	"github.com/rocketgo/rocketgo/conformance/javadriver"
	"github.com/rocketgo/rocketgo/conformance/scenario"
)

// TestPopJavaClient is issue #21's real-client proof: Java's mqadmin
// switches a group to POP (setConsumeMode -m POP -q 8, i.e.
// SET_MESSAGE_REQUEST_MODE), and the Java 5.3.3 DefaultMQPushConsumer with
// clientRebalance=false learns it through QUERY_ASSIGNMENT and consumes by
// POP_MESSAGE + ACK_MESSAGE: every sent message arrives exactly once, and
// none comes back after its invisible time (the acks held). Against our
// server, and with CONFORMANCE_POP_SERVERS=ours,java against the Java
// reference too.
func TestPopJavaClient(t *testing.T) {
	if os.Getenv("CONFORMANCE_MATRIX") == "1" || os.Getenv("CONFORMANCE_GOLDEN") == "1" {
		t.Skip("matrix/golden run selected")
	}
	env, err := harness.FindEnv()
	require.NoError(t, err)
	if !javadriver.Available() {
		t.Skip("java/mvn not installed")
	}
	kinds := []harness.Kind{harness.Ours}
	if s := os.Getenv("CONFORMANCE_POP_SERVERS"); s != "" {
		kinds = nil
		for _, k := range strings.Split(s, ",") {
			kinds = append(kinds, harness.Kind(k))
		}
	}
	drv := javadriver.New(filepath.Join(env.Root, "conformance", "java"))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	require.NoError(t, drv.Build(ctx, javadriver.Profiles[scenario.Java5]))
	for _, kind := range kinds {
		t.Run(string(kind), func(t *testing.T) {
			c, err := harness.Start(ctx, env, kind, harness.Options{Dir: t.TempDir()})
			if errors.Is(err, harness.ErrNoJava) || errors.Is(err, harness.ErrNotBuilt) {
				t.Skip(err.Error())
			}
			require.NoError(t, err)
			defer c.Close()
			runPopJava(ctx, t, drv, c)
		})
	}
}

func runPopJava(ctx context.Context, t *testing.T, drv *javadriver.Driver, c *harness.Cluster) {
	const topic, group, n = "PopJT", "PopJG", 40
	admin := func(args ...string) string {
		out := strings.Join(authJava(ctx, t, drv, append([]string{"admin", "--"}, args...)...), "\n")
		t.Logf("mqadmin %s\n%s", strings.Join(args, " "), out)
		return out
	}
	out := admin("updateTopic", "-b", c.BrokerAddr, "-t", topic, "-r", "8", "-w", "8")
	require.Contains(t, out, "success")
	out = admin("updateSubGroup", "-b", c.BrokerAddr, "-g", group)
	require.Contains(t, out, "success")
	out = admin("setConsumeMode", "-n", c.NamesrvAddr, "-c", "DefaultCluster", "-t", topic, "-g", group, "-m", "POP", "-q", "8")
	require.Contains(t, out, "success")
	require.NotContains(t, out, "Exception")

	sent := javaSend(ctx, t, drv, c.NamesrvAddr, topic, "", "", n)
	requireAllSent(t, sent, "Java producer")

	lines := authJava(ctx, t, drv, "popconsume", "--namesrv", c.NamesrvAddr, "--topic", topic, "--group", group,
		"--expect", fmt.Sprint(n), "--deadline-ms", "60000", "--invisible-ms", "5000", "--grace-ms", "9000")
	got := map[string]int{}
	popCK := 0
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) == 4 && f[0] == "GOT" {
			got[f[1]]++
			if f[3] != "null" {
				popCK++
			}
		}
	}
	t.Logf("%d distinct messages, %d deliveries with POP_CK", len(got), popCK)
	require.Len(t, got, n, "every sent message consumed: %v", lines)
	for body, times := range got {
		require.Equal(t, 1, times, "%s consumed once (acks held past the invisible time)", body)
	}
	require.Equal(t, n, popCK, "every delivery came by POP (carries POP_CK)")
}
